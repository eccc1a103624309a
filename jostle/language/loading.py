"""Private and public tables from data: schemas written in a program, and the private table a
binding or a program's `load` makes (under its privacy unit).

The `load` and `load_public` built-ins (jostle.language.builtins_tables) and
`Session.bind_private` call these; none of them is a built-in itself. Reading a private file,
its ledger entry, and the rules that keep a program from reading registered private data again
as public or under another unit are in jostle.language.private_files.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from jostle.data.schema import Categorical, Numeric, Schema, can_drop_rows, conform
from jostle.diagnostics.errors import DataError, JostleRuntimeError
from jostle.diagnostics.source import Span
from jostle.language.values import Record, Table, type_name
from jostle.language.private_files import (  # noqa: F401 (re-exported: they lived here)
    _curator_source, _refuse_curator_file_under_another_unit, refuse_registered_private_file, register_loaded_file,
)

if TYPE_CHECKING:
    import pandas as pd


def schema_from_value(value: Any, span: Span) -> Schema:
    """A Jostle record {col: numeric(...), ...} (or a Schema) as a Schema."""
    if isinstance(value, Schema):
        return value
    if not isinstance(value, Record):
        raise JostleRuntimeError(
            f"a schema is a record of column domains, got a {type_name(value)}", span,
            'write {age: numeric(0, 120), sex: categorical(["F", "M"])}',
        )
    for name, spec in value.fields:
        if not isinstance(spec, (Numeric, Categorical)):
            raise JostleRuntimeError(f"column '{name}' must be declared with numeric(...) or categorical(...)", span)
    try:
        return Schema.of(value.as_dict())
    except DataError as error:
        error.span = error.span or span
        raise


def _resolve_path(interp, span: Span, path: Any) -> Path:
    if not isinstance(path, str):
        raise JostleRuntimeError(f"a file path is a string, got a {type_name(path)}", span)
    candidate = Path(path)
    if not candidate.is_absolute() and not span.source.name.startswith("<"):
        beside = Path(span.source.name).parent / candidate
        if beside.exists():
            return beside
    return candidate


def make_private_table(interp, name: str, frame: Any, schema: Schema, span: Span,
                       public_rows: bool = False, strict: bool = True, unit: Any = None) -> Table:
    """A private table: raw rows conformed to `schema` (see jostle.data.schema.conform), bound
    under its privacy unit.

    Args:
        frame: The raw rows: a pandas frame (the in-memory route) or an `EngineSource`
            (jostle.language.binding), conformed on its engine by the same rules in SQL.
        public_rows: The row count is public: the table is bound under the unit replace_one
            (the same declaration; jostle.language.entities.table_unit).
        strict: True when the curator gave the schema (a breaking value is a DataError naming
            it, raised to the curator at bind time); False when the program declared it (such
            rows are dropped and nothing about them reaches the program).
        unit: The privacy unit (a PrivacyUnit or its text, jostle.privacy.units.parse_unit);
            None for row, or replace_one with public_rows. An entity key is checked against the
            schema (jostle.language.entities.check_entity_key); the table's node is the
            accountant's root for the unit and its stability the unit's (2 for replace_one,
            unbounded for an entity until bound_per_key).

    Raises:
        DataError: The rows break the curator's schema, or the entity key is not a usable column.
        UsageError: The unit is not one Jostle knows, or contradicts public_rows.
    """
    from jostle.diagnostics.errors import UsageError
    from jostle.language import entities
    from jostle.privacy.units import parse_unit

    try:
        unit, public_rows = entities.table_unit(None if unit is None else parse_unit(unit), public_rows)
    except ValueError as error:
        raise UsageError(f"table '{name}': {error}",
                         hint="the units are row (the default), entity:KEY and replace_one (the same as "
                         "public_rows=True)") from None
    if unit.is_entity:
        entities.check_entity_key(schema, unit, name, span)
    if public_rows and not strict:
        refuse_dropping_public_rows(name, schema, span)
    declared_schema, schema = schema, entities.conform_schema(schema, unit)
    frame = entities.canonical_key_rows(frame, declared_schema, unit, strict)
    from jostle.data.progress import Steps

    try:
        with Steps(f"binding '{name}' (reading, conforming to its schema)", total=1) as steps:
            conformed = _conformed(frame, schema, name, strict)
            steps.advance()
        conformed = entities.keep_keys_in_domain(conformed, declared_schema, unit, name, strict, span)
    except DataError as error:
        error.span = error.span or span
        entities.key_error_hint(error, unit)
        raise
    return Table(conformed, declared_schema, True, name, interp.accountant.root_for(unit), span,
                 stability=entities.initial_stability(unit), public_rows=public_rows, unit=unit)


def _conformed(frame: Any, schema: Schema, name: str, strict: bool) -> Any:
    """Raw rows conformed to `schema`: on their engine, or in memory (`make_private_table`)."""
    from jostle.language.binding import EngineSource

    if isinstance(frame, EngineSource):
        # Every source is conformed once and stored on the engine (DuckDB's buffer manager
        # spills beyond its memory limit, so this stays out of core). A Parquet file was kept
        # as a view, conformed again by every query: a noisy count per region of 10^7 rows
        # took 1.7 s against 0.03 s for the same GROUP BY on the file, and a view would see
        # the file change after its fingerprint was taken.
        return frame.engine.bind(frame.view, schema, name, strict=strict, materialise=True)
    return conform(frame, schema, name, strict=strict)


def refuse_dropping_public_rows(name: str, schema: Schema, span: Span) -> None:
    """A table whose row count is public cannot take a program's schema that may drop rows.

    Under a program's schema a row that breaks a column without a default is dropped, which
    makes the number of rows private. The refusal depends only on the schema, never on the rows.
    """
    columns = can_drop_rows(schema)
    if columns:
        raise DataError(
            f"the number of rows of '{name}' is public, but the schema declared here would drop "
            f"the rows whose {', '.join(repr(c) for c in columns)} break it, which would make "
            "the number private", span,
            "declare a default for each of those columns, e.g. categorical([...], default=...) "
            "or numeric(lo, hi, default=...), so that every row is kept",
        )


def infer_public_schema(frame: pd.DataFrame) -> Schema:
    """Domains of a *public* table read off its contents (never done for private tables)."""
    import pandas as pd
    columns = {}
    for name in frame.columns:
        series = frame[name]
        if pd.api.types.is_numeric_dtype(series) and len(series):
            columns[str(name)] = Numeric(float(series.min()), float(series.max()))
        else:
            columns[str(name)] = Categorical(tuple(dict.fromkeys(series.tolist())) or ("",))
    return Schema.of(columns)


def bind_declared_table(interp, name: str, schema_value: Any, span: Span, per: str | None = None) -> Table:
    """`private NAME: schema [per KEY]` -- the table bound from outside under NAME, with this schema.

    The program declared the schema, so the rows are conformed totally (jostle.data.schema.conform
    with strict=False): nothing the program sees depends on whether or how rows fit it. The
    unit is the curator's (bind_private(..., unit=), --unit, the schema file); `per KEY`
    restates it and is refused when it differs (jostle.language.entities.declared_unit_problem).
    """
    from jostle.language.entities import declared_unit_problem
    from jostle.privacy.units import REPLACE_ONE, ROW

    schema = schema_from_value(schema_value, span)
    if name in interp.bound_tables:
        table = interp.bound_tables[name]
        declared_unit_problem(table.unit, per, name, span)
        if table.schema != schema:
            raise DataError(
                f"the schema declared for '{name}' differs from the one it was bound with", span,
                f"bound with {table.schema.describe()}",
            )
        return table
    if name not in interp.bindings:
        raise DataError(
            f"no data is bound to the private table '{name}'", span,
            f"run with --data {name}=FILE.csv, or call session.bind_private(\"{name}\", frame, schema)",
        )
    frame, _, public_rows = interp.bindings[name][:3]
    # The curator's unit (a PrivacyUnit, checked by Session.bind_private), the binding's fifth item.
    unit = interp.bindings[name][4] if len(interp.bindings[name]) > 4 else None
    declared_unit_problem(unit if unit is not None else REPLACE_ONE if public_rows else ROW, per, name, span)
    table = make_private_table(interp, name, frame, schema, span, public_rows, strict=False, unit=unit)
    interp.bound_tables[name] = table
    return table
