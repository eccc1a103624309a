"""Built-ins of the ChoiceMaker: histogram options, metafeatures, workloads, corpora, traces.

Registered into the same registry as every other built-in (jostle.builtins.REGISTRY):

  * the histogram algorithms of jostle.histograms as options (`Identity`, `Uniform`, `HB`,
    `Privelet`, `MWEM`, `DAWA`, `AHP`, `UGrid`, `AGrid`, `QuadTree`, as the engine provides
    them), called `DAWA(h, queries, epsilon=E)`;
  * the built-in metafeatures (`size`, `domain_size`, `sparsity`, `uniformity`, ...), listed in
    `informed by {...}`;
  * workloads (`all_ranges(n)`, `prefixes(n)`, `random_ranges(n, k)`,
    `random_rectangles(rows, cols, k)`), public by construction;
  * corpora (`histogram_corpus()`, `dpbench_corpus(dir)`), public data to train on;
  * `trace(H)` (the list of dispatch records) and `explain(H)` (the same, as text).

Workload sizes and corpora are public inputs: nothing here reads private data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from jostle import choicemaker as engine
from jostle.dispatch import (
    BuiltinMetafeature,
    BuiltinOption,
    ChoiceMaker,
    CorpusValue,
    WorkloadValue,
    explain,
)
from jostle.errors import JostleRuntimeError
from jostle.histograms import workloads as W
from jostle.sensitivity import refuse
from jostle.values import Private, Record, is_private, type_name

MAX_QUERIES = 1_000_000


def _whole(value: Any, name: str, span: Any, low: int = 1, high: int = 1 << 24) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) and not (
            isinstance(value, float) and value.is_integer()):
        raise JostleRuntimeError(f"{name} must be a whole number, got {value!r}", span)
    number = int(value)
    if not low <= number <= high:
        raise JostleRuntimeError(f"{name} must be between {low} and {high}, got {number}", span)
    return number


def register(builtin: Any, registry: dict[str, Any]) -> None:
    """Add this module's built-ins to `registry` (called once by jostle.builtins)."""

    @builtin("all_ranges", 1, privacy="choice", doc="all_ranges(n): every range [i, j) of a 1D domain of n cells")
    def _all_ranges(interp, span, n):
        cells = _whole(n, "the domain size", span)
        return WorkloadValue(W.AllRanges1D(cells), f"all ranges of {cells} cells")

    @builtin("prefixes", 1, privacy="choice", doc="prefixes(n): the n prefix ranges [0, j) of a 1D domain")
    def _prefixes(interp, span, n):
        cells = _whole(n, "the domain size", span)
        return WorkloadValue(W.prefix_1d(cells), f"prefixes of {cells} cells")

    @builtin("random_ranges", 2, keywords=("seed",),
             privacy="choice", doc="random_ranges(n, k, seed=0): k random ranges of a 1D domain of n cells")
    def _random_ranges(interp, span, n, k, seed=0):
        cells = _whole(n, "the domain size", span)
        count = _whole(k, "the number of queries", span, 1, MAX_QUERIES)
        return WorkloadValue(W.random_ranges_1d(cells, count, seed=_whole(seed, "seed", span, 0, 2**31)),
                             f"{count} random ranges")

    @builtin("random_rectangles", 3, keywords=("seed",),
             privacy="choice", doc="random_rectangles(rows, cols, k, seed=0): k random rectangles of a 2D domain")
    def _random_rectangles(interp, span, rows, cols, k, seed=0):
        shape = (_whole(rows, "rows", span), _whole(cols, "cols", span))
        count = _whole(k, "the number of queries", span, 1, MAX_QUERIES)
        return WorkloadValue(W.random_rectangles_2d(shape, count, seed=_whole(seed, "seed", span, 0, 2**31)),
                             f"{count} random rectangles")

    @builtin("histogram_corpus", 0, 1,
             privacy="choice", doc="histogram_corpus(dims=1): the bundled public corpus of histogram shapes (offline)")
    def _histogram_corpus(interp, span, dims=1):
        which = _whole(dims, "dims", span, 1, 2)
        return CorpusValue(engine.default_corpus(which), f"bundled {which}D shapes")

    @builtin("dpbench_corpus", 1, 2, privacy="choice", doc="dpbench_corpus(dir, dims=1): DPBench .npy shapes under dir")
    def _dpbench_corpus(interp, span, directory, dims=1):
        if not isinstance(directory, str):
            raise JostleRuntimeError(f"a directory is a string, got a {type_name(directory)}", span)
        which = _whole(dims, "dims", span, 1, 2)
        path = Path(directory)
        if not path.is_dir():
            raise JostleRuntimeError(f"no directory {directory}", span, "give the folder holding dpbench/1D and dpbench/2D")
        return CorpusValue(engine.dpbench_corpus(path, which), f"DPBench {which}D shapes in {directory}")

    @builtin("zeros", 1, privacy="aware",
             doc="zeros(h): the number of cells of a histogram that are 0 (private for a private h)")
    def _zeros(interp, span, value):
        if isinstance(value, Private):
            if not value.is_vector or not value.integer:
                raise JostleRuntimeError("zeros() needs a histogram of whole-number counts", span,
                                         'make one with histogram(t, "column")')
            # Neighbours change the integer counts by at most l1 in total, so at most l1 cells
            # change at all, and each flips its is-zero status at most once: sensitivity l1.
            count = int(np.count_nonzero(np.asarray(value.value) == 0))
            return Private(count, value.l1, value.l1, span, f"zeros at {span.short}", value.node, integer=True)
        if is_private(value):
            raise refuse("zeros() needs a histogram", value, span)
        if not isinstance(value, (tuple, np.ndarray)):
            raise JostleRuntimeError(f"zeros() needs a list of counts, got a {type_name(value)}", span)
        try:
            counts = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise JostleRuntimeError("zeros() needs a list of numbers", span,
                                     "pass a histogram or a list of counts, e.g. zeros([0, 3, 0])") from None
        return int(np.count_nonzero(counts == 0))

    @builtin("trace", 1, privacy="choice", doc="trace(H): a record per dispatch of ChoiceMaker H (public)")
    def _trace(interp, span, maker):
        if not isinstance(maker, ChoiceMaker):
            raise JostleRuntimeError(f"trace() needs a ChoiceMaker, got a {type_name(maker)}", span)
        return tuple(maker.traces)

    @builtin("explain", 1, privacy="choice", doc="explain(H): the dispatches of ChoiceMaker H as text")
    def _explain(interp, span, maker):
        if not isinstance(maker, ChoiceMaker):
            raise JostleRuntimeError(f"explain() needs a ChoiceMaker, got a {type_name(maker)}", span)
        return explain(maker)

    for name, option in engine.BUILTIN_OPTIONS.items():
        registry[name] = BuiltinOption(name, option)
    from jostle.choicemaker.tree_task import TREE_METAFEATURES

    for name in dict.fromkeys([*engine.BUILTIN_METAFEATURES, *TREE_METAFEATURES]):
        registry[name] = BuiltinMetafeature(name, engine.BUILTIN_METAFEATURES.get(name), TREE_METAFEATURES.get(name))

    @builtin("tree_corpus", 0, privacy="choice",
             doc="tree_corpus(): the bundled public corpus of categorical classification tasks, plus generated ones (offline)")
    def _tree_corpus(interp, span):
        from jostle.choicemaker.tree_corpus import tree_corpus

        return CorpusValue(tree_corpus(), "bundled classification tasks", task="classification")


__all__ = ["register", "Record"]
