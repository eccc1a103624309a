"""The texts of the accountant's refusals: what a program is told when a release would pass a
limit, so that the person can fix it.

Every refusal says that nothing was released and nothing was spent (the accountant checks
before it records, and every mechanism charges before it draws), names the limit that refused
(a `with budget` block, the program's or session's total, a dataset's lifetime budget in the
durable ledger) with the figures `jostle ledger show` prints, and hints at the fix. The figures
are public: caps, what was requested, and what earlier charges spent, never the data.

  * `no_total_refusal`: a release with no total set (a `with budget` block only caps);
  * `cap_refusal`: a release over a cap of this run (the session total or an open block);
  * `lifetime_refusal`: a release the durable ledger refused (a dataset's lifetime budget, its
    unit or its measure; jostle.privacy.ledger_store);
  * `library_note`: the note locating a release written in the standard library.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from jostle.diagnostics.errors import BudgetExceeded
from jostle.diagnostics.source import Span
from jostle.privacy.ledger_records import LedgerRefusal, shell_quoted
from jostle.privacy.measures import AnyBudget, fmt, fmt_exact

if TYPE_CHECKING:
    from jostle.privacy.composition import Charge


def no_total_refusal(span: Span | None) -> BudgetExceeded:
    """A release made before any total was set."""
    return BudgetExceeded(
        "no privacy budget has been set",
        span,
        "give one with --budget E on the command line, Session(budget=E) in Python, "
        "or a `budget E` statement at the top of the program",
    )


def cap_refusal(quantity: str, requested: Fraction, remaining: Fraction, label: str, cap_span: Span | None,
                before: AnyBudget, span: Span | None) -> BudgetExceeded:
    """A release needing `requested` of `quantity` where only `remaining` fits under the cap named
    `label` (set at `cap_span`), which had spent `before`."""
    where = f" ({cap_span.location})" if cap_span is not None else ""
    return BudgetExceeded(
        f"this release needs {quantity} {fmt(requested)} but only {fmt(remaining)} "
        f"remains of {label}{where}: requested {fmt(requested)}, "
        f"remaining {fmt(remaining)}, difference {fmt(requested - remaining)}",
        span,
        "nothing was released and nothing was spent; lower the release's "
        f"{quantity}, or give the program more budget"
        + (f" (spent so far: {fmt(dict(before.quantities())[quantity])})" if not before.is_zero() else ""),
        requested=requested,
        remaining=remaining,
        quantity=quantity,
    )


def lifetime_refusal(refusal: LedgerRefusal, entry: Charge, ledger_path: str) -> BudgetExceeded:
    """The error for a charge the store refused, in the numbers `jostle ledger show` prints."""
    data = refusal.dataset.shown
    show = f"`jostle ledger show --dataset {shell_quoted(data)}`"
    if refusal.kind == "unit":
        kept = refusal.dataset.privacy_unit
        return BudgetExceeded(
            f"this release cannot be charged to the data '{data}': {refusal.reason}",
            entry.span,
            f"nothing was released and nothing was spent (ledger {ledger_path}). The ledger keeps the data "
            f"'{data}' under the unit {kept} (its first binding), whatever unit it is bound under later: bind "
            f"it under {kept}, or release only what is private under {kept}; see {show}",
            library_note(entry.library_span),
        )
    if refusal.kind == "measure":
        return BudgetExceeded(
            f"this release cannot be charged to the data '{data}': {refusal.reason}",
            entry.span,
            f"nothing was released and nothing was spent (ledger {ledger_path}). A dataset's lifetime "
            "budget is held in the measure its curator declared; release in a measure that converts "
            "into it (a pure epsilon converts into rho as epsilon^2/2; a rho converts into (epsilon, "
            f"delta) with delta > 0), or its curator may change it with `jostle ledger lifetime --dataset "
            f"{shell_quoted(data)} ...` (logged); see {show}",
            library_note(entry.library_span),
        )
    if refusal.missing:
        return BudgetExceeded(
            f"the data '{data}' has no lifetime budget in the durable ledger",
            entry.span,
            f"nothing was released and nothing was spent (ledger {ledger_path}). A dataset's lifetime budget is its "
            "curator's to declare, when binding it (Session.bind_private(..., lifetime=E), "
            "`jostle run --lifetime E` or `--lifetime rho:R`, or \"lifetime\": E in its schema file) or with "
            f"`jostle ledger lifetime --dataset {shell_quoted(data)} E --reason TEXT --yes`; a "
            "program's `budget` is only a cap for that program",
            library_note(entry.library_span),
        )
    # The release's own amount in the refused quantity when it has one (its rise may be less, in
    # parallel parts); else what it would add, converted (e.g. a pure epsilon as rho).
    requested = dict(entry.budget.quantities()).get(refusal.quantity, refusal.rise)
    if requested <= refusal.total - refusal.balance:  # it fits alone: what it adds, converted, does not
        requested = refusal.rise
    remaining = max(Fraction(0), refusal.total - refusal.balance)
    # Written exactly (fmt_exact), as `jostle ledger show` writes them: 1/3, not 0.333333.
    return BudgetExceeded(
        f"this release needs {refusal.quantity} {fmt_exact(requested)} but the data '{data}' has only "
        f"{fmt_exact(remaining)} left of its lifetime budget: lifetime {fmt_exact(refusal.total)}, spent "
        f"{fmt_exact(refusal.balance)} (by this run and earlier ones), requested {fmt_exact(requested)}, "
        f"difference {fmt_exact(requested - remaining)}" + (f" ({refusal.note})" if refusal.note else ""),
        entry.span,
        f"nothing was released and nothing was spent; see {show}. A program's `budget` or "
        "--budget is only a cap for the run and cannot raise a lifetime budget; the data's "
        f"curator may, with `jostle ledger lifetime --dataset {shell_quoted(data)} "
        f"{'--rho R' if refusal.quantity == 'rho' else 'EPSILON'} --reason TEXT --yes` (logged; it keeps what was spent)",
        library_note(entry.library_span),
        requested=requested,
        remaining=remaining,
        quantity=refusal.quantity,
    )


def library_note(library_span: Span | None) -> list[tuple[str, Span | None]]:
    """The note naming where in library code a release relocated to the user's call is written."""
    return [("the release itself is written in the standard library", library_span)] \
        if library_span is not None else []


__all__ = ["no_total_refusal", "cap_refusal", "lifetime_refusal", "library_note"]
