"""Issue 28, the user's small stops: an empty block body says so, and a numeric column compared
with a string says the column is numeric and how to write the comparison, from the program and
the public schema alone (the same error whatever the rows hold, on every engine)."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from jostle.diagnostics.errors import JostleRuntimeError, JostleSyntaxError
from jostle.language.parser import parse
from jostle.session import Session

SCHEMA = {"age": {"type": "numeric", "bounds": [0, 100]},
          "sex": {"type": "categorical", "values": ["F", "M"]}}


def _syntax_error(text: str) -> JostleSyntaxError:
    with pytest.raises(JostleSyntaxError) as caught:
        parse(text, "<t>")
    return caught.value


@pytest.mark.parametrize("text, header, line", [
    ("def f(x):\nprint(1)\n", "def f(x):", 2),
    ("x = 1\ndef f(x):\n\n    # a comment is no body\nprint(2)\n", "def f(x):", 5),
    ("def f(x):\n  def g(y):\n  return 1\n", "def g(y):", 3),
    ("for i in range(3):\nprint(i)\n", "for i in range(3):", 2),
    ("with budget 1:\nprint(1)", "with budget 1:", 2),
])
def test_an_empty_body_is_named(text: str, header: str, line: int) -> None:
    error = _syntax_error(text)
    assert error.message.startswith(f"the body of `{header}` is empty")
    assert "pass" in error.hint and "indent" in error.hint
    assert error.span.line == line
    assert any("starts here" in note for note, _ in error.notes)


def test_an_empty_body_at_the_end_of_the_input() -> None:
    error = _syntax_error("def f(x):\n")
    assert error.message == "the body of `def f(x):` is empty: the input ends after it"
    assert error.span.line == 1


def test_other_syntax_errors_keep_their_hints() -> None:
    assert "':'" in _syntax_error("def f(x)\n    return x\n").hint
    indented = _syntax_error("def f(x):\n    y = 1\n        z = 2\n")
    assert "indented more" in (indented.hint or "")


def _session(frame: pd.DataFrame, engine: str = "auto") -> tuple[Session, io.StringIO]:
    output = io.StringIO()
    session = Session(budget=5, seed=1, ledger_path=":memory:", output=output, engine=engine)
    session.bind_private("people", frame, SCHEMA)
    return session, output


FRAMES = [pd.DataFrame({"age": [30, 40, 50], "sex": ["F", "M", "F"]}),
          pd.DataFrame({"age": [99], "sex": ["M"]}),
          pd.DataFrame({"age": pd.Series([], dtype=float), "sex": pd.Series([], dtype=object)})]


@pytest.mark.parametrize("engine", ["auto", "duckdb"])
def test_a_numeric_column_against_a_string_names_the_fix(engine: str) -> None:
    program = 'n = count(people.where(lambda r: r.age > "30"))'
    errors = []
    for frame in FRAMES:  # neighbouring and far-apart tables, even an empty one: one error
        session, _ = _session(frame, engine)
        with pytest.raises(JostleRuntimeError) as caught:
            session.run(program, "prog.jst")
        errors.append(caught.value.render())
        assert session.ledger.spent.epsilon == 0
    assert len(set(errors)) == 1
    error = caught.value
    assert error.message == "column 'age' is numeric and '30' is a string: '>' cannot compare them"
    assert error.hint == "compare with a number: `r.age > 30`"
    assert (error.span.line, error.span.column) == (1, 34)


def test_the_string_on_the_left_and_not_a_number() -> None:
    session, _ = _session(FRAMES[0])
    with pytest.raises(JostleRuntimeError) as caught:
        session.run('n = count(people.where(lambda r: "x" <= r.age))')
    assert "column 'age' is numeric" in caught.value.message
    assert caught.value.hint == "compare with a number, e.g. `0 <= r.age`"
    with pytest.raises(JostleRuntimeError) as caught:
        session.run("n = count(people.where(lambda r: r.sex > 3))")
    assert "column 'sex' holds text" in caught.value.message


def test_equality_with_a_string_is_warned_about_from_the_schema() -> None:
    texts = set()
    for frame in FRAMES:
        session, _ = _session(frame)
        session.run('n = count(people.where(lambda r: r.age == "40"))')
        texts.add(tuple(w.render() for w in session.interpreter.warnings))
    assert len(texts) == 1
    (warnings,) = texts
    assert len(warnings) == 1
    assert "column 'age' is numeric and '40' is a string: the comparison is false on every row" in warnings[0]
    assert "`r.age == 40`" in warnings[0]


def test_a_number_compared_with_a_number_still_runs() -> None:
    session, output = _session(FRAMES[0])
    session.run("n = count(people.where(lambda r: r.age > 35))\nprint(\"ran\")")
    assert output.getvalue() == "ran\n"
    assert session.interpreter.warnings == []
