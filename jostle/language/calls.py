"""Argument checks shared by the built-ins of every family: keywords, the budget of a call, and
the privacy unit and stability of the data a learner reads.

A learner family's language module (`jostle.learners.<family>.language`) may use these, the
value types (`jostle.language.values`) and `refuse` (`jostle.language.sensitivity`), and nothing
else of the language (the layer contract in pyproject.toml).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from jostle.diagnostics.errors import JostleRuntimeError, MeasureMismatch
from jostle.diagnostics.source import Span
from jostle.language.sensitivity import refuse
from jostle.language.values import is_private, type_name
from jostle.privacy.measures import AnyBudget, PureDPBudget, RhoZCDPBudget
from jostle.privacy.units import ROW, PrivacyUnit

BUDGET_KEYWORDS = ("epsilon", "rho")


def budget_of(interp: Any, kwargs: dict[str, Any], span: Span, who: str) -> AnyBudget:
    """The typed budget a call spends: its `epsilon=` keyword (a pure `Budget`) or `rho=` keyword
    (a `RhoZCDPBudget`), else what a `{{ }}` would get here (`BudgetContext.per_release`: a pure
    epsilon in a DP program, a rho in a zCDP one). Checked before anything is charged."""
    given = [key for key in BUDGET_KEYWORDS if key in kwargs]
    if len(given) > 1:
        raise JostleRuntimeError(f"{who} takes epsilon= or rho=, not both", span,
                                 "a call spends one budget: a pure epsilon, or a rho in a zCDP program")
    if given:
        key = given[0]
        value = kwargs[key]
        if is_private(value):
            raise refuse("a budget must be public", value, span)
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise JostleRuntimeError(f"{key} must be a number, got a {type_name(value)}", span)
        number = float(value) if isinstance(value, (float, np.floating)) else int(value)
        budget: AnyBudget = PureDPBudget(number) if key == "epsilon" else RhoZCDPBudget.of(number)
        if budget.is_zero():
            raise JostleRuntimeError(f"{key} must be greater than 0", span)
        if key == "rho" and not interp.accountant.accounting.is_zcdp:
            # Measures never mix in one program: a rho in a DP program is refused, not spent as
            # the pure epsilon within it (which would be sound but is not what was written).
            raise MeasureMismatch(
                f"{who} was given rho={value!r} in a program that accounts in (epsilon, delta)", span,
                "pass epsilon=E, or state the program's total in zCDP (`budget E, D using zcdp` or "
                "`budget rho(R)`); nothing was spent")
        return budget
    context = interp.accountant.innermost
    if context is None:
        raise JostleRuntimeError(
            f"{who} needs a budget", span,
            "pass epsilon=E, or call it inside `with budget E:` (it then takes what a {{ }} would)")
    return context.per_release


def unit_of(value: Any) -> PrivacyUnit:
    """The privacy unit of the data behind a value: a table's `unit` or its data node's
    (`DataNode.privacy_unit`, the unit of the root it was bound under), whichever is not the
    default row unit, else one row (a public fact set by the curator at bind time)."""
    node = getattr(value, "node", None)
    for unit in (getattr(value, "unit", None), getattr(node, "privacy_unit", None) if node is not None else None):
        if isinstance(unit, PrivacyUnit) and not unit.is_row:
            return unit
    return ROW


def check_unit(value: Any, units: tuple[str, ...], span: Span, who: str, family: str) -> PrivacyUnit:
    """The privacy unit of `value`'s data, refused (before any charge) unless its kind is one of
    `units` (what the family declares). The unit is a public fact set by the curator at bind time."""
    unit = unit_of(value)
    if unit.kind not in units:
        name = getattr(value, "name", None)
        raise JostleRuntimeError(
            f"{who} cannot learn from {f'table {name!r}' if isinstance(name, str) else 'this data'}: its privacy "
            f"unit is {unit} ({unit.describe()}), and the {family} family supports {', '.join(units)}", span,
            "bind the data under a unit the family supports (e.g. unit=\"row\"); nothing was spent")
    return unit


def check_learnable(table: Any, units: tuple[str, ...], span: Span, who: str, family: str) -> PrivacyUnit:
    """Refuse, before any charge, a private table a learner that does not scale its noise to the
    table's stability cannot learn from: one whose privacy unit's kind is not in `units`, or
    whose stability is above 1 or unbounded (None). Unit and stability are public facts of the
    table (set at bind time and by the program's operations), never read from its rows, so the
    refusal is the same on neighbouring data. Returns the table's unit.
    """
    unit = check_unit(table, units, span, who, family)
    stability = getattr(table, "stability", 1)
    if stability is None or stability > 1:
        bound = "unbounded" if stability is None else str(stability)
        raise JostleRuntimeError(
            f"{who} cannot learn from table '{getattr(table, 'name', '?')}': one individual may change "
            f"{'any number of' if stability is None else stability} of its rows (stability {bound}, "
            f"privacy unit {unit}), and the {family} learners' privacy argument holds for one row", span,
            "bound the rows per individual to one first, e.g. t.bound_per_key(1); nothing was spent")
    return unit


def unit_text(value: Any) -> str:
    """The unit of a value's data as the ledger writes it (row, entity:KEY, replace_one)."""
    return unit_of(value).text


def check_keywords(kwargs: dict[str, Any], span: Span, who: str, allowed: tuple[str, ...] = BUDGET_KEYWORDS) -> None:
    for key in kwargs:
        if key not in allowed:
            raise JostleRuntimeError(f"{who} has no keyword argument '{key}'", span, f"its keywords are {list(allowed)}")


@dataclass
class ChoiceCall:
    """What a family's language module makes of a ChoiceMaker call's arguments.

    Attributes:
        data: The engine's input (None for a public call).
        node: The data node the charges go to.
        unit: The privacy unit of the data (checked against the family's units by the dispatch).
        private: Whether the input is private (a public call is answered exactly, for free).
        public_result: The answer to a public call.
        measure_builtin: measure(engine metafeature, exact epsilon, noise, context) -> value, for
            built-in metafeatures (the pure epsilon within the unit's part, charged already).
        run_builtin: run(language option, part, released metafeatures) -> result, for built-in
            options (the part's planned cost is charged already).
        wrap: wrap(result, choice, budget) turns the chosen Option's result into a language value.
        segment_hint: How to fix a ChoiceMaker not trained for this input's segment.
    """

    data: Any
    node: Any
    private: bool
    public_result: Any = None
    measure_builtin: Callable[..., float] | None = None
    run_builtin: Callable[..., Any] | None = None
    wrap: Callable[..., Any] = field(default=lambda result, choice, budget: result)
    segment_hint: str = ""
    unit: PrivacyUnit = ROW


def value_error_bound(interp: Any, span: Any, value: Any, confidence: Any) -> Any:
    """`accuracy(x, c)` on a released value: its noise's half-width (jostle.language.builtins_accuracy).
    Here so that the one `accuracy` built-in, registered by the learner kit, can serve both uses."""
    from jostle.language.builtins_accuracy import value_accuracy

    return value_accuracy(interp, span, value, confidence)


def refuse_private_declarations(declarations: dict[str, Any], who: str, span: Span) -> None:
    """Refuse a task value's (`ilp_task`, `clustering_task`) private declaration, when it is built.

    A task value is public and stateless: training runs and predict(F) priors get it as it is
    (jostle.language.training_boundary), so it must hold nothing private. Whether a value is
    private is a fact of the program, not of the rows: the refusal reads no data.

    Raises:
        JostleRuntimeError: The first private declaration, located at the call; nothing spent.
    """
    for key, value in declarations.items():
        if is_private(value):
            raise JostleRuntimeError(f"{who}: {key}= is private; a task holds public declarations only", span,
                                     "declare public values (release a private one first); nothing was spent")
