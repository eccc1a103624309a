"""Measuring metafeatures privately: the budget plan and the one measurement loop.

`measure_features` is the code path of both training (public data, simulated noise) and
`dispatch` (private data): training therefore sees metafeatures with the noise they will have
at run time.

The plan (`plan_budget`). A call with budget E (a pure epsilon or a rho, `budgets`) and
metafeature share s (as the family may raise it at E, `Family.metafeature_share_at`, a public
function of s and E) has k noisy budget units: a noisy metafeature on its own, or one shared
release that several metafeatures post-process (`budget_unit`). Each unit gets s * E / k and the
Option gets E minus the units, in E's measure. The parts are exact rationals, so they add up to E
exactly and the last charge never fails on rounding. Each unit is charged its planned cost
(`Family.metafeature_cost`: the pure epsilon within its part), checked against its part first;
the float a metafeature computes with is the largest float not above that epsilon
(`floor_float`), never more than was charged. With no noisy metafeature the Option gets all of
E. Privacy: sequential composition of the k unit releases and the Option's run (each charged
before its noise is drawn, each cost within its part: epsilons add; rhos add, Bun and Steinke
2016, Lemma 2.3, a pure epsilon e costing e^2 / 2) gives at most E; everything derived from
released values (derived metafeatures, the choice) is post-processing.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Mapping

from jostle.choicemaker.budgets import MeasureMismatch, as_budget, in_measure, is_positive, pure_epsilon_within, scaled
from jostle.choicemaker.family import OverstatedCost, exact_share
from jostle.privacy.budget import floor_float
from jostle.privacy.measures import AnyBudget, zero_like

ChargeFunction = Callable[[AnyBudget, str], None]


def budget_unit(metafeature: Any) -> str:
    """What a noisy metafeature's budget pays for: its shared release, or itself."""
    return getattr(metafeature, "release", "") or metafeature.name


def plan_budget(metafeatures: list[Any], budget: Any, mf_share: Any, family: Any = None) -> dict[str, AnyBudget]:
    """The exact part of the budget of each noisy budget unit ("metafeature <unit>") and of the
    Option ("option"), in the budget's measure.

    Args:
        metafeatures: The metafeatures to measure (only noisy ones get budget).
        budget: The whole budget E (a `Budget` or `RhoZCDPBudget`; a number is a pure epsilon,
            a float converted exactly).
        mf_share: The share s of E for the metafeatures, 0 <= s < 1.
        family: The learner family, if it may raise the share at this budget
            (`Family.metafeature_share_at`: a function of the public share and budget only).
    """
    budget, share = as_budget(budget), exact_share(mf_share)
    if not 0 <= share < 1:
        raise ValueError(f"the metafeature share must be in [0, 1), got {float(share)}")
    if family is not None and share > 0:
        raised = family.metafeature_share_at(share, budget)
        if not share <= raised < 1:
            raise ValueError(f"{family.name}'s metafeature share at {budget} is {float(raised)}, outside "
                             f"[{float(share)}, 1)")
        share = raised
    units = list(dict.fromkeys(budget_unit(m) for m in metafeatures if m.cost))
    if not units:
        return {"option": budget}
    if share == 0:
        raise ValueError("noisy metafeatures need a positive share of the budget")
    per_unit = scaled(budget, share / len(units))
    plan: dict[str, AnyBudget] = {f"metafeature {unit}": per_unit for unit in units}
    plan["option"] = budget - scaled(per_unit, Fraction(len(units)))
    return plan


def checked_cost(cost: AnyBudget, part: AnyBudget, description: str) -> AnyBudget:
    """`cost` if it is positive and, in `part`'s measure, fits in `part` (what a part states it
    will charge, checked before the charge).

    Raises:
        OverstatedCost: It does not fit, or has no conversion into the part's measure.
        ValueError: It is zero (a part too small for any release, e.g. a rho below 5e-25).
    """
    if not is_positive(cost):
        raise ValueError(f"{description}'s part {part} is too small to release anything (its cost would be {cost}); "
                         "give the call a larger budget")
    try:
        converted = in_measure(cost, part)
    except MeasureMismatch as error:  # no sound conversion
        raise OverstatedCost(f"{description} states a cost of {cost}, which cannot be counted in a "
                             f"{part} part: {error}") from None
    if not part.covers(converted):
        raise OverstatedCost(f"{description} states a cost of {cost} ({converted}), more than its part {part}")
    return cost


@dataclass(frozen=True)
class FeatureMeasurement:
    """Result of `measure_features`.

    Attributes:
        features: Name -> released value of every metafeature measured.
        plan: Description -> exact part of the budget of every unit, plus "option" for the rest.
        charged: Description -> planned cost actually charged (the noisy units, once each).
    """

    features: dict[str, float]
    plan: dict[str, AnyBudget]
    charged: dict[str, AnyBudget]

    @property
    def option_budget(self) -> AnyBudget:
        """The Option's part of the plan."""
        return self.plan["option"]

    @property
    def option_epsilon(self) -> Fraction:
        """The exact pure epsilon the Option runs at within its part."""
        return pure_epsilon_within(self.plan["option"])

    @property
    def budget_split(self) -> dict[str, AnyBudget]:
        """The plan: description -> exact part (the parts add up to the call's budget)."""
        return dict(self.plan)


def check_order(metafeatures: list[Any]) -> None:
    """Refuse repeated names and a derived metafeature listed before what it post-processes."""
    names = [m.name for m in metafeatures]
    if len(set(names)) != len(names):
        raise ValueError("metafeature names must be distinct")
    for index, feature in enumerate(metafeatures):
        missing = [r for r in getattr(feature, "requires", ()) if r not in names[:index]]
        if missing:
            raise ValueError(f"metafeature {feature.name!r} post-processes {missing}: list them before it")


def default_measure(metafeature: Any, data: Any, amount: AnyBudget, noise: Any, context: Any) -> float:
    """Measure with the largest float not above the pure epsilon within the unit's part (0 for
    free ones)."""
    epsilon = pure_epsilon_within(as_budget(amount))
    return float(metafeature.measure(data, floor_float(epsilon) if epsilon > 0 else 0.0, noise, context))


def measure_features(family: Any, metafeatures: list[Any], data: Any, budget: Any, mf_share: Any,
                     noise: Any, charge: ChargeFunction | None = None,
                     measure: Callable[..., float] = default_measure,
                     charges_itself: Callable[[Any], bool] = lambda part: False,
                     checked_plan: Mapping[str, AnyBudget] | None = None) -> FeatureMeasurement:
    """Measure metafeatures, charging each noisy budget unit once, before its first draw.

    Args:
        family: The learner family (gives the metafeatures' public context).
        metafeatures: Metafeature-like objects, distinct names, derived ones after their sources.
        data: The family's input.
        budget: The whole budget of the ChoiceMaker call (a number is a pure epsilon).
        mf_share: Share of the budget for the noisy metafeatures.
        noise: Source of randomness.
        charge: charge(planned cost, description), called before a unit's first measurement
            (the cost is checked against the unit's part first, `checked_cost`).
        measure: measure(metafeature, data, part, noise, context) -> value (the language
            passes one that runs Jostle-defined metafeatures in the interpreter).
        charges_itself: Whether a part charges its own releases within its amount (a Jostle-
            defined metafeature's `{{ }}` do); such a unit is not charged here.
        checked_plan: The plan a caller already checked every part's cost against (dispatch):
            measured with exactly that plan, refused before any charge if it is not this call's.
    """
    check_order(metafeatures)
    budget = as_budget(budget)
    plan = plan_budget(list(metafeatures), budget, mf_share, family)
    if checked_plan is not None and dict(checked_plan) != plan:
        raise ValueError("the metafeature plan changed between its check and its charges (a family's "
                         "metafeature_share_at must be a function of the share and budget alone)")
    context = family.context(data, plan["option"], budget)
    data = family.metafeature_input(data)
    features: dict[str, float] = {}
    charged: dict[str, AnyBudget] = {}
    for feature in metafeatures:
        amount = zero_like(budget)
        if feature.cost:
            unit = f"metafeature {budget_unit(feature)}"
            amount = plan[unit]
            if unit not in charged and not charges_itself(feature):
                cost = checked_cost(family.metafeature_cost(feature, amount), amount, unit)
                if charge is not None:
                    charge(cost, unit)
                charged[unit] = cost
        features[feature.name] = float(measure(feature, data, amount, noise, context))
        context.released[feature.name] = features[feature.name]
    return FeatureMeasurement(features, plan, charged)


def released_value(metafeatures: list[Any], features: Mapping[str, float], name: str) -> float | None:
    """The value a noisy metafeature called `name` released in this call, if it was measured."""
    for feature in metafeatures:
        if feature.name == name and feature.cost:
            return float(features[name])
    return None
