"""A ChoiceMaker's call at run time: the value `choicemaker ...` makes, and how it dispatches.

Calling a `ChoiceMaker` goes through the engine's one dispatch
(`jostle.choicemaker.private_dispatch.dispatch`) with a `LanguageRuntime`, and records a trace. Its
family is the one its options belong to, or the `CombinedFamily` of the several families of one
task they belong to (`serving_family`); each family's language module turns the call's
arguments into the engine's input (`choice_call`), every one of them before anything is charged.

Privacy of a dispatch with budget E (typed: a pure epsilon from `epsilon=E` or a DP program's
`{{ }}` allotment, a rho from `rho=R` or a zCDP program's allotment): the whole E, in the
session's measure, is checked against every open limit before anything is measured, so a
dispatch that cannot be paid for fails with nothing released; the family must support the data's
privacy unit and E's measure (refused before any charge otherwise; across families, every
family must); the engine's plan then gives each noisy budget unit s*E/k (s as the family may
raise it at small E, a public rule: `Family.metafeature_share_at`) and the chosen option the
rest, each charged its planned cost (the pure epsilon within its part; in a zCDP program the
accountant counts it as epsilon^2 / 2, at most the part) before its noise is drawn; Jostle-defined
parts run under a cap of their part (in the session's measure) and charge their own releases
within it. By sequential composition the dispatch spends at most E; the choice, the predicted
errors, the families named and the trace are post-processing of released values and of the
program's text. `trace(H)` and `explain(H)` show, for each call, the metafeatures measured with
their parts of the budget, each Option's predicted error with its 95% interval (held-out
residuals on the public corpus) and how the choice was made: by measuring, by public facts
alone, or by private selection (where training kept it; `jostle.choicemaker.selection`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np

from jostle.choicemaker import families
from jostle.choicemaker.budgets import pure_epsilon_within
from jostle.choicemaker.error_estimates import ErrorEstimate, estimate_error
from jostle.choicemaker.private_dispatch import ChoiceSpec, Runtime, dispatch, explain as explain_traces
from jostle.diagnostics.errors import JostleRuntimeError
from jostle.diagnostics.source import Span
from jostle.language.calls import ChoiceCall, budget_of, check_keywords
from jostle.language.choice_values import JostleMetafeature, JostleOption, family_language
from jostle.language.training_boundary import check_prior, prior_interpreter, public_value
from jostle.language.values import Record
from jostle.privacy.measures import AnyBudget, RhoZCDPBudget
from jostle.privacy.subledger import OverBudgetError


class LanguageRuntime(Runtime):
    """How a language call's dispatch charges, measures and runs (see `jostle.choicemaker.private_dispatch`).

    Charges go to the interpreter's accountant, against the call's data node. Jostle-defined
    options and metafeatures run in the interpreter under a cap of their exact part and charge
    their own `{{ }}` releases within it; built-in ones run through their own family's
    `ChoiceCall` (`calls`: one per family of the ChoiceMaker, the lead's first, made before
    anything is charged); the metafeatures are measured on the lead's.
    """

    def __init__(self, maker: ChoiceMaker, interp: Any, calls: dict[str, ChoiceCall], args: list[Any],
                 span: Span) -> None:
        super().__init__(maker.family, interp.randomness)
        self.maker, self.interp, self.calls, self.args, self.span = maker, interp, calls, args, span
        self.call = next(iter(calls.values()))  # the lead family's: its data is what the metafeatures read
        self.options = {o.name: o for o in maker.options}
        self.metafeatures = {m.name: m for m in maker.metafeatures}
        self.prior_copies: dict[str, Any] | None = None  # set by `prepare`, before any charge
        self.derived_copies: dict[str, Any] | None = None  # derived metafeatures, checked like priors

    def charge(self, amount: AnyBudget, description: str) -> None:
        # the ledger's "what": the call, with how its data was made (program text: public);
        # the cost as the part calibrated it (the accountant converts it into its measure)
        first = self.args[0] if self.args else None
        data = getattr(first, "what", None) or (getattr(first, "name", None) if hasattr(first, "schema") else None)
        what = f"{self.maker.name}({data})" if data else self.maker.name
        self.keep(description, self.interp.accountant.charge(amount, self.call.node, description, what, self.span))

    def charges_itself(self, part: Any) -> bool:
        own = self.metafeatures.get(part.name) if hasattr(part, "cost") else self.options.get(part.name)
        return isinstance(own, (JostleOption, JostleMetafeature))

    def measure(self, metafeature: Any, data: Any, amount: AnyBudget, noise: Any, context: Any) -> float:
        own = self.metafeatures.get(metafeature.name)
        if isinstance(own, JostleMetafeature) and own.requires:  # post-processing of released values
            derived = (self.derived_copies or {}).get(own.name) or own
            return derived.derive_in(prior_interpreter(self.interp), context.released, self.span)
        if isinstance(own, JostleMetafeature):
            return own.measure_in(self.interp, self.args[0], amount, self.span)
        return self.call.measure_builtin(metafeature, pure_epsilon_within(amount), noise, context)

    def run(self, option: Any, data: Any, amount: AnyBudget, released: Any) -> Any:
        own = self.options[option.name]
        if isinstance(own, JostleOption):
            return own.run_with_budget(self.interp, list(self.args), amount, self.span)
        return self.calls[self.family.option_family(option)].run_builtin(own, amount, released)

    def prepare(self) -> None:
        # Before anything is charged: the priors as they will run, checked (`check_prior`).
        self.prior_copies = self.maker.prior_copies()
        self.derived_copies = {m.name: replace(m, function=check_prior(m.function, f"metafeature {m.name}"))
                               for m in self.maker.metafeatures if isinstance(m, JostleMetafeature) and m.requires}

    def priors(self, features: Any) -> dict[str, float]:
        copies = self.prior_copies if self.prior_copies is not None else self.maker.prior_copies()
        return self.maker._priors(self.interp, dict(features), self.span, copies)


@dataclass(eq=False)
class ChoiceMaker:
    """`choicemaker among {...} informed by {...} trained on CORPUS`, trained lazily.

    Its family is the one its options belong to, or, when they belong to several families of
    one task, the `CombinedFamily` of those (`serving_family`), scoring with the error measure
    `error`; calling it goes through the engine's one dispatch
    (`jostle.choicemaker.private_dispatch.dispatch`) with a `LanguageRuntime`.
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
    estimates: list[Any] = field(default_factory=list)  # each call's ErrorEstimate (None: none predicted)
    grid: Any = None  # the engine's training grid (None: its default); tests set a small one
    task: str = ""  # the task its options share ("": the one `options_task` finds)
    serving: Any = field(default=None, repr=False)  # the family, once found (`family`)

    def __str__(self) -> str:
        names = ", ".join(o.name for o in self.options)
        features = ", ".join(m.name for m in self.metafeatures)
        return f"<choicemaker {self.name} among {{{names}}} informed by {{{features}}}>"

    def __post_init__(self) -> None:
        self.task = self.task or options_task(self.options)

    def training_copy(self, memo: dict[int, Any]) -> ChoiceMaker:
        """This ChoiceMaker as code under training may see it: its parts as training copies, its
        own trace list (the program's traces stay with the program)."""
        if id(self) not in memo:
            copy = public_value
            memo[id(self)] = ChoiceMaker(
                self.name, [copy(o, memo) for o in self.options], [copy(m, memo) for m in self.metafeatures],
                self.corpus, self.error, self.share, self.span, trained=self.trained, grid=self.grid,
                task=self.task, serving=self.serving)
            memo.setdefault(-1, []).append(self)
        return memo[id(self)]

    def training_functions(self) -> list[tuple[Any, str]]:
        """Its parts (each expands to its closures, `training_boundary`)."""
        return [(part, part.name) for part in [*self.options, *self.metafeatures]]

    def digest_text(self, of_value: Any, of_function: Any) -> str:
        """What `training_digest.public_digest` hashes for this ChoiceMaker."""
        return (f"choicemaker:{self.name}:" + ",".join(of_value(o) for o in self.options) + "|" +
                ",".join(of_value(m) for m in self.metafeatures) + f"|{self.error}|{self.share}|"
                f"{getattr(self.corpus, 'description', None)}")

    @property
    def family(self) -> Any:
        """The family it trains and dispatches with (`serving_family`)."""
        if self.serving is None:
            self.serving = serving_family(self.options, self.task, self.error)
        return self.serving

    def engine_parts(self, memo: dict[int, Any] | None = None) -> tuple[list[Any], list[Any]]:
        """The options and metafeatures as the engine trains them: Jostle-defined ones as their
        training copies (see `public_environment`), built-in ones as the family's objects."""
        memo = {} if memo is None else memo
        shared = self.family.metafeatures()
        options = [o.training_copy(memo) if isinstance(o, JostleOption) else o.engine_option for o in self.options]
        features = [m.training_copy(memo) if isinstance(m, JostleMetafeature) else shared[m.name]
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
        # Every family's view of the arguments, before anything is charged (the lead's first:
        # its input is what the metafeatures read; each built-in Option runs on its own family's).
        calls = {member.name: family_language(member).choice_call(self, interp, args, span)
                 for member in family.member_families()}
        call = next(iter(calls.values()))
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
        runtime = LanguageRuntime(self, interp, calls, list(args), span)
        try:
            result = dispatch(chooser, call.data, budget, runtime=runtime, name=self.name,
                              where=span.location, unit=call.unit)
        except OverBudgetError:  # a part spent past its charge: a bug in Jostle (an internal error), not the program's
            raise
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
            "chosen_by": trace.chosen_by,
            "intervals": Record.of({k: Record.of({"low": low, "high": high}) for k, (low, high) in trace.intervals}),
            **self._selection_record(trace),
            **self._families_record(trace),
            **({"estimate": estimate_record(result.estimate)} if result.estimate is not None else {}),
        }))
        self.estimates.append(result.estimate)
        value = calls[trace.choice_family].wrap(result.result, result.choice, budget)
        return carry_estimate(value, result.estimate)

    def error_estimate(self, interp: Any, budget: Any, size_bound: int | None = None, option: str | None = None,
                       confidence: float = 0.95, segment: Any = None) -> ErrorEstimate | None:
        """The expected error of a call of this ChoiceMaker at `budget` and a public size bound,
        before anything is measured (for the cost report): from the experience table of its
        trained (or shipped) model, of `option`, or of the Option it would pick from public facts
        only (`error_estimates.estimate_error`); None without a corpus to train on. Public: it
        reads the program's text and the public corpus only."""
        trained = self.ensure_trained(interp)
        if trained is None:
            return None
        return estimate_error(trained, option, budget, size_bound, confidence, segment, self.name)

    @staticmethod
    def _selection_record(trace: Any) -> dict[str, Any]:
        """For a choice made by private selection, its plan and the chosen output's released noisy
        score (never the number of runs); nothing otherwise."""
        if not trace.selection:
            return {}
        return {"selection": trace.selection, "selection_score": float(trace.selection_score)}

    @staticmethod
    def _families_record(trace: Any) -> dict[str, Any]:
        """Across families, which family ran the choice and every Option's family (public: the
        program's text decides them); nothing for a ChoiceMaker of one family."""
        owners = dict(trace.option_families)
        if len(set(owners.values())) < 2:
            return {}
        return {"family": trace.choice_family, "option_families": Record.of(owners)}

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
    joins their task); when every option is written in Jostle, the task of the family whose
    language module hosts such ChoiceMakers (`HOSTS_JOSTLE_ONLY_CHOICEMAKERS`)."""
    for option in options:
        if not isinstance(option, JostleOption):
            return option.task
    for family in families.discover().values():
        if getattr(family_language(family), "HOSTS_JOSTLE_ONLY_CHOICEMAKERS", False):
            return family.task
    raise ValueError("no learner family takes a ChoiceMaker whose options are all written in Jostle")


def option_families(options: list[Any], task: str) -> list[Any]:
    """The families of a ChoiceMaker's built-in options, each once, in discovery order (the
    first family of `task` when every option is written in Jostle: they join it).

    Raises:
        ValueError: A built-in option belongs to no discovered family.
    """
    found = []
    for option in options:
        if isinstance(option, JostleOption):
            continue
        family = families.family_of(option.engine_option)
        if family is None:
            raise ValueError(f"the option {option.name} belongs to no learner family")
        found.append(family)
    order = list(families.discover())
    members = sorted(dict.fromkeys(found), key=lambda f: order.index(f.name) if f.name in order else len(order))
    return members or [families.for_task(task)[0]]


def serving_family(options: list[Any], task: str, error: str | None) -> Any:
    """The family a ChoiceMaker over `options` trains and dispatches with, scoring with the
    error measure `error` (None: its default): the options' one family, or the
    `CombinedFamily` of their several (`families.serving`)."""
    return families.serving(option_families(options, task), error)


def estimate_record(estimate: ErrorEstimate) -> Record:
    """A predicted error as the program sees it: a record labelled a prediction (public)."""
    return Record.of({"measure": estimate.measure, "predicted_error": estimate.value, "low": estimate.low,
                      "high": estimate.high, "confidence": estimate.confidence, "chosen": estimate.option,
                      "source": estimate.source})


def carry_estimate(value: Any, estimate: ErrorEstimate | None) -> Any:
    """The released value carrying its predicted error (`jostle.language.noisy_values.attach`,
    once that module exists; `law_of(value)` then gives the `ErrorEstimate` to `accuracy`).
    Post-processing of released values and public training: it costs nothing."""
    if estimate is None:
        return value
    try:
        from jostle.language import noisy_values
    except ImportError:  # not there yet: `predicted_error(H)` still reads it from the ChoiceMaker
        return value
    carried = getattr(noisy_values, "EstimatedError", None)
    try:  # the released value's carrier: the errors helper's EstimatedError stating this estimate
        law = carried(estimate.source, estimate=estimate) if carried is not None else estimate
    except TypeError:
        law = estimate
    return noisy_values.attach(value, law)


def explain(maker: ChoiceMaker) -> str:
    """A readable account of every dispatch of `maker` (post-processing of released values)."""
    return explain_traces([t.as_dict() for t in maker.dispatches], maker.name)


__all__ = ["LanguageRuntime", "ChoiceMaker", "carry_estimate", "estimate_record", "explain", "options_task", "option_families", "serving_family"]
