"""Rows as bitsets: items, antecedents and capture counts of a rule list, fast.

A classification table of integer codes (rows x attributes, each attribute with a PUBLIC domain
0..d_j - 1) is turned into one bitset per *item* (attribute j has value v), a Python int whose
bit r is set when row r has the item. An antecedent (a conjunction of items on distinct
attributes) is the AND of its items' bitsets, and the rows a rule list captures are found with
AND / AND-NOT and counted with `int.bit_count`: a 30,000-row bitset is about 470 machine words,
so one capture count costs a few microseconds.

Nothing here is private or noisy: it only computes exact counts, which the callers release
through charged mechanisms (or use on public data).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

Item = tuple[int, int]            # (attribute index, value code)
Antecedent = tuple[Item, ...]     # items on distinct attributes, sorted by attribute


def to_bitset(flags: np.ndarray) -> int:
    """The Python int whose bit r is flags[r] (little-endian)."""
    flags = np.asarray(flags, dtype=bool)
    if flags.size == 0:
        return 0
    return int.from_bytes(np.packbits(flags, bitorder="little").tobytes(), "little")


def items_of(domain_sizes: Sequence[int]) -> list[Item]:
    """Every item of the public domains, attribute by attribute."""
    return [(j, v) for j, size in enumerate(domain_sizes) for v in range(int(size))]


@dataclass
class RowBits:
    """The bitsets of one table: per item, per class, and all rows.

    Attributes:
        n_rows: Rows of the table (private when the table is).
        items: Item -> bitset of the rows that have it.
        classes: Per class code, the bitset of its rows.
        everything: The bitset of all rows.
    """

    n_rows: int
    items: dict[Item, int]
    classes: list[int]
    everything: int

    @classmethod
    def of(cls, X: np.ndarray, y: np.ndarray, domain_sizes: Sequence[int], n_classes: int) -> RowBits:
        """Bitsets of integer codes X (rows x attributes) and class codes y."""
        X = np.asarray(X, dtype=np.int64).reshape(len(y), len(domain_sizes))
        y = np.asarray(y, dtype=np.int64)
        items = {(j, v): to_bitset(X[:, j] == v) for j, v in items_of(domain_sizes)}
        classes = [to_bitset(y == c) for c in range(int(n_classes))]
        return cls(int(len(y)), items, classes, (1 << int(len(y))) - 1)

    def antecedent(self, antecedent: Antecedent) -> int:
        """The rows that satisfy every item of `antecedent` (all rows for the empty one)."""
        bits = self.everything
        for item in antecedent:
            bits &= self.items[item]
        return bits

    def class_counts(self, bits: int) -> list[int]:
        """How many rows of `bits` fall in each class."""
        return [(bits & c).bit_count() for c in self.classes]


def capture_counts(masks: Sequence[int], class_bits: Sequence[int], everything: int) -> np.ndarray:
    """Per rule of a rule list (its antecedents' bitsets in order, then the default rule), the
    class counts of the rows it captures: the rows satisfying its antecedent and none before.

    Returns:
        An int64 array (len(masks) + 1, classes); each row of the table is counted exactly once.
    """
    counts = np.zeros((len(masks) + 1, len(class_bits)), dtype=np.int64)
    remaining = everything
    for index, mask in enumerate(masks):
        captured = mask & remaining
        remaining &= ~mask
        counts[index] = [(captured & c).bit_count() for c in class_bits]
    counts[-1] = [(remaining & c).bit_count() for c in class_bits]
    return counts


def rows_captured(masks: Sequence[int], n_rows: int) -> np.ndarray:
    """For each row, the index of the first rule whose antecedent it satisfies (len(masks): the
    default rule)."""
    rule = np.full(n_rows, len(masks), dtype=np.int64)
    if n_rows == 0:
        return rule
    open_rows = np.ones(n_rows, dtype=bool)
    for index, mask in enumerate(masks):
        raw = np.frombuffer(mask.to_bytes((n_rows + 7) // 8, "little"), dtype=np.uint8)
        hits = np.unpackbits(raw, bitorder="little")[:n_rows].astype(bool) & open_rows
        rule[hits] = index
        open_rows &= ~hits
    return rule
