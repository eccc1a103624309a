"""The rule-list family as the ChoiceMaker engine sees it.

Input: a `RuleData` (integer codes with public domain sizes and class count; privacy unit one
row). Options: the DP-BRL configurations of `options.BRL_OPTIONS` (every one with the exact
sampler, so run with budget e it is e-DP). Error: 1 - AUC on the test part of a seeded split
(1 - accuracy when the test part holds one class only, or for more than two classes). One
segment. Payoff rule "paired": errors do not scale as 1/epsilon, so the free "public" mode is
validated beside the "measured" one, and measuring is kept only if it is clearly better.

When the noisy size was released among the metafeatures, the Option uses it as its row bound
(`options.row_bound_for`; a released value, reused for free).

Units and measures. The Options are pure-epsilon mechanisms run at the pure epsilon within the
budget they are given (a rho r in a zCDP program: the largest epsilon with epsilon^2 / 2 <= r).
Their score's sensitivity is argued for neighbours one row apart, so the family learns from
row-unit data, and from entity-unit data only once it holds one row per entity: the language
refuses, before any charge, a table whose stability is above 1 or unbounded; it does not scale
to the stability. Replace-one data is refused.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from jostle.choicemaker.family import Family, Instance, MetafeatureContext, run_epsilon
from jostle.privacy.measures import AnyBudget
from jostle.learners.brl.options import BRL_OPTIONS
from jostle.learners.brl.task import DEFAULT_METAFEATURES, RuleGrid, instances


class LearnerOverspent(RuntimeError):
    """An Option asked for more than it was charged (raised before its noise is drawn)."""


def auc(labels: np.ndarray, scores: np.ndarray) -> float:
    """The area under the ROC curve of `scores` for the binary `labels` (ties count a half)."""
    labels = np.asarray(labels).astype(bool)
    positives, negatives = labels.sum(), (~labels).sum()
    if positives == 0 or negatives == 0:
        return float("nan")
    from scipy.stats import rankdata

    ranks = rankdata(scores)
    return float((ranks[labels].sum() - positives * (positives + 1) / 2) / (positives * negatives))


class RuleListFamily(Family):
    """Bayesian rule lists learned from a table of categorical columns."""

    name = "brl"
    task = "rule_list"
    error_name = "1 - test AUC"
    config_columns = ("task", "group", "rows", "epsilon")
    segment_column = None
    modes = ("measured", "public")
    payoff_rule = "paired"
    default_metafeatures = DEFAULT_METAFEATURES
    seconds_per_piece = 40.0  # rough: 6 Options x 5 epsilons x 2 splits of up to 4,000 rows, on one core
    language_module = "jostle.learners.brl.language"
    units = ("row", "entity")  # entity data only at stability 1 (refused above, see the module docstring)
    measures = ("pure", "zcdp")

    def options(self) -> Mapping[str, Any]:
        return BRL_OPTIONS

    def metafeatures(self) -> Mapping[str, Any]:
        from jostle.learners.brl.metafeatures import BRL_METAFEATURES

        return BRL_METAFEATURES

    def default_corpus(self, options: Sequence[Any]) -> Sequence[Any]:
        from jostle.learners.brl.corpus import rule_list_corpus

        return rule_list_corpus()

    def default_grid(self) -> RuleGrid:
        return RuleGrid()

    def piece_cost(self, task: Any, piece: Any) -> float:
        return float(task.n_rows * sum(task.domain_sizes))

    def instances(self, task: Any, piece: Any, grid: Any) -> Iterable[Instance]:
        return instances(task, grid)

    def context(self, data: Any, option_budget: AnyBudget, total_budget: AnyBudget) -> MetafeatureContext:
        return MetafeatureContext(option_budget, total_budget)

    def run_option(self, option: Any, data: Any, budget: AnyBudget, noise: Any,
                   released: Mapping[str, float]) -> Any:
        # The caller charged the pure epsilon within `budget` in full (`planned_cost`); this
        # guard refuses, before any draw, an Option whose steps would spend more (each step
        # reports the float it calibrates to).
        epsilon = run_epsilon(budget)
        cap, spent = Fraction(epsilon), [Fraction(0)]

        def guard(amount: float, description: str) -> None:
            if spent[0] + Fraction(amount) > cap:
                raise LearnerOverspent(f"{option.name} exceeded its budget at {description}")
            spent[0] += Fraction(amount)

        size = dict(released) if "size" in released and self.metafeatures()["size"].cost else None
        return option.fit(data, Fraction(epsilon), noise, guard, size)

    def error(self, instance: Instance, result: Any) -> float:
        test = instance.evaluation
        proba = result.predict_proba(test.X)
        if test.n_classes == 2:
            value = auc(test.y, proba[:, 1])
            if value == value:  # not NaN
                return 1.0 - value
        return 1.0 - float(np.mean(proba.argmax(axis=1) == test.y))

    def neighbouring_inputs(self, seed: int) -> tuple[Any, Any]:
        from jostle.learners.brl.corpus import RuleData

        rng = np.random.default_rng(seed)
        X = rng.integers(0, 3, size=(60, 3))
        y = (X[:, 0] + rng.integers(0, 2, size=60) > 1).astype(np.int64)
        data = RuleData(X, y, (3, 3, 3), 2, name="neighbours")
        return data, data.rows(np.arange(59))  # one row removed

    def describe(self, result: Any) -> str:
        fit = getattr(result, "fit", None)
        if fit is None:
            return repr(result)
        return fit.rule_list.to_text([f"x{j}" for j in range(64)], [list(range(64))] * 64,
                                     list(range(fit.rule_list.probabilities.shape[1])))


FAMILY = RuleListFamily()
