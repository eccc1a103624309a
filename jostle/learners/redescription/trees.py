"""Fixed-depth binary split trees over one view, their leaves, and the normalised tree score.

A `SplitTree` of depth d has 2^d - 1 inner nodes in heap order (node i has children 2i + 1,
the "yes" side of its test, and 2i + 2) and 2^d leaves, numbered 0..2^d - 1 from the left.
Every inner node holds one public split candidate of its view (`views.SplitCandidates`): the
tree is a public object once released, and the entities' leaves are computed row by row.
Leaves whose path is contradictory under the public domains ("a = x" then "a = y") are empty
on every data set; `satisfiable_leaves` finds them from the schema alone.

The normalised score (the paper's (5), as in the issue):

    g(T) = sum over leaves n of (t_n / t) * sum over classes c of (t_nc / t_n)^2

with t the number of entities, t_n those in leaf n and t_nc those of class c in n; a leaf with
no entity adds 0, and g = 0 on an empty data set. Each leaf's inner sum lies in [1/C, 1] when
t_n > 0 and the leaf weights sum to 1, so g lies in [0, 1] on every data set: a function with
values in [0, 1] changes by at most 1 between neighbours, whatever it is (sensitivity 1). The
pair score (g_L + g_L g_R) / 2 of the reference code lies in [0, 1] too. `normalised_gini` and
`pair_score` return exact Fractions (integer counts), so the samplers' acceptance
probabilities are computed without rounding.

Note on what the normalisation costs: the differences between two trees' g are of order
(entities moved) / t, while the sensitivity only halves compared to the count-weighted Gini's 2;
at a small per-run budget exp(eps g / 2) barely separates a good tree from a random one.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from jostle.learners.redescription.queries import Literal, Term
from jostle.learners.redescription.views import ViewSchema


@dataclass(frozen=True)
class SplitTree:
    """A complete binary tree of fixed depth over one view.

    Attributes:
        view: 0 or 1.
        depth: The depth d (>= 1): 2^d - 1 inner nodes, 2^d leaves.
        candidate: The split candidate of every inner node (indices into the view's
            `ViewSchema.splits`), heap order.
    """

    view: int
    depth: int
    candidate: tuple[int, ...]

    @property
    def n_leaves(self) -> int:
        """2^depth."""
        return 1 << self.depth

    def _tests(self, schema: ViewSchema) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        splits = schema.splits
        index = np.asarray(self.candidate, dtype=np.int64)
        return splits.attribute[index], splits.numeric[index], splits.value[index]

    def leaves(self, codes: np.ndarray, schema: ViewSchema) -> np.ndarray:
        """The leaf (0..2^d - 1) of every row of the view's code matrix."""
        attribute, is_numeric, value = self._tests(schema)
        n = codes.shape[0]
        node = np.zeros(n, dtype=np.int64)
        rows = np.arange(n)
        for _ in range(self.depth):
            column = codes[rows, attribute[node]]
            yes = np.where(is_numeric[node], column <= value[node], column == value[node])
            node = 2 * node + np.where(yes, 1, 2)
        return node - ((1 << self.depth) - 1)

    def path(self, leaf: int, schema: ViewSchema) -> tuple[Literal, ...]:
        """The tests on the path from the root to `leaf`."""
        attribute, is_numeric, value = self._tests(schema)
        node = leaf + (1 << self.depth) - 1
        literals = []
        while node > 0:
            parent = (node - 1) // 2
            literals.append(Literal(int(attribute[parent]), bool(is_numeric[parent]), int(value[parent]),
                                    positive=(node == 2 * parent + 1)))
            node = parent
        return tuple(reversed(literals))

    def leaf_term(self, leaf: int, schema: ViewSchema, negated: bool = False) -> Term:
        """The leaf's conjunctive query (simplified: implied tests dropped), or its negation."""
        return Term(_simplify(self.path(leaf, schema)), negated)

    def satisfiable_leaves(self, schema: ViewSchema) -> np.ndarray:
        """Which leaves some entity can reach under the public domains (public)."""
        out = np.zeros(self.n_leaves, dtype=bool)
        for leaf in range(self.n_leaves):
            allowed: dict[int, np.ndarray] = {}
            for literal in self.path(leaf, schema):
                codes = allowed.setdefault(literal.attribute,
                                           np.ones(schema.attributes[literal.attribute].n_codes, dtype=bool))
                hit = np.arange(codes.size) <= literal.value if literal.numeric else \
                    np.arange(codes.size) == literal.value
                codes &= hit if literal.positive else ~hit
            out[leaf] = all(codes.any() for codes in allowed.values())
        return out


def _simplify(literals: tuple[Literal, ...]) -> tuple[Literal, ...]:
    """Drop tests implied by others on the same path (a repeated test; "a != x" after "a = y";
    a numeric bound weaker than another on the same side). Meaning is unchanged."""
    kept: list[Literal] = []
    for literal in literals:
        if literal in kept:
            continue
        kept.append(literal)
    result = []
    for literal in kept:
        same = [o for o in kept if o.attribute == literal.attribute and o is not literal]
        if not literal.numeric and not literal.positive and any(o.positive and not o.numeric and o.value != literal.value
                                                                    for o in same):
            continue  # "a != x" is implied by "a = y" (y != x; y == x would be a contradiction kept below)
        if literal.numeric and literal.positive and any(o.numeric and o.positive and o.value < literal.value
                                                        for o in same):
            continue  # "a <= k" implied by "a <= j", j < k
        if literal.numeric and not literal.positive and any(o.numeric and not o.positive and o.value > literal.value
                                                            for o in same):
            continue  # "a > k" implied by "a > j", j > k
        result.append(literal)
    return tuple(result)


def random_tree(schema: ViewSchema, view: int, depth: int, noise: Any) -> SplitTree:
    """The base proposal: every inner node gets a uniformly random split candidate of the view.

    Public randomness from `noise` (it reads no data).
    """
    inner = (1 << depth) - 1
    picks = np.asarray(noise.integers_below(len(schema.splits), inner), dtype=np.int64)
    return SplitTree(view, depth, tuple(int(p) for p in picks))


def class_counts(leaf_ids: np.ndarray, target: np.ndarray, n_leaves: int, n_classes: int) -> np.ndarray:
    """The leaves x classes matrix of counts t_nc (int64)."""
    flat = np.asarray(leaf_ids, dtype=np.int64) * n_classes + np.asarray(target, dtype=np.int64)
    return np.bincount(flat, minlength=n_leaves * n_classes).reshape(n_leaves, n_classes)


def normalised_gini(counts: np.ndarray) -> Fraction:
    """g = sum_n (t_n / t) sum_c (t_nc / t_n)^2 = (1 / t) sum_n (sum_c t_nc^2) / t_n, exactly.

    0 on an empty data set; leaves with t_n = 0 add 0. Lies in [0, 1] (module docstring).
    """
    counts = np.asarray(counts, dtype=np.int64)
    sizes = counts.sum(axis=1)
    total = int(sizes.sum())
    if total == 0:
        return Fraction(0)
    squares = (counts.astype(object) ** 2).sum(axis=1)
    score = sum((Fraction(int(s), int(t)) for s, t in zip(squares, sizes) if t > 0), Fraction(0))
    return score / total


def pair_score(first: Fraction, second: Fraction) -> Fraction:
    """The tree-pair score (g_first + g_first g_second) / 2 of the reference code, in [0, 1]."""
    return (first + first * second) / 2
