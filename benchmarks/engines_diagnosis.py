"""Where the time of benchmarks/engines.py goes: each slow step split into its parts, with numbers.

For one table size (default 1e7 rows, the goal size of issue 14; the same generated table as
benchmarks/engines.py), one process per engine and input kind measures (medians of
`--repeats`):

  DuckDB (CSV and Parquet):
    * bind: `bind_private` whole; the engine's own typed read; the strict schema check alone
      (one scan evaluating "this row breaks the schema"); the conformance alone (CREATE TABLE
      AS the conform SELECT); the same two with a hand-written conformance for this schema
      (each cell parsed once, an exact category match tried first), checked to give the same
      rows; the length of the conform SQL;
    * count: the release; the engine's count query; planning it alone (EXPLAIN); the raw count;
      a trivial program (`x = 1`: parsing and checking);
    * sum: the release; `sum_parts` now; the exponent rule it replaced; the cheapest exact step
      (one truncation to a whole number per row, summed); DuckDB's float sum;
    * count per region: the release; the engine's GROUP BY over the conformed table; the raw
      GROUP BY; for Parquet (a view, conformed again by every query) the GROUP BY with the
      hand-written conformance;
  pandas (CSV):
    * bind: `bind_private` whole and the Jostle functions that take its time (cProfile,
      cumulative); `pd.read_csv`;
    * sum: the release; `exact_sum` (before); `_bounded_exact_sum` (now); numpy's float sum.

Writes benchmarks/results/engines_diagnosis.json. Usage (from the repository root):
    python benchmarks/engines_diagnosis.py [--rows 1e7] [--repeats 5] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engines import QUERIES, REGIONS, RESULTS, ROOT, SCHEMA, SEED, generate, rounded  # noqa: E402


def median_seconds(function: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def handwritten_conformance(source: str) -> str:
    """This schema's conformance as a reference: each text cell parsed once, exact match first.

    The same values as the strict conform SELECT on this benchmark's data (checked by the
    caller); not general (the missing-value words and Unicode trimming are not all handled).
    """
    exact = " ".join(f"WHEN '{value}' THEN {code}" for code, value in enumerate(REGIONS))
    inner = (f"SELECT TRY_CAST(age AS DOUBLE) AS a, TRY_CAST(income AS DOUBLE) AS i, "
             f"COALESCE(CASE CAST(region AS VARCHAR) {exact} END, CASE trim(CAST(region AS VARCHAR)) {exact} END) "
             f"AS r FROM {source}")
    return (f"SELECT least(greatest(CASE WHEN a IS NULL OR isnan(a) THEN 0.0 ELSE a END, 0.0), 100.0) AS age, "
            f"COALESCE(r, 0) AS region, least(greatest(CASE WHEN i IS NULL OR isnan(i) THEN 0.0 ELSE i END, 0.0), "
            f"200000.0) AS income, (a IS NULL OR isnan(a) OR i IS NULL OR isnan(i) OR r IS NULL) AS broken "
            f"FROM ({inner}) AS h")


def diagnose_duckdb(kind: str, paths: dict[str, Path], repeats: int) -> dict:
    from jostle import Session
    from jostle.data.engine.conform import conform_query
    from jostle.data.engine.expressions import literal, quote

    output = io.StringIO()
    session = Session(budget=1e9, seed=SEED, ledger_path=":memory:", engine="duckdb", output=output)
    start = time.perf_counter()
    session.bind_private("t", paths[kind], SCHEMA)
    result: dict = {"bind": {"bind_private_seconds": time.perf_counter() - start}}
    relation = session.interpreter.bound_tables["t"].relation
    engine = relation.engine
    engine.query("SET enable_progress_bar = false")
    raw = next(name for name in engine._columns if name.startswith("jostle_raw"))
    types = engine.raw_types(raw)
    select, problems = conform_query(raw, schema_of(), types, engine.dialect)
    bad = " OR ".join(f"({p})" for _, p in problems)
    reader = (f"read_csv('{paths['csv']}', header = true, auto_detect = false, "
              f"columns = {{'age': 'DOUBLE', 'region': 'VARCHAR', 'income': 'DOUBLE'}})" if kind == "csv"
              else f"read_parquet('{paths['parquet']}')")
    bind = result["bind"]
    bind["engine_read_seconds"] = median_seconds(
        lambda: engine.query(f"CREATE OR REPLACE TABLE diagnosis_read AS SELECT * FROM {reader}"), repeats)
    engine.query("DROP TABLE diagnosis_read")
    bind["conform_sql_characters"] = len(select)
    bind["strict_check_scan_seconds"] = median_seconds(lambda: engine.query(f"SELECT bool_or({bad}) FROM {raw}"),
                                                       repeats)
    bind["conform_create_table_seconds"] = median_seconds(
        lambda: engine.query(f"CREATE OR REPLACE TABLE diagnosis_conformed AS {select}"), repeats)
    handwritten = handwritten_conformance(raw)
    bind["handwritten_check_scan_seconds"] = median_seconds(
        lambda: engine.query(f"SELECT bool_or(broken) FROM ({handwritten}) AS h"), repeats)
    bind["handwritten_create_table_seconds"] = median_seconds(
        lambda: engine.query(f"CREATE OR REPLACE TABLE diagnosis_handwritten AS "
                             f"SELECT age, region, income FROM ({handwritten}) AS h"), repeats)
    bind["handwritten_rows_differing"] = engine.query(
        "SELECT count(*) FROM (SELECT * FROM diagnosis_conformed EXCEPT ALL SELECT * FROM diagnosis_handwritten)")[0][0]
    plan = relation.sql()
    source = "diagnosis_read_view"
    # what the raw engine aggregates (as benchmarks/engines.py): the file itself, or the CSV read into a table
    engine.query(f"CREATE OR REPLACE {'VIEW' if kind == 'parquet' else 'TABLE'} {source} AS SELECT * FROM {reader}")

    def release(query: str) -> float:
        return median_seconds(lambda: session.run(QUERIES[query]), repeats)

    result["count"] = {
        "release_seconds": release("count"),
        "engine_count_seconds": median_seconds(lambda: engine.count(relation), repeats),
        "planning_only_seconds": median_seconds(lambda: engine.query(f"EXPLAIN SELECT count(*) FROM ({plan}) AS c"),
                                                repeats),
        "raw_count_seconds": median_seconds(lambda: engine.query(f"SELECT count(*) FROM {source}"), repeats),
        "trivial_program_seconds": median_seconds(lambda: session.run("x = 1"), repeats)}
    one_step = f"SELECT sum(CAST(trunc(age * {literal(2.0 ** 55).sql}) AS BIGINT)) FROM ({plan}) AS s"
    result["sum"] = {
        "release_seconds": release("sum"),
        "sum_parts_seconds": median_seconds(lambda: engine.sum_parts(relation, "age"), repeats),
        "exponent_rule_before_seconds": median_seconds(lambda: engine._exponent_parts(plan, quote("age")), repeats),
        "one_exact_step_floor_seconds": median_seconds(lambda: engine.query(one_step), repeats),
        "raw_float_sum_seconds": median_seconds(lambda: engine.query(f"SELECT sum(age) FROM {source}"), repeats)}
    group = "SELECT region, count(*) FROM ({}) AS s GROUP BY region"
    result["count_per_region"] = {
        "release_seconds": release("count_per_region"),
        "engine_histogram_seconds": median_seconds(lambda: engine.histogram(relation, ["region"], [len(REGIONS)]),
                                                   repeats),
        "raw_group_by_seconds": median_seconds(lambda: engine.query(group.format(f"SELECT * FROM {source}")),
                                               repeats)}
    if kind == "parquet":  # a Parquet table is a view: each query conforms the file's rows again
        result["count_per_region"]["handwritten_conformance_group_by_seconds"] = median_seconds(
            lambda: engine.query(group.format(handwritten)), repeats)
    session.close()
    return result


def schema_of() -> Any:
    from jostle.data.schema import Schema

    return Schema.of(SCHEMA)


def diagnose_pandas(paths: dict[str, Path], repeats: int) -> dict:
    import numpy as np
    import pandas as pd

    from jostle import Session
    from jostle.language.sensitivity import exact_sum
    from jostle.language.tables import _bounded_exact_sum

    session = Session(budget=1e9, seed=SEED, ledger_path=":memory:", engine="pandas", output=io.StringIO())
    profile = cProfile.Profile()
    start = time.perf_counter()
    profile.enable()
    session.bind_private("t", paths["csv"], SCHEMA)
    profile.disable()
    seconds = time.perf_counter() - start
    stats = pstats.Stats(profile).stats  # (file, line, name) -> (calls, primitive, own, cumulative, callers)
    jostle_functions = sorted(((f"{Path(key[0]).name}:{key[2]}", value[3]) for key, value in stats.items()
                               if "/jostle/" in key[0]), key=lambda item: -item[1])[:6]
    start = time.perf_counter()
    frame = pd.read_csv(paths["csv"])
    read = time.perf_counter() - start
    ages = session.interpreter.bound_tables["t"].frame["age"].to_numpy(dtype=float)
    spec = schema_of()["age"]
    return {
        "bind": {"bind_private_seconds_profiled": seconds, "pd_read_csv_seconds": read,
                 "cumulative_seconds_by_function": dict(jostle_functions),
                 "note": "under cProfile (slower than unprofiled); shares of the total are what to read"},
        "sum": {"release_seconds": median_seconds(lambda: session.run(QUERIES["sum"]), repeats),
                "exact_sum_before_seconds": median_seconds(lambda: exact_sum(ages), repeats),
                "bounded_exact_sum_now_seconds": median_seconds(lambda: _bounded_exact_sum(ages, spec), repeats),
                "numpy_float_sum_seconds": median_seconds(lambda: np.sum(frame["age"].to_numpy()), repeats)},
    }


def main(argv: list[str] | None = None) -> dict | None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e7)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workdir", default=None, help="where the generated tables are (as engines.py)")
    parser.add_argument("--output", default=str(RESULTS / "engines_diagnosis.json"))
    parser.add_argument("--part", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    rows = int(args.rows)
    workdir = Path(args.workdir) if args.workdir else Path(os.environ.get("TMPDIR", "/tmp")) / "jostle-engines-benchmark"
    paths = generate(workdir, rows)
    if args.part:  # one part, in its own process
        result = diagnose_pandas(paths, args.repeats) if args.part == "pandas" else \
            diagnose_duckdb(args.part.split("/")[1], paths, args.repeats)
        print(json.dumps(result))
        return None
    report: dict = {"benchmark": "engines diagnosis (issue 14)", "rows": rows, "repeats": args.repeats,
                    "command": "python benchmarks/engines_diagnosis.py" + ("" if argv is None and len(sys.argv) < 2
                                                                           else " " + " ".join(sys.argv[1:])),
                    "load_average_before": [round(x, 2) for x in os.getloadavg()], "parts": {}}
    for part in ("duckdb/parquet", "duckdb/csv", "pandas"):
        print(f"diagnosis: {part}, {rows:,} rows", file=sys.stderr, flush=True)
        done = subprocess.run([sys.executable, __file__, "--part", part, "--rows", str(rows), "--repeats",
                               str(args.repeats), "--workdir", str(workdir)], cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            report["parts"][part] = {"error": done.stderr.strip().splitlines()[-1:]}
            continue
        report["parts"][part] = json.loads(done.stdout.strip().splitlines()[-1])
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    Path(args.output).write_text(json.dumps(rounded(report), indent=2) + "\n")
    print(json.dumps(rounded(report["parts"]), indent=1), file=sys.stderr)
    return report


if __name__ == "__main__":
    main()
