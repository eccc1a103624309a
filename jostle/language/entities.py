"""Privacy units on tables: entity keys, bounding the rows per entity, counting entities.

A private table carries the unit its curator bound it under (`Table.unit`, jostle.privacy.units)
and a stability (`Table.stability`): how many of its rows one individual can add or remove.

  * row: stability 1 (where, select, derive, bin and partition are 1-stable);
  * replace_one: stability 2. A neighbour replaces one row, which is one row removed and one
    added, so a release calibrated for two rows added or removed covers it (group privacy of
    size 2, jostle.privacy.conversions.group_privacy); the number of rows of the whole,
    unfiltered table is the same on every neighbour and so public (`tables.count`);
  * entity(key): stability None (unbounded) until `bound_per_key(k)`: one entity may own any
    number of rows, so no row-level aggregate has a sensitivity and every one of them is
    refused (`need_bounded`) before anything is charged. `count_keys(t)` needs no bound.

The sensitivity arguments are next to each function. Everything here decides on public facts
only: the unit, the schema, the stability and the program's arguments, never the rows.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from jostle.data.schema import MAX_BOUND, Categorical, Numeric, Schema
from jostle.diagnostics.errors import DataError, JostleRuntimeError, PrivacyError
from jostle.diagnostics.source import Span
from jostle.language.sensitivity import refuse
from jostle.language.values import Private, PrivateMean, Table, type_name
from jostle.privacy.units import REPLACE_ONE, ROW, PrivacyUnit

# ---------------------------------------------------------------- binding
def table_unit(unit: PrivacyUnit | None, public_rows: bool) -> tuple[PrivacyUnit, bool]:
    """The unit a table is bound under and whether its row count is public.

    A public row count and the replace_one unit are one and the same declaration: neighbours
    that keep the number of rows are neighbours by replacement. So `public_rows=True` binds
    under replace_one, and replace_one makes the row count public.

    Raises:
        ValueError: public_rows with a unit other than replace_one.
    """
    if unit is None:
        return (REPLACE_ONE, True) if public_rows else (ROW, False)
    if public_rows and not unit.is_replace_one:
        raise ValueError(f"public_rows=True declares the unit replace_one (the row count is public), "
                         f"but the unit given is {unit}")
    return unit, unit.is_replace_one


def initial_stability(unit: PrivacyUnit) -> int | None:
    """A freshly bound table's stability under `unit` (see the module docstring)."""
    if unit.is_entity:
        return None
    return 2 if unit.is_replace_one else 1


def check_entity_key(schema: Schema, unit: PrivacyUnit, table: str, span: Span | None) -> None:
    """The key of an entity unit must be a column that conforming does not merge.

    Entities are told apart by their key values as the schema reads them. If two entities'
    rows could end with one key value, bounding that key's rows would let one entity push
    another's rows out of the bound (k rows out and k in: stability 2k, not k). So the key
    column has no default (every unreadable or missing key would become one entity), and a
    numeric key is not clamped or rounded: it is read without its bounds and a row whose key
    lies outside them is an error at bind time (the curator's schema) or dropped (a program's
    schema; the rule looks at that row alone), `keep_keys_in_domain`. Under a program's schema,
    texts are read as keys only when written the one way their value is (`canonical_key_rows`);
    under the curator's own schema the curator decides how keys read (texts such as "01" and
    "1" are then one numeric key, as declared).

    Raises:
        DataError: The key is not a column, has a default, or a numeric key's bounds reach the
            largest bound a schema allows.
    """
    key = unit.key
    if key not in schema:
        raise DataError(f"table '{table}' is bound under the unit {unit}, but it has no column '{key}'", span,
                        f"its columns are {schema.names}; the entity key must be one of them (declare it in the "
                        "schema, or bind under the unit of the column that names the entity)")
    spec = schema[key]
    if spec.default is not None:
        raise DataError(f"the entity key '{key}' of table '{table}' declares a default", span,
                        "remove the default: every row whose key is missing or unreadable would "
                        "become one entity, merging people; such rows must be fixed or dropped")
    if isinstance(spec, Numeric) and max(abs(spec.lo), abs(spec.hi)) >= MAX_BOUND:
        raise DataError(f"the bounds of the numeric entity key '{key}' of table '{table}' must lie "
                        f"strictly within +/-{MAX_BOUND:g}", span, "narrow the key's bounds")


def conform_schema(schema: Schema, unit: PrivacyUnit) -> Schema:
    """The schema the raw rows are conformed with: a numeric entity key is read without its
    bounds and without rounding (`check_entity_key`), the other columns as declared."""
    if not unit.is_entity or not isinstance(schema[unit.key], Numeric):
        return schema
    return schema.with_column(unit.key, Numeric(-MAX_BOUND, MAX_BOUND))


# A whole number written the one way Python's int() writes it: no sign on zero ("-0" is 0),
# no leading zeros, no "+", no decimal point, no spaces. Distinct texts of this form are
# distinct numbers.
CANONICAL_WHOLE_NUMBER = "0|-?[1-9][0-9]*"


def _literal_pattern(text: str) -> str:
    """A regular expression matching exactly `text` (RE2 and Java: only metacharacters escaped)."""
    return "".join("\\" + c if c in "\\.^$|?*+()[]{}" else c for c in text)


def key_text_pattern(spec: Any) -> str:
    """The texts a program's declaration reads as an entity key, one text per key value: the
    canonical whole numbers for a numeric key, the categories written as str() writes them for
    a categorical one (so "a " or "1.0" are not read as "a" or 1)."""
    if isinstance(spec, Numeric):
        return CANONICAL_WHOLE_NUMBER
    return "|".join(_literal_pattern(str(value)) for value in spec.values)


def check_schemaless_key_cells(frame: Any, unit: PrivacyUnit, table: str) -> None:
    """At bind time, for a curator's frame bound under an entity unit WITHOUT a schema: refuse a
    key column mixing texts and other values (the text "1" and the number 1 are two keys of the
    frame but one value under a program's schema, which would merge two entities). Told to the
    curator, before any program runs."""
    if not unit.is_entity or unit.key not in frame.columns:
        return
    kinds = {isinstance(cell, str) for cell in frame[unit.key].tolist() if cell is not None and cell == cell}
    if len(kinds) > 1:
        raise DataError(
            f"table '{table}': its entity key '{unit.key}' holds both texts and numbers",
            hint=f"give the key one kind (all texts or all numbers), or bind the table with its schema, "
                 f"which says how '{unit.key}' reads")


def canonical_key_rows(raw: Any, schema: Schema, unit: PrivacyUnit, strict: bool) -> Any:
    """The raw rows to read under a PROGRAM's schema: those whose entity key, when it is a text,
    is written the one way its value is (`key_text_pattern`: a canonical whole number for a
    numeric key, a category as str() writes it for a categorical one).

    Why: a numeric reading of texts merges distinct keys ("1", "01", "-0", "1.0" are one number;
    "a " and "a" one category),
    so a program's declaration could merge two of the curator's entities into one, and then
    `bound_per_key(k)` would let one of them push up to k of the other's rows out: the stability
    would be 2k, not k (issue 22 adversarial review). Keeping only canonical texts makes the
    reading injective (distinct kept texts are distinct numbers), and whether a row is kept
    depends on its own key alone, so adding or removing an entity changes no other entity's
    rows, and nothing about the dropped rows reaches the program (as for keys outside the
    domain, `keep_keys_in_domain`). The curator's own schema (strict) is not filtered: the
    curator decides how their keys read. Non-text keys (numbers in a frame or a typed Parquet
    column) are kept: a frame mixing texts and numbers in its key is refused at bind time
    (`check_schemaless_key_cells`).
    """
    from jostle.language.binding import EngineSource

    if strict or not unit.is_entity:
        return raw
    from jostle.data.engine.frames import frame_rows_matching

    pattern = key_text_pattern(schema[unit.key])
    if not isinstance(raw, EngineSource):
        return frame_rows_matching(raw, unit.key, pattern)
    if raw.frame is not None:  # a curator's frame on an engine: filtered as a frame, kept one
        kept = frame_rows_matching(raw.frame, unit.key, pattern)
        return dataclasses.replace(raw, view=raw.engine.raw_frame(kept), frame=kept)
    if raw.engine.raw_types(raw.view).get(unit.key, "").upper() not in ("VARCHAR", "STRING"):
        return raw  # typed values (Parquet): no text to read two ways
    return dataclasses.replace(raw, view=raw.engine.raw_where_matches(raw.view, unit.key, pattern))


def keep_keys_in_domain(conformed: Any, schema: Schema, unit: PrivacyUnit, table: str, strict: bool,
                        span: Span | None) -> Any:
    """The conformed rows whose numeric entity key lies in its declared domain (within the
    bounds, a whole number for an integer key), under the declared schema.

    Strict (the curator's schema, at bind time): a key outside is a DataError to the curator.
    Otherwise (a program's schema) such rows are dropped: whether a row is kept depends on its
    own key only, so adding or removing an entity never changes which of the others' rows are
    kept, and nothing about it reaches the program.
    """
    if not unit.is_entity or not isinstance(schema[unit.key], Numeric):
        return conformed
    spec = schema[unit.key]
    if type(conformed).__name__ != "DataFrame":  # a Relation on an engine
        from jostle.data.engine.relation import key_domain_sql

        test = key_domain_sql(unit.key, spec.lo, spec.hi, spec.integer, conformed.engine.dialect)
        if strict:
            outside = int(conformed.engine.query(
                f"SELECT count(*) FROM ({conformed.sql()}) AS s WHERE NOT ({test})")[0][0])
            _refuse_outside(outside, unit, spec, table, span)
        return conformed.then(("keys", unit.key, float(spec.lo), float(spec.hi), bool(spec.integer)), schema)
    values = conformed[unit.key].to_numpy(dtype=float)
    inside = (values >= spec.lo) & (values <= spec.hi)
    if spec.integer:
        inside &= np.floor(values) == values
    if strict:
        _refuse_outside(int((~inside).sum()), unit, spec, table, span)
    return conformed[inside].reset_index(drop=True)


def _refuse_outside(outside: int, unit: PrivacyUnit, spec: Numeric, table: str, span: Span | None) -> None:
    if outside:
        whole = "whole numbers " if spec.integer else ""
        raise DataError(f"table '{table}': {outside} rows have an entity key '{unit.key}' outside its domain "
                        f"({whole}in [{spec.lo:g}, {spec.hi:g}])", span,
                        "entity keys are never clamped or rounded (that would merge entities): fix the "
                        "data or widen the key's bounds")


def key_error_hint(error: DataError, unit: PrivacyUnit) -> None:
    """Reword the hint of a conform error about the entity key (a default is no fix there)."""
    if unit.is_entity and f"column '{unit.key}'" in error.message:
        error.hint = (f"every row must name its entity: fix or remove the rows whose '{unit.key}' is "
                      "missing or unreadable (an entity key cannot have a default)")


def declared_unit_problem(bound: PrivacyUnit, per: str | None, table: str, span: Span) -> None:
    """A program's `private NAME: {...} per KEY` restates the curator's unit; it cannot choose one.

    A program choosing entity(KEY) for data its curator bound by rows would weaken the
    guarantee (a row removed inside an entity is no entity neighbour: bounding then keeps
    another of its rows, two rows changed for a stability of one), so a declaration that
    differs from the binding is refused; the refusal depends on the binding only.

    Raises:
        DataError: The declared unit is not the bound one.
    """
    if per is None:
        return
    declared = PrivacyUnit("entity", per)
    if declared != bound:
        raise DataError(f"the private table '{table}' is bound under the unit {bound}, but this declaration "
                        f"says per {per} (the unit {declared})", span,
                        f"the curator states the unit when binding the data: Session.bind_private(..., "
                        f"unit=\"entity:{per}\"), `jostle run --unit {table}=entity:{per}`, or "
                        f"\"privacy_unit\": {{\"entity\": \"{per}\"}} in its schema file; a program "
                        "cannot choose it")


# ---------------------------------------------------------------- rules on tables
def need_bounded(table: Table, what: str, span: Span) -> int:
    """The stability of a private table a row-level aggregate reads; refused when unbounded.

    Raises:
        PrivacyError: An entity table whose rows per key are not bounded (nothing is charged).
    """
    if table.stability is not None:
        return table.stability
    key = table.unit.key
    raise PrivacyError(
        f"{what} reads the rows of '{table.name}', bound under the unit {table.unit}, whose rows per "
        f"'{key}' are not bounded: one {key} may own any number of rows, so no sensitivity holds", span,
        f"bound them first: t.bound_per_key(k) keeps at most k rows of each {key} (the table's "
        f"stability becomes k); or count the entities with count_keys(t); nothing was charged")


def partition_is_parallel(table: Table, columns: list[str]) -> bool:
    """Whether the parts of `partition(table, columns)` compose in parallel.

    Parallel composition needs every row one individual can change to land in one part:
      * a row table of stability 1: the row is in exactly one part;
      * an entity table partitioned by its key alone: all of an entity's rows share the key, so
        they land in one part (by the key and another column, its rows may differ in the other
        column and spread over several parts); or by any columns once it keeps one row per entity
        (stability 1);
      * otherwise (an entity partitioned by another column, whose rows may spread over several
        parts; a replace_one table, whose replaced row may leave one part and enter another; a
        table of stability above 1) the parts are charged in sequence: they keep the table's
        own node, so their charges add up, which is always sound. (Refusing instead would forbid
        the sound sequential use, e.g. stats.private_quantile's two parts.)
    """
    if not table.private:
        return True
    if table.unit.is_entity:
        # Also by any column once each entity keeps at most one row (stability 1, after
        # bound_per_key(1)): adding or removing an entity then changes one row, in one part.
        return list(columns) == [table.unit.key] or table.stability == 1
    return table.unit.is_row and table.stability == 1


def guard_key_column(table: Table, column: str, span: Span, what: str) -> None:
    """Refuse to overwrite an entity table's key (derive or bin into it): rows of several
    entities could then share one key, which `bound_per_key`'s stability does not cover."""
    if table.private and table.unit.is_entity and column == table.unit.key:
        raise PrivacyError(f"{what} would overwrite '{column}', the entity key of '{table.name}' (unit {table.unit})",
                           span, f"write the result to a new column: {what}(..., name=\"{column}_2\") or "
                           f"derive(t, \"{column}_2\", ...); the key says which rows belong to one entity")


def _need_entity_table(value: Any, what: str, span: Span) -> Table:
    if not isinstance(value, Table):
        raise JostleRuntimeError(f"{what} needs a table, got a {type_name(value)}", span)
    if not value.private or not value.unit.is_entity:
        kind = "public" if not value.private else f"bound under the unit {value.unit}"
        hint = ("count(t) counts its rows" if what == "count_keys" else
                "its stability is already bounded (1 for a row table, 2 for replace_one)")
        raise JostleRuntimeError(
            f"{what} works on a private table bound under an entity unit; '{value.name}' is {kind}", span,
            f"{hint}; an entity table is bound with Session.bind_private(..., unit=\"entity:KEY\"), "
            "`jostle run --unit NAME=entity:KEY` or \"privacy_unit\" in its schema file")
    if value.unit.key not in value.schema:
        raise JostleRuntimeError(
            f"{what} needs the entity key '{value.unit.key}', which '{value.name}' no longer has (select dropped it)",
            span, f"call {what} before the select, or keep '{value.unit.key}' in it")
    return value


def _public_bound(k: Any, span: Span) -> int:
    if isinstance(k, (Private, PrivateMean)):
        raise refuse("the bound of bound_per_key must be public", k, span, "write a whole number, e.g. 5")
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise JostleRuntimeError(f"bound_per_key needs a whole number of rows, got {type_name(k)} {k!r}", span,
                                 "write e.g. t.bound_per_key(5)")
    if k < 1:
        raise JostleRuntimeError(f"bound_per_key needs at least 1 row per key, got {int(k)}", span,
                                 "a bound of 0 would keep no rows; write e.g. t.bound_per_key(1)")
    if k > 2**31 - 1:
        raise JostleRuntimeError(f"bound_per_key's bound {int(k)} is too large (at most {2**31 - 1})", span)
    return int(k)


# ---------------------------------------------------------------- bounding and counting
def bound_per_key(table: Any, k: Any, span: Span) -> Table:
    """Keep at most k rows of each entity; the table's stability becomes k.

    The rule: the first k of an entity's rows in a canonical order of their contents (the key,
    then every column in schema order; a categorical column by its position in the public
    domain, a numeric one by value). Which rows of an entity are kept depends on that entity's
    own rows only, so adding or removing one entity adds or removes at most k rows of the result
    and leaves every other entity's kept rows as they were: the result is k-stable under the
    entity unit. (A rule that reads other entities' rows, e.g. a sample of the table, would let
    one entity change which rows of another are kept.) Equal rows in the order are equal in
    content, so which of them is kept does not change the result. The engines keep the same
    rows by ROW_NUMBER() OVER (PARTITION BY key ORDER BY the same columns) <= k. Bounding a
    table bounded before by j keeps min(j, k).
    """
    table = _need_entity_table(table, "bound_per_key", span)
    bound = _public_bound(k, span)
    stability = bound if table.stability is None else min(table.stability, bound)
    order = tuple(table.schema.names)
    key = table.unit.key
    if table.relation is not None:
        numeric = tuple((name, isinstance(table.schema[name], Numeric)) for name in order)
        data: Any = table.relation.then(("bound", key, bound, numeric))
    else:
        frame = table.frame
        data = frame[_kept_rows(frame, table.schema, key, order, bound)].reset_index(drop=True)
    return dataclasses.replace(table, data=data, stability=stability, public_rows=False)


def _order_keys(frame: Any, schema: Schema, column: str) -> list[np.ndarray]:
    """A column as the engines order it (jostle.data.engine.relation.order_sql): categories by
    domain position; numbers by value, then -0.0 before 0.0 (equal as numbers, not as rows)."""
    spec = schema[column]
    if isinstance(spec, Categorical):
        position = {value: i for i, value in enumerate(spec.values)}
        return [np.fromiter((position[v] for v in frame[column].tolist()), dtype=np.int64, count=len(frame))]
    values = frame[column].to_numpy(dtype=float)
    return [values, np.where((values == 0) & np.signbit(values), 0, 1)]


def _kept_rows(frame: Any, schema: Schema, key: str, order: tuple[str, ...], k: int) -> np.ndarray:
    """The mask of the first k rows of each key in the canonical order (see bound_per_key)."""
    n = len(frame)
    if n == 0:
        return np.zeros(0, dtype=bool)
    keys = _order_keys(frame, schema, key)[0]
    columns = [array for column in order for array in _order_keys(frame, schema, column)]
    # np.lexsort sorts by the last array first: the key, then the columns in schema order.
    ordered = np.lexsort(tuple(reversed(columns)) + (keys,))
    sorted_keys = keys[ordered]
    starts = np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]
    group_start = np.maximum.accumulate(np.where(starts, np.arange(n), 0))
    rank = np.arange(n) - group_start
    keep = np.zeros(n, dtype=bool)
    keep[ordered[rank < k]] = True
    return keep


def count_keys(table: Any, span: Span) -> Private:
    """The number of distinct entity keys, with sensitivity 1 under the entity unit.

    Adding or removing one entity adds or removes its rows, all sharing one key that no other
    entity has (`check_entity_key`), so the number of distinct keys moves by at most 1, however
    many rows the entity owns and whatever the table's stability (the key survives where,
    select keeps it or count_keys refuses, derive and bin cannot overwrite it). L1 = L2 = 1,
    and adding an entity can only increase the count (direction +1).
    """
    table = _need_entity_table(table, "count_keys", span)
    key = table.unit.key
    if table.relation is not None:
        n = table.relation.engine.count_distinct(table.relation, key)
    else:
        n = int(table.frame[key].nunique(dropna=False))
    from jostle.language.release_names import table_text

    return Private(n, 1.0, 1.0, span, f"count_keys({table_text(table)})", table.node, integer=True, direction=1)


__all__ = ["table_unit", "initial_stability", "check_entity_key", "conform_schema", "keep_keys_in_domain",
           "declared_unit_problem", "need_bounded", "partition_is_parallel", "guard_key_column",
           "bound_per_key", "count_keys"]
