"""Big tables without surprises (issue 28): the content digest of version 3 (order-independent,
sensitive to any cell, the same as its reference definition, old ledgers still compared), a
program's load following the engine, and a budget that cannot be met refused before any data
is read, with nothing spent.

Small inputs only: each test runs in about a second.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("duckdb")

from jostle import Session  # noqa: E402
from jostle.data.engine import content_digest  # noqa: E402
from jostle.data.engine.duckdb_engine import DuckDBEngine  # noqa: E402
from jostle.data.engine.expressions import quote  # noqa: E402
from jostle.data.engine.fingerprint import cell_text, engine_digest, frame_digest, frame_digest_v2  # noqa: E402
from jostle.diagnostics.errors import BudgetExceeded  # noqa: E402
from jostle.privacy.ledger_records import PRIVACY_UNIT, EqualData  # noqa: E402
from jostle.privacy.ledger_store import LedgerStore  # noqa: E402

UNIT = "row"


def mixed_frame(rows: int = 60, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(17, 90, rows),
        "weight": np.round(rng.normal(70, 12, rows), 2),
        "sex": rng.choice(["F", "M", "", " M "], rows),
        "flag": rng.choice([True, False], rows),
        "note": rng.choice(["3", "3.00", "abc", "2020-01-01", "na"], rows),
    })


# ---------------------------------------------------------------- the digest
def test_the_digest_is_order_independent_and_changes_with_any_cell() -> None:
    frame = mixed_frame()
    digest = frame_digest(frame, UNIT)
    shuffled = frame.sample(frac=1.0, random_state=1)[list(reversed(frame.columns))]
    assert frame_digest(shuffled, UNIT) == digest  # rows and columns in another order
    for column, value in (("age", 200), ("weight", 0.5), ("sex", "X"), ("flag", None), ("note", "3.5")):
        changed = frame.copy()
        changed[column] = changed[column].astype(object)
        changed.loc[7, column] = value
        assert frame_digest(changed, UNIT) != digest, column
    # two cells of one column swapped between rows: the rows differ, the columns' multisets do not
    swapped = frame.copy()
    swapped.loc[[0, 1], "age"] = [frame.loc[1, "age"], frame.loc[0, "age"]]
    assert frame.loc[0, "age"] == frame.loc[1, "age"] or frame_digest(swapped, UNIT) != digest
    assert frame_digest(frame.iloc[1:], UNIT) != digest  # a row removed
    assert frame_digest(frame, "replace_one") != digest  # the unit is part of it


def test_the_engine_digest_equals_its_reference_definition() -> None:
    """Each cell's canonical text (fingerprint.cell_text, one expression per cell), coded and
    mixed by content_digest's Python definition, gives the digest the engine computes with
    dictionaries, joins and NumPy."""
    frame = mixed_frame(40)
    frame.loc[3, "note"] = None
    engine = DuckDBEngine()
    raw = engine.raw_frame(frame)
    types = engine.raw_types(raw)
    columns = sorted(frame.columns)
    texts = engine.query(f"SELECT {', '.join(cell_text(quote(c), types[c]) for c in columns)} FROM {raw}")
    hashes = [content_digest.row_hash([content_digest.cell_code(c, t) for c, t in zip(columns, row)])
              for row in texts]
    expected = content_digest.finish(columns, len(hashes), sum(h[0] for h in hashes), sum(h[1] for h in hashes), UNIT)
    assert engine_digest(engine, raw, UNIT) == expected
    # the SQL mixer (Spark's route) gives the NumPy mixer's sums
    with engine.digest_scope(raw) as (source, keep):
        dictionaries = [keep(content_digest.dictionary_query(source, c, types[c], "duckdb")) for c in columns]
        rows, first, second = engine.query(content_digest.rows_query(source, columns, types, dictionaries, "duckdb"))[0]
    assert (int(rows), int(first), int(second)) == (len(hashes), sum(h[0] for h in hashes), sum(h[1] for h in hashes))


def test_a_csv_file_and_its_frame_agree_and_the_digest_leaves_nothing_stored(tmp_path: Path) -> None:
    frame = mixed_frame(30).astype(str)
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    from jostle.language.binding import csv_header

    engine = DuckDBEngine()
    view = engine.raw_csv(path, csv_header(path), strict=True)
    tables = engine.query("SELECT count(*) FROM duckdb_tables()")[0][0]
    assert engine_digest(engine, view, UNIT) == frame_digest(pd.read_csv(path, dtype=str, keep_default_na=False), UNIT)
    assert engine.query("SELECT count(*) FROM duckdb_tables()")[0][0] == tables  # its temporary tables are dropped


def test_contents_recorded_by_version_2_are_still_compared(tmp_path: Path) -> None:
    """A ledger written before version 3 holds version-2 keys: binding the same rows under a new
    name is still refused (the old digest is computed then), and once the old dataset is bound
    again under its name, the old digest is no longer needed."""
    frame = mixed_frame(20)
    path = tmp_path / "ledger.sqlite"
    with LedgerStore(path) as store:
        info = store.open_dataset("hr", "hr", list(frame.columns), lifetime=(1, 0))
        store._db.execute("INSERT INTO contents VALUES (?, ?, '2025-01-01')",
                          (store.fingerprint(frame_digest_v2(frame, PRIVACY_UNIT)), info.fingerprint))
        assert store.needs_legacy_content()
    with pytest.raises(EqualData):
        with Session(budget=1.0, ledger_path=str(path)) as session:
            session.bind_private("copy", frame, {"age": {"type": "numeric", "bounds": [0, 120]}}, dataset="hr copy")
    with Session(budget=1.0, ledger_path=str(path)) as session:
        session.bind_private("hr", frame, {"age": {"type": "numeric", "bounds": [0, 120]}}, dataset="hr")
    with LedgerStore(path, create=False) as store:
        assert not store.needs_legacy_content()
    with pytest.raises(EqualData):  # now by its version-3 key
        with Session(budget=1.0, ledger_path=str(path)) as session:
            session.bind_private("copy", frame, {"age": {"type": "numeric", "bounds": [0, 120]}}, dataset="hr copy")


# ---------------------------------------------------------------- a program's load
PROGRAM = """budget 1
t = load("{path}", {{age: numeric(0, 120), sex: categorical(["F", "M"])}})
print({{{{ count(t) }}}})
"""


def run(program: str, engine: str, ledger: str = ":memory:") -> str:
    buffer = io.StringIO()
    with Session(budget=1.0, seed=7, ledger_path=ledger, output=buffer, engine=engine) as session:
        session.run(program)
    return buffer.getvalue()


def test_a_programs_load_follows_the_engine_with_the_same_answers(tmp_path: Path, monkeypatch) -> None:
    clean = tmp_path / "clean.csv"
    mixed_frame(50).to_csv(clean, index=False)
    broken = tmp_path / "broken.csv"
    broken.write_text(clean.read_text() + '1,2,"unclosed\n')
    from jostle.data import schema

    readers, real = [], schema.read_csv_file

    def spy(path, *args, **kwargs):
        readers.append(Path(path).name)
        return real(path, *args, **kwargs)

    for path in (clean, broken):
        expected = run(PROGRAM.format(path=path), "pandas")
        with monkeypatch.context() as patch:
            patch.setattr(schema, "read_csv_file", spy)  # what the engine route falls back to
            assert run(PROGRAM.format(path=path), "duckdb") == expected, path.name
    # DuckDB read the clean file itself; the broken one (a record Python drops) went to Jostle's reader
    assert readers == ["broken.csv"]


def test_a_load_without_budget_is_refused_before_reading_and_spends_nothing(tmp_path: Path, monkeypatch) -> None:
    ledger = str(tmp_path / "ledger.sqlite")
    path = tmp_path / "t.csv"
    mixed_frame(30).to_csv(path, index=False)
    run(PROGRAM.format(path=path), "duckdb", ledger)  # spends the file's whole lifetime (1)
    with LedgerStore(ledger, create=False) as store:
        events = len(store.events())

    def no_reading(*args, **kwargs):
        raise AssertionError("the file was read")

    import jostle.language.private_files as private_files

    monkeypatch.setattr(private_files, "read_private_file", no_reading)
    messages = []
    for rows in (30, 31):  # neighbouring files at the same path: the same refusal
        mixed_frame(rows).to_csv(path, index=False)
        with pytest.raises(BudgetExceeded) as refusal:
            run(PROGRAM.format(path=path), "duckdb", ledger)
        messages.append(str(refusal.value))
        assert "refused before reading" in str(refusal.value)
    assert messages[0] == messages[1]
    with LedgerStore(ledger, create=False) as store:
        assert len(store.events()) == events  # nothing spent


# ---------------------------------------------------------------- progress
def test_progress_shows_only_for_slow_steps_and_only_when_allowed(monkeypatch, capsys) -> None:
    import time

    from jostle.data.progress import Steps

    monkeypatch.setenv("JOSTLE_PROGRESS", "1")
    with Steps("quick", total=3, delay=0.5) as steps:
        steps.advance(3)
    assert capsys.readouterr().err == ""
    with Steps("slow job", total=3, delay=0.05) as steps:
        time.sleep(0.15)
        steps.advance(note="next")
        steps.advance(2)
    assert "slow job" in capsys.readouterr().err
    with Steps("one long step", total=1, delay=0.05) as steps:  # redrawn while it runs, before it ends
        time.sleep(0.7)
        assert "one long step" in capsys.readouterr().err
        steps.advance()
    capsys.readouterr()  # the bar's last drawing and its clearing
    monkeypatch.setenv("JOSTLE_PROGRESS", "0")
    with Steps("off", total=1, delay=0.0) as steps:
        assert not steps.shown
        steps.advance()
    monkeypatch.delenv("JOSTLE_PROGRESS")
    assert not Steps("not a terminal", total=1).shown  # pytest's stderr is not a terminal
    assert capsys.readouterr().err == ""


def test_a_new_spark_driver_is_quiet_unless_its_logs_are_asked_for(monkeypatch) -> None:
    """The settings given to a new driver JVM (no JVM is started here): a log4j2 configuration
    of errors only, also for the shell's logger that printed "Setting default log level"."""
    from jostle.data.engine.spark_logs import quiet_jvm_settings, spark_logs_wanted

    monkeypatch.delenv("SPARK_LOCAL_IP", raising=False)
    settings = quiet_jvm_settings()
    option = settings["spark.driver.extraJavaOptions"]
    config = Path(option.split("file:", 1)[1]).read_text()
    assert "rootLogger.level = error" in config and "PythonGatewayServer" in config
    import os

    assert os.environ["SPARK_LOCAL_IP"] == "127.0.0.1"
    monkeypatch.setenv("JOSTLE_SPARK_LOGS", "1")
    assert spark_logs_wanted()
    monkeypatch.setenv("JOSTLE_SPARK_LOGS", "0")
    assert not spark_logs_wanted()
