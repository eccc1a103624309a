"""The references of `benchmarks/sulq.py` that are not Jostle's: IBM diffprivlib's KMeans (DPLloyd)
and logistic regression (objective perturbation), and the non-private k-means and logistic
regression; plus the error measures every learner is scored by.

diffprivlib (benchmark-only: the "bench" extra; never imported by jostle/) is given every bound
it needs: KMeans the box [0, 1]^d the rows were clipped and scaled into, the logistic regression
data_norm = 1 (every one-hot row has norm exactly 1, `sulq_data`), so it reads nothing from the
data. Both are PURE epsilon-DP (Laplace noise), a stronger guarantee than the (epsilon, delta)
the zCDP learners are converted to.

Compatibility. diffprivlib 0.6.6 imports two constants scikit-learn 1.9 removed
(`sklearn.tree._tree.DOUBLE`, `DTYPE`, used only by its forests), and its LogisticRegression's
constructor passes `multi_class`, which scikit-learn 1.9 no longer accepts. `load_diffprivlib`
restores the two constants (float64 and float32, their values in scikit-learn < 1.9) before the
import; the logistic regression calls diffprivlib's own fitting routine
(`diffprivlib.models.logistic_regression._logistic_regression_path`: Chaudhuri, Monteleoni and
Sarwate's objective perturbation with L-BFGS, exactly what its `fit` runs for a binary problem)
with the norm clipping its `fit` does first.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np


def load_diffprivlib() -> Any:
    """Import diffprivlib on scikit-learn 1.9 (see the module docstring); exit with one line without it."""
    try:
        import sklearn.tree._tree as tree_module
    except ImportError:  # pragma: no cover
        tree_module = None
    if tree_module is not None:
        for name, value in (("DOUBLE", np.float64), ("DTYPE", np.float32)):
            if not hasattr(tree_module, name):
                setattr(tree_module, name, value)
    try:
        import diffprivlib
    except ImportError as error:
        raise SystemExit(f"sulq.py: diffprivlib is missing ({error}); install the bench extra: "
                         f"python -m pip install -e '.[bench]'") from None
    return diffprivlib


def within_cluster_error(rows: np.ndarray, centres: np.ndarray) -> float:
    """Mean squared distance of each row to its nearest centre (rows and centres in [0, 1]^d)."""
    centres = np.asarray(centres, dtype=float)
    distances = ((rows[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
    return float(distances.min(axis=1).mean())


def diffprivlib_kmeans(train: np.ndarray, k: int, epsilon: float, seed: int) -> np.ndarray:
    """diffprivlib's KMeans (DPLloyd, pure epsilon) on rows in [0, 1]^d, told the box: its centres."""
    load_diffprivlib()
    from diffprivlib.models import KMeans

    d = train.shape[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = KMeans(n_clusters=k, epsilon=epsilon, bounds=(np.zeros(d), np.ones(d)), random_state=seed)
        model.fit(train)
    return np.asarray(model.cluster_centers_)


def nonprivate_kmeans(train: np.ndarray, k: int, seed: int) -> np.ndarray:
    """scikit-learn's k-means (k-means++, 10 starts): the non-private reference's centres."""
    from sklearn.cluster import KMeans

    return KMeans(n_clusters=k, n_init=10, random_state=seed).fit(train).cluster_centers_


def diffprivlib_logistic(train_x: np.ndarray, train_y: np.ndarray, epsilon: float, c: float,
                         seed: int) -> np.ndarray:
    """diffprivlib's DP logistic regression (objective perturbation, pure epsilon) with
    data_norm = 1 passed in: weights with the intercept last."""
    load_diffprivlib()
    from diffprivlib.models.logistic_regression import _logistic_regression_path

    norms = np.linalg.norm(train_x, axis=1)
    clipped = train_x / np.maximum(norms / 1.0, 1.0)[:, None]  # diffprivlib's _clip_to_norm at data_norm 1
    if len(np.unique(train_y)) < 2:  # one class in the training part: the constant classifier
        weights = np.zeros(train_x.shape[1] + 1)
        weights[-1] = 1.0 if train_y[0] == 1 else -1.0
        return weights
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        coefs, _, _ = _logistic_regression_path(clipped, train_y, epsilon=epsilon, data_norm=1.0, pos_class=1,
                                                Cs=[c], fit_intercept=True, max_iter=100, tol=1e-4,
                                                random_state=seed, check_input=False)
    return np.asarray(coefs[0])


def nonprivate_logistic(train_x: np.ndarray, train_y: np.ndarray) -> np.ndarray:
    """scikit-learn's L2 logistic regression (C = 1): weights with the intercept last."""
    from sklearn.linear_model import LogisticRegression

    if len(np.unique(train_y)) < 2:
        weights = np.zeros(train_x.shape[1] + 1)
        weights[-1] = 1.0 if train_y[0] == 1 else -1.0
        return weights
    model = LogisticRegression(C=1.0, max_iter=1000).fit(train_x, train_y)
    return np.concatenate([model.coef_[0], model.intercept_])


def linear_accuracy(weights: np.ndarray, test_x: np.ndarray, test_y: np.ndarray) -> float:
    """Accuracy of the linear classifier sign(x . w + b) (w, b = weights[:-1], weights[-1])."""
    predicted = (test_x @ weights[:-1] + weights[-1] > 0).astype(int)
    return float(np.mean(predicted == test_y))


def mean_interval(values: list[float]) -> dict[str, float]:
    """Mean and its 95% t-interval over repetitions (the interval is the mean's for one value)."""
    from scipy import stats

    array = np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=float)
    if array.size == 0:
        return {"mean": float("nan"), "low": float("nan"), "high": float("nan"), "n": 0}
    mean = float(array.mean())
    if array.size < 2:
        return {"mean": mean, "low": mean, "high": mean, "n": int(array.size)}
    half = float(stats.t.ppf(0.975, array.size - 1) * array.std(ddof=1) / np.sqrt(array.size))
    return {"mean": mean, "low": mean - half, "high": mean + half, "n": int(array.size)}
