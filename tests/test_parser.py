"""The parser: immutable AST with spans, indentation, and located syntax errors."""

from __future__ import annotations

import dataclasses

import pytest

from jostle.language import ast_nodes as A
from jostle.diagnostics.errors import JostleSyntaxError
from jostle.language.parser import parse

PROGRAM = '''\
# a comment
budget 1.0
def f(a, b=2):
    if a > 1 and not b:
        return a
    elif a in [1, 2]:
        return -a ** 2
    else:
        return {{ count(t) }}
        # a comment at an odd indent
for k, v in pairs:
    print(k, {x: {y: 1}})
with budget 0.5, 1e-6:
    y = t.where(lambda r: r.age > 3 and r.x not in [1]).count()
z = f(1, b=3) if x else none
'''


def test_program_structure():
    program = parse(PROGRAM, "p.jst")
    kinds = [type(s).__name__ for s in program.body]
    assert kinds == ["BudgetStmt", "Def", "For", "WithBudget", "Assign"]
    definition = program.body[1]
    assert [p.name for p in definition.params] == ["a", "b"]
    branches = definition.body[0].branches
    assert len(branches) == 2 and definition.body[0].orelse
    assert isinstance(definition.body[0].orelse[0].value, A.Release)
    assert program.body[2].targets == ("k", "v")


def test_nodes_are_immutable_and_carry_spans():
    program = parse(PROGRAM, "p.jst")
    assign = program.body[-1]
    assert (assign.span.line, assign.span.column) == (15, 1)
    assert assign.value.span.location == "p.jst:15:5"
    with pytest.raises(dataclasses.FrozenInstanceError):
        assign.name = "other"  # type: ignore[misc]
    assert isinstance(program.body, tuple)


def test_precedence():
    expr = parse("x = 1 + 2 * 3 ** 2 - -4").body[0].value
    assert expr.op == "-" and expr.left.op == "+" and expr.left.right.op == "*"
    assert expr.left.right.right.op == "**"
    cond = parse("x = not a == b or c and d").body[0].value
    assert cond.op == "or" and isinstance(cond.left, A.UnaryOp) and cond.right.op == "and"


def test_nested_records_close_with_double_brace():
    value = parse("x = {a: {b: 1}}").body[0].value
    assert isinstance(value, A.RecordLit) and isinstance(value.fields[0][1], A.RecordLit)
    release = parse("x = {{ {a: 1}.a }}").body[0].value
    assert isinstance(release, A.Release)


def test_count_releases_skips_nested_functions_and_blocks():
    program = parse("x = {{ a }} + {{ b }}\ndef f():\n    return {{ c }}\nwith budget 1:\n    y = {{ d }}\n")
    assert A.count_releases(program.body) == 2


@pytest.mark.parametrize("source, line, column, hint", [
    ("x = (1 +\n", 1, 9, "not finished"),
    ("if x > 1\n    y = 2\n", 1, 9, "':'"),
    ("x = 1\n    y = 2\n", 2, 5, "indented"),
    ('x = "abc\n', 1, 5, "same line"),
    ("def = 3\n", 1, 5, None),
    ("f(a=1, 2)\n", 1, 8, "positional"),
    ("x = $\n", 1, 5, None),
])
def test_syntax_errors_are_located(source, line, column, hint):
    with pytest.raises(JostleSyntaxError) as caught:
        parse(source, "bad.jst")
    error = caught.value
    assert (error.span.line, error.span.column) == (line, column), error.render()
    if hint:
        assert hint in (error.hint or "")
    assert "bad.jst" in error.render()


def test_empty_and_comment_only_programs_parse():
    assert parse("").body == ()
    assert parse("# nothing\n\n   # still nothing\n").body == ()
