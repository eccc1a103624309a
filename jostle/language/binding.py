"""Where a private table's rows go when it is bound or loaded: memory or an engine.

The route is public: it depends on the session's engine setting, the file's kind and size, or
a DataFrame's length (the curator's data, bound before any program runs; a program's `load`
reads a file the program names), never on the values. The in-memory route (pandas) is the
original one and stays the default for small tables; beyond `SMALL_TABLE_BYTES` of CSV or
`SMALL_TABLE_ROWS` of DataFrame, and for every Parquet file, `auto` picks DuckDB.

The durable ledger's fingerprint (`jostle.data.engine.fingerprint`) is computed here, once,
by the engine holding the data (an in-process DuckDB for the in-memory route), and not at all
when the session's ledger is in memory: the store then only needs a key that tells tables
apart within the session, which the table's name and columns (public) give.
"""

from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jostle.data.engine import SMALL_TABLE_BYTES, SMALL_TABLE_ROWS, make_engine
from jostle.data.schema import DataError, _header_names
from jostle.privacy.ledger_store import PRIVACY_UNIT


@dataclass(frozen=True)
class EngineSource:
    """Raw private rows held by an engine, not yet conformed to a schema."""

    engine: Any
    view: str
    path: Path | None = None

    @property
    def columns(self) -> list[str]:
        return self.engine.source_columns(self.view)


def table_engine(interp: Any, name: str) -> Any:
    """The session's engine object for `name` ('duckdb' or 'spark'), made once."""
    engines = interp.__dict__.setdefault("_engines", {})
    if name not in engines:
        engines[name] = make_engine(name, **getattr(interp, "engine_options", {}).get(name, {}))
    return engines[name]


def route_for_file(interp: Any, path: Path) -> str:
    """'pandas', 'duckdb' or 'spark' for a file, from the session's setting and the file's kind and size."""
    chosen = getattr(interp, "engine_name", "auto")
    parquet = path.suffix.lower() in (".parquet", ".pq")
    if chosen != "auto":
        return chosen
    if parquet:
        return "duckdb"
    try:
        size = path.stat().st_size
    except OSError:
        return "pandas"  # the reader names the problem
    return "duckdb" if size > SMALL_TABLE_BYTES else "pandas"


def route_for_frame(interp: Any, frame: Any) -> str:
    chosen = getattr(interp, "engine_name", "auto")
    if chosen != "auto":
        return chosen
    return "duckdb" if len(frame) > SMALL_TABLE_ROWS else "pandas"


def csv_header(path: Path) -> list[str]:
    """The header of a CSV file (its first non-blank record), named as pandas would name it."""
    try:
        with open(path, encoding="utf-8-sig", errors="surrogateescape", newline="") as handle:
            for record in csv.reader(handle, skipinitialspace=True):
                if record and not (len(record) == 1 and not record[0].strip()):
                    return _header_names(record)
    except FileNotFoundError:
        raise DataError(f"data file {path} does not exist") from None
    except OSError as error:
        raise DataError(f"cannot read data file {path}: {error.strerror or error}") from None
    raise DataError(f"data file {path} is empty", hint="a CSV needs at least a header row")


def file_source(interp: Any, path: Path, engine_name: str) -> EngineSource:
    """A CSV or Parquet file as raw rows on an engine."""
    engine = table_engine(interp, engine_name)
    if path.suffix.lower() in (".parquet", ".pq"):
        if not path.exists():
            raise DataError(f"data file {path} does not exist")
        return EngineSource(engine, engine.raw_parquet(path), path)
    return EngineSource(engine, engine.raw_csv(path, csv_header(path)), path)


def frame_source(interp: Any, frame: Any, engine_name: str) -> EngineSource:
    engine = table_engine(interp, engine_name)
    return EngineSource(engine, engine.raw_frame(frame))


def dataset_digest(interp: Any, raw: Any, name: str, columns: list[str]) -> bytes:
    """The content digest the durable ledger keys on; a public stand-in with an in-memory ledger."""
    store = interp.accountant.store
    if store is None or not store.persistent:
        return hashlib.sha256(("jostle-in-memory/1\n" + name + "\n" + "\x1f".join(columns)).encode()).digest()
    from jostle.data.engine.fingerprint import engine_digest, frame_digest

    if isinstance(raw, EngineSource):
        return engine_digest(raw.engine, raw.view, PRIVACY_UNIT)
    return frame_digest(raw, PRIVACY_UNIT)


def read_parquet_frame(path: Path) -> Any:
    """A Parquet file as a pandas frame (for the in-memory route), read by DuckDB."""
    import duckdb

    if not path.exists():
        raise DataError(f"data file {path} does not exist")
    text = str(path).replace("'", "''")
    return duckdb.connect().execute(f"SELECT * FROM read_parquet('{text}')").fetchdf()


__all__ = ["EngineSource", "route_for_file", "route_for_frame", "file_source", "frame_source", "dataset_digest",
           "table_engine", "csv_header", "read_parquet_frame", "io"]
