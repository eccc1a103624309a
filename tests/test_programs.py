"""Golden-program tests: every `tests/programs/**/*.jst` runs through the `jostle` CLI.

Each program states what it must do in comments (full-line comments only):

    # run: --budget 1 --seed 3 --data t=../data/people.csv
        command-line options (optional); the program runs with its own folder as the working
        directory, so data paths are relative to the program's folder.
    # expect: <text>
        one per line printed on stdout, in order; the printed lines must equal them exactly.
        (`# expect:` with nothing after it expects an empty line.)
    # expect error: <ErrorClass> at <line>:<col>
        the run must fail with that jostle.diagnostics.errors class, located there. `at NAME.jst:<line>:<col>`
        also checks the file (for errors inside imported modules); `at -` means the error is
        about no place in the program (e.g. a bad --data binding) and has no location.
    # expect message: <substring>
        must appear in the rendered error (optional, repeatable).
    # expect ledger: <n> charges, epsilon <e>
        after the run, the session's ledger holds n charges and the spent epsilon is e (+-1e-9).

A program with no expectation at all fails: nothing here is vacuous.

Besides the stated expectations, every run is checked for:
  * no Python traceback on stderr, and the process exit code of the error class (0 on success);
  * for a failing program, no budget spent by the failing release or statement: the ledger's
    length when the innermost failing release (`{{ }}`, laplace, ...) began equals its length
    when the error left it, and the same for the innermost failing simple statement (or `if`).

Output of noisy releases is never hard-coded; programs print only public computations, exact
releases of public data, or conditions on noisy values whose failure probability under the
stated noise is astronomically small (each such program says how small).

Programs in KNOWN_BUGS show a defect of the language: they hold the *correct* expectation and
are marked xfail(strict=True), so fixing the bug makes them pass and reminds us to remove them.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import jostle.cli
import jostle.diagnostics.errors
import jostle.session
from jostle.diagnostics.errors import JostleError

PROGRAMS = Path(__file__).parent / "programs"

# Programs that show a bug in Jostle. Each holds the correct expectation; the comment says
# what goes wrong today. Remove an entry once its bug is fixed (strict xfail will insist).
KNOWN_BUGS: set[str] = set()


# ---------------------------------------------------------------- expectations
_RUN = re.compile(r"^\s*#\s*run:(.*)$")
_OUT = re.compile(r"^\s*#\s*expect: ?(.*)$")
_ERROR = re.compile(r"^\s*#\s*expect error:\s*(\w+)\s+at\s+(-|(?:(\S+):)?(\d+):(\d+))\s*$")
_MESSAGE = re.compile(r"^\s*#\s*expect message:\s?(.*)$")
_LEDGER = re.compile(r"^\s*#\s*expect ledger:\s*(\d+)\s+charges?,\s*epsilon\s+(\S+)\s*$")
_ANY_EXPECT = re.compile(r"^\s*#\s*(expect|run)\b")


@dataclass
class Expectations:
    options: list[str] = field(default_factory=list)
    output: list[str] = field(default_factory=list)
    error: str | None = None  # class name
    error_file: str | None = None
    location: tuple[int, int] | None = None  # None with error set: no location ("at -")
    messages: list[str] = field(default_factory=list)
    ledger: tuple[int, float] | None = None

    @property
    def empty(self) -> bool:
        return not (self.output or self.error or self.ledger)


def parse_expectations(path: Path) -> Expectations:
    expect = Expectations()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if m := _RUN.match(line):
            expect.options += shlex.split(m.group(1))
        elif m := _ERROR.match(line):
            assert expect.error is None, f"{path.name}:{number}: two `# expect error` lines"
            expect.error = m.group(1)
            if m.group(2) != "-":
                expect.error_file = m.group(3)
                expect.location = (int(m.group(4)), int(m.group(5)))
        elif m := _MESSAGE.match(line):
            expect.messages.append(m.group(1).rstrip())
        elif m := _LEDGER.match(line):
            expect.ledger = (int(m.group(1)), float(m.group(2)))
        elif m := _OUT.match(line):
            expect.output.append(m.group(1))
        elif _ANY_EXPECT.match(line):
            raise AssertionError(f"{path.name}:{number}: malformed expectation: {line.strip()}")
    if expect.error is not None:
        assert hasattr(jostle.diagnostics.errors, expect.error), f"{path.name}: unknown error class {expect.error}"
    return expect


def _program_paths() -> list[Path]:
    return sorted(PROGRAMS.rglob("*.jst"))


def _rel(path: Path) -> str:
    return path.relative_to(PROGRAMS).as_posix()


def _params(paths: list[Path]) -> list:
    params = []
    for path in paths:
        rel = _rel(path)
        marks = [pytest.mark.xfail(strict=True, reason="known Jostle bug")] if rel in KNOWN_BUGS else []
        params.append(pytest.param(path, id=rel, marks=marks))
    return params


def test_known_bugs_exist() -> None:
    names = {_rel(p) for p in _program_paths()}
    assert KNOWN_BUGS <= names, f"KNOWN_BUGS lists missing programs: {sorted(KNOWN_BUGS - names)}"


def test_enough_programs() -> None:
    assert len(_program_paths()) >= 80


# ---------------------------------------------------------------- instrumentation
class _Probe:
    """Hooks into the CLI run: the session it made, the error it reported, and the ledger's
    length around the innermost failing release and statement."""

    NO_STATEMENT_CHECK = {"While", "For", "WithBudget"}  # their errors may follow a run of the body

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from jostle.language.evaluator import Interpreter
        from jostle.language.values import Builtin

        self.sessions: list[jostle.session.Session] = []
        self.errors: list[BaseException] = []
        probe = self

        original_init = jostle.session.Session.__init__

        def init(session, *args, **kwargs):
            original_init(session, *args, **kwargs)
            probe.sessions.append(session)

        monkeypatch.setattr(jostle.session.Session, "__init__", init)

        original_report = jostle.cli._report

        def report(error):
            probe.errors.append(error)
            return original_report(error)

        monkeypatch.setattr(jostle.cli, "_report", report)

        def ledger_length(interp) -> int:
            return len(interp.accountant.ledger)

        original_exec = Interpreter.exec

        def exec_(interp, stmt, env):
            before = ledger_length(interp)
            try:
                return original_exec(interp, stmt, env)
            except Exception as error:
                if not hasattr(error, "_golden_statement"):
                    kind = type(stmt).__name__
                    _tag(error, "_golden_statement", None if kind in probe.NO_STATEMENT_CHECK
                         else (kind, stmt.span.short, before, ledger_length(interp)))
                raise

        monkeypatch.setattr(Interpreter, "exec", exec_)

        original_release = Interpreter._eval_Release

        def release(interp, expr, env):
            before = ledger_length(interp)
            try:
                return original_release(interp, expr, env)
            except Exception as error:
                if not hasattr(error, "_golden_release"):
                    _tag(error, "_golden_release", ("{{ }}", expr.span.short, before, ledger_length(interp)))
                raise

        monkeypatch.setattr(Interpreter, "_eval_Release", release)

        original_call = Interpreter.call

        def call(interp, function, args, span, *rest, **kwargs):
            if not (isinstance(function, Builtin) and function.privacy == "release"):
                return original_call(interp, function, args, span, *rest, **kwargs)
            before = ledger_length(interp)
            try:
                return original_call(interp, function, args, span, *rest, **kwargs)
            except Exception as error:
                if not hasattr(error, "_golden_release"):
                    _tag(error, "_golden_release", (function.name, span.short, before, ledger_length(interp)))
                raise

        monkeypatch.setattr(Interpreter, "call", call)


def _tag(error: BaseException, name: str, value: object) -> None:
    try:
        setattr(error, name, value)
    except (AttributeError, TypeError):  # an exception type that takes no attributes
        pass


def _location(error: JostleError) -> tuple[str, int, int] | None:
    span = error.span
    if span is None or span.line <= 0:
        return None
    return Path(span.source.name).name, span.line, span.column


def _check_run(path: Path, expect: Expectations, code: int, stdout: str, stderr: str) -> list[str]:
    """Problems common to the in-process and the subprocess runs."""
    problems = []
    if "Traceback" in stderr:
        problems.append("a Python traceback on stderr")
    want = getattr(jostle.diagnostics.errors, expect.error).exit_code if expect.error else 0
    if code != want:
        problems.append(f"exit code {code}, expected {want} (stderr ends: {stderr.strip()[-300:]!r})")
    lines = stdout.splitlines()
    if lines != expect.output:
        problems.append(f"stdout lines {lines!r}\n   expected {expect.output!r}")
    if expect.error and expect.location is not None:
        where = f":{expect.location[0]}:{expect.location[1]}"
        if not re.search(r"-->\s+\S*" + re.escape(where) + r"\s*$", stderr, re.M):
            problems.append(f"the rendered error does not point at {where}")
    for message in expect.messages:
        if message not in stderr:
            problems.append(f"{message!r} not in the rendered error")
    return problems


# ---------------------------------------------------------------- the tests
@pytest.mark.parametrize("path", _params(_program_paths()))
def test_program(path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    expect = parse_expectations(path)
    assert not expect.empty, "the program states no expectation (# expect..., see tests/test_programs.py)"
    probe = _Probe(monkeypatch)
    monkeypatch.chdir(path.parent)
    capsys.readouterr()
    code = jostle.cli.main(["run", path.name, *expect.options])
    out, err = capsys.readouterr()
    problems = _check_run(path, expect, code, out, err)

    error = probe.errors[-1] if probe.errors else None
    if expect.error:
        if error is None:
            problems.append(f"expected {expect.error}, but no error was reported")
        else:
            if type(error).__name__ != expect.error:
                problems.append(f"raised {type(error).__name__}: {error}, expected {expect.error}")
            elif isinstance(error, JostleError):
                got = _location(error)
                if expect.location is None:
                    if got is not None:
                        problems.append(f"error located at {got}, expected no location")
                elif got is None:
                    problems.append(f"error has no location, expected {expect.location}")
                else:
                    if got[1:] != expect.location:
                        problems.append(f"error at {got[1]}:{got[2]}, expected "
                                        f"{expect.location[0]}:{expect.location[1]}: {error}")
                    if expect.error_file is not None and got[0] != expect.error_file:
                        problems.append(f"error in file {got[0]}, expected {expect.error_file}")
    elif error is not None:
        problems.append(f"unexpected {type(error).__name__}: {error}")

    if isinstance(error, jostle.diagnostics.errors.BudgetExceeded) and getattr(error, "_golden_release", None) is None:
        problems.append("BudgetExceeded was raised outside any release, so the ledger was not checked")
    if error is not None:
        for tag in ("_golden_release", "_golden_statement"):
            info = getattr(error, tag, None)
            if info is not None and info[2] != info[3]:
                problems.append(f"the failing {info[0]} at {info[1]} spent budget: the ledger grew "
                                f"from {info[2]} to {info[3]} charges")

    if expect.ledger is not None:
        if not probe.sessions:
            problems.append("no session was made, so there is no ledger to check")
        else:
            session = probe.sessions[-1]
            charges, epsilon = len(session.ledger), float(session.spent.epsilon)
            if charges != expect.ledger[0] or abs(epsilon - expect.ledger[1]) > 1e-9:
                problems.append(f"ledger has {charges} charges, epsilon {epsilon!r}; expected "
                                f"{expect.ledger[0]} charges, epsilon {expect.ledger[1]!r}")

    assert not problems, f"{_rel(path)}:\n - " + "\n - ".join(problems) + f"\n--- stderr ---\n{err}"


def _subprocess_sample() -> list[Path]:
    """Error programs for the subprocess check: the first of each (folder, error class), or all
    of them with JOSTLE_GOLDEN_ALL=1. Known-bug programs are left to the in-process test."""
    chosen: dict[tuple[str, str], Path] = {}
    every = os.environ.get("JOSTLE_GOLDEN_ALL") == "1"
    for path in _program_paths():
        if _rel(path) in KNOWN_BUGS:
            continue
        expect = parse_expectations(path)
        if expect.error is None:
            continue
        key = (path.parent.name, expect.error) if not every else (_rel(path), "")
        chosen.setdefault(key, path)
    return sorted(chosen.values())


def test_error_programs_through_the_real_cli() -> None:
    """The installed CLI, in a fresh process: no traceback, the error class's exit code,
    the located diagnostic, and the same stdout as in-process."""
    sample = _subprocess_sample()
    assert sample, "no error programs found"

    def run(path: Path) -> tuple[Path, list[str]]:
        expect = parse_expectations(path)
        result = subprocess.run(
            [sys.executable, "-m", "jostle", "run", path.name, *expect.options],
            cwd=path.parent, capture_output=True, text=True, timeout=120,
        )
        return path, _check_run(path, expect, result.returncode, result.stdout, result.stderr)

    with ThreadPoolExecutor(max_workers=max(2, min(8, os.cpu_count() or 2))) as pool:
        results = list(pool.map(run, sample))
    failures = [f"{_rel(p)}:\n - " + "\n - ".join(problems) for p, problems in results if problems]
    assert not failures, "\n".join(failures)
