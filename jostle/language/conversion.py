"""Public values handed to Python: `to_python` (the entry point of `Session.eval`; the rules
are in jostle.language.detach) and the cell labels a released vector keeps.

Two kinds of released vector keep public labels (`CellLabels`), remembered by the vector's
identity (`VectorLabels`):

  * a released histogram (or an estimate of one): its cells, the histogram's public domain;
  * a grouped release: a list of private scalars, one per part of ONE partition
    (`{{ [part.count() for part in t.partition("sex")] }}`), released together: its cells are
    the parts' public keys, named by the partition's columns.

Inside a program such a vector is indexed by a label as well as by a position (`counts["F"]`,
`grid[["F", "yes"]]`), prints with its labels (`[F: 98, M: 101]`) and has `.labels`. In
Python (`Session.eval`) a histogram becomes a pandas Series indexed by its cells (a DataFrame
for a 2D histogram) and a grouped release a DataFrame with one column per key and one for the
value. The labels are public (declared domains and partition keys, never read from the rows),
so showing them, and refusing a label the vector does not have, reveal nothing.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from jostle.diagnostics.source import Span


@dataclass(frozen=True)
class CellLabels:
    """The public labels of a histogram's cells, which its released vector keeps.

    Attributes:
        labels: One per cell, in the vector's (row-major) order: a category, or a tuple of
            categories for a histogram over several columns.
        shape: (rows, columns) of a 2D histogram; None otherwise.
        axes: The histogram's column names, or None when not known.
    """

    labels: tuple
    shape: tuple[int, ...] | None = None
    axes: tuple[str, ...] | None = None
    value_name: str | None = None  # a grouped release's value column ("count", "sum"); None: a histogram

    def as_pandas(self, values: np.ndarray) -> Any:
        """The vector as a pandas Series indexed by the cells (a DataFrame for a 2D histogram);
        a grouped release as a DataFrame: one column per key, then the value column."""
        import pandas as pd

        values = np.asarray(values)
        axes = list(self.axes) if self.axes is not None else None
        if self.value_name is not None:
            names = axes or ["key"]
            keys = [label if isinstance(label, tuple) else (label,) for label in self.labels]
            frame = pd.DataFrame({name: pd.Series([key[i] for key in keys], dtype=object)
                                  for i, name in enumerate(names)})
            frame[self.value_name] = values
            return frame
        if self.shape is not None and len(self.shape) == 2 and self.shape[0] * self.shape[1] == len(values):
            rows, columns = self.shape
            frame = pd.DataFrame(values.reshape(rows, columns),
                                 index=pd.Index([self.labels[i * columns][0] for i in range(rows)], dtype=object),
                                 columns=pd.Index([self.labels[j][1] for j in range(columns)], dtype=object))
            if axes is not None and len(axes) == 2:
                frame.index.name, frame.columns.name = axes
            return frame
        if self.labels and isinstance(self.labels[0], tuple):
            index = pd.MultiIndex.from_tuples(list(self.labels), names=axes)
        else:
            index = pd.Index(list(self.labels), dtype=object,
                             name=axes[0] if axes is not None and len(axes) == 1 else None)
        return pd.Series(values, index=index)

    def position(self, label: Any, span: Span | None) -> int:
        """The position of the cell labelled `label` (a category, or a list of categories for
        a cell over several columns).

        Raises:
            JostleRuntimeError: no cell has that label (the message lists the public labels).
        """
        wanted = tuple(label) if isinstance(label, (tuple, list)) else label
        for index, cell in enumerate(self.labels):
            if _same_label(cell, wanted):
                return index
        from jostle.diagnostics.errors import JostleRuntimeError
        from jostle.language.values import format_value

        shown = [list(cell) if isinstance(cell, tuple) else cell for cell in self.labels[:20]]
        more = f" (and {len(self.labels) - 20} more)" if len(self.labels) > 20 else ""
        raise JostleRuntimeError(f"no cell is labelled {format_value((wanted,))[1:-1]}", span,
                                 f"the cells are {format_value(tuple(shown))}{more}; or index by position, e.g. x[0]")

    def text(self, values: Any) -> str:
        """The vector as a program prints it: `[F: 98, M: 101]`, a cell over several columns
        as `[F, yes]: 30`."""
        from jostle.language.values import format_value

        def label_text(cell: Any) -> str:
            return "[" + ", ".join(format_value(c) for c in cell) + "]" if isinstance(cell, tuple) else format_value(cell)

        return "[" + ", ".join(f"{label_text(c)}: {format_value(v)}" for c, v in zip(self.labels, values)) + "]"

    def jostle_labels(self) -> tuple:
        """`.labels` as a program reads it: a list of the cells (a cell over several columns as a list)."""
        return tuple(self.labels)


def _same_label(cell: Any, wanted: Any) -> bool:
    """Whether a cell's label is the one asked for: lists element by element; a text only equals a
    text and a boolean a boolean (so "1" is not 1 and true is not 1); numbers by value."""
    if isinstance(cell, tuple) or isinstance(wanted, tuple):
        return (isinstance(cell, tuple) and isinstance(wanted, tuple) and len(cell) == len(wanted)
                and all(_same_label(a, b) for a, b in zip(cell, wanted)))
    for kind in (str, bool):
        if isinstance(cell, kind) or isinstance(wanted, kind):
            return isinstance(cell, kind) and isinstance(wanted, kind) and cell == wanted
    return cell == wanted


class VectorLabels:
    """The cell labels of the vectors a session released, remembered by the vector's identity.

    A release returns a plain NumPy vector (arithmetic, indexing and printing treat it as one);
    the labels of the histogram it was released from are public, and are kept here so that
    `Session.eval` can hand a pandas user a labelled Series. Only the released vector itself
    (the object a release returned, however it is passed around) is labelled: a vector
    computed from it is not, since its cells need not be the histogram's any more.
    """

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[weakref.ref, CellLabels]] = {}
        # each part of a partition made in this session: its data node -> (columns, public key)
        self._parts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def remember_parts(self, parts: Any, columns: Any) -> None:
        """Note the public key of each part of a partition by the part's data node, so that a
        list of private scalars, one per part, released together, is labelled by the keys.
        Parts that share their table's node (a partition that does not compose in parallel)
        cannot be told apart by their values and are not noted."""
        names = (columns,) if isinstance(columns, str) else tuple(str(c) for c in columns)
        nodes = [getattr(part, "node", None) for part in parts]
        if len({id(node) for node in nodes}) != len(nodes) or any(n is None or n.group is None for n in nodes):
            return
        for part, node in zip(parts, nodes):
            self._parts[node] = (names, part.key)

    def _grouped(self, items: tuple) -> CellLabels | None:
        """The labels of a list of private scalars, one per part of one partition, else None."""
        from jostle.language.values import Private

        if not items or not all(isinstance(v, Private) and not v.is_vector for v in items):
            return None
        found = [self._parts.get(item.node) for item in items]
        if any(entry is None for entry in found):
            return None
        groups = {id(item.node.group) for item in items}
        if len(groups) != 1 or len({id(item.node) for item in items}) != len(items):
            return None
        columns = found[0][0]
        if any(entry[0] != columns for entry in found):
            return None
        # the value column is named after the aggregate ("count", "sum") when every item is one
        kinds = {item.what.split("(", 1)[0] for item in items}
        kind = kinds.pop() if len(kinds) == 1 else ""
        value_name = kind if kind.isidentifier() and kind not in columns else "value"
        return CellLabels(tuple(entry[1] for entry in found), None, columns, value_name)

    def of(self, value: Any) -> CellLabels | None:
        """The labels of a private histogram, of a list of private scalars over the parts of one
        partition, or of a labelled released vector, else None."""
        from jostle.language.values import Private  # values re-exports this module's names

        if isinstance(value, Private):
            if value.labels is None or not value.is_vector:
                return None
            return CellLabels(tuple(value.labels), value.shape, value.axes)
        if isinstance(value, tuple):
            return self._grouped(value)
        if isinstance(value, np.ndarray):
            entry = self._by_id.get(id(value))
            if entry is not None and entry[0]() is value:
                return entry[1]
        return None

    def index_of(self, target: Any, label: Any, span: Span | None) -> int:
        """The position of `label` in a labelled vector (private or released) or in a list of
        private numbers over the parts of one partition, for `x["F"]`.

        Raises:
            JostleRuntimeError: the vector has no labels, or no cell with that label.
        """
        cells = self.of(target)
        if cells is None:
            from jostle.diagnostics.errors import JostleRuntimeError

            raise JostleRuntimeError("an index must be a whole number", span,
                                     "only a histogram, its release or a grouped release is indexed by a "
                                     "label; a vector computed from one has lost its labels")
        return cells.position(label, span)

    def text(self, value: Any) -> str | None:
        """How `print` shows a labelled released vector (`[F: 98, M: 101]`), or None if unlabelled."""
        cells = self.of(value) if isinstance(value, np.ndarray) else None
        return cells.text(value) if cells is not None else None

    def remember(self, vector: Any, labels: CellLabels) -> None:
        """Label `vector` (a 1-D array with one value per cell); anything else is left alone."""
        if not isinstance(vector, np.ndarray) or vector.ndim != 1 or len(vector) != len(labels.labels):
            return
        key = id(vector)

        def forget(ref: weakref.ref, key: int = key) -> None:
            entry = self._by_id.get(key)
            if entry is not None and entry[0] is ref:
                del self._by_id[key]

        self._by_id[key] = (weakref.ref(vector, forget), labels)

    def carry(self, result: Any, source: Any) -> None:
        """Give `result` (released or estimated from `source`) the labels of `source`'s cells."""
        labels = self.of(source)
        if labels is not None and result is not source:
            self.remember(result, labels)


DATA_TYPES = (type(None), bool, int, float, str, np.generic, np.ndarray)


def to_python(value: Any, span: Span | None = None, labels: VectorLabels | None = None) -> Any:
    """Convert a public Jostle value to a plain Python / NumPy / pandas object, detached.

    Only data crosses: numbers, strings, booleans, none, released vectors, lists and records of
    them, public tables (as a DataFrame copy), domain declarations and released models (classes
    marked `public_result`, e.g. a trained tree, which holds only what was released). A function,
    bound method, module, option or ChoiceMaker is refused, though public itself: it holds the
    scope it was made in, and that scope may hold private tables (a bound `t.count` holds t),
    which Python code could read.

    Every result is a new object, detached from the session: a released model comes back as a
    copy without its source of randomness or callbacks, and a result that would still reach a
    live part of the session (its randomness, accountant, ledger, interpreter, private data) is
    refused. The rules and their argument are in `jostle.language.detach`.

    A released histogram (a vector `labels` knows) becomes a pandas Series indexed by its cells,
    or a DataFrame (rows x columns) for a 2D histogram; other vectors stay NumPy arrays.

    Raises:
        PrivacyError: the value is, or holds, something that is not data.
    """
    from jostle.language.detach import returned_value

    return returned_value(value, span, labels)
