"""The budget shared by the estimators' fits, kept importable here (it moved below the
families, to `jostle.privacy.shared_budget`, where every family's estimators find it):
`PrivacyBudget`, `PrivacyBudgetWarning`, `FitCharge`, `default_budget`, `charge_default`,
`BudgetAccount`, and the one over-budget error under its estimators' name, `BudgetExceededError`.
"""

from __future__ import annotations

from jostle.privacy.shared_budget import (  # noqa: F401 (re-exported)
    BudgetAccount, BudgetExceededError, FitCharge, PrivacyBudget, PrivacyBudgetWarning, charge_default,
    default_budget,
)

__all__ = ["BudgetAccount", "BudgetExceededError", "FitCharge", "PrivacyBudget", "PrivacyBudgetWarning",
           "charge_default", "default_budget"]
