"""Differentially private Bayesian Rule Lists (DP-BRL) for Jostle, with private antecedent mining.

Modules, one job each:
  bitsets      rows as bitsets: items, antecedents, capture counts
  mining       antecedents: FP-growth baseline, private DP-FIM (Zeng et al. 2012), schema itemsets
  scoring      Letham et al.'s prior and the integer-unit likelihood with an exact sensitivity
  search       the Metropolis-Hastings chain, diagnostics, the exact exponential-mechanism sampler
  accounting   the budget split and the ledger charged before every draw
  rule_list    a fitted rule list: prediction and printout
  learner      the private pipeline and the non-private baseline on integer codes
  estimators   scikit-learn estimators: DPBayesianRuleListClassifier, BayesianRuleListClassifier
"""

from jostle.learnerkit.exports import lazy_exports

_EXPORTS = {
    "BRLSettings": "learner", "fit_private": "learner", "fit_nonprivate": "learner",
    "RuleList": "rule_list", "BudgetExceededError": "accounting", "default_budget": "accounting",
    "DPBayesianRuleListClassifier": "estimators", "BayesianRuleListClassifier": "estimators",
}


__getattr__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = sorted(_EXPORTS)
