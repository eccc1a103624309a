"""One loader of private files (jostle.language.private_files): the curator's `bind_private` and a
program's `load` read a CSV or Parquet file through the same reader and enter it in the ledger
by the same rule, so both give the same table, and a program loading the curator's file is
charged against the curator's dataset."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from jostle import Session
from jostle.diagnostics.errors import DataError
from jostle.language import private_files

pytest.importorskip("duckdb")

SCHEMA = "{age: numeric(0, 100), ward: categorical([\"a\", \"b\"], default=\"a\"), score: numeric(0, 10, default=0)}"


def _schema() -> dict:
    from jostle.data.schema import Categorical, Numeric

    return {"age": Numeric(0, 100), "ward": Categorical(("a", "b"), default="a"), "score": Numeric(0, 10, default=0)}


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"age": [30, 41, 57, 72, 18], "ward": ["a", "b", "b", None, "a"],
                         "score": [1.5, None, 7.25, 10.0, 0.0]})


def _write(folder: Path, kind: str) -> Path:
    frame = _frame()
    if kind == "csv":
        path = folder / "patients.csv"
        frame.to_csv(path, index=False)
        return path
    import duckdb

    path = folder / "patients.parquet"
    connection = duckdb.connect()
    connection.register("frame", frame)
    connection.execute(f"COPY (SELECT * FROM frame) TO '{path}' (FORMAT parquet)")
    return path


def _rows(session: Session, name: str) -> pd.DataFrame:
    return session.interpreter.globals.lookup(name).frame.reset_index(drop=True)


@pytest.mark.parametrize("kind", ["csv", "parquet"])
@pytest.mark.parametrize("engine", ["pandas", "duckdb"])
def test_bind_private_and_load_give_the_same_table_and_the_same_dataset(tmp_path: Path, kind: str,
                                                                        engine: str) -> None:
    path = _write(tmp_path, kind)
    ledger = tmp_path / "ledger.sqlite"
    with Session(budget=10, seed=1, ledger_path=ledger, lifetime=100, engine=engine) as session:
        session.bind_private("t", path, _schema(), dataset="patients")
        session.run(f'u = load("{path}", {SCHEMA})\na = laplace(count(t), 0.5)\nb = laplace(count(u), 0.25)')
        bound, loaded = session.interpreter.globals.lookup("t"), session.interpreter.globals.lookup("u")
        assert bound.schema == loaded.schema
        pd.testing.assert_frame_equal(_rows(session, "t"), _rows(session, "u"))
        # the program's load of the curator's file is the curator's dataset: both charges on it
        [status] = session.datasets
        assert status.dataset.name == "patients"
        assert status.spent == session.spent and float(session.spent.epsilon) == 0.75

    # a program loading the file in a session where nobody bound it: the same rows, entered
    # under the file's path (never its content: issue 21)
    with Session(budget=10, seed=1, ledger_path=tmp_path / "other.sqlite", lifetime=100, engine=engine) as other:
        other.run(f'u = load("{path}", {SCHEMA})\nb = laplace(count(u), 0.25)')
        pd.testing.assert_frame_equal(_rows(other, "u"), _rows(session, "t"))
        [status] = other.datasets
        assert status.dataset.name == "file:" + str(path.resolve())


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_one_reader_for_both(tmp_path: Path, kind: str) -> None:
    """The curator's and the program's reads are one function: the same columns and cells, the
    curator's strict, the program's total (an unusable CSV record dropped, not named)."""
    path = _write(tmp_path, kind)
    with Session(budget=1, engine="pandas") as session:
        interp = session.interpreter
        curator = private_files.read_private_file(interp, path, by_curator=True, strict=True, table="t")
        program = private_files.read_private_file(interp, path, by_curator=False, strict=False, table="t")
        assert curator.columns == program.columns == ["age", "ward", "score"]
        pd.testing.assert_frame_equal(curator.cells, program.cells)
    if kind == "csv":
        broken = tmp_path / "broken.csv"
        broken.write_text("age,ward,score\n30,a,1\n40,b,2,extra\n")
        with Session(budget=1) as session:
            with pytest.raises(DataError, match="line 3 has 4 fields"):
                private_files.read_private_file(session.interpreter, broken, by_curator=True, strict=True, table="t")
            rows = private_files.read_private_file(session.interpreter, broken, by_curator=False, strict=False,
                                                   table="t")
            assert len(rows.cells) == 1
