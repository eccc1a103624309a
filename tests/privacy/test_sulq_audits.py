"""Privacy audits of the SuLQ primitive, the language's Gaussian paths and the SuLQ learners
(issue 26; tests/privacy/sulq_cases.py), with the contract of test_audits.py: no case may show a
lower bound on its realised epsilon above its claim (the CKS conversion of the rho it charged, at
delta 1e-3), the power floors must be reached, and the mis-calibrated controls must be caught.
Then what the audits rest on (the neighbours, the privacy-loss statistic, the controls' devices);
the rho charged (the plan's, to the accountant, before the draw; nothing when refused, alike on
neighbours); the replay check of every release of every learner (tests/privacy/fuzz_sulq.py),
of whole zCDP programs, and of the language calls in the neighbour fuzzer; and the controls
the replay check must catch: touched understated, a coordinate left unclipped, a draw before
its charge.
"""

from __future__ import annotations

import io
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest

from jostle.audit import AuditCase
from jostle.learners.clustering import data as clustering_data
from jostle.learners.clustering import kmeans
from jostle.privacy import sulq
from jostle.privacy.noise import Randomness
from jostle.privacy.replay import Recorder, compare
from tests.privacy import sulq_cases as cases
from tests.privacy.sulq_cases import SULQ_CASES, SULQ_NEGATIVE_CONTROLS


# ---------------------------------------------------------------- the audits
@pytest.mark.parametrize("case", SULQ_CASES, ids=[c.name for c in SULQ_CASES])
def test_sulq_component_respects_its_claimed_epsilon(case: AuditCase, audit_scale: float) -> None:
    result = case.audit(audit_scale)
    print(f"{case.name}: {result}")
    assert not result.violated, f"{case.name}: {result}"
    if case.at_least is not None:
        assert result.epsilon_lower_bound >= case.at_least, f"{case.name}: the audit lost its power: {result}"


@pytest.mark.parametrize("case", SULQ_NEGATIVE_CONTROLS, ids=[c.name for c in SULQ_NEGATIVE_CONTROLS])
def test_sulq_miscalibrated_component_is_caught(case: AuditCase, audit_scale: float) -> None:
    assert case.expect_violation
    result = case.audit(audit_scale)
    print(f"{case.name}: {result}")
    assert result.violated, f"{case.name}: a mis-calibrated mechanism passed the audit: {result}"


def test_sulq_controls_use_the_sample_sizes_of_passing_cases() -> None:
    assert {c.samples for c in SULQ_NEGATIVE_CONTROLS} <= {c.samples for c in SULQ_CASES}


# ---------------------------------------------------------------- what the audits rest on
def test_the_kmeans_neighbours_differ_by_one_row_at_the_corner() -> None:
    for d, d_prime in ((cases.KMEANS_D, cases.KMEANS_D_PRIME), (cases.MEAN_D, cases.MEAN_D_PRIME)):
        assert np.array_equal(d_prime.units[:-1], d.units)
        assert d_prime.units[-1].tolist() == [clustering_data.SCALE] * 2
        assert d.k == d_prime.k and np.array_equal(d.initial, d_prime.initial)


@pytest.mark.parametrize("method, k", [(kmeans.DPLLOYD, 2), (kmeans.SULQ, 2), (kmeans.SULQ, 1)])
def test_the_corner_row_realises_the_whole_l2_move_and_the_loss_is_calibrated(method: str, k: int) -> None:
    """At any public centres the corner row moves its cluster's size and both sums by exactly 1:
    the L2 move sqrt(d + 1) DPLloyd's claim allows. The loss statistic of a batch released at D's
    exact sums is then Delta^2 / (2 sigma^2): exactly the batch's rho for DPLloyd (and for SuLQ at
    k = 1), rho / k for SuLQ's count; at D''s sums, minus it."""
    d, d_prime = (cases.KMEANS_D, cases.KMEANS_D_PRIME) if k == 2 else (cases.MEAN_D, cases.MEAN_D_PRIME)
    plan = cases.honest_plan(method, k)()
    for centres in (d.initial, np.array([[0.5, 0.5], [0.9, 0.1]])[:k]):
        on_d, on_d_prime = cases.exact_sums(d, centres), cases.exact_sums(d_prime, centres)
        moved = on_d_prime - on_d
        assert np.count_nonzero(moved) == 3 and set(moved.tolist()) <= {0.0, 1.0}
        batch = cases.Batch(centres, on_d, plan.batch, on_d.copy())
        expected = float(plan.batch.rho) / (k if method == kmeans.SULQ else 1)
        assert cases.batch_loss(batch, on_d, on_d_prime) == pytest.approx(expected, rel=1e-12)
        at_d_prime = cases.Batch(centres, on_d, plan.batch, on_d_prime.copy())
        assert cases.batch_loss(at_d_prime, on_d, on_d_prime) == pytest.approx(-expected, rel=1e-12)
    if method == kmeans.DPLLOYD:  # the claim: sqrt(d + 1) / g rounded up (to 2^-20), the corner row's move
        assert 3 * 2**24 <= plan.batch.shift_bound ** 2 < (math.sqrt(3 * 2**24) + Fraction(1, 2**20)) ** 2


def test_a_release_the_audit_cannot_identify_fails_the_run() -> None:
    plan = cases.honest_plan(kmeans.DPLLOYD, 2)()
    centres = cases.KMEANS_D.initial
    wrong = cases.Batch(centres, cases.exact_sums(cases.KMEANS_D, centres) + 1, plan.batch, np.zeros(6))
    with pytest.raises(AssertionError, match="cannot identify"):
        cases.transcript_loss([wrong], cases.KMEANS_D, cases.KMEANS_D_PRIME, True)


def test_the_kmeans_runner_sees_every_batch_and_the_adaptive_centres() -> None:
    """Two iterations: two batches, the second asked at the centres the first made public."""
    batches: list[cases.Batch] = []
    plan = cases.honest_plan(kmeans.DPLLOYD, 2)()
    with cases.recorded_batches(batches):
        model = kmeans.fit(cases.KMEANS_D, plan, Randomness(3), lambda cost, description: None)
    assert len(batches) == cases.KMEANS_ITERATIONS
    assert np.array_equal(batches[0].centres, cases.KMEANS_D.initial)
    first = batches[0].output
    expected = np.clip(first[2:].reshape(2, 2) / np.maximum(first[:2], 1.0)[:, None], 0.0, 1.0)
    assert np.array_equal(batches[1].centres, expected)
    assert model.queries == plan.queries == 2 * 2 * 3


@pytest.mark.parametrize("run_on_d", [True, False])
def test_the_loss_by_replay_equals_the_loss_recomputed_from_the_centres(run_on_d: bool) -> None:
    """The classifiers' device (the neighbour plays the transcript and records its own sums) gives
    the same loss as the k-means device (sums recomputed at the captured centres), run by run."""
    plan = cases.honest_plan(kmeans.DPLLOYD, 2)()
    learn = lambda data, noise, charge: kmeans.fit(data, plan, noise, charge)  # noqa: E731
    d, d_prime = cases.KMEANS_D, cases.KMEANS_D_PRIME
    data, other = (d, d_prime) if run_on_d else (d_prime, d)
    for seed in range(5):
        batches: list[cases.Batch] = []
        with cases.recorded_batches(batches):
            kmeans.fit(data, plan, Randomness(seed), lambda cost, description: None)
        direct = cases.transcript_loss(batches, d, d_prime, run_on_d)
        assert cases.replayed_loss(learn, data, other, run_on_d, seed) == pytest.approx(direct, rel=1e-9, abs=1e-12)


def test_the_tenth_of_t_control_charges_the_honest_rho_and_draws_a_tenth_of_the_variance() -> None:
    honest = cases.honest_plan(kmeans.DPLLOYD, 2)()
    wrong = cases.tenth_of_t_plan(kmeans.DPLLOYD, 2)()
    assert wrong.rho == honest.rho and wrong.batch.budget == honest.batch.budget
    assert wrong.batch.variance == honest.batch.variance / 10
    assert sulq.sulq_plan(wrong.batch.variance, wrong.batch.queries, wrong.batch.touched).rho > 9 * honest.batch.rho


# ---------------------------------------------------------------- the primitive: its charge and its claim
@pytest.mark.parametrize("queries, touched, integer_valued", [(1, 1, True), (1, 1, False), (6, 3, False),
                                                              (6, None, False), (40, 7, True)])
def test_the_primitive_charges_exactly_its_plans_rho(queries: int, touched: int | None, integer_valued: bool) -> None:
    """rho = touched / (2 g^2 sigma^2), sigma^2 >= R / g^2 (the noise is at least R), and
    `variance_for_rho` gives the smallest R whose batch fits a rho."""
    plan = sulq.sulq_plan(Fraction(7, 2), queries, touched, integer_valued)
    count = queries if touched is None else touched
    assert plan.rho == Fraction(count) / (plan.grid ** 2 * 2 * plan.sigma2)
    assert plan.sigma2 * plan.grid ** 2 >= Fraction(7, 2)
    assert plan.rho <= Fraction(count, 7)
    for rho in (Fraction(1, 10), Fraction(3), Fraction(1, 1000)):
        variance = sulq.variance_for_rho(rho, queries, touched, integer_valued)
        assert sulq.sulq_plan(variance, queries, touched, integer_valued).rho <= rho


def _record_primitive(sums: list[float], plan: sulq.SulqPlan, play: Any = None) -> list[Any]:
    class Ledger:
        def charge(self, budget: Any, node: Any, mechanism: str, description: str, span: Any) -> None:
            pass

    ledger, noise, recorder = Ledger(), Randomness(11), Recorder()
    recorder.attach(ledger, noise, play)
    try:
        ledger.charge(plan.budget, None, "sulq", "a batch", None)
        sulq.sulq_release(noise, sums, plan)
    finally:
        recorder.detach()
    return recorder.records


@pytest.mark.parametrize("integer_valued", [False, True])
def test_the_primitives_replay_claim_holds_on_neighbours_and_is_tight(integer_valued: bool) -> None:
    """A batch of 6 of which one row touches 3: the row at the corner (each touched sum moves by
    1) is within the claim (L2 <= sqrt(3) / g); a fourth sum moved, or one moved by 2 (a value
    outside [0, 1]: the row was not clipped), breaks it, on the integer grid of counts too."""
    plan = sulq.sulq_plan(Fraction(5), 6, 3, integer_valued)
    base = [3.0, 2.0, 5.0, 0.0, 1.0, 4.0]
    first = _record_primitive(base, plan)
    for moved, broken in (([4.0, 3.0, 6.0, 0.0, 1.0, 4.0], False), ([4.0, 3.0, 6.0, 1.0, 1.0, 4.0], True),
                          ([5.0, 2.0, 5.0, 0.0, 1.0, 4.0], True)):
        comparison = compare(first, _record_primitive(moved, plan, first))
        assert comparison.checked == 1 and bool(comparison.violations) == broken, comparison.report()


@pytest.mark.parametrize("integer_valued", [False, True])
@pytest.mark.parametrize("touched", [1, 2, 3, 5, 7, 26])
def test_the_claim_rounds_sqrt_touched_up_by_little(touched: int, integer_valued: bool) -> None:
    """The claim's bound is sqrt(touched) / g rounded up to 2^-20 of a grid step, so the replay
    check is as tight as the charge (on the integer grid of counts too, since F4's fix)."""
    plan = sulq.sulq_plan(Fraction(5), 30, touched, integer_valued)
    squared = Fraction(touched) / plan.grid ** 2
    assert squared <= plan.shift_bound ** 2 and plan.shift_bound <= math.sqrt(squared) + 2.0 ** -19


# ---------------------------------------------------------------- the language: charged before the draw
SCHEMA = {"v": ("numeric", 0, 1), "x": ("numeric", 0, 10), "grp": ("categorical", ["a", "b"]),
          "label": ("categorical", ["yes", "no"])}


def _frame(extra: bool) -> pd.DataFrame:
    rows = [(0.5, 2.0, "a", "yes"), (0.0, 9.0, "b", "no"), (1.0, 5.0, "a", "no")] * 3
    if extra:
        rows.append((1.0, 10.0, "b", "yes"))  # at every bound
    return pd.DataFrame(rows, columns=list(SCHEMA))


def _run(program: str, extra: bool, **caps: Any) -> tuple[str, list[Any], tuple, bool]:
    """(printed, costs charged, end, randomness untouched) of `program` on D (or D': `extra`)."""
    from jostle import Session
    from tests.privacy.fuzz_sulq import run_program

    output = io.StringIO()
    session = Session(ledger_path=":memory:", seed=5, output=output, **caps)
    session.bind_private("t", _frame(extra), SCHEMA)
    run = run_program(session, output, program)
    return run.printed, run.costs, run.end, run.untouched


@pytest.mark.parametrize("program, integer_valued", [('print(sulq(sum(t, "v"), 2))', False),
                                                     ("print(sulq(count(t), 2))", True)])
def test_sulq_charges_the_rho_its_variance_costs(program: str, integer_valued: bool) -> None:
    """One ledger entry, the rho of the plan the release draws with (the audit's claim), the
    same on both neighbours."""
    ledgers = []
    for extra in (False, True):
        output, costs, end, _ = _run(program, extra, rho=1)
        assert end == ("ok",) and output.strip()
        assert [c.rho for c in costs] == [cases.sulq_charge(Fraction(2), integer_valued)]
        ledgers.append(costs)
    assert ledgers[0] == ledgers[1]


def test_gaussian_at_a_rho_charges_that_rho() -> None:
    for extra in (False, True):
        _, costs, end, _ = _run('print(gaussian(sum(t, "v"), rho(0.25)))', extra, rho=1)
        assert end == ("ok",) and [c.rho for c in costs] == [Fraction(1, 4)]


OVER_BUDGET = [
    'print(sulq(sum(t, "v"), 0.01))',
    'M = SuLQKMeans(t, ["x"], k=2, bounds={x: [0, 10]}, rho=0.5)\nprint(M)',
    'M = DPLloyd(t, ["x", "v"], k=3, bounds={x: [0, 10], v: [0, 1]}, variance=0.5)\nprint(M)',
    'M = SuLQID3(select(t, ["grp", "label"]), "label", rho=0.5)\nprint(M)',
    'M = SuLQPerceptron(select(t, ["grp", "label"]), "label", variance=0.01)\nprint(M)',
]


@pytest.mark.parametrize("program", OVER_BUDGET)
def test_an_over_budget_call_spends_nothing_draws_nothing_and_is_refused_alike(program: str) -> None:
    """The whole plan's rho is checked (charged) before the first draw: refused, nothing
    printed, an empty ledger, the randomness untouched, the same refusal on D and D'."""
    ends = [_run(program, extra, rho=0.1) for extra in (False, True)]
    assert ends[0] == ends[1]
    output, costs, end, untouched = ends[0]
    assert end[0] == "error" and "nothing" in end[2] and output == "" and costs == [] and untouched, ends[0]


@pytest.mark.parametrize("program", OVER_BUDGET[1:])
def test_a_pure_program_refuses_the_sulq_learners_before_any_charge(program: str) -> None:
    ends = [_run(program, extra, budget=10) for extra in (False, True)]
    assert ends[0] == ends[1] and ends[0][2][0] == "error" and ends[0][1] == [] and ends[0][3], ends[0]


# ---------------------------------------------------------------- the front door: estimators
ESTIMATOR_DOMAINS = [["a", "b", "c"], ["p", "q"]]
ESTIMATOR_CLASSES = ["no", "yes"]


def _estimator_data(extra: bool, kind: str) -> tuple[Any, Any]:
    """D: eight rows; D': the same plus one at the bounds (k-means: a corner beyond the box, a
    NaN; classifiers: the last codes)."""
    if kind == "kmeans":
        rows = [[1.0, 2.0], [2.0, 1.0], [8.0, 9.0], [9.0, 8.0]] * 2 + ([[1e308, float("nan")]] if extra else [])
        return np.array(rows), None
    X = [["a", "p"], ["b", "q"], ["c", "p"], ["a", "q"]] * 2 + ([["c", "q"]] if extra else [])
    y = ["no", "yes", "yes", "no"] * 2 + (["yes"] if extra else [])
    return np.array(X, dtype=object), np.array(y, dtype=object)


def _estimator(name: str, budget: Any, noise: Any) -> Any:
    from jostle.estimators import DPLloydKMeans, SuLQID3Classifier, SuLQKMeans, SuLQPerceptronClassifier

    if name in ("SuLQKMeans", "DPLloydKMeans"):
        cls = SuLQKMeans if name == "SuLQKMeans" else DPLloydKMeans
        return cls(2, bounds=[(0, 10), (0, 10)], rho=0.5, iterations=2, budget=budget, noise=noise)
    cls = SuLQID3Classifier if name == "SuLQID3Classifier" else SuLQPerceptronClassifier
    return cls(0.5, domains=ESTIMATOR_DOMAINS, classes=ESTIMATOR_CLASSES, budget=budget, noise=noise)


ESTIMATORS = ["SuLQKMeans", "DPLloydKMeans", "SuLQID3Classifier", "SuLQPerceptronClassifier"]


@pytest.mark.parametrize("name", ESTIMATORS)
def test_an_estimator_checks_its_budget_before_the_first_draw_alike_on_neighbours(name: str) -> None:
    """A fit the shared budget cannot afford raises the same on D and D', spends nothing and
    draws nothing; a fit it affords charges its rho once, and its batches draw at most that."""
    from jostle.estimators import PrivacyBudget
    from jostle.privacy.subledger import OverBudgetError

    kind = "kmeans" if "KMeans" in name else "classifier"
    refusals = []
    for extra in (False, True):
        X, y = _estimator_data(extra, kind)
        noise = Randomness(8)
        state = noise._generator.bit_generator.state
        budget = PrivacyBudget(rho=0.25)
        with pytest.raises(OverBudgetError) as refused:
            _estimator(name, budget, noise).fit(X, *([] if y is None else [y]))
        assert Fraction(budget.spent.rho) == 0 and noise._generator.bit_generator.state == state
        refusals.append(str(refused.value))
        drawn: list[Fraction] = []
        budget = PrivacyBudget(rho=1)
        with _CountingRelease(drawn):
            _estimator(name, budget, Randomness(8)).fit(X, *([] if y is None else [y]))
        assert Fraction(budget.spent.rho) == Fraction(1, 2) and drawn and sum(drawn) <= Fraction(1, 2), drawn
    assert refusals[0] == refusals[1]


class _CountingRelease:
    """Note every batch's rho as it is drawn (the modules that import `sulq_release` by name)."""

    def __init__(self, into: list[Fraction]) -> None:
        from jostle.learners.sulq_classifiers import queries

        self.into, self.modules = into, [kmeans, queries]
        self.originals = [module.sulq_release for module in self.modules]

    def __enter__(self) -> None:
        for module, original in zip(self.modules, self.originals):
            def counted(noise: Any, sums: Any, plan: Any, original: Any = original) -> Any:
                self.into.append(plan.rho)
                return original(noise, sums, plan)
            module.sulq_release = counted

    def __exit__(self, *exc: Any) -> None:
        for module, original in zip(self.modules, self.originals):
            module.sulq_release = original


# ---------------------------------------------------------------- the replay check (fuzz_sulq.py)
REPLAY_SEED = 20261126
REPLAY_SECONDS = 5.0
LANGUAGE_SECONDS = 4.0
CONTROL_SECONDS = 10.0  # a cap: each control stops at its first attributable finding


def test_the_sulq_learners_stay_within_their_claims_on_neighbours() -> None:
    """SuLQ k-means, DPLloyd, SuLQ ID3 and the SuLQ perceptron on random rows (the box's corners,
    beyond it, NaN, +-inf, text; the codes' extremes) and a neighbour one row apart: every batch
    moves by at most its claim, each is charged before it is drawn, nothing is drawn after a
    refused charge, and with D's transcript played the run returns and charges the same on D'."""
    from tests.privacy.fuzz_sulq import LearnerStats, fuzz_learners

    stats = LearnerStats()
    finding = fuzz_learners(REPLAY_SECONDS, REPLAY_SEED, stats)
    print(stats)
    assert finding is None, finding.report()
    assert stats.cases >= 100 and stats.played >= stats.cases // 2 and stats.refused >= 5, stats
    for learner in ("SuLQKMeans", "DPLloyd", "SuLQID3", "SuLQPerceptron"):
        assert stats.by_learner.get(learner, 0) >= 30, stats


@pytest.mark.parametrize("engine", ["pandas", "duckdb"])
def test_zcdp_programs_of_sulq_calls_replay_within_their_claims(engine: str) -> None:
    """Whole programs (the four learners, `sulq`, `gaussian(x, rho(R))`) in a zCDP session over
    neighbouring private tables (rows at the declared bounds, beyond them, missing), the table in
    memory or on DuckDB: every release within its claim, and the printed text, the ledger and the
    end the same once D's transcript is played."""
    from tests.privacy.fuzz_sulq import ProgramStats, fuzz_language

    if engine == "duckdb":
        pytest.importorskip("duckdb")
    stats = ProgramStats()
    report = fuzz_language(LANGUAGE_SECONDS, REPLAY_SEED + (engine == "duckdb"), stats, engine)
    print(stats)
    assert report is None, report
    for mechanism in ("option SuLQKMeans", "option DPLloyd", "option SuLQID3", "option SuLQPerceptron", "sulq",
                      "gaussian"):
        assert stats.mechanisms.get(mechanism, 0) >= 3, stats


def test_sulq_programs_run_alike_in_memory_and_on_duckdb() -> None:
    """The route is not observable: the same program and seed print, charge and end the same
    whether the curator's table is in memory or on DuckDB."""
    import random

    from tests.privacy.fuzz_sulq import language_case, run_language

    pytest.importorskip("duckdb")
    rng = random.Random(REPLAY_SEED)
    for _ in range(25):
        case = language_case(rng)
        runs = [run_language(case, 0, engine=engine) for engine in ("pandas", "duckdb")]
        assert len({(run.end, run.printed, run.ledger) for run in runs}) == 1, case.report()


def _found(monkeypatch: pytest.MonkeyPatch, what: str, reason: str, learners: tuple[str, ...]) -> Any:
    """Fuzz with the hole open; the first finding whose reason holds `reason` and that goes away
    once every monkeypatch is undone (so the finding is the hole)."""
    from tests.privacy.fuzz_sulq import LearnerStats, check_learner_case, fuzz_learners, learner_case

    def attributable(finding: Any) -> bool:
        if reason not in finding.reason:
            return False
        holes = [(target, name, getattr(target, name)) for target, name, _ in monkeypatch._setattr]
        for target, name, original in monkeypatch._setattr:
            setattr(target, name, original)
        try:
            again, _, _ = check_learner_case(finding.case)
        finally:
            for target, name, hole in holes:
                setattr(target, name, hole)
        return again is None

    stats = LearnerStats()
    finding = fuzz_learners(CONTROL_SECONDS, REPLAY_SEED + 1, stats, accept=attributable,
                            make=lambda rng: learner_case(rng, learners))
    print(f"{what}: {'found' if finding else 'NOT found'} after {stats}")
    assert finding is not None, f"the replay check did not find {what}: {stats}"
    return finding


def test_touched_understated_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """NEGATIVE CONTROL: DPLloyd counting d sums touched per iteration (its cluster's size
    forgotten): it charges less and claims sqrt(d) / g; a row at a corner moves sqrt(d + 1) / g."""
    honest = kmeans.touched_per_iteration
    monkeypatch.setattr(kmeans, "touched_per_iteration",
                        lambda method, k, d: d if method == kmeans.DPLLOYD else honest(method, k, d))
    finding = _found(monkeypatch, "touched understated", "claimed sensitivity", ("DPLloyd",))
    assert all(first.point == "sulq" for first, _, _ in finding.comparison.violations)


def test_a_coordinate_left_unclipped_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """NEGATIVE CONTROL: rows coded with their first coordinate scaled but not clipped into the
    box: a row beyond the box moves a coordinate sum by more than 1."""
    honest = clustering_data.code_rows

    def unclipped_first(values: Any, box: Any) -> np.ndarray:
        units = honest(values, box)
        frame = values if isinstance(values, pd.DataFrame) else pd.DataFrame(np.asarray(values, dtype=object),
                                                                            columns=list(box.columns))
        raw = pd.to_numeric(frame[box.columns[0]], errors="coerce").to_numpy(dtype=float)
        scaled = (raw - box.lows[0]) / box.widths[0]
        finite = np.isfinite(scaled) & (np.abs(scaled) < 1e9)
        units[finite, 0] = np.rint(scaled[finite] * clustering_data.SCALE).astype(np.int64)
        return units

    monkeypatch.setattr(clustering_data, "code_rows", unclipped_first)
    finding = _found(monkeypatch, "a coordinate left unclipped", "claimed sensitivity", ("SuLQKMeans", "DPLloyd"))
    assert finding.comparison.violations


def test_a_draw_before_its_charge_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """NEGATIVE CONTROL: a k-means fit that draws each batch's noise, then charges (the release
    below is the honest one; the peek is an extra draw made before the charge)."""
    honest = kmeans.sulq_release

    def peeking(noise: Any, sums: Any, plan: Any) -> Any:
        noise.discrete_gaussian(plan.sigma2, 1, plan.t)  # an uncharged draw
        return honest(noise, sums, plan)

    monkeypatch.setattr(kmeans, "sulq_release", peeking)
    _found(monkeypatch, "an uncharged draw", "drawn before its charge", ("SuLQKMeans", "DPLloyd"))


# ---------------------------------------------------------------- the language in the neighbour fuzzer
LANGUAGE_SEED = 20261126
NEIGHBOUR_SECONDS = 6.0


def test_sulq_statements_parse_and_vary() -> None:
    import random

    from jostle.language.parser import parse
    from tests.privacy.neighbour_fuzz import make_case

    rng = random.Random(LANGUAGE_SEED)
    sources = [make_case(rng, {"sulq": 1}).source for _ in range(200)]
    for source in sources:
        parse(source, "<fuzz>")  # a syntax error would end both neighbours alike: no test at all
    for construct in ("SuLQKMeans(", "DPLloyd", "SuLQID3(", "SuLQPerceptron(", "sulq(", "gaussian(", "rho(",
                      "sulq_variance(", "zcdp_variance(", "bounds=", "variance=", "centres(", "kmeans_queries("):
        assert any(construct in source for source in sources), construct


def test_sulq_calls_are_fuzzed() -> None:
    """The neighbour fuzzer's family "sulq": the learners, `sulq` and `gaussian` at a rho on the
    private tables (its sessions are pure: refused before any charge, in the same words on both
    neighbours) and on public ones (run for free, the same on both), mixed with composed code."""
    from jostle import Session
    from tests.privacy.neighbour_fuzz import FuzzStats, fuzz, fuzz_seconds

    assert {"SuLQKMeans", "SuLQID3", "sulq"} <= set(Session(budget=1, ledger_path=":memory:").interpreter.builtins.values)
    calls: list[bool] = []
    stats = FuzzStats()
    finding = fuzz(fuzz_seconds(NEIGHBOUR_SECONDS), seed=LANGUAGE_SEED, families={"sulq": 3, "compose": 1},
                   stats=stats, on_case=lambda case: calls.append(any(
                       name in case.source for name in ("SuLQ", "DPLloyd", "sulq(", "gaussian("))))
    print(stats, f"{sum(calls)} with a SuLQ call")
    assert finding is None, f"{finding.report()}\n\n{stats}"
    assert sum(calls) >= 15, stats
