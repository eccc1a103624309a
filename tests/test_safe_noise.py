"""Tests of jostle.privacy.safe_noise: which path a noise source takes, the grid releases of real vectors
(on the public grid, every output possible on a neighbour, likelihood ratio within e^eps), the
exact exponential mechanism's law (chi-squared at alpha 1e-6), the simulation path's formulas,
and the rounded-up noise scale."""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from jostle.privacy import grid_release, safe_noise
from jostle.learners.histograms.simulation import FloatSimulationNoise as LightSimulationNoise
from jostle.privacy.noise import Randomness, SimulationNoise

ALPHA = 1e-6


def units_of(released: np.ndarray, grid: Fraction) -> list[int]:
    """The released values in grid steps, asserting each is an exact multiple of the grid."""
    steps = [Fraction(float(v)) / grid for v in np.ravel(released)]
    assert all(s.denominator == 1 for s in steps), "a released value is off the public grid"
    return [int(s) for s in steps]


def log_likelihood_ratio(units: list[int], centre: np.ndarray, centre_prime: np.ndarray,
                         plan: grid_release.LaplacePlan) -> Fraction:
    """log P(units | D) - log P(units | D') for discrete Laplace noise of the plan's scale around
    the snapped values of D and D' (the normalising constants cancel)."""
    k = grid_release.snap(centre, plan.grid)
    k_prime = grid_release.snap(centre_prime, plan.grid)
    distance = sum(abs(u - int(a)) for u, a in zip(units, k))
    distance_prime = sum(abs(u - int(b)) for u, b in zip(units, k_prime))
    return Fraction(distance_prime - distance) / plan.scale


# ---------------------------------------------------------------- which path
def test_sources_are_told_apart_by_their_features():
    assert not safe_noise.is_simulation(Randomness(seed=1))
    assert not safe_noise.is_simulation(Randomness())
    assert safe_noise.is_simulation(SimulationNoise(1))          # declares simulation_only
    assert safe_noise.is_simulation(LightSimulationNoise(1))     # no exact samplers, secure = False

    class ClaimsSecure:
        secure = True

        def laplace(self, scale, size):
            return np.zeros(size)

    with pytest.raises(TypeError, match="claims to be secure"):
        safe_noise.is_simulation(ClaimsSecure())


def test_an_exact_source_never_uses_a_floating_point_sampler():
    class NoFloats(Randomness):
        def laplace(self, scale, size):
            raise AssertionError("float-path laplace used on an exact source")

        def gumbel(self, size):
            raise AssertionError("Gumbel draws used on an exact source")

    noise = NoFloats(seed=3)
    safe_noise.release_vector(noise, np.array([0.3, 1.7, 2.0]), 1.0, 0.5)
    safe_noise.noisy_scores(noise, np.array([0.3, 1.7]), 2.0, 0.5)
    safe_noise.choose_exponential(noise, np.array([0.0, 1.0, -np.inf]), 1.0, 1.0)
    safe_noise.choose_exponential_rows(noise, np.array([[0.0, 1.0], [2.0, -np.inf]]), 1.0, 1.0)


# ---------------------------------------------------------------- release_vector
@pytest.mark.parametrize("length,l1,epsilon", [(1, 1.0, 0.5), (7, 3.0, 1 / 3), (64, 1.0, 2.0), (4096, 1.0, 0.1)])
def test_real_vector_releases_lie_on_the_plans_grid(length, l1, epsilon):
    rng = np.random.default_rng(length)
    values = rng.normal(0.0, 50.0, length) + rng.random(length) / 7  # real, with arbitrary low bits
    released = safe_noise.release_vector(Randomness(seed=length), values, l1, epsilon)
    plan = safe_noise.vector_plan(length, l1, epsilon)
    assert released.shape == values.shape
    units_of(released, plan.grid)
    assert Fraction(plan.sensitivity) / plan.scale <= Fraction(epsilon)


def test_outputs_on_a_dataset_are_attainable_on_its_neighbours_within_e_to_the_eps():
    """The plan depends on public inputs only, so D and D' use the same grid; the released units
    have positive probability under D' and the likelihood ratio is at most e^eps for neighbours
    moved by at most l1 in L1, including moves below the grid and across rounding points."""
    rng = np.random.default_rng(11)
    l1, epsilon = 2.0, 0.7
    noise = Randomness(seed=12)
    for trial in range(200):
        length = int(rng.integers(1, 30))
        values = rng.normal(0.0, 10.0, length)
        move = rng.normal(0.0, 1.0, length) * (rng.random(length) < 0.3)
        if not move.any():
            move[0] = 1.0
        move *= rng.uniform(0.0, l1) / np.abs(move).sum()  # ||move||_1 <= l1
        if trial % 3 == 0:
            move *= 1e-9  # a move far below the grid step
        neighbour = values + move
        plan = safe_noise.vector_plan(length, l1, epsilon)
        assert safe_noise.vector_plan(length, l1, epsilon) == plan  # no data in the plan
        units = units_of(safe_noise.release_vector(noise, values, l1, epsilon), plan.grid)
        ratio = log_likelihood_ratio(units, values, neighbour, plan)
        assert abs(ratio) <= Fraction(epsilon)


def test_integer_dtype_values_stay_on_their_own_grid():
    counts = np.array([0, 3, 17, 250], dtype=np.int64)
    plan = safe_noise.vector_plan(4, 1.0, 0.5, integer_valued=True)
    assert plan.grid <= 1 and plan.sensitivity == Fraction(1) / plan.grid  # no rounding slack
    units = units_of(safe_noise.release_vector(Randomness(seed=2), counts, 1.0, 0.5), plan.grid)
    assert len(units) == 4


def test_release_noise_has_the_laplace_law():
    """(released - snapped value) / (grid * scale) is discrete Laplace of scale ~2^30 steps: KS
    against the continuous Laplace(1) law (the discretisation is far below what 20000 draws see)."""
    length, l1, epsilon = 20_000, 1.0, 0.25
    values = np.linspace(-3.3, 8.1, length)
    plan = safe_noise.vector_plan(length, l1, epsilon)
    released = safe_noise.release_vector(Randomness(seed=5), values, l1, epsilon)
    snapped = grid_release.snap(values, plan.grid).astype(float) * float(plan.grid)
    noise = (released - snapped) / float(plan.grid * plan.scale)
    assert stats.kstest(noise, "laplace").pvalue > ALPHA
    # and the scale in value units is l1 / epsilon up to the plan's tiny slack
    assert float(plan.grid * plan.scale) == pytest.approx(l1 / epsilon, rel=2**-19)


def test_a_4096_cell_release_is_fast():
    values = np.random.default_rng(0).poisson(30, 4096).astype(float)
    noise = Randomness()
    safe_noise.release_vector(noise, values, 1.0, 0.3)  # warm the plan cache
    start = time.perf_counter()
    safe_noise.release_vector(noise, values, 1.0, 0.3)
    assert time.perf_counter() - start < 0.5


def test_simulation_path_is_the_textbook_formula():
    values = np.array([1.5, -2.25, 7.0])
    released = safe_noise.release_vector(SimulationNoise(9), values, 3.0, 0.4)
    np.testing.assert_array_equal(released, values + SimulationNoise(9).laplace(3.0 / 0.4, 3))
    light = safe_noise.release_vector(LightSimulationNoise(9), values, 3.0, 0.4)
    np.testing.assert_array_equal(light, values + LightSimulationNoise(9).laplace(3.0 / 0.4, 3))


def test_empty_vectors_pass_through():
    assert safe_noise.release_vector(Randomness(seed=1), np.array([]), 1.0, 1.0).size == 0


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError):
        safe_noise.vector_plan(3, 0.0, 1.0)
    with pytest.raises(ValueError):
        safe_noise.vector_plan(3, 1.0, -1.0)


# ---------------------------------------------------------------- noisy_scores
def test_noisy_scores_lie_on_the_score_grid_and_have_per_score_scale():
    scores = np.linspace(0.0, 40.0, 20_000) + 1 / 3
    plan = safe_noise.score_plan(2.0, 0.5)
    noisy = safe_noise.noisy_scores(Randomness(seed=8), scores, 2.0, 0.5)
    units_of(noisy[:50], plan.grid)
    assert Fraction(plan.sensitivity) / plan.scale <= Fraction(0.5)
    snapped = grid_release.snap(scores, plan.grid).astype(float) * float(plan.grid)
    deviations = (noisy - snapped) / float(plan.grid * plan.scale)
    assert stats.kstest(deviations, "laplace").pvalue > ALPHA
    assert float(plan.grid * plan.scale) == pytest.approx(2.0 / 0.5, rel=2**-19)


# ---------------------------------------------------------------- the exponential mechanism
@pytest.mark.parametrize("monotone", [False, True])
def test_exponential_choice_matches_its_law(monotone):
    scores = np.array([0.0, 1.25, -np.inf, 3.5, 2.0, 0.3333])
    sensitivity, epsilon, draws = 1.5, 1.1, 20_000
    noise = Randomness(seed=21 + monotone)
    picks = np.array([safe_noise.choose_exponential(noise, scores, sensitivity, epsilon, monotone)
                      for _ in range(draws)])
    observed = np.bincount(picks, minlength=scores.size)
    assert observed[2] == 0  # an ineligible candidate is never chosen
    eligible = np.flatnonzero(np.isfinite(scores))
    factor = epsilon / (sensitivity if monotone else 2 * sensitivity)
    weights = np.exp(factor * scores[eligible])
    assert stats.chisquare(observed[eligible], weights / weights.sum() * draws).pvalue > ALPHA


def test_exponential_rows_choose_independently_per_row():
    utilities = np.array([[0.0, 2.0, -np.inf], [5.0, 5.0, 4.0], [-np.inf, -np.inf, -np.inf]])
    noise = Randomness(seed=4)
    draws = 6_000
    picks = np.array([safe_noise.choose_exponential_rows(noise, utilities, 1.0, 2.0) for _ in range(draws)])
    assert np.all(picks[:, 2] == 0)  # a row without eligible candidates gets 0
    assert np.all(picks[:, 0] != 2)
    for row, eligible in ((0, [0, 1]), (1, [0, 1, 2])):
        weights = np.exp(2.0 * utilities[row, eligible] / 2.0)
        observed = np.bincount(picks[:, row], minlength=3)[eligible]
        assert stats.chisquare(observed, weights / weights.sum() * draws).pvalue > ALPHA


def test_exponential_simulation_path_is_gumbel_max():
    scores = np.array([0.5, 2.0, -np.inf, 1.0])
    chosen = safe_noise.choose_exponential(SimulationNoise(3), scores, 1.0, 0.8)
    gumbel = SimulationNoise(3).gumbel(4)
    assert chosen == int(np.argmax(0.8 * scores / 2.0 + gumbel))


def test_exponential_needs_a_finite_eligible_score():
    with pytest.raises(ValueError):
        safe_noise.choose_exponential(Randomness(seed=1), np.array([-np.inf, -np.inf]), 1.0, 1.0)
    with pytest.raises(ValueError):
        safe_noise.choose_exponential(Randomness(seed=1), np.array([1.0, np.nan]), 1.0, 1.0)


# ---------------------------------------------------------------- the rounded-up scale
@pytest.mark.parametrize("l1,epsilon,length", [(1.0, 1 / 3, 4096), (1.0, 0.05, 1), (5.0, 1e-9, 7), (1.0, 1e9, 3),
                                               (0.01, 0.7, 100)])
def test_simple_scale_only_adds_noise_and_stays_small(l1, epsilon, length):
    exact = grid_release.laplace_plan(l1, Fraction(epsilon), length, False, True)
    simple = grid_release.with_simple_scale(exact)
    assert simple.grid == exact.grid and simple.sensitivity == exact.sensitivity
    assert exact.scale <= simple.scale <= exact.scale * (1 + Fraction(1, 2**40))
    assert Fraction(simple.sensitivity) / simple.scale <= Fraction(epsilon)
    assert simple.scale.denominator & (simple.scale.denominator - 1) == 0  # a power of two
    assert simple.scale.numerator < 2**56 or simple.scale.denominator == 1
