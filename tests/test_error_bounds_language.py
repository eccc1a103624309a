"""`accuracy(x, c)` and `interval(x, c)` in programs: laws on released values, their propagation,
the model/value dispatch of `accuracy`, bad inputs, and that carrying laws changed no released
value and consumed no randomness (jostle.language.noisy_values, builtins_accuracy)."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.diagnostics.errors import JostleRuntimeError, PrivacyError
from jostle.diagnostics.source import BUILTIN_SPAN
from jostle.language import mechanisms
from jostle.language.noisy_values import NoisyFloat, NoisyInt, law_of
from jostle.language.values import Private
from jostle.privacy import grid_release
from jostle.privacy.budget import Accountant
from jostle.privacy.error_bounds import CombinedLaw, NoiseLaw
from jostle.privacy.measures import Budget
from jostle.privacy.noise import Randomness

FRAME = pd.DataFrame({"age": (np.arange(400) * 7) % 90, "sex": ["F", "M", "M", "F", "M"] * 80})
SCHEMA = {"age": {"type": "numeric", "bounds": [0, 100]}, "sex": {"type": "categorical", "values": ["F", "M"]}}


def _session(seed: int = 5, frame: pd.DataFrame = FRAME, **kwargs) -> Session:
    session = Session(budget=50, delta=1e-5, seed=seed, ledger_path=":memory:", output=None, **kwargs)
    session.bind_private("t", frame, SCHEMA)
    return session


def _run(source: str, seed: int = 5, frame: pd.DataFrame = FRAME) -> list[str]:
    import io

    out = io.StringIO()
    session = Session(budget=50, delta=1e-5, seed=seed, ledger_path=":memory:", output=out)
    session.bind_private("t", frame, SCHEMA)
    session.run(source)
    return out.getvalue().splitlines()


class _Ctx:
    def __init__(self, seed: int) -> None:
        self.randomness = Randomness(seed)
        self.accountant = Accountant(Budget.of(100, Fraction(1, 2)))


def _private(value, l1: float, integer: bool, ctx: _Ctx) -> Private:
    return Private(value, l1, l1, BUILTIN_SPAN, "x", ctx.accountant.root, integer=integer)


def test_released_values_are_the_same_numbers_and_draws_as_the_plain_mechanism() -> None:
    """The value a release returns equals the grid release computed directly from the same seed, and
    the next draw after it is the same: carrying a law consumed no randomness."""
    ctx = _Ctx(11)
    value = mechanisms.laplace(ctx, _private(Fraction(12345, 7), 3.0, False, ctx), 0.5, BUILTIN_SPAN)
    after = ctx.randomness.discrete_laplace(Fraction(5), 3)
    direct = Randomness(11)
    plan = grid_release.laplace_plan(3.0, Fraction(1, 2), 1, False, False)
    expected = grid_release.release_laplace(direct, Fraction(12345, 7), plan)[0]
    assert value == expected and type(value) is NoisyFloat
    assert list(after) == list(direct.discrete_laplace(Fraction(5), 3))
    law = law_of(value)
    assert (law.kind, law.scale, law.grid) == ("discrete_laplace", float(plan.scale), float(plan.grid))
    assert ctx.accountant.ledger[-1].details["law"] == law


def test_a_program_prints_the_same_with_or_without_accuracy_calls() -> None:
    plain = 'a = geometric(t.count(), 1)\nb = laplace(t.sum("age"), 1)\nc = gaussian(t.count(), 1, 1e-6)\n' \
            'print(a, b, c, laplace(t.count(), 2))\n'
    with_bounds = 'a = geometric(t.count(), 1)\nx = accuracy(a, 0.95)\nb = laplace(t.sum("age"), 1)\n' \
                  'y = interval(b, 0.9)\nc = gaussian(t.count(), 1, 1e-6)\nz = accuracy(c + a, 0.5)\n' \
                  'print(a, b, c, laplace(t.count(), 2))\n'
    assert _run(plain, seed=3) == _run(with_bounds, seed=3)


def test_released_scalars_behave_as_their_numbers() -> None:
    ctx = _Ctx(2)
    count = mechanisms.geometric(ctx, _private(40, 1.0, True, ctx), 1.0, BUILTIN_SPAN)
    real = mechanisms.laplace(ctx, _private(Fraction(5, 2), 1.0, False, ctx), 1.0, BUILTIN_SPAN)
    assert isinstance(count, NoisyInt) and isinstance(real, NoisyFloat)
    assert json.loads(json.dumps([count, real])) == [int(count), float(real)]
    assert repr(count) == repr(int(count)) and str(real) == str(float(real)) and f"{real:.3f}" == f"{float(real):.3f}"
    assert hash(count) == hash(int(count)) and np.asarray([count, real]).dtype == float
    assert type(count + 1) is int and type(real * 2) is float  # arithmetic outside Jostle drops the law


def test_to_python_strips_the_law() -> None:
    session = _session()
    session.run("a = geometric(t.count(), 1)\nb = laplace(t.sum(\"age\"), 1)\nh = geometric(t.histogram(\"sex\"), 1)")
    assert type(session.eval("a")) is int and type(session.eval("b")) is float
    assert type(session.eval("accuracy(b, 0.95)")) is float


@pytest.mark.parametrize("expression, expected", [
    ("accuracy(g, 0.95)", 3.0),                     # geometric, eps 1: P(|K| <= 3) = 0.9526
    ("accuracy(g + g, 0.95)", 6.0),                 # the same release twice: one noise, coefficient 2
    ("accuracy(g - g, 0.95)", 0.0),
    ("accuracy(3 * g - 1, 0.95)", 9.0),
    ("accuracy(-g / 2, 0.95)", 1.5),
    ("accuracy(h[0], 0.95)", 6.0),                  # a cell keeps its law (eps 0.5)
    ("accuracy(h[\"F\"] - h[\"M\"], 0.95)", 8.0),   # two independent cells, convolved exactly
    ("accuracy(g + g2, 0.95)", 4.0),                # two independent releases
])
def test_propagation(expression: str, expected: float) -> None:
    source = ("g = geometric(t.count(), 1)\ng2 = geometric(t.count(), 1)\nh = geometric(t.histogram(\"sex\"), 0.5)\n"
              f"print({expression})\n")
    assert _run(source) == [repr(expected)]


def test_vectors_give_a_half_width_and_an_interval_per_cell() -> None:
    source = ('h = geometric(t.histogram("sex"), 0.5)\nprint(accuracy(h, 0.95))\nprint(accuracy(h * 2 + h, 0.95))\n'
              'iv = interval(h, 0.95)\nprint(iv[1] - iv[0])\nprint(accuracy(laplace(t.count(), 1), 0.95) > 2.99)\n')
    assert _run(source) == ["[6.0, 6.0]", "[18.0, 18.0]", "[12.0, 12.0]", "true"]


def test_accuracy_keeps_the_classifier_use() -> None:
    """Three arguments: the classifier's accuracy, with its own checks (tests/test_tree_language.py runs it
    on trained models); two: the error bound; a model and a table without the target: told so."""
    with pytest.raises(JostleRuntimeError, match="needs a trained model"):
        _run('print(accuracy(3, t, "sex"))\n')
    with pytest.raises(JostleRuntimeError, match="needs the target column"):
        _run('print(accuracy(3, t))\n')


@pytest.mark.parametrize("expression, error, words", [
    ("accuracy(g * g, 0.95)", JostleRuntimeError, "product of two released values"),
    ("accuracy(g / g, 0.95)", JostleRuntimeError, "quotient by a released value"),
    ("accuracy(round(g / 3), 0.95)", JostleRuntimeError, "not a release"),
    ("accuracy(g > 3, 0.95)", JostleRuntimeError, "truth value"),
    ("accuracy(g, 1.5)", JostleRuntimeError, r"in \(0, 1\)"),
    ("accuracy(g, 0)", JostleRuntimeError, r"in \(0, 1\)"),
    ("interval(g, \"high\")", JostleRuntimeError, "must be a number"),
    ("accuracy(t.count(), 0.95)", PrivacyError, "release it first"),
    ("interval(t.count(), 0.95)", PrivacyError, "private"),
    ("accuracy(report_noisy_max([t.count(), 3], 1), 0.9)", JostleRuntimeError, "selection"),
])
def test_bad_inputs_are_clear_errors_and_spend_nothing(expression: str, error: type, words: str) -> None:
    session = _session()
    session.run("g = geometric(t.count(), 1)")
    spent = session.spent
    with pytest.raises(error, match=words) as raised:
        session.run(f"x = {expression}")
    assert raised.value.span is not None and raised.value.hint
    if "noisy_max" not in expression:
        assert session.spent == spent


def test_a_mean_is_an_estimate_and_a_sum_says_it_was_clipped() -> None:
    session = _session()
    session.run('m = laplace(t.mean("age"), 1)\ns = laplace(t.sum("age"), 1)\nw = accuracy(m, 0.95)\n'
                'iv = interval(s, 0.95)')
    warnings = [str(w) for w in session.warnings]
    assert any("estimate" in w for w in warnings)
    assert any("clamped to its declared [0, 100]" in w for w in warnings)
    assert 0 < session.eval("w") < 5


def test_ledger_entries_carry_the_law() -> None:
    session = _session()
    session.run('a = gaussian(t.count(), 1, 1e-6)\nb = geometric(t.histogram("sex"), 1)')
    laws = [entry.details.get("law") for entry in session.ledger]
    assert [law.kind for law in laws] == ["discrete_gaussian", "discrete_laplace"]
    assert all(isinstance(law, NoiseLaw) for law in laws) and laws[0].norm == "one_axis"


def test_law_of_sums_is_a_combined_law() -> None:
    ctx = _Ctx(4)
    a = mechanisms.geometric(ctx, _private(10, 1.0, True, ctx), 1.0, BUILTIN_SPAN)
    b = mechanisms.geometric(ctx, _private(10, 1.0, True, ctx), 1.0, BUILTIN_SPAN)
    from jostle.language import operators

    total = operators.binary("+", a, b, BUILTIN_SPAN)
    assert isinstance(law_of(total), CombinedLaw) and len(law_of(total).terms) == 2
    assert law_of(operators.binary("+", a, 5, BUILTIN_SPAN)) == law_of(a)
    assert math.isclose(law_of(operators.binary("*", a, 2, BUILTIN_SPAN)).half_width(0.95), 6.0)



COUNTS = np.arange(50, dtype=np.int64) * 3
REALS = np.linspace(0, 9, 50)


@pytest.mark.parametrize("mechanism, truth, stated_level", [
    (lambda ctx: mechanisms.geometric(ctx, _private(COUNTS, 1.0, True, ctx), 1.0, BUILTIN_SPAN), COUNTS, 0.9732),
    (lambda ctx: mechanisms.laplace(ctx, _private(REALS, 2.0, False, ctx), 0.7, BUILTIN_SPAN), REALS, 0.95),
    (lambda ctx: mechanisms.gaussian(ctx, _private(COUNTS, 1.0, True, ctx), 1.0, 1e-6, BUILTIN_SPAN), COUNTS, 0.95),
])
def test_seeded_coverage_is_the_stated_one(mechanism, truth: np.ndarray, stated_level: float) -> None:
    """60 releases of 50 cells (3,000 independent errors): the share within the stated 95% half-width
    is within 4 binomial sds of the stated coverage (a false alarm about once in 16,000 runs)."""
    ctx = _Ctx(20261127)
    within, stated = 0, []
    for _ in range(60):
        released = mechanism(ctx)
        for value, true, law in zip(np.asarray(released, dtype=float), truth, law_of(released)):
            width = law.half_width(0.95)
            stated.append(law.coverage(width))
            within += abs(value - float(true)) <= width
    level = float(np.mean(stated))
    assert abs(level - stated_level) < 5e-4
    assert abs(within / 3000 - level) <= 4 * math.sqrt(level * (1 - level) / 3000)


@pytest.mark.parametrize("mechanism, budget, integer, length", [
    ("gaussian", Budget.of(1, Fraction(1, 10**6)), True, 8),     # a histogram: one-axis certification
    ("gaussian", Budget.of(Fraction(1, 3), Fraction(1, 10**5)), False, 1),
    ("laplace", Budget.of(Fraction(2, 7)), False, 5),
    ("geometric", Budget.of(Fraction(1, 2)), True, 1),
])
def test_law_for_is_what_the_release_uses(mechanism: str, budget: Budget, integer: bool, length: int) -> None:
    from jostle.privacy.error_bounds import law_for

    ctx = _Ctx(9)
    value = np.arange(length, dtype=np.int64 if integer else float) if length > 1 else (7 if integer else 2.5)
    private = _private(value, 1.0, integer, ctx)
    if mechanism == "gaussian":
        released = mechanisms.gaussian(ctx, private, budget.epsilon, float(budget.delta), BUILTIN_SPAN)
    else:
        released = getattr(mechanisms, mechanism)(ctx, private, budget.epsilon, BUILTIN_SPAN)
    law = law_of(released)
    law = law[0] if isinstance(law, tuple) else law
    predicted = law_for(mechanism, 1.0, budget, integer=integer, length=length, l1=1.0)
    assert (law.kind, law.scale, law.grid) == (predicted.kind, predicted.scale, predicted.grid)
