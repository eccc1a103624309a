"""The SuLQ task: public classification tables, seeded splits, a training grid in rho.

A SuLQ Option consumes a `ClassificationData` and returns a fitted model. On the public corpus
(`corpus.sulq_corpus`), each repetition of a `SulqGrid` is a seeded 70/30 split of a task (the
kit's `grids.instances`); the Options learn on the training part and are scored by
1 - accuracy on the test part. The family runs in zCDP only, so each instance's budget is the
rho epsilon^2 / 2 of the grid's epsilon (an epsilon-DP mechanism is epsilon^2 / 2-zCDP): the
`epsilon` metafeature then reads the grid's epsilon, as for the pure families, and a ChoiceMaker
across SuLQ and tree Options trains on the same budgets (the trees run at the epsilon within them).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterator

from jostle.choicemaker.family import Instance
from jostle.learnerkit.grids import SplitGrid
from jostle.learnerkit.grids import instances as split_instances
from jostle.learnerkit.tables import ClassificationData
from jostle.privacy.measures import RhoZCDPBudget

__all__ = ["DEFAULT_METAFEATURES", "SulqGrid", "instances", "rho_of"]

# The trees' defaults (the same kit metafeatures): a cross-family ChoiceMaker reads them by default.
DEFAULT_METAFEATURES: tuple[str, ...] = ("size", "epsilon", "log_signal")


def rho_of(epsilon: float) -> RhoZCDPBudget:
    """The rho epsilon^2 / 2 of a grid's epsilon (read as its shortest decimal, exactly)."""
    value = Fraction(repr(float(epsilon)))
    return RhoZCDPBudget(value * value / 2)


@dataclass(frozen=True)
class SulqGrid(SplitGrid):
    """The SuLQ family's grid: six budgets (as epsilons, run at rho = epsilon^2 / 2), two splits."""

    epsilons: tuple[float, ...] = (0.3, 1.0, 2.0, 5.0, 10.0, 30.0)
    repetitions: int = 2


def instances(task: ClassificationData, grid: SplitGrid) -> Iterator[Instance]:
    """The kit's instances (`grids.instances`) with each budget a rho (`rho_of`)."""
    for instance in split_instances(task, grid):
        yield dataclasses.replace(instance, budget=rho_of(instance.columns["epsilon"]))
