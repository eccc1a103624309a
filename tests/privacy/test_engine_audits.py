"""Adversarial audits of private tables on DuckDB (issue 14).

The program's author is the adversary, and under `auto` the route a curator's table takes
depends on its size, so two things must hold for every route a table can take
(jostle/language/binding.py):

* **Neighbours look alike.** Rows crafted to make the engine fail on them (huge numbers,
  infinities from arithmetic, divisions by zero, `log`/`sqrt` of negatives, texts that fail
  casts, NaN-like texts, bytes that are not UTF-8, malformed CSV records, mixed Python objects
  in a DataFrame column) must leave everything the program sees identical on the table with
  the row and the table without it: what it printed, how it ended (exit code and rendered
  error), the ledger and the warnings. Only the values of charged releases may differ, so the
  programs below keep them unprinted.
* **The route is unobservable.** The same program with the same seed prints the same released
  values in memory and on DuckDB.

Then the machinery around the routes: a program's `load` of a CSV is never routed by size; the
note that a row function ran in memory goes to the curator's log only; the durable ledger's
fingerprint is computed once per binding, the same for CSV, DataFrame and Parquet of the same
rows, and not at all with an in-memory ledger. Last, a statistical audit (jostle.audit) of
releases computed on DuckDB, with negative controls at twice the claimed epsilon.

Holes these tests found (each test named below failed before its fix):
  1. In memory, a DataFrame cell holding a whole number beyond every double (10**400) stopped
     the program's `private t: {...}` with OverflowError (exit 70), and one of more than 4300
     digits with ValueError, on that row only (jostle/data/schema.py: `conform`,
     `_match_category`): test_a_dataframe_cell_may_hold_anything.
  2. On DuckDB, a DataFrame object column with a boolean, bytes or a timestamp among numbers,
     or a text with a lone surrogate, made the conformance query fail with a data error quoting
     the value; and one text among whole numbers turned the column into text, moving every
     other row from category 1 to category "1" of a program's domain ["1", 1] (a histogram off
     by n for a release calibrated to one row). DataFrames are now conformed by the in-memory
     rules (jostle/data/engine/duckdb_engine.py, `_bind`): test_a_dataframe_cell_may_hold_anything,
     test_one_text_among_numbers_moves_no_other_row.
  3. A program's `load` of a CSV on DuckDB read with DuckDB's reader (ignore_errors): a record
     ending in a carriage return stopped it with a data error naming a line, and a closed quote
     followed by text (`1,"a"b`) dropped every record after it, so one record changed the count
     by the number of records behind it. A program's CSV is now read by Jostle's reader on
     every route (jostle/language/binding.py, `file_source`): test_malformed_csv_records_in_a_programs_load.
  4. When the engine could not compile a row function, the function was called a second time,
     in memory, so its prints and releases happened twice on DuckDB only (found by the
     neighbour fuzzer's engine route). The in-memory code now replays the recorded elementwise
     operations (jostle/language/values.py, `RowValues.replay`; jostle/language/tables.py):
     test_a_row_function_the_engine_cannot_compile_runs_once.
"""

from __future__ import annotations

import contextlib
import io
import logging
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("duckdb")

from jostle import Session  # noqa: E402
from jostle.audit import SPAN, AuditCase, AuditContext, replicate  # noqa: E402
from jostle.diagnostics.errors import JostleError  # noqa: E402
from jostle.language import mechanisms  # noqa: E402
from jostle.language.values import Private  # noqa: E402

SEED = 20261123
SCHEMA_SOURCE = '{x: numeric(0, 100), c: categorical(["a", "b"])}'
SCHEMA = {"x": ("numeric", 0, 100), "c": ("categorical", ["a", "b"])}

# Every step a table on an engine can take, with row functions chosen to fail on some rows in
# numpy's terms (overflow to infinity, 0/0, log and sqrt of negatives, // and % by zero) and two
# that the engine cannot compile (a text repeated, a whole number beyond 2^53), which run in
# memory on the engine's rows. Releases are charged but never printed.
PIPELINE = '''
print(t.columns)
u = t.derive("big", lambda r: r.x * 1e308 * 10, numeric(0, 100))
v = u.derive("q", lambda r: r.x / (r.x - 5) + (r.x - 5) / (r.x - 5), numeric(-10, 10))
w = v.derive("lg", lambda r: log(r.x - 50) + sqrt(r.x - 50) + exp(r.x * 1000), numeric(-10, 10))
z = w.derive("k", lambda r: "hi" if r.x // 0 > 1 or r.x % (r.x - 5) > 1 else "lo", categorical(["hi", "lo"], default="lo"))
f = z.derive("cc", lambda r: r.c * 2, categorical(["aa", "bb"], default="aa"))
g = f.derive("w", lambda r: r.x + 9007199254740993 - 9007199254740993, numeric(0, 100))
k = g.where(lambda r: r.big >= 0 and (r.q != 3 or r.cc == "bb"))
b = k.bin("x", [0, 10, 50, 100])
with budget 6:
    n = {{ count(b) }}
    s = {{ sum(w, "q") }}
    m = {{ mean(g, "w") }}
    h = {{ histogram(b, ["x", "k"]) }}
    for part in b.partition("cc"):
        p = {{ count(part) }}
print(histogram(b, "x").labels, bounds(g, "w"), domain(f, "cc"))
'''
# Fewer steps, for crafted records that test reading rather than row functions.
READING = '''
print(t.columns)
v = t.derive("q", lambda r: r.x / (r.x - 5), numeric(-10, 10)).where(lambda r: r.q != 3 or r.c == "b")
with budget 3:
    n = {{ count(v) }}
    s = {{ sum(v, "q") }}
    h = {{ histogram(v.bin("x", [0, 10, 50, 100]), ["x", "c"]) }}
print(bounds(v, "q"))
'''
# The same steps with every release printed: for comparing routes, not neighbours.
PRINTED = PIPELINE.replace("    n = {{ count(b) }}", "    print({{ count(b) }})").replace(
    "    s = {{ sum(w, \"q\") }}", "    print({{ sum(w, \"q\") }})").replace(
    "    m = {{ mean(g, \"w\") }}", "    print({{ mean(g, \"w\") }})").replace(
    "    h = {{ histogram(b, [\"x\", \"k\"]) }}", "    print({{ histogram(b, [\"x\", \"k\"]) }})").replace(
    "        p = {{ count(part) }}", "        print({{ count(part) }})")


# ---------------------------------------------------------------- observing a run
@dataclass(frozen=True)
class Seen:
    """What one run showed the program's author (and, in `route`, where its table lived)."""

    output: str      # what print wrote
    end: tuple       # ("ok",) or (exit code, error class, rendered error)
    ledger: str      # the rendered ledger: every charge, its mechanism, epsilon, data and place
    warnings: tuple  # session.warnings
    other: str       # anything written to stdout or stderr outside print, and Python warnings
    route: str = ""

    def observable(self) -> tuple:
        return self.output, self.end, self.ledger, self.warnings, self.other


def observe(program: str, engine: str, frame: pd.DataFrame | None = None, folder: Path | None = None,
            declare: bool = True, ledger: str = ":memory:") -> Seen:
    """Run `program` in a fresh session on `engine`. With `frame`, the curator binds it as `t`
    without a schema (the program declares it); otherwise the program loads its own files."""
    output, stdout, stderr = io.StringIO(), io.StringIO(), io.StringIO()
    session = Session(budget=10, seed=SEED, ledger_path=ledger, engine=engine, output=output)
    source = (f"private t: {SCHEMA_SOURCE}\n" if frame is not None and declare else "") + program
    end: tuple = ("ok",)
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(stdout), \
            contextlib.redirect_stderr(stderr):
        warnings.simplefilter("always")
        if frame is not None:
            session.bind_private("t", frame)
        try:
            session.run(source, str((folder or Path("/nonexistent")) / "prog.jst"))
        except JostleError as error:
            end = (error.exit_code, type(error).__name__, error.render())
        except Exception as error:  # noqa: BLE001 - exit code 70 is observable, and a bug
            end = (70, type(error).__name__, str(error))
    other = stdout.getvalue() + stderr.getvalue() + "".join(f"{w.category.__name__}: {w.message}\n" for w in caught)
    seen = Seen(output.getvalue(), end, str(session.ledger), tuple(str(w) for w in session.warnings), other,
                _route(session))
    session.close()
    return seen


def _route(session: Session) -> str:
    tables = [v for v in session.interpreter.globals.values.values() if type(v).__name__ == "Table" and v.private]
    routes = {t.relation.engine.name if t.relation is not None else "pandas" for t in tables}
    return ",".join(sorted(routes))


def assert_alike(without: Seen, with_row: Seen, what: str) -> None:
    assert without.end[0] != 70 and with_row.end[0] != 70, f"{what}: internal error {with_row.end or without.end}"
    assert without.observable() == with_row.observable(), (
        f"{what}: neighbours differ\n--- without the row ---\n{without}\n--- with the row ---\n{with_row}")


def show(value: Any) -> str:
    """A short description of a crafted value (a whole number may be too long for repr)."""
    try:
        return repr(value)[:40]
    except ValueError:
        return f"<{type(value).__name__} of many digits>"


def object_frame(xs: list[Any], cs: list[Any]) -> pd.DataFrame:
    """A curator's DataFrame whose columns hold the Python objects given (object dtype)."""
    return pd.DataFrame({"x": pd.Series(xs, dtype=object), "c": pd.Series(cs, dtype=object)})


BASE_X = [0, 3, 5, 7.5, 50, 51, 99, 100, 20, 64]
BASE_C = ["a", "b", "a", "b", "a", "b", "a", "b", "a", "a"]


# ---------------------------------------------------------------- DataFrames bound by the curator
CRAFTED_CELLS = [
    # numbers that overflow or are not finite, and texts of them
    (1e308, "a"), (float("inf"), "b"), (float("-inf"), "a"), (float("nan"), "a"), (-1e308, "b"),
    ("1e400", "a"), ("-1e400", "a"), ("1e308", "b"), (10 ** 400, "a"), (-(10 ** 400), "b"), (10 ** 5000, "a"),
    # NaN-like texts and texts that fail casts
    ("nan", "a"), ("NaN", "b"), ("-nan", "a"), ("NA", "a"), ("null", "b"), ("inf", "a"), ("Infinity", "b"),
    ("", "a"), ("  ", "b"), ("abc", "a"), ("1,5", "a"), ("0x10", "b"), ("\u0661\u0662", "a"), ("1_000", "b"),
    # values the formula rows fail on: 5 (x - 5 = 0), 50 (log 0), 0 (// 0)
    (5, "a"), ("5", "b"), (50.0, "a"), (0, "b"),
    # Python objects that are not numbers or texts, and texts that are not UTF-8
    (True, "a"), (b"\xff", "a"), (b"12", "b"), ("\udcff", "a"), ("1", "\udcff"), (pd.Timestamp("2020-01-01"), "a"),
    ([1], "b"), (None, "a"), (1 + 2j, "b"), (7, 1), (7, True), (7, b"a"), (7, None), (7, float("nan")),
]


@pytest.mark.parametrize("engine", ["duckdb", "pandas"])
def test_a_dataframe_cell_may_hold_anything(engine: str) -> None:
    """Hole 1 (in memory) and hole 2 (DuckDB): a crafted cell in a DataFrame the curator bound
    without a schema is dropped or defaulted under the program's schema, never an error."""
    base = object_frame(BASE_X, BASE_C)
    without = observe(PIPELINE, engine, base)
    assert without.end == ("ok",), without
    assert without.route == engine
    for i, (x, c) in enumerate(CRAFTED_CELLS):
        position = i % (len(BASE_X) + 1)
        with_row = observe(PIPELINE, engine, object_frame(BASE_X[:position] + [x] + BASE_X[position:],
                                                         BASE_C[:position] + [c] + BASE_C[position:]))
        assert_alike(without, with_row, f"cell {show(x)}, {show(c)}")


def test_one_text_among_numbers_moves_no_other_row() -> None:
    """Hole 2: on DuckDB one text in an object column of whole numbers made the whole column
    text, so a program's domain ["1", 1] saw every row move from 1 to "1" (checked on the
    release's exact histogram: a row may change one cell by one, no more)."""
    program = 'private t: {c: categorical(["1", 1], default="1")}\nh = histogram(t, "c")\n'
    exact = []
    for cells in ([1] * 50, [1] * 50 + ["z"]):
        session = Session(budget=1, ledger_path=":memory:", engine="duckdb")
        session.bind_private("t", pd.DataFrame({"c": pd.Series(cells, dtype=object)}))
        session.run(program)
        exact.append(np.asarray(session.interpreter.globals.lookup("h").value))
    assert np.abs(exact[0] - exact[1]).sum() <= 1, exact


def test_crafted_cells_give_the_same_releases_in_memory_and_on_duckdb() -> None:
    """The route is unobservable: a DataFrame full of crafted cells gives the same released
    values (same seed) whichever route it takes."""
    xs = BASE_X + [x for x, _ in CRAFTED_CELLS]
    cs = BASE_C + [c for _, c in CRAFTED_CELLS]
    seen = {engine: observe(PRINTED, engine, object_frame(xs, cs)) for engine in ("pandas", "duckdb")}
    assert seen["pandas"].end == ("ok",) and seen["pandas"].output.count("\n") >= 7, seen["pandas"]
    assert seen["pandas"].observable() == seen["duckdb"].observable(), seen
    assert (seen["pandas"].route, seen["duckdb"].route) == ("pandas", "duckdb")


def test_a_dataframe_is_conformed_once_per_distinct_value_exactly_as_cell_by_cell() -> None:
    """DuckDB stores a DataFrame conformed by `conform_frame`, which must give `conform`'s result
    (the same values of the same types, the same error, the same dropped rows)."""
    from jostle.data.engine import frames
    from jostle.data.engine.frames import conform_frame
    from jostle.data.schema import DataError, Schema, conform

    rng = np.random.default_rng(SEED)
    n = 200
    texts = ["a", "b", "A", " a", "", "na", "NaN", "null", "c", "1", "\u0661"]
    columns = {
        "f": rng.choice([0.0, -0.0, 1.5, 100.0, 1e308, np.inf, -np.inf, np.nan, 7.25, -3.0], n),
        "i": rng.integers(-5, 200, n),
        "u": rng.choice(np.array([0, 5, 2 ** 64 - 1], dtype=np.uint64), n),
        "b": rng.random(n) < 0.5,
        "ni": pd.array(rng.choice([1, 2, None], n), dtype="Int64"),
        "s": pd.array(rng.choice(texts + [None], n), dtype="string"),
        "o": pd.Series(list(rng.choice(texts, n)), dtype=object).where(rng.random(n) < 0.9, None),
        "m": pd.Series([x for x in rng.choice(["a", 1, 1.0, True, None, b"a", 10 ** 400], n)], dtype=object),
        "t": pd.Series([str(x) for x in rng.choice(["1", "2.5", "abc", " 7 ", "1e400", "nan"], n)], dtype=object),
    }
    frame = pd.DataFrame(columns)
    domains = [("numeric", 0, 100), ("numeric", -10, 10, 3), ("numeric", 0, 10, None, True),
               ("categorical", ["a", "b"]), ("categorical", ["a", "b"], "b"), ("categorical", ["1", 1, "True"], "1"),
               ("categorical", ["a", "A", " a"])]

    def spec(domain: tuple) -> dict:
        if domain[0] == "numeric":
            entry = {"type": "numeric", "bounds": [domain[1], domain[2]]}
            if len(domain) > 3 and domain[3] is not None:
                entry["default"] = domain[3]
            if len(domain) > 4:
                entry["integer"] = True
            return entry
        entry = {"type": "categorical", "values": domain[1]}
        if len(domain) > 2:
            entry["default"] = domain[2]
        return entry

    def outcome(function: Callable, schema: Schema, strict: bool, rows: pd.DataFrame) -> Any:
        try:
            result = function(rows, schema, "t", strict=strict)
        except DataError as error:
            return ("error", str(error))
        return {name: [(type(v).__name__, repr(v), bool(np.signbit(v)) if isinstance(v, float) else None)
                       for v in result[name].tolist()] for name in result.columns}

    checked = fast = 0
    for name in columns:
        for domain in domains:
            for strict in (True, False):
                schema = Schema.of({name: spec(domain), "i": {"type": "numeric", "bounds": [0, 100]}})
                for rows in (frame, frame[frame[name].notna() if name != "m" else slice(None)]):
                    rows = rows.reset_index(drop=True)
                    assert outcome(conform_frame, schema, strict, rows) == outcome(conform, schema, strict, rows), \
                        (name, domain, strict)
                    checked += 1
                    fast += frames._fast(rows, schema) is not None
    assert checked == len(columns) * len(domains) * 4
    assert fast >= checked // 4, (fast, checked)  # the per-value path ran, not only conform


# ---------------------------------------------------------------- a program's load of a CSV
CSV_HEAD = b"x,c\n"
CSV_BASE = b"".join(b"%s,%s\n" % (str(x).encode(), c.encode()) for x, c in zip(BASE_X, BASE_C))
CRAFTED_RECORDS = [
    b"1e308,a\n", b"1e400,b\n", b"-1e400,a\n", b"nan,a\n", b"NaN,b\n", b"NA,a\n", b"null,a\n", b"inf,b\n",
    b"abc,a\n", b"1,5,a\n", b"\xd9\xa1\xd9\xa2,a\n", b"5,a\n", b"50,b\n", b"0,a\n", b"9" * 5000 + b",a\n",
    b"\xff,a\n", b"1,\xff\n", b"\xff\xfe\xfd\n", b"1,a\r", b"1,a\r\n", b"1,a\rb\n", b'1,"a\rb"\n', b"\r",
    b'1,"a"b\n', b'1,"a\\"b"\n', b'2,a"\n', b'"3",b"\n', b'4,"a\n', b"1,a,extra\n", b"1,a,\n", b"1,a,,\n",
    b"\x00,a\n", b"1,\x00\n", b"\x1a\n", b"7,\x0cb\n", b" ,\n", b",\n", b"\n\n", b"\xef\xbb\xbf8,a\n",
    b"1,\"a\"\"b\"\n", b"x,c\n", b"12" + b"3" * 3_000_000 + b",a\n",
]


@pytest.mark.parametrize("engine", ["duckdb", "pandas"])
def test_malformed_csv_records_in_a_programs_load(engine: str, tmp_path: Path) -> None:
    """Hole 3: a program's `load` of a CSV drops a record it cannot use, whatever the record and
    wherever it is, and the rest of the file reads as without it."""
    path = tmp_path / "data.csv"
    program = f'budget 10\nt = load("data.csv", {SCHEMA_SOURCE})\n' + READING
    path.write_bytes(CSV_HEAD + CSV_BASE)
    without = observe(program, engine, folder=tmp_path)
    assert without.end == ("ok",) and without.route == engine, without
    lines = CSV_BASE.splitlines(keepends=True)
    for i, record in enumerate(CRAFTED_RECORDS):
        at = (3 * i) % (len(lines) + 1)
        path.write_bytes(CSV_HEAD + b"".join(lines[:at]) + record + b"".join(lines[at:]))
        # dropped or kept (one more row), the record may change charged values only
        assert_alike(without, observe(program, engine, folder=tmp_path), f"record {record[:40]!r} at line {at + 2}")


def test_a_programs_csv_reads_the_same_rows_in_memory_and_on_duckdb(tmp_path: Path) -> None:
    """Every crafted record at once: the same released values on both routes."""
    path = tmp_path / "data.csv"
    path.write_bytes(CSV_HEAD + CSV_BASE + b"".join(CRAFTED_RECORDS[:-1]) + CSV_BASE)
    program = f'budget 10\nt = load("data.csv", {SCHEMA_SOURCE})\n' + PRINTED
    seen = {engine: observe(program, engine, folder=tmp_path) for engine in ("pandas", "duckdb")}
    assert seen["pandas"].end == ("ok",), seen["pandas"]
    assert seen["pandas"].observable() == seen["duckdb"].observable(), seen


def test_a_programs_csv_is_never_routed_by_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import jostle.language.binding as binding

    path = tmp_path / "data.csv"
    path.write_bytes(CSV_HEAD + CSV_BASE)
    program = f'budget 10\nt = load("data.csv", {SCHEMA_SOURCE})\nprint(count(t) >= 0)\n'
    for size in (0, 1 << 40):  # every file "large", then every file "small"
        monkeypatch.setattr(binding, "SMALL_TABLE_BYTES", size)
        monkeypatch.setattr(binding, "SMALL_TABLE_ROWS", size)
        assert observe(program, "auto", folder=tmp_path).route == "pandas"
        # the curator's binding of the same file does follow its size under auto
        session = Session(budget=1, ledger_path=":memory:")
        session.bind_private("t", path, SCHEMA)
        table = session.interpreter.bound_tables["t"]
        assert (table.relation is not None) == (size == 0)


# ---------------------------------------------------------------- a program's load of a Parquet file
PARQUET_CRAFTED = [
    ("CAST('inf' AS DOUBLE)", "'a'"), ("CAST('-inf' AS DOUBLE)", "'b'"), ("CAST('nan' AS DOUBLE)", "'a'"),
    ("CAST(1e308 AS DOUBLE)", "'a'"), ("CAST(5e-324 AS DOUBLE)", "'b'"), ("CAST(5 AS DOUBLE)", "'a'"),
    ("CAST(50 AS DOUBLE)", "'b'"), ("NULL", "'a'"), ("CAST(7 AS DOUBLE)", "NULL"), ("CAST(7 AS DOUBLE)", "'\\xFF'"),
    ("CAST(7 AS DOUBLE)", "''"), ("CAST(-0.0 AS DOUBLE)", "' a'"),
]


def test_crafted_rows_in_a_programs_parquet_on_duckdb(tmp_path: Path) -> None:
    import duckdb

    path = tmp_path / "data.parquet"
    program = f'budget 10\nt = load("data.parquet", {SCHEMA_SOURCE})\n' + PIPELINE
    base = ", ".join(f"(CAST({x} AS DOUBLE), '{c}')" for x, c in zip(BASE_X, BASE_C))
    connection = duckdb.connect()

    def write(rows: str) -> None:
        connection.execute(f"COPY (SELECT * FROM (VALUES {rows}) AS v(x, c)) TO '{path}' (FORMAT parquet)")

    write(base)
    without = observe(program, "auto", folder=tmp_path)
    assert without.end == ("ok",) and without.route == "duckdb", without
    for x, c in PARQUET_CRAFTED:
        write(f"{base}, ({x}, {c})")
        assert_alike(without, observe(program, "auto", folder=tmp_path), f"parquet row ({x}, {c})")


# ---------------------------------------------------------------- a row function runs once
def test_a_row_function_the_engine_cannot_compile_runs_once() -> None:
    """Hole 4: when the engine could not compile a row function's result, the in-memory code
    called the function again on the engine's rows, so what the function does besides giving
    its result happened twice on DuckDB only: a print, and a release (charged twice, and the
    noise of every later release drawn from another point of the stream)."""
    frame = object_frame(BASE_X, BASE_C)
    program = (f"private t: {SCHEMA_SOURCE}\nprivate o: {SCHEMA_SOURCE}\n"
               'def f(r):\n    print("in f", laplace(count(o), 1))\n    return r.c * 2\n'
               'def g(r):\n    print("in g")\n    return r.x + 9007199254740993 > 9007199254740995\n'
               'def h(r):\n    print("in h")\n'  # gives none: a public constant, which compiles to nothing
               'u = t.derive("z", f, categorical(["aa", "bb"], default="aa")).where(g).derive("n", h, numeric(0, 1))\n'
               'print(laplace(histogram(u, "z"), 1), laplace(sum(u, "n"), 1))\n')
    seen = []
    for engine in ("pandas", "duckdb"):
        output = io.StringIO()
        session = Session(budget=10, seed=SEED, ledger_path=":memory:", engine=engine, output=output)
        session.bind_private("t", frame)
        session.bind_private("o", frame)
        session.run(program)
        seen.append((output.getvalue(), str(session.ledger)))
    assert seen[0][0].count("in f") == seen[0][0].count("in g") == seen[0][0].count("in h") == 1, seen[0][0]
    assert seen[0] == seen[1], seen


# ---------------------------------------------------------------- the curator's log
def test_the_in_memory_fallback_note_reaches_only_the_curators_log(caplog: pytest.LogCaptureFixture) -> None:
    frame = object_frame(BASE_X, BASE_C)
    with caplog.at_level(logging.INFO, logger="jostle.data"):
        seen = observe(PIPELINE, "duckdb", frame)
    notes = " ".join(r.getMessage() for r in caplog.records if "computed in memory" in r.getMessage())
    assert "'*' between a str" in notes and "beyond 2^53" in notes, notes  # `r.c * 2`, 9007199254740993
    assert seen.end == ("ok",) and seen.route == "duckdb"
    for channel in (seen.output, seen.other, "".join(seen.warnings), seen.ledger):
        assert "memory" not in channel and "duckdb" not in channel.lower(), channel


# ---------------------------------------------------------------- the durable ledger's fingerprint
@contextlib.contextmanager
def counted_digests() -> Any:
    """Count the outermost fingerprint computations (frame_digest calls engine_digest itself)."""
    import jostle.data.engine.fingerprint as fingerprint

    calls: list[bytes] = []
    depth = [0]
    originals = {name: getattr(fingerprint, name) for name in ("engine_digest", "frame_digest")}

    def wrap(function: Callable) -> Callable:
        def counted(*args: Any, **kwargs: Any) -> bytes:
            depth[0] += 1
            try:
                digest = function(*args, **kwargs)
            finally:
                depth[0] -= 1
            if depth[0] == 0:
                calls.append(digest)
            return digest
        return counted

    for name, function in originals.items():
        setattr(fingerprint, name, wrap(function))
    try:
        yield calls
    finally:
        for name, function in originals.items():
            setattr(fingerprint, name, function)


def test_the_fingerprint_is_computed_once_per_binding_and_follows_the_rows(tmp_path: Path) -> None:
    import duckdb

    frame = pd.DataFrame({"x": [float(x) for x in BASE_X], "c": BASE_C})
    csv, parquet = tmp_path / "data.csv", tmp_path / "data.parquet"
    frame.to_csv(csv, index=False)
    connection = duckdb.connect()
    connection.register("f", frame)
    connection.execute(f"COPY f TO '{parquet}' (FORMAT parquet)")
    ledger = str(tmp_path / "ledger.sqlite")
    digests = []
    for data in (frame, csv, parquet):
        for engine in ("pandas", "duckdb", "auto"):
            with counted_digests() as calls:
                session = Session(budget=10, ledger_path=ledger, engine=engine)
                session.bind_private("t", data, SCHEMA)
                session.run("print(t.columns)")
                session.close()
            assert len(calls) == 1, (data, engine, len(calls))
            digests.append(calls[0])
    # A program's load of the same files: never fingerprinted (issue 21: a program's data is
    # known to the ledger by its path, never compared with the ledger's contents).
    for name in ("data.csv", "data.parquet"):
        for engine in ("pandas", "duckdb"):
            with counted_digests() as calls:
                session = Session(budget=10, ledger_path=str(tmp_path / f"other-{engine}.sqlite"), engine=engine)
                session.run(f'u = load("{tmp_path / name}", {SCHEMA_SOURCE})\nv = load("{tmp_path / name}", '
                            f'{SCHEMA_SOURCE})')
                assert {d.name for d in session.accountant.datasets.values()} == {f"file:{tmp_path / name}"}
                session.close()
            assert len(calls) == 0, (name, engine, len(calls))
    assert len(set(digests)) == 1
    # a neighbour is another dataset
    with counted_digests() as calls:
        Session(budget=10, ledger_path=ledger).bind_private("t", frame.iloc[1:], SCHEMA)
    assert len(calls) == 1 and calls[0] != digests[0]


def test_no_fingerprint_is_computed_with_an_in_memory_ledger(tmp_path: Path) -> None:
    frame = object_frame(BASE_X, BASE_C)
    path = tmp_path / "data.csv"
    path.write_bytes(CSV_HEAD + CSV_BASE)
    with counted_digests() as calls:
        for engine in ("pandas", "duckdb", "auto"):
            observe(PIPELINE, engine, frame)
            observe(f'budget 10\nt = load("data.csv", {SCHEMA_SOURCE})\n' + PIPELINE, engine, folder=tmp_path)
    assert calls == []


# ---------------------------------------------------------------- a statistical audit on DuckDB
AUDIT_SCHEMA = {"age": ("numeric", 0, 100), "grp": ("categorical", ["a", "b", "c"])}


def groups(labels: str) -> pd.DataFrame:
    return pd.DataFrame({"age": [50.0] * len(labels), "grp": list(labels)})


def engine_value(frame: pd.DataFrame, expression: str) -> Private:
    """The private value of `expression` computed on DuckDB (the table must live there)."""
    with Session(budget=1, ledger_path=":memory:", engine="duckdb") as session:
        session.bind_private("t", frame, AUDIT_SCHEMA)
        assert session.interpreter.bound_tables["t"].relation is not None
        session.run(f"audit_value_ = {expression}")
        return session.interpreter.globals.lookup("audit_value_")


def engine_release(release: Callable[[AuditContext, Any], Any], expression: str, vectorise: bool) -> Any:
    def run(frame: pd.DataFrame, count: int, seed: int) -> Any:
        value = engine_value(frame, expression)
        context = AuditContext(seed)
        if vectorise:
            return np.asarray(release(context, replicate(value, count)))
        return [release(context, value) for _ in range(count)]
    return run


COUNTS = (groups("a" * 20), groups("a" * 21))
PARTS = (groups("aaaaabbbcc"), groups("aaaaabbbccb"))
# The parts of a partition of a filtered table, counted on DuckDB (one GROUP BY for all parts).
PART_COUNTS = 'map(lambda p: count(p), t.where(lambda r: r.age >= 0).partition("grp"))'


def each_part(epsilon: float) -> Callable[[pd.DataFrame, int, int], Any]:
    """A runner: every part's count released by the geometric mechanism at `epsilon`, all
    samples drawn in one call per part (parts compose in parallel: the claim is epsilon)."""
    def run(frame: pd.DataFrame, count: int, seed: int) -> np.ndarray:
        parts = engine_value(frame, PART_COUNTS)
        context = AuditContext(seed)
        return np.column_stack([np.asarray(mechanisms.geometric(context, replicate(part, count), epsilon, SPAN))
                                for part in parts])
    return run


ENGINE_CASES = [
    AuditCase("duckdb: laplace count", engine_release(lambda c, x: mechanisms.laplace(c, x, 0.5, SPAN), "count(t)",
              True), *COUNTS, epsilon=0.5, samples=100_000, at_least=0.25),
    AuditCase("duckdb: geometric histogram, row in one cell", engine_release(
              lambda c, h: mechanisms.geometric(c, h, 0.5, SPAN), 'histogram(t, "grp")', False),
              *PARTS, epsilon=0.5, samples=15_000, at_least=0.25),
    AuditCase("duckdb: partition, geometric in every part", each_part(0.5),
              *PARTS, epsilon=0.5, samples=100_000, at_least=0.25),
]
ENGINE_CONTROLS = [
    AuditCase("duckdb: laplace count at twice the claim", engine_release(
              lambda c, x: mechanisms.laplace(c, x, 1.0, SPAN), "count(t)", True),
              *COUNTS, epsilon=0.5, samples=100_000, expect_violation=True),
    AuditCase("duckdb: geometric histogram at twice the claim", engine_release(
              lambda c, h: mechanisms.geometric(c, h, 1.0, SPAN), 'histogram(t, "grp")', False),
              *PARTS, epsilon=0.5, samples=15_000, expect_violation=True),
    AuditCase("duckdb: partition at twice the claim", each_part(1.0),
              *PARTS, epsilon=0.5, samples=100_000, expect_violation=True),
]


@pytest.mark.parametrize("case", ENGINE_CASES, ids=[c.name for c in ENGINE_CASES])
def test_engine_release_respects_its_claimed_epsilon(case: AuditCase, audit_scale: float) -> None:
    result = case.audit(audit_scale)
    assert not result.violated, f"{case.name}: {result}"
    assert result.epsilon_lower_bound >= case.at_least, f"{case.name}: the audit lost its power: {result}"


@pytest.mark.parametrize("case", ENGINE_CONTROLS, ids=[c.name for c in ENGINE_CONTROLS])
def test_engine_release_at_twice_the_claim_is_caught(case: AuditCase, audit_scale: float) -> None:
    result = case.audit(audit_scale)
    assert result.violated, f"{case.name}: a mis-calibrated release passed the audit: {result}"


def test_duckdb_prints_no_progress_bar_into_a_programs_output():
    """DuckDB draws a progress bar on stdout for a query past 2 s: whether one appears depends on
    the query's time, so on the table's size. The engine turns it off."""
    from jostle.data.engine.duckdb_engine import DuckDBEngine

    engine = DuckDBEngine()
    assert engine.query("SELECT current_setting('enable_progress_bar')")[0][0] is False
