"""The training boundary's scope copy (jostle.language.training_boundary.public_environment)
decides by type once for the types whose values it shares as they are (scalars, built-ins,
stateless built-in options): these tests check that the shortcut withholds every private value
it did before, wherever it sits, and still gives file readers their refusing stand-ins."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.language.scopes import Environment
from jostle.language.training_boundary import FILE_READERS, public_environment
from jostle.language.values import Builtin, Record


@pytest.fixture
def session_scope():
    """A session with a private table, a private count and a public list bound as globals."""
    with Session(budget=1, seed=0, ledger_path=":memory:", dry_run=False) as session:
        session.bind_private("t", pd.DataFrame({"x": [1.0, 2.0, 3.0]}), {"x": ("numeric", 0, 5)})
        session.run("n = count(t)\nhidden = [1, n]\nshown = [1, 2.5, \"a\"]\nr = {a: 1, b: n}\n"
                    "def f(k):\n    return k + 1\n")
        yield session.interpreter.globals


def test_private_values_are_withheld_wherever_they_sit(session_scope):
    copy = public_environment(session_scope)
    withheld = copy.values.withheld
    for name in ("t", "n", "hidden", "r"):
        assert name in withheld, name
        with pytest.raises(Exception):
            copy.lookup(name)
    assert copy.lookup("shown") == (1, 2.5, "a")
    assert copy.lookup("f").name == "f"


def test_builtins_are_shared_and_file_readers_replaced(session_scope):
    copy = public_environment(session_scope)
    original = session_scope.parent.values
    copied = copy.parent.values
    assert copied.keys() == original.keys()
    readers = [name for name, value in original.items() if isinstance(value, Builtin) and value.name in FILE_READERS]
    assert "load" in readers
    for name in readers:
        assert copied[name] is not original[name]  # the refusing stand-in
    shared = [name for name, value in original.items() if isinstance(value, Builtin) and name not in readers]
    assert shared and all(copied[name] is original[name] for name in shared)


def test_numpy_scalars_and_records_of_public_values_are_kept():
    scope = Environment({"a": np.float64(2.0), "b": np.int64(3), "c": Record((("k", 1.0),)), "d": None})
    copy = public_environment(scope)
    assert copy.lookup("a") == 2.0 and copy.lookup("b") == 3 and copy.lookup("d") is None
    assert copy.lookup("c").fields == (("k", 1.0),)
    assert not copy.values.withheld


def test_structured_arrays_holding_objects_are_withheld():
    holding = np.array([(1, object())], dtype=[("a", "i8"), ("b", "O")])
    plain = np.array([(1, 2.0)], dtype=[("a", "i8"), ("b", "f8")])
    copy = public_environment(Environment({"holding": holding, "record": holding[0], "plain": plain}))
    assert {"holding", "record"} <= set(copy.values.withheld)
    assert copy.lookup("plain") is plain


@pytest.mark.parametrize("call", ['ilp_task(target="t", fake=n)', 'clustering_task(["x"], k=n)'])
def test_a_task_value_refuses_a_private_declaration_before_anything_is_spent(call):
    with Session(budget=1, seed=0, ledger_path=":memory:", dry_run=False) as session:
        session.bind_private("t", pd.DataFrame({"x": [1.0, 2.0, 3.0]}), {"x": ("numeric", 0, 5)})
        with pytest.raises(Exception, match="is private; a task holds public declarations only"):
            session.run(f"n = count(t)\ntask = {call}\n")
        assert session.spent.epsilon == 0
