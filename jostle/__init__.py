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

# The errors a user meets are named by the package they import them from: a traceback ends with
# "jostle.PrivacyError: prog.jst:2:7: ..." rather than the module that defines them.
for _error in (JostleError, JostleSyntaxError, CheckError, PrivacyError, BudgetExceeded, JostleRuntimeError,
               DataError, UsageError):
    _error.__module__ = "jostle"
del _error

__all__ = [
    "Session", "Ledger", "Budget", "Schema", "Numeric", "Categorical",
    "JostleError", "JostleSyntaxError", "CheckError", "PrivacyError", "BudgetExceeded",
    "JostleRuntimeError", "DataError", "UsageError",
]
