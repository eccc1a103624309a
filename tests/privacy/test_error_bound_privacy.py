"""Error bounds reveal nothing (issue 29): `accuracy(x, c)`, the width of `interval(x, c)`, the laws on
the ledger and the error messages of values without a law are the same on neighbouring datasets.

They are computed from a release's public calibration (mechanism, sensitivity, budget, grid) and the
coefficients the program wrote, never from rows; the centre of `interval` is the released value (a
charged release). (A mean's half-width is an estimate from its released sum and count: public too.)
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.diagnostics.errors import JostleError

SCHEMA = {"age": {"type": "numeric", "bounds": [0, 100]}, "sex": {"type": "categorical", "values": ["F", "M"]}}
PROGRAM = """
g = geometric(t.count(), 1)
s = laplace(t.sum("age"), 0.5)
h = geometric(t.histogram("sex"), 0.5)
q = gaussian(t.count(), 1, 1e-6)
print(accuracy(g, 0.95), accuracy(s, 0.9), accuracy(h, 0.95), accuracy(q, 0.99))
print(accuracy(g + s - 2 * q, 0.95), accuracy(h["F"] - h["M"], 0.95))
iv = interval(s, 0.95)
print(iv[1] - iv[0])
"""


def _bounds(data: pd.DataFrame, seed: int) -> tuple[list[str], list[str], list]:
    out = io.StringIO()
    session = Session(budget=50, delta=1e-5, seed=seed, ledger_path=":memory:", output=out)
    session.bind_private("t", data, SCHEMA)
    session.run(PROGRAM)
    laws = [entry.details.get("law") for entry in session.ledger]
    lines = out.getvalue().splitlines()
    return lines, [str(w.message) for w in session.warnings], laws


@pytest.mark.parametrize("seed", [1, 2])
def test_accuracy_and_interval_widths_are_identical_on_neighbours(seed: int) -> None:
    data = pd.DataFrame({"age": np.arange(300) % 97, "sex": ["F", "M", "M"] * 100})
    neighbour = data.drop(index=17).reset_index(drop=True)  # one row removed
    first, second = _bounds(data, seed), _bounds(neighbour, seed)
    assert first[0] == second[0]  # every printed half-width and interval width
    assert first[1] == second[1]  # the warnings (clipping notes)
    assert first[2] == second[2] and all(law is not None for law in first[2])  # the laws on the ledger


def test_the_error_of_a_value_without_a_law_says_the_same_on_neighbours() -> None:
    data = pd.DataFrame({"age": np.arange(200) % 97, "sex": ["F", "M"] * 100})
    neighbour = data.iloc[1:].reset_index(drop=True)
    messages = []
    for frame in (data, neighbour):
        session = Session(budget=50, seed=4, ledger_path=":memory:", output=io.StringIO())
        session.bind_private("t", frame, SCHEMA)
        with pytest.raises(JostleError) as raised:
            session.run("g = geometric(t.count(), 1)\nx = accuracy(g * g, 0.95)")
        messages.append((str(raised.value), raised.value.hint))
    assert messages[0] == messages[1]
