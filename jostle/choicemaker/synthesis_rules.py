"""Synthesised predict functions: one readable rule per Option giving its predicted error.

A rule set (`PredictRules`) is, for every Option o, a linear model of the log of its error over
the same 1-3 expressions of `synthesis`:

    predicted_error(o) = exp(a_o + b_o1 * e_1 + ... + b_ok * e_k)

fitted by least squares (a small ridge keeps it defined on collinear inputs) to the log of each
configuration's mean error on the training rows. The choice is the Option with the lowest
prediction, which is what a ChoiceMaker `trained on none` does with `predict(F)` priors; the
expressions are chosen by the same greedy search as metafeatures (`synthesis.select_expressions`
with `rules_chooser`), scored by inner-fold regret with the cost of what they read counted.
`option_code` writes one as an `option` wrapping a built-in Option with a `predict(F)` prior.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from jostle.choicemaker.synthesis import Expression, RowSet, number

RIDGE = 1e-6


@dataclass(frozen=True)
class PredictRules:
    """Per-Option linear models of log error.

    Attributes:
        expressions: The inputs, in order.
        intercepts: (options,) a_o.
        coefficients: (options, terms) b_oj.
        options: Option names.
    """

    expressions: tuple[Expression, ...]
    intercepts: np.ndarray
    coefficients: np.ndarray
    options: tuple[str, ...]

    def log_errors(self, rows: RowSet) -> np.ndarray:
        """(rows, options) predicted log errors."""
        if not self.expressions:
            return np.tile(self.intercepts, (len(rows.errors), 1))
        return self.intercepts + rows.matrix(self.expressions) @ self.coefficients.T

    def choose(self, rows: RowSet) -> np.ndarray:
        return np.argmin(self.log_errors(rows), axis=1)

    def predict_code(self, option: str, record: str = "F") -> str:
        """The option's `predict(F)` body: `exp(a + b * <expression> ...)`."""
        index = self.options.index(option)
        terms = [number(float(self.intercepts[index]))]
        for expression, weight in zip(self.expressions, self.coefficients[index]):
            if float(number(abs(float(weight)))) == 0:
                continue
            sign = "-" if weight < 0 else "+"
            terms.append(f"{sign} {number(abs(float(weight)))} * {wrap(expression.code(record))}")
        return f"exp({' '.join(terms)})"


def wrap(code: str) -> str:
    """Parenthesise an expression's code unless it is one name or call."""
    return code if code.replace(".", "").replace("_", "").isalnum() or code.endswith(")") and \
        code.count("(") == 1 else f"({code})"


def fit_rules(rows: RowSet, expressions: Sequence[Expression]) -> PredictRules:
    """Fit the rules on training rows: targets are the log of each configuration's mean error."""
    mean = pd.DataFrame(rows.errors).groupby(rows.config).transform("mean").to_numpy()
    target = np.log(np.maximum(mean, 1e-12))
    inputs = rows.matrix(expressions) if expressions else np.zeros((len(target), 0))
    centre = inputs.mean(axis=0) if inputs.shape[1] else np.zeros(0)
    scale = inputs.std(axis=0) if inputs.shape[1] else np.zeros(0)
    scale = np.where(scale > 0, scale, 1.0)
    standard = (inputs - centre) / scale
    gram = standard.T @ standard + RIDGE * len(target) * np.eye(standard.shape[1])
    weights = np.linalg.solve(gram, standard.T @ (target - target.mean(axis=0))) if standard.shape[1] else \
        np.zeros((0, target.shape[1]))
    coefficients = (weights / scale[:, None]).T  # back to the raw inputs
    intercepts = target.mean(axis=0) - coefficients @ centre
    return PredictRules(tuple(expressions), intercepts, coefficients, tuple(rows.options))


def rules_chooser(train: RowSet, test: RowSet, expressions: Sequence[Expression]) -> np.ndarray:
    """A `synthesis.Scorer`: fit rules on `train`, choose on `test`."""
    return fit_rules(train, expressions).choose(test)


def option_code(rules: PredictRules, option: str, params: Sequence[str], suffix: str = "Rule") -> str:
    """An `option` a programmer can paste: the built-in Option with the rule as its prior."""
    arguments = ", ".join(params)
    return (f"option {option}{suffix}({arguments}):\n"
            f"    answer:\n"
            f"        return {option}({arguments})\n"
            f"    predict(F):\n"
            f"        return {rules.predict_code(option)}\n")


__all__ = ["PredictRules", "fit_rules", "rules_chooser", "option_code"]
