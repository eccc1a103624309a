"""Split utilities of the tree learners and their sensitivities (Friedman & Schuster 2010).

A utility scores splitting the rows of one node on one attribute, from the node's contingency
table tau[j, c] (rows with attribute value j and class c); tau_j = sum_c tau[j, c]. All three
are *count-weighted*, so a large node's scores are far apart compared to the sensitivity:

  * "entropy":  sum_j sum_c tau[j,c] log2(tau[j,c] / tau_j)    (minus the conditional entropy
                times the node size; larger is better, argmax = ID3/C4.5 information gain).
                Adding a row to cell (j, c) changes it by g(tau[j,c]) - g(tau_j), with
                g(x) = (x+1) log2(x+1) - x log2 x increasing, so by a value in
                [-(log2(N+1) + 1/ln 2), 0] where N bounds the node size: sensitivity
                log2(N+1) + 1/ln 2 (F&S 2010, Sec. 5.2). N is the public `max_rows` bound.
                F&S assume the data has at most N rows; a private learner cannot check that
                without revealing it, so it scores with x log2 x CONTINUED LINEARLY above N
                (`split_utility(..., max_rows=N)`): the same utility on nodes of at most N
                rows, and for any size a convex h whose steps g(x) = h(x+1) - h(x) lie in
                [0, log2 N + 1/ln 2], so the bound and the monotonicity hold with no limit
                on the rows (nothing fails on a large table).
  * "gini":     -sum_j tau_j (1 - sum_c (tau[j,c] / tau_j)^2); adding a row raises the
                impurity tau_j - sum_c tau[j,c]^2 / tau_j by a value in [0, 2): sensitivity 2.
  * "max":      sum_j max_c tau[j,c] (the rows a majority vote per branch gets right);
                adding a row raises it by 0 or 1: sensitivity 1.

All three are *monotone*: adding one row moves every candidate's utility in the same
direction (entropy and gini down, max up). For monotone utilities the exponential mechanism
P(a) ~ exp(eps u(a) / Delta) is eps-DP (McSherry & Talwar 2007; Dwork & Roth 2014, remark
after Thm 3.10): the ratio exp(eps (u'(a) - u(a)) / Delta) lies in [1, e^eps] (or in
[e^-eps, 1]) and the normalising constants move the opposite way by at most the same factor.
`UTILITY_IS_MONOTONE` records this so the mechanism can drop the usual factor 2.
"""

from __future__ import annotations

import math

import numpy as np

SPLIT_UTILITIES = ("entropy", "gini", "max")
UTILITY_IS_MONOTONE = {"entropy": True, "gini": True, "max": True}


def utility_sensitivity(name: str, max_rows: int) -> float:
    """The global sensitivity of a split utility (privacy unit: one row added or removed).

    Args:
        name: "entropy", "gini" or "max".
        max_rows: public upper bound on the rows of a node (only "entropy" uses it).
    """
    if name == "entropy":
        return math.log2(max_rows + 1) + 1 / math.log(2)
    if name == "gini":
        return 2.0
    if name == "max":
        return 1.0
    raise ValueError(f"unknown split utility {name!r}; choose one of {SPLIT_UTILITIES}")


def _xlog2x(counts: np.ndarray) -> np.ndarray:
    """x log2 x elementwise, with 0 log 0 = 0."""
    safe = np.where(counts > 0, counts, 1.0)
    return counts * np.log2(safe)


def _xlog2x_capped(counts: np.ndarray, cap: int) -> np.ndarray:
    """x log2 x up to `cap`, continued linearly above it with its slope there, log2 cap + 1/ln 2.

    The result h is convex and non-decreasing in steps: for whole x, g(x) = h(x+1) - h(x) is
    h'(xi) for some xi in (x, x+1) while x + 1 <= cap (so at most h'(cap)), and exactly h'(cap)
    for x >= cap. Hence 0 <= g(x) <= log2 cap + 1/ln 2 for every x >= 0, which is what the
    entropy utility's sensitivity argument needs (see the module docstring).
    """
    cap = max(int(cap), 1)
    slope = math.log2(cap) + 1 / math.log(2)
    above = counts > cap
    return np.where(above, cap * math.log2(cap) + (counts - cap) * slope, _xlog2x(np.where(above, 0.0, counts)))


def split_utility(name: str, table: np.ndarray, max_rows: int | None = None) -> np.ndarray:
    """Utilities of splitting each node on one attribute.

    Args:
        name: "entropy", "gini" or "max".
        table: counts, shape (nodes, attribute values, classes).
        max_rows: for "entropy" in a private learner, the public bound N of its sensitivity:
            counts above it are scored by the linear continuation (`_xlog2x_capped`), so the
            sensitivity log2(N+1) + 1/ln 2 holds however many rows there are. None: exact.

    Returns:
        One utility per node, shape (nodes,).
    """
    table = table.astype(np.float64, copy=False)
    branch = table.sum(axis=2)
    if name == "entropy" and max_rows is not None:
        return (_xlog2x_capped(table, max_rows).sum(axis=(1, 2))
                - _xlog2x_capped(branch, max_rows).sum(axis=1))
    if name == "entropy":
        return _xlog2x(table).sum(axis=(1, 2)) - _xlog2x(branch).sum(axis=1)
    if name == "gini":
        squares = (table ** 2).sum(axis=2)
        impurity = branch - np.divide(squares, branch, out=np.zeros_like(squares), where=branch > 0)
        return -impurity.sum(axis=1)
    if name == "max":
        return table.max(axis=2).sum(axis=1)
    raise ValueError(f"unknown split utility {name!r}; choose one of {SPLIT_UTILITIES}")


def node_entropy_utility(class_counts: np.ndarray) -> np.ndarray:
    """The entropy utility of not splitting: sum_c n_c log2(n_c / n), shape (nodes,).

    split_utility("entropy") minus this, divided by the node size, is the information gain.
    """
    class_counts = class_counts.astype(np.float64, copy=False)
    return _xlog2x(class_counts).sum(axis=1) - _xlog2x(class_counts.sum(axis=1))
