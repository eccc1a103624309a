"""Statistical tests of the output distributions of Jostle's noise sources and release mechanisms.

Every test uses a fixed seed (except the ``secure`` variants, which exercise the
``secrets`` path and cannot be seeded) and every tolerance is derived from the sampling
distribution of the statistic at significance ``ALPHA = 1e-6``: Kolmogorov-Smirnov tests for
continuous laws, chi-squared tests for discrete ones, exact Gamma / chi-squared tests (and two
z-tests) for moments and Clopper-Pearson bounds for single probabilities. A correct implementation therefore fails a given test with
probability at most about 1e-6; a wrong calibration (e.g. a noise scale off by a constant
factor) fails it with overwhelming probability at the sample sizes used.

Private values are made *by the language* (``count(t)``, ``histogram(t, "grp")`` ...) in a
Session, and the release functions of ``jostle.language.mechanisms`` (exactly what the built-ins call)
are then invoked many times with a small release context holding a fresh
``jostle.privacy.budget.Accountant`` per draw, because looping inside Jostle is far too slow for tens of
thousands of draws. ``test_language_release_is_the_mechanism`` checks that ``Session.eval``
routes each built-in to that very function with the same arguments.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, optimize, stats

from jostle import Session

from jostle.privacy import grid_release

from jostle.language import mechanisms
from jostle.privacy.budget import Accountant, Budget
from jostle.diagnostics.errors import PrivacyError
from jostle.privacy.noise import Randomness, gaussian_sigma
from jostle.language.sensitivity import private_vector
from jostle.diagnostics.source import BUILTIN_SPAN

ALPHA = 1e-6
Z_CRIT = float(stats.norm.isf(ALPHA / 2))  # two-sided z critical value at ALPHA
CAP = Budget(Fraction(10**9), Fraction(1, 2))  # effectively unlimited, with room for delta

SCHEMA = {
    "age": {"type": "numeric", "bounds": [0, 100]},
    "balance": {"type": "numeric", "bounds": [-250, 100]},
    "sex": {"type": "categorical", "values": ["F", "M"]},
    "grp": {"type": "categorical", "values": ["a", "b", "c", "d"]},
}
SOURCES = {"seeded": 20240601, "secure": None}


# ---------------------------------------------------------------- helpers
class ReleaseCtx:
    """A minimal ``ReleaseContext``: a shared source of randomness and a fresh accountant.

    A fresh accountant per draw keeps each charge O(1) (the accountant re-costs its whole
    ledger on every charge) while still exercising the charge-then-draw path.

    Args:
        randomness: The source the mechanism draws from.
    """

    def __init__(self, randomness: Randomness) -> None:
        self.randomness = randomness
        self.accountant = Accountant(CAP)


def draws(n: int, randomness: Randomness, release: Callable[..., Any], *args: Any) -> list[Any]:
    """Call ``release(ctx, *args, span)`` ``n`` times and collect the outputs."""
    return [release(ReleaseCtx(randomness), *args, BUILTIN_SPAN) for _ in range(n)]


def people(counts: dict[str, int], seed: int = 0) -> pd.DataFrame:
    """A table with ``counts[g]`` rows in group ``g`` and seeded random other columns."""
    rng = np.random.default_rng(seed)
    groups = [g for g, k in counts.items() for _ in range(k)]
    n = len(groups)
    return pd.DataFrame({
        "age": rng.integers(0, 101, n),
        "balance": rng.uniform(-250, 100, n).round(2),
        "sex": rng.choice(["F", "M"], n),
        "grp": groups,
    })


def session_with(frame: pd.DataFrame, seed: int | None = 1, budget: float = 1e6,
                 delta: float = 0.5, public_rows: bool = False) -> Session:
    """A Session with ``frame`` bound as the private table ``t`` under ``SCHEMA``."""
    session = Session(budget=budget, delta=delta, seed=seed)
    session.bind_private("t", frame, SCHEMA, public_rows=public_rows)
    return session


def language_value(session: Session, expression: str) -> Any:
    """The run-time value (possibly private) of a Jostle expression, evaluated in ``session``."""
    session.run(f"value_under_test = {expression}")
    return session.interpreter.globals.lookup("value_under_test")


def assert_ks(samples: np.ndarray, cdf: Callable, what: str) -> None:
    """One-sample Kolmogorov-Smirnov test at ``ALPHA``."""
    result = stats.kstest(np.asarray(samples, dtype=float), cdf)
    assert result.pvalue > ALPHA, f"{what}: KS D={result.statistic:.4g}, p={result.pvalue:.3g}"


def assert_discrete_fit(observed: np.ndarray, probabilities: np.ndarray, what: str) -> None:
    """Chi-squared goodness-of-fit at ``ALPHA``; the cells must partition the outcome space."""
    observed = np.asarray(observed, dtype=float)
    probabilities = np.asarray(probabilities, dtype=float)
    assert abs(probabilities.sum() - 1) < 1e-9, f"{what}: cells do not cover the outcomes"
    expected = probabilities * observed.sum()
    assert expected.min() >= 5, f"{what}: a cell expects fewer than 5 (invalid chi-squared test)"
    result = stats.chisquare(observed, expected)
    assert result.pvalue > ALPHA, (
        f"{what}: chi2={result.statistic:.4g}, p={result.pvalue:.3g}, "
        f"observed={observed.tolist()}, expected={np.round(expected, 1).tolist()}"
    )


def assert_mean_abs_is_scale(noise: np.ndarray, scale: float, what: str) -> None:
    """Exact two-sided test of E|X| = scale for X ~ Laplace(0, scale).

    |X| ~ Exp(scale), so the sum of n of them is Gamma(n, scale); this test is far more
    sensitive to a wrong scale than the KS test (at n = 12000 it detects a scale error of about 5%).
    """
    total = float(np.sum(np.abs(noise)))
    law = stats.gamma(a=len(noise), scale=scale)
    pvalue = 2 * min(law.cdf(total), law.sf(total))
    assert pvalue > ALPHA, f"{what}: mean |noise| = {total / len(noise):.4g}, scale {scale} (p={pvalue:.3g})"


def geometric_cells(samples: np.ndarray, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Observed counts and probabilities of P(k) = (1-p)/(1+p) p^|k|, p = e^-eps, on
    cells {<-K}, -K, ..., K, {>K} with K the largest value whose cell expects >= 5."""
    p = math.exp(-epsilon)
    n = len(samples)
    point = lambda k: (1 - p) / (1 + p) * p ** abs(k)  # noqa: E731
    big_k = 0
    while n * point(big_k + 1) >= 5 and n * p ** (big_k + 2) / (1 + p) >= 5:
        big_k += 1
    tail = p ** (big_k + 1) / (1 + p)  # P(k > K) = P(k < -K)
    ks = np.arange(-big_k, big_k + 1)
    probabilities = np.concatenate([[tail], [point(k) for k in ks], [tail]])
    observed = np.concatenate([[np.sum(samples < -big_k)], [np.sum(samples == k) for k in ks],
                               [np.sum(samples > big_k)]])
    return observed, probabilities


def balle_wang_gap(sigma: float, epsilon: float, delta: float, sensitivity: float) -> float:
    """Left side minus right side of the analytic Gaussian condition (Balle & Wang 2018, Thm 8)."""
    a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
    return float(stats.norm.cdf(a - b) - math.exp(epsilon) * stats.norm.cdf(-a - b) - delta)


def reference_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """The analytic Gaussian sigma, found independently of jostle with scipy's brentq."""
    return optimize.brentq(balle_wang_gap, 1e-6 * sensitivity, 1e6 * sensitivity,
                           args=(epsilon, delta, sensitivity), xtol=1e-14, rtol=1e-13)


# ---------------------------------------------------------------- noise.Randomness
@pytest.mark.parametrize("source", SOURCES.values(), ids=SOURCES.keys())
def test_uniform_is_uniform_strictly_inside_unit_interval(source: int | None) -> None:
    """100k uniforms lie in (0, 1) and pass a KS test against U(0, 1)."""
    u = Randomness(source).uniform(100_000)
    assert u.shape == (100_000,) and np.all(u > 0) and np.all(u < 1)
    assert_ks(u, stats.uniform.cdf, "uniform")


class _ExtremeDraws(Randomness):
    """Randomness whose 53-bit integer draws are the given values (the extremes of the range)."""

    def __init__(self, values: list[int]) -> None:
        super().__init__(0)
        self.values = values

    def _integers53(self, size: int) -> np.ndarray:
        return np.resize(np.asarray(self.values, dtype=np.float64), size)


def test_uniform_lowest_integer_draw_is_above_zero() -> None:
    """The smallest 53-bit draw (0) maps strictly above 0."""
    assert _ExtremeDraws([0]).uniform(1)[0] > 0


def test_uniform_highest_integer_draw_is_below_one() -> None:
    """The largest 53-bit draw (2^53 - 1), reachable on both paths, maps strictly below 1."""
    extreme = _ExtremeDraws([2**53 - 1])
    assert extreme.uniform(1)[0] < 1
    assert np.isfinite(extreme.laplace(1.0, 1)[0])


@pytest.mark.parametrize("source", SOURCES.values(), ids=SOURCES.keys())
@pytest.mark.parametrize("scale", [0.3, 1.0, 25.0])
def test_laplace_matches_scipy(source: int | None, scale: float) -> None:
    """Randomness.laplace(scale) is Laplace(0, scale): KS test and the E|X| = scale z-test."""
    x = Randomness(source).laplace(scale, 100_000)
    assert_ks(x, stats.laplace(scale=scale).cdf, f"laplace({scale})")
    assert_mean_abs_is_scale(x, scale, f"laplace({scale})")


@pytest.mark.parametrize("source", SOURCES.values(), ids=SOURCES.keys())
@pytest.mark.parametrize("epsilon", [0.1, 0.7, 2.0])
def test_two_sided_geometric_matches_pmf(source: int | None, epsilon: float) -> None:
    """two_sided_geometric(eps) has P(k) proportional to exp(-eps |k|) (chi-squared)."""
    k = Randomness(source).two_sided_geometric(epsilon, 100_000)
    assert k.dtype.kind == "i"
    observed, probabilities = geometric_cells(k, epsilon)
    assert_discrete_fit(observed, probabilities, f"two_sided_geometric({epsilon})")


@pytest.mark.parametrize("source", SOURCES.values(), ids=SOURCES.keys())
@pytest.mark.parametrize("sigma", [0.5, 3.0])
def test_normal_matches_scipy(source: int | None, sigma: float) -> None:
    """Randomness.normal(sigma) is N(0, sigma^2) (KS test)."""
    assert_ks(Randomness(source).normal(sigma, 100_000), stats.norm(scale=sigma).cdf, f"normal({sigma})")


@pytest.mark.parametrize("source", SOURCES.values(), ids=SOURCES.keys())
def test_gumbel_matches_scipy(source: int | None) -> None:
    """Randomness.gumbel is the standard Gumbel law (KS test against scipy.stats.gumbel_r)."""
    assert_ks(Randomness(source).gumbel(100_000), stats.gumbel_r.cdf, "gumbel")


@pytest.mark.parametrize("source", SOURCES.values(), ids=SOURCES.keys())
def test_bernoulli_and_choice_frequencies(source: int | None) -> None:
    """bernoulli(p) and choice(k), used by randomized response, have the right frequencies."""
    randomness = Randomness(source)
    hits = int(randomness.bernoulli(0.3, 100_000).sum())
    assert_discrete_fit(np.array([hits, 100_000 - hits]), np.array([0.3, 0.7]), "bernoulli(0.3)")
    picks = randomness.choice(7, 100_000)
    assert picks.min() >= 0 and picks.max() <= 6
    assert_discrete_fit(np.bincount(picks, minlength=7), np.full(7, 1 / 7), "choice(7)")


def test_seeded_randomness_is_reproducible() -> None:
    """The same seed gives the same stream; a different seed a different one."""
    assert np.array_equal(Randomness(7).laplace(1.0, 50), Randomness(7).laplace(1.0, 50))
    assert not np.array_equal(Randomness(7).laplace(1.0, 50), Randomness(8).laplace(1.0, 50))


# ---------------------------------------------------------------- noise.gaussian_sigma
GAUSSIAN_CASES = [(eps, delta, sens) for eps in (0.05, 0.5, 0.99, 1.0, 3.0)
                  for delta in (1e-3, 1e-6, 1e-10) for sens in (1.0, 7.5)]


@pytest.mark.parametrize("epsilon,delta,sensitivity", GAUSSIAN_CASES)
def test_gaussian_sigma_is_the_tight_analytic_threshold(epsilon: float, delta: float,
                                                        sensitivity: float) -> None:
    """sigma satisfies the Balle-Wang condition, 0.99 sigma violates it, and it agrees with an
    independent scipy root-find of the condition."""
    sigma = gaussian_sigma(epsilon, delta, sensitivity)
    assert balle_wang_gap(sigma, epsilon, delta, sensitivity) <= 1e-15
    assert balle_wang_gap(0.99 * sigma, epsilon, delta, sensitivity) > 0
    assert sigma == pytest.approx(reference_sigma(epsilon, delta, sensitivity), rel=1e-9)


@pytest.mark.parametrize("epsilon,delta,sensitivity", [c for c in GAUSSIAN_CASES if c[0] < 1])
def test_gaussian_sigma_beats_classic_bound(epsilon: float, delta: float, sensitivity: float) -> None:
    """For eps < 1 the analytic sigma is below the classic sqrt(2 ln(1.25/delta)) D / eps."""
    classic = math.sqrt(2 * math.log(1.25 / delta)) * sensitivity / epsilon
    assert gaussian_sigma(epsilon, delta, sensitivity) < classic


def test_gaussian_sigma_of_zero_sensitivity_is_zero() -> None:
    """A query that cannot change needs no noise."""
    assert gaussian_sigma(1.0, 1e-6, 0.0) == 0.0


# ---------------------------------------------------------------- the language calls the mechanisms
HIST = 'histogram(t, "grp")'
ROUTES = [  # (program, mechanism function, the private value it releases, remaining arguments)
    ("laplace(count(t), 0.5)", mechanisms.laplace, "count(t)", (0.5,)),
    ('laplace(sum(t, "balance"), 0.25)', mechanisms.laplace, 'sum(t, "balance")', (0.25,)),
    ('laplace(mean(t, "age"), 0.5)', mechanisms.laplace, 'mean(t, "age")', (0.5,)),
    (f"laplace({HIST}, 0.5)", mechanisms.laplace, HIST, (0.5,)),
    ("geometric(count(t), 0.5)", mechanisms.geometric, "count(t)", (0.5,)),
    ("gaussian(count(t), 0.5, 0.0001)", mechanisms.gaussian, "count(t)", (0.5, 0.0001)),
    (f"report_noisy_max({HIST}, 0.5)", mechanisms.report_noisy_max, HIST, (0.5,)),
    (f"above_threshold({HIST}, 4, 0.5)", mechanisms.above_threshold, HIST, (4, 0.5)),
    ('randomized_response(t, "grp", 0.5)', mechanisms.randomized_response, "t", ("grp", 0.5)),
]
GROUP_COUNTS = 'map(lambda g: count(t.where(lambda r: r.grp == g)), ["a", "b", "c", "d"])'


@pytest.mark.parametrize("source,release,value,args", ROUTES,
                         ids=[r[0].split("(")[0] + str(i) for i, r in enumerate(ROUTES)])
@pytest.mark.parametrize("seed", [3, 11])
def test_language_release_is_the_mechanism(seed: int, source: str, release: Callable, value: str,
                                           args: tuple) -> None:
    """``Session.eval(source)`` with seed s equals calling the mechanism on the same private
    value with ``Randomness(s)``: the statistical tests below do test what programs get."""
    frame = people({"a": 7, "b": 4, "c": 1, "d": 0})
    released = session_with(frame, seed=seed, public_rows=True).eval(source)
    private = language_value(session_with(frame, seed=None, public_rows=True), value)
    direct = release(ReleaseCtx(Randomness(seed)), private, *args, BUILTIN_SPAN)
    if isinstance(direct, tuple):
        assert list(direct) == released
    else:
        np.testing.assert_array_equal(np.asarray(released), np.asarray(direct))


def test_language_exponential_is_the_mechanism() -> None:
    """``exponential(...)`` in Jostle equals the mechanism on the language-made utilities."""
    frame = people({"a": 7, "b": 4, "c": 1, "d": 0})
    source = 'exponential(["a", "b", "c", "d"], lambda g: count(t.where(lambda r: r.grp == g)), 0.5, 1)'
    for seed in range(5):
        released = session_with(frame, seed=seed).eval(source)
        scores = list(language_value(session_with(frame), GROUP_COUNTS))
        direct = mechanisms.exponential(ReleaseCtx(Randomness(seed)), ("a", "b", "c", "d"), scores, 0.5, 1,
                                        BUILTIN_SPAN)
        assert released == direct


# ---------------------------------------------------------------- Laplace, geometric, Gaussian
def test_laplace_count_noise_is_laplace() -> None:
    """laplace(count(t), eps) minus the true count is Laplace(1/eps)."""
    epsilon, frame = 0.5, people({"a": 30, "b": 12})
    count = language_value(session_with(frame), "count(t)")
    noise = np.array(draws(12_000, Randomness(101), mechanisms.laplace, count, epsilon)) - 42
    assert_ks(noise, stats.laplace(scale=1 / epsilon).cdf, "laplace(count)")
    assert_mean_abs_is_scale(noise, 1 / epsilon, "laplace(count)")


@pytest.mark.parametrize("column,magnitude", [("age", 100.0), ("balance", 250.0)])
def test_laplace_sum_scale_is_largest_bound_magnitude_over_eps(column: str, magnitude: float) -> None:
    """laplace(sum(t, c), eps) has scale max(|lo|, |hi|)/eps: 100 for age in [0, 100],
    250 for balance in [-250, 100]."""
    epsilon, frame = 2.0, people({"a": 25})
    true_sum = float(frame[column].sum())
    total = language_value(session_with(frame), f'sum(t, "{column}")')
    noise = np.array(draws(10_000, Randomness(102), mechanisms.laplace, total, epsilon)) - true_sum
    assert_ks(noise, stats.laplace(scale=magnitude / epsilon).cdf, f"laplace(sum {column})")
    assert_mean_abs_is_scale(noise, magnitude / epsilon, f"laplace(sum {column})")


def test_geometric_count_is_two_sided_geometric() -> None:
    """geometric(count(t), eps) minus the count has P(k) proportional to exp(-eps |k|)."""
    epsilon, frame = 0.4, people({"a": 9, "c": 4})
    count = language_value(session_with(frame), "count(t)")
    released = draws(10_000, Randomness(103), mechanisms.geometric, count, epsilon)
    assert all(isinstance(x, int) for x in released)
    observed, probabilities = geometric_cells(np.array(released) - 13, epsilon)
    assert_discrete_fit(observed, probabilities, "geometric(count)")


def test_gaussian_count_uses_the_analytic_sigma() -> None:
    """gaussian(count(t), eps, delta) minus the count is N(0, sigma^2), sigma from an
    independent root-find of the Balle-Wang condition (KS test and an exact chi-squared variance test).

    The release is a discrete Gaussian on the grid 2^-12 whose sigma is certified for the
    discrete law and exceeds the analytic one by less than 1e-3 (see test_samplers.py); at
    6000 draws neither difference is detectable, so this checks the scale end to end."""
    epsilon, delta, frame = 0.5, 1e-6, people({"b": 20})
    sigma = reference_sigma(epsilon, delta, 1.0)
    count = language_value(session_with(frame), "count(t)")
    noise = np.array(draws(6_000, Randomness(104), mechanisms.gaussian, count, epsilon, delta)) - 20
    assert_ks(noise, stats.norm(scale=sigma).cdf, "gaussian(count)")
    law = stats.chi2(df=len(noise))  # sum (X/sigma)^2 is chi-squared with n degrees of freedom
    statistic = float(np.sum((noise / sigma) ** 2))
    pvalue = 2 * min(law.cdf(statistic), law.sf(statistic))
    assert pvalue > ALPHA, f"the noise variance is not sigma^2 = {sigma**2:.4g} (p={pvalue:.3g})"


GAUSSIAN_VECTORS = {  # expression, true values, how neighbours differ (see jostle.privacy.grid_release)
    "histogram (one cell moves)": ('histogram(t, "grp")', [5, 0, 12, 3]),
    "real vector (several cells move)": (
        '[sum(t.where(lambda r: r.grp == "a"), "age"), sum(t.where(lambda r: r.grp == "c"), "age")]', None),
}


@pytest.mark.parametrize("expression,truth", GAUSSIAN_VECTORS.values(), ids=GAUSSIAN_VECTORS.keys())
def test_gaussian_vector_noise_has_the_planned_sigma_on_the_grid(expression: str, truth: list[int] | None) -> None:
    """gaussian(v, eps, delta) on a vector: every coordinate is on the plan's public grid, and
    the noise has variance plan.sigma^2 in every cell (exact chi-squared test on the pooled
    cells; the discrete Gaussian's variance equals sigma^2 to within exp(-2 pi^2 sigma^2) in
    grid steps). The plan's sigma is also compared with the analytic one for the same l2."""
    epsilon, delta, counts = 0.5, 1e-6, {"a": 5, "b": 0, "c": 12, "d": 3}
    frame = people(counts)
    value = language_value(session_with(frame), expression)
    if isinstance(value, tuple):  # a list of private scalars: released as one private vector
        value = private_vector(list(value), BUILTIN_SPAN)
    if truth is None:
        truth = [frame.loc[frame.grp == g, "age"].sum() for g in ("a", "c")]
    plan = grid_release.gaussian_plan(value.l1, value.l2, Budget.of(epsilon).epsilon, Budget.of(0, delta).delta,
                                      value.length, value.integer, value.is_vector)
    released = np.array(draws(3_000, Randomness(115), mechanisms.gaussian, value, epsilon, delta))
    steps = released / float(plan.grid)
    assert np.all(steps == np.round(steps)), "a released coordinate is off the public grid"
    noise = (released - np.array(truth, dtype=float)).ravel()
    law = stats.chi2(df=noise.size)
    statistic = float(np.sum((noise / plan.sigma) ** 2))
    pvalue = 2 * min(law.cdf(statistic), law.sf(statistic))
    assert pvalue > ALPHA, f"noise variance {np.mean(noise**2):.4g} is not sigma^2 = {plan.sigma**2:.4g}"
    analytic = gaussian_sigma(epsilon, delta, value.l2)
    assert analytic <= plan.sigma <= (1.001 if plan.one_axis_shift else 1.2) * analytic


def test_geometric_with_a_tiny_epsilon_hides_the_count() -> None:
    """geometric(count, 1e-30) releases a Python int whose noise has scale 1e30: |noise| / 1e30
    is Exp(1)-distributed (KS); the old int64 overflow gave count - 2^63 exactly."""
    count = language_value(session_with(people({"a": 10})), "count(t)")
    released = draws(500, Randomness(116), mechanisms.geometric, count, 1e-30)
    assert all(isinstance(r, int) for r in released)
    assert all(r - 10 not in (-(2**63), 2**63 - 1) for r in released)
    scale = 1 / Budget.of(1e-30).epsilon
    magnitudes = [float(Fraction(abs(r - 10)) / scale) for r in released]
    assert stats.kstest(magnitudes, stats.expon.cdf).pvalue > ALPHA


def test_histogram_cells_get_independent_laplace_noise() -> None:
    """Each cell of laplace(histogram(t, "grp"), eps) is Laplace(1/eps) around its count, and
    the cells' noises are independent: for every pair the four sign quadrants are equally
    likely (chi-squared), and the noise of the cell sum has variance 4 * 2/eps^2."""
    epsilon, counts = 0.5, {"a": 5, "b": 0, "c": 12, "d": 3}
    histogram = language_value(session_with(people(counts)), 'histogram(t, "grp")')
    released = draws(10_000, Randomness(105), mechanisms.laplace, histogram, epsilon)
    noise = np.array(released) - list(counts.values())
    assert noise.shape == (10_000, 4)
    for cell in range(4):
        assert_ks(noise[:, cell], stats.laplace(scale=1 / epsilon).cdf, f"histogram cell {cell}")
    positive = noise > 0
    for i in range(4):
        for j in range(i + 1, 4):
            quadrants = np.bincount(2 * positive[:, i] + positive[:, j], minlength=4)
            assert_discrete_fit(quadrants, np.full(4, 0.25), f"signs of cells {i} and {j}")
    # S = sum of 4 iid Laplace(b): E S^2 = 4 * 2b^2 = 8b^2 and
    # E S^4 = 4 E X^4 + 3 * 4 * 3 (E X^2)^2 = 4 * 24b^4 + 36 * 4b^4 = 240b^4, so Var S^2 = 176b^4.
    b, total = 1 / epsilon, noise.sum(axis=1)
    z = (np.mean(total**2) - 8 * b**2) / math.sqrt(176 * b**4 / len(total))
    assert abs(z) < Z_CRIT, f"the cells' noises are correlated (z={z:.2f})"


# ---------------------------------------------------------------- selection mechanisms
def _laplace_pdf(x: float, b: float) -> float:
    return math.exp(-abs(x) / b) / (2 * b)


def _laplace_cdf(x: float, b: float) -> float:
    return 0.5 * math.exp(x / b) if x < 0 else 1 - 0.5 * math.exp(-x / b)


def noisy_max_probabilities(scores: list[float], b: float) -> np.ndarray:
    """P(argmax_i (s_i + Lap(b)) = i) by numerical integration over the winner's noisy score."""
    lo, hi = min(scores) - 60 * b, max(scores) + 60 * b
    probabilities = []
    for i, s_i in enumerate(scores):
        others = [s for j, s in enumerate(scores) if j != i]
        integrand = lambda x, s_i=s_i, others=others: _laplace_pdf(x - s_i, b) * math.prod(  # noqa: E731
            _laplace_cdf(x - s, b) for s in others)
        probabilities.append(integrate.quad(integrand, lo, hi, points=sorted(set(scores)), limit=500,
                                            epsabs=1e-12)[0])
    return np.array(probabilities)


def above_threshold_probabilities(queries: list[float], threshold: float, b_threshold: float,
                                  b_query: float) -> np.ndarray:
    """P(first i with q_i + Lap(b_query) >= T + Lap(b_threshold)) for each i, then P(none)."""
    lo, hi = threshold - 60 * b_threshold, threshold + 60 * b_threshold
    points = sorted(set(queries) | {threshold})

    def first_above(t: float, i: int | None) -> float:
        below = queries if i is None else queries[:i]
        value = _laplace_pdf(t - threshold, b_threshold) * math.prod(
            _laplace_cdf(t - q, b_query) for q in below)
        return value if i is None else value * (1 - _laplace_cdf(t - queries[i], b_query))

    outcomes = [*range(len(queries)), None]
    return np.array([integrate.quad(first_above, lo, hi, args=(i,), points=points, limit=500, epsabs=1e-12)[0]
                     for i in outcomes])


MIXED_DIRECTION_UTILITIES = ('[count(t.where(lambda r: r.grp == "a")), -count(t.where(lambda r: r.grp == "b")), '
                             'count(t.where(lambda r: r.grp == "c")), -count(t.where(lambda r: r.grp == "d"))]')


@pytest.mark.parametrize("sensitivity,monotone", [(1, True), (2.5, True), (1, False), (2.5, False)])
def test_exponential_mechanism_pick_frequencies(sensitivity: float, monotone: bool) -> None:
    """exponential(cands, u, eps, D) picks c with probability proportional to exp(eps u(c)/(2D)),
    or to exp(eps u(c)/D) when the utilities are monotone (all counts: issue 22)."""
    epsilon, counts = 1.0, {"a": 6, "b": 4, "c": 1, "d": 0}
    candidates = tuple(counts)
    expression = GROUP_COUNTS if monotone else MIXED_DIRECTION_UTILITIES
    utilities = list(language_value(session_with(people(counts)), expression))
    picks = draws(10_000, Randomness(106), mechanisms.exponential, candidates, utilities, epsilon,
                  sensitivity)
    signs = np.ones(4) if monotone else np.array([1, -1, 1, -1])
    exact_utilities = signs * np.array(list(counts.values()), dtype=float)
    weights = np.exp(epsilon * exact_utilities / (sensitivity if monotone else 2 * sensitivity))
    observed = np.array([picks.count(c) for c in candidates])
    assert_discrete_fit(observed, weights / weights.sum(), f"exponential (D={sensitivity}, monotone={monotone})")


NOISY_MAX_CASES = {
    # (expression, largest per-score sensitivity D, monotone?)
    "histogram": ('histogram(t, "grp")', 1.0, True),
    "mixed sensitivities": ('[count(t.where(lambda r: r.grp == "a")), '
                            '2 * count(t.where(lambda r: r.grp == "b")), '
                            'sum(t.where(lambda r: r.grp == "c"), "age") / 50]', 2.0, True),
    "mixed directions": ('[count(t.where(lambda r: r.grp == "a")), '
                         '-2 * count(t.where(lambda r: r.grp == "b")), '
                         'sum(t.where(lambda r: r.grp == "c"), "age") / 50]', 2.0, False),
}


def _true_noisy_max_scores(case: str, counts: dict[str, int], frame: pd.DataFrame) -> list[float]:
    if case == "histogram":
        return [float(c) for c in counts.values()]
    sign = -1 if case == "mixed directions" else 1
    return [counts["a"], sign * 2 * counts["b"], frame.loc[frame.grp == "c", "age"].sum() / 50]


@pytest.mark.parametrize("case", NOISY_MAX_CASES)
def test_report_noisy_max_matches_the_stated_algorithm(case: str) -> None:
    """report_noisy_max(s, eps) is argmax(s_i + Lap(2D/eps)), D the largest score sensitivity,
    and argmax(s_i + Lap(D/eps)) when every score moves in the same direction (counts, sums of
    non-negative columns; Dwork & Roth 2014, Claim 3.9): chi-squared against the exact
    probabilities of that algorithm (numerical integration)."""
    expression, sensitivity, monotone = NOISY_MAX_CASES[case]
    epsilon, counts = 1.0, {"a": 3, "b": 2, "c": 1, "d": 0}
    frame = people(counts)
    scores = language_value(session_with(frame), expression)
    true_scores = _true_noisy_max_scores(case, counts, frame)
    b = (1 if monotone else 2) * sensitivity / epsilon
    winners = draws(10_000, Randomness(107), mechanisms.report_noisy_max, scores, epsilon)
    probabilities = noisy_max_probabilities([float(s) for s in true_scores], b)
    observed = np.bincount(winners, minlength=len(true_scores))
    assert_discrete_fit(observed, probabilities, f"report_noisy_max {expression}")


def test_hole9_report_noisy_max_counts_get_one_over_epsilon() -> None:
    """Issue 11, hole 9: a histogram (one row moves one cell up by one) got Lap(2/eps), twice
    the noise it needs. Its draws are now those of Lap(1/eps): the old calibration is rejected
    by the same chi-squared test (the winner frequencies differ clearly at 10,000 draws)."""
    epsilon, counts = 1.0, {"a": 3, "b": 2, "c": 1, "d": 0}
    histogram = language_value(session_with(people(counts)), 'histogram(t, "grp")')
    winners = draws(10_000, Randomness(110), mechanisms.report_noisy_max, histogram, epsilon)
    observed = np.bincount(winners, minlength=4)
    scores = [float(c) for c in counts.values()]
    assert_discrete_fit(observed, noisy_max_probabilities(scores, 1 / epsilon), "Lap(1/eps)")
    old = noisy_max_probabilities(scores, 2 / epsilon) * observed.sum()
    assert stats.chisquare(observed, old).pvalue < ALPHA, "the draws still fit Lap(2/eps)"


def test_report_noisy_max_clear_winner_wins_often_enough() -> None:
    """With scores [20, 10, 9, 5] (a histogram: monotone) and Lap(1) noise, P(index 0 loses) <=
    sum_j P(L_j - L_0 >= g_j) = sum_j e^{-g_j/b}(1 + g_j/(2b))/2 ~ 1e-4; the Clopper-Pearson
    lower bound of the observed loss rate must not exceed it."""
    epsilon, counts = 1.0, {"a": 20, "b": 10, "c": 9, "d": 5}
    histogram = language_value(session_with(people(counts)), 'histogram(t, "grp")')
    b = 1 / epsilon
    loss_bound = sum(0.5 * math.exp(-g / b) * (1 + g / (2 * b)) for g in (10, 11, 15))
    n = 5_000
    losses = sum(w != 0 for w in draws(n, Randomness(108), mechanisms.report_noisy_max, histogram, epsilon))
    lower = stats.beta.ppf(ALPHA, losses, n - losses + 1) if losses else 0.0
    assert lower <= loss_bound, f"index 0 lost {losses}/{n} times; at most {loss_bound:.4f} expected"


def test_above_threshold_matches_the_stated_algorithm() -> None:
    """above_threshold(q, T, eps) returns the first i with q_i + Lap(4D/eps) >= T + Lap(2D/eps),
    or none: chi-squared against the exact probabilities of that algorithm."""
    epsilon, threshold, counts = 1.0, 6, {"a": 1, "b": 3, "c": 5, "d": 8}
    histogram = language_value(session_with(people(counts)), 'histogram(t, "grp")')
    outcomes = draws(10_000, Randomness(109), mechanisms.above_threshold, histogram, threshold, epsilon)
    assert set(outcomes) <= {0, 1, 2, 3, None}
    observed = np.array([outcomes.count(i) for i in (0, 1, 2, 3, None)])
    queries = [float(c) for c in counts.values()]
    probabilities = above_threshold_probabilities(queries, threshold, 2 / epsilon, 4 / epsilon)
    assert_discrete_fit(observed, probabilities, "above_threshold")


# ---------------------------------------------------------------- randomized response
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_randomized_response_keeps_value_with_the_stated_probability(epsilon: float) -> None:
    """Each row keeps its value with probability e^eps/(e^eps + k - 1) and otherwise reports
    each of the k - 1 other values with probability 1/(e^eps + k - 1) (chi-squared per value)."""
    counts = {"a": 24_000, "b": 16_000, "c": 12_000, "d": 8_000}
    session = session_with(people(counts), public_rows=True)
    table = language_value(session, "t")
    responses = np.array(mechanisms.randomized_response(ReleaseCtx(Randomness(110)), table, "grp", epsilon,
                                                        BUILTIN_SPAN), dtype=object)
    truth = table.frame["grp"].to_numpy()
    assert len(responses) == len(truth)
    values, k = list(counts), len(counts)
    keep = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    for value in values:
        mine = responses[truth == value]
        observed = np.array([np.sum(mine == v) for v in values])
        probabilities = np.array([keep if v == value else (1 - keep) / (k - 1) for v in values])
        assert_discrete_fit(observed, probabilities, f"randomized_response of {value!r}")


def test_randomized_response_refuses_a_table_without_public_rows() -> None:
    """Without public_rows=True the response list would reveal the row count: refused, uncharged."""
    session = session_with(people({"a": 3}), public_rows=False)
    with pytest.raises(PrivacyError):
        session.eval('randomized_response(t, "grp", 1.0)')
    assert len(session.ledger) == 0


# ---------------------------------------------------------------- the mean
def _mean_frame(ages: list[float]) -> pd.DataFrame:
    n = len(ages)
    return pd.DataFrame({"age": ages, "balance": [0.0] * n, "sex": ["F"] * n, "grp": ["a"] * n})


@pytest.mark.parametrize("expression", ['mean(t, "age")', 'mean(t.where(lambda r: r.age > 100), "age")'],
                         ids=["one row", "empty"])
def test_mean_release_stays_within_bounds(expression: str) -> None:
    """laplace(mean(t, c), eps) is always within [lo, hi], even when the noise is huge."""
    mean = language_value(session_with(_mean_frame([100.0])), expression)
    released = np.array(draws(3_000, Randomness(111), mechanisms.laplace, mean, 0.1))
    assert np.all((released >= 0) & (released <= 100))
    assert np.any(released == 0) and np.any(released == 100), "clamping was never exercised"


def test_mean_release_matches_the_documented_algorithm() -> None:
    """laplace(mean, eps) is clip(mid + (S + Lap((hi-lo)/eps)) / max(n + Lap(2/eps), 1), lo, hi)
    with S the sum of (x - mid): a two-sample KS test against a NumPy simulation of that."""
    epsilon, ages = 0.5, np.random.default_rng(5).integers(0, 101, 60).astype(float)
    mean = language_value(session_with(_mean_frame(list(ages))), 'mean(t, "age")')
    released = np.array(draws(8_000, Randomness(112), mechanisms.laplace, mean, epsilon))
    rng = np.random.default_rng(113)
    m = 200_000
    noisy_sum = (ages - 50).sum() + rng.laplace(0, 50 / (epsilon / 2), m)
    noisy_count = len(ages) + rng.laplace(0, 1 / (epsilon / 2), m)
    simulated = np.clip(50 + noisy_sum / np.maximum(noisy_count, 1), 0, 100)
    result = stats.ks_2samp(released, simulated)
    assert result.pvalue > ALPHA, f"mean release: KS D={result.statistic:.4g}, p={result.pvalue:.3g}"


def test_mean_release_is_centred_on_the_true_mean() -> None:
    """On n = 10000 rows the release r satisfies |E r - m| <= 400/(eps n) (+ a negligible tail):
    |r - m| <= 2|L1|/n + (hi-lo)|L2|/n whenever n + L2 >= n/2, with E|L1| = 100/eps and
    E|L2| = 2/eps. The average of the releases must lie within that bias plus a z-bound."""
    epsilon, ages = 1.0, np.random.default_rng(6).integers(0, 101, 10_000).astype(float)
    true_mean, n = float(ages.mean()), len(ages)
    mean = language_value(session_with(_mean_frame(list(ages))), 'mean(t, "age")')
    released = np.array(draws(6_000, Randomness(114), mechanisms.laplace, mean, epsilon))
    bias_bound = 400 / (epsilon * n) + 100 * math.exp(-(n / 2) * (epsilon / 2))
    tolerance = bias_bound + Z_CRIT * released.std(ddof=1) / math.sqrt(len(released))
    assert abs(released.mean() - true_mean) <= tolerance, (
        f"releases average {released.mean():.4f}, true mean {true_mean:.4f}, tolerance {tolerance:.4f}")


# ---------------------------------------------------------------- large epsilon
def test_gaussian_with_a_huge_epsilon_does_not_crash() -> None:
    """A legal but huge epsilon releases a finite value (no crash after charging), and with
    eps = 1000 the noise is tiny: sigma is about 0.03, so |noise| >= 1 has probability < 1e-200."""
    session = session_with(people({"a": 4}), seed=1, budget=1e6, delta=0.5)
    released = session.eval("gaussian(count(t), 1000, 0.00001)")
    assert math.isfinite(released) and abs(released - 4) < 1
    assert len(session.ledger) == 1


def test_randomized_response_with_a_huge_epsilon_does_not_crash() -> None:
    """A legal but huge epsilon releases responses (no crash after charging); with eps = 1000 a
    response differs from the truth with probability 3 e^-1000, i.e. never."""
    session = session_with(people({"a": 4}), seed=1, budget=1e6, public_rows=True)
    released = session.eval('randomized_response(t, "grp", 1000)')
    assert released == ["a"] * 4


def test_exact_exponential_on_double_doubles_picks_in_proportion() -> None:
    """safe_noise.choose_exponential_exact (MWEM's selection since issue 22) picks candidate i
    with probability proportional to exp(eps (high_i + low_i) / 2), never an ineligible one;
    the exact sums are what is sampled (lows here are far below the highs' last place)."""
    from jostle.privacy import safe_noise

    minuend = np.array([3.0, 1.0, 0.0, 2.5, 7.0])
    subtrahend = np.array([0.1, 0.7, -1e-17, 0.2, 0.0])
    high, low = safe_noise.exact_differences(minuend, subtrahend)
    exact = [Fraction(float(h)) + Fraction(float(l)) for h, l in zip(high, low)]
    assert exact == [abs(Fraction(float(a)) - Fraction(float(b))) for a, b in zip(minuend, subtrahend)]
    eligible = np.array([True, True, True, True, False])
    noise = Randomness(2207)
    picks = [safe_noise.choose_exponential_exact(noise, high, low, eligible, 1.0, 1.0) for _ in range(12_000)]
    assert 4 not in picks
    weights = np.exp(0.5 * np.array([float(u) for u in exact[:4]]))
    observed = np.array([picks.count(i) for i in range(4)])
    assert_discrete_fit(observed, weights / weights.sum(), "exact exponential on double-doubles")
