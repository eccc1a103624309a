"""The noisy measurements of the tree learners, and their public random choices.

Every function takes the `noise` source explicitly and never draws from NumPy's global
generator: `jostle.privacy.noise.Randomness` for releases (exact samplers), or a simulation source on
public data (`jostle.privacy.noise.SimulationNoise`); `jostle.privacy.safe_noise` makes the noisy draws and holds
the privacy argument. The caller charges the ledger (`jostle.learners.trees.accounting`) *before*
calling a measurement here; these functions only calibrate and draw.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jostle.privacy import replay, safe_noise


def noisy_counts(noise: Any, counts: np.ndarray, epsilon: float) -> np.ndarray:
    """counts + two-sided geometric noise with P(k) ~ exp(-epsilon |k|), as floats.

    eps-DP for a vector of counts of *disjoint* cells (sizes of sibling nodes, class counts of
    the leaves): one row added or removed changes one cell by 1, L1 sensitivity 1
    (Ghosh, Roughgarden, Sundararajan 2009). Integer counts plus integer noise are exact
    (`two_sided_geometric` is the exact discrete Laplace on `Randomness`). Counts that are not
    of an integer dtype are released on a public grid instead (`safe_noise.release_vector`,
    Laplace(1 / epsilon)), never by adding integers to real values.
    """
    counts = np.asarray(counts)
    if counts.size == 0:
        return counts.astype(np.float64)
    if counts.dtype.kind not in "iub":
        return safe_noise.release_vector(noise, counts, 1.0, epsilon)
    draws = np.asarray(noise.two_sided_geometric(epsilon, counts.size), dtype=np.float64)
    return replay.released(noise, "tree counts", counts, counts.astype(np.float64) + draws.reshape(counts.shape), "l1", 1, 1)  # noqa: E501


def exponential_mechanism(noise: Any, utilities: np.ndarray, epsilon: float, sensitivity: float,
                          monotone: bool) -> np.ndarray:
    """One choice per row of `utilities` (rows = nodes, columns = candidates).

    P(a) ~ exp(epsilon u(a) / (2 Delta)), or exp(epsilon u(a) / Delta) for a monotone utility
    (McSherry & Talwar 2007), sampled exactly on `Randomness` (`safe_noise.
    choose_exponential_rows`: rejection sampling on the utilities' exact values) and by
    Gumbel-max in simulation. Candidates a row may not choose are marked -inf (public: the
    attributes used on the path). Each row is eps-DP for its own node; rows are nodes with
    disjoint data, so one call is eps-DP as a whole (parallel composition).
    """
    utilities = np.asarray(utilities, dtype=np.float64)
    if utilities.size == 0:
        return np.zeros(utilities.shape[0], dtype=np.int64)
    return safe_noise.choose_exponential_rows(noise, utilities, sensitivity=sensitivity, epsilon=epsilon,
                                              monotone=monotone)


def public_random_choice(noise: Any, allowed: np.ndarray) -> np.ndarray:
    """A uniformly random allowed column per row of the boolean matrix `allowed`.

    Public randomness: it does not look at the data, so it costs no epsilon; it still comes
    from `noise` so a seeded run is reproducible. Rows must allow at least one column.
    """
    keys = np.asarray(noise.uniform(allowed.size), dtype=np.float64).reshape(allowed.shape)
    return np.where(allowed, keys, -1.0).argmax(axis=1).astype(np.int64)


def public_random_subset(noise: Any, allowed: np.ndarray, size: int) -> np.ndarray:
    """A uniformly random subset of at most `size` allowed columns per row (public randomness)."""
    if size >= allowed.shape[1]:
        return allowed.copy()
    keys = np.asarray(noise.uniform(allowed.size), dtype=np.float64).reshape(allowed.shape)
    keys = np.where(allowed, keys, 2.0)
    order = np.argsort(keys, axis=1)[:, :size]
    subset = np.zeros_like(allowed)
    np.put_along_axis(subset, order, True, axis=1)
    return subset & allowed
