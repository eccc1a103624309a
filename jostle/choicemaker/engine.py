"""The ChoiceMaker engine: train a meta-model on public experience, then dispatch privately.

`train(options, metafeatures, corpus, grid)` builds (or loads) the experience table
(`training.experience_table`), and for each histogram dimensionality in it selects a meta-model
family by leave-one-dataset-out validation and fits it (`model.select_family`,
`model.FittedMetaModel`). If validation shows that the metafeatures do not pay for their share
of the budget (`model.metafeatures_pay_off`), that dimensionality's ChoiceMaker measures
nothing and runs the best fixed Option with the whole epsilon. Fitted models are cached next to the experience, keyed by the
table's content hash, so re-running a program neither reruns the Options nor refits.

`dispatch(trained, x, epsilon, workload, noise, charge)` is the private run: it splits epsilon
into the metafeature share (`trained.metafeature_share(dims)`) and the Option's share, measures the metafeatures (charging each
noisy one before it is measured), predicts every Option's error, charges the Option's share
and runs the predicted best Option. The charges add up to epsilon exactly as rationals or to
a few ulps less (`jostle.histograms.measure.split_budget`), never more.
Privacy: sequential composition of the metafeature releases and the Option's release; the
choice itself is post-processing of released metafeatures.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import joblib
import numpy as np
import pandas as pd

from jostle.choicemaker.corpus import Corpus
from jostle.choicemaker.metafeatures import (BUILTIN_METAFEATURES, DEFAULT_METAFEATURES,
                                             measure_features)
from jostle.choicemaker.model import (FAMILIES, FittedMetaModel, input_matrix,
                                      metafeatures_pay_off, select_family, training_matrix)
from jostle.choicemaker.options import BUILTIN_OPTIONS, option_dims
from jostle.choicemaker.training import (RUN_STATS, TrainingGrid, default_cache_dir,
                                         experience_digest, experience_table)

MODEL_VERSION = "2"
ChargeFunction = Callable[[float, str], None]


@dataclass
class TrainedChoiceMaker:
    """A trained ChoiceMaker.

    Attributes:
        options: Name -> Option object.
        metafeatures: The metafeatures the models read (in input order).
        mf_share: Share of epsilon spent on metafeatures (as in training).
        models: Dimensionality -> fitted meta-model.
        experience: The experience table (one row per training run).
        model_report: LODO scores of every family per dimensionality (`selected` marks the
            family that was fitted; `metafeatures_used` is False where the best fixed Option
            runs with the whole budget instead).
        experience_from_cache / model_from_cache: Whether training reused the cache.
    """

    options: dict[str, Any]
    metafeatures: list[Any]
    mf_share: float
    models: dict[int, FittedMetaModel]
    experience: pd.DataFrame = field(repr=False)
    model_report: pd.DataFrame = field(repr=False)
    experience_from_cache: bool = False
    model_from_cache: bool = False

    @property
    def feature_names(self) -> list[str]:
        return [m.name for m in self.metafeatures]

    def _model(self, dims: int | None) -> FittedMetaModel:
        if dims is None:
            if len(self.models) != 1:
                raise ValueError(f"trained for {sorted(self.models)}D histograms: say which (dims=)")
            return next(iter(self.models.values()))
        if dims not in self.models:
            raise ValueError(f"this ChoiceMaker was not trained on {dims}D histograms "
                             f"(trained: {sorted(self.models)})")
        return self.models[dims]

    def metafeatures_for(self, dims: int | None = None) -> list[Any]:
        """The metafeatures to measure for a `dims`-dimensional input: none when training
        found that they do not pay for their share of the budget."""
        model = self._model(dims)
        return [m for m in self.metafeatures if m.name in model.features]

    def metafeature_share(self, dims: int | None = None) -> float:
        """The share of epsilon to spend on metafeatures for a `dims`-dimensional input."""
        return self.mf_share if self.metafeatures_for(dims) else 0.0

    def _inputs(self, features: Mapping[str, float], model: FittedMetaModel) -> np.ndarray:
        if not model.features:
            return np.zeros((1, 1))
        missing = [f for f in model.features if f not in features]
        if missing:
            raise KeyError(f"missing metafeatures {missing}")
        return input_matrix({f: float(features[f]) for f in model.features}, model.features)

    def predict(self, features: Mapping[str, float], dims: int | None = None) -> dict[str, float]:
        """Predicted scaled error of every Option for these metafeature values."""
        model = self._model(dims)
        errors = model.predicted_errors(self._inputs(features, model))[0]
        return {name: float(e) for name, e in zip(model.options, errors)}

    def choose(self, features: Mapping[str, float],
               dims: int | None = None) -> tuple[str, dict[str, float]]:
        """The Option the meta-model picks, and every Option's predicted error."""
        model = self._model(dims)
        index = int(model.choose(self._inputs(features, model))[0])
        return model.options[index], self.predict(features, dims)


@dataclass(frozen=True)
class DispatchResult:
    """What `dispatch` released and how.

    Attributes:
        answer: The chosen Option's estimate of the histogram.
        choice: Name of the Option that ran.
        features: Released metafeature values.
        predictions: Predicted error of every Option.
        budget_split: Description -> epsilon of every charge made (they add up to epsilon).
    """

    answer: np.ndarray
    choice: str
    features: dict[str, float]
    predictions: dict[str, float]
    budget_split: dict[str, float]


def _as_options(options: Any) -> dict[str, Any]:
    if options is None:
        options = list(BUILTIN_OPTIONS.values())
    if isinstance(options, Mapping):
        options = list(options.values())
    resolved = {}
    for option in options:
        if isinstance(option, str):
            from jostle.choicemaker.options import get_option
            option = get_option(option)
        if option.name in resolved:
            raise ValueError(f"two options are called {option.name!r}")
        resolved[option.name] = option
    return resolved


def _as_metafeatures(metafeatures: Any) -> list[Any]:
    if metafeatures is None:
        metafeatures = DEFAULT_METAFEATURES
    if isinstance(metafeatures, Mapping):
        metafeatures = list(metafeatures.values())
    out = [BUILTIN_METAFEATURES[m] if isinstance(m, str) else m for m in metafeatures]
    if len({m.name for m in out}) != len(out):
        raise ValueError("metafeature names must be distinct")
    return out


def train(options: Any = None, metafeatures: Any = None, corpus: Corpus | None = None,
          grid: TrainingGrid | None = None, mf_share: float = 0.1,
          cache_dir: str | Path | None = None, n_jobs: int = -1, progress: bool = True,
          families: tuple[str, ...] = FAMILIES, selection_folds: int | None = None,
          error: str = "scaled_l1") -> TrainedChoiceMaker:
    """Train a ChoiceMaker (reusing cached experience and models when nothing changed).

    Args:
        options: Option objects or built-in names (default: every built-in Option).
        metafeatures: Metafeature objects or built-in names (default: every built-in).
        corpus: Public shapes (default: `default_corpus()` for the Options' dimensionalities).
        grid: Training configurations (default: `TrainingGrid.quick()`).
        mf_share: Share of epsilon spent on metafeatures, in training and at run time.
        cache_dir: Cache folder (default $JOSTLE_CACHE or ~/.cache/jostle).
        n_jobs: Processes for running the Options (-1: all cores).
        progress: Show a progress bar while building the experience.
        families: Meta-model families to choose from.
        selection_folds: None for leave-one-dataset-out model selection; an int k for k
            folds of whole groups (cheaper when there are many groups).
        error: The error measure, "scaled_l1" (DPBench's) or "scaled_l2".
    """
    option_map = _as_options(options)
    features = _as_metafeatures(metafeatures)
    if corpus is None:
        from jostle.choicemaker.corpus import default_corpus
        dims = sorted({d for o in option_map.values() for d in option_dims(o)})
        corpus = default_corpus(tuple(dims))
    grid = grid or TrainingGrid.quick()
    computed_before = RUN_STATS["pieces_computed"]
    experience = experience_table(list(option_map.values()), features, corpus, grid, mf_share,
                                  cache_dir, n_jobs, progress, error)
    experience_from_cache = RUN_STATS["pieces_computed"] == computed_before
    names = [f.name for f in features]
    folder = (Path(cache_dir) if cache_dir is not None else default_cache_dir()) / "models"
    key_text = "|".join([MODEL_VERSION, experience_digest(experience), ",".join(names),
                         ",".join(families), str(selection_folds), repr(float(mf_share))])
    path = folder / f"{hashlib.sha256(key_text.encode()).hexdigest()[:24]}.joblib"
    model_from_cache = path.exists()
    if model_from_cache:
        models, report = joblib.load(path)
    else:
        models, reports = {}, []
        for dims in sorted(experience["dims"].unique()):
            subset = experience[experience["dims"] == dims]
            dims_options = [o for o in option_map if int(dims) in option_dims(option_map[o])]
            data = training_matrix(subset, names, dims_options)
            family, report = select_family(data, families, max(n_jobs, 1), selection_folds)
            use = metafeatures_pay_off(report, mf_share)
            models[int(dims)] = FittedMetaModel.fit(data, family, max(n_jobs, 1), use)
            reports.append(report.assign(dims=int(dims), metafeatures_used=use))
        report = pd.concat(reports, ignore_index=True)
        folder.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".tmp{os.getpid()}")
        joblib.dump((models, report), temporary)
        temporary.replace(path)
    return TrainedChoiceMaker(option_map, features, mf_share, models, experience, report,
                              experience_from_cache, model_from_cache)


def dispatch(trained: TrainedChoiceMaker, x: np.ndarray, epsilon: float, workload: Any,
             noise: Any, charge: ChargeFunction | None = None,
             option_noise: Callable[[str], Any] | None = None) -> DispatchResult:
    """Choose and run the best Option privately, spending exactly `epsilon` in total.

    Args:
        trained: A trained ChoiceMaker.
        x: The private count vector/grid.
        epsilon: The whole budget (metafeatures plus the chosen Option).
        workload: The range queries (Options such as MWEM and DAWA use them).
        noise: Source of randomness (`jostle.noise.Randomness()` for real releases).
        charge: `charge(epsilon, description)`, called before every noisy measurement and
            before the Option runs; it should raise if the budget cannot pay.
        option_noise: `option_noise(name)` gives the noise source of the chosen Option's run
            (default: `noise`). Benchmarks on public data pass the seed each fixed algorithm
            ran with (common random numbers); the choice never sees the Option's noise.
    """
    x = np.asarray(x, dtype=float)
    if not (np.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be positive and finite, got {epsilon}")
    trained._model(x.ndim)  # fails before any charge if x's dimensionality is unknown
    measured = measure_features(trained.metafeatures_for(x.ndim), x, float(epsilon),
                                trained.metafeature_share(x.ndim), noise, charge)
    choice, predictions = trained.choose(measured.features, x.ndim)
    option = trained.options[choice]
    if charge is not None:
        charge(measured.option_epsilon, f"option {choice}")
    answer = option.run(x, measured.option_epsilon, workload,
                        noise if option_noise is None else option_noise(choice))
    split = {k: v for k, v in measured.budget_split.items() if k != "option"}
    split[f"option {choice}"] = measured.option_epsilon
    return DispatchResult(np.asarray(answer, dtype=float), choice, measured.features,
                          predictions, split)
