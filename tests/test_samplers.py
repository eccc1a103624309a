"""Statistical and exactness tests of the exact samplers (jostle.privacy.exact_samplers), the grid
releases (jostle.privacy.grid_release) and the discrete Gaussian calibration (jostle.privacy.gaussian_privacy).

Every statistical test compares a sampler with its exact law at significance ALPHA = 1e-6:
binomial tests for Bernoulli draws, chi-squared tests on integer cells for the discrete
Laplace and Gaussian laws (cells chosen from quantiles of the exact CDF, each expecting at least
five draws), and KS tests where the law is effectively continuous. A correct sampler fails a
given test with probability at most about 1e-6. Samplers are tested through both of their
code paths (vectorised int64 batches, and the scalar Python-integer form used for small batches
and big parameters), including the paths that finish far-tail draws exactly, and from both the
seeded and the secure source.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from jostle.privacy import exact_samplers
from jostle.privacy.gaussian_privacy import (calibrate_discrete_gaussian, discrete_gaussian_delta_1d, gaussian_sigma,
                                     integer_sigma2, zcdp_delta)
from jostle.privacy.grid_release import gaussian_plan, laplace_plan, snap
from jostle.privacy.noise import Randomness, SimulationNoise

ALPHA = 1e-6
SOURCES = {"seeded": 20240611, "secure": None}


# ---------------------------------------------------------------- exact laws
def discrete_laplace_cdf(scale: Fraction) -> Callable[[int], float]:
    """P[X <= k] for P(k) = (1-p)/(1+p) p^|k|, p = exp(-1/scale): P[X >= m] = p^m/(1+p), m >= 1."""
    p = math.exp(-1 / float(scale))
    return lambda k: 1 - p ** (k + 1) / (1 + p) if k >= 0 else p ** (-k) / (1 + p)


def discrete_gaussian_cdf(sigma2: Fraction) -> Callable[[int], float]:
    """P[X <= k] for P(k) proportional to exp(-k^2 / (2 sigma2)), summed over +-40 sigma."""
    width = int(40 * math.sqrt(float(sigma2))) + 5
    ks = np.arange(-width, width + 1)
    weights = np.exp(-(ks.astype(float) ** 2) / (2 * float(sigma2)))
    cumulative = np.cumsum(weights) / weights.sum()
    return lambda k: 0.0 if k < -width else (1.0 if k >= width else float(cumulative[k + width]))


def quantile_boundaries(cdf: Callable[[int], float], span: int, cells: int) -> list[int]:
    """Distinct integers b with cdf(b) near j / cells (binary search in [-span, span])."""
    boundaries = []
    for j in range(1, cells):
        lo, hi = -span, span
        while lo < hi:
            middle = (lo + hi) // 2
            if cdf(middle) >= j / cells:
                hi = middle
            else:
                lo = middle + 1
        if not boundaries or lo > boundaries[-1]:
            boundaries.append(lo)
    return boundaries


def assert_integer_law(samples: np.ndarray, cdf: Callable[[int], float], span: int, what: str,
                       cells: int = 40) -> None:
    """Chi-squared test of integer samples against an exact CDF on quantile cells
    (-inf, b_0], (b_0, b_1], ..., (b_last, inf); neighbouring cells are merged until each
    expects at least 5 draws."""
    samples = np.asarray([int(v) for v in samples], dtype=object) if np.asarray(samples).dtype == object \
        else np.asarray(samples)
    n = len(samples)
    boundaries = quantile_boundaries(cdf, span, cells)
    edges = [-math.inf, *boundaries, math.inf]
    probabilities = [(cdf(int(b)) if b != math.inf else 1.0) - (cdf(int(a)) if a != -math.inf else 0.0)
                     for a, b in zip(edges[:-1], edges[1:])]
    observed = [int(np.sum((samples > a) & (samples <= b))) for a, b in zip(edges[:-1], edges[1:])]
    merged_p, merged_o = [], []
    for p, o in zip(probabilities, observed):
        if merged_p and merged_p[-1] * n < 5:
            merged_p[-1] += p
            merged_o[-1] += o
        else:
            merged_p.append(p)
            merged_o.append(o)
    if len(merged_p) > 1 and merged_p[-1] * n < 5:
        merged_p[-2] += merged_p.pop()
        merged_o[-2] += merged_o.pop()
    assert len(merged_p) >= 2, f"{what}: the law is too concentrated for a chi-squared test"
    expected = np.array(merged_p) * n
    assert abs(sum(merged_p) - 1) < 1e-9 and expected.min() >= 5
    result = stats.chisquare(merged_o, expected)
    assert result.pvalue > ALPHA, (f"{what}: chi2={result.statistic:.4g}, p={result.pvalue:.3g}, "
                                   f"observed={merged_o}, expected={np.round(expected, 1).tolist()}")


def scalar_draws(draw: Callable[[int], np.ndarray], n: int) -> np.ndarray:
    """`n` draws made one call at a time (the scalar Python-integer path)."""
    return np.concatenate([draw(1) for _ in range(n)])


# ---------------------------------------------------------------- uniform integers and Bernoulli
@pytest.mark.parametrize("source", SOURCES.values(), ids=SOURCES.keys())
@pytest.mark.parametrize("bound", [1, 2, 7, 1000])
def test_integers_below_are_uniform(source: int | None, bound: int) -> None:
    """integers_below(k) is uniform on 0 .. k-1, in batches and one at a time."""
    randomness = Randomness(source)
    for draws in (randomness.integers_below(bound, 70_000), scalar_draws(lambda m: randomness.integers_below(bound, m), 7_000)):
        assert draws.min() >= 0 and draws.max() < bound
        if bound > 1:
            counts = np.bincount(draws, minlength=bound)
            if bound > 100:  # group the 1000 values into 10 equiprobable blocks
                counts = counts.reshape(10, -1).sum(axis=1)
            result = stats.chisquare(counts)
            assert result.pvalue > ALPHA, f"integers_below({bound}): p={result.pvalue:.3g}"


def test_integers_below_huge_and_per_element_bounds() -> None:
    """Bounds above 2^62 give Python ints, uniform (top two bits are uniform); per-element
    bounds are respected and uniform for each element."""
    randomness = Randomness(3)
    huge = 2**100 + 12345
    draws = randomness.integers_below(huge, 20_000)
    assert draws.dtype == object and all(0 <= d < huge for d in draws)
    quarters = np.bincount([int(d * 4 // huge) for d in draws], minlength=4)
    assert stats.chisquare(quarters).pvalue > ALPHA
    bounds = np.tile(np.array([3, 5], dtype=np.int64), 30_000)
    draws = exact_samplers.integers_below(randomness.words, bounds, bounds.size)
    assert np.all(draws < bounds) and np.all(draws >= 0)
    for bound in (3, 5):
        assert stats.chisquare(np.bincount(draws[bounds == bound], minlength=bound)).pvalue > ALPHA


@pytest.mark.parametrize("source", SOURCES.values(), ids=SOURCES.keys())
@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2), Fraction(7),
                                   Fraction(2**40 + 1, 2**40)])
def test_bernoulli_exp_matches_exp_minus_gamma(source: int | None, gamma: Fraction) -> None:
    """Bernoulli(exp(-gamma)) (CKS Alg. 1) hits with probability exp(-gamma): exact binomial
    tests in a batch of 200k and over 20k one-at-a-time draws."""
    randomness = Randomness(source)
    p = math.exp(-float(gamma))
    for draws in (randomness.bernoulli_exp(gamma, 200_000),
                  scalar_draws(lambda m: randomness.bernoulli_exp(gamma, m), 20_000)):
        hits = int(draws.sum())
        if gamma == 0:
            assert hits == len(draws)
        else:
            assert stats.binomtest(hits, len(draws), p).pvalue > ALPHA, f"gamma={gamma}: {hits}/{len(draws)}"


def test_bernoulli_exp_of_a_huge_gamma_is_false_and_fast() -> None:
    """exp(-10^6) is 0 in floating point but not in the sampler; it must still stop quickly."""
    draws = Randomness(4).bernoulli_exp(Fraction(10**6), 10_000)
    assert not draws.any()


@pytest.mark.parametrize("probability", [Fraction(1, 3), Fraction(0), Fraction(1), Fraction(0.3)])
def test_bernoulli_rational_is_exact(probability: Fraction) -> None:
    """Bernoulli(p) for rational p, including the binary value of the float 0.3."""
    draws = Randomness(5).bernoulli_rational(probability, 100_000)
    hits = int(draws.sum())
    if probability in (0, 1):
        assert hits == int(probability) * 100_000
    else:
        assert stats.binomtest(hits, 100_000, float(probability)).pvalue > ALPHA


# ---------------------------------------------------------------- discrete Laplace
DLAP_SCALES = [Fraction(1, 3), Fraction(1), Fraction(10, 3), Fraction(2**55, 3602879701896397),
               Fraction(2**21), Fraction(2**21 + 1, 7)]


@pytest.mark.parametrize("source", SOURCES.values(), ids=SOURCES.keys())
@pytest.mark.parametrize("scale", DLAP_SCALES, ids=[f"{float(s):.4g}" for s in DLAP_SCALES])
def test_discrete_laplace_matches_its_pmf(source: int | None, scale: Fraction) -> None:
    """discrete_laplace(scale) has P(k) proportional to exp(-|k| / scale) (CKS Alg. 2), for
    integer and non-integer rational scales, batched (100k) and one draw at a time (10k)."""
    randomness = Randomness(source)
    cdf, span = discrete_laplace_cdf(scale), int(60 * scale) + 10
    batch = randomness.discrete_laplace(scale, 100_000)
    assert batch.dtype == np.int64
    assert_integer_law(batch, cdf, span, f"discrete_laplace({float(scale):.4g}) batch")
    single = scalar_draws(lambda m: randomness.discrete_laplace(scale, m), 10_000)
    assert_integer_law(single, cdf, span, f"discrete_laplace({float(scale):.4g}) one at a time")


def test_discrete_laplace_far_tail_is_finished_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the int64 cap on the geometric count V lowered to 1, about 13% of draws take the
    path that finishes them on Python ints; the law must be unchanged."""
    monkeypatch.setattr(exact_samplers, "_V_CAP", 1)
    scale = Fraction(7, 2)
    draws = Randomness(6).discrete_laplace(scale, 100_000)
    assert_integer_law(draws, discrete_laplace_cdf(scale), 300, "discrete_laplace with V capped at 1")


@pytest.mark.parametrize("scale", [Fraction(10**20), 1 / Fraction(1e-30)])
def test_discrete_laplace_with_a_huge_scale(scale: Fraction) -> None:
    """Scales beyond int64 use Python ints: |X| / scale is Exp(1) up to a relative 1/scale
    (P[|X| >= m] = 2 p^m / (1 + p)), so a KS test against Exp(1) applies; no draw is clipped."""
    draws = Randomness(7).discrete_laplace(scale, 3_000)
    assert draws.dtype == object
    magnitudes = np.array([float(Fraction(abs(int(v))) / scale) for v in draws])
    assert stats.kstest(magnitudes, stats.expon.cdf).pvalue > ALPHA
    signs = np.array([int(v) > 0 for v in draws])
    assert stats.binomtest(int(signs.sum()), len(signs), 0.5).pvalue > ALPHA


# ---------------------------------------------------------------- discrete Gaussian
DGAUSS_CASES = [(Fraction(1, 2), None), (Fraction(9, 4), None), (Fraction(9), None), (Fraction(9), 2),
                (Fraction(9), 20), (Fraction(5000**2 + 17, 3), None), integer_sigma2(Fraction(4096 * 3 + 1, 3))]


@pytest.mark.parametrize("source", SOURCES.values(), ids=SOURCES.keys())
@pytest.mark.parametrize("sigma2,t", DGAUSS_CASES, ids=[f"s2={float(c[0]):.4g},t={c[1]}" for c in DGAUSS_CASES])
def test_discrete_gaussian_matches_its_pmf(source: int | None, sigma2: Fraction, t: int | None) -> None:
    """discrete_gaussian(sigma2) has P(k) proportional to exp(-k^2 / (2 sigma2)) (CKS Alg. 3),
    for rational sigma2 and for any proposal scale t (the law must not depend on t), batched
    (100k) and one draw at a time (5k)."""
    randomness = Randomness(source)
    cdf, span = discrete_gaussian_cdf(sigma2), int(40 * math.sqrt(float(sigma2))) + 5
    batch = randomness.discrete_gaussian(sigma2, 100_000, t)
    assert_integer_law(batch, cdf, span, f"discrete_gaussian({float(sigma2):.4g}, t={t}) batch")
    single = scalar_draws(lambda m: randomness.discrete_gaussian(sigma2, m, t), 5_000)
    assert_integer_law(single, cdf, span, f"discrete_gaussian({float(sigma2):.4g}, t={t}) one at a time")


def test_discrete_gaussian_far_proposals_are_finished_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the int64 cap on | |y| - sigma^2/t | lowered to 5, most acceptance tests run on
    Python ints; the law must be unchanged."""
    monkeypatch.setattr(exact_samplers, "_DIFF_CAP", 5)
    sigma2 = Fraction(30)
    draws = Randomness(8).discrete_gaussian(sigma2, 60_000)
    assert_integer_law(draws, discrete_gaussian_cdf(sigma2), 300, "discrete_gaussian with a low cap")


def test_discrete_gaussian_with_a_huge_sigma() -> None:
    """sigma^2 = 10^40 runs on Python ints; X / sigma is N(0, 1) (KS)."""
    draws = Randomness(9).discrete_gaussian(Fraction(10**40), 2_000)
    assert draws.dtype == object
    assert stats.kstest([float(int(v)) / 1e20 for v in draws], stats.norm.cdf).pvalue > ALPHA


# ---------------------------------------------------------------- the Randomness interface
def test_randomness_noise_lies_on_power_of_two_grids() -> None:
    """laplace(scale) is a multiple of min(1, 2^(floor(log2 scale) - 20)); integers plus it stay
    on that grid; normal(sigma) is a multiple of 2^(floor(log2 sigma) - 16); geometric is int."""
    randomness = Randomness(10)
    for scale, grid in ((0.37, 2.0**-22), (5.0, 2.0**-18), (3e7, 1.0)):
        noise = randomness.laplace(scale, 1000)
        assert np.all(np.mod(noise / grid, 1) == 0) and np.all(np.mod((noise + 41) / grid, 1) == 0)
    noise = randomness.normal(3.0, 1000)
    assert np.all(np.mod(noise / 2.0**-15, 1) == 0)
    assert randomness.two_sided_geometric(0.3, 10).dtype == np.int64


def test_seeded_streams_are_reproducible_and_secure_is_default() -> None:
    """The same seed gives the same draws (every sampler reads the one word stream)."""
    first, second = Randomness(11), Randomness(11)
    for randomness in (first, second):
        randomness.discrete_gaussian(Fraction(9), 50)
    assert np.array_equal(first.discrete_laplace(Fraction(3), 40), second.discrete_laplace(Fraction(3), 40))
    assert Randomness().secure and not Randomness(1).secure and not SimulationNoise(1).secure


PUBLIC_METHODS = ["uniform", "laplace", "normal", "two_sided_geometric", "gumbel", "bernoulli", "choice",
                  "integers_below", "bernoulli_rational", "bernoulli_exp", "discrete_laplace", "discrete_gaussian",
                  "exponential_index"]


@pytest.mark.parametrize("source", ["seeded", "secure", "simulation"])
def test_exponential_index_has_exponential_weights(source: str) -> None:
    """exponential_index(u, c) picks i with probability exp(c u_i) / sum_j exp(c u_j)
    (chi-squared over 20k picks), for real utilities and a rational coefficient."""
    noise = SimulationNoise(13) if source == "simulation" else Randomness(SOURCES[source])
    utilities, coefficient = np.array([0.0, 1.5, -2.25, 3.0, 3.0]), Fraction(3, 5)
    picks = np.array([noise.exponential_index(utilities, coefficient) for _ in range(20_000)])
    weights = np.exp(float(coefficient) * utilities)
    result = stats.chisquare(np.bincount(picks, minlength=5), 20_000 * weights / weights.sum())
    assert result.pvalue > ALPHA, f"{source}: p={result.pvalue:.3g}"


def test_exponential_index_with_a_huge_gap_never_overflows() -> None:
    """A gap of 10^6 in the exponent (exp underflows in floats) is still sampled exactly: the
    best candidate always wins; equal utilities split evenly."""
    randomness = Randomness(14)
    assert {randomness.exponential_index([0.0, 1e6, -1e300], 1) for _ in range(200)} == {1}
    picks = [randomness.exponential_index([2.0, 2.0], Fraction(10**6)) for _ in range(4_000)]
    assert stats.binomtest(sum(picks), 4_000, 0.5).pvalue > ALPHA


def test_simulation_noise_has_the_same_interface_and_laws() -> None:
    """SimulationNoise offers every noise method of Randomness, with the same laws (KS /
    chi-squared at 1e-6), as plain NumPy floats."""
    simulation = SimulationNoise(12)
    for name in PUBLIC_METHODS:
        assert callable(getattr(simulation, name)), name
    assert stats.kstest(simulation.laplace(2.0, 50_000), stats.laplace(scale=2.0).cdf).pvalue > ALPHA
    assert stats.kstest(simulation.normal(3.0, 50_000), stats.norm(scale=3.0).cdf).pvalue > ALPHA
    assert_integer_law(simulation.discrete_laplace(Fraction(10, 3), 50_000),
                       discrete_laplace_cdf(Fraction(10, 3)), 300, "SimulationNoise.discrete_laplace")
    assert_integer_law(simulation.two_sided_geometric(0.3, 50_000), discrete_laplace_cdf(1 / Fraction(0.3)), 300,
                       "SimulationNoise.two_sided_geometric")
    uniform = simulation.uniform(50_000)
    assert np.all((uniform > 0) & (uniform < 1))


# ---------------------------------------------------------------- the grid: rounding and sensitivity
finite = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(x=finite, shift=st.floats(min_value=0, max_value=1e6), exponent=st.integers(-30, 10))
def test_snap_is_exact_rounding_and_moves_at_most_ceil(x: float, shift: float, exponent: int) -> None:
    """snap(x, g) = floor(x/g + 1/2) exactly, and neighbours |x - x'| <= d snap at most
    ceil(d / g) apart: the lemma the grid releases charge for."""
    grid = Fraction(2) ** exponent
    k = int(snap(x, grid)[0])
    assert k == math.floor(Fraction(x) / grid + Fraction(1, 2))
    x_prime = x + shift
    moved = abs(int(snap(x_prime, grid)[0]) - k)
    assert moved <= math.ceil(Fraction(abs(x_prime - x)) / grid)


@settings(max_examples=100, deadline=None)
@given(values=st.lists(finite, min_size=1, max_size=20), data=st.data())
def test_snapped_vectors_stay_within_the_plan_sensitivity(values: list[float], data: st.DataObject) -> None:
    """For any vector and any neighbour within L1 distance D (measured exactly on the doubles),
    the snapped vectors differ by at most the Laplace plan's grid sensitivity (floor(D/g) + n
    for real vectors), and that sensitivity over the noise scale is exactly epsilon."""
    n = len(values)
    weights = np.array(data.draw(st.lists(st.floats(min_value=0, max_value=1), min_size=n, max_size=n)))
    total = data.draw(st.floats(min_value=1e-3, max_value=1e3))
    if weights.sum() == 0:
        weights[0] = 1.0
    neighbour = np.array(values) + weights / weights.sum() * total
    distance = sum(abs(Fraction(float(b)) - Fraction(float(a))) for a, b in zip(values, neighbour))
    sensitivity = float(distance) if Fraction(float(distance)) >= distance else math.nextafter(float(distance), math.inf)
    if sensitivity == 0:
        return
    plan = laplace_plan(sensitivity, Fraction(1, 2), n, False, True)
    moved = int(np.sum(np.abs(snap(neighbour, plan.grid) - snap(np.array(values), plan.grid))))
    assert moved <= plan.sensitivity
    assert Fraction(plan.sensitivity) / plan.scale == Fraction(1, 2)


@pytest.mark.parametrize("l1,epsilon,length,integer,vector", [
    (1.0, Fraction(1, 2), 1, True, False), (1.0, Fraction(1, 2), 4096, True, True),
    (100.0, Fraction(1), 1, False, False), (0.1, Fraction(3), 50, False, True),
    (1.0, Fraction(1000), 1, True, False), (1.0, 1 / Fraction(1e-30), 1, True, False)])
def test_laplace_plans_meet_epsilon_with_little_slack(l1: float, epsilon: Fraction, length: int, integer: bool,
                                                      vector: bool) -> None:
    """Every plan charges exactly eps for its grid sensitivity, uses a power-of-two grid, puts
    integers on the grid (no slack), and inflates the noise scale by at most 2^-19 over l1/eps."""
    plan = laplace_plan(l1, epsilon, length, integer, vector)
    assert plan.grid.numerator == 1 or plan.grid.denominator == 1
    assert Fraction(plan.sensitivity) / plan.scale == epsilon
    if integer:
        assert plan.grid <= 1 and Fraction(plan.sensitivity) == Fraction(l1) / plan.grid
    inflation = plan.scale * plan.grid / (Fraction(l1) / epsilon)
    assert 1 <= inflation <= 1 + Fraction(1, 2**19)


# ---------------------------------------------------------------- the discrete Gaussian calibration
def exact_delta(sigma2: float, epsilon: float, shift: int) -> float:
    """CKS Thm 7's delta for shift mu, by direct summation of the pmf (independent check)."""
    width = int(60 * math.sqrt(sigma2)) + shift + 10
    ks = np.arange(-width, width + 1)
    pmf = np.exp(-(ks.astype(float) ** 2) / (2 * sigma2))
    pmf /= pmf.sum()
    a = epsilon * sigma2 / shift - shift / 2
    return float(pmf[ks > a].sum() - math.exp(epsilon) * pmf[ks > a + shift].sum())


@pytest.mark.parametrize("sigma2,epsilon,max_shift", [(Fraction(3), Fraction(1), 1), (Fraction(25), Fraction(1, 2), 1),
                                                      (Fraction(400), Fraction(1, 2), 3),
                                                      (Fraction(10**4), Fraction(1, 10), 20)])
def test_one_axis_delta_bound_is_above_the_exact_delta(sigma2: Fraction, epsilon: Fraction, max_shift: int) -> None:
    """The certified bound is at least the exact delta of every shift (computed by summation)
    and within a factor 10 of the worst one."""
    bound = discrete_gaussian_delta_1d(sigma2, epsilon, max_shift)
    worst = max(exact_delta(float(sigma2), float(epsilon), mu) for mu in range(1, max_shift + 1))
    assert worst <= bound <= 10 * worst


@pytest.mark.parametrize("epsilon,delta,max_shift", [(Fraction(1, 2), Fraction(1, 10**6), 64),
                                                     (Fraction(2), Fraction(1, 10**3), 64),
                                                     (Fraction(1), Fraction(1, 10**9), 16)])
def test_calibrated_sigma_meets_delta_exactly_computed(epsilon: Fraction, delta: Fraction, max_shift: int) -> None:
    """At the calibrated sigma^2 the exactly summed delta of every shift is <= delta; at 0.98
    of that sigma^2 some shift violates it (the calibration is not wastefully loose: what it
    adds is mostly the rounding of sigma^2 up to a multiple of t, about 1/sigma)."""
    sigma2, t = calibrate_discrete_gaussian(epsilon, delta, max_shift=max_shift)
    assert sigma2.denominator == 1 and sigma2.numerator % t == 0  # sigma^2 = c t: CKS Alg. 3's centre c
    worst = max(exact_delta(float(sigma2), float(epsilon), mu) for mu in range(1, max_shift + 1))
    assert worst <= float(delta)
    looser = max(exact_delta(0.98 * float(sigma2), float(epsilon), mu) for mu in range(1, max_shift + 1))
    assert looser > float(delta)


def test_zcdp_delta_is_the_cks_conversion() -> None:
    """zcdp_delta equals min over alpha of CKS Cor. 13 (checked by a fine independent grid)
    to within 1e-6 relative, and is at least the exact continuous-Gaussian delta."""
    for rho, epsilon in ((0.01, 0.5), (0.5, 1.0), (0.001, 0.1), (2.0, 5.0)):
        alphas = 1 + np.exp(np.linspace(-20, 12, 400_001))
        logs = (alphas - 1) * (alphas * rho - epsilon) + alphas * np.log1p(-1 / alphas) - np.log(alphas - 1)
        reference = float(np.exp(logs.min()))
        assert zcdp_delta(rho, epsilon) == pytest.approx(reference, rel=1e-6)
        sigma = 1 / math.sqrt(2 * rho)  # rho = 1 / (2 sigma^2) for sensitivity 1
        continuous = stats.norm.cdf(0.5 / sigma - epsilon * sigma) - math.exp(epsilon) * stats.norm.cdf(
            -0.5 / sigma - epsilon * sigma)
        assert zcdp_delta(rho, epsilon) >= continuous


@pytest.mark.parametrize("l1,l2,length,integer,vector,low,high", [
    (1.0, 1.0, 1, True, False, 1.0, 1.001),            # a count: CKS Thm 7, nearly analytic
    (1.0, 1.0, 4096, True, True, 1.0, 1.001),          # a histogram: one cell moves, same
    (100.0, 100.0, 1, False, False, 1.0, 1.001),       # a real sum
    (2.0, math.sqrt(2.0), 10, True, True, 1.0, 1.2),   # a vector moving in two cells: zCDP
    (5.0, 3.0, 64, False, True, 1.0, 1.2)])            # a real vector: zCDP plus rounding slack
def test_gaussian_plans_are_close_to_the_analytic_sigma(l1: float, l2: float, length: int, integer: bool,
                                                        vector: bool, low: float, high: float) -> None:
    """The released noise's sigma over the analytic (continuous) sigma for l2."""
    epsilon, delta = Fraction(1, 2), Fraction(1, 10**6)
    plan = gaussian_plan(l1, l2, epsilon, delta, length, integer, vector)
    ratio = plan.sigma / gaussian_sigma(0.5, 1e-6, l2)
    assert low <= ratio <= high, f"sigma ratio {ratio}"


def test_calibration_handles_huge_and_tiny_epsilon() -> None:
    """eps = 1000 and eps = 10^-4 calibrate without overflow and certify their delta."""
    for epsilon in (Fraction(1000), Fraction(1, 10**4)):
        sigma2, _ = calibrate_discrete_gaussian(epsilon, Fraction(1, 10**5), max_shift=4096)
        assert discrete_gaussian_delta_1d(sigma2, epsilon, 4096) <= 1e-5
    assert gaussian_sigma(1000.0, 1e-5, 1.0) < 0.05
