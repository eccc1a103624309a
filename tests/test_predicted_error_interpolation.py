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
