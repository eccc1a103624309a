"""The durable budget ledger: what has been spent against each private dataset, on disk.

The in-memory accountant (jostle.privacy.budget) composes the charges of one session. This module
makes the spending outlive the session: every charge is written to an SQLite database and
committed *before* the mechanism draws its noise, so running a program again, restarting the
REPL or starting a second process continues from what was already spent.

Design:
  * **Datasets are named by their curator (format 2, issue 21).** A dataset's identity in the
    ledger is the name its curator gives it when binding it (`Session.bind_private(...,
    dataset=NAME)`, "dataset" in its schema file, by default the table's name), and data a
    program `load`s itself is identified by its file's resolved path ("file:/abs/path"). Its
    balance, its lifetime budget and its charges belong to that identity, whatever rows it
    holds today: a program can therefore never learn from `spent()`, `remaining()`, a refusal
    or a ledger view whether some rows equal data in the ledger. (Format 1 keyed every dataset
    by its content, so a program that loaded its own guess of a row saw the curator's balance
    exactly when the guess was right: a membership oracle. See docs/threat_model.md.)
  * **Re-exports cannot escape a lifetime budget.** The content fingerprint of the data a
    *curator* binds (jostle.data.engine.content_digest, version 3: an order-independent hash
    aggregate over canonical cells, so the same rows from a CSV, a DataFrame or a Parquet file
    agree; version 2's keys, which ledgers recorded before issue 28, are kept and still compared:
    `needs_legacy_content`) is kept as an HMAC under a random key held in the database (never the digest
    itself: with all rows but one known, a plain hash would reveal the last row), in the
    `contents` table. When a curator binds, under a new name, data equal to content bound
    before under another name, the binding is refused (`EqualData`, a DataError to the
    curator, before any program runs; nothing is written): the curator binds it under the
    earlier name. (Charging both silently, as a first version of format 2 did, let a program
    see from `remaining()` whether today's rows equal earlier rows.) The comparison runs only
    on the curator's act of binding, never on a program's `load`; format-1 keys, which keyed
    program loads too, are not carried into `contents`. The row count is never stored: under
    add/remove-one neighbours it is private.
  * **One budget for the tables of a unit.** The accountant treats the private tables a session
    binds under one privacy unit as data about the same people (see jostle.privacy.budget), so
    a charge is recorded against *every* dataset bound in the session under the charge's unit
    (a value never mixes units, so it read no other). This over-reports for a table the release
    did not touch, which is safe. A release under a unit no dataset was bound under is recorded
    against every dataset of the session (converted into its unit or refused), and without any,
    against a shared stand-in, "(data not identified)", rather than not recorded.
  * **A lifetime budget is the curator's.** It is declared when the data is first bound
    (`lifetime=`, `--lifetime`, "lifetime" in the schema file; failing that, the binding
    session's own total `Session(budget=)` / `--budget`, which the curator gave) and changed
    only by `jostle ledger lifetime` (`set_lifetime`), which is logged, keeps what was spent
    and needs confirmation to raise it. It is a `lifetime` event of the hashed, append-only
    chain, so editing it breaks `verify()`. A program's `budget` statement, `with budget`
    block or REPL line is only a cap for that program: it never sets or changes a lifetime.
    A charge against a durable dataset without a lifetime is refused before anything is
    released (`LedgerRefusal.missing`). With an in-memory ledger a dataset may have none.
  * **Exact sequential composition across sessions.** Within a session the accountant composes
    charges (parallel over partitions); each charge records the *rise* of the session's
    composed cost (after - before), so a dataset's balance, the sum of its recorded rises, is
    an upper bound of what its sessions spent, composed sequentially (Dwork & Roth 2014,
    Theorem 3.16). Budgets are exact `Fraction`s, stored as text ("1/3").
  * **Commit before release.** A charge runs `BEGIN IMMEDIATE` (taking the write lock), reads
    each dataset's balance, checks balance + rise against the session's total, appends the
    charge, and `COMMIT`s; only then does the caller draw noise. Two processes therefore
    cannot both spend the last of a budget, and a process killed at any moment leaves either
    no record and no release (before the commit), or a record and maybe no release (after):
    the ledger may over-report, never under-report. The database runs in WAL mode with
    `synchronous=FULL`, so a committed charge also survives a power loss.
  * **Append-only and auditable.** Charges and resets are rows of one `events` table that
    triggers forbid updating or deleting. Each row carries the dataset's balance after it and a
    SHA-256 hash chained to the previous row, so `verify()` detects an edited or removed row.
    A reset appends a `reset` event that writes the balance off (its epsilon is minus the
    balance); it requires explicit confirmation and records who asked and why.
  * **Measures and units (format 3, issue 22).** Every event stores its measure ("pure",
    "approximate" or "zcdp") with its amounts (epsilon and delta, or rho) and a charge the unit
    it was made under (`PrivacyUnit.text`). A dataset keeps its unit (declared at its first
    bind; not part of its identity) and its lifetime in one measure; its balance has an
    (epsilon, delta) part and a rho part, and a charge in another measure or unit converts
    conservatively or is refused with the reason (jostle.privacy.ledger_balance).
  * **Migration.** A format-2 file gains the measure and unit columns (old events are pure or
    approximate, under unit row; their hashes are unchanged), in one transaction, when it is
    opened. A format-1 file is rewritten in place, in one transaction, when it is
    opened: each dataset keeps its key, its events (the hash chain is unchanged) and its
    balance, is named after its table (made unique), and gets as its lifetime budget the one
    its charges fixed under format 1 (the smallest total since its last reset). Data a program
    loaded under format 1 was keyed by content and had no path: a program's next load of that
    file is a new dataset (its path), whose balance starts at zero.

The store is located by `--ledger-db PATH`, `Session(ledger_path=...)`, or the environment
variable JOSTLE_LEDGER, and defaults to $XDG_DATA_HOME/jostle/ledger.sqlite
(~/.local/share/jostle/ledger.sqlite). The path ":memory:" keeps the ledger in memory for one
session only: nothing persists (for tests and teaching).
"""

from __future__ import annotations

import getpass
import hashlib
import hmac
import json
import logging
import os
import secrets
import socket
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from jostle.diagnostics.errors import DataError, UsageError
from jostle.privacy.ledger_audit import (EVENT_FIELDS, EVENT_FIELDS_V2, EXPORT_FIELDS, GENESIS,  # noqa: F401
                                         MEASURE_FIELDS, _hash, export_rows, summarise, verify_events)
from jostle.privacy.ledger_balance import (Balance, ChargeRise, MeasureRefusal, UnitMismatch, admit,
                                           as_budget, convert_rise, measure_of)
from jostle.privacy.ledger_migration import migrate_from_format_1, migrate_from_format_2
from jostle.privacy.ledger_records import (PRIVACY_UNIT, ChargeRecord, DatasetInfo, EqualData,  # noqa: F401
                                           LedgerRefusal, budget_text, shell_quoted)
from jostle.privacy.ledger_schema import (  # noqa: F401 (re-exported: the format lived here)
    ENV_VAR, EVENT_GUARDS, EVENTS_TABLE, FORMAT_VERSION, MEMORY, SCHEMA, amount_columns, amount_text,
    default_ledger_path, now_text, resolve_ledger_path,
)
from jostle.privacy.ledger_schema import EVENT_GUARDS as _EVENT_GUARDS  # noqa: F401 (the older private names)
from jostle.privacy.ledger_schema import EVENTS_TABLE as _EVENTS_TABLE  # noqa: F401
from jostle.privacy.ledger_schema import now_text as _now  # noqa: F401
from jostle.privacy.measures import AnyBudget, Budget, RhoZCDPBudget
from jostle.privacy.units import ROW, PrivacyUnit

# Name of the logger on which the curator is told what binding found in the ledger (a new
# dataset, a lifetime taken from the session's budget, data equal to an earlier dataset).
# Like `jostle.data`, it has only a NullHandler: a program never sees it.
CURATOR_LOG = "jostle.ledger"
logging.getLogger(CURATOR_LOG).addHandler(logging.NullHandler())
# The prefix of the identity of data a program loads itself: its file's resolved path.
FILE_DATASET = "file:"
# The prefix of a version-3 content key in `contents` (`LedgerStore.content_key`).
CONTENT_V3 = "v3:"


# ---------------------------------------------------------------- the store
class LedgerStore:
    """An SQLite budget ledger (see the module docstring for the guarantees).

    Args:
        path: A file path, or ":memory:" for a ledger that lives as long as this object.
        create: Create the file (and its directory) if it does not exist. With False a missing
            file is a DataError (read-only commands use this so that they never create one).
        timeout: Seconds to wait for another process's write lock before giving up.

    Raises:
        DataError: The file cannot be opened or is not a Jostle ledger.
    """

    def __init__(self, path: str | Path = MEMORY, create: bool = True, timeout: float = 60.0) -> None:
        self.path = MEMORY if str(path) == MEMORY else str(Path(path).expanduser().resolve())
        self.persistent = self.path != MEMORY
        if self.persistent:
            file = Path(self.path)
            if not file.exists():
                if not create:
                    raise DataError(f"there is no budget ledger at {self.path}",
                                    hint="nothing has been spent with this ledger yet")
                file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            self._db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
            self._db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            if self.persistent:
                self._enter_wal(timeout)
            meta = self._meta()
            if meta.get("format") == "1":
                migrate_from_format_1(self)
                meta = self._meta()
            if meta.get("format") == "2":
                migrate_from_format_2(self)
                meta = self._meta()
            if "key" not in meta:
                with self._transaction(durable=False):  # two processes may create it at once
                    for statement in SCHEMA:
                        self._db.execute(statement)
                    self._db.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (FORMAT_VERSION,))
                    self._db.execute("INSERT OR IGNORE INTO meta VALUES ('key', ?)", (secrets.token_hex(32),))
                meta = self._meta()
        except sqlite3.Error as error:
            raise DataError(f"cannot open the budget ledger {self.path}: {error}",
                            hint="is it a Jostle ledger? choose another with --ledger-db PATH") from None
        if meta.get("format") != FORMAT_VERSION:
            raise DataError(f"the budget ledger {self.path} has format {meta.get('format')!r}, "
                            f"this Jostle reads format {FORMAT_VERSION!r}")
        self._key = bytes.fromhex(meta["key"])

    def _meta(self) -> dict[str, str]:
        try:
            return dict(self._db.execute("SELECT key, value FROM meta"))
        except sqlite3.OperationalError:  # a new file: no tables yet
            return {}

    def close(self) -> None:
        """Close the database connection (the store is unusable afterwards)."""
        self._db.close()

    def __enter__(self) -> LedgerStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------- datasets
    def _enter_wal(self, timeout: float) -> None:
        """Switch the file to write-ahead logging, waiting out other processes doing the same.

        SQLite does not call the busy handler for every lock this switch takes: several processes
        opening a new ledger at once failed with "database is locked" at once (2 of 40 in a test
        of 8 processes at a time; tests/test_ledger_store.py). The switch is retried, with a
        short random pause, until `timeout` has passed.
        """
        import random
        import time

        deadline = time.monotonic() + timeout
        while True:
            try:
                self._db.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) and "busy" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(random.uniform(0.005, 0.05))

    def fingerprint(self, digest: bytes) -> str:
        """The store's key for content: HMAC-SHA256 of its content digest under the store's key
        (a version-2 digest's key; `content_key` is the key the store records today)."""
        return hmac.new(self._key, digest, hashlib.sha256).hexdigest()

    def content_key(self, digest: bytes) -> str:
        """The key recorded in `contents` for a version-3 content digest: CONTENT_V3 and its HMAC.

        Keys recorded before version 3 (jostle.data.engine.fingerprint, version 2) are bare
        HMACs; the prefix tells them apart without a change of the ledger's format."""
        return CONTENT_V3 + self.fingerprint(digest)

    def needs_legacy_content(self) -> bool:
        """Whether some dataset's content is known only by its version-2 key (bound before version
        3 and not since): only then must a curator's binding also compute the version-2 digest
        (about ten times slower) to compare with it. Once each such dataset has been bound
        again, under its name, it has a version-3 key too, and the old digest is never needed."""
        row = self._db.execute(
            "SELECT 1 FROM contents AS old WHERE old.content NOT LIKE ? AND NOT EXISTS (SELECT 1 FROM contents "
            "AS new WHERE new.dataset = old.dataset AND new.content LIKE ?) LIMIT 1",
            (CONTENT_V3 + "%", CONTENT_V3 + "%")).fetchone()
        return row is not None

    def name_key(self, name: str) -> str:
        """The key of the dataset named `name`: HMAC-SHA256 of the name under the store's key."""
        return hmac.new(self._key, b"jostle dataset name\x00" + name.encode(), hashlib.sha256).hexdigest()

    def open_dataset(self, name: str, label: str, columns: Sequence[str] = (), content: bytes | None = None,
                     lifetime: AnyBudget | tuple[Fraction, Fraction] | None = None,
                     default_lifetime: AnyBudget | tuple[Fraction, Fraction] | None = None,
                     unit: PrivacyUnit = ROW, legacy_content: bytes | None = None) -> DatasetInfo:
        """The dataset named `name`, made if it is new (refused if its rows are another dataset's).

        Args:
            name: The dataset's name in the ledger (the curator's, or "file:PATH").
            label: The table's name, kept for people reading the ledger.
            columns: Its column names (public).
            content: The content digest of the data a *curator* binds (version 3), compared with
                every content bound before (None for a program's load: it is never compared).
            legacy_content: The same data's version-2 digest, compared with the keys recorded
                before version 3, when `needs_legacy_content()` says some dataset has only those
                (the caller computes it then only); never recorded.
            lifetime: The lifetime budget the curator declares. A dataset without one takes it;
                one that has another is refused (only `set_lifetime` changes it).
            default_lifetime: The lifetime a dataset without one takes when none is declared
                (the binding session's total). Either is (epsilon, delta) or a rho: the dataset's
                lifetime is held in that measure.
            unit: The privacy unit a new dataset is kept under. A dataset the ledger knows keeps
                its unit: its identity does not include it, so binding it under another unit
                cannot open a second lifetime budget (charges made under the other unit are
                converted or refused when they are recorded: `record`).

        Returns:
            The dataset.

        Raises:
            UsageError: `lifetime` differs from the dataset's lifetime budget.
            EqualData: `content` equals content bound before under another dataset's name.
                Nothing is written: the curator binds it under that name, so its spending and
                lifetime carry on. (Charging both silently would let a program see, in
                `remaining()` or a refusal, whether today's rows equal earlier rows: a fact
                about the rows, different on neighbouring tables. Refused at bind time, it is
                the curator's to see, before any program runs.)
        """
        name = str(name)
        lifetime, default_lifetime = as_budget(lifetime), as_budget(default_lifetime)
        if not name.strip():
            raise UsageError("a dataset's name in the ledger must not be empty")
        with self._transaction(durable=lifetime is not None or default_lifetime is not None):
            row = self._db.execute("SELECT fingerprint FROM datasets WHERE name = ?", (name,)).fetchone()
            if content is not None:
                keys = [self.content_key(content)] + ([self.fingerprint(legacy_content)] if legacy_content else [])
                others = sorted({fp for key in keys for (fp,) in self._db.execute(
                    "SELECT DISTINCT dataset FROM contents WHERE content = ?", (key,))
                    if row is None or fp != row[0]})
                if others:
                    raise EqualData(name, [self.dataset(fp) for fp in sorted(others)], self.path)
            if row is None:
                key = self.name_key(name)
                self._db.execute("INSERT OR IGNORE INTO datasets (fingerprint, label, unit, columns, first_seen, name) "
                                 "VALUES (?, ?, ?, ?, ?, ?)",
                                 (key, label, unit.text, json.dumps(sorted(map(str, columns))), now_text(), name))
            else:
                key = row[0]
            current = self.lifetime(key)
            if lifetime is not None and current is not None and current != lifetime:
                raise UsageError(
                    f"the data '{name}' has the lifetime budget {budget_text(current)} in the ledger "
                    f"{self.path}, not {budget_text(lifetime)}",
                    hint=f"a lifetime budget changes only by `jostle ledger lifetime --dataset {shell_quoted(name)} "
                         "EPSILON [--delta D] | --rho R --reason TEXT` (logged; it keeps what was spent); "
                         "or bind the data without declaring one")
            if current is None and (lifetime or default_lifetime) is not None:
                chosen = lifetime if lifetime is not None else default_lifetime
                assert chosen is not None
                self._append_lifetime(key, chosen, "declared when the data was bound" if lifetime is not None
                                      else "the budget of the session that first bound the data", who=True)
            if content is not None:
                self._db.execute("INSERT OR IGNORE INTO contents VALUES (?, ?, ?)",
                                 (self.content_key(content), key, now_text()))
        return self.dataset(key)

    def dataset(self, fingerprint: str) -> DatasetInfo:
        row = self._db.execute("SELECT fingerprint, label, columns, first_seen, unit, name FROM datasets "
                               "WHERE fingerprint = ?", (fingerprint,)).fetchone()
        if row is None:
            raise UsageError(f"no dataset {fingerprint} in the ledger {self.path}")
        return DatasetInfo(row[0], row[1], tuple(json.loads(row[2])), row[3], row[4], row[5] or "")

    def dataset_named(self, name: str) -> DatasetInfo | None:
        """The dataset named `name`, or None."""
        row = self._db.execute("SELECT fingerprint FROM datasets WHERE name = ?", (name,)).fetchone()
        return None if row is None else self.dataset(row[0])

    def datasets(self) -> list[DatasetInfo]:
        """Every dataset the store knows, in the order first seen."""
        rows = self._db.execute("SELECT fingerprint FROM datasets ORDER BY first_seen, fingerprint")
        return [self.dataset(fp) for (fp,) in rows.fetchall()]

    def resolve(self, prefix: str) -> DatasetInfo:
        """The dataset named `prefix`, else the one whose key starts with it (6 characters or more)."""
        named = self.dataset_named(prefix)
        if named is not None:
            return named
        prefix = prefix.strip().lower()
        if len(prefix) < 6:
            raise UsageError(f"no dataset is named {prefix!r}, and a fingerprint needs at least 6 characters",
                             hint="`jostle ledger show` lists the datasets' names and fingerprints")
        matches = [d for d in self.datasets() if d.fingerprint.startswith(prefix)]
        if not matches:
            raise UsageError(f"no dataset in the ledger {self.path} has a fingerprint starting {prefix}",
                             hint="`jostle ledger show` lists the fingerprints")
        if len(matches) > 1:
            raise UsageError(f"{len(matches)} datasets have a fingerprint starting {prefix}",
                             hint="give more characters of the fingerprint")
        return matches[0]

    def balance(self, fingerprint: str) -> tuple[Fraction, Fraction]:
        """(epsilon, delta) spent against a dataset since its last reset by pure and approximate
        charges (its rho part is in `spent`)."""
        spent = self.spent(fingerprint).dp
        return (spent.epsilon, spent.delta)

    def spent(self, fingerprint: str) -> Balance:
        """What a dataset has spent since its last reset: its (epsilon, delta) and its rho part."""
        row = self._db.execute(
            "SELECT spent_epsilon, spent_delta, spent_rho FROM events WHERE dataset = ? ORDER BY id DESC LIMIT 1",
            (fingerprint,),
        ).fetchone()
        if not row:
            return Balance()
        return Balance(Budget(Fraction(row[0]), Fraction(row[1])), Fraction(row[2] or 0))

    def lifetime(self, fingerprint: str) -> AnyBudget | None:
        """A dataset's lifetime budget, (epsilon, delta) or rho: its latest `lifetime` event; None
        if it has none.

        Only the curator sets it: when binding the data (`open_dataset`) or with `set_lifetime`
        (`jostle ledger lifetime`). A session's total and a program's `budget` never change it.
        """
        row = self._db.execute(
            "SELECT total_epsilon, total_delta, total_rho FROM events WHERE dataset = ? AND kind = 'lifetime' "
            "ORDER BY id DESC LIMIT 1", (fingerprint,)).fetchone()
        if row is None:
            return None
        if row[2] is not None:
            return RhoZCDPBudget(Fraction(row[2]))
        return Budget(Fraction(row[0]), Fraction(row[1]))

    # ---------------------------------------------------------- writing
    def record(self, fingerprints: Sequence[str], rise: ChargeRise | AnyBudget | tuple[Fraction, Fraction],
               charge: ChargeRecord) -> None:
        """Atomically check and record one charge against every dataset in `fingerprints`.

        Each dataset is charged `rise` converted into its unit and its lifetime's measure
        (jostle.privacy.ledger_balance.convert_rise), and its balance plus that must fit its
        lifetime budget (ledger_balance.admit); a durable ledger refuses a dataset without one
        (an in-memory ledger charges it without that check); otherwise nothing is written. The
        session's own total is the accountant's to check, not the store's. Returns only after the
        commit is durable: the caller may then draw noise.

        Raises:
            LedgerRefusal: Some dataset's balance would exceed its lifetime budget, it has none, or
                the charge's unit or measure cannot count in it (with the reason).
            DataError: The ledger cannot be written (e.g. locked for longer than the timeout).
        """
        if not isinstance(rise, ChargeRise):
            rise = ChargeRise(as_budget(rise), charge.unit)  # type: ignore[arg-type]
        requested = charge.requested_budget
        with self._transaction():
            plans = []
            for fp in fingerprints:
                dataset, spent, lifetime = self.dataset(fp), self.spent(fp), self.lifetime(fp)
                if lifetime is None and self.persistent:
                    raise LedgerRefusal(dataset, "epsilon", spent.dp.epsilon, Fraction(0), Fraction(0), missing=True)
                try:
                    amount = convert_rise(rise, lifetime, dataset.privacy_unit)
                except UnitMismatch as refusal:
                    raise LedgerRefusal(dataset, "epsilon", Fraction(0), Fraction(0), Fraction(0),
                                        reason=str(refusal), kind="unit") from None
                except MeasureRefusal as refusal:
                    raise LedgerRefusal(dataset, "epsilon", Fraction(0), Fraction(0), Fraction(0),
                                        reason=str(refusal), kind="measure") from None
                short = admit(spent, amount, lifetime) if lifetime is not None else None
                if short is not None:
                    raise LedgerRefusal(dataset, short.quantity, short.balance, short.rise, short.total,
                                        note=short.note)
                plans.append((fp, spent, amount, lifetime))
            for fp, spent, amount, lifetime in plans:
                after = spent.plus(amount)
                event = self._event("charge", fp, charge.session, after, lifetime, amount)
                event.update({
                    "seq": charge.seq, "mechanism": charge.mechanism, "what": charge.what, "data": charge.data,
                    "location": charge.location, "unit": charge.unit.text,
                    **amount_columns("requested", requested),
                })
                self._append(event)

    def _event(self, kind: str, fingerprint: str, session: str, after: Balance, lifetime: AnyBudget | None,
               amount: AnyBudget | None) -> dict[str, Any]:
        """An event's common columns: its amount (in its measure), the balance after it, the lifetime."""
        event: dict[str, Any] = dict.fromkeys(EVENT_FIELDS)
        event.update({
            "kind": kind, "dataset": fingerprint, "at": now_text(), "session": session, "epsilon": "0",
            "delta": "0", "rho": "0", "spent_epsilon": amount_text(after.dp.epsilon), "spent_delta": amount_text(after.dp.delta),
            "spent_rho": amount_text(after.rho), "pid": os.getpid(),
            **amount_columns("total", lifetime),
        })
        if amount is not None:
            event.update(amount_columns("", amount))
            event["measure"] = measure_of(amount)
        return event

    def set_lifetime(self, fingerprint: str, lifetime: AnyBudget | tuple[Fraction, Fraction], reason: str,
                     confirmed: bool = False) -> dict[str, Any]:
        """Change a dataset's lifetime budget, keeping what was spent; logged with who and why.

        Lowering it needs only a reason; raising it (or declaring one where there was none, or
        changing its measure: (epsilon, delta) and rho do not compare) also needs `confirmed`,
        as a reset does. A lifetime below what is already spent is allowed: the data then takes
        no further charge.

        Raises:
            UsageError: No reason, a raise without confirmation, or a negative or invalid budget.
        """
        lifetime = as_budget(lifetime)
        assert lifetime is not None
        if isinstance(lifetime, RhoZCDPBudget):
            if lifetime.rho <= 0:
                raise UsageError(f"a lifetime budget in rho needs rho > 0, got {lifetime}")
        elif lifetime.epsilon <= 0 or lifetime.delta < 0 or lifetime.delta >= 1:
            raise UsageError(f"a lifetime budget needs epsilon > 0 and 0 <= delta < 1, got {budget_text(lifetime)}")
        if not reason.strip():
            raise UsageError("changing a lifetime budget needs a reason (it is kept in the ledger)",
                             hint="add --reason TEXT")
        dataset = self.dataset(fingerprint)
        with self._transaction():
            current = self.lifetime(fingerprint)
            raising = current is None or type(current) is not type(lifetime) or not current.covers(lifetime)
            if raising and confirmed is not True:
                raise UsageError(
                    f"raising the lifetime budget of the data '{dataset.shown}' needs explicit confirmation",
                    hint="it lets more be learned about the people in the data than was allowed "
                         "before (a change of measure counts as a raise); add --yes if that is really intended")
            return self._append_lifetime(fingerprint, lifetime, reason.strip(), who=True)

    def _append_lifetime(self, fingerprint: str, lifetime: AnyBudget, note: str,
                         who: bool = False) -> dict[str, Any]:
        """Append a `lifetime` event (inside an open transaction): it rises nothing."""
        event = self._event("lifetime", fingerprint, "lifetime", self.spent(fingerprint), lifetime, None)
        event.update({"measure": measure_of(lifetime), "note": f"{note} (by {_who()})" if who else note})
        self._append(event)
        return event

    def reset(self, fingerprint: str, reason: str, confirmed: bool) -> dict[str, Any]:
        """Write a dataset's balance off (both parts), logging who asked and why. Returns the event.

        Raises:
            UsageError: `confirmed` is not True, or the reason is empty.
        """
        if confirmed is not True:
            raise UsageError("resetting a dataset's budget needs explicit confirmation",
                             hint="it lets the data be queried again as if nothing had been "
                                  "released; add --yes if that is really intended")
        if not reason.strip():
            raise UsageError("a reset needs a reason (it is kept in the ledger)")
        dataset = self.dataset(fingerprint)
        with self._transaction():
            spent = self.spent(fingerprint)
            event = self._event("reset", dataset.fingerprint, "reset", Balance(), None, None)
            event.update({"epsilon": amount_text(-spent.dp.epsilon), "delta": amount_text(-spent.dp.delta),
                          "rho": amount_text(-spent.rho), "data": dataset.label,
                          "note": f"{reason.strip()} (by {_who()})"})
            self._append(event)
        return event

    def _append(self, event: dict[str, Any]) -> None:
        row = self._db.execute("SELECT hash FROM events ORDER BY id DESC LIMIT 1").fetchone()
        prev_hash = row[0] if row else GENESIS
        names = list(EVENT_FIELDS) + ["prev_hash", "hash"]
        values = [event[name] for name in EVENT_FIELDS] + [prev_hash, _hash(prev_hash, event)]
        self._db.execute(f"INSERT INTO events ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                         values)

    class _Transaction:
        """BEGIN IMMEDIATE ... COMMIT (or ROLLBACK on an exception).

        A durable transaction (charges, resets) runs with synchronous=FULL: COMMIT returns only
        once the WAL is on disk, so a release never outlives its record, even across a power
        loss. Metadata (the schema, a dataset's name) is written with NORMAL, which skips the
        fsync; WAL is sequential, so the next durable commit makes it durable too.
        """

        def __init__(self, db: sqlite3.Connection, path: str, durable: bool) -> None:
            self.db, self.path, self.durable = db, path, durable

        def __enter__(self) -> None:
            try:
                self.db.execute(f"PRAGMA synchronous = {'FULL' if self.durable else 'NORMAL'}")
                self.db.execute("BEGIN IMMEDIATE")  # the write lock, before anything is read
            except sqlite3.OperationalError as error:
                raise DataError(f"cannot write the budget ledger {self.path}: {error}",
                                hint="another process may hold it; nothing was released") from None

        def __exit__(self, kind: type | None, error: BaseException | None, tb: object) -> None:
            if kind is None:
                try:
                    self.db.execute("COMMIT")
                except sqlite3.Error as failure:
                    self.db.execute("ROLLBACK")
                    raise DataError(f"cannot commit to the budget ledger {self.path}: {failure}",
                                    hint="nothing was released") from None
            elif self.db.in_transaction:
                self.db.execute("ROLLBACK")

    def _transaction(self, durable: bool = True) -> LedgerStore._Transaction:
        return LedgerStore._Transaction(self._db, self.path, durable)

    # ---------------------------------------------------------- reading
    def events(self, fingerprint: str | None = None) -> list[dict[str, Any]]:
        """Every event (oldest first), optionally of one dataset, as dicts with an `id`."""
        names = ["id", *EVENT_FIELDS, "prev_hash", "hash"]
        query = f"SELECT {', '.join(names)} FROM events"
        params: tuple = ()
        if fingerprint is not None:
            query += " WHERE dataset = ?"
            params = (fingerprint,)
        return [dict(zip(names, row)) for row in self._db.execute(query + " ORDER BY id", params)]

    def verify(self) -> list[str]:
        """Problems found in the ledger (an empty list if it is intact): ledger_audit.verify_events."""
        return verify_events(self.events())

    def export_rows(self) -> list[dict[str, Any]]:
        """Every event with its dataset's label, and float columns beside the exact ones."""
        return export_rows(self.events(), {d.fingerprint: d.label for d in self.datasets()})


def _who() -> str:
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name in this environment
        user = "unknown user"
    return f"{user}@{socket.gethostname()}, pid {os.getpid()}"


