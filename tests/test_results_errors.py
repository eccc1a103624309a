"""Issue 28: Python sees a short JostleError (message, location, hint), not internal frames.

`jostle.Session` raises a user's error from its boundary (jostle.diagnostics.boundary): the
traceback shows the caller's line and one frame of the boundary, the error keeps its message,
location and hint, and JOSTLE_TRACEBACK=1 gives the old, full traceback back (no internal frame
is kept otherwise, not even as text: the route a run took inside is not the author's to see).
"""

from __future__ import annotations

import traceback
import types

import pandas as pd
import pytest

import jostle
from jostle import Session
from jostle.diagnostics.boundary import TRACEBACK_VARIABLE


@pytest.fixture()
def session():
    s = Session(budget=1.0, ledger_path=":memory:", seed=3)
    s.bind_private("t", pd.DataFrame({"a": [1, 2, 3]}), {"a": ("numeric", 0, 5)})
    yield s
    s.close()


def _frames(error: BaseException) -> list[traceback.FrameSummary]:
    return traceback.extract_tb(error.__traceback__)


def test_run_error_has_two_frames_and_keeps_message_location_hint(session, monkeypatch):
    monkeypatch.delenv(TRACEBACK_VARIABLE, raising=False)
    with pytest.raises(jostle.PrivacyError) as caught:
        session.run("x = 1\nprint(count(t))")
    error = caught.value
    files = [frame.filename for frame in _frames(error)]
    # this test's line and the boundary's one frame; nothing of the interpreter
    assert len(files) == 2, files
    assert files[0] == __file__ and files[1].endswith("boundary.py")
    assert error.__context__ is None and error.__cause__ is None and error.__suppress_context__
    assert error.span.line == 2 and "cannot be printed" in error.message and error.hint
    assert str(error).startswith("<string>:2:7: a private value cannot be printed (hint: ")
    assert not hasattr(error, "internal_traceback")


def test_the_frames_left_hold_nothing_of_the_session(session, monkeypatch):
    monkeypatch.delenv(TRACEBACK_VARIABLE, raising=False)
    with pytest.raises(jostle.JostleError) as caught:
        session.eval("count(t)")
    tb = caught.value.__traceback__
    boundary = tb.tb_next.tb_frame  # the caller's frame is the test's own
    assert tb.tb_next.tb_next is None
    held = [value for value in boundary.f_locals.values() if not isinstance(value, (types.FunctionType,))]
    assert all(value is not session for value in held)
    assert not any(type(value).__name__ in ("Interpreter", "Randomness", "Session") for value in held)


def test_nested_boundaries_leave_one_frame(tmp_path, session, monkeypatch):
    monkeypatch.delenv(TRACEBACK_VARIABLE, raising=False)
    program = tmp_path / "p.jst"
    program.write_text("y = 2\nz = undefined_name_here + 1\n")
    with pytest.raises(jostle.CheckError) as caught:
        session.run_file(program)  # run_file calls run: two boundaries
    assert len(_frames(caught.value)) == 2 and caught.value.span.line == 2


def test_env_variable_gives_full_traceback(session, monkeypatch):
    monkeypatch.setenv(TRACEBACK_VARIABLE, "1")
    with pytest.raises(jostle.PrivacyError) as caught:
        session.run("print(count(t))")
    files = [frame.filename for frame in _frames(caught.value)]
    assert any(f.endswith("evaluator.py") for f in files) and len(files) > 4


def test_usage_errors_from_the_constructor_and_binding_are_short(monkeypatch):
    monkeypatch.delenv(TRACEBACK_VARIABLE, raising=False)
    with pytest.raises(jostle.UsageError) as caught:
        Session(budget=-1, ledger_path=":memory:")
    assert len(_frames(caught.value)) == 2
    with Session(budget=1, ledger_path=":memory:") as s, pytest.raises(jostle.UsageError) as caught:
        s.bind_private("not a name", pd.DataFrame({"a": [1]}), {"a": ("numeric", 0, 1)})
    assert len(_frames(caught.value)) == 2


def test_errors_are_named_by_the_package():
    assert jostle.PrivacyError.__module__ == "jostle"
    assert jostle.BudgetExceeded.__module__ == "jostle"
    line = traceback.format_exception_only(jostle.PrivacyError("no"))[-1]
    assert line.startswith("jostle.PrivacyError: no")


def test_an_internal_bug_is_not_shortened(session, monkeypatch):
    """Only a user's error is shortened: anything else is a bug and keeps its frames."""
    monkeypatch.delenv(TRACEBACK_VARIABLE, raising=False)

    def broken(*args, **kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr(session.interpreter, "run_program", broken)
    with pytest.raises(RuntimeError) as caught:
        session.run("x = 1")
    assert _frames(caught.value)[-1].name == "broken"
