"""`jostle ledger`: show, export, verify, reset a dataset's balance, or change its lifetime, in
the durable budget ledger (jostle.privacy.ledger_store), touching no data.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jostle.diagnostics.errors import UsageError


def _open_ledger(args: argparse.Namespace, create: bool):
    from jostle.privacy.ledger_store import LedgerStore, resolve_ledger_path

    return LedgerStore(resolve_ledger_path(getattr(args, "db", None)), create=create)


def _show(store, dataset: str | None, summary: bool = False) -> str:
    from jostle.privacy.ledger_text import render_store, render_summary

    return render_summary(store, dataset) if summary else render_store(store, dataset)


def _lifetime_json(lifetime) -> list[str] | dict[str, str] | None:
    """A lifetime in the JSON export: [epsilon, delta] as before, or {"rho": R} for one in rho."""
    from jostle.privacy.measures import RhoZCDPBudget

    if lifetime is None:
        return None
    if isinstance(lifetime, RhoZCDPBudget):
        return {"rho": str(lifetime.rho)}
    return [str(lifetime.epsilon), str(lifetime.delta)]


def _export(store, form: str) -> str:
    import csv
    import io
    import json

    from jostle.privacy.ledger_store import EXPORT_FIELDS

    rows = store.export_rows()
    if form == "json":
        datasets = [{
            "fingerprint": d.fingerprint, "name": d.name, "label": d.label, "unit": d.unit, "columns": list(d.columns),
            "lifetime": _lifetime_json(store.lifetime(d.fingerprint)),
            "first_seen": d.first_seen, "spent_epsilon": str(store.spent(d.fingerprint).dp.epsilon),
            "spent_delta": str(store.spent(d.fingerprint).dp.delta), "spent_rho": str(store.spent(d.fingerprint).rho),
        } for d in store.datasets()]
        document = {"ledger": store.path, "problems": store.verify(), "datasets": datasets, "events": rows}
        return json.dumps(document, indent=2) + "\n"
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=EXPORT_FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def ledger_command(args: argparse.Namespace) -> int:
    """`jostle ledger [show|export|reset|verify|lifetime]`; returns the exit code."""
    from jostle.diagnostics.errors import DataError
    from jostle.privacy.ledger_store import MEMORY, LedgerStore

    action = args.action or "show"
    if action == "reset" and not args.yes:
        raise UsageError("`jostle ledger reset` needs --yes",
                         hint="a reset lets the data be queried again as if nothing had been released; "
                              "it is logged in the ledger")
    from jostle.privacy.ledger_store import resolve_ledger_path

    path = resolve_ledger_path(getattr(args, "db", None))
    try:
        store = _open_ledger(args, create=False)
    except DataError:
        # Only a ledger that does not exist yet reads as empty (and none is created); a file
        # that exists but cannot be opened as a ledger is an error, never an empty history.
        if action in ("reset", "lifetime") or (str(path) != MEMORY and Path(path).exists()):
            raise
        store = LedgerStore(MEMORY)
    with store:
        if action == "show":
            print(_show(store, getattr(args, "dataset", None), getattr(args, "summary", False)))
        elif action == "export":
            text = _export(store, args.format)
            if args.output:
                target = Path(args.output)
                try:
                    target.write_text(text, encoding="utf-8")
                except OSError as error:
                    raise UsageError(f"cannot write {target}: {error.strerror}",
                                     hint="give --output a file path in an existing folder") from None
            else:
                sys.stdout.write(text)
        elif action == "verify":
            problems = store.verify()
            for problem in problems:
                print(problem)
            if problems:
                raise DataError(f"the budget ledger {store.path} fails verification ({len(problems)} problems)",
                                hint="it was edited outside Jostle; keep it and investigate before trusting it")
            count = len(store.datasets())
            print(f"{store.path}: ok ({len(store.events())} events about {count} dataset{'s' * (count != 1)})")
        elif action == "lifetime":
            from jostle.privacy.ledger_text import change_lifetime

            print(change_lifetime(store, args.dataset, args.epsilon, args.delta, args.rho, args.reason, args.yes))
        else:
            dataset = store.resolve(args.dataset)
            event = store.reset(dataset.fingerprint, args.reason, confirmed=args.yes)
            from jostle.privacy.ledger_text import written_off

            print(f"reset dataset '{dataset.shown}': wrote off {written_off(event)}; logged as: {event['note']}")
    return 0
