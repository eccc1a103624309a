"""One reader of private data files, and one rule for their entries in the ledger, shared by the
curator's `Session.bind_private` (and `bind_database`) and a program's `load`.

Both read a CSV or Parquet file through `read_private_file`: the same route rule
(jostle.language.binding.route_for_file), the same reader on every route (Jostle's CSV reader,
DuckDB's Parquet reader), the same errors about the file, and the same cells handed to the
schema (a Parquet frame's cells read by `jostle.data.schema.python_cells`). What differs is
who reads, and it is decided here, on public facts only:

  * strictness: the curator's binding, and a program's `load(..., public_rows=true)`, read
    strictly (an unusable CSV record is a DataError naming its line); a program's plain `load`
    reads totally (such records are dropped, nothing about them reaches the program);
  * the route: the curator's CSV file may go to an engine by its size, a program's never
    (jostle.language.binding explains why);
  * the ledger entry (`register_private_rows`): the curator's data is entered under its content
    fingerprint (jostle.data.engine.fingerprint, with a durable ledger) and its dataset name; a
    file a program loads is entered under its path, or as the curator's dataset when it is the
    file the curator bound (same path or inode), never by its content (issue 21: the ledger
    would otherwise tell a program whether a guess of the rows equals a dataset's);
  * the refusals before a program reads (`read_for_program`): a file holding data registered as
    private cannot be read with a public row count (hole 7), nor again under one row when the
    curator bound it under another unit.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jostle.data.schema import python_cells, read_csv_file
from jostle.diagnostics.errors import DataError, PrivacyError
from jostle.diagnostics.source import Span
from jostle.language import binding
from jostle.privacy.ledger_store import FILE_DATASET

if TYPE_CHECKING:
    import pandas as pd

    from jostle.privacy.measures import AnyBudget


@dataclass(frozen=True, eq=False)
class PrivateRows:
    """Private rows as read, before any schema.

    Attributes:
        raw: The rows as read: a pandas frame (the in-memory route) or an EngineSource
            (jostle.language.binding). The ledger's fingerprint is taken of these.
        columns: The column names (the file's header, or the frame's columns).
        path: The file read, or None for the curator's DataFrame.
        cells: What a schema is applied to: `raw`, with a frame's typed cells read by
            `python_cells` (missing as None) where they are not text from Jostle's CSV reader.
    """

    raw: Any
    columns: list[str]
    path: Path | None
    cells: Any


def read_private_file(interp: Any, path: Path, *, by_curator: bool, strict: bool, table: str,
                      route: str | None = None) -> PrivateRows:
    """A CSV or Parquet file of private rows, read on its route (see the module docstring).

    Args:
        interp: The interpreter (its engine setting and engines).
        path: The file.
        by_curator: The curator binds it (its size may choose the route), else a program loads it.
        strict: An unusable CSV record is an error (the curator's and public-row routes), else dropped.
        table: The table's name (for the curator's log of dropped records).
        route: 'pandas', 'duckdb' or 'spark', when the caller decided it (a database's tables
            share one route: jostle.language.databases); None for the file's own route.

    Raises:
        DataError: The file cannot be read (or, strictly, has an unusable record).
    """
    route = route or binding.route_for_file(interp, path, by_curator=by_curator)
    if route != "pandas":
        source = binding.file_source(interp, path, route, strict=strict)
        return PrivateRows(source, list(source.columns), path, source)
    if binding.is_parquet(path):
        frame = binding.read_parquet_frame(path)
        # typed cells, missing as None, read by jostle.data.cells' rule (pandas' notna raised on
        # some cells: issue 21, hole 4)
        return PrivateRows(frame, [str(c) for c in frame.columns], path, python_cells(frame))
    read = read_csv_file(path)
    frame = read.checked() if strict else read.rows_for_program(table)
    return PrivateRows(frame, [str(c) for c in read.frame.columns], path, frame)


def curator_frame_rows(interp: Any, frame: pd.DataFrame, route: str | None = None) -> PrivateRows:
    """The curator's DataFrame as private rows: on an engine by the session's setting or its
    length (jostle.language.binding.route_for_frame) unless `route` is given, else in memory
    with its cells read by `python_cells`."""
    columns = [str(c) for c in frame.columns]
    route = route or binding.route_for_frame(interp, frame)
    if route != "pandas":
        source = binding.frame_source(interp, frame, route)
        return PrivateRows(source, columns, None, source)
    return PrivateRows(frame, columns, None, python_cells(frame))


def read_for_program(interp: Any, span: Span, file: Path, table: str, public_rows: bool) -> PrivateRows:
    """The file a program's `load` reads, after the refusals that keep registered private data
    private (see the module docstring); read strictly when the program declares its row count
    public, else totally.

    Raises:
        PrivacyError: The file is registered private data and `public_rows` is claimed, or the
            curator bound it under a unit other than one row.
        DataError: The file cannot be read (located at `span`).
    """
    if public_rows:
        refuse_registered_private_file(interp, span, file, None, "load(..., public_rows=true)")
    _refuse_curator_file_under_another_unit(interp, span, file)
    refuse_load_without_budget(interp, span, file)
    try:
        return read_private_file(interp, file, by_curator=False, strict=public_rows, table=table)
    except DataError as error:
        error.span = span
        raise


def refuse_load_without_budget(interp: Any, span: Span, file: Path) -> None:
    """Refuse a program's `load` before reading anything when no release could follow it.

    A load of 2 million rows took 54 s before the first release was refused for lack of budget
    (issue 28). What decides is known before a row is read, and public: the session's total and
    what its releases spent, the balances of the datasets already bound (all of which a program
    sees through `remaining()`), and, in a durable ledger, the balance and lifetime budget of the
    file's own dataset, named by its path ("file:PATH"), never by its rows. When what is left of
    the tightest of those is zero (no epsilon, or no rho, in the session's measure), or a durable
    ledger would hold the file without a lifetime budget (it then takes no charge), every
    release on the table would be refused: the load is refused now, with nothing read and
    nothing spent, identically on neighbouring files (the rows play no part). Without a session
    total nothing is refused here: a program may still set one with a `budget` statement.

    Raises:
        BudgetExceeded: No release on the loaded table could be charged.
    """
    from jostle.diagnostics.errors import BudgetExceeded
    from jostle.privacy.budget import DatasetStatus

    accountant = interp.accountant
    if accountant.total is None:
        return
    left = accountant.remaining
    reason = "this session's budget is spent"
    store = accountant.store
    if store is not None and store.persistent and _curator_source(interp, file) is None:
        name = FILE_DATASET + str(file.resolve())
        info = store.dataset_named(name)
        if info is None and accountant.default_lifetime is None:
            raise BudgetExceeded(
                f"load() refused before reading {file}: the data '{name}' has no lifetime budget in the durable "
                "ledger, so no release on it could be charged", span,
                f"nothing was read, released or spent (ledger {store.path}). A dataset's lifetime budget is its "
                "curator's to declare, when binding it (Session.bind_private(..., lifetime=E), `jostle run "
                "--lifetime E` or `--lifetime rho:R`, or \"lifetime\": E in its schema file) or with `jostle ledger "
                f"lifetime --dataset {name} E --reason TEXT --yes`; a program's `budget` is only a cap for that program",
                remaining=Fraction(0))
        if info is not None:
            status = DatasetStatus(info, store.spent(info.fingerprint), store.lifetime(info.fingerprint))
            data_left = status.left_in(accountant.accounting)
            if data_left is None or not _positive(data_left):
                left = accountant.accounting.zero()
                reason = f"the data '{name}' has spent its lifetime budget"
                if status.lifetime is not None:
                    from jostle.privacy.measures import fmt_exact

                    quantity, total = status.lifetime.quantities()[0]
                    spent = dict(status.spent.quantities()).get(quantity, Fraction(0))
                    reason = (f"the data '{name}' has only 0 left of its lifetime budget: lifetime {fmt_exact(total)}, "
                              f"spent {fmt_exact(spent)} (by earlier runs)")
    if left is not None and not _positive(left):
        quantity = left.quantities()[0][0]
        raise BudgetExceeded(
            f"load() refused before reading {file}: no release on it could be charged ({reason})", span,
            "nothing was read or spent; `jostle ledger show` lists what each dataset has left, and only "
            "its curator can change a lifetime budget (`jostle ledger lifetime`)",
            requested=None, remaining=Fraction(0), quantity=quantity)


def _positive(budget: Any) -> bool:
    """Whether a budget leaves something for a release: its first quantity (epsilon, or rho) is above 0."""
    return budget.quantities()[0][1] > 0


def register_private_rows(interp: Any, name: str, rows: PrivateRows, *, by_curator: bool,
                          dataset: str | None = None, lifetime: AnyBudget | None = None, unit: Any = None) -> None:
    """Enter private rows in the session's ledger: from now on every charge is recorded against
    them (the one rule for both readers; see the module docstring).

    Args:
        name: The table's name.
        rows: The rows as read.
        by_curator: The curator bound them (entered by content and dataset name), else a
            program loaded the file (entered by its path: `register_loaded_file`).
        dataset: The curator's dataset name in the durable ledger (default: `name`).
        lifetime: The curator's lifetime budget for it, if declared.
        unit: The privacy unit the rows are bound under.

    Raises:
        UsageError, PrivacyError: The ledger refuses the curator's binding (another lifetime,
            rows equal to another dataset's: jostle.privacy.budget.Accountant.register_dataset).
    """
    if not by_curator:
        assert rows.path is not None, "a program loads files only"
        register_loaded_file(interp, name, rows.columns, rows.path, unit)
        return
    # Fingerprint the raw rows, not the schema (jostle.data.engine.fingerprint; only with a
    # durable ledger).
    digest = binding.dataset_digest(interp, rows.raw, name, rows.columns)
    interp.accountant.register_dataset(digest, name, rows.columns, path=rows.path, name=dataset or name,
                                       lifetime=lifetime, unit=unit,
                                       legacy_digest=lambda: binding.legacy_digest(rows.raw))


def refuse_registered_private_file(interp, span: Span, file: Path, frame: pd.DataFrame | None,
                                   use: str) -> None:
    """Refuse to read as public a file that holds data registered as private in the session.

    The one guard of hole 7 (issue 11): `load_public(path)` and `load(path, schema,
    public_rows=true)` would otherwise let a program reopen the curator's private file and read
    its rows, or declare its row count public. Called twice by each reader:
      * before reading (`frame` is None): the path, resolved (symlinks) and compared with every
        registered file, also as the same inode (hard links). Nothing of the file is read, so
        no parse error about its rows can reach the program;
      * after reading (`frame` given): nothing more. Comparing the rows read with the private
        rows (by a content digest) would catch an exact copy elsewhere on disk, but then the
        refusal would depend on the private rows: a program could write its guess of the whole
        table to a file and learn from the refusal whether the guess is exact, which on two
        neighbouring tables gives different outcomes with no charge. So the guard decides on
        the binding (path and inode) only, which the rows do not change. Copies of private
        data that the curator leaves readable are the curator's to protect
        (docs/threat_model.md, "Loading data").

    Raises:
        PrivacyError: The file is (a copy of) registered private data.
    """
    sources = interp.accountant.private_sources
    if not sources:
        return
    match = None
    if frame is None:
        resolved = file.resolve()
        for source in sources:
            if source.path is None:
                continue
            if source.path == resolved or (resolved.exists() and source.path.exists()
                                           and resolved.samefile(source.path)):
                match = source
                break
    if match is not None:
        raise PrivacyError(
            f"{use} cannot read {file}: it holds the private table '{match.label}' of this session",
            span,
            f"use the private table through releases ({{{{ count({match.label}) }}}}), or read the "
            "file as private with load(path, schema); only the data's curator can declare its row "
            "count public (Session.bind_private(..., public_rows=True), or \"public_rows\": true "
            "in its schema file)",
        )


def _curator_source(interp, file: Path) -> Any:
    """The private source registered in this session from the same file (same path or inode), if any."""
    resolved = file.resolve()
    for source in interp.accountant.private_sources:
        if source.path is not None and (source.path == resolved or (
                resolved.exists() and source.path.exists() and resolved.samefile(source.path))):
            return source
    return None


def _refuse_curator_file_under_another_unit(interp, span: Span, file: Path) -> None:
    """Refuse `load` of a file registered in this session under a unit other than one row.

    A program's `load` reads under the row unit, so reading an entity or replace-one table's file
    again would release it with one row's sensitivity, where one individual has many rows (or a
    replaced row is two). Which files the curator bound, and under which unit, are public facts
    (the path, never the rows), so the refusal is the same on neighbouring data.
    """
    source = _curator_source(interp, file)
    if source is not None and not source.unit.is_row:
        raise PrivacyError(
            f"this file is the private table '{source.label}', bound under the privacy unit {source.unit}; "
            "load() would read it again under one row", span,
            f"use the table '{source.label}' as it is bound (its unit is kept); nothing was read or spent")


def register_loaded_file(interp, name: str, columns: list[str], file: Path, unit: Any = None) -> None:
    """From now on the file a program loaded is private in this session, and every charge is
    recorded against it in the durable ledger.

    Its identity there is its path ("file:" and the resolved path), or, for a file the curator
    bound in this session (same path or inode, as `refuse_registered_private_file` compares),
    the curator's dataset. Never its rows: the ledger holds datasets bound by curators, and a
    program that loaded its own guess of some rows would otherwise learn, from spent(),
    remaining() or a refusal, whether the guess equals them (issue 21). The digest kept in
    memory for this session is a public stand-in made from the path and the header.
    """
    resolved = file.resolve()
    if _curator_source(interp, file) is not None:
        return  # the same data under the same budget: already registered
    digest = hashlib.sha256(("jostle-loaded-file/1\n" + str(resolved) + "\n" + "\x1f".join(columns)).encode()).digest()
    interp.accountant.register_dataset(digest, name, columns, path=file,
                                       name=FILE_DATASET + str(resolved), by_curator=False, unit=unit)


__all__ = ["PrivateRows", "read_private_file", "curator_frame_rows", "read_for_program", "register_private_rows",
           "refuse_registered_private_file", "register_loaded_file"]
