"""Privelet (Xiao, Wang, Gehrke, ICDE 2010): Laplace noise on Haar wavelet coefficients.

The domain is padded with zeros (public) to 2^m cells per side. The unnormalised Haar
transform replaces, level by level, each pair (a, b) by its sum a + b and difference a - b;
after m levels a 1D vector holds its total and m levels of differences. A change of one count
by 1 changes exactly one coefficient per level by +-1 and the total by 1, so the coefficient
vector has L1 sensitivity m + 1 (this is Privelet's generalised sensitivity 1 + log2 n with
its weights folded into the unnormalised coefficients). In 2D the transform is applied along
both axes (the standard decomposition), and each count touches (m1 + 1)(m2 + 1) coefficients,
each by +-1.
Privacy: Laplace((m1 + 1)(m2 + 1) / epsilon) on every coefficient is epsilon-DP; the inverse
transform is post-processing. On noise-free coefficients the inverse is exact.
"""

from __future__ import annotations

import numpy as np

from jostle.learners.histograms.measure import HistogramNoise, PrivacyLedger, check_inputs, laplace_mechanism
from jostle.learners.histograms.workloads import RangeWorkload


def _levels(n: int) -> int:
    return int(np.ceil(np.log2(n))) if n > 1 else 0


def haar_forward(values: np.ndarray, axis: int) -> np.ndarray:
    """Unnormalised Haar transform along `axis` (its length must be a power of 2)."""
    out = np.moveaxis(np.array(values, dtype=float), axis, 0)
    n = out.shape[0]
    while n > 1:
        head = out[:n]
        out[:n] = np.concatenate([head[0::2] + head[1::2], head[0::2] - head[1::2]])
        n //= 2
    return np.moveaxis(out, 0, axis)


def haar_inverse(coefficients: np.ndarray, axis: int) -> np.ndarray:
    """Inverse of `haar_forward` along `axis`."""
    out = np.moveaxis(np.array(coefficients, dtype=float), axis, 0)
    total, n = out.shape[0], 1
    while n < total:
        sums, diffs = out[:n].copy(), out[n:2 * n].copy()
        out[0:2 * n:2] = (sums + diffs) / 2.0
        out[1:2 * n:2] = (sums - diffs) / 2.0
        n *= 2
    return np.moveaxis(out, 0, axis)


def privelet_sensitivity(shape: tuple[int, ...]) -> float:
    """L1 sensitivity of the unnormalised coefficients: prod over sides of (levels + 1)."""
    return float(np.prod([_levels(side) + 1 for side in shape]))


def privelet_budget(epsilon: float) -> dict[str, float]:
    """Privelet spends everything on the wavelet coefficients."""
    return {"coefficients": epsilon}


def run_privelet(x: np.ndarray, epsilon: float, workload: RangeWorkload | None,
                 noise: HistogramNoise, ledger: PrivacyLedger | None = None) -> np.ndarray:
    """Privelet in 1D or 2D: noisy Haar coefficients, inverse transform."""
    x, ledger = check_inputs(x, epsilon, ledger)
    padded_shape = tuple(2 ** _levels(side) for side in x.shape)
    padded = np.zeros(padded_shape)
    padded[tuple(slice(0, side) for side in x.shape)] = x
    coefficients = padded
    for axis in range(x.ndim):
        coefficients = haar_forward(coefficients, axis)
    noisy = laplace_mechanism(coefficients, privelet_sensitivity(x.shape),
                              privelet_budget(epsilon)["coefficients"], noise, ledger,
                              "Privelet: Haar coefficients")
    for axis in range(x.ndim):
        noisy = haar_inverse(noisy, axis)
    return noisy[tuple(slice(0, side) for side in x.shape)]
