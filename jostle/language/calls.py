"""Argument checks shared by the built-ins of every family: keywords and the budget of a call.

A learner family's language module (`jostle.learners.<family>.language`) may use these, the
value types (`jostle.language.values`) and `refuse` (`jostle.language.sensitivity`), and nothing
else of the language (the layer contract in pyproject.toml).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from jostle.diagnostics.errors import JostleRuntimeError
from jostle.diagnostics.source import Span
from jostle.language.sensitivity import refuse
from jostle.language.values import is_private, type_name
from jostle.privacy.budget import Budget


def budget_of(interp: Any, kwargs: dict[str, Any], span: Span, who: str) -> Budget:
    """The budget a call spends: its `epsilon=` keyword, else what a `{{ }}` would get here."""
    if "epsilon" in kwargs:
        value = kwargs["epsilon"]
        if is_private(value):
            raise refuse("a budget must be public", value, span)
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise JostleRuntimeError(f"epsilon must be a number, got a {type_name(value)}", span)
        budget = Budget.of(float(value))
        if budget.epsilon <= 0:
            raise JostleRuntimeError("epsilon must be greater than 0", span)
        return budget
    context = interp.accountant.innermost
    if context is None:
        raise JostleRuntimeError(
            f"{who} needs a budget", span,
            "pass epsilon=E, or call it inside `with budget E:` (it then takes what a {{ }} would)")
    return context.per_release


def check_keywords(kwargs: dict[str, Any], span: Span, who: str, allowed: tuple[str, ...] = ("epsilon",)) -> None:
    for key in kwargs:
        if key not in allowed:
            raise JostleRuntimeError(f"{who} has no keyword argument '{key}'", span, f"its keywords are {list(allowed)}")


@dataclass
class ChoiceCall:
    """What a family's language module makes of a ChoiceMaker call's arguments.

    Attributes:
        data: The engine's input (None for a public call).
        node: The data node the charges go to.
        private: Whether the input is private (a public call is answered exactly, for free).
        public_result: The answer to a public call.
        measure_builtin: measure(engine metafeature, exact amount, noise, context) -> value, for
            built-in metafeatures (the amount is charged already).
        run_builtin: run(language option, exact amount, released metafeatures) -> result, for
            built-in options (the amount is charged already).
        wrap: wrap(result, choice, epsilon) turns the chosen Option's result into a language value.
        segment_hint: How to fix a ChoiceMaker not trained for this input's segment.
    """

    data: Any
    node: Any
    private: bool
    public_result: Any = None
    measure_builtin: Callable[..., float] | None = None
    run_builtin: Callable[..., Any] | None = None
    wrap: Callable[..., Any] = field(default=lambda result, choice, epsilon: result)
    segment_hint: str = ""
