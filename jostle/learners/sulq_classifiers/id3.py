"""SuLQ ID3: a decision tree grown from SuLQ counts (noisy information gain, noisy leaves).

What it follows. The lecture notes (`../shared/papers/shmatikov_ppdm.txt`, "Computing ID3 with
SuLQ") and Blum, Dwork, McSherry and Nissim, "Practical privacy: the SuLQ framework" (PODS 2005,
section 5), as remembered (the paper's text was not available here): ID3 picks, at each node,
the attribute of largest information gain and recurses on each of its values; with SuLQ the
gains are computed from noisy counts, the chosen attribute's gain is within some Delta of the
best one's, and the recursion stops when the noisy counts fall to the order of sqrt(R), below
which they are mostly noise. The details below (level-wise batches padded to a fixed shape, the
exact stopping threshold, leaves labelled by noisy class counts) are ours.

The query plan (public, fixed in advance). Let b be the largest domain size, V the sum of the
domain sizes, C the number of classes and D the public maximum depth. The tree is grown level
by level; level d (0 <= d < D) has b^d *slots* (a node's child for value v of its split
attribute is slot parent * b + v, so the slots hold every tree of depth D whatever attributes
it splits on). For every slot of level d the learner asks, in one batch,

  * the C class counts of the rows at the slot, and
  * for every attribute a, value v and class c, the count of rows at the slot with a = v and
    class c (C V queries),

and for the b^D slots of level D the C class counts. So

    T = C (1 + V) (b^0 + b^1 + ... + b^(D-1)) + C b^D        (`query_count`)

whatever the data: a slot no node occupies (under a leaf, or past a small attribute's values)
is asked all the same, and its count is of no row. Every query is a count (each row adds 0 or
1), so its per-row value lies in [0, 1]; counted SuLQ's way, a batch of L queries has
touched = L.

The learner (post-processing of the noisy counts only):
  * node size N' = the sum of its C noisy class counts; a node becomes a leaf when
    N' < stop_factor * sd * C * |D_a|, a the attribute of largest noisy gain (the noisy table
    it would split on, C |D_a| cells, would hold fewer rows per cell than stop_factor noise
    standard deviations: the counts are "of the order of sqrt(R)"), at depth D, when every
    attribute is used on its path, or when no noisy gain is positive;
  * otherwise it splits on the unused attribute of largest noisy information gain, computed
    from the noisy counts clipped at 0;
  * a leaf's class distribution is its noisy class counts clipped at 0, normalised (its
    parent's when none is positive, or when its noisy size is below stop_factor * sd * C, so
    that every class count is within the noise).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from jostle.learners.sulq_classifiers.queries import Calibration, ChargeFunction, Releases, calibrate, check_shape

__all__ = ["DEFAULT_DEPTH", "DEFAULT_STOP_FACTOR", "SuLQTree", "batches", "check_stop_factor", "fit_id3", "query_count",
           "usable_depth"]

DEFAULT_DEPTH = 2
DEFAULT_STOP_FACTOR = 1.0


def _check_shape(domain_sizes: Sequence[int], n_classes: int, depth: int) -> tuple[list[int], int, int]:
    return check_shape("SuLQ ID3", domain_sizes, n_classes, depth, "depth", 0)


def check_stop_factor(stop_factor: Any) -> float:
    """The public stop factor as a float, checked (call it before anything is charged).

    Raises:
        ValueError: Not a finite number >= 0.
    """
    if (isinstance(stop_factor, bool) or not isinstance(stop_factor, (int, float, np.integer, np.floating))
            or not np.isfinite(stop_factor) or stop_factor < 0):
        raise ValueError(f"the stop factor must be a finite number >= 0, got {stop_factor!r}")
    return float(stop_factor)


def batches(domain_sizes: Sequence[int], n_classes: int, depth: int) -> list[int]:
    """The lengths of the learner's batches: one per level 0..depth-1 and the leaves' (public)."""
    sizes, classes, depth = _check_shape(domain_sizes, n_classes, depth)
    branching, values = max(sizes), sum(sizes)
    return [branching ** d * classes * (1 + values) for d in range(depth)] + [branching ** depth * classes]


def query_count(domain_sizes: Sequence[int], n_classes: int, depth: int = DEFAULT_DEPTH) -> int:
    """T: the number of SuLQ queries SuLQ ID3 asks on a table of this public shape (see the module
    docstring), whatever the rows."""
    return sum(batches(domain_sizes, n_classes, depth))


def usable_depth(domain_sizes: Sequence[int], n_classes: int, max_depth: int, max_queries: int) -> int:
    """The largest depth <= `max_depth` whose plan asks at most `max_queries` queries (at least
    0): a public choice from the table's public shape."""
    depth = int(max_depth)
    while depth > 0 and query_count(domain_sizes, n_classes, depth) > max_queries:
        depth -= 1
    return depth


@dataclass
class SuLQTree:
    """A tree grown by SuLQ ID3: one array per level (a function of noisy counts only: public).

    Attributes:
        split: split[d][s] is the attribute slot s of level d splits on, -1 for a leaf (or an
            unoccupied slot).
        proba: proba[d][s] is the class distribution of the leaf at slot s of level d.
        domain_sizes, n_classes: The public shape the tree was grown for.
        queries: T, the number of SuLQ queries released to grow it.
        variance: R, the noise variance of every query.
        rho: What the fit cost.
    """

    split: list[np.ndarray]
    proba: list[np.ndarray]
    domain_sizes: tuple[int, ...]
    n_classes: int
    queries: int
    variance: float
    rho: float
    classes_: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.classes_ = np.arange(self.n_classes)

    @property
    def depth(self) -> int:
        """The public maximum depth it was grown to (leaves may be shallower)."""
        return len(self.split) - 1

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Class distributions of rows of integer codes (columns in the training order)."""
        X = np.asarray(X, dtype=np.int64)
        rows = X.shape[0]
        branching = max(self.domain_sizes)
        result = np.zeros((rows, self.n_classes))
        slot = np.zeros(rows, dtype=np.int64)
        pending = np.ones(rows, dtype=bool)
        for level in range(len(self.split)):
            attribute = self.split[level][slot]
            at_leaf = pending & (attribute < 0)
            result[at_leaf] = self.proba[level][slot[at_leaf]]
            pending &= ~at_leaf
            if not pending.any():
                break
            moving = np.flatnonzero(pending)
            slot[moving] = slot[moving] * branching + X[moving, attribute[moving]]
        return result

    def predict(self, X: np.ndarray) -> np.ndarray:
        """The most probable class code of each row."""
        return self.predict_proba(X).argmax(axis=1)

    def to_text(self, names: Sequence[str] = (), values: Sequence[Sequence[Any]] = (),
                classes: Sequence[Any] = (), max_lines: int = 60, **_: Any) -> str:
        """A readable printout (attribute names, value labels and class labels if given)."""
        branching = max(self.domain_sizes)
        lines = [f"SuLQ ID3 tree ({self.queries} SuLQ queries, variance {self.variance:.6g}, rho {self.rho:.6g})"]

        def label(c: int) -> str:
            return str(classes[c]) if len(classes) > c else str(c)

        def walk(level: int, slot: int, indent: str) -> None:
            if len(lines) >= max_lines:
                return
            attribute = int(self.split[level][slot])
            if attribute < 0:
                distribution = self.proba[level][slot]
                lines.append(f"{indent}-> {label(int(distribution.argmax()))} "
                             f"({', '.join(f'{p:.2f}' for p in distribution)})")
                return
            name = names[attribute] if len(names) > attribute else f"x{attribute}"
            for value in range(self.domain_sizes[attribute]):
                shown = values[attribute][value] if len(values) > attribute else value
                lines.append(f"{indent}{name} = {shown}:")
                walk(level + 1, slot * branching + value, indent + "  ")

        walk(0, 0, "")
        return "\n".join(lines)


def _entropy(counts: np.ndarray) -> np.ndarray:
    """Entropy (bits) of distributions along the last axis of non-negative counts (0 if empty)."""
    total = counts.sum(axis=-1, keepdims=True)
    share = np.divide(counts, total, out=np.zeros_like(counts), where=total > 0)
    logs = np.log2(share, out=np.zeros_like(share), where=share > 0)
    return -(share * logs).sum(axis=-1)


def _gains(node_counts: np.ndarray, table: np.ndarray, sizes: list[int], offsets: np.ndarray) -> np.ndarray:
    """Noisy information gain of every attribute at every slot: (slots, attributes)."""
    clipped_node = np.maximum(node_counts, 0.0)
    base = _entropy(clipped_node)
    clipped = np.maximum(table, 0.0)  # (slots, V, C)
    gains = np.empty((table.shape[0], len(sizes)))
    for a, size in enumerate(sizes):
        part = clipped[:, offsets[a]:offsets[a] + size, :]          # (slots, |D_a|, C)
        per_value = part.sum(axis=2)                                 # (slots, |D_a|)
        total = per_value.sum(axis=1)
        weights = np.divide(per_value, total[:, None], out=np.zeros_like(per_value), where=total[:, None] > 0)
        gains[:, a] = base - (weights * _entropy(part)).sum(axis=1)
    return gains


def _distribution(counts: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Noisy counts clipped at 0 and normalised; `fallback` rows where none is positive."""
    clipped = np.maximum(counts, 0.0)
    total = clipped.sum(axis=1, keepdims=True)
    return np.where(total > 0, clipped / np.where(total > 0, total, 1.0), fallback)


def fit_id3(X: np.ndarray, y: np.ndarray, domain_sizes: Sequence[int], n_classes: int, noise: Any,
            charge: ChargeFunction | None, *, rho: Any = None, variance: Any = None, cap: Any = None,
            depth: int = DEFAULT_DEPTH, stop_factor: float = DEFAULT_STOP_FACTOR,
            calibration: Calibration | None = None) -> SuLQTree:
    """Grow a SuLQ ID3 tree (see the module docstring).

    Args:
        X, y: Integer codes (rows x attributes) under the public `domain_sizes`, class codes.
        domain_sizes, n_classes: The public shape.
        noise: The randomness the releases draw from.
        charge: charge(RhoZCDPBudget, description), called before each batch is drawn (the one
            guard of an Option, or an outside accountant); None charges nothing (tests only).
        rho: The fit's budget (R = `variance_for_rho(rho, T)`), or
        variance: R itself (the fit then costs the batches' rhos).
        cap: A rho the whole fit must fit in, checked before anything is charged or drawn.
        depth: The public maximum depth D.
        stop_factor: The public factor of the stopping rule.
        calibration: A calibration made already (of `batches(...)`), instead of rho / variance.

    Raises:
        ValueError: Bad public parameters (before anything is charged).
        OverBudgetError: The fit costs more than `cap` (before anything is charged), or a charge
            is refused (before its batch is drawn).
    """
    sizes, classes, depth = _check_shape(domain_sizes, n_classes, depth)
    stop_factor = check_stop_factor(stop_factor)
    plan = calibration if calibration is not None else calibrate(batches(sizes, classes, depth), rho, variance)
    if cap is not None:
        plan.check(cap, "SuLQ ID3")
    X = np.asarray(X, dtype=np.int64).reshape(-1, len(sizes))
    y = np.asarray(y, dtype=np.int64)
    releases = Releases(plan, noise, charge, "SuLQ ID3")
    branching, values = max(sizes), sum(sizes)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    noise_per_cell = stop_factor * plan.sd * classes  # times the split attribute's domain size
    width = classes * (1 + values)
    uniform = np.full((1, classes), 1.0 / classes)
    split: list[np.ndarray] = []
    proba: list[np.ndarray] = []
    slot = np.zeros(len(y), dtype=np.int64)       # each row's slot at the current level
    active = np.ones(len(y), dtype=bool)          # rows not yet at a leaf
    open_slots = np.array([True])                 # slots holding a node at this level
    used = np.zeros((1, len(sizes)), dtype=bool)  # attributes used on the path to each slot
    parent = uniform.copy()                       # each slot's parent's distribution
    for level in range(depth + 1):
        slots = branching ** level
        rows = np.flatnonzero(active)
        base = slot[rows] * (width if level < depth else classes)
        if level < depth:
            # Counts of (slot, class) and (slot, attribute = value, class): every row adds 1 to
            # k + 1 of them (a per-row value in {0, 1} for each query).
            cells = [base + y[rows]] + [base + classes + (offsets[a] + X[rows, a]) * classes + y[rows]
                                        for a in range(len(sizes))]
            sums = np.bincount(np.concatenate(cells), minlength=slots * width)
            noisy = releases.release(sums, f"level {level}: class and attribute-value-class counts of "
                                           f"{slots} slots").reshape(slots, width)
            node_counts, table = noisy[:, :classes], noisy[:, classes:].reshape(slots, values, classes)
        else:
            sums = np.bincount(base + y[rows], minlength=slots * classes)
            node_counts = releases.release(sums, f"level {level}: class counts of {slots} leaf slots").reshape(
                slots, classes)
        distribution = _distribution(node_counts, parent)
        # A node whose noisy size is below stop_factor sd C (each class count within noise) keeps
        # its parent's distribution: its own counts are mostly noise.
        small = node_counts.sum(axis=1) < stop_factor * plan.sd * classes
        distribution[small] = parent[small]
        attribute = np.full(slots, -1, dtype=np.int64)
        if level < depth:
            gains = _gains(node_counts, table, sizes, offsets)
            gains[used] = -np.inf
            best = gains.argmax(axis=1)
            cells = np.asarray(sizes)[best]  # the chosen attribute's values
            grows = (open_slots & (node_counts.sum(axis=1) >= noise_per_cell * cells)
                     & (gains[np.arange(slots), best] > 0))
            attribute[grows] = best[grows]
        split.append(attribute)
        proba.append(np.where((open_slots & (attribute < 0))[:, None], distribution, 0.0))
        if level == depth:
            break
        # Children: slot s * b + v for v < |D_a| of a growing slot s (all public, from noisy counts).
        child_open = np.zeros(slots * branching, dtype=bool)
        child_used = np.repeat(used, branching, axis=0)
        for s in np.flatnonzero(attribute >= 0):
            a = attribute[s]
            child_open[s * branching: s * branching + sizes[a]] = True
            child_used[s * branching: (s + 1) * branching, a] = True
        parent = np.repeat(distribution, branching, axis=0)
        moving = active & (attribute[slot] >= 0)
        index = np.flatnonzero(moving)
        slot[index] = slot[index] * branching + X[index, attribute[slot[index]]]
        active = moving
        open_slots, used = child_open, child_used
    released = releases.finish()
    return SuLQTree(split, proba, tuple(sizes), classes, released, float(plan.variance), float(plan.rho))
