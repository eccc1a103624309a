"""A public stand-in for a private table, generated from its declared schema alone.

The dry run (jostle.language.dry_run) runs a program once on stand-ins before anything is
charged, so that a program's own mistakes fail before any budget is spent. A stand-in is a
function of the PUBLIC schema only (its columns, bounds, categories, integer flags and the
entity key), of a fixed seed and of nothing else: never of the rows, the file, its header or its
row count. Two neighbouring datasets under one schema get the same stand-in, byte for byte.

What a stand-in holds (`stand_in_frame`):
  * `STAND_IN_ROWS` rows (more when a categorical column has more categories, so each appears,
    up to `MAX_STAND_IN_ROWS`);
  * a categorical column cycles through its categories, in an order shuffled per column by the
    fixed seed, so that every category appears and columns are not in lock-step;
  * a numeric column is spread evenly over its public bounds, both bounds included (whole
    numbers within them for an integer column), in a shuffled order;
  * an entity key (`entity_key`) is not shuffled: keys take runs of 1, 2, 3, 4, ... rows (up to
    `LONGEST_RUN`), so that `bound_per_key(k)` drops rows for small k; the key sequence depends
    on the key's declaration alone, so the tables of one database (one key) share their keys
    and their joins match rows.
The frame holds plain Python values (texts, numbers, booleans), valid for the declaration, so
the curator's strict conformance accepts it.
"""

from __future__ import annotations

import math
import zlib
from typing import TYPE_CHECKING, Any

import numpy as np

from jostle.data.schema import Categorical, Numeric, Schema

if TYPE_CHECKING:
    import pandas as pd

STAND_IN_SEED = 29
STAND_IN_ROWS = 120
MAX_STAND_IN_ROWS = 2000
LONGEST_RUN = 6  # an entity's rows in a stand-in: runs of 1 .. LONGEST_RUN rows


def stand_in_rows(schema: Schema) -> int:
    """How many rows the stand-in of `schema` has: enough for every category to appear."""
    widest = max((len(spec.values) for _, spec in schema.columns if isinstance(spec, Categorical)), default=0)
    return min(MAX_STAND_IN_ROWS, max(STAND_IN_ROWS, widest))


def stand_in_frame(schema: Schema, entity_key: str | None = None, seed: int = STAND_IN_SEED,
                   rows: int | None = None) -> pd.DataFrame:
    """A deterministic table valid for `schema`, made from the schema alone (module docstring).

    Args:
        schema: The table's public schema.
        entity_key: The column naming the entity when the table is private for entity(key).
        seed: The fixed seed of the column orders.
        rows: The number of rows when it is public (a table bound with a public row count, whose
            `count` a program reads exactly: the stand-in must have the same, or a program branching
            on it takes another path in the dry run); else `stand_in_rows(schema)`.
    """
    import pandas as pd

    rows = stand_in_rows(schema) if rows is None else rows
    columns: dict[str, Any] = {}
    for name, spec in schema.columns:
        if name == entity_key:
            columns[name] = _key_column(spec, rows)
            continue
        order = np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))]).permutation(rows)
        if isinstance(spec, Categorical):
            values = np.empty(len(spec.values), dtype=object)
            values[:] = list(spec.values)
            columns[name] = values[order % len(values)]
        else:
            columns[name] = [_spread(spec, int(i), rows) for i in order]
    return pd.DataFrame(columns, columns=schema.names, dtype=object)


def _spread(spec: Numeric, position: int, rows: int) -> float | int:
    """The `position`-th of `rows` values spread evenly over the bounds, both bounds included."""
    if spec.integer:
        low, high = math.ceil(spec.lo), math.floor(spec.hi)
        return int(low + round((high - low) * position / max(1, rows - 1)))
    value = spec.lo + (spec.hi - spec.lo) * position / max(1, rows - 1)
    if position == rows - 1:
        value = spec.hi
    return float(value)


def _key_column(spec: Numeric | Categorical, rows: int) -> list[Any]:
    """Entity keys in runs of 1, 2, ..., LONGEST_RUN rows (cycling through the keys the
    declaration allows); a function of the key's declaration alone."""
    keys = _key_values(spec)
    out: list[Any] = []
    entity = 0
    while len(out) < rows:
        run = 1 + entity % LONGEST_RUN
        out.extend([keys[entity % len(keys)]] * run)
        entity += 1
    return out[:rows]


def _key_values(spec: Numeric | Categorical) -> list[Any]:
    if isinstance(spec, Categorical):
        return list(spec.values)
    low, high = math.ceil(spec.lo), math.floor(spec.hi)
    if low <= high:  # whole numbers within the bounds (valid for an integer key too)
        return list(range(low, min(high, low + STAND_IN_ROWS) + 1))
    return [float(spec.lo), float(spec.hi)] if spec.lo != spec.hi else [float(spec.lo)]


__all__ = ["stand_in_frame", "stand_in_rows", "STAND_IN_SEED", "STAND_IN_ROWS"]
