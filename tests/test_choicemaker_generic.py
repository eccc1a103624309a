"""The engine and the language know no family: no family's name, Option name or metafeature name
appears as a string literal in `jostle/choicemaker/` or `jostle/language/`.

Every discovered family is checked, so a new family's names are checked by existing. Docstrings
and comments may name families (they explain); code may not branch on them. The one exception
is a name that is also a word of the language itself: the budget keywords (`epsilon=`, `rho=`),
which the public `epsilon` metafeature (the call's budget) shares.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import jostle
from jostle.choicemaker import families
from jostle.language.calls import BUDGET_KEYWORDS

PACKAGE = Path(jostle.__file__).resolve().parent
GENERIC_FOLDERS = ("choicemaker", "language")


def family_words() -> dict[str, str]:
    """Name -> what it is, for every discovered family, its Options and its metafeatures."""
    words: dict[str, str] = {}
    for family in families.discover().values():
        words[family.name] = f"the name of the {family.name} family"
        for name in family.options():
            words.setdefault(name, f"an Option of the {family.name} family")
        for name in family.metafeatures():
            words.setdefault(name, f"a metafeature of the {family.name} family")
    for keyword in BUDGET_KEYWORDS:  # words of the language itself (see the module docstring)
        words.pop(keyword, None)
    return words


def _docstring_nodes(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


def literals_naming(source: str, words: dict[str, str]) -> list[tuple[int, str, str]]:
    """(line, literal, what it names) for every string literal of `source` (docstrings aside)
    that is a name in `words`, or, for family and Option names, contains one as a word."""
    tree = ast.parse(source)
    docstrings = _docstring_nodes(tree)
    strict = {w for w, what in words.items() if "metafeature" not in what}
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in docstrings:
            continue
        text = node.value
        if text in words:
            found.append((node.lineno, text, words[text]))
            continue
        for word in strict:
            if re.search(rf"(?<![\w.]){re.escape(word)}(?![\w(])", text):
                found.append((node.lineno, text, words[word]))
    return found


def generic_modules() -> list[Path]:
    return sorted(p for folder in GENERIC_FOLDERS for p in (PACKAGE / folder).rglob("*.py"))


def test_every_family_has_names_to_check():
    words = family_words()
    for family in families.discover().values():
        assert family.name in words
        assert any(name in words for name in family.options()), family.name


@pytest.mark.parametrize("path", generic_modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_family_name_in_the_engine_or_the_language(path):
    found = literals_naming(path.read_text(), family_words())
    assert not found, "\n".join(f"{path.name}:{line}: {text!r} is {what}" for line, text, what in found)


def test_the_check_finds_a_planted_name():
    """Negative control: the check is not vacuous."""
    words = family_words()
    family = next(iter(families.discover().values()))
    option = next(iter(family.options()))
    metafeature = next(name for name in family.metafeatures() if name not in BUDGET_KEYWORDS)
    planted = (f'"""A docstring may say {family.name}."""\n'
               f'if family.name == "{family.name}":\n    pass\n'
               f'hint = "use {option} instead"\n'
               f'value = context["{metafeature}"]\n')
    found = literals_naming(planted, words)
    assert sorted(line for line, *_ in found) == [2, 4, 5]
