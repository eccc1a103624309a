"""Hierarchical histograms: HB (Qardaji, Yang, Li, PVLDB 2013) and QuadTree (Cormode et al.,
ICDE 2012), both with exact least-squares inference (`tree.tree_least_squares`).

HB. A tree whose nodes split each side into b near-equal parts down to single cells; the
branching b minimises the paper's average range-query variance: in 1D,
(b - 1) h^3 - 2 (b + 1) h^2 / 3 with h = ceil(log_b n) (Eq. 3), in 2D b (m - 1) h^2 for an
m x m grid (Sec. 5.1). The root is not measured (its total follows from level 1); each of
the h levels below it gets epsilon / h.
Privacy: the nodes of one level are disjoint regions, so the vector of a level's sums has
L1 sensitivity 1 and Laplace(h / epsilon) noise makes it (epsilon / h)-DP; the h levels
compose sequentially to epsilon. Inference is post-processing.

QuadTree. Every node splits into 2 x 2 (a side of one cell is not split), all levels measured,
including the root, with the geometric budget of Cormode et al.: level d (root
d = 0) gets epsilon_d proportional to 2^(d / 3), normalised so that sum_d epsilon_d = epsilon.
Privacy: as for HB, each level has sensitivity 1 and the levels compose to epsilon.
"""

from __future__ import annotations

import math

import numpy as np

from jostle.learners.histograms.measure import (HistogramNoise, PrivacyLedger, check_inputs,
                                       laplace_mechanism, split_budget)
from jostle.learners.histograms.tree import RegionTree, build_region_tree, paint_leaves, tree_least_squares
from jostle.learners.histograms.workloads import RangeWorkload, as_grid


def _levels_needed(n: int, b: int) -> int:
    """ceil(log_b n) computed with integers."""
    h, reach = 0, 1
    while reach < n:
        reach *= b
        h += 1
    return h


def hb_branching_1d(n: int) -> int:
    """The branching factor minimising Qardaji et al.'s 1D variance expression (Eq. 3)."""
    if n < 2:
        return 2
    best, best_b = math.inf, 2
    for b in range(2, n + 1):
        h = _levels_needed(n, b)
        v = (b - 1) * h ** 3 - 2 * (b + 1) * h ** 2 / 3
        if v < best:
            best, best_b = v, b
    return best_b


def hb_branching_2d(cells: int) -> int:
    """The per-side branching factor for a grid of `cells` cells (Qardaji et al. Sec. 5.1)."""
    side = int(math.isqrt(cells))
    if side < 2:
        return 2
    best, best_b = math.inf, 2
    for b in range(2, side + 1):
        v = b * (side - 1) * _levels_needed(side, b) ** 2
        if v < best:
            best, best_b = v, b
    return best_b


def _measure_levels(tree: RegionTree, grid: np.ndarray, level_budgets: dict[int, float],
                    noise: HistogramNoise, ledger: PrivacyLedger, name: str) -> np.ndarray:
    """Noisy sums of the levels in `level_budgets` (sensitivity 1 per level); the
    least-squares estimate as a grid."""
    true_sums = tree.sums(grid)
    noisy = np.zeros(tree.size)
    variance = np.full(tree.size, np.inf)
    for d, eps_d in level_budgets.items():
        lv = tree.level(d)
        # One level's regions are disjoint: L1 sensitivity 1.
        noisy[lv] = laplace_mechanism(true_sums[lv], 1.0, eps_d, noise, ledger,
                                      f"{name}: level {d} sums")
        variance[lv] = 2.0 / eps_d ** 2
    return paint_leaves(tree, tree_least_squares(tree, noisy, variance))


def hb_tree(shape: tuple[int, ...], branching: int | None = None) -> RegionTree:
    """HB's tree for a 1D or 2D domain (branching chosen by Qardaji et al. unless given)."""
    grid_shape = as_grid(np.empty(shape)).shape
    if len(shape) == 1:
        b = branching or hb_branching_1d(shape[0])
    else:
        b = branching or hb_branching_2d(shape[0] * shape[1])
    return build_region_tree(grid_shape, b)


def hb_budget(epsilon: float, shape: tuple[int, ...], branching: int | None = None) -> dict[str, float]:
    """HB's split: epsilon / h for each of the h levels below the root."""
    height = hb_tree(shape, branching).height
    if height == 0:
        return {"level 0": epsilon}
    return split_budget(epsilon, {f"level {d}": 1.0 / height for d in range(1, height + 1)})


def run_hb(x: np.ndarray, epsilon: float, workload: RangeWorkload | None, noise: HistogramNoise,
           ledger: PrivacyLedger | None = None, branching: int | None = None) -> np.ndarray:
    """HB (1D or 2D): uniform budget over the levels below the root, least squares."""
    x, ledger = check_inputs(x, epsilon, ledger)
    tree = hb_tree(x.shape, branching)
    budget = hb_budget(epsilon, x.shape, branching)
    levels = {int(name.split()[1]): eps for name, eps in budget.items()}
    return _measure_levels(tree, as_grid(x), levels, noise, ledger, "HB").reshape(x.shape)


def quadtree_budget(epsilon: float, shape: tuple[int, ...], max_depth: int | None = None) -> dict[str, float]:
    """Cormode et al.'s geometric split: level d gets a share proportional to 2^(d/3)."""
    height = build_region_tree(as_grid(np.empty(shape)).shape, 2, max_depth).height
    weights = np.array([2.0 ** (d / 3.0) for d in range(height + 1)])
    return split_budget(epsilon, {f"level {d}": w for d, w in enumerate(weights / weights.sum())})


def run_quadtree(x: np.ndarray, epsilon: float, workload: RangeWorkload | None, noise: HistogramNoise,
                 ledger: PrivacyLedger | None = None, max_depth: int | None = None) -> np.ndarray:
    """QuadTree: 2 x 2 splits, geometric budget, all levels measured, least squares."""
    x, ledger = check_inputs(x, epsilon, ledger)
    tree = build_region_tree(as_grid(x).shape, 2, max_depth)
    budget = quadtree_budget(epsilon, x.shape, max_depth)
    levels = {int(name.split()[1]): eps for name, eps in budget.items()}
    return _measure_levels(tree, as_grid(x), levels, noise, ledger, "QuadTree").reshape(x.shape)
