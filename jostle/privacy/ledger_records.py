"""What the durable ledger (jostle.privacy.ledger_store) hands out: datasets, charges, its refusals.

Kept apart from the store so that the accountant (jostle.privacy.budget) and the interfaces can
read these records without the SQLite code. Everything here is public: a dataset's name, key,
columns and lifetime, never its rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from jostle.diagnostics.errors import DataError
from jostle.privacy.measures import AnyBudget, Budget
from jostle.privacy.units import ROW, PrivacyUnit, parse_unit

# The unit tag of the content digest of curator-bound data (jostle.data.engine.fingerprint), as
# format 1 stored it for every dataset. It stays in the digest so that contents bound before
# format 3 still compare; a dataset's privacy unit is stored apart (`DatasetInfo.unit`) and is
# not part of its identity.
PRIVACY_UNIT = "one row added or removed"


@dataclass(frozen=True)
class DatasetInfo:
    """A dataset known to the store: its key, its curator's name and what is public about it.

    Attributes:
        fingerprint: The dataset's key in the store (an HMAC of its name for datasets made by
            format 2; the content key for datasets migrated from format 1).
        label: The table's name when the dataset was first seen.
        columns: Its column names (public: the header).
        first_seen: When it was first registered (UTC, ISO 8601).
        unit: The privacy unit its balance is kept under (`PrivacyUnit.text`: row, entity:KEY,
            replace_one), declared when it was first bound (format 3; datasets of earlier
            formats are row). Not part of its identity: binding it under another unit charges
            the same balance, converted or refused (jostle.privacy.units.convert_charge).
        name: Its name in the ledger (the curator's; "file:PATH" for data a program loaded).
    """

    fingerprint: str
    label: str
    columns: tuple[str, ...]
    first_seen: str
    unit: str = ROW.text
    name: str = ""

    @property
    def privacy_unit(self) -> PrivacyUnit:
        """The unit its balance is kept under, as a PrivacyUnit."""
        return parse_unit(self.unit) if self.unit != PRIVACY_UNIT else ROW

    @property
    def short(self) -> str:
        return self.fingerprint[:12]

    @property
    def shown(self) -> str:
        """How people read its name: the name, or the key's start when it has none."""
        return self.name or self.short


@dataclass(frozen=True)
class ChargeRecord:
    """What the accountant knows about one charge, written with it (all public).

    `requested` is the release's own budget, as its mechanism calibrated it ((epsilon, delta) or
    rho; a pair is read as (epsilon, delta)); `unit` the unit it was made under.
    """

    session: str
    seq: int
    requested: AnyBudget | tuple[Fraction, Fraction]
    mechanism: str
    what: str
    data: str
    location: str
    unit: PrivacyUnit = ROW

    @property
    def requested_budget(self) -> AnyBudget:
        if isinstance(self.requested, tuple):
            return Budget(Fraction(self.requested[0]), Fraction(self.requested[1]))
        return self.requested


class EqualData(DataError):
    """A curator binds, under a new name, rows equal to rows bound before under another name.

    Raised at bind time, to the curator, before any program runs; nothing is written.
    """

    def __init__(self, name: str, earlier: list[DatasetInfo], path: str) -> None:
        first = earlier[0]
        names = ", ".join(f"'{d.shown}'" for d in earlier)
        super().__init__(
            f"the data bound as '{name}' holds the same rows as the data {names} already in the budget "
            f"ledger {path}; nothing was bound",
            hint=f"bind it under the name '{first.shown}' (Session.bind_private(..., dataset="
                 f"{first.shown!r}), --dataset TABLE={shell_quoted(first.shown)}, or \"dataset\" in its schema "
                 "file) so that its spending and lifetime budget carry on: binding the same rows under "
                 "a new name does not restart a budget")
        self.name = name
        self.earlier = earlier


class LedgerRefusal(Exception):
    """A charge would take a dataset's balance past its lifetime budget, or cannot count in its
    unit or measure; nothing was written.

    Attributes:
        dataset: The dataset that refused it.
        quantity: "epsilon", "delta" or "rho" (the lifetime's quantity).
        balance: What the dataset had spent (every session, since its last reset).
        rise: What the charge would add.
        total: The dataset's lifetime budget in that quantity (0 when it has none).
        missing: True when the dataset has no lifetime budget at all (a durable ledger
            charges no dataset whose curator has not declared one).
        reason: Set when the charge cannot count against the dataset at all: its unit or its
            measure has no sound conversion into the dataset's (the numbers are then 0).
        kind: "lifetime", "missing", "unit" or "measure".
        note: How the numbers were counted (e.g. rho counted as epsilon at the delta left).
    """

    def __init__(self, dataset: DatasetInfo, quantity: str, balance: Fraction, rise: Fraction,
                 total: Fraction, missing: bool = False, *, reason: str | None = None,
                 kind: str | None = None, note: str = "") -> None:
        super().__init__(reason or f"{quantity}: {balance} + {rise} > {total} for {dataset.fingerprint}")
        self.dataset = dataset
        self.quantity = quantity
        self.balance = balance
        self.rise = rise
        self.total = total
        self.missing = missing
        self.reason = reason
        self.kind = kind or ("missing" if missing else "lifetime")
        self.note = note


def budget_text(budget: AnyBudget | tuple[Fraction, Fraction]) -> str:
    """`epsilon=E`, `epsilon=E, delta=D` or `rho=R`, exact (as jostle.privacy.budget.Budget prints)."""
    if not isinstance(budget, tuple):
        return str(budget)
    epsilon, delta = (Fraction(budget[0]), Fraction(budget[1]))
    text = f"epsilon={decimal_text(epsilon)}"
    return text + (f", delta={decimal_text(delta)}" if delta else "")


def decimal_text(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    for digits in range(6, 16):
        text = f"{float(value):.{digits}g}"
        if Fraction(text) == value:
            return text
    return f"{value.numerator}/{value.denominator}"


def shell_quoted(name: str) -> str:
    """A dataset name as a shell argument."""
    import shlex

    return shlex.quote(name)
