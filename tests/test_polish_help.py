"""Issue 28: `help()` lists the built-ins by kind from the registry's docs, `help(name)` shows
one, in a program, in Python and at the REPL."""

from __future__ import annotations

import io

import pytest

from jostle.diagnostics.errors import JostleRuntimeError, PrivacyError
from jostle.language.builtin_help import KIND_TITLES
from jostle.language.builtins import REGISTRY
from jostle.session import Session


def _run(code: str) -> str:
    output = io.StringIO()
    Session(ledger_path=":memory:", output=output).run(code)
    return output.getvalue()


def test_help_lists_every_builtin_under_its_kind() -> None:
    from jostle.language.values import Builtin

    text = _run("help()")
    sections: dict[str, list[str]] = {}
    kind = None
    for line in text.split("Learners and Options", 1)[0].splitlines():
        if line.endswith("):") and not line.startswith(" "):
            kind = line.rsplit("(", 1)[1][:-2]
            continue
        if not line.strip():
            kind = None
        elif line.startswith("  ") and kind is not None:
            sections.setdefault(kind, []).append(line.strip())
    builtins = {name: b for name, b in REGISTRY.items() if isinstance(b, Builtin)}
    assert set(sections) == {b.privacy for b in builtins.values()}
    assert set(sections) <= set(KIND_TITLES)
    for name, value in builtins.items():
        assert (value.doc or f"{name}(...)") in sections[value.privacy], name
    assert sum(len(lines) for lines in sections.values()) == len(builtins)
    others = [name for name in REGISTRY if name not in builtins]
    listed = text.split("Learners and Options", 1)[1]
    for name in others:
        assert f" {name}," in listed or f" {name}\n" in listed, name


def test_help_of_one_builtin_by_value_name_or_method() -> None:
    by_value = _run("help(count)")
    assert by_value.splitlines()[0] == REGISTRY["count"].doc
    assert "kind: Aggregates (aggregate)" in by_value
    assert _run('help("count")') == by_value
    where = _run('t = load_public("x.csv") if false else none\nhelp("where")')
    assert where.splitlines()[0] == REGISTRY["where"].doc
    assert "takes 1 argument; keywords: default=" in _run("help(categorical)")
    option = next(name for name, value in REGISTRY.items() if type(value).__name__ == "TreeOptionValue")
    assert _run(f"help({option})").startswith(f"{option}: a learner or Option (kind: choice). A tree learner")


def test_help_of_a_defined_function_and_unknown_names() -> None:
    assert _run("def f(a, b):\n    return a\nhelp(f)") == "the function f(a, b), defined in this program at <string>:1:1\n"
    with pytest.raises(JostleRuntimeError) as caught:
        _run('help("cuont")')
    assert caught.value.message == "there is no built-in named 'cuont'"
    assert "'count'" in caught.value.hint
    with pytest.raises(JostleRuntimeError):
        _run("help(3)")


def test_help_refuses_a_private_value() -> None:
    import pandas as pd

    session = Session(budget=1, ledger_path=":memory:", output=io.StringIO())
    session.bind_private("t", pd.DataFrame({"a": [1, 2]}), {"a": {"type": "numeric", "bounds": [0, 5]}})
    with pytest.raises(PrivacyError):
        session.run("help(count(t))")


def test_help_at_the_repl(capsys: pytest.CaptureFixture[str]) -> None:
    from jostle.repl import HELP, JostleConsole

    console = JostleConsole(Session(ledger_path=":memory:"))
    console.push("help(laplace)")
    out = capsys.readouterr().out
    assert out.startswith(REGISTRY["laplace"].doc)
    assert "help()" in HELP
