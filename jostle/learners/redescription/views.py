"""Two views of the same entities, coded against public domains (the data of redescription mining).

Redescription mining relates two tables over one set of entities: view 0 (the "left" view, say
diagnoses) and view 1 (the "right" view, say lab results). Every attribute is coded as a small
integer against a **public** domain the curator declares, never one read off the private rows:

  * a categorical attribute has its declared values, codes 0..V-1, and one more code V, "other",
    for a value outside the domain or a missing one;
  * a numeric attribute has declared bin edges e_0 < e_1 < ... < e_B: code k holds the values
    e_k <= v < e_{k+1} (values below e_0 fall in bin 0, values at or above e_B in bin B-1), and
    code B holds the missing values.

Why public bins: the paper bins numeric targets by Freedman-Diaconis on the private
interquartile range. One entity moving the interquartile range moves every bin edge and
relabels many entities, so the Gini scores of the trees built on that target no longer have
sensitivity 2 (the issue's correction). Public bins are a 1-stable, row-by-row coding: removing
an entity removes its row and changes no other row's code.

Coding never fails on a row's value (an unknown value becomes "other", NaN becomes missing), so
no error depends on one entity's data.

The split candidates of a view (`ViewSchema.splits`) come from the domains alone: "a = v" for
every declared value v of a categorical attribute, and "a < e_{k+1}" (code <= k) for every
interior edge of a numeric one. The authors' Java code draws them from a random 80% of the
rows, which can release one person's exact value as a threshold; here they are public.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

CATEGORICAL = "categorical"
NUMERIC = "numeric"
OTHER_LABEL = "other"
MISSING_LABEL = "missing"


@dataclass(frozen=True)
class Attribute:
    """One attribute of a view with its public domain.

    Attributes:
        name: The column name.
        kind: "categorical" or "numeric".
        values: The declared values of a categorical attribute (codes 0..V-1; code V is "other").
        edges: The declared bin edges of a numeric attribute, strictly increasing, at least two
            (codes 0..B-1 for the B bins; code B is "missing").
    """

    name: str
    kind: str
    values: tuple = ()
    edges: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.kind == CATEGORICAL:
            if not self.values:
                raise ValueError(f"categorical attribute {self.name!r} needs a declared, non-empty domain")
            if len(set(self.values)) != len(self.values):
                raise ValueError(f"categorical attribute {self.name!r} declares a value twice")
        elif self.kind == NUMERIC:
            edges = tuple(float(e) for e in self.edges)
            if len(edges) < 2 or not all(math.isfinite(e) for e in edges):
                raise ValueError(f"numeric attribute {self.name!r} needs at least two finite bin edges")
            if any(b <= a for a, b in zip(edges, edges[1:])):
                raise ValueError(f"the bin edges of {self.name!r} must increase strictly")
            object.__setattr__(self, "edges", edges)
        else:
            raise ValueError(f"attribute kind must be {CATEGORICAL!r} or {NUMERIC!r}, got {self.kind!r}")

    @property
    def n_codes(self) -> int:
        """Codes in use: the values plus "other", or the bins plus "missing"."""
        return len(self.values) + 1 if self.kind == CATEGORICAL else len(self.edges)

    @property
    def n_bins(self) -> int:
        """The number of numeric bins (0 for a categorical attribute)."""
        return len(self.edges) - 1 if self.kind == NUMERIC else 0

    def code_label(self, code: int) -> str:
        """A readable label of one code ("F", "other", "[20, 30)", "missing")."""
        if self.kind == CATEGORICAL:
            return str(self.values[code]) if code < len(self.values) else OTHER_LABEL
        if code >= self.n_bins:
            return MISSING_LABEL
        return f"[{_number(self.edges[code])}, {_number(self.edges[code + 1])})"

    def encode(self, column: Any) -> np.ndarray:
        """The codes of a column of raw values (never raises on a value)."""
        raw = np.asarray(column, dtype=object)
        if self.kind == CATEGORICAL:
            index = {value: i for i, value in enumerate(self.values)}
            by_text = {str(value): i for i, value in enumerate(self.values)}
            other = len(self.values)
            out = np.empty(raw.shape[0], dtype=np.int64)
            for position, value in enumerate(raw.tolist()):
                code = index.get(value) if _hashable(value) else None
                if code is None:
                    code = by_text.get(_text(value), other) if not _missing(value) else other
                out[position] = code
            return out
        numbers = np.full(raw.shape[0], np.nan)
        for position, value in enumerate(raw.tolist()):
            try:
                numbers[position] = float(value)
            except OverflowError:  # an integer beyond the doubles: above or below every edge
                numbers[position] = math.inf if value > 0 else -math.inf
            except (TypeError, ValueError):
                pass
        return self.encode_numbers(numbers)

    def encode_numbers(self, numbers: np.ndarray) -> np.ndarray:
        """The codes of a float array of a numeric attribute (NaN -> missing)."""
        numbers = np.asarray(numbers, dtype=float)
        interior = np.asarray(self.edges[1:-1], dtype=float)
        codes = np.searchsorted(interior, numbers, side="right").astype(np.int64)
        codes[np.isnan(numbers)] = self.n_bins
        return codes


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _text(value: Any) -> str | None:
    """str(value), or None where str() itself fails (an int of over 4,300 digits, a broken object)."""
    try:
        return str(value)
    except Exception:  # noqa: BLE001 - any failure codes the value as "other", alike on neighbours
        return None


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(isinstance(value, float) and math.isnan(value))
    except TypeError:
        return False


def categorical(name: str, values: Sequence[Any]) -> Attribute:
    """A categorical attribute with its declared domain."""
    return Attribute(name, CATEGORICAL, values=tuple(values))


def numeric(name: str, edges: Sequence[float]) -> Attribute:
    """A numeric attribute with declared bin edges."""
    return Attribute(name, NUMERIC, edges=tuple(float(e) for e in edges))


def equal_width(name: str, low: float, high: float, bins: int) -> Attribute:
    """A numeric attribute cut into `bins` equal-width bins on the declared bounds [low, high]."""
    if bins < 1 or not high > low:
        raise ValueError(f"equal-width bins of {name!r} need bins >= 1 and high > low")
    return numeric(name, np.linspace(float(low), float(high), int(bins) + 1).tolist())


@dataclass(frozen=True)
class SplitCandidates:
    """The public binary splits of one view: attribute index, kind and value per candidate.

    A categorical candidate sends code == value to the left child ("a = v"); a numeric one
    sends code <= value to the left child ("a < e_{value+1}").
    """

    attribute: np.ndarray
    numeric: np.ndarray
    value: np.ndarray

    def __len__(self) -> int:
        return int(self.attribute.size)


@dataclass(frozen=True)
class ViewSchema:
    """The public schema of one view: its name and coded attributes."""

    name: str
    attributes: tuple[Attribute, ...]
    splits: SplitCandidates = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "attributes", tuple(self.attributes))
        if not self.attributes:
            raise ValueError(f"view {self.name!r} has no attribute")
        names = [a.name for a in self.attributes]
        if len(set(names)) != len(names):
            raise ValueError(f"view {self.name!r} names an attribute twice")
        attribute, is_numeric, value = [], [], []
        for index, attr in enumerate(self.attributes):
            if attr.kind == CATEGORICAL:
                candidates = range(len(attr.values))
            else:
                candidates = range(attr.n_bins - 1)
            for v in candidates:
                attribute.append(index)
                is_numeric.append(attr.kind == NUMERIC)
                value.append(v)
        splits = SplitCandidates(np.asarray(attribute, dtype=np.int64), np.asarray(is_numeric, dtype=bool),
                                 np.asarray(value, dtype=np.int64))
        if len(splits) == 0:
            raise ValueError(f"view {self.name!r} has no split candidate: declare at least one attribute "
                             "with a value (categorical) or two bins (numeric)")
        object.__setattr__(self, "splits", splits)

    @property
    def names(self) -> tuple[str, ...]:
        """The attribute names, in order."""
        return tuple(a.name for a in self.attributes)

    def literal_text(self, attribute: int, is_numeric: bool, value: int, positive: bool) -> str:
        """The text of one split test or its negation."""
        attr = self.attributes[attribute]
        if is_numeric:
            edge = _number(attr.edges[value + 1])
            return f"{attr.name} < {edge}" if positive else f"{attr.name} >= {edge}"
        label = attr.code_label(value)
        return f"{attr.name} = {label}" if positive else f"{attr.name} != {label}"


@dataclass(frozen=True)
class TwoViews:
    """Two coded views of the same entities (row i of both matrices is one entity).

    `codes[v]` is an int64 matrix, entities x attributes of view v. The number of rows is
    private: nothing released may depend on it except through a charged release.
    """

    schemas: tuple[ViewSchema, ViewSchema]
    codes: tuple[np.ndarray, np.ndarray]

    def __post_init__(self) -> None:
        if len(self.schemas) != 2 or len(self.codes) != 2:
            raise ValueError("two views: exactly two schemas and two code matrices")
        for view in (0, 1):
            matrix = np.asarray(self.codes[view])
            width = len(self.schemas[view].attributes)
            if matrix.ndim != 2 or matrix.shape[1] != width:
                raise ValueError(f"view {view} codes must be a matrix with {width} columns")
        if self.codes[0].shape[0] != self.codes[1].shape[0]:
            raise ValueError("the two views must hold the same entities (the same number of rows)")

    @property
    def n_entities(self) -> int:
        """The number of entities (private)."""
        return int(self.codes[0].shape[0])

    def take(self, rows: np.ndarray) -> "TwoViews":
        """The entities at `rows` (a neighbour, a sample) of both views."""
        rows = np.asarray(rows)
        return TwoViews(self.schemas, (self.codes[0][rows], self.codes[1][rows]))


def from_codes(schemas: Sequence[ViewSchema], left_codes: Any, right_codes: Any) -> TwoViews:
    """Two views from code matrices already coded against `schemas`."""
    codes = []
    for view, matrix in enumerate((left_codes, right_codes)):
        array = np.asarray(matrix, dtype=np.int64)
        if array.ndim == 1:
            array = array.reshape(-1, 1)
        limits = np.asarray([a.n_codes for a in schemas[view].attributes])
        if array.size and (array.min() < 0 or (array >= limits).any()):
            raise ValueError(f"view {view}: a code is outside its attribute's domain")
        codes.append(array)
    return TwoViews((schemas[0], schemas[1]), (codes[0], codes[1]))


def encode_view(frame: Any, schema: ViewSchema) -> np.ndarray:
    """The code matrix of one view from a pandas DataFrame with the schema's columns."""
    missing = [name for name in schema.names if name not in frame.columns]
    if missing:
        raise ValueError(f"view {schema.name!r} lacks the declared columns {missing}")
    if len(schema.attributes) == 0:
        return np.zeros((len(frame), 0), dtype=np.int64)
    columns = [attr.encode(frame[attr.name].to_numpy(dtype=object)) for attr in schema.attributes]
    return np.column_stack(columns).astype(np.int64).reshape(len(frame), len(columns))  # also with no row


def encode_views(left: Any, right: Any, schemas: Sequence[ViewSchema], key: str | None = None) -> TwoViews:
    """Code two pandas DataFrames against their public schemas.

    Args:
        left: The left view's rows.
        right: The right view's rows.
        schemas: The two public schemas.
        key: The entity key column both frames carry (declared unique by the curator): the
            entities are those present in both views, aligned on the key. None aligns by
            position (the frames must then have the same length).

    Returns:
        The coded views.
    """
    if key is not None:
        for which, frame in (("left", left), ("right", right)):
            if key not in frame.columns:
                raise ValueError(f"the {which} view lacks the entity key column {key!r}")
        # a key cell that cannot be a dictionary key (a list, a dict) matches nothing, as a NaN key
        right_positions = {value: i for i, value in enumerate(right[key].tolist()) if _hashable(value)}
        left_rows, right_rows = [], []
        for i, value in enumerate(left[key].tolist()):
            j = right_positions.get(value) if _hashable(value) else None
            if j is not None:
                left_rows.append(i)
                right_rows.append(j)
        left = left.iloc[left_rows]
        right = right.iloc[right_rows]
    elif len(left) != len(right):
        raise ValueError("without a key the two views are aligned by position and must have the same length")
    return TwoViews((schemas[0], schemas[1]), (encode_view(left, schemas[0]), encode_view(right, schemas[1])))
