"""Synthesis of metafeatures: searching expressions over a family's released statistics.

The thesis' future work: instead of hand-picking metafeatures, search a space of expressions
over the statistics a family already releases for those that most reduce the
leave-one-dataset-out (LODO) regret of the ChoiceMaker's choices, with the privacy cost of
measuring each counted in the regret. Family-agnostic: it reads an experience table
(`experience.experience_table`) and the family's metafeature objects, never a family's name.

The space (`candidates`). Base statistics are the metafeature columns of the experience
(`mf_<name>`), each with its privacy cost: free if the metafeature reads nothing private, else
the budget unit it needs (`measurement.budget_unit`: a metafeature on its own, or the one shared
release several metafeatures post-process, which is paid once whatever reads it). Derived
expressions are the bases themselves, log(max(x, 1e-6)), sqrt(max(x, 0)), x^2, products a*b,
log(max(a*b, 1e-6)), ratios a / max(b, 1e-6) (b never negative on the training rows) and
thresholds (1 if x > c else 0) with c a public quantile (25/50/75%) of x on the TRAINING rows.
An expression costs the union of its bases' units: it is post-processing of their releases
(no new access to the data), which is why the language runs such a metafeature free
(docs/language.md, "Metafeatures").

The cost in the regret (`cost_factor`). The experience measured all K noisy units with the share
s of each budget E (s/K each) and ran the Options with (1 - s)E. A selection reading u of the K
units would spend u*s/K and run its Option with (1 - u*s/K)E. The share s is the one each row
actually paid, 1 - option_epsilon / epsilon of its experience row, where the family raised it at
small budgets (`Family.metafeature_share_at`, the histograms' floor); the nominal share
otherwise.
  * "credit" families (errors scale as 1/epsilon, as `model.metafeatures_pay_off` assumes): its
    chosen errors are scaled by (1 - s) / (1 - u*s/K), so every release it reads is charged its
    share and a selection reading none runs at the whole budget;
  * "paired" families: a selection reading no noisy unit is scored on the experience's
    "public" rows (the Options ran with the whole budget); one reading any is scored on the
    "measured" rows, charged the whole share s (conservative when u < K).
Regrets (`choice_regrets`) are DPBench's: per configuration, the mean error of the chosen runs
(scaled as above) over the lowest mean error of any Option run with the WHOLE budget (the
public rows of a paired family; (1 - s) times the measured best of a credit one), or 1 plus
their difference for a family whose `regret_measure` is "difference" (the classifiers').

The search (`select_expressions`): greedy forward selection, at most `max_terms` expressions,
each step adding the candidate with the lowest inner-fold regret (folds of whole groups of the
training rows only) of a cheap scorer, a multi-output regression tree on capped regrets
(`model.REGRET_CAP`); it stops when no candidate improves by `min_gain`. Candidates that order
the rows identically to a simpler one are dropped first (tree models cannot tell monotone
transforms apart). `nested_evaluation` (synthesis_report.py) reports outer-LODO regrets: the
outer held-out groups only report, the inner ones select.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeRegressor

from jostle.choicemaker.experience import FEATURE_PREFIX
from jostle.choicemaker.measurement import budget_unit
from jostle.choicemaker.model import REGRET_CAP, group_folds, regrets

FLOOR = 1e-6  # what log and ratios clamp at: noisy releases may be 0 or negative
QUANTILES = (0.25, 0.5, 0.75)


# ---------------------------------------------------------------- statistics and expressions
@dataclass(frozen=True)
class Statistic:
    """A base statistic: a metafeature column of the experience and the release it reads.

    Attributes:
        name: The metafeature's name (its column is `mf_<name>`).
        unit: The noisy budget unit it reads ("" if it is free: public, or post-processing of
            public facts).
    """

    name: str
    unit: str = ""


def statistics_of(metafeatures: Iterable[Any]) -> list[Statistic]:
    """Base statistics of metafeature objects (anything with `name`, `cost`, maybe `release`
    and `requires`). A derived one (`requires`) reads the units of what it post-processes."""
    found: dict[str, Statistic] = {}
    for feature in metafeatures:
        requires = tuple(getattr(feature, "requires", ()) or ())
        if requires:
            units = sorted({found[r].unit for r in requires if r in found and found[r].unit})
            found[feature.name] = Statistic(feature.name, "+".join(units))
        else:
            found[feature.name] = Statistic(feature.name, budget_unit(feature) if feature.cost else "")
    return list(found.values())


@dataclass(frozen=True)
class Expression:
    """A candidate metafeature: an operation on one or two base statistics.

    Attributes:
        op: "x", "log", "sqrt", "square", "product", "log_product", "ratio" or "above".
        args: The base statistics' names.
        constant: The threshold of "above".
    """

    op: str
    args: tuple[str, ...]
    constant: float = 0.0

    def values(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        """The expression on arrays of released values (numpy, as the Jostle code computes it)."""
        a = np.asarray(columns[self.args[0]], dtype=float)
        b = np.asarray(columns[self.args[1]], dtype=float) if len(self.args) > 1 else None
        with np.errstate(all="ignore"):
            if self.op == "x":
                return a
            if self.op == "log":
                return np.log(np.maximum(a, FLOOR))
            if self.op == "sqrt":
                return np.sqrt(np.maximum(a, 0.0))
            if self.op == "square":
                return a * a
            if self.op == "product":
                return a * b
            if self.op == "log_product":
                return np.log(np.maximum(a * b, FLOOR))
            if self.op == "ratio":
                return a / np.maximum(b, FLOOR)
            if self.op == "above":
                return (a > self.constant).astype(float)
        raise ValueError(f"unknown operation {self.op!r}")

    def code(self, record: str = "F") -> str:
        """The expression in Jostle, over the released values `record.<name>`."""
        a = f"{record}.{self.args[0]}"
        b = f"{record}.{self.args[1]}" if len(self.args) > 1 else ""
        return {
            "x": a, "log": f"log(max({a}, {FLOOR:g}))", "sqrt": f"sqrt(max({a}, 0))", "square": f"{a} * {a}",
            "product": f"{a} * {b}", "log_product": f"log(max({a} * {b}, {FLOOR:g}))",
            "ratio": f"{a} / max({b}, {FLOOR:g})", "above": f"(1 if {a} > {number(self.constant)} else 0)",
        }[self.op]

    @property
    def name(self) -> str:
        """A Jostle identifier that says what it computes."""
        a = self.args[0]
        b = self.args[1] if len(self.args) > 1 else ""
        text = {"x": a, "log": f"log_{a}", "sqrt": f"sqrt_{a}", "square": f"{a}_squared",
                "product": f"{a}_times_{b}", "log_product": f"log_{a}_times_{b}", "ratio": f"{a}_per_{b}",
                "above": f"{a}_above_{number(self.constant)}"}[self.op]
        return re.sub(r"[^A-Za-z0-9_]", "_", text.replace("-", "minus_").replace(".", "_").replace("+", ""))

    @property
    def complexity(self) -> int:
        """Simpler first, when candidates tie: the base, then one-argument, then two-argument."""
        return {"x": 0, "log": 1, "sqrt": 1, "square": 1, "above": 2}.get(self.op, 3)

    def units(self, statistics: Mapping[str, Statistic]) -> frozenset[str]:
        """The noisy budget units it reads (each paid once, whatever else reads it)."""
        return frozenset(u for a in self.args for u in statistics[a].unit.split("+") if u)


def number(value: float) -> str:
    """A constant as short, exact-enough Jostle text (4 significant digits)."""
    return f"{value:.4g}"


def candidates(columns: Mapping[str, np.ndarray], statistics: Sequence[Statistic],
               ops: Sequence[str] = ("x", "log", "sqrt", "square", "product", "log_product", "ratio", "above"),
               quantiles: Sequence[float] = QUANTILES) -> list[Expression]:
    """Every expression of the space over the bases that vary on these (training) rows; the
    thresholds are public quantiles of those rows."""
    names = [s.name for s in statistics if s.name in columns and np.nanstd(np.asarray(columns[s.name], float)) > 0]
    out: list[Expression] = []
    for name in names:
        values = np.asarray(columns[name], dtype=float)
        for op in ("x", "log", "sqrt", "square"):
            if op in ops:
                out.append(Expression(op, (name,)))
        if "above" in ops:
            for c in sorted(set(float(q) for q in np.nanquantile(values, quantiles))):
                if values.min() < c < values.max() or (values > c).any() and (values <= c).any():
                    out.append(Expression("above", (name,), round_constant(c)))
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            for op in ("product", "log_product"):
                if op in ops:
                    out.append(Expression(op, (first, second)))
            if "ratio" in ops:
                for a, b in ((first, second), (second, first)):
                    if np.nanmin(np.asarray(columns[b], float)) >= 0:
                        out.append(Expression("ratio", (a, b)))
    return list(dict.fromkeys(out))


def round_constant(value: float) -> float:
    """A threshold rounded to 4 significant digits (what the generated code prints)."""
    return float(number(value))


def distinct_orders(expressions: Sequence[Expression], columns: Mapping[str, np.ndarray]) -> list[Expression]:
    """Drop an expression that orders the rows as a simpler one does (monotone transforms of
    one statistic: a tree cannot tell them apart), keeping the simplest."""
    kept, seen = [], set()
    for expression in sorted(expressions, key=lambda e: e.complexity):
        values = np.nan_to_num(expression.values(columns), nan=0.0, posinf=1e300, neginf=-1e300)
        key = pd.Series(values).rank(method="dense").to_numpy().tobytes()
        if key not in seen:
            seen.add(key)
            kept.append(expression)
    return kept


# ---------------------------------------------------------------- rows and regrets
@dataclass
class RowSet:
    """The experience of one mode in matrix form (one row per configuration and repetition).

    Attributes:
        columns: Base statistic -> released values per row.
        errors: (rows, options) each Option's error in that repetition.
        config: (rows,) configuration id (shared with the other mode's RowSet).
        groups: (rows,) LODO group.
        options: Option names.
        shares: (rows,) the metafeature share each row's experience paid (None: the nominal).
        regret_measure: The family's (`Family.regret_measure`, `model.regrets`).
    """

    columns: dict[str, np.ndarray]
    errors: np.ndarray
    config: np.ndarray
    groups: np.ndarray
    options: list[str]
    shares: np.ndarray | None = None
    regret_measure: str = "ratio"

    def rows(self, mask: np.ndarray) -> RowSet:
        return RowSet({k: v[mask] for k, v in self.columns.items()}, self.errors[mask], self.config[mask],
                      self.groups[mask], self.options, None if self.shares is None else self.shares[mask],
                      self.regret_measure)

    def matrix(self, expressions: Sequence[Expression]) -> np.ndarray:
        """The inputs of a meta-model reading `expressions` (a constant column if none)."""
        if not expressions:
            return np.zeros((len(self.errors), 1))
        values = [np.nan_to_num(e.values(self.columns), nan=0.0, posinf=1e12, neginf=-1e12) for e in expressions]
        return np.column_stack(values)

    def regret_targets(self) -> np.ndarray:
        """Per row, the regret of each Option's mean error on the configuration against the
        best's (`regret_measure`), capped."""
        mean = pd.DataFrame(self.errors).groupby(self.config).transform("mean").to_numpy()
        mean = np.maximum(mean, 1e-300)
        return np.minimum(regrets(mean, mean.min(axis=1, keepdims=True), self.regret_measure), REGRET_CAP)


@dataclass
class SynthesisData:
    """One segment's experience for synthesis.

    Attributes:
        measured: Rows whose noisy metafeatures were measured (the Options had (1 - s)E).
        public: Rows of the "public" mode (the Options had the whole E), for paired families.
        statistics: Base statistics by name.
        share: The nominal share s the measured rows spent on metafeatures (a row's own, where the
            family raised it, is `RowSet.shares`).
        rule: "credit" or "paired" (the family's `payoff_rule`).
        reference: Configuration id -> the lowest mean error of any Option at the whole budget.
    """

    measured: RowSet
    public: RowSet | None
    statistics: dict[str, Statistic]
    share: float
    rule: str
    reference: dict[int, float] = field(default_factory=dict)

    @property
    def units(self) -> frozenset[str]:
        return frozenset(u for s in self.statistics.values() for u in s.unit.split("+") if u)

    def selection_units(self, expressions: Sequence[Expression]) -> frozenset[str]:
        return frozenset().union(*(e.units(self.statistics) for e in expressions)) if expressions else frozenset()

    def cost_factor(self, expressions: Sequence[Expression], rows: RowSet | None = None) -> float | np.ndarray:
        """What the chosen errors of `rows` are multiplied by for the budget the selection's
        releases take (the module docstring): credit (1 - s) / (1 - u s / K) with each row's
        share s where `rows` has them (an array, one factor per row), the nominal share otherwise;
        paired 1."""
        if self.rule != "credit" or not self.units:
            return 1.0
        used = len(self.selection_units(expressions))
        share = self.share if rows is None or rows.shares is None else rows.shares
        return (1.0 - share) / (1.0 - used * share / len(self.units))

    def rows_for(self, expressions: Sequence[Expression]) -> RowSet:
        """The rows a selection is scored on: public rows of a paired family if it reads no noise."""
        if self.rule == "paired" and self.public is not None and not self.selection_units(expressions):
            return self.public
        return self.measured

    def groups_mask(self, rows: RowSet, groups: np.ndarray) -> np.ndarray:
        return np.isin(rows.groups, groups)


def synthesis_data(experience: pd.DataFrame, statistics: Sequence[Statistic], config_columns: Sequence[str],
                   share: float, rule: str = "credit", group_column: str | None = None,
                   options: Sequence[str] | None = None, regret_measure: str = "ratio") -> SynthesisData:
    """Pivot one segment's experience table into `SynthesisData`.

    Args:
        experience: Rows of `experience.experience_table` for one segment (modes "measured" and
            maybe "public").
        statistics: The base statistics (`statistics_of(metafeatures)`); those without a column
            are dropped.
        config_columns: The family's `config_columns` (its first names the task).
        share: The metafeature share the experience was measured with.
        rule: The family's `payoff_rule`.
        group_column: The LODO group column (default the second config column).
        options: Option names (default all in the table).
        regret_measure: The family's `regret_measure` ("ratio" or "difference").
    """
    options = list(options or sorted(experience["option"].unique()))
    group_column = group_column or config_columns[1]
    keys = list(config_columns) + ["rep"]
    config_ids: dict[tuple, int] = {}

    def rowset(mode: str) -> RowSet | None:
        subset = experience[experience["mode"] == mode] if "mode" in experience.columns else experience
        if subset.empty:
            return None
        wide = subset.pivot_table(index=keys, columns="option", values="error", aggfunc="first", observed=True)
        wide = wide.reindex(columns=options).dropna()
        present = [s.name for s in statistics if FEATURE_PREFIX + s.name in subset.columns]
        firsts = subset.groupby(keys, observed=True)[[FEATURE_PREFIX + n for n in present]].first()
        firsts = firsts.reindex(wide.index)
        index = wide.index.to_frame(index=False)
        config = np.array([config_ids.setdefault(tuple(row), len(config_ids))
                           for row in index[list(config_columns)].itertuples(index=False)])
        columns = {n: firsts[FEATURE_PREFIX + n].to_numpy(float) for n in present
                   if not firsts[FEATURE_PREFIX + n].isna().any()}
        return RowSet(columns, wide.to_numpy(float), config, index[group_column].astype(str).to_numpy(), options,
                      paid_shares(subset, keys, wide.index) if mode == "measured" else None, regret_measure)

    measured = rowset("measured")
    public = rowset("public") if rule == "paired" else None
    if measured is None:
        raise ValueError("the experience has no measured rows")
    named = {s.name: s for s in statistics if s.name in measured.columns}
    data = SynthesisData(measured, public, named, float(share), rule)
    reference_rows = public if public is not None else measured
    mean = pd.DataFrame(reference_rows.errors).groupby(reference_rows.config).mean()
    if public is not None or not data.units:
        scale = pd.Series(1.0, index=mean.index)
    elif measured.shares is not None:  # the whole budget: (1 - the share this configuration paid)
        scale = 1.0 - pd.Series(measured.shares).groupby(measured.config).first()
    else:
        scale = pd.Series(1.0 - float(share), index=mean.index)
    data.reference = {int(c): float(v) * float(scale[c]) for c, v in mean.min(axis=1).items()}
    return data


def paid_shares(subset: pd.DataFrame, keys: Sequence[str], index: pd.Index) -> np.ndarray | None:
    """Per row of `index`, the share of its budget its metafeatures paid: 1 - option_epsilon /
    epsilon of a pure-epsilon experience (None if the experience does not say)."""
    if not {"epsilon", "option_epsilon"} <= set(subset.columns):
        return None
    if "measure" in subset.columns and set(subset["measure"].astype(str)) - {"pure"}:
        return None
    firsts = subset.groupby(list(keys), observed=True)[["epsilon", "option_epsilon"]].first().reindex(index)
    epsilon, option_epsilon = firsts["epsilon"].to_numpy(float), firsts["option_epsilon"].to_numpy(float)
    if not (np.isfinite(epsilon).all() and np.isfinite(option_epsilon).all() and (epsilon > 0).all()):
        return None
    return np.clip(1.0 - option_epsilon / epsilon, 0.0, 1.0)


def choice_regrets(data: SynthesisData, rows: RowSet, chosen: np.ndarray, factor: float) -> pd.DataFrame:
    """DPBench's regret of choices (one row per configuration of `rows`): the mean error of the
    chosen runs times `factor` (one per row, or one for all) over the configuration's best at
    the whole budget."""
    chosen_error = rows.errors[np.arange(len(chosen)), chosen] * factor
    frame = pd.DataFrame({"config": rows.config, "group": rows.groups, "chosen": chosen_error})
    per_config = frame.groupby("config").agg(group=("group", "first"), chosen=("chosen", "mean"))
    best = np.array([data.reference.get(int(c), np.nan) for c in per_config.index])
    if rows.regret_measure == "ratio":
        best = np.maximum(best, 1e-300)
    return pd.DataFrame({"config": per_config.index, "group": per_config["group"].to_numpy(),
                         "regret": regrets(per_config["chosen"].to_numpy(), best, rows.regret_measure)})


# ---------------------------------------------------------------- the search
Scorer = Callable[[RowSet, RowSet, Sequence[Expression]], np.ndarray]


def tree_chooser(train: RowSet, test: RowSet, expressions: Sequence[Expression],
                 min_leaf: int | None = None) -> np.ndarray:
    """The search's cheap scorer: a multi-output regression tree on capped regrets (the Bayes
    decision of cost-sensitive classification, as `model.forest_regret`), its choices on `test`."""
    leaf = min_leaf or max(3, len(train.errors) // 40)
    tree = DecisionTreeRegressor(min_samples_leaf=leaf, max_depth=5, random_state=0)
    tree.fit(train.matrix(expressions), train.regret_targets())
    return np.argmin(tree.predict(test.matrix(expressions)).reshape(len(test.errors), -1), axis=1)


def inner_regret(data: SynthesisData, groups: np.ndarray, expressions: Sequence[Expression],
                 chooser: Scorer = tree_chooser, folds: int | None = 4) -> float:
    """Mean regret of a selection over inner folds of whole groups among `groups` (training
    groups only), with its cost counted."""
    rows = data.rows_for(expressions)
    rows = rows.rows(np.isin(rows.groups, groups))
    frames = []
    for held_out in group_folds(rows.groups, folds):
        if held_out.all() or not held_out.any():
            continue
        test = rows.rows(held_out)
        frames.append(choice_regrets(data, test, chooser(rows.rows(~held_out), test, expressions),
                                     data.cost_factor(expressions, test)))
    return float(pd.concat(frames)["regret"].mean()) if frames else float("nan")


@dataclass(frozen=True)
class Selection:
    """The result of a search: the expressions chosen, in order, and the inner regrets.

    Attributes:
        expressions: What was added, in order.
        path: The inner-fold regret after each step (the first: none chosen).
        units: The noisy budget units the selection reads.
    """

    expressions: tuple[Expression, ...]
    path: tuple[float, ...]
    units: frozenset[str]


def select_expressions(data: SynthesisData, groups: np.ndarray | None = None, max_terms: int = 3,
                       chooser: Scorer = tree_chooser, folds: int | None = 4, min_gain: float = 0.002,
                       start: Sequence[Expression] = ()) -> Selection:
    """Greedy forward selection of expressions by inner-fold regret on the `groups` (default
    all) of `data`, with each selection's cost counted (the module docstring)."""
    groups = np.unique(data.measured.groups) if groups is None else np.asarray(groups)
    mask = np.isin(data.measured.groups, groups)
    columns = {k: v[mask] for k, v in data.measured.columns.items()}
    pool = distinct_orders(candidates(columns, list(data.statistics.values())), columns)
    chosen = list(start)
    path = [inner_regret(data, groups, chosen, chooser, folds)]
    while len(chosen) < max_terms:
        scored = [(inner_regret(data, groups, [*chosen, c], chooser, folds), c.complexity, i)
                  for i, c in enumerate(pool) if c not in chosen]
        if not scored:
            break
        score, _, index = min(scored)
        if not score < path[-1] - min_gain:
            break
        chosen.append(pool[index])
        path.append(score)
    return Selection(tuple(chosen), tuple(path), data.selection_units(chosen))


def with_expressions(data: SynthesisData, expressions: Sequence[Expression]) -> SynthesisData:
    """`data` whose statistics include the derived columns (a later search may build on them)."""
    def extend(rows: RowSet | None) -> RowSet | None:
        if rows is None:
            return None
        extra = {e.name: e.values(rows.columns) for e in expressions if all(a in rows.columns for a in e.args)}
        return replace(rows, columns={**rows.columns, **extra})

    statistics = dict(data.statistics)
    for e in expressions:
        statistics[e.name] = Statistic(e.name, "+".join(sorted(e.units(data.statistics))))
    return replace(data, measured=extend(data.measured), public=extend(data.public), statistics=statistics)


__all__ = ["Statistic", "statistics_of", "Expression", "candidates", "distinct_orders", "RowSet", "SynthesisData",
           "synthesis_data", "choice_regrets", "tree_chooser", "inner_regret", "Selection", "select_expressions",
           "with_expressions", "FLOOR"]
