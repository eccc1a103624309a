"""Measuring metafeatures privately: the budget plan and the one measurement loop.

`measure_features` is the code path of both training (public data, simulated noise) and
`dispatch` (private data): training therefore sees metafeatures with the noise they will have
at run time.

The plan (`plan_budget`). A call with budget E and metafeature share s has k noisy budget
units: a noisy metafeature on its own, or one shared release that several metafeatures
post-process (`budget_unit`). Each unit gets s * E / k and the Option gets E minus the units.
The parts are exact rationals, so they add up to E exactly and the last charge never fails on
rounding; the float a metafeature or an algorithm computes with is the largest float not above
its part (`floor_float`), never more than was charged. With no noisy metafeature the Option
gets all of E. Privacy: sequential composition of the k unit releases and the Option's run
(each charged before its noise is drawn) gives E; everything derived from released values
(derived metafeatures, the choice) is post-processing.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Mapping

from jostle.choicemaker.family import exact, exact_share
from jostle.privacy.budget import floor_float

ChargeFunction = Callable[[Fraction, str], None]


def budget_unit(metafeature: Any) -> str:
    """What a noisy metafeature's budget pays for: its shared release, or itself."""
    return getattr(metafeature, "release", "") or metafeature.name


def plan_budget(metafeatures: list[Any], epsilon: Any, mf_share: Any) -> dict[str, Fraction]:
    """Exact epsilon per noisy budget unit ("metafeature <unit>") and for the Option ("option").

    Args:
        metafeatures: The metafeatures to measure (only noisy ones get budget).
        epsilon: The whole budget E (a float converts exactly).
        mf_share: The share s of E for the metafeatures, 0 <= s < 1.
    """
    epsilon, share = exact(epsilon), exact_share(mf_share)
    if not 0 <= share < 1:
        raise ValueError(f"the metafeature share must be in [0, 1), got {float(share)}")
    units = list(dict.fromkeys(budget_unit(m) for m in metafeatures if m.cost))
    if not units:
        return {"option": epsilon}
    if share == 0:
        raise ValueError("noisy metafeatures need a positive share of the budget")
    per_unit = epsilon * share / len(units)
    plan = {f"metafeature {unit}": per_unit for unit in units}
    plan["option"] = epsilon - per_unit * len(units)
    return plan


@dataclass(frozen=True)
class FeatureMeasurement:
    """Result of `measure_features`.

    Attributes:
        features: Name -> released value of every metafeature measured.
        plan: Description -> exact epsilon of every unit, plus "option" for the rest.
        charged: Description -> exact epsilon actually charged (the noisy units, once each).
    """

    features: dict[str, float]
    plan: dict[str, Fraction]
    charged: dict[str, Fraction]

    @property
    def option_epsilon(self) -> Fraction:
        return self.plan["option"]

    @property
    def budget_split(self) -> dict[str, Fraction]:
        """The plan: description -> exact epsilon (the parts add up to the call's epsilon)."""
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


def default_measure(metafeature: Any, data: Any, amount: Fraction, noise: Any, context: Any) -> float:
    """Measure with the largest float not above the unit's exact budget (0 for free ones)."""
    epsilon = floor_float(amount) if amount > 0 else 0.0
    return float(metafeature.measure(data, epsilon, noise, context))


def measure_features(family: Any, metafeatures: list[Any], data: Any, epsilon: Any, mf_share: Any,
                     noise: Any, charge: ChargeFunction | None = None,
                     measure: Callable[..., float] = default_measure,
                     charges_itself: Callable[[Any], bool] = lambda part: False) -> FeatureMeasurement:
    """Measure metafeatures, charging each noisy budget unit once, before its first draw.

    Args:
        family: The learner family (gives the metafeatures' public context).
        metafeatures: Metafeature-like objects, distinct names, derived ones after their sources.
        data: The family's input.
        epsilon: The whole budget of the ChoiceMaker call.
        mf_share: Share of epsilon for the noisy metafeatures.
        noise: Source of randomness.
        charge: charge(exact epsilon, description), called before a unit's first measurement.
        measure: measure(metafeature, data, exact amount, noise, context) -> value (the language
            passes one that runs Jostle-defined metafeatures in the interpreter).
        charges_itself: Whether a part charges its own releases within its amount (a Jostle-
            defined metafeature's `{{ }}` do); such a unit is not charged here.
    """
    check_order(metafeatures)
    plan = plan_budget(list(metafeatures), epsilon, mf_share)
    option_epsilon = plan["option"]
    context = family.context(data, floor_float(option_epsilon), float(exact(epsilon)))
    data = family.metafeature_input(data)
    features: dict[str, float] = {}
    charged: dict[str, Fraction] = {}
    for feature in metafeatures:
        amount = Fraction(0)
        if feature.cost:
            unit = f"metafeature {budget_unit(feature)}"
            amount = plan[unit]
            if unit not in charged and not charges_itself(feature):
                if charge is not None:
                    charge(amount, unit)
                charged[unit] = amount
        features[feature.name] = float(measure(feature, data, amount, noise, context))
        context.released[feature.name] = features[feature.name]
    return FeatureMeasurement(features, plan, charged)


def released_value(metafeatures: list[Any], features: Mapping[str, float], name: str) -> float | None:
    """The value a noisy metafeature called `name` released in this call, if it was measured."""
    for feature in metafeatures:
        if feature.name == name and feature.cost:
            return float(features[name])
    return None
