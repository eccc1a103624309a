"""The typed budget of a ChoiceMaker call: what the engine plans, guards, charges and traces.

A dispatch is given one budget in one measure (`jostle.privacy.measures`): a pure epsilon
(`Budget` with delta 0) or a rho of zero-concentrated DP (`RhoZCDPBudget`). The plan splits that
budget into parts of the same measure (`scaled`, exact rationals); each part is given to a noisy
metafeature or to the chosen Option, which states what it will charge for it (its *planned
cost*, `Family.planned_cost`), in the measure its mechanisms are calibrated in.

Every mechanism of today's families is a pure-epsilon one (Laplace, geometric, the exponential
mechanism), so the default planned cost of a part is `pure_cost(part)`: the pure epsilon that
fits in it (`pure_epsilon_within`):

  * a pure part e: e itself (the privacy map of an e-DP run is the identity);
  * a rho part r: the largest simple rational epsilon with epsilon^2 / 2 <= r
    (`jostle.privacy.accounting.epsilon_within_rho`, exact, rounded down). An epsilon-DP
    mechanism is (epsilon^2 / 2)-zCDP (Bun and Steinke 2016, Prop. 1.4), so running at that
    epsilon spends at most r; the accountant charges it converted (`Accounting.cost`).

`in_measure` converts a cost into the dispatch's measure with the same rules as the session's
accountant (`jostle.privacy.accounting.Accounting.cost`), so what the guard adds up is what the
accountant will add up. Python callers may still pass a number: it is read as a pure epsilon
(`as_budget`), the budget they meant before budgets were typed.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from jostle.privacy.accounting import DP, ZCDP, Accounting, MeasureMismatch, epsilon_within_rho
from jostle.privacy.measures import AnyBudget, Budget, RhoZCDPBudget

PURE = "pure"
APPROXIMATE = "approximate"
MEASURE_NAMES = (PURE, APPROXIMATE, "zcdp")


def as_budget(value: Any) -> AnyBudget:
    """A budget value as it is, or a number read as a pure epsilon (a float is its exact binary
    value, never more than the caller's own accountant holds).

    Raises:
        ValueError: A number that is not finite and at least 0.
    """
    if isinstance(value, (Budget, RhoZCDPBudget)):
        return value
    if isinstance(value, bool):
        raise ValueError("a budget is a number or a Budget, not a boolean")
    if not isinstance(value, Fraction):
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"epsilon must be finite, got {value!r}")
        value = Fraction(number) if isinstance(value, float) else Fraction(value)
    if value < 0:
        raise ValueError(f"epsilon must not be negative, got {float(value)}")
    return Budget(value, Fraction(0))


def measure_of(budget: AnyBudget) -> str:
    """The measure a budget is stated in: "pure", "approximate" (delta > 0) or "zcdp"."""
    if isinstance(budget, RhoZCDPBudget):
        return "zcdp"
    return APPROXIMATE if budget.delta else PURE


def accounting_for(budget: AnyBudget) -> Accounting:
    """The accounting that composes budgets of `budget`'s measure (what the guard adds up in)."""
    return Accounting(ZCDP) if isinstance(budget, RhoZCDPBudget) else Accounting(DP)


def scaled(budget: AnyBudget, fraction: Fraction) -> AnyBudget:
    """`budget` times an exact fraction (every quantity scaled: a share of the budget)."""
    fraction = Fraction(fraction)
    if isinstance(budget, RhoZCDPBudget):
        return RhoZCDPBudget(budget.rho * fraction)
    return Budget(budget.epsilon * fraction, budget.delta * fraction)


def pure_epsilon_within(budget: AnyBudget) -> Fraction:
    """The exact pure epsilon a pure-epsilon mechanism runs at within `budget` (see the module
    docstring): a pure or approximate budget's epsilon (a pure release spends no delta), a rho's
    largest epsilon with epsilon^2 / 2 <= rho."""
    if isinstance(budget, RhoZCDPBudget):
        return epsilon_within_rho(budget.rho)
    return Fraction(budget.epsilon)


def pure_cost(budget: AnyBudget) -> Budget:
    """What a pure-epsilon mechanism given `budget` charges: its epsilon, delta 0."""
    return Budget(pure_epsilon_within(budget), Fraction(0))


def in_measure(cost: AnyBudget, like: AnyBudget) -> AnyBudget:
    """`cost` in the measure of `like` (pure epsilon -> epsilon^2 / 2 for a rho), by the
    accountant's own rules (`Accounting.cost`).

    Raises:
        MeasureMismatch: No sound conversion (a rho into epsilon, (epsilon, delta > 0) into rho).
    """
    return accounting_for(like).cost(cost)


def is_positive(budget: AnyBudget) -> bool:
    """Whether every quantity is finite and at least one is above 0."""
    values = [value for _, value in budget.quantities()]
    return all(v >= 0 and math.isfinite(float(v)) for v in values) and any(v > 0 for v in values)


def budget_float(budget: AnyBudget) -> float:
    """The budget's main quantity as a float (epsilon, or rho), for traces and messages."""
    return float(budget.rho) if isinstance(budget, RhoZCDPBudget) else float(budget.epsilon)


__all__ = ["PURE", "APPROXIMATE", "MEASURE_NAMES", "MeasureMismatch", "as_budget", "measure_of", "accounting_for",
           "scaled", "pure_epsilon_within", "pure_cost", "in_measure", "is_positive", "budget_float"]
