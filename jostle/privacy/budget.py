"""Privacy budgets and the accountant that charges them.

Budgets are immutable and exact: epsilon and delta are `fractions.Fraction`s, so an equal
split of a budget (1/3 + 1/3 + 1/3) is never refused because of floating-point drift. A float
the user writes is snapped to the nearest simple rational within a relative 1e-12 (0.1 becomes
exactly 1/10; 1/3 computed as 0.333... becomes 1/3). Noise is calibrated with the *snapped*
value, so what is charged is exactly what the noise provides.

Accounting follows PINQ's agents (McSherry, SIGMOD 2009):
  * sequential composition: charges against the same data add up;
  * parallel composition: the parts of one `partition` are disjoint, so one individual's row
    lies in at most one part and the parts together cost the maximum over parts
    (McSherry 2009, Theorem 4);
  * capped contexts: `with budget b:` (and a program's `budget b` statement) cap what their
    body may spend; every open context and the session total are checked. A context only
    caps: every release also needs a total (from --budget, Session(budget=) or a program's
    `budget` statement), otherwise separate `with budget` blocks would add up without bound.
A charge is checked against every limit *before* it is recorded, and every mechanism charges
before it draws noise, so an over-budget request fails with nothing released.

This module is the accountant. The budget values and their arithmetic are in
jostle.privacy.measures, the cost tree in jostle.privacy.composition, the refusals' texts in
jostle.privacy.refusals and the float helpers every learner rounds with (`floor_float`,
`ceil_float`) in jostle.privacy.rounding; all of them are re-exported here.

Costs are kept incrementally (`CostTree`): every node of the partition tree holds the running
cost of its subtree and every parallel group the running maximum over its parts, so a charge
is checked and recorded in O(depth of the partition tree), not by re-costing the ledger.

Two kinds of limit, kept apart (issue 21):
  * **caps of this run**: the session total (`--budget`, `Session(budget=)`, or the first
    program's `budget` statement when neither is given) and every open `budget`/`with budget`
    context; they bound what this session spends and are checked here, in memory;
  * **the data's lifetime budget**, the curator's: with a store (jostle.privacy.ledger_store), each
    charge is also checked against, and committed to, the balance of every private dataset
    registered in the session, before noise is drawn, and each dataset's balance must stay
    within its own lifetime budget. What is stored per charge is the rise of the session's
    composed cost, so spending composes sequentially across runs and processes. A lifetime is
    declared when the curator binds the data (or defaults to the binding session's total,
    which the curator gave) and is changed only by `jostle ledger lifetime`: no program, `with
    budget` block or REPL line sets or changes it.
`spent` is what this session spent; `remaining` is the most the next release may take (the
smaller of what the session's total and every dataset's lifetime leave); `datasets_status`
gives each dataset's lifetime and balance, which include earlier sessions. A dataset is
identified by its curator's name, never by comparing a program's rows with the ledger
(docs/threat_model.md, "The durable ledger").

The accountant also remembers, in memory only, every private source registered in the session
(`PrivateSource`: name, content digest, columns, file), so that no program of the session can
read that data back as public (jostle.language.loading.refuse_registered_private_file).

Each table is private for the unit its curator bound it under (jostle.privacy.units: one row
added or removed by default), and lives under that unit's root (`root_for`): a value mixing
roots is refused, so every charge has one unit. The private tables bound in one session are
treated as data about the same individuals, so they share one budget; in the durable ledger a
charge is recorded against the datasets bound under its unit (`_commit`), each kept under the
unit and the measure its curator first gave it (jostle.privacy.ledger_balance).
"""

from __future__ import annotations

import logging
import math
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Callable, Iterator

from jostle.diagnostics.errors import BudgetExceeded, JostleRuntimeError
from jostle.privacy.accounting import ZCDP, Accounting, MeasureMismatch
from jostle.privacy.units import ROW, PrivacyUnit
from jostle.privacy.conversions import pure_to_rho
from jostle.privacy.ledger_balance import Balance, ChargeRise, describe_rho, left_in, spent_in_lifetime_measure
from jostle.privacy.ledger_records import ChargeRecord, DatasetInfo, EqualData, LedgerRefusal
from jostle.privacy.ledger_store import CURATOR_LOG, LedgerStore
from jostle.privacy.refusals import cap_refusal, library_note, lifetime_refusal, no_total_refusal
from jostle.privacy.rounding import ceil_float, floor_float  # noqa: F401 (re-exported: every learner rounds with them)
from jostle.diagnostics.source import Span
from jostle.privacy.measures import (  # noqa: F401 (re-exported: the budget values live there)
    AnyBudget, ApproxDPBudget, Budget, PureDPBudget, RhoZCDPBudget, exact, fmt, fmt_exact, zero_like,
)

# The key under which charges about private data that no table registered are recorded.
UNIDENTIFIED_DATA = b"jostle: private data that was not registered with the ledger"

from jostle.privacy.composition import (  # noqa: E402,F401 (re-exported: the tree lived here)
    Charge, CostTree, DataNode, ParallelGroup, common_node, cost,
)


@dataclass(eq=False)
class BudgetContext:
    """An open cap: the session total, a program's `budget`, or a `with budget` block."""

    cap: AnyBudget
    label: str
    span: Span | None
    releases: int = 0
    charges: list[Charge] = field(default_factory=list)
    tree: CostTree = field(default=None, repr=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.tree is None:
            self.tree = CostTree(zero_like(self.cap))

    @property
    def spent(self) -> AnyBudget:
        """What the charges made in this context cost together."""
        return self.tree.total

    @property
    def per_release(self) -> AnyBudget:
        """What each `{{ }}` written directly in this context's body is allotted: an equal share
        of the cap (of its epsilon, delta 0, under DP; of its rho under zCDP)."""
        parts = max(1, self.releases)
        if isinstance(self.cap, RhoZCDPBudget):
            return self.cap / parts
        return Budget(self.cap.epsilon / parts, Fraction(0))


@dataclass(frozen=True)
class PrivateSource:
    """Data registered as private in a session (bound by the curator or load()ed as private).

    Kept in memory only, never shown: jostle.language.loading.refuse_registered_private_file compares
    the files a program reads as public against these.

    Attributes:
        label: The table's name.
        digest: the content digest of its raw rows (jostle.data.engine.fingerprint).
        columns: Its column names (public: the header).
        path: The resolved path of the file it was read from, if any.
        unit: The privacy unit it was registered under.
    """

    label: str
    digest: bytes
    columns: frozenset[str]
    path: Path | None = None
    unit: PrivacyUnit = ROW


@dataclass(frozen=True)
class DatasetStatus:
    """What the ledger holds for one dataset of the session: public facts about its identity.

    Attributes:
        dataset: The dataset (its name in the ledger, key, columns and the unit it is kept under).
        balance: What every session spent on it since its last reset, this one included: its
            (epsilon, delta) part and its rho part (jostle.privacy.ledger_balance).
        lifetime: Its lifetime budget, (epsilon, delta) or rho, or None if it has none.
    """

    dataset: DatasetInfo
    balance: Balance
    lifetime: AnyBudget | None

    @property
    def spent(self) -> AnyBudget:
        """Its balance as one amount in its lifetime's measure (rho spent against an (epsilon,
        delta) lifetime counted as epsilon at the delta left: ledger_balance.spent_in_lifetime_measure)."""
        return spent_in_lifetime_measure(self.balance, self.lifetime)

    @property
    def left(self) -> AnyBudget | None:
        """What its lifetime budget has left, in the lifetime's measure (never below zero), or
        None without one."""
        if self.lifetime is None:
            return None
        return left_in(self.balance, self.lifetime, isinstance(self.lifetime, RhoZCDPBudget))

    def left_in(self, accounting: Accounting) -> AnyBudget | None:
        """What its lifetime leaves for the next charge in a session's measure (None without one)."""
        if self.lifetime is None:
            return None
        return left_in(self.balance, self.lifetime, accounting.is_zcdp)

    def spent_text(self) -> str:
        """Its balance as people read it: (epsilon, delta) and rho with its (epsilon, delta) equivalent."""
        parts = [] if self.balance.dp.is_zero() and self.balance.rho else [str(self.balance.dp)]
        if self.balance.rho:
            parts.append(describe_rho(self.balance.rho, self.lifetime))
        text = " and ".join(parts)
        if isinstance(self.lifetime, RhoZCDPBudget) and not self.balance.dp.is_zero():
            text += f" (as rho: {self.spent})"
        return text


class Accountant:
    """Charges releases against the session total, every open budget context and the store.

    Args:
        total: The session's total budget, or None to let the program's `budget` statement set it.
        store: A durable ledger (jostle.privacy.ledger_store); None keeps the accounting in memory.
        session_id: How this session's charges are labelled in the store (random by default).
        default_lifetime: The lifetime budget a dataset registered in this session takes when
            the store has none for it and none is declared (the curator's session total).
    """

    def __init__(self, total: AnyBudget | None = None, store: LedgerStore | None = None,
                 session_id: str | None = None, default_lifetime: Budget | None = None,
                 accounting: Accounting | None = None) -> None:
        self.root = DataNode("all rows")
        self._unit_roots: dict[PrivacyUnit, DataNode] = {ROW: self.root}
        if accounting is None:
            accounting = Accounting(ZCDP) if isinstance(total, RhoZCDPBudget) else Accounting()
        if total is not None and not accounting.accepts_cap(total):
            raise MeasureMismatch(f"the session's total ({total}) is not in its accounting ({accounting})")
        self.accounting = accounting
        self.total: BudgetContext | None = (
            BudgetContext(total, "the session budget", None) if total is not None else None
        )
        self.ledger: list[Charge] = []
        self._stack: list[BudgetContext] = []
        self._tree = CostTree(accounting.zero())
        self.store = store
        self.session_id = session_id or uuid.uuid4().hex
        self.datasets: dict[str, DatasetInfo] = {}
        # The units each dataset was bound under in this session (the roots its tables live under).
        self.dataset_units: dict[str, set[PrivacyUnit]] = {}
        # In DP accounting, the session's pure releases composed in rho (each epsilon^2/2, parallel
        # parts at their largest): what a dataset whose lifetime is in rho is charged (_commit).
        self._rho_shadow = CostTree(RhoZCDPBudget.zero())
        self.private_sources: list[PrivateSource] = []
        self.default_lifetime = default_lifetime
        # The user's call through which library code (the standard library) is running, set by
        # the evaluator: a release written in the library is located there (see `charge`).
        self.call_site: Span | None = None

    def root_for(self, unit: PrivacyUnit) -> DataNode:
        """The data node under which tables private for `unit` live: one per unit, so that a
        value mixing units is refused (`common_node`) and each charge knows its unit. The
        roots compose sequentially (they are about the same individuals)."""
        if unit not in self._unit_roots:
            self._unit_roots[unit] = DataNode(f"all rows ({unit})", unit=unit)
        return self._unit_roots[unit]

    # ---------------------------------------------------------- datasets
    def register_dataset(self, digest: bytes, label: str, columns: list[str] | tuple[str, ...] = (),
                         path: Path | None = None, *, name: str | None = None,
                         lifetime: AnyBudget | None = None, by_curator: bool = True,
                         unit: PrivacyUnit | None = None,
                         legacy_digest: Callable[[], bytes] | None = None) -> str | None:
        """Make a private table's data known: from now on every charge made under its unit is
        also recorded against it in the store (see `_commit`), and no program of the session may
        read it as public. Returns its key in the store (None without a store).

        Args:
            digest: the content digest of the raw table (jostle.data.engine.fingerprint).
            label: The table's name, for people reading the ledger.
            columns: Its column names (public).
            path: The file it was read from, if any.
            name: Its name in the ledger: the curator's (default `label`); for data a program
                loads, "file:" and the resolved path.
            lifetime: The lifetime budget its curator declares, (epsilon, delta) or rho: the
                dataset's lifetime is held in that measure (see LedgerStore.open_dataset); without
                one, a new dataset takes the session's default lifetime, in its measure.
            by_curator: The curator binds it. Only then is its content compared with the
                contents bound before (rows equal to another dataset's are refused, so a
                re-export under a new name cannot restart a lifetime); a program's `load` is
                identified by its path alone, so that nothing the program sees depends on
                whether its rows equal data in the ledger.
            legacy_digest: Computes the data's version-2 content digest; called only while the
                ledger holds contents known by that version alone (LedgerStore.needs_legacy_content).
            unit: The privacy unit it is bound under in this session (default row): its tables
                live under `root_for(unit)`. A new dataset is kept under it in the ledger; one the
                ledger knows keeps the unit it was first bound under (its identity does not include
                the unit, so a second unit cannot open a second lifetime budget: charges made under
                this unit are converted into the kept one, or refused, when recorded).

        Raises:
            EqualData: The curator binds under a new name rows bound before under another.
            UsageError: The declared lifetime differs from the one the ledger holds.
        """
        info = None
        unit = ROW if unit is None else unit
        if self.store is not None:
            compare = by_curator and self.store.persistent and not digest.startswith(UNIDENTIFIED_DATA)
            # the version-2 digest only while the ledger holds contents known by it alone
            legacy = (legacy_digest() if compare and legacy_digest is not None and self.store.needs_legacy_content()
                      else None)
            try:
                info = self.store.open_dataset(
                    name or label, label, columns, content=digest if compare else None,
                    lifetime=lifetime, default_lifetime=self.default_lifetime, unit=unit, legacy_content=legacy)
            except EqualData as refusal:
                # Told to the curator (the error at bind time, and the curator's log), before
                # any program runs; a program never sees which rows equal which.
                logging.getLogger(CURATOR_LOG).warning(
                    "refused to bind '%s': the same rows as %s in the ledger %s", refusal.name,
                    ", ".join(f"'{d.shown}'" for d in refusal.earlier), self.store.path)
                raise
            self.datasets.setdefault(info.fingerprint, info)
            self.dataset_units.setdefault(info.fingerprint, set()).add(unit)
            if info.privacy_unit != unit:
                logging.getLogger(CURATOR_LOG).warning(
                    "'%s' is bound under the unit %s, but the ledger %s keeps its balance under %s (its "
                    "first binding): charges are converted into %s or refused", info.shown, unit,
                    self.store.path, info.privacy_unit, info.privacy_unit)
        if not digest.startswith(UNIDENTIFIED_DATA):
            resolved = path.resolve() if path is not None else None
            self.private_sources.append(PrivateSource(label, digest, frozenset(map(str, columns)), resolved,
                                                      unit if isinstance(unit, PrivacyUnit) else ROW))
        return None if info is None else info.fingerprint

    # ---------------------------------------------------------- queries
    @property
    def spent(self) -> AnyBudget:
        """What this session's charges cost together (earlier sessions are not included: see
        `datasets_status` for what the data has spent in all)."""
        return self._tree.total

    session_spent = spent

    def datasets_status(self) -> list[DatasetStatus]:
        """Each registered dataset's lifetime budget and balance (every session's spending)."""
        if self.store is None:
            return []
        return [DatasetStatus(info, self.store.spent(fingerprint), self.store.lifetime(fingerprint))
                for fingerprint, info in self.datasets.items()]

    @property
    def cap(self) -> AnyBudget | None:
        """This session's total (None until one is set); a dataset's lifetime is not part of it."""
        return None if self.total is None else self.total.cap

    @property
    def remaining(self) -> AnyBudget | None:
        """The most the next release may spend, in the session's measure: what the session
        total leaves, lowered to what every registered dataset's lifetime budget leaves (None
        if no total is set). A lifetime in another measure is converted where a conversion exists
        (ledger_balance.left_in: a rho lifetime leaves a pure epsilon of sqrt(2 rho); an (epsilon,
        delta) lifetime leaves the rho whose CKS conversion fits what is left) and leaves zero
        where none does (a rho against a pure lifetime), and for data bound under another unit
        than the ledger keeps it under, to what a charge under that unit may be (`unit_share`).
        A guide: each charge is still checked when it is committed."""
        if self.total is None:
            return None
        left = self.total.cap - self._tree.total
        for status in self.datasets_status():
            data_left = status.left_in(self.accounting)
            if data_left is not None:
                for unit in self.dataset_units.get(status.dataset.fingerprint, ()):
                    data_left = unit_share(data_left, unit, status.dataset.privacy_unit)
                left = left.meet(data_left)  # type: ignore[arg-type]
            elif self.store is not None and self.store.persistent:
                left = self.accounting.zero()  # a durable dataset without a lifetime takes no charge
        return left.floor_at_zero()

    @property
    def innermost(self) -> BudgetContext | None:
        return self._stack[-1] if self._stack else None

    def set_total(self, budget: AnyBudget, span: Span | None, accounting: Accounting | None = None) -> None:
        """Set the session total (from a program's `budget` statement when none was given), and
        with it the session's accounting (before anything is charged)."""
        if accounting is None:
            accounting = Accounting(ZCDP) if isinstance(budget, RhoZCDPBudget) else Accounting()
        if self.ledger and accounting != self.accounting:
            raise MeasureMismatch(f"this session already charged releases in {self.accounting}", span)
        self.accounting = accounting
        self._tree = CostTree(accounting.zero())
        self.total = BudgetContext(budget, f"the budget set at {span.location}" if span else "the budget", span)

    # ---------------------------------------------------------- contexts
    @contextmanager
    def context(self, cap: AnyBudget, label: str, span: Span | None, releases: int) -> Iterator[BudgetContext]:
        """Open a capped context for the duration of a `with budget` body or a program.

        Raises:
            MeasureMismatch: The cap is in another measure than the session's accounting
                (measures never mix inside one session: nothing was charged).
        """
        if not self.accounting.accepts_cap(cap):
            raise MeasureMismatch(
                f"{label} ({cap}) is in another measure than this session's accounting ({self.accounting})",
                span,
                "state every budget of a program in one measure: in a zCDP program write "
                "`with budget rho(R):` or `with budget E, D using zcdp:`; in a DP program `with budget E:`")
        ctx = BudgetContext(cap, label, span, releases)
        self._stack.append(ctx)
        try:
            yield ctx
        finally:
            popped = self._stack.pop()
            assert popped is ctx

    # ---------------------------------------------------------- charging
    def check(self, budget: AnyBudget, node: DataNode, span: Span | None = None) -> None:
        """Raise BudgetExceeded if charging `budget` (in the session's measure) against `node`
        would break a limit of this session (the store's balances are checked when the charge
        is committed)."""
        if self.total is None:
            # A `with budget` block only caps: without a total, blocks would add up unbounded.
            raise no_total_refusal(span)
        for ctx in [*reversed(self._stack), self.total]:
            tree = self._tree if ctx is self.total else ctx.tree
            before = tree.total
            after = before + tree.rise(budget, node)
            if not isinstance(ctx.cap, type(budget)):
                continue  # a cap in another measure cannot be open (see `context`)
            caps = dict(ctx.cap.quantities())
            for quantity, new in after.quantities():
                cap = caps[quantity]
                if new <= cap:
                    continue
                requested = dict(budget.quantities())[quantity]
                # Most this charge could be and still fit (parallel parts may absorb some of it).
                remaining = max(Fraction(0), requested - (new - cap))
                raise cap_refusal(quantity, requested, remaining, ctx.label, ctx.span, before, span)

    def charge(
        self,
        budget: AnyBudget,
        node: DataNode,
        mechanism: str,
        description: str,
        span: Span | None,
    ) -> Charge:
        """Record a release's cost after checking every limit. Call *before* drawing noise.

        `budget` is what the mechanism calibrated its noise to, in its own measure; it is
        charged converted into the session's accounting (jostle.privacy.accounting). With a
        store, the charge is committed to it (durably) before this returns.

        Raises:
            BudgetExceeded: Some limit would be exceeded; nothing is recorded.
            MeasureMismatch: The budget cannot be charged in the session's measure; nothing is recorded.
            DataError: The store cannot be written; nothing is recorded.
        """
        library_span = None
        if self.call_site is not None and span is not None:
            # Written in library code: the user's call is where it happens for its author, and
            # what the ledger shows; the library's line is kept as a note.
            span, library_span = self.call_site, span
        if budget.is_zero():
            raise JostleRuntimeError(
                "a release needs a positive epsilon", span, "pass an epsilon greater than 0",
                library_note(library_span),
            )
        try:
            cost = self.accounting.cost(budget, span)
            self.check(cost, node, span)
        except (BudgetExceeded, MeasureMismatch) as error:
            error.notes.extend(library_note(library_span))
            raise
        assert self.total is not None
        entry = Charge(len(self.ledger) + 1, budget, mechanism, description, span, node, library_span, cost)
        if self.store is not None:
            self._commit(entry, self._tree.rise(cost, node))
        self.ledger.append(entry)
        self._tree.add(cost, node)
        for ctx in self._stack:
            ctx.charges.append(entry)
            ctx.tree.add(cost, node)
        return entry

    def charge_fit(self, amount: Budget, description: str) -> None:
        """Charge one fit made outside the language (a scikit-learn estimator's, through
        `jostle.privacy.shared_budget.PrivacyBudget`: the `BudgetAccount` interface) against the
        session's data (the row root), checked against every limit before it is recorded.

        Raises:
            BudgetExceeded: Some limit would be exceeded; nothing is recorded.
        """
        self.charge(amount, self.root, "estimator fit", description, None)

    def _commit(self, entry: Charge, rise: AnyBudget) -> None:
        """Check `rise` against the balance of every dataset the charge may have read, and commit
        it to each (atomically; jostle.privacy.ledger_store.LedgerStore.record).

        Which datasets: those bound in this session under the charge's unit. Tables bound under
        unit U live under `root_for(U)`, everything derived from them stays under that root, and
        a value mixing roots is refused (`common_node`), so a release charged at a node under
        root U can only have read tables bound under U: recording it against those datasets (and
        not against the session's datasets under other units) leaves out only data it did not
        read. A dataset bound under U whose ledger keeps it under another unit V is charged the
        release converted from U into V (group privacy from row to replace_one) or refuses it
        (jostle.privacy.units.convert_charge). When no dataset is bound under U, the data under
        root U was not registered under U (e.g. a program's `load` of a file its curator bound
        under another unit, or a way of making private tables that does not call
        register_dataset): the charge is recorded, as before units, against every dataset of
        the session, each converting it into its unit or refusing it, and when the session has
        none, against a shared stand-in, "(data not identified)" (one per unit). Both
        over-report rather than lose the spending.

        The store converts the charge into each dataset's lifetime measure
        (jostle.privacy.ledger_balance): for a pure release of a DP session against a rho
        lifetime it is charged the rise of the session's pure releases composed in rho (each
        epsilon^2/2, Bun and Steinke 2016 Prop. 1.4; parallel parts at their largest rho, since
        one individual's rows lie in one part), which this accountant keeps in `_rho_shadow`.
        """
        assert self.store is not None and self.total is not None
        unit = entry.unit
        targets = [fp for fp, units in self.dataset_units.items() if unit in units] or list(self.dataset_units)
        if not targets:
            stand_in = "(data not identified)" if unit.is_row else f"(data not identified, {unit})"
            digest = UNIDENTIFIED_DATA if unit.is_row else UNIDENTIFIED_DATA + b" " + unit.text.encode()
            registered = self.register_dataset(digest, stand_in, name=stand_in, unit=unit)
            assert registered is not None
            targets = [registered]
        as_rho = shadow = None
        if not self.accounting.is_zcdp and isinstance(entry.budget, Budget) and not entry.budget.delta:
            shadow = RhoZCDPBudget(pure_to_rho(entry.budget.epsilon))
            as_rho = self._rho_shadow.rise(shadow, entry.node)
        record = ChargeRecord(
            self.session_id, entry.index, entry.budget, entry.mechanism, entry.description, entry.node.label,
            entry.span.location if entry.span is not None else "", unit,
        )
        try:
            self.store.record(targets, ChargeRise(rise, unit, entry.charged, as_rho), record)
        except LedgerRefusal as refusal:
            raise lifetime_refusal(refusal, entry, self.store.path) from None
        if shadow is not None:
            self._rho_shadow.add(shadow, entry.node)


def unit_share(left: AnyBudget, made_under: PrivacyUnit, kept_under: PrivacyUnit) -> AnyBudget:
    """The most a charge made under `made_under` may be when a dataset kept under `kept_under` has
    `left` (jostle.privacy.units.convert_charge): all of it under the same unit; under row kept
    as replace_one, a charge whose group-of-2 guarantee fits (epsilon / 2 with a delta d such that
    d (1 + e^(epsilon/2)) fits, rho / 4: conversions.group_privacy); nothing when no conversion
    exists."""
    if made_under == kept_under:
        return left
    if made_under.is_row and kept_under.is_replace_one:
        if isinstance(left, RhoZCDPBudget):
            return left / 4
        half = left.epsilon / 2
        return Budget(half, left.delta / (1 + math.ceil(math.exp(float(half)))))
    return zero_like(left)
