"""The clustering family as the ChoiceMaker engine sees it: SuLQ k-means and a zCDP DPLloyd
(issue 26).

Input: a `data.ClusteringData` (rows coded into [0, 1]^d against a PUBLIC box, k, public initial
centres). Options (`options.CLUSTERING_OPTIONS`): SuLQKMeans and DPLloyd at 5 iterations, and
DPLloyd at 2 and 10. Error (`task.clustering_error`): the held-out within-cluster sum of squares
divided by that of the mixture's true centres ("wcss_ratio"), or by the total sum of squares
("wcss_share"), on PUBLIC held-out rows. Task "clustering" (no other family serves it). One
segment. Payoff rule "paired": the errors do not scale as 1/epsilon, so the free "public" mode
(public metafeatures only, the whole budget to the Option) is validated beside the "measured" one.

Units and measures. Privacy unit: one row added or removed ("row"); data under another unit is
refused before any charge. The learners are Gaussian (exact discrete Gaussian sums,
`jostle.privacy.sulq`): they run only under a zCDP budget (`measures = ("zcdp",)`), and an Option
given rho r charges r (`planned_cost`). `run_option` gives the Option the one guard
`option_guard(name, r)`, which refuses, before any draw, a batch that would take it past r.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from jostle.choicemaker.budgets import pure_cost
from jostle.choicemaker.family import Family, Instance, MetafeatureContext
from jostle.learners.clustering.corpus import clustering_corpus, mixture
from jostle.learners.clustering.data import ClusteringData, box_from, code_rows
from jostle.learners.clustering.metafeatures import CLUSTERING_METAFEATURES, DEFAULT_METAFEATURES
from jostle.learners.clustering.options import CLUSTERING_OPTIONS
from jostle.learners.clustering.task import ERROR_MEASURES, ClusteringGrid, clustering_error, instances
from jostle.privacy.measures import AnyBudget, RhoZCDPBudget
from jostle.privacy.subledger import option_guard

__all__ = ["FAMILY", "ClusteringFamily"]

NEIGHBOUR_ROWS = 300  # the size of the neighbouring inputs (public, generated)


class ClusteringFamily(Family):
    """Private k-means on a numeric table clipped into a public box (see the module docstring)."""

    name = "clustering"
    task = "clustering"
    error_measure = "wcss_ratio"
    error_name = ERROR_MEASURES["wcss_ratio"]
    config_columns = ("task", "group", "rows", "rho")
    meta_input_products = (("n_rows", "epsilon"),)
    segment_column = None
    modes = ("measured", "public")
    payoff_rule = "paired"
    seconds_per_piece = 6.0
    language_module = "jostle.learners.clustering.language"
    units = ("row",)
    measures = ("zcdp",)

    default_metafeatures = DEFAULT_METAFEATURES

    def error_measures(self) -> Mapping[str, str]:
        return dict(ERROR_MEASURES)

    def options(self) -> Mapping[str, Any]:
        return CLUSTERING_OPTIONS

    def metafeatures(self) -> Mapping[str, Any]:
        return CLUSTERING_METAFEATURES

    def default_corpus(self, options: Sequence[Any]) -> Sequence[Any]:
        return clustering_corpus()

    def default_grid(self) -> ClusteringGrid:
        return ClusteringGrid()

    def pieces(self, task: Any, grid: Any, options: Sequence[Any]) -> list[tuple[str, Any]]:
        return [(f"{size} rows", int(size)) for size in grid.sizes]

    def piece_cost(self, task: Any, piece: Any) -> float:
        return float(piece) * task.d * task.k

    def instances(self, task: Any, piece: Any, grid: Any) -> Iterable[Instance]:
        return instances(task, piece, grid)

    def context(self, data: Any, option_budget: AnyBudget, total_budget: AnyBudget) -> MetafeatureContext:
        return MetafeatureContext(option_budget, total_budget, facts=data.public_facts())

    def planned_cost(self, option: Any, budget: AnyBudget) -> AnyBudget:
        return option.planned_cost(budget)

    def metafeature_cost(self, metafeature: Any, budget: AnyBudget) -> AnyBudget:
        # the noisy row count is a Gaussian release charged its whole rho part (`metafeatures`)
        return budget if isinstance(budget, RhoZCDPBudget) else pure_cost(budget)

    def run_option(self, option: Any, data: Any, budget: AnyBudget, noise: Any,
                   released: Mapping[str, float]) -> Any:
        # The caller charged the rho `budget` in full (`planned_cost`); the guard refuses, before
        # any draw, a batch that would spend more.
        if not isinstance(budget, RhoZCDPBudget):
            raise ValueError(f"the clustering Options run under a zCDP budget (rho), not {budget}")
        return option.learn(data, budget, noise, option_guard(option.name, budget))

    def error(self, instance: Instance, result: Any) -> float:
        return clustering_error(result, instance.evaluation, self.error_measure)

    def neighbouring_inputs(self, seed: int) -> tuple[Any, Any]:
        import numpy as np

        drawn = mixture(NEIGHBOUR_ROWS, 2, 3, 2.0, seed)
        box = box_from(["x0", "x1"], [(0.0, 10.0), (0.0, 10.0)])
        data = ClusteringData(code_rows(drawn.rows, box), box, 3, "neighbours")
        position = int(np.random.default_rng(seed).integers(0, NEIGHBOUR_ROWS))
        return data, data.without_row(position)  # one row removed

    def describe(self, result: Any) -> str:
        return str(result)


FAMILY = ClusteringFamily()
