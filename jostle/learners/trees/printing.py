"""Readable text printouts of trained trees.

A title (`tree_title`), then one line per reachable node below the root, depth-first, indented
by depth with "|   ", e.g.

    Friedman & Schuster: 7 nodes, 5 leaves, depth 2, epsilon 1; ~ marks noisy counts (at least 0)
    health = not_recom: not_recom  [not_recom ~2876, priority ~0, spec_prior ~3]
    health = priority
    |   has_nurs = proper: priority  [not_recom ~0, priority ~310, spec_prior ~12]

A binary split prints its two sides as "attr = v" and "attr != v".
A leaf line ends with its predicted class and, when the tree has counts, the class counts:
exact for a non-private tree; for a private tree noisy estimates, rounded, shown as "~n" and
never below 0 (a negative noisy count estimates a class that is absent or rare there; the
prediction uses the smoothed distribution, not these numbers). Printing is post-processing:
it shows only released values.

The title says what the fit charged, and where it went when not all of it went to the tree
printed (`FitFacts`: the noisy size of the table, the other trees of an ensemble), e.g.
"epsilon 1 charged: 0.05 on the table's size, 0.95 on this tree". A private tree that stopped
at its root says why on the line below the title (`root_reason`): the stopping query's noisy
size fell below the threshold of its budget (with the threshold), pruning cut the splits it
grew (and how many leaves it had measured), the depth rule allowed no level, or no attribute
could split. Every reason is read from public values: the configuration, the domains, the
budget plan, the charges made and the released tree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from jostle.learners.trees.encoding import EncodedDomains
from jostle.learners.trees.structure import TreeArrays


NOISY_MARK = "~"


@dataclass(frozen=True)
class FitFacts:
    """What a private fit's printout tells about its budget and its stopping: public values only.

    Attributes:
        charged: the fit's epsilon (charged in full before the fit drew anything).
        table_size: the epsilon spent on the noisy size of the table (0 when not measured).
        per_tree: each tree's budget.
        n_trees: the number of trees.
        disjoint: whether the trees saw disjoint rows (parallel composition).
        stopping: the stopping rule ("depth", "noisy_size", "signal_to_noise").
        split_kind: "multiway" or "binary".
        leaf_mechanism: "counts", "exponential" or "joint".
        levels: the depth limit the fit used.
        leaf_planned: the epsilon planned for the leaves (the stopping threshold's).
        domain_sizes: the public size of each attribute's domain.
        n_classes: the number of classes.
        max_nodes: the public cap on a tree's nodes.
    """

    charged: float
    table_size: float
    per_tree: float
    n_trees: int
    disjoint: bool
    stopping: str
    split_kind: str
    leaf_mechanism: str
    levels: int
    leaf_planned: float
    domain_sizes: tuple[int, ...]
    n_classes: int
    max_nodes: int

    def budget_text(self) -> str:
        """ "epsilon 1 charged: 0.05 on the table's size, 0.95 on the tree" and the like."""
        parts = []
        if self.table_size > 0:
            parts.append(f"{self.table_size:.4g} on the table's size")
        if self.n_trees == 1:
            parts.append(f"{self.per_tree:.4g} on the tree" if parts else "")
        elif self.disjoint:
            parts.append(f"{self.per_tree:.4g} on each of {self.n_trees} trees, grown on disjoint rows "
                         f"(parallel composition)")
        else:
            parts.append(f"{self.per_tree:.4g} on each of {self.n_trees} trees")
        parts = [p for p in parts if p]
        return f"epsilon {self.charged:.4g} charged" + (": " + ", ".join(parts) if parts else "")


def tree_title(name: str, index: int, count: int, tree: TreeArrays, private: bool,
               facts: FitFacts | None = None) -> str:
    """The first line of a tree's printout, e.g. "Friedman & Schuster: 7 nodes, 5 leaves, depth 2,
    epsilon 1 charged: 0.05 on the table's size, 0.95 on the tree; ~ marks noisy counts (at
    least 0)"; an ensemble's trees say "tree 2 of 3".

    Args:
        name: The learner's name (it may itself say "tree": the title does not repeat it).
        index: The tree's position in its ensemble, from 0.
        count: How many trees the ensemble has.
        tree: The tree.
        private: Whether the tree was learnt privately (its epsilon is then shown).
        facts: The fit's budget (then the title says what the fit charged and where it went;
            without it, the tree's own epsilon).
    """
    which = f", tree {index + 1} of {count}" if count > 1 else ""
    title = f"{name}{which}: {tree.n_nodes} nodes, {tree.n_leaves} leaves, depth {tree.max_depth}"
    if private:
        title += f", {facts.budget_text()}" if facts is not None else f", epsilon {tree.epsilon:.4g}"
    if tree.counts is not None and _noisy(tree):
        title += f"; {NOISY_MARK} marks noisy counts (at least 0)"
    return title


def root_reason(tree: TreeArrays, facts: FitFacts, charges: Sequence[str], classes: Sequence[object]) -> str | None:
    """Why a private tree is a single leaf (None when it has split): a sentence for its printout.

    Args:
        tree: The released tree.
        facts: The fit's configuration and budget.
        charges: The descriptions of this tree's charges, in order (`"level 0: noisy sizes of 1
            nodes"`, ...): which queries ran tells which rule stopped the root.
        classes: The class labels (to say what the pruned leaves predicted).
    """
    if tree.attribute[0] >= 0:
        return None
    sizes = np.asarray(facts.domain_sizes, dtype=np.int64)
    splittable = sizes[sizes >= 2]
    if tree.attribute.size > 1:  # it split, and pruning (post-processing) cut every split
        grown = np.flatnonzero(tree.child_start == 0)  # nodes never split: the leaves as grown
        grown = grown[grown > 0]
        names = [str(c) for c in classes]
        levels = int(tree.depth.max())
        text = (f"stopped at the root: it grew {levels} level{'s' if levels != 1 else ''} and {grown.size} leaves, then C4.5's "
                f"pessimistic pruning (post-processing of the noisy counts) cut every split, as none lowered "
                f"the estimated errors")
        if tree.counts is not None and grown.size:
            predicted = {int(np.argmax(tree.counts[node])) for node in grown}
            root = int(np.argmax(tree.counts[0]))
            if predicted == {root}:
                text += f": every leaf's noisy counts favoured '{names[root]}', as the root's do"
        return text
    if facts.levels == 0:
        return "stopped at the root: the configuration grows no level (the leaves' release is the whole tree)"
    if splittable.size == 0:
        return "stopped at the root: no attribute has two or more values to split on"
    fan = 2 if facts.split_kind == "binary" else int(splittable.max())
    if 1 + fan > facts.max_nodes:
        return f"stopped at the root: a split would make {fan} children, above the cap of {facts.max_nodes} nodes"
    leaf = facts.leaf_planned
    noise = facts.n_classes * math.sqrt(2.0) / leaf if leaf > 0 else math.inf
    sized = any(c.startswith("level 0: noisy sizes") for c in charges)
    split = any(c.startswith("level 0: exponential mechanism") for c in charges)
    if facts.stopping == "noisy_size" and sized and not split:
        return (f"stopped at the root: its noisy size fell below the stopping threshold t * |C| * sqrt(2) / "
                f"eps_leaf = {fan} * {facts.n_classes} * 1.414 / {leaf:.4g} = {fan * noise:.1f} rows for this budget "
                f"(t = {fan}, the most children a split of the root makes; |C| = {facts.n_classes} classes; "
                f"eps_leaf = {leaf:.4g}, the leaves' planned epsilon): a larger epsilon, or attributes with fewer "
                f"values, let it split")
    if facts.stopping == "signal_to_noise":
        return (f"stopped at the root: the estimated rows per child (the noisy size of the table over t = {fan}) "
                f"fell below the leaves' noise |C| * sqrt(2) / eps_leaf = {noise:.1f} rows for this budget")
    if facts.leaf_mechanism == "joint":
        return ("stopped at the root: the exponential mechanism choosing the last split and the labels "
                "together chose one label for the root over every split")
    return None
def _noisy(tree: TreeArrays) -> bool:
    """Whether the tree's counts are noisy releases (its leaves were measured with epsilon)."""
    return tree.leaf_epsilon > 0


def tree_to_text(tree: TreeArrays, domains: EncodedDomains, classes: Sequence[object], title: str = "",
                 max_depth: int | None = None, max_lines: int = 200) -> str:
    """The printout of one tree.

    Args:
        tree: the trained tree.
        domains: public names and value labels of the features.
        classes: the class labels.
        title: first line (e.g. the learner and its budget).
        max_depth: print nodes down to this depth only ("..." marks a deeper subtree).
        max_lines: stop after this many node lines and say how many were left out.
    """
    names = [str(c) for c in classes]
    noisy = _noisy(tree)

    def leaf_text(node: int) -> str:
        label = names[int(np.argmax(tree.proba[node]))]
        if tree.counts is None:
            return f": {label}"
        if noisy:  # estimates: shown as such, and never as a negative number of rows
            counts = ", ".join(f"{c} {NOISY_MARK}{max(float(v), 0.0):.0f}" for c, v in zip(names, tree.counts[node]))
        else:
            counts = ", ".join(f"{c} {v:.0f}" for c, v in zip(names, tree.counts[node]))
        return f": {label}  [{counts}]"

    lines = [title] if title else []
    if tree.attribute[0] < 0:
        return "\n".join(lines + [f"(a single leaf){leaf_text(0)}"])
    body: list[str] = []
    total = 0
    frames: list[tuple[int, int]] = [(0, 0)]  # inner nodes being printed, with their next branch
    while frames:
        node, index = frames.pop()
        split = int(tree.attribute[node])
        value = -1 if tree.split_value is None else int(tree.split_value[node])
        if index >= (2 if value >= 0 else len(domains.labels[split])):
            continue
        frames.append((node, index + 1))
        child = int(tree.child_start[node]) + index
        total += 1
        indent = "|   " * int(tree.depth[node])
        if value >= 0:  # binary split: "== v" then "!= v"
            condition = f"{domains.names[split]} {'=' if index == 0 else '!='} {domains.labels[split][value]}"
        else:
            condition = f"{domains.names[split]} = {domains.labels[split][index]}"
        if tree.attribute[child] < 0:
            line = f"{indent}{condition}{leaf_text(child)}"
        elif max_depth is not None and tree.depth[child] >= max_depth:
            line = f"{indent}{condition}  ..."
        else:
            line = f"{indent}{condition}"
            frames.append((child, 0))
        if len(body) < max_lines:
            body.append(line)
    if total > len(body):
        body.append(f"... ({total - len(body)} more lines)")
    return "\n".join(lines + body)
