"""Sources of randomness: the exact, secure one used for releases, and a fast one for simulation.

`Randomness` is what every release draws from. Its randomness comes from the operating
system's secure source (`secrets`) by default, which is what a real release needs.
`Randomness(seed=N)` gives a reproducible stream from NumPy's PCG64 instead; it is for tests and
teaching only and is UNSAFE for real releases, because anyone who knows the seed can subtract
the noise. Both paths feed the same single primitive, `_words` (uniform 64-bit words), into the
same exact samplers (`jostle.privacy.exact_samplers`: Canonne-Kamath-Steinke discrete Laplace, discrete
Gaussian and Bernoulli(exp(-gamma)), in integer arithmetic), so they share every formula.

The noise methods that other code calls keep their signatures:

  * `laplace(scale, size)`: discretised Laplace. The noise is g * Z with Z exactly discrete
    Laplace of scale `scale / g` on a public power-of-two grid g <= 2^-20 * scale, and g <= 1
    so that integer values (counts) plus the noise stay exactly on the grid. Adding it to a
    *real* private value is not safe by itself (the sum's low bits would depend on the value,
    Mironov 2012): releases of real values go through `jostle.language.mechanisms`, which snaps the value
    to the grid first.
  * `two_sided_geometric(epsilon_per_unit, size)`: exact discrete Laplace with scale
    1/epsilon_per_unit (the float's exact binary value), as integers of any size.
  * `normal(sigma, size)`: discretised Gaussian, g * Z with Z discrete Gaussian on a grid
    g <= 2^-16 sigma, with sigma rounded up by less than 2^-16 relatively (see `normal`).
  * `bernoulli(p, size)`, `choice(k, size)`: exact for the float p's binary value / any k.
  * `uniform(size)`: doubles on the midpoint grid (i + 1/2) 2^-52, strictly inside (0, 1).
  * `gumbel(size)`: floating-point Gumbel draws from `uniform`. No release uses it; it stays
    for callers that want Gumbel noise in simulations. For the exponential mechanism use
    `exponential_index(utilities, eps / (2 sensitivity))`, which samples it exactly, or
    `exponential_indices` for one independent choice per row of a matrix (-inf: ineligible).

`SimulationNoise` has the same interface on plain NumPy floats. It is fast and NOT safe for
releases (floating-point samplers, Mironov 2012, and a seeded generator): use it only to run
algorithms on PUBLIC data, e.g. thousands of simulated runs while training the ChoiceMaker.
"""

from __future__ import annotations

import math
import secrets
from fractions import Fraction
from typing import Protocol

import numpy as np

from jostle.privacy import exact_samplers as exact
from jostle.privacy.gaussian_privacy import gaussian_sigma, integer_sigma2  # gaussian_sigma: re-exported

__all__ = ["LAPLACE_GRID_BITS", "NORMAL_GRID_BITS", "NoiseSource", "Randomness", "SimulationNoise",
           "gaussian_sigma", "grid_to_floats", "integer_sigma2", "power_of_two_at_most"]

LAPLACE_GRID_BITS = 20  # Randomness.laplace: the grid is at most 2^-20 of the scale
NORMAL_GRID_BITS = 16   # Randomness.normal: the grid is at most 2^-16 of sigma


class NoiseSource(Protocol):
    """What the release mechanisms need from a source of noise."""

    secure: bool

    def integers_below(self, bound: int, size: int) -> np.ndarray: ...
    def bernoulli_exp(self, gamma: Fraction, size: int) -> np.ndarray: ...
    def discrete_laplace(self, scale: Fraction, size: int) -> np.ndarray: ...
    def discrete_gaussian(self, sigma2: Fraction, size: int, t: int | None = None) -> np.ndarray: ...
    def laplace(self, scale: float, size: int) -> np.ndarray: ...
    def exponential_index(self, utilities: np.ndarray | list[float], coefficient: Fraction | float) -> int: ...
    def exponential_indices(self, utilities: np.ndarray, coefficient: Fraction | float) -> np.ndarray: ...


def power_of_two_at_most(x: float | Fraction) -> Fraction:
    """The largest power of two <= x (x > 0), exactly."""
    x = Fraction(x)
    if x <= 0:
        raise ValueError(f"x must be positive, got {x}")
    power = Fraction(2) ** (x.numerator.bit_length() - x.denominator.bit_length())
    return power if power <= x else power / 2


def grid_to_floats(units: np.ndarray, grid: Fraction) -> np.ndarray:
    """grid * units as doubles. Exact while |units| < 2^53 (grid is a power of two); beyond
    that each value is rounded, a deterministic function of the integer (post-processing)."""
    if units.dtype == object:
        return np.array([float(Fraction(int(k)) * grid) for k in units], dtype=float)
    return units.astype(float) * float(grid)


def _rows(utilities: np.ndarray) -> np.ndarray:
    matrix = np.asarray(utilities, dtype=float)
    if matrix.ndim != 2:
        raise ValueError(f"utilities must be a 2D array (rows x candidates), got shape {matrix.shape}")
    return matrix


def _eligible_index(source: "Randomness", row: np.ndarray, coefficient: Fraction | float) -> int:
    """source.exponential_index among the entries of `row` above -inf (0 if there are none)."""
    eligible = np.flatnonzero(row > -np.inf)
    if eligible.size == 0:
        return 0
    return int(eligible[source.exponential_index(row[eligible], coefficient)])


class Randomness:
    """Exact noise for releases, from the secure source or (unsafely) from a seed.

    Args:
        seed: None for the operating system's secure source; an int for a reproducible
            (unsafe) stream.
    """

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self._generator = np.random.Generator(np.random.PCG64(seed)) if seed is not None else None
        self.words = exact.RandomWords(lambda n: self._words(n))

    @property
    def secure(self) -> bool:
        return self._generator is None

    # ------------------------------------------------------------ the one primitive
    def _words(self, size: int) -> np.ndarray:
        """`size` uniform 64-bit words: every draw of this object goes through here."""
        if self._generator is None:
            return np.frombuffer(secrets.token_bytes(8 * size), dtype=np.uint64)
        return self._generator.bit_generator.random_raw(size).astype(np.uint64)

    def _integers53(self, size: int) -> np.ndarray:
        return (self._words(size) >> np.uint64(11)).astype(np.float64)

    # ------------------------------------------------------------ exact samplers
    def integers_below(self, bound: int, size: int) -> np.ndarray:
        """`size` exactly uniform integers in [0, bound)."""
        return exact.integers_below(self.words, bound, size)

    def bernoulli_rational(self, probability: Fraction, size: int) -> np.ndarray:
        """`size` exact Bernoulli(p) draws for a rational p."""
        return exact.bernoulli_rational(self.words, probability, size)

    def bernoulli_exp(self, gamma: Fraction, size: int) -> np.ndarray:
        """`size` exact Bernoulli(exp(-gamma)) draws for a rational gamma >= 0."""
        return exact.bernoulli_exp(self.words, gamma, size)

    def discrete_laplace(self, scale: Fraction, size: int) -> np.ndarray:
        """`size` exact draws with P(k) proportional to exp(-|k| / scale) on the integers."""
        return exact.discrete_laplace(self.words, scale, size)

    def discrete_gaussian(self, sigma2: Fraction, size: int, t: int | None = None) -> np.ndarray:
        """`size` exact draws with P(k) proportional to exp(-k^2 / (2 sigma2)) on the integers."""
        return exact.discrete_gaussian(self.words, sigma2, size, t)

    def exponential_index(self, utilities: np.ndarray | list[float], coefficient: Fraction | float) -> int:
        """An index i with probability proportional to exp(coefficient * utilities[i]), exactly
        (the exponential mechanism uses coefficient = eps / (2 * sensitivity)).

        The utilities' and coefficient's exact binary values are used. Rejection sampling: a
        uniform proposal i is accepted with probability exp(-coefficient (u* - u_i)), u* the
        largest utility (CKS Algorithm 1); the best candidate is always accepted, so the expected
        number of proposals is at most len(utilities).
        """
        values = np.asarray(utilities, dtype=float).ravel()
        if values.size == 0:
            raise ValueError("exponential_index needs at least one utility")
        if not np.all(np.isfinite(values)):
            raise ValueError("exponential_index needs finite utilities")
        factor = Fraction(coefficient)
        if factor < 0:
            raise ValueError(f"the coefficient must be >= 0, got {coefficient}")
        best = Fraction(float(values.max()))  # the largest double is one of the utilities: exact
        n = values.size
        while True:  # proposals are independent: draw them a batch at a time, keep the first accepted
            for index in self.integers_below(n, min(n, 64)).tolist():
                gamma = factor * (best - Fraction(float(values[index])))  # only for the proposals
                if gamma == 0 or bool(self.bernoulli_exp(gamma, 1)[0]):
                    return int(index)

    def exponential_indices(self, utilities: np.ndarray, coefficient: Fraction | float) -> np.ndarray:
        """`exponential_index` on each row of a 2D array, independently; -inf marks a candidate
        a row may not choose (a row with none gets 0). One call per batch of choices."""
        return np.array([_eligible_index(self, row, coefficient) for row in _rows(utilities)], dtype=np.int64)

    # ------------------------------------------------------------ the interface other code calls
    def uniform(self, size: int) -> np.ndarray:
        """`size` doubles uniform on the grid (i + 1/2) 2^-52, i = 0 .. 2^52 - 1: strictly
        inside (0, 1) (the largest is 1 - 2^-53, exactly representable)."""
        halves = np.floor(self._integers53(size) / 2.0)  # 52 uniform bits
        return (halves + 0.5) / float(2**52)

    def laplace(self, scale: float, size: int) -> np.ndarray:
        """Discretised Laplace(0, scale) noise: g * Z, Z exactly discrete Laplace of scale
        `scale / g`, on the power-of-two grid g = min(1, 2^(floor(log2 scale) - 20)).

        Integer values plus this noise are exact multiples of g (no floating-point leak); for
        real values use the release functions of jostle.language.mechanisms, which snap to the grid.
        """
        if scale == 0:
            return np.zeros(size)
        grid = min(Fraction(1), power_of_two_at_most(scale) / 2**LAPLACE_GRID_BITS)
        units = self.discrete_laplace(Fraction(scale) / grid, size)
        return grid_to_floats(units, grid)

    def two_sided_geometric(self, epsilon_per_unit: float | Fraction, size: int) -> np.ndarray:
        """Integer noise with P(k) proportional to exp(-epsilon_per_unit * |k|), exactly.

        (The two-sided geometric law of Ghosh, Roughgarden & Sundararajan 2009 is the discrete
        Laplace law of scale 1/epsilon_per_unit.) int64, or Python ints when huge.
        """
        return self.discrete_laplace(1 / Fraction(epsilon_per_unit), size)

    def normal(self, sigma: float, size: int) -> np.ndarray:
        """Discretised Normal(0, sigma'^2) noise: g * Z, Z exactly discrete Gaussian, on the grid
        g = 2^(floor(log2 sigma) - 16).

        In grid units sigma^2 is rounded up to c * t (t = floor(sigma/g) + 1, c an integer), so
        sigma' / sigma - 1 < 2^-16; the variance of the discrete Gaussian differs from sigma'^2 by
        a relative exp(-2 pi^2 (sigma'/g)^2), i.e. not at all in double precision.
        """
        if sigma == 0:
            return np.zeros(size)
        grid = power_of_two_at_most(sigma) / 2**NORMAL_GRID_BITS
        sigma2, t = integer_sigma2(Fraction(sigma) / grid)
        return grid_to_floats(self.discrete_gaussian(sigma2, size, t), grid)

    def gumbel(self, size: int) -> np.ndarray:
        """Standard Gumbel draws in floating point (simulation only; no release uses them)."""
        return -np.log(-np.log(self.uniform(size)))

    def bernoulli(self, probability: float, size: int) -> np.ndarray:
        """Exact Bernoulli draws with the (binary) value of `probability`, clipped to [0, 1]."""
        p = min(max(Fraction(probability), Fraction(0)), Fraction(1))
        return self.bernoulli_rational(p, size)

    def choice(self, options: int, size: int) -> np.ndarray:
        """Uniform integers in [0, options), exactly."""
        return self.integers_below(int(options), size)


class SimulationNoise:
    """Fast floating-point noise with the interface of `Randomness`, for PUBLIC data only.

    NOT FOR RELEASES: plain NumPy samplers (exposed to the floating-point attacks of Mironov
    2012) driven by a seeded generator. Use it to run algorithms many times on public data,
    e.g. to simulate their error while training the ChoiceMaker.

    Args:
        seed: Seed of the NumPy generator (None: a fresh one).
    """

    secure = False
    simulation_only = True

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def integers_below(self, bound: int, size: int) -> np.ndarray:
        return self.rng.integers(0, int(bound), size=size)

    def bernoulli_rational(self, probability: Fraction, size: int) -> np.ndarray:
        return self.rng.random(size) < float(probability)

    def bernoulli_exp(self, gamma: Fraction, size: int) -> np.ndarray:
        return self.rng.random(size) < math.exp(-float(gamma))

    def discrete_laplace(self, scale: Fraction, size: int) -> np.ndarray:
        p = -math.expm1(-1 / float(scale))  # success probability of each geometric
        return self.rng.geometric(p, size) - self.rng.geometric(p, size)

    def discrete_gaussian(self, sigma2: Fraction, size: int, t: int | None = None) -> np.ndarray:
        """Rounded Normal(0, sigma2): close to the discrete Gaussian for sigma >= 1, not equal."""
        return np.rint(self.rng.normal(0.0, math.sqrt(float(sigma2)), size)).astype(np.int64)

    def exponential_index(self, utilities: np.ndarray | list[float], coefficient: Fraction | float) -> int:
        """Gumbel-max in floating point: P(i) proportional to exp(coefficient * utilities[i])."""
        keys = float(coefficient) * np.asarray(utilities, dtype=float) + self.rng.gumbel(size=len(utilities))
        return int(np.argmax(keys))

    def exponential_indices(self, utilities: np.ndarray, coefficient: Fraction | float) -> np.ndarray:
        """Gumbel-max on each row; -inf marks an ineligible candidate (a row with none gets 0)."""
        matrix = _rows(utilities)
        keys = float(coefficient) * matrix + self.rng.gumbel(size=matrix.shape)
        return np.where(matrix > -np.inf, keys, -np.inf).argmax(axis=1).astype(np.int64)

    def uniform(self, size: int) -> np.ndarray:
        return (self.rng.integers(0, 2**52, size=size) + 0.5) / float(2**52)

    def laplace(self, scale: float, size: int) -> np.ndarray:
        return self.rng.laplace(0.0, scale, size) if scale > 0 else np.zeros(size)

    def two_sided_geometric(self, epsilon_per_unit: float | Fraction, size: int) -> np.ndarray:
        p = -math.expm1(-float(epsilon_per_unit))
        return self.rng.geometric(p, size) - self.rng.geometric(p, size)

    def normal(self, sigma: float, size: int) -> np.ndarray:
        return self.rng.normal(0.0, sigma, size)

    def gumbel(self, size: int) -> np.ndarray:
        return self.rng.gumbel(size=size)

    def bernoulli(self, probability: float, size: int) -> np.ndarray:
        return self.rng.random(size) < probability

    def choice(self, options: int, size: int) -> np.ndarray:
        return self.rng.integers(0, options, size=size)
