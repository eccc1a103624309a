"""The SuLQ classifiers' scikit-learn estimators: declared domains, the fit's rho charged to a zCDP
budget before any draw, refusals leaving the estimator as it was."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from jostle.estimators import (BudgetExceededError, PrivacyBudget, SuLQID3Classifier,
                               SuLQPerceptronClassifier)
from jostle.learners.sulq_classifiers import id3
from jostle.privacy.measures import RhoZCDPBudget
from jostle.privacy.noise import SimulationNoise

DOMAINS = [["a", "b", "c"], ["p", "q"], ["u", "v", "w", "z"]]
CLASSES = ["no", "yes"]


def _data(rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.choice(domain, rows) for domain in DOMAINS]).astype(object)
    y = np.where((X[:, 0] == "a") | (X[:, 2] == "z"), "yes", "no").astype(object)
    flip = rng.random(rows) < 0.05
    y[flip] = np.where(y[flip] == "yes", "no", "yes")
    return X, y


@pytest.mark.parametrize("cls", [SuLQID3Classifier, SuLQPerceptronClassifier])
def test_an_estimator_learns_and_charges_its_rho_to_a_zcdp_budget(cls):
    X, y = _data(8_000, 1)
    test_X, test_y = _data(2_000, 2)
    budget = PrivacyBudget(rho=1.0)
    model = cls(0.25, domains=DOMAINS, classes=CLASSES, budget=budget, random_state=3).fit(X, y)
    assert model.score(test_X, test_y) > 0.85  # chance about 0.6
    assert budget.spent == RhoZCDPBudget(Fraction(1, 4)) and Fraction(model.rho_spent_) <= Fraction(1, 4)
    assert model.queries_ == model.model_.queries and "SuLQ" in model.to_text()
    clone(model).fit(X, y)  # a clone shares the budget
    assert budget.spent == RhoZCDPBudget(Fraction(1, 2))


def test_a_refused_fit_draws_nothing_and_leaves_the_estimator_unfitted():
    X, y = _data(500, 1)
    draws: list = []

    class Noise(SimulationNoise):
        def discrete_gaussian(self, *args, **kwargs):
            draws.append(args)
            return super().discrete_gaussian(*args, **kwargs)

    for budget in (PrivacyBudget(rho=0.1), PrivacyBudget(1.0)):  # too small; and a pure epsilon holds no rho
        model = SuLQID3Classifier(0.5, domains=DOMAINS, classes=CLASSES, budget=budget, noise=Noise(0))
        with pytest.raises(BudgetExceededError, match="Nothing was drawn"):
            model.fit(X, y)
        with pytest.raises(NotFittedError):
            model.predict(X)
    assert draws == []


def test_a_variance_too_small_for_rho_is_refused_before_the_charge():
    X, y = _data(500, 1)
    budget = PrivacyBudget(rho=1.0)
    with pytest.raises(BudgetExceededError, match="nothing was charged or drawn"):
        SuLQPerceptronClassifier(0.01, variance=10, domains=DOMAINS, classes=CLASSES, budget=budget).fit(X, y)
    assert budget.spent == RhoZCDPBudget(Fraction(0))
    model = SuLQID3Classifier(None, variance=5_000, domains=DOMAINS, classes=CLASSES, budget=budget).fit(X, y)
    assert model.variance_ == 5_000 and float(budget.spent.rho) == pytest.approx(model.rho_spent_)
    assert model.queries_ == id3.query_count([3, 2, 4], 2)


def test_an_outside_accountant_is_charged_each_batch_before_its_draw():
    X, y = _data(500, 1)
    events: list = []

    class Noise(SimulationNoise):
        def discrete_gaussian(self, sigma2, size, t=None):
            events.append(("draw", size))
            return super().discrete_gaussian(sigma2, size, t)

    model = SuLQPerceptronClassifier(0.5, iterations=3, domains=DOMAINS, classes=CLASSES, noise=Noise(0),
                                     charge=lambda amount, what: events.append(("charge", amount)))
    model.fit(X, y)
    assert [e[0] for e in events] == ["charge", "draw"] * 3
    assert sum(e[1].rho for e in events if e[0] == "charge") <= Fraction(1, 2)
    with pytest.raises(ValueError, match="rho must be"):
        SuLQPerceptronClassifier(0, domains=DOMAINS, classes=CLASSES).fit(X, y)
