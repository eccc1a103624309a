"""Doc tests: every example in docs/language.md runs, and what it says it prints is checked.

The reference is read as a list of fenced code blocks. What a block is depends on its info
string:

    ```jostle    a program. It runs in a fresh `Session(budget=10, seed=...)` (see the options
                 below); it must not fail unless it says so. Expectations, in full-line
                 comments anywhere in the block (usually at its end):
                     # => <line>          one line the program prints on stdout, in order
                                          (`# =>` alone expects an empty line);
                     # error: <Class>     the run must raise this jostle.errors class.
                 A block without expectations must still run without error. Each block runs
                 twice, with two different seeds, and must print the same both times: noisy
                 numbers are never hard-coded, only public results and comparisons whose
                 failure probability the doc states is negligible.
    ```python    Python, exec'd in a fresh namespace, in the work directory; the same `# =>` and
                 `# error:` comments apply (errors: the exception raised out of the block).
    ```console   shell commands (`$ ...`) run with bash in the work directory; the lines after
                 each command are exactly what it prints on stdout (commands that want stderr
                 shown redirect it with 2>&1).
    ```repl      a transcript of `jostle repl`: lines after the `jostle> ` / `...     ` prompts
                 are typed into a REPL console; the other lines are exactly what it shows.
    ```text, ```csv, ```json     not run (grammar, output samples, data files).

A block may be preceded by an HTML comment of options, `<!-- key: value; key: value -->`:

    data: patients        bind the fixture table `patients` (private, under PATIENT_SCHEMA)
    budget: 1 | none      the session's total budget (default 10; none = no total)
    file: NAME            also save the block's text as NAME in the work directory, where
                          console blocks (and `load`) find it
    xfail: REASON         the example shows the *correct* behaviour of a known bug:
                          pytest.mark.xfail(strict=True), so a fix makes it pass and fail loudly

The work directory holds patients.csv and patients.schema.json (the same fixture table) and
every `file:` block. Besides the examples, the tests below check that the reference's tables
of built-ins, table methods and exit codes agree with the code.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import jostle
import jostle.errors
from jostle import Session
from jostle.builtins import REGISTRY, TABLE_METHODS
from jostle.cli import EXIT_CODES
from jostle.repl import PS1, PS2, JostleConsole

DOC = Path(__file__).resolve().parents[1] / "docs" / "language.md"
DEFAULT_BUDGET = 10.0
SEEDS = (11, 12)
KNOWN_LANGS = {"jostle", "python", "console", "repl", "text", "csv", "json"}
MIN_EXAMPLES = 40

# ------------------------------------------------------------------ the fixture table
PATIENT_SCHEMA = {
    "age": {"type": "numeric", "bounds": [0, 100]},
    "sex": {"type": "categorical", "values": ["F", "M"]},
    "smoker": {"type": "categorical", "values": ["yes", "no"]},
}


def make_patients() -> pd.DataFrame:
    """200 synthetic rows (fixed seed): age 0..100, sex F/M (100 each), smoker yes/no (62 yes)."""
    rng = np.random.default_rng(2024)
    rows = 200
    return pd.DataFrame({
        "age": rng.integers(0, 101, rows),
        "sex": rng.choice(["F", "M"], rows),
        "smoker": rng.choice(["yes", "no"], rows, p=[0.3, 0.7]),
    })


FIXTURES = {"patients": (make_patients, PATIENT_SCHEMA)}


# ------------------------------------------------------------------ reading the doc
@dataclass
class Block:
    lang: str
    code: str
    line: int  # 1-based line of the block's first code line in the doc
    options: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.lang}@L{self.line}"


_OPTIONS = re.compile(r"^<!--\s*(\w+\s*:.*?)\s*-->$")


def _parse_options(text: str) -> dict[str, str]:
    options = {}
    for part in text.split(";"):
        key, _, value = part.partition(":")
        options[key.strip()] = value.strip()
    return options


def parse_doc(text: str) -> list[Block]:
    blocks: list[Block] = []
    lines = text.splitlines()
    pending: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        match = _OPTIONS.match(line.strip())
        if match:
            pending.update(_parse_options(match.group(1)))
        elif line.startswith("```"):
            lang = line[3:].strip()
            end = i + 1
            while end < len(lines) and not lines[end].startswith("```"):
                end += 1
            assert end < len(lines), f"docs/language.md:{i + 1}: unclosed code block"
            blocks.append(Block(lang, "\n".join(lines[i + 1:end]) + "\n", i + 2, pending))
            pending = {}
            i = end
        elif line.strip():
            pending = {}  # options attach only to the block right after them
        i += 1
    return blocks


DOC_TEXT = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
BLOCKS = parse_doc(DOC_TEXT)


def _params(lang: str) -> list:
    params = []
    for block in BLOCKS:
        if block.lang != lang:
            continue
        marks = []
        if "xfail" in block.options:
            marks.append(pytest.mark.xfail(strict=True, reason=block.options["xfail"]))
        params.append(pytest.param(block, id=block.id, marks=marks))
    return params


def expectations(code: str) -> tuple[list[str], str | None]:
    """The `# => line` lines (in order) and the `# error: Class` of a block."""
    lines, error = [], None
    for raw in code.splitlines():
        text = raw.strip()
        if text == "# =>" or text.startswith("# => "):
            lines.append(text[5:])
        elif text.startswith("# error:"):
            assert error is None, "a block expects at most one error"
            error = text[len("# error:"):].strip()
    return lines, error


def error_class(name: str) -> type:
    cls = getattr(jostle.errors, name, None)
    assert isinstance(cls, type) and issubclass(cls, Exception), f"no error class jostle.errors.{name}"
    return cls


# ------------------------------------------------------------------ the work directory
@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("docs")
    make_patients().to_csv(root / "patients.csv", index=False)
    (root / "patients.schema.json").write_text(json.dumps(PATIENT_SCHEMA, indent=2))
    for block in BLOCKS:
        if "file" in block.options:
            (root / block.options["file"]).write_text(block.code, encoding="utf-8")
    return root


def new_session(block: Block, seed: int, output=None) -> Session:
    budget = block.options.get("budget", str(DEFAULT_BUDGET))
    session = Session(budget=None if budget == "none" else float(budget), seed=seed, output=output)
    for name in filter(None, (n.strip() for n in block.options.get("data", "").split(","))):
        assert name in FIXTURES, f"unknown fixture {name!r}"
        make, schema = FIXTURES[name]
        session.bind_private(name, make(), schema)
    return session


def _outcome(run) -> tuple[list[str], BaseException | None]:
    """Run `run(out)`; return the printed lines and the exception raised (if any)."""
    out = io.StringIO()
    error = None
    try:
        run(out)
    except Exception as caught:  # noqa: BLE001 - compared with the block's expectation below
        error = caught
    text = out.getvalue()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines, error


def _check(block: Block, lines: list[str], error: BaseException | None) -> None:
    expected, expected_error = expectations(block.code)
    where = f"docs/language.md:{block.line}"
    if expected_error is None:
        if error is not None:
            message = error.render() if isinstance(error, jostle.JostleError) else repr(error)
            pytest.fail(f"{where}: the example failed:\n{message}")
    else:
        cls = error_class(expected_error)
        assert error is not None, f"{where}: expected {expected_error}, but the example ran"
        assert isinstance(error, cls), f"{where}: expected {expected_error}, got {type(error).__name__}: {error}"
    assert lines == expected, f"{where}: printed lines differ"


# ------------------------------------------------------------------ the examples
@pytest.mark.parametrize("block", _params("jostle"))
def test_jostle_example(block: Block, workdir: Path, monkeypatch) -> None:
    monkeypatch.chdir(workdir)
    results = []
    for seed in SEEDS:
        def run(out, seed=seed):
            new_session(block, seed, output=out).run(block.code)
        results.append(_outcome(run))
    lines, error = results[0]
    _check(block, lines, error)
    assert results[1][0] == lines, (
        f"docs/language.md:{block.line}: the output changed with the seed; "
        "print only deterministic values"
    )


@pytest.mark.parametrize("block", _params("python"))
def test_python_example(block: Block, workdir: Path, monkeypatch) -> None:
    monkeypatch.chdir(workdir)

    def run(out):
        namespace = {"__name__": "__doc_example__"}
        with contextlib.redirect_stdout(out):
            exec(compile(block.code, f"<docs/language.md:{block.line}>", "exec"), namespace)

    _check(block, *_outcome(run))


def _console_steps(code: str) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for line in code.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            assert steps, "a console block starts with a `$ ` command"
            steps[-1][1].append(line.rstrip())
    return steps


@pytest.mark.parametrize("block", _params("console"))
def test_console_example(block: Block, workdir: Path, tmp_path: Path) -> None:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["JOSTLE_HISTORY"] = str(tmp_path / "history")
    env["PYTHONIOENCODING"] = "utf-8"
    for command, expected in _console_steps(block.code):
        result = subprocess.run(["bash", "-c", command], cwd=workdir, env=env, capture_output=True,
                                text=True, timeout=120)
        lines = [line.rstrip() for line in result.stdout.split("\n")]
        if lines and lines[-1] == "":
            lines.pop()
        assert "Traceback" not in result.stderr, result.stderr
        assert lines == expected, f"docs/language.md:{block.line}: `{command}` printed:\n{result.stdout}"


def _repl_transcript(code: str) -> tuple[list[str], list[str]]:
    inputs, shown = [], []
    dots = PS2.rstrip()
    for line in code.splitlines():
        if line.startswith(PS1):
            inputs.append(line[len(PS1):])
        elif line.rstrip() == dots or line.startswith(PS2):
            inputs.append(line[len(PS2):])
        else:
            shown.append(line.rstrip())
    return inputs, shown


@pytest.mark.parametrize("block", _params("repl"))
def test_repl_example(block: Block, workdir: Path, monkeypatch) -> None:
    monkeypatch.chdir(workdir)
    session = new_session(block, SEEDS[0])
    console = JostleConsole(session)
    inputs, expected = _repl_transcript(block.code)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        for line in inputs:
            try:
                console.push(line)
            except SystemExit:
                break
    lines = [line.rstrip() for line in out.getvalue().split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    assert lines == expected, f"docs/language.md:{block.line}: the REPL showed:\n{out.getvalue()}"


# ------------------------------------------------------------------ the doc as a whole
def test_doc_has_enough_tested_examples() -> None:
    tested = [b for b in BLOCKS if b.lang in ("jostle", "python", "console", "repl")]
    assert len(tested) >= MIN_EXAMPLES, f"only {len(tested)} tested examples"
    assert sum(b.lang == "jostle" for b in BLOCKS) >= 30


def test_every_block_has_a_known_kind() -> None:
    unknown = [b.id for b in BLOCKS if b.lang not in KNOWN_LANGS]
    assert not unknown, f"code blocks with an unknown info string (they would not be tested): {unknown}"


def test_options_are_known() -> None:
    for block in BLOCKS:
        assert set(block.options) <= {"data", "budget", "file", "xfail"}, (block.id, block.options)


def _section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", DOC_TEXT, re.S | re.M)
    assert match, f"docs/language.md has no section '## {title}'"
    return match.group(1)


def test_builtin_table_matches_the_registry() -> None:
    """Every built-in is listed once, under the heading of its privacy behaviour."""
    documented: dict[str, str] = {}
    rows: dict[str, str] = {}
    kind = None
    for line in _section("Built-in functions").splitlines():
        heading = re.match(r"^### .*\(`(\w+)`\)", line)
        if heading:
            kind = heading.group(1)
            continue
        row = re.match(r"^\|\s*`(\w+)\(", line)
        if row:
            name = row.group(1)
            assert name not in documented, f"{name} is listed twice"
            assert kind is not None, f"{name} is listed before any group heading"
            documented[name] = kind
            rows[name] = line
    actual = {name: b.privacy for name, b in REGISTRY.items()}
    assert documented == actual
    for name, b in REGISTRY.items():
        for keyword in b.keywords:
            assert f"{keyword}=" in rows[name], f"{name}'s keyword {keyword} is not in its signature"


def test_table_methods_are_documented() -> None:
    used = set(re.findall(r"`t\.(\w+)\(", DOC_TEXT))
    assert set(TABLE_METHODS) <= used, f"undocumented methods: {set(TABLE_METHODS) - used}"
    assert used <= set(TABLE_METHODS), f"documented methods that do not exist: {used - set(TABLE_METHODS)}"


def test_exit_code_table_matches_the_code() -> None:
    table = {}
    for line in _section("Errors").splitlines():
        row = re.match(r"^\|\s*(\d+)\s*\|\s*`(\w+)`", line)
        if row:
            table[row.group(2)] = int(row.group(1))
    error_classes = {
        name: cls for name, cls in vars(jostle.errors).items()
        if isinstance(cls, type) and issubclass(cls, Exception) and hasattr(cls, "exit_code")
        and name != "JostleError"
    }
    assert set(table) == set(error_classes)
    for name, code in table.items():
        assert error_classes[name].exit_code == code, name
    assert set(EXIT_CODES.values()) - {0} <= set(table.values())


def test_repl_commands_are_documented() -> None:
    from jostle.repl import HELP

    for command in re.findall(r"^\s+(:\w+)", HELP, re.M):
        assert f"`{command}`" in DOC_TEXT, command


def test_internal_links_resolve() -> None:
    """Every `[...](#anchor)` names a heading (GitHub's slug rule)."""
    slugs = set()
    in_code = False
    for line in DOC_TEXT.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            slugs.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    links = set(re.findall(r"\]\(#([^)]+)\)", DOC_TEXT))
    assert links, "no internal links found"
    assert links <= slugs, f"links to missing headings: {sorted(links - slugs)}"
