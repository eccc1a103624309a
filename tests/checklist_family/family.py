"""The median family: what the ChoiceMaker engine reads (`FAMILY`)."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from jostle.choicemaker.family import Family, Instance, MetafeatureContext, run_epsilon
from jostle.privacy.measures import AnyBudget
from jostle.privacy.subledger import option_guard
from tests.checklist_family.corpus import median_corpus
from tests.checklist_family.metafeatures import MEDIAN_METAFEATURES
from tests.checklist_family.options import MEDIAN_OPTIONS
from tests.checklist_family.task import MedianData, MedianGrid, MedianTask, true_median


class MedianFamily(Family):
    """Medians of integers in a public domain, from noisy histograms."""

    name = "checklist_median"
    task = "median"
    language_module = ""  # outside jostle/: no language built-ins
    error_measure = "absolute"
    config_columns = ("task", "group", "epsilon")
    modes = ("measured",)
    payoff_rule = "credit"  # errors scale about as 1 / epsilon
    default_metafeatures = ("log_size", "log_domain", "median_epsilon")
    units = ("row",)
    measures = ("pure", "zcdp")

    def error_measures(self) -> Mapping[str, str]:
        return {"absolute": "absolute error of the median, over the domain size",
                "squared": "squared error of the median, over the squared domain size"}

    def options(self) -> Mapping[str, Any]:
        return MEDIAN_OPTIONS

    def metafeatures(self) -> Mapping[str, Any]:
        return MEDIAN_METAFEATURES

    def default_corpus(self, options: Sequence[Any]) -> Sequence[Any]:
        return median_corpus()

    def default_grid(self) -> MedianGrid:
        return MedianGrid()

    def instances(self, task: MedianTask, piece: Any, grid: MedianGrid) -> Iterable[Instance]:
        for rep in range(grid.first_rep, grid.first_rep + grid.repetitions):
            data = task.draw(rep)
            for epsilon in grid.epsilons:
                columns = {"task": task.name, "group": task.group, "epsilon": float(epsilon), "rep": rep}
                yield Instance(columns, data, float(epsilon), (task.content_hash(), rep, epsilon),
                               true_median(data.values))

    def context(self, data: Any, option_budget: AnyBudget, total_budget: AnyBudget) -> MetafeatureContext:
        return MetafeatureContext(option_budget, total_budget, facts={"domain_size": data.domain_size})

    def run_option(self, option: Any, data: Any, budget: AnyBudget, noise: Any,
                   released: Mapping[str, float]) -> Any:
        epsilon = run_epsilon(budget)
        return option.run(data, epsilon, noise, option_guard(option.name, epsilon))

    def error(self, instance: Instance, result: Any) -> float:
        relative = abs(float(result) - float(instance.evaluation)) / instance.data.domain_size
        return relative if self.error_measure == "absolute" else relative ** 2

    def neighbouring_inputs(self, seed: int) -> tuple[Any, Any]:
        values = np.random.default_rng(seed).integers(0, 32, 50)
        return MedianData(values, 32), MedianData(values[:-1], 32)  # one value removed

    def describe(self, result: Any) -> str:
        return f"median estimate {float(result):.4g}"


FAMILY = MedianFamily()
