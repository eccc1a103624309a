"""Jostle: a small language for learning from sensitive data under differential privacy.

Programs are parsed (jostle.parser), checked (jostle.checker) and evaluated (jostle.evaluator)
by an interpreter that tracks the sensitivity of every private value and charges a budget
accountant (jostle.budget) at every release (jostle.mechanisms). Embed it with `Session`.
"""

from jostle.budget import Budget
from jostle.errors import (
    BudgetExceeded,
    CheckError,
    DataError,
    JostleError,
    JostleRuntimeError,
    JostleSyntaxError,
    PrivacyError,
    UsageError,
)
from jostle.schema import Categorical, Numeric, Schema
from jostle.session import Ledger, Session

__version__ = "0.1.0"

__all__ = [
    "Session", "Ledger", "Budget", "Schema", "Numeric", "Categorical",
    "JostleError", "JostleSyntaxError", "CheckError", "PrivacyError", "BudgetExceeded",
    "JostleRuntimeError", "DataError", "UsageError",
]
