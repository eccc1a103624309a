"""Split grids and training instances: how a coded task becomes the engine's public inputs.

On a public corpus, each repetition of a `SplitGrid` is a seeded split of a task (70/30 by
default); the Options learn on the training part and the family's error measure scores them on
the test part. A family keeps its own grid's defaults (a subclass with other field defaults):
the grid's digest, a cache key, hashes its fields only.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Iterator

from jostle.choicemaker.family import Instance, stable_seed
from jostle.learnerkit.tables import ClassificationData, train_test_split


@dataclass(frozen=True)
class SplitGrid:
    """The configurations each task is run on.

    Attributes:
        epsilons: Total budgets of a ChoiceMaker call.
        repetitions: Seeded train/test splits (and noise draws) per (task, epsilon).
        train_share: Share of the rows used for training (the rest is the test part).
        first_rep: Index of the first repetition (another value gives independent draws).
    """

    epsilons: tuple[float, ...] = (0.05, 0.1, 0.3, 1.0, 3.0)
    repetitions: int = 2
    train_share: float = 0.7
    first_rep: int = 0

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]


def instances(task: ClassificationData, grid: SplitGrid) -> Iterator[Instance]:
    """The public inputs of one task: the training part of each seeded split, at each epsilon
    (the test part is what the error measure scores)."""
    tag = task.content_hash()
    for rep in range(grid.first_rep, grid.first_rep + grid.repetitions):
        train_index, test_index = train_test_split(task.n_rows, stable_seed(tag, rep, "split"), grid.train_share)
        train, test = task.rows(train_index), task.rows(test_index)
        for epsilon in grid.epsilons:
            columns = {"task": task.name, "group": task.group, "rows": train.n_rows, "epsilon": float(epsilon),
                       "rep": rep}
            yield Instance(columns, train, float(epsilon), (tag, rep, epsilon), test)
