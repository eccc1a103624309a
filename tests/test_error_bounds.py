"""Exact half-widths of Jostle's noise laws (jostle.privacy.error_bounds) against brute-force pmf
sums, sums of independent noises, and the inverse calibration."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from jostle.privacy import grid_release
from jostle.privacy.error_bounds import (CombinedLaw, NoiseLaw, coverage_of_sum, half_width_of_sum, law_for,
                                         smallest_budget_for)
from jostle.privacy.measures import Budget, RhoZCDPBudget


def _brute(kind: str, scale: float, confidence: float) -> tuple[int, float]:
    """The smallest k with P(|K| <= k) >= confidence by summing the normalised pmf directly."""
    ks = np.arange(-4000, 4001)
    weights = np.exp(-np.abs(ks) / scale) if kind == "discrete_laplace" else np.exp(-ks * ks / (2 * scale * scale))
    pmf = weights / weights.sum()
    for k in range(4000):
        covered = pmf[np.abs(ks) <= k].sum()
        if covered >= confidence:
            return k, covered
    raise AssertionError


@pytest.mark.parametrize("kind", ["discrete_laplace", "discrete_gaussian"])
@pytest.mark.parametrize("scale", [0.3, 1.0, 2.5, 17.0, 60.0])
@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.95, 0.99])
def test_discrete_half_width_is_the_brute_force_one(kind: str, scale: float, confidence: float) -> None:
    law = NoiseLaw(kind, scale, grid=0.25)
    k, covered = _brute(kind, scale, confidence)
    assert law.half_width(confidence) == k * 0.25
    assert law.coverage(k * 0.25) == pytest.approx(covered, abs=1e-12)
    assert law.coverage(k * 0.25) >= confidence
    assert k == 0 or law.coverage((k - 1) * 0.25) < confidence


def test_geometric_closed_form_tail() -> None:
    law = NoiseLaw("discrete_laplace", 3.0)
    a = math.exp(-1 / 3.0)
    for k in range(1, 20):  # P(|K| >= k) = 2 a^k / (1 + a)
        assert 1 - law.coverage(k - 1) == pytest.approx(2 * a**k / (1 + a), rel=1e-10)


def test_large_sigma_gaussian_is_the_normal_one() -> None:
    law = NoiseLaw("discrete_gaussian", 20000.0, grid=0.5)
    assert law.half_width(0.95) == pytest.approx(20000 * 1.959964 * 0.5, rel=1e-5)
    assert NoiseLaw("gaussian", 2.0).half_width(0.95) == pytest.approx(2 * 1.959964, rel=1e-6)
    assert NoiseLaw("laplace", 2.0).half_width(0.95) == pytest.approx(2 * math.log(20), rel=1e-12)


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.1, 1.5])
def test_confidence_outside_the_open_interval_is_refused(confidence: float) -> None:
    with pytest.raises(ValueError, match=r"\(0, 1\)"):
        NoiseLaw("laplace", 1.0).half_width(confidence)


def test_law_for_is_the_plan_the_mechanism_uses() -> None:
    budget = Budget.of(Fraction(1, 3))
    plan = grid_release.laplace_plan(2.0, budget.epsilon, 1, False, False)
    law = law_for("laplace", 2.0, budget, integer=False)
    assert (law.kind, law.scale, law.grid) == ("discrete_laplace", float(plan.scale), float(plan.grid))
    geometric = law_for("default", 1.0, Budget.of(1), integer=True)
    assert (geometric.kind, geometric.scale, geometric.grid) == ("discrete_laplace", 1.0, 1.0)
    rho = law_for("default", 1.0, RhoZCDPBudget.of(Fraction(1, 2)), integer=True)
    assert rho.kind == "discrete_gaussian" and rho.grid == 1.0 and rho.scale >= 1.0
    # a real Laplace release's half-width is within 2^-19 of the continuous one, never below it by more
    assert law.half_width(0.95) == pytest.approx(6 * math.log(20), rel=2**-18)


def test_sum_of_two_geometrics_is_the_exact_convolution() -> None:
    first, second = NoiseLaw("discrete_laplace", 1.0), NoiseLaw("discrete_laplace", 2.0)
    ks = np.arange(-300, 301)
    p = np.exp(-np.abs(ks) / 1.0)
    q = np.exp(-np.abs(ks) / 2.0)
    total = np.convolve(p / p.sum(), q / q.sum())
    support = np.arange(-600, 601)
    for confidence in (0.5, 0.95):
        h = half_width_of_sum([(1, first), (-1, second)], confidence)
        assert total[np.abs(support) <= h].sum() >= confidence > total[np.abs(support) <= h - 1].sum()
    assert coverage_of_sum([(1, first), (1, second)], 3) == pytest.approx(total[np.abs(support) <= 3].sum(), abs=1e-9)


def test_sum_of_fine_laplaces_is_conservative_and_close() -> None:
    first = law_for("laplace", 1.0, Budget.of(1), integer=False)
    second = law_for("laplace", 1.0, Budget.of(2), integer=False)
    h = half_width_of_sum([(1, first), (1, second)], 0.95)
    # Laplace(1) + Laplace(1/2): P(|S| > h) = (4/3) e^-h - (1/3) e^-2h (closed form of the mixture)
    exact = -math.log((4 - math.sqrt(15.4)) / 2)  # 3.27384...
    assert exact - 1e-5 < h < exact + 5e-4
    assert 0.95 <= 1 - ((4 / 3) * math.exp(-h) - (1 / 3) * math.exp(-2 * h)) < 0.9501
    assert CombinedLaw(((1, first), (1, second))).half_width(0.95) == h


def test_gaussian_sums_are_exact_and_scaling_is_linear() -> None:
    terms = [(1.0, NoiseLaw("gaussian", 3.0)), (2.0, NoiseLaw("gaussian", 2.0))]
    assert half_width_of_sum(terms, 0.95) == pytest.approx(5 * 1.959964, rel=1e-6)
    law = NoiseLaw("discrete_laplace", 4.0, 0.5)
    assert half_width_of_sum([(-3, law)], 0.9) == 3 * law.half_width(0.9)
    assert half_width_of_sum([], 0.9) == 0.0


@pytest.mark.parametrize("mechanism,integer,cap", [
    ("laplace", False, Budget.of(10)), ("geometric", True, Budget.of(10)),
    ("gaussian", False, Budget.of(10, 1e-6)), ("gaussian_rho", True, RhoZCDPBudget.of(10)),
])
def test_smallest_budget_meets_the_target_and_a_bit_less_does_not(mechanism: str, integer: bool, cap) -> None:
    budget = smallest_budget_for(mechanism, 1.0, 3.0, 0.95, integer=integer, cap=cap)
    assert budget is not None

    def width(b) -> float:
        return law_for(mechanism, 1.0, b, integer=integer).half_width(0.95)

    assert width(budget) <= 3.0
    amount = budget.rho if isinstance(budget, RhoZCDPBudget) else budget.epsilon
    smaller = amount * Fraction(999, 1000)
    lower = RhoZCDPBudget(smaller) if isinstance(budget, RhoZCDPBudget) else Budget(smaller, budget.delta)
    assert width(lower) > 3.0 or mechanism in ("geometric", "gaussian_rho")  # integers: a step function
    assert smallest_budget_for(mechanism, 1.0, 0.001, 0.95, integer=integer, cap=cap) is None or integer
