"""extractReds: redescriptions from a released pair of trees, with noisy statistics.

Algorithm 6 of the paper. Given a tree on view 0 with leaves L_i and a tree on view 1 with leaves
R_j (public once released), every entity lies in exactly one L_i and one R_j, so two releases
give every statistic any union of leaves needs:

  1. the intersections |L_i & R_j| for all leaf pairs, with two-sided geometric noise at eps / 2;
  2. the left supports |L_i|, with two-sided geometric noise at eps / 2.

**Sensitivity and budget.** Adding or removing one entity (from both views) changes exactly one
intersection cell by 1 (its leaf pair) and exactly one left support by 1: each vector has L1
sensitivity 1, so each release is (eps / 2)-DP (the cells are disjoint: parallel composition
within a release), and the two compose to eps. The noise is the exact discrete Laplace of scale
2 / eps on the integer counts (`jostle.privacy.safe_noise.release_counts`, replay-recorded).
The right supports |R_j| = sum_i |L_i & R_j| are sums of released cells (post-processing, no
budget); the reference code noises them a third time and so spends 1.5 eps for a claimed eps.
Leaves whose paths contradict the public domains are empty on every data set: their cells are
not released and they join no query.

**Queries and statistics (post-processing).** The two releases disagree (a row of noisy cells
does not add up to the noisy left support). The statistics come from one table consistent with
both: the least-squares fit under equal noise variances, which adds to every cell of row i the
share (a_i - sum_j c_ij) / (q + 1) of the disagreement (q satisfiable right leaves). A query on a
view is a union of that view's satisfiable leaves (a leaf's path, or its negation: all the other
leaves). For a left set I and a right set J, support, |supp(left)|, |supp(right)| and N are sums
of the consistent table over I x J, I x all, all x J and everything; Jaccard and the p-value
(python-clired's binomial tail) follow. Statistics from inconsistent sources are what made
near-tautologies look significant in a first version (a right query true of 2,999 of 3,000
entities whose noisy support exceeded the noisy N): from one table, the 2 x 2 contingency of
every redescription adds up.

**Simple and extended redescriptions.** Simple ones pair a leaf or its negation on each side;
each is extended greedily by disjunction with one more leaf or negated leaf of either view (at
most `max_extensions` per side) while the noisy Jaccard improves and the constraints hold. An
extension that would make a query a tautology (every satisfiable leaf, "q OR NOT q": true of
every entity, known without data) is never taken: its noisy statistics would be noise around
the trivial ones. The
constraints: noisy support >= min_support; noisy support, and the noisy support of each query,
<= max_support_share * N (the paper bounds the support only, to keep tautologies out; a query
true of nearly everyone, such as the negation of a small leaf, let near-tautologies through
whose noisy p-values were mostly noise: on 46,000 planted entities at epsilon 0.1 most kept
redescriptions were not truly significant, found by the benchmark); noisy p-value <= max_pvalue;
noisy Jaccard >= min_jaccard.

**Pruning (the paper reads the threshold off a scatter plot; here it follows from the public
noise scale).** The noise in a redescription's support is a sum of k = |I| |J| independent
discrete Laplace variables of scale b = 2 / eps, with standard deviation sigma_k =
sqrt(k * 2t / (1 - t)^2), t = exp(-1 / b). A redescription is marked pruned when its noisy support
is below sigma_k / max_relative_noise (default 0.1: the support's noise is then at most a tenth
of the support, one sigma): its Jaccard would be mostly noise. Public quantities only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from jostle.learners.redescription.queries import Query, Redescription, Term, binomial_pvalue
from jostle.learners.redescription.trees import SplitTree
from jostle.learners.redescription.views import TwoViews
from jostle.privacy import safe_noise


@dataclass(frozen=True)
class Constraints:
    """The paper's Gamma: what a released redescription must satisfy, and the pruning rule.

    Attributes:
        min_support: Minimum noisy support (10 on small data, 100 on large in the paper).
        max_support_share: Maximum noisy support, of the redescription and of each query, as a
            share of the noisy entity count.
        max_pvalue: Maximum noisy p-value.
        min_jaccard: Minimum noisy Jaccard index.
        max_extensions: Disjuncts added at most per side.
        max_relative_noise: The pruning rule's bound on sigma_k / support.
    """

    min_support: int = 10
    max_support_share: float = 0.8
    max_pvalue: float = 0.01
    min_jaccard: float = 0.1
    max_extensions: int = 3
    max_relative_noise: float = 0.1

    def __post_init__(self) -> None:
        if self.min_support < 0 or not 0 < self.max_support_share <= 1 or not 0 <= self.max_pvalue <= 1:
            raise ValueError("constraints need min_support >= 0, 0 < max_support_share <= 1, 0 <= max_pvalue <= 1")
        if not 0 <= self.min_jaccard <= 1 or self.max_extensions < 0 or not self.max_relative_noise > 0:
            raise ValueError("constraints need 0 <= min_jaccard <= 1, max_extensions >= 0, max_relative_noise > 0")


def cell_noise_sd(epsilon: Fraction | float) -> float:
    """The standard deviation of one count's discrete Laplace noise of scale 2 / epsilon."""
    t = math.exp(-float(epsilon) / 2)
    return math.sqrt(2 * t) / -math.expm1(-float(epsilon) / 2)   # 1 - t without cancellation at tiny epsilon


def pruning_threshold(cells: int, epsilon: Fraction | float, max_relative_noise: float = 0.1) -> float:
    """The noisy support below which a redescription over `cells` leaf pairs is pruned."""
    return math.sqrt(cells) * cell_noise_sd(epsilon) / max_relative_noise


@dataclass
class _Side:
    """The simple queries of one view: leaf sets (rows of `sets`) and their terms."""

    sets: np.ndarray          # simple queries x satisfiable leaves, 0/1
    terms: list[Term]


def _simple_queries(tree: SplitTree, views: TwoViews, satisfiable: np.ndarray) -> _Side:
    schema = views.schemas[tree.view]
    leaves = np.flatnonzero(satisfiable)
    rows, terms, seen = [], [], set()
    for position, leaf in enumerate(leaves):
        for negated in (False, True):
            row = np.zeros(leaves.size, dtype=np.int64)
            row[position] = 1
            if negated:
                row = 1 - row
            key = row.tobytes()
            if not row.any() or key in seen:
                continue
            seen.add(key)
            rows.append(row)
            terms.append(tree.leaf_term(int(leaf), schema, negated))
    return _Side(np.asarray(rows, dtype=np.int64).reshape(len(rows), leaves.size), terms)


class _Statistics:
    """Noisy statistics of unions of leaves, from the two releases."""

    def __init__(self, cells: np.ndarray, left: np.ndarray, constraints: Constraints) -> None:
        # The least-squares table consistent with both releases (equal noise variances): each row
        # of cells moves by the same share of its disagreement with the released left support.
        self.cells = cells + ((left - cells.sum(axis=1)) / (cells.shape[1] + 1))[:, None]
        self.left = self.cells.sum(axis=1)
        self.right = self.cells.sum(axis=0)
        self.size = max(float(self.cells.sum()), 1.0)
        self.constraints = constraints

    def of(self, left_set: np.ndarray, right_set: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(support, left support, right support) for rows of left and right sets, paired."""
        support = np.einsum("ki,ij,kj->k", left_set, self.cells, right_set)
        return support, left_set @ self.left, right_set @ self.right

    def jaccard(self, support: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        union = left + right - support
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(union > 0, np.clip(support / np.where(union > 0, union, 1), 0.0, 1.0), 0.0)

    def admissible(self, support: np.ndarray, left: np.ndarray, right: np.ndarray, jaccards: np.ndarray) -> np.ndarray:
        """The constraints that need no p-value (the p-value is checked at the end). The maximum
        support share bounds the support and each query's support: a query true of nearly every
        entity makes a near-tautology whose noisy p-value is mostly noise."""
        c = self.constraints
        cap = c.max_support_share * self.size
        return (support >= c.min_support) & (support <= cap) & (left <= cap) & (right <= cap) & \
            (jaccards >= c.min_jaccard)


EXTENSION_CHUNK_ELEMENTS = 1 << 21


def _extend_chunk(stats: _Statistics, sides: tuple[_Side, _Side], starts: np.ndarray,
                  max_extensions: int) -> list[tuple[list[int], list[int]]]:
    """Greedy disjunctive extension of the simple redescriptions `starts` (rows: left, right
    simple-query indices), all at once: each step, every redescription takes the one simple query
    of either view (left first on a tie) that raises its noisy Jaccard the most while the
    constraints hold and no query becomes a tautology."""
    count = starts.shape[0]
    rows = np.arange(count)
    simple = [sides[0].sets.astype(np.float64), sides[1].sets.astype(np.float64)]
    sets = [simple[0][starts[:, 0]], simple[1][starts[:, 1]]]
    used = [np.zeros((count, simple[0].shape[0]), dtype=bool), np.zeros((count, simple[1].shape[0]), dtype=bool)]
    used[0][rows, starts[:, 0]] = True
    used[1][rows, starts[:, 1]] = True
    chosen = [[[int(i)] for i in starts[:, 0]], [[int(j)] for j in starts[:, 1]]]
    added = np.zeros((2, count), dtype=np.int64)
    support, left, right = stats.of(sets[0], sets[1])
    best = stats.jaccard(support, left, right)
    active = np.ones(count, dtype=bool)
    while active.any():
        top = np.full(count, -1.0)
        top_side = np.zeros(count, dtype=np.int64)
        top_index = np.zeros(count, dtype=np.int64)
        for side in (0, 1):
            grown = np.minimum(sets[side][:, None, :] + simple[side][None, :, :], 1.0)
            if side == 0:
                s = np.einsum("skp,pq,sq->sk", grown, stats.cells, sets[1])
                lft, rgt = grown @ stats.left, (sets[1] @ stats.right)[:, None]
            else:
                s = np.einsum("sp,pq,skq->sk", sets[0], stats.cells, grown)
                lft, rgt = (sets[0] @ stats.left)[:, None], grown @ stats.right
            j = stats.jaccard(s, lft, rgt)
            ok = stats.admissible(s, lft, rgt, j) & (j > best[:, None]) & (grown.min(axis=2) == 0) & ~used[side]
            ok &= (active & (added[side] < max_extensions))[:, None]
            scored = np.where(ok, j, -1.0)
            index = scored.argmax(axis=1)
            value = scored[rows, index]
            better = value > top
            top = np.where(better, value, top)
            top_side = np.where(better, side, top_side)
            top_index = np.where(better, index, top_index)
        improved = top >= 0
        for r in np.flatnonzero(improved).tolist():
            side, index = int(top_side[r]), int(top_index[r])
            sets[side][r] = np.minimum(sets[side][r] + simple[side][index], 1.0)
            used[side][r, index] = True
            chosen[side][r].append(index)
            added[side, r] += 1
        best = np.where(improved, top, best)
        active = improved
    return [(chosen[0][r], chosen[1][r]) for r in range(count)]


def _extend_all(stats: _Statistics, sides: tuple[_Side, _Side], max_extensions: int) -> list[tuple[list[int], list[int]]]:
    """`_extend_chunk` over every simple redescription, in chunks that bound the memory."""
    a, b = np.meshgrid(np.arange(len(sides[0].terms)), np.arange(len(sides[1].terms)), indexing="ij")
    starts = np.column_stack([a.ravel(), b.ravel()])
    width = max(sides[0].sets.size, sides[1].sets.size, 1)
    chunk = max(1, EXTENSION_CHUNK_ELEMENTS // width)
    out: list[tuple[list[int], list[int]]] = []
    for first in range(0, starts.shape[0], chunk):
        out.extend(_extend_chunk(stats, sides, starts[first:first + chunk], max_extensions))
    return out


def extract_redescriptions(views: TwoViews, left_tree: SplitTree, right_tree: SplitTree,
                           epsilon: Fraction | float, noise: Any, constraints: Constraints = Constraints(),
                           origin: str = "") -> list[Redescription]:
    """extractReds (module docstring). The caller has charged `epsilon`.

    Args:
        views: The data.
        left_tree: The released tree on view 0.
        right_tree: The released tree on view 1.
        epsilon: The budget of the two releases together (eps / 2 each).
        noise: The noise source.
        constraints: Gamma and the pruning rule.
        origin: Which try / alternation this is (kept on each redescription).

    Returns:
        The redescriptions that satisfy the constraints, each marked pruned or not.
    """
    if left_tree.view != 0 or right_tree.view != 1:
        raise ValueError("extract_redescriptions needs the view-0 tree first and the view-1 tree second")
    half = Fraction(epsilon) / 2
    satisfiable = [left_tree.satisfiable_leaves(views.schemas[0]), right_tree.satisfiable_leaves(views.schemas[1])]
    leaves0 = left_tree.leaves(views.codes[0], views.schemas[0])
    leaves1 = right_tree.leaves(views.codes[1], views.schemas[1])
    p, q = left_tree.n_leaves, right_tree.n_leaves
    cells = np.bincount(leaves0 * q + leaves1, minlength=p * q).reshape(p, q)[np.ix_(*satisfiable)]
    left_counts = np.bincount(leaves0, minlength=p)[satisfiable[0]]
    noisy_cells = safe_noise.release_counts(noise, cells.astype(np.int64), 1, half)
    noisy_left = safe_noise.release_counts(noise, left_counts.astype(np.int64), 1, half)

    stats = _Statistics(noisy_cells, noisy_left, constraints)
    sides = (_simple_queries(left_tree, views, satisfiable[0]), _simple_queries(right_tree, views, satisfiable[1]))
    extended = _extend_all(stats, sides, constraints.max_extensions)
    sd = cell_noise_sd(epsilon)
    unique: dict[bytes, tuple[list[int], list[int], np.ndarray, np.ndarray]] = {}
    for left_idx, right_idx in extended:
        sets = (np.minimum(sides[0].sets[left_idx].sum(axis=0), 1), np.minimum(sides[1].sets[right_idx].sum(axis=0), 1))
        unique.setdefault(sets[0].tobytes() + b"|" + sets[1].tobytes(), (left_idx, right_idx, sets[0], sets[1]))
    found: list[Redescription] = []
    if not unique:
        return found
    entries = list(unique.values())
    left_sets = np.asarray([e[2] for e in entries], dtype=np.float64)
    right_sets = np.asarray([e[3] for e in entries], dtype=np.float64)
    supports, lefts, rights = stats.of(left_sets, right_sets)
    jaccards = stats.jaccard(supports, lefts, rights)
    for k in np.flatnonzero(stats.admissible(supports, lefts, rights, jaccards)).tolist():
        left_idx, right_idx, left_set, right_set = entries[k]
        s, lft, rgt = float(supports[k]), float(lefts[k]), float(rights[k])
        pvalue = binomial_pvalue(s, lft, rgt, stats.size)
        if pvalue > constraints.max_pvalue:
            continue
        cells_used = int(left_set.sum() * right_set.sum())
        found.append(Redescription(
            Query(0, tuple(sides[0].terms[i] for i in left_idx)), Query(1, tuple(sides[1].terms[i] for i in right_idx)),
            noisy_support=s, noisy_left=lft, noisy_right=rgt, noisy_size=stats.size, noisy_jaccard=float(jaccards[k]),
            noisy_pvalue=pvalue, support_noise_sd=math.sqrt(cells_used) * sd,
            pruned=s < pruning_threshold(cells_used, epsilon, constraints.max_relative_noise), origin=origin))
    return found
