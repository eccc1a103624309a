"""Built-ins that release and that read the budget: the mechanisms (laplace, geometric,
gaussian, exponential, report_noisy_max, above_threshold, randomized_response; each charges the
accountant before its noise is drawn, jostle.language.mechanisms), `rho`, and `ledger`, `spent`
and `remaining`, with the account of the budget the REPL and `jostle ledger` print.

Registered in the language's core registry (jostle.language.builtin_registry.CORE) when
imported; jostle.language.builtins imports this module.
"""

from __future__ import annotations

from typing import Any

from jostle.diagnostics.errors import JostleRuntimeError
from jostle.language import mechanisms
from jostle.language.builtin_registry import builtin
from jostle.language.builtin_registry import list_argument as _sequence, number_argument as _number
from jostle.language.builtin_registry import refuse_private_arguments as _refuse_private
from jostle.language.sensitivity import refuse
from jostle.language.values import BoundMethod, Builtin, Closure, Record, format_value, is_private
from jostle.privacy.budget import RhoZCDPBudget


# ---------------------------------------------------------------- releases
@builtin("laplace", 2, privacy="release", doc="laplace(x, eps): x + Laplace(sensitivity / eps)")
def _laplace(interp, span, value, epsilon):
    return mechanisms.laplace(interp, value, epsilon, span)


@builtin("geometric", 2, privacy="release", doc="geometric(x, eps): integer x + two-sided geometric noise")
def _geometric(interp, span, value, epsilon):
    return mechanisms.geometric(interp, value, epsilon, span)


@builtin("gaussian", 2, 3, privacy="release",
         doc="gaussian(x, eps, delta) or gaussian(x, rho(R)): x + discrete Gaussian noise")
def _gaussian(interp, span, value, epsilon, delta=None):
    return mechanisms.gaussian(interp, value, epsilon, delta, span)


@builtin("rho", 1, doc="rho(R): a zCDP budget of rho R, for `budget rho(R)`, `with budget rho(R):` and gaussian(x, rho(R))")
def _rho(interp, span, amount):
    _refuse_private("rho", (amount,), span, "a budget must be public")
    number = _number(amount, "rho", span)
    hint = "a zCDP budget is a positive rho, e.g. rho(0.05)"
    try:
        value = RhoZCDPBudget.of(number)
    except JostleRuntimeError as error:
        error.span, error.hint = span, error.hint or hint
        raise
    if value.rho <= 0:
        raise JostleRuntimeError(f"rho must be greater than 0, got {format_value(amount)}", span, hint)
    return value


@builtin("exponential", 4, privacy="release",
         doc="exponential(candidates, utility, eps, sensitivity): a candidate chosen privately")
def _exponential(interp, span, candidates, utility, epsilon, sensitivity):
    if is_private(candidates):
        raise refuse("the candidates of exponential must be public", candidates, span)
    items = _sequence(candidates, "exponential", span)
    if not items:
        raise JostleRuntimeError("exponential needs at least one candidate", span)
    if not isinstance(utility, (Closure, Builtin, BoundMethod)):
        raise JostleRuntimeError("exponential's utility must be a function of a candidate", span)
    scores = [interp.call(utility, [item], span) for item in items]
    return mechanisms.exponential(interp, tuple(items), scores, epsilon, sensitivity, span)


@builtin("report_noisy_max", 2, privacy="release", doc="report_noisy_max(scores, eps): index of the noisy maximum")
def _report_noisy_max(interp, span, scores, epsilon):
    return mechanisms.report_noisy_max(interp, scores, epsilon, span)


@builtin("above_threshold", 3, privacy="release",
         doc="above_threshold(queries, threshold, eps): index of the first query above, or none")
def _above_threshold(interp, span, queries, threshold, epsilon):
    return mechanisms.above_threshold(interp, queries, threshold, epsilon, span)


@builtin("randomized_response", 3, privacy="release",
         doc='randomized_response(t, "col", eps): one noisy response per row (a whole replace_one table: public_rows)')
def _randomized_response(interp, span, table, column, epsilon):
    return mechanisms.randomized_response(interp, table, column, epsilon, span)


# ---------------------------------------------------------------- the budget
@builtin("ledger", 0, privacy="budget", doc="ledger(): every charge so far, as records")
def _ledger(interp, span):
    return tuple(Record.of(entry.as_dict()) for entry in interp.accountant.ledger)


def _leading_quantity(amount: Any) -> float:
    """The quantity a program reads of a budget: its epsilon under DP, its rho under zCDP."""
    return float(amount.quantities()[0][1])


@builtin("spent", 0, privacy="budget",
         doc="spent(): what this run has spent so far: epsilon, or rho in a zCDP program")
def _spent(interp, span):
    return _leading_quantity(interp.accountant.spent)


@builtin("remaining", 0, privacy="budget",
         doc="remaining(): the most the next release may spend (epsilon, or rho in a zCDP program; this "
             "run's budget and the data's lifetime left), or none")
def _remaining(interp, span):
    remaining = interp.accountant.remaining
    return _leading_quantity(remaining) if remaining is not None else None


def describe_budget(interp) -> str:
    """An account of the budget: what this run spent of its total, then each dataset's lifetime
    budget and balance (every run's spending), on lines of their own."""
    from jostle.privacy.ledger_text import dataset_line

    accountant = interp.accountant
    spent = accountant.accounting.describe(accountant.spent)
    if accountant.total is None:
        text = f"this run spent {spent}; no total budget is set"
    else:
        text = (f"this run spent {spent} of its budget {accountant.accounting.describe(accountant.cap)}; "
                f"the next release may spend at most {accountant.remaining}")
    if accountant.store is not None and accountant.store.persistent:
        for status in accountant.datasets_status():
            text += "\n" + dataset_line(status)
    return text
