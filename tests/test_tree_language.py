"""Decision trees in the language: options on tables, trained trees as public values."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.errors import BudgetExceeded, JostleRuntimeError, PrivacyError

SCHEMA = {
    "a": {"type": "categorical", "values": ["x", "y", "z"]},
    "b": {"type": "categorical", "values": ["p", "q"]},
    "label": {"type": "categorical", "values": ["yes", "no"]},
    "n": {"type": "numeric", "bounds": [0, 10]},
}


def _frame(rows: int = 3000, seed: int = 5) -> pd.DataFrame:
    """The label is "yes" exactly when a == "x": one split recovers it."""
    rng = np.random.default_rng(seed)
    a = rng.choice(["x", "y", "z"], rows)
    return pd.DataFrame({"a": a, "b": rng.choice(["p", "q"], rows),
                         "label": np.where(a == "x", "yes", "no"), "n": rng.integers(0, 11, rows)})


def _session(budget: float = 5.0, seed: int = 11) -> Session:
    session = Session(budget=budget, seed=seed)
    frame = _frame()
    session.bind_private("t", frame, SCHEMA)
    session.bind_public("test", _frame(500, seed=99), SCHEMA)
    session.run('cats = select(t, ["a", "b", "label"])\npub = select(test, ["a", "b", "label"])\n')
    return session


@pytest.mark.parametrize("learner", ["FriedmanSchuster", "Mohammed", "PatilSingh"])
def test_a_private_tree_learns_a_clear_split_at_a_generous_budget(learner):
    session = _session()
    session.run(f'm = {learner}(cats, "label", epsilon=2)\nacc = accuracy(m, pub, "label")\n')
    # The label is a function of one attribute; at epsilon 2 with 3000 rows the noisy counts
    # of the split are off by a few rows at most, so the tree is (almost) always right.
    assert session.eval("acc") >= 0.95
    assert [c.mechanism for c in session.ledger] == [f"option {learner}"]
    assert session.ledger[0].budget.epsilon == Fraction(2)


def test_the_tree_is_charged_before_it_is_trained_and_refused_when_over_budget():
    session = _session(budget=1.0)
    with pytest.raises(BudgetExceeded):
        session.run('m = FriedmanSchuster(cats, "label", epsilon=2)\n')
    assert len(session.ledger) == 0


def test_numeric_attributes_must_be_binned_first():
    session = _session()
    with pytest.raises(JostleRuntimeError) as caught:
        session.run('m = Mohammed(t, "label", epsilon=1)\n')
    assert "numeric" in caught.value.message and "bin" in (caught.value.hint or "")
    assert len(session.ledger) == 0


def test_predicting_on_a_private_table_is_refused():
    session = _session()
    session.run('m = Mohammed(cats, "label", epsilon=1)\n')
    with pytest.raises(PrivacyError):
        session.run("p = predict(m, cats)\n")


def test_c45_refuses_private_tables_and_learns_public_ones_exactly():
    session = _session()
    with pytest.raises(PrivacyError):
        session.run('m = C45(cats, "label")\n')
    session.run('m = C45(pub, "label")\nacc = accuracy(m, pub, "label")\n')
    assert session.eval("acc") == 1.0
    assert len(session.ledger) == 0


def test_a_tree_prints_readably():
    session = _session()
    session.run('m = FriedmanSchuster(cats, "label", epsilon=2)\ntext = str(m)\n')
    text = session.eval("text")
    assert text.startswith("FriedmanSchuster tree for 'label' (epsilon 2)")
    assert "a = x" in text
