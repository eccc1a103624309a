"""A durable ledger as format 2 of jostle.privacy.ledger_store wrote it, for the migration tests.

Frozen here (the schema, the columns and the hash as format 2 computed them), so that the tests
check the migration against what format 2 really wrote, not against today's code.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

FORMAT_2_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE datasets (fingerprint TEXT PRIMARY KEY, label TEXT NOT NULL, unit TEXT NOT NULL,
    columns TEXT NOT NULL, first_seen TEXT NOT NULL, name TEXT);
CREATE UNIQUE INDEX datasets_by_name ON datasets (name);
CREATE TABLE contents (content TEXT NOT NULL, dataset TEXT NOT NULL REFERENCES datasets (fingerprint),
    first_seen TEXT NOT NULL, PRIMARY KEY (content, dataset));
CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('charge', 'reset', 'lifetime')),
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
FORMAT_2_FIELDS = (
    "kind", "dataset", "at", "session", "seq", "epsilon", "delta", "spent_epsilon", "spent_delta",
    "total_epsilon", "total_delta", "requested_epsilon", "requested_delta", "mechanism", "what",
    "data", "location", "note", "pid",
)
FORMAT_1_UNIT = "one row added or removed"  # what format 2 still wrote in datasets.unit


def format_2_hash(prev_hash: str, event: dict) -> str:
    """The hash format 2 chained each event with."""
    payload = json.dumps([prev_hash] + [event.get(name) for name in FORMAT_2_FIELDS], separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()


def format_2_ledger(db: Path, key: str, datasets: list[tuple[str, str]], events: list[dict]) -> list[str]:
    """Write a format-2 ledger: `datasets` (fingerprint, name) and `events` (dicts of format 2's
    columns; missing columns are None, `pid` 1), hash-chained. Returns the events' hashes."""
    con = sqlite3.connect(db)
    con.executescript(FORMAT_2_SCHEMA)
    con.execute("INSERT INTO meta VALUES ('format', '2'), ('key', ?)", (key,))
    for fingerprint, name in datasets:
        con.execute("INSERT INTO datasets VALUES (?, ?, ?, '[\"x\"]', '2026-01-01T00:00:00Z', ?)",
                    (fingerprint, name, FORMAT_1_UNIT, name))
    prev, hashes = "0" * 64, []
    for given in events:
        event = {name: None for name in FORMAT_2_FIELDS}
        event.update({"at": "2026-01-01T00:00:00Z", "session": "s", "pid": 1})
        event.update(given)
        digest = format_2_hash(prev, event)
        names = list(FORMAT_2_FIELDS) + ["prev_hash", "hash"]
        con.execute(f"INSERT INTO events ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                    [event[n] for n in FORMAT_2_FIELDS] + [prev, digest])
        prev = digest
        hashes.append(digest)
    con.commit()
    con.close()
    return hashes


def charge(dataset: str, epsilon: str, delta: str, spent: tuple[str, str], total: tuple[str, str]) -> dict:
    """A format-2 charge event."""
    return {"kind": "charge", "dataset": dataset, "seq": 1, "epsilon": epsilon, "delta": delta,
            "spent_epsilon": spent[0], "spent_delta": spent[1], "total_epsilon": total[0],
            "total_delta": total[1], "requested_epsilon": epsilon, "requested_delta": delta,
            "mechanism": "laplace", "what": "count(t)", "data": "all rows", "location": "<string>:1:5"}


def lifetime(dataset: str, total: tuple[str, str], spent: tuple[str, str] = ("0", "0")) -> dict:
    """A format-2 lifetime event."""
    return {"kind": "lifetime", "dataset": dataset, "session": "lifetime", "epsilon": "0", "delta": "0",
            "spent_epsilon": spent[0], "spent_delta": spent[1], "total_epsilon": total[0],
            "total_delta": total[1], "note": "declared when the data was bound (by someone)"}


def reset(dataset: str, spent: tuple[str, str]) -> dict:
    """A format-2 reset event writing off `spent`."""
    return {"kind": "reset", "dataset": dataset, "session": "reset", "epsilon": "-" + spent[0] if spent[0] != "0" else "0",
            "delta": "-" + spent[1] if spent[1] != "0" else "0", "spent_epsilon": "0", "spent_delta": "0",
            "data": "t", "note": "a new study (by someone)"}
