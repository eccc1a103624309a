"""DPRedescriptionMiner, the estimator-like API of DP redescription mining: fit(left, right) on two
frames under declared public domains, the whole epsilon charged to the shared budget before
anything is drawn, refusals before the charge, the released set as a frame and evaluated on
PUBLIC views."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from jostle.estimators import BudgetExceededError, DPRedescriptionMiner, NumericBins, PrivacyBudget
from jostle.learners.redescription import estimators
from jostle.learners.redescription.planted import planted_two_views


@pytest.fixture(scope="module")
def task():
    return planted_two_views(800, seed=2)


def _domains(task, view: int) -> dict:
    return {attribute.name: attribute for attribute in task.views.schemas[view].attributes}


def _miner(task, epsilon: float = 1.0, budget: PrivacyBudget | None = None, **settings) -> DPRedescriptionMiner:
    return DPRedescriptionMiner(settings.pop("algorithm", "AltExpM"), epsilon, key="id",
                                left_domains=_domains(task, 0), right_domains=_domains(task, 1),
                                budget=budget if budget is not None else PrivacyBudget(100.0), random_state=4,
                                **settings)


def test_fit_charges_its_epsilon_once_and_releases_a_set(task) -> None:
    budget = PrivacyBudget(3.0)
    miner = _miner(task, 1.5, budget, alternations=2).fit(task.left, task.right)
    assert [charge.epsilon for charge in budget.charges] == [Fraction(3, 2)]
    assert miner.epsilon_spent_ == Fraction(3, 2) and miner.redescriptions_.epsilon == Fraction(3, 2)
    frame = miner.to_frame(include_pruned=True)
    assert list(frame.columns) == ["left", "right", "support", "jaccard", "pvalue", "left_support",
                                   "right_support", "pruned", "origin"]
    assert len(miner.to_frame()) == (~frame["pruned"]).sum()
    text = miner.to_text()
    assert text.startswith("AltExpM(InTr=1, RMIter=2) at epsilon 1.5: ")
    assert all(f"{row.left}  <=>  {row.right}" in text for row in miner.to_frame().itertuples())
    assert len(miner.to_text(include_pruned=True)) >= len(text)


def test_the_steps_charged_add_to_exactly_the_fits_epsilon(task, monkeypatch) -> None:
    steps: list[Fraction] = []
    original = estimators.option_guard

    def spy(name, cap):
        guard = original(name, cap)
        return lambda cost, description: (steps.append(Fraction(cost)), guard(cost, description))[1]

    monkeypatch.setattr(estimators, "option_guard", spy)
    _miner(task, 0.75, algorithm="MCMCTreePair", tries=3).fit(task.left, task.right)
    assert len(steps) == 6 and sum(steps) == Fraction(3, 4)


def test_the_released_statistics_are_those_of_the_printed_queries_up_to_the_noise(task) -> None:
    miner = _miner(task, 50.0, tries=2, min_support=50).fit(task.left, task.right)
    evaluated = miner.evaluate(task.left, task.right)
    kept = evaluated[~evaluated["pruned"]]
    assert len(kept) and np.all(np.abs(kept["jaccard"] - kept["true_jaccard"]) < 0.05)
    assert np.all(np.abs(kept["support"] - kept["true_support"]) < 0.05 * kept["true_support"])


def test_the_same_seed_gives_the_same_set(task) -> None:
    first = _miner(task, 1.0, algorithm="AltMCMC").fit(task.left, task.right).to_frame(include_pruned=True)
    second = _miner(task, 1.0, algorithm="AltMCMC").fit(task.left, task.right).to_frame(include_pruned=True)
    pd.testing.assert_frame_equal(first, second)


def test_an_over_budget_fit_is_refused_with_nothing_drawn(task, monkeypatch) -> None:
    budget = PrivacyBudget(1.0)
    miner = _miner(task, 0.75, budget).fit(task.left, task.right)
    drawn = []
    original = estimators.mine
    monkeypatch.setattr(estimators, "mine", lambda *a, **k: drawn.append(1) or original(*a, **k))
    copy = clone(miner)  # clones share the budget
    with pytest.raises(BudgetExceededError):
        copy.fit(task.left, task.right)
    assert not hasattr(copy, "redescriptions_") and drawn == []
    assert budget.spent.epsilon == Fraction(3, 4)


@pytest.mark.parametrize("change, error, message", [
    ({"left_domains": None}, ValueError, "public domain"),
    ({"algorithm": "MCMC"}, ValueError, "algorithm must be one of"),
    ({"epsilon": 0}, ValueError, "epsilon"),
    ({"omega": 1.5}, ValueError, "omega"),
    ({"depth": 0}, ValueError, "depth"),
    ({"right_domains": {"R0a": 3}}, ValueError, "NumericBins"),
    ({"right_domains": {"nope": ["a"]}}, ValueError, "no column"),
    ({"initial_target": "nope"}, ValueError, "initial_target"),
    ({"budget": 3.0}, TypeError, "PrivacyBudget"),
])
def test_bad_parameters_are_refused_before_the_charge(task, change, error, message) -> None:
    budget = PrivacyBudget(10.0)
    miner = _miner(task, 1.0, budget).set_params(**change)
    with pytest.raises(error, match=message):
        miner.fit(task.left, task.right)
    assert budget.charges == [] and not hasattr(miner, "redescriptions_")


def test_a_repeated_key_is_refused_for_the_curator_before_the_charge(task) -> None:
    budget = PrivacyBudget(10.0)
    with pytest.raises(ValueError, match="repeats"):
        _miner(task, 1.0, budget).fit(pd.concat([task.left, task.left.iloc[:1]]), task.right)
    assert budget.charges == []


def test_views_without_a_key_are_matched_by_position() -> None:
    rng = np.random.default_rng(0)
    sex = rng.choice(["F", "M"], 600)
    age = np.where(sex == "F", rng.uniform(0, 40, 600), rng.uniform(40, 100, 600))
    left, right = pd.DataFrame({"sex": sex}), pd.DataFrame({"age": age})
    miner = DPRedescriptionMiner("AltExpM", 20.0, alternations=2, left_domains={"sex": ["F", "M"]},
                                 right_domains={"age": NumericBins(0, 100, 5)}, budget=PrivacyBudget(20.0),
                                 random_state=1).fit(left, right)
    best = miner.evaluate(left, right).sort_values("true_jaccard").iloc[-1]
    assert best["true_jaccard"] == 1.0  # "sex = F <=> age < 40" (or its negation) is exact here
    with pytest.raises(ValueError, match="same length"):
        miner.fit(left, right.iloc[:10])
