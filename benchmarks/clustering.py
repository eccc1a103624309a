"""The clustering family's benchmark: SuLQ k-means against our zCDP DPLloyd (with and without
reseeding), diffprivlib's KMeans and non-private k-means, at the same (epsilon, 1e-6).

    python benchmarks/clustering.py [--quick] [--dataset FILE:] [--data DIR]

It is the k-means part of `benchmarks/sulq.py` (same protocol: 10 splits, paired 95% intervals,
held-out within-cluster error over the non-private one), written to
benchmarks/results/clustering[_quick].{json,png}; every option of sulq.py but --only applies.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sulq  # noqa: E402

if __name__ == "__main__":
    sulq.family_main("clustering", ("kmeans",))
