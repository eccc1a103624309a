"""The raw engines and the memory gauge of benchmarks/engines.py, in a module of their own.

`RAW_ENGINES` run the benchmark's aggregates as plain DuckDB SQL, pandas operations and Spark
DataFrame operations (what Jostle's overhead is measured against); `max_rss_bytes` reads the
peak resident memory of a measuring process and of its descendants (Spark's JVM). Run as part of
`python benchmarks/engines.py`; nothing here is run on its own.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

ENGINE_ORDER = ("pandas", "duckdb", "spark")  # the engines, in the order the report and plot give them


# ---------------------------------------------------------------- the raw engines
class RawDuckDB:
    """The same aggregates as plain DuckDB SQL, on a connection of its own."""

    def __init__(self, options: dict) -> None:
        import duckdb

        self.connection = duckdb.connect(":memory:")
        self.connection.execute("SET enable_progress_bar = false")
        if options.get("memory_limit"):
            self.connection.execute(f"SET memory_limit = '{options['memory_limit']}'")
        self.source = ""

    def read(self, kind: str, paths: dict[str, Path], frame: Any) -> float:
        start = time.perf_counter()
        if kind == "csv":
            self.connection.execute(
                f"CREATE TABLE raw AS SELECT * FROM read_csv('{paths['csv']}', header = true, auto_detect = false, "
                f"columns = {{'age': 'DOUBLE', 'region': 'VARCHAR', 'income': 'DOUBLE'}})")
            self.source = "raw"
        else:  # Jostle stores a bound Parquet table once, conformed: so is this
            self.connection.execute(f"CREATE TABLE raw AS SELECT * FROM read_parquet('{paths['parquet']}')")
            self.source = "raw"
        return time.perf_counter() - start

    def aggregate(self, query: str) -> Any:
        s = self.source
        sql = {"count": f"SELECT count(*) FROM {s}",
               "sum": f"SELECT sum(age) FROM {s}",
               "count_per_region": f"SELECT region, count(*) FROM {s} GROUP BY region",
               "histogram_10": f"SELECT least(CAST(floor(age / 10) AS INTEGER), 9) AS b, count(*) FROM {s} GROUP BY b",
               }[query]
        return self.connection.execute(sql).fetchall()


class RawPandas:
    """The same aggregates as pandas operations on a frame."""

    def __init__(self, options: dict) -> None:
        self.frame: Any = None

    def read(self, kind: str, paths: dict[str, Path], frame: Any) -> float | None:
        import pandas as pd

        if kind == "frame":
            self.frame = frame
            return None
        start = time.perf_counter()
        if kind == "csv":
            self.frame = pd.read_csv(paths["csv"])
        else:
            import duckdb

            self.frame = duckdb.connect().execute(f"SELECT * FROM read_parquet('{paths['parquet']}')").fetchdf()
        return time.perf_counter() - start

    def aggregate(self, query: str) -> Any:
        f = self.frame
        if query == "count":
            return len(f.index)
        if query == "sum":
            return f["age"].sum()
        if query == "count_per_region":
            return f["region"].value_counts()
        return f["age"].floordiv(10).clip(upper=9).value_counts()


class RawSpark:
    """The same aggregates as Spark DataFrame operations (the session Jostle's engine uses, if shared)."""

    def __init__(self, options: dict) -> None:
        from pyspark.sql import SparkSession

        self.spark = SparkSession.builder.getOrCreate()
        self.frame: Any = None

    def read(self, kind: str, paths: dict[str, Path], frame: Any) -> float:
        start = time.perf_counter()
        if kind == "csv":
            reader = self.spark.read.schema("age DOUBLE, region STRING, income DOUBLE").option("header", True)
            self.frame = reader.csv(str(paths["csv"]))
        else:
            self.frame = self.spark.read.parquet(str(paths["parquet"]))
        self.frame = self.frame.cache()
        self.frame.count()
        return time.perf_counter() - start

    def aggregate(self, query: str) -> Any:
        from pyspark.sql import functions as F

        f = self.frame
        if query == "count":
            return f.count()
        if query == "sum":
            return f.agg(F.sum("age")).collect()
        if query == "count_per_region":
            return f.groupBy("region").count().collect()
        bins = F.least(F.floor(F.col("age") / 10), F.lit(9)).alias("b")
        return f.select(bins).groupBy("b").count().collect()


RAW_ENGINES = {"duckdb": RawDuckDB, "pandas": RawPandas, "spark": RawSpark}


# ---------------------------------------------------------------- one measurement (a fresh process)
def max_rss_bytes() -> int:
    """This process's peak resident memory, plus that of its live descendants (Spark's JVM).

    Read from /proc (VmHWM), not from `ru_maxrss`: on Linux a process started by fork and exec
    inherits in `ru_maxrss` the high-water mark of its parent at the fork (the benchmark's own
    process, which may have generated a large table), while VmHWM counts only the program it
    runs. The JVM is not waited for by this process, so its own VmHWM is read too; peaks of
    different processes are added (an upper bound of their joint peak).
    """
    return sum(_peak_of(pid) for pid in [os.getpid(), *_descendants(os.getpid())])


def _descendants(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


def _peak_of(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0
