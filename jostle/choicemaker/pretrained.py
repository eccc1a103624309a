"""ChoiceMakers trained at build time on public corpora and shipped with the package.

A trained ChoiceMaker is a function of public data only (the corpus, the grid, the Options' and
metafeatures' code), so it may ship as package data. `jostle train --all` (`build_all`) trains
every ChoiceMaker the standard library declares (stdlib `histograms`, `trees`, and each new
family's module) and writes, per ChoiceMaker, one file under
`jostle/learners/<family>/pretrained/<key>.joblib` holding the fitted meta-models, the
leave-one-dataset-out report and a summary of the experience (mean error per Option, segment,
mode and epsilon), not the experience itself.

`<key>` is the *request key* (`request_key`): a hash of everything training depends on — the
engine's versions, the family's code, every Option's and metafeature's fingerprint (their source
code), the corpus's content, the grid, the metafeature share and the meta-model kinds. At
load time the key is recomputed from the code as it is now, so a shipped model is used only if
it was trained by this very code on this very corpus; the file also stores its key and the
scikit-learn version that fitted it, both checked again on load.

`load_or_train` is what a program's ChoiceMaker calls: a shipped model when one matches, else
the user's cache, else training, announced first on stderr (what is trained, roughly how long,
where it is cached). The standard library's ChoiceMakers always match (a test checks that the
shipped files are current); a program that declares its own ChoiceMaker trains it once.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from jostle.choicemaker import engine, error_estimates, experience
from jostle.choicemaker.family import Family, fingerprint
from jostle.choicemaker.model import MODEL_KINDS

SHIPPED_VERSION = "1"


def shipped_folder(family: Family) -> Path:
    """Where a family's shipped ChoiceMakers live: `jostle/learners/<family>/pretrained/`."""
    module = importlib.import_module(family.module_name)
    return Path(module.__file__).resolve().parent / "pretrained"


def corpus_digest(corpus: Any) -> str:
    """Content hash of a corpus (its tasks' content hashes, in order)."""
    return experience.digest([task.content_hash() for task in corpus])


def request_key(family: Family, options: list[Any], metafeatures: list[Any], corpus: Any, grid: Any,
                mf_share: float, model_kinds: tuple[str, ...] = MODEL_KINDS, selection_folds: int | None = None) -> str:
    """The identity of a training request: equal keys train equal ChoiceMakers."""
    parts = [SHIPPED_VERSION, engine.MODEL_VERSION, experience.EXPERIENCE_VERSION, family.fingerprint,
             *[family.option_fingerprint(o) for o in options], "#", *[fingerprint(m) for m in metafeatures], "#",
             corpus_digest(corpus), grid.digest(), repr(float(mf_share)), ",".join(model_kinds), str(selection_folds)]
    if family.regret_measure != "ratio":  # keys trained with the default measure stay as they were
        parts.append(f"regret:{family.regret_measure}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def _sklearn_version() -> str:
    import sklearn

    return sklearn.__version__


def summarise_experience(table: pd.DataFrame, family: Family) -> pd.DataFrame:
    """Mean, spread, count and quantiles of each Option's error per segment, mode, epsilon and
    size (the experience's size column, `error_estimates.size_column`): what
    `error_estimates.estimate_error` reads from a shipped model (public training data)."""
    sizes = error_estimates.size_column(family, table)
    keys = [c for c in (family.segment_column, "mode", "epsilon", sizes, "option") if c and c in table.columns]
    grouped = table.groupby(keys, observed=True)["error"]
    summary = grouped.agg(["mean", "std", "count"]).reset_index()
    quantiles = grouped.apply(error_estimates.summary_quantiles).unstack().reset_index()
    summary = summary.merge(quantiles, on=keys)
    return summary.rename(columns={"mean": "mean_error", "std": "std_error", "count": "runs"})


def load_shipped(family: Family, key: str, options: list[Any], metafeatures: list[Any],
                 mf_share: float) -> engine.TrainedChoiceMaker | None:
    """The shipped ChoiceMaker of this request, or None (none shipped, or made by other code)."""
    path = shipped_folder(family) / f"{key}.joblib"
    if not path.exists():
        return None
    import joblib

    stored = joblib.load(path)
    if stored.get("key") != key or stored.get("sklearn") != _sklearn_version():
        return None  # trained by other code or another scikit-learn: do not trust its pickles
    return engine.TrainedChoiceMaker(family, {o.name: o for o in options}, list(metafeatures), float(mf_share),
                                     stored["models"], stored["modes"], stored["experience_summary"],
                                     stored["report"], True, True, origin="shipped",
                                     intervals=stored.get("intervals"), selection=stored.get("selection"))


def save_shipped(trained: engine.TrainedChoiceMaker, key: str, corpus_name: str, seconds: float) -> Path:
    """Write a trained ChoiceMaker as the shipped model of its request key."""
    import joblib

    folder = shipped_folder(trained.family)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{key}.joblib"
    payload = {
        "key": key, "sklearn": _sklearn_version(), "family": trained.family.name,
        "options": list(trained.options), "metafeatures": [m.name for m in trained.metafeatures],
        "mf_share": trained.mf_share, "corpus": corpus_name, "training_seconds": round(seconds, 1),
        "models": trained.models, "modes": trained.modes, "report": trained.report,
        "intervals": trained.intervals, "selection": trained.selection,
        "experience_summary": summarise_experience(trained.experience, trained.family),
    }
    temporary = path.with_suffix(f".tmp{os.getpid()}")
    joblib.dump(payload, temporary, compress=3)
    temporary.replace(path)
    return path


def _cores(n_jobs: int | None) -> int:
    return (os.cpu_count() or 1) if n_jobs in (-1, None) else max(int(n_jobs), 1)


def _duration(seconds: float) -> str:
    minutes = seconds / 60.0
    return "under a minute" if minutes < 1 else "about a minute" if minutes < 1.5 else f"about {minutes:.0f} minutes"


def announce(family: Family, pieces: int, n_jobs: int, cache: Path, out: Callable[[str], None]) -> None:
    """Tell the user, before training starts, what is trained, where it goes, and that the time
    will be measured on the first piece (a family's rough time per piece depends on the number of
    Options and the corpus, so it is not quoted as an estimate)."""
    cores = _cores(n_jobs)
    out(f"jostle: training a {family.name} ChoiceMaker on its public corpus ({pieces} pieces to run on {cores} "
        f"core{'s' if cores > 1 else ''}); no shipped model matches this ChoiceMaker. The experience is cached "
        f"in {cache}, so this happens once. The time left is measured on the first piece.")


def measured_estimate(first_seconds: float, first_cost: float, remaining_costs: list[float], cores: int,
                      out: Callable[[str], None]) -> float:
    """Estimate the time left from the first piece's time, scaled by the family's relative
    `piece_cost` of the other pieces and spread over `cores`; say it; return it in seconds."""
    per_cost = first_seconds / max(first_cost, 1e-9)
    seconds = per_cost * sum(remaining_costs) / max(cores, 1)
    out(f"jostle: the first piece took {first_seconds:.1f} s (measured); the {len(remaining_costs)} left should "
        f"take {_duration(seconds)} on {cores} core{'s' if cores > 1 else ''}.")
    return seconds


def load_or_train(family: Family, options: list[Any], metafeatures: list[Any], corpus: Any, grid: Any = None,
                  mf_share: float = 0.1, n_jobs: int = -1, progress: bool = True, corpus_name: str = "",
                  cache_dir: str | Path | None = None,
                  out: Callable[[str], None] | None = None) -> engine.TrainedChoiceMaker:
    """A shipped ChoiceMaker when one matches this request; else train (announced), reusing the cache."""
    grid = grid or family.default_grid()
    key = request_key(family, options, metafeatures, corpus, grid, mf_share)
    shipped = load_shipped(family, key, options, metafeatures, mf_share)
    if shipped is not None:
        return shipped
    say = out or (lambda text: print(text, file=sys.stderr, flush=True))

    def before(pieces: int) -> None:
        cache = Path(cache_dir) if cache_dir is not None else experience.default_cache_dir()
        announce(family, pieces, n_jobs, cache, say)

    def after_first(seconds: float, cost: float, remaining: list[float]) -> None:
        measured_estimate(seconds, cost, remaining, min(_cores(n_jobs), max(len(remaining), 1)), say)

    return engine.train(family, options, metafeatures, corpus, grid, mf_share, cache_dir, n_jobs, progress,
                        before_training=before, after_first=after_first)
