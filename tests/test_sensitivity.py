"""The sensitivity rules (jostle/language/sensitivity.py and jostle/language/tables.py), checked on values
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
    from jostle.language.sensitivity import private_vector

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


# ---------------------------------------------------------------- floating point (issue 11, hole 3)
from fractions import Fraction  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from jostle.language import mechanisms  # noqa: E402
from jostle.audit import SPAN, AuditContext, private_value  # noqa: E402
from jostle.language.sensitivity import exact_sum, sqrt_up, up  # noqa: E402

FLOAT_SCHEMA = {"age": {"type": "numeric", "bounds": [0, 100]},
                "name": {"type": "categorical", "values": ["a", "b"]}}
UNDERFLOW = "x = count(t)\nfor i in range(27):\n    x = x * 1e-12\n"
ROUNDING = '((count(t.where(lambda r: r.name == "b")) - 0.5) * 1e-9 + 0.0625) + 2 ** 49'


def names(*groups: str) -> pd.DataFrame:
    return pd.DataFrame({"age": [30.0] * len(groups), "name": list(groups)})


def held(frame: pd.DataFrame, program: str, name: str = "x"):
    s = Session(budget=1, seed=1, ledger_path=":memory:")
    s.bind_private("t", frame, FLOAT_SCHEMA)
    s.run(program)
    return s.interpreter.globals.lookup(name)


def test_hole3a_underflowed_sensitivity_is_positive_and_every_release_is_noisy():
    """count(t) * 1e-12, 27 times: the sensitivity (1e-12)^27 ~ 1e-324 used to underflow to 0.0
    while the value stayed a non-zero subnormal, and laplace, gaussian, report_noisy_max and
    above_threshold released it exactly. Now the value is exact, the sensitivity is rounded up
    (to the smallest subnormal, 5e-324), and each mechanism adds noise."""
    small, large = held(names("a", "a", "a"), UNDERFLOW), held(names("a", "a", "a", "a"), UNDERFLOW)
    step = Fraction(1e-12) ** 27
    assert small.value == 3 * step and large.value == 4 * step  # exact, no rounding at all
    assert small.l1 == large.l1 == 5e-324 >= step  # public, positive, and a bound
    releases = {
        "laplace": lambda c, x: mechanisms.laplace(c, x, 1.0, SPAN),
        "gaussian": lambda c, x: mechanisms.gaussian(c, x, 1.0, 1e-6, SPAN),
        "report_noisy_max": lambda c, x: mechanisms.report_noisy_max(c, (x, 3e-324), 1.0, SPAN),
        "above_threshold": lambda c, x: mechanisms.above_threshold(c, (x,), 3e-324, 1.0, SPAN),
    }
    for name, release in releases.items():
        outputs = {repr(release(AuditContext(seed), small)) for seed in range(60)}
        assert len(outputs) > 1, f"{name} released the value without noise: {outputs}"


def test_hole3b_rounding_at_2_49_is_calibrated():
    """laplace(((a - 0.5) * 1e-9 + 0.0625) + 2 ** 49, 1) - 2 ** 49 printed 0.0 for a = 0 and
    0.125 for a = 1, always: rounding at 2^49 moved the value by an ulp (0.125) against a
    tracked sensitivity of 1e-9. The value is now exact (2^49 + 0.0625 -+ 0.5e-9), so the
    noisy value lands above the rounding midpoint 2^49 + 0.0625 with probability
    P[Z > 0.5e-9] = e^-0.5 / 2 = 0.303 for a = 0 and 1 - 0.303 for a = 1 (ratio e^0.83 <= e^1)."""
    without, with_b = held(names("a"), f"x = {ROUNDING}"), held(names("a", "b"), f"x = {ROUNDING}")
    assert without.value == 2**49 + Fraction(1, 16) - Fraction(1e-9) / 2
    assert with_b.value - without.value == Fraction(1e-9) <= Fraction(without.l1)
    runs = 400
    p = math.exp(-0.5) / 2
    tolerance = 5 * math.sqrt(p * (1 - p) / runs)  # five standard deviations of a frequency
    for value, expected in ((without, p), (with_b, 1 - p)):
        ups = sum(mechanisms.laplace(AuditContext(seed), value, 1, SPAN) - 2**49 == 0.125 for seed in range(runs))
        assert abs(ups / runs - expected) < tolerance, (ups, expected)


def test_a_column_sum_is_exact_and_its_sensitivity_bounds_it():
    """Casacuberta et al. 2022: a float sum's rounding depends on the rows. In doubles,
    1e12 + 1e-5 + ... + 1e-5 loses every 1e-5 (each is below half an ulp of 1e12, 6e-5), so
    ten rows of 1e-5 change nothing; the exact sum keeps them."""
    frame = pd.DataFrame({"x": [1e12] + [1e-5] * 10})
    s = Session(budget=1, seed=1, ledger_path=":memory:")
    s.bind_private("t", frame, {"x": {"type": "numeric", "bounds": [0, 1e12]}})
    total = private(s, "sum(t, 'x')")
    assert total.value == Fraction(1e12) + 10 * Fraction(1e-5)
    assert float(np.add.reduce(frame["x"].to_numpy(), dtype=float)) == 1e12  # what doubles give
    assert total.l1 == 1e12


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.one_of(st.floats(min_value=-1e12, max_value=1e12), st.floats(min_value=-1e-300, max_value=1e-300),
                          st.integers(-10**6, 10**6)), max_size=40))
def test_exact_sum_is_the_rational_sum(values):
    assert exact_sum(np.asarray(values, dtype=float)) == sum((Fraction(float(v)) for v in values), Fraction(0))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.fractions(min_value=0, max_value=10**30, max_denominator=2**1200))
def test_up_and_sqrt_up_round_upward(q):
    assert Fraction(up(q)) >= q and (q == 0 or up(q) > 0)
    assert Fraction(sqrt_up(q)) ** 2 >= q


def test_disjoint_parts_combine_with_the_larger_sensitivity(session):
    """One row lies in at most one part of a partition: a difference of values on different
    parts moves by at most the larger sensitivity; overlapping data still adds up."""
    session.run("parts = t.partition('sex')\nother = t.partition('smoker')")
    assert private(session, "count(parts[0]) - 2 * count(parts[1])").l1 == 2
    assert private(session, "sum([count(parts[0]), 0.5 * count(parts[1])])").l1 == 1
    assert private(session, "count(parts[0]) - count(t)").l1 == 2
    assert private(session, "count(parts[0]) + count(parts[0])").l1 == 2
    assert private(session, "count(parts[0]) + count(other[0])").l1 == 2  # two different partitions


@pytest.mark.parametrize("expression, direction", [
    ("count(t)", 1), ("histogram(t, 'sex')", 1), ("sum(t, 'age')", 1), ("-count(t)", -1),
    ("2 * histogram(t, 'sex') + [3, 4]", 1), ("count(t) * -0.5", -1), ("100 - count(t)", -1),
    ("count(t) + count(t.where(lambda r: r.age > 3))", 1), ("count(t) - count(t)", 0),
    ("abs(count(t))", 0), ("sum([count(t), sum(t, 'age') / 10])", 1), ("sum([count(t), -count(t)])", 0),
    ("histogram(t, 'sex')[1]", 1), ("sum(-histogram(t, 'sex'))", -1),
])
def test_monotone_direction_is_tracked(session, expression, direction):
    assert private(session, expression).direction == direction


def test_times_zero_is_exactly_constant_and_released_as_such():
    """The one way to a tracked sensitivity of 0: the value is the same on every neighbour."""
    small, large = held(names("a"), "x = count(t) * 0"), held(names("a", "a"), "x = count(t) * 0")
    assert small.l1 == large.l1 == 0 and small.value == large.value == 0
    assert mechanisms.laplace(AuditContext(1), small, 1.0, SPAN) == 0.0


# Random chains of private arithmetic, evaluated by the language on neighbouring tables (one
# row added) and, independently, in exact rationals: the held values must be the exact
# results (what a release snaps), and the tracked L1 (which must not depend on the rows) must
# bound their change, as must the tracked monotone direction its sign. Chains mix tiny and
# huge factors and constants (underflow and rounding at 2^49, as in hole 3) and differences
# of disjoint partition parts (the max rule).
_FACTORS = st.one_of(st.sampled_from([1e-12, 1e12, -1e-12, 0.1, -3.0, 1 / 3, 2.0**-40, 0.0]),
                     st.floats(min_value=1e-12, max_value=1e12), st.floats(min_value=-1e12, max_value=-1e-12))
_CONSTANTS = st.one_of(st.sampled_from([0.0625, 2.0**49, -1e15, 0.1, 1e-300]),
                       st.floats(min_value=-1e15, max_value=1e15))
_STARTS = {"count(t)": lambda f: len(f), "sum(t, 'age')": lambda f: sum(Fraction(a) for a in f.age),
           "count(t.where(lambda r: r.name == 'b'))": lambda f: int((f.name == "b").sum()),
           "count(t.partition('name')[0])": lambda f: int((f.name == "a").sum()),   # disjoint parts of
           "count(t.partition('name')[1])": lambda f: int((f.name == "b").sum())}   # one partition
_OPS = st.one_of(
    st.tuples(st.just("*"), _FACTORS), st.tuples(st.just("/"), _FACTORS.filter(lambda c: c != 0)),
    st.tuples(st.just("+"), _CONSTANTS), st.tuples(st.just("-"), _CONSTANTS),
    st.tuples(st.just("neg"), st.none()), st.tuples(st.just("abs"), st.none()),
    st.tuples(st.sampled_from(["+x", "-x"]), st.sampled_from(list(_STARTS))),
)


def _program_and_oracle(start: str, ops: list) -> tuple[str, Any]:
    lines = ["parts = t.partition('name')", f"x = {start}".replace("t.partition('name')", "parts")]
    steps = []
    for op, arg in ops:
        if op in "*/+-":
            lines.append(f"x = x {op} {arg!r}")
            c = Fraction(arg)
            steps.append({"*": lambda v, f, c=c: v * c, "/": lambda v, f, c=c: v / c,
                          "+": lambda v, f, c=c: v + c, "-": lambda v, f, c=c: v - c}[op])
        elif op == "neg":
            lines.append("x = -x")
            steps.append(lambda v, f: -v)
        elif op == "abs":
            lines.append("x = abs(x)")
            steps.append(lambda v, f: abs(v))
        else:
            lines.append(f"x = x {op[0]} {arg}".replace("t.partition('name')", "parts"))
            sign = 1 if op[0] == "+" else -1
            steps.append(lambda v, f, g=_STARTS[arg], s=sign: v + s * Fraction(g(f)))

    def oracle(frame: pd.DataFrame) -> Fraction:
        value = Fraction(_STARTS[start](frame))
        for step in steps:
            value = step(value, frame)
        return value
    return "\n".join(lines), oracle


@settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(list(_STARTS)), st.lists(_OPS, min_size=1, max_size=30),
       st.lists(st.sampled_from(["a", "b"]), min_size=0, max_size=5),
       st.sampled_from(["a", "b"]), st.floats(min_value=0, max_value=100))
def test_random_chains_track_a_bound_on_the_exact_change(start, ops, groups, added, age):
    program, oracle = _program_and_oracle(start, ops)
    frame = pd.DataFrame({"age": [37.5] * len(groups), "name": groups})
    neighbour = pd.concat([frame, pd.DataFrame({"age": [age], "name": [added]})], ignore_index=True)
    try:
        before, after = held(frame, program), held(neighbour, program)
    except PrivacyError:  # a guard refused (e.g. a sensitivity above 1e100): on both, equally
        with pytest.raises(PrivacyError):
            held(neighbour, program)
        return
    assert before.value == oracle(frame) and after.value == oracle(neighbour)
    assert before.l1 == after.l1  # public: the same on both neighbours
    change = Fraction(after.value) - Fraction(before.value)
    assert abs(change) <= Fraction(before.l1)
    assert before.l1 > 0 or change == 0
    assert before.direction == after.direction and change * before.direction >= 0  # monotone claims hold
