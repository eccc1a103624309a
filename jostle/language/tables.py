"""Table operations and aggregates, with the stability and sensitivity rules they obey.

Every transformation here is 1-stable under the privacy unit (adding or removing one input
row adds or removes at most one output row, or one row of one part):
  * where(pred), select(cols), derive(name, fn, domain), bin(col, edges): row by row;
  * partition(col) / groupby(cols): each row goes to exactly one part, chosen by its value in
    the column's *public* domain (every domain value gets a part, even an empty one, so the
    set of parts reveals nothing).
Aggregates over a table of stability s (one individual adds or removes at most s rows: 1 for
a row table, 2 for replace_one, k for an entity table after bound_per_key(k); see
jostle.language.entities) are private values with L1 sensitivity:
  * count(t)          s * 1                     (s rows more or less)
  * sum(t, c)         s * max(|lo|, |hi|)      (each added/removed row's clamped value)
  * mean(t, c)        released as sum of (x - mid) [s * (hi - lo) / 2] over count [s]
  * histogram(t, cs)  s in L1 and L2            (each of the s rows lands in one cell; s rows
                                                 in one cell move it by s, the L2 worst case)
An entity table whose rows per key are not bounded (stability None) is refused by every one
of them before anything is charged (entities.need_bounded). The count of a whole replace_one
table (not filtered by where) is public: every neighbour has as many rows.
On a public table they are exact public numbers.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from jostle.diagnostics.errors import JostleRuntimeError, PrivacyError
from jostle.data.schema import Categorical, ColumnSpec, Numeric, Schema
from jostle.language.entities import guard_key_column, need_bounded, partition_is_parallel
from jostle.language.release_names import function_text, part_text, quoted, table_text, with_step
from jostle.language.sensitivity import _normal, exact_sum, refuse, up
from jostle.diagnostics.source import Span
from jostle.language.values import (
    ROW_SCALARS, CellLabels, Private, PrivateMean, RowScope, RowValues, RowView, Table, format_value, type_name,
)


def _need_table(value: Any, what: str, span: Span) -> Table:
    if not isinstance(value, Table):
        raise JostleRuntimeError(f"{what} needs a table, got a {type_name(value)}", span)
    return value


def _need_column(table: Table, name: Any, span: Span, numeric: bool | None = None) -> ColumnSpec:
    if not isinstance(name, str):
        raise JostleRuntimeError(f"a column is named by a string, got a {type_name(name)}", span)
    if name not in table.schema:
        raise JostleRuntimeError(
            f"table '{table.name}'{table.unit_note()} has no column '{name}'", span,
            f"its columns are {table.schema.names}",
        )
    spec = table.schema[name]
    if numeric is True and not isinstance(spec, Numeric):
        raise JostleRuntimeError(
            f"column '{name}' is categorical; this needs a numeric column", span
        )
    if numeric is False and not isinstance(spec, Categorical):
        raise JostleRuntimeError(
            f"column '{name}' is numeric; bin it into public bins first: "
            f"t.bin(\"{name}\", [edges...])", span,
        )
    return spec


def _column_list(columns: Any, span: Span) -> list[str]:
    if isinstance(columns, str):
        return [columns]
    if isinstance(columns, tuple) and all(isinstance(c, str) for c in columns):
        return list(columns)
    raise JostleRuntimeError(
        f"columns are given as a string or a list of strings, got a {type_name(columns)}", span
    )


# ---------------------------------------------------------------- row functions
def row_result(result: Any, scope: RowScope, n: int, span: Span) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A row function's result as (value per row, value on the public probe, missing rows).

    Accepted: a column computed from the row the function was given (same scope), or a
    public scalar (the same for every row). Refused, whatever the rows hold: another table's
    column, a public list or vector (it would be matched to the rows by position, so its
    length would be compared with the private row count), a private aggregate, anything else.
    """
    if isinstance(result, RowValues):
        if result.scope is not scope:
            raise PrivacyError(
                "a row function can only combine the columns of the row it is given", span,
                "this result is a column of another table's rows: compute it in that table's "
                "own row function",
                [(f"the column '{result.column}' comes from the rows of "
                  f"{result.scope.table_name if result.scope else '?'}", result.origin)])
        missing = result.missing if result.missing is not None else np.zeros(n, dtype=bool)
        return np.asarray(result.array), np.asarray(result.probe), missing
    if isinstance(result, (Private, PrivateMean)):
        raise refuse(
            "a private aggregate cannot be used inside a row function (for example as a filter "
            "threshold): thresholds must be public", result, span,
            "use a public threshold, or release the aggregate first and use the released number",
        )
    if isinstance(result, ROW_SCALARS) or result is None:
        dtype = object if isinstance(result, (str, np.str_)) or result is None else None
        return np.full(n, result, dtype=dtype), np.full(1, result, dtype=dtype), np.zeros(n, dtype=bool)
    raise JostleRuntimeError(
        f"a row function must give one value per row, computed from the row's columns, "
        f"got a {'public list' if isinstance(result, (tuple, np.ndarray)) else type_name(result)}", span,
        "return an expression of the row, e.g. lambda r: r.age * 2; a list is never matched to "
        "rows by position")


def _call_on_rows(table: Table, function: Any, span: Span, call: Callable) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Call a row function on a fresh row scope of `table` and check what it gives."""
    scope = RowScope(table.name)
    return row_result(call(function, [RowView(table, span, scope)], span), scope, len(table.frame), span)


def _expression_on_rows(table: Table, function: Any, span: Span, call: Callable) -> tuple[Any, np.ndarray, Callable]:
    """A row function on an engine table: its expression, its public probe, and a `call` that
    gives the same result in memory without calling the function again.

    The same checks as `row_result` (one row scope, no private aggregate, one value per row),
    made on types and scopes only; a public scalar result becomes a literal. The function runs
    once, whichever route computes its rows: the third item hands the in-memory code
    (`_on_engine`) the result replayed on the engine's rows (RowValues.replay), so whatever the
    function itself does (print, warn, release) happens once, as in memory.
    """
    from jostle.data.engine.expressions import Literal

    scope = RowScope(table.name)
    result = call(function, [RowView(table, span, scope)], span)
    if isinstance(result, RowValues) and result.expr is not None and result.scope is scope:
        return result.expr, np.asarray(result.probe), lambda _, views, __: result.replay(views[0])
    _, probe, _ = row_result(result, scope, 0, span)  # raises for anything but a public scalar
    return Literal(result), probe, lambda *_: result


def _on_engine(table: Table, step: tuple, span: Span, schema: Schema | None = None,
               same_rows: bool = True, in_memory: Callable[[Table], Table] | None = None) -> Table:
    """`table` with one more plan step, run on its engine when the step compiles.

    A row function the engine cannot run exactly as the in-memory path would
    (`NotCompilable`; the decision depends on the expression and the public schema only) is
    run by the in-memory code instead (`in_memory`, on the engine's rows collected once) and
    its result stored back on the engine, so a program gives the same values and errors on
    every engine. The note saying so goes to the curator's log only: the route a table takes
    depends on the curator's setting and, under `auto`, on the data's size, which the program
    must not learn (jostle.language.binding).
    """
    from jostle.data.engine.expressions import NotCompilable
    from jostle.data.schema import DATA_LOG

    relation = table.relation.then(step, schema)
    try:
        relation.sql()
    except NotCompilable as reason:
        if in_memory is None:  # pragma: no cover - only row functions can fail to compile
            raise
        DATA_LOG.info("table '%s': a row function uses %s, which the %s engine does not run; "
                      "computed in memory", table.name, reason, relation.engine.name)
        result = in_memory(dataclasses.replace(table, data=table.frame))
        stored = relation.engine.store_conformed(result.frame, result.schema)
        return dataclasses.replace(result, data=stored)
    return table.derived(relation, schema, same_rows)


def where(table: Any, predicate: Any, span: Span, call: Callable) -> Table:
    """Keep the rows for which `predicate(r)` is true (1-stable; missing rows are dropped)."""
    table = _need_table(table, "where", span)
    if table.relation is not None:
        expression, probe, replayed = _expression_on_rows(table, predicate, span, call)
        if probe.dtype != bool:
            raise JostleRuntimeError("a where predicate must give true or false for each row", span,
                                     "compare a column, e.g. lambda r: r.age >= 18")
        return _on_engine(table, ("where", expression), span, same_rows=False,
                          in_memory=lambda rows: where(rows, predicate, span, replayed))
    mask, probe, missing = _call_on_rows(table, predicate, span, call)
    if probe.dtype != bool:  # decided on the public probe only
        raise JostleRuntimeError("a where predicate must give true or false for each row", span,
                                 "compare a column, e.g. lambda r: r.age >= 18")
    keep = _as_bool(mask) & ~missing
    return table.derived(table.frame[keep].reset_index(drop=True), same_rows=False)


def _as_bool(values: np.ndarray) -> np.ndarray:
    """Row values of a predicate whose probe is boolean, as booleans (anything else: false)."""
    if values.dtype == bool:
        return values
    return np.fromiter((v is True or v is np.True_ for v in values.tolist()), dtype=bool, count=len(values))


def select(table: Any, columns: Any, span: Span) -> Table:
    """Keep only the named columns (1-stable)."""
    table = _need_table(table, "select", span)
    names = _column_list(columns, span)
    for name in names:
        _need_column(table, name, span)
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:  # a repeated column would be summed twice under one column's sensitivity
        raise JostleRuntimeError(f"select names the column {', '.join(map(repr, repeated))} more than once", span,
                                 "name each column once")
    if table.relation is not None:
        return _on_engine(table, ("select", tuple(names)), span, table.schema.select(names))
    return table.derived(table.frame[names], table.schema.select(names))


def derive(table: Any, name: Any, function: Any, domain: Any, span: Span, call: Callable) -> Table:
    """Add column `name` = function(r), under the public `domain` (1-stable).

    Numeric results are clamped to the declared bounds (NaN takes the default, or the lower
    bound when none is declared). Categorical results outside the declared values take the
    declared default, which is required: an error here would depend on private data.
    """
    import pandas as pd
    table = _need_table(table, "derive", span)
    if not isinstance(name, str):
        raise JostleRuntimeError("derive needs the new column's name as a string", span)
    if not isinstance(domain, (Numeric, Categorical)):
        raise JostleRuntimeError(
            "derive needs the new column's public domain: numeric(lo, hi) or categorical([...])",
            span,
        )
    if isinstance(domain, Categorical) and domain.default is None:
        raise JostleRuntimeError(
            "a derived categorical column needs a default for values outside its domain", span,
            "write categorical([...], default=...)",
        )
    guard_key_column(table, name, span, "derive")
    if table.relation is not None:
        expression, probe, replayed = _expression_on_rows(table, function, span, call)
        if isinstance(domain, Numeric):
            try:
                probe.astype(float)
            except (TypeError, ValueError, OverflowError):
                raise JostleRuntimeError("a numeric derived column needs numbers", span) from None
        return _on_engine(table, ("derive", name, expression, domain), span, table.schema.with_column(name, domain),
                          in_memory=lambda rows: derive(rows, name, function, domain, span, replayed))
    n = len(table.frame)
    values, probe, missing = _call_on_rows(table, function, span, call)
    if isinstance(domain, Numeric):
        try:
            probe.astype(float)  # decided on public values only: see RowValues
        except (TypeError, ValueError, OverflowError):
            raise JostleRuntimeError("a numeric derived column needs numbers", span) from None
        numbers = _as_floats(values)  # a row that is not a float (e.g. a huge whole number) is NaN
        fallback = domain.default if domain.default is not None else domain.lo
        numbers = np.where(np.isnan(numbers) | missing, fallback, numbers)
        column = domain.conform(numbers)  # clamp (and round, for an integer domain): 1-stable per row
    else:
        # A value in the domain (Python's `in`: 0.0 and False match 0) is stored as the domain's
        # own value, never as the row's (0.0 for 0): what a later row function computes on it
        # (-0 is 0, -0.0 is not) and what an engine stores (the category's code) are then the same.
        declared = {value: value for value in domain.values}
        column = pd.Series([declared.get(v, domain.default) if not gone else domain.default
                            for v, gone in zip(values.tolist(), missing.tolist())], dtype=object)
    frame = table.frame.copy()
    frame[name] = column if n else pd.Series([], dtype=float if isinstance(domain, Numeric) else object)
    return table.derived(frame, table.schema.with_column(name, domain))


def _as_floats(values: np.ndarray) -> np.ndarray:
    """Row values as floats; a row that does not convert (overflow, a string) becomes NaN."""
    try:
        return values.astype(float)
    except (TypeError, ValueError, OverflowError):
        pass

    def one(value: Any) -> float:
        try:
            return float(value)
        except (TypeError, ValueError, OverflowError):
            return math.nan

    return np.fromiter((one(v) for v in values.tolist()), dtype=float, count=len(values))


def bin_column(table: Any, column: Any, edges: Any, span: Span, name: Any = None) -> Table:
    """Replace numeric `column` by public bins given by increasing `edges` (1-stable).

    A value v goes to bin i when edges[i] <= v < edges[i+1] (the last bin is closed); values
    outside [edges[0], edges[-1]] go to the first or last bin. Labels are "[a, b)".
    """
    import pandas as pd
    table = _need_table(table, "bin", span)
    _need_column(table, column, span, numeric=True)
    if not isinstance(edges, (tuple, np.ndarray)) or len(edges) < 2:
        raise JostleRuntimeError("bin needs a list of at least two edges", span)
    if not all(isinstance(e, (int, float, np.integer, np.floating)) and not isinstance(e, bool) for e in edges):
        raise JostleRuntimeError("bin edges must be numbers", span, 'write e.g. t.bin("age", [0, 18, 65, 100])')
    cuts = np.asarray(edges, dtype=float)
    if np.any(np.diff(cuts) <= 0) or not np.all(np.isfinite(cuts)):
        raise JostleRuntimeError("bin edges must be finite and strictly increasing", span)
    labels = tuple(
        f"[{format_value(edges[i])}, {format_value(edges[i + 1])}{']' if i == len(cuts) - 2 else ')'}"
        for i in range(len(cuts) - 1)
    )
    target = column if name is None else name
    if not isinstance(target, str):
        raise JostleRuntimeError("bin's name must be a string", span)
    guard_key_column(table, target, span, "bin")
    if table.relation is not None:
        return _on_engine(table, ("bin", column, tuple(float(c) for c in cuts), target), span,
                          table.schema.with_column(target, Categorical(labels)))
    index = np.clip(np.searchsorted(cuts, table.frame[column].to_numpy(dtype=float), side="right") - 1,
                    0, len(labels) - 1)
    frame = table.frame.copy()
    frame[target] = pd.Series(np.asarray(labels, dtype=object)[index] if len(index) else [], dtype=object)
    return table.derived(frame, table.schema.with_column(target, Categorical(labels)))


# Each row-by-row step writes itself into the result's description (jostle.language.release_names:
# program text and column names only), from the table it was applied to.
def _where_step(predicate: Any, *_: Any) -> str:
    return f"where({function_text(predicate)})"


def _derive_step(name: Any, function: Any, *_: Any) -> str:
    return f"derive({quoted(name)}, {function_text(function)})"


def _described(operation: Callable, step: Callable[..., str]) -> Callable:
    def run(table: Any, *args: Any, **kwargs: Any) -> Any:
        return with_step(operation(table, *args, **kwargs), table, step(*args, **kwargs))

    run.__name__, run.__doc__, run.__wrapped__ = operation.__name__, operation.__doc__, operation  # type: ignore[attr-defined]
    return run


where = _described(where, _where_step)
select = _described(select, lambda columns, *_: f"select({quoted(columns)})")
derive = _described(derive, _derive_step)
bin_column = _described(bin_column, lambda column, *_, **__: f"bin({quoted(column)})")


def partition(table: Any, columns: Any, span: Span) -> tuple[Table, ...]:
    """Split a table into disjoint parts, one per value of the columns' public domains.

    Parts are returned in domain order; each part's `key` is the value (or a list of values
    for several columns). Charges on different parts compose in parallel when one
    individual's rows all land in one part (entities.partition_is_parallel: a row table of
    stability 1, an entity table partitioned by its key); otherwise the parts keep the table's
    node and their charges add up (sequential composition). Parts keep the table's unit and
    stability.
    """
    table = _need_table(table, "partition", span)
    names = _column_list(columns, span)
    if not names:
        raise JostleRuntimeError("partition needs at least one column", span,
                                 'write e.g. partition(t, "region") or partition(t, ["region", "sex"])')
    specs = [_need_column(table, name, span, numeric=False) for name in names]
    keys = list(itertools.product(*(spec.values for spec in specs)))
    if len(keys) > 100_000:
        raise JostleRuntimeError(f"partition would make {len(keys)} parts; the limit is 100000", span)
    group_node = None
    if table.private and partition_is_parallel(table, names):
        from jostle.privacy.budget import ParallelGroup

        group_node = ParallelGroup(table.node, ",".join(names))
    if table.relation is not None:
        parts = []
        for key in keys:
            codes = tuple((n, spec.values.index(k)) for n, spec, k in zip(names, specs, key))
            public_key = key[0] if len(key) == 1 else tuple(key)
            node = group_node.part(format_value(public_key)) if group_node is not None else table.node
            label = ", ".join(f"{n}={format_value(k)}" for n, k in zip(names, key))
            parts.append(Table(table.relation.then(("part", codes)), table.schema, table.private,
                               f"{table.name}[{label}]", node, span, public_key, table.stability,
                               unit=table.unit, written=part_text(table, label)))
        return tuple(parts)
    if len(names) == 1:
        groups = table.frame.groupby(names[0], sort=False).indices
        lookup = {(k,): v for k, v in groups.items()}
    else:
        lookup = table.frame.groupby(names, sort=False).indices
    parts = []
    for key in keys:
        rows = lookup.get(key, np.array([], dtype=int))
        frame = table.frame.iloc[rows].reset_index(drop=True)
        public_key = key[0] if len(key) == 1 else tuple(key)
        node = group_node.part(format_value(public_key)) if group_node is not None else table.node
        label = ", ".join(f"{n}={format_value(k)}" for n, k in zip(names, key))
        parts.append(Table(frame, table.schema, table.private, f"{table.name}[{label}]", node, span,
                           public_key, table.stability, unit=table.unit, written=part_text(table, label)))
    return tuple(parts)


# ---------------------------------------------------------------- aggregates
def count(table: Any, span: Span) -> Private | int:
    table = _need_table(table, "count", span)
    stability = need_bounded(table, "count", span) if table.private else 1
    n = table.relation.engine.count(table.relation) if table.relation is not None else len(table.frame)
    if not table.private or (table.unit.is_replace_one and table.public_rows):
        # Under replace_one every neighbour has as many rows; public_rows says the rows are
        # still all the bound rows (no where, no part), so their number is public.
        return n
    return Private(n, float(stability), float(stability), span,
                   f"count({table_text(table)})", table.node, integer=True, direction=1)


def total(table: Any, column: Any, span: Span) -> Private | float:
    table = _need_table(table, "sum", span)
    spec = _need_column(table, column, span, numeric=True)
    stability = need_bounded(table, "sum", span) if table.private else 1
    if table.relation is not None:
        exact = _engine_sum(table, column)
        if not table.private:
            return float(exact)
    else:
        values = table.frame[column].to_numpy(dtype=float)
        if not table.private:
            return float(values.sum())
        exact = _bounded_exact_sum(values, spec)
    # Summed exactly (a float sum's rounding would move it by more than the bound, Casacuberta
    # et al. 2022); the bound, rounded up, is then the exact sum's sensitivity.
    sensitivity = up(stability * Fraction(spec.magnitude))
    direction = 1 if spec.lo >= 0 else -1 if spec.hi <= 0 else 0
    return Private(exact, sensitivity, sensitivity, span, f"sum({table_text(table)}, '{column}')",
                   table.node, integer=spec.integer, direction=direction,
                   clipping=f"each value of '{column}' is clamped to its declared [{spec.lo:g}, {spec.hi:g}]; "
                            "the bias this causes is not in the interval")


def mean(table: Any, column: Any, span: Span) -> PrivateMean | float | None:
    table = _need_table(table, "mean", span)
    spec = _need_column(table, column, span, numeric=True)
    stability = need_bounded(table, "mean", span) if table.private else 1
    if table.relation is not None:
        exact, n = _engine_sum(table, column), table.relation.engine.count(table.relation)
        if not table.private:
            return float(exact) / n if n else None
    else:
        values = table.frame[column].to_numpy(dtype=float)
        if not table.private:
            return float(values.mean()) if len(values) else None
        exact, n = _bounded_exact_sum(values, spec), len(values)
    midpoint = (spec.lo + spec.hi) / 2
    # sum of (x - midpoint), exactly (see total); jostle.language.mechanisms bounds each term by
    # max(hi - midpoint, midpoint - lo) in exact rationals.
    return PrivateMean(exact - n * Fraction(midpoint), n, spec.lo, spec.hi,
                       span, f"mean({table_text(table)}, '{column}')", table.node, stability)


def _bounded_exact_sum(values: np.ndarray, spec: Numeric) -> Any:
    """`exact_sum(values)` (the same int or Fraction), faster for a column within its public bound.

    The split of `jostle.data.engine.duckdb_engine.DuckDBEngine.sum_parts`, in numpy: with
    2^T > max(|lo|, |hi|), each x with |x| < 2^T is x = q1 2^(T-62) + q2 2^(T-124) + r2, every
    step exact (products by powers of two that are normal doubles, truncations to whole numbers
    of at most 53 bits, subtractions of x's own leading bits). q1 and q2 (|q| < 2^62) are summed
    exactly as int64 halves of 31 bits (no overflow below 2^31 rows); what is left (r2 != 0, a
    value outside the bound, or a value that is not finite) goes to `exact_sum`, which also
    raises for what is not finite, as before. No sort of the column (exact_sum's argsort).
    """
    top = math.frexp(max(abs(float(spec.lo)), abs(float(spec.hi))))[1]  # 2^(top-1) <= bound < 2^top
    if values.dtype.kind != "f" or not -890 <= top <= 960 or len(values) >= 2 ** 31:
        return exact_sum(values)
    with np.errstate(invalid="ignore", over="ignore"):
        inside = np.abs(values) < 2.0 ** top  # False for NaN
        q1 = np.where(inside, np.trunc(values * 2.0 ** (62 - top)), 0.0).astype(np.int64)
        r1 = np.where(inside, values - q1.astype(float) * 2.0 ** (top - 62), values)
        near = np.abs(r1) < 2.0 ** (top - 62)
        q2 = np.where(near, np.trunc(r1 * 2.0 ** (124 - top)), 0.0).astype(np.int64)
        r2 = np.where(near, r1 - q2.astype(float) * 2.0 ** (top - 124), r1)
    rest = r2[r2 != 0]  # NaN != 0 too: exact_sum raises for it, as it did for the whole column
    total = Fraction(0)
    for whole, exponent in ((q1, top - 62), (q2, top - 124)):
        halves = (int((whole >> 31).sum()) << 31) + int((whole & ((1 << 31) - 1)).sum())
        total += Fraction(halves) * Fraction(2) ** exponent
    return _normal(total + Fraction(exact_sum(rest)))


def _engine_sum(table: Table, column: str) -> Any:
    """The exact sum of an engine table's numeric column (an int or a Fraction, as exact_sum gives)."""
    total = Fraction(0)
    for exponent, mantissas in table.relation.engine.sum_parts(table.relation, column):
        total += Fraction(mantissas) * Fraction(2) ** exponent
    return _normal(total)


def histogram_cells(table: Any, columns: Any, span: Span) -> CellLabels:
    """The public labels of `histogram(table, columns)`'s cells (row-major), its shape and axes."""
    table = _need_table(table, "histogram", span)
    names = _column_list(columns, span)
    specs = [_need_column(table, name, span, numeric=False) for name in names]
    return CellLabels(_cell_labels(specs), tuple(len(s.values) for s in specs) if len(specs) == 2 else None,
                      tuple(names))


def _cell_labels(specs: list[Categorical]) -> tuple:
    return tuple(key[0] if len(key) == 1 else tuple(key)
                 for key in itertools.product(*(spec.values for spec in specs)))


def histogram(table: Any, columns: Any, span: Span) -> Private | np.ndarray:
    """Counts over the product of the columns' public domains, in row-major order."""
    table = _need_table(table, "histogram", span)
    names = _column_list(columns, span)
    if not names:
        raise JostleRuntimeError("histogram needs at least one column", span,
                                 'write e.g. histogram(t, "region") or histogram(t, ["region", "sex"])')
    specs = [_need_column(table, name, span, numeric=False) for name in names]
    stability = need_bounded(table, "histogram", span) if table.private else 1
    sizes = [len(spec.values) for spec in specs]
    cells = int(np.prod(sizes))
    if cells > 10_000_000:
        raise JostleRuntimeError(f"the histogram would have {cells} cells; the limit is 10 million", span)
    if table.relation is not None:
        counts = table.relation.engine.histogram(table.relation, names, sizes)
    else:
        counts = _histogram_in_memory(table, names, specs, sizes, cells)
    if not table.private:
        return counts
    return Private(counts, float(stability), float(stability), span,
                   f"histogram({table_text(table)}, {names})", table.node, integer=True, labels=_cell_labels(specs),
                   direction=1, shape=tuple(sizes) if len(sizes) == 2 else None, axes=tuple(names))


def _histogram_in_memory(table: Table, names: list[str], specs: list[Categorical], sizes: list[int],
                         cells: int) -> np.ndarray:
    """Counts per cell. Equal cells are grouped by pandas' hashing, which merges only cells that
    are == with equal hashes, as a dict does; each distinct cell then takes its position by a
    dict lookup, once, not once per row: the same counts as a lookup per row."""
    positions = [{value: i for i, value in enumerate(spec.values)} for spec in specs]
    if len(names) == 1:
        counts = np.zeros(cells, dtype=np.int64)
        tallies = table.frame[names[0]].value_counts(sort=False, dropna=False)
        for value, tally in zip(tallies.index, tallies.to_numpy().tolist()):
            counts[positions[0][value]] += tally
        return counts
    import pandas as pd

    flat = np.zeros(len(table.frame), dtype=np.int64)
    for name, position, size in zip(names, positions, sizes):
        groups, distinct = pd.factorize(table.frame[name], use_na_sentinel=False)
        codes = np.fromiter((position[v] for v in distinct), dtype=np.int64, count=len(distinct))[groups]
        flat = flat * size + codes
    return np.bincount(flat, minlength=cells).astype(np.int64)


def check_public_threshold(value: Any, span: Span) -> None:
    if isinstance(value, (Private, PrivateMean)):
        raise refuse("a private value cannot be a filter threshold", value, span)


__all__ = [
    "where", "select", "derive", "bin_column", "partition", "count", "total", "mean",
    "histogram", "Schema", "PrivacyError",
]
