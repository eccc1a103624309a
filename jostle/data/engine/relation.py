"""A private table on an engine: a lazy plan of 1-stable steps over a conformed source.

`Relation` is what a `jostle.language.values.Table` holds instead of a pandas frame when its
rows live on an engine (DuckDB, Spark). Each transformation the language performs (`where`,
`select`, `derive`, `bin`, a part of a `partition`) appends a step; nothing runs until an
aggregate asks the engine for one exact number (a count, an exact sum, histogram counts) or
a learner collects the rows. The steps are the same 1-stable transformations the in-memory
path performs (see `jostle.language.tables`), written as SQL; the stability and sensitivity
analysis stays in the language and never looks at the rows.

Categorical columns are held as codes: the position of the value in the column's public
domain (a small integer), which is what a histogram or a partition needs and what the
language's probes already range over. Numeric columns are DOUBLE.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from jostle.data.engine.expressions import Compiled, Compiler, NotCompilable, literal, quote, scalar_equal
from jostle.data.schema import Categorical, Numeric, Schema


@dataclass(frozen=True, eq=False)
class Relation:
    """A lazy table on an engine.

    Attributes:
        engine: The engine that holds the source and runs the plan.
        source: The engine's name of the conformed source (a table or a view).
        schema: The public schema after the steps.
        steps: The plan: ("where", expression), ("select", names), ("derive", name,
            expression, spec), ("bin", column, cuts, target), ("part", ((column, code), ...)),
            ("keys", column, lo, hi, integer) (the rows whose entity key lies in its domain,
            jostle.language.entities.keep_keys_in_domain), ("bound", key, k, order) (the first
            k rows of each key in the order of the columns `order`, pairs (name, is_numeric),
            jostle.language.entities.bound_per_key), ("join", right, on, codes, others) (the
            inner join with another relation of the same engine, jostle.data.engine.joins).
    """

    engine: Any
    source: str
    schema: Schema
    steps: tuple = ()
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def then(self, step: tuple, schema: Schema | None = None) -> Relation:
        """This plan with one more step."""
        return Relation(self.engine, self.source, schema or self.schema, self.steps + (step,))

    def sql(self, dialect: str | None = None) -> str:
        """The plan as one SQL query (raises NotCompilable)."""
        return plan_sql(self, dialect or self.engine.dialect)

    def __repr__(self) -> str:  # never the rows
        return f"<relation on {self.engine.name}: {len(self.steps)} steps>"


def plan_sql(relation: Relation, dialect: str) -> str:
    """SQL for a relation's plan, step by step over its source."""
    compiler = Compiler(dialect)
    compiler.sharing = True  # sub-expressions read several times become inner columns (`_with_lets`)
    q = lambda name: quote(name, dialect)  # noqa: E731
    names = list(_source_names(relation))
    query = f"SELECT * FROM {relation.source}"
    for step in relation.steps:
        kind = step[0]
        if kind == "where":
            predicate = compiler.truth(compiler.compile(step[1]))
            inner = _with_lets(query, compiler.take_lets(), dialect)
            query = f"SELECT {', '.join(map(q, names))} FROM ({inner}) AS s WHERE {predicate}"
        elif kind == "part":
            test = " AND ".join(f"{q(column)} = {code}" for column, code in step[1])
            query = f"SELECT * FROM ({query}) AS s WHERE {test}"
        elif kind == "keys":
            _, column, lo, hi, integer = step
            query = f"SELECT * FROM ({query}) AS s WHERE {key_domain_sql(column, lo, hi, integer, dialect)}"
        elif kind == "bound":
            _, key, k, order = step
            rank = q(RANK_COLUMN)
            ranked = (f"SELECT *, ROW_NUMBER() OVER (PARTITION BY {q(key)} ORDER BY "
                      f"{order_sql(order, dialect)}) AS {rank} FROM ({query}) AS s")
            query = f"SELECT {', '.join(map(q, names))} FROM ({ranked}) AS r WHERE {rank} <= {int(k)}"
        elif kind == "join":  # jostle.data.engine.joins
            from jostle.data.engine.joins import join_sql

            query, names = join_sql(query, names, step, dialect)
        elif kind == "select":
            names = list(step[1])
            query = f"SELECT {', '.join(map(q, names))} FROM ({query}) AS s"
        elif kind in ("derive", "bin"):
            if kind == "derive":
                _, name, expression, spec = step
                value = derived_sql(compiler, expression, spec)
            else:
                _, column, cuts, name = step
                value = bin_sql(q(column), cuts)
            columns = [f"{value} AS {q(n)}" if n == name else q(n) for n in names]
            if name not in names:
                names.append(name)
                columns.append(f"{value} AS {q(name)}")
            query = f"SELECT {', '.join(columns)} FROM ({_with_lets(query, compiler.take_lets(), dialect)}) AS s"
        else:  # pragma: no cover - the language makes only the steps above
            raise NotCompilable(f"the step '{kind}'")
    return query


RANK_COLUMN = "__jostle_rank"  # bound_per_key's row number within a key (never a schema column)


def order_sql(order: tuple[tuple[str, bool], ...], dialect: str) -> str:
    """bound_per_key's canonical order of rows: each column by its value (a category by its code),
    a numeric one then -0.0 before 0.0 (equal in SQL, told apart by their text alone), as the
    in-memory order of jostle.language.entities does."""
    text = "VARCHAR" if dialect == "duckdb" else "STRING"
    keys = []
    for name, numeric in order:
        keys.append(quote(name, dialect))
        if numeric:
            keys.append(f"(CASE WHEN CAST({quote(name, dialect)} AS {text}) = '-0.0' THEN 0 ELSE 1 END)")
    return ", ".join(keys)


def key_domain_sql(column: str, lo: float, hi: float, integer: bool, dialect: str) -> str:
    """SQL of "the numeric entity key lies in its declared domain": within [lo, hi], and a whole
    number for an integer key (conformed values are never NULL or NaN)."""
    cell = quote(column, dialect)
    test = f"({cell} >= {literal(float(lo)).sql} AND {cell} <= {literal(float(hi)).sql})"
    return f"({test} AND floor({cell}) = {cell})" if integer else test


def _with_lets(query: str, lets: list[tuple[str, str]], dialect: str) -> str:
    """`query` with the shared sub-expressions of one step as extra columns, one SELECT each (a
    shared expression may read earlier ones); the step's own SELECT then drops them."""
    for name, sql in lets:
        query = f"SELECT *, {sql} AS {quote(name, dialect)} FROM ({query}) AS s"
    return query


def _source_names(relation: Relation) -> list[str]:
    """The column names of the source, before any step (the schema before the first select/derive)."""
    names = relation.engine.source_columns(relation.source)
    return list(names)


def bin_sql(column_sql: str, cuts: tuple[float, ...]) -> str:
    """The bin code of a numeric value: i when cuts[i] <= v < cuts[i+1], clipped to the ends.

    The same as numpy's searchsorted(cuts, v, 'right') - 1 clipped to [0, k-1]
    (jostle.language.tables.bin_column): a value below the first edge goes to bin 0, one at or
    above the last edge to the last bin. Conformed values are never NaN.
    """
    bins = len(cuts) - 1
    cases = " ".join(f"WHEN {column_sql} < {literal(float(c)).sql} THEN {i}" for i, c in enumerate(cuts[1:-1]))
    return f"(CASE {cases} ELSE {bins - 1} END)" if cases else "0"


def derived_sql(compiler: Compiler, expression: Any, spec: Any) -> str:
    """A derived column's stored value under its public domain, as `tables.derive` computes it.

    Numeric: NaN takes the default (or the lower bound), then the value is clamped (rounded
    half-even first for an integer domain); categorical: the code of the domain value the
    result equals (Python's `in`, so True matches 1), or the default's code.
    """
    compiled = compiler.compile(expression)
    if isinstance(spec, Numeric):
        value = compiler.decode(compiled)
        if value.kind == "bool":
            value = Compiled(f"CAST({value.sql} AS DOUBLE)", "num")
        if value.kind != "num":
            raise NotCompilable(f"a numeric column from a {value.kind}")
        fallback = spec.default if spec.default is not None else spec.lo
        number = compiler.share(value.sql)
        filled = f"(CASE WHEN {compiler.isnan(number)} THEN {literal(float(fallback)).sql} ELSE {number} END)"
        return conform_number_sql(compiler, compiler.share(filled), spec)
    assert isinstance(spec, Categorical)
    default = spec.values.index(spec.default)
    if compiled.kind == "code":
        mapping = []
        for i, source_value in enumerate(compiled.values):
            target = [j for j, v in enumerate(spec.values) if _in_equal(source_value, v)]
            mapping.append(target[0] if target else default)
        cases = " ".join(f"WHEN {i} THEN {j}" for i, j in enumerate(mapping))
        return f"(CASE {compiled.sql} {cases} END)"
    value = compiler.decode(compiled)
    cases = []
    for j, category in enumerate(spec.values):
        try:
            test = compiler.compile_equal_literal(value, category)
        except NotCompilable:
            continue
        if test != "FALSE":
            cases.append(f"WHEN {test} THEN {j}")
    return f"(CASE {' '.join(cases)} ELSE {default} END)" if cases else str(default)


def _in_equal(a: Any, b: Any) -> bool:
    """Python's `a in {b}`: hash equality, under which True == 1 == 1.0."""
    try:
        return bool(a == b) and hash(a) == hash(b)
    except TypeError:
        return False


def conform_number_sql(compiler: Compiler, sql: str, spec: Numeric) -> str:
    """`Numeric.conform` in SQL: clamp into [lo, hi]; an integer domain rounds half-even first and
    clamps to [ceil(lo), floor(hi)] (infinities clamp to the bounds too).

    The clamp is numpy.clip's, which keeps the value on a tie (clip(-0.0, 0, 1) is -0.0): a
    comparison each way, not GREATEST/LEAST, whose choice between -0.0 and 0.0 is the engine's.
    `sql` is read three times (share it first when it is long); it is never NaN.
    """
    if spec.integer:
        value = compiler.share(compiler.round_even(sql))
        lo, hi = literal(float(math.ceil(spec.lo))).sql, literal(float(math.floor(spec.hi))).sql
    else:
        value, lo, hi = sql, literal(float(spec.lo)).sql, literal(float(spec.hi)).sql
    if compiler.dialect == "duckdb" and not compiler.sharing:
        # Schema conformance (no sharing there): `sql` read once. DuckDB's GREATEST and LEAST
        # return their first argument on a tie, which is clip's rule (checked with -0.0 at a
        # bound 0 by the conformance property in tests/test_engine_expressions.py).
        return f"LEAST(GREATEST({value}, {lo}), {hi})"
    return f"(CASE WHEN {value} < {lo} THEN {lo} WHEN {value} > {hi} THEN {hi} ELSE {value} END)"


__all__ = ["Relation", "plan_sql", "key_domain_sql", "RANK_COLUMN", "bin_sql", "derived_sql", "conform_number_sql", "scalar_equal"]
