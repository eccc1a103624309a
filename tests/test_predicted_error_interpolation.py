"""Predicted errors between the corpus' budgets (issue 27): for a family whose errors scale as
1 / epsilon the best-error regressor is read at the training budgets around the input's and
interpolated in log-log, so a budget between two training budgets is not given the error of the
nearest one (a forest is piecewise constant in epsilon)."""

from __future__ import annotations

import numpy as np
import pytest

from jostle.choicemaker.model import FittedMetaModel, TrainingMatrix, input_matrix

FEATURES = ["size", "epsilon"]
PRODUCTS = (("size", "epsilon"),)


def _data(seed: int = 0, rows: int = 300) -> TrainingMatrix:
    rng = np.random.default_rng(seed)
    epsilon = rng.choice([0.009, 0.099, 0.99], rows)
    size = 10 ** rng.uniform(3, 6, rows)
    X = input_matrix({"size": size, "epsilon": epsilon}, FEATURES, PRODUCTS)
    truth = 1.0 / (size * epsilon)  # a Laplace count's error, relative to the size
    errors = np.stack([truth * np.exp(0.05 * rng.standard_normal(rows)), 2.0 * truth], axis=1)
    return TrainingMatrix(X, errors, np.log(errors), errors / errors.min(axis=1, keepdims=True),
                          np.arange(rows), np.arange(rows) % 5, ["a", "b"], FEATURES, PRODUCTS)


def _best(model: FittedMetaModel, epsilon: float, size: float = 1e4) -> float:
    X = input_matrix({"size": [size], "epsilon": [epsilon]}, FEATURES, PRODUCTS)
    return float(model.predicted_errors(X)[0].min())


@pytest.mark.parametrize("epsilon", [0.004, 0.02, 0.05, 0.3, 0.6, 3.0])
def test_off_grid_budgets_are_predicted_within_a_fifth_of_the_truth(epsilon: float) -> None:
    model = FittedMetaModel.fit(_data(), "forest_regret", 1, True, errors_scale_as_inverse_epsilon=True)
    assert model.epsilon_grid == (0.009, 0.099, 0.99)
    assert _best(model, epsilon) == pytest.approx(1.0 / (1e4 * epsilon), rel=0.2)


def test_on_the_grid_it_is_the_plain_regressor_and_between_it_is_monotone() -> None:
    data = _data()
    scaled = FittedMetaModel.fit(data, "forest_regret", 1, True, errors_scale_as_inverse_epsilon=True)
    plain = FittedMetaModel.fit(data, "forest_regret", 1, True)
    assert plain.epsilon_column is None and plain.epsilon_grid == ()
    np.testing.assert_allclose(scaled.predicted_errors(data.X), plain.predicted_errors(data.X))
    curve = [_best(scaled, e) for e in np.geomspace(0.009, 0.99, 25)]
    assert all(a >= b for a, b in zip(curve, curve[1:]))


def test_a_model_pickled_before_the_grid_existed_predicts_as_before() -> None:
    model = FittedMetaModel.fit(_data(), "forest_regret", 1, True, errors_scale_as_inverse_epsilon=True)
    old = FittedMetaModel(model.model_kind, model.model, model.best_error, model.options, model.features,
                          model.products)
    X = input_matrix({"size": [1e4], "epsilon": [0.05]}, FEATURES, PRODUCTS)
    expected = model.model.scores(X)[0] * np.exp(model.best_error.predict(X)[0])
    np.testing.assert_allclose(old.predicted_errors(X)[0], expected)
    assert not np.allclose(model.predicted_errors(X)[0], expected)  # the grid changes it off the grid


def _two_kinds_of_shape(seed: int = 1, rows: int = 400) -> TrainingMatrix:
    """Option "flat" has an error that does not depend on the shape (as Identity's); Option
    "shaped" is 2 times better on shapes with `peaks` above 0.8 and 3 times worse on the others.
    The best error therefore swings with `peaks`, while the flat Option's error does not; the
    flat Option has the lower mean regret (1.2 against 2.6)."""
    rng = np.random.default_rng(seed)
    epsilon = rng.choice([0.01, 0.1, 1.0], rows)
    peaks = rng.uniform(0, 1, rows)
    flat = 1.0 / epsilon * np.exp(0.05 * rng.standard_normal(rows))
    shaped = np.where(peaks > 0.8, 0.5, 3.0) / epsilon
    errors = np.stack([flat, shaped], axis=1)
    X = np.column_stack([epsilon, peaks])
    return TrainingMatrix(X, errors, np.log(errors), errors / errors.min(axis=1, keepdims=True),
                          np.arange(rows), np.arange(rows) % 7, ["flat", "shaped"], ["epsilon", "peaks"], ())


def test_predicted_errors_keep_the_choice_s_order_and_take_the_chosen_option_s_own_level() -> None:
    data = _two_kinds_of_shape()
    model = FittedMetaModel.fit(data, "budget_regret", 1, True, errors_scale_as_inverse_epsilon=True)
    X = np.array([[0.1, 0.2], [0.1, 0.95], [0.3, 0.2], [1.0, 0.95]])
    predicted = model.predicted_errors(X)
    scores = model.model.scores(X)
    chosen = model.choose(X)
    np.testing.assert_array_equal(np.argmin(predicted, axis=1), chosen)  # the order is the choice's
    np.testing.assert_allclose(predicted / predicted[:, :1], scores / scores[:, :1])  # the regret ratios are kept
    own = np.exp(model._log_predicted(model.option_errors, X))
    np.testing.assert_allclose(predicted[np.arange(len(X)), chosen], own[np.arange(len(X)), chosen])
    # budget_regret reads epsilon only, so it picks the same Option whatever the peaks; where it
    # picks the flat Option, its own level is 1 / epsilon, not the swinging best error times a regret
    assert (chosen == 0).all()
    np.testing.assert_allclose(predicted[:, 0], 1.0 / X[:, 0], rtol=0.1)
    # the level of the corpus' best error times the regret is 40% low on the peaked shapes
    old = FittedMetaModel(model.model_kind, model.model, model.best_error, model.options, model.features,
                          model.products, model.epsilon_column, model.epsilon_grid)
    ratio = old.predicted_errors(X)[:, 0] * X[:, 0]
    assert ratio[1] < 0.8 and ratio[3] < 0.8
