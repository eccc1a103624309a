"""What a raw cell reads as, before any schema: one rule for every cell a file or frame can hold.

A private table's raw cells come from a CSV file (texts), a Parquet file (typed, nested types
included) or the curator's DataFrame (any Python object at all). Before this rule, a schema
compared such a cell with its categories (`value in values`), parsed it (`float(value)`) and
printed it (`str(value)`): a NumPy array's truth value, an object whose `__eq__`, `__str__` or
`__float__` raises, or an unhashable cell then raised on the one row holding it (issue 21,
hole 4), and the routes read some types differently (a Parquet DATE was '2020-01-01' on DuckDB
and '2020-01-01 00:00:00' in memory).

The rule (`read_cell`) decides by the cell's *type* alone and never calls a method the cell's
own class defines (a subclass of str, int or float is read through the base class's method,
`str.__str__(cell)`, so its overrides never run):

  * **missing**: None, a NaN float (of any float type), `pandas.NA`, `pandas.NaT`, a NaT of
    NumPy's datetime64 or timedelta64, a Decimal NaN;
  * **plain** (the cell then reads as this exact Python value):
      - a bool or numpy.bool_: that bool;
      - an int (or subclass) or a NumPy integer of any width: that int;
      - a float (or subclass) or a NumPy float of any width (float16 to longdouble): its value
        as a double, beyond every double as an infinity;
      - a Decimal or a Fraction: its nearest double (a Parquet decimal column reads as doubles
        in memory and on the engines alike);
      - a str (or subclass) or numpy.str_: that text;
  * **unknown**, of a kind named in messages: `LIST` (list, tuple, set, NumPy array of any
    shape, 0-d included), `RECORD` (dict, NumPy structured scalar), `BYTES` (bytes, bytearray,
    memoryview, numpy.bytes_: bytes have no declared encoding), `DATE_TIME` (date, time,
    datetime, timedelta, pandas Timestamp and Timedelta, NumPy datetime64 and timedelta64),
    `COMPLEX` (complex numbers), and `OBJECT` for anything else, or a cell whose reading
    raised anyway.

A schema then applies its rules to plain cells only (jostle.data.schema: parse, clamp, match a
category); a missing or unknown cell takes the column's default if it has one, and otherwise
its row is dropped under the program's schema, or refused naming the row under the curator's.

Why this is sound: the reading of a cell depends on that cell alone and never raises, so each
row maps to at most one row whatever the other rows hold (1-stable), and nothing the program
observes depends on a row beyond its conformed values. Every conversion is bounded by the
cell's own size, and none iterates over a container's items, so no one cell can make the
conformance slow in a way its neighbour without it is not. The same kinds are given to SQL
column types (jostle.data.engine.conform.sql_kind: LIST for DuckDB's `VARCHAR[]` or Spark's
`array<string>`, DATE_TIME for DATE and TIMESTAMP, ...), so a Parquet file conforms to the
same rows in memory (where DuckDB's reader gives NumPy arrays, dicts, bytearrays and
Timestamps) as on DuckDB and on Spark.
"""

from __future__ import annotations

import datetime
import decimal
import fractions
from typing import Any, Callable

import numpy as np

MISSING = "missing"
PLAIN = "plain"
# The kinds of cells no schema reads, as messages name them ("the value is a list, ...").
LIST = "a list"
RECORD = "a record"
BYTES = "bytes"
DATE_TIME = "a date or time"
COMPLEX = "a complex number"
OBJECT = "an object of another type"
UNKNOWN_KINDS = (LIST, RECORD, BYTES, DATE_TIME, COMPLEX, OBJECT)

Reading = tuple[str, Any]  # (MISSING | PLAIN | an unknown kind, the plain value or None)
_NOTHING: Reading = (MISSING, None)


def read_cell(cell: Any) -> Reading:
    """(MISSING, None), (PLAIN, an exact bool, int, float or str), or (an unknown kind, None).

    Never raises, and never calls a method of the cell's own class (see the module docstring).
    """
    kind = type(cell)
    if kind is str or kind is int or kind is bool:
        return PLAIN, cell
    if kind is float:
        return _NOTHING if cell != cell else (PLAIN, cell)
    if cell is None:
        return _NOTHING
    readers = _READERS or _load_readers()
    try:
        for base in kind.__mro__:
            reader = readers.get(base)
            if reader is not None:
                return reader(cell)
    except Exception:  # noqa: BLE001 - a cell whose reading fails is unknown, on this row alone
        return OBJECT, None
    return OBJECT, None


def _double(number: float) -> Reading:
    return _NOTHING if number != number else (PLAIN, number)


def _numpy_float(kind: type) -> Callable[[Any], Reading]:
    return lambda cell: _double(float(kind.__float__(cell)))


def _numpy_int(kind: type) -> Callable[[Any], Reading]:
    return lambda cell: (PLAIN, int(kind.__int__(cell)))


def _numpy_time(cell: Any) -> Reading:
    return _NOTHING if bool(np.isnat(cell)) else (DATE_TIME, None)


def _decimal(cell: decimal.Decimal) -> Reading:
    if decimal.Decimal.is_nan(cell):  # quiet or signalling: float() refuses the latter
        return _NOTHING
    return PLAIN, float(decimal.Decimal.__float__(cell))


def _fraction(cell: fractions.Fraction) -> Reading:
    numerator = fractions.Fraction.numerator.fget(cell)  # type: ignore[attr-defined]
    denominator = fractions.Fraction.denominator.fget(cell)  # type: ignore[attr-defined]
    if type(numerator) is not int or type(denominator) is not int or denominator == 0:
        return OBJECT, None
    try:
        return PLAIN, numerator / denominator  # int / int is correctly rounded
    except OverflowError:
        return PLAIN, float("inf") if (numerator < 0) == (denominator < 0) else float("-inf")


def _readers() -> dict[type, Callable[[Any], Reading]]:
    """The reader of each type a cell's class may derive from, looked up along its MRO."""
    import pandas as pd

    readers: dict[type, Callable[[Any], Reading]] = {
        str: lambda cell: (PLAIN, str.__str__(cell)),
        int: lambda cell: (PLAIN, int.__int__(cell)),
        float: lambda cell: _double(float.__float__(cell)),
        complex: lambda cell: (COMPLEX, None),
        decimal.Decimal: _decimal,
        fractions.Fraction: _fraction,
        bytes: lambda cell: (BYTES, None),
        bytearray: lambda cell: (BYTES, None),
        memoryview: lambda cell: (BYTES, None),
        list: lambda cell: (LIST, None),
        tuple: lambda cell: (LIST, None),
        set: lambda cell: (LIST, None),
        frozenset: lambda cell: (LIST, None),
        range: lambda cell: (LIST, None),
        np.ndarray: lambda cell: (LIST, None),
        dict: lambda cell: (RECORD, None),
        datetime.date: lambda cell: (DATE_TIME, None),  # datetime and pandas' Timestamp too
        datetime.time: lambda cell: (DATE_TIME, None),
        datetime.timedelta: lambda cell: (DATE_TIME, None),  # pandas' Timedelta too
        type(pd.NA): lambda cell: _NOTHING,
        type(pd.NaT): lambda cell: _NOTHING,  # before datetime along its MRO
        np.bool_: lambda cell: (PLAIN, bool(np.bool_.__bool__(cell))),
        np.str_: lambda cell: (PLAIN, str.__str__(cell)),
        np.bytes_: lambda cell: (BYTES, None),
        np.void: lambda cell: (RECORD, None),
        np.datetime64: _numpy_time,
        np.timedelta64: _numpy_time,
    }
    for kind in set(np.sctypeDict.values()) - set(readers):  # timedelta64 is a NumPy integer too
        if issubclass(kind, np.floating):
            readers[kind] = _numpy_float(kind)
        elif issubclass(kind, np.integer):
            readers[kind] = _numpy_int(kind)
        elif issubclass(kind, np.complexfloating):
            readers[kind] = lambda cell: (COMPLEX, None)
    return readers


_READERS: dict[type, Callable[[Any], Reading]] = {}  # filled on first use: pandas is imported only then


def _load_readers() -> dict[type, Callable[[Any], Reading]]:
    _READERS.update(_readers())
    return _READERS


__all__ = ["read_cell", "MISSING", "PLAIN", "LIST", "RECORD", "BYTES", "DATE_TIME", "COMPLEX", "OBJECT",
           "UNKNOWN_KINDS"]
