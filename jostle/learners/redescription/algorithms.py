"""AltExpM, AltMCMC and MCMCTreePair: the three DP redescription miners and their budget splits.

Privacy unit: `entity(key)`. A neighbour has one entity more or fewer, in both views at once.

**Initial targets.** Each try picks an initial attribute uniformly among the attributes of both
views (public randomness) and uses its codes (categorical values, or public bins of a numeric
attribute) as classes. The first tree is built on the other view. Computing the target releases
nothing, and an entity's class is a function of its own row only.

**AltExpM / AltMCMC (Algorithm 1, after CARTwheels).** A try builds the first tree, then
alternates `alternations` (RMIter) times: a tree on the other view whose target is the leaf of
every entity in the previous tree (a released, public tree applied to the entity's own row),
then extractReds on the pair. With unit u = eps / (InTr (2 RMIter + 1)), every tree and every
extraction costs u, and a try costs (2 RMIter + 1) u, so the InTr tries cost eps (sequential
composition; each step may depend on the released output of the steps before it: adaptive
composition). AltExpM builds each tree with `expmech.exp_mech_tree` (the exponential mechanism per
level), AltMCMC with `sampler.sample_tree` (the exponential mechanism over whole trees on the
normalised score, drawn exactly: no chain).

**MCMCTreePair (Algorithm 4).** A try samples a tree pair with `sampler.sample_tree_pair` at
omega eps / InTr and extracts at (1 - omega) eps / InTr; the InTr tries cost eps.

**The paper's two settings of Alt*.** Non-robust: InTr = 1, RMIter = m (one initial attribute,
all the budget for alternations); stable: InTr = m, RMIter = 1 (m initial attributes, as many as
MCMCTreePair's tries, so the chance of starting from a useless attribute is the same).

**Charging.** `charge(epsilon_step, description)` is called before each tree, tree pair or
extraction draws; it raises (`OverBudgetError`) to refuse, and then nothing of the step is drawn.
Every argument is checked before the first charge, and a run's charges add to exactly eps.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from jostle.learners.redescription.expmech import exp_mech_tree
from jostle.learners.redescription.extract import Constraints, extract_redescriptions
from jostle.learners.redescription.queries import Redescription, RedescriptionSet
from jostle.learners.redescription.sampler import sample_tree, sample_tree_pair
from jostle.learners.redescription.trees import SplitTree
from jostle.learners.redescription.views import TwoViews

ALGORITHMS = ("AltExpM", "AltMCMC", "MCMCTreePair")
MAX_DEPTH = 6
MAX_STEPS = 1000

Charge = Callable[[Fraction, str], object]


@dataclass(frozen=True)
class MinerSettings:
    """One miner and its public parameters.

    Attributes:
        algorithm: "AltExpM", "AltMCMC" or "MCMCTreePair".
        tries: InTr, the initial attributes tried.
        alternations: RMIter, the alternations of each try (Alt* only).
        omega: MCMCTreePair's share of a try's budget for sampling the pair.
        depth: The trees' depth.
        constraints: The redescriptions' constraints and the pruning rule.
    """

    algorithm: str
    tries: int = 1
    alternations: int = 1
    omega: Fraction = Fraction(1, 2)
    depth: int = 4
    constraints: Constraints = field(default_factory=Constraints)

    def __post_init__(self) -> None:
        object.__setattr__(self, "omega", Fraction(self.omega).limit_denominator(10**6)
                           if isinstance(self.omega, float) else Fraction(self.omega))
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"unknown redescription algorithm {self.algorithm!r}; choose one of {', '.join(ALGORITHMS)}")
        for name in ("tries", "alternations", "depth"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.depth > MAX_DEPTH:
            raise ValueError(f"depth is at most {MAX_DEPTH} (2^depth leaves per tree), got {self.depth}")
        if not 0 < self.omega < 1:
            raise ValueError(f"omega must lie strictly between 0 and 1, got {float(self.omega)}")
        if len(self.planned_steps()) > MAX_STEPS:
            raise ValueError(f"at most {MAX_STEPS} trees and extractions per run; lower tries or alternations")

    @property
    def label(self) -> str:
        """e.g. "AltExpM(InTr=1, RMIter=4)" or "MCMCTreePair(InTr=4, omega=0.5)"."""
        if self.algorithm == "MCMCTreePair":
            return f"MCMCTreePair(InTr={self.tries}, omega={float(self.omega):g})"
        return f"{self.algorithm}(InTr={self.tries}, RMIter={self.alternations})"

    def planned_steps(self) -> list[tuple[Fraction, str]]:
        """Every charge of a run as (share of epsilon, description), in order; the shares add to 1."""
        steps: list[tuple[Fraction, str]] = []
        if self.algorithm == "MCMCTreePair":
            for t in range(self.tries):
                steps.append((self.omega / self.tries, f"try {t + 1}: tree pair"))
                steps.append(((1 - self.omega) / self.tries, f"try {t + 1}: extraction"))
            return steps
        unit = Fraction(1, self.tries * (2 * self.alternations + 1))
        for t in range(self.tries):
            steps.append((unit, f"try {t + 1}: first tree"))
            for r in range(self.alternations):
                steps.append((unit, f"try {t + 1}, alternation {r + 1}: tree"))
                steps.append((unit, f"try {t + 1}, alternation {r + 1}: extraction"))
        return steps


def non_robust(algorithm: str, m: int, **settings: Any) -> MinerSettings:
    """The paper's non-robust setting of Alt*: InTr = 1, RMIter = m (MCMCTreePair: InTr = m)."""
    if algorithm == "MCMCTreePair":
        return MinerSettings(algorithm, tries=m, **settings)
    return MinerSettings(algorithm, tries=1, alternations=m, **settings)


def stable(algorithm: str, m: int, **settings: Any) -> MinerSettings:
    """The paper's stable setting of Alt*: InTr = m, RMIter = 1 (MCMCTreePair: InTr = m)."""
    return MinerSettings(algorithm, tries=m, alternations=1, **settings)


def planned_cost(epsilon: Fraction | float) -> Fraction:
    """What a run charges in total: exactly epsilon."""
    return Fraction(epsilon)


def _positive_epsilon(epsilon: Fraction | float) -> Fraction:
    try:
        value = Fraction(epsilon)
    except (TypeError, ValueError, OverflowError) as error:
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon!r}") from error
    if value <= 0:
        raise ValueError(f"epsilon must be positive, got {float(value)}")
    return value


def _tree(settings: MinerSettings, views: TwoViews, view: int, target: np.ndarray, n_classes: int,
          epsilon: Fraction, noise: Any) -> SplitTree:
    build = exp_mech_tree if settings.algorithm == "AltExpM" else sample_tree
    return build(views, view, target, n_classes, settings.depth, epsilon, noise)


def _initial_attribute(views: TwoViews, noise: Any, fixed: tuple[int, int] | None) -> tuple[int, int]:
    if fixed is not None:
        return fixed
    widths = [len(views.schemas[0].attributes), len(views.schemas[1].attributes)]
    pick = int(np.asarray(noise.integers_below(widths[0] + widths[1], 1))[0])
    return (0, pick) if pick < widths[0] else (1, pick - widths[0])


def mine(views: TwoViews, settings: MinerSettings, epsilon: Fraction | float, *, noise: Any, charge: Charge,
         initial_attribute: tuple[int, int] | None = None) -> RedescriptionSet:
    """Run one miner (module docstring) at total budget `epsilon`.

    Args:
        views: The two private views.
        settings: The miner and its parameters.
        epsilon: The run's total epsilon (pure eps-DP under the entity unit).
        noise: The noise source (`Randomness` for releases, `SimulationNoise` on public data).
        charge: Called with each step's exact epsilon before it draws; raises to refuse.
        initial_attribute: A public (view, attribute index) to start every try from, instead of
            a random one.

    Returns:
        The released redescription set (kept and pruned).
    """
    epsilon = _positive_epsilon(epsilon)
    if initial_attribute is not None:
        view, index = initial_attribute
        if view not in (0, 1) or not 0 <= index < len(views.schemas[view].attributes):
            raise ValueError(f"initial_attribute {initial_attribute!r} names no attribute of the views")
    steps = iter(settings.planned_steps())
    found: dict[tuple[str, str], Redescription] = {}
    notes: list[str] = []

    def step() -> Fraction:
        share, description = next(steps)
        charge(share * epsilon, f"{settings.label}: {description}")
        return share * epsilon

    for t in range(settings.tries):
        first_budget = step()  # charged before the try draws anything (its initial attribute included)
        start_view, attribute = _initial_attribute(views, noise, initial_attribute)
        schema = views.schemas[start_view]
        target = views.codes[start_view][:, attribute]
        n_classes = schema.attributes[attribute].n_codes
        notes.append(f"try {t + 1}: initial target {schema.attributes[attribute].name} ({schema.name} view)")
        def extract(left_tree: SplitTree, right_tree: SplitTree, origin: str) -> None:
            budget = step()
            for red in extract_redescriptions(views, left_tree, right_tree, budget, noise, settings.constraints, origin):
                key = (red.left.text(views.schemas[0]), red.right.text(views.schemas[1]))
                found.setdefault(key, red)

        if settings.algorithm == "MCMCTreePair":
            pair = sample_tree_pair(views, 1 - start_view, target, n_classes, settings.depth, first_budget, noise)
            extract(pair[0], pair[1], f"try {t + 1}")
            continue
        previous = _tree(settings, views, 1 - start_view, target, n_classes, first_budget, noise)
        for r in range(settings.alternations):
            leaves = previous.leaves(views.codes[previous.view], views.schemas[previous.view])
            current = _tree(settings, views, 1 - previous.view, leaves, previous.n_leaves, step(), noise)
            ordered = (previous, current) if previous.view == 0 else (current, previous)
            extract(ordered[0], ordered[1], f"try {t + 1}, alternation {r + 1}")
            previous = current
    return RedescriptionSet(tuple(found.values()), views.schemas, settings.label, epsilon, tuple(notes))


def with_constraints(settings: MinerSettings, **changes: Any) -> MinerSettings:
    """`settings` with some constraints changed (e.g. min_support=100 on large data)."""
    return replace(settings, constraints=replace(settings.constraints, **changes))
