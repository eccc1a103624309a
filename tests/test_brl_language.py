"""Bayesian rule lists in the language: BayesianRuleList on tables, rule lists as public values,
the family's Options in a ChoiceMaker."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.diagnostics.errors import BudgetExceeded, JostleRuntimeError, PrivacyError

SCHEMA = {
    "sex": {"type": "categorical", "values": ["f", "m"]},
    "cls": {"type": "categorical", "values": ["1", "2", "3"]},
    "port": {"type": "categorical", "values": ["c", "q", "s"]},
    "survived": {"type": "categorical", "values": ["no", "yes"]},
    "age": {"type": "numeric", "bounds": [0, 80]},
}


def _frame(rows: int = 3000, seed: int = 5) -> pd.DataFrame:
    """Survival is likely for sex f (0.8), else for cls 1 (0.5), else rare (0.1)."""
    rng = np.random.default_rng(seed)
    sex, cls = rng.choice(["f", "m"], rows), rng.choice(["1", "2", "3"], rows)
    p = np.where(sex == "f", 0.8, np.where(cls == "1", 0.5, 0.1))
    return pd.DataFrame({"sex": sex, "cls": cls, "port": rng.choice(["c", "q", "s"], rows),
                         "survived": np.where(rng.random(rows) < p, "yes", "no"), "age": rng.integers(0, 81, rows)})


def _session(budget: float = 5.0, seed: int = 11) -> Session:
    session = Session(budget=budget, seed=seed)
    session.bind_private("t", _frame(), SCHEMA)
    session.bind_public("test", _frame(600, seed=99), SCHEMA)
    session.run('cats = select(t, ["sex", "cls", "port", "survived"])\n'
                'pub = select(test, ["sex", "cls", "port", "survived"])\n')
    return session


def test_a_private_rule_list_prints_predicts_and_reports() -> None:
    session = _session()
    session.run('r = BayesianRuleList(cats, "survived", epsilon=2, max_rows=4000)\n'
                'p = predict_rule_list(r, pub)\nn = rule_list_length(r)\nk = average_antecedent_length(r)\n'
                'text = str(r)\n')
    assert [c.mechanism for c in session.ledger] == ["option BayesianRuleList"]
    assert session.ledger[0].budget.epsilon == Fraction(2)
    text = session.eval("text")
    assert "BayesianRuleList for 'survived' (epsilon 2)" in text and "probability" in text
    assert 0 <= session.eval("n") <= 3 and session.eval("k") >= 0
    truth = _frame(600, seed=99)["survived"].tolist()
    predicted = list(session.eval("p"))
    # at epsilon 2 on 3,000 rows the list finds sex (and class): the majority class alone is 0.58
    assert np.mean([a == b for a, b in zip(predicted, truth)]) > 0.7


def test_charged_once_before_anything_and_refused_over_budget() -> None:
    session = _session(budget=1.0)
    with pytest.raises(BudgetExceeded):
        session.run('r = BayesianRuleList(cats, "survived", epsilon=2)\n')
    assert len(session.ledger) == 0


@pytest.mark.parametrize("call, message", [
    ('BayesianRuleList(t, "survived", epsilon=1)', "numeric"),
    ('BayesianRuleList(cats, "nosuch", epsilon=1)', "no column"),
    ('BayesianRuleList(cats, "survived", epsilon=1, max_rows=0)', "max_rows"),
    ('BayesianRuleList(cats, "survived", epsilon=1, antecedents="all")', "antecedents"),
    ('BayesianRuleList(cats, "survived", epsilon=1, sampler="mcmc")', "keyword"),
])
def test_bad_calls_fail_before_any_charge(call: str, message: str) -> None:
    session = _session()
    with pytest.raises(JostleRuntimeError) as caught:
        session.run(f"r = {call}\n")
    assert message in caught.value.message
    assert len(session.ledger) == 0


def test_predicting_on_a_private_table_is_refused() -> None:
    session = _session()
    session.run('r = BayesianRuleList(cats, "survived", epsilon=1, antecedents="public")\n')
    with pytest.raises(PrivacyError):
        session.run("p = predict_rule_list(r, cats)\n")


def test_a_public_table_gets_the_non_private_rule_list_for_free() -> None:
    session = _session()
    session.run('r = BayesianRuleList(pub, "survived")\ntext = str(r)\n')
    assert "not private" in session.eval("text") and "sex = " in session.eval("text")
    assert len(session.ledger) == 0


def test_options_run_on_their_own() -> None:
    session = _session()
    session.run('r = BRLSchema(cats, "survived", epsilon=1)\nn = rule_list_length(r)\n')
    assert session.ledger[0].mechanism == "option BRLSchema" and session.eval("n") >= 0


def test_a_rule_list_choicemaker_dispatches_within_its_budget(tmp_path, monkeypatch) -> None:
    """A ChoiceMaker over rule-list Options, declared on rule_list_corpus() but trained on three
    planted tasks and a two-epsilon grid (fast), spends at most its budget and returns a rule list."""
    from jostle.language.values import CorpusValue
    from jostle.learners.brl.corpus import planted_corpus
    from jostle.learners.brl.task import RuleGrid

    monkeypatch.setenv("JOSTLE_CACHE", str(tmp_path))
    session = _session(budget=3.0)
    session.run("choicemaker R among {BRLMined, BRLSchema} informed by {size, epsilon} trained on rule_list_corpus()\n")
    maker = session.interpreter.globals.lookup("R")
    maker.corpus = CorpusValue(planted_corpus(3), "tiny", task="classification")
    maker.grid = RuleGrid(epsilons=(0.5, 2.0), repetitions=1)
    session.run('r = R(cats, "survived", epsilon=2)\nchoice = trace(R)[0].choice\ntext = str(r)\n')
    spent = sum((c.budget.epsilon for c in session.ledger), Fraction(0))
    assert 0 < spent <= 2 and all(c.description.startswith("R(") for c in session.ledger)
    assert session.eval("choice") in ("BRLMined", "BRLSchema")
    assert session.eval("text").startswith(session.eval("choice") + " for 'survived'")
