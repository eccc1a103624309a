"""Differentially private decision trees for Jostle: one parameterised learner and its family.

Modules, one job each:
  encoding        public domains (categories, `NumericBins`) and integer encoding
  utilities       split utilities (entropy, gini, max) and their sensitivities
  releases        the noisy measurements (counts, exponential mechanism) and public random choices
  accounting      budget plans and the ledger charged before every measurement
  structure       a trained tree as flat arrays; vectorised prediction
  builder         the level-wise growing engine (private or exact)
  pruning         C4.5 pessimistic pruning (on exact or noisy counts)
  printing        readable printouts
  estimators      scikit-learn estimators: DPDecisionTreeClassifier, C45DecisionTreeClassifier
  shared_budget   PrivacyBudget: the budget the estimators' fits share (docs/estimators.md)
  configurations  the published learners (and three low-budget ones) as named configurations
"""

from jostle.learnerkit.exports import lazy_exports

# Names are imported on first use (PEP 562): the estimators need scikit-learn, which a program
# that never learns a tree should not pay for at start-up.
_EXPORTS = {
    "BudgetExceededError": "accounting", "PrivacyLedger": "accounting",
    "CONFIGURATIONS": "configurations", "binary_joint": "configurations", "fletcher_islam": "configurations",
    "friedman_schuster": "configurations", "jagannathan": "configurations", "majority": "configurations",
    "make_learner": "configurations", "mohammed": "configurations", "one_rule": "configurations",
    "patil_singh": "configurations",
    "NumericBins": "encoding", "encode_features": "encoding",
    "C45DecisionTreeClassifier": "estimators", "DPDecisionTreeClassifier": "estimators",
    "PrivacyBudget": "shared_budget", "PrivacyBudgetWarning": "shared_budget", "default_budget": "shared_budget",
}


__getattr__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = sorted(_EXPORTS)
