"""The SuLQ perceptron: a (multiclass) perceptron updated from noisy sums over misclassified rows.

What it follows. Blum, Dwork, McSherry and Nissim, "Practical privacy: the SuLQ framework"
(PODS 2005, section 5) run the perceptron through SuLQ: each update adds the sum of the
misclassified points (signed by their label), and that sum is d SuLQ queries, one per
coordinate, of rows scaled into a public box; the lecture notes only name it. This is written
from what we remember of the paper (its text was not available here); the multiclass form, the
averaging and the exact query layout below are ours.

The box. Rows are categorical: each row is the one-hot vector of its attributes' values (V
coordinates, V the sum of the PUBLIC domain sizes) plus a bias coordinate 1, so every
coordinate lies in {0, 1} without clipping (the box [0, 1]^(V+1) is public: the domains are).

The query plan (public, fixed in advance). A fixed public number of iterations I (no
convergence test: that would be a query on private data). In iteration t, with the current
weights W_t (one row per class), a row is misclassified when argmax_c W_t x != y. The update
w_y += x, w_pred -= x is signed, so it is asked as two families of [0, 1]-valued queries (the
signed quantity *split*, not shifted):

    E[c, j] = sum over misclassified rows of true class c of x_j        (C (V + 1) queries)
    F[c, j] = sum over misclassified rows predicted as c of x_j        (C (V + 1) queries)

and W_{t+1} = W_t + E~ - F~ (noisy sums). With two classes F[c] = E[1 - c] (a row of class 0 is
misclassified exactly when predicted 1), so only E is asked. Per iteration L = C (V + 1) queries
(two classes) or 2 C (V + 1) (more), and

    T = I * L                                                          (`query_count`).

Each query's per-row value is x_j times an indicator: in {0, 1}. Counted SuLQ's way, a batch of
L queries has touched = L.

The average. The learner returns the mean of the iterates W_1 .. W_I (the averaged perceptron,
post-processing of the noisy sums): on 20 tables of the public corpus it beat the last iterate
and the iterate of fewest noisy errors at rho 0.02 and 0.5 (10 and 20 iterations). The bias
coordinate of E[c] counts the misclassified rows of class c, so sum_c E~[c, bias] is a noisy
count of W_t's training errors, for free: kept as `noisy_errors`, a diagnostic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from jostle.learners.sulq_classifiers.queries import Calibration, ChargeFunction, Releases, calibrate, check_shape

__all__ = ["DEFAULT_ITERATIONS", "SuLQLinear", "batches", "fit_perceptron", "query_count"]

DEFAULT_ITERATIONS = 10


def _check_shape(domain_sizes: Sequence[int], n_classes: int, iterations: int) -> tuple[list[int], int, int]:
    return check_shape("the SuLQ perceptron", domain_sizes, n_classes, iterations, "number of iterations", 1)


def batch_length(domain_sizes: Sequence[int], n_classes: int) -> int:
    """The queries of one iteration: C (V + 1), twice that for more than two classes."""
    width = sum(int(size) for size in domain_sizes) + 1
    return n_classes * width * (1 if n_classes <= 2 else 2)


def batches(domain_sizes: Sequence[int], n_classes: int, iterations: int) -> list[int]:
    """The lengths of the learner's batches: one per iteration (public)."""
    sizes, classes, iterations = _check_shape(domain_sizes, n_classes, iterations)
    return [batch_length(sizes, classes)] * iterations


def query_count(domain_sizes: Sequence[int], n_classes: int, iterations: int = DEFAULT_ITERATIONS) -> int:
    """T: the number of SuLQ queries the SuLQ perceptron asks on a table of this public shape."""
    return sum(batches(domain_sizes, n_classes, iterations))


@dataclass
class SuLQLinear:
    """A linear classifier on one-hot codes (one weight row per class), trained by the SuLQ
    perceptron: a function of noisy sums only (public).

    Attributes:
        weights: (C, V + 1) weights, the last column the bias.
        domain_sizes, n_classes: The public shape.
        queries: T, the number of SuLQ queries released.
        variance: R, the noise variance of every query.
        rho: What the fit cost.
        noisy_errors: The noisy training-error count of each iterate W_0 .. W_{I-1}.
    """

    weights: np.ndarray
    domain_sizes: tuple[int, ...]
    n_classes: int
    queries: int
    variance: float
    rho: float
    noisy_errors: np.ndarray
    classes_: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.classes_ = np.arange(self.n_classes)

    def scores(self, X: np.ndarray) -> np.ndarray:
        """W x of rows of integer codes: (rows, C)."""
        return _scores(self.weights, np.asarray(X, dtype=np.int64), _offsets(self.domain_sizes))

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """A softmax of the scores (ordered as the scores: the argmax is the prediction)."""
        scores = self.scores(X)
        scale = max(float(np.abs(self.weights).max()), 1.0)
        shifted = np.exp((scores - scores.max(axis=1, keepdims=True)) / scale)
        return shifted / shifted.sum(axis=1, keepdims=True)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """The class code of largest score of each row (ties: the first)."""
        return self.scores(X).argmax(axis=1)

    def to_text(self, names: Sequence[str] = (), values: Sequence[Sequence[Any]] = (),
                classes: Sequence[Any] = (), **_: Any) -> str:
        """A short printout: the fit's facts and the largest weights of each class."""
        lines = [f"SuLQ perceptron ({self.queries} SuLQ queries, variance {self.variance:.6g}, rho {self.rho:.6g}; "
                 f"the average of {len(self.noisy_errors)} iterates)"]
        labels = [f"{names[a] if len(names) > a else f'x{a}'}="
                  f"{values[a][v] if len(values) > a else v}"
                  for a, size in enumerate(self.domain_sizes) for v in range(size)] + ["bias"]
        for c in range(self.n_classes):
            top = np.argsort(-np.abs(self.weights[c]))[:4]
            shown = ", ".join(f"{labels[j]}: {self.weights[c, j]:+.3g}" for j in top)
            lines.append(f"  {classes[c] if len(classes) > c else c}: {shown}")
        return "\n".join(lines)


def _offsets(domain_sizes: Sequence[int]) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(domain_sizes)[:-1]]).astype(np.int64)


def _scores(weights: np.ndarray, X: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """W x for one-hot rows with a bias: sum of the rows' value columns plus the bias column."""
    columns = X + offsets  # (rows, k) one-hot positions
    return weights[:, columns].sum(axis=2).T + weights[:, -1]


def fit_perceptron(X: np.ndarray, y: np.ndarray, domain_sizes: Sequence[int], n_classes: int, noise: Any,
                   charge: ChargeFunction | None, *, rho: Any = None, variance: Any = None, cap: Any = None,
                   iterations: int = DEFAULT_ITERATIONS, calibration: Calibration | None = None) -> SuLQLinear:
    """Train the SuLQ perceptron (see the module docstring).

    Args:
        X, y: Integer codes (rows x attributes) under the public `domain_sizes`, class codes.
        domain_sizes, n_classes: The public shape.
        noise: The randomness the releases draw from.
        charge: charge(RhoZCDPBudget, description), called before each batch is drawn; None
            charges nothing (tests only).
        rho: The fit's budget (R = `variance_for_rho(rho, T)`), or
        variance: R itself (the fit then costs the batches' rhos).
        cap: A rho the whole fit must fit in, checked before anything is charged or drawn.
        iterations: The public number of iterations I.
        calibration: A calibration made already (of `batches(...)`), instead of rho / variance.

    Raises:
        ValueError: Bad public parameters (before anything is charged).
        OverBudgetError: The fit costs more than `cap` (before anything is charged), or a charge
            is refused (before its batch is drawn).
    """
    sizes, classes, iterations = _check_shape(domain_sizes, n_classes, iterations)
    plan = calibration if calibration is not None else calibrate(batches(sizes, classes, iterations), rho, variance)
    if cap is not None:
        plan.check(cap, "SuLQ perceptron")
    X = np.asarray(X, dtype=np.int64).reshape(-1, len(sizes))
    y = np.asarray(y, dtype=np.int64)
    releases = Releases(plan, noise, charge, "SuLQ perceptron")
    offsets = _offsets(sizes)
    width = sum(sizes) + 1
    columns = X + offsets
    weights = np.zeros((classes, width))
    history: list[np.ndarray] = []
    errors = np.zeros(iterations)
    for step in range(iterations):
        predicted = _scores(weights, X, offsets).argmax(axis=1) if len(y) else np.zeros(0, dtype=np.int64)
        wrong = np.flatnonzero(predicted != y)

        def sums_by(labels: np.ndarray) -> np.ndarray:
            # For every misclassified row, 1 at (label, each of its one-hot columns) and (label, bias).
            base = labels[wrong][:, None] * width
            cells = np.concatenate([(base + columns[wrong]).ravel(), base[:, 0] + width - 1])
            return np.bincount(cells, minlength=classes * width)

        sums = sums_by(y) if classes <= 2 else np.concatenate([sums_by(y), sums_by(predicted)])
        noisy = releases.release(sums, f"iteration {step}: sums of misclassified rows' one-hot coordinates")
        by_truth = noisy[:classes * width].reshape(classes, width)
        by_prediction = by_truth[::-1] if classes == 2 else (
            noisy[classes * width:].reshape(classes, width) if classes > 2 else np.zeros_like(by_truth))
        errors[step] = by_truth[:, -1].sum()  # noisy count of W_step's misclassified rows
        history.append(weights.copy())
        weights = weights + by_truth - by_prediction
    released = releases.finish()
    average = np.mean(history[1:] + [weights], axis=0)  # W_1 .. W_I
    return SuLQLinear(average, tuple(sizes), classes, released, float(plan.variance), float(plan.rho), errors)
