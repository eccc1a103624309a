"""Issue 28: results where people expect them.

A released histogram keeps its labels inside a program (indexed by a label, printed with its
labels, `.labels`), and a grouped release (a list of private scalars, one per part of one
partition, released together) is labelled by the parts' keys: in Python it is a DataFrame with
one column per key and one for the value (jostle.language.conversion).
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import jostle
from jostle import Session

SCHEMA = {"sex": ("categorical", ["F", "M"]), "smoker": ("categorical", ["yes", "no"]), "age": ("numeric", 0, 100)}


@pytest.fixture()
def session():
    rng = np.random.default_rng(0)
    n = 200
    frame = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "smoker": rng.choice(["yes", "no"], n),
                          "age": rng.integers(0, 100, n)})
    out = io.StringIO()
    s = Session(budget=20.0, ledger_path=":memory:", seed=5, output=out)
    s.bind_private("p", frame, SCHEMA)
    s.out = out
    yield s
    s.close()


def _printed(session: Session) -> list[str]:
    return session.out.getvalue().strip().splitlines()


def test_a_released_histogram_is_indexed_and_printed_by_its_labels(session):
    session.run('''
with budget 1:
    h = {{ histogram(p, "sex") }}
print(h)
print(h["F"] == h[0], h["M"] == h[1], h.labels)
print(str(h) == "[F: " + str(h[0]) + ", M: " + str(h[1]) + "]")
''')
    lines = _printed(session)
    h = session.eval("h")
    assert lines[0] == f"[F: {h['F']}, M: {h['M']}]"
    assert lines[1] == "true true ['F', 'M']"
    assert lines[2] == "true"


def test_a_2d_histogram_is_indexed_by_a_list_of_labels(session):
    session.run('''
with budget 1:
    g = {{ histogram(p, "sex", "smoker") }}
print(g[["M", "no"]] == g[3], g[["F", "yes"]] == g[0])
''')
    assert _printed(session) == ["true true"]
    frame = session.eval("g")
    assert frame.loc["M", "no"] == session.eval("g[3]")


def test_a_private_histogram_is_indexed_by_a_label_too(session):
    session.run('''
h = histogram(p, "smoker")
with budget 1:
    smokers = {{ h["yes"] }}
''')
    assert isinstance(session.eval("smokers"), int) and len(session.ledger) == 1
    with pytest.raises(jostle.JostleRuntimeError, match="no cell is labelled 'maybe'"):
        session.run('y = h["maybe"]')
    assert len(session.ledger) == 1  # refused before any charge


def test_labels_the_vector_does_not_have_are_refused_with_its_cells(session):
    session.run('with budget 1:\n    h = {{ histogram(p, "sex") }}')
    with pytest.raises(jostle.JostleRuntimeError) as caught:
        session.eval('h["X"]')
    assert caught.value.message == "no cell is labelled 'X'"
    assert "['F', 'M']" in caught.value.hint
    with pytest.raises(jostle.JostleRuntimeError) as caught:
        session.eval('(h * 2)["F"]')  # a computed vector has lost its labels
    assert "lost its labels" in caught.value.hint
    with pytest.raises(jostle.JostleRuntimeError):
        session.eval('[1, 2]["F"]')


def test_a_count_per_group_comes_to_python_as_a_dataframe(session):
    session.run('''
with budget 1:
    by_sex = {{ map(count, p.partition("sex")) }}
print(by_sex)
print(by_sex["M"] == by_sex[1])
''')
    frame = session.eval("by_sex")
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == ["sex", "count"] and list(frame["sex"]) == ["F", "M"]
    vector = session.eval("by_sex * 1")  # a vector computed from it is a plain array
    assert isinstance(vector, np.ndarray) and list(vector) == list(frame["count"])
    assert _printed(session) == [f"[F: {frame['count'][0]}, M: {frame['count'][1]}]", "true"]
    # one release over disjoint parts: charged once (parallel composition)
    assert session.spent.epsilon == 1


def test_a_groupby_over_two_columns_has_two_key_columns(session):
    session.run('''
with budget 1:
    both = {{ map(lambda part: part.count(), p.groupby("sex", "smoker")) }}
''')
    frame = session.eval("both")
    assert list(frame.columns) == ["sex", "smoker", "count"]
    assert list(zip(frame["sex"], frame["smoker"])) == [("F", "yes"), ("F", "no"), ("M", "yes"), ("M", "no")]
    assert session.eval('both[["M", "yes"]]') == frame["count"][2]


def test_a_sum_per_group_through_laplace_names_its_value(session):
    session.run('ages = laplace(map(lambda part: part.sum("age"), p.partition("smoker")), 1)')
    frame = session.eval("ages")
    assert list(frame.columns) == ["smoker", "sum"] and list(frame["smoker"]) == ["yes", "no"]


def test_values_from_different_partitions_are_not_labelled(session):
    """Only one partition's parts label a release: counts from two partitions are a plain vector."""
    session.run('''
a = p.partition("sex")
b = p.partition("smoker")
with budget 2:
    mixed = {{ [a[0].count(), b[0].count()] }}
    twice = {{ [a[0].count(), a[0].count()] }}
print(mixed)
''')
    assert isinstance(session.eval("mixed"), np.ndarray)
    assert isinstance(session.eval("twice"), np.ndarray)
    assert ":" not in _printed(session)[0]


def test_grouped_labels_survive_inside_a_list_returned_to_python(session):
    session.run('with budget 1:\n    both = [{{ map(count, p.partition("sex")) }}, 3]')
    value = session.eval("both")
    assert isinstance(value[0], pd.DataFrame) and value[1] == 3


def test_labels_and_refusals_are_the_same_on_neighbouring_tables():
    """The labels come from the declared domain, never the rows: removing the only 'M' row
    changes no label, no column of the DataFrame and no refusal's text."""
    frame = pd.DataFrame({"sex": ["F"] * 30 + ["M"], "smoker": ["yes", "no"] * 15 + ["no"], "age": [40] * 31})
    seen = []
    for rows in (frame, frame.iloc[:-1]):
        with Session(budget=2.0, ledger_path=":memory:", seed=1, output=io.StringIO()) as s:
            s.bind_private("p", rows, SCHEMA)
            s.run('with budget 1:\n    g = {{ map(count, p.groupby("sex", "smoker")) }}\n'
                  'with budget 1:\n    h = {{ histogram(p, "sex") }}\nlabels = [g.labels, h.labels]')
            with pytest.raises(jostle.JostleRuntimeError) as caught:
                s.eval('g[["M", "maybe"]]')
            released = s.eval("g")
            seen.append((s.eval("labels"), caught.value.message, caught.value.hint, list(released.columns),
                         released[["sex", "smoker"]].values.tolist(), list(s.eval("h").index)))
    assert seen[0] == seen[1]
    assert seen[0][0][1] == ["F", "M"]


def test_a_list_over_the_parts_is_indexed_by_key_before_its_release(session):
    session.run('counts = map(count, p.partition("sex"))\nwith budget 1:\n    men = {{ counts["M"] }}')
    assert isinstance(session.eval("men"), int)
    with pytest.raises(jostle.JostleRuntimeError, match="an index must be a whole number"):
        session.eval('[1, 2]["M"]')
