"""Coded tables: categorical attributes and a class, as integer codes against public domains.

`ClassificationData` is the input of every classifier family's Options (today the trees and the
rule lists): integer codes with their PUBLIC description (the domain size of every attribute,
the class count, names, values and labels) and, when the caller declared one, a public upper
bound on the rows. Codes of attribute j lie in 0..domain_sizes[j]-1 and class codes in
0..n_classes-1.

`encode_public_frame` turns a PUBLIC table into one, reading its categories and numeric ranges
off the data itself. That is allowed for public training corpora and only there: a private
table must come with declared domains (`jostle.learnerkit.encoding`), and a benchmark says when
it takes domains from a file, as the literature does.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

MAX_CATEGORIES = 12  # a numeric column with at most this many distinct values stays categorical
DEFAULT_BINS = 5     # equal-width bins of a numeric column with more values
MAX_ROWS = 10_000    # larger tables are subsampled (seeded), to keep training minutes short


@dataclass(frozen=True)
class ClassificationData:
    """An integer-coded classification table and its public description.

    Attributes:
        X: (n, d) attribute codes; column j takes values 0..domain_sizes[j]-1.
        y: (n,) class codes in 0..n_classes-1.
        domain_sizes: Public number of values of each attribute.
        n_classes: Public number of classes.
        attribute_names: Names of the d attributes (default x0, x1, ...).
        class_labels: The n_classes class labels, by code (default 0..C-1).
        name: The task's name (unique in a corpus).
        group: Leave-one-dataset-out group (defaults to the name): tasks made from the same
            table share one, so they are never on both sides of a validation split.
        attribute_values: Each attribute's public values, by code (for printouts; default the
            codes).
        row_bound: A declared public upper bound on the rows, or None.
    """

    X: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    domain_sizes: tuple[int, ...]
    n_classes: int
    attribute_names: tuple[str, ...] = ()
    class_labels: tuple[Any, ...] = ()
    name: str = "data"
    group: str = ""
    attribute_values: tuple[tuple[Any, ...], ...] = ()
    row_bound: int | None = None

    def __post_init__(self) -> None:
        sizes = tuple(int(s) for s in self.domain_sizes)
        y = np.asarray(self.y, dtype=np.int64).ravel()
        X = np.asarray(self.X, dtype=np.int64)
        if X.size == 0:
            X = X.reshape(y.shape[0], len(sizes))
        if X.ndim != 2 or X.shape[0] != y.shape[0]:
            raise ValueError(f"X must be (n, d) and y (n,), got {X.shape} and {y.shape}")
        if X.shape[1] != len(sizes) or any(s < 1 for s in sizes):
            raise ValueError(f"{len(sizes)} domain sizes for {X.shape[1]} attributes")
        if X.size and (X.min() < 0 or np.any(X.max(axis=0) >= np.asarray(sizes))):
            raise ValueError("an attribute code lies outside its declared domain")
        if self.n_classes < 1 or (y.size and (y.min() < 0 or y.max() >= self.n_classes)):
            raise ValueError("a class code lies outside 0..n_classes-1")
        names = tuple(self.attribute_names) or tuple(f"x{j}" for j in range(len(sizes)))
        labels = tuple(self.class_labels) or tuple(range(self.n_classes))
        values = tuple(tuple(v) for v in self.attribute_values) or tuple(tuple(range(s)) for s in sizes)
        if len(names) != len(sizes) or len(labels) != self.n_classes or len(values) != len(sizes):
            raise ValueError("one name and one value list per attribute and one label per class are needed")
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "domain_sizes", sizes)
        object.__setattr__(self, "attribute_names", names)
        object.__setattr__(self, "class_labels", labels)
        object.__setattr__(self, "attribute_values", values)
        if not self.group:
            object.__setattr__(self, "group", self.name)

    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_attributes(self) -> int:
        return int(self.X.shape[1])

    def rows(self, index: np.ndarray) -> ClassificationData:
        """The same task restricted to some rows (e.g. a training split)."""
        return replace(self, X=self.X[index], y=self.y[index])

    def content_hash(self) -> str:
        """Hash of the codes, the public description, the name and the group (cache keys).

        A declared row bound is part of the description (a table without one hashes as it
        did before the bound existed)."""
        description: tuple[Any, ...] = (self.name, self.group, self.domain_sizes, self.n_classes, self.X.shape)
        if self.row_bound is not None:
            description += (self.row_bound,)
        digest = hashlib.sha256()
        digest.update(repr(description).encode())
        digest.update(np.ascontiguousarray(self.X).tobytes())
        digest.update(np.ascontiguousarray(self.y).tobytes())
        return digest.hexdigest()[:16]


def coded_table(X: Any, y: Any, domain_sizes: Sequence[int], n_classes: int, attribute_names: Sequence[str] = (),
                attribute_values: Sequence[Sequence[Any]] = (), class_labels: Sequence[Any] = (),
                name: str = "data", group: str = "", row_bound: int | None = None) -> ClassificationData:
    """A `ClassificationData` from arguments in the rule lists' order (values before labels);
    `jostle.learners.brl.corpus.RuleData` is this function."""
    return ClassificationData(X, y, tuple(domain_sizes), n_classes, tuple(attribute_names), tuple(class_labels),
                              name, group, tuple(tuple(v) for v in attribute_values), row_bound)


def train_test_split(n: int, seed: int, train_share: float = 0.7) -> tuple[np.ndarray, np.ndarray]:
    """A seeded random split of n row indices: `train_share` for training, the rest for test."""
    order = np.random.default_rng(seed).permutation(n)
    cut = int(round(train_share * n))
    return order[:cut], order[cut:]


@dataclass(frozen=True)
class FrameEncoding:
    """How `encode_public_frame` reads a public table: a family's parameters, not shared values.

    Attributes:
        bins: Equal-width bins of a numeric column with more than `max_categories` values.
        max_categories: A numeric column with at most this many distinct values stays categorical.
        max_rows: Larger tables are subsampled (seeded); None keeps every row.
        max_classes: Rare classes beyond this many are merged into the last one.
        text_order: Sort categories as text (else in their natural order, as text if they do not sort).
        bin_labels: Name a numeric column's bins "bin k/B" (else by their codes).
        max_domain: Attributes with more values are dropped (None: no limit).
        two_class: Only two-class tables (None for any other).
        min_attributes: Fewer attributes kept gives None.
    """

    bins: int = DEFAULT_BINS
    max_categories: int = MAX_CATEGORIES
    max_rows: int | None = MAX_ROWS
    max_classes: int = 12
    text_order: bool = False
    bin_labels: bool = False
    max_domain: int | None = None
    two_class: bool = False
    min_attributes: int = 0


def encode_public_frame(frame: pd.DataFrame, target: str, name: str, group: str = "",
                        bins: int = DEFAULT_BINS, max_categories: int = MAX_CATEGORIES,
                        drop: Sequence[str] = (), max_rows: int | None = MAX_ROWS,
                        max_classes: int = 12, *, encoding: FrameEncoding | None = None) -> ClassificationData | None:
    """Encode a PUBLIC table, reading categories and numeric ranges from the data.

    Rows with a missing value are dropped. A column with at most `max_categories` distinct
    values is categorical (its sorted values are its domain); other numeric columns are cut into
    `bins` equal-width bins over [min, max] of the column. Rare classes beyond `max_classes`
    are merged into the last one. `encoding`, when given, replaces the keyword parameters and
    may refuse a table (None: not two classes, or too few attributes). Only for public data:
    reading a range or a category list off a private table would leak it.
    """
    import pandas as pd

    if encoding is None:
        encoding = FrameEncoding(bins, max_categories, max_rows, max_classes)
    if target not in frame.columns:
        raise KeyError(f"{name}: no column {target!r}")
    keep = [c for c in frame.columns if c not in set(drop) | {"rownames"}]
    frame = frame[keep].dropna()
    if encoding.max_rows is not None and len(frame) > encoding.max_rows:
        frame = frame.sample(encoding.max_rows, random_state=0)
    labels, y = _categories(frame[target].to_numpy(), encoding.text_order)
    if encoding.two_class and len(labels) != 2:
        return None
    if len(labels) > encoding.max_classes:
        order = np.argsort(-np.bincount(y, minlength=len(labels)), kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        y = np.minimum(rank[y], encoding.max_classes - 1)
        labels = [labels[i] for i in order[:encoding.max_classes - 1]] + ["other"]
    columns, names, values = [], [], []
    for column in frame.columns:
        if column == target:
            continue
        series = frame[column]
        numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
        if numeric and pd.Series(series.to_numpy()).nunique() > encoding.max_categories:
            codes, size = _equal_width(series.to_numpy().astype(float), encoding.bins)
            domain = tuple(f"bin {b + 1}/{size}" for b in range(size)) if encoding.bin_labels else tuple(range(size))
        else:
            categories, codes = _categories(series.to_numpy(), encoding.text_order)
            domain = tuple(categories)
        if len(domain) < 2 or (encoding.max_domain is not None and len(domain) > encoding.max_domain):
            continue  # a constant column carries nothing
        columns.append(codes)
        names.append(str(column))
        values.append(domain)
    if len(columns) < encoding.min_attributes:
        return None
    X = np.column_stack(columns) if columns else np.zeros((len(frame), 0), dtype=np.int64)
    return ClassificationData(X, y, tuple(len(v) for v in values), len(labels), tuple(names), tuple(labels),
                              name, group or name, tuple(values))


def _categories(values: np.ndarray, text_order: bool = False) -> tuple[list[Any], np.ndarray]:
    """Sorted distinct values (as text when they do not sort, or when asked) and the codes of `values`."""
    import pandas as pd

    uniques = pd.unique(pd.Series(values))
    try:
        categories = sorted(uniques, key=str) if text_order else sorted(uniques)
    except TypeError:
        categories = sorted(uniques, key=str)
    codes = pd.Index(categories).get_indexer(values)
    return list(categories), codes.astype(np.int64)


def _equal_width(values: np.ndarray, bins: int) -> tuple[np.ndarray, int]:
    """Codes of `bins` equal-width bins over the (public) range of `values`."""
    low, high = float(values.min()), float(values.max())
    if high <= low:
        return np.zeros(len(values), dtype=np.int64), 1
    codes = ((values - low) / (high - low) * bins).astype(np.int64)
    return np.clip(codes, 0, bins - 1), bins
