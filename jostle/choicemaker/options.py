"""Options of the histogram ChoiceMaker: named private algorithms it can choose among.

An Option is anything with
  * `name` (str),
  * `dims` (the histogram dimensionalities it handles: an int or a tuple of ints),
  * `run(x, epsilon, workload, noise) -> estimate`, an epsilon-DP release of the count
    vector/grid `x` (the caller charges epsilon before calling it).
`HistogramOption` wraps the algorithms of `jostle.histograms` (`run_<name>(x, epsilon,
workload, noise, ledger)`); each run gets its own `PrivacyLedger` capped at `epsilon`, so an
algorithm that tried to spend more than it was given would fail before drawing noise.
The language layer wraps Jostle-defined options into objects with the same attributes.

`BUILTIN_OPTIONS` wraps every algorithm of `jostle.histograms.registry.ALGORITHMS` under its
catalogue name (Identity, Uniform, HB, Privelet, MWEM, DAWA, AHP, QuadTree, UGrid, AGrid);
`get_option` looks a name up case-insensitively.
"""

from __future__ import annotations

import hashlib
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from jostle.histograms.measure import PrivacyLedger

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


def source_digest(obj: Any) -> str:
    """A short hash of an object's source code (its qualified name if the source is unavailable).

    Hashing the module's source too makes the cache notice edits to helpers of an algorithm.
    """
    try:
        module = inspect.getmodule(obj)
        text = inspect.getsource(module) if module is not None else inspect.getsource(obj)
        text += getattr(obj, "__qualname__", "")
    except (OSError, TypeError):
        text = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', repr(obj))}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def fingerprint(obj: Any) -> str:
    """Cache identity of an option or metafeature: its `fingerprint` attribute if it has one,
    otherwise its name and the source of its `run`/`measure` method."""
    value = getattr(obj, "fingerprint", None)
    if isinstance(value, str):
        return value
    method = getattr(obj, "run", None) or getattr(obj, "measure", None)
    return f"{getattr(obj, 'name', repr(obj))}|{source_digest(method) if method else ''}"


def builtin_options() -> dict[str, HistogramOption]:
    """Name -> HistogramOption for every algorithm in `jostle.histograms.registry.ALGORITHMS`."""
    from jostle.histograms.registry import ALGORITHMS
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
