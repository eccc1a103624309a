"""Predicted errors of a ChoiceMaker's Options, with an interval: always an estimate, never a bound.

Two sources, both public (issue 29):

  * **After measuring** (a dispatch): the chosen Option's predicted error is the meta-model's
    prediction from the released metafeatures, and its interval is the held-out one of issue 27
    (`intervals.ErrorIntervals`: where the error of one run fell, relative to the prediction, in
    95% of held-out runs of the public corpus). `dispatch_estimate` makes it from a dispatch's
    `Trace`. Its confidence is the level training kept (0.95); it is an empirical interval about
    the corpus, calibrated on held-out *groups of the corpus*, not a guarantee on a new input:
    `benchmarks/accuracy_choicemaker.py` measures its coverage on tasks the corpus did not hold.
  * **Before measuring** (the cost report; `estimate_error`): from the experience table, the runs
    of the Option at the grid budget nearest the call's (log scale) and, when a public size bound
    is given and the table has sizes, at the nearest size; the value is their mean error and the
    interval the empirical (1 - c) / 2 and (1 + c) / 2 quantiles of the single runs' errors. It is
    the spread over the corpus's tasks near that budget and size, so it is calibrated for a task
    drawn like the corpus's, and wide: it knows nothing of the input but its budget and size.
    A shipped ChoiceMaker keeps a summary of its experience (`pretrained.summarise_experience`);
    summaries written before quantiles existed only hold a mean and a standard deviation, and
    the interval is then mean +- z * std clipped at 0 (a normal approximation, said in `source`).
    With no Option named (`option_name=None`), the estimate is that of the Option a ChoiceMaker
    would pick from public facts only: the one with the lowest mean error at that budget and
    size on the corpus (the best fixed Option there). A dispatch that measures usually does at
    least as well, so this is the estimate the cost report shows for a ChoiceMaker's call.

Privacy: everything here is post-processing of released metafeatures (the trace's predicted
errors) and arithmetic on public training data (the experience table, the held-out residuals);
the budget and the size bound are public facts of the program. Nothing reads a private row, so
an estimate is the same on neighbouring inputs whenever the released metafeatures are.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Hashable

import numpy as np

from jostle.choicemaker.budgets import as_budget, budget_float, measure_of, pure_epsilon_within
from jostle.privacy.measures import RhoZCDPBudget

if TYPE_CHECKING:  # pandas is imported where it is used: `import jostle` stays light
    import pandas as pd

# The confidence of a dispatch's intervals: the held-out level training keeps (jostle.choicemaker.intervals
# imports it from here, so that this module, which the dispatch imports at start-up, stays light).
LEVEL = 0.95

LABEL = "an estimate, not a bound"
BUDGET_COLUMNS = ("epsilon", "rho")  # the experience's budget columns (words of the language)
MIN_RUNS = 50  # the runs per Option a size-matched estimate gathers, nearest sizes first
SUMMARY_LEVELS = (0.5, 0.8, 0.9, 0.95, 0.99)  # the confidences a shipped summary keeps quantiles for


def check_confidence(confidence: Any) -> float:
    """A confidence strictly between 0 and 1, as a float.

    Raises:
        ValueError: Not a number, or outside (0, 1).
    """
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float, np.integer, np.floating)):
        raise ValueError(f"a confidence must be a number strictly between 0 and 1, got {confidence!r}")
    value = float(confidence)
    if not (0.0 < value < 1.0):
        raise ValueError(f"a confidence must be strictly between 0 and 1 (e.g. 0.95), got {value:g}")
    return value


@dataclass(frozen=True)
class ErrorEstimate:
    """An Option's expected error, in its family's error measure, with an interval: an estimate.

    Attributes:
        measure: The error measure (the family's `error_measure`, e.g. "scaled_l1", "accuracy"
            meaning 1 - accuracy); `error_name` of the family says it in words.
        value: The predicted (or expected) error.
        low, high: The interval the error of one run falls in with probability about
            `confidence` (NaN when training kept no interval).
        confidence: The interval's confidence.
        source: Where it comes from, in words, ending with "an estimate".
        option: The Option it is about ("" when unknown).
        measure_name: What `measure` is, in words (the family's `error_name`, e.g. "1 - test
            accuracy"); "" when unknown.
    """

    measure: str
    value: float
    low: float
    high: float
    confidence: float
    source: str
    option: str = ""
    measure_name: str = ""

    def __post_init__(self) -> None:
        check_confidence(self.confidence)

    @property
    def has_interval(self) -> bool:
        return math.isfinite(self.low) and math.isfinite(self.high)

    def describe(self) -> str:
        """One line: the predicted error, its interval and confidence, and its source."""
        interval = (f", {self.confidence:.0%} interval [{self.low:.3g}, {self.high:.3g}]" if self.has_interval
                    else ", no interval")
        who = f" of {self.option}" if self.option else ""
        return f"predicted {self.measure_name or self.measure}{who} {self.value:.3g}{interval} ({self.source})"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# ------------------------------------------------------------------------------ after measuring
def dispatch_estimate(trace: Any, measure: str) -> ErrorEstimate | None:
    """The chosen Option's predicted error and held-out interval from a dispatch's `Trace`
    (post-processing of the released metafeatures); None when the dispatch predicted nothing for
    it (a choice by private selection)."""
    predicted = dict(trace.predicted_error)
    if trace.choice not in predicted or not math.isfinite(predicted[trace.choice]):
        return None
    value = float(predicted[trace.choice])
    low, high = dict(trace.intervals).get(trace.choice, (math.nan, math.nan))
    where = "held-out residuals on the public corpus" if math.isfinite(low) else "no interval kept by training"
    source = (f"{trace.choicemaker}'s meta-model from the released metafeatures at {measure_of(trace.budget)} "
              f"{budget_float(trace.budget):.4g}; interval from {where}: {LABEL}")
    priors = dict(trace.prior)
    if priors.get(trace.choice) == value and not math.isfinite(low):  # an Option training could not predict
        source = f"the option's predict(F) prior (no training behind it): {LABEL}"
    return ErrorEstimate(measure, value, float(low), float(high), LEVEL, source, trace.choice,
                         str(getattr(trace, "error_name", "") or ""))


def selection_estimate(trained: Any, option_name: str, budget: Any, segment: Hashable,
                       name: str) -> ErrorEstimate | None:
    """For a choice made by private selection (nothing measured, nothing predicted): the chosen
    Option's expected error at the call's budget from the experience table (`estimate_error`),
    said to be that; None without experience."""
    try:
        found = estimate_error(trained, option_name, budget, None, LEVEL, segment, name)
    except (ValueError, KeyError):
        return None
    return replace(found, source=f"chosen by private selection (no metafeatures measured); {found.source}")


# ------------------------------------------------------------------------------ before measuring
def size_column(family: Any, table: pd.DataFrame) -> str | None:
    """The experience column holding a task's size: the family's `size_column` when it declares
    one, else the numeric configuration column (not the task, its group, the segment or a budget)
    whose values span the most decades in `table` (the rows of a table, a histogram's scale);
    None when there is none."""
    import pandas as pd

    declared = getattr(family, "size_column", None)
    if declared:
        return declared if declared in table.columns else None
    skip = {*family.config_columns[:2], family.segment_column, *BUDGET_COLUMNS}
    best, span = None, 0.0
    for column in family.config_columns:
        if column in skip or column not in table.columns or not pd.api.types.is_numeric_dtype(table[column]):
            continue
        values = table[column].to_numpy(dtype=float)
        values = values[np.isfinite(values) & (values > 0)]
        if values.size and math.log10(values.max() / values.min()) > span:
            best, span = column, math.log10(values.max() / values.min())
    return best


def _by_log_distance(table: pd.DataFrame, column: str, target: float) -> np.ndarray:
    """The positive distinct values of `column`, nearest `target` (in log scale) first."""
    values = np.unique(table[column].to_numpy(dtype=float))
    values = values[values > 0]
    return values[np.argsort(np.abs(np.log(values) - math.log(max(target, 1e-300))), kind="stable")]


def _nearest(table: pd.DataFrame, column: str, target: float) -> tuple[pd.DataFrame, float]:
    """The rows whose `column` is the value nearest `target` in log scale, and that value."""
    chosen = float(_by_log_distance(table, column, target)[0])
    return table[table[column].astype(float) == chosen], chosen


def _nearest_sizes(table: pd.DataFrame, column: str, target: float) -> tuple[pd.DataFrame, float, float]:
    """The rows of the sizes nearest `target` in log scale, taking further sizes (nearest first)
    until every Option there has at least MIN_RUNS runs (or the sizes run out): one size of a
    corpus may hold a handful of tasks, too few for an interval. Returns the rows and the size
    range taken."""
    import pandas as pd

    order = _by_log_distance(table, column, target)
    sizes = table[column].astype(float)
    runs = table["runs"] if "runs" in table.columns else pd.Series(1, index=table.index)
    taken: list[float] = []
    for value in order:
        taken.append(float(value))
        chosen = sizes.isin(taken)
        if runs[chosen].groupby(table.loc[chosen, "option"]).sum().min() >= MIN_RUNS:
            break
    return table[sizes.isin(taken)], min(taken), max(taken)


def _budget_target(budget: Any, column: str) -> float:
    total = as_budget(budget)
    if column == BUDGET_COLUMNS[1]:
        return float(total.rho) if isinstance(total, RhoZCDPBudget) else float(pure_epsilon_within(total)) ** 2 / 2
    return float(pure_epsilon_within(total))


def _rows_near(trained: Any, budget: Any, size_bound: int | None,
               segment: Hashable) -> tuple[pd.DataFrame, list[str]]:
    """The experience rows of the kept mode near `budget` and `size_bound`, and what was matched."""
    family, table = trained.family, trained.experience
    said: list[str] = []
    column = family.segment_column
    if column is not None and column in table.columns:
        if segment is None and len(trained.models) == 1:
            segment = next(iter(trained.models))
        if segment is not None:
            table = table[table[column] == segment]
        else:
            said.append(f"every {column} pooled")
    modes = dict(trained.modes)
    mode = modes.get(segment, next(iter(modes.values()))) if modes else None
    if mode is not None and "mode" in table.columns and (table["mode"] == mode).any():
        table = table[table["mode"] == mode]
    budget_column = next((c for c in BUDGET_COLUMNS if c in table.columns), None)
    if budget_column is not None and len(table):
        table, nearest = _nearest(table, budget_column, _budget_target(budget, budget_column))
        said.append(f"{budget_column} {nearest:.4g} (the corpus's nearest to {_budget_target(budget, budget_column):.4g})")
    sizes = size_column(family, table)
    if size_bound is not None and sizes is not None and len(table):
        table, low, high = _nearest_sizes(table, sizes, float(size_bound))
        said.append(f"{sizes} in [{low:.4g}, {high:.4g}] (the sizes nearest the bound {size_bound} holding at least "
                    f"{MIN_RUNS} runs per Option)")
    elif size_bound is not None:
        said.append("the size bound not used (no sizes in this experience)")
    return table, said


def _runs_estimate(rows: pd.DataFrame, confidence: float) -> tuple[float, float, float, int, str]:
    """Mean, interval, run count and how the interval was made, from runs or a summary."""
    if "error" in rows.columns:
        errors = rows["error"].to_numpy(dtype=float)
        errors = errors[np.isfinite(errors)]
        tail = (1.0 - confidence) / 2.0
        return (float(errors.mean()), float(np.quantile(errors, tail)), float(np.quantile(errors, 1.0 - tail)),
                int(errors.size), "empirical quantiles of single runs")
    runs = rows["runs"].to_numpy(dtype=float)
    mean = float(np.average(rows["mean_error"], weights=runs))
    if all(f"q_low_{level:g}" in rows.columns for level in SUMMARY_LEVELS):
        low, high = _mixture_quantiles(rows, runs, (1.0 - confidence) / 2.0)
        return (mean, low, high, int(runs.sum()),
                f"the pooled runs' quantiles, from each summary group's quantiles at {SUMMARY_LEVELS} (interpolated)")
    spread = float(np.sqrt(np.average(rows["std_error"].fillna(0.0) ** 2, weights=runs)))
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    return (mean, max(0.0, mean - z * spread), mean + z * spread, int(runs.sum()),
            "mean +- z * std of the shipped summary (a normal approximation, not calibrated)")


def _mixture_quantiles(rows: pd.DataFrame, runs: np.ndarray, tail: float) -> tuple[float, float]:
    """The `tail` and 1 - `tail` quantiles of the pooled runs of several summary groups.

    A summary group (one budget, size and Option) keeps the quantiles of its runs' errors at
    SUMMARY_LEVELS; its distribution is taken as the piecewise-linear CDF through those points
    (from the 0.005 quantile, CDF 0, to the 0.995 one, CDF 1), and the pool as the mixture of the
    groups weighted by their runs. The quantile is found on the merged breakpoints, where the
    mixture's CDF is piecewise linear. (Taking the widest group's quantiles instead covers far
    more than the confidence when each group holds a few runs.)"""
    probabilities, columns = [], []
    for level in sorted(SUMMARY_LEVELS, reverse=True):  # low side, farthest tail first
        probabilities.append((1.0 - level) / 2.0)
        columns.append(f"q_low_{level:g}")
    for level in sorted(SUMMARY_LEVELS):
        probabilities.append((1.0 + level) / 2.0)
        columns.append(f"q_high_{level:g}")
    points = np.maximum.accumulate(rows[columns].to_numpy(dtype=float), axis=1)  # quantiles never decrease
    cdf_at = np.array(probabilities)
    cdf_at[0], cdf_at[-1] = 0.0, 1.0  # the outermost kept quantiles bound each group's runs
    weights = runs / runs.sum()
    grid = np.unique(points)
    mixture = sum(w * np.interp(grid, p, cdf_at, left=0.0, right=1.0) for w, p in zip(weights, points))
    return float(np.interp(tail, mixture, grid)), float(np.interp(1.0 - tail, mixture, grid))


def estimate_error(trained: Any, option_name: str | None, budget: Any, size_bound: int | None = None,
                   confidence: float = LEVEL, segment: Hashable = None, name: str = "") -> ErrorEstimate:
    """An Option's expected error at `budget` and a public size bound, from the experience table
    of a trained (or shipped) ChoiceMaker, with an interval (see the module docstring).

    Args:
        trained: A `engine.TrainedChoiceMaker` (trained now, cached or shipped).
        option_name: The Option; None: the one the ChoiceMaker would pick from public facts only
            (the lowest mean error at that budget and size).
        budget: The call's whole budget (a `Budget`, a `RhoZCDPBudget`, or a number: a pure epsilon).
        size_bound: A public bound on the input's size (rows, a histogram's scale), or None.
        confidence: The interval's confidence, in (0, 1).
        segment: The input's segment (None: the only one, or every segment pooled).
        name: The ChoiceMaker's name, for `source`.

    Raises:
        ValueError: A confidence outside (0, 1), an unknown Option, or no experience near it.
    """
    confidence = check_confidence(confidence)
    experience = getattr(trained, "experience", None)
    if experience is None or not len(experience):
        raise ValueError("this ChoiceMaker has no experience table to estimate from (train it on a corpus)")
    if option_name is not None and option_name not in trained.options:
        raise ValueError(f"unknown option {option_name!r}; the ChoiceMaker has {', '.join(trained.options)}")
    rows, said = _rows_near(trained, budget, size_bound, segment)
    if option_name is None:
        value_column = "error" if "error" in rows.columns else "mean_error"
        means = rows.groupby("option")[value_column].mean()
        if means.empty:
            raise ValueError("no experience near that budget")
        option_name = str(means.idxmin())
        picked = " (the lowest mean error there: what public facts alone would pick)"
    else:
        picked = ""
    rows = rows[rows["option"] == option_name]
    if not len(rows):
        raise ValueError(f"no experience of {option_name} near that budget")
    value, low, high, runs, how = _runs_estimate(rows, confidence)
    who = name or "the ChoiceMaker"
    source = (f"experience table of {who} ({getattr(trained, 'origin', 'trained')}): {option_name}{picked} at "
              + ", ".join(said) + f"; {runs} runs, interval from {how}: {LABEL}")
    return ErrorEstimate(trained.family.error_measure, value, low, high, confidence, source, option_name,
                         str(getattr(trained.family, "error_name", "") or ""))


def summary_quantiles(errors: pd.Series) -> pd.Series:
    """The quantile columns a shipped summary keeps per group (`pretrained.summarise_experience`)."""
    import pandas as pd

    out = {}
    for level in SUMMARY_LEVELS:
        tail = (1.0 - level) / 2.0
        out[f"q_low_{level:g}"] = float(errors.quantile(tail))
        out[f"q_high_{level:g}"] = float(errors.quantile(1.0 - tail))
    return pd.Series(out)


__all__ = ["ErrorEstimate", "LABEL", "check_confidence", "dispatch_estimate", "estimate_error",
           "selection_estimate", "size_column", "summary_quantiles"]
