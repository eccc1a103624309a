"""The dry run and the cost report show nothing about the private rows (jostle.language.dry_run,
"Privacy"): on neighbouring tables (one row removed; one entity removed; a table bound with no
schema, declared by the program) the report and the dry run's errors are identical, and so are
the charges it would make. A negative control checks that the comparison can fail: the same
program's REAL run does differ on the neighbours (its released counts)."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from jostle import Session
from jostle.diagnostics.errors import JostleError

PATIENTS = Path(__file__).resolve().parents[2] / "examples" / "data" / "patients.csv"
SCHEMA = {"age": ("numeric", 0, 100), "region": ("categorical", ["north", "south", "east", "west"]),
          "diabetic": ("categorical", ["yes", "no"])}
REPORTED = ("budget 1\n"
            "with budget 0.5:\n    n = {{ count(patients) }}\n"
            "for part in patients.partition(\"region\"):\n    m = laplace(count(part), 0.1)\n"
            "if n > 100:\n    k = laplace(count(patients.where(lambda r: r.diabetic == \"yes\")), 0.2)\n")
FAILING = ("budget 1\nwith budget 0.5:\n    n = {{ count(patients) }}\nprint(n[1])\n")


def _neighbours() -> tuple[pd.DataFrame, pd.DataFrame]:
    frame = pd.read_csv(PATIENTS)[["age", "region", "diabetic"]].head(300)
    return frame, frame.drop(index=17).reset_index(drop=True)


def _session(frame: pd.DataFrame, with_schema: bool) -> Session:
    session = Session(ledger_path=":memory:", seed=1, output=io.StringIO())
    session.bind_private("patients", frame, SCHEMA if with_schema else None)
    return session


def _observed(frame: pd.DataFrame, with_schema: bool) -> tuple:
    declare = "" if with_schema else ("private patients: {age: numeric(0, 100), region: categorical([\"north\", "
                                      "\"south\", \"east\", \"west\"]), diabetic: categorical([\"yes\", \"no\"])}\n")
    report = _session(frame, with_schema).check(REPORTED.replace("budget 1\n", "budget 1\n" + declare))
    try:
        _session(frame, with_schema).run(FAILING.replace("budget 1\n", "budget 1\n" + declare))
        error = None
    except JostleError as caught:
        error = caught.render()
    return report.to_dict("records"), {k: str(v) for k, v in report.attrs.items()}, error


@pytest.mark.parametrize("with_schema", [True, False])
def test_the_report_and_the_dry_run_errors_are_identical_on_neighbouring_tables(with_schema):
    one, other = _neighbours()
    first, second = _observed(one, with_schema), _observed(other, with_schema)
    assert first == second
    assert first[2] is not None and "dry run" in first[2]  # the error was the dry run's
    assert first[1]["determined"] == "False" and "n (line" in first[1]["depends"]


def test_neighbouring_entity_databases_give_the_same_report():
    visits = pd.DataFrame({"pid": [1, 1, 2, 3, 3, 3], "cost": [5, 7, 1, 2, 9, 4]})
    schemas = {"visits": {"pid": ("numeric", 1, 9), "cost": ("numeric", 0, 10)}}
    program = "budget 1\nv = visits.bound_per_key(2)\nx = laplace(sum(v, \"cost\"), 0.5)\nwith budget 0.5:\n    y = {{ count_keys(visits) }}\n"
    reports = []
    for frame in (visits, visits[visits["pid"] != 3]):
        with Session(ledger_path=":memory:", output=io.StringIO()) as session:
            session.bind_database({"visits": frame}, key="pid", schemas=schemas)
            report = session.check(program)
            reports.append((report.to_dict("records"), str(report.attrs["total"])))
    assert reports[0] == reports[1] and len(reports[0][0]) == 2


def test_negative_control_the_real_run_does_differ_on_the_neighbours():
    one, other = _neighbours()
    printed = []
    for frame in (one, other):
        session = _session(frame, True)
        session.dry_run = False
        session.run("budget 1000000\nx = laplace(count(patients), 1000000)\nprint(round(x))\n", "c.jst")
        printed.append(session.interpreter.output.getvalue())
    assert printed[0] != printed[1]
