"""The median task: its private input, its public training tasks and the training grid."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from jostle.choicemaker.family import stable_seed


class MedianData:
    """Integer values in the public domain [0, domain_size) (private) and that domain (public)."""

    __slots__ = ("values", "domain_size")

    def __init__(self, values: Any, domain_size: int) -> None:
        self.domain_size = int(domain_size)
        self.values = np.clip(np.asarray(values, dtype=np.int64), 0, self.domain_size - 1)

    def __reduce__(self) -> tuple:
        return MedianData, (self.values, self.domain_size)

    def __repr__(self) -> str:  # only what is public
        return f"MedianData(domain_size={self.domain_size})"


def true_median(values: np.ndarray) -> float:
    """The lower median of the values (what the Options estimate)."""
    return float(np.sort(values)[(values.size - 1) // 2]) if values.size else 0.0


@dataclass(frozen=True)
class MedianTask:
    """A public generated task: `n` values, rounded from a normal (`centre`, `spread`, as
    fractions of the domain), in [0, domain_size)."""

    name: str
    group: str
    n: int
    domain_size: int
    centre: float
    spread: float

    def content_hash(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]

    def draw(self, rep: int) -> MedianData:
        rng = np.random.default_rng(stable_seed(self.content_hash(), rep, "values"))
        values = np.rint(rng.normal(self.centre, self.spread, self.n) * self.domain_size)
        return MedianData(values, self.domain_size)


@dataclass(frozen=True)
class MedianGrid:
    """The configurations every task runs on: budgets and seeded repetitions."""

    epsilons: tuple[float, ...] = (0.05, 1.0)
    repetitions: int = 2
    first_rep: int = 0

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]
