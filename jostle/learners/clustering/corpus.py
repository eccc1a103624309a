"""The clustering family's public training corpus: generated Gaussian mixtures, offline.

Each task (`ClusteringTask`) is a setting of the mixture generator (`mixture`), drawn with a
public seed; the row count is the grid's (each size of `task.ClusteringGrid.sizes` is one cache
piece). Settings spanned:

  * `d`: the number of columns, one of `DIMENSIONS`;
  * `k`: the number of clusters (the learners are told the true k), one of `CLUSTERS`;
  * `separation`: how far apart the clusters are in units of their spread, one of `SEPARATIONS`
    (the spread of a cluster is `BOX_WIDTH` * 0.3 / (separation * k^(1/d)), so clusters of
    separation 1 overlap and those of 4 are well apart);
  * `data_seed`: the seed of the centres, weights and rows.

The rows live in the public box [0, `BOX_WIDTH`]^d (some fall outside and are clipped, as a
real table's would be); the true centres are drawn in the middle 80% of it. Everything is
generated from seeds, the same on every machine; nothing here reads private data.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

__all__ = ["BOX_WIDTH", "CLUSTERS", "CORPUS_VERSION", "DIMENSIONS", "SEPARATIONS", "ClusteringTask", "Mixture",
           "clustering_corpus", "mixture"]

CORPUS_VERSION = "1"  # part of every task's content hash: bump when generation changes
BOX_WIDTH = 10.0
DIMENSIONS = (2, 3, 5, 8, 10)
CLUSTERS = (2, 3, 4, 5, 8)
SEPARATIONS = (1.0, 2.0, 4.0)


@dataclass(frozen=True)
class Mixture:
    """Rows drawn from a Gaussian mixture: the rows (n x d), their components and the true centres."""

    rows: np.ndarray
    labels: np.ndarray
    centres: np.ndarray


def mixture(n: int, d: int, k: int, separation: float, seed: int) -> Mixture:
    """`n` rows of a k-component Gaussian mixture in [0, BOX_WIDTH]^d (before clipping), public.

    Centres uniform in the middle 80% of the box; weights Dirichlet(4) (no empty component);
    isotropic spread BOX_WIDTH * 0.3 / (separation * k^(1/d)).
    """
    rng = np.random.default_rng([int(seed), 2026])
    centres = rng.uniform(0.1 * BOX_WIDTH, 0.9 * BOX_WIDTH, size=(k, d))
    weights = rng.dirichlet(np.full(k, 4.0))
    labels = rng.choice(k, size=int(n), p=weights)
    spread = BOX_WIDTH * 0.3 / (float(separation) * k ** (1.0 / d))
    rows = centres[labels] + rng.normal(0.0, spread, size=(int(n), d))
    return Mixture(rows, labels, centres)


@dataclass(frozen=True)
class ClusteringTask:
    """One public training task: a setting of the mixture generator.

    Attributes:
        name: "clustering:mixture:<index>".
        group: Its leave-one-dataset-out group (each task its own).
        d, k, separation: The generator's setting (`mixture`).
        data_seed: The public seed (combined with the size and the repetition, `task.instances`).
    """

    name: str
    group: str
    d: int
    k: int
    separation: float
    data_seed: int

    def bounds(self) -> list[tuple[float, float]]:
        """The public box: [0, BOX_WIDTH] per column."""
        return [(0.0, BOX_WIDTH)] * self.d

    def content_hash(self) -> str:
        """What the experience cache keys the task on (its definition and the corpus version)."""
        text = "|".join([CORPUS_VERSION, self.name, str(self.d), str(self.k), repr(self.separation),
                         str(self.data_seed)])
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def clustering_corpus(n_tasks: int = 12, seed: int = 0) -> list[ClusteringTask]:
    """The offline public corpus: `n_tasks` settings, each its own group.

    The separations cycle (so each appears as often), d and k are drawn with `seed`; the
    benchmark's held-out tasks use another seed.
    """
    rng = np.random.default_rng([int(seed), 26])
    tasks: list[ClusteringTask] = []
    for index in range(int(n_tasks)):
        separation = SEPARATIONS[index % len(SEPARATIONS)]
        d = int(rng.choice(DIMENSIONS))
        k = int(rng.choice(CLUSTERS))
        data_seed = int(rng.integers(0, 2**31 - 1))
        tag = f"{seed}:{index}" if seed else str(index)
        tasks.append(ClusteringTask(f"clustering:mixture:{tag}", f"mixture:{tag}", d, k, separation, data_seed))
    return tasks
