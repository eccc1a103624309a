"""What Jostle's operators mean on public values, private values and table columns.

The evaluator (jostle.language.evaluator) walks the AST and hands every operator application here, so
the rules for each kind of operand sit in one place:

  * public numbers, strings, lists and vectors compute as in Python/NumPy, with located errors
    for type mismatches, division by zero and overflow;
  * private aggregates (`Private`) go to jostle.language.sensitivity, which propagates their sensitivity
    or refuses the operation (comparisons and truth tests of private values are always refused:
    their answer would reveal the value);
  * columns seen inside a row function (`RowValues`) combine elementwise with each other and
    with public constants, through `row_apply`, which decides type errors on the column's public
    domain first (see jostle.language.row_apply). A private aggregate may never enter a row
    function: it would become a data-dependent filter threshold.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from jostle.diagnostics.errors import JostleRuntimeError, JostleWarning, PrivacyError
from jostle.language.sensitivity import private_binary, private_negate, refuse
from jostle.diagnostics.source import Span
from jostle.language.values import (
    MAX_WHOLE, MAX_WHOLE_DIGITS, ROW_SCALARS, Private, PrivateMean, Record, RowValues, RowView, Table, is_private,
    type_name,
)
from jostle.language import noisy_values
from jostle.language.row_apply import row_apply

MAX_REPEAT = 10_000_000  # items in `list * n` or characters in `text * n` (as range() is capped)

PUBLIC_ONLY_MESSAGES = {
    "print": "a private value cannot be printed",
    "str": "a private value cannot be turned into text",
    "range": "a private value cannot be a loop bound",
}


def public_number(value: Any) -> bool:
    """True for a public int or float (booleans are not numbers in Jostle)."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def truth(value: Any, span: Span, where: str) -> bool:
    """The truth of a public value used as `where` (a condition); private values are refused."""
    if isinstance(value, (Private, PrivateMean)):
        raise refuse(f"a private value cannot be used as {where}", value, span,
                     "release it first (e.g. {{ x }} or laplace(x, eps)) and test the released value")
    if isinstance(value, (RowValues, RowView)):
        kind = "a private column" if is_private(value) else "a column"
        raise refuse(f"{kind} cannot be used as {where}", value, span,
                     "inside a row function use `a if condition else b`, which works row by row")
    if isinstance(value, Table):
        if value.private:
            raise PrivacyError(f"a private table cannot be used as {where}", span,
                               "test a released count instead")
        return len(value.frame) > 0
    if isinstance(value, np.ndarray):
        return value.size > 0
    return bool(value)


def arith(op: str, a: Any, b: Any) -> Any:
    """Apply a binary arithmetic or comparison operator with Python/NumPy semantics."""
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        if public_number(b) and b == 0 and not isinstance(a, np.ndarray):
            raise ZeroDivisionError
        return a / b
    if op == "//":
        return a // b
    if op == "%":
        return a % b
    if op == "**":
        return a**b
    if op == "<":
        return a < b
    if op == ">":
        return a > b
    if op == "<=":
        return a <= b
    if op == ">=":
        return a >= b
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    raise JostleRuntimeError(f"unknown operator {op}")


def equal(left: Any, right: Any) -> bool:
    """Jostle's `==` on public values: structural, and never true between a boolean and a number."""
    if isinstance(left, np.ndarray) or isinstance(right, np.ndarray):
        try:
            return bool(np.array_equal(np.asarray(left), np.asarray(right)))
        except (TypeError, ValueError):
            return False
    if isinstance(left, bool) != isinstance(right, bool):
        return False
    try:
        return bool(left == right)
    except (TypeError, ValueError):
        return False


# ---------------------------------------------------------------- unary and binary
def unary(op: str, value: Any, span: Span, operand_span: Span) -> Any:
    """`not x`, `-x` and `+x`."""
    if op == "not":
        if isinstance(value, RowValues):
            return row_apply(lambda a: ~np.asarray(a).astype(bool), [value], span, "'not'", op=("not",))
        return not truth(value, operand_span, "an operand of 'not'")
    if isinstance(value, Private):
        return private_negate(value, span) if op == "-" else value
    if isinstance(value, PrivateMean):
        raise refuse("arithmetic on a private mean is not supported", value, span)
    if isinstance(value, RowValues):
        return row_apply(lambda a: -a if op == "-" else +a, [value], span, f"'{op}'",
                         op=("neg" if op == "-" else "pos",))
    if not (public_number(value) or isinstance(value, np.ndarray)):
        raise JostleRuntimeError(f"cannot apply '{op}' to a {type_name(value)}", span)
    return noisy_values.unary(op, value, -value if op == "-" else value)  # a release keeps its noise law


def binary(op: str, left: Any, right: Any, span: Span) -> Any:
    """Apply an arithmetic operator to two values, private or public."""
    if isinstance(left, RowValues) or isinstance(right, RowValues):
        return _row_binary(op, left, right, span)
    if isinstance(left, (Private, PrivateMean)) or isinstance(right, (Private, PrivateMean)):
        return private_binary(op, left, right, span)
    for side in (left, right):
        if is_private(side):
            raise refuse(f"the operator '{op}' cannot be applied to private data", side, span)
    if op == "+" and isinstance(left, tuple) and isinstance(right, tuple):
        return left + right
    if op == "+" and isinstance(left, str) and isinstance(right, str):
        return left + right
    if op == "*" and isinstance(left, (tuple, str)) and isinstance(right, int) and not isinstance(right, bool):
        if len(left) * max(right, 0) > MAX_REPEAT:
            raise JostleRuntimeError(f"repeating a {type_name(left)} of length {len(left)} {right} times "
                                     f"makes more than {MAX_REPEAT:,} items", span)
        return left * right
    numeric = [(public_number(v) or isinstance(v, np.ndarray) or
                (isinstance(v, tuple) and all(public_number(x) for x in v))) for v in (left, right)]
    if not all(numeric):
        raise JostleRuntimeError(f"cannot apply '{op}' to a {type_name(left)} and a {type_name(right)}", span)
    a = np.asarray(left, dtype=float) if isinstance(left, tuple) else left
    b = np.asarray(right, dtype=float) if isinstance(right, tuple) else right
    if op == "**" and _whole(a) and _whole(b) and b > 0 and abs(a) > 1 \
            and b * math.log10(abs(a)) > MAX_WHOLE_DIGITS:  # refuse before computing it
        raise JostleRuntimeError(f"'**' would give a whole number of more than {MAX_WHOLE_DIGITS} digits", span,
                                 "use floats for numbers this large")
    try:
        with np.errstate(all="raise"):
            result = arith(op, a, b)
    except (ZeroDivisionError, FloatingPointError):
        raise JostleRuntimeError("division by zero" if op in ("/", "//", "%") else
                                 f"'{op}' overflowed or was undefined", span) from None
    except OverflowError:
        raise JostleRuntimeError(f"'{op}' overflowed", span) from None
    except ValueError as error:
        raise JostleRuntimeError(f"'{op}' failed: {error}", span) from None
    if isinstance(result, complex):  # Python's (-8) ** 0.5; Jostle has no complex numbers
        raise JostleRuntimeError(f"'{op}' is undefined here: a negative number to a fractional power", span)
    if _whole(result) and abs(result) >= MAX_WHOLE:
        raise JostleRuntimeError(f"'{op}' gives a whole number of more than {MAX_WHOLE_DIGITS} digits", span,
                                 "use floats for numbers this large")
    return noisy_values.binary(op, left, right, result)  # sums of releases keep an exact noise law


def _whole(value: Any) -> bool:
    """A Python int (not a boolean): Python's unbounded whole numbers."""
    return isinstance(value, int) and not isinstance(value, bool)


def _row_binary(op: str, left: Any, right: Any, span: Span) -> RowValues:
    for side in (left, right):
        if isinstance(side, (Private, PrivateMean)):
            raise refuse("a private aggregate cannot be combined with a table's rows "
                         "(for example as a filter threshold): thresholds must be public", side, span)
        if not (isinstance(side, (RowValues, str)) or public_number(side)):
            raise JostleRuntimeError(f"cannot apply '{op}' to a column and a {type_name(side)}", span)
    return row_apply(lambda a, b: arith(op, a, b), [left, right], span, f"'{op}'", op=(op,))


# ---------------------------------------------------------------- comparisons and logic
def compare(op: str, left: Any, right: Any, span: Span) -> Any:
    """`<`, `<=`, `==`, `in`, ...: public answers, or a column of answers in a row function."""
    if isinstance(left, RowValues) or isinstance(right, RowValues):
        return _row_compare(op, left, right, span)
    for side in (left, right):
        if isinstance(side, (Private, PrivateMean)):
            raise refuse("a private value cannot be compared: the answer would reveal it", side, span)
        if is_private(side):
            raise refuse("private data cannot be compared", side, span)
    if op in ("in", "not in"):
        if isinstance(right, Record):
            found = left in right.keys()
        elif isinstance(right, (tuple, str)):
            found = left in right
        elif isinstance(right, np.ndarray):
            found = bool(np.isin(left, right).any())
        else:
            raise JostleRuntimeError(f"'in' needs a list, string or record, got a {type_name(right)}", span)
        return found if op == "in" else not found
    if op in ("==", "!="):
        same = equal(left, right)
        return same if op == "==" else not same
    if not ((public_number(left) and public_number(right)) or (isinstance(left, str) and isinstance(right, str))):
        raise JostleRuntimeError(f"cannot compare a {type_name(left)} with a {type_name(right)} using '{op}'", span)
    return bool(arith(op, left, right))


def category_warning(op: str, left: Any, right: Any, span: Span) -> JostleWarning | None:
    """A warning when a categorical column is compared with values outside its public domain.

    `r.ward == "cardiology"` where the schema lists no "cardiology" is false on every row
    (`!=` true on every row, `in` never matches that item): almost always a typo or a wrong
    guess of the categories. Decided from the column's declared categories and the compared
    public values alone, never from the rows, so it may be shown to anyone.
    """
    if op not in ("==", "!=", "in", "not in"):
        return None
    column, other = (left, right) if isinstance(left, RowValues) else (right, left)
    if op in ("==", "!=") and isinstance(column, RowValues) and isinstance(other, str) \
            and _probe_kind(column) == "number":
        _, _, hint = kind_mismatch(op, left, right, span)  # type: ignore[misc]
        effect = "false" if op == "==" else "true"
        return JostleWarning(f"column '{column.column}' is numeric and {_literal(other)} is a string: "
                             f"the comparison is {effect} on every row", span, hint,
                             [("this comes from the table's public schema, not from its rows", None)])
    if not isinstance(column, RowValues) or column.categories is None or column is other:
        return None
    if op in ("in", "not in"):
        if column is not left or not isinstance(other, tuple):
            return None
        candidates = list(other)
    else:
        candidates = [other]
    if not all(item is None or isinstance(item, ROW_SCALARS) for item in candidates):
        return None  # another column, or a value the comparison refuses anyway
    categories = column.categories
    outside = [item for item in candidates if not any(equal(item, value) for value in categories)]
    if not outside:
        return None
    shown = ", ".join(_literal(item) for item in outside)
    noun = "is not a category" if len(outside) == 1 else "are not categories"
    if len(outside) == len(candidates):
        effect = f"the comparison is {'false' if op in ('==', 'in') else 'true'} on every row"
    else:
        effect = "no row holds " + ("it" if len(outside) == 1 else "them")
    guesses = [guess for item in outside for guess in _close_categories(item, categories)]
    hint = f"the categories of '{column.column}' are [{', '.join(_literal(v) for v in categories)}]"
    if guesses:
        hint += f"; did you mean {' or '.join(dict.fromkeys(_literal(g) for g in guesses))}?"
    return JostleWarning(
        f"{shown} {noun} of column '{column.column}': {effect}", span, hint,
        [("this comes from the table's public schema, not from its rows", None)])


def _literal(value: Any) -> str:
    """A value as a program writes it: 'text', 3, true, none."""
    if isinstance(value, str):
        return repr(value)
    if value is None:
        return "none"
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    return str(value)


def _close_categories(value: Any, categories: tuple) -> list[Any]:
    """Categories the author may have meant: the same text in another case, or a near spelling."""
    import difflib

    text = str(value) if value is not None else ""
    by_text = {str(category): category for category in categories}
    same = [category for category in categories if str(category).casefold() == text.casefold()]
    if same:
        return same[:1]
    return [by_text[name] for name in difflib.get_close_matches(text, list(by_text), n=1, cutoff=0.6)]


def _elementwise_equal(a: Any, b: Any) -> np.ndarray:
    """Row-by-row `==` that also works on object (categorical) columns."""
    left, right = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
    return np.asarray(np.frompyfunc(lambda x, y: equal(x, y), 2, 1)(left, right), dtype=bool)


def _row_compare(op: str, left: Any, right: Any, span: Span) -> RowValues:
    for side in (left, right):
        if isinstance(side, (Private, PrivateMean)):
            raise refuse("a private value cannot be a filter threshold", side, span,
                         "use a public threshold, or release the value first and compare "
                         "with the released number")
    if op in ("in", "not in"):
        if not isinstance(left, RowValues) or not isinstance(right, tuple) or is_private(right) \
                or not all(item is None or isinstance(item, ROW_SCALARS) for item in right):
            raise JostleRuntimeError("a column can only be tested 'in' a public list of numbers, "
                                     "strings and booleans", span)
        options = list(right)
        negate = op == "not in"
        return row_apply(
            lambda a: np.asarray([any(equal(x, o) for o in options) for x in np.asarray(a, dtype=object)],
                                 dtype=bool).reshape(np.shape(a)) ^ negate,
            [left], span, f"'{op}'", op=(op, tuple(options)))
    if op in ("==", "!="):
        negate = op == "!="
        return row_apply(lambda a, b: _elementwise_equal(a, b) ^ negate, [left, right], span, f"'{op}'",
                         op=(op,))
    for side in (left, right):
        if not (isinstance(side, (RowValues, str)) or public_number(side)):
            raise JostleRuntimeError(f"cannot compare a column with a {type_name(side)} using '{op}'", span)
    mismatch = kind_mismatch(op, left, right, span)
    if mismatch is not None:
        raise JostleRuntimeError(*mismatch)
    return row_apply(lambda a, b: np.asarray(arith(op, a, b), dtype=bool), [left, right], span, f"'{op}'",
                     op=(op,))


def _probe_kind(column: RowValues) -> str | None:
    """"number" or "text" when every public probe value of a column is one (None: mixed or other).

    The probe holds the column's public domain (every category, the numeric bounds and points
    between them), so the kind is the schema's, never the rows'.
    """
    probe = np.asarray(column.probe)
    if probe.dtype.kind in "iuf":
        return "number"
    values = probe.tolist()
    if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return "number"
    if values and all(isinstance(v, str) for v in values):
        return "text"
    return None


def _number_text(text: str) -> str | None:
    """The number a string spells (`"30"` -> `30`), as a program writes it, or None."""
    try:
        number = float(text)
    except ValueError:
        return None
    if not math.isfinite(number):
        return None
    return str(int(number)) if number.is_integer() and abs(number) < 1e15 else repr(number)


def kind_mismatch(op: str, left: Any, right: Any, span: Span) -> tuple[str, Span, str] | None:
    """The message, location and hint for a column compared with a value of the other kind.

    `r.age > "30"` (a numeric column and a string) and `r.sex < 3` (a text column and a number)
    cannot be ordered. Decided on the column's public domain (its probe) and the program's own
    literal, so the error is the same whatever the rows hold. The hint rewrites the comparison as
    written (`r.age > 30`) when the string spells a number.
    """
    column, other = (left, right) if isinstance(left, RowValues) else (right, left)
    if not isinstance(column, RowValues) or isinstance(other, RowValues):
        return None
    kind = _probe_kind(column)
    name = f"column '{column.column}'"
    if kind == "number" and isinstance(other, str):
        shown = _literal(other)
        number = _number_text(other)
        written = span.text()
        if number is not None:
            fixed = _replace_literal(written, other, number, last=other is right)
            hint = f"compare with a number: `{fixed}`" if fixed else f"compare with the number {number}"
        else:
            example = f"r.{column.column} {op} 0" if column is left else f"0 {op} r.{column.column}"
            hint = f"compare with a number, e.g. `{example}`"
        return (f"{name} is numeric and {shown} is a string: '{op}' cannot compare them", span, hint)
    if kind == "text" and public_number(other):
        return (f"{name} holds text (its categories are strings) and {_literal(other)} is a number: '{op}' "
                "cannot compare them", span,
                f"compare with one of its categories with == or in, e.g. `r.{column.column} == "
                f"{_literal(column.probe[0])}`")
    return None


def _replace_literal(written: str, text: str, number: str, last: bool) -> str | None:
    """`written` (a comparison's source) with the string literal spelling `text` replaced by `number`."""
    import re

    matches = [m for m in re.finditer(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'", written)
               if m.group(0)[1:-1] == text]
    if not matches:
        return None
    match = matches[-1] if last else matches[0]
    return written[:match.start()] + number + written[match.end():]


def row_logic(op: str, left: Any, right: Any, span: Span) -> RowValues:
    """`and` / `or` row by row, when either side is a column."""
    for side in (left, right):
        if isinstance(side, (Private, PrivateMean)):
            raise refuse(f"a private value cannot be an operand of '{op}'", side, span)
    if op == "and":
        return row_apply(lambda a, b: np.asarray(a).astype(bool) & np.asarray(b).astype(bool),
                         [left, right], span, "'and'", op=("and",))
    return row_apply(lambda a, b: np.asarray(a).astype(bool) | np.asarray(b).astype(bool),
                     [left, right], span, "'or'", op=("or",))


def row_if(test: RowValues, then: Any, orelse: Any, span: Span) -> RowValues:
    """`a if c else b` row by row, when the condition is a column."""
    for side in (then, orelse):
        if isinstance(side, (Private, PrivateMean)):
            raise refuse("a private aggregate cannot be mixed into a table's rows", side, span)
    return row_apply(lambda t, a, b: np.where(np.asarray(t).astype(bool), a, b), [test, then, orelse],
                     span, "'if ... else'", op=("if",))


def refuse_private_arguments(name: str, args: list[Any], kwargs: dict[str, Any], span: Span,
                             arg_spans: list[Span] | None) -> None:
    """Public-only built-ins refuse private arguments, pointing at the first one."""
    for i, arg in enumerate(list(args) + list(kwargs.values())):
        if is_private(arg):
            where = arg_spans[i] if arg_spans is not None and i < len(arg_spans) else span
            message = PUBLIC_ONLY_MESSAGES.get(name, f"{name}() cannot take a private value")
            raise refuse(message, arg, where)
