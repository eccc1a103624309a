"""Meta-models of the ChoiceMaker: from metafeatures to the Option with the lowest error.

The experience table (long: one row per run) is pivoted to one row per (configuration,
repetition) with the metafeatures measured in that repetition and every Option's error.
Targets are per configuration (averaged over repetitions, which removes most of the noise of
single runs), while the inputs stay the noisy per-repetition metafeatures, as at run time:
  * log_error[o] = log(mean error of o on the configuration);
  * regret[o]    = mean error of o / the lowest mean error of any Option (>= 1), capped at
                   REGRET_CAP (an Option that bad is never worth choosing, and the cap stops
                   it from dominating a squared loss): the "ratio" regret, DPComp's, for errors
                   with no natural scale (a histogram's L2 error);
                   or 1 + (mean error of o - the lowest mean error), the "difference" regret, for
                   errors bounded in [0, 1] whose differences are what a user loses (1 - accuracy,
                   1 - AUC: `Family.regret_measure`). A ratio makes a table every Option almost
                   solves (errors 0.005 and 0.015: regret 3) weigh more than a hard one where
                   the choice costs ten accuracy points (errors 0.25 and 0.35: regret 1.4); the
                   difference scores them 1.01 and 1.1, as a user counts them.

Meta-model kinds (`MODEL_KINDS`, the default candidates, and `EXTENDED_MODEL_KINDS`; "kind",
so as not to be confused with a learner family), each giving per-Option scores where lower is better:
  * best_fixed       - the Option with the lowest mean training regret, whatever the input;
  * forest_regret    - a multi-output random forest on regrets. Choosing the argmin of the
                       leaf-average regret vector is the Bayes decision of cost-sensitive
                       classification with regret as the cost (regret-aware classification);
  * forest_log_error - a multi-output random forest on log errors (per-Option regression);
  * extra_trees_regret - extremely randomised trees on regrets (smoother decision regions);
  * knn_regret       - k nearest neighbours (quantile-scaled inputs) averaging regrets;
  * smooth_forest_regret - forest_regret with leaves of at least 10 rows: the metafeatures are
                       noisy, so coarser leaves average each decision over more of the noise;
  * blend_regret     - the mean of forest_regret's and extra_trees_regret's predicted regrets
                       (two regret-aware models whose errors are partly independent);
  * budget_regret    - a regret forest that reads the budget only: epsilon and the family's
                       log10(size x epsilon) products (`meta_input_products`) when the mode
                       measures the size, with leaves of at least 5% of the rows. A corpus group
                       is one schema repeated over many rows (a tree task: 9 budgets x 4 splits),
                       so the other kinds' 3-row leaves can learn a group's schema (attributes,
                       classes, domain) rather than a rule that carries to a new table; this kind
                       cannot. On the 14-Option tree corpus (121 groups, public mode,
                       leave-one-group-out; benchmarks/choicemaker_trees_kinds.py) its regret is
                       1.101 against forest_regret's 1.109 and best_fixed's 1.135 (1.050 against
                       1.065 and 1.062 on the 33 real tables); its per-group error is clearly
                       below best_fixed's but not clearly below forest_regret's (issue 27).
`select_model_kind` scores every kind by leave-one-dataset-out (LODO): for each group of
shapes, fit on the others and choose on its rows; the score is DPBench's average regret of
the choices (per configuration: mean error of the chosen runs / lowest mean error, or 1 + their
difference for a "difference" family). The kind with the lowest LODO regret is refitted on all
the data. (The kinds' figures above are ratio regrets, measured before the tree family moved to
differences.)
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor
from sklearn.neighbors import KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import QuantileTransformer

from jostle.choicemaker.experience import FEATURE_PREFIX

REGRET_CAP = 10.0


@dataclass
class TrainingMatrix:
    """The experience of one dimensionality in matrix form.

    Attributes:
        X: (rows, features) metafeatures of each (configuration, repetition).
        errors: (rows, options) the error of each Option in that repetition.
        log_error: (rows, options) log of the configuration's mean error per Option.
        regret: (rows, options) configuration-level regret per Option, capped.
        config: (rows,) configuration index; groups: (rows,) LODO group of each row.
        options: Option names (columns); features: metafeature names.
        products: The pairs of metafeatures whose log product is an input (`input_matrix`).
    """

    X: np.ndarray
    errors: np.ndarray
    log_error: np.ndarray
    regret: np.ndarray
    config: np.ndarray
    groups: np.ndarray
    options: list[str]
    features: list[str]
    products: tuple[tuple[str, str], ...] = ()
    regret_measure: str = "ratio"

    def rows(self, mask: np.ndarray) -> "TrainingMatrix":
        return TrainingMatrix(self.X[mask], self.errors[mask], self.log_error[mask],
                              self.regret[mask], self.config[mask], self.groups[mask],
                              self.options, self.features, self.products, self.regret_measure)


REGRET_MEASURES = ("ratio", "difference")


def regret_measure_problem(payoff_rule: str, regret_measure: str) -> str | None:
    """Why a family's regret measure cannot be trained with its payoff rule, or None.

    The "credit" rule credits best_fixed's regret by (1 - share) (`metafeatures_pay_off`): a
    ratio's arithmetic, meaningless on 1 + a difference."""
    if regret_measure not in REGRET_MEASURES:
        return f"unknown regret measure {regret_measure!r} (one of {', '.join(REGRET_MEASURES)})"
    if payoff_rule == "credit" and regret_measure != "ratio":
        return ("the 'credit' payoff rule needs regret_measure 'ratio': it credits a ratio regret "
                "(best_fixed's times 1 - share)")
    return None


def regrets(mean_error: np.ndarray, best: np.ndarray, regret_measure: str = "ratio") -> np.ndarray:
    """Regret of mean errors against the best per row (`best` broadcast against `mean_error`):
    error / best, or 1 + (error - best) for the "difference" measure (the module docstring).
    Either is 1 for the best Option and grows as an Option loses more."""
    if regret_measure == "ratio":
        return mean_error / best
    if regret_measure == "difference":
        return 1.0 + (mean_error - best)
    raise ValueError(f"unknown regret measure {regret_measure!r} (one of {', '.join(REGRET_MEASURES)})")


def input_matrix(columns: Mapping[str, Any], features: list[str],
                 products: tuple[tuple[str, str], ...] = ()) -> np.ndarray:
    """The meta-model's inputs: the metafeatures in order, plus log10(max(a, 1) * b) for each
    pair (a, b) of `products` (the family's `meta_input_products`) whose names are both among
    `features`. Computed from released values: post-processing."""
    values = [np.asarray(columns[f], dtype=float).reshape(-1) for f in features]
    for first, second in present_products(features, products):
        size = np.maximum(np.asarray(columns[first], dtype=float).reshape(-1), 1.0)
        values.append(np.log10(size * np.asarray(columns[second], dtype=float).reshape(-1)))
    return np.column_stack(values)


def present_products(features: list[str], products: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    """The pairs of `products` that are inputs: both names among `features` (in order; their
    columns follow the features' in `input_matrix`)."""
    return [(a, b) for a, b in products if a in features and b in features]


def training_matrix(experience: pd.DataFrame, features: list[str], options: list[str] | None,
                    config_columns: list[str], products: tuple[tuple[str, str], ...] = (),
                    group_column: str | None = None, regret_measure: str = "ratio") -> TrainingMatrix:
    """Pivot the experience of one segment and mode into a `TrainingMatrix`.

    `config_columns` identify a configuration (its first is the task's name; `group_column`,
    default its second, the leave-one-dataset-out group); errors are averaged over the
    configuration's repetitions. `products` are the family's `meta_input_products`;
    `regret_measure` the family's (`Family.regret_measure`: "ratio" or "difference").
    """
    options = options or sorted(experience["option"].unique())
    group_column = group_column or config_columns[1]
    columns = [FEATURE_PREFIX + f for f in features]
    missing = [c for c in columns if c not in experience.columns]
    if missing:
        raise ValueError(f"the experience table has no metafeature columns {missing}")
    keys = list(config_columns) + ["rep"]
    wide = experience.pivot_table(index=keys + columns, columns="option", values="error",
                                  aggfunc="first", observed=True)
    wide = wide.reindex(columns=options).dropna().reset_index()
    errors = wide[options].to_numpy(float)
    config = wide.groupby(list(config_columns), sort=False, observed=True).ngroup().to_numpy()
    mean_error = pd.DataFrame(errors).groupby(config).transform("mean").to_numpy()
    mean_error = np.maximum(mean_error, 1e-300)
    regret = np.minimum(regrets(mean_error, mean_error.min(axis=1, keepdims=True), regret_measure), REGRET_CAP)
    inputs = input_matrix({f: wide[FEATURE_PREFIX + f].to_numpy(float) for f in features}, features, products)
    return TrainingMatrix(inputs, errors, np.log(mean_error), regret,
                          config, wide[group_column].to_numpy(str), list(options), list(features),
                          tuple(tuple(p) for p in products), regret_measure)


class MetaModel(ABC):
    """Base of the meta-model kinds: `fit` on a TrainingMatrix, `scores(X)` (lower is better).

    `target` says what the scores are: "regret" or "log_error".
    """

    name = "base"
    target = "regret"

    @abstractmethod
    def fit(self, data: TrainingMatrix) -> "MetaModel":
        """Learn from the training matrix; returns self."""

    @abstractmethod
    def scores(self, X: np.ndarray) -> np.ndarray:
        """One score per (row, option); lower is better."""

    def choose(self, X: np.ndarray) -> np.ndarray:
        return np.argmin(self.scores(X), axis=1)

    def reads(self, features: list[str], products: tuple[tuple[str, str], ...]) -> list[str]:
        """The inputs its choice depends on (names; "a*b" for a product), for `explain`."""
        return list(features) + [f"{a}*{b}" for a, b in present_products(features, products)]


class BestFixed(MetaModel):
    name, target = "best_fixed", "regret"

    def fit(self, data: TrainingMatrix) -> "BestFixed":
        self.mean_regret_ = data.regret.mean(axis=0)
        return self

    def scores(self, X: np.ndarray) -> np.ndarray:
        return np.tile(self.mean_regret_, (len(X), 1))


class SklearnMultiOutput(MetaModel):
    """One scikit-learn regressor with a multi-output target."""

    def __init__(self, name: str, target: str, estimator: Any) -> None:
        self.name, self.target, self.estimator = name, target, estimator

    def fit(self, data: TrainingMatrix) -> "SklearnMultiOutput":
        target = data.regret if self.target == "regret" else data.log_error
        steps = getattr(self.estimator, "named_steps", {})
        if "quantiletransformer" in steps:
            self.estimator.set_params(quantiletransformer__n_quantiles=min(200, len(data.X)))
        if "kneighborsregressor" in steps:  # small training sets: at most as many neighbours
            self.estimator.set_params(kneighborsregressor__n_neighbors=min(25, len(data.X)))
        self.estimator.fit(data.X, target)
        return self

    def scores(self, X: np.ndarray) -> np.ndarray:
        return np.asarray(serial(self.estimator).predict(X)).reshape(len(X), -1)


def serial(estimator: Any) -> Any:
    """The estimator set to predict on one thread, and returned.

    A forest predicting on several threads adds its trees' predictions in the order the threads
    finish, so the last bits of a prediction vary from run to run: a ChoiceMaker's trace
    (`explain`, `trace`) would then print different predicted errors for the same released
    metafeatures, on the same data or on neighbours. One thread adds them in tree order.
    """
    jobs = {name: 1 for name, value in estimator.get_params().items()
            if name.endswith("n_jobs") and value not in (None, 1)}
    if jobs:
        estimator.set_params(**jobs)
    return estimator


class BlendRegret(MetaModel):
    """The mean predicted regret of several regret-aware meta-models (`blend_regret`)."""

    name, target = "blend_regret", "regret"

    def __init__(self, parts: tuple[str, ...] = ("forest_regret", "extra_trees_regret"), n_jobs: int = 1) -> None:
        self.parts = [make_model(part, n_jobs) for part in parts]

    def fit(self, data: TrainingMatrix) -> "BlendRegret":
        for part in self.parts:
            part.fit(data)
        return self

    def scores(self, X: np.ndarray) -> np.ndarray:
        return np.mean([part.scores(X) for part in self.parts], axis=0)


class BudgetRegret(MetaModel):
    """A regret forest on the budget columns only (`budget_regret`; see the module docstring).

    The columns are "epsilon" and every log10(size x epsilon) product the inputs hold (the
    product columns follow the features, in the order of `TrainingMatrix.products` whose two
    names are both features, as `input_matrix` appends them). Without an "epsilon" feature it
    is the best fixed Option. A forest's splits do not depend on a monotone rescaling of a
    column, so epsilon is used as it is.
    """

    name, target = "budget_regret", "regret"
    LEAF_SHARE = 0.05

    def __init__(self, n_jobs: int = 1) -> None:
        self.n_jobs = n_jobs

    @staticmethod
    def budget_columns(features: list[str], products: tuple[tuple[str, str], ...]) -> list[int]:
        """Indices of epsilon and of the size x epsilon products among the input columns."""
        if "epsilon" not in features:
            return []
        return [features.index("epsilon")] + [len(features) + k for k, pair in
                                              enumerate(present_products(features, products)) if "epsilon" in pair]

    def fit(self, data: TrainingMatrix) -> "BudgetRegret":
        self.columns_ = self.budget_columns(list(data.features), tuple(data.products))
        if not self.columns_:
            self.fallback_ = BestFixed().fit(data)
            return self
        self.fallback_ = None
        leaf = max(1, int(np.ceil(self.LEAF_SHARE * len(data.X))))
        self.forest_ = RandomForestRegressor(n_estimators=60, min_samples_leaf=leaf, max_features=1.0,
                                             random_state=0, n_jobs=self.n_jobs)
        self.forest_.fit(data.X[:, self.columns_], data.regret)
        return self

    def reads(self, features: list[str], products: tuple[tuple[str, str], ...]) -> list[str]:
        every = super().reads(features, products)
        return [every[i] for i in self.budget_columns(list(features), tuple(products))]

    def scores(self, X: np.ndarray) -> np.ndarray:
        if self.fallback_ is not None:
            return self.fallback_.scores(X)
        prediction = serial(self.forest_).predict(np.asarray(X, dtype=float)[:, self.columns_])
        return np.asarray(prediction).reshape(len(X), -1)


def make_model(name: str, n_jobs: int = 1) -> MetaModel:
    """A fresh, unfitted meta-model of the kind `name` (one of `MODEL_KINDS`)."""
    if name == "best_fixed":
        return BestFixed()
    if name == "forest_regret":
        return SklearnMultiOutput(name, "regret", RandomForestRegressor(
            n_estimators=60, min_samples_leaf=3, max_features=0.6, random_state=0, n_jobs=n_jobs))
    if name == "forest_log_error":
        return SklearnMultiOutput(name, "log_error", RandomForestRegressor(
            n_estimators=60, min_samples_leaf=3, max_features=0.6, random_state=0, n_jobs=n_jobs))
    if name == "extra_trees_regret":
        return SklearnMultiOutput(name, "regret", ExtraTreesRegressor(
            n_estimators=60, min_samples_leaf=3, max_features=0.8, random_state=0, n_jobs=n_jobs))
    if name == "smooth_forest_regret":
        return SklearnMultiOutput(name, "regret", RandomForestRegressor(
            n_estimators=60, min_samples_leaf=10, max_features=0.6, random_state=0, n_jobs=n_jobs))
    if name == "blend_regret":
        return BlendRegret(n_jobs=n_jobs)
    if name == "budget_regret":
        return BudgetRegret(n_jobs=n_jobs)
    if name == "knn_regret":
        return SklearnMultiOutput(name, "regret", make_pipeline(
            QuantileTransformer(n_quantiles=200), KNeighborsRegressor(n_neighbors=25)))
    raise KeyError(f"unknown meta-model kind {name!r}; known: {', '.join(EXTENDED_MODEL_KINDS)}")


MODEL_KINDS: tuple[str, ...] = ("best_fixed", "budget_regret", "forest_regret", "forest_log_error",
                                "extra_trees_regret", "knn_regret")
# The default candidates are the six above (every family's shipped training selects among
# them); callers opt into the two noise-robust kinds by passing these.
EXTENDED_MODEL_KINDS: tuple[str, ...] = MODEL_KINDS + ("smooth_forest_regret", "blend_regret")


def choice_regret(data: TrainingMatrix, chosen: np.ndarray) -> pd.DataFrame:
    """DPBench's regret of choices, one row per configuration of `data`.

    Per configuration: the mean error of the chosen Options' runs (the choice may differ
    between repetitions, since the metafeatures are noisy) over the lowest mean error of any
    single Option on that configuration; or 1 + their difference, when the matrix's
    `regret_measure` is "difference".
    """
    chosen_error = data.errors[np.arange(len(chosen)), chosen]
    frame = pd.DataFrame({"config": data.config, "group": data.groups, "chosen": chosen_error})
    frame[data.options] = data.errors
    per_config = frame.groupby("config").agg(
        group=("group", "first"), chosen=("chosen", "mean"),
        **{o: (o, "mean") for o in data.options})
    best = per_config[data.options].min(axis=1)
    return pd.DataFrame({"group": per_config["group"],
                         "regret": regrets(per_config["chosen"], best, data.regret_measure)})


def group_folds(groups: np.ndarray, folds: int | None = None) -> list[np.ndarray]:
    """Held-out masks: one per group (LODO), or `folds` folds of whole groups (sorted groups
    dealt round-robin, so the split is deterministic)."""
    names = np.unique(groups)
    if folds is None or folds >= len(names):
        return [groups == g for g in names]
    return [np.isin(groups, names[k::folds]) for k in range(folds)]


def lodo_regret(model_kind: str, data: TrainingMatrix, n_jobs: int = 1,
                folds: int | None = None) -> pd.DataFrame:
    """Leave-one-dataset-out regrets of the meta-model kind `model_kind` (one row per held-out
    configuration)."""
    frames = []
    for held_out in group_folds(data.groups, folds):
        model = make_model(model_kind, n_jobs).fit(data.rows(~held_out))
        test = data.rows(held_out)
        frames.append(choice_regret(test, model.choose(test.X)))
    return pd.concat(frames, ignore_index=True)


def select_model_kind(data: TrainingMatrix, model_kinds: tuple[str, ...] = MODEL_KINDS,
                      n_jobs: int = 1, folds: int | None = None) -> tuple[str, pd.DataFrame]:
    """The meta-model kind with the lowest LODO average regret, and the report of every kind.

    Args:
        data: The experience of one segment.
        model_kinds: Candidate kinds (`MODEL_KINDS`).
        n_jobs: Threads of the forests.
        folds: None for leave-one-dataset-out; k for k folds of whole groups.

    The report has one row per kind (column `model_kind`). With fewer than two groups no group
    can be held out: forest_regret is returned and the report's scores are NaN.
    """
    groups = np.unique(data.groups)
    rows = []
    for kind in model_kinds:
        if len(groups) < 2:
            rows.append({"model_kind": kind, "lodo_avg_regret": np.nan, "lodo_max_regret": np.nan,
                         "configurations": 0, "groups": len(groups)})
            continue
        regrets = lodo_regret(kind, data, n_jobs, folds)
        rows.append({"model_kind": kind, "lodo_avg_regret": float(regrets["regret"].mean()),
                     "lodo_max_regret": float(regrets["regret"].max()),
                     "configurations": int(len(regrets)), "groups": len(groups)})
    report = pd.DataFrame(rows)
    if len(groups) < 2:
        chosen = "forest_regret" if "forest_regret" in model_kinds else model_kinds[0]
    else:
        chosen = str(report.sort_values("lodo_avg_regret", kind="stable")["model_kind"].iloc[0])
    report["selected"] = report["model_kind"] == chosen
    return chosen, report


def metafeatures_pay_off(report: pd.DataFrame, mf_share: float) -> bool:
    """Whether measuring metafeatures is worth its share of the budget.

    The LODO regrets compare every meta-model kind at the Option budget (1 - mf_share) * epsilon
    (less where the family raises the share at small budgets: the engine then passes the largest
    share paid, `engine.credited_share`). A ChoiceMaker that measures nothing runs the best fixed
    Option with the whole epsilon; DPBench's algorithms are Laplace-based, so their errors scale
    about as 1/epsilon and that Option's regret is credited a factor (1 - mf_share). Metafeatures pay off unless the
    credited best_fixed regret is at most the selected kind's. (A decision on public
    training data, so it costs no privacy.)
    """
    scores = report.set_index("model_kind")["lodo_avg_regret"]
    if "best_fixed" not in scores or not np.isfinite(scores).all():
        return True
    selected = float(report.loc[report["selected"], "lodo_avg_regret"].iloc[0])
    return not scores["best_fixed"] * (1.0 - mf_share) <= selected


@dataclass
class FittedMetaModel:
    """A fitted meta-model plus a regressor of the best log error, to report predicted errors.

    Attributes:
        model_kind: The selected meta-model kind's name (`MODEL_KINDS`).
        model: The fitted meta-model.
        best_error: Regressor of log(lowest mean error) from the metafeatures (regret
            kinds turn predicted regrets into predicted errors with it).
        options: Option names, in score order.
        features: Metafeature names, in input order; empty when the model reads none (then
            the ChoiceMaker measures nothing and the best fixed Option gets all the budget).
        products: The pairs of metafeatures whose log product it reads (`input_matrix`).
        epsilon_column: The input column of the Option's epsilon, for a family whose errors
            scale about as 1 / epsilon (Laplace histograms), else None. A forest is piecewise
            constant in its inputs, so between the corpus' budgets it would predict the error of
            the nearest one (2 to 5 times off at epsilon 0.05 or 0.3 on a grid of 0.01, 0.1, 1).
            With the column, the best error is predicted at the two training budgets around the
            input's (its epsilon and the products reading it moved there) and interpolated
            linearly in log-log; outside them it follows 1 / epsilon from the nearest.
        epsilon_grid: The Option epsilons of the training rows (sorted, distinct).
        option_errors: Regressor of every Option's log mean error from the metafeatures (one
            output per Option, read with the same epsilon interpolation), or None (models
            pickled before it existed: the best-error regressor sets the level instead).

    How a regret kind's predicted errors are made (`predicted_errors`): the Options keep the
    ratios of their predicted regrets, so the order of the predictions is the choice's and the
    chosen Option's prediction is the lowest; the level is the chosen Option's OWN predicted
    error (`option_errors`), not the predicted best error of the corpus times its regret. On
    the bundled 2D histogram corpus (5 folds of whole shapes) this moved the chosen Option's
    held-out log(realised / predicted) from a median of -0.27 to -0.03 and its mean absolute
    value from 0.40 to 0.27 (1D: 0.38 to 0.37; the tree corpus 0.75 to 0.71, the rule-list
    corpus 0.59 to 0.50, with narrower intervals: median log-width 4.22 to 3.50 and 2.88 to
    2.25): an Option whose error hardly depends on the data (Identity) was mispredicted by the
    best error of shapes unlike the input's (issue 27). With the "difference" regret
    (`regret_measure`) the Options keep the differences of their predicted regrets instead.
    """

    model_kind: str
    model: MetaModel
    best_error: Any
    options: list[str]
    features: list[str]
    products: tuple[tuple[str, str], ...] = ()
    epsilon_column: int | None = None
    epsilon_grid: tuple[float, ...] = ()
    option_errors: Any = None
    regret_measure: str = "ratio"

    @classmethod
    def fit(cls, data: TrainingMatrix, model_kind: str, n_jobs: int = 1,
            use_metafeatures: bool = True, errors_scale_as_inverse_epsilon: bool = False) -> "FittedMetaModel":
        if not use_metafeatures:
            data = TrainingMatrix(np.zeros((len(data.X), 1)), data.errors, data.log_error,
                                  data.regret, data.config, data.groups, data.options, [],
                                  regret_measure=data.regret_measure)
            model_kind = "best_fixed"
        model = make_model(model_kind, n_jobs).fit(data)
        column = data.features.index("epsilon") if errors_scale_as_inverse_epsilon and "epsilon" in data.features \
            else None
        best = RandomForestRegressor(n_estimators=60, min_samples_leaf=3, random_state=0,
                                     n_jobs=n_jobs).fit(data.X, data.log_error.min(axis=1))
        # one output per Option: half the trees and coarser leaves than `best` keep the shipped
        # models small (as good on the corpus: the class docstring's figures are with these)
        own = RandomForestRegressor(n_estimators=30, min_samples_leaf=5, random_state=0,
                                    n_jobs=n_jobs).fit(data.X, data.log_error)
        grid = tuple(float(e) for e in np.unique(data.X[:, column])) if column is not None else ()
        return cls(model_kind, model, best, data.options, data.features, data.products, column, grid, own,
                   data.regret_measure)

    def _log_at(self, regressor: Any, X: np.ndarray, epsilon: float) -> np.ndarray:
        """A log-error regressor's prediction, as (rows, outputs), with every row moved to
        budget `epsilon` (its epsilon column, and each log product reading epsilon, shifted by
        the same factor)."""
        column = self.epsilon_column
        moved = np.array(X, dtype=float, copy=True)
        shift = np.log10(epsilon / X[:, column])
        moved[:, column] = epsilon
        for index, pair in enumerate(present_products(self.features, self.products)):
            if "epsilon" in pair:
                moved[:, len(self.features) + index] += shift
        return np.asarray(serial(regressor).predict(moved)).reshape(len(X), -1)

    def _log_predicted(self, regressor: Any, X: np.ndarray) -> np.ndarray:
        """A log-error regressor's prediction per row, (rows, outputs) (see `epsilon_column`)."""
        column, grid = getattr(self, "epsilon_column", None), getattr(self, "epsilon_grid", ())
        if column is None or not grid:  # also models pickled before the column existed
            return np.asarray(serial(regressor).predict(X)).reshape(len(X), -1)
        epsilon = np.maximum(X[:, column], 1e-300)
        values = np.asarray(grid)
        position = np.clip(np.searchsorted(values, epsilon), 0, len(values) - 1)
        on_grid = np.isclose(values[position], epsilon, rtol=1e-9, atol=0.0)
        out = np.empty((len(X), regressor.n_outputs_))
        if on_grid.any():
            out[on_grid] = np.asarray(serial(regressor).predict(X[on_grid])).reshape(int(on_grid.sum()), -1)
        below, above = ~on_grid & (epsilon < values[0]), ~on_grid & (epsilon > values[-1])
        for mask, nearest in ((below, values[0]), (above, values[-1])):  # 1 / epsilon from the nearest budget
            if mask.any():
                out[mask] = self._log_at(regressor, X[mask], nearest) + np.log(nearest / epsilon[mask])[:, None]
        inside = ~on_grid & ~below & ~above
        for at in np.unique(position[inside]):
            mask = inside & (position == at)
            low, high = values[at - 1], values[at]
            weight = ((np.log(epsilon[mask]) - np.log(low)) / (np.log(high) - np.log(low)))[:, None]
            out[mask] = (1 - weight) * self._log_at(regressor, X[mask], low) \
                + weight * self._log_at(regressor, X[mask], high)
        return out

    def _log_best(self, X: np.ndarray) -> np.ndarray:
        """log(predicted lowest error) per row (see `epsilon_column`)."""
        return self._log_predicted(self.best_error, X)[:, 0]

    def inputs(self, features: Mapping[str, float]) -> np.ndarray:
        """The one-row input matrix of released metafeature values (post-processing)."""
        if not self.features:
            return np.zeros((1, 1))
        missing = [f for f in self.features if f not in features]
        if missing:
            raise KeyError(f"missing metafeatures {missing}")
        return input_matrix({f: float(features[f]) for f in self.features}, self.features, self.products)

    def narrowed_inputs(self) -> list[str] | None:
        """The inputs its choice reads when they are fewer than it is given (for `explain`), else None."""
        if not self.features:
            return None
        reads = self.model.reads(self.features, self.products)
        return reads if reads != MetaModel.reads(self.model, self.features, self.products) else None

    def predicted_errors(self, X: np.ndarray) -> np.ndarray:
        """(rows, options) predicted scaled errors (see the class docstring)."""
        scores = self.model.scores(X)
        if self.model.target == "log_error":
            return np.exp(scores)
        own = getattr(self, "option_errors", None)
        rows = np.arange(len(X))
        chosen = np.argmin(scores, axis=1)  # the choice of a regret kind (`MetaModel.choose`)
        if own is None:  # pickled before `option_errors`: the corpus' best error sets the level
            base, base_score = np.exp(self._log_best(X)), np.ones(len(X))
        else:
            base, base_score = np.exp(self._log_predicted(own, X)[rows, chosen]), scores[rows, chosen]
        if getattr(self, "regret_measure", "ratio") == "difference":
            # predicted regrets are 1 + excess error: the Options keep their predicted
            # differences from the level (so the chosen one is still the lowest)
            return base[:, None] + (scores - base_score[:, None])
        return scores * (base / base_score)[:, None]

    def choose(self, X: np.ndarray) -> np.ndarray:
        """Index of the chosen Option for each row (the meta-model's own decision rule)."""
        return self.model.choose(X)


def lodo_chosen_errors(model_kind: str, data: TrainingMatrix, n_jobs: int = 1,
                       folds: int | None = None) -> pd.Series:
    """Mean error of the Options the meta-model kind `model_kind` chooses for held-out groups (leave-one-dataset-out),
    one value per group (the groups are the independent units of a comparison)."""
    chosen = np.empty(len(data.X))
    if len(np.unique(data.groups)) < 2:  # nothing to hold out: the in-sample oracle
        chosen[:] = data.errors.min(axis=1)
    else:
        for held_out in group_folds(data.groups, folds):
            model = make_model(model_kind, n_jobs).fit(data.rows(~held_out))
            picks = model.choose(data.X[held_out])
            chosen[held_out] = data.errors[held_out][np.arange(int(held_out.sum())), picks]
    return pd.Series(chosen).groupby(data.groups).mean()


def measuring_pays(measured: pd.Series, public: pd.Series, z: float = 2.0) -> bool:
    """Whether the measured mode's held-out errors beat the public mode's clearly: the mean of
    the per-group differences is below zero by more than z standard errors. Otherwise the
    cheaper public mode is kept (it spends nothing on metafeatures)."""
    difference = (measured - public).dropna()
    if len(difference) < 2:
        return bool(difference.mean() < 0) if len(difference) else False
    standard_error = float(difference.std(ddof=1) / np.sqrt(len(difference)))
    return float(difference.mean()) < -z * max(standard_error, 1e-12)
