"""What an audit compares: a runner's outputs normalised (`as_outputs`), and the families of
events (sets of outputs) whose probabilities under two neighbouring datasets bound epsilon
from below: thresholds for numbers, orthants and projections for vectors, unions of
categories, and the thresholds of a learnt likelihood ratio (`default_events` picks one by the
output's kind). The auditor (jostle.audit) selects among their candidates.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np


def as_outputs(raw: Any) -> np.ndarray:
    """Normalise a runner's outputs: numbers -> float array (n,) or (n, d); else keys (object).

    Categorical outputs become their `repr`, so lists, records and `None` can be compared.
    """
    if isinstance(raw, np.ndarray) and raw.dtype.kind in "biuf":
        return raw.astype(float)
    items = list(raw)
    if items and all(_is_number(x) for x in items):
        return np.asarray(items, dtype=float)
    if items and all(isinstance(x, (list, tuple, np.ndarray)) and len(x) and all(_is_number(v) for v in x)
                     for x in items):
        return np.asarray([np.asarray(x, dtype=float) for x in items])
    return np.asarray([repr(_hashable(x)) for x in items], dtype=object)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def _hashable(x: Any) -> Any:
    if isinstance(x, (list, tuple, np.ndarray)):
        return tuple(_hashable(v) for v in x)
    if isinstance(x, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in x.items()))
    return x.item() if isinstance(x, np.generic) else x


@dataclass(frozen=True)
class Event:
    """A set of outputs: `contains(outputs)` is a boolean mask over normalised outputs."""

    name: str
    contains: Callable[[np.ndarray], np.ndarray]


class EventFamily(Protocol):
    """Proposes candidate events from the selection samples of M(D) and M(D')."""

    def candidates(self, first: np.ndarray, second: np.ndarray) -> list[Event]:
        ...


TAIL_LEVELS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5)
"""Quantile levels (and their mirror images) at which threshold events are cut."""


def _levels(levels: Sequence[float]) -> np.ndarray:
    return np.unique(np.concatenate([levels, 1 - np.asarray(levels)]))


@dataclass(frozen=True)
class Thresholds:
    """Events {y >= c} and {y <= c} for numeric scalar outputs.

    For outputs with few distinct values (counts with discrete noise, picks encoded as
    numbers) every value is a cut and a singleton event {y == v}; otherwise the cuts are pooled
    quantiles, denser in the tails where the likelihood ratio of additive noise is largest.
    For a location family with a monotone likelihood ratio these sets contain the optimal event.
    """

    levels: Sequence[float] = TAIL_LEVELS
    max_atoms: int = 80

    def candidates(self, first: np.ndarray, second: np.ndarray) -> list[Event]:
        pooled = np.concatenate([first, second])
        pooled = pooled[np.isfinite(pooled)]
        distinct = np.unique(pooled)
        few = len(distinct) <= self.max_atoms
        cuts = distinct if few else np.unique(np.quantile(pooled, _levels(self.levels)))
        events = [Event(f"y >= {c:g}", lambda y, c=c: y >= c) for c in cuts]
        events += [Event(f"y <= {c:g}", lambda y, c=c: y <= c) for c in cuts]
        if few:
            events += [Event(f"y == {v:g}", lambda y, v=v: y == v) for v in distinct]
        return events


@dataclass(frozen=True)
class Projection:
    """Audit a function of the output (a coordinate, a sum, a norm) with another family.

    Args:
        function: Maps the normalised outputs (all at once) to the projected outputs.
        name: How the projection appears in event names, e.g. "y[0]".
        inner: The family applied to the projected outputs (Thresholds by default).
    """

    function: Callable[[np.ndarray], Any]
    name: str
    inner: Any = Thresholds()

    def candidates(self, first: np.ndarray, second: np.ndarray) -> list[Event]:
        project = lambda y: as_outputs(self.function(y))  # noqa: E731
        inner = self.inner.candidates(project(first), project(second))
        return [Event(re.sub(r"\by(?=[\[ ])", self.name, e.name), lambda y, e=e: e.contains(project(y)))
                for e in inner]


def coordinate(index: int, inner: Any = None) -> Projection:
    """The family of events on one coordinate of a vector output."""
    return Projection(lambda y: y[:, index], f"y[{index}]", inner or Thresholds())


@dataclass(frozen=True)
class Orthants:
    """Events {s_i y_i >= c_i for every constrained coordinate i} on vector outputs.

    The privacy loss of independent noise on several coordinates adds up, and it is largest
    where every coordinate lies in its own worst tail, so the worst events are products of
    per-coordinate threshold sets. Each coordinate is unconstrained, >= or <= a pooled quantile;
    all combinations are tried while they number at most `limit`, else only events that
    constrain one coordinate or every coordinate at the same level.
    """

    levels: Sequence[float] = (0.02, 0.05, 0.1, 0.2, 0.35, 0.5)
    limit: int = 5000

    def candidates(self, first: np.ndarray, second: np.ndarray) -> list[Event]:
        pooled = np.concatenate([first, second])
        dims = pooled.shape[1]
        options: list[list[tuple[str, float]]] = []
        for i in range(dims):
            column = pooled[:, i][np.isfinite(pooled[:, i])]  # NaN lies in no threshold set
            cuts = np.unique(np.quantile(column, _levels(self.levels))) if len(column) else np.array([])
            options.append([("any", 0.0)] + [(">=", c) for c in cuts] + [("<=", c) for c in cuts])
        if math.prod(len(o) for o in options) <= self.limit:
            combos = list(itertools.product(*options))
        else:
            combos = []
            for i, option in enumerate(options):
                for choice in option[1:]:
                    combos.append(tuple(choice if j == i else ("any", 0.0) for j in range(dims)))
            for rank in range(1, min(len(o) for o in options)):
                combos.append(tuple(o[rank] for o in options))
        return [self._event(c) for c in combos if any(op != "any" for op, _ in c)]

    @staticmethod
    def _event(combo: tuple[tuple[str, float], ...]) -> Event:
        parts = [f"y[{i}] {op} {c:g}" for i, (op, c) in enumerate(combo) if op != "any"]

        def contains(y: np.ndarray) -> np.ndarray:
            mask = np.ones(len(y), dtype=bool)
            for i, (op, c) in enumerate(combo):
                if op == ">=":
                    mask &= y[:, i] >= c
                elif op == "<=":
                    mask &= y[:, i] <= c
            return mask

        return Event(" and ".join(parts), contains)


@dataclass(frozen=True)
class Categories:
    """Events over categorical outputs: each category, and unions ordered by likelihood ratio.

    The event with the largest ratio P[M(D) in S] / P[M(D') in S] at a given mass consists of
    the outputs with the largest ratio (Neyman-Pearson), so besides the singletons the family
    holds every prefix of the categories sorted by their estimated ratio, in both directions.
    """

    max_events: int = 400

    def candidates(self, first: np.ndarray, second: np.ndarray) -> list[Event]:
        keys = sorted(set(first.tolist()) | set(second.tolist()))
        count_a = np.array([np.sum(first == k) for k in keys], dtype=float)
        count_b = np.array([np.sum(second == k) for k in keys], dtype=float)
        ratio = (count_a + 0.5) / len(first) / ((count_b + 0.5) / len(second))
        sets = [[k] for k in keys]
        for order in (np.argsort(-ratio, kind="stable"), np.argsort(ratio, kind="stable")):
            sets += [[keys[i] for i in order[:size]] for size in range(2, len(keys))]
        events, seen = [], set()
        for chosen in sets[: self.max_events]:
            marker = frozenset(chosen)
            if marker not in seen:
                seen.add(marker)
                label = "y in {" + ", ".join(chosen) + "}" if len(chosen) > 1 else f"y == {chosen[0]}"
                events.append(Event(label, lambda y, chosen=tuple(chosen): np.isin(y, chosen)))
        return events


@dataclass(frozen=True)
class LikelihoodRatio:
    """DP-Sniper's events for any numeric output: sets of outputs a classifier finds likeliest
    under one dataset.

    A logistic regression (scikit-learn) learns, from the selection samples, the log-odds that
    an output came from D rather than D'; it estimates the log likelihood ratio, which orders
    outputs by the evidence they give. The events are {score >= c} and {score <= c} at quantile
    cuts of the scores. `features` maps outputs to the regression's inputs (by default the
    outputs, their absolute values, so that both shifts and spreads can be learnt, and which
    coordinates are not finite).
    """

    features: Callable[[np.ndarray], np.ndarray] | None = None
    levels: Sequence[float] = TAIL_LEVELS

    def candidates(self, first: np.ndarray, second: np.ndarray) -> list[Event]:
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler

        def inputs(y: np.ndarray) -> np.ndarray:
            if self.features is not None:
                return self.features(y)
            matrix = y.reshape(len(y), -1)
            finite = np.isfinite(matrix)
            clean = np.where(finite, matrix, 0.0)  # non-finite outputs get their own indicator
            return np.hstack([clean, np.abs(clean), ~finite])

        scaler = StandardScaler().fit(inputs(np.concatenate([first, second])))
        model = LogisticRegression(max_iter=1000).fit(
            scaler.transform(inputs(np.concatenate([first, second]))),
            np.r_[np.ones(len(first)), np.zeros(len(second))])
        score = lambda y: model.decision_function(scaler.transform(inputs(y)))  # noqa: E731
        return Projection(score, "score(y)", Thresholds(self.levels, max_atoms=0)).candidates(first, second)


def default_events(outputs: np.ndarray) -> Any:
    """Thresholds for numbers, Orthants for vectors, Categories for anything else."""
    if outputs.dtype == object:
        return Categories()
    return Orthants() if outputs.ndim == 2 else Thresholds()
