"""The privacy checks of the family conformance suite (see `jostle.choicemaker.conformance`).

Each `check_*` takes a `Subject` and raises `ConformanceError` naming the property it breaks:
declarations (sensitivities, fingerprints, modes), planned charges equal to the ledger total, a
charge before every draw, an over-budget request refused with nothing released, the budget
guard refusing before it forwards, every privacy unit and every measure the family declares
(and refusal of the others before anything happens).
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any, Mapping

from jostle.choicemaker.budgets import in_measure, scaled
from jostle.choicemaker.conformance_setup import (BUDGET_GUARD, CHARGE_BEFORE_DRAW, DECLARATIONS, MEASURES,
                                                  OVER_BUDGET, PLANNED_CHARGES, UNIT_EXAMPLES, UNITS, Event,
                                                  OutsideBudgetExceeded, Subject, budget_float_exact, charges,
                                                  describe_events, draws, exact_randomness, fail, noise_kinds,
                                                  recorded_dispatch, require, ZCDP_RHO)
from jostle.choicemaker.private_dispatch import BudgetGuard, ChoiceBudgetError
from jostle.choicemaker.family import Family, UnsupportedMeasure, UnsupportedUnit
from jostle.choicemaker.measurement import budget_unit, plan_budget
from jostle.choicemaker.model import regret_measure_problem
from jostle.privacy.measures import Budget, RhoZCDPBudget, zero_like



def check_declarations(subject: Subject) -> None:
    """Every noisy metafeature states its sensitivity (non-empty text), every Option has a
    fingerprint (non-empty text, distinct across Options), names match their keys, the
    default metafeatures exist, and the declared modes and payoff rule are ones the engine knows."""
    family = subject.family
    require(bool(family.name) and bool(family.task), family, DECLARATIONS, "the family needs a name and a task")
    options, metafeatures = family.options(), family.metafeatures()
    require(len(options) > 0, family, DECLARATIONS, "the family has no Option")
    prints: dict[str, str] = {}
    for key, option in options.items():
        require(getattr(option, "name", None) == key, family, DECLARATIONS,
                f"Option registered as {key!r} is named {getattr(option, 'name', None)!r}")
        value = getattr(option, "fingerprint", None)
        require(isinstance(value, str) and bool(value), family, DECLARATIONS,
                f"Option {key!r} states no fingerprint (a non-empty `fingerprint` text)")
        require(value not in prints, family, DECLARATIONS,
                lambda: f"Options {prints[value]!r} and {key!r} share the fingerprint {value!r}")
        prints[value] = key
    for key, metafeature in metafeatures.items():
        require(getattr(metafeature, "name", None) == key, family, DECLARATIONS,
                f"metafeature registered as {key!r} is named {getattr(metafeature, 'name', None)!r}")
        require(isinstance(getattr(metafeature, "cost", None), bool), family, DECLARATIONS,
                f"metafeature {key!r} must say whether it costs budget (`cost`: bool)")
        if metafeature.cost:
            sensitivity = getattr(metafeature, "sensitivity", "")
            require(isinstance(sensitivity, str) and bool(sensitivity.strip()), family, DECLARATIONS,
                    f"noisy metafeature {key!r} states no sensitivity (a non-empty `sensitivity` text)")
    missing = [name for name in family.default_metafeatures if name not in metafeatures]
    require(not missing, family, DECLARATIONS, f"default metafeatures {missing} are not metafeatures of the family")
    require(set(family.modes) <= {"measured", "public"} and "measured" in family.modes, family, DECLARATIONS,
            f"modes {family.modes} must include 'measured' and be among 'measured', 'public'")
    require(family.payoff_rule in ("credit", "paired"), family, DECLARATIONS,
            f"unknown payoff rule {family.payoff_rule!r}")
    require(family.payoff_rule != "paired" or "public" in family.modes, family, DECLARATIONS,
            "the 'paired' payoff rule needs the 'public' mode")
    problem = regret_measure_problem(family.payoff_rule, family.regret_measure)
    require(problem is None, family, DECLARATIONS, problem or "")
    require(len(family.config_columns) >= 2, family, DECLARATIONS,
            "config_columns must name at least the task and its LODO group")
    check_share_rule(family)


def check_share_rule(family: Family) -> None:
    """`Family.metafeature_share_at` keeps its contract at small and large budgets of both
    measures: an exact rational in [share, 1), the same on every call (the plan is built again
    where it is charged, and both must agree), so it can only be a function of share and budget."""
    budgets = [Budget(Fraction(1, 10) ** k, Fraction(0)) for k in range(-1, 6)]
    budgets += [RhoZCDPBudget(Fraction(1, 10) ** k) for k in range(-1, 9, 2)]
    for share in (Fraction(0), Fraction(1, 100), Fraction(1, 10), Fraction(1, 2)):
        for budget in budgets:
            first, again = family.metafeature_share_at(share, budget), family.metafeature_share_at(share, budget)
            require(isinstance(first, Fraction) and share <= first < 1 and first == again, family, DECLARATIONS,
                    lambda: f"metafeature_share_at({share}, {budget}) gave {first!r} then {again!r}: it must be "
                            f"an exact rational in [share, 1), the same on every call")


def check_planned_charges(subject: Subject) -> None:
    """The charges of a dispatch (recorded through `charge=`) equal its plan exactly: one
    charge per part of `result.budget_split`, of exactly that amount; the parts add up to
    epsilon exactly; the plan is the engine's `plan_budget` for the metafeatures read; the
    chosen Option's part is charged once, in full (the whole rest of epsilon)."""
    family = subject.family
    for label, choicemaker, data, forced in subject.runs():
        result, error, events = recorded_dispatch(subject, choicemaker, data, forced, exact_randomness(subject.seed))
        require(error is None, family, PLANNED_CHARGES, lambda: f"{label}: the dispatch failed: {error!r}")
        made = charges(events)
        descriptions = [d for d, _ in made]
        require(len(set(descriptions)) == len(descriptions), family, PLANNED_CHARGES,
                f"{label}: a part was charged twice: {descriptions}")
        recorded = dict(made)
        planned = dict(result.budget_split)
        # Each part is charged its planned cost: the part itself for a pure budget (and for a
        # mechanism calibrated in the budget's measure); under zCDP, a pure-epsilon mechanism's
        # cost is the epsilon within its rho part (`Family.planned_cost`, `metafeature_cost`).
        costs = planned_costs(family, choicemaker, data, planned, result.choice)
        require(recorded == costs, family, PLANNED_CHARGES,
                lambda: f"{label}: charges {recorded} differ from the plan's planned costs {costs}")
        total = sum(planned.values(), zero_like(subject.budget))
        require(total == subject.budget, family, PLANNED_CHARGES,
                lambda: f"{label}: the plan's parts add up to {total}, not {subject.budget}")
        spent = sum((in_measure(cost, subject.budget) for cost in recorded.values()), zero_like(subject.budget))
        require(subject.budget.covers(spent) and (spent == subject.budget or recorded != planned), family,
                PLANNED_CHARGES, lambda: f"{label}: charges add up to {spent}, not within {subject.budget}")
        segment = family.segment_of(data)
        read = choicemaker.metafeatures_for(segment)
        expected = plan_budget(read, subject.budget, choicemaker.metafeature_share(segment), subject.family)
        option_part = expected.pop("option")
        expected[f"option {result.choice}"] = option_part
        require(planned == expected, family, PLANNED_CHARGES,
                lambda: f"{label}: budget_split {planned} is not the engine's plan {expected}")
        chosen = f"option {result.choice}"
        require(recorded.get(chosen) == costs[chosen], family, PLANNED_CHARGES,
                f"{label}: Option {result.choice} was not charged the planned cost of its part {option_part} in full")
        traced = [(d, a) for d, a in made]
        require(list(result.trace.charges) == traced, family, PLANNED_CHARGES,
                lambda: f"{label}: the trace's charges {result.trace.charges} differ from the ledger's {traced}")
        runs = [e for e in events if e[0] == "run"]
        require(len(runs) >= 1 and all(e[1] == result.choice for e in runs), family, PLANNED_CHARGES,
                lambda: f"{label}: expected Option {result.choice} to run once, saw {runs}")


def planned_costs(family: Family, choicemaker: Any, data: Any, parts: Mapping[str, Any], choice: str) -> dict:
    """What each part of a dispatch's plan states it charges (`Family.metafeature_cost` for a
    metafeature unit, `Family.planned_cost` for the chosen Option): for a pure budget, the parts."""
    features = {f"metafeature {budget_unit(m)}": m for m in choicemaker.metafeatures_for(family.segment_of(data))
                if m.cost}
    option = (choicemaker.options or {}).get(choice)
    costs = {}
    for description, part in parts.items():
        if description == f"option {choice}":
            costs[description] = family.planned_cost(option, part)
        else:
            costs[description] = family.metafeature_cost(features[description], part)
    return costs


def audit_order(family: Family, metafeatures: Mapping[str, Any], events: list[Event], label: str) -> None:
    """Fail unless every draw follows a charge that pays for it (see `check_charge_before_draw`)."""
    charged: set[str] = set()
    current: tuple[str, str] | None = None
    for index, event in enumerate(events):
        kind = event[0]
        where = lambda: f"{label}: event {index} of: {describe_events(events)}"  # noqa: E731
        if kind == "charge":
            charged.add(event[1])
        elif kind == "measure":
            current = ("metafeature", event[1])
        elif kind == "run":
            current = ("option", event[1])
            require(f"option {event[1]}" in charged, family, CHARGE_BEFORE_DRAW,
                    lambda: f"Option {event[1]} runs before its part is charged ({where()})")
        elif kind == "draw":
            require(bool(charged), family, CHARGE_BEFORE_DRAW,
                    lambda: f"{event[1]}.{event[2]} was drawn before the first charge ({where()})")
            if current is not None and current[0] == "metafeature":
                metafeature = metafeatures[current[1]]
                require(bool(metafeature.cost), family, CHARGE_BEFORE_DRAW,
                        lambda: f"metafeature {current[1]} is free (cost False) but drew {event[2]} ({where()})")
                unit = f"metafeature {budget_unit(metafeature)}"
                require(unit in charged, family, CHARGE_BEFORE_DRAW,
                        lambda: f"metafeature {current[1]} drew before '{unit}' was charged ({where()})")
            if current is not None and current[0] == "option":
                require(f"option {current[1]}" in charged, family, CHARGE_BEFORE_DRAW,
                        lambda: f"Option {current[1]} drew before its charge ({where()})")
            if event[1].startswith("option"):
                require(current is not None and current[0] == "option", family, CHARGE_BEFORE_DRAW,
                        lambda: f"the Option's noise was drawn before it ran ({where()})")


def check_charge_before_draw(subject: Subject) -> None:
    """With noise sources recording every call and the charges in one event list: no draw
    precedes the first charge; each metafeature draws only after its budget unit is charged
    (a free metafeature never draws); the Option runs and draws only after its part is
    charged. With exact and with simulation noise."""
    family = subject.family
    registry = {m.name: m for m in subject.all_metafeatures()}
    for noise_label, make_noise in noise_kinds(subject):
        for label, choicemaker, data, forced in subject.runs():
            result, error, events = recorded_dispatch(subject, choicemaker, data, forced, make_noise)
            require(error is None, family, CHARGE_BEFORE_DRAW,
                    lambda: f"{label} with {noise_label}: the dispatch failed: {error!r}")
            metafeatures = {**registry, **{m.name: m for m in choicemaker.metafeatures}}
            audit_order(family, metafeatures, events, f"{label} with {noise_label}")


def check_over_budget_refused(subject: Subject) -> None:
    """An outside accountant holding 0, half of epsilon, or epsilon less 10^-12 refuses a
    charge: the dispatch raises (the accountant's error, not a result), the refused charge is
    the last thing that happens (no draw, charge or run after it), and with nothing left
    nothing at all is drawn."""
    family = subject.family
    total = budget_float_exact(subject.budget)
    for label, choicemaker, data, forced in subject.runs():
        for remaining in (Fraction(0), total / 2, total - Fraction(1, 10**12)):
            case = f"{label}, the accountant holding {float(remaining):.12g} of {float(total):g}"
            result, error, events = recorded_dispatch(subject, choicemaker, data, forced,
                                                      exact_randomness(subject.seed), remaining)
            require(result is None and error is not None, family, OVER_BUDGET,
                    f"{case}: the dispatch released a result instead of failing")
            chain, cause = [], error
            while cause is not None:
                chain.append(cause)
                cause = cause.__cause__ or cause.__context__
            require(any(isinstance(c, OutsideBudgetExceeded) for c in chain), family, OVER_BUDGET,
                    lambda: f"{case}: failed with {error!r}, not by the accountant's refusal")
            refused = [i for i, e in enumerate(events) if e[0] == "refused"]
            require(len(refused) == 1 and refused[0] == len(events) - 1, family, OVER_BUDGET,
                    lambda: f"{case}: something happened after the refused charge: {describe_events(events)}")
            if remaining == 0:
                require(not draws(events), family, OVER_BUDGET,
                        lambda: f"{case}: drew noise with nothing paid: {describe_events(events)}")


def check_budget_guard(subject: Subject) -> None:
    """A `BudgetGuard` forwards the parts of a plan of the family's metafeatures (they fit
    exactly), and refuses, without forwarding, one more charge of 10^-30 and a single charge
    above its epsilon."""
    family = subject.family
    total = subject.budget
    plan = plan_budget(subject.all_metafeatures(), total, subject.setup.mf_share, subject.family)
    forwarded: list[tuple[Any, str]] = []
    guard = BudgetGuard(total, lambda amount, description: forwarded.append((amount, description)))
    for description, amount in plan.items():
        guard.charge(amount, description)
    require(guard.spent == total and len(forwarded) == len(plan), family, BUDGET_GUARD,
            f"the plan's parts were not all forwarded: {forwarded}")
    fresh = BudgetGuard(total, lambda amount, description: forwarded.append((amount, description)))
    for guard, amount in ((guard, scaled(total, Fraction(1, 10**30))), (fresh, total + total)):
        before, spent = len(forwarded), guard.spent
        try:
            guard.charge(amount, "one charge too many")
        except ChoiceBudgetError:
            pass
        else:
            raise fail(family, BUDGET_GUARD, f"a charge of {amount} beyond {total} was accepted")
        require(len(forwarded) == before and guard.spent == spent, family, BUDGET_GUARD,
                "the refused charge was forwarded to the outside accountant")



def budget_in(measure: str, subject: Subject) -> Any:
    """The subject's budget stated in `measure`: its pure epsilon, an (epsilon, delta) with
    delta 1e-6, or the rho `ZCDP_RHO`."""
    if measure == "zcdp":
        return RhoZCDPBudget(ZCDP_RHO)
    if measure == "approximate":
        return Budget(Fraction(subject.epsilon), Fraction(1, 10**6))
    return Budget(Fraction(subject.epsilon), Fraction(0))


def check_units(subject: Subject) -> None:
    """Under every unit the family declares (`Family.units`), a dispatch of the trained
    ChoiceMaker runs and its trace names the unit; under every unit it does not declare, the
    dispatch is refused with `UnsupportedUnit` before anything happens (no charge, no draw, no
    run), identically on the two neighbouring inputs."""
    family = subject.family
    declared = tuple(family.units)
    require(bool(declared) and set(declared) <= set(UNIT_EXAMPLES), family, UNITS,
            f"units {declared} must be kinds of privacy unit among {sorted(UNIT_EXAMPLES)}")
    first, second = family.neighbouring_inputs(subject.seed)
    for kind, unit in UNIT_EXAMPLES.items():
        under = dataclasses.replace(subject, unit=unit)
        if kind in declared:
            result, error, events = recorded_dispatch(under, subject.choicemaker, first, None,
                                                      exact_randomness(subject.seed))
            require(error is None, family, UNITS, lambda: f"a dispatch under the declared unit {unit} failed: {error!r}")
            require(result.trace.unit == unit.text, family, UNITS,
                    f"the trace names the unit {result.trace.unit!r}, not {unit.text!r}")
            continue
        outcomes = []
        for data in (first, second):
            result, error, events = recorded_dispatch(under, subject.choicemaker, data, None,
                                                      exact_randomness(subject.seed))
            require(isinstance(error, UnsupportedUnit), family, UNITS,
                    lambda: f"a dispatch under the undeclared unit {unit} was not refused ({error!r})")
            require(not events, family, UNITS,
                    lambda: f"the refusal of the unit {unit} came after: {describe_events(events)}")
            outcomes.append(str(error))
        require(outcomes[0] == outcomes[1], family, UNITS, f"the neighbours are refused differently: {outcomes}")


def check_measures(subject: Subject) -> None:
    """Under every measure the family declares (`Family.measures`): every dispatch (the trained
    ChoiceMaker and every Option forced) charges exactly the planned costs of the plan's parts
    (`Family.metafeature_cost`, `Family.planned_cost`), each within its part once converted into
    the budget's measure as the accountant converts it (a pure epsilon e counts e^2 / 2 against
    a rho), in total within the budget, every draw after the charge that pays for it; the trace
    carries the typed budget and charges; an accountant holding nothing, or half of the budget,
    refuses a charge and nothing happens after it. A budget in a measure it does not declare is
    refused with `UnsupportedMeasure` before anything happens."""
    family = subject.family
    require(set(family.measures) <= {"pure", "approximate", "zcdp"} and bool(family.measures), family,
            MEASURES, f"measures {family.measures} must be among pure, approximate, zcdp (at least one)")
    registry = {m.name: m for m in subject.all_metafeatures()}
    for measure in ("pure", "approximate", "zcdp"):
        budget = budget_in(measure, subject)
        under = dataclasses.replace(subject, budget=budget)
        if measure not in family.measures:
            result, error, events = recorded_dispatch(under, subject.choicemaker, subject.inputs()[0][1], None,
                                                      exact_randomness(subject.seed))
            require(isinstance(error, UnsupportedMeasure) and not events, family, MEASURES,
                    lambda: f"a {measure} budget was not refused before anything happened: {error!r}, "
                            f"{describe_events(events)}")
            continue
        for label, choicemaker, data, forced in under.runs():
            case = f"{label} with a {measure} budget {budget}"
            result, error, events = recorded_dispatch(under, choicemaker, data, forced, exact_randomness(subject.seed))
            require(error is None, family, MEASURES, lambda: f"{case}: the dispatch failed: {error!r}")
            made = dict(charges(events))
            segment = family.segment_of(data)
            plan = plan_budget(choicemaker.metafeatures_for(segment), budget, choicemaker.metafeature_share(segment),
                               subject.family)
            option_part = plan.pop("option")
            expected = {}
            for feature in choicemaker.metafeatures_for(segment):
                if feature.cost:
                    unit = f"metafeature {budget_unit(feature)}"
                    expected[unit] = family.metafeature_cost(feature, plan[unit])
            expected[f"option {result.choice}"] = family.planned_cost(
                (choicemaker.options or {}).get(result.choice), option_part)
            require(made == expected, family, MEASURES,
                    lambda: f"{case}: charges {made} are not the planned costs {expected}")
            parts = {**plan, f"option {result.choice}": option_part}
            counted = zero_like(budget)
            for description, cost in made.items():
                converted = in_measure(cost, budget)
                require(parts[description].covers(converted), family, MEASURES,
                        f"{case}: {description} costs {converted}, more than its part {parts[description]}")
                counted = counted + converted
            require(budget.covers(counted), family, MEASURES, f"{case}: the charges add up to {counted}, over {budget}")
            require(result.trace.budget == budget and dict(result.trace.charges) == made, family, MEASURES,
                    lambda: f"{case}: the trace's budget {result.trace.budget} / charges {result.trace.charges} "
                            f"differ from the dispatch's")
            require(result.trace.option_budget == option_part, family, MEASURES,
                    f"{case}: the trace's option part {result.trace.option_budget} is not {option_part}")
            audit_order(family, {**registry, **{m.name: m for m in choicemaker.metafeatures}}, events, case)
            total = budget_float_exact(budget)
            for remaining in (Fraction(0), total / 2):
                refused_result, refused_error, refused_events = recorded_dispatch(
                    under, choicemaker, data, forced, exact_randomness(subject.seed), remaining)
                refused = [i for i, e in enumerate(refused_events) if e[0] == "refused"]
                require(refused_result is None and len(refused) == 1 and refused[0] == len(refused_events) - 1,
                        family, MEASURES, lambda: f"{case}, the accountant holding {remaining}: "
                                                  f"{describe_events(refused_events)} ({refused_error!r})")
