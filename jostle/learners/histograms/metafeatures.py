"""Metafeatures: cheap summaries of a histogram that tell which Option will do best.

A `Metafeature` is public (`cost=False`: domain size, epsilon) or noisy (`cost=True`: it reads
the private counts and spends the epsilon it is given). Its
`measure(x, epsilon_mf, noise, context) -> float` draws all its randomness from `noise` and is
self-contained: it reads only x (with its shape), the epsilon it may spend and the public
`context.epsilon` (the chosen Option's budget), so the language layer can call it with its own
context object.

Privacy unit: one record added or removed, so the count vector has L1 sensitivity 1 and
changes by one in one cell. The sensitivity argument of each noisy metafeature is written next
to it. Metafeatures that normalise by the number of records N release N with their statistic
as one vector (the L1 sensitivities add up) and divide afterwards (post-processing).

Shared releases: several metafeatures can be post-processing of ONE noisy release (their
`release` names it). The `profile_*` metafeatures all read the *profile*, a coarse noisy
histogram (16 blocks in 1D, 4 x 4 in 2D, sensitivity 1): measuring any number of them costs
one release, so each sees the whole share's precision instead of a k-th of it. Issue 27 added
four more readings of the same release (no new charge, no new release): profile_peaks (blocks
more than one standard deviation above the mean block), profile_max_share, profile_empty_share
and profile_records_per_cell (log10 of noisy N x epsilon / domain size, the scale-free form the
algorithms' errors depend on). A budget *unit*
is a shared release or an ungrouped noisy metafeature (`budget_unit`).

The ChoiceMaker engine measures them (`jostle.choicemaker.measurement.measure_features`, the code
path of both training and dispatch): the share s of epsilon is split equally among the k noisy
budget units, each charged once before its release.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from jostle.choicemaker.family import MetafeatureContext
from jostle.learnerkit.metafeatures import FunctionMetafeature
from jostle.privacy import replay

ChargeFunction = Callable[[float, str], None]


MeasureFunction = Callable[[np.ndarray, float, Any, MetafeatureContext], float]


@dataclass(frozen=True)
class Metafeature(FunctionMetafeature):
    """A named summary of a histogram (the learner kit's `FunctionMetafeature`, whose
    fingerprint hashes the source of everything the function calls).

    Args:
        name: Feature name (a column of the experience table, an input of the meta-model).
        cost: True if it reads the private counts and must be given epsilon.
        function: `f(x, epsilon_mf, noise, context) -> float`.
        sensitivity: The L1 sensitivity argument, for documentation and reports.
        release: Name of the shared release this metafeature post-processes ("" for none):
            metafeatures with the same release cost one charge together.
    """

    def measure(self, x: np.ndarray, epsilon_mf: float, noise: Any, context: Any) -> float:
        """The feature's value on `x`, spending `epsilon_mf` (0 for public ones)."""
        if self.cost and not epsilon_mf > 0:
            raise ValueError(f"metafeature {self.name!r} reads private data and needs epsilon > 0")
        # The float's exact value as a rational (callers pass the largest float not above what
        # was charged, measurement.default_measure), so noise scales such as 1/eps are computed
        # exactly: in floating point fl(1/3) < 1/3, and Laplace at it spent more than the 3
        # charged (issue 22).
        eps = Fraction(float(epsilon_mf)) if math.isfinite(float(epsilon_mf)) else math.inf
        return float(self.function(np.asarray(x, dtype=float), eps, noise, context))



def _laplace(noise: Any, scale: Fraction | float) -> float:
    """Laplace(scale) noise to ADD TO AN INTEGER-VALUED statistic of sensitivity 1 (a count).

    On `jostle.privacy.noise.Randomness` this is g * Z, Z exact discrete Laplace, on a power-of-two grid
    g <= 1, so a count plus it stays on the grid and no output is impossible on a neighbour.
    Added to a REAL statistic it would reveal the statistic's bits below g: release real
    statistics with `jostle.privacy.safe_noise.release_vector` (as `_noisy_pair` does).
    """
    return float(np.asarray(noise.laplace(scale, 1)).ravel()[0])


def _noisy_pair(statistic: float, sensitivity: float, x: np.ndarray, eps: float,
                noise: Any) -> tuple[float, float]:
    """Release (statistic, N) as one vector: its L1 sensitivity is the statistic's plus 1 (N
    changes by 1), so Laplace((sensitivity + 1) / eps) on each entry is eps-DP. N is floored
    at 1 afterwards (post-processing) to normalise by.

    The statistic is real (e.g. sum |x_i - N/n|), so on an exact source the pair is snapped to a
    public grid and given exact discrete Laplace noise (`jostle.privacy.safe_noise.release_vector`); a
    simulation source adds float Laplace noise. eps = inf (only on public data) adds none.
    """
    from jostle.privacy import safe_noise  # imported here: the rest of this module is not this helper's

    if math.isinf(eps):
        return statistic, max(float(x.sum()), 1.0)
    noisy = safe_noise.release_vector(noise, np.array([statistic, float(x.sum())]), sensitivity + 1.0, eps)
    return float(noisy[0]), max(float(noisy[1]), 1.0)


# Public metafeatures (no budget).

def _domain_size(x: np.ndarray, eps: float, noise: Any, context: Any) -> float:
    return float(x.size)


def _epsilon(x: np.ndarray, eps: float, noise: Any, context: Any) -> float:
    return float(context.epsilon)


# Noisy metafeatures.

def _size(x: np.ndarray, eps: float, noise: Any, context: Any) -> float:
    # N = sum of counts: one record changes it by 1 (sensitivity 1); Laplace(1/eps), released on
    # a public grid by jostle.privacy.safe_noise (exact even if the histogram is not integer-valued).
    from jostle.privacy import safe_noise

    if math.isinf(eps):
        return float(x.sum())
    return float(safe_noise.release_vector(noise, np.array([float(x.sum())]), 1.0, eps)[0])


def _scale_epsilon(x: np.ndarray, eps: float, noise: Any, context: Any) -> float:
    # Noisy N (sensitivity 1) times the public Option budget; clipping at 0 is post-processing.
    return max(_size(x, eps, noise, context), 0.0) * float(context.epsilon)


def _sparsity(x: np.ndarray, eps: float, noise: Any, context: Any) -> float:
    # Number of empty cells: one record changes one cell by 1, so at most one cell switches
    # between empty and non-empty (sensitivity 1); divided by the public domain size.
    empty = float(np.count_nonzero(x == 0))
    scale = 0 if math.isinf(eps) else Fraction(1) / Fraction(eps)  # exact, not fl(1/eps)
    return float(np.clip(replay.released(noise, "sparsity", empty, empty + _laplace(noise, scale), "l1", 1) / x.size, 0.0, 1.0))  # noqa: E501


def _uniformity(x: np.ndarray, eps: float, noise: Any, context: Any) -> float:
    # Total variation distance from uniform, D / (2N) with D = sum_i |x_i - N/n|. One record
    # changes one x_i by 1 and every N/n by 1/n, so D changes by at most 1 + n * (1/n) = 2
    # (sensitivity 2); released with N (sensitivity 1) as one vector (see _noisy_pair).
    distance = float(np.abs(x - x.sum() / x.size).sum())
    noisy, size = _noisy_pair(distance, 2.0, x, eps, noise)
    return float(np.clip(noisy / (2.0 * size), 0.0, 1.0))


def _roughness(x: np.ndarray, eps: float, noise: Any, context: Any) -> float:
    # Sum of |differences| between neighbouring cells. In 1D a cell is in at most 2 adjacent
    # pairs, so one record changes the sum by at most 2 (sensitivity 2); in 2D a cell has at
    # most 4 neighbours (sensitivity 4). The sum is at most 2N (1D) / 4N (2D): normalised by
    # that, with N released alongside (see _noisy_pair).
    if x.ndim == 1:
        total, sensitivity = float(np.abs(np.diff(x)).sum()), 2.0
    else:
        total = float(np.abs(np.diff(x, axis=0)).sum() + np.abs(np.diff(x, axis=1)).sum())
        sensitivity = 4.0
    noisy, size = _noisy_pair(total, sensitivity, x, eps, noise)
    return float(np.clip(noisy / (sensitivity * size), 0.0, 1.0))


def coarse_blocks(x: np.ndarray, per_side: int) -> np.ndarray:
    """Sums over (at most) `per_side` near-equal contiguous blocks per axis (a partition)."""
    out = x
    for axis, side in enumerate(x.shape):
        edges = np.unique(np.linspace(0, side, min(per_side, side) + 1).astype(int))[:-1]
        out = np.add.reduceat(out, edges, axis=axis)
    return out


def _entropy(x: np.ndarray, eps: float, noise: Any, context: Any) -> float:
    # Shannon entropy of a coarse noisy histogram (16 blocks in 1D, 4 x 4 in 2D), normalised to
    # [0, 1] by log(blocks). The blocks partition the domain (sensitivity 1), Laplace(1/eps) on
    # each; clipping and normalising are post-processing. All-zero noisy blocks read as 1.
    blocks = coarse_blocks(x, 16 if x.ndim == 1 else 4).ravel()
    from jostle.privacy import safe_noise

    noisy = np.clip(blocks if math.isinf(eps) else safe_noise.release_vector(noise, blocks, 1.0, eps), 0.0, None)
    if blocks.size < 2 or noisy.sum() <= 0:
        return 1.0
    p = noisy[noisy > 0] / noisy.sum()
    return float(-(p * np.log(p)).sum() / math.log(blocks.size))


# The profile: one coarse noisy histogram shared by the profile_* metafeatures.

PROFILE_BLOCKS_PER_SIDE = {1: 16, 2: 4}
"""Blocks per axis of the profile. Chosen on public data before the benchmark: with 1% of the
budget, 8, 16 and 32 blocks in 1D gave about the same choices; 16 was slightly ahead."""


def profile_release(x: np.ndarray, eps: float, noise: Any, context: Any) -> tuple[np.ndarray, np.ndarray]:
    """The profile of `x` released with `eps`: (noisy block counts, cells per block).

    The blocks partition the domain, so one record changes one block count by 1 (L1
    sensitivity 1); Laplace(1/eps) on each block (an exact discrete release on a public grid,
    `jostle.privacy.safe_noise.release_vector`) is eps-DP. The cells per block depend only on the
    public domain shape. The release is memoised in `context.releases`, so the metafeatures
    reading it within one measurement see the same values and the budget is charged once;
    a context without that memo is refused (a second release would be a second, uncharged one).
    eps = inf (public data only) releases the exact counts.
    """
    memo = getattr(context, "releases", None)
    if memo is None:
        raise TypeError("the profile metafeatures need a context with a `releases` memo")
    key = ("profile", float(eps))
    if key not in memo:
        from jostle.privacy import safe_noise

        per_side = PROFILE_BLOCKS_PER_SIDE.get(x.ndim, 4)
        blocks = coarse_blocks(x, per_side)
        cells = coarse_blocks(np.ones_like(x), per_side)
        noisy = blocks if math.isinf(eps) else \
            safe_noise.release_vector(noise, blocks.ravel(), 1.0, eps).reshape(blocks.shape)
        memo[key] = (np.asarray(noisy, dtype=float), cells)
    return memo[key]


def _profile_size(x: np.ndarray, eps: float, noise: Any, context: Any) -> float:
    # The number of records as the sum of the noisy blocks (post-processing), floored at 0.
    noisy, _ = profile_release(x, eps, noise, context)
    return max(float(noisy.sum()), 0.0)


def _profile_uniformity(x: np.ndarray, eps: float, noise: Any, context: Any) -> float:
    # Total variation distance between the noisy block shares and the blocks' shares of the
    # domain (uniform data has both equal); post-processing of the profile.
    noisy, cells = profile_release(x, eps, noise, context)
    total = max(float(noisy.sum()), 1.0)
    return float(np.clip(0.5 * np.abs(noisy / total - cells / cells.sum()).sum(), 0.0, 1.0))


def _profile_roughness(x: np.ndarray, eps: float, noise: Any, context: Any) -> float:
    # Differences between neighbouring noisy blocks over 2N (1D) or 4N (2D), in [0, 1].
    noisy, _ = profile_release(x, eps, noise, context)
    total = max(float(noisy.sum()), 1.0)
    if noisy.ndim == 1:
        return float(np.clip(np.abs(np.diff(noisy)).sum() / (2.0 * total), 0.0, 1.0))
    jumps = np.abs(np.diff(noisy, axis=0)).sum() + np.abs(np.diff(noisy, axis=1)).sum()
    return float(np.clip(jumps / (4.0 * total), 0.0, 1.0))


def _profile_entropy(x: np.ndarray, eps: float, noise: Any, context: Any) -> float:
    # Shannon entropy of the clipped noisy blocks over log(blocks); 1 when nothing is positive.
    noisy, _ = profile_release(x, eps, noise, context)
    positive = np.clip(noisy.ravel(), 0.0, None)
    if positive.size < 2 or positive.sum() <= 0:
        return 1.0
    p = positive[positive > 0] / positive.sum()
    return float(-(p * np.log(p)).sum() / math.log(positive.size))


def _profile_signal(x: np.ndarray, eps: float, noise: Any, context: Any) -> float:
    # Share of blocks whose noisy count per cell exceeds three Laplace scales of an Option
    # that spends the public context.epsilon on each cell: where the data stands out of the
    # Option's noise. Post-processing of the profile and public facts.
    noisy, cells = profile_release(x, eps, noise, context)
    option_epsilon = float(getattr(context, "epsilon", 0.0)) or 1.0
    return float(np.mean(noisy / cells > 3.0 / option_epsilon))


def _profile_peaks(x: np.ndarray, eps: float, noise: Any, context: Any) -> float:
    # Share of blocks whose noisy count is more than one standard deviation above the mean
    # noisy block (the "cells more than one standard deviation above the mean", on the
    # profile's blocks): few peaks = mass in a few places. Post-processing of the profile.
    noisy, _ = profile_release(x, eps, noise, context)
    values = noisy.ravel()
    if values.size < 2:
        return 0.0
    return float(np.mean(values > values.mean() + values.std()))


def _profile_max_share(x: np.ndarray, eps: float, noise: Any, context: Any) -> float:
    # The largest noisy block's share of the noisy total, in [0, 1] (post-processing).
    noisy, _ = profile_release(x, eps, noise, context)
    total = max(float(np.clip(noisy, 0.0, None).sum()), 1.0)
    return float(np.clip(noisy.max() / total, 0.0, 1.0))


def _profile_empty_share(x: np.ndarray, eps: float, noise: Any, context: Any) -> float:
    # Share of blocks holding less than a tenth of the mean noisy block: the profile's view of
    # sparsity at the block level (post-processing).
    noisy, _ = profile_release(x, eps, noise, context)
    values = noisy.ravel()
    return float(np.mean(values < 0.1 * max(float(values.mean()), 0.0)))


def _profile_records_per_cell(x: np.ndarray, eps: float, noise: Any, context: Any) -> float:
    # log10(noisy N x epsilon / domain size), floored at N = 1: the scale-free signal-to-noise
    # ratio the algorithms' errors hinge on (records per cell over the Laplace scale of a
    # per-cell count at the Option's public epsilon). Post-processing of the profile's total
    # and public facts (the domain shape and the Option budget).
    noisy, _ = profile_release(x, eps, noise, context)
    option_epsilon = float(getattr(context, "epsilon", 0.0)) or 1.0
    return float(math.log10(max(float(noisy.sum()), 1.0) * option_epsilon / x.size))


BUILTIN_METAFEATURES: dict[str, Metafeature] = {m.name: m for m in [
    Metafeature("size", True, _size, "1 (sum of counts)"),
    Metafeature("domain_size", False, _domain_size, "public"),
    Metafeature("epsilon", False, _epsilon, "public (the Option's budget)"),
    Metafeature("scale_epsilon", True, _scale_epsilon, "1 (sum of counts) x public epsilon"),
    Metafeature("sparsity", True, _sparsity, "1 (number of empty cells)"),
    Metafeature("uniformity", True, _uniformity, "2 (sum |x_i - N/n|) + 1 (N)"),
    Metafeature("roughness", True, _roughness,
                "2 in 1D, 4 in 2D (sum of |neighbour differences|) + 1 (N)"),
    Metafeature("entropy", True, _entropy, "1 (coarse block counts, a partition)"),
    Metafeature("profile_size", True, _profile_size, "1 (the profile: coarse blocks)", release="profile"),
    Metafeature("profile_uniformity", True, _profile_uniformity, "1 (the profile)", release="profile"),
    Metafeature("profile_roughness", True, _profile_roughness, "1 (the profile)", release="profile"),
    Metafeature("profile_entropy", True, _profile_entropy, "1 (the profile)", release="profile"),
    Metafeature("profile_signal", True, _profile_signal, "1 (the profile)", release="profile"),
    Metafeature("profile_peaks", True, _profile_peaks, "1 (the profile)", release="profile"),
    Metafeature("profile_max_share", True, _profile_max_share, "1 (the profile)", release="profile"),
    Metafeature("profile_empty_share", True, _profile_empty_share, "1 (the profile)", release="profile"),
    Metafeature("profile_records_per_cell", True, _profile_records_per_cell,
                "1 (the profile) with public facts", release="profile"),
]}

# The default set: every built-in except scale_epsilon, which would pay again for the noisy
# size (the meta-model derives log(size * epsilon) from size and epsilon for free).
DEFAULT_METAFEATURES: tuple[str, ...] = ("size", "domain_size", "epsilon", "sparsity",
                                         "uniformity", "roughness", "entropy")
