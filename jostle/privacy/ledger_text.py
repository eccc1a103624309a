"""How a session's budget ledger prints: the `--ledger` table, `:ledger`, `str(Session.ledger)`.

One row per charge (where, mechanism, epsilon, delta, what, data) and a summary line. The
table stays narrow: a long description or data label is wrapped onto continuation lines of
its own column rather than widening every row (nothing is cut off), and the location is
never wrapped so that it can be copied. Budgets in the summary are written exactly
(`jostle.privacy.budget.fmt_exact`: 1/3 reads `1/3`, not 0.333333), so nothing that remains
is hidden; a remaining epsilon that is positive but too small to release anything useful (under
a millionth of the total) is said to be so.
"""

from __future__ import annotations

import textwrap
from fractions import Fraction

from collections.abc import Sequence

from jostle.privacy.budget import Budget, Charge, DatasetStatus, fmt

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


def remaining_text(total: Budget, spent: Budget) -> str:
    """`epsilon=R` exactly, flagged when it is positive but a negligible share of the total."""
    remaining = Budget(max(Fraction(0), total.epsilon - spent.epsilon), max(Fraction(0), total.delta - spent.delta))
    text = str(remaining)
    if 0 < remaining.epsilon < total.epsilon * NEGLIGIBLE_SHARE:
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
    header = ("#", "where", "mechanism", "epsilon", "delta", "what", "data")
    rows = [
        (str(c.index), c.span.location if c.span else "", c.mechanism, fmt(c.budget.epsilon),
         fmt(c.budget.delta) if c.budget.delta else "", c.description, c.node.label)
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
        return head + f"no lifetime budget, spent {status.spent} in all runs"
    return head + (f"lifetime budget {status.lifetime}, spent {status.spent} in all runs, "
                   f"left {remaining_text(status.lifetime, status.spent)}")
