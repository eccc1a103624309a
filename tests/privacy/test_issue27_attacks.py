"""Adversarial review of issue 27 (monotone rule-list scores, DP-FIM's skipped charges, Liu and
Talwar's private selection and the ChoiceMaker's selection mode, the common mechanism, new
metafeatures of trees and histograms, derived metafeatures).

The program's author, and a Python caller of the public API, is the adversary. Each test states a
guarantee the code must keep. One that failed on the code the review read is marked
`xfail(strict=True)` with the hole in its reason (the suite stays green and the mark must go when
the hole is fixed: the test then XPASSes, which strict turns into a failure). Tests without a mark
passed on that code and pin the claim down against regressions.

Where a claim is about a law (the selection's output distribution), the law is computed exactly
on an enumerable candidate mechanism and the implementation is checked against it by sampling,
with a tolerance of five binomial standard deviations of the sample size.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from jostle.privacy.noise import Randomness


# ====================================================================== rule lists (brl)
def _brl_scores(X: np.ndarray, y: np.ndarray, domain_sizes: list[int], n_classes: int, row_bound: int,
                antecedents: list, max_length: int) -> tuple[list, np.ndarray, int]:
    from jostle.learners.brl.bitsets import RowBits
    from jostle.learners.brl.learner import BRLSettings, _scorer
    from jostle.learners.brl.search import enumerate_lists

    bits = RowBits.of(X, y, domain_sizes, n_classes)
    scorer = _scorer(bits, antecedents, BRLSettings(), max_length, n_classes, row_bound)
    lists, units = enumerate_lists(scorer)
    return lists, units.astype(object), scorer.factorials.sensitivity_units


BRL_CASES = [  # (rows, domain sizes, classes, row bound): bounds below, at and above the rows
    (7, [2, 3], 2, 3),
    (9, [3, 2], 3, 4),
    (12, [2, 2, 2], 2, 1_000),
    (5, [4], 3, 1),
    (0, [2, 2], 2, 2),
]


@pytest.mark.parametrize("rows,domain_sizes,n_classes,row_bound", BRL_CASES)
def test_brl_every_list_score_moves_down_by_at_most_q(rows: int, domain_sizes: list[int], n_classes: int,
                                                       row_bound: int) -> None:
    """The monotonicity argument of `search.exponential_mechanism_list`, on the COMPUTED integer
    scores: adding any possible row (every value combination, every class) moves every list's
    score (prior, clipped log-factorials, default rule, rows no rule matches) by a value in
    [-Q, 0], Q the stated sensitivity, also past the knee (row bound below the table's size)."""
    from jostle.learners.brl.mining import public_antecedents

    rng = np.random.default_rng(27 + rows)
    columns = [rng.integers(0, d, rows) for d in domain_sizes]
    X = np.column_stack(columns).astype(np.int64).reshape(rows, len(domain_sizes))
    y = rng.integers(0, n_classes, rows).astype(np.int64)
    antecedents = public_antecedents(domain_sizes, 2)[:6]
    lists, before, q = _brl_scores(X, y, domain_sizes, n_classes, row_bound, antecedents, 2)
    assert q > 0 or row_bound + n_classes - 1 == 1
    for values in itertools.product(*[range(d) for d in domain_sizes]):
        for label in range(n_classes):
            X2 = np.vstack([X, np.array(values, dtype=np.int64)[None, :]])
            y2 = np.concatenate([y, [label]]).astype(np.int64)
            lists2, after, q2 = _brl_scores(X2, y2, domain_sizes, n_classes, row_bound, antecedents, 2)
            assert lists2 == lists and q2 == q
            moves = [int(a) - int(b) for a, b in zip(after, before)]
            assert min(moves) >= -q and max(moves) <= 0, (values, label, min(moves), max(moves), q)


def test_brl_list_mechanism_is_monotone_and_its_law_within_eps() -> None:
    """exp(eps S / Delta) on the computed scores of neighbours: every list's probability ratio is
    within e^eps (computed exactly in floating point from the integer scores), and the released
    list is drawn with `monotone=True` and the charged epsilon."""
    from jostle.learners.brl import search
    from jostle.learners.brl.mining import public_antecedents
    from jostle.learners.brl.scoring import UNIT

    rng = np.random.default_rng(5)
    domain_sizes, n_classes, row_bound, eps = [2, 3], 2, 4, 0.7
    X = np.column_stack([rng.integers(0, d, 10) for d in domain_sizes]).astype(np.int64)
    y = rng.integers(0, n_classes, 10).astype(np.int64)
    antecedents = public_antecedents(domain_sizes, 1)
    lists, before, q = _brl_scores(X, y, domain_sizes, n_classes, row_bound, antecedents, 2)
    worst = 0.0
    for values in itertools.product(*[range(d) for d in domain_sizes]):
        for label in range(n_classes):
            X2 = np.vstack([X, np.array(values, dtype=np.int64)[None, :]])
            _, after, _ = _brl_scores(X2, np.append(y, label), domain_sizes, n_classes, row_bound, antecedents, 2)
            logits_a = eps * np.array([float(Fraction(int(s), q)) for s in before])
            logits_b = eps * np.array([float(Fraction(int(s), q)) for s in after])
            log_p = logits_a - np.logaddexp.reduce(logits_a)
            log_p2 = logits_b - np.logaddexp.reduce(logits_b)
            worst = max(worst, float(np.max(np.abs(log_p - log_p2))))
    assert worst <= eps + 1e-9
    assert worst > 0.5 * eps  # the bound is nearly attained: the check has teeth

    seen: dict[str, Any] = {}

    def spy(noise: Any, utilities: Any, sensitivity: float, epsilon: Any, monotone: bool = False) -> int:
        seen.update(monotone=monotone, sensitivity=sensitivity, epsilon=epsilon)
        return 0

    original = search.choose_exponential
    search.choose_exponential = spy
    try:
        from jostle.learners.brl.bitsets import RowBits
        from jostle.learners.brl.learner import BRLSettings, _scorer
        scorer = _scorer(RowBits.of(X, y, domain_sizes, n_classes), antecedents, BRLSettings(), 2, n_classes, row_bound)
        search.exponential_mechanism_list(scorer, Randomness(1), Fraction(7, 10))
    finally:
        search.choose_exponential = original
    assert seen["monotone"] is True and seen["epsilon"] == Fraction(7, 10)
    assert seen["sensitivity"] == q / UNIT


def _brl_fit(X: np.ndarray, y: np.ndarray, seed: int, max_cardinality: int, epsilon: Fraction) -> Any:
    from jostle.learners.brl.learner import BRLSettings, fit_private

    settings = BRLSettings(max_cardinality=max_cardinality, max_length=2, max_antecedents=4, row_bound=200,
                           min_support=0.2)
    return fit_private(X, y, [2, 3, 2], 2, epsilon, settings, Randomness(seed))


def test_dp_fim_charges_are_a_function_of_released_itemsets_and_sum_to_the_fit() -> None:
    """DP-FIM's skipped steps and the budget they hand on: on neighbours (one row removed) with the
    same seed, whenever the released antecedent set and truncation lengths agree, every charge's
    amount agrees (and its text, but for the estimates', which names the released list's length); the charges of every fit add up to at most its epsilon and to it
    within float rounding (nothing is lost); a fit whose level 2 has no candidates charges no
    truncation length and gives the list more than its planned part."""
    rng = np.random.default_rng(11)
    n = 40
    X = np.column_stack([rng.integers(0, d, n) for d in (2, 3, 2)]).astype(np.int64)
    y = (X[:, 0] ^ (rng.random(n) < 0.2)).astype(np.int64)
    epsilon = Fraction(3, 2)
    compared = 0
    for seed in range(6):
        full = _brl_fit(X, y, seed, 2, epsilon)
        total = sum(Fraction(amount) for amount, _ in full.charges)
        assert total <= epsilon and float(epsilon - total) < 1e-12
        for removed in range(0, n, 7):
            keep = np.arange(n) != removed
            other = _brl_fit(X[keep], y[keep], seed, 2, epsilon)
            if other.antecedent_set == full.antecedent_set and other.truncation == full.truncation:
                compared += 1  # the released values so far agree: so do the amounts, and every text but
                # the estimates' (which names the released list's length)
                assert [a for a, _ in other.charges] == [a for a, _ in full.charges]
                assert [t for _, t in other.charges][:-1] == [t for _, t in full.charges][:-1]
    assert compared >= 3
    # one attribute: no itemset of two items can exist, so no level >= 2 and no truncation length
    from jostle.learners.brl.learner import BRLSettings, fit_private
    settings = BRLSettings(max_cardinality=3, max_length=2, max_antecedents=4, row_bound=200)
    sparse = fit_private(X[:, 1:2], y, [3], 2, epsilon, settings, Randomness(3))
    texts = [text for _, text in sparse.charges]
    assert not any("truncation length" in t or "DP-FIM level 2" in t for t in texts), texts
    chosen = next(amount for amount, text in sparse.charges if text.startswith("BRL rule list"))
    from jostle.learners.brl.accounting import BudgetSplit
    assert chosen > BudgetSplit.of(epsilon, settings.split, True).selection  # the unspent length share went on
    assert sum(Fraction(a) for a, _ in sparse.charges) <= epsilon


def test_brl_chain_note_reaches_the_shared_budget() -> None:
    """With sampler "mcmc" the shared budget's record (what the durable ledger writes) says the
    fit is NOT proved differentially private, as `charges_` does."""
    from jostle.learners.brl.estimators import DPBayesianRuleListClassifier
    from jostle.privacy.shared_budget import PrivacyBudget

    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (30, 2))
    y = rng.integers(0, 2, 30)
    budget = PrivacyBudget(5.0)
    model = DPBayesianRuleListClassifier(1.0, domains={"0": [0, 1], "1": [0, 1]}, classes=[0, 1], budget=budget,
                                         sampler="mcmc", steps=50, max_rows=100, random_state=0)
    model.fit(X, y)
    text = " ".join(str(entry) for entry in budget.charges)
    assert "NOT proved differentially private" in text, text


# ====================================================================== private selection (selection)
def _geometric_sum(gamma: float, x: float) -> float:
    """sum_{t >= 1} gamma (1 - gamma)^(t - 1) x^t."""
    return gamma * x / (1.0 - (1.0 - gamma) * x)


def _best_of_law(p: tuple[float, float], gamma: float) -> dict[tuple[int, int], float]:
    """Exact output law of the random-stopping best-of (ties to the first run) for the enumerable
    candidate: j uniform in {0, 1} (public coin), score s = 1 with probability p_j, else 0."""
    q = (p[0] + p[1]) / 2.0
    r = 1.0 - q
    stop_all_zero = _geometric_sum(gamma, r)
    law = {}
    for j in (0, 1):
        law[(j, 1)] = (1.0 - stop_all_zero) * (p[j] / 2.0) / q if q > 0 else 0.0
        law[(j, 0)] = stop_all_zero / r * (1.0 - p[j]) / 2.0 if r > 0 else 0.0
    return law


def _threshold_law(p: tuple[float, float], gamma: float) -> dict[Any, float]:
    """Exact output law of the threshold variant (tau = 1) on the same candidate (None: stopped)."""
    r = 1.0 - (p[0] + p[1]) / 2.0
    denominator = 1.0 - r * (1.0 - gamma)
    return {(0, 1): p[0] / 2.0 / denominator, (1, 1): p[1] / 2.0 / denominator, None: r * gamma / denominator}


def _neighbour_pairs(eps1: float) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """Pairs (p, p') of candidate laws whose every output probability ratio is within e^eps1."""
    grid = np.linspace(0.0005, 0.9995, 41)
    pairs = []
    for a, b in itertools.product(grid, grid):
        for factor_a, factor_b in itertools.product((math.exp(eps1), math.exp(-eps1)), repeat=2):
            a2, b2 = a * factor_a, b * factor_b
            ok = all(0 < v < 1 for v in (a2, b2)) and all(
                math.exp(-eps1) - 1e-12 <= x <= math.exp(eps1) + 1e-12
                for x in ((1 - a2) / (1 - a), (1 - b2) / (1 - b)))
            if ok:
                pairs.append(((a, b), (a2, b2)))
    return pairs


@pytest.mark.parametrize("gamma", [1.0, 0.5, 0.05])
def test_best_of_law_is_within_3eps1(gamma: float) -> None:
    """Liu and Talwar's random stopping (the stated cost 3 eps1), on every pair of eps1-DP
    candidate laws of a grid: the exact output laws differ by at most e^(3 eps1); for small gamma
    some pair exceeds e^(1.5 eps1), so the selection really costs more than one run."""
    eps1 = 0.4
    worst = 0.0
    for p, p2 in _neighbour_pairs(eps1):
        a, b = _best_of_law(p, gamma), _best_of_law(p2, gamma)
        for key in a:
            if a[key] > 0 and b[key] > 0:
                worst = max(worst, abs(math.log(a[key] / b[key])))
    assert worst <= 3 * eps1 + 1e-9
    if gamma <= 0.05:
        assert worst > 1.5 * eps1


def test_threshold_law_is_2eps1_dp() -> None:
    """The threshold variant (T infinite, gamma > 0) on the same grid: within e^(2 eps1)."""
    eps1 = 0.4
    worst = 0.0
    for gamma in (0.5, 0.1, 0.01):
        for p, p2 in _neighbour_pairs(eps1):
            a, b = _threshold_law(p, gamma), _threshold_law(p2, gamma)
            worst = max(worst, max(abs(math.log(a[k] / b[k])) for k in a))
    assert worst <= 2 * eps1 + 1e-9


class _NoiseSpy:
    """Randomness that records every call (method name, arguments) made through it."""

    def __init__(self, seed: int) -> None:
        self.inner = Randomness(seed)
        self.calls: list[tuple[str, tuple]] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)

        def recorded(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, args))
            return method(*args, **kwargs)

        return recorded

    @property
    def draws(self) -> int:
        return len(self.calls)


def _enumerable_candidate(noise: Any, p: tuple[float, float]) -> Any:
    def candidate() -> tuple[Any, Any, float]:
        j = int(noise.integers_below(2, 1)[0])
        s = float(noise.bernoulli_rational(Fraction(p[j]).limit_denominator(10_000), 1)[0])
        return j, j, s
    return candidate


@pytest.mark.parametrize("threshold", [None, 0.5])
def test_select_private_candidate_samples_the_stated_law(threshold: float | None) -> None:
    """The implementation is the algorithm whose law was checked above: 6,000 seeded selections'
    frequencies match the exact law within five binomial standard deviations; the whole stated
    cost (3 eps1, or 2 eps1 with a threshold) is charged once, before the first draw."""
    from jostle.privacy.private_selection import plan_selection, select_private_candidate

    p, gamma, trials = (0.2, 0.6), Fraction(1, 3), 6000
    plan = plan_selection(Fraction(6, 5), gamma, Fraction(1, 2), threshold)
    assert plan.total_epsilon == Fraction(6, 5)
    assert plan.candidate_epsilon == Fraction(6, 5) / (3 if threshold is None else 2)
    noise = _NoiseSpy(27)
    charges: list[tuple[Any, int]] = []
    counts: dict[Any, int] = {}
    for _ in range(trials):
        chosen = select_private_candidate(noise, _enumerable_candidate(noise, p), plan,
                                          lambda cost, text: charges.append((cost.epsilon, noise.draws)))
        key = None if chosen is None else (chosen.candidate, int(chosen.score))
        counts[key] = counts.get(key, 0) + 1
    assert len(charges) == trials and all(c == Fraction(6, 5) for c, _ in charges)
    assert charges[0][1] == 0  # charged before any draw
    law = _best_of_law(p, float(gamma)) if threshold is None else _threshold_law(p, float(gamma))
    for key, probability in law.items():
        observed = counts.get(key, 0) / trials
        assert abs(observed - probability) <= 5 * math.sqrt(probability * (1 - probability) / trials) + 1e-9, \
            (key, observed, probability)


def test_selection_refused_over_budget_draws_nothing() -> None:
    """A refused charge (over budget) raises before the number of runs or any candidate is drawn."""
    from jostle.privacy.private_selection import plan_selection, select_private_candidate

    noise = _NoiseSpy(1)
    ran = []

    def refuse(cost: Any, text: str) -> None:
        raise RuntimeError("over budget")

    with pytest.raises(RuntimeError):
        select_private_candidate(noise, lambda: ran.append(1) or (0, 0, 0.0),
                                 plan_selection(1, Fraction(1, 2), Fraction(1, 2)), refuse)
    assert noise.draws == 0 and not ran


@pytest.fixture(scope="module")
def selecting_toy(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The selection toy family's ChoiceMaker, trained on its public corpus, with its segment's
    decision forced to "selection" (what training keeps where selection pays)."""
    import dataclasses

    from jostle.choicemaker.engine import train
    from tests.selection_toy_family import FAMILY

    trained = train(FAMILY, cache_dir=tmp_path_factory.mktemp("selection"), n_jobs=1, progress=False)
    decision = trained.selection_decision(None)
    assert decision is not None
    trained.selection = {None: dataclasses.replace(decision, used=True)}
    assert trained.selects_privately(None)
    return trained


def _selection_dispatch(trained: Any, values: np.ndarray, seed: int, budget: Any) -> tuple[Any, list]:
    from jostle.choicemaker.private_dispatch import dispatch, explain
    from tests.toy_family import MeanData

    charges: list = []
    result = dispatch(trained, MeanData(values, 40), budget, noise=Randomness(seed),
                      charge=lambda cost, text: charges.append((cost, text)))
    plain = result.trace.as_dict()
    masked = {k: v for k, v in plain.items() if k not in ("choice", "selection_score", "choice_family")}
    text = explain([plain]).replace(str(result.choice), "<choice>")
    text = text.replace(f"{plain['selection_score']:.4g}", "<score>")
    return (masked, text, result.costs, sorted(result.budget_split)), charges


@pytest.mark.parametrize("budget", [1.0, "rho"])
def test_selection_dispatch_shows_the_same_on_neighbours_and_never_the_runs(selecting_toy: Any, budget: Any) -> None:
    """The selection mode through the one dispatch: on neighbours (one number removed), and for
    seeds that draw different numbers of runs, the charges (one, the whole budget, before any
    draw), the trace but for the released choice and score, the explain text so masked, the
    costs and the budget split are identical; nothing shows how many runs were made."""
    from jostle.privacy.measures import RhoZCDPBudget
    from jostle.privacy.private_selection import draw_runs

    total = RhoZCDPBudget(Fraction(1, 2)) if budget == "rho" else budget
    rng = np.random.default_rng(3)
    values = rng.random(40)
    gamma = selecting_toy.selection_decision(None).stop_probability
    runs = {seed: draw_runs(Randomness(seed), gamma) for seed in range(8)}
    assert len(set(runs.values())) >= 3  # the seeds below really draw different numbers of runs
    seen = []
    for seed in runs:
        for data in (values, values[1:]):
            shown, charges = _selection_dispatch(selecting_toy, data, seed, total)
            assert len(charges) == 1 and "private selection" in charges[0][1]
            seen.append((shown, charges))
    first = seen[0]
    for other in seen[1:]:
        assert other == first


# ====================================================================== the common mechanism (selection)
class _GaussianSpy:
    """Records every discrete Gaussian draw (its variance and size) and when the charge came."""

    def __init__(self) -> None:
        self.inner = Randomness(7)
        self.draws: list[tuple[Fraction, int]] = []

    def discrete_gaussian(self, sigma2: Fraction, size: int, t: Any = None) -> np.ndarray:
        self.draws.append((Fraction(sigma2), int(size)))
        return self.inner.discrete_gaussian(sigma2, size)


@pytest.mark.parametrize("cells", [2, 3, 5, 8, 13])
@pytest.mark.parametrize("choice", ["identity", "hierarchy"])
def test_common_mechanism_spends_exactly_what_it_charges(cells: int, choice: str) -> None:
    """Replaying the DRAWS (not the plan's own arithmetic): for each cell, the sum over every
    release actually drawn of (how many of its entries one row moves) / (2 variance) is the zCDP
    cost of that row (Renyi divergences of independent discrete Gaussians add; CKS 2020); its
    maximum over cells equals the rho charged, once, before the first draw."""
    from jostle.privacy.private_selection import identity_or_hierarchy, plan_identity_or_hierarchy

    rho = Fraction(3, 10)
    plan = plan_identity_or_hierarchy(cells, rho)
    noise = _GaussianSpy()
    charged: list[tuple[Any, int]] = []
    counts = np.arange(cells, dtype=np.int64) * 3
    run = identity_or_hierarchy(noise, counts, plan, lambda common: choice,
                                lambda cost, text: charged.append((cost, len(noise.draws))))
    assert run.choice == choice
    assert len(charged) == 1 and charged[0][1] == 0 and charged[0][0].rho == rho
    # which release touches which cell: the first draw is the leaves; then the identity's second
    # look at every cell, or the tree's upper levels (each cell in one node per level)
    per_cell = [Fraction(0)] * cells
    for index, (variance, size) in enumerate(noise.draws):
        if index == 0 or choice == "identity":
            assert size == cells
            for j in range(cells):
                per_cell[j] += 1 / (2 * variance)
        else:
            level = plan.levels[index]
            assert size == level.shape[0]
            for j in range(cells):
                per_cell[j] += int(level[:, j].sum()) ** 2 / (2 * variance)
    assert max(per_cell) == rho and min(per_cell) == rho
    assert len(noise.draws) == (2 if choice == "identity" else plan.height)


# ====================================================================== derived metafeatures (synthesis)
DERIVED_HEAD = """ages = t.bin("age", range(0, 101, 10))
h = histogram(ages, "age")
q = all_ranges(10)
n = count(t)
k = 1
option A(h, q):
    answer:
        return DAWA(h, q)
    predict(F):
        return 1 + F.profile_roughness
option B(h, q):
    answer:
        return Identity(h, q)
    predict(F):
        return 1.5
"""
DERIVED_LEAKS = {
    "private global": "def leak(F):\n    return F.profile_size + n\n",
    "private table": "def leak(F):\n    return F.profile_size + len(t)\n",
    "branch on private": "def leak(F):\n    if n > 150:\n        return F.profile_size\n    return 0\n",
    "inner closure": "def leak(F):\n    def g():\n        return n\n    return F.profile_size + g()\n",
    "rebound after declaration": "def leak(F):\n    return F.profile_size + k\n",
}


@pytest.mark.parametrize("leak", list(DERIVED_LEAKS))
def test_derived_metafeature_cannot_read_private_data(leak: str) -> None:
    """A derived metafeature (one parameter F, reading only F.name) that also reads private data,
    directly, through a branch, a closure, or a global made private after the declaration, is
    refused before anything is charged, with the same error on neighbouring tables."""
    import pandas as pd

    from jostle import Session

    seen = []
    for rows in (300, 299):
        session = Session(budget=10, seed=1, ledger_path=":memory:")
        ages = np.random.default_rng(0).integers(0, 100, 300)[:rows]
        session.bind_private("t", pd.DataFrame({"age": ages}), {"age": ("numeric", 0, 100)})
        with pytest.raises(Exception) as caught:
            session.run(DERIVED_HEAD + DERIVED_LEAKS[leak] +
                        "choicemaker H among {A, B} informed by {domain_size, profile_size, profile_roughness, leak} "
                        "trained on none\nk = count(t)\nwith budget 1:\n    e = H(h, q)\n")
        assert list(session.ledger) == []
        seen.append((type(caught.value).__name__, str(caught.value)))
    assert seen[0] == seen[1] and "private" in seen[0][1]


# ====================================================================== new metafeatures (trees, histograms)
def _contingency_measurement(attributes: int, budget: Fraction, seed: int = 3, rows: int = 50) -> tuple:
    metafeatures = pytest.importorskip("jostle.learners.trees.metafeatures")
    if not hasattr(metafeatures, "CONTINGENCY_METAFEATURES"):
        pytest.skip("no contingency metafeatures in this tree")
    from jostle.choicemaker.measurement import measure_features
    from jostle.learners.trees.family import FAMILY
    from jostle.learnerkit.tables import ClassificationData

    rng = np.random.default_rng(0)
    data = ClassificationData(rng.integers(0, 2, (rows, attributes)), rng.integers(0, 2, rows), (2,) * attributes, 2)
    spy, charges = _NoiseSpy(seed), []
    measured = measure_features(FAMILY, list(metafeatures.CONTINGENCY_METAFEATURES.values()), data, budget,
                                Fraction(1, 10), spy,
                                charge=lambda cost, text: charges.append((cost, text, len(spy.calls))))
    return measured, spy, charges


def test_contingency_metafeatures_are_one_release_charged_once_before_its_draw() -> None:
    """The five contingency_* metafeatures: one charge (the shared release), before the one
    draw of every attribute x class cell, calibrated to the stated L1 sensitivity k."""
    measured, spy, charges = _contingency_measurement(4, Fraction(3))
    assert len(charges) == 1 and charges[0][2] == 0
    draws = [args for name, args in spy.calls]
    assert len(draws) == 1 and draws[0][1] == 4 * 2 * 2  # every cell of the four 2 x 2 tables, once
    assert len(measured.features) == 5


def test_contingency_release_never_runs_above_its_charge() -> None:
    """The noise parameter actually drawn, times the sensitivity k, is at most the charged epsilon,
    exactly (on parts and attribute counts where float division rounds up)."""
    for attributes, budget in ((5, Fraction(5)), (7, Fraction(3))):  # parts 1/2 and 3/10
        _, spy, charges = _contingency_measurement(attributes, budget)
        charged = charges[0][0].epsilon
        (name, args), = spy.calls
        assert name == "two_sided_geometric"
        assert attributes * Fraction(args[0]) <= charged, (attributes, charged, args[0])


def test_histogram_profile_readings_are_post_processing_of_the_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    """The four profile readings added in issue 27 read the private counts only through the one
    profile release: with the release replaced by a public constant they are identical on
    neighbouring histograms (one count moved by 1, in either direction, in any cell)."""
    from jostle.learners.histograms import metafeatures as hm

    names = ["profile_peaks", "profile_max_share", "profile_empty_share", "profile_records_per_cell"]
    fixed = np.array([5.0, 0.0, 12.0, 3.0, 40.0, 1.0, 0.5, 9.0])

    def public_profile(x: Any, eps: Any, noise: Any, context: Any) -> tuple[np.ndarray, Any]:
        return fixed.copy(), None

    monkeypatch.setattr(hm, "profile_release", public_profile)
    from jostle.choicemaker.family import MetafeatureContext

    base = np.random.default_rng(1).integers(0, 30, 64).astype(float)
    context = MetafeatureContext(0.9, 1.0)
    reference = [hm.BUILTIN_METAFEATURES[n].function(base, 0.1, Randomness(1), context) for n in names]
    for cell in (0, 17, 63):
        for move in (1.0, -1.0):
            neighbour = base.copy()
            neighbour[cell] = max(neighbour[cell] + move, 0.0)
            values = [hm.BUILTIN_METAFEATURES[n].function(neighbour, 0.1, Randomness(2), context) for n in names]
            assert values == reference


def test_selection_mode_never_runs_a_zcdp_only_family(selecting_toy: Any) -> None:
    """A family whose Options are only zCDP (measures = ("zcdp",)) is never run by the pure-DP
    selection: the dispatch either measures-then-chooses or refuses before any charge."""
    import dataclasses

    from jostle.privacy.measures import RhoZCDPBudget
    from tests.selection_toy_family import SelectingToy
    from tests.toy_family import MeanData

    class ZcdpOnlyToy(SelectingToy):
        name = "toy_selecting_zcdp"
        measures = ("zcdp",)

        def run_option(self, option: Any, data: Any, budget: Any, noise: Any, released: Any) -> Any:
            if not isinstance(budget, RhoZCDPBudget):  # as the clustering family does
                raise ValueError(f"the Options run under a zCDP budget (rho), not {budget}")
            return super().run_option(option, data, budget, noise, released)

    from jostle.choicemaker.private_dispatch import dispatch

    trained = dataclasses.replace(selecting_toy, family=ZcdpOnlyToy())
    charges: list = []
    try:
        result = dispatch(trained, MeanData(np.random.default_rng(3).random(40), 40), RhoZCDPBudget(Fraction(1, 2)),
                          noise=Randomness(1), charge=lambda cost, text: charges.append(text))
    except ValueError:
        assert charges == [], f"refused after charging {charges}"
    else:
        assert result.trace.chosen_by != "private selection"


def test_selection_dispatch_candidates_spend_eps1_and_the_charge_is_3_eps1(selecting_toy: Any,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """What each candidate run really gets: the Option its run part, the score the rest (with the
    hook's sensitivity), adding up to eps1 exactly, and the one charge is 3 eps1 = the budget."""
    from jostle.choicemaker.private_dispatch import dispatch
    from jostle.privacy import safe_noise
    from tests.toy_family import MeanData

    runs: list = []
    scores: list = []
    original_run = type(selecting_toy.family).run_option
    original_scores = safe_noise.noisy_scores

    def spy_run(self: Any, option: Any, data: Any, budget: Any, noise: Any, released: Any) -> Any:
        runs.append(budget)
        return original_run(self, option, data, budget, noise, released)

    def spy_scores(noise: Any, values: Any, sensitivity: float, epsilon: Any) -> np.ndarray:
        scores.append((sensitivity, epsilon))
        return original_scores(noise, values, sensitivity, epsilon)

    monkeypatch.setattr(type(selecting_toy.family), "run_option", spy_run)
    monkeypatch.setattr(safe_noise, "noisy_scores", spy_scores)
    charges: list = []
    dispatch(selecting_toy, MeanData(np.random.default_rng(4).random(30), 30), Fraction(6, 5), noise=Randomness(9),
             charge=lambda cost, text: charges.append(cost))
    assert len(charges) == 1 and charges[0].epsilon == Fraction(6, 5)
    eps1 = Fraction(6, 5) / 3
    assert runs and len(runs) == len(scores)
    for budget, (sensitivity, epsilon) in zip(runs, scores):
        assert sensitivity == 1.0
        assert budget.epsilon + Fraction(epsilon) == eps1 and budget.delta == 0
