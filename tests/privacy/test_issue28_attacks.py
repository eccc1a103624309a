"""Adversarial review of issue 28 (private evaluation of models, the private split, labelled
results and grouped releases, the ledger's `what` descriptions, `jostle schema draft`, Session's
short errors).

The program's author is the adversary: whatever a program can observe (values, errors and their
messages, the ledger, printed text, labels, objects returned to Python) must be identical on
neighbouring inputs unless it went through a charged release. Each test states a guarantee the
code must keep. One that failed on the code the review read is marked `xfail(strict=True)` with
the hole in its reason (the suite stays green and the mark must go when the hole is fixed: the
test then XPASSes, which strict turns into a failure). Tests without a mark passed on that code
and pin the claim down against regressions.

Where a test reads a value the program cannot print (a part's rows, an unreleased count), it reads
it from the session's globals: that is the quantity the sensitivity argument is about, and a
release of it would show the same difference through noise.
"""

from __future__ import annotations

import io
from collections import Counter
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.data.schema import Categorical, Numeric
from jostle.diagnostics.errors import JostleError

SCHEMA = {"a": Categorical(["x", "y", "z"]), "b": Categorical(["u", "v"]), "c": Categorical(["yes", "no"])}


def frame(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    data = pd.DataFrame({"a": rng.choice(["x", "y", "z"], n), "b": rng.choice(["u", "v"], n)})
    data["c"] = np.where((data.a == "x") | (rng.random(n) < 0.15), "yes", "no")
    return data


OUTPUTS: dict[int, io.StringIO] = {}


def session(data: pd.DataFrame, schema: dict | None = None, unit: Any = None, budget: float = 50,
            seed: int = 1, **kwargs: Any) -> Session:
    out = io.StringIO()
    s = Session(budget=budget, seed=seed, ledger_path=":memory:", output=out, **kwargs)
    OUTPUTS[id(s)] = out
    s.bind_private("t", data, schema or SCHEMA, unit=unit)
    s.bind_public("pub", frame(150, seed=9), SCHEMA)
    s.run('m = C45(pub, "c")')  # a public model: free
    return s


def observed(s: Session, program: str) -> tuple:
    """What the author sees: printed text, the error (type and text), the ledger's rows."""
    try:
        s.run(program)
        error = None
    except JostleError as caught:
        error = (type(caught).__name__, str(caught))
    return (OUTPUTS[id(s)].getvalue(), error,
            [(c.mechanism, c.budget, c.description, c.as_dict()["data"]) for c in s.ledger])


def _rows(table: Any) -> Counter:
    """A table's rows as the program can tell them apart: numbers by their exact bits (a row
    function tells -0.0 from 0.0: 1 / r.z < 0)."""
    frame_ = table.frame
    keys = []
    for record in frame_.itertuples(index=False):
        keys.append(tuple(np.float64(v).tobytes() if isinstance(v, (float, np.floating)) else v for v in record))
    return Counter(keys)


def _changed(one: Counter, two: Counter) -> int:
    return sum(((one - two) + (two - one)).values())


# ====================================================================== 2. the split
SPLIT_ZERO = ('z = t.derive("z", lambda r: 0.0 * (1 - 2 * (r.b == "u")), numeric(-1, 1)).select(["z"])\n'
              'parts = split(z, 0.5)\n')


# FIXED (was a strict xfail):  HIGH. split's parts are not disjoint-by-row on neighbours:
# jostle/language/evaluation.py  _canonical hashes and ranks numbers as doubles with `+ 0.0`, so -0.0
# and 0.0 are ONE row for  the hash and the rank, while a row function tells them apart (1 / r.z < 0).
# The author makes  every row canonically equal (derive z = 0.0 * (1 - 2 * (r.b == 'u')), select z):
# the rank of  each row is then its position in the table, and removing the first row shifts every
# rank,  moving many rows (and which of them are 'u') from part to part; parallel credit is given for
# a count whose parts move by dozens. Fix: hash and rank the exact bits of a number
# (values.view(np.uint64), keeping the sign of zero), and/or make Numeric.conform and derive  store
# -0.0 as 0.0 so no table holds a value that equals another but behaves differently.
def test_split_parts_change_by_one_row_when_a_row_is_removed_even_with_negative_zero() -> None:
    data = pd.DataFrame({"a": ["x"] * 200, "b": ["u", "v"] * 100, "c": ["yes"] * 200})
    worst = 0
    for removed in (0, 1, 57):
        parts = []
        for rows in (data, data.drop(index=removed).reset_index(drop=True)):
            s = session(rows)
            s.run(SPLIT_ZERO)
            parts.append([_rows(p) for p in s.interpreter.globals.lookup("parts")])
        worst = max(worst, sum(_changed(a, b) for a, b in zip(*parts)))
    assert worst <= 1, f"removing one row changed the parts by {worst} rows"


def test_split_parts_of_distinct_rows_change_by_one_row() -> None:
    """The claim in the ordinary case (rows told apart by their categories, with duplicates):
    removing any one row removes one row of exactly one part and leaves the others as they were."""
    data = frame(60, seed=3)
    base = session(data)
    base.run("parts = split(t, [0.5, 0.3, 0.2])")
    before = [_rows(p) for p in base.interpreter.globals.lookup("parts")]
    for removed in range(0, 60, 7):
        s = session(data.drop(index=removed).reset_index(drop=True))
        s.run("parts = split(t, [0.5, 0.3, 0.2])")
        after = [_rows(p) for p in s.interpreter.globals.lookup("parts")]
        assert sum(_changed(a, b) for a, b in zip(before, after)) == 1


@pytest.mark.parametrize("prefix", [
    'u = t.derive("z", lambda r: 0.0 * (1 - 2 * (r.b == "u")), numeric(-1, 1))',
    'u = t.join(look, on="b")',
    'u = t.bin("n", [0, 2, 4, 6]).derive("w", lambda r: r.m == 1, categorical([true, false], default=false))',
    'u = t.partition("b")[0].select(["m", "n", "c"])',
])
@pytest.mark.parametrize("engine", ["pandas", "duckdb"])
def test_split_of_derived_joined_and_mixed_type_tables_moves_one_row(prefix: str, engine: str) -> None:
    """After the fix of the -0.0 hole the split keys a row by its exact cells (numbers by their
    bits, other cells by type and repr): that key must still be a function of the row alone (not
    of a column's dtype, which other rows could change), on every route. Tables of stability 1
    made by derive (with -0.0), a join with a lookup of one row per key, a bin, a part of a
    partition, a categorical domain of mixed types ([1, "a", 2.5]); removing one row, also the
    only row of a type, changes one row of one part."""
    if engine == "duckdb":
        pytest.importorskip("duckdb")
    rng = np.random.default_rng(12)
    data = frame(36, seed=12).assign(m=[[1, "a", 2.5][i % 3] for i in range(36)], n=rng.random(36) * 6)
    data.loc[0, "m"] = "a"
    data.loc[1:, "m"] = data.loc[1:, "m"].replace("a", 1)  # row 0 is the only "a"
    schema = {**SCHEMA, "m": Categorical([1, "a", 2.5]), "n": Numeric(0, 6)}
    program = prefix + "\nparts = split(u, [0.5, 0.5])"

    def parts(rows: pd.DataFrame) -> list:
        s = session(rows.reset_index(drop=True), schema, engine=engine)
        s.bind_public("look", pd.DataFrame({"b": ["u", "v"], "k": ["p", "q"]}),
                      {"b": Categorical(["u", "v"]), "k": Categorical(["p", "q"])})
        s.run(program)
        return [_rows(p) for p in s.interpreter.globals.lookup("parts")]

    before = parts(data)
    for removed in (0, 1, 2, 17):
        after = parts(data.drop(index=removed))
        assert sum(_changed(a, b) for a, b in zip(before, after)) <= 1, removed


def test_split_under_an_entity_unit_keeps_an_entitys_rows_in_one_part() -> None:
    """entity(pid): the hash is of the key alone; removing one entity (all its rows) changes
    exactly one part, by that entity's rows, and nothing else."""
    rng = np.random.default_rng(4)
    data = frame(90, seed=4).assign(pid=rng.integers(0, 15, 90))
    schema = {**SCHEMA, "pid": Categorical(list(range(15)))}
    base = session(data, schema, unit="entity:pid")
    base.run("parts = t.split(0.5)")
    parts = base.interpreter.globals.lookup("parts")
    homes = [set(p.frame["pid"]) for p in parts]
    assert not homes[0] & homes[1]
    before = [_rows(p) for p in parts]
    for pid in (0, 3, 7):
        s = session(data[data.pid != pid].reset_index(drop=True), schema, unit="entity:pid")
        s.run("parts = t.split(0.5)")
        after = [_rows(p) for p in s.interpreter.globals.lookup("parts")]
        moved = [_changed(a, b) for a, b in zip(before, after)]
        assert sorted(moved)[:-1] == [0] and max(moved) == int((data.pid == pid).sum())


# FIXED (was a strict xfail):  LOW (robustness; the error is the same on neighbours). split() of an
# entity table whose key  column was selected away raises a bare KeyError from
# jostle/language/evaluation.py _canonical  (not a JostleError), so Session does not shorten it and
# its traceback's frames hold the private  frame (boundary.py's stated rationale). Fix: split()
# refuses, on the schema, an entity table  without its key column (as
# joins._refuse_a_key_from_the_lookup does), with a JostleError.
def test_split_of_an_entity_table_without_its_key_is_a_jostle_error() -> None:
    data = frame(30).assign(pid=np.arange(30) % 6)
    s = session(data, {**SCHEMA, "pid": Categorical(list(range(6)))}, unit="entity:pid")
    with pytest.raises(JostleError):
        s.run('u = t.select(["a", "c"])\nparts = split(u, 0.5)')


def test_split_draws_the_same_randomness_whatever_the_rows() -> None:
    """The split's secret key is drawn before the rows are looked at: an empty table and a full
    one leave a seeded session's randomness in the same state (a later release's noise does not
    tell them apart)."""
    from jostle.language.evaluation import assign_parts
    from jostle.privacy.noise import Randomness

    states = []
    schema = {"a": Categorical(["x", "y", "z"]), "b": Categorical(["u", "v"]), "c": Categorical(["yes", "no"])}
    from jostle.data.schema import Schema

    for rows in (frame(0), frame(1), frame(30)):
        randomness = Randomness(11)
        assign_parts(rows, Schema(tuple(schema.items())), [0.5, 0.5], None, randomness)
        states.append(tuple(int(v) for v in randomness.integers_below(1 << 30, 4)))
    assert states[0] == states[1] == states[2]


@pytest.mark.parametrize("unit,program,spent", [
    (None, "p = t.split(0.5)\nx = geometric(count(p[0]), 1)\ny = geometric(count(p[1]), 1)", 1),
    (None, "p = split(t, 0.5)\nq = split(t, 0.5)\nx = geometric(count(p[0]), 1)\ny = geometric(count(q[1]), 1)", 2),
    (None, "p = split(t, 0.5)\nq = split(p[0], 0.5)\nx = geometric(count(q[0]), 1)\ny = geometric(count(p[0]), 1)", 2),
    ("replace_one", "p = t.split(0.5)\nx = geometric(count(p[0]), 1)\ny = geometric(count(p[1]), 1)", 2),
    ("entity:pid", "p = t.split(0.5)\nx = geometric(count_keys(p[0]), 1)\ny = geometric(count_keys(p[1]), 1)", 1),
])
def test_split_gets_parallel_credit_once_and_only_for_disjoint_parts(unit: Any, program: str, spent: int) -> None:
    """Two splits of one table are two groups whose costs add (no parallel credit twice); a part
    used twice adds up; replace_one parts compose in sequence; an entity's parts in parallel."""
    data = frame(60).assign(pid=np.arange(60) % 12)
    s = session(data, {**SCHEMA, "pid": Categorical(list(range(12)))}, unit=unit)
    s.run(program)
    assert s.spent.epsilon == spent


@pytest.mark.parametrize("vector,l1", [
    ("[count(p[0]), count(p[1])]", 1),  # disjoint parts: the max of the parts' sensitivities
    ("[count(p[0]), count(p[0].where(lambda r: r.a == \"x\"))]", 2),  # one part twice: the sum
    ("[count(p[0]), count(q[1])]", 2),  # parts of two splits: the sum
])
def test_a_vector_over_split_parts_has_the_max_sensitivity_only_for_disjoint_parts(vector: str, l1: int) -> None:
    s = session(frame(30))
    from jostle.language.sensitivity import private_vector

    s.run(f"p = split(t, 0.5)\nq = split(t, 0.5)\nv = {vector}")
    items = list(s.interpreter.globals.lookup("v"))
    assert private_vector(items, items[0].origin).l1 == l1


# ====================================================================== 1. private evaluation
def _spy_releases(monkeypatch: pytest.MonkeyPatch) -> list:
    """Record the Private vector every evaluation release hands to the mechanism."""
    from jostle.language import evaluation

    seen: list = []
    original = evaluation.mechanisms.geometric

    def spy(interp: Any, private: Any, epsilon: Any, span: Any, mechanism: str = "geometric") -> Any:
        seen.append((np.asarray(private.value, dtype=np.int64).copy(), private.l1, private.l2))
        return original(interp, private, epsilon, span, mechanism=mechanism)

    monkeypatch.setattr(evaluation.mechanisms, "geometric", spy)
    return seen


EVALUATIONS = [
    'x = private_accuracy(m, T, "c", epsilon=1)',
    'x = confusion_matrix(m, T, "c", epsilon=1)',
    'x = auc(m, T, "c", "yes", bins=7, epsilon=1)',
    'x = calibration(m, T, "c", "yes", bins=3, epsilon=1)',
]


@pytest.mark.parametrize("release", EVALUATIONS)
@pytest.mark.parametrize("unit,prefix,removed", [
    (None, "T = t", "row"),
    ("entity:pid", "T = t.bound_per_key(2)", "entity"),
    (None, "T = t.join(look, on=\"b\")", "row"),
])
def test_evaluation_counts_move_by_at_most_their_stated_sensitivity(monkeypatch: pytest.MonkeyPatch, release: str,
                                                                    unit: Any, prefix: str, removed: str) -> None:
    """The COMPUTED cell counts of every evaluation release, on neighbours (a row, or an entity
    with all its rows, removed), differ by at most the l1 the release states (its table's
    stability: 1, k after bound_per_key(k), m after a join with a public lookup of m rows per
    key); l2 is stated equal to l1 (all of an entity's rows in one cell)."""
    seen = _spy_releases(monkeypatch)
    rng = np.random.default_rng(7)
    wider = {**SCHEMA, "a": Categorical(["x", "y", "z", "w"]), "pid": Categorical(list(range(10)))}
    data = frame(50, seed=7).assign(pid=rng.integers(0, 10, 50))
    data.loc[[3, 11], "a"] = "w"  # categories the model never saw: no label, no score
    lookup = pd.DataFrame({"b": ["u", "u", "v"], "k": ["p", "q", "p"]})
    worst, stated = 0, None
    drops = [0, 3, 11, 30] if removed == "row" else [0, 4, 9]
    base = None
    for drop in [None, *drops]:
        rows = data if drop is None else (data.drop(index=drop) if removed == "row" else data[data.pid != drop])
        s = session(rows.reset_index(drop=True), wider, unit=unit)
        s.bind_public("look", lookup, {"b": Categorical(["u", "v"]), "k": Categorical(["p", "q"])})
        seen.clear()
        s.run(prefix + "\n" + release)
        counts, l1, l2 = seen[-1]
        stated = l1
        assert l2 == l1
        if base is None:
            base = counts
        else:
            worst = max(worst, int(np.abs(counts - base).sum()))
    assert 0 < worst <= stated  # the bound holds and is attained (the check has teeth)
    assert stated == {"T = t": 1, "T = t.bound_per_key(2)": 2}.get(prefix, 2)


@pytest.mark.parametrize("program", [
    'x = private_accuracy(m, t, "c", epsilon=1000)',
    'x = auc(m, t, "c", "maybe", epsilon=1)',
    'x = calibration(m, t, "c", "yes", bins=0, epsilon=1)',
    'x = confusion_matrix(m, t, "zz", epsilon=1)',
    'x = auc(m, t, "c", count(t), epsilon=1)',
    'u = t.derive("p", lambda r: predict_proba(m, r, count(t)), numeric(0, 1))',
    'u = t.derive("p", lambda r: predict(m, pub), numeric(0, 1))',
    'x = private_accuracy(m, t.derive("a", lambda r: 1.5, numeric(0, 2)), "c", epsilon=1)',
    'x = [private_accuracy(m, p, "c", epsilon=30) for p in split(t, [0.5, 0.5])]\n'
    'y = private_accuracy(m, t, "c", epsilon=30)',
])
def test_evaluation_refusals_are_the_same_on_neighbours_and_spend_nothing(program: str) -> None:
    """Refused calls (over budget, a class the model does not have, bad bins, a missing column,
    a private class, a table in a row function, a numeric attribute): the same error on
    neighbours, including one whose only row of a category is removed; nothing more charged."""
    data = frame(40, seed=2)
    lone = data.copy()
    lone.loc[5, "a"] = "z"
    seen = []
    for rows in (data, data.drop(index=5), lone, lone.drop(index=5)):
        s = session(rows.reset_index(drop=True), budget=50)
        seen.append(observed(s, program))
    assert seen[0][1] is not None
    assert all(other == seen[0] for other in seen[1:])


def test_predict_in_a_row_function_is_row_local_on_neighbours() -> None:
    """Every row's prediction and score is a function of that row alone: removing one row (one
    holding a category the model never saw among them) leaves every other row's value as it was."""
    wider = {**SCHEMA, "a": Categorical(["x", "y", "z", "w"])}
    data = frame(40, seed=5)
    data.loc[[2, 9], "a"] = "w"
    program = ('u = t.derive("p", lambda r: predict(m, r), categorical(["yes", "no", "?"], default="?"))'
               '.derive("q", lambda r: predict_proba(m, r, "yes"), numeric(0, 1, default=0.5))')

    def scored(rows: pd.DataFrame) -> list:
        s = session(rows.reset_index(drop=True), wider)
        s.run(program)
        out = s.interpreter.globals.lookup("u").frame
        return list(zip(out["p"], out["q"]))

    full = scored(data)
    assert full[2][0] == "?" and full[9][0] == "?" and full[2][1] == 0.5
    for drop in (0, 2, 9):
        assert scored(data.drop(index=drop)) == full[:drop] + full[drop + 1:]


def test_evaluation_charges_before_the_draw_and_never_over_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """The accountant's charge precedes the first draw of every evaluation release; over budget,
    nothing is drawn and nothing is spent."""
    from jostle.privacy.noise import Randomness

    events: list[str] = []
    original_draw = Randomness.discrete_laplace

    def draw(self: Any, *args: Any, **kwargs: Any) -> Any:
        events.append("draw")
        return original_draw(self, *args, **kwargs)

    monkeypatch.setattr(Randomness, "discrete_laplace", draw)
    s = session(frame(40), budget=3)
    accountant = s.interpreter.accountant
    original_charge = type(accountant).charge

    def charge(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original_charge(self, *args, **kwargs)
        events.append("charge")
        return result

    monkeypatch.setattr(type(accountant), "charge", charge)
    for release in EVALUATIONS:
        events.clear()
        s.run(release.replace("T", "t").replace("epsilon=1", "epsilon=0.5"))
        assert events and events[0] == "charge" and events.count("charge") == 1, (release, events)
    events.clear()
    with pytest.raises(JostleError):
        s.run('x = private_accuracy(m, t, "c", epsilon=2)')
    assert "draw" not in events and s.spent.epsilon == 2


def test_session_score_of_an_estimator_needs_a_row_table_of_stability_one() -> None:
    """Session.score(estimator, ...) releases [correct, wrong] at sensitivity 1: it refuses, before
    anything is charged or predicted, an entity table, a replace_one table and a join of
    stability 2, and charges a row table once, before its draw, in the session's ledger."""
    from jostle.estimators import DPDecisionTreeClassifier as Tree
    from jostle.estimators import PrivacyBudget

    data = frame(60).assign(pid=np.arange(60) % 12)
    schema = {**SCHEMA, "pid": Categorical(list(range(12)))}
    estimator = Tree(1.0, domains={"a": ["x", "y", "z"], "b": ["u", "v"]}, classes=["yes", "no"],
                     budget=PrivacyBudget(5.0), random_state=0).fit(frame(80, seed=8)[["a", "b"]],
                                                                     frame(80, seed=8)["c"])
    for unit, prefix in (("entity:pid", ""), ("replace_one", ""), (None, 'j = t.join(look, on="b")')):
        s = session(data, schema, unit=unit)
        s.bind_public("look", pd.DataFrame({"b": ["u", "u", "v"], "k": ["p", "q", "p"]}),
                      {"b": Categorical(["u", "v"]), "k": Categorical(["p", "q"])})
        if prefix:
            s.run(prefix)
        with pytest.raises(JostleError):
            s.score(estimator, "j" if prefix else "t", "c", epsilon=1)
        assert len(s.ledger) == 0
    s = session(data)
    value = s.score(estimator, "t", "c", epsilon=0.5)
    assert 0 <= value <= 1 and s.spent.epsilon == Fraction(1, 2) and len(s.ledger) == 1


# ====================================================================== 3. labels and grouped releases
def test_grouped_release_labels_come_from_the_domain_not_the_rows() -> None:
    """`{{ map(count, t.partition("a")) }}`: the labels, the DataFrame's keys, indexing by a label
    and the refusal of a label it does not have are the same when the only 'z' row is removed
    (the part is then empty); nothing about which categories occur leaks."""
    data = frame(30, seed=1)
    data["a"] = np.where(data.index == 4, "z", np.where(data.index % 2 == 0, "x", "y"))
    program = ('budget 9\ng = {{ map(count, t.partition("a")) }}\nprint(g.labels)\nprint(len(g))\n'
               'h = {{ histogram(t, "a") }}\nprint(h.labels)\ny = h["z"] + g["z"]\nq = g["w"]')
    results = []
    for rows in (data, data.drop(index=4)):
        s = session(rows.reset_index(drop=True), seed=5)
        out, error, ledger = observed(s, program)
        frame_ = s.eval("g")
        results.append((out, error, [c[2] for c in ledger], list(frame_.columns), list(frame_["a"])))
    assert results[0][1] is not None and "no cell is labelled" in results[0][1][1]
    assert results[0] == results[1]
    assert results[0][4] == ["x", "y", "z"]


# ====================================================================== 4. the ledger's `what`
def test_ledger_descriptions_are_program_text_on_neighbours_and_engines() -> None:
    """The `what` and `data` columns of a program with a split, a fit, a model in a row function
    (which the engine cannot compile: the in-memory route), the four evaluation releases and a
    filtered count: identical on neighbours and on both engines (the engine a table takes under
    `auto` depends on its size, which the ledger must not tell)."""
    pytest.importorskip("duckdb")
    program = ('parts = split(t, 0.6)\ntrain = parts[0]\ntest = parts[1]\n'
               'm2 = FriedmanSchuster(train, "c", epsilon=1)\n'
               'good = test.where(lambda r: predict(m2, r) == r.c)\n'
               'n = geometric(count(good), 1)\n'
               'x = private_accuracy(m2, test, "c", epsilon=1)\ny = confusion_matrix(m2, test, "c", epsilon=1)\n'
               'z = auc(m2, test, "c", "yes", bins=4, epsilon=1)\nw = calibration(m2, test, "c", "yes", epsilon=1)')
    texts = set()
    data = frame(80, seed=6)
    for engine in ("pandas", "duckdb"):
        for rows in (data, data.drop(index=[0, 1, 2, 3, 4, 5])):
            s = session(rows.reset_index(drop=True), engine=engine)
            s.run(program)
            texts.add(tuple((c.description, c.as_dict()["data"], c.mechanism) for c in s.ledger))
    assert len(texts) == 1
    described = [d for d, _, _ in next(iter(texts))]
    assert any("where(predict(m2, r) == r.c)" in d for d in described), described


# ====================================================================== 5. schema draft
def test_schema_draft_is_not_reachable_from_a_program() -> None:
    """No built-in of the language is, or calls into, the curator's schema drafting, and a
    program naming it gets the same unknown-name error as any other."""
    from jostle.language.builtin_registry import CORE

    modules = {getattr(getattr(b, "function", None), "__module__", "") for b in CORE.values()}
    assert not any(m.startswith("jostle.cli") for m in modules), modules
    s = session(frame(10))
    for name in ("draft_schema", "schema_draft", "draft"):
        with pytest.raises(JostleError):
            s.run(f'x = {name}("t.csv")')


# ====================================================================== 6. short errors
def test_short_errors_hold_no_internal_frame_and_read_the_same_on_neighbours() -> None:
    """A refused program raises, in Python, an error whose traceback holds only the caller's and
    the boundary's frames (none reaches the interpreter, its scopes or the private tables), with
    no context, and whose text is the same on neighbouring tables."""
    texts = []
    for rows in (frame(40), frame(40).drop(index=3)):
        s = session(rows.reset_index(drop=True), budget=2)
        try:
            s.run('x = private_accuracy(m, t, "c", epsilon=5)')
        except JostleError as error:
            frames, tb = [], error.__traceback__
            while tb is not None:
                frames.append(tb.tb_frame.f_code.co_filename)
                tb = tb.tb_next
            assert error.__context__ is None and error.__cause__ is None
            assert all(not f.endswith(("evaluator.py", "evaluation.py", "mechanisms.py", "budget.py"))
                       for f in frames), frames
            assert len(frames) <= 2
            texts.append((type(error).__name__, str(error)))
    assert len(texts) == 2 and texts[0] == texts[1]
