"""DPILPClassifier, the estimator-like API of DP ILP: fit(database, target), predict, score,
to_text; the whole epsilon charged to the shared budget before anything is drawn."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest
from sklearn.base import clone

from jostle.estimators import BudgetExceededError, DPILPClassifier, PrivacyBudget
from jostle.learners.ilp import declare, trains
from jostle.learners.ilp.modes import ModeError
from jostle.learners.ilp.tables import TableError
from jostle.privacy.shared_budget import PrivacyBudgetWarning, default_budget

FAKE = "has_car(T, C), short(C), closed(C), long(C)"


@pytest.fixture(scope="module")
def data() -> tuple[trains.RelationalDatabase, trains.RelationalDatabase]:
    return trains.generate_trains(3000, seed=1), trains.generate_trains(1000, seed=2)


def test_fit_on_a_database_learns_the_target_and_charges_its_epsilon_once(data) -> None:
    train, test = data
    budget = PrivacyBudget(3.0)
    learner = DPILPClassifier(1.5, fake=FAKE, budget=budget, random_state=4).fit(train, "eastbound")
    assert learner.to_text() == "eastbound(T) :- has_car(T, C), short(C), closed(C)."
    assert learner.score(test) == 1.0
    assert learner.predict(test).dtype == bool and len(learner.predict(test)) == 1000
    assert [charge.epsilon for charge in budget.charges] == [Fraction(3, 2)]
    assert learner.epsilon_spent_ == Fraction(3, 2)


def test_the_shared_budget_refuses_an_over_budget_fit_with_nothing_drawn(data, monkeypatch) -> None:
    train, _ = data
    budget = PrivacyBudget(1.0)
    learner = DPILPClassifier(0.75, fake=FAKE, budget=budget, random_state=1).fit(train, "eastbound")
    drawn = []
    from jostle.learners.ilp import private

    original = private.release_counts
    monkeypatch.setattr(private, "release_counts", lambda *a, **k: drawn.append(1) or original(*a, **k))
    DPILPClassifier(0.25, fake=FAKE, budget=PrivacyBudget(1.0), random_state=1).fit(train, "eastbound")
    assert drawn, "the spy sees the learner's draws"
    drawn.clear()
    copy = clone(learner)  # clones share the budget
    with pytest.raises(BudgetExceededError):
        copy.fit(train, "eastbound")
    assert not hasattr(copy, "learned_") and drawn == []
    assert budget.spent.epsilon == Fraction(3, 4)


def test_fit_on_tables_with_public_declarations(data) -> None:
    train, test = data
    examples, cars = declare.trains_frames(train)
    test_examples, test_cars = declare.trains_frames(test)
    learner = DPILPClassifier(1.0, key="train_id", domains=declare.train_domains(),
                              facts={"cars": declare.TRAIN_CARS}, background=[declare.TRAIN_ROOFS], example="train",
                              head="eastbound", modes=["has_car(+train, -car)", "short(+car)", "closed(+car)",
                                                       "long(+car)"], budget=PrivacyBudget(1.0), random_state=3)
    learner.fit({"trains": examples, "cars": cars}, "eastbound")
    assert learner.to_text() == "eastbound(T) :- has_car(T, C), short(C), closed(C)."
    assert learner.score({"trains": test_examples, "cars": test_cars}) == 1.0


@pytest.mark.parametrize("settings, error", [
    ({"epsilon": 0}, ValueError),
    ({"method": "greedy"}, TableError),
    ({"modes": ["polygon(+car)"]}, ModeError),
    ({"fake": "has_car(T, C), wheels(C, 3), short(C)", "k": 2}, ModeError),
    ({"budget": 3.0}, TypeError),
])
def test_bad_parameters_are_refused_before_any_charge(data, settings, error) -> None:
    train, _ = data
    budget = PrivacyBudget(5.0)
    arguments = {"epsilon": 1.0, "fake": FAKE, "budget": budget, **settings}
    with pytest.raises(error):
        DPILPClassifier(**arguments).fit(train, "eastbound")
    assert budget.charges == []


def test_tables_without_the_key_are_refused_before_any_charge(data) -> None:
    train, _ = data
    examples, cars = declare.trains_frames(train)
    budget = PrivacyBudget(5.0)
    learner = DPILPClassifier(1.0, key="train_id", domains=declare.train_domains(),
                              facts={"cars": declare.TRAIN_CARS}, budget=budget)
    with pytest.raises(TableError, match="keyed by the example id"):
        learner.fit({"trains": examples, "cars": cars.drop(columns="train_id")}, "eastbound")
    assert budget.charges == []


def test_the_trivial_theories_and_the_default_budget(data) -> None:
    train, test = data
    everything = DPILPClassifier(1.0, method="all_positive", budget=PrivacyBudget(1.0)).fit(train, "eastbound")
    assert everything.to_text() == "eastbound(T)." and everything.epsilon_spent_ == 0
    assert everything.predict(test).all()
    before = len(default_budget().charges)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyBudgetWarning)
        majority = DPILPClassifier(0.5, method="majority", random_state=0).fit(train, "eastbound")
    assert len(default_budget().charges) == before + 1 and default_budget().charges[-1].epsilon == Fraction(1, 2)
    balance = np.mean(test.examples.labels)
    assert majority.score(test) == pytest.approx(max(balance, 1 - balance))
