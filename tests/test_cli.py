"""The `jostle` command and the REPL, driven through real subprocesses."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jostle.diagnostics.errors import (
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
    result = jostle("run", "examples/quickstart.jst", "--ledger", "--lifetime", "3")
    assert result.returncode == 0, result.stderr
    assert "patients (noisy):" in result.stdout
    assert "spent: 1.0 of 1.0" in result.stdout
    assert "this run spent: epsilon=1   of its budget: epsilon=1   left for this run: epsilon=0" in result.stdout
    assert "lifetime budget epsilon=3, spent epsilon=1 in all runs, left epsilon=2" in result.stdout


# ---------------------------------------------------------------- a newcomer's first runs
def _readme_quickstart_command() -> list[str]:
    """The `jostle ...` part of the README's main command (after `pip install -e . &&`)."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in re.findall(r"```sh\n(.*?)\n```", section, re.S) if "quickstart.jst" in line]
    assert len(lines) == 1, lines
    install, _, command = lines[0].partition(" && ")
    assert install == "python -m pip install -e ." and command.startswith("jostle run ")
    return shlex.split(command)


def _fresh_home(tmp_path: Path) -> dict[str, str]:
    """The environment of a new user: an empty home, no ledger or cache chosen by the tests."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("JOSTLE_LEDGER", "JOSTLE_CACHE", "XDG_DATA_HOME", "XDG_CACHE_HOME")}
    return dict(env, HOME=str(home), JOSTLE_HISTORY=os.devnull)


def _as_installed(command: list[str]) -> list[str]:
    """`jostle ...` as the installed console script (beside this Python), else `python -m jostle`."""
    script = Path(sys.executable).with_name("jostle")
    launcher = [str(script)] if script.is_file() else [sys.executable, "-m", "jostle"]
    assert command[0] == "jostle"
    return launcher + command[1:]


def _shape(output: str) -> list[str]:
    """The output with its numbers replaced: what two runs with different noise share."""
    return [re.sub(r"-?\d+(\.\d+)?(e-?\d+)?", "N", line) for line in output.splitlines()]


def test_the_readme_quickstart_command_succeeds_every_time(tmp_path):
    env = _fresh_home(tmp_path)
    command = _as_installed(_readme_quickstart_command())
    runs = [subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
        assert "Traceback" not in run.stderr and "budget exceeded" not in run.stderr
        assert "spent: 1.0 of 1.0" in run.stdout and "left for this run: epsilon=0" in run.stdout
    assert _shape(runs[0].stdout) == _shape(runs[1].stdout)
    assert len(runs[0].stdout.splitlines()) > 15  # the results and the ledger
    # The teaching run kept its ledger in memory: nothing was written to the user's ledger.
    assert not (Path(env["HOME"]) / ".local" / "share" / "jostle" / "ledger.sqlite").exists()


def test_the_durable_ledger_needs_a_lifetime_and_refuses_past_it(tmp_path):
    """Issue 21's budget model on the quickstart, with the durable ledger: the program's
    `budget 1.0` sets no lifetime (the run is refused, nothing released, naming how to declare
    one); --lifetime declares it; a run past it is refused with the numbers `jostle ledger show`
    prints and without suggesting `--ledger-db :memory:`; `jostle ledger lifetime` raises it,
    logged, keeping what was spent."""
    env = _fresh_home(tmp_path)

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "jostle", *args], capture_output=True, text=True,
                              cwd=ROOT, env=env, timeout=300)

    undeclared = run("run", "examples/quickstart.jst")
    assert undeclared.returncode == BudgetExceeded.exit_code
    assert "has no lifetime budget" in undeclared.stderr and "--lifetime E" in undeclared.stderr
    assert "patients (noisy):" not in undeclared.stdout
    first = run("run", "examples/quickstart.jst", "--lifetime", "1")
    assert first.returncode == 0, first.stderr
    assert (Path(env["HOME"]) / ".local" / "share" / "jostle" / "ledger.sqlite").is_file()
    second = run("run", "examples/quickstart.jst", "--lifetime", "1")  # the same declaration: fine
    assert second.returncode == BudgetExceeded.exit_code
    data = f"file:{ROOT / 'examples' / 'data' / 'patients.csv'}"
    assert (f"the data '{data}' has only 0 left of its lifetime budget: lifetime 1, spent 1"
            in second.stderr), second.stderr
    assert "patients (noisy):" not in second.stdout  # nothing was released
    assert ":memory:" not in second.stderr and "Traceback" not in second.stderr
    shown = run("ledger", "show", "--dataset", data)
    assert "lifetime budget epsilon=1, spent epsilon=1, left epsilon=0" in shown.stdout, shown.stdout
    lower = run("ledger", "lifetime", "--dataset", data, "3", "--reason", "teaching")
    assert lower.returncode == UsageError.exit_code and "--yes" in lower.stderr
    raised = run("ledger", "lifetime", "--dataset", data, "3", "--reason", "teaching", "--yes")
    assert raised.returncode == 0 and "spent epsilon=1 (kept)" in raised.stdout, raised.stderr
    assert run("run", "examples/quickstart.jst").returncode == 0
    shown = run("ledger", "show")
    assert "teaching (by" in shown.stdout and "lifetime budget epsilon=3, spent epsilon=2" in shown.stdout


def test_the_readmes_two_budgets_example_does_what_it_says(tmp_path):
    """The README's "Two budgets" commands, in order, on a new user's durable ledger."""
    env = _fresh_home(tmp_path)
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Two budgets", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```sh\n(.*?)\n```", section, re.S)
    commands = [shlex.split(line.split("#", 1)[0]) for line in block.splitlines()]
    runs = [subprocess.run(_as_installed(command), capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
            for command in commands]
    assert [run.returncode for run in runs] == [0, 0, 0, BudgetExceeded.exit_code], [r.stderr for r in runs]
    assert "lifetime budget epsilon=3, spent epsilon=1 in all runs, left epsilon=2" in runs[0].stdout
    assert "lifetime budget epsilon=3, spent epsilon=2 in all runs, left epsilon=1" in runs[1].stdout
    assert "has only 0 left of its lifetime budget: lifetime 3, spent 3" in runs[3].stderr


# ---------------------------------------------------------------- output piped into a reader that stops early
PIPE_PROGRAM = "with budget 0.5:\n    n = {{ count(people) }}\nfor i in range(30000):\n    print(i)\n"


def test_piping_into_head_exits_quietly(data):
    program = write(data / "many.jst", PIPE_PROGRAM)
    jostle_command = shlex.join([sys.executable, "-m", "jostle", "run", str(program), "--budget", "1",
                                 "--data", f"people={data / 'people.csv'}", "--ledger"])
    result = subprocess.run(["bash", "-c", f'{jostle_command} | head -n 1; echo "status=${{PIPESTATUS[0]}}" >&2'],
                            capture_output=True, text=True, cwd=ROOT, timeout=300,
                            env=dict(os.environ, JOSTLE_HISTORY=os.devnull))
    assert result.stdout == "0\n"
    assert result.stderr.strip() == "status=141", result.stderr  # nothing else: no traceback, no message


@pytest.mark.parametrize("args", [
    ["-c", "for i in range(30000):\n    print(i)\n"],
    ["repl"],
])
def test_a_reader_that_closes_early_gets_a_quiet_exit(args):
    stdin = "for i in range(30000):\n    print(i)\n\n" if args == ["repl"] else ""
    process = subprocess.Popen([sys.executable, "-m", "jostle", *args], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                               env=dict(os.environ, JOSTLE_HISTORY=os.devnull))
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    process.stdin.write(stdin.encode())
    process.stdin.close()
    first = process.stdout.readline()
    process.stdout.close()  # the reader goes away while the program still prints
    error = process.stderr.read().decode()
    assert process.wait(timeout=300) == 141, error
    assert first.rstrip().endswith(b"0"), first  # the prompts, if any, then the first number
    assert "Traceback" not in error and "internal error" not in error and "Exception ignored" not in error


# ---------------------------------------------------------------- jostle check and tables bound at run time
def test_check_knows_a_table_given_with_data_from_its_schema_file_only(data):
    program = write(data / "p.jst", "with budget 0.5:\n    print({{ count(people) }})\n")
    alone = jostle("check", str(program))
    assert alone.returncode == CheckError.exit_code
    assert "'people' is not defined" in alone.stderr
    assert "give `jostle check` the same --data" in alone.stderr
    for binding in (f"people={data / 'people.csv'}", f"people={data / 'people.schema.json'}"):
        for args in (["check", str(program), "--data", binding], ["--data", binding, "check", str(program)]):
            result = jostle(*args)
            assert result.returncode == 0 and result.stdout == f"{program}: ok\n", result.stderr
    # Only the schema is read: rows that no run could read do not matter to check.
    (data / "people.csv").write_bytes(b"\xff\xfe not a csv \x00\n")
    assert jostle("check", str(program), "--data", f"people={data / 'people.csv'}").returncode == 0


def test_check_with_data_but_no_schema_file_asks_for_one(data):
    program = write(data / "p.jst", "with budget 0.5:\n    print({{ count(other) }})\n")
    result = jostle("check", str(program), "--data", f"other={data / 'other.csv'}")
    assert result.returncode == CheckError.exit_code
    assert "'other' is bound but has no schema" in result.stderr and "other.schema.json" in result.stderr
    declared = write(data / "d.jst", "private other: {x: numeric(0, 1)}\nwith budget 0.5:\n    print({{ count(other) }})\n")
    assert jostle("check", str(declared), "--data", f"other={data / 'other.csv'}").returncode == 0
    write(data / "bad.schema.json", "{not json")
    broken = jostle("check", str(program), "--data", f"other={data / 'bad.schema.json'}")
    assert broken.returncode == DataError.exit_code and "is not valid JSON" in broken.stderr
    assert jostle("check", str(program), "--data", "other").returncode == UsageError.exit_code
    assert jostle("check", str(program), "--budget", "1").returncode == UsageError.exit_code


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
    result = jostle("run", str(program), "--budget", "1", "--data", f"people={data / 'people.csv'}", "--ledger",
                    "--no-dry-run")  # (the dry run would refuse the program before its first release)
    assert result.returncode == BudgetExceeded.exit_code
    assert "requested 0.6, remaining 0.4, difference 0.2" in result.stderr
    assert "left for this run: epsilon=0.4" in result.stdout


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


# ---------------------------------------------------------------- options before the command
def test_options_before_the_command_are_used(data):
    program = write(data / "p.jst", "with budget 0.5:\n    print({{ count(people) }} > -1000)\n")
    people = f"people={data / 'people.csv'}"
    for args in (["--budget", "1", "--data", people, "run", str(program), "--ledger"],
                 ["--budget", "1", "run", str(program), "--data", people, "--ledger"],
                 ["--ledger", "run", str(program), "--budget", "1", "--data", people]):
        result = jostle(*args, "--ledger-db", ":memory:")
        assert result.returncode == 0, (args, result.stderr)
        assert "of its budget: epsilon=1   left for this run: epsilon=0.5" in result.stdout, args
    result = jostle("--budget", "1", "--data", people, "--ledger-db", ":memory:", "repl", stdin=":budget\n")
    assert result.returncode == 0 and "of its budget epsilon=1" in result.stdout


@pytest.mark.parametrize("args, message", [
    (["--budget", "1", "run", "p.jst", "--budget", "2"], "--budget was given twice"),
    (["--budget", "1", "check", "p.jst"], "`jostle check` does not take --budget"),
    (["--seed", "1", "ledger", "show"], "`jostle ledger` does not take --seed"),
    (["-c", "print(1)", "run", "p.jst"], "-c CODE cannot be combined"),
    (["ledger", "reset", "--dataset", "abcdef"], "needs --yes"),
    (["ledger", "export", "--format", "xml"], "invalid choice"),
])
def test_misplaced_or_conflicting_options_are_usage_errors(data, args, message):
    write(data / "p.jst", "print(1)\n")
    result = jostle(*args, cwd=data)
    assert result.returncode == UsageError.exit_code, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr


# ---------------------------------------------------------------- the durable ledger
def test_spending_persists_across_runs_until_the_budget_is_gone(data):
    program = write(data / "p.jst", "with budget 0.5:\n    print({{ count(people) }} > -1000)\n")
    args = ["run", str(program), "--budget", "1", "--data", f"people={data / 'people.csv'}",
            "--ledger-db", str(data / "study.sqlite"), "--ledger"]
    first, second, third = jostle(*args), jostle(*args), jostle(*args)
    assert first.returncode == 0 and "left for this run: epsilon=0.5" in first.stdout
    assert second.returncode == 0
    assert "this run spent: epsilon=0.5" in second.stdout
    assert "data 'people': lifetime budget epsilon=1, spent epsilon=1 in all runs, left epsilon=0" in second.stdout
    assert third.returncode == BudgetExceeded.exit_code
    assert "the data 'people' has only 0 left of its lifetime budget" in third.stderr
    assert "true" not in third.stdout  # nothing was released


def test_the_default_ledger_comes_from_the_environment(data, private_ledger):
    program = write(data / "p.jst", "x = laplace(count(people), 0.75)\n")
    args = ["run", str(program), "--budget", "1", "--data", f"people={data / 'people.csv'}"]
    assert jostle(*args).returncode == 0
    assert Path(private_ledger).is_file()
    assert jostle(*args).returncode == BudgetExceeded.exit_code


def test_the_repl_continues_from_the_ledger_after_a_restart(data):
    args = ["repl", "--budget", "1", "--data", f"people={data / 'people.csv'}",
            "--ledger-db", str(data / "study.sqlite")]
    first = jostle(*args, stdin="x = laplace(count(people), 0.75)\n:budget\n")
    assert "this run spent epsilon=0.75" in first.stdout and str(data / "study.sqlite") in first.stderr
    second = jostle(*args, stdin=":budget\ny = laplace(count(people), 0.5)\nz = laplace(count(people), 0.25)\n:budget\n")
    assert second.returncode == 0
    assert ("this run spent epsilon=0 of its budget epsilon=1; the next release may spend at most "
            "epsilon=0.25\ndata 'people': lifetime budget epsilon=1, spent epsilon=0.75 in all runs") in second.stdout
    assert "the data 'people' has only 0.25 left of its lifetime budget" in second.stderr  # y: refused
    assert "data 'people': lifetime budget epsilon=1, spent epsilon=1 in all runs, left epsilon=0" in second.stdout


def test_a_budget_typed_in_the_repl_does_not_change_the_lifetime(data):
    """Issue 21: `budget 2` typed in the REPL on data whose lifetime budget is 5 caps that
    input; the lifetime budget stays 5."""
    db = str(data / "study.sqlite")
    args = ["repl", "--lifetime", "5", "--data", f"people={data / 'people.csv'}", "--ledger-db", db]
    typed = jostle(*args, stdin="budget 2\nx = laplace(count(people), 1)\n\n:budget\n")
    assert typed.returncode == 0, typed.stderr
    assert "data 'people': lifetime budget epsilon=5, spent epsilon=1 in all runs, left epsilon=4" in typed.stdout
    shown = jostle("ledger", "show", "--db", db)
    assert "lifetime budget epsilon=5, spent epsilon=1, left epsilon=4" in shown.stdout


def test_the_curator_names_the_dataset_on_the_command_line(data):
    db = str(data / "study.sqlite")
    program = write(data / "p.jst", "x = laplace(count(people), 0.5)\n")
    people = f"people={data / 'people.csv'}"
    for _ in range(2):
        run = jostle("run", str(program), "--data", people, "--dataset", "people=survey 2026", "--lifetime", "1",
                     "--budget", "1", "--ledger-db", db, "--ledger")
        assert run.returncode == 0, run.stderr
    assert "data 'survey 2026': lifetime budget epsilon=1, spent epsilon=1 in all runs, left epsilon=0" in run.stdout
    other = jostle("run", str(program), "--data", people, "--budget", "1", "--ledger-db", db)
    # under another name, the same rows are refused at bind (a re-export cannot restart a budget)
    assert other.returncode == DataError.exit_code and "holds the same rows as the data 'survey 2026'" in other.stderr
    wrong = jostle("run", str(program), "--data", people, "--dataset", "persons=x", "--ledger-db", db)
    assert wrong.returncode == UsageError.exit_code and "no --data binds" in wrong.stderr


def _spend(data: Path, db: Path, epsilon: float) -> bool:
    """Spend `epsilon` on people.csv in the ledger `db` (in-process, to keep the tests quick);
    False if the ledger refused it."""
    from jostle import Session

    with Session(budget=1, ledger_path=db) as session:
        session.bind_private("people", data / "people.csv")
        try:
            session.run(f"x = laplace(count(people), {epsilon})", str(data / "spend.jst"))
        except BudgetExceeded:
            return False
    return True


def _events(db: Path) -> list[dict]:
    from jostle.privacy.ledger_store import LedgerStore

    with LedgerStore(db) as store:
        return store.events()


def test_ledger_show_export_and_verify(data):
    import csv
    import io
    import json

    db = data / "study.sqlite"
    assert _spend(data, db, 0.25) and _spend(data, db, 0.5)
    shown = jostle("ledger", "--db", str(db))
    assert shown.returncode == 0, shown.stderr
    assert "1 dataset, 3 events, hash chain intact" in shown.stdout
    assert "dataset 'people'  (table 'people', columns age, sex)" in shown.stdout
    assert "lifetime budget epsilon=1, spent epsilon=0.75, left epsilon=0.25  (2 charges, 0 resets)" in shown.stdout
    rows = list(csv.DictReader(io.StringIO(jostle("ledger", "export", "--db", str(db)).stdout)))
    assert [(r["kind"], r["epsilon"], r["spent_epsilon"], r["mechanism"]) for r in rows] == [
        ("lifetime", "0", "0", ""), ("charge", "1/4", "1/4", "laplace"), ("charge", "1/2", "3/4", "laplace")]
    assert rows[1]["location"].endswith("spend.jst:1:5")
    document = json.loads(jostle("--ledger-db", str(db), "ledger", "export", "--format", "json").stdout)
    assert document["problems"] == [] and document["datasets"][0]["spent_epsilon"] == "3/4"
    assert document["datasets"][0]["name"] == "people" and document["datasets"][0]["lifetime"] == ["1", "0"]
    assert [e["epsilon"] for e in document["events"]] == ["0", "1/4", "1/2"]
    out = data / "export.csv"
    assert jostle("ledger", "export", "--db", str(db), "--output", str(out)).returncode == 0
    assert list(csv.DictReader(out.open())) == rows
    verified = jostle("ledger", "verify", "--db", str(db))
    assert verified.returncode == 0 and "ok (3 events about 1 dataset)" in verified.stdout


def test_ledger_commands_never_create_a_ledger(data):
    db = data / "nothing-here.sqlite"
    shown = jostle("ledger", "show", "--db", str(db))
    assert shown.returncode == 0 and "nothing has been spent" in shown.stdout
    assert not db.exists()


def test_ledger_reset_needs_yes_and_is_logged(data):
    db = data / "study.sqlite"
    assert _spend(data, db, 1) and not _spend(data, db, 0.1)
    fingerprint = _events(db)[0]["dataset"]
    refused = jostle("ledger", "reset", "--db", str(db), "--dataset", "people")
    assert refused.returncode == UsageError.exit_code and len(_events(db)) == 2
    done = jostle("ledger", "reset", "--db", str(db), "--dataset", fingerprint[:12], "--yes",
                  "--reason", "new data release approved")
    assert done.returncode == 0, done.stderr
    assert "reset dataset 'people': wrote off epsilon 1" in done.stdout
    _, charge, reset = _events(db)
    assert reset["kind"] == "reset" and reset["dataset"] == fingerprint
    assert reset["note"].startswith("new data release approved (by ")
    assert reset["epsilon"] == "-1" and reset["spent_epsilon"] == "0"
    assert _spend(data, db, 0.1)
    unknown = jostle("ledger", "reset", "--db", str(db), "--dataset", "ffffffffff", "--yes")
    assert unknown.returncode == UsageError.exit_code and "no dataset" in unknown.stderr


def test_ledger_verify_fails_on_a_tampered_ledger(data):
    import sqlite3

    db = data / "study.sqlite"
    for epsilon in (0.25, 0.25, 0.25):
        assert _spend(data, db, epsilon)
    connection = sqlite3.connect(db)
    connection.execute("DROP TRIGGER events_are_never_deleted")
    connection.execute("DELETE FROM events WHERE id = 2")
    connection.commit()
    connection.close()
    result = jostle("ledger", "verify", "--db", str(db))
    assert result.returncode == DataError.exit_code
    assert "event 3: the chain is broken" in result.stdout
    assert "fails verification" in result.stderr
    assert "PROBLEMS" in jostle("ledger", "show", "--db", str(db)).stdout


# ---------------------------------------------------------------- issue 11
def _neighbours(tmp_path: Path, header: str, rows: list[str], extra: str,
                encoding: str = "utf-8") -> tuple[Path, Path]:
    """The same file name in two folders: the rows, and the rows with `extra` added."""
    paths = []
    for folder, content in (("d", rows), ("d_plus", [extra] + rows)):
        (tmp_path / folder).mkdir()
        path = tmp_path / folder / "small.csv"
        path.write_bytes(("\n".join([header, *content]) + "\n").encode(encoding))
        paths.append(path)
    return paths[0], paths[1]


@pytest.mark.parametrize("declared", [
    'categorical(["zz"])', 'categorical(["zz", "bob"])', "numeric(0, 1)",
])
def test_hole6_a_program_schema_gives_one_outcome_on_neighbouring_files(tmp_path, declared):
    """On the command line the program's author sees stdout, stderr and the exit code: all three
    are the same whether or not the private row 'alice' is there, for any declared schema."""
    d, d_plus = _neighbours(tmp_path, "name", ["bob", "zz"], "alice")
    program = write(tmp_path / "p.jst", f"private t: {{name: {declared}}}\nprint(t.columns)\nprint(count(t))\n")
    runs = [jostle("run", str(program), "--budget", "1", "--data", f"t={path}",
                   "--ledger-db", str(tmp_path / f"{path.parent.name}.sqlite"), cwd=tmp_path)
            for path in (d, d_plus)]
    assert [(r.returncode, r.stdout, r.stderr) for r in runs][0] == \
        [(r.returncode, r.stdout, r.stderr) for r in runs][1]
    assert runs[0].returncode == PrivacyError.exit_code  # print(count(t)): a private value
    assert runs[0].stdout == "['name']\n"
    assert "alice" not in runs[1].stdout + runs[1].stderr


def test_hole6_a_program_load_gives_one_outcome_on_neighbouring_files(tmp_path):
    """load() in a program: a record the reader cannot use, or a value outside the schema, is
    dropped; nothing about it reaches stdout, stderr or the exit code."""
    for extra, encoding in (("alice,300,x", "utf-8"), ('"broken,1', "utf-8"), ("carol,zz", "utf-8"),
                            ("dave,\xe9", "latin-1")):
        folder = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
        folder.mkdir()
        d, d_plus = _neighbours(folder, "name,age", ["bob,30", "eve,41"], extra, encoding)
        runs = []
        for path in (d, d_plus):
            program = write(path.parent / "p.jst", 't = load("small.csv", {name: categorical(["bob", "eve"]), '
                                                    "age: numeric(0, 100)})\nprint(t.columns)\n")
            runs.append(jostle("run", "p.jst", "--budget", "1", "--ledger-db", ":memory:", cwd=path.parent))
        assert runs[0].returncode == runs[1].returncode == 0, runs[1].stderr
        assert (runs[0].stdout, runs[0].stderr) == (runs[1].stdout, runs[1].stderr), extra


def test_hole7_load_public_of_the_file_bound_with_data_is_refused(tmp_path):
    """The audit's reproducer: `--data t=small.csv` and `load_public("small.csv")` printed every row."""
    write(tmp_path / "small.csv", "name,age\nalice,30\nbob,41\n")
    program = write(tmp_path / "p.jst", 'print(rows(load_public("small.csv")))\n')
    result = jostle("run", str(program), "--budget", "1", "--data", "t=small.csv", "--ledger-db", ":memory:",
                    cwd=tmp_path)
    assert result.returncode == PrivacyError.exit_code, result.stderr
    assert "holds the private table 't'" in result.stderr and "hint" in result.stderr
    assert "alice" not in result.stdout + result.stderr


def test_hole9_a_later_budget_does_not_raise_the_lifetime_budget(data):
    db = str(data / "study.sqlite")
    people = f"people={data / 'people.csv'}"
    spend = write(data / "spend.jst", "x = laplace(count(people), 1)\n")
    assert jostle("run", str(spend), "--budget", "1", "--data", people, "--ledger-db", db).returncode == 0
    again = jostle("run", str(spend), "--budget", "2", "--data", people, "--ledger-db", db)
    assert again.returncode == BudgetExceeded.exit_code
    # refused by the dry run (the data has 0 left of its lifetime) before the ledger would refuse the raise
    assert "lifetime budget" in again.stderr and "jostle ledger lifetime" in again.stderr
    program = write(data / "more.jst", "budget 100\nx = laplace(count(people), 1)\n")
    assert jostle("run", str(program), "--data", people, "--ledger-db", db).returncode == BudgetExceeded.exit_code
    shown = jostle("ledger", "--db", db, "show")
    assert "lifetime budget epsilon=1" in shown.stdout


# ---------------------------------------------------------------- packaging
def test_the_package_declares_its_licence_and_the_sdist_carries_what_the_tests_read():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert all(f"### Issue {n}:" in changelog for n in (2, 3, 4, 5, 11, 12, 13))
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8").split()
    grafted = {manifest[i + 1] for i, word in enumerate(manifest) if word == "graft"}
    # Every top-level folder the tests read from, beside the package itself.
    read = {"docs", "examples", "tests", "benchmarks", "grammar", "stdlib"}
    assert read <= grafted, read - grafted
    for name in ("LICENSE", "CHANGELOG.md", "README.md"):
        assert name in manifest
