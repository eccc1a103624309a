"""Where a private table's rows go when it is bound or loaded: memory or an engine.

The route is public. It is decided, before any row is read, from the session's engine setting
(`Session(engine=...)`, `jostle run --engine`), the data's kind and, for the curator's binding
only, its size:
  * `pandas`, `duckdb`, `spark`: that route for every table;
  * `auto` (the default): a Parquet file goes to DuckDB; the curator's CSV file larger than
    `SMALL_TABLE_BYTES`, or DataFrame longer than `SMALL_TABLE_ROWS`, goes to DuckDB; every
    other table stays in memory, where small tables are fastest.
Why size may decide the curator's route and not a program's: whichever route a table takes,
a program sees the same values, errors and ledger (the same exact aggregates and the same noise
draws; a row function the engine cannot compile is run by the in-memory code on the engine's
rows, `jostle.language.tables`), except for timing. Reading a CSV file is where the routes
could differ, since DuckDB's and Spark's readers follow other rules than Python's on some
constructs (issue 21, hole 3: a quote after spaces, a record with a field too many, a quote never
closed, mixed line ends, bytes that are not UTF-8). So a CSV file's records are Jostle's reader's
on every route (`file_source`): an engine's reader reads the curator's file only when it gives
exactly those records, and the curator's binding reads strictly on every route, at bind time (an
unusable record is an error to the curator before any program runs), so a file binds to the same
rows on both sides of the threshold or to none. A program's `load` reads totally (unusable
records dropped) with Jostle's reader's records, on the engine the session names (its route
never depends on the file's size); the engine's own reader reads it when it gives exactly those
records and none is unusable (`_engine_view_for_program`), so a big file stays out of core.

The durable ledger's fingerprint (`jostle.data.engine.fingerprint`) is computed here, once,
by the engine holding the data (an in-process DuckDB for the in-memory route), and not at all
when the session's ledger is in memory: the store then only needs a key that tells tables
apart within the session, which the table's name and columns (public) give.
"""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jostle.data.engine import SMALL_TABLE_BYTES, SMALL_TABLE_ROWS, make_engine
from jostle.data.schema import DataError, _header_names
from jostle.privacy.ledger_store import PRIVACY_UNIT


@dataclass(frozen=True, eq=False)
class EngineSource:
    """Raw private rows held by an engine, not yet conformed to a schema."""

    engine: Any
    view: str
    path: Path | None = None
    frame: Any = None  # the curator's DataFrame, when the rows came as one

    @property
    def columns(self) -> list[str]:
        return self.engine.source_columns(self.view)


def table_engine(interp: Any, name: str) -> Any:
    """The session's engine object for `name` ('duckdb' or 'spark'), made once."""
    engines = interp.__dict__.setdefault("_engines", {})
    if name not in engines:
        engines[name] = make_engine(name, **getattr(interp, "engine_options", {}).get(name, {}))
    return engines[name]


def is_parquet(path: Path) -> bool:
    return path.suffix.lower() in (".parquet", ".pq")


def route_for_file(interp: Any, path: Path, by_curator: bool) -> str:
    """'pandas', 'duckdb' or 'spark' for a file: the session's setting, the file's kind and, for
    the curator's binding only, its size (see the module docstring)."""
    chosen = getattr(interp, "engine_name", "auto")
    if chosen != "auto":
        return chosen
    if is_parquet(path):
        return "duckdb"
    if not by_curator:
        return "pandas"
    try:
        size = path.stat().st_size
    except OSError:
        return "pandas"  # the reader names the problem
    return "duckdb" if size > SMALL_TABLE_BYTES else "pandas"


def route_for_frame(interp: Any, frame: Any) -> str:
    """The route of the curator's DataFrame: the session's setting, or its length under `auto`."""
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


def file_source(interp: Any, path: Path, engine_name: str, strict: bool) -> EngineSource:
    """A CSV or Parquet file as raw rows on an engine.

    A CSV file's records are Jostle's reader's (`jostle.data.schema.read_csv_file`) on every
    route, and so are its errors and the point where they are raised (here: at bind time for
    the curator, before any program runs; at the `load` for a program). The engine's own reader
    reads the file only on a strict route and only when it gives exactly those records
    (`engine.raw_csv(..., strict=True)`: the dialect scan `jostle.data.engine.csv_dialect` finds
    nothing on which the readers differ, and the engine's checks of the records it read find
    nothing Python would refuse); every other CSV is read by Jostle's reader and its rows go to
    the engine as a frame. Which reader ran shows in the curator's log only.

    Args:
        strict: The curator's or a public route: a CSV record the reader cannot use is an error
            (a DataError raised here, naming the line). Otherwise such records are dropped.
    """
    engine = table_engine(interp, engine_name)
    if is_parquet(path):
        if not path.exists():
            raise DataError(f"data file {path} does not exist")
        return EngineSource(engine, engine.raw_parquet(path), path)
    from jostle.data.engine import csv_dialect
    from jostle.data.schema import DATA_LOG, read_csv_file

    if strict:
        scanned = csv_dialect.scan(path)
        view = None
        if scanned.problem is None:
            view = engine.raw_csv(path, csv_header(path), strict=True, scanned=scanned)
            if view is not None:
                return EngineSource(engine, view, path)
        DATA_LOG.info("data file %s: read by Jostle's CSV reader, not %s's (%s)", path, engine_name,
                      scanned.problem or "a record it reads otherwise or not at all")
        frame = read_csv_file(path).checked()
    else:
        # A program's load keeps Jostle's reader's records on every route, whose dropping of
        # unusable records is 1-stable. DuckDB's reader with ignore_errors is not: a carriage
        # return ending one record of a file of newlines stops it with an error naming a line,
        # and a closed quote followed by text (`1,"a"b`) makes it drop every record after it
        # (tests/privacy/test_engine_audits.py). But where the engine's reader gives exactly
        # Jostle's records and none of them is unusable (the strict check above: nothing would
        # be dropped), it reads the file itself, out of core (issue 28: a program's load of 2
        # million rows held 3.9 GB in pandas where the curator's binding held 313 MB). The rows,
        # the errors and the ledger are the same either way; which reader ran shows in the
        # curator's log and in time and memory only.
        view = _engine_view_for_program(engine, path)
        if view is not None:
            return EngineSource(engine, view, path)
        frame = read_csv_file(path).rows_for_program(path.stem)
    return EngineSource(engine, engine.raw_frame(frame), path, frame=frame)


def _engine_view_for_program(engine: Any, path: Path) -> str | None:
    """The engine's strict view of a CSV file a program loads (`file_source`), or None when
    Jostle's reader must read it (a construct the readers read otherwise, an unusable record, a
    file without a header: its error is then Jostle's reader's, as on every route)."""
    from jostle.data.engine import csv_dialect
    from jostle.data.schema import DATA_LOG

    try:
        header = csv_header(path)
    except DataError:
        return None
    scanned = csv_dialect.scan(path)
    view = engine.raw_csv(path, header, strict=True, scanned=scanned) if scanned.problem is None else None
    if view is None:
        DATA_LOG.info("data file %s: a program's load read by Jostle's CSV reader, not %s's (%s)", path,
                      engine.name, scanned.problem or "a record it reads otherwise, or an unusable one")
    return view


def frame_source(interp: Any, frame: Any, engine_name: str) -> EngineSource:
    engine = table_engine(interp, engine_name)
    return EngineSource(engine, engine.raw_frame(frame), frame=frame)


def dataset_digest(interp: Any, raw: Any, name: str, columns: list[str]) -> bytes:
    """The content digest the durable ledger keys on; a public stand-in with an in-memory ledger.

    Shown as progress on stderr when it runs past two seconds (jostle.data.progress: one step
    per column and one for the rows, public steps)."""
    store = interp.accountant.store
    if store is None or not store.persistent:
        return hashlib.sha256(("jostle-in-memory/1\n" + name + "\n" + "\x1f".join(columns)).encode()).digest()
    from jostle.data.engine.content_digest import digest_steps
    from jostle.data.engine.fingerprint import engine_digest, frame_digest
    from jostle.data.progress import Steps

    with Steps(f"fingerprint of '{name}'", total=digest_steps(columns), unit="column") as steps:
        if isinstance(raw, EngineSource) and raw.frame is None:
            return engine_digest(raw.engine, raw.view, PRIVACY_UNIT, progress=steps)
        # A DataFrame is digested by frame_digest on every route, which canonicalises its typed
        # columns (dates, mixed objects) as its CSV file would hold them.
        return frame_digest(raw.frame if isinstance(raw, EngineSource) else raw, PRIVACY_UNIT, progress=steps)


def legacy_digest(raw: Any) -> bytes:
    """The version-2 content digest of the same rows (`dataset_digest`'s), for ledgers that hold
    contents recorded before version 3 (jostle.privacy.ledger_store.LedgerStore.needs_legacy_content)."""
    from jostle.data.engine.fingerprint import engine_digest_v2, frame_digest_v2

    if isinstance(raw, EngineSource) and raw.frame is None:
        return engine_digest_v2(raw.engine, raw.view, PRIVACY_UNIT)
    return frame_digest_v2(raw.frame if isinstance(raw, EngineSource) else raw, PRIVACY_UNIT)


def read_parquet_frame(path: Path) -> Any:
    """A Parquet file as a pandas frame (for the in-memory route), read by DuckDB."""
    import duckdb

    if not path.exists():
        raise DataError(f"data file {path} does not exist")
    text = str(path).replace("'", "''")
    try:
        return duckdb.connect().execute(f"SELECT * FROM read_parquet('{text}')").fetchdf()
    except duckdb.Error as error:  # a broken file: the same for neighbouring tables' files
        raise DataError(f"cannot read Parquet file {path}: {str(error).splitlines()[0]}") from None


__all__ = ["EngineSource", "route_for_file", "route_for_frame", "file_source", "frame_source", "dataset_digest",
           "table_engine", "csv_header", "read_parquet_frame", "is_parquet"]
