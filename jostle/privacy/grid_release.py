"""Releasing numbers on a public power-of-two grid with exact discrete noise.

Textbook Laplace or Gaussian sampling in floating point leaks: the set of doubles that
x + noise can produce depends on x, so some outputs are impossible on a neighbouring dataset
(Mironov, CCS 2012). Jostle instead

  1. chooses a grid g, a power of two, from PUBLIC quantities only (sensitivity, epsilon, delta,
     the vector's length and whether the value is integer-valued);
  2. snaps the value to it: k = round(x / g), rounding half up, computed exactly
     (x / g is exact in binary floating point; k = floor(x/g) + [x/g - floor(x/g) >= 1/2]);
  3. adds exact integer noise Z (discrete Laplace / discrete Gaussian, jostle.privacy.exact_samplers)
     in grid units, and releases g * (k + Z).

Every output is a multiple of g, and every multiple of g has positive probability on every
dataset, so no output singles out a dataset. Converting g * (k + Z) to a double is exact while
|k + Z| < 2^53 and otherwise a deterministic function of k + Z (post-processing).

How rounding changes the sensitivity (in grid units). r(v) = floor(v + 1/2) is non-decreasing
and r(v + n) = r(v) + n for integers n, so for any real v and d >= 0
    r(v + d) <= r(v + ceil(d)) = r(v) + ceil(d):
a coordinate that moves by |d| moves by at most ceil(|d| / g) grid steps, and one that does not
move does not move at all. Hence, with D the sensitivity of the unsnapped value:

  * a scalar: at most ceil(D / g) steps;
  * a vector of length n, L1: sum_i ceil(|d_i| / g) <= D / g + n (only changed coordinates get
    the +1), an integer, so at most floor(D / g) + n;
  * a vector of length n, L2: ||ceil(|d| / g)||_2 <= D / g + sqrt(n) (triangle inequality with
    the 0/1 vector of changed coordinates);
  * integer-valued values (counts) with g <= 1: already on the grid, so exactly D / g.

The noise is calibrated to that grid sensitivity, so the charged epsilon (and delta) holds
exactly for the released integer k + Z, and hence for g * (k + Z). What is snapped is the
exact value Jostle holds (ints, Fractions, or doubles taken at their exact binary value; see
jostle.language.sensitivity), and D is an upward-rounded bound on how far that exact value moves, so no
floating-point rounding sits between the value D bounds and the value snapped: k = round(x/g)
is computed exactly for every representation. Only the final g * (k + Z) is rounded to a
double (post-processing; beyond the doubles it saturates to +-inf, `to_floats`). The slack terms are made
negligible by the choice of g: with the grid 2^-bits of the relevant scale, ceil and the +n
inflate the noise by a relative 2^-bits at most (2^-20 for Laplace, 2^-12 for Gaussian).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from jostle.privacy import replay
from jostle.privacy.gaussian_privacy import calibrate_discrete_gaussian, integer_sigma2
from jostle.privacy.noise import NoiseSource, grid_to_floats, power_of_two_at_most

LAPLACE_BITS = 20   # Laplace releases: the grid is 2^-20 of min(scale, per-coordinate sensitivity)
GAUSSIAN_BITS = 12  # Gaussian releases: the grid is 2^-12 of the per-coordinate sensitivity
_INT64_SAFE = 1 << 62


@dataclass(frozen=True)
class LaplacePlan:
    """How a Laplace-type release is made: all public.

    Attributes:
        grid: The power-of-two grid g of the released values.
        sensitivity: The L1 sensitivity of the snapped value, in grid steps (an integer).
        scale: The discrete Laplace scale in grid steps, sensitivity / epsilon (exact).
    """

    grid: Fraction
    sensitivity: int
    scale: Fraction


@dataclass(frozen=True)
class GaussianPlan:
    """How a Gaussian release is made: all public.

    Attributes:
        grid: The power-of-two grid g of the released values.
        sigma2: The discrete Gaussian's sigma^2 in grid steps^2 (exact, of the form c t).
        t: The proposal scale of CKS Algorithm 3 for that sigma^2.
        one_axis_shift: When neighbours differ in one coordinate: the largest shift in grid
            steps (certified by CKS Thm 7); otherwise None.
        l2_shift: Otherwise: the bound on the L2 norm of the shift in grid steps (zCDP).
    """

    grid: Fraction
    sigma2: Fraction
    t: int
    one_axis_shift: int | None
    l2_shift: Fraction | None

    @property
    def sigma(self) -> float:
        """The noise's sigma in the units of the released value."""
        return math.sqrt(float(self.sigma2)) * float(self.grid)


def _ceil(x: Fraction) -> int:
    return -((-x.numerator) // x.denominator)


@lru_cache(maxsize=1024)
def laplace_plan(l1: float, epsilon: Fraction, length: int, integer_valued: bool,
                 is_vector: bool, bits: int = LAPLACE_BITS) -> LaplacePlan:
    """The grid and discrete Laplace scale for releasing a value of L1 sensitivity `l1` > 0.

    Integer values use g = min(1, 2^-bits pow2(l1/eps)), so they sit on the grid; other values
    use g = 2^-bits pow2(min(l1/eps, l1/n)), n = 1 for a scalar and the length of a vector.
    The grid sensitivity follows the module docstring.
    """
    sensitivity = Fraction(float(l1))
    scale = sensitivity / epsilon
    on_grid = integer_valued
    if on_grid:
        grid = min(Fraction(1), power_of_two_at_most(scale) / 2**bits)
    else:
        grid = power_of_two_at_most(min(scale, sensitivity / (length if is_vector else 1))) / 2**bits
    exact_steps = sensitivity / grid
    if not is_vector:
        steps = _ceil(exact_steps)  # = D/g when on the grid with D/g whole
    elif on_grid:
        steps = exact_steps.numerator // exact_steps.denominator  # integer moves, no slack
    else:
        steps = exact_steps.numerator // exact_steps.denominator + length
    return LaplacePlan(grid, steps, Fraction(steps) / epsilon)


def with_simple_scale(plan: LaplacePlan, bits: int = 40) -> LaplacePlan:
    """The plan with its noise scale rounded UP to a multiple of 2^-m, m >= 0 the least making
    the relative increase at most 2^-bits.

    Why it is still private: the grid and the grid sensitivity S are unchanged and the scale only
    grows, so the discrete Laplace ratio bound exp(S / scale') <= exp(S / scale) = e^eps holds.
    Why: epsilon given as a double (e.g. a budget share) makes S / eps a fraction with a ~2^53
    numerator and denominator, which pushes every draw onto the sampler's slow Python-integer
    path; the rounded scale (numerator about 2^(bits + 1)) keeps the vectorised int64 path.
    """
    scale = plan.scale
    magnitude = scale.numerator.bit_length() - scale.denominator.bit_length()  # scale >= 2^(magnitude - 1)
    shift = max(0, bits - magnitude + 1)
    rounded = Fraction(-((-scale.numerator << shift) // scale.denominator), 1 << shift)
    return LaplacePlan(plan.grid, plan.sensitivity, rounded)


@lru_cache(maxsize=256)
def gaussian_plan(l1: float, l2: float, epsilon: Fraction, delta: Fraction, length: int,
                  integer_valued: bool, is_vector: bool, bits: int = GAUSSIAN_BITS) -> GaussianPlan:
    """The grid and certified discrete Gaussian for releasing a value of L2 sensitivity `l2` > 0.

    One-axis cases (a scalar; an integer-valued vector with L1 sensitivity below 2, whose
    neighbours differ by 1 in a single cell, e.g. a histogram) are certified with the exact
    delta of CKS Thm 7 and get nearly the analytic sigma; other vectors go through zCDP. The
    float l2 is moved up one ulp against the rounding of the square root that produced it.
    """
    l2_up = Fraction(math.nextafter(float(l2), math.inf))
    if not is_vector:
        bound = min(Fraction(float(l1)), l2_up)  # a scalar moves by at most either
        grid = power_of_two_at_most(bound) / 2**bits
        shift = _ceil(bound / grid)
        sigma2, t = calibrate_discrete_gaussian(epsilon, delta, max_shift=shift)
        return GaussianPlan(grid, sigma2, t, shift, None)
    if integer_valued and float(l1) < 2:  # one cell moves, by exactly 1
        grid = Fraction(1, 2**bits)
        shift = 2**bits
        sigma2, t = calibrate_discrete_gaussian(epsilon, delta, max_shift=shift)
        return GaussianPlan(grid, sigma2, t, shift, None)
    grid = power_of_two_at_most(l2_up) / 2**bits
    if integer_valued and grid <= 1:  # on the grid: integer shifts of L2 norm <= l2 / g
        shift_l2 = l2_up / grid
    else:
        slack = math.isqrt(length - 1) + 1  # >= sqrt(n)
        grid = power_of_two_at_most(l2_up / slack) / 2**bits
        shift_l2 = l2_up / grid + slack
    sigma2, t = calibrate_discrete_gaussian(epsilon, delta, l2_shift=shift_l2)
    return GaussianPlan(grid, sigma2, t, None, shift_l2)


def _rho_grid_and_shift(l1: float, l2: float, length: int, integer_valued: bool, is_vector: bool,
                        bits: int) -> tuple[Fraction, Fraction]:
    """The grid of a zCDP Gaussian release and the bound on its L2 move in grid steps
    (`gaussian_rho_plan`'s argument)."""
    l2_up = Fraction(math.nextafter(float(l2), math.inf))
    shift: Fraction
    if integer_valued:
        grid = Fraction(1)
        if not is_vector:
            shift = min(Fraction(float(l1)), l2_up)
        elif float(l1) < 2:
            shift = Fraction(1)
        else:
            shift = l2_up
    elif not is_vector:
        grid = power_of_two_at_most(l2_up) / 2**bits
        shift = Fraction(_ceil(l2_up / grid))
    else:
        slack = math.isqrt(length - 1) + 1  # >= sqrt(n)
        grid = power_of_two_at_most(l2_up / slack) / 2**bits
        shift = l2_up / grid + slack
    return grid, shift


def sigma2_at_least(target: Fraction) -> tuple[Fraction, int]:
    """sigma^2 >= target in the sampler's form c t: sigma rounded up on a 2^-32 grid first."""
    scale = 2**32  # sigma = (isqrt(target 2^64) + 1) / 2^32 > sqrt(target)
    scaled = target * scale * scale
    sigma = Fraction(math.isqrt(scaled.numerator // scaled.denominator) + 1, scale)
    sigma2, t = integer_sigma2(sigma)
    assert sigma2 >= target
    return sigma2, t


@lru_cache(maxsize=256)
def gaussian_rho_plan(l1: float, l2: float, rho: Fraction, length: int, integer_valued: bool,
                      is_vector: bool, bits: int = GAUSSIAN_BITS) -> GaussianPlan:
    """The grid and discrete Gaussian of a rho-zCDP release of a value of L2 sensitivity `l2` > 0.

    Integer values stay on the integers (grid 1): their neighbours differ by an integer vector
    of L2 norm at most min(l1, l2) for a scalar, 1 for a vector whose L1 sensitivity is below 2
    (one cell moves by one: a histogram), l2 otherwise. Other values use the grid of
    `gaussian_plan`, with its rounding arguments (a scalar moves by at most ceil(D/g) steps,
    a vector by at most D/g + sqrt(n) in L2). The d-dimensional discrete Gaussian N_Z(0, s2) per
    coordinate is (Delta^2 / (2 s2))-zCDP for integer shifts of L2 norm at most Delta (Canonne,
    Kamath and Steinke 2020, Thm 4 and Prop. 5), so s2 >= Delta^2 / (2 rho) suffices; s2 is
    rounded up to the sampler's form c t (gaussian_privacy.integer_sigma2), which only adds noise.
    """
    grid, shift = _rho_grid_and_shift(l1, l2, length, integer_valued, is_vector, bits)
    sigma2, t = sigma2_at_least(shift * shift / (2 * Fraction(rho)))
    return GaussianPlan(grid, sigma2, t, None, shift)


def gaussian_variance_plan(variance: Fraction, l1: float, l2: float, length: int, integer_valued: bool,
                           is_vector: bool, bits: int = GAUSSIAN_BITS) -> tuple[GaussianPlan, Fraction]:
    """A discrete Gaussian release of a STATED variance (per coordinate, in the value's units) and
    the rho it costs: the grid and L2 shift of `gaussian_rho_plan`, sigma^2 >= variance / grid^2
    in grid steps, and rho = shift^2 / (2 sigma^2) exactly (CKS 2020 Thm 4, Prop. 5), which is
    at most (l2 / grid + slack)^2 grid^2 / (2 variance)."""
    grid, shift = _rho_grid_and_shift(l1, l2, length, integer_valued, is_vector, bits)
    sigma2, t = sigma2_at_least(Fraction(variance) / (grid * grid))
    return GaussianPlan(grid, sigma2, t, None, shift), shift * shift / (2 * sigma2)


def geometric_plan(l1: int, epsilon: Fraction) -> LaplacePlan:
    """The two-sided geometric release of an integer value of integer L1 sensitivity `l1` > 0: grid 1,
    P(k) ~ exp(-|k| eps / l1) (shifting by at most l1 changes each probability by at most e^eps)."""
    return LaplacePlan(Fraction(1), int(l1), Fraction(int(l1)) / epsilon)


def release_plan(mechanism: str, budget: Any, l1: float, l2: float, length: int, integer_valued: bool,
                 is_vector: bool) -> LaplacePlan | GaussianPlan:
    """The plan of a release, from public inputs only: the ONE place that says which grid and scale
    each mechanism uses (jostle.language.mechanisms releases with it, and
    jostle.privacy.error_bounds.law_for states the error of what it would release).

    Args:
        mechanism: "laplace", "geometric", "gaussian" (a Budget with a delta) or "gaussian_rho"
            (a RhoZCDPBudget; `budget` may be the rho itself).
        budget: The budget the noise is calibrated to.
        l1, l2: The value's sensitivities (> 0 for the one the mechanism uses).
        length, integer_valued, is_vector: The value's shape and type.
    """
    if mechanism == "laplace":
        return laplace_plan(l1, budget.epsilon, length, integer_valued, is_vector)
    if mechanism == "geometric":
        return geometric_plan(int(float(l1)), budget.epsilon)
    if mechanism == "gaussian":
        return gaussian_plan(l1, l2, budget.epsilon, budget.delta, length, integer_valued, is_vector)
    if mechanism == "gaussian_rho":
        rho = budget.rho if hasattr(budget, "rho") else Fraction(budget)
        return gaussian_rho_plan(l1, l2, rho, length, integer_valued, is_vector)
    raise ValueError(f"no plan for mechanism {mechanism!r}")


# ---------------------------------------------------------------- snapping and adding
def snap(values: Any, grid: Fraction) -> np.ndarray:
    """round(values / grid), half up, exactly, as int64 (or Python ints when huge).

    Args:
        values: A number or a 1-d array of numbers (ints and Fractions, the exact private values
            of jostle.language.sensitivity, are handled exactly; a double by its exact binary value).
        grid: A power of two.

    Returns:
        A 1-d array of grid indices.
    """
    if isinstance(values, (int, float, np.integer, np.floating, Fraction)) and not isinstance(values, bool):
        if isinstance(values, (float, np.floating)) and not math.isfinite(values):
            raise ValueError("cannot release a value that is not finite")
        number = Fraction(int(values)) if isinstance(values, (int, np.integer)) else \
            values if isinstance(values, Fraction) else Fraction(float(values))
        return _as_int_array([math.floor(number / grid + Fraction(1, 2))])  # one value: exact rationals
    array = np.atleast_1d(np.asarray(values))
    if array.dtype.kind in "iu" and grid <= 1 and grid.numerator == 1:
        inverse = grid.denominator  # integers are on every grid 2^-j: k = value * 2^j exactly
        if array.size == 0 or int(np.max(np.abs(array))) < _INT64_SAFE // inverse:
            return array.astype(np.int64) * inverse
    if array.dtype.kind in "iu" or array.dtype == object:
        numbers = [Fraction(int(v)) for v in array.tolist()] if array.dtype.kind in "iu" else \
            [Fraction(v) for v in array.tolist()]
        return _as_int_array([math.floor(v / grid + Fraction(1, 2)) for v in numbers])
    array = array.astype(float)
    if not np.all(np.isfinite(array)):
        raise ValueError("cannot release a value that is not finite")
    step = float(grid) if Fraction(1, 2**1000) <= grid <= 2**1000 else 0.0
    scaled = array / step if step else None
    if scaled is None or not np.all(np.isfinite(scaled)) or np.max(np.abs(scaled), initial=0) >= _INT64_SAFE:
        return _as_int_array([math.floor(Fraction(v) / grid + Fraction(1, 2)) for v in array.tolist()])
    below = np.floor(scaled)  # exact; scaled - below is exact too (both within one binade)
    return (below + (scaled - below >= 0.5)).astype(np.int64)


def _as_int_array(values: list[int]) -> np.ndarray:
    if all(-_INT64_SAFE < v < _INT64_SAFE for v in values):
        return np.array(values, dtype=np.int64)
    return np.array(values, dtype=object)


def add(units: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """units + noise exactly (int64 when both are comfortably small, else Python ints)."""
    if units.dtype != object and noise.dtype != object:
        return units + noise  # both below 2^62 in magnitude: the sum fits int64
    return np.array([int(a) + int(b) for a, b in zip(units.tolist(), noise.tolist())], dtype=object)


def to_floats(units: np.ndarray, grid: Fraction) -> np.ndarray:
    """g * units as doubles (`jostle.privacy.noise.grid_to_floats`), except that a value beyond the
    doubles becomes +-inf instead of raising: rounding the released integer is post-processing,
    and an exception after the charge would be a crash, not a release."""
    if units.dtype != object:
        return grid_to_floats(units, grid)
    out = []
    for k in units.tolist():
        exact = Fraction(int(k)) * grid
        try:
            out.append(float(exact))
        except OverflowError:
            out.append(math.inf if exact > 0 else -math.inf)
    return np.array(out, dtype=float)


def release_laplace(noise: NoiseSource, values: Any, plan: LaplacePlan, norm: str = "l1") -> np.ndarray:
    """g * (snap(values) + Z), Z exactly discrete Laplace with the plan's scale, as doubles.

    `norm` says what the plan's sensitivity bounds (for jostle.privacy.replay): "l1", the whole
    vector's move, or "linf", each value's own (a selection's scores, `safe_noise.noisy_scores`).
    """
    units = snap(values, plan.grid)
    noisy = add(units, noise.discrete_laplace(plan.scale, units.size))
    return to_floats(replay.released(noise, "laplace", units, noisy, norm, plan.sensitivity, plan.grid), plan.grid)


def release_gaussian(noise: NoiseSource, values: Any, plan: GaussianPlan) -> np.ndarray:
    """g * (snap(values) + Z), Z exactly discrete Gaussian with the plan's sigma^2, as doubles."""
    units = snap(values, plan.grid)
    noisy = add(units, noise.discrete_gaussian(plan.sigma2, units.size, plan.t))
    claim = ("one_axis", plan.one_axis_shift) if plan.one_axis_shift is not None else ("l2", plan.l2_shift)
    return to_floats(replay.released(noise, "gaussian", units, noisy, *claim, plan.grid), plan.grid)
