"""Run-time values of the Jostle evaluator.

Public values are plain Python / NumPy objects: int, float, str, bool, None, tuples (Jostle
lists), numpy arrays (released vectors), plus the small classes below (records, functions,
modules, tables). *Private* values (`Private`, `PrivateMean`, private `Table`s and `RowValues`)
wrap data that must not leave the evaluator except through a release; the evaluator refuses
every other route, and `describe()` shows only what is public about them (shape, sensitivity,
where they were made).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from jostle.privacy.budget import DataNode
from jostle.privacy.units import ROW, PrivacyUnit
from jostle.data.schema import Schema
from jostle.diagnostics.source import Span

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
                     self.origin, self.key, self.stability, self.public_rows and same_rows, self.unit)

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


PROBE_NUMERIC_POINTS = 9
PROBE_PAIR_LIMIT = 1 << 16


class RowScope:
    """The identity of one row-function call (one `where` or `derive`).

    Each call makes a fresh scope; the row view it hands to the function and every column read
    from it carry that scope. Columns combine only within one scope (`row_apply`), and the call
    accepts only a result of its own scope (`tables.row_result`), so a row function can combine
    the columns of the row it is given and public scalars, and nothing else: not another
    table's columns, not a public list of the same length, not a released vector. The check is
    on scope identities and types, which are public, so it never depends on the rows.
    """

    __slots__ = ("table_name",)

    def __init__(self, table_name: str) -> None:
        self.table_name = table_name

    def __repr__(self) -> str:
        return f"<rows of {self.table_name}>"


@dataclass(frozen=True, eq=False)
class RowValues:
    """A table's column seen inside a row function (where/derive).

    Row functions are evaluated once on whole columns (vectorised), so `r.age` is the column.
    Arithmetic and comparisons on RowValues work elementwise; for a private table the result
    may only become a filter or a derived column, never leave the table.

    `probe` runs the same computation on values drawn from the columns' *public* domains:
    every category of a categorical column, and the bounds, zero and points between them for a
    numeric one. `sources` holds, aligned with `probe`, the domain value of every column the
    computation read, so that two operands reading the same column are paired on equal values
    (one row has one age) and operands reading different columns meet in their cross product
    (every combination a row could hold, up to PROBE_PAIR_LIMIT). Errors are decided on the
    probe only, so whether a row function fails never depends on the private rows.

    On the rows themselves nothing raises: a row on which an operation fails (0 ** -1, a
    division by zero in Python numbers, an overflow) or whose result would break the public
    size limits (jostle.language.row_limits: a text repeated 10**12 times is never built) is
    marked in `missing` and keeps a placeholder value; `where` drops missing rows and `derive`
    gives them the domain's default. Each row's outcome depends on that row alone, so both
    rules are 1-stable.
    """

    array: np.ndarray
    origin: Span
    column: str
    probe: np.ndarray = field(default_factory=lambda: np.zeros(PROBE_NUMERIC_POINTS))
    private: bool = True
    scope: RowScope | None = None
    sources: tuple[tuple[str, np.ndarray], ...] = ()
    missing: np.ndarray | None = None  # True on rows where an operation failed
    # The column's public categories when this is a categorical column as read (`r.ward`), not
    # a computation on it; comparisons with a value outside them are warned about
    # (jostle.language.operators.category_warning), from the schema alone.
    categories: tuple | None = None
    # On an engine table, the column as an expression (jostle.data.engine.expressions) and no
    # array: row functions then compile to the engine's SQL instead of running here.
    expr: Any = None
    # On an engine table, how to compute this column in memory from a row view of the engine's
    # rows, replaying the elementwise operations that built `expr` (`row_apply` with the same
    # numpy functions), never the row function's own code: when the engine cannot compile the
    # expression (jostle.language.tables._on_engine), a second call of the function would print,
    # warn, charge and draw noise a second time, which the in-memory route does once.
    replay: Any = None

    def __repr__(self) -> str:  # never the rows: reprs reach error messages (issue 11)
        kind = "private column" if self.private else "column"
        return f"<{kind} '{self.column}' of the rows of {self.scope.table_name if self.scope else '?'}>"

    __str__ = __repr__


@dataclass(frozen=True)
class RowView:
    """The `r` a row function receives: `r.col` gives that column's values."""

    table: Table
    span: Span
    scope: RowScope = field(default_factory=lambda: RowScope("?"))

    def __repr__(self) -> str:  # never the rows
        return f"<row of {self.table.name}>"

    __str__ = __repr__

    def column(self, name: str) -> RowValues:
        spec = self.table.schema[name]
        if self.table.relation is not None:
            from jostle.data.engine.expressions import Column

            probe = domain_probe(spec)
            categories = None if _is_numeric_spec(spec) else tuple(spec.values)
            return RowValues(None, self.span, name, probe, self.table.private, self.scope, ((name, probe),),
                             categories=categories, expr=Column(name, spec), replay=lambda view: view.column(name))
        series = self.table.frame[name]
        values = series.to_numpy(dtype=object) if not _is_numeric_spec(spec) else series.to_numpy()
        probe = domain_probe(spec)
        categories = None if _is_numeric_spec(spec) else tuple(spec.values)
        return RowValues(values, self.span, name, probe, self.table.private, self.scope, ((name, probe),),
                         categories=categories)


def _is_numeric_spec(spec: Any) -> bool:
    from jostle.data.schema import Numeric

    return isinstance(spec, Numeric)


def domain_probe(spec: Any) -> np.ndarray:
    """Public values covering a column's domain, typed like the column's data.

    A categorical column contributes all of its categories (an error that only one category
    triggers, such as 1 / code with a code 0, is then always found); a numeric column its
    bounds, zero when it lies between them, and evenly spaced points.
    """
    if _is_numeric_spec(spec):
        points = np.linspace(spec.lo, spec.hi, PROBE_NUMERIC_POINTS)
        if spec.lo <= 0 <= spec.hi:
            points = np.append(points, 0.0)
        if spec.integer:
            points = np.clip(np.round(points), np.ceil(spec.lo), np.floor(spec.hi))
        return np.unique(points)
    probe = np.empty(len(spec.values), dtype=object)
    probe[:] = list(spec.values)
    return probe


def _joint_probe(columns: list[RowValues]) -> tuple[list[np.ndarray], tuple[tuple[str, np.ndarray], ...]]:
    """The operands' probes laid side by side for one elementwise operation, and their sources.

    Operands that read a common column are joined on its value (one row holds one value of
    it); otherwise every combination is tried (a cross product) while there are at most
    PROBE_PAIR_LIMIT of them; beyond that the shorter side is repeated cyclically, which still
    tries every value of every column. The result depends only on public domains.
    """
    import pandas as pd
    frame: pd.DataFrame | None = None
    for k, operand in enumerate(columns):
        part = pd.DataFrame({name: values for name, values in operand.sources})
        part[f"\0{k}"] = np.arange(len(operand.probe))
        if frame is None:
            frame = part
            continue
        shared = [name for name, _ in operand.sources if name in frame.columns]
        if shared:
            frame = frame.merge(part, on=shared, how="inner", sort=False)
        elif len(frame) * len(part) <= PROBE_PAIR_LIMIT:
            frame = frame.merge(part, how="cross")
        else:
            longest = max(len(frame), len(part))
            frame = pd.concat([_cycle(frame, longest), _cycle(part, longest)], axis=1)
        if len(frame) > PROBE_PAIR_LIMIT:  # evenly spaced rows: deterministic, public
            frame = frame.iloc[np.linspace(0, len(frame) - 1, PROBE_PAIR_LIMIT).astype(int)]
    assert frame is not None
    frame = frame.reset_index(drop=True)
    probes = [np.asarray(operand.probe)[frame[f"\0{k}"].to_numpy()] for k, operand in enumerate(columns)]
    sources = tuple((str(name), frame[name].to_numpy()) for name in frame.columns
                    if not str(name).startswith("\0"))
    return probes, sources


def _cycle(frame: pd.DataFrame, length: int) -> pd.DataFrame:
    return frame.iloc[np.resize(np.arange(len(frame)), length)].reset_index(drop=True)


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


@dataclass(frozen=True)
class CellLabels:
    """The public labels of a histogram's cells, which its released vector keeps.

    Attributes:
        labels: One per cell, in the vector's (row-major) order: a category, or a tuple of
            categories for a histogram over several columns.
        shape: (rows, columns) of a 2D histogram; None otherwise.
        axes: The histogram's column names, or None when not known.
    """

    labels: tuple
    shape: tuple[int, ...] | None = None
    axes: tuple[str, ...] | None = None

    def as_pandas(self, values: np.ndarray) -> Any:
        """The vector as a pandas Series indexed by the cells (a DataFrame for a 2D histogram)."""
        import pandas as pd

        values = np.asarray(values)
        axes = list(self.axes) if self.axes is not None else None
        if self.shape is not None and len(self.shape) == 2 and self.shape[0] * self.shape[1] == len(values):
            rows, columns = self.shape
            frame = pd.DataFrame(values.reshape(rows, columns),
                                 index=pd.Index([self.labels[i * columns][0] for i in range(rows)], dtype=object),
                                 columns=pd.Index([self.labels[j][1] for j in range(columns)], dtype=object))
            if axes is not None and len(axes) == 2:
                frame.index.name, frame.columns.name = axes
            return frame
        if self.labels and isinstance(self.labels[0], tuple):
            index = pd.MultiIndex.from_tuples(list(self.labels), names=axes)
        else:
            index = pd.Index(list(self.labels), dtype=object,
                             name=axes[0] if axes is not None and len(axes) == 1 else None)
        return pd.Series(values, index=index)


class VectorLabels:
    """The cell labels of the vectors a session released, remembered by the vector's identity.

    A release returns a plain NumPy vector (arithmetic, indexing and printing treat it as one);
    the labels of the histogram it was released from are public, and are kept here so that
    `Session.eval` can hand a pandas user a labelled Series. Only the released vector itself
    (the object a release returned, however it is passed around) is labelled: a vector
    computed from it is not, since its cells need not be the histogram's any more.
    """

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[weakref.ref, CellLabels]] = {}

    def of(self, value: Any) -> CellLabels | None:
        """The labels of a private histogram or of a labelled released vector, else None."""
        if isinstance(value, Private):
            if value.labels is None or not value.is_vector:
                return None
            return CellLabels(tuple(value.labels), value.shape, value.axes)
        if isinstance(value, np.ndarray):
            entry = self._by_id.get(id(value))
            if entry is not None and entry[0]() is value:
                return entry[1]
        return None

    def remember(self, vector: Any, labels: CellLabels) -> None:
        """Label `vector` (a 1-D array with one value per cell); anything else is left alone."""
        if not isinstance(vector, np.ndarray) or vector.ndim != 1 or len(vector) != len(labels.labels):
            return
        key = id(vector)

        def forget(ref: weakref.ref, key: int = key) -> None:
            entry = self._by_id.get(key)
            if entry is not None and entry[0] is ref:
                del self._by_id[key]

        self._by_id[key] = (weakref.ref(vector, forget), labels)

    def carry(self, result: Any, source: Any) -> None:
        """Give `result` (released or estimated from `source`) the labels of `source`'s cells."""
        labels = self.of(source)
        if labels is not None and result is not source:
            self.remember(result, labels)


DATA_TYPES = (type(None), bool, int, float, str, np.generic, np.ndarray)


def to_python(value: Any, span: Span | None = None, labels: VectorLabels | None = None) -> Any:
    """Convert a public Jostle value to a plain Python / NumPy / pandas object, detached.

    Only data crosses: numbers, strings, booleans, none, released vectors, lists and records of
    them, public tables (as a DataFrame copy), domain declarations and released models (classes
    marked `public_result`, e.g. a trained tree, which holds only what was released). A function,
    bound method, module, option or ChoiceMaker is refused, though public itself: it holds the
    scope it was made in, and that scope may hold private tables (a bound `t.count` holds t),
    which Python code could read.

    Every result is a new object, detached from the session: a released model comes back as a
    copy without its source of randomness or callbacks, and a result that would still reach a
    live part of the session (its randomness, accountant, ledger, interpreter, private data) is
    refused. The rules and their argument are in `jostle.language.detach`.

    A released histogram (a vector `labels` knows) becomes a pandas Series indexed by its cells,
    or a DataFrame (rows x columns) for a 2D histogram; other vectors stay NumPy arrays.

    Raises:
        PrivacyError: the value is, or holds, something that is not data.
    """
    from jostle.language.detach import returned_value

    return returned_value(value, span, labels)


ROW_SCALARS = (bool, int, float, str, np.bool_, np.integer, np.floating, np.str_)



@dataclass(frozen=True, eq=False)
class CorpusValue:
    """A public training corpus for ChoiceMakers (its `task` names the learner family's task)."""

    public_stateless = True  # training copies may share it (jostle.language.training_boundary)

    jostle_type = "corpus"

    corpus: Any
    description: str
    task: str = "histogram"

    def __str__(self) -> str:
        return f"<corpus {self.description}, {len(self.corpus)} {'tasks' if self.task != 'histogram' else 'shapes'}>"
