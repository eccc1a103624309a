"""Run-time values of the Jostle evaluator.

Public values are plain Python / NumPy objects: int, float, str, bool, None, tuples (Jostle
lists), numpy arrays (released vectors), plus the small classes below (records, functions,
modules, tables). *Private* values (`Private`, `PrivateMean`, private `Table`s and `RowValues`)
wrap data that must not leave the evaluator except through a release; the evaluator refuses
every other route, and `describe()` shows only what is public about them (shape, sensitivity,
where they were made).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import pandas as pd

from jostle.budget import DataNode
from jostle.schema import Schema
from jostle.source import Span

# Whole numbers are Python ints, which have no size limit: a program could build one so large
# that converting it to a float overflows, printing it fails, or computing it exhausts memory.
# Literals and arithmetic results are therefore kept below 10**308, which every float holds.
MAX_WHOLE_DIGITS = 308
MAX_WHOLE = 10**MAX_WHOLE_DIGITS

if TYPE_CHECKING:
    from jostle import ast_nodes as A


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


@dataclass(eq=False)
class Closure:
    """A user function (`def` or `lambda`) with the environment it closes over."""

    name: str
    params: tuple[A.Param, ...]
    body: tuple[A.Stmt, ...] | A.Expr
    env: Any  # jostle.evaluator.Environment
    span: Span
    defaults: tuple[Any, ...] = ()


@dataclass(eq=False)
class Builtin:
    """A built-in function from the registry (see jostle.builtins)."""

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


# ---------------------------------------------------------------- private values
@dataclass(frozen=True, eq=False)
class Private:
    """A private number or vector and what is public about it.

    Attributes:
        value: The hidden float, int or numpy array. Never shown, printed or returned.
        l1: Its L1 sensitivity: the most the value (or the vector's L1 norm of change) can move
            when one row is added to or removed from the private data.
        l2: Its L2 sensitivity (<= l1), used by the Gaussian mechanism.
        origin: Where it was made (for error messages).
        what: How it was made, e.g. "count(patients)".
        node: The data it depends on (for parallel composition over partitions).
        integer: True when every coordinate is an integer and moves by integers (counts).
        labels: Public labels of a vector's cells (a histogram's domain), or None.
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

    @property
    def is_vector(self) -> bool:
        return isinstance(self.value, np.ndarray)

    @property
    def length(self) -> int:
        return len(self.value) if self.is_vector else 1

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

    def describe(self) -> str:
        return f"<private mean in [{self.lo:g}, {self.hi:g}], made at {self.origin.short} by {self.what}>"


@dataclass(frozen=True, eq=False)
class Table:
    """A table: a pandas frame under a public schema.

    Attributes:
        frame: The rows (hidden when private).
        schema: The public schema: column names and domains.
        private: Whether rows are private data.
        name: The name it was bound or loaded under (for messages).
        node: The part of the data tree it belongs to (partitions make new nodes).
        origin: Where it was made.
        key: For a part of a partition, its public key; otherwise None.
        stability: How many rows of the table one input row can change (1 for every
            operation Jostle has: where, select, derive, bin and partition are 1-stable).
        public_rows: The binding declared the number of rows public (needed only by
            randomized_response; see jostle.mechanisms).
    """

    frame: pd.DataFrame = field(repr=False)
    schema: Schema
    private: bool
    name: str
    node: DataNode
    origin: Span
    key: Any = None
    stability: int = 1
    public_rows: bool = False

    def derived(self, frame: pd.DataFrame, schema: Schema | None = None, same_rows: bool = True) -> Table:
        """A table computed row by row from this one (same data node, same stability).

        Args:
            frame: The new rows.
            schema: The new schema, if columns changed.
            same_rows: False when rows were dropped (where): a public row count is then lost.
        """
        return Table(frame, schema or self.schema, self.private, self.name, self.node,
                     self.origin, self.key, self.stability, self.public_rows and same_rows)

    def describe(self) -> str:
        kind = "private" if self.private else "public"
        key = f" part {self.key!r} of" if self.key is not None else ""
        size = "" if self.private else f", {len(self.frame)} rows"
        return f"<{kind}{key} table {self.name}{size} {self.schema.describe()}>"


PROBE_NUMERIC_POINTS = 9
PROBE_PAIR_LIMIT = 1 << 16


@dataclass(frozen=True, eq=False)
class RowValues:
    """A table's column seen inside a row function (where/derive).

    Row functions are evaluated once on whole columns (vectorised), so `r.age` is the column.
    Arithmetic and comparisons on RowValues work elementwise; for a private table the result
    may only become a filter or a derived column, never leave the table.

    `probe` runs the same computation on values drawn from the column's *public* domain:
    every category of a categorical column, and the bounds, zero and points between them for a
    numeric one. Type errors are decided on the probe first, so whether a row function fails
    does not depend on the private rows (for example on whether a part of a partition is empty,
    or on which categories the rows hold). Categorical columns are handled as object arrays in
    both the probe and the data, so an operation behaves identically on either.
    """

    array: np.ndarray
    origin: Span
    column: str
    probe: np.ndarray = field(default_factory=lambda: np.zeros(PROBE_NUMERIC_POINTS))
    private: bool = True


@dataclass(frozen=True)
class RowView:
    """The `r` a row function receives: `r.col` gives that column's values."""

    table: Table
    span: Span

    def column(self, name: str) -> RowValues:
        spec = self.table.schema[name]
        series = self.table.frame[name]
        values = series.to_numpy(dtype=object) if not _is_numeric_spec(spec) else series.to_numpy()
        return RowValues(values, self.span, name, domain_probe(spec), self.table.private)


def _is_numeric_spec(spec: Any) -> bool:
    from jostle.schema import Numeric

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
        return points
    probe = np.empty(len(spec.values), dtype=object)
    probe[:] = list(spec.values)
    return probe


def _aligned_probes(probes: list[np.ndarray]) -> list[np.ndarray]:
    """Probes of several columns laid side by side for one elementwise operation.

    With two probes whose lengths multiply to at most PROBE_PAIR_LIMIT every pair of domain
    values is tried (a cross product); otherwise (or with more columns) the shorter probes are
    repeated cyclically to the longest length, so every value of every column is still tried.
    """
    lengths = [len(p) for p in probes]
    if len(set(lengths)) <= 1:
        return probes
    if len(probes) == 2 and lengths[0] * lengths[1] <= PROBE_PAIR_LIMIT:
        return [np.repeat(probes[0], lengths[1]), np.tile(probes[1], lengths[0])]
    longest = max(lengths)
    return [p if len(p) == longest else np.resize(p, longest) for p in probes]


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


def to_python(value: Any) -> Any:
    """Convert a public Jostle value to a plain Python / NumPy / pandas object."""
    if isinstance(value, tuple):
        return [to_python(v) for v in value]
    if isinstance(value, Record):
        return {k: to_python(v) for k, v in value.fields}
    if isinstance(value, Table):
        return value.frame.copy()
    if isinstance(value, np.generic):
        return value.item()
    return value


def row_apply(function: Callable[..., Any], operands: list[Any], span: Span, what: str) -> RowValues:
    """Apply an elementwise `function` to private columns (and public operands).

    The function runs on the operands' public probes first: if it fails there, the error is
    raised whatever the private rows hold. Only then does it run on the private columns; a
    failure there (possible only for categorical domains mixing types) gets the same generic
    message, naming no row or value.
    """
    from jostle.errors import JostleRuntimeError

    columns = [o for o in operands if isinstance(o, RowValues)]
    message = f"{what} cannot be applied to column '{columns[0].column}' (type mismatch)"
    probes = iter(_aligned_probes([o.probe for o in columns]))
    probe_operands = [next(probes) if isinstance(o, RowValues) else o for o in operands]
    with np.errstate(all="ignore"):
        try:
            probe = np.asarray(function(*probe_operands))
        except (TypeError, ValueError, ZeroDivisionError, AttributeError, OverflowError):
            raise JostleRuntimeError(message, span) from None
        try:
            result = np.asarray(function(*[o.array if isinstance(o, RowValues) else o for o in operands]))
        except (TypeError, ValueError, ZeroDivisionError, AttributeError, OverflowError):
            raise JostleRuntimeError(message, span) from None
    return RowValues(result, span, columns[0].column, probe, any(o.private for o in columns))
