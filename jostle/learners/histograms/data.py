"""Data helpers in the style of DPBench: shapes, sampling at a scale, coarsening.

DPBench (Hay et al., SIGMOD 2016) separates a data set's *shape* (its normalised histogram,
treated as public) from its *scale* (number of records): a test input of scale N is a
multinomial sample of N records from the shape, and a smaller domain is made by summing
adjacent cells. The synthetic shapes here are for tests and benchmarks; real DPBench shapes
can be loaded from .npy files by the caller.

Sampling uses NumPy's generator on purpose: it makes *inputs*, not releases.
"""

from __future__ import annotations

import numpy as np


def sample_from_shape(shape: np.ndarray, scale: int, seed: int | None = 0) -> np.ndarray:
    """A histogram of `scale` records drawn i.i.d. from the normalised `shape` (multinomial)."""
    weights = np.asarray(shape, dtype=float)
    if np.any(weights < 0) or weights.sum() <= 0:
        raise ValueError("a shape needs non-negative weights with a positive total")
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(int(scale), (weights / weights.sum()).ravel())
    return counts.reshape(weights.shape).astype(float)


def coarsen(x: np.ndarray, new_shape: int | tuple[int, ...]) -> np.ndarray:
    """Sum adjacent cells so that `x` gets `new_shape` (each side must divide the old one)."""
    x = np.asarray(x, dtype=float)
    target = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    if len(target) != x.ndim:
        raise ValueError(f"cannot coarsen shape {x.shape} to {target}")
    for old, new in zip(x.shape, target):
        if new <= 0 or old % new:
            raise ValueError(f"domain size {new} must divide {old}")
    split = []
    for old, new in zip(x.shape, target):
        split += [new, old // new]
    return x.reshape(split).sum(axis=tuple(range(1, 2 * x.ndim, 2)))


def synthetic_shape(kind: str, n: int, seed: int = 0) -> np.ndarray:
    """A public 1D shape of `n` cells for tests and benchmarks.

    Kinds: "uniform"; "step" (a few flat plateaus); "sparse" (mass on ~1% of the cells);
    "gaussian" (a mixture of three bumps); "zipf" (power-law decay from the left).
    """
    rng = np.random.default_rng(seed)
    cells = np.arange(n)
    if kind == "uniform":
        return np.ones(n)
    if kind == "step":
        edges = np.sort(rng.choice(np.arange(1, n), size=4, replace=False))
        levels = rng.choice([0.0, 1.0, 4.0, 10.0], size=5)
        levels[rng.integers(5)] = 10.0
        return np.repeat(levels, np.diff(np.concatenate([[0], edges, [n]])))
    if kind == "sparse":
        shape = np.zeros(n)
        support = rng.choice(n, size=max(1, n // 100), replace=False)
        shape[support] = rng.uniform(1.0, 10.0, size=support.size)
        return shape
    if kind == "gaussian":
        centres, widths = rng.uniform(0.1, 0.9, 3) * n, rng.uniform(0.01, 0.08, 3) * n
        return sum(np.exp(-0.5 * ((cells - c) / w) ** 2) for c, w in zip(centres, widths))
    if kind == "zipf":
        return 1.0 / (cells + 1.0)
    raise ValueError(f"unknown shape kind {kind!r}")


def synthetic_shape_2d(kind: str, side: int, seed: int = 0) -> np.ndarray:
    """A public (side x side) shape: the outer product of two 1D shapes of `kind`,
    except "clusters" (a few 2D Gaussian blobs)."""
    if kind == "clusters":
        rng = np.random.default_rng(seed)
        rows, cols = np.mgrid[0:side, 0:side]
        shape = np.zeros((side, side))
        for _ in range(4):
            r, c = rng.uniform(0.1, 0.9, 2) * side
            w = rng.uniform(0.02, 0.08) * side
            shape += np.exp(-0.5 * (((rows - r) / w) ** 2 + ((cols - c) / w) ** 2))
        return shape
    return np.outer(synthetic_shape(kind, side, seed), synthetic_shape(kind, side, seed + 1))
