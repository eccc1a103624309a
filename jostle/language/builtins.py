"""The registry of built-in functions: one entry per name, with arity and privacy behaviour.

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
from pathlib import Path
from typing import Any, Callable

import numpy as np

from jostle.language import mechanisms, tables
from jostle.privacy.budget import RhoZCDPBudget, fmt
from jostle.diagnostics.errors import DataError, JostleRuntimeError, PrivacyError
from jostle.data.schema import Categorical, Numeric, conform, numbers_where_possible, read_csv_file
from jostle.language.sensitivity import private_abs, private_sum, private_vector, refuse
from jostle.diagnostics.source import Span
from jostle.language.loading import (  # noqa: F401 (re-exported: they lived here)
    _curator_source, _refuse_curator_file_under_another_unit, _resolve_path, bind_declared_table,
    infer_public_schema, make_private_table, refuse_dropping_public_rows, refuse_registered_private_file,
    register_loaded_file, schema_from_value,
)
from jostle.language.values import (
    BoundMethod,
    Builtin,
    Closure,
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

REGISTRY: dict[str, Builtin] = {}
VARIADIC = -1

# Method names on tables -> the built-in they call with the table as first argument.
TABLE_METHODS = {
    "where": "where", "select": "select", "derive": "derive", "bin": "bin",
    "partition": "partition", "groupby": "groupby", "count": "count", "sum": "sum",
    "mean": "mean", "histogram": "histogram", "randomized_response": "randomized_response",
    "join": "join",
    "bound_per_key": "bound_per_key", "count_keys": "count_keys",
}


def builtin(name: str, min_args: int, max_args: int | None = None, privacy: str = "public",
            keywords: tuple[str, ...] = (), doc: str = "") -> Callable:
    """Register `function(interp, span, *args, **kwargs)` as the built-in `name`."""
    if max_args is None:
        most: int | None = min_args
    elif max_args == VARIADIC:
        most = None
    else:
        most = max_args

    def register(function: Callable) -> Callable:
        REGISTRY[name] = Builtin(name, function, min_args, most, keywords, privacy, doc)
        return function
    return register


def _refuse_private(name: str, args: tuple, span: Span, where: str | None = None) -> None:
    for arg in args:
        if is_private(arg):
            message = where or f"{name}() cannot take a private value"
            raise refuse(message, arg, span)


def _number(value: Any, name: str, span: Span) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise JostleRuntimeError(f"{name}() needs a number, got a {type_name(value)}", span)
    return value


def _sequence(value: Any, name: str, span: Span) -> list:
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, np.ndarray):
        return [v.item() if isinstance(v, np.generic) else v for v in value]
    if isinstance(value, str):
        return list(value)
    raise JostleRuntimeError(f"{name}() needs a list, got a {type_name(value)}", span)


# ---------------------------------------------------------------- output
@builtin("print", 0, VARIADIC, doc="print(values...) writes public values on one line")
def _print(interp, span, *args):
    _refuse_private("print", args, span, "a private value cannot be printed")
    interp.write(" ".join(format_value(a) for a in args) + "\n")


@builtin("str", 1, doc="str(x) is the text of a public value")
def _str(interp, span, value):
    _refuse_private("str", (value,), span, "a private value cannot be turned into text")
    return format_value(value)


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


# ---------------------------------------------------------------- schemas and data
@builtin("numeric", 2, keywords=("default", "integer"), privacy="data",
         doc="numeric(lo, hi, default=none, integer=false): a numeric column's public bounds")
def _numeric(interp, span, lo, hi, default=None, integer=False):
    _refuse_private("numeric", (lo, hi, default), span, "a column's bounds must be public")
    if default is not None:
        _number(default, "numeric", span)
    try:
        return Numeric(_number(lo, "numeric", span), _number(hi, "numeric", span), default, bool(integer))
    except DataError as error:
        error.span = span
        raise


@builtin("categorical", 1, keywords=("default",), privacy="data",
         doc="categorical([values...], default=none): a categorical column's public values")
def _categorical(interp, span, values, default=None):
    _refuse_private("categorical", (values, default), span, "a column's categories must be public")
    if isinstance(values, str):  # not the list of its characters
        raise JostleRuntimeError("categorical() needs a list of values, got a string", span,
                                 f'write categorical([{values!r}]) for a single category')
    try:
        return Categorical(tuple(_sequence(values, "categorical", span)), default)
    except DataError as error:
        error.span = span
        raise


@builtin("load", 2, keywords=("public_rows",), privacy="data",
         doc='load("file.csv" or "file.parquet", {col: numeric(lo, hi), ...}) reads a private table under a public schema')
def _load(interp, span, path, schema, public_rows=False):
    """A private table read by the program, under the program's schema.

    The program's author chose the file and the schema, so the table is read totally: records
    the CSV reader cannot use and rows that break the schema are dropped, and no error depends
    on the rows (jostle.data.schema). The exception is public_rows=true, the program's claim that
    the row count is public: it is refused for data registered as private in the session
    (`refuse_registered_private_file`), so the file is one the program could read with
    load_public, and it is read strictly, like a public file (dropping rows would make the
    count private). Where the rows go (memory or an engine) is decided by the session's
    setting and the file's kind, never its size (jostle.language.binding).
    """
    from jostle.language import binding

    _refuse_private("load", (path, schema, public_rows), span)
    schema = schema_from_value(schema, span)
    file = _resolve_path(interp, span, path)
    if not isinstance(public_rows, bool):
        raise JostleRuntimeError(f"public_rows must be true or false, got {format_value(public_rows)}", span)
    declared_public = public_rows
    if declared_public:
        refuse_registered_private_file(interp, span, file, None, "load(..., public_rows=true)")
    _refuse_curator_file_under_another_unit(interp, span, file)
    name = Path(path).stem
    route = binding.route_for_file(interp, file, by_curator=False)
    try:
        if route != "pandas":
            raw: Any = binding.file_source(interp, file, route, strict=declared_public)
            columns = raw.columns
        elif binding.is_parquet(file):
            raw = binding.read_parquet_frame(file)
            columns = [str(c) for c in raw.columns]
        else:
            read = read_csv_file(file)
            raw = read.checked() if declared_public else read.rows_for_program(name)
            columns = [str(c) for c in read.frame.columns]
    except DataError as error:
        error.span = span
        raise
    table = make_private_table(interp, name, raw, schema, span, declared_public, strict=declared_public)
    register_loaded_file(interp, name, columns, file, table.unit)
    return table


@builtin("load_public", 1, 2, privacy="data",
         doc='load_public("file.csv" or "file.parquet"[, schema]) reads a public table (its values are not protected)')
def _load_public(interp, span, path, schema=None):
    file = _resolve_path(interp, span, path)
    from jostle.language.binding import is_parquet, read_parquet_frame

    refuse_registered_private_file(interp, span, file, None, "load_public()")
    try:
        if is_parquet(file):
            frame = read_parquet_frame(file)
            frame = frame.astype(object).where(frame.notna(), None) if schema is not None else frame
        else:
            frame = read_csv_file(file).checked()  # a public file: its problems may be named
    except DataError as error:
        error.span = span
        raise
    try:
        if schema is not None:
            schema = schema_from_value(schema, span)
            frame = conform(frame, schema, Path(path).stem)
        else:
            frame = numbers_where_possible(frame) if len(frame) else frame
            schema = infer_public_schema(frame)
    except DataError as error:
        error.span = error.span or span
        raise
    return Table(frame, schema, False, Path(path).stem, interp.accountant.root, span)


# ---------------------------------------------------------------- table operations
@builtin("where", 2, privacy="table", doc="where(t, lambda r: condition) keeps matching rows")
def _where(interp, span, table, predicate):
    return tables.where(table, predicate, span, interp.call)


@builtin("select", 2, VARIADIC, privacy="table", doc='select(t, "col", ...) or select(t, ["a", "b"])')
def _select(interp, span, table, *columns):
    names = columns[0] if len(columns) == 1 else tuple(columns)
    return tables.select(table, names, span)


@builtin("derive", 4, privacy="table",
         doc='derive(t, "name", lambda r: ..., numeric(lo, hi)) adds a column with a public domain')
def _derive(interp, span, table, name, function, domain):
    return tables.derive(table, name, function, domain, span, interp.call)


@builtin("bin", 3, keywords=("name",), privacy="table",
         doc='bin(t, "col", [edges...], name=none) turns a numeric column into public bins')
def _bin(interp, span, table, column, edges, name=None):
    _refuse_private("bin", (edges,), span, "bin edges must be public")
    return tables.bin_column(table, column, edges, span, name)


@builtin("partition", 2, privacy="table",
         doc='partition(t, "col"): one part per public value; parts compose in parallel')
def _partition(interp, span, table, columns):
    return tables.partition(table, columns, span)


@builtin("groupby", 2, VARIADIC, privacy="table", doc='groupby(t, "a", "b", ...) like partition over several columns')
def _groupby(interp, span, table, *columns):
    names = columns[0] if len(columns) == 1 else tuple(columns)
    return tables.partition(table, names, span)


@builtin("join", 2, 3, keywords=("on",), privacy="table",
         doc='join(a, b, on="key") or a.join(b, on="key"): the inner join on one column (jostle.language.joins)')
def _join(interp, span, left, right, on=None):
    from jostle.language.joins import join

    _refuse_private("join", (on,), span, "the join column must be public")
    return join(left, right, on, span)


@builtin("count", 1, privacy="aggregate", doc="count(t): rows of t (private: sensitivity 1)")
def _count(interp, span, table):
    return tables.count(table, span)


@builtin("bound_per_key", 2, privacy="table",
         doc="bound_per_key(t, k): at most k rows of each entity of an entity table (its stability becomes k)")
def _bound_per_key(interp, span, table, k):
    from jostle.language import entities

    return entities.bound_per_key(table, k, span)


@builtin("count_keys", 1, privacy="aggregate",
         doc="count_keys(t): the number of entities of an entity table (private: sensitivity 1)")
def _count_keys(interp, span, table):
    from jostle.language import entities

    return entities.count_keys(table, span)


@builtin("histogram", 2, VARIADIC, privacy="aggregate",
         doc='histogram(t, "col", ...): counts over the public domain (sensitivity 1)')
def _histogram(interp, span, table, *columns):
    names = columns[0] if len(columns) == 1 else tuple(columns)
    counts = tables.histogram(table, names, span)
    if isinstance(counts, np.ndarray):  # a public table's exact counts: label them as a release is
        interp.vector_labels.remember(counts, tables.histogram_cells(table, names, span))
    return counts


@builtin("stability", 1, privacy="data",
         doc="stability(t): how many rows of t one individual can add or remove (public; none before bound_per_key)")
def _stability(interp, span, table):
    """A table's stability is public: it follows from the unit and the operations alone
    (jostle.language.entities), never from the rows."""
    if not isinstance(table, Table):
        raise JostleRuntimeError(f"stability() needs a table, got a {type_name(table)}", span)
    return table.stability if table.private else 1


@builtin("bounds", 2, privacy="data", doc='bounds(t, "col"): the public [lo, hi] a numeric column was declared with')
def _bounds(interp, span, table, column):
    if not isinstance(table, Table):
        raise JostleRuntimeError(f"bounds() needs a table, got a {type_name(table)}", span)
    spec = tables._need_column(table, column, span, numeric=True)
    return (spec.lo, spec.hi)


@builtin("domain", 2, privacy="data", doc='domain(t, "col"): the public values a categorical column was declared with')
def _domain(interp, span, table, column):
    if not isinstance(table, Table):
        raise JostleRuntimeError(f"domain() needs a table, got a {type_name(table)}", span)
    spec = tables._need_column(table, column, span, numeric=False)
    return tuple(spec.values)


@builtin("rows", 1, doc="rows(t): the rows of a public table as records")
def _rows(interp, span, table):
    if not isinstance(table, Table):
        raise JostleRuntimeError(f"rows() needs a table, got a {type_name(table)}", span)
    return tuple(interp._iterate(table, span))


# ---------------------------------------------------------------- releases
@builtin("laplace", 2, privacy="release", doc="laplace(x, eps): x + Laplace(sensitivity / eps)")
def _laplace(interp, span, value, epsilon):
    return mechanisms.laplace(interp, value, epsilon, span)


@builtin("geometric", 2, privacy="release", doc="geometric(x, eps): integer x + two-sided geometric noise")
def _geometric(interp, span, value, epsilon):
    return mechanisms.geometric(interp, value, epsilon, span)


@builtin("gaussian", 2, 3, privacy="release",
         doc="gaussian(x, eps, delta) or gaussian(x, rho(R)): x + discrete Gaussian noise")
def _gaussian(interp, span, value, epsilon, delta=None):
    return mechanisms.gaussian(interp, value, epsilon, delta, span)


@builtin("rho", 1, doc="rho(R): a zCDP budget of rho R, for `budget rho(R)`, `with budget rho(R):` and gaussian(x, rho(R))")
def _rho(interp, span, amount):
    _refuse_private("rho", (amount,), span, "a budget must be public")
    number = _number(amount, "rho", span)
    hint = "a zCDP budget is a positive rho, e.g. rho(0.05)"
    try:
        value = RhoZCDPBudget.of(number)
    except JostleRuntimeError as error:
        error.span, error.hint = span, error.hint or hint
        raise
    if value.rho <= 0:
        raise JostleRuntimeError(f"rho must be greater than 0, got {format_value(amount)}", span, hint)
    return value


@builtin("exponential", 4, privacy="release",
         doc="exponential(candidates, utility, eps, sensitivity): a candidate chosen privately")
def _exponential(interp, span, candidates, utility, epsilon, sensitivity):
    if is_private(candidates):
        raise refuse("the candidates of exponential must be public", candidates, span)
    items = _sequence(candidates, "exponential", span)
    if not items:
        raise JostleRuntimeError("exponential needs at least one candidate", span)
    if not isinstance(utility, (Closure, Builtin, BoundMethod)):
        raise JostleRuntimeError("exponential's utility must be a function of a candidate", span)
    scores = [interp.call(utility, [item], span) for item in items]
    return mechanisms.exponential(interp, tuple(items), scores, epsilon, sensitivity, span)


@builtin("report_noisy_max", 2, privacy="release", doc="report_noisy_max(scores, eps): index of the noisy maximum")
def _report_noisy_max(interp, span, scores, epsilon):
    return mechanisms.report_noisy_max(interp, scores, epsilon, span)


@builtin("above_threshold", 3, privacy="release",
         doc="above_threshold(queries, threshold, eps): index of the first query above, or none")
def _above_threshold(interp, span, queries, threshold, epsilon):
    return mechanisms.above_threshold(interp, queries, threshold, epsilon, span)


@builtin("randomized_response", 3, privacy="release",
         doc='randomized_response(t, "col", eps): one noisy response per row (a whole replace_one table: public_rows)')
def _randomized_response(interp, span, table, column, epsilon):
    return mechanisms.randomized_response(interp, table, column, epsilon, span)


# ---------------------------------------------------------------- the budget
@builtin("ledger", 0, privacy="budget", doc="ledger(): every charge so far, as records")
def _ledger(interp, span):
    return tuple(Record.of(entry.as_dict()) for entry in interp.accountant.ledger)


def _leading_quantity(amount: Any) -> float:
    """The quantity a program reads of a budget: its epsilon under DP, its rho under zCDP."""
    return float(amount.quantities()[0][1])


@builtin("spent", 0, privacy="budget",
         doc="spent(): what this run has spent so far: epsilon, or rho in a zCDP program")
def _spent(interp, span):
    return _leading_quantity(interp.accountant.spent)


@builtin("remaining", 0, privacy="budget",
         doc="remaining(): the most the next release may spend (epsilon, or rho in a zCDP program; this "
             "run's budget and the data's lifetime left), or none")
def _remaining(interp, span):
    remaining = interp.accountant.remaining
    return _leading_quantity(remaining) if remaining is not None else None


def describe_budget(interp) -> str:
    """An account of the budget: what this run spent of its total, then each dataset's lifetime
    budget and balance (every run's spending), on lines of their own."""
    from jostle.privacy.ledger_text import dataset_line

    accountant = interp.accountant
    spent = accountant.accounting.describe(accountant.spent)
    if accountant.total is None:
        text = f"this run spent {spent}; no total budget is set"
    else:
        text = (f"this run spent {spent} of its budget {accountant.accounting.describe(accountant.cap)}; "
                f"the next release may spend at most {accountant.remaining}")
    if accountant.store is not None and accountant.store.persistent:
        for status in accountant.datasets_status():
            text += "\n" + dataset_line(status)
    return text


__all__ = ["REGISTRY", "TABLE_METHODS", "fmt", "describe_budget"]


# The ChoiceMaker's built-ins and every learner family's (discovered, not listed here).
from jostle.language.builtins_choice import register as _register_choicemaker  # noqa: E402

_register_choicemaker(builtin, REGISTRY)
