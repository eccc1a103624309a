"""Iterative Bayesian reconstruction (issue 26): under the lecture's R3 it recovers the mass of
Q2 (x outside 200..800) well and P(x = 0) badly; under R1 (keep 20%) it recovers the point too.

Public generated data from the lecture's prior (p(0) = 0.01, others 0.00099), fixed seeds.
Tolerances come from the sampling distribution of the truth: a sample proportion q of n rows has
standard error se(q) = sqrt(q (1 - q) / n). "Well" is an error within 4 se of Q2 (plus the
estimator's own noise: the randomisation halves the signal, so we allow 4 se(Q2) x 2);
"badly" is an error above 5 se of P(x = 0), i.e. far beyond what sampling explains.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from jostle.privacy.noise import Randomness
from jostle.privacy.randomisation import cyclic_uniform, keep_or_uniform, mixture, sample
from jostle.privacy.reconstruction import output_counts, reconstruct, reconstruct_counts

SIZE = 1001
N = 50_000
PRIOR = np.full(SIZE, 0.00099)
PRIOR[0] = 0.01
VALUES = np.arange(SIZE)
Q2 = (VALUES < 200) | (VALUES > 800)
R3 = mixture([("1/2", cyclic_uniform(SIZE, 100)), ("1/2", keep_or_uniform(SIZE, 0))])
R1 = keep_or_uniform(SIZE, "1/5")


def _se(q: float, n: int) -> float:
    return math.sqrt(q * (1 - q) / n)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_r3_recovers_q2_well_and_the_point_badly(seed):
    x = np.random.default_rng(seed).choice(SIZE, size=N, p=PRIOR)
    estimate = reconstruct(R3, sample(Randomness(100 + seed), R3, x))
    true_q2, true_q1 = Q2[x].mean(), np.mean(x == 0)
    assert abs(estimate.mass(Q2.nonzero()[0]) - true_q2) < 2 * 4 * _se(0.405, N)
    assert abs(estimate.mass([0]) - true_q1) > 5 * _se(0.01, N)
    assert estimate.mass([0]) < true_q1 / 2  # the spike is smeared over +-100


@pytest.mark.parametrize("seed", [0, 1])
def test_r1_recovers_the_point(seed):
    x = np.random.default_rng(seed).choice(SIZE, size=N, p=PRIOR)
    estimate = reconstruct(R1, sample(Randomness(200 + seed), R1, x))
    # R1 keeps 20%: the point's signal is 1/5 as strong, so its standard error is about 5 times as large
    assert abs(estimate.mass([0]) - np.mean(x == 0)) < 4 * 5 * _se(0.01, N)


def test_the_estimate_is_a_distribution_and_the_stopping_rule_is_public():
    counts = np.full(SIZE, 3.0)
    first = reconstruct_counts(R1, counts)
    again = reconstruct_counts(R1, counts)
    assert np.array_equal(first.probabilities, again.probabilities)  # a function of the counts only
    assert first.probabilities.sum() == pytest.approx(1) and (first.probabilities >= 0).all()
    assert first.converged and first.rows == 3 * SIZE
    assert first.series().index[0] == 0 and len(first.series()) == SIZE


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="at least one"):
        reconstruct_counts(R1, np.zeros(SIZE))
    with pytest.raises(ValueError, match="outside"):
        output_counts(R1, [0, SIZE])
    with pytest.raises(ValueError, match="one per output"):
        reconstruct_counts(R1, np.ones(3))
