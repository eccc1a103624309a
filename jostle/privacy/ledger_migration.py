"""The migration of a format-1 durable ledger to format 2 (issue 21), run when the store opens it.

Format 1 keyed every dataset by a fingerprint of its content, including files programs loaded,
and derived a dataset's lifetime budget from its charges' totals. Format 2 names datasets (the
curator's name), keeps the content of curator-bound data apart (`contents`) and records
lifetime budgets as events. See jostle.privacy.ledger_store for both formats' guarantees.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from jostle.privacy.ledger_store import LedgerStore


def migrate_from_format_1(store: LedgerStore) -> None:
    """Rewrite a format-1 ledger as format 2, in one transaction (see the module docstring).

    Balances are unchanged (no charge or reset is touched and the hash chain is the same);
    each dataset is named after its table (its key's start is appended when two share a
    name); the lifetime budget format 1 derived from its charges (the smallest total since
    its last reset) is written as a `lifetime` event, so nothing a balance allowed before
    changes. Format-1 keys are not copied into `contents`: they keyed programs' loads too.
    """
    from jostle.privacy.ledger_store import _EVENTS_TABLE, _SCHEMA, FORMAT_VERSION

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
        store._db.execute(_EVENTS_TABLE.format(name="events_v2"))
        store._db.execute("INSERT INTO events_v2 SELECT * FROM events")
        store._db.execute("DROP TABLE events")
        store._db.execute("ALTER TABLE events_v2 RENAME TO events")
        for statement in _SCHEMA:
            store._db.execute(statement)
        # Format 1's keys are not copied into `contents`: they keyed the files programs loaded
        # as well as the curator's data, and a program's guesses must never be compared with
        # a curator's binding (issue 21). A dataset's content is recorded again when its
        # curator next binds it.
        for fingerprint, limit in old_limits.items():
            store._append_lifetime(fingerprint, limit, "format 2 migration: the lifetime budget "
                                  "its charges fixed under format 1")
        store._db.execute("UPDATE meta SET value = ? WHERE key = 'format'", (FORMAT_VERSION,))
