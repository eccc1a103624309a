"""The SuLQ primitive (jostle/privacy/sulq.py) and its built-ins: the two calibrations against the
issue's figures, exact plans and their rho, the release's distribution, and the language's
`sulq`, `sulq_variance`, `zcdp_variance` (charged before the draw, refused outside zCDP with
nothing spent)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.diagnostics.errors import JostleError
from jostle.privacy import sulq
from jostle.privacy.noise import Randomness


def test_lecture_and_zcdp_calibration_match_the_issue_figures():
    row = sulq.calibration_row(100, 1.0, 1e-6)
    assert row["lecture_variance"] == pytest.approx(2.715e5, rel=1e-3)
    assert row["lecture_sd"] == pytest.approx(521, abs=0.5)
    assert row["zcdp_variance"] == pytest.approx(2862, abs=1)
    assert row["zcdp_sd"] == pytest.approx(53.5, abs=0.05)
    assert row["ratio"] == pytest.approx(95, abs=0.5)
    ratios = [sulq.calibration_row(t, 1.0, d)["ratio"] for t in (10, 30, 100, 300, 1000)
              for d in (1e-6, 1e-7, 1e-8, 1e-9)]
    assert round(min(ratios)) == 73 and round(max(ratios)) == 144


def test_simple_conversion_is_met_exactly_and_cks_needs_less_variance():
    rho = sulq.simple_rho_for(1.0, 1e-6)
    assert rho + 2 * math.sqrt(rho * math.log(1e6)) == pytest.approx(1.0, abs=1e-12)
    assert sulq.zcdp_variance(100, 1.0, 1e-6, "cks") < sulq.zcdp_variance(100, 1.0, 1e-6)
    with pytest.raises(ValueError, match="conversion"):
        sulq.zcdp_variance(100, 1.0, 1e-6, "rdp")
    for bad in ((0, 1.0, 1e-6), (10, 0.0, 1e-6), (10, 1.0, 1.0), (10, float("inf"), 1e-6), (True, 1.0, 1e-6)):
        with pytest.raises(ValueError):
            sulq.lecture_variance(*bad)


@pytest.mark.parametrize("integer_valued", [False, True])
def test_plan_rho_is_exact_and_counts_touched_queries(integer_valued):
    every = sulq.sulq_plan(1000, 10, integer_valued=integer_valued)
    one = sulq.sulq_plan(1000, 10, touched=1, integer_valued=integer_valued)
    assert every.rho == 10 * one.rho  # SuLQ counts every query; a tighter analysis states touched
    assert every.rho == Fraction(10) / (every.grid ** 2) / (2 * every.sigma2)
    assert every.sigma2 * every.grid ** 2 >= 1000  # never less noise than asked
    assert every.sd ** 2 < 1000 * 1.05  # and not much more
    assert every.rho <= Fraction(10, 2000)
    assert float(every.rho) == pytest.approx(10 / 2000, rel=0.05)
    assert every.shift_bound ** 2 >= every.touched / every.grid ** 2
    with pytest.raises(ValueError):
        sulq.sulq_plan(1000, 10, touched=11)
    with pytest.raises(ValueError):
        sulq.sulq_plan(-1, 10)
    with pytest.raises(ValueError):
        sulq.sulq_plan(float("nan"), 10)


def test_variance_for_rho_is_the_smallest_that_fits():
    for rho, queries, touched in ((Fraction(1, 100), 10, None), (Fraction(1, 3), 7, 2), (Fraction(5), 1, None)):
        variance = sulq.variance_for_rho(rho, queries, touched)
        assert sulq.sulq_plan(variance, queries, touched).rho <= rho
        ideal = Fraction(touched or queries) / (2 * rho)
        assert ideal <= variance <= ideal * Fraction(101, 100)


def test_release_is_unbiased_with_the_planned_spread():
    plan = sulq.sulq_plan(400, 4000, touched=1)
    sums = np.full(4000, 12.25)
    released = sulq.sulq_release(Randomness(5), sums, plan)
    assert np.all(np.abs(released / float(plan.grid) - np.round(released / float(plan.grid))) == 0)  # on the grid
    # mean of 4000 draws: sd 20 / sqrt(4000) = 0.32, so 5 sd = 1.6; variance within 10% (5 sd of its estimate)
    assert abs(released.mean() - 12.25) < 1.6
    assert abs(released.var() / plan.sd ** 2 - 1) < 5 * math.sqrt(2 / 4000)
    with pytest.raises(ValueError, match="plan is for"):
        sulq.sulq_release(Randomness(5), [1.0, 2.0], plan)


SCHEMA = {"x": ("numeric", 0, 1)}


def _session(**kwargs) -> Session:
    session = Session(seed=3, **kwargs)
    frame = pd.DataFrame({"x": np.linspace(0, 1, 200)})
    session.bind_private("t", frame, {"x": ("numeric", 0, 1)})
    return session


def test_language_sulq_charges_what_the_variance_costs_before_the_draw():
    session = _session(rho=1)
    value = session.eval("sulq(count(t), 100)")
    spent = session.eval("spent()")
    # a count moves by 1; sigma^2 >= 100 rounded up to the sampler's form (less than sqrt(R) + 1 above it)
    assert 1 / (2 * 111) <= float(spent) <= 1 / (2 * 100)
    assert abs(value - 200) < 6 * math.sqrt(111)
    assert session.eval("sulq_variance(100, 1, 1e-6)") == pytest.approx(271457.18, rel=1e-6)
    assert session.eval('zcdp_variance(100, 1, 1e-6, "cks")') < session.eval("zcdp_variance(100, 1, 1e-6)")


def test_language_sulq_refusals_spend_nothing():
    pure = _session(budget=1)
    with pytest.raises(JostleError, match="zCDP program"):
        pure.eval("sulq(count(t), 100)")
    assert float(pure.eval("spent()")) == 0
    zcdp = _session(rho=1)
    for code, message in (("sulq(count(t), -1)", "positive"), ("sulq(count(t), count(t))", "public"),
                          ('sulq(mean(t, "x"), 10)', "not a mean"), ("sulq_variance(0, 1, 1e-6)", "whole"),
                          ("zcdp_variance(10, 1, 2)", "delta")):
        before = zcdp.eval("spent()")
        with pytest.raises(JostleError, match=message):
            zcdp.eval(code)
        assert zcdp.eval("spent()") == before
    tiny = _session(rho=0.001)
    with pytest.raises(JostleError):
        tiny.eval("sulq(count(t), 1)")  # costs about 0.5 > 0.001: refused before the draw
    assert float(tiny.eval("spent()")) == 0


@pytest.mark.parametrize("touched", [1, 2, 3, 5])
@pytest.mark.parametrize("integer_valued", [False, True])
def test_the_replay_claim_is_as_tight_as_the_charge(touched, integer_valued):
    """The claim bounds the L2 move by sqrt(touched) / grid to 2^-20 of a grid step, so a batch
    whose rows move more than `touched` says (e.g. 4 counts under touched 3) breaks it, even on
    the integer grid of counts, where rounding up to whole steps would not."""
    plan = sulq.sulq_plan(Fraction(5), 6, touched, integer_valued)
    squared = Fraction(touched) / plan.grid ** 2
    assert squared <= plan.shift_bound ** 2 < squared * (1 + Fraction(1, 10**5))
    assert plan.shift_bound ** 2 < Fraction(touched + 1) / plan.grid ** 2


def test_the_sulq_example_runs_and_spends_what_it_says(capsys):
    """examples/sulq.jst (docs/sulq.md's walk-through) runs on the bundled data: the calibrations'
    ratio, the primitive, both k-means learners and both SuLQ classifiers, within its zCDP cap."""
    from pathlib import Path

    from jostle.cli import main

    root = Path(__file__).resolve().parents[1]
    code = main(["run", str(root / "examples" / "sulq.jst"), "--seed", "2", "--ledger-db", ":memory:"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "ratio 94.8" in out
    assert "SuLQ ID3 tree (218 SuLQ queries" in out and "SuLQ perceptron (280 SuLQ queries" in out
    spent = float(out.rsplit("spent:", 1)[1].split()[0])
    assert 0.06 < spent < 0.062  # 4 learners at 0.01, 0.01, 0.02, 0.02 and a count at R = 400 (~1/800)
