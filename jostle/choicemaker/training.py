"""The experience table: every Option run on every public shape over a grid, with its error.

For each shape of the corpus, each domain size, scale, epsilon and repetition of a
`TrainingGrid`, `experience_table`:
  1. makes an input by drawing `scale` records from the shape on the domain (DPBench);
  2. measures the metafeatures WITH simulated noise at the budget they get at run time, by
     the same code path as `dispatch` (`metafeatures.measure_features`);
  3. runs every Option that handles the dimensionality with the budget left for the Option,
     and scores it with DPBench's error: mean per-query L1 error on the range workload
     divided by the scale (`jostle.histograms.workloads.scaled_error`).
Everything here runs on public data with `SimulationNoise` (seeded, fast, reproducible).

The table is data: one CSV per (shape, domain size) under `<cache_dir>/experience/`, named by
a content hash of the shape, the Options, the metafeatures, the grid, the metafeature share
and this module's version, so re-running a program reuses it and adding a shape runs only
that shape. The work is spread over processes with joblib and shows a tqdm progress bar.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import warnings
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jostle.choicemaker.corpus import Corpus, Shape, rebin
from jostle.choicemaker.metafeatures import measure_features, metafeatures_digest
from jostle.choicemaker.options import fingerprint, option_dims
from jostle.choicemaker.simulation import SimulationNoise
from jostle.histograms.data import sample_from_shape
from jostle.histograms.workloads import RangeWorkload, prefix_1d, random_rectangles_2d, scaled_error

EXPERIENCE_VERSION = "1"
FEATURE_PREFIX = "mf_"
KEY_COLUMNS = ["shape", "group", "dims", "domain", "domain_size", "scale", "epsilon", "rep"]

# Counts experience pieces computed (not loaded from the cache) in this process; tests and
# callers can read it to see whether a training run reused the cache.
RUN_STATS = {"pieces_computed": 0, "pieces_loaded": 0}


@dataclass(frozen=True)
class TrainingGrid:
    """The configurations each shape is run on.

    Attributes:
        scales: Numbers of records.
        domains_1d: Domain sizes of 1D inputs.
        domains_2d: Side lengths of square 2D inputs.
        epsilons: Total budgets of the ChoiceMaker call (the Option gets 1 - mf_share of it).
        repetitions: Independent inputs and noise draws per configuration.
        queries_2d: Number of random rectangles of the 2D workload (1D uses Prefix).
        first_rep: Index of the first repetition; inputs and noise are seeded by it, so a
            grid with another first_rep draws independent inputs (e.g. for evaluation).
    """

    scales: tuple[int, ...] = (1_000, 10_000, 100_000, 1_000_000)
    domains_1d: tuple[int, ...] = (256, 1024)
    domains_2d: tuple[int, ...] = (32, 64)
    epsilons: tuple[float, ...] = (0.01, 0.1, 1.0)
    repetitions: int = 2
    queries_2d: int = 2000
    first_rep: int = 0

    @classmethod
    def quick(cls) -> "TrainingGrid":
        """The default grid for a program run: a few minutes on 2 cores for the default corpus."""
        return cls()

    def domains(self, dims: int) -> tuple[tuple[int, ...], ...]:
        return tuple((d,) for d in self.domains_1d) if dims == 1 else \
            tuple((d, d) for d in self.domains_2d)

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]


def default_workload(domain_shape: tuple[int, ...], queries_2d: int = 2000) -> RangeWorkload:
    """DPBench's workloads: Prefix in 1D, `queries_2d` random rectangles (seed 0) in 2D."""
    if len(domain_shape) == 1:
        return prefix_1d(domain_shape[0])
    return random_rectangles_2d(tuple(domain_shape), queries_2d, seed=0)


def default_cache_dir() -> Path:
    """$JOSTLE_CACHE, or ~/.cache/jostle."""
    return Path(os.environ.get("JOSTLE_CACHE") or Path.home() / ".cache" / "jostle")


def options_digest(options: list[Any]) -> str:
    return hashlib.sha256("\n".join(fingerprint(o) for o in options).encode()).hexdigest()[:16]


def _seed(*parts: Any) -> int:
    """A stable 32-bit seed from the parts' text (same on every machine and run)."""
    return zlib.crc32("|".join(str(p) for p in parts).encode())


def domain_label(domain: tuple[int, ...]) -> str:
    return "x".join(str(d) for d in domain)


def sample_input(base: np.ndarray, tag: str, domain: tuple[int, ...], scale: int,
                 rep: int) -> np.ndarray:
    """The input of repetition `rep`: `scale` records drawn from the rebinned shape `base`
    (seeded by the shape's hash `tag`, the domain, the scale and `rep`)."""
    return sample_from_shape(base, int(scale), seed=_seed(tag, domain, scale, rep, "data"))


ERROR_MEASURES = {"scaled_l1": "l1", "scaled_l2": "l2"}


def run_piece(shape: Shape, domain: tuple[int, ...], options: list[Any], metafeatures: list[Any],
              grid: TrainingGrid, mf_share: float, error: str = "scaled_l1") -> pd.DataFrame:
    """Experience rows of one shape on one domain: every scale, epsilon, repetition, Option."""
    base = rebin(shape.values, domain)
    workload = default_workload(domain, grid.queries_2d)
    feature_list = list(metafeatures)
    rows = []
    tag = shape.content_hash()
    for scale in grid.scales:
        for rep in range(grid.first_rep, grid.first_rep + grid.repetitions):
            x = sample_input(base, tag, domain, scale, rep)
            for epsilon in grid.epsilons:
                noise = SimulationNoise(_seed(tag, domain, scale, epsilon, rep, "features"))
                measured = measure_features(feature_list, x, epsilon, mf_share, noise)
                common = {"shape": shape.name, "group": shape.group, "dims": len(domain),
                          "domain": domain_label(domain), "domain_size": int(np.prod(domain)),
                          "scale": int(scale), "epsilon": float(epsilon), "rep": rep,
                          "option_epsilon": measured.option_epsilon}
                common.update({FEATURE_PREFIX + k: v for k, v in measured.features.items()})
                for option in options:
                    option_noise = SimulationNoise(_seed(tag, domain, scale, epsilon, rep, option.name))
                    start = time.perf_counter()
                    estimate = option.run(x, measured.option_epsilon, workload, option_noise)
                    seconds = time.perf_counter() - start
                    failed = not np.all(np.isfinite(estimate))
                    if failed:  # a non-finite estimate is scored as releasing nothing
                        estimate = np.zeros_like(x)
                    score = scaled_error(workload, x, estimate, scale=float(scale),
                                         norm=ERROR_MEASURES[error])
                    rows.append({**common, "option": option.name, "error": score,
                                 "seconds": seconds, "failed": failed})
    return pd.DataFrame(rows)


def _piece_key(shape: Shape, domain: tuple[int, ...], options_key: str, features_key: str,
               grid: TrainingGrid, mf_share: float, error: str) -> str:
    text = "|".join([EXPERIENCE_VERSION, shape.content_hash(), domain_label(domain), options_key,
                     features_key, grid.digest(), repr(float(mf_share)), error])
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _picklable(objects: list[Any]) -> bool:
    """Whether joblib's worker processes can receive `objects` (joblib pickles with
    cloudpickle, which handles closures; plain pickle is the fallback check)."""
    try:
        import cloudpickle as pickler
    except ImportError:
        import pickle as pickler
    try:
        pickler.dumps(objects)
        return True
    except Exception:
        return False


def experience_table(options: list[Any], metafeatures: list[Any], corpus: Corpus,
                     grid: TrainingGrid | None = None, mf_share: float = 0.1,
                     cache_dir: str | Path | None = None, n_jobs: int = -1,
                     progress: bool = True, error: str = "scaled_l1") -> pd.DataFrame:
    """Build (or load from the cache) the experience table of `options` on `corpus`.

    Args:
        options: Option-like objects (`name`, `dims`, `run`).
        metafeatures: Metafeature-like objects (`name`, `cost`, `measure`, optional `requires`).
        corpus: Public shapes.
        grid: Configurations (default `TrainingGrid.quick()`).
        mf_share: Share of epsilon the metafeatures get (as at run time).
        cache_dir: Cache folder (default `default_cache_dir()`).
        n_jobs: joblib processes (-1: all cores).
        progress: Show a tqdm progress bar.
        error: "scaled_l1" (DPBench's mean absolute per-query error over the scale) or
            "scaled_l2" (root mean squared per-query error over the scale).

    Returns:
        One row per (shape, domain, scale, epsilon, repetition, option) with the columns
        KEY_COLUMNS, option_epsilon, mf_<feature> for every measured metafeature, option,
        error, seconds and failed (the Option returned non-finite values; its error is then
        that of an all-zero estimate).
    """
    grid = grid or TrainingGrid.quick()
    if error not in ERROR_MEASURES:
        raise ValueError(f"unknown error measure {error!r}; use one of {sorted(ERROR_MEASURES)}")
    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    folder = folder / "experience"
    folder.mkdir(parents=True, exist_ok=True)
    options_key = options_digest(options)
    features_key = metafeatures_digest(list(metafeatures))
    pieces: dict[str, pd.DataFrame] = {}
    todo = []
    for shape in corpus:
        shape_options = [o for o in options if shape.dims in option_dims(o)]
        if not shape_options:
            continue
        for domain in grid.domains(shape.dims):
            key = _piece_key(shape, domain, options_key, features_key, grid, mf_share, error)
            path = folder / f"{key}.csv"
            if path.exists():
                pieces[key] = pd.read_csv(path, dtype={"domain": str})
                RUN_STATS["pieces_loaded"] += 1
            else:
                todo.append((key, path, shape, domain, shape_options))
    if todo:
        if n_jobs != 1 and not _picklable([t[4] for t in todo] + list(metafeatures)):
            warnings.warn("options or metafeatures cannot be sent to worker processes; "
                          "training in this process")
            n_jobs = 1
        from joblib import Parallel, delayed
        from tqdm.auto import tqdm
        jobs = (delayed(run_piece)(shape, domain, shape_options, metafeatures, grid, mf_share, error)
                for _, _, shape, domain, shape_options in todo)
        results = Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
        bar = tqdm(total=len(todo), desc="ChoiceMaker training", unit="piece", disable=not progress)
        for (key, path, *_), frame in zip(todo, results):
            temporary = path.with_suffix(f".tmp{os.getpid()}")
            frame.to_csv(temporary, index=False)
            temporary.replace(path)  # atomic: a crash never leaves half a piece
            pieces[key] = frame
            RUN_STATS["pieces_computed"] += 1
            bar.update(1)
        bar.close()
    if not pieces:
        raise ValueError("no experience: the corpus has no shape that any option handles")
    table = pd.concat(list(pieces.values()), ignore_index=True)
    return table.sort_values(KEY_COLUMNS + ["option"], kind="stable").reset_index(drop=True)


def experience_digest(table: pd.DataFrame) -> str:
    """Content hash of an experience table (for caching fitted models)."""
    hashed = pd.util.hash_pandas_object(table, index=False).to_numpy()
    return hashlib.sha256(hashed.tobytes() + ",".join(table.columns).encode()).hexdigest()[:24]
