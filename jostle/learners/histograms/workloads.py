"""Range-query workloads (1D ranges, 2D rectangles) and DPBench's scaled error.

Workloads are stored compactly as half-open bounds, never as dense query matrices: a query is
answered from prefix sums (1D) or a summed-area table (2D), so thousands of queries cost a few
vector operations. DPBench (Hay et al., SIGMOD 2016) evaluates 1D algorithms on the Prefix
workload and 2D algorithms on random rectangles; `AllRanges1D` holds every interval of a 1D
domain (n(n+1)/2 queries) and computes its error in O(n log n) without listing the queries.

The error measure (`scaled_error`) is DPBench's: the average per-query L1 error
mean_q |q(x) - q(x_hat)| divided by the scale (number of records); `norm="l2"` gives the root
mean squared per-query error divided by the scale.
"""

from __future__ import annotations

import numpy as np


def _prefix_2d(grid: np.ndarray) -> np.ndarray:
    """Summed-area table S with a zero first row and column: S[i, j] = grid[:i, :j].sum()."""
    table = np.zeros((grid.shape[0] + 1, grid.shape[1] + 1))
    np.cumsum(np.cumsum(grid, axis=0), axis=1, out=table[1:, 1:])
    return table


def as_grid(x: np.ndarray) -> np.ndarray:
    """View a 1D vector as an (n, 1) grid; a 2D grid is returned as is."""
    x = np.asarray(x, dtype=float)
    if x.ndim == 1:
        return x.reshape(-1, 1)
    if x.ndim == 2:
        return x
    raise ValueError(f"histograms are 1D or 2D, got shape {x.shape}")


class RangeWorkload:
    """Axis-aligned range queries over a 1D or 2D domain, as half-open bounds.

    Args:
        shape: The domain shape, (n,) or (rows, cols).
        lower: Integer array (queries, dims) of inclusive lower bounds.
        upper: Integer array (queries, dims) of exclusive upper bounds.
    """

    def __init__(self, shape: tuple[int, ...], lower: np.ndarray, upper: np.ndarray) -> None:
        self.shape = tuple(int(s) for s in shape)
        if len(self.shape) not in (1, 2):
            raise ValueError("workloads are 1D or 2D")
        lower = np.asarray(lower, dtype=np.int64).reshape(-1, len(self.shape))
        upper = np.asarray(upper, dtype=np.int64).reshape(-1, len(self.shape))
        limits = np.array(self.shape)
        if lower.shape != upper.shape or np.any(lower < 0) or np.any(upper > limits) \
                or np.any(upper <= lower):
            raise ValueError("every query needs 0 <= lower < upper <= domain size")
        self.lower, self.upper = lower, upper

    def __len__(self) -> int:
        return int(self.lower.shape[0])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def _grid_bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if self.ndim == 1:
            zeros = np.zeros(len(self), dtype=np.int64)
            return self.lower[:, 0], self.upper[:, 0], zeros, zeros + 1
        return self.lower[:, 0], self.upper[:, 0], self.lower[:, 1], self.upper[:, 1]

    def answer(self, x: np.ndarray) -> np.ndarray:
        """The answers of every query on data `x` (of the workload's shape)."""
        grid = as_grid(x)
        if grid.shape != as_grid(np.empty(self.shape)).shape:
            raise ValueError(f"data shape {np.shape(x)} does not match workload {self.shape}")
        table = _prefix_2d(grid)
        r0, r1, c0, c1 = self._grid_bounds()
        return table[r1, c1] - table[r0, c1] - table[r1, c0] + table[r0, c0]

    def region(self, index: int) -> tuple[slice, ...]:
        """The cells of query `index`, as slices into an array of the domain's shape."""
        return tuple(slice(int(a), int(b)) for a, b in zip(self.lower[index], self.upper[index]))

    def error_moments(self, difference: np.ndarray) -> tuple[float, float]:
        """Mean absolute and mean squared query answer of `difference` (= x - x_hat)."""
        answers = self.answer(difference)
        return float(np.mean(np.abs(answers))), float(np.mean(answers ** 2))

    def gram(self) -> np.ndarray:
        """G = W^T W for a 1D workload: G[i, j] = number of queries containing cells i and j."""
        if self.ndim != 1:
            raise ValueError("gram() is for 1D workloads; use dense_rows() in 2D")
        n = self.shape[0]
        counts = np.bincount(self.lower[:, 0] * (n + 1) + self.upper[:, 0],
                             minlength=n * (n + 1)).reshape(n, n + 1).astype(float)
        # S[a, b] = #{q : lower <= a and upper >= b}; G[i, j] = S[min, max + 1].
        table = np.cumsum(np.cumsum(counts[:, ::-1], axis=1)[:, ::-1], axis=0)
        upper = table[:, 1:]
        return np.triu(upper) + np.triu(upper, 1).T

    def bucket_gram(self, starts: np.ndarray) -> np.ndarray:
        """W^T W of a 1D workload reduced to buckets (each bucket's columns averaged).

        Bucket b = [starts[b], starts[b + 1]). A query [lo, hi) becomes fractions f_A, f_B on
        its end buckets A, B and ones on the buckets strictly between, so W^T W is assembled
        from point terms, row segments (difference arrays) and the interior blocks (2D
        cumulative counts) in O(m^2 + queries) without the n x n matrix.
        """
        if self.ndim != 1:
            raise ValueError("bucket_gram() is for 1D workloads")
        n = self.shape[0]
        starts = np.asarray(starts, dtype=np.int64)
        m = starts.size
        sizes = np.diff(np.concatenate([starts, [n]])).astype(float)
        lo, hi = self.lower[:, 0], self.upper[:, 0]
        first = np.searchsorted(starts, lo, side="right") - 1
        last = np.searchsorted(starts, hi - 1, side="right") - 1
        single = first == last
        f_first = np.where(single, (hi - lo) / sizes[first],
                           (starts[first] + sizes[first] - lo) / sizes[first])
        f_last = (hi - starts[last]) / sizes[last]
        multi = ~single
        a, b, fa, fb = first[multi], last[multi], f_first[multi], f_last[multi]
        point_index = np.concatenate([first[single] * (m + 1), a * (m + 1), b * (m + 1),
                                      a * m + b, b * m + a])
        point_weight = np.concatenate([f_first[single] ** 2, fa ** 2, fb ** 2, fa * fb, fa * fb])
        points = np.bincount(point_index, weights=point_weight, minlength=m * m)
        gram = points.reshape(m, m)
        inner = b > a + 1
        a, b, fa, fb = a[inner], b[inner], fa[inner], fb[inner]
        # Rows a and b get f_a, f_b on the interior columns a+1 .. b-1 (and symmetrically).
        steps = np.bincount(
            np.concatenate([a * (m + 1) + a + 1, a * (m + 1) + b, b * (m + 1) + a + 1, b * (m + 1) + b]),
            weights=np.concatenate([fa, -fa, fb, -fb]), minlength=m * (m + 1))
        cross = np.cumsum(steps.reshape(m, m + 1), axis=1)[:, :m]
        gram += cross + cross.T
        # Interior [s, t) = [a + 1, b): #{s <= min(i, j), t > max(i, j)}.
        counts = np.bincount((a + 1) * (m + 1) + (m - b), minlength=(m + 1) * (m + 1))
        table = np.cumsum(np.cumsum(counts.reshape(m + 1, m + 1), axis=1), axis=0)
        upper = np.triu(table[:m, m - 1::-1][:, :m])
        gram += upper + np.triu(upper, 1).T
        return gram

    def dense_rows(self, start: int, stop: int) -> np.ndarray:
        """Queries start..stop-1 as dense 0/1 rows over the flattened (row-major) domain."""
        r0, r1, c0, c1 = (b[start:stop] for b in self._grid_bounds())
        rows, cols = as_grid(np.empty(self.shape)).shape
        in_rows = (np.arange(rows)[None, :] >= r0[:, None]) & (np.arange(rows)[None, :] < r1[:, None])
        in_cols = (np.arange(cols)[None, :] >= c0[:, None]) & (np.arange(cols)[None, :] < c1[:, None])
        return (in_rows[:, :, None] & in_cols[:, None, :]).reshape(stop - start, rows * cols)


class AllRanges1D(RangeWorkload):
    """Every interval [i, j) of a 1D domain of size n: n(n+1)/2 queries, never listed.

    The error moments use the identity: the answer of [i, j) on d is P[j] - P[i] for the prefix
    sums P of d, and for sorted values a_(0) <= ... <= a_(m-1),
    sum_{i<j} |a_j - a_i| = sum_k a_(k) (2k - m + 1).
    """

    def __init__(self, n: int) -> None:
        self.shape = (int(n),)
        self._n = int(n)

    def __len__(self) -> int:
        return self._n * (self._n + 1) // 2

    def _pair_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Start and end of every query, in row-major (start, end) order."""
        if not hasattr(self, "_pairs"):
            lengths = np.arange(self._n, 0, -1, dtype=np.int32)
            starts = np.repeat(np.arange(self._n, dtype=np.int32), lengths)
            row_offsets = np.repeat(np.cumsum(lengths) - lengths, lengths).astype(np.int32)
            ends = np.arange(starts.size, dtype=np.int32) - row_offsets + starts + 1
            self._pairs = (starts, ends)
        return self._pairs

    @property
    def lower(self) -> np.ndarray:  # type: ignore[override]
        return self._pair_arrays()[0].astype(np.int64).reshape(-1, 1)

    @property
    def upper(self) -> np.ndarray:  # type: ignore[override]
        return self._pair_arrays()[1].astype(np.int64).reshape(-1, 1)

    def answer(self, x: np.ndarray) -> np.ndarray:
        """Answers in row-major order of (i, j): [0, 1), [0, 2), ..., [0, n), [1, 2), ..."""
        prefix = np.concatenate([[0.0], np.cumsum(np.asarray(x, dtype=float).ravel())])
        starts, ends = self._pair_arrays()
        return prefix[ends] - prefix[starts]

    def region(self, index: int) -> tuple[slice, ...]:
        row_starts = np.concatenate([[0], np.cumsum(np.arange(self._n, 0, -1))])
        i = int(np.searchsorted(row_starts, index, side="right") - 1)
        return (slice(i, i + 1 + int(index - row_starts[i])),)

    def error_moments(self, difference: np.ndarray) -> tuple[float, float]:
        prefix = np.sort(np.concatenate([[0.0], np.cumsum(np.asarray(difference, float).ravel())]))
        m = prefix.size
        abs_sum = float(np.dot(prefix, 2.0 * np.arange(m) - m + 1))
        square_sum = float(m * np.dot(prefix, prefix) - prefix.sum() ** 2)
        return abs_sum / len(self), square_sum / len(self)

    def bucket_gram(self, starts: np.ndarray) -> np.ndarray:
        """Reduced W^T W from G[i, j] = (min(i, j) + 1)(n - max(i, j)) in O(m^2 + n):
        off-diagonal bucket pairs factor into (mean of i + 1) x (mean of n - j)."""
        n = self._n
        starts = np.asarray(starts, dtype=np.int64)
        sizes = np.diff(np.concatenate([starts, [n]])).astype(float)
        index = np.arange(n, dtype=float)
        left = np.add.reduceat(index + 1.0, starts) / sizes
        right = np.add.reduceat(n - index, starts) / sizes
        upper = np.triu(np.outer(left, right), 1)
        gram = upper + upper.T
        # Within a bucket [s, e): sum_i (i+1)(n-i) + 2 sum_{i<j} (i+1)(n-j), where
        # sum_{i=s}^{j-1} (i+1) = T(j) - T(s) with T(k) = k(k+1)/2.
        triangle = index * (index + 1.0) / 2.0
        owner_start = np.repeat(starts, sizes.astype(np.int64)).astype(float)
        below = triangle - owner_start * (owner_start + 1.0) / 2.0
        within = np.add.reduceat((index + 1.0) * (n - index) + 2.0 * (n - index) * below, starts)
        gram[np.diag_indices(starts.size)] = within / sizes ** 2
        return gram

    def gram(self) -> np.ndarray:
        index = np.arange(self._n)
        low, high = np.minimum.outer(index, index), np.maximum.outer(index, index)
        return ((low + 1) * (self._n - high)).astype(float)


class Prefix1D(RangeWorkload):
    """DPBench's 1D Prefix workload: the n ranges [0, j), j = 1..n.

    Cells i and j lie together in n - max(i, j) prefixes, so the bucket-reduced Gram matrix
    is (mean of n - j over the later bucket) off the diagonal: O(m^2) with few passes.
    """

    def __init__(self, n: int) -> None:
        super().__init__((n,), np.zeros(n, dtype=np.int64), np.arange(1, n + 1))

    def bucket_gram(self, starts: np.ndarray) -> np.ndarray:
        n = self.shape[0]
        starts = np.asarray(starts, dtype=np.int64)
        sizes = np.diff(np.concatenate([starts, [n]]))
        index = np.arange(n, dtype=float)
        later = np.add.reduceat(n - index, starts) / sizes
        buckets = np.arange(starts.size)
        gram = later[np.maximum.outer(buckets, buckets)]
        # Within a bucket starting at s, max(i, j) = j for 2 (j - s) + 1 ordered pairs.
        owner_start = np.repeat(starts, sizes)
        within = np.add.reduceat((n - index) * (2.0 * (index - owner_start) + 1.0), starts)
        gram[buckets, buckets] = within / sizes.astype(float) ** 2
        return gram


def prefix_1d(n: int) -> RangeWorkload:
    """DPBench's 1D Prefix workload: the n ranges [0, j), j = 1..n."""
    return Prefix1D(n)


def identity_1d(n: int) -> RangeWorkload:
    """Every single cell as a query."""
    return RangeWorkload((n,), np.arange(n), np.arange(1, n + 1))


def random_ranges_1d(n: int, count: int, seed: int = 0) -> RangeWorkload:
    """`count` ranges with both endpoints uniform (public randomness: the workload is public)."""
    rng = np.random.default_rng(seed)
    ends = np.sort(rng.integers(0, n, size=(count, 2)), axis=1)
    return RangeWorkload((n,), ends[:, 0], ends[:, 1] + 1)


def random_rectangles_2d(shape: tuple[int, int], count: int, seed: int = 0) -> RangeWorkload:
    """`count` rectangles with corners uniform in each dimension (DPBench's 2D workload)."""
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.integers(0, shape[0], size=(count, 2)), axis=1)
    cols = np.sort(rng.integers(0, shape[1], size=(count, 2)), axis=1)
    lower = np.stack([rows[:, 0], cols[:, 0]], axis=1)
    upper = np.stack([rows[:, 1] + 1, cols[:, 1] + 1], axis=1)
    return RangeWorkload(tuple(shape), lower, upper)


def scaled_error(workload: RangeWorkload, x: np.ndarray, estimate: np.ndarray,
                 scale: float | None = None, norm: str = "l1") -> float:
    """DPBench's error: average per-query error divided by the scale.

    Args:
        workload: The range queries.
        x: The true histogram.
        estimate: The released estimate (same shape).
        scale: Number of records; defaults to x.sum().
        norm: "l1" for mean absolute error, "l2" for root mean squared error.
    """
    x = np.asarray(x, dtype=float)
    estimate = np.asarray(estimate, dtype=float)
    if x.shape != estimate.shape:
        raise ValueError(f"estimate shape {estimate.shape} differs from data shape {x.shape}")
    scale = float(x.sum()) if scale is None else float(scale)
    if scale <= 0:
        raise ValueError("scale must be positive")
    mean_abs, mean_square = workload.error_moments(x - estimate)
    if norm == "l1":
        return mean_abs / scale
    if norm == "l2":
        return float(np.sqrt(mean_square)) / scale
    raise ValueError(f"norm must be 'l1' or 'l2', got {norm!r}")
