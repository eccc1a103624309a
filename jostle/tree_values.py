"""Decision trees in the language: the tree learners as options, trained trees as values.

    model = FriedmanSchuster(t, "class", epsilon=0.5)     # a private table in, a public tree out
    print(model)                                          # a readable printout
    labels = predict(model, test)                         # on a PUBLIC table
    print(accuracy(model, test, "class"))

The five published learners of jostle.trees are built-in options (`FriedmanSchuster`,
`Mohammed`, `RandomTrees` (Jagannathan et al.), `PatilSingh`, `FletcherIslam`); `C45` is the
non-private baseline and only accepts public tables. They can be listed in a ChoiceMaker like
the histogram options.

Privacy. The learner's attributes and classes are the table's categorical columns, whose
domains are public (numeric columns must be binned into public bins first). A call with budget
E charges E to the accountant *once, before the learner draws any noise*; the learner then
splits E over its levels, trees and leaves and its own ledger refuses any measurement that
would take it past E (its privacy argument is in its docstring, jostle.trees). The returned
tree is a function of its noisy measurements only (post-processing), so it is public.
Predicting on a private table would publish one value per private row, so `predict` and
`accuracy` take public tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from jostle.budget import Budget
from jostle.errors import JostleRuntimeError, PrivacyError
from jostle.schema import Categorical
from jostle.source import Span
from jostle.trees.accounting import floor_float
from jostle.values import Table, type_name

# Language name -> jostle.trees configuration.
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

    jostle_type = "tree"
    public_result = True  # a released model: Session.eval may return it to Python (jostle.values.to_python)
    learner: str
    estimator: Any
    attributes: tuple[str, ...]
    domains: tuple[tuple, ...]
    classes: tuple
    target: str
    epsilon: float | None
    coded: bool = False  # the estimator was fitted on integer codes (the ChoiceMaker's path)

    def __str__(self) -> str:
        head = f"{self.learner} tree for '{self.target}'"
        head += f" (epsilon {self.epsilon:g})" if self.epsilon is not None else " (not private)"
        if not self.coded:
            return head + "\n" + self.estimator.to_text(max_trees=1)
        # fitted on integer codes (the ChoiceMaker's path): print the table's own names and labels
        from jostle.trees.encoding import EncodedDomains
        from jostle.trees.printing import tree_to_text

        domains = EncodedDomains(tuple(self.attributes), np.array([len(d) for d in self.domains]),
                                 tuple(tuple(str(v) for v in d) for d in self.domains))
        trees = self.estimator.trees_
        tree = trees[0]
        title = (f"{self.estimator._title()} tree 1/{len(trees)}: {tree.n_nodes} nodes, {tree.n_leaves} leaves, "
                 f"depth {tree.max_depth}, epsilon {tree.epsilon:.4g}")
        text = tree_to_text(tree, domains, [str(c) for c in self.classes], title)
        if len(trees) > 1:
            text += f"\n\n({len(trees) - 1} more trees not shown)"
        return head + "\n" + text

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

    jostle_type = "option"
    privacy = "choice"
    keywords = ("epsilon",)
    task = "classification"
    dims = ()
    name: str
    configuration: str | None  # None: the non-private C4.5 baseline

    @property
    def fingerprint(self) -> str:
        return f"builtin-tree:{self.name}"

    def __str__(self) -> str:
        return f"<option {self.name}>"

    def jostle_call(self, interp: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> TreeModel:
        from jostle.dispatch import _budget_of, _check_keywords

        who = f"{self.name}()"
        _check_keywords(kwargs, span, who)
        if len(args) != 2:
            raise JostleRuntimeError(f"{who} takes 2 arguments (table, class column) but {len(args)} were given",
                                     span)
        table, target = args
        data = task_data(table, target, span, who)
        if self.configuration is None:
            if table.private:
                raise PrivacyError("C45 is not private: it only learns from public tables", span,
                                   "use FriedmanSchuster, Mohammed, RandomTrees, PatilSingh or FletcherIslam")
            return self.fit(data, None, None, target)
        if not table.private:
            budget = None
        else:
            budget = _budget_of(interp, kwargs, span, who)
            interp.accountant.charge(budget, table.node, f"option {self.name}",
                                     f"{self.name} tree on '{target}' ({len(data.attributes)} attributes)", span)
        return self.fit(data, budget, interp.randomness if budget is not None else None, target)

    def fit(self, data: TaskData, budget: Budget | None, noise: Any, target: str) -> TreeModel:
        """Train on `data`; with a budget the caller has charged it in full already."""
        from jostle.trees import C45DecisionTreeClassifier, make_learner

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
            epsilon = floor_float(budget.epsilon)
            cap = budget.epsilon
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
        return TreeModel(self.name, estimator, data.attributes, data.domains, data.classes, target, epsilon)


def choose_tree(maker: Any, interp: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> TreeModel:
    """`T(t, "class", epsilon=E)` for a ChoiceMaker over tree learners.

    The whole E is checked against every limit first; then each noisy metafeature and the chosen
    learner are charged (exact binary values of the engine's float shares, whose exact sum the
    engine keeps at or below E) before their noise is drawn.
    """
    from jostle.choicemaker.tree_corpus import ClassificationData
    from jostle.choicemaker.tree_task import dispatch_tree
    from jostle.dispatch import _budget_of
    from jostle.values import Record

    who = f"{maker.name}()"
    if len(args) != 2:
        raise JostleRuntimeError(f"{who} takes 2 arguments (table, class column) but {len(args)} were given", span)
    table, target = args
    data = task_data(table, target, span, who)
    if not table.private:
        raise JostleRuntimeError(f"{who} learns from a private table; this one is public", span,
                                 'train the non-private baseline instead: C45(t, "class")')
    budget = _budget_of(interp, kwargs, span, who)
    interp.accountant.check(budget, table.node, span)
    trained = maker.ensure_trained(interp)
    if trained is None:
        raise JostleRuntimeError(f"{maker.name} needs a corpus to learn from", span, "train it on tree_corpus()")
    coded = ClassificationData(data.X, data.y, tuple(len(d) for d in data.domains), len(data.classes),
                               data.attributes, data.classes, name=table.name)
    epsilon = floor_float(budget.epsilon)  # never above the rational checked above

    def charge(amount: float, description: str) -> None:
        interp.accountant.charge(Budget(Fraction(amount)), table.node, description,
                                 f"{description} for {maker.name}", span)

    result = dispatch_tree(trained, coded, epsilon, interp.randomness, charge)
    spent = sum(result.budget_split.values())
    maker.traces.append(Record.of({
        "choicemaker": maker.name, "where": span.location,
        "metafeatures": Record.of({k: float(v) for k, v in result.features.items()}),
        "predicted_error": Record.of({k: float(v) for k, v in result.predictions.items()}),
        "prior": Record.of({}), "choice": result.choice, "epsilon": float(budget.epsilon),
        "metafeature_epsilon": float(spent - result.budget_split.get(f"option {result.choice}", 0.0)),
        "option_epsilon": float(result.budget_split.get(f"option {result.choice}", 0.0)),
    }))
    return TreeModel(result.choice, result.model, data.attributes, data.domains, data.classes, target,
                     float(budget.epsilon), coded=True)


def register(builtin: Any, registry: dict[str, Any]) -> None:
    """Add the tree options and `predict` / `accuracy` to the built-in registry."""
    for name, configuration in TREE_LEARNERS.items():
        registry[name] = TreeOption(name, configuration)
    registry["C45"] = TreeOption("C45", None)

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
