"""The SuLQ classifier family ("sulq_classifiers") as the ChoiceMaker engine sees it (zCDP only).

Input: a `ClassificationData`, as for every classifier family: task "classification", so one
ChoiceMaker may choose among SuLQ and tree Options on one corpus. Options: `options.SULQ_OPTIONS`
("SuLQID3", "SuLQPerceptron"). Error: 1 - accuracy on the test part of a seeded split (or
1 - AUC, `ClassificationFamily`). One segment. Payoff rule "paired", as for the other
classifiers.

Measures: zCDP only (`measures = ("zcdp",)`): the learners add Gaussian noise, which has no
pure epsilon, so a pure or approximate budget is refused before any charge (the engine's
`check_measure`; the Options' `planned_cost` refuses it too). An Option given rho r plans and
charges r itself (`SulqOption.planned_cost`), and `run_option` gives its learner the one guard
`option_guard(name, RhoZCDPBudget(r))`, charged before each batch is drawn.

Units: those of the kit (row data, and entity data held at one row per entity); the SuLQ
argument is for neighbours one row apart (a row moves each count by at most 1).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from jostle.choicemaker.family import Instance
from jostle.learnerkit.family import ChargeFunction, ClassificationFamily, LearnerOverspent
from jostle.learners.sulq_classifiers.options import refuse_unless_rho
from jostle.learners.sulq_classifiers.task import DEFAULT_METAFEATURES, instances
from jostle.privacy.measures import AnyBudget
from jostle.privacy.subledger import option_guard

__all__ = ["FAMILY", "LearnerOverspent", "SulqFamily"]


class SulqFamily(ClassificationFamily):
    """SuLQ ID3 and the SuLQ perceptron, learned from a table of categorical columns."""

    name = "sulq_classifiers"
    error_measure = "accuracy"
    measures = ("zcdp",)
    default_metafeatures = DEFAULT_METAFEATURES
    seconds_per_piece = 1.0  # rough: both learners are vectorised (a few ms per fit on 10,000 rows)
    parts = ("options:SULQ_OPTIONS", "metafeatures:SULQ_METAFEATURES", "corpus:sulq_corpus", "task:SulqGrid")

    def piece_cost(self, task: Any, piece: Any) -> float:
        return float(task.n_rows * sum(task.domain_sizes))

    def instances(self, task: Any, piece: Any, grid: Any) -> Iterable[Instance]:
        return instances(task, grid)

    def run_option(self, option: Any, data: Any, budget: AnyBudget, noise: Any,
                   released: Mapping[str, float]) -> Any:
        # The caller charged the rho in full (`planned_cost`); the guard refuses, before any
        # draw, a batch that would take the learner past it.
        rho = refuse_unless_rho(budget, f"Option {option.name}")
        return option.fit(data, rho.rho, noise, option_guard(option.name, rho))

    def fit_option(self, option: Any, data: Any, epsilon: float, noise: Any, guard: ChargeFunction,
                   released: Mapping[str, float] | None) -> Any:
        raise TypeError("the sulq_classifiers family runs in rho, never at a pure epsilon: use run_option with a "
                        "rho budget")

    def describe(self, result: Any) -> str:
        return result.to_text() if hasattr(result, "to_text") else repr(result)


FAMILY = SulqFamily()
