"""The public data of `benchmarks/sulq.py`: numeric tables for k-means, classification tables for
ID3 and the perceptron, and the tuning / training / test parts every comparison uses.

Where the data is: sulq.py's `data_folder`, through `benchmark_data` (--data DIR, else $JOSTLE_DATA, else ../shared/datasets;
one line and exit code 66 when a file is missing).

**Clustering tables.** Rows are clipped into a PUBLIC box and scaled to [0, 1]^d; every learner
(ours and diffprivlib's) sees the same scaled rows and is told the box [0, 1]^d, never bounds read
from the data. The boxes of the two UCI tables are declared here from what the data describes
(not from the files): Contraceptive Method Choice (a survey of married women: age 15..50, at most
16 children, education and standard of living coded 1..4) and Titanic (class 1..3, age 0..100,
at most 10 siblings / spouses and 10 parents / children aboard, fare 0..600 pounds; rows without
an age are dropped). Generated mixtures: k spherical Gaussian clusters with centres uniform in
[0.15, 0.85]^d and a stated spread, clipped to [0, 1]^d. A --dataset FILE:TARGET table for
k-means uses its numeric columns other than TARGET, with the box read from its TUNING part only
(rows the figures are never computed on, standing for public data of the same kind); k = the
number of TARGET values; a file without numeric columns is left out of k-means.

**Classification tables.** The tree benchmark's encoding (`benchmarks/trees.py`: declared UCI
domains for Nursery, Contraceptive, HIV-1 protease 1625 and Mushroom, else domains from the
file). The perceptron and the logistic regressions are binary: a multi-class table is read as
"declared positive class vs the rest" (Nursery: spec_prior; Contraceptive: 1, no contraception;
other files: their first class), and they see the attributes one-hot encoded over the public
domains and scaled by 1 / sqrt(attributes), so every row has Euclidean norm exactly 1 (the
data_norm diffprivlib is given) and lies in [0, 1]^D (the box the SuLQ perceptron is given).

**Parts.** Each table is split once (seed 7) into a tuning part (20%: hyperparameters are chosen
there) and a reporting part, which each repetition splits 70/30 into training and test rows
(seed 1000 + repetition). Generated mixtures draw their tuning sample from the same mixture
with another seed.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


TUNING_SHARE = 0.2
TUNING_SEED = 7

# Declared public boxes (low, high) per column: from what the tables describe, never the files.
DECLARED_BOXES: dict[str, dict] = {
    "contraceptive": {"file": "contraceptive.csv", "k": 3, "columns": {
        "wife_age": (15, 50), "wife_education": (1, 4), "husband_education": (1, 4),
        "children_born": (0, 16), "standard_of_living": (1, 4)}},
    "titanic": {"file": "titanic.csv", "k": 3, "columns": {
        "Pclass": (1, 3), "Age": (0, 100), "SibSp": (0, 10), "Parch": (0, 10), "Fare": (0, 600)}},
}
# (name, dimension, clusters, spread, rows)
MIXTURES = [("mixture_d2_k4", 2, 4, 0.06, 8000), ("mixture_d5_k5", 5, 5, 0.08, 8000)]
DEFAULT_CLUSTERING_FILES = ["contraceptive.csv", "titanic.csv"]
DEFAULT_CLASSIFICATION = ["nursery.csv:class", "contraceptive.csv:contraceptive_method",
                          "hiv1_protease_1625.csv:cleaved", "mushroom.csv:edibility"]
POSITIVE_CLASS = {"nursery": "spec_prior", "contraceptive": 1}


@dataclass(frozen=True)
class ClusteringTable:
    """Rows scaled into [0, 1]^d (tuning part and reporting part), k, and where the box came from."""

    name: str
    tuning: np.ndarray
    rows: np.ndarray
    k: int
    box: str


@dataclass(frozen=True)
class ClassificationTable:
    """A tree-benchmark table (`ClassificationData` codes) with its tuning / reporting parts,
    and its binary one-hot reading for the perceptron and the logistic regressions."""

    name: str
    data: object            # ClassificationData of all rows
    tuning_index: np.ndarray
    report_index: np.ndarray
    onehot: np.ndarray      # rows of norm 1 in [0, 1]^D
    binary: np.ndarray      # 1 for the positive class
    positive: str
    source: str


def split_tuning(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The fixed tuning part (20%) and the reporting part of n rows."""
    order = np.random.default_rng(TUNING_SEED).permutation(n)
    cut = int(round(TUNING_SHARE * n))
    return np.sort(order[:cut]), np.sort(order[cut:])


def split_report(n: int, repetition: int) -> tuple[np.ndarray, np.ndarray]:
    """Repetition `repetition`'s 70/30 training / test split of the reporting part's n rows."""
    order = np.random.default_rng(1000 + repetition).permutation(n)
    cut = int(round(0.7 * n))
    return order[:cut], order[cut:]


def scale_to_box(values: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Clip into the box [low, high] and scale to [0, 1]^d."""
    return (np.clip(values, low, high) - low) / (high - low)


def mixture(dimension: int, clusters: int, spread: float, rows: int, seed: int) -> np.ndarray:
    """A generated mixture: `clusters` spherical Gaussians (centres seeded by the name, rows by seed)."""
    centres = np.random.default_rng(10_000 + 97 * dimension + clusters).uniform(0.15, 0.85, (clusters, dimension))
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, clusters, rows)
    return np.clip(centres[labels] + rng.normal(0, spread, (rows, dimension)), 0.0, 1.0)


def clustering_tables(folder: Path | None, files: list[str] | None) -> list[ClusteringTable]:
    """The generated mixtures, then the declared UCI tables, then any --dataset FILE:TARGET."""
    tables = [ClusteringTable(name, mixture(d, k, spread, int(TUNING_SHARE * n), 1),
                              mixture(d, k, spread, n, 2), k, "generated in [0, 1]^d")
              for name, d, k, spread, n in MIXTURES]
    if folder is None:
        return tables
    for spec in files or []:
        file_name, _, target = spec.partition(":")
        name = Path(file_name).stem
        declared = DECLARED_BOXES.get(name)
        frame = pd.read_csv(folder / file_name)
        if declared is not None and declared["file"] == file_name:
            columns = list(declared["columns"])
            frame = frame.dropna(subset=columns)
            values = frame[columns].to_numpy(dtype=float)
            low = np.array([declared["columns"][c][0] for c in columns], dtype=float)
            high = np.array([declared["columns"][c][1] for c in columns], dtype=float)
            tuning, report = split_tuning(len(values))
            tables.append(ClusteringTable(name, scale_to_box(values[tuning], low, high),
                                          scale_to_box(values[report], low, high), declared["k"],
                                          "declared (" + ", ".join(f"{c} {a}..{b}" for c, (a, b)
                                                                   in declared["columns"].items()) + ")"))
            continue
        if target not in frame.columns:
            raise SystemExit(f"sulq.py: {file_name} has no column {target!r}; columns: {list(frame.columns)}")
        columns = [c for c in frame.columns if c != target and pd.api.types.is_numeric_dtype(frame[c])]
        if not columns:
            print(f"k-means: {file_name} has no numeric column besides {target!r}; not clustered")
            continue
        frame = frame.dropna(subset=columns + [target])
        values = frame[columns].to_numpy(dtype=float)
        tuning, report = split_tuning(len(values))
        low, high = values[tuning].min(axis=0), values[tuning].max(axis=0)
        high = np.where(high > low, high, low + 1.0)
        tables.append(ClusteringTable(name, scale_to_box(values[tuning], low, high),
                                      scale_to_box(values[report], low, high),
                                      int(frame[target].nunique()), "read from the tuning part only"))
    return tables


def onehot_rows(codes: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
    """One-hot over the public domains, scaled so that every row has norm 1."""
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
    out = np.zeros((codes.shape[0], int(sum(sizes))))
    rows = np.arange(codes.shape[0])
    for column, offset in enumerate(offsets):
        out[rows, offset + codes[:, column].astype(int)] = 1.0
    return out / np.sqrt(len(sizes))


def classification_tables(folder: Path, specs: list[str]) -> list[ClassificationTable]:
    """The tree benchmark's encoding of each FILE:TARGET, with parts and the binary reading."""
    from trees import load_dataset

    tables = []
    for spec in specs:
        data, source = load_dataset(folder, spec)
        labels = list(data.class_labels) or list(range(data.n_classes))
        positive = POSITIVE_CLASS.get(data.name, labels[0])
        positive_code = labels.index(positive) if positive in labels else 0
        tuning, report = split_tuning(data.n_rows)
        tables.append(ClassificationTable(data.name, data, tuning, report,
                                          onehot_rows(np.asarray(data.X), data.domain_sizes),
                                          (np.asarray(data.y) == positive_code).astype(int),
                                          str(labels[positive_code]), source))
    return tables
