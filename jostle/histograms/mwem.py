"""MWEM (Hardt, Ligett, McSherry, NIPS 2012): multiplicative weights with the exponential
mechanism, over the workload's range queries.

Budget split (epsilon given):
  * total:       total_share * epsilon for a Laplace estimate of the number of records
                 (sensitivity 1). The paper assumes the total is public; here it is private,
                 so it is measured (DPBench's "no free side information").
  * each of T rounds: selection_share * rest / T for choosing a query and
                 (1 - selection_share) * rest / T for measuring it, rest = epsilon - total.
Privacy: round t picks the workload query with the largest |q(x) - q(A_t)| by the exponential
mechanism (Gumbel-max, see `measure.exponential_mechanism`); each score has sensitivity 1
because a counting query changes by at most 1 when a record is added or removed, and A_t is a
function of earlier releases only. The chosen query is measured with Laplace(T / eps_meas)
noise (sensitivity 1). All 2T + 1 steps compose sequentially to epsilon; the multiplicative
weights updates are post-processing.
Inference: after each round, `update_passes` sweeps of the multiplicative weights rule
A <- A * exp(q * (m - q(A)) / (2 N)) over all measurements so far, renormalised to the noisy
total N (the "enhanced update" of Hardt et al.'s implementation).
"""

from __future__ import annotations

import numpy as np

from jostle.histograms.measure import (NoiseSource, PrivacyLedger, check_inputs,
                                       exponential_mechanism, laplace_mechanism, split_budget)
from jostle.histograms.workloads import RangeWorkload


def mwem_budget(epsilon: float, rounds: int = 10, total_share: float = 0.05,
                selection_share: float = 0.5) -> dict[str, float]:
    """MWEM's split: the total, then a selection and a measurement share per round."""
    rest = 1.0 - total_share
    shares = {"total": total_share}
    for t in range(rounds):
        shares[f"round {t} select"] = rest * selection_share / rounds
        shares[f"round {t} measure"] = rest * (1.0 - selection_share) / rounds
    return split_budget(epsilon, shares)


def run_mwem(x: np.ndarray, epsilon: float, workload: RangeWorkload, noise: NoiseSource,
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
    estimate = np.full(x.shape, total / x.size)
    true_answers = workload.answer(x)
    chosen = np.zeros(len(workload), dtype=bool)
    measurements: list[tuple[tuple[slice, ...], float]] = []
    for t in range(rounds):
        scores = np.abs(true_answers - workload.answer(estimate))
        scores[chosen] = -np.inf  # a query is measured at most once (public choice)
        # Score |q(x) - q(A)| has sensitivity 1 (A depends on earlier releases only).
        index = exponential_mechanism(scores, 1.0,
                                      budget[f"round {t} select"], noise, ledger,
                                      f"MWEM: round {t} selection")
        chosen[index] = True
        measured = laplace_mechanism(np.array([true_answers[index]]), 1.0,
                                     budget[f"round {t} measure"], noise, ledger,
                                     f"MWEM: round {t} measurement")[0]
        measurements.append((workload.region(index), measured))
        estimate = _multiplicative_weights(estimate, measurements, total, update_passes)
    return estimate


def _multiplicative_weights(estimate: np.ndarray, measurements: list[tuple[tuple[slice, ...], float]],
                            total: float, passes: int) -> np.ndarray:
    """`passes` sweeps of A <- A * exp(q (m - q(A)) / (2 N)) over the measurements, each
    followed by renormalisation to total N.

    The renormalisation is kept as a scale factor (A = scale * raw) with a running sum, so an
    update costs the size of its region rather than of the domain; the result is the same.
    """
    raw = estimate.copy()
    raw_sum = float(raw.sum())
    scale = total / raw_sum
    for _ in range(passes):
        for region, value in measurements:
            block = raw[region]
            block_sum = float(block.sum())
            factor = np.exp((value - scale * block_sum) / (2.0 * total))
            block *= factor
            raw_sum += block_sum * (factor - 1.0)
            scale = total / raw_sum
    return raw * scale
