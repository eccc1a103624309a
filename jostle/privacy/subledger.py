"""One sub-ledger for every learner, Option and dispatch: exact charges within a cap.

A learner fit, an Option run, a metafeature step or a ChoiceMaker dispatch is given a cap (a
budget already charged to, or checked by, an outside accountant) and spends it in steps. A
`Subledger` holds that cap and the steps' charges:

  * **Refused before added.** `Subledger.charge(cost, description, part=None)` computes what
    the total would be with the charge, and raises `OverBudgetError` if the cap does not cover
    it, before anything is added, forwarded or drawn; only then does it call the optional
    `callback` (the outside accountant, which may refuse in its turn: then nothing is added
    either), then add the charge and record it. Check, forward, add: never add then check.
  * **Exact.** Amounts are `jostle.privacy.measures` budgets with `Fraction` quantities; a float
    is read as its exact binary value (never snapped), so a cap of 1.0 holds 0.7 and then
    0.3 - 1e-16 but refuses 0.3000000000000001.
  * **Typed.** The cap's measure is the ledger's: a charge in another measure is converted by
    the session accountant's own rule (`jostle.privacy.accounting.Accounting.cost`): a pure
    epsilon e counts e^2 / 2 against a rho (an e-DP mechanism is e^2/2-zCDP, Bun and Steinke
    2016, Prop. 1.4); a rho charged against a pure cap has no sound conversion and is refused.
  * **Parallel parts.** A charge concerns the whole input (`part=None`) or one of several
    disjoint parts of it (`part=p`, e.g. the random parts trees are grown on, or the sibling
    nodes of one level of a tree, whose rows are disjoint). The composed cost is

        (sum of whole-input charges) + max over parts p of (sum of the charges on part p),

    sequential composition across whole-input steps and parallel composition across disjoint
    parts (McSherry 2009, Thm 2 and 4; for rho, Bun and Steinke 2016: a partition costs its
    largest rho). A charge on a part that stays below the costliest part costs nothing more.
  * **Recorded.** Every accepted charge is kept in `records` (a `SubCharge`: the cost as the
    mechanism stated it, what it counted in the cap's measure, the part, the total after it),
    which tests, traces and the replay audits read.

`OverBudgetError` is the one over-budget error of the learners, their Options, the metafeature
steps, the dispatch and the shared estimator budget (`jostle.privacy.shared_budget`). It is a
`ValueError`, as most of the six classes it replaces were. The old names stay importable as
aliases (`BudgetExceededError`, `HistogramBudgetError`, `ChoiceBudgetError`, `LearnerOverspent`).

`option_guard(name, cap)` is the guard a family's `run_option` hands its learner: a charge
function `(epsilon, description) -> None` that refuses, before the learner draws, any step
that would take the learner past what its Option was charged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Union

from jostle.privacy.accounting import DP, ZCDP, Accounting, MeasureMismatch
from jostle.privacy.measures import AnyBudget, Budget, RhoZCDPBudget, zero_like

Cost = Union[AnyBudget, Fraction, float, int]
"""A charge: a typed budget, or a number read as a pure epsilon (a float's exact binary value)."""

Forward = Callable[[AnyBudget, str], None]
"""An outside accountant: forward(cost, description), raising if it refuses."""


class OverBudgetError(ValueError):
    """A charge would take a budget past its cap; raised before anything was added or drawn."""


def as_cost(value: Cost) -> AnyBudget:
    """A typed budget as it is, or a number read as a pure epsilon, exactly (a float's exact
    binary value, never snapped: never more than the caller computed with).

    Raises:
        ValueError: A boolean, or a number that is not finite and at least 0.
    """
    if isinstance(value, (Budget, RhoZCDPBudget)):
        return value
    if isinstance(value, bool):
        raise ValueError("a budget is a number or a Budget, not a boolean")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"epsilon must be finite, got {value!r}")
    amount = Fraction(value)
    if amount < 0:
        raise ValueError(f"epsilon must not be negative, got {float(amount)}")
    return Budget(amount, Fraction(0))


def _positive(budget: AnyBudget) -> bool:
    values = [value for _, value in budget.quantities()]
    return all(value >= 0 for value in values) and any(value > 0 for value in values)


@dataclass(frozen=True)
class SubCharge:
    """One accepted charge of a `Subledger`.

    Attributes:
        cost: The cost as the mechanism stated it (what was forwarded).
        counted: The cost in the cap's measure (what was added).
        description: What was measured.
        part: The disjoint part it concerns, or None for the whole input.
        total_after: The composed total once it was added.
        increase: How much it raised the composed total (0 for a part below the costliest).
    """

    cost: AnyBudget
    counted: AnyBudget
    description: str
    part: int | None
    total_after: AnyBudget
    increase: AnyBudget

    @property
    def epsilon(self) -> float:
        """The pure epsilon stated, as a float (pure-epsilon learners read it)."""
        return float(getattr(self.cost, "epsilon", 0))


class Subledger:
    """Charges of one run within a cap, refused before they are added (see the module docstring).

    Args:
        cap: What the run may spend: a typed budget, or a number read as a pure epsilon.
        callback: The outside accountant, called as callback(amount, description) after the
            check and before the charge is added (so before the caller draws noise).
        forward_increase: Forward the increase of the composed total (skipping charges that
            parallel composition makes free) instead of the cost as stated.
        name: How the cap is named in refusals (e.g. "the learner's epsilon").
    """

    def __init__(self, cap: Cost, callback: Forward | None = None, *, forward_increase: bool = False,
                 name: str = "the budget") -> None:
        self.budget: AnyBudget = as_cost(cap)
        self.callback = callback
        self.forward_increase = forward_increase
        self.name = name
        self.records: list[SubCharge] = []
        self._accounting = Accounting(ZCDP) if isinstance(self.budget, RhoZCDPBudget) else Accounting(DP)
        self._whole: AnyBudget = zero_like(self.budget)
        self._parts: dict[int, AnyBudget] = {}

    # ------------------------------------------------------------------ what is spent
    @property
    def cap(self) -> AnyBudget:
        """What may be spent in all."""
        return self.budget

    @property
    def spent(self) -> AnyBudget:
        """The composed total so far, exactly, in the cap's measure."""
        return self._composed(self._whole, self._parts)

    @property
    def remaining(self) -> AnyBudget:
        """What is left of the cap (never below zero)."""
        return (self.budget - self.spent).floor_at_zero()

    @property
    def spent_epsilon(self) -> Fraction:
        """The composed total's epsilon (a pure or approximate cap), exactly."""
        return Fraction(getattr(self.spent, "epsilon"))

    def part_spent(self, part: int | None) -> AnyBudget:
        """What the charges on one disjoint part (None: the whole input) have cost so far."""
        return self._whole if part is None else self._parts.get(part, zero_like(self.budget))

    def _composed(self, whole: AnyBudget, parts: dict[int, AnyBudget]) -> AnyBudget:
        largest = zero_like(self.budget)
        for spent in parts.values():
            largest = largest.join(spent)
        return whole + largest

    # ------------------------------------------------------------------ the one guard
    def charge(self, cost: Cost, description: str, part: int | None = None) -> SubCharge:
        """Check, forward, then add one charge; refused before anything is added or forwarded.

        Args:
            cost: What the step spends (a number is a pure epsilon).
            description: What the step measures (for records and refusals).
            part: The disjoint part the step reads, or None for the whole input.

        Returns:
            The record of the charge.

        Raises:
            ValueError: The cost is not positive and finite.
            OverBudgetError: The total would pass the cap, or the cost has no sound conversion
                into the cap's measure; nothing was added or forwarded.
        """
        stated = as_cost(cost)
        if not _positive(stated):
            raise ValueError(f"a charge needs a positive, finite budget, got {stated} for {description}")
        try:
            counted = self._accounting.cost(stated)
        except MeasureMismatch as error:  # e.g. a rho charged against a pure epsilon
            raise OverBudgetError(f"{description}: {error}") from None
        before = self.spent
        whole = self._whole + counted if part is None else self._whole
        parts = dict(self._parts)
        if part is not None:
            parts[part] = parts.get(part, zero_like(self.budget)) + counted
        after = self._composed(whole, parts)
        if not self.budget.covers(after):
            raise OverBudgetError(f"{description}: {stated} would bring the total to {after}, over {self.name} "
                                  f"({self.budget}); nothing was charged or drawn")
        increase = after - before
        if self.callback is not None:
            if not self.forward_increase:
                self.callback(stated, description)
            elif not increase.is_zero():
                self.callback(increase, description)
        self._whole, self._parts = whole, parts
        record = SubCharge(stated, counted, description, part, after, increase)
        self.records.append(record)
        return record

    def guard(self, cost: Cost, description: str) -> None:
        """`charge` on the whole input, as a charge function (epsilon, description) -> None."""
        self.charge(cost, description)

    def __repr__(self) -> str:
        return f"Subledger(spent {self.spent} of {self.budget}, {len(self.records)} charge(s); {self.name})"


def option_guard(option_name: str, cap: Cost) -> Callable[[Any, str], None]:
    """The charge function a family's `run_option` gives its learner: it refuses (raising
    `OverBudgetError` before the learner draws) any step that would take the learner past
    `cap`, what its Option was charged (a float is its exact value).

    Use: `option.fit(data, epsilon, noise, option_guard(option.name, epsilon), ...)`.
    """
    return Subledger(cap, name=f"what Option {option_name} was charged").guard


BudgetExceededError = OverBudgetError
"""The estimators' and learners' name for `OverBudgetError` (kept importable)."""
HistogramBudgetError = OverBudgetError
"""The histogram algorithms' name for `OverBudgetError` (kept importable)."""
ChoiceBudgetError = OverBudgetError
"""The dispatch's name for `OverBudgetError` (kept importable)."""
LearnerOverspent = OverBudgetError
"""The families' `run_option` name for `OverBudgetError` (kept importable)."""

__all__ = ["OverBudgetError", "Subledger", "SubCharge", "Cost", "Forward", "as_cost", "option_guard",
           "BudgetExceededError", "HistogramBudgetError", "ChoiceBudgetError", "LearnerOverspent"]
