"""A replay fuzzer: every release's pre-noise values, checked against the sensitivity it claimed
(issue 22; replay auditing, Cebere et al. 2026, "Re:cord-play").

The neighbour fuzzer (neighbour_fuzz.py) compares what a program shows before its first charge.
This one sees past it. Each random program runs on a private table D with a seeded Session and
a `jostle.privacy.replay.Recorder` recording, at every noise point, the exact values noise is
added to (grid steps and grid) and the claim the noise is calibrated to (L1, L2, one axis, per
score, rows, Hamming). It then runs on a neighbour D' with the same seed, *playing* D's
transcript: each noise point on D' records its own pre-noise values and returns what D released,
so the D' run is the same program conditioned on D's outputs, the condition under which each
release of an adaptively composed program must be private (replay.py's docstring). Two
oracles:

  * **claims** (`replay.compare`): at every paired noise point, D's and D''s pre-noise values
    differ by at most the claimed sensitivity, in its norm, on its grid; a release's length and
    grid are public and must agree;
  * **transcript**: when every noise point was played, everything the program showed (what it
    printed, how it ended) must be identical on D and D': after the noise, nothing but released
    values may depend on the data. Before this fuzzer, only what came before the first charge
    was compared. A run that releases nothing while its neighbour releases is a finding too:
    what came before the first release depended on the data (e.g. a refusal that reads rows).

Neighbours, by the table's unit (`UNITS`):
  * row: one row added or removed;
  * replace_one (`public_rows=True`): one row replaced by another;
  * entity: every row of one key (KEY) added or removed (one to four rows, anywhere in the
    table); programs either bound the rows per key first (`t.bound_per_key(k)`, "entity_bounded")
    or release only entity counts (`count_keys`) and meet the refusals of unbounded aggregates
    ("entity").

The programs (`ReplayGenerator`, built on neighour_fuzz.Generator's table operations and row
functions) release aggregates (count, sum, mean, histograms, derived and filtered tables, parts
of partitions) through every mechanism (laplace, geometric, gaussian, `{{ }}`, report_noisy_max,
exponential, above_threshold, randomized_response on replace_one tables), branch and filter on
released values (adaptivity), and call the learner families (histogram algorithms, tree
learners, Bayesian rule lists; DP ILP and DP redescription mining on entity units when `forms` asks
for them, fuzz_ilp.py and fuzz_redescription.py),
whose own noise points are hooked as well.

Measures: ZCDP_RATE of the cases run in a zCDP session (`Session(rho=...)`), whose programs
release Gaussians at a rho (`gaussian(x, rho(R))`, `with budget rho(R): {{ x }}`) besides pure
epsilon releases.

Engines: every case runs on one engine ("pandas", "duckdb" or "spark"); both neighbours run on
the same one. `fuzz(seconds, seed, unit, engine)` returns the first finding; `ReplayStats`
counts programs, checked releases, played transcripts and findings.
"""

from __future__ import annotations

import contextlib
import io
from fractions import Fraction
import random
import shutil
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from jostle import Session
from jostle.diagnostics.errors import JostleError
from jostle.privacy.replay import Comparison, Record, Recorder, compare
from tests.privacy.fuzz_evaluation import replay_evaluation_call
from tests.privacy.fuzz_ilp import replay_ilp_call
from tests.privacy.fuzz_redescription import replay_redescription_call
from tests.privacy.neighbour_fuzz import (
    Column, Generator, PublicTable, Scope, TableSpec, _lit, _time_limit, _Timeout, random_columns, tiny_corpus,
    tiny_training,
)

KEY = "pid"                 # the entity key of entity-unit tables
UNITS = ("row", "replace_one", "entity", "entity_bounded")
ENGINES = ("pandas", "duckdb", "spark")
RUN_TIMEOUT = 20.0          # seconds one run may take before it is abandoned (not a finding)
BUDGET, DELTA = 1e6, 0.5    # the session's caps: programs are never refused for budget
RHO = 1e6                   # the cap of a zCDP session (ZCDP_RATE of the cases)
ZCDP_RATE = 0.2
RHOS = ["0.125", "0.5", "2"]
EPSILONS = ["0.5", "1", "2", "0.25"]
HISTOGRAM_ALGORITHMS = ["Identity", "Uniform", "HB", "Privelet", "MWEM", "DAWA", "DAWA10", "AHP"]
TREE_LEARNERS = ["FriedmanSchuster", "Mohammed", "RandomTrees", "PatilSingh", "FletcherIslam", "OneRule",
                 "BinaryTree", "Majority", "Mohammed2", "Mohammed6", "MohammedLeafHeavy", "RandomTrees10",
                 "BinaryTree2", "FriedmanSchusterLeanStop"]  # the last six: issue 27's choice-point variants
CELLS = 8                   # the histograms the learners get: x binned into 8 cells
# The public names neighbour_fuzz.Generator's statements use, bound in every session.
PUBLIC_VALUES = {"v": [0, 1, 2, 5], "flags": [True, False, True], "k": 3, "cfg": {"lim": 5, "name": "a"}}
# A database's second table (entity-unit cases, now and then) and a public lookup on grp, which
# holds "a" twice: a join with it has stability 2 x the private side's.
CAR_COLUMNS = (Column(KEY, "num", 0.0, 50.0, integer=True), Column("load", "num", 0.0, 5.0),
               Column("shape", "text", values=("rect", "oval", "hex")))
LOOKUP = TableSpec("look", (Column("grp", "text", values=("a", "b", "c")), Column("sides", "num", 0.0, 6.0)),
                   (("a", 4.0), ("b", 0.0), ("a", 6.0)))
DATABASE_RATE = 0.4
# How often each kind of learner call is drawn. A ChoiceMaker trains on the tiny corpus on both
# runs (seconds each), so it is left to its own test (`forms`); so is DP ILP (issue 24,
# fuzz_ilp.py: entity units only), which keeps the other tests' fixed-seed programs as they were.
LEARNER_FORMS = {"histogram": 40.0, "tree": 30.0, "rules": 20.0, "choicemaker": 0.0, "ilp": 0.0,
                 "redescription": 0.0,  # issue 25 (fuzz_redescription.py): entity units, its own test
                 "evaluation": 0.0}  # issue 28 (fuzz_evaluation.py): split, fit, private evaluation; its own test
PUBLIC_IDS = PublicTable(TableSpec("ids", (Column("id", "num", 0.0, 10.0, integer=True),
                                           Column("w", "num", 0.0, 5.0)), ((1, 2.5), (4, 0.5), (7, 3.0))), "bind")
# The learners compute some utilities in floating point and state their sensitivities for exact
# arithmetic (jostle.privacy.safe_noise's docstring): MWEM's |q.x - q.est| moves by 1 + 2^-52
# where 1 is claimed. Such excesses, on points marked `floating` only, up to this relative
# slack, are counted (ReplayStats.float_excess), not failed; any other excess is a finding.
FLOAT_SLACK = Fraction(1, 2**40)


# ---------------------------------------------------------------- cases
@dataclass(frozen=True)
class ReplayCase:
    """A program, a private table D, its neighbour D' and the unit they are neighbours under.

    Attributes:
        chunks: The program's statements.
        columns: The private table's columns (KEY among them for an entity unit).
        rows: D's rows.
        neighbour_rows: D''s rows.
        unit: "row", "replace_one", "entity" or "entity_bounded" (UNITS).
        change: How D' differs from D, for reports.
        seed: The Session's seed (the same on both runs).
    """

    chunks: tuple[str, ...]
    columns: tuple[Column, ...]
    rows: tuple[tuple, ...]
    neighbour_rows: tuple[tuple, ...]
    unit: str
    change: str
    seed: int
    cars: tuple[tuple[tuple, ...], tuple[tuple, ...]] | None = None  # D's and D''s second table
    zcdp: bool = False          # the session accounts in rho-zCDP (Session(rho=...))
    pure: bool = False          # a pure epsilon-DP session (delta 0), else (epsilon, DELTA)

    @property
    def source(self) -> str:
        return "\n".join(self.chunks) + "\n"

    def table(self, which: int) -> TableSpec:
        return TableSpec("t", self.columns, self.rows if which == 0 else self.neighbour_rows)

    def bind(self, session: Session, which: int) -> None:
        """Bind D (0) or D' (1) as the curator would, under the case's unit."""
        table = self.table(which)
        if self.cars is not None:  # one database keyed by KEY: an entity's rows in both tables
            cars = TableSpec("cars", CAR_COLUMNS, self.cars[which])
            session.bind_database({"t": table.frame(), "cars": cars.frame()}, key=KEY,
                                  schemas={"t": table.schema(), "cars": cars.schema()})
        elif self.unit == "replace_one":
            session.bind_private("t", table.frame(), table.schema(), public_rows=True)
        elif self.unit.startswith("entity"):
            session.bind_private("t", table.frame(), table.schema(), unit=f"entity:{KEY}")
        else:
            session.bind_private("t", table.frame(), table.schema())
        session.bind_public("ids", PUBLIC_IDS.table.frame())
        session.bind_public("look", LOOKUP.frame())
        for name, value in PUBLIC_VALUES.items():
            session.bind_public(name, value)

    def report(self) -> str:
        text = (f"unit {self.unit}{' (zCDP session)' if self.zcdp else ''}; D' is D with {self.change}; "
                f"seed {self.seed}\n--- program ---\n{self.source}"
                f"--- D ---\n{self.table(0).text()}\n--- D' ---\n{self.table(1).text()}")
        if self.cars is not None:
            text += "".join(f"\n--- cars of {which} ---\n{TableSpec('cars', CAR_COLUMNS, rows).text()}"
                            for which, rows in (("D", self.cars[0]), ("D'", self.cars[1])))
        return text


def case_columns(rng: random.Random, unit: str) -> tuple[Column, ...]:
    """The columns every program can use (x, grp, label; a second categorical for the
    learners) plus up to two random ones, and the key for an entity unit."""
    columns = [Column("x", "num", 0.0, 10.0, integer=rng.random() < 0.3),
               Column("grp", "text", values=("a", "b", "c")),
               Column("label", "text", values=("yes", "no")),
               Column("c2", "code", values=(0, 1))]
    columns += random_columns(rng, rng.randint(0, 2), ["age", "score", "y", "w"])
    if unit.startswith("entity"):
        columns.append(Column(KEY, "num", 0.0, 50.0, integer=True))
    return tuple(columns)


def _row(rng: random.Random, columns: tuple[Column, ...], key: int | None = None) -> tuple:
    return tuple(key if c.name == KEY else c.draw(rng) for c in columns)


def make_neighbours(rng: random.Random, columns: tuple[Column, ...], unit: str
                    ) -> tuple[tuple[tuple, ...], tuple[tuple, ...], str]:
    """D's rows, D''s rows and the change between them, under `unit`."""
    size = rng.choice([0, 1, 2, 3, 5, 8, 12, 20, 30])
    if unit.startswith("entity"):
        keys = list(range(rng.randint(0, 8)))
        rows = [_row(rng, columns, rng.choice(keys)) for _ in range(size)] if keys else []
        if rows and rng.random() < 0.5:  # one entity, all of its rows, removed
            key = rng.choice(sorted({r[-1] for r in rows}))
            return tuple(rows), tuple(r for r in rows if r[-1] != key), f"entity {key} removed"
        key = 50 - rng.randint(0, 5)  # a new entity's rows, anywhere
        other = list(rows)
        for _ in range(rng.choice([1, 2, 2, 3, 4])):
            other.insert(rng.randint(0, len(other)), _row(rng, columns, key))
        return tuple(rows), tuple(other), f"entity {key} added ({len(other) - len(rows)} rows)"
    rows = [_row(rng, columns) for _ in range(size)]
    if unit == "replace_one":
        if not rows:
            rows = [_row(rng, columns)]
        at = rng.randrange(len(rows))
        other = list(rows)
        other[at] = _row(rng, columns)
        return tuple(rows), tuple(other), f"row {at} replaced"
    if rows and rng.random() < 0.5:
        at = rng.randrange(len(rows))
        return tuple(rows), tuple(rows[:at] + rows[at + 1:]), f"row {at} removed"
    at = rng.randint(0, len(rows))
    return tuple(rows), tuple(rows[:at] + [_row(rng, columns)] + rows[at:]), f"a row added at {at}"


# ---------------------------------------------------------------- programs
class ReplayGenerator(Generator):
    """Programs that release a lot, adaptively (see the module docstring).

    The table operations and row functions are neighbour_fuzz.Generator's (`where_or_derive`,
    `condition`, `row_function`), in their clean form (no constructs meant to be refused).
    """

    def __init__(self, rng: random.Random, table: TableSpec, unit: str, bound: int | None = None) -> None:
        super().__init__(rng, table, None, (PUBLIC_IDS,), dict(PUBLIC_VALUES), True)
        self.wild = 0.0
        self.unit = unit
        self.base = "t"
        # How many rows one individual moves in the tables the program releases on: the
        # sensitivity a program declares for exponential's utilities.
        self.stability = bound if bound is not None else 2 if unit == "replace_one" else 1
        if bound is not None:
            self.tables["b"] = (table.columns, True)
            self.base = "b"
        self.database = False  # whether the case binds a second table, cars, with t as one database
        self.learner_forms: dict[str, float] | None = None  # weights of st_learner's forms (LEARNER_FORMS)
        self.zcdp = False  # the session accounts in rho-zCDP: Gaussian releases at a rho
        self.join_stability: dict[str, int | None] = {}

    def some_table(self, private: bool | None = True) -> str:
        if private and self.unit == "entity_bounded":  # derive from the bounded table, not from t
            return self.pick(self.private_tables())
        return super().some_table(private)

    def st_join(self, chunks: list[str]) -> None:
        """A join: of the database's tables on the key (bounded after, in entity_bounded cases),
        or of a private table with the public lookup on grp (stability times 2)."""
        name = self.fresh("j")
        if self.database and self.chance(0.6):
            columns = self.private.columns + tuple(c for c in CAR_COLUMNS if c.name != KEY)
            left, right = self.pick([("t", "cars"), ("cars", "t")])
            stability: int | None = None
            if self.unit == "entity_bounded" and self.chance(0.5):  # bounded, then joined: k x m
                bound = self.pick([1, 2, 3])
                chunks.append(f'{name} = b.join(cars.bound_per_key({bound}), on="{KEY}")')
                stability = self.stability * bound
            elif self.unit == "entity_bounded":  # joined, then bounded
                stability = self.pick([1, 2, 4])
                chunks.append(f'{name} = {left}.join({right}, on="{KEY}").bound_per_key({stability})')
            else:
                chunks.append(f'{name} = {left}.join({right}, on="{KEY}")')
            self.tables[name] = (columns, True)
            self.join_stability[name] = stability
        else:
            table = self.table()
            if table == "cars" or any(c.name == "sides" for c in self.tables[table][0]):
                return
            chunks.append(f'{name} = {table}.join(look, on="grp")')
            self.tables[name] = (self.tables[table][0] + (LOOKUP.columns[1],), True)
            self.join_stability[name] = None if self.unbounded(table) else 2 * self.table_stability(table)
        if name in self.tables:
            chunks.append(self.release_of(self.value(name)))

    def table_stability(self, table: str) -> int:
        """How many rows of `table` one individual moves at most (exponential's declared
        sensitivity); a table derived from a join may have its stability."""
        if table in self.join_stability:
            return self.join_stability[table] or 1
        known = [s for s in self.join_stability.values() if s] + [self.stability]
        return self.stability if table in ("t", self.base) else max(known)

    def aggregate(self, table: str) -> str:
        if self.unbounded(table):
            return f"count_keys({table})"
        return super().aggregate(table)

    def unbounded(self, table: str) -> bool:
        """Whether `table` is an entity table whose rows per key are not bounded."""
        return (self.unit == "entity" and self.tables.get(table, ((), False))[1]) \
            or (table in self.join_stability and self.join_stability[table] is None)

    def eps(self) -> str:
        return self.pick(EPSILONS)

    def private_tables(self) -> list[str]:
        return [name for name, (_, private) in self.tables.items() if private and name != "t"] + [self.base]

    def table(self) -> str:
        return self.pick(self.private_tables())

    # ------------------------------------------------------------ values and releases
    def value(self, table: str) -> str:
        """A private aggregate of `table`: entity counts only on an unbounded entity table."""
        if self.unbounded(table):
            return self.pick([f"count_keys({table})",
                              f"count_keys({table}.where(lambda r: {self.condition(Scope('r', self.private.columns))}))"])
        numeric = [c.name for c in self.columns_of(table, ("num",))]
        options = [f"count({table})", f"count({table}) * 2 + 1", f'histogram({table}, "grp")',
                   f'histogram({table}, "label")']
        if "x" in numeric:
            options += [f'sum({table}, "x")', f'mean({table}, "x")', f'sum({table}, "x") / 4']
        return self.pick(options + [super().aggregate(table)])

    def release(self, value: str, block: bool = True) -> str:
        """An expression releasing `value` (`{{ value }}` only where `block` allows: it needs a
        `with budget` around it)."""
        form = self.pick(["laplace", "geometric", "gaussian", "block"], [45, 20, 15, 20 if block else 0])
        if self.zcdp and form == "gaussian":  # in rho: any value, a mean included
            return f"gaussian({value}, rho({self.pick(RHOS)}))"
        if form == "laplace":
            return f"laplace({value}, {self.eps()})"
        if form == "geometric" and ("count" in value or "histogram" in value) and "/" not in value:
            return f"geometric({value}, {self.eps()})"
        if form == "gaussian" and "mean" not in value:
            return f"gaussian({value}, {self.eps()}, 0.00001)"
        return f"{{{{ {value} }}}}" if block else f"laplace({value}, {self.eps()})"

    def release_of(self, value: str) -> str:
        """A top-level statement printing a release of `value` (replaces Generator's, whose
        forms include invalid epsilons)."""
        release = self.release(value)
        if release.startswith("{{"):  # Laplace or geometric in a DP program, the Gaussian at rho in zCDP
            amount = f"rho({self.pick(RHOS)})" if self.zcdp else self.eps()
            return f"with budget {amount}:\n    print({release})"
        return f"print({release})"

    def statement(self, chunks: list[str]) -> None:
        # The learner families refuse replace_one tables and unbounded entity tables (before any
        # charge): rarely drawn there, as the refusal ends the program.
        learners = 10 if self.unit in ("row", "entity_bounded") else 1
        kind = self.pick(["release", "adaptive", "derived", "partition", "select", "learner", "rr", "join"],
                         [30, 20, 15, 10, 15, learners, 4 if self.unit == "replace_one" else 0,
                          15 if self.unit.startswith("entity") else 5])
        getattr(self, f"st_{kind}")(chunks)

    def st_release(self, chunks: list[str]) -> None:
        chunks.append(self.release_of(self.value(self.table())))

    def st_adaptive(self, chunks: list[str]) -> None:
        """Branch, filter or size a loop on a released value."""
        table = self.table()
        name = self.fresh("m")
        value = self.pick([f"count({table})", f'sum({table}, "x")'] if not self.unbounded(table)
                          else [f"count_keys({table})"])
        chunks.append(f"{name} = laplace({value}, {self.eps()})")
        form = self.pick(["if", "where", "loop"])
        if form == "if":
            chunks.append(f"if {name} > {self.pick(['0', '3', '10'])}:\n    print({self.release(self.value(table), False)})\n"
                          f"else:\n    print({self.release(self.value(self.table()), False)})")
        elif form == "where" and not self.unbounded(table):
            derived = self.fresh("u")
            chunks.append(f"{derived} = {table}.where(lambda r: r.x * 3 > {name})")
            self.tables[derived] = (self.tables[table][0], True)
            chunks.append(self.release_of(self.value(derived)))
        else:
            chunks.append(f"for i in range(min(max(round({name}), 0), 3)):\n"
                          f"    print(i, {self.release(self.value(self.table()), False)})")

    def st_derived(self, chunks: list[str]) -> None:
        if self.unit == "entity" and self.chance(0.5):
            derived = self.fresh("u")
            chunks.append(f"{derived} = t.where(lambda r: {self.condition(Scope('r', self.private.columns))})")
            chunks.append(f"print(laplace(count_keys({derived}), {self.eps()}))")
            return
        before = set(self.tables)
        self.where_or_derive(chunks)
        made = [name for name in self.tables if name not in before]
        if made and self.tables[made[0]][1]:
            chunks.append(self.release_of(self.value(made[0])))

    def st_partition(self, chunks: list[str]) -> None:
        table = self.table()
        value = "count_keys(part)" if self.unbounded(table) else self.pick(
            ["count(part)", 'sum(part, "x")', 'mean(part, "x")'])
        chunks.append(f'for part in {table}.partition("{self.pick(["grp", "label"])}"):\n'
                      f"    print(part.key, laplace({value}, {self.eps()}))")

    def st_select(self, chunks: list[str]) -> None:
        table = self.table()
        if self.unbounded(table):
            scores = [f'count_keys({table}.where(lambda r: r.grp == "{g}"))' for g in ("a", "b", "c")]
        else:
            scores = [self.value(table) for _ in range(self.rng.randint(1, 3))]
            scores = [s for s in scores if "histogram" not in s and "mean" not in s] or [f"count({table})"]
        form = self.pick(["noisy_max", "noisy_max_hist", "exponential", "above"])
        if form == "noisy_max_hist" and not self.unbounded(table):
            chunks.append(f'print(report_noisy_max(histogram({table}, "grp"), {self.eps()}))')
        elif form == "exponential":
            utility = (f'count_keys({table}.where(lambda r: r.grp == g))' if self.unbounded(table)
                       else f"count({table}.where(lambda r: r.grp == g))")
            sensitivity = 1 if self.unbounded(table) else self.table_stability(table)
            chunks.append(f'print(exponential(["a", "b", "c"], lambda g: {utility}, {self.eps()}, {sensitivity}))')
        elif form == "above":
            chunks.append(f"print(above_threshold([{', '.join(scores)}], {self.pick(['1', '5', '20'])}, {self.eps()}))")
        else:
            chunks.append(f"print(report_noisy_max([{', '.join(scores)}], {self.eps()}))")

    def st_rr(self, chunks: list[str]) -> None:
        chunks.append(f'print(randomized_response(t, "{self.pick(["grp", "label"])}", {self.eps()}))')

    def st_learner(self, chunks: list[str]) -> None:
        table = self.base
        # the tree and rule-list families refuse tables of stability above 1 (before any charge)
        weights = dict(self.learner_forms or LEARNER_FORMS)
        if self.stability != 1:  # the tree and rule-list learners refuse such tables: drawn rarely
            weights["tree"], weights["rules"] = weights["tree"] / 3, weights["rules"] / 3
        if not self.unit.startswith("entity"):  # DP ILP, redescribe: entity-unit data only (last: no other draw moves)
            weights["ilp"] = weights["redescription"] = 0.0
        form = self.pick(list(weights), list(weights.values()))
        if form == "ilp":  # DP ILP (issue 24) on the examples and their cars (tests/privacy/fuzz_ilp.py)
            chunks.append(replay_ilp_call(self))
        elif form == "redescription":  # DP redescription mining (issue 25; tests/privacy/fuzz_redescription.py)
            chunks.append(replay_redescription_call(self))
        elif form == "evaluation":  # private evaluation of a model (issue 28; tests/privacy/fuzz_evaluation.py)
            chunks.append(replay_evaluation_call(self))
        elif form == "histogram":
            edges = [round(i * 10 / CELLS, 4) for i in range(CELLS + 1)]
            name = self.fresh("h")
            chunks.append(f'{name} = histogram({table}.bin("x", {_lit(edges)}), "x")')
            workload = self.pick([f"all_ranges({CELLS})", f"prefixes({CELLS})"])
            chunks.append(f"print({self.pick(HISTOGRAM_ALGORITHMS)}({name}, {workload}, epsilon={self.eps()}))")
            if self.chance(0.3):  # a metafeature, released on its own
                chunks.append(f"print(sparsity({name}, epsilon={self.eps()}))")
        elif form == "tree":
            chunks.append(f'print({self.pick(TREE_LEARNERS)}(select({table}, ["grp", "c2", "label"]), "label", '
                          f"epsilon={self.eps()}))")
        elif form == "rules":
            chunks.append(f'print(BayesianRuleList(select({table}, ["grp", "c2", "label"]), "label", '
                          f"epsilon={self.pick(['1', '2'])}, max_rows=64))")
        else:  # a ChoiceMaker trained on neighbour_fuzz's tiny corpus: its metafeatures' releases, then the Option's
            edges = [round(i * 10 / CELLS, 4) for i in range(CELLS + 1)]
            maker, histogram = self.fresh("H"), self.fresh("h")
            options = ", ".join(self.rng.sample(["Identity", "Uniform", "HB", "DAWA", "MWEM"], 2))
            features = self.pick(["domain_size, sparsity", "sparsity", "domain_size"])
            chunks.append(f"choicemaker {maker} among {{{options}}} informed by {{{features}}} trained on corpus\n"
                          f'{histogram} = histogram({table}.bin("x", {_lit(edges)}), "x")\n'
                          f"print({maker}({histogram}, all_ranges({CELLS}), epsilon={self.eps()}))\n"
                          f"print(trace({maker})[0].choice)")


def make_case(rng: random.Random, unit: str, statements: int | None = None,
              learners: float | None = None, forms: dict[str, float] | None = None) -> ReplayCase:
    """A random case under `unit` (UNITS); `learners` is the share of learner calls among the
    statements (default: the mix of `ReplayGenerator.statement`), `forms` their kinds' weights."""
    columns = case_columns(rng, unit)
    rows, neighbour_rows, change = make_neighbours(rng, columns, unit)
    cars = None
    if unit.startswith("entity") and rng.random() < DATABASE_RATE:
        cars = database_cars(rng, rows, neighbour_rows)
    bound = rng.choice([1, 1, 2, 3]) if unit == "entity_bounded" else None
    generator = ReplayGenerator(rng, TableSpec("t", columns, rows), unit, bound)
    generator.database = cars is not None
    generator.learner_forms = forms
    generator.zcdp = rng.random() < ZCDP_RATE
    chunks: list[str] = ["def twice(q):\n    return q * 2"]
    if bound is not None:
        chunks.append(f"b = t.bound_per_key({bound})")
    count = statements if statements is not None else rng.choice([2, 3, 4, 5])
    for _ in range(count):
        if learners is not None and rng.random() < learners:
            generator.st_learner(chunks)
        else:
            generator.statement(chunks)
    return ReplayCase(tuple(chunks), columns, rows, neighbour_rows, unit, change, rng.randrange(1 << 30), cars,
                      generator.zcdp)


def database_cars(rng: random.Random, rows: tuple[tuple, ...], neighbour_rows: tuple[tuple, ...]
                  ) -> tuple[tuple[tuple, ...], tuple[tuple, ...]]:
    """The second table of a database for D and D': zero to three rows for every key of either
    (the key is the last column of t's rows), those of the key that differs only on its side."""
    keys_d, keys_e = {r[-1] for r in rows}, {r[-1] for r in neighbour_rows}
    cars: dict[int, list[tuple]] = {}
    for key in sorted(keys_d | keys_e):
        cars[key] = [(key, round(rng.uniform(0, 5), 2), rng.choice(("rect", "oval", "hex")))
                     for _ in range(rng.choice([0, 1, 1, 2, 3]))]
    ordered = sorted(cars, key=lambda _: rng.random())
    return (tuple(r for k in ordered if k in keys_d for r in cars[k]),
            tuple(r for k in ordered if k in keys_e for r in cars[k]))


# ---------------------------------------------------------------- running
@dataclass
class ReplayRun:
    """One run: what it showed (printed, written to stderr, its ledger), how it ended, its noise
    points and where playing stopped."""

    output: str
    end: tuple
    records: list[Record]
    diverged_at: int | None
    internal: str | None = None
    timed_out: bool = False


def run_case(case: ReplayCase, which: int, engine: str = "pandas", play: list[Record] | None = None,
             spark: Any = None, timeout: float = RUN_TIMEOUT) -> ReplayRun:
    """Run `case` on D (0, recording) or D' (1, playing `play`) on `engine`."""
    output, stderr = io.StringIO(), io.StringIO()
    options = {"spark": {"session": spark}} if engine == "spark" and spark is not None else None
    caps: dict[str, Any] = {"rho": RHO} if case.zcdp else {"budget": BUDGET, "delta": 0 if case.pure else DELTA}
    session = Session(seed=case.seed, output=output, ledger_path=":memory:", engine=engine,
                      engine_options=options, dry_run=False, **caps)  # replay audits the real run
    recorder = Recorder()
    internal, timed_out = None, False
    cache = Path(tempfile.mkdtemp(prefix="jostle-replay-"))
    try:
        with _time_limit(timeout), warnings.catch_warnings(), contextlib.redirect_stderr(stderr), \
                tiny_training(cache):  # a ChoiceMaker trains in a fresh folder on each run
            warnings.simplefilter("ignore")  # the program's warnings are the neighbour fuzzer's business
            case.bind(session, which)
            session.interpreter.globals.define("corpus", tiny_corpus())
            with recorder.watching(session, play):
                session.run(case.source, "prog.jst")
        end: tuple = ("ok",)
    except JostleError as error:
        end = ("error", type(error).__name__, error.render())
    except _Timeout:
        end, timed_out = ("timeout",), True
    except Exception as error:  # noqa: BLE001 - anything else is a bug
        internal = "".join(traceback.format_exception(error))
        end = ("internal", type(error).__name__, str(error))
    finally:
        recorder.detach()
        shutil.rmtree(cache, ignore_errors=True)
    shown = output.getvalue() + stderr.getvalue() + f"--- ledger ---\n{session.ledger}\n"
    return ReplayRun(shown.replace(str(cache), "$JOSTLE_CACHE"), end, recorder.records, recorder.diverged_at, internal, timed_out)


@dataclass
class ReplayFinding:
    """A broken claim, a transcript that differs although every release was played, or a crash."""

    case: ReplayCase
    reason: str
    comparison: Comparison
    runs: tuple[ReplayRun, ReplayRun]
    programs_tried: int = 0
    seconds: float = 0.0

    def report(self) -> str:
        first, second = self.runs
        text = (f"{self.reason} (after {self.programs_tried} programs, {self.seconds:.1f} s)\n"
                f"{self.comparison.report()}\n{self.case.report()}\n")
        text += f"--- output on D ({first.end[0]}) ---\n{first.output}--- output on D' ({second.end[0]}) ---\n{second.output}"
        for run in self.runs:
            if run.internal:
                text += f"\n--- internal error ---\n{run.internal}"
        return text


def check_case(case: ReplayCase, engine: str = "pandas", spark: Any = None, timeout: float = RUN_TIMEOUT
               ) -> tuple[ReplayFinding | None, Comparison, tuple[ReplayRun, ReplayRun]]:
    """Record on D, play on D'; check the claims and the transcript (module docstring)."""
    first = run_case(case, 0, engine, None, spark, timeout)
    second = run_case(case, 1, engine, first.records, spark, timeout)
    comparison = compare(first.records, second.records, FLOAT_SLACK)
    runs = (first, second)
    reason = None
    if first.internal or second.internal:
        reason = "internal error (an exception that is not a JostleError)"
    elif comparison.violations:
        reason = "a release's pre-noise values moved by more than its claimed sensitivity"
    elif not (first.timed_out or second.timed_out) and second.diverged_at is None \
            and len(first.records) == len(second.records) and (first.output, first.end) != (second.output, second.end):
        reason = "the runs showed different things although every release was played"
    elif not (first.timed_out or second.timed_out) and (not first.records) != (not second.records):
        # the run that released nothing ended before its first noise point, the other went on
        # with nothing played: what came before the first release depended on the data
        reason = "one neighbour released and the other did not"
    return (ReplayFinding(case, reason, comparison, runs) if reason else None), comparison, runs


@dataclass
class ReplayStats:
    """What a replay fuzzing run did (per engine and unit)."""

    engine: str = ""
    unit: str = ""
    programs: int = 0
    releases: int = 0          # noise points paired and checked
    played: int = 0            # programs whose whole transcript was played on D'
    diverged: int = 0          # programs whose D' run left D's path (not paired past it)
    failed: int = 0            # programs ending in a JostleError on D
    timeouts: int = 0
    float_excess: int = 0      # claims of floating-point points exceeded within FLOAT_SLACK
    zcdp: int = 0              # programs run in a zCDP session
    points: dict[str, int] = field(default_factory=dict)  # noise points checked, by name
    mechanisms: dict[str, int] = field(default_factory=dict)  # noise points checked, by their charge's mechanism
    seconds: float = 0.0

    def __str__(self) -> str:
        points = ", ".join(f"{k} {v}" for k, v in sorted(self.points.items()))
        return (f"[{self.engine}, {self.unit}] {self.programs} programs ({self.zcdp} in zCDP) in {self.seconds:.1f} s: "
                f"{self.releases} "
                f"releases checked ({points}); {self.played} transcripts played whole, {self.diverged} diverged, "
                f"{self.failed} ended in an error, {self.timeouts} timed out"
                + (f"; {self.float_excess} floating-point excesses within the slack" if self.float_excess else ""))


def fuzz(seconds: float, seed: int = 0, unit: str = "row", engine: str = "pandas",
         stats: ReplayStats | None = None, max_programs: int | None = None, spark: Any = None,
         accept: Callable[[ReplayFinding], bool] | None = None, learners: float | None = None,
         statements: int | None = None, timeout: float = RUN_TIMEOUT, forms: dict[str, float] | None = None
         ) -> ReplayFinding | None:
    """Check random programs under `unit` on `engine` for `seconds` (or `max_programs`); return
    the first finding `accept` takes (default: any), or None. `learners` weights the learner
    families' calls (`forms`: which), `statements` fixes the programs' length, `timeout` bounds one run."""
    stats = stats if stats is not None else ReplayStats()
    stats.engine, stats.unit = engine, unit
    rng = random.Random(seed)
    start = time.monotonic()
    try:
        while time.monotonic() - start < seconds and (max_programs is None or stats.programs < max_programs):
            case = make_case(rng, unit, statements, learners, forms)
            finding, comparison, (first, second) = check_case(case, engine, spark, timeout)
            stats.programs += 1
            stats.releases += comparison.checked
            for record in first.records[:comparison.checked]:
                stats.points[record.point] = stats.points.get(record.point, 0) + 1
                mechanism = record.release.split(":")[0]
                stats.mechanisms[mechanism] = stats.mechanisms.get(mechanism, 0) + 1
            stats.played += second.diverged_at is None and len(first.records) == len(second.records)
            stats.diverged += second.diverged_at is not None
            stats.failed += first.end[0] == "error"
            stats.timeouts += first.timed_out or second.timed_out
            stats.float_excess += len(comparison.within_slack)
            stats.zcdp += case.zcdp
            if finding is not None:
                finding.programs_tried, finding.seconds = stats.programs, time.monotonic() - start
                if accept is None or accept(finding):
                    return finding
    finally:
        stats.seconds = time.monotonic() - start
    return None


def frame_of(case: ReplayCase, which: int) -> pd.DataFrame:
    """D (0) or D' (1) as a DataFrame (for tests and reports)."""
    return case.table(which).frame()
