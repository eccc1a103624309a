"""Public domains of classifier features, and the encoding of tables into integer codes.

Every feature of a classifier (trees, rule lists, ...) has a *public* domain declared by the
analyst: a list of categories, or `NumericBins(lower, upper, bins)` for a numeric column cut
into equal-width bins over a declared range. Nothing here reads a domain, a range or a class
list from the data. Encoding follows the rules of `jostle.data.schema` when a private table is
loaded:

  * a numeric value is clamped into [lower, upper] and mapped to its bin (the last bin is
    closed on the right); a missing numeric value is an error;
  * a categorical value outside its declared list (or missing) is an error naming the column.

These errors describe the data, so they are meant for the data's curator who runs the fit,
exactly like the loader's errors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class NumericBins:
    """A numeric feature cut into `bins` equal-width public bins over [lower, upper].

    Args:
        lower: declared lower bound (public).
        upper: declared upper bound (public), greater than `lower`.
        bins: number of bins, at least 1.
    """

    lower: float
    upper: float
    bins: int

    def __post_init__(self) -> None:
        if not (math.isfinite(self.lower) and math.isfinite(self.upper)) or self.upper <= self.lower:
            raise ValueError(f"NumericBins needs finite bounds lower < upper, got [{self.lower}, {self.upper}]")
        if int(self.bins) != self.bins or self.bins < 1:
            raise ValueError(f"NumericBins needs a whole number of bins >= 1, got {self.bins}")

    def edges(self) -> np.ndarray:
        """The bins + 1 public bin edges."""
        return np.linspace(self.lower, self.upper, int(self.bins) + 1)

    def labels(self) -> list[str]:
        """Readable labels "[a, b)" (the last bin "[a, b]")."""
        edges = self.edges()
        labels = [f"[{_number(a)}, {_number(b)})" for a, b in zip(edges[:-1], edges[1:])]
        labels[-1] = labels[-1][:-1] + "]"
        return labels

    def encode(self, values: Any, column: str) -> np.ndarray:
        """Bin codes 0..bins-1 of `values` after clamping them into [lower, upper]."""
        numbers = pd.to_numeric(pd.Series(np.asarray(values, dtype=object)), errors="coerce").to_numpy(float)
        if np.isnan(numbers).any():
            raise ValueError(f"column {column!r}: a missing (NaN) or non-numeric value in a numeric column")
        clamped = np.clip(numbers, self.lower, self.upper)
        width = (self.upper - self.lower) / self.bins
        return np.minimum(((clamped - self.lower) / width).astype(np.int64), int(self.bins) - 1)


Domain = Sequence[Any] | NumericBins


def _number(value: float) -> str:
    return f"{value:g}"


@dataclass(frozen=True)
class EncodedDomains:
    """The public description of a feature table after encoding.

    Attributes:
        names: feature names, in column order.
        sizes: number of codes of each feature (its domain size).
        labels: readable label of every code of every feature, for printouts.
    """

    names: tuple[str, ...]
    sizes: np.ndarray
    labels: tuple[tuple[str, ...], ...]


def _domain_list(domains: Sequence[Domain] | Mapping[str, Domain], X: Any,
                 feature_names: Sequence[str] | None) -> tuple[list[str], list[Domain]]:
    """Pair each column of X with its declared domain."""
    columns = list(X.columns) if isinstance(X, pd.DataFrame) else None
    if isinstance(domains, Mapping):
        if columns is None:
            if feature_names is None:
                raise ValueError("domains given by column name need a DataFrame X or feature_names")
            columns = list(feature_names)
        missing = [c for c in columns if c not in domains]
        if missing:
            raise ValueError(f"no public domain declared for column(s) {missing}")
        return [str(c) for c in columns], [domains[c] for c in columns]
    domain_list = list(domains)
    names = [str(c) for c in (columns if columns is not None else
                              (feature_names if feature_names is not None else
                               [f"x{i}" for i in range(len(domain_list))]))]
    if len(names) != len(domain_list):
        raise ValueError(f"{len(domain_list)} domains declared for {len(names)} columns")
    return names, domain_list


def describe_domains(domains: Sequence[Domain] | Mapping[str, Domain], X: Any = None,
                     feature_names: Sequence[str] | None = None) -> EncodedDomains:
    """The public `EncodedDomains` of the declared domains (no data is read).

    `X` is consulted only for its column names when `domains` is keyed by name.
    """
    names, domain_list = _domain_list(domains, X if X is not None else np.empty((0, 0)), feature_names)
    sizes, labels = [], []
    for name, domain in zip(names, domain_list):
        if isinstance(domain, NumericBins):
            labels.append(tuple(domain.labels()))
        else:
            if isinstance(domain, tuple) and _two_numbers(domain):
                lower, upper = domain
                raise ValueError(
                    f"column {name!r}: the domain {domain!r} looks like numeric bounds, which need public bins: "
                    f"declare NumericBins({lower!r}, {upper!r}, bins) (e.g. bins=10) for a numeric column, or a "
                    f"list [{lower!r}, {upper!r}] if these are its only two categories")
            if isinstance(domain, (str, bytes)) or not isinstance(domain, (Sequence, np.ndarray, pd.Index)):
                raise ValueError(f"column {name!r}: a domain is a list of categories or NumericBins(lower, upper, "
                                 f"bins), got {domain!r}")
            values = list(domain)
            if not values:
                raise ValueError(f"column {name!r}: an empty categorical domain")
            if len(set(map(repr, values))) != len(values):
                raise ValueError(f"column {name!r}: the categorical domain repeats a value")
            labels.append(tuple(str(v) for v in values))
        sizes.append(len(labels[-1]))
    return EncodedDomains(tuple(names), np.asarray(sizes, dtype=np.int64), tuple(labels))


def encode_features(X: Any, domains: Sequence[Domain] | Mapping[str, Domain],
                    feature_names: Sequence[str] | None = None) -> tuple[np.ndarray, EncodedDomains]:
    """Integer codes (rows x features, int64) of X under the declared public domains.

    Args:
        X: a DataFrame or a 2-D array-like, one column per declared domain.
        domains: one domain per column (a sequence in column order, or a mapping by name).
        feature_names: names of the columns when X is an array.

    Returns:
        The code matrix and the public `EncodedDomains`.
    """
    names, domain_list = _domain_list(domains, X, feature_names)
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=object))
    if frame.shape[1] != len(domain_list):
        raise ValueError(f"X has {frame.shape[1]} columns but {len(domain_list)} domains are declared")
    described = describe_domains(dict(zip(names, domain_list)), None, names)
    codes = np.empty((len(frame), len(domain_list)), dtype=np.int64)
    for j, (name, domain) in enumerate(zip(names, domain_list)):
        column = frame.iloc[:, j]
        if isinstance(domain, NumericBins):
            codes[:, j] = domain.encode(column.to_numpy(), name)
        else:
            codes[:, j] = encode_categories(column.to_numpy(), list(domain), f"column {name!r}")
    return codes, described


def encode_categories(values: Any, categories: Sequence[Any], what: str) -> np.ndarray:
    """Codes 0..len(categories)-1 of `values`; a value outside the declared list is an error."""
    array = np.asarray(values, dtype=object).ravel()
    codes = _small_lookup(array, categories)
    if codes is None:
        codes = pd.Index(list(categories), dtype=object).get_indexer(array).astype(np.int64)
    if (codes < 0).any():
        bad = array[codes < 0][0]
        hint = "declare it in the domain"
        if _two_numbers(categories) and _is_number(bad):
            lower, upper = categories
            hint += (f", or, if {lower!r} and {upper!r} were meant as numeric bounds, declare "
                     f"NumericBins({lower!r}, {upper!r}, bins)")
        raise ValueError(f"{what}: value {bad!r} is outside the declared public domain (or missing); {hint}")
    return codes


# Up to this many values, a dict lookup beats building a pandas Index (tens of microseconds
# per call, which dominated the fits and predictions on the audits' four-row tables).
SMALL_LOOKUP_ROWS = 256


def _small_lookup(array: np.ndarray, categories: Sequence[Any]) -> np.ndarray | None:
    """The codes `pd.Index(categories).get_indexer(array)` gives, by a dict, for a few values
    that are all found; None otherwise (the caller then asks pandas, which alone decides every
    missing or unhashable value, equal categories such as 1 and True, and a missing category:
    pandas matches None to a NaN category but not to a None one). A dict finds a value exactly
    where pandas' object hash table does (hash, then ==) when the categories are pairwise
    unequal and none is missing, which is checked; a missing value then finds nothing."""
    if len(array) > SMALL_LOOKUP_ROWS:
        return None
    try:
        lookup = {category: code for code, category in enumerate(categories)}
        if len(lookup) != len(categories) or any(_missing(category) for category in categories):
            return None
        codes = np.fromiter((lookup.get(value, -1) for value in array), dtype=np.int64, count=len(array))
    except TypeError:  # an unhashable value
        return None
    return None if (codes < 0).any() else codes


def _missing(value: Any) -> bool:
    """Whether pandas reads a scalar as missing (None, NaN, NA, NaT)."""
    answer = pd.isna(value)
    return isinstance(answer, (bool, np.bool_)) and bool(answer)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _two_numbers(domain: Sequence[Any]) -> bool:
    """Whether a declared domain is two numbers, which reads like (lower, upper) bounds."""
    values = list(domain)
    return len(values) == 2 and all(_is_number(v) for v in values)
