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
  configurations  the published learners (and three low-budget ones) as named configurations
"""

from jostle.trees.accounting import BudgetExceededError, PrivacyLedger
from jostle.trees.configurations import (CONFIGURATIONS, binary_joint, fletcher_islam, friedman_schuster,
                                         jagannathan, majority, make_learner, mohammed, one_rule, patil_singh)
from jostle.trees.encoding import NumericBins, encode_features
from jostle.trees.estimators import C45DecisionTreeClassifier, DPDecisionTreeClassifier

__all__ = [
    "BudgetExceededError", "C45DecisionTreeClassifier", "CONFIGURATIONS", "DPDecisionTreeClassifier",
    "NumericBins", "PrivacyLedger", "encode_features", "fletcher_islam", "friedman_schuster",
    "jagannathan", "make_learner", "mohammed", "patil_singh", "one_rule", "binary_joint", "majority",
]
