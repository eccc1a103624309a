"""The one-rule sampler (one rule drawn with its class and the default's, `search.labelled_rule_draw`),
the probabilities that respect the drawn classes (`rule_list.respect_classes`) and the greedy
walk without its stop (issue 27). Randomized checks use fixed seeds; tolerances are derived in
each test."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from jostle.learners.brl.bitsets import RowBits
from jostle.learners.brl.learner import BRLSettings, fit_private
from jostle.learners.brl.mining import public_antecedents
from jostle.learners.brl.rule_list import respect_classes
from jostle.learners.brl.search import labelled_rule_utilities
from jostle.privacy.noise import Randomness
from tests.test_brl_algorithms import planted

ONE_RULE = BRLSettings(antecedents="public", split=(0.0, 19.0, 1.0), score="majority", sampler="one_rule",
                       max_length=1, row_bound=4000)


def test_the_labelled_utilities_count_the_rows_each_labelled_list_classifies_correctly() -> None:
    """Every candidate's utility equals the rows "if a then r else d" (or "always d") gets
    right, counted directly; every antecedent comes with each ordered pair of distinct classes."""
    X, y, sizes = planted(300, seed=40)
    y = np.where(X[:, 3] == 2, 2, y)                      # three classes
    antecedents = public_antecedents(sizes, 1)
    bits = RowBits.of(X, y, sizes, 3)
    candidates, utilities = labelled_rule_utilities([bits.antecedent(a) for a in antecedents], bits.classes,
                                                    bits.everything)
    assert len(candidates) == 3 + len(antecedents) * 3 * 2
    for (index, rule_class, default_class), utility in zip(candidates, utilities):
        if index is None:
            assert rule_class == default_class and utility == np.sum(y == default_class)
            continue
        ((attribute, value),) = antecedents[index]
        predicted = np.where(X[:, attribute] == value, rule_class, default_class)
        assert rule_class != default_class and utility == np.sum(predicted == y)


def test_a_one_rule_fit_spends_its_epsilon_and_finds_the_rule_and_its_direction_at_a_tiny_budget() -> None:
    """At epsilon 0.02 on 3,000 rows the noisy capture counts (at 0.001, scale 1,000) cannot
    tell a rule's class, but the drawn class can: "if a0 = 1 then 1 else 0" classifies about
    2,420 rows correctly (a0 = 1 is 85% class 1, the rest about 21%), 541 more than any of the
    25 other candidates on this seeded table, so it leads each by 0.019 x 541 > 10 in the
    exponent and is drawn with probability above 0.99; the fitted
    P(class 1) is then higher under it. Charges sum to epsilon."""
    X, y, sizes = planted(3000, seed=41)
    right = 0
    for seed in range(20):
        result = fit_private(X, y, sizes, 2, Fraction(1, 50), ONE_RULE, Randomness(seed))
        total = sum(Fraction(e) for e, _ in result.charges)
        assert total <= Fraction(1, 50) and float(total) == pytest.approx(0.02, rel=1e-12)
        assert result.rule_list.length <= 1 and result.max_length == 1
        p = result.rule_list.predict_proba(X)[:, 1]
        right += result.rule_list.antecedents == (((0, 1),),) and p[X[:, 0] == 1].min() > p[X[:, 0] != 1].max()
    assert right >= 16   # P(success) > 0.9 per seed: 16 or more of 20 with probability > 0.95


def test_probabilities_respect_the_drawn_classes_by_the_margin_and_move_no_more_than_needed() -> None:
    moved = respect_classes(np.array([[0.7, 0.3], [0.45, 0.55]]), [1, 1])
    assert moved[0, 1] - moved[0, 0] == pytest.approx(0.02) and np.allclose(moved[1], [0.45, 0.55])
    three = respect_classes(np.array([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]]), [2, 2], margin=0.1)
    assert three[0, 2] - three[0, 1] == pytest.approx(0.1) and np.allclose(three[1], [0.1, 0.1, 0.8])
    assert np.allclose(three.sum(axis=1), 1.0) and (three >= 0).all()
    # a mixture with the favoured class's indicator, of the least weight that reaches the margin:
    # (1 - t) (0.3 - 0.5) + t = 0.1 gives t = 0.25
    assert np.allclose(three[0], 0.75 * np.array([0.2, 0.5, 0.3]) + 0.25 * np.array([0, 0, 1]))


def test_the_one_rule_sampler_needs_the_majority_score() -> None:
    with pytest.raises(ValueError, match="majority"):
        BRLSettings(sampler="one_rule").check()


def test_the_greedy_walk_without_its_stop_draws_max_length_rules() -> None:
    """With `greedy_stop` False every fit has max_length rules and charges max_length steps
    (a public function of the settings), even at a budget where the walk with its stop ends
    early on some seed."""
    X, y, sizes = planted(3000, seed=42)
    base = dict(antecedents="public", split=(0.0, 3.0, 1.0), score="majority", sampler="greedy", max_length=4,
                row_bound=4000)
    lengths = []
    for seed in range(8):
        fixed = fit_private(X, y, sizes, 2, Fraction(1, 5), BRLSettings(**base, greedy_stop=False),
                            Randomness(seed))
        assert fixed.rule_list.length == 4
        assert len([text for _, text in fixed.charges if "one rule" in text]) == 4
        assert float(sum(Fraction(e) for e, _ in fixed.charges)) == pytest.approx(0.2, rel=1e-12)
        lengths.append(fit_private(X, y, sizes, 2, Fraction(1, 5), BRLSettings(**base), Randomness(seed))
                       .rule_list.length)
    assert min(lengths) < 4
