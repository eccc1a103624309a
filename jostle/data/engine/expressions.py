"""Row functions as engine expressions: the symbolic form of `lambda r: ...` and its SQL.

A row function (`where`, `derive`) on a table that lives on an engine (DuckDB, Spark) is not
run in Python row by row: the language evaluates it once on symbolic columns (see
`jostle.language.values.RowValues.expr`), which builds the tree below, and the engine runs the
tree as one SQL expression. The language still decides every error on the columns' public
probe first (`row_apply`), so whether a row function fails never depends on the rows; this
module only has to give, on each row, the value the in-memory (numpy) path gives.

How numpy's semantics are kept, operation by operation (the differential test
`tests/test_engines.py::test_compiled_row_functions_agree_with_numpy` checks each):
  * numeric columns are DOUBLE, as they are float64 in memory; arithmetic is IEEE in both
    (a division by zero gives inf or NaN, never an error); `//` is floor(a / b) and `%` is
    DuckDB's fmod, which takes the divisor's sign as numpy's `mod` does;
  * numpy's comparisons are false on NaN, SQL's treat NaN as the largest value and equal to
    itself, so every numeric comparison is guarded by isnan;
  * `==` follows `jostle.language.operators.equal` (a boolean never equals a number, a text
    never equals a number): decided here on the public types, so it compiles to FALSE;
  * categorical columns are stored as codes (the position of the value in the public domain);
    a comparison with a public value compiles to a test on codes, found by `equal` on the
    domain, and other uses decode the code with a CASE over the domain;
  * `round(x, d)` is numpy's rint(x * 10^d) / 10^d, with round-half-even.
Whatever this module cannot compile raises `NotCompilable`; the table is then computed in
memory (correct, slower) and a note says so. The decision depends on the expression's shape
and the public schema only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

ARITHMETIC = ("+", "-", "*", "/", "//", "%", "**")
ORDERING = ("<", "<=", ">", ">=")


class NotCompilable(Exception):
    """An expression the engine cannot run exactly as numpy would (the reason is the message)."""


@dataclass(frozen=True)
class Column:
    """A column of the row, with its public domain (`Numeric` or `Categorical`)."""

    name: str
    spec: Any


@dataclass(frozen=True)
class Literal:
    """A public scalar used in a row function."""

    value: Any


@dataclass(frozen=True)
class Apply:
    """An operation on sub-expressions; `param` holds public extras (a list for `in`, digits)."""

    op: str
    args: tuple
    param: Any = None


Expression = Column | Literal | Apply


def quote(name: str, dialect: str = "duckdb") -> str:
    """A column name as an SQL identifier of the dialect."""
    if dialect == "spark":
        return "`" + name.replace("`", "``") + "`"
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class Compiled:
    """An SQL expression and what it holds: 'num', 'bool', 'str', or 'code' (with the domain)."""

    sql: str
    kind: str
    values: tuple = ()


def _number(value: float) -> str:
    value = float(value)
    if math.isnan(value):
        return "CAST('NaN' AS DOUBLE)"
    if math.isinf(value):
        return f"CAST('{'Infinity' if value > 0 else '-Infinity'}' AS DOUBLE)"
    return f"CAST({value!r} AS DOUBLE)"


def _text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _is_number(value: Any) -> bool:
    import numpy as np

    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _is_bool(value: Any) -> bool:
    import numpy as np

    return isinstance(value, (bool, np.bool_))


def literal(value: Any) -> Compiled:
    """A public scalar as SQL."""
    if _is_bool(value):
        return Compiled("TRUE" if value else "FALSE", "bool")
    if _is_number(value):
        if isinstance(value, int) and abs(value) > 2 ** 53:
            raise NotCompilable("a whole number beyond 2^53 (numpy keeps it exact)")
        return Compiled(_number(value), "num")
    if isinstance(value, str):
        return Compiled(_text(value), "str")
    raise NotCompilable(f"a {type(value).__name__} constant")


class Compiler:
    """Compiles expressions for one SQL dialect ('duckdb' or 'spark').

    Args:
        dialect: 'duckdb' or 'spark'.
        column_sql: The SQL of a stored column (its quoted name, by default).
    """

    def __init__(self, dialect: str = "duckdb", column_sql: Callable[[str], str] | None = None) -> None:
        self.dialect = dialect
        self.column_sql = column_sql or (lambda name: quote(name, dialect))

    # ------------------------------------------------------------ dialect differences
    def isnan(self, sql: str) -> str:
        return f"isnan({sql})"

    def fmod(self, a: str, b: str) -> str:
        if self.dialect == "duckdb":  # DuckDB's fmod takes the divisor's sign, like numpy's mod
            return f"(CASE WHEN {b} = 0 THEN CAST('NaN' AS DOUBLE) ELSE fmod({a}, {b}) END)"
        # Spark's % takes the dividend's sign (Java's fmod): move it to the divisor's, as numpy does.
        r = f"({a} % {b})"
        return (f"(CASE WHEN {b} = 0 THEN CAST('NaN' AS DOUBLE) WHEN {r} <> 0 AND (({r} < 0) <> ({b} < 0)) "
                f"THEN {r} + {b} ELSE {r} END)")

    def round_even(self, sql: str) -> str:
        return f"round_even({sql}, 0)" if self.dialect == "duckdb" else f"bround({sql}, 0)"

    def repeat(self, text: str, times: int) -> str:
        return f"repeat({text}, {max(times, 0)})"

    # ------------------------------------------------------------ compile
    def compile(self, expression: Any) -> Compiled:
        """The SQL of an expression (raises NotCompilable)."""
        if isinstance(expression, Column):
            return self._column(expression)
        if isinstance(expression, Literal):
            return literal(expression.value)
        if isinstance(expression, Apply):
            return self._apply(expression)
        raise NotCompilable(f"a {type(expression).__name__}")

    def _column(self, column: Column) -> Compiled:
        from jostle.data.schema import Numeric

        sql = self.column_sql(column.name)
        if isinstance(column.spec, Numeric):
            return Compiled(sql, "num")
        return Compiled(sql, "code", tuple(column.spec.values))

    def decode(self, compiled: Compiled) -> Compiled:
        """A code as the value it stands for (only for a domain of one type)."""
        if compiled.kind != "code":
            return compiled
        values = compiled.values
        if all(_is_number(v) for v in values):
            kind, parts = "num", [_number(v) for v in values]
        elif all(isinstance(v, str) for v in values):
            kind, parts = "str", [_text(v) for v in values]
        elif all(_is_bool(v) for v in values):
            kind, parts = "bool", ["TRUE" if v else "FALSE" for v in values]
        else:
            raise NotCompilable("a categorical column whose values are of several types")
        cases = " ".join(f"WHEN {i} THEN {part}" for i, part in enumerate(parts))
        return Compiled(f"(CASE {compiled.sql} {cases} END)", kind)

    def truth(self, compiled: Compiled) -> str:
        """numpy's astype(bool): nonzero (NaN included) for numbers, non-empty for texts."""
        value = self.decode(compiled)
        if value.kind == "bool":
            return value.sql
        if value.kind == "num":
            return f"({value.sql} <> 0 OR {self.isnan(value.sql)})"
        return f"(length({value.sql}) > 0)"

    def _apply(self, node: Apply) -> Compiled:
        op, args = node.op, [self.compile(a) for a in node.args]
        if op in ("==", "!="):
            same = self._equal(node.args[0], node.args[1], args[0], args[1])
            return Compiled(same if op == "==" else f"(NOT {same})", "bool")
        if op in ("in", "not in"):
            found = self._member(args[0], node.param)
            return Compiled(found if op == "in" else f"(NOT {found})", "bool")
        if op == "not":
            return Compiled(f"(NOT {self.truth(args[0])})", "bool")
        if op in ("and", "or"):
            return Compiled(f"({self.truth(args[0])} {op.upper()} {self.truth(args[1])})", "bool")
        if op == "if":
            then, orelse = self.decode(args[1]), self.decode(args[2])
            then, orelse = self._same_kind(then, orelse)
            return Compiled(f"(CASE WHEN {self.truth(args[0])} THEN {then.sql} ELSE {orelse.sql} END)", then.kind)
        values = [self.decode(a) for a in args]
        if op in ORDERING:
            a, b = values
            if a.kind == b.kind == "num":
                return Compiled(f"(NOT {self.isnan(a.sql)} AND NOT {self.isnan(b.sql)} AND {a.sql} {op} {b.sql})",
                                "bool")
            if a.kind == b.kind == "str":
                return Compiled(f"({a.sql} {op} {b.sql})", "bool")
            raise NotCompilable(f"'{op}' between a {a.kind} and a {b.kind}")
        if op in ARITHMETIC:
            return self._arithmetic(op, values[0], values[1])
        if op in ("neg", "pos"):
            (a,) = values
            if a.kind != "num":
                raise NotCompilable(f"unary '{op}' on a {a.kind}")
            return Compiled(f"(-{a.sql})" if op == "neg" else a.sql, "num")
        if op in ("sqrt", "log", "exp", "abs"):
            (a,) = values
            a = self._as_number(a)
            function = {"log": "ln"}.get(op, op)
            return Compiled(f"{function}({a.sql})", "num")
        if op == "round":
            (a,) = values
            a = self._as_number(a)
            digits = int(node.param)
            scale = _number(10.0 ** abs(digits))
            if digits >= 0:
                return Compiled(f"({self.round_even(f'({a.sql} * {scale})')} / {scale})", "num")
            return Compiled(f"({self.round_even(f'({a.sql} / {scale})')} * {scale})", "num")
        raise NotCompilable(f"the operation '{op}'")

    def _as_number(self, value: Compiled) -> Compiled:
        if value.kind == "num":
            return value
        if value.kind == "bool":
            return Compiled(f"CAST({value.sql} AS DOUBLE)", "num")
        raise NotCompilable(f"a number was needed, got a {value.kind}")

    def _same_kind(self, a: Compiled, b: Compiled) -> tuple[Compiled, Compiled]:
        if a.kind == b.kind:
            return a, b
        if {a.kind, b.kind} == {"num", "bool"}:  # numpy.where promotes booleans to numbers
            return self._as_number(a), self._as_number(b)
        raise NotCompilable(f"'if' with a {a.kind} and a {b.kind}")

    def _arithmetic(self, op: str, a: Compiled, b: Compiled) -> Compiled:
        if a.kind == b.kind == "str" and op == "+":
            return Compiled(f"({a.sql} || {b.sql})", "str")
        if a.kind != "num" or b.kind != "num":
            raise NotCompilable(f"'{op}' between a {a.kind} and a {b.kind}")
        if op in ("+", "-", "*", "/"):
            return Compiled(f"({a.sql} {op} {b.sql})", "num")
        if op == "//":  # numpy's floor_divide; DuckDB's own // raises on a zero divisor
            return Compiled(f"floor({a.sql} / {b.sql})", "num")
        if op == "%":
            return Compiled(self.fmod(a.sql, b.sql), "num")
        return Compiled(f"pow({a.sql}, {b.sql})", "num")

    def _equal(self, left: Any, right: Any, a: Compiled, b: Compiled) -> str:
        """SQL for `equal(x, y)` row by row (see `scalar_equal`)."""
        if isinstance(right, Literal) and a.kind == "code":
            return self._codes(a.sql, [i for i, v in enumerate(a.values) if scalar_equal(v, right.value)])
        if isinstance(left, Literal) and b.kind == "code":
            return self._codes(b.sql, [i for i, v in enumerate(b.values) if scalar_equal(left.value, v)])
        x, y = self.decode(a), self.decode(b)
        if {x.kind, y.kind} == {"num"}:
            return f"(NOT {self.isnan(x.sql)} AND {x.sql} = {y.sql})"
        if x.kind == y.kind:
            return f"({x.sql} = {y.sql})"
        return "FALSE"  # a number never equals a text or a boolean under `equal`

    def compile_equal_literal(self, value: Compiled, category: Any) -> str:
        """SQL for Python's `v in {category}` on a decoded value (True matches 1 and 1.0)."""
        if value.kind == "num":
            if _is_number(category) or _is_bool(category):
                return f"(NOT {self.isnan(value.sql)} AND {value.sql} = {_number(float(category))})"
            return "FALSE"
        if value.kind == "str":
            return f"({value.sql} = {_text(category)})" if isinstance(category, str) else "FALSE"
        if value.kind == "bool":
            if _is_bool(category) or (_is_number(category) and float(category) in (0.0, 1.0)):
                return value.sql if float(category) == 1.0 else f"(NOT {value.sql})"
            return "FALSE"
        raise NotCompilable(f"a {value.kind} as a category")

    def _codes(self, sql: str, codes: list[int]) -> str:
        if not codes:
            return "FALSE"
        return f"({sql} IN ({', '.join(map(str, codes))}))"

    def _member(self, value: Compiled, options: tuple) -> str:
        """`x in [o1, o2, ...]`: `equal(x, o)` for some public option o."""
        if value.kind == "code":
            return self._codes(value.sql, [i for i, v in enumerate(value.values)
                                           if any(scalar_equal(v, o) for o in options)])
        value = self.decode(value)
        if value.kind == "num":
            numbers = [_number(o) for o in options if _is_number(o) and not math.isnan(float(o))]
            if not numbers:
                return "FALSE"
            return f"(NOT {self.isnan(value.sql)} AND {value.sql} IN ({', '.join(numbers)}))"
        if value.kind == "str":
            texts = [_text(o) for o in options if isinstance(o, str)]
            return f"({value.sql} IN ({', '.join(texts)}))" if texts else "FALSE"
        flags = sorted({bool(o) for o in options if _is_bool(o)})
        if not flags:
            return "FALSE"
        return f"({value.sql} IN ({', '.join('TRUE' if f else 'FALSE' for f in flags)}))"


def scalar_equal(left: Any, right: Any) -> bool:
    """`jostle.language.operators.equal` on two public scalars: a boolean equals only a boolean,
    numbers compare by value (NaN equals nothing), anything else by Python's `==`."""
    if _is_bool(left) != _is_bool(right):
        return False
    try:
        return bool(left == right)
    except (TypeError, ValueError):
        return False
