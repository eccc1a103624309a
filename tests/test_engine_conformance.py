"""Schema conformance in memory and on DuckDB agree cell by cell (issue 14).

`jostle.data.schema.conform` (the in-memory route, Python's rules) and its SQL form
(jostle.data.engine.conform, run by `DuckDBEngine.bind`) must store the same rows from the same
raw cells, drop the same rows under a program's schema and refuse the same first row, column and
value under a curator's. Raw cells are random texts (spaces of every kind, 'NA', 'nan', '',
numbers as text in Python's grammar and outside it, Unicode digits, '1e400', booleans as text)
in CSV files and typed cells (DOUBLE, BIGINT, BOOLEAN, VARCHAR, NULL) in Parquet files, bound
through `Session.bind_private` on each route. (A DataFrame is conformed by the in-memory rules
on every route, jostle.data.engine.duckdb_engine.DuckDBEngine._bind.) Derandomized examples.
"""

from __future__ import annotations

import io
import math
from collections import Counter
from typing import Any

import pytest

duckdb = pytest.importorskip("duckdb")

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from jostle.data.schema import Categorical, DataError, Numeric, Schema  # noqa: E402
from jostle.diagnostics.errors import JostleError  # noqa: E402
from jostle.session import Session  # noqa: E402
from tests.test_engine_expressions import first_difference  # noqa: E402


NUMBER_TEXTS = ["NA", "nan", "NaN", "null", "NULL", "", " ", "1e400", "-1e400", "inf", "-inf", "Infinity", " 1_000 ",
                "0x10", "１２", "1,5", "+-1", "-nan", "nan(1)", "\t3\n", "\u00a03", "abc", "True", "-0", " 2.5 ",
                "1e-400", "5e-324", "007", "1.", ".5", "1e5", "+3", "None", "\u20283", "\x1c2", "١٫٥", " ١٢ ", "1e+-5",
                "\u3000NA", "\x1cNA", "\ta\u2028", "\x1fb", "2.5\x85", "Inf", "+nan", "4_2.5_0e1_0", "1__0"]
CATEGORY_POOL = ["a", "b", "A b", "1", "2.5", "True", "é", "NA", " a ", 0, 1, 2, 2.5, -3, 1e-300, True, False]


def _jostle_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)


def _jostle_spec(spec: Any) -> str:
    """A column's domain as a Jostle program declares it."""
    default = f", default={_jostle_value(spec.default)}" if spec.default is not None else ""
    if isinstance(spec, Numeric):
        return f"numeric({spec.lo!r}, {spec.hi!r}{default}{', integer=true' if spec.integer else ''})"
    return f"categorical([{', '.join(map(_jostle_value, spec.values))}]{default})"


@st.composite
def column_specs(draw: Any) -> Any:
    if draw(st.booleans()):
        lo, hi = draw(st.sampled_from([(0, 1), (-5, 10), (-1e12, 1e12), (0.5, 2.5), (-1, 0)]))
        integer = draw(st.booleans()) and math.ceil(lo) <= math.floor(hi)
        default = draw(st.sampled_from([None, None, math.ceil(lo), math.floor(hi)] if integer else [None, None, lo, hi]))
        return Numeric(lo, hi, default, integer)
    values = draw(st.lists(st.sampled_from(CATEGORY_POOL), min_size=1, max_size=5, unique_by=lambda v: (v, hash(v))))
    values = list(dict.fromkeys(values))  # no two equal values (True and 1 are one)
    default = draw(st.sampled_from([None, None] + values))
    return Categorical(tuple(values), default)


def raw_cells(storage: str) -> st.SearchStrategy:
    """Raw cells of a CSV ('text': texts or None for an empty cell) or of a typed Parquet column."""
    numbers = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, -0.0, 0.5, 2.5, 1.0, 1e300])
    texts = st.sampled_from(NUMBER_TEXTS) | st.sampled_from(CATEGORY_POOL).map(str) | \
        st.sampled_from(CATEGORY_POOL).map(lambda v: f" {v} ") | numbers.map(repr) | \
        st.text(st.characters(codec="utf-8", exclude_characters="\r\n\x00"), max_size=3)
    cells = {"text": texts, "double": numbers, "bigint": st.integers(-10, 10) | st.integers(-2 ** 63, 2 ** 63 - 1),
             "boolean": st.booleans()}[storage]
    return cells | st.none()


@st.composite
def raw_tables(draw: Any, kind: str) -> tuple[dict[str, tuple[str, list]], Schema]:
    """Raw columns ({name: (SQL type, cells)}) of a CSV or Parquet file, and a schema for them."""
    n = draw(st.integers(1, 6))
    columns, specs = {}, {}
    for k in range(draw(st.integers(1, 3))):
        storage = "text" if kind == "csv" else draw(st.sampled_from(["text", "double", "bigint", "boolean"]))
        columns[f"c{k}"] = (storage, draw(st.lists(raw_cells(storage), min_size=n, max_size=n)))
        specs[f"c{k}"] = draw(column_specs())
    return columns, Schema.of(specs)


def _write(columns: dict[str, tuple[str, list]], kind: str, directory: Any) -> Any:
    """The raw columns as a CSV file (text cells, None as an empty cell) or a typed Parquet file."""
    import csv

    n = len(next(iter(columns.values()))[1])
    if kind == "csv":
        path = directory / "t.csv"
        with open(path, "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(list(columns))
            for i in range(n):
                writer.writerow(["" if cells[i] is None else cells[i] for _, cells in columns.values()])
        return path
    path = directory / "t.parquet"
    connection = duckdb.connect()
    connection.execute("CREATE TABLE raw (" + ", ".join(f'"{name}" {storage.upper()}' if storage != "text"
                                                         else f'"{name}" VARCHAR'
                                                         for name, (storage, _) in columns.items()) + ")")
    connection.executemany(f"INSERT INTO raw VALUES ({', '.join('?' for _ in columns)})",
                           [[cells[i] for _, cells in columns.values()] for i in range(n)])
    connection.execute(f"COPY raw TO '{path}' (FORMAT parquet)")
    return path


def _bind(path: Any, schema: Schema, engine: str, curator: bool) -> tuple[str, Any]:
    """('ok', the conformed rows) or ('error', the message), through Session on one route."""
    session = Session(budget=1, ledger_path=":memory:", output=io.StringIO(), engine=engine)
    try:
        if curator:
            session.bind_private("t", path, schema)
        else:
            session.bind_private("t", path)
            declared = ", ".join(f"{name}: {_jostle_spec(spec)}" for name, spec in schema.columns)
            session.run(f"private t: {{{declared}}}\nt2 = t")
        table = session.interpreter.globals.lookup("t")
        assert (table.relation is not None) == (engine == "duckdb")
        return "ok", table.frame
    except (DataError, JostleError) as error:
        return "error", str(error)
    finally:
        session.close()


@settings(max_examples=120, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["csv", "parquet"]), data=st.data(), curator=st.booleans())
def check_conformance(directory: Any, kind: str, data: Any, curator: bool, counts: Counter) -> None:
    columns, schema = data.draw(raw_tables(kind))
    path = _write(columns, kind, directory)
    in_memory = _bind(path, schema, "pandas", curator)
    on_duckdb = _bind(path, schema, "duckdb", curator)
    counts[f"{kind} {'curator' if curator else 'program'} {in_memory[0]}"] += 1
    described = f"{kind} {columns} under {schema.describe()} ({'curator' if curator else 'program'})"
    if in_memory[0] == "error" or on_duckdb[0] == "error":
        # the same refusal: the same table, column, row and value named (the hint may differ)
        refusal = lambda outcome: outcome[1].split(" (hint: ")[0] if outcome[0] == "error" else "rows"  # noqa: E731
        assert refusal(in_memory) == refusal(on_duckdb), \
            f"{described}\nin memory: {refusal(in_memory)}\non duckdb: {refusal(on_duckdb)}"
        return
    problem = first_difference(in_memory[1], on_duckdb[1])
    assert problem is None, f"{described}\n{problem}"


def test_conformance_in_memory_and_on_duckdb_agree(tmp_path: Any):
    counts: Counter = Counter()
    check_conformance(tmp_path, counts=counts)
    print(dict(counts))
    for kind in ("csv", "parquet"):
        assert counts[f"{kind} curator ok"] >= 5 and counts[f"{kind} curator error"] >= 5, counts
        assert counts[f"{kind} program ok"] >= 20, counts
