"""Issue 21, hole 1: the durable ledger is not a membership oracle.

A curator's session releases a count of a table; later an analyst's program that binds
nothing loads files of its own: the rows it knows plus a guessed target row (written as
`100.0`, the rows reversed: the old content key ignored both). Under format 1 of the ledger,
`spent()` showed the curator's 0.5 exactly for the right guess, and a release of budget 1 was
refused exactly then. Now a program's load is identified by its file's path and never matched
to the ledger's contents: everything the program sees is the same whatever it guessed.
"""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pandas as pd
import pytest

from jostle import Session

KNOWN = [12.0, 30.0, 47.0]
TARGET = 100.0


def curator_spends(db: Path, folder: Path, dataset: str = "t") -> None:
    """The curator's session: binds the private rows (a file) as `dataset` and releases a noisy count."""
    pd.DataFrame({"x": KNOWN + [TARGET]}).to_csv(folder / "private.csv", index=False)
    with Session(budget=1, ledger_path=db, output=io.StringIO()) as curator:
        if dataset == "t":  # the default name (written without the new keyword, so the test runs on format 1 too)
            curator.bind_private("t", folder / "private.csv", {"x": ("numeric", 0, 1000)})
        else:
            curator.bind_private("t", folder / "private.csv", {"x": ("numeric", 0, 1000)}, dataset=dataset)
        curator.run("r = laplace(count(t), 0.5)")


def analyst_sees(db: Path, folder: Path, guess: float, program: str, **session: object) -> str:
    """What an analyst's program prints after loading the known rows plus `guess`."""
    lines = ["x"] + [f"{value:.1f}" for value in reversed(KNOWN + [guess])]
    guess_file = folder / f"guess-{guess}.csv"
    guess_file.write_text("\n".join(lines) + "\n")
    out = io.StringIO()
    with Session(ledger_path=db, output=out, seed=1, **session) as analyst:
        try:
            analyst.run(program.replace("GUESS", str(guess_file)))
        except Exception as error:  # noqa: BLE001 - the error is part of what the program sees
            out.write(f"error: {type(error).__name__}: {error}\n")
    return out.getvalue().replace(str(guess_file), "GUESS")


LOOK = 'g = load("GUESS", {x: numeric(0, 1000)})\nprint(spent(), remaining())\nprint(ledger())\n'


@pytest.mark.parametrize("history_name", ["t", "an export"])
def test_a_program_cannot_test_guesses_against_the_ledger(tmp_path: Path, history_name: str) -> None:
    db = tmp_path / "ledger.sqlite"
    curator_spends(db, tmp_path, history_name)
    seen = {guess: analyst_sees(db, tmp_path, guess, LOOK) for guess in (TARGET, 99.0, 101.0)}
    assert seen[TARGET] == seen[99.0] == seen[101.0], seen
    assert seen[TARGET] == "0.0 none\n[]\n"


def test_refusals_do_not_depend_on_the_guess(tmp_path: Path) -> None:
    """A program that releases on its loaded guess: accepted or refused alike for every guess
    (format 1 refused exactly the right guess, whose balance was the curator's)."""
    db = tmp_path / "ledger.sqlite"
    curator_spends(db, tmp_path)
    program = (LOOK + "print(laplace(count(g), 0.75) > -100)\nprint(spent(), remaining())\n"
               "print(laplace(count(g), 0.5) > -100)\n")
    runs = []
    for session in ({"budget": 2, "lifetime": 1}, {"budget": 2}, {}):
        seen = {guess: analyst_sees(db, tmp_path, guess, program, **session) for guess in (TARGET, 99.0)}
        assert seen[TARGET] == seen[99.0], (session, seen)
        runs.append(seen[TARGET])
    # Each guess file is its own dataset (its path), with the lifetime the first session that
    # loaded it gave (1), continued by the next session; a session without a total releases nothing.
    assert "this release needs epsilon 0.5 but the data 'file:GUESS' has only 0.25 left" in runs[0]
    assert "this release needs epsilon 0.75 but the data 'file:GUESS' has only 0.25 left" in runs[1]
    assert "no privacy budget has been set" in runs[2]


def test_the_curators_log_alone_hears_of_equal_data(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Equal content is compared only when a curator binds data; the program's load writes
    nothing to the curator's log either (its result would depend on the rows)."""
    from jostle.privacy.ledger_store import EqualData

    db = tmp_path / "ledger.sqlite"
    curator_spends(db, tmp_path, "an export")
    with caplog.at_level(logging.DEBUG, "jostle.ledger"):
        analyst_sees(db, tmp_path, TARGET, LOOK)
        assert not caplog.records
        with Session(budget=1, ledger_path=db, output=io.StringIO()) as curator:
            with pytest.raises(EqualData):
                curator.bind_private("u", tmp_path / "private.csv", {"x": ("numeric", 0, 1000)})
    assert [r.name for r in caplog.records] == ["jostle.ledger"]
    assert "the same rows as 'an export'" in caplog.records[0].getMessage()
