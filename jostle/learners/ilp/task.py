"""The ILP task: what an Option reads (`ILPData`), the training grid, and the public instances.

An ILP Option consumes an `ILPData`: a relational database of training examples and their
facts (private in a real call, bound under the `entity(example id)` unit: a neighbour removes
one example and every fact keyed by it), the mode declarations, and the fake example's bottom
clause(s), which are public (built from the modes and the public domains only,
`fake.fake_bottom`). It returns a learned theory (`aleph.LearnedTheory`), scored by 1 - its
accuracy on a public test database (`theory.accuracy`), floored at `ERROR_FLOOR`.

On the public corpus (`corpus.ilp_corpus`), `instances` makes the training inputs: for each
task (a target theory), training size (the cache piece), repetition and epsilon of an
`ILPGrid`, `size` trains from Muggleton's generator labelled by the target (seeded by the
task's content hash, the size and the repetition, so the same on every machine), the task's
fake example (`fake.fake_for_target` with the task's k and public seed), and `test_size` test
trains of the same repetition.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any, Iterator

import numpy as np

from jostle.choicemaker.family import Instance, stable_seed
from jostle.learners.ilp import trains
from jostle.learners.ilp.corpus import ILPTask
from jostle.learners.ilp.modes import Modes, train_modes
from jostle.learners.ilp.relations import Examples, Relation, RelationalDatabase
from jostle.learners.ilp.search import BottomClause, legal_clauses
from jostle.learners.ilp.theory import accuracy

__all__ = ["ERROR_FLOOR", "ERROR_MEASURES", "ILPData", "ILPGrid", "instances", "lattice_levels", "remove_example",
           "task_fake", "task_modes", "theory_error"]

ERROR_MEASURES: dict[str, str] = {"accuracy": "1 - test accuracy of the learned theory, floored at 0.01"}

#: The error's floor: theories within one error in a hundred are equally good, and the engine's
#: regrets (an Option's error over the best one's) stay finite when a theory is perfect.
ERROR_FLOOR = 0.01


def theory_error(theory: Any, test: RelationalDatabase) -> float:
    """The error measure: 1 - the theory's accuracy on the public test database, at least
    `ERROR_FLOOR`."""
    return max(1.0 - accuracy(theory, test), ERROR_FLOOR)


@dataclass(frozen=True, eq=False)
class ILPData:
    """The input of an ILP Option.

    Attributes:
        database: The training examples (positive and negative) and their facts, keyed by the
            example (private in a real call; privacy unit: one example and all its facts).
        modes: The mode declarations (public): the target, body modes, maximum clause length and
            the bound k.
        fake: The fake example's bottom clause(s) (public, built from the modes and the public
            domains only); the DP learner's round i uses `fake[i % len(fake)]`.
        name: A label for reports.
        min_score: The public minimum noisy score a round's clause needs to join the theory.
        min_positives: The public minimum positive count of the relevance-aware pruning.
    """

    database: RelationalDatabase
    modes: Modes
    fake: tuple[BottomClause, ...]
    name: str = ""
    min_score: float = 0.0
    min_positives: int = 0

    def __post_init__(self) -> None:
        fake = (self.fake,) if isinstance(self.fake, BottomClause) else tuple(self.fake)
        if not fake:
            raise ValueError("an ILP input needs at least one fake bottom clause")
        object.__setattr__(self, "fake", fake)

    @property
    def k(self) -> int:
        """The largest fake bottom clause's size (public)."""
        return max(bottom.size for bottom in self.fake)

    def level_sizes(self, max_length: int | None = None) -> tuple[int, ...]:
        """Legal clauses of the first fake bottom clause's lattice per length 0, 1, ...,
        `max_length` (default `modes.max_clause_length`; public: the modes and the fake example
        only)."""
        return lattice_levels(self.modes, self.fake[0], max_length)


@functools.lru_cache(maxsize=256)
def lattice_levels(modes: Modes, bottom: BottomClause, max_length: int | None = None) -> tuple[int, ...]:
    """How many legal clauses of the bottom clause's lattice have each length 0..`max_length`
    (default `modes.max_clause_length`): a function of public inputs only, cached, since every
    metafeature reads it."""
    limit = modes.max_clause_length if max_length is None else int(max_length)
    sizes = [0] * (limit + 1)
    for candidate in legal_clauses(bottom, modes, max_length=limit):
        sizes[candidate.length] += 1
    return tuple(sizes)


@dataclass(frozen=True)
class ILPGrid:
    """The configurations each corpus task is run on.

    Attributes:
        sizes: Numbers of training trains (each size is one cache piece).
        epsilons: Total budgets of a ChoiceMaker call.
        repetitions: Independent training sets (and noise draws) per configuration.
        test_size: Public test trains each learned theory is scored on.
        first_rep: Index of the first repetition (another value draws independent inputs).
    """

    sizes: tuple[int, ...] = (100, 300, 1_000, 3_000, 10_000)
    epsilons: tuple[float, ...] = (0.1, 0.3, 1.0, 3.0)
    repetitions: int = 2
    test_size: int = 2_000
    first_rep: int = 0

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]


def task_modes(task: ILPTask) -> Modes:
    """The task's modes: the trains' default body modes with its maximum clause length and k."""
    return train_modes(max_clause_length=task.max_clause_length, max_bottom=task.k)


@functools.lru_cache(maxsize=64)
def task_fake(task: ILPTask) -> BottomClause:
    """The task's fake example: the target's literals and public distractors up to k, chosen
    with the task's public seed (`fake.fake_for_target`)."""
    from jostle.learners.ilp.fake import fake_for_target

    return fake_for_target(task.target, task_modes(task), trains.schema(), task.k, task.fake_seed)


def instances(task: ILPTask, size: int, grid: ILPGrid) -> Iterator[Instance]:
    """The public inputs of one task at one training size: every repetition and epsilon, each
    scored on the repetition's public test trains."""
    tag = task.content_hash()
    modes, fake = task_modes(task), task_fake(task)
    target = trains.parse_target(task.target)
    for rep in range(grid.first_rep, grid.first_rep + grid.repetitions):
        train = trains.generate_trains(int(size), stable_seed(tag, size, rep, "train"), target)
        test = trains.generate_trains(grid.test_size, stable_seed(tag, rep, "test"), target)
        data = ILPData(train, modes, (fake,), task.name)
        for epsilon in grid.epsilons:
            columns = {"task": task.name, "group": task.group, "train_size": int(size), "k": fake.size,
                       "epsilon": float(epsilon), "rep": rep}
            yield Instance(columns, data, float(epsilon), (tag, size, rep, epsilon), test)


def remove_example(database: RelationalDatabase, position: int) -> RelationalDatabase:
    """The neighbour of `database` without its example at `position` and every fact keyed by it
    (the `entity(example id)` unit). Entity counts are kept: ids stay valid, and the removed
    example's other entities (its cars) simply have no facts left."""
    examples = database.examples
    removed = int(examples.ids[position])
    keep = np.arange(len(examples)) != position
    relations = {}
    for name, relation in database.relations.items():
        rows = relation.columns[relation.key] != removed
        relations[name] = Relation(relation.name, {c: v[rows] for c, v in relation.columns.items()},
                                   relation.types, relation.key)
    return RelationalDatabase(Examples(examples.entity, examples.ids[keep], examples.labels[keep]),
                              database.counts, relations, database.predicates)
