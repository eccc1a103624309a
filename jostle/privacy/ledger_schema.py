"""The durable ledger's format on disk and where it lives: the SQLite schema of format 3 (the
datasets, the content HMACs, the append-only hashed event chain and the triggers that keep it
append-only), how an amount is written into an event's columns, and how the store's path is
resolved (`--ledger-db`, `Session(ledger_path=)`, $JOSTLE_LEDGER, or the default under
$XDG_DATA_HOME). The store that reads and writes it is jostle.privacy.ledger_store, which
re-exports these names; the migrations from formats 1 and 2 are in jostle.privacy.ledger_migration.

Amounts are exact `Fraction`s stored as text ("1/3"), so no rounding ever enters the ledger.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path

from jostle.privacy.measures import AnyBudget, RhoZCDPBudget

MEMORY = ":memory:"
ENV_VAR = "JOSTLE_LEDGER"
FORMAT_VERSION = "3"

EVENTS_TABLE = """CREATE TABLE IF NOT EXISTS {name} (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL CHECK (kind IN ('charge', 'reset', 'lifetime')),
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
        hash TEXT NOT NULL,
        measure TEXT CHECK (measure IN ('pure', 'approximate', 'zcdp')),
        rho TEXT NOT NULL DEFAULT '0',
        spent_rho TEXT NOT NULL DEFAULT '0',
        total_rho TEXT,
        requested_rho TEXT,
        unit TEXT
    )"""
EVENT_GUARDS = (
    "CREATE INDEX IF NOT EXISTS events_by_dataset ON events (dataset, id)",
    """CREATE TRIGGER IF NOT EXISTS events_are_never_updated BEFORE UPDATE ON events
       BEGIN SELECT RAISE(ABORT, 'the budget ledger is append-only'); END""",
    """CREATE TRIGGER IF NOT EXISTS events_are_never_deleted BEFORE DELETE ON events
       BEGIN SELECT RAISE(ABORT, 'the budget ledger is append-only'); END""",
)
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS datasets (
        fingerprint TEXT PRIMARY KEY,
        label TEXT NOT NULL,
        unit TEXT NOT NULL,
        columns TEXT NOT NULL,
        first_seen TEXT NOT NULL,
        name TEXT
    )""",
    "CREATE UNIQUE INDEX IF NOT EXISTS datasets_by_name ON datasets (name)",
    # The content HMACs bound under each dataset by its curator (never by a program).
    """CREATE TABLE IF NOT EXISTS contents (
        content TEXT NOT NULL,
        dataset TEXT NOT NULL REFERENCES datasets (fingerprint),
        first_seen TEXT NOT NULL,
        PRIMARY KEY (content, dataset)
    )""",
    EVENTS_TABLE.format(name="events"),
    *EVENT_GUARDS,
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


def amount_text(value: Fraction) -> str:
    """An exact amount as the ledger stores it ("1/3")."""
    return str(Fraction(value))


def amount_columns(prefix: str, budget: AnyBudget | None) -> dict[str, str | None]:
    """The columns of an amount: PREFIX_epsilon and PREFIX_delta for (epsilon, delta), PREFIX_rho
    for a rho. The unprefixed amount (what an event adds to the balance) has all three, zero in
    the other measure; a lifetime or a requested budget only those of its measure."""
    head = f"{prefix}_" if prefix else ""
    zero = None if prefix else "0"
    if budget is None:
        return {f"{head}epsilon": zero, f"{head}delta": zero, f"{head}rho": zero}
    if isinstance(budget, RhoZCDPBudget):
        return {f"{head}epsilon": zero, f"{head}delta": zero, f"{head}rho": amount_text(budget.rho)}
    return {f"{head}epsilon": amount_text(budget.epsilon), f"{head}delta": amount_text(budget.delta),
            f"{head}rho": zero}


def now_text() -> str:
    """The time an event is written, in UTC to the millisecond (ISO 8601, "Z")."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


__all__ = ["MEMORY", "ENV_VAR", "FORMAT_VERSION", "EVENTS_TABLE", "EVENT_GUARDS", "SCHEMA", "default_ledger_path",
           "resolve_ledger_path", "amount_text", "amount_columns", "now_text"]
