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


# ---------------------------------------------------------------- issue 11, hole 9 (mechanisms)
NAN = "(1e308 * 10 - 1e308 * 10)"  # inf - inf: a public NaN


@pytest.mark.parametrize("program, noun", [
    (f"x = report_noisy_max([count(t), {NAN}], 1)", "report_noisy_max: score 1"),
    (f"x = exponential([1, 2], lambda c: count(t) if c == 1 else {NAN}, 1, 1)", "exponential: utility 1"),
    (f"x = above_threshold([count(t), {NAN}], 2, 1)", "above_threshold: query 1"),
    (f"x = exponential([1, 2], lambda c: count(t), 1, {NAN})", "positive finite public sensitivity"),
    (f"x = above_threshold([count(t)], {NAN}, 1)", "the threshold must be finite"),
])
def test_hole9_nan_score_refused_before_charge(session, program, noun):
    """A NaN public score or utility was charged, then crashed the sampler (exit 70). It is a
    located JostleRuntimeError now, raised before anything is charged."""
    with pytest.raises(JostleRuntimeError) as caught:
        session.run(program, "scores.jst")
    assert noun in caught.value.message
    assert caught.value.span is not None and caught.value.span.source.name == "scores.jst"
    assert caught.value.hint
    assert len(session.ledger) == 0


def test_hole9_float_epsilon_never_runs_above_the_charged_rational():
    """float(1/10) = 0.1000000000000000055 > 1/10: a release handed the double of a charged
    rational ran at more than was charged. safe_noise now runs at the double below it."""
    from fractions import Fraction

    from jostle.privacy import safe_noise

    for charged in (Fraction(1, 10), Fraction(1, 3), Fraction(2, 7), Fraction(7, 10**6), Fraction(1, 2)):
        assert safe_noise._epsilon(float(charged)) <= charged
        assert safe_noise._epsilon(charged) == charged
        exact_plan = safe_noise.vector_plan(4, 1.0, charged)
        float_plan = safe_noise.vector_plan(4, 1.0, float(charged))
        # the noise (scale = steps / epsilon, on the same grid) is never smaller than charged
        assert float_plan.grid == exact_plan.grid and float_plan.scale >= exact_plan.scale


@pytest.mark.real_run  # audits the real run's draws and charges (tests/conftest.py)
def test_hole9_quantile_declares_the_quantile_sensitivity(monkeypatch):
    """stats.private_quantile declared 1 + q. -|#(x <= c) - q n| moves by 1 - q or q per row
    (n = #(x <= c) + #(x > c)), so it declares max(q, 1 - q), and the language's tracker,
    which sees the two disjoint counts, agrees: the utilities' tracked sensitivity is at most
    the declared one (exponential would refuse otherwise)."""
    from jostle.language import mechanisms

    seen = []
    original = mechanisms.exponential

    def spy(ctx, candidates, utilities, epsilon, sensitivity, span):
        seen.append((max(u.l1 for u in utilities), sensitivity))
        return original(ctx, candidates, utilities, epsilon, sensitivity, span)

    monkeypatch.setattr(mechanisms, "exponential", spy)
    frame = pd.DataFrame({"age": [20, 35, 50, 65, 80], "sex": ["F", "M", "F", "M", "F"]})
    s = session_with(frame)
    s.run("import stats\na = stats.private_quantile(t, 'age', 0.9, 1, 8)\nb = stats.private_median(t, 'age', 1, 8)")
    assert seen == [(0.9, 0.9), (0.5, 0.5)]
    assert s.spent.epsilon == 2
