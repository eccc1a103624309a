"""The durable ledger's content fingerprint against DuckDB's own scan of the file (issue 28).

For a CSV file and a Parquet file of the same rows (given with --data, else generated: an
Adult-like table of 15 columns, 2 million rows, 200,000 with --quick, from a deterministic hash
of the row number, written by DuckDB under --workdir), each repetition times, on a fresh DuckDB
engine (one process, the engine's default threads):

  * `scan`: DuckDB's own read of every column of the file, as Jostle reads it: the CSV through
    Jostle's strict raw view (`DuckDBEngine.raw_csv`, all cells text), Parquet through
    `raw_parquet`, consumed by `count(*)` over an expression of every column (so no column is
    skipped), the engine's floor for anything that reads every cell;
  * `v3`: the fingerprint a durable ledger computes now (jostle.data.engine.content_digest);
  * `v2`: the fingerprint of version 2 (jostle.data.engine.fingerprint.engine_digest_v2), what
    it computed before issue 28 (skipped with --no-v2).

The order of the three is rotated between repetitions. Reported: the median and a 95% interval
of the median (order statistics of the binomial, exact for any distribution), each ratio to the
scan's median, and the digests (v3 must agree between the CSV and the Parquet file).

Writes benchmarks/results/fingerprint.json (fingerprint_quick.json with --quick). Progress
goes to stderr.

Usage (from the repository root):
    python benchmarks/fingerprint.py [--quick] [--data FILE.csv FILE.parquet] [--rows N]
                                     [--repeats 7] [--workdir DIR] [--no-v2] [--memory-limit 1GB]
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "benchmarks" / "results"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- data
def _hash(i: str, k: int) -> str:
    """A deterministic whole number in [0, 4294967291) from the row number (DuckDB's hash() is
    not stable across versions)."""
    return f"CAST(((({i}) + 1) * {2654435761 + 2 * k} + {k * 40503}) % 4294967291 AS BIGINT)"


def _pick(values: list[str], k: int) -> str:
    listed = ", ".join("'" + v.replace("'", "''") + "'" for v in values)
    return f"[{listed}][1 + {_hash('i', k)} % {len(values)}]"


def adult_like_query(rows: int) -> str:
    """SQL of an Adult-like table (the UCI Adult columns, values drawn by a hash of the row)."""
    h = _hash
    return f"""SELECT 17 + {h('i', 1)} % 74 AS age,
 {_pick(['Private', 'Self-emp-not-inc', 'Self-emp-inc', 'Federal-gov', 'Local-gov', 'State-gov', 'Without-pay', '?'], 2)} AS workclass,
 10000 + {h('i', 3)} % 1400000 AS fnlwgt,
 {_pick(['Bachelors', 'Some-college', '11th', 'HS-grad', 'Prof-school', 'Assoc-acdm', 'Assoc-voc', '9th', '7th-8th',
         '12th', 'Masters', '1st-4th', '10th', 'Doctorate', '5th-6th', 'Preschool'], 4)} AS education,
 1 + {h('i', 5)} % 16 AS education_num,
 {_pick(['Married-civ-spouse', 'Divorced', 'Never-married', 'Separated', 'Widowed', 'Married-spouse-absent',
         'Married-AF-spouse'], 6)} AS marital_status,
 {_pick(['Tech-support', 'Craft-repair', 'Other-service', 'Sales', 'Exec-managerial', 'Prof-specialty',
         'Handlers-cleaners', 'Machine-op-inspct', 'Adm-clerical', 'Farming-fishing', 'Transport-moving',
         'Priv-house-serv', 'Protective-serv', 'Armed-Forces', '?'], 7)} AS occupation,
 {_pick(['Wife', 'Own-child', 'Husband', 'Not-in-family', 'Other-relative', 'Unmarried'], 8)} AS relationship,
 {_pick(['White', 'Asian-Pac-Islander', 'Amer-Indian-Eskimo', 'Other', 'Black'], 9)} AS race,
 {_pick(['Female', 'Male'], 10)} AS sex,
 CASE WHEN {h('i', 11)} % 10 = 0 THEN {h('i', 12)} % 99999 ELSE 0 END AS capital_gain,
 CASE WHEN {h('i', 13)} % 20 = 0 THEN {h('i', 14)} % 4356 ELSE 0 END AS capital_loss,
 1 + {h('i', 15)} % 99 AS hours_per_week,
 {_pick(['United-States', 'Mexico', 'Philippines', 'Germany', 'Canada', 'India', '?'], 16)} AS native_country,
 {_pick(['<=50K', '>50K'], 17)} AS income
FROM range({rows}) t(i)"""


def generate(rows: int, folder: Path) -> tuple[Path, Path]:
    """The CSV and Parquet files of `rows` generated rows (made once, then reused)."""
    import duckdb

    folder.mkdir(parents=True, exist_ok=True)
    csv, parquet = folder / f"adult_like_{rows}.csv", folder / f"adult_like_{rows}.parquet"
    connection = duckdb.connect()
    query = adult_like_query(rows)
    if not csv.exists():
        log(f"writing {csv}")
        connection.execute(f"COPY ({query}) TO '{csv}' (HEADER, DELIMITER ',')")
    if not parquet.exists():
        log(f"writing {parquet}")
        connection.execute(f"COPY ({query}) TO '{parquet}' (FORMAT PARQUET)")
    return csv, parquet


# ---------------------------------------------------------------- timing
def raw_view(engine: Any, path: Path) -> str:
    from jostle.language.binding import csv_header

    if path.suffix.lower() == ".csv":
        view = engine.raw_csv(path, csv_header(path), strict=True)
        if view is None:
            raise SystemExit(f"{path}: DuckDB's reader does not read it as Jostle's does (see the curator's log)")
        return view
    return engine.raw_parquet(path)


def measure(path: Path, method: str, memory_limit: str | None) -> tuple[float, str]:
    """Seconds for one method on a fresh engine, and what it computed (a digest or a row count)."""
    from jostle.data.engine.duckdb_engine import DuckDBEngine
    from jostle.data.engine.expressions import quote
    from jostle.data.engine.fingerprint import engine_digest, engine_digest_v2

    engine = DuckDBEngine(memory_limit=memory_limit)
    view = raw_view(engine, path)
    started = time.perf_counter()
    if method == "scan":
        every = " + ".join(f"length(CAST({quote(c)} AS VARCHAR))" for c in engine.source_columns(view))
        result = str(engine.query(f"SELECT count(*), sum({every}) FROM {view}")[0])
    elif method == "v3":
        result = engine_digest(engine, view, "row").hex()
    else:
        result = engine_digest_v2(engine, view, "row").hex()
    return time.perf_counter() - started, result


def median_interval(values: list[float]) -> dict[str, Any]:
    """The median and a distribution-free 95% interval of it (binomial order statistics; the
    whole range when there are too few runs for 95%)."""
    ordered = sorted(values)
    n = len(ordered)
    low, high = 0, n - 1
    for k in range(n // 2):  # widest-first search for the narrowest interval with >= 95% coverage
        coverage = sum(math.comb(n, j) for j in range(k + 1, n - k)) / 2 ** n
        if coverage >= 0.95:
            low, high = k + 1, n - k - 2
        else:
            break
    low, high = min(low, n - 1), max(high, 0)
    if low > high:
        low, high = 0, n - 1
    coverage = sum(math.comb(n, j) for j in range(low + 1, high + 1)) / 2 ** n if n else 0.0
    return {"median": statistics.median(ordered), "low": ordered[low], "high": ordered[high],
            "coverage": round(coverage, 4), "runs": n, "seconds": [round(v, 4) for v in values]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200,000 generated rows, 5 repetitions")
    parser.add_argument("--data", nargs="+", type=Path, help="CSV and/or Parquet files (instead of generated ones)")
    parser.add_argument("--rows", type=float, default=None, help="generated rows (default 2e6, 2e5 with --quick)")
    parser.add_argument("--repeats", type=int, default=None, help="repetitions (default 7, 5 with --quick)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "jostle-fingerprint-bench")
    parser.add_argument("--no-v2", action="store_true", help="do not time version 2 (slow)")
    parser.add_argument("--memory-limit", default=None, help="DuckDB's memory limit, e.g. 1GB")
    args = parser.parse_args()
    rows = int(args.rows or (2e5 if args.quick else 2e6))
    repeats = args.repeats or (5 if args.quick else 7)
    files = args.data or list(generate(rows, args.workdir))
    methods = ["scan", "v3"] + ([] if args.no_v2 else ["v2"])
    results: dict[str, Any] = {}
    for path in files:
        kind = "csv" if path.suffix.lower() == ".csv" else "parquet"
        times: dict[str, list[float]] = {m: [] for m in methods}
        outputs: dict[str, set[str]] = {m: set() for m in methods}
        for repeat in range(repeats):
            order = methods[repeat % len(methods):] + methods[:repeat % len(methods)]
            for method in order:
                seconds, output = measure(path, method, args.memory_limit)
                times[method].append(seconds)
                outputs[method].add(output)
                log(f"{path.name} {method} #{repeat + 1}: {seconds:.2f} s")
        summary = {m: median_interval(times[m]) for m in methods}
        scan = summary["scan"]["median"]
        for m in methods:
            summary[m]["ratio_to_scan"] = round(summary[m]["median"] / scan, 2)
            summary[m]["outputs"] = sorted(outputs[m])
        results[kind] = {"file": str(path), "bytes": path.stat().st_size, **summary}
    digests = {kind: r["v3"]["outputs"] for kind, r in results.items()}
    report = {
        "what": "the durable ledger's content fingerprint (v3 now, v2 before issue 28) against DuckDB's scan of "
                "every column of the same file, each on a fresh DuckDB engine, order rotated",
        "command": "python benchmarks/fingerprint.py " + " ".join(sys.argv[1:]),
        "rows": None if args.data else rows,
        "repeats": repeats,
        "machine": {"python": platform.python_version(), "processor": platform.processor() or platform.machine(),
                    "note": "a shared 2-core machine: other jobs ran at the same time, so intervals are wide"},
        "results": results,
        "v3_same_digest_for_csv_and_parquet": len({d for ds in digests.values() for d in ds}) == 1,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / ("fingerprint_quick.json" if args.quick else "fingerprint.json")
    out.write_text(json.dumps(report, indent=2) + "\n")
    for kind, r in results.items():
        line = ", ".join(f"{m} {r[m]['median']:.2f} s [{r[m]['low']:.2f}, {r[m]['high']:.2f}] "
                         f"({r[m]['ratio_to_scan']}x scan)" for m in methods)
        print(f"{kind}: {line}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
