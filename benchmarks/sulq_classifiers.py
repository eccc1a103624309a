"""The SuLQ classifiers family's benchmark: SuLQ ID3 against the tree learners and their ChoiceMaker,
the SuLQ perceptron against diffprivlib's logistic regression, and the choosers across old and new,
at the same (epsilon, 1e-6).

    python benchmarks/sulq_classifiers.py [--quick] [--dataset FILE:TARGET]... [--data DIR]

It is the ID3, perceptron and ChoiceMaker parts of `benchmarks/sulq.py` (same protocol: 10 splits,
paired 95% intervals, test accuracy), written to
benchmarks/results/sulq_classifiers[_quick].{json,png}; every option of sulq.py but --only applies.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sulq  # noqa: E402

if __name__ == "__main__":
    sulq.family_main("sulq_classifiers", ("id3", "perceptron", "choicemaker"))
