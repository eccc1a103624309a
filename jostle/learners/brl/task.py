"""The rule-list task: public two-class tables, seeded train/test splits, the training grid.

A rule-list Option consumes a `RuleData` and returns a fitted rule list. On the public corpus
(`corpus.rule_list_corpus`), each repetition of a `RuleGrid` is a seeded 70/30 split of a task;
the Options learn on the training part and are scored by 1 - AUC on the test part.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Iterator

from jostle.choicemaker.family import Instance, stable_seed
from jostle.learners.brl.corpus import RuleData, train_test_split

DEFAULT_METAFEATURES: tuple[str, ...] = ("size", "epsilon", "log_signal")


@dataclass(frozen=True)
class RuleGrid:
    """The configurations each task is run on.

    Attributes:
        epsilons: Total budgets of a ChoiceMaker call.
        repetitions: Seeded train/test splits (and noise draws) per (task, epsilon).
        train_share: Share of the rows used for training.
        first_rep: Index of the first repetition.
    """

    epsilons: tuple[float, ...] = (0.05, 0.1, 0.3, 1.0, 3.0)
    repetitions: int = 2
    train_share: float = 0.7
    first_rep: int = 0

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]


def instances(task: RuleData, grid: RuleGrid) -> Iterator[Instance]:
    """The public inputs of one task: the training part of each seeded split, at each epsilon."""
    tag = task.content_hash()
    for rep in range(grid.first_rep, grid.first_rep + grid.repetitions):
        train_index, test_index = train_test_split(task.n_rows, stable_seed(tag, rep, "split"), grid.train_share)
        train, test = task.rows(train_index), task.rows(test_index)
        for epsilon in grid.epsilons:
            columns = {"task": task.name, "group": task.group, "rows": train.n_rows, "epsilon": float(epsilon),
                       "rep": rep}
            yield Instance(columns, train, float(epsilon), (tag, rep, epsilon), test)
