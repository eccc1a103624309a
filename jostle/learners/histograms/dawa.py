"""DAWA (Li, Hay, Miklau, Wang, PVLDB 2014): a private data-aware partition, then a
workload-aware weighted hierarchy over the buckets, least squares, uniform expansion.

Budget split (epsilon given, ratio rho = 0.25 as in the paper):
  * eps1 = rho * epsilon: the L1 partition (`dawa_partition.l1_partition`, eps1-DP by the
    argument in its module docstring; Li et al.'s calibration of it is NOT eps1-DP, see
    there: we use Laplace(4 / eps1) on every candidate, single cells included, unclipped);
  * eps2 = epsilon - eps1: GreedyH's weighted measurements of bucket-range totals
    (`greedy_h`, the reference's depth-decayed criterion), Laplace(Delta / eps2) with Delta
    the computed max path weight (= 1).
Sequential composition gives epsilon. The GreedyH weights depend on the public workload and
the released partition only. Inference: weighted least squares on the bucket tree
(`tree.tree_least_squares`, exact), each bucket's estimate spread evenly over its cells
(a block measured only by its total is first shared equally among its buckets, as the
pseudo-inverse does).

2D (as DPBench): cells are ordered along a Hilbert curve, the 1D algorithm runs on that
order with the workload's rectangles reduced to the buckets, and the estimate is put back.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from jostle.learners.histograms.dawa_partition import hilbert_order, l1_partition
from jostle.learners.histograms.greedy_h import GramForms, RowForms, greedy_hierarchy, path_sensitivity
from jostle.learners.histograms.measure import (HistogramNoise, PrivacyLedger, check_inputs,
                                       laplace_mechanism, split_budget)
from jostle.learners.histograms.tree import tree_least_squares
from jostle.learners.histograms.workloads import RangeWorkload


def dawa_budget(epsilon: float, ratio: float = 0.25) -> dict[str, float]:
    """DAWA's split: `ratio` for the partition, the rest for the bucket measurements.

    For ratio <= 1/2 the two parts add up to `epsilon` EXACTLY (as rationals): the measurements
    get m = fl(epsilon (1 - ratio)), which lies in [epsilon / 2, epsilon], and the partition
    gets epsilon - m, exact in floating point by Sterbenz's lemma. (`split_budget`, used for
    larger ratios, may leave an ulp unspent.)
    """
    if 0.0 <= ratio <= 0.5 and math.isfinite(epsilon) and epsilon > 0:
        measurements = min(float(epsilon) * (1.0 - ratio), float(epsilon))
        return {"partition": float(epsilon) - measurements, "measurements": measurements}
    return split_budget(epsilon, {"partition": ratio, "measurements": 1.0 - ratio})


PARTITION_SHARES = {"DAWA": 0.25, "DAWA10": 0.1}
"""The partition / measurement splits offered as Options (issue 27's choice point): the
paper's 25%, and 10%, which spends less on the partition. Measured on public DPBench-protocol
runs (1D, domain 1024): at N x epsilon <= 1000 the 10% split's error was 20-25% below the 25%
split's, with no loss at N x epsilon = 10^6 (50% and 75% were worse everywhere). The
ChoiceMaker picks between the two from data."""


def run_dawa10(x: np.ndarray, epsilon: float, workload: RangeWorkload, noise: HistogramNoise,
               ledger: PrivacyLedger | None = None, **params: Any) -> np.ndarray:
    """DAWA with 10% of epsilon on the partition and 90% on the measurements (`run_dawa`,
    ratio = PARTITION_SHARES["DAWA10"]; the parts add up to epsilon exactly, `dawa_budget`)."""
    params.pop("ratio", None)
    return run_dawa(x, epsilon, workload, noise, ledger, ratio=PARTITION_SHARES["DAWA10"], **params)


def _reduced_gram(workload: RangeWorkload, starts: np.ndarray, n: int) -> np.ndarray:
    """W^T W of a 1D workload with each bucket's columns averaged (queries over buckets)."""
    return workload.bucket_gram(starts)


def _reduced_rows(workload: RangeWorkload, order: np.ndarray, starts: np.ndarray,
                  chunk: int = 64) -> np.ndarray:
    """The 2D workload's rectangles as rows over buckets of the cells taken in `order`.

    Row q, bucket b: (cells of b inside rectangle q) / |b|, from a running count of the
    rectangle's cells along `order` read at the bucket boundaries.
    """
    cols = workload.shape[1]
    cell_row, cell_col = np.divmod(order, cols)
    bounds = np.concatenate([starts, [order.size]])
    sizes = np.diff(bounds).astype(float)
    (r0, c0), (r1, c1) = workload.lower.T, workload.upper.T
    rows = np.empty((len(workload), starts.size))
    for a in range(0, len(workload), chunk):
        b = min(a + chunk, len(workload))
        inside = ((cell_row >= r0[a:b, None]) & (cell_row < r1[a:b, None])
                  & (cell_col >= c0[a:b, None]) & (cell_col < c1[a:b, None]))
        running = np.zeros((b - a, order.size + 1), dtype=np.int32)
        np.cumsum(inside, axis=1, dtype=np.int32, out=running[:, 1:])
        rows[a:b] = np.diff(running[:, bounds], axis=1) / sizes
    return rows


def _estimate_ordered(values: np.ndarray, forms_for: Callable[[np.ndarray], GramForms | RowForms],
                      epsilon: float, ratio: float,
                      noise: HistogramNoise, ledger: PrivacyLedger, offset_divisor: int | None,
                      granularity: int, penalty_scales: float | None) -> np.ndarray:
    """DAWA on an ordered vector; `forms_for(starts)` gives the reduced workload forms."""
    n = values.size
    budget = dawa_budget(epsilon, ratio)
    eps1, eps2 = budget["partition"], budget["measurements"]
    starts = l1_partition(values, eps1, eps2, noise, ledger, offset_divisor, penalty_scales)
    sizes = np.diff(np.concatenate([starts, [n]]))
    bucket_totals = np.add.reduceat(values, starts)
    tree, weights = greedy_hierarchy(forms_for(starts), starts.size, granularity)
    sensitivity = path_sensitivity(tree, weights)
    measured_nodes = weights > 0
    node_totals = tree.sums(bucket_totals.reshape(-1, 1))
    # Weighted node totals: a record moves one bucket count by 1, changing the measurements by
    # the weights on its root-to-leaf path, which add to `sensitivity`.
    noisy = laplace_mechanism(weights[measured_nodes] * node_totals[measured_nodes], sensitivity,
                              eps2, noise, ledger, "DAWA: GreedyH weighted bucket ranges")
    estimates = np.zeros(tree.size)
    variance = np.full(tree.size, np.inf)
    estimates[measured_nodes] = noisy / weights[measured_nodes]
    variance[measured_nodes] = 2.0 * (sensitivity / eps2) ** 2 / weights[measured_nodes] ** 2
    node_estimates = tree_least_squares(tree, estimates, variance)
    leaves = np.flatnonzero(tree.is_leaf)
    leaves = leaves[np.argsort(tree.r0[leaves])]  # in domain order
    leaf_buckets = tree.r1[leaves] - tree.r0[leaves]
    per_bucket = np.repeat(node_estimates[leaves] / leaf_buckets, leaf_buckets)
    return np.repeat(per_bucket / sizes, sizes)


def run_dawa(x: np.ndarray, epsilon: float, workload: RangeWorkload, noise: HistogramNoise,
             ledger: PrivacyLedger | None = None, ratio: float = 0.25,
             offset_divisor: int | None = None, granularity: int = 100,
             penalty_scales: float | None = None) -> np.ndarray:
    """DAWA in 1D, or in 2D on the Hilbert order of the cells.

    Args:
        offset_divisor: Candidate buckets of length L start at multiples of
            max(1, L // offset_divisor); None means every offset (the paper's candidates).
            Defaults to None in 1D up to 8192 cells and to 16 beyond.
        penalty_scales: The partition's public per-bucket penalty in noise scales
            (`dawa_partition`, "Bucket penalty"); None (the default) is
            `dawa_partition.selection_bias_scales`, which benchmarks/dawa_penalty.py chose.
    """
    x, ledger = check_inputs(x, epsilon, ledger)
    if workload is None or len(workload) == 0:
        raise ValueError("DAWA needs the range-query workload")
    if workload.shape != x.shape:
        raise ValueError(f"workload shape {workload.shape} does not match data {x.shape}")
    if offset_divisor is None and x.size > 8192:
        offset_divisor = 16
    if x.ndim == 1:
        return _estimate_ordered(x, lambda s: GramForms(_reduced_gram(workload, s, x.size)),
                                 epsilon, ratio, noise, ledger, offset_divisor, granularity,
                                 penalty_scales)
    order = hilbert_order(*x.shape)
    flat = _estimate_ordered(x.ravel()[order], lambda s: RowForms(_reduced_rows(workload, order, s)),
                             epsilon, ratio, noise, ledger, offset_divisor, granularity,
                             penalty_scales)
    estimate = np.empty(x.size)
    estimate[order] = flat
    return estimate.reshape(x.shape)
