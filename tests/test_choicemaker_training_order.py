"""A ChoiceMaker that must train first is refused for lack of budget BEFORE it trains (issue 28:
a user's histogram ChoiceMaker trained for 91 s and was then refused), and the training
announcement's estimate is measured on the first piece, not a constant."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.choicemaker import engine, experience, pretrained
from jostle.diagnostics.errors import BudgetExceeded

SCHEMA = {"x": {"type": "numeric", "bounds": [0, 16]}}
UNSHIPPED = "choicemaker H among {Identity, Uniform} informed by {domain_size} trained on histogram_corpus(1)\n"


def _session(**kwargs: object) -> Session:
    session = Session(seed=3, **kwargs)
    rows = np.random.default_rng(3).integers(0, 16, 300)
    session.bind_private("t", pd.DataFrame({"x": rows}), SCHEMA)
    session.run('b = t.bin("x", range(17))\nh = histogram(b, "x")\nq = all_ranges(16)\n' + UNSHIPPED)
    return session


@pytest.mark.parametrize("limit", [{"budget": 0.5}, {"lifetime": 0.5}])
def test_over_budget_dispatch_is_refused_before_training(monkeypatch: pytest.MonkeyPatch, limit: dict) -> None:
    calls: list[str] = []

    def no_training(*args: object, **kwargs: object) -> None:
        calls.append("train")
        raise AssertionError("trained before the budget check")

    monkeypatch.setattr(engine, "train", no_training)
    monkeypatch.setattr(experience, "experience_table", no_training)
    session = _session(**limit)
    with pytest.raises(BudgetExceeded):
        session.run("e = H(h, q, epsilon=1)\n")
    assert calls == []
    assert len(session.ledger) == 0


def test_announcement_estimate_is_measured_on_the_first_piece(tmp_path: object) -> None:
    messages: list[str] = []
    seen: list[float] = []
    lines = pretrained.measured_estimate(first_seconds=12.0, first_cost=2.0, remaining_costs=[2.0, 1.0, 1.0],
                                         cores=2, out=messages.append)
    seen.append(lines)
    # 12 s for a piece of cost 2: the remaining cost 4 takes about 24 s of one core, 12 s on two
    assert seen == [12.0]
    assert "measured" in messages[0] and "first piece" in messages[0]
