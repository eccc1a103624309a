"""Metafeatures of the tree family: the standard ones of a classification table, and the
"contingency" family read off one cheap noisy release.

The standard ones are the learner kit's (`jostle.learnerkit.metafeatures.CLASSIFICATION_METAFEATURES`):
public ones (attributes, branching, classes, epsilon) cost nothing; the noisy ones (the table's
size, its class balance) read the private rows and spend the epsilon they are given.

Added for issue 27 (privacy unit: one row added or removed):

* Public, from the schema alone: `log_domain_product` (log10 of the product of the attribute
  domain sizes: the cells a full tree would have), `max_branching` (the largest domain).
* `contingency_*`: five metafeatures post-processing ONE shared release, "contingency": for
  every attribute j, the table of counts n_j[v, c] of rows with value v and class c. A row adds
  one count to each of the k attribute tables, so the L1 sensitivity of the whole release is k
  (the number of attributes, public); two-sided geometric noise of parameter eps / k on every
  cell makes it eps-DP (Ghosh et al. 2009). It is charged once (the engine's `release`
  budget unit) and memoised in the measurement's context, so every `contingency_*` reads the
  same noisy values; the rest is post-processing of those values and of public facts:
    - `contingency_log_rows_per_cell`: log10 of the noisy rows (the mean over attributes of
      each table's noisy total) over the product of the domain sizes: how densely the rows
      fill the attribute space (Nursery is dense, HIV-1 is sparse);
    - `contingency_class_balance`: the largest class's share of the noisy class marginal
      (summed over the k tables, clipped at 0);
    - `contingency_max_association` / `contingency_mean_association`: the largest / mean over
      attributes of Cramer's V squared between the attribute and the class, from the noisy
      counts, less the noise's expected share (0: no attribute tells the class; 1: one
      attribute decides it);
    - `contingency_one_rule_gain`: the largest gain in training accuracy, over the majority
      class, of predicting the class from one attribute alone (sum_v max_c n_j[v, c] -
      max_c n_c, over the rows), a signal a split must beat its noise with.

Their fingerprints hash the source of everything they call (`code_digest`).
"""

from __future__ import annotations

import math
from typing import Any

from fractions import Fraction

import numpy as np

from jostle.choicemaker.family import MetafeatureContext
from jostle.learnerkit.metafeatures import CLASSIFICATION_METAFEATURES, FunctionMetafeature, MeasureFunction
from jostle.learnerkit.tables import ClassificationData
from jostle.privacy import replay

__all__ = ["CONTINGENCY_METAFEATURES", "TREE_METAFEATURES", "TreeMeasureFunction", "TreeMetafeature",
           "TreeMetafeatureContext", "contingency_release"]

TreeMetafeature = FunctionMetafeature
TreeMetafeatureContext = MetafeatureContext  # the engine's context: epsilon, total_epsilon, released
TreeMeasureFunction = MeasureFunction


# ---------------------------------------------------------------- public, from the schema
def _log_domain_product(data: ClassificationData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    return float(np.sum(np.log10(data.domain_sizes))) if data.domain_sizes else 0.0  # public domain sizes


def _max_branching(data: ClassificationData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    return float(max(data.domain_sizes)) if data.domain_sizes else 1.0  # public domain sizes


# ---------------------------------------------------------------- one noisy contingency release
def contingency_release(data: ClassificationData, eps: float, noise: Any,
                        context: MetafeatureContext) -> list[np.ndarray]:
    """Every attribute's (value x class) count table, released with `eps` (noisy, as floats).

    Sensitivity: one row added or removed changes exactly one cell of each of the k attribute
    tables by 1, so the L1 sensitivity of the concatenated tables is k (public: the schema);
    two-sided geometric noise with parameter eps / k on every cell is eps-DP (eps / k computed as an exact
    Fraction: a float division can round up and run above the charge, issue 11 hole 9). Memoised in
    `context.releases` so the `contingency_*` metafeatures of one measurement share one release,
    charged once by the engine (their common `release`); a context without that memo is refused
    (a second draw would be an uncharged release).
    """
    memo = getattr(context, "releases", None)
    if memo is None:
        raise TypeError("the contingency metafeatures need a context with a `releases` memo")
    key = ("contingency", float(eps))
    if key not in memo:
        k, n_classes = data.n_attributes, data.n_classes
        if k == 0:
            memo[key] = []
            return memo[key]
        exact = [np.bincount(data.X[:, j] * n_classes + data.y, minlength=size * n_classes)
                 for j, size in enumerate(data.domain_sizes)]
        flat = np.concatenate(exact)
        draws = np.asarray(noise.two_sided_geometric(Fraction(eps) / k, flat.size), dtype=np.int64).ravel()
        noisy = np.asarray(replay.released(noise, "contingency tables", flat, flat + draws, "l1", k, 1), dtype=float)
        tables, start = [], 0
        for size in data.domain_sizes:
            tables.append(noisy[start:start + size * n_classes].reshape(size, n_classes))
            start += size * n_classes
        memo[key] = tables
    return memo[key]


def _clipped(tables: list[np.ndarray]) -> list[np.ndarray]:
    return [np.clip(table, 0.0, None) for table in tables]


def _contingency_log_rows_per_cell(data: ClassificationData, eps: float, noise: Any,
                                   context: MetafeatureContext) -> float:
    # Post-processing of the release: the mean of the k tables' noisy totals estimates the rows
    # (each total's noise has variance about cells * 2 k^2 / eps^2; averaging k of them helps);
    # floored at 1 row, over the public product of the domain sizes, in log10.
    tables = contingency_release(data, eps, noise, context)
    if not tables:
        return 0.0
    rows = max(float(np.mean([table.sum() for table in tables])), 1.0)
    return math.log10(rows) - _log_domain_product(data, eps, noise, context)


def _contingency_class_balance(data: ClassificationData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    # Post-processing: the class marginal summed over the k tables, clipped at 0; the largest
    # class's share (1 / C when nothing is positive).
    tables = _clipped(contingency_release(data, eps, noise, context))
    if not tables:
        return 1.0 / max(data.n_classes, 1)
    marginal = np.sum([table.sum(axis=0) for table in tables], axis=0)
    return float(marginal.max() / marginal.sum()) if marginal.sum() > 0 else 1.0 / data.n_classes


def _geometric_variance(eps: float, k: int) -> float:
    """The variance of one cell's noise, two-sided geometric with parameter eps / k (public)."""
    decay = math.exp(-eps / max(k, 1))
    return 2.0 * decay / (1.0 - decay) ** 2


def _associations(data: ClassificationData, eps: float, noise: Any, context: MetafeatureContext) -> list[float]:
    """Each attribute's association with the class, from the noisy table (post-processing):
    Cramer's V squared, chi^2 / (N (min(values, classes) - 1)), with chi^2 = sum (O - E)^2 / E
    over the clipped noisy cells (E from the noisy margins) LESS the noise's expected share of it,
    sum var / E (var the public noise variance), so that a table without association scores
    about 0 at any epsilon; clipped to [0, 1]. 0 for an empty table or a single class."""
    variance = _geometric_variance(eps, data.n_attributes) if eps > 0 else 0.0
    values = []
    for table in _clipped(contingency_release(data, eps, noise, context)):
        total = table.sum()
        width = min(table.shape) - 1
        if total <= 0 or width < 1:
            values.append(0.0)
            continue
        expected = table.sum(axis=1, keepdims=True) @ table.sum(axis=0, keepdims=True) / total
        present = expected > 0
        chi2 = float(np.sum((table[present] - expected[present]) ** 2 / expected[present]))
        bias = float(np.sum(variance / expected[present]))
        values.append(float(np.clip((chi2 - bias) / (total * width), 0.0, 1.0)))
    return values


def _contingency_max_association(data: ClassificationData, eps: float, noise: Any,
                                 context: MetafeatureContext) -> float:
    return max(_associations(data, eps, noise, context), default=0.0)  # post-processing of the release


def _contingency_mean_association(data: ClassificationData, eps: float, noise: Any,
                                  context: MetafeatureContext) -> float:
    values = _associations(data, eps, noise, context)  # post-processing of the release
    return float(np.mean(values)) if values else 0.0


def _contingency_one_rule_gain(data: ClassificationData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    # Post-processing: per attribute, (sum over values of the largest class count - the largest
    # class total) over the table's total, from the clipped noisy table; the largest over attributes.
    gains = [0.0]
    for table in _clipped(contingency_release(data, eps, noise, context)):
        total = table.sum()
        if total > 0:
            gains.append(float((table.max(axis=1).sum() - table.sum(axis=0).max()) / total))
    return float(np.clip(max(gains), 0.0, 1.0))


CONTINGENCY = "contingency"
CONTINGENCY_SENSITIVITY = "k (one count in each of the k attribute x class tables)"

CONTINGENCY_METAFEATURES: dict[str, FunctionMetafeature] = {m.name: m for m in [
    FunctionMetafeature("contingency_log_rows_per_cell", True, _contingency_log_rows_per_cell,
                        CONTINGENCY_SENSITIVITY, release=CONTINGENCY),
    FunctionMetafeature("contingency_class_balance", True, _contingency_class_balance,
                        CONTINGENCY_SENSITIVITY, release=CONTINGENCY),
    FunctionMetafeature("contingency_max_association", True, _contingency_max_association,
                        CONTINGENCY_SENSITIVITY, release=CONTINGENCY),
    FunctionMetafeature("contingency_mean_association", True, _contingency_mean_association,
                        CONTINGENCY_SENSITIVITY, release=CONTINGENCY),
    FunctionMetafeature("contingency_one_rule_gain", True, _contingency_one_rule_gain,
                        CONTINGENCY_SENSITIVITY, release=CONTINGENCY),
]}
"""The metafeatures read off the one noisy contingency release (module docstring)."""

TREE_METAFEATURES: dict[str, FunctionMetafeature] = {
    **CLASSIFICATION_METAFEATURES,
    "log_domain_product": FunctionMetafeature("log_domain_product", False, _log_domain_product, "public"),
    "max_branching": FunctionMetafeature("max_branching", False, _max_branching, "public"),
    **CONTINGENCY_METAFEATURES,
}
