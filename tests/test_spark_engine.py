"""Tables on Spark (issue 14): the same program's answers as in memory and on DuckDB, and no row
can make a query fail, ANSI mode or not.

One local Spark session (local[2]) serves the whole module; each engine derives its own session
from it, as it would from a user's. Skipped, with the reason, where pyspark or Java is missing.
"""

from __future__ import annotations

import hashlib
import io
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from tests.conftest import local_spark
from jostle.data.engine.spark_engine import SESSION_SQL_CONF, spark_unavailable

REASON = spark_unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"Spark cannot run here: {REASON}")

duckdb = pytest.importorskip("duckdb")

from hypothesis import HealthCheck, given, settings  # noqa: E402

from jostle.data.engine.duckdb_engine import DuckDBEngine  # noqa: E402
from jostle.data.engine.expressions import NotCompilable  # noqa: E402
from jostle.data.engine.fingerprint import engine_digest, frame_digest  # noqa: E402
from jostle.data.engine.relation import Relation  # noqa: E402
from jostle.data.engine.spark_engine import SparkEngine  # noqa: E402
from jostle.data.schema import Categorical, DataError, Numeric, Schema, read_csv_file  # noqa: E402
from jostle.diagnostics.errors import JostleError, UsageError  # noqa: E402
from jostle.language.binding import csv_header  # noqa: E402
from jostle.language.values import Table  # noqa: E402
from jostle.session import Session  # noqa: E402
from tests.test_engine_expressions import SCHEMA as EDGE_SCHEMA  # noqa: E402
from tests.test_engine_expressions import STEP_DOMAINS, _cells, _edge_frame, expression_trees  # noqa: E402
from tests.test_engine_expressions import row_function_program  # noqa: E402
from tests.test_engines import PROGRAM, SCHEMA, _frame  # noqa: E402

ANSI = "spark.sql.ansi.enabled"


@pytest.fixture(scope="module")
def spark() -> Any:
    """The module's Spark session: local, two threads, two shuffle partitions, no UI."""
    session = local_spark()
    yield session
    session.stop()


@pytest.fixture(scope="module")
def engine(spark: Any) -> SparkEngine:
    return SparkEngine(session=spark)


def _run(data: Any, engine: str, spark: Any = None, program: str = PROGRAM, ledger: str = ":memory:",
         schema: Any = SCHEMA) -> tuple[str, Session]:
    output = io.StringIO()
    options = {"spark": {"session": spark}} if spark is not None else {}
    session = Session(budget=100, seed=7, ledger_path=ledger, output=output, engine=engine, engine_options=options)
    session.bind_private("t", data, schema)
    session.run(program)
    return output.getvalue(), session


def _parquet(frame: pd.DataFrame, path: Path) -> Path:
    connection = duckdb.connect()
    connection.register("f", frame)
    connection.execute(f"COPY f TO '{path}' (FORMAT parquet)")
    return path


# ---------------------------------------------------------------- the same program, every engine
def test_the_same_program_gives_the_same_output_in_memory_on_duckdb_and_on_spark(spark: Any):
    frame = _frame(600)
    expected, _ = _run(frame, "pandas")
    assert expected.count("\n") == 7
    assert _run(frame, "duckdb")[0] == expected
    output, session = _run(frame, "spark", spark)
    assert session.interpreter.bound_tables["t"].relation.engine.name == "spark"
    assert output == expected  # (CSV files on Spark: the conformance and ANSI tests below)


def test_exact_sums_on_spark_equal_the_exact_sum_of_the_values_including_subnormal_and_huge(engine: SparkEngine):
    from jostle.language.sensitivity import exact_sum
    from jostle.language.tables import _engine_sum

    values = np.array([1e-300, 5e-324, -5e-324, 2.2250738585072014e-308, 3.0, -2.5, 1e300, -1e300, 999999999999.9999,
                       -1e12, 0.1, -0.0, 2.0 ** 35 + 0.5, -7.25e-5, 2.0 ** 39 + 2.0 ** -13, 1 / 3] * 200)
    schema = Schema.of({"v": Numeric(-1e12, 1e12)})  # the largest bounds a schema may declare
    relation = engine.bind(engine.raw_frame(pd.DataFrame({"v": values})), schema, "v", strict=True, materialise=True)
    assert _engine_sum(Table(relation, schema, True, "v", None, None), "v") == exact_sum(np.clip(values, -1e12, 1e12))


def test_the_cli_runs_a_program_on_spark_with_a_master(spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture):
    from jostle.cli import main

    frame = _frame(300)
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    program = tmp_path / "p.jst"
    program.write_text('private t: {age: numeric(0, 100), region: categorical(["a", "b", "c", "d", "e"])}\n'
                       'print(laplace(count(where(t, lambda r: r.age > 30)), 1))\nprint(laplace(sum(t, "age"), 1))\n')
    outputs = []
    for arguments in (["--engine", "pandas"], ["--engine", "spark", "--master", "local[2]"]):
        code = main(["run", str(program), "--budget", "5", "--seed", "3", "--ledger-db", ":memory:",
                     "--data", f"t={path}", *arguments])
        captured = capsys.readouterr()
        assert code == 0, captured.err
        outputs.append(captured.out)
    assert outputs[0].count("\n") == 2 and outputs[0] == outputs[1]


# ---------------------------------------------------------------- one fingerprint however the data arrives
AWKWARD = pd.DataFrame({
    "age": [1.5, -0.0, 1e300, 5e-324, np.nan, 3.0, 2.0 ** 60, -7.0, 0.1, 42.0],
    "n": np.array([3, -1, 0, 2 ** 40, 7, 1, 2, 3, 4, 5], dtype=np.int64),
    "flag": [True, False, True, True, False, False, True, False, True, True],
    "text": ["a", " 1_000 ", "inf", "\u00a0b\u3000", None, "NA", "1e5", "-nan", "x,y", "é"],
})


def test_the_fingerprint_on_spark_equals_duckdbs_for_csv_dataframe_and_parquet_and_a_neighbour_differs(
        engine: SparkEngine, tmp_path: Path):
    frame = _frame(400)
    csv = tmp_path / "x.csv"
    frame.to_csv(csv, index=False)
    parquet = _parquet(frame, tmp_path / "x.parquet")
    reference = frame_digest(frame, "row")
    assert engine_digest(engine, engine.raw_csv(csv, csv_header(csv)), "row") == reference
    assert engine_digest(engine, engine.raw_frame(frame), "row") == reference
    assert engine_digest(engine, engine.raw_parquet(parquet), "row") == reference
    assert engine_digest(engine, engine.raw_frame(frame.iloc[1:]), "row") != reference  # a neighbour
    # typed cells whose text differs by engine (doubles, -0.0, subnormals), texts DuckDB reads as numbers
    awkward_csv = tmp_path / "awkward.csv"
    AWKWARD.to_csv(awkward_csv, index=False)
    duck = DuckDBEngine()
    for raw in (engine.raw_frame(AWKWARD), engine.raw_parquet(_parquet(AWKWARD, tmp_path / "a.parquet"))):
        assert engine_digest(engine, raw, "row") == frame_digest(AWKWARD, "row")
    assert engine_digest(engine, engine.raw_csv(awkward_csv, csv_header(awkward_csv)), "row") == \
        engine_digest(duck, duck.raw_csv(awkward_csv, csv_header(awkward_csv)), "row")
    # Spark's MD5 halves are DuckDB's md5_number_upper/lower: the digest's two 8-byte halves, little-endian
    from jostle.data.engine.fingerprint import _md5_halves

    upper, lower = _md5_halves("'jostle'", "spark")
    digest = hashlib.md5(b"jostle").digest()
    assert [int(v) for v in engine.query(f"SELECT {upper}, {lower}")[0]] == \
        [int.from_bytes(digest[:8], "little"), int.from_bytes(digest[8:], "little")]


def test_the_durable_ledger_keys_the_data_the_same_way_on_spark(spark: Any, tmp_path: Path):
    """The content a curator binds is one key on Spark as in memory (a DataFrame, CSV, Parquet):
    under another name the same rows are refused at bind (a re-export cannot restart a budget)."""
    from jostle.privacy.ledger_store import EqualData, LedgerStore

    frame = _frame(300)
    csv = tmp_path / "t.csv"
    frame.to_csv(csv, index=False)
    ledger = str(tmp_path / "ledger.sqlite")
    for data, route in ((frame, "pandas"), (csv, "spark"), (_parquet(frame, tmp_path / "t.parquet"), "spark")):
        session = Session(budget=50, ledger_path=ledger, engine=route, engine_options={"spark": {"session": spark}})
        session.bind_private("t", data, SCHEMA)
        with pytest.raises(EqualData):
            session.bind_private("u", data, SCHEMA)
        session.close()
    frame.iloc[1:].to_csv(csv, index=False)  # a neighbour
    session = Session(budget=50, ledger_path=ledger, engine="spark", engine_options={"spark": {"session": spark}})
    session.bind_private("u", csv, SCHEMA)
    session.close()
    with LedgerStore(ledger) as store:
        assert store._db.execute("SELECT COUNT(DISTINCT content) FROM contents").fetchone()[0] == 2


# ---------------------------------------------------------------- CSV records and conformance
# Records all three readers take alike (the last lines: Python's float() grammar, a doubled quote, a '#')
COMMON = (b"age,region\n1,a\n2,b,extra\n3\n\n 4, c\n5,\xff\n6,\"e\"\n7,zz\nNA,a\n\"8\",\"multi\nline\"\n"
          b"10,\"\"\n1_0,d\n 12 ,\"a\"\"b\"\n13,#c\n")
# and what DuckDB reads otherwise (one empty field too many, a lone ""), and an Arabic-Indic 3
MESSY = COMMON + b"9,b,\n\"\"\n\xd9\xa3,a\n"


def _reads_as_python_reads_it(engine: SparkEngine, path: Path) -> None:
    """Spark's records of `path` are Jostle's reader's, and with its 3 unusable records a strict
    read (the curator's) leaves the file to Jostle's reader, which refuses it."""
    python = read_csv_file(path).frame
    rows = engine.query(f"SELECT * FROM {engine.raw_csv(path, csv_header(path))}")

    def cell(value: Any) -> Any:
        return None if value is None or value == "" else value

    assert [tuple(cell(v) for v in row) for row in rows] == \
        [tuple(cell(v) for v in row) for row in python.itertuples(index=False)]
    assert engine.raw_csv(path, csv_header(path), strict=True) is None
    assert len(read_csv_file(path).problems) == 3


def test_spark_reads_a_messy_csv_as_python_reads_it(engine: SparkEngine, tmp_path: Path):
    path = tmp_path / "messy.csv"
    path.write_bytes(MESSY)
    _reads_as_python_reads_it(engine, path)


# Without any quote: read across tasks (no multiLine), which must give the same records
UNQUOTED = (b"age,region\r\n1,a\r\n2,b,extra\n3\n\n 4, c\n5,\xff\n7,zz\r\nNA,a\n10,\n1_0,d\n 12 ,ab\n13,#c\n"
            b"9,b,\n\xd9\xa3,a\n \n14,e")


def test_spark_reads_a_csv_without_quotes_across_tasks_as_python_reads_it(engine: SparkEngine, tmp_path: Path):
    path = tmp_path / "unquoted.csv"
    path.write_bytes(UNQUOTED * 1 + b"\n" + b"\n".join(b"%d,a" % i for i in range(2000)) + b"\n")
    _reads_as_python_reads_it(engine, path)


def test_conformance_drops_and_refuses_the_same_rows_as_duckdb_and_in_memory(spark: Any, tmp_path: Path):
    path = tmp_path / "messy.csv"
    path.write_bytes(COMMON)
    schema = '{age: numeric(0, 100, integer=true), region: categorical(["a", "b", "c", "d", "e", "a\\"b"])}'
    program = (f'x = load("{path}", {schema})\n'
               'print(laplace(count(x), 1))\nprint(laplace(histogram(x, "region"), 1))\n'
               'print(laplace(sum(x, "age"), 1))\n')
    outputs = [_run(_frame(10), route, spark, program)[0] for route in ("pandas", "duckdb", "spark")]
    assert outputs[0].count("\n") == 3 and outputs[0] == outputs[1] == outputs[2]
    refused = tmp_path / "refused.csv"
    refused.write_text("age,region\n1,a\n 2.5,b\nx,b\n4,c\n")
    messages = []
    for route in ("pandas", "duckdb", "spark"):
        with pytest.raises(DataError) as error:
            _run(refused, route, spark, "print(1)")
        messages.append(str(error.value))
    assert "row 3" in messages[0] and messages[0] == messages[1] == messages[2]


def test_spark_reads_numbers_and_missing_cells_in_text_by_pythons_rules(spark: Any, tmp_path: Path):
    """The curator's CSV, conformed in Spark SQL: float() and str.strip() as the in-memory route
    applies them (Unicode digits and spaces, underscores; not '+-1' or 'nan(1)', which DuckDB's and
    Java's casts would read; not '0x10' or '1.5d', which Java's would)."""
    cells = ["\u0663", " \u0661\u0662 ", "1_000", "+-1", "nan(1)", "1e400", "\u00a07\u3000", "\x1c2", "NA\u2028",
             "\t3\n", "0x10", "1.5d", "-0", "\u2003", "inf", "\u0661\u066b\u0665", " 7", "3.0"]
    path = tmp_path / "cells.csv"
    pd.DataFrame({"v": cells, "k": cells}).to_csv(path, index=False)
    schema = Schema.of({"v": Numeric(-1e12, 1e12, default=-1), "k": Categorical((3, "1_000", 7, "a"), default="a")})
    program = 'print(laplace(sum(t, "v"), 1))\nprint(laplace(histogram(t, "k"), 1))\n'
    expected = _run(path, "pandas", program=program, schema=schema)[0]
    assert expected.count("\n") == 2 and _run(path, "spark", spark, program, schema=schema)[0] == expected


# ---------------------------------------------------------------- no row makes a query raise
ADVERSARIAL = pd.DataFrame({
    "x": [0.0, -0.0, 1e308, -1e308, 5e-324, -3.0, 2.5, 1.0, -1.0, 7.0, 0.5, 1e-300] * 3,
    "y": [0.0, -0.0, 0.0, 1e-308, -1.0, 0.0, 1e308, -0.0, 3.0, 0.0, -2.0, 1e300] * 3,
    "s": ["a", "b", "1e999", "", "nan", "b", "x\u00a0", "-0", "a", "1_0", "inf", "a"] * 3,
})
ADVERSARIAL_SCHEMA = Schema.of({"x": Numeric(-1e12, 1e12), "y": Numeric(-1e12, 1e12),
                                "s": Categorical(("a", "b", "x"), default="x")})
ADVERSARIAL_PROGRAM = '''
d = derive(t, "q", lambda r: r.x / r.y + r.y // r.x - r.x % r.y, numeric(-1e12, 1e12))
d2 = derive(d, "w", lambda r: sqrt(r.x) + r.x ** 0.5 + 1 / r.x + r.y ** (-1), numeric(-10, 10, default=3))
d3 = derive(d2, "k", lambda r: round(r.x * 1e300, 2) + round(r.y / 3), numeric(-1e12, 1e12, integer=true))
d4 = where(d3, lambda r: r.q > 0 or r.q < 0 or r.x // r.y == 0 or r.s == "b")
print(laplace(count(d4), 1))
print(laplace(sum(d4, "w"), 1))
print(laplace(sum(d4, "k"), 1))
print(laplace(histogram(d4, "s"), 1))
'''


def test_no_row_makes_a_query_raise_with_ansi_mode_on(spark: Any, tmp_path: Path):
    user = spark.newSession()
    user.conf.set(ANSI, "true")  # Spark 4's default: a user's session in ANSI mode
    expected, _ = _run(ADVERSARIAL, "pandas", program=ADVERSARIAL_PROGRAM, schema=ADVERSARIAL_SCHEMA)
    assert expected.count("\n") == 4
    path = tmp_path / "adversarial.csv"
    ADVERSARIAL.to_csv(path, index=False)
    recorded: list[tuple[SparkEngine, str]] = []
    original = SparkEngine.query

    def record(self: SparkEngine, sql: str, parameters: list | None = None) -> list[tuple]:
        recorded.append((self, sql))
        return original(self, sql, parameters)

    SparkEngine.query = record
    try:
        # From a CSV file: conformance, the fingerprint (a durable ledger) and the plan run as SQL.
        output, session = _run(path, "spark", user, ADVERSARIAL_PROGRAM, str(tmp_path / "ledger.sqlite"),
                               ADVERSARIAL_SCHEMA)
        assert output == expected
    finally:
        SparkEngine.query = original
    assert user.conf.get(ANSI) == "true"  # the engines worked in sessions of their own
    engines = {engine for engine, _ in recorded}
    assert len(engines) == 1 and all(engine.session.conf.get(ANSI) == "false" for engine in engines)
    # The guards alone suffice: every query the engines ran, again with ANSI mode on.
    assert len(recorded) >= 6
    for engine in engines:
        engine.session.conf.set(ANSI, "true")
    try:
        for engine, sql in recorded:
            try:
                engine.session.sql(sql).collect()
            except Exception as error:  # noqa: BLE001 - any Spark error is the failure reported
                raise AssertionError(f"ANSI mode: {str(error).splitlines()[0]}\n{sql[:2000]}") from None
    finally:
        for engine in engines:
            engine.session.conf.set(ANSI, "false")


class EdgeTables:
    """The edge table of tests/test_engine_expressions.py in memory (`t`) and on Spark (`e`)."""

    def __init__(self, engine: SparkEngine) -> None:
        self.engine = engine
        self.session = Session(budget=100, seed=7, ledger_path=":memory:", output=io.StringIO(), engine="pandas")
        self.session.bind_private("t", _edge_frame(), EDGE_SCHEMA)
        bound = self.session.interpreter.bound_tables["t"]
        self.relation = engine.store_conformed(bound.frame, EDGE_SCHEMA)
        self.session.interpreter.globals.define("e", Table(self.relation, EDGE_SCHEMA, True, "e", bound.node,
                                                           bound.origin))

    def run(self, program: str) -> tuple[str, Any]:
        try:
            self.session.run(program)
        except JostleError as error:
            return "error", str(error)
        return "ok", self.session.interpreter.globals.lookup("d")


def _batched(engine: SparkEngine, queries: list[tuple[int, str]], chunk: int = 25) -> list[tuple]:
    """Rows of many (case, SELECT) queries, run as a few UNION ALL queries."""
    rows = []
    for start in range(0, len(queries), chunk):
        part = queries[start:start + chunk]
        rows += engine.query(" UNION ALL ".join(f"SELECT {k} AS k, * FROM ({sql}) AS q{k}" for k, sql in part))
    return rows


def test_compiled_row_functions_agree_with_numpy_on_spark(engine: SparkEngine):
    tables = EdgeTables(engine)
    cases: list[tuple[str, str, Any]] = []  # (kind, template, in-memory table) of compiled steps
    counts: Counter = Counter()

    @settings(max_examples=60, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(case=row_function_program())
    def collect(case: tuple[str, str]) -> None:
        step, template = case
        in_memory, on_engine = tables.run(template.replace("TABLE", "t")), tables.run(template.replace("TABLE", "e"))
        if "error" in (in_memory[0], on_engine[0]):
            assert in_memory == on_engine, template
            counts["error"] += 1
        elif on_engine[1].relation.steps:  # compiled (a step run in memory is stored back as a fresh table)
            cases.append((step, template, in_memory[1], on_engine[1].relation))

    collect()
    assert len(cases) >= 12, counts  # (most programs fail alike on both, or run in memory)
    queries = []
    for k, (step, _, _, relation) in enumerate(cases):
        value = "CAST(NULL AS DOUBLE)" if step == "where" else "CAST(`v` AS DOUBLE)"
        queries.append((k, f"SELECT CAST(`id` AS DOUBLE) AS id, {value} AS v FROM ({relation.sql()}) AS s"))
    on_spark: dict[int, dict[float, Any]] = {}
    for k, row_id, value in _batched(engine, queries):
        on_spark.setdefault(k, {})[row_id] = value
    for k, (step, template, expected, relation) in enumerate(cases):
        frame = expected.frame
        got = on_spark.get(k, {})
        assert sorted(got) == sorted(frame["id"].tolist()), template
        if step == "where":
            continue
        spec = relation.schema["v"]
        values = [got[i] for i in frame["id"].tolist()]
        if isinstance(spec, Categorical):
            values = [spec.values[int(code)] for code in values]
        assert _cells(pd.Series(values, dtype=object)) == _cells(frame["v"]), f"{template}\n{relation.sql()}"


def test_compiled_sql_raises_on_no_row_under_ansi_mode(engine: SparkEngine):
    tables = EdgeTables(engine)
    queries: list[tuple[int, str]] = []

    @settings(max_examples=160, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(tree=expression_trees(), domain_index=st_indices(len(STEP_DOMAINS)), where=st_booleans())
    def collect(tree: Any, domain_index: int, where: bool) -> None:
        step = ("where", tree) if where else ("derive", "v", tree, STEP_DOMAINS[domain_index])
        try:
            sql = Relation(engine, tables.relation.source, EDGE_SCHEMA, (step,)).sql()
        except NotCompilable:
            return
        queries.append((len(queries), f"SELECT max(hash(*)) AS h FROM ({sql}) AS s"))  # every column computed

    collect()
    assert len(queries) >= 30  # (the rest: shapes the compiler refuses)
    engine.session.conf.set(ANSI, "true")
    try:
        assert len(_batched_raw(engine, queries)) == len(queries)
    finally:
        engine.session.conf.set(ANSI, "false")


def st_indices(n: int) -> Any:
    from hypothesis import strategies as st

    return st.integers(0, n - 1)


def st_booleans() -> Any:
    from hypothesis import strategies as st

    return st.booleans()


def _batched_raw(engine: SparkEngine, queries: list[tuple[int, str]], chunk: int = 40) -> list:
    """`_batched` straight on the engine's session (its ANSI setting as it is); a failing chunk is
    run query by query to name the SQL that raised."""
    rows = []
    for start in range(0, len(queries), chunk):
        part = queries[start:start + chunk]
        union = " UNION ALL ".join(f"SELECT {k} AS k, * FROM ({sql}) AS q{k}" for k, sql in part)
        try:
            rows += engine.session.sql(union).collect()
        except Exception:  # noqa: BLE001 - find the one that raised
            for _, sql in part:
                try:
                    engine.session.sql(sql).collect()
                except Exception as error:  # noqa: BLE001
                    raise AssertionError(f"ANSI mode: {str(error).splitlines()[0]}\n{sql}") from None
            raise
    return rows


# ---------------------------------------------------------------- sessions the engine refuses
class _ConnectLike:
    """A session that cannot derive one of its own (as a Spark Connect session), in ANSI mode."""

    class conf:  # noqa: N801 - the attribute Spark's sessions have
        @staticmethod
        def get(key: str, default: str | None = None) -> str | None:
            return "true" if key == ANSI else default

    def newSession(self) -> Any:  # noqa: N802 - Spark's name
        raise NotImplementedError("no new sessions here")


def test_a_session_in_ansi_mode_the_engine_cannot_leave_is_refused_with_a_clear_error():
    with pytest.raises(UsageError, match="ANSI mode"):
        SparkEngine(session=_ConnectLike())


def test_the_reason_spark_cannot_run_names_java(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("JAVA_HOME", "/nonexistent")
    monkeypatch.setenv("PATH", "/nonexistent")
    assert "Java" in spark_unavailable()
    assert set(SESSION_SQL_CONF) >= {ANSI}
