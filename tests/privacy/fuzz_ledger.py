"""The neighbour fuzzer's ledger class (issue 21, hole 1): guesses loaded against a non-empty ledger.

The durable ledger used to be a membership oracle: it keyed datasets by content, so a program
that loaded its own file holding a guess of the curator's rows saw, in `spent()`,
`remaining()`, `ledger()` or a refusal, the curator's balance exactly when the guess was right.

A case of this class (`Case.history` set) runs each neighbour on a durable ledger of its own
that a curator's earlier session has already charged: that session bound an archive of the
neighbour's private rows (the same rows with a column `tag` added, so that its content is not
the private table's: the program's session, which binds `t`, holds the archive only if the
guess brings it in) under another name or under `t`'s own, and spent part of its lifetime
budget. The program then loads a guess file: neighbour 0's archive, in reverse order and with
numbers written as `100.0`, which the old content key ignored. It prints the budget as a
program sees it, releases on the loaded table and on the private one, and prints it again.
The guess is right on one neighbour and wrong on the other (the archive's extra row is the
private table's: one person's), so everything before the first charge, and whether that
charge is accepted, must be identical: `violation` applies.
"""

from __future__ import annotations

import io
import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from jostle import Session

if TYPE_CHECKING:  # pragma: no cover
    from tests.privacy.neighbour_fuzz import Case, Generator, TableSpec, Workspace

GUESS_FILE = "guessed.csv"
LEDGER_FILE = "history.sqlite"
# How the curator's earlier session bound the neighbour's rows: under the table's own name
# (the same dataset as this run's `t`), or under another name (a re-export, charged together
# when the curator binds both).
HISTORIES = ("other_name", "other_name", "same_name")
ARCHIVE_TAG = "archive"


def history_for(rng: random.Random) -> str:
    """A random history for a case of the ledger class."""
    return rng.choice(HISTORIES)


def archive(private: TableSpec) -> pd.DataFrame:
    """The curator's archive of a neighbour's rows: the rows with a `tag` column added."""
    return private.frame().assign(tag=ARCHIVE_TAG)


def archive_source(private: TableSpec) -> str:
    """The archive's schema as Jostle source."""
    return private.schema_source()[:-1] + f', tag: categorical(["{ARCHIVE_TAG}"])}}'


def write_guess(case: Case, workspace: Workspace) -> None:
    """The guess file: neighbour 0's archive reversed, numbers written with a decimal point
    (the same content the old fingerprint keyed on, in another form)."""
    rows = case.neighbour(0)
    frame = archive(rows).iloc[::-1]
    for column in rows.columns:
        if column.numeric:
            frame[column.name] = [_decimal_text(v) if isinstance(v, (int, float)) and not isinstance(v, bool)
                                  else v for v in frame[column.name]]
    for name in frame.columns:  # a crafted cell that cannot be written as text is guessed as "?"
        frame[name] = [_writable(v) for v in frame[name]]
    frame.to_csv(workspace.root / GUESS_FILE, index=False)


def _decimal_text(value: object) -> object:
    """A number written with a decimal point, or "?" for a crafted number that cannot be read."""
    try:
        return f"{float(value):.1f}"
    except Exception:  # noqa: BLE001 (any failure of a crafted __float__ or __format__)
        return "?"


def _writable(value: object) -> object:
    """`value` if the CSV writer can turn it into text, else "?" (the fuzzer's crafted cells
    include objects whose text conversion raises; the guess is the adversary's file, any text
    will do)."""
    try:
        str(value)
        return value
    except Exception:  # noqa: BLE001 (any failure of a crafted __str__)
        return "?"


def prepare_ledger(case: Case, private: TableSpec, workspace: Workspace) -> str:
    """A fresh durable ledger on which a curator's session has charged this neighbour's rows;
    returns its path (":memory:" for cases without a history)."""
    if not getattr(case, "history", None):
        return ":memory:"
    write_guess(case, workspace)
    path = workspace.root / LEDGER_FILE
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    name = "t" if case.history == "same_name" else "archive"
    # Bound without a schema and declared by the program: the neighbour's rows may hold cells no
    # schema allows (the engine route's crafted rows), which a curator's schema would refuse.
    with Session(budget=1, lifetime=1, seed=case.seed, ledger_path=path, output=io.StringIO()) as curator:
        curator.bind_private(name, archive(private))
        curator.run(f"private {name}: {archive_source(private)}\nx = laplace(count({name}), 0.5)")
    return str(path)


def ledger_statements(generator: Generator) -> list[str]:
    """Load the guess as private and look at the budget before and after releases on it."""
    rng = generator.rng
    schema = archive_source(generator.private)
    guess = generator.fresh("g")
    statements = [f'{guess} = load("{GUESS_FILE}", {schema})']
    looks = ["print(spent(), remaining())", "print(ledger())", "print(remaining())"]
    statements.append(rng.choice(looks))
    release = rng.choice([
        f"with budget 0.3:\n    print({{{{ count({guess}) }}}} > -1000)",
        f"print(laplace(count({guess}), {rng.choice(['0.3', '0.6', '1'])}) > -1000)",
        "with budget 0.4:\n    print({{ count(t) }} > -1000)",
    ])
    statements.append(release)
    statements.append(rng.choice(looks))
    return statements


def lifetime_for(case: Case) -> Any:
    """The session's default lifetime for data it loads itself (so a loaded guess can be charged)."""
    return 2 if getattr(case, "history", None) else None


__all__ = ["GUESS_FILE", "HISTORIES", "history_for", "prepare_ledger", "ledger_statements", "lifetime_for",
           "write_guess", "pd"]
