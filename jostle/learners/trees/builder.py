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
  * split kind      "multiway" (one child per value of the attribute, ID3/C4.5) or "binary"
                    (attribute == value, or not: two children, so leaves keep more rows; a
                    path may split on the same attribute again with another value);
  * leaf release    "counts" (noisy class counts), "exponential" (only the majority label,
                    exponential mechanism on class counts), or "joint" (binary splits only: the
                    LAST level's split of each node and the labels of its two leaves are chosen
                    together by one exponential mechanism, among "stay a leaf labelled c" and
                    "split on attribute == value, label the two sides c_in and c_out").

Privacy of one tree (unit: one row added or removed). Per level, the size query and the split
query each touch every node of the level once; the nodes of a level hold disjoint rows, so each
query costs its epsilon once for the whole level (parallel composition), and it is charged
once, before its noise is drawn. Levels compose sequentially. The leaves are disjoint too, so
all leaf counts (or labels) cost one epsilon, the tree's remaining budget. A row therefore
pays at most levels * (size + split) + leaf = the tree's budget. Stopping decisions, split
choices, node cap and depth use only released values or public randomness, so the tree's
shape is post-processing of releases. Counting vectors of sibling cells have L1 sensitivity 1;
split utilities' sensitivities are in `jostle.learners.trees.utilities`; a binary split's utility is the
same utility on its two-branch table (the rows with value v, the rest), so the sensitivities
carry over.

The "joint" leaf release (`_release_joint_leaves`) is one exponential mechanism per final node,
with the number of the node's training rows the labelled candidate classifies correctly as
utility: u(leaf c) = n_c, u(a = v -> c_in, else c_out) = n(a = v, c_in) + n(a != v, c_out).
One row added to the node raises every candidate's utility by 0 or 1: sensitivity 1, monotone,
so P ~ exp(eps u) is eps-DP (McSherry & Talwar 2007; the monotone case as in
`jostle.learners.trees.utilities`). The base measure is not uniform: the C labels together
weigh about as much as all S labelled splits (`_leaf_base_measure`: a public whole number of
rows added to each label's utility), so that where the budget cannot tell the candidates apart
the draw falls back to a label rather than to a random split. The final nodes hold disjoint rows, so one charge covers them all
(parallel composition). The labels come with the split: no budget is spent on counts, which is
what makes a one-split tree useful at budgets where noisy leaf counts are mostly noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from jostle.learners.trees.accounting import PrivacyLedger, TreeBudget, floor_float
from jostle.learners.trees.releases import (exponential_mechanism, noisy_counts, public_random_choice,
                                   public_random_subset)
from jostle.learners.trees.structure import TreeArrays, distributions_from_counts, one_hot, sum_children_into_parents
from jostle.learners.trees.utilities import UTILITY_IS_MONOTONE, node_entropy_utility, split_utility, utility_sensitivity

STOPPING_RULES = ("depth", "noisy_size", "signal_to_noise")
LEAF_MECHANISMS = ("counts", "exponential", "joint")
SPLIT_KINDS = ("multiway", "binary")


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
        split_kind: "multiway" or "binary" (attribute == value, or not).
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
    split_kind: str = "multiway"


@dataclass
class _Level:
    """The frontier of the tree being grown: nodes first_id .. first_id + size - 1."""

    first_id: int
    size: int
    used: np.ndarray  # (size, columns) split columns no longer useful along the path
    support: np.ndarray  # (size,) estimated rows (signal_to_noise)


@dataclass(frozen=True)
class _Columns:
    """The candidate splits of a node, one column each: an attribute (multiway) or an
    (attribute, value) pair (binary). Public: built from the domain sizes only."""

    attribute: np.ndarray  # (columns,) the attribute a column splits on
    value: np.ndarray      # (columns,) the value of a binary split, -1 for multiway
    fan: np.ndarray        # (columns,) children of the split
    binary: bool

    @staticmethod
    def of(sizes: np.ndarray, kind: str) -> "_Columns":
        if kind == "multiway":
            return _Columns(np.arange(sizes.size), np.full(sizes.size, -1), sizes.copy(), False)
        if kind != "binary":
            raise ValueError(f"unknown split kind {kind!r}; choose one of {SPLIT_KINDS}")
        attribute = np.repeat(np.arange(sizes.size), sizes)
        value = np.concatenate([np.arange(s) for s in sizes]) if sizes.size else np.zeros(0, dtype=np.int64)
        return _Columns(attribute, value.astype(np.int64), np.full(attribute.size, 2), True)

    def candidates(self, used: np.ndarray, splittable: np.ndarray) -> np.ndarray:
        """Which columns each node may split on. Multiway: unused attributes with 2+ values.
        Binary: a value not yet excluded on the path, of an attribute with 2+ values left; when
        exactly 2 are left only the first is a candidate (both give the same split)."""
        if not self.binary:
            return ~used & splittable[None, :]
        free = ~used
        k = int(self.attribute.max()) + 1 if self.attribute.size else 0
        left = np.zeros((used.shape[0], k), dtype=np.int64)
        for a in range(k):
            left[:, a] = free[:, self.attribute == a].sum(axis=1)
        # rank of each free value among the free values of its attribute
        rank = np.zeros_like(used, dtype=np.int64)
        for a in range(k):
            cols = np.flatnonzero(self.attribute == a)
            rank[:, cols] = np.cumsum(free[:, cols], axis=1) - 1
        remaining = left[:, self.attribute]
        return free & ((remaining >= 3) | ((remaining == 2) & (rank == 0)))

    def children_used(self, used: np.ndarray, chosen: np.ndarray, fan: np.ndarray) -> np.ndarray:
        """The `used` rows of the children of nodes with rows `used` split on columns `chosen`."""
        owner = np.repeat(np.arange(chosen.size), fan)
        child_used = used[owner].copy()
        if not self.binary:
            child_used[np.arange(owner.size), chosen[owner]] = True
            return child_used
        first = np.concatenate([[0], np.cumsum(fan)[:-1]])
        equal, other = first, first + 1
        # the "== v" child: the attribute is constant there; the "!= v" child: v is excluded
        child_used[equal] |= self.attribute[None, :] == self.attribute[chosen][:, None]
        child_used[other, chosen] = True
        return child_used

    def child_shares(self, chosen: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """Each child's expected share of its parent's rows if values were uniform (public)."""
        if not self.binary:
            fan = self.fan[chosen]
            return np.repeat(1.0 / fan, fan)
        width = sizes[self.attribute[chosen]].astype(np.float64)
        return np.column_stack([1.0 / width, (width - 1.0) / width]).ravel()


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
        noise: the randomness source (interface of jostle.privacy.noise.Randomness).
        part: the disjoint part of the table this tree sees (None: the whole table).
        name: used in charge descriptions, e.g. "tree 2/10".
    """
    private = rules.private
    if private and (budget is None or ledger is None):
        raise ValueError("a private tree needs a budget plan and a ledger")
    joint = rules.leaf_mechanism == "joint"
    if joint and (rules.split_kind != "binary" or not private):
        raise ValueError("the joint leaf release needs private binary splits")
    n, k = codes.shape
    sizes = np.asarray(domain_sizes, dtype=np.int64)
    columns = _Columns.of(sizes, rules.split_kind)
    spent = Fraction(0)

    def charge(epsilon: float, what: str) -> None:
        nonlocal spent
        ledger.charge(epsilon, f"{name}: {what}", part)
        spent += Fraction(epsilon)

    threshold = 0.0
    if private and rules.stopping != "depth":
        # children whose expected per-class count is below the leaf noise's standard deviation
        threshold = n_classes * math.sqrt(2.0) / budget.leaf_epsilon
    # with joint leaves the last level's splits are chosen together with the labels
    split_levels = rules.max_depth - 1 if joint else rules.max_depth
    attribute, child_start, split_value = [], [], []
    parent, depth, branch = [np.array([-1])], [np.array([0])], [np.array([-1])]
    root_support = float(rules.root_support) if rules.root_support is not None else float("inf")
    level = _Level(0, 1, np.zeros((1, columns.attribute.size), dtype=bool), np.array([root_support]))
    row_local = np.zeros(n, dtype=np.int64)  # index of the row's node in the frontier, -1 once in a leaf
    row_node = np.zeros(n, dtype=np.int64)  # id of the row's node
    next_id, current_depth = 1, 0
    splittable = sizes >= 2  # a one-value attribute cannot split anything
    frontier_candidates = np.zeros((1, columns.attribute.size), dtype=bool)

    while level.size:
        m = level.size
        level_attribute = np.full(m, -1, dtype=np.int64)
        level_child_start = np.zeros(m, dtype=np.int64)
        level_value = np.full(m, -1, dtype=np.int64)
        candidates = columns.candidates(level.used, splittable)
        frontier_candidates = candidates
        open_ = candidates.any(axis=1) & (current_depth < split_levels)
        largest_children = np.where(candidates, columns.fan[None, :], 0).max(axis=1, initial=0)
        if next_id + int(largest_children[open_].sum()) > rules.max_nodes:
            open_[:] = False  # public cap: the level might not fit
        if rules.max_features is not None and open_.any():
            candidates[open_] = public_random_subset(noise, candidates[open_], rules.max_features)
        chosen = np.full(m, -1, dtype=np.int64)
        if rules.split_utility == "random" and open_.any():
            chosen[open_] = public_random_choice(noise, candidates[open_])
        # t: the number of children the split would make (the largest candidate fan when
        # the split is not chosen yet), for both stopping rules
        t = np.where(chosen >= 0, columns.fan[np.maximum(chosen, 0)], largest_children)
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
            chosen[open_] = _choose_utility_splits(codes, y, row_local, open_, candidates, columns, sizes,
                                                   n_classes, rules, budget, charge, noise, current_depth)
            open_ &= chosen >= 0
        split_nodes = np.flatnonzero(open_)
        if split_nodes.size == 0:
            attribute.append(level_attribute)
            child_start.append(level_child_start)
            split_value.append(level_value)
            break
        picked = chosen[split_nodes]
        fan = columns.fan[picked]
        offsets = np.concatenate([[0], np.cumsum(fan)[:-1]])
        level_attribute[split_nodes] = columns.attribute[picked]
        level_value[split_nodes] = columns.value[picked]
        level_child_start[split_nodes] = next_id + offsets
        attribute.append(level_attribute)
        child_start.append(level_child_start)
        split_value.append(level_value)
        # the next frontier: fan[i] children of split node i, in order
        total_children = int(fan.sum())
        owner = np.repeat(np.arange(split_nodes.size), fan)
        used = columns.children_used(level.used[split_nodes], picked, fan)
        support = level.support[split_nodes][owner] * columns.child_shares(picked, sizes)
        parent.append(level.first_id + split_nodes[owner])
        depth.append(np.full(total_children, current_depth + 1, dtype=np.int64))
        branch.append(np.arange(total_children) - offsets[owner])
        # move the rows of split nodes to their children; the others now sit in leaves
        local_offset = np.full(m, -1, dtype=np.int64)
        local_offset[split_nodes] = offsets
        moving = active.copy()
        moving[active] = open_[row_local[active]]
        rows = np.flatnonzero(moving)
        node_of_row = row_local[rows]
        row_codes = codes[rows, level_attribute[node_of_row]]
        if columns.binary:
            row_codes = (row_codes != level_value[node_of_row]).astype(np.int64)
        new_local = local_offset[node_of_row] + row_codes
        row_local[~moving] = -1
        row_local[rows] = new_local
        row_node[rows] = next_id + new_local
        level = _Level(next_id, total_children, used, support)
        next_id += total_children
        current_depth += 1

    tree = TreeArrays(np.concatenate(attribute), np.concatenate(child_start), np.concatenate(parent),
                      np.concatenate(depth), np.concatenate(branch), None, np.empty((0, n_classes)),
                      split_value=np.concatenate(split_value) if columns.binary else None)
    if joint:
        # only the last frontier may still split (and only when the depth allows one more level
        # and the node cap the two children of each of its nodes)
        may_split = np.zeros(tree.attribute.size, dtype=bool)
        if rules.max_depth >= 1 and current_depth == split_levels and next_id + 2 * level.size <= rules.max_nodes:
            may_split[level.first_id:level.first_id + level.size] = frontier_candidates.any(axis=1)
        frontier = np.zeros((tree.attribute.size, columns.attribute.size), dtype=bool)
        frontier[level.first_id:level.first_id + level.size] = frontier_candidates & may_split[
            level.first_id:level.first_id + level.size, None]
        tree = _release_joint_leaves(tree, codes, row_node, y, n_classes, columns, frontier, budget, charge,
                                     lambda: spent, noise)
    else:
        _release_leaves(tree, row_node, y, n_classes, rules, budget, charge, spent_so_far=lambda: spent, noise=noise)
    tree.epsilon = float(spent)
    return tree


def _contingency(codes: np.ndarray, rows: np.ndarray, node: np.ndarray, labels: np.ndarray, attribute: int,
                 width: int, n_nodes: int, n_classes: int) -> np.ndarray:
    """Counts of (node, value of `attribute`, class) over `rows`, shape (nodes, width, classes)."""
    cell = (node * width + codes[rows, attribute]) * n_classes + labels
    return np.bincount(cell, minlength=n_nodes * width * n_classes).reshape(n_nodes, width, n_classes)


def _choose_utility_splits(codes: np.ndarray, y: np.ndarray, row_local: np.ndarray, open_: np.ndarray,
                           candidates: np.ndarray, columns: _Columns, sizes: np.ndarray, n_classes: int,
                           rules: GrowthRules, budget: TreeBudget | None, charge: Any, noise: Any,
                           current_depth: int) -> np.ndarray:
    """The split column of each open node (-1: make it a leaf; only when not private)."""
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
    utility = np.full((s, columns.attribute.size), -np.inf)
    name = "entropy" if not rules.private else rules.split_utility
    cap = rules.max_rows if rules.private else None  # the entropy utility's public bound (utilities.py)
    class_counts = np.bincount(node * n_classes + labels, minlength=s * n_classes).reshape(s, n_classes)
    for a in np.unique(columns.attribute[allowed.any(axis=0)]):
        width = int(sizes[a])
        table = _contingency(codes, rows, node, labels, int(a), width, s, n_classes)
        cols = np.flatnonzero(columns.attribute == a)
        if columns.binary:
            # each value v: the two-branch table (rows with a == v, the rest of the node)
            pair = np.stack([table, class_counts[:, None, :] - table], axis=2)  # (s, width, 2, C)
            utility[:, cols] = split_utility(name, pair.reshape(s * width, 2, n_classes), cap).reshape(s, width)
            branch_rows = pair.sum(axis=3)  # (s, width, 2)
            big = (branch_rows >= rules.min_samples_split).sum(axis=2)
        else:
            utility[:, cols[0]] = split_utility(name, table, cap)
            big = (table.sum(axis=2) >= rules.min_samples_split).sum(axis=1)[:, None]
        if not rules.private:
            # C4.5's MINOBJS: at least two branches with min_samples_split rows
            allowed[:, cols] &= big >= 2
    utility[~allowed] = -np.inf
    if rules.private:
        sensitivity = utility_sensitivity(name, rules.max_rows)
        charge(budget.split_epsilon, f"level {current_depth}: exponential mechanism ({name} utility, "
                                     f"sensitivity {sensitivity:.4g}) choosing splits of {s} nodes")
        return exponential_mechanism(noise, utility, budget.split_epsilon, sensitivity, UTILITY_IS_MONOTONE[name])
    # exact ID3/C4.5: the largest information gain, if positive
    best = utility.argmax(axis=1)
    gain = utility[np.arange(s), best] - node_entropy_utility(class_counts)
    useful = np.isfinite(utility[np.arange(s), best]) & (gain > 1e-9 * np.maximum(class_counts.sum(axis=1), 1))
    return np.where(useful, best, -1)


BASE_MEASURE_CAP = float(2**50)
"""Largest whole number of rows the base measure adds: with the rows of any realistic node (under
2^52) the utilities stay below 2^53, where every whole number is a double, so neighbouring
utilities still differ by exactly 0 or 1 (without a cap, eps below about 1e-15 would make b so
large that doubles there are 8 or more apart)."""


def _leaf_base_measure(eligible_splits: np.ndarray, n_classes: int, epsilon: float) -> np.ndarray:
    """Per node, the whole number of rows b added to each "stay a leaf labelled c" candidate's
    utility, so that the C labels together weigh about as much a priori as the node's S eligible
    labelled splits: b = min(floor(log(S / C) / eps), BASE_MEASURE_CAP), so exp(eps b) <= S / C
    (0 when S <= C; at large eps the floor may make it 0, and the labels weigh less).

    Args:
        eligible_splits: S per node, counted from the public eligibility mask (which columns a
            node may split on: the released tree and the declared domains), never from counts.
        n_classes: C, public.
        epsilon: The draw's budget.

    Why: with a uniform base measure, at budgets where eps times the utility gaps is small the
    draw is nearly uniform over the S + C candidates, S >> C, so it is nearly always a random
    split whose labels disagree, worse than the majority label it crowds out (OneRule scored
    below the majority rate on HIV-1 and Contraceptive at eps 0.01). Privacy: b reads only
    public values, so it is the same on neighbours; P ~ exp(eps b) exp(eps u) is the
    exponential mechanism with a data-independent base measure (for a monotone utility of
    sensitivity 1 every probability ratio stays within exp(eps)), and the utilities stay whole
    numbers below 2^53 (`BASE_MEASURE_CAP`) whose neighbouring differences are exactly 0 or 1."""
    splits = np.asarray(eligible_splits, dtype=np.float64)
    if not epsilon > 0:
        return np.zeros(splits.shape[0])
    ratio = np.maximum(splits, 1.0) / n_classes
    with np.errstate(over="ignore"):
        bonus = np.floor(np.log(np.maximum(ratio, 1.0)) / float(epsilon))
    return np.minimum(bonus, BASE_MEASURE_CAP)


def _release_joint_leaves(tree: TreeArrays, codes: np.ndarray, row_node: np.ndarray, y: np.ndarray, n_classes: int,
                          columns: _Columns, frontier: np.ndarray, budget: TreeBudget, charge: Any,
                          spent_so_far: Any, noise: Any) -> TreeArrays:
    """Label every leaf, and split the last frontier's nodes, by one exponential mechanism per node
    (the "joint" release; privacy argument in the module docstring). Returns the grown tree."""
    n_nodes = tree.attribute.size
    leaves = np.flatnonzero(tree.attribute < 0)
    epsilon = floor_float(budget.total - spent_so_far())
    tree.leaf_epsilon = epsilon
    position = np.full(n_nodes, -1, dtype=np.int64)
    position[leaves] = np.arange(leaves.size)
    in_leaf = position[row_node]
    class_counts = np.bincount(in_leaf * n_classes + y, minlength=leaves.size * n_classes).reshape(-1, n_classes)
    # candidates: C labels, then for each column (a == v) every ordered pair c_in != c_out
    pairs = [(ci, co) for ci in range(n_classes) for co in range(n_classes) if ci != co]
    c_in = np.array([p[0] for p in pairs], dtype=np.int64)
    c_out = np.array([p[1] for p in pairs], dtype=np.int64)
    n_columns = columns.attribute.size
    utility = np.full((leaves.size, n_classes + n_columns * len(pairs)), -np.inf)
    utility[:, :n_classes] = class_counts
    may = frontier[leaves]
    if may.any() and pairs:
        inside = np.zeros((leaves.size, n_columns, n_classes))
        for a in np.unique(columns.attribute[may.any(axis=0)]):
            cols = np.flatnonzero(columns.attribute == a)
            inside[:, cols] = _contingency(codes, np.arange(codes.shape[0]), in_leaf, y, int(a), cols.size,
                                           leaves.size, n_classes)
        outside = class_counts[:, None, :] - inside
        labelled = inside[:, :, c_in] + outside[:, :, c_out]  # (leaves, columns, pairs)
        labelled[~may] = -np.inf
        utility[:, n_classes:] = labelled.reshape(leaves.size, -1)
    eligible_splits = may.sum(axis=1) * len(pairs)  # public: the eligibility mask, not the counts
    utility[:, :n_classes] += _leaf_base_measure(eligible_splits, n_classes, epsilon)[:, None]
    charge(epsilon, f"exponential mechanism choosing the last splits and labels of {leaves.size} nodes "
                    f"(correctly classified rows, sensitivity 1)")
    picks = exponential_mechanism(noise, utility, epsilon, 1.0, monotone=True)
    labels = np.full(n_nodes, -1, dtype=np.int64)
    is_label = picks < n_classes
    labels[leaves[is_label]] = picks[is_label]
    splitting = leaves[~is_label]
    if splitting.size == 0:
        tree.proba = one_hot(labels, n_classes)
        return tree
    offset = picks[~is_label] - n_classes
    column, pair = offset // len(pairs), offset % len(pairs)
    first = n_nodes + 2 * np.arange(splitting.size)
    attribute = np.concatenate([tree.attribute, np.full(2 * splitting.size, -1)])
    attribute[splitting] = columns.attribute[column]
    split_value = np.concatenate([tree.split_value, np.full(2 * splitting.size, -1)])
    split_value[splitting] = columns.value[column]
    child_start = np.concatenate([tree.child_start, np.zeros(2 * splitting.size, dtype=np.int64)])
    child_start[splitting] = first
    labels = np.concatenate([labels, np.column_stack([c_in[pair], c_out[pair]]).ravel()])
    grown = TreeArrays(attribute, child_start, np.concatenate([tree.parent, np.repeat(splitting, 2)]),
                       np.concatenate([tree.depth, np.repeat(tree.depth[splitting] + 1, 2)]),
                       np.concatenate([tree.branch_value, np.tile([0, 1], splitting.size)]), None,
                       one_hot(labels, n_classes), leaf_epsilon=epsilon, split_value=split_value)
    return grown


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
