"""The histogram task: training grid, workloads and the public inputs drawn from shapes.

A histogram Option consumes a count vector (1D) or grid (2D) and a workload of range queries,
and returns an estimate of the counts. On the public corpus, `instances` makes DPBench's
inputs: for each domain size, scale, repetition and epsilon of a `TrainingGrid`, `scale`
records drawn from the shape rebinned to the domain (seeded by the shape's hash, so the same on
every machine), scored by DPBench's error: the mean per-query L1 (or L2) error of the workload
divided by the scale (`workloads.scaled_error`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Iterator

import numpy as np

from jostle.choicemaker.family import Instance, stable_seed as _seed  # the seeds of earlier releases
from jostle.learners.histograms.corpus import Shape, rebin
from jostle.learners.histograms.data import sample_from_shape
from jostle.learners.histograms.workloads import RangeWorkload, prefix_1d, random_rectangles_2d

ERROR_MEASURES = {"scaled_l1": "l1", "scaled_l2": "l2"}


@dataclass(frozen=True)
class TrainingGrid:
    """The configurations each shape is run on.

    Attributes:
        scales: Numbers of records.
        domains_1d: Domain sizes of 1D inputs.
        domains_2d: Side lengths of square 2D inputs.
        epsilons: Total budgets of the ChoiceMaker call (the Option gets 1 - mf_share of it).
        repetitions: Independent inputs and noise draws per configuration.
        queries_2d: Number of random rectangles of the 2D workload (1D uses Prefix).
        first_rep: Index of the first repetition; inputs and noise are seeded by it, so a
            grid with another first_rep draws independent inputs (e.g. for evaluation).
    """

    scales: tuple[int, ...] = (1_000, 10_000, 100_000, 1_000_000)
    domains_1d: tuple[int, ...] = (256, 1024)
    domains_2d: tuple[int, ...] = (32, 64)
    epsilons: tuple[float, ...] = (0.01, 0.1, 1.0)
    repetitions: int = 2
    queries_2d: int = 2000
    first_rep: int = 0

    @classmethod
    def quick(cls) -> "TrainingGrid":
        """The default grid for a program run: a few minutes on 2 cores for the default corpus."""
        return cls()

    def domains(self, dims: int) -> tuple[tuple[int, ...], ...]:
        return tuple((d,) for d in self.domains_1d) if dims == 1 else \
            tuple((d, d) for d in self.domains_2d)

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]


def default_workload(domain_shape: tuple[int, ...], queries_2d: int = 2000) -> RangeWorkload:
    """DPBench's workloads: Prefix in 1D, `queries_2d` random rectangles (seed 0) in 2D."""
    if len(domain_shape) == 1:
        return prefix_1d(domain_shape[0])
    return random_rectangles_2d(tuple(domain_shape), queries_2d, seed=0)


def domain_label(domain: tuple[int, ...]) -> str:
    return "x".join(str(d) for d in domain)


def sample_input(base: np.ndarray, tag: str, domain: tuple[int, ...], scale: int,
                 rep: int) -> np.ndarray:
    """The input of repetition `rep`: `scale` records drawn from the rebinned shape `base`
    (seeded by the shape's hash `tag`, the domain, the scale and `rep`)."""
    return sample_from_shape(base, int(scale), seed=_seed(tag, domain, scale, rep, "data"))


def instances(shape: Shape, domain: tuple[int, ...], grid: TrainingGrid) -> Iterator[Instance]:
    """The public inputs of one shape on one domain: every scale, repetition and epsilon."""
    base = rebin(shape.values, domain)
    workload = default_workload(domain, grid.queries_2d)
    tag = shape.content_hash()
    for scale in grid.scales:
        for rep in range(grid.first_rep, grid.first_rep + grid.repetitions):
            x = sample_input(base, tag, domain, scale, rep)
            for epsilon in grid.epsilons:
                columns = {"shape": shape.name, "group": shape.group, "dims": len(domain),
                           "domain": domain_label(domain), "domain_size": int(np.prod(domain)),
                           "scale": int(scale), "epsilon": float(epsilon), "rep": rep}
                yield Instance(columns, x, float(epsilon), (tag, domain, scale, epsilon, rep),
                               (workload, float(scale)))
