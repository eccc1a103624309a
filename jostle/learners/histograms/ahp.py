"""AHP (Zhang, Chen, Xu, Meng, Xie, SDM 2014): cluster cells of similar noisy counts, then
measure each cluster's total.

Budget split: eps1 = ratio * epsilon (default ratio 0.85, as in DPBench) for a noisy
histogram, eps2 = epsilon - eps1 for the cluster totals.
  1. noisy = x + Laplace(1 / eps1) on every cell (sensitivity 1: disjoint cells);
  2. noisy values <= eta * ln(n) / eps1 are set to 0 (eta = 0.35), the values are sorted, and
     the sorted sequence is cut greedily into contiguous clusters: cell j starts a new
     cluster when extending the current cluster raises its cost (sum of squared deviations
     plus 2 / eps2^2 per cluster, divided by its size) by at least err*(j), the best cost of
     a cluster starting at j;
  3. each cluster's true total gets Laplace(1 / eps2) noise (clusters are disjoint:
     sensitivity 1) and is spread evenly over the cluster's cells.
Privacy: step 1 is eps1-DP, step 2 is post-processing of it, step 3 is eps2-DP on a
partition chosen from released values; sequential composition gives epsilon. 2D inputs are
flattened (clusters ignore cell positions).

err*(j) = min over l >= j of (v_j - mean(v_j..v_l))^2 + (2 / eps2^2) / (l - j + 1)^2 on the
sorted values v. The reference stops scanning l early; because v is sorted the first term
never decreases in l and the second is at least its value at l = n - 1, so stopping once the
first term plus that floor exceeds the best value so far gives the exact minimum. Runs of
equal values (the thresholded zeros) are skipped in one step.
"""

from __future__ import annotations

import numpy as np

from jostle.learners.histograms.measure import (HistogramNoise, PrivacyLedger, check_inputs,
                                       laplace_mechanism, split_budget)
from jostle.learners.histograms.workloads import RangeWorkload


def ahp_budget(epsilon: float, ratio: float = 0.85) -> dict[str, float]:
    """AHP's split: `ratio` for the noisy histogram, the rest for the cluster totals."""
    return split_budget(epsilon, {"noisy histogram": ratio, "cluster totals": 1.0 - ratio})


def _best_cluster_costs(values: np.ndarray, noise_cost: float, block: int = 8) -> np.ndarray:
    """err*(j) for every j of the sorted `values` (see the module docstring).

    Rows are scanned in blocks of columns that start small (most scans stop at once) and
    double for the rows still running."""
    n = values.size
    prefix = np.concatenate([[0.0], np.cumsum(values)])
    j_all = np.arange(n)
    # Last index of the run of values equal to values[j].
    change = np.flatnonzero(np.diff(values) != 0)
    run_end = np.concatenate([change, [n - 1]])[np.searchsorted(change, j_all, side="left")]
    length = run_end - j_all + 1
    best = (values - (prefix[run_end + 1] - prefix[j_all]) / length) ** 2 + noise_cost / length ** 2
    floor = noise_cost / (n - j_all) ** 2
    active = j_all[run_end < n - 1]
    start = run_end[active] + 1
    while active.size:
        ls = start[:, None] + np.arange(block)[None, :]
        valid = ls < n
        ls = np.minimum(ls, n - 1)
        lens = ls - active[:, None] + 1
        first = (values[active][:, None] - (prefix[ls + 1] - prefix[active][:, None]) / lens) ** 2
        cost = np.where(valid, first + noise_cost / lens ** 2, np.inf)
        best[active] = np.minimum(best[active], cost.min(axis=1))
        stop = (~valid) | (first + floor[active][:, None] >= best[active][:, None])
        keep = ~stop.any(axis=1)
        active, start = active[keep], start[keep] + block
        block = min(2 * block, 4096)
    return best


def greedy_clusters(values: np.ndarray, eps2: float) -> list[tuple[int, int]]:
    """AHP's greedy cut of the sorted `values` into half-open clusters [start, stop)."""
    n = values.size
    noise_cost = 2.0 / eps2 ** 2
    best_start = _best_cluster_costs(values, noise_cost).tolist()
    prefix = np.concatenate([[0.0], np.cumsum(values)]).tolist()
    squares = np.concatenate([[0.0], np.cumsum(values ** 2)]).tolist()

    def cost(i: int, j: int) -> float:  # cluster values[i..j] inclusive
        length = j - i + 1
        mean = (prefix[j + 1] - prefix[i]) / length
        return (squares[j + 1] - squares[i]) - length * mean * mean + noise_cost / length

    clusters, i, last = [], 0, cost(0, 0)
    for j in range(1, n):
        now = cost(i, j)
        if now >= last + best_start[j]:
            clusters.append((i, j))
            i, last = j, cost(j, j)
        else:
            last = now
    clusters.append((i, n))
    return clusters


def run_ahp(x: np.ndarray, epsilon: float, workload: RangeWorkload | None, noise: HistogramNoise,
            ledger: PrivacyLedger | None = None, ratio: float = 0.85, eta: float = 0.35) -> np.ndarray:
    """AHP on a 1D or 2D histogram (2D is flattened)."""
    x, ledger = check_inputs(x, epsilon, ledger)
    budget = ahp_budget(epsilon, ratio)
    flat = x.ravel()
    n = flat.size
    eps1, eps2 = budget["noisy histogram"], budget["cluster totals"]
    noisy = laplace_mechanism(flat, 1.0, eps1, noise, ledger, "AHP: noisy histogram")
    noisy = np.where(noisy <= eta * np.log(max(n, 2)) / eps1, 0.0, noisy)
    order = np.argsort(noisy, kind="stable")
    clusters = greedy_clusters(noisy[order], eps2)
    starts = np.array([a for a, _ in clusters])
    sizes = np.array([b - a for a, b in clusters])
    totals = np.add.reduceat(flat[order], starts)
    # Clusters are disjoint sets of cells: the totals have L1 sensitivity 1.
    noisy_totals = laplace_mechanism(totals, 1.0, eps2, noise, ledger, "AHP: cluster totals")
    estimate = np.empty(n)
    estimate[order] = np.repeat(noisy_totals / sizes, sizes)
    return estimate.reshape(x.shape)
