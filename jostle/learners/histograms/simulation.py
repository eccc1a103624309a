"""A fast, seeded noise source for running private algorithms on PUBLIC data.

Training the ChoiceMaker runs every Option many times on public shapes; what matters there is
speed and reproducibility, not secrecy. `FloatSimulationNoise` draws from NumPy's PCG64 with the
interface the histogram algorithms use (`laplace(scale, size)`, `gumbel(size)`,
`uniform(size)`). It must never be used for a release on private data: anyone who knows the
seed can subtract the noise. Real releases use `jostle.privacy.noise.Randomness()` (secure).
"""

from __future__ import annotations

import numpy as np


class FloatSimulationNoise:
    """Seeded NumPy noise with the `HistogramNoise` interface (unsafe for real releases).

    Args:
        seed: Seed (an int or a sequence of ints) of NumPy's default generator.
    """

    secure = False
    simulation_only = True  # jostle.privacy.safe_noise: never used for a release on private data

    def __init__(self, seed: int | tuple[int, ...] | None = 0) -> None:
        self._generator = np.random.default_rng(seed)

    def laplace(self, scale: float, size: int) -> np.ndarray:
        """`size` draws of Laplace(0, scale)."""
        return self._generator.laplace(0.0, scale, size)

    def gumbel(self, size: int) -> np.ndarray:
        """`size` standard Gumbel draws."""
        return self._generator.gumbel(0.0, 1.0, size)

    def uniform(self, size: int) -> np.ndarray:
        """`size` draws uniform on [0, 1)."""
        return self._generator.random(size)

    def normal(self, sigma: float, size: int) -> np.ndarray:
        """`size` draws of Normal(0, sigma^2)."""
        return self._generator.normal(0.0, sigma, size)
