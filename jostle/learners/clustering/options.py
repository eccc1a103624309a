"""Options of the clustering family: SuLQ k-means and DPLloyd, and DPLloyd by iterations.

    SuLQKMeans   SuLQ k-means, 5 iterations, every coordinate counted (touched = k (d + 1))
    DPLloyd      zCDP DPLloyd, 5 iterations (touched = d + 1 per iteration)
    DPLloyd2     zCDP DPLloyd, 2 iterations (less noise per iteration, fewer moves)
    DPLloyd10    zCDP DPLloyd, 10 iterations
    DPLloydReseed  zCDP DPLloyd, 5 iterations, near-empty clusters reseeded next to the largest
                 noisy cluster after each iteration (`kmeans.reseed`: post-processing)

The number of iterations and the reseeding are the choice points. The number of iterations,
fixed in advance (public), trades noise per iteration (the budget is split equally across
them) against how far Lloyd's moves get from the public initial centres.

**Privacy (every Option; unit: one row added or removed).** Given a rho r (`planned_cost(r)` is
r itself: the Options are Gaussian and run only under a zCDP budget; the family declares
`measures = ("zcdp",)`, so a pure or approximate budget is refused before any charge), an
Option computes its plan (`kmeans.kmeans_plan(method, k, d, iterations, rho=r)`: the smallest
variance whose batches add up to at most r), and `kmeans.fit` charges each iteration's batch to
the guard `run_option` passes (`option_guard`, capped at r) BEFORE its noise is drawn. The plan's
total is at most r (checked exactly before the first draw), so the Option is r-zCDP and never
spends more; the arguments per batch are in `kmeans`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from jostle.learnerkit.options import package_digest
from jostle.learners.clustering.data import ClusteringData
from jostle.learners.clustering.kmeans import DPLLOYD, METHODS, SULQ, KMeansModel, fit, kmeans_plan
from jostle.privacy.measures import AnyBudget, RhoZCDPBudget
from jostle.privacy.subledger import OverBudgetError

__all__ = ["CLUSTERING_OPTIONS", "DEFAULT_ITERATIONS", "KMeansOption"]

DEFAULT_ITERATIONS = 5

# Modules whose source the Options' fingerprints do not hash (the engine fingerprints the family,
# its corpus and metafeatures separately; the language and estimators are not the algorithm).
_NOT_THE_ALGORITHM = ("__init__.py", "language.py", "estimators.py", "family.py", "corpus.py", "metafeatures.py",
                      "task.py")


@dataclass(frozen=True)
class KMeansOption:
    """A k-means configuration the ChoiceMaker may choose.

    Args:
        name: The Option's name (unique across families).
        method: `kmeans.SULQ` or `kmeans.DPLLOYD`.
        iterations: The number of iterations (public, fixed in advance).
        description: One line for reports.
    """

    name: str
    method: str
    iterations: int
    description: str = ""
    reseeding: bool = False

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"a clustering Option's method is one of {', '.join(METHODS)}, got {self.method!r}")

    def planned_cost(self, budget: AnyBudget) -> AnyBudget:
        """What a fit given `budget` charges: the rho itself (its batches add up to at most it;
        `kmeans_plan`). A pure budget has no Gaussian cost here: the family refuses it first."""
        if not isinstance(budget, RhoZCDPBudget):
            raise ValueError(f"Option {self.name} is Gaussian: it runs under a zCDP budget (rho), not {budget}")
        return budget

    def plan(self, data: ClusteringData, rho: Any) -> Any:
        """The fit's public plan on `data` (its k and d) at `rho`."""
        return kmeans_plan(self.method, data.k, data.d, self.iterations, rho=rho)

    def learn(self, data: ClusteringData, rho: RhoZCDPBudget, noise: Any,
              charge: Callable[[Any, str], Any]) -> KMeansModel:
        """Fit at `rho` (the caller charged it; `charge` guards each batch before its draw)."""
        plan = self.plan(data, rho)
        if plan.rho > rho.rho:  # cannot happen (kmeans_plan); refused before any draw all the same
            raise OverBudgetError(f"Option {self.name} would spend rho {plan.rho}, more than {rho.rho}")
        return fit(data, plan, noise, charge, self.name, self.reseeding)

    @property
    def fingerprint(self) -> str:
        return (f"clustering|{self.name}|{self.method}|{self.iterations}|{self.reseeding}|"
                f"{package_digest('jostle.learners.clustering', _NOT_THE_ALGORITHM)}")


def _options() -> list[KMeansOption]:
    return [
        KMeansOption("SuLQKMeans", SULQ, DEFAULT_ITERATIONS, "SuLQ k-means, 5 iterations, every coordinate a query"),
        KMeansOption("DPLloyd", DPLLOYD, DEFAULT_ITERATIONS, "zCDP DPLloyd, 5 iterations, d + 1 sums touched per row"),
        KMeansOption("DPLloyd2", DPLLOYD, 2, "zCDP DPLloyd, 2 iterations"),
        KMeansOption("DPLloyd10", DPLLOYD, 10, "zCDP DPLloyd, 10 iterations"),
        KMeansOption("DPLloydReseed", DPLLOYD, DEFAULT_ITERATIONS, "zCDP DPLloyd, 5 iterations, near-empty clusters "
                     "reseeded next to the largest (post-processing)", True),
    ]


CLUSTERING_OPTIONS: dict[str, KMeansOption] = {option.name: option for option in _options()}
