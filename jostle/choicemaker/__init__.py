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

from jostle.choicemaker.corpus import Corpus, Shape, default_corpus, dpbench_corpus, synthetic_corpus
from jostle.choicemaker.engine import DispatchResult, TrainedChoiceMaker, dispatch, train
from jostle.choicemaker.metafeatures import (BUILTIN_METAFEATURES, Metafeature, MetafeatureContext,
                                             measure_features)
from jostle.choicemaker.options import BUILTIN_OPTIONS, HistogramOption, get_option
from jostle.choicemaker.simulation import SimulationNoise
from jostle.choicemaker.training import TrainingGrid, default_workload, experience_table

__all__ = [
    "BUILTIN_METAFEATURES", "BUILTIN_OPTIONS", "Corpus", "DispatchResult", "HistogramOption",
    "Metafeature", "MetafeatureContext", "Shape", "SimulationNoise", "TrainedChoiceMaker",
    "TrainingGrid", "default_corpus", "default_workload", "dispatch", "dpbench_corpus",
    "experience_table", "get_option", "measure_features", "synthetic_corpus", "train",
]
