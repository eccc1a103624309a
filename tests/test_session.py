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


def test_released_values_come_back_as_python_and_pandas(session):
    session.run("with budget 0.5:\n    n = {{ count(patients) }}\n    h = {{ histogram(patients, 'sex') }}")
    n = session.eval("n")
    h = session.eval("h")
    assert isinstance(n, int)
    # A released histogram is a Series indexed by its cells (the public domain), named after its column.
    assert isinstance(h, pd.Series) and list(h.index) == ["F", "M"] and h.index.name == "sex"
    assert h.dtype.kind == "i" and len(h) == 2
    assert session.eval("[1, {a: 2}]") == [1, {"a": 2}]
    # It stays labelled wherever it goes; a vector computed from it is a plain array.
    listed = session.eval("[h, {cells: h}]")
    assert isinstance(listed[0], pd.Series) and isinstance(listed[1]["cells"], pd.Series)
    doubled = session.eval("h * 2")
    assert isinstance(doubled, np.ndarray) and list(doubled) == [2 * v for v in h]


def test_released_2d_histogram_is_a_frame_and_3d_a_multiindex(session):
    session.run("h2 = laplace(histogram(patients, 'sex', 'smoker'), 0.2)\n"
                "h3 = geometric(histogram(patients, 'smoker', 'sex', 'smoker'), 0.2)")
    h2 = session.eval("h2")
    assert isinstance(h2, pd.DataFrame) and h2.shape == (2, 2)
    assert list(h2.index) == ["F", "M"] and list(h2.columns) == ["yes", "no"]
    assert (h2.index.name, h2.columns.name) == ("sex", "smoker")
    h3 = session.eval("h3")
    assert isinstance(h3, pd.Series) and h3.index.names == ["smoker", "sex", "smoker"]
    assert list(h3.index)[:2] == [("yes", "F", "yes"), ("yes", "F", "no")] and len(h3) == 8


def test_labels_are_the_public_domain_and_private_vectors_stay_refused(session):
    """The labels are the schema's categories in order, whatever the rows hold; a private
    histogram is still refused, and an exact public histogram is labelled the same way."""
    session.bind_private("none_smoke", pd.DataFrame({"smoker": ["no"] * 5}),
                         {"smoker": ("categorical", ["yes", "no", "sometimes"])})
    session.run("e = geometric(histogram(none_smoke, 'smoker'), 0.1)\nraw = histogram(patients, 'sex')")
    assert list(session.eval("e").index) == ["yes", "no", "sometimes"]
    with pytest.raises(PrivacyError):
        session.eval("raw")
    session.bind_public("pub", pd.DataFrame({"g": ["a", "b", "a"]}), {"g": ("categorical", ["b", "a", "c"])})
    exact = session.eval("histogram(pub, 'g')")
    assert exact.to_dict() == {"b": 1, "a": 2, "c": 0}


def test_an_estimate_of_a_histogram_keeps_its_cells(session):
    """A learner's estimate of a histogram's cells (an Option run on it) comes back labelled."""
    session.run("est = Identity(histogram(patients, 'smoker'), all_ranges(2), epsilon=0.1)")
    estimate = session.eval("est")
    assert isinstance(estimate, pd.Series) and list(estimate.index) == ["yes", "no"]


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
    assert "left for this run" in str(ledger)


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
    s.bind_private("patients", patients, PATIENT_SCHEMA, lifetime=3)
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
    with pytest.raises(CheckError, match="bound but has no schema") as caught:
        s.run("n = count(p)")
    # Bound from a DataFrame: the hint names schema= and the declaration, not a schema file.
    assert "schema=" in caught.value.hint and "private p:" in caught.value.hint
    assert "schema file" not in caught.value.hint and ".schema.json" not in caught.value.hint
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


def test_a_csv_bound_without_a_schema_file_names_the_file_it_looked_for(tmp_path):
    (tmp_path / "visits.csv").write_text("age\n30\n")
    s = Session(budget=1, ledger_path=":memory:", output=io.StringIO())
    s.bind_private("v", tmp_path / "visits.csv")
    with pytest.raises(CheckError) as caught:
        s.run("n = count(v)")
    assert str(tmp_path / "visits.schema.json") in caught.value.hint


def test_a_curators_data_error_has_no_fake_location(patients):
    """An error about data bound from Python is about no place in a program: its text starts
    with the message, not with `<builtin>:0:0:`."""
    s = Session(budget=1, ledger_path=":memory:")
    bad = patients.assign(sex=["X"] + list(patients["sex"][1:]))
    with pytest.raises(DataError) as caught:
        s.bind_private("p", bad, PATIENT_SCHEMA)
    assert str(caught.value).startswith("table 'p', column 'sex', row 1")
    assert "<builtin>" not in str(caught.value) and "<builtin>" not in caught.value.render()


def test_bind_public_reads_a_csv_path(tmp_path):
    (tmp_path / "rates.csv").write_text("region,rate\nnorth,0.5\nsouth,1.5\n")
    s = Session(budget=1, ledger_path=":memory:")
    s.bind_public("rates", tmp_path / "rates.csv")
    s.bind_public("again", str(tmp_path / "rates.csv"))
    assert s.eval("sum(rates, 'rate')") == 2.0
    assert s.eval("again").to_dict("list") == {"region": ["north", "south"], "rate": [0.5, 1.5]}
    assert len(s.ledger) == 0


CATEGORY_TYPO = """
with budget 1:
    for part in t.partition("sex"):
        n = {{ count(part.where(lambda r: r.smoker == "Yes")) }}
    m = {{ count(t.where(lambda r: r.smoker in ["yes", "sometimes"])) }}
    k = {{ count(t.where(lambda r: r.smoker != "no")) }}
"""


def _warnings_on(frame: pd.DataFrame) -> list[str]:
    s = Session(budget=1, seed=3, ledger_path=":memory:", output=io.StringIO())
    s.interpreter.on_warning = lambda warning: None  # kept in s.warnings, not written to stderr
    s.bind_private("t", frame, PATIENT_SCHEMA)
    s.run(CATEGORY_TYPO, "typo.jst")
    return [warning.render() for warning in s.warnings]


def test_a_category_outside_the_public_domain_is_warned_about_from_the_schema_alone(patients):
    """`r.smoker == "Yes"` where the schema lists "yes": a warning, once (not once per part),
    located, with the categories and a guess; never for a listed category. The same program on
    other rows (none at all, or none of the compared category) gives exactly the same warnings."""
    warnings = _warnings_on(patients)
    assert len(warnings) == 2, warnings
    first, second = warnings
    assert first.startswith("warning: 'Yes' is not a category of column 'smoker': "
                            "the comparison is false on every row")
    assert "--> typo.jst:4:43" in first and "did you mean 'yes'?" in first
    assert "['yes', 'no']" in first and "public schema" in first
    assert second.startswith("warning: 'sometimes' is not a category of column 'smoker': no row holds it")
    assert _warnings_on(patients.iloc[:0]) == warnings
    assert _warnings_on(patients.assign(smoker="no")) == warnings


def test_warnings_go_to_stderr_by_default_and_are_not_errors(patients, capsys):
    s = Session(budget=1, seed=3, ledger_path=":memory:", output=io.StringIO())
    s.bind_private("t", patients, PATIENT_SCHEMA)
    s.run('with budget 1:\n    n = {{ count(t.where(lambda r: r.sex == "female")) }}')
    err = capsys.readouterr().err
    assert err.startswith("warning: 'female' is not a category of column 'sex'") and "^" in err
    assert isinstance(s.eval("n"), int) and len(s.warnings) == 1


def test_a_release_inside_the_standard_library_is_located_at_the_users_call(patients):
    """stats.private_mean releases in stdlib/stats.jst; the ledger (and the durable ledger)
    place the charge at the user's call, keeping the library line as `library_span`."""
    s = Session(budget=1, seed=3, ledger_path=":memory:", output=io.StringIO())
    s.bind_private("t", patients, PATIENT_SCHEMA)
    program = ("import stats\n"
               "def average(table):\n"
               "    return stats.private_mean(table, 'age', 0.25)\n"
               "m = average(t)\n"
               "q = stats.private_median(t, 'age', 0.25)\n")
    s.run(program, "study.jst")
    charges = list(s.ledger)
    assert [c.span.location for c in charges] == ["study.jst:3:12", "study.jst:5:5"]
    assert all(Path(c.library_span.source.name).name == "stats.jst" for c in charges)
    assert "stats.jst" not in str(s.ledger)
    with pytest.raises(BudgetExceeded) as caught:
        s.run("z = stats.private_mean(t, 'age', 1)", "again.jst")
    assert caught.value.span.location == "again.jst:1:5"
    assert "stats.jst" in caught.value.render()


def test_a_release_in_a_users_own_module_stays_where_it_is_written(tmp_path, patients):
    (tmp_path / "mine.jst").write_text("def noisy(t):\n    return laplace(count(t), 0.5)\n")
    s = Session(budget=1, seed=3, ledger_path=":memory:", output=io.StringIO(), search_path=[tmp_path])
    s.bind_private("t", patients, PATIENT_SCHEMA)
    s.run("import mine\nn = mine.noisy(t)\n", "main.jst")
    (charge,) = list(s.ledger)
    assert charge.span.location.endswith("mine.jst:2:12") and charge.library_span is None
