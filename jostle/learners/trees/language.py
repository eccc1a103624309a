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
from typing import Any, Sequence

import numpy as np

from jostle.choicemaker.budgets import pure_cost, pure_epsilon_within
from jostle.diagnostics.errors import JostleRuntimeError, PrivacyError
from jostle.diagnostics.source import Span
from jostle.language.calls import (BUDGET_KEYWORDS, ChoiceCall, budget_of as _budget_of,
                                   check_keywords as _check_keywords, check_learnable as _check_learnable)
from jostle.language.values import CorpusValue
from jostle.learnerkit import language as kit
from jostle.learners.trees.options import TREE_OPTIONS
from jostle.privacy.subledger import option_guard
from jostle.learnerkit.language import (TRAINING_TARGET, ClassifierModel, CodedModel, TaskData, task_data,
                                       training_arguments)
from jostle.privacy.budget import floor_float
from jostle.privacy.measures import AnyBudget, RhoZCDPBudget

__all__ = ["TRAINING_TARGET", "TREE_LEARNERS", "CodedPredictions", "TaskData", "TreeModel", "TreeOptionValue",
           "choice_call", "register", "task_data", "training_arguments", "training_result"]

# Language name -> jostle.learners.trees configuration: every Option of the family
# (`options.TREE_OPTIONS`: the published learners, the low-budget ones and the variants).
TREE_LEARNERS = {name: option.configuration for name, option in TREE_OPTIONS.items()}


@dataclass(eq=False)
class TreeModel(ClassifierModel):
    """A trained tree (or ensemble): public, predicting on public tables (`ClassifierModel`)."""

    jostle_type, noun = "tree", "tree"
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
        if self.epsilon is not None:  # the ChoiceMaker's answer: its budget was split before the fit
            head += ("; chosen by a ChoiceMaker: the fit below was given the chosen Option's part of it, "
                     "explain() shows where the rest went")
        # fitted on integer codes (the ChoiceMaker's path): print the table's own names and labels
        from jostle.learners.trees.encoding import EncodedDomains

        domains = EncodedDomains(tuple(self.attributes), np.array([len(d) for d in self.domains]),
                                 tuple(tuple(str(v) for v in d) for d in self.domains))
        return head + "\n" + self.estimator.to_text(max_trees=1, domains=domains,
                                                    classes=[str(c) for c in self.classes])

    def labels_for(self, frame: Any) -> list:
        if not self.coded:
            return list(self.estimator.predict(frame))
        return super().labels_for(frame)

    def proba_for(self, frame: Any) -> np.ndarray:
        if not self.coded:  # fitted on the table's own categories: it encodes them itself
            return np.asarray(self.estimator.predict_proba(frame))
        return super().proba_for(frame)

    def predict_codes(self, X: np.ndarray, columns: Sequence[str] = ()) -> np.ndarray:
        import pandas as pd

        if self.coded:
            return np.asarray(self.estimator.predict(X))
        return np.asarray(self.estimator.predict(pd.DataFrame(X, columns=list(columns or self.attributes))),
                          dtype=np.int64)

    def predict_proba_codes(self, X: np.ndarray, columns: Sequence[str] = ()) -> np.ndarray:
        import pandas as pd

        if self.coded:
            return np.asarray(self.estimator.predict_proba(X))
        return np.asarray(self.estimator.predict_proba(pd.DataFrame(X, columns=list(columns or self.attributes))))


@dataclass(eq=False)
class TreeOptionValue:
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
        table, target = kit.table_and_target(args, span, who)
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
            # The accountant was charged the whole budget up front; the guard only holds the
            # learner within it (refusing a step before its noise is drawn).
            charge = option_guard(self.name, cap)
            estimator = make_learner(self.configuration, epsilon, domains=domains, classes=classes,
                                     noise=noise, charge=charge)
        estimator.fit(frame, labels)
        rho = float(budget.rho) if isinstance(budget, RhoZCDPBudget) else None
        return TreeModel(self.name, estimator, data.attributes, data.domains, data.classes, target, epsilon,
                         rho=rho)


CodedPredictions = CodedModel  # a Jostle option's tree, predicting on codes (the learner kit's)


def training_result(value: Any, data: Any) -> CodedModel:
    """What the engine scores of a Jostle option's answer: a tree, predicting on codes."""
    return kit.training_result(value, data, TreeModel, "tree learners",
                               'return a learner\'s tree, e.g. return FriedmanSchuster(db, target)')


def _tree_model(choice: str, fitted: Any, data: TaskData, target: str, epsilon: float, rho: float | None) -> TreeModel:
    return TreeModel(choice, fitted, data.attributes, data.domains, data.classes, target, epsilon, coded=True, rho=rho)


def choice_call(maker: Any, interp: Any, args: list[Any], span: Span) -> ChoiceCall:
    """`T(t, "class", epsilon=E)` for a ChoiceMaker over tree learners: the engine's input (the
    table's integer codes under its public schema) and how a built-in learner runs on it."""
    from jostle.learners.trees.family import FAMILY

    return kit.choice_call(maker, interp, args, span, FAMILY, _tree_model,
                           'train the non-private baseline instead: C45(t, "class")', "train it on tree_corpus()")


def register(builtin: Any, registry: dict[str, Any]) -> None:
    """Add the tree options, `tree_corpus` and the classifiers' shared `predict` / `accuracy`."""
    for name, configuration in TREE_LEARNERS.items():
        registry[name] = TreeOptionValue(name, configuration)
    registry["C45"] = TreeOptionValue("C45", None)

    @builtin("tree_corpus", 0, privacy="choice",
             doc="tree_corpus(): the bundled public corpus of categorical classification tasks, plus generated ones (offline)")
    def _tree_corpus(interp, span):
        from jostle.learners.trees.corpus import tree_corpus

        return CorpusValue(tree_corpus(), "bundled classification tasks", task="classification")

    kit.register_shared(registry)  # predict, accuracy: shared by every classifier family
