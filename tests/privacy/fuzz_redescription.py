"""The redescription family (issue 25) under the replay check and in the fuzzers.

Three generators:

  * `miner_case(rng)` / `check_miner_case` / `fuzz_miner` (the family's own replay fuzzer, in
    Python): random tiny two-view DataFrames keyed by "id" (cells outside the declared domains,
    of other types, missing, in some rows), their public schemas, random settings of the three
    miners (valid and not), and a neighbour that removes one entity from BOTH views or adds one
    to both. The miner runs on D with a seeded `Randomness` and a `jostle.privacy.replay.Recorder`
    recording every noise point (the noisy counts of extractReds, each ExpMech level's
    exponential mechanism, each block of the exact samplers) with the claim it was calibrated
    to; then on D' PLAYING D's transcript. Every paired release's pre-noise values must move by
    at most its claim; when the whole transcript was played, what the run returned (the set's
    text and table, or the error and its message) and what it charged must be the same; one
    neighbour may not release while the other does not (an error that depends on the rows).
  * `redescription_statements(generator)` (neighbour_fuzz.py, family "redescription"): calls of
    `redescribe`, the redescription built-ins and the Options on ANY of a case's tables, private
    and public, declarations valid and not. The neighbour fuzzer's private tables are bound under
    the row unit, so a call on them must be refused before any charge, in the same words on both
    neighbours; on public tables the miner runs for free and must print the same on both.
  * `replay_redescription_call(generator)` (fuzz_replay.py, learner form "redescription"): the
    private miner on an entity-unit case, its two views taken from `t.bound_per_key(1)` (and,
    when the case has a database, `cars.bound_per_key(1)`), with every algorithm and setting, or
    one of the six built-in Options on a `redescription_task`; each noisy count and selection is
    a replay-recorded release checked against its claim.
"""

from __future__ import annotations

import random
import time
import traceback
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import pandas as pd

from jostle.privacy.replay import Comparison, Record, Recorder, compare

if TYPE_CHECKING:  # pragma: no cover
    from tests.privacy.neighbour_fuzz import Generator

KEY = "id"
CATEGORIES = ("p", "q", "r")
ODD_CELLS = ["zz", None, float("nan"), 1.5, True, "", " p", "P", "abc", float("inf"), -1e308, b"p"]
ALGORITHMS = ("AltExpM", "AltMCMC", "MCMCTreePair")
EPSILONS: list[Any] = [Fraction(1), Fraction(1, 2), 2, 0.3, Fraction(1, 3)]
BAD_EPSILONS: list[Any] = [0, -1, float("nan"), "a"]


# ---------------------------------------------------------------- the family's replay fuzzer
@dataclass(frozen=True)
class MinerCase:
    """Two views D (DataFrames keyed by KEY), their neighbour D', schemas and a miner's settings."""

    left: pd.DataFrame
    right: pd.DataFrame
    left_prime: pd.DataFrame
    right_prime: pd.DataFrame
    change: str
    schemas: tuple[Any, Any]
    settings: dict[str, Any]
    constraints: dict[str, Any]
    epsilon: Any
    seed: int
    initial: tuple[int, int] | None = None

    def frames(self, which: int) -> tuple[pd.DataFrame, pd.DataFrame]:
        return (self.left, self.right) if which == 0 else (self.left_prime, self.right_prime)

    def report(self) -> str:
        return (f"D' is D with {self.change}; settings {self.settings}, constraints {self.constraints}, "
                f"epsilon {self.epsilon!r}, initial {self.initial}, seed {self.seed}\n"
                f"--- left (D) ---\n{self.left}\n--- right (D) ---\n{self.right}\n"
                f"--- left (D') ---\n{self.left_prime}\n--- right (D') ---\n{self.right_prime}")


def _schema(rng: random.Random, name: str, prefix: str) -> Any:
    from jostle.learners.redescription.views import ViewSchema, categorical, equal_width, numeric

    attributes = []
    for index in range(rng.choice([1, 1, 2, 3])):
        column = f"{prefix}{index}"
        form = rng.choice(["categorical", "categorical", "equal", "edges"])
        if form == "categorical":
            attributes.append(categorical(column, CATEGORIES[:rng.choice([1, 2, 3])]))
        elif form == "equal":
            attributes.append(equal_width(column, 0.0, 10.0, rng.choice([1, 2, 3, 4])))
        else:
            attributes.append(numeric(column, [0.0, 2.5, 5.0, 10.0][:rng.choice([2, 3, 4])]))
    if all(len(a.values) == 0 and a.n_bins < 2 for a in attributes):  # a view needs a split candidate
        attributes.append(categorical(f"{prefix}{len(attributes)}", CATEGORIES[:2]))
    return ViewSchema(name, tuple(attributes))


def _cell(rng: random.Random, attribute: Any) -> Any:
    if rng.random() < 0.1:
        return rng.choice(ODD_CELLS)
    if attribute.kind == "categorical":
        return rng.choice(list(attribute.values) + ["other"] * (rng.random() < 0.1))
    return round(rng.uniform(-1.0, 11.0), 1)


def _rows(rng: random.Random, schema: Any, keys: list[Any]) -> list[dict[str, Any]]:
    return [{KEY: key, **{a.name: _cell(rng, a) for a in schema.attributes}} for key in keys]


def _frame(rows: list[dict[str, Any]], schema: Any) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=[KEY, *schema.names], dtype=object)


def miner_case(rng: random.Random) -> MinerCase:
    """A random case (module docstring)."""
    schemas = (_schema(rng, "left", "l"), _schema(rng, "right", "r"))
    keys = list(range(rng.choice([0, 1, 2, 3, 5, 8, 12])))
    left_keys, right_keys = rng.sample(keys, len(keys)), rng.sample(keys, len(keys))
    if keys and rng.random() < 0.2:  # an id in one view only: not an entity of the pair
        right_keys.remove(rng.choice(right_keys))
    left, right = _rows(rng, schemas[0], left_keys), _rows(rng, schemas[1], right_keys)
    shared = sorted(set(left_keys) & set(right_keys))
    if shared and rng.random() < 0.5:
        removed = rng.choice(shared)
        left_prime = [r for r in left if r[KEY] != removed]
        right_prime = [r for r in right if r[KEY] != removed]
        change = f"entity {removed} removed from both views"
    else:
        added = 100 + rng.randrange(5)
        left_prime, right_prime = list(left), list(right)
        left_prime.insert(rng.randint(0, len(left)), _rows(rng, schemas[0], [added])[0])
        right_prime.insert(rng.randint(0, len(right)), _rows(rng, schemas[1], [added])[0])
        change = f"entity {added} added to both views"
    algorithm = rng.choice(ALGORITHMS)
    settings: dict[str, Any] = {"algorithm": algorithm, "tries": rng.choice([1, 1, 2]),
                                "depth": rng.choice([1, 2, 2, 3])}
    if algorithm == "MCMCTreePair":
        settings["omega"] = rng.choice([Fraction(1, 10), Fraction(1, 2), 0.25])
    else:
        settings["alternations"] = rng.choice([1, 1, 2])
    if rng.random() < 0.05:
        settings[rng.choice(["depth", "tries", "omega", "alternations"])] = rng.choice([0, -1, 9, 1.5])
    constraints = {"min_support": rng.choice([0, 1, 3, 10]), "max_extensions": rng.choice([0, 1, 3]),
                   "min_jaccard": rng.choice([0.0, 0.1, 0.5]), "max_pvalue": rng.choice([0.01, 1.0])}
    epsilon = rng.choice(EPSILONS) if rng.random() < 0.95 else rng.choice(BAD_EPSILONS)
    initial = None
    if rng.random() < 0.3:
        view = rng.choice([0, 1])
        initial = (view, rng.randrange(len(schemas[view].attributes) + (rng.random() < 0.2)))
    return MinerCase(_frame(left, schemas[0]), _frame(right, schemas[1]), _frame(left_prime, schemas[0]),
                     _frame(right_prime, schemas[1]), change, schemas, settings, constraints, epsilon,
                     rng.randrange(1 << 30), initial)


class _Ledger:
    """The accountant the recorder watches: it notes every charge of the miner."""

    def __init__(self) -> None:
        self.charges: list[tuple[Fraction, str]] = []

    def charge(self, budget: Any, node: Any, mechanism: str, description: str, span: Any) -> None:
        self.charges.append((budget, description))


@dataclass
class MinerRun:
    """One run: how it ended (the set's text and table, or the error), its charges and noise points."""

    end: tuple
    charges: list[tuple[Fraction, str]]
    records: list[Record]
    diverged_at: int | None
    internal: str | None = None


def run_miner(case: MinerCase, which: int, play: list[Record] | None = None) -> MinerRun:
    """Run the case's miner on D (0, recording) or D' (1, playing `play`)."""
    from jostle.learners.redescription import algorithms, extract, views
    from jostle.privacy.noise import Randomness

    ledger, noise, recorder = _Ledger(), Randomness(case.seed), Recorder()
    recorder.attach(ledger, noise, play)
    internal = None
    try:
        data = views.encode_views(*case.frames(which), case.schemas, key=KEY)
        settings = algorithms.MinerSettings(**case.settings, constraints=extract.Constraints(**case.constraints))
        found = algorithms.mine(data, settings, case.epsilon, noise=noise, initial_attribute=case.initial,
                                charge=lambda e, d: ledger.charge(e, None, "redescription", d, None))
        end: tuple = ("ok", str(found), found.to_frame(include_pruned=True).to_csv())
    except ValueError as error:  # the family's refusals of bad arguments
        end = ("error", type(error).__name__, str(error))
    except Exception as error:  # noqa: BLE001 - anything else is a bug
        internal = "".join(traceback.format_exception(error))
        end = ("internal", type(error).__name__, str(error))
    finally:
        recorder.detach()
    return MinerRun(end, ledger.charges, recorder.records, recorder.diverged_at, internal)


@dataclass
class MinerFinding:
    """A claim broken, a transcript that differs although every release was played, or a crash."""

    case: MinerCase
    reason: str
    comparison: Comparison
    runs: tuple[MinerRun, MinerRun]

    def report(self) -> str:
        first, second = self.runs
        text = f"{self.reason}\n{self.comparison.report()}\n{self.case.report()}\n"
        text += f"--- end on D ---\n{first.end}\n--- end on D' ---\n{second.end}"
        for run in self.runs:
            if run.internal:
                text += f"\n--- internal error ---\n{run.internal}"
        return text


def check_miner_case(case: MinerCase) -> tuple[MinerFinding | None, Comparison, tuple[MinerRun, MinerRun]]:
    """Record on D, play on D'; check the claims and the transcript."""
    first = run_miner(case, 0)
    second = run_miner(case, 1, first.records)
    comparison = compare(first.records, second.records)
    reason = None
    if first.internal or second.internal:
        reason = "internal error (an exception that is not the family's ValueError)"
    elif comparison.violations:
        reason = "a release's pre-noise values moved by more than its claimed sensitivity"
    elif second.diverged_at is None and len(first.records) == len(second.records) \
            and (first.end, first.charges) != (second.end, second.charges):
        reason = "the runs returned or charged different things although every release was played"
    elif (not first.records) != (not second.records):
        reason = "one neighbour released and the other did not"
    return (MinerFinding(case, reason, comparison, (first, second)) if reason else None), comparison, (first, second)


@dataclass
class MinerStats:
    """What a run of the family's replay fuzzer did."""

    cases: int = 0
    releases: int = 0
    played: int = 0
    failed: int = 0
    points: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def __str__(self) -> str:
        points = ", ".join(f"{k} {v}" for k, v in sorted(self.points.items()))
        return (f"{self.cases} miner cases in {self.seconds:.1f} s: {self.releases} releases checked ({points}); "
                f"{self.played} transcripts played whole, {self.failed} refused")


def fuzz_miner(seconds: float, seed: int, stats: MinerStats | None = None, max_cases: int | None = None,
               accept: Any = None) -> MinerFinding | None:
    """Check random miner cases for `seconds` (or `max_cases`); the first finding `accept` takes."""
    stats = stats if stats is not None else MinerStats()
    rng = random.Random(seed)
    start = time.monotonic()
    try:
        while time.monotonic() - start < seconds and (max_cases is None or stats.cases < max_cases):
            case = miner_case(rng)
            finding, comparison, (first, second) = check_miner_case(case)
            stats.cases += 1
            stats.releases += comparison.checked
            for record in first.records[:comparison.checked]:
                stats.points[record.point] = stats.points.get(record.point, 0) + 1
            stats.played += second.diverged_at is None and len(first.records) == len(second.records)
            stats.failed += first.end[0] == "error"
            if finding is not None and (accept is None or accept(finding)):
                return finding
    finally:
        stats.seconds = time.monotonic() - start
    return None


# ---------------------------------------------------------------- the language fuzzers' calls
LANGUAGE_SETTINGS = ["", "", ', algorithm="AltExpM"', ', algorithm="AltMCMC"', ', algorithm="MCMCTreePair"',
                     ", depth=2", ", depth=1, tries=2", ", alternations=2", ", omega=0.1", ", min_support=0",
                     ", bins=3", ", depth=0", ', algorithm="chain"', ", omega=1", ", tries=-1", ", bins=0",
                     ", min_jaccard=2", ', key="nosuch"', ", initial_target=3", ", runs=4", ", max_extensions=1"]
EPSILON_TEXTS = ["1", "0.5", "2", "0", "-1", "1e6", '"a"']


def _lit(value: Any) -> str:
    from tests.privacy.neighbour_fuzz import _lit as literal

    return literal(value)


def redescription_statements(generator: Generator) -> list[str]:
    """A `redescribe` call on two of a case's tables (printed, listed, evaluated), or a task value."""
    private = generator.chance(0.5)
    left = generator.some_table(private)
    right = generator.some_table(private if generator.chance(0.85) else not private)
    shown = []
    for table in (left, right):
        columns = [c.name for c in generator.columns_of(table)]
        shown.append(generator.pick([table, table, f"{table}.bound_per_key(1)",
                                     f"select({table}, {_lit(generator.rng.sample(columns, min(len(columns), 2)))})"]))
    epsilon = f", epsilon={generator.pick(EPSILON_TEXTS)}" if generator.chance(0.9) else ""
    settings = generator.pick(LANGUAGE_SETTINGS)
    if generator.chance(0.15):
        column = generator.column_name(left)
        settings += generator.pick([f", edges={{{column}: [0, 5, 10]}}", f", edges={{{column}: [3]}}",
                                    ', edges={nosuch: [0, 1]}'])
    name = generator.fresh("R")
    if generator.chance(0.1):
        task = generator.fresh("task")
        return [f"{task} = redescription_task({settings.lstrip(', ')})", f"print({task})"]
    statements = [f"{name} = redescribe({shown[0]}, {shown[1]}{settings}{epsilon})", f"print({name})"]
    follow = generator.pick(["text", "list", "evaluate", "none"])
    if follow == "text":
        statements.append(f"print(redescription_text({name}, pruned=true))")
    elif follow == "list":
        statements.append(f"print(len(redescriptions({name})))")
    elif follow == "evaluate":
        publics = generator.table_names(False)
        if publics:
            tables = generator.rng.sample(publics, min(len(publics), 2))
            statements.append(f"print(evaluate_redescriptions({name}, {tables[0]}, {tables[-1]}))")
    return statements


REPLAY_SETTINGS = ["", ', algorithm="AltExpM", depth=2', ', algorithm="AltMCMC", depth=1', ", depth=2, tries=2",
                   ', algorithm="AltExpM", alternations=2, depth=1', ", omega=0.1, depth=1", ", min_support=0",
                   ', algorithm="AltMCMC", tries=2, depth=2, min_support=0', ", depth=3, bins=2",
                   ', algorithm="AltExpM", initial_target="grp", depth=2']
OPTION_RATE = 0.25          # calls of the family's built-in Options instead of redescribe(...)
OPTIONS = ["AltExpMNonRobust", "AltExpMStable", "AltMCMCNonRobust", "AltMCMCStable", "MCMCTreePair",
           "MCMCTreePairBalanced"]
TASKS = ["", "min_support=0", "bins=2, min_support=0", "runs=3", "min_support=2, max_extensions=1"]
#: What the views read of the replay fuzzer's entity-unit tables (the key and columns of public domains).
LEFT_COLUMNS = ["pid", "x", "grp"]
RIGHT_COLUMNS = ["pid", "label", "c2"]


def replay_redescription_call(generator: Any) -> str:
    """`redescribe(...)` on an entity-unit case's views (one row per entity), printed with the
    pruned ones: the set is post-processing of the recorded releases."""
    left = f"select(t.bound_per_key(1), {_lit(LEFT_COLUMNS)})"
    right = f"select(t.bound_per_key(1), {_lit(RIGHT_COLUMNS)})"
    if generator.database and generator.chance(0.5):
        right = 'select(cars.bound_per_key(1), ["pid", "load", "shape"])'
    if generator.chance(0.5):
        left, right = right, left
    name = generator.fresh("R")
    if generator.chance(OPTION_RATE):  # a built-in Option (its algorithm and settings fixed) on a task value
        task = generator.fresh("task")
        return (f"{task} = redescription_task({generator.pick(TASKS)})\n"
                f"{name} = {generator.pick(OPTIONS)}({left}, {right}, {task}, epsilon={generator.eps()})\n"
                f"print(redescription_text({name}, pruned=true))")
    return (f"{name} = redescribe({left}, {right}, epsilon={generator.eps()}{generator.pick(REPLAY_SETTINGS)})\n"
            f"print(redescription_text({name}, pruned=true))")


__all__ = ["MinerCase", "check_miner_case", "fuzz_miner", "miner_case", "redescription_statements",
           "replay_redescription_call", "run_miner"]
