"""The setup of the family conformance checks: what they observe, and what they run on.

The checks (`jostle.choicemaker.conformance`) observe a dispatch from outside, as an author of
a family cannot fake: noise sources that record every call made on them (`RecordingNoise`), a
runtime that records when each metafeature is measured and each Option runs
(`RecordingRuntime`), and a charge callback standing for an outside accountant (`Ledger`),
all writing to one list of events, so the order of charges and draws can be audited.

They run on a `Subject`: a family, a ChoiceMaker trained on a tiny public setup of it
(`tiny_setup`: a few of the cheapest tasks of its default corpus, its grid cut to one
configuration, trained in this process), the setup, a work folder and a seed. A failed check
raises `ConformanceError` (an `AssertionError`) whose message starts with `[<family>] <property>:`.

Nothing here reads private data beyond what a dispatch reads: the inputs are the family's own
public samples and neighbouring inputs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Hashable, Iterator, Mapping

import numpy as np

from jostle.choicemaker.budgets import as_budget, in_measure
from jostle.choicemaker.private_dispatch import ChoiceSpec, Runtime, dispatch
from jostle.choicemaker.engine import TrainedChoiceMaker, train
from jostle.choicemaker.family import Family
from jostle.privacy.measures import Budget, RhoZCDPBudget
from jostle.privacy.noise import Randomness
from jostle.privacy.units import REPLACE_ONE, ROW, PrivacyUnit, entity

# An example unit of each kind a family may declare (`Family.units`).
UNIT_EXAMPLES = {"row": ROW, "entity": entity("key"), "replace_one": REPLACE_ONE}

EPSILON = Fraction(7, 10)  # a budget that no float holds exactly: the sums must be rational
ZCDP_RHO = Fraction(7, 100)  # a rho that no float holds exactly (families without pure budgets)
MF_SHARE = 0.1

# The properties, as the first words of a failure's message.
DECLARATIONS = "declarations"
PLANNED_CHARGES = "planned charges equal the ledger total"
CHARGE_BEFORE_DRAW = "a charge before every draw"
OVER_BUDGET = "an over-budget request is refused with nothing released"
BUDGET_GUARD = "the budget guard refuses before forwarding"
SEED_DETERMINISM = "seed determinism"
EXPERIENCE_DETERMINISM = "seed determinism of the experience table"
NEIGHBOUR_RULE = "the zero-spend neighbour rule"
PICKLING = "pickling for parallel training"
UNITS = "every unit it declares, and refusal of the others"
MEASURES = "every measure it declares, and refusal of the others"


class ConformanceError(AssertionError):
    """A family fails a conformance check: `[family] property: detail`.

    Attributes:
        family: The family's name.
        property: The property it breaks (one of the constants above).
        detail: What was observed.
    """

    def __init__(self, family: str, prop: str, detail: str) -> None:
        super().__init__(f"[{family}] {prop}: {detail}")
        self.family = family
        self.property = prop
        self.detail = detail


def fail(family: Family, prop: str, detail: str) -> ConformanceError:
    """The error of a failed check: `[family] property: detail`."""
    return ConformanceError(family.name, prop, detail)


def require(condition: bool, family: Family, prop: str, detail: str | Callable[[], str]) -> None:
    """Raise `fail(...)` unless `condition` (a callable detail is built only on failure)."""
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
    model_kinds: tuple[str, ...] = ("forest_regret",)


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
                 cache_dir=cache_dir, n_jobs=1, progress=False, model_kinds=setup.model_kinds)


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
    unit: Any = None  # the privacy unit the dispatches are made under (default: row, `subject_unit`)

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


def describe_events(events: list[Event], limit: int = 14) -> str:
    shown = [" ".join(str(p) for p in e) for e in events[:limit]]
    return "; ".join(shown) + (f"; ... ({len(events)} events)" if len(events) > limit else "")


def subject_unit(family: Family) -> PrivacyUnit | None:
    """The unit the checks dispatch under: row (None) when the family declares it, else an
    example of the first unit it declares (a family of entity data only is checked on entity
    data)."""
    if not family.units or ROW.kind in family.units:
        return None
    return UNIT_EXAMPLES.get(family.units[0])


def subject_budget(family: Family) -> Any:
    """The budget the checks dispatch with: the pure `EPSILON` (None: the default) when the
    family declares pure budgets, else the rho `ZCDP_RHO` (a family of Gaussian mechanisms only
    is checked under zCDP)."""
    return None if "pure" in family.measures else RhoZCDPBudget(ZCDP_RHO)


def make_subject(family: Family, workdir: Path, seed: int = 0, setup: TinySetup | None = None) -> Subject:
    """Train `family` on its tiny setup (cache under `workdir/cache`) and bundle a `Subject`
    dispatching under `subject_unit(family)` with `subject_budget(family)`."""
    setup = setup or tiny_setup(family)
    choicemaker = train_tiny(family, setup, workdir / "cache")
    return Subject(family, choicemaker, setup, workdir, seed, budget=subject_budget(family),
                   unit=subject_unit(family))
