"""The Options of the median family: a noisy histogram, then its median.

Privacy (both Options): the histogram of the values over `bins` disjoint bins has L1
sensitivity 1 (one value added or removed changes one count by 1). Run with a budget whose pure
epsilon is e, an Option charges e to the guard it is given (the one sub-ledger of its run,
which refuses a step that would pass e before its noise is drawn), then releases the histogram
once with Laplace(1 / e) noise on every count (`jostle.privacy.safe_noise.release_vector`), so
it is e-DP, and reads the median from the noisy counts (post-processing). It never spends more
than e: its one step is e, and the guard refuses any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from jostle.choicemaker.budgets import pure_cost
from jostle.choicemaker.family import source_digest
from jostle.privacy import safe_noise
from jostle.privacy.measures import AnyBudget
from tests.checklist_family.task import MedianData


@dataclass(frozen=True)
class HistogramMedian:
    """The median of a noisy histogram over `bins` equal bins (0: one bin per domain value)."""

    name: str
    bins: int = 0
    description: str = ""

    def planned_cost(self, budget: AnyBudget) -> AnyBudget:
        """What a run with `budget` charges: the pure epsilon within it."""
        return pure_cost(budget)

    def run(self, data: MedianData, epsilon: float, noise: Any, charge: Callable[[Any, str], Any]) -> float:
        """An epsilon-DP median (see the module docstring); `charge` is the run's guard."""
        bins = data.domain_size if self.bins <= 0 else min(self.bins, data.domain_size)
        width = data.domain_size / bins
        cells = np.minimum((data.values / width).astype(np.int64), bins - 1)
        counts = np.bincount(cells, minlength=bins)  # L1 sensitivity 1
        charge(epsilon, f"histogram of {bins} bins")  # before the draw; raises if it would overspend
        noisy = np.clip(safe_noise.release_vector(noise, counts, 1.0, epsilon), 0.0, None)
        cumulative = np.cumsum(noisy)
        if cumulative[-1] <= 0:
            return (data.domain_size - 1) / 2
        cell = int(np.searchsorted(cumulative, cumulative[-1] / 2))
        return float(min((cell + 0.5) * width, data.domain_size - 1)) if self.bins > 0 else float(cell)

    @property
    def fingerprint(self) -> str:
        return f"{self.name}|{self.bins}|{source_digest(type(self))}"


MEDIAN_OPTIONS: dict[str, HistogramMedian] = {
    "fine_median": HistogramMedian("fine_median", 0, "median of a noisy histogram of every value"),
    "coarse_median": HistogramMedian("coarse_median", 8, "median of a noisy histogram of eight bins"),
}
