"""The neighbour fuzzer's class "resource-exhausting row values" (issue 21, hole 2).

A row function must not let one row's values decide whether a run exhausts memory: `r.s * r.n`
with one row holding n = 10**12, `r.b ** r.e` with a huge exponent, texts doubled in a loop.
jostle/language/row_limits.py sizes such results before they are built. The statements made
here (by `resource_statements`, the `resources` family of tests/privacy/neighbour_fuzz.py) give
the private table derived columns over large public domains whose values come from the row's
own columns through a random condition, so whether a row holds the extreme value depends on the
data (the neighbours' extra row holds it about half the time), and then grow values from them:

  * `cyclic`: a text column of seven texts and a count column of 10,001 values whose largest is
    extreme (10**12 and beyond: a text repeated that often cannot be allocated at all), laid out
    so that the probe, which pairs domains this large cyclically, meets the extreme count only
    with the empty text: only a row can reach "a" * 10**12 (the issue's reproducer);
  * `small`: domains small enough for the probe to try every pair (an error on every table,
    which must be a located JostleError, not a MemoryError);
  * `moderate`: the cyclic layout with counts just beyond the text limit, cheap to build (such a
    row takes the missing value with or without the sizing: a control of the rule's semantics);
  * `wide`: `r.s * (N if condition else 2)`, a count made by `if` (numpy's int64) from a
    condition on the row's own columns;
  * `power`: whole powers with exponents up to 10**12, cyclic and small;
  * `doubling`: a fixed-width text (`"a" if c else "bb"`) doubled in a loop of a def;
  * `bounds`: a numeric column with bounds up to 1e12 (floats: repeating a text by it is a type
    error, decided on the probe);
  * `digits`: `round(x, r.code)`, a column as round's digits (a located refusal).

The extreme values are chosen so that, with the sizing removed (the negative control in
tests/privacy/test_neighbour_fuzz.py), a row's repetition fails at once with MemoryError
(never slowly filling the machine's memory), and powers are not part of that control (Python
would compute 2 ** 10**12 for hours before failing, and a signal cannot interrupt it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jostle.language.values import PROBE_PAIR_LIMIT
from tests.privacy.neighbour_fuzz import Column, Scope, _lit

if TYPE_CHECKING:
    from tests.privacy.neighbour_fuzz import Generator

EXTREME_COUNTS = [10**12, 10**15, 4 * 10**18]      # repetitions no machine can allocate
MODERATE_COUNTS = [10_001, 20_000, 99_999]         # beyond MAX_ROW_TEXT with one character
EXPONENTS = [5_000, 10**6, 10**7, 10**12]
LARGE_BOUNDS = [1e12, 1e9, 4e11]                  # up to the largest bound a schema allows
CYCLE_TEXTS = ["a", "b", "c", "d", "e", "f"]       # with "" placed where the extreme count cycles to
CYCLE_COUNTS = 10_000                              # counts 0..9,999 (at most 9,999 one-character repeats)
CYCLE_BASES = [2, 3, 4, 5, 6, 7]                   # with 1 placed where the extreme exponent cycles to


def _cycled(values: list, neutral: object, length: int) -> list:
    """`values` with `neutral` inserted where the probe pairs the last of `length` items with it.

    The probe lays two domains whose cross product is beyond PROBE_PAIR_LIMIT side by side,
    repeating the shorter cyclically (jostle.language.values._joint_probe): item i of the
    longer meets item i % len(shorter) of the shorter.
    """
    size = len(values) + 1
    assert size * length > PROBE_PAIR_LIMIT, "the domains must be paired cyclically"
    position = (length - 1) % size
    return values[:position] + [neutral] + values[position:]


def _condition(generator: Generator, scope: Scope) -> str:
    """A condition on the row's own columns: one comparison, or two (rarer rows)."""
    first = generator.condition(scope)
    if generator.chance(0.3):
        return f"({first} and {generator.condition(scope)})"
    return first


def _derive(generator: Generator, table: str, name: str, value: str, other: str, domain: str,
            scope: Scope) -> str:
    """`table.derive(name, ...)`: `value` on rows meeting a condition, `other` elsewhere."""
    return f'.derive("{name}", lambda r: {value} if {_condition(generator, scope)} else {other}, {domain})'


def _repeat_columns(generator: Generator, table: str, scope: Scope, form: str) -> tuple[str, list[Column]]:
    """The derive chain that adds a text column s_ and a count column n_, and their columns."""
    if form in ("cyclic", "moderate"):
        extreme = generator.pick(EXTREME_COUNTS if form == "cyclic" else MODERATE_COUNTS)
        counts = f"range({CYCLE_COUNTS}) + [{extreme}]"
        texts = _cycled(CYCLE_TEXTS, "", CYCLE_COUNTS + 1)
        count_values = (0, 1, extreme)
        big, small = extreme, generator.pick([0, 1, 3, 9999])
    else:
        extreme = generator.pick(EXTREME_COUNTS + MODERATE_COUNTS)
        count_values = (0, 1, 3, extreme)
        counts = _lit(list(count_values))
        texts = generator.pick([["", "a"], ["a", "b"], ["", "a", "bb"], ["xyz"]])
        big, small = extreme, generator.pick([0, 1, 3])
    chain = (_derive(generator, table, "n_", str(big), str(small), f"categorical({counts}, default=0)", scope)
             + _derive(generator, table, "s_", _lit(texts[-1]), _lit(texts[0]),
                       f"categorical({_lit(texts)}, default={_lit(texts[0])})", scope))
    return chain, [Column("n_", "code", values=count_values), Column("s_", "text", values=tuple(texts))]


def _repetition(generator: Generator) -> str:
    """An expression repeating r.s_ by r.n_, whose probe stays within the limit for `cyclic`."""
    return generator.pick([
        "r.s_ * r.n_", "r.n_ * r.s_", "r.s_ * (r.n_ + 0)", '(r.s_ * r.n_) + "!"', "r.s_ * r.n_ * 1",
        "(r.s_ * r.n_ if r.n_ > 2 else r.s_)",
    ])


def resource_statements(generator: Generator, chunks: list[str]) -> None:
    """Append a program part of the class to `chunks` (see the module docstring)."""
    # The private table as bound: its columns have small domains, so the probes of the conditions
    # stay small (a condition on a derived column of 10,001 values doubled as a text of 8,192
    # characters probes 10,001 of them: public, but slow).
    table = generator.private.name
    columns = generator.tables[table][0]
    scope = Scope("r", columns)
    form = generator.pick(["cyclic", "small", "moderate", "wide", "power", "doubling", "bounds", "digits"],
                          [36, 10, 14, 4, 12, 10, 7, 7])
    made = generator.fresh("u")
    added: list[Column] = []
    numeric = form in ("power", "bounds", "digits")  # the kind of the row function's result
    if form in ("cyclic", "small", "moderate"):
        chain, added = _repeat_columns(generator, table, scope, form)
        chunks.append(f"{made} = {table}{chain}")
        body = _repetition(generator)
    elif form == "wide":
        chain, added = _repeat_columns(generator, table, scope, "small")
        chunks.append(f"{made} = {table}{chain}")
        body = f"r.s_ * ({generator.pick(EXTREME_COUNTS[:2] + MODERATE_COUNTS)} if {_condition(generator, scope)} else 2)"
    elif form == "power":
        exponent = generator.pick(EXPONENTS)
        if generator.chance(0.6):  # cyclic: only a row meets (2, exponent)
            exponents = f"range(-1, -{CYCLE_COUNTS}, -1) + [{exponent}]"
            bases = _cycled(CYCLE_BASES, 1, CYCLE_COUNTS)
        else:
            exponents, bases = _lit([-1, 1, 2, exponent]), [1, 2, 10]
        chain = (_derive(generator, table, "e_", str(exponent), "-1", f"categorical({exponents}, default=-1)", scope)
                 + _derive(generator, table, "b_", str(bases[0]), "1", f"categorical({_lit(bases)}, default=1)", scope))
        chunks.append(f"{made} = {table}{chain}")
        added = [Column("e_", "code", values=(-1, exponent)), Column("b_", "code", values=tuple(bases))]
        body = generator.pick(["r.b_ ** r.e_", "(r.b_ ** r.e_) * 2", "2 ** r.e_", "(r.b_ * 1) ** (r.e_ + 0)"])
    elif form == "doubling":
        function = generator.fresh("grow")
        steps = generator.pick([3, 10, 12, 13, 16])
        chunks.append(f"def {function}(r):\n    x = \"a\" if {_condition(generator, scope)} else \"bb\"\n"
                      f"    for i in range({steps}):\n        x = x + x\n    return x")
        chunks.append(f"{made} = {table}")
        body = f"{function}(r)"
    elif form == "bounds":
        bound = generator.pick(LARGE_BOUNDS)
        chain = (_derive(generator, table, "m_", _lit(bound), "1.0", f"numeric(0, {_lit(bound)}, integer=true)",
                         scope)
                 + _derive(generator, table, "s_", '"a"', '""', 'categorical(["", "a"], default="")', scope))
        chunks.append(f"{made} = {table}{chain}")
        added = [Column("m_", "num", 0.0, bound, integer=True), Column("s_", "text", values=("", "a"))]
        body = generator.pick(["r.s_ * r.m_", "exp(r.m_)", "r.m_ ** r.m_", "r.m_ * r.m_ * r.m_"])
    else:  # digits
        numbers = [c.name for c in columns if c.numeric] or ["nosuch"]
        chain = _derive(generator, table, "d_", "2", "0", "categorical([0, 1, 2], default=0)", scope)
        chunks.append(f"{made} = {table}{chain}")
        added = [Column("d_", "code", values=(0, 1, 2))]
        body = f"round(r.{generator.pick(numbers)}, r.d_)"
    generator.tables[made] = (tuple(c for c in columns if c.name not in {a.name for a in added}) + tuple(added),
                              generator.tables[table][1])
    result = generator.fresh("u")
    if generator.chance(0.6):
        other = "0" if numeric else '"q"'
        test = generator.pick([f"{body} != {other}", f"{body} == {body}", f"not ({body} == 0)"])
        chunks.append(f"{result} = {made}.where(lambda r: {test})")
    else:
        domain = "numeric(0, 100)" if numeric else 'categorical(["", "a", "!"], default="")'
        chunks.append(f'{result} = {made}.derive("z", lambda r: {body}, {domain})')
    generator.tables[result] = generator.tables[made]
    chunks.append(generator.pick(['print("grown")', generator.observe(result)]))
