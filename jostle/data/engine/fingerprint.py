"""The durable ledger's content digest of a raw private table, computed by the engine.

The digest identifies the data whichever way it arrives (a CSV path, a DataFrame, a Parquet
file) so that a lifetime budget follows the data, not the file. Version 2 (this module) is an
order-independent hash aggregate that an engine computes in one scan, with no sort:

  * every cell gets a canonical text: 'm' for a missing cell (empty, na, nan, null, none, NaN,
    NULL); 'n:<M>p<E>' for a number, where x = M 2^(E-52) with M a 53-bit integer (so 3, "3",
    3.0 and "3.00" agree, and the text never depends on how an engine prints doubles), 'n:0',
    'n:inf', 'n:-inf'; true/false (as booleans or as text) are the numbers 1 and 0; anything
    else 's:<text, trimmed>';
  * a row is its cells joined in the order of the column names (so column order does not
    matter); its hash is MD5 (the same function in DuckDB, Spark and Python), split into two
    64-bit halves;
  * the table is (row count, sum of upper halves, sum of lower halves), exact integers: a
    multiset hash, the same for any row order, different when a row is added or removed.
The digest is SHA-256 of the version, the privacy unit, the sorted column names and those
three numbers. It is kept in memory only (the store keys on an HMAC of it), and computed only
when a durable ledger is in use. Merging values (True and 1 are one value) can only make two
tables share a budget, never give one a fresh budget.
"""

from __future__ import annotations

import hashlib
from typing import Any

from jostle.data.engine.dialect import as_text, is_infinite, text_number, trim
from jostle.data.engine.expressions import quote

VERSION = "jostle-dataset/2"
MISSING_WORDS = ("", "na", "nan", "null", "none")
NUMERIC_PREFIXES = ("DOUBLE", "FLOAT", "REAL", "BIGINT", "INTEGER", "SMALLINT", "TINYINT", "HUGEINT", "UBIGINT",
                    "UINTEGER", "USMALLINT", "UTINYINT", "DECIMAL", "INT", "LONG", "SHORT", "BYTE")


def _is_number_type(upper: str) -> bool:
    """A SQL type (upper case) whose cells cast to DOUBLE: not a list of numbers (DOUBLE[],
    INTEGER[][]) nor INTERVAL, which share a number's prefix and whose cast failed the digest,
    and so the curator's binding (issue 21, hole 4); those are digested as their text."""
    return upper.startswith(NUMERIC_PREFIXES) and not upper.endswith("]") and not upper.startswith("INTERVAL")


def _pow2(exponent_sql: str) -> str:
    """2^k as two exactly representable factors (k up to about 1100 in magnitude)."""
    half = f"CAST(floor(({exponent_sql}) / 2.0) AS INTEGER)"
    return f"pow(2.0, {half}) * pow(2.0, ({exponent_sql}) - {half})"


def number_text(x: str, dialect: str = "duckdb") -> str:
    """SQL giving the canonical text of a finite or infinite non-NaN DOUBLE `x`."""
    rough = f"CAST(floor(log2(abs({x}))) AS INTEGER)"
    scaled = f"abs({x}) * {_pow2(f'52 - {rough}')}"
    exponent = (f"({rough} + (CASE WHEN {scaled} >= pow(2.0, 53) THEN 1 WHEN {scaled} < pow(2.0, 52) "
                f"THEN -1 ELSE 0 END))")
    mantissa = f"CAST({x} * {_pow2(f'52 - {exponent}')} AS BIGINT)"
    return (f"(CASE WHEN {x} = 0 THEN 'n:0' WHEN {is_infinite(x, dialect)} THEN (CASE WHEN {x} > 0 THEN 'n:inf' "
            f"ELSE 'n:-inf' END) ELSE 'n:' || {as_text(mantissa, dialect)} || 'p' || {as_text(exponent, dialect)} END)")


def cell_text(column_sql: str, sql_type: str, dialect: str = "duckdb") -> str:
    """SQL giving a raw cell's canonical text (see the module docstring)."""
    upper = sql_type.upper()
    if _is_number_type(upper):
        value = f"CAST({column_sql} AS DOUBLE)"
        return f"(CASE WHEN {column_sql} IS NULL OR isnan({value}) THEN 'm' ELSE {number_text(value, dialect)} END)"
    if upper == "BOOLEAN":
        return f"(CASE WHEN {column_sql} IS NULL THEN 'm' WHEN {column_sql} THEN 'n:1' ELSE 'n:0' END)"
    text = trim(as_text(column_sql, dialect), dialect)
    number = text_number(text, dialect)
    words = ", ".join(f"'{w}'" for w in MISSING_WORDS)
    return (f"(CASE WHEN {column_sql} IS NULL OR lower({text}) IN ({words}) THEN 'm' "
            f"WHEN lower({text}) = 'true' THEN 'n:1' WHEN lower({text}) = 'false' THEN 'n:0' "
            f"WHEN {number} IS NOT NULL THEN (CASE WHEN isnan({number}) THEN 'm' "
            f"ELSE {number_text(number, dialect)} END) "
            f"ELSE 's:' || {text} END)")


def digest_query(raw: str, columns: list[str], types: dict[str, str], dialect: str = "duckdb") -> str:
    """SQL giving (rows, sum of upper MD5 halves, sum of lower halves) as text, over a raw source."""
    ordered = sorted(columns)
    count = as_text("count(*)", dialect)
    if not ordered:
        return f"SELECT {count}, '0', '0' FROM {raw}"
    return _staged_digest_query(raw, ordered, types, dialect)


def _staged_digest_query(raw: str, ordered: list[str], types: dict[str, str], dialect: str) -> str:
    """`digest_query`: the canonical cells of `cell_text`, computed in stages.

    Written out as one expression (`cell_text`), each cell's text is read some thirty times:
    Spark's optimizer spent minutes on the tree, and DuckDB computed log2 and pow several times
    per cell (the digest of 10^5 rows took 0.6 s on one thread). Here every intermediate value
    (the trimmed text, its number, the binary exponent) is a column of an inner SELECT, read by
    name. The formulas are `cell_text`'s and `number_text`'s (tests/test_engines.py checks the
    two give one digest); a log2 is taken only of a finite non-zero number, so no stage raises
    on any row even under Spark's ANSI mode.
    """
    d = dialect
    words = ", ".join(f"'{w}'" for w in MISSING_WORDS)
    first, numbers, texts, cells = [], [], [], []
    for i, name in enumerate(ordered):
        column, upper = quote(name, d), types.get(name, "VARCHAR").upper()
        if _is_number_type(upper):
            first.append(f"CAST({column} AS DOUBLE) AS x{i}")
            numbers.append(i)
            cells.append(f"(CASE WHEN x{i} IS NULL OR isnan(x{i}) THEN 'm' ELSE {{n{i}}} END)")
        elif upper == "BOOLEAN":
            first.append(f"(CASE WHEN {column} IS NULL THEN 'm' WHEN {column} THEN 'n:1' ELSE 'n:0' END) AS b{i}")
            cells.append(f"b{i}")
        else:
            first.append(f"{trim(as_text(column, d), d)} AS t{i}")
            numbers.append(i)
            texts.append(i)
            cells.append(f"(CASE WHEN t{i} IS NULL OR lower(t{i}) IN ({words}) THEN 'm' "
                         f"WHEN lower(t{i}) = 'true' THEN 'n:1' WHEN lower(t{i}) = 'false' THEN 'n:0' "
                         f"WHEN x{i} IS NOT NULL THEN (CASE WHEN isnan(x{i}) THEN 'm' ELSE {{n{i}}} END) "
                         f"ELSE 's:' || t{i} END)")
    query = f"SELECT {', '.join(first)} FROM {raw}"
    if texts:
        parsed = ", ".join(f"{text_number(f't{i}', d)} AS x{i}" for i in texts)
        query = f"SELECT *, {parsed} FROM ({query}) AS s"
    if numbers:
        infinity = "CAST('Infinity' AS DOUBLE)"
        rough = [f"(CASE WHEN x{i} <> 0 AND abs(x{i}) < {infinity} THEN CAST(floor(log2(abs(x{i}))) AS INTEGER) END)"
                 f" AS r{i}" for i in numbers]
        query = f"SELECT *, {', '.join(rough)} FROM ({query}) AS s"
        exact = []
        for i in numbers:
            scaled = f"abs(x{i}) * {_pow2(f'52 - r{i}')}"
            exact.append(f"r{i} + (CASE WHEN {scaled} >= pow(2.0, 53) THEN 1 WHEN {scaled} < pow(2.0, 52) THEN -1 "
                         f"ELSE 0 END) AS e{i}")
        query = f"SELECT *, {', '.join(exact)} FROM ({query}) AS s"
    texts_of_numbers = {}
    for i in numbers:
        mantissa = f"CAST(x{i} * {_pow2(f'52 - e{i}')} AS BIGINT)"
        texts_of_numbers[f"n{i}"] = (f"(CASE WHEN x{i} = 0 THEN 'n:0' WHEN {is_infinite(f'x{i}', d)} THEN "
                                     f"(CASE WHEN x{i} > 0 THEN 'n:inf' ELSE 'n:-inf' END) ELSE 'n:' || "
                                     f"{as_text(mantissa, d)} || 'p' || {as_text(f'e{i}', d)} END)")
    row = " || chr(31) || ".join(cell.format(**texts_of_numbers) for cell in cells)
    if d == "spark":
        query = f"SELECT md5({row}) AS h FROM ({query}) AS s"
        upper, lower = _md5_halves("h", d, hexadecimal=True)
    else:
        # One MD5 per row: DuckDB's md5_number is the digest as one 128-bit number whose low 64
        # bits are md5_number_upper and high 64 bits md5_number_lower (each of those computes
        # the MD5 again: half the digest's time went to the second one). tests/test_engines.py
        # checks the halves against md5_number_upper/lower.
        query = f"SELECT md5_number({row}) AS n FROM ({query}) AS s"
        upper = "CAST(n & CAST(18446744073709551615 AS UHUGEINT) AS UBIGINT)"
        lower = "CAST(n >> 64 AS UBIGINT)"
    return (f"SELECT {as_text('count(*)', d)}, {as_text(f'COALESCE(sum({upper}), 0)', d)}, "
            f"{as_text(f'COALESCE(sum({lower}), 0)', d)} FROM ({query}) AS rows")


def _md5_halves(text_sql: str, dialect: str, hexadecimal: bool = False) -> tuple[str, str]:
    """SQL for the two 64-bit halves of a text's MD5 as DuckDB's md5_number_upper/lower give them.

    DuckDB reads the digest's first 8 bytes as a little-endian unsigned integer for the
    "upper" half and the last 8 for the "lower" (checked against Python's hashlib by
    tests/test_spark_engine.py). Spark has only the hexadecimal md5(): its bytes are reversed
    and read with conv() as an unsigned 64-bit number (below 2^64, exact in DECIMAL(20, 0)),
    widened to DECIMAL(28, 0) so that Spark's sum is DECIMAL(38, 0): exact for fewer than
    10^38 / 2^64 (about 5.4 * 10^18) rows; a sum of more rows would be NULL, never wrong.
    """
    if dialect != "spark":
        return f"md5_number_upper({text_sql})", f"md5_number_lower({text_sql})"
    digest = text_sql if hexadecimal else f"md5({text_sql})"

    def half(start: int) -> str:
        reversed_hex = " || ".join(f"substr({digest}, {start + 2 * k}, 2)" for k in range(7, -1, -1))
        return f"CAST(CAST(conv({reversed_hex}, 16, 10) AS DECIMAL(20, 0)) AS DECIMAL(28, 0))"

    return half(1), half(17)


def finish(columns: list[str], rows: int, upper: int, lower: int, unit: str) -> bytes:
    """The digest of a table from its aggregate."""
    text = "\n".join([VERSION, f"unit={unit}", "columns=" + "\x1f".join(sorted(columns)),
                      f"rows={rows}", f"upper={upper}", f"lower={lower}"])
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).digest()


def engine_digest(engine: Any, raw: str, unit: str) -> bytes:
    """The digest of a raw source held by an engine."""
    columns = engine.source_columns(raw)
    types = engine.raw_types(raw)
    rows, upper, lower = engine.query(digest_query(raw, columns, types, engine.dialect))[0]
    return finish(columns, int(rows), int(upper), int(lower), unit)


def frame_digest(frame: Any, unit: str) -> bytes:
    """The digest of a raw pandas frame (a CSV read as text, or a user's DataFrame), computed by
    an in-process DuckDB so that it equals what an engine computes on the same data.

    Numeric and boolean columns go to DuckDB typed (their canonical cells do not depend on how
    numbers are printed); every other column that is not all text (dates, pandas categoricals,
    mixed objects) is written as pandas writes a CSV file and read back as text, so a DataFrame
    and the file `to_csv` makes of it give one digest.
    """
    import pandas as pd

    from jostle.data.engine.duckdb_engine import DuckDBEngine

    frame = frame.reset_index(drop=True)
    frame.columns = [str(c) for c in frame.columns]
    for name in frame.columns:
        column = frame[name]
        if _typed_for_duckdb(column.dtype):
            continue
        if isinstance(column.dtype, pd.StringDtype):  # texts and missing cells only
            continue
        # Each cell is looked at, none hashed (`unique` raised on a NumPy array or a dict: the
        # curator's binding then failed on one row, issue 21 hole 4).
        if column.dtype == object and all(v is None or isinstance(v, str) for v in column.tolist()):
            continue
        frame[name] = _as_csv_text(column).to_numpy(dtype=object)  # by position: the index may be any
    engine = DuckDBEngine()
    return engine_digest(engine, engine.raw_frame(frame), unit)


def _typed_for_duckdb(dtype: Any) -> bool:
    """A numeric or boolean dtype DuckDB registers as it is (not complex, sparse or longdouble)."""
    import numpy as np
    import pandas as pd

    if isinstance(dtype, pd.SparseDtype) or pd.api.types.is_complex_dtype(dtype):
        return False
    if not (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)):
        return False
    return not (isinstance(dtype, np.dtype) and dtype.kind == "f" and dtype.itemsize > 8)


def _as_csv_text(column: Any) -> Any:
    """A column as the text pandas' CSV writer gives it (missing cells as None).

    A column the writer cannot print (a cell whose `str` raises, a whole number of more than
    4300 digits) is written with each cell's text by `jostle.data.cells.read_cell`'s rule
    instead (`_cell_text`), so that no cell makes the fingerprint, and with it the curator's
    binding, fail; such columns had no fingerprint before, so no ledger holds one to match.
    """
    import io

    import pandas as pd

    part = column.infer_objects() if column.dtype == object else column  # Timestamps write as dates
    try:
        written = part.to_frame("c").to_csv(index=False)
    except Exception:  # noqa: BLE001 - a cell's own __str__ or __format__ raised
        written = pd.Series([_cell_text(cell) for cell in column.tolist()], dtype=object).to_frame("c").to_csv(
            index=False)
    text = pd.read_csv(io.StringIO(written), dtype=str, keep_default_na=False)["c"]
    return text.where(text != "", None).astype(object)


def _cell_text(cell: Any) -> str | None:
    """A text for any cell that never raises: a plain value's own, else its kind's name."""
    from jostle.data.cells import MISSING, PLAIN, read_cell

    kind, value = read_cell(cell)
    if kind == MISSING:
        return None
    if kind != PLAIN:
        return f"<{kind}>"
    try:
        return str(value)
    except ValueError:  # a whole number beyond str()'s 4300 digits: its hexadecimal digits
        return f"{value:#x}"
