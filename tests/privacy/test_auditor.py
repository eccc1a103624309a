"""Tests of the auditor itself (jostle.audit) on mechanisms whose privacy loss is known exactly.

These pin down the statistics: the Clopper-Pearson bounds have their closed forms and their
coverage, an audit of two identical distributions finds no privacy loss, an audit of a known
loss finds most of it and never more, vector losses add up over orthants, delta enters the
bound, and the harness devices (vectorised draws, session runs) sample the real mechanism.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from jostle.language import mechanisms
from jostle.audit import (
    SPAN,
    AuditContext,
    Categories,
    LikelihoodRatio,
    Orthants,
    Thresholds,
    audit,
    clopper_pearson_lower,
    clopper_pearson_upper,
    coordinate,
    private_value,
    release_runner,
    replicate,
    session_runner,
)
from jostle.diagnostics.errors import BudgetExceeded
from tests.privacy.cases import COUNTS, SCHEMA, SUMS, table


def categorical_runner(probabilities: dict[str, list[float]]) -> callable:
    """A mechanism that outputs category i with probabilities[dataset][i] (numpy, exact)."""
    def run(dataset: str, count: int, seed: int) -> list[str]:
        rng = np.random.default_rng(seed)
        return list(rng.choice(["x", "y", "z"], size=count, p=probabilities[dataset]))
    return run


def laplace_vector_runner(shift: np.ndarray, scale: float) -> callable:
    """Independent Laplace noise of `scale` on each coordinate of 0 (dataset "d") or `shift`."""
    def run(dataset: str, count: int, seed: int) -> np.ndarray:
        centre = np.zeros_like(shift) if dataset == "d" else shift
        return centre + np.random.default_rng(seed).laplace(0, scale, size=(count, len(shift)))
    return run


# ---------------------------------------------------------------- Clopper-Pearson
def test_clopper_pearson_closed_forms() -> None:
    """With no successes the upper bound solves (1 - p)^n = alpha; with all, p^n = alpha."""
    n, alpha = 200, 1e-3
    assert clopper_pearson_lower(0, n, alpha) == 0.0 and clopper_pearson_upper(n, n, alpha) == 1.0
    assert clopper_pearson_upper(0, n, alpha) == pytest.approx(1 - alpha ** (1 / n), rel=1e-9)
    assert clopper_pearson_lower(n, n, alpha) == pytest.approx(alpha ** (1 / n), rel=1e-9)


def test_clopper_pearson_coverage() -> None:
    """Each one-sided bound misses the true p in at most alpha of repeated experiments.

    4000 binomial experiments at p = 0.3, alpha = 0.05: each miss count is Binomial(4000, <=0.05);
    it may exceed its mean 200 by 5.2 standard deviations (14) only with probability < 1e-7.
    """
    rng = np.random.default_rng(11)
    n, p, alpha, experiments = 60, 0.3, 0.05, 4000
    hits = rng.binomial(n, p, size=experiments)
    limit = experiments * alpha + 5.2 * math.sqrt(experiments * alpha * (1 - alpha))
    assert np.sum(clopper_pearson_lower(hits, n, alpha) > p) <= limit
    assert np.sum(clopper_pearson_upper(hits, n, alpha) < p) <= limit


# ---------------------------------------------------------------- audits with a known answer
def test_identical_distributions_show_no_privacy_loss() -> None:
    """When M(D) and M(D') are the same distribution every true ratio is 1: the bound is <= 0."""
    probabilities = {"d": [0.2, 0.3, 0.5], "d'": [0.2, 0.3, 0.5]}
    result = audit(categorical_runner(probabilities), "d", "d'", 0.1, samples=50_000)
    assert result.epsilon_lower_bound <= 0.0, result


def test_known_categorical_loss_is_found_but_never_exceeded() -> None:
    """P(D) = (0.6, 0.3, 0.1), P(D') = (0.3, 0.3, 0.4): the largest ratio over all events is
    P_D'(z) / P_D(z) = 4, so the true epsilon is log 4. With 100000 samples per side each
    Clopper-Pearson bound is within ~3% of its probability, so the bound is above log 4 - 0.2."""
    probabilities = {"d": [0.6, 0.3, 0.1], "d'": [0.3, 0.3, 0.4]}
    result = audit(categorical_runner(probabilities), "d", "d'", math.log(4), samples=100_000,
                   events=Categories())
    assert math.log(4) - 0.2 < result.epsilon_lower_bound <= math.log(4), result
    assert result.event == "y == 'z'" and result.direction == "D'/D"


def test_orthants_add_up_the_loss_of_independent_coordinates() -> None:
    """Two coordinates, each a Laplace shift worth 0.3: the true epsilon is 0.6, and no event
    on one coordinate shows more than 0.3. Orthant events must find more than one coordinate
    can show, and never more than 0.6."""
    run = laplace_vector_runner(np.array([1.0, 1.0]), scale=1 / 0.3)
    result = audit(run, "d", "d'", 0.6, samples=200_000, events=Orthants())
    assert 0.35 < result.epsilon_lower_bound <= 0.6, result
    single = audit(run, "d", "d'", 0.6, samples=200_000, events=coordinate(0))
    assert single.epsilon_lower_bound <= 0.3, single


def test_learnt_likelihood_ratio_combines_coordinates() -> None:
    """DP-Sniper's classifier-ordered events on the same two Laplace coordinates: a half-plane
    of the learnt score shows more than one coordinate can (0.3), and never more than 0.6."""
    run = laplace_vector_runner(np.array([1.0, 1.0]), scale=1 / 0.3)
    result = audit(run, "d", "d'", 0.6, samples=200_000, events=LikelihoodRatio())
    assert 0.3 < result.epsilon_lower_bound <= 0.6, result


def test_delta_enters_the_bound() -> None:
    """M(D) outputs "z" with probability 0.01, M(D') never: no pure epsilon holds, and the audit
    must say so; (eps, delta = 0.02) holds, so the same samples then prove nothing."""
    probabilities = {"d": [0.5, 0.49, 0.01], "d'": [0.5, 0.5, 0.0]}
    pure = audit(categorical_runner(probabilities), "d", "d'", 1.0, samples=50_000)
    assert pure.violated and pure.event == "y == 'z'", pure
    approximate = audit(categorical_runner(probabilities), "d", "d'", 1.0, claimed_delta=0.02, samples=50_000)
    assert not approximate.violated, approximate


def test_thresholds_use_every_value_of_a_discrete_output() -> None:
    family = Thresholds()
    events = family.candidates(np.array([1.0, 2.0, 2.0]), np.array([3.0]))
    names = {e.name for e in events}
    assert {"y >= 1", "y >= 3", "y <= 2", "y == 2"} <= names
    mask = next(e for e in events if e.name == "y == 2").contains(np.array([1.0, 2.0, 3.0]))
    assert mask.tolist() == [False, True, False]


# ---------------------------------------------------------------- the harness devices
@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_vectorised_draws_match_single_releases(mechanism: str) -> None:
    """A replicated scalar released once has the distribution of separate releases of the
    scalar: two-sample Kolmogorov-Smirnov at alpha = 1e-6."""
    release = {
        "laplace": lambda ctx, x: mechanisms.laplace(ctx, x, 0.5, SPAN),
        "gaussian": lambda ctx, x: mechanisms.gaussian(ctx, x, 0.5, 1e-3, SPAN),
    }[mechanism]
    value = private_value(SUMS[1], SCHEMA, 'sum(t, "age")')
    context = AuditContext(31)
    together = np.asarray(release(context, replicate(value, 3000)), dtype=float)
    separate = np.array([release(context.fresh(), value) for _ in range(3000)], dtype=float)
    assert stats.ks_2samp(together, separate).pvalue > 1e-6


def test_vectorised_geometric_matches_single_releases() -> None:
    """The same for geometric noise, by a chi-squared test of the value counts (tails pooled)."""
    value = private_value(COUNTS[0], SCHEMA, "count(t)")
    context = AuditContext(32)
    together = np.asarray(mechanisms.geometric(context, replicate(value, 4000), 0.5, SPAN))
    separate = np.array([mechanisms.geometric(context.fresh(), value, 0.5, SPAN) for _ in range(4000)])
    cells = np.arange(14, 27)  # 20 +- 6, and the two tails
    table_ = [np.bincount(np.digitize(x, cells), minlength=len(cells) + 1) for x in (together, separate)]
    assert stats.chi2_contingency(np.array(table_)).pvalue > 1e-6


def test_replicate_refuses_vectors() -> None:
    histogram = private_value(COUNTS[0], SCHEMA, 'histogram(t, "grp")')
    with pytest.raises(TypeError):
        replicate(histogram, 3)


def test_session_runner_collects_every_run_across_sessions() -> None:
    run = session_runner("with budget 0.5:\n    n = {{ count(t) }}", "n", SCHEMA, 0.5, per_session=20)
    outputs = run(table("aaaa"), 45, 3)
    assert len(outputs) == 45 and all(isinstance(n, int) for n in outputs)
    assert run(table("aaaa"), 45, 3) == outputs  # reproducible from the seed


def test_session_runner_gives_a_run_no_more_than_its_budget() -> None:
    """A run that spends more than run_budget is refused, so the harness cannot hide overspending."""
    run = session_runner("n = laplace(count(t), 0.6)", "n", SCHEMA, 0.5, per_session=10)
    with pytest.raises(BudgetExceeded):
        run(table("aaaa"), 10, 1)


def test_release_runner_draws_independent_samples_per_call() -> None:
    """Per-call runs use one stream: 200 exponential picks are not all the same."""
    run = release_runner(lambda ctx, u: mechanisms.exponential(ctx, ("a", "b"), list(u), 0.1, 1, SPAN),
                         'map(lambda g: count(t.where(lambda r: r.grp == g)), ["a", "b"])', SCHEMA)
    picks = run(pd.DataFrame({"age": [1.0, 2.0], "grp": ["a", "b"]}), 200, 5)
    assert set(picks) == {"a", "b"}


def test_thorough_mode_multiplies_the_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.privacy.conftest import THOROUGH_FACTOR, thorough_factor

    monkeypatch.delenv("JOSTLE_AUDIT_THOROUGH", raising=False)
    assert thorough_factor(False) == 1.0 and thorough_factor(True) == THOROUGH_FACTOR
    monkeypatch.setenv("JOSTLE_AUDIT_THOROUGH", "1")
    assert thorough_factor(False) == THOROUGH_FACTOR
    monkeypatch.setenv("JOSTLE_AUDIT_THOROUGH", "25")
    assert thorough_factor(False) == 25.0
    monkeypatch.setenv("JOSTLE_AUDIT_THOROUGH", "0")
    assert thorough_factor(False) == 1.0


def test_event_families_tolerate_non_finite_outputs() -> None:
    """An algorithm may return NaN (post-processing gone wrong); NaN lies in no threshold set,
    and the learnt score still ranks the finite outputs."""
    rng = np.random.default_rng(3)
    first, second = rng.normal(0, 1, (500, 2)), rng.normal(1, 1, (500, 2))
    first[:20, 0] = np.nan
    for family in (Orthants(), LikelihoodRatio()):
        events = family.candidates(first, second)
        assert events
        for event in events[:50]:
            mask = event.contains(first)
            assert mask.dtype == bool and len(mask) == len(first)
    assert not any(e.contains(first)[:20].any() for e in Orthants().candidates(first, second)
                   if e.name.startswith("y[0]") and " and " not in e.name)
