"""Row functions as engine expressions: the symbolic form of `lambda r: ...` and its SQL.

A row function (`where`, `derive`) on a table that lives on an engine (DuckDB, Spark) is not
run in Python row by row: the language evaluates it once on symbolic columns (see
`jostle.language.values.RowValues.expr`), which builds the tree below, and the engine runs the
tree as one SQL expression. The language still decides every error on the columns' public
probe first (`row_apply`), so whether a row function fails never depends on the rows; this
module only has to give, on each row, the value the in-memory (numpy) path gives.

How numpy's semantics are kept, operation by operation (the differential property
`tests/test_engine_expressions.py::test_compiled_row_functions_agree_with_numpy` checks each
bit for bit on edge values, and `test_compiled_sql_never_raises_on_any_row` that no row makes
the SQL raise):
  * numeric columns are DOUBLE, as they are float64 in memory; + - * / are IEEE in both (a
    division by zero gives inf or NaN, never an error); `//` and `%` are numpy's npy_divmod
    step by step on the engines' `%` (C's fmod), not floor(a / b) (numpy's 1 // 0.1 is 9);
  * `**` compiles only where numpy computes it as one IEEE operation: a float64 column to a
    constant 2, -1, 0.5, 0 or 1 (x * x, 1 / x, sqrt, 1, x). numpy's own pow, log and exp (SIMD
    code on machines with AVX-512) differ from the engines' libm in the last bit on a few
    percent of inputs, so any other power, log() and exp() are NotCompilable; sqrt is
    correctly rounded everywhere and compiles;
  * what numpy computes on is tracked (`Compiled.flavour`): a categorical column's values are
    Python objects, on which numpy runs Python's operators (whole numbers stay exact, -0 is 0,
    a zero divisor fails the row), and `a if c else b` with whole-number constants makes an
    int64 column (wrapping, x // 0 is 0): arithmetic on either is NotCompilable, comparisons,
    equality, `in` and the float-valued built-ins of them compile;
  * numpy's comparisons are false on NaN, SQL's treat NaN as the largest value and equal to
    itself, so every numeric comparison is guarded by isnan;
  * `==` follows `jostle.language.operators.equal` (a boolean never equals a number, a text
    never equals a number): decided here on the public types, so it compiles to FALSE;
  * categorical columns are stored as codes (the position of the value in the public domain);
    a comparison with a public value compiles to a test on codes, found by `equal` on the
    domain, and other uses decode the code with a CASE over the domain (a whole number beyond
    2^53 as a category or constant is NotCompilable: a DOUBLE cannot hold it exactly);
  * `round(x, d)` is numpy's: rint for d = 0, else rint(x * s) / s with numpy's own scale s
    (1e9 multiplied by 10 step by step beyond 1e8, `power_of_ten`), round-half-even;
  * constants are DOUBLE casts of their shortest text, -0.0 included;
  * the public size limits of a row's values (jostle.language.row_limits: in memory, a row
    whose text grows beyond MAX_ROW_TEXT characters, or whose whole number reaches 10**308,
    takes the missing value) are kept by compiling only what no row can reach: each text
    carries `Compiled.longest`, the most characters any row's value can hold, from the public
    domains and constants (a category's longest value, a constant's length, the sum for `+`,
    the larger branch for `if`), and a text operation whose result could exceed the limit is
    NotCompilable, so it runs in memory on the engine's rows (the in-memory rule itself:
    missing rows dropped by `where`, the default in `derive`). Below the limit no row is
    ever flagged in memory, so SQL's `||` and CASE give the same rows. `text * n` and `%` on
    texts do not compile (numbers only), nor does arithmetic on Python whole numbers (a
    category's), and every whole number that compiles is at most 2^53 (categories, constants
    and their `abs` or `if`), far below 10**308; `**` compiles on float64 only, which
    overflows to inf alike in memory and in SQL. The engine's own length function is never
    consulted, so how it counts characters cannot matter;
  * a text constant holding NUL is NotCompilable: numpy's fixed-width texts (an `if` between
    text constants) drop trailing NULs, SQL keeps them.
A sub-expression read several times (numpy's floor division reads each operand six times) is
computed once per row as a column of an inner SELECT (`Compiler.share`), so SQL grows linearly.
Whatever this module cannot compile raises `NotCompilable`; the table is then computed in
memory (correct, slower) and a note says so. The decision depends on the expression's shape
and the public schema only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from jostle.data.limits import MAX_ROW_TEXT
# The SQL values the compiler builds on, re-exported (they lived here).
from jostle.data.engine.sql_values import (  # noqa: F401
    HALF, INFINITY, MINUS_INFINITY, NAN, NEGATIVE_ZERO, ONE, TWO_TO_52, ZERO, Compiled, NotCompilable, _exact_category,
    _is_bool, _is_number, _negative, _number, _text, _where_flavour, _whole_constant, literal, power_of_ten, quote,
    scalar_equal,
)

ARITHMETIC = ("+", "-", "*", "/", "//", "%", "**")
ORDERING = ("<", "<=", ">", ">=")


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


def _row_text(compiled: Compiled, what: str) -> Compiled:
    """A text an operation computes on each row, if no row's value can exceed MAX_ROW_TEXT.

    In memory every row operation's result is measured (jostle.language.row_limits): a row whose
    text is longer takes the missing value and holds a placeholder. SQL computes the long text
    and would keep the row, so a result that could be long on some row (a pair of long
    categories the public probe did not try, a long category chosen by `if`) is NotCompilable
    and runs in memory (jostle.language.tables._on_engine), the same rule on the same rows. The
    bound `longest` depends on the public domains, the program's constants and the expression's
    shape only, so which route runs never depends on the rows; below the limit no row can be
    flagged in memory, so the SQL gives every row memory's value.
    """
    if compiled.longest > MAX_ROW_TEXT:
        raise NotCompilable(f"{what} giving texts of up to {compiled.longest:,} characters, beyond the "
                            f"{MAX_ROW_TEXT:,} one row may hold (the in-memory rule decides those rows)")
    return compiled


class Compiler:
    """Compiles expressions for one SQL dialect ('duckdb' or 'spark').

    Args:
        dialect: 'duckdb' or 'spark'.
        column_sql: The SQL of a stored column (its quoted name, by default).
    """

    def __init__(self, dialect: str = "duckdb", column_sql: Callable[[str], str] | None = None) -> None:
        self.dialect = dialect
        self.column_sql = column_sql or (lambda name: quote(name, dialect))
        self.sharing = False
        self.lets: list[tuple[str, str]] = []
        self._shared: dict[str, str] = {}
        self._names = 0

    def share(self, sql: str) -> str:
        """`sql`, to be read several times by one expression, computed once per row.

        numpy's floor division reads each operand six times, a guarded comparison twice: written
        out, nested expressions would grow exponentially. With `sharing` on (plan_sql turns it
        on and takes `lets` after each step), a sub-expression longer than a name becomes a
        column of an inner SELECT and is read by name.
        """
        if not self.sharing or len(sql) <= 40:
            return sql
        if sql not in self._shared:
            name = f"__jostle_shared_{self._names}"
            self._names += 1
            self._shared[sql] = quote(name, self.dialect)
            self.lets.append((name, sql))
        return self._shared[sql]

    def take_lets(self) -> list[tuple[str, str]]:
        """The shared sub-expressions made since the last call, in the order they must be computed
        (they are columns of one step only: the next step shares afresh)."""
        lets, self.lets, self._shared = self.lets, [], {}
        return lets

    # ------------------------------------------------------------ dialect differences
    def isnan(self, sql: str) -> str:
        return f"isnan({sql})"

    def fmod(self, a: str, b: str) -> str:
        """numpy's remainder (npy_remainder): C's fmod moved to the divisor's sign, a zero
        remainder signed as the divisor, NaN for a zero divisor. Both engines' `%` on DOUBLEs is
        C's fmod (truncated, exact: DuckDB's fmod() function is not, nor does it keep -0.0)."""
        a, b = self.share(a), self.share(b)
        r = self._remainder(a, b)
        zero = self.signed_zero(f"{b} < 0", f"signum({b})")
        return (f"(CASE WHEN {b} = 0 THEN CAST('NaN' AS DOUBLE) WHEN {r} = 0 THEN {zero} "
                f"WHEN (({r} < 0) <> ({b} < 0)) THEN {r} + {b} ELSE {r} END)")

    def signed_zero(self, negative: str, sign: str) -> str:
        """-0.0 where the condition `negative` holds, else +0.0; `sign` is a product of signum()s
        whose sign is that condition's (Spark's form). Spark's optimizer takes the literals -0.0
        and 0.0 for one value (Scala's ==): it folds a CASE choosing between them into 0.0, even
        one choosing -1 or 1 times 0 (pushed into the branches first). signum() of a column
        times 0 it cannot fold (signum(-0.0) is -0.0; x * 0 is not 0 for NaN)."""
        if self.dialect == "spark":
            return f"({sign} * {ZERO})"
        return f"(CASE WHEN {negative} THEN {NEGATIVE_ZERO} ELSE {ZERO} END)"

    def _remainder(self, a: str, b: str) -> str:
        """C's fmod(a, b), shared; NaN for a zero divisor without computing it (a shared column is
        computed on every row, outside the CASE that tests the divisor, and Spark's % by zero
        raises under ANSI mode)."""
        return self.share(f"(CASE WHEN {b} = 0 THEN {NAN} ELSE {a} % {b} END)")

    def round_even(self, sql: str) -> str:
        if self.dialect == "duckdb":
            return f"round_even({sql}, 0)"
        # Spark's bround drops the sign of a zero result: numpy's rint(-0.4) is -0.0, the sign
        # of x (see `signed_zero` for why not a CASE between -0.0 and 0.0).
        sql = self.share(sql)
        rounded = self.share(f"bround({sql}, 0)")
        return f"(CASE WHEN {rounded} = 0 THEN signum({sql}) * {ZERO} ELSE {rounded} END)"

    # Spark's own arithmetic differs from numpy's (IEEE) at a few points, each answered here:
    # a zero divisor gives NULL (an error under ANSI mode) instead of +-inf or NaN; floor()
    # gives a BIGINT (saturating beyond 2^63); ln() gives NULL at and below zero; Java's pow
    # gives NaN for pow(1, NaN), pow(1, +-inf) and pow(-1, +-inf) where C's gives 1. Every
    # Spark form below raises on no row whether or not ANSI mode is on (a zero divisor never
    # reaches a division).
    def divide(self, a: str, b: str) -> str:
        if self.dialect == "duckdb":
            return f"({a} / {b})"
        a, b = self.share(a), self.share(b)
        return (f"(CASE WHEN {b} <> 0 THEN {a} / {b} WHEN {a} = 0 OR isnan({a}) THEN {NAN} "
                f"WHEN ({a} > 0) = {_negative(b)} THEN {MINUS_INFINITY} ELSE {INFINITY} END)")

    def floor_divide(self, a: str, b: str) -> str:
        # numpy's npy_divmod step by step (on both engines: floor(a / b) is not numpy's 1 // 0.1,
        # which is 9): the quotient of a - fmod(a, b), one less when the remainder's sign differs
        # from the divisor's, then rounded to the nearest whole number (it is one up to
        # rounding), and a zero quotient signed as a / b is.
        a, b = self.share(a), self.share(b)
        remainder = self._remainder(a, b)
        quotient = self.divide(f"({a} - {remainder})", b)  # guarded: a shared column is read on every row
        shifted = self.share(f"(CASE WHEN {remainder} <> 0 AND (({b} < 0) <> ({remainder} < 0)) "
                             f"THEN {quotient} - {ONE} ELSE {quotient} END)")
        floor = self.share(self.floor(shifted))
        zero = self.signed_zero(f"{_negative(a)} <> ({b} < 0)", f"signum({a}) * signum({b})")  # b is not 0
        return (f"(CASE WHEN {b} = 0 THEN {self.divide(a, b)} WHEN {shifted} = 0 THEN {zero} "
                f"WHEN {shifted} - {floor} > {HALF} AND NOT isnan({shifted}) THEN {floor} + {ONE} ELSE {floor} END)")

    def floor(self, sql: str) -> str:
        """floor() of a DOUBLE as a DOUBLE (NaN and infinities unchanged)."""
        if self.dialect == "duckdb":
            return f"floor({sql})"
        sql = self.share(sql)
        return f"(CASE WHEN abs({sql}) < {TWO_TO_52} THEN CAST(floor({sql}) AS DOUBLE) ELSE {sql} END)"

    def power(self, a: str, b: str) -> str:
        if self.dialect == "duckdb":
            return f"pow({a}, {b})"
        return (f"(CASE WHEN {a} = 1 THEN {ONE} WHEN {a} = -1 AND abs({b}) = {INFINITY} THEN {ONE} "
                f"ELSE pow({a}, {b}) END)")

    def ln(self, sql: str) -> str:
        if self.dialect == "duckdb":
            return f"ln({sql})"
        return f"(CASE WHEN {sql} > 0 THEN ln({sql}) WHEN {sql} = 0 THEN {MINUS_INFINITY} ELSE {NAN} END)"

    # ------------------------------------------------------------ compile
    def compile(self, expression: Any) -> Compiled:
        """The SQL of an expression (raises NotCompilable)."""
        if isinstance(expression, Column):
            return self._column(expression)
        if isinstance(expression, Literal):
            if isinstance(expression.value, str) and "\x00" in expression.value:
                # numpy's fixed-width texts (what `"a\x00" if c else "b"` makes of constants)
                # drop trailing NULs: in memory the row holds "a", in SQL "a\x00". Decided on
                # the program's constant alone.
                raise NotCompilable("a text constant holding NUL (numpy's fixed-width texts drop trailing NULs)")
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
        values, longest = compiled.values, 0
        if all(_is_number(v) for v in values):
            if not all(_exact_category(v) for v in values):
                raise NotCompilable("a category that is a whole number beyond 2^53 or not a float64")
            kind, parts = "num", [_number(v) for v in values]
        elif all(isinstance(v, str) for v in values):
            kind, parts = "str", [_text(v) for v in values]
            longest = max(map(len, values), default=0)  # the longest text a row can hold here
        elif all(_is_bool(v) for v in values):
            kind, parts = "bool", ["TRUE" if v else "FALSE" for v in values]
        else:
            raise NotCompilable("a categorical column whose values are of several types")
        cases = " ".join(f"WHEN {i} THEN {part}" for i, part in enumerate(parts))
        return Compiled(f"(CASE {compiled.sql} {cases} END)", kind, flavour="object", longest=longest)

    def truth(self, compiled: Compiled) -> str:
        """numpy's astype(bool): nonzero (NaN included) for numbers, non-empty for texts."""
        value = self.decode(compiled)
        if value.kind == "bool":
            return value.sql
        if value.kind == "num":
            number = self.share(value.sql)
            return f"({number} <> 0 OR {self.isnan(number)})"
        return f"(length({value.sql}) > 0)"

    def _apply(self, node: Apply) -> Compiled:
        if all(isinstance(a, Literal) for a in node.args):  # the language computes these itself,
            raise NotCompilable("an operation on public constants only")  # as Python, not numpy
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
            then, orelse, flavour = self._same_kind(then, orelse)
            chosen = Compiled(f"(CASE WHEN {self.truth(args[0])} THEN {then.sql} ELSE {orelse.sql} END)", then.kind,
                              flavour=flavour, longest=max(then.longest, orelse.longest))
            return _row_text(chosen, "'if ... else'") if chosen.kind == "str" else chosen
        values = [self.decode(a) for a in args]
        if op in ORDERING:
            a, b = values
            if a.kind == b.kind == "num":  # exact whatever the flavours: categories are exact doubles
                x, y = self.share(a.sql), self.share(b.sql)
                return Compiled(f"(NOT {self.isnan(x)} AND NOT {self.isnan(y)} AND {x} {op} {y})", "bool")
            if a.kind == b.kind == "str":
                return Compiled(f"({a.sql} {op} {b.sql})", "bool")
            raise NotCompilable(f"'{op}' between a {a.kind} and a {b.kind}")
        if op in ARITHMETIC:
            return self._arithmetic(op, values[0], values[1])
        if op in ("neg", "pos"):
            (a,) = values
            if a.kind != "num":
                raise NotCompilable(f"unary '{op}' on a {a.kind}")
            if op == "pos":  # +x is x for float64, int64 and Python numbers alike
                return a
            if a.flavour == "object":  # Python's -0 is 0 for a whole number, -0.0 for a float
                raise NotCompilable("unary '-' on a categorical column's numbers")
            if a.flavour == "int":  # int64 has no -0: 0 - x, whose zero is +0.0
                return Compiled(f"({ZERO} - {a.sql})", "num", flavour="int")
            return Compiled(f"(- {a.sql})", "num")
        if op == "abs":
            (a,) = values
            if a.kind == "bool" and a.flavour != "object":  # numpy's abs of booleans is booleans
                return a
            if a.kind != "num":  # abs(True) is the whole number 1 in Python
                raise NotCompilable(f"abs() of a {a.kind}")
            return Compiled(f"abs({a.sql})", "num", flavour=a.flavour)  # abs keeps the type
        if op in ("log", "exp"):
            # numpy's log and exp (SIMD code on this kind of machine, AVX-512 among others) and the
            # engines' libm differ in the last bit on a few percent of inputs: no exact SQL.
            raise NotCompilable(f"{op}() (numpy's own implementation differs from the engine's in the last bit)")
        if op == "sqrt":  # sqrt is correctly rounded everywhere; NaN below zero (older DuckDBs raise)
            number = self.share(self._as_number(values[0]).sql)
            return Compiled(f"(CASE WHEN {number} < 0 THEN {NAN} ELSE sqrt({number}) END)", "num")
        if op == "round":
            (a,) = values
            a = self._as_number(a)  # numpy.round(x.astype(float), digits)
            digits = int(node.param)
            if digits == 0:  # numpy.round with 0 digits is rint
                return Compiled(self.round_even(a.sql), "num")
            scale = _number(power_of_ten(abs(digits)))
            if digits > 0:
                return Compiled(f"({self.round_even(f'({a.sql} * {scale})')} / {scale})", "num")
            return Compiled(f"({self.round_even(f'({a.sql} / {scale})')} * {scale})", "num")
        raise NotCompilable(f"the operation '{op}'")

    def _as_number(self, value: Compiled) -> Compiled:
        """A value as float64, as `x.astype(float)` makes it (the math built-ins' first step)."""
        if value.kind == "num":
            return value
        if value.kind == "bool":
            return Compiled(f"CAST({value.sql} AS DOUBLE)", "num")
        raise NotCompilable(f"a number was needed, got a {value.kind}")

    def _same_kind(self, a: Compiled, b: Compiled) -> tuple[Compiled, Compiled, str]:
        """The branches of `numpy.where(t, a, b)` as one kind, and the flavour of its result.

        numpy.where makes arrays of constants first (a whole number int64, a float float64),
        then promotes: object over float64 over int64 over booleans.
        """
        fa, fb = _where_flavour(a), _where_flavour(b)
        if a.kind == b.kind:
            if "object" in (fa, fb):
                return a, b, "object"
            return a, b, "int" if a.kind == "num" and fa == fb == "int" else "array"
        if {a.kind, b.kind} == {"num", "bool"}:
            if "object" in (fa, fb):  # Python's True stays True next to numbers: == 1 is false
                raise NotCompilable("'if' with a boolean and a number one of which is a category")
            number = a if a.kind == "num" else b
            return self._as_number(a), self._as_number(b), _where_flavour(number)
        raise NotCompilable(f"'if' with a {a.kind} and a {b.kind}")

    def _arithmetic(self, op: str, a: Compiled, b: Compiled) -> Compiled:
        if a.kind == b.kind == "str" and op == "+":
            flavour = "object" if "object" in (a.flavour, b.flavour) else "array"
            return _row_text(Compiled(f"({a.sql} || {b.sql})", "str", flavour=flavour,
                                      longest=a.longest + b.longest), "'+' of texts")
        if a.kind != "num" or b.kind != "num":
            raise NotCompilable(f"'{op}' between a {a.kind} and a {b.kind}")
        if "object" in (a.flavour, b.flavour):
            # numpy runs Python's operators on a category's numbers: whole numbers stay exact
            # (and -0 is 0), a zero divisor or an overflowing power fails the row, a fractional
            # power of a negative number is complex. Not IEEE arithmetic.
            raise NotCompilable(f"'{op}' on a categorical column's numbers")
        whole = all(x.flavour == "int" or _whole_constant(x) for x in (a, b))
        if whole and op != "/":  # int64: wraps around, x // 0 and x % 0 are 0
            raise NotCompilable(f"'{op}' on whole numbers made by 'if' (numpy's int64 arithmetic)")
        # float64 from here on (int64 / int64 is true division in float64)
        if op in ("+", "-", "*"):
            return Compiled(f"({a.sql} {op} {b.sql})", "num")
        if op == "/":
            return Compiled(self.divide(a.sql, b.sql), "num")
        if op == "//":  # numpy's floor_divide; DuckDB's own // raises on a zero divisor
            return Compiled(self.floor_divide(a.sql, b.sql), "num")
        if op == "%":
            return Compiled(self.fmod(a.sql, b.sql), "num")
        return self._power(a, b)

    def _power(self, a: Compiled, b: Compiled) -> Compiled:
        """`a ** b` where numpy computes it exactly as one IEEE operation, else NotCompilable.

        numpy's power of a float64 array by a constant 2, -1, 0.5, 0 or 1 is x * x, 1 / x,
        sqrt(x), 1 or x (checked bit for bit); any other power runs numpy's own pow (SIMD code
        on machines with AVX-512), which differs from the engines' in the last bit.
        """
        exponent = float(b.constant[0]) if b.flavour == "constant" else None
        if a.flavour != "array" or exponent not in (2.0, -1.0, 0.5, 0.0, 1.0):
            raise NotCompilable("'**' other than by a constant 2, -1, 0.5, 0 or 1 (numpy's pow differs from the "
                                "engine's in the last bit)")
        if exponent == 2.0:
            base = self.share(a.sql)
            return Compiled(f"({base} * {base})", "num")
        if exponent == -1.0:
            return Compiled(self.divide(ONE, a.sql), "num")
        if exponent == 0.5:
            base = self.share(a.sql)
            return Compiled(f"(CASE WHEN {base} < 0 THEN {NAN} ELSE sqrt({base}) END)", "num")
        if exponent == 0.0:
            return Compiled(ONE, "num")
        return a

    def _equal(self, left: Any, right: Any, a: Compiled, b: Compiled) -> str:
        """SQL for `equal(x, y)` row by row (see `scalar_equal`)."""
        if isinstance(right, Literal) and a.kind == "code":
            return self._codes(a.sql, [i for i, v in enumerate(a.values) if scalar_equal(v, right.value)])
        if isinstance(left, Literal) and b.kind == "code":
            return self._codes(b.sql, [i for i, v in enumerate(b.values) if scalar_equal(left.value, v)])
        x, y = self.decode(a), self.decode(b)
        if {x.kind, y.kind} == {"num"}:
            number = self.share(x.sql)
            return f"(NOT {self.isnan(number)} AND {number} = {y.sql})"
        if x.kind == y.kind:
            return f"({x.sql} = {y.sql})"
        return "FALSE"  # a number never equals a text or a boolean under `equal`

    def compile_equal_literal(self, value: Compiled, category: Any) -> str:
        """SQL for Python's `v in {category}` on a decoded value (True matches 1 and 1.0)."""
        if value.kind == "num":
            if _is_bool(category) or (_is_number(category) and _exact_category(category)):
                number = self.share(value.sql)
                return f"(NOT {self.isnan(number)} AND {number} = {_number(float(category))})"
            if _is_number(category):
                raise NotCompilable("a category that is a whole number beyond 2^53 or not a float64")
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
            if any(_is_number(o) and not _exact_category(o) for o in options):
                raise NotCompilable("'in' a list with a whole number beyond 2^53 or a number not a float64")
            numbers = [_number(o) for o in options if _is_number(o) and not math.isnan(float(o))]
            if not numbers:
                return "FALSE"
            number = self.share(value.sql)
            return f"(NOT {self.isnan(number)} AND {number} IN ({', '.join(numbers)}))"
        if value.kind == "str":
            texts = [_text(o) for o in options if isinstance(o, str)]
            return f"({value.sql} IN ({', '.join(texts)}))" if texts else "FALSE"
        flags = sorted({bool(o) for o in options if _is_bool(o)})
        if not flags:
            return "FALSE"
        return f"({value.sql} IN ({', '.join('TRUE' if f else 'FALSE' for f in flags)}))"
