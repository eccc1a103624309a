"""Schema conformance as SQL: `jostle.data.schema.conform`'s rules, vectorised on an engine.

For each declared column the raw cell (text from a CSV, or a typed value from Parquet or a
DataFrame) becomes the stored value:
  * numeric: a missing cell (empty, na, nan, null, NaN) or one that is not a number takes the
    column's default, or breaks the row when there is none; a number is clamped into the
    bounds (rounded half-even first for an integer column), infinities to the bounds;
  * categorical: the code of the first declared value the cell matches (the cell itself, its
    text, or its number equal to a numeric category, in `_match_category`'s order), else the
    default's code, or the row breaks.
A row that breaks is refused by a curator's schema (the first such row is named to the
curator) and dropped under a program's schema. Each rule is decided per row, so dropping is
1-stable and nothing but the count (to the curator's logger) depends on the rows.
"""

from __future__ import annotations

import math
from typing import Any

from jostle.data.engine.dialect import as_text, row_number, text_number, trim
from jostle.data.engine.expressions import Compiler, literal, quote
from jostle.data.engine.relation import conform_number_sql
from jostle.data.schema import Categorical, Numeric, Schema

MISSING_WORDS = ("na", "nan", "null")
NUMERIC_TYPES = ("DOUBLE", "FLOAT", "REAL", "BIGINT", "INTEGER", "SMALLINT", "TINYINT", "HUGEINT", "UBIGINT",
                 "UINTEGER", "USMALLINT", "UTINYINT", "DECIMAL")


def _is_numeric_type(sql_type: str) -> bool:
    return sql_type.upper().startswith(NUMERIC_TYPES)


def _is_text_type(sql_type: str) -> bool:
    return sql_type.upper() in ("VARCHAR", "STRING", "TEXT")


def _missing_text(cell: str, dialect: str = "duckdb") -> str:
    trimmed = trim(cell, dialect)
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
            filled = f"(CASE WHEN {bad} THEN {fallback} ELSE {value} END)"
            outputs.append(f"{conform_number_sql(compiler, filled, spec)} AS {quote(name, dialect)}")
        else:
            code, bad = _categorical_cell(cell, sql_type, spec, dialect)
            default = spec.values.index(spec.default) if spec.default is not None else 0
            outputs.append(f"COALESCE({code}, {default}) AS {quote(name, dialect)}")
        if spec.default is None:
            problems.append((name, bad))
    return f"SELECT {', '.join(outputs)} FROM {raw}", problems


def _numeric_cell(cell: str, sql_type: str, dialect: str = "duckdb") -> tuple[str, str]:
    """(the cell as a DOUBLE, the SQL of "missing or not a number")."""
    if _is_numeric_type(sql_type):
        value = f"CAST({cell} AS DOUBLE)"
        return value, f"({cell} IS NULL OR isnan({value}))"
    if sql_type.upper() == "BOOLEAN":
        return f"CAST({cell} AS DOUBLE)", f"({cell} IS NULL)"
    text = as_text(cell, dialect)
    parsed = text_number(trim(text, dialect), dialect)
    return parsed, f"({_missing_text(text, dialect)} OR {parsed} IS NULL OR isnan({parsed}))"


def _categorical_cell(cell: str, sql_type: str, spec: Categorical, dialect: str = "duckdb") -> tuple[str, str]:
    """(the code of the category the cell matches or NULL, the SQL of "no match")."""
    from jostle.data.engine.expressions import _is_bool, _is_number

    cases = []
    if _is_text_type(sql_type) or not (_is_numeric_type(sql_type) or sql_type.upper() == "BOOLEAN"):
        text = as_text(cell, dialect)
        trimmed = trim(text, dialect)
        number = text_number(trimmed, dialect)
        for i, value in enumerate(spec.values):  # the cell itself: `value in values`
            if isinstance(value, str):
                cases.append(f"WHEN {text} = {literal(value).sql} THEN {i}")
        for i, value in enumerate(spec.values):  # then each category's text, or its number
            test = f"{trimmed} = {literal(str(value)).sql}"
            if _is_number(value) and math.isfinite(float(value)):
                test += f" OR {number} = {literal(float(value)).sql}"
            cases.append(f"WHEN {test} THEN {i}")
        missing = _missing_text(text, dialect)
    else:
        number = f"CAST({cell} AS DOUBLE)"
        for i, value in enumerate(spec.values):
            if _is_number(value) or _is_bool(value):
                cases.append(f"WHEN {number} = {literal(float(value)).sql} THEN {i}")
        text = as_text(cell, dialect)
        for i, value in enumerate(spec.values):
            cases.append(f"WHEN {text} = {literal(str(value)).sql} THEN {i}")
        missing = f"({cell} IS NULL OR isnan({number}))"
    code = f"(CASE WHEN {missing} THEN NULL {' '.join(cases)} ELSE NULL END)"
    return code, f"({code} IS NULL)"


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
    cell = engine.query(f"SELECT {as_text(quote(column, engine.dialect), engine.dialect)} FROM "
                        f"(SELECT {position} AS n, * FROM {raw}) AS r WHERE n = {row}")[0][0]
    spec = schema[column]
    if cell is None or str(cell).strip() == "" or str(cell).strip().lower() in MISSING_WORDS:
        what = "is missing"
    elif isinstance(spec, Numeric):
        what = f"{cell!r} is not a number"
    else:
        what = f"{cell!r} is not one of {list(spec.values)}"
    return column, row, what
