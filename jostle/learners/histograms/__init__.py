"""Differentially private histogram algorithms for range queries (the DPBench family).

Pure NumPy; every algorithm has the signature
    run(x, epsilon, workload, noise, ledger=None, **params) -> estimate of x's shape
and draws all randomness through `noise` (the interface of `jostle.privacy.noise.Randomness`).
Modules, one job each:
  measure        ledgered Laplace / exponential (Gumbel-max) mechanisms, budget splits
  workloads      compact range workloads and DPBench's scaled error
  data           sampling a scale from a shape, coarsening, synthetic shapes
  tree           region trees and exact least-squares inference on them
  basic          Identity, Uniform
  hierarchical   HB (1D/2D), QuadTree
  wavelet        Privelet
  mwem           MWEM
  ahp            AHP
  grids          UGrid, AGrid
  dawa_partition DAWA's private L1 partition, Hilbert order
  greedy_h       DAWA's GreedyH strategy
  dawa           DAWA
  registry       name -> algorithm, with supported dimensionality
"""

from jostle.learners.histograms.measure import HistogramBudgetError, PrivacyLedger
from jostle.learners.histograms.registry import ALGORITHMS, HistogramAlgorithm, algorithms_for, get_algorithm
from jostle.learners.histograms.workloads import (AllRanges1D, RangeWorkload, prefix_1d, random_ranges_1d,
                                         random_rectangles_2d, scaled_error)

__all__ = [
    "ALGORITHMS", "AllRanges1D", "HistogramAlgorithm", "HistogramBudgetError", "PrivacyLedger",
    "RangeWorkload", "algorithms_for", "get_algorithm", "prefix_1d", "random_ranges_1d",
    "random_rectangles_2d", "scaled_error",
]
