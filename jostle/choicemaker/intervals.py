"""Intervals around a ChoiceMaker's predicted errors, from held-out residuals on the public corpus.

For each Option, training computes the residuals log(error of one run) - log(predicted error)
of the selected meta-model kind on held-out groups of the public corpus (k folds of whole
groups, `model.group_folds`; k = 5 by default, fewer when there are fewer groups), and keeps
their 2.5% and 97.5% quantiles (`ErrorIntervals`). At run time the interval of an Option's
predicted error p is [p * exp(q_low), p * exp(q_high)]: where the error of one run of that
Option fell, relative to the prediction, in 95% of held-out runs of the corpus. It is an
empirical interval about the corpus, not a guarantee on a new input; it covers the run-to-run
noise of the Option and of the metafeatures as well as the meta-model's misfit.

Privacy: the quantiles are computed on public data; at run time the interval is arithmetic on
the released predicted errors (post-processing). A ChoiceMaker trained before intervals existed
has none (`TrainedChoiceMaker.intervals` is None), and `explain` then shows no interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from jostle.choicemaker.model import FittedMetaModel, TrainingMatrix, group_folds

from jostle.choicemaker.error_estimates import LEVEL  # noqa: E402  (the one definition)
FOLDS = 5
FLOOR = 1e-12  # errors of exactly 0 (a perfect run) are read as this, relative to the prediction


@dataclass(frozen=True)
class ErrorIntervals:
    """Per Option, the held-out quantiles of log(error / predicted error) (public).

    Attributes:
        options: Option names.
        low, high: The lower and upper quantiles of the log residual, in `options` order.
        level: The coverage aimed at (0.95).
        runs: How many held-out runs each quantile is computed from.
    """

    options: tuple[str, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    level: float = LEVEL
    runs: int = 0

    def interval(self, option: str, predicted: float) -> tuple[float, float] | None:
        """The interval of `option`'s predicted error, or None if training kept none for it."""
        if option not in self.options or not np.isfinite(predicted):
            return None
        index = self.options.index(option)
        return float(predicted * np.exp(self.low[index])), float(predicted * np.exp(self.high[index]))

    def intervals(self, predictions: Mapping[str, float]) -> dict[str, tuple[float, float]]:
        """The interval of every predicted error that has one (post-processing)."""
        out = {}
        for option, predicted in predictions.items():
            found = self.interval(option, float(predicted))
            if found is not None:
                out[option] = found
        return out


def held_out_intervals(data: TrainingMatrix, model_kind: str, use_features: bool, folds: int = FOLDS,
                       level: float = LEVEL, n_jobs: int = 1,
                       errors_scale_as_inverse_epsilon: bool = False) -> ErrorIntervals | None:
    """The intervals of a meta-model kind from its residuals on held-out groups (None with fewer
    than two groups: nothing can be held out)."""
    if len(np.unique(data.groups)) < 2 or len(data.X) == 0:
        return None
    residuals = np.full(data.errors.shape, np.nan)
    for held_out in group_folds(data.groups, folds):
        if held_out.all() or not held_out.any():
            continue
        model = FittedMetaModel.fit(data.rows(~held_out), model_kind, n_jobs, use_features,
                                    errors_scale_as_inverse_epsilon)
        inputs = data.X[held_out] if use_features else np.zeros((int(held_out.sum()), 1))
        predicted = np.maximum(model.predicted_errors(inputs), FLOOR)
        residuals[held_out] = np.log(np.maximum(data.errors[held_out], FLOOR)) - np.log(predicted)
    tail = (1.0 - level) / 2.0
    low, high = [], []
    for column in residuals.T:
        finite = column[np.isfinite(column)]
        low.append(float(np.quantile(finite, tail)) if finite.size else float("nan"))
        high.append(float(np.quantile(finite, 1.0 - tail)) if finite.size else float("nan"))
    return ErrorIntervals(tuple(data.options), tuple(low), tuple(high), level,
                          int(np.isfinite(residuals).all(axis=1).sum()))


__all__ = ["ErrorIntervals", "FOLDS", "LEVEL", "held_out_intervals"]
