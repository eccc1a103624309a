"""MWEM (Hardt, Ligett, McSherry, NIPS 2012): multiplicative weights with the exponential
mechanism, over the workload's range queries.

Budget split (epsilon given):
  * total:       total_share * epsilon for a Laplace estimate of the number of records
                 (sensitivity 1). The paper assumes the total is public; here it is private,
                 so it is measured (DPBench's "no free side information").
  * each of T rounds: selection_share * rest / T for choosing a query and
                 (1 - selection_share) * rest / T for measuring it, rest = epsilon - total.
Privacy: round t picks the workload query with the largest |q(x) - q(A_t)| by the exponential
mechanism (exact on an exact source, see `measure.exponential_mechanism`); each score has
sensitivity 1 because a counting query changes by at most 1 when a record is added or removed, and A_t is a
function of earlier releases only. The chosen query is measured with Laplace(T / eps_meas)
noise (sensitivity 1). All 2T + 1 steps compose sequentially to epsilon; the multiplicative
weights updates are post-processing.
Inference: after each round, `update_passes` sweeps of the multiplicative weights rule
A <- A * exp(q * (m - q(A)) / (2 N)) over all measurements so far, renormalised to the noisy
total N (the "enhanced update" of Hardt et al.'s implementation). N is the noisy total floored
at 1, and the weights are carried between rounds as logarithms. A round's updates run on
linear weights (fast) while every step (m - q(A)) / (2 N) stays moderate and no weight nears
underflow; otherwise the round is redone on log-weights, so the rule cannot overflow however
small N or large m - q(A) is (all post-processing: the privacy argument is untouched).
"""

from __future__ import annotations

import math

import numpy as np

from jostle.learners.histograms.measure import (HistogramNoise, PrivacyLedger, check_inputs,
                                                exponential_mechanism_exact, laplace_mechanism, split_budget)
from jostle.learners.histograms.workloads import RangeWorkload
from jostle.privacy import safe_noise


def mwem_budget(epsilon: float, rounds: int = 10, total_share: float = 0.05,
                selection_share: float = 0.5) -> dict[str, float]:
    """MWEM's split: the total, then a selection and a measurement share per round."""
    rest = 1.0 - total_share
    shares = {"total": total_share}
    for t in range(rounds):
        shares[f"round {t} select"] = rest * selection_share / rounds
        shares[f"round {t} measure"] = rest * (1.0 - selection_share) / rounds
    return split_budget(epsilon, shares)


def run_mwem(x: np.ndarray, epsilon: float, workload: RangeWorkload, noise: HistogramNoise,
             ledger: PrivacyLedger | None = None, rounds: int = 10, total_share: float = 0.05,
             selection_share: float = 0.5, update_passes: int = 100) -> np.ndarray:
    """MWEM over the range queries of `workload` (1D or 2D)."""
    x, ledger = check_inputs(x, epsilon, ledger)
    if workload is None or len(workload) == 0:
        raise ValueError("MWEM needs a non-empty workload of candidate queries")
    rounds = max(1, min(rounds, len(workload)))
    budget = mwem_budget(epsilon, rounds, total_share, selection_share)
    total = laplace_mechanism(np.array([x.sum()]), 1.0, budget["total"], noise, ledger,
                              "MWEM: total count")[0]
    total = max(total, 1.0)  # post-processing: a positive mass for the weights
    log_weights = np.zeros(x.shape)  # A = N * softmax(log_weights): uniform to start
    estimate = np.full(x.shape, total / x.size)
    true_answers = workload.answer(x)
    chosen = np.zeros(len(workload), dtype=bool)
    measurements: list[tuple[tuple[slice, ...], float]] = []
    for t in range(rounds):
        # Score |q(x) - q(A)| has sensitivity 1 (A depends on earlier releases only), computed
        # EXACTLY: in doubles the last subtraction's rounding moved a score between neighbours
        # by 1 + 2^-53 and more (the replay fuzzer's finding, issue 22). q(x) is a sum of whole
        # counts (exact in doubles below 2^53), q(A) the double computed here, the same on
        # neighbours; their difference is held exactly, as a double-double.
        high, low = safe_noise.exact_differences(true_answers, workload.answer(estimate))
        # a query is measured at most once (a public choice)
        index = exponential_mechanism_exact(high, low, ~chosen, 1.0,
                                            budget[f"round {t} select"], noise, ledger,
                                            f"MWEM: round {t} selection")
        chosen[index] = True
        measured = laplace_mechanism(np.array([true_answers[index]]), 1.0,
                                     budget[f"round {t} measure"], noise, ledger,
                                     f"MWEM: round {t} measurement")[0]
        measurements.append((workload.region(index), measured))
        log_weights = _multiplicative_weights(log_weights, measurements, total, update_passes)
        weights = np.exp(log_weights)
        estimate = total * weights / weights.sum()
    return estimate


def _logsumexp(values: np.ndarray) -> float:
    """log(sum(exp(values))) without overflow (-inf for an all -inf input)."""
    top = float(values.max())
    if top == -np.inf:
        return -np.inf
    return top + math.log(float(np.exp(values - top).sum()))


_CANCELLATION = 1.0 - 2.0 ** -20  # a region with more of the mass: recompute log Z in full
_LARGEST_LINEAR_STEP = 64.0  # |step| above this: the linear weights could overflow
_SMALLEST_LINEAR_RATIO = 2.0 ** -600  # a weight this far below the largest: redo in log domain

Measurements = list[tuple[tuple[slice, ...], float]]


def _multiplicative_weights(log_weights: np.ndarray, measurements: Measurements, total: float,
                            passes: int) -> np.ndarray:
    """`passes` sweeps of the multiplicative weights rule (see `_log_domain_weights`) from the
    log-weights `log_weights`; returns log-weights normalised to log Z = 0. Linear weights when
    that is safe, else the log domain (same result up to rounding)."""
    linear = _linear_weights(log_weights, measurements, total, passes)
    return linear if linear is not None else _log_domain_weights(log_weights, measurements, total, passes)


def _linear_weights(log_weights: np.ndarray, measurements: Measurements, total: float,
                    passes: int) -> np.ndarray | None:
    """The rule on linear weights W with A = N W / sum(W), or None when it is not safe.

    sum(W) is kept as a running sum (an update costs the size of its region), recomputed at
    every pass, and W is rescaled whenever that sum leaves [2^-300, 2^300], so no weight
    overflows. Safe: every step within +-64 (no factor over- or underflows) and, at the end,
    every weight within 2^-600 of the largest (no weight has lost its precision to underflow).
    """
    weights = np.exp(log_weights - float(log_weights.max()))
    for _ in range(passes):
        weights_sum = float(weights.sum())
        for region, value in measurements:
            block = weights[region]
            block_sum = float(block.sum())
            step = (value - total * block_sum / weights_sum) / (2.0 * total)
            if abs(step) > _LARGEST_LINEAR_STEP:
                return None
            factor = math.exp(step)
            block *= factor
            weights_sum += block_sum * (factor - 1.0)
            if not 2.0 ** -300 < weights_sum < 2.0 ** 300:
                weights /= weights_sum
                weights_sum = float(weights.sum())
    largest = float(weights.max())
    if not float(weights.min()) >= largest * _SMALLEST_LINEAR_RATIO:
        return None
    return np.log(weights) - math.log(float(weights.sum()))


def _log_domain_weights(log_weights: np.ndarray, measurements: Measurements, total: float,
                        passes: int) -> np.ndarray:
    """`passes` sweeps of A <- A * exp(q (m - q(A)) / (2 N)) over the measurements, each
    followed by renormalisation to total N, on log-weights w with A = N exp(w - log Z),
    Z = sum exp(w). Returns w normalised so that Z = 1.

    An update adds (m - q(A)) / (2 N) to w on q's region and updates log Z from the region's
    log-mass M: log Z' = log(Z - M + M e^step), so it costs the size of the region. Z - M is
    formed as Z (1 - M/Z), which loses at most a relative 2^-32 while M/Z <= 1 - 2^-20; a region
    holding more than that has log Z recomputed over the domain, and every pass starts from
    w normalised to log Z = 0, so rounding cannot accumulate.
    """
    log_weights = log_weights.copy()
    for _ in range(passes):
        log_weights -= _logsumexp(log_weights)  # log Z = 0: keeps the magnitudes (and rounding) small
        log_z = 0.0
        for region, value in measurements:
            block = log_weights[region]
            log_mass = _logsumexp(block)
            share = min(math.exp(log_mass - log_z), 1.0) if log_mass > -np.inf else 0.0  # q(A) / N
            step = (value - total * share) / (2.0 * total)
            block += step
            if share > _CANCELLATION:
                log_z = _logsumexp(log_weights)
            else:
                log_z = float(np.logaddexp(log_z + math.log1p(-share), log_mass + step))
    return log_weights - _logsumexp(log_weights)
