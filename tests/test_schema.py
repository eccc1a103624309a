"""Schemas and the loading rules: clamping, defaults, errors naming column and row."""

from __future__ import annotations

import pandas as pd
import pytest

from jostle import DataError, Session
from jostle.schema import Categorical, Numeric, Schema, conform, load_schema_file


def frame(**columns) -> pd.DataFrame:
    return pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in columns.items()})


def test_numeric_values_are_clamped_and_parsed():
    schema = Schema.of({"x": Numeric(0, 10)})
    out = conform(frame(x=["-3", "4.5", "11", "1e9"]), schema, "t")
    assert list(out["x"]) == [0, 4.5, 10, 10]


def test_missing_and_unparseable_values_use_the_default_or_fail_with_the_row():
    with_default = Schema.of({"x": Numeric(0, 10, default=5)})
    assert list(conform(frame(x=["", "abc", "nan", "2"]), with_default, "t")["x"]) == [5, 5, 5, 2]
    strict = Schema.of({"x": Numeric(0, 10)})
    with pytest.raises(DataError, match=r"column 'x', row 2: the value 'abc' is not a number"):
        conform(frame(x=["1", "abc"]), strict, "t")
    with pytest.raises(DataError, match=r"row 3: the value is missing"):
        conform(frame(x=["1", "2", ""]), strict, "t")


def test_categories_match_text_and_numbers_and_unknowns_are_explicit():
    schema = Schema.of({"c": Categorical((1, 2, 3))})
    assert list(conform(frame(c=["1", "2.0", 3]), schema, "t")["c"]) == [1, 2, 3]
    with pytest.raises(DataError, match=r"column 'c', row 2: the value '9' is not one of \[1, 2, 3\]"):
        conform(frame(c=["1", "9"]), schema, "t")
    lenient = Schema.of({"c": Categorical(("a", "b", "other"), default="other")})
    assert list(conform(frame(c=["a", "zzz", None]), lenient, "t")["c"]) == ["a", "other", "other"]


def test_missing_column_is_named():
    with pytest.raises(DataError, match="has no column 'y'"):
        conform(frame(x=["1"]), Schema.of({"y": Numeric(0, 1)}), "t")


@pytest.mark.parametrize("spec", [
    {"type": "numeric", "bounds": [5, 1]},
    {"type": "numeric", "bounds": [0, float("inf")]},
    {"type": "numeric", "bounds": [0]},
    {"type": "categorical", "values": []},
    {"type": "categorical", "values": ["a", "a"]},
    {"type": "categorical", "values": ["a"], "default": "b"},
    {"type": "ordinal"},
    "numeric",
])
def test_invalid_declarations(spec):
    with pytest.raises(DataError):
        Schema.of({"x": spec})


def test_schema_file(tmp_path):
    path = tmp_path / "t.schema.json"
    path.write_text('{"x": {"type": "numeric", "bounds": [0, 5], "default": 1}}')
    assert load_schema_file(path)["x"] == Numeric(0, 5, 1)
    path.write_text("{not json")
    with pytest.raises(DataError, match="not valid JSON"):
        load_schema_file(path)


def test_csv_problems_are_data_errors(tmp_path):
    s = Session(budget=1)
    with pytest.raises(DataError, match="does not exist"):
        s.bind_private("t", tmp_path / "nope.csv", {"x": ("numeric", 0, 1)})
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(DataError, match="is empty"):
        s.bind_private("t", empty, {"x": ("numeric", 0, 1)})


def test_load_in_a_program_reports_the_location(tmp_path):
    (tmp_path / "d.csv").write_text("x\n1\noops\n")
    s = Session(budget=1)
    with pytest.raises(DataError) as caught:
        s.run(f"t = load('{tmp_path / 'd.csv'}', {{x: numeric(0, 5)}})", "prog.jst")
    assert caught.value.span.location == "prog.jst:1:5"
    assert "row 2" in caught.value.message
