"""Trees of rectangular regions and exact least-squares inference on them.

Hierarchical algorithms (HB, QuadTree, AGrid, DAWA's greedy hierarchy) measure noisy sums of
nested regions of the domain. This module builds such trees (vectorised, level by level),
computes the true region sums from a summed-area table, and turns noisy measurements into the
weighted least-squares (minimum-variance linear unbiased) estimate of every region.

Inference (`tree_least_squares`) is the two-pass algorithm of Hay et al. (PVLDB 2010),
generalised to arbitrary fan-out, unmeasured nodes and per-node variances:
  * bottom-up, z_v is the best estimate of region v from the measurements inside its subtree,
    with variance V_v: a leaf has z = y, V = var; an inner node combines its own measurement y_v
    (variance var_v) with the children's sum Z = sum z_c (variance S = sum V_c) by inverse
    variance weighting (z_v = Z, V_v = S when v is unmeasured);
  * top-down, the root's final estimate is z_root, and each child gets
    x_c = z_c + (V_c / S) (x_parent - Z), i.e. the parent's residual is shared in proportion to
    the children's variances.
The measurements outside v's subtree depend on v's cells only through their total x_v, so the
conditional estimate of the children given x_v is exactly the top-down formula: the result
equals the generalised least-squares solution (tests compare it with a dense solve).

Leaves may be blocks of several cells; `paint_leaves` spreads each leaf's estimate uniformly
over its cells (the minimum-norm least-squares completion when nothing finer was measured).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jostle.learners.histograms.workloads import _prefix_2d


@dataclass
class RegionTree:
    """Nested rectangles [r0, r1) x [c0, c1) of a (rows, cols) grid, in breadth-first order.

    `parent[i]` is -1 for the root; nodes of one depth are contiguous and ordered so that
    `level_offsets[d]:level_offsets[d + 1]` are the nodes at depth d.
    """

    grid_shape: tuple[int, int]
    r0: np.ndarray
    r1: np.ndarray
    c0: np.ndarray
    c1: np.ndarray
    parent: np.ndarray
    depth: np.ndarray

    def __post_init__(self) -> None:
        self.level_offsets = np.searchsorted(self.depth, np.arange(self.depth.max() + 2))
        self.is_leaf = np.ones(self.size, dtype=bool)
        self.is_leaf[self.parent[self.parent >= 0]] = False

    @property
    def size(self) -> int:
        return int(self.parent.size)

    @property
    def height(self) -> int:
        """The largest depth (the root has depth 0)."""
        return int(self.depth.max())

    def level(self, d: int) -> slice:
        return slice(int(self.level_offsets[d]), int(self.level_offsets[d + 1]))

    def sums(self, grid: np.ndarray) -> np.ndarray:
        """The true total of every region (from a summed-area table)."""
        table = _prefix_2d(grid)
        return table[self.r1, self.c1] - table[self.r0, self.c1] - table[self.r1, self.c0] \
            + table[self.r0, self.c0]


def _split(lo: np.ndarray, hi: np.ndarray, parts: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Part `index` of `parts` near-equal pieces of each [lo, hi) (sizes differ by at most 1)."""
    length = hi - lo
    return lo + (index * length) // parts, lo + ((index + 1) * length) // parts


def split_regions(r0: np.ndarray, r1: np.ndarray, c0: np.ndarray, c1: np.ndarray,
                  k_rows: np.ndarray, k_cols: np.ndarray) -> tuple[np.ndarray, ...]:
    """Split region i into k_rows[i] x k_cols[i] near-equal blocks (row-major).

    Returns the blocks' r0, r1, c0, c1 and, for each block, the index of its region.
    """
    counts = k_rows * k_cols
    owner = np.repeat(np.arange(r0.size), counts)
    within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    kr, kc = k_rows[owner], k_cols[owner]
    nr0, nr1 = _split(r0[owner], r1[owner], kr, within // kc)
    nc0, nc1 = _split(c0[owner], c1[owner], kc, within % kc)
    return nr0, nr1, nc0, nc1, owner


def tree_from_levels(grid_shape: tuple[int, int],
                     levels: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
                     ) -> RegionTree:
    """A RegionTree from per-depth (r0, r1, c0, c1, parent index within the previous depth)."""
    offsets = np.cumsum([0] + [lv[0].size for lv in levels])
    parents = [np.array([-1])] + [lv[4] + offsets[d] for d, lv in enumerate(levels[1:])]
    arrays = [np.concatenate([lv[i] for lv in levels]) for i in range(4)]
    depths = np.concatenate([np.full(lv[0].size, d) for d, lv in enumerate(levels)])
    return RegionTree(grid_shape, *arrays, parent=np.concatenate(parents), depth=depths)


def build_region_tree(grid_shape: tuple[int, int], branching: int | tuple[int, int],
                      max_depth: int | None = None) -> RegionTree:
    """A tree whose nodes split each side into `branching` near-equal parts, down to cells.

    A side shorter than the branching factor is split into single cells; a node stops being
    split when it is a single cell or at `max_depth`.
    """
    rows, cols = grid_shape
    b_rows, b_cols = (branching, branching) if isinstance(branching, int) else branching
    if min(b_rows, b_cols) < 2:
        raise ValueError("branching must be at least 2")
    levels = [tuple(np.array([v]) for v in (0, rows, 0, cols, -1))]
    while max_depth is None or len(levels) - 1 < max_depth:
        r0, r1, c0, c1, _ = levels[-1]
        splittable = np.flatnonzero((r1 - r0 > 1) | (c1 - c0 > 1))
        if splittable.size == 0:
            break
        r0, r1, c0, c1 = r0[splittable], r1[splittable], c0[splittable], c1[splittable]
        nr0, nr1, nc0, nc1, owner = split_regions(
            r0, r1, c0, c1, np.minimum(b_rows, r1 - r0), np.minimum(b_cols, c1 - c0))
        levels.append((nr0, nr1, nc0, nc1, splittable[owner]))
    return tree_from_levels((rows, cols), levels)


def tree_least_squares(tree: RegionTree, measured: np.ndarray, variance: np.ndarray) -> np.ndarray:
    """Least-squares estimates of every region's total from noisy region sums.

    Args:
        tree: The regions.
        measured: Noisy totals, one per node (ignored where the variance is infinite).
        variance: Noise variance per node; np.inf marks an unmeasured node. Leaves must be
            measured.

    Returns:
        The consistent estimate of every node's total (children sum to their parent).
    """
    measured = np.asarray(measured, dtype=float)
    variance = np.broadcast_to(np.asarray(variance, dtype=float), measured.shape)
    if np.any(~np.isfinite(variance[tree.is_leaf])):
        raise ValueError("every leaf of the tree must be measured")
    n = tree.size
    z = np.zeros(n)
    v = np.zeros(n)
    child_z = np.zeros(n)
    child_v = np.zeros(n)
    for d in range(tree.height, -1, -1):
        lv = tree.level(d)
        own_y, own_var = measured[lv], variance[lv]
        leaf = tree.is_leaf[lv]
        cz, cv = child_z[lv], child_v[lv]
        finite = np.isfinite(own_var)
        with np.errstate(divide="ignore", invalid="ignore"):
            precision = np.where(finite, 1.0 / own_var, 0.0) + np.where(leaf, 0.0, 1.0 / cv)
            combined = (np.where(finite, own_y / own_var, 0.0)
                        + np.where(leaf, 0.0, cz / cv)) / precision
        z[lv] = combined
        v[lv] = 1.0 / precision
        if d > 0:
            parents = tree.parent[lv]
            child_z += np.bincount(parents, weights=z[lv], minlength=n)
            child_v += np.bincount(parents, weights=v[lv], minlength=n)
    estimate = np.empty(n)
    estimate[0] = z[0]
    for d in range(1, tree.height + 1):
        lv = tree.level(d)
        parents = tree.parent[lv]
        residual = estimate[parents] - child_z[parents]
        estimate[lv] = z[lv] + v[lv] / child_v[parents] * residual
    return estimate


def paint_leaves(tree: RegionTree, estimate: np.ndarray) -> np.ndarray:
    """A (rows, cols) grid with each leaf's estimate spread evenly over its cells."""
    rows, cols = tree.grid_shape
    leaves = np.flatnonzero(tree.is_leaf)
    r0, r1, c0, c1 = tree.r0[leaves], tree.r1[leaves], tree.c0[leaves], tree.c1[leaves]
    density = estimate[leaves] / ((r1 - r0) * (c1 - c0))
    if np.all((r1 - r0 == 1) & (c1 - c0 == 1)):
        grid = np.zeros((rows, cols))
        grid[r0, c0] = density
        return grid
    # Disjoint blocks: mark each block's corners in a difference array, then integrate.
    corners = np.zeros((rows + 1, cols + 1))
    np.add.at(corners, (r0, c0), density)
    np.add.at(corners, (r0, c1), -density)
    np.add.at(corners, (r1, c0), -density)
    np.add.at(corners, (r1, c1), density)
    return np.cumsum(np.cumsum(corners, axis=0), axis=1)[:rows, :cols]
