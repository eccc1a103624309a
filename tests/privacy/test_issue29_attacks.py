"""Adversarial review of issue 29 (the cost report and the dry run on public stand-ins, error
bounds carried by released values, accuracy-first budgets and the gradual release, the
ChoiceMaker's predicted errors).

The program's author is the adversary: whatever a program (or a Python caller of Session) can
observe must be identical on neighbouring datasets unless it went through a charged release,
every release is charged before its noise is drawn, and a failure releases and spends nothing.
The cost report must equal the ledger's total when it says the total is determined, and bound it
otherwise. Each test states a guarantee the code must keep. One that failed on the code the review
read is marked `xfail(strict=True)` with the hole in its reason (the suite stays green and the mark
must go when the hole is fixed: the test then XPASSes, which strict turns into a failure). Tests
without a mark passed on that code and pin the claim down against regressions.
"""

from __future__ import annotations

import io
import math
import signal
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.diagnostics.errors import JostleError
from jostle.privacy.error_bounds import NoiseLaw, half_width_of_sum
from jostle.privacy.gradual_release import schedule, stay_probability

SCHEMA = {"age": ("numeric", 0, 100), "region": ("categorical", ["north", "south", "east"])}


def rows(n: int = 300) -> pd.DataFrame:
    return pd.DataFrame({"age": [i % 90 for i in range(n)], "region": ["north", "south", "east"] * (n // 3)})


def session(frame: pd.DataFrame | None = None, public_rows: bool = False, **options) -> Session:
    made = Session(ledger_path=":memory:", seed=1, output=io.StringIO(), **options)
    made.bind_private("t", rows() if frame is None else frame, SCHEMA, public_rows=public_rows)
    return made


def spent(made: Session) -> Fraction:
    return Fraction(made.interpreter.accountant.spent.epsilon)


def reported(made: Session, program: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = made.check(program)
    return report.attrs


def run(made: Session, program: str) -> str | None:
    """Run `program`; the rendered error, or None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            made.run(program)
        except JostleError as error:
            return error.render()
    return None


# ------------------------------------------------------------------ the dry run and the report
def test_report_is_not_a_wrong_determined_total_when_the_program_branches_on_a_public_row_count():
    program = ("budget 1\nif count(t) > 200:\n    x = laplace(sum(t, \"age\"), 0.5)\n"
               "y = laplace(sum(t, \"age\"), 0.25)\n")
    attrs = reported(session(public_rows=True), program)
    real = session(public_rows=True, dry_run=False)
    assert run(real, program) is None
    assert spent(real) == Fraction(3, 4)  # both releases: the real table has 300 rows
    if attrs["determined"]:
        assert Fraction(attrs["total"].epsilon) == spent(real)


def test_report_is_not_a_wrong_determined_total_when_the_program_branches_on_spent():
    made = session(budget=2)
    assert run(made, "x = laplace(count(t), 0.5)\n") is None
    program = "y = laplace(count(t), 0.25)\nif spent() > 0.5:\n    z = laplace(count(t), 0.5)\n"
    attrs = reported(made, program)
    before = spent(made)
    assert run(made, program) is None
    assert spent(made) - before == Fraction(3, 4)
    if attrs["determined"]:
        assert Fraction(attrs["total"].epsilon) == spent(made) - before


def test_a_program_cannot_pass_the_dry_run_by_reading_the_ledger_and_fail_after_spending():
    made = session(budget=2)
    assert run(made, "x = laplace(count(t), 0.5)\n") is None
    before = spent(made)
    error = run(made, "y = laplace(count(t), 0.25)\nif len(ledger()) > 1:\n    print([1][3])\n")
    assert error is None or spent(made) == before  # it failed, so nothing may have been spent


def test_a_branch_on_a_release_through_a_closure_a_lambda_a_record_or_a_list_is_reported_as_dependent():
    frame = rows(3000)
    for hidden in ("def big():\n    return x > 1000\nif big():\n",
                   "g = lambda: x > 1000\nif g():\n",
                   "r = {a: x}\nif r.a > 1000:\n",
                   "l = [x, 1]\nif l[0] > 1000:\n",
                   "for v in [x]:\n    if v > 1000:\n    "):
        program = "budget 2\nwith budget 1:\n    x = {{ count(t) }}\n" + hidden + "    y = laplace(count(t), 1)\n"
        attrs = reported(session(frame), program)
        assert not attrs["determined"] and "depends on" in attrs["total_text"], hidden


def test_the_dry_run_consumes_no_session_randomness_and_laws_change_no_released_value():
    # Pinned from the code before issue 29 (e892634, same seed): attaching noise laws and running
    # the dry run first must leave every released value and the randomness stream as they were.
    program = ("budget 50\nprint(laplace(count(t), 1))\nprint(geometric(count(t), 1))\n"
               "print(geometric(histogram(t, \"region\"), 1))\nwith budget 2:\n    print({{ count(t) }})\n"
               "x = laplace(count(t), 1)\nprint(x + x, -x)\n")
    outputs = []
    for dry in (True, False):
        made = session(dry_run=dry)
        assert run(made, program) is None
        outputs.append(made.interpreter.output.getvalue())
    assert outputs[0] == outputs[1]
    assert outputs[0] == ("300.11751651763916\n301\n[north: 99, south: 99, east: 101]\n301\n"
                          "601.9514846801758 -300.9757423400879\n")


def test_check_and_a_failed_dry_run_leave_no_trace_in_the_session_or_the_durable_ledger(tmp_path):
    import sqlite3

    program = "budget 1\nx = laplace(count(t), 0.5)\nprint(x)\nwith budget 0.4:\n    y = {{ count(t) }}\nprint(y)\n"
    seen = []
    for index, check_first in enumerate((False, True)):
        path = tmp_path / f"ledger{index}.sqlite"
        made = Session(ledger_path=str(path), seed=3, output=io.StringIO())
        made.bind_private("t", rows(), SCHEMA, dataset="patients", lifetime=5)
        if check_first:
            reported(made, program)
        failed = run(made, "budget 1\ny = {{ count(t) }}\nprint([1][4])\n")
        assert failed is not None and "dry run" in failed and spent(made) == 0
        assert run(made, program) is None
        with sqlite3.connect(path) as connection:
            events = connection.execute("select count(*) from events").fetchone()[0]
        seen.append((made.interpreter.output.getvalue(), events, spent(made)))
    assert seen[0] == seen[1]


# ------------------------------------------------------------------ accuracy-first budgets
def test_a_release_after_a_gradual_accuracy_block_is_not_refused_after_spending():
    program = ("budget 1\nwith budget 1:\n    with accuracy 5 at 0.95:\n        m = {{ mean(t, \"age\") }}\n"
               "    x = {{ count(t) }}\n")
    made = session()
    error = run(made, program)
    assert error is None or spent(made) == 0


def test_in_zcdp_a_gradual_release_and_later_releases_fit_the_total_a_priori():
    frame = pd.DataFrame({"age": [50 + i % 3 for i in range(3000)], "region": ["north"] * 3000})
    made = session(frame)
    error = run(made, "budget rho(0.3)\nwith budget rho(0.15):\n    with accuracy 20 at 0.95:\n"
                      "        m = {{ mean(t, \"age\") }}\ny = gaussian(count(t), rho(0.29))\n")
    a_priori = Fraction(0)
    for entry in made.interpreter.accountant.ledger:
        gradual = entry.details.get("gradual")
        if gradual is None:
            a_priori += Fraction(entry.budget.rho)
        elif gradual["step"] == 1:
            a_priori += Fraction(gradual["cap"].rho)
    assert a_priori <= Fraction(3, 10), (error, a_priori)


def test_a_gradual_release_never_spends_more_than_its_with_budget_cap_and_stops_on_released_values():
    frame = pd.DataFrame({"age": [50 + i % 3 for i in range(3000)], "region": ["north"] * 3000})
    for error_target, steps in ((20, None), (0.001, 12)):
        made = session(frame, dry_run=False)
        assert run(made, f"budget 1\nwith budget 0.4:\n    with accuracy {error_target} at 0.95:\n"
                         "        m = {{ mean(t, \"age\") }}\n") is None
        ledger = made.interpreter.accountant.ledger
        assert spent(made) <= Fraction(2, 5) and all(e.details["gradual"]["steps"] == 12 for e in ledger)
        assert [e.details["gradual"]["step"] for e in ledger] == list(range(1, len(ledger) + 1))
        if steps is not None:
            assert len(ledger) == steps and spent(made) > Fraction(2, 5) * (1 - Fraction(1, 10**8))  # the cap, all spent


def test_an_unreachable_accuracy_target_is_refused_before_anything_is_spent_and_alike_on_neighbours():
    seen = []
    for frame in (rows(300), rows(300).drop(index=3).reset_index(drop=True)):
        made = session(frame)
        error = run(made, "budget 0.01\nx = release(sum(t, \"age\"), error=3, confidence=0.99)\n")
        assert error is not None and "nothing was spent" in error and spent(made) == 0
        seen.append(error)
    assert seen[0] == seen[1]


@pytest.mark.parametrize("expression", ["count(t)", "sum(t, \"age\")", "histogram(t, \"region\")"])
@pytest.mark.parametrize("target", [(60, 0.95), (500, 0.9), (9, 0.99)])
def test_an_accuracy_first_release_states_at_most_its_target_and_the_same_on_neighbours(expression, target):
    error, confidence = target
    program = (f"budget 8\nx = release({expression}, error={error}, confidence={confidence})\n"
               f"a = accuracy(x, {confidence})\n")
    seen = []
    for frame in (rows(300), rows(300).drop(index=7).reset_index(drop=True)):
        made = session(frame)
        outcome = run(made, program)
        if outcome is None:
            stated = np.max(np.atleast_1d(made.eval("a")))
            assert stated <= error
            outcome = (str(made.interpreter.accountant.ledger[-1].budget), float(stated))
        else:
            assert spent(made) == 0 and "nothing was spent" in outcome
        seen.append(outcome)
    assert seen[0] == seen[1]


def test_the_gradual_chain_step_has_exactly_the_next_laws_marginal():
    # DLap(a) + Z with Z = 0 w.p. w0, DLap(a') otherwise, must be DLap(a') (gradual_release docstring).
    def pmf(a: float, reach: int) -> np.ndarray:
        k = np.arange(-reach, reach + 1)
        return (1 - a) / (1 + a) * a ** np.abs(k)

    reach = 400
    for sensitivity, epsilon in ((1, Fraction(1)), (3, Fraction(1, 5)), (2, Fraction(7, 3))):
        previous = Fraction(2, 3) * epsilon
        a, a_previous = math.exp(-float(epsilon) / sensitivity), math.exp(-float(previous) / sensitivity)
        stay = stay_probability(epsilon, previous, sensitivity)
        z = (1 - stay) * pmf(a_previous, reach)
        z[reach] += stay
        convolved = np.convolve(pmf(a, reach), z)[reach:3 * reach + 1]
        assert np.max(np.abs(convolved - pmf(a_previous, reach))) < 1e-9
    epsilons = schedule(Fraction(1))
    assert epsilons[-1] == 1 and all(b == Fraction(2, 3) * c for b, c in zip(epsilons, epsilons[1:]))


# ------------------------------------------------------------------ error bounds
def _coverage_laplace_plus_discrete(h: float, b: float, t: float) -> float:
    """P(|L + K| <= h), L ~ Laplace(b), K ~ DLap(exp(-1/t)), by exact summation over K."""
    def cdf(x: float) -> float:
        return 0.5 * math.exp(x / b) if x < 0 else 1 - 0.5 * math.exp(-x / b)

    a = math.exp(-1 / t)
    return sum((1 - a) / (1 + a) * a ** abs(k) * (cdf(h - k) - cdf(-h - k)) for k in range(-1500, 1501))


def test_the_stated_half_width_of_a_sum_of_releases_is_never_below_the_truth():
    for b, t in ((2.0, 4.0), (1.0, 1.0), (5.0, 0.5)):
        for confidence in (0.5, 0.9, 0.95, 0.99):
            h = half_width_of_sum([(1.0, NoiseLaw("laplace", b)), (1.0, NoiseLaw("discrete_laplace", t, 1.0))],
                                  confidence)
            assert _coverage_laplace_plus_discrete(h, b, t) >= confidence - 1e-12
    # Two discrete laws on different grids: exact lattice, the smallest integer multiple that covers.
    law = [(1.0, NoiseLaw("discrete_laplace", 2.0, 0.5)), (-2.0, NoiseLaw("discrete_laplace", 1.5, 0.25))]
    a1, a2 = math.exp(-1 / 2.0), math.exp(-1 / 1.5)
    k = np.arange(-200, 201)
    p1, p2 = (1 - a1) / (1 + a1) * a1 ** np.abs(k), (1 - a2) / (1 + a2) * a2 ** np.abs(k)
    values = np.add.outer(0.5 * k, -0.5 * k).ravel()
    mass = np.outer(p1, p2).ravel()
    for confidence in (0.5, 0.9, 0.95):
        h = half_width_of_sum(law, confidence)
        assert mass[np.abs(values) <= h + 1e-12].sum() >= confidence - 1e-12
        assert mass[np.abs(values) <= h - 0.5 + 1e-12].sum() < confidence  # and not needlessly wide


class _TooSlow(Exception):
    pass


def _within(seconds: float, call):
    """call(), or _TooSlow after `seconds` (SIGALRM: a hang fails the test instead of the suite)."""
    def alarm(signum, frame):
        raise _TooSlow(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return call()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_the_half_width_of_a_very_wide_discrete_law_is_computed_promptly():
    width = _within(2.0, lambda: NoiseLaw("discrete_laplace", 1e30, 1.0).half_width(0.95))
    assert width >= 2.99e30


def test_interval_warnings_and_no_law_errors_are_identical_on_neighbouring_tables():
    program = ("budget 4\ns = laplace(sum(t, \"age\"), 1)\nh = geometric(histogram(t, \"region\"), 1)\n"
               "c = interval(s, 0.95)\nw = accuracy(h, 0.9)\nprint(c[1] - c[0], w)\nq = accuracy(s * s, 0.95)\n")
    seen = []
    for frame in (rows(300), rows(300).drop(index=11).reset_index(drop=True)):
        made = session(frame, dry_run=False)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            error = run(made, program)
        seen.append((error, [str(w.message) for w in caught], made.interpreter.output.getvalue(),
                     [str(c.details.get("law")) for c in made.interpreter.accountant.ledger]))
    assert seen[0] == seen[1]
    assert seen[0][0] is not None and "product of two released values" in seen[0][0]
