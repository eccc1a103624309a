"""The run-time value types of the Jostle evaluator, and how they are named and shown.

Public values are plain Python / NumPy objects: int, float, str, bool, None, tuples (Jostle
lists), numpy arrays (released vectors), plus the small classes below (records, functions,
modules, tables). *Private* values (`Private`, `PrivateMean`, private `Table`s and `RowValues`)
wrap data that must not leave the evaluator except through a release; the evaluator refuses
every other route, and `describe()` shows only what is public about them (shape, sensitivity,
where they were made).

The values a row function works on are in `jostle.language.row_values`, and the conversion
of public values to Python in `jostle.language.conversion`; both are re-exported here, the one
module of the language (with `calls` and `sensitivity`) a learner family's language module may
import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from jostle.privacy.budget import DataNode
from jostle.privacy.units import ROW, PrivacyUnit
from jostle.data.schema import Schema
from jostle.diagnostics.source import Span

# Row functions' values (jostle.language.row_values) and the conversion of public values to
# Python (jostle.language.conversion), re-exported: the families and tests import them from here.
from jostle.language.row_values import (  # noqa: F401 - re-exported
    PROBE_NUMERIC_POINTS, PROBE_PAIR_LIMIT, ROW_SCALARS, RowScope, RowValues, RowView, _joint_probe, domain_probe,
)
from jostle.language.conversion import DATA_TYPES, CellLabels, VectorLabels, to_python  # noqa: F401 - re-exported

# The limits on whole numbers (below 10**308, public values too) and on one row's values
# (jostle.language.row_limits has them and their argument).
from jostle.language.row_limits import MAX_ROW_TEXT, MAX_WHOLE, MAX_WHOLE_DIGITS  # noqa: F401 - re-exported

if TYPE_CHECKING:
    from jostle.language import ast_nodes as A
    import pandas as pd


@dataclass(frozen=True)
class Record:
    """An immutable record `{a: 1, b: 2}`; fields are read with `r.a`."""

    fields: tuple[tuple[str, Any], ...]

    @classmethod
    def of(cls, mapping: dict[str, Any]) -> Record:
        return cls(tuple(mapping.items()))

    def get(self, name: str) -> Any:
        for key, value in self.fields:
            if key == name:
                return value
        raise KeyError(name)

    def keys(self) -> list[str]:
        return [k for k, _ in self.fields]

    def as_dict(self) -> dict[str, Any]:
        return dict(self.fields)

    def __repr__(self) -> str:  # Jostle's text; private fields show only their description
        return format_value(self)


@dataclass(eq=False)
class Closure:
    """A user function (`def` or `lambda`) with the environment it closes over."""

    name: str
    params: tuple[A.Param, ...]
    body: tuple[A.Stmt, ...] | A.Expr
    env: Any  # jostle.language.evaluator.Environment
    span: Span
    defaults: tuple[Any, ...] = ()

    def __repr__(self) -> str:  # not the scope it closes over
        return f"<function {self.name}>"


@dataclass(eq=False)
class Builtin:
    """A built-in function from the registry (see jostle.language.builtins)."""

    name: str
    function: Callable[..., Any]
    min_args: int
    max_args: int | None
    keywords: tuple[str, ...]
    privacy: str
    doc: str

    def arity_problem(self, given: int, keywords: set[str] | frozenset[str] = frozenset(),
                      bound: int = 0) -> str | None:
        """The message for a call with `given` positional arguments, or None if it is fine.

        `bound` arguments were supplied by method syntax (`t.count()` passes `t`); the message
        counts only what the caller wrote.
        """
        if given < self.min_args or (self.max_args is not None and given > self.max_args):
            low = max(0, self.min_args - bound)
            if self.max_args == self.min_args:
                expected = str(low)
            elif self.max_args is None:
                expected = f"at least {low}"
            else:
                expected = f"{low} to {self.max_args - bound}"
            return arity_message(self.name, expected, given - bound)
        for key in sorted(keywords):
            if key not in self.keywords:
                return f"{self.name}() has no keyword argument '{key}'"
        return None


def arity_message(name: str, expected: str, given: int) -> str:
    """"f() takes 2 arguments but 1 was given", with the plurals right."""
    noun = "argument" if expected == "1" else "arguments"
    verb = "was" if given == 1 else "were"
    return f"{name}() takes {expected} {noun} but {given} {verb} given"


@dataclass(eq=False)
class Module:
    """An imported Jostle module; its top-level names are read as attributes."""

    name: str
    env: Any


@dataclass(eq=False)
class BoundMethod:
    """`table.where` and friends: a table operation with its table already supplied."""

    target: Any
    builtin: Builtin

    def __repr__(self) -> str:  # not the table it is bound to
        return f"<method {self.builtin.name}>"


# ---------------------------------------------------------------- private values
@dataclass(frozen=True, eq=False)
class Private:
    """A private number or vector and what is public about it.

    Attributes:
        value: The hidden number (an int or Fraction, held exactly) or numpy array. Never
            shown, printed or returned.
        l1: Its L1 sensitivity: the most the value (or the vector's L1 norm of change) can move
            when one row is added to or removed from the private data.
        l2: Its L2 sensitivity (<= l1), used by the Gaussian mechanism.
        origin: Where it was made (for error messages).
        what: How it was made, e.g. "count(patients)".
        node: The data it depends on (for parallel composition over partitions).
        integer: True when every coordinate is an integer and moves by integers (counts).
        labels: Public labels of a vector's cells (a histogram's domain), or None.
        direction: +1 when adding a row can only increase every coordinate (counts), -1 when
            it can only decrease them, 0 when unknown (jostle.language.sensitivity tracks it).
    """

    value: Any
    l1: float
    l2: float
    origin: Span
    what: str
    node: DataNode
    integer: bool = False
    labels: tuple | None = None
    shape: tuple[int, ...] | None = None  # a 2D histogram's public (rows, cols); None otherwise
    direction: int = 0
    axes: tuple[str, ...] | None = None  # a histogram's column names (public), for its labels
    clipping: str | None = None  # a public note: its rows were clamped to declared bounds (error bounds)

    @property
    def is_vector(self) -> bool:
        return isinstance(self.value, np.ndarray)

    @property
    def length(self) -> int:
        return len(self.value) if self.is_vector else 1

    def __repr__(self) -> str:  # never the value: reprs reach error messages (issue 11)
        return self.describe()

    __str__ = __repr__

    def describe(self) -> str:
        shape = f"vector of {self.length}" if self.is_vector else "scalar"
        return (
            f"<private {shape}, sensitivity {self.l1:g}, made at {self.origin.short} by {self.what}>"
        )


@dataclass(frozen=True, eq=False)
class PrivateMean:
    """A private mean of a bounded column, released as a noisy sum over a noisy count.

    Under add/remove neighbours the mean has no useful fixed sensitivity (a table of one row
    becomes empty), so `laplace(m, eps)` spends eps/2 on the sum of (x - midpoint), whose
    sensitivity is (hi - lo)/2, and eps/2 on the count (sensitivity 1), then post-processes:
    midpoint + noisy_sum / max(noisy_count, 1), clamped to [lo, hi].
    """

    total: float  # sum of (x - midpoint)
    count: int
    lo: float
    hi: float
    origin: Span
    what: str
    node: DataNode
    # The stability of the table it was computed on: one individual moves the sum of (x - mid)
    # by at most stability * max(hi - mid, mid - lo) and the count by at most stability, so
    # both releases scale by it (jostle.language.mechanisms._release_mean).
    stability: int = 1

    def __repr__(self) -> str:  # never the total or count: reprs reach error messages
        return self.describe()

    __str__ = __repr__

    def describe(self) -> str:
        return f"<private mean in [{self.lo:g}, {self.hi:g}], made at {self.origin.short} by {self.what}>"


@dataclass(frozen=True, eq=False)
class Table:
    """A table: rows under a public schema, in memory or on an engine.

    Attributes:
        data: The rows (hidden when private): a pandas frame (the in-memory path), or a
            `jostle.data.engine.relation.Relation`, a lazy plan on an engine (DuckDB, Spark)
            whose aggregates run there. `frame` gives the rows as pandas either way (an
            engine's rows are collected on first use, for the learners that need them).
        schema: The public schema: column names and domains.
        private: Whether rows are private data.
        name: The name it was bound or loaded under (for messages).
        node: The part of the data tree it belongs to (partitions make new nodes).
        origin: Where it was made.
        key: For a part of a partition, its public key; otherwise None.
        stability: How many rows of the table one individual (one privacy unit, `unit`) can
            add or remove: 1 for a row table (where, select, derive, bin and partition are
            1-stable), 2 for a replace_one table (a replaced row is one row removed and one
            added), k for an entity table after `bound_per_key(k)`, and None (unbounded) for an
            entity table before it: row-level aggregates refuse such a table
            (jostle.language.entities).
        public_rows: The rows are exactly the bound rows, whose number is public (a
            replace_one table not filtered by where; needed by randomized_response and by the
            exact count of jostle.language.tables).
        unit: The privacy unit the curator bound the table under (jostle.privacy.units); the
            table's `node` lies under the accountant's root for it.
        written: The table as the program wrote it, for the ledger's `what` column: the variable
            its root was assigned to (else `name`) and the where/derive/select/bin steps of its
            plan, each shortened (jostle.language.release_names). "" for a table as bound or
            loaded. Program text and public names only, never a value of the rows.
        alias: The variable the program last assigned this table to ("" if none).
    """

    data: Any = field(repr=False)
    schema: Schema
    private: bool
    name: str
    node: DataNode
    origin: Span
    key: Any = None
    stability: int | None = 1
    public_rows: bool = False
    unit: PrivacyUnit = ROW
    written: str = ""
    alias: str = ""

    @property
    def relation(self) -> Any:
        """The engine plan holding the rows, or None for an in-memory table."""
        return None if _is_frame(self.data) else self.data

    @property
    def frame(self) -> pd.DataFrame:
        """The rows as a pandas frame (an engine table's rows are collected once, then kept)."""
        if _is_frame(self.data):
            return self.data
        cache = self.data._cache
        if "frame" not in cache:
            cache["frame"] = self.data.engine.collect(self.data)
        return cache["frame"]

    def derived(self, frame: Any, schema: Schema | None = None, same_rows: bool = True) -> Table:
        """A table computed row by row from this one (same data node, unit and stability).

        Args:
            frame: The new rows.
            schema: The new schema, if columns changed.
            same_rows: False when rows were dropped (where): a public row count is then lost.
        """
        return Table(frame, schema or self.schema, self.private, self.name, self.node,
                     self.origin, self.key, self.stability, self.public_rows and same_rows, self.unit,
                     self.written, self.alias)

    def __repr__(self) -> str:  # never the rows
        return self.describe()

    __str__ = __repr__

    def describe(self) -> str:
        kind = "private" if self.private else "public"
        key = f" part {self.key!r} of" if self.key is not None else ""
        size = "" if self.private or not _is_frame(self.data) else f", {len(self.frame)} rows"
        return f"<{kind}{key} table {self.name}{size}{self.unit_note()} {self.schema.describe()}>"

    def unit_note(self) -> str:
        """The unit and stability as shown in descriptions and errors ("" for a 1-stable row table)."""
        if not self.private or (self.unit.is_row and self.stability == 1):
            return ""
        if self.stability is None:
            bound = "rows per key not bounded yet"
        else:
            bound = f"stability {self.stability}"
        return f" (unit {self.unit}, {bound})"



def _is_frame(data: Any) -> bool:
    return type(data).__name__ == "DataFrame"


def is_private(value: Any) -> bool:
    """True for any value that carries private data."""
    if isinstance(value, (Private, PrivateMean)):
        return True
    if isinstance(value, RowValues):
        return value.private
    if isinstance(value, RowView):
        return value.table.private
    if isinstance(value, Table):
        return value.private
    if isinstance(value, tuple):
        return any(is_private(v) for v in value)
    if isinstance(value, Record):
        return any(is_private(v) for _, v in value.fields)
    return False


def type_name(value: Any) -> str:
    """The Jostle name of a value's type, for error messages."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (tuple, np.ndarray)):
        return "list"
    if isinstance(value, Record):
        return "record"
    if isinstance(value, (Closure, Builtin, BoundMethod)):
        return "function"
    if isinstance(value, Module):
        return "module"
    if isinstance(value, Table):
        return "private table" if value.private else "public table"
    if isinstance(value, (Private, PrivateMean)):
        return "private value"
    if isinstance(value, (RowValues, RowView)):
        return "private column" if is_private(value) else "column"
    return getattr(value, "jostle_type", type(value).__name__)


def format_value(value: Any) -> str:
    """Show a public value the way Jostle writes it."""
    if value is None:
        return "none"
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        exact_text = getattr(value, "exact_text", None)  # an exact answer shows its Fraction too
        if isinstance(exact_text, str):
            return exact_text
        number = float(value)
        if number.is_integer() and abs(number) < 1e16:
            return f"{number:.1f}"
        return repr(number)
    if isinstance(value, str):
        return value
    if isinstance(value, (tuple, list, np.ndarray)):
        return "[" + ", ".join(_repr(v) for v in value) + "]"
    if isinstance(value, Record):
        return "{" + ", ".join(f"{k}: {_repr(v)}" for k, v in value.fields) + "}"
    if isinstance(value, Closure):
        return f"<function {value.name}>"
    if isinstance(value, Builtin):
        return f"<builtin {value.name}>"
    if isinstance(value, BoundMethod):
        return f"<method {value.builtin.name}>"
    if isinstance(value, Module):
        return f"<module {value.name}>"
    if isinstance(value, (Private, PrivateMean, Table)):
        return value.describe()
    return str(value)


def _repr(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    return format_value(value)


@dataclass(frozen=True, eq=False)
class CorpusValue:
    """A public training corpus for ChoiceMakers (its `task` names the learner family's task)."""

    public_stateless = True  # training copies may share it (jostle.language.training_boundary)

    jostle_type = "corpus"

    corpus: Any
    description: str
    task: str
    item_name: str = "tasks"  # what one entry of the corpus is called when it prints ("shapes", ...)

    def __str__(self) -> str:
        return f"<corpus {self.description}, {len(self.corpus)} {self.item_name}>"
