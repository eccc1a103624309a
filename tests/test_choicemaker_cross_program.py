"""A ChoiceMaker across families in a program: tree and rule-list Options on one corpus.

`choicemaker C among {FriedmanSchuster, BRLMined, BRLSchemaList, RandomTrees} informed by
{size, epsilon} trained on classification_corpus()` trains on one small public corpus (its
corpus and grid swapped for small ones, so it trains in seconds) and runs on a private table,
charging exactly its budget, with trace and explain naming each Option's family. A ChoiceMaker
mixing tasks, or asking for an error measure its families do not share, is refused, located,
with nothing charged.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest

SCHEMA = {
    "sex": {"type": "categorical", "values": ["f", "m"]},
    "cls": {"type": "categorical", "values": ["1", "2", "3"]},
    "port": {"type": "categorical", "values": ["c", "q", "s"]},
    "survived": {"type": "categorical", "values": ["no", "yes"]},
}


def _frame(rows: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex, cls = rng.choice(["f", "m"], rows), rng.choice(["1", "2", "3"], rows)
    p = np.where(sex == "f", 0.8, np.where(cls == "1", 0.5, 0.1))
    return pd.DataFrame({"sex": sex, "cls": cls, "port": rng.choice(["c", "q", "s"], rows),
                         "survived": np.where(rng.random(rows) < p, "yes", "no")})


def _small_corpus() -> list[Any]:
    """Four small public tasks of two classes (each its own dataset)."""
    from jostle.learnerkit.tables import ClassificationData

    tasks = []
    for index in range(4):
        rng = np.random.default_rng(40 + index)
        X = rng.integers(0, 3, size=(300, 4))
        signal = (X[:, index % 4] == 0) | (rng.random(300) < 0.15 * (index + 1))
        y = np.where(rng.random(300) < 0.9, signal, ~signal).astype(np.int64)
        tasks.append(ClassificationData(X, y, (3, 3, 3, 3), 2, ("a", "b", "c", "d"), (0, 1),
                                        name=f"cross:{index}"))
    return tasks


def test_a_program_chooses_among_tree_and_rule_list_options(tmp_path, monkeypatch):
    from jostle import Session
    from jostle.learnerkit.grids import SplitGrid
    from jostle.language.values import CorpusValue

    monkeypatch.setenv("JOSTLE_CACHE", str(tmp_path))
    session = Session(budget=3.0, seed=7)
    session.bind_private("t", _frame(2000, 5), SCHEMA)
    session.run("choicemaker C among {FriedmanSchuster, BRLMined, BRLSchemaList, RandomTrees} "
                "informed by {size, epsilon} trained on classification_corpus()\n")
    maker = session.interpreter.globals.lookup("C")
    assert maker.family.name == "brl+trees" and maker.task == "classification"
    assert maker.error == maker.family.error_measure
    maker.corpus = CorpusValue(_small_corpus(), "four small tasks", task="classification")
    maker.grid = SplitGrid(epsilons=(0.5, 2.0), repetitions=1)
    session.run('m = C(t, "survived", epsilon=2)\nrecord = trace(C)[0]\ntext = explain(C)\n')
    trained = maker.trained
    assert set(trained.experience["option"]) == {"FriedmanSchuster", "BRLMined", "BRLSchemaList", "RandomTrees"}
    charges = list(session.ledger)
    assert sum((c.budget.epsilon for c in charges), Fraction(0)) == 2  # exactly its budget
    assert all(c.description.startswith("C(") for c in charges)
    record = session.eval("record")
    owners = {"FriedmanSchuster": "trees", "RandomTrees": "trees", "BRLMined": "brl", "BRLSchemaList": "brl"}
    assert dict(record["option_families"]) == owners
    assert record["family"] == owners[record["choice"]]
    text = session.eval("text")
    assert f"chose {record['choice']} ({owners[record['choice']]})" in text
    assert "FriedmanSchuster (trees)=" in text and "BRLMined (brl)=" in text


def test_a_choicemaker_mixing_tasks_is_refused_located_with_nothing_charged():
    from jostle import Session
    from jostle.diagnostics.errors import JostleRuntimeError

    session = Session(budget=3.0, seed=7)
    program = "choicemaker C among {DAWA, HB, FriedmanSchuster} informed by {epsilon} trained on classification_corpus()\n"
    with pytest.raises(JostleRuntimeError, match="one task") as caught:
        session.run(program)
    span = caught.value.span
    assert span is not None and program[span.column - 1:].startswith("FriedmanSchuster")  # located at it
    assert list(session.ledger) == []


def test_an_error_measure_the_families_do_not_share_is_refused():
    from jostle import Session
    from jostle.diagnostics.errors import JostleRuntimeError

    session = Session(budget=3.0, seed=7)
    with pytest.raises(JostleRuntimeError, match="unknown error measure") as caught:
        session.run('choicemaker C among {FriedmanSchuster, BRLMined} informed by {size} '
                    'trained on classification_corpus() measured by "scaled_l1"\n')
    assert "accuracy" in str(caught.value.hint) and list(session.ledger) == []
