"""Privacy accounting for the tree learners: budget plans and a ledger of charges.

Privacy unit: one row added to or removed from the training table.

Every noisy measurement a learner makes is preceded by `PrivacyLedger.charge`, which (1)
checks that the composed cost stays within the epsilon given to the learner, failing with
`OverBudgetError` before anything is measured otherwise, (2) calls the optional
`charge(epsilon, description)` callback with the increase of the composed cost, so an outside
accountant (the Jostle evaluator's) is charged before noise is drawn, and (3) records the
charge. The accounting is the one sub-ledger's (`jostle.privacy.subledger.Subledger`).

Composition. A charge concerns either the whole table (`part=None`) or one of several disjoint
parts of it (`part=p`, for trees grown on disjoint random parts). The composed cost is

    sum of whole-table charges  +  max over parts p of (sum of the charges on part p),

sequential composition across whole-table queries and parallel composition across disjoint
parts (McSherry 2009, Thm 2 and 4). Inside one tree a single charge covers one batch of
measurements on sibling nodes of a level: the nodes of a level hold disjoint rows, so the
batch costs the epsilon of one node (parallel composition), and the levels add up.

Budgets are split with exact rational arithmetic and every per-query epsilon is rounded *down*
to a float (`floor_float`), so the sum of what is charged never exceeds the epsilon given.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

from jostle.privacy.rounding import ceil_float, floor_float  # noqa: F401 (re-exported: the learners round with them)
from jostle.privacy.measures import AnyBudget
from jostle.privacy.subledger import BudgetExceededError, OverBudgetError, SubCharge, Subledger  # noqa: F401

ChargeCallback = Callable[[float, str], None]

ChargeRecord = SubCharge
"""One charge of a fit (kept importable: the sub-ledger's record)."""


class PrivacyLedger:
    """Charges of one fit, checked against the learner's epsilon: a `Subledger` (parallel
    composition over disjoint parts, refused before added) that speaks floats to the learner.

    Args:
        epsilon: the epsilon the learner may spend (public).
        callback: called as callback(increase_in_composed_epsilon, description) before the
            noise of a charged measurement is drawn, the increase rounded up to a float
            (`ceil_float`); not called for a charge that parallel composition makes free (a
            later disjoint part spending no more than an earlier one).
    """

    def __init__(self, epsilon: float, callback: ChargeCallback | None = None) -> None:
        self.epsilon = epsilon
        self.callback = callback
        self.ledger = Subledger(epsilon, self._forward, forward_increase=True, name="the learner's epsilon")

    def _forward(self, increase: AnyBudget, description: str) -> None:
        if self.callback is not None:
            self.callback(ceil_float(Fraction(getattr(increase, "epsilon"))), description)

    @property
    def records(self) -> list[SubCharge]:
        """The charges accepted so far, in order."""
        return self.ledger.records

    @property
    def spent_exact(self) -> Fraction:
        """The composed cost so far, exactly."""
        return self.ledger.spent_epsilon

    @property
    def spent(self) -> float:
        """The composed cost so far (the float nearest the exact value)."""
        return float(self.spent_exact)

    def part_spent(self, part: int | None) -> Fraction:
        """What the charges on one disjoint part (None: the whole table) have cost so far."""
        return Fraction(getattr(self.ledger.part_spent(part), "epsilon"))

    def charge(self, epsilon: float, description: str, part: int | None = None) -> None:
        """Charge a batch of measurements; raises `OverBudgetError` before anything is spent."""
        self.ledger.charge(epsilon, description, part)


@dataclass(frozen=True)
class TreeBudget:
    """How one tree spends its budget (every epsilon already rounded down to a float).

    Attributes:
        total: the tree's whole budget, exactly.
        size_epsilon: per level, for the noisy sizes of the level's open nodes (0 if unused).
        split_epsilon: per level, for the exponential mechanism choosing splits (0 if unused).
        leaf_epsilon: planned for the leaves; the leaves actually get everything the tree has
            not spent when they are measured, which is at least this much.
        data_levels: the number of levels planned with a size and/or split query.
    """

    total: Fraction
    size_epsilon: float
    split_epsilon: float
    leaf_epsilon: float
    data_levels: int


def plan_tree_budget(total: Fraction, levels: int, size_queries: bool, split_queries: bool,
                     leaf_fraction: float | None, stop_fraction: float) -> TreeBudget:
    """Split one tree's budget between its levels and its leaves.

    Args:
        total: the tree's budget.
        levels: the most levels the tree may split (its depth limit).
        size_queries: whether each level measures the sizes of its nodes (noisy-size stopping).
        split_queries: whether each level chooses splits with the exponential mechanism.
        leaf_fraction: the leaves' share of `total`; None gives the leaves the share of one
            level, 1 / (levels + 1) (Friedman & Schuster's beta / (d + 1) per level).
        stop_fraction: the size query's share of a level's budget when a level makes both
            queries (Friedman & Schuster: one half).

    The sum levels * (size + split) + leaf never exceeds `total`: each part is an exact
    fraction of `total` rounded down.
    """
    data_levels = levels if (size_queries or split_queries) else 0
    if data_levels == 0:
        return TreeBudget(total, 0.0, 0.0, floor_float(total), 0)
    share = Fraction(1, data_levels + 1) if leaf_fraction is None else Fraction(leaf_fraction)
    if not 0 < share < 1:
        raise ValueError(f"leaf_fraction must be in (0, 1) when levels query the data, got {leaf_fraction}")
    per_level = total * (1 - share) / data_levels
    stop = Fraction(stop_fraction) if (size_queries and split_queries) else Fraction(int(size_queries))
    size = floor_float(per_level * stop) if size_queries else 0.0
    split = floor_float(per_level * (1 - stop)) if split_queries else 0.0
    return TreeBudget(total, size, split, floor_float(total * share), data_levels)
