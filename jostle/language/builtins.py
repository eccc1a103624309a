"""The language's built-in functions: the registry a session starts with, and the general
built-ins (output, numbers, lists and records).

The registry (`REGISTRY`, started by `start_registry`) holds one entry per name, with arity and
privacy behaviour; a second built-in under a taken name fails at start-up
(jostle.language.builtin_registry). Besides the built-ins here it holds those of
`builtins_tables` (schemas, data, table operations, aggregates), `builtins_releases` (releases
and the budget), and `builtins_choice` (the ChoiceMaker's and every learner family's).

Privacy behaviours (the `privacy` field of each entry):
  * "public"   only public arguments; any private argument is refused (print, sqrt, range...).
  * "aware"    accepts private values and propagates sensitivity (abs, sum, len of a vector).
  * "table"    a table operation: private tables in, private tables out (where, partition...).
  * "aggregate" a private table in, a private value out (count, sum, mean, histogram).
  * "release"  a private value in, a public value out, charging the budget (laplace...).
  * "row"      elementwise on private columns inside row functions too (sqrt, log, exp...).
  * "data"     makes tables or schemas from public inputs (load, numeric, categorical).
  * "budget"   reads the accountant (ledger, spent, remaining); public by construction.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from jostle.language import tables
from jostle.privacy.budget import fmt  # noqa: F401 (re-exported)
from jostle.diagnostics.errors import JostleRuntimeError, PrivacyError
from jostle.language.builtin_registry import CORE, VARIADIC, BuiltinRegistry, builtin  # noqa: F401 (re-exported)
from jostle.language.builtin_registry import list_argument as _sequence, number_argument as _number
from jostle.language.builtin_registry import refuse_private_arguments as _refuse_private
from jostle.language.sensitivity import private_abs, private_sum, private_vector, refuse
from jostle.language.loading import (  # noqa: F401 (re-exported: they lived here)
    _curator_source, _refuse_curator_file_under_another_unit, _resolve_path, bind_declared_table,
    infer_public_schema, make_private_table, refuse_dropping_public_rows, refuse_registered_private_file,
    register_loaded_file, schema_from_value,
)
from jostle.language.values import (
    Private,
    PrivateMean,
    Record,
    RowValues,
    Table,
    MAX_WHOLE,
    MAX_WHOLE_DIGITS,
    format_value,
    is_private,
    type_name,
)
from jostle.language.row_apply import row_apply

# Method names on tables -> the built-in they call with the table as first argument.
TABLE_METHODS = {
    "where": "where", "select": "select", "derive": "derive", "bin": "bin",
    "partition": "partition", "groupby": "groupby", "count": "count", "sum": "sum",
    "mean": "mean", "histogram": "histogram", "randomized_response": "randomized_response",
    "join": "join",
    "bound_per_key": "bound_per_key", "count_keys": "count_keys", "split": "split",
}


# ---------------------------------------------------------------- output
@builtin("print", 0, VARIADIC, doc="print(values...) writes public values on one line")
def _print(interp, span, *args):
    _refuse_private("print", args, span, "a private value cannot be printed")
    interp.write(" ".join(interp.vector_labels.text(a) or format_value(a) for a in args) + "\n")


@builtin("str", 1, doc="str(x) is the text of a public value")
def _str(interp, span, value):
    _refuse_private("str", (value,), span, "a private value cannot be turned into text")
    return interp.vector_labels.text(value) or format_value(value)


# ---------------------------------------------------------------- numbers
def _math(name: str, function: Callable[[float], float], domain: Callable[[float], bool], hint: str) -> None:
    @builtin(name, 1, privacy="row", doc=f"{name}(x) for a public number x")
    def apply(interp, span, value):
        if isinstance(value, RowValues):
            return row_apply(lambda a: getattr(np, name)(a.astype(float)), [value], span, f"{name}()", op=(name,))
        if isinstance(value, (Private, PrivateMean)):
            raise refuse(f"{name}() of a private value has no known sensitivity", value, span)
        if isinstance(value, np.ndarray):
            with np.errstate(all="ignore"):
                return getattr(np, name)(value.astype(float))
        number = _number(value, name, span)
        if not domain(number):
            raise JostleRuntimeError(f"{name}() is undefined at {format_value(number)}", span, hint)
        try:
            return function(number)
        except OverflowError:
            raise JostleRuntimeError(f"{name}({format_value(number)}) overflows", span) from None


_math("sqrt", math.sqrt, lambda x: x >= 0, "sqrt needs a number >= 0")
_math("log", math.log, lambda x: x > 0, "log needs a number > 0")
_math("exp", math.exp, lambda x: True, "")


@builtin("abs", 1, privacy="row", doc="abs(x); on a private value keeps its sensitivity")
def _abs(interp, span, value):
    if isinstance(value, Private):
        return private_abs(value, span)
    if isinstance(value, RowValues):
        return row_apply(np.abs, [value], span, "abs()", op=("abs",))
    _refuse_private("abs", (value,), span)
    if isinstance(value, np.ndarray):
        return np.abs(value)
    return abs(_number(value, "abs", span))


@builtin("round", 1, 2, privacy="row", doc="round(x[, digits])")
def _round(interp, span, value, digits=0):
    if isinstance(digits, RowValues):
        # The digits are one number for every row (numpy's round and the engines' SQL take one
        # scale), so a column there is refused, on its type alone, whatever the rows hold.
        raise refuse("the number of digits of round() cannot be a column", digits, span,
                     "round every row to the same public number of digits, e.g. round(r.score, 2); to "
                     "vary it by row, choose among public ones: round(r.score, 0) if r.code == 0 else "
                     "round(r.score, 2)")
    if isinstance(value, RowValues):
        _refuse_private("round", (digits,), span)
        places = int(_number(digits, "round", span))
        return row_apply(lambda a: np.round(a.astype(float), places), [value], span, "round()",
                         op=("round", places))
    _refuse_private("round", (value, digits), span)
    if isinstance(value, np.ndarray):
        return np.round(value, int(digits))
    number = _number(value, "round", span)
    if not math.isfinite(number):
        return number
    return round(number) if digits == 0 else round(number, int(_number(digits, "round", span)))


@builtin("float", 1, doc="float(x) converts a public number or numeric text")
def _float(interp, span, value):
    _refuse_private("float", (value,), span)
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        raise JostleRuntimeError(f"cannot turn {_shorten(format_value(value))!r} into a number", span) from None


@builtin("int", 1, doc="int(x) truncates a public number towards zero")
def _int(interp, span, value):
    _refuse_private("int", (value,), span)
    try:
        return int(float(value)) if isinstance(value, str) else int(value)
    except (TypeError, ValueError, OverflowError):
        raise JostleRuntimeError(f"cannot turn {_shorten(format_value(value))!r} into a whole number", span) from None


def _shorten(text: str, limit: int = 60) -> str:
    """A value's text cut short for an error message."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _extreme(name: str, pick: Callable) -> None:
    @builtin(name, 1, VARIADIC, doc=f"{name}(list) or {name}(a, b, ...) of public numbers")
    def apply(interp, span, *args):
        items = _sequence(args[0], name, span) if len(args) == 1 else list(args)
        for item in items:
            if is_private(item):
                raise refuse(f"{name}() of private values has no sensitivity Jostle tracks", item, span,
                             "release the values first")
        if not items:
            raise JostleRuntimeError(f"{name}() of an empty list", span)
        try:
            return pick(items)
        except TypeError:
            raise JostleRuntimeError(f"{name}() needs values that can be compared", span) from None


_extreme("min", min)
_extreme("max", max)


# ---------------------------------------------------------------- lists and records
@builtin("len", 1, privacy="aware", doc="len(x): length of a list, string, record or public table")
def _len(interp, span, value):
    if isinstance(value, Private):
        return value.length  # the length of a private vector comes from its public domain
    if isinstance(value, Table):
        if value.private:
            raise PrivacyError(
                "the number of rows of a private table is private", span,
                "use count(t), which is private, and release it: {{ count(t) }}",
            )
        return len(value.frame)
    if isinstance(value, (RowValues, PrivateMean)):
        raise refuse("len() of private data would reveal it", value, span)
    if isinstance(value, Record):
        return len(value.fields)
    if isinstance(value, (tuple, str, np.ndarray)):
        return len(value)
    raise JostleRuntimeError(f"len() needs a list, string or record, got a {type_name(value)}", span)


@builtin("range", 1, 3, doc="range(stop) or range(start, stop[, step]) over public whole numbers")
def _range(interp, span, *args):
    _refuse_private("range", args, span, "a private value cannot be a loop bound")
    for arg in args:
        if isinstance(arg, bool) or not isinstance(arg, (int, np.integer)) and not (
                isinstance(arg, float) and arg.is_integer()):
            raise JostleRuntimeError(f"range() needs whole numbers, got {format_value(arg)}", span)
    ints = [int(a) for a in args]
    if len(ints) == 3 and ints[2] == 0:
        raise JostleRuntimeError("range() step must not be zero", span)
    result = range(*ints)
    try:
        too_long = len(result) > 10_000_000
    except OverflowError:  # len() of a range longer than sys.maxsize
        too_long = True
    if too_long:
        raise JostleRuntimeError("range() is longer than 10 million", span)
    return tuple(result)


@builtin("sum", 1, 2, privacy="aware",
         doc="sum(list), sum(private vector), or sum(table, column) (sensitivity max(|lo|, |hi|))")
def _sum(interp, span, value, column=None):
    if column is not None or isinstance(value, Table):
        if column is None:
            raise JostleRuntimeError("sum(table, column) needs the column to sum", span)
        return tables.total(value, column, span)
    if isinstance(value, Private):
        return private_sum(value, span)
    if isinstance(value, tuple) and any(isinstance(v, Private) for v in value):
        return private_sum(private_vector(list(value), span), span)
    _refuse_private("sum", (value,), span)
    items = _sequence(value, "sum", span)
    if not all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in items):
        raise JostleRuntimeError("sum() needs numbers", span)
    try:
        result = sum(items) if items else 0
    except OverflowError:  # a huge whole number meeting a float
        raise JostleRuntimeError("sum() overflowed", span) from None
    if isinstance(result, int) and abs(result) >= MAX_WHOLE:
        raise JostleRuntimeError(f"sum() gives a whole number of more than {MAX_WHOLE_DIGITS} digits", span)
    return result


@builtin("mean", 1, 2, privacy="aggregate",
         doc="mean(list) of public numbers, or mean(table, column): a private mean to release")
def _mean(interp, span, value, column=None):
    if column is not None or isinstance(value, Table):
        if column is None:
            raise JostleRuntimeError("mean(table, column) needs the column", span)
        return tables.mean(value, column, span)
    _refuse_private("mean", (value,), span)
    items = _sequence(value, "mean", span)
    if not items:
        raise JostleRuntimeError("mean() of an empty list", span)
    if not all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in items):
        raise JostleRuntimeError("mean() needs numbers", span)
    return float(np.mean(np.asarray(items, dtype=float)))


@builtin("append", 2, doc="append(list, x) returns a new list with x at the end")
def _append(interp, span, items, value):
    return tuple(_sequence(items, "append", span)) + (value,)


@builtin("concat", 2, doc="concat(a, b) joins two lists")
def _concat(interp, span, first, second):
    return tuple(_sequence(first, "concat", span)) + tuple(_sequence(second, "concat", span))


@builtin("sorted", 1, doc="sorted(list) of public values")
def _sorted(interp, span, items):
    _refuse_private("sorted", (items,), span)
    try:
        return tuple(sorted(_sequence(items, "sorted", span)))
    except TypeError:
        raise JostleRuntimeError("sorted() needs values that can be compared", span) from None


@builtin("reversed", 1, doc="reversed(list)")
def _reversed(interp, span, items):
    return tuple(reversed(_sequence(items, "reversed", span)))


@builtin("zip", 2, doc="zip(a, b): list of [a_i, b_i] pairs")
def _zip(interp, span, first, second):
    return tuple((a, b) for a, b in zip(_sequence(first, "zip", span), _sequence(second, "zip", span)))


@builtin("enumerate", 1, doc="enumerate(list): list of [index, item] pairs")
def _enumerate(interp, span, items):
    return tuple((i, v) for i, v in enumerate(_sequence(items, "enumerate", span)))


@builtin("map", 2, privacy="aware", doc="map(function, list)")
def _map(interp, span, function, items):
    return tuple(interp.call(function, [item], span) for item in _sequence(items, "map", span))


@builtin("filter", 2, doc="filter(function, list) keeps items where function(item) is true")
def _filter(interp, span, function, items):
    from jostle.language.operators import truth

    return tuple(item for item in _sequence(items, "filter", span)
                 if truth(interp.call(function, [item], span), span, "a filter condition"))


@builtin("keys", 1, doc="keys(record): its field names")
def _keys(interp, span, record):
    if not isinstance(record, Record):
        raise JostleRuntimeError(f"keys() needs a record, got a {type_name(record)}", span)
    return tuple(record.keys())


# The core built-ins of the other modules (registered in CORE as they are imported), and the
# ChoiceMaker's and every learner family's (discovered, not listed here).
from jostle.language import builtins_tables  # noqa: E402,F401 (in this order: the registry's order)
from jostle.language import builtins_releases  # noqa: E402,F401
from jostle.language import accuracy_first  # noqa: E402,F401 (release(x, error=E, confidence=C))
from jostle.language import sulq_builtins  # noqa: E402,F401
from jostle.language import builtins_accuracy  # noqa: E402,F401 (interval; accuracy(x, c) is the kit's)
from jostle.language import perturbation  # noqa: E402,F401 (operators, randomise, reconstruct)
from jostle.language import builtin_help  # noqa: E402,F401 (help() and help(name))
from jostle.language.builtins_choice import register as _register_choicemaker  # noqa: E402
from jostle.language.builtins_releases import describe_budget  # noqa: E402,F401 (re-exported)


def start_registry() -> BuiltinRegistry:
    """The registry a session starts with: the core built-ins, then the ChoiceMaker's and every
    discovered learner family's, each name given once.

    Raises:
        BuiltinClash: Two built-ins (of the core, the ChoiceMaker or any two families) share a name.
    """
    registry = BuiltinRegistry()
    for name, value in CORE.items():
        registry[name] = value
    _register_choicemaker(registry.builtin, registry)
    return registry


REGISTRY: BuiltinRegistry = start_registry()

__all__ = ["REGISTRY", "TABLE_METHODS", "fmt", "describe_budget", "start_registry"]
