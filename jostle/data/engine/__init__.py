"""Engines that hold private tables: in memory (pandas, for small tables), DuckDB, Spark.

A table's rows live on one engine. The in-memory path is the original one: a pandas frame,
row functions run by numpy, for small tables (fast to start, no query planning). Beyond
`SMALL_TABLE_BYTES` of input, or for any Parquet file, the default is DuckDB; Spark is chosen
explicitly (`--engine spark`, `Session(engine="spark")`). Whichever engine runs, the language
does the same privacy analysis and the driver draws the noise; answers are the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ENGINE_NAMES = ("auto", "pandas", "duckdb", "spark")
SMALL_TABLE_BYTES = 8 * 1024 * 1024  # a CSV up to this size is read into memory (pandas)
SMALL_TABLE_ROWS = 200_000           # a DataFrame up to this many rows stays in memory


def make_engine(name: str, **options: Any) -> Any:
    """An engine object for a name ('duckdb' or 'spark'); 'pandas' and 'auto' give None here."""
    if name == "duckdb":
        from jostle.data.engine.duckdb_engine import DuckDBEngine

        return DuckDBEngine(**options)
    if name == "spark":
        from jostle.data.engine.spark_engine import SparkEngine

        return SparkEngine(**options)
    if name in ("pandas", "auto"):
        return None
    raise ValueError(f"unknown engine {name!r}; the engines are {', '.join(ENGINE_NAMES)}")


def holds_quote(path: Path) -> bool:
    """Whether a file holds a double quote anywhere (one streaming pass over its bytes).

    A CSV file without one has no quoted field, so no record spans a line break: the engines
    then split it across threads or tasks (DuckDB's parallel scanner, Spark without multiLine).
    With one, they read it as one stream, which Python's reader matches on quoted line breaks.
    The choice changes only the speed of the read, never its records. An unreadable file
    counts as holding none: the engine names the problem when it reads it.
    """
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 24):
                if b'"' in chunk:
                    return True
    except OSError:
        return False
    return False
