"""The clustering task's input: numeric rows clipped into a PUBLIC box and scaled to [0, 1]^d.

A k-means learner sums per-row values (a row's cluster indicator and its coordinates), so its
sensitivity argument needs every row inside a known box. The box is public: one (low, high) per
column, given by the analyst (or by a charged release), never read from the data. Each row is
coded by a per-row function that never fails and never reads another row:

  * a coordinate is parsed as a number (`pandas.to_numeric(errors="coerce")`); a missing or
    non-numeric one (NaN, None, a string) becomes the box's midpoint (a fixed public value);
    +-inf is clipped like any value;
  * clipped into [low, high], scaled to (x - low) / (high - low) in [0, 1];
  * rounded to the grid 2^-12 (`jostle.privacy.sulq.GRID_BITS`) and held as an integer number of
    grid steps in 0..4096, so that every sum a learner takes is an exact integer (no floating-point
    rounding between the sum the sensitivity argument bounds and the sum that is snapped: one
    row moves a coordinate sum by at most 4096 steps, which is 1).

So each query value g(row) (a coordinate in [0, 1], or a cluster indicator in {0, 1}) lies in
[0, 1] by construction, as SuLQ asks. The scaled model (centres in [0, 1]^d) maps back to the
box by `unscale` (post-processing of released values and the public box).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from jostle.privacy.sulq import GRID_BITS

__all__ = ["SCALE", "Box", "ClusteringData", "box_from", "code_rows"]

SCALE = 2**GRID_BITS
"""Grid steps per unit: a scaled coordinate is held as an integer in 0..SCALE."""


@dataclass(frozen=True)
class Box:
    """A public box: the columns' names and their (low, high) bounds, low < high, all finite.

    Attributes:
        columns: The column names, in order.
        lows: The lower bounds, one per column.
        highs: The upper bounds, one per column.
    """

    columns: tuple[str, ...]
    lows: tuple[float, ...]
    highs: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.columns:
            raise ValueError("a box needs at least one column")
        if len(set(self.columns)) != len(self.columns):
            raise ValueError(f"the box names a column twice: {list(self.columns)}")
        if not len(self.columns) == len(self.lows) == len(self.highs):
            raise ValueError("a box needs one (low, high) per column")
        for name, low, high in zip(self.columns, self.lows, self.highs):
            if not (math.isfinite(low) and math.isfinite(high) and low < high):
                raise ValueError(f"the bounds of column '{name}' must be finite numbers with low < high, "
                                 f"got ({low!r}, {high!r})")

    @property
    def d(self) -> int:
        """The number of columns."""
        return len(self.columns)

    @property
    def widths(self) -> np.ndarray:
        return np.asarray(self.highs, dtype=float) - np.asarray(self.lows, dtype=float)

    def unscale(self, scaled: np.ndarray) -> np.ndarray:
        """Points of [0, 1]^d back in the box's units (post-processing)."""
        return np.asarray(self.lows, dtype=float) + np.asarray(scaled, dtype=float) * self.widths

    def scale(self, points: np.ndarray) -> np.ndarray:
        """Points in the box's units scaled to [0, 1]^d (no clipping; for public centres)."""
        return (np.asarray(points, dtype=float) - np.asarray(self.lows, dtype=float)) / self.widths

    def describe(self) -> str:
        return ", ".join(f"{c}: [{lo:g}, {hi:g}]" for c, lo, hi in zip(self.columns, self.lows, self.highs))


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{what} must be a number, got {value!r}")
    return float(value)


def box_from(columns: Sequence[str], bounds: Mapping[str, Any] | Sequence[Any]) -> Box:
    """The public box of `columns`: `bounds` maps each column to (low, high), or lists one pair
    per column in order.

    Raises:
        ValueError: A column without bounds, bounds for a column not used, or bad bounds.
    """
    columns = tuple(str(c) for c in columns)
    if isinstance(bounds, Mapping):
        missing = [c for c in columns if c not in bounds]
        extra = [str(c) for c in bounds if str(c) not in columns]
        if missing:
            raise ValueError(f"no bounds for column(s) {', '.join(missing)}: give each column its public (low, high)")
        if extra:
            raise ValueError(f"bounds for column(s) {', '.join(extra)} that the call does not cluster on")
        pairs = [bounds[c] for c in columns]
    else:
        pairs = list(bounds)
        if len(pairs) != len(columns):
            raise ValueError(f"{len(columns)} column(s) but {len(pairs)} (low, high) pair(s)")
    lows, highs = [], []
    for column, pair in zip(columns, pairs):
        try:
            low, high = pair
        except (TypeError, ValueError):
            raise ValueError(f"the bounds of column '{column}' must be a pair [low, high], got {pair!r}") from None
        lows.append(_number(low, f"the low bound of '{column}'"))
        highs.append(_number(high, f"the high bound of '{column}'"))
    return Box(columns, tuple(lows), tuple(highs))


def _cell_float(value: Any) -> float:
    """One cell as a double, never failing: a number beyond the doubles is +-inf (then clipped
    like any value), anything that is not a real number (text, a complex, None, an object whose
    conversion raises) is NaN (then the public midpoint)."""
    if isinstance(value, (complex, np.complexfloating)) or value is None:
        return math.nan
    try:
        return float(value)
    except OverflowError:
        try:
            return math.inf if value > 0 else -math.inf
        except Exception:  # noqa: BLE001 - a per-row function must not fail on a cell
            return math.nan
    except Exception:  # noqa: BLE001 - a per-row function must not fail on a cell
        return math.nan


def _as_floats(column: np.ndarray) -> np.ndarray:
    """A column as doubles by `_cell_float`'s rule: numeric dtypes directly (every int64 and bool
    is a double), other columns cell by cell, so that no cell's content decides whether coding
    fails (a whole number beyond the doubles, a complex, a text)."""
    if column.dtype.kind in "fiub":
        return column.astype(float)
    return np.fromiter((_cell_float(v) for v in column.tolist()), dtype=float, count=len(column))


def code_rows(values: Any, box: Box) -> np.ndarray:
    """The rows as integer grid steps in 0..SCALE (int64, n x d): parsed, missing -> midpoint,
    clipped into the box, scaled to [0, 1], rounded to the grid (see the module docstring).

    Args:
        values: A pandas DataFrame holding the box's columns (other columns are ignored), or an
            array-like n x d in the box's column order.
        box: The public box.

    Never fails on a row's content (a per-row function); fails only on the shape.
    """
    import pandas as pd

    if isinstance(values, pd.DataFrame):
        missing = [c for c in box.columns if c not in values.columns]
        if missing:
            raise ValueError(f"the table has no column(s) {', '.join(missing)}")
        columns = [values[c].to_numpy() for c in box.columns]
    else:
        array = np.asarray(values, dtype=object)
        if array.ndim == 1 and box.d == 1:
            array = array.reshape(-1, 1)
        if array.ndim != 2 or array.shape[1] != box.d:
            raise ValueError(f"expected rows of {box.d} value(s), got an array of shape {array.shape}")
        columns = [array[:, j] for j in range(box.d)]
    raw = np.column_stack([_as_floats(column) for column in columns]) if len(columns[0]) else np.zeros((0, box.d))
    lows, widths = np.asarray(box.lows, dtype=float), box.widths
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = (np.clip(raw, lows, np.asarray(box.highs, dtype=float)) - lows) / widths
    scaled = np.where(np.isnan(scaled), 0.5, scaled)            # missing: the public midpoint
    return np.rint(np.clip(scaled, 0.0, 1.0) * SCALE).astype(np.int64)


@dataclass(frozen=True, eq=False)
class ClusteringData:
    """The input of a clustering Option.

    Attributes:
        units: The rows as integer grid steps in 0..SCALE (n x d; private in a real call; privacy
            unit: one row added or removed).
        box: The public box (columns and bounds).
        k: The number of clusters (public).
        name: A label for reports.
        initial: Public initial centres in [0, 1]^d (k x d), or None: the learners' seeded
            uniform draw in the box (`kmeans.initial_centres`, seed `seed`).
        seed: The public seed of the initial centres when `initial` is None.
    """

    units: np.ndarray
    box: Box
    k: int
    name: str = ""
    initial: np.ndarray | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or int(self.k) != self.k or self.k < 1:
            raise ValueError(f"the number of clusters k must be a positive integer, got {self.k!r}")
        if self.units.ndim != 2 or self.units.shape[1] != self.box.d:
            raise ValueError(f"the coded rows must be n x {self.box.d}, got {self.units.shape}")
        if self.initial is not None and np.shape(self.initial) != (self.k, self.box.d):
            raise ValueError(f"the initial centres must be {self.k} x {self.box.d}, got {np.shape(self.initial)}")

    @classmethod
    def from_values(cls, values: Any, box: Box, k: int, name: str = "", initial: Any = None,
                    seed: int = 0) -> "ClusteringData":
        """Code `values` (`code_rows`) against `box`; `initial` centres are in the box's units."""
        start = None if initial is None else np.clip(box.scale(np.asarray(initial, dtype=float)), 0.0, 1.0)
        return cls(code_rows(values, box), box, int(k), name, start, seed)

    @property
    def d(self) -> int:
        return self.box.d

    @property
    def points(self) -> np.ndarray:
        """The coded rows as floats in [0, 1]^d (on the grid)."""
        return self.units / SCALE

    def public_facts(self) -> dict[str, Any]:
        """What a metafeature may read without a charge: d and k (the box and the call)."""
        return {"d": self.box.d, "k": int(self.k)}

    def without_row(self, position: int) -> "ClusteringData":
        """The neighbour without the row at `position` (one row removed)."""
        keep = np.arange(self.units.shape[0]) != int(position)
        return ClusteringData(self.units[keep], self.box, self.k, self.name, self.initial, self.seed)
