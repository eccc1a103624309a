"""The on-disk cache of the parser's LALR tables (jostle.language.parser_cache).

A cached parser must parse exactly as a freshly built one (same trees, same spans, same syntax
errors); a file that is damaged, stale or for another grammar must be ignored and replaced; an
unwritable cache must only cost speed.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jostle.diagnostics.errors import JostleSyntaxError
from jostle.diagnostics.source import Source, Span
from jostle.language import parser as P
from jostle.language import parser_cache as C

ROOT = Path(__file__).resolve().parent.parent

# Programs and broken programs: every .jst in the repository and a set of syntax errors that
# exercise lark's expected-token sets, the indenter and the bracket scanner.
BROKEN = [
    "x = \n", "if x:\n  y\n    z\n", "if x:\n    y\n  z\n", "\tx = 1\n", "'abc\n", "a = [1,\n2\n", "def f(:\n",
    "print(1))\n", "x = {a: 1,, b: 2}\n", "with budget:\n    pass\n", "for in x:\n    pass\n",
    "lambda: \n", "x = 1 +\n", "(" * 400 + ")" * 400, "option o(h, w, eps):\n    answer\n",
    "x = choicemaker among\n", "import\n", "private t: \n", "1 = x\n", "x.y = 2\n",
]


def corpus() -> list[str]:
    texts = [path.read_text(encoding="utf-8", errors="replace") for path in sorted(ROOT.glob("**/*.jst"))
             if ".git" not in path.parts]
    return texts + BROKEN


def dump(value):
    """A comparable form of an AST or an error (spans by position; sources by name)."""
    if isinstance(value, Span):
        return ("Span", value.line, value.column, value.end_line, value.end_column)
    if isinstance(value, Source):
        return ("Source", value.name)
    if dataclasses.is_dataclass(value):
        return (type(value).__name__, *((f.name, dump(getattr(value, f.name))) for f in dataclasses.fields(value)))
    if isinstance(value, (list, tuple)):
        return tuple(dump(v) for v in value)
    return value


def parse_all(texts: list[str]) -> list:
    out = []
    for text in texts:
        try:
            out.append(("ok", dump(P.parse(text))))
        except JostleSyntaxError as error:
            out.append(("error", str(error), dump(error.span), error.hint))
    return out


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh, empty cache folder, and a parser rebuilt for this test (and for the next one)."""
    monkeypatch.setenv("JOSTLE_CACHE", str(tmp_path / "cache"))
    P._parser.cache_clear()
    yield tmp_path / "cache" / "parser"
    P._parser.cache_clear()


def fresh_and_cached(texts: list[str]) -> tuple[list, list]:
    P._parser.cache_clear()
    fresh = parse_all(texts)
    P._parser.cache_clear()
    cached = parse_all(texts)
    return fresh, cached


def test_cached_parser_parses_like_a_fresh_one(cache):
    texts = corpus()
    P._parser.cache_clear()
    built = P._parser()
    assert built.source_path != "<deserialized>"  # built from the grammar, and stored
    fresh = parse_all(texts)
    assert len(list(cache.glob("*.marshal"))) == 1
    P._parser.cache_clear()
    loaded = P._parser()
    assert loaded is not built and loaded.source_path == "<deserialized>"  # lark's mark of a loaded parser
    cached = parse_all(texts)
    assert len(texts) > 40
    assert sum(1 for r in fresh if r[0] == "ok") > 10 and sum(1 for r in fresh if r[0] == "error") >= len(BROKEN) - 2
    assert cached == fresh


@pytest.mark.parametrize("damage", ["truncated", "flipped byte", "other grammar", "empty", "garbage"])
def test_a_damaged_or_foreign_file_is_ignored_and_replaced(cache, damage):
    P._parser()  # builds and stores
    [path] = cache.glob("*.marshal")
    good = path.read_bytes()
    header, _, payload = good.partition(b"\n")
    if damage == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif damage == "flipped byte":
        middle = len(header) + 1 + len(payload) // 2
        path.write_bytes(good[:middle] + bytes([good[middle] ^ 0xFF]) + good[middle + 1:])
    elif damage == "other grammar":  # a self-consistent file under another key: not ours
        other = C.cache_key("start: \"x\"", {"parser": "lalr"}, {})
        path.write_bytes(C._header(other, payload) + payload)
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        path.write_bytes(os.urandom(4096))
    damaged = path.read_bytes()
    P._parser.cache_clear()
    parser = P._parser()
    assert parser.source_path != "<deserialized>"  # rebuilt from the grammar
    assert path.read_bytes() != damaged  # and the file replaced by a good one:
    P._parser.cache_clear()
    assert P._parser().source_path == "<deserialized>"
    assert dump(P.parse("x = 1\nprint(x)\n")) == dump(P.parse("x = 1\nprint(x)\n"))
    with pytest.raises(JostleSyntaxError):
        P.parse("x = \n")


def test_the_key_covers_grammar_options_postlex_and_versions():
    grammar = 'start: "x"\n'
    base = C.cache_key(grammar, {"parser": "lalr"}, {"postlex": None})
    assert C.cache_key(grammar + " ", {"parser": "lalr"}, {"postlex": None}) != base
    assert C.cache_key(grammar, {"parser": "lalr", "maybe_placeholders": True}, {"postlex": None}) != base
    assert C.cache_key(grammar, {"parser": "lalr"}, {"postlex": P._JostleIndenter()}) != base
    assert C.cache_key(grammar, {"parser": "lalr"}, {"postlex": None}) == base  # deterministic


def test_an_unwritable_cache_only_costs_speed(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would go")
    monkeypatch.setenv("JOSTLE_CACHE", str(blocker))
    P._parser.cache_clear()
    try:
        texts = ["x = 1\nprint(x + 1)\n", "if x:\n  y\n    z\n"]
        assert parse_all(texts) == parse_all(texts)
        assert P._parser().source_path != "<deserialized>"
        assert P.parse("print(1)\n").body
    finally:
        P._parser.cache_clear()


def test_no_temporary_files_are_left(cache):
    P._parser()
    assert sorted(p.name.startswith(".tmp-") for p in cache.iterdir()) == [False]


def test_processes_starting_together_agree(tmp_path):
    """Four processes racing on an empty cache: all parse, and one good file remains."""
    env = dict(os.environ, JOSTLE_CACHE=str(tmp_path / "cache"))
    code = "from jostle.language.parser import parse; print(len(parse('x = 1\\nprint(x)\\n').body))"
    processes = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=env, cwd=ROOT) for _ in range(4)]
    outputs = [p.communicate(timeout=300) for p in processes]
    assert [p.returncode for p in processes] == [0] * 4, outputs
    assert [out.strip() for out, _ in outputs] == ["2"] * 4
    files = list((tmp_path / "cache" / "parser").iterdir())
    assert len(files) == 1 and files[0].suffix == C.SUFFIX
    header, _, payload = files[0].read_bytes().partition(b"\n")
    assert header.startswith(C.FORMAT.encode()) and payload
