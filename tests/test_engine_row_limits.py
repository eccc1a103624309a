"""The size limits of a row's values hold alike in memory and on the engines (issue 21, hole 2).

In memory a row function keeps every row's values within public limits
(jostle.language.row_limits): a text of at most MAX_ROW_TEXT characters, a whole number below
10**308; a row whose result would be beyond them takes the missing value (`where` drops it,
`derive` gives the domain's default). On DuckDB and Spark the same row function is compiled to
SQL (jostle.data.engine.expressions), whose `||` concatenated two long categories into one text
of any length and kept the row: a program's derived column or filter differed between the
routes whenever a row held a pair of long categories the public probe had not tried (the
probe pairs two large domains cyclically). The compiler now knows, from the public domains
and constants, the longest text each operation can give on any row, and a text operation
that could exceed the limit runs in memory on the engine's rows instead (NotCompilable).

The tests:
  * `test_a_long_concatenation_reads_alike_on_every_route` is the reproducer: one program on
    one DataFrame printed different releases under `Session(engine="pandas")` and
    `Session(engine="duckdb")` before the fix (`..._on_spark`: and under engine="spark").
  * `test_row_functions_near_the_limits_agree_with_memory_on_duckdb` is the differential
    property: derandomized row functions over three tables built so that rows reach the limits
    the probe does not (long categories concatenated and chosen by `if`, texts repeated by a
    row's count, whole-number powers of a row's base and exponent), run as `where` and
    `derive` in memory and on DuckDB; the stored rows must be identical bit for bit, and so
    must any error. `..._on_spark` runs a share of them on Spark.
  * `test_the_property_finds_the_hole_put_back` is the negative control: with the compiler's
    limit lifted (the old behaviour), the same property fails.
"""

from __future__ import annotations

import io
import itertools
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd
import pytest

duckdb = pytest.importorskip("duckdb")

from hypothesis import HealthCheck, Phase, given, settings, strategies as st  # noqa: E402

from tests.conftest import local_spark  # noqa: E402
from jostle.data.engine import expressions  # noqa: E402
from jostle.data.engine.duckdb_engine import DuckDBEngine  # noqa: E402
from jostle.data.engine.expressions import Apply, Column, Compiler, Literal, NotCompilable  # noqa: E402
from jostle.data.limits import MAX_ROW_TEXT  # noqa: E402
from jostle.data.schema import Categorical, Numeric, Schema  # noqa: E402
from jostle.diagnostics.errors import JostleError  # noqa: E402
from jostle.language import row_limits  # noqa: E402
from jostle.language.values import PROBE_PAIR_LIMIT, RowValues, _joint_probe, domain_probe  # noqa: E402
from jostle.session import Session  # noqa: E402
from tests.test_engine_expressions import first_difference  # noqa: E402

# ---------------------------------------------------------------- table 1: long categories
# a and b have 260 values each: 260 * 260 is beyond PROBE_PAIR_LIMIT, so the probe pairs them
# cyclically (a[i] with b[i]) and never tries two long ones together; every pair it tries stays
# within MAX_ROW_TEXT (checked by test_the_probe_does_not_try_the_long_pairs). Some texts are
# beyond the Basic Multilingual Plane (one character in Python, two UTF-16 units in Java) or
# two UTF-8 bytes long: only Python's count of characters may matter.
SIZE = 260
A = ["L" * 6000, "é" * 6000, "\U0001d11e" * 5001, "A" * 9000] + [f"a{i}" for i in range(4, SIZE)]
B = ["", "b1", "b2", "Z", "M" * 6000, "ñ" * 4000, "\U0001d11e" * 2000] + [f"b{i}" for i in range(7, SIZE)]
# c and d are small (every pair is probed) and their longest sum is exactly the limit: c + d
# compiles, (c + d) + "!" does not.
C = ["C" * 5000, "c", "", "é" * 4999, "\U0001d11e" * 3000]
D = ["D" * 5000, "d", "ü" * 5000]
# h holds one category beyond the limit (h[0], which the probe pairs with b[0] = ""): chosen by
# `r.h if r.b != "" else "x"`, it reaches a row's result only when the row holds it with b1.
H = ["H" * (MAX_ROW_TEXT + 1)] + [f"h{i}" for i in range(1, SIZE)]
TEXT_SCHEMA = Schema.of({
    "id": Numeric(0, 1e6, integer=True),
    "a": Categorical(tuple(A)), "b": Categorical(tuple(B)),
    "c": Categorical(tuple(C)), "d": Categorical(tuple(D)), "h": Categorical(tuple(H)),
    "f": Categorical((True, False)), "x": Numeric(-10, 10),
})
# (a, b) pairs: beyond the limit (12,000; 15,000; 11,001), at it (10,000) and within it
# (an empty text in a frame's cell is a missing value: "" is in domains, never in rows)
PAIRS = [(A[0], B[4]), (A[1], B[4]), (A[0], B[5]), (A[3], B[3]), (A[3], B[10]), (A[2], B[6]), (A[2], B[5]),
         (A[1], B[1]), (A[3], B[2]), (A[4], B[4]), (A[5], B[6]), (A[0], B[3]), (A[1], B[5]), (A[3], B[1]),
         (A[2], B[4]), (A[9], B[9]), (A[3], B[4])]


def _text_frame() -> pd.DataFrame:
    rng = np.random.default_rng(21)
    rows = [*PAIRS, *PAIRS[:4]]  # some rows twice
    rows += [(A[i], B[j]) for i, j in rng.integers(1, 12, size=(14, 2))]
    k = len(rows)
    return pd.DataFrame({
        "id": np.arange(k, dtype=float), "a": [a for a, _ in rows], "b": [b for _, b in rows],
        "c": [[c for c in C if c][i % 4] for i in range(k)], "d": [D[(i // 2) % len(D)] for i in range(k)],
        "h": [H[0] if i % 3 == 0 else H[i % 7] for i in range(k)],
        "f": [bool(i % 3) for i in range(k)], "x": rng.uniform(-10, 10, k).round(2),
    }).astype({"a": object, "b": object, "c": object, "d": object, "h": object, "f": object})


# ---------------------------------------------------------------- table 2: repetition
# 16 texts and 4,100 counts (65,600 pairs: cyclic, count j with text j % 16). "xy" (index 15)
# meets only the counts -1..254; "" (index 4) meets 10**12; every other count is even, at most
# 7,984, and meets a text of one character. Rows then reach what the probe does not.
HUGE = 10**12
TEXTS = ["a", "b", "c", "d", "", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "xy"]


def _counts() -> list[int]:
    small, large, counts = iter(range(-1, 300)), iter(range(300, 10_000, 2)), []
    for j in range(4100):
        counts.append(HUGE if j == 4084 else next(small) if j % 16 == 15 else next(large))
    return counts


COUNTS = _counts()
assert COUNTS[4084] == HUGE and 4084 % 16 == 4 and max(c for c in COUNTS if c != HUGE) <= MAX_ROW_TEXT
REPEAT_SCHEMA = Schema.of({"id": Numeric(0, 1e6, integer=True), "s": Categorical(tuple(TEXTS)),
                           "n": Categorical(tuple(COUNTS)), "f": Categorical((True, False))})
# beyond the limit (10**12 and 14,000 characters, 10,004), at it (10,000), within it
REPEAT_ROWS = [("a", HUGE), ("xy", 7000), ("xy", 5002), ("xy", 5000), ("a", 7000), ("b", HUGE), ("xy", -1),
               ("b", 0), ("xy", 4000), ("n", 3000), ("xy", 300), ("c", 7984), ("xy", 7984), ("a", HUGE)]
assert all(n in COUNTS for _, n in REPEAT_ROWS)


def _repeat_frame() -> pd.DataFrame:
    rows = REPEAT_ROWS
    return pd.DataFrame({"id": np.arange(len(rows), dtype=float), "s": pd.Series([s for s, _ in rows], dtype=object),
                         "n": pd.Series([n for _, n in rows], dtype=object),
                         "f": pd.Series([bool(i % 2) for i in range(len(rows))], dtype=object)})


# ---------------------------------------------------------------- table 3: whole-number powers
# 16 bases and 4,100 exponents, paired cyclically: the bases 1, -1 and 0 (indices 3, 5, 7) meet
# the large exponents, every other base a negative one (a float). Rows meet what the probe does not.
BASES = [2, 3, 10, 1, 5, -1, 7, 0, 4, 6, 8, 9, 11, 12, 13, -2]


def _exponents() -> list[int]:
    large = iter([307, 308, 1023, 1024, 1025, 10**6, HUGE] + list(range(1100, 10_000)))
    negative = iter(range(-1, -10_000, -1))
    return [next(large) if j % 16 in (3, 5, 7) else next(negative) for j in range(4100)]


EXPONENTS = _exponents()
POWER_SCHEMA = Schema.of({"id": Numeric(0, 1e6, integer=True), "p": Categorical(tuple(BASES)),
                          "e": Categorical(tuple(EXPONENTS)), "x": Numeric(-1e12, 1e12)})
# 10**308 and beyond (computed, then measured; sized and never computed), just below, floats
POWER_ROWS = [(10, 307), (10, 308), (2, 1023), (2, 1024), (3, 10**6), (-1, HUGE), (-2, 1023), (-2, 1024),
              (7, -3), (0, 307), (2, HUGE), (13, -10), (1, HUGE), (-2, 1025)]
assert all(e in EXPONENTS for _, e in POWER_ROWS)


def _power_frame() -> pd.DataFrame:
    return pd.DataFrame({"id": np.arange(len(POWER_ROWS), dtype=float),
                         "p": pd.Series([p for p, _ in POWER_ROWS], dtype=object),
                         "e": pd.Series([e for _, e in POWER_ROWS], dtype=object),
                         "x": [1e12, -1e12, 0.0, 1e6, 1.5, -2.0, 3.0, 1e-200, 7.0, 0.5, 2.0, -0.0, 9.0, 1.0]})


FAMILIES = {"text": (TEXT_SCHEMA, _text_frame), "repeat": (REPEAT_SCHEMA, _repeat_frame),
            "power": (POWER_SCHEMA, _power_frame)}


class Routes:
    """One in-memory session holding each family's table in memory (`t_<family>`) and on an
    engine (`e_<family>`, the same conformed rows, stored as the engine stores them)."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.session = Session(budget=100, seed=7, ledger_path=":memory:", output=io.StringIO(), engine="pandas")
        from jostle.language.values import Table

        for family, (schema, frame) in FAMILIES.items():
            self.session.bind_private(f"t_{family}", frame(), schema)
            bound = self.session.interpreter.bound_tables[f"t_{family}"]
            assert bound.relation is None
            relation = engine.store_conformed(bound.frame, schema)
            self.session.interpreter.globals.define(
                f"e_{family}", Table(relation, schema, True, f"e_{family}", bound.node, bound.origin))

    def run(self, program: str) -> tuple[str, Any]:
        """('ok', the table `d`) or ('error', the error's text)."""
        try:
            self.session.run(program)
        except JostleError as error:
            return "error", str(error)
        return "ok", self.session.interpreter.globals.lookup("d")


@pytest.fixture(scope="module")
def duckdb_routes() -> Routes:
    return Routes(DuckDBEngine())


# ---------------------------------------------------------------- random row functions near the limits
LONG = '("L" * 6000 + "M" * 6000)'      # a pair beyond the limit
EDGE = '("L" * 6000 + "ñ" * 4000)'       # a pair exactly at it
HALVES = '("C" * 5000 + "D" * 5000)'    # c + d at the limit
TEXT_LITERALS = ['"!"', '""', '"é"', '"a4"', '"Z"', LONG, EDGE, HALVES, '("L" * 6000)']
TEXT_DOMAINS = [f'categorical([{LONG}, {EDGE}, {HALVES}, "a4b4", "c", "none"], default="none")',
                f'categorical(["L" * 6000 + "", {LONG} + "!", "a5b6", "x"], default="x")',
                'categorical(["!", "a4!", "cd"], default="!")']
TEXT_BOOLS = ["(r.f == true)", "(r.x > 0)", '(r.a == "a4")', '(r.b != "b9")']
CHOSEN_H = '(r.h if r.b != "" else "x")'  # up to 10,001 characters on a row, 2 on the probe
# Columns a concatenation may join: a pair the probe tries cyclically (a, b and the choice of
# h), or a pair it tries fully (c, d: their longest sum is the limit itself). Any other mix
# exceeds the limit on the probe, an error alike on both routes, which teaches nothing new.
COLUMN_SETS = [("r.a", "r.b", CHOSEN_H), ("r.a", "r.b"), ("r.c", "r.d")]
SHORT_TEXTS = TEXT_LITERALS[:5]


@st.composite
def text_expression(draw: Any, depth: int, columns: tuple[str, ...]) -> str:
    """A text of the long-category table: concatenations and choices of its columns.

    The two sides of a `+` share no column (a column joined with itself on the probe is as
    long there as on any row), so that most concatenations pass the probe and reach the rows.
    """
    if depth <= 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(list(columns) * 2 + SHORT_TEXTS if columns else SHORT_TEXTS))
    if draw(st.integers(0, 2)) < 2:
        order = draw(st.permutations(columns))
        cut = draw(st.integers(1, len(order) - 1)) if len(order) > 1 else len(order)
        left, right = order[:cut], order[cut:]
        return f"({draw(text_expression(depth - 1, left))} + {draw(text_expression(depth - 1, right))})"
    return (f"({draw(text_expression(depth - 1, columns))} if {draw(text_condition(depth - 1, columns))} "
            f"else {draw(text_expression(depth - 1, columns))})")


@st.composite
def text_condition(draw: Any, depth: int, columns: tuple[str, ...], derived: bool = False) -> str:
    """A boolean of the long-category table, mostly about texts (and the derived `w`, if any)."""
    if depth <= 0 or draw(st.integers(0, 4)) == 0:
        extra = [f"(r.w {draw(st.sampled_from(['==', '!=']))} {draw(st.sampled_from(TEXT_LITERALS))})"] * 3 \
            if derived else []
        return draw(st.sampled_from(TEXT_BOOLS + extra))
    form = draw(st.integers(0, 5))
    text = lambda: draw(text_expression(depth - 1, columns))  # noqa: E731
    sub = lambda: draw(text_condition(depth - 1, columns, derived))  # noqa: E731
    if form == 0:
        return f"({text()} {draw(st.sampled_from(['==', '!=']))} {draw(st.sampled_from(TEXT_LITERALS))})"
    if form == 1:
        return f"({text()} {draw(st.sampled_from(['<', '>=', '==', '!=']))} {text()})"
    if form == 2:
        items = draw(st.lists(st.sampled_from(TEXT_LITERALS), min_size=1, max_size=3))
        return f"({text()} {draw(st.sampled_from(['in', 'not in']))} [{', '.join(items)}])"
    if form == 3:
        return f"(not {text()})"
    if form == 4:
        return f"({sub()} {draw(st.sampled_from(['and', 'or']))} {sub()})"
    return f"({sub()} if {text()} else {sub()})"


REPEAT_TEXTS = ["(r.s * r.n)", "(r.n * r.s)", "(r.s * 3)", "r.s", '"!"']
REPEAT_NUMBERS = ["r.n", "(r.n + 1)", "(r.n * 2)", "(r.n // 3)"]


@st.composite
def repeat_expression(draw: Any, depth: int) -> str:
    """A text of the repetition table: a text repeated by a row's count, and what uses it."""
    if depth <= 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(REPEAT_TEXTS))
    form = draw(st.integers(0, 3))
    if form == 0:
        return f"({draw(repeat_expression(depth - 1))} + {draw(repeat_expression(depth - 1))})"
    if form == 1:
        return f"({draw(repeat_expression(depth - 1))} if r.f else {draw(repeat_expression(depth - 1))})"
    if form == 2:
        return f"(r.s * {draw(st.sampled_from(REPEAT_NUMBERS))})"
    return f"({draw(repeat_expression(depth - 1))} * {draw(st.sampled_from(['2', '0', '(-1)']))})"


POWER_NUMBERS = ["(r.p ** r.e)", "(r.p ** 2)", "(r.x ** 2)", "r.x", "r.p", "(r.e ** 2)", "((r.p ** r.e) ** 2)"]


@st.composite
def power_expression(draw: Any, depth: int) -> str:
    """A number of the power table: powers of a row's base and exponent, and what uses them."""
    if depth <= 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(POWER_NUMBERS))
    form = draw(st.integers(0, 4))
    sub = lambda: draw(power_expression(depth - 1))  # noqa: E731
    if form == 0:
        return f"({sub()} {draw(st.sampled_from(['+', '-', '*', '/']))} {sub()})"
    if form == 1:
        return f"({sub()} ** {draw(st.sampled_from(['2', '3', 'r.e', '0.5']))})"
    if form == 2:
        return f"{draw(st.sampled_from(['abs', 'sqrt', 'round']))}({sub()})"
    if form == 3:
        return f"({sub()} if {sub()} > {draw(st.sampled_from(['0', '1e300', '1e307']))} else {sub()})"
    return f"(-{sub()})"


NUMERIC_DOMAINS = ["numeric(-1e12, 1e12)", "numeric(0, 5)", "numeric(-1, 1e12, default=1)",
                   "numeric(0, 1e12, integer=true, default=7)"]
POWER_DOMAINS = ['categorical([2, 0, 1e307, 1024, true], default=0)', 'categorical(["x", 49], default="x")']


@st.composite
def limits_program(draw: Any) -> tuple[str, str]:
    """(family, a program ending in `d = STEP(...)` on TABLE, to be filled in with t_ or e_)."""
    family = draw(st.sampled_from(["text", "text", "text", "text", "repeat", "power"]))
    step = draw(st.sampled_from(["where", "numeric", "categorical", "categorical"]))
    prelude, table = "", "TABLE"
    if family == "text":
        columns, derived = draw(st.sampled_from(COLUMN_SETS)), False
        if draw(st.integers(0, 3)) == 0:  # a derived category of long texts, compared by the next step
            body = draw(text_expression(2, columns))
            prelude = f'd0 = derive(TABLE, "w", lambda r: {body}, {draw(st.sampled_from(TEXT_DOMAINS))})\n'
            table, derived = "d0", True
        if step == "where":
            body = draw(text_condition(3, columns, derived))
        elif step == "numeric":
            body = f"(1 if {draw(text_condition(3, columns, derived))} else 0)"
        else:
            body = draw(text_expression(3, columns))
        domains = TEXT_DOMAINS
    elif family == "repeat":
        text = draw(repeat_expression(3))
        body = {"where": f"({text} {draw(st.sampled_from(['!=', '==']))} {draw(st.sampled_from(REPEAT_TEXTS[2:]))})",
                "numeric": f'(2 if {text} == "" else 1)', "categorical": text}[step]
        domains = ['categorical(["", "!", "aaa", "xyxy"], default="!")', 'categorical(["x"], default="x")']
    else:
        number = draw(power_expression(2))
        body = {"where": f"({number} > {draw(st.sampled_from(['0', '1', '1e300']))})", "numeric": number,
                "categorical": number}[step]
        domains = POWER_DOMAINS
    table = table.replace("TABLE", f"TABLE_{family}")
    prelude = prelude.replace("TABLE", f"TABLE_{family}")
    if step == "where":
        return family, f"{prelude}d = where({table}, lambda r: {body})"
    domain = draw(st.sampled_from(NUMERIC_DOMAINS if step == "numeric" else domains))
    return family, f'{prelude}d = derive({table}, "v", lambda r: {body}, {domain})'


def compare_routes(routes: Routes, template: str, counts: Counter, family: str = "text") -> str | None:
    """None when the program gives the same rows (or error) in memory and on the engine.

    `counts` gets the family's outcome: an error (alike on both routes, or the difference is
    returned), its last step compiled to SQL, or run in memory on the engine's rows.
    """
    in_memory = routes.run(template.replace("TABLE", "t"))
    on_engine = routes.run(template.replace("TABLE", "e"))
    if in_memory[0] == "error" or on_engine[0] == "error":
        counts[f"{family} error"] += 1
        return None if in_memory == on_engine else f"errors differ: {in_memory} / {on_engine}"
    compiled = on_engine[1].relation is not None and len(on_engine[1].relation.steps) > 0
    counts[f"{family} {'compiled' if compiled else 'in memory'}"] += 1
    return first_difference(in_memory[1].frame, on_engine[1].frame)


def check_programs(routes: Routes, examples: int, shrink: bool = True) -> Counter:
    """The differential property: `examples` derandomized programs, each the same on both routes."""
    counts: Counter = Counter()
    phases = [Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if shrink else [])

    @settings(max_examples=examples, derandomize=True, deadline=None, database=None, phases=phases,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(case=limits_program())
    def check(case: tuple[str, str]) -> None:
        family, template = case
        problem = compare_routes(routes, template, counts, family)
        assert problem is None, f"{template}\n{problem}"

    check()
    return counts


# the programs that separated the routes before the fix, found by the property (and kept here)
SEPARATED = [
    'd = where(TABLE_text, lambda r: (r.a + r.b) != "!")',
    f'd = derive(TABLE_text, "v", lambda r: r.a + r.b, categorical([{LONG}, {EDGE}, "x"], default="x"))',
    'd = derive(TABLE_text, "v", lambda r: 1 if (r.b + r.a) >= "M" else 0, numeric(0, 5))',
    'd = where(TABLE_text, lambda r: ((r.a + r.b) if (r.x > 0) else "x") != "y")',
    'd = where(TABLE_text, lambda r: not ((r.b if r.f else "x") + r.a == ""))',
    'd = where(TABLE_text, lambda r: (r.h if r.b != "" else "x") != "q")',
    f'd = derive(TABLE_text, "v", lambda r: ("!" + r.a) + r.b, categorical(["!" + {LONG}, "x"], default="x"))',
    f'd0 = derive(TABLE_text, "w", lambda r: r.a + r.b, categorical([{LONG}, "a4b4", "none"], default="none"))\n'
    'd = where(d0, lambda r: r.w != "none")',
]


# ---------------------------------------------------------------- the tests
def test_the_probe_does_not_try_the_long_pairs() -> None:
    """The premise: every pair of a and b the probe tries is within the limit, while the rows
    hold pairs beyond it (so only rows reach them); likewise for repetitions and powers."""
    def pairs(schema: Schema, names: tuple[str, str]) -> list[tuple]:
        columns = [RowValues(None, None, n, domain_probe(schema[n]), sources=((n, domain_probe(schema[n])),))
                   for n in names]
        left, right = _joint_probe(columns)[0]
        return list(zip(left.tolist(), right.tolist()))

    assert SIZE * SIZE > PROBE_PAIR_LIMIT
    assert max(len(a + b) for a, b in pairs(TEXT_SCHEMA, ("a", "b"))) <= MAX_ROW_TEXT
    assert max(len(a + b) for a, b in PAIRS) > MAX_ROW_TEXT
    assert max(len(c + d) for c, d in itertools.product(C, D)) == MAX_ROW_TEXT
    tried = pairs(REPEAT_SCHEMA, ("s", "n"))
    assert max(len(s) * n for s, n in tried if n != HUGE) <= MAX_ROW_TEXT and ("a", HUGE) not in tried
    assert max(len(s) * n for s, n in REPEAT_ROWS if n != HUGE) > MAX_ROW_TEXT
    powers = pairs(POWER_SCHEMA, ("p", "e"))
    assert all(p in (1, -1, 0) for p, e in powers if e > 0) and (10, 308) not in powers


def test_a_concatenation_that_could_exceed_the_limit_does_not_compile() -> None:
    """The compiler's rule on its own: the longest text an operation can give is known from the
    public domains; beyond MAX_ROW_TEXT the operation is NotCompilable, at the limit it compiles."""
    compiler = Compiler("duckdb")
    a, b = Column("a", TEXT_SCHEMA["a"]), Column("b", TEXT_SCHEMA["b"])
    c, d = Column("c", TEXT_SCHEMA["c"]), Column("d", TEXT_SCHEMA["d"])
    f = Column("f", TEXT_SCHEMA["f"])
    assert compiler.compile(Apply("+", (c, d))).longest == MAX_ROW_TEXT
    assert compiler.compile(Apply("if", (f, c, d))).longest == 5000
    for beyond in [Apply("+", (a, b)), Apply("+", (Apply("+", (c, d)), Literal("!"))),
                   Apply("if", (f, a, Literal("x" * (MAX_ROW_TEXT + 1)))),
                   Apply("==", (Apply("+", (a, b)), Literal("x")))]:
        with pytest.raises(NotCompilable, match="one row may hold"):
            compiler.compile(beyond)
    # a long category compared, not built, compiles (the in-memory route measures results only)
    assert compiler.compile(Apply("==", (a, Literal("x")))).kind == "bool"
    # repetition, text formatting and whole-number powers of a category's numbers never compile
    s, n = Column("s", REPEAT_SCHEMA["s"]), Column("n", REPEAT_SCHEMA["n"])
    p, e = Column("p", POWER_SCHEMA["p"]), Column("e", POWER_SCHEMA["e"])
    for never in [Apply("*", (s, n)), Apply("*", (n, s)), Apply("*", (s, Literal(3))), Apply("**", (p, e)),
                  Apply("**", (p, Literal(2))), Apply("%", (Literal("%s"), s))]:
        with pytest.raises(NotCompilable):
            compiler.compile(never)


REPRODUCER = f'''
long = {LONG}
k = where(t, lambda r: (r.a + r.b) != "x")
print(laplace(count(k), 1))
d = derive(t, "c", lambda r: "long" if (r.a + r.b) == long else "short",
           categorical(["long", "short"], default="short"))
print(laplace(histogram(d, ["c"]), 1))
e = derive(t, "w", lambda r: r.a + r.b, categorical([long, "a4b4"], default="a4b4"))
print(laplace(histogram(e, ["w"]), 1))
'''


def _reproducer_output(engine: str, options: dict | None = None) -> str:
    output = io.StringIO()
    session = Session(budget=100, seed=21, ledger_path=":memory:", output=output, engine=engine,
                      engine_options=options or {})
    session.bind_private("t", _text_frame(), TEXT_SCHEMA)
    session.run(REPRODUCER)
    return output.getvalue()


def test_a_long_concatenation_reads_alike_on_every_route() -> None:
    """The reproducer: the same program on the same DataFrame printed different releases in
    memory and on DuckDB (rows whose a + b is 12,000 characters were kept, and matched a
    category, on DuckDB only); now the outputs are identical."""
    in_memory = _reproducer_output("pandas")
    assert _reproducer_output("duckdb") == in_memory


NUL_PROGRAM = '''
k = where(t, lambda r: ("a\\x00" if r.a == "a4" else "b") == "a")
print(laplace(count(k), 1))
d = derive(t, "v", lambda r: ("\\x00" if r.a == "a4" else "b") + "c", categorical(["c", "bc"], default="bc"))
print(laplace(histogram(d, ["v"]), 1))
'''


def test_a_text_constant_holding_nul_reads_alike_on_every_route() -> None:
    """Found while checking every text the compiler builds: numpy's fixed-width texts (what
    `"a\\x00" if c else "b"` makes of two constants) drop trailing NUL characters, so in memory
    the row's text was "a" and on DuckDB "a\\x00": a filter and a derived column differed. A
    row function's text constant holding NUL is now NotCompilable (runs in memory)."""
    outputs = []
    for engine in ("pandas", "duckdb"):
        output = io.StringIO()
        session = Session(budget=100, seed=21, ledger_path=":memory:", output=output, engine=engine)
        session.bind_private("t", _text_frame(), TEXT_SCHEMA)
        session.run(NUL_PROGRAM)
        outputs.append(output.getvalue())
    assert outputs[0] == outputs[1]
    with pytest.raises(NotCompilable, match="NUL"):
        Compiler("duckdb").compile(Apply("==", (Column("a", TEXT_SCHEMA["a"]), Literal("a\x00"))))


def test_row_functions_near_the_limits_agree_with_memory_on_duckdb(duckdb_routes: Routes) -> None:
    counts: Counter = Counter()
    for template in SEPARATED:
        problem = compare_routes(duckdb_routes, template, counts)
        assert problem is None, f"{template}\n{problem}"
    counts += check_programs(duckdb_routes, 160)
    print(dict(counts))
    # both routes of the engine are exercised: SQL where no row can reach the limit (texts of up
    # to 10,000 characters compared bit for bit), memory on the engine's rows where one can
    assert counts["text compiled"] >= 40 and counts["text in memory"] >= 20, counts
    assert counts["repeat in memory"] >= 4 and counts["power in memory"] >= 8, counts


def test_the_property_finds_the_hole_put_back(duckdb_routes: Routes, monkeypatch: pytest.MonkeyPatch) -> None:
    """Negative control: with the compiler's limit lifted (a concatenation compiled whatever its
    length, as before the fix), every program kept in SEPARATED separates the routes, and the
    property fails on its own within its examples."""
    monkeypatch.setattr(expressions, "MAX_ROW_TEXT", 10**9)
    counts: Counter = Counter()
    assert [t for t in SEPARATED if compare_routes(duckdb_routes, t, counts) is None] == [], counts
    with pytest.raises(AssertionError, match="in memory"):
        check_programs(duckdb_routes, 160, shrink=False)


def test_the_limits_are_one_constant() -> None:
    """The language's rule and the compiler read the same limit (jostle.data.limits)."""
    assert row_limits.MAX_ROW_TEXT is MAX_ROW_TEXT and expressions.MAX_ROW_TEXT is MAX_ROW_TEXT


# ---------------------------------------------------------------- Spark
def _spark_reason() -> str | None:
    from jostle.data.engine.spark_engine import spark_unavailable

    return spark_unavailable()


@pytest.fixture(scope="module")
def spark_routes() -> Any:
    reason = _spark_reason()
    if reason is not None:
        pytest.skip(f"Spark cannot run here: {reason}")
    from jostle.data.engine.spark_engine import SparkEngine

    session = local_spark("jostle-row-limits")
    yield session, Routes(SparkEngine(session=session))
    session.stop()


def test_a_long_concatenation_reads_alike_on_spark(spark_routes: Any) -> None:
    spark, _ = spark_routes
    assert _reproducer_output("spark", {"spark": {"session": spark}}) == _reproducer_output("pandas")


def test_row_functions_near_the_limits_agree_with_memory_on_spark(spark_routes: Any) -> None:
    _, routes = spark_routes
    counts: Counter = Counter()
    for template in SEPARATED:
        problem = compare_routes(routes, template, counts)
        assert problem is None, f"{template}\n{problem}"
    counts += check_programs(routes, 24)  # Spark runs about 8 times slower than DuckDB, which gets 160
    print(dict(counts))
    assert counts["text compiled"] >= 10 and counts["text in memory"] >= 5, counts
