"""Spark, the engine for private tables on a cluster: the same program, the same answers.

`SparkEngine` has DuckDBEngine's interface (`jostle.data.engine.duckdb_engine`, the reference):
raw sources as temporary views, schema conformance and the plan of a `Relation` as Spark SQL,
and exact aggregates (count, exact sums as per-exponent integer mantissa sums, histogram
counts) collected to the driver, where the language adds the noise with its exact samplers.
Nothing here draws noise or decides a privacy question.

Spark SQL is not DuckDB SQL; the differences the language's answers depend on are closed in
`expressions.Compiler` (division by zero, floor, ln, pow, the sign of zero), in `dialect`
(text casts, trimming, numbers in text) and in `fingerprint` (MD5 halves), each with its Spark
form next to DuckDB's.

ANSI mode. Spark 4 runs with spark.sql.ansi.enabled=true by default, under which a cast or a
division raises an error for the one row that triggers it: an error that fires only for some
rows, which a program could observe. So (1) the engine never runs SQL in a session with ANSI
mode on: it works in a session of its own (`SparkSession.newSession()`: shared SparkContext
and cache, its own SQL settings and temporary views; a user's session is left as it was) with
ANSI mode off, re-asserted before every query; where no session of its own can be made (Spark
Connect), a session with ANSI mode on is refused with a clear error; and (2) the compiled SQL
raises on no row even with ANSI mode on (zero divisors never reach a division, text reaches a
cast only through TRY_CAST, integer casts only see whole numbers in range), which
tests/test_spark_engine.py checks on a session with ANSI mode on.

Other differences from the in-memory route that remain: a typed DOUBLE cell (Parquet) compared
with a categorical domain's texts is written by Java (1.2345678E7), where Python writes
12345678.0, so a text category spelling a number of 10^7 or more, or below 10^-3, does not
match it on Spark (numeric categories match by value, as everywhere); the rows a learner
collects from a Parquet directory of several files come in Spark's order of the files.

CSV files (the curator's and public routes; a program's `load` reads with Jostle's own reader
on every engine, jostle.language.binding) are read by Spark's reader (univocity) only when it
gives exactly the records `jostle.data.schema.read_csv_file` gives, else by Jostle's reader
(`raw_csv` returns None; issue 21, hole 3). `csv_dialect.scan` leaves to Jostle's reader every
file holding a construct on which the readers differ (bytes that are not UTF-8, which Spark
reads as U+FFFD; a quote after spaces, in an unquoted field or never closed, which Spark keeps
as text or reads to the end of the file; mixed line ends; a NUL character, which starts a
comment line for Spark; a first line that is not the header, which Spark takes as the header).
On the other files: the header is taken from the file by `binding.csv_header` and given as the
schema; records are parsed across line breaks inside quotes (`multiLine`, the default, when the
file holds a quote; `csv_multi_line=False` splits large files across tasks but breaks quoted line
breaks); spaces after a delimiter are skipped in SQL (Python's skipinitialspace; Spark's own
option skips tabs too); a record with fewer fields than the header is padded with missing cells
(Spark's PERMISSIVE mode); a record of one blank field (Python's str.strip) is skipped; a record
with more fields, a field longer than Python's csv limit or a U+FFFD (or more than 1,048,576
fields, which makes Spark's parser fail) sends the file to Jostle's reader, which refuses it or
names the record. One difference remains, which no consumer sees: Spark reads an empty unquoted
field as missing where Python reads '' (the schema's rules and the fingerprint treat them alike).

Running on a cluster. `SparkEngine(master="spark://host:7077")` (or `yarn`, `k8s://...`;
`jostle run --engine spark --master URL`, `Session(engine="spark", engine_options={"spark":
{"master": URL, "spark.executor.memory": "8g"}})`): keyword arguments other than `master`,
`app_name`, `session` and `csv_multi_line` are Spark settings for the session builder. Data
paths are read by the executors, so they must be readable there under the same path (a shared
file system, HDFS, S3 with the connector configured); a pandas DataFrame is sent from the
driver. An existing session can be passed as `session=` (the engine derives its own from it).
The driver must reach the executors and the reverse; tables are cached (memory and disk) on
the executors when bound.

ChoiceMaker training on a cluster: training runs on public corpora only, and its fan-out goes
through joblib (`jostle.choicemaker.experience.experience_table`), which uses the backend that
is active around it. With joblib-spark installed:
    from joblibspark import register_spark; register_spark()
    with joblib.parallel_config(backend="spark", n_jobs=32):
        jostle.build.build_all()   # `jostle train --all`, or any jostle.choicemaker.engine.train
Each piece then runs as a Spark task (the worker needs jostle installed). Backends that cannot
yield results one by one (joblib-spark, multiprocessing) get them as a list at the end.
"""

from __future__ import annotations

import contextlib
import csv
import itertools
import os
import shutil
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from jostle.data.engine.spark_logs import quiet_jvm_settings, spark_logs_wanted
from jostle.data.engine.frames import frame_rows_matching
from jostle.data.engine import csv_dialect, holds_quote
from jostle.data.engine.aggregates import SqlAggregates
from jostle.data.engine.conform import conform_query, first_breaking_row
from jostle.data.engine.csv_dialect import CsvScan, python_whitespace
from jostle.data.engine.expressions import quote
from jostle.data.engine.relation import Relation
from jostle.data.schema import DATA_LOG, Categorical, DataError, Schema, breaking_hint
from jostle.diagnostics.errors import UsageError

_PUSH_DOWN = "org.apache.spark.sql.catalyst.optimizer."
SESSION_SQL_CONF = {
    "spark.sql.ansi.enabled": "false",  # no per-row errors (see the module docstring)
    "spark.sql.caseSensitive": "true",  # columns 'a' and 'A' are two columns, as in pandas and DuckDB
    # A filter on a derived column pushed below the derivations is rewritten over the source's
    # columns, each derived column (and each shared sub-expression, relation.plan_sql) inlined
    # where it is read: exponential in the number of steps (minutes of planning, 380 KB of plan
    # for tests/test_engines.py's program). Filters stay where the plan puts them (a filter on
    # conformed values, which are clamped, could not become a Parquet scan's filter anyway).
    "spark.sql.optimizer.excludedRules": ",".join(_PUSH_DOWN + rule for rule in (
        "PushDownPredicates", "PushPredicateThroughNonJoin", "InferFiltersFromConstraints")),
}
CSV_MAX_COLUMNS = 1 << 20       # univocity's array of fields per record (Spark's default is 20,480)
CORRUPT = "__jostle_record__"   # Spark's column for the text of a record that did not fit the header

_counter = itertools.count()


def spark_unavailable() -> str | None:
    """Why Spark cannot run in this process (no pyspark, or no Java), or None when it can."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed (pip install 'jostle[spark]')"
    java_home = os.environ.get("JAVA_HOME")
    if not ((java_home and Path(java_home, "bin", "java").exists()) or shutil.which("java")):
        return "no Java runtime was found (Spark needs Java 17 or later: install it, or set JAVA_HOME)"
    return None


class SparkEngine(SqlAggregates):
    """Private tables in a Spark session (local, or a cluster).

    Args:
        master: The Spark master URL ("local[2]", "spark://host:7077", "yarn", ...). Ignored when
            `session` is given or a Spark session is already running in this process.
        app_name: The application's name in Spark's UI.
        session: An existing SparkSession to derive the engine's own session from.
        csv_multi_line: Parse CSV records across quoted line breaks, as Python does (one task
            per file); False splits large files across tasks.
        **conf: Spark settings for the session builder (e.g. {"spark.executor.memory": "8g"}).

    Raises:
        UsageError: Spark cannot run here (no pyspark or no Java), or the given session runs in
            ANSI mode and no session of the engine's own can be derived from it.
    """

    name = "spark"
    dialect = "spark"

    def __init__(self, master: str = "local[2]", app_name: str = "jostle", session: Any = None,
                 csv_multi_line: bool = True, **conf: Any) -> None:
        self.master, self.app_name, self.conf = master, app_name, dict(conf)
        self.csv_multi_line = bool(csv_multi_line)
        if session is None:
            reason = spark_unavailable()
            if reason is not None:
                raise UsageError(f"the Spark engine cannot run: {reason}",
                                 hint="use another engine (--engine duckdb), or install pyspark and Java")
            session = _start_session(master, app_name, self.conf)
        self.session = _own_session(session)
        self._columns: dict[str, list[str]] = {}
        self._frames: dict[str, Any] = {}        # the Spark DataFrame behind each view
        self._pandas: dict[str, Any] = {}        # a raw view of a pandas DataFrame -> the frame itself
        self._group_cache: dict[tuple, dict[tuple[int, ...], int]] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return "<spark engine>"

    def __reduce__(self) -> Any:  # a fresh engine in another process (tables do not travel)
        return (_fresh_engine, (self.master, self.app_name, self.csv_multi_line, self.conf))

    # ------------------------------------------------------------ running SQL
    def query(self, sql: str, parameters: list | None = None) -> list[tuple]:
        """Run Spark SQL in the engine's session (ANSI mode off) and collect the rows."""
        for key, value in SESSION_SQL_CONF.items():  # re-asserted: nobody may turn ANSI mode on
            if self.session.conf.get(key) != value:
                self.session.conf.set(key, value)
        frame = self.session.sql(sql, args=list(parameters)) if parameters else self.session.sql(sql)
        return [tuple(row) for row in frame.collect()]

    def _fresh(self, prefix: str) -> str:
        return f"jostle_{prefix}_{next(_counter)}"

    def _register(self, frame: Any, prefix: str) -> str:
        view = self._fresh(prefix)
        frame.createOrReplaceTempView(view)
        self._frames[view] = frame
        self._columns[view] = [c for c in frame.columns if c != CORRUPT]
        return view

    def source_columns(self, source: str) -> list[str]:
        return self._columns[source]

    @contextlib.contextmanager
    def digest_scope(self, raw: str) -> Iterator[tuple[str, Callable[[str], str]]]:
        """(the raw rows, cached, and a function caching a query's rows as a table and naming it)
        for the content digest (jostle.data.engine.content_digest), which reads each column once
        and then the rows: cached, the source is read (a CSV file parsed) once. Everything cached
        is dropped on exit."""
        made: list[str] = []

        def keep(sql: str) -> str:
            name = self._fresh("digest")
            self.query(f"CACHE TABLE {name} AS {sql}")
            made.append(name)
            return name

        try:
            yield keep(f"SELECT * FROM {raw}"), keep
        finally:
            for name in reversed(made):  # the dictionaries read the cached source
                self.query(f"UNCACHE TABLE IF EXISTS {name}")
                self.query(f"DROP VIEW IF EXISTS {name}")

    # ------------------------------------------------------------ raw sources
    def raw_csv(self, path: Path, header: list[str], strict: bool = False,
                scanned: CsvScan | None = None) -> str | None:
        """A view of a CSV file's usable records as text cells (see the module docstring).

        Args:
            strict: The curator's and public routes: the view holds exactly the records of
                Jostle's reader, read and checked now, or there is none (None) when the file
                holds a construct on which Spark's reader and Python's differ
                (`csv_dialect.scan`), a record Python cannot use, or Spark failed to read it;
                the caller then reads the file with Jostle's reader (as
                `DuckDBEngine.raw_csv`). Otherwise unusable records are dropped.
            scanned: The file's `csv_dialect.scan`, if the caller has it.
        """
        from py4j.protocol import Py4JError
        from pyspark import StorageLevel
        from pyspark.errors import PySparkException
        from pyspark.sql.types import StringType, StructField, StructType

        if strict:
            scanned = scanned or csv_dialect.scan(path)
            if scanned.problem is not None:
                return None
        spanning = scanned.quoted_line_break if scanned is not None else holds_quote(path)
        fields = [StructField(name, StringType()) for name in header] + [StructField(CORRUPT, StringType())]
        # multiLine reads a file as one task; a file where no quoted field holds a line break has
        # no record spanning lines, so it is split across tasks (the same records). A CSV of
        # 10^6 rows took 86 s to bind in one task on 2 cores.
        multi_line = self.csv_multi_line and spanning
        # Leading white space is not Spark's to skip (it skips tabs too): spaces are skipped below,
        # as Python's skipinitialspace does.
        options = {"header": "true", "multiLine": str(multi_line).lower(), "mode": "PERMISSIVE",
                   "sep": ",", "quote": '"', "escape": '"', "encoding": "UTF-8",
                   "columnNameOfCorruptRecord": CORRUPT, "ignoreLeadingWhiteSpace": "false",
                   "ignoreTrailingWhiteSpace": "false", "enforceSchema": "true",
                   "maxColumns": str(CSV_MAX_COLUMNS), "maxCharsPerColumn": "-1"}
        records = self.session.read.options(**options).schema(StructType(fields)).csv(str(path))
        records.createOrReplaceTempView(parsed := self._fresh("csv"))
        unusable, blank = _record_tests(header)
        cells = ", ".join(f"(CASE WHEN startswith({c}, ' ') THEN TRIM(LEADING ' ' FROM {c}) ELSE {c} END) AS {c}"
                          for c in (quote(n, "spark") for n in header))
        # Cached: the file is parsed once for the checks, the fingerprint and the binding. The
        # view's own name in the plan keeps Spark's cache from serving another read of the same
        # path (whose file may have changed since) for this one.
        frame = self.session.sql(f"SELECT {cells} FROM {parsed} WHERE NOT ({unusable}) AND NOT ({blank}) "
                                 f"AND {_read_mark(parsed)}").persist(StorageLevel.MEMORY_AND_DISK)
        if strict:
            try:
                broken = int(self.query(f"SELECT count(*) FROM {parsed} WHERE ({unusable}) AND NOT ({blank})")[0][0])
                frame.count()
            except (PySparkException, Py4JError):
                broken = 1  # Spark could not read it: Jostle's reader says why, or reads it
            if broken:
                frame.unpersist()
                return None
        return self._register(frame, "raw")

    def raw_parquet(self, path: Path) -> str:
        from pyspark.errors import AnalysisException

        view = self._fresh("parquet")
        try:
            self.session.read.parquet(str(path)).createOrReplaceTempView(view)
        except AnalysisException as error:
            # A column type Spark cannot read (TIME, UUID, INTERVAL; DuckDB and memory read them,
            # as cells of unknown kind) or a file that is no Parquet: the file's schema decides,
            # the same for a neighbouring file, so this names no row.
            raise DataError(f"Spark cannot read the Parquet file {path}: {str(error).splitlines()[0]}",
                            hint="store the column as text or a number, or use another engine") from None
        return self._register(self.session.sql(f"SELECT * FROM {view} WHERE {_read_mark(view)}"), "raw")

    def raw_frame(self, frame: Any) -> str:
        """A pandas DataFrame as a raw view. `bind` conforms it in memory (as DuckDBEngine does:
        by Python's rules, cell by cell, never by a column type inferred from all its rows); its
        rows go to Spark as they are only if SQL reads the view (`fingerprint.engine_digest`)."""
        view = self._fresh("raw")
        self._pandas[view] = frame
        self._columns[view] = [str(c) for c in frame.columns]
        return view

    def raw_where_matches(self, view: str, column: str, pattern: str) -> str:
        """A raw view of the rows of `view` whose `column` is missing or, as text, matches the
        regular expression `pattern` in full (as DuckDBEngine.raw_where_matches: a pandas frame is
        filtered in memory and stays a frame)."""
        if view in self._pandas and view not in self._frames:
            return self.raw_frame(frame_rows_matching(self._pandas[view], column, pattern))
        from pyspark.sql import functions

        frame = self._spark_view(view)
        cell = functions.col(f"`{column}`")
        kept = frame.where(cell.isNull() | cell.cast("string").rlike(f"^(?:{pattern})$"))
        new = self._register(kept, "raw")
        self._columns[new] = list(self._columns[view])
        return new

    def _spark_view(self, view: str) -> Any:
        """The Spark DataFrame of a raw view, a pandas frame's made now: typed as DuckDB types a
        registered frame, and columns that are neither numbers, booleans nor texts written as
        the text pandas writes to a CSV file, as `fingerprint.frame_digest` does."""
        if view not in self._frames:
            from pyspark.sql.types import StructField, StructType

            frame = self._pandas[view]
            fields, columns = [], []
            for position, name in enumerate(self._columns[view]):
                spark_type, values = _column_for_spark(frame.iloc[:, position])
                fields.append(StructField(name, spark_type))
                columns.append(values)
            rows = list(zip(*columns)) if columns else [()] * len(frame)
            spark_frame = self.session.createDataFrame(rows, StructType(fields))
            spark_frame.createOrReplaceTempView(view)
            self._frames[view] = spark_frame
        return self._frames[view]

    def raw_types(self, view: str) -> dict[str, str]:
        """Column types under DuckDB's names (what `conform` and `fingerprint` read)."""
        return {field.name: _duckdb_type(field.dataType) for field in self._spark_view(view).schema.fields
                if field.name != CORRUPT}

    # ------------------------------------------------------------ binding
    def bind(self, raw: str, schema: Schema, table: str, strict: bool, materialise: bool) -> Relation:
        """Conform a raw source to a public schema, as `DuckDBEngine.bind` does.

        Args:
            raw: A raw view (`raw_csv`, `raw_parquet`, `raw_frame`).
            schema: The public schema.
            table: The table's name, for messages.
            strict: The curator's schema: a breaking value is a DataError naming the row.
                Otherwise rows breaking a column without a default are dropped, counted to the
                curator's logger only.
            materialise: Cache the conformed rows on the executors (memory, then disk), read
                now, so that a file that cannot be read fails here; otherwise a view that scans
                the source on each query.
        """
        from py4j.protocol import Py4JError
        from pyspark.errors import PySparkException

        try:
            return self._bind(raw, schema, table, strict, materialise)
        except (PySparkException, Py4JError) as error:
            # The source cannot be read at all (not one row's value: those are NULLs here).
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise DataError(f"table '{table}': cannot read its data: {first}",
                            hint="check that the file exists where Spark's executors read it and is "
                            "a valid CSV or Parquet file") from None

    def _bind(self, raw: str, schema: Schema, table: str, strict: bool, materialise: bool) -> Relation:
        if raw in self._pandas:  # see `raw_frame`
            from jostle.data.engine.frames import conform_frame

            return self.store_conformed(conform_frame(self._pandas[raw], schema, table, strict=strict), schema)
        available = self.source_columns(raw)
        missing = [name for name in schema.names if name not in available]
        if missing:
            raise DataError(f"table '{table}' has no column {', '.join(repr(m) for m in missing)}",
                            hint=f"its columns are {available}; fix the schema or the file")
        types = self.raw_types(raw)
        select, problems = conform_query(raw, schema, types, self.dialect)
        if problems:
            bad = " OR ".join(f"({p})" for _, p in problems)
            dropped, total = self.query(f"SELECT count_if({bad}), count(*) FROM {raw}")[0]
            if strict and dropped:  # only then the window query that finds the first one
                broken = first_breaking_row(self, raw, schema, types, problems)
                if broken is not None:
                    raise DataError(f"table '{table}', column '{broken[0]}', row {broken[1]}: the value {broken[2]}",
                                    hint=breaking_hint(broken[0], schema[broken[0]]))
            if not strict:
                if dropped:
                    DATA_LOG.warning("table '%s': %d of %d rows dropped by the schema the program declared",
                                     table, dropped, total)
                select = f"{select} WHERE NOT ({bad})"
        return self._store(self.session.sql(select), schema, materialise)

    def _store(self, frame: Any, schema: Schema, materialise: bool) -> Relation:
        if materialise:
            from pyspark import StorageLevel

            frame = frame.persist(StorageLevel.MEMORY_AND_DISK)
            frame.count()  # read now: a source that cannot be read fails at binding
        name = self._register(frame, "table")
        self._columns[name] = list(schema.names)
        return Relation(self, name, schema)

    def store_conformed(self, frame: Any, schema: Schema) -> Relation:
        """Rows already conformed to `schema`, stored as a new cached table (categorical values
        as their codes, numbers as DOUBLE), for a step computed in memory."""
        from pyspark.sql.types import DoubleType, LongType, StructField, StructType

        fields, columns = [], []
        for name, spec in schema.columns:
            if isinstance(spec, Categorical):
                codes = {value: code for code, value in reversed(list(enumerate(spec.values)))}
                fields.append(StructField(name, LongType()))
                columns.append([codes[v] for v in frame[name].tolist()])
            else:
                fields.append(StructField(name, DoubleType()))
                columns.append([float(v) for v in frame[name].tolist()])
        rows = list(zip(*columns)) if columns else [()] * len(frame)
        return self._store(self.session.createDataFrame(rows, StructType(fields)), schema, True)

    # ------------------------------------------------------------ aggregates (exact)
    def sum_parts(self, relation: Relation, column: str) -> list[tuple[int, int]]:
        """The exact sum of a numeric column as [(exponent e, integer S_e)]: sum = sum S_e 2^e
        (see `sum_parts_sql` for why each part is exact)."""
        rows = self.query(sum_parts_sql(relation.sql(), column))
        return [(int(e) - 52, int(total)) for e, total in rows]

    def collect(self, relation: Relation) -> Any:
        """The rows as a pandas frame (in the source's order), categorical codes decoded."""
        import pandas as pd

        names = ", ".join(quote(name, self.dialect) for name in relation.schema.names)
        rows = self.query(f"SELECT {names} FROM ({relation.sql()}) AS s")
        out = {}
        for position, (name, spec) in enumerate(relation.schema.columns):
            column = [row[position] for row in rows]
            if isinstance(spec, Categorical):
                values = np.empty(len(spec.values), dtype=object)
                values[:] = list(spec.values)
                out[name] = pd.Series(values[np.asarray(column, dtype=np.int64)] if column else [], dtype=object)
            else:
                out[name] = pd.Series(np.asarray(column, dtype=float), dtype=float)
        return pd.DataFrame(out, index=pd.RangeIndex(len(rows)))

    def close(self) -> None:
        """Release the engine's cached tables and views (the Spark session itself keeps running)."""
        for view, frame in list(self._frames.items()):
            frame.unpersist()
            self.session.catalog.dropTempView(view)
        self._frames.clear()
        self._pandas.clear()
        self._columns.clear()


def sum_parts_sql(relation_sql: str, column: str) -> str:
    """Spark SQL for the per-exponent integer mantissa sums of a numeric column.

    Each double x != 0 is x = m 2^(e - 52) with e = floor(log2 |x|) - 1, so that m = x 2^(52 - e)
    is a whole number with |m| < 2^55 even when Spark's log2 (ln x / ln 2) is one off near a
    power of two; the scaling is done in two exact halves (see DuckDBEngine.sum_parts). The m
    of one exponent are summed as DECIMAL(28, 0), whose sum Spark types DECIMAL(38, 0): exact
    for fewer than 10^38 / 2^55 (about 2.8 * 10^21) rows per exponent. (Beyond, Spark gives
    NULL, which `int()` refuses: never a wrong sum.) Conformed values are never NaN or infinite.
    """
    value = quote(column, "spark")
    inner = (f"SELECT CAST(floor(log2(abs({value}))) AS INTEGER) - 1 AS e, {value} AS x "
             f"FROM ({relation_sql}) AS s WHERE {value} <> 0")
    half = "CAST(floor((52 - e) / 2.0) AS INTEGER)"
    scaled = f"x * pow(2.0, {half}) * pow(2.0, (52 - e) - {half})"
    return (f"SELECT e, CAST(sum(CAST(CAST({scaled} AS BIGINT) AS DECIMAL(28, 0))) AS STRING) "
            f"FROM ({inner}) AS p GROUP BY e")


def _read_mark(name: str) -> str:
    """A predicate true on every row that names one read of a file (see `raw_csv`)."""
    return f"'{name}' IS NOT NULL"


def _record_tests(header: list[str]) -> tuple[str, str]:
    """Spark SQL over parsed CSV records: (the record is unusable, the record is a blank line).

    A record whose field count differs from the header's has its text in CORRUPT; its fields
    are counted on that text with quoted sections removed. Python skips a one-field record
    whose field is white space (a blank line, or `""` alone).
    """
    cells = [quote(n, "spark") for n in header]
    text = quote(CORRUPT, "spark")
    unquoted = f"regexp_replace({text}, '\"([^\"]|\"\")*\"', '')"
    fields = f"(length({unquoted}) - length(replace({unquoted}, ',', '')) + 1)"
    first = cells[0]
    # Spark SQL reads a backslash in a literal as an escape: each is doubled for Java's pattern
    blank_cell = f"({first} IS NULL OR {first} RLIKE '^[{python_whitespace().replace(chr(92), chr(92) * 2)}]*\\\\z')"
    # A record of another length than the header's has its text; one of the header's length none.
    one_field = f"({text} IS NULL OR {fields} = 1)" if len(header) == 1 else f"({text} IS NOT NULL AND {fields} = 1)"
    blank = f"({one_field} AND {blank_cell})"
    tests = [f"({text} IS NOT NULL AND {fields} > {len(header)})"]
    tests += [f"coalesce(instr({c}, '\uFFFD') > 0 OR length({c}) > {csv.field_size_limit()}, false)" for c in cells]
    return " OR ".join(tests), blank


def _column_for_spark(column: Any) -> tuple[Any, list]:
    """(Spark type, Python values) of a pandas column, missing cells as None."""
    import decimal

    import pandas as pd
    from pyspark.sql.types import BooleanType, DecimalType, DoubleType, FloatType, LongType, StringType

    from jostle.data.engine.fingerprint import _as_csv_text

    dtype = column.dtype
    missing = column.isna().to_numpy()

    def values(convert: Any) -> list:
        return [None if gone else convert(v) for v, gone in zip(column.tolist(), missing)]

    if pd.api.types.is_bool_dtype(dtype):
        return BooleanType(), values(bool)
    if pd.api.types.is_float_dtype(dtype):
        if getattr(dtype, "itemsize", 8) <= 4:
            return FloatType(), [float(v) for v in column.to_numpy(dtype=float, na_value=np.nan)]
        if isinstance(dtype, np.dtype):  # NaN stays NaN (a missing cell either way)
            return DoubleType(), [float(v) for v in column.to_numpy()]
        return DoubleType(), values(float)
    if pd.api.types.is_integer_dtype(dtype):
        if str(dtype).lower() == "uint64":
            return DecimalType(20, 0), values(lambda v: decimal.Decimal(int(v)))
        return LongType(), values(int)
    if isinstance(dtype, pd.StringDtype) or (dtype == object and all(
            v is None or isinstance(v, str) for v in column.unique() if not (isinstance(v, float) and v != v))):
        return StringType(), values(str)
    return StringType(), list(_as_csv_text(column).to_numpy(dtype=object))


_DUCKDB_TYPES = {"string": "VARCHAR", "double": "DOUBLE", "float": "FLOAT", "bigint": "BIGINT", "int": "INTEGER",
                 "smallint": "SMALLINT", "tinyint": "TINYINT", "boolean": "BOOLEAN"}


def _duckdb_type(data_type: Any) -> str:
    simple = data_type.simpleString()
    if simple.startswith("decimal"):
        return simple.upper()
    if simple.startswith(("varchar", "char", "string")):  # Spark 4 may add a collation
        return "VARCHAR"
    return _DUCKDB_TYPES.get(simple, simple.upper())


def _start_session(master: str, app_name: str, conf: dict[str, Any]) -> Any:
    """The process's Spark session (started here when there is none)."""
    from pyspark.sql import SparkSession

    started = SparkSession.getActiveSession() is None
    builder = SparkSession.builder.master(master).appName(app_name)
    # No progress bar on stderr: whether it shows depends on how long a stage takes.
    settings = {"spark.ui.showConsoleProgress": "false", **conf}
    if started and not spark_logs_wanted():
        settings = {**quiet_jvm_settings(), **settings}
    for key, value in settings.items():
        builder = builder.config(key, str(value))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pyspark's note about the pandas version
        try:
            session = builder.getOrCreate()
        except Exception as error:  # noqa: BLE001 - the JVM did not start (an old Java, a bad master URL)
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise UsageError(f"Spark could not start ({master}): {first}",
                             hint="Spark 4 needs Java 17 or later (JAVA_HOME); check the master URL") from None
    if started:
        session.sparkContext.setLogLevel("ERROR")
    return session


def _own_session(session: Any) -> Any:
    """A session of the engine's own, with ANSI mode off, derived from `session`."""
    try:
        own = session.newSession()
    except Exception:  # noqa: BLE001 - Spark Connect and other sessions that cannot make one
        own = None
    if own is not None:
        for key, value in SESSION_SQL_CONF.items():
            own.conf.set(key, value)
        if all(own.conf.get(key) == value for key, value in SESSION_SQL_CONF.items()):
            return own
    if str(session.conf.get("spark.sql.ansi.enabled", "false")).lower() != "false":
        raise UsageError("this Spark session runs in ANSI mode, where one row's value can make a query fail, "
                         "and the Spark engine cannot make a session of its own from it",
                         hint="set spark.sql.ansi.enabled=false on the session you give the engine")
    return session


def _fresh_engine(master: str, app_name: str, csv_multi_line: bool, conf: dict[str, Any]) -> SparkEngine:
    return SparkEngine(master, app_name, None, csv_multi_line, **conf)


__all__ = ["SparkEngine", "spark_unavailable", "sum_parts_sql", "SESSION_SQL_CONF"]
