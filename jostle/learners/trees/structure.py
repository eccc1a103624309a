"""A trained decision tree stored as flat NumPy arrays, and vectorised prediction.

Node 0 is the root. An inner node n splits on attribute `attribute[n]`; its child for code v
of that attribute is node `child_start[n] + v` (children of a node are contiguous and created
after their parent, so node ids increase with depth). A leaf has `attribute[n] == -1`.
A BINARY split (`split_value[n] >= 0`) has two children instead: `child_start[n]` for the rows
whose attribute equals `split_value[n]`, `child_start[n] + 1` for all the others.
Pruning turns an inner node into a leaf; its former descendants stay in the arrays but can no
longer be reached.

Everything in a trained tree is public: the structure was chosen by released (noisy) choices
or by public randomness, and the counts are noisy releases or sums of them (post-processing).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class TreeArrays:
    """One trained tree.

    Attributes:
        attribute: split attribute of each node, -1 for a leaf.
        child_start: id of the first child of each inner node.
        parent: parent id (-1 for the root).
        depth: depth of each node (root 0).
        branch_value: the parent's attribute code leading to the node (-1 for the root).
        counts: class counts per node (noisy for a private tree; an inner node holds the sum
            of its children), or None when leaves release only a label.
        proba: class distribution used for prediction at each node.
        epsilon: the epsilon this tree cost (its own composed charges).
        leaf_epsilon: the epsilon of the leaves' release (0 for an exact tree).
        released_leaves: how many released leaf count vectors each node's counts sum (1 at a
            leaf as grown; pruning keeps it), so each count's noise variance is known.
        split_value: per node, the value of a binary split (attribute == value, or not), -1 for
            a multiway split or a leaf; None when the tree has only multiway splits.
    """

    attribute: np.ndarray
    child_start: np.ndarray
    parent: np.ndarray
    depth: np.ndarray
    branch_value: np.ndarray
    counts: np.ndarray | None
    proba: np.ndarray
    epsilon: float = 0.0
    leaf_epsilon: float = 0.0
    released_leaves: np.ndarray | None = None
    split_value: np.ndarray | None = None

    def child_of(self, nodes: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """The child of each inner node in `nodes` reached by the attribute codes `codes`."""
        if self.split_value is None:
            return self.child_start[nodes] + codes
        value = self.split_value[nodes]
        return self.child_start[nodes] + np.where(value >= 0, (codes != value).astype(np.int64), codes)

    @property
    def n_nodes(self) -> int:
        """Number of nodes reachable from the root."""
        return int(self.reachable().sum())

    def reachable(self) -> np.ndarray:
        """Boolean mask of the nodes reachable from the root (pruned subtrees excluded)."""
        alive = np.zeros(self.attribute.size, dtype=bool)
        alive[0] = True
        for level in range(1, int(self.depth.max()) + 1):
            nodes = np.flatnonzero(self.depth == level)
            up = self.parent[nodes]
            alive[nodes] = alive[up] & (self.attribute[up] >= 0)
        return alive

    @property
    def n_leaves(self) -> int:
        return int((self.reachable() & (self.attribute < 0)).sum())

    @property
    def max_depth(self) -> int:
        return int(self.depth[self.reachable()].max())

    def apply(self, codes: np.ndarray) -> np.ndarray:
        """The leaf reached by each row of an encoded feature matrix."""
        node = np.zeros(codes.shape[0], dtype=np.int64)
        rows = np.arange(codes.shape[0])
        while True:
            split = self.attribute[node]
            inner = split >= 0
            if not inner.any():
                return node
            r = rows[inner]
            node[r] = self.child_of(node[r], codes[r, split[inner]])

    def predict_proba(self, codes: np.ndarray) -> np.ndarray:
        return self.proba[self.apply(codes)]


def distributions_from_counts(counts: np.ndarray, parent: np.ndarray, depth: np.ndarray,
                              pseudo_count: float | np.ndarray = 0.0) -> np.ndarray:
    """Class distributions from (noisy) counts, negative counts clipped to 0, top-down.

    Each node's distribution is its clipped counts plus `pseudo_count` rows (one number, or
    one per node) spread like its parent's distribution (the root's prior is uniform), normalised:
        p(node) = (counts+ + pseudo_count * p(parent)) / (sum(counts+) + pseudo_count).
    With pseudo_count 0 a node whose clipped counts sum to 0 (empty, or swamped by noise) takes
    its parent's distribution, as C4.5 does for an empty leaf. A positive pseudo-count shrinks
    small, noisy nodes towards their parents. Pure post-processing of released counts.
    """
    clipped = np.clip(counts, 0.0, None)
    totals = clipped.sum(axis=1)
    n_classes = counts.shape[1]
    proba = np.empty_like(clipped)
    pseudo = np.broadcast_to(np.asarray(pseudo_count, dtype=np.float64), totals.shape)
    for level in range(int(depth.max()) + 1):  # top-down: a parent is final before its children
        nodes = np.flatnonzero(depth == level)
        prior = np.full((nodes.size, n_classes), 1.0 / n_classes) if level == 0 else proba[parent[nodes]]
        weight = pseudo[nodes, None]
        mass = totals[nodes, None] + weight
        blended = np.divide(clipped[nodes] + weight * prior, mass, out=prior.copy(), where=mass > 0)
        proba[nodes] = blended
    return proba


def one_hot(labels: np.ndarray, n_classes: int) -> np.ndarray:
    """Rows e_label; a row with label -1 is left as zeros."""
    proba = np.zeros((labels.size, n_classes))
    has = labels >= 0
    proba[np.flatnonzero(has), labels[has]] = 1.0
    return proba


def sum_children_into_parents(values: np.ndarray, parent: np.ndarray, depth: np.ndarray,
                              is_leaf: np.ndarray) -> np.ndarray:
    """Inner-node rows replaced by the sum of their children's rows, bottom-up.

    Leaves keep their own rows. Used to give inner nodes class counts that are sums of the
    leaves' noisy counts (post-processing; no further measurement).
    """
    values = values.copy()
    values[~is_leaf] = 0.0
    for level in range(int(depth.max()), 0, -1):
        nodes = np.flatnonzero(depth == level)
        np.add.at(values, parent[nodes], values[nodes])
    return values
