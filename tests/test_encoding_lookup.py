"""The learner kit's fast category lookup gives exactly what pandas' Index gives, or defers to it.

`encode_categories` codes a few values by a dict (jostle.learnerkit.encoding._small_lookup) and
asks pandas otherwise; the codes, and the errors, must not depend on which path ran.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jostle.learnerkit.encoding import SMALL_LOOKUP_ROWS, _small_lookup, encode_categories

CELLS = st.one_of(st.sampled_from(["a", "b", "", "é", 0, 1, 1.0, True, False, -0.0, None, math.nan, np.nan,
                                   np.float64(2.0), np.int64(2), "2", ("a", 1)]),
                  st.integers(-3, 3), st.text(max_size=2))


def pandas_codes(values: list, categories: list) -> np.ndarray:
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return pd.Index(categories, dtype=object).get_indexer(array).astype(np.int64)


def test_the_dict_path_agrees_with_pandas_whenever_it_answers() -> None:
    answered = [0]

    @settings(max_examples=400, derandomize=True, deadline=None, database=None)
    @given(data=st.data(), categories=st.lists(CELLS, min_size=1, max_size=6))
    def check(data: st.DataObject, categories: list) -> None:
        values = data.draw(st.lists(st.one_of(st.sampled_from(categories), CELLS), max_size=12))
        array = np.empty(len(values), dtype=object)
        array[:] = values
        fast = _small_lookup(array, categories)
        if fast is None:
            return  # pandas decides: nothing to compare
        answered[0] += 1
        np.testing.assert_array_equal(fast, pandas_codes(values, categories))

    check()
    assert answered[0] >= 40, answered  # not vacuous (54 of the 400 derandomized cases answer)


def test_it_defers_on_a_miss_on_nan_on_equal_categories_and_on_many_rows() -> None:
    def small(values: list, categories: list) -> np.ndarray | None:
        array = np.empty(len(values), dtype=object)
        array[:] = values
        return _small_lookup(array, categories)

    assert small(["a", "b"], ["b", "a"]).tolist() == [1, 0]
    assert small(["c"], ["a", "b"]) is None  # missing: pandas (then the caller's error)
    assert small([float("nan")], [1.0, float("nan")]) is None  # a missing category: pandas decides
    assert small(["a"], ["a", None]) is None
    assert small([1], [1, True]) is None  # equal categories: pandas refuses the index
    assert small([["a"]], ["a"]) is None  # unhashable
    assert small(["a"] * (SMALL_LOOKUP_ROWS + 1), ["a"]) is None
    # and encode_categories answers as before on what the dict cannot decide
    assert encode_categories(np.array([float("nan"), 1.0], dtype=object), [1.0, float("nan")], "x").tolist() == [1, 0]
    with pytest.raises(ValueError, match="outside the declared public domain"):
        encode_categories(["c"], ["a", "b"], "column 'f'")
