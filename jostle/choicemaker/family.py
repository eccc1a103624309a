"""The family interface: what a learner family tells the one ChoiceMaker engine.

A *family* is a kind of private learning task (histograms of counts answering a workload;
classification trees learned from a table; later rule lists, ILP, redescriptions, SuLQ learners)
together with the Options that solve it. The engine (`experience`, `model`, `engine`,
`dispatch`) is written once and reads a family only through this interface:

  * what an Option consumes and produces: `run_option(option, data, budget, noise, released)`
    runs one Option privately on the family's input (`data`) with a typed budget (a pure
    epsilon `Budget` or a `RhoZCDPBudget`, `jostle.choicemaker.budgets`) and returns its result;
  * what an Option costs: `planned_cost(option, budget)`, what it will charge when given
    `budget` (default: the Option's own `planned_cost(budget)`, else `budgets.pure_cost`: its
    mechanisms are pure-epsilon ones run at the epsilon that fits in the budget); the engine
    checks it against the plan before anything is charged;
  * which privacy units and measures it supports: `units` (kinds of
    `jostle.privacy.units.PrivacyUnit`) and `measures` ("pure", "zcdp"); a call under another
    is refused before any charge (`check_unit`, `check_measure`);
  * its error measures (a hook, not a list in the language): `error_measures()` names every
    measure it can score with, `with_error(name)` is the family scoring with one of them, and
    `error(instance, result)` scores a result on a public training instance with
    `error_measure` (lower is better; `error_name` says what it is). A ChoiceMaker across
    families uses a measure every family in it offers, by name: a name means one thing;
  * its public training tasks: `default_corpus()`, `pieces(task, grid)` (the cache units) and
    `instances(task, piece, grid)` (seeded public inputs drawn from a task);
  * its metafeatures: `metafeatures()` (public ones and noisy ones; noisy ones sharing one
    release name a `release` and are charged once), `default_metafeatures`, and
    `context(data, option_budget, total_budget)`, the public facts a metafeature may read;
  * its Options: `options()` and `segments(option)` / `segment_of(data)` (histograms keep one
    meta-model per dimensionality, other families one for all inputs);
  * how measuring is judged worth its budget (`payoff_rule`, see `engine`), which column of its
    experience is the leave-one-dataset-out group (`group_column`) and which products of its
    metafeatures the meta-model reads besides them (`meta_input_products`);
  * how a result prints: `describe(result)`.

Families are discovered, not registered (`families.discover`): every package under
`jostle.learners` with a `family` module exposing `FAMILY` is one. A family's language values
live in its `language` module, which the language layer imports by name.

Every part states its cost before anything runs: the plan (`measurement.plan_budget`) gives
each noisy metafeature unit and the chosen Option an exact part of the call's budget, in its
measure; each part states what it will charge for it (its planned cost: for a pure part e, e
itself, since an Option run with budget e is e-DP and its privacy map is the identity, as in
OpenDP's measurements; for a rho part r, the pure epsilon within r), the engine checks that cost
against the part before the charge, and the dispatch's charges are the planned costs, exactly.
"""

from __future__ import annotations

import hashlib
import zlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Hashable, Iterable, Mapping, Protocol, Sequence, runtime_checkable

from jostle.choicemaker.budgets import as_budget, measure_of, pure_cost, pure_epsilon_within
from jostle.privacy.budget import floor_float
from jostle.privacy.measures import AnyBudget
from jostle.privacy.units import ROW, PrivacyUnit


class UnsupportedUnit(ValueError):
    """A call on data under a privacy unit its family does not support (nothing was charged)."""


class UnsupportedMeasure(ValueError):
    """A call with a budget in a measure its family does not support (nothing was charged)."""


class OverstatedCost(ValueError):
    """An Option's or metafeature's planned cost exceeds its part of the plan (nothing was charged)."""


@runtime_checkable
class Option(Protocol):
    """An algorithm the ChoiceMaker may choose: a name and a fingerprint (for the cache).

    The family's `run_option` knows how to run it. An Option may state its cost,
    `planned_cost(budget) -> AnyBudget` (what it charges when given `budget`); without one the
    family's `planned_cost` applies.
    """

    name: str

    @property
    def fingerprint(self) -> str: ...


@runtime_checkable
class Metafeature(Protocol):
    """A named summary of the family's input.

    Attributes:
        name: Feature name (an experience column `mf_<name>`, a meta-model input).
        cost: True if it reads the private data and must be given epsilon.
        release: Name of a shared noisy release it post-processes ("" for none): metafeatures
            with the same release are one budget unit, charged once per dispatch.
        requires: Names of metafeatures measured earlier in the same call that it post-processes.
    """

    name: str
    cost: bool

    def measure(self, data: Any, epsilon_mf: float, noise: Any, context: Any) -> float: ...


@dataclass(frozen=True)
class Instance:
    """One public training input drawn from a corpus task.

    Attributes:
        columns: Experience-table columns identifying it (the family's `config_columns`,
            its `segment_column`, and `rep`).
        data: The input the Options and metafeatures read (public).
        budget: The whole budget of the simulated ChoiceMaker call (a number is read as a pure
            epsilon, `budgets.as_budget`).
        seed_parts: Text parts of the seeds of its noise (the engine appends the mode and
            "features" or the Option's name), so a rerun draws the same noise.
        evaluation: What `error` scores a result against (e.g. the workload, the test rows).
    """

    columns: Mapping[str, Any]
    data: Any
    budget: AnyBudget
    seed_parts: tuple
    evaluation: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "budget", as_budget(self.budget))

    @property
    def epsilon(self) -> float:
        """The pure epsilon of the call's budget, as a float (what the grids are stated in)."""
        return float(pure_epsilon_within(self.budget))


@dataclass(frozen=True)
class MetafeatureContext:
    """Public facts a metafeature may read during one measurement.

    Attributes:
        budget: The part of the budget the chosen Option will run with (public; a number is
            read as a pure epsilon).
        total_budget: The whole budget of the ChoiceMaker call (public).
        released: Metafeatures released earlier in the same call (post-processing may use them).
        releases: Shared releases made during this measurement (release key -> noisy values);
            each is released once and charged once; a fresh context starts empty.
        facts: Family-specific public facts (e.g. a shape of the input), read by the family's
            own metafeatures.
    """

    budget: AnyBudget
    total_budget: AnyBudget = 0
    released: dict = field(default_factory=dict, compare=False, repr=False)
    releases: dict = field(default_factory=dict, compare=False, repr=False)
    facts: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "budget", as_budget(self.budget))
        object.__setattr__(self, "total_budget", as_budget(self.total_budget))

    @property
    def epsilon(self) -> float:
        """The pure epsilon the chosen Option runs at (the largest float not above it): what the
        `epsilon` metafeature reports, in every measure, so a meta-model trained on epsilons reads it."""
        return floor_float(pure_epsilon_within(self.budget))

    @property
    def total_epsilon(self) -> float:
        """The pure epsilon of the whole call's budget, as the nearest float."""
        return float(pure_epsilon_within(self.total_budget))

    @property
    def measure(self) -> str:
        """The measure of the call's budget ("pure", "zcdp")."""
        return measure_of(self.total_budget)


class Family(ABC):
    """A learner family, as the ChoiceMaker engine sees it (see the module docstring).

    Class attributes:
        name: The family's name (its folder under `jostle.learners`).
        task: The language's name for its corpora and Options. Several families may serve one
            task (`families.for_task`): they read the same public inputs, and a ChoiceMaker may
            choose among their Options (`combined.CombinedFamily`).
        error_measure: The name of the error measure `error` scores with (one of
            `error_measures()`; `with_error` gives the family scoring with another).
        error_name: What `error` measures, for reports.
        config_columns: Experience columns that identify a configuration; errors are averaged
            over its repetitions (the first is the task's name, the second its LODO group,
            `group_column`).
        meta_input_products: Pairs (a, b) of metafeature names whose log10(max(a, 1) * b) the
            meta-model reads as one more input when it reads both (e.g. a noisy size times the
            budget: the signal-to-noise product most choices hinge on, which axis-aligned trees
            cannot form from the two columns; post-processing of released values).
        segment_column: Experience column of the segment (None: one meta-model for all inputs).
        modes: Experience modes: "measured" (metafeatures at their share, Option with the rest)
            and, for the "paired" payoff rule, "public" (free metafeatures only, whole budget).
        errors_scale_as_inverse_epsilon: Whether its Options' errors scale about as 1 / epsilon
            (Laplace mechanisms): predicted errors are then interpolated between the corpus'
            budgets and follow 1 / epsilon outside them (`model.FittedMetaModel.epsilon_column`).
        payoff_rule: "credit" (errors scale as 1/epsilon: best-fixed's regret is credited the
            share it saves) or "paired" (both modes are validated and measuring is kept only if
            it is clearly better); see `engine.decide_measuring`.
        regret_measure: How the meta-model scores an Option against the best on a configuration
            (`model.regrets`): "ratio" (its error over the best's, DPComp's, for errors with no
            natural scale) or "difference" (1 + its error minus the best's, for errors in [0, 1]
            such as 1 - accuracy, whose differences are what a user loses).
        default_metafeatures: The metafeatures a ChoiceMaker of this family reads by default.
        language_module: The module holding the family's language values.
        seconds_per_piece: Rough time of one experience piece on one core, to tell a user how
            long training will take.
        units: The kinds of privacy unit ("row", "entity", "replace_one") whose data it may
            learn from; a call on data under another unit is refused before any charge.
        measures: The budget measures it may be given ("pure", "zcdp"); its mechanisms are
            pure-epsilon ones, run at the epsilon within a rho (`budgets.pure_epsilon_within`).
    """

    name: str = ""
    task: str = ""
    error_measure: str = "error"
    error_name: str = "error"
    config_columns: tuple[str, ...] = ()
    meta_input_products: tuple[tuple[str, str], ...] = ()
    segment_column: str | None = None
    modes: tuple[str, ...] = ("measured",)
    payoff_rule: str = "credit"
    regret_measure: str = "ratio"
    errors_scale_as_inverse_epsilon: bool = False
    default_metafeatures: tuple[str, ...] = ()
    language_module: str = ""
    seconds_per_piece: float = 5.0  # rough time of one experience piece on one core (for messages)
    units: tuple[str, ...] = (ROW.kind,)
    measures: tuple[str, ...] = ("pure", "zcdp")
    private_score: Callable[[Any, Any, Any], tuple[float, float]] | None = None
    """The private-selection hook (`jostle.choicemaker.selection`), None by default (no selection
    mode). A family opting in defines a method `private_score(option, data, output) -> (score,
    sensitivity)`: a score of an Option's released `output` on the private `data` (higher is
    better, e.g. minus the L1 distance of a histogram estimate to the counts), and the most one
    row added or removed can move it for this output, a public number (from the output and
    public facts only: it must be the same on neighbouring inputs). The engine adds Laplace noise
    of that scale before anyone sees the score."""

    # ------------------------------------------------------------------ experience layout and error measures
    @property
    def group_column(self) -> str:
        """The experience column of the leave-one-dataset-out group (the second config column)."""
        return self.config_columns[1]

    def error_measures(self) -> Mapping[str, str]:
        """Name -> description of every error measure the family scores with (default: its one)."""
        return {self.error_measure: self.error_name}

    def with_error(self, measure: str | None) -> "Family":
        """The family scoring with the error measure `measure` (itself when it already does, or
        for None): a copy whose `error_measure` is `measure`.

        Raises:
            KeyError: The family has no such measure.
        """
        if measure is None or measure == self.error_measure:
            return self
        measures = self.error_measures()
        if measure not in measures:
            raise KeyError(f"the {self.name} family has no error measure {measure!r}; it has "
                           f"{', '.join(measures)}")
        import copy

        other = copy.copy(self)
        other.error_measure = measure
        other.error_name = measures[measure]
        return other

    def option_error(self, option: Any, instance: Instance, result: Any) -> float:
        """The error of `option`'s result on a public training instance (default: `error`; a
        ChoiceMaker across families scores each Option with its own family's measure)."""
        return self.error(instance, result)

    def member_families(self) -> tuple["Family", ...]:
        """The families whose Options this one runs (itself; the members of a `CombinedFamily`,
        the lead first)."""
        return (self,)

    def option_family(self, option: Any) -> str:
        """The name of the family that runs `option` (this one; several in a `CombinedFamily`)."""
        return self.name

    @property
    def module_name(self) -> str:
        """The module defining the family (its shipped ChoiceMakers live next to it)."""
        return type(self).__module__

    # ------------------------------------------------------------------ units, measures and costs
    def supports_unit(self, unit: PrivacyUnit) -> bool:
        """Whether the family may learn from data under `unit` (matched by kind)."""
        return unit.kind in self.units

    def check_unit(self, unit: PrivacyUnit | None) -> PrivacyUnit:
        """`unit` (default: row) if the family supports it.

        Raises:
            UnsupportedUnit: It does not (called before anything is charged).
        """
        unit = ROW if unit is None else unit
        if not self.supports_unit(unit):
            raise UnsupportedUnit(
                f"the {self.name} family does not learn from data whose privacy unit is {unit} "
                f"({unit.describe()}); it supports {', '.join(self.units)}")
        return unit

    def check_measure(self, budget: AnyBudget) -> AnyBudget:
        """`budget` if its measure is one the family supports.

        Raises:
            UnsupportedMeasure: It is not (called before anything is charged).
        """
        measure = measure_of(budget)
        if measure not in self.measures:
            raise UnsupportedMeasure(
                f"the {self.name} family cannot run with a {measure} budget ({budget}); it takes "
                f"{' or '.join(self.measures)} budgets (a pure epsilon, or a rho in a zCDP program)")
        return budget

    def planned_cost(self, option: Any, budget: AnyBudget) -> AnyBudget:
        """What `option` charges when given `budget` (its own `planned_cost` if it states one;
        otherwise the pure epsilon within the budget, `budgets.pure_cost`)."""
        own = getattr(option, "planned_cost", None)
        return own(budget) if callable(own) else pure_cost(budget)

    def metafeature_share_at(self, share: Fraction, budget: AnyBudget) -> Fraction:
        """The share of `budget` its noisy metafeatures get when the ChoiceMaker was given `share`
        (default: `share`). A family may raise it where `share` of a small budget cannot tell
        what its choice hinges on (the histogram family's floor). The result must be a function
        of the public share and budget alone, in [share, 1): the plan (`measurement.plan_budget`)
        calls it before anything is charged, so it decides nothing from private data."""
        return share

    def metafeature_cost(self, metafeature: Any, budget: AnyBudget) -> AnyBudget:
        """What a noisy metafeature (or the shared release it post-processes) charges for its
        part: its own `planned_cost` if it states one, else the pure epsilon within the part."""
        own = getattr(metafeature, "planned_cost", None)
        return own(budget) if callable(own) else pure_cost(budget)

    # ------------------------------------------------------------------ Options and metafeatures
    @abstractmethod
    def options(self) -> Mapping[str, Any]:
        """Name -> built-in Option of the family."""

    @abstractmethod
    def metafeatures(self) -> Mapping[str, Any]:
        """Name -> built-in metafeature of the family."""

    def segments(self, option: Any) -> tuple[Hashable, ...]:
        """The segments an Option handles (default: the single segment None)."""
        return (None,)

    def segment_of(self, data: Any) -> Hashable:
        """The segment of an input (default: the single segment None)."""
        return None

    def segment_label(self, segment: Hashable) -> str:
        """How a segment reads in messages."""
        return "" if segment is None else str(segment)

    # ------------------------------------------------------------------ public training tasks
    @abstractmethod
    def default_corpus(self, options: Sequence[Any]) -> Sequence[Any]:
        """The bundled public tasks (each with `name`, `group` and `content_hash()`)."""

    @abstractmethod
    def default_grid(self) -> Any:
        """The default training grid (an object with `digest()`)."""

    def pieces(self, task: Any, grid: Any, options: Sequence[Any]) -> list[tuple[str, Any]]:
        """The cache units of one task: (label, piece) pairs (default: the whole task, once)."""
        return [("all", None)]

    def piece_options(self, task: Any, piece: Any, options: Sequence[Any]) -> list[Any]:
        """The Options that run on a piece (default: all of them)."""
        return list(options)

    def piece_cost(self, task: Any, piece: Any) -> float:
        """Rough relative cost of a piece, to schedule big ones first (default: equal)."""
        return 1.0

    @abstractmethod
    def instances(self, task: Any, piece: Any, grid: Any) -> Iterable[Instance]:
        """The public training inputs of a piece, seeded (same on every machine and run)."""

    # ------------------------------------------------------------------ running and scoring
    @abstractmethod
    def context(self, data: Any, option_budget: AnyBudget, total_budget: AnyBudget) -> MetafeatureContext:
        """The public facts the metafeatures of one measurement read."""

    def run(self, option: Any, data: Any, budget: AnyBudget, noise: Any, released: Mapping[str, float]) -> Any:
        """Run any Option of the family (what the engine calls): a built-in one through
        `run_option`; one written in Jostle (it has `run_in_language`) in a scratch interpreter
        on the family's language values of `data` (`<family>.language.training_arguments`)."""
        budget = as_budget(budget)
        runner = getattr(option, "run_in_language", None)
        if runner is not None:
            return runner(self, data, budget, noise)
        return self.run_option(option, data, budget, noise, released)

    def metafeature_input(self, data: Any) -> Any:
        """What the metafeatures read of an input (default: the input itself)."""
        return data

    @abstractmethod
    def run_option(self, option: Any, data: Any, budget: AnyBudget, noise: Any,
                   released: Mapping[str, float]) -> Any:
        """Run `option` on `data` with `budget` (its planned cost already charged by the caller).

        A family whose mechanisms are pure-epsilon ones runs at `run_epsilon(budget)`, the
        largest float not above the pure epsilon within the budget. `released` holds the metafeatures released in the same call; an Option may reuse them
        (post-processing). The result is the family's release (an estimate, a model).
        """

    @abstractmethod
    def error(self, instance: Instance, result: Any) -> float:
        """The error of a result on a public training instance (lower is better)."""

    def failed(self, result: Any) -> bool:
        """Whether a result is unusable (scored by `error` all the same)."""
        return False

    def simulation_noise(self, seed: int) -> Any:
        """The seeded, fast, NOT secure noise the Options draw from on public training data."""
        from jostle.privacy.noise import SimulationNoise

        return SimulationNoise(seed)

    @abstractmethod
    def neighbouring_inputs(self, seed: int) -> tuple[Any, Any]:
        """Two small PUBLIC inputs that are neighbours (one record added or removed), for the
        conformance suite's zero-spend neighbour rule and audits."""

    def describe(self, result: Any) -> str:
        """A short printout of a result."""
        return repr(result)

    def option_fingerprint(self, option: Any) -> str:
        """What the experience cache keys an Option on (default: its `fingerprint`)."""
        return fingerprint(option)

    @property
    def fingerprint(self) -> str:
        """Identity of the family's code for caches and shipped models (default: its source, and
        its error measure when it is not the class's own)."""
        text = f"{self.name}|{source_digest(type(self))}"
        return text if self.error_measure == type(self).error_measure else f"{text}|{self.error_measure}"


def run_epsilon(budget: Any) -> float:
    """The float a pure-epsilon mechanism given `budget` computes with: the largest float not
    above the exact pure epsilon within it (`budgets.pure_epsilon_within`), never more than its
    planned cost (`budgets.pure_cost`) charged."""
    return floor_float(pure_epsilon_within(as_budget(budget)))


def fingerprint(obj: Any) -> str:
    """Cache identity of an Option or metafeature: its `fingerprint` attribute if it has one,
    otherwise its name and the source of its `run`/`measure` method."""
    value = getattr(obj, "fingerprint", None)
    if isinstance(value, str):
        return value
    method = getattr(obj, "run", None) or getattr(obj, "measure", None)
    return f"{getattr(obj, 'name', repr(obj))}|{source_digest(method) if method else type(obj).__qualname__}"


def source_digest(obj: Any) -> str:
    """A short hash of the source of the module defining `obj` (its qualified name if unavailable).

    Hashing the module's source too makes caches notice edits to the helpers of an algorithm.
    """
    import inspect

    try:
        module = inspect.getmodule(obj)
        text = inspect.getsource(module) if module is not None else inspect.getsource(obj)
        text += getattr(obj, "__qualname__", "")
    except (OSError, TypeError):
        text = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', repr(obj))}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def stable_seed(*parts: Any) -> int:
    """A 32-bit seed from the parts' text (the same on every machine and run)."""
    return zlib.crc32("|".join(str(p) for p in parts).encode())


def float_fraction(value: Any) -> Fraction:
    """A budget as an exact rational: a float is its exact binary value (never more than the
    caller's own accountant holds). What a computation uses is the largest float not above a
    rational part (`floor_float`), so it never spends more than was charged."""
    return value if isinstance(value, Fraction) else Fraction(value)


def exact_share(value: Any) -> Fraction:
    """A share of a budget (a design choice, not a budget) as an exact rational: a float is read
    as its shortest decimal, so a share of 0.1 splits epsilon into exact tenths."""
    if isinstance(value, float):
        return Fraction(repr(value))
    return float_fraction(value)

