"""Lifetimes in rho on the command line (issue 22): `jostle run --lifetime rho:R`, `jostle ledger
lifetime --rho R`, and `jostle ledger show` / `export` of zCDP spending (rho with its (epsilon,
delta) equivalent, each charge's unit)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from jostle.diagnostics.errors import BudgetExceeded, UsageError

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = '{"age": {"type": "numeric", "bounds": [0, 100]}, "sex": {"type": "categorical", "values": ["F", "M"]}}'


def jostle(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, JOSTLE_HISTORY=os.devnull)
    return subprocess.run([sys.executable, "-m", "jostle", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=300)


def test_a_rho_lifetime_on_the_command_line(tmp_path):
    (tmp_path / "people.csv").write_text("age,sex\n30,F\n40,M\n50,F\n")
    (tmp_path / "people.schema.json").write_text(SCHEMA)
    program = tmp_path / "p.jst"
    program.write_text('n = gaussian(count(people), rho(0.03))\nprint("done")\n')
    db = str(tmp_path / "ledger.sqlite")
    common = ["--data", f"people={tmp_path / 'people.csv'}", "--ledger-db", db, "--rho", "1"]
    first = jostle("run", str(program), *common, "--lifetime", "rho:0.05")
    assert first.returncode == 0, first.stderr
    second = jostle("run", str(program), *common, "--lifetime", "rho:0.05")
    assert second.returncode == BudgetExceeded.exit_code
    assert "needs rho 0.03 but the data 'people' has only 0.02 left" in second.stderr, second.stderr
    assert "--rho R" in second.stderr and "done" not in second.stdout
    shown = jostle("ledger", "show", "--db", db)
    assert "lifetime budget rho=0.05, spent rho=0.03 (epsilon=" in shown.stdout, shown.stdout
    assert "at delta=1e-06: delta 1e-6, for comparison)" in shown.stdout
    assert "privacy unit: row" in shown.stdout
    bad = jostle("run", str(program), *common, "--lifetime", "rho:x")
    assert bad.returncode == UsageError.exit_code and "rho:R" in bad.stderr
    # The curator moves it to (epsilon, delta), then back to rho: a change of measure needs --yes.
    unconfirmed = jostle("ledger", "lifetime", "--db", db, "--dataset", "people", "1", "--delta", "1e-6",
                         "--reason", "publish in (epsilon, delta)")
    assert unconfirmed.returncode == UsageError.exit_code and "--yes" in unconfirmed.stderr
    moved = jostle("ledger", "lifetime", "--db", db, "--dataset", "people", "1", "--delta", "1e-6",
                   "--reason", "publish in (epsilon, delta)", "--yes")
    assert moved.returncode == 0, moved.stderr
    assert "lifetime budget rho=0.05 -> epsilon=1, delta=1e-06" in moved.stdout
    assert "spent rho=0.03 (epsilon=" in moved.stdout and "the lifetime's delta" in moved.stdout
    back = jostle("ledger", "lifetime", "--db", db, "--dataset", "people", "--rho", "0.04", "--reason", "zCDP",
                  "--yes")
    assert back.returncode == 0 and "-> rho=0.04" in back.stdout, back.stderr
    both = jostle("ledger", "lifetime", "--db", db, "--dataset", "people", "1", "--rho", "0.04", "--reason", "x")
    assert both.returncode == UsageError.exit_code and "one of them" in both.stderr
    exported = json.loads(jostle("ledger", "export", "--db", db, "--format", "json").stdout)
    assert exported["datasets"][0]["lifetime"] == {"rho": "1/25"}
    assert exported["datasets"][0]["spent_rho"] == "3/100"
    (charge,) = [e for e in exported["events"] if e["kind"] == "charge"]
    assert (charge["measure"], charge["rho"], charge["unit"], charge["requested_rho"]) == ("zcdp", "3/100", "row", "3/100")
    assert exported["problems"] == []
