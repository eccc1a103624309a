"""Private evaluation of a released classifier, written once for every classifier family.

A released model is public (a function of noisy releases only), so applying it to one row is a
row-local function: the row's prediction depends on that row and on public values alone. This
module holds what every family's evaluation shares:

  * `row_labels` / `row_scores`: a model applied to rows given as one array per attribute (the
    columns of a row function, or a frame's columns). They never raise on a row: a row holding a
    category the model was not trained on gets a defined result, `None` (no label) or NaN (no
    score), so whether a row "fails" never depends on the other rows or stops the program;
  * `cells_*`: the evaluation tables as counts over public cells, one cell per row at most (the
    sensitivity argument of every release below: a histogram of a row-local function);
  * `*_from_counts`: accuracy, AUC and calibration from RELEASED counts (post-processing: no
    budget, nothing private read);
  * `private_accuracy`: the same for the scikit-learn estimators of every family
    (`DeclaredDomainClassifier`), released through a `PrivacyBudget` (which may charge a
    `Session`'s accountant) with the learners' exact geometric noise (`safe_noise.release_counts`).

The language's built-ins (`private_accuracy`, `confusion_matrix`, `auc`, `calibration` in
`jostle.language.evaluation`) count the cells on a private table and release them through the
language's own mechanisms (`geometric`, or `gaussian` at a rho), charged before any draw.

Sensitivity, once for all: each row of the evaluated table is mapped, by a function of that row
and of public values (the released model, the public bins, the public class list), to at most
one cell. One individual adds or removes at most s rows of the table (its stability: 1 for a row
table, 2 for replace_one, k after bound_per_key(k)), so the vector of cell counts moves by at most
s in L1, and by at most s in L2 (all s rows in one cell is the worst case), every count in the
same direction (counts only grow when rows are added): exactly a histogram's sensitivity.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

UNSEEN = None
"""The label a row gets when it holds a category the model was not trained on."""


# ---------------------------------------------------------------- a model on rows
def known_rows(domains: Sequence[Sequence[Any]], columns: Sequence[np.ndarray]) -> np.ndarray:
    """The rows (a boolean mask) whose every attribute value is in the model's domain.

    Membership is a dictionary's (==, hash), as the model's encoding is; a value that cannot be
    hashed is simply not known. Decided row by row: each row's answer depends on that row only.
    """
    import pandas as pd

    n = len(columns[0]) if len(columns) else 0
    mask = np.ones(n, dtype=bool)
    for array, domain in zip(columns, domains):
        index = {value: None for value in domain}
        codes, uniques = pd.factorize(pd.Series(np.asarray(array, dtype=object), dtype=object),
                                      use_na_sentinel=False)
        known = np.fromiter((_in(index, value) for value in uniques), dtype=bool, count=len(uniques))
        if len(codes):
            mask &= known[codes]
    return mask


def _in(index: dict, value: Any) -> bool:
    try:
        return value in index
    except TypeError:  # an unhashable value is no category of the model's
        return False


def _frame(model: Any, columns: Sequence[np.ndarray], rows: np.ndarray) -> Any:
    import pandas as pd

    return pd.DataFrame({name: np.asarray(array, dtype=object)[rows]
                         for name, array in zip(model.attributes, columns)})


def row_labels(model: Any, columns: Sequence[np.ndarray]) -> np.ndarray:
    """The class label the model gives each row (an object array), `None` on a row holding a
    category outside the model's domains. Never raises on a row.

    Args:
        model: A `jostle.learnerkit.language.ClassifierModel` (any classifier family's model).
        columns: One array per attribute, in `model.attributes` order.
    """
    known = known_rows(model.domains, columns)
    result = np.empty(len(known), dtype=object)
    result[:] = UNSEEN
    if known.any():
        classes = {label: label for label in model.classes}  # the model's own label objects
        labels = model.labels_for(_frame(model, columns, known))
        result[known] = [classes.get(label, label) for label in labels]
    return result


def row_scores(model: Any, positive: Any, columns: Sequence[np.ndarray]) -> np.ndarray:
    """The probability the model gives `positive` on each row (floats), NaN on a row holding a
    category outside the model's domains. Never raises on a row."""
    known = known_rows(model.domains, columns)
    result = np.full(len(known), np.nan)
    if known.any():
        index = list(model.classes).index(positive)
        result[known] = np.asarray(model.proba_for(_frame(model, columns, known)), dtype=float)[:, index]
    return result


# ---------------------------------------------------------------- public bins of scores
def score_bins(bins: int) -> tuple[str, ...]:
    """The labels of `bins` equal-width bins of [0, 1]: "[0, 0.1)", ..., "[0.9, 1]"."""
    edges = [Fraction(i, bins) for i in range(bins + 1)]
    return tuple(f"[{_edge(edges[i])}, {_edge(edges[i + 1])}{']' if i == bins - 1 else ')'}"
                 for i in range(bins))


def _edge(value: Fraction) -> str:
    return f"{float(value):g}"


def bin_of(scores: np.ndarray, bins: int) -> np.ndarray:
    """The bin of each score (an int in [0, bins)), -1 where the score is NaN (no score)."""
    scores = np.asarray(scores, dtype=float)
    result = np.full(len(scores), -1, dtype=np.int64)
    finite = ~np.isnan(scores)
    result[finite] = np.clip(np.floor(scores[finite] * bins), 0, bins - 1).astype(np.int64)
    return result


# ---------------------------------------------------------------- cells (one per row at most)
def cells_correct(predicted: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """[correct, wrong]: each row in exactly one of the two cells (a row the model cannot label
    is wrong)."""
    correct = int(sum(1 for p, t in zip(predicted.tolist(), truth.tolist()) if p is not UNSEEN and p == t))
    return np.array([correct, len(truth) - correct], dtype=np.int64)


def cells_confusion(predicted: np.ndarray, truth: np.ndarray, true_labels: Sequence[Any],
                    predicted_labels: Sequence[Any]) -> np.ndarray:
    """Counts per (true label, predicted label), row-major; each row in exactly one cell (the
    predicted labels include `None` when some row may hold an unseen category)."""
    rows = {label: i for i, label in enumerate(true_labels)}
    cols = {label: j for j, label in enumerate(predicted_labels)}
    counts = np.zeros(len(true_labels) * len(predicted_labels), dtype=np.int64)
    for p, t in zip(predicted.tolist(), truth.tolist()):
        i, j = rows.get(t), cols.get(p)
        if i is not None and j is not None:
            counts[i * len(predicted_labels) + j] += 1
    return counts


def cells_scores(bins_of_rows: np.ndarray, positive_rows: np.ndarray, bins: int) -> np.ndarray:
    """Counts per (score bin, is the row's class the positive one), row-major: cell 2b holds the
    positives of bin b, 2b + 1 its negatives. A row without a score (an unseen category) is in
    no cell."""
    scored = bins_of_rows >= 0
    flat = bins_of_rows[scored] * 2 + np.where(positive_rows[scored], 0, 1)
    return np.bincount(flat, minlength=2 * bins).astype(np.int64)


# ---------------------------------------------------------------- post-processing of released counts
def accuracy_from_counts(correct: float, wrong: float) -> float:
    """The share of rows labelled right, from the released [correct, wrong] counts: negative
    noisy counts read as 0, and the denominator is at least 1 (as a released mean's count)."""
    right, rows = max(float(correct), 0.0), max(float(correct), 0.0) + max(float(wrong), 0.0)
    return float(min(1.0, right / max(rows, 1.0)))


def auc_from_counts(counts: Sequence[float], bins: int) -> float | None:
    """The area under the ROC curve from released per-bin counts of positives and negatives
    (`cells_scores`' layout), negative counts read as 0; pairs in one bin count one half (the
    trapezoid rule over the bins' thresholds). None when no positive or no negative remains."""
    values = np.maximum(np.asarray(counts, dtype=float), 0.0)
    positives, negatives = values[0::2][:bins], values[1::2][:bins]
    total_positive, total_negative = positives.sum(), negatives.sum()
    if total_positive <= 0 or total_negative <= 0:
        return None
    below = np.concatenate([[0.0], np.cumsum(negatives)[:-1]])  # negatives in lower bins
    area = float(np.sum(positives * (below + negatives / 2)))
    return float(min(1.0, max(0.0, area / (total_positive * total_negative))))


def calibration_from_counts(counts: Sequence[float], bins: int) -> list[dict[str, Any]]:
    """Per score bin: its label, the bin's middle score, the released rows and positives (negative
    counts read as 0; positives at most rows) and the observed rate of positives (None for an
    empty bin)."""
    values = np.maximum(np.asarray(counts, dtype=float), 0.0)
    out = []
    for b, label in enumerate(score_bins(bins)):
        positives, negatives = float(values[2 * b]), float(values[2 * b + 1])
        rows = positives + negatives
        out.append({"bin": label, "score": (b + 0.5) / bins, "rows": rows, "positives": positives,
                    "rate": positives / rows if rows > 0 else None})
    return out


# ---------------------------------------------------------------- the scikit-learn estimators
def private_accuracy(estimator: Any, X: Any, y: Any, epsilon: float, budget: Any, noise: Any = None) -> float:
    """A noisy accuracy of a fitted estimator on PRIVATE rows, charged to `budget` before any draw.

    The release is the two counts [correct, wrong] with the exact two-sided geometric noise of
    scale 1 / epsilon each (`safe_noise.release_counts`): one row added or removed moves one of
    them by 1 (a row is in exactly one cell), so L1 sensitivity 1 and the pair is epsilon-DP;
    the accuracy, correct / max(correct + wrong, 1), is post-processing. Neighbours one row apart
    (the estimators' unit). A row the estimator cannot encode (a value outside its declared
    domains) counts as wrong, row by row, never as an error.

    Args:
        estimator: A fitted estimator of any classifier family (`predict` on X).
        X, y: The private rows and their labels.
        epsilon: The release's budget (> 0).
        budget: The `PrivacyBudget` to charge (e.g. `PrivacyBudget(account=session)`, so the
            release appears in the session's ledger and draws on the data's lifetime budget).
        noise: The noise source (None: the secure source).

    Raises:
        BudgetExceededError: The budget refuses; nothing is drawn or spent.
    """
    from jostle.privacy.noise import Randomness
    from jostle.privacy.safe_noise import release_counts
    from jostle.privacy.shared_budget import PrivacyBudget

    if not isinstance(budget, PrivacyBudget):
        raise TypeError("private_accuracy charges a PrivacyBudget (e.g. PrivacyBudget(account=session)); "
                        f"got {type(budget).__name__}")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, Fraction)) or not math.isfinite(epsilon) \
            or epsilon <= 0:
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    counts = _estimator_cells(estimator, X, y)
    charged = budget.charge(epsilon, f"private_accuracy of {type(estimator).__name__} (epsilon {float(epsilon):g})")
    noisy = release_counts(noise if noise is not None else Randomness(), counts, 1, Fraction(charged))
    return accuracy_from_counts(noisy[0], noisy[1])


def private_accuracy_of_table(estimator: Any, frame: Any, target: str, epsilon: float, budget: Any,
                              noise: Any = None) -> float:
    """`private_accuracy` of a fitted estimator on the rows of a private table's frame: its features
    are the columns the estimator was fitted on (by name), the labels the column `target`."""
    names = getattr(estimator, "feature_names_in_", None)
    names = list(names) if names is not None else list(estimator.domains_.names)
    missing = [name for name in [*names, target] if name not in frame.columns]
    if missing:
        raise ValueError(f"the table has no column(s) {missing} the estimator reads")
    return private_accuracy(estimator, frame[names], frame[target], epsilon, budget, noise)


def _estimator_cells(estimator: Any, X: Any, y: Any) -> np.ndarray:
    """[correct, wrong] of an estimator's predictions; a row it cannot encode is wrong."""
    import pandas as pd

    truth = y.to_numpy() if isinstance(y, (pd.Series, pd.DataFrame)) else np.asarray(y, dtype=object)
    try:
        predicted = np.asarray(estimator.predict(X), dtype=object)
    except ValueError:  # some row holds a value outside the declared domains: row by row
        rows = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=object))
        predicted = np.empty(len(rows), dtype=object)
        for i in range(len(rows)):
            try:
                one = rows.iloc[[i]] if isinstance(X, pd.DataFrame) else np.asarray(X, dtype=object)[i:i + 1]
                predicted[i] = estimator.predict(one)[0]
            except ValueError:
                predicted[i] = UNSEEN
    if len(predicted) != len(truth):
        raise ValueError(f"X has {len(predicted)} rows but y has {len(truth)}")
    return cells_correct(predicted, np.asarray(truth, dtype=object))
