"""Binding and loading private tables onto engines (issue 14): routes, files, the fingerprint.

Whichever route a table takes (memory, DuckDB), and however the same data arrives (a CSV path,
a DataFrame, a Parquet file), a program gives the same answers with the same seed, and the
durable ledger keys the data the same way, so a lifetime budget follows the data.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("duckdb")

from jostle.cli import main  # noqa: E402
from jostle.diagnostics.errors import DataError, UsageError  # noqa: E402
from jostle.session import Session  # noqa: E402

SCHEMA = {"age": ("numeric", 0, 100), "region": ("categorical", ["a", "b", "c", "d", "e"])}
PROGRAM = '''
adults = where(t, lambda r: r.age >= 30)
print(laplace(count(adults), 1))
print(laplace(sum(adults, "age"), 1))
print(laplace(histogram(derive(t, "old", lambda r: "y" if r.age > 60 else "n", categorical(["y", "n"], default="n")), ["old", "region"]), 1))
print(laplace(histogram(t.bin("age", [0, 25, 50, 75, 100], name="band"), "band"), 1))
print(laplace(mean(t, "age"), 1))
'''


def _frame(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": np.round(rng.uniform(0, 100, n), 2), "region": rng.choice(list("abcde"), n)})


def _run(data, engine: str, ledger: str = ":memory:", schema=SCHEMA, program: str = PROGRAM) -> tuple[str, Session]:
    output = io.StringIO()
    session = Session(budget=50, seed=3, ledger_path=ledger, output=output, engine=engine)
    session.bind_private("t", data, schema)
    session.run(program)
    return output.getvalue(), session


def _where(session: Session) -> str:
    table = session.interpreter.bound_tables["t"]
    return table.relation.engine.name if table.relation is not None else "pandas"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    frame = _frame()
    csv = tmp_path / "t.csv"
    frame.to_csv(csv, index=False)
    parquet = tmp_path / "t.parquet"
    frame.to_parquet(parquet) if _has_pyarrow() else _duckdb_parquet(frame, parquet)
    return {"csv": csv, "parquet": parquet}


def _has_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def _duckdb_parquet(frame: pd.DataFrame, path: Path) -> None:
    import duckdb

    connection = duckdb.connect()
    connection.register("f", frame)
    connection.execute(f"COPY f TO '{path}' (FORMAT parquet)")


def test_the_same_program_gives_the_same_answers_on_every_route_and_every_kind_of_input(files):
    frame = _frame()
    expected, session = _run(frame, "pandas")
    assert _where(session) == "pandas" and expected.count("\n") == 5
    for data in (frame, files["csv"], files["parquet"]):
        for engine in ("pandas", "duckdb", "auto"):
            output, session = _run(data, engine)
            assert output == expected, (data if isinstance(data, Path) else "frame", engine)
            if engine == "duckdb":
                assert _where(session) == "duckdb"


def test_auto_puts_parquet_and_large_curator_tables_on_duckdb_and_small_ones_in_memory(files, monkeypatch):
    assert _where(_run(files["parquet"], "auto")[1]) == "duckdb"
    assert _where(_run(files["csv"], "auto")[1]) == "pandas"
    assert _where(_run(_frame(), "auto")[1]) == "pandas"
    import jostle.language.binding as binding

    monkeypatch.setattr(binding, "SMALL_TABLE_BYTES", 100)
    monkeypatch.setattr(binding, "SMALL_TABLE_ROWS", 100)
    assert _where(_run(files["csv"], "auto")[1]) == "duckdb"
    assert _where(_run(_frame(), "auto")[1]) == "duckdb"


def test_a_programs_load_is_routed_by_the_files_kind_never_its_size(files, monkeypatch):
    import jostle.language.binding as binding

    monkeypatch.setattr(binding, "SMALL_TABLE_BYTES", 0)  # every CSV would be "large"
    schema = '{age: numeric(0, 100), region: categorical(["a", "b", "c", "d", "e"])}'
    for name, expected in (("csv", "pandas"), ("parquet", "duckdb")):
        session = Session(budget=5, seed=3, ledger_path=":memory:", output=io.StringIO())
        session.run(f'x = load("{files[name]}", {schema})')
        table = session.interpreter.globals.lookup("x")
        assert (table.relation.engine.name if table.relation is not None else "pandas") == expected


def test_a_programs_load_reads_totally_on_duckdb_as_in_memory(tmp_path: Path):
    path = tmp_path / "messy.csv"
    path.write_bytes(b"age,region\n1,a\n2,b,extra\n3\n\n 4, c\n5,\xff\n6,\"e\"\n7,zz\nNA,a\n")
    schema = '{age: numeric(0, 100), region: categorical(["a", "b", "c", "d", "e"])}'
    program = (f'x = load("{path}", {schema})\n'
               'print(laplace(count(x), 1))\nprint(laplace(histogram(x, "region"), 1))\n')
    outputs = []
    for engine in ("pandas", "duckdb"):
        output = io.StringIO()
        Session(budget=5, seed=3, ledger_path=":memory:", output=output, engine=engine).run(program)
        outputs.append(output.getvalue())
    assert outputs[0] == outputs[1] and outputs[0].count("\n") == 2


def test_the_curators_csv_is_read_strictly_on_duckdb(tmp_path: Path):
    path = tmp_path / "bad.csv"
    path.write_text("age,region\n1,a\n2,b,extra\n")
    for engine in ("pandas", "duckdb"):
        with pytest.raises(DataError):
            Session(budget=1, ledger_path=":memory:", engine=engine).bind_private("t", path, SCHEMA)
    path.write_text("age,region\n1,a\nx,b\n")
    with pytest.raises(DataError, match="row 2"):
        Session(budget=1, ledger_path=":memory:", engine="duckdb").bind_private("t", path, SCHEMA)


def test_the_durable_ledger_keys_the_same_data_the_same_way_on_every_route(files, tmp_path: Path):
    """The content a curator binds is one key by every route (a DataFrame, CSV, Parquet; in
    memory or on DuckDB): under its own name it binds each time, under another it is refused
    (a re-export cannot restart a budget); a neighbour is other content."""
    from jostle.privacy.ledger_store import EqualData, LedgerStore

    ledger = str(tmp_path / "ledger.sqlite")
    for data in (_frame(), files["csv"], files["parquet"]):
        for engine in ("pandas", "duckdb"):
            session = Session(budget=50, ledger_path=ledger, engine=engine)
            session.bind_private("t", data, SCHEMA)
            with pytest.raises(EqualData, match="the same rows as the data 't'"):
                session.bind_private("u", data, SCHEMA)
            session.close()
    session = Session(budget=50, ledger_path=ledger)
    session.bind_private("u", _frame().iloc[1:], SCHEMA)  # a neighbour: other content, its own name
    session.close()
    with LedgerStore(ledger) as store:
        contents = store._db.execute("SELECT COUNT(DISTINCT content) FROM contents").fetchone()[0]
        assert contents == 2 and [d.name for d in store.datasets()] == ["t", "u"]


def test_no_fingerprint_is_computed_with_an_in_memory_ledger(files, monkeypatch):
    import jostle.data.engine.fingerprint as fingerprint

    def refuse(*args, **kwargs):
        raise AssertionError("the fingerprint was computed")

    monkeypatch.setattr(fingerprint, "engine_digest", refuse)
    monkeypatch.setattr(fingerprint, "frame_digest", refuse)
    for data in (_frame(), files["csv"], files["parquet"]):
        for engine in ("pandas", "duckdb"):
            _run(data, engine)


def test_the_cli_binds_a_parquet_file_with_its_schema_file_and_takes_an_engine(files, tmp_path: Path, capsys):
    schema_file = files["parquet"].with_name("t.schema.json")
    schema_file.write_text(json.dumps({"columns": {"age": {"type": "numeric", "bounds": [0, 100]},
                                                   "region": {"type": "categorical",
                                                              "values": ["a", "b", "c", "d", "e"]}}}))
    program = tmp_path / "p.jst"
    program.write_text("private t: {age: numeric(0, 100), region: categorical([\"a\", \"b\", \"c\", \"d\", \"e\"])}\n"
                       + PROGRAM)
    expected, _ = _run(_frame(), "pandas")
    for engine in ("duckdb", "auto", "pandas"):
        code = main(["run", str(program), "--budget", "50", "--seed", "3", "--ledger-db", ":memory:",
                     "--engine", engine, "--data", f"t={files['parquet']}"])
        captured = capsys.readouterr()
        assert code == 0, captured.err
        assert captured.out == expected
    assert main(["run", str(program), "--master", "local[1]", "--data", f"t={files['parquet']}"]) != 0
    assert "--master" in capsys.readouterr().err


def test_an_unknown_engine_is_a_usage_error():
    with pytest.raises(UsageError, match="engine"):
        Session(engine="polars")
