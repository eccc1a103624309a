"""The noise laws of Jostle's additive releases and their exact error bounds.

Every additive release (jostle.language.mechanisms) adds integer noise K on a public grid g:
released = snap(x) + g K. The law of K is public (it depends on the sensitivity, the budget and
the grid, never on the rows), so the error of a release can be stated before and after it:

  * discrete Laplace (laplace, geometric, `{{ }}` in a DP program): P(K = k) ~ a^|k|,
    a = exp(-1 / t), t the scale in grid steps. In closed form P(|K| >= k) = 2 a^k / (1 + a)
    for k >= 1, so P(|K| <= k) = 1 - 2 a^(k+1) / (1 + a) (the two-sided geometric law of Ghosh,
    Roughgarden and Sundararajan 2009).
  * discrete Gaussian (gaussian, gaussian(x, rho(R)), sulq, `{{ }}` in a zCDP program):
    P(K = k) ~ exp(-k^2 / (2 sigma^2)) (Canonne, Kamath and Steinke 2020), sigma in grid steps.
    For sigma < 1000 steps its pmf is summed exactly (normalised by the sum over |k| <= 40 sigma,
    beyond which the mass is below e^-800); above, P(|K| <= k) is the continuity-corrected
    normal erf((k + 1/2) / (sigma sqrt 2)), whose error (Euler-Maclaurin on the midpoint sums, the
    normaliser within 2 exp(-2 pi^2 sigma^2) of sqrt(2 pi) sigma by Poisson summation) is below
    1e-7 at sigma >= 1000.
  * continuous "laplace" and "gaussian" laws are available for callers that need them.

`NoiseLaw.half_width(c)` is the smallest h with P(|noise| <= h) >= c: for a discrete law a
multiple of the grid, found from the closed form and checked against the coverage on both sides;
so its coverage may exceed c (`coverage(half_width(c))` says by how much).

A sum of independent noises with public coefficients (`half_width_of_sum`): one term is exact;
continuous Gaussians add exactly; otherwise the laws are convolved numerically (scipy's FFT
convolution) on a common lattice of step delta. When every term's step |c_i| g_i is a multiple of
one delta and the lattice fits (2^20 cells), each cell holds one support point and the result is
exact up to the tails cut at 1e-13 per term and floating-point rounding (both below 1e-9).
Otherwise each term's mass is binned to the nearest multiple of delta = reach / 2^19 (the reach
covering all but 1e-13 of each term), which moves each term by at most delta / 2: the half-width
returned is that of the binned sum plus n delta / 2, so it is CONSERVATIVE (its coverage is at
least c) and over-states the exact smallest half-width by at most n delta, about 4e-5 of the
terms' scale for two terms (a coverage excess of order 1e-5). `coverage` of a sum is likewise a
lower bound in the binned case.

`law_for` computes the law a release would have from the same plan the mechanism releases with
(`jostle.privacy.grid_release.release_plan`); `smallest_budget_for` inverts it by bisection over
the real calibration (grids included), returning an exact rational budget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from statistics import NormalDist
from typing import Any, Sequence

import numpy as np

from jostle.privacy import grid_release
from jostle.privacy.measures import Budget, RhoZCDPBudget

KINDS = ("laplace", "discrete_laplace", "gaussian", "discrete_gaussian")
EXACT_GAUSSIAN_SIGMA = 1000.0   # below: discrete Gaussian pmf summed exactly
_TAIL = 1e-13                   # per-term tail mass cut in a numerical sum
_LATTICE_CELLS = 2**20          # largest exact lattice, and twice the cells of a binned sum
_NORMAL = NormalDist()


def _check_confidence(confidence: float) -> float:
    confidence = float(confidence)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"a confidence must be in (0, 1), got {confidence}")
    return confidence


@lru_cache(maxsize=256)
def _gaussian_table(sigma: float) -> np.ndarray:
    """P(|K| <= k) for k = 0, 1, ..., the exact discrete Gaussian pmf summed (sigma in steps)."""
    top = int(math.ceil(40 * sigma)) + 2
    ks = np.arange(0, top + 1, dtype=float)
    weights = np.exp(-ks * ks / (2 * sigma * sigma))
    mass = np.concatenate(([weights[0]], 2 * weights[1:]))
    return np.minimum(np.cumsum(mass) / mass.sum(), 1.0)


def _steps_coverage(kind: str, scale: float, k: int) -> float:
    """P(|K| <= k) for an integer k >= 0 of a discrete law in grid steps."""
    if k < 0:
        return 0.0
    if kind == "discrete_laplace":
        a = math.exp(-1.0 / scale)
        return 1.0 - 2.0 * math.exp(-(k + 1) / scale) / (1.0 + a)
    if scale < EXACT_GAUSSIAN_SIGMA:
        table = _gaussian_table(scale)
        return float(table[min(k, len(table) - 1)])
    return math.erf((k + 0.5) / (scale * math.sqrt(2.0)))


def _steps_half_width(kind: str, scale: float, confidence: float) -> int:
    """The smallest integer k >= 0 with P(|K| <= k) >= confidence."""
    if kind == "discrete_laplace":
        a = math.exp(-1.0 / scale)
        guess = math.ceil(-scale * math.log((1.0 - confidence) * (1.0 + a) / 2.0)) - 1
    elif scale < EXACT_GAUSSIAN_SIGMA:
        return int(np.searchsorted(_gaussian_table(scale), confidence, side="left"))
    else:
        guess = math.ceil(scale * math.sqrt(2.0) * _erfinv(confidence) - 0.5)
    # Bracket the answer around the closed-form guess by doubling steps, then bisect: a number of
    # coverage evaluations logarithmic in the guess's error, also where a scale of 1e30 steps makes
    # k and k + 1 indistinguishable in doubles (stepping by one would never end there).
    def covers(k: int) -> bool:
        return k >= 0 and _steps_coverage(kind, scale, k) >= confidence

    guess = max(0, int(guess))
    high, step = guess, 1
    while not covers(high):
        high, step = guess + step, step * 2
    low, step = high - 1, 1
    while covers(low):
        high, low, step = low, low - step, step * 2
    low = max(low, -1)
    while high - low > 1:  # covers(high) and not covers(low)
        middle = (low + high) // 2
        if covers(middle):
            high = middle
        else:
            low = middle
    return high


def _erfinv(p: float) -> float:
    return _NORMAL.inv_cdf((1.0 + p) / 2.0) / math.sqrt(2.0)


@dataclass(frozen=True)
class NoiseLaw:
    """The public law of a release's additive noise.

    Attributes:
        kind: "laplace" | "discrete_laplace" | "gaussian" | "discrete_gaussian".
        scale: Laplace b; discrete Laplace t with P(k) ~ exp(-|k| / t), in grid steps; Gaussian
            sigma; discrete Gaussian sigma (sigma^2 the variance parameter), in grid steps.
        grid: A released value is the exact value snapped to this grid plus grid * integer noise
            (1.0 for the continuous kinds, where it is unused).
        sensitivity: What the noise is calibrated to, in value units (None: not stated, e.g. SuLQ).
        norm: "l1" | "l2" | "one_axis" (what `sensitivity` bounds).
        mechanism: The mechanism's name as the ledger shows it.
        budget: The budget as text (e.g. "epsilon 1", "rho 1/2").
        clipping: A note when the released value was clamped to declared bounds (the bias this
            causes is NOT in the half-width); None otherwise.
    """

    kind: str
    scale: float
    grid: float = 1.0
    sensitivity: float | None = None
    norm: str = "l1"
    mechanism: str = ""
    budget: str = ""
    clipping: str | None = field(default=None)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown noise law {self.kind!r}")
        if not self.scale > 0 or not self.grid > 0:
            raise ValueError("a noise law needs a positive scale and grid")

    @property
    def discrete(self) -> bool:
        """Whether the noise is an integer number of grid steps."""
        return self.kind.startswith("discrete")

    def half_width(self, confidence: float) -> float:
        """The smallest h with P(|noise| <= h) >= confidence (exact for the discrete laws, where h
        is a multiple of the grid)."""
        confidence = _check_confidence(confidence)
        if self.kind == "laplace":
            return -self.scale * math.log1p(-confidence)
        if self.kind == "gaussian":
            return self.scale * math.sqrt(2.0) * _erfinv(confidence)
        return _steps_half_width(self.kind, self.scale, confidence) * self.grid

    def coverage(self, half_width: float) -> float:
        """P(|noise| <= half_width)."""
        if half_width < 0:
            return 0.0
        if self.kind == "laplace":
            return -math.expm1(-half_width / self.scale)
        if self.kind == "gaussian":
            return math.erf(half_width / (self.scale * math.sqrt(2.0)))
        return _steps_coverage(self.kind, self.scale, int(math.floor(half_width / self.grid + 1e-9)))

    @property
    def standard_deviation(self) -> float:
        """The noise's standard deviation in value units (discrete Gaussian: sigma, a bound)."""
        if self.kind == "laplace":
            return math.sqrt(2.0) * self.scale
        if self.kind == "discrete_laplace":
            a = math.exp(-1.0 / self.scale)
            return self.grid * math.sqrt(2.0 * a) / (1.0 - a)
        return self.scale * (self.grid if self.discrete else 1.0)

    def with_clipping(self, note: str | None) -> NoiseLaw:
        """The same law with a clipping note."""
        return NoiseLaw(self.kind, self.scale, self.grid, self.sensitivity, self.norm, self.mechanism,
                        self.budget, note)

    def describe(self) -> str:
        """One line for people: the law, its scale in value units and what it is calibrated to."""
        names = {"laplace": "Laplace", "discrete_laplace": "discrete Laplace", "gaussian": "Gaussian",
                 "discrete_gaussian": "discrete Gaussian"}
        unit = "scale" if "laplace" in self.kind else "sigma"
        size = self.scale * (self.grid if self.discrete else 1.0)
        text = f"{names[self.kind]} noise, {unit} {size:.6g}"
        if self.discrete:
            text += f" on a grid {self.grid:.6g}"
        if self.mechanism:
            text += f" ({self.mechanism}{', ' + self.budget if self.budget else ''})"
        return text


@dataclass(frozen=True)
class CombinedLaw:
    """The noise of sum_i c_i N_i, independent N_i with public coefficients c_i."""

    terms: tuple[tuple[float, NoiseLaw], ...]

    @property
    def clipping(self) -> str | None:
        """The clipping notes of the terms, joined (None when none was clipped)."""
        notes = sorted({law.clipping for _, law in self.terms if law.clipping})
        return "; ".join(notes) if notes else None

    def half_width(self, confidence: float) -> float:
        """`half_width_of_sum` of the terms."""
        return half_width_of_sum(self.terms, confidence)

    def coverage(self, half_width: float) -> float:
        """P(|sum| <= half_width) (a lower bound when the sum is binned; see the module docstring)."""
        return coverage_of_sum(self.terms, half_width)

    def describe(self) -> str:
        """One line: the terms."""
        parts = [f"{c:g} x ({law.describe()})" for c, law in self.terms]
        return "a sum of independent noises: " + " + ".join(parts) if parts else "no noise"


def _reach(law: NoiseLaw) -> float:
    """A value r with P(|noise| > r) < _TAIL, in value units."""
    if law.kind in ("laplace", "discrete_laplace"):
        b = law.scale * (law.grid if law.discrete else 1.0)
        return b * math.log(2 / _TAIL) + (law.grid if law.discrete else 0.0)
    sigma = law.scale * (law.grid if law.discrete else 1.0)
    return sigma * 7.8 + (law.grid if law.discrete else 0.0)


def _cdf(law: NoiseLaw, coefficient: float, points: np.ndarray) -> np.ndarray:
    """P(c N <= x) at each x of `points` (the laws are symmetric, so c N has the law of |c| N)."""
    c = abs(coefficient)
    if law.kind == "laplace":
        z = points / (c * law.scale)
        return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0)), 1 - 0.5 * np.exp(-np.maximum(z, 0)))
    if law.kind == "gaussian":
        from scipy.special import ndtr

        return ndtr(points / (c * law.scale))
    k = np.floor(points / (c * law.grid) + 1e-12)  # P(K <= k)
    if law.kind == "discrete_laplace":
        a = math.exp(-1.0 / law.scale)
        neg = np.exp(np.minimum(k, 0) / law.scale) / (1 + a)            # k < 0: a^-k / (1 + a)
        pos = 1 - np.exp(-(np.maximum(k, 0) + 1) / law.scale) / (1 + a)  # k >= 0
        return np.where(k < 0, neg, pos)
    if law.scale < EXACT_GAUSSIAN_SIGMA:
        table = _gaussian_table(law.scale)  # P(|K| <= j); P(K <= k) = (1 + P(|K| <= k)) / 2 for k >= 0
        absolute = np.minimum(np.abs(k), len(table) - 1).astype(int)
        pos = (1 + table[absolute]) / 2
        neg = (1 - table[np.maximum(absolute - 1, 0)]) / 2
        return np.where(k >= 0, pos, np.where(absolute >= 1, neg, 0.5))
    from scipy.special import ndtr

    return ndtr((k + 0.5) / law.scale)


def _common_step(steps: list[float]) -> Fraction:
    """The largest delta of which every step is a multiple (exact, from the doubles)."""
    fractions = [Fraction(s) for s in steps]
    numerator, denominator = 0, 1
    for f in fractions:
        numerator = math.gcd(numerator, f.numerator)
        denominator = denominator * f.denominator // math.gcd(denominator, f.denominator)
    return Fraction(numerator, denominator)


@lru_cache(maxsize=128)
def _sum_distribution(terms: tuple[tuple[float, NoiseLaw], ...]) -> tuple[float, np.ndarray, float]:
    """(delta, P(|S| <= j delta) for j = 0, 1, ..., shift): the sum's law on a lattice of step delta,
    and `shift` = the largest move binning caused (0 when exact)."""
    from scipy.signal import fftconvolve

    reach = sum(abs(c) * _reach(law) for c, law in terms)
    exact = all(law.discrete for _, law in terms)
    delta = float(_common_step([abs(c) * law.grid for c, law in terms])) if exact else 0.0
    if not exact or delta <= 0 or reach / delta > _LATTICE_CELLS / 2:
        exact = False
        delta = reach / (_LATTICE_CELLS / 2)
    pmf = np.array([1.0])
    for c, law in terms:
        cells = int(math.ceil(abs(c) * _reach(law) / delta)) + 1
        edges = (np.arange(-cells, cells + 2) - 0.5) * delta
        cdf = _cdf(law, c, edges)
        mass = np.maximum(np.diff(cdf), 0.0)
        pmf = np.maximum(fftconvolve(pmf, mass), 0.0) if pmf.size > 1 else mass
    pmf /= pmf.sum()
    middle = (pmf.size - 1) // 2
    folded = pmf[middle:].copy()
    folded[1:] += pmf[:middle][::-1]
    shift = 0.0 if exact else len(terms) * delta / 2
    return delta, np.minimum(np.cumsum(folded), 1.0), shift


def _normalise(terms: Sequence[tuple[float, Any]]) -> tuple[tuple[float, NoiseLaw], ...]:
    """The terms with CombinedLaws flattened and zero coefficients dropped. Each entry is its own
    independent noise, even when two laws are equal (two releases with the same calibration)."""
    flat: list[tuple[float, NoiseLaw]] = []
    for coefficient, law in terms:
        if isinstance(law, CombinedLaw):
            flat.extend((float(coefficient) * inner, inner_law) for inner, inner_law in law.terms)
        else:
            flat.append((float(coefficient), law))
    return tuple(sorted(((c, law) for c, law in flat if c != 0),
                        key=lambda t: (t[1].kind, t[1].scale, t[1].grid, abs(t[0]))))


def half_width_of_sum(terms: Sequence[tuple[float, Any]], confidence: float) -> float:
    """The smallest h with P(|sum_i c_i N_i| <= h) >= confidence, for independent N_i.

    Exact for one term and for continuous Gaussians; otherwise computed by convolution on a
    lattice, exact when the steps share one, conservative by at most n delta when binned (see
    the module docstring). Each term is its own noise: give one release once, with its total coefficient.
    """
    confidence = _check_confidence(confidence)
    normal = _normalise(terms)
    if not normal:
        return 0.0
    if len(normal) == 1:
        c, law = normal[0]
        return abs(c) * law.half_width(confidence)
    if all(law.kind == "gaussian" for _, law in normal):
        sigma = math.sqrt(sum((c * law.scale) ** 2 for c, law in normal))
        return NoiseLaw("gaussian", sigma).half_width(confidence)
    delta, cumulative, shift = _sum_distribution(normal)
    j = int(np.searchsorted(cumulative, confidence, side="left"))
    return j * delta + shift


def coverage_of_sum(terms: Sequence[tuple[float, Any]], half_width: float) -> float:
    """P(|sum_i c_i N_i| <= half_width) (a lower bound when binned; see the module docstring)."""
    normal = _normalise(terms)
    if not normal:
        return 1.0 if half_width >= 0 else 0.0
    if len(normal) == 1:
        c, law = normal[0]
        return law.coverage(half_width / abs(c))
    if all(law.kind == "gaussian" for _, law in normal):
        return NoiseLaw("gaussian", math.sqrt(sum((c * law.scale) ** 2 for c, law in normal))).coverage(half_width)
    delta, cumulative, shift = _sum_distribution(normal)
    j = int(math.floor((half_width - shift) / delta + 1e-9))
    return 0.0 if j < 0 else float(cumulative[min(j, len(cumulative) - 1)])


# ---------------------------------------------------------------- the law of a release
def budget_text(budget: Any) -> str:
    """A budget as people read it: "epsilon 1", "epsilon 1, delta 1e-06", "rho 1/2"."""
    if isinstance(budget, RhoZCDPBudget):
        return f"rho {float(budget.rho):g}"
    text = f"epsilon {float(budget.epsilon):g}"
    return text + (f", delta {float(budget.delta):g}" if budget.delta else "")


def law_of_plan(plan: Any, sensitivity: float | None, norm: str, mechanism: str = "", budget: Any = None,
                clipping: str | None = None) -> NoiseLaw:
    """The noise law of a grid_release plan (a LaplacePlan or a GaussianPlan)."""
    text = budget_text(budget) if budget is not None else ""
    if isinstance(plan, grid_release.LaplacePlan):
        return NoiseLaw("discrete_laplace", float(plan.scale), float(plan.grid),
                        None if sensitivity is None else float(sensitivity), norm, mechanism, text, clipping)
    return NoiseLaw("discrete_gaussian", math.sqrt(float(plan.sigma2)), float(plan.grid),
                    None if sensitivity is None else float(sensitivity), norm, mechanism, text, clipping)


def law_for(mechanism: str, sensitivity: float, budget: Any, *, integer: bool, length: int = 1,
            l1: float | None = None, is_vector: bool | None = None) -> NoiseLaw:
    """The law a release of `mechanism` WOULD use (public inputs only: no charge, no draw).

    Args:
        mechanism: "laplace", "geometric", "gaussian" (budget with a delta, or a RhoZCDPBudget),
            "gaussian_rho" or "default" (`{{ }}`: geometric for integers of whole sensitivity,
            Laplace otherwise, the discrete Gaussian for a RhoZCDPBudget).
        sensitivity: L1 sensitivity for the Laplace kinds, L2 for the Gaussian ones.
        budget: A Budget (epsilon, delta) or a RhoZCDPBudget.
        integer: Whether the value is integer-valued.
        length: The vector's length (1 for a scalar).
        l1: The L1 sensitivity of a Gaussian release when it differs from `sensitivity` (a
            histogram: 1 or 2 at L2 1 or sqrt 2); defaults to `sensitivity` for a scalar and to
            sensitivity * sqrt(length) for a vector.
        is_vector: Defaults to length > 1.

    Raises:
        ValueError: An unknown mechanism, a non-positive sensitivity, or a budget of the wrong kind.
    """
    if not sensitivity > 0:
        raise ValueError("a release with sensitivity 0 adds no noise")
    vector = length > 1 if is_vector is None else is_vector
    if mechanism == "default":
        if isinstance(budget, RhoZCDPBudget):
            mechanism = "gaussian_rho"
        else:
            mechanism = "geometric" if integer and float(sensitivity).is_integer() else "laplace"
    if mechanism == "gaussian" and isinstance(budget, RhoZCDPBudget):
        mechanism = "gaussian_rho"
    if mechanism in ("laplace", "geometric"):
        if not isinstance(budget, Budget):
            raise ValueError(f"{mechanism} takes an epsilon budget")
        if mechanism == "geometric" and not (integer and float(sensitivity).is_integer()):
            raise ValueError("geometric releases integers of whole sensitivity")
        plan = grid_release.release_plan(mechanism, budget, sensitivity, sensitivity, length, integer, vector)
        return law_of_plan(plan, sensitivity, "l1", mechanism, budget)
    if mechanism in ("gaussian", "gaussian_rho"):
        if mechanism == "gaussian" and (not isinstance(budget, Budget) or not budget.delta):
            raise ValueError("gaussian takes an (epsilon, delta) budget with delta > 0, or a rho")
        if mechanism == "gaussian_rho" and not isinstance(budget, RhoZCDPBudget):
            raise ValueError("gaussian_rho takes a rho")
        first = float(l1) if l1 is not None else (sensitivity * math.sqrt(length) if vector else sensitivity)
        plan = grid_release.release_plan(mechanism, budget, first, sensitivity, length, integer, vector)
        norm = "one_axis" if getattr(plan, "one_axis_shift", None) is not None else "l2"
        return law_of_plan(plan, sensitivity, norm, "gaussian", budget)
    raise ValueError(f"no noise law for mechanism {mechanism!r}")


def _decimal_up(x: float) -> Fraction:
    """A short rational >= x (8 significant digits), so a budget prints readably."""
    exponent = math.floor(math.log10(x)) - 7
    scaled = Fraction(x) / Fraction(10) ** exponent
    return Fraction(math.ceil(scaled)) * Fraction(10) ** exponent


def smallest_budget_for(mechanism: str, sensitivity: float, error: float, confidence: float, *,
                        integer: bool, cap: Any = None, length: int = 1, l1: float | None = None,
                        delta: float | None = None) -> Any:
    """The smallest budget (exact rational epsilon, or rho) whose law meets `error` at `confidence`.

    Bisection (60 halvings in log scale) over the real calibration, `law_for`, grids included;
    the answer is rounded UP to 8 significant digits and checked, so its law meets the target.
    The epsilon is searched with `cap`'s delta for an (epsilon, delta) Gaussian (or `delta`).

    Returns:
        A Budget or RhoZCDPBudget, or None when even `cap` cannot meet the target.

    Raises:
        ValueError: error <= 0, a confidence outside (0, 1), or an unknown mechanism.
    """
    _check_confidence(confidence)
    if not error > 0:
        raise ValueError(f"an error target must be above 0, got {error}")
    zcdp = isinstance(cap, RhoZCDPBudget) or mechanism == "gaussian_rho"
    dlt = Fraction(delta) if delta is not None else (cap.delta if isinstance(cap, Budget) else Fraction(0))

    def make(x: Fraction) -> Any:
        return RhoZCDPBudget(x) if zcdp else Budget(x, dlt if mechanism == "gaussian" else Fraction(0))

    def meets(x: Fraction) -> bool:
        law = law_for(mechanism, sensitivity, make(x), integer=integer, length=length, l1=l1)
        return law.half_width(confidence) <= error

    top = Fraction(cap.rho if zcdp else cap.epsilon) if cap is not None else None
    if top is not None:
        if not meets(top):
            return None
        high = float(top)
    else:
        high = 1.0
        while not meets(Fraction(high)):
            high *= 2
            if high > 2**64:
                return None
    low = high
    while meets(Fraction(low)):
        low /= 2
        if low < 1e-300:
            return make(Fraction(low))
    for _ in range(60):
        middle = math.sqrt(low * high)
        if middle in (low, high):
            break
        if meets(Fraction(middle)):
            high = middle
        else:
            low = middle
    answer = _decimal_up(high)
    if top is not None and answer > top:
        answer = top
    if not meets(answer):
        answer = Fraction(high)
    return make(answer)
