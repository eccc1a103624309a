"""A curator's CSV file reads alike on every route (issue 21, hole 3).

Under `auto` the curator's CSV file goes to DuckDB past `SMALL_TABLE_BYTES` and stays in memory
below, so a file and its neighbour one row smaller can take different readers. Whatever a
program sees must not depend on that: each test binds the same file in memory and on DuckDB (and
on Spark where Java runs: `test_dialects_on_spark`) in one process, with the same seed, and
asserts the same outcome: the same error raised to the curator at bind time (before any program
runs), or the same output, end and ledger of the program.

Reproducers (each failed before the fix, jostle/data/engine/csv_dialect.py and the strict reads
of `DuckDBEngine.raw_csv` / `SparkEngine.raw_csv`, called by `binding.file_source`):
  (a) records shaped `34,  "F",  "yes"`: DuckDB kept the quotes, every row took the schema's
      default, and a released histogram moved by the number of rows between neighbours across
      the threshold: test_a_quote_after_spaces_reads_alike_on_both_sides_of_the_threshold;
  (b) a broken record in a curator's CSV bound without a schema (the program declares it)
      failed on DuckDB inside the program, after its first output, and in memory at bind time:
      test_a_broken_record_fails_at_bind_time_on_every_route;
  and the dialect cases of `DIALECTS` (spaces after a closing quote, a quote never closed, a
  field too many, bytes that are not UTF-8, mixed line ends (refused by DuckDB, read in
  memory), blank and white-space lines, NUL characters, long fields, ...), each with the curator's
  schema and with the program's: test_dialects_read_alike_in_memory_and_on_duckdb.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("duckdb")

from tests.conftest import local_spark  # noqa: E402
from jostle import Session  # noqa: E402
from jostle.data.engine.spark_engine import spark_unavailable  # noqa: E402
from jostle.diagnostics.errors import JostleError  # noqa: E402

SEED = 20261123
SCHEMA = {"age": {"type": "numeric", "bounds": [0, 100]},
          "sex": {"type": "categorical", "values": ["F", "M"], "default": "M"},
          "smoker": {"type": "categorical", "values": ["yes", "no"], "default": "no"}}
DECLARED = 'private t: {age: numeric(0, 100), sex: categorical(["F", "M"], default="M"), ' \
           'smoker: categorical(["yes", "no"], default="no")}'
RELEASES = 'print(laplace(histogram(t, "sex"), 1))\nprint(laplace(count(t), 1))\n' \
           'print(laplace(histogram(t.where(lambda r: r.smoker == "yes"), "sex"), 1))\n'


@dataclass(frozen=True)
class Outcome:
    """What binding a file and running a program showed: the curator's error at bind time, or
    everything the program could see."""

    bound: str        # "ok", or the curator's error: its class and message
    output: str = ""
    end: str = ""
    ledger: str = ""
    route: str = field(default="", compare=False)  # where the rows went: "pandas" or an engine's name


def run(path: Path, engine: str, curator_schema: bool, program: str = RELEASES,
        options: dict[str, Any] | None = None) -> Outcome:
    """Bind `path` as `t` on `engine` (with SCHEMA, or without one: the program declares it)
    and run `program` with the fixed seed."""
    output = io.StringIO()
    session = Session(budget=100, seed=SEED, ledger_path=":memory:", engine=engine, output=output,
                      engine_options=options or {})
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                session.bind_private("t", path, SCHEMA if curator_schema else None)
            except JostleError as error:
                return Outcome(f"{type(error).__name__}: {error}")
            raw = session.interpreter.bindings["t"][0] if "t" in session.interpreter.bindings else None
            table = session.interpreter.bound_tables.get("t")
            route = (table.relation.engine.name if table.relation is not None else "pandas") if table is not None \
                else (raw.engine.name if hasattr(raw, "engine") else "pandas")
            try:
                session.run(program if curator_schema else f"{DECLARED}\n{program}")
                end = "ok"
            except JostleError as error:
                end = f"{error.exit_code} {type(error).__name__}: {error.render()}"
        return Outcome("ok", output.getvalue(), end, str(session.ledger), route)
    finally:
        session.close()


def rows(count: int, shape: str = '{age},  "{sex}",  "{smoker}"') -> list[str]:
    """`count` records of the given shape, ages, sexes and smoking varied deterministically."""
    return [shape.format(age=20 + (7 * i) % 60, sex="F" if i % 3 else "M", smoker="yes" if i % 2 else "no")
            for i in range(count)]


def write(path: Path, lines: list[str] | bytes, header: str = "age,sex,smoker") -> Path:
    path.write_bytes(lines if isinstance(lines, bytes) else (header + "\n" + "\n".join(lines) + "\n").encode())
    return path


def histogram_line(outcome: Outcome, line: int = 0) -> list[float]:
    # a released histogram prints with its labels since issue 28: [F: 26.5, M: 31.0]
    return [float(v.rsplit(":", 1)[-1]) for v in outcome.output.splitlines()[line].strip("[]").split(",")]


# ---------------------------------------------------------------- the reproducers
def test_a_quote_after_spaces_reads_alike_on_both_sides_of_the_threshold(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """(a) `34,  "F",  "yes"`: Python's reader skips the spaces and reads F; DuckDB's kept `"F"`."""
    from jostle.language import binding

    lines = rows(40)
    larger = write(tmp_path / "larger.csv", lines)
    smaller = write(tmp_path / "smaller.csv", lines[:-1])  # the neighbour one row smaller
    # the same file in memory and on DuckDB
    for path in (larger, smaller):
        in_memory, on_duckdb = run(path, "pandas", True), run(path, "duckdb", True)
        assert in_memory.end == "ok" and in_memory == on_duckdb, (in_memory, on_duckdb)
    # across the threshold under auto: the larger file on DuckDB, its neighbour in memory
    monkeypatch.setattr(binding, "SMALL_TABLE_BYTES", smaller.stat().st_size)
    above, below = run(larger, "auto", True), run(smaller, "auto", True)
    assert above.end == below.end == "ok" and (above.route, below.route) == ("duckdb", "pandas")
    # the same noise on both: the histograms differ by the one row's count at most
    difference = [abs(a - b) for a, b in zip(histogram_line(above), histogram_line(below))]
    assert max(difference) <= 1 + 1e-9, (above.output, below.output)


def test_a_broken_record_fails_at_bind_time_on_every_route(tmp_path: Path) -> None:
    """(b) a record with a field too many in a file bound without a schema: refused to the
    curator at bind time on both routes, with the same error, and no program runs."""
    lines = rows(30, "{age},{sex},{smoker}")
    path = write(tmp_path / "t.csv", lines[:10] + ["41,F,yes,extra"] + lines[10:])
    program = 'print("started")\n' + RELEASES
    outcomes = [run(path, engine, False, program) for engine in ("pandas", "duckdb")]
    assert outcomes[0] == outcomes[1], outcomes
    assert outcomes[0].bound.startswith("DataError") and "line 12 has 4 fields" in outcomes[0].bound
    # and a trailing empty field too many (DuckDB took `1,a,` as a record of the header's length)
    write(path, lines[:3] + ["41,F,yes,"] + lines[3:])
    outcomes = [run(path, engine, True) for engine in ("pandas", "duckdb")]
    assert outcomes[0] == outcomes[1] and "line 5 has 4 fields" in outcomes[0].bound, outcomes


# ---------------------------------------------------------------- the dialects
PLAIN = rows(12, "{age},{sex},{smoker}")
QUOTED = rows(12, '{age},"{sex}","{smoker}"')


def _file(lines: list[str], end: str = "\n", header: str = "age,sex,smoker", tail: str | None = None) -> bytes:
    return (header + end + end.join(lines) + (end if tail is None else tail)).encode()


DIALECTS: dict[str, bytes] = {
    "plain": _file(PLAIN),
    "quoted": _file(QUOTED),
    "spaces after commas": _file(rows(12, "{age}, {sex},   {smoker}")),
    "a quote after spaces": _file(PLAIN[:4] + ['34,  "F",  "yes"'] + PLAIN[4:]),
    "spaces after a closing quote": _file(PLAIN[:4] + ['34,"F"  ,yes'] + PLAIN[4:]),
    "text after a closing quote": _file(PLAIN[:4] + ['34,"F"x,yes'] + PLAIN[4:]),
    "a quote inside a field": _file(PLAIN[:4] + ['34,F"x,yes'] + PLAIN[4:]),
    "a quote never closed": _file(PLAIN + ['34,"F,yes']),
    "a stray quote, then one never closed": _file(PLAIN[:4] + ['34,ab",yes'] + PLAIN[4:] + ['35,"M,no']),
    "a quoted field starting with a space": _file(PLAIN[:4] + ['34," F",yes'] + PLAIN[4:]),
    "escaped quotes": _file(PLAIN[:4] + ['34,"F""",yes', '35,"""M""",no'] + PLAIN[4:]),
    "a quoted line break": _file(PLAIN[:4] + ['34,"F\nM",yes'] + PLAIN[4:]),
    "a field too many": _file(PLAIN[:4] + ["34,F,yes,x"] + PLAIN[4:]),
    "an empty field too many": _file(PLAIN[:4] + ["34,F,yes,"] + PLAIN[4:]),
    "two empty fields too many": _file(PLAIN[:4] + ["34,F,yes,,"] + PLAIN[4:]),
    "a short record": _file(PLAIN[:4] + ["34,F", "35"] + PLAIN[4:]),
    "empty fields": _file(PLAIN[:4] + [",,", '"",,""'] + PLAIN[4:]),
    "a byte that is not UTF-8": _file(PLAIN[:4]) + b"34,F\xff,yes\n" + _file(PLAIN[4:], header="")[1:],
    "a header that is not UTF-8": b"age,s\xffx,smoker\n" + _file(PLAIN, header="")[1:],
    "a byte-order mark": b"\xef\xbb\xbf" + _file(PLAIN),
    "CRLF line ends": _file(PLAIN, "\r\n"),
    "CR line ends": _file(PLAIN, "\r"),
    "mixed line ends": _file(PLAIN[:4], "\r\n") + _file(PLAIN[4:], header="")[1:],
    "a CR inside a field": _file(PLAIN[:4] + ["34,F\rM,yes"] + PLAIN[4:]),
    "blank lines": _file(PLAIN[:4] + ["", "", "  ", "\t", '""', '"  "', "\u3000"] + PLAIN[4:]),
    "blank lines before the header": b"\n  \n" + _file(PLAIN),
    "no line end at the end": _file(PLAIN, tail=""),
    "NUL characters": _file(PLAIN[:4] + ["\x0034,F,yes", "35,\x00,no"] + PLAIN[4:]),
    "a field longer than Python's limit": _file(PLAIN[:4] + ["34,F," + "y" * 140_000] + PLAIN[4:]),
    "a field at Python's limit": _file(PLAIN[:4] + ["34,F," + "y" * 131_072] + PLAIN[4:]),
    "a quoted field longer than Python's limit": _file(PLAIN[:4] + ['34,F,"' + "y" * 140_000 + '"'] + PLAIN[4:]),
    "a long quoted field of short lines": _file(PLAIN[:4] + ['34,F,"' + "y\n" * 70_000 + '"'] + PLAIN[4:]),
    "tabs after commas": _file(PLAIN[:4] + ["34,\tF,\tyes"] + PLAIN[4:]),
    "unicode line separators": _file(PLAIN[:4] + ["34,F\u2028M,yes\u0085"] + PLAIN[4:]),
}


@pytest.mark.parametrize("name", list(DIALECTS))
def test_dialects_read_alike_in_memory_and_on_duckdb(name: str, tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(DIALECTS[name])
    for curator_schema in (True, False):
        in_memory, on_duckdb = run(path, "pandas", curator_schema), run(path, "duckdb", curator_schema)
        assert in_memory == on_duckdb, f"{name} ({'curator' if curator_schema else 'program'}'s schema)\n" \
                                       f"in memory: {in_memory}\non DuckDB: {on_duckdb}"


SPARK_REASON = spark_unavailable()
# The cases Spark's reader reads itself, and a few it leaves to Jostle's reader (about 2 s each)
SPARK_DIALECTS = ["plain", "quoted", "spaces after commas", "escaped quotes", "a quoted line break",
                  "a short record", "empty fields", "a byte-order mark", "CRLF line ends", "blank lines",
                  "tabs after commas", "unicode line separators", "a quote after spaces", "an empty field too many",
                  "mixed line ends", "NUL characters"]


@pytest.fixture(scope="module")
def spark() -> Any:
    yield local_spark()


@pytest.mark.skipif(SPARK_REASON is not None, reason=f"Spark cannot run here: {SPARK_REASON}")
def test_dialects_on_spark(spark: Any, tmp_path: Path) -> None:
    """The dialect cases on Spark give the in-memory outcome (the curator's schema; Spark is
    chosen by the curator, never by the data, but its records must still be Jostle's reader's;
    tests/test_csv_dialects.py compares Spark's reader with Python's on random files)."""
    options = {"spark": {"session": spark}}
    for name in SPARK_DIALECTS:
        content = DIALECTS[name]
        path = tmp_path / "t.csv"
        path.write_bytes(content)
        program = 'print(laplace(histogram(t, "sex"), 1))\n'  # one Spark job: about a second a file
        in_memory, on_spark = run(path, "pandas", True, program), run(path, "spark", True, program, options)
        assert in_memory == on_spark, f"{name}\nin memory: {in_memory}\non Spark: {on_spark}"
