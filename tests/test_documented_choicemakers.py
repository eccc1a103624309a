"""Every ChoiceMaker README.md and docs/ declare ships trained (issue 28).

A reader who copies a declaration from the documentation must get an answer at once, not a
training run of several minutes: each declaration (with a real corpus; `trained on none` needs
no training, and elided ones such as `{A, B, ...}` are not programs) has the request key of a
ChoiceMaker the standard library declares, and tests/test_pretrained.py checks that every
standard ChoiceMaker's shipped model is current.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from jostle.build import standard_choicemakers
from jostle.choicemaker.pretrained import request_key
from jostle.language.choice import ChoiceMaker
from jostle.session import Session

ROOT = Path(__file__).resolve().parents[1]
DECLARATION = re.compile(
    r"choicemaker\s+(?P<name>\w+)\s+among\s*\{(?P<options>[^}]*)\}\s*informed by\s*\{(?P<features>[^}]*)\}"
    r"\s*trained on\s+(?P<corpus>\w+(?:\([^)]*\))?)(?:\s+measured by \"\w+\")?(?:\s+spending [\d.]+ on metafeatures)?")
FUNCTION = re.compile(r"^def (\w+)\(F\):\n(?:    .*\n)+", re.M)


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def documented_declarations() -> list[tuple[str, str]]:
    """(where, a program declaring it) for every trainable ChoiceMaker the documentation declares."""
    found = []
    for path in _documents():
        text = path.read_text()
        flat = re.sub(r"\s+", " ", text.replace("\\\n", " "))
        for match in DECLARATION.finditer(flat):
            if "..." in match.group(0) or match.group("corpus") in ("none", "CORPUS"):
                continue
            statement, corpus = match.group(0), match.group("corpus")
            if re.fullmatch(r"\w+", corpus):  # a corpus variable: the document assigns it
                assigned = re.search(rf"\b{corpus} = (\w+\([^)]*\))", text)
                assert assigned, f"{path.name}: `trained on {corpus}` but the document never assigns {corpus}"
                statement = statement.replace(f"trained on {corpus}", f"trained on {assigned.group(1)}")
            wanted = {f.strip() for f in match.group("features").split(",")}
            helpers = [m.group(0) for m in FUNCTION.finditer(text) if m.group(1) in wanted]
            found.append((f"{path.name}: {match.group('name')}", "\n".join(helpers) + "\n" + statement + "\n"))
    return found


@functools.lru_cache(maxsize=1)
def standard_keys() -> frozenset[str]:
    """The request keys of every ChoiceMaker the standard library declares."""
    keys: set[str] = set()
    for _, maker in standard_choicemakers():
        keys |= _keys(Session(), {"maker": maker})
    return frozenset(keys)


def _keys(session: Session, values: dict) -> set[str]:
    keys = set()
    for value in values.values():
        if isinstance(value, ChoiceMaker) and value.corpus is not None:
            options, features = value.engine_parts()
            grid = value.grid or value.family.default_grid()
            keys.add(request_key(value.family, options, features, value.corpus.corpus, grid, float(value.share)))
    return keys


def test_the_documents_declare_choicemakers() -> None:
    names = [where for where, _ in documented_declarations()]
    assert any(name.startswith("README.md") for name in names) and len(names) >= 4, names


@pytest.mark.parametrize("where,program", documented_declarations(), ids=lambda v: v if ":" in v else "")
def test_documented_choicemaker_is_a_standard_one(where: str, program: str) -> None:
    standard = standard_keys()
    session = Session()
    session.run(program)
    declared = _keys(session, dict(session.interpreter.globals.values.items()))
    assert len(declared) == 1, program
    assert declared <= standard, f"{where} is not shipped: add it to stdlib/documented.jst\n{program}"
