"""Privacy measures as exact, immutable budget values: pure epsilon, approximate (epsilon,
delta) and rho-zero-concentrated DP (Bun and Steinke 2016).

Every quantity is a `fractions.Fraction`, so an equal split of a budget (1/3 + 1/3 + 1/3) is
never refused because of floating-point drift. A float the user writes is snapped to the
nearest simple rational within a relative 1e-12 (0.1 becomes exactly 1/10); noise is calibrated
with the snapped value, so what is charged is exactly what the noise provides.

  * `Budget` is the (epsilon, delta) budget of pure (delta = 0) and approximate DP, composed
    by basic composition: epsilons and deltas add (Dwork and Roth 2014, Thm 3.16).
    `PureDPBudget(e)` and `ApproxDPBudget(e, d)` build one (Tumult's names).
  * `RhoZCDPBudget` is a rho of zero-concentrated DP: rhos add under composition
    (Bun and Steinke 2016, Lemma 2.3) and parallel parts cost the largest rho.
Both kinds offer the algebra the accountant composes with (`+`, `-`, `/ n`, `join` for
parallel parts, `covers`, `is_zero`, `quantities`), so one cost tree serves every measure.
Which measure a session accounts in is its `Accounting` (jostle.privacy.accounting converts
charges into it); the conversions between measures are in jostle.privacy.conversions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Union

from jostle.diagnostics.errors import JostleRuntimeError

_SNAP_DENOMINATOR = 10**9
_SNAP_TOLERANCE = 1e-12


def exact(value: float | int | str | Fraction, what: str = "epsilon") -> Fraction:
    """Turn a user-supplied number into the exact rational the accountant uses.

    Floats are snapped to the simplest nearby rational (denominator <= 1e9) when one lies
    within a relative 1e-12, which undoes decimal and division round-off; otherwise the float's
    exact binary value is kept.

    Raises:
        JostleRuntimeError: The value is not a finite, non-negative number.
    """
    if isinstance(value, bool):
        raise JostleRuntimeError(f"{what} must be a number, not a boolean")
    if isinstance(value, Fraction):
        result = value
    elif isinstance(value, int):
        result = Fraction(value)
    elif isinstance(value, str):
        try:
            result = Fraction(value)
        except (ValueError, ZeroDivisionError):
            raise JostleRuntimeError(f"{what} must be a number, got {value!r}") from None
    else:
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise JostleRuntimeError(f"{what} must be a number, got {value!r}") from None
        if not math.isfinite(number):
            raise JostleRuntimeError(f"{what} must be finite, got {number}")
        result = Fraction(number)
        snapped = result.limit_denominator(_SNAP_DENOMINATOR)
        if abs(snapped - result) <= _SNAP_TOLERANCE * abs(result):
            result = snapped
    if result < 0:
        raise JostleRuntimeError(f"{what} must not be negative, got {float(result)}")
    return result


def fmt(value: Fraction) -> str:
    """Show a budget quantity the way a person would write it, to 6 significant digits
    (0.25, 1e-05, 1/3 -> 0.333333). For a quantity that must read exactly, use `fmt_exact`."""
    value = Fraction(value)
    if value.denominator == 1:
        return str(value.numerator)
    return f"{float(value):.6g}"


def fmt_exact(value: Fraction) -> str:
    """Like `fmt`, but never approximate: the shortest decimal of up to 15 significant digits
    that reads back as exactly `value` (0.25, 1e-09, 0.999999999), else the fraction (1/3). A
    fraction with a denominator over 10^12, which only an unsnapped float makes, is written as
    `fmt`'s text marked approximate ("~0.1")."""
    value = Fraction(value)
    text = fmt(value)
    if value.denominator == 1:
        return text
    for digits in range(6, 16):
        decimal = f"{float(value):.{digits}g}"
        if Fraction(decimal) == value:
            return decimal
    if value.denominator <= 10**12:
        return f"{value.numerator}/{value.denominator}"
    return "~" + text


@dataclass(frozen=True, order=False)
class Budget:
    """An immutable (epsilon, delta) privacy budget with exact arithmetic: pure DP when delta
    is 0, approximate DP otherwise; composed by basic composition (both add)."""

    measure_name = "approximate DP"

    epsilon: Fraction
    delta: Fraction = Fraction(0)

    @classmethod
    def of(cls, epsilon: float | int | str | Fraction, delta: float | int | str | Fraction = 0) -> Budget:
        """Build a budget from user input, validating it (epsilon >= 0, 0 <= delta < 1)."""
        eps = exact(epsilon, "epsilon")
        dlt = exact(delta, "delta")
        if dlt >= 1:
            raise JostleRuntimeError(f"delta must be below 1, got {float(dlt)}")
        return cls(eps, dlt)

    @classmethod
    def zero(cls) -> Budget:
        return cls(Fraction(0), Fraction(0))

    def __add__(self, other: Budget) -> Budget:
        return Budget(self.epsilon + other.epsilon, self.delta + other.delta)

    def __sub__(self, other: Budget) -> Budget:
        return Budget(self.epsilon - other.epsilon, self.delta - other.delta)

    def __truediv__(self, parts: int) -> Budget:
        return Budget(self.epsilon / parts, self.delta / parts)

    def covers(self, other: Budget) -> bool:
        """True if `other` fits within this budget in both epsilon and delta."""
        return other.epsilon <= self.epsilon and other.delta <= self.delta

    def join(self, other: Budget) -> Budget:
        """Componentwise maximum: the cost of two parallel (disjoint) branches."""
        return Budget(max(self.epsilon, other.epsilon), max(self.delta, other.delta))

    def quantities(self) -> tuple[tuple[str, Fraction], ...]:
        """The named quantities a cap bounds, each checked on its own."""
        return (("epsilon", self.epsilon), ("delta", self.delta))

    def is_zero(self) -> bool:
        return self.epsilon == 0 and self.delta == 0

    def floor_at_zero(self) -> Budget:
        """Each quantity raised to at least 0 (what is left of a cap is never negative)."""
        return Budget(max(Fraction(0), self.epsilon), max(Fraction(0), self.delta))

    def meet(self, other: Budget) -> Budget:
        """Componentwise minimum: the most that fits under both of two caps."""
        return Budget(min(self.epsilon, other.epsilon), min(self.delta, other.delta))

    def __str__(self) -> str:
        """`epsilon=E` or `epsilon=E, delta=D`, each written exactly (see `fmt_exact`)."""
        if self.delta:
            return f"epsilon={fmt_exact(self.epsilon)}, delta={fmt_exact(self.delta)}"
        return f"epsilon={fmt_exact(self.epsilon)}"


def PureDPBudget(epsilon: float | int | str | Fraction) -> Budget:  # noqa: N802 (a constructor)
    """A pure epsilon budget (delta 0), validated."""
    return Budget.of(epsilon, 0)


def ApproxDPBudget(epsilon: float | int | str | Fraction,  # noqa: N802 (a constructor)
                   delta: float | int | str | Fraction) -> Budget:
    """An approximate (epsilon, delta) budget, validated."""
    return Budget.of(epsilon, delta)


@dataclass(frozen=True, order=False)
class RhoZCDPBudget:
    """An immutable rho of zero-concentrated DP (Bun and Steinke 2016, Def. 1.1), exact.

    Composition adds rhos (their Lemma 2.3); parts of a partition, which hold disjoint rows,
    cost the largest rho (each individual is in one part: the privacy loss of the whole is that
    of the one part that holds them).
    """

    rho: Fraction
    measure_name = "zCDP"

    @classmethod
    def of(cls, rho: float | int | str | Fraction) -> RhoZCDPBudget:
        """Build a rho from user input, validating it (rho >= 0, finite)."""
        return cls(exact(rho, "rho"))

    @classmethod
    def zero(cls) -> RhoZCDPBudget:
        return cls(Fraction(0))

    def __add__(self, other: RhoZCDPBudget) -> RhoZCDPBudget:
        return RhoZCDPBudget(self.rho + other.rho)

    def __sub__(self, other: RhoZCDPBudget) -> RhoZCDPBudget:
        return RhoZCDPBudget(self.rho - other.rho)

    def __truediv__(self, parts: int) -> RhoZCDPBudget:
        return RhoZCDPBudget(self.rho / parts)

    def covers(self, other: RhoZCDPBudget) -> bool:
        return other.rho <= self.rho

    def join(self, other: RhoZCDPBudget) -> RhoZCDPBudget:
        return RhoZCDPBudget(max(self.rho, other.rho))

    def meet(self, other: RhoZCDPBudget) -> RhoZCDPBudget:
        return RhoZCDPBudget(min(self.rho, other.rho))

    def quantities(self) -> tuple[tuple[str, Fraction], ...]:
        return (("rho", self.rho),)

    def is_zero(self) -> bool:
        return self.rho == 0

    def floor_at_zero(self) -> RhoZCDPBudget:
        return RhoZCDPBudget(max(Fraction(0), self.rho))

    def __str__(self) -> str:
        """`rho=R`, written exactly (see `fmt_exact`)."""
        return f"rho={fmt_exact(self.rho)}"


AnyBudget = Union[Budget, RhoZCDPBudget]
"""A budget in any measure."""


def zero_like(budget: AnyBudget) -> AnyBudget:
    """The zero of `budget`'s measure."""
    return type(budget).zero()
