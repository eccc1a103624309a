"""The language side of Options and the ChoiceMaker: syntax, calls, accounting, traces.

Accounting is checked exactly against the ledger: a dispatch with budget E and metafeature
share s spends s*E on its costly metafeatures (split evenly) and (1 - s)*E on the chosen
option, E in all, and a dispatch that cannot be paid for spends nothing.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.errors import BudgetExceeded, CheckError, JostleRuntimeError, JostleSyntaxError

SCHEMA = {"x": {"type": "numeric", "bounds": [0, 16]}}


def _session(budget: float = 1.0, rows: int = 400, seed: int = 3) -> Session:
    rng = np.random.default_rng(seed)
    session = Session(budget=budget, seed=seed)
    session.bind_private("t", pd.DataFrame({"x": rng.integers(0, 16, rows)}), SCHEMA)
    session.run('b = t.bin("x", range(17))\nh = histogram(b, "x")\nq = all_ranges(16)\n')
    return session


def prior_options(flat_prior: str, cells_prior: str) -> str:
    """Two Jostle options, Flat (a noisy total spread evenly) and Cells (noisy cells), whose
    predict(F) priors are the given expressions of the metafeature record F."""
    return f"""
option Flat(db, queries):
    answer:
        n = {{{{ sum(db) }}}}
        return map(lambda i: n / 16, range(16))
    predict(F):
        return {flat_prior}

option Cells(db, queries):
    answer:
        return {{{{ db }}}}
    predict(F):
        return {cells_prior}
"""


PRIOR_OPTIONS = prior_options("F.zero_share", "1 - F.zero_share") + """
def zero_share(db):
    return {{ zeros(db) }} / 16
"""


def _spent(session: Session) -> Fraction:
    return sum((c.budget.epsilon for c in session.ledger), Fraction(0))


# ---------------------------------------------------------------- syntax and checks
def test_option_needs_an_answer_clause():
    with pytest.raises(JostleSyntaxError) as caught:
        Session(budget=1).run("option A(db, q):\n    predict(F):\n        return 1\n")
    assert "no answer clause" in caught.value.message
    assert caught.value.span.line == 1


def test_choicemaker_names_are_checked_before_running():
    with pytest.raises(CheckError) as caught:
        Session(budget=1).run("choicemaker H among {Nope} informed by {sparsity} trained on none\n")
    assert "Nope" in caught.value.message
    assert (caught.value.span.line, caught.value.span.column) == (1, 22)


def test_a_listed_name_must_be_an_option():
    session = Session(budget=1)
    with pytest.raises(JostleRuntimeError) as caught:
        session.run("f = 3\nchoicemaker H among {f} informed by {sparsity} trained on none\n")
    assert "not an option" in caught.value.message
    assert (caught.value.span.line, caught.value.span.column) == (2, 22)


def test_soft_keywords_stay_usable_as_names():
    session = Session(budget=1)
    session.run("predict = 2\non = 3\nby = predict * on\nanswer = by\n")
    assert session.eval("answer") == 6


# ---------------------------------------------------------------- calling options directly
def test_a_jostle_option_spends_exactly_its_epsilon():
    session = _session()
    session.run(PRIOR_OPTIONS + "e = Cells(h, q, epsilon=0.25)\n")
    assert _spent(session) == Fraction(1, 4)
    assert len(session.eval("e")) == 16


def test_a_builtin_option_spends_exactly_its_epsilon_and_returns_a_vector():
    session = _session()
    session.run("e = Identity(h, q, epsilon=0.5)\n")
    assert _spent(session) == Fraction(1, 2)
    assert [c.mechanism for c in session.ledger] == ["option Identity"]
    assert np.asarray(session.eval("e")).shape == (16,)


def test_an_option_on_public_data_is_exact_and_free():
    session = _session()
    session.run("e = Identity([1, 2, 3, 4], all_ranges(4), epsilon=0.5)\n")
    assert list(session.eval("e")) == [1.0, 2.0, 3.0, 4.0]
    assert len(session.ledger) == 0


def test_a_workload_for_another_domain_is_refused():
    session = _session()
    with pytest.raises(JostleRuntimeError) as caught:
        session.run("e = Identity(h, all_ranges(8), epsilon=0.5)\n")
    assert "shape" in caught.value.message
    assert len(session.ledger) == 0


# ---------------------------------------------------------------- dispatch
def test_dispatch_by_priors_splits_the_budget_exactly():
    session = _session()
    session.run(PRIOR_OPTIONS + "choicemaker H among {Flat, Cells} informed by {zero_share} trained on none\n"
                "e = H(h, q, epsilon=0.5)\n")
    charges = [(c.mechanism, c.budget.epsilon) for c in session.ledger]
    # zero_share's one {{ }} gets the whole metafeature share (10% of 0.5); the option the rest.
    assert charges[0] == ("{{ }} geometric", Fraction(1, 20))
    assert _spent(session) == Fraction(1, 2)
    trace = session.eval("trace(H)")
    assert len(trace) == 1 and trace[0]["choice"] in ("Flat", "Cells")
    assert trace[0]["metafeature_epsilon"] == pytest.approx(0.05)
    assert trace[0]["option_epsilon"] == pytest.approx(0.45)
    # The choice follows the priors on the released metafeature.
    released = trace[0]["metafeatures"]["zero_share"]
    assert trace[0]["choice"] == ("Flat" if released < 1 - released else "Cells")
    assert "chose" in session.eval("explain(H)")


def test_a_dispatch_that_cannot_be_paid_for_spends_nothing():
    session = _session(budget=0.3)
    session.run(PRIOR_OPTIONS + "choicemaker H among {Flat, Cells} informed by {zero_share} trained on none\n")
    with pytest.raises(BudgetExceeded):
        session.run("e = H(h, q, epsilon=0.5)\n")
    assert len(session.ledger) == 0


def test_the_share_clause_sets_the_metafeature_budget():
    session = _session()
    session.run(PRIOR_OPTIONS + "choicemaker H among {Flat, Cells} informed by {zero_share} trained on none "
                "spending 0.25 on metafeatures\ne = H(h, q, epsilon=0.8)\n")
    assert session.ledger[0].budget.epsilon == Fraction(1, 5)
    assert _spent(session) == Fraction(4, 5)


def test_trained_on_none_needs_priors():
    session = _session()
    with pytest.raises(JostleRuntimeError) as caught:
        session.run("choicemaker H among {DAWA, MWEM} informed by {sparsity} trained on none\n")
    assert "priors" in caught.value.message


def test_trace_is_public_and_can_be_branched_on():
    session = _session()
    session.run(PRIOR_OPTIONS + "choicemaker H among {Flat, Cells} informed by {zero_share} trained on none\n"
                "e = H(h, q, epsilon=0.5)\nflat = trace(H)[0].choice == \"Flat\"\n")
    assert session.eval("flat") in (True, False)


def test_run_with_trace_prints_every_dispatch(tmp_path, capsys, monkeypatch):
    import jostle.cli

    monkeypatch.setenv("JOSTLE_LEDGER", ":memory:")
    rng = np.random.default_rng(1)
    pd.DataFrame({"x": rng.integers(0, 16, 300)}).to_csv(tmp_path / "t.csv", index=False)
    program = tmp_path / "p.jst"
    program.write_text('budget 1\nt = load("t.csv", {x: numeric(0, 16)})\n'
                       'h = histogram(t.bin("x", range(17)), "x")\n' + PRIOR_OPTIONS +
                       "choicemaker H among {Flat, Cells} informed by {zero_share} trained on none\n"
                       "e = H(h, all_ranges(16))\n")
    assert jostle.cli.main(["run", str(program), "--trace", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "H at " in out and "chose " in out and "budget: epsilon 1 = 0.1 on metafeatures + 0.9 on" in out


def test_profile_metafeatures_are_charged_as_one_release():
    session = _session()
    session.run(prior_options("F.profile_uniformity", "1 - F.profile_uniformity + F.sparsity") + """
choicemaker H among {Flat, Cells} informed by {profile_size, profile_uniformity, profile_entropy, sparsity} trained on none
e = H(h, q, epsilon=0.5)
""")
    charges = [(c.mechanism, c.budget.epsilon) for c in session.ledger]
    # Two budget units (the profile and sparsity) share 10% of 0.5 equally; the option gets the rest.
    assert charges[:2] == [("metafeature profile", Fraction(1, 40)), ("metafeature sparsity", Fraction(1, 40))]
    assert _spent(session) == Fraction(1, 2)
    released = session.eval("trace(H)")[0]["metafeatures"]
    assert set(released) == {"profile_size", "profile_uniformity", "profile_entropy", "sparsity"}
