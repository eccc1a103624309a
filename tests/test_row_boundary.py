"""The row-function boundary (issue 11, holes 1 and 5), run on neighbouring tables.

A row function (the lambda of `where` / `derive`) sees the row it is given: `r.col` is that
row's value (evaluated on the whole column at once). These tests pin down, by construction,
that a row function can combine only the columns of its own row and public scalars, and that
whether it fails, and its message, never depends on the rows:

  * hole 1: columns of one table reaching another table's row function (or a public table),
    public lists or vectors broadcast against the rows (a length oracle);
  * hole 5: errors decided pair by pair on the probes (a membership oracle), and errors or
    overflow that happen only for some rows.

Every program runs on two neighbouring tables (one row removed) with the same seed; when it
spends nothing, everything observable must be identical.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.diagnostics.errors import JostleError, PrivacyError

SCHEMA = {"name": ("categorical", ["alice", "bob", "carol", "dave"]), "age": ("numeric", 0, 100)}


def neighbours() -> tuple[pd.DataFrame, pd.DataFrame]:
    big = pd.DataFrame({"name": ["alice", "bob", "carol", "dave"], "age": [31.0, 45.0, 37.0, 60.0]})
    return big, big.iloc[:3].reset_index(drop=True)


def observe(program: str, private: pd.DataFrame, schema=SCHEMA, public: dict | None = None) -> tuple[str, str, str]:
    """(output, error class, error message) of `program` run on `private` bound as t."""
    out = io.StringIO()
    session = Session(budget=1.0, seed=3, output=out, ledger_path=":memory:")
    session.bind_private("t", private, schema)
    for name, frame in (public or {}).items():
        session.bind_public(name, frame)
    try:
        session.run(program)
        error, message = "", ""
    except JostleError as caught:
        error, message = type(caught).__name__, caught.render()
    assert session.spent.epsilon == 0, "these programs must not spend budget"
    return out.getvalue(), error, message


def on_both(program: str, schema=SCHEMA, tables=None, public=None) -> tuple[str, str, str]:
    """Run on both neighbours, assert everything observable is identical, return it."""
    big, small = tables or neighbours()
    public_big = {k: v(big) if callable(v) else v for k, v in (public or {}).items()}
    public_small = {k: v(small) if callable(v) else v for k, v in (public or {}).items()}
    first = observe(program, big, schema, public_big)
    second = observe(program, small, schema, public_small)
    assert first == second, f"observable difference between neighbours:\n{first}\n---\n{second}"
    return first


def ids_as_long_as(frame: pd.DataFrame) -> pd.DataFrame:
    """A public table with as many rows as the private one (the attacker's best case)."""
    return pd.DataFrame({"id": list(range(len(frame))), "age": [0.0] * len(frame)})


# ---------------------------------------------------------------- hole 1
SPY = """
def spy(r):
    pub = ids.derive("age", lambda s: r.age, numeric(0, 100))
    print(map(lambda q: q.age, rows(pub)))
    return r.age > 0
u = t.where(spy)
"""


def test_hole1_row_function_cannot_reach_a_public_table():
    output, error, message = on_both(SPY, public={"ids": ids_as_long_as})
    assert output == "" and error == "PrivacyError"
    assert "only combine" in message and "row it is given" in message


def test_hole1_columns_of_two_tables_cannot_mix():
    program = 'u = t.where(lambda r: t.where(lambda s: s.age > r.age) == none)\n'
    assert on_both(program)[1] == "PrivacyError"
    program = 'u = t.where(lambda r: count(ids.where(lambda s: s.age < r.age)) > 0)\n'
    assert on_both(program, public={"ids": ids_as_long_as})[1] == "PrivacyError"


def test_hole1_a_public_table_row_function_cannot_return_a_private_column():
    program = """
def leak(r):
    return ids.derive("copy", lambda s: r.name, categorical(["alice", "bob", "carol", "dave"], default="alice"))
u = t.where(lambda r: leak(r) == none)
"""
    assert on_both(program, public={"ids": ids_as_long_as})[1] == "PrivacyError"


@pytest.mark.parametrize("value", ["[1, 2, 3]", "[1, 2, 3, 4]", "[true, false, true]"])
def test_hole1_public_list_result_is_refused_whatever_its_length(value):
    program = f'v = {value}\nu = t.derive("z", lambda r: v, numeric(0, 10))\n'
    output, error, message = on_both(program)
    assert error == "JostleRuntimeError" and "one value per row" in message


def test_hole1_conditional_cannot_broadcast_a_public_list():
    program = 'u = t.where(lambda r: true if r.age > 40 else [true, false, true])\n'
    output, error, message = on_both(program)
    assert error == "JostleRuntimeError" and "public list" in message


def test_hole1_a_released_vector_is_not_a_column():
    program = 'budget 1\nu = t.derive("z", lambda r: laplace(histogram(t, "name"), 1), numeric(0, 10))\n'
    for frame in neighbours():
        session = Session(seed=1, output=io.StringIO(), ledger_path=":memory:")
        session.bind_private("t", frame, SCHEMA)
        with pytest.raises(JostleError, match="one value per row"):
            session.run(program)


def test_hole1_columns_cannot_reach_releases_or_options():
    for call in ["laplace(r.age, 1)", "geometric(r.age, 1)", "len(r.name)", "sum([r.age])"]:
        program = f"budget 1\nu = t.where(lambda r: {call} > 0)\n"
        output, error, message = on_both(program)
        assert error in ("PrivacyError", "JostleRuntimeError"), call


def test_hole1_row_functions_still_work():
    program = """
u = t.where(lambda r: r.age > 40 and r.name != "dave")
v = u.derive("older", lambda r: r.age + 5 if r.age < 90 else 100, numeric(0, 100))
w = v.derive("tag", lambda r: "x" if r.name in ["alice", "bob"] else "y", categorical(["x", "y"], default="y"))
with budget 0.5:
    print(len({{ histogram(w, "tag") }}))
"""
    for frame in neighbours():
        out = io.StringIO()
        session = Session(budget=1.0, seed=3, output=out, ledger_path=":memory:")
        session.bind_private("t", frame, SCHEMA)
        session.run(program)
        assert out.getvalue() == "2\n"


def test_hole1_public_table_row_functions_are_unchanged():
    public = pd.DataFrame({"x": [1.0, 2.0, 3.0], "c": ["a", "b", "a"]})
    out = io.StringIO()
    session = Session(budget=1.0, seed=3, output=out, ledger_path=":memory:")
    session.bind_public("p", public)
    session.run('q = p.where(lambda r: r.x > 1).derive("y", lambda r: r.x * 2, numeric(0, 10))\n'
                'print(map(lambda row: row.y, rows(q)))\n')
    assert out.getvalue() == "[4.0, 6.0]\n"


# ---------------------------------------------------------------- hole 5
CODES = {"a": ("categorical", [0, 2]), "b": ("categorical", [1, -1])}


@pytest.mark.parametrize("rows", [[(2, -1), (0, 1)], [(2, -1), (0, 1), (0, -1)]])
def test_hole5_probes_cover_the_cross_product(rows):
    frame = pd.DataFrame(rows, columns=["a", "b"])
    output, error, message = observe("u = t.where(lambda r: r.a ** r.b > 100)\n", frame, CODES)
    # 0 ** -1 is undefined: the probe tries every pair of domain values, so the program is
    # refused on both tables (before, it failed only when a row held a=0, b=-1).
    assert error == "JostleRuntimeError" and "'**'" in message


def test_hole5_failures_on_rows_never_raise():
    # Numeric domains cannot be probed exhaustively: age 37 is not a probe point, so the probe
    # passes; on the rows the division by zero happens only if someone is 37. Such rows take the
    # missing value (dropped by where, the default in derive) instead of failing the program.
    schema = {"name": ("categorical", ["alice", "bob", "carol", "dave"]), "age": ("numeric", 0, 100),
              "one": ("categorical", [1])}
    big = pd.DataFrame({"name": ["alice", "bob", "carol", "dave"], "age": [31.0, 45.0, 37.0, 60.0],
                        "one": [1, 1, 1, 1]})
    program = """
u = t.where(lambda r: r.one / (r.age - 37) > 0)
v = t.derive("inv", lambda r: r.one / (r.age - 37), numeric(-1, 1, default=0))
with budget 0.5:
    c = {{ count(u) }}
"""
    for frame in (big, big.drop(index=2).reset_index(drop=True)):
        session = Session(budget=1.0, seed=1, output=io.StringIO(), ledger_path=":memory:")
        session.bind_private("t", frame, schema)
        session.run(program)
        assert session.spent.epsilon == 0.5


def test_hole5_overflow_in_derive_is_not_an_oracle():
    schema = {"x": ("categorical", [1, 400]), "y": ("categorical", [1, 2])}
    program = 'u = t.derive("big", lambda r: 10 ** (r.x * r.y), numeric(0, 1e12))\n'
    for rows in ([(1, 1), (400, 2)], [(1, 1)]):
        output, error, message = observe(program, pd.DataFrame(rows, columns=["x", "y"]), schema)
        assert error == "JostleRuntimeError" and "digits" in message or error == "", (error, message)


def test_hole5_failing_rows_take_the_missing_value():
    # Semantics shown on a public table, whose rows can be printed: x / (y - 37) in Python
    # numbers divides by zero on the middle row only (37 is no probe point), which takes the
    # derive's default and is dropped by where.
    public = pd.DataFrame({"x": [1, 2, 3], "y": [1.0, 37.0, 1000.0]})
    out = io.StringIO()
    session = Session(budget=1.0, seed=1, output=out, ledger_path=":memory:")
    session.bind_public("p", public, {"x": ("categorical", [1, 2, 3]), "y": ("numeric", 0, 1000)})
    session.run('u = p.derive("q", lambda r: r.x / (r.y - 37), numeric(-10, 10, default=7))\n'
                'print(map(lambda row: row.q, rows(u)))\n'
                'print(len(rows(p.where(lambda r: r.x / (r.y - 37) < 1))))\n')
    assert out.getvalue() == f"[{1 / -36!r}, 7.0, {3 / 963!r}]\n2\n"


def test_hole5_a_memory_error_on_a_row_is_not_caught_per_row():
    """Catching MemoryError per row would let rows change each other's outcome (whether row i
    runs out of memory depends on what earlier rows hold): it must propagate, not be a missing
    value. Found by an adversarial review."""
    from jostle.language.row_apply import ROW_ERRORS, _apply_to_rows

    assert not issubclass(MemoryError, ROW_ERRORS)

    def exhausting(a):
        if a.size == 1 and a[0] == "big":
            raise MemoryError
        if a.size > 1:
            raise TypeError  # force the row-by-row path
        return a

    with pytest.raises(MemoryError):
        _apply_to_rows(exhausting, [np.asarray(["x", "big", "y"], dtype=object)], 3, np.asarray(["x"], dtype=object))


def test_hole5_huge_texts_are_refused_on_the_probe():
    program = 'u = t.where(lambda r: r.name == "x" and not (r.name * 10000000 == "q"))\n'
    output, error, message = on_both(program)
    assert error == "JostleRuntimeError" and "characters" in message


# ---------------------------------------------------------------- what reaches the program's eyes
LEAKY_MESSAGES = [
    'q = all_ranges(histogram(t, "name"))',
    'x = gaussian(1, 1, sum(t, "age"))',
    'x = prefixes(mean(t, "age"))',
    'x = randomized_response(t, {a: count(t)}, 1)',
    'x = t.select([count(t), "age"])',
    'x = FriedmanSchuster(t, count(t), epsilon=1)',
]


@pytest.mark.parametrize("program", LEAKY_MESSAGES)
def test_error_messages_never_show_a_private_value(program):
    """Private values, records, columns and tables print as their public description only: an
    error that quotes a bad argument (`got {x!r}`) showed `Private(value=array([1, 1, 1]), ...)`
    before (found by an adversarial review). The message is the same on both neighbours."""
    output, error, message = on_both(program)
    assert error and "value=" not in message and "array(" not in message


def test_reprs_of_private_values_are_descriptions():
    from jostle.language.values import Private, PrivateMean, Record

    big, _ = neighbours()
    session = Session(budget=1.0, seed=3, output=io.StringIO(), ledger_path=":memory:")
    session.bind_private("t", big, SCHEMA)
    session.run('h = histogram(t, "name")\nm = mean(t, "age")\nrec = {a: count(t)}\n')
    for name in ("h", "m", "rec", "t"):
        value = session.interpreter.globals.lookup(name)
        assert repr(value) == str(value)
        assert "31" not in repr(value) and "value=" not in repr(value), repr(value)
    assert isinstance(session.interpreter.globals.lookup("m"), PrivateMean)
    assert isinstance(session.interpreter.globals.lookup("h"), Private)
    assert isinstance(session.interpreter.globals.lookup("rec"), Record)


@pytest.mark.parametrize("expression", ["t.count", "{m: t.where}", "[t.histogram]", "lambda: 0",
                                        "count"])
def test_eval_returns_data_only(expression):
    """A bound method or closure holds the scope it was made in (t.count holds t): returning it
    to Python handed the private frame over (found by an adversarial review)."""
    big, _ = neighbours()
    session = Session(budget=1.0, seed=3, output=io.StringIO(), ledger_path=":memory:")
    session.bind_private("t", big, SCHEMA)
    with pytest.raises(PrivacyError, match="cannot be returned to Python"):
        session.eval(expression)
    assert session.eval("[1, {a: 2.5}, none]") == [1, {"a": 2.5}, None]
