"""Cells of every type a file or frame can hold, under a schema, on every route (issue 21, hole 4).

Hole 4: a Parquet list cell with two items, and a DataFrame object cell holding a NumPy array,
made a program's `private t: {tags: categorical([...], default=...), ...}` raise ValueError (the
truth value of an array, in `schema._match_category`) in memory, and the curator's DataFrame
with such a cell failed on DuckDB when it was registered, only when that row was present.

The rule (jostle/data/cells.py, `read_cell`): a cell is read by its type alone, never by a
method of its own class; None, NaN, NaT and pandas.NA are missing; bools, ints, floats,
texts, Decimals, Fractions and NumPy's scalars of these are plain values; every other cell
(lists, tuples, sets, dicts, NumPy arrays of any shape, bytes, dates and times, complex
numbers, any other object) is unknown, which takes the column's default, or drops its row
under the program's schema, or is a DataError naming the row under the curator's. A Parquet
column of a type whose cells are unknown in memory (LIST, STRUCT, MAP, BLOB, DATE, ...) is read
the same way in SQL (jostle.data.engine.conform.sql_kind), so each route gives the same rows.

The tests: the two reproducers (each failed before the fix: ValueError in memory; on DuckDB the
DataFrame's registration raised NotImplementedException, and a Parquet DOUBLE[] column under a
numeric domain failed the whole conformance query), then every cell type of a DataFrame and
every column type of a Parquet file on every route: the same conformed rows and the same
refusal, each as the rule says. Spark (where Java runs) reads the same Parquet file alike.
"""

from __future__ import annotations

import datetime
import decimal
import fractions
import io
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from tests.conftest import local_spark
from jostle import Session
from jostle.data.cells import read_cell
from jostle.data.engine.spark_engine import spark_unavailable
from jostle.data.schema import DataError, Schema, conform, python_cells
from jostle.diagnostics.errors import JostleError

duckdb = pytest.importorskip("duckdb")

ROUTES = ("pandas", "duckdb")
SEED = 20261124


# ---------------------------------------------------------------- running a program on a route
def released(data: Any, program: str, engine: str) -> str:
    """What `program` printed on private data `data` bound without a schema (same seed always)."""
    output = io.StringIO()
    session = Session(budget=20, seed=SEED, ledger_path=":memory:", output=output, engine=engine)
    session.bind_private("t", data)
    session.run(program)
    session.close()
    return output.getvalue()


def conformed(data: Any, engine: str, declared: str | None = None, schema: Any = None,
              load: bool = False) -> tuple[str, Any]:
    """("ok", the conformed rows) or ("error", the message) for `data` on one route.

    `declared`: a program's schema (Jostle source) for data bound without one (`private t`), or
    for `load(path, ...)` in the program when `load`; `schema`: the curator's schema at bind.
    """
    session = Session(budget=20, seed=SEED, ledger_path=":memory:", output=io.StringIO(), engine=engine)
    try:
        if load:
            session.run(f"t = load({json.dumps(str(data))}, {declared})")
        elif declared is not None:
            session.bind_private("t", data)
            session.run(f"private t: {declared}")
        else:
            session.bind_private("t", data, schema)
        frame = session.interpreter.globals.lookup("t").frame
        return "ok", [tuple(_plain(v) for v in row) for row in frame.itertuples(index=False)]
    except (DataError, JostleError) as error:
        return "error", str(error)
    finally:
        session.close()


def _plain(value: Any) -> Any:
    """A conformed value with its type (1 and 1.0 differ in a categorical column)."""
    return type(value).__name__, value


# ---------------------------------------------------------------- the reproducers of hole 4
PROGRAM = '''private t: {tags: categorical(["a", "b"]DEFAULT), x: numeric(0, 10)}
print(t.columns)
with budget 3:
    print({{ count(t) }})
    print({{ histogram(t, "tags") }})
    print({{ sum(t, "x") }})
'''
WITH_DEFAULT = PROGRAM.replace("DEFAULT", ', default="a"')
WITHOUT_DEFAULT = PROGRAM.replace("DEFAULT", "")


def tags_frame(tags: list[Any]) -> pd.DataFrame:
    return pd.DataFrame({"tags": pd.Series(tags, dtype=object), "x": [float(i % 7) for i in range(len(tags))]})


@pytest.mark.parametrize("engine", ROUTES)
def test_a_dataframe_cell_holding_a_numpy_array_takes_the_default_or_drops_its_row(engine: str) -> None:
    """Hole 4: the array cell raised ValueError in memory and NotImplementedException on DuckDB.
    Now the row takes the default (the release equals that of the table with "a" in its place)
    or, without a default, is dropped (the release equals that of the table without it)."""
    tags = ["a", "b", "b", "a", "b", "a"]
    at = 3
    with_row = tags[:at] + [np.array(["a", "b"])] + tags[at:]
    x = [float(i % 7) for i in range(len(with_row))]
    frame = pd.DataFrame({"tags": pd.Series(with_row, dtype=object), "x": x})
    defaulted = pd.DataFrame({"tags": pd.Series(tags[:at] + ["a"] + tags[at:], dtype=object), "x": x})
    dropped = frame.drop(index=at).reset_index(drop=True)
    assert released(frame, WITH_DEFAULT, engine) == released(defaulted, WITH_DEFAULT, engine)
    assert released(frame, WITHOUT_DEFAULT, engine) == released(dropped, WITHOUT_DEFAULT, engine)


def write_parquet(path: Path, columns: dict[str, tuple[str, list[str]]], empty: bool = False) -> Path:
    """A Parquet file written by DuckDB: {name: (SQL type, SQL literal per row)}; `empty`: the
    same columns and no row."""
    rows = len(next(iter(columns.values()))[1])
    selects = [" , ".join(f"CAST({cells[i]} AS {sql_type}) AS \"{name}\"" for name, (sql_type, cells) in columns.items())
               for i in range(rows)]
    query = " UNION ALL ".join(f"SELECT {i} AS jostle_order, {select}" for i, select in enumerate(selects))
    connection = duckdb.connect()
    connection.execute(f"COPY (SELECT * EXCLUDE (jostle_order) FROM ({query}) ORDER BY jostle_order"
                       f"{' LIMIT 0' if empty else ''}) TO '{path}' (FORMAT parquet)")
    connection.close()
    return path


@pytest.mark.parametrize("engine", ROUTES)
def test_a_parquet_list_cell_with_two_items_takes_the_default_or_drops_its_row(engine: str, tmp_path: Path) -> None:
    """Hole 4: a list column of a Parquet file raised ValueError in memory on a list of two
    items (one of one item matched that item: `array == 'a'` was a truth value), and on DuckDB
    a list column under a numeric domain failed the conformance query (CAST(DOUBLE[] AS
    DOUBLE)), while in memory a one-item list read as its number. A list cell is now unknown
    on every route: the default, or the row dropped."""
    lists = ["['a']", "['b']", "['a', 'b']", "['b']", "[]"]
    x = ["1.5", "2", "3", "4", "5"]
    scores = ["[1.0]", "[2.0]", "[1.0, 2.0]", "NULL", "[3.0]"]
    data = write_parquet(tmp_path / "data.parquet", {"tags": ("VARCHAR[]", lists), "x": ("DOUBLE", x),
                                                      "score": ("DOUBLE[]", scores)})
    every_default = write_parquet(tmp_path / "defaults.parquet", {"tags": ("VARCHAR", ["'a'"] * 5),
                                                                  "x": ("DOUBLE", x), "score": ("DOUBLE", ["0"] * 5)})
    empty = write_parquet(tmp_path / "empty.parquet", {"tags": ("VARCHAR", ["'a'"]), "x": ("DOUBLE", ["1"]),
                                                       "score": ("DOUBLE", ["0"])}, empty=True)
    with_score = WITH_DEFAULT.replace("x: numeric(0, 10)}", "x: numeric(0, 10), score: numeric(0, 10, default=0)}")
    assert released(data, with_score, engine) == released(every_default, with_score, engine)
    no_rows = WITHOUT_DEFAULT.replace("x: numeric(0, 10)}", "x: numeric(0, 10), score: numeric(0, 10)}")
    assert released(data, no_rows, engine) == released(empty, no_rows, engine)


# ---------------------------------------------------------------- every cell of a DataFrame
class EqRaises:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    def __hash__(self) -> int:
        return 1


class HashRaises:
    def __hash__(self) -> int:
        raise RuntimeError("hash")


class StrRaises:
    def __str__(self) -> str:
        raise RuntimeError("str")

    def __repr__(self) -> str:
        raise RuntimeError("repr")

    def __format__(self, spec: str) -> str:
        raise RuntimeError("format")


class BoolRaises:
    def __bool__(self) -> bool:
        raise RuntimeError("bool")

    def __len__(self) -> int:
        raise RuntimeError("len")


class FloatRaises:
    def __float__(self) -> float:
        raise RuntimeError("float")

    def __index__(self) -> int:
        raise RuntimeError("index")


class BrokenFloat(float):
    """A float subclass whose own methods all raise: read by float's."""

    def __float__(self) -> float:
        raise RuntimeError("float")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    def __ne__(self, other: object) -> bool:
        raise RuntimeError("ne")

    def __hash__(self) -> int:
        raise RuntimeError("hash")

    def __str__(self) -> str:
        raise RuntimeError("str")

    def __repr__(self) -> str:
        raise RuntimeError("repr")


class BrokenInt(int):
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    def __hash__(self) -> int:
        raise RuntimeError("hash")

    def __str__(self) -> str:
        raise RuntimeError("str")

    def __repr__(self) -> str:
        raise RuntimeError("repr")

    def __float__(self) -> float:
        raise RuntimeError("float")


class BrokenStr(str):
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    def __hash__(self) -> int:
        raise RuntimeError("hash")

    def __str__(self) -> str:
        raise RuntimeError("str")

    def __repr__(self) -> str:
        raise RuntimeError("repr")

    def strip(self, chars: str | None = None) -> str:
        raise RuntimeError("strip")


UNKNOWN = None  # neither a number nor a category: the default, or the row dropped
CATEGORIES = ["a", "b", 1]
# (id, cell, its number in numeric(0, 10), its category among CATEGORIES); UNKNOWN where none.
CELLS = [
    ("list", ["a", "b"], UNKNOWN, UNKNOWN), ("one-item list", ["a"], UNKNOWN, UNKNOWN),
    ("tuple", ("a",), UNKNOWN, UNKNOWN), ("dict", {"a": 1}, UNKNOWN, UNKNOWN), ("set", {"a"}, UNKNOWN, UNKNOWN),
    ("frozenset", frozenset({1}), UNKNOWN, UNKNOWN), ("range", range(3), UNKNOWN, UNKNOWN),
    ("array 0-d", np.array("a"), UNKNOWN, UNKNOWN), ("array 1-d", np.array(["a", "b"]), UNKNOWN, UNKNOWN),
    ("array of one", np.array([1]), UNKNOWN, UNKNOWN), ("array 2-d", np.array([[1, 2], [3, 4]]), UNKNOWN, UNKNOWN),
    ("empty array", np.array([]), UNKNOWN, UNKNOWN),
    ("numpy bool", np.bool_(True), 1.0, 1), ("int8", np.int8(-3), 0.0, UNKNOWN), ("int16", np.int16(7), 7.0, UNKNOWN),
    ("int32", np.int32(1), 1.0, 1), ("int64", np.int64(2), 2.0, UNKNOWN), ("uint8", np.uint8(1), 1.0, 1),
    ("uint16", np.uint16(3), 3.0, UNKNOWN), ("uint32", np.uint32(5), 5.0, UNKNOWN),
    ("uint64", np.uint64(2 ** 64 - 1), 10.0, UNKNOWN), ("float16", np.float16(0.5), 0.5, UNKNOWN),
    ("float32", np.float32(0.1), float(np.float32(0.1)), UNKNOWN), ("float64", np.float64(2.5), 2.5, UNKNOWN),
    ("longdouble", np.longdouble(1.5), 1.5, UNKNOWN), ("float32 nan", np.float32("nan"), UNKNOWN, UNKNOWN),
    ("complex64", np.complex64(1), UNKNOWN, UNKNOWN), ("complex128", np.complex128(1 + 2j), UNKNOWN, UNKNOWN),
    ("datetime64", np.datetime64("2020-01-01"), UNKNOWN, UNKNOWN), ("datetime64 NaT", np.datetime64("NaT"), UNKNOWN, UNKNOWN),
    ("timedelta64", np.timedelta64(1, "D"), UNKNOWN, UNKNOWN), ("numpy str", np.str_("a"), UNKNOWN, "a"),
    ("numpy bytes", np.bytes_(b"a"), UNKNOWN, UNKNOWN), ("numpy void", np.void(b"ab"), UNKNOWN, UNKNOWN),
    ("complex", 1 + 0j, UNKNOWN, UNKNOWN), ("Decimal", decimal.Decimal("1.50"), 1.5, UNKNOWN),
    ("Decimal one", decimal.Decimal("1.0"), 1.0, 1), ("Decimal NaN", decimal.Decimal("NaN"), UNKNOWN, UNKNOWN),
    ("Decimal sNaN", decimal.Decimal("sNaN"), UNKNOWN, UNKNOWN), ("Decimal -inf", decimal.Decimal("-Infinity"), 0.0, UNKNOWN),
    ("Fraction", fractions.Fraction(1, 3), 1 / 3, UNKNOWN), ("huge Fraction", fractions.Fraction(10 ** 400, 3), 10.0, UNKNOWN),
    ("datetime", datetime.datetime(2020, 1, 1), UNKNOWN, UNKNOWN), ("date", datetime.date(2020, 1, 1), UNKNOWN, UNKNOWN),
    ("time", datetime.time(1, 2), UNKNOWN, UNKNOWN), ("timedelta", datetime.timedelta(days=1), UNKNOWN, UNKNOWN),
    ("Timestamp", pd.Timestamp("2020-01-01"), UNKNOWN, UNKNOWN), ("Timedelta", pd.Timedelta("1D"), UNKNOWN, UNKNOWN),
    ("NaT", pd.NaT, UNKNOWN, UNKNOWN), ("pandas NA", pd.NA, UNKNOWN, UNKNOWN), ("None", None, UNKNOWN, UNKNOWN),
    ("nan", float("nan"), UNKNOWN, UNKNOWN), ("bytes", b"1", UNKNOWN, UNKNOWN), ("bytearray", bytearray(b"a"), UNKNOWN, UNKNOWN),
    ("memoryview", memoryview(b"a"), UNKNOWN, UNKNOWN), ("Period", pd.Period("2020-01"), UNKNOWN, UNKNOWN),
    ("Interval", pd.Interval(0, 1), UNKNOWN, UNKNOWN), ("object", object(), UNKNOWN, UNKNOWN),
    ("__eq__ raises", EqRaises(), UNKNOWN, UNKNOWN), ("__hash__ raises", HashRaises(), UNKNOWN, UNKNOWN),
    ("__str__ raises", StrRaises(), UNKNOWN, UNKNOWN), ("__bool__ raises", BoolRaises(), UNKNOWN, UNKNOWN),
    ("__float__ raises", FloatRaises(), UNKNOWN, UNKNOWN), ("float subclass", BrokenFloat(1.5), 1.5, UNKNOWN),
    ("huge int subclass", BrokenInt(10 ** 5000), 10.0, UNKNOWN), ("str subclass", BrokenStr(" b "), UNKNOWN, "b"),
    ("huge int", 10 ** 5000, 10.0, UNKNOWN), ("huge negative int", -(10 ** 400), 0.0, UNKNOWN),
    ("text", "a", UNKNOWN, "a"), ("number text", " 1 ", 1.0, 1), ("int", 1, 1.0, 1), ("float", 1.0, 1.0, 1),
    ("bool", True, 1.0, 1),
]
DECLARED = '{c: categorical(["a", "b", 1]DEFAULT_C), n: numeric(0, 10DEFAULT_N)}'


def cell_frame(cell: Any) -> pd.DataFrame:
    """Three rows; the middle one holds `cell` in both columns."""
    return pd.DataFrame({"c": pd.Series(["a", cell, "b"], dtype=object), "n": pd.Series([1.0, cell, 2.0], dtype=object)})


@pytest.mark.parametrize("label, cell, number, category", CELLS, ids=[c[0] for c in CELLS])
def test_every_cell_type_of_a_dataframe_is_read_by_the_rule_alike_on_every_route(
        label: str, cell: Any, number: float | None, category: Any) -> None:
    frame = cell_frame(cell)
    defaults = DECLARED.replace("DEFAULT_C", ', default="b"').replace("DEFAULT_N", ", default=5")
    seen = {}
    for engine in ROUTES:
        outcomes = {
            "defaults": conformed(frame, engine, defaults),
            "categorical": conformed(frame, engine, '{c: categorical(["a", "b", 1])}'),
            "numeric": conformed(frame, engine, "{n: numeric(0, 10)}"),
            "curator": conformed(frame, engine, schema={"c": ("categorical", CATEGORIES), "n": ("numeric", 0, 10)}),
        }
        seen[engine] = outcomes
        status, rows = outcomes["defaults"]
        assert status == "ok", (engine, rows)
        expected_category = category if category is not None else "b"
        assert rows[1] == (_plain(expected_category), _plain(number if number is not None else 5.0)), (engine, rows)
        assert outcomes["categorical"] == ("ok", [(_plain("a"),)] + ([(_plain(category),)] if category is not None
                                                                     else []) + [(_plain("b"),)]), engine
        kept = [(_plain(1.0),)] + ([(_plain(number),)] if number is not None else []) + [(_plain(2.0),)]
        assert outcomes["numeric"] == ("ok", kept), engine
        status, message = outcomes["curator"]
        if category is not None and number is not None:
            assert status == "ok", message
        else:
            column = "c" if category is None else "n"
            assert status == "error" and f"column '{column}', row 2: the value " in message, message
    assert seen["pandas"] == seen["duckdb"]


def test_the_rule_never_calls_a_cells_own_methods() -> None:
    """Each broken object reads without raising, and a subclass reads as its base's value."""
    assert read_cell(BrokenFloat(1.5)) == ("plain", 1.5) and type(read_cell(BrokenFloat(1.5))[1]) is float
    assert read_cell(BrokenStr(" b ")) == ("plain", " b ") and type(read_cell(BrokenStr(" b "))[1]) is str
    assert read_cell(BrokenInt(7)) == ("plain", 7) and type(read_cell(BrokenInt(7))[1]) is int
    for broken in (EqRaises(), HashRaises(), StrRaises(), BoolRaises(), FloatRaises()):
        assert read_cell(broken) == ("an object of another type", None)


def test_python_cells_reads_missing_cells_without_pandas_comparisons() -> None:
    """The in-memory route's copy of a DataFrame: pandas' notna raised on these cells."""
    frame = pd.DataFrame({"c": pd.Series([BrokenFloat(1.5), decimal.Decimal("sNaN"), np.array([1, 2]), None,
                                          float("nan"), pd.NaT], dtype=object),
                          "f": [1.0, np.nan, 2.0, 3.0, 4.0, 5.0]})
    cells = python_cells(frame)
    assert [v is None for v in cells["c"]] == [False, True, False, True, True, True]
    assert [v is None for v in cells["f"]] == [False, True, False, False, False, False]


def test_no_cell_makes_the_conformance_slow() -> None:
    """Huge cells are read in time independent of their contents (no iteration over a
    container, no str() of a huge whole number): each conforms in well under a second here
    (a quadratic str() of the whole number, or a scan of the array, would take minutes)."""
    huge = [np.zeros(10 ** 7), list(range(10 ** 6)), 10 ** 200_000, "7" * 10 ** 7, {i: i for i in range(10 ** 6)}]
    schema = Schema.of({"c": ("categorical", CATEGORIES), "n": ("numeric", 0, 10)})
    for cell in huge:
        frame = pd.DataFrame({"c": pd.Series([cell, "a"], dtype=object), "n": pd.Series([cell, 1], dtype=object)})
        start = time.perf_counter()
        out = conform(frame, schema, "t", strict=False)
        assert time.perf_counter() - start < 5.0, type(cell)
        assert len(out) == 1


@pytest.mark.parametrize("engine", ROUTES)
def test_typed_dataframe_columns_conform_alike_on_every_route(engine: str) -> None:
    """Columns of NumPy and pandas types no schema reads (complex, periods, intervals,
    datetimes, sparse, longdouble) and ones it does, with a durable ledger (its fingerprint of
    the DataFrame raised on complex, sparse and longdouble columns)."""
    columns = {
        "complex": pd.Series([1 + 2j, 2, np.nan], dtype=complex), "f16": pd.Series([0.5, 1, np.nan], dtype=np.float16),
        "td": pd.Series(pd.to_timedelta([1, 2, None], unit="D")), "period": pd.Series(pd.period_range("2020-01", periods=3)),
        "interval": pd.Series(pd.interval_range(0, 3)), "sparse": pd.Series(pd.arrays.SparseArray([0, 1.0, np.nan])),
        "cat": pd.Series(["a", "b", None], dtype="category"), "u64": pd.Series([1, 2 ** 64 - 1, 5], dtype=np.uint64),
        "dt": pd.Series(pd.to_datetime(["2020-01-01", None, "2021-01-01"])),
        "boolean": pd.Series([True, None, False], dtype="boolean"), "i64": pd.Series([1, None, 3], dtype="Int64"),
        "f32": pd.Series([0.1, 2, np.nan], dtype=np.float32), "ld": pd.Series([1.5, 2, np.inf], dtype=np.longdouble),
        "string": pd.Series(["a", None, " 1 "], dtype="string"),
    }
    frame = pd.DataFrame(columns)
    declared = "{" + ", ".join(f'{name}: categorical(["a", "b", 1, 0.5, 2], default="a")' if i % 2 else
                               f"{name}: numeric(0, 10, default=5)" for i, name in enumerate(columns)) + "}"
    reference = conformed(frame, "pandas", declared)
    assert reference[0] == "ok", reference
    assert conformed(frame, engine, declared) == reference
    import tempfile

    with tempfile.TemporaryDirectory() as folder:  # the durable ledger fingerprints the frame
        session = Session(budget=5, seed=SEED, ledger_path=str(Path(folder) / "ledger.sqlite"),
                          output=io.StringIO(), engine=engine)
        session.bind_private("t", frame)
        session.run(f"private t: {declared}\nprint(laplace(count(t), 1.0))")
        session.close()


# ---------------------------------------------------------------- every column type of a Parquet file
# (SQL type, a cell per row; the middle row is the one a test varies), the cells' number in
# numeric(0, 10) and category among CATEGORIES per row (UNKNOWN where none). Spark cannot
# read TIME, UUID or INTERVAL columns at all (the same for every file holding one).
PARQUET = {
    "list": ("VARCHAR[]", ["['a']", "['a', 'b']", "NULL"], [UNKNOWN] * 3, [UNKNOWN] * 3),
    "empty list": ("DOUBLE[]", ["[]", "[1.5]", "[1, 2]"], [UNKNOWN] * 3, [UNKNOWN] * 3),
    "nested list": ("INTEGER[][]", ["[[1]]", "[[1, 2], [3]]", "[]"], [UNKNOWN] * 3, [UNKNOWN] * 3),
    "fixed array": ("DOUBLE[2]", ["[1, 2]", "[3, 4]", "NULL"], [UNKNOWN] * 3, [UNKNOWN] * 3),
    "struct": ("STRUCT(k VARCHAR)", ["{'k': 'a'}", "{'k': NULL}", "NULL"], [UNKNOWN] * 3, [UNKNOWN] * 3),
    "map": ("MAP(VARCHAR, INTEGER)", ["MAP {'a': 1}", "MAP {}", "NULL"], [UNKNOWN] * 3, [UNKNOWN] * 3),
    "blob": ("BLOB", ["'a'::BLOB", "'\\xFF'::BLOB", "'1'::BLOB"], [UNKNOWN] * 3, [UNKNOWN] * 3),
    "decimal": ("DECIMAL(10,2)", ["1.50", "2.00", "1.00"], [1.5, 2.0, 1.0], [UNKNOWN, UNKNOWN, 1]),
    "wide decimal": ("DECIMAL(38,3)", ["1.5", "123456789012345678901234567.125", "-0.001"], [1.5, 10.0, 0.0],
                     [UNKNOWN] * 3),
    "date": ("DATE", ["DATE '2020-01-01'", "NULL", "DATE '1970-01-01'"], [UNKNOWN] * 3, [UNKNOWN] * 3),
    "timestamp": ("TIMESTAMP", ["TIMESTAMP '2020-01-01 01:02:03'", "NULL", "TIMESTAMP '1970-01-01'"], [UNKNOWN] * 3,
                  [UNKNOWN] * 3),
    "timestamp with time zone": ("TIMESTAMPTZ", ["TIMESTAMPTZ '2020-01-01 01:02:03+00'", "NULL",
                                                 "TIMESTAMPTZ '1970-01-01 00:00:00+00'"], [UNKNOWN] * 3, [UNKNOWN] * 3),
    "time": ("TIME", ["TIME '01:02:03'", "TIME '00:00:00'", "NULL"], [UNKNOWN] * 3, [UNKNOWN] * 3),
    "interval": ("INTERVAL", ["INTERVAL 3 DAY", "NULL", "INTERVAL 0 DAY"], [UNKNOWN] * 3, [UNKNOWN] * 3),
    "uuid": ("UUID", ["'6ba7b810-9dad-11d1-80b4-00c04fd430c8'", "NULL", "'00000000-0000-0000-0000-000000000000'"],
             [UNKNOWN] * 3, [UNKNOWN] * 3),
    "float": ("FLOAT", ["0.1", "2.5", "'nan'"], [float(np.float32(0.1)), 2.5, UNKNOWN], [UNKNOWN] * 3),
    "double": ("DOUBLE", ["1.0", "'inf'", "'nan'"], [1.0, 10.0, UNKNOWN], [1, UNKNOWN, UNKNOWN]),
    "ubigint": ("UBIGINT", ["18446744073709551615", "0", "1"], [10.0, 0.0, 1.0], [UNKNOWN, UNKNOWN, 1]),
    "tinyint": ("TINYINT", ["-1", "1", "NULL"], [0.0, 1.0, UNKNOWN], [UNKNOWN, 1, UNKNOWN]),
    "boolean": ("BOOLEAN", ["true", "false", "NULL"], [1.0, 0.0, UNKNOWN], [1, UNKNOWN, UNKNOWN]),
    "text": ("VARCHAR", ["'a'", "' 1 '", "'b'"], [UNKNOWN, 1.0, UNKNOWN], ["a", 1, "b"]),
    "json": ("JSON", ["'\"a\"'", "'1'", "NULL"], [UNKNOWN, 1.0, UNKNOWN], [UNKNOWN, 1, UNKNOWN]),
}
SPARK_CANNOT_READ = ("time", "interval", "uuid")


def parquet_file(folder: Path, label: str) -> Path:
    sql_type, cells, _, _ = PARQUET[label]
    return write_parquet(folder / f"{label.replace(' ', '_')}.parquet", {"c": (sql_type, cells)})


def expected_rows(values: list[Any], default: Any) -> list[tuple]:
    return [(_plain(v if v is not None else default),) for v in values if v is not None or default is not None]


@pytest.mark.parametrize("label", list(PARQUET))
def test_every_column_type_of_a_parquet_file_is_read_by_the_rule_alike_on_every_route(
        label: str, tmp_path: Path) -> None:
    path = parquet_file(tmp_path, label)
    _, _, numbers, categories = PARQUET[label]
    seen = {}
    for engine in ROUTES:
        outcomes = {}
        for kind, domain, expected in (("categorical", 'categorical(["a", "b", 1]DEFAULT)', categories),
                                       ("numeric", "numeric(0, 10DEFAULT)", numbers)):
            for default, literal in ((None, ""), ("b" if kind == "categorical" else 5.0,
                                                  ', default="b"' if kind == "categorical" else ", default=5")):
                declared = "{c: " + domain.replace("DEFAULT", literal) + "}"
                for load in (False, True):
                    outcome = conformed(path, engine, declared, load=load)
                    assert outcome == ("ok", expected_rows(expected, default)), (engine, kind, default, load, outcome)
                    outcomes[kind, default, load] = outcome
            curator = conformed(path, engine, schema={"c": ("categorical", CATEGORIES) if kind == "categorical"
                                                      else ("numeric", 0, 10)})
            if None in expected:
                assert curator[0] == "error" and f"row {expected.index(None) + 1}: the value" in curator[1], curator
            else:
                assert curator == ("ok", expected_rows(expected, None))
            outcomes[kind, "curator"] = curator
        seen[engine] = outcomes
    assert seen["pandas"] == seen["duckdb"]


@pytest.mark.parametrize("engine", ROUTES)
def test_parquet_files_of_every_column_type_bind_with_a_durable_ledger(engine: str, tmp_path: Path) -> None:
    """The durable ledger's fingerprint of a Parquet file on DuckDB cast a DOUBLE[], INTEGER[][]
    or INTERVAL column to DOUBLE (their names start as a number's), which failed the binding."""
    ledger = str(tmp_path / "ledger.sqlite")
    for label in PARQUET:
        session = Session(budget=5, seed=SEED, ledger_path=ledger, output=io.StringIO(), engine=engine)
        session.bind_private("t", parquet_file(tmp_path, label), dataset=label)
        session.run('private t: {c: categorical(["a", "b", 1], default="a")}\nprint(laplace(count(t), 1.0))')
        session.close()


SPARK_REASON = spark_unavailable()


@pytest.mark.skipif(SPARK_REASON is not None, reason=f"Spark cannot run here: {SPARK_REASON}")
def test_spark_reads_every_parquet_column_type_as_memory_and_duckdb_do(tmp_path: Path) -> None:
    """One file with a column of each type Spark can read, under a program's schema with
    defaults (every row kept: the values compared), one without (which rows are dropped) and
    the curator's (the same refusal)."""
    spark = local_spark()
    labels = [label for label in PARQUET if label not in SPARK_CANNOT_READ]
    names = {label: f"c{i}" for i, label in enumerate(labels)}
    path = write_parquet(tmp_path / "every.parquet", {names[label]: PARQUET[label][:2] for label in labels})

    def domain(i: int, default: bool) -> str:
        if i % 2:
            return 'categorical(["a", "b", 1]' + (', default="b")' if default else ")")
        return "numeric(0, 10" + (", default=5)" if default else ")")

    with_defaults = "{" + ", ".join(f"{names[label]}: {domain(i, True)}" for i, label in enumerate(labels)) + "}"
    text_and_numbers = "{" + ", ".join(f"{names[label]}: {domain(i, False)}" for i, label in enumerate(labels)
                                       if label in ("text", "decimal", "ubigint", "boolean")) + "}"
    curator = {names[label]: ("categorical", CATEGORIES) if i % 2 else ("numeric", 0, 10)
               for i, label in enumerate(labels)}
    outcomes: dict[str, list] = {}
    for engine in ("pandas", "duckdb", "spark"):
        output = []
        for declared, schema in ((with_defaults, None), (text_and_numbers, None), (None, curator)):
            session = Session(budget=20, seed=SEED, ledger_path=":memory:", output=io.StringIO(), engine=engine,
                              engine_options={"spark": {"session": spark}})
            try:
                session.bind_private("t", path, schema)
                if declared is not None:
                    session.run(f"private t: {declared}")
                frame = session.interpreter.globals.lookup("t").frame
                output.append(("ok", [tuple(_plain(v) for v in row) for row in frame.itertuples(index=False)]))
            except (DataError, JostleError) as error:
                output.append(("error", str(error)))
            finally:
                session.close()
        outcomes[engine] = output
    assert outcomes["pandas"][0][0] == "ok" and len(outcomes["pandas"][0][1]) == 3, outcomes["pandas"]
    assert outcomes["pandas"][2][0] == "error", outcomes["pandas"]
    assert outcomes["pandas"] == outcomes["duckdb"] == outcomes["spark"]
    for label in SPARK_CANNOT_READ:  # a located refusal of the file (its schema decides), not a crash
        session = Session(budget=1, ledger_path=":memory:", output=io.StringIO(), engine="spark",
                          engine_options={"spark": {"session": spark}})
        with pytest.raises(DataError, match="Spark cannot read the Parquet file"):
            session.bind_private("t", parquet_file(tmp_path, label))
        session.close()
