"""The catalogue of histogram algorithms, for the ChoiceMaker and the language to enumerate.

Each entry names an algorithm, the dimensionalities it supports, whether it needs the
workload, its reference, and two functions with the shared signatures
    run(x, epsilon, workload, noise, ledger=None, **params) -> estimate (same shape as x)
    budget(epsilon, shape, **params) -> {part: epsilon} (parts sum to at most epsilon)
`run` charges every noisy measurement to a `PrivacyLedger` capped at epsilon before drawing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from jostle.learners.histograms import ahp, basic, dawa, grids, hierarchical, mwem, wavelet
from jostle.learners.histograms.measure import HistogramNoise, PrivacyLedger
from jostle.learners.histograms.workloads import RangeWorkload


@dataclass(frozen=True)
class HistogramAlgorithm:
    """One histogram algorithm and what it supports."""

    name: str
    dims: frozenset[int]
    needs_workload: bool
    reference: str
    run: Callable[..., np.ndarray]
    budget: Callable[..., dict[str, float]]

    def supports(self, x: np.ndarray) -> bool:
        return np.ndim(x) in self.dims

    def __call__(self, x: np.ndarray, epsilon: float, workload: RangeWorkload | None,
                 noise: HistogramNoise, ledger: PrivacyLedger | None = None, **params) -> np.ndarray:
        if not self.supports(x):
            raise ValueError(f"{self.name} supports {sorted(self.dims)}D histograms, "
                             f"not {np.ndim(x)}D")
        if self.needs_workload and workload is None:
            raise ValueError(f"{self.name} needs the range-query workload")
        return self.run(x, epsilon, workload, noise, ledger, **params)


_BOTH, _ONLY_2D = frozenset({1, 2}), frozenset({2})

ALGORITHMS: dict[str, HistogramAlgorithm] = {a.name: a for a in [
    HistogramAlgorithm("Identity", _BOTH, False, "Dwork, McSherry, Nissim, Smith, TCC 2006",
                       basic.run_identity, lambda eps, shape, **_: basic.identity_budget(eps)),
    HistogramAlgorithm("Uniform", _BOTH, False, "DPBench baseline (Hay et al., SIGMOD 2016)",
                       basic.run_uniform, lambda eps, shape, **_: basic.uniform_budget(eps)),
    HistogramAlgorithm("HB", _BOTH, False, "Qardaji, Yang, Li, PVLDB 2013",
                       hierarchical.run_hb,
                       lambda eps, shape, branching=None, **_: hierarchical.hb_budget(eps, shape, branching)),
    HistogramAlgorithm("Privelet", _BOTH, False, "Xiao, Wang, Gehrke, ICDE 2010",
                       wavelet.run_privelet, lambda eps, shape, **_: wavelet.privelet_budget(eps)),
    HistogramAlgorithm("MWEM", _BOTH, True, "Hardt, Ligett, McSherry, NIPS 2012",
                       mwem.run_mwem,
                       lambda eps, shape, rounds=10, total_share=0.05, selection_share=0.5, **_:
                       mwem.mwem_budget(eps, rounds, total_share, selection_share)),
    HistogramAlgorithm("DAWA", _BOTH, True, "Li, Hay, Miklau, Wang, PVLDB 2014",
                       dawa.run_dawa, lambda eps, shape, ratio=0.25, **_: dawa.dawa_budget(eps, ratio)),
    HistogramAlgorithm("DAWA10", _BOTH, True, "DAWA with 10% of epsilon on the partition (issue 27)",
                       dawa.run_dawa10,
                       lambda eps, shape, **_: dawa.dawa_budget(eps, dawa.PARTITION_SHARES["DAWA10"])),
    HistogramAlgorithm("AHP", _BOTH, False, "Zhang, Chen, Xu, Meng, Xie, SDM 2014",
                       ahp.run_ahp, lambda eps, shape, ratio=0.85, **_: ahp.ahp_budget(eps, ratio)),
    HistogramAlgorithm("QuadTree", _ONLY_2D, False, "Cormode et al., ICDE 2012",
                       hierarchical.run_quadtree,
                       lambda eps, shape, max_depth=None, **_: hierarchical.quadtree_budget(eps, shape, max_depth)),
    HistogramAlgorithm("UGrid", _ONLY_2D, False, "Qardaji, Yang, Li, ICDE 2013",
                       grids.run_ugrid,
                       lambda eps, shape, total_share=0.05, **_: grids.ugrid_budget(eps, total_share)),
    HistogramAlgorithm("AGrid", _ONLY_2D, False, "Qardaji, Yang, Li, ICDE 2013",
                       grids.run_agrid,
                       lambda eps, shape, alpha=0.5, total_share=0.05, **_:
                       grids.agrid_budget(eps, alpha, total_share)),
]}


def algorithms_for(ndim: int) -> list[HistogramAlgorithm]:
    """The algorithms that accept ndim-dimensional histograms, in catalogue order."""
    return [a for a in ALGORITHMS.values() if ndim in a.dims]


def get_algorithm(name: str) -> HistogramAlgorithm:
    """Look an algorithm up by name (case-insensitive)."""
    for key, algorithm in ALGORITHMS.items():
        if key.lower() == name.lower():
            return algorithm
    raise KeyError(f"unknown histogram algorithm {name!r}; known: {', '.join(ALGORITHMS)}")
