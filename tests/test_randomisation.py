"""Local randomisation operators and the breach analysis, against the lecture's worked example
(issue 26: domain 0..1000, p(x = 0) = 0.01, every other value 0.00099, y = 0 observed)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from jostle.privacy.randomisation import (additive_uniform, amplification, breach_threshold, cyclic_uniform,
                                          has_breach, keep_or_uniform, local_epsilon, mixture, posterior,
                                          randomized_response)

SIZE = 1001
PRIOR = [Fraction(1, 100)] + [Fraction(99, 100000)] * 1000
Q1 = [0]
Q2 = [x for x in range(SIZE) if x < 200 or x > 800]
R1 = keep_or_uniform(SIZE, "0.2")
R2 = cyclic_uniform(SIZE, 100)
R3 = mixture([("1/2", R2), ("1/2", keep_or_uniform(SIZE, 0))])


def test_the_prior_of_q2_is_the_lectures():
    assert sum(PRIOR) == 1 and sum(PRIOR[x] for x in Q2) == Fraction("0.40501")


@pytest.mark.parametrize("operator, q1, q2", [
    (R1, Fraction(335, 467), Fraction(96917, 116750)),
    (R2, Fraction(5, 104), Fraction(1)),
    (R3, Fraction(3005, 102302), Fraction(28961501, 40920800)),
])
def test_posteriors_of_the_worked_example(operator, q1, q2):
    assert posterior(operator, PRIOR, Q1, 0) == q1
    assert posterior(operator, PRIOR, Q2, 0) == q2


def test_amplification_factors_and_the_breach_threshold():
    assert amplification(R1) == Fraction("251.25")
    assert amplification(R2) == math.inf
    gamma = amplification(R3)
    assert gamma == Fraction(1202, 201) and local_epsilon(gamma) == pytest.approx(1.7884, abs=1e-4)
    assert not has_breach(gamma, "0.14", "0.5") and has_breach(gamma, "0.15", "0.5")
    assert breach_threshold(gamma, "1/2") == 1 / (1 + gamma)
    assert float(breach_threshold(gamma, "1/2")) == pytest.approx(0.143264, abs=1e-6)
    assert has_breach(amplification(R2), "0.01", "0.99")


def test_the_age_example_without_wrap_around():
    ages = additive_uniform(91, 20)
    prior = [Fraction(1, 91)] * 91
    assert posterior(ages, prior, [90], 110) == 1
    assert amplification(ages) == math.inf


def test_randomized_response_is_locally_epsilon_dp():
    operator = randomized_response(4, 1.0)
    assert local_epsilon(amplification(operator)) == pytest.approx(1.0, abs=1e-12)
    assert sum(operator.probability(2, y) for y in operator.outputs) == 1


def test_every_operator_is_a_probability_law():
    for operator in (R1, R2, R3, additive_uniform(11, 3), randomized_response(3, 0.5)):
        for x in (0, operator.size // 2, operator.size - 1):
            assert sum(operator.probability(x, y) for y in operator.outputs) == 1, operator.name


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError):
        keep_or_uniform(10, "1.5")
    with pytest.raises(ValueError):
        cyclic_uniform(10, 5)
    with pytest.raises(ValueError):
        mixture([("1/2", R1)])
    with pytest.raises(ValueError):
        has_breach(Fraction(2), "0.6", "0.5")
    with pytest.raises(ValueError, match="probability 0"):
        posterior(cyclic_uniform(SIZE, 1), [Fraction(1)] + [Fraction(0)] * 1000, Q1, 500)
