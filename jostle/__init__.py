"""Jostle: a small language for learning from sensitive data under differential privacy.

Programs are parsed (jostle.language.parser), checked (jostle.language.checker) and evaluated (jostle.language.evaluator)
by an interpreter that tracks the sensitivity of every private value and charges a budget
accountant (jostle.privacy.budget) at every release (jostle.language.mechanisms). Embed it with `Session`.
"""

from jostle.privacy.budget import Budget
from jostle.diagnostics.errors import (
    BudgetExceeded,
    CheckError,
    DataError,
    JostleError,
    JostleRuntimeError,
    JostleSyntaxError,
    PrivacyError,
    UsageError,
)
from jostle.data.schema import Categorical, Numeric, Schema
from jostle.session import Ledger, Session

__version__ = "0.1.0"

__all__ = [
    "Session", "Ledger", "Budget", "Schema", "Numeric", "Categorical",
    "JostleError", "JostleSyntaxError", "CheckError", "PrivacyError", "BudgetExceeded",
    "JostleRuntimeError", "DataError", "UsageError",
]
