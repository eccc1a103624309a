"""The scores of a selection mechanism (exponential, report_noisy_max, above_threshold), validated
from public inputs only: their exact values, the largest per-score sensitivity, the data they
depend on and whether they are monotone (jostle.language.mechanisms uses them)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from jostle.diagnostics.errors import JostleRuntimeError
from jostle.diagnostics.source import Span
from jostle.language.sensitivity import Exact, exact_number
from jostle.language.values import Private, PrivateMean, type_name
from jostle.privacy.budget import DataNode, common_node


class Scores:
    """Validated scores of a selection: their exact values, the largest per-score sensitivity,
    the data they depend on (None if all public) and whether they are monotone.

    `units` is what `grid_release.snap` takes: a private vector's own array (int64, doubles or
    exact Python numbers; snapping is exact for each), or an array of the exact numbers.
    """

    def __init__(self, units: np.ndarray, sensitivity: float, node: DataNode | None, monotone: bool) -> None:
        self.units = units
        self.sensitivity = sensitivity
        self.node = node
        self.monotone = monotone

    def __len__(self) -> int:
        return len(self.units)

    def values(self) -> list[Exact]:
        """The exact scores as Python ints and Fractions."""
        return [exact_number(v) for v in self.units.tolist()]

    def first_max(self) -> int:
        """The first index of the largest score."""
        values = self.values()
        return max(range(len(values)), key=lambda i: values[i])


_NOUNS = {"exponential": "utility", "above_threshold": "query"}


def _public_score(item: Any, span: Span, what: str, index: int) -> Exact:
    """A public score as an exact number; NaN and infinities are refused (before any charge)."""
    if isinstance(item, (float, np.floating)) and not math.isfinite(float(item)):
        noun = _NOUNS.get(what, "score")
        raise JostleRuntimeError(
            f"{what}: {noun} {index} is {float(item)}, not a finite number", span,
            f"check how {noun} {index} is computed (an overflow to inf, or inf - inf, gives such a "
            "value) and keep it finite; nothing was charged",
        )
    return exact_number(item)


def scores(values: Any, span: Span, what: str) -> Scores:
    """The scores of a selection (a private vector or a list of numbers and private scalars),
    validated without looking at private data: only public inputs can be refused here."""
    if isinstance(values, Private):
        if not values.is_vector:
            raise JostleRuntimeError(f"{what} needs a list of scores, got a private scalar", span)
        return Scores(np.asarray(values.value), values.l1, values.node, values.direction != 0)
    if not isinstance(values, (tuple, list, np.ndarray)):
        raise JostleRuntimeError(f"{what} needs a list of scores, got a {type_name(values)}", span)
    numbers: list[Exact] = []
    sensitivity, nodes, directions = 0.0, [], set()
    for index, item in enumerate(list(values)):
        if isinstance(item, Private):
            if item.is_vector:
                raise JostleRuntimeError(f"{what} needs one number per candidate, got a vector", span)
            numbers.append(exact_number(item.value))
            sensitivity = max(sensitivity, item.l1)
            nodes.append(item.node)
            directions.add(item.direction)
        elif isinstance(item, PrivateMean):
            raise JostleRuntimeError(f"{what} cannot score with a private mean", span)
        elif isinstance(item, (int, float, np.integer, np.floating)) and not isinstance(item, (bool, np.bool_)):
            numbers.append(_public_score(item, span, what, index))
        else:
            raise JostleRuntimeError(f"{what} scores must be numbers, got a {type_name(item)}", span)
    units = np.empty(len(numbers), dtype=object)
    units[:] = numbers
    # Public scores are constants, which move in every direction at once: they do not break
    # monotonicity; the private ones must all move the same way.
    monotone = len(directions) == 1 and 0 not in directions
    return Scores(units, sensitivity, common_node(nodes) if nodes else None, monotone)
