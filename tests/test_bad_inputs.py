"""The bad-input corpus (tests/bad_inputs/): malformed programs, data files, schema files and
command lines, each with the error class it must raise and the place it must point at.

Layout:
    tests/bad_inputs/<category>/*.jst
        one case per program, its expectations in comments in the golden-program format of
        tests/test_programs.py (`# run:`, `# expect error: Class at LINE:COL` or `at -`,
        `# expect message:`, `# expect ledger:`, `# expect:`). Programs run with their own
        folder as the working directory. Files named `_*.jst` are modules the cases import.
    tests/bad_inputs/data/
        the CSV files and schema files the programs bind (`--data`) or load.
    tests/bad_inputs/commands.toml
        bad command lines: the arguments, the error class, the place (`-` for none) and
        messages; they run with tests/bad_inputs/ as the working directory.

Every case runs in process through `jostle.cli.main` and must:
  * fail with the stated class, at the stated place, with the stated messages, exit with the
    class's documented code, and show no Python traceback;
  * spend no budget: the session's ledger and the durable ledger hold exactly the charges the
    case states (none, unless an `# expect ledger:` line says earlier statements released
    something), and the failing release and statement themselves charged nothing (the probe of
    tests/test_programs.py);
  * leave no files behind: tests/bad_inputs/ lists the same files, with the same sizes, before
    and after the run.
An error reported with no place (`at -`, for command lines and data files bound from outside)
must name in its message the file, column or row it is about.

The first case of each error class (every case with JOSTLE_BAD_INPUTS_ALL=1) also runs through
`python -m jostle` in a fresh process, with the same checks.

Cases in KNOWN_BUGS show a defect in a module this corpus may not fix; they keep the *correct*
expectation and are strict xfails, so fixing the bug makes them fail until they are removed.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import jostle.cli
import jostle.diagnostics.errors
import jostle.session
from jostle.diagnostics.errors import JostleError
from tests.test_programs import Expectations, _check_run, _location, _Probe, parse_expectations

BAD = Path(__file__).parent / "bad_inputs"
COMMANDS = BAD / "commands.toml"

# What each folder of the corpus is about (every category of issue 3's list has a folder).
CATEGORIES = {
    "syntax": "syntax errors",
    "names": "undefined names",
    "arity": "wrong arity and types",
    "privacy": "private-value misuse",
    "budget": "over-budget programs",
    "columns": "CSVs with missing columns",
    "numbers": "unparseable numbers",
    "domains": "values outside declared domains",
    "empty": "empty tables",
    "extremes": "huge or NaN/inf values",
    "files": "unreadable files",
    "schemas": "invalid schemas",
    "commands": "bad command-line arguments",
}

# Cases showing a bug in a module outside this corpus's remit (jostle/cli.py, session.py, ...).
# Each holds the correct expectation; the reason names the bug. Remove an entry once fixed.
KNOWN_BUGS: dict[str, str] = {
}

# A message for an error with no place must say what it is about: a data error names its file,
# column or row; a command-line error the argument or option (or the file) it is about.
_NAMES_DATA = re.compile(r"\.(csv|json|jst|sqlite)\b|column '|row \d")
_NAMES_ARGUMENT = re.compile(_NAMES_DATA.pattern + r"|(?<![\w-])--?[a-z]|'[^']+'|\bargument|`jostle |\bbudget\b")


# ---------------------------------------------------------------- the cases
@dataclass
class CommandCase:
    """One bad command line from commands.toml."""

    name: str
    argv: list[str]
    error: str
    location: tuple[int, int] | None
    messages: list[str] = field(default_factory=list)


def _program_paths() -> list[Path]:
    return sorted(p for folder in CATEGORIES if (BAD / folder).is_dir()
                  for p in (BAD / folder).glob("*.jst") if not p.name.startswith("_"))


def _rel(path: Path) -> str:
    return path.relative_to(BAD).as_posix()


def _command_cases() -> list[CommandCase]:
    cases = []
    for entry in tomllib.loads(COMMANDS.read_text(encoding="utf-8"))["case"]:
        at = entry["at"]
        location = None if at == "-" else tuple(int(part) for part in at.split(":"))
        cases.append(CommandCase(entry["name"], list(entry["argv"]), entry["error"], location,
                                 list(entry.get("messages", []))))
    return cases


def _marks(case_id: str) -> list:
    reason = KNOWN_BUGS.get(case_id)
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []


def _program_params() -> list:
    return [pytest.param(p, id=_rel(p), marks=_marks(_rel(p))) for p in _program_paths()]


def _command_params() -> list:
    return [pytest.param(c, id=c.name, marks=_marks(f"commands/{c.name}")) for c in _command_cases()]


# ---------------------------------------------------------------- observations
def _listing() -> dict[str, int]:
    """Every file under tests/bad_inputs with its size (folders as -1)."""
    return {_rel(p): (p.stat().st_size if p.is_file() else -1) for p in BAD.rglob("*")
            if "__pycache__" not in p.parts}


def _listing_problems(before: dict[str, int], after: dict[str, int]) -> list[str]:
    problems = []
    if added := sorted(set(after) - set(before)):
        problems.append(f"the run left files behind: {added}")
    if removed := sorted(set(before) - set(after)):
        problems.append(f"the run removed files: {removed}")
    if changed := sorted(n for n in set(before) & set(after) if before[n] != after[n]):
        problems.append(f"the run changed files: {changed}")
    return problems


def _durable_charges(db: str) -> list[dict]:
    """The charge events of the durable ledger at `db`, read with `jostle ledger export`."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = jostle.cli.main(["ledger", "--db", db, "export", "--format", "json"])
    assert code == 0, f"`jostle ledger export` failed ({code}): {err.getvalue()}"
    return [event for event in json.loads(out.getvalue())["events"] if event["kind"] == "charge"]


def _ledger_problems(expect: Expectations, session_charges: list[tuple[int, float]], db: str) -> list[str]:
    """The session (if any) and the durable ledger must hold exactly the stated charges."""
    charges, epsilon = expect.ledger if expect.ledger is not None else (0, 0.0)
    problems = []
    for count, spent in session_charges:
        if count != charges or abs(spent - epsilon) > 1e-9:
            problems.append(f"the session's ledger has {count} charges, epsilon {spent!r}; expected "
                            f"{charges} charges, epsilon {epsilon!r}")
    releases = {(event["session"], event["seq"]) for event in _durable_charges(db)}
    if len(releases) != charges:
        problems.append(f"the durable ledger records {len(releases)} releases, expected {charges}")
    return problems


def _class_problems(error: BaseException | None, name: str, location: tuple[int, int] | None,
                    error_file: str | None = None) -> list[str]:
    """The reported error object has the expected class and place."""
    if error is None:
        return [f"expected {name}, but no error was reported"]
    if type(error).__name__ != name:
        return [f"raised {type(error).__name__}: {error}, expected {name}"]
    if not isinstance(error, JostleError):
        return []
    got = _location(error)
    if location is None:
        return [f"error located at {got}, expected no location"] if got is not None else []
    if got is None:
        return [f"error has no location, expected {location}"]
    problems = []
    if got[1:] != location:
        problems.append(f"error at {got[1]}:{got[2]}, expected {location[0]}:{location[1]}: {error}")
    if error_file is not None and got[0] != error_file:
        problems.append(f"error in file {got[0]}, expected {error_file}")
    return problems


def _subject_problems(location: tuple[int, int] | None, messages: list[str], subject: re.Pattern) -> list[str]:
    if location is None and not any(subject.search(m) for m in messages):
        return ["an error with no place must name what it is about (its file, column, row or "
                "argument) in an expected message"]
    return []


class _SessionLedgers:
    """Records each session's own charges when it closes (its store is closed afterwards)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.closed: list[tuple[int, float]] = []
        original = jostle.session.Session.close
        recorder = self

        def close(session) -> None:
            recorder.closed.append((len(session.ledger), float(session.session_spent.epsilon)))
            original(session)

        monkeypatch.setattr(jostle.session.Session, "close", close)


# ---------------------------------------------------------------- corpus shape
def test_corpus_size_and_coverage() -> None:
    """At least 100 cases, and every category of issue 3 has several."""
    counts = {folder: len(list((BAD / folder).glob("[!_]*.jst"))) for folder in CATEGORIES if folder != "commands"}
    counts["commands"] = len(_command_cases())
    assert sum(counts.values()) >= 100, counts
    thin = {folder: n for folder, n in counts.items() if n < 5}
    assert not thin, f"categories with fewer than 5 cases: {thin}"


def test_every_case_states_an_error() -> None:
    for path in _program_paths():
        expect = parse_expectations(path)
        assert expect.error is not None, f"{_rel(path)} expects no error: the corpus is of bad inputs"
        assert not _subject_problems(expect.location, expect.messages, _NAMES_DATA), _rel(path)
    for case in _command_cases():
        assert hasattr(jostle.diagnostics.errors, case.error), f"{case.name}: unknown error class {case.error}"
        assert not _subject_problems(case.location, case.messages, _NAMES_ARGUMENT), case.name


def test_known_bugs_exist() -> None:
    ids = {_rel(p) for p in _program_paths()} | {f"commands/{c.name}" for c in _command_cases()}
    assert set(KNOWN_BUGS) <= ids, f"KNOWN_BUGS lists missing cases: {sorted(set(KNOWN_BUGS) - ids)}"


# ---------------------------------------------------------------- in process
@pytest.mark.parametrize("path", _program_params())
def test_bad_program(path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch,
                     private_ledger: str) -> None:
    expect = parse_expectations(path)
    probe = _Probe(monkeypatch)
    ledgers = _SessionLedgers(monkeypatch)
    monkeypatch.chdir(path.parent)
    before = _listing()
    capsys.readouterr()
    code = jostle.cli.main(["run", path.name, *expect.options])
    out, err = capsys.readouterr()

    problems = _check_run(path, expect, code, out, err)
    error = probe.errors[-1] if probe.errors else None
    problems += _class_problems(error, expect.error, expect.location, expect.error_file)
    if error is not None:
        for tag in ("_golden_release", "_golden_statement"):
            info = getattr(error, tag, None)
            if info is not None and info[2] != info[3]:
                problems.append(f"the failing {info[0]} at {info[1]} spent budget: the ledger grew "
                                f"from {info[2]} to {info[3]} charges")
    problems += _ledger_problems(expect, ledgers.closed, private_ledger)
    problems += _listing_problems(before, _listing())
    assert not problems, f"{_rel(path)}:\n - " + "\n - ".join(problems) + f"\n--- stderr ---\n{err}"


def _command_problems(case: CommandCase, code: int, out: str, err: str, error: BaseException | None,
                      db: str) -> list[str]:
    cls = getattr(jostle.diagnostics.errors, case.error)
    problems = []
    if "Traceback" in err:
        problems.append("a Python traceback on stderr")
    if code != cls.exit_code:
        problems.append(f"exit code {code}, expected {cls.exit_code}")
    if not re.search(rf"^{re.escape(cls.kind)}: ", err, re.M):
        problems.append(f"stderr does not report a {cls.kind}")
    if case.location is not None:
        where = f":{case.location[0]}:{case.location[1]}"
        if not re.search(r"-->\s+.*" + re.escape(where) + r"\s*$", err, re.M):  # <command line>:L:C too
            problems.append(f"the rendered error does not point at {where}")
    for message in case.messages:
        if message not in err:
            problems.append(f"{message!r} not in the rendered error")
    if error is not None:  # errors raised by argparse have no error object, only their text
        problems += _class_problems(error, case.error, case.location)
    if _durable_charges(db):
        problems.append("the durable ledger records charges")
    return problems


@pytest.mark.parametrize("case", _command_params())
def test_bad_command(case: CommandCase, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch,
                     private_ledger: str) -> None:
    probe = _Probe(monkeypatch)
    monkeypatch.chdir(BAD)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # the REPL, if a case reaches it, reads nothing
    before = _listing()
    capsys.readouterr()
    code = jostle.cli.main(list(case.argv))
    out, err = capsys.readouterr()
    error = probe.errors[-1] if probe.errors else None
    problems = _command_problems(case, code, out, err, error, private_ledger)
    problems += _listing_problems(before, _listing())
    assert not problems, f"{case.name}:\n - " + "\n - ".join(problems) + f"\n--- stderr ---\n{err}"


# ---------------------------------------------------------------- in a fresh process
def _subprocess_sample() -> tuple[list[Path], list[CommandCase]]:
    """The first program of each error class, and the first command line of each class no program
    covers (or every case with JOSTLE_BAD_INPUTS_ALL=1); known bugs are left to the in-process tests."""
    every = os.environ.get("JOSTLE_BAD_INPUTS_ALL") == "1"
    programs: dict[str, Path] = {}
    for path in _program_paths():
        if _rel(path) not in KNOWN_BUGS:
            programs.setdefault(_rel(path) if every else parse_expectations(path).error, path)
    commands: dict[str, CommandCase] = {}
    for case in _command_cases():
        if f"commands/{case.name}" not in KNOWN_BUGS and (every or case.error not in programs):
            commands.setdefault(case.name if every else case.error, case)
    return sorted(programs.values()), list(commands.values())


def test_sample_through_the_real_cli(tmp_path: Path) -> None:
    """`python -m jostle` in fresh processes: no traceback, the class's exit code and place,
    no budget spent (each run has its own durable ledger), no files left behind."""
    programs, commands = _subprocess_sample()
    jobs = [(_rel(p), p.parent, ["run", p.name, *parse_expectations(p).options]) for p in programs]
    jobs += [(f"commands/{c.name}", BAD, c.argv) for c in commands]
    before = _listing()

    def run(job: tuple[str, Path, list[str]]) -> tuple[str, str, subprocess.CompletedProcess]:
        name, cwd, argv = job
        db = str(tmp_path / (name.replace("/", "_") + ".sqlite"))
        result = subprocess.run([sys.executable, "-m", "jostle", *argv], cwd=cwd, capture_output=True,
                                text=True, timeout=120, env={**os.environ, "JOSTLE_LEDGER": db})
        return name, db, result

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run, jobs))
    failures = []
    by_name = {c.name: c for c in commands}
    for (name, db, result), path in zip(results, programs + [None] * len(commands)):
        if path is not None:
            expect = parse_expectations(path)
            problems = _check_run(path, expect, result.returncode, result.stdout, result.stderr)
            problems += _ledger_problems(expect, [], db)
        else:
            case = by_name[name.removeprefix("commands/")]
            problems = _command_problems(case, result.returncode, result.stdout, result.stderr, None, db)
        if problems:
            failures.append(f"{name}:\n - " + "\n - ".join(problems) + f"\n--- stderr ---\n{result.stderr}")
    failures += _listing_problems(before, _listing())
    assert not failures, "\n".join(failures)
