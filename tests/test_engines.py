"""Tables on DuckDB (issue 14, first part): the same answers as in memory, exact sums, one fingerprint.

The engine route is not yet chosen by binding (Session/CLI); these tests put a bound table on
DuckDB by hand and check that every step of the plan and every aggregate gives exactly what
the in-memory path gives, with the same seed.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

duckdb = pytest.importorskip("duckdb")

from jostle.data.engine.duckdb_engine import DuckDBEngine  # noqa: E402
from jostle.data.engine.fingerprint import engine_digest, frame_digest  # noqa: E402
from jostle.data.schema import Categorical, Numeric, Schema, read_csv  # noqa: E402
from jostle.language.binding import csv_header  # noqa: E402
from jostle.language.values import Table  # noqa: E402
from jostle.session import Session  # noqa: E402

SCHEMA = Schema.of({"age": Numeric(0, 100), "region": Categorical(tuple("abcde"))})
PROGRAM = '''
a = where(t, lambda r: r.age >= 30 and r.region != "e")
d = derive(a, "x", lambda r: sqrt(r.age) / 3 if r.region in ["a", "b"] else -1, numeric(-1, 5))
d2 = derive(d, "y", lambda r: "hi" if r.x > 1.5 else "lo", categorical(["hi", "lo"], default="lo"))
d3 = derive(d2, "z", lambda r: round(r.age % 7 + r.age // 9 - abs(r.x) ** 2, 1), numeric(-100, 100, integer=true))
print(laplace(count(d3), 1))
print(laplace(sum(d3, "x"), 1))
print(laplace(sum(d3, "z"), 1))
print(laplace(histogram(d3, ["y", "region"]), 1))
print(laplace(count(where(d3, lambda r: not (r.y == "hi") or r.z < 3)), 1))
print(laplace(mean(t.bin("age", [0, 10, 50, 100], name="band"), "age"), 1))
parts = partition(t, "region")
print(laplace(count(parts[1]), 1))
'''


def _frame(n: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"age": rng.integers(0, 100, n) + rng.random(n), "region": rng.choice(list("abcde"), n)})


def _run(frame: pd.DataFrame, on_engine: bool) -> str:
    output = io.StringIO()
    session = Session(budget=100, seed=7, ledger_path=":memory:", output=output)
    session.bind_private("t", frame, SCHEMA)
    if on_engine:
        bound = session.interpreter.bound_tables["t"]
        engine = DuckDBEngine()
        relation = engine.bind(engine.raw_frame(frame), SCHEMA, "t", strict=True, materialise=True)
        table = Table(relation, bound.schema, True, "t", bound.node, bound.origin)
        session.interpreter.bound_tables["t"] = table
        session.interpreter.globals.define("t", table)
    session.run(PROGRAM)
    return output.getvalue()


def test_the_same_program_gives_the_same_answers_in_memory_and_on_duckdb():
    frame = _frame()
    in_memory, on_duckdb = _run(frame, False), _run(frame, True)
    assert in_memory.count("\n") == 7
    assert in_memory == on_duckdb


def test_exact_sum_on_duckdb_equals_the_exact_sum_in_memory_including_tiny_and_huge_values():
    from jostle.language.sensitivity import exact_sum
    from jostle.language.tables import _engine_sum

    values = np.array([1e-300, 5e-324, 3.0, -2.5, 1e11, 0.1, -0.0, 2.0 ** 35 + 0.5, -7.25e-5] * 50)
    frame = pd.DataFrame({"v": values})
    schema = Schema.of({"v": Numeric(-1e12, 1e12)})
    engine = DuckDBEngine()
    relation = engine.bind(engine.raw_frame(frame), schema, "v", strict=True, materialise=True)
    table = Table(relation, schema, True, "v", None, None)
    assert _engine_sum(table, "v") == exact_sum(values)


@pytest.mark.parametrize("lo, hi", [(0, 100), (-1, 1), (0, 1e-300), (-1e12, 5.0), (0.5, 0.75), (0, 0)])
def test_the_fast_exact_sums_split_on_the_bounds_grid_equal_the_exact_sum(lo: float, hi: float):
    """DuckDBEngine.sum_parts and tables._bounded_exact_sum split each value on grids set by the
    column's public bound; every path (the split alone, the split and the scan of residuals
    below it, the exponent rule alone for a tiny bound) gives exact_sum's value and type."""
    from jostle.language.sensitivity import exact_sum
    from jostle.language.tables import _bounded_exact_sum, _engine_sum

    rng = np.random.default_rng(3)
    n = 2000
    values = np.clip(np.concatenate([rng.uniform(lo, hi, n), np.round(rng.uniform(lo, hi, n), 2),
                                     rng.uniform(-1, 1, n) * 10.0 ** rng.integers(-320, 0, n),
                                     [lo, hi, 0.0, -0.0]]), lo, hi)  # within the bound, as conformed
    schema = Schema.of({"v": Numeric(lo, hi)})
    engine = DuckDBEngine()
    relation = engine.bind(engine.raw_frame(pd.DataFrame({"v": values})), schema, "v", strict=True, materialise=True)
    expected = exact_sum(values)
    assert _engine_sum(Table(relation, schema, True, "v", None, None), "v") == expected
    fast = _bounded_exact_sum(values, schema["v"])
    assert fast == expected and type(fast) is type(expected)
    # without the tiny values: every row splits on the first grid (the one-scan path)
    plain = values[:2 * n]
    relation = engine.bind(engine.raw_frame(pd.DataFrame({"v": plain})), schema, "v", strict=True, materialise=True)
    assert _engine_sum(Table(relation, schema, True, "v", None, None), "v") == exact_sum(plain)


def test_fingerprint_is_the_same_by_csv_dataframe_and_parquet_and_differs_on_a_neighbour(tmp_path: Path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"age": rng.integers(0, 100, 50).astype(float) + 0.25,
                          "region": rng.choice(list("abcde"), 50), "n": rng.integers(0, 5, 50)})
    path = tmp_path / "x.csv"
    frame.to_csv(path, index=False)
    engine = DuckDBEngine()
    by_csv = engine_digest(engine, engine.raw_csv(path, csv_header(path)), "row")
    parquet = tmp_path / "x.parquet"
    engine.connection.execute(f"COPY (SELECT * FROM read_csv('{path}')) TO '{parquet}' (FORMAT parquet)")
    by_parquet = engine_digest(engine, engine.raw_parquet(parquet), "row")
    shuffled = frame.sample(frac=1, random_state=1)[["n", "region", "age"]]
    assert by_csv == frame_digest(frame, "row") == frame_digest(read_csv(path), "row") == by_parquet \
        == frame_digest(shuffled, "row")
    assert frame_digest(frame.iloc[1:], "row") != by_csv
    assert frame_digest(pd.concat([frame, frame.iloc[:1]]), "row") != by_csv


def test_a_row_function_the_engine_cannot_run_is_run_in_memory_with_the_same_answers():
    frame = _frame(500)
    program = ('d = derive(t, "w", lambda r: r.region * 2, categorical(["aa", "bb"], default="bb"))\n'
               'print(laplace(count(where(d, lambda r: r.region * 2 == "aa" or r.w == "aa")), 1))\n'
               'print(laplace(histogram(d, "w"), 1))\n')
    outputs = []
    for on_engine in (False, True):
        output = io.StringIO()
        session = Session(budget=10, seed=1, ledger_path=":memory:", output=output)
        session.bind_private("t", frame, SCHEMA)
        if on_engine:
            bound = session.interpreter.bound_tables["t"]
            engine = DuckDBEngine()
            relation = engine.bind(engine.raw_frame(frame), SCHEMA, "t", strict=True, materialise=True)
            table = Table(relation, bound.schema, True, "t", bound.node, bound.origin)
            session.interpreter.globals.define("t", table)
        session.run(program)
        outputs.append(output.getvalue())
        if on_engine:  # the steps that did not compile were stored back on the engine
            assert session.interpreter.globals.lookup("d").relation is not None
    assert outputs[0].count("\n") == 2 and outputs[0] == outputs[1]


def test_the_staged_fingerprint_query_gives_each_cell_the_canonical_text_of_cell_text():
    """engine_digest computes the cells in stages (each log2 and parse once); cell_text, one
    expression per cell, is the module's definition: both give each row the same text, so the
    same digest, on text, numeric and boolean cells of every kind."""
    from jostle.data.engine.fingerprint import _md5_halves, cell_text, finish
    from jostle.data.engine.fingerprint import engine_digest_v2 as engine_digest
    from jostle.data.engine.expressions import quote

    texts = ["", " ", "na", "NaN", "null", "None", "true", "FALSE", "3", "3.00", " 3 ", "-0", "0", "1e308", "1e400",
             "-inf", "Infinity", "5e-324", "2.5e-310", "0.1", "abc", " a b ", "\u00e9", "1_000", "0x10", None] * 2
    rng = np.random.default_rng(5)
    numbers = np.concatenate([[0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, 1e308, 0.1, 3.0, -2.5],
                              rng.normal(size=16) * 10.0 ** rng.integers(-300, 300, 16)]).tolist() * 2
    frame = pd.DataFrame({"t": texts, "x": numbers, "b": [True, False, None, True] * 13,
                          "i": pd.array(list(range(-26, 26)), dtype="Int64")})
    engine = DuckDBEngine()
    raw = engine.raw_frame(frame)
    types = engine.raw_types(raw)
    columns = sorted(frame.columns)
    cells = " || chr(31) || ".join(cell_text(quote(c), types[c]) for c in columns)
    upper, lower = _md5_halves("r", "duckdb")
    rows, high, low = engine.query(f"SELECT count(*), sum({upper}), sum({lower}) FROM (SELECT {cells} AS r FROM {raw})")[0]
    assert engine_digest(engine, raw, "row") == finish(columns, int(rows), int(high), int(low), "row")
    assert engine_digest(engine, raw, "row") != engine_digest(engine, engine.raw_frame(frame.iloc[1:]), "row")
