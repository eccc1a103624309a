"""The SuLQ classifiers in the language: zCDP programs only, one charge before the learner draws,
the lecture's calibration (`variance=`) checked against the budget before anything happens."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.diagnostics.errors import BudgetExceeded, JostleRuntimeError, MeasureMismatch
from jostle.learners.sulq_classifiers import id3, perceptron
from jostle.privacy.measures import RhoZCDPBudget
from jostle.privacy.sulq import sulq_plan

SCHEMA = {
    "a": {"type": "categorical", "values": ["x", "y", "z"]},
    "b": {"type": "categorical", "values": ["p", "q"]},
    "label": {"type": "categorical", "values": ["yes", "no"]},
}


def _frame(rows: int, seed: int) -> pd.DataFrame:
    """The label is "yes" exactly when a == "x" (10% flipped)."""
    rng = np.random.default_rng(seed)
    a = rng.choice(["x", "y", "z"], rows)
    label = np.where(a == "x", "yes", "no")
    flip = rng.random(rows) < 0.1
    label[flip] = np.where(label[flip] == "yes", "no", "yes")
    return pd.DataFrame({"a": a, "b": rng.choice(["p", "q"], rows), "label": label})


def _session(rho: float | None = 1.0, budget: float | None = None) -> Session:
    session = Session(rho=rho, seed=3, ledger_path=":memory:") if rho else Session(budget=budget, seed=3)
    session.bind_private("t", _frame(5_000, 1), SCHEMA)
    session.bind_public("test", _frame(1_000, 2), SCHEMA)
    return session


@pytest.mark.parametrize("call", ['SuLQID3(t, "label", rho=0.05)', 'SuLQPerceptron(t, "label", rho=0.05)',
                                  'SuLQID3(t, "label", rho=0.05, depth=1, stop_factor=2)',
                                  'SuLQPerceptron(t, "label", rho=0.05, iterations=4)'])
def test_a_sulq_learner_learns_and_is_charged_its_rho_once(call):
    session = _session()
    session.run(f"m = {call}\nacc = accuracy(m, test, \"label\")\ntext = str(m)\n")
    assert session.eval("acc") > 0.85  # chance 0.6; the rule's accuracy 0.9
    assert [c.mechanism for c in session.ledger] == [f"option {call.split('(')[0]}"]
    assert session.ledger[0].budget == RhoZCDPBudget(Fraction(1, 20))
    assert "SuLQ queries" in session.eval("text")


def test_the_lecture_calibration_is_charged_what_its_batches_cost():
    session = _session()
    session.run('m = SuLQID3(t, "label", variance=20000, depth=1)\n')
    cost = sum(sulq_plan(20000, length).rho for length in id3.batches((3, 2), 2, 1))
    assert session.ledger[0].budget == RhoZCDPBudget(cost)
    assert session.eval("m").queries == id3.query_count((3, 2), 2, 1)


def test_a_variance_too_small_for_its_rho_is_refused_before_any_charge():
    session = _session()
    with pytest.raises(JostleRuntimeError, match="nothing was charged or drawn"):
        session.run('m = SuLQPerceptron(t, "label", variance=10, rho=0.01)\n')
    assert len(session.ledger) == 0


def test_a_variance_the_program_cannot_pay_is_refused_by_the_accountant_before_any_draw():
    session = _session(rho=0.001)
    cost = sum(sulq_plan(100, length).rho for length in perceptron.batches((3, 2), 2, 10))
    assert cost > Fraction(1, 1000)
    with pytest.raises(BudgetExceeded):
        session.run('m = SuLQPerceptron(t, "label", variance=100)\n')
    assert len(session.ledger) == 0


@pytest.mark.parametrize("call", ['SuLQID3(t, "label", epsilon=1)', 'SuLQPerceptron(t, "label", rho=0.1)',
                                  'SuLQID3(t, "label", variance=1000)'])
def test_pure_programs_and_epsilon_are_refused_with_nothing_spent(call):
    session = _session(rho=None, budget=5.0)
    with pytest.raises(MeasureMismatch):
        session.run(f"m = {call}\n")
    assert len(session.ledger) == 0


def test_epsilon_in_a_zcdp_program_is_refused_with_the_hint():
    session = _session()
    with pytest.raises(MeasureMismatch) as caught:
        session.run('m = SuLQID3(t, "label", epsilon=1)\n')
    assert "rho=" in str(caught.value) and len(session.ledger) == 0


def test_public_tables_and_bad_parameters_are_refused_before_any_charge():
    session = _session()
    with pytest.raises(JostleRuntimeError, match="private table"):
        session.run('m = SuLQID3(test, "label", rho=0.1)\n')
    with pytest.raises(JostleRuntimeError, match="iterations"):
        session.run('m = SuLQPerceptron(t, "label", rho=0.1, iterations=0)\n')
    with pytest.raises(JostleRuntimeError):
        session.run('m = SuLQID3(t, "label", rho=0.1, iterations=3)\n')
    assert len(session.ledger) == 0
