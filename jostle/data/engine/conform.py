"""Schema conformance as SQL: `jostle.data.schema.conform`'s rules, vectorised on an engine.

For each declared column the raw cell (text from a CSV, or a typed value from Parquet or a
DataFrame) becomes the stored value:
  * numeric: a missing cell (empty, na, nan, null, NaN) or one that is not a number takes the
    column's default, or breaks the row when there is none; a number is clamped into the
    bounds (rounded half-even first for an integer column), infinities to the bounds;
  * categorical: the code of the first declared value the cell matches (the cell itself, its
    text, or its number equal to a numeric category, in `_match_category`'s order), else the
    default's code, or the row breaks;
  * a column of a type whose cells no schema reads (`sql_kind`: lists, structs, maps, blobs,
    dates and times, ...) holds unknown cells (jostle.data.cells): each that is not NULL takes
    the default, or its row breaks, as in memory.
A row that breaks is refused by a curator's schema (the first such row is named to the
curator) and dropped under a program's schema. Each rule is decided per row, so dropping is
1-stable and nothing but the count (to the curator's logger) depends on the rows.
"""

from __future__ import annotations

import decimal
import math
import unicodedata
from typing import Any

from jostle.data.engine.dialect import as_text, row_number, spark_text, text_number
from jostle.data.engine.expressions import Compiler, literal, quote
from jostle.data.engine.relation import conform_number_sql
from jostle.data.cells import BYTES, DATE_TIME, LIST, OBJECT, RECORD, UNKNOWN_KINDS
from jostle.data.schema import Categorical, Numeric, Schema, _is_missing, category_problem, read_number

MISSING_WORDS = ("na", "nan", "null")
PLAIN_DECIMAL = "^-?[0-9]+(\\.[0-9]+)?\\z"  # Java's regular expression: digits, one point, no spaces
TEXT = "text"
INTEGER = "integer"
FLOAT = "float"
BOOLEAN = "boolean"
_INTEGER_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "INT", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
                  "UBIGINT", "UHUGEINT", "INT1", "INT2", "INT4", "INT8", "LONG", "SHORT", "BYTE")
_FLOAT_TYPES = ("DOUBLE", "FLOAT", "REAL", "FLOAT4", "FLOAT8")


def sql_kind(sql_type: str, dialect: str = "duckdb") -> str:
    """How a column of this SQL type reads, by `jostle.data.cells.read_cell`'s rule.

    TEXT, INTEGER, FLOAT (DECIMAL too: a Parquet decimal reads as doubles in memory, so its
    text is the double's) or BOOLEAN: plain cells. Any other type is a kind of cell no schema
    reads, the kind its cells have in memory (DuckDB's reader gives pandas a NumPy array for a
    LIST, a dict for a STRUCT or MAP, a bytearray for a BLOB, a Timestamp for a DATE): every
    cell of the column that is not NULL is then unknown (the default, or the row breaks), on
    every route alike. Types as DuckDB names them and as `SparkEngine.raw_types` gives Spark's.
    """
    upper = sql_type.strip().upper()
    if upper.endswith("]") or upper.startswith(("ARRAY", "LIST")):  # DuckDB VARCHAR[], DOUBLE[2]; Spark ARRAY<..>
        return LIST
    if upper.startswith(("STRUCT", "MAP", "UNION", "ROW")):
        return RECORD
    if upper in ("VARCHAR", "STRING", "TEXT", "JSON", "CHAR", "BPCHAR") or upper.startswith(("VARCHAR(", "ENUM(")):
        return TEXT
    if upper in ("BOOLEAN", "BOOL", "LOGICAL"):
        return BOOLEAN
    if upper in _INTEGER_TYPES or (dialect == "spark" and upper == "DECIMAL(20,0)"):
        # Spark reads a Parquet UINT64 column (DuckDB's UBIGINT, whole numbers in memory) as
        # DECIMAL(20,0); a true decimal column of that type reads as whole numbers there too.
        return INTEGER
    if upper in _FLOAT_TYPES or upper.startswith(("DECIMAL", "NUMERIC")):
        return FLOAT
    if upper in ("BLOB", "BYTEA", "BINARY", "VARBINARY"):
        return BYTES
    if upper.startswith(("DATE", "TIME", "INTERVAL")):  # TIMESTAMP[_NS|_MS|_S|_NTZ| WITH TIME ZONE], TIMETZ
        return DATE_TIME
    return OBJECT  # UUID, BIT, ...: a uuid.UUID in memory, an object of another type


# Python's own reading of a text cell (jostle.data.schema.conform is the reference): str.strip()
# (what `_is_missing` and `_match_category` strip) and float() (which strips a smaller set: not
# the ASCII separators \x1c-\x1f; and reads every Unicode decimal digit). Checked bit for bit
# against Python on random texts (tests/test_engine_expressions.py, conformance).
_STRIP = [c for c in map(chr, range(0x110000)) if c.isspace()]
_FLOAT_SPACE = [c for c in _STRIP if not "\x1c" <= c <= "\x1f"]
_ASCII_STRIP = "".join(c for c in _STRIP if c < "\x80")
_DIGITS_FROM = "".join(c for c in map(chr, range(0x80, 0x110000)) if c.isdecimal())
_DIGITS_TO = "".join(str(unicodedata.decimal(c)) for c in _DIGITS_FROM)


def _characters(chars: list[str]) -> str:
    return "".join(f"\\x{{{ord(c):x}}}" for c in chars)


def python_strip(text: str, dialect: str = "duckdb") -> str:
    """SQL for Python's `text.strip()`: an ASCII text (bytes = characters) whose ends are not
    spaces (every ASCII space is at most 32) as it is, another ASCII text by trim's character set,
    any other by a regular expression (each slower and rarer than the one before)."""
    ends = _characters(_STRIP)
    if dialect == "spark":  # Java's regular expressions read the same \x{...} escapes
        return f"regexp_replace({text}, {spark_text('^[' + ends + ']+|[' + ends + ']+' + chr(92) + 'z')}, '')"
    return (f"(CASE WHEN strlen({text}) = length({text}) THEN (CASE WHEN ascii({text}) > 32 AND "
            f"ascii(right({text}, 1)) > 32 THEN {text} ELSE trim({text}, {literal(_ASCII_STRIP).sql}) END) "
            f"ELSE regexp_replace({text}, '^[{ends}]+|[{ends}]+$', '', 'g') END)")


def python_float(text: str, dialect: str = "duckdb") -> str:
    """SQL for Python's `float(text)`, NULL where it raises.

    DuckDB's cast reads Python's ASCII grammar (signs, underscores between digits, inf,
    infinity and nan in any case, ASCII spaces around) except that it also reads '+-1' (as -1)
    and 'nan(...)': Python reads no text holding '+-' or '('. A text that is not ASCII is first
    stripped of float()'s spaces and its decimal digits made ASCII ('１２' is 12), as float() does.
    """
    ends = _characters(_FLOAT_SPACE)
    if dialect == "spark":  # Spark's cast is Java's: DuckDB's grammar is matched first (dialect.text_number)
        stripped = f"regexp_replace({text}, {spark_text('^[' + ends + ']+|[' + ends + ']+' + chr(92) + 'z')}, '')"
        digits = f"translate({stripped}, {spark_text(_DIGITS_FROM)}, {spark_text(_DIGITS_TO)})"
        return (f"(CASE WHEN instr({text}, '+-') > 0 OR instr({text}, '(') > 0 THEN NULL "
                f"ELSE {text_number(digits, dialect)} END)")
    stripped = f"regexp_replace({text}, '^[{ends}]+|[{ends}]+$', '', 'g')"
    digits = f"translate({stripped}, {literal(_DIGITS_FROM).sql}, {literal(_DIGITS_TO).sql})"
    return (f"(CASE WHEN contains({text}, '+-') OR contains({text}, '(') THEN NULL "
            f"WHEN strlen({text}) = length({text}) THEN TRY_CAST({text} AS DOUBLE) "
            f"ELSE TRY_CAST({digits} AS DOUBLE) END)")


def _missing_text(cell: str, dialect: str = "duckdb") -> str:
    trimmed = python_strip(cell, dialect)
    return f"({cell} IS NULL OR {trimmed} = '' OR lower({trimmed}) IN ('na', 'nan', 'null'))"


def conform_query(raw: str, schema: Schema, types: dict[str, str], dialect: str) -> tuple[str, list[tuple[str, str]]]:
    """The SELECT that conforms `raw`, and per column without a default the SQL of "this row breaks it"."""
    compiler = Compiler(dialect)
    outputs, problems = [], []
    for name, spec in schema.columns:
        cell = quote(name, dialect)
        sql_type = types.get(name, "VARCHAR")
        if isinstance(spec, Numeric):
            value, bad = _numeric_cell(cell, sql_type, dialect)
            fallback = literal(float(spec.default if spec.default is not None else spec.lo)).sql
            filled = f"coalesce({value}, {fallback})"
            outputs.append(f"{conform_number_sql(compiler, filled, spec)} AS {quote(name, dialect)}")
        else:
            code, bad = _categorical_cell(cell, sql_type, spec, dialect)
            default = spec.values.index(spec.default) if spec.default is not None else 0
            outputs.append(f"COALESCE({code}, {default}) AS {quote(name, dialect)}")
        if spec.default is None:
            problems.append((name, bad))
    return f"SELECT {', '.join(outputs)} FROM {raw}", problems


def _numeric_cell(cell: str, sql_type: str, dialect: str = "duckdb") -> tuple[str, str]:
    """(the cell as a DOUBLE, NULL where it is missing, not a number or NaN; the SQL of "it is").

    A text float() reads is never missing to `_is_missing` unless it is NaN ('nan'): the empty
    text and the words na, null are no numbers, so one parse decides (read once per use). A
    cell of a type no schema reads (`sql_kind`) has no number.
    """
    kind = sql_kind(sql_type, dialect)
    if kind in UNKNOWN_KINDS:
        return "CAST(NULL AS DOUBLE)", "TRUE"
    if kind != TEXT:
        number = f"CAST({cell} AS DOUBLE)"
    else:
        text = as_text(cell, dialect)
        number = python_float(text, dialect)  # float(cell), which strips its own spaces
        if dialect == "spark":
            # A plain decimal ("-37.25"): Spark's general rules (stripping, Unicode digits, the
            # grammar check) end in the same cast of the same text, so it is cast at once.
            number = (f"(CASE WHEN {text} RLIKE {spark_text(PLAIN_DECIMAL)} THEN TRY_CAST({text} AS DOUBLE) "
                      f"ELSE {number} END)")
    value = f"nullif({number}, CAST('NaN' AS DOUBLE))"  # NaN = NaN in SQL
    return value, f"({value} IS NULL)"


def _categorical_cell(cell: str, sql_type: str, spec: Categorical, dialect: str = "duckdb") -> tuple[str, str]:
    """(the code of the category the cell matches or NULL, the SQL of "no match")."""
    from jostle.data.engine.expressions import _is_bool, _is_number

    cases = []
    kind = sql_kind(sql_type, dialect)
    if kind in UNKNOWN_KINDS:  # no category matches such a cell: NULL, missing, breaks the row alike
        return "CAST(NULL AS INTEGER)", "TRUE"
    if kind == TEXT:
        text = as_text(cell, dialect)
        trimmed = python_strip(text, dialect)  # _match_category: str(cell).strip(), then float() of it
        number = python_float(trimmed, dialect)
        missing = _missing_text(text, dialect)
        if dialect == "duckdb":
            # The same order as below, each text read once: the first category equal to the
            # cell, else the first whose text is the stripped cell's or whose number is its number.
            itself = _position([literal(v).sql if isinstance(v, str) else "NULL" for v in spec.values], text)
            as_text_ = _position([literal(str(v)).sql for v in spec.values], trimmed)
            as_number = _position([literal(float(v)).sql if _is_number(v) and not math.isnan(float(v)) else "NULL"
                                   for v in spec.values], number)
            code = f"(CASE WHEN {missing} THEN NULL ELSE coalesce({itself}, least({as_text_}, {as_number})) - 1 END)"
            code = _exact_first(text, spec, code)
            return code, f"({code} IS NULL)"
        for i, value in enumerate(spec.values):  # the cell itself: `value in values`
            if isinstance(value, str):
                cases.append(f"WHEN {text} = {literal(value).sql} THEN {i}")
        for i, value in enumerate(spec.values):  # then each category's text, or its number
            test = f"{trimmed} = {literal(str(value)).sql}"
            if _is_number(value) and not math.isnan(float(value)):  # float('1e400') == inf matches inf
                test += f" OR {number} = {literal(float(value)).sql}"
            cases.append(f"WHEN {test} THEN {i}")
    else:
        number = f"CAST({cell} AS DOUBLE)"
        for i, value in enumerate(spec.values):
            if _is_number(value) or _is_bool(value):
                cases.append(f"WHEN {number} = {literal(float(value)).sql} THEN {i}")
        # str() of the cell as Python holds it: an int's digits, a float's shortest repr (DuckDB
        # prints a DOUBLE as Python does; a FLOAT or DECIMAL is first widened to the double it
        # is in memory: 0.1 as a FLOAT is 0.10000000149011612 there, not '0.1').
        text = as_text(cell if kind == INTEGER else number, dialect)
        if kind == BOOLEAN:  # Python's str(True) is 'True'; SQL's text of TRUE is 'true'
            text = f"(CASE WHEN {cell} THEN 'True' ELSE 'False' END)"
        for i, value in enumerate(spec.values):
            cases.append(f"WHEN {text} = {literal(str(value)).sql} THEN {i}")
        missing = f"({cell} IS NULL OR isnan({number}))"
    code = f"(CASE WHEN {missing} THEN NULL {' '.join(cases)} ELSE NULL END)"
    if dialect == "spark" and kind == TEXT:
        code = _exact_first(text, spec, code, dialect)  # `text`: the cell as text, above
    return code, f"({code} IS NULL)"


def _exact_first(text: str, spec: Categorical, general: str, dialect: str = "duckdb") -> str:
    """DuckDB: `general` (the code by `_match_category`'s rules), with the common case first.

    A cell whose text is exactly a declared text category that is not a missing word is never
    missing (`_is_missing`) and matches that category first (`value in values`: the first equal
    value, and a text equals only texts), so its code is that category's first position; any
    other cell (and NULL, which list_position never finds in a list without NULL) is decided by
    `general`. DuckDB evaluates coalesce's second argument only where the first is NULL (Spark
    a CASE's ELSE only where no WHEN holds), so the general rules (stripping, parsing a number)
    run on the rare cells alone: conforming a column of 10^7 region names took 0.9 s, 0.08 s
    with this.
    """
    texts, codes = [], []
    for code, value in enumerate(spec.values):
        if isinstance(value, str) and value not in texts and not _is_missing(value):
            texts.append(value)
            codes.append(code)
    if not texts:
        return general
    if dialect == "spark":
        whens = " ".join(f"WHEN {spark_text(t)} THEN {c}" for t, c in zip(texts, codes))
        return f"(CASE {text} {whens} ELSE {general} END)"
    found = f"list_position([{', '.join(literal(t).sql for t in texts)}], {text})"
    return f"coalesce([{', '.join(map(str, codes))}][{found}], {general})"


def _position(items: list[str], value: str) -> str:
    """DuckDB: the 1-based position of the first item equal to `value`, or NULL. A NULL item
    stands for a category that cannot match; list_position would find it for a NULL value."""
    return f"(CASE WHEN {value} IS NULL THEN NULL ELSE list_position([{', '.join(items)}], {value}) END)"


def first_breaking_row(engine: Any, raw: str, schema: Schema, types: dict[str, str],
                       problems: list[tuple[str, str]]) -> tuple[str, int, str] | None:
    """The first (column, 1-based row, description) breaking a curator's schema, or None."""
    tests = " ".join(f"WHEN {bad} THEN {literal(name).sql}" for name, bad in problems)
    position = row_number(engine.dialect)
    rows = engine.query(f"SELECT n, c FROM (SELECT {position} AS n, (CASE {tests} ELSE NULL END) AS c "
                        f"FROM {raw}) AS r WHERE c IS NOT NULL ORDER BY n LIMIT 1")
    if not rows:
        return None
    row, column = int(rows[0][0]), str(rows[0][1])
    # The cell as it is typed (a Parquet 1 is 1, not '1'), described by the words of the
    # in-memory route (jostle.data.schema.conform), so a curator reads the same refusal on both.
    cell = engine.query(f"SELECT {quote(column, engine.dialect)} FROM "
                        f"(SELECT {position} AS n, * FROM {raw}) AS r WHERE n = {row}")[0][0]
    spec = schema[column]
    kind = sql_kind(types.get(column, "VARCHAR"), engine.dialect)
    if kind in UNKNOWN_KINDS and cell is not None:  # described by its kind, as in memory
        return column, row, (f"is {kind}, not a number" if isinstance(spec, Numeric)
                              else f"is {kind}, not one of {list(spec.values)}")
    if kind == INTEGER and isinstance(cell, decimal.Decimal):  # Spark's DECIMAL(20,0): a whole number
        cell = int(cell)
    if isinstance(spec, Numeric):
        return column, row, read_number(cell)[1]
    return column, row, category_problem(cell, spec.values)
