"""Auditing the durable ledger (jostle.privacy.ledger_store): its events' columns, their hash
chain, `verify`, the export rows and the per-dataset summary `jostle ledger show` prints.

Every event is a row of an append-only table with a SHA-256 hash chained to the previous row, so
an edited, inserted or removed row (except removal of the newest) breaks the chain, and every
balance column is checked against the sum of the dataset's amounts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from jostle.privacy.ledger_migration import legacy_fields

if TYPE_CHECKING:  # pragma: no cover
    from jostle.privacy.ledger_store import LedgerStore

GENESIS = "0" * 64  # prev_hash of the first event

# The columns of an event, in the order they are hashed and exported: format 2's, then format 3's
# (each event's measure, its rho amounts and the unit of a charge).
EVENT_FIELDS_V2 = (
    "kind", "dataset", "at", "session", "seq", "epsilon", "delta", "spent_epsilon", "spent_delta",
    "total_epsilon", "total_delta", "requested_epsilon", "requested_delta", "mechanism", "what",
    "data", "location", "note", "pid",
)
MEASURE_FIELDS = ("measure", "rho", "spent_rho", "total_rho", "requested_rho", "unit")
EVENT_FIELDS = EVENT_FIELDS_V2 + MEASURE_FIELDS
# The columns of an export: the events with their dataset's label, and floats beside the exact
# budgets for spreadsheets (the exact text columns are authoritative).
EXPORT_FIELDS = (
    "id", "kind", "dataset", "dataset_label",
    *(name for name in EVENT_FIELDS if name not in ("kind", "dataset")),
    "epsilon_float", "spent_epsilon_float", "rho_float", "spent_rho_float", "hash",
)


def _hash(prev_hash: str, event: dict[str, Any]) -> str:
    """The event's chained hash. Format 3's columns are hashed only when they say more than the
    format-2 columns already do (`legacy_fields`: pure or approximate by its delta, no rho, unit
    row), so every event written before format 3 keeps its hash, and changing any column of any
    event still changes it (a format-3 column changed away from its derived value is hashed)."""
    derived = legacy_fields(event)
    extended = any(event.get(name) is not None and event.get(name) != derived[name] for name in MEASURE_FIELDS)
    names = EVENT_FIELDS if extended else EVENT_FIELDS_V2
    payload = json.dumps([prev_hash] + [event.get(name) for name in names], separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()


def verify_events(events: list[dict[str, Any]]) -> list[str]:
    """Problems found in a ledger's events, oldest first (an empty list if it is intact).

    Checks the hash chain (an edited, inserted or removed row breaks it, except removal of
    the newest rows) and that every balance (epsilon, delta and rho) is the sum of the
    dataset's amounts.
    """
    problems = []
    prev_hash = GENESIS
    balances: dict[str, list[Fraction]] = {}
    quantities = (("epsilon", "spent_epsilon"), ("delta", "spent_delta"), ("rho", "spent_rho"))
    for event in events:
        if event["prev_hash"] != prev_hash:
            problems.append(f"event {event['id']}: the chain is broken before it (a row was removed or changed)")
        if _hash(event["prev_hash"], event) != event["hash"]:
            problems.append(f"event {event['id']}: its contents do not match its hash")
        prev_hash = event["hash"]
        running = balances.setdefault(event["dataset"], [Fraction(0), Fraction(0), Fraction(0)])
        try:
            for index, (amount, _) in enumerate(quantities):
                running[index] += Fraction(event[amount])
            stated = [Fraction(event[spent]) for _, spent in quantities]
        except (TypeError, ValueError, ZeroDivisionError):
            problems.append(f"event {event['id']}: a budget is not an exact number")
            continue
        for index, (amount, _) in enumerate(quantities):
            if running[index] != stated[index]:
                problems.append(f"event {event['id']}: the balance {amount} {stated[index]} is not the sum "
                                f"of the charges {running[index]}")
        running[:] = stated
    return problems


def export_rows(events: list[dict[str, Any]], labels: dict[str, str]) -> list[dict[str, Any]]:
    """Every event with its dataset's label (`labels`: key -> label), and float columns beside the
    exact ones."""
    rows = []
    for event in events:
        row = {"id": event["id"], "kind": event["kind"], "dataset": event["dataset"],
               "dataset_label": labels.get(event["dataset"], "")}
        row.update({name: event[name] for name in EVENT_FIELDS if name not in ("kind", "dataset")})
        row["epsilon_float"] = float(Fraction(event["epsilon"]))
        row["spent_epsilon_float"] = float(Fraction(event["spent_epsilon"]))
        row["rho_float"] = float(Fraction(event["rho"]))
        row["spent_rho_float"] = float(Fraction(event["spent_rho"]))
        row["hash"] = event["hash"]
        rows.append(row)
    return rows


def summarise(store: LedgerStore, fingerprints: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Per dataset: label, columns, first seen, balance (`balance`: both parts), lifetime, charges
    and resets so far."""
    wanted = set(fingerprints) if fingerprints is not None else None
    summary = []
    for dataset in store.datasets():
        if wanted is not None and dataset.fingerprint not in wanted:
            continue
        events = store.events(dataset.fingerprint)
        balance = store.spent(dataset.fingerprint)
        summary.append({
            "dataset": dataset, "spent_epsilon": balance.dp.epsilon, "spent_delta": balance.dp.delta,
            "balance": balance,
            "lifetime": store.lifetime(dataset.fingerprint),
            "charges": sum(e["kind"] == "charge" for e in events),
            "resets": sum(e["kind"] == "reset" for e in events),
            "events": events,
        })
    return summary
