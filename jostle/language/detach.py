"""Values returned to Python are detached from the session that made them.

`Session.eval` hands the program's values to Python (through `jostle.language.values.to_python`),
and the program's author is assumed to read them with all of Python's power
(docs/threat_model.md): any object reachable from a returned value can be read, called or
changed. Issue 21, hole 5: a trained tree came back holding the session's live `Randomness` as
its estimator's `noise`; reseeding it made the noise of every later release known, so
`geometric(count(t), 1)` minus that noise gave the true count, with nothing charged for it.

The rule, enforced here by construction and checked after:

  * **Only copies cross.** Lists, records, public tables, released vectors and domain
    declarations are converted to new Python objects (`returned_value`); a released model (a
    class marked `public_result`) crosses as `detached_copy`: a deep copy in which every source
    of randomness and every callable (a charge callback, a bound method, a closure, which can
    hold anything in its cells) is replaced by None. What a released model needs to print and
    predict is data (its released counts, splits and labels); a copy refitted by its new owner
    draws from a fresh secure source (`noise=None` means that in the estimators). So nothing the
    copy holds is shared with the session: changing it changes nothing in the session.
  * **A generic check, failing closed.** `returned_value` then walks everything reachable from
    the result (`reachable`: the garbage collector's references, the items of object arrays and
    the targets of weak references; not modules, classes or module globals, which are the
    installed code, not the value) and refuses to return it if it reaches a live part of a
    session (`live_kind`): a source of randomness, an accountant or ledger store or database
    connection, an interpreter or a scope, a private table or value or its rows, a closure or a
    module of the program, an engine's connection or plan. The decision depends on the types of
    the objects only, which the program text fixes, never on the rows, so the refusal is itself
    the same on neighbouring inputs.

Soundness: the author's Python code can reach only objects reachable from what it was given.
The copy shares no object with the session that the walk does not look at (the walk visits
every reference the interpreter knows of, so any shared mutable object is reachable), and the
walk finds no session object, so reseeding, reading or changing anything returned cannot touch
the session's noise, budget or data. Immutable objects shared with the session (strings,
numbers, classes, functions' code) carry no state to exploit.
"""

from __future__ import annotations

import copy
import functools
import gc
import sys
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from jostle.diagnostics.source import Span

# Objects with no references worth following (and that never are a session's live part).
_LEAVES = frozenset({str, int, float, bool, type(None), bytes, complex, type(Ellipsis)})


@dataclass(frozen=True)
class Reach:
    """A forbidden object found from a root: what it is and the chain of types leading to it."""

    kind: str
    path: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.kind} (at {' -> '.join(self.path)})"


def _module_dicts() -> set[int]:
    return {id(vars(m)) for m in list(sys.modules.values()) if m is not None and hasattr(m, "__dict__")}


def _children(obj: Any) -> list[Any]:
    """Every object `obj` refers to: its GC references, an object array's items, a weak
    reference's target (the collector does not count it as a reference, but calling it gives
    the object back)."""
    children = list(gc.get_referents(obj))
    if isinstance(obj, np.ndarray) and obj.dtype.hasobject:
        # the collector does not traverse array items (strings and numbers hold nothing: skipped here)
        children.extend(item for item in obj.ravel().tolist() if type(item) not in _LEAVES)
    if isinstance(obj, weakref.ref):
        target = obj()
        if target is not None:
            children.append(target)
    return children


def reachable(root: Any, forbidden: Callable[[Any], str | None], first_only: bool = False) -> list[Reach]:
    """Walk every object reachable from `root`; return each one `forbidden` names.

    Modules, classes and the globals of modules are not entered: they are the installed code,
    shared by every value, and not part of a value. Weak proxies cannot be followed and are
    reported as forbidden (a returned value has no use for one).

    Args:
        root: Where to start (included).
        forbidden: obj -> a description if obj must not be reachable, else None. A forbidden
            object is reported and not entered.
        first_only: Stop at the first one found.

    Returns:
        The forbidden objects found, each with the chain of types that reaches it.
    """
    module_dicts = _module_dicts()
    seen: dict[int, tuple[int | None, Any]] = {}  # id -> (parent id, the object: kept alive)
    found: list[Reach] = []
    stack: list[tuple[Any, int | None]] = [(root, None)]

    def path_to(key: int) -> tuple[str, ...]:
        names: list[str] = []
        current: int | None = key
        while current is not None:
            parent, obj = seen[current]
            names.append(type(obj).__name__)
            current = parent
        return tuple(reversed(names))

    while stack:
        obj, parent = stack.pop()
        key = id(obj)
        if key in seen:
            continue
        seen[key] = (parent, obj)
        kind = forbidden(obj)
        if kind is None and isinstance(obj, weakref.ProxyTypes):
            kind = "a weak proxy"
        if kind is not None:
            found.append(Reach(kind, path_to(key)))
            if first_only:
                break
            continue
        if type(obj) in _LEAVES or isinstance(obj, (type, types.ModuleType)) or key in module_dicts:
            continue
        stack.extend((child, key) for child in _children(obj))
    return found


# ---------------------------------------------------------------- what is live in a session
def _live_types() -> dict[type, str]:
    """Classes whose instances are live parts of a session, found among the loaded modules.

    Looked up in `sys.modules` rather than imported: a class whose module is not loaded has no
    instance to find, and this module (imported by `values`, which the learners build on) must
    not import the evaluator, the engine or the ChoiceMaker."""
    wanted = {
        "jostle.privacy.noise": {"Randomness": "a source of randomness",
                                 "SimulationNoise": "a source of randomness"},
        "jostle.privacy.exact_samplers": {"RandomWords": "a source of randomness"},
        "numpy.random": {"Generator": "a random generator", "BitGenerator": "a random generator",
                         "RandomState": "a random generator"},
        "jostle.privacy.budget": {"Accountant": "an accountant", "CostTree": "an accountant's cost tree"},
        "jostle.privacy.ledger_store": {"LedgerStore": "the durable ledger"},
        "sqlite3": {"Connection": "a database connection", "Cursor": "a database connection"},
        "jostle.language.evaluator": {"Interpreter": "the interpreter", "Environment": "a scope of the program"},
        "jostle.language.values": {"Private": "a private value", "PrivateMean": "a private value",
                                   "RowValues": "a column of a table's rows", "RowView": "a table's rows",
                                   "RowScope": "a row function's scope", "Closure": "a function of the program",
                                   "Module": "a module of the program", "BoundMethod": "a table's method"},
        "jostle.language.training_boundary": {"PublicValues": "a scope of the program"},
        "jostle.choicemaker.private_dispatch": {"BudgetGuard": "a dispatch's budget guard",
                                        "Runtime": "a dispatch's runtime"},
        "jostle.data.engine.relation": {"Relation": "a table on an engine"},
        "duckdb": {"DuckDBPyConnection": "an engine's connection", "DuckDBPyRelation": "a table on an engine"},
        "pyspark.sql": {"SparkSession": "an engine's connection", "DataFrame": "a table on an engine"},
        "pyspark": {"SparkContext": "an engine's connection"},
    }
    kinds: dict[type, str] = {}
    for module_name, classes in wanted.items():
        module = sys.modules.get(module_name)
        for class_name, kind in classes.items():
            cls = getattr(module, class_name, None) if module is not None else None
            if isinstance(cls, type):
                kinds[cls] = kind
    return kinds


def live_kinds() -> Callable[[Any], str | None]:
    """A test of whether an object is a live part of a session (see `live_kind`), with the
    classes looked up once."""
    from jostle.language.values import Table

    kinds = _live_types()

    def kind_of(obj: Any) -> str | None:
        cls = type(obj)
        if cls in _LEAVES:
            return None
        for base in cls.__mro__:
            if base in kinds:
                return kinds[base]
        if isinstance(obj, Table) and obj.private:
            return "a private table"
        return None

    return kind_of


def live_kind(obj: Any) -> str | None:
    """What live part of a session `obj` is (a public description), or None."""
    return live_kinds()(obj)


# ---------------------------------------------------------------- detaching
def _is_cut(obj: Any, kind_of: Callable[[Any], str | None]) -> bool:
    """Whether a released model's copy drops `obj`: a source of randomness or a callable
    instance (a closure's cells, a bound method's object can hold anything)."""
    if isinstance(obj, (types.FunctionType, types.MethodType, functools.partial, staticmethod, classmethod)):
        return True
    if isinstance(obj, types.BuiltinMethodType) and not isinstance(getattr(obj, "__self__", None),
                                                                   (types.ModuleType, type(None))):
        return True  # a C method bound to an object (e.g. a generator's `random`)
    return kind_of(obj) in ("a source of randomness", "a random generator")


def detached_copy(model: Any) -> Any:
    """A deep copy of a released model with its randomness and callables replaced by None.

    Everything reachable from the model is walked once; sources of randomness and callables
    are entered into `copy.deepcopy`'s memo as None, so the copy holds None where the original
    held them (an estimator's `noise`, `charge`, a ledger's callback). The rest is copied.
    """
    kind_of = live_kinds()
    cut: dict[int, Any] = {}
    keep: list[Any] = []

    def mark(obj: Any) -> str | None:
        if _is_cut(obj, kind_of):
            cut[id(obj)] = None
            keep.append(obj)
            return "cut"
        return None

    reachable(model, mark)
    memo: dict[int, Any] = dict(cut)
    memo[id(memo)] = keep  # deepcopy's own keep-alive list: the cut objects stay alive meanwhile
    return copy.deepcopy(model, memo)


def returned_value(value: Any, span: Span | None = None, labels: Any = None) -> Any:
    """`value` as Python receives it: converted, detached, checked (see the module docstring).

    Raises:
        PrivacyError: the value is, or holds, something that is not data, or the result would
            reach a live part of the session.
    """
    result = _convert(value, span, labels)
    problems = reachable(result, live_kinds(), first_only=True)
    if problems:
        from jostle.diagnostics.errors import PrivacyError
        from jostle.language.values import type_name

        raise PrivacyError(
            f"a {type_name(value)} cannot be returned to Python: it holds {problems[0].kind}", span,
            "return the released data instead (numbers, lists, records, a public table)")
    return result


def _convert(value: Any, span: Span | None, labels: Any) -> Any:
    """The conversion rules of `jostle.language.values.to_python`; every result is a new object."""
    from jostle.language.values import DATA_TYPES, Record, Table, type_name

    if isinstance(value, tuple):
        return [_convert(v, span, labels) for v in value]
    if isinstance(value, Record):
        return {k: _convert(v, span, labels) for k, v in value.fields}
    if isinstance(value, Table) and not value.private:
        return value.frame.copy(deep=True)
    if isinstance(value, np.ndarray) and labels is not None:
        cells = labels.of(value)
        if cells is not None:
            return cells.as_pandas(_convert(value, span, None))
    if isinstance(value, np.ndarray) and value.dtype == object:
        items = np.empty(value.size, dtype=object)
        for index, item in enumerate(value.ravel().tolist()):
            items[index] = _convert(item, span, None)
        return items.reshape(value.shape)
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, np.generic):
        return value.item()
    from jostle.language.noisy_values import plain

    value = plain(value)  # a released number without its noise law (jostle.language.noisy_values)
    if isinstance(value, DATA_TYPES):
        return value
    if getattr(type(value), "public_result", False):  # a released model (e.g. a trained tree)
        return detached_copy(value)
    from jostle.data.schema import Categorical, Numeric

    if isinstance(value, (Numeric, Categorical)):  # a public domain declaration
        return copy.deepcopy(value)
    from jostle.diagnostics.errors import PrivacyError

    raise PrivacyError(
        f"a {type_name(value)} cannot be returned to Python", span,
        "a function, method, module, option or ChoiceMaker holds the scope it was made in, which "
        "may hold private data; return the data you need instead (a released number, a list, a "
        "record, a public table)")


__all__ = ["Reach", "detached_copy", "live_kind", "live_kinds", "reachable", "returned_value"]
