"""DAWA's first stage: a private partition of an ordered domain into buckets of similar counts
(Li, Hay, Miklau, Wang, PVLDB 2014, Sec. 3), plus the Hilbert order DAWA uses in 2D.

The cost of a bucket b is dev(b) + 1/eps2, where dev(b) = sum_{i in b} |x_i - mean_b| is the
error of replacing b's counts by their mean and 1/eps2 the expected absolute Laplace error of
measuring b's total in the second stage. The partition minimising the total cost is found by
a dynamic program over prefix boundaries. Privately, each candidate bucket's dev gets
Laplace(2 / eps1) noise (adding or removing a record changes dev(b) by at most 2 - 2/|b|, so
by less than 2), the noisy cost is clipped below at 1/eps2 (post-processing), and only the
minimising partition is output. Li et al. (Sec. 3, the private-partition theorem and its
proof) show that releasing the least-noisy-cost partition this way is eps1-DP: one record
changes the cost of every partition by at most 2 (it lies in exactly one bucket of each
partition). We restate their result and do not re-prove it here. Single-cell buckets have dev 0 whatever the data and get no noise.
On an exact noise source the noisy costs come from `safe_noise.noisy_scores`: each dev (plus
the public 1/eps2) is snapped to a public grid g and gets exact discrete Laplace noise of
scale S / eps1 grid steps, S = ceil(2 / g) = 2 / g (g is a power of two <= 2): a dev moving by
less than 2 moves by at most S steps, and the proof's only property of the noise, a density
ratio of at most exp(eps1 |s| / S) for a shift s, holds for integer shifts of the discrete
Laplace too.

Candidate buckets (data-independent, as in the paper's efficient variant): lengths 2^k, all
start offsets (the reference "approximate" L1 partition), or, for large domains, start
offsets that are multiples of max(1, 2^k / offset_divisor), which keeps the number of
candidates O(n log n) with O(n * offset_divisor) work per length.

dev of every candidate is computed without sorting: sum |x_i - mean| = 2 sum relu(mean - x_i)
because deviations above and below the mean balance; windows are strided views.
"""

from __future__ import annotations

import numpy as np

from jostle import safe_noise
from jostle.histograms.measure import NoiseSource, PrivacyLedger


def candidate_deviations(x: np.ndarray, offset_divisor: int | None = None,
                         chunk_elements: int = 1 << 18) -> list[tuple[int, int, np.ndarray]]:
    """dev of every candidate bucket, as (length, stride, devs of buckets starting at
    0, stride, 2 stride, ...) for each length 2^k <= n, k >= 1."""
    n = x.size
    prefix = np.concatenate([[0.0], np.cumsum(x)])
    result = []
    length = 2
    while length <= n:
        stride = 1 if offset_divisor is None else max(1, length // offset_divisor)
        windows = np.lib.stride_tricks.sliding_window_view(x, length)[::stride]  # a view
        starts = np.arange(windows.shape[0]) * stride
        means = (prefix[starts + length] - prefix[starts]) / length
        devs = np.empty(starts.size)
        rows = max(1, chunk_elements // length)
        for a in range(0, starts.size, rows):
            below = np.subtract(means[a:a + rows, None], windows[a:a + rows])
            np.maximum(below, 0.0, out=below)
            devs[a:a + rows] = 2.0 * below.sum(axis=1)
        result.append((length, stride, devs))
        length *= 2
    return result


def l1_partition(x: np.ndarray, eps1: float, eps2: float, noise: NoiseSource,
                 ledger: PrivacyLedger, offset_divisor: int | None = None) -> np.ndarray:
    """DAWA's private partition of the ordered vector `x`; returns the bucket start indices.

    Charges eps1 (see the module docstring for the argument).
    """
    x = np.asarray(x, dtype=float).ravel()
    n = x.size
    candidates = candidate_deviations(x, offset_divisor)
    label = "DAWA: L1 partition (noisy bucket costs, Li et al. 2014 Sec. 3)"
    exact = not safe_noise.is_simulation(noise)
    grid = safe_noise.score_plan(2.0, eps1).grid if exact and 0 < eps1 < np.inf else None
    ledger.charge(label, "noisy-min partition", eps1, 2.0)
    floor = 1.0 / eps2
    costs = []
    for length, stride, devs in candidates:
        # each candidate's dev moves by less than 2 (module docstring): Laplace(2 / eps1) on each
        noisy = safe_noise.noisy_scores(noise, devs + floor, 2.0, eps1)
        ledger.record(f"{label}, length {length}", grid, noisy)
        costs.append((length, stride, np.maximum(noisy, floor).tolist()))
    # Dynamic program over boundaries: best[e] = cheapest partition of x[:e].
    best = [0.0] * (n + 1)
    back = [0] * (n + 1)
    for end in range(1, n + 1):
        value, start_best = best[end - 1] + floor, end - 1
        for length, stride, cost in costs:
            start = end - length
            if start < 0:
                break
            if start % stride == 0:
                candidate = best[start] + cost[start // stride]
                if candidate <= value:
                    value, start_best = candidate, start
        best[end], back[end] = value, start_best
    starts = []
    end = n
    while end > 0:
        end = back[end]
        starts.append(end)
    return np.array(starts[::-1], dtype=np.int64)


def hilbert_order(rows: int, cols: int) -> np.ndarray:
    """Row-major indices of the cells of a rows x cols grid in Hilbert-curve order.

    The curve covers the smallest 2^k x 2^k square holding the grid; cells outside the grid
    are skipped, so consecutive cells stay spatially close.
    """
    side = 1
    while side < max(rows, cols):
        side *= 2
    index = np.arange(side * side, dtype=np.int64)
    x = np.zeros_like(index)
    y = np.zeros_like(index)
    t = index.copy()
    s = 1
    while s < side:
        rx = 1 & (t // 2)
        ry = 1 & (t ^ rx)
        flip = ry == 0
        swap_x = flip & (rx == 1)
        x = np.where(swap_x, s - 1 - x, x)
        y = np.where(swap_x, s - 1 - y, y)
        x, y = np.where(flip, y, x), np.where(flip, x, y)
        x += s * rx
        y += s * ry
        t //= 4
        s *= 2
    inside = (x < rows) & (y < cols)
    return x[inside] * cols + y[inside]
