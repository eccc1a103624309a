"""The histogram family's ChoiceMaker from Python: `train`, `dispatch`, the experience table.

Thin names over the one engine (`jostle.choicemaker`) with the histogram family filled in, for
benchmarks, notebooks and tests that hold count vectors rather than Jostle programs:

    trained = train(corpus=default_corpus(1), grid=TrainingGrid.quick())
    result = dispatch(trained, x, 1.0, prefix_1d(x.size), Randomness())
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np

from jostle.choicemaker import engine, experience, measurement
from jostle.choicemaker.dispatch import DispatchResult, dispatch as engine_dispatch
from jostle.choicemaker.model import FAMILIES
from jostle.learners.histograms.family import FAMILY, HistogramData, HistogramFamily
from jostle.learners.histograms.metafeatures import BUILTIN_METAFEATURES, Metafeature  # noqa: F401
from jostle.learners.histograms.options import BUILTIN_OPTIONS, HistogramOption, get_option  # noqa: F401
from jostle.learners.histograms.task import TrainingGrid, default_workload  # noqa: F401


def family_for(error: str = "scaled_l1") -> HistogramFamily:
    """The histogram family scored by `error` ("scaled_l1" or "scaled_l2")."""
    return FAMILY if error == "scaled_l1" else HistogramFamily(error)


def train(options: Any = None, metafeatures: Any = None, corpus: Any = None, grid: TrainingGrid | None = None,
          mf_share: float = 0.1, cache_dir: str | Path | None = None, n_jobs: int = -1, progress: bool = True,
          families: tuple[str, ...] = FAMILIES, selection_folds: int | None = None,
          error: str = "scaled_l1") -> engine.TrainedChoiceMaker:
    """Train a histogram ChoiceMaker (`jostle.choicemaker.engine.train` with this family)."""
    return engine.train(family_for(error), options, metafeatures, corpus, grid, mf_share, cache_dir, n_jobs,
                        progress, families, selection_folds)


def dispatch(trained: Any, x: np.ndarray, budget: Any, workload: Any, noise: Any,
             charge: Callable[[Any, str], None] | None = None,
             option_noise: Callable[[str], Any] | None = None) -> DispatchResult:
    """Choose and run the best algorithm on counts `x` privately (the engine's one dispatch).
    `budget` is a `Budget` or `RhoZCDPBudget` (a number is a pure epsilon); `charge` receives
    each part's typed cost."""
    return engine_dispatch(trained, HistogramData(np.asarray(x, dtype=float), workload), budget, noise, charge,
                           option_noise)


def experience_table(options: list[Any], metafeatures: list[Any], corpus: Any, grid: TrainingGrid | None = None,
                     mf_share: float = 0.1, cache_dir: str | Path | None = None, n_jobs: int = -1,
                     progress: bool = True, error: str = "scaled_l1") -> Any:
    """The experience table of histogram Options on a corpus of shapes."""
    return experience.experience_table(family_for(error), list(options), list(metafeatures), corpus,
                                       grid or TrainingGrid.quick(), mf_share, cache_dir, n_jobs, progress)


def measure_features(metafeatures: list[Any], x: np.ndarray, budget: Any, mf_share: float, noise: Any,
                     charge: Callable[[Any, str], None] | None = None) -> measurement.FeatureMeasurement:
    """Measure histogram metafeatures of counts `x` (the engine's one measurement loop; `budget`
    a typed budget or a number read as a pure epsilon)."""
    return measurement.measure_features(FAMILY, list(metafeatures), np.asarray(x, dtype=float), budget, mf_share,
                                        noise, charge)


__all__ = ["BUILTIN_METAFEATURES", "BUILTIN_OPTIONS", "HistogramOption", "Metafeature", "TrainingGrid",
           "default_workload", "dispatch", "experience_table", "family_for", "get_option", "measure_features",
           "train"]
