"""A toy learner family for testing the family interface itself, and broken copies of it.

The toy task: estimate the mean of numbers bounded in [0, 1] (privacy unit: one number added
or removed). The analyst states a public guess of how many numbers there are
(`MeanData.nominal_size`, e.g. from a schema), which may be wrong. Two Options:

  * `laplace_sum` ("Laplace on the sum"): the clamped sum plus Laplace(1 / epsilon)
    (sensitivity 1: one number in [0, 1] added or removed), divided by the public guess. It
    spends all of epsilon on the sum, and is good when the guess is right;
  * `count_and_sum` ("noisy count and clamped sum"): the vector (clamped sum, count) released
    with Laplace(2 / epsilon) on each entry (L1 sensitivity 2: one number moves the sum by at
    most 1 and the count by 1), then their ratio. It does not trust the guess.
One noisy metafeature, `size` (the count plus Laplace(1 / epsilon), sensitivity 1, divided by
the guess: how wrong the guess is) and two public ones (`epsilon`, `nominal_size`) let a
ChoiceMaker learn which Option wins where. The error is the absolute error of the estimate.
The corpus is a few generated tasks (Beta-distributed numbers, guesses right or off by a
factor); everything is public, small and fast, so it trains in about a second.

Every release goes through `jostle.privacy.safe_noise.release_vector`, so the toy is private
on an exact source (`jostle.privacy.noise.Randomness`) and fast on a simulation source.

The broken copies at the end each violate one rule of the conformance suite
(`jostle.choicemaker.conformance`); the suite's negative controls check that the matching check fails
on them (a check that cannot fail checks nothing).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from jostle.choicemaker.family import Family, Instance, MetafeatureContext, run_epsilon, source_digest, stable_seed
from jostle.privacy import safe_noise


# ---------------------------------------------------------------------------------- the input
class MeanData:
    """Numbers in [0, 1] (private) and the analyst's public guess of how many there are."""

    __slots__ = ("values", "nominal_size")

    def __init__(self, values: Any, nominal_size: int) -> None:
        self.values = np.asarray(values, dtype=float)
        self.nominal_size = int(nominal_size)

    def __reduce__(self) -> tuple:
        return MeanData, (self.values, self.nominal_size)

    def __repr__(self) -> str:  # never the values: only what is public
        return f"MeanData(nominal_size={self.nominal_size})"


def clamped_sum(data: MeanData) -> float:
    """The sum of the numbers clamped to [0, 1] (sensitivity 1)."""
    return float(np.clip(data.values, 0.0, 1.0).sum())


# ---------------------------------------------------------------------------------- Options
@dataclass(frozen=True)
class ToyOption:
    """An Option of the toy family: a name and how it releases a mean."""

    name: str
    description: str = ""

    def run(self, data: MeanData, epsilon: float, noise: Any) -> float:
        """An epsilon-DP estimate of the mean (the caller charged epsilon)."""
        if self.name == "laplace_sum":
            total = safe_noise.release_vector(noise, np.array([clamped_sum(data)]), 1.0, epsilon)[0]
            return float(np.clip(total / max(data.nominal_size, 1), 0.0, 1.0))
        total, count = safe_noise.release_vector(
            noise, np.array([clamped_sum(data), float(data.values.size)]), 2.0, epsilon)
        return float(np.clip(total / max(count, 1.0), 0.0, 1.0))

    @property
    def fingerprint(self) -> str:
        return f"{self.name}|{source_digest(type(self))}"


TOY_OPTIONS: dict[str, ToyOption] = {
    "laplace_sum": ToyOption("laplace_sum", "Laplace on the clamped sum, over the public size guess"),
    "count_and_sum": ToyOption("count_and_sum", "noisy count and clamped sum, their ratio"),
}


# ---------------------------------------------------------------------------------- metafeatures
@dataclass(frozen=True)
class ToyMetafeature:
    """A metafeature of the toy family (see `jostle.choicemaker.family.Metafeature`)."""

    name: str
    cost: bool
    sensitivity: str = ""
    release: str = ""
    requires: tuple[str, ...] = ()

    def measure(self, data: MeanData, epsilon_mf: float, noise: Any, context: MetafeatureContext) -> float:
        if self.name == "size":
            # The count: one number added or removed changes it by 1 (sensitivity 1).
            count = safe_noise.release_vector(noise, np.array([float(data.values.size)]), 1.0, epsilon_mf)[0]
            return float(max(count, 0.0) / max(data.nominal_size, 1))
        if self.name == "epsilon":
            return float(context.total_epsilon)  # public: the call's budget
        if self.name == "nominal_size":
            return float(np.log10(max(data.nominal_size, 1)))  # public: the analyst's guess
        raise KeyError(self.name)

    @property
    def fingerprint(self) -> str:
        return f"{self.name}|{self.cost}|{source_digest(type(self))}"


TOY_METAFEATURES: dict[str, ToyMetafeature] = {
    "size": ToyMetafeature("size", True, "1 (one number added or removed changes the count by 1)"),
    "epsilon": ToyMetafeature("epsilon", False),
    "nominal_size": ToyMetafeature("nominal_size", False),
}


# ---------------------------------------------------------------------------------- corpus and grid
@dataclass(frozen=True)
class ToyTask:
    """A public generated task: `n` numbers from Beta(a, b); the analyst guesses `nominal_size`."""

    name: str
    group: str
    n: int
    nominal_size: int
    a: float
    b: float

    def content_hash(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]

    def draw(self, rep: int) -> np.ndarray:
        rng = np.random.default_rng(stable_seed(self.content_hash(), rep, "data"))
        return rng.beta(self.a, self.b, self.n)


def toy_corpus() -> list[ToyTask]:
    """Eight tasks in four groups: small and large inputs, right and wrong size guesses."""
    tasks = []
    for index, (n, guess, a, b) in enumerate([(60, 60, 2.0, 5.0), (60, 150, 2.0, 5.0),
                                              (400, 400, 1.0, 1.0), (400, 150, 1.0, 1.0),
                                              (150, 150, 5.0, 2.0), (150, 60, 5.0, 2.0),
                                              (1000, 1000, 0.5, 0.5), (1000, 300, 0.5, 0.5)]):
        tasks.append(ToyTask(f"toy:{index}", f"toy-group:{index // 2}", n, guess, a, b))
    return tasks


@dataclass(frozen=True)
class ToyGrid:
    """The configurations each task runs on: budgets and seeded repetitions."""

    epsilons: tuple[float, ...] = (0.05, 0.5)
    repetitions: int = 3
    first_rep: int = 0

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------------- the family
class ToyFamily(Family):
    """Means of bounded numbers (see the module docstring)."""

    name = "toy"
    task = "mean"
    error_name = "absolute error of the mean"
    config_columns = ("task", "group", "epsilon")
    segment_column = None
    modes = ("measured",)
    payoff_rule = "credit"
    default_metafeatures = ("size", "epsilon", "nominal_size")
    language_module = ""

    def options(self) -> Mapping[str, Any]:
        return TOY_OPTIONS

    def metafeatures(self) -> Mapping[str, Any]:
        return TOY_METAFEATURES

    def default_corpus(self, options: Sequence[Any]) -> Sequence[Any]:
        return toy_corpus()

    def default_grid(self) -> ToyGrid:
        return ToyGrid()

    def instances(self, task: ToyTask, piece: Any, grid: ToyGrid) -> Iterable[Instance]:
        for rep in range(grid.first_rep, grid.first_rep + grid.repetitions):
            values = task.draw(rep)
            for epsilon in grid.epsilons:
                columns = {"task": task.name, "group": task.group, "epsilon": float(epsilon), "rep": rep}
                yield Instance(columns, MeanData(values, task.nominal_size), float(epsilon),
                               (task.content_hash(), rep, epsilon), float(values.mean()))

    def context(self, data: Any, option_budget: Any, total_budget: Any) -> MetafeatureContext:
        return MetafeatureContext(option_budget, total_budget, facts={"nominal_size": data.nominal_size})

    def run_option(self, option: Any, data: Any, budget: Any, noise: Any, released: Mapping[str, float]) -> Any:
        return option.run(data, run_epsilon(budget), noise)

    def error(self, instance: Instance, result: Any) -> float:
        return abs(float(result) - float(instance.evaluation))

    def neighbouring_inputs(self, seed: int) -> tuple[Any, Any]:
        values = np.random.default_rng(seed).beta(2.0, 3.0, 40)
        return MeanData(values, 40), MeanData(values[:-1], 40)  # one number removed

    def describe(self, result: Any) -> str:
        return f"mean estimate {float(result):.4g}"


FAMILY = ToyFamily()


# ---------------------------------------------------------------------------------- broken copies
# Each violates one rule; `tests/test_family_conformance.py` checks that the matching check fails.

@dataclass(frozen=True)
class PeekingMetafeature(ToyMetafeature):
    """Claims to be public (cost False) but releases a noisy sum of the private numbers."""

    def measure(self, data: MeanData, epsilon_mf: float, noise: Any, context: MetafeatureContext) -> float:
        return float(safe_noise.release_vector(noise, np.array([clamped_sum(data)]), 1.0, 1.0)[0])


class PeekingToy(ToyFamily):
    """A free metafeature that draws noise on the private data before anything is charged:
    breaks 'a charge before every draw', 'over budget: nothing released' and the neighbour rule."""

    name = "toy_peeks"
    default_metafeatures = ("peek", "size", "epsilon", "nominal_size")

    def metafeatures(self) -> Mapping[str, Any]:
        return {"peek": PeekingMetafeature("peek", False), **TOY_METAFEATURES}


@dataclass(frozen=True)
class SelfChargingOption(ToyOption):
    """Says it charges itself (as a Jostle-defined Option does), so the dispatch does not
    charge it; in Python nothing does, and it spends a budget no ledger records."""

    charges_itself: bool = True


class UnchargedToy(ToyFamily):
    """An Option that runs, and draws, without being charged: breaks 'planned charges equal
    the ledger total' and 'a charge before every draw'."""

    name = "toy_uncharged"

    def options(self) -> Mapping[str, Any]:
        return {"laplace_sum": SelfChargingOption("laplace_sum"), "count_and_sum": SelfChargingOption("count_and_sum")}


@dataclass(frozen=True)
class UnseededOption(ToyOption):
    """Adds noise from a fresh, unseeded generator instead of the noise source it is given."""

    def run(self, data: MeanData, epsilon: float, noise: Any) -> float:
        return super().run(data, epsilon, noise) + float(np.random.default_rng().normal(0.0, 1e-3))


class UnseededToy(ToyFamily):
    """Breaks seed determinism (of dispatches and of the experience table)."""

    name = "toy_unseeded"

    def options(self) -> Mapping[str, Any]:
        return {name: UnseededOption(name) for name in TOY_OPTIONS}


@dataclass(frozen=True)
class LockedOption(ToyOption):
    """Holds a lock, which neither pickle nor cloudpickle can send to a worker process."""

    lock: Any = field(default_factory=threading.Lock, compare=False)


class UnpicklableToy(ToyFamily):
    """Breaks pickling for parallel training."""

    name = "toy_unpicklable"

    def options(self) -> Mapping[str, Any]:
        return {name: LockedOption(name) for name in TOY_OPTIONS}


class LeakyErrorToy(ToyFamily):
    """Checks the private count before anything is charged (it wants an even count), and
    quotes it in its error: one neighbour gets as far as the first charge, the other fails
    with the count in its message (breaks the zero-spend neighbour rule)."""

    name = "toy_leaky_error"

    def context(self, data: Any, option_budget: Any, total_budget: Any) -> MetafeatureContext:
        if data.values.size % 2:
            raise ValueError(f"{data.values.size} numbers cannot be split in two halves")
        return super().context(data, option_budget, total_budget)


@dataclass(frozen=True)
class UnnamedCostOption:
    """An Option with no fingerprint (the cache cannot tell its versions apart)."""

    name: str

    def run(self, data: MeanData, epsilon: float, noise: Any) -> float:
        return TOY_OPTIONS[self.name].run(data, epsilon, noise)


class NoFingerprintToy(ToyFamily):
    """An Option without a fingerprint (breaks the declarations check)."""

    name = "toy_no_fingerprint"

    def options(self) -> Mapping[str, Any]:
        return {"laplace_sum": UnnamedCostOption("laplace_sum"), "count_and_sum": TOY_OPTIONS["count_and_sum"]}


class NoSensitivityToy(ToyFamily):
    """A noisy metafeature that does not state its sensitivity (breaks the declarations check)."""

    name = "toy_no_sensitivity"

    def metafeatures(self) -> Mapping[str, Any]:
        return {**TOY_METAFEATURES, "size": ToyMetafeature("size", True)}


class AnyUnitToy(ToyFamily):
    """Declares the row unit only but lets a call under any unit through (breaks the units check)."""

    name = "toy_any_unit"

    def check_unit(self, unit: Any) -> Any:
        from jostle.privacy.units import ROW

        return ROW if unit is None else unit


class EpsilonOnlyToy(ToyFamily):
    """Declares zCDP but reads its budget as an epsilon (`budget.epsilon`), as a family not made
    for typed budgets would: a rho budget fails after the metafeatures were charged (breaks the
    measures check)."""

    name = "toy_epsilon_only"

    def run_option(self, option: Any, data: Any, budget: Any, noise: Any, released: Mapping[str, float]) -> Any:
        return option.run(data, float(budget.epsilon), noise)


BROKEN_FAMILIES: tuple[ToyFamily, ...] = (PeekingToy(), UnchargedToy(), UnseededToy(), UnpicklableToy(),
                                          LeakyErrorToy(), NoFingerprintToy(), NoSensitivityToy(), AnyUnitToy(),
                                          EpsilonOnlyToy())
