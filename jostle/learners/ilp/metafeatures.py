"""Metafeatures of the ILP family: the public facts of the hypothesis space, and a noisy size.

Which Option wins hinges on signal against noise: how many examples there are against the
noise each reduction adds to a count. The noise scales are public, computable before any data
is read (from the modes, the fake example and the budget, `bounds`); the number of examples is
not. Privacy unit: `entity(example id)`, one example and all its facts added or removed.

Public (cost=False; they read only `ILPData.modes`, `ILPData.fake` and the public budget, so
they are identical on neighbouring databases):
    bottom_size          k, the fake bottom clause's literals (the lattice has up to 2^k clauses)
    log_lattice_size     log10 |L|, the naive reduction's legal clauses (up to the modes'
                         maximum clause length)
    log_naive_std        log10 of the std of one count's noise in the naive reduction at the
                         Option's epsilon, one round (`bounds.naive_std`)
    log_relevance_std    log10 of the largest per-level std of the relevance-aware reduction with
                         l = 3, one round, no pruning (`bounds.relevance_stds`; its worst case)
    epsilon              the Option's budget (the learner kit's `EPSILON`, one object)

Noisy (cost=True), one shared release "ilp example counts": the vector (P, N) of positive and
negative examples with two-sided geometric noise at the unit's epsilon. Sensitivity: adding or
removing one example (and its facts) moves exactly one of P, N by exactly 1, so the vector has
L1 sensitivity 1 (and the release is eps-DP, Ghosh et al. 2009). Post-processing of it:
    n_examples           P' + N', floored at 1
    positive_fraction    max(P', 0) / (max(P', 0) + max(N', 0)) (1/2 when both are <= 0)

Derived (post-processing of `n_examples`, `requires`):
    log_naive_signal     log10(n_examples / naive std): examples per unit of the naive noise
    log_relevance_signal log10(n_examples / relevance std)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from jostle.choicemaker.family import MetafeatureContext
from jostle.learnerkit.metafeatures import EPSILON, FunctionMetafeature
from jostle.learners.ilp.bounds import naive_std, relevance_stds
from jostle.learners.ilp.task import ILPData

__all__ = ["COUNTS_RELEASE", "DEFAULT_METAFEATURES", "ILP_METAFEATURES", "RELEVANCE_LEVELS"]

COUNTS_RELEASE = "ilp example counts"
RELEVANCE_LEVELS = 3  # the l the relevance noise metafeatures are stated for (the middle Option)


# ------------------------------------------------------------------ public
def _bottom_size(data: ILPData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    return float(data.k)  # public: the fake example's literals


def _lattice_size(data: ILPData) -> int:
    return max(int(sum(data.level_sizes())), 1)  # public: the modes and the fake example


def _log_lattice_size(data: ILPData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    return math.log10(_lattice_size(data))


def _naive_std(data: ILPData, context: MetafeatureContext) -> float:
    # public: the lattice size and the Option's budget (context.epsilon, public)
    return naive_std(_lattice_size(data), context.epsilon)


def _relevance_std(data: ILPData, context: MetafeatureContext) -> float:
    # public: the largest per-level std of l = 3 without pruning, at the Option's budget
    sizes = data.level_sizes(RELEVANCE_LEVELS)
    return max(max(relevance_stds(sizes, context.epsilon, RELEVANCE_LEVELS)), 1e-12)


def _log_naive_std(data: ILPData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    return math.log10(max(_naive_std(data, context), 1e-12))


def _log_relevance_std(data: ILPData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    return math.log10(_relevance_std(data, context))


# ------------------------------------------------------------------ the shared noisy release
def example_counts(data: ILPData, eps: float, noise: Any, context: MetafeatureContext) -> np.ndarray:
    """(P', N'): the positive and negative example counts with geometric noise at `eps`.

    L1 sensitivity 1 under the entity unit (one example moves one of P, N by 1); released once
    per measurement (memoised in `context.releases`, so the metafeatures reading it see one
    release, charged once by the engine as the budget unit `COUNTS_RELEASE`). A context without
    that memo is refused (a second release would be an uncharged one).
    """
    memo = getattr(context, "releases", None)
    if memo is None:
        raise TypeError("the ILP count metafeatures need a context with a `releases` memo")
    key = (COUNTS_RELEASE, float(eps))
    if key not in memo:
        from jostle.privacy.safe_noise import release_counts

        labels = data.database.examples.labels
        counts = np.array([int(np.sum(labels)), int(np.sum(~labels))], dtype=np.int64)
        memo[key] = np.asarray(release_counts(noise, counts, 1, eps), dtype=float)
    return memo[key]


def _n_examples(data: ILPData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    # P' + N' of the shared release (post-processing), floored at 1
    positives, negatives = example_counts(data, eps, noise, context)
    return max(float(positives + negatives), 1.0)


def _positive_fraction(data: ILPData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    # the share of positives among the clipped noisy counts (post-processing of the release)
    positives, negatives = np.clip(example_counts(data, eps, noise, context), 0.0, None)
    total = positives + negatives
    return float(positives / total) if total > 0 else 0.5


# ------------------------------------------------------------------ derived
def _log_naive_signal(data: ILPData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    # post-processing of n_examples and the public naive std
    return math.log10(max(context.released["n_examples"], 1.0) / max(_naive_std(data, context), 1e-12))


def _log_relevance_signal(data: ILPData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    # post-processing of n_examples and the public relevance std
    return math.log10(max(context.released["n_examples"], 1.0) / _relevance_std(data, context))


COUNT_SENSITIVITY = "1 (the vector (P, N): one example and its facts move one of them by 1; entity unit)"

ILP_METAFEATURES: dict[str, FunctionMetafeature] = {m.name: m for m in [
    FunctionMetafeature("bottom_size", False, _bottom_size, "public (the fake example's literals)"),
    FunctionMetafeature("log_lattice_size", False, _log_lattice_size, "public (the modes and the fake example)"),
    FunctionMetafeature("log_naive_std", False, _log_naive_std, "public (lattice size and the Option's budget)"),
    FunctionMetafeature("log_relevance_std", False, _log_relevance_std,
                        "public (level sizes and the Option's budget)"),
    EPSILON,
    FunctionMetafeature("n_examples", True, _n_examples, COUNT_SENSITIVITY, release=COUNTS_RELEASE),
    FunctionMetafeature("positive_fraction", True, _positive_fraction, COUNT_SENSITIVITY, release=COUNTS_RELEASE),
    FunctionMetafeature("log_naive_signal", False, _log_naive_signal, "post-processing of n_examples",
                        ("n_examples",)),
    FunctionMetafeature("log_relevance_signal", False, _log_relevance_signal, "post-processing of n_examples",
                        ("n_examples",)),
]}

DEFAULT_METAFEATURES: tuple[str, ...] = (
    "bottom_size", "log_lattice_size", "log_naive_std", "log_relevance_std", "epsilon", "n_examples",
    "positive_fraction", "log_naive_signal", "log_relevance_signal")
