"""The decision-tree family as the ChoiceMaker engine sees it.

Input: a `ClassificationData` (integer codes with public domain sizes and class count; privacy
unit one row). Options: the tree learners of `options.TREE_OPTIONS`. Error: 1 - accuracy on the
test part of a seeded split. One segment. Payoff rule "paired": tree accuracies do not scale as
1/epsilon, so a "public" mode (free metafeatures, whole budget to the learner) is validated
beside the "measured" one (see `jostle.choicemaker.engine`).

When the noisy size was released among the metafeatures, the learner gets it as its
`table_size` (a released value: reusing it costs nothing) instead of measuring it again.

Units and measures. The learners are pure-epsilon mechanisms run at the pure epsilon within the
budget they are given (a rho r in a zCDP program: the largest epsilon with epsilon^2 / 2 <= r).
Their privacy arguments are for neighbours one row apart, so the family learns from row-unit
data, and from entity-unit data only once it holds one row per entity: the language refuses,
before any charge, a table whose stability is above 1 or unbounded (`language.check_learnable`);
it does not scale its noise to the stability. Replace-one data is refused.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from jostle.choicemaker.family import Family, Instance, MetafeatureContext, run_epsilon
from jostle.privacy.measures import AnyBudget
from jostle.learners.trees.options import TREE_OPTIONS, learner_budget
from jostle.learners.trees.task import DEFAULT_METAFEATURES, TreeGrid, instances


class LearnerOverspent(RuntimeError):
    """A learner asked for more than its Option was charged (raised before its noise is drawn)."""


class TreeFamily(Family):
    """Classification trees learned from a table of categorical columns."""

    name = "trees"
    task = "classification"
    error_name = "1 - test accuracy"
    config_columns = ("task", "group", "rows", "epsilon")
    segment_column = None
    modes = ("measured", "public")
    payoff_rule = "paired"
    default_metafeatures = DEFAULT_METAFEATURES
    seconds_per_piece = 3.5  # measured: about 3 s per task per core (jostle train --all, 2 cores)
    language_module = "jostle.learners.trees.language"
    units = ("row", "entity")  # entity data only at stability 1 (refused above, see the module docstring)
    measures = ("pure", "zcdp")

    def options(self) -> Mapping[str, Any]:
        return TREE_OPTIONS

    def metafeatures(self) -> Mapping[str, Any]:
        from jostle.learners.trees.metafeatures import TREE_METAFEATURES

        return TREE_METAFEATURES

    def default_corpus(self, options: Sequence[Any]) -> Sequence[Any]:
        from jostle.learners.trees.corpus import tree_corpus

        return tree_corpus()

    def default_grid(self) -> TreeGrid:
        return TreeGrid()

    def piece_cost(self, task: Any, piece: Any) -> float:
        return float(task.n_rows * task.n_attributes)

    def instances(self, task: Any, piece: Any, grid: Any) -> Iterable[Instance]:
        return instances(task, grid)

    def context(self, data: Any, option_budget: AnyBudget, total_budget: AnyBudget) -> MetafeatureContext:
        return MetafeatureContext(option_budget, total_budget)

    def run_option(self, option: Any, data: Any, budget: AnyBudget, noise: Any,
                   released: Mapping[str, float]) -> Any:
        # The caller charged the pure epsilon within `budget` in full (`planned_cost`); the
        # learner gets a hair less (`learner_budget`: its ledger rounds each charge up) and this
        # guard refuses, before any draw, a learner that would spend more than it was given.
        epsilon = run_epsilon(budget)
        cap, spent = Fraction(epsilon), [Fraction(0)]

        def guard(amount: float, description: str) -> None:
            if spent[0] + Fraction(amount) > cap:
                raise LearnerOverspent(f"{option.name} exceeded its budget at {description}")
            spent[0] += Fraction(amount)

        size = released.get("size") if "size" in released and self.metafeatures()["size"].cost else None
        return option.fit(data, learner_budget(epsilon), noise, guard, size)

    def error(self, instance: Instance, result: Any) -> float:
        test = instance.evaluation
        return 1.0 - float(np.mean(result.predict(test.X) == test.y))

    def neighbouring_inputs(self, seed: int) -> tuple[Any, Any]:
        from jostle.learners.trees.corpus import ClassificationData

        rng = np.random.default_rng(seed)
        X = rng.integers(0, 3, size=(60, 3))
        y = (X[:, 0] + rng.integers(0, 2, size=60) > 1).astype(np.int64)
        data = ClassificationData(X, y, (3, 3, 3), 2, ("a", "b", "c"), (0, 1), name="neighbours")
        return data, data.rows(np.arange(59))  # one row removed

    def describe(self, result: Any) -> str:
        return result.to_text(max_trees=1) if hasattr(result, "to_text") else repr(result)


FAMILY = TreeFamily()
