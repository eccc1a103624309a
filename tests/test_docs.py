"""Doc tests: every example in docs/language.md (and in the pages of OTHER_DOCS, e.g.
docs/accounting.md) runs, and what it says it prints is checked.

The reference is read as a list of fenced code blocks. What a block is depends on its info
string:

    ```jostle    a program. It runs as the reference tells readers to run one, in the work
                 directory: a fresh `Session(budget=10, seed=..., ledger_path=":memory:")`
                 with its tables bound from the shipped files (`--data patients=patients.csv`;
                 see the options below); it must not fail unless it says so. Expectations, in full-line
                 comments anywhere in the block (usually at its end):
                     # => <line>          one line the program prints on stdout, in order
                                          (`# =>` alone expects an empty line);
                     # error: <Class>     the run must raise this jostle.diagnostics.errors class.
                 A block without expectations must still run without error. Each block runs
                 twice, with two different seeds, and must print the same both times: noisy
                 numbers are never hard-coded, only public results and comparisons whose
                 failure probability the doc states is negligible.
    ```python    Python, exec'd in a fresh namespace, in the work directory; the same `# =>` and
                 `# error:` comments apply (errors: the exception raised out of the block).
                 Run twice, on one durable ledger: a block that forgot to say which ledger it
                 spends on (`ledger_path=":memory:"`) fails its second run, as it would for a
                 reader who runs it again.
    ```console   shell commands (`$ ...`) run with bash in the work directory; the lines after
                 each command are exactly what it prints on stdout (commands that want stderr
                 shown redirect it with 2>&1). The block runs twice, on one durable ledger
                 ($JOSTLE_LEDGER), for the same reason.
    ```repl      a transcript of `jostle repl`: lines after the `jostle> ` / `...     ` prompts
                 are typed into a REPL console; the other lines are exactly what it shows.
    ```text, ```csv, ```json     not run (grammar, output samples, data files).

A block may be preceded by an HTML comment of options, `<!-- key: value; key: value -->`:

    data: patients        bind the private table `patients` from the shipped docs/data/patients.csv
                          (its schema from docs/data/patients.schema.json)
    budget: 1 | none      the session's total budget (default 10; none = no total)
    file: NAME            also save the block's text as NAME in the work directory, where
                          console blocks (and `load`) find it
    xfail: REASON         the example shows the *correct* behaviour of a known bug:
                          pytest.mark.xfail(strict=True), so a fix makes it pass and fail loudly

The work directory holds a copy of every file in docs/data/ (the reference's data, shipped beside
it: patients.csv and patients.schema.json) and every `file:` block; nothing is generated here.
Besides the examples, the tests below check that what the reference says about its data holds
for the shipped file, and that its tables of built-ins, table methods and exit codes agree with
the code.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pytest

import jostle
import jostle.diagnostics.errors
from jostle import Session
from jostle.language.builtins import REGISTRY, TABLE_METHODS
from jostle.cli import EXIT_CODES
from jostle.repl import PS1, PS2, JostleConsole

DOC = Path(__file__).resolve().parents[1] / "docs" / "language.md"
DEFAULT_BUDGET = 10.0
SEEDS = (11, 12)
KNOWN_LANGS = {"jostle", "python", "console", "repl", "text", "csv", "json"}
MIN_EXAMPLES = 40

# ------------------------------------------------------------------ the reference's data
DOC_DATA = DOC.parent / "data"  # shipped beside the docs; readers run the examples on it
TABLES = {"patients": "patients.csv"}  # `data:` names -> files in DOC_DATA (bound as --data NAME=FILE)


# ------------------------------------------------------------------ reading the doc
@dataclass
class Block:
    lang: str
    code: str
    line: int  # 1-based line of the block's first code line in the doc
    options: dict[str, str] = field(default_factory=dict)
    doc: str = "language.md"

    @property
    def id(self) -> str:
        prefix = "" if self.doc == "language.md" else self.doc.removesuffix(".md") + ":"
        return f"{prefix}{self.lang}@L{self.line}"

    @property
    def where(self) -> str:
        return f"docs/{self.doc}:{self.line}"


_OPTIONS = re.compile(r"^<!--\s*(\w+\s*:.*?)\s*-->$")


def _parse_options(text: str) -> dict[str, str]:
    options = {}
    for part in text.split(";"):
        key, _, value = part.partition(":")
        options[key.strip()] = value.strip()
    return options


def parse_doc(text: str, doc: str = "language.md") -> list[Block]:
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
            assert end < len(lines), f"docs/{doc}:{i + 1}: unclosed code block"
            blocks.append(Block(lang, "\n".join(lines[i + 1:end]) + "\n", i + 2, pending, doc))
            pending = {}
            i = end
        elif line.strip():
            pending = {}  # options attach only to the block right after them
        i += 1
    return blocks


DOC_TEXT = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
BLOCKS = parse_doc(DOC_TEXT)
# Other pages whose examples run the same way (their blocks are tested; the checks of the
# reference's own content below read BLOCKS, the reference's).
OTHER_DOCS = ("accounting.md",)
ALL_BLOCKS = BLOCKS + [block for name in OTHER_DOCS
                       for block in parse_doc((DOC.parent / name).read_text(encoding="utf-8"), name)]


def _params(lang: str) -> list:
    params = []
    for block in ALL_BLOCKS:
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
    cls = getattr(jostle.diagnostics.errors, name, None)
    assert isinstance(cls, type) and issubclass(cls, Exception), f"no error class jostle.diagnostics.errors.{name}"
    return cls


# ------------------------------------------------------------------ the work directory
@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("docs")
    for shipped in sorted(DOC_DATA.iterdir()):
        shutil.copyfile(shipped, root / shipped.name)  # byte for byte: the examples read these
    for block in ALL_BLOCKS:
        if "file" in block.options:
            name = block.options["file"]
            assert not (DOC_DATA / name).exists(), f"{block.where}: file: {name} hides shipped data"
            (root / name).write_text(block.code, encoding="utf-8")
    return root


def new_session(block: Block, seed: int, output=None) -> Session:
    """The session `jostle run --budget 10 --ledger-db :memory: --data patients=patients.csv`
    makes, run in the work directory (the reference's way of running an example)."""
    budget = block.options.get("budget", str(DEFAULT_BUDGET))
    session = Session(budget=None if budget == "none" else float(budget), seed=seed, output=output,
                      ledger_path=":memory:")
    for name in filter(None, (n.strip() for n in block.options.get("data", "").split(","))):
        assert name in TABLES, f"unknown table {name!r}: docs/data has {sorted(TABLES)}"
        session.bind_private(name, TABLES[name])  # relative to the work directory, as --data is
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
    where = block.where
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
        f"{block.where}: the output changed with the seed; "
        "print only deterministic values"
    )


@pytest.fixture
def durable_ledger(private_ledger: str) -> str:
    """The durable ledger the python and console examples run on ($JOSTLE_LEDGER, a new file
    for each test, shared by the block's two runs)."""
    assert private_ledger != ":memory:" and os.environ["JOSTLE_LEDGER"] == private_ledger
    return private_ledger


@pytest.mark.parametrize("block", _params("python"))
def test_python_example(block: Block, workdir: Path, monkeypatch, durable_ledger: str) -> None:
    monkeypatch.chdir(workdir)

    def run(out):
        namespace = {"__name__": "__doc_example__"}
        with contextlib.redirect_stdout(out):
            exec(compile(block.code, f"<{block.where}>", "exec"), namespace)

    for attempt in ("", " (run again)"):
        lines, error = _outcome(run)
        try:
            _check(block, lines, error)
        except AssertionError as failure:
            raise AssertionError(f"{failure}{attempt}") from None


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
def test_console_example(block: Block, workdir: Path, tmp_path: Path, durable_ledger: str) -> None:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["JOSTLE_HISTORY"] = str(tmp_path / "history")
    env["PYTHONIOENCODING"] = "utf-8"
    for attempt in ("", " (the block run again)"):
        for command, expected in _console_steps(block.code):
            result = subprocess.run(["bash", "-c", command], cwd=workdir, env=env, capture_output=True,
                                    text=True, timeout=120)
            lines = [line.rstrip() for line in result.stdout.split("\n")]
            if lines and lines[-1] == "":
                lines.pop()
            assert "Traceback" not in result.stderr, result.stderr
            assert lines == expected, (f"{block.where}: `{command}`{attempt} printed:\n"
                                       f"{result.stdout}")


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
    assert lines == expected, f"{block.where}: the REPL showed:\n{out.getvalue()}"


# ------------------------------------------------------------------ the reference's data
def test_the_shipped_data_is_what_the_reference_says() -> None:
    """docs/data/patients.csv is the table the reference describes (rows, columns, counts) and
    its schema file is the one the reference prints."""
    frame = pd.read_csv(DOC_DATA / "patients.csv")
    assert list(frame.columns) == ["age", "sex", "smoker"] and len(frame) == 200
    assert frame["age"].between(0, 100).all() and (frame["age"] % 1 == 0).all()
    assert frame["sex"].value_counts().to_dict() == {"F": 100, "M": 100}
    assert (frame["smoker"] == "yes").sum() == 62 and set(frame["smoker"]) == {"yes", "no"}
    intro = DOC_TEXT[:DOC_TEXT.index("## Differential privacy in one page")]
    assert "It has 200 rows" in intro and "100 rows each" in intro and "62 rows are" in intro
    shown = [b for b in BLOCKS if b.lang == "json" and '"smoker"' in b.code]
    assert len(shown) == 1, "the reference prints the schema file once"
    assert json.loads(shown[0].code) == json.loads((DOC_DATA / "patients.schema.json").read_text())


def test_the_reference_says_how_to_run_its_examples() -> None:
    """The command it gives runs an example on the shipped data, with a ledger in memory."""
    intro = DOC_TEXT[:DOC_TEXT.index("## Differential privacy in one page")]
    assert "docs/data" in intro
    assert "jostle run --budget 10 --ledger-db :memory: --data patients=patients.csv" in intro


# ------------------------------------------------------------------ the doc as a whole
def test_doc_has_enough_tested_examples() -> None:
    tested = [b for b in BLOCKS if b.lang in ("jostle", "python", "console", "repl")]
    assert len(tested) >= MIN_EXAMPLES, f"only {len(tested)} tested examples"
    assert sum(b.lang == "jostle" for b in BLOCKS) >= 30


def test_every_block_has_a_known_kind() -> None:
    unknown = [b.id for b in ALL_BLOCKS if b.lang not in KNOWN_LANGS]
    assert not unknown, f"code blocks with an unknown info string (they would not be tested): {unknown}"


def test_options_are_known() -> None:
    for block in ALL_BLOCKS:
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
        name: cls for name, cls in vars(jostle.diagnostics.errors).items()
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
