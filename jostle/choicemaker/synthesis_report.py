"""Nested evaluation of synthesised metafeatures and predict rules, and the winners as Jostle code.

`nested_evaluation` reports outer leave-one-dataset-out regrets (outer folds of whole groups;
`outer_folds=None` holds out one group at a time). In each outer fold, everything that selects
(the synthesis search, the meta-model kind, whether measuring pays) sees only the training
groups, through inner folds of them; the held-out groups only report. Four choosers, each
charged the budget its releases take (`synthesis.SynthesisData.cost_factor` / `rows_for`):
  * "best_fixed": the Option with the lowest training regret, measuring nothing (whole budget);
  * "current": the given metafeatures (and products), meta-model kind selected as `engine.train`
    does (`model.select_model_kind` on inner folds), kept only if it beats measuring nothing on
    the inner folds (the engine's pay-off decision, judged here by the same cost-counted regret);
  * "synthesised": the expressions `synthesis.select_expressions` finds, then the same;
  * "augmented": the current metafeatures plus up to two expressions the search adds to them;
  * "predict_rules": the per-Option rules of `synthesis_rules`, chosen by the same search.
`transfer_evaluation` selects and fits on one corpus and reports on another (the shipped
metafeatures are chosen on the bundled corpus and judged on DPBench's shapes).
`summary` gives each chooser's mean regret with a 95% interval (a t interval over the held-out
configurations' regrets, and the paired difference to "current").
`winners_code` writes a final search on every group as Jostle a programmer can paste: `def`
metafeatures over the released values (free: post-processing), the ChoiceMaker that reads
them, and `option ...: predict(F):` rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from jostle.choicemaker.model import MODEL_KINDS, TrainingMatrix, group_folds, make_model, select_model_kind
from jostle.choicemaker.synthesis import (Expression, RowSet, Selection, SynthesisData, choice_regrets, inner_regret,
                                          select_expressions)
from jostle.choicemaker.synthesis_rules import PredictRules, fit_rules, option_code, rules_chooser

CHOOSERS = ("best_fixed", "current", "synthesised", "augmented", "predict_rules")


def training_matrix_of(rows: RowSet, expressions: Sequence[Expression]) -> TrainingMatrix:
    """A `model.TrainingMatrix` whose inputs are the expressions (for the engine's meta-models)."""
    mean = pd.DataFrame(rows.errors).groupby(rows.config).transform("mean").to_numpy()
    mean = np.maximum(mean, 1e-300)
    return TrainingMatrix(rows.matrix(expressions), rows.errors, np.log(mean), rows.regret_targets(), rows.config,
                          rows.groups, list(rows.options), [e.name for e in expressions],
                          regret_measure=rows.regret_measure)


def engine_chooser(model_kinds: Sequence[str], folds: int | None) -> Any:
    """A `synthesis.Scorer` that selects the meta-model kind on inner folds of `train`, as
    `engine.train` does, then chooses on `test` with it refitted on all of `train`."""
    def choose(train: RowSet, test: RowSet, expressions: Sequence[Expression]) -> np.ndarray:
        matrix = training_matrix_of(train, expressions)
        kinds = tuple(model_kinds) if expressions else ("best_fixed",)
        kind = kinds[0] if len(kinds) == 1 or len(np.unique(train.groups)) < 2 else \
            select_model_kind(matrix, kinds, folds=folds)[0]
        return make_model(kind).fit(matrix).choose(test.matrix(expressions))
    return choose


def pays(data: SynthesisData, groups: np.ndarray, expressions: Sequence[Expression], chooser: Any,
         folds: int | None) -> bool:
    """Whether reading `expressions` beats measuring nothing on inner folds (costs counted)."""
    if not expressions:
        return False
    return inner_regret(data, groups, expressions, chooser, folds) < inner_regret(data, groups, [], chooser, folds)


def held_out_regrets(data: SynthesisData, train_groups: np.ndarray, test_groups: np.ndarray,
                     expressions: Sequence[Expression], chooser: Any) -> pd.DataFrame:
    """Regrets on the held-out groups of a chooser trained on the training groups."""
    rows = data.rows_for(expressions)
    train = rows.rows(np.isin(rows.groups, train_groups))
    test = rows.rows(np.isin(rows.groups, test_groups))
    return choice_regrets(data, test, chooser(train, test, expressions), data.cost_factor(expressions, test))


@dataclass
class Evaluation:
    """Outer held-out regrets per chooser, and what each outer fold selected.

    Attributes:
        regrets: One row per (chooser, held-out configuration): chooser, config, group, regret.
        folds: Per outer fold, the held-out groups and the selections (expression names).
    """

    regrets: pd.DataFrame
    folds: list[dict[str, Any]]

    def summary(self) -> dict[str, dict[str, float]]:
        """Mean regret and 95% interval per chooser; paired difference to "current"."""
        out: dict[str, dict[str, float]] = {}
        wide = self.regrets.pivot_table(index="config", columns="chooser", values="regret")
        for name in wide.columns:
            values = wide[name].dropna().to_numpy()
            out[name] = {"avg_regret": float(values.mean()), "ci95": interval(values),
                         "configurations": int(len(values))}
            if "current" in wide.columns and name != "current":
                out[name]["minus_current"] = float((wide[name] - wide["current"]).mean())
                out[name]["minus_current_ci95"] = interval((wide[name] - wide["current"]).dropna().to_numpy())
        return out


def interval(values: np.ndarray) -> float:
    """Half-width of a 95% t interval of the mean (normal quantile above 30 values)."""
    n = len(values)
    if n < 2:
        return float("nan")
    from scipy import stats

    return float(stats.t.ppf(0.975, n - 1) * values.std(ddof=1) / np.sqrt(n))


def nested_evaluation(data: SynthesisData, current: Sequence[Expression], outer_folds: int | None = None,
                      inner_folds: int | None = 4, max_terms: int = 3,
                      model_kinds: Sequence[str] = MODEL_KINDS, rules: bool = True) -> Evaluation:
    """Outer-fold regrets of the four choosers (module docstring)."""
    groups = data.measured.groups
    engine = engine_chooser(model_kinds, inner_folds)
    frames, folds = [], []
    for held_out in group_folds(groups, outer_folds):
        test_groups = np.unique(groups[held_out])
        train_groups = np.unique(groups[~held_out])
        fold: dict[str, Any] = {"held_out": test_groups.tolist()}
        found = select_expressions(data, train_groups, max_terms, folds=inner_folds)
        augmented = select_expressions(data, train_groups, len(current) + 2, folds=inner_folds, start=current)
        picks = {"best_fixed": [], "current": list(current), "synthesised": list(found.expressions),
                 "augmented": list(augmented.expressions)}
        for name in ("current", "synthesised", "augmented"):
            if not pays(data, train_groups, picks[name], engine, inner_folds):
                picks[name] = []
        for name, expressions in picks.items():
            fold[name] = [e.name for e in expressions]
            frames.append(held_out_regrets(data, train_groups, test_groups, expressions, engine).assign(chooser=name))
        if rules:
            rule_selection = select_expressions(data, train_groups, max_terms, chooser=rules_chooser,
                                                folds=inner_folds)
            fold["predict_rules"] = [e.name for e in rule_selection.expressions]
            frames.append(held_out_regrets(data, train_groups, test_groups, rule_selection.expressions,
                                           rules_chooser).assign(chooser="predict_rules"))
        folds.append(fold)
    return Evaluation(pd.concat(frames, ignore_index=True), folds)


def transfer_evaluation(train: SynthesisData, test: SynthesisData, current: Sequence[Expression],
                        inner_folds: int | None = 4, max_terms: int = 3,
                        model_kinds: Sequence[str] = MODEL_KINDS) -> Evaluation:
    """Regrets on `test` (another corpus: nothing of it selects) of the four choosers, everything
    selected and fitted on `train` as in `nested_evaluation`."""
    engine = engine_chooser(model_kinds, inner_folds)
    groups = np.unique(train.measured.groups)
    found = select_expressions(train, groups, max_terms, folds=inner_folds)
    augmented = select_expressions(train, groups, len(current) + 2, folds=inner_folds, start=current)
    rule_selection = select_expressions(train, groups, max_terms, chooser=rules_chooser, folds=inner_folds)
    picks = {"best_fixed": [], "current": list(current), "synthesised": list(found.expressions),
             "augmented": list(augmented.expressions)}
    for name in ("current", "synthesised", "augmented"):
        if not pays(train, groups, picks[name], engine, inner_folds):
            picks[name] = []
    frames, fold = [], {"held_out": "the test corpus"}
    for name, expressions, chooser in [*((n, e, engine) for n, e in picks.items()),
                                       ("predict_rules", list(rule_selection.expressions), rules_chooser)]:
        rows = test.rows_for(expressions)
        chosen = chooser(train.rows_for(expressions), rows, expressions)
        frames.append(choice_regrets(test, rows, chosen, test.cost_factor(expressions, rows)).assign(chooser=name))
        fold[name] = [e.name for e in expressions]
    return Evaluation(pd.concat(frames, ignore_index=True), [fold])


# ---------------------------------------------------------------- the winners as code
@dataclass(frozen=True)
class Winners:
    """The final search on every group: the expressions, the rules, and their Jostle code."""

    metafeatures: Selection
    rules: PredictRules
    rule_selection: Selection
    definitions: str  # the `def`s of every derived expression of both
    choicemaker: str  # the ChoiceMaker reading the synthesised metafeatures (trained on the corpus)
    rules_code: str  # the options with predict(F) rules and the ChoiceMaker trained on none

    @property
    def code(self) -> str:
        return "\n".join([self.definitions, self.choicemaker, self.rules_code])


def metafeature_code(expressions: Sequence[Expression], record: str = "F") -> str:
    """`def name(F): return <expression>` for each derived expression (a base is used as it is)."""
    blocks = [f"def {e.name}({record}):\n    return {e.code(record)}\n" for e in expressions if e.op != "x"]
    return "\n".join(blocks)


def informed_by(expressions: Sequence[Expression], statistics: Sequence[str] = ()) -> list[str]:
    """The `informed by` list: the bases each expression reads (before it), then the derived ones."""
    bases = list(dict.fromkeys([*statistics, *(a for e in expressions for a in e.args)]))
    return bases + [e.name for e in expressions if e.op != "x" and e.name not in bases]


def choicemaker_code(name: str, options: Sequence[str], features: Sequence[str], corpus: str, share: float) -> str:
    """`choicemaker NAME among {...} informed by {...} trained on CORPUS spending s on metafeatures`."""
    spending = f" spending {share:g} on metafeatures" if share else ""
    return (f"choicemaker {name} among {{{', '.join(options)}}} \\\n"
            f"    informed by {{{', '.join(features)}}} \\\n"
            f"    trained on {corpus}{spending}\n")


def winners_code(data: SynthesisData, params: Sequence[str], corpus: str, name: str = "synthesised",
                 max_terms: int = 3, inner_folds: int | None = 4, share: float | None = None,
                 start: Sequence[Expression] = ()) -> Winners:
    """Search on every group and write the winners as Jostle (see the module docstring).

    Args:
        data: The segment's experience.
        params: The Options' call parameters (the family's, e.g. the data and its queries).
        corpus: The Jostle text of the training corpus (e.g. `histogram_corpus(1)`).
        name: The ChoiceMaker's name in the code.
        share: The metafeature share to write (default: the share the selection's releases
            took in the experience, u * s / K).
        start: Expressions the metafeature search starts from (the current ones, to augment
            them with up to `max_terms` more).
    """
    found = select_expressions(data, None, len(start) + max_terms, folds=inner_folds, start=start)
    rule_selection = select_expressions(data, None, max_terms, chooser=rules_chooser, folds=inner_folds)
    rules = fit_rules(data.rows_for(rule_selection.expressions), rule_selection.expressions)
    options = list(data.measured.options)
    units = len(data.units) or 1
    spend = share if share is not None else data.share * len(found.units) / units
    rule_spend = share if share is not None else data.share * len(rule_selection.units) / units
    derived = list(dict.fromkeys([*found.expressions, *rule_selection.expressions]))
    definitions = "# Synthesised metafeatures: post-processing of released values (free).\n" + \
        (metafeature_code(derived) or "# (the searches kept no derived expression)\n")
    maker = choicemaker_code(name, options, informed_by(found.expressions) or first_public(data), corpus,
                             spend if found.units else 0)
    rule_parts = ["# Synthesised predict rules: each Option's predicted error (a ChoiceMaker trained on none",
                  "# chooses the lowest).\n"]
    rule_parts += [option_code(rules, option, params) for option in options]
    # the first built-in Option has no prior, so it is never chosen: it names the Options' task
    rule_parts.append(choicemaker_code(f"{name}_rules", [options[0], *(f"{o}Rule" for o in options)],
                                       informed_by(rule_selection.expressions) or first_public(data), "none",
                                       rule_spend if rule_selection.units else 0))
    return Winners(found, rules, rule_selection, definitions, maker, "\n".join(rule_parts))


def first_public(data: SynthesisData) -> list[str]:
    """A free statistic to list when a selection reads none (a ChoiceMaker lists at least one)."""
    free = [s.name for s in data.statistics.values() if not s.unit]
    return free[:1] or list(data.statistics)[:1]


__all__ = ["CHOOSERS", "nested_evaluation", "transfer_evaluation", "Evaluation", "engine_chooser", "training_matrix_of", "Winners",
           "winners_code", "metafeature_code", "choicemaker_code", "informed_by", "interval"]
