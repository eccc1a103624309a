"""Public values handed to Python: `to_python` (the entry point of `Session.eval`; the rules
are in jostle.language.detach) and the cell labels that turn a released histogram into a
labelled pandas Series or DataFrame.
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

    def as_pandas(self, values: np.ndarray) -> Any:
        """The vector as a pandas Series indexed by the cells (a DataFrame for a 2D histogram)."""
        import pandas as pd

        values = np.asarray(values)
        axes = list(self.axes) if self.axes is not None else None
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

    def of(self, value: Any) -> CellLabels | None:
        """The labels of a private histogram or of a labelled released vector, else None."""
        from jostle.language.values import Private  # values re-exports this module's names

        if isinstance(value, Private):
            if value.labels is None or not value.is_vector:
                return None
            return CellLabels(tuple(value.labels), value.shape, value.axes)
        if isinstance(value, np.ndarray):
            entry = self._by_id.get(id(value))
            if entry is not None and entry[0]() is value:
                return entry[1]
        return None

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
