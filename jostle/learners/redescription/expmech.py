"""createDTExpMech: a fixed-depth tree whose every split is chosen by the exponential mechanism.

Algorithm 2 of the paper (Friedman and Schuster 2010, without node counts and with a fixed
depth d): level by level, each node of the level picks one of the view's public split
candidates with probability proportional to exp(eps_level u / Delta), u the Gini utility of the
split on the node's entities and target classes.

**Utility and sensitivity.** For a binary split of a node into children j with class counts
t[j, c] (t_j = sum_c t[j, c]),

    u = - sum_j (t_j - sum_c t[j, c]^2 / t_j)        (0 for an empty child)

the count-weighted Gini of Friedman and Schuster. Adding one entity adds 1 to one cell t[j, c]
of one child; that child's impurity t_j - sum_c t[j, c]^2 / t_j rises by a value in [0, 2)
(F&S 2010, section 5.2), so u moves by at most 2 and always downwards: sensitivity 2, and
monotone. For a monotone utility the exponential mechanism with exp(eps u / Delta) (no factor 2)
is eps-DP (Dwork and Roth 2014, after Theorem 3.10), which is what `choose_exponential_rows(...,
monotone=True)` samples. The target classes do not depend on the entity being added or removed
beyond its own row: they are an attribute's public-bin code of the entity itself, or the leaf of
the entity in a tree already released (a public function applied to the entity's own row).

**Budget.** Each level spends eps / d; the nodes of one level hold disjoint entities, so their
choices compose in parallel (each row of the utility matrix is one node); d levels compose
sequentially: the tree is eps-DP. The caller charges eps before calling. No node count is
released (the paper's modification a)).

**Sampling.** Utilities are negative and large on large data (about -t / 2); the reference code
computes exp(eps q / 4) on them, which underflows to 0 for every candidate on large data and then
picks the first candidate. Here the exact sampler works on the differences to the best candidate
(rejection sampling on exact values, `jostle.privacy.safe_noise.choose_exponential_rows`), and
the simulation path uses Gumbel-max on the scaled utilities: neither ever forms exp(u).

Split candidates come from the public domains (`views.ViewSchema.splits`), never from data
values.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from jostle.learners.redescription.trees import SplitTree
from jostle.learners.redescription.views import TwoViews
from jostle.privacy import safe_noise

GINI_SENSITIVITY = 2


def _impurity(counts: np.ndarray) -> np.ndarray:
    """t - sum_c t_c^2 / t over the last axis (0 where t = 0)."""
    sizes = counts.sum(axis=-1)
    squares = (counts.astype(np.float64) ** 2).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sizes > 0, sizes - squares / np.maximum(sizes, 1), 0.0)


def split_utilities(views: TwoViews, view: int, node: np.ndarray, n_nodes: int, target: np.ndarray,
                    n_classes: int) -> np.ndarray:
    """The Gini utility of every public split candidate at every node of one level.

    Args:
        views: The data.
        view: Which view's candidates.
        node: The node (0..n_nodes - 1 within the level) of every entity.
        n_nodes: Nodes in the level.
        target: The class of every entity.
        n_classes: The number of classes.

    Returns:
        A float matrix, nodes x candidates.
    """
    schema = views.schemas[view]
    codes = views.codes[view]
    splits = schema.splits
    utilities = np.empty((n_nodes, len(splits)), dtype=np.float64)
    for attribute_index, attribute in enumerate(schema.attributes):
        columns = np.flatnonzero(splits.attribute == attribute_index)
        if columns.size == 0:
            continue
        width = attribute.n_codes
        flat = (node * width + codes[:, attribute_index]) * n_classes + target
        table = np.bincount(flat, minlength=n_nodes * width * n_classes).reshape(n_nodes, width, n_classes)
        totals = table.sum(axis=1)
        values = splits.value[columns]
        if attribute.kind == "numeric":
            left = np.cumsum(table, axis=1)[:, values, :]
        else:
            left = table[:, values, :]
        right = totals[:, None, :] - left
        utilities[:, columns] = -(_impurity(left) + _impurity(right))
    return utilities


def exp_mech_tree(views: TwoViews, view: int, target: np.ndarray, n_classes: int, depth: int,
                  epsilon: Fraction | float, noise: Any) -> SplitTree:
    """createDTExpMech: a depth-`depth` tree on `view`, eps / depth per level (module docstring).

    The caller has charged `epsilon`.
    """
    target = np.asarray(target, dtype=np.int64)
    level_epsilon = Fraction(epsilon) / depth
    node = np.zeros(views.n_entities, dtype=np.int64)
    candidate: list[int] = []
    schema = views.schemas[view]
    splits = schema.splits
    codes = views.codes[view]
    for level in range(depth):
        n_nodes = 1 << level
        utilities = split_utilities(views, view, node, n_nodes, target, n_classes)
        chosen = safe_noise.choose_exponential_rows(noise, utilities, sensitivity=GINI_SENSITIVITY,
                                                    epsilon=level_epsilon, monotone=True)
        chosen = np.asarray(chosen, dtype=np.int64)
        candidate.extend(int(c) for c in chosen)
        if level + 1 < depth:
            picked = chosen[node]
            column = codes[np.arange(node.size), splits.attribute[picked]]
            yes = np.where(splits.numeric[picked], column <= splits.value[picked], column == splits.value[picked])
            node = 2 * node + np.where(yes, 0, 1)
    return SplitTree(view, depth, tuple(candidate))
