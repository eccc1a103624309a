"""The rule-list task: public two-class tables, seeded train/test splits, the training grid.

A rule-list Option consumes a `RuleData` and returns a fitted rule list. On the public corpus
(`corpus.rule_list_corpus`), each repetition of a `RuleGrid` is a seeded 70/30 split of a task;
the Options learn on the training part and are scored by 1 - AUC on the test part. The grid
logic is the learner kit's (`jostle.learnerkit.grids`); this module holds the family's defaults.
"""

from __future__ import annotations

from dataclasses import dataclass

from jostle.learnerkit.grids import SplitGrid, instances

__all__ = ["DEFAULT_METAFEATURES", "RuleGrid", "instances"]

# The rule lists' signal is per item (rows per item in units of a count's noise), not per class
# and branch as the trees' `log_signal`. Measured: the noisy size and class balance (one
# release each, sensitivity 1); public: epsilon, the attribute and item counts.
DEFAULT_METAFEATURES: tuple[str, ...] = ("size", "class_balance", "epsilon", "n_attributes", "n_items",
                                         "log_item_signal")


@dataclass(frozen=True)
class RuleGrid(SplitGrid):
    """The rule-list family's grid (`SplitGrid`): five budgets from 0.01 to 1 (the benchmarks' range), two splits each."""

    epsilons: tuple[float, ...] = (0.01, 0.05, 0.1, 0.3, 1.0)
    repetitions: int = 2
