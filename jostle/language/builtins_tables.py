"""Built-ins that make schemas and tables and work on them: `numeric` and `categorical`, a
program's `load` and `load_public`, the table operations (where, select, derive, bin,
partition, groupby, join, bound_per_key), the aggregates that make private values (count,
count_keys, histogram) and the public facts of a table (stability, bounds, domain, rows).

Registered in the language's core registry (jostle.language.builtin_registry.CORE) when
imported; jostle.language.builtins imports this module.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jostle.data.schema import Categorical, Numeric, conform, numbers_where_possible, read_csv_file
from jostle.diagnostics.errors import DataError, JostleRuntimeError
from jostle.language import private_files, tables
from jostle.language.builtin_registry import VARIADIC, builtin
from jostle.language.builtin_registry import list_argument as _sequence, number_argument as _number
from jostle.language.builtin_registry import refuse_private_arguments as _refuse_private
from jostle.language.loading import _resolve_path, infer_public_schema, make_private_table, schema_from_value
from jostle.language.values import Table, format_value, type_name


# ---------------------------------------------------------------- schemas and data
@builtin("numeric", 2, keywords=("default", "integer"), privacy="data",
         doc="numeric(lo, hi, default=none, integer=false): a numeric column's public bounds")
def _numeric(interp, span, lo, hi, default=None, integer=False):
    _refuse_private("numeric", (lo, hi, default), span, "a column's bounds must be public")
    if default is not None:
        _number(default, "numeric", span)
    try:
        return Numeric(_number(lo, "numeric", span), _number(hi, "numeric", span), default, bool(integer))
    except DataError as error:
        error.span = span
        raise


@builtin("categorical", 1, keywords=("default",), privacy="data",
         doc="categorical([values...], default=none): a categorical column's public values")
def _categorical(interp, span, values, default=None):
    _refuse_private("categorical", (values, default), span, "a column's categories must be public")
    if isinstance(values, str):  # not the list of its characters
        raise JostleRuntimeError("categorical() needs a list of values, got a string", span,
                                 f'write categorical([{values!r}]) for a single category')
    try:
        return Categorical(tuple(_sequence(values, "categorical", span)), default)
    except DataError as error:
        error.span = span
        raise


@builtin("load", 2, keywords=("public_rows",), privacy="data",
         doc='load("file.csv" or "file.parquet", {col: numeric(lo, hi), ...}) reads a private table under a public schema')
def _load(interp, span, path, schema, public_rows=False):
    """A private table read by the program, under the program's schema.

    The program's author chose the file and the schema, so the table is read totally: records
    the CSV reader cannot use and rows that break the schema are dropped, and no error depends
    on the rows (jostle.data.schema). The exception is public_rows=true, the program's claim that
    the row count is public: it is refused for data registered as private in the session
    (`private_files.read_for_program`), so the file is one the program could read with
    load_public, and it is read strictly, like a public file (dropping rows would make the
    count private). Where the rows go (memory or an engine) is decided by the session's
    setting and the file's kind, never its size (jostle.language.binding).
    """
    _refuse_private("load", (path, schema, public_rows), span)
    schema = schema_from_value(schema, span)
    file = _resolve_path(interp, span, path)
    if not isinstance(public_rows, bool):
        raise JostleRuntimeError(f"public_rows must be true or false, got {format_value(public_rows)}", span)
    declared_public = public_rows
    name = Path(path).stem
    rows = private_files.read_for_program(interp, span, file, name, declared_public)
    table = make_private_table(interp, name, rows.cells, schema, span, declared_public, strict=declared_public)
    private_files.register_private_rows(interp, name, rows, by_curator=False, unit=table.unit)
    return table


@builtin("load_public", 1, 2, privacy="data",
         doc='load_public("file.csv" or "file.parquet"[, schema]) reads a public table (its values are not protected)')
def _load_public(interp, span, path, schema=None):
    file = _resolve_path(interp, span, path)
    from jostle.language.binding import is_parquet, read_parquet_frame

    private_files.refuse_registered_private_file(interp, span, file, None, "load_public()")
    try:
        if is_parquet(file):
            frame = read_parquet_frame(file)
            frame = frame.astype(object).where(frame.notna(), None) if schema is not None else frame
        else:
            frame = read_csv_file(file).checked()  # a public file: its problems may be named
    except DataError as error:
        error.span = span
        raise
    try:
        if schema is not None:
            schema = schema_from_value(schema, span)
            frame = conform(frame, schema, Path(path).stem)
        else:
            frame = numbers_where_possible(frame) if len(frame) else frame
            schema = infer_public_schema(frame)
    except DataError as error:
        error.span = error.span or span
        raise
    return Table(frame, schema, False, Path(path).stem, interp.accountant.root, span)


# ---------------------------------------------------------------- table operations
@builtin("where", 2, privacy="table", doc="where(t, lambda r: condition) keeps matching rows")
def _where(interp, span, table, predicate):
    return tables.where(table, predicate, span, interp.call)


@builtin("select", 2, VARIADIC, privacy="table", doc='select(t, "col", ...) or select(t, ["a", "b"])')
def _select(interp, span, table, *columns):
    names = columns[0] if len(columns) == 1 else tuple(columns)
    return tables.select(table, names, span)


@builtin("derive", 4, privacy="table",
         doc='derive(t, "name", lambda r: ..., numeric(lo, hi)) adds a column with a public domain')
def _derive(interp, span, table, name, function, domain):
    return tables.derive(table, name, function, domain, span, interp.call)


@builtin("bin", 3, keywords=("name",), privacy="table",
         doc='bin(t, "col", [edges...], name=none) turns a numeric column into public bins')
def _bin(interp, span, table, column, edges, name=None):
    _refuse_private("bin", (edges,), span, "bin edges must be public")
    return tables.bin_column(table, column, edges, span, name)


@builtin("partition", 2, privacy="table",
         doc='partition(t, "col"): one part per public value; parts compose in parallel')
def _partition(interp, span, table, columns):
    parts = tables.partition(table, columns, span)
    interp.vector_labels.remember_parts(parts, columns)  # a release over the parts is labelled by their keys
    return parts


@builtin("groupby", 2, VARIADIC, privacy="table", doc='groupby(t, "a", "b", ...) like partition over several columns')
def _groupby(interp, span, table, *columns):
    names = columns[0] if len(columns) == 1 else tuple(columns)
    parts = tables.partition(table, names, span)
    interp.vector_labels.remember_parts(parts, names)
    return parts


@builtin("join", 2, 3, keywords=("on",), privacy="table",
         doc='join(a, b, on="key") or a.join(b, on="key"): the inner join on one column (jostle.language.joins)')
def _join(interp, span, left, right, on=None):
    from jostle.language.joins import join

    _refuse_private("join", (on,), span, "the join column must be public")
    return join(left, right, on, span)


@builtin("count", 1, privacy="aggregate", doc="count(t): rows of t (private: sensitivity 1)")
def _count(interp, span, table):
    return tables.count(table, span)


@builtin("bound_per_key", 2, privacy="table",
         doc="bound_per_key(t, k): at most k rows of each entity of an entity table (its stability becomes k)")
def _bound_per_key(interp, span, table, k):
    from jostle.language import entities

    return entities.bound_per_key(table, k, span)


@builtin("count_keys", 1, privacy="aggregate",
         doc="count_keys(t): the number of entities of an entity table (private: sensitivity 1)")
def _count_keys(interp, span, table):
    from jostle.language import entities

    return entities.count_keys(table, span)


@builtin("histogram", 2, VARIADIC, privacy="aggregate",
         doc='histogram(t, "col", ...): counts over the public domain (sensitivity 1)')
def _histogram(interp, span, table, *columns):
    names = columns[0] if len(columns) == 1 else tuple(columns)
    counts = tables.histogram(table, names, span)
    if isinstance(counts, np.ndarray):  # a public table's exact counts: label them as a release is
        interp.vector_labels.remember(counts, tables.histogram_cells(table, names, span))
    return counts


@builtin("stability", 1, privacy="data",
         doc="stability(t): how many rows of t one individual can add or remove (public; none before bound_per_key)")
def _stability(interp, span, table):
    """A table's stability is public: it follows from the unit and the operations alone
    (jostle.language.entities), never from the rows."""
    if not isinstance(table, Table):
        raise JostleRuntimeError(f"stability() needs a table, got a {type_name(table)}", span)
    return table.stability if table.private else 1


@builtin("bounds", 2, privacy="data", doc='bounds(t, "col"): the public [lo, hi] a numeric column was declared with')
def _bounds(interp, span, table, column):
    if not isinstance(table, Table):
        raise JostleRuntimeError(f"bounds() needs a table, got a {type_name(table)}", span)
    spec = tables._need_column(table, column, span, numeric=True)
    return (spec.lo, spec.hi)


@builtin("domain", 2, privacy="data", doc='domain(t, "col"): the public values a categorical column was declared with')
def _domain(interp, span, table, column):
    if not isinstance(table, Table):
        raise JostleRuntimeError(f"domain() needs a table, got a {type_name(table)}", span)
    spec = tables._need_column(table, column, span, numeric=False)
    return tuple(spec.values)


@builtin("rows", 1, doc="rows(t): the rows of a public table as records")
def _rows(interp, span, table):
    if not isinstance(table, Table):
        raise JostleRuntimeError(f"rows() needs a table, got a {type_name(table)}", span)
    return tuple(interp._iterate(table, span))
