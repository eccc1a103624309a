"""Sources of randomness and the noise distributions drawn from them.

By default randomness comes from the operating system's secure source (`os.urandom`), which
is what a real release needs. `Randomness(seed=N)` gives a reproducible stream from NumPy's
PCG64 instead; it is for tests and teaching only and is UNSAFE for real releases, because
anyone who knows the seed can subtract the noise.

All distributions are built on one primitive, `uniform`, which returns doubles strictly
inside (0, 1) on a 2^-53 grid, so the secure and the seeded paths share every formula.
"""

from __future__ import annotations

import math
import os

import numpy as np

_GRID = float(2**53)


class Randomness:
    """Uniform and derived random draws.

    Args:
        seed: None for the operating system's secure source; an int for a reproducible
            (unsafe) stream.
    """

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self._generator = np.random.Generator(np.random.PCG64(seed)) if seed is not None else None

    @property
    def secure(self) -> bool:
        return self._generator is None

    def _integers53(self, size: int) -> np.ndarray:
        if self._generator is None:
            raw = np.frombuffer(os.urandom(8 * size), dtype=np.uint64)
            return (raw >> np.uint64(11)).astype(np.float64)
        return self._generator.integers(0, 2**53, size=size, dtype=np.uint64).astype(np.float64)

    def uniform(self, size: int) -> np.ndarray:
        """`size` doubles uniform on (0, 1), never exactly 0 or 1."""
        return (self._integers53(size) + 0.5) / _GRID

    def laplace(self, scale: float, size: int) -> np.ndarray:
        """Laplace(0, scale) by inversion of the CDF."""
        u = self.uniform(size) - 0.5
        return -scale * np.sign(u) * np.log1p(-2.0 * np.abs(u))

    def two_sided_geometric(self, epsilon_per_unit: float, size: int) -> np.ndarray:
        """Integer noise with P(k) proportional to exp(-epsilon_per_unit * |k|).

        The difference of two geometric variables on {0, 1, ...} with ratio
        p = exp(-epsilon_per_unit) (Ghosh, Roughgarden, Sundararajan 2009).
        """
        log_p = -epsilon_per_unit
        first = np.floor(np.log(self.uniform(size)) / log_p)
        second = np.floor(np.log(self.uniform(size)) / log_p)
        return (first - second).astype(np.int64)

    def normal(self, sigma: float, size: int) -> np.ndarray:
        """Normal(0, sigma^2) by the Box-Muller transform."""
        u1, u2 = self.uniform(size), self.uniform(size)
        return sigma * np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * math.pi * u2)

    def gumbel(self, size: int) -> np.ndarray:
        """Standard Gumbel draws, for the exponential mechanism's Gumbel-max sampling."""
        return -np.log(-np.log(self.uniform(size)))

    def bernoulli(self, probability: float, size: int) -> np.ndarray:
        return self.uniform(size) < probability

    def choice(self, options: int, size: int) -> np.ndarray:
        """Uniform integers in [0, options)."""
        return np.minimum((self.uniform(size) * options).astype(np.int64), options - 1)


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def gaussian_sigma(epsilon: float, delta: float, l2_sensitivity: float) -> float:
    """The smallest sigma for which the Gaussian mechanism is (epsilon, delta)-DP.

    The analytic Gaussian mechanism (Balle & Wang, ICML 2018, Theorem 8): N(0, sigma^2) noise
    on a query of L2 sensitivity D is (eps, delta)-DP iff
        Phi(D/(2 sigma) - eps sigma / D) - e^eps Phi(-D/(2 sigma) - eps sigma / D) <= delta.
    The left side decreases in sigma, so bisection finds the threshold; the returned sigma is
    the upper end of the final bracket, so the condition holds for it.
    """
    if l2_sensitivity == 0:
        return 0.0

    def privacy_loss_gap(sigma: float) -> float:
        a = l2_sensitivity / (2 * sigma)
        b = epsilon * sigma / l2_sensitivity
        return _phi(a - b) - math.exp(epsilon) * _phi(-a - b)

    low, high = 1e-12, l2_sensitivity
    while privacy_loss_gap(high) > delta:
        high *= 2
    for _ in range(200):
        middle = (low + high) / 2
        if privacy_loss_gap(middle) > delta:
            low = middle
        else:
            high = middle
        if high - low <= 1e-12 * high:
            break
    return high
