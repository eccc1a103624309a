"""Objects returned to Python, for the neighbour fuzzer and the tests of issue 21, hole 5.

A Python user takes a program's values with `Session.eval(name)`; the program's author is
assumed to read them with all of Python's power (docs/threat_model.md). Two rules follow:

  (a) nothing reachable from a returned object is a live part of the session: its source of
      randomness (reseeding it made later releases recoverable), its accountant, its ledger
      store or database connection, its interpreter or a scope of the program, a private table,
      a private value, or the rows of a private table;
  (b) what is returned before the first charged release is the same on neighbouring tables.

This module checks both, independently of the code under test (`jostle.language.detach`): its
own walk of the object graph (`reachable_from`: the garbage collector's references, the items of
object arrays, the targets of weak references; modules, classes and module globals are not
entered), the session's objects by identity (`session_objects`) and the live kinds by class
(`live_kind`). `ReturnedWatch` snapshots the globals at the first charge; `returned_objects`
evaluates every global the program defined and returns a `Returned`, and `returned_violation`
is the oracle the fuzzer adds to `neighbour_fuzz.violation`.
"""

from __future__ import annotations

import functools
import gc
import sqlite3
import sys
import traceback
import types
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from jostle.diagnostics.errors import JostleError

_LEAVES = (str, int, float, bool, type(None), bytes, complex)


# ---------------------------------------------------------------- the walk
def reachable_from(root: Any, forbidden: Callable[[Any], str | None], limit: int = 2_000_000) -> list[str]:
    """Every object reachable from `root` that `forbidden` names, as "kind at A -> B -> C"."""
    module_dicts = {id(vars(m)) for m in list(sys.modules.values()) if m is not None and hasattr(m, "__dict__")}
    parents: dict[int, tuple[int | None, Any]] = {}
    stack: list[tuple[Any, int | None]] = [(root, None)]
    found: list[str] = []
    while stack and len(parents) < limit:
        obj, parent = stack.pop()
        if id(obj) in parents:
            continue
        parents[id(obj)] = (parent, obj)
        kind = forbidden(obj)
        if kind is None and isinstance(obj, weakref.ProxyTypes):
            kind = "a weak proxy"
        if kind is not None:
            chain, key = [], id(obj)
            while key is not None:
                key, item = parents[key]
                chain.append(type(item).__name__)
            found.append(f"{kind} at {' -> '.join(reversed(chain))}")
            continue
        if isinstance(obj, _LEAVES) or isinstance(obj, (type, types.ModuleType)) or id(obj) in module_dicts:
            continue
        children = list(gc.get_referents(obj))
        if isinstance(obj, np.ndarray) and obj.dtype.hasobject:
            children += obj.ravel().tolist()
        if isinstance(obj, weakref.ref) and obj() is not None:
            children.append(obj())
        stack.extend((child, id(obj)) for child in children)
    if stack:
        found.append(f"more than {limit} objects reachable (not all walked)")
    return found


@functools.cache
def _live_classes() -> tuple[tuple[tuple[type, ...], str], ...]:
    from jostle.choicemaker.private_dispatch import BudgetGuard
    from jostle.language.evaluator import Environment, Interpreter
    from jostle.language.values import BoundMethod, Closure, Module, Private, PrivateMean, RowScope, RowValues, \
        RowView
    from jostle.privacy.budget import Accountant
    from jostle.privacy.exact_samplers import RandomWords
    from jostle.privacy.ledger_store import LedgerStore
    from jostle.privacy.noise import Randomness

    return (
        ((Randomness, RandomWords, np.random.Generator, np.random.BitGenerator, np.random.RandomState),
         "a source of randomness"),
        ((Accountant,), "an accountant"),
        ((LedgerStore, sqlite3.Connection, sqlite3.Cursor), "a ledger store"),
        ((Interpreter,), "an interpreter"),
        ((Environment,), "a scope of the program"),
        ((Private, PrivateMean, RowValues, RowView, RowScope), "a private value"),
        ((Closure, Module, BoundMethod), "a function of the program"),
        ((BudgetGuard,), "a dispatch's budget guard"),
    )


def live_kind(obj: Any) -> str | None:
    """The live part of a session `obj` is, by its class, or None."""
    from jostle.language.values import Table

    if isinstance(obj, _LEAVES):
        return None
    for classes, kind in _live_classes():
        if isinstance(obj, classes):
            return kind
    if isinstance(obj, Table) and obj.private:
        return "a private table"
    return None


def session_objects(session: Any) -> dict[int, tuple[str, Any]]:
    """The session's live objects by identity (id -> (what, the object, kept alive)): the
    session, its randomness and what draws from it, accountant, ledger store and its
    connection, interpreter and global scope, and every private table it holds with its rows
    (the frame or engine plan and every array inside)."""
    from jostle.language.values import Table

    interp = session.interpreter
    objects: dict[int, tuple[str, Any]] = {}

    def add(what: str, obj: Any) -> None:
        if obj is not None and not isinstance(obj, _LEAVES):
            objects.setdefault(id(obj), (what, obj))

    add("the session", session)
    randomness = session.randomness
    add("the session's randomness", randomness)
    for part in vars(randomness).values():
        add("the session's randomness", part)
    generator = getattr(randomness, "_generator", None)
    if generator is not None:
        add("the session's randomness", generator.bit_generator)
    add("the session's accountant", session.accountant)
    add("the session's ledger store", session.store)
    for part in vars(session.store).values():
        if isinstance(part, sqlite3.Connection):
            add("the session's ledger store", part)
    add("the interpreter", interp)
    add("the global scope", interp.globals)
    tables = [v for v in list(interp.globals.values.values()) + list(getattr(interp, "bound_tables", {}).values())
              if isinstance(v, Table) and v.private]
    for table in tables:
        add(f"private table {table.name}", table)
        add(f"the rows of {table.name}", table.data)
        if isinstance(table.data, pd.DataFrame):
            for array in _arrays_in(table.data):
                add(f"the rows of {table.name}", array)
    return objects


def _arrays_in(frame: pd.DataFrame) -> Iterable[np.ndarray]:
    arrays: list[np.ndarray] = []

    def collect(obj: Any) -> str | None:
        if isinstance(obj, np.ndarray):
            arrays.append(obj)
        return None

    reachable_from(frame, collect, limit=100_000)
    return arrays


def forbidden_in(session: Any) -> Callable[[Any], str | None]:
    """What must not be reachable from a value `session` returned: its objects, by identity,
    and every live kind, by class."""
    objects = session_objects(session)

    def forbidden(obj: Any) -> str | None:
        entry = objects.get(id(obj))
        if entry is not None and entry[1] is obj:
            return entry[0]
        return live_kind(obj)

    return forbidden


# ---------------------------------------------------------------- what a returned value shows
def render(value: Any) -> str:
    """A canonical text of a returned value's content (for comparing neighbours)."""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, _LEAVES):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(render(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {render(v)}" for k, v in value.items()) + "}"
    if isinstance(value, np.ndarray):
        return f"array[{value.dtype}{value.shape}]" + render(value.tolist())
    if isinstance(value, pd.DataFrame):
        return f"frame{list(map(str, value.dtypes))}{list(value.columns)}:" + value.to_csv()
    if isinstance(value, pd.Series):
        return f"series[{value.dtype}]:" + value.to_csv()
    return f"{type(value).__name__}:{value}"


@dataclass(frozen=True)
class Returned:
    """What the program's globals showed when taken to Python after a run.

    Attributes:
        reached: Each "name: what it reaches" for a returned value that reaches a live part of
            the session (a violation on any neighbour).
        values: (name, rendering) of every global the program defined, taken with
            `Session.eval(name)` after the run: the value's content, or the refusal's class and
            message.
        before: (name, rendering) of the globals as they were when the first charge was made
            (pre-release content: what `Session.eval` would have returned then, the same
            conversion applied to the objects bound then); None if nothing was charged.
        internal: A traceback, if returning a value raised something that is not a JostleError.
    """

    reached: tuple[str, ...] = ()
    values: tuple[tuple[str, str], ...] = ()
    before: tuple[tuple[str, str], ...] | None = None
    internal: str | None = None


class ReturnedWatch:
    """Notes the global names a session had before the program, and the globals' objects at the
    first charge its accountant makes (wrapping `charge`, whatever its signature)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.names_before = set(session.interpreter.globals.values)
        self.at_first_charge: dict[str, Any] | None = None
        accountant = session.accountant
        original = accountant.charge

        def charge(*args: Any, **kwargs: Any) -> Any:
            entry = original(*args, **kwargs)
            if self.at_first_charge is None:
                self.at_first_charge = dict(session.interpreter.globals.values)
            return entry

        accountant.charge = charge  # type: ignore[method-assign]

    def reset(self) -> None:
        """The program starts now: the names bound so far are the curator's."""
        self.names_before = set(self.session.interpreter.globals.values)

    def collect(self) -> Returned:
        """Take every global the program defined to Python with `Session.eval`, and check it."""
        session = self.session
        names = sorted(n for n in session.interpreter.globals.values if n not in self.names_before)
        forbidden = forbidden_in(session)
        reached: list[str] = []
        shown: dict[str, str] = {}
        for name in names:
            try:
                value = session.eval(name)
            except JostleError as error:
                shown[name] = f"refused: {type(error).__name__}: {error.render()}"
                continue
            except Exception as error:  # noqa: BLE001 - a bug in Jostle, reported as such
                return Returned(internal=f"Session.eval({name!r}): " + "".join(traceback.format_exception(error)))
            shown[name] = render(value)
            reached += [f"{name}: {what}" for what in reachable_from(value, forbidden)[:3]]
        before = None
        if self.at_first_charge is not None:
            try:
                before = tuple((n, self._as_returned(v)) for n, v in sorted(self.at_first_charge.items())
                               if n not in self.names_before)
            except Exception as error:  # noqa: BLE001 - a bug in Jostle, reported as such
                return Returned(internal="to_python: " + "".join(traceback.format_exception(error)))
        return Returned(tuple(reached), tuple(shown.items()), before)

    def _as_returned(self, value: Any) -> str:
        """What `Session.eval` returns for a global bound to `value` (its refusal of a private
        value, or `to_python`'s result), rendered."""
        from jostle.language.values import is_private, to_python

        if is_private(value):
            return "refused: a private value"
        try:
            return render(to_python(value, None, self.session.interpreter.vector_labels))
        except JostleError as error:
            return f"refused: {type(error).__name__}: {error.message}"


# ---------------------------------------------------------------- the fuzzer's family
def returned_statements(generator: Any) -> list[str]:
    """Statements of the fuzzer's `returned` family (`Generator.family_returned`): globals of
    every kind a Python user may take back with `Session.eval` (released numbers and vectors,
    lists and records holding them, public tables, rows and domains, trees and rule lists
    learnt from the private table or a public one, traces) and some that must be refused
    (private tables and values, functions, bound methods)."""
    from tests.privacy.neighbour_fuzz import Scope, _lit

    pick, chance = generator.pick, generator.chance
    table = generator.private.name
    columns = generator.private.columns
    scope = Scope("r", columns)
    categorical = [c.name for c in columns if not c.numeric]
    epsilon = pick(["1", "0.5", "2"])
    lines: list[str] = []
    if chance(0.85):
        # two categorical columns made from the rows (any table has them), for the learners
        lines.append(f'rv_data = select({table}.derive("p_", lambda r: "a" if {generator.condition(scope)} else "b", '
                     f'categorical(["a", "b"], default="a")).derive("q_", lambda r: "b" if {generator.condition(scope)} else "a", '
                     f'categorical(["a", "b"], default="a")), ["p_", "q_"])')
        learner = pick(["FriedmanSchuster", "RandomTrees", "Majority", "OneRule", "BinaryTree", "PatilSingh",
                        "BayesianRuleList", "BRLSchema"], [20, 15, 10, 10, 10, 5, 20, 10])
        extra = ", max_rows=100" if learner == "BayesianRuleList" else ""
        lines.append(f'rv_model = {learner}(rv_data, "q_", epsilon={epsilon}{extra})')
        rule_list = learner in ("BayesianRuleList", "BRLSchema")
        if chance(0.4):
            lines.append(f"rv_pub = {PUBLIC_TASK}\n"
                         + pick(["print(rv_model)", f"rv_pred = {'predict_rule_list' if rule_list else 'predict'}"
                                                    "(rv_model, rv_pub)"]))
        if chance(0.3):
            lines.append(pick(['rv_pair = [rv_model, {m: rv_model, k: 1}]', 'rv_rec = {model: rv_model}']))
    for _ in range(generator.rng.randint(1, 4)):
        form = pick(["number", "vector", "list", "record", "public", "domain", "refused", "ledger", "public_model"])
        name = generator.fresh("rv_")
        if form == "number":
            lines.append(f"{name} = {pick(['geometric', 'laplace'])}(count({table}), {epsilon})")
        elif form == "vector" and categorical:
            lines.append(f"with budget {epsilon}:\n    {name} = {{{{ histogram({table}, {_lit(pick(categorical))}) }}}}")
        elif form == "list":
            lines.append(f"{name} = [1, {_lit(pick(['a', 2.5, None, True]))}, [{pick(['k', 'len(flags)', '1'])}]]")
        elif form == "record":
            lines.append(f"{name} = {{a: {pick(['k', '1', 'cfg'])}, b: [cfg.lim, {_lit('x')}]}}")
        elif form == "public":
            public = pick(generator.table_names(False) or ["ids"])
            lines.append(pick([f"{name} = {public}", f"{name} = rows({public})", f"{name} = {public}.columns"]))
        elif form == "domain":
            lines.append(pick([f'{name} = categorical(["a", "b"], default="a")', f"{name} = numeric(0, 10)",
                               f'{name} = bounds({table}, "{columns[0].name}")' if columns[0].numeric
                               else f'{name} = domain({table}, "{columns[0].name}")']))
        elif form == "refused":
            lines.append(pick([f"{name} = {table}", f"{name} = count({table})", f"{name} = lambda q: q",
                               f"{name} = {table}.count", f"{name} = twice", f"{name} = [{table}]"]))
        elif form == "ledger":
            lines.append(pick([f"{name} = ledger()", f"{name} = spent()", f"{name} = remaining()"]))
        else:
            lines.append(f'{name} = {pick(["C45", "BayesianRuleList"])}({PUBLIC_TASK}, "q_")')
    return lines


# A public table with the learners' two categorical columns (every case has the public table `ids`).
PUBLIC_TASK = ('select(ids.derive("p_", lambda r: "a", categorical(["a", "b"], default="a")).derive("q_", lambda r: "b", '
               'categorical(["a", "b"], default="a")), ["p_", "q_"])')


def returned_violation(first: Returned, second: Returned, charged: tuple[bool, bool]) -> str | None:
    """Why the values two neighbours returned to Python break the rules (None: they do not).

    Args:
        first, second: What each neighbour returned.
        charged: Whether each neighbour's run charged anything.
    """
    for returned in (first, second):
        if returned.internal is not None:
            return "internal error returning a value to Python"
        if returned.reached:
            return f"a value returned to Python reaches a live part of the session ({returned.reached[0]})"
    if not any(charged) and first.values != second.values:
        return "the values returned to Python differ (nothing was charged)"
    if all(charged) and first.before != second.before:
        return "the values returned to Python that were bound before the first release differ"
    return None


__all__ = ["Returned", "ReturnedWatch", "forbidden_in", "live_kind", "reachable_from", "render",
           "returned_statements", "returned_violation", "session_objects"]
