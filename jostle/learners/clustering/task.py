"""The clustering task: the training grid, the public instances and the error measures.

A clustering Option consumes a `data.ClusteringData` (rows coded into [0, 1]^d against a public
box, k, public initial centres) and returns a `kmeans.KMeansModel`. On the public corpus
(`corpus.clustering_corpus`), `instances` makes the training inputs: for each task, row count
(the cache piece), repetition and rho of a `ClusteringGrid`, the mixture's training rows and
`ClusteringGrid.test_size` held-out rows of the same mixture (seeded by the task's content hash,
the size and the repetition, so the same on every machine). The budget of an instance is a rho
(`RhoZCDPBudget`): the family's learners are Gaussian.

Error measures (`ERROR_MEASURES`; lower is better; on the PUBLIC held-out rows, in [0, 1]^d):
    wcss_ratio   the within-cluster sum of squares of the released centres divided by that of the
                 mixture's true centres (about 1 at best; comparable across tasks)
    wcss_share   the within-cluster sum of squares divided by the total sum of squares around
                 the held-out mean (the share of variance left unexplained)
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any, Iterator

import numpy as np

from jostle.choicemaker.family import Instance, stable_seed
from jostle.learners.clustering.corpus import ClusteringTask, mixture
from jostle.learners.clustering.data import SCALE, ClusteringData, box_from, code_rows
from jostle.learners.clustering.kmeans import normalised_wcss
from jostle.privacy.measures import RhoZCDPBudget

__all__ = ["ERROR_MEASURES", "ClusteringGrid", "Evaluation", "clustering_error", "instances", "task_data"]

ERROR_MEASURES: dict[str, str] = {
    "wcss_ratio": "held-out within-cluster sum of squares / that of the true centres",
    "wcss_share": "held-out within-cluster sum of squares / total sum of squares (variance unexplained)",
}


@dataclass(frozen=True)
class Evaluation:
    """What an instance's result is scored against (public): held-out rows and true centres, in [0, 1]^d."""

    test_points: np.ndarray
    true_centres: np.ndarray


def clustering_error(result: Any, evaluation: Evaluation, measure: str = "wcss_ratio") -> float:
    """The error of a released model on an instance's PUBLIC held-out rows (module docstring)."""
    if measure not in ERROR_MEASURES:
        raise KeyError(f"the clustering family has no error measure {measure!r}")
    reference = evaluation.true_centres if measure == "wcss_ratio" else None
    return float(normalised_wcss(evaluation.test_points, result.centres_scaled, reference))


@dataclass(frozen=True)
class ClusteringGrid:
    """The configurations each corpus task is run on.

    Attributes:
        sizes: Row counts (each one cache piece).
        rhos: zCDP budgets of a ChoiceMaker call.
        repetitions: Independent data sets (and noise draws) per configuration.
        test_size: Held-out rows per instance.
        first_rep: Index of the first repetition.
    """

    sizes: tuple[int, ...] = (1_000, 10_000, 100_000)
    rhos: tuple[float, ...] = (0.01, 0.1, 1.0)
    repetitions: int = 2
    test_size: int = 2_000
    first_rep: int = 0

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]


def task_data(task: ClusteringTask, size: int, rep: int, test_size: int) -> tuple[ClusteringData, Evaluation]:
    """The training input and the held-out evaluation of `task` at `size` rows, repetition `rep`."""
    seed = stable_seed(task.content_hash(), size, rep, "rows")
    drawn = mixture(int(size) + int(test_size), task.d, task.k, task.separation, seed)
    box = box_from([f"x{i}" for i in range(task.d)], task.bounds())
    data = ClusteringData(code_rows(drawn.rows[:size], box), box, task.k, task.name, seed=seed % 2**31)
    evaluation = Evaluation(code_rows(drawn.rows[size:], box) / SCALE, np.clip(box.scale(drawn.centres), 0, 1))
    return data, evaluation


def instances(task: ClusteringTask, size: int, grid: ClusteringGrid) -> Iterator[Instance]:
    """The public inputs of one task at one row count: every repetition and rho."""
    tag = task.content_hash()
    for rep in range(grid.first_rep, grid.first_rep + grid.repetitions):
        data, evaluation = task_data(task, size, rep, grid.test_size)
        for rho in grid.rhos:
            columns = {"task": task.name, "group": task.group, "rows": int(size), "rho": float(rho), "d": task.d,
                       "k": task.k, "separation": task.separation, "rep": rep}
            yield Instance(columns, data, RhoZCDPBudget(Fraction(repr(float(rho)))), (tag, size, rep, rho), evaluation)
