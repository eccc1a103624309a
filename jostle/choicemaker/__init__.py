"""The ChoiceMaker for differentially private histograms (the DPBench family).

Given several private algorithms (Options) for the same task, a ChoiceMaker learns on public
data which one does best on which kind of input, then at run time measures a few metafeatures
privately, predicts each Option's error and runs the best with the rest of the budget
(cf. Pythia, Kotsogiannis et al., SIGMOD 2017). Modules:
  options       Option objects and the registry of `jostle.histograms` algorithms
  metafeatures  public and noisy metafeatures, their sensitivities, private measurement
  corpus        public training shapes: offline default corpus, DPBench loader
  simulation    fast seeded noise for running Options on public data
  training      the experience table (parallel, cached)
  model         meta-model families and leave-one-dataset-out selection
  engine        train(), TrainedChoiceMaker, dispatch()
"""

import importlib
from typing import Any

# Names are imported on first use (PEP 562), so that `import jostle` does not pay for
# scikit-learn and joblib until a ChoiceMaker is actually trained.
_EXPORTS = {
    "Corpus": "corpus", "Shape": "corpus", "default_corpus": "corpus", "dpbench_corpus": "corpus",
    "synthetic_corpus": "corpus",
    "DispatchResult": "engine", "TrainedChoiceMaker": "engine", "dispatch": "engine", "train": "engine",
    "BUILTIN_METAFEATURES": "metafeatures", "Metafeature": "metafeatures",
    "MetafeatureContext": "metafeatures", "measure_features": "metafeatures",
    "BUILTIN_OPTIONS": "options", "HistogramOption": "options", "get_option": "options",
    "SimulationNoise": "simulation",
    "TrainingGrid": "training", "default_workload": "training", "experience_table": "training",
    "train_tree_choicemaker": "tree_training", "dispatch_tree": "tree_task", "TREE_OPTIONS": "tree_task",
    "TREE_METAFEATURES": "tree_task", "tree_corpus": "tree_corpus",
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'jostle.choicemaker' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"jostle.choicemaker.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "BUILTIN_METAFEATURES", "BUILTIN_OPTIONS", "Corpus", "DispatchResult", "HistogramOption",
    "Metafeature", "MetafeatureContext", "Shape", "SimulationNoise", "TrainedChoiceMaker",
    "TrainingGrid", "default_corpus", "default_workload", "dispatch", "dpbench_corpus",
    "experience_table", "get_option", "measure_features", "synthetic_corpus", "train",
    "train_tree_choicemaker", "dispatch_tree", "TREE_OPTIONS", "TREE_METAFEATURES", "tree_corpus",
]
