"""The conformance checks every learner family must pass (in the manner of scikit-learn's
`check_estimator`).

Each `check_*` function takes a `Subject` (a family, a small ChoiceMaker trained on a tiny
public corpus of it, the tiny setup and a work folder) and asserts one property; a failure is
an `AssertionError` whose message starts with `[<family>] <property>:`. `CHECKS` lists them
all; `check_family` runs them in turn. `tests/test_family_conformance.py` runs every check on
every family `jostle.choicemaker.families.discover()` finds, so a new family is checked by
existing, and runs them on broken toy families to show that each check can fail.

The properties (the privacy ones observed from outside, through the dispatch's `charge=`
callback and noise sources that record every call made on them):

  * declarations: every noisy metafeature states its sensitivity argument, every Option has a
    fingerprint, the family's declared names and modes are consistent;
  * planned charges equal the ledger total: a dispatch's charges add up exactly (Fractions) to
    its plan (`result.budget_split`) and to epsilon; the Option's part is charged once, in full;
  * a charge before every draw: no draw precedes the first charge; a metafeature draws only
    after its budget unit is charged (a free one never draws); an Option draws only after its
    part is charged, and runs only then;
  * an over-budget request is refused with nothing released: an outside accountant holding
    less than epsilon refuses a charge; the dispatch raises it, and nothing is drawn, charged
    or run after the refused charge (nothing at all when the accountant holds nothing); a
    `BudgetGuard` refuses a charge above its epsilon before forwarding it;
  * seed determinism: equally seeded dispatches give the same choice, release, trace and
    draws; the experience table built twice (fresh caches, one process) is identical except
    for the `seconds` column;
  * the zero-spend neighbour rule: on two neighbouring public inputs, a dispatch whose first
    charge is refused fails identically (type, message, charges asked for) and draws nothing;
    the public metafeatures and the public context are identical on both;
  * pickling for parallel training: the family, its Options and metafeatures and a trained
    ChoiceMaker survive pickle and cloudpickle, keep their fingerprints, and the unpickled
    ChoiceMaker chooses (and dispatches) the same.

Every dispatch check runs the trained ChoiceMaker on a public input of every trained segment
and on the family's neighbouring input, and also forces every Option once (a `ChoiceSpec`
holding that Option alone, with all of the family's metafeatures), so Options a small
ChoiceMaker never picks are checked too.
"""

from __future__ import annotations

import dataclasses
import inspect
import pickle
import tempfile
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Hashable, Iterator, Mapping

import numpy as np
import pandas as pd

from jostle.choicemaker.dispatch import BudgetGuard, ChoiceBudgetError, ChoiceSpec, Runtime, dispatch
from jostle.choicemaker.engine import TrainedChoiceMaker, train
from jostle.choicemaker.experience import experience_table, public_metafeatures
from jostle.choicemaker.budgets import as_budget, in_measure, scaled
from jostle.choicemaker.family import Family, exact, fingerprint
from jostle.choicemaker.family import UnsupportedMeasure, UnsupportedUnit
from jostle.privacy.measures import Budget, RhoZCDPBudget, zero_like
from jostle.privacy.units import REPLACE_ONE, ROW, entity
from jostle.choicemaker.measurement import budget_unit, measure_features, plan_budget
from jostle.privacy.noise import Randomness

EPSILON = Fraction(7, 10)  # a budget that no float holds exactly: the sums must be rational
MF_SHARE = 0.1

DECLARATIONS = "declarations"
PLANNED_CHARGES = "planned charges equal the ledger total"
CHARGE_BEFORE_DRAW = "a charge before every draw"
OVER_BUDGET = "an over-budget request is refused with nothing released"
BUDGET_GUARD = "the budget guard refuses before forwarding"
SEED_DETERMINISM = "seed determinism"
EXPERIENCE_DETERMINISM = "seed determinism of the experience table"
NEIGHBOUR_RULE = "the zero-spend neighbour rule"
PICKLING = "pickling for parallel training"


def fail(family: Family, prop: str, detail: str) -> AssertionError:
    """The AssertionError of a failed check: `[family] property: detail`."""
    return AssertionError(f"[{family.name}] {prop}: {detail}")


def require(condition: bool, family: Family, prop: str, detail: str | Callable[[], str]) -> None:
    """Raise `fail(...)` unless `condition`."""
    if not condition:
        raise fail(family, prop, detail() if callable(detail) else detail)


# ====================================================================================== recording
Event = tuple  # ("charge", description, amount) | ("refused", description, amount) |
#                ("measure", metafeature) | ("run", option) | ("draw", source label, method)

_PLAIN = (bool, int, float, complex, str, bytes, Fraction, type(None), np.number, np.ndarray)


class RecordingNoise:
    """A noise source that records every call made on it (and on objects reached through it,
    such as a NumPy generator it holds) as ("draw", label, method) in `events`, then makes it.

    Plain attributes (flags such as `secure`, numbers) are passed through unrecorded.
    """

    def __init__(self, inner: Any, events: list[Event], label: str) -> None:
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_events", events)
        object.__setattr__(self, "_label", label)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self._inner, name)
        if callable(value):
            def recorded(*args: Any, **kwargs: Any) -> Any:
                self._events.append(("draw", self._label, name))
                return value(*args, **kwargs)
            return recorded
        if isinstance(value, _PLAIN) or (isinstance(value, tuple) and all(isinstance(v, _PLAIN) for v in value)):
            return value
        return RecordingNoise(value, self._events, f"{self._label}.{name}")


class RecordingRuntime(Runtime):
    """The default runtime, also recording when each metafeature is measured and each Option
    runs, and (for a `ChoiceSpec`) choosing `forced` through its prior."""

    def __init__(self, family: Family, noise: Any, charge: Any, option_noise: Any, events: list[Event],
                 forced: str | None = None) -> None:
        super().__init__(family, noise, charge, option_noise)
        self.events = events
        self.forced = forced

    def measure(self, metafeature: Any, data: Any, amount: Fraction, noise: Any, context: Any) -> float:
        self.events.append(("measure", metafeature.name))
        return super().measure(metafeature, data, amount, noise, context)

    def run(self, option: Any, data: Any, amount: Fraction, released: Mapping[str, float]) -> Any:
        self.events.append(("run", option.name))
        return super().run(option, data, amount, released)

    def priors(self, features: Mapping[str, float]) -> dict[str, float]:
        return {} if self.forced is None else {self.forced: 0.0}


class Ledger:
    """A charge callback standing for an outside accountant holding `remaining` of the main
    quantity (epsilon or rho) of `like`'s measure: it records each typed charge it accepts
    (converted into that measure as the session's accountant would, `budgets.in_measure`) and
    refuses (raising `OutsideBudgetExceeded`) one it cannot pay."""

    def __init__(self, events: list[Event], remaining: Fraction | None = None, like: Any = None) -> None:
        self.events = events
        self.remaining = remaining
        self.like = Budget(EPSILON, Fraction(0)) if like is None else like
        self.spent = Fraction(0)

    def __call__(self, amount: Any, description: str) -> None:
        require_typed = isinstance(amount, (Budget, RhoZCDPBudget))
        if not require_typed:
            raise TypeError(f"the dispatch charged an untyped amount {amount!r} for {description}")
        counted = Fraction(budget_float_exact(in_measure(amount, self.like)))
        if self.remaining is not None and self.spent + counted > self.remaining:
            self.events.append(("refused", description, amount))
            raise OutsideBudgetExceeded(f"the outside accountant cannot pay {description}")
        self.spent += counted
        self.events.append(("charge", description, amount))


def budget_float_exact(budget: Any) -> Fraction:
    """The main quantity of a budget, exactly: its epsilon, or its rho."""
    return budget.rho if isinstance(budget, RhoZCDPBudget) else budget.epsilon


class OutsideBudgetExceeded(RuntimeError):
    """Raised by a `Ledger` for a charge it cannot pay."""


def charges(events: list[Event]) -> list[tuple[str, Fraction]]:
    return [(e[1], e[2]) for e in events if e[0] == "charge"]


def draws(events: list[Event]) -> list[Event]:
    return [e for e in events if e[0] == "draw"]


# ====================================================================================== the subject
@dataclass
class TinySetup:
    """A tiny public training setup of a family (see `tiny_setup`)."""

    options: list[Any]
    metafeatures: list[Any]
    corpus: list[Any]
    grid: Any
    samples: dict[Hashable, Any]
    mf_share: float = MF_SHARE
    model_families: tuple[str, ...] = ("forest_regret",)


def shrink_grid(grid: Any) -> Any:
    """The family's grid cut down: each tuple field keeps its first value, one repetition
    (a grid that is not a dataclass is kept whole)."""
    if not dataclasses.is_dataclass(grid):
        return grid
    changes: dict[str, Any] = {}
    for item in dataclasses.fields(grid):
        value = getattr(grid, item.name)
        if isinstance(value, tuple) and len(value) > 1:
            changes[item.name] = value[:1]
        elif item.name == "repetitions" and isinstance(value, int) and value > 1:
            changes[item.name] = 1
    return dataclasses.replace(grid, **changes)


def _first_instance(family: Family, task: Any, grid: Any, options: list[Any]) -> Any | None:
    for _, piece in family.pieces(task, grid, options):
        if family.piece_options(task, piece, options):
            for instance in family.instances(task, piece, grid):
                return instance
    return None


def tiny_setup(family: Family, tasks_per_segment: int = 3) -> TinySetup:
    """All the family's Options and default metafeatures, its grid shrunk (`shrink_grid`), and
    for every segment its Options handle the cheapest tasks of its default corpus (by
    `piece_cost`): `tasks_per_segment` of them, more if needed to reach two LODO groups.
    `samples` holds the first public input of each segment (what the checks dispatch on)."""
    options = list(family.options().values())
    registry = family.metafeatures()
    metafeatures = [registry[name] for name in family.default_metafeatures]
    grid = shrink_grid(family.default_grid())
    corpus = list(family.default_corpus(options))

    def cost(task: Any) -> float:
        return sum(family.piece_cost(task, piece) for _, piece in family.pieces(task, grid, options))

    segments = sorted({s for o in options for s in family.segments(o)}, key=str)
    chosen: list[Any] = []
    samples: dict[Hashable, Any] = {}
    for segment in segments:
        groups: set[str] = set()
        picked = 0
        for task in sorted(corpus, key=cost):
            if picked >= tasks_per_segment and len(groups) >= 2:
                break
            instance = _first_instance(family, task, grid, options)
            if instance is None or family.segment_of(instance.data) != segment:
                continue
            if not any(task is other for other in chosen):
                chosen.append(task)
            groups.add(str(task.group))
            picked += 1
            samples.setdefault(segment, instance.data)
    return TinySetup(options, metafeatures, chosen, grid, samples)


def train_tiny(family: Family, setup: TinySetup, cache_dir: Path) -> TrainedChoiceMaker:
    """Train on the tiny setup, in this process, caching under `cache_dir`."""
    return train(family, setup.options, setup.metafeatures, setup.corpus, setup.grid, setup.mf_share,
                 cache_dir=cache_dir, n_jobs=1, progress=False, families=setup.model_families)


@dataclass
class Subject:
    """What a check runs on: a family, a ChoiceMaker trained on its tiny setup, the setup, a
    work folder (for fresh caches) and a seed."""

    family: Family
    choicemaker: Any
    setup: TinySetup
    workdir: Path
    seed: int = 0
    epsilon: Fraction = field(default=EPSILON)
    budget: Any = None  # the dispatches' typed budget (default: the pure epsilon `epsilon`)
    unit: Any = None  # the privacy unit the dispatches are made under (default: row)

    def __post_init__(self) -> None:
        if self.budget is None:
            self.budget = Budget(Fraction(self.epsilon), Fraction(0))

    def inputs(self) -> list[tuple[str, Any]]:
        """(label, public input): one per segment of the setup, and the first neighbour."""
        found = [(f"sample of segment {self.family.segment_label(s) or 'all'}", data)
                 for s, data in self.setup.samples.items()]
        return found + [("neighbouring input", self.family.neighbouring_inputs(self.seed)[0])]

    def all_metafeatures(self) -> list[Any]:
        return list(self.family.metafeatures().values())

    def runs(self, inputs: list[tuple[str, Any]] | None = None) -> Iterator[tuple[str, Any, Any, str | None]]:
        """(label, ChoiceMaker, input, forced Option): the trained ChoiceMaker on every input
        (default: `inputs()`), then every Option forced (alone in a ChoiceSpec with all
        metafeatures) on every input of a segment it handles."""
        inputs = self.inputs() if inputs is None else inputs
        for label, data in inputs:
            yield f"the trained ChoiceMaker on the {label}", self.choicemaker, data, None
        for label, data in inputs:
            segment = self.family.segment_of(data)
            for option in self.setup.options:
                if segment in self.family.segments(option):
                    spec = ChoiceSpec(self.family, {option.name: option}, self.all_metafeatures(),
                                      self.setup.mf_share)
                    yield f"Option {option.name} forced on the {label}", spec, data, option.name


def run_dispatch(subject: Subject, choicemaker: Any, data: Any, forced: str | None, events: list[Event],
                 charge: Callable[[Any, str], None], noise: Any, option_noise: Callable[[str], Any],
                 epsilon: Any = None) -> Any:
    """One dispatch: the default runtime for a trained ChoiceMaker (the public call), a
    `RecordingRuntime` choosing `forced` for a ChoiceSpec. `option_noise` records a ("run", name)
    event when the dispatch asks for the chosen Option's noise."""
    budget = subject.budget if epsilon is None else epsilon

    def recorded_option_noise(name: str) -> Any:
        events.append(("run", name))
        return option_noise(name)

    if forced is None:
        return dispatch(choicemaker, data, budget, noise=noise, charge=charge, option_noise=recorded_option_noise,
                        unit=subject.unit)
    runtime = RecordingRuntime(subject.family, noise, charge, recorded_option_noise, events, forced)
    return dispatch(choicemaker, data, budget, runtime=runtime, unit=subject.unit)


def exact_randomness(seed: int) -> Callable[[int], Any]:
    return lambda offset: Randomness(seed + offset)


def noise_kinds(subject: Subject) -> list[tuple[str, Callable[[int], Any]]]:
    """The sources a dispatch is checked with: exact seeded noise (what releases use) and the
    family's simulation noise (what training uses)."""
    family, seed = subject.family, subject.seed
    return [("exact noise", exact_randomness(seed)),
            ("simulation noise", lambda offset: family.simulation_noise(seed + offset))]


def recorded_dispatch(subject: Subject, choicemaker: Any, data: Any, forced: str | None,
                      make_noise: Callable[[int], Any], remaining: Fraction | None = None,
                      epsilon: Any = None) -> tuple[Any, BaseException | None, list[Event]]:
    """A dispatch with recording noise sources ("features", "option") and a `Ledger`
    holding `remaining`; returns (result or None, exception or None, events)."""
    events: list[Event] = []
    noise = RecordingNoise(make_noise(0), events, "features")
    try:
        like = subject.budget if epsilon is None else as_budget(epsilon)
        result = run_dispatch(subject, choicemaker, data, forced, events, Ledger(events, remaining, like), noise,
                              lambda name: RecordingNoise(make_noise(1), events, "option"), epsilon)
        return result, None, events
    except Exception as error:  # noqa: BLE001 - the checks judge the exception
        return None, error, events


def _describe_events(events: list[Event], limit: int = 14) -> str:
    shown = [" ".join(str(p) for p in e) for e in events[:limit]]
    return "; ".join(shown) + (f"; ... ({len(events)} events)" if len(events) > limit else "")


# ====================================================================================== the checks
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
    require(len(family.config_columns) >= 2, family, DECLARATIONS,
            "config_columns must name at least the task and its LODO group")


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
        require(recorded == planned, family, PLANNED_CHARGES,
                lambda: f"{label}: charges {recorded} differ from the plan {planned}")
        total = sum(recorded.values(), zero_like(subject.budget))
        require(total == subject.budget, family, PLANNED_CHARGES,
                lambda: f"{label}: charges add up to {total}, not {subject.budget}")
        segment = family.segment_of(data)
        read = choicemaker.metafeatures_for(segment)
        expected = plan_budget(read, subject.budget, choicemaker.metafeature_share(segment))
        option_part = expected.pop("option")
        expected[f"option {result.choice}"] = option_part
        require(planned == expected, family, PLANNED_CHARGES,
                lambda: f"{label}: budget_split {planned} is not the engine's plan {expected}")
        require(recorded.get(f"option {result.choice}") == option_part, family, PLANNED_CHARGES,
                f"{label}: Option {result.choice} was not charged its part {option_part} in full")
        traced = [(d, a) for d, a in made]
        require(list(result.trace.charges) == traced, family, PLANNED_CHARGES,
                lambda: f"{label}: the trace's charges {result.trace.charges} differ from the ledger's {traced}")
        runs = [e for e in events if e[0] == "run"]
        require(len(runs) >= 1 and all(e[1] == result.choice for e in runs), family, PLANNED_CHARGES,
                lambda: f"{label}: expected Option {result.choice} to run once, saw {runs}")


def audit_order(family: Family, metafeatures: Mapping[str, Any], events: list[Event], label: str) -> None:
    """Fail unless every draw follows a charge that pays for it (see `check_charge_before_draw`)."""
    charged: set[str] = set()
    current: tuple[str, str] | None = None
    for index, event in enumerate(events):
        kind = event[0]
        where = lambda: f"{label}: event {index} of: {_describe_events(events)}"  # noqa: E731
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
                    lambda: f"{case}: something happened after the refused charge: {_describe_events(events)}")
            if remaining == 0:
                require(not draws(events), family, OVER_BUDGET,
                        lambda: f"{case}: drew noise with nothing paid: {_describe_events(events)}")


def check_budget_guard(subject: Subject) -> None:
    """A `BudgetGuard` forwards the parts of a plan of the family's metafeatures (they fit
    exactly), and refuses, without forwarding, one more charge of 10^-30 and a single charge
    above its epsilon."""
    family = subject.family
    total = subject.budget
    plan = plan_budget(subject.all_metafeatures(), total, subject.setup.mf_share)
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


def same_release(a: Any, b: Any, depth: int = 8) -> bool:
    """Whether two releases are equal, structurally: arrays and numbers elementwise (NaN equal
    to NaN), containers item by item, NumPy generators by state, functions by qualified name,
    other objects by type and attributes (`depth` levels down)."""
    if a is b:
        return True
    if depth < 0:
        return type(a) is type(b)
    numeric = (np.ndarray, np.number, float, int)
    if isinstance(a, numeric) and isinstance(b, numeric) and not isinstance(a, bool) and not isinstance(b, bool):
        a_array, b_array = np.asarray(a), np.asarray(b)
        if a_array.dtype == object or b_array.dtype == object:
            return a_array.shape == b_array.shape and all(
                same_release(x, y, depth - 1) for x, y in zip(a_array.ravel(), b_array.ravel()))
        return a_array.shape == b_array.shape and np.array_equal(a_array, b_array, equal_nan=a_array.dtype.kind == "f")
    if type(a) is not type(b):
        return False
    if isinstance(a, (str, bytes, bool, Fraction, type(None), type)):
        return a == b
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_release(a[k], b[k], depth - 1) for k in a)
    if isinstance(a, (list, tuple, frozenset, set)):
        if isinstance(a, (set, frozenset)):
            return a == b
        return len(a) == len(b) and all(same_release(x, y, depth - 1) for x, y in zip(a, b))
    if isinstance(a, np.random.Generator):
        return same_release(a.bit_generator.state, b.bit_generator.state, depth - 1)
    if callable(a) and not hasattr(a, "__dict__") or inspect.isfunction(a) or inspect.ismethod(a):
        return getattr(a, "__qualname__", None) == getattr(b, "__qualname__", None)
    state_a, state_b = _state(a), _state(b)
    if state_a is None or state_b is None:
        try:
            return bool(a == b)
        except Exception:  # noqa: BLE001 - not comparable
            return False
    return same_release(state_a, state_b, depth - 1)


def _state(obj: Any) -> dict | None:
    """An object's attributes (its `__dict__` and `__slots__`), or None if it has neither."""
    state = dict(vars(obj)) if hasattr(obj, "__dict__") else {}
    for klass in type(obj).__mro__:
        for slot in getattr(klass, "__slots__", ()):
            if hasattr(obj, slot):
                state[slot] = getattr(obj, slot)
    return state if state or hasattr(obj, "__dict__") else None


def check_seed_determinism(subject: Subject) -> None:
    """Two dispatches with equally seeded noise (exact, and the family's simulation noise)
    give the same choice, metafeatures, predictions, plan, trace, release and draws."""
    family = subject.family
    for noise_label, make_noise in noise_kinds(subject):
        for label, choicemaker, data, forced in subject.runs():
            outcomes = [recorded_dispatch(subject, choicemaker, data, forced, make_noise) for _ in range(2)]
            (first, error, events), (second, error2, events2) = outcomes
            case = f"{label} with {noise_label}"
            require(error is None and error2 is None, family, SEED_DETERMINISM,
                    lambda: f"{case}: the dispatch failed: {error!r} / {error2!r}")
            for what in ("choice", "features", "predictions", "budget_split", "trace"):
                require(getattr(first, what) == getattr(second, what), family, SEED_DETERMINISM,
                        lambda: f"{case}: the {what} differs: {getattr(first, what)} / {getattr(second, what)}")
            require(same_release(first.result, second.result), family, SEED_DETERMINISM,
                    lambda: f"{case}: the releases differ: {family.describe(first.result)} / "
                            f"{family.describe(second.result)}")
            require(events == events2, family, SEED_DETERMINISM, f"{case}: the draws and charges differ")


def check_experience_determinism(subject: Subject) -> None:
    """The experience table of the tiny setup, built twice in this process with fresh caches,
    is identical except for the `seconds` column (and has rows)."""
    family, setup = subject.family, subject.setup
    tables = []
    for name in ("first", "second"):
        folder = Path(tempfile.mkdtemp(prefix=f"experience-{name}-", dir=subject.workdir))  # a fresh cache
        tables.append(experience_table(family, setup.options, setup.metafeatures, setup.corpus, setup.grid,
                                       setup.mf_share, cache_dir=folder, n_jobs=1, progress=False))
    first, second = (t.drop(columns=["seconds"]) for t in tables)
    require(len(first) > 0, family, EXPERIENCE_DETERMINISM, "the tiny corpus gave no experience")
    try:
        pd.testing.assert_frame_equal(first, second, check_exact=True)
    except AssertionError as difference:
        raise fail(family, EXPERIENCE_DETERMINISM, f"two builds differ: {difference}") from None


def check_neighbour_rule(subject: Subject) -> None:
    """On the family's two neighbouring public inputs: a dispatch whose charge callback refuses
    the first charge fails identically on both (exception type and message, and the charge it
    asked for) and draws nothing; the public metafeatures (free, reading nothing released) give
    identical values on both without drawing; the public context is identical."""
    family = subject.family
    first, second = family.neighbouring_inputs(subject.seed)
    require(family.segment_of(first) == family.segment_of(second), family, NEIGHBOUR_RULE,
            "the neighbours fall in different segments")
    for label, choicemaker, _, forced in subject.runs([("neighbours", first)]):
        outcomes = []
        for data in (first, second):
            result, error, events = recorded_dispatch(subject, choicemaker, data, forced,
                                                      exact_randomness(subject.seed), Fraction(0))
            require(result is None and error is not None, family, NEIGHBOUR_RULE,
                    f"{label}: a dispatch whose first charge is refused released a result")
            require(not draws(events), family, NEIGHBOUR_RULE,
                    lambda: f"{label}: drew noise before its refused first charge: {_describe_events(events)}")
            outcomes.append((type(error), str(error), events))
        require(outcomes[0] == outcomes[1], family, NEIGHBOUR_RULE,
                lambda: f"{label}: the neighbours fail differently: "
                        f"{outcomes[0][0].__name__}: {outcomes[0][1]} ({_describe_events(outcomes[0][2])}) / "
                        f"{outcomes[1][0].__name__}: {outcomes[1][1]} ({_describe_events(outcomes[1][2])})")
    free = public_metafeatures(subject.all_metafeatures())
    values = []
    for data in (first, second):
        events: list[Event] = []
        measured = measure_features(family, free, data, subject.budget, 0.0,
                                    RecordingNoise(Randomness(subject.seed), events, "features"))
        require(not draws(events), family, NEIGHBOUR_RULE,
                lambda: f"public metafeatures drew noise: {_describe_events(events)}")
        values.append(measured.features)
    require(values[0] == values[1], family, NEIGHBOUR_RULE,
            lambda: f"public metafeatures differ on neighbours: {values[0]} / {values[1]}")
    contexts = [family.context(d, as_budget(0.5), subject.budget) for d in (first, second)]
    require(contexts[0] == contexts[1] and dict(contexts[0].facts) == dict(contexts[1].facts), family,
            NEIGHBOUR_RULE, lambda: f"the public context differs on neighbours: {contexts[0]} / {contexts[1]}")


def check_pickling(subject: Subject) -> None:
    """The family, its Options and metafeatures and the trained ChoiceMaker survive pickle and
    cloudpickle; fingerprints are kept; the unpickled ChoiceMaker predicts and chooses the same
    on training rows of every segment, and an equally seeded dispatch gives the same result."""
    import cloudpickle

    family, choicemaker = subject.family, subject.choicemaker
    parts = {"the family": family, "its Options": dict(family.options()),
             "its metafeatures": dict(family.metafeatures()), "the trained ChoiceMaker": choicemaker}
    for pickler in (pickle, cloudpickle):
        copies = {}
        for what, obj in parts.items():
            try:
                copies[what] = pickle.loads(pickler.dumps(obj))
            except Exception as error:  # noqa: BLE001 - report any failure to pickle
                raise fail(family, PICKLING, f"{pickler.__name__} cannot send {what}: {error!r}") from None
        require(copies["the family"].fingerprint == family.fingerprint, family, PICKLING,
                f"{pickler.__name__}: the family's fingerprint changed")
        for name, option in family.options().items():
            require(fingerprint(copies["its Options"][name]) == fingerprint(option), family, PICKLING,
                    f"{pickler.__name__}: Option {name}'s fingerprint changed")
        for name, metafeature in family.metafeatures().items():
            require(fingerprint(copies["its metafeatures"][name]) == fingerprint(metafeature), family, PICKLING,
                    f"{pickler.__name__}: metafeature {name}'s fingerprint changed")
        clone = copies["the trained ChoiceMaker"]
        experience = choicemaker.experience
        for segment, model in choicemaker.models.items():
            rows = experience if family.segment_column is None else \
                experience[experience[family.segment_column] == segment]
            rows = rows[rows["mode"] == choicemaker.modes[segment]].head(12)
            for _, row in rows.iterrows():
                features = {name: float(row[f"mf_{name}"]) for name in model.features}
                require(clone.choose(features, segment) == choicemaker.choose(features, segment), family, PICKLING,
                        f"{pickler.__name__}: the unpickled ChoiceMaker chooses differently on {features}")
        for label, data in subject.inputs():
            original = recorded_dispatch(subject, choicemaker, data, None, exact_randomness(subject.seed))
            copied = recorded_dispatch(subject, clone, data, None, exact_randomness(subject.seed))
            require(original[1] is None and copied[1] is None, family, PICKLING,
                    lambda: f"{pickler.__name__}, {label}: a dispatch failed: {original[1]!r} / {copied[1]!r}")
            require(original[0].choice == copied[0].choice and same_release(original[0].result, copied[0].result),
                    family, PICKLING, f"{pickler.__name__}, {label}: the unpickled ChoiceMaker dispatches differently")


UNITS = "every unit it declares, and refusal of the others"
MEASURES = "every measure it declares, and refusal of the others"
ZCDP_RHO = Fraction(7, 100)  # a rho that no float holds exactly
UNIT_EXAMPLES = {"row": ROW, "entity": entity("key"), "replace_one": REPLACE_ONE}


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
                    lambda: f"the refusal of the unit {unit} came after: {_describe_events(events)}")
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
    require(set(family.measures) <= {"pure", "approximate", "zcdp"} and "pure" in family.measures, family,
            MEASURES, f"measures {family.measures} must include 'pure' and be among pure, approximate, zcdp")
    registry = {m.name: m for m in subject.all_metafeatures()}
    for measure in ("pure", "approximate", "zcdp"):
        budget = budget_in(measure, subject)
        under = dataclasses.replace(subject, budget=budget)
        if measure not in family.measures:
            result, error, events = recorded_dispatch(under, subject.choicemaker, subject.inputs()[0][1], None,
                                                      exact_randomness(subject.seed))
            require(isinstance(error, UnsupportedMeasure) and not events, family, MEASURES,
                    lambda: f"a {measure} budget was not refused before anything happened: {error!r}, "
                            f"{_describe_events(events)}")
            continue
        for label, choicemaker, data, forced in under.runs():
            case = f"{label} with a {measure} budget {budget}"
            result, error, events = recorded_dispatch(under, choicemaker, data, forced, exact_randomness(subject.seed))
            require(error is None, family, MEASURES, lambda: f"{case}: the dispatch failed: {error!r}")
            made = dict(charges(events))
            segment = family.segment_of(data)
            plan = plan_budget(choicemaker.metafeatures_for(segment), budget, choicemaker.metafeature_share(segment))
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
                                                  f"{_describe_events(refused_events)} ({refused_error!r})")


CHECKS: tuple[Callable[[Subject], None], ...] = (
    check_declarations, check_planned_charges, check_charge_before_draw, check_over_budget_refused,
    check_budget_guard, check_seed_determinism, check_experience_determinism, check_neighbour_rule,
    check_pickling, check_units, check_measures)


def check_family(subject: Subject) -> None:
    """Run every check on `subject` (the first failure raises)."""
    for check in CHECKS:
        check(subject)


def make_subject(family: Family, workdir: Path, seed: int = 0, setup: TinySetup | None = None) -> Subject:
    """Train `family` on its tiny setup (cache under `workdir/cache`) and bundle a `Subject`."""
    setup = setup or tiny_setup(family)
    choicemaker = train_tiny(family, setup, workdir / "cache")
    return Subject(family, choicemaker, setup, workdir, seed)


__all__ = ["CHECKS", "Subject", "TinySetup", "check_family", "make_subject", "tiny_setup", "train_tiny",
           "RecordingNoise", "RecordingRuntime", "Ledger", "OutsideBudgetExceeded"]
