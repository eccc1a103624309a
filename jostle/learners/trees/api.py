"""The tree family's ChoiceMaker from Python: `train_tree_choicemaker`, `dispatch_tree`.

Thin names over the one engine (`jostle.choicemaker`) with the tree family filled in, for
benchmarks and tests that hold `ClassificationData` rather than Jostle programs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from jostle.choicemaker import engine, measurement
from jostle.choicemaker.dispatch import DispatchResult, dispatch
from jostle.choicemaker.model import FAMILIES
from jostle.learners.trees.corpus import ClassificationData
from jostle.learners.trees.family import FAMILY
from jostle.learners.trees.task import TreeGrid


def train_tree_choicemaker(options: Any = None, metafeatures: Any = None, corpus: list[ClassificationData] | None = None,
                           grid: TreeGrid | None = None, mf_share: float = 0.1, cache_dir: str | Path | None = None,
                           n_jobs: int = -1, progress: bool = True, families: tuple[str, ...] = FAMILIES,
                           selection_folds: int | None = None) -> engine.TrainedChoiceMaker:
    """Train a tree ChoiceMaker (`jostle.choicemaker.engine.train` with this family)."""
    return engine.train(FAMILY, options, metafeatures, corpus, grid, mf_share, cache_dir, n_jobs, progress,
                        families, selection_folds)


def dispatch_tree(trained: Any, data: ClassificationData, budget: Any, noise: Any,
                  charge: Callable[[Any, str], None] | None = None) -> DispatchResult:
    """Choose and train the best tree learner privately (the engine's one dispatch). `budget`
    is a `Budget` or `RhoZCDPBudget` (a number is a pure epsilon); `charge` receives each part's
    typed cost."""
    return dispatch(trained, data, budget, noise, charge)


def measure_tree_features(metafeatures: list[Any], data: ClassificationData, budget: Any, mf_share: float,
                          noise: Any, charge: Callable[[Any, str], None] | None = None) -> measurement.FeatureMeasurement:
    """Measure tree metafeatures of a table (the engine's one measurement loop)."""
    return measurement.measure_features(FAMILY, list(metafeatures), data, budget, mf_share, noise, charge)
