"""Issue 28: the ledger's `what` column describes a release as the program wrote it (the
program's variable, the where/derive/select/bin steps, shortened), from program text and public
names only; and `jostle ledger show --summary`."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from jostle.cli import main
from jostle.session import Session

SCHEMA = {"age": {"type": "numeric", "bounds": [0, 100]},
          "income": {"type": "categorical", "values": ["<=50K", ">50K"]},
          "sex": {"type": "categorical", "values": ["F", "M"]}}
ROWS = pd.DataFrame({"age": [25, 40, 61, 33], "income": ["<=50K", ">50K", ">50K", "<=50K"],
                     "sex": ["F", "M", "F", "M"]})

PROGRAM = """
with budget 1:
    rich = hr.where(lambda r: r.income == ">50K")
    a = {{ count(rich) }}
    b = {{ count(hr.where(lambda r: r.age >= 40 and r.sex == "F")) }}
    c = {{ sum(hr.derive("decade", lambda r: r.age // 10, numeric(0, 10)), "decade") }}
    for part in partition(rich, "sex"):
        d = {{ count(part) }}
    e = {{ count(hr) }}
    f = {{ count(hr.where(lambda r: r.age > 10 and r.age > 11 and r.age > 12 and r.age > 13 and r.age > 14)) }}
"""

EXPECTED = [
    'count(rich: hr.where(r.income == ">50K"))',
    'count(hr.where(r.age >= 40 and r.sex == "F"))',
    "sum(hr.derive(\"decade\", r.age // 10), 'decade')",
    'count(hr.where(r.income == ">50K")[sex=F])',
    'count(hr.where(r.income == ">50K")[sex=M])',
    "count(hr)",
    "count(hr.where(r.age > 10 and r.age > 11 and r.age...))",
]


def _descriptions(frame: pd.DataFrame, tmp_path: Path, engine: str = "auto") -> list[str]:
    path = tmp_path / "adult.csv"
    frame.to_csv(path, index=False)
    session = Session(budget=2, seed=1, ledger_path=":memory:", output=io.StringIO(), engine=engine)
    session.bind_private("people", path, SCHEMA)
    session.run("hr = people\n" + PROGRAM, "prog.jst")
    return [charge.description for charge in session.ledger]


def test_releases_are_described_as_the_program_wrote_them(tmp_path: Path) -> None:
    assert _descriptions(ROWS, tmp_path) == EXPECTED


@pytest.mark.parametrize("frame", [ROWS.iloc[:3], ROWS.iloc[[0]], ROWS.iloc[:0]])
def test_descriptions_never_depend_on_the_rows(frame: pd.DataFrame, tmp_path: Path) -> None:
    assert _descriptions(frame, tmp_path) == EXPECTED


def test_the_same_descriptions_on_an_engine(tmp_path: Path) -> None:
    pytest.importorskip("duckdb")
    assert _descriptions(ROWS, tmp_path, engine="duckdb") == EXPECTED


def test_a_loaded_file_is_named_by_the_variable(tmp_path: Path) -> None:
    ROWS.to_csv(tmp_path / "adult.csv", index=False)
    session = Session(budget=1, seed=1, ledger_path=":memory:", output=io.StringIO(), search_path=[tmp_path])
    session.run(f'hr = load("{tmp_path / "adult.csv"}", {{age: numeric(0, 100), income: categorical(["<=50K", '
                '">50K"])})\nwith budget 1:\n    n = {{ count(hr.where(lambda r: r.income == ">50K")) }}')
    assert [c.description for c in session.ledger] == ['count(hr.where(r.income == ">50K"))']


def test_ledger_show_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "people.csv"
    ROWS.to_csv(data, index=False)
    (tmp_path / "people.schema.json").write_text(
        '{"columns": ' + __import__("json").dumps(SCHEMA) + ', "dataset": "hr", "lifetime": 3}', encoding="utf-8")
    program = tmp_path / "p.jst"
    program.write_text("hr = people\n" + PROGRAM, encoding="utf-8")
    db = str(tmp_path / "ledger.sqlite")
    for _ in range(2):
        assert main(["run", str(program), "--data", f"people={data}", "--ledger-db", db, "--budget", "1"]) == 0
    capsys.readouterr()
    assert main(["ledger", "show", "--summary", "--db", db]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("1 dataset, hash chain intact")
    header = out[1].split()
    assert header[:4] == ["dataset", "unit", "releases", "resets"]
    row = out[2].split()
    assert row[:4] == ["hr", "row", "14", "0"]  # 7 releases per run, two runs
    assert row[4] == "2" and row[-2:] == ["epsilon=3", "epsilon=1"]  # spent 2 of a lifetime of 3
    mechanisms = {" ".join(line.split()[1:4]): line.split()[4] for line in out if line.startswith("hr ")
                  and "{{" in line}
    assert mechanisms == {"{{ }} geometric": "12", "{{ }} laplace": "2"}
    assert main(["ledger", "show", "--summary", "--dataset", "nope", "--db", db]) != 0
