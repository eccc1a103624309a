"""The tree task: public classification tables, seeded train/test splits, the training grid.

A tree Option consumes a `ClassificationData` (integer codes with public domain sizes and class
count) and returns a fitted classifier. On the public corpus (`corpus.tree_corpus`), each
repetition of a `TreeGrid` is a seeded 70/30 split of a task; the Options learn on the training
part and are scored by 1 - accuracy on the test part. The grid logic is the learner kit's
(`jostle.learnerkit.grids`); this module holds the family's defaults.
"""

from __future__ import annotations

from dataclasses import dataclass

from jostle.learnerkit.grids import SplitGrid, instances

__all__ = ["DEFAULT_METAFEATURES", "MF_SHARE", "TreeGrid", "instances"]

# Issue 27: the public facts of the schema and the budget, the noisy size (which the chosen
# learner reuses as its table size) and the five metafeatures of the one contingency release
# (`jostle.learners.trees.metafeatures`), spending MF_SHARE of the budget (half on each of the
# two releases). Before, only (size, epsilon, log_signal) were offered and training kept the
# epsilon-only public mode (see the CHANGELOG of issue 27 for the before and after figures).
DEFAULT_METAFEATURES: tuple[str, ...] = ("epsilon", "n_attributes", "branching", "max_branching", "n_classes",
                                         "log_domain_product", "size", "log_signal",
                                         "contingency_log_rows_per_cell", "contingency_class_balance",
                                         "contingency_max_association", "contingency_mean_association",
                                         "contingency_one_rule_gain")
MF_SHARE = 0.05
"""The share of the budget the tree ChoiceMaker spends on its noisy metafeatures (stdlib/trees.jst)."""


@dataclass(frozen=True)
class TreeGrid(SplitGrid):
    """The tree family's grid (`SplitGrid`): nine budgets from 0.02 to 10, four splits each."""

    epsilons: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
    repetitions: int = 4
