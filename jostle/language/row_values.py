"""The values a row function works on: a table's rows and columns seen inside `where` and
`derive`, and the public probes that decide, from the domains alone, whether an operation on
them can fail.

`RowView` is the `r` a row function receives; `r.col` is a `RowValues`, the whole column, on
which operators work elementwise (jostle.language.row_apply). A `RowScope` ties every column to
the one call it was read in. `domain_probe` and `_joint_probe` build the public values every
operation is tried on first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from jostle.diagnostics.source import Span

if TYPE_CHECKING:
    import pandas as pd

    from jostle.language.values import Table


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

    def apply(self, function: Any, names: list[str], span: Span, what: str) -> RowValues:
        """A PUBLIC function of this row's columns `names` (a released model's prediction), as one
        row operation (`jostle.language.row_apply.row_apply`: decided on the public probe first,
        each row's failure its own missing value). `function(*arrays)` gives one value per row
        and must be total (the learner kit's models give none on a category they never saw)."""
        from jostle.language.row_apply import row_apply

        return row_apply(function, [self.column(name) for name in names], span, what, op=("public function",))


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
        # Object columns stay object: pandas would otherwise store text as Arrow strings,
        # whose merges and takes copy every string (probes reach 65,536 rows of 12,000-
        # character values near the row limits: a minute per operation, not milliseconds).
        part = pd.DataFrame({name: pd.Series(values, dtype=object) if np.asarray(values).dtype == object
                             else values for name, values in operand.sources})
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


# The scalar types a row function's result may hold, cell by cell (jostle.language.row_apply).
ROW_SCALARS = (bool, int, float, str, np.bool_, np.integer, np.floating, np.str_)
