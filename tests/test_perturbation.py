"""Input perturbation in the language (issue 26): operators as values, the breach analysis, exact
sampling, `randomise` (charged first, refused whole) and the lecture's example run end to end."""

from __future__ import annotations

import io
import math
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.data.schema import Categorical, Numeric
from jostle.diagnostics.errors import JostleRuntimeError, PrivacyError
from jostle.privacy.noise import Randomness
from jostle.privacy.randomisation import (additive_uniform, amplification, cyclic_uniform, epsilon_upper_bound,
                                          keep_or_uniform, mixture, randomized_response, sample)

ROOT = Path(__file__).resolve().parent.parent
R3_TEXT = "mixture([0.5, 0.5], [cyclic_uniform(0, 20, 3), keep_or_uniform(0, 20, 0)])"


def test_the_lectures_example_runs_end_to_end():
    run = subprocess.run([sys.executable, "-m", "jostle", "run", "examples/perturbation.jst"], capture_output=True,
                         text=True, cwd=ROOT, env=dict(os.environ, JOSTLE_HISTORY=os.devnull), timeout=120)
    assert run.returncode == 0, run.stderr
    out = run.stdout
    for expected in ("R1: Q1 335/467 (0.717345)  Q2 96917/116750 (0.830124)",
                     "R2: Q1 5/104 (0.0480769)  Q2 1\n",
                     "R3: Q1 3005/102302 (0.0293738)  Q2 28961501/40920800 (0.707745)",
                     "gamma R1 1005/4 (251.25)  R2 inf  R3 1202/201 (5.9801)",
                     "R3 breach at rho1 14%, rho2 50%: false", "R3 breach at rho1 15%, rho2 50%: true",
                     "no breach for rho1 below 201/1403 (0.143264)",
                     "P(age = 90 | y = 110) = 1  gamma inf", "spent: 0.0"):
        assert expected in out, (expected, out)


# ---------------------------------------------------------------- exact sampling
class EveryInteger:
    """A fake source whose uniform integers below D are 0, 1, ..., D-1 (then again): a draw of
    exactly D rows must then hit every output y exactly N[x, y] times."""

    def integers_below(self, bound: int, size: int) -> np.ndarray:
        return np.arange(size, dtype=np.int64) % bound


@pytest.mark.parametrize("operator", [
    keep_or_uniform(7, "0.3"), cyclic_uniform(7, 2), additive_uniform(6, 2), randomized_response(4, 0.5),
    mixture([("1/3", cyclic_uniform(7, 2)), ("2/3", keep_or_uniform(7, "1/7"))]),
])
def test_sampling_is_the_inverse_cdf_of_the_exact_law(operator):
    matrix, denominator = operator.counts
    if denominator > 10 ** 6:  # randomized response: a double's denominator; check the law instead
        assert all(sum(Fraction(int(v), denominator) for v in row) == 1 for row in matrix)
        return
    for x in range(operator.size):
        drawn = sample(EveryInteger(), operator, np.full(denominator, x))
        counts = [int(np.count_nonzero(drawn == y)) for y in operator.outputs]
        assert counts == [int(v) for v in matrix[x]]
        assert all(Fraction(int(v), denominator) == operator.probability(x, y)
                   for v, y in zip(matrix[x], operator.outputs))


def test_sampling_many_rows_follows_the_law():
    operator = randomized_response(5, 1.0)
    drawn = sample(Randomness(7), operator, np.repeat(np.arange(5), 20_000))
    stay = float(operator.probability(0, 0))
    for x in range(5):
        kept = np.mean(drawn[x * 20_000:(x + 1) * 20_000] == x)
        assert abs(kept - stay) < 5 * math.sqrt(stay * (1 - stay) / 20_000)


def test_the_charged_epsilon_bounds_the_log_amplification_from_above():
    for gammas in ([Fraction(1202, 201)], [Fraction(1005, 4), Fraction(3)], [Fraction(math.exp(1.0))]):
        bound = epsilon_upper_bound(gammas)
        assert bound >= sum(math.log(g) for g in gammas) and bound - sum(math.log(g) for g in gammas) < 2e-6
    with pytest.raises(ValueError):
        epsilon_upper_bound([math.inf])


# ---------------------------------------------------------------- randomise
def _session(rows: int = 2000, budget: float = 10, public_rows: bool = True, unit: str | None = None) -> Session:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"x": rng.integers(0, 21, rows), "sex": rng.choice(["F", "M"], rows),
                          "secret": rng.integers(0, 2, rows)})
    session = Session(budget=budget, seed=3, ledger_path=":memory:", output=io.StringIO())
    schema = {"x": Numeric(0, 20, integer=True), "sex": Categorical(("F", "M")), "secret": Numeric(0, 1.5)}
    if unit is None:
        session.bind_private("t", frame, schema, public_rows=public_rows)
    else:
        session.bind_private("t", frame, schema, unit=unit)
    session.run(f"R3 = {R3_TEXT}\nRR = randomized_response_operator([\"F\", \"M\"], 1)")
    return session


def test_randomise_charges_the_sum_of_log_amplifications_first_and_releases_a_public_table():
    s = _session()
    s.run("r = randomise(t, {x: R3, sex: RR})")
    released = s.eval("r")
    assert list(released.columns) == ["x", "sex"] and len(released) == 2000  # `secret` is not released
    assert released["x"].between(0, 20).all() and set(released["sex"]) <= {"F", "M"}
    gammas = [amplification(mixture([("1/2", cyclic_uniform(21, 3)), ("1/2", keep_or_uniform(21, 0))])),
              amplification(randomized_response(2, Fraction(1)))]
    (entry,) = s.eval("ledger()")
    assert entry["mechanism"] == "randomise" and entry["unit"] == "replace_one"
    assert entry["epsilon"] == pytest.approx(float(epsilon_upper_bound(gammas)))
    assert entry["epsilon"] >= sum(math.log(g) for g in gammas)


def test_randomise_on_a_table_under_replace_one_unit_is_allowed():
    s = _session(public_rows=False, unit="replace_one")
    s.run("r = randomise(t, {sex: RR})")
    assert len(s.eval("r")) == 2000


@pytest.mark.parametrize("program, error, words", [
    ("randomise(t, {x: cyclic_uniform(0, 20, 3)})", PrivacyError, "infinite amplification"),
    ("randomise(t, {x: additive_uniform(0, 20, 3)})", PrivacyError, "privacy breach"),
    ("randomise(t.where(lambda r: r.x > 3), {x: R3})", PrivacyError, "no longer the whole table"),
    ("randomise(t, {x: keep_or_uniform(0, 30, 0.5)})", JostleRuntimeError, "bounded by 0..20"),
    ("randomise(t, {sex: keep_or_uniform([\"M\", \"F\"], 0.5)})", JostleRuntimeError, "declared values"),
    ("randomise(t, {secret: keep_or_uniform(0, 1, 0.5)})", JostleRuntimeError, "not whole"),
    ("randomise(t, {nope: R3})", JostleRuntimeError, "no column"),
    ("randomise(t, {x: 3})", JostleRuntimeError, "randomisation operator"),
    ("randomise(t, {x: R3, sex: RR})", Exception, "budget"),  # over the session's budget of 0.5
])
def test_refusals_spend_nothing(program, error, words):
    s = _session(budget=10 if "sex: RR" not in program else 0.5)
    with pytest.raises(error) as caught:
        s.run(program)
    text = str(caught.value) + " " + str(getattr(caught.value, "hint", ""))
    assert words in text, text
    assert s.eval("ledger()") == [] and s.eval("spent()") == 0


def test_randomise_refuses_a_row_unit_table_with_a_hint():
    s = _session(public_rows=False)
    with pytest.raises(PrivacyError) as caught:
        s.run("randomise(t, {sex: RR})")
    assert "replace_one" in caught.value.hint and s.eval("ledger()") == []


def test_an_infinite_amplification_is_refused_with_the_hint_to_mix():
    s = _session()
    with pytest.raises(PrivacyError) as caught:
        s.run("randomise(t, {x: cyclic_uniform(0, 20, 3)})")
    assert "mixture" in caught.value.hint
    assert "probability 0" in str(caught.value) and "R3" in caught.value.hint


# ---------------------------------------------------------------- values and Python
def test_exact_answers_keep_their_fraction_in_python():
    s = _session()
    gamma = s.eval("amplification(R3)")
    assert gamma.fraction == amplification(mixture([("1/2", cyclic_uniform(21, 3)), ("1/2", keep_or_uniform(21, 0))]))
    assert s.eval("transition(R3, 0, 2) > transition(R3, 0, 10)") is True
    assert s.eval("local_epsilon(RR)") == pytest.approx(1.0)
    # gamma = e: no (rho1, 1/2) breach exactly for rho1 < 1 / (1 + e) = 0.2689
    assert s.eval("has_breach(RR, 0.26, 0.5)") is False and s.eval("has_breach(RR, 0.27, 0.5)") is True
    e = Fraction(math.exp(1.0))
    assert s.eval('posterior(RR, [0.5, 0.5], ["F"], "F")').fraction == e / (e + 1)


def test_bad_operator_arguments_are_located_errors():
    s = _session()
    for program, words in (("keep_or_uniform(0, 20, 1.5)", "keep must lie in [0, 1]"),
                           ("cyclic_uniform(0, 5, 3)", "2k + 1 <= size"),
                           ("mixture([0.5, 0.4], [R3, R3])", "add to 1"),
                           ("mixture([0.5, 0.5], [R3, RR])", "share one domain"),
                           ("transition(R3, 30, 0)", "not in the operator's domain"),
                           ("posterior(R3, [1], [0], 0)", "1 probabilities for 21 inputs"),
                           ("keep_or_uniform(5, 0, 0.5)", "lo <= hi")):
        with pytest.raises(JostleRuntimeError) as caught:
            s.run(f"v = {program}")
        assert words in str(caught.value) and caught.value.span is not None, program


def test_reconstruct_and_estimate_in_a_session_give_pandas():
    s = _session(rows=5000)
    s.run('r = randomise(t, {x: R3})\nd = reconstruct(r, "x", R3)\nlow = estimate(d, lambda v: v < 10)\n'
          'three = estimate(d, [3])')
    dist = s.eval("d")
    assert list(dist.columns) == ["value", "probability"] and dist["probability"].sum() == pytest.approx(1)
    assert 0 <= s.eval("three") <= s.eval("low") <= 1
    assert s.eval("low") == pytest.approx(10 / 21, abs=0.05)  # the data are uniform on 0..20
    with pytest.raises(PrivacyError):
        s.run('reconstruct(t, "x", R3)')
