"""Issue 28: `jostle schema draft DATA`, the curator's tool: a draft schema file from a data file
the curator owns, every category spelled out, bounds rounded outward and marked as read from
private data, which round-trips through the schema reader and admits every row of the file.
It is reachable from the command line only, never from a program or a Session."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from jostle.cli import main
from jostle.cli.schema_draft import draft_path, round_outward
from jostle.diagnostics.errors import DataError
from jostle.data.schema import Categorical, Numeric, conform, read_csv, read_schema_declaration, schema_file_for

EDUCATION = ["Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm", "Assoc-voc", "9th",
             "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate", "5th-6th", "Preschool"]


def _adult_like(path: Path, rows: int = 120, seed: int = 5) -> Path:
    """An Adult-like CSV (generated): leading spaces as in the UCI file, '?' for unknown work."""
    rng = random.Random(seed)
    lines = ["age,workclass,education,education-num,fnlwgt,hours-per-week,income"]
    for i in range(rows):
        education = EDUCATION[i % len(EDUCATION)]  # every level at least once
        work = rng.choice([" Private", " State-gov", " ?", " Self-emp-inc"])
        lines.append(f"{rng.randint(17, 90)},{work}, {education},{EDUCATION.index(education) + 1},"
                     f"{rng.randint(12285, 1484705)},{rng.randint(1, 99)}, {rng.choice(['<=50K', '>50K'])}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_draft_round_trips_and_admits_every_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _adult_like(tmp_path / "adult.csv")
    assert main(["schema", "draft", str(data)]) == 0
    out = capsys.readouterr().out
    target = draft_path(data)
    assert target.name == "adult.schema.draft.json" and target.exists()
    assert not schema_file_for(data).exists()  # nothing binds a draft until the curator renames it
    assert "DRAFT" in out and "NOT public" in out
    with pytest.raises(DataError, match="still the draft"):  # read from the rows: refused until reviewed
        read_schema_declaration(target)
    reviewed = json.loads(target.read_text(encoding="utf-8"))
    reviewed["comment"] = reviewed["comment"][1:]  # the curator reviewed it and deleted the DRAFT line
    target.write_text(json.dumps(reviewed), encoding="utf-8")
    declared = read_schema_declaration(target)
    schema = declared.schema
    assert schema.names == ["age", "workclass", "education", "education-num", "fnlwgt", "hours-per-week", "income"]
    assert isinstance(schema["education"], Categorical)
    assert sorted(schema["education"].values) == sorted(EDUCATION)
    assert len(schema["education"].values) == 16
    assert sorted(schema["workclass"].values) == ["?", "Private", "Self-emp-inc", "State-gov"]
    age = schema["age"]
    assert isinstance(age, Numeric) and age.integer
    frame = read_csv(data)
    ages = frame["age"].astype(int)
    assert age.lo <= ages.min() and age.hi >= ages.max()
    assert (age.lo, age.hi) != (ages.min(), ages.max()) or (ages.min() == 0 and ages.max() % 10 == 0)
    conformed = conform(frame, schema, "adult", strict=True)  # the curator's strict route: no row refused
    assert len(conformed) == len(frame)
    comment = json.loads(target.read_text(encoding="utf-8"))["comment"]
    assert comment[0].startswith("Replace") or comment[0].startswith("A schema")  # the DRAFT line was deleted
    assert any("not" in line and "public" in line for line in comment)
    assert any(line.startswith("'age': bounds") for line in comment)


def test_the_draft_is_never_overwritten_silently(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _adult_like(tmp_path / "people.csv", rows=20)
    assert main(["schema", "draft", str(data)]) == 0
    draft_path(data).write_text("kept", encoding="utf-8")
    assert main(["schema", "draft", str(data)]) == 2
    assert draft_path(data).read_text(encoding="utf-8") == "kept"
    assert main(["schema", "draft", str(data), "--force"]) == 0
    assert main(["--budget", "1", "schema", "draft", str(data)]) == 2
    capsys.readouterr()
    assert main(["schema", "draft", str(data), "--output", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["columns"]["income"]["values"] == ["<=50K", ">50K"]


def test_missing_cells_identifiers_and_parquet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    duckdb = pytest.importorskip("duckdb")
    data = tmp_path / "t.parquet"
    duckdb.sql(f"COPY (SELECT i AS id, 'name ' || i AS who, i % 3 AS grp, CASE WHEN i = 4 THEN NULL ELSE i * 0.5 "
               f"END AS score, i % 2 = 0 AS even FROM range(0, 300) t(i)) TO '{data}' (FORMAT parquet)")
    assert main(["schema", "draft", str(data), "--max-categories", "50", "--output", str(tmp_path / "d.json")]) == 0
    document = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))
    columns = document["columns"]
    assert "who" not in columns  # 300 distinct texts: left out, and said so
    assert any("'who' has more than 50 distinct values" in line for line in document["comment"])
    assert columns["grp"] == {"type": "numeric", "bounds": [0, 2], "integer": True}
    assert columns["score"]["type"] == "numeric" and "integer" not in columns["score"]
    assert any("'score' has missing cells" in line for line in document["comment"])
    assert columns["even"] == {"type": "categorical", "values": [False, True]}
    read_schema_declaration(tmp_path / "d.json", allow_draft=True)  # the draft itself, as the command checks it


@pytest.mark.parametrize("lo, hi", [(17, 90), (12285, 1484705), (-3.2, 7.9), (0.5, 3), (1, 16), (-90, -17), (5, 5)])
def test_bounds_are_rounded_outward(lo: float, hi: float) -> None:
    low, high = round_outward(lo, hi)
    assert low <= lo and high >= hi
    assert low < high
    assert float(low) * 2 == round(float(low) * 2) or abs(low) >= 1  # round numbers, not the data's digits


def test_the_tool_is_not_reachable_from_a_program() -> None:
    from jostle.language.builtins import REGISTRY
    from jostle.session import Session

    assert not [name for name in REGISTRY if "draft" in name.lower()]
    assert not [name for name in dir(Session) if "draft" in name.lower()]
    root = Path(__file__).resolve().parents[1] / "jostle"
    for source in [*root.joinpath("language").rglob("*.py"), root / "session.py", root / "__init__.py",
                   *root.joinpath("data").rglob("*.py")]:
        assert "schema_draft" not in source.read_text(encoding="utf-8"), source


def test_text_cells_read_as_jostle_reads_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "m.csv"
    data.write_text("a,b,c\n1, ?,x\n2,NA, y \n, ?,null\n3.5, blue,x\n", encoding="utf-8")
    assert main(["schema", "draft", str(data), "--output", "-"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["columns"]["a"] == {"type": "numeric", "bounds": [0, 4]}
    assert document["columns"]["b"] == {"type": "categorical", "values": ["?", "blue"]}
    assert document["columns"]["c"] == {"type": "categorical", "values": ["x", "y"]}
    assert {line.split("'")[1] for line in document["comment"] if "missing cells" in line} == {"a", "b", "c"}
