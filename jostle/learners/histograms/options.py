"""Options of the histogram family: named private algorithms it can choose among.

An Option is anything with
  * `name` (str),
  * `dims` (the histogram dimensionalities it handles: an int or a tuple of ints),
  * `run(x, epsilon, workload, noise) -> estimate`, an epsilon-DP release of the count
    vector/grid `x` (the caller charges epsilon before calling it),
and may state `planned_cost(budget)`, what a run given a typed budget charges (the built-ins:
the pure epsilon within it, `jostle.choicemaker.budgets.pure_cost`).
`HistogramOption` wraps the algorithms of `jostle.learners.histograms` (`run_<name>(x, epsilon,
workload, noise, ledger)`); each run gets its own `PrivacyLedger` capped at `epsilon`, so an
algorithm that tried to spend more than it was given would fail before drawing noise.
The language layer wraps Jostle-defined options into objects with the same attributes.

`BUILTIN_OPTIONS` wraps every algorithm of `jostle.learners.histograms.registry.ALGORITHMS` under its
catalogue name (Identity, Uniform, HB, Privelet, MWEM, DAWA, AHP, QuadTree, UGrid, AGrid);
`get_option` looks a name up case-insensitively.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from jostle.choicemaker.budgets import pure_cost
from jostle.choicemaker.family import source_digest
from jostle.privacy.measures import AnyBudget
from jostle.learners.histograms.measure import PrivacyLedger

RunFunction = Callable[..., np.ndarray]


@dataclass(frozen=True)
class HistogramOption:
    """A histogram algorithm the ChoiceMaker may choose.

    Args:
        name: Registry name (e.g. "hb").
        dims: Dimensionalities handled, e.g. (1,), (2,) or (1, 2).
        function: `run_<name>(x, epsilon, workload, noise, ledger=None)`.
        description: One line for reports.
    """

    name: str
    dims: tuple[int, ...]
    function: RunFunction = field(repr=False, compare=False)
    description: str = ""

    def run(self, x: np.ndarray, epsilon: float, workload: Any, noise: Any) -> np.ndarray:
        """Release an estimate of `x` spending at most `epsilon` (checked by a ledger)."""
        ledger = PrivacyLedger(float(epsilon))
        estimate = self.function(np.asarray(x, dtype=float), float(epsilon), workload, noise,
                                 ledger=ledger)
        return np.asarray(estimate, dtype=float).reshape(np.shape(x))

    def planned_cost(self, budget: AnyBudget) -> AnyBudget:
        """What a run given `budget` charges: the pure epsilon within it (the algorithm runs at
        that epsilon and is epsilon-DP, so its privacy map is the identity)."""
        return pure_cost(budget)

    @property
    def fingerprint(self) -> str:
        """What the experience cache keys on: name, dims and the algorithm's source code."""
        return f"{self.name}|{self.dims}|{source_digest(self.function)}"


def option_dims(option: Any) -> tuple[int, ...]:
    """The dimensionalities of any option-like object (`dims` may be an int or a tuple)."""
    dims = getattr(option, "dims", (1, 2))
    if isinstance(dims, (int, np.integer)):
        return (int(dims),)
    return tuple(sorted(int(d) for d in dims))


def builtin_options() -> dict[str, HistogramOption]:
    """Name -> HistogramOption for every algorithm in `jostle.learners.histograms.registry.ALGORITHMS`."""
    from jostle.learners.histograms.registry import ALGORITHMS
    return {name: HistogramOption(name, tuple(sorted(algorithm.dims)), algorithm.run,
                                  algorithm.reference)
            for name, algorithm in ALGORITHMS.items()}


BUILTIN_OPTIONS: dict[str, HistogramOption] = builtin_options()


def options_for(dims: int, options: list[Any] | None = None) -> list[Any]:
    """The options (default: every built-in) that handle `dims`-dimensional histograms."""
    candidates = list(BUILTIN_OPTIONS.values()) if options is None else list(options)
    return [o for o in candidates if dims in option_dims(o)]


def get_option(name: str, options: list[Any] | None = None) -> Any:
    """The option called `name` (case-insensitive) among `options` (default: the built-ins)."""
    candidates = list(BUILTIN_OPTIONS.values()) if options is None else list(options)
    for option in candidates:
        if option.name.lower() == name.lower():
            return option
    raise KeyError(f"unknown option {name!r}; known: {', '.join(o.name for o in candidates)}")
