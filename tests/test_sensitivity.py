"""The sensitivity rules (jostle/sensitivity.py and jostle/tables.py), checked on values
the evaluator makes, and the refusals for operations whose sensitivity is unknown."""

from __future__ import annotations

import math

import pytest

from jostle import PrivacyError, Session
from tests.conftest import PATIENT_SCHEMA


def private(session: Session, expression: str):
    """Evaluate `expression` and return the hidden Private value (tests only)."""
    session.run(f"_probe = {expression}")
    return session.interpreter.globals.lookup("_probe")


@pytest.fixture
def session(patients):
    s = Session(budget=10, seed=1)
    s.bind_private("t", patients, PATIENT_SCHEMA)
    return s


@pytest.mark.parametrize("expression, l1", [
    ("count(t)", 1),
    ("sum(t, 'age')", 100),
    ("count(t) + count(t)", 2),
    ("count(t) - sum(t, 'age')", 101),
    ("3 * count(t)", 3),
    ("count(t) * -0.5", 0.5),
    ("count(t) / 4", 0.25),
    ("-count(t)", 1),
    ("count(t) + 1000", 1),
    ("abs(count(t) - 50)", 1),
    ("histogram(t, 'sex')", 1),
    ("histogram(t, 'sex', 'smoker')", 1),
    ("sum(histogram(t, 'sex'))", 1),
    ("histogram(t, 'sex')[0]", 1),
    ("count(t.where(lambda r: r.age > 30))", 1),
    ("sum(t.where(lambda r: r.sex == 'F'), 'age')", 100),
    ("count(t.select('age'))", 1),
    ("2 * histogram(t, 'sex') + histogram(t, 'sex')", 3),
])
def test_l1_sensitivity(session, expression, l1):
    value = private(session, expression)
    assert value.l1 == pytest.approx(l1)


def test_sum_sensitivity_uses_the_larger_bound_magnitude():
    s = Session(budget=1, seed=1)
    import pandas as pd

    s.bind_private("t", pd.DataFrame({"x": [1, 2]}), {"x": {"type": "numeric", "bounds": [-30, 5]}})
    assert private(s, "sum(t, 'x')").l1 == 30


def test_list_of_private_scalars_has_l1_sum_and_l2_root_sum_of_squares(session):
    value = private(session, "[count(t), 2 * count(t), 0]")
    from jostle.sensitivity import private_vector

    vector = private_vector(list(value), session.interpreter.globals.lookup("_probe")[0].origin)
    assert vector.l1 == 3
    assert vector.l2 == pytest.approx(math.sqrt(5))


def test_histogram_l2_is_one(session):
    assert private(session, "histogram(t, 'sex', 'smoker')").l2 == 1


def test_partition_parts_depend_on_their_own_part(session):
    session.run("parts = partition(t, 'sex')")
    f = private(session, "count(parts[0])")
    m = private(session, "count(parts[1])")
    both = private(session, "count(parts[0]) + count(parts[1])")
    assert f.node is not m.node
    assert both.node is session.accountant.root


@pytest.mark.parametrize("expression, message", [
    ("count(t) * count(t)", "multiply two private"),
    ("count(t) / count(t)", "divide by a private"),
    ("10 / count(t)", "divide by a private"),
    ("count(t) ** 2", "sensitivity is unknown"),
    ("count(t) % 2", "sensitivity is unknown"),
    ("sqrt(count(t))", "no known sensitivity"),
    ("log(count(t))", "no known sensitivity"),
    ("exp(count(t))", "no known sensitivity"),
    ("count(t) > 3", "cannot be compared"),
    ("count(t) == 3", "cannot be compared"),
    ("max(count(t), 1)", "max\\(\\) cannot take a private value"),
    ("round(count(t))", "cannot take a private value"),
    ("mean(t, 'age') + 1", "private mean"),
    ("t.where(lambda r: r.age > count(t))", "filter threshold"),
    ("len(t)", "number of rows of a private table is private"),
])
def test_operations_without_known_sensitivity_are_refused(session, expression, message):
    with pytest.raises(PrivacyError, match=message):
        session.run(f"x = {expression}")
    assert len(session.ledger) == 0
