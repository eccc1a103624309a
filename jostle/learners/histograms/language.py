"""Histograms in the language: the algorithms as options, workloads, corpora, the choice hooks.

    h = histogram(t, "age")                          # a private vector of whole counts
    q = prefixes(16)                                 # a public workload
    answer = DAWA(h, q, epsilon=0.5)                 # a public estimate of the counts

The algorithms of `jostle.learners.histograms` are built-in options (`BuiltinOption`); the
built-in metafeatures of the family can be called on their own (`sparsity(h, epsilon=E)`) or
listed in a ChoiceMaker; `choice_call` is what the language's ChoiceMaker asks of this family.

Privacy. Options and metafeatures assume the data is a histogram whose L1 sensitivity is `l1`
(the table's stability for `histogram(t, cols)`: 1 for a row-unit table, k for an entity-unit
table bounded to k rows per entity). Algorithms are written for sensitivity 1, so they run with
epsilon / l1 (rounded down to a float, `algorithm_epsilon`): for whole-count vectors, two
neighbours differ by at most l1 unit steps, and group privacy over l1 steps of an
(epsilon/l1)-DP algorithm gives epsilon. So the family scales to the table's stability. A call's
budget is typed (`calls.budget_of`): the algorithms run at the pure epsilon within it (a rho r
in a zCDP program: the largest epsilon with epsilon^2 / 2 <= r), and that pure epsilon is what
is charged (the accountant counts it as epsilon^2 / 2 in a zCDP program). Data under a privacy
unit the family does not declare (`FAMILY.units`) is refused before any charge. The argument needs whole counts, so any other private
vector is refused before anything is charged (`histogram_data`). Workload sizes and corpora are
public inputs: nothing here reads private data to build them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from jostle.choicemaker.budgets import pure_cost, pure_epsilon_within
from jostle.choicemaker.family import MetafeatureContext
from jostle.diagnostics.errors import JostleRuntimeError
from jostle.diagnostics.source import BUILTIN_SPAN, Span
from jostle.language.calls import (BUDGET_KEYWORDS, ChoiceCall, budget_of as _budget_of,
                                   check_keywords as _check_keywords, check_unit as _check_unit)
from jostle.language.sensitivity import refuse
from jostle.language.values import CorpusValue, Private, PrivateMean, is_private, type_name
from jostle.learners.histograms import workloads as W
from jostle.learners.histograms.family import FAMILY, HistogramData
from jostle.privacy.budget import Budget, floor_float
from jostle.privacy.measures import AnyBudget
from jostle.privacy import replay

MAX_QUERIES = 1_000_000


@dataclass(frozen=True, eq=False)
class WorkloadValue:
    """A public workload of range queries over a histogram's domain."""

    public_stateless = True  # training copies may share it (jostle.language.training_boundary)

    jostle_type = "workload"

    workload: Any
    description: str

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.workload.shape)

    def __str__(self) -> str:
        return f"<workload {self.description}, {len(self.workload)} queries over {'x'.join(map(str, self.shape))}>"


FLOAT_EXACT_WHOLE = 2 ** 52  # every whole number of at most this size is a double exactly


def histogram_data(value: Any, span: Span, who: str) -> tuple[np.ndarray, float, Any, bool]:
    """(counts shaped as the domain, L1 sensitivity, data node, private?) of an option's input.

    A private input must be a vector of whole-number counts (`integer`) with a finite L1
    sensitivity: histogram options and metafeatures run at epsilon / l1 (`algorithm_epsilon`),
    which is epsilon-DP only because neighbouring inputs then differ by at most l1 unit steps.
    A scaled histogram such as h * 1e-12 moves by fractions of a step that the algorithm, made
    for steps of 1, sees as whole ones (sparsity's count of empty cells still moves by one):
    refused here, before anything is charged, on the public flags alone.
    """
    if isinstance(value, Private):
        if not value.is_vector:
            raise JostleRuntimeError(f"{who} needs a histogram (a vector of counts), got a private scalar", span,
                                     'make one with histogram(t, "column")')
        if not value.integer or not math.isfinite(value.l1) or value.l1 < 0:
            raise refuse(f"{who} needs a histogram of whole-number counts; this private vector is not one, so "
                         "its neighbours are not whole unit steps apart and the algorithm's epsilon would not "
                         "hold", value, span,
                         'pass histogram(t, "column") (or a sum or whole multiple of histograms) and scale '
                         "the released answer afterwards, which is free")
        # Whole counts are held exactly (ints); the algorithms compute in doubles. Clamping each
        # cell to +-2^52 first is 1-Lipschitz per cell (neighbours stay within l1 unit steps) and
        # never fails, and every whole number in that range converts to a double exactly; a
        # double conversion of larger values would round them by more than the steps allow.
        counts = np.clip(np.asarray(value.value), -FLOAT_EXACT_WHOLE, FLOAT_EXACT_WHOLE).astype(float)
        shape = getattr(value, "shape", None)
        if shape:
            counts = counts.reshape(shape)
        return counts, float(value.l1), value.node, True
    if isinstance(value, PrivateMean) or is_private(value):
        raise refuse(f"{who} needs a histogram, not this private value", value, span,
                     'make one with histogram(t, "column")')
    if isinstance(value, (tuple, np.ndarray)):
        counts = np.asarray(value, dtype=float)
        if counts.ndim not in (1, 2) or counts.size == 0 or not np.all(np.isfinite(counts)):
            raise JostleRuntimeError(f"{who} needs a non-empty 1D or 2D list of counts", span)
        return counts, 1.0, None, False
    raise JostleRuntimeError(f"{who} needs a histogram, got a {type_name(value)}", span,
                             'make one with histogram(t, "column")')


def algorithm_epsilon(epsilon: Fraction, l1: float) -> float:
    """The epsilon an algorithm written for unit-step neighbours runs with, given `epsilon`
    charged on a whole-count input of L1 sensitivity `l1` > 0.

    Neighbours differ by at most l1 unit steps (whole counts, `histogram_data`), and group
    privacy over them turns an (epsilon / l1)-DP run into an epsilon-DP one. The float handed to
    the algorithm is the largest one not above the exact rational epsilon / l1 (`floor_float`):
    float(epsilon) / l1 can round above what was charged (float(1/10) > 1/10).
    """
    replay.group_privacy(l1)  # the run's per-row claims hold for l1 rows by group privacy (replay audits)
    return floor_float(Fraction(epsilon) / Fraction(l1))


def _workload(value: Any, counts: np.ndarray, span: Span, who: str) -> Any:
    if not isinstance(value, WorkloadValue):
        raise JostleRuntimeError(f"{who} needs a workload of queries, got a {type_name(value)}", span,
                                 "make one with all_ranges(n), prefixes(n), random_ranges(n, k) or "
                                 "random_rectangles(rows, cols, k)")
    if tuple(value.shape) != tuple(counts.shape):
        raise JostleRuntimeError(
            f"the workload is over a domain of shape {value.shape} but the histogram has shape {counts.shape}",
            span, "build the workload for the histogram's domain (its number of cells)")
    return value.workload


@dataclass(eq=False)
class BuiltinOption:
    """A histogram algorithm of jostle.learners.histograms, callable from Jostle."""

    public_stateless = True  # training copies may share it (jostle.language.training_boundary)

    jostle_type = "option"

    name: str
    option: Any  # jostle.choicemaker HistogramOption
    privacy = "choice"
    keywords = BUDGET_KEYWORDS

    @property
    def fingerprint(self) -> str:
        return f"builtin:{self.name}"

    @property
    def dims(self) -> tuple[int, ...]:
        return tuple(FAMILY.segments(self.option))

    @property
    def engine_option(self) -> Any:
        """What the ChoiceMaker engine trains and runs (the family's Option)."""
        return self.option

    def __str__(self) -> str:
        return f"<option {self.name}>"

    task = "histogram"

    def jostle_call(self, interp: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
        who = f"{self.name}()"
        _check_keywords(kwargs, span, who)
        if len(args) != 2:
            raise JostleRuntimeError(f"{who} takes 2 arguments (data, queries) but {len(args)} were given", span)
        counts, l1, node, private = histogram_data(args[0], span, who)
        self._check_dims(counts, span, who)
        workload = _workload(args[1], counts, span, who)
        if not private:
            return counts.reshape(-1).astype(float)  # public data: the exact answer, at no cost
        _check_unit(args[0], FAMILY.units, span, who, FAMILY.name)
        budget = _budget_of(interp, kwargs, span, who)
        return self.run_private(interp, counts, l1, node, workload, budget, span)

    def _check_dims(self, counts: np.ndarray, span: Span, who: str) -> None:
        """Refuse, before any charge, a histogram of a dimension the algorithm does not take."""
        if counts.ndim not in self.dims:
            raise JostleRuntimeError(
                f"{who} is defined for {' or '.join(f'{d}D' for d in self.dims)} histograms, got a "
                f"{counts.ndim}D one", span,
                "a 2D histogram is histogram(t, [\"a\", \"b\"]); pick an algorithm for the other "
                "dimension (e.g. DAWA, HB or Identity take both)")

    def run_private(self, interp: Any, counts: np.ndarray, l1: float, node: Any, workload: Any,
                    budget: AnyBudget, span: Span) -> np.ndarray:
        """Charge the planned cost of `budget` (the pure epsilon within it), then run the
        algorithm at that epsilon / l1 (see the module docstring)."""
        self._check_dims(counts, span, f"{self.name}()")
        cost = self.option.planned_cost(budget)
        charge = interp.accountant.charge(cost, node, f"option {self.name}", f"{self.name} on a histogram of "
                                          f"{counts.size} cells", span)
        # the segment of a direct call's error estimate (the cost report's): the public dimension
        charge.details["segment"] = int(counts.ndim)
        return self.run_charged(counts, l1, workload, cost.epsilon, interp.randomness)

    def run_charged(self, counts: np.ndarray, l1: float, workload: Any, epsilon: Fraction, noise: Any) -> np.ndarray:
        """Run at epsilon / l1 once `epsilon` has been charged (the exact answer when l1 is 0)."""
        if l1 == 0:
            return counts.reshape(-1).astype(float)
        estimate = self.option.run(counts, algorithm_epsilon(epsilon, l1), workload, noise)
        return np.asarray(estimate, dtype=float).reshape(-1)


class _NoNoise:
    """Zero noise: a metafeature of PUBLIC data is computed exactly."""

    secure = False
    simulation_only = True

    def laplace(self, scale: float, size: int) -> np.ndarray:
        return np.zeros(size)



def call_metafeature(metafeature: Any, interp: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> float:
    """`sparsity(h, epsilon=E)`: release one metafeature of a histogram on its own."""
    who = f"{metafeature.name}()"
    _check_keywords(kwargs, span, who)
    if len(args) != 1:
        raise JostleRuntimeError(f"{who} takes 1 argument (a histogram) but {len(args)} were given", span)
    counts, l1, node, private = histogram_data(args[0], span, who)
    if private and metafeature.cost:
        _check_unit(args[0], FAMILY.units, span, who, FAMILY.name)
    budget = _budget_of(interp, kwargs, span, who) if (private and metafeature.cost) else Budget.zero()
    cost = pure_cost(budget)  # a pure-epsilon release: the epsilon within the budget
    context = MetafeatureContext(cost, cost, facts={"domain_shape": tuple(counts.shape)})
    if not private or not metafeature.cost:
        # Exact on public data; a public metafeature (domain size, epsilon) reads no data.
        exact = metafeature.function(counts, 0.0, None, context) if not metafeature.cost else \
            metafeature.function(counts, float("inf"), _NoNoise(), context)
        return float(exact)
    interp.accountant.charge(cost, node, f"metafeature {metafeature.name}", f"metafeature {metafeature.name}", span)
    epsilon = algorithm_epsilon(cost.epsilon, l1 if l1 > 0 else 1.0)
    return float(metafeature.measure(counts, epsilon, interp.randomness, context))


def training_histogram(x: Any, interp: Any) -> Private:
    """A public training histogram dressed as a private one (sensitivity 1), so that the code
    under training releases it with the noise it would get on private data (the scratch
    interpreter's accountant is charged)."""
    counts = np.asarray(x, dtype=float)
    return Private(counts.reshape(-1), 1.0, 1.0, BUILTIN_SPAN, "training histogram", interp.accountant.root,
                   integer=True, shape=counts.shape if counts.ndim == 2 else None)


def training_arguments(data: HistogramData, interp: Any) -> list[Any]:
    """An option written in Jostle, trained on a public histogram: its arguments, the histogram
    as a private one (`training_histogram`) and the workload."""
    return [training_histogram(data.x, interp), WorkloadValue(data.workload, "training")]


def metafeature_training_argument(data: Any, interp: Any) -> Private:
    """A metafeature written in Jostle, trained on a public input: its argument, what the
    family's metafeatures read of the input (the counts) as a private histogram. (Defining this
    is what lets a ChoiceMaker of the family take metafeatures written in Jostle.)"""
    return training_histogram(data, interp)


def training_result(value: Any, data: HistogramData) -> np.ndarray:
    """What the engine scores of a Jostle option's answer: the estimate, shaped as the counts."""
    return np.asarray(value, dtype=float).reshape(np.shape(data.x))


def choice_call(maker: Any, interp: Any, args: list[Any], span: Span) -> ChoiceCall:
    """`H(h, queries, epsilon=E)` for a ChoiceMaker over histogram options: the engine's input
    and how the built-in parts run on it (at epsilon / l1, see the module docstring)."""
    who = f"{maker.name}()"
    if len(args) != 2:
        raise JostleRuntimeError(f"{who} takes 2 arguments (data, queries) but {len(args)} were given", span)
    counts, l1, node, private = histogram_data(args[0], span, who)
    workload = _workload(args[1], counts, span, who)
    if not private:
        return ChoiceCall(None, node, False, public_result=counts.reshape(-1).astype(float))
    unit = _check_unit(args[0], FAMILY.units, span, who, FAMILY.name)

    def measure(metafeature: Any, amount: Fraction, noise: Any, context: Any) -> float:
        return float(metafeature.measure(counts, algorithm_epsilon(amount, l1 if l1 > 0 else 1.0), noise, context))

    def run(option: Any, part: AnyBudget, released: Mapping[str, float]) -> Any:
        # the engine charged the Option's planned cost of `part`: the pure epsilon within it
        return option.run_charged(counts, l1, workload, pure_epsilon_within(part), interp.randomness)

    return ChoiceCall(HistogramData(counts, workload), node, True, None, measure, run,
                      lambda result, choice, budget: np.asarray(result, dtype=float).reshape(-1),
                      f"train it on a corpus of {counts.ndim}D shapes, e.g. histogram_corpus({counts.ndim})", unit)


def _whole(value: Any, name: str, span: Any, low: int = 1, high: int = 1 << 24) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) and not (
            isinstance(value, float) and value.is_integer()):
        raise JostleRuntimeError(f"{name} must be a whole number, got {value!r}", span)
    number = int(value)
    if not low <= number <= high:
        raise JostleRuntimeError(f"{name} must be between {low} and {high}, got {number}", span)
    return number


def register(builtin: Any, registry: dict[str, Any]) -> None:
    """Add the histogram built-ins to `registry`: the algorithms as options, workloads, corpora
    and `zeros` (called once by the language's built-ins, which discover the families)."""
    from jostle.learners.histograms.corpus import default_corpus, dpbench_corpus, generated_corpus
    from jostle.learners.histograms.options import BUILTIN_OPTIONS

    for name, option in BUILTIN_OPTIONS.items():
        registry[name] = BuiltinOption(name, option)


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

    @builtin("histogram_corpus", 0, 2,
             privacy="choice", doc="histogram_corpus(dims=1, generated=0): the bundled public corpus of "
                                   "histogram shapes (offline), plus `generated` generated shapes")
    def _histogram_corpus(interp, span, dims=1, generated=0):
        which = _whole(dims, "dims", span, 1, 2)
        count = _whole(generated, "the number of generated shapes", span, 0, 256)
        corpus = default_corpus(which)
        if count:  # issue 27: shapes spanning sparsity, skew, smoothness and peaks (corpus.py)
            corpus = corpus + generated_corpus(which, count)
        label = f"bundled {which}D shapes" + (f" and {count} generated ones" if count else "")
        return CorpusValue(corpus, label, task=FAMILY.task, item_name="shapes")

    @builtin("dpbench_corpus", 1, 2, privacy="choice", doc="dpbench_corpus(dir, dims=1): DPBench .npy shapes under dir")
    def _dpbench_corpus(interp, span, directory, dims=1):
        if not isinstance(directory, str):
            raise JostleRuntimeError(f"a directory is a string, got a {type_name(directory)}", span)
        which = _whole(dims, "dims", span, 1, 2)
        path = Path(directory)
        if not path.is_dir():
            raise JostleRuntimeError(f"no directory {directory}", span, "give the folder holding dpbench/1D and dpbench/2D")
        return CorpusValue(dpbench_corpus(path, which), f"DPBench {which}D shapes in {directory}", task=FAMILY.task,
                           item_name="shapes")

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


# A ChoiceMaker whose options are all written in Jostle (no built-in one to say its task), and
# which is trained on no corpus, chooses among histogram algorithms.
HOSTS_JOSTLE_ONLY_CHOICEMAKERS = True
