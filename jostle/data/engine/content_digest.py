"""The durable ledger's content digest, version 3: the canonical text of each distinct value once,
then whole-number arithmetic per row, computed by the engine holding the data.

Version 2 (jostle.data.engine.fingerprint) gave every cell of every row its canonical text (a
number parsed, its binary exponent found, a time stamp matched...) and took one MD5 per row: on
2 million rows of 15 columns it was 85-90% of a binding's time (issue 28). Version 3 keeps the
canonical text of a cell (fingerprint.cell_text, the same on every route and engine, so a
DataFrame, its CSV file and its Parquet file still agree) and changes how cells are combined:

  * a cell's code is MD5(column name, U+001F, canonical text), as two 64-bit halves (a, b)
    (DuckDB's md5_number_upper / md5_number_lower; Spark's `_md5_halves`); a missing cell's
    canonical text is 'm', as before. Equal raw values have one canonical text, so the codes of
    a column are computed once per DISTINCT raw value (its dictionary), and each row looks its
    cells up by an equi-join, which engines run in a vectorised hash join;
  * a row is (A, B) = (sum of its cells' a, sum of their b) mod 2^64: the column name inside
    each code makes the sum depend on which column holds which value, not on column order;
  * its hash is (u, w) = (mix(A + mix(B)), mix(B + C u)) mod 2^64, where `mix` is three rounds of
    x + floor(x / 2^s) and a product by an odd constant below 2^32, mod 2^64 (each round a
    bijection; the products stay below 2^96, exact in DuckDB's HUGEINT and Spark's
    DECIMAL(38, 0), so both engines compute the same bits);
  * the table is (row count, sum of u, sum of w), exact integers: a multiset hash, the same for
    any row order, and different when a row is added, removed or any cell changes (unless two
    64-bit sums collide by chance). The digest is SHA-256 of VERSION, the unit, the sorted
    column names and those three numbers (`finish`), kept in memory only, as before.

The mixing is not a cryptographic hash (nor was version 2's sum of MD5s a collision-resistant
multiset hash): the digest only has to tell the curator's re-export of equal rows, and is never
shown (the ledger keys on an HMAC of it). Which raw values are equal is the engine's equality on
the column's type for numbers and booleans (-0.0 = 0.0 and NaN = NaN, whose canonical texts
agree), and equality of the raw text (`fingerprint.raw_text`, what the canonical text is computed
from) for every other type, so that two values of one dictionary entry always have one canonical
text (DuckDB's INTERVAL '1 month' equals '30 days' but prints otherwise: they stay apart).

The work: DuckDB stores a CSV or DataFrame source once in a temporary table (each column is then
scanned once for its dictionary, not the file parsed once per column); a Parquet file is scanned
as it is. Measured by benchmarks/fingerprint.py against DuckDB's own scan of the file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from jostle.data.engine.dialect import as_text, spark_text
from jostle.data.engine.expressions import quote
from jostle.data.engine.fingerprint import _is_number_type, _md5_halves, raw_text, staged_cells

VERSION = "jostle-dataset/3"
MODULUS = 2 ** 64
# (shift, odd multiplier below 2^32) of each round of `mix`; the multipliers are the 32-bit
# golden-ratio and MurmurHash3 / xxHash constants.
MIX_ROUNDS = ((31, 0x9E3779B1), (29, 0x85EBCA77), (32, 0xC2B2AE3D))
FINAL_SHIFT = 29
LANE_MULTIPLIER = 0x27D4EB2F
MISSING = "m"


# ---------------------------------------------------------------- the definition, in Python
def cell_code(column: str, canonical: str) -> tuple[int, int]:
    """(a, b) of a cell from its column's name and its canonical text (the reference definition)."""
    digest = hashlib.md5((column + "\x1f" + canonical).encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "little"), int.from_bytes(digest[8:], "little")


def mix(x: int) -> int:
    """The row mixer on a whole number below 2^64 (the reference definition)."""
    for shift, multiplier in MIX_ROUNDS:
        x = (x + (x >> shift)) % MODULUS
        x = (x * multiplier) % MODULUS
    return (x + (x >> FINAL_SHIFT)) % MODULUS


def row_hash(codes: list[tuple[int, int]]) -> tuple[int, int]:
    """(u, w) of a row from its cells' codes (the reference definition)."""
    a = sum(code[0] for code in codes) % MODULUS
    b = sum(code[1] for code in codes) % MODULUS
    u = mix((a + mix(b)) % MODULUS)
    return u, mix((b + LANE_MULTIPLIER * u) % MODULUS)


def finish(columns: list[str], rows: int, first: int, second: int, unit: str) -> bytes:
    """The digest of a table from its aggregate (row count, sum of u, sum of w)."""
    text = "\n".join([VERSION, f"unit={unit}", "columns=" + "\x1f".join(sorted(columns)),
                      f"rows={rows}", f"u={first}", f"w={second}"])
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).digest()


# ---------------------------------------------------------------- the same, in SQL
def _modulus(dialect: str) -> str:
    return f"CAST({MODULUS} AS {'DECIMAL(38, 0)' if dialect == 'spark' else 'HUGEINT'})"


def _wide(sql: str, dialect: str) -> str:
    """A whole number below 2^64 in a type that holds sums and products of them."""
    return f"CAST({sql} AS {'DECIMAL(38, 0)' if dialect == 'spark' else 'HUGEINT'})"


def _shifted(sql: str, shift: int, dialect: str) -> str:
    """floor(x / 2^shift) of a whole number x >= 0 below 2^64 (DuckDB: a shift; its HUGEINT
    division took ten times as long as the rest of the row's arithmetic)."""
    if dialect == "spark":
        return _wide(f"({sql}) div {2 ** shift}", dialect)
    return f"(({sql}) >> {shift})"


def _mod(sql: str, dialect: str) -> str:
    """x mod 2^64 of a whole number x >= 0 (DuckDB: its low 64 bits, by a mask, for the same reason)."""
    if dialect == "spark":
        return _wide(f"pmod({sql}, {_modulus(dialect)})", dialect)
    return f"(({sql}) & CAST({MODULUS - 1} AS HUGEINT))"


def _mix_stages(column: str, out: str, dialect: str) -> list[str]:
    """SELECT lists, one per stage, computing mix(column) as `out` (each stage reads the last)."""
    stages, current = [], column
    for k, (shift, multiplier) in enumerate(MIX_ROUNDS):
        added, product = f"{out}_s{k}", f"{out}_p{k}"
        stages.append(f"{_mod(f'{current} + {_shifted(current, shift, dialect)}', dialect)} AS {added}")
        stages.append(f"{_mod(f'{added} * {multiplier}', dialect)} AS {product}")
        current = product
    stages.append(f"{_mod(f'{current} + {_shifted(current, FINAL_SHIFT, dialect)}', dialect)} AS {out}")
    return stages


def _literal(text: str, dialect: str) -> str:
    return spark_text(text) if dialect == "spark" else "'" + text.replace("'", "''") + "'"


def _halves(text_sql: str, dialect: str) -> tuple[str, str]:
    upper, lower = _md5_halves(text_sql, dialect)
    return _wide(upper, dialect), _wide(lower, dialect)


def _by_value(upper: str, dialect: str) -> bool:
    """Whether a column's dictionary is keyed by its values (numbers, booleans) or by their text."""
    if upper == "BOOLEAN" or _is_number_type(upper):
        return True
    return upper in ("VARCHAR", "STRING") or upper.startswith("VARCHAR(")


def dictionary_query(source: str, column: str, sql_type: str, dialect: str) -> str:
    """SQL of a column's dictionary: (k, a, b), one row per distinct raw key (never NULL)."""
    upper = sql_type.upper()
    column_sql = quote(column, dialect)
    if _by_value(upper, dialect):
        distinct = f"SELECT DISTINCT {column_sql} AS k, {column_sql} AS c FROM {source} WHERE {column_sql} IS NOT NULL"
    else:
        key = raw_text(column_sql, upper, dialect)
        first = "first" if dialect == "spark" else "any_value"
        distinct = (f"SELECT {key} AS k, {first}({column_sql}) AS c FROM {source} WHERE {column_sql} IS NOT NULL "
                    f"GROUP BY {key}")
    staged, cells = staged_cells(f"({distinct}) AS distinct_values", ["c"], {"c": sql_type}, dialect, keep=("k",))
    text = f"{_literal(column + chr(31), dialect)} || {cells[0]}"
    if dialect == "spark":
        # The MD5 once per value, in a stage of its own: each half reads 8 of its bytes, and
        # written inline the canonical text's expression was repeated 16 times (Spark took about
        # a second to plan each dictionary of a 4-row table).
        upper, lower = _md5_halves("h", dialect, hexadecimal=True)
        a, b = _wide(upper, dialect), _wide(lower, dialect)
        return f"SELECT k, {a} AS a, {b} AS b FROM (SELECT k, md5({text}) AS h FROM ({staged}) AS canonical) AS hashed"
    # One MD5 per value: md5_number is the digest as one 128-bit number whose low 64 bits are
    # md5_number_upper and high 64 bits md5_number_lower (each of which computes the MD5 again;
    # fingerprint._staged_digest_query, checked against them by tests/test_engines.py).
    return (f"SELECT k, CAST(n & CAST({MODULUS - 1} AS UHUGEINT) AS HUGEINT) AS a, CAST(n >> 64 AS HUGEINT) AS b "
            f"FROM (SELECT k, md5_number({text}) AS n FROM ({staged}) AS canonical) AS coded")


def row_sums_query(source: str, columns: list[str], types: dict[str, str], dictionaries: list[str],
                   dialect: str) -> str:
    """SQL of each row's (A, B) over `source` and its columns' dictionaries (`row_a`, `row_b`)."""
    joins, a_terms, b_terms = [], [], []
    for i, (column, dictionary) in enumerate(zip(columns, dictionaries)):
        upper = types.get(column, "VARCHAR").upper()
        column_sql = f"s.{quote(column, dialect)}"
        key = column_sql if _by_value(upper, dialect) else raw_text(column_sql, upper, dialect)
        joins.append(f"LEFT JOIN {dictionary} AS d{i} ON {key} = d{i}.k")
        missing_a, missing_b = _halves(_literal(column + chr(31) + MISSING, dialect), dialect)
        a_terms.append(f"COALESCE(d{i}.a, {missing_a})")
        b_terms.append(f"COALESCE(d{i}.b, {missing_b})")
    return (f"SELECT {_mod(' + '.join(a_terms), dialect)} AS row_a, {_mod(' + '.join(b_terms), dialect)} AS row_b "
            f"FROM {source} AS s {' '.join(joins)}")


def rows_query(source: str, columns: list[str], types: dict[str, str], dictionaries: list[str], dialect: str) -> str:
    """SQL of (rows, sum of u, sum of w) as text over `source` and its columns' dictionaries
    (the mixing in SQL, as Spark runs it; DuckDB mixes the (A, B) of `row_sums_query` in NumPy:
    the same arithmetic, `mix_sums`, five times faster than its staged 128-bit SQL)."""
    query = row_sums_query(source, columns, types, dictionaries, dialect)
    # u = mix(A + mix(B)), w = mix(B + C u), one stage per SELECT so that no expression is repeated
    stages = _mix_stages("row_b", "mb", dialect)
    stages.append(f"{_mod('row_a + mb', dialect)} AS ua")
    stages += _mix_stages("ua", "u", dialect)
    stages.append(f"{_mod(f'row_b + {LANE_MULTIPLIER} * u', dialect)} AS wb")
    stages += _mix_stages("wb", "w", dialect)
    for stage in stages:
        query = f"SELECT *, {stage} FROM ({query}) AS m"
    return (f"SELECT {as_text('count(*)', dialect)}, {as_text('COALESCE(sum(u), 0)', dialect)}, "
            f"{as_text('COALESCE(sum(w), 0)', dialect)} FROM ({query}) AS hashed")


def mix_sums(chunks: Iterable[Any]) -> tuple[int, int, int]:
    """(rows, sum of u, sum of w) of the rows' (A, B), given in chunks (frames with the unsigned
    64-bit columns `row_a`, `row_b`): `row_hash`'s arithmetic in NumPy, whose unsigned 64-bit
    sums and products wrap modulo 2^64. The sums are exact: each chunk's 32-bit halves are summed
    apart (below 2^64 for fewer than 2^32 rows a chunk) and added up as Python integers."""
    import numpy as np

    rows = first = second = 0
    low = np.uint64(MODULUS // 2 ** 32 - 1)

    def mixed(x: Any) -> Any:
        for shift, multiplier in MIX_ROUNDS:
            x = x + (x >> np.uint64(shift))
            x = x * np.uint64(multiplier)
        return x + (x >> np.uint64(FINAL_SHIFT))

    def exact_sum(x: Any) -> int:
        return int((x & low).sum(dtype=np.uint64)) + (int((x >> np.uint64(32)).sum(dtype=np.uint64)) << 32)

    with np.errstate(over="ignore"):
        for chunk in chunks:
            a = chunk["row_a"].to_numpy(dtype=np.uint64)
            b = chunk["row_b"].to_numpy(dtype=np.uint64)
            u = mixed(a + mixed(b))
            w = mixed(b + np.uint64(LANE_MULTIPLIER) * u)
            rows += len(a)
            first += exact_sum(u)
            second += exact_sum(w)
    return rows, first, second


# ---------------------------------------------------------------- on an engine
def engine_digest_v3(engine: Any, raw: str, unit: str, progress: Any = None) -> bytes:
    """The version-3 digest of a raw source held by an engine (DuckDB or Spark).

    Args:
        engine: The engine holding `raw`.
        raw: A raw view (a CSV or Parquet scan, a registered DataFrame).
        unit: The privacy unit's text (part of the digest).
        progress: A `jostle.data.progress.Steps`-like object advanced once per column and once
            for the rows (public steps), or None.
    """
    columns = sorted(engine.source_columns(raw))
    types = engine.raw_types(raw)
    if not columns:
        rows = engine.query(f"SELECT {as_text('count(*)', engine.dialect)} FROM {raw}")[0][0]
        return finish(columns, int(rows), 0, 0, unit)
    with engine.digest_scope(raw) as (source, keep):
        dictionaries = []
        for column in columns:
            dictionaries.append(keep(dictionary_query(source, column, types.get(column, "VARCHAR"), engine.dialect)))
            if progress is not None:
                progress.advance(note=column)
        if engine.dialect == "duckdb":
            query = row_sums_query(source, columns, types, dictionaries, engine.dialect)
            rows, first, second = mix_sums(engine.chunks(f"SELECT CAST(row_a AS UBIGINT) AS row_a, "
                                                         f"CAST(row_b AS UBIGINT) AS row_b FROM ({query}) AS r"))
        else:
            rows, first, second = engine.query(rows_query(source, columns, types, dictionaries, engine.dialect))[0]
        if progress is not None:
            progress.advance(note="rows")
    return finish(columns, int(rows), int(first), int(second), unit)


def digest_steps(raw_columns: list[str]) -> int:
    """How many progress steps `engine_digest_v3` makes for a table of these columns."""
    return len(raw_columns) + 1


__all__ = ["VERSION", "engine_digest_v3", "cell_code", "mix", "row_hash", "finish", "dictionary_query",
           "rows_query", "digest_steps"]
