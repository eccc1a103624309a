"""SQL for raw cells that differs between DuckDB and Spark: text casts, trimming, numbers in text.

Schema conformance (`conform`) and the fingerprint (`fingerprint`) read raw cells the same way
on every engine. DuckDB's forms are the reference (they are what the in-memory route's
fingerprint runs, and what DuckDB's conformance was checked against); Spark's reproduce them:

  * a cell as text: DuckDB `CAST(x AS VARCHAR)`, Spark `CAST(x AS STRING)` (Spark's VARCHAR
    needs a length);
  * trimming: DuckDB's `trim` removes Unicode space separators (category Zs: ' ', U+00A0,
    U+3000, ...) but not tabs or line breaks; Spark's removes only ' ', so Spark uses a
    regular expression over `\\p{Zs}`;
  * a number in text: DuckDB's `TRY_CAST(t AS DOUBLE)` reads Python's float grammar with
    ASCII digits (a sign, digits with single underscores between them, an optional point and
    exponent, inf/infinity/nan in any case, ASCII white space around), and also '+-1' and
    'nan(...)'. Spark's cast reads Java's grammar (it also takes '1.5d', '0x1p3', and not
    '1_000' or '-nan'), so Spark matches DuckDB's grammar with a regular expression first and
    only then casts (with TRY_CAST, so no cell can raise even under ANSI mode).
"""

from __future__ import annotations

ASCII_SPACE = "[ \\t\\n\\x0B\\f\\r]"  # what DuckDB's cast skips around a number (C's isspace)
_DIGITS = "[0-9](_?[0-9])*"
_EXPONENT = f"([eE][+-]?{_DIGITS})"
NUMBER_PATTERN = (f"^{ASCII_SPACE}*(\\+-|[+-])?("
                  f"({_DIGITS})?\\.{_DIGITS}{_EXPONENT}?|{_DIGITS}\\.?{_EXPONENT}?"
                  f"|(?i:inf|infinity)|(?i:nan)(\\([0-9A-Za-z_]*\\))?){ASCII_SPACE}*\\z")
ZS_ENDS = "^\\p{Zs}+|\\p{Zs}+\\z"  # Unicode space separators at either end
NOT_IN_NUMBER = "[_+ " + ASCII_SPACE[1:-1] + "]"  # what Java's parser must not see


def spark_text(value: str) -> str:
    """A Spark SQL string literal (Spark reads backslash escapes in literals)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def as_text(sql: str, dialect: str) -> str:
    """A cell of any type as text."""
    return f"CAST({sql} AS {'STRING' if dialect == 'spark' else 'VARCHAR'})"


def trim(text_sql: str, dialect: str) -> str:
    """DuckDB's trim: leading and trailing Unicode space separators removed."""
    if dialect == "spark":
        return f"regexp_replace({text_sql}, {spark_text(ZS_ENDS)}, '')"
    return f"trim({text_sql})"


def text_number(text_sql: str, dialect: str) -> str:
    """DuckDB's TRY_CAST(text AS DOUBLE): the number a text holds, or NULL."""
    if dialect != "spark":
        return f"TRY_CAST({text_sql} AS DOUBLE)"
    lowered = f"lower({text_sql})"
    stripped = f"regexp_replace({text_sql}, {spark_text(NOT_IN_NUMBER)}, '')"
    return (f"(CASE WHEN {text_sql} RLIKE {spark_text(NUMBER_PATTERN)} THEN "
            f"(CASE WHEN {lowered} LIKE '%nan%' THEN CAST('NaN' AS DOUBLE) "
            f"WHEN {lowered} LIKE '%inf%' THEN (CASE WHEN {text_sql} LIKE '%-%' THEN CAST('-Infinity' AS DOUBLE) "
            f"ELSE CAST('Infinity' AS DOUBLE) END) "
            f"ELSE TRY_CAST({stripped} AS DOUBLE) END) END)")


def is_infinite(sql: str, dialect: str) -> str:
    """A DOUBLE is +-inf (Spark has no isinf)."""
    if dialect == "spark":
        return f"(abs({sql}) = CAST('Infinity' AS DOUBLE))"
    return f"isinf({sql})"


def row_number(dialect: str) -> str:
    """The 1-based position of a raw row in its source's order (Spark's window needs an order)."""
    if dialect == "spark":
        return "row_number() OVER (ORDER BY monotonically_increasing_id())"
    return "row_number() OVER ()"


__all__ = ["as_text", "trim", "text_number", "is_infinite", "row_number", "spark_text", "NUMBER_PATTERN"]
