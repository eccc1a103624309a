"""The SuLQ primitive: noisy sums of bounded per-row queries with Gaussian noise of a stated variance.

SuLQ (Blum, Dwork, McSherry and Nissim, PODS 2005; the lecture notes in
`../shared/papers/shmatikov_ppdm.txt`) answers a query g: row -> [0, 1] with
sum_rows g(row) + N(0, R), R the **variance** of the noise, and calibrates R to the number T of
queries an algorithm asks in all. Jostle keeps the algorithm's interface (a variance R per query)
and replaces its accounting:

  * **Exact noise on a public grid.** The sum is snapped to a public power-of-two grid g and
    released as g (k + Z), Z an exact discrete Gaussian with sigma^2 >= R / g^2 in grid steps
    (`jostle.privacy.grid_release`'s argument: every multiple of g is possible on every dataset).
    Counts (g(row) in {0, 1}) stay on the integers (grid 1); other queries use g = 2^-12.
  * **Charged in rho.** One row moves one query's sum by at most 1 (g lies in [0, 1]: added or
    removed, the sum moves by g(row); replaced, by g(row') - g(row), at most 1 in absolute value).
    Snapped, the move is at most ceil(1 / g) = 1 / g grid steps (g divides 1; rounding half up
    moves by at most ceil(d) for a move d, `grid_release`). A batch of queries of which one row
    can touch at most `touched` (each by at most 1) moves by at most sqrt(touched) / g in L2, so
    the discrete Gaussian with sigma^2 in grid steps is (touched / g^2) / (2 sigma^2)-zCDP
    (Canonne, Kamath and Steinke 2020, Thm 4 and Prop. 5). SuLQ's own rule counts every query
    (touched = the batch's length: a SuLQ learner charges that); a modern analysis states how
    few one row can touch (k-means: one cluster's size and its d coordinate sums, d + 1).
  * **Two calibrations**, side by side (`lecture_variance`, `zcdp_variance`): the 2005 bound
    R > 8 T log^2(T / delta) / epsilon^2 for T queries, and the variance T / (2 rho) that T
    Gaussian queries of sensitivity 1 need for a total rho whose conversion meets
    (epsilon, delta).

What SuLQ's (epsilon, delta, T) promises is not (epsilon, delta)-DP: it bounds an adversary's
change in log-odds of a property of one row, under priors that treat rows as independent, with
probability 1 - delta over the noise. The comparisons here convert one way only: both
calibrations are read as the same target (epsilon, delta), and the zCDP side uses the
conversion rho -> (rho + 2 sqrt(rho log(1 / delta)), delta) of Bun and Steinke 2016 (Prop. 1.3),
or, with `conversion="cks"`, Jostle's accountant's tighter one (Canonne, Kamath and Steinke
2020, Cor. 13), which needs less variance still.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from jostle.privacy import replay
from jostle.privacy.conversions import rho_for
from jostle.privacy.grid_release import add, sigma2_at_least, snap, to_floats
from jostle.privacy.measures import RhoZCDPBudget

GRID_BITS = 12
"""Queries with values in [0, 1] are released on the grid 2^-12 (counts on the integers)."""

CONVERSIONS = ("bun_steinke", "cks")


# ---------------------------------------------------------------- the two calibrations
def _check_calibration(queries: int, epsilon: float, delta: float) -> None:
    if isinstance(queries, bool) or not isinstance(queries, (int, np.integer)) or queries < 1:
        raise ValueError(f"the number of queries T must be a positive integer, got {queries!r}")
    if not (math.isfinite(float(epsilon)) and float(epsilon) > 0):
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon!r}")
    if not 0 < float(delta) < 1:
        raise ValueError(f"delta must lie strictly between 0 and 1, got {delta!r}")


def lecture_variance(queries: int, epsilon: float, delta: float) -> float:
    """The 2005 calibration: R = 8 T log^2(T / delta) / epsilon^2 for T queries (the lecture's
    "R > ..."; this is the bound itself, which any larger R also meets).

    Raises:
        ValueError: T not a positive integer, epsilon not positive, delta outside (0, 1).
    """
    _check_calibration(queries, epsilon, delta)
    return 8 * queries * math.log(queries / float(delta)) ** 2 / float(epsilon) ** 2


def simple_rho_for(epsilon: float, delta: float) -> float:
    """The largest rho with rho + 2 sqrt(rho log(1 / delta)) <= epsilon (Bun and Steinke 2016,
    Prop. 1.3, solved for rho): sqrt(rho) = sqrt(L + epsilon) - sqrt(L), L = log(1 / delta)."""
    log_inverse = -math.log(float(delta))
    root = float(epsilon) / (math.sqrt(log_inverse + float(epsilon)) + math.sqrt(log_inverse))  # no cancellation
    return root * root


def zcdp_variance(queries: int, epsilon: float, delta: float, conversion: str = "bun_steinke") -> float:
    """The variance T queries of sensitivity 1 need under zCDP for a total that meets
    (epsilon, delta): each costs 1 / (2 R), so R = T / (2 rho), rho from `conversion`
    ("bun_steinke", the simple conversion, or "cks", the accountant's).

    Raises:
        ValueError: Bad T, epsilon or delta, or an unknown conversion.
    """
    _check_calibration(queries, epsilon, delta)
    if conversion == "bun_steinke":
        rho = simple_rho_for(epsilon, delta)
    elif conversion == "cks":
        rho = float(rho_for(Fraction(epsilon), Fraction(delta)))
    else:
        raise ValueError(f"unknown conversion {conversion!r}; the conversions are {', '.join(CONVERSIONS)}")
    return queries / (2 * rho)


def calibration_row(queries: int, epsilon: float, delta: float, conversion: str = "bun_steinke") -> dict[str, float]:
    """One line of the side-by-side: both variances, their standard deviations and their ratio."""
    lecture = lecture_variance(queries, epsilon, delta)
    modern = zcdp_variance(queries, epsilon, delta, conversion)
    return {"T": queries, "epsilon": float(epsilon), "delta": float(delta), "conversion": conversion,
            "lecture_variance": lecture, "lecture_sd": math.sqrt(lecture),
            "zcdp_variance": modern, "zcdp_sd": math.sqrt(modern), "ratio": lecture / modern}


# ---------------------------------------------------------------- the release
@dataclass(frozen=True)
class SulqPlan:
    """How one batch of SuLQ queries is released: all public.

    Attributes:
        variance: The variance R asked for, per query, in the queries' units.
        queries: The batch's length.
        touched: How many of the batch's queries one row can move (each by at most 1).
        integer_valued: The queries are counts (g(row) in {0, 1}): released on the integers.
        grid: The power-of-two grid of the released sums.
        sigma2: The discrete Gaussian's sigma^2 in grid steps^2 (>= R / grid^2, sampler form).
        t: The sampler's proposal scale for sigma2.
        rho: What the batch costs, exactly: touched / (2 grid^2 sigma2).
    """

    variance: Fraction
    queries: int
    touched: int
    integer_valued: bool
    grid: Fraction
    sigma2: Fraction
    t: int
    rho: Fraction

    @property
    def budget(self) -> RhoZCDPBudget:
        """The batch's cost as a typed budget."""
        return RhoZCDPBudget(self.rho)

    @property
    def sd(self) -> float:
        """The noise's standard deviation in the queries' units."""
        return math.sqrt(float(self.sigma2)) * float(self.grid)

    @property
    def shift_bound(self) -> Fraction:
        """A rational bound on the L2 move of the snapped sums in grid steps, sqrt(touched) / grid
        rounded up on a 2^-20 grid (for the replay's claim; tight, so that a batch whose rows move
        more queries than `touched` says is caught even on the integer grid)."""
        steps_squared = self.touched * (1 / self.grid) ** 2  # an integer: the grid is 1 / 2^j
        scale = 2**20
        root = math.isqrt(int(steps_squared) * scale * scale)
        return Fraction(root if root * root == steps_squared * scale * scale else root + 1, scale)


def _positive_fraction(value: Any, what: str) -> Fraction:
    if isinstance(value, bool):
        raise ValueError(f"{what} must be a number, not a boolean")
    try:
        result = Fraction(value) if not isinstance(value, float) else Fraction(value)
    except (TypeError, ValueError, OverflowError) as error:
        raise ValueError(f"{what} must be a finite number, got {value!r}") from error
    if result <= 0:
        raise ValueError(f"{what} must be greater than 0, got {value!r}")
    return result


def sulq_plan(variance: float | Fraction, queries: int, touched: int | None = None,
              integer_valued: bool = False) -> SulqPlan:
    """The plan of a batch of `queries` SuLQ queries answered with noise of variance `variance`.

    Args:
        variance: R, per query, in the queries' units (a float is read at its exact value).
        queries: The batch's length.
        touched: How many of the batch's queries one row can move (each by at most 1); None:
            all of them, SuLQ's own count.
        integer_valued: The queries are counts (values 0 or 1).

    Raises:
        ValueError: A variance that is not positive and finite, or touched not in 1..queries.
    """
    if isinstance(variance, float) and not math.isfinite(variance):
        raise ValueError(f"the variance R must be finite, got {variance!r}")
    variance = _positive_fraction(variance, "the variance R")
    if isinstance(queries, bool) or not isinstance(queries, (int, np.integer)) or queries < 1:
        raise ValueError(f"a batch holds at least one query, got {queries!r}")
    touched = int(queries) if touched is None else touched
    if isinstance(touched, bool) or not 1 <= touched <= queries:
        raise ValueError(f"touched must lie in 1..{queries}, got {touched!r}")
    grid = Fraction(1) if integer_valued else Fraction(1, 2**GRID_BITS)
    sigma2, t = sigma2_at_least(variance / (grid * grid))  # sigma^2 in grid steps, rounded up
    # Sensitivity: one row moves at most `touched` sums by at most 1 each, so at most 1 / grid
    # grid steps each after snapping (module docstring); L2^2 <= touched / grid^2.
    rho = Fraction(touched) / (grid * grid) / (2 * sigma2)
    return SulqPlan(variance, int(queries), int(touched), bool(integer_valued), grid, sigma2, t, rho)


def variance_for_rho(rho: float | Fraction | RhoZCDPBudget, queries: int, touched: int | None = None,
                     integer_valued: bool = False) -> Fraction:
    """The smallest variance (to the sampler's rounding) whose batch costs at most `rho`:
    R = touched / (2 rho), rounded up on a 2^-40 relative grid, then checked exactly.

    Raises:
        ValueError: A rho that is not positive and finite, or bad queries / touched.
    """
    rho = _positive_fraction(rho.rho if isinstance(rho, RhoZCDPBudget) else rho, "rho")
    touched_count = int(queries) if touched is None else int(touched)
    ideal = Fraction(touched_count) / (2 * rho)
    exponent = math.floor(math.log2(ideal)) - 40
    step = Fraction(2) ** exponent
    candidate = (ideal / step).__ceil__() * step
    while sulq_plan(candidate, queries, touched, integer_valued).rho > rho:
        candidate += step
    return candidate


def sulq_release(noise: Any, sums: Any, plan: SulqPlan) -> np.ndarray:
    """The batch's noisy sums: grid (snap(sums) + Z), Z exact discrete Gaussian of the plan's
    sigma^2 in grid steps, as doubles. The caller charges `plan.budget` BEFORE calling this.

    Args:
        noise: The randomness (`jostle.privacy.noise.Randomness` or a simulation source).
        sums: The exact sums, one per query (ints, Fractions or doubles at their exact value).
        plan: The batch's plan (`sulq_plan`); its length must match.

    Raises:
        ValueError: A sum that is not finite, or a length that is not the plan's.
    """
    units = snap(np.atleast_1d(np.asarray(sums, dtype=object if _has_fraction(sums) else None)), plan.grid)
    if units.size != plan.queries:
        raise ValueError(f"the plan is for {plan.queries} queries, got {units.size} sums")
    noisy = add(units, noise.discrete_gaussian(plan.sigma2, units.size, plan.t))
    noisy = replay.released(noise, "sulq", units, noisy, "l2", plan.shift_bound, plan.grid)
    return to_floats(noisy, plan.grid)


def _has_fraction(values: Any) -> bool:
    return isinstance(values, (list, tuple)) and any(isinstance(v, Fraction) for v in values)


__all__ = ["GRID_BITS", "CONVERSIONS", "SulqPlan", "lecture_variance", "simple_rho_for", "zcdp_variance",
           "calibration_row", "sulq_plan", "variance_for_rho", "sulq_release"]
