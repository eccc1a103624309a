"""C4.5 pessimistic (error-based) pruning, on exact or on noisy class counts.

Quinlan (C4.5, 1993, ch. 4) estimates the errors a node would make on unseen rows as the
upper limit of a binomial confidence interval (confidence level CF, 0.25 by default) on its
training errors E out of N rows. A subtree is replaced by a leaf when the leaf's estimate is
no larger than the sum of its branches' estimates (plus 0.1, as in C4.5's code). Subtree
raising is not done.

For a private tree the counts are the leaves' noisy counts; an inner node holds the sum of its
leaves' counts, clipped at 0 after summing: pruning is post-processing of released values and costs
no epsilon (Friedman & Schuster 2010, Sec. 5.3, prune DiffP-C4.5 trees this way).
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

from jostle.learners.trees.structure import TreeArrays, sum_children_into_parents


def pessimistic_extra_errors(n: np.ndarray, e: np.ndarray, confidence: float = 0.25) -> np.ndarray:
    """Extra errors U_CF(E, N) * N - E of C4.5's pessimistic estimate (vectorised).

    Args:
        n: rows at each node (may be fractional for noisy counts).
        e: training errors at each node, 0 <= e <= n.
        confidence: C4.5's CF, in (0, 1).
    """
    n = np.asarray(n, dtype=np.float64)
    e = np.minimum(np.asarray(e, dtype=np.float64), n)
    z = NormalDist().inv_cdf(1.0 - confidence)
    safe_n = np.where(n > 0, n, 1.0)

    def wilson(errors: np.ndarray) -> np.ndarray:
        # upper end of the Wilson interval with continuity correction 0.5, times n, minus errors
        f = (errors + 0.5) / safe_n
        root = np.sqrt(np.maximum(f / safe_n - f * f / safe_n + z * z / (4 * safe_n * safe_n), 0.0))
        upper = (f + z * z / (2 * safe_n) + z * root) / (1 + z * z / safe_n)
        general = upper * safe_n - errors
        return np.where(errors + 0.5 >= safe_n, np.maximum(safe_n - errors, 0.0), general)

    base = safe_n * (1.0 - confidence ** (1.0 / safe_n))  # zero errors: exact binomial limit
    at_one = wilson(np.ones_like(safe_n))
    small = base + e * (at_one - base)  # C4.5 interpolates for 0 < e < 1
    extra = np.where(e < 1, small, wilson(e))
    return np.where(n > 0, extra, 0.0)


def prune_pessimistic(tree: TreeArrays, confidence: float = 0.25) -> int:
    """Prune `tree` in place by C4.5's error-based rule; returns the number of subtrees cut.

    The tree must carry class counts (leaves released as counts, not as labels).
    """
    if tree.counts is None:
        raise ValueError("pessimistic pruning needs class counts at the leaves")
    is_leaf = tree.attribute < 0
    # an inner node's counts are the sums of its leaves' (noisy) counts; clip after summing, so
    # the clipping of many near-empty leaves does not pile up into phantom rows
    counts = np.clip(sum_children_into_parents(tree.counts, tree.parent, tree.depth, is_leaf), 0.0, None)
    total = counts.sum(axis=1)
    errors = total - counts.max(axis=1)
    as_leaf = errors + pessimistic_extra_errors(total, errors, confidence)
    estimate = np.where(is_leaf, as_leaf, 0.0)
    cut = 0
    for level in range(int(tree.depth.max()), 0, -1):
        nodes = np.flatnonzero(tree.depth == level)
        parents = np.unique(tree.parent[nodes])
        subtree = np.zeros(tree.attribute.size)
        np.add.at(subtree, tree.parent[nodes], estimate[nodes])
        inner = parents[tree.attribute[parents] >= 0]
        prune = as_leaf[inner] <= subtree[inner] + 0.1
        tree.attribute[inner[prune]] = -1
        cut += int(prune.sum())
        estimate[inner] = np.where(prune, as_leaf[inner], subtree[inner])
    return cut
