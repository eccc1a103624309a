"""Floats that never overstate a budget: how the learners turn exact budgets into the floats
their mechanisms compute with.

Budgets are exact rationals (`jostle.privacy.measures`), but the samplers, the learners and the
outside callbacks compute with floats. Rounding to the nearest float may round *up*, and a
mechanism calibrated to an epsilon above what was charged would spend more than it paid for.
So every conversion here says which way it rounds:

  * `floor_float(value)`: the largest float not above `value`. A mechanism calibrates its
    noise to this, so it never runs above what was charged (noise calibrated to a smaller
    epsilon is only larger: the mechanism is DP at the epsilon charged, and spends no more).
  * `ceil_float(value)`: the smallest float not below `value`. What an outside accountant is
    told a step cost when the callback takes floats: rounding up never under-reports a cost.
  * `split_budget(epsilon, shares)`: named float parts of an epsilon whose *exact* sum is at
    most epsilon, so charging every part never passes the budget (sequential composition of
    the parts costs their sum).

Every learner imports these (the tree plans, the rule-list steps, the histogram algorithms,
the language's Options); `jostle.privacy.budget` re-exports `floor_float` and `ceil_float`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np


def floor_float(value: Fraction) -> float:
    """The largest float not above the exact rational `value`."""
    approximation = float(value)
    if Fraction(approximation) > value:
        approximation = math.nextafter(approximation, -math.inf)
    return approximation


def ceil_float(value: Fraction) -> float:
    """The smallest float not below the exact rational `value` (what an outside accountant
    is charged: rounding up never under-reports a cost)."""
    approximation = float(value)
    if Fraction(approximation) < value:
        approximation = math.nextafter(approximation, math.inf)
    return approximation


def split_budget(epsilon: float, shares: dict[str, float]) -> dict[str, float]:
    """Split epsilon into named parts proportional to `shares` (which must sum to 1).

    The parts are floats whose exact sum is <= epsilon: the last part is epsilon minus the
    others, nudged down by ulps if rounding would make the exact sum exceed epsilon.

    Raises:
        ValueError: Shares that are empty, negative or do not sum to 1 (within 1e-9).
    """
    if not shares or any(v < 0 for v in shares.values()):
        raise ValueError("shares must be non-negative and non-empty")
    if abs(sum(shares.values()) - 1.0) > 1e-9:
        raise ValueError(f"shares must sum to 1, got {sum(shares.values())}")
    names = list(shares)
    parts = {name: epsilon * shares[name] for name in names[:-1]}
    last = epsilon - sum(parts.values())
    while Fraction(last) + sum((Fraction(v) for v in parts.values()), Fraction(0)) > Fraction(epsilon):
        last = float(np.nextafter(last, 0.0))
    parts[names[-1]] = max(last, 0.0)
    return parts


__all__ = ["floor_float", "ceil_float", "split_budget"]
