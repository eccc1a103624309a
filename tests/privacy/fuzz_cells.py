"""The neighbour fuzzer's class "exotic cell types in files and frames under program schemas"
(issue 21, hole 4).

A case of this class (the `cells` family of tests/privacy/neighbour_fuzz.py, `exotic_case`)
puts cells of any Python or NumPy type into the private rows: NumPy arrays of every shape (0-d
to 2-d, empty, of texts), lists, tuples, dicts, sets, NumPy scalars of every dtype, complex
numbers, Decimals (NaN and signalling NaN too), Fractions, dates, times and timedeltas, NaT and
pandas.NA, bytes, objects whose `__eq__`, `__hash__`, `__str__`, `__bool__` or `__float__`
raises, subclasses of float, int and str whose own methods all raise, whole numbers beyond
every double, and near misses of the column's domain (a one-item array or list of a category,
a category as numpy.str_ or a str subclass, a number as float32 or Decimal). The private table
is then bound without a schema, under the program's `private t: {...}`, either as a DataFrame
or as a Parquet file whose columns are stored in a drawn type (`ParquetLayout`: lists, structs,
maps, blobs, JSON, dates, decimals, floats, whole numbers, or plain text and doubles), and the
program also `load`s that file under a schema with defaults.

Each case runs on both neighbours in memory and, with `fuzz(..., engine=LARGE)`, on DuckDB (a
Parquet file goes to DuckDB under `auto`): the neighbours obey the pre-release rule, and each
neighbour's run is the same on both routes, so a cell that raised (the hole: the truth value of
an array in `_match_category`) or that one route read otherwise is a finding. The statements
(`cells_statements`) print released counts, histograms and sums of the table and of the loaded
file, whose values show any row read otherwise.
"""

from __future__ import annotations

import datetime
import decimal
import fractions
import json
import math
import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from jostle.data.cells import MISSING, PLAIN, read_cell

if TYPE_CHECKING:  # pragma: no cover
    from tests.privacy.neighbour_fuzz import Column, Generator, TableSpec

PARQUET_FILE = "priv.parquet"


# ---------------------------------------------------------------- cells with broken methods
class EqRaises:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__ of a crafted cell")

    def __hash__(self) -> int:
        return 7

    def __repr__(self) -> str:
        return "<EqRaises>"


class HashRaises:
    def __hash__(self) -> int:
        raise RuntimeError("__hash__ of a crafted cell")

    def __repr__(self) -> str:
        return "<HashRaises>"


class StrRaises:
    def __str__(self) -> str:
        raise RuntimeError("__str__ of a crafted cell")

    def __format__(self, spec: str) -> str:
        raise RuntimeError("__format__ of a crafted cell")

    def __repr__(self) -> str:
        return "<StrRaises>"


class BoolRaises:
    def __bool__(self) -> bool:
        raise RuntimeError("__bool__ of a crafted cell")

    def __len__(self) -> int:
        raise RuntimeError("__len__ of a crafted cell")

    def __repr__(self) -> str:
        return "<BoolRaises>"


class FloatRaises:
    def __float__(self) -> float:
        raise RuntimeError("__float__ of a crafted cell")

    def __index__(self) -> int:
        raise RuntimeError("__index__ of a crafted cell")

    def __repr__(self) -> str:
        return "<FloatRaises>"


def _raises(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("a method of a crafted subclass")


def _broken(base: type) -> type:
    """A subclass of `base` whose own comparison, hashing, printing and conversions raise."""
    names = ("__eq__", "__ne__", "__lt__", "__hash__", "__str__", "__format__", "__float__", "__int__",
             "__index__", "__bool__", "strip", "lower")
    methods = {name: _raises for name in names if hasattr(base, name)}
    methods["__repr__"] = lambda self: f"<broken {base.__name__}>"
    return type(f"Broken{base.__name__.title()}", (base,), methods)


BrokenFloat, BrokenInt, BrokenStr = _broken(float), _broken(int), _broken(str)


def exotic_cells() -> list[Any]:
    """Cells of every type a DataFrame can hold that no schema reads as it is (or reads only
    through its base type)."""
    return [
        np.array(["a", "b"]), np.array("a"), np.array([1.5]), np.array([[1, 2], [3, 4]]), np.array([]),
        ["a", "b"], [], ("a",), {"a": 1}, {"a"}, frozenset({1}),
        np.bool_(True), np.int8(-3), np.int16(7), np.int32(1), np.int64(2), np.uint8(1), np.uint16(3),
        np.uint32(5), np.uint64(2 ** 64 - 1), np.float16(0.5), np.float32(0.1), np.float64(2.5),
        np.longdouble(1.5), np.float32("nan"), np.complex64(1), np.complex128(1 + 2j),
        np.datetime64("2020-01-01"), np.datetime64("NaT"), np.timedelta64(1, "D"), np.str_("a"),
        np.bytes_(b"a"), np.void(b"ab"), 1 + 0j, decimal.Decimal("1.50"), decimal.Decimal("NaN"),
        decimal.Decimal("sNaN"), decimal.Decimal("-Infinity"), fractions.Fraction(1, 3),
        fractions.Fraction(10 ** 400, 3), datetime.datetime(2020, 1, 1), datetime.date(2020, 1, 1),
        datetime.time(1, 2), datetime.timedelta(days=1), pd.Timestamp("2020-01-01"), pd.Timedelta("1D"),
        pd.NaT, pd.NA, b"1", bytearray(b"a"), memoryview(b"a"), pd.Period("2020-01"), pd.Interval(0, 1),
        EqRaises(), HashRaises(), StrRaises(), BoolRaises(), FloatRaises(), BrokenFloat(1.5),
        BrokenInt(10 ** 5000), BrokenStr("a"), 10 ** 5000, -(10 ** 400), object(),
    ]


EXOTIC = exotic_cells()


def near_miss(rng: random.Random, column: Column) -> Any:
    """A cell holding one of the column's own values in a type of its own: a one-item array or
    list (which `value in values` used to match), numpy.str_, a str or float subclass, float32,
    Decimal, a NumPy integer."""
    value = column.draw(rng)
    forms: list[Any] = [np.array([value]), [value], (value,)]
    if isinstance(value, str):
        forms += [np.str_(value), BrokenStr(value), np.array([value, value])]
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
        forms += [np.float32(number), BrokenFloat(number), np.float64(number)]
        if math.isfinite(number):
            forms.append(decimal.Decimal(repr(number)))
            if number.is_integer() and abs(number) < 2 ** 62:
                forms += [np.int64(int(number)), BrokenInt(int(number))]
    return rng.choice(forms)


def exotic_row(rng: random.Random, columns: tuple[Column, ...], row: tuple) -> tuple:
    """`row` with one or two of its cells replaced by exotic cells."""
    cells = list(row)
    for index in rng.sample(range(len(cells)), min(len(cells), rng.choice([1, 1, 2]))):
        cells[index] = near_miss(rng, columns[index]) if rng.random() < 0.35 else rng.choice(EXOTIC)
    return tuple(cells)


# ---------------------------------------------------------------- the private table as a Parquet file
NUMERIC_STORAGE = {"double": 20, "float": 6, "decimal": 8, "bigint": 6, "text": 6, "list": 12, "struct": 6,
                   "blob": 4, "date": 4, "json": 4}
CATEGORICAL_STORAGE = {"text": 25, "list": 14, "struct": 6, "map": 6, "blob": 5, "json": 6, "double": 4,
                       "bigint": 4}


@dataclass(frozen=True)
class ParquetLayout:
    """How each column of the private table is stored in its Parquet file: (name, storage)."""

    storage: tuple[tuple[str, str], ...]

    def write(self, table: TableSpec, path: Path) -> None:
        """The neighbour's rows as a Parquet file (written by DuckDB) in this layout."""
        import duckdb

        kinds = dict(self.storage)
        names = [c.name for c in table.columns]
        columns = [(c.name, kinds.get(c.name, "double" if c.numeric else "text"), c.numeric) for c in table.columns]
        rows = list(table.rows) or [tuple(None for _ in names)]
        selects = []
        for order, row in enumerate(rows):
            cells = [f"{_sql_cell(cell, storage, numeric)} AS \"{name}\""
                     for (name, storage, numeric), cell in zip(columns, row)]
            selects.append(f"SELECT {order} AS jostle_order, {', '.join(cells)}")
        limit = "" if table.rows else " LIMIT 0"
        connection = duckdb.connect()
        try:
            connection.execute(f"COPY (SELECT * EXCLUDE (jostle_order) FROM ({' UNION ALL '.join(selects)}) "
                               f"ORDER BY jostle_order{limit}) TO '{path}' (FORMAT parquet)")
        finally:
            connection.close()

    def csv_frame(self, table: TableSpec) -> pd.DataFrame:
        """The rows as text a CSV file can hold (a crafted cell whose `str` raises included)."""
        return pd.DataFrame([[cell_text(cell) for cell in row] for row in table.rows],
                            columns=[c.name for c in table.columns], dtype=object)


def draw_layout(rng: random.Random, columns: tuple[Column, ...]) -> ParquetLayout:
    storage = []
    for column in columns:
        pool = NUMERIC_STORAGE if column.numeric else CATEGORICAL_STORAGE
        storage.append((column.name, rng.choices(list(pool), weights=list(pool.values()))[0]))
    return ParquetLayout(tuple(storage))


def cell_text(cell: Any) -> str:
    """A text for any cell, never raising: a plain value's own, else its type's name."""
    kind, value = read_cell(cell)
    if kind == MISSING:
        return ""
    if kind != PLAIN:
        return f"<{type(cell).__name__}>"
    try:
        return str(value)
    except ValueError:  # a whole number of more than 4300 digits
        return "inf" if value > 0 else "-inf"


def _text_sql(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _number(value: bool | int | float | str | None) -> float | None:
    """A plain cell's number as a numeric column reads it (None: a text that is no number)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    try:
        return float(value)
    except OverflowError:  # a whole number beyond every double
        return math.inf if value > 0 else -math.inf


def _double_sql(number: float | None) -> str:
    if number is None:
        return "CAST(NULL AS DOUBLE)"
    if not math.isfinite(number):
        return f"CAST('{number}' AS DOUBLE)"
    return f"CAST({number!r} AS DOUBLE)"


def _sql_cell(cell: Any, storage: str, numeric: bool) -> str:
    """The SQL of one cell in a column's storage. A plain cell is stored as its value; any
    other cell as something odd for that storage (a list of two items, an empty map, a blob
    that is not UTF-8, NaN, NULL)."""
    kind, value = read_cell(cell)
    plain = kind == PLAIN
    number = _number(value) if plain else None
    text = cell_text(cell) if plain else None
    element = "DOUBLE" if numeric else "VARCHAR"
    item = _double_sql(number) if numeric else (_text_sql(text) if text is not None else "NULL")
    if kind == MISSING:
        nested = {"list": f"{element}[]", "struct": f"STRUCT(v {element})", "map": f"MAP(VARCHAR, {element})"}
        return f"CAST(NULL AS {nested[storage] if storage in nested else _SQL_TYPES[storage]})"
    if storage == "double":
        return _double_sql(number if plain else math.nan)
    if storage == "float":
        return f"CAST({_double_sql(number if plain else math.nan)} AS FLOAT)"
    if storage == "decimal":
        fine = number is not None and math.isfinite(number) and abs(number) < 1e14
        return f"CAST({number!r} AS DECIMAL(18,3))" if fine else "CAST(NULL AS DECIMAL(18,3))"
    if storage == "bigint":
        whole = number is not None and math.isfinite(number) and abs(number) < 2 ** 62
        return f"CAST({round(number)} AS BIGINT)" if whole else "CAST(NULL AS BIGINT)"
    if storage == "text":
        return _text_sql(text if text is not None else cell_text(cell))
    if storage == "list":
        return f"CAST([{item}] AS {element}[])" if plain else f"CAST([{item}, {item}] AS {element}[])"
    if storage == "struct":
        return f"CAST({{'v': {item}}} AS STRUCT(v {element}))"
    if storage == "map":
        return f"CAST(MAP {{'k': {item}}} AS MAP(VARCHAR, {element}))" if plain else \
            f"CAST(MAP {{}} AS MAP(VARCHAR, {element}))"
    if storage == "blob":
        data = (text if text is not None else "").encode("utf-8", "surrogatepass") if plain else b"\xff\x00"
        return "'" + "".join(f"\\x{byte:02X}" for byte in data) + "'::BLOB"
    if storage == "date":
        days = number is not None and math.isfinite(number) and abs(number) < 10 ** 6
        return f"CAST(DATE '1970-01-01' + INTERVAL ({int(number)}) DAY AS DATE)" if days else "CAST(NULL AS DATE)"
    if storage == "json":
        if not plain or (isinstance(value, float) and not math.isfinite(value)):
            return "CAST(NULL AS JSON)"
        huge = isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2 ** 62
        return f"CAST({_text_sql(json.dumps(text if huge else value))} AS JSON)"
    raise ValueError(f"unknown storage {storage!r}")


_SQL_TYPES = {"double": "DOUBLE", "float": "FLOAT", "decimal": "DECIMAL(18,3)", "bigint": "BIGINT", "text": "VARCHAR",
              "blob": "BLOB", "date": "DATE", "json": "JSON"}


# ---------------------------------------------------------------- a case of the class
def exotic_case(rng: random.Random, private: TableSpec, extra: tuple, bind: str,
                chunks: list[str]) -> tuple[TableSpec, tuple, str, ParquetLayout]:
    """The data of a case of this class: the extra row (and now and then a shared row) with
    exotic cells, bound without a schema as a DataFrame or a Parquet file (the program
    declares `private t`, added to `chunks` when the case had none), and its Parquet layout."""
    columns = private.columns
    layout = draw_layout(rng, columns)
    if rng.random() < 0.85:
        extra = exotic_row(rng, columns, extra)
    if private.rows and rng.random() < 0.4:
        at = rng.randrange(len(private.rows))
        private = replace(private, rows=private.rows[:at] + (exotic_row(rng, columns, private.rows[at]),)
                          + private.rows[at + 1:])
    if not bind.startswith("declared"):
        at = 1 if chunks and chunks[0].startswith("budget ") else 0
        chunks.insert(at, f"private t: {private.schema_source()}")
    return private, extra, rng.choice(["declared", "declared_parquet"]), layout


def cells_statements(generator: Generator, chunks: list[str]) -> None:
    """Releases that show the rows as conformed: counts, histograms of categorical columns and
    sums of numeric ones, of the private table and of its Parquet file loaded by the program
    under a schema with a default for every column."""
    from tests.privacy.neighbour_fuzz import _lit

    columns = generator.private.columns
    categorical = [c.name for c in columns if not c.numeric]
    numeric = [c.name for c in columns if c.numeric]
    domains = ", ".join(f"{c.name}: numeric({_lit(c.lo)}, {_lit(c.hi)}, default={_lit(c.lo)})" if c.numeric
                        else f"{c.name}: categorical({_lit(list(c.values))}, default={_lit(c.values[0])})"
                        for c in columns)
    # Both tables are read (and conformed) before the first release, whatever the budget.
    chunks.append(f'print(t.columns)\nu = load("{PARQUET_FILE}", {{{domains}}})\nprint(u.columns)')
    releases = [f"{release}({table}{column})" for table in ("t", "u") for release, column in
                [("count", "")] + [("histogram", f', "{name}"') for name in categorical]
                + [("sum", f', "{name}"') for name in numeric]]
    chosen = generator.rng.sample(releases, min(len(releases), generator.rng.randint(1, 4)))
    body = [f"    print({{{{ {release} }}}})" for release in chosen]
    chunks.append(f"with budget {generator.pick(['0.2', '0.5'])}:\n" + "\n".join(body))


def table_text(table: TableSpec) -> str:
    """A table as CSV text for reports, whatever its cells."""
    frame = pd.DataFrame([[cell_text(cell) if not isinstance(cell, str) else cell for cell in row]
                          for row in table.rows], columns=[c.name for c in table.columns], dtype=object)
    return frame.to_csv(index=False).strip() or "(no columns)"


__all__ = ["EXOTIC", "ParquetLayout", "PARQUET_FILE", "draw_layout", "exotic_case", "exotic_row", "near_miss",
           "cells_statements", "cell_text", "table_text"]
