"""Options, metafeatures and ChoiceMakers as Jostle values, for every learner family.

This is the language side of the ChoiceMaker (the engine is `jostle.choicemaker`; each family's
own language values are in `jostle.learners.<family>.language`):

  * `option NAME(params): answer: ... [predict(F): ...]` makes a `JostleOption` (histogram
    family); a family's built-in options (e.g. DAWA, FriedmanSchuster) come from its language
    module. A program cannot tell them apart: both are called alike and listed in a ChoiceMaker.
  * Metafeatures are ordinary Jostle functions of the data (`JostleMetafeature`) or built-ins
    (`BuiltinMetafeature`, one version per family that defines the name). Inside a Jostle
    metafeature, `{{ }}` is exact on public data and noisy, charged to its part, on private data.
  * `choicemaker among {...} informed by {...} trained on CORPUS` makes a `ChoiceMaker` of the
    family its options belong to. Calling it goes through the engine's one dispatch
    (`jostle.choicemaker.dispatch.dispatch`) with a `LanguageRuntime`, and records a trace.

Privacy of a dispatch with budget E (typed: a pure epsilon from `epsilon=E` or a DP program's
`{{ }}` allotment, a rho from `rho=R` or a zCDP program's allotment): the whole E, in the
session's measure, is checked against every open limit before anything is measured, so a
dispatch that cannot be paid for fails with nothing released; the family must support the data's
privacy unit and E's measure (refused before any charge otherwise); the engine's plan then gives
each noisy budget unit s*E/k and the chosen option the rest, each charged its planned cost (the
pure epsilon within its part; in a zCDP program the accountant counts it as epsilon^2 / 2, at
most the part) before its noise is drawn; Jostle-defined parts run under a cap of their part (in
the session's measure) and charge their own releases within it. By sequential composition the
dispatch spends at most E; the choice, the predicted errors and the trace are post-processing of
released values.

Training (the training boundary, `jostle.language.training_boundary`): a ChoiceMaker learns on
the public corpus by running every option and metafeature there, uncharged, so Jostle-defined
ones run only as training copies whose environment holds public values alone
(`public_environment`); code that reads a private value is refused, with its location, when the
ChoiceMaker is built or trained.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from jostle.choicemaker import families
from jostle.choicemaker.budgets import pure_epsilon_within
from jostle.choicemaker.dispatch import ChoiceSpec, Runtime, dispatch, explain as explain_traces
from jostle.diagnostics.errors import JostleRuntimeError, PrivacyError
from jostle.diagnostics.source import Span
from jostle.language import ast_nodes as A
from jostle.language.calls import BUDGET_KEYWORDS, ChoiceCall, budget_of, check_keywords
from jostle.language.sensitivity import refuse
from jostle.language.values import Closure, CorpusValue, Record, is_private, type_name
from jostle.privacy.budget import Budget
from jostle.privacy.conversions import pure_to_rho
from jostle.privacy.measures import AnyBudget, RhoZCDPBudget
from jostle.language.training_boundary import (
    _located, _training_private, check_prior, check_public_reads, prior_interpreter, public_closure, public_digest,
    public_value, refuse_release_in_prior, scratch_interpreter,
)

DEFAULT_SHARE = Fraction(1, 10)


# ---------------------------------------------------------------- options
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
    interpreter: Any = field(default=None, repr=False)  # the Interpreter class training runs it in

    def __post_init__(self) -> None:
        # A prior runs after the metafeatures are charged: a release written in it is refused
        # here, when the option is built, before anything can be charged (`check_prior`).
        if self.predict is not None and not self.public:
            refuse_release_in_prior(self.predict.body, f"option {self.name}")

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
                self.source_text, self.dims, public=True, interpreter=self.interpreter)
            memo.setdefault(-1, []).append(self)
        return memo[id(self)]

    def training_functions(self) -> list[tuple[Any, str]]:
        """The closures training may run, labelled (`training_boundary.check_public_reads`)."""
        return [(c, f"option {self.name}") for c in (self.answer, self.predict) if c is not None]

    def digest_text(self, of_value: Any, of_function: Any) -> str:
        """What `training_boundary.public_digest` hashes for this option."""
        return f"option:{self.name}:" + ",".join(of_function(c) for c in (self.answer, self.predict) if c)

    def check_public(self) -> None:
        """Refuse (located) a read of a private value by the code training would run."""
        copy = self.training_copy()
        for closure in (copy.answer, copy.predict):
            if closure is not None:
                check_public_reads(closure, f"option {self.name}")

    def jostle_call(self, interp: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
        who = f"{self.name}()"
        check_keywords(kwargs, span, who)
        budget = budget_of(interp, kwargs, span, who)
        return self.run_with_budget(interp, args, budget, span)

    def run_with_budget(self, interp: Any, args: list[Any], budget: AnyBudget, span: Span) -> Any:
        """Run the answer body under a cap of `budget` (its `{{ }}` split it; in the session's
        measure, `session_cap`)."""
        releases = A.count_releases(self.answer.body if isinstance(self.answer.body, tuple) else ())
        with interp.accountant.context(session_cap(interp, budget), f"option {self.name}", span, max(1, releases)):
            result = interp.call(self.answer, list(args), span)
        if is_private(result):
            raise refuse(f"option {self.name} returned a private value", result, span,
                         "an option's answer must be released inside it, e.g. return {{ x }}")
        return result

    def run_in_language(self, family: Any, data: Any, budget: AnyBudget, noise: Any) -> Any:
        """Run on a public training input of any family (`Family.run`): always the training copy,
        in a scratch interpreter, on the family's language values of `data`, under a cap of
        `budget` (training budgets are pure epsilons)."""
        language = family_language(family)
        option = self.training_copy()
        scratch = scratch_interpreter(noise, self.interpreter)
        arguments = language.training_arguments(data, scratch)
        with _located(option.answer.span):
            value = option.run_with_budget(scratch, arguments, budget, option.answer.span)
        return language.training_result(value, data)


# ---------------------------------------------------------------- metafeatures
@dataclass(eq=False)
class BuiltinMetafeature:
    """A built-in metafeature name, e.g. `size`: one version per learner family that defines it."""

    public_stateless = True  # training copies may share it (jostle.language.training_boundary)

    jostle_type = "metafeature"

    name: str
    versions: dict[str, Any]  # family name -> the family's metafeature
    privacy = "choice"
    keywords = BUDGET_KEYWORDS

    def version(self, family: str) -> Any:
        return self.versions.get(family)

    @property
    def cost(self) -> bool:
        return any(v.cost for v in self.versions.values())

    @property
    def release(self) -> str:
        """The shared release its versions post-process ("" for none: `measurement.budget_unit`)."""
        return next((v.release for v in self.versions.values() if getattr(v, "release", "")), "")

    def __str__(self) -> str:
        return f"<metafeature {self.name}>"

    def jostle_call(self, interp: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> float:
        """`sparsity(h, epsilon=E)`: release one metafeature on its own (families that allow it)."""
        for family_name, version in self.versions.items():
            language = family_language(families.get(family_name))
            if hasattr(language, "call_metafeature"):
                return language.call_metafeature(version, interp, args, kwargs, span)
        raise JostleRuntimeError(f"{self.name} is a metafeature of {', '.join(self.versions)} tasks; it is measured "
                                 "by a ChoiceMaker, not called on its own", span)


@dataclass(eq=False)
class JostleMetafeature:
    """A Jostle function of the data used as a metafeature (its `{{ }}` spend its share)."""

    jostle_type = "metafeature"

    name: str
    function: Closure
    source_text: str
    cost: bool = True
    public: bool = False  # a training copy: its closure went through `public_environment`
    interpreter: Any = field(default=None, repr=False)  # the Interpreter class training runs it in

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
                                               self.source_text, self.cost, public=True,
                                               interpreter=self.interpreter)
            memo.setdefault(-1, []).append(self)
        return memo[id(self)]

    def training_functions(self) -> list[tuple[Any, str]]:
        """The closure training may run, labelled (`training_boundary.check_public_reads`)."""
        return [(self.function, f"metafeature {self.name}")]

    def digest_text(self, of_value: Any, of_function: Any) -> str:
        """What `training_boundary.public_digest` hashes for this metafeature."""
        return f"metafeature:{self.name}:{of_function(self.function)}"

    def check_public(self) -> None:
        """Refuse (located) a read of a private value by the code training would run."""
        check_public_reads(self.training_copy().function, f"metafeature {self.name}")

    def measure_in(self, interp: Any, data: Any, budget: AnyBudget, span: Span) -> float:
        body = self.function.body
        releases = A.count_releases(body if isinstance(body, tuple) else body)
        with interp.accountant.context(session_cap(interp, budget), f"metafeature {self.name}", span,
                                       max(1, releases)):
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
        scratch = scratch_interpreter(noise, self.interpreter)
        data = _training_private(x, scratch)
        budget = Budget.of(epsilon_mf) if epsilon_mf > 0 else Budget.of(1e-9)
        with _located(metafeature.function.span):
            return metafeature.measure_in(scratch, data, budget, metafeature.function.span)


# ---------------------------------------------------------------- the ChoiceMaker
def session_cap(interp: Any, budget: AnyBudget) -> AnyBudget:
    """A part's budget as a cap in the session's measure, for Jostle-defined parts that charge
    their own releases within it: as it is, except a pure epsilon e in a zCDP session, which
    becomes the rho e^2 / 2 (Bun and Steinke 2016, Prop. 1.4: what an e-DP release costs there,
    so the part can spend no more than its planned cost would have)."""
    accounting = getattr(interp.accountant, "accounting", None)
    if accounting is not None and accounting.is_zcdp and isinstance(budget, Budget) and not budget.delta:
        return RhoZCDPBudget(pure_to_rho(budget.epsilon))
    return budget


def family_language(family: Any) -> Any:
    """The language module of a learner family (`jostle.learners.<family>.language`)."""
    return importlib.import_module(family.language_module)


class LanguageRuntime(Runtime):
    """How a language call's dispatch charges, measures and runs (see `jostle.choicemaker.dispatch`).

    Charges go to the interpreter's accountant, against the call's data node. Jostle-defined
    options and metafeatures run in the interpreter under a cap of their exact part and charge
    their own `{{ }}` releases within it; built-in ones run through the family's `ChoiceCall`.
    """

    def __init__(self, maker: ChoiceMaker, interp: Any, call: ChoiceCall, args: list[Any], span: Span) -> None:
        super().__init__(maker.family, interp.randomness)
        self.maker, self.interp, self.call, self.args, self.span = maker, interp, call, args, span
        self.options = {o.name: o for o in maker.options}
        self.metafeatures = {m.name: m for m in maker.metafeatures}
        self.prior_copies: dict[str, Any] | None = None  # set by `prepare`, before any charge

    def charge(self, amount: AnyBudget, description: str) -> None:
        # the ledger's "what": the call, with how its data was made (program text: public);
        # the cost as the part calibrated it (the accountant converts it into its measure)
        first = self.args[0] if self.args else None
        data = getattr(first, "what", None) or (getattr(first, "name", None) if hasattr(first, "schema") else None)
        what = f"{self.maker.name}({data})" if data else self.maker.name
        self.interp.accountant.charge(amount, self.call.node, description, what, self.span)

    def charges_itself(self, part: Any) -> bool:
        own = self.metafeatures.get(part.name) if hasattr(part, "cost") else self.options.get(part.name)
        return isinstance(own, (JostleOption, JostleMetafeature))

    def measure(self, metafeature: Any, data: Any, amount: AnyBudget, noise: Any, context: Any) -> float:
        own = self.metafeatures.get(metafeature.name)
        if isinstance(own, JostleMetafeature):
            return own.measure_in(self.interp, self.args[0], amount, self.span)
        return self.call.measure_builtin(metafeature, pure_epsilon_within(amount), noise, context)

    def run(self, option: Any, data: Any, amount: AnyBudget, released: Any) -> Any:
        own = self.options[option.name]
        if isinstance(own, JostleOption):
            return own.run_with_budget(self.interp, list(self.args), amount, self.span)
        return self.call.run_builtin(own, amount, released)

    def prepare(self) -> None:
        # Before anything is charged: the priors as they will run, checked (`check_prior`).
        self.prior_copies = self.maker.prior_copies()

    def priors(self, features: Any) -> dict[str, float]:
        copies = self.prior_copies if self.prior_copies is not None else self.maker.prior_copies()
        return self.maker._priors(self.interp, dict(features), self.span, copies)


@dataclass(eq=False)
class ChoiceMaker:
    """`choicemaker among {...} informed by {...} trained on CORPUS`, trained lazily.

    Its family is the one whose task its options share; calling it goes through the engine's one
    dispatch (`jostle.choicemaker.dispatch.dispatch`) with a `LanguageRuntime`.
    """

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
    dispatches: list[Any] = field(default_factory=list)  # the engine's Trace of each call
    grid: Any = None  # the engine's training grid (None: its default); tests set a small one

    def __str__(self) -> str:
        names = ", ".join(o.name for o in self.options)
        features = ", ".join(m.name for m in self.metafeatures)
        return f"<choicemaker {self.name} among {{{names}}} informed by {{{features}}}>"

    @property
    def task(self) -> str:
        return options_task(self.options)

    def training_copy(self, memo: dict[int, Any]) -> ChoiceMaker:
        """This ChoiceMaker as code under training may see it: its parts as training copies, its
        own trace list (the program's traces stay with the program)."""
        if id(self) not in memo:
            copy = public_value
            memo[id(self)] = ChoiceMaker(
                self.name, [copy(o, memo) for o in self.options], [copy(m, memo) for m in self.metafeatures],
                self.corpus, self.error, self.share, self.span, trained=self.trained, grid=self.grid)
            memo.setdefault(-1, []).append(self)
        return memo[id(self)]

    def training_functions(self) -> list[tuple[Any, str]]:
        """Its parts (each expands to its closures, `training_boundary`)."""
        return [(part, part.name) for part in [*self.options, *self.metafeatures]]

    def digest_text(self, of_value: Any, of_function: Any) -> str:
        """What `training_boundary.public_digest` hashes for this ChoiceMaker."""
        return (f"choicemaker:{self.name}:" + ",".join(of_value(o) for o in self.options) + "|" +
                ",".join(of_value(m) for m in self.metafeatures) + f"|{self.error}|{self.share}|"
                f"{getattr(self.corpus, 'description', None)}")

    @property
    def family(self) -> Any:
        family = families.for_task(self.task)
        if family.task == "histogram" and self.error != "scaled_l1":
            from jostle.learners.histograms.family import HistogramFamily

            return HistogramFamily(self.error)
        return family

    def engine_parts(self, memo: dict[int, Any] | None = None) -> tuple[list[Any], list[Any]]:
        """The options and metafeatures as the engine trains them: Jostle-defined ones as their
        training copies (see `public_environment`), built-in ones as the family's objects."""
        memo = {} if memo is None else memo
        family = self.family.name
        options = [o.training_copy(memo) if isinstance(o, JostleOption) else o.engine_option for o in self.options]
        features = [m.training_copy(memo) if isinstance(m, JostleMetafeature) else m.version(family)
                    for m in self.metafeatures]
        return options, features

    def ensure_trained(self, interp: Any) -> Any:
        """Train on the corpus once (shipped or cached models when they match); None without one."""
        if self.corpus is None:
            return None
        if self.trained is None:
            from jostle.choicemaker import pretrained

            options, features = self.engine_parts()
            jostle_defined = any(isinstance(p, (JostleOption, JostleMetafeature)) for p in [*options, *features])
            # Training runs the Jostle-defined parts on the public corpus, uncharged: only their
            # training copies, checked again now that every global they read is bound.
            for part in [*options, *features]:
                if isinstance(part, (JostleOption, JostleMetafeature)):
                    part.check_public()
            self.trained = pretrained.load_or_train(
                self.family, options, features, self.corpus.corpus, grid=self.grid, mf_share=float(self.share),
                n_jobs=1 if jostle_defined else -1,
                progress=sys.stderr.isatty() or bool(getattr(interp, "show_progress", False)),
                corpus_name=self.corpus.description)
        return self.trained

    def jostle_call(self, interp: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
        who = f"{self.name}()"
        check_keywords(kwargs, span, who)
        family = self.family
        call = family_language(family).choice_call(self, interp, args, span)
        if not call.private:
            return call.public_result
        budget = budget_of(interp, kwargs, span, who)
        try:  # the family must serve this unit and measure: refused before anything is charged
            family.check_unit(call.unit)
            family.check_measure(budget)
        except ValueError as error:
            raise JostleRuntimeError(str(error), span, "nothing was spent; a zCDP program passes a rho "
                                     "(or a pure epsilon=E, which costs E^2/2)") from None
        # Check the whole dispatch, in the session's measure, against every limit before anything
        # is measured (a pure E costs E^2 / 2 in a zCDP session).
        interp.accountant.check(interp.accountant.accounting.cost(budget, span), call.node, span)
        trained = self.ensure_trained(interp)
        segment = family.segment_of(call.data)
        if trained is not None and segment not in trained.models:
            raise JostleRuntimeError(
                f"{self.name} was trained on {trained.segment_names()} inputs, not {family.segment_label(segment)} "
                "ones", span, call.segment_hint)
        if trained is None:
            options, features = self.engine_parts()
            chooser: Any = ChoiceSpec(family, {o.name: o for o in options}, features, float(self.share))
        else:
            chooser = trained
        runtime = LanguageRuntime(self, interp, call, list(args), span)
        try:
            result = dispatch(chooser, call.data, budget, runtime=runtime, name=self.name,
                              where=span.location, unit=call.unit)
        except ValueError as error:  # only raised before anything is drawn (no prediction, no option)
            raise JostleRuntimeError(str(error), span, "give the options predict(F) priors, or train the "
                                     "ChoiceMaker on a corpus") from None
        trace = result.trace
        self.dispatches.append(trace)
        if isinstance(trace.budget, RhoZCDPBudget):  # a zCDP program's record: rhos, and the Option's epsilon
            amounts = {"rho": float(trace.budget.rho), "metafeature_rho": float(trace.metafeature_budget.rho),
                       "option_rho": float(trace.option_budget.rho), "option_epsilon": trace.option_epsilon}
        else:  # as before budgets were typed
            amounts = {"epsilon": trace.epsilon, "metafeature_epsilon": trace.metafeature_epsilon,
                       "option_epsilon": trace.option_epsilon}
        self.traces.append(Record.of({
            "choicemaker": self.name, "where": trace.where,
            "metafeatures": Record.of(dict(trace.metafeatures)),
            "predicted_error": Record.of(dict(trace.predicted_error)),
            "prior": Record.of(dict(trace.prior)),
            "choice": trace.choice, **amounts,
            "measuring": trace.measuring,
        }))
        return call.wrap(result.result, result.choice, budget)

    def prior_copies(self) -> dict[str, Any]:
        """Each Jostle option's prior as it may run: its public copy, checked now (a release in
        it, or a read of a private value or a file, is refused, located; `check_prior`)."""
        return {option.name: check_prior(option.predict, f"option {option.name}") for option in self.options
                if isinstance(option, JostleOption) and option.predict is not None}

    def _priors(self, interp: Any, features: dict[str, float], span: Span,
                copies: dict[str, Any]) -> dict[str, float]:
        """Run the checked priors (`prior_copies`) on the released metafeatures, in a scratch
        interpreter (`prior_interpreter`): post-processing of F and public values."""
        priors = {}
        record = Record.of(dict(features))
        scratch = prior_interpreter(interp) if copies else None
        for name, prior in copies.items():
            value = scratch.call(prior, [record], span)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise JostleRuntimeError(f"option {name}'s predict must return a number", span)
            priors[name] = float(value)
        return priors


def options_task(options: list[Any]) -> str:
    """The task of a ChoiceMaker's options: its built-in options' (an option written in Jostle
    joins their family); histograms when every option is written in Jostle."""
    for option in options:
        if not isinstance(option, JostleOption):
            return option.task
    return "histogram"


def explain(maker: ChoiceMaker) -> str:
    """A readable account of every dispatch of `maker` (post-processing of released values)."""
    return explain_traces([t.as_dict() for t in maker.dispatches], maker.name)


def make_choicemaker(interp: Any, expr: A.ChoiceMakerExpr, options: list[Any], metafeatures: list[Any],
                     corpus: Any, error: Any, share: Any) -> ChoiceMaker:
    """Validate the parts of a `choicemaker` expression and build the value."""
    span = expr.span
    checked_options = []
    for name, value in zip(expr.options, options):
        if not (isinstance(value, JostleOption) or getattr(value, "engine_option", None) is not None):
            raise JostleRuntimeError(f"'{name.id}' is not an option (it is a {type_name(value)})", name.span,
                                     "declare it with `option NAME(db, queries):` or use a built-in option "
                                     "such as DAWA, MWEM, HB, Identity")
        checked_options.append(value)
    tasks = {o.task for o in checked_options if not isinstance(o, JostleOption)}
    if len(tasks) > 1:
        raise JostleRuntimeError("a ChoiceMaker chooses among options for one task: options of "
                                 f"{' and '.join(sorted(tasks))} tasks cannot be mixed", span)
    family = families.for_task(options_task(checked_options))
    checked_features = []
    for name, value in zip(expr.metafeatures, metafeatures):
        if isinstance(value, BuiltinMetafeature):
            if value.version(family.name) is None:
                known = ", ".join(family.metafeatures())
                raise JostleRuntimeError(f"'{name.id}' is not a metafeature of {family.task} tasks", name.span,
                                         f"use one of {known}")
            checked_features.append(value)
        elif isinstance(value, Closure) and family.task == "histogram":
            checked_features.append(JostleMetafeature(name.id, value, _source_of(value), interpreter=type(interp)))
        else:
            raise JostleRuntimeError(f"'{name.id}' is not a metafeature (it is a {type_name(value)})", name.span,
                                     "a metafeature is a function of the data, e.g. def f(db): return ..."
                                     if family.task == "histogram" else
                                     f"use one of {', '.join(family.metafeatures())}")
    if corpus is not None and not isinstance(corpus, CorpusValue):
        raise JostleRuntimeError(f"a ChoiceMaker is trained on a corpus, got a {type_name(corpus)}", expr.corpus.span,
                                 "use histogram_corpus() (bundled public shapes) or dpbench_corpus(dir), or "
                                 "`trained on none` to choose by the options' predict(F) priors alone")
    if corpus is not None and getattr(corpus, "task", "histogram") != family.task:
        raise JostleRuntimeError("the corpus is for another task than the options", expr.corpus.span,
                                 "tree learners train on tree_corpus(); histogram options on histogram_corpus()")
    if corpus is None and not any(isinstance(o, JostleOption) and o.predict is not None for o in checked_options):
        raise JostleRuntimeError("a ChoiceMaker trained on none needs options with predict(F) priors",
                                 expr.corpus.span, "train it on a corpus, e.g. histogram_corpus()")
    for option in checked_options:  # the priors run after a charge: refuse, now, what could fail there
        if isinstance(option, JostleOption) and option.predict is not None:
            check_prior(option.predict, f"option {option.name}")
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
    "JostleOption", "BuiltinMetafeature", "JostleMetafeature", "ChoiceMaker", "LanguageRuntime", "explain",
    "make_choicemaker", "family_language", "PrivacyError",
]
