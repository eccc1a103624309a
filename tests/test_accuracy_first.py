"""Accuracy-first budgets (issue 29): `with accuracy E at C:` and `release(x, error=E, confidence=C)`.

The budget is the smallest meeting the target (one step smaller fails it), the stated error is
met over repeated seeded runs (within a binomial tolerance), every refusal happens before
anything is spent (the ledger is empty after it), the ledger says the budget was chosen for
accuracy, zCDP programs get a rho, `with budget` caps and partitions compose as usual.
"""

from __future__ import annotations

import io
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.diagnostics.errors import BudgetExceeded, CheckError, JostleRuntimeError, JostleSyntaxError, PrivacyError
from jostle.language.parser import parse
from jostle.privacy.budget import Budget, RhoZCDPBudget
from jostle.privacy.error_bounds import law_for

ROWS = 400
SCHEMA = {"age": ("numeric", 0, 100), "grp": ("categorical", ["a", "b", "c"])}


def _frame(rows: int = ROWS) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame({"age": rng.integers(18, 90, rows).astype(float), "grp": rng.choice(["a", "b", "c"], rows)})


def _session(budget: float | None = 1.0, seed: int = 5, **options) -> tuple[Session, io.StringIO]:
    out = io.StringIO()
    session = Session(budget=budget, seed=seed, ledger_path=":memory:", output=out, **options)
    session.bind_private("t", _frame(), schema=SCHEMA)
    return session, out


def _run(source: str, budget: float | None = 1.0, **options) -> tuple[Session, str]:
    session, out = _session(budget, **options)
    session.run(source)
    return session, out.getvalue()


# ---------------------------------------------------------------- syntax
def test_accuracy_and_at_stay_names_outside_with() -> None:
    program = parse("accuracy = 1\nat = 2\nwith accuracy accuracy at 0.9:\n    x = {{ at }}\n")
    block = program.body[2]
    assert type(block).__name__ == "WithAccuracy"
    assert block.error.id == "accuracy" and block.confidence.value == 0.9


def test_a_malformed_header_is_a_located_syntax_error_with_the_form() -> None:
    with pytest.raises(JostleSyntaxError) as caught:
        parse("with accuracy 10:\n    x = 1\n")
    assert caught.value.span.line == 1 and "with accuracy E at C:" in caught.value.hint


# ---------------------------------------------------------------- the smallest budget
@pytest.mark.parametrize("error,confidence", [(10, 0.95), (3, 0.5), (40, 0.99)])
def test_the_budget_is_the_smallest_meeting_the_target(error: float, confidence: float) -> None:
    session, _ = _run(f"with accuracy {error} at {confidence}:\n    c = {{{{ count(t) }}}}\n")
    (entry,) = list(session.ledger)
    epsilon = entry.budget.epsilon
    assert law_for("geometric", 1, Budget(epsilon), integer=True).half_width(confidence) <= error
    smaller = Budget(epsilon * (1 - Fraction(1, 10**6)))
    assert law_for("geometric", 1, smaller, integer=True).half_width(confidence) > error
    assert f"for error {error:g} at {100 * confidence:g}%" in entry.description


def test_a_real_valued_sum_uses_the_laplace_grid_law() -> None:
    session, _ = _run('x = release(sum(t, "age"), error=400, confidence=0.9)\n')
    (entry,) = list(session.ledger)
    assert entry.mechanism.endswith("laplace")
    law = law_for("laplace", 100, entry.budget, integer=False)
    assert law.half_width(0.9) <= 400
    assert law_for("laplace", 100, Budget(entry.budget.epsilon * Fraction(999999, 10**6)),
                   integer=False).half_width(0.9) > 400


def test_the_stated_error_is_met_over_repeated_runs() -> None:
    """400 seeded releases of a count at a target of 6 at 90%: the share within 6 is the law's
    exact coverage (>= 0.9) up to 4 binomial standard deviations."""
    runs = 400
    session, out = _run(f"with accuracy 6 at 0.9:\n    for i in range({runs}):\n        print({{{{ count(t) }}}})\n",
                        budget=1000)
    values = np.array(out.split(), dtype=float)
    assert len(values) == runs
    epsilon = list(session.ledger)[0].budget
    coverage = law_for("geometric", 1, epsilon, integer=True).coverage(6)
    share = float(np.mean(np.abs(values - ROWS) <= 6))
    sd = math.sqrt(coverage * (1 - coverage) / runs)
    assert coverage >= 0.9 and abs(share - coverage) <= 4 * sd


# ---------------------------------------------------------------- refusals: nothing spent
REFUSED = [
    ("with accuracy 0 at 0.95:\n    c = {{ count(t) }}\n", CheckError, "greater than 0"),
    ("with accuracy -2 at 0.95:\n    c = {{ count(t) }}\n", CheckError, "greater than 0"),
    ("with accuracy 5 at 1:\n    c = {{ count(t) }}\n", CheckError, "between 0 and 1"),
    ("with accuracy 5 at 0:\n    c = {{ count(t) }}\n", CheckError, "between 0 and 1"),
    ("e = 0 - 1\nwith accuracy e at 0.9:\n    c = {{ count(t) }}\n", JostleRuntimeError, "greater than 0"),
    ("c = 1.5\nwith accuracy 3 at c:\n    x = {{ count(t) }}\n", JostleRuntimeError, "between 0 and 1"),
    ("with accuracy 5 at 0.9:\n    c = count(t)\n", CheckError, "releases nothing"),
    ("with accuracy 5 at 0.9:\n    with budget 0.5:\n        c = {{ count(t) }}\n", CheckError, "inside `with accuracy`"),
    ("with accuracy 5 at 0.9:\n    c = laplace(count(t), 1)\n", CheckError, "states its own budget"),
    ("with accuracy 0.5 at 0.95:\n    c = {{ count(t) }}\n", BudgetExceeded, "error of at most 0.5"),
    ("x = release(count(t), error=0, confidence=0.9)\n", JostleRuntimeError, "greater than 0"),
    ("x = release(count(t), error=3, confidence=2)\n", JostleRuntimeError, "between 0 and 1"),
    ("x = release(count(t))\n", JostleRuntimeError, "needs a target error"),
    ("def pick(t):\n    return exponential([\"a\", \"b\"], lambda g: count(t), 1, 1)\n"
     "with accuracy 5 at 0.9:\n    c = pick(t)\n", PrivacyError, "no closed-form error"),
]


@pytest.mark.parametrize("source,error,words", REFUSED)
def test_refusals_spend_nothing(source: str, error: type, words: str) -> None:
    session, _ = _session(1.0)
    with pytest.raises(error) as caught:
        session.run(source)
    assert words in caught.value.message
    assert caught.value.span is not None
    assert len(session.ledger) == 0 and session.interpreter.accountant.spent.is_zero()


def test_an_unreachable_target_says_the_smallest_reachable_error() -> None:
    session, _ = _session(0.5)
    with pytest.raises(BudgetExceeded) as caught:
        session.run("with accuracy 1 at 0.95:\n    c = {{ count(t) }}\n")
    best = law_for("geometric", 1, Budget(Fraction(1, 2)), integer=True).half_width(0.95)
    assert f"an error of at least {best:.6g}" in caught.value.hint and "nothing was spent" in caught.value.hint
    assert caught.value.span.line == 2
    assert len(session.ledger) == 0


# ---------------------------------------------------------------- caps, partitions, zCDP
def test_with_budget_around_the_block_is_its_cap() -> None:
    session, _ = _session(5.0)
    with pytest.raises(BudgetExceeded) as caught:
        session.run("with budget 0.1:\n    with accuracy 10 at 0.9:\n        c = {{ count(t) }}\n")
    assert "epsilon 0.1" in caught.value.hint and len(session.ledger) == 0
    session.run("with budget 0.5:\n    with accuracy 10 at 0.9:\n        c = {{ count(t) }}\n")
    assert len(session.ledger) == 1 and session.interpreter.accountant.spent.epsilon < Fraction(1, 2)


def test_parts_of_a_partition_compose_in_parallel_inside_the_block() -> None:
    session, out = _run('with accuracy 30 at 0.9:\n    for p in partition(t, "grp"):\n        c = {{ count(p) }}\n'
                        "print(spent())\n", budget=0.2)
    entries = list(session.ledger)
    assert len(entries) == 3 and len({e.budget for e in entries}) == 1
    assert session.interpreter.accountant.spent == entries[0].budget  # the max over parts, not the sum


def test_a_zcdp_program_gets_the_smallest_rho() -> None:
    session, _ = _run('with accuracy 30 at 0.9:\n    h = {{ histogram(t, "grp") }}\n', budget=None, rho=0.5)
    (entry,) = list(session.ledger)
    assert isinstance(entry.budget, RhoZCDPBudget) and "for error 30 at 90%" in entry.description
    law = law_for("gaussian_rho", 1, entry.budget, integer=True, length=3, l1=1)
    assert law.half_width(0.9) <= 30
    smaller = RhoZCDPBudget(entry.budget.rho * Fraction(999999, 10**6))
    assert law_for("gaussian_rho", 1, smaller, integer=True, length=3, l1=1).half_width(0.9) > 30


def test_a_function_called_in_the_block_releases_for_accuracy() -> None:
    session, _ = _run("def n(t):\n    return {{ count(t) }}\nwith accuracy 10 at 0.95:\n    c = n(t)\n")
    assert "for error 10 at 95%" in list(session.ledger)[0].description


def test_public_values_are_free_in_the_block() -> None:
    session, out = _run("with accuracy 1 at 0.9:\n    print({{ 6 * 7 }}, release(3, error=1))\n")
    assert out.split() == ["42", "3"] and len(session.ledger) == 0


def test_a_learner_in_the_block_is_refused_before_it_charges() -> None:
    session, _ = _session(5.0)
    with pytest.raises(PrivacyError) as caught:
        session.run('h = histogram(t.bin("age", [0, 25, 50, 75, 100]), "age")\nwith accuracy 10 at 0.9:\n'
                    "    print(Identity(h, all_ranges(4), epsilon=1))\n    n = {{ count(t) }}\n")
    assert "no closed-form error and no gradual release" in caught.value.message
    assert len(session.ledger) == 0


def test_releases_in_an_accuracy_block_take_no_share_of_an_enclosing_budget() -> None:
    """The one `{{ }}` written directly in `with budget 1:` is allotted all of it, so an accuracy
    block beside it would find nothing left (or, written first, leave the `{{ }}` too little): the
    checker refuses the layout before anything runs (issue 29's review)."""
    for body in ("    a = {{ count(t) }}\n    with accuracy 500 at 0.5:\n        b = {{ count(t) }}\n",
                 "    with accuracy 5 at 0.95:\n        m = {{ mean(t, \"age\") }}\n    x = {{ count(t) }}\n"):
        session, _ = _session(2.0)
        with pytest.raises(CheckError) as caught:
            session.run("with budget 1:\n" + body)
        assert "allots its whole budget" in caught.value.message and len(session.ledger) == 0


def test_the_charges_carry_the_target_for_the_cost_report() -> None:
    session, _ = _run('with accuracy 10 at 0.95:\n    c = {{ count(t) }}\n    m = {{ mean(t, "age") }}\n')
    entries = list(session.ledger)
    assert all(e.details["accuracy_target"] == (10.0, 0.95) for e in entries)
    gradual = [e for e in entries if "gradual" in e.details]
    assert gradual and [e.details["gradual"]["step"] for e in gradual] == list(range(1, len(gradual) + 1))
