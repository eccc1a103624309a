"""Private values stay private: every route out is refused, and whether a program fails
never depends on the private rows."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from jostle import JostleRuntimeError, PrivacyError, Session

SCHEMA = {
    "age": {"type": "numeric", "bounds": [0, 100]},
    "sex": {"type": "categorical", "values": ["F", "M", "X"]},
}


def session_with(frame: pd.DataFrame) -> Session:
    s = Session(budget=5, seed=1, output=io.StringIO())
    s.bind_private("t", frame, SCHEMA)
    return s


@pytest.fixture
def session():
    return session_with(pd.DataFrame({"age": [30, 40, 70], "sex": ["F", "M", "F"]}))


@pytest.mark.parametrize("program", [
    "print(count(t))",
    "print([count(t)])",
    "print({n: count(t)})",
    "x = str(sum(t, 'age'))",
    "if count(t) > 0:\n    pass",
    "while count(t):\n    pass",
    "for i in range(count(t)):\n    pass",
    "for row in t:\n    pass",
    "x = [1, 2, 3][count(t)]",
    "x = 1 if count(t) else 2",
    "x = count(t) == 2",
    "x = 3 in [count(t)]",
    "x = sorted([count(t), 1])",
    "x = t.where(lambda r: r.age > mean(t, 'age'))",
    "x = t.where(lambda r: r.age > count(t))",
    "x = len(t)",
    "x = filter(lambda v: v, [count(t)])",
    "x = laplace(count(t), count(t))",
    "with budget count(t):\n    pass",
    "x = bin(t, 'age', [0, count(t), 100])",
    "x = numeric(0, count(t))",
    "x = exponential([count(t)], lambda c: 1, 1, 1)",
    "x = above_threshold([count(t)], count(t), 1)",
    "x = t.where(lambda r: len(r.age) > 2)",
    "x = t.where(lambda r: sum(r.age) > 2)",
    "x = t.where(lambda r: r.age[0] > 2)",
    "def f(r):\n    if r.age > 3:\n        return true\n    return false\nx = t.where(f)",
    "x = {{ t }}",
])
def test_every_route_out_is_refused(session, program):
    with pytest.raises(PrivacyError) as caught:
        session.run(program, "leak.jst")
    assert caught.value.span is not None and caught.value.span.source.name == "leak.jst"
    assert caught.value.hint
    assert len(session.ledger) == 0
    assert session.interpreter.output.getvalue() == ""


def test_refusal_names_where_the_private_value_was_made(session):
    with pytest.raises(PrivacyError) as caught:
        session.run("n = count(t)\nm = n + 1\nprint(m)", "p.jst")
    rendered = caught.value.render()
    assert "p.jst:3:7" in rendered
    assert "made by '+' at 2:5" in rendered


def test_private_values_may_be_described_but_not_shown(session):
    session.run("n = count(t)")
    assert session.describe("n").startswith("<private scalar, sensitivity 1")


@pytest.mark.parametrize("predicate", [
    "lambda r: r.sex + 1 > 0",
    "lambda r: sqrt(r.sex) > 1",
    "lambda r: r.sex",
])
def test_type_errors_in_row_functions_do_not_depend_on_the_rows(predicate):
    """An empty part and a full part fail identically (the error is decided on public probes)."""
    full = session_with(pd.DataFrame({"age": [30, 40], "sex": ["F", "M"]}))
    empty = session_with(pd.DataFrame({"age": pd.Series([], dtype=float), "sex": pd.Series([], dtype=object)}))
    messages = []
    for s in (full, empty):
        with pytest.raises(JostleRuntimeError) as caught:
            s.run(f"for part in partition(t, 'sex'):\n    x = part.where({predicate})")
        messages.append((caught.value.message, caught.value.span.line, caught.value.span.column))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("expression", [
    "count(t) * 1e300", "count(t) + 1e300", "count(t) / 1e-20", "count(t) + 1e16",
])
def test_constants_that_could_overflow_are_refused(session, expression):
    with pytest.raises(PrivacyError, match="public number combined with a private value"):
        session.run(f"x = {expression}")


def test_huge_bounds_are_refused():
    from jostle import DataError

    with pytest.raises(DataError, match="beyond"):
        Session(budget=1).bind_private("t", pd.DataFrame({"x": [1]}), {"x": ("numeric", 0, 1e20)})


def test_partition_parts_come_from_the_public_domain_even_when_empty(session):
    session.run("keys = map(lambda p: p.key, partition(t, 'sex'))")
    assert session.eval("keys") == ["F", "M", "X"]  # no row has sex X; its part exists anyway


def test_derived_categorical_columns_need_a_default(session):
    with pytest.raises(JostleRuntimeError, match="needs a default"):
        session.run("d = t.derive('old', lambda r: 'yes' if r.age > 60 else 'no', categorical(['yes', 'no']))")
