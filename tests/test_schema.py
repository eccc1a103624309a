"""Schemas and the loading rules: clamping, defaults, errors naming column and row."""

from __future__ import annotations

import io
import logging

import pandas as pd
import pytest

from jostle import DataError, Session
from jostle.diagnostics.errors import JostleError
from jostle.data.schema import (
    DATA_LOG, Categorical, Numeric, Schema, conform, load_schema_file, read_csv, read_csv_file, read_schema_file,
)


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


def test_a_program_schema_drops_what_a_curator_schema_refuses():
    strict = Schema.of({"x": Numeric(0, 10), "c": Categorical(("a", "b"))})
    raw = frame(x=["1", "abc", "", "30", "2"], c=["a", "a", "b", "b", "z"])
    kept = conform(raw, strict, "t", strict=False)
    assert kept.values.tolist() == [[1.0, "a"], [10.0, "b"]]
    with pytest.raises(DataError, match="row 2"):
        conform(raw, strict, "t")


def test_cells_no_schema_reads_take_the_default_or_are_named_by_kind():
    """Issue 21, hole 4: a cell that is not a number, text or boolean (here a NumPy array, a
    dict, bytes, a date) is unknown: the default, the row dropped, or the curator's refusal
    naming the row and the cell's kind; never compared or parsed by its own methods."""
    import datetime

    import numpy as np

    cells = [np.array(["a", "b"]), {"a": 1}, b"1", datetime.date(2020, 1, 1), np.str_("b"), np.float32(2.5)]
    raw = frame(c=["a"] + cells, x=["1"] + cells)
    lenient = Schema.of({"c": Categorical(("a", "b"), default="a"), "x": Numeric(0, 10, default=5)})
    out = conform(raw, lenient, "t", strict=False)
    assert out["c"].tolist() == ["a", "a", "a", "a", "a", "b", "a"]
    assert out["x"].tolist() == [1.0, 5.0, 5.0, 5.0, 5.0, 5.0, 2.5]
    strict = Schema.of({"c": Categorical(("a", "b")), "x": Numeric(0, 10)})
    assert conform(raw, strict, "t", strict=False).values.tolist() == [["a", 1.0]]
    with pytest.raises(DataError, match=r"column 'c', row 2: the value is a list, not one of \['a', 'b'\]"):
        conform(raw, strict, "t")
    with pytest.raises(DataError, match=r"column 'x', row 2: the value is a record, not a number"):
        conform(frame(x=["1", {"a": 1}]), Schema.of({"x": Numeric(0, 10)}), "t")
    with pytest.raises(DataError, match=r"row 2: the value a whole number of about 5001 digits is not one of"):
        conform(frame(c=["a", 10 ** 5000]), Schema.of({"c": Categorical(("a",))}), "t")


def test_schema_file(tmp_path):
    path = tmp_path / "t.schema.json"
    path.write_text('{"x": {"type": "numeric", "bounds": [0, 5], "default": 1}}')
    assert load_schema_file(path)["x"] == Numeric(0, 5, 1)
    path.write_text('{"columns": {"x": {"type": "numeric", "bounds": [0, 5]}}, "public_rows": true}')
    assert read_schema_file(path) == (Schema.of({"x": Numeric(0, 5)}), True)
    path.write_text('{"columns": {"x": {"type": "numeric", "bounds": [0, 5]}}, "rows": 3}')
    with pytest.raises(DataError, match="unknown key 'rows'"):
        load_schema_file(path)
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
    """An error about the file's header (public) points at the load() call."""
    (tmp_path / "d.csv").write_text("x\n1\n2\n")
    s = Session(budget=1, ledger_path=":memory:")
    with pytest.raises(DataError, match="has no column 'y'") as caught:
        s.run(f"t = load('{tmp_path / 'd.csv'}', {{y: numeric(0, 5)}})", "prog.jst")
    assert caught.value.span.location == "prog.jst:1:5"


# ---------------------------------------------------------------- hole 6 (issue 11)
def _outcome(frame: pd.DataFrame, program: str) -> tuple[str, str | None]:
    """What the program's author sees: the output, and the error message if any."""
    out = io.StringIO()
    s = Session(budget=1e7, seed=5, output=out, ledger_path=":memory:")
    s.bind_private("t", frame)  # the curator binds without a schema: the program declares it
    try:
        s.run(program, "prog.jst")
    except JostleError as error:
        return out.getvalue(), error.render()
    return out.getvalue(), None


def test_hole6_a_program_schema_never_quotes_private_values():
    """The audit's reproducer: `private t: {name: categorical(["zz"])}` on a table bound without a
    schema read the private names out one error at a time. Now the rows that break the program's
    schema are dropped and what the program sees is the same on neighbouring tables."""
    program = 'private t: {name: categorical(["zz"])}\nprint("bound", t.columns)'
    d = frame(name=["alice", "bob", "zz"])
    neighbour = frame(name=["bob", "zz"])
    assert _outcome(d, program) == _outcome(neighbour, program) == ("bound ['name']\n", None)
    # Longer lists, unparseable numbers and missing cells: never an error, never a value.
    for schema in ('{name: categorical(["zz", "alice"])}', "{name: numeric(0, 1)}",
                   "{name: numeric(0, 1, integer=true)}"):
        text = f"private t: {schema}\nprint(t.columns)"
        assert _outcome(d, text) == _outcome(neighbour, text)
        assert _outcome(d, text)[1] is None
    assert "alice" not in repr(_outcome(d, 'private t: {name: categorical(["zz"])}\nprint(count(t))'))


def test_hole6_dropped_rows_are_counted_only_in_the_curators_log(caplog):
    """The curator may learn how many rows the program's schema dropped, from the logger
    "jostle.data" (off unless the application configures logging); releases see the rest."""
    d = frame(name=["alice", "zz", "zz", None])
    with caplog.at_level(logging.WARNING, logger="jostle.data"):
        out, error = _outcome(d, 'private t: {name: categorical(["zz"])}\n'
                                 "print(laplace(count(t), 1e6) > 1.5)")
    assert error is None and out == "true\n"  # 2 rows kept: noise of scale 1e-6 cannot hide it
    assert "2 of 4 rows dropped" in caplog.text and "alice" not in caplog.text


def test_hole6_the_data_log_has_a_handler_so_python_never_prints_it():
    """Python's last-resort handler would print a warning on stderr, where a program's author
    may read it; the NullHandler stops it there (an application's own handlers still get it)."""
    assert any(isinstance(h, logging.NullHandler) for h in DATA_LOG.handlers)


def test_the_curators_schema_is_checked_strictly_at_bind_time():
    """A schema the curator gives is the curator's business: the detailed message is raised to
    them, in Python, before any program runs."""
    s = Session(budget=1, ledger_path=":memory:")
    with pytest.raises(DataError, match=r"row 1: the value 'alice' is not one of \['zz'\]"):
        s.bind_private("t", frame(name=["alice"]), {"name": Categorical(("zz",))})


def test_hole6_a_public_row_count_refuses_a_schema_that_could_drop_rows_whatever_the_rows():
    """Dropping rows would make a public row count private: refused from the schema alone."""
    program = 'private t: {sex: categorical(["F", "M"])}'
    messages = []
    for rows in (["F", "M"], ["F", "X"]):
        s = Session(budget=1, ledger_path=":memory:")
        s.bind_private("t", frame(sex=rows), public_rows=True)
        with pytest.raises(DataError, match="declare a default") as caught:
            s.run(program)
        messages.append(caught.value.render())
    assert messages[0] == messages[1]
    s = Session(budget=1, ledger_path=":memory:")
    s.bind_private("t", frame(sex=["F", "X"]), public_rows=True)
    s.run('private t: {sex: categorical(["F", "M", "other"], default="other")}')  # total: accepted


def test_hole6_unusable_csv_records_are_dropped_for_a_program_and_named_to_the_curator(tmp_path):
    """A CSV record the reader cannot use (a stray quote, too many fields, bytes that are not
    UTF-8) is dropped when the program loads the file; the curator binding it is told the line."""
    files = {
        "ragged.csv": b"x\n1\n2,3\n4\n",
        "quote.csv": b'x\n1\n"2"z\n4\n',
        "latin1.csv": b"x\n1\n\xe9\n4\n",
        "unclosed.csv": b'x\n1\n4\n"2\n',
    }
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
        out = io.StringIO()
        s = Session(budget=1e7, seed=1, output=out, ledger_path=":memory:")
        s.run(f"t = load('{tmp_path / name}', {{x: numeric(0, 10)}})\n"
              "print(round(laplace(sum(t, 'x'), 1e7)))")
        assert out.getvalue() == "5\n", name  # the rows 1 and 4
        with pytest.raises(DataError, match="line 3|not UTF-8|line 4"):
            Session(budget=1, ledger_path=":memory:").bind_private("t", tmp_path / name)
        with pytest.raises(DataError):
            read_csv(tmp_path / name)


def test_the_csv_reader_matches_pandas_on_well_formed_files(tmp_path):
    """One reader for every route; on a well-formed file it reads what pandas reads."""
    text = 'a, b,c\n1, "x, y",\n\n"q""r",2,3\r\n  \n4,5\n'
    (tmp_path / "f.csv").write_text(text)
    ours = read_csv(tmp_path / "f.csv")
    theirs = pd.read_csv(tmp_path / "f.csv", dtype=str, keep_default_na=False, skipinitialspace=True)
    assert list(ours.columns) == list(theirs.columns)
    assert ours.fillna("").values.tolist() == theirs.fillna("").values.tolist()
    assert read_csv_file(tmp_path / "f.csv").lines == (2, 4, 6)
