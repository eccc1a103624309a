"""The language code every classifier family shares: task data, model values, `predict`.

A classifier family's language module (`jostle.learners.<family>.language`) builds its learners'
values on this one:

  * `task_data`: a table's categorical columns as integer codes under their PUBLIC domains (a
    numeric column must be binned into public bins first), and `TaskData.coded`, the learner
    kit's `ClassificationData` of them;
  * `ClassifierModel`: what a trained model value of any classifier family offers, and the
    public-table prediction rules: predicting on a private table would publish one value per
    private row, so it is refused; a column must carry the domain the model was trained on;
  * `training_arguments` / `CodedModel`: an option written in Jostle, trained on a public task,
    gets the task's codes as a private table, and the engine scores its answer on codes;
  * `choice_call`: the engine's input of a ChoiceMaker call over a classifier family, and the
    closures that measure, run and wrap;
  * `register_shared`: the built-ins every classifier family shares, `predict` (on a public
    table, or on the row of a row function, private tables included: a released model is a
    public row-local function), `predict_proba`, `accuracy` and
    `classification_corpus`,
    one object each (made here once, so the registry takes them from every family without a
    clash), working on any family's model.

Privacy. Every entry point on private data refuses, before any charge, a table of stability
above 1 or unbounded, or under a unit the family does not declare (`calls.check_learnable`):
the families' privacy arguments are for neighbours one row apart. A trained model is a function
of noisy releases only (post-processing), so it is public.

This module is the learner kit's one exception to the layers, the same as a family's language
module: it imports `jostle.language.values`, `calls` and `sensitivity` (the language's value
types, which import nothing of the learners), and nothing else of the language.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Sequence

import numpy as np

from jostle.choicemaker.budgets import pure_epsilon_within
from jostle.data.schema import Categorical
from jostle.diagnostics.errors import JostleRuntimeError, PrivacyError
from jostle.diagnostics.source import Span
from jostle.language.calls import ChoiceCall, check_learnable, value_error_bound
from jostle.language.values import Builtin, CorpusValue, RowValues, RowView, Table, is_private, type_name
from jostle.learnerkit.evaluation import row_labels, row_scores
from jostle.learnerkit.tables import ClassificationData
from jostle.privacy.budget import floor_float
from jostle.privacy.measures import AnyBudget, RhoZCDPBudget

TRAINING_TARGET = "class"


@dataclass(frozen=True)
class TaskData:
    """A classification task read from a table under its public schema."""

    X: np.ndarray                # (rows, attributes) integer codes
    y: np.ndarray                # class codes
    attributes: tuple[str, ...]
    domains: tuple[tuple, ...]   # each attribute's public categories
    classes: tuple               # the class column's public categories

    def coded(self, name: str) -> ClassificationData:
        """The learner kit's coded table of this task (public domains, names and labels)."""
        return ClassificationData(self.X, self.y, tuple(len(d) for d in self.domains), len(self.classes),
                                  self.attributes, self.classes, name=name, attribute_values=self.domains)


def table_and_target(args: Sequence[Any], span: Span, who: str) -> tuple[Any, Any]:
    """A learner call's two arguments (table, class column)."""
    if len(args) != 2:
        raise JostleRuntimeError(f"{who} takes 2 arguments (table, class column) but {len(args)} were given", span)
    return args[0], args[1]


def task_data(table: Any, target: Any, span: Span, who: str, attributes: Any = None,
              min_classes: int = 1) -> TaskData:
    """Encode a table's categorical columns (public domains) for a classifier.

    Args:
        table, target: The table and its class column.
        span, who: Where and what to name in errors.
        attributes: The attribute columns (default: every other column).
        min_classes: The fewest values the class column must declare.
    """
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
    if len(specs[target].values) < min_classes:
        raise JostleRuntimeError(f"{who}: the class column '{target}' must declare at least {min_classes} values"
                                 if min_classes != 2 else
                                 f"{who}: the class column '{target}' must declare at least two values", span)
    frame = table.frame
    X = encode_columns(frame, names, [tuple(specs[n].values) for n in names])
    y = encode_columns(frame, [target], [tuple(specs[target].values)])[:, 0]
    return TaskData(X, y, tuple(names), tuple(tuple(specs[n].values) for n in names), tuple(specs[target].values))


def encode_columns(frame: Any, names: Sequence[str], domains: Sequence[Sequence[Any]]) -> np.ndarray:
    """The (rows, len(names)) integer codes of the columns `names` of `frame` in their public
    `domains` (a value outside its domain cannot occur: the schema holds it)."""
    if len(frame) == 0:
        return np.zeros((0, len(names)), dtype=np.int64)
    return np.column_stack([
        np.fromiter(({v: i for i, v in enumerate(domain)}[v] for v in frame[name].tolist()), dtype=np.int64,
                    count=len(frame))
        for name, domain in zip(names, domains)])


class ClassifierModel:
    """What a trained model value of a classifier family offers (a mixin of the families'
    dataclasses, which hold `attributes`, `domains`, `classes` and `target`).

    A subclass gives `predict_proba_codes` (or `predict_codes`) on integer codes; `noun` names
    the model in messages ("tree", "rule list").
    """

    public_stateless = True  # training copies may share it (jostle.language.training_boundary)
    public_result = True     # a released model: Session.eval may return it to Python
    noun = "model"
    attributes: tuple[str, ...]
    domains: tuple[tuple, ...]
    classes: tuple
    target: str

    def predict_proba_codes(self, X: np.ndarray, columns: Sequence[str] = ()) -> np.ndarray:
        """Class probabilities of rows of integer codes (columns in `self.attributes` order, or
        named `columns`)."""
        raise NotImplementedError

    def predict_codes(self, X: np.ndarray, columns: Sequence[str] = ()) -> np.ndarray:
        """The class code of each row of integer codes (the most probable class)."""
        return np.asarray(self.predict_proba_codes(X, columns)).argmax(axis=1)

    def labels_for(self, frame: Any) -> list:
        """The class labels of the rows of a frame of the model's categories (attribute columns
        by name, every value in the model's domains)."""
        codes = encode_columns(frame, self.attributes, self.domains)
        return [self.classes[int(c)] for c in self.predict_codes(codes)]

    def proba_for(self, frame: Any) -> np.ndarray:
        """The class probabilities (columns in `classes` order) of the rows of a frame of the
        model's categories, as `labels_for` reads them (a family whose model does not predict on
        the kit's codes overrides both)."""
        return np.asarray(self.predict_proba_codes(encode_columns(frame, self.attributes, self.domains)))

    def predict_labels(self, table: Any, span: Span, who: str) -> list:
        """The class each row of a PUBLIC table gets, under the public-table prediction rules."""
        if not isinstance(table, Table):
            raise JostleRuntimeError(f"{who} needs a table, got a {type_name(table)}", span)
        if table.private:
            raise PrivacyError(f"{who} would publish one prediction per row of a private table", span,
                               "evaluate it privately: private_accuracy(model, test, target, epsilon=E), confusion_matrix, auc "
                               "or calibration release noisy counts; split(t, 0.7) makes train and test parts that "
                               "compose in parallel; predict(model, r) works inside a row function")
        for name, domain in zip(self.attributes, self.domains):
            if name not in table.schema:
                raise JostleRuntimeError(f"{who}: the table has no column '{name}' the {self.noun} was trained on",
                                         span)
            spec = table.schema[name]
            if not isinstance(spec, Categorical) or tuple(spec.values) != domain:
                raise JostleRuntimeError(f"{who}: column '{name}' must have the domain the {self.noun} was trained on",
                                         span, f"declare it as categorical({list(domain)})")
        frame = table.frame[list(self.attributes)]
        if len(frame) == 0:
            return []
        return self.labels_for(frame)


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
    return [Table(frame, schema, True, "training table", interp.accountant.root, BUILTIN_SPAN), target]


class CodedModel:
    """A Jostle option's trained model, predicting on a task's integer codes (what a
    classification family's error measures call)."""

    def __init__(self, model: ClassifierModel, attribute_names: Sequence[Any]) -> None:
        self.model, self.columns = model, [str(n) for n in attribute_names]

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.asarray(self.model.predict_codes(X, self.columns), dtype=np.int64)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        return self.model.predict_proba_codes(X, self.columns)


def training_result(value: Any, data: Any, model_type: type, what: str, hint: str) -> CodedModel:
    """What the engine scores of a Jostle option's answer: a model of `model_type`, on codes."""
    if not isinstance(value, model_type):
        raise JostleRuntimeError(f"an option over {what} must return a trained {model_type.noun}, got a "
                                 f"{type_name(value)}", None, hint)
    return CodedModel(value, data.attribute_names)


ModelMaker = Callable[[str, Any, TaskData, str, float, "float | None"], Any]


def choice_call(maker: Any, interp: Any, args: list[Any], span: Span, family: Any, make_model: ModelMaker,
                public_hint: str, training_hint: str, min_classes: int = 1) -> ChoiceCall:
    """`C(t, "class", epsilon=E)` for a ChoiceMaker over a classifier family's Options: the
    engine's input (the table's integer codes under its public schema) and how a built-in
    Option runs on it. `make_model(choice, fitted, data, target, epsilon, rho)` wraps the
    chosen Option's fitted result as the family's model value."""
    who = f"{maker.name}()"
    table, target = table_and_target(args, span, who)
    data = task_data(table, target, span, who, min_classes=min_classes)
    if not table.private:
        raise JostleRuntimeError(f"{who} learns from a private table; this one is public", span, public_hint)
    unit = check_learnable(table, family.units, span, who, family.name)
    coded = data.coded(table.name)

    def measure(metafeature: Any, amount: Fraction, noise: Any, context: Any) -> float:
        return float(metafeature.measure(coded, floor_float(amount) if amount > 0 else 0.0, noise, context))

    def run(option: Any, part: AnyBudget, released: Any) -> Any:
        return family.run_option(option.engine_option, coded, part, interp.randomness, released)

    def wrap(model: Any, choice: str, budget: AnyBudget) -> Any:
        if isinstance(budget, RhoZCDPBudget):
            return make_model(choice, model, data, target, float(pure_epsilon_within(budget)), float(budget.rho))
        return make_model(choice, model, data, target, float(budget.epsilon), None)

    return ChoiceCall(coded, table.node, True, None, measure, run, wrap, training_hint, unit)


# ---------------------------------------------------------------- the shared built-ins
def _model_and_table(model: Any, table: Any, span: Span, who: str) -> tuple[ClassifierModel, Table]:
    if not isinstance(model, ClassifierModel):
        raise JostleRuntimeError(f"{who} needs a trained model (a tree or a rule list), got a {type_name(model)}",
                                 span, 'train one with e.g. FriedmanSchuster(t, "class", epsilon=0.5)')
    if not isinstance(table, Table):
        raise JostleRuntimeError(f"{who} needs a table, got a {type_name(table)}", span)
    return model, table


def _refuse_columns(values: Sequence[Any], span: Span, who: str) -> None:
    """A column or a row view anywhere but a row view in second place is refused (on its type
    alone, as the language refuses a column passed to any other built-in)."""
    for value in values:
        if isinstance(value, (RowValues, RowView)):
            raise PrivacyError(f"a column inside a row function cannot be passed to {who} here", span,
                               f"pass the whole row: {who[:-2]}(model, r) inside `lambda r: ...`; the model "
                               "reads the columns it was trained on")


def _row_model(model: Any, view: RowView, span: Span, who: str) -> ClassifierModel:
    """The model applied inside a row function: its attribute columns must exist and be
    categorical (a numeric one must be binned as for training). Checked on the public schema
    only; a category the model never saw is no error (that row gets no label: `evaluation`)."""
    if not isinstance(model, ClassifierModel):
        raise JostleRuntimeError(f"{who} needs a trained model (a tree or a rule list), got a {type_name(model)}",
                                 span, 'train one with e.g. FriedmanSchuster(t, "class", epsilon=0.5)')
    schema = view.table.schema
    for name, domain in zip(model.attributes, model.domains):
        if name not in schema:
            raise JostleRuntimeError(f"{who}: the rows have no column '{name}' the {model.noun} was trained on",
                                     span, f"its columns are {list(model.attributes)}")
        if not isinstance(schema[name], Categorical):
            raise JostleRuntimeError(f"{who}: column '{name}' is numeric; the {model.noun} was trained on its "
                                     "public bins", span, f"bin it first as for training: declare it as "
                                     f"categorical({list(domain)[:4]}...) or t.bin(\"{name}\", [edges...])")
    return model


def predict(interp: Any, span: Span, model: Any, table: Any, who: str = "predict()") -> Any:
    """`predict(model, t)`: a trained classifier's labels for a public table; `predict(model, r)`
    inside a row function: each row's label (a released model is public, so this is a row-local
    function; a row holding a category the model never saw gets none)."""
    _refuse_columns([model], span, who)
    if isinstance(table, RowView):
        model = _row_model(model, table, span, who)
        return table.apply(lambda *columns: row_labels(model, columns), list(model.attributes), span, who)
    _refuse_columns([table], span, who)
    model, table = _model_and_table(model, table, span, who)
    return tuple(model.predict_labels(table, span, who))


def predict_proba(interp: Any, span: Span, model: Any, rows: Any, label: Any) -> Any:
    """`predict_proba(model, r, "yes")` inside a row function: the probability the model gives
    the class "yes" on each row (none on a row holding a category the model never saw); on a
    public table, the list of them."""
    who = "predict_proba()"
    _refuse_columns([model, label], span, who)
    if isinstance(rows, RowView):
        model = _row_model(model, rows, span, who)
    else:
        _refuse_columns([rows], span, who)
        model, rows = _model_and_table(model, rows, span, who)
    if is_private(label) or label not in model.classes:
        raise JostleRuntimeError(f"{who}: {label!r} is not a class of the {model.noun}", span,
                                 f"its classes are {list(model.classes)}")
    if isinstance(rows, RowView):
        return rows.apply(lambda *columns: row_scores(model, label, columns), list(model.attributes), span, who)
    model.predict_labels(rows, span, who)  # the public-table rules (a private table is refused)
    frame = rows.frame[list(model.attributes)]
    return tuple(float(p) for p in row_scores(model, label, [frame[name].to_numpy(dtype=object)
                                                             for name in model.attributes]))


def accuracy(interp: Any, span: Span, model: Any, table: Any, target: Any = None) -> Any:
    """`accuracy(model, t, "class")`: the share of rows of a public table a classifier labels right.
    With two arguments, `accuracy(x, 0.95)`: the half-width of a released value's noise
    (jostle.language.builtins_accuracy; one built-in serves both)."""
    if target is None and not isinstance(table, Table):
        return value_error_bound(interp, span, model, table)
    if target is None:
        raise JostleRuntimeError("accuracy(model, t, \"class\") needs the target column", span,
                                 'write accuracy(model, t, "class"); accuracy(x, 0.95) is a release\'s error bound')
    model, table = _model_and_table(model, table, span, "accuracy()")
    if not isinstance(target, str) or target not in table.schema:
        raise JostleRuntimeError(f"accuracy(): the table has no column {target!r}", span)
    if table.private:
        raise PrivacyError("accuracy() would publish an exact statistic of a private table", span,
                           f'release a noisy one: private_accuracy(model, {table.name}, "{target}", epsilon=E)')
    predicted = model.predict_labels(table, span, "accuracy()")
    if len(predicted) == 0:
        raise JostleRuntimeError("accuracy() of an empty table", span)
    truth = table.frame[target].tolist()
    return float(np.mean([p == t for p, t in zip(predicted, truth)]))


PREDICT = Builtin("predict", predict, 2, 2, (), "row",
                  "predict(model, t): a trained classifier's labels for a public table (a tree, a rule list); "
                  "predict(model, r) inside a row function: each row's label, on a private table too")
PREDICT_PROBA = Builtin("predict_proba", predict_proba, 3, 3, (), "row",
                        'predict_proba(model, r, "yes") inside a row function: the probability of class "yes" on '
                        "each row; on a public table the list of them")
ACCURACY = Builtin("accuracy", accuracy, 2, 3, (), "choice",
                   'accuracy(model, t, "class"): the share of rows of a public table a classifier labels right '
                   '(on a private table: private_accuracy); accuracy(x, 0.95): the half-width of a released '
                   "value's noise at 95% (a vector: per cell)")


def _classification_corpus(interp: Any, span: Span) -> Any:
    from jostle.learnerkit.corpus import classification_corpus

    return CorpusValue(classification_corpus(), "the public classification corpus", task="classification")


CLASSIFICATION_CORPUS = Builtin(
    "classification_corpus", _classification_corpus, 0, 0, (), "choice",
    "classification_corpus(): the public classification corpus (R and scikit-learn tables, offline) that every "
    "classifier family's corpus is a selection of; a ChoiceMaker over Options of several families trains on it")
SHARED_BUILTINS: tuple[Builtin, ...] = (PREDICT, PREDICT_PROBA, ACCURACY, CLASSIFICATION_CORPUS)
"""Made once here: every classifier family's `register` puts the same objects in the registry,
which accepts the same object again and refuses another under a taken name."""


def register_shared(registry: dict[str, Any]) -> None:
    """Add `predict`, `predict_proba`, `accuracy` and `classification_corpus` to the built-in registry (every
    classifier family calls it)."""
    for shared in SHARED_BUILTINS:
        registry[shared.name] = shared
