"""The exact counting aggregates every SQL engine runs the same way: counts and histograms.

`SqlAggregates` is a base class of `DuckDBEngine` and `SparkEngine`; it needs their
`query(sql)`, `dialect`, and a `_group_cache` dict guarded by `_lock`. Only exact integers leave
the engine: the noise is drawn by the driver.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jostle.data.engine.expressions import quote
from jostle.data.engine.relation import Relation

GROUP_MEMO_SIZE = 64  # plans whose group counts are kept; the oldest goes first


class SqlAggregates:
    """count and histogram over a `Relation`, in the engine's SQL dialect."""

    dialect: str
    _group_cache: dict[tuple, dict[tuple[int, ...], int]]
    _lock: Any

    def query(self, sql: str, parameters: list | None = None) -> list[tuple]:  # pragma: no cover - engines
        raise NotImplementedError

    def count(self, relation: Relation) -> int:
        """The exact number of rows. A part of a partition is counted by one GROUP BY over the
        whole partitioned table, run once for all its parts (`partition` then `count` of each
        part would otherwise scan the table once per part)."""
        if relation.steps and relation.steps[-1][0] == "part":
            codes = relation.steps[-1][1]
            parent = Relation(self, relation.source, relation.schema, relation.steps[:-1])
            counts = self._part_counts(parent, tuple(column for column, _ in codes))
            return counts.get(tuple(code for _, code in codes), 0)
        return int(self.query(f"SELECT count(*) FROM ({relation.sql()}) AS c")[0][0])

    def _part_counts(self, parent: Relation, columns: tuple[str, ...]) -> dict[tuple[int, ...], int]:
        """Row counts per combination of codes of `columns` in `parent`, cached per plan."""
        sql = parent.sql()
        key = (sql, columns)
        with self._lock:
            cached = self._group_cache.get(key)
        if cached is None:
            keys = ", ".join(quote(c, self.dialect) for c in columns)
            rows = self.query(f"SELECT {keys}, count(*) FROM ({sql}) AS s GROUP BY {keys}")
            cached = {tuple(int(v) for v in row[:-1]): int(row[-1]) for row in rows}
            with self._lock:
                if len(self._group_cache) >= GROUP_MEMO_SIZE:
                    self._group_cache.pop(next(iter(self._group_cache)))
                self._group_cache[key] = cached
        return cached

    def count_distinct(self, relation: Relation, column: str) -> int:
        """The exact number of distinct values of `column` (conformed values are never NULL)."""
        return int(self.query(f"SELECT count(DISTINCT {quote(column, self.dialect)}) FROM ({relation.sql()}) AS c")[0][0])

    def histogram(self, relation: Relation, columns: list[str], sizes: list[int]) -> np.ndarray:
        """Counts of every combination of the columns' codes, row-major over their domains."""
        keys = ", ".join(quote(c, self.dialect) for c in columns)
        rows = self.query(f"SELECT {keys}, count(*) FROM ({relation.sql()}) AS s GROUP BY {keys}")
        counts = np.zeros(int(np.prod(sizes)), dtype=np.int64)
        for row in rows:
            flat = 0
            for code, size in zip(row[:-1], sizes):
                flat = flat * size + int(code)
            counts[flat] = int(row[-1])
        return counts
