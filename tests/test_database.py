"""Databases (issue 22): Session.bind_database and `jostle run --data ... --key KEY` bind several
private tables under one entity(KEY) unit as one dataset of the ledger; the key is checked at
bind time; a program joins the tables (tests/test_joins.py) and prints the same on every engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from jostle.diagnostics.errors import BudgetExceeded, DataError, PrivacyError, UsageError
from jostle.language.databases import DatabaseNode, database_of
from jostle.privacy.units import entity
from jostle.session import Session
from tests.test_joins import CAR_SCHEMA, KEY, SCHEMAS, TRAIN_SCHEMA, cars, session, trains, value

ROOT = Path(__file__).resolve().parent.parent


def test_the_tables_of_a_database_share_one_node_under_the_entity_units_root():
    s = session()
    s.bind_database({"trains": trains(), "cars": cars()}, key=KEY, schemas=SCHEMAS)
    first, second = value(s, "trains"), value(s, "cars")
    assert first.unit == second.unit == entity(KEY) and first.stability is None and second.stability is None
    assert first.node is second.node and isinstance(first.node, DatabaseNode)
    assert database_of(first.node).database == "trains+cars"
    assert first.node.parent is s.accountant.root_for(entity(KEY))
    s.run(f"budget 1\nprint({{{{ count_keys(trains) }}}}, {{{{ count_keys(cars) }}}})\n")
    assert [str(c.unit) for c in s.ledger] == [str(entity(KEY))] * 2
    assert {c.node.label for c in s.ledger} == {"database trains+cars"}


@pytest.mark.parametrize("bad, error, message, hint", [
    ({"trains": {"direction": ("categorical", ["east", "west"])}}, DataError,
     "key 'train_id' is not a column of its table 'trains'", "every table of a database"),
    ({"trains": dict(TRAIN_SCHEMA, train_id=("categorical", list(range(30))))}, DataError,
     "numeric domain in some tables and a categorical one", "one kind of domain"),
    ({"trains": dict(TRAIN_SCHEMA, train_id={"type": "numeric", "bounds": [0, 1000], "default": 0})}, DataError,
     "declares a default", "remove the default"),
])
def test_a_key_that_is_not_a_usable_column_of_every_table_is_refused_at_bind_time(bad, error, message, hint):
    s = session()
    schemas = dict(SCHEMAS, **bad)
    frames = {"trains": trains(), "cars": cars()}
    with pytest.raises(error, match=message) as raised:
        s.bind_database(frames, key=KEY, schemas=schemas)
    assert hint in raised.value.hint
    assert "trains" not in s.interpreter.globals.values and "cars" not in s.interpreter.globals.values
    assert s.accountant.datasets == {}


def test_bad_arguments_are_refused_before_anything_is_bound():
    s = session()
    with pytest.raises(UsageError, match="no schema"):
        s.bind_database({"trains": trains(), "cars": cars()}, key=KEY, schemas={"trains": TRAIN_SCHEMA})
    with pytest.raises(UsageError, match="not a table of the database"):
        s.bind_database({"trains": trains()}, key=KEY, schemas=SCHEMAS)
    with pytest.raises(UsageError, match="key is a column name"):
        s.bind_database({"trains": trains()}, key="", schemas=SCHEMAS)
    with pytest.raises(UsageError, match="at least one table"):
        s.bind_database({}, key=KEY)
    with pytest.raises(DataError, match="outside its domain"):  # the entity key rule of every table
        s.bind_database({"cars": cars().assign(train_id=2000)}, key=KEY, schemas={"cars": CAR_SCHEMA})
    assert s.accountant.datasets == {} and not (set(s.interpreter.globals.values) & {"trains", "cars"})


def test_a_database_is_one_dataset_of_the_ledger_with_one_lifetime(tmp_path: Path):
    ledger = tmp_path / "ledger.sqlite"
    program = "budget 1.5\nprint({{ count_keys(cars) }})\n"
    with Session(budget=2, seed=1, ledger_path=ledger) as first:
        first.bind_database({"trains": trains(), "cars": cars()}, key=KEY, schemas=SCHEMAS, dataset="railways",
                            lifetime=2)
        first.run(program)
        status = first.datasets
        assert [d.dataset.name for d in status] == ["railways"]
        assert status[0].spent.epsilon == 1.5 and status[0].lifetime.epsilon == 2
    with Session(budget=2, seed=1, ledger_path=ledger) as second:
        second.bind_database({"trains": trains(), "cars": cars()}, key=KEY, schemas=SCHEMAS, dataset="railways")
        with pytest.raises(BudgetExceeded):  # the database's lifetime is shared by its tables
            second.run("budget 1\nprint({{ count_keys(trains) }})\n")
        assert len(second.ledger) == 0


def test_the_files_of_a_database_cannot_be_read_as_public(tmp_path: Path):
    trains().to_csv(tmp_path / "trains.csv", index=False)
    cars().to_csv(tmp_path / "cars.csv", index=False)
    s = session()
    s.bind_database({"trains": tmp_path / "trains.csv", "cars": tmp_path / "cars.csv"}, key=KEY, schemas=SCHEMAS)
    with pytest.raises(PrivacyError, match="private table 'cars'"):
        s.run(f'c = load_public("{tmp_path / "cars.csv"}")\n')


@pytest.mark.parametrize("engine", ["pandas", "duckdb"])
def test_a_database_of_files_with_schema_files_binds_on_every_route(tmp_path: Path, engine: str):
    _write_database(tmp_path)
    s = session(engine)
    s.bind_database({"trains": tmp_path / "trains.csv", "cars": tmp_path / "cars.csv"}, key=KEY)
    assert (value(s, "cars").relation is not None) == (engine == "duckdb")
    s.run(f'b = trains.join(cars, on="{KEY}").bound_per_key(2)\n')
    assert value(s, "b").stability == 2


# ---------------------------------------------------------------- the command line
def _write_database(folder: Path) -> None:
    trains().to_csv(folder / "trains.csv", index=False)
    cars().to_csv(folder / "cars.csv", index=False)
    for name, schema in SCHEMAS.items():
        columns = {}
        for column, spec in schema.items():
            if isinstance(spec, dict):
                columns[column] = spec
            elif spec[0] == "numeric":
                columns[column] = {"type": "numeric", "bounds": [spec[1], spec[2]]}
            else:
                columns[column] = {"type": "categorical", "values": spec[1]}
        (folder / f"{name}.schema.json").write_text(json.dumps(columns))


def jostle(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, JOSTLE_HISTORY=os.devnull, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "jostle", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=180)


PROGRAM = (f'budget 2\n'
           f'b = trains.bound_per_key(1).join(cars.bound_per_key(2), on="{KEY}")\n'
           f'print({{{{ count(b) }}}}, {{{{ histogram(b, "shape") }}}}, {{{{ count_keys(cars) }}}})\n')


def test_run_with_key_binds_the_data_as_one_database_and_prints_the_same_on_memory_and_duckdb(tmp_path: Path):
    _write_database(tmp_path)
    (tmp_path / "prog.jst").write_text(PROGRAM)
    printed = []
    for engine in ("pandas", "duckdb"):
        result = jostle("run", "prog.jst", "--data", "trains=trains.csv", "--data", "cars=cars.csv", "--key", KEY,
                        "--seed", "3", "--ledger-db", ":memory:", "--engine", engine, "--ledger", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        printed.append(result.stdout)
    assert printed[0] == printed[1]
    assert "database trains+cars" in printed[0] and printed[0].count("{{ }} geometric") == 3


def test_run_with_key_refuses_a_table_without_the_key_and_a_join_off_the_key(tmp_path: Path):
    _write_database(tmp_path)
    (tmp_path / "prog.jst").write_text(PROGRAM)
    pd.DataFrame({"x": [1]}).to_csv(tmp_path / "other.csv", index=False)
    (tmp_path / "other.schema.json").write_text('{"x": {"type": "numeric", "bounds": [0, 5]}}')
    result = jostle("run", "prog.jst", "--data", "trains=trains.csv", "--data", "other=other.csv", "--key", KEY,
                    "--ledger-db", ":memory:", cwd=tmp_path)
    assert result.returncode == DataError.exit_code and "not a column of its table 'other'" in result.stderr
    (tmp_path / "bad.jst").write_text('budget 1\nx = cars.select(["train_id", "shape"]).join(cars.select(["shape", "load"]), '
                                      'on="shape")\nprint({{ count_keys(x) }})\n')
    result = jostle("run", "bad.jst", "--data", "trains=trains.csv", "--data", "cars=cars.csv", "--key", KEY,
                    "--ledger-db", ":memory:", "--ledger", cwd=tmp_path)
    assert result.returncode == PrivacyError.exit_code and "bad.jst:2" in result.stderr
    assert "not their entity key" in result.stderr and "(no charges)" in result.stdout


def test_a_tables_schema_file_cannot_declare_what_the_database_decides(tmp_path: Path):
    _write_database(tmp_path)
    columns = json.loads((tmp_path / "cars.schema.json").read_text())
    for extra, said in (({"lifetime": 3}, "a lifetime budget"), ({"privacy_unit": "row"}, "the unit row"),
                        ({"dataset": "x"}, "the dataset name 'x'")):
        (tmp_path / "cars.schema.json").write_text(json.dumps({"columns": columns, **extra}))
        s = session()
        with pytest.raises(UsageError, match=said) as raised:
            s.bind_database({"trains": tmp_path / "trains.csv", "cars": tmp_path / "cars.csv"}, key=KEY)
        assert "bind_database(..., dataset=, lifetime=)" in raised.value.hint
        assert s.accountant.datasets == {} and "cars" not in s.interpreter.globals.values
    (tmp_path / "cars.schema.json").write_text(json.dumps({"columns": columns, "privacy_unit": {"entity": KEY}}))
    session().bind_database({"trains": tmp_path / "trains.csv", "cars": tmp_path / "cars.csv"}, key=KEY)


def test_under_auto_the_tables_of_a_database_share_one_route(monkeypatch: pytest.MonkeyPatch):
    from jostle.language import binding

    monkeypatch.setattr(binding, "SMALL_TABLE_ROWS", 50)  # cars (more rows) to DuckDB, trains (30) would stay
    s = session("auto")
    s.bind_database({"trains": trains(), "cars": cars()}, key=KEY, schemas=SCHEMAS)
    first, second = value(s, "trains"), value(s, "cars")
    assert first.relation is not None and second.relation is not None
    assert first.relation.engine is second.relation.engine
    s.run(f'j = trains.join(cars, on="{KEY}")\n')
    assert value(s, "j").relation.steps[-1][0] == "join"
