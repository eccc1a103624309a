"""The private run of a ChoiceMaker, for every family: measure, choose, charge, run, trace.

`dispatch(choicemaker, data, budget, runtime, unit=...)` is the one function every family's
private choice goes through (the language's `H(...)` calls, the Python API, the benchmarks):

  0. the budget's measure and the data's privacy unit are checked against what the family
     declares (`Family.measures`, `Family.units`), and every available Option's planned cost
     for the Option's part of the plan against that part (`Family.planned_cost`): a call the
     family cannot serve, or an Option that would overspend, fails before any charge;
  1. the segment of the input is looked up (an untrained segment fails before any charge);
  2. the metafeatures the meta-model reads are measured (`measurement.measure_features`): each
     noisy budget unit is charged its planned cost (within its part) before its noise is drawn;
  3. the meta-model predicts every Option's error from the released values and picks the
     lowest (post-processing: it costs nothing); Options without a trained prediction may bring
     a prior (`Runtime.priors`, the language's `predict(F)`), which `Runtime.prepare` checked
     before step 1, so that a prior cannot fail on a release after the share is charged;
  4. the chosen Option's planned cost is charged (checked against its part first: run with a
     pure part e an Option is e-DP and costs e; with a rho part r it runs at the pure epsilon
     within r and costs that epsilon, epsilon^2 / 2 <= r), then it runs with its part;
  5. a `Trace` records what was released and why (post-processing of released values): the
     metafeatures with their parts, each Option's predicted error with its 95% interval
     (`intervals`), and how the choice was made ("measuring", "public facts" or "private selection");
  6. the chosen Option's predicted error and interval (`error_estimates.ErrorEstimate`, labelled an
     estimate) is returned (`DispatchResult.estimate`) and added to the details of the charge of its
     run (`Runtime.annotate`), for the cost report and `accuracy`: post-processing of the released
     metafeatures and of public training data, so it costs nothing.
Where training kept private selection for the input's segment (`TrainedChoiceMaker.selects_privately`,
a public decision; only families with the `Family.private_score` hook that take pure budgets,
on row data, with built-in Options), steps 2-4 are replaced by `selection.run_selection`: the whole budget (the
pure epsilon within it) is charged once, before anything is drawn, and Liu and Talwar's
random-stopping selection runs and releases the best-scored candidate's output; the trace
shows the choice, its noisy score and the plan, never the number of runs.
Every charge goes through a `BudgetGuard` (the one sub-ledger, `jostle.privacy.subledger`), which
adds the charges up exactly, in the call's measure, and refuses, before anything is drawn, one
that would take the total above the budget.
Privacy: sequential composition of the metafeature units and the Option's run; the plan's parts
add up to the budget exactly and each charge is within its part.

The `Runtime` says how to charge, measure and run: the default serves Python callers (an
optional `charge(cost, description)` callback receiving typed budgets, a noise source); the
language supplies one that charges its accountant and runs Jostle-defined Options and
metafeatures in the interpreter.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Mapping

from jostle.choicemaker.budgets import as_budget, budget_float, is_positive, measure_of, pure_cost, pure_epsilon_within
from jostle.choicemaker.error_estimates import ErrorEstimate, dispatch_estimate, selection_estimate
from jostle.choicemaker.family import Family
from jostle.choicemaker.measurement import (ChargeFunction, budget_unit, checked_cost, default_measure,
                                            measure_features, plan_budget)
from jostle.privacy.measures import AnyBudget, RhoZCDPBudget, zero_like
from jostle.privacy.subledger import ChoiceBudgetError, Subledger  # noqa: F401 (re-exported)
from jostle.privacy.units import PrivacyUnit


class BudgetGuard(Subledger):
    """A dispatch's guard: the one sub-ledger (`jostle.privacy.subledger.Subledger`), capped at
    the call's budget. `charge(cost, description)` converts the cost into the budget's measure (a
    pure epsilon e counts e^2 / 2 against a rho, by the accountant's own rule), refuses a charge
    that would exceed the total (`ChoiceBudgetError`, which is `OverBudgetError`) before the
    caller measures anything, then forwards the cost, as the mechanism states it, to the outside
    accountant `callback`. A number is a pure epsilon.

    A class of its own (nothing added) so that a dispatch's guard, a live part of a running
    call, is told apart from the sub-ledgers that fitted models keep as their public record of
    charges (jostle.language.detach refuses to return the former to Python).
    """

    def __init__(self, budget: Any, callback: ChargeFunction | None = None) -> None:
        super().__init__(budget, callback, name="the dispatch's budget")


class Runtime:
    """How a dispatch charges, measures and runs; this default serves Python callers.

    Args:
        family: The learner family.
        noise: Randomness for the metafeatures (and the Option unless `option_noise` is given).
        charge: charge(cost, description), called before every noisy draw with the typed cost
            the part charges (a `Budget` or `RhoZCDPBudget`); it should raise if the outside
            budget cannot pay.
        option_noise: option_noise(name) gives the chosen Option's noise source (benchmarks on
            public data pass each fixed algorithm's seed: common random numbers).
    """

    def __init__(self, family: Family, noise: Any, charge: ChargeFunction | None = None,
                 option_noise: Callable[[str], Any] | None = None) -> None:
        self.family = family
        self.noise = noise
        self.callback = charge
        self.option_noise = option_noise
        self.entries: dict[str, Any] = {}  # description -> the ledger entry a charge returned (if any)

    def charge(self, amount: AnyBudget, description: str) -> None:
        if self.callback is not None:
            self.keep(description, self.callback(amount, description))

    def keep(self, description: str, entry: Any) -> None:
        """Remember the ledger entry a charge returned (one with `details`), for `annotate`."""
        if hasattr(entry, "details"):
            self.entries[description] = entry

    def annotate(self, description: str, details: Mapping[str, Any]) -> None:
        """Add public facts (e.g. the predicted error) to the details of the ledger entry of the
        charge `description`, when the charge returned one (`jostle.privacy.composition.Charge`)."""
        entry = self.entries.get(description)
        if entry is not None:
            entry.details.update(details)

    def measure(self, metafeature: Any, data: Any, amount: AnyBudget, noise: Any, context: Any) -> float:
        return default_measure(metafeature, data, amount, noise, context)

    def run(self, option: Any, data: Any, amount: AnyBudget, released: Mapping[str, float]) -> Any:
        noise = self.noise if self.option_noise is None else self.option_noise(option.name)
        return self.family.run(option, data, amount, noise, released)

    def prepare(self) -> None:
        """Called by `dispatch` before anything is charged: a runtime checks here whatever could
        otherwise fail after a charge (the language checks its options' `predict(F)` priors,
        which run once the metafeatures are released). Nothing to check by default."""

    def charges_itself(self, part: Any) -> bool:
        """Whether a part charges its own releases within its part of the plan. Never here: a
        Python caller's parts are charged by the engine, whatever they claim; only the language's
        runtime knows parts (Jostle-defined ones) whose own releases reach its accountant."""
        return False

    def priors(self, features: Mapping[str, float]) -> dict[str, float]:
        """Predicted errors of Options the meta-model cannot predict (none by default)."""
        return {}


@dataclass(frozen=True)
class ChoiceSpec:
    """An untrained ChoiceMaker: it chooses by the runtime's priors alone."""

    family: Family
    options: dict[str, Any]
    metafeatures: list[Any]
    mf_share: float

    def metafeatures_for(self, segment: Hashable = None) -> list[Any]:
        return list(self.metafeatures)

    def metafeature_share(self, segment: Hashable = None) -> float:
        return self.mf_share if any(m.cost for m in self.metafeatures) else 0.0


@dataclass(frozen=True)
class Trace:
    """What one dispatch released and why (public: post-processing of released values).

    `budget` is the call's budget, `metafeature_budget` and `option_budget` its parts (in its
    measure); `charges` the planned costs charged, in order, as the parts stated them; `unit`
    the privacy unit of the data. `epsilon`, `metafeature_epsilon` and `option_epsilon` read
    them as floats: for a pure budget its epsilons, for a rho the pure epsilon the Option ran at
    (and the call's and the metafeatures' rho are `rho`, `metafeature_rho`).
    """

    choicemaker: str
    family: str
    where: str
    segment: str
    metafeatures: dict[str, float]
    predicted_error: dict[str, float]
    prior: dict[str, float]
    choice: str
    budget: AnyBudget
    metafeature_budget: AnyBudget
    option_budget: AnyBudget
    charges: tuple[tuple[str, AnyBudget], ...] = field(default=())
    noisy: tuple[str, ...] = ()  # the metafeatures that read the data (the others are public facts)
    measuring: str = ""  # what training found about measuring (a public fact about the corpus)
    unit: str = "row"
    option_families: tuple[tuple[str, str], ...] = ()  # (Option, the family that runs it), every available one
    intervals: tuple[tuple[str, tuple[float, float]], ...] = ()  # 95% interval of each predicted error
    chosen_by: str = ""  # "measuring", "public facts" or "private selection"
    metafeature_parts: tuple[tuple[str, AnyBudget], ...] = ()  # each noisy metafeature's part of the budget
    selection: str = ""  # the private selection's plan, in words (public)
    selection_score: float | None = None  # the chosen candidate's released noisy score
    error_name: str = ""  # what the predicted errors measure (the family's `error_name`)

    @property
    def choice_family(self) -> str:
        """The family of the Option that ran."""
        return dict(self.option_families).get(self.choice, self.family)

    @property
    def measure(self) -> str:
        return measure_of(self.budget)

    @property
    def epsilon(self) -> float:
        return float(pure_epsilon_within(self.budget))

    @property
    def metafeature_epsilon(self) -> float:
        return float(pure_epsilon_within(self.metafeature_budget))

    @property
    def option_epsilon(self) -> float:
        return float(pure_epsilon_within(self.option_budget))

    def as_dict(self) -> dict[str, Any]:
        """The trace as plain values: budgets as their text (`str(budget)`) and their main
        quantity as floats (`epsilon`, ... for a pure budget; `rho`, ... for a rho, with
        `option_epsilon`, the pure epsilon the Option ran at); charges as (description, text)."""
        plain: dict[str, Any] = {
            "choicemaker": self.choicemaker, "family": self.family, "where": self.where, "segment": self.segment,
            "metafeatures": dict(self.metafeatures), "predicted_error": dict(self.predicted_error),
            "prior": dict(self.prior), "choice": self.choice, "measure": self.measure, "unit": self.unit,
            "budget": str(self.budget), "charges": tuple((d, str(c)) for d, c in self.charges),
            "noisy": tuple(self.noisy), "measuring": self.measuring,
            "option_families": dict(self.option_families), "choice_family": self.choice_family,
            "intervals": {k: tuple(v) for k, v in self.intervals}, "chosen_by": self.chosen_by,
            "metafeature_parts": {k: str(v) for k, v in self.metafeature_parts},
            "selection": self.selection, "selection_score": self.selection_score, "error_name": self.error_name,
        }
        if isinstance(self.budget, RhoZCDPBudget):
            plain.update(rho=budget_float(self.budget), metafeature_rho=budget_float(self.metafeature_budget),
                         option_rho=budget_float(self.option_budget), option_epsilon=self.option_epsilon)
        else:
            plain.update(epsilon=self.epsilon, metafeature_epsilon=self.metafeature_epsilon,
                         option_epsilon=self.option_epsilon)
        return plain


@dataclass(frozen=True)
class DispatchResult:
    """What `dispatch` released: the chosen Option's result, the choice and its trace.

    Attributes:
        result: The chosen Option's release (an estimate, a model).
        choice: Name of the Option that ran.
        features: Released metafeature values.
        predictions: Predicted error of every Option.
        budget_split: Description -> exact part of the budget of every part of the plan (they
            add up to the budget; the chosen Option's part is keyed "option <name>").
        trace: The dispatch's trace.
        costs: Description -> the planned cost charged for each part (equal to its part for
            a pure budget; the pure epsilon within it for a rho); parts that charge their own
            releases (Jostle-defined ones in the language) are not listed.
        estimate: The chosen Option's predicted error and interval (`error_estimates`), an
            estimate (None when nothing could predict it).
    """

    result: Any
    choice: str
    features: dict[str, float]
    predictions: dict[str, float]
    budget_split: dict[str, AnyBudget]
    trace: Trace
    costs: dict[str, AnyBudget] = field(default_factory=dict)
    estimate: ErrorEstimate | None = None

    @property
    def answer(self) -> Any:  # histogram families call their result an answer
        return self.result

    @property
    def model(self) -> Any:  # learner families call it a model
        return self.result


def dispatch(choicemaker: Any, data: Any, budget: Any, noise: Any = None, charge: ChargeFunction | None = None,
             option_noise: Callable[[str], Any] | None = None, *, runtime: Runtime | None = None,
             name: str = "choicemaker", where: str = "", unit: PrivacyUnit | None = None) -> DispatchResult:
    """Choose and run the best Option privately, spending at most `budget` in total.

    Args:
        choicemaker: A `engine.TrainedChoiceMaker`, or a `ChoiceSpec` (choose by priors).
        data: The private input, as the family's Options read it.
        budget: The whole budget (metafeatures plus the chosen Option): a `Budget` (pure
            epsilon) or a `RhoZCDPBudget`; a number (float or Fraction) is a pure epsilon.
        noise, charge, option_noise: For the default `Runtime` (ignored when `runtime` is given).
        runtime: How to charge, measure and run (default: `Runtime(family, noise, charge)`).
        name: The ChoiceMaker's name, for the trace.
        where: Where it was called, for the trace.
        unit: The privacy unit of the data (default: one row added or removed).

    Raises:
        UnsupportedUnit, UnsupportedMeasure: The family does not support the data's unit or the
            budget's measure (before any charge).
        OverstatedCost: An available Option states a cost above its part (before any charge).
        ChoiceBudgetError: A charge would exceed the budget (nothing drawn for it).
    """
    family = choicemaker.family
    try:
        total = as_budget(budget)
    except ValueError as error:
        raise ValueError(f"the budget must be positive and finite: {error}") from None
    if not is_positive(total):
        raise ValueError(f"the budget must be positive and finite, got {budget!r}")
    family.check_measure(total)
    data_unit = family.check_unit(unit)
    runtime = runtime or Runtime(family, noise, charge, option_noise)
    runtime.prepare()  # what could fail after a charge is refused before any (the priors)
    segment = family.segment_of(data)
    trained = not isinstance(choicemaker, ChoiceSpec)
    metafeatures = choicemaker.metafeatures_for(segment)  # an untrained segment fails here, before any charge
    available = {n: o for n, o in choicemaker.options.items() if segment in family.segments(o)}
    if not available:
        raise ValueError(f"{name} has no option for {family.segment_label(segment)} inputs")
    if trained and _selects(choicemaker, segment, data_unit, available, runtime):
        return _dispatch_selection(choicemaker, data, total, runtime, segment, available, name, where, data_unit)
    share = choicemaker.metafeature_share(segment)
    plan = plan_budget(list(metafeatures), total, share, family)
    # Every part states its cost before any charge: each noisy budget unit's and every available
    # Option's planned cost must be positive and fit its part, or nothing is charged at all.
    for feature in metafeatures:
        unit = f"metafeature {budget_unit(feature)}"
        if feature.cost and not runtime.charges_itself(feature):
            checked_cost(family.metafeature_cost(feature, plan[unit]), plan[unit], unit)
    for option_name, candidate in available.items():
        if not runtime.charges_itself(candidate):
            checked_cost(family.planned_cost(candidate, plan["option"]), plan["option"], f"option {option_name}")
    guard = BudgetGuard(total, runtime.charge)
    measured = measure_features(family, metafeatures, data, total, share,
                                runtime.noise, guard.charge, runtime.measure, runtime.charges_itself, plan)
    priors = runtime.priors(measured.features)
    if trained:
        choice, predictions = choicemaker.choose(measured.features, segment)
        for option_name, prior in priors.items():
            predictions.setdefault(option_name, prior)  # an Option the corpus could not train
    else:
        predictions = dict(priors)
        ranked = sorted((p, n) for n, p in predictions.items() if n in available and math.isfinite(p))
        if not ranked:
            raise ValueError(f"{name} has no prediction for any of its options")
        choice = ranked[0][1]
    option = available[choice]
    option_part = measured.option_budget
    if not runtime.charges_itself(option):
        cost = checked_cost(family.planned_cost(option, option_part), option_part, f"option {choice}")
        guard.charge(cost, f"option {choice}")
    result = runtime.run(option, data, option_part, measured.features)
    decision = choicemaker.measuring_decision(segment) if trained else None
    shown = {n: float(predictions[n]) for n in available if n in predictions}
    noisy = tuple(m.name for m in metafeatures if m.cost)
    intervals = choicemaker.error_intervals(shown, segment) if hasattr(choicemaker, "error_intervals") else {}
    trace = Trace(name, family.name, where, family.segment_label(segment), dict(measured.features),
                  shown, dict(priors), choice,
                  total, total - option_part, option_part,
                  tuple((record.description, record.cost) for record in guard.records),
                  noisy, _training_found(choicemaker, segment, decision) if trained else "",
                  data_unit.text, tuple((n, family.option_family(o)) for n, o in available.items()),
                  tuple(intervals.items()), "measuring" if noisy else "public facts",
                  tuple((m.name, measured.plan[f"metafeature {budget_unit(m)}"]) for m in metafeatures if m.cost),
                  error_name=family.error_name)
    split = {k: v for k, v in measured.budget_split.items() if k != "option"}
    split[f"option {choice}"] = option_part
    costs = {record.description: record.cost for record in guard.records}
    estimate = dispatch_estimate(trace, family.error_measure)  # post-processing: released values, public training
    if estimate is not None:
        runtime.annotate(f"option {choice}", {"estimate": estimate})
    return DispatchResult(result, choice, dict(measured.features), predictions, split, trace, costs, estimate)


def _training_found(choicemaker: Any, segment: Hashable, decision: Any) -> str:
    """What training found (public facts about the corpus): measuring, and private selection."""
    found = [decision.sentence()] if decision else []
    model = choicemaker.model_for(segment) if hasattr(choicemaker, "model_for") else None
    reads = model.narrowed_inputs() if model is not None else None
    if reads is not None:  # a meta-model whose choice ignores some of its inputs (budget_regret) says which it reads
        found.append(f"the meta-model ({model.model_kind}, the best by held-out regret on the corpus) "
                     + (f"chooses from {', '.join(reads)} alone" if reads else "always chooses the same Option"))
    selection = getattr(choicemaker, "selection_decision", lambda s: None)(segment)
    if selection is not None:
        found.append(selection.sentence())
    return "; ".join(found)


def _selects(choicemaker: Any, segment: Hashable, unit: PrivacyUnit, available: Mapping[str, Any],
             runtime: Runtime) -> bool:
    """Whether this call runs private selection: training kept it for the segment, the family
    has the hook, the data is row data (the score's sensitivity is stated per row) and no
    available Option charges itself (a Jostle-defined one). Public facts only."""
    selects = getattr(choicemaker, "selects_privately", None)
    family = choicemaker.family  # Liu and Talwar's theorem is a pure-DP one: its candidates run at pure budgets
    return bool(selects is not None and selects(segment) and family.private_score is not None
                and "pure" in family.measures and unit.kind == "row"
                and not any(runtime.charges_itself(o) for o in available.values()))


def _dispatch_selection(choicemaker: Any, data: Any, total: AnyBudget, runtime: Runtime, segment: Hashable,
                        available: dict[str, Any], name: str, where: str, unit: PrivacyUnit) -> DispatchResult:
    """The selection mode (see the module docstring): one charge of the pure epsilon within the
    budget, before anything is drawn; Liu and Talwar's random stopping (3 * eps1 = that epsilon)."""
    family = choicemaker.family
    decision = choicemaker.selection_decision(segment)
    from jostle.choicemaker import selection as private_selection  # training's pandas/sklearn stay out of start-up

    plan = private_selection.selection_plan(total, decision.stop_probability, decision.run_share)
    run_part = pure_cost(as_budget(plan.run_epsilon))
    for option_name, candidate in available.items():  # every candidate states its cost first
        checked_cost(family.planned_cost(candidate, run_part), run_part, f"option {option_name}")
    whole = checked_cost(pure_cost(total), total, "private selection")
    guard = BudgetGuard(total, runtime.charge)

    def charge(cost: AnyBudget, description: str) -> None:
        assert cost == whole, "the selection charges the pure epsilon within its budget"
        guard.charge(cost, description)

    chosen = private_selection.run_selection(
        family, list(available.values()), data, plan, runtime.noise,
        lambda option, part: runtime.run(option, data, part, {}), charge)
    trace = Trace(name, family.name, where, family.segment_label(segment), {}, {}, {}, chosen.candidate,
                  total, zero_like(total), total,
                  tuple((record.description, record.cost) for record in guard.records), (),
                  _training_found(choicemaker, segment, None), unit.text,
                  tuple((n, family.option_family(o)) for n, o in available.items()),
                  (), "private selection", (), plan.describe(), chosen.score)
    costs = {record.description: record.cost for record in guard.records}
    estimate = selection_estimate(choicemaker, chosen.candidate, total, segment, name)  # public training only
    if estimate is not None:
        for description in list(runtime.entries):  # its one charge, whatever the selection calls it
            runtime.annotate(description, {"estimate": estimate})
    return DispatchResult(chosen.output, chosen.candidate, {}, {}, {"private selection": total}, trace, costs,
                          estimate)


def _wrapped(head: str, items: list[str], width: int = 100, indent: int = 4) -> list[str]:
    """`head` and the comma-separated `items` in lines of at most `width`, never breaking an item."""
    lines, line = [], head
    for index, item in enumerate(items):
        text = item + ("," if index < len(items) - 1 else "")
        if line.strip() and not line.endswith(": ") and len(line) + 1 + len(text) > width:
            lines.append(line)
            line = " " * indent + text
        else:
            line += ("" if line.endswith(": ") else " ") + text
    return [*lines, line]


def explain(traces: list[Mapping[str, Any]], name: str = "the ChoiceMaker") -> str:
    """A readable account of dispatches (post-processing of released values and public facts).

    Noisy metafeatures (released with part of the budget, each with its part) and public facts
    (the domain size, the budget) are shown apart; each Option's predicted error with its 95%
    interval (from held-out residuals on the public corpus); how the choice was made (by
    measuring, by public facts alone, or by private selection); and what training found about
    measuring and selection, with the held-out scores on the public corpus that decided it.
    """
    if not traces:
        return f"{name} has not been called yet"
    lines = []
    for trace in traces:
        get = trace.get
        owners = dict(get("option_families") or {})
        several = len(set(owners.values())) > 1  # a ChoiceMaker across families names each Option's

        def label(option: str) -> str:
            return f"{option} ({owners[option]})" if several and option in owners else option

        chosen_by = get("chosen_by") or ""
        lines.append(f"{get('choicemaker')} at {get('where')}: chose {label(get('choice'))}"
                     + (f" (by {chosen_by})" if chosen_by else ""))
        features = dict(get("metafeatures"))
        noisy = set(get("noisy") or ())
        parts = dict(get("metafeature_parts") or {})
        if noisy:
            lines.append("  metafeatures (noisy): " + ", ".join(
                f"{k}={v:.4g}" + (f" [{parts[k]}]" if k in parts else "") for k, v in features.items() if k in noisy))
        public = {k: v for k, v in features.items() if k not in noisy}
        if public:
            lines.append("  public facts:         " + ", ".join(f"{k}={v:.4g}" for k, v in public.items()))
        if get("measuring"):
            lines.append(textwrap.fill(get("measuring"), width=100, initial_indent="  training found:       ",
                                       subsequent_indent=" " * 24))
        if get("selection"):
            lines.append(textwrap.fill(get("selection"), width=100, initial_indent="  selection:            ",
                                       subsequent_indent=" " * 24))
            lines.append(f"  released score:       {get('selection_score'):.4g} (of {get('choice')}'s output)")
        predicted = sorted(dict(get("predicted_error")).items(), key=lambda kv: kv[1])
        intervals = dict(get("intervals") or {})

        def shown(option: str, value: float) -> str:
            low_high = intervals.get(option)
            return (f"{label(option)}={value:.4g}" + (f" [{low_high[0]:.3g}, {low_high[1]:.3g}]" if low_high else "")
                    + (" (chosen)" if option == get("choice") else ""))

        if predicted:  # estimates from the released metafeatures and public training (issue 27, 29)
            if get("error_name"):
                lines.append(f"  error measure:        {get('error_name')}")
            head = "  predicted error (95% interval, an estimate): " if intervals else "  predicted error (an estimate): "
            lines.extend(_wrapped(head, [shown(k, v) for k, v in predicted]))
        if get("selection"):
            whole = f"rho {get('rho'):.6g}" if get("rho") is not None else f"epsilon {get('epsilon'):.6g}"
            lines.append(f"  budget: {whole}, all to the private selection (charged once, before any draw)")
            continue
        if get("rho") is not None:
            lines.append(f"  budget: rho {get('rho'):.6g} = {get('metafeature_rho'):.6g} on metafeatures "
                         f"+ {get('option_rho'):.6g} on {get('choice')} (run at epsilon {get('option_epsilon'):.6g})")
        else:
            lines.append(f"  budget: epsilon {get('epsilon'):.6g} = {get('metafeature_epsilon'):.6g} on metafeatures "
                         f"+ {get('option_epsilon'):.6g} on {get('choice')}")
    return "\n".join(lines)
