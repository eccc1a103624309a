"""How the budget ledgers print: a session's (the `--ledger` table, `:ledger`, `str(Session.ledger)`)
and the durable one (`jostle ledger show`, `render_store`; `jostle ledger lifetime`, `change_lifetime`).

One row per charge (where, mechanism, epsilon, delta, what, data) and a summary line. The
table stays narrow: a long description or data label is wrapped onto continuation lines of
its own column rather than widening every row (nothing is cut off), and the location is
never wrapped so that it can be copied. Budgets in the summary are written exactly
(`jostle.privacy.budget.fmt_exact`: 1/3 reads `1/3`, not 0.333333), so nothing that remains
is hidden; a remaining epsilon that is positive but too small to release anything useful (under
a millionth of the total) is said to be so. zCDP spending is written as rho with its (epsilon,
delta) equivalent (CKS 2020), at the lifetime's delta when it has one, else at delta 1e-6
(labelled so: jostle.privacy.ledger_balance.describe_rho); each charge shows its unit.
"""

from __future__ import annotations

import textwrap
from fractions import Fraction

from collections.abc import Sequence

from typing import Any

from jostle.privacy.budget import AnyBudget, Budget, Charge, DatasetStatus, RhoZCDPBudget, exact, fmt
from jostle.privacy.ledger_balance import describe_rho

# Widest a wrapped column may be, in characters (by column header).
WRAP_WIDTHS = {"mechanism": 28, "what": 48, "data": 28}
# A positive remaining epsilon below this share of the total is flagged as too small to use.
NEGLIGIBLE_SHARE = Fraction(1, 10**6)
PARALLEL_NOTE = "(the parts of a partition compose in parallel: spent is not always the column sum)"


def _wrap(text: str, width: int | None) -> list[str]:
    """The cell's lines: `text` itself when it fits (or the column is never wrapped)."""
    if width is None or len(text) <= width:
        return [text]
    return textwrap.wrap(text, width, break_on_hyphens=False) or [text]


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    cells = [[_wrap(value, WRAP_WIDTHS.get(name)) for name, value in zip(header, row)] for row in rows]
    widths = [max([len(name)] + [len(line) for row in cells for line in row[i]]) for i, name in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    for row in cells:
        for k in range(max(len(cell) for cell in row)):
            parts = [cell[k] if k < len(cell) else "" for cell in row]
            lines.append("  ".join(p.ljust(w) for p, w in zip(parts, widths)).rstrip())
    return lines


def remaining_text(total: AnyBudget, spent: AnyBudget, left: AnyBudget | None = None) -> str:
    """What is left (`left`, else total - spent) exactly, flagged when it is positive but a
    negligible share of the total."""
    if left is None:
        left = (total - spent).floor_at_zero() if type(total) is type(spent) else type(total).zero()
    text = str(left)
    share = dict(left.quantities()).get("epsilon", dict(left.quantities()).get("rho", Fraction(0)))
    whole = dict(total.quantities()).get("epsilon", dict(total.quantities()).get("rho", Fraction(0)))
    if 0 < share < whole * NEGLIGIBLE_SHARE:
        text += " (under a millionth of the total: too little for a useful release)"
    return text


def render_ledger(charges: list[Charge], total: Budget | None, spent: Budget,
                  datasets: Sequence[DatasetStatus] = ()) -> str:
    """The ledger as an aligned text table, then what this run spent and what the data has left.

    The two are different things and print on lines of their own: this session's spending
    against its total (its cap), and, per dataset in the durable ledger, its lifetime budget and
    balance, which include earlier runs (the same numbers as `jostle ledger show`).

    Args:
        charges: This session's charges, oldest first.
        total: This session's total (None when no total is set yet).
        spent: What this session's charges cost together.
        datasets: Each dataset's lifetime budget and balance (Accountant.datasets_status).
    """
    zcdp = any(isinstance(c.budget, RhoZCDPBudget) or isinstance(c.charged, RhoZCDPBudget) for c in charges)
    header = ("#", "where", "mechanism", "epsilon", "delta", *(("rho",) if zcdp else ()), "what", "data")
    rows = [
        (str(c.index), c.span.location if c.span else "", c.mechanism,
         fmt(c.budget.epsilon) if isinstance(c.budget, Budget) else "",
         fmt(c.budget.delta) if isinstance(c.budget, Budget) and c.budget.delta else "",
         *((fmt(c.charged.rho) if isinstance(c.charged, RhoZCDPBudget) else "",) if zcdp else ()),
         c.description, c.node.label + ("" if c.unit.is_row or f"({c.unit})" in c.node.label else f" ({c.unit})"))
        for c in charges
    ]
    lines = _table(header, rows)
    if not rows:
        lines.append("(no charges)")
    summary = f"this run spent: {spent}"
    if total is not None:
        summary += f"   of its budget: {total}   left for this run: {remaining_text(total, spent)}"
    lines.append(summary)
    for status in datasets:
        lines.append(dataset_line(status))
    if any(c.node.parent is not None for c in charges):
        lines.append(PARALLEL_NOTE)
    return "\n".join(lines)


def dataset_line(status: DatasetStatus) -> str:
    """`data 'NAME': lifetime budget L, spent S in all runs, left R` (or: no lifetime budget)."""
    head = f"data '{status.dataset.shown}': "
    if status.lifetime is None:
        return head + f"no lifetime budget, spent {status.spent_text()} in all runs"
    return head + (f"lifetime budget {status.lifetime}, spent {status.spent_text()} in all runs, "
                   f"left {remaining_text(status.lifetime, status.spent, status.left)}")


# ---------------------------------------------------------------- the durable ledger
def _amount(event: dict[str, Any], prefix: str, lifetime: AnyBudget | None) -> str:
    """An event's amount (its rise, balance or request) as a person would write it: `E` or `E, D`
    for (epsilon, delta), rho with its (epsilon, delta) equivalent for zCDP."""
    head = f"{prefix}_" if prefix else ""
    rho = event.get(f"{head}rho")
    epsilon, delta = event.get(f"{head}epsilon"), event.get(f"{head}delta")
    parts = []
    if epsilon is not None and (Fraction(epsilon) or not rho or Fraction(rho) == 0):
        parts.append(fmt(Fraction(epsilon)) + (f", {fmt(Fraction(delta))}" if delta is not None and Fraction(delta) else ""))
    if rho is not None and Fraction(rho):
        parts.append(describe_rho(Fraction(rho), lifetime, labelled=False) if prefix != "requested"
                     else f"rho={fmt(Fraction(rho))}")
    return " + ".join(parts)


def _lifetime_of(event: dict[str, Any]) -> AnyBudget | None:
    if event.get("total_rho") is not None:
        return RhoZCDPBudget(Fraction(event["total_rho"]))
    if event.get("total_epsilon") is not None:
        return Budget(Fraction(event["total_epsilon"]), Fraction(event["total_delta"] or 0))
    return None


def render_store(store: Any, dataset: str | None = None) -> str:
    """`jostle ledger show`: each dataset's unit, lifetime, balance and every event (a LedgerStore)."""
    from jostle.privacy.ledger_store import summarise

    wanted = [store.resolve(dataset).fingerprint] if dataset else None
    problems = store.verify()
    events = store.events()
    state = "hash chain intact" if not problems else f"{len(problems)} PROBLEMS (run `jostle ledger verify`)"
    count = len(store.datasets())
    lines = [f"ledger {store.path}: {count} dataset{'s' * (count != 1)}, {len(events)} events, {state}"]
    for entry in summarise(store, wanted):
        info = entry["dataset"]
        status = DatasetStatus(info, entry["balance"], entry["lifetime"])
        if status.lifetime is not None:
            budget = (f"lifetime budget {status.lifetime}, spent {status.spent_text()}, "
                      f"left {remaining_text(status.lifetime, status.spent, status.left)}")
        else:
            budget = (f"no lifetime budget (a durable ledger charges it nothing until `jostle ledger "
                      f"lifetime` declares one), spent {status.spent_text()}")
        lines += ["", f"dataset '{info.shown}'  (table '{info.label}', columns {', '.join(info.columns)})",
                  f"  fingerprint {info.fingerprint}, privacy unit: {info.privacy_unit} "
                  f"({info.privacy_unit.describe()}), first seen {info.first_seen}",
                  f"  {budget}  ({entry['charges']} charges, {entry['resets']} resets)"]
        rows = []
        for e in entry["events"]:
            lifetime = _lifetime_of(e) or status.lifetime
            rows.append((
                str(e["id"]), e["at"], e["kind"], e["session"][:8], e["mechanism"] or "", e.get("unit") or "",
                _amount(e, "requested", lifetime) if e["kind"] == "charge" else "",
                _amount(e, "", lifetime), _amount(e, "spent", lifetime), e["what"] or e["note"] or "",
                e["location"] or "",
            ))
        lines += ["  " + line for line in _table(("id", "at", "kind", "session", "mechanism", "unit", "asked",
                                                   "charged", "spent", "what", "where"), rows)]
    if len(lines) == 1:
        lines.append("(no datasets: nothing has been spent with this ledger)")
    lines.append("(asked: the release's own budget; charged: what it added to the dataset's balance, in "
                 "the dataset's unit and lifetime measure, less when partitions compose in parallel; "
                 "rho is shown with its (epsilon, delta) equivalent)")
    return "\n".join(lines)


def render_summary(store: Any, dataset: str | None = None) -> str:
    """`jostle ledger show --summary`: per dataset, its releases, what they spent in each measure
    ((epsilon, delta) and rho), its lifetime budget and what is left; then per dataset and
    mechanism, how many releases and what they charged. Read from the ledger alone (public
    facts: the ledger is the curator's record of what was released)."""
    from jostle.privacy.ledger_store import summarise

    wanted = [store.resolve(dataset).fingerprint] if dataset else None
    problems = store.verify()
    state = "hash chain intact" if not problems else f"{len(problems)} PROBLEMS (run `jostle ledger verify`)"
    entries = summarise(store, wanted)
    count = len(entries)
    lines = [f"ledger {store.path}: {count} dataset{'s' * (count != 1)}, {state}"]
    if not entries:
        lines.append("(no datasets: nothing has been spent with this ledger)")
        return "\n".join(lines)
    rows, by_mechanism = [], []
    for entry in entries:
        info = entry["dataset"]
        status = DatasetStatus(info, entry["balance"], entry["lifetime"])
        balance = entry["balance"]
        rows.append((info.shown, str(info.privacy_unit), str(entry["charges"]), str(entry["resets"]),
                     fmt(balance.dp.epsilon), fmt(balance.dp.delta) if balance.dp.delta else "0",
                     fmt(balance.rho) if balance.rho else "0",
                     str(status.lifetime) if status.lifetime is not None else "none",
                     remaining_text(status.lifetime, status.spent, status.left) if status.lifetime is not None
                     else "(no lifetime)"))
        totals: dict[str, list] = {}
        for event in entry["events"]:
            if event["kind"] != "charge":
                continue
            total = totals.setdefault(event["mechanism"] or "?", [0, Fraction(0), Fraction(0), Fraction(0)])
            total[0] += 1
            for k, name in enumerate(("epsilon", "delta", "rho"), start=1):
                total[k] += Fraction(event.get(name) or 0)
        for mechanism, (n, epsilon, delta, rho) in sorted(totals.items()):
            by_mechanism.append((info.shown, mechanism, str(n), fmt(epsilon), fmt(delta) if delta else "0",
                                 fmt(rho) if rho else "0"))
    lines += _table(("dataset", "unit", "releases", "resets", "spent epsilon", "spent delta", "spent rho",
                     "lifetime", "left"), rows)
    lines += ["", "by mechanism (every release, also those before a reset; charged to the dataset's balance):"]
    lines += _table(("dataset", "mechanism", "releases", "epsilon", "delta", "rho"), by_mechanism)
    lines.append("(spent: since the dataset's last reset; rho is spent in zCDP, counted against an (epsilon, "
                 "delta) lifetime at its delta; `jostle ledger show` lists every event)")
    return "\n".join(lines)


def written_off(event: dict[str, Any]) -> str:
    """What a reset event wrote off: `epsilon E[, delta D][ and rho R]`."""
    epsilon, delta, rho = (Fraction(event[name] or 0) for name in ("epsilon", "delta", "rho"))
    text = f"epsilon {fmt(-epsilon)}" + (f", delta {fmt(-delta)}" if delta else "")
    return text + (f" and rho {fmt(-rho)}" if rho else "")


def change_lifetime(store: Any, name: str, epsilon: float | None, delta: float | None, rho: float | None,
                    reason: str, confirmed: bool) -> str:
    """`jostle ledger lifetime`: set a dataset's lifetime to EPSILON [--delta D] or --rho R (logged).

    Raises:
        UsageError: Neither or both of epsilon and rho, an invalid number, or (from the store) no
            reason or a raise without confirmation.
    """
    from jostle.diagnostics.errors import JostleError, UsageError

    dataset = store.resolve(name)
    current = store.lifetime(dataset.fingerprint)
    if (epsilon is None) == (rho is None):
        raise UsageError("`jostle ledger lifetime` takes a new EPSILON or --rho R (one of them)",
                         hint="for example `jostle ledger lifetime --dataset NAME 3 --reason TEXT` or "
                              "`... --rho 0.5 --reason TEXT`")
    try:
        if rho is not None:
            if delta is not None:
                raise UsageError("--delta goes with EPSILON, not with --rho")
            new: AnyBudget = RhoZCDPBudget(exact(rho, "rho"))
        else:
            kept = current.delta if isinstance(current, Budget) else Fraction(0)
            new = Budget(exact(epsilon, "epsilon"), exact(delta, "delta") if delta is not None else kept)
    except UsageError:
        raise
    except JostleError as error:
        raise UsageError(f"invalid lifetime: {error.message}") from None
    store.set_lifetime(dataset.fingerprint, new, reason, confirmed=confirmed)
    status = DatasetStatus(dataset, store.spent(dataset.fingerprint), new)
    return (f"dataset '{dataset.shown}': lifetime budget {current if current is not None else 'none'} -> "
            f"{new}; spent {status.spent_text()} (kept)")
