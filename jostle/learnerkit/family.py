"""The classification family base: what every classifier family is to the ChoiceMaker engine.

Input: a `ClassificationData` (integer codes with public domain sizes and class count; privacy
unit one row). Task "classification": every classifier family serves it and reads the same
public inputs, so one ChoiceMaker may choose among the Options of several. Error: a hook, one
of `ERROR_MEASURES` (1 - accuracy, or 1 - AUC) on the test part of a seeded split
(`grids.instances`). One segment. Payoff rule "paired": classifier errors do not scale as
1/epsilon, so the free "public" mode (whole budget to the learner) is validated beside the
"measured" one, and measuring is kept only if it is clearly better.

Regret measure "difference" (issue 27): the meta-model scores an Option by its error minus the
best Option's on a configuration, not by their ratio. Both errors lie in [0, 1] and what a user
loses is their difference, in accuracy or AUC points; a ratio made tables that every Option
almost solves weigh most (errors 0.005 and 0.015: regret 3, against 1.4 for 0.25 and 0.35, where
the choice costs ten points). On the 14-Option tree corpus (145 groups, leave-one-group-out,
the shipped ChoiceMaker's metafeatures and share) the held-out mean error moved by -0.0008
[-0.0016, 0.0000] (63 groups better, 63 worse); on the tree benchmark's four UCI tables, which
training never sees, the mean gap to the best Option in hindsight went from 0.0138 to 0.0110
(`python benchmarks/trees.py --n-jobs 2`). On the rule-list corpus (40 groups) it moved by -0.0001
[-0.0059, 0.0058]; on Titanic and Mushroom the cells below Belardo's Table 6.1 went from 3 of 8
to 2 (`python benchmarks/brl.py --choicemaker-only`; docs/brl.md).

Units and measures. The Options are pure-epsilon mechanisms run at the pure epsilon within the
budget they are given (a rho r in a zCDP program: the largest epsilon with epsilon^2 / 2 <= r).
Their privacy arguments are for neighbours one row apart, so a family learns from row-unit
data, and from entity-unit data only once it holds one row per entity: the language refuses,
before any charge, a table whose stability is above 1 or unbounded (`calls.check_learnable`);
it does not scale its noise to the stability. Replace-one data is refused.

`run_option` gives the Option the one guard of `jostle.privacy.subledger` (`option_guard`),
which refuses, before any draw, a step that would take it past the pure epsilon its Option was
charged (raising `OverBudgetError`, alias `LearnerOverspent`).
"""

from __future__ import annotations

from abc import abstractmethod

from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from jostle.choicemaker.family import Family, Instance, MetafeatureContext, run_epsilon
from jostle.learnerkit.grids import SplitGrid, instances
from jostle.learnerkit.options import ChargeFunction
from jostle.learnerkit.tables import ClassificationData
from jostle.privacy.measures import AnyBudget
from jostle.privacy.subledger import LearnerOverspent, option_guard

__all__ = ["ERROR_MEASURES", "ChargeFunction", "ClassificationFamily", "LearnerOverspent", "auc",
           "classification_error", "option_guard"]

ERROR_MEASURES: dict[str, str] = {
    "accuracy": "1 - test accuracy",
    "auc": "1 - test AUC (1 - accuracy when one class or more than two)",
}


def auc(labels: np.ndarray, scores: np.ndarray) -> float:
    """The area under the ROC curve of `scores` for the binary `labels` (ties count a half;
    NaN when one class is missing)."""
    labels = np.asarray(labels).astype(bool)
    positives, negatives = labels.sum(), (~labels).sum()
    if positives == 0 or negatives == 0:
        return float("nan")
    from scipy.stats import rankdata

    ranks = rankdata(scores)
    return float((ranks[labels].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def classification_error(measure: str, test: ClassificationData, result: Any) -> float:
    """The error of a fitted classifier `result` on the test table, by `measure`:

    "accuracy": 1 - the share of rows `result.predict` labels right;
    "auc": 1 - AUC of `result.predict_proba`'s second column on two classes, and 1 - accuracy
    of its most probable class when the test part holds one class only or for more than two.
    """
    if measure == "accuracy":
        return 1.0 - float(np.mean(result.predict(test.X) == test.y))
    if measure != "auc":
        raise KeyError(f"no classification error measure {measure!r}; known: {', '.join(ERROR_MEASURES)}")
    proba = result.predict_proba(test.X)
    if test.n_classes == 2:
        value = auc(test.y, proba[:, 1])
        if value == value:  # not NaN
            return 1.0 - value
    return 1.0 - float(np.mean(proba.argmax(axis=1) == test.y))


class ClassificationFamily(Family):
    """A family of classifiers learned from a table of categorical columns (see the module
    docstring).

    A subclass sets `name`, `error_measure` and its defaults; names its `parts`, four
    "module:attribute" texts relative to its package (its Options table and metafeatures table,
    name -> object; its default corpus function; its `SplitGrid` class), which are imported when
    first asked for, so discovering the family imports no learner; and writes `fit_option`,
    `piece_cost` and `describe`. Its language module is its package's `language`.
    """

    task = "classification"
    error_measure = "accuracy"
    config_columns = ("task", "group", "rows", "epsilon")
    meta_input_products = (("size", "epsilon"),)
    segment_column = None
    modes = ("measured", "public")
    payoff_rule = "paired"
    regret_measure = "difference"  # errors in [0, 1]: see the module docstring
    units = ("row", "entity")  # entity data only at stability 1 (refused above, see the module docstring)
    measures = ("pure", "zcdp")
    parts: tuple[str, str, str, str] = ("", "", "", "")

    def __init__(self) -> None:
        self.error_name = ERROR_MEASURES[self.error_measure]

    def error_measures(self) -> Mapping[str, str]:
        return dict(ERROR_MEASURES)

    @property
    def package(self) -> str:
        """The family's package (`jostle.learners.<name>`)."""
        return type(self).__module__.rpartition(".")[0]

    @property
    def language_module(self) -> str:  # type: ignore[override]
        return f"{self.package}.language"

    def part(self, index: int) -> Any:
        """The object `parts[index]` names (imported on first use)."""
        import importlib

        module, _, attribute = self.parts[index].partition(":")
        return getattr(importlib.import_module(f"{self.package}.{module}"), attribute)

    def options(self) -> Mapping[str, Any]:
        return self.part(0)

    def metafeatures(self) -> Mapping[str, Any]:
        return self.part(1)

    def default_corpus(self, options: Sequence[Any]) -> Sequence[Any]:
        return self.part(2)()

    def default_grid(self) -> SplitGrid:
        return self.part(3)()

    def instances(self, task: Any, piece: Any, grid: Any) -> Iterable[Instance]:
        return instances(task, grid)

    def context(self, data: Any, option_budget: AnyBudget, total_budget: AnyBudget) -> MetafeatureContext:
        return MetafeatureContext(option_budget, total_budget)

    def run_option(self, option: Any, data: Any, budget: AnyBudget, noise: Any,
                   released: Mapping[str, float]) -> Any:
        # The caller charged the pure epsilon within `budget` in full (`planned_cost`); the
        # guard refuses, before any draw, an Option whose steps would spend more (each step
        # reports the float it calibrates to).
        epsilon = run_epsilon(budget)
        size_released = "size" in released and self.metafeatures()["size"].cost
        return self.fit_option(option, data, epsilon, noise, option_guard(option.name, epsilon),
                               released if size_released else None)

    @abstractmethod
    def fit_option(self, option: Any, data: ClassificationData, epsilon: float, noise: Any, guard: ChargeFunction,
                   released: Mapping[str, float] | None) -> Any:
        """Fit `option` on `data` at `epsilon` (charged already), `guard` charged before every
        draw; `released` holds the metafeatures released in the same call when a noisy size is
        among them (a released value: reusing it costs nothing), else None."""
        raise NotImplementedError

    def error(self, instance: Instance, result: Any) -> float:
        return classification_error(self.error_measure, instance.evaluation, result)

    def neighbouring_inputs(self, seed: int) -> tuple[Any, Any]:
        rng = np.random.default_rng(seed)
        X = rng.integers(0, 3, size=(60, 3))
        y = (X[:, 0] + rng.integers(0, 2, size=60) > 1).astype(np.int64)
        data = ClassificationData(X, y, (3, 3, 3), 2, ("a", "b", "c"), (0, 1), name="neighbours")
        return data, data.rows(np.arange(59))  # one row removed

