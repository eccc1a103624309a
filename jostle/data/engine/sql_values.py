"""The SQL values of compiled row functions: public constants as SQL (`literal`, `quote`, the
DOUBLE casts both dialects read alike), `Compiled` (an SQL expression with what it holds and
how numpy would hold the same values), numpy's rounding scale (`power_of_ten`) and the
language's equality on public scalars (`scalar_equal`).

The compiler (jostle.data.engine.expressions) builds on these; expressions re-exports them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


class NotCompilable(Exception):
    """An expression the engine cannot run exactly as numpy would (the reason is the message)."""


def quote(name: str, dialect: str = "duckdb") -> str:
    """A column name as an SQL identifier of the dialect."""
    if dialect == "spark":
        return "`" + name.replace("`", "``") + "`"
    return '"' + name.replace('"', '""') + '"'


# Spark constants (Spark reads 1.0 as a DECIMAL and -0.0 as a DECIMAL zero: DOUBLE casts of text).
NAN, INFINITY, MINUS_INFINITY = "CAST('NaN' AS DOUBLE)", "CAST('Infinity' AS DOUBLE)", "CAST('-Infinity' AS DOUBLE)"
ZERO, NEGATIVE_ZERO, ONE, HALF = "CAST('0.0' AS DOUBLE)", "CAST('-0.0' AS DOUBLE)", "CAST('1.0' AS DOUBLE)", \
    "CAST('0.5' AS DOUBLE)"
TWO_TO_52 = "CAST('4503599627370496.0' AS DOUBLE)"  # every DOUBLE at least this large is whole


def _negative(sql: str) -> str:
    """Spark SQL: true when a DOUBLE is below zero or is -0.0 (whose text is the only sign it shows)."""
    return f"({sql} < 0 OR CAST({sql} AS STRING) = '-0.0')"


@dataclass(frozen=True)
class Compiled:
    """An SQL expression and what it holds: 'num', 'bool', 'str', or 'code' (with the domain).

    `flavour` is how the in-memory path holds the same values, which decides the rules numpy
    applies to them: 'array' (a numpy array: float64 numbers, booleans or texts), 'int' (int64
    numbers, which `numpy.where` makes of whole-number constants), 'object' (Python objects: a
    categorical column's values, on which numpy runs Python's own operators), 'constant' (a
    public scalar, which numpy converts to the other operand's type). `constant` holds a
    constant's value, as a 1-tuple. `longest` is, for a text, the most characters any row's
    value can hold, known from the public domains and constants alone (see `_row_text`).
    """

    sql: str
    kind: str
    values: tuple = ()
    flavour: str = "array"
    constant: tuple = ()
    longest: int = 0


def _number(value: float) -> str:
    value = float(value)
    if math.isnan(value):
        return "CAST('NaN' AS DOUBLE)"
    if math.isinf(value):
        return f"CAST('{'Infinity' if value > 0 else '-Infinity'}' AS DOUBLE)"
    if value == 0 and math.copysign(1.0, value) < 0:  # both engines read -0.0 as (-1) * 0, +0.0
        return "CAST('-0.0' AS DOUBLE)"
    return f"CAST({value!r} AS DOUBLE)"


def _text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _is_number(value: Any) -> bool:
    import numpy as np

    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _is_bool(value: Any) -> bool:
    import numpy as np

    return isinstance(value, (bool, np.bool_))


def literal(value: Any) -> Compiled:
    """A public scalar as SQL."""
    import numpy as np

    if _is_bool(value):
        return Compiled("TRUE" if value else "FALSE", "bool", flavour="constant", constant=(value,))
    if _is_number(value):
        if not isinstance(value, (int, float, np.integer)):  # np.float32 and the like: numpy would
            raise NotCompilable(f"a {type(value).__name__} constant")  # compute in their precision
        if not isinstance(value, float) and abs(int(value)) > 2 ** 53:
            raise NotCompilable("a whole number beyond 2^53 (numpy keeps it exact)")
        return Compiled(_number(value), "num", flavour="constant", constant=(value,))
    if isinstance(value, str):
        return Compiled(_text(value), "str", flavour="constant", constant=(value,), longest=len(value))
    raise NotCompilable(f"a {type(value).__name__} constant")


def _whole_constant(compiled: Compiled) -> bool:
    """A public whole number (Python's or numpy's int): numpy.where makes an int64 array of it."""
    import numpy as np

    return compiled.flavour == "constant" and isinstance(compiled.constant[0], (int, np.integer)) \
        and not _is_bool(compiled.constant[0])


def _where_flavour(compiled: Compiled) -> str:
    """The flavour of a value once numpy.where has made an array of it."""
    if compiled.flavour != "constant":
        return compiled.flavour
    return "int" if _whole_constant(compiled) else "array"


def _exact_category(value: Any) -> bool:
    """A category number a DOUBLE holds exactly (Python compares whole numbers exactly)."""
    import numpy as np

    if isinstance(value, float):
        return True
    return isinstance(value, (int, np.integer)) and abs(int(value)) <= 2 ** 53


def power_of_ten(n: int) -> float:
    """numpy's `power_of_ten` (numpy/_core/src/multiarray/calculation.c), the scale of numpy.round:
    exact up to 1e8, then 1e9 multiplied by 10 one step at a time (not 10.0 ** n, which rounds
    once: 1e23 differs), infinite beyond the largest double."""
    if n < 9:
        return float(10 ** n)
    value = 1e9
    for _ in range(n - 9):
        value *= 10.0
        if math.isinf(value):
            break
    return value


def scalar_equal(left: Any, right: Any) -> bool:
    """`jostle.language.operators.equal` on two public scalars: a boolean equals only a boolean,
    numbers compare by value (NaN equals nothing), anything else by Python's `==`. The test is
    the language's own, `isinstance(x, bool)` (numpy's bool_ is not one), so that a category
    stored as numpy.True_ compares here as it does in memory."""
    if isinstance(left, bool) != isinstance(right, bool):
        return False
    try:
        return bool(left == right)
    except (TypeError, ValueError):
        return False
