"""DuckDB, the embedded default engine for tables beyond a small one.

Why DuckDB (pyproject.toml says it too): it scans CSV and Parquet files in parallel without
loading them whole, spills to disk beyond memory, runs the joins the ILP family will need,
computes 128-bit integer sums (the exact sums below), and runs in-process with no server. One
connection per engine object; raw sources are views (a CSV or Parquet scan, a registered
DataFrame) and a bound table is stored once, conformed (spilled to a private temporary folder
beyond the memory limit).

What runs here: schema conformance (`conform_sql`, the rules of `jostle.data.schema.conform`
as SQL), the plan of a `Relation`, and exact aggregates. Noise is never drawn here: the
language receives the exact count, the exact sum (as per-exponent integer mantissa sums) or
the histogram counts, and the driver's exact samplers add the noise.
"""

from __future__ import annotations

import contextlib
import csv
import itertools
import math
import threading
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from jostle.data.engine import csv_dialect, holds_quote
from jostle.data.engine.aggregates import SqlAggregates
from jostle.data.engine.conform import conform_query, first_breaking_row
from jostle.data.engine.csv_dialect import CsvScan, python_whitespace
from jostle.data.engine.expressions import literal, quote
from jostle.data.engine.frames import frame_rows_matching
from jostle.data.engine.relation import Relation
from jostle.data.schema import DATA_LOG, Categorical, DataError, Schema, breaking_hint

_counter = itertools.count()


class DuckDBEngine(SqlAggregates):
    """Private tables on an in-process DuckDB database.

    Args:
        memory_limit: DuckDB's memory limit (e.g. "4GB"); beyond it DuckDB spills to
            `temp_directory`. None keeps DuckDB's default (80% of the machine's memory).
        temp_directory: Where to spill; None: a new folder of the system's temporary directory,
            removed with the engine (DuckDB's default, `.tmp` in the working directory, would
            leave spilled private rows beside the user's files).
        threads: Worker threads; None keeps DuckDB's default (all cores).
    """

    name = "duckdb"
    dialect = "duckdb"

    def __init__(self, memory_limit: str | None = None, temp_directory: str | None = None,
                 threads: int | None = None) -> None:
        import duckdb

        self.connection = duckdb.connect(":memory:")
        if memory_limit:
            self.connection.execute(f"SET memory_limit = '{memory_limit}'")
        if temp_directory is None:
            import shutil
            import tempfile
            import weakref

            temp_directory = tempfile.mkdtemp(prefix="jostle-duckdb-")
            # removed silently when the engine goes (TemporaryDirectory would warn on stderr)
            weakref.finalize(self, shutil.rmtree, temp_directory, True)
        self.connection.execute(f"SET temp_directory = '{_path(Path(temp_directory))}'")
        if threads:
            self.connection.execute(f"SET threads = {int(threads)}")
        self.connection.execute("SET preserve_insertion_order = true")
        # No progress bar: DuckDB prints one to stdout for a query past 2 s, which would put the
        # engine's timing (so the table's size) into a program's output.
        self.connection.execute("SET enable_progress_bar = false")
        self._columns: dict[str, list[str]] = {}
        self._frames: dict[str, Any] = {}  # raw views of a DataFrame: the frame itself
        self._registered: set[str] = set()  # those registered with DuckDB (`raw_frame`)
        self._columnar: set[str] = set()  # raw views of a Parquet file: cheap to scan column by column
        self._group_cache: dict[tuple, dict[tuple[int, ...], int]] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return "<duckdb engine>"

    def __reduce__(self) -> Any:  # a fresh engine in another process (tables do not travel)
        return (DuckDBEngine, ())

    # ------------------------------------------------------------ running SQL
    def query(self, sql: str, parameters: list | None = None) -> list[tuple]:
        with self._lock:
            return self.connection.execute(sql, parameters or []).fetchall()

    def chunks(self, sql: str, vectors: int = 1024) -> Iterator[Any]:
        """A query's rows as pandas frames of about `vectors` * 2048 rows each, read in turn (the
        whole result is never held at once)."""
        with self._lock:
            cursor = self.connection.execute(sql)
            while True:
                chunk = cursor.fetch_df_chunk(vectors)
                if not len(chunk):
                    return
                yield chunk

    def _fresh(self, prefix: str) -> str:
        return f"jostle_{prefix}_{next(_counter)}"

    def source_columns(self, source: str) -> list[str]:
        return self._columns[source]

    # ------------------------------------------------------------ raw sources
    def raw_csv(self, path: Path, header: list[str], strict: bool = False,
                scanned: CsvScan | None = None) -> str | None:
        """A view of a CSV file's records as text cells (no typing: the schema types them).

        With `strict` (the curator's and public routes), the view holds exactly the records of
        Jostle's reader (`jostle.data.schema.read_csv_file`), checked now, or there is none
        (None): the file holds a construct on which DuckDB's reader and Python's differ
        (`csv_dialect.scan`), a record Python cannot use (more fields than the header, a field
        longer than Python's csv field limit), or DuckDB failed to read it. The caller then
        reads the file with Jostle's reader, which also names its unusable records, so the
        rows and the errors, and when they come (now, at bind time), are the same on every
        route (issue 21, hole 3). Without `strict` (tests only: a program's `load` uses
        Jostle's reader on every route) unusable records are skipped.

        How DuckDB's reader is held to Python's rules on the files the scan lets through: one
        column more than the header, so a record with one field too many shows it there (DuckDB
        takes a record with trailing empty fields too many as the header's length, refuses
        others); empty fields read as '' (`nullstr` is a line feed, which no unquoted field
        holds, and quoted fields are never missing), so only a record shorter than the header
        has missing cells, as in Python; a record of one field that is blank (Python's
        str.strip) is skipped, as Python skips blank lines; spaces after a comma are skipped
        (`ltrim`, Python's skipinitialspace; the scan refuses a quoted field that starts with a
        space, which ltrim would also trim). The check is one scan of the file that reads only
        the extra column: an unquoted field longer than Python's csv limit makes a line longer
        than the limit, which DuckDB refuses (`max_line_size`; a line that long is then left to
        Jostle's reader), and the dialect scan refuses a quoted one. (The check costs about a
        quarter of a bind with the curator's schema, which reads the file again: storing the raw
        text once instead cost more than reading it twice.)

        Args:
            strict: See above.
            scanned: The file's `csv_dialect.scan`, if the caller has it (scanned otherwise).
        """
        import duckdb

        if strict:
            scanned = scanned or csv_dialect.scan(path)
            if scanned.problem is not None:
                return None
        # A record may span lines only where a quoted field holds a line break; such a file is
        # read by one thread: DuckDB's parallel scanner refuses a quoted line break together with
        # null_padding ("The parallel scanner does not support null_padding in conjunction with
        # quoted new lines"), an error naming a line.
        spanning = scanned.quoted_line_break if scanned is not None else holds_quote(path)
        extra = "__jostle_extra"
        while extra in header:
            extra += "_"
        names = list(header) + [extra]
        columns = "{" + ", ".join(f"'{n.replace(chr(39), chr(39) * 2)}': 'VARCHAR'" for n in names) + "}"
        source = (f"read_csv('{_path(path)}', header = true, columns = {columns}, all_varchar = true, "
                  f"null_padding = true, nullstr = '\n', allow_quoted_nulls = false, "
                  f"ignore_errors = {'false' if strict else 'true'}, auto_detect = false, delim = ',', "
                  f"quote = '\"', escape = '\"', strict_mode = true, parallel = {'false' if spanning else 'true'}")
        limit = csv.field_size_limit()
        unusable = " OR ".join([f"{quote(extra)} IS NOT NULL"] + [f"strlen({quote(n)}) > {limit}" for n in header])
        # ltrim(x, ' ') only where x starts with a space: the same text, and ltrim with a set of
        # characters costs about as much as reading the CSV (0.5 s per million rows of 3 columns).
        cells = ", ".join(f"(CASE WHEN {quote(n)} ^@ ' ' THEN ltrim({quote(n)}, ' ') ELSE {quote(n)} END) AS {quote(n)}"
                          for n in header)
        second = quote(names[1])  # missing only in a record of one field
        blank = (f"{second} IS NULL AND regexp_full_match(coalesce({quote(header[0])}, ''), "
                 f"'[{python_whitespace()}]*')")
        usable = f"NOT ({blank})" if strict else f"NOT ({blank}) AND NOT ({unusable})"
        if strict:
            check = f"SELECT 1 FROM {source}, max_line_size = {max(limit, 1)}) WHERE {quote(extra)} IS NOT NULL LIMIT 1"
            try:
                if self.query(check):
                    return None
            except duckdb.Error:
                return None  # DuckDB could not read it: Jostle's reader says why, or reads it
        view = self._fresh("raw")
        self.query(f"CREATE VIEW {view} AS SELECT {cells} FROM {source}) WHERE {usable}")
        self._columns[view] = list(header)
        return view

    def raw_parquet(self, path: Path) -> str:
        view = self._fresh("raw")
        self.query(f"CREATE VIEW {view} AS SELECT * FROM read_parquet('{_path(path)}')")
        self._columns[view] = [row[0] for row in self.query(f"DESCRIBE {view}")]
        self._columnar.add(view)
        return view

    @contextlib.contextmanager
    def digest_scope(self, raw: str) -> Iterator[tuple[str, Callable[[str], str]]]:
        """(a source with the rows of `raw`, a function storing a query's rows as a temporary table
        and naming it), for the content digest (jostle.data.engine.content_digest), which scans
        each column once and then the rows: a Parquet view is scanned as it is; a CSV view or a
        DataFrame is first stored (spilled beyond the memory limit), so the file is parsed once,
        not once per column. Everything stored is dropped on exit (a curator's binding conforms
        the rows before it fingerprints them: jostle.session.Session.bind_private)."""
        self._register(raw)
        made: list[str] = []

        def keep(sql: str) -> str:
            name = self._fresh("digest")
            self.query(f"CREATE TEMP TABLE {name} AS {sql}")
            made.append(name)
            return name

        try:
            yield (raw if raw in self._columnar else keep(f"SELECT * FROM {raw}")), keep
        finally:
            for name in made:
                self.query(f"DROP TABLE IF EXISTS {name}")

    def raw_frame(self, frame: Any) -> str:
        """A pandas DataFrame as a raw view. `bind` conforms it in memory, cell by cell, and the
        frame is registered with DuckDB only when SQL first reads the view (`raw_types`, which
        `fingerprint.engine_digest` calls first, or `store_conformed`): DuckDB's registration
        types each object column from its cells and raised on some (a NumPy array of texts,
        issue 21 hole 4), which would fail the curator's binding on one row."""
        view = self._fresh("raw")
        self._columns[view] = [str(c) for c in frame.columns]
        self._frames[view] = frame
        return view

    def raw_where_matches(self, view: str, column: str, pattern: str) -> str:
        """A raw view of the rows of `view` whose `column` is missing or, as text, matches the
        regular expression `pattern` in full (a frame's rows are filtered in memory, keeping it a
        frame that `bind` conforms by the in-memory rules). Whether a row is kept depends on that
        row alone."""
        if view in self._frames:
            return self.raw_frame(frame_rows_matching(self._frames[view], column, pattern))
        new = self._fresh("raw")
        column_sql = quote(column)
        self.query(f"CREATE VIEW {new} AS SELECT * FROM {view} WHERE {column_sql} IS NULL OR "
                   f"regexp_full_match(CAST({column_sql} AS VARCHAR), '{pattern.replace(chr(39), chr(39) * 2)}')")
        self._columns[new] = list(self._columns[view])
        return new

    def _register(self, view: str) -> None:
        """Register a raw frame's view with DuckDB, once (see `raw_frame`)."""
        with self._lock:
            if view in self._frames and view not in self._registered:
                self.connection.register(view, self._frames[view])
                self._registered.add(view)

    def raw_types(self, view: str) -> dict[str, str]:
        self._register(view)
        return {row[0]: row[1] for row in self.query(f"DESCRIBE {view}")}

    # ------------------------------------------------------------ binding
    def bind(self, raw: str, schema: Schema, table: str, strict: bool, materialise: bool) -> Relation:
        """Conform a raw source to a public schema, as `jostle.data.schema.conform` does.

        Args:
            raw: A raw view (`raw_csv`, `raw_parquet`, `raw_frame`).
            schema: The public schema.
            table: The table's name, for messages.
            strict: The curator's schema: a breaking value is a DataError naming the row.
                Otherwise rows breaking a column without a default are dropped, counted to the
                curator's logger only.
            materialise: Store the conformed rows (the source is then read once); otherwise a
                view that scans and conforms the source on each query.
        """
        import duckdb

        try:
            return self._bind(raw, schema, table, strict, materialise)
        except duckdb.Error as error:
            # Only a strict read (the curator's or a public route) raises on a record: named to
            # the curator before any program runs. A program's route skips such records.
            raise DataError(f"table '{table}': cannot read its data: {str(error).splitlines()[0]}",
                            hint="fix the file: each record needs as many fields as the header, "
                            "quotes must be closed, and the text must be UTF-8") from None

    def _bind(self, raw: str, schema: Schema, table: str, strict: bool, materialise: bool) -> Relation:
        if raw in self._frames:
            # A DataFrame is conformed by the in-memory rules (jostle.data.schema.conform), cell by
            # cell as Python values, and the result stored here. Not in SQL: DuckDB types an object
            # column from all its values, so one row (a boolean or bytes among numbers, a text with
            # a byte that was not UTF-8) made the query fail with an error quoting it, and one text
            # among whole numbers turned every other row's 1 into the text "1", moving all of them
            # to another category of a domain such as ["1", 1]. Per cell, each row's value depends
            # on that row alone (1-stable), exactly as in memory (tests/privacy/test_engine_audits.py).
            # conform_frame gives conform's result once per distinct value where it can.
            from jostle.data.engine.frames import conform_frame

            conformed = conform_frame(self._frames[raw], schema, table, strict=strict)
            return self.store_conformed(conformed, schema)
        available = self.source_columns(raw)
        missing = [name for name in schema.names if name not in available]
        if missing:
            raise DataError(f"table '{table}' has no column {', '.join(repr(m) for m in missing)}",
                            hint=f"its columns are {available}; fix the schema or the file")
        types = self.raw_types(raw)
        select, problems = conform_query(raw, schema, types, self.dialect)
        if problems:
            bad = " OR ".join(f"({p})" for _, p in problems)
            if strict:
                stored = self._store_checked(raw, select, bad, schema) if materialise else None
                if stored is not None:
                    return stored
                # A view (Parquet): one streaming scan says whether any row breaks the schema; only
                # then the query that names the first one, whose numbering of every row (a window)
                # made the bind of 1e7 rows 6.1 s instead of 2.3 s (benchmarks/engines_diagnosis.py).
                breaks = materialise or self.query(f"SELECT bool_or({bad}) FROM {raw}")[0][0]
                broken = first_breaking_row(self, raw, schema, types, problems) if breaks else None
                if broken is not None:
                    raise DataError(f"table '{table}', column '{broken[0]}', row {broken[1]}: the value {broken[2]}",
                                    hint=breaking_hint(broken[0], schema[broken[0]]))
            else:
                dropped = self.query(f"SELECT count(*) FROM {raw} WHERE {bad}")[0][0]
                if dropped:
                    total = self.query(f"SELECT count(*) FROM {raw}")[0][0]
                    DATA_LOG.warning("table '%s': %d of %d rows dropped by the schema the program declared",
                                     table, dropped, total)
                select = f"{select} WHERE NOT ({bad})"
        name = self._fresh("table")
        kind = "TABLE" if materialise else "VIEW"
        self.query(f"CREATE {kind} {name} AS {select}")
        self._columns[name] = list(schema.names)
        return Relation(self, name, schema)

    def _store_checked(self, raw: str, select: str, bad: str, schema: Schema) -> Relation | None:
        """The conformed rows stored in one scan of `raw`, or None when a row breaks the schema.

        Each row is stored with a flag saying whether it breaks the curator's schema, so the
        check and the conformance read the source once (a CSV is parsed once, not twice); the
        flag is then dropped. When a row breaks it, nothing is kept and the caller names the
        first such row (`first_breaking_row`), as it would have without this.
        """
        source, flag = f" FROM {raw}", self._fresh("broken")
        if not select.endswith(source) or flag in schema.names:
            return None
        name = self._fresh("table")
        self.query(f"CREATE TABLE {name} AS {select[:-len(source)]}, ({bad}) AS {flag}{source}")
        if self.query(f"SELECT 1 FROM {name} WHERE {flag} LIMIT 1"):
            self.query(f"DROP TABLE {name}")
            return None
        self.query(f"ALTER TABLE {name} DROP COLUMN {flag}")
        self._columns[name] = list(schema.names)
        return Relation(self, name, schema)

    def store_conformed(self, frame: Any, schema: Schema) -> Relation:
        """Rows already conformed to `schema` (values in their domains), stored as a new table.

        For a step computed in memory (jostle.language.tables._on_engine): categorical values
        become their codes (the position in the public domain), numbers DOUBLE.
        """
        import pandas as pd

        stored = {}
        for name, spec in schema.columns:
            if isinstance(spec, Categorical):
                codes = {value: code for code, value in reversed(list(enumerate(spec.values)))}
                stored[name] = pd.Series([codes[v] for v in frame[name].tolist()], dtype=np.int64)
            else:
                stored[name] = frame[name].astype(float).reset_index(drop=True)
        view = self.raw_frame(pd.DataFrame(stored, columns=list(schema.names)))
        self._register(view)
        name = self._fresh("table")
        self.query(f"CREATE TABLE {name} AS SELECT * FROM {view}")
        self._columns[name] = list(schema.names)
        return Relation(self, name, schema)

    # ------------------------------------------------------------ aggregates (exact)
    def sum_parts(self, relation: Relation, column: str) -> list[tuple[int, int]]:
        """The exact sum of a numeric column as [(exponent e, integer S_e)]: sum = sum S_e 2^e.

        Fast path: one scan of whole-number arithmetic, no logarithm. The column's public bound
        gives T with 2^T > max(|lo|, |hi|). A row with |x| < 2^T is split exactly as
        x = q1 2^(T-62) + q2 2^(T-124) + r2:
          * q1 = trunc(x 2^(62-T)), a whole number below 2^62. The product by a power of two is
            exact when it is a normal double and only a subnormal one (far below 1) can round,
            which truncates to 0 anyway; q1 keeps at most 53 significant bits, so q1 2^(T-62) is
            exact, and r1 = x - q1 2^(T-62) (x with its bits from 2^(T-62) up cleared, same
            sign) is representable, so the subtraction is exact; |r1| < 2^(T-62);
          * q2, r2 likewise from r1 on the grid 2^(T-124).
        The q1 and q2 are summed in DuckDB's 128-bit integers (no overflow below 2^65 rows). r2
        is 0 unless x has bits below 2^(T-124), i.e. |x| < 2^(T-72): only then (and for a row
        not below 2^T, which a conformed value never is; handled so that the sum never relies
        on the bound) is a second scan made, summing those r2 by their exponents
        (`_exponent_parts`). The parts add up to exactly the sum the exponent rule alone gives.
        T is kept where every factor and grid unit is a normal double.
        """
        spec = relation.schema[column]
        magnitude = max(abs(float(spec.lo)), abs(float(spec.hi)))
        top = math.frexp(magnitude)[1]  # 2^(top-1) <= magnitude < 2^top (top = 0 for 0)
        if not -890 <= top <= 960:
            return self._exponent_parts(relation.sql(), quote(column))

        def power(k: int) -> str:
            return literal(2.0 ** k).sql

        first = (f"SELECT x, CASE WHEN abs(x) < {power(top)} THEN CAST(trunc(x * {power(62 - top)}) AS BIGINT) "
                 f"ELSE 0 END AS q1 FROM (SELECT {quote(column)} AS x FROM ({relation.sql()}) AS s) AS a")
        rest = f"SELECT q1, x - CAST(q1 AS DOUBLE) * {power(top - 62)} AS r1 FROM ({first}) AS b"
        second = (f"SELECT q1, r1, CASE WHEN abs(r1) < {power(top - 62)} THEN CAST(trunc(r1 * {power(124 - top)}) "
                  f"AS BIGINT) ELSE 0 END AS q2 FROM ({rest}) AS c")
        split = f"SELECT q1, q2, r1 - CAST(q2 AS DOUBLE) * {power(top - 124)} AS r2 FROM ({second}) AS d"
        high, low, left = self.query(f"SELECT CAST(sum(q1) AS VARCHAR), CAST(sum(q2) AS VARCHAR), "
                                     f"count(*) FILTER (WHERE r2 <> 0) FROM ({split}) AS f")[0]
        parts = [(top - 62, int(high or 0)), (top - 124, int(low or 0))]
        if left:
            parts += self._exponent_parts(f"SELECT r2 FROM ({split}) AS g WHERE r2 <> 0", "r2")
        return parts

    def _exponent_parts(self, relation_sql: str, value: str) -> list[tuple[int, int]]:
        """The exact sum of `value` over `relation_sql`, grouped by each value's binary exponent.

        Each double x != 0 is x = m 2^(e - 52) with e = floor(log2 |x|) - 1 (one below its
        binary exponent, so the scaled m = x 2^(52 - e) is a whole number below 2^55 even when
        log2 rounds up near a power of two); the scaling by 2^(52 - e) is done in two halves so
        no factor overflows, and is exact (a power of two, no underflow: the result is >= 2^52).
        The m of one exponent are summed in DuckDB's 128-bit integers, which cannot overflow
        below 2^72 rows. The per-exponent totals are combined exactly by the language
        (`jostle.language.tables._engine_sum`).
        """
        inner = (f"SELECT CAST(floor(log2(abs({value}))) AS INTEGER) - 1 AS e, {value} AS x "
                 f"FROM ({relation_sql}) AS s WHERE {value} <> 0")
        half = "CAST(floor((52 - e) / 2.0) AS INTEGER)"
        scaled = f"x * pow(2.0, {half}) * pow(2.0, (52 - e) - {half})"
        rows = self.query(f"SELECT e, CAST(sum(CAST({scaled} AS BIGINT)) AS VARCHAR) FROM ({inner}) AS p GROUP BY e")
        return [(int(e) - 52, int(total)) for e, total in rows]

    def collect(self, relation: Relation) -> Any:
        """The rows as a pandas frame, categorical codes decoded to their domain values."""
        import pandas as pd

        with self._lock:
            frame = self.connection.execute(relation.sql()).fetchdf()
        out = {}
        for name, spec in relation.schema.columns:
            column = frame[name]
            if isinstance(spec, Categorical):
                values = np.empty(len(spec.values), dtype=object)
                values[:] = list(spec.values)
                out[name] = pd.Series(values[column.to_numpy(dtype=np.int64)] if len(column) else [], dtype=object)
            else:
                out[name] = column.astype(float).reset_index(drop=True)
        return pd.DataFrame(out, index=pd.RangeIndex(len(frame)))


def _path(path: Path) -> str:
    return str(path).replace("'", "''")


def exact_from_parts(parts: list[tuple[int, int]]) -> Fraction:
    """sum S_e 2^e exactly."""
    total = Fraction(0)
    for exponent, mantissas in parts:
        total += Fraction(mantissas) * Fraction(2) ** exponent
    return total
