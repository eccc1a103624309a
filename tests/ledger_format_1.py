"""A durable ledger as format 1 of jostle.privacy.ledger_store wrote it, for the migration tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from jostle.privacy import ledger_store
from jostle.privacy.ledger_store import PRIVACY_UNIT

FORMAT_1_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE datasets (fingerprint TEXT PRIMARY KEY, label TEXT NOT NULL, unit TEXT NOT NULL,
    columns TEXT NOT NULL, first_seen TEXT NOT NULL);
CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('charge', 'reset')),
    dataset TEXT NOT NULL REFERENCES datasets (fingerprint), at TEXT NOT NULL, session TEXT NOT NULL,
    seq INTEGER, epsilon TEXT NOT NULL, delta TEXT NOT NULL, spent_epsilon TEXT NOT NULL,
    spent_delta TEXT NOT NULL, total_epsilon TEXT, total_delta TEXT, requested_epsilon TEXT,
    requested_delta TEXT, mechanism TEXT, what TEXT, data TEXT, location TEXT, note TEXT,
    pid INTEGER NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL);
CREATE INDEX events_by_dataset ON events (dataset, id);
CREATE TRIGGER events_are_never_updated BEFORE UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'the budget ledger is append-only'); END;
CREATE TRIGGER events_are_never_deleted BEFORE DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'the budget ledger is append-only'); END;
"""


def format_1_ledger(db: Path, key: str, datasets: list[tuple[str, str]],
                     charges: list[tuple[str, str, str, str]] = ()) -> None:
    """A ledger as format 1 wrote it: datasets keyed by their content HMAC, charge events
    hash-chained (`charges`: fingerprint, epsilon, balance after, session total)."""
    con = sqlite3.connect(db)
    con.executescript(FORMAT_1_SCHEMA)
    con.execute("INSERT INTO meta VALUES ('format', '1'), ('key', ?)", (key,))
    for fingerprint, label in datasets:
        con.execute("INSERT INTO datasets VALUES (?, ?, ?, '[\"x\"]', '2026-01-01T00:00:00Z')",
                    (fingerprint, label, PRIVACY_UNIT))
    prev = ledger_store.GENESIS
    for fingerprint, epsilon, spent, total in charges:
        event = {"kind": "charge", "dataset": fingerprint, "at": "2026-01-01T00:00:00Z", "session": "s",
                 "seq": 1, "epsilon": epsilon, "delta": "0", "spent_epsilon": spent, "spent_delta": "0",
                 "total_epsilon": total, "total_delta": "0", "requested_epsilon": epsilon,
                 "requested_delta": "0", "mechanism": "laplace", "what": "count(g)", "data": "all rows",
                 "location": "", "note": None, "pid": 1}
        digest = ledger_store._hash(prev, event)
        names = list(ledger_store.EVENT_FIELDS_V2) + ["prev_hash", "hash"]
        con.execute(f"INSERT INTO events ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                    [event[n] for n in ledger_store.EVENT_FIELDS_V2] + [prev, digest])
        prev = digest
    con.commit()
    con.close()
