"""Building package data: the shipped, pre-trained ChoiceMakers (`jostle train --all`).

Trains, on the public corpora, every ChoiceMaker the standard library declares (`stdlib/*.jst`:
`histograms`, `trees`, and each new family's module), through the same language values a
program gets, so the request keys match exactly what `import histograms` will ask for; then
writes each as package data (`jostle.choicemaker.pretrained.save_shipped`). It runs the
standard library in a scratch session with no private data: nothing here reads private data.
"""

from __future__ import annotations

import importlib
import time
from pathlib import Path
from typing import Any, Callable

from jostle.choicemaker import engine
from jostle.choicemaker.pretrained import request_key, save_shipped, shipped_folder


class UnknownChoiceMaker(ValueError):
    """A label given to `build_all(only=...)` that no standard module declares."""


def standard_choicemakers() -> list[tuple[str, Any]]:
    """(stdlib module, ChoiceMaker value) for every ChoiceMaker the standard library declares."""
    from jostle.language.choice import ChoiceMaker
    from jostle.session import Session

    stdlib = Path(importlib.import_module("jostle.stdlib").__file__).parent
    found = []
    for path in sorted(stdlib.glob("*.jst")):
        session = Session()
        session.run(f"import {path.stem}\n")
        module = session.interpreter.globals.lookup(path.stem)
        for name, value in module.env.values.items():
            if isinstance(value, ChoiceMaker) and value.corpus is not None:
                found.append((f"{path.stem}.{name}", value))
    return found


def build_all(n_jobs: int = -1, progress: bool = True, out: Callable[[str], None] = print,
              only: list[str] | None = None) -> list[Path]:
    """Train every standard ChoiceMaker and write it as package data (`jostle train --all`).

    Args:
        n_jobs: Processes for the experience (-1: every core).
        progress: Show progress bars.
        out: Where the one-line reports go.
        only: Labels ("trees.chooser", as `standard_choicemakers` names them) to train; the
            others are left as shipped (default: all of them).

    Files of earlier builds that no standard ChoiceMaker requests any more are removed.

    Raises:
        UnknownChoiceMaker: A label of `only` that no standard module declares (nothing is trained).
    """
    makers = standard_choicemakers()
    if only:
        unknown = sorted(set(only) - {label for label, _ in makers})
        if unknown:
            raise UnknownChoiceMaker(f"no standard ChoiceMaker {', '.join(unknown)}; the standard library declares "
                             f"{', '.join(label for label, _ in makers)}")
    written: list[Path] = []
    requested: set[str] = set()
    missing: list[str] = []
    for label, maker in makers:
        family = maker.family
        options, metafeatures = maker.engine_parts()
        grid = maker.grid or family.default_grid()
        corpus = maker.corpus.corpus
        key = request_key(family, options, metafeatures, corpus, grid, float(maker.share))
        requested.add(key)
        if only and label not in only:
            if not (shipped_folder(family) / f"{key}.joblib").exists():
                missing.append(label)
            continue
        start = time.perf_counter()
        trained = engine.train(family, options, metafeatures, corpus, grid, float(maker.share), n_jobs=n_jobs,
                               progress=progress)
        seconds = time.perf_counter() - start
        path = save_shipped(trained, key, maker.corpus.description, seconds)
        written.append(path)
        out(f"{label}: {family.name}, {len(options)} options, modes {sorted(set(trained.modes.values()))}, "
            f"trained in {seconds:.0f} s -> {path} ({path.stat().st_size / 1e6:.1f} MB)")
    for folder in {p.parent for p in written}:
        for stale in folder.glob("*.joblib"):
            if stale.stem not in requested:
                stale.unlink()
                out(f"removed stale {stale}")
    if missing:
        out(f"not shipped, and not retrained by --only: {', '.join(missing)} (their first use trains on "
            f"the user's machine; `jostle train --all --only {missing[0]}` ships it)")
    return written
