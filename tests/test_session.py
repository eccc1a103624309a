"""The Python embedding: Session, bindings, eval, ledger, typed errors."""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jostle import (
    BudgetExceeded,
    CheckError,
    DataError,
    JostleError,
    JostleSyntaxError,
    PrivacyError,
    Session,
    UsageError,
)
from tests.conftest import PATIENT_SCHEMA


@pytest.fixture
def session(patients):
    s = Session(budget=1.0, seed=11, output=io.StringIO())
    s.bind_private("patients", patients, PATIENT_SCHEMA)
    return s


def test_released_values_come_back_as_python_and_numpy(session):
    session.run("with budget 0.5:\n    n = {{ count(patients) }}\n    h = {{ histogram(patients, 'sex') }}")
    n = session.eval("n")
    h = session.eval("h")
    assert isinstance(n, int)
    assert isinstance(h, np.ndarray) and h.shape == (2,)
    assert session.eval("[1, {a: 2}]") == [1, {"a": 2}]


def test_private_values_never_reach_python(session):
    session.run("n = count(patients)")
    with pytest.raises(PrivacyError, match="cannot be returned to Python") as caught:
        session.eval("n")
    assert "count(patients)" in caught.value.render()
    with pytest.raises(PrivacyError):
        session.eval("patients")


def test_ledger_records_every_charge_with_line_and_mechanism(session):
    session.run("a = laplace(count(patients), 0.25)\n\nb = geometric(count(patients), 0.5)", "prog.jst")
    ledger = session.ledger
    assert [c.mechanism for c in ledger] == ["laplace", "geometric"]
    assert [c.span.line for c in ledger] == [1, 3]
    assert float(session.spent.epsilon) == pytest.approx(0.75)
    assert float(session.remaining.epsilon) == pytest.approx(0.25)
    frame = ledger.to_frame()
    assert list(frame["epsilon"]) == [0.25, 0.5]
    assert "remaining" in str(ledger)


def test_over_budget_fails_before_release_and_keeps_state(session):
    session.run("x = laplace(count(patients), 0.9)")
    with pytest.raises(BudgetExceeded) as caught:
        session.run("y = laplace(count(patients), 0.2)")
    assert len(session.ledger) == 1
    assert float(caught.value.requested) == pytest.approx(0.2)
    assert float(caught.value.remaining) == pytest.approx(0.1)
    assert float(caught.value.difference) == pytest.approx(0.1)
    with pytest.raises(CheckError):  # y was never bound
        session.eval("y")


def test_budget_persists_across_runs(session):
    for _ in range(4):
        session.run("x = laplace(count(patients), 0.25)")
    with pytest.raises(BudgetExceeded):
        session.run("x = laplace(count(patients), 0.25)")


def test_program_budget_statement_sets_total_when_session_has_none(patients):
    s = Session(seed=1)
    s.bind_private("patients", patients, PATIENT_SCHEMA)
    s.run("budget 0.5\nn = {{ count(patients) }}")
    assert float(s.remaining.epsilon) == 0
    with pytest.raises(BudgetExceeded):
        s.run("m = laplace(count(patients), 0.1)")


def test_program_budget_is_a_cap_inside_the_session_total(session):
    with pytest.raises(BudgetExceeded):
        session.run("budget 0.2\nx = laplace(count(patients), 0.3)")
    assert len(session.ledger) == 0


def test_no_budget_means_no_release(patients):
    s = Session()
    s.bind_private("patients", patients, PATIENT_SCHEMA)
    with pytest.raises(BudgetExceeded, match="no privacy budget"):
        s.run("x = laplace(count(patients), 0.1)")


def test_bind_private_without_schema_needs_a_declaration(patients):
    s = Session(budget=1, seed=2, output=io.StringIO())
    s.bind_private("p", patients)
    with pytest.raises(CheckError, match="bound but has no schema"):
        s.run("n = count(p)")
    s.run('private p: {age: numeric(0, 100), sex: categorical(["F", "M"])}\n'
          "with budget 0.5:\n    n = {{ count(p) }}")
    assert abs(s.eval("n") - len(patients)) < 200


def test_bind_private_schema_is_never_inferred_and_is_checked(patients):
    s = Session(budget=1)
    with pytest.raises(DataError, match="no column 'weight'"):
        s.bind_private("p", patients, {"weight": {"type": "numeric", "bounds": [0, 1]}})
    bad = patients.assign(sex=["X"] + list(patients["sex"][1:]))
    with pytest.raises(DataError, match="column 'sex', row 1"):
        s.bind_private("p", bad, PATIENT_SCHEMA)


def test_values_outside_bounds_are_clamped(patients):
    s = Session(budget=1)
    s.bind_private("p", pd.DataFrame({"x": [-5, 50, 500]}), {"x": {"type": "numeric", "bounds": [0, 100]}})
    frame = s.interpreter.globals.lookup("p").frame
    assert list(frame["x"]) == [0, 50, 100]


def test_bind_public_tables_are_exact_and_free():
    s = Session(budget=1)
    s.bind_public("pub", pd.DataFrame({"x": [1, 2, 3], "g": ["a", "b", "a"]}))
    s.run("n = {{ count(pub) }}\ns = sum(pub, 'x')\nh = histogram(pub, 'g')")
    assert s.eval("n") == 3
    assert s.eval("s") == 6
    assert list(s.eval("h")) == [2, 1]
    assert len(s.ledger) == 0
    s.bind_public("k", {"eps": 0.1, "cols": ["a", "b"]})
    assert s.eval("k.eps") == 0.1


def test_print_goes_to_the_session_output(patients):
    out = io.StringIO()
    s = Session(budget=1, output=out)
    s.run("print(1 + 1, 'x', [1, 2])")
    assert out.getvalue() == "2 x [1, 2]\n"


def test_errors_are_typed_and_rendered_with_carets(session):
    with pytest.raises(JostleSyntaxError) as caught:
        session.run("x = (1 +\n", "bad.jst")
    rendered = caught.value.render()
    assert "bad.jst:" in rendered and "^" in rendered
    with pytest.raises(CheckError, match="did you mean 'patients'"):
        session.run("n = count(patiens)")


def test_usage_errors():
    with pytest.raises(UsageError):
        Session(budget=-1)
    with pytest.raises(UsageError):
        Session(budget=1).bind_private("not a name", pd.DataFrame({"x": [1]}), {"x": ("numeric", 0, 1)})
    with pytest.raises(UsageError):
        Session(budget=1).eval("x = 1")


def test_seeded_sessions_are_reproducible_and_default_is_secure(patients):
    def release(seed):  # independent sessions: no ledger shared between them
        s = Session(budget=1, seed=seed, ledger_path=":memory:")
        s.bind_private("p", patients, PATIENT_SCHEMA)
        s.run("x = laplace(count(p), 0.5)")
        return s.eval("x")

    assert release(5) == release(5)
    assert release(5) != release(6)
    assert Session().randomness.secure
    assert not Session(seed=1).randomness.secure


def test_run_file_and_imports_resolve_beside_the_program(tmp_path):
    (tmp_path / "helpers.jst").write_text("def double(x):\n    return 2 * x\n")
    (tmp_path / "main.jst").write_text("import helpers\nresult = helpers.double(21)\n")
    s = Session(budget=1)
    s.run_file(tmp_path / "main.jst")
    assert s.eval("result") == 42


# ---------------------------------------------------------------- hole 7 (issue 11)
def _bound_file(tmp_path, rows=("alice,30", "bob,41")) -> tuple[Session, io.StringIO, Path]:
    """A session whose curator bound small.csv as the private table t."""
    small = tmp_path / "small.csv"
    small.write_text("name,age\n" + "\n".join(rows) + "\n")
    out = io.StringIO()
    s = Session(budget=1, seed=3, output=out, ledger_path=":memory:")
    s.bind_private("t", small, {"name": ("categorical", ["alice", "bob"]), "age": ("numeric", 0, 100)})
    return s, out, small


def test_hole7_load_public_of_the_bound_private_file_is_refused(tmp_path):
    """The audit's reproducer: load_public("small.csv") on the file bound as t printed every row."""
    s, out, small = _bound_file(tmp_path)
    with pytest.raises(PrivacyError, match="holds the private table 't'") as caught:
        s.run(f"print(rows(load_public('{small}')))")
    assert "alice" not in caught.value.render() and "hint" in caught.value.render()
    assert out.getvalue() == "" and len(s.ledger) == 0


def test_hole7_a_symlink_or_hard_link_of_the_private_file_is_refused(tmp_path):
    s, out, small = _bound_file(tmp_path)
    (tmp_path / "link.csv").symlink_to(small)
    os.link(small, tmp_path / "hard.csv")
    for name in ("link.csv", "hard.csv"):
        with pytest.raises(PrivacyError, match="holds the private table 't'"):
            s.run(f"p = load_public('{tmp_path / name}')")
        with pytest.raises(PrivacyError, match="holds the private table 't'"):
            s.run(f"p = load_public('{tmp_path / name}', {{age: numeric(0, 100)}})")
    # A file with other rows is public data: read as usual.
    (tmp_path / "other.csv").write_text("name,age\ncarol,50\n")
    s.run(f"print(rows(load_public('{tmp_path / 'other.csv'}')))")
    assert "carol" in out.getvalue()


def test_hole7_the_refusal_never_depends_on_the_private_rows(tmp_path):
    """The guard decides on the binding (path, inode), never on the rows: a program that writes
    its guess of the whole table to a file must not learn from a refusal whether the guess is
    exact. On neighbouring bound tables, reading the guess behaves identically."""
    guess = tmp_path / "guess.csv"
    guess.write_text("name,age\nalice,30\nbob,41\n")
    outcomes = []
    for rows in (["alice,30", "bob,41"], ["alice,30"]):
        folder = tmp_path / str(len(rows))
        folder.mkdir()
        s, out, _ = _bound_file(folder, rows)
        s.run(f"print(len(rows(load_public('{guess}'))))")
        outcomes.append((out.getvalue(), len(s.ledger)))
    assert outcomes[0] == outcomes[1] == ("2\n", 0)


def test_hole7_a_program_cannot_declare_the_row_count_of_private_data_public(tmp_path):
    """`load(path, schema, public_rows=true)` on the bound file is refused; the curator's binding
    alone can declare it. Loading the same file as private stays possible."""
    s, out, small = _bound_file(tmp_path)
    with pytest.raises(PrivacyError, match="holds the private table 't'") as caught:
        s.run(f"u = load('{small}', {{name: categorical(['alice', 'bob'])}}, public_rows=true)")
    assert "public_rows" in caught.value.render()
    s.run(f"u = load('{small}', {{name: categorical(['alice', 'bob'])}})")
    with pytest.raises(JostleError, match="public_rows"):
        s.run(f"u = load('{small}', {{name: categorical(['alice', 'bob'])}}, public_rows=1)")


def test_hole7_a_file_the_program_loaded_as_private_cannot_then_be_read_as_public(tmp_path):
    (tmp_path / "mine.csv").write_text("x\n1\n2\n")
    s = Session(budget=1, ledger_path=":memory:", output=io.StringIO())
    with pytest.raises(PrivacyError, match="holds the private table 'mine'"):
        s.run(f"t = load('{tmp_path / 'mine.csv'}', {{x: numeric(0, 5)}})\n"
              f"p = load_public('{tmp_path / 'mine.csv'}')")


def test_the_curator_declares_a_public_row_count_in_the_schema_file(tmp_path):
    (tmp_path / "survey.csv").write_text("answer\nyes\nno\nyes\n")
    (tmp_path / "survey.schema.json").write_text(
        '{"columns": {"answer": {"type": "categorical", "values": ["yes", "no"]}}, "public_rows": true}')
    s = Session(budget=1, seed=2, ledger_path=":memory:", output=io.StringIO())
    s.bind_private("survey", tmp_path / "survey.csv")
    assert s.interpreter.globals.lookup("survey").public_rows
    s.run("r = randomized_response(survey, 'answer', 1)")
    assert len(s.eval("r")) == 3
