"""Conversions between privacy measures, each rounded in the direction that never under-reports.

  * pure epsilon -> zCDP: an epsilon-DP mechanism is (epsilon^2 / 2)-zCDP (Bun and Steinke
    2016, Prop. 1.4). Exact: `pure_to_rho`.
  * zCDP -> (epsilon, delta): rho-zCDP implies (epsilon, delta)-DP for every alpha > 1 with
        epsilon = alpha rho + (log(1/delta) + (alpha - 1) log(1 - 1/alpha) - log(alpha)) / (alpha - 1)
    (Canonne, Kamath and Steinke 2020, "The Discrete Gaussian for Differential Privacy",
    Cor. 13, solved for epsilon: their delta = exp((alpha - 1)(alpha rho - epsilon)) /
    (alpha - 1) * (1 - 1/alpha)^alpha). Every alpha gives a valid bound, so the numerical
    minimisation over alpha only affects tightness, never soundness; the value at the alpha
    found is evaluated in floating point and then raised by a relative 1e-9 plus 1e-12 to cover
    rounding, and returned as an exact rational (`zcdp_to_epsilon`). The simpler bound
    rho + 2 sqrt(rho log(1/delta)) (Bun and Steinke 2016, Prop. 1.3) is `simple_zcdp_to_epsilon`,
    kept for comparison: at rho 0.5, delta 1e-6 it gives 5.7565 against CKS's 5.2215.
  * (epsilon, delta) total -> a rho cap: the largest rho whose conversion fits the stated
    epsilon at the stated delta (`rho_for`), found by bisection and then certified by
    `zcdp_to_epsilon` at the exact rational returned.
  * group privacy, for a release made under one unit and counted under a coarser one (a row
    replaced is one removed and one added): k neighbouring steps turn epsilon-DP into
    k epsilon-DP, (epsilon, delta)-DP into (k epsilon, k e^((k-1) epsilon) delta)-DP (Dwork and
    Roth 2014, Thm 2.2 and its approximate form, Vadhan 2017 Lemma 2.2), and rho-zCDP into
    (k^2 rho)-zCDP (Bun and Steinke 2016, Prop. 1.9): `group_privacy`.
  * advanced composition (Dwork, Rothblum and Vadhan 2010; Dwork and Roth 2014, Thm 3.20), for
    the accounting benchmark only: k mechanisms each (epsilon, delta)-DP are
    (sqrt(2 k ln(1/delta')) epsilon + k epsilon (e^epsilon - 1), k delta + delta')-DP.
"""

from __future__ import annotations

import math
from fractions import Fraction

from jostle.privacy.measures import Budget, RhoZCDPBudget

_RELATIVE_MARGIN = 1e-9
_ABSOLUTE_MARGIN = 1e-12


def _up(value: float) -> Fraction:
    """A rational at least `value` plus the rounding margin (for a computed epsilon)."""
    return Fraction(value + abs(value) * _RELATIVE_MARGIN + _ABSOLUTE_MARGIN)


def pure_to_rho(epsilon: Fraction) -> Fraction:
    """The rho of an epsilon-DP release: epsilon^2 / 2 (Bun and Steinke 2016, Prop. 1.4). Exact."""
    epsilon = Fraction(epsilon)
    return epsilon * epsilon / 2


def _cks_epsilon(rho: float, log_inverse_delta: float, alpha: float) -> float:
    """CKS 2020 Cor. 13 solved for epsilon at one alpha > 1 (any alpha gives a valid bound)."""
    return alpha * rho + (log_inverse_delta + (alpha - 1) * math.log1p(-1 / alpha) - math.log(alpha)) / (alpha - 1)


def zcdp_to_epsilon(rho: Fraction | float, delta: Fraction | float) -> Fraction:
    """An epsilon such that rho-zCDP implies (epsilon, delta)-DP (CKS 2020 Cor. 13), rounded up.

    Args:
        rho: The zCDP parameter (>= 0).
        delta: The target delta, in (0, 1).

    Returns:
        An exact rational epsilon; 0 for rho 0.
    """
    rho_value, delta_value = float(rho), float(delta)
    if not 0 < delta_value < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta_value}")
    if rho_value <= 0:
        return Fraction(0)
    # Round rho up and delta down in floating point, so the bound evaluated is for at least
    # the true rho and at most the true delta (both only raise epsilon).
    if Fraction(rho_value) < Fraction(rho):
        rho_value = math.nextafter(rho_value, math.inf)
    if Fraction(delta_value) > Fraction(delta):
        delta_value = math.nextafter(delta_value, 0.0)
    log_inverse = -math.log(delta_value)

    def at(log_alpha_minus_1: float) -> float:
        return _cks_epsilon(rho_value, log_inverse, 1 + math.exp(log_alpha_minus_1))

    grid = [-20 + 0.25 * i for i in range(201)]  # alpha - 1 from e^-20 to e^30
    best = min(grid, key=at)
    low, high = best - 0.25, best + 0.25
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(100):  # golden-section refinement: any alpha is valid, this only tightens
        left, right = high - ratio * (high - low), low + ratio * (high - low)
        if at(left) < at(right):
            high = right
        else:
            low = left
    value = min(at(best), at((low + high) / 2))
    # The bound never exceeds the simple one by more than rounding; keep the smaller (both valid).
    # A negative epsilon is a valid bound for a tiny rho at a large delta (eps-DP implies
    # (eps + ln(1 - delta), delta)-DP), but reads as nonsense: it is raised to 0, still a bound.
    return max(Fraction(0), min(_up(value), simple_zcdp_to_epsilon(rho, delta)))


def simple_zcdp_to_epsilon(rho: Fraction | float, delta: Fraction | float) -> Fraction:
    """rho + 2 sqrt(rho log(1/delta)) (Bun and Steinke 2016, Prop. 1.3), rounded up."""
    rho_value, delta_value = float(rho), float(delta)
    if rho_value <= 0:
        return Fraction(0)
    if Fraction(rho_value) < Fraction(rho):
        rho_value = math.nextafter(rho_value, math.inf)
    if Fraction(delta_value) > Fraction(delta):
        delta_value = math.nextafter(delta_value, 0.0)
    return _up(rho_value + 2 * math.sqrt(rho_value * -math.log(delta_value)))


def rho_for(epsilon: Fraction | float, delta: Fraction | float) -> Fraction:
    """The largest rho (to 10 significant digits, rounded down) whose CKS conversion is (epsilon, delta)-DP.

    Certified: `zcdp_to_epsilon(result, delta) <= epsilon` is checked at the exact rational
    returned, so a session whose releases compose to at most this rho meets (epsilon, delta).
    """
    epsilon = Fraction(epsilon)
    if epsilon <= 0:
        return Fraction(0)
    low, high = Fraction(0), max(Fraction(1), epsilon)
    while zcdp_to_epsilon(high, delta) <= epsilon:  # the conversion grows without bound in rho
        low, high = high, high * 2
    for _ in range(200):
        middle = (low + high) / 2
        middle = middle.limit_denominator(10**15) if middle.denominator > 10**15 else middle
        if zcdp_to_epsilon(middle, delta) <= epsilon:
            low = middle
        else:
            high = middle
        if high - low <= high * Fraction(1, 10**12):
            break
    # Rounded down to 10 significant digits, so that it reads as a decimal (a smaller rho is
    # still certified: the conversion grows with rho).
    scale = 10 ** max(0, 9 - math.floor(math.log10(low)))
    low = Fraction(math.floor(low * scale), scale)
    assert zcdp_to_epsilon(low, delta) <= epsilon
    return low


def to_epsilon_delta(rho: Fraction, delta: Fraction) -> Budget:
    """The (epsilon, delta) a rho-zCDP guarantee implies at `delta` (CKS 2020 Cor. 13)."""
    return Budget(zcdp_to_epsilon(rho, delta), Fraction(delta))


def group_privacy(budget: Budget | RhoZCDPBudget, size: int) -> Budget | RhoZCDPBudget:
    """What a guarantee for neighbours one step apart gives for neighbours `size` steps apart.

    Pure: size * epsilon. Approximate: (size eps, size e^((size - 1) eps) delta) (Vadhan 2017,
    Lemma 2.2: delta' = sum_{i<k} e^(i eps) delta <= k e^((k-1) eps) delta), with the exponential
    rounded up. zCDP: size^2 rho (Bun and Steinke 2016, Prop. 1.9).
    """
    if size < 1:
        raise ValueError("a group has at least one member")
    if isinstance(budget, RhoZCDPBudget):
        return RhoZCDPBudget(budget.rho * size * size)
    delta = budget.delta
    if delta:
        growth = sum(_up(math.exp(i * float(budget.epsilon))) for i in range(size))
        delta = min(Fraction(1), delta * growth)
    return Budget(budget.epsilon * size, delta)


def advanced_composition(epsilon: float, delta: float, releases: int, slack: float) -> tuple[float, float]:
    """Dwork and Roth 2014 Thm 3.20: `releases` (epsilon, delta)-DP mechanisms are
    (sqrt(2 k ln(1/slack)) eps + k eps (e^eps - 1), k delta + slack)-DP."""
    k = releases
    total = math.sqrt(2 * k * math.log(1 / slack)) * epsilon + k * epsilon * math.expm1(epsilon)
    return total, k * delta + slack
