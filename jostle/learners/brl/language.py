"""Bayesian rule lists in the language: the DP-BRL learner and its Options, rule lists as values.

    rules = BayesianRuleList(t, "survived", epsilon=0.9, max_rows=1000)   # private table in
    print(rules)                                  # "if ... then probability ... else ..."
    print(rule_list_length(rules), average_antecedent_length(rules))
    labels = predict_rule_list(rules, test)       # on a PUBLIC table

Privacy. The attributes and the class are the table's categorical columns, whose domains are
public (numeric columns must be binned into public bins first). The score's sensitivity is
argued for neighbours one row apart: a table whose stability is above 1 (or unbounded), or whose
privacy unit the family does not declare, is refused before any charge (`calls.check_learnable`);
the family does not scale to the stability. A call's budget is typed (`calls.budget_of`): the
pipeline runs at the pure epsilon E within it (a rho r in a zCDP program: the largest E with
E^2 / 2 <= r). A call on a private table checks its arguments, then charges E to the accountant
ONCE (counted as E^2 / 2 in a zCDP program), before anything is drawn; the pipeline (`jostle.learners.brl.learner`: private DP-FIM, the exact exponential
mechanism over the enumerated lists, noisy capture counts) splits E and its own ledger refuses
any step that would take it past E. The whole call is E-DP. The row bound `max_rows` fixes the
score's sensitivity log(max_rows + C - 1); it is public (default 1,000,000: declare a tighter
honest bound for better lists). The chain sampler, which carries no proved guarantee, is not
available from the language. The returned rule list is post-processing of the releases, so it
is public; predicting on a private table would publish one value per row, so
`predict_rule_list` takes public tables. On a PUBLIC table the learner is Letham et al.'s
non-private BRL, for free.

The Options a ChoiceMaker may choose among (`BRLMined`, `BRLMinedEven`, `BRLMinedList`,
`BRLMinedItems`, `BRLMinedTriples`, `BRLMinedRare`, `BRLMinedCommon`, `BRLSchema`,
`BRLSchemaList`, `BRLSchemaMajority`, `BRLSchemaGreedy`, `BRLSchemaGreedyFive`, `BRLSchemaOneRule`,
`BRLMinedShort`, `BRLMinedLong`, `BRLMinedPairs`) are the configurations of
`jostle.learners.brl.options`; the shipped ChoiceMaker (stdlib brl.jst) is trained on
`generated_rule_corpus()`, `rule_list_corpus()` holds the older public tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from jostle.choicemaker.budgets import pure_cost
from jostle.diagnostics.errors import JostleRuntimeError
from jostle.diagnostics.source import Span
from jostle.language.calls import (BUDGET_KEYWORDS, ChoiceCall, budget_of as _budget_of,
                                   check_keywords as _check_keywords, check_learnable as _check_learnable)
from jostle.language.values import CorpusValue, type_name
from jostle.learnerkit import language as kit
from jostle.privacy.subledger import option_guard
from jostle.learnerkit.language import ClassifierModel, CodedModel, TaskData, training_arguments
from jostle.learners.brl.options import DEFAULT_ROW_BOUND, BRL_OPTIONS
from jostle.privacy.budget import floor_float
from jostle.privacy.measures import RhoZCDPBudget

__all__ = ["LEARNER_KEYWORDS", "TASK", "CodedRuleListPredictions", "RuleListLearner", "RuleListModel", "RuleTask",
           "choice_call", "register", "task_data", "training_arguments", "training_result"]

TASK = "classification"  # the task of every classifier family (a ChoiceMaker may mix their Options)
LEARNER_KEYWORDS = (*BUDGET_KEYWORDS, "max_rows", "antecedents", "list_length", "max_length", "min_support")


RuleTask = TaskData  # a classification task read from a table (the learner kit's)


def task_data(table: Any, target: Any, span: Span, who: str) -> TaskData:
    """Encode a table's categorical columns (public domains) for a rule-list learner: the class
    column must declare at least two values."""
    return kit.task_data(table, target, span, who, min_classes=2)


@dataclass(eq=False)
class RuleListModel(ClassifierModel):
    """A trained rule list: public, prints, predicts on public tables (the learner kit's
    public-table prediction rules, `ClassifierModel`)."""

    jostle_type = "rule_list"
    noun = "rule list"

    learner: str
    fit: Any                 # jostle.learners.brl.learner.FitResult
    attributes: tuple[str, ...]
    domains: tuple[tuple, ...]
    classes: tuple
    target: str
    epsilon: float | None
    rho: float | None = None  # a zCDP program's budget of the call (then `epsilon` is what the fit ran at)

    @property
    def rule_list(self) -> Any:
        return self.fit.rule_list

    def __str__(self) -> str:
        rules = self.rule_list
        privacy = f"epsilon {self.epsilon:g}" if self.epsilon is not None else "not private"
        if self.rho is not None:
            privacy = f"rho {self.rho:g}, run at {privacy}"
        title = (f"{self.learner} for '{self.target}' ({privacy}): {rules.length} rule(s) and a default, "
                 f"average antecedent length {rules.average_antecedent_length:.2f}")
        return rules.to_text(self.attributes, self.domains, self.classes, self.target, title)

    def predict_proba_codes(self, X: np.ndarray, columns: Sequence[str] = ()) -> np.ndarray:
        return self.rule_list.predict_proba(X)


def _keyword_values(kwargs: dict[str, Any], span: Span, who: str) -> dict[str, Any]:
    """The learner's settings from its public keywords (checked before anything is charged)."""
    settings: dict[str, Any] = {}
    for key in ("max_rows", "max_length"):
        if key in kwargs:
            value = kwargs[key]
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise JostleRuntimeError(f"{who}: {key} must be a whole number >= 1 (public), got {value!r}", span)
            settings["row_bound" if key == "max_rows" else key] = int(value)
    if "antecedents" in kwargs:
        if kwargs["antecedents"] not in ("mined", "public"):
            raise JostleRuntimeError(f'{who}: antecedents must be "mined" or "public", got {kwargs["antecedents"]!r}',
                                     span)
        settings["antecedents"] = kwargs["antecedents"]
    for key, low, high in (("list_length", 0.0, float("inf")), ("min_support", 0.0, 1.0)):
        if key in kwargs:
            value = kwargs[key]
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                    or not (low < float(value) <= high):
                raise JostleRuntimeError(f"{who}: {key} must be a number in ({low:g}, {high:g}], got {value!r}", span)
            settings[key] = float(value)
    return settings


@dataclass(eq=False)
class RuleListLearner:
    """`BayesianRuleList(t, "class", epsilon=E, ...)`, and the family's Options for ChoiceMakers."""

    public_stateless = True
    jostle_type = "option"
    privacy = "choice"
    task = TASK
    dims = ()
    name: str
    option: str | None      # a key of BRL_OPTIONS (None: the configurable learner)

    @property
    def keywords(self) -> tuple[str, ...]:
        return LEARNER_KEYWORDS if self.option is None else BUDGET_KEYWORDS

    @property
    def fingerprint(self) -> str:
        return f"builtin-brl:{self.name}"

    @property
    def engine_option(self) -> Any:
        """What the ChoiceMaker engine trains and runs (the family's Option)."""
        return BRL_OPTIONS[self.option or "BRLMined"]

    def __str__(self) -> str:
        return f"<option {self.name}>"

    def jostle_call(self, interp: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> RuleListModel:
        from dataclasses import replace

        from jostle.learners.brl.learner import BRLSettings, fit_nonprivate, fit_private
        from jostle.privacy.noise import SimulationNoise

        who = f"{self.name}()"
        _check_keywords(kwargs, span, who, self.keywords)
        table, target = kit.table_and_target(args, span, who)
        overrides = _keyword_values(kwargs, span, who)
        base = self.engine_option.settings(DEFAULT_ROW_BOUND) if self.option else BRLSettings(row_bound=DEFAULT_ROW_BOUND)
        try:
            settings = replace(base, **overrides)
            settings.check()
        except ValueError as error:
            raise JostleRuntimeError(f"{who}: {error}", span) from None
        data = task_data(table, target, span, who)
        sizes = [len(d) for d in data.domains]
        if not table.private:
            # public data: the non-private BRL, nothing to charge
            fit = fit_nonprivate(data.X, data.y, sizes, len(data.classes), replace(settings, max_length=10),
                                 SimulationNoise(0))
            return RuleListModel(self.name, fit, data.attributes, data.domains, data.classes, target, None)
        from jostle.learners.brl.family import FAMILY

        _check_learnable(table, FAMILY.units, span, who, FAMILY.name)
        budget = _budget_of(interp, kwargs, span, who)
        cost = pure_cost(budget)  # the pipeline runs at the pure epsilon within the budget
        interp.accountant.charge(cost, table.node, f"option {self.name}",
                                 f"{self.name} rule list on '{target}' ({len(data.attributes)} attributes)", span)
        # The accountant was charged the whole budget up front; the guard only holds the
        # pipeline within it (refusing a step before its noise is drawn).
        guard = option_guard(self.name, cost.epsilon)

        epsilon = Fraction(floor_float(cost.epsilon))
        fit = fit_private(data.X, data.y, sizes, len(data.classes), epsilon, settings, interp.randomness, guard)
        return RuleListModel(self.name, fit, data.attributes, data.domains, data.classes, target, float(epsilon),
                             float(budget.rho) if isinstance(budget, RhoZCDPBudget) else None)


CodedRuleListPredictions = CodedModel  # a Jostle option's rule list, predicting on codes (the learner kit's)


def training_result(value: Any, data: Any) -> CodedModel:
    """What the engine scores of a Jostle option's answer: a rule list, predicting on codes."""
    return kit.training_result(value, data, RuleListModel, "rule lists", 'return e.g. BayesianRuleList(db, target)')


def _rule_list_model(choice: str, fitted: Any, data: TaskData, target: str, epsilon: float,
                     rho: float | None) -> RuleListModel:
    return RuleListModel(choice, fitted.fit, data.attributes, data.domains, data.classes, target, epsilon, rho)


def choice_call(maker: Any, interp: Any, args: list[Any], span: Span) -> ChoiceCall:
    """`R(t, "class", epsilon=E)` for a ChoiceMaker over rule-list Options: the engine's input
    (the table's integer codes under its public schema) and how a built-in Option runs on it."""
    from jostle.learners.brl.family import FAMILY

    return kit.choice_call(maker, interp, args, span, FAMILY, _rule_list_model,
                           'train the non-private rule list instead: BayesianRuleList(t, "class")',
                           "train it on rule_list_corpus()", min_classes=2)


def register(builtin: Any, registry: dict[str, Any]) -> None:
    """Add the rule-list learner, its Options, its corpus and its model built-ins."""
    registry["BayesianRuleList"] = RuleListLearner("BayesianRuleList", None)
    for name in BRL_OPTIONS:
        registry[name] = RuleListLearner(name, name)

    @builtin("rule_list_corpus", 0, privacy="choice",
             doc="rule_list_corpus(): the bundled public two-class tables and planted rule-list tasks (offline)")
    def _corpus(interp, span):
        from jostle.learners.brl.corpus import rule_list_corpus

        return CorpusValue(rule_list_corpus(), "bundled two-class tasks", task=TASK)

    @builtin("generated_rule_corpus", 0, privacy="choice",
             doc="generated_rule_corpus(): generated two-class tasks (no benchmark table) the shipped rule-list "
                 "ChoiceMaker trains on (offline)")
    def _generated(interp, span):
        from jostle.learners.brl.corpus import generated_rule_corpus

        return CorpusValue(generated_rule_corpus(), "generated two-class tasks", task=TASK)

    kit.register_shared(registry)  # predict, accuracy: shared by every classifier family

    @builtin("predict_rule_list", 2, privacy="choice",
             doc="predict_rule_list(rules, t): a rule list's labels for a public table (the same as predict)")
    def _predict(interp, span, model, table):
        return kit.predict(interp, span, _model(model, span, "predict_rule_list()"), table, "predict_rule_list()")

    @builtin("rule_list_length", 1, privacy="choice", doc="rule_list_length(rules): rules before the default")
    def _length(interp, span, model):
        return _model(model, span, "rule_list_length()").rule_list.length

    @builtin("average_antecedent_length", 1, privacy="choice",
             doc="average_antecedent_length(rules): mean number of conditions per rule")
    def _average(interp, span, model):
        return _model(model, span, "average_antecedent_length()").rule_list.average_antecedent_length


def _model(model: Any, span: Span, who: str) -> RuleListModel:
    if not isinstance(model, RuleListModel):
        raise JostleRuntimeError(f"{who} needs a trained rule list, got a {type_name(model)}", span,
                                 'train one with e.g. BayesianRuleList(t, "class", epsilon=0.5)')
    return model
