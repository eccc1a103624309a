"""The migrations of older durable ledgers, run when the store opens them: format 1 to 2 (issue
21), then format 2 to 3 (issue 22).

Format 1 keyed every dataset by a fingerprint of its content, including files programs loaded,
and derived a dataset's lifetime budget from its charges' totals. Format 2 names datasets (the
curator's name), keeps the content of curator-bound data apart (`contents`) and records
lifetime budgets as events. Format 3 stores each event's measure ("pure", "approximate",
"zcdp") with its amounts (epsilon and delta, or rho) and each charge's unit, and each dataset's
unit as a `PrivacyUnit.text`. See jostle.privacy.ledger_store for the formats' guarantees.
"""

from __future__ import annotations

import os
from fractions import Fraction
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from jostle.privacy.ledger_store import LedgerStore

# Format 2's events table, frozen here: the 1 -> 2 migration builds it, then 2 -> 3 extends it.
_EVENTS_TABLE_V2 = """CREATE TABLE IF NOT EXISTS {name} (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL CHECK (kind IN ('charge', 'reset', 'lifetime')),
        dataset TEXT NOT NULL REFERENCES datasets (fingerprint),
        at TEXT NOT NULL, session TEXT NOT NULL, seq INTEGER,
        epsilon TEXT NOT NULL, delta TEXT NOT NULL, spent_epsilon TEXT NOT NULL, spent_delta TEXT NOT NULL,
        total_epsilon TEXT, total_delta TEXT, requested_epsilon TEXT, requested_delta TEXT,
        mechanism TEXT, what TEXT, data TEXT, location TEXT, note TEXT, pid INTEGER NOT NULL,
        prev_hash TEXT NOT NULL, hash TEXT NOT NULL
    )"""


def legacy_fields(event: dict[str, Any]) -> dict[str, Any]:
    """Format 3's columns of an event that format 2's columns already determine: a charge is
    "approximate" when it added a delta, else "pure", under unit row; a lifetime is "approximate"
    when it has a delta, else "pure"; a reset has no measure; nothing is in rho. (This is what
    the 2 -> 3 migration writes into every older event, and when an event's format-3 columns
    are these, its hash is format 2's: jostle.privacy.ledger_store._hash.)"""
    kind = event.get("kind")
    if kind == "charge":
        measure: str | None = "approximate" if event.get("delta") not in ("0", None) else "pure"
    elif kind == "lifetime":
        measure = "approximate" if event.get("total_delta") not in ("0", None) else "pure"
    else:
        measure = None
    return {"measure": measure, "rho": "0", "spent_rho": "0", "total_rho": None, "requested_rho": None,
            "unit": "row" if kind == "charge" else None}


def migrate_from_format_1(store: LedgerStore) -> None:
    """Rewrite a format-1 ledger as format 2, in one transaction (see the module docstring).

    Balances are unchanged (no charge or reset is touched and the hash chain is the same);
    each dataset is named after its table (its key's start is appended when two share a
    name); the lifetime budget format 1 derived from its charges (the smallest total since
    its last reset) is written as a `lifetime` event, so nothing a balance allowed before
    changes. Format-1 keys are not copied into `contents`: they keyed programs' loads too.
    """
    from jostle.privacy.ledger_schema import EVENT_GUARDS as _EVENT_GUARDS, now_text as _now

    with store._transaction():
        if store._meta().get("format") != "1":  # another process migrated it meanwhile
            return
        old_limits = {}
        for (fingerprint,) in store._db.execute("SELECT fingerprint FROM datasets").fetchall():
            rows = store._db.execute(
                "SELECT total_epsilon, total_delta FROM events WHERE dataset = ? AND kind = 'charge' "
                "AND id > (SELECT COALESCE(MAX(id), 0) FROM events WHERE dataset = ? AND kind = 'reset')",
                (fingerprint, fingerprint)).fetchall()
            totals = [(Fraction(e), Fraction(d)) for e, d in rows if e is not None and d is not None]
            if totals:
                old_limits[fingerprint] = (min(t[0] for t in totals), min(t[1] for t in totals))
        store._db.execute("ALTER TABLE datasets ADD COLUMN name TEXT")
        taken: set[str] = set()
        for fingerprint, label in store._db.execute(
                "SELECT fingerprint, label FROM datasets ORDER BY first_seen, fingerprint").fetchall():
            name = label if label not in taken else f"{label} ({fingerprint[:12]})"
            taken.add(name)
            store._db.execute("UPDATE datasets SET name = ? WHERE fingerprint = ?", (name, fingerprint))
        # The events table is rebuilt to admit `lifetime` events (a CHECK cannot be altered);
        # its rows are copied as they are, so the hash chain verifies as before.
        store._db.execute(_EVENTS_TABLE_V2.format(name="events_v2"))
        store._db.execute("INSERT INTO events_v2 SELECT * FROM events")
        store._db.execute("DROP TABLE events")
        store._db.execute("ALTER TABLE events_v2 RENAME TO events")
        for statement in _EVENT_GUARDS:
            store._db.execute(statement)
        store._db.execute("CREATE UNIQUE INDEX IF NOT EXISTS datasets_by_name ON datasets (name)")
        store._db.execute("""CREATE TABLE IF NOT EXISTS contents (content TEXT NOT NULL,
            dataset TEXT NOT NULL REFERENCES datasets (fingerprint), first_seen TEXT NOT NULL,
            PRIMARY KEY (content, dataset))""")
        # Format 1's keys are not copied into `contents`: they keyed the files programs loaded
        # as well as the curator's data, and a program's guesses must never be compared with
        # a curator's binding (issue 21). A dataset's content is recorded again when its
        # curator next binds it.
        for fingerprint, limit in old_limits.items():
            _append_format_2_lifetime(store, fingerprint, limit, _now())
        store._db.execute("UPDATE meta SET value = '2' WHERE key = 'format'")


def _append_format_2_lifetime(store: LedgerStore, fingerprint: str, limit: tuple[Fraction, Fraction],
                              at: str) -> None:
    """Append, as format 2 wrote it, the `lifetime` event of a dataset migrated from format 1."""
    from jostle.privacy.ledger_store import EVENT_FIELDS_V2, GENESIS, _hash

    spent = store._db.execute("SELECT spent_epsilon, spent_delta FROM events WHERE dataset = ? "
                              "ORDER BY id DESC LIMIT 1", (fingerprint,)).fetchone() or ("0", "0")
    event = dict.fromkeys(EVENT_FIELDS_V2)
    event.update({
        "kind": "lifetime", "dataset": fingerprint, "at": at, "session": "lifetime", "epsilon": "0",
        "delta": "0", "spent_epsilon": spent[0], "spent_delta": spent[1],
        "total_epsilon": str(limit[0]), "total_delta": str(limit[1]), "pid": os.getpid(),
        "note": "format 2 migration: the lifetime budget its charges fixed under format 1"})
    row = store._db.execute("SELECT hash FROM events ORDER BY id DESC LIMIT 1").fetchone()
    prev_hash = row[0] if row else GENESIS
    names = [*EVENT_FIELDS_V2, "prev_hash", "hash"]
    store._db.execute(f"INSERT INTO events ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                      [event[name] for name in EVENT_FIELDS_V2] + [prev_hash, _hash(prev_hash, event)])


def migrate_from_format_2(store: LedgerStore) -> None:
    """Rewrite a format-2 ledger as format 3, in one transaction (see the module docstring).

    Every event is copied as it is, with format 3's columns set to what its format-2 columns
    say (`legacy_fields`: pure or approximate by its delta, nothing in rho, a charge under unit
    row), so every balance and every hash is unchanged; every dataset is kept under unit row.
    """
    from jostle.privacy.ledger_audit import EVENT_FIELDS_V2
    from jostle.privacy.ledger_schema import EVENT_GUARDS as _EVENT_GUARDS
    from jostle.privacy.ledger_schema import EVENTS_TABLE as _EVENTS_TABLE
    from jostle.privacy.ledger_schema import FORMAT_VERSION

    with store._transaction():
        if store._meta().get("format") != "2":  # another process migrated it meanwhile
            return
        old = ", ".join(["id", *EVENT_FIELDS_V2, "prev_hash", "hash"])
        store._db.execute(_EVENTS_TABLE.format(name="events_v3"))
        store._db.execute(
            f"INSERT INTO events_v3 ({old}, measure, rho, spent_rho, total_rho, requested_rho, unit) "
            f"SELECT {old}, "
            "CASE kind WHEN 'charge' THEN (CASE WHEN delta != '0' THEN 'approximate' ELSE 'pure' END) "
            "WHEN 'lifetime' THEN (CASE WHEN total_delta IS NOT NULL AND total_delta != '0' "
            "THEN 'approximate' ELSE 'pure' END) ELSE NULL END, "
            "'0', '0', NULL, NULL, CASE kind WHEN 'charge' THEN 'row' ELSE NULL END FROM events ORDER BY id")
        store._db.execute("DROP TABLE events")
        store._db.execute("ALTER TABLE events_v3 RENAME TO events")
        for statement in _EVENT_GUARDS:
            store._db.execute(statement)
        store._db.execute("UPDATE datasets SET unit = 'row'")
        store._db.execute("UPDATE meta SET value = ? WHERE key = 'format'", (FORMAT_VERSION,))
