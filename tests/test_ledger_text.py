"""How budgets and the session ledger print: exact amounts, short lines, sensible remainders."""

from __future__ import annotations

from fractions import Fraction

import pytest

from jostle import Session
from jostle.privacy.budget import Budget, Charge, DataNode, ParallelGroup, fmt, fmt_exact
from jostle.privacy.ledger_text import PARALLEL_NOTE, WRAP_WIDTHS, render_ledger


@pytest.mark.parametrize("value, approximate, exact", [
    (Fraction(1, 10**9), "1e-09", "1e-09"),
    (Fraction(1, 3), "0.333333", "1/3"),
    (Fraction(1, 4), "0.25", "0.25"),
    (Fraction(-1, 8), "-0.125", "-0.125"),
    (Fraction(7), "7", "7"),
    (Fraction(0), "0", "0"),
    (Fraction(123456789, 1000), "123457", "123456.789"),
    (1 - Fraction(1, 10**9), "1", "0.999999999"),
    (Fraction(1, 3 * 10**9), "3.33333e-10", "1/3000000000"),
    (Fraction(0.1), "0.1", "~0.1"),  # an unsnapped float (2^-55 denominator): marked approximate
])
def test_budget_quantities_print_exactly_or_say_they_are_approximate(value, approximate, exact):
    assert fmt(value) == approximate
    assert fmt_exact(value) == exact
    if "~" not in exact:
        assert Fraction(exact) == value  # what is printed exactly reads back as the same number


def test_a_budget_prints_exactly():
    assert str(Budget(Fraction(1, 3))) == "epsilon=1/3"
    assert str(Budget(Fraction(1, 2), Fraction(1, 10**6))) == "epsilon=0.5, delta=1e-06"


def _charge(index: int, epsilon: Fraction, description: str, node: DataNode) -> Charge:
    return Charge(index, Budget(epsilon), "option DAWA", description, None, node)


def test_long_descriptions_wrap_in_their_column_and_nothing_is_cut():
    root = DataNode("all rows")
    description = ("H(histogram(patients.where(lambda r: r.diabetic == 'yes').bin('systolic', "
                   "edges), ['systolic'])) measured with uniformity, sparsity and a long tail")
    charges = [_charge(1, Fraction(1, 10), "count(patients)", root), _charge(2, Fraction(9, 10), description, root)]
    text = render_ledger(charges, Budget(Fraction(1)), Budget(Fraction(1)))
    lines = text.splitlines()
    table = lines[:-1]
    assert max(map(len, table)) <= 100, text
    start, end = lines[0].index("what"), lines[0].index("data")
    assert end - start <= WRAP_WIDTHS["what"] + 2
    column = [line[start:end].strip() for line in lines[2:-1]]
    assert " ".join(column).split() == description.split()  # every word, in order
    assert lines[-1] == "this run spent: epsilon=1   of its budget: epsilon=1   left for this run: epsilon=0"
    assert PARALLEL_NOTE not in text  # no partition: spent is the column sum


def test_the_parallel_note_appears_only_with_partitions():
    root = DataNode("all rows")
    group = ParallelGroup(root, "region")
    parts = [group.part("north"), group.part("south")]
    charges = [_charge(i + 1, Fraction(1, 2), "count(part)", part) for i, part in enumerate(parts)]
    text = render_ledger(charges, Budget(Fraction(1)), Budget(Fraction(1, 2)))
    assert text.splitlines()[-1] == PARALLEL_NOTE
    assert "left for this run: epsilon=0.5" in text


@pytest.mark.parametrize("spent, expected", [
    (Fraction(1), "left for this run: epsilon=0"),
    (Fraction(2, 3), "left for this run: epsilon=1/3"),
    (1 - Fraction(1, 10**9), "left for this run: epsilon=1e-09 (under a millionth of the total: "
                             "too little for a useful release)"),
    (1 - Fraction(1, 10**6), "left for this run: epsilon=1e-06"),  # a millionth is still usable
    (1 - Fraction(1, 3 * 10**9), "left for this run: epsilon=1/3000000000 (under a millionth"),
])
def test_a_remaining_budget_reads_sensibly_and_exactly(spent, expected):
    text = render_ledger([], Budget(Fraction(1)), Budget(spent))
    assert expected in text.splitlines()[-1], text


def test_a_session_that_spends_all_but_a_billionth_says_so(patients):
    with Session(budget=1, ledger_path=":memory:") as session:
        session.bind_private("patients", patients, {"age": ("numeric", 0, 100)})
        session.run("x = laplace(count(patients), 0.999999999)")
        text = str(session.ledger)
    summary = text.splitlines()[-1]  # an in-memory ledger: no line per dataset
    assert "this run spent: epsilon=0.999999999" in summary
    assert "left for this run: epsilon=1e-09 (under a millionth" in summary
