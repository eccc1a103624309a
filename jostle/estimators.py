"""The front door to Jostle's scikit-learn estimators: every estimator of every learner family.

    from jostle.estimators import DPDecisionTreeClassifier, DPBayesianRuleListClassifier, PrivacyBudget

    budget = PrivacyBudget(3.0)  # what all the fits below may spend together
    tree = DPDecisionTreeClassifier(1.0, domains=..., classes=..., budget=budget).fit(X, y)
    rules = DPBayesianRuleListClassifier(1.0, domains=..., classes=..., max_rows=..., budget=budget).fit(X, y)
    theory = DPILPClassifier(1.0, fake="has_car(T, C), short(C), closed(C)", budget=budget).fit(trains, "eastbound")
    found = DPRedescriptionMiner("MCMCTreePair", 1.0, left_domains=..., right_domains=..., key="id",
                                 budget=budget).fit(left, right)

    gaussian = PrivacyBudget(rho=0.5)  # SuLQ learners add Gaussian noise: a zCDP total (issue 26)
    sulq_tree = SuLQID3Classifier(rho=0.25, domains=..., classes=..., budget=gaussian).fit(X, y)
    sulq_line = SuLQPerceptronClassifier(rho=0.25, iterations=10, domains=..., classes=..., budget=gaussian).fit(X, y)

The estimators are found, not listed: every family the ChoiceMaker engine discovers
(`jostle.choicemaker.families.discover()`) that has an `estimators` module contributes the
public classes defined there on the kit's base (`jostle.learnerkit.estimators.
DeclaredDomainClassifier`). A new family's estimators appear here by existing. A relational
learner, which fits a database rather than a matrix (`DPILPClassifier.fit(database, target)`), and
the redescription miner, which fits two views (`DPRedescriptionMiner.fit(left, right)`), are not on
that base and are exported by name. `ESTIMATORS` maps
each name to its class and `PRIVATE_ESTIMATORS` names the differentially private ones (the
others are the non-private baselines, for public data).

Next to them: the declared domains (`NumericBins`), the budget shared by fits
(`PrivacyBudget`, `default_budget`, `BudgetExceededError`, `PrivacyBudgetWarning`), and
`private_accuracy(estimator, X, y, epsilon, budget)`, a noisy accuracy on private rows charged
to that budget before its noise is drawn.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from jostle.choicemaker.families import discover
from jostle.learnerkit.encoding import NumericBins  # noqa: F401 (re-exported)
from jostle.learnerkit.estimators import DeclaredDomainClassifier
# A noisy accuracy on private rows for any family's fitted estimator, charged to a PrivacyBudget (issue 28).
from jostle.learnerkit.evaluation import private_accuracy  # noqa: F401 (re-exported)
from jostle.privacy.shared_budget import PrivacyBudget, PrivacyBudgetWarning, default_budget  # noqa: F401
from jostle.privacy.subledger import BudgetExceededError  # noqa: F401 (re-exported, as these above)

# Relational learners fit a database, not a matrix (fit(database, target)), so they are not on the
# kit's base and are exported by name: DP inductive logic programming (issue 24).
from jostle.learners.ilp.estimators import DPILPClassifier  # noqa: F401 (re-exported)
# ... and a redescription miner fits two views of the same entities (fit(left, right)), issue 25.
from jostle.learners.redescription.estimators import DPRedescriptionMiner  # noqa: F401 (re-exported)
# ... and private k-means fits rows into clusters, no label (fit(X)), issue 26.
from jostle.learners.clustering.estimators import DPLloydKMeans, SuLQKMeans  # noqa: F401 (re-exported)

LEARNERS_PACKAGE = "jostle.learners"


def family_estimators() -> dict[str, type[DeclaredDomainClassifier]]:
    """Every public estimator class of every discovered family, by class name.

    Raises:
        ImportError: Two families define estimators of the same name (one front door cannot
            hold both).
    """
    found: dict[str, type[DeclaredDomainClassifier]] = {}
    for family in discover():
        module_name = f"{LEARNERS_PACKAGE}.{family}.estimators"
        if importlib.util.find_spec(module_name) is None:
            continue
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if (isinstance(value, type) and issubclass(value, DeclaredDomainClassifier) and not name.startswith("_")
                    and value.__module__ == module_name):
                if name in found:
                    raise ImportError(f"two families define an estimator named {name}: {found[name].__module__} "
                                      f"and {module_name}")
                found[name] = value
    return dict(sorted(found.items()))


ESTIMATORS: dict[str, type[DeclaredDomainClassifier]] = family_estimators()
PRIVATE_ESTIMATORS: tuple[str, ...] = tuple(name for name, cls in ESTIMATORS.items() if cls._private)

globals().update(ESTIMATORS)

__all__ = sorted([*ESTIMATORS, "DPILPClassifier", "DPRedescriptionMiner", "DPLloydKMeans", "SuLQKMeans",
                  "ESTIMATORS", "PRIVATE_ESTIMATORS", "NumericBins", "PrivacyBudget", "PrivacyBudgetWarning",
                  "BudgetExceededError", "default_budget", "family_estimators", "private_accuracy"])


def __getattr__(name: str) -> Any:
    raise AttributeError(f"module 'jostle.estimators' has no attribute {name!r}; its estimators are "
                         f"{', '.join(ESTIMATORS)}")
