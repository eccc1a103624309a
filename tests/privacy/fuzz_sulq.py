"""The SuLQ primitive and the SuLQ learners (issue 26) under the replay check and in the fuzzers.

Three generators:

  * `learner_case(rng)` / `check_learner_case` / `fuzz_learners` (the learners' own replay
    fuzzer, in Python): SuLQ k-means and the zCDP DPLloyd (jostle.learners.clustering.kmeans,
    rows coded against a random PUBLIC box by `ClusteringData.from_values`: rows at the box's
    corners, beyond it, NaN, +-inf, 1e308, text, None), SuLQ ID3 and the SuLQ perceptron
    (jostle.learners.sulq_classifiers: integer codes under public domain sizes), each given a rho
    or a variance R, and a neighbour that removes one row or adds one. The learner runs on D with
    a seeded `Randomness` and a `jostle.privacy.replay.Recorder` recording every batch
    (`sulq.sulq_release`'s noise point, "sulq", with its claim: L2 <= sqrt(touched) / grid in
    grid steps); then on D' PLAYING D's transcript. Every paired release's pre-noise sums must
    move by at most its claim; when the whole transcript was played, what the run returned (the
    model, or the error and its message) and every charge must be the same; one neighbour may
    not release while the other does not. Each charge goes through a guard (`option_guard`,
    sometimes capped below the fit's cost): a refused charge must leave the randomness as it
    was (nothing drawn after it), and a fit must charge each batch before drawing it.
  * `sulq_statements(generator)` (neighbour_fuzz.py, family "sulq"): the learners' language calls
    (`SuLQKMeans`, `DPLloyd*`, `SuLQID3`, `SuLQPerceptron`, with their model built-ins), `sulq(x,
    R)`, `gaussian(x, rho(R))` and the two calibrations, on ANY of a case's tables, declarations
    valid and not. The neighbour fuzzer's sessions account in pure epsilon, so every Gaussian
    call on a private table must be refused before any charge (the learners and `sulq` say so:
    zCDP programs only), in the same words on both neighbours, whatever the rows, and a call on
    a public table runs for free and must print the same on both.
  * `language_case(rng)` / `check_language_case` / `fuzz_language`: whole programs of those calls
    in a zCDP `Session` (`Session(rho=...)`) over a random private table (numeric columns with a
    declared box, a class column), under the replay check: recorded on D, D's transcript played
    on D'; every release ("sulq" batches, the language's "gaussian" points) within its claim,
    and the printed text, ledger and end the same when the whole transcript was played.
"""

from __future__ import annotations

import io
import random
import time
import traceback
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import pandas as pd

from jostle.privacy.replay import Comparison, Record, Recorder, _state, compare

if TYPE_CHECKING:  # pragma: no cover
    from tests.privacy.neighbour_fuzz import Generator

LEARNERS = ("SuLQKMeans", "DPLloyd", "SuLQID3", "SuLQPerceptron")
ODD_CELLS: list[Any] = [float("nan"), float("inf"), -float("inf"), 1e308, -1e308, None, "abc", "5", "", True]
RHOS: list[Any] = [Fraction(1, 10), Fraction(1, 2), 2, 0.3, Fraction(1, 3), 40]
VARIANCES: list[Any] = [1, 4, 50, 1000, 0.5, Fraction(7, 3)]
BAD_BUDGETS: list[dict[str, Any]] = [{"rho": 0}, {"rho": -1}, {"variance": 0}, {"rho": float("nan")},
                                     {"variance": float("inf")}, {}, {"rho": 1, "variance": 1}]


# ---------------------------------------------------------------- the learners' replay fuzzer
@dataclass(frozen=True)
class LearnerCase:
    """A learner, its public parameters and budget, and the rows of D and D'."""

    learner: str
    rows: tuple
    rows_prime: tuple
    change: str
    params: dict[str, Any]
    budget: dict[str, Any]
    cap_share: Fraction | None      # the guard's cap as a share of the fit's cost (None: its cost)
    seed: int

    def report(self) -> str:
        return (f"{self.learner}, D' is D with {self.change}; params {self.params}, budget {self.budget}, "
                f"cap share {self.cap_share}, seed {self.seed}\n--- D ---\n{list(self.rows)}\n"
                f"--- D' ---\n{list(self.rows_prime)}")


def _kmeans_cell(rng: random.Random, low: float, high: float) -> Any:
    draw = rng.random()
    if draw < 0.12:
        return rng.choice(ODD_CELLS)
    if draw < 0.3:
        return rng.choice([low, high])  # the box's faces and corners
    if draw < 0.4:
        return rng.choice([low - 1e6, high + 1e6, high * 3 + 1])  # beyond the box
    return round(rng.uniform(low, high), 3)


def _kmeans_row(rng: random.Random, box: Any) -> tuple:
    if rng.random() < 0.25:  # a corner: every coordinate at a bound
        return tuple(rng.choice([lo, hi]) for lo, hi in zip(box.lows, box.highs))
    return tuple(_kmeans_cell(rng, lo, hi) for lo, hi in zip(box.lows, box.highs))


def _class_row(rng: random.Random, sizes: list[int], classes: int) -> tuple:
    if rng.random() < 0.2:  # an extreme row: every attribute at its last code
        return (*[s - 1 for s in sizes], classes - 1)
    return (*[rng.randrange(s) for s in sizes], rng.randrange(classes))


def learner_case(rng: random.Random, learners: tuple[str, ...] = LEARNERS) -> LearnerCase:
    """A random case (module docstring) of one of `learners`."""
    from jostle.learners.clustering.data import Box

    learner = rng.choice(learners)
    params: dict[str, Any]
    if learner in ("SuLQKMeans", "DPLloyd"):
        d = rng.choice([1, 2, 3])
        lows = [rng.choice([0.0, -5.0, 100.0]) for _ in range(d)]
        box = Box(tuple(f"c{i}" for i in range(d)), tuple(lows), tuple(lo + rng.choice([1.0, 10.0, 0.5]) for lo in lows))
        k = rng.choice([1, 2, 3])
        params = {"box": box, "k": k, "iterations": rng.choice([1, 2, 3]), "seed": rng.randrange(5),
                  "reseeding": rng.random() < 0.3}
        if rng.random() < 0.3:
            params["initial"] = [[rng.uniform(lo, hi) for lo, hi in zip(box.lows, box.highs)] for _ in range(k)]
        make_row: Callable[[], tuple] = lambda: _kmeans_row(rng, box)  # noqa: E731
    else:
        sizes = [rng.choice([1, 2, 3, 4]) for _ in range(rng.choice([1, 2, 3]))]
        classes = rng.choice([2, 2, 3])
        params = {"sizes": sizes, "classes": classes}
        if learner == "SuLQID3":
            params.update(depth=rng.choice([1, 2, 3]), stop_factor=rng.choice([0.0, 1.0, 3.0]))
        else:
            params.update(iterations=rng.choice([1, 2, 4]))
        make_row = lambda: _class_row(rng, sizes, classes)  # noqa: E731
    rows = [make_row() for _ in range(rng.choice([0, 1, 2, 3, 5, 8, 20]))]
    if rows and rng.random() < 0.5:
        position = rng.randrange(len(rows))
        rows_prime = rows[:position] + rows[position + 1:]
        change = f"row {position} removed"
    else:
        position = rng.randint(0, len(rows))
        extra = make_row()
        rows_prime = rows[:position] + [extra] + rows[position:]
        change = f"row {extra} added at {position}"
    draw = rng.random()
    budget = ({"rho": rng.choice(RHOS)} if draw < 0.55 else {"variance": rng.choice(VARIANCES)} if draw < 0.95
              else rng.choice(BAD_BUDGETS))
    cap_share = rng.choice([Fraction(1, 2), Fraction(1, 3), Fraction(9, 10)]) if rng.random() < 0.15 else None
    if rng.random() < 0.5:
        rows, rows_prime = rows_prime, rows
        change = f"the inverse of: {change}"
    return LearnerCase(learner, tuple(rows), tuple(rows_prime), change, params, budget, cap_share,
                       rng.randrange(1 << 30))


class _Ledger:
    """The accountant the recorder watches: it notes every charge the guard let through."""

    def __init__(self) -> None:
        self.charges: list[tuple[Fraction, str]] = []

    def charge(self, budget: Any, node: Any, mechanism: str, description: str, span: Any) -> None:
        self.charges.append((budget.rho, description))


@dataclass
class LearnerRun:
    """One run: how it ended, its charges, its noise points, and the drawing discipline."""

    end: tuple
    charges: list[tuple[Fraction, str]]
    records: list[Record]
    diverged_at: int | None
    internal: str | None = None
    drew_after_refusal: bool = False
    uncharged_draws: int = 0


def _kmeans_fit(case: LearnerCase, rows: tuple, noise: Any, charge: Any) -> Any:
    from jostle.learners.clustering import kmeans
    from jostle.learners.clustering.data import ClusteringData

    p = case.params
    frame = pd.DataFrame(list(rows), columns=list(p["box"].columns), dtype=object) if rows else \
        pd.DataFrame({c: [] for c in p["box"].columns}, dtype=object)
    data = ClusteringData.from_values(frame, p["box"], p["k"], initial=p.get("initial"), seed=p["seed"])
    method = kmeans.SULQ if case.learner == "SuLQKMeans" else kmeans.DPLLOYD
    plan = kmeans.kmeans_plan(method, p["k"], p["box"].d, p["iterations"], **case.budget)
    model = kmeans.fit(data, plan, noise, charge(plan.rho), case.learner, reseeding=p["reseeding"])
    return plan.rho, f"{np.round(model.centres_scaled, 12).tolist()} {model.sizes.tolist()} T={model.queries}"


def _classifier_fit(case: LearnerCase, rows: tuple, noise: Any, charge: Any) -> Any:
    from jostle.learners.sulq_classifiers import id3, perceptron, queries

    p = case.params
    width = len(p["sizes"])
    array = np.asarray(rows, dtype=np.int64).reshape(-1, width + 1)
    X, y = array[:, :width], array[:, width]
    if case.learner == "SuLQID3":
        calibration = queries.calibrate(id3.batches(p["sizes"], p["classes"], p["depth"]), **case.budget)
        model = id3.fit_id3(X, y, p["sizes"], p["classes"], noise, charge(calibration.rho), depth=p["depth"],
                            stop_factor=p["stop_factor"], calibration=calibration)
    else:
        calibration = queries.calibrate(perceptron.batches(p["sizes"], p["classes"], p["iterations"]), **case.budget)
        model = perceptron.fit_perceptron(X, y, p["sizes"], p["classes"], noise, charge(calibration.rho),
                                          iterations=p["iterations"], calibration=calibration)
    return calibration.rho, f"{model!r} T={model.queries}"


def run_learner(case: LearnerCase, which: int, play: list[Record] | None = None) -> LearnerRun:
    """Run the case's learner on D (0, recording) or D' (1, playing `play`).

    The randomness is watched: each draw of a discrete Gaussian (one per batch) notes how many
    charges went through before it, and a refused charge notes the randomness' state (nothing
    may be drawn after it)."""
    from jostle.privacy.measures import RhoZCDPBudget
    from jostle.privacy.noise import Randomness
    from jostle.privacy.subledger import OverBudgetError, option_guard

    ledger, noise, recorder = _Ledger(), Randomness(case.seed), Recorder()
    refused_at: list[Any] = []
    charges_before_draw: list[int] = []
    draw = noise.discrete_gaussian

    def watched_draw(*args: Any, **kwargs: Any) -> Any:
        charges_before_draw.append(len(ledger.charges))
        return draw(*args, **kwargs)

    noise.discrete_gaussian = watched_draw  # on this instance only

    def charge(cost: Fraction) -> Callable[[Any, str], None]:
        cap = cost if case.cap_share is None else cost * case.cap_share
        guard = option_guard(case.learner, RhoZCDPBudget(cap)) if cap > 0 else None

        def charging(budget: Any, description: str) -> None:
            try:
                if guard is None:
                    raise OverBudgetError("nothing to spend")
                guard(budget, description)
            except OverBudgetError:
                refused_at.append(_state(noise))
                raise
            ledger.charge(budget, None, case.learner, description, None)  # through the recorder
        return charging

    recorder.attach(ledger, noise, play)
    internal = None
    try:
        fit = _kmeans_fit if case.learner in ("SuLQKMeans", "DPLloyd") else _classifier_fit
        rho, shown = fit(case, case.rows if which == 0 else case.rows_prime, noise, charge)
        end: tuple = ("ok", shown, str(rho))
    except (ValueError, OverBudgetError) as error:  # the learners' refusals
        end = ("error", type(error).__name__, str(error))
    except Exception as error:  # noqa: BLE001 - anything else is a bug
        internal = "".join(traceback.format_exception(error))
        end = ("internal", type(error).__name__, str(error))
    finally:
        recorder.detach()
    drew_after = bool(refused_at) and refused_at[0] != _state(noise)
    # the i-th draw (one per batch) must come after at least i charges: each batch is charged first
    uncharged = sum(1 for i, charges in enumerate(charges_before_draw) if charges < i + 1)
    return LearnerRun(end, ledger.charges, recorder.records, recorder.diverged_at, internal, drew_after, uncharged)


@dataclass
class LearnerFinding:
    """A claim broken, a transcript that differs although every release was played, a draw
    before its charge or after a refusal, or a crash."""

    case: LearnerCase
    reason: str
    comparison: Comparison
    runs: tuple[LearnerRun, LearnerRun]

    def report(self) -> str:
        first, second = self.runs
        text = f"{self.reason}\n{self.comparison.report()}\n{self.case.report()}\n"
        text += f"--- end on D ---\n{first.end}\n--- end on D' ---\n{second.end}"
        for run in self.runs:
            if run.internal:
                text += f"\n--- internal error ---\n{run.internal}"
        return text


def check_learner_case(case: LearnerCase) -> tuple[LearnerFinding | None, Comparison, tuple[LearnerRun, LearnerRun]]:
    """Record on D, play on D'; check the claims, the transcript and the drawing discipline."""
    first = run_learner(case, 0)
    second = run_learner(case, 1, first.records)
    comparison = compare(first.records, second.records)
    played_whole = second.diverged_at is None and len(first.records) == len(second.records)
    reason = None
    if first.internal or second.internal:
        reason = "internal error (an exception that is not a learner's refusal)"
    elif comparison.violations:
        reason = "a release's pre-noise values moved by more than its claimed sensitivity"
    elif first.drew_after_refusal or second.drew_after_refusal:
        reason = "the randomness was drawn after a refused charge"
    elif first.uncharged_draws or second.uncharged_draws:
        reason = "a batch was drawn before its charge"
    elif played_whole and (first.end, first.charges) != (second.end, second.charges):
        reason = "the runs returned or charged different things although every release was played"
    elif (not first.records) != (not second.records):
        reason = "one neighbour released and the other did not"
    finding = LearnerFinding(case, reason, comparison, (first, second)) if reason else None
    return finding, comparison, (first, second)


@dataclass
class LearnerStats:
    """What a run of the learners' replay fuzzer did."""

    cases: int = 0
    releases: int = 0
    played: int = 0
    refused: int = 0
    by_learner: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def __str__(self) -> str:
        learners = ", ".join(f"{k} {v}" for k, v in sorted(self.by_learner.items()))
        return (f"{self.cases} learner cases in {self.seconds:.1f} s ({learners}): {self.releases} releases checked, "
                f"{self.played} transcripts played whole, {self.refused} refused")


def fuzz_learners(seconds: float, seed: int, stats: LearnerStats | None = None, max_cases: int | None = None,
                  accept: Any = None, make: Callable[[random.Random], LearnerCase] = learner_case
                  ) -> LearnerFinding | None:
    """Check random learner cases for `seconds` (or `max_cases`); the first finding `accept` takes."""
    stats = stats if stats is not None else LearnerStats()
    rng = random.Random(seed)
    start = time.monotonic()
    try:
        while time.monotonic() - start < seconds and (max_cases is None or stats.cases < max_cases):
            case = make(rng)
            finding, comparison, (first, second) = check_learner_case(case)
            stats.cases += 1
            stats.releases += comparison.checked
            if comparison.checked:
                stats.by_learner[case.learner] = stats.by_learner.get(case.learner, 0) + comparison.checked
            stats.played += second.diverged_at is None and len(first.records) == len(second.records)
            stats.refused += first.end[0] == "error"
            if finding is not None and (accept is None or accept(finding)):
                return finding
    finally:
        stats.seconds = time.monotonic() - start
    return None


# ---------------------------------------------------------------- the neighbour fuzzer's calls
KMEANS_LEARNERS = ["SuLQKMeans", "DPLloyd", "DPLloyd2", "DPLloyd10", "DPLloydReseed"]
CLASSIFIERS = ["SuLQID3", "SuLQPerceptron"]
BUDGET_TEXTS = ["rho=0.1", "rho=0.5", "rho=2", "variance=50", "variance=2", "rho=1e6"]
BAD_BUDGET_TEXTS = ["", "epsilon=1", "rho=0", "variance=-1", "rho=0.1, variance=10", 'rho="a"']
VARIANCE_TEXTS = ["2", "50", "0.5", "sulq_variance(10, 1, 1e-6)", "zcdp_variance(10, 1, 1e-6)"]
BAD_VARIANCE_TEXTS = ["0", "-1", '"a"']
CALIBRATION_TEXTS = ["sulq_variance(100, 1, 1e-6)", "zcdp_variance(100, 1, 1e-6)", 'zcdp_variance(10, 1, 1e-6, "cks")']
BAD_CALIBRATION_TEXTS = ["sulq_variance(0, 1, 1e-6)", "zcdp_variance(10, 1, 2)", 'zcdp_variance(10, 1, 1e-6, "nosuch")']
BAD_RATE = 0.1  # how often an argument is drawn from the invalid ones (each must be refused alike)


def _lit(value: Any) -> str:
    from tests.privacy.neighbour_fuzz import _lit as literal

    return literal(value)


def _maybe_bad(generator: Generator, good: list[str], bad: list[str]) -> str:
    return generator.pick(bad if generator.chance(BAD_RATE) else good)


def _bounds(generator: Generator, columns: list[Any]) -> str:
    parts = []
    for column in columns:
        if column.numeric and not generator.chance(BAD_RATE):
            parts.append(f"{column.name}: [{_lit(column.lo)}, {_lit(column.hi)}]")
        else:
            parts.append(f"{column.name}: {generator.pick(['[0, 1]', '[5, 5]', '[1, 0]', '[0, 1e400]', '3'])}")
    return "{" + ", ".join(parts) + "}"


def _kmeans_call(generator: Generator, table: str, shown: str, name: str) -> list[str]:
    numeric = [c for c in generator.columns_of(table) if c.numeric]
    pool = numeric if numeric and generator.chance(0.85) else generator.columns_of(table)
    columns = generator.rng.sample(pool, min(len(pool), generator.pick([1, 1, 2, 3])))
    names = [c.name for c in columns] if generator.chance(0.97) else ["nosuch"]
    keywords = [f"k={_maybe_bad(generator, ['1', '2', '3'], ['0', '2.5'])}"]
    if generator.chance(0.95):
        keywords.append(f"bounds={_bounds(generator, columns)}")
    if generator.chance(0.3):
        keywords.append(f"iterations={_maybe_bad(generator, ['1', '2', '3'], ['0', '2000'])}")
    if generator.chance(0.2):
        keywords.append(f"seed={_maybe_bad(generator, ['0', '3'], ['-1'])}")
    budget = _maybe_bad(generator, BUDGET_TEXTS, BAD_BUDGET_TEXTS)
    if budget:
        keywords.append(budget)
    statements = [f"{name} = {generator.pick(KMEANS_LEARNERS)}({shown}, {_lit(names)}, {', '.join(keywords)})",
                  f"print({name})"]
    publics = generator.table_names(False)
    follow = generator.pick(["centres", "queries", "assign", "error", "none"])
    if follow == "centres":
        statements.append(f"print(centres({name}))")
    elif follow == "queries":
        statements.append(f"print(kmeans_queries({name}))")
    elif follow in ("assign", "error") and publics:
        built_in = "assign" if follow == "assign" else "kmeans_error"
        statements.append(f"print({built_in}({name}, {generator.pick(publics)}))")
    return statements


def _classifier_call(generator: Generator, table: str, shown: str, name: str) -> list[str]:
    categorical = [c.name for c in generator.columns_of(table, ("text", "code", "mixed"))]
    target = generator.pick(categorical) if categorical and generator.chance(0.85) else generator.column_name(table)
    learner = generator.pick(CLASSIFIERS)
    good = {"SuLQID3": ["", "", ", depth=1", ", depth=3", ", stop_factor=0"], "SuLQPerceptron": ["", ", iterations=2"]}
    extra = _maybe_bad(generator, good[learner], [", depth=-1", ", iterations=0", ", nosuch=1"])
    budget = _maybe_bad(generator, BUDGET_TEXTS, BAD_BUDGET_TEXTS)
    if categorical and target in categorical and shown == table and generator.chance(0.8):  # the learners' domains
        shown = f"select({table}, {_lit(categorical)})"
    return [f'{name} = {learner}({shown}, "{target}"{extra}{", " + budget if budget else ""})', f"print({name})"]


def _release_call(generator: Generator, table: str) -> list[str]:
    numeric = [c.name for c in generator.columns_of(table) if c.numeric]
    values = [f"count({table})"] + [f'sum({table}, "{c}")' for c in numeric] + \
        [f'mean({table}, "{c}")' for c in numeric[:1]]
    value = generator.pick(values)
    if generator.chance(0.25):
        return [f"print(gaussian({value}, rho({generator.pick(['0.1', '0.5', '0', '-1'])})))"]
    return [f"print(sulq({value}, {_maybe_bad(generator, VARIANCE_TEXTS, BAD_VARIANCE_TEXTS)}))"]


def sulq_statements(generator: Generator) -> list[str]:
    """A SuLQ learner call (printed, its model used), a `sulq` / `gaussian` release, or a calibration."""
    table = generator.some_table(generator.chance(0.7))
    form = generator.pick(["kmeans", "kmeans", "classifier", "release", "calibration"])
    name = generator.fresh("M")
    if form == "calibration":
        return [f"print({_maybe_bad(generator, CALIBRATION_TEXTS, BAD_CALIBRATION_TEXTS)})"]
    if form == "release":
        return _release_call(generator, table)
    shown = table if generator.chance(0.9) else generator.pick([f"{table}.bound_per_key(1)",
                                                                f"{table}.where(lambda r: true)"])
    if form == "kmeans":
        return _kmeans_call(generator, table, shown, name)
    return _classifier_call(generator, table, shown, name)


# ---------------------------------------------------------------- whole programs in a zCDP session
LANGUAGE_SCHEMA = {"x": ("numeric", 0, 10), "y": ("numeric", -5, 5), "label": ("categorical", ["a", "b", "c"]),
                   "grp": ("categorical", ["u", "v"])}
LANGUAGE_DECLARATION = ('private t: {x: numeric(0, 10), y: numeric(-5, 5), label: categorical(["a", "b", "c"]), '
                        'grp: categorical(["u", "v"])}')
LANGUAGE_RHO = 50
BOUNDS_TEXT = "{x: [0, 10], y: [-5, 5]}"
PROGRAM_FORMS = [
    'M = SuLQKMeans(t, ["x", "y"], k=2, bounds=BOUNDS, iterations=ITER, rho=RHO)\nprint(M)\nprint(centres(M))',
    'M = DPLloyd(t, ["x", "y"], k=KK, bounds=BOUNDS, iterations=ITER, rho=RHO)\nprint(M)',
    'M = DPLloyd2(t, ["x"], k=KK, bounds={x: [0, 10]}, variance=VAR)\nprint(M)\nprint(kmeans_queries(M))',
    'M = DPLloydReseed(t, ["x", "y"], k=3, bounds=BOUNDS, iterations=ITER, rho=RHO)\nprint(centres(M))',
    'M = SuLQKMeans(t, ["x", "y"], k=KK, bounds=BOUNDS, reseed=true, rho=RHO)\nprint(M)',
    'M = SuLQKMeans(t, ["y"], k=KK, bounds={y: [-5, 5]}, variance=VAR)\nprint(M)',
    'M = SuLQID3(select(t, ["grp", "label"]), "label", depth=2, rho=RHO)\nprint(M)',
    'M = SuLQPerceptron(select(t, ["grp", "label"]), "label", iterations=ITER, rho=RHO)\nprint(M)',
    'M = SuLQID3(t.bin("x", [0, 5, 10], name="xb").select(["xb", "grp", "label"]), "label", variance=VAR)\nprint(M)',
    'print(sulq(sum(t, "x"), VAR))\nprint(sulq(count(t), VAR))',
    'print(gaussian(sum(t, "y"), rho(RHO)))\nprint(sulq(count(t.where(lambda r: r.grp == "u")), VAR))',
    'print(sulq(histogram(t, "label"), VAR))\nprint(sulq(sum(t.where(lambda r: r.x > 5), "y"), VAR))',
    'M = DPLloyd(t, ["x", "y"], k=KK, iterations=ITER, rho=RHO)\nprint(M)',  # the schema's bounds
    'M = SuLQID3(t.bin("y", [-5, 0, 2.5, 5], name="yb").select(["yb", "grp", "label"]), "label", depth=3, '
    'stop_factor=0, rho=RHO)\nprint(M)',
    'M = SuLQPerceptron(t.bin("x", [0, 5, 10], name="xb").select(["xb", "label"]), "label", rho=RHO)\nprint(M)',
]


@dataclass(frozen=True)
class LanguageCase:
    """A program and the private rows of D and D'."""

    program: str
    rows: tuple
    rows_prime: tuple
    change: str
    seed: int

    def frame(self, which: int) -> pd.DataFrame:
        rows = self.rows if which == 0 else self.rows_prime
        return pd.DataFrame(list(rows), columns=list(LANGUAGE_SCHEMA), dtype=object)

    def report(self) -> str:
        return (f"D' is D with {self.change}; seed {self.seed}\n--- program ---\n{self.program}\n"
                f"--- D ---\n{self.frame(0)}\n--- D' ---\n{self.frame(1)}")


def _language_row(rng: random.Random) -> tuple:
    def number(low: float, high: float) -> Any:
        draw = rng.random()
        if draw < 0.1:
            return rng.choice([float("nan"), None, 1e308, -1e308, low - 100, high + 100])
        if draw < 0.35:
            return rng.choice([low, high])
        return round(rng.uniform(low, high), 2)
    return (number(0, 10), number(-5, 5), rng.choice(["a", "b", "c"]), rng.choice(["u", "v"]))


def language_case(rng: random.Random) -> LanguageCase:
    """A random program of one to three forms over random neighbouring rows."""
    chunks = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        chunks.append(rng.choice(PROGRAM_FORMS).replace("BOUNDS", BOUNDS_TEXT)
                      .replace("ITER", rng.choice(["1", "2", "3"])).replace("RHO", rng.choice(["0.1", "0.5", "2"]))
                      .replace("VAR", rng.choice(["2", "50", "400"])).replace("KK", rng.choice(["1", "2", "3"])))
    rows = [_language_row(rng) for _ in range(rng.choice([0, 1, 3, 6, 12]))]
    if rows and rng.random() < 0.5:
        position = rng.randrange(len(rows))
        rows_prime, change = rows[:position] + rows[position + 1:], f"row {position} removed"
    else:
        position = rng.randint(0, len(rows))
        extra = _language_row(rng)
        rows_prime, change = rows[:position] + [extra] + rows[position:], f"row {extra} added at {position}"
    if rng.random() < 0.5:  # declared by the program: rows that break it are dropped, silently
        chunks.insert(0, LANGUAGE_DECLARATION)
    return LanguageCase("\n".join(chunks) + "\n", tuple(rows), tuple(rows_prime), change, rng.randrange(1 << 30))


# ---------------------------------------------------------------- a Session program under replay (shared)
@dataclass
class ProgramRun:
    """One run of a program in a `Session`: how it ended, what it printed, charged and released,
    its noise points, and whether the randomness was left untouched."""

    end: tuple
    printed: str
    ledger: str
    costs: list[Any]
    released: tuple[str, ...]
    records: list[Record]
    diverged_at: int | None
    untouched: bool
    internal: str | None = None


def run_program(session: Any, output: io.StringIO, program: str, play: list[Record] | None = None,
                results: tuple[str, ...] = ()) -> ProgramRun:
    """Run `program` in `session` (which prints to `output`) under a replay recorder (playing
    `play`, if given); `results` names the globals whose tables are compared as CSV."""
    from jostle.diagnostics.errors import JostleError

    state = session.randomness._generator.bit_generator.state
    recorder = Recorder()
    internal = None
    with recorder.watching(session, play):
        try:
            session.run(program)
            end: tuple = ("ok",)
        except JostleError as error:
            end = ("error", type(error).__name__, error.render())
        except Exception as error:  # noqa: BLE001 - a bug
            internal = "".join(traceback.format_exception(error))
            end = ("internal", type(error).__name__, str(error))
    released = []
    for name in results:
        try:
            released.append(session.eval(name).to_csv(index=False))
        except Exception:  # noqa: BLE001 - not bound: the program ended before it
            released.append("(not bound)")
    untouched = state == session.randomness._generator.bit_generator.state
    return ProgramRun(end, output.getvalue(), str(session.ledger), [entry.cost for entry in session.ledger], tuple(released), recorder.records,
                      recorder.diverged_at, untouched, internal)


def compare_runs(first: ProgramRun, second: ProgramRun) -> tuple[str | None, Comparison]:
    """The reason of a finding (None: none) for a run on D and the run on D' that played it."""
    comparison = compare(first.records, second.records)
    played_whole = second.diverged_at is None and len(first.records) == len(second.records)
    reason = None
    if first.internal or second.internal:
        reason = "internal error"
    elif comparison.violations:
        reason = "a release's pre-noise values moved by more than its claim"
    elif played_whole and (first.end, first.printed, first.ledger, first.released) != \
            (second.end, second.printed, second.ledger, second.released):
        reason = "the runs printed, charged, released or ended differently although every release was played"
    elif any(run.end[0] == "error" and not run.records and not run.untouched for run in (first, second)):
        reason = "a refused program drew from the randomness"
    return reason, comparison


@dataclass
class ProgramStats:
    """What a run of a program replay fuzzer did."""

    programs: int = 0
    releases: int = 0
    played: int = 0
    refused: int = 0
    points: dict[str, int] = field(default_factory=dict)
    mechanisms: dict[str, int] = field(default_factory=dict)
    refusals: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def __str__(self) -> str:
        return (f"{self.programs} programs in {self.seconds:.1f} s: {self.releases} releases checked "
                f"({self.points}); {self.played} transcripts played whole; {self.refused} refused ({self.refusals}); "
                f"charges {self.mechanisms}")


def fuzz_programs(seconds: float, seed: int, make: Callable[[random.Random], Any],
                  check: Callable[[Any], tuple[str | None, Comparison, tuple[ProgramRun, ProgramRun]]],
                  stats: ProgramStats | None = None, min_programs: int = 0) -> str | None:
    """Check cases `make(rng)` with `check` for `seconds`, and on until `min_programs` cases were
    checked (a loaded machine still checks that many, the same ones from the seed); the first
    finding's report (None: none)."""
    stats = stats if stats is not None else ProgramStats()
    rng = random.Random(seed)
    start = time.monotonic()
    try:
        while time.monotonic() - start < seconds or stats.programs < min_programs:
            case = make(rng)
            reason, comparison, (first, second) = check(case)
            stats.programs += 1
            stats.releases += comparison.checked
            stats.played += second.diverged_at is None and len(first.records) == len(second.records)
            if first.end[0] == "error":
                stats.refused += 1
                stats.refusals[first.end[1]] = stats.refusals.get(first.end[1], 0) + 1
            for record in first.records[:comparison.checked]:
                stats.points[record.point] = stats.points.get(record.point, 0) + 1
                mechanism = record.release.split(":")[0]
                stats.mechanisms[mechanism] = stats.mechanisms.get(mechanism, 0) + 1
            if reason is not None:
                runs = "".join(f"\n--- on {side} ---\n{run.end}\n{run.printed}\n{run.ledger}\n{run.released}"
                               + (f"\n{run.internal}" if run.internal else "")
                               for side, run in (("D", first), ("D'", second)))
                return f"{reason}\n{comparison.report()}\n{case.report()}{runs}"
    finally:
        stats.seconds = time.monotonic() - start
    return None


# ---------------------------------------------------------------- the zCDP programs' fuzzer
def run_language(case: LanguageCase, which: int, play: list[Record] | None = None,
                 engine: str = "pandas") -> ProgramRun:
    """Run the program on D (0, recording) or D' (1, playing `play`) in a zCDP session, the
    private table on `engine` ("pandas" or "duckdb")."""
    from jostle import Session

    output = io.StringIO()
    session = Session(rho=LANGUAGE_RHO, seed=case.seed, ledger_path=":memory:", output=output, engine=engine,
                      dry_run=False)  # the real run is audited; the dry run reads no data
    declared = case.program.startswith("private t:")
    frame = case.frame(which)
    if not declared:  # the curator's schema refuses a missing value: the curator's rows have none then
        frame = frame.map(lambda v: 0 if v is None or (isinstance(v, float) and v != v) else v)
    session.bind_private("t", frame, None if declared else LANGUAGE_SCHEMA)
    return run_program(session, output, case.program, play)


def check_language_case(case: LanguageCase, engine: str = "pandas"
                        ) -> tuple[str | None, Comparison, tuple[ProgramRun, ProgramRun]]:
    """Record on D, play on D'; the reason of a finding (None: none)."""
    first = run_language(case, 0, engine=engine)
    second = run_language(case, 1, first.records, engine)
    reason, comparison = compare_runs(first, second)
    return reason, comparison, (first, second)


def fuzz_language(seconds: float, seed: int, stats: ProgramStats | None = None, engine: str = "pandas") -> str | None:
    """Check random zCDP programs for `seconds`; the first finding's report (None: none)."""
    return fuzz_programs(seconds, seed, language_case, lambda case: check_language_case(case, engine), stats)


__all__ = ["LearnerCase", "LearnerStats", "ProgramRun", "ProgramStats", "check_learner_case", "fuzz_learners", "learner_case", "run_learner", "sulq_statements",
           "language_case", "check_language_case", "fuzz_language", "run_program", "compare_runs", "fuzz_programs"]
