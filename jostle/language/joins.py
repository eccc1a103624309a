"""`a.join(b, on="key")`: the inner join of two tables on one column, and its stability rules.

The result holds, for every row x of `a` and every row y of `b` with x[on] == y[on], one row:
x's columns, then y's columns other than `on` (the key is kept once, from `a`). Rows of either
side that match nothing are dropped: the join is inner (left and outer joins are not offered;
an outer join's unmatched rows would need a public default for every column of the other side).

Which joins are allowed, and the stability of the result (how many of its rows one individual,
one privacy unit, can add or remove), is decided from public facts only: the units, the
databases, the schemas, the stabilities, and, for a public lookup table, its own rows.

  * Two private tables of one database (jostle.language.databases), joined on its entity key.
    Neighbouring databases differ by every row of one entity e, in every table. A joined row
    pairs rows with equal keys, so it belongs to exactly one entity, the one its key names:
    the joined rows of every other entity pair rows that are the same on both neighbours, and
    e's joined rows number at most (e's rows in a) x (e's rows in b) <= s_a x s_b. So the join
    is an entity table under the same unit with stability s_a x s_b; unbounded when either
    side is (its aggregates then need `bound_per_key` first, jostle.language.entities). Its
    key column is a's, which the key rules keep intact (no default, never overwritten), so
    `count_keys` and `bound_per_key` apply to it unchanged.
  * A private table P with a public lookup table L, on any column c of P that L also has.
    A neighbour changes at most s_P rows of P, and every row of P matches the rows of L whose
    c equals its own, at most m of them, m = the most rows of L sharing one value of c (read
    from L, which is public; 1 when c is unique in L). The rows of the join built from the
    unchanged rows of P are unchanged, so at most s_P x m rows are added or removed: the join
    keeps P's unit and data node, with stability s_P x m (unbounded if P's is). Each joined row
    carries its P row's columns, the entity key among them.
  * Refused, before anything is spent: two private tables under different units or in
    different databases (their rows are about individuals the join cannot pair soundly), two
    private tables that are not entity tables (a row of one could match any number of rows of
    the other: no bound on one row's contribution), two private tables joined on a column other
    than their entity key (one entity's row could then match rows of every other entity), a
    column missing on either side, key columns of different kinds (numeric and categorical),
    and a column other than the key present on both sides.

Key equality is the same on every route: numbers compare as doubles (-0.0 equals 0.0); a
categorical key of b matches the category of a's domain it equals under Python's `in` (hash and
==, so 1 matches 1.0 and True), which the engines apply to codes (jostle.data.engine.joins).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jostle.data.schema import Numeric, Schema, conform
from jostle.diagnostics.errors import JostleRuntimeError, PrivacyError
from jostle.diagnostics.source import Span
from jostle.language.databases import database_of
from jostle.language.values import Table, type_name


def join(left: Any, right: Any, on: Any, span: Span) -> Table:
    """The inner join of `left` and `right` on the column `on` (see the module docstring).

    Raises:
        JostleRuntimeError: Not tables, `on` not a column of both, key columns of different
            kinds, another column on both sides.
        PrivacyError: Two private tables whose join has no bounded stability (see the module
            docstring); nothing is charged.
    """
    for side, value in (("left", left), ("right", right)):
        if not isinstance(value, Table):
            raise JostleRuntimeError(f"join needs two tables; its {side} side is a {type_name(value)}", span,
                                     'write a.join(b, on="key")')
    if on is None:
        raise JostleRuntimeError("join needs the column to join on", span, 'write a.join(b, on="key")')
    if not isinstance(on, str):
        raise JostleRuntimeError(f"join's column is named by a string, got a {type_name(on)}", span,
                                 'write a.join(b, on="key")')
    for table in (left, right):
        if on not in table.schema:
            raise JostleRuntimeError(f"table '{table.name}' has no column '{on}' to join on", span,
                                     f"its columns are {table.schema.names}; both tables need the column")
    left_spec, right_spec = left.schema[on], right.schema[on]
    if isinstance(left_spec, Numeric) != isinstance(right_spec, Numeric):
        first, second = ("numeric" if isinstance(spec, Numeric) else "categorical" for spec in (left_spec, right_spec))
        raise JostleRuntimeError(
            f"join's column '{on}' is {first} in '{left.name}' and {second} in '{right.name}'",
            span, "join columns must both be numeric or both categorical: derive a column of the other kind first")
    others = [name for name in right.schema.names if name != on]
    shared = [name for name in others if name in left.schema]
    if shared:
        raise JostleRuntimeError(
            f"both '{left.name}' and '{right.name}' have the column{'s' if len(shared) > 1 else ''} "
            f"{', '.join(map(repr, shared))}", span,
            "a joined table has each column once: select it away from one side first, e.g. "
            f"b.select({[n for n in right.schema.names if n not in shared]})")
    name = f"join({left.name}, {right.name})"
    if right.private and not left.private:
        # A public lookup on the left: joined as private.join(lookup), then the columns put in
        # this call's order. The key column stays the private side's (its values and its spec),
        # so an entity key keeps the rules that tell entities apart (entities.check_entity_key).
        swapped = join(right, left, on, span)
        order = [(column, right.schema[on] if column == on else left.schema[column]) for column in left.schema.names]
        schema = Schema(tuple(order) + tuple((column, right.schema[column]) for column in others))
        if swapped.relation is not None:
            data = swapped.relation.then(("select", tuple(schema.names)), schema)
        else:
            data = swapped.frame[list(schema.names)]
        return Table(data, schema, True, name, swapped.node, span, None, swapped.stability, False, swapped.unit)
    schema = Schema(left.schema.columns + tuple((column, right.schema[column]) for column in others))
    lookup = None
    if left.private and right.private:
        node, unit, stability = _private_pair(left, right, on, span)
    elif left.private:
        _refuse_a_key_from_the_lookup(left, right, others, span)
        lookup = _conformed_lookup(right, [on] + others)
        spread = _most_rows_per_key(lookup[on], right.schema[on], left.schema[on])
        node, unit = left.node, left.unit
        stability = None if left.stability is None else left.stability * max(spread, 1)
    else:
        node, unit, stability = left.node, left.unit, 1
    data = _joined_rows(left, right, on, others, schema, lookup)
    return Table(data, schema, left.private or right.private, name, node, span, None, stability, False, unit)


def _refuse_a_key_from_the_lookup(private: Table, lookup: Table, others: list[str], span: Span) -> None:
    """Refuse a public lookup that would add a column named as the private side's entity key.

    An entity table whose key was selected away has lost the column that tells its entities
    apart; a public column of that name would be trusted by count_keys, bound_per_key, a
    partition by the key and a join on it, though its values are the lookup's, not the
    entities' (one entity could then move a "count of keys" by more than 1). The key column can
    only come from the private table itself. The names are public (schemas), so the refusal is
    the same on neighbouring data.
    """
    unit = private.unit
    if unit.is_entity and unit.key in others:
        raise PrivacyError(
            f"the public table '{lookup.name}' has a column '{unit.key}', the entity key of '{private.name}' "
            f"({unit}), which '{private.name}' no longer has", span,
            f"select '{unit.key}' away from '{lookup.name}' (or keep it in '{private.name}' and join on it); "
            "an entity's key can only come from its own rows; nothing was charged")


def _private_pair(left: Table, right: Table, on: str, span: Span) -> tuple[Any, Any, int | None]:
    """The node, unit and stability of a join of two private tables, or the refusal."""
    from jostle.privacy.budget import common_node

    if left.unit != right.unit:
        raise PrivacyError(
            f"join of '{left.name}' (unit {left.unit}) and '{right.name}' (unit {right.unit}): the tables are "
            "private for different units", span,
            "only tables bound together as one database (Session.bind_database, or --data ... --key KEY) can be "
            "joined; join a private table with a public lookup table instead; nothing was charged")
    if not left.unit.is_entity:
        raise PrivacyError(
            f"join of two private tables bound under the unit {left.unit} ('{left.name}' and '{right.name}'): "
            "one row of one table could match any number of rows of the other, so no row's contribution is "
            "bounded", span,
            "bind the tables as one database keyed by the entity they describe (Session.bind_database(..., "
            "key=KEY), or --data ... --key KEY) and join on that key; nothing was charged")
    key = left.unit.key
    if on != key:
        raise PrivacyError(
            f"join of the private tables '{left.name}' and '{right.name}' on '{on}', which is not their entity "
            f"key '{key}': one entity's rows could then match rows of any other entity", span,
            f"join on the key: a.join(b, on=\"{key}\"); nothing was charged")
    first, second = database_of(left.node), database_of(right.node)
    if first is None or first is not second:
        names = [f"'{t.name}' ({'database ' + d.database if d is not None else 'bound on its own'})"
                 for t, d in ((left, first), (right, second))]
        raise PrivacyError(
            f"join of private tables of different databases: {' and '.join(names)}", span,
            "bind the tables together as one database (Session.bind_database({...}, key=...), or "
            "--data ... --key KEY): only then is one key value one entity in both; nothing was charged")
    stability = None if left.stability is None or right.stability is None else left.stability * right.stability
    return common_node([left.node, right.node]), left.unit, stability


def _conformed_lookup(table: Table, columns: list[str]) -> Any:
    """A public table's rows under its schema (rows that break it dropped), the given columns."""
    frame = table.frame
    schema = table.schema.select(columns)
    return conform(frame[columns].reset_index(drop=True), schema, table.name, strict=False)


def key_positions(values: Any, spec: Any, target: Any) -> tuple[np.ndarray, np.ndarray]:
    """Join keys comparable across both sides: (key per row, usable rows).

    A numeric key is its double, -0.0 made 0.0 (a non-finite one never matches: conformed
    private numbers are finite). A categorical key is the position, in `target`'s domain, of
    the category it equals under Python's `in`; a value outside that domain matches nothing.
    """
    if isinstance(spec, Numeric):
        numbers = np.asarray(values, dtype=float)
        usable = np.isfinite(numbers)
        return np.where(numbers == 0, 0.0, numbers), usable
    position: dict = {}
    for i, value in enumerate(target.values):
        position.setdefault(value, i)
    codes = np.fromiter((position.get(v, -1) if hashable(v) else -1 for v in list(values)),
                        dtype=np.int64, count=len(values))
    return codes, codes >= 0


def hashable(value: Any) -> bool:
    """Whether `value` can be a dictionary key (a public lookup's or a domain's value)."""
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _most_rows_per_key(values: Any, spec: Any, target: Any) -> int:
    """The most rows of a public lookup column that one key value of the private side matches."""
    keys, usable = key_positions(values, spec, target)
    keys = keys[usable]
    if len(keys) == 0:
        return 0
    _, counts = np.unique(keys, return_counts=True)
    return int(counts.max())


def _joined_rows(left: Table, right: Table, on: str, others: list[str], schema: Schema, lookup: Any) -> Any:
    """The joined rows: a plan step on the engine holding either side (when the join is
    private), else a pandas frame. `lookup` is the right side's rows when it is a public lookup."""
    engine_side = left if left.relation is not None else right if right.relation is not None else None
    if engine_side is not None and left.private:
        from jostle.data.engine.joins import join_step

        engine = engine_side.relation.engine
        first = _on(engine, left, None)
        second = _on(engine, right, lookup, [on] + others)
        return first.then(join_step(first, second, on, others), schema)
    import pandas as pd

    first = left.frame
    second = lookup if lookup is not None else right.frame
    first_keys, first_ok = key_positions(first[on].tolist(), left.schema[on], left.schema[on])
    second_keys, second_ok = key_positions(second[on].tolist(), right.schema[on], left.schema[on])
    a = pd.DataFrame({"k": first_keys[first_ok], "i": np.flatnonzero(first_ok)})
    b = pd.DataFrame({"k": second_keys[second_ok], "j": np.flatnonzero(second_ok)})
    pairs = a.merge(b, on="k", how="inner", sort=False).sort_values(["i", "j"], kind="stable")
    i, j = pairs["i"].to_numpy(), pairs["j"].to_numpy()
    out = first.iloc[i].reset_index(drop=True)
    extra = second[others].iloc[j].reset_index(drop=True)
    for name in others:
        spec = schema[name]
        out[name] = extra[name].astype(float) if isinstance(spec, Numeric) else extra[name].astype(object)
    return out[list(schema.names)]


def _on(engine: Any, table: Table, rows: Any, columns: list[str] | None = None) -> Any:
    """A side of the join as a plan on `engine`: its own plan, or its rows stored there."""
    if table.relation is not None and table.relation.engine is engine and rows is None:
        return table.relation
    frame = rows if rows is not None else table.frame
    schema = table.schema if columns is None else table.schema.select(columns)
    return engine.store_conformed(frame[list(schema.names)].reset_index(drop=True), schema)


__all__ = ["join", "key_positions"]
