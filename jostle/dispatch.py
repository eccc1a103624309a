"""Options, metafeatures and ChoiceMakers as Jostle values, and the private dispatch.

This is the language side of the ChoiceMaker (the learning side is jostle.choicemaker):

  * `option NAME(params): answer: ... [predict(F): ...]` makes a `JostleOption`; the
    histogram algorithms of jostle.histograms are `BuiltinOption`s. A program cannot tell
    the two apart: both are called as `NAME(db, queries, epsilon=E)` and both can be listed in
    a ChoiceMaker.
  * Metafeatures are ordinary Jostle functions of the data (`JostleMetafeature`) or built-ins
    (`BuiltinMetafeature`, e.g. `sparsity`). Inside a Jostle metafeature, `{{ }}` is exact on
    public data and noisy, charged to the metafeature's share of the budget, on private data.
  * `choicemaker among {...} informed by {...} trained on CORPUS` makes a `ChoiceMaker`.
    Calling it measures every metafeature privately, predicts each option's error with the
    meta-model learned from the public corpus, runs the option predicted best with the rest of
    the budget and records a `trace` entry.

Privacy of a dispatch with budget E and metafeature share s (default 0.1), k costly budget
units (a costly metafeature, or one release shared by several, e.g. the profile that every
`profile_*` metafeature post-processes): the whole E is checked against every open limit
before anything is measured, so a dispatch that cannot be paid for fails with nothing
released. Each unit then spends s*E/k (charged before its noise is drawn), and the chosen option spends
(1 - s)*E (charged before it runs). By sequential composition the dispatch is E-DP. The choice
of option, the predicted errors and the trace are functions of the released metafeature values
and public facts only (post-processing), so showing them costs nothing. With no costly
metafeature the option gets all of E.

Options and metafeatures assume the data is a histogram whose L1 sensitivity is `l1` (1 for
`histogram(t, cols)` of a 1-stable table). Algorithms are written for sensitivity 1, so they
are run with epsilon / l1 (rounded down to a float, `algorithm_epsilon`): for integer count
vectors, two neighbours differ by at most l1 unit steps, and group privacy over l1 steps of an
(epsilon/l1)-DP algorithm gives epsilon. The argument needs whole counts, so any other private
vector is refused before anything is charged (`histogram_data`).

Training (the training boundary, jostle.training_boundary): a ChoiceMaker learns on the public corpus by running
every option and metafeature there, uncharged, so the Jostle-defined ones run only as training
copies whose environment holds public values alone (`public_environment`); code that reads a
private value is refused, with its location, when the ChoiceMaker is built or trained.
"""

from __future__ import annotations

import hashlib
import math
import sys
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from jostle import ast_nodes as A
from jostle.budget import Budget, fmt
from jostle.errors import JostleRuntimeError, PrivacyError
from jostle.sensitivity import refuse
from jostle.source import Span
from jostle.values import Closure, Private, PrivateMean, Record, is_private, type_name
from jostle.training_boundary import (
    _located, _training_private, check_public_reads, public_closure, public_digest, scratch_interpreter,
)

DEFAULT_SHARE = Fraction(1, 10)


# ---------------------------------------------------------------- workloads and corpora
@dataclass(frozen=True, eq=False)
class WorkloadValue:
    """A public workload of range queries over a histogram's domain."""

    jostle_type = "workload"

    workload: Any
    description: str

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.workload.shape)

    def __str__(self) -> str:
        return f"<workload {self.description}, {len(self.workload)} queries over {'x'.join(map(str, self.shape))}>"


@dataclass(frozen=True, eq=False)
class CorpusValue:
    """A public training corpus (a list of histogram shapes) for ChoiceMakers."""

    jostle_type = "corpus"

    corpus: Any
    description: str
    task: str = "histogram"

    def __str__(self) -> str:
        return f"<corpus {self.description}, {len(self.corpus)} {'tasks' if self.task != 'histogram' else 'shapes'}>"


# ---------------------------------------------------------------- data handed to options
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
    from jostle.trees.accounting import floor_float

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


def _budget_of(interp: Any, kwargs: dict[str, Any], span: Span, who: str) -> Budget:
    """The budget a call spends: its `epsilon=` keyword, else what a `{{ }}` would get here."""
    if "epsilon" in kwargs:
        value = kwargs["epsilon"]
        if is_private(value):
            raise refuse("a budget must be public", value, span)
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise JostleRuntimeError(f"epsilon must be a number, got a {type_name(value)}", span)
        budget = Budget.of(float(value))
        if budget.epsilon <= 0:
            raise JostleRuntimeError("epsilon must be greater than 0", span)
        return budget
    context = interp.accountant.innermost
    if context is None:
        raise JostleRuntimeError(
            f"{who} needs a budget", span,
            "pass epsilon=E, or call it inside `with budget E:` (it then takes what a {{ }} would)")
    return context.per_release


def _check_keywords(kwargs: dict[str, Any], span: Span, who: str, allowed: tuple[str, ...] = ("epsilon",)) -> None:
    for key in kwargs:
        if key not in allowed:
            raise JostleRuntimeError(f"{who} has no keyword argument '{key}'", span, f"its keywords are {list(allowed)}")


# ---------------------------------------------------------------- options
@dataclass(eq=False)
class BuiltinOption:
    """A histogram algorithm of jostle.histograms, callable from Jostle."""

    jostle_type = "option"

    name: str
    option: Any  # jostle.choicemaker HistogramOption
    privacy = "choice"
    keywords = ("epsilon",)

    @property
    def fingerprint(self) -> str:
        return f"builtin:{self.name}"

    @property
    def dims(self) -> tuple[int, ...]:
        from jostle.choicemaker.options import option_dims

        return option_dims(self.option)

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
                    budget: Budget, span: Span) -> np.ndarray:
        """Charge `budget`, then run the algorithm at epsilon / l1 (see the module docstring)."""
        self._check_dims(counts, span, f"{self.name}()")
        interp.accountant.charge(budget, node, f"option {self.name}", f"{self.name} on a histogram of "
                                 f"{counts.size} cells", span)
        if l1 == 0:
            return counts.reshape(-1).astype(float)
        estimate = self.option.run(counts, algorithm_epsilon(budget.epsilon, l1), workload, interp.randomness)
        return np.asarray(estimate, dtype=float).reshape(-1)


@dataclass(eq=False)
class JostleOption:
    """An `option NAME(params):` written in Jostle."""

    jostle_type = "option"

    name: str
    answer: Closure
    predict: Closure | None
    source_text: str
    dims: tuple[int, ...] = (1, 2)
    public: bool = False  # a training copy: its closures went through `public_environment`

    @property
    def fingerprint(self) -> str:
        """The experience cache's key: the code and the public values it reads (`public_digest`)."""
        copy = self if self.public else self.training_copy()
        text = "\n".join([self.source_text, *(public_digest(c) for c in (copy.answer, copy.predict) if c)])
        return "jostle:" + hashlib.sha256(text.encode()).hexdigest()[:16]

    def __str__(self) -> str:
        return f"<option {self.name}>"

    def training_copy(self, memo: dict[int, Any] | None = None) -> JostleOption:
        """This option as training may run it: its closures see public values only."""
        if self.public:
            return self
        memo = {} if memo is None else memo
        if id(self) not in memo:
            who = f"option {self.name}"
            memo[id(self)] = JostleOption(
                self.name, public_closure(self.answer, memo, who),
                public_closure(self.predict, memo, who) if self.predict is not None else None,
                self.source_text, self.dims, public=True)
            memo.setdefault(-1, []).append(self)
        return memo[id(self)]

    def check_public(self) -> None:
        """Refuse (located) a read of a private value by the code training would run."""
        copy = self.training_copy()
        for closure in (copy.answer, copy.predict):
            if closure is not None:
                check_public_reads(closure, f"option {self.name}")

    def jostle_call(self, interp: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
        who = f"{self.name}()"
        _check_keywords(kwargs, span, who)
        budget = _budget_of(interp, kwargs, span, who)
        return self.run_with_budget(interp, args, budget, span)

    def run_with_budget(self, interp: Any, args: list[Any], budget: Budget, span: Span) -> Any:
        """Run the answer body under a cap of `budget` (its `{{ }}` split it)."""
        releases = A.count_releases(self.answer.body if isinstance(self.answer.body, tuple) else ())
        with interp.accountant.context(budget, f"option {self.name}", span, max(1, releases)):
            result = interp.call(self.answer, list(args), span)
        if is_private(result):
            raise refuse(f"option {self.name} returned a private value", result, span,
                         "an option's answer must be released inside it, e.g. return {{ x }}")
        return result

    # The engine's HistogramOption interface, for training on public data.
    def run(self, x: np.ndarray, epsilon: float, workload: Any, noise: Any) -> np.ndarray:
        """Run on a public training histogram: always the training copy, in a scratch interpreter."""
        option = self.training_copy()
        scratch = scratch_interpreter(noise)
        data = _training_private(x, scratch)
        with _located(option.answer.span):
            result = option.run_with_budget(scratch, [data, WorkloadValue(workload, "training")],
                                            Budget.of(epsilon), option.answer.span)
        return np.asarray(result, dtype=float).reshape(np.shape(x))


# ---------------------------------------------------------------- metafeatures
@dataclass(eq=False)
class BuiltinMetafeature:
    """A built-in metafeature (jostle.choicemaker), e.g. sparsity or uniformity."""

    jostle_type = "metafeature"

    name: str
    metafeature: Any            # the histogram version (jostle.choicemaker.metafeatures), or None
    tree_metafeature: Any = None  # the classification version (jostle.choicemaker.tree_task), or None
    privacy = "choice"
    keywords = ("epsilon",)

    @property
    def cost(self) -> bool:
        return bool((self.metafeature or self.tree_metafeature).cost)

    @property
    def fingerprint(self) -> str:
        # The engine's fingerprint hashes the metafeature's code, so editing it retrains.
        return (self.metafeature or self.tree_metafeature).fingerprint

    @property
    def release(self) -> str:
        """The shared release it post-processes ("" for none): see `metafeatures.budget_unit`."""
        return getattr(self.metafeature or self.tree_metafeature, "release", "")

    def __str__(self) -> str:
        return f"<metafeature {self.name}>"

    def measure(self, x: np.ndarray, epsilon_mf: float, noise: Any, context: Any) -> float:
        return float(self.metafeature.measure(x, epsilon_mf, noise, context))

    def jostle_call(self, interp: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> float:
        """`sparsity(h, epsilon=E)`: release one metafeature of a histogram on its own."""
        from jostle.choicemaker.metafeatures import MetafeatureContext

        who = f"{self.name}()"
        _check_keywords(kwargs, span, who)
        if self.metafeature is None:
            raise JostleRuntimeError(f"{self.name} is a metafeature of classification tasks; it is measured by a "
                                     "ChoiceMaker over tree learners, not called on its own", span)
        if len(args) != 1:
            raise JostleRuntimeError(f"{who} takes 1 argument (a histogram) but {len(args)} were given", span)
        counts, l1, node, private = histogram_data(args[0], span, who)
        budget = _budget_of(interp, kwargs, span, who) if (private and self.cost) else Budget.zero()
        context = MetafeatureContext(tuple(counts.shape), float(budget.epsilon), float(budget.epsilon))
        if not private or not self.cost:
            # Exact on public data; a public metafeature (domain size, epsilon) reads no data.
            exact = self.metafeature.function(counts, 0.0, None, context) if not self.cost else \
                self.metafeature.function(counts, float("inf"), _NoNoise(), context)
            return float(exact)
        interp.accountant.charge(budget, node, f"metafeature {self.name}", f"metafeature {self.name}", span)
        epsilon = algorithm_epsilon(budget.epsilon, l1 if l1 > 0 else 1.0)
        return self.measure(counts, epsilon, interp.randomness, context)


class _NoNoise:
    """Zero noise: a metafeature of PUBLIC data is computed exactly."""

    secure = False
    simulation_only = True

    def laplace(self, scale: float, size: int) -> np.ndarray:
        return np.zeros(size)


@dataclass(eq=False)
class JostleMetafeature:
    """A Jostle function of the data used as a metafeature (its `{{ }}` spend its share)."""

    jostle_type = "metafeature"

    name: str
    function: Closure
    source_text: str
    cost: bool = True
    public: bool = False  # a training copy: its closure went through `public_environment`

    @property
    def fingerprint(self) -> str:
        """The experience cache's key: the code and the public values it reads (`public_digest`)."""
        copy = self if self.public else self.training_copy()
        text = self.source_text + "\n" + public_digest(copy.function)
        return "jostle:" + hashlib.sha256(text.encode()).hexdigest()[:16]

    def training_copy(self, memo: dict[int, Any] | None = None) -> JostleMetafeature:
        """This metafeature as training may run it: its closure sees public values only."""
        if self.public:
            return self
        memo = {} if memo is None else memo
        if id(self) not in memo:
            memo[id(self)] = JostleMetafeature(self.name, public_closure(self.function, memo,
                                                                         f"metafeature {self.name}"),
                                               self.source_text, self.cost, public=True)
            memo.setdefault(-1, []).append(self)
        return memo[id(self)]

    def check_public(self) -> None:
        """Refuse (located) a read of a private value by the code training would run."""
        check_public_reads(self.training_copy().function, f"metafeature {self.name}")

    def measure_in(self, interp: Any, data: Any, budget: Budget, span: Span) -> float:
        body = self.function.body
        releases = A.count_releases(body if isinstance(body, tuple) else body)
        with interp.accountant.context(budget, f"metafeature {self.name}", span, max(1, releases)):
            value = interp.call(self.function, [data], span)
        if is_private(value):
            raise refuse(f"metafeature {self.name} returned a private value", value, span,
                         "release inside it: return {{ ... }}")
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise JostleRuntimeError(f"metafeature {self.name} must return a number, got a {type_name(value)}", span)
        return float(value)

    # The engine's Metafeature interface, for training on public data.
    def measure(self, x: np.ndarray, epsilon_mf: float, noise: Any, context: Any) -> float:
        """Measure a public training histogram: always the training copy, in a scratch interpreter."""
        metafeature = self.training_copy()
        scratch = scratch_interpreter(noise)
        data = _training_private(x, scratch)
        budget = Budget.of(epsilon_mf) if epsilon_mf > 0 else Budget.of(1e-9)
        with _located(metafeature.function.span):
            return metafeature.measure_in(scratch, data, budget, metafeature.function.span)


# ---------------------------------------------------------------- the ChoiceMaker
@dataclass(eq=False)
class ChoiceMaker:
    """`choicemaker among {...} informed by {...} trained on CORPUS`, trained lazily."""

    jostle_type = "choicemaker"

    name: str
    options: list[Any]
    metafeatures: list[Any]
    corpus: Any
    error: str
    share: Fraction
    span: Span
    trained: Any = None
    traces: list[Record] = field(default_factory=list)
    grid: Any = None  # the engine's training grid (None: its default); tests set a small one

    def __str__(self) -> str:
        names = ", ".join(o.name for o in self.options)
        features = ", ".join(m.name for m in self.metafeatures)
        return f"<choicemaker {self.name} among {{{names}}} informed by {{{features}}}>"

    def ensure_trained(self, interp: Any) -> Any:
        """Train on the corpus once (the engine caches the experience on disk); None without one."""
        if self.corpus is None:
            return None
        if self.trained is None and self.task == "classification":
            from jostle.choicemaker.tree_task import TREE_OPTIONS
            from jostle.choicemaker.tree_training import train_tree_choicemaker

            self.trained = train_tree_choicemaker(
                [TREE_OPTIONS[o.name] for o in self.options], [m.tree_metafeature for m in self.metafeatures],
                self.corpus.corpus, grid=self.grid, mf_share=float(self.share),
                progress=sys.stderr.isatty() or bool(getattr(interp, "show_progress", False)))
        if self.trained is None:
            from jostle.choicemaker import train

            jostle_defined = any(isinstance(o, JostleOption) for o in self.options) or \
                any(isinstance(m, JostleMetafeature) for m in self.metafeatures)
            # Training runs the Jostle-defined parts on the public corpus, uncharged: only their
            # training copies (see `public_environment`), checked again now that every global
            # they read is bound.
            memo: dict[int, Any] = {}
            engine_options = [o.training_copy(memo) if isinstance(o, JostleOption) else o.option
                              for o in self.options]
            features = [m.training_copy(memo) if isinstance(m, JostleMetafeature) else m for m in self.metafeatures]
            for part in [*engine_options, *features]:
                if isinstance(part, (JostleOption, JostleMetafeature)):
                    part.check_public()
            self.trained = train(engine_options, features, self.corpus.corpus, grid=self.grid,
                                 mf_share=float(self.share), n_jobs=1 if jostle_defined else -1,
                                 progress=sys.stderr.isatty() or bool(getattr(interp, "show_progress", False)),
                                 error=self.error)
        return self.trained

    @property
    def task(self) -> str:
        return getattr(self.options[0], "task", "histogram")

    def jostle_call(self, interp: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
        who = f"{self.name}()"
        _check_keywords(kwargs, span, who)
        if self.task == "classification":
            from jostle.tree_values import choose_tree

            return choose_tree(self, interp, args, kwargs, span)
        if len(args) != 2:
            raise JostleRuntimeError(f"{who} takes 2 arguments (data, queries) but {len(args)} were given", span)
        counts, l1, node, private = histogram_data(args[0], span, who)
        workload = _workload(args[1], counts, span, who)
        if not private:
            return counts.reshape(-1).astype(float)
        budget = _budget_of(interp, kwargs, span, who)
        # Check the whole dispatch against every limit before anything is measured.
        interp.accountant.check(budget, node, span)
        trained = self.ensure_trained(interp)
        if trained is not None and counts.ndim not in trained.models:
            raise JostleRuntimeError(
                f"{self.name} was trained on {sorted(trained.models)}D histograms, not {counts.ndim}D ones", span,
                f"train it on a corpus of {counts.ndim}D shapes, e.g. histogram_corpus({counts.ndim})")
        from jostle.choicemaker.metafeatures import MetafeatureContext, budget_unit

        ordered = list(self.metafeatures)
        if trained is not None and hasattr(trained, "metafeatures_for"):
            # Training may have found that measuring does not pay for its share on data of this
            # dimensionality: then nothing is measured and the option gets the whole budget.
            useful = {m.name for m in trained.metafeatures_for(counts.ndim)}
            ordered = [m for m in ordered if m.name in useful]
        plan, option_budget = self._plan(ordered, budget)
        context = MetafeatureContext(tuple(counts.shape), float(option_budget.epsilon), float(budget.epsilon))
        features: dict[str, float] = {}
        charged: set[str] = set()
        for metafeature in ordered:
            if isinstance(metafeature, JostleMetafeature):
                features[metafeature.name] = metafeature.measure_in(interp, args[0], plan[metafeature.name], span)
            elif metafeature.cost:
                # Metafeatures sharing a release (the profile_* ones) are post-processing of one
                # release: it is charged once, before the first of them draws its noise.
                unit = budget_unit(metafeature)
                share = plan[unit]
                if unit not in charged:
                    interp.accountant.charge(share, node, f"metafeature {unit}",
                                             f"metafeature {unit} for {self.name}", span)
                    charged.add(unit)
                epsilon_mf = algorithm_epsilon(share.epsilon, l1 if l1 > 0 else 1.0)
                features[metafeature.name] = metafeature.measure(counts, epsilon_mf, interp.randomness, context)
            else:
                features[metafeature.name] = metafeature.measure(counts, 0.0, interp.randomness, context)
        available = {o.name: o for o in self.options if counts.ndim in o.dims}
        priors = self._priors(interp, features, span)
        if trained is not None:
            chosen, predictions = trained.choose(features, counts.ndim)
            for name, prior in priors.items():
                predictions.setdefault(name, prior)  # an option the corpus could not train
        else:
            predictions = dict(priors)
            ranked = sorted((p, n) for n, p in predictions.items() if n in available and np.isfinite(p))
            if not ranked:
                raise JostleRuntimeError(f"{self.name} has no prediction for any of its {counts.ndim}D options",
                                         span, "give the options predict(F) priors")
            chosen = ranked[0][1]
        mf_total = budget.epsilon - option_budget.epsilon
        choice = available[chosen]
        if isinstance(choice, JostleOption):
            answer = choice.run_with_budget(interp, list(args), option_budget, span)
        else:
            answer = choice.run_private(interp, counts, l1, node, workload, option_budget, span)
        self.traces.append(Record.of({
            "choicemaker": self.name,
            "where": span.location,
            "metafeatures": Record.of({k: float(v) for k, v in features.items()}),
            "predicted_error": Record.of({n: float(predictions[n]) for n in available if n in predictions}),
            "prior": Record.of({k: float(v) for k, v in priors.items()}),
            "choice": choice.name,
            "epsilon": float(budget.epsilon),
            "metafeature_epsilon": float(mf_total),
            "option_epsilon": float(option_budget.epsilon),
        }))
        return answer

    def _plan(self, ordered: list[Any], budget: Budget) -> tuple[dict[str, Budget], Budget]:
        """Exact budgets: share*E split over the costly budget units by weight; the rest to the option.

        Fractions make the parts add up to E exactly, so the last charge never fails on
        rounding; with no costly metafeature the option gets all of E.
        """
        from jostle.choicemaker.metafeatures import budget_unit

        costly = {}
        for m in ordered:  # one entry per budget unit: a shared release or a metafeature
            if m.cost:
                costly.setdefault(budget_unit(m), m)
        if not costly:
            return {}, budget
        weights = [Fraction(getattr(m, "weight", 1.0)).limit_denominator(1000) for m in costly.values()]
        total = budget.epsilon * self.share
        plan = {unit: Budget(total * w / sum(weights)) for unit, w in zip(costly, weights)}
        return plan, Budget(budget.epsilon - total)

    def _priors(self, interp: Any, features: dict[str, float], span: Span) -> dict[str, float]:
        priors = {}
        record = Record.of(dict(features))
        for option in self.options:
            if isinstance(option, JostleOption) and option.predict is not None:
                value = interp.call(option.predict, [record], span)
                if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
                    raise JostleRuntimeError(f"option {option.name}'s predict must return a number", span)
                priors[option.name] = float(value)
        return priors


def explain(maker: ChoiceMaker) -> str:
    """A readable account of every dispatch of `maker` (post-processing of released values)."""
    if not maker.traces:
        return f"{maker.name} has not been called yet"
    lines = []
    for trace in maker.traces:
        lines.append(f"{trace.get('choicemaker')} at {trace.get('where')}: chose {trace.get('choice')}")
        features = trace.get("metafeatures")
        lines.append("  metafeatures (noisy): " + ", ".join(f"{k}={v:.4g}" for k, v in features.fields))
        predicted = sorted(trace.get("predicted_error").fields, key=lambda kv: kv[1])
        lines.append("  predicted error:      " + ", ".join(f"{k}={v:.4g}" for k, v in predicted))
        lines.append(f"  budget: epsilon {fmt(Fraction(trace.get('epsilon')).limit_denominator(10**9))} = "
                     f"{trace.get('metafeature_epsilon'):.6g} on metafeatures + "
                     f"{trace.get('option_epsilon'):.6g} on {trace.get('choice')}")
    return "\n".join(lines)


def make_choicemaker(interp: Any, expr: A.ChoiceMakerExpr, options: list[Any], metafeatures: list[Any],
                     corpus: Any, error: Any, share: Any) -> ChoiceMaker:
    """Validate the parts of a `choicemaker` expression and build the value."""
    span = expr.span
    checked_options = []
    for name, value in zip(expr.options, options):
        from jostle.tree_values import TreeOption

        if not isinstance(value, (BuiltinOption, JostleOption, TreeOption)) or \
                (isinstance(value, TreeOption) and value.configuration is None):
            raise JostleRuntimeError(f"'{name.id}' is not an option (it is a {type_name(value)})", name.span,
                                     "declare it with `option NAME(db, queries):` or use a built-in option "
                                     "such as DAWA, MWEM, HB, Identity")
        checked_options.append(value)
    tasks = {getattr(o, "task", "histogram") for o in checked_options}
    if len(tasks) > 1:
        raise JostleRuntimeError("a ChoiceMaker chooses among options for one task: histogram options and tree "
                                 "learners cannot be mixed", span)
    tree_task = tasks == {"classification"}
    checked_features = []
    for name, value in zip(expr.metafeatures, metafeatures):
        if tree_task and not (isinstance(value, BuiltinMetafeature) and value.tree_metafeature is not None):
            raise JostleRuntimeError(f"'{name.id}' is not a metafeature of classification tasks", name.span,
                                     "use size, class_balance, n_attributes, branching, n_classes, epsilon, "
                                     "log_rows_per_cell or log_signal")
        if not tree_task and isinstance(value, BuiltinMetafeature) and value.metafeature is None:
            raise JostleRuntimeError(f"'{name.id}' is a metafeature of classification tasks, not of histograms",
                                     name.span)
        if isinstance(value, BuiltinMetafeature):
            checked_features.append(value)
        elif isinstance(value, Closure):
            checked_features.append(JostleMetafeature(name.id, value, _source_of(value)))
        else:
            raise JostleRuntimeError(f"'{name.id}' is not a metafeature (it is a {type_name(value)})", name.span,
                                     "a metafeature is a function of the data, e.g. def f(db): return ...")
    if corpus is not None and not isinstance(corpus, CorpusValue):
        raise JostleRuntimeError(f"a ChoiceMaker is trained on a corpus, got a {type_name(corpus)}", expr.corpus.span,
                                 "use histogram_corpus() (bundled public shapes) or dpbench_corpus(dir), or "
                                 "`trained on none` to choose by the options' predict(F) priors alone")
    if corpus is not None and (getattr(corpus, "task", "histogram") == "classification") != tree_task:
        raise JostleRuntimeError("the corpus is for another task than the options", expr.corpus.span,
                                 "tree learners train on tree_corpus(); histogram options on histogram_corpus()")
    if corpus is None and not any(isinstance(o, JostleOption) and o.predict is not None for o in checked_options):
        raise JostleRuntimeError("a ChoiceMaker trained on none needs options with predict(F) priors",
                                 expr.corpus.span, "train it on a corpus, e.g. histogram_corpus()")
    if corpus is not None:
        # Trained on a corpus, the Jostle-defined options and metafeatures will run uncharged on
        # public data: refuse now, located, any that reads a private value.
        for part in [*checked_options, *checked_features]:
            if isinstance(part, (JostleOption, JostleMetafeature)):
                part.check_public()
    measure = "scaled_l1" if error is None else error
    if measure not in ("scaled_l1", "scaled_l2"):
        raise JostleRuntimeError(f"unknown error measure {measure!r}", expr.error.span if expr.error else span,
                                 'use "scaled_l1" or "scaled_l2"')
    fraction = DEFAULT_SHARE
    if share is not None:
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share < 1:
            raise JostleRuntimeError("the metafeature share must be a number between 0 and 1",
                                     expr.share.span if expr.share else span)
        fraction = Budget.of(share).epsilon
    return ChoiceMaker(expr.name or "choicemaker", checked_options, checked_features, corpus, measure,
                       fraction, span)


def source_text(span: Span) -> str:
    """Every line a (multi-line) span covers: what a fingerprint of user code hashes."""
    return "\n".join(span.source.line(i) for i in range(span.line, span.end_line + 1))


def _source_of(closure: Closure) -> str:
    return source_text(closure.span) or closure.name


__all__ = [
    "BuiltinOption", "JostleOption", "BuiltinMetafeature", "JostleMetafeature", "ChoiceMaker",
    "WorkloadValue", "CorpusValue", "explain", "make_choicemaker", "PrivacyError",
]
