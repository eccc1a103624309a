"""The durable budget ledger: what has been spent against each private dataset, on disk.

The in-memory accountant (jostle.privacy.budget) composes the charges of one session. This module
makes the spending outlive the session: every charge is written to an SQLite database and
committed *before* the mechanism draws its noise, so running a program again, restarting the
REPL or starting a second process continues from what was already spent.

Design:
  * **Datasets are keyed by content.** A private table's key (its *fingerprint*) is computed
    from its raw rows, as read, before any schema is applied, by the engine that holds them
    (jostle.data.engine.fingerprint, version 2: an order-independent hash aggregate over
    canonical cells, so 30, "30" and 30.0 agree, missing cells alike, and the same rows in
    another order, from a CSV file, a DataFrame or a Parquet file give the same key; computed
    only when the ledger is durable). Version 1, a sorted serialisation computed in Python,
    was replaced in issue 14: a ledger written before keys its datasets anew. The schema is
    deliberately *not* part of the key: changing a column's bounds does not change whose data
    it is, and must not grant a fresh budget. The privacy unit ("one row added or removed") is
    part of the key, so a future unit (e.g. one person with several rows) gets its own budget.
    The SHA-256 of that serialisation is never stored: the fingerprint is an HMAC of it under
    a random key kept in the database, so an exported ledger cannot be used to test guesses
    about the data (with all rows but one known, a plain hash would reveal the last row).
    The row count is not stored either: under add/remove-one neighbours it is private.
  * **One budget for the tables of a session.** The accountant treats all private tables of a
    session as data about the same people (see jostle.privacy.budget), so a charge is recorded against
    *every* dataset registered in the session when it is made. This over-reports for a table
    the release did not touch, which is safe. A release about private data that no table
    registered (a way of making private tables that bypasses registration) is charged to one
    shared stand-in dataset, "(data not identified)", rather than not recorded.
  * **A lifetime budget only shrinks.** A dataset's lifetime budget is the smallest total
    under which it has been charged since its last reset (`limit`); a charge is checked
    against min(session total, that limit) and records that minimum as its total. So the
    first session that spends on the data fixes its budget, and neither a later `--budget 2`
    nor a program's `budget 100` can raise it: only the curator can, by writing the balance
    off with `jostle ledger reset` (logged, needs --yes). The limit is read from the hashed,
    append-only charge events, so editing it breaks `verify()`.
  * **Exact sequential composition across sessions.** Within a session the accountant composes
    charges (parallel over partitions); each charge records the *rise* of the session's
    composed cost (after - before), so a dataset's balance, the sum of its recorded rises, is
    an upper bound of what its sessions spent, composed sequentially (Dwork & Roth 2014,
    Theorem 3.16). Budgets are exact `Fraction`s, stored as text ("1/3").
  * **Commit before release.** A charge runs `BEGIN IMMEDIATE` (taking the write lock), reads
    each dataset's balance, checks balance + rise against the session's total, appends the
    charge, and `COMMIT`s; only then does the caller draw noise. Two processes therefore
    cannot both spend the last of a budget, and a process killed at any moment leaves either
    no record and no release (before the commit), or a record and maybe no release (after):
    the ledger may over-report, never under-report. The database runs in WAL mode with
    `synchronous=FULL`, so a committed charge also survives a power loss.
  * **Append-only and auditable.** Charges and resets are rows of one `events` table that
    triggers forbid updating or deleting. Each row carries the dataset's balance after it and a
    SHA-256 hash chained to the previous row, so `verify()` detects an edited or removed row.
    A reset appends a `reset` event that writes the balance off (its epsilon is minus the
    balance); it requires explicit confirmation and records who asked and why.

The store is located by `--ledger-db PATH`, `Session(ledger_path=...)`, or the environment
variable JOSTLE_LEDGER, and defaults to $XDG_DATA_HOME/jostle/ledger.sqlite
(~/.local/share/jostle/ledger.sqlite). The path ":memory:" keeps the ledger in memory for one
session only: nothing persists (for tests and teaching).
"""

from __future__ import annotations

import getpass
import hashlib
import hmac
import json
import os
import secrets
import socket
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path
from typing import Any

from jostle.diagnostics.errors import DataError, UsageError

MEMORY = ":memory:"
ENV_VAR = "JOSTLE_LEDGER"
PRIVACY_UNIT = "one row added or removed"
FORMAT_VERSION = "1"
GENESIS = "0" * 64  # prev_hash of the first event

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS datasets (
        fingerprint TEXT PRIMARY KEY,
        label TEXT NOT NULL,
        unit TEXT NOT NULL,
        columns TEXT NOT NULL,
        first_seen TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL CHECK (kind IN ('charge', 'reset')),
        dataset TEXT NOT NULL REFERENCES datasets (fingerprint),
        at TEXT NOT NULL,
        session TEXT NOT NULL,
        seq INTEGER,
        epsilon TEXT NOT NULL,
        delta TEXT NOT NULL,
        spent_epsilon TEXT NOT NULL,
        spent_delta TEXT NOT NULL,
        total_epsilon TEXT,
        total_delta TEXT,
        requested_epsilon TEXT,
        requested_delta TEXT,
        mechanism TEXT,
        what TEXT,
        data TEXT,
        location TEXT,
        note TEXT,
        pid INTEGER NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS events_by_dataset ON events (dataset, id)",
    """CREATE TRIGGER IF NOT EXISTS events_are_never_updated BEFORE UPDATE ON events
       BEGIN SELECT RAISE(ABORT, 'the budget ledger is append-only'); END""",
    """CREATE TRIGGER IF NOT EXISTS events_are_never_deleted BEFORE DELETE ON events
       BEGIN SELECT RAISE(ABORT, 'the budget ledger is append-only'); END""",
)

# The columns of an event, in the order they are hashed and exported.
EVENT_FIELDS = (
    "kind", "dataset", "at", "session", "seq", "epsilon", "delta", "spent_epsilon", "spent_delta",
    "total_epsilon", "total_delta", "requested_epsilon", "requested_delta", "mechanism", "what",
    "data", "location", "note", "pid",
)
# The columns of an export: the events with their dataset's label, and floats beside the exact
# budgets for spreadsheets (the exact text columns are authoritative).
EXPORT_FIELDS = (
    "id", "kind", "dataset", "dataset_label",
    *(name for name in EVENT_FIELDS if name not in ("kind", "dataset")),
    "epsilon_float", "spent_epsilon_float", "hash",
)


# ---------------------------------------------------------------- where the store lives
def default_ledger_path() -> Path:
    """$XDG_DATA_HOME/jostle/ledger.sqlite, or ~/.local/share/jostle/ledger.sqlite."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "jostle" / "ledger.sqlite"


def resolve_ledger_path(path: str | Path | None = None) -> str:
    """The store to use: `path` if given, else $JOSTLE_LEDGER, else the default path.

    Returns ":memory:" (no persistence) or an absolute file path.
    """
    chosen = str(path) if path is not None else os.environ.get(ENV_VAR) or str(default_ledger_path())
    if chosen == MEMORY:
        return MEMORY
    return str(Path(chosen).expanduser().resolve())


# ---------------------------------------------------------------- records
@dataclass(frozen=True)
class DatasetInfo:
    """A dataset known to the store: its fingerprint and what is public about it."""

    fingerprint: str
    label: str
    columns: tuple[str, ...]
    first_seen: str
    unit: str = PRIVACY_UNIT

    @property
    def short(self) -> str:
        return self.fingerprint[:12]


@dataclass(frozen=True)
class ChargeRecord:
    """What the accountant knows about one charge, written with it (all public)."""

    session: str
    seq: int
    requested: tuple[Fraction, Fraction]
    mechanism: str
    what: str
    data: str
    location: str


class LedgerRefusal(Exception):
    """A charge would take a dataset's balance past its total; nothing was written.

    Attributes:
        total: The total it was checked against: min(session total, lifetime budget).
        lifetime: True when that total is the dataset's lifetime budget, fixed by an earlier
            session and lower than this session's total.
    """

    def __init__(self, dataset: DatasetInfo, quantity: str, balance: Fraction, rise: Fraction,
                 total: Fraction, lifetime: bool = False) -> None:
        super().__init__(f"{quantity}: {balance} + {rise} > {total} for {dataset.fingerprint}")
        self.dataset = dataset
        self.quantity = quantity
        self.balance = balance
        self.rise = rise
        self.total = total
        self.lifetime = lifetime


def _text(value: Fraction) -> str:
    return str(Fraction(value))


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _hash(prev_hash: str, event: dict[str, Any]) -> str:
    payload = json.dumps([prev_hash] + [event.get(name) for name in EVENT_FIELDS], separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()


# ---------------------------------------------------------------- the store
class LedgerStore:
    """An SQLite budget ledger (see the module docstring for the guarantees).

    Args:
        path: A file path, or ":memory:" for a ledger that lives as long as this object.
        create: Create the file (and its directory) if it does not exist. With False a missing
            file is a DataError (read-only commands use this so that they never create one).
        timeout: Seconds to wait for another process's write lock before giving up.

    Raises:
        DataError: The file cannot be opened or is not a Jostle ledger.
    """

    def __init__(self, path: str | Path = MEMORY, create: bool = True, timeout: float = 60.0) -> None:
        self.path = MEMORY if str(path) == MEMORY else str(Path(path).expanduser().resolve())
        self.persistent = self.path != MEMORY
        if self.persistent:
            file = Path(self.path)
            if not file.exists():
                if not create:
                    raise DataError(f"there is no budget ledger at {self.path}",
                                    hint="nothing has been spent with this ledger yet")
                file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            self._db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
            self._db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            if self.persistent:
                self._enter_wal(timeout)
            meta = self._meta()
            if "key" not in meta:
                with self._transaction(durable=False):  # two processes may create it at once
                    for statement in _SCHEMA:
                        self._db.execute(statement)
                    self._db.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (FORMAT_VERSION,))
                    self._db.execute("INSERT OR IGNORE INTO meta VALUES ('key', ?)", (secrets.token_hex(32),))
                meta = self._meta()
        except sqlite3.Error as error:
            raise DataError(f"cannot open the budget ledger {self.path}: {error}",
                            hint="is it a Jostle ledger? choose another with --ledger-db PATH") from None
        if meta.get("format") != FORMAT_VERSION:
            raise DataError(f"the budget ledger {self.path} has format {meta.get('format')!r}, "
                            f"this Jostle reads format {FORMAT_VERSION!r}")
        self._key = bytes.fromhex(meta["key"])

    def _meta(self) -> dict[str, str]:
        try:
            return dict(self._db.execute("SELECT key, value FROM meta"))
        except sqlite3.OperationalError:  # a new file: no tables yet
            return {}

    def close(self) -> None:
        """Close the database connection (the store is unusable afterwards)."""
        self._db.close()

    def __enter__(self) -> LedgerStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------- datasets
    def _enter_wal(self, timeout: float) -> None:
        """Switch the file to write-ahead logging, waiting out other processes doing the same.

        SQLite does not call the busy handler for every lock this switch takes: several processes
        opening a new ledger at once failed with "database is locked" at once (2 of 40 in a test
        of 8 processes at a time; tests/test_ledger_store.py). The switch is retried, with a
        short random pause, until `timeout` has passed.
        """
        import random
        import time

        deadline = time.monotonic() + timeout
        while True:
            try:
                self._db.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) and "busy" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(random.uniform(0.005, 0.05))

    def fingerprint(self, digest: bytes) -> str:
        """The store's key for a dataset: HMAC-SHA256 of its content digest under the store's key."""
        return hmac.new(self._key, digest, hashlib.sha256).hexdigest()

    def register(self, digest: bytes, label: str, columns: Sequence[str] = ()) -> DatasetInfo:
        """Make a dataset known to the store (idempotent; the first label is kept)."""
        fingerprint = self.fingerprint(digest)
        known = self._db.execute("SELECT 1 FROM datasets WHERE fingerprint = ?", (fingerprint,)).fetchone()
        if known is None:
            with self._transaction(durable=False):
                self._db.execute(
                    "INSERT OR IGNORE INTO datasets VALUES (?, ?, ?, ?, ?)",
                    (fingerprint, label, PRIVACY_UNIT, json.dumps(sorted(map(str, columns))), _now()),
                )
        return self.dataset(fingerprint)

    def dataset(self, fingerprint: str) -> DatasetInfo:
        row = self._db.execute("SELECT fingerprint, label, columns, first_seen, unit FROM datasets "
                               "WHERE fingerprint = ?", (fingerprint,)).fetchone()
        if row is None:
            raise UsageError(f"no dataset {fingerprint} in the ledger {self.path}")
        return DatasetInfo(row[0], row[1], tuple(json.loads(row[2])), row[3], row[4])

    def datasets(self) -> list[DatasetInfo]:
        """Every dataset the store knows, in the order first seen."""
        rows = self._db.execute("SELECT fingerprint FROM datasets ORDER BY first_seen, fingerprint")
        return [self.dataset(fp) for (fp,) in rows.fetchall()]

    def resolve(self, prefix: str) -> DatasetInfo:
        """The dataset whose fingerprint starts with `prefix` (at least 6 characters)."""
        prefix = prefix.strip().lower()
        if len(prefix) < 6:
            raise UsageError(f"give at least 6 characters of the dataset's fingerprint, got {prefix!r}",
                             hint="`jostle ledger show` lists the fingerprints")
        matches = [d for d in self.datasets() if d.fingerprint.startswith(prefix)]
        if not matches:
            raise UsageError(f"no dataset in the ledger {self.path} has a fingerprint starting {prefix}",
                             hint="`jostle ledger show` lists the fingerprints")
        if len(matches) > 1:
            raise UsageError(f"{len(matches)} datasets have a fingerprint starting {prefix}",
                             hint="give more characters of the fingerprint")
        return matches[0]

    def balance(self, fingerprint: str) -> tuple[Fraction, Fraction]:
        """(epsilon, delta) spent against a dataset since its last reset."""
        row = self._db.execute(
            "SELECT spent_epsilon, spent_delta FROM events WHERE dataset = ? ORDER BY id DESC LIMIT 1",
            (fingerprint,),
        ).fetchone()
        return (Fraction(row[0]), Fraction(row[1])) if row else (Fraction(0), Fraction(0))

    def limit(self, fingerprint: str) -> tuple[Fraction, Fraction] | None:
        """A dataset's lifetime budget: the smallest (epsilon, delta) total, componentwise, under
        which it was charged since its last reset; None if it has not been charged since.

        It only shrinks: each charge records min(session total, this limit) as its total.
        """
        rows = self._db.execute(
            "SELECT total_epsilon, total_delta FROM events WHERE dataset = ? AND kind = 'charge' AND id > "
            "(SELECT COALESCE(MAX(id), 0) FROM events WHERE dataset = ? AND kind = 'reset')",
            (fingerprint, fingerprint),
        ).fetchall()
        totals = [(Fraction(e), Fraction(d)) for e, d in rows if e is not None and d is not None]
        if not totals:
            return None
        return min(t[0] for t in totals), min(t[1] for t in totals)

    # ---------------------------------------------------------- writing
    def record(self, fingerprints: Sequence[str], rise: tuple[Fraction, Fraction],
               total: tuple[Fraction, Fraction], charge: ChargeRecord) -> None:
        """Atomically check and record one charge against every dataset in `fingerprints`.

        Each dataset's balance plus `rise` must stay within min(`total`, its lifetime budget)
        in both epsilon and delta, and that minimum is recorded as the charge's total, so a
        lifetime budget never rises (see `limit`); otherwise nothing is written. Returns only after the commit is durable: the caller may
        then draw noise.

        Raises:
            LedgerRefusal: Some dataset's balance would exceed the total.
            DataError: The ledger cannot be written (e.g. locked for longer than the timeout).
        """
        with self._transaction():
            balances = {fp: self.balance(fp) for fp in fingerprints}
            caps = {}
            for fp in fingerprints:
                limit = self.limit(fp)
                caps[fp] = total if limit is None else (min(total[0], limit[0]), min(total[1], limit[1]))
            for fp, spent in balances.items():
                for index, quantity in enumerate(("epsilon", "delta")):
                    if spent[index] + rise[index] > caps[fp][index]:
                        raise LedgerRefusal(self.dataset(fp), quantity, spent[index], rise[index],
                                            caps[fp][index], lifetime=caps[fp][index] < total[index])
            for fp, spent in balances.items():
                self._append({
                    "kind": "charge", "dataset": fp, "at": _now(), "session": charge.session,
                    "seq": charge.seq, "epsilon": _text(rise[0]), "delta": _text(rise[1]),
                    "spent_epsilon": _text(spent[0] + rise[0]), "spent_delta": _text(spent[1] + rise[1]),
                    "total_epsilon": _text(caps[fp][0]), "total_delta": _text(caps[fp][1]),
                    "requested_epsilon": _text(charge.requested[0]),
                    "requested_delta": _text(charge.requested[1]),
                    "mechanism": charge.mechanism, "what": charge.what, "data": charge.data,
                    "location": charge.location, "note": None, "pid": os.getpid(),
                })

    def reset(self, fingerprint: str, reason: str, confirmed: bool) -> dict[str, Any]:
        """Write a dataset's balance off, logging who asked and why. Returns the reset event.

        Raises:
            UsageError: `confirmed` is not True, or the reason is empty.
        """
        if confirmed is not True:
            raise UsageError("resetting a dataset's budget needs explicit confirmation",
                             hint="it lets the data be queried again as if nothing had been "
                                  "released; add --yes if that is really intended")
        if not reason.strip():
            raise UsageError("a reset needs a reason (it is kept in the ledger)")
        dataset = self.dataset(fingerprint)
        with self._transaction():
            spent = self.balance(fingerprint)
            event = {
                "kind": "reset", "dataset": dataset.fingerprint, "at": _now(), "session": "reset",
                "seq": None, "epsilon": _text(-spent[0]), "delta": _text(-spent[1]),
                "spent_epsilon": "0", "spent_delta": "0", "total_epsilon": None, "total_delta": None,
                "requested_epsilon": None, "requested_delta": None, "mechanism": None, "what": None,
                "data": dataset.label, "location": None,
                "note": f"{reason.strip()} (by {_who()})", "pid": os.getpid(),
            }
            self._append(event)
        return event

    def _append(self, event: dict[str, Any]) -> None:
        row = self._db.execute("SELECT hash FROM events ORDER BY id DESC LIMIT 1").fetchone()
        prev_hash = row[0] if row else GENESIS
        names = list(EVENT_FIELDS) + ["prev_hash", "hash"]
        values = [event[name] for name in EVENT_FIELDS] + [prev_hash, _hash(prev_hash, event)]
        self._db.execute(f"INSERT INTO events ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                         values)

    class _Transaction:
        """BEGIN IMMEDIATE ... COMMIT (or ROLLBACK on an exception).

        A durable transaction (charges, resets) runs with synchronous=FULL: COMMIT returns only
        once the WAL is on disk, so a release never outlives its record, even across a power
        loss. Metadata (the schema, a dataset's name) is written with NORMAL, which skips the
        fsync; WAL is sequential, so the next durable commit makes it durable too.
        """

        def __init__(self, db: sqlite3.Connection, path: str, durable: bool) -> None:
            self.db, self.path, self.durable = db, path, durable

        def __enter__(self) -> None:
            try:
                self.db.execute(f"PRAGMA synchronous = {'FULL' if self.durable else 'NORMAL'}")
                self.db.execute("BEGIN IMMEDIATE")  # the write lock, before anything is read
            except sqlite3.OperationalError as error:
                raise DataError(f"cannot write the budget ledger {self.path}: {error}",
                                hint="another process may hold it; nothing was released") from None

        def __exit__(self, kind: type | None, error: BaseException | None, tb: object) -> None:
            if kind is None:
                try:
                    self.db.execute("COMMIT")
                except sqlite3.Error as failure:
                    self.db.execute("ROLLBACK")
                    raise DataError(f"cannot commit to the budget ledger {self.path}: {failure}",
                                    hint="nothing was released") from None
            elif self.db.in_transaction:
                self.db.execute("ROLLBACK")

    def _transaction(self, durable: bool = True) -> LedgerStore._Transaction:
        return LedgerStore._Transaction(self._db, self.path, durable)

    # ---------------------------------------------------------- reading
    def events(self, fingerprint: str | None = None) -> list[dict[str, Any]]:
        """Every event (oldest first), optionally of one dataset, as dicts with an `id`."""
        names = ["id", *EVENT_FIELDS, "prev_hash", "hash"]
        query = f"SELECT {', '.join(names)} FROM events"
        params: tuple = ()
        if fingerprint is not None:
            query += " WHERE dataset = ?"
            params = (fingerprint,)
        return [dict(zip(names, row)) for row in self._db.execute(query + " ORDER BY id", params)]

    def verify(self) -> list[str]:
        """Problems found in the ledger (an empty list if it is intact).

        Checks the hash chain (an edited, inserted or removed row breaks it, except removal of
        the newest rows) and that every balance is the sum of the dataset's rises.
        """
        problems = []
        prev_hash = GENESIS
        balances: dict[str, list[Fraction]] = {}
        for event in self.events():
            if event["prev_hash"] != prev_hash:
                problems.append(f"event {event['id']}: the chain is broken before it (a row was removed or changed)")
            if _hash(event["prev_hash"], event) != event["hash"]:
                problems.append(f"event {event['id']}: its contents do not match its hash")
            prev_hash = event["hash"]
            running = balances.setdefault(event["dataset"], [Fraction(0), Fraction(0)])
            try:
                running[0] += Fraction(event["epsilon"])
                running[1] += Fraction(event["delta"])
                stated = (Fraction(event["spent_epsilon"]), Fraction(event["spent_delta"]))
            except (TypeError, ValueError, ZeroDivisionError):
                problems.append(f"event {event['id']}: a budget is not an exact number")
                continue
            if tuple(running) != stated:
                problems.append(f"event {event['id']}: the balance {stated[0]} is not the sum of the charges {running[0]}")
                running[:] = list(stated)
        return problems

    def export_rows(self) -> list[dict[str, Any]]:
        """Every event with its dataset's label, and float columns beside the exact ones."""
        labels = {d.fingerprint: d.label for d in self.datasets()}
        rows = []
        for event in self.events():
            row = {"id": event["id"], "kind": event["kind"], "dataset": event["dataset"],
                   "dataset_label": labels.get(event["dataset"], "")}
            row.update({name: event[name] for name in EVENT_FIELDS if name not in ("kind", "dataset")})
            row["epsilon_float"] = float(Fraction(event["epsilon"]))
            row["spent_epsilon_float"] = float(Fraction(event["spent_epsilon"]))
            row["hash"] = event["hash"]
            rows.append(row)
        return rows


def _who() -> str:
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name in this environment
        user = "unknown user"
    return f"{user}@{socket.gethostname()}, pid {os.getpid()}"


def summarise(store: LedgerStore, fingerprints: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Per dataset: label, columns, first seen, balance, charges and resets so far."""
    wanted = set(fingerprints) if fingerprints is not None else None
    summary = []
    for dataset in store.datasets():
        if wanted is not None and dataset.fingerprint not in wanted:
            continue
        events = store.events(dataset.fingerprint)
        epsilon, delta = store.balance(dataset.fingerprint)
        summary.append({
            "dataset": dataset, "spent_epsilon": epsilon, "spent_delta": delta,
            "charges": sum(e["kind"] == "charge" for e in events),
            "resets": sum(e["kind"] == "reset" for e in events),
            "events": events,
        })
    return summary
