"""Options of the rule-list family: named configurations of the private DP-BRL pipeline.

Each Option fixes the choice points a ChoiceMaker chooses among (the budget split, private
DP-FIM antecedents or the schema's items, the prior mean list length lambda) and runs
`jostle.learners.brl.learner.fit_private` on a `ClassificationData`. Every Option uses the
EXACT sampler: run with budget e it is e-DP (privacy unit: one row added or removed), and its ledger
(`accounting.FitLedger`) refuses, before any draw, a step that would take it past e.

The row bound that fixes the score's sensitivity is the table's declared one when there is one;
otherwise the noisy size released among the metafeatures (scaled up by 10%: a released value,
so reusing it costs nothing; the clipped likelihood keeps the sensitivity whatever the bound,
`scoring`); otherwise the public default `DEFAULT_ROW_BOUND`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Mapping

import numpy as np

from jostle.learnerkit.options import ChargeFunction, PureEpsilonOption, package_digest
from jostle.learnerkit.tables import ClassificationData
from jostle.learners.brl.learner import BRLSettings, FitResult, fit_private

DEFAULT_ROW_BOUND = 1_000_000


def _brl_source_digest() -> str:
    """Hash of the source of the family's algorithms (an edit invalidates cached experience)."""
    return package_digest("jostle.learners.brl", ("language.py", "estimators.py", "family.py"))


def row_bound_for(data: ClassificationData, released: Mapping[str, float] | None) -> int:
    """The public row bound of one run (see the module docstring)."""
    if data.row_bound is not None:
        return int(data.row_bound)
    if released and "size" in released:
        return max(int(float(released["size"]) * 1.1) + 10, 10)
    return DEFAULT_ROW_BOUND


@dataclass(frozen=True)
class CodedRuleList:
    """A fitted rule list over a task's integer codes (what the family's `error` scores)."""

    fit: FitResult
    data_name: str

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        return self.fit.rule_list.predict_proba(X)

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.predict_proba(X).argmax(axis=1)


@dataclass(frozen=True)
class BRLOption(PureEpsilonOption):
    """A DP-BRL configuration the ChoiceMaker may choose.

    Args:
        name: The Option's name.
        overrides: `BRLSettings` fields it sets, as (name, value) pairs.
        description: One line for reports.
    """

    name: str
    overrides: tuple[tuple[str, Any], ...] = ()
    description: str = ""

    def settings(self, row_bound: int) -> BRLSettings:
        return replace(BRLSettings(**dict(self.overrides)), row_bound=int(row_bound))

    def fit(self, data: ClassificationData, epsilon: float | Fraction, noise: Any,
            charge: ChargeFunction | None = None, released: Mapping[str, float] | None = None) -> CodedRuleList:
        """Train under epsilon-DP (the caller has charged epsilon; `charge` guards each step)."""
        settings = self.settings(row_bound_for(data, released))
        result = fit_private(data.X, data.y, data.domain_sizes, data.n_classes, Fraction(epsilon), settings, noise,
                             charge)
        return CodedRuleList(result, data.name)

    @property
    def fingerprint(self) -> str:
        return f"brl|{self.name}|{self.overrides!r}|{_brl_source_digest()}"


# The choice points a ChoiceMaker chooses among, as named configurations (each one's privacy:
# an Option run with budget e is e-DP, whatever its split, support, cardinality or prior, since
# every one of them is a PUBLIC parameter of the pipeline of `learner.fit_private`):
#   * the budget split between mining, the list and the estimates (BRLMined: the default
#     split of `accounting`; BRLMinedEven: Belardo's thirds; BRLMinedList: 3/5 on the list);
#   * the antecedents: mined (DP-FIM) or the schema's items (BRLSchema, BRLSchemaList);
#   * what the list draw maximises and how it draws (issue 27): the posterior (sensitivity
#     log(row_bound + 1)) or the rows classified correctly (BRLSchemaMajority: sensitivity 1,
#     `scoring.MajorityCounts`), in one draw over the enumerated lists or one draw per rule
#     (BRLSchemaGreedy, up to 5 rules over every schema item: `search.greedy_exponential_list`;
#     BRLSchemaGreedyFive, exactly 5: no "stop", which the prior otherwise draws early even
#     when rules still gain rows), or one rule drawn together with its class and the default's
#     (BRLSchemaOneRule: the classes are released by the draw, so a rule's direction survives
#     budgets at which noisy capture counts cannot tell it: `search.labelled_rule_draw`);
#   * mining's minimum support (BRLMinedRare 0.05, BRLMinedCommon 0.25; default 0.1) and
#     largest cardinality (BRLMinedItems 1, BRLMinedTriples 3; default 2);
#   * the prior: lambda and the longest list (BRLMinedShort lambda 1, lists <= 2; BRLMinedLong
#     lambda 5, lists <= 4) and eta (BRLMinedPairs eta 2: longer antecedents a priori).
BRL_OPTIONS: dict[str, BRLOption] = {o.name: o for o in [
    BRLOption("BRLMined", (), "DP-FIM antecedents, the default split (accounting.DEFAULT_SPLIT)"),
    BRLOption("BRLMinedEven", (("split", (1.0, 1.0, 1.0)),), "DP-FIM antecedents, eps/3 each (Belardo's split)"),
    BRLOption("BRLMinedList", (("split", (1.0, 3.0, 1.0)),), "DP-FIM antecedents, 3/5 of eps for the list"),
    BRLOption("BRLMinedItems", (("max_cardinality", 1),), "DP-FIM single items only (all mining budget on them)"),
    BRLOption("BRLMinedTriples", (("max_cardinality", 3),), "DP-FIM itemsets of up to 3 items"),
    BRLOption("BRLMinedRare", (("min_support", 0.05),), "DP-FIM with minimum support 0.05"),
    BRLOption("BRLMinedCommon", (("min_support", 0.25),), "DP-FIM with minimum support 0.25"),
    BRLOption("BRLSchema", (("antecedents", "public"),), "the schema's single items (no mining), the default split"),
    BRLOption("BRLSchemaList", (("antecedents", "public"), ("split", (0.0, 3.0, 1.0))),
              "the schema's single items, 3/4 of eps for the list"),
    BRLOption("BRLSchemaMajority", (("antecedents", "public"), ("split", (0.0, 3.0, 1.0)), ("score", "majority")),
              "the schema's single items, the list drawn for rows classified correctly (sensitivity 1), 3/4 of eps"),
    BRLOption("BRLSchemaGreedy", (("antecedents", "public"), ("split", (0.0, 3.0, 1.0)), ("score", "majority"),
                                  ("sampler", "greedy"), ("max_length", 5)),
              "the schema's single items, up to 5 rules drawn one at a time for rows classified correctly"),
    BRLOption("BRLSchemaGreedyFive", (("antecedents", "public"), ("split", (0.0, 3.0, 1.0)), ("score", "majority"),
                                      ("sampler", "greedy"), ("max_length", 5), ("greedy_stop", False)),
              "the schema's single items, 5 rules drawn one at a time (no stop) for rows classified correctly"),
    BRLOption("BRLSchemaOneRule", (("antecedents", "public"), ("split", (0.0, 19.0, 1.0)), ("score", "majority"),
                                   ("sampler", "one_rule"), ("max_length", 1)),
              "one schema item and the classes of the rule and the default drawn together, 19/20 of eps"),
    BRLOption("BRLMinedShort", (("list_length", 1.0), ("max_length", 2)), "DP-FIM antecedents, lambda 1, lists <= 2"),
    BRLOption("BRLMinedLong", (("list_length", 5.0), ("max_length", 4)), "DP-FIM antecedents, lambda 5, lists <= 4"),
    BRLOption("BRLMinedPairs", (("antecedent_length", 2.0),), "DP-FIM antecedents, eta 2 (pairs a priori)"),
]}
