"""Growing one decision tree level by level, privately or not: the family's common engine.

A tree grows breadth-first. At each level the rows of all the level's nodes are counted in one
vectorised pass per attribute (`np.bincount` over combined (node, attribute value, class)
codes), never node by node. The design decisions of the family are the fields of
`GrowthRules`:

  * split utility   "entropy" | "gini" | "max" (exponential mechanism, or argmax when not
                    private), or "random" (a uniformly random unused attribute: public
                    randomness, no epsilon);
  * stopping rule   "depth" (only the depth limit), "noisy_size" (Friedman & Schuster: stop
                    when N_noisy / (t |C|) < sqrt(2) / eps_leaf, t the largest candidate domain,
                    or the chosen one for random splits), "signal_to_noise" (Fletcher & Islam:
                    stop when the *estimated* support of the children, n_hat divided by the
                    domain sizes along the path, falls below the leaf noise |C| sqrt(2) / eps_leaf;
                    data-independent once n_hat is known);
  * leaf release    "counts" (noisy class counts) or "exponential" (only the majority label,
                    exponential mechanism on class counts).

Privacy of one tree (unit: one row added or removed). Per level, the size query and the split
query each touch every node of the level once; the nodes of a level hold disjoint rows, so each
query costs its epsilon once for the whole level (parallel composition), and it is charged
once, before its noise is drawn. Levels compose sequentially. The leaves are disjoint too, so
all leaf counts (or labels) cost one epsilon, the tree's remaining budget. A row therefore
pays at most levels * (size + split) + leaf = the tree's budget. Stopping decisions, split
choices, node cap and depth use only released values or public randomness, so the tree's
shape is post-processing of releases. Counting vectors of sibling cells have L1 sensitivity 1;
split utilities' sensitivities are in `jostle.trees.utilities`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from jostle.trees.accounting import PrivacyLedger, TreeBudget, floor_float
from jostle.trees.releases import (exponential_mechanism, noisy_counts, public_random_choice,
                                   public_random_subset)
from jostle.trees.structure import TreeArrays, distributions_from_counts, one_hot, sum_children_into_parents
from jostle.trees.utilities import UTILITY_IS_MONOTONE, node_entropy_utility, split_utility, utility_sensitivity

STOPPING_RULES = ("depth", "noisy_size", "signal_to_noise")
LEAF_MECHANISMS = ("counts", "exponential")


@dataclass(frozen=True)
class GrowthRules:
    """The design decisions for growing one tree (see the module docstring).

    Attributes:
        split_utility: "entropy", "gini", "max" or "random".
        stopping: "depth", "noisy_size" or "signal_to_noise".
        max_depth: most split levels (the root is depth 0).
        leaf_mechanism: "counts" or "exponential".
        private: False grows an exact (non-private) ID3/C4.5-style tree.
        max_features: when set, each node considers only this many unused attributes, drawn at
            random (public randomness).
        max_nodes: public cap on the nodes of a tree; a level that might exceed it is not split.
        max_rows: public bound on the rows of a node, for the entropy utility's sensitivity.
        min_samples_split: non-private only: a node with fewer rows is a leaf, and a split
            needs two branches with at least 2 rows each (C4.5's MINOBJS).
        root_support: n_hat, the estimated rows at the root (signal_to_noise only).
    """

    split_utility: str
    stopping: str
    max_depth: int
    leaf_mechanism: str = "counts"
    private: bool = True
    max_features: int | None = None
    max_nodes: int = 100_000
    max_rows: int = 1_000_000
    min_samples_split: int = 2
    root_support: float | None = None


@dataclass
class _Level:
    """The frontier of the tree being grown: nodes first_id .. first_id + size - 1."""

    first_id: int
    size: int
    used: np.ndarray  # (size, k) attributes already split on along the path
    support: np.ndarray  # (size,) estimated rows (signal_to_noise)


def grow_tree(codes: np.ndarray, y: np.ndarray, domain_sizes: np.ndarray, n_classes: int,
              rules: GrowthRules, budget: TreeBudget | None, ledger: PrivacyLedger | None,
              noise: Any, part: int | None = None, name: str = "tree") -> TreeArrays:
    """Grow one tree on encoded rows.

    Args:
        codes: (rows, attributes) int codes under public domains.
        y: class codes 0..n_classes-1.
        domain_sizes: public size of each attribute's domain.
        n_classes: public number of classes.
        rules: the design decisions.
        budget: the tree's budget plan (None when not private).
        ledger: charged before every noisy measurement (None when not private).
        noise: the randomness source (interface of jostle.noise.Randomness).
        part: the disjoint part of the table this tree sees (None: the whole table).
        name: used in charge descriptions, e.g. "tree 2/10".
    """
    private = rules.private
    if private and (budget is None or ledger is None):
        raise ValueError("a private tree needs a budget plan and a ledger")
    n, k = codes.shape
    sizes = np.asarray(domain_sizes, dtype=np.int64)
    spent = Fraction(0)

    def charge(epsilon: float, what: str) -> None:
        nonlocal spent
        ledger.charge(epsilon, f"{name}: {what}", part)
        spent += Fraction(epsilon)

    threshold = 0.0
    if private and rules.stopping != "depth":
        # children whose expected per-class count is below the leaf noise's standard deviation
        threshold = n_classes * math.sqrt(2.0) / budget.leaf_epsilon
    attribute, child_start, parent, depth, branch = [], [], [np.array([-1])], [np.array([0])], [np.array([-1])]
    root_support = float(rules.root_support) if rules.root_support is not None else float("inf")
    level = _Level(0, 1, np.zeros((1, k), dtype=bool), np.array([root_support]))
    row_local = np.zeros(n, dtype=np.int64)  # index of the row's node in the frontier, -1 once in a leaf
    row_node = np.zeros(n, dtype=np.int64)  # id of the row's node
    next_id, current_depth = 1, 0
    splittable = sizes >= 2  # a one-value attribute cannot split anything

    while level.size:
        m = level.size
        level_attribute = np.full(m, -1, dtype=np.int64)
        level_child_start = np.zeros(m, dtype=np.int64)
        candidates = ~level.used & splittable[None, :]
        open_ = candidates.any(axis=1) & (current_depth < rules.max_depth)
        largest_children = np.where(candidates, sizes[None, :], 0).max(axis=1)
        if next_id + int(largest_children[open_].sum()) > rules.max_nodes:
            open_[:] = False  # public cap: the level might not fit
        if rules.max_features is not None and open_.any():
            candidates[open_] = public_random_subset(noise, candidates[open_], rules.max_features)
        chosen = np.full(m, -1, dtype=np.int64)
        if rules.split_utility == "random" and open_.any():
            chosen[open_] = public_random_choice(noise, candidates[open_])
        # t: the number of children the split would make (the largest candidate domain when
        # the attribute is not chosen yet), for both stopping rules
        t = np.where(chosen >= 0, sizes[np.maximum(chosen, 0)], largest_children)
        if private and rules.stopping == "signal_to_noise":
            open_ &= level.support / np.maximum(t, 1) >= threshold  # public: n_hat and domains only
        active = row_local >= 0
        if open_.any() and (not private or rules.stopping == "noisy_size"):
            node_rows = np.bincount(row_local[active], minlength=m)
            if private:
                # sizes of the level's open nodes: disjoint counts, L1 sensitivity 1
                charge(budget.size_epsilon, f"level {current_depth}: noisy sizes of {int(open_.sum())} nodes")
                noisy = noisy_counts(noise, node_rows[open_], budget.size_epsilon)
                open_[open_] = noisy / (t[open_] * n_classes) >= threshold / n_classes
            else:
                open_ &= node_rows >= rules.min_samples_split
        if open_.any() and rules.split_utility != "random":
            chosen[open_] = _choose_utility_splits(codes, y, row_local, open_, candidates, sizes, n_classes,
                                                   rules, budget, charge, noise, current_depth)
            open_ &= chosen >= 0
        split_nodes = np.flatnonzero(open_)
        if split_nodes.size == 0:
            attribute.append(level_attribute)
            child_start.append(level_child_start)
            row_local[:] = -1
            break
        attrs = chosen[split_nodes]
        fan = sizes[attrs]
        offsets = np.concatenate([[0], np.cumsum(fan)[:-1]])
        level_attribute[split_nodes] = attrs
        level_child_start[split_nodes] = next_id + offsets
        attribute.append(level_attribute)
        child_start.append(level_child_start)
        # the next frontier: fan[i] children of split node i, in order
        total_children = int(fan.sum())
        owner = np.repeat(np.arange(split_nodes.size), fan)
        used = level.used[split_nodes][owner].copy()
        used[np.arange(total_children), attrs[owner]] = True
        support = (level.support[split_nodes] / fan)[owner]
        parent.append(level.first_id + split_nodes[owner])
        depth.append(np.full(total_children, current_depth + 1, dtype=np.int64))
        branch.append(np.arange(total_children) - offsets[owner])
        # move the rows of split nodes to their children; the others now sit in leaves
        local_offset = np.full(m, -1, dtype=np.int64)
        local_offset[split_nodes] = offsets
        moving = active.copy()
        moving[active] = open_[row_local[active]]
        rows = np.flatnonzero(moving)
        new_local = local_offset[row_local[rows]] + codes[rows, level_attribute[row_local[rows]]]
        row_local[~moving] = -1
        row_local[rows] = new_local
        row_node[rows] = next_id + new_local
        level = _Level(next_id, total_children, used, support)
        next_id += total_children
        current_depth += 1

    tree = TreeArrays(np.concatenate(attribute), np.concatenate(child_start), np.concatenate(parent),
                      np.concatenate(depth), np.concatenate(branch), None, np.empty((0, n_classes)))
    _release_leaves(tree, row_node, y, n_classes, rules, budget, charge, spent_so_far=lambda: spent, noise=noise)
    tree.epsilon = float(spent)
    return tree


def _choose_utility_splits(codes: np.ndarray, y: np.ndarray, row_local: np.ndarray, open_: np.ndarray,
                           candidates: np.ndarray, sizes: np.ndarray, n_classes: int, rules: GrowthRules,
                           budget: TreeBudget | None, charge: Any, noise: Any, current_depth: int) -> np.ndarray:
    """The split attribute of each open node (-1: make it a leaf; only when not private)."""
    m = open_.size
    open_index = np.full(m, -1, dtype=np.int64)
    open_index[open_] = np.arange(int(open_.sum()))
    s = int(open_.sum())
    in_open = row_local >= 0
    in_open[in_open] = open_[row_local[in_open]]
    rows = np.flatnonzero(in_open)
    node = open_index[row_local[rows]]
    labels = y[rows]
    allowed = candidates[open_].copy()
    utility = np.full((s, codes.shape[1]), -np.inf)
    name = "entropy" if not rules.private else rules.split_utility
    for a in np.flatnonzero(allowed.any(axis=0)):
        width = int(sizes[a])
        cell = (node * width + codes[rows, a]) * n_classes + labels
        table = np.bincount(cell, minlength=s * width * n_classes).reshape(s, width, n_classes)
        utility[:, a] = split_utility(name, table)
        if not rules.private:
            # C4.5's MINOBJS: at least two branches with min_samples_split rows
            big_branches = (table.sum(axis=2) >= rules.min_samples_split).sum(axis=1)
            allowed[:, a] &= big_branches >= 2
    utility[~allowed] = -np.inf
    if rules.private:
        sensitivity = utility_sensitivity(name, rules.max_rows)
        charge(budget.split_epsilon, f"level {current_depth}: exponential mechanism ({name} utility, "
                                     f"sensitivity {sensitivity:.4g}) choosing splits of {s} nodes")
        return exponential_mechanism(noise, utility, budget.split_epsilon, sensitivity, UTILITY_IS_MONOTONE[name])
    # exact ID3/C4.5: the largest information gain, if positive
    class_counts = np.bincount(node * n_classes + labels, minlength=s * n_classes).reshape(s, n_classes)
    best = utility.argmax(axis=1)
    gain = utility[np.arange(s), best] - node_entropy_utility(class_counts)
    useful = np.isfinite(utility[np.arange(s), best]) & (gain > 1e-9 * np.maximum(class_counts.sum(axis=1), 1))
    return np.where(useful, best, -1)


def _release_leaves(tree: TreeArrays, row_node: np.ndarray, y: np.ndarray, n_classes: int, rules: GrowthRules,
                    budget: TreeBudget | None, charge: Any, spent_so_far: Any, noise: Any) -> None:
    """Class counts (or labels) of all leaves, measured together with the tree's remaining budget."""
    n_nodes = tree.attribute.size
    is_leaf = tree.attribute < 0
    leaves = np.flatnonzero(is_leaf)
    exact = np.bincount(row_node * n_classes + y, minlength=n_nodes * n_classes).reshape(n_nodes, n_classes)
    if not rules.private:
        tree.counts = sum_children_into_parents(exact.astype(np.float64), tree.parent, tree.depth, is_leaf)
        tree.proba = distributions_from_counts(tree.counts, tree.parent, tree.depth)
        return
    # every leaf holds disjoint rows: one charge covers them all (parallel composition)
    epsilon = floor_float(budget.total - spent_so_far())
    tree.leaf_epsilon = epsilon
    if rules.leaf_mechanism == "counts":
        charge(epsilon, f"noisy class counts of {leaves.size} leaves (L1 sensitivity 1)")
        leaf_counts = np.zeros((n_nodes, n_classes))
        leaf_counts[leaves] = noisy_counts(noise, exact[leaves], epsilon)
        tree.counts = sum_children_into_parents(leaf_counts, tree.parent, tree.depth, is_leaf)
        tree.released_leaves = sum_children_into_parents(is_leaf.astype(np.float64)[:, None], tree.parent,
                                                         tree.depth, is_leaf)[:, 0]
        tree.proba = distributions_from_counts(tree.counts, tree.parent, tree.depth)
    elif rules.leaf_mechanism == "exponential":
        # utility of label c = its count at the leaf: sensitivity 1, monotone
        charge(epsilon, f"exponential mechanism choosing the labels of {leaves.size} leaves (sensitivity 1)")
        labels = np.full(n_nodes, -1, dtype=np.int64)
        labels[leaves] = exponential_mechanism(noise, exact[leaves], epsilon, 1.0, monotone=True)
        tree.counts = None
        tree.proba = one_hot(labels, n_classes)
    else:
        raise ValueError(f"unknown leaf mechanism {rules.leaf_mechanism!r}; choose one of {LEAF_MECHANISMS}")
