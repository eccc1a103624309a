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

from jostle.data.engine.expressions import quote

VERSION = "jostle-dataset/2"
MISSING_WORDS = ("", "na", "nan", "null", "none")
NUMERIC_PREFIXES = ("DOUBLE", "FLOAT", "REAL", "BIGINT", "INTEGER", "SMALLINT", "TINYINT", "HUGEINT", "UBIGINT",
                    "UINTEGER", "USMALLINT", "UTINYINT", "DECIMAL", "INT", "LONG", "SHORT", "BYTE")


def _pow2(exponent_sql: str) -> str:
    """2^k as two exactly representable factors (k up to about 1100 in magnitude)."""
    half = f"CAST(floor(({exponent_sql}) / 2.0) AS INTEGER)"
    return f"pow(2.0, {half}) * pow(2.0, ({exponent_sql}) - {half})"


def number_text(x: str) -> str:
    """SQL giving the canonical text of a finite or infinite non-NaN DOUBLE `x`."""
    rough = f"CAST(floor(log2(abs({x}))) AS INTEGER)"
    scaled = f"abs({x}) * {_pow2(f'52 - {rough}')}"
    exponent = (f"({rough} + (CASE WHEN {scaled} >= pow(2.0, 53) THEN 1 WHEN {scaled} < pow(2.0, 52) "
                f"THEN -1 ELSE 0 END))")
    mantissa = f"CAST({x} * {_pow2(f'52 - {exponent}')} AS BIGINT)"
    return (f"(CASE WHEN {x} = 0 THEN 'n:0' WHEN isinf({x}) THEN (CASE WHEN {x} > 0 THEN 'n:inf' ELSE 'n:-inf' END) "
            f"ELSE 'n:' || CAST({mantissa} AS VARCHAR) || 'p' || CAST({exponent} AS VARCHAR) END)")


def cell_text(column_sql: str, sql_type: str) -> str:
    """SQL giving a raw cell's canonical text (see the module docstring)."""
    upper = sql_type.upper()
    if upper.startswith(NUMERIC_PREFIXES):
        value = f"CAST({column_sql} AS DOUBLE)"
        return f"(CASE WHEN {column_sql} IS NULL OR isnan({value}) THEN 'm' ELSE {number_text(value)} END)"
    if upper == "BOOLEAN":
        return f"(CASE WHEN {column_sql} IS NULL THEN 'm' WHEN {column_sql} THEN 'n:1' ELSE 'n:0' END)"
    text = f"trim(CAST({column_sql} AS VARCHAR))"
    number = f"TRY_CAST({text} AS DOUBLE)"
    words = ", ".join(f"'{w}'" for w in MISSING_WORDS)
    return (f"(CASE WHEN {column_sql} IS NULL OR lower({text}) IN ({words}) THEN 'm' "
            f"WHEN lower({text}) = 'true' THEN 'n:1' WHEN lower({text}) = 'false' THEN 'n:0' "
            f"WHEN {number} IS NOT NULL THEN (CASE WHEN isnan({number}) THEN 'm' ELSE {number_text(number)} END) "
            f"ELSE 's:' || {text} END)")


def digest_query(raw: str, columns: list[str], types: dict[str, str], dialect: str = "duckdb") -> str:
    """SQL giving (rows, sum of upper MD5 halves, sum of lower halves) as text, over a raw source."""
    ordered = sorted(columns)
    if not ordered:
        return f"SELECT CAST(count(*) AS VARCHAR), '0', '0' FROM {raw}"
    cells = " || chr(31) || ".join(cell_text(quote(c, dialect), types.get(c, "VARCHAR")) for c in ordered)
    return (f"SELECT CAST(count(*) AS VARCHAR), CAST(COALESCE(sum(md5_number_upper(r)), 0) AS VARCHAR), "
            f"CAST(COALESCE(sum(md5_number_lower(r)), 0) AS VARCHAR) FROM (SELECT {cells} AS r FROM {raw}) AS rows")


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
        if pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype):
            continue
        if isinstance(column.dtype, pd.StringDtype):  # texts and missing cells only
            continue
        if column.dtype == object and all(v is None or isinstance(v, str) for v in column.unique()):
            continue
        frame[name] = _as_csv_text(column).to_numpy(dtype=object)  # by position: the index may be any
    engine = DuckDBEngine(threads=1)
    return engine_digest(engine, engine.raw_frame(frame), unit)


def _as_csv_text(column: Any) -> Any:
    """A column as the text pandas' CSV writer gives it (missing cells as None)."""
    import io

    import pandas as pd

    part = column.infer_objects() if column.dtype == object else column  # Timestamps write as dates
    text = pd.read_csv(io.StringIO(part.to_frame("c").to_csv(index=False)), dtype=str, keep_default_na=False)["c"]
    return text.where(text != "", None).astype(object)
