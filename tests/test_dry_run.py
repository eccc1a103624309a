"""The dry run on public stand-ins (jostle.language.dry_run, jostle.data.stand_in): stand-ins are
valid for every kind of schema, a program's own mistake fails before anything is charged (the
durable ledger untouched), an over-budget total is refused before a file is read, the real run's
noise is unchanged by the dry run, and a scope the stand-ins cannot stand for skips it, saying so."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from jostle import Session
from jostle.data.schema import Categorical, Numeric, Schema, conform
from jostle.data.stand_in import STAND_IN_ROWS, stand_in_frame
from jostle.diagnostics.errors import BudgetExceeded, JostleRuntimeError
from jostle.language.dry_run import DRY_RUN_NOTE

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SCHEMA = Schema.of({
    "age": Numeric(0, 100),
    "visits": Numeric(0.5, 7.5, integer=True),
    "score": Numeric(-1.25, 1.25, default=0),
    "sex": Categorical(("F", "M")),
    "grade": Categorical((1, 2, 3, 4, 5, 6, 7)),
    "flag": Categorical((True, False), default=False),
    "region": Categorical(tuple(f"r{i}" for i in range(300))),
})


def test_a_stand_in_is_valid_for_every_kind_of_column_and_made_from_the_schema_alone():
    frame = stand_in_frame(SCHEMA)
    assert len(frame) == 300  # every one of the 300 regions appears
    assert len(stand_in_frame(Schema.of({"x": Numeric(0, 1)}))) == STAND_IN_ROWS
    conform(frame, SCHEMA, "t", strict=True)  # the curator's strict conformance accepts it
    assert frame["age"].min() == 0 and frame["age"].max() == 100  # the bounds are included
    assert set(frame["visits"]) == set(range(1, 8))  # whole numbers within the bounds
    assert frame["score"].min() == -1.25 and frame["score"].max() == 1.25
    for column in ("sex", "grade", "flag", "region"):
        assert set(frame[column]) == set(SCHEMA[column].values)
    assert not frame["sex"].equals(frame["flag"].map({True: "F", False: "M"}))  # not in lock-step
    pd.testing.assert_frame_equal(frame, stand_in_frame(SCHEMA))  # deterministic


@pytest.mark.parametrize("key", [Numeric(1, 10_000, integer=True), Categorical(tuple("abcdefghij"))])
def test_entity_keys_repeat_so_bounding_and_joins_do_something(key):
    left = stand_in_frame(Schema.of({"id": key, "x": Numeric(0, 1)}), entity_key="id")
    right = stand_in_frame(Schema.of({"id": key, "y": Categorical(("u", "v"))}), entity_key="id")
    per_key = left.groupby("id").size()
    assert per_key.max() > 3  # bound_per_key(3) drops rows
    assert per_key.min() == 1 or isinstance(key, Categorical)  # (ten categories hold every row)
    assert set(left["id"]) & set(right["id"])  # the tables of one database share their keys
    with Session(budget=1, ledger_path=":memory:", seed=1) as session:
        session.bind_database({"a": left, "b": right}, key="id",
                              schemas={"a": {"id": key, "x": Numeric(0, 1)}, "b": {"id": key, "y": Categorical(("u", "v"))}})
        frame = session.check("budget 1\nj = a.join(b, on=\"id\").bound_per_key(2)\nn = {{ count(j) }}\nk = {{ count_keys(a) }}\n")
    assert list(frame["mechanism"]) == ["{{ }} geometric", "{{ }} geometric"]
    assert frame.attrs["determined"] and str(frame.attrs["total"]) == "epsilon=1"


PROGRAM = """budget 1.0
with budget 0.5:
    n = {{ count(patients) }}
print("count", n)
print(n + "people")
"""


def _patients_session(tmp_path: Path, **options) -> Session:
    session = Session(budget=1.0, ledger_path=tmp_path / "ledger.sqlite", output=io.StringIO(), **options)
    session.bind_private("patients", EXAMPLES / "data" / "patients.csv", lifetime=3)
    return session


def test_a_mistake_after_a_release_fails_before_anything_is_charged(tmp_path):
    session = _patients_session(tmp_path)
    with pytest.raises(JostleRuntimeError) as caught:
        session.run(PROGRAM, "p.jst")
    assert caught.value.span.line == 5 and DRY_RUN_NOTE in caught.value.render()
    assert len(session.ledger) == 0 and session.interpreter.output.getvalue() == ""  # nothing charged, nothing printed
    session.close()
    with Session(ledger_path=tmp_path / "ledger.sqlite") as again:  # the durable ledger is untouched
        again.bind_private("patients", EXAMPLES / "data" / "patients.csv")
        assert [str(status.spent) for status in again.datasets] == ["epsilon=0"]
    (tmp_path / "second").mkdir()
    unchecked = _patients_session(tmp_path / "second", dry_run=False)
    with pytest.raises(JostleRuntimeError) as caught:
        unchecked.run(PROGRAM, "p.jst")
    assert DRY_RUN_NOTE not in caught.value.render() and len(unchecked.ledger) == 1  # spent for nothing


def test_a_total_that_cannot_fit_is_refused_before_any_file_is_read(tmp_path):
    program = ('budget 1\nt = load("no_such_file.csv", {age: numeric(0, 100)})\n'
               "for i in range(3):\n    x = laplace(count(t), 0.4)\n")
    with Session(ledger_path=":memory:") as session, pytest.raises(BudgetExceeded) as caught:
        session.run(program)  # the file does not exist: the refusal came before any read
    assert caught.value.span.line == 4 and DRY_RUN_NOTE in caught.value.render()
    with Session(ledger_path=":memory:", dry_run=False) as session, pytest.raises(Exception) as caught:
        session.run(program)
    assert "no_such_file.csv" in str(caught.value)  # without the dry run, the load is what fails


def test_a_seeded_run_prints_the_same_numbers_with_and_without_the_dry_run():
    outputs = []
    for dry_run in (True, False):
        out = io.StringIO()
        with Session(seed=7, ledger_path=":memory:", output=out, dry_run=dry_run) as session:
            session.run_file(EXAMPLES / "quickstart.jst")
            outputs.append((out.getvalue(), str(session.spent)))
    assert outputs[0] == outputs[1] and "patients (noisy)" in outputs[0][0]


def test_a_scope_left_by_an_earlier_run_skips_the_dry_run_with_a_warning(tmp_path):
    session = _patients_session(tmp_path)
    session.run("budget 1.0\nlimit = 3\n")  # public values are copied into the dry run
    session.run("with budget 0.1:\n    n = {{ count(patients) }}\n")
    assert not session.warnings
    session.run("def f():\n    return 1\n")  # a function holding the session's scope
    session.run("x = f()\n")
    assert ["no dry run before this run" in w.message for w in session.warnings] == [True]
    session.close()


def test_the_command_line_dry_runs_unless_told_not_to(tmp_path, capsys):
    from jostle.cli import main

    program = tmp_path / "p.jst"
    program.write_text(PROGRAM.replace("patients", "t").replace("budget 1.0\n", "budget 1.0\nt = load(\"people.csv\", {age: numeric(0, 9)})\n"))
    (tmp_path / "people.csv").write_text("age\n1\n2\n")
    assert main(["run", str(program), "--ledger-db", ":memory:"]) == JostleRuntimeError.exit_code
    printed = capsys.readouterr()
    assert "count" not in printed.out and "dry run" in printed.err  # failed before the release
    assert main(["run", str(program), "--ledger-db", ":memory:", "--no-dry-run"]) == JostleRuntimeError.exit_code
    printed = capsys.readouterr()
    assert "count" in printed.out and "dry run" not in printed.err  # released, then failed


def test_an_error_on_a_path_that_depends_on_a_release_is_left_to_the_real_run():
    """The stand-in has 120 rows, so its noisy count takes the branch; the real count (2000) does
    not: the dry run's error there is not the program's own mistake, and the program runs."""
    with Session(budget=2, ledger_path=":memory:", output=io.StringIO(), seed=1) as session:
        session.bind_private("patients", EXAMPLES / "data" / "patients.csv")
        session.run('n = laplace(count(patients), 1)\nif n < 500:\n    print(n + "x")\nprint("ok")\n')
        assert session.interpreter.output.getvalue() == "ok\n"
        assert ["depends on n (line 1)" in w.message for w in session.warnings] == [True]
