"""The `budget_regret` meta-model kind (issue 27): a regret forest that reads only the budget
(epsilon and the family's size x epsilon products), with large leaves."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jostle.choicemaker.model import MODEL_KINDS, BudgetRegret, TrainingMatrix, input_matrix, lodo_regret, make_model


def _matrix(seed: int = 0) -> TrainingMatrix:
    """Two Options: A wins where size x epsilon is below 1000, B above; a schema feature that
    identifies each of the 12 groups and says nothing about the winner."""
    rng = np.random.default_rng(seed)
    rows = 1200
    groups = np.arange(rows) % 12
    epsilon = rng.choice([0.1, 0.5, 1.0, 2.0], rows)
    size = np.exp(rng.uniform(np.log(100), np.log(20_000), rows))
    schema = groups.astype(float)  # a group's fingerprint, as n_attributes can be
    low = size * epsilon < 1000
    errors = np.column_stack([1 + 2 * ~low, 1 + 2 * low]) * rng.uniform(0.9, 1.1, (rows, 2))
    features = ["epsilon", "schema", "size"]
    X = input_matrix({"epsilon": epsilon, "schema": schema, "size": size}, features, (("size", "epsilon"),))
    regret = errors / errors.min(axis=1, keepdims=True)
    return TrainingMatrix(X, errors, np.log(errors), regret, np.arange(rows), groups.astype(str), ["A", "B"],
                          features, (("size", "epsilon"),))


def test_budget_kind_is_a_default_candidate_and_reads_only_epsilon_and_the_products():
    assert "budget_regret" in MODEL_KINDS
    assert BudgetRegret.budget_columns(["epsilon", "schema", "size"], (("size", "epsilon"),)) == [0, 3]
    assert BudgetRegret.budget_columns(["schema", "size"], (("size", "epsilon"),)) == []
    # a product whose names are not both features is not an input column
    assert BudgetRegret.budget_columns(["epsilon", "schema"], (("size", "epsilon"),)) == [0]
    data = _matrix()
    model = make_model("budget_regret").fit(data)
    shuffled = data.X.copy()
    shuffled[:, 1] = np.random.default_rng(1).permutation(shuffled[:, 1])
    shuffled[:, 2] = 1.0  # the raw size column is not read either (its product is)
    assert np.array_equal(model.scores(data.X), model.scores(shuffled))


def test_budget_kind_learns_the_size_times_epsilon_threshold_with_large_leaves():
    data = _matrix()
    model = make_model("budget_regret").fit(data)
    probe = input_matrix({"epsilon": np.array([0.1, 2.0]), "schema": np.zeros(2), "size": np.array([500.0, 5000.0])},
                         data.features, data.products)
    assert list(model.choose(probe)) == [0, 1]
    assert min(e.min_samples_leaf for e in model.forest_.estimators_) == int(np.ceil(0.05 * len(data.X)))
    assert lodo_regret("budget_regret", data)["regret"].mean() < 1.15


def test_budget_kind_without_epsilon_is_the_best_fixed_option():
    data = _matrix()
    no_budget = TrainingMatrix(data.X[:, [1]], data.errors, data.log_error, data.regret, data.config,
                               data.groups, data.options, ["schema"])
    model = make_model("budget_regret").fit(no_budget)
    best = make_model("best_fixed").fit(no_budget)
    assert np.array_equal(model.scores(no_budget.X[:5]), best.scores(no_budget.X[:5]))


def test_budget_kind_says_what_it_reads():
    data = _matrix()
    model = make_model("budget_regret").fit(data)
    assert model.reads(data.features, data.products) == ["epsilon", "size*epsilon"]
    assert make_model("best_fixed").reads(["epsilon", "schema"], ()) == ["epsilon", "schema"]


def test_explain_says_the_shipped_tree_choicemaker_chooses_from_the_budget_and_the_size_alone():
    """Since issue 27's large corpus tasks the shipped tree ChoiceMaker measures (5% of epsilon)
    and its budget_regret reads epsilon and size x epsilon; explain says so."""
    from jostle import Session

    session = Session(budget=2, ledger_path=":memory:")
    session.bind_private("t", pd.DataFrame({"a": ["x", "y"] * 40, "b": ["u", "v", "w", "w"] * 20,
                                            "c": ["yes", "no", "no", "no"] * 20}),
                         {"a": ("categorical", ["x", "y"]), "b": ("categorical", ["u", "v", "w"]),
                          "c": ("categorical", ["yes", "no"])})
    session.run('import trees\nm = trees.learn(t, "c", 0.3)\nprint(trees.explain_choice())')
    shown = session.eval("trees.explain_choice()")
    assert "(by measuring)" in shown
    assert "chooses from epsilon, size*epsilon alone" in " ".join(shown.split())
