"""Private evaluation of released models (issue 28): a model inside a row function, the charged
releases (private_accuracy, confusion_matrix, auc, calibration), the split that stays one dataset,
Session.score and the estimators' private_accuracy. Each test asserts something a broken
implementation would fail: refusals before any charge, ledgers equal to planned charges, parallel
composition of the split, identical observables on neighbouring tables."""

from __future__ import annotations

import io
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.data.schema import Categorical
from jostle.diagnostics.errors import BudgetExceeded, JostleError, JostleRuntimeError, PrivacyError
from jostle.learnerkit import evaluation as kit

SCHEMA = {"a": Categorical(["x", "y", "z"]), "b": Categorical(["u", "v"]), "c": Categorical(["yes", "no"])}


def frame(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    data = pd.DataFrame({"a": rng.choice(["x", "y", "z"], n), "b": rng.choice(["u", "v"], n)})
    data["c"] = np.where((data.a == "x") | (rng.random(n) < 0.1), "yes", "no")
    return data


def session(data: pd.DataFrame | None = None, budget: float | None = 10, seed: int = 1, schema: dict | None = None,
            **kwargs) -> Session:
    s = Session(budget=budget, seed=seed, ledger_path=":memory:", output=io.StringIO(), **kwargs)
    s.bind_private("t", frame() if data is None else data, schema or SCHEMA)
    s.bind_public("pub", frame(200, seed=5), SCHEMA)
    s.run('m = C45(pub, "c")')  # a public model: free
    return s


def outcome(s: Session, program: str) -> tuple:
    """What the author sees: the output, the error (type and text) and the ledger."""
    try:
        s.run(program)
        error = None
    except JostleError as caught:
        error = (type(caught).__name__, str(caught))
    return s.output.getvalue() if hasattr(s, "output") else None, error, \
        [(c.mechanism, c.budget) for c in s.ledger]


# ---------------------------------------------------------------- a released model in a row function
def test_a_released_model_applies_row_by_row_to_a_private_table() -> None:
    s = session()
    s.run('scored = t.derive("pred", lambda r: predict(m, r), categorical(["yes", "no"], default="no"))\n'
          'right = count(scored.where(lambda r: r.pred == r.c))\n'
          'agree = t.where(lambda r: predict(m, r) == r.c)')
    interp = s.interpreter
    scored = interp.globals.lookup("scored")
    model = interp.globals.lookup("m")
    assert list(scored.frame["pred"]) == model.labels_for(frame()[["a", "b"]])
    assert len(interp.globals.lookup("agree").frame) == (scored.frame["pred"] == scored.frame["c"]).sum()
    assert s.spent.epsilon == 0  # nothing released


def test_predict_proba_in_a_row_function_is_the_models_probability() -> None:
    s = session()
    s.run('p = t.derive("p", lambda r: predict_proba(m, r, "yes"), numeric(0, 1))')
    model = s.interpreter.globals.lookup("m")
    expected = model.proba_for(frame()[["a", "b"]])[:, 0]
    assert np.allclose(s.interpreter.globals.lookup("p").frame["p"].to_numpy(dtype=float), expected)


def test_an_unseen_category_gives_none_on_that_row_only() -> None:
    """A table whose domain holds a category the model never saw: no error; that row's label is
    none (the derived column's default), every other row's label is unchanged."""
    wider = {**SCHEMA, "a": Categorical(["x", "y", "z", "w"])}
    data = frame(50)
    data.loc[7, "a"] = "w"
    s = session(data, schema=wider)
    s.run('scored = t.derive("pred", lambda r: predict(m, r), categorical(["yes", "no", "?"], default="?"))')
    predicted = list(s.interpreter.globals.lookup("scored").frame["pred"])
    assert predicted[7] == "?"
    model = s.interpreter.globals.lookup("m")
    others = data.drop(index=7)[["a", "b"]]
    assert predicted[:7] + predicted[8:] == model.labels_for(others)


@pytest.mark.parametrize("program", [
    'u = t.derive("p", lambda r: predict(m, r.a), categorical(["yes", "no"], default="no"))',
    'u = t.derive("p", lambda r: predict_proba(m, r, r.c), numeric(0, 1))',
    'u = t.where(lambda r: count(pub.where(lambda q: predict(m, q) == r.c)) > 0)',
    'u = t.derive("p", lambda r: predict(m, r), categorical(["yes", "no"], default="no")).derive('
    '"q", lambda r: predict(m, r), numeric(0, 1)); print(count(u))',
])
def test_refusals_are_the_same_on_neighbouring_tables(program: str) -> None:
    data = frame(60)
    first, second = session(data), session(data.drop(index=11).reset_index(drop=True))
    one, two = outcome(first, program), outcome(second, program)
    assert one[1] is not None and one == two
    assert one[2] == []  # nothing charged


def test_a_model_reading_a_numeric_column_is_refused_on_the_schema() -> None:
    from jostle.data.schema import Numeric

    s = session(frame(20).assign(a=1.0), schema={**SCHEMA, "a": Numeric(0, 10)})
    with pytest.raises(JostleRuntimeError, match="numeric"):
        s.run('u = t.derive("p", lambda r: predict(m, r), categorical(["yes", "no"], default="no"))')


# ---------------------------------------------------------------- the charged releases
def test_each_release_charges_its_planned_budget_once() -> None:
    s = session()
    s.run('acc = private_accuracy(m, t, "c", epsilon=0.5)\n'
          'cm = confusion_matrix(m, t, "c", epsilon=0.25)\n'
          'a = auc(m, t, "c", "yes", bins=4, epsilon=0.125)\n'
          'with budget 0.125:\n    cal = calibration(m, t, "c", "yes", bins=5)')
    assert [(c.mechanism, c.budget.epsilon) for c in s.ledger] == [
        ("private_accuracy", Fraction(1, 2)), ("confusion_matrix", Fraction(1, 4)), ("auc", Fraction(1, 8)),
        ("calibration", Fraction(1, 8))]
    assert s.spent.epsilon == 1
    assert 0 <= s.eval("acc") <= 1 and 0 <= s.eval("a") <= 1
    assert len(s.eval("cal")) == 5


def test_over_budget_is_refused_before_anything_is_spent_and_alike_on_neighbours() -> None:
    data = frame(60)
    program = 'x = private_accuracy(m, t, "c", epsilon=0.25)\ny = confusion_matrix(m, t, "c", epsilon=1)'
    one = outcome(session(data, budget=0.5), program)
    two = outcome(session(data.iloc[1:].reset_index(drop=True), budget=0.5), program)
    assert one[1][0] == "BudgetExceeded" and one[1] == two[1]
    assert one[2] == two[2] == [("private_accuracy", one[2][0][1])]  # only the first release


def test_releases_on_a_public_table_are_exact_and_free() -> None:
    s = session()
    assert s.eval('private_accuracy(m, pub, "c")') == s.eval('accuracy(m, pub, "c")')
    assert s.spent.epsilon == 0


def test_an_unbounded_entity_table_is_refused_before_any_charge() -> None:
    data = frame(40).assign(pid=np.arange(40) % 7)
    s = Session(budget=5, seed=1, ledger_path=":memory:", output=io.StringIO())
    s.bind_private("t", data, {**SCHEMA, "pid": Categorical(list(range(7)))}, unit="entity:pid")
    s.bind_public("pub", frame(200, seed=5), SCHEMA)
    s.run('m = C45(pub, "c")')
    with pytest.raises(JostleError):
        s.run('x = private_accuracy(m, t, "c", epsilon=1)')
    assert len(s.ledger) == 0
    s.run('x = private_accuracy(m, t.bound_per_key(3), "c", epsilon=1)')  # noise scaled to stability 3
    assert len(s.ledger) == 1


def test_a_zcdp_program_releases_at_a_rho() -> None:
    s = Session(rho=1, seed=1, ledger_path=":memory:", output=io.StringIO())
    s.bind_private("t", frame(), SCHEMA)
    s.bind_public("pub", frame(200, seed=5), SCHEMA)
    s.run('m = C45(pub, "c")\nx = private_accuracy(m, t, "c", rho=0.25)')
    assert s.ledger[0].budget.rho == Fraction(1, 4)


def test_the_statistics_from_counts() -> None:
    assert kit.accuracy_from_counts(30, 10) == 0.75
    assert kit.accuracy_from_counts(-3, -2) == 0.0
    # positives all in the top bin, negatives all in the bottom one: a perfect ranking
    assert kit.auc_from_counts([0, 5, 0, 0, 7, 0], 3) == 1.0
    assert kit.auc_from_counts([2, 2, 2, 2], 2) == 0.5
    assert kit.auc_from_counts([0, 5, 0, 3], 2) is None  # no positive left
    rows = kit.calibration_from_counts([1, 3, 4, 0], 2)
    assert [r["rate"] for r in rows] == [0.25, 1.0] and rows[0]["bin"] == "[0, 0.5)"
    assert list(kit.bin_of(np.array([0.0, 0.49, 0.5, 1.0, np.nan]), 2)) == [0, 0, 1, 1, -1]


# ---------------------------------------------------------------- the split
def parts(s: Session) -> list[pd.DataFrame]:
    return [s.interpreter.globals.lookup("parts")[i].frame for i in range(len(s.interpreter.globals.lookup("parts")))]


def test_the_split_is_disjoint_and_covers_the_table() -> None:
    s = session(frame(300))
    s.run("parts = split(t, [0.5, 0.3, 0.2])")
    pieces = parts(s)
    assert sum(len(p) for p in pieces) == 300
    rows = sorted(tuple(row) for piece in pieces for row in piece[["a", "b", "c"]].values.tolist())
    assert rows == sorted(tuple(row) for row in frame(300)[["a", "b", "c"]].values.tolist())
    assert 110 < len(pieces[0]) < 190  # a fair share (binomial(300, 0.5): 9 standard deviations)


def test_a_fit_on_one_part_and_an_evaluation_on_the_other_cost_the_larger() -> None:
    s = session(frame(300))
    s.run('parts = split(t, 0.7)\ntree = FriedmanSchuster(parts[0], "c", epsilon=1)\n'
          'x = private_accuracy(tree, parts[1], "c", epsilon=1)\ny = count(parts[1])')
    assert s.spent.epsilon == 1 and len(s.ledger) == 2
    s.run("z = laplace(y, 0.5)")  # a second release on the test part adds up in that part
    assert s.spent.epsilon == Fraction(3, 2)


def test_the_split_is_row_local_on_neighbours() -> None:
    """With one seed, removing one row removes it from exactly one part and changes nothing
    else: each row's part is a function of the row (and its rank among identical rows)."""
    data = frame(200)
    first, second = session(data), session(data.drop(index=37).reset_index(drop=True))
    for s in (first, second):
        s.run("parts = split(t, 0.6)")
    one, two = parts(first), parts(second)
    changed = [len(a) - len(b) for a, b in zip(one, two)]
    assert sorted(changed) == [0, 1]
    for a, b in zip(one, two):
        counts_a = a.value_counts().to_dict()
        counts_b = b.value_counts().to_dict()
        assert sum(abs(counts_a.get(k, 0) - counts_b.get(k, 0)) for k in {*counts_a, *counts_b}) == len(a) - len(b)


def test_the_split_is_row_local_with_categories_that_print_alike() -> None:
    """1 and "1" are two categories: a hash of their text would make them collide while ranks
    tell them apart, and then one row added before the others would move many of them."""
    values = [1, "1"] * 60
    data = pd.DataFrame({"a": pd.Series(values, dtype=object), "b": ["u"] * 120, "c": ["yes"] * 120})
    schema = {"a": Categorical([1, "1", "x"]), "b": Categorical(["u", "v"]), "c": Categorical(["yes", "no"])}
    first = session(data, schema=schema)
    second = session(pd.concat([data.iloc[[1]], data]).reset_index(drop=True), schema=schema)  # a "1" row first
    for s in (first, second):
        s.run("parts = split(t, 0.5)")
    moved = [sorted(map(repr, b["a"])) != sorted(map(repr, a["a"])) for a, b in zip(parts(first), parts(second))]
    sizes = [len(b) - len(a) for a, b in zip(parts(first), parts(second))]
    assert sorted(sizes) == [0, 1] and sum(moved) == 1


def test_the_split_keeps_an_entitys_rows_together_and_composes_in_parallel() -> None:
    data = frame(120).assign(pid=np.arange(120) // 4)
    s = Session(budget=5, seed=1, ledger_path=":memory:", output=io.StringIO())
    s.bind_private("t", data, {**SCHEMA, "pid": Categorical(list(range(30)))}, unit="entity:pid")
    s.run("parts = split(t, 0.5)\nx = laplace(count_keys(parts[0]), 1)\ny = laplace(count_keys(parts[1]), 1)")
    keys = [set(p["pid"]) for p in parts(s)]
    assert not keys[0] & keys[1] and len(keys[0] | keys[1]) == 30
    assert s.spent.epsilon == 1


def test_a_replace_one_split_composes_in_sequence() -> None:
    s = Session(budget=5, seed=1, ledger_path=":memory:", output=io.StringIO())
    s.bind_private("t", frame(100), SCHEMA, unit="replace_one")
    s.run("parts = split(t, 0.5)\nx = laplace(count(parts[0]), 1)\ny = laplace(count(parts[1]), 1)")
    assert s.spent.epsilon == 2  # a replaced row may leave one part and enter the other


@pytest.mark.parametrize("shares", ["0", "1.5", "[0.5, 0.6]", '"half"', "[1]"])
def test_bad_shares_are_refused(shares: str) -> None:
    with pytest.raises(JostleRuntimeError, match="split"):
        session().run(f"parts = split(t, {shares})")


# ---------------------------------------------------------------- Python
def test_session_score_by_name_and_of_an_estimator() -> None:
    from jostle.estimators import DPDecisionTreeClassifier, PrivacyBudget

    s = session(frame(300))
    s.run('parts = split(t, 0.7)\ntrain = parts[0]\ntest = parts[1]\ntree = FriedmanSchuster(train, "c", epsilon=1)')
    assert 0 <= s.score("tree", "test", "c", epsilon=1) <= 1
    assert s.spent.epsilon == 1  # parallel with the fit
    estimator = DPDecisionTreeClassifier(1.0, domains={"a": ["x", "y", "z"], "b": ["u", "v"]}, classes=["yes", "no"],
                                         budget=PrivacyBudget(account=s)).fit(frame(100, 9)[["a", "b"]],
                                                                               frame(100, 9)["c"])
    assert 0 <= s.score(estimator, "t", "c", epsilon=0.5) <= 1
    assert s.spent.epsilon == Fraction(5, 2) and s.ledger[-1].budget.epsilon == Fraction(1, 2)
    with pytest.raises(BudgetExceeded):
        s.score("tree", "test", "c", epsilon=100)
    assert s.spent.epsilon == Fraction(5, 2)


def test_the_estimators_private_accuracy_charges_first_and_refuses_over_budget() -> None:
    from jostle.estimators import BudgetExceededError, DPDecisionTreeClassifier, PrivacyBudget, private_accuracy

    data = frame(200)
    X, y = data[["a", "b"]], data["c"]
    tree = DPDecisionTreeClassifier(2.0, domains={"a": ["x", "y", "z"], "b": ["u", "v"]}, classes=["yes", "no"],
                                    budget=PrivacyBudget(10)).fit(X, y)
    budget = PrivacyBudget(1)
    assert 0 <= private_accuracy(tree, X, y, 0.75, budget) <= 1
    assert budget.spent.epsilon == Fraction(3, 4)
    with pytest.raises(BudgetExceededError):
        private_accuracy(tree, X, y, 0.5, budget)
    assert len(budget.charges) == 1
    unseen = X.assign(a=["w"] + list(X["a"][1:]))  # a value outside the declared domain: that row is wrong
    assert 0 <= private_accuracy(tree, unseen, y, 0.25, budget) <= 1


# ---------------------------------------------------------------- every family, every engine
@pytest.mark.parametrize("fit", ['BayesianRuleList(train, "c", epsilon=1, max_rows=64)',
                                 'SuLQID3(train, "c", rho=0.25)'])
def test_every_classifier_family_is_evaluated_alike(fit: str) -> None:
    """A rule list and a SuLQ tree (zCDP) go through the same row function and releases."""
    s = Session(rho=5, seed=2, ledger_path=":memory:", output=io.StringIO())
    s.bind_private("t", frame(300), SCHEMA)
    s.run(f"parts = split(t, 0.6)\ntrain = parts[0]\ntest = parts[1]\nm = {fit}\n"
          'x = private_accuracy(m, test, "c", rho=0.5)\n'
          'y = auc(m, test, "c", "yes", bins=4, rho=0.5)\n'
          'scored = test.derive("pred", lambda r: predict(m, r), categorical(["yes", "no"], default="no"))')
    model = s.interpreter.globals.lookup("m")
    test = s.interpreter.globals.lookup("test").frame
    assert list(s.interpreter.globals.lookup("scored").frame["pred"]) == model.labels_for(test[["a", "b"]])
    fit_rho = s.ledger[0].cost.rho
    assert s.spent.rho == max(fit_rho, Fraction(1))  # the fit's part and the test part: in parallel


def test_an_engine_table_gives_the_same_split_and_evaluation() -> None:
    pytest.importorskip("duckdb")
    program = ('parts = split(t, 0.7)\nm = FriedmanSchuster(parts[0], "c", epsilon=1)\n'
               'scored = t.derive("pred", lambda r: predict(m, r), categorical(["yes", "no"], default="no"))\n'
               'print(geometric(histogram(scored, "pred", "c"), 1), private_accuracy(m, parts[1], "c", epsilon=1))')
    shown = []
    for engine in ("pandas", "duckdb"):
        out = io.StringIO()
        s = Session(budget=5, seed=3, ledger_path=":memory:", output=out, engine=engine)
        s.bind_private("t", frame(300), SCHEMA)
        s.run(program)
        shown.append(out.getvalue())
    assert shown[0] == shown[1]


@pytest.mark.parametrize("call", ['private_accuracy(m, t, "c", epsilon=20)', 'confusion_matrix(m, t, "c", epsilon=20)',
                                  'auc(m, t, "c", "yes", epsilon=20)', 'calibration(m, t, "c", "yes", epsilon=20)'])
def test_an_over_budget_evaluation_is_refused_before_the_model_reads_a_row(monkeypatch: pytest.MonkeyPatch,
                                                                          call: str) -> None:
    """The refusal comes before any row is read (its time cannot grow with the table)."""
    def no_rows(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model read rows before the budget check")

    monkeypatch.setattr(kit, "row_labels", no_rows)
    monkeypatch.setattr(kit, "row_scores", no_rows)
    s = session()
    with pytest.raises(BudgetExceeded):
        s.run(f"x = {call}")
    assert len(s.ledger) == 0


def test_a_released_number_in_a_cell_keys_like_its_plain_number():
    """A row function may put a released value (NoisyInt / NoisyFloat, issue 29) in a column:
    `split` keys its cell as the plain number it equals, and a huge whole number never raises."""
    from jostle.language.evaluation import _cell_key
    from jostle.language.noisy_values import NoLaw, attach

    noisy_int, noisy_float = attach(5, NoLaw("test")), attach(2.5, NoLaw("test"))
    assert type(noisy_int) is not int and type(noisy_float) is not float
    assert _cell_key(noisy_int) == _cell_key(5) and _cell_key(noisy_float) == _cell_key(2.5)
    assert _cell_key(True) != _cell_key(1) and _cell_key(10 ** 5000).startswith("int:")
