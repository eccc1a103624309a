"""The durable budget ledger: fingerprints, persistence across sessions, commit-before-release,
races between processes, crashes (SIGKILL at random moments), the append-only audit trail."""

from __future__ import annotations

import io
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jostle import BudgetExceeded, Session, UsageError
from jostle.data.engine.fingerprint import frame_digest
from jostle.privacy.ledger_store import MEMORY, PRIVACY_UNIT, LedgerStore, resolve_ledger_path
from jostle.privacy.measures import Budget


def content_digest(frame, unit: str = PRIVACY_UNIT) -> bytes:
    """The digest a session keys a DataFrame's data on (version 2, computed by DuckDB)."""
    return frame_digest(frame, unit)
from tests.conftest import PATIENT_SCHEMA, make_patients

ROOT = Path(__file__).resolve().parent.parent


def data_spent(s: Session, name: str = "patients") -> Fraction:
    """What the ledger says every session spent on the dataset `name` (epsilon)."""
    (status,) = [d for d in s.datasets if d.dataset.name == name]
    return status.spent.epsilon


def session(db: Path | str, budget: float = 1.0, frame: pd.DataFrame | None = None, **kwargs) -> Session:
    s = Session(budget=budget, seed=kwargs.pop("seed", 3), output=io.StringIO(), ledger_path=db, **kwargs)
    s.bind_private("patients", make_patients() if frame is None else frame, PATIENT_SCHEMA)
    return s


# ---------------------------------------------------------------- fingerprints
def test_digest_ignores_row_order_column_order_and_how_numbers_were_read(tmp_path):
    frame = make_patients(50)
    shuffled = frame.sample(frac=1, random_state=1)[["smoker", "age", "sex"]]
    frame.to_csv(tmp_path / "p.csv", index=False)
    from_csv = pd.read_csv(tmp_path / "p.csv", dtype=str)  # every cell as text, as Jostle reads CSV
    assert content_digest(frame) == content_digest(shuffled) == content_digest(from_csv)
    assert content_digest(frame.assign(age=frame["age"].astype(float))) == content_digest(frame)


def test_digest_changes_with_any_row_and_with_the_privacy_unit():
    frame = make_patients(50)
    digest = content_digest(frame)
    assert content_digest(frame.iloc[1:]) != digest                       # one row removed
    assert content_digest(pd.concat([frame, frame.iloc[:1]])) != digest    # one row duplicated
    changed = frame.copy()
    changed.loc[7, "age"] = changed.loc[7, "age"] + 1
    assert content_digest(changed) != digest
    assert content_digest(frame, unit="one person, any number of rows") != digest


def test_fingerprints_are_keyed_per_ledger_and_stable(tmp_path):
    digest = content_digest(make_patients(20))
    with LedgerStore(tmp_path / "a.sqlite") as a, LedgerStore(tmp_path / "b.sqlite") as b:
        first = a.fingerprint(digest)
        assert first != b.fingerprint(digest)  # an HMAC under each ledger's own key
        assert first != digest.hex()           # the plain content hash is never stored
    with LedgerStore(tmp_path / "a.sqlite") as again:
        assert again.fingerprint(digest) == first


def test_where_the_ledger_lives(tmp_path, monkeypatch):
    monkeypatch.setenv("JOSTLE_LEDGER", str(tmp_path / "env.sqlite"))
    assert resolve_ledger_path() == str(tmp_path / "env.sqlite")
    assert resolve_ledger_path(tmp_path / "x.sqlite") == str(tmp_path / "x.sqlite")
    assert resolve_ledger_path(MEMORY) == MEMORY
    monkeypatch.delenv("JOSTLE_LEDGER")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert resolve_ledger_path() == str(tmp_path / "xdg" / "jostle" / "ledger.sqlite")
    s = session(None)
    s.run("x = laplace(count(patients), 0.5)")
    s.close()
    assert (tmp_path / "xdg" / "jostle" / "ledger.sqlite").is_file()


def test_in_memory_ledger_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for _ in range(3):  # each session could spend the whole budget: nothing carried over
        s = session(MEMORY)
        s.run("x = laplace(count(patients), 1)")
        assert s.spent.epsilon == 1
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- persistence
def test_spending_persists_across_sessions(tmp_path):
    db = tmp_path / "ledger.sqlite"
    first = session(db)
    first.run("a = laplace(count(patients), 0.25)\nb = laplace(count(patients), 0.5)")
    first.close()
    second = session(db)
    assert data_spent(second) == Fraction(3, 4) and second.remaining.epsilon == Fraction(1, 4)
    assert second.spent.epsilon == 0  # this session's own spending
    with pytest.raises(BudgetExceeded, match="the data 'patients' has only 0.25 left of its lifetime budget") as caught:
        second.run("c = laplace(count(patients), 0.5)")
    assert (caught.value.requested, caught.value.remaining) == (Fraction(1, 2), Fraction(1, 4))
    assert "lifetime 1, spent 0.75" in caught.value.message
    assert len(second.ledger) == 0
    second.run("c = laplace(count(patients), 0.25)")  # exactly what is left
    assert second.remaining.epsilon == 0
    text = str(second.ledger)
    assert "this run spent: epsilon=0.25" in text
    assert "data 'patients': lifetime budget epsilon=1, spent epsilon=1 in all runs, left epsilon=0" in text


def test_the_store_keeps_exact_fractions(tmp_path):
    db = tmp_path / "ledger.sqlite"
    for _ in range(3):
        with session(db) as s:
            s.run("x = laplace(count(patients), 1 / 3)")
    with LedgerStore(db) as store:
        (dataset,) = store.datasets()
        assert store.balance(dataset.fingerprint) == (Fraction(1), Fraction(0))
        assert [e["epsilon"] for e in store.events() if e["kind"] == "charge"] == ["1/3"] * 3
    with session(db) as s, pytest.raises(BudgetExceeded):
        s.run("x = laplace(count(patients), 0.000001)")


def test_the_store_records_the_rise_of_the_composed_cost(tmp_path):
    """Parallel parts within a session cost their maximum; across sessions charges add up."""
    db = tmp_path / "ledger.sqlite"
    program = "for part in patients.partition('sex'):\n    x = laplace(part.count(), 0.4)\n"
    with session(db) as s:
        s.run(program)
        assert s.spent.epsilon == Fraction(2, 5)
    with LedgerStore(db) as store:
        charges = [e for e in store.events() if e["kind"] == "charge"]
        assert [e["epsilon"] for e in charges] == ["2/5", "0"]  # the second part is free
        assert [e["requested_epsilon"] for e in charges] == ["2/5", "2/5"]
    with session(db) as s:
        s.run(program)  # another session: sequential, 0.4 + 0.4
        assert s.spent.epsilon == Fraction(2, 5) and data_spent(s) == Fraction(4, 5)
        with pytest.raises(BudgetExceeded):
            s.run(program)


def test_schema_changes_do_not_give_a_fresh_budget(tmp_path):
    db = tmp_path / "ledger.sqlite"
    with session(db) as s:
        s.run("x = laplace(count(patients), 1)")
    narrower = dict(PATIENT_SCHEMA, age={"type": "numeric", "bounds": [0, 90]})
    with Session(budget=1, ledger_path=db) as s:
        s.bind_private("patients", make_patients(), narrower)
        with pytest.raises(BudgetExceeded, match="lifetime budget"):
            s.run("x = laplace(count(patients), 0.1)")


def test_a_dataset_is_its_curators_name_not_its_rows(tmp_path):
    """Issue 21: a dataset's balance belongs to the name its curator binds it under, whatever
    rows it holds (a new version keeps the budget); a file a program loads is its own dataset,
    named by its path, and is never matched to the curator's data by content."""
    db = tmp_path / "ledger.sqlite"
    make_patients().to_csv(tmp_path / "patients.csv", index=False)
    with session(db) as s:
        s.run("y = laplace(count(patients), 0.5)")
    with session(db, frame=make_patients().iloc[1:]) as s:  # a new version, the same name
        assert data_spent(s) == Fraction(1, 2)
    program = (f't = load("{tmp_path / "patients.csv"}", {{age: numeric(0, 100), sex: categorical(["F", "M"]), '
               'smoker: categorical(["yes", "no"])})\nx = laplace(count(t), 0.7)\nprint(remaining())\n')
    with Session(budget=1, ledger_path=db, output=io.StringIO()) as s:  # the same rows, loaded
        s.run(program)
        (status,) = s.datasets
        assert status.dataset.name == f"file:{tmp_path / 'patients.csv'}"
        assert status.spent.epsilon == Fraction(7, 10)
    with session(db) as s:
        assert data_spent(s) == Fraction(1, 2)


def test_a_charge_is_recorded_against_every_dataset_of_the_session(tmp_path):
    db = tmp_path / "ledger.sqlite"
    other = make_patients(80, seed=99)
    with session(db) as s:
        s.bind_private("other", other, PATIENT_SCHEMA)
        s.run("x = laplace(count(other), 0.6)")
    with Session(budget=1, ledger_path=db) as s:  # `patients` alone: it was charged too (safe)
        s.bind_private("patients", make_patients(), PATIENT_SCHEMA)
        assert data_spent(s) == Fraction(3, 5)
    with LedgerStore(db) as store:
        assert len(store.datasets()) == 2
        assert {e["dataset"] for e in store.events()} == {d.fingerprint for d in store.datasets()}


# ---------------------------------------------------------------- commit before release
class Watched:
    """Stands in for the session's source of randomness: before any draw, calls `before_draw`."""

    def __init__(self, randomness, before_draw) -> None:
        self._randomness, self._before_draw = randomness, before_draw

    def __getattr__(self, name):
        attribute = getattr(self._randomness, name)
        if not callable(attribute):
            return attribute

        def draw(*args, **kwargs):
            self._before_draw()
            return attribute(*args, **kwargs)
        return draw


def test_the_charge_is_committed_before_noise_is_drawn(tmp_path):
    db = tmp_path / "ledger.sqlite"
    s = session(db)
    seen = []

    def read_committed_balance():
        with LedgerStore(db) as reader:  # another connection sees only committed data
            seen.append(reader.balance(reader.datasets()[0].fingerprint)[0])

    s.interpreter.randomness = Watched(s.interpreter.randomness, read_committed_balance)
    s.run("x = laplace(count(patients), 0.25)")
    assert seen and set(seen) == {Fraction(1, 4)}
    seen.clear()
    s.run("y = geometric(count(patients), 0.5)")
    assert seen and set(seen) == {Fraction(3, 4)}


def test_a_failure_after_the_commit_over_reports(tmp_path):
    db = tmp_path / "ledger.sqlite"
    s = session(db)

    def crash():
        raise KeyboardInterrupt  # the process stops between the commit and the release

    s.interpreter.randomness = Watched(s.interpreter.randomness, crash)
    with pytest.raises(KeyboardInterrupt):
        s.run("x = laplace(count(patients), 0.25)")
    with session(db) as again:
        assert data_spent(again) == Fraction(1, 4)  # spent, although nothing was released


# ---------------------------------------------------------------- races between processes
def _race(db: str, csv: str, barrier, results) -> None:
    s = Session(budget=1, ledger_path=db, output=io.StringIO())
    s.bind_private("patients", csv, PATIENT_SCHEMA)
    barrier.wait()
    try:
        s.run("x = laplace(count(patients), 0.4)")
        results.put("won")
    except BudgetExceeded:
        results.put("refused")


@pytest.mark.parametrize("round_", range(2))
def test_processes_racing_for_the_last_of_a_budget(tmp_path, round_):
    db, csv = str(tmp_path / "ledger.sqlite"), str(tmp_path / "patients.csv")
    make_patients().to_csv(csv, index=False)
    with Session(budget=1, ledger_path=db) as s:
        s.bind_private("patients", csv, PATIENT_SCHEMA)
        s.run("x = laplace(count(patients), 0.5)")  # 0.5 left: room for one 0.4, not two
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(4), context.Queue()
    workers = [context.Process(target=_race, args=(db, csv, barrier, results)) for _ in range(4)]
    for worker in workers:
        worker.start()
    outcomes = sorted(results.get(timeout=120) for _ in workers)
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    assert outcomes == ["refused", "refused", "refused", "won"]
    with LedgerStore(db) as store:
        assert store.balance(store.datasets()[0].fingerprint)[0] == Fraction(9, 10)
        assert store.verify() == []


# ---------------------------------------------------------------- crashes
CHILD = """
import io, sys
from jostle import Session
s = Session(budget=10**6, ledger_path=sys.argv[1], output=io.StringIO())
s.bind_private("patients", sys.argv[2], {schema!r})
while True:
    s.run("x = laplace(count(patients), 0.001)")
    print(s.eval("x"), flush=True)  # printed only after the release has returned
"""


def _kill_at_random(db: str, csv: str, delay: float, after_first_line: bool) -> int:
    """Start a releasing child, SIGKILL it after `delay` s; return the releases it printed."""
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(schema=PATIENT_SCHEMA), db, csv],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    lines: list[bytes] = []
    first = threading.Event()

    def read() -> None:
        for line in child.stdout:
            lines.append(line)
            first.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    if after_first_line:
        assert first.wait(timeout=60), child.stderr.read().decode()
    time.sleep(delay)
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    reader.join(timeout=30)
    assert child.returncode == -signal.SIGKILL
    return sum(line.endswith(b"\n") for line in lines)


def test_sigkill_at_random_moments_never_under_reports(tmp_path):
    db, csv = str(tmp_path / "ledger.sqlite"), str(tmp_path / "patients.csv")
    make_patients().to_csv(csv, index=False)
    rng = np.random.default_rng(20240611)
    observed = 0
    for round_ in range(8):
        # Mostly mid-loop (after the first release); twice from the start, which may land in
        # start-up, registration or the first commit.
        mid_loop = round_ >= 2
        delay = float(rng.uniform(0, 0.5 if mid_loop else 2.0))
        observed += _kill_at_random(db, csv, delay, mid_loop)
        with LedgerStore(db) as store:
            datasets = store.datasets()
            spent = store.balance(datasets[0].fingerprint)[0] if datasets else Fraction(0)
            assert spent >= observed * Fraction(1, 1000), (round_, spent, observed)
            assert store.verify() == []
    assert observed > 0  # the kills did land while releases were being made
    connection = sqlite3.connect(db)
    assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    connection.close()


# ---------------------------------------------------------------- the audit trail
def test_the_ledger_is_append_only_and_tampering_is_detected(tmp_path):
    db = tmp_path / "ledger.sqlite"
    with session(db) as s:
        s.run("a = laplace(count(patients), 0.25)\nb = laplace(count(patients), 0.25)\n"
              "c = laplace(count(patients), 0.25)")
    connection = sqlite3.connect(db)
    for statement in ("DELETE FROM events WHERE id = 2", "UPDATE events SET epsilon = '0' WHERE id = 1"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            connection.execute(statement)
    # Someone determined drops the guard and removes a charge: verification notices.
    connection.execute("DROP TRIGGER events_are_never_deleted")
    connection.execute("DELETE FROM events WHERE id = 2")
    connection.commit()
    connection.close()
    with LedgerStore(db) as store:
        problems = store.verify()
        assert any("event 3" in p and "chain is broken" in p for p in problems)
        assert any("event 3" in p and "balance" in p for p in problems)


def test_reset_needs_confirmation_and_leaves_an_audit_row(tmp_path):
    db = tmp_path / "ledger.sqlite"
    with session(db) as s:
        s.run("x = laplace(count(patients), 1)")
    with LedgerStore(db) as store:
        (dataset,) = store.datasets()
        for confirmed in (False, None, "yes"):
            with pytest.raises(UsageError, match="confirmation"):
                store.reset(dataset.fingerprint, "new study", confirmed=confirmed)
        assert [e["kind"] for e in store.events()] == ["lifetime", "charge"]
        store.reset(dataset.fingerprint, "approved by the data board", confirmed=True)
        _, charge, reset = store.events()
        assert reset["kind"] == "reset" and reset["epsilon"] == "-1" and reset["spent_epsilon"] == "0"
        assert reset["note"].startswith("approved by the data board (by ")
        assert charge["spent_epsilon"] == "1"  # the history is kept
        assert store.verify() == []
    with session(db) as s:
        s.run("x = laplace(count(patients), 1)")
        assert s.spent.epsilon == 1


def test_charges_about_unregistered_data_are_still_recorded(tmp_path):
    """A release about private data that no table registered (a bare accountant here) is
    recorded against a shared stand-in dataset rather than lost."""
    from jostle.privacy.budget import Accountant, Budget

    with LedgerStore(tmp_path / "ledger.sqlite") as store:
        accountant = Accountant(Budget.of(1), store)
        with pytest.raises(BudgetExceeded, match="has no lifetime budget"):
            accountant.charge(Budget.of(0.5), accountant.root, "laplace", "x", None)
        assert [store.balance(d.fingerprint) for d in store.datasets()] == [(0, 0)]  # nothing charged
        for _ in range(2):
            accountant = Accountant(Budget.of(1), store, default_lifetime=Budget.of(1))
            accountant.charge(Budget.of(0.5), accountant.root, "laplace", "x", None)
        accountant = Accountant(Budget.of(1), store)
        with pytest.raises(BudgetExceeded, match="data not identified"):
            accountant.charge(Budget.of(0.5), accountant.root, "laplace", "x", None)
        (dataset,) = store.datasets()
        assert dataset.label == "(data not identified)"


# ---------------------------------------------------------------- hole 9 (issue 11)
def test_hole9_a_frame_with_booleans_and_its_csv_file_share_one_key(tmp_path):
    """The same rows bound as a DataFrame (a True/False column, dates, a categorical) and by the
    path of the CSV file pandas writes for it are one dataset, with one budget."""
    frame = pd.DataFrame({
        "name": ["alice", "bob", "carol"],
        "smoker": [True, False, True],
        "seen": pd.to_datetime(["2020-01-01", "2021-02-03", "2022-03-04"]),
        "group": pd.Categorical(["a", None, "b"]),
        "age": [30, 41.5, 52],
    })
    frame.to_csv(tmp_path / "people.csv", index=False)
    db = tmp_path / "ledger.sqlite"
    with Session(budget=1, ledger_path=db, output=io.StringIO()) as s:
        s.bind_private("t", frame)
        s.run('private t: {smoker: categorical([true, false])}\nx = laplace(count(t), 0.75)')
    with Session(budget=1, ledger_path=db, output=io.StringIO()) as s:
        s.bind_private("t", tmp_path / "people.csv")
        assert data_spent(s, "t") == Fraction(3, 4)
    with LedgerStore(db) as store:
        assert len(store.datasets()) == 1
        assert store._db.execute("SELECT COUNT(*) FROM contents").fetchone()[0] == 1  # one content
    text = frame.assign(smoker=frame["smoker"].map({True: "true", False: "FALSE"}))
    assert content_digest(text) == content_digest(frame)  # merging values only shares a budget


@pytest.mark.real_run  # audits the real run's draws and charges (tests/conftest.py)
def test_hole9_a_lifetime_budget_is_never_raised_by_a_later_run_or_a_program(tmp_path):
    """Budget 1 spent, then a later `--budget 2` (Session(budget=2)) or a program's `budget 100`
    would have granted more on the same data. The lifetime budget is the curator's (here the
    first binding session's total); only the curator's logged `jostle ledger lifetime` raises
    it, keeping what was spent, and a reset writes the balance off but keeps the lifetime."""
    db = tmp_path / "ledger.sqlite"
    with session(db, budget=1) as s:
        s.run("x = laplace(count(patients), 1)")
    with session(db, budget=2) as s:
        assert s.remaining.epsilon == 0
        with pytest.raises(BudgetExceeded, match="left of its lifetime budget") as caught:
            s.run("x = laplace(count(patients), 0.5)")
        assert "cannot raise a lifetime budget" in caught.value.hint
        assert "jostle ledger lifetime --dataset patients" in caught.value.hint
        assert ":memory:" not in caught.value.hint  # never suggested for what may be real data
        assert len(s.ledger) == 0
    with Session(ledger_path=db, output=io.StringIO()) as s:  # no total: the program sets one
        s.bind_private("patients", make_patients(), PATIENT_SCHEMA)
        with pytest.raises(BudgetExceeded, match="lifetime budget"):
            s.run("budget 100\nx = laplace(count(patients), 0.5)")
        s.run("print(remaining())")
        assert s.remaining.epsilon == 0
    with LedgerStore(db) as store:
        (dataset,) = store.datasets()
        assert store.lifetime(dataset.fingerprint) == Budget(Fraction(1), Fraction(0))
        with pytest.raises(UsageError, match="confirmation"):
            store.set_lifetime(dataset.fingerprint, (Fraction(3), Fraction(0)), "a second study")
        store.set_lifetime(dataset.fingerprint, (Fraction(3), Fraction(0)), "a second study", confirmed=True)
        assert store.balance(dataset.fingerprint) == (Fraction(1), Fraction(0))  # kept
        assert store.verify() == []
    with session(db, budget=5) as s:
        with pytest.raises(BudgetExceeded, match="only 2 left"):
            s.run("x = laplace(count(patients), 2.5)")
        s.run("x = laplace(count(patients), 2)")
    with LedgerStore(db) as store:
        (dataset,) = store.datasets()
        store.reset(dataset.fingerprint, "a new release approved by the board", confirmed=True)
        assert store.lifetime(dataset.fingerprint) == Budget(Fraction(3), Fraction(0))


def test_a_session_total_or_a_program_budget_never_changes_a_lifetime(tmp_path):
    """Issue 21: a session's smaller total, or a program's `budget 2` typed in the REPL, caps
    that session only; the data's lifetime budget is unchanged."""
    db = tmp_path / "ledger.sqlite"
    with session(db, budget=2, lifetime=5) as s:
        s.run("x = laplace(count(patients), 0.5)")
    with session(db, budget=1) as s:
        s.run("budget 0.5\nx = laplace(count(patients), 0.25)")
        with pytest.raises(BudgetExceeded, match="the program's budget"):
            s.run("budget 0.5\nx = laplace(count(patients), 0.75)")
    with session(db, budget=5) as s:
        assert data_spent(s) == Fraction(3, 4)
        (status,) = s.datasets
        assert status.lifetime.epsilon == 5 and status.left.epsilon == Fraction(17, 4)
        assert s.remaining.epsilon == Fraction(17, 4)
        s.run("x = laplace(count(patients), 4)")


def test_a_program_budget_within_the_lifetime_left_is_granted(tmp_path):
    """Issue 21: data with lifetime 5 of which 1 is spent; a program saying `budget 1.0` (no
    session total) may spend 1, and its numbers agree with the ledger's."""
    db = tmp_path / "ledger.sqlite"
    with session(db, budget=1, lifetime=5) as s:
        s.run("x = laplace(count(patients), 1)")
    out = io.StringIO()
    with Session(ledger_path=db, output=out) as s:
        s.bind_private("patients", make_patients(), PATIENT_SCHEMA)
        s.run("budget 1.0\nprint(remaining())\nx = laplace(count(patients), 1)\nprint(spent(), remaining())")
        (status,) = s.datasets
        assert (status.lifetime.epsilon, status.spent.epsilon, status.left.epsilon) == (5, 2, 3)
    assert out.getvalue() == "1.0\n1.0 0.0\n"


def test_a_declared_lifetime_that_differs_from_the_ledger_is_refused_at_bind(tmp_path):
    db = tmp_path / "ledger.sqlite"
    with Session(ledger_path=db) as s:
        s.bind_private("patients", make_patients(), PATIENT_SCHEMA, lifetime=3)
        s.bind_private("patients", make_patients(), PATIENT_SCHEMA, lifetime=3)  # the same: fine
        with pytest.raises(UsageError, match="has the lifetime budget epsilon=3 .* not epsilon=4") as caught:
            s.bind_private("patients", make_patients(), PATIENT_SCHEMA, lifetime=4)
        assert "jostle ledger lifetime" in caught.value.hint


@pytest.mark.real_run  # audits the real run's draws and charges (tests/conftest.py)
def test_durable_data_without_a_lifetime_takes_no_charge(tmp_path):
    """Neither the binding nor the session declares a lifetime: the program's `budget` does not
    become one; the first release is refused, nothing spent, with how to declare one."""
    db = tmp_path / "ledger.sqlite"
    with Session(ledger_path=db, output=io.StringIO()) as s:
        s.bind_private("patients", make_patients(), PATIENT_SCHEMA)
        with pytest.raises(BudgetExceeded, match="the data 'patients' has no lifetime budget") as caught:
            s.run("budget 1\nx = laplace(count(patients), 0.5)")
        assert "lifetime=E" in caught.value.hint and "--lifetime E" in caught.value.hint
        assert len(s.ledger) == 0 and s.remaining.epsilon == 0
    with LedgerStore(db) as store:
        (dataset,) = store.datasets()
        assert store.lifetime(dataset.fingerprint) is None and store.balance(dataset.fingerprint) == (0, 0)


def test_a_re_export_under_a_new_name_is_refused_at_bind(tmp_path, caplog):
    """The curator binds a copy of spent data under a new name: refused at bind time, to the
    curator (the error and the curator's log, jostle.ledger), with nothing bound or written;
    bound under the old name, the copy continues the old budget."""
    import logging

    from jostle.privacy.ledger_store import EqualData

    db = tmp_path / "ledger.sqlite"
    with session(db, budget=1) as s:
        s.run("x = laplace(count(patients), 1)")
    make_patients().to_csv(tmp_path / "export.csv", index=False)
    out = io.StringIO()
    with Session(budget=1, ledger_path=db, output=out) as s, caplog.at_level(logging.WARNING, "jostle.ledger"):
        with pytest.raises(EqualData, match="holds the same rows as the data 'patients'") as caught:
            s.bind_private("fresh", tmp_path / "export.csv", PATIENT_SCHEMA)
        assert "dataset='patients'" in caught.value.hint
        assert any("refused to bind 'fresh'" in r.getMessage() for r in caplog.records)
        assert "fresh" not in s.interpreter.globals.values and not s.accountant.datasets
        s.bind_private("fresh", tmp_path / "export.csv", PATIENT_SCHEMA, dataset="patients")
        with pytest.raises(BudgetExceeded, match="the data 'patients' has only 0 left"):
            s.run("x = laplace(count(fresh), 0.5)")
    assert out.getvalue() == ""
    with LedgerStore(db) as store:
        assert [d.name for d in store.datasets()] == ["patients"]


def test_a_format_1_ledger_is_migrated_and_keeps_its_balances(tmp_path):
    """A ledger written by format 1 (content keys, lifetime derived from the charges' totals)
    opens as format 2: the same events and hash chain, the same balance, a name and the
    lifetime its charges had fixed."""
    from tests.ledger_format_1 import format_1_ledger

    db = tmp_path / "ledger.sqlite"
    fingerprint = "f" + "0" * 63
    # Two format-1 charges (totals 2, then 1.5: the lifetime it fixed is 1.5).
    format_1_ledger(db, "ab" * 32, [(fingerprint, "patients")],
                    [(fingerprint, "1/2", "1/2", "2"), (fingerprint, "1/4", "3/4", "3/2")])
    with LedgerStore(db) as store:
        assert store.verify() == []
        (dataset,) = store.datasets()
        assert dataset.name == "patients" and dataset.fingerprint == fingerprint
        assert store.balance(fingerprint) == (Fraction(3, 4), Fraction(0))
        assert store.lifetime(fingerprint) == Budget(Fraction(3, 2), Fraction(0))
        assert [e["kind"] for e in store.events()] == ["charge", "charge", "lifetime"]
    with session(db, budget=5) as s:  # bound by its name, it continues
        with pytest.raises(BudgetExceeded, match="only 0.75 left"):
            s.run("x = laplace(count(patients), 1)")
        s.run("x = laplace(count(patients), 0.75)")


def test_processes_opening_a_new_ledger_at_once_all_succeed(tmp_path: Path):
    """Eight processes at a time open the same new ledger (the CLI's first runs in parallel):
    none may fail with 'database is locked' (SQLite's switch to WAL does not wait for the
    busy timeout; the store retries it). It failed 2 of 40 opens before the fix."""
    import subprocess
    import sys
    from concurrent.futures import ThreadPoolExecutor

    code = "import sys\nfrom jostle.privacy.ledger_store import LedgerStore\nLedgerStore(sys.argv[1])\n"
    failures = []
    for trial in range(5):
        path = str(tmp_path / f"ledger{trial}.sqlite")

        def open_it(_: int) -> subprocess.CompletedProcess:
            return subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, timeout=120)

        with ThreadPoolExecutor(8) as pool:
            failures += [r.stderr[-200:] for r in pool.map(open_it, range(8)) if r.returncode != 0]
    assert not failures, failures[0]
