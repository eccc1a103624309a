"""The experience table: every Option of a family run on every public training input, scored.

For each task of a public corpus, each piece of it (`Family.pieces`, the cache unit) and each
seeded instance drawn from the piece (`Family.instances`), and for each mode of the family:
  1. the metafeatures are measured WITH simulated noise at the budget they get at run time, by
     the code path of `dispatch` (`measurement.measure_features`); mode "public" measures only
     the free metafeatures and gives the Option the whole budget;
  2. every Option runs with the budget left for it (`Family.run_option`, given its typed part
     of the plan) and is scored by the family's error measure (`Family.option_error`; across
     families, each Option by its own family's measure of the ChoiceMaker's name).
The instances' budgets are the family's grid of pure epsilons; the table keeps the float
`option_epsilon` column it always had (the pure epsilon the Options ran at) and adds `measure`,
the measure of the instance's budget ("pure"). Pieces cached before the column existed are
pure ones and read as such (`with_measure`), so cached experience stays usable.
Everything here runs on public data with the family's seeded simulation noise, never on
private data and never with a secure noise source.

The table is data: one pickle per piece under `<cache>/experience/<family>/`, named by a content
hash of the family's code, the task, the piece, the Options (each with the family that runs it:
a single family's fingerprint starts with its name, a `CombinedFamily` keys each Option on its
own family), the metafeatures, the grid and the share, so re-running reuses it and adding a task
runs only that task. The work is spread over
processes with joblib and shows a tqdm progress bar.
"""

from __future__ import annotations

import hashlib
import os
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from jostle.choicemaker.budgets import PURE, measure_of
from jostle.choicemaker.family import Family, fingerprint, run_epsilon, stable_seed
from jostle.choicemaker.measurement import measure_features

EXPERIENCE_VERSION = "3"
FEATURE_PREFIX = "mf_"

# Pieces computed (not loaded from the cache) in this process, per family; tests and callers
# read it to see whether training reused the cache.
RUN_STATS: dict[str, int] = {"pieces_computed": 0, "pieces_loaded": 0}


def default_cache_dir() -> Path:
    """$JOSTLE_CACHE, or ~/.cache/jostle."""
    return Path(os.environ.get("JOSTLE_CACHE") or Path.home() / ".cache" / "jostle")


def digest(parts: list[str]) -> str:
    """A short content hash of text parts."""
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def public_metafeatures(metafeatures: list[Any]) -> list[Any]:
    """The free metafeatures that need nothing released first (what mode "public" measures)."""
    return [m for m in metafeatures if not m.cost and not getattr(m, "requires", ())]


def run_piece(family: Family, task: Any, piece: Any, options: list[Any], metafeatures: list[Any],
              grid: Any, mf_share: float) -> pd.DataFrame:
    """Experience rows of one piece: every instance, mode and Option."""
    rows = []
    free = public_metafeatures(metafeatures)
    for instance in family.instances(task, piece, grid):
        for mode in family.modes:
            features = list(metafeatures) if mode == "measured" else free
            share = mf_share if mode == "measured" and any(m.cost for m in features) else 0.0
            prefix = (*instance.seed_parts, mode) if len(family.modes) > 1 else tuple(instance.seed_parts)
            measured = measure_features(family, features, instance.data, instance.budget, share,
                                        family.simulation_noise(stable_seed(*prefix, "features")))
            option_budget = measured.option_budget
            common = {**instance.columns, "mode": mode, "option_epsilon": run_epsilon(option_budget),
                      "measure": measure_of(instance.budget)}
            common.update({FEATURE_PREFIX + k: v for k, v in measured.features.items()})
            for option in options:
                noise = family.simulation_noise(stable_seed(*prefix, option.name))
                start = time.perf_counter()
                result = family.run(option, instance.data, option_budget, noise, measured.features)
                seconds = time.perf_counter() - start
                error = family.option_error(option, instance, result)
                rows.append({**common, "option": option.name, "error": float(error),
                             "seconds": seconds, "failed": bool(family.failed(result))})
    return pd.DataFrame(rows)


def _picklable(objects: list[Any]) -> bool:
    """Whether joblib's worker processes can receive `objects` (joblib pickles with cloudpickle)."""
    try:
        import cloudpickle as pickler
    except ImportError:
        import pickle as pickler
    try:
        pickler.dumps(objects)
        return True
    except Exception:
        return False


def experience_table(family: Family, options: list[Any], metafeatures: list[Any], corpus: Any,
                     grid: Any, mf_share: float = 0.1, cache_dir: str | Path | None = None,
                     n_jobs: int = -1, progress: bool = True,
                     before_training: Callable[[int], None] | None = None,
                     after_first: Callable[[float, float, list[float]], None] | None = None) -> pd.DataFrame:
    """Build (or load from the cache) the experience table of `options` on `corpus`.

    `before_training(pieces)` is called before any piece runs; `after_first(seconds, cost,
    remaining_costs)`, when given and more than one piece is to run, after the first (largest)
    piece ran in this process, with its time and the family's `piece_cost` of it and of the
    others, so that a caller can state a measured estimate of the rest.

    Returns:
        One row per (instance, mode, Option) with the instance's columns, mode,
        option_epsilon, measure, mf_<feature> for every measured metafeature (NaN where a mode does not
        measure it), option, error, seconds and failed.
    """
    folder = (Path(cache_dir) if cache_dir is not None else default_cache_dir()) / "experience" / family.name
    folder.mkdir(parents=True, exist_ok=True)
    common = [EXPERIENCE_VERSION, family.fingerprint, digest([family.option_fingerprint(o) for o in options]),
              digest([fingerprint(m) for m in metafeatures]), grid.digest(), repr(float(mf_share))]
    pieces: list[pd.DataFrame] = []
    todo = []
    for task in corpus:
        for label, piece in family.pieces(task, grid, options):
            piece_options = family.piece_options(task, piece, options)
            if not piece_options:
                continue
            key = digest([*common, task.content_hash(), label])
            path = folder / f"{key}.pkl"
            if path.exists():
                pieces.append(with_measure(pd.read_pickle(path)))
                RUN_STATS["pieces_loaded"] += 1
            else:
                todo.append((path, task, piece, piece_options))
    if todo:
        if before_training is not None:
            before_training(len(todo))
        if n_jobs != 1 and not _picklable([t[3] for t in todo] + list(metafeatures)):
            warnings.warn("options or metafeatures cannot be sent to worker processes; training in this process")
            n_jobs = 1
        from joblib import Parallel, delayed
        from joblib.parallel import get_active_backend
        from tqdm.auto import tqdm

        todo.sort(key=lambda item: -family.piece_cost(item[1], item[2]))  # big pieces first
        bar = tqdm(total=len(todo), desc=f"{family.name} ChoiceMaker training", unit="piece",
                   disable=not progress)
        if after_first is not None and len(todo) > 1:  # time one piece here, then estimate the rest
            (path, task, piece, piece_options), todo = todo[0], todo[1:]
            start = time.perf_counter()
            frame = run_piece(family, task, piece, piece_options, metafeatures, grid, mf_share)
            _store(path, frame, pieces)
            bar.update(1)
            after_first(time.perf_counter() - start, float(family.piece_cost(task, piece)),
                        [float(family.piece_cost(item[1], item[2])) for item in todo])
        jobs = (delayed(run_piece)(family, task, piece, piece_options, metafeatures, grid, mf_share)
                for _, task, piece, piece_options in todo)
        # The active joblib backend runs the pieces (`with joblib.parallel_config(backend="spark")`
        # with joblib-spark puts them on a cluster); one that cannot yield them as they finish
        # (joblib-spark's, multiprocessing) gives them all at the end.
        one_by_one = get_active_backend()[0].supports_return_generator
        results = Parallel(n_jobs=n_jobs, return_as="generator" if one_by_one else "list")(jobs)
        for (path, *_), frame in zip(todo, results):
            _store(path, frame, pieces)
            bar.update(1)
        bar.close()
    if not pieces:
        raise ValueError("no experience: the corpus has no task that any option handles")
    table = pd.concat(pieces, ignore_index=True)
    keys = [c for c in (*family.config_columns, family.segment_column, "rep", "mode", "option")
            if c is not None and c in table.columns]
    return table.sort_values(keys, kind="stable").reset_index(drop=True)


def _store(path: Path, frame: pd.DataFrame, pieces: list[pd.DataFrame]) -> None:
    """Cache one computed piece (atomically: a crash never leaves half a piece) and keep it."""
    temporary = path.with_suffix(f".tmp{os.getpid()}")
    frame.to_pickle(temporary)
    temporary.replace(path)
    pieces.append(frame)
    RUN_STATS["pieces_computed"] += 1


def with_measure(piece: pd.DataFrame) -> pd.DataFrame:
    """A cached piece with its `measure` column: pieces written before the column existed were
    all run with pure epsilons."""
    if "measure" not in piece.columns and len(piece):
        piece = piece.assign(measure=PURE)
    return piece


def experience_digest(table: pd.DataFrame) -> str:
    """Content hash of an experience table (for caching fitted models)."""
    hashed = pd.util.hash_pandas_object(table, index=False).to_numpy()
    return hashlib.sha256(hashed.tobytes() + ",".join(table.columns).encode()).hexdigest()[:24]
