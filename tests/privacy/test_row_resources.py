"""What a row function may allocate (issue 21, hole 2 and two bugs), run on neighbouring tables.

A row's own values must not decide whether a run exhausts memory: `r.s * r.n` with one row
holding s = "a" and n = 10**12 asked for a terabyte on that row only (MemoryError, exit 70,
only when the row was present), and the same on the public probe was an internal error on
every table. jostle/language/row_limits.py sizes `text * n` and `a ** b` from their operands
before they run: on the probe an oversized result is a located error, on a row the row takes
the missing value without being computed, and no row holds a value beyond the public limits.

Each program runs on two neighbouring tables (the row holding the extreme values added or
removed) in fresh Sessions with the same seed; what the program can observe must be
identical. The schemas are built so that the probe does *not* try the extreme combination
(two categorical domains whose cross product is beyond PROBE_PAIR_LIMIT are paired
cyclically), which `test_the_probe_does_not_try_the_extreme_row` checks, so only the rows
can reach it.
"""

from __future__ import annotations

import io
import tracemalloc

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.diagnostics.errors import JostleError
from jostle.language.row_limits import MAX_ROW_TEXT

# Seven texts and 10,001 counts: 70,007 combinations, beyond PROBE_PAIR_LIMIT, so the probe pairs
# them cyclically (count i with text i % 7). 10**12 sits at index 10,000, and 10,000 % 7 = 4:
# the probe pairs it with "", never with "a". Every other count is below 10,000, so every
# combination the probe does try stays within MAX_ROW_TEXT.
TEXTS = ["a", "b", "c", "d", "", "e", "f"]
HUGE = 10**12
COUNTS = list(range(10_000)) + [HUGE]
REPEAT_SCHEMA = {"s": ("categorical", TEXTS), "n": ("categorical", COUNTS)}
SHARED_ROWS = [("a", 1), ("b", 2), ("c", 3)]

# The same shape for powers: bases 1..7 (1 at index 3), exponents -1..-9999 (every power of them
# is a float) and one large exponent at index 9,999 (9,999 % 7 = 3: the probe pairs it with 1).
BASES = [2, 3, 4, 1, 5, 6, 7]


def power_schema(exponent: int) -> dict:
    return {"b": ("categorical", BASES), "e": ("categorical", [-k for k in range(1, 10_000)] + [exponent])}


def observe(program: str, frame: pd.DataFrame, schema: dict, engine: str = "auto") -> tuple[str, str, str, str]:
    """(output, error class, rendered error, ledger) of `program` on `frame` bound as t.

    Only JostleErrors are caught: anything else (MemoryError, an internal TypeError) fails
    the test, as it would end the command line with exit 70.
    """
    out = io.StringIO()
    session = Session(budget=1.0, seed=21, output=out, ledger_path=":memory:", engine=engine)
    session.bind_private("t", frame, schema)
    try:
        session.run(program)
        error, message = "", ""
    except JostleError as caught:
        error, message = type(caught).__name__, caught.render()
    return out.getvalue(), error, message, str(session.ledger)


def neighbours(shared: list[tuple], extreme: tuple, columns: tuple[str, str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The table with the extreme row (at the end) and without it."""
    return (pd.DataFrame(shared + [extreme], columns=list(columns)),
            pd.DataFrame(shared, columns=list(columns)))


def on_both(program: str, schema: dict, shared: list[tuple], extreme: tuple, columns: tuple[str, str],
            engine: str = "auto") -> tuple[str, str, str, str]:
    """Run on both neighbours, assert everything observable is identical, return it."""
    with_row, without_row = neighbours(shared, extreme, columns)
    first = observe(program, with_row, schema, engine)
    second = observe(program, without_row, schema, engine)
    assert first == second, f"observable difference between neighbours:\n{first}\n---\n{second}"
    return first


# ---------------------------------------------------------------- hole 2: a row's own values
def test_the_probe_does_not_try_the_extreme_row() -> None:
    """The premise of the tests below: the cyclic probe never pairs "a" with 10**12 (nor 2 with
    the large exponent), so before the fix only the row itself reached them."""
    from jostle.data.schema import Schema
    from jostle.language.values import RowValues, _joint_probe, domain_probe

    def probe_pairs(schema: dict, names: tuple[str, str]) -> set[tuple]:
        specs = Schema.of(schema)
        columns = [RowValues(None, None, name, domain_probe(specs[name]), sources=((name, domain_probe(specs[name])),))
                   for name in names]
        left, right = _joint_probe(columns)[0]
        return set(zip(left.tolist(), right.tolist()))

    pairs = probe_pairs(REPEAT_SCHEMA, ("s", "n"))
    assert ("", HUGE) in pairs and ("a", HUGE) not in pairs
    assert max(len(s) * n for s, n in pairs if n != HUGE) <= MAX_ROW_TEXT
    powers = probe_pairs(power_schema(4 * 10**7), ("b", "e"))
    assert (1, 4 * 10**7) in powers and (2, 4 * 10**7) not in powers


REPETITIONS = [
    'u = t.where(lambda r: r.s * r.n != "x")\nprint("rows kept:", "hidden")\n',
    'u = t.where(lambda r: r.n * r.s == "")\nprint("done")\n',
    'u = t.derive("twice", lambda r: (r.s * r.n) + "!", categorical(["!", "a!"], default="!"))\nprint("done")\n',
    'def f(r):\n    x = r.s * r.n\n    return x + r.s != "q"\nu = t.where(f)\nprint("done")\n',
]


@pytest.mark.parametrize("program", REPETITIONS)
def test_a_text_repeated_by_a_rows_count_is_the_same_on_neighbours(program: str) -> None:
    """Hole 2's reproducer: the row ("a", 10**12) made the run die with MemoryError only when
    present. Now that row takes the missing value, never computed, and both runs end alike."""
    output, error, message, _ = on_both(program, REPEAT_SCHEMA, SHARED_ROWS, ("a", HUGE), ("s", "n"))
    assert error == "" and output.endswith("\n"), (error, message)


def test_the_rows_of_an_oversized_repetition_take_the_missing_value() -> None:
    """The semantics, shown on a public table whose rows can be printed: the row whose
    repetition would be too long is dropped by where and takes the default in derive."""
    public = pd.DataFrame({"s": ["a", "b", "a"], "n": [3, 2, HUGE]})
    out = io.StringIO()
    session = Session(budget=1.0, seed=1, output=out, ledger_path=":memory:")
    session.bind_public("p", public, REPEAT_SCHEMA)
    session.run('print(map(lambda row: row.s, rows(p.where(lambda r: r.s * r.n != "x"))))\n'
                'd = p.derive("k", lambda r: r.s * r.n, categorical(["aaa", "bb", "none"], default="none"))\n'
                'print(map(lambda row: row.k, rows(d)))\n')
    assert out.getvalue() == "['a', 'b']\n['aaa', 'bb', 'none']\n"


@pytest.mark.parametrize("program, where", [
    ('u = t.where(lambda r: r.s * r.n == "x")\n', "1:23"),
    ('u = t.where(lambda r: r.n * r.s == "x")\n', "1:23"),
    ('u = t.where(lambda r: (r.s + r.s) * r.n == "x")\n', "1:23"),
])
def test_a_repetition_the_probe_tries_is_a_located_error(program: str, where: str) -> None:
    """Bug: when the probe met "a" * 10**12, every table died with an internal MemoryError.
    It is sized before it is built: a located JostleRuntimeError with a hint, on both."""
    schema = {"s": ("categorical", ["a", "b"]), "n": ("categorical", [1, HUGE])}
    output, error, message, _ = on_both(program, schema, [("a", 1)], ("b", HUGE), ("s", "n"))
    assert output == "" and error == "JostleRuntimeError"
    assert f"'*' gives a text of more than {MAX_ROW_TEXT:,} characters" in message
    assert f"<string>:{where}" in message and "hint: " in message


def test_a_power_the_probe_tries_is_sized_before_it_is_computed() -> None:
    """`2 ** 10**12` on the probe ran (for hours, then MemoryError) before its size was checked.
    It is refused from its size alone: a located error, and nothing built (2 ** (4 * 10**7),
    5 MB, was computed before; now the run allocates what it does with a small exponent)."""
    program = "u = t.where(lambda r: r.b ** r.e > 0)\n"

    def schema(exponent: int) -> dict:
        return {"b": ("categorical", [1, 2]), "e": ("categorical", [1, exponent])}

    frame = pd.DataFrame([(1, 1)], columns=["b", "e"])
    small, shown_small = peak_memory(program, frame, schema(2000))  # 603 digits: refused too
    large, shown_large = peak_memory(program, frame, schema(4 * 10**7))
    assert shown_small[:2] == shown_large[:2] == ("", "JostleRuntimeError")
    assert large - small < 1_000_000, (small, large)
    output, error, message, _ = on_both(program, schema(HUGE), [(1, 1)], (2, HUGE), ("b", "e"))
    assert error == "JostleRuntimeError" and "'**' gives a whole number of more than 308 digits" in message
    assert "<string>:1:23" in message and "hint: use floats" in message


def peak_memory(program: str, frame: pd.DataFrame, schema: dict) -> tuple[int, tuple]:
    """The peak of memory Python allocated while `program` ran, and what it showed."""
    observe(program, frame.iloc[:0], schema)  # warm caches (parser, imports) outside the measure
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        shown = observe(program, frame, schema)
        return tracemalloc.get_traced_memory()[1], shown
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("program, schema, shared, extreme, columns", [
    ('u = t.where(lambda r: r.s * r.n != "x")\nprint("done")\n',
     {"s": ("categorical", TEXTS), "n": ("categorical", list(range(10_000)) + [4 * 10**7])},
     SHARED_ROWS, ("a", 4 * 10**7), ("s", "n")),
    ('u = t.where(lambda r: r.b ** r.e != 0)\nprint("done")\n',
     power_schema(4 * 10**7), [(3, -2), (1, -5)], (2, 4 * 10**7), ("b", "e")),
])
def test_one_rows_values_cannot_make_the_run_allocate_more(program, schema, shared, extreme, columns) -> None:
    """Before the fix, a row's values below the crash point still decided how much the run
    allocated (a 40 MB text, a 5 MB whole number built then discarded): the lever of the crash.
    Now the oversized result is never built, so the extreme row costs what any row costs."""
    with_row, without_row = neighbours(shared, extreme, columns)
    peak_with, shown_with = peak_memory(program, with_row, schema)
    peak_without, shown_without = peak_memory(program, without_row, schema)
    assert shown_with == shown_without and shown_with[1] == ""
    assert abs(peak_with - peak_without) < 1_000_000, (peak_with, peak_without)


def test_fixed_width_texts_cannot_double_past_the_limit() -> None:
    """`"a" if c else "bb"` is a fixed-width text array; doubling it with `+` made every row
    as wide as the widest text (a 64 KB row after 14 doublings, unchecked: only Python texts
    were measured). The width is public, and beyond MAX_ROW_TEXT the probe refuses it."""
    program = ('def f(r):\n    x = "a" if r.n > 5 else "bb"\n    for i in range(14):\n        x = x + x\n'
               '    return x == "q"\nu = t.where(f)\n')
    schema = {"s": ("categorical", ["a", "b", "c"]), "n": ("categorical", list(range(10)))}
    output, error, message, _ = on_both(program, schema, SHARED_ROWS, ("a", 7), ("s", "n"))
    assert error == "JostleRuntimeError" and "'+' gives a text of more than" in message
    assert "<string>:4:13" in message


def test_row_values_stay_within_the_limits_after_every_operation() -> None:
    """A row whose text is beyond MAX_ROW_TEXT after an operation holds the placeholder, so a
    chain of doublings cannot grow it further (before, the long text stayed in the column)."""
    from jostle.language.row_apply import row_apply
    from jostle.language.values import RowScope, RowValues

    probe = np.asarray(["a", "b"], dtype=object)
    column = RowValues(np.asarray(["x" * (MAX_ROW_TEXT // 2 + 1), "y"], dtype=object), None, "s", probe,
                       scope=RowScope("t"), sources=(("s", probe),))
    doubled = row_apply(lambda a: a + a, [column], None, "'+'", op=("+",))
    assert doubled.missing.tolist() == [True, False]
    assert doubled.array.tolist() == ["aa", "yy"]  # the placeholder: the probe's first value


@pytest.mark.parametrize("engine", ["auto", "duckdb"])
def test_the_engine_route_treats_the_extreme_row_alike(engine: str) -> None:
    """On DuckDB a repetition cannot compile and runs in memory on the engine's rows, under the
    same sizing: both neighbours show the same, in memory and on the engine."""
    if engine == "duckdb":
        pytest.importorskip("duckdb")
    program = 'u = t.where(lambda r: r.s * r.n != "x")\nprint("done")\n'
    shown = on_both(program, REPEAT_SCHEMA, SHARED_ROWS, ("a", HUGE), ("s", "n"), engine=engine)
    assert shown[:3] == ("done\n", "", "")


# ---------------------------------------------------------------- bug: round(r.score, r.code)
@pytest.mark.parametrize("private", [True, False])
def test_a_column_as_the_digits_of_round_is_a_located_refusal(private: bool) -> None:
    """`round(r.score, r.code)` was an internal TypeError (int() of a column). The digits are
    one public number for all rows: a column there is refused on its type, with a hint."""
    schema = {"score": ("numeric", 0, 100), "code": ("categorical", [0, 1, 2])}
    program = 'u = t.derive("x", lambda r: round(r.score, r.code), numeric(0, 100))\n'
    if private:
        output, error, message, _ = on_both(program, schema, [(1.25, 1), (7.5, 2)], (3.125, 0), ("score", "code"))
    else:
        session = Session(budget=1.0, seed=1, output=io.StringIO(), ledger_path=":memory:")
        session.bind_public("t", pd.DataFrame({"score": [1.25], "code": [1]}), schema)
        with pytest.raises(JostleError) as caught:
            session.run(program)
        error, message = type(caught.value).__name__, caught.value.render()
    assert error == "PrivacyError" and "the number of digits of round() cannot be a column" in message
    assert "<string>:1:29" in message and "hint: round every row to the same public number of digits" in message


def test_round_with_public_digits_still_works_in_a_row_function() -> None:
    public = pd.DataFrame({"score": [1.25, 7.55]})
    out = io.StringIO()
    session = Session(budget=1.0, seed=1, output=out, ledger_path=":memory:")
    session.bind_public("p", public, {"score": ("numeric", 0, 100)})
    session.run('d = p.derive("r", lambda r: round(r.score, 1), numeric(0, 100))\n'
                'print(map(lambda row: row.r, rows(d)))\n')
    assert out.getvalue() == "[1.2, 7.6]\n"  # numpy's round: half to even on the double
    with pytest.raises(JostleError) as caught:  # digits that are no number: located, not int("x")
        session.run('u = p.where(lambda r: round(r.score, "x") > 1)\n')
    assert "round() needs a number, got a string" in caught.value.render()
