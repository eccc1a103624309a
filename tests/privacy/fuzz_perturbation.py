"""Input perturbation (issue 26) under the replay check and in the neighbour fuzzer.

Two generators:

  * `randomise_case(rng)` / `check_randomise_case` / `fuzz_randomise`: programs that randomise a
    private table bound under replace_one (`public_rows=True`: its row count is public), with
    random operators per column (R1, R3 mixtures, randomized response, and operators that must be
    refused: R2, additive noise without wrap-around, an operator over another domain), sometimes
    after `select` or a derived column with a declared domain, sometimes twice, sometimes followed
    by the public post-processing (`reconstruct`, `estimate`, the breach analysis); the neighbour
    replaces one row (cells at the bounds, between whole numbers, any category). Each program
    runs in a pure `Session` on D recording every noise point with a
    `jostle.privacy.replay.Recorder` ("randomise": the rows' input codes, claim hamming <= 1: one
    row's inputs change), then on D' PLAYING D's transcript: every release within its claim; when
    the whole transcript was played, the printed text, the ledger, the end and the released
    tables the same; a refusal draws nothing.
  * `perturbation_statements(generator)` (neighbour_fuzz.py, family "perturbation"): operators
    built over a case's column domains (valid or not), their exact analysis (public), and
    `randomise` on ANY of a case's tables: the neighbour fuzzer's private tables are bound under
    the row unit, so `randomise` on them must be refused before any charge, in the same words on
    both neighbours; on public tables it runs for free and must print the same on both.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from jostle.privacy.replay import Comparison, Record
from tests.privacy.fuzz_sulq import ProgramRun, ProgramStats, compare_runs, fuzz_programs, run_program

if TYPE_CHECKING:  # pragma: no cover
    from tests.privacy.neighbour_fuzz import Generator

CATEGORIES = ("a", "b", "c", "d")


# ---------------------------------------------------------------- the replay fuzzer of randomise
@dataclass(frozen=True)
class RandomiseCase:
    """A program, the public schema and the rows of D and D' (one row replaced)."""

    program: str
    schema: dict[str, Any]
    rows: tuple
    rows_prime: tuple
    change: str
    seed: int
    results: tuple[str, ...]

    def frame(self, which: int) -> pd.DataFrame:
        return pd.DataFrame(list(self.rows if which == 0 else self.rows_prime), columns=list(self.schema))

    def report(self) -> str:
        return (f"D' is D with {self.change}; schema {self.schema}; seed {self.seed}\n--- program ---\n{self.program}\n"
                f"--- D ---\n{self.frame(0)}\n--- D' ---\n{self.frame(1)}")


def _operator(rng: random.Random, lo: int, hi: int, categories: tuple[str, ...] | None) -> str:
    """An operator over the domain (mostly the column's own; now and then one that must be refused)."""
    domain = f"{list(categories)!r}".replace("'", '"') if categories else f"{lo}, {hi}"
    size = len(categories) if categories else hi - lo + 1
    draw = rng.random()
    if draw < 0.06:
        return f"cyclic_uniform({domain}, {min(1, (size - 1) // 2)})"  # R2: infinite gamma
    if draw < 0.1 and not categories:
        return f"additive_uniform({lo}, {hi}, 1)"  # no wrap-around: infinite gamma
    if draw < 0.14:
        return f"keep_or_uniform({lo}, {hi + 1}, 0.5)" if not categories else 'keep_or_uniform(["x", "y"], 0.5)'
    form = rng.choice(["r1", "r1", "rr", "r3"])
    if form == "r1":
        return f"keep_or_uniform({domain}, {rng.choice(['0.2', '0.5', '0', '0.9'])})"
    if form == "rr":
        return f"randomized_response_operator({domain}, {rng.choice(['0.5', '1', '2'])})"
    k = max(0, min(1, (size - 1) // 2))
    weights = rng.choice(["0.5, 0.5", "0.25, 0.75"])
    return f"mixture([{weights}], [cyclic_uniform({domain}, {k}), keep_or_uniform({domain}, 0)])"


def randomise_case(rng: random.Random) -> RandomiseCase:
    """A random case (module docstring)."""
    lo = rng.choice([0, -3, 5])
    hi = lo + rng.choice([1, 2, 4, 7])
    categories = CATEGORIES[:rng.choice([2, 3, 4])]
    schema = {"v": ("numeric", lo, hi), "g": ("categorical", list(categories)), "w": ("numeric", 0, 1)}

    def row() -> tuple:
        v = rng.choice([lo, hi, round(rng.uniform(lo, hi), 1), lo + 0.5, hi - 0.5])
        return (v, rng.choice(categories), rng.choice([0, 1, 0.5]))

    rows = [row() for _ in range(rng.choice([1, 2, 3, 5, 9]))]
    position = rng.randrange(len(rows))
    rows_prime = rows[:position] + [row()] + rows[position + 1:]
    chunks, results = [], []
    table = "t"
    if rng.random() < 0.2:
        chunks.append('t2 = select(t, ["g", "v"])')
        table = "t2"
    if rng.random() < 0.15:
        chunks.append(f't3 = {table}.derive("z", lambda r: r.v - {lo}, numeric(0, {hi - lo}))')
        table = "t3"
    for index in range(rng.choice([1, 1, 2])):
        columns = rng.sample(["v", "g"] + (["z"] if table == "t3" else []), rng.choice([1, 2]))
        spec = []
        for column in columns:
            if column == "g":
                spec.append(f"g: {_operator(rng, 0, 0, categories)}")
            elif column == "z":
                spec.append(f"z: {_operator(rng, 0, hi - lo, None)}")
            else:
                spec.append(f"v: {_operator(rng, lo, hi, None)}")
        shown = table if rng.random() < 0.92 else f"{table}.where(lambda r: r.v > {lo})"
        name = f"r{index}"
        chunks.append(f"{name} = randomise({shown}, {{{', '.join(spec)}}})\nprint({name})")
        results.append(name)
        if rng.random() < 0.3:
            column = columns[0]
            operator = spec[0].split(": ", 1)[1]
            chunks.append(f'print(estimate(reconstruct({name}, "{column}", {operator}), '
                          f'{rng.choice(["[" + repr(categories[0]).replace(chr(39), chr(34)) + "]", "[" + str(lo) + "]"])}))')
    if rng.random() < 0.2:
        chunks.append(f"print(amplification({_operator(rng, lo, hi, None)}))")
    seed = rng.randrange(1 << 30)
    return RandomiseCase("\n".join(chunks) + "\n", schema, tuple(rows), tuple(rows_prime), f"row {position} replaced",
                         seed, tuple(results))


def run_randomise(case: RandomiseCase, which: int, play: list[Record] | None = None,
                  engine: str = "pandas") -> ProgramRun:
    """Run the case's program on D (0, recording) or D' (1, playing `play`), the private table on
    `engine` ("pandas" or "duckdb")."""
    from jostle import Session

    output = io.StringIO()
    session = Session(budget=1000, ledger_path=":memory:", seed=case.seed, output=output, engine=engine,
                      dry_run=False)  # the real run is audited; the dry run reads no data
    session.bind_private("t", case.frame(which), case.schema, public_rows=True)
    return run_program(session, output, case.program, play, case.results)


def check_randomise_case(case: RandomiseCase, engine: str = "pandas"
                         ) -> tuple[str | None, Comparison, tuple[ProgramRun, ProgramRun]]:
    """Record on D, play on D'; the reason of a finding (None: none)."""
    first = run_randomise(case, 0, engine=engine)
    second = run_randomise(case, 1, first.records, engine)
    reason, comparison = compare_runs(first, second)
    return reason, comparison, (first, second)


def fuzz_randomise(seconds: float, seed: int, stats: ProgramStats | None = None, engine: str = "pandas",
                   min_programs: int = 0) -> str | None:
    """Check random programs for `seconds` (and at least `min_programs`); the first finding's report (None: none)."""
    return fuzz_programs(seconds, seed, randomise_case, lambda case: check_randomise_case(case, engine), stats,
                         min_programs)


# ---------------------------------------------------------------- the neighbour fuzzer's calls
def _lit(value: Any) -> str:
    from tests.privacy.neighbour_fuzz import _lit as literal

    return literal(value)


def _column_operator(generator: Generator, column: Any) -> str:
    """An operator over a column's declared domain (whole-number bounds, or its categories), or
    over another domain now and then."""
    if column.numeric:
        lo, hi = int(column.lo), int(column.hi)
        if hi - lo > 60:  # a small domain: the exact law is a (size x size) matrix
            hi = lo + 60
        domain = f"{lo}, {max(hi, lo + 1)}"
    else:
        domain = _lit(list(column.values))
    size = (max(hi, lo + 1) - lo + 1) if column.numeric else len(column.values)
    k = max(0, min(2, (size - 1) // 2))
    return generator.pick([f"keep_or_uniform({domain}, {generator.pick(['0.2', '0.5', '0'])})",
                           f"randomized_response_operator({domain}, {generator.pick(['0.5', '1', '3'])})",
                           f"mixture([0.5, 0.5], [cyclic_uniform({domain}, {k}), keep_or_uniform({domain}, 0)])",
                           f"cyclic_uniform({domain}, {k})",
                           f"additive_uniform({domain}, 1)" if column.numeric else f"keep_or_uniform({domain}, 2)",
                           "keep_or_uniform(0, 3, 0.5)", 'keep_or_uniform(["zz"], 0.5)'])


def perturbation_statements(generator: Generator) -> list[str]:
    """An operator over a column's domain, analysed, or applied to a table with `randomise`."""
    table = generator.some_table(generator.chance(0.6))
    columns = generator.columns_of(table)
    if not columns:
        return ["print(amplification(keep_or_uniform(0, 3, 0.5)))"]
    chosen = generator.rng.sample(columns, min(len(columns), generator.pick([1, 1, 2])))
    operators = {c.name: _column_operator(generator, c) for c in chosen}
    name = generator.fresh("R")
    first = chosen[0]
    statements = [f"{name} = {operators[first.name]}"]
    analysis = generator.pick(["amplification", "local_epsilon", "has_breach", "breach_threshold", "posterior",
                               "transition", "randomise", "randomise", "randomise"])
    if analysis in ("amplification", "local_epsilon"):
        statements.append(f"print({analysis}({name}))")
    elif analysis == "has_breach":
        statements.append(f"print(has_breach({name}, {generator.pick(['0.14', '0.15', '0.5', '0'])}, 0.5))")
    elif analysis == "breach_threshold":
        statements.append(f"print(breach_threshold({name}, {generator.pick(['0.5', '0.9', '2'])}))")
    elif analysis in ("posterior", "transition"):
        value = _lit(generator.pick(list(first.values))) if not first.numeric and first.values else \
            _lit(int(first.lo))
        if analysis == "posterior":
            statements.append(f'print(posterior({name}, "uniform", [{value}], {value}))')
        else:
            statements.append(f"print(transition({name}, {value}, {value}))")
    else:
        spec = ", ".join(f"{c.name}: {operators[c.name]}" for c in chosen)
        shown = table if generator.chance(0.85) else generator.pick([f"{table}.where(lambda r: true)",
                                                                     f"select({table}, {_lit([c.name for c in chosen])})"])
        released = generator.fresh("rt")
        statements += [f"{released} = randomise({shown}, {{{spec}}})", f"print({released})"]
        if generator.chance(0.4):
            statements.append(f'print(reconstruct({released}, "{first.name}", {name}))')
    return statements


__all__ = ["RandomiseCase", "check_randomise_case", "fuzz_randomise", "perturbation_statements",
           "randomise_case", "run_randomise"]
