"""The partition step of DAWA as Li et al. (PVLDB 2014) and their reference implementation
calibrate it, for the privacy audit's negative control (issue 11, hole 8).

Each candidate bucket of length >= 2 gets Laplace(2 / eps1) noise on dev(b) + 1/eps2 (the
monotone report-noisy-min scale), single cells get none, and every noisy cost is clipped below
at 1/eps2. jostle.learners.histograms.dawa_partition explains why this is not eps1-DP; the audit in
tests/privacy/learner_cases.py catches it on the pair x = [25]*7 + [10] + [0]*7 against one
more record in cell 7. Exact noise source as in the real code (grid plan of sensitivity 2).
Test-only code: never used for a release.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from fractions import Fraction
from typing import Iterator
from unittest import mock

import numpy as np

from jostle.privacy import grid_release, safe_noise
from jostle.learners.histograms import dawa
from jostle.learners.histograms.dawa_partition import _cheapest_partition, candidate_deviations


def reference_l1_partition(x: np.ndarray, eps1: float, eps2: float, noise, ledger,
                           offset_divisor: int | None = None,
                           penalty_scales: float | None = None) -> np.ndarray:
    """The published calibration (not eps1-DP): Lap(2/eps1) on buckets of length >= 2, none
    on single cells, costs clipped at 1/eps2; exact integer DP as in the fixed code. The
    reference has no bucket penalty: `penalty_scales` (passed by `dawa`) is ignored."""
    x = np.asarray(x, dtype=float).ravel()
    n = x.size
    plan = safe_noise.score_plan(2.0, eps1)
    ledger.charge("DAWA: reference partition", "noisy-min partition", eps1, 2.0)
    floor = math.ceil(Fraction(1.0 / eps2) / plan.grid)
    costs = [(1, 1, [floor] * n)]
    for length, stride, devs in candidate_deviations(x, offset_divisor):
        units = grid_release.add(grid_release.snap(devs, plan.grid),
                                 noise.discrete_laplace(plan.scale, devs.size))
        costs.append((length, stride, [max(int(u) + floor, floor) for u in units.tolist()]))
    return _cheapest_partition(n, costs)


@contextmanager
def reference_partition() -> Iterator[None]:
    """Run DAWA with the reference's partition calibration inside this block."""
    with mock.patch.object(dawa, "l1_partition", reference_l1_partition):
        yield
