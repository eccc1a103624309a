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
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from jostle.learners.trees.encoding import EncodedDomains
from jostle.learners.trees.structure import TreeArrays


NOISY_MARK = "~"


def tree_title(name: str, index: int, count: int, tree: TreeArrays, private: bool) -> str:
    """The first line of a tree's printout, e.g. "Friedman & Schuster: 7 nodes, 5 leaves, depth 2,
    epsilon 1; ~ marks noisy counts (at least 0)"; an ensemble's trees say "tree 2 of 3".

    Args:
        name: The learner's name (it may itself say "tree": the title does not repeat it).
        index: The tree's position in its ensemble, from 0.
        count: How many trees the ensemble has.
        tree: The tree.
        private: Whether the tree was learnt privately (its epsilon is then shown).
    """
    which = f", tree {index + 1} of {count}" if count > 1 else ""
    title = f"{name}{which}: {tree.n_nodes} nodes, {tree.n_leaves} leaves, depth {tree.max_depth}"
    if private:
        title += f", epsilon {tree.epsilon:.4g}"
    if tree.counts is not None and _noisy(tree):
        title += f"; {NOISY_MARK} marks noisy counts (at least 0)"
    return title


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
