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

The Options a ChoiceMaker may choose among (`BRLMined`, `BRLMinedList`, `BRLMinedItems`,
`BRLSchema`, `BRLSchemaList`, `BRLMinedShort`) are the configurations of
`jostle.learners.brl.options`, trained on `rule_list_corpus()`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from jostle.data.schema import Categorical
from jostle.diagnostics.errors import JostleRuntimeError, PrivacyError
from jostle.diagnostics.source import Span
from jostle.choicemaker.budgets import pure_cost, pure_epsilon_within
from jostle.language.calls import (BUDGET_KEYWORDS, ChoiceCall, budget_of as _budget_of,
                                   check_keywords as _check_keywords, check_learnable as _check_learnable)
from jostle.language.values import CorpusValue, Table, type_name
from jostle.learners.brl.options import DEFAULT_ROW_BOUND, BRL_OPTIONS
from jostle.privacy.budget import floor_float
from jostle.privacy.measures import AnyBudget, RhoZCDPBudget

TASK = "rule_list"
LEARNER_KEYWORDS = (*BUDGET_KEYWORDS, "max_rows", "antecedents", "list_length", "max_length", "min_support")


@dataclass(frozen=True)
class RuleTask:
    """A classification task read from a table under its public schema."""

    X: np.ndarray
    y: np.ndarray
    attributes: tuple[str, ...]
    domains: tuple[tuple, ...]
    classes: tuple


def task_data(table: Any, target: Any, span: Span, who: str) -> RuleTask:
    """Encode a table's categorical columns (public domains) for a rule-list learner."""
    if not isinstance(table, Table):
        raise JostleRuntimeError(f"{who} needs a table, got a {type_name(table)}", span)
    if not isinstance(target, str) or target not in table.schema:
        raise JostleRuntimeError(f"{who}: table '{table.name}' has no column {target!r}", span,
                                 f"its columns are {table.schema.names}")
    names = [n for n in table.schema.names if n != target]
    specs = {}
    for name in [*names, target]:
        spec = table.schema[name]
        if not isinstance(spec, Categorical):
            raise JostleRuntimeError(f"{who} needs categorical columns; '{name}' is numeric", span,
                                     f'bin it into public bins first: t.bin("{name}", [edges...])')
        specs[name] = spec
    if not names:
        raise JostleRuntimeError(f"{who} needs at least one attribute besides the class column", span)
    if len(specs[target].values) < 2:
        raise JostleRuntimeError(f"{who}: the class column '{target}' must declare at least two values", span)
    frame = table.frame

    def codes(name: str) -> np.ndarray:
        position = {v: i for i, v in enumerate(specs[name].values)}
        return np.fromiter((position[v] for v in frame[name].tolist()), dtype=np.int64, count=len(frame))

    X = np.column_stack([codes(n) for n in names]) if len(frame) else np.zeros((0, len(names)), dtype=np.int64)
    return RuleTask(X, codes(target), tuple(names), tuple(tuple(specs[n].values) for n in names),
                    tuple(specs[target].values))


@dataclass(eq=False)
class RuleListModel:
    """A trained rule list: public, prints, predicts on public tables."""

    public_stateless = True  # training copies may share it (jostle.language.training_boundary)
    jostle_type = "rule_list"
    public_result = True     # a released model: Session.eval may return it to Python

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

    def predict_labels(self, table: Any, span: Span, who: str) -> list:
        """The class each row of a PUBLIC table gets (its capturing rule's most probable class)."""
        if not isinstance(table, Table):
            raise JostleRuntimeError(f"{who} needs a table, got a {type_name(table)}", span)
        if table.private:
            raise PrivacyError(f"{who} would publish one prediction per row of a private table", span,
                               "use a public test table (load_public), or release aggregates of the private one")
        for name, domain in zip(self.attributes, self.domains):
            if name not in table.schema:
                raise JostleRuntimeError(f"{who}: the table has no column '{name}' the rule list was trained on", span)
            spec = table.schema[name]
            if not isinstance(spec, Categorical) or tuple(spec.values) != domain:
                raise JostleRuntimeError(f"{who}: column '{name}' must have the domain the rule list was trained on",
                                         span, f"declare it as categorical({list(domain)})")
        frame = table.frame
        if len(frame) == 0:
            return []
        codes = np.column_stack([
            np.fromiter(({v: i for i, v in enumerate(domain)}[v] for v in frame[name].tolist()), dtype=np.int64,
                        count=len(frame)) for name, domain in zip(self.attributes, self.domains)])
        return [self.classes[int(c)] for c in self.rule_list.predict_proba(codes).argmax(axis=1)]


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
        if len(args) != 2:
            raise JostleRuntimeError(f"{who} takes 2 arguments (table, class column) but {len(args)} were given", span)
        table, target = args
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
        cap, spent = cost.epsilon, [Fraction(0)]

        def guard(amount: float, description: str) -> None:
            # The accountant was charged the whole budget up front; this only guards that the
            # pipeline stays within it (raising before its noise is drawn if not).
            spent[0] += Fraction(amount)
            if spent[0] > cap:
                raise RuntimeError(f"rule-list learner exceeded its budget at {description}")

        epsilon = Fraction(floor_float(cost.epsilon))
        fit = fit_private(data.X, data.y, sizes, len(data.classes), epsilon, settings, interp.randomness, guard)
        return RuleListModel(self.name, fit, data.attributes, data.domains, data.classes, target, float(epsilon),
                             float(budget.rho) if isinstance(budget, RhoZCDPBudget) else None)


def training_arguments(data: Any, interp: Any) -> list[Any]:
    """An option written in Jostle, trained on a public task: the task's codes as a private table
    (each column categorical over its public codes) and the class column's name."""
    import pandas as pd

    from jostle.data.schema import Schema
    from jostle.diagnostics.source import BUILTIN_SPAN

    names = [str(n) for n in data.attribute_names]
    target = "class" if "class" not in names else "__class__"
    frame = pd.DataFrame({name: data.X[:, j].astype(np.int64) for j, name in enumerate(names)})
    frame[target] = np.asarray(data.y, dtype=np.int64)
    schema = Schema.of({**{name: Categorical(list(range(size))) for name, size in zip(names, data.domain_sizes)},
                        target: Categorical(list(range(data.n_classes)))})
    return [Table(frame, schema, True, "training table", interp.accountant.root, BUILTIN_SPAN), target]


class CodedRuleListPredictions:
    """A Jostle option's rule list, predicting on a task's integer codes (what the family scores)."""

    def __init__(self, model: RuleListModel) -> None:
        self.model = model

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        return self.model.rule_list.predict_proba(X)


def training_result(value: Any, data: Any) -> CodedRuleListPredictions:
    """What the engine scores of a Jostle option's answer: a rule list, predicting on codes."""
    if not isinstance(value, RuleListModel):
        raise JostleRuntimeError(f"an option over rule lists must return a trained rule list, got a "
                                 f"{type_name(value)}", None, 'return e.g. BayesianRuleList(db, target)')
    return CodedRuleListPredictions(value)


def choice_call(maker: Any, interp: Any, args: list[Any], span: Span) -> ChoiceCall:
    """`R(t, "class", epsilon=E)` for a ChoiceMaker over rule-list Options: the engine's input
    (the table's integer codes under its public schema) and how a built-in Option runs on it."""
    from jostle.learners.brl.corpus import RuleData
    from jostle.learners.brl.family import FAMILY

    who = f"{maker.name}()"
    if len(args) != 2:
        raise JostleRuntimeError(f"{who} takes 2 arguments (table, class column) but {len(args)} were given", span)
    table, target = args
    data = task_data(table, target, span, who)
    if not table.private:
        raise JostleRuntimeError(f"{who} learns from a private table; this one is public", span,
                                 'train the non-private rule list instead: BayesianRuleList(t, "class")')
    unit = _check_learnable(table, FAMILY.units, span, who, FAMILY.name)
    coded = RuleData(data.X, data.y, tuple(len(d) for d in data.domains), len(data.classes), data.attributes,
                     data.domains, data.classes, name=table.name)

    def measure(metafeature: Any, amount: Fraction, noise: Any, context: Any) -> float:
        return float(metafeature.measure(coded, floor_float(amount) if amount > 0 else 0.0, noise, context))

    def run(option: Any, part: AnyBudget, released: Any) -> Any:
        return FAMILY.run_option(option.engine_option, coded, part, interp.randomness, released)

    def wrap(model: Any, choice: str, budget: AnyBudget) -> RuleListModel:
        if isinstance(budget, RhoZCDPBudget):
            return RuleListModel(choice, model.fit, data.attributes, data.domains, data.classes, target,
                                 float(pure_epsilon_within(budget)), float(budget.rho))
        return RuleListModel(choice, model.fit, data.attributes, data.domains, data.classes, target,
                             float(budget.epsilon))

    return ChoiceCall(coded, table.node, True, None, measure, run, wrap, "train it on rule_list_corpus()", unit)


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

    @builtin("predict_rule_list", 2, privacy="choice",
             doc="predict_rule_list(rules, t): a rule list's labels for a public table")
    def _predict(interp, span, model, table):
        return tuple(_model(model, span, "predict_rule_list()").predict_labels(table, span, "predict_rule_list()"))

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
