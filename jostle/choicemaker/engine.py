"""Training a ChoiceMaker of any learner family: experience, meta-model selection, payoff.

`train(family, options, metafeatures, corpus, grid, mf_share, ...)` builds (or loads) the
experience table (`experience.experience_table`), then for each segment of the family (a
histogram dimensionality; one segment for most families) and each of the family's modes selects
a meta-model kind by leave-one-dataset-out validation (`model.select_model_kind`) and decides
whether measuring metafeatures pays for its share of the budget (`decide_measuring`):

  * payoff rule "credit" (errors that scale about as 1/epsilon, e.g. Laplace-based histogram
    algorithms): measuring pays unless the best fixed Option, credited the share it saves,
    does at least as well as the selected meta-model (`model.metafeatures_pay_off`); if not,
    that segment measures nothing and runs the best fixed Option with the whole budget;
  * payoff rule "paired" (errors with no such scaling, e.g. tree accuracies): the "public"
    mode (free metafeatures only, whole budget to the Option) is validated beside the
    "measured" one, and measuring is kept only if its held-out errors are clearly lower
    (`model.measuring_pays`).
Both decisions are made on public data only, so they cost no privacy. A family with the
`Family.private_score` hook also has its segments' kept design compared, on the same corpus at
the same total budget, with private selection (no metafeatures; `selection.simulate` and
`selection.decide`), kept where it pays (`TrainedChoiceMaker.selection`). Every segment's
predicted errors get 95% intervals from held-out residuals (`intervals.held_out_intervals`,
`TrainedChoiceMaker.intervals`; None for models trained before them). Fitted models are cached
next to the experience, keyed by the table's content hash, so re-running neither reruns the
Options nor refits.

The private run is `dispatch.dispatch`.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Hashable, Mapping, NamedTuple

import numpy as np
import pandas as pd

from jostle.choicemaker.experience import (FEATURE_PREFIX, RUN_STATS, default_cache_dir, experience_digest,
                                           experience_table, public_metafeatures)
from jostle.choicemaker import selection as private_selection
from jostle.choicemaker.budgets import as_budget
from jostle.choicemaker.family import Family, exact_share
from jostle.choicemaker.intervals import ErrorIntervals, held_out_intervals
from jostle.choicemaker.model import (MODEL_KINDS, FittedMetaModel, lodo_chosen_errors, measuring_pays,
                                      metafeatures_pay_off, regret_measure_problem, select_model_kind,
                                      training_matrix)

MODEL_VERSION = "4"


@dataclass(frozen=True)
class MeasuringDecision:
    """Whether measuring the noisy metafeatures paid on the public corpus, and by how much.

    Attributes:
        tried: The noisy metafeatures training measured.
        share: The share of the budget they would cost.
        used: Whether the ChoiceMaker measures them.
        score_name: What the two scores are (lower is better).
        with_metafeatures: The held-out score of choosing with them (at the option's budget).
        without: The held-out score of the alternative (`alternative` says what it is).
        alternative: The alternative in words.
        raised_to: The largest share the family raised it to at the corpus' budgets (0: never
            raised; `Family.metafeature_share_at`).
    """

    tried: tuple[str, ...]
    share: float
    used: bool
    score_name: str
    with_metafeatures: float
    without: float
    alternative: str
    raised_to: float = 0.0

    def sentence(self) -> str:
        """The decision in words, for `explain`."""
        names = ", ".join(self.tried)
        verdict = "paid" if self.used else "did not pay"
        share = f"{self.share:.0%}" + (f" (up to {self.raised_to:.0%} at small budgets)" if self.raised_to else "")
        return (f"measuring {names} with {share} of the budget {verdict} on the public corpus: "
                f"{self.score_name} {self.with_metafeatures:.3g} with them, {self.without:.3g} for "
                f"{self.alternative}")


@dataclass
class TrainedChoiceMaker:
    """A ChoiceMaker trained on public data.

    Attributes:
        family: The learner family (a `combined.CombinedFamily` for Options of several).
        options: Name -> Option.
        metafeatures: Every metafeature training measured (in input order).
        mf_share: Share of epsilon spent on metafeatures where measuring pays.
        models: Segment -> fitted meta-model (its `features` are what it reads; empty when the
            best fixed Option runs with the whole budget).
        modes: Segment -> "measured" or "public" (the mode whose model was kept).
        experience: The experience table.
        report: LODO scores of every meta-model kind per segment and mode (`selected` marks
            the fitted one).
        experience_from_cache / model_from_cache: Whether training reused the cache.
        origin: "shipped" (package data) or "trained" (now or from the user's cache).
        intervals: Segment -> held-out intervals of the predicted errors (None: trained before
            intervals existed, or too few groups).
        selection: Segment -> what training found about private selection (None: the family
            has no `private_score` hook, or a model trained before the selection mode).
    """

    family: Family
    options: dict[str, Any]
    metafeatures: list[Any]
    mf_share: float
    models: dict[Hashable, FittedMetaModel]
    modes: dict[Hashable, str]
    experience: pd.DataFrame = field(repr=False)
    report: pd.DataFrame = field(repr=False)
    experience_from_cache: bool = False
    model_from_cache: bool = False
    origin: str = "trained"  # "shipped" (package data), "trained" (now or from the user's cache)
    intervals: dict[Hashable, ErrorIntervals | None] | None = None
    selection: dict[Hashable, private_selection.SelectionDecision] | None = None

    @property
    def feature_names(self) -> list[str]:
        """The metafeatures read where there is one segment (else all of them)."""
        if len(self.models) == 1:
            return [m.name for m in self.metafeatures_for(next(iter(self.models)))]
        return [m.name for m in self.metafeatures]

    @property
    def model(self) -> FittedMetaModel:
        """The meta-model of a single-segment family."""
        return self.model_for(None)

    @property
    def mode(self) -> str:
        """The mode of a single-segment family ("measured" or "public")."""
        return self.modes[self._segment(None)]

    @property
    def model_report(self) -> pd.DataFrame:
        return self.report

    def _segment(self, segment: Hashable) -> Hashable:
        if segment is None and None not in self.models:
            if len(self.models) != 1:
                raise ValueError(f"trained for {self.segment_names()}: say which")
            return next(iter(self.models))
        if segment not in self.models:
            raise ValueError(f"this ChoiceMaker was not trained on {self.family.segment_label(segment)} inputs "
                             f"(trained: {self.segment_names()})")
        return segment

    def segment_names(self) -> str:
        return ", ".join(self.family.segment_label(s) or "all" for s in sorted(self.models, key=str))

    def model_for(self, segment: Hashable = None) -> FittedMetaModel:
        """The fitted meta-model of a segment (ValueError, before any charge, if untrained)."""
        return self.models[self._segment(segment)]

    def metafeatures_for(self, segment: Hashable = None) -> list[Any]:
        """The metafeatures to measure for an input of `segment` (none where measuring does not pay)."""
        names = set(self.model_for(segment).features)
        return [m for m in self.metafeatures if m.name in names]

    def metafeature_share(self, segment: Hashable = None) -> float:
        """The share of epsilon spent on metafeatures for an input of `segment`."""
        return self.mf_share if any(m.cost for m in self.metafeatures_for(segment)) else 0.0

    def measuring_decision(self, segment: Hashable = None) -> MeasuringDecision | None:
        """What training found about measuring the noisy metafeatures on inputs of `segment`
        (a public fact about the public corpus: showing it costs nothing); None if none were tried."""
        segment = self._segment(segment)
        noisy = tuple(m.name for m in self.metafeatures if m.cost)
        if not noisy:
            return None
        report = self.report
        column = self.family.segment_column
        if column is not None and column in report.columns:
            report = report[report[column] == segment]
        used = bool(self.models[segment].features) and any(
            m.cost for m in self.metafeatures if m.name in self.models[segment].features)
        if self.family.payoff_rule == "paired":
            errors = report.dropna(subset=["lodo_mean_error"]).set_index("mode")["lodo_mean_error"]
            if "measured" not in errors or "public" not in errors:
                return None
            return MeasuringDecision(noisy, self.mf_share, used, "held-out mean error", float(errors["measured"]),
                                     float(errors["public"]), "choosing without them (whole budget to the option)")
        scores = report.set_index("model_kind")["lodo_avg_regret"]
        chosen = report.loc[report["selected"], "lodo_avg_regret"]
        if "best_fixed" not in scores or chosen.empty or not np.isfinite(scores).all():
            return None
        best = self.models[segment].options[int(np.argmin(self.models[segment].model.scores(np.zeros((1, 1)))[0]))] \
            if not used else None
        experience = self.experience
        if column is not None and column in experience.columns:
            experience = experience[experience[column] == segment]
        credit = credited_share(self.family, experience, self.mf_share)
        return MeasuringDecision(noisy, self.mf_share, used, "held-out average regret", float(chosen.iloc[0]),
                                 float(scores["best_fixed"]) * (1.0 - credit),
                                 f"always running {best or 'the best single option'} with the whole budget "
                                 f"(its regret credited for the {credit:.0%} it saves)",
                                 credit if credit > self.mf_share else 0.0)

    def error_intervals(self, predictions: Mapping[str, float], segment: Hashable = None) -> dict[str, tuple[float, float]]:
        """95% intervals of predicted errors of `segment` (post-processing; {} when training kept none)."""
        found = (getattr(self, "intervals", None) or {}).get(self._segment(segment))
        return found.intervals(predictions) if found is not None else {}

    def selection_decision(self, segment: Hashable = None) -> private_selection.SelectionDecision | None:
        """What training found about private selection on `segment` (None if it was not tried)."""
        return (getattr(self, "selection", None) or {}).get(self._segment(segment))

    def selects_privately(self, segment: Hashable = None) -> bool:
        """Whether dispatch runs private selection on `segment` (a public decision of training)."""
        return private_selection.used_on(getattr(self, "selection", None), self._segment(segment)) is not None

    def predict(self, features: Mapping[str, float], segment: Hashable = None) -> dict[str, float]:
        """Predicted error of every Option for these (released) metafeature values."""
        model = self.model_for(segment)
        errors = model.predicted_errors(model.inputs(features))[0]
        return {name: float(e) for name, e in zip(model.options, errors)}

    def choose(self, features: Mapping[str, float], segment: Hashable = None) -> tuple[str, dict[str, float]]:
        """The Option the meta-model picks, and every Option's predicted error (post-processing)."""
        model = self.model_for(segment)
        index = int(model.choose(model.inputs(features))[0])
        return model.options[index], self.predict(features, segment)


def resolve(items: Any, registry: Mapping[str, Any], default: tuple[str, ...] | list[str]) -> list[Any]:
    """Objects from names of `registry` (case-insensitive) or objects; distinct names."""
    items = list(default) if items is None else items
    if isinstance(items, Mapping):
        items = list(items.values())
    lower = {name.lower(): value for name, value in registry.items()}
    out = []
    for item in items:
        if isinstance(item, str):
            if item.lower() not in lower:
                raise KeyError(f"unknown name {item!r}; known: {', '.join(registry)}")
            item = lower[item.lower()]
        out.append(item)
    if len({i.name for i in out}) != len(out):
        raise ValueError("names must be distinct")
    return out


def decide_measuring(family: Family, candidates: dict[str, tuple[Any, FittedMetaModel, pd.Series]],
                     mf_share: float) -> str:
    """Which mode to keep for a segment (see the module docstring): "measured" or "public"."""
    if family.payoff_rule == "paired":
        if "measured" in candidates and "public" in candidates and \
                measuring_pays(candidates["measured"][2], candidates["public"][2]):
            return "measured"
        return "public" if "public" in candidates else "measured"
    return "measured"


class SegmentFit(NamedTuple):
    """What training one segment gives (`fit_segment`): read it by name, not by position.

    Attributes:
        model: The kept meta-model.
        mode: Its mode, "measured" or "public".
        report: The LODO scores of every meta-model kind and mode (`selected` marks the kept one).
        data: The kept mode's `model.TrainingMatrix`.
    """

    model: FittedMetaModel
    mode: str
    report: pd.DataFrame
    data: Any


def fit_segment(family: Family, experience: pd.DataFrame, option_names: list[str], features: list[Any],
                mf_share: float, model_kinds: tuple[str, ...], threads: int,
                selection_folds: int | None) -> SegmentFit:
    """Train the meta-model of one segment as `train` does: select a kind per mode by held-out
    regret, and keep the mode `decide_measuring` picks (benchmarks call it on the part of an
    experience they train on)."""
    problem = regret_measure_problem(family.payoff_rule, family.regret_measure)
    if problem:
        raise ValueError(f"the {family.name} family cannot be trained: {problem}")
    candidates: dict[str, tuple[Any, FittedMetaModel, pd.Series]] = {}
    reports = []
    for mode in family.modes:
        mode_features = features if mode == "measured" else public_metafeatures(features)
        if mode == "measured" and family.payoff_rule == "paired" and not any(m.cost for m in features):
            continue  # nothing to pay for: the public mode is the same choice
        subset = experience[experience["mode"] == mode]
        names = [m.name for m in mode_features]
        if not names:  # no metafeature: one constant input, so only the best fixed Option
            subset, names = subset.assign(**{FEATURE_PREFIX + "constant": 0.0}), ["constant"]
        data = training_matrix(subset, names, option_names, list(family.config_columns),
                               family.meta_input_products, family.group_column, family.regret_measure)
        selected, report = select_model_kind(data, model_kinds, threads, selection_folds)
        if family.payoff_rule == "credit":
            use = names != ["constant"] and metafeatures_pay_off(report, mf_share)
            model = FittedMetaModel.fit(data, selected, threads, use, family.errors_scale_as_inverse_epsilon)
            reports.append(report.assign(mode=mode, metafeatures_used=use))
            candidates[mode] = (data, model, pd.Series(dtype=float))
        else:
            errors = lodo_chosen_errors(selected, data, threads, selection_folds)
            model = FittedMetaModel.fit(data, selected, threads, names != ["constant"],
                                        family.errors_scale_as_inverse_epsilon)
            candidates[mode] = (data, model, errors)
            reports.append(report.assign(mode=mode, lodo_mean_error=np.where(report["selected"],
                                                                             float(errors.mean()), np.nan)))
    mode = decide_measuring(family, candidates, mf_share)
    report = pd.concat(reports, ignore_index=True)
    report["selected"] = report["selected"] & (report["mode"] == mode)
    return SegmentFit(candidates[mode][1], mode, report, candidates[mode][0])


def credited_share(family: Family, experience: pd.DataFrame, mf_share: float) -> float:
    """The share the "credit" rule credits a ChoiceMaker that measures nothing: `mf_share`, or,
    where the family raises the share at some of the experience's budgets
    (`Family.metafeature_share_at`), the largest share any of them paid. Crediting every budget
    the largest share favours not measuring: measuring is kept only if it pays even so."""
    share = exact_share(mf_share)
    if share == 0 or "epsilon" not in experience.columns:
        return float(mf_share)
    raised = max((family.metafeature_share_at(share, as_budget(float(e))) for e in experience["epsilon"].unique()),
                 default=share)
    return float(mf_share) if raised <= share else float(raised)


def _kept_errors(family: Family, model: FittedMetaModel, data: Any, mf_share: float, threads: int,
                 selection_folds: int | None) -> pd.Series:
    """Per-group held-out mean errors of the kept measure-then-choose design (a ChoiceMaker that
    measures nothing under the "credit" rule runs with the whole budget: credited the share)."""
    if model.features:
        return lodo_chosen_errors(model.model_kind, data, threads, selection_folds)
    constant = type(data)(np.zeros((len(data.X), 1)), data.errors, data.log_error, data.regret, data.config,
                          data.groups, data.options, [], regret_measure=data.regret_measure)
    errors = lodo_chosen_errors("best_fixed", constant, threads, selection_folds)
    # its experience ran the Options at (1 - share) of the budget; at run time it gets all of it
    return errors * (1.0 - mf_share) if family.payoff_rule == "credit" else errors


def _selection_decision(family: Family, option_list: list[Any], corpus: Any, grid: Any, segment: Hashable,
                        kept: pd.Series, stop_probability: Any, run_share: Any
                        ) -> private_selection.SelectionDecision:
    options = [o for o in option_list if segment in family.segments(o)]
    gamma = private_selection.default_stop_probability(len(options)) if stop_probability is None else stop_probability
    errors = private_selection.simulate(family, options, corpus, grid, segment, gamma, run_share)
    return private_selection.decide(errors, kept, gamma, run_share)


def train(family: Family, options: Any = None, metafeatures: Any = None, corpus: Any = None,
          grid: Any = None, mf_share: float = 0.1, cache_dir: str | Path | None = None, n_jobs: int = -1,
          progress: bool = True, model_kinds: tuple[str, ...] = MODEL_KINDS,
          selection_folds: int | None = None,
          before_training: Callable[[int], None] | None = None, selection: bool = True,
          after_first: Callable[[float, float, list[float]], None] | None = None,
          stop_probability: Any = None,
          run_share: Any = private_selection.DEFAULT_RUN_SHARE) -> TrainedChoiceMaker:
    """Train a ChoiceMaker of `family` (reusing cached experience and models when nothing changed).

    Args:
        family: The learner family (`families.get("histograms")`, ...).
        options: Options or names of the family's built-in Options (default: all of them).
        metafeatures: Metafeatures or built-in names (default: `family.default_metafeatures`).
        corpus: Public tasks (default: `family.default_corpus(options)`).
        grid: Training configurations (default: `family.default_grid()`).
        mf_share: Share of epsilon spent on noisy metafeatures, in training and at run time.
        cache_dir: Cache folder (default $JOSTLE_CACHE or ~/.cache/jostle).
        n_jobs: Processes for building the experience (-1: all cores).
        progress: Show a progress bar.
        model_kinds: Meta-model kinds to choose from (`model.MODEL_KINDS`).
        selection_folds: None for leave-one-dataset-out; k for k folds of whole groups.
        before_training: Called with the number of experience pieces to run, before running
            them (not called when everything is cached).
        selection: Compare private selection with measure-then-choose (families with the
            `private_score` hook only; the others never select privately).
        after_first: Called after the first piece ran, with its seconds, its cost and the other
            pieces' costs (`experience.experience_table`), to state a measured estimate.
        stop_probability: The selection's gamma (default 1 / (2 K) for K Options).
        run_share: The share of each selection candidate's epsilon its Option runs with.
    """
    model_kinds = tuple(model_kinds)
    option_list = resolve(options, family.options(), list(family.options()))
    features = resolve(metafeatures, family.metafeatures(), family.default_metafeatures)
    corpus = family.default_corpus(option_list) if corpus is None else corpus
    grid = grid or family.default_grid()
    computed_before = RUN_STATS["pieces_computed"]
    experience = experience_table(family, option_list, features, corpus, grid, mf_share, cache_dir, n_jobs,
                                  progress, before_training, after_first)
    experience_from_cache = RUN_STATS["pieces_computed"] == computed_before
    folder = (Path(cache_dir) if cache_dir is not None else default_cache_dir()) / "models" / family.name
    key = "|".join([MODEL_VERSION, family.fingerprint, experience_digest(experience),
                    ",".join(m.name for m in features), ",".join(model_kinds), str(selection_folds),
                    repr(float(mf_share)), "intervals1", "own-level2"])
    if family.regret_measure != "ratio":
        key += f"|regret:{family.regret_measure}"

    selecting = selection and family.private_score is not None and "pure" in family.measures
    if selecting:
        key += f"|selection1|{stop_probability}|{run_share}"
        corpus = list(corpus)
    path = folder / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.joblib"
    import joblib

    model_from_cache = path.exists()
    intervals: dict[Hashable, ErrorIntervals | None] = {}
    decisions: dict[Hashable, private_selection.SelectionDecision] = {}
    if model_from_cache:
        stored = joblib.load(path)
        models, modes, report = stored[:3]
        if len(stored) > 3:
            intervals, decisions = stored[3], stored[4]
    else:
        models, modes, reports = {}, {}, []
        threads = max(n_jobs, 1)
        column = family.segment_column
        segments = sorted(experience[column].unique()) if column else [None]
        for segment in segments:
            subset = experience if column is None else experience[experience[column] == segment]
            segment = None if column is None else segment.item() if hasattr(segment, "item") else segment
            names = [o.name for o in option_list if segment in family.segments(o)]
            credit = credited_share(family, subset, mf_share)
            kept = fit_segment(family, subset, names, features, credit, model_kinds, threads, selection_folds)
            model, report, data = kept.model, kept.report, kept.data
            models[segment], modes[segment] = model, kept.mode
            intervals[segment] = held_out_intervals(
                data, model.model_kind, bool(model.features), n_jobs=threads,
                errors_scale_as_inverse_epsilon=family.errors_scale_as_inverse_epsilon)
            if selecting:
                kept = _kept_errors(family, model, data, credit, threads, selection_folds)
                decisions[segment] = _selection_decision(family, option_list, corpus, grid, segment, kept,
                                                         stop_probability, run_share)
            reports.append(report if column is None else report.assign(**{column: segment}))
        report = pd.concat(reports, ignore_index=True)
        folder.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".tmp{os.getpid()}")
        joblib.dump((models, modes, report, intervals, decisions), temporary)
        temporary.replace(path)
    return TrainedChoiceMaker(family, {o.name: o for o in option_list}, features, float(mf_share), models, modes,
                              experience, report, experience_from_cache, model_from_cache,
                              intervals=intervals, selection=decisions if selecting else None)
