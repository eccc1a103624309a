"""Decision trees in the language: the tree learners as options, trained trees as values.

    model = FriedmanSchuster(t, "class", epsilon=0.5)     # a private table in, a public tree out
    print(model)                                          # a readable printout
    labels = predict(model, test)                         # on a PUBLIC table
    print(accuracy(model, test, "class"))

The five published learners of jostle.learners.trees are built-in options (`FriedmanSchuster`,
`Mohammed`, `RandomTrees` (Jagannathan et al.), `PatilSingh`, `FletcherIslam`); `C45` is the
non-private baseline and only accepts public tables. They can be listed in a ChoiceMaker like
the histogram options.

Privacy. The learner's attributes and classes are the table's categorical columns, whose
domains are public (numeric columns must be binned into public bins first). The learners' privacy
arguments are for neighbours one row apart: a table whose stability is above 1 (or unbounded),
or whose privacy unit the family does not declare, is refused before any charge
(`calls.check_learnable`); the family does not scale its noise to the stability. A call's budget
is typed (`calls.budget_of`): the learner runs at the pure epsilon E within it (a rho r in a zCDP
program: the largest E with E^2 / 2 <= r). A call charges E to the accountant *once, before the
learner draws any noise* (counted as E^2 / 2 in a zCDP program); the learner then
splits E over its levels, trees and leaves and its own ledger refuses any measurement that
would take it past E (its privacy argument is in its docstring, jostle.learners.trees). The returned
tree is a function of its noisy measurements only (post-processing), so it is public.
Predicting on a private table would publish one value per private row, so `predict` and
`accuracy` take public tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from jostle.diagnostics.errors import JostleRuntimeError, PrivacyError
from jostle.data.schema import Categorical
from jostle.diagnostics.source import Span
from jostle.learners.trees.accounting import floor_float
from jostle.choicemaker.budgets import pure_cost, pure_epsilon_within
from jostle.language.calls import (BUDGET_KEYWORDS, ChoiceCall, budget_of as _budget_of,
                                   check_keywords as _check_keywords, check_learnable as _check_learnable)
from jostle.privacy.measures import AnyBudget, RhoZCDPBudget
from jostle.language.values import CorpusValue, Table, type_name

# Language name -> jostle.learners.trees configuration.
TREE_LEARNERS = {
    "FriedmanSchuster": "friedman_schuster",
    "Mohammed": "mohammed",
    "RandomTrees": "jagannathan",
    "PatilSingh": "patil_singh",
    "FletcherIslam": "fletcher_islam",
    "OneRule": "one_rule",
    "BinaryTree": "binary_joint",
    "Majority": "majority",
}


@dataclass(frozen=True)
class TaskData:
    """A classification task read from a table under its public schema."""

    X: np.ndarray          # (rows, attributes) integer codes
    y: np.ndarray          # class codes
    attributes: tuple[str, ...]
    domains: tuple[tuple, ...]   # each attribute's public categories
    classes: tuple         # the class column's public categories


def task_data(table: Table, target: Any, span: Span, who: str, attributes: Any = None) -> TaskData:
    """Encode a table's categorical columns (public domains) for a tree learner."""
    if not isinstance(table, Table):
        raise JostleRuntimeError(f"{who} needs a table, got a {type_name(table)}", span)
    if not isinstance(target, str) or target not in table.schema:
        raise JostleRuntimeError(f"{who}: table '{table.name}' has no column {target!r}", span,
                                 f"its columns are {table.schema.names}")
    names = [n for n in table.schema.names if n != target] if attributes is None else list(attributes)
    specs = {}
    for name in [*names, target]:
        if name not in table.schema:
            raise JostleRuntimeError(f"{who}: table '{table.name}' has no column {name!r}", span)
        spec = table.schema[name]
        if not isinstance(spec, Categorical):
            raise JostleRuntimeError(f"{who} needs categorical columns; '{name}' is numeric", span,
                                     f'bin it into public bins first: t.bin("{name}", [edges...])')
        specs[name] = spec
    if not names:
        raise JostleRuntimeError(f"{who} needs at least one attribute besides the class column", span)
    frame = table.frame

    def codes(name: str) -> np.ndarray:
        position = {v: i for i, v in enumerate(specs[name].values)}
        return np.fromiter((position[v] for v in frame[name].tolist()), dtype=np.int64, count=len(frame))

    X = np.column_stack([codes(n) for n in names]) if len(frame) else np.zeros((0, len(names)), dtype=np.int64)
    return TaskData(X, codes(target), tuple(names), tuple(tuple(specs[n].values) for n in names),
                    tuple(specs[target].values))


@dataclass(eq=False)
class TreeModel:
    """A trained tree (or ensemble): public, usable on public tables."""

    public_stateless = True  # training copies may share it (jostle.language.training_boundary)

    jostle_type = "tree"
    public_result = True  # a released model: Session.eval may return it to Python (jostle.language.values.to_python)
    learner: str
    estimator: Any
    attributes: tuple[str, ...]
    domains: tuple[tuple, ...]
    classes: tuple
    target: str
    epsilon: float | None
    coded: bool = False  # the estimator was fitted on integer codes (the ChoiceMaker's path)
    rho: float | None = None  # a zCDP program's budget of the call (then `epsilon` is what the learner ran at)

    def __str__(self) -> str:
        head = f"{self.learner} for '{self.target}'"
        if self.rho is not None:
            head += f" (rho {self.rho:g}, run at epsilon {self.epsilon:g})"
        else:
            head += f" (epsilon {self.epsilon:g})" if self.epsilon is not None else " (not private)"
        if not self.coded:
            return head + "\n" + self.estimator.to_text(max_trees=1)
        # fitted on integer codes (the ChoiceMaker's path): print the table's own names and labels
        from jostle.learners.trees.encoding import EncodedDomains

        domains = EncodedDomains(tuple(self.attributes), np.array([len(d) for d in self.domains]),
                                 tuple(tuple(str(v) for v in d) for d in self.domains))
        return head + "\n" + self.estimator.to_text(max_trees=1, domains=domains,
                                                    classes=[str(c) for c in self.classes])

    def predict_labels(self, table: Table, span: Span, who: str) -> list:
        if table.private:
            raise PrivacyError(f"{who} would publish one prediction per row of a private table", span,
                               "use a public test table (load_public), or release aggregates of the private one")
        for name, domain in zip(self.attributes, self.domains):
            if name not in table.schema:
                raise JostleRuntimeError(f"{who}: the table has no column '{name}' the tree was trained on", span)
            spec = table.schema[name]
            if not isinstance(spec, Categorical) or tuple(spec.values) != domain:
                raise JostleRuntimeError(f"{who}: column '{name}' must have the domain the tree was trained on",
                                         span, f"declare it as categorical({list(domain)})")
        frame = table.frame[list(self.attributes)]
        if len(frame) == 0:
            return []
        if not self.coded:
            return list(self.estimator.predict(frame))
        codes = np.column_stack([
            np.fromiter(({v: i for i, v in enumerate(domain)}[v] for v in frame[name].tolist()), dtype=np.int64,
                        count=len(frame))
            for name, domain in zip(self.attributes, self.domains)])
        return [self.classes[int(c)] for c in self.estimator.predict(codes)]


@dataclass(eq=False)
class TreeOption:
    """A tree learner callable from Jostle: `Learner(t, "class", epsilon=E)`."""

    public_stateless = True  # training copies may share it (jostle.language.training_boundary)

    jostle_type = "option"
    privacy = "choice"
    keywords = BUDGET_KEYWORDS
    task = "classification"
    dims = ()
    name: str
    configuration: str | None  # None: the non-private C4.5 baseline

    @property
    def fingerprint(self) -> str:
        return f"builtin-tree:{self.name}"

    @property
    def engine_option(self) -> Any:
        """What the ChoiceMaker engine trains and runs (the family's Option)."""
        from jostle.learners.trees.options import TREE_OPTIONS

        return TREE_OPTIONS[self.name]

    def __str__(self) -> str:
        return f"<option {self.name}>"

    def jostle_call(self, interp: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> TreeModel:
        who = f"{self.name}()"
        _check_keywords(kwargs, span, who)
        if len(args) != 2:
            raise JostleRuntimeError(f"{who} takes 2 arguments (table, class column) but {len(args)} were given",
                                     span)
        table, target = args
        data = task_data(table, target, span, who)
        if not table.private and len(data.y) == 0:
            # a public table's size is public: the non-private baseline needs a row to learn from
            raise JostleRuntimeError(f"{who} needs at least one row to learn from; this public table is empty", span)
        if self.configuration is None:
            if table.private:
                raise PrivacyError("C45 is not private: it only learns from public tables", span,
                                   "use FriedmanSchuster, Mohammed, RandomTrees, PatilSingh or FletcherIslam")
            return self.fit(data, None, None, target)
        if not table.private:
            budget = None
        else:
            from jostle.learners.trees.family import FAMILY

            _check_learnable(table, FAMILY.units, span, who, FAMILY.name)
            budget = _budget_of(interp, kwargs, span, who)
            interp.accountant.charge(pure_cost(budget), table.node, f"option {self.name}",
                                     f"{self.name} tree on '{target}' ({len(data.attributes)} attributes)", span)
        return self.fit(data, budget, interp.randomness if budget is not None else None, target)

    def fit(self, data: TaskData, budget: AnyBudget | None, noise: Any, target: str) -> TreeModel:
        """Train on `data`; with a budget the caller has charged its planned cost (the pure
        epsilon within it, `pure_cost`) in full already."""
        import pandas as pd
        from jostle.learners.trees import C45DecisionTreeClassifier, make_learner

        domains = {name: list(domain) for name, domain in zip(data.attributes, data.domains)}
        classes = list(data.classes)
        frame = pd.DataFrame({name: np.asarray(domain, dtype=object)[data.X[:, j]] if len(data.X) else []
                              for j, (name, domain) in enumerate(zip(data.attributes, data.domains))})
        labels = np.asarray(classes, dtype=object)[data.y] if len(data.y) else np.asarray([], dtype=object)
        if self.configuration is None or budget is None:
            estimator = C45DecisionTreeClassifier(domains=domains, classes=classes)
            epsilon = None
        else:
            # the largest float not above the rational charged (float() may round above it)
            cap = pure_epsilon_within(budget)
            epsilon = floor_float(cap)
            spent = [Fraction(0)]

            def charge(amount: float, description: str) -> None:
                # The accountant was charged the whole budget up front; this only guards that
                # the learner stays within it (raising before its noise is drawn if not).
                spent[0] += Fraction(amount)
                if spent[0] > cap:
                    raise RuntimeError(f"tree learner exceeded its budget at {description}")

            estimator = make_learner(self.configuration, epsilon, domains=domains, classes=classes,
                                     noise=noise, charge=charge)
        estimator.fit(frame, labels)
        rho = float(budget.rho) if isinstance(budget, RhoZCDPBudget) else None
        return TreeModel(self.name, estimator, data.attributes, data.domains, data.classes, target, epsilon,
                         rho=rho)


TRAINING_TARGET = "class"


def training_arguments(data: Any, interp: Any) -> list[Any]:
    """An option written in Jostle, trained on a public task: its arguments, the task's codes as
    a private table (each column categorical over its public codes) and the class column's name."""
    import pandas as pd

    from jostle.data.schema import Schema
    from jostle.diagnostics.source import BUILTIN_SPAN

    names = [str(n) for n in data.attribute_names]
    target = TRAINING_TARGET if TRAINING_TARGET not in names else "__class__"
    frame = pd.DataFrame({name: data.X[:, j].astype(np.int64) for j, name in enumerate(names)})
    frame[target] = np.asarray(data.y, dtype=np.int64)
    schema = Schema.of({**{name: Categorical(list(range(size))) for name, size in zip(names, data.domain_sizes)},
                     target: Categorical(list(range(data.n_classes)))})
    table = Table(frame, schema, True, "training table", interp.accountant.root, BUILTIN_SPAN)
    return [table, target]


class CodedPredictions:
    """A Jostle option's trained tree, predicting on a task's integer codes (what `TreeFamily.error` calls)."""

    def __init__(self, model: TreeModel, attribute_names: tuple) -> None:
        self.model, self.columns = model, [str(n) for n in attribute_names]

    def predict(self, X: np.ndarray) -> np.ndarray:
        import pandas as pd

        if self.model.coded:
            return np.asarray(self.model.estimator.predict(X))
        return np.asarray(self.model.estimator.predict(pd.DataFrame(X, columns=self.columns)), dtype=np.int64)


def training_result(value: Any, data: Any) -> CodedPredictions:
    """What the engine scores of a Jostle option's answer: a tree, predicting on codes."""
    if not isinstance(value, TreeModel):
        raise JostleRuntimeError(f"an option over tree learners must return a trained tree, got a {type_name(value)}",
                                 None, 'return a learner\'s tree, e.g. return FriedmanSchuster(db, target)')
    return CodedPredictions(value, data.attribute_names)


def choice_call(maker: Any, interp: Any, args: list[Any], span: Span) -> ChoiceCall:
    """`T(t, "class", epsilon=E)` for a ChoiceMaker over tree learners: the engine's input (the
    table's integer codes under its public schema) and how a built-in learner runs on it."""
    from jostle.learners.trees.corpus import ClassificationData
    from jostle.learners.trees.family import FAMILY

    who = f"{maker.name}()"
    if len(args) != 2:
        raise JostleRuntimeError(f"{who} takes 2 arguments (table, class column) but {len(args)} were given", span)
    table, target = args
    data = task_data(table, target, span, who)
    if not table.private:
        raise JostleRuntimeError(f"{who} learns from a private table; this one is public", span,
                                 'train the non-private baseline instead: C45(t, "class")')
    unit = _check_learnable(table, FAMILY.units, span, who, FAMILY.name)
    coded = ClassificationData(data.X, data.y, tuple(len(d) for d in data.domains), len(data.classes),
                               data.attributes, data.classes, name=table.name)

    def measure(metafeature: Any, amount: Fraction, noise: Any, context: Any) -> float:
        return float(metafeature.measure(coded, floor_float(amount) if amount > 0 else 0.0, noise, context))

    def run(option: Any, part: AnyBudget, released: Any) -> Any:
        return FAMILY.run_option(option.engine_option, coded, part, interp.randomness, released)

    def wrap(model: Any, choice: str, budget: AnyBudget) -> TreeModel:
        if isinstance(budget, RhoZCDPBudget):
            return TreeModel(choice, model, data.attributes, data.domains, data.classes, target,
                             float(pure_epsilon_within(budget)), coded=True, rho=float(budget.rho))
        return TreeModel(choice, model, data.attributes, data.domains, data.classes, target, float(budget.epsilon),
                         coded=True)

    return ChoiceCall(coded, table.node, True, None, measure, run, wrap, "train it on tree_corpus()", unit)


def register(builtin: Any, registry: dict[str, Any]) -> None:
    """Add the tree options and `predict` / `accuracy` to the built-in registry."""
    for name, configuration in TREE_LEARNERS.items():
        registry[name] = TreeOption(name, configuration)
    registry["C45"] = TreeOption("C45", None)

    @builtin("tree_corpus", 0, privacy="choice",
             doc="tree_corpus(): the bundled public corpus of categorical classification tasks, plus generated ones (offline)")
    def _tree_corpus(interp, span):
        from jostle.learners.trees.corpus import tree_corpus

        return CorpusValue(tree_corpus(), "bundled classification tasks", task="classification")

    @builtin("predict", 2, privacy="choice", doc="predict(model, t): a trained tree's labels for a public table")
    def _predict(interp, span, model, table):
        model, table = _model_and_table(model, table, span, "predict()")
        return tuple(model.predict_labels(table, span, "predict()"))

    @builtin("accuracy", 3, privacy="choice",
             doc='accuracy(model, t, "class"): the share of rows of a public table a tree labels right')
    def _accuracy(interp, span, model, table, target):
        model, table = _model_and_table(model, table, span, "accuracy()")
        if not isinstance(target, str) or target not in table.schema:
            raise JostleRuntimeError(f"accuracy(): the table has no column {target!r}", span)
        predicted = model.predict_labels(table, span, "accuracy()")
        if len(predicted) == 0:
            raise JostleRuntimeError("accuracy() of an empty table", span)
        truth = table.frame[target].tolist()
        return float(np.mean([p == t for p, t in zip(predicted, truth)]))


def _model_and_table(model: Any, table: Any, span: Span, who: str) -> tuple[TreeModel, Table]:
    if not isinstance(model, TreeModel):
        raise JostleRuntimeError(f"{who} needs a trained tree, got a {type_name(model)}", span,
                                 'train one with e.g. FriedmanSchuster(t, "class", epsilon=0.5)')
    if not isinstance(table, Table):
        raise JostleRuntimeError(f"{who} needs a table, got a {type_name(table)}", span)
    return model, table
