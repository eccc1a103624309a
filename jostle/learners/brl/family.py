"""The rule-list family as the ChoiceMaker engine sees it (a `ClassificationFamily`).

Input: a `ClassificationData`, as for every classifier family: task "classification", so a
ChoiceMaker may choose among rule-list and tree Options on one corpus. Options: the DP-BRL
configurations of `options.BRL_OPTIONS` (every one with the exact sampler, so run with budget e
it is e-DP). Error: 1 - AUC on the test part of a seeded split (1 - accuracy when the test part
holds one class only, or for more than two classes), or 1 - accuracy (`ClassificationFamily`).
One segment. Payoff rule "paired": errors do not scale as 1/epsilon, so the free "public" mode
is validated beside the "measured" one, and measuring is kept only if it is clearly better.

When the noisy size was released among the metafeatures, the Option uses it as its row bound
(`options.row_bound_for`; a released value, reused for free).

Units and measures: those of `jostle.learnerkit.family` (row data, and entity data held at one
row per entity; pure and zCDP budgets, run at the pure epsilon within them). The score's
sensitivity is argued for neighbours one row apart.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping

from jostle.learnerkit.family import ChargeFunction, ClassificationFamily, LearnerOverspent, auc
from jostle.learners.brl.task import DEFAULT_METAFEATURES

__all__ = ["FAMILY", "LearnerOverspent", "RuleListFamily", "auc"]


class RuleListFamily(ClassificationFamily):
    """Bayesian rule lists learned from a table of categorical columns."""

    name = "brl"
    error_measure = "auc"
    default_metafeatures = DEFAULT_METAFEATURES
    # The rule lists' signal is per item, so besides the size x epsilon product the meta-model
    # reads log10(n_items x epsilon): public (the schema and the budget), and one of the budget
    # columns `budget_regret` reads, which lets a choice by the budget alone still tell a schema
    # of many items (where enumeration caps a list's length) from one of few (issue 27).
    meta_input_products = (("size", "epsilon"), ("n_items", "epsilon"))
    seconds_per_piece = 40.0  # rough: 6 Options x 5 epsilons x 2 splits of up to 4,000 rows, on one core
    parts = ("options:BRL_OPTIONS", "metafeatures:BRL_METAFEATURES", "corpus:rule_list_corpus", "task:RuleGrid")

    def piece_cost(self, task: Any, piece: Any) -> float:
        return float(task.n_rows * sum(task.domain_sizes))

    def fit_option(self, option: Any, data: Any, epsilon: float, noise: Any, guard: ChargeFunction,
                   released: Mapping[str, float] | None) -> Any:
        return option.fit(data, Fraction(epsilon), noise, guard, dict(released) if released is not None else None)

    def describe(self, result: Any) -> str:
        fit = getattr(result, "fit", None)
        if fit is None:
            return repr(result)
        return fit.rule_list.to_text([f"x{j}" for j in range(64)], [list(range(64))] * 64,
                                     list(range(fit.rule_list.probabilities.shape[1])))


FAMILY = RuleListFamily()
