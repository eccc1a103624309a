"""The decision-tree family as the ChoiceMaker engine sees it (a `ClassificationFamily`).

Input: a `ClassificationData`. Options: the tree learners of `options.TREE_OPTIONS`. Error:
1 - accuracy on the test part of a seeded split (or 1 - AUC, `ClassificationFamily`). One
segment. Payoff rule "paired": tree accuracies do not scale as 1/epsilon, so a "public" mode
(free metafeatures, whole budget to the learner) is validated beside the "measured" one (see
`jostle.choicemaker.engine`).

When the noisy size was released among the metafeatures, the learner gets it as its
`table_size` (a released value: reusing it costs nothing) instead of measuring it again.

Units and measures: those of `jostle.learnerkit.family` (row data, and entity data held at one
row per entity; pure and zCDP budgets, run at the pure epsilon within them).
"""

from __future__ import annotations

from typing import Any, Mapping

from jostle.learnerkit.family import ChargeFunction, ClassificationFamily, LearnerOverspent
from jostle.learners.trees.options import learner_budget
from jostle.learners.trees.task import DEFAULT_METAFEATURES

__all__ = ["FAMILY", "LearnerOverspent", "TreeFamily"]


class TreeFamily(ClassificationFamily):
    """Classification trees learned from a table of categorical columns."""

    name = "trees"
    error_measure = "accuracy"
    default_metafeatures = DEFAULT_METAFEATURES
    seconds_per_piece = 3.5  # measured: about 3 s per task per core (jostle train --all, 2 cores)
    parts = ("options:TREE_OPTIONS", "metafeatures:TREE_METAFEATURES", "corpus:tree_corpus", "task:TreeGrid")

    def piece_cost(self, task: Any, piece: Any) -> float:
        return float(task.n_rows * task.n_attributes)

    def fit_option(self, option: Any, data: Any, epsilon: float, noise: Any, guard: ChargeFunction,
                   released: Mapping[str, float] | None) -> Any:
        # The learner gets a hair less than its charge (`learner_budget`: its ledger rounds
        # each charge up); the guard holds it to the charge itself.
        size = released.get("size") if released is not None else None
        return option.fit(data, learner_budget(epsilon), noise, guard, size)

    def describe(self, result: Any) -> str:
        return result.to_text(max_trees=1) if hasattr(result, "to_text") else repr(result)


FAMILY = TreeFamily()
