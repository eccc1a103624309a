"""The two baselines of DPBench: Identity and Uniform.

Identity (Dwork et al. 2006): every cell count plus Laplace(1/epsilon). The cells are
disjoint, so the whole histogram has L1 sensitivity 1 and the release is epsilon-DP.
Each cell's error has variance 2/epsilon^2.

Uniform: the total count plus Laplace(1/epsilon) (sensitivity 1), spread evenly over the
cells. epsilon-DP; its error is almost all bias unless the data are uniform.
"""

from __future__ import annotations

import numpy as np

from jostle.learners.histograms.measure import HistogramNoise, PrivacyLedger, check_inputs, laplace_mechanism
from jostle.learners.histograms.workloads import RangeWorkload


def identity_budget(epsilon: float) -> dict[str, float]:
    """Budget split of Identity: everything on the cell counts."""
    return {"cells": epsilon}


def run_identity(x: np.ndarray, epsilon: float, workload: RangeWorkload | None,
                 noise: HistogramNoise, ledger: PrivacyLedger | None = None) -> np.ndarray:
    """Identity: Laplace(1/epsilon) on every cell (sensitivity 1: disjoint cells)."""
    x, ledger = check_inputs(x, epsilon, ledger)
    budget = identity_budget(epsilon)
    return laplace_mechanism(x, 1.0, budget["cells"], noise, ledger, "identity: cell counts")


def uniform_budget(epsilon: float) -> dict[str, float]:
    """Budget split of Uniform: everything on the total."""
    return {"total": epsilon}


def run_uniform(x: np.ndarray, epsilon: float, workload: RangeWorkload | None,
                noise: HistogramNoise, ledger: PrivacyLedger | None = None) -> np.ndarray:
    """Uniform: a noisy total (sensitivity 1) spread evenly over the domain."""
    x, ledger = check_inputs(x, epsilon, ledger)
    budget = uniform_budget(epsilon)
    total = laplace_mechanism(np.array([x.sum()]), 1.0, budget["total"], noise, ledger,
                              "uniform: total count")[0]
    return np.full(x.shape, total / x.size)
