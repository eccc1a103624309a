"""The `jostle` command and the REPL, driven through real subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jostle.errors import (
    BudgetExceeded,
    CheckError,
    DataError,
    JostleRuntimeError,
    JostleSyntaxError,
    PrivacyError,
    UsageError,
)

ROOT = Path(__file__).resolve().parent.parent


def jostle(*args: str, stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, JOSTLE_HISTORY=os.devnull)
    return subprocess.run([sys.executable, "-m", "jostle", *args], input=stdin, capture_output=True,
                          text=True, cwd=cwd or ROOT, env=env, timeout=120)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    (tmp_path / "people.csv").write_text("age,sex\n30,F\n40,M\n50,F\n")
    (tmp_path / "people.schema.json").write_text(
        '{"age": {"type": "numeric", "bounds": [0, 100]}, '
        '"sex": {"type": "categorical", "values": ["F", "M"]}}'
    )
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_quickstart_example_runs():
    result = jostle("run", "examples/quickstart.jst", "--ledger")
    assert result.returncode == 0, result.stderr
    assert "patients (noisy):" in result.stdout
    assert "spent: 1.0 of 1.0" in result.stdout
    assert "remaining: epsilon=0" in result.stdout


def test_run_with_data_and_schema_file(data):
    program = write(data / "p.jst", "with budget 0.5:\n    print({{ count(people) }} > -1000)\n")
    result = jostle("run", str(program), "--budget", "1", "--data", f"people={data / 'people.csv'}", "--ledger")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "true"
    assert "{{ }} geometric" in result.stdout


@pytest.mark.parametrize("program, error", [
    ("x = (1 +\n", JostleSyntaxError),
    ("print(y)\n", CheckError),
    ("print(count(people))\n", PrivacyError),
    ("x = laplace(count(people), 5)\n", BudgetExceeded),
    ("x = 1 / 0\n", JostleRuntimeError),
    ("t = load('missing.csv', {a: numeric(0, 1)})\n", DataError),
])
def test_distinct_exit_codes_and_no_traceback(data, program, error):
    path = write(data / "e.jst", program)
    result = jostle("run", str(path), "--budget", "1", "--data", f"people={data / 'people.csv'}")
    assert result.returncode == error.exit_code
    assert "Traceback" not in result.stderr
    assert f"{path}:1:" in result.stderr
    assert "^" in result.stderr


def test_exit_codes_are_distinct():
    codes = [e.exit_code for e in (UsageError, JostleSyntaxError, CheckError, PrivacyError,
                                   BudgetExceeded, JostleRuntimeError, DataError)]
    assert len(set(codes)) == len(codes) and 0 not in codes


def test_check_touches_no_data_and_reports_errors(tmp_path):
    good = write(tmp_path / "g.jst", "private secret: {x: numeric(0, 1)}\nprint(1)\n")
    assert jostle("check", str(good)).returncode == 0  # no data bound: check still passes
    bad = write(tmp_path / "b.jst", "def f(:\n")
    result = jostle("check", str(bad))
    assert result.returncode == JostleSyntaxError.exit_code and "Traceback" not in result.stderr


@pytest.mark.parametrize("args", [
    ["run"], ["run", "nope.jst"], ["--budget", "-1", "-c", "print(1)"], ["--budget", "abc"],
    ["run", "examples/quickstart.jst", "--data", "novalue"], ["--frobnicate"],
])
def test_bad_command_lines_are_usage_errors(args):
    result = jostle(*args)
    assert result.returncode == UsageError.exit_code, result.stderr
    assert "Traceback" not in result.stderr


def test_dash_c_and_python_dash_m():
    result = jostle("-c", "print(sum(range(5)))")
    assert result.returncode == 0 and result.stdout == "10\n"


def test_seed_warns_that_it_is_unsafe():
    result = jostle("--seed", "3", "-c", "print(1)")
    assert "Never use a seed for a real release" in result.stderr


def test_ledger_is_printed_even_when_the_budget_runs_out(data):
    program = write(data / "p.jst", "x = laplace(count(people), 0.6)\ny = laplace(count(people), 0.6)\n")
    result = jostle("run", str(program), "--budget", "1", "--data", f"people={data / 'people.csv'}", "--ledger")
    assert result.returncode == BudgetExceeded.exit_code
    assert "requested 0.6, remaining 0.4, difference 0.2" in result.stderr
    assert "remaining: epsilon=0.4" in result.stdout


def test_repl_keeps_state_blocks_and_survives_errors(data):
    script = "\n".join([
        "people = load('people.csv', {age: numeric(0, 100), sex: categorical(['F', 'M'])})",
        "x = 20",
        "def twice(v):",
        "    return 2 * v",
        "",
        "twice(x)",
        "print(count(people))",
        "print(",
        "  'after error')",
        "with budget 0.5:",
        "    n = {{ count(people) }}",
        "",
        ":budget",
        ":ledger",
        ":help",
        ":quit",
    ]) + "\n"
    result = jostle("repl", "--budget", "1", stdin=script, cwd=data)
    assert result.returncode == 0, result.stderr
    assert "40" in result.stdout.split()
    assert "privacy error: a private value cannot be printed" in result.stderr
    assert "after error" in result.stdout
    assert "spent epsilon=0.5" in result.stdout
    assert "{{ }} geometric" in result.stdout
    assert ":ledger" in result.stdout  # the help text
    assert "Traceback" not in result.stderr


def test_bare_jostle_starts_the_repl():
    result = jostle(stdin="print('hi')\n")
    assert result.returncode == 0 and "hi" in result.stdout
