"""The join step of an engine plan: `a.join(b, on=...)` as one SQL inner join.

The language decides whether a join is allowed and its stability (jostle.language.joins); this
module writes the rows it defines in SQL, so a join of tables held by DuckDB or Spark runs on
the engine (nothing is collected to Python). The key equality is the in-memory rule's
(`jostle.language.joins.key_positions`):

  * numeric keys (DOUBLE) compare as numbers, -0.0 made 0.0 on both sides (engines may hash
    the two zeros apart); conformed numbers are never NaN or infinite;
  * categorical keys are held as codes in each side's own domain: the right side's code is
    mapped to the code of the left domain's category it equals under Python's `in` (the map is
    computed from the two public domains), NULL when none does, and NULL matches nothing.

The result's columns are the left side's, then the right side's other than the key, as in
memory; categorical columns keep their codes under their own side's domain, which is the
joined schema's.
"""

from __future__ import annotations

from typing import Any

from jostle.data.engine.expressions import quote
from jostle.data.schema import Categorical


def join_step(left: Any, right: Any, on: str, others: list[str]) -> tuple:
    """The plan step joining `right` (a Relation on the same engine) to `left` on `on`.

    Returns ("join", right, on, codes, others): `codes` maps each code of right's categorical
    key to the left domain's code (-1: no category matches), None for a numeric key.
    """
    left_spec, right_spec = left.schema[on], right.schema[on]
    codes = None
    if isinstance(left_spec, Categorical):
        position: dict = {}
        for i, value in enumerate(left_spec.values):
            position.setdefault(value, i)
        codes = tuple(position.get(value, -1) for value in right_spec.values)
    return ("join", right, on, codes, tuple(others))


def join_sql(query: str, names: list[str], step: tuple, dialect: str) -> tuple[str, list[str]]:
    """The SQL of a join step over `query` (whose columns are `names`), and the new columns."""
    from jostle.data.engine.relation import plan_sql

    _, right, on, codes, others = step
    q = lambda name: quote(name, dialect)  # noqa: E731
    key = "__jostle_join_key"
    if codes is None:
        left_key = _zero(f"l.{q(on)}")
        right_key = _zero(q(on))
    else:
        left_key = f"l.{q(on)}"
        cases = " ".join(f"WHEN {i} THEN {j}" for i, j in enumerate(codes) if j >= 0)
        right_key = f"(CASE {q(on)} {cases} ELSE NULL END)" if cases else "CAST(NULL AS BIGINT)"
    inner = f"SELECT {right_key} AS {q(key)}, {', '.join(q(n) for n in others) or '1 AS __jostle_none'} " \
            f"FROM ({plan_sql(right, dialect)}) AS r0"
    columns = [f"l.{q(n)}" for n in names] + [f"r.{q(n)}" for n in others]
    joined = (f"SELECT {', '.join(columns)} FROM ({query}) AS l INNER JOIN ({inner}) AS r "
              f"ON {left_key} = r.{q(key)}")
    return joined, names + list(others)


def _zero(sql: str) -> str:
    """A DOUBLE with -0.0 made 0.0 (equal numbers, one hash)."""
    return f"(CASE WHEN {sql} = 0 THEN CAST(0 AS DOUBLE) ELSE {sql} END)"


__all__ = ["join_step", "join_sql"]
