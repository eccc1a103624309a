"""A DataFrame conformed to a schema by the in-memory rules, once per distinct value.

An engine stores a DataFrame the curator bound only after `jostle.data.schema.conform` has
read it as Python values, cell by cell (jostle/data/engine/duckdb_engine.py, `_bind`, says why
not in SQL: DuckDB types an object column from all its values, so one row could change how
every other row reads). `conform` loops over every cell in Python; for the columns whose cells
are all of one kind this module gives its result without that loop:

  * a numeric column of a numeric or boolean dtype: `float(cell)` is numpy's cast to float64
    (both round to nearest), a missing cell is NaN, so the column is converted and clamped in
    one vectorised step;
  * a categorical column whose non-missing cells are all texts of str's own type (a string
    dtype, or an object column of such texts: a subclass of str would be hashed and compared
    by its own methods, which `conform` never calls): equal texts are equal cells, so
    `conform`'s own rules (`_is_missing`, `_match_category`) are applied once per distinct
    text (pandas.factorize) and spread to the rows.

Anything else (a column of mixed Python objects, a numeric column of texts), and any frame with
a cell that breaks the schema, goes to `conform` itself, which then names the cell or drops
the row and logs the count exactly as it always does. Either way the result is `conform`'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jostle.data.schema import Categorical, Numeric, Schema, _is_missing, _match_category, conform


def conform_frame(frame: Any, schema: Schema, table: str, strict: bool) -> Any:
    """`conform(frame, schema, table, strict)`, faster when every column has one kind of cell."""
    fast = _fast(frame, schema)
    return fast if fast is not None else conform(frame, schema, table, strict=strict)


def _fast(frame: Any, schema: Schema) -> Any:
    """The conformed frame, or None when a column needs the cell-by-cell rules or a cell breaks
    the schema (conform then says so, as the curator's or the program's route requires)."""
    import pandas as pd

    if any(name not in frame.columns for name in schema.names):
        return None  # conform names the missing column
    out = {}
    for name, spec in schema.columns:
        column = frame[name]
        if isinstance(spec, Numeric):
            values = _numbers(column)
            if values is None:
                return None
            missing = np.isnan(values)
            if missing.any():
                if spec.default is None:
                    return None
                values = np.where(missing, float(spec.default), values)
            out[name] = spec.conform(values)
        else:
            cells = _categories(column, spec)
            if cells is None:
                return None
            out[name] = cells
    return pd.DataFrame(out, index=pd.RangeIndex(len(frame)))


def _numbers(column: Any) -> np.ndarray | None:
    """A numeric or boolean column as float64 (missing cells NaN), or None for other dtypes."""
    import pandas as pd

    dtype = column.dtype
    if isinstance(dtype, pd.SparseDtype) or isinstance(dtype, pd.CategoricalDtype):
        return None
    if not (pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_integer_dtype(dtype)
            or pd.api.types.is_float_dtype(dtype)):
        return None
    return column.to_numpy(dtype=float, na_value=np.nan)


def _categories(column: Any, spec: Categorical) -> Any:
    """A column of texts matched to the categories once per distinct text, or None."""
    import pandas as pd

    if isinstance(column.dtype, pd.CategoricalDtype) or not (
            isinstance(column.dtype, pd.StringDtype)
            or (column.dtype == object and pd.api.types.infer_dtype(column, skipna=True) in ("string", "empty"))):
        return None
    # Texts of str's own type only: factorize hashes and compares the cells, which for a
    # subclass of str runs its own __hash__ and __eq__ (they may raise, or merge unequal texts);
    # conform reads such a cell by str's methods (jostle.data.cells).
    # (A float is NaN here, the only float `infer_dtype` skips.)
    if not set(map(type, column.to_numpy(dtype=object))) <= {str, float, type(None), type(pd.NA)}:
        return None
    codes, texts = pd.factorize(column, use_na_sentinel=True)
    values = np.empty(len(texts) + 1, dtype=object)  # the last slot: a missing cell (code -1)
    for i, text in enumerate(list(texts) + [None]):
        ok, value = (False, None) if _is_missing(text) else _match_category(text, spec.values)
        if not ok:
            if spec.default is None:
                if (codes == (i if i < len(texts) else -1)).any():
                    return None  # a cell breaks the schema: conform names it or drops its row
                continue
            value = spec.default
        values[i] = value
    return pd.Series(values[codes], dtype=object)


def frame_rows_matching(frame: Any, column: str, pattern: str) -> Any:
    """The rows of a pandas frame whose `column` cell is not a text, or is a text matching the
    regular expression `pattern` in full. Whether a row is kept depends on that row alone (what
    jostle.language.entities.canonical_key_rows needs of it)."""
    import re

    compiled = re.compile(pattern)
    keep = np.fromiter((not isinstance(cell, str) or compiled.fullmatch(cell) is not None
                        for cell in frame[column].tolist()), dtype=bool, count=len(frame))
    return frame[keep].reset_index(drop=True)
