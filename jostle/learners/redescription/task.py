"""The redescription task: what an Option reads (`RedescriptionData`), the training grid, the
public instances and the error measures.

A redescription Option consumes a `RedescriptionData`: two views of the same entities coded
against public domains (`views.TwoViews`; private in a real call, bound under the
`entity(key)` unit: a neighbour removes one entity from BOTH views) and public facts about the
call: the number of runs the analyst plans at this budget (the paper's protocol: 10 runs at
epsilon 1 and 0.1, 100 at 0.01) and, optionally, declared constraints (`extract.Constraints`). It returns a
`queries.RedescriptionSet`.

Error measures (`ERROR_MEASURES`; lower is better, computed on PUBLIC training views only: the
true statistics of the kept redescriptions on the very entities they were mined from, which in
the corpus are generated, never private):
    jaccard       1 - the median true Jaccard index of the kept (not pruned) redescriptions;
                  1 when nothing is kept (the default: it rewards accurate and present results,
                  and a run that releases nothing usable scores as badly as a useless one)
    significance  the share of the kept redescriptions whose true p-value is not below 0.01;
                  1 when nothing is kept

On the public corpus (`corpus.redescription_corpus`), `instances` makes the training inputs:
for each task, entity count (the cache piece), repetition and per-run epsilon of a
`RedescriptionGrid`, the planted two views of that size (seeded by the task's content hash, the
size and the repetition, so the same on every machine), with the paper's planned runs for that
epsilon (`planned_runs`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any, Iterator

import numpy as np

from jostle.choicemaker.family import Instance, stable_seed
from jostle.learners.redescription.corpus import RedescriptionTask
from jostle.learners.redescription.views import TwoViews, from_codes

__all__ = ["ERROR_MEASURES", "SIGNIFICANCE_LEVEL", "RedescriptionData", "RedescriptionGrid", "instances",
           "planned_runs", "redescription_error", "remove_entity"]

ERROR_MEASURES: dict[str, str] = {
    "jaccard": "1 - median true Jaccard of the kept redescriptions (1 when none is kept)",
    "significance": "share of the kept redescriptions with true p-value >= 0.01 (1 when none is kept)",
}

#: The p-value below which a redescription counts as significant (the paper's and python-clired's).
SIGNIFICANCE_LEVEL = 0.01


def redescription_error(result: Any, views: TwoViews, measure: str = "jaccard") -> float:
    """The error of a mined set on PUBLIC views (see the module docstring): 1 - the median true
    Jaccard of its kept redescriptions, or the share of them not significant; 1 when none is kept.

    Args:
        result: A `queries.RedescriptionSet`.
        views: The public views its redescriptions are evaluated on (the training views).
        measure: "jaccard" or "significance" (`ERROR_MEASURES`).
    """
    if measure not in ERROR_MEASURES:
        raise KeyError(f"the redescription family has no error measure {measure!r}")
    from jostle.learners.redescription.queries import true_statistics

    kept = list(result.kept())
    if not kept:
        return 1.0
    statistics = [true_statistics(red, views) for red in kept]
    if measure == "jaccard":
        return float(1.0 - np.median([float(s["jaccard"]) for s in statistics]))
    return float(np.mean([not float(s["pvalue"]) < SIGNIFICANCE_LEVEL for s in statistics]))


@dataclass(frozen=True, eq=False)
class RedescriptionData:
    """The input of a redescription Option.

    Attributes:
        views: The two views (private in a real call; privacy unit: one entity, removed from
            both views). Their schemas (attribute names, kinds, public domains and bins) are public.
        runs: The number of runs the analyst plans at this per-run budget (public; at least 1).
        name: A label for reports.
        constraints: Declared `extract.Constraints` (public), or None for the family's rule
            (`options.miner_settings`: the defaults, with minimum support 10 on small data and
            100 on large).
    """

    views: TwoViews
    runs: int = 1
    name: str = ""
    constraints: Any = None

    def __post_init__(self) -> None:
        if isinstance(self.runs, bool) or int(self.runs) != self.runs or self.runs < 1:
            raise ValueError(f"the planned runs are a positive integer, got {self.runs!r}")

    @property
    def schemas(self) -> tuple[Any, Any]:
        """The two views' public schemas."""
        return self.views.schemas

    def public_facts(self) -> dict[str, Any]:
        """What a metafeature may read without a charge: the planned runs and, per view, the
        number of attributes, the share of numeric ones and the number of split candidates (all
        functions of the public schemas)."""
        facts: dict[str, Any] = {"runs": int(self.runs)}
        for index, schema in enumerate(self.schemas):
            kinds = [attribute.kind for attribute in schema.attributes]
            facts[f"attributes_{index}"] = len(kinds)
            facts[f"numeric_share_{index}"] = kinds.count("numeric") / max(len(kinds), 1)
            facts[f"splits_{index}"] = len(schema.splits)
        return facts


def planned_runs(epsilon: float) -> int:
    """The paper's protocol: 100 runs at epsilon 0.01, 10 at 0.1 and at 1 (the budgets between
    are given the nearer protocol's count)."""
    return 100 if float(epsilon) < 0.03 else 10


@dataclass(frozen=True)
class RedescriptionGrid:
    """The configurations each corpus task is run on.

    Attributes:
        sizes: Entity counts (each size is one cache piece).
        epsilons: Per-run budgets of a ChoiceMaker call.
        repetitions: Independent data sets (and noise draws) per configuration.
        first_rep: Index of the first repetition (another value draws independent inputs).
    """

    sizes: tuple[int, ...] = (1_000, 7_000, 50_000)
    epsilons: tuple[float, ...] = (0.01, 0.1, 1.0)
    repetitions: int = 1
    first_rep: int = 0

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]


def task_views(task: RedescriptionTask, size: int, rep: int) -> TwoViews:
    """The planted two views of `task` at `size` entities in repetition `rep` (public, seeded)."""
    from jostle.learners.redescription.planted import planted_two_views

    seed = stable_seed(task.content_hash(), task.data_seed, size, rep, "views")
    return planted_two_views(int(size), seed, **task.generator_arguments()).views


def instances(task: RedescriptionTask, size: int, grid: RedescriptionGrid) -> Iterator[Instance]:
    """The public inputs of one task at one entity count: every repetition and per-run epsilon,
    each scored on its own (public) views."""
    tag = task.content_hash()
    for rep in range(grid.first_rep, grid.first_rep + grid.repetitions):
        views = task_views(task, size, rep)
        for epsilon in grid.epsilons:
            data = RedescriptionData(views, planned_runs(epsilon), task.name)
            columns = {"task": task.name, "group": task.group, "entities": int(size), "epsilon": float(epsilon),
                       "rep": rep}
            yield Instance(columns, data, float(epsilon), (tag, size, rep, epsilon), views)


def remove_entity(views: TwoViews, position: int) -> TwoViews:
    """The neighbour of `views` without the entity at row `position`, removed from BOTH views
    (the `entity(key)` unit)."""
    keep = np.arange(views.codes[0].shape[0]) != int(position)
    return from_codes(views.schemas, views.codes[0][keep], views.codes[1][keep])
