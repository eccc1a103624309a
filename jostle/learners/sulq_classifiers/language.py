"""The SuLQ learners in the language: `SuLQID3`, `SuLQPerceptron`, their models as values.

    budget 1.0, 1e-6 using zcdp
    tree = SuLQID3(t, "class", rho=0.05, depth=2)           # a private table in, a public tree out
    tree2 = SuLQID3(t, "class", variance=20000, depth=1)    # the lecture's calibration: R stated
    line = SuLQPerceptron(t, "class", rho=0.05, iterations=10)
    print(accuracy(tree, test, "class"))                    # predict / accuracy on PUBLIC tables

Keywords: `rho=` (or the `{{ }}` allotment of a zCDP program), or `variance=R`; the learners'
public parameters `depth=` and `stop_factor=` (ID3), `iterations=` (perceptron). Both are also
Options a ChoiceMaker may list (family "sulq_classifiers", task "classification").

Privacy. SuLQ adds Gaussian noise, which has no pure epsilon: the learners run only in a zCDP
program, and `epsilon=` or a program accounting in (epsilon, delta) is refused before anything
is charged, with a hint. The table's categorical domains are public, and a table of stability
above 1 (or unbounded), or under a unit the family does not declare, is refused before any
charge (`calls.check_learnable`): the SuLQ argument is for neighbours one row apart. The plan
(T and every batch) is fixed from public parameters before any row is read:
  * given a rho (`rho=` or the allotment), R = `variance_for_rho(rho, T)` and the call charges
    rho once, before the learner draws; the learner's guard holds its batches within it;
  * given `variance=R`, the call costs the batches' rhos, computed before anything happens; with
    `rho=` too, a variance too small for that rho is refused before any charge; the cost is
    charged to the accountant (which refuses it if the program's budget cannot pay) before the
    first draw.
The returned model is a function of the noisy sums only (post-processing), so it is public;
`predict` and `accuracy` (the kit's shared built-ins) take public tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from jostle.diagnostics.errors import JostleRuntimeError, MeasureMismatch
from jostle.diagnostics.source import Span
from jostle.language.calls import ChoiceCall, budget_of, check_keywords, check_learnable
from jostle.data.schema import Categorical
from jostle.language.values import CorpusValue, Table
from jostle.learnerkit import language as kit
from jostle.learnerkit.language import ClassifierModel, TaskData, task_data
from jostle.privacy.measures import RhoZCDPBudget
from jostle.privacy.subledger import OverBudgetError, option_guard

__all__ = ["SULQ_LEARNERS", "SulqModel", "SulqOptionValue", "choice_call", "register", "training_result"]

SULQ_LEARNERS = ("SuLQID3", "SuLQPerceptron")
PARAMETERS = {"SuLQID3": ("depth", "stop_factor"), "SuLQPerceptron": ("iterations",)}
ZCDP_HINT = ("state the program's total in zCDP (`budget E, D using zcdp` or `budget rho(R)`) and pass rho= or "
             "variance=; nothing was spent")


@dataclass(eq=False)
class SulqModel(ClassifierModel):
    """A model trained by a SuLQ learner: public, predicting on public tables (`ClassifierModel`)."""

    jostle_type, noun = "model", "SuLQ model"
    learner: str
    fitted: Any
    attributes: tuple[str, ...]
    domains: tuple[tuple, ...]
    classes: tuple
    target: str
    rho: float
    variance: float
    queries: int

    def __str__(self) -> str:
        head = f"{self.learner} for '{self.target}' (rho {self.rho:g})"
        return head + "\n" + self.fitted.to_text(self.attributes, self.domains, self.classes)

    def _ordered(self, X: np.ndarray, columns: Sequence[str]) -> np.ndarray:
        X = np.asarray(X, dtype=np.int64)
        if not columns or list(columns) == list(self.attributes):
            return X
        where = {name: j for j, name in enumerate(columns)}
        return X[:, [where[name] for name in self.attributes]]

    def predict_proba_codes(self, X: np.ndarray, columns: Sequence[str] = ()) -> np.ndarray:
        return np.asarray(self.fitted.predict_proba(self._ordered(X, columns)))

    def predict_codes(self, X: np.ndarray, columns: Sequence[str] = ()) -> np.ndarray:
        return np.asarray(self.fitted.predict(self._ordered(X, columns)), dtype=np.int64)


def _schema_shape(table: Any, target: Any, span: Span, who: str) -> tuple[list[int], int]:
    """The attributes' domain sizes and the class count, from the table's PUBLIC schema (no row is
    read). A table the kit's `task_data` would refuse is refused by it, which checks the schema
    before it reads a row."""
    if isinstance(table, Table) and isinstance(target, str) and target in table.schema:
        names = [name for name in table.schema.names if name != target]
        if names and all(isinstance(table.schema[name], Categorical) for name in [*names, target]):
            return [len(table.schema[name].values) for name in names], len(table.schema[target].values)
    task_data(table, target, span, who)  # raises its located error (the schema is checked first)
    raise JostleRuntimeError(f"{who} needs a table of categorical columns", span)


def _public_number(kwargs: dict[str, Any], key: str, span: Span, who: str, whole: bool) -> Any:
    value = kwargs[key]
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise JostleRuntimeError(f"{who}: {key} must be a public number, got {type(value).__name__}", span)
    if whole and float(value) != int(value):
        raise JostleRuntimeError(f"{who}: {key} must be a whole number, got {value}", span)
    return int(value) if whole else float(value)


@dataclass(eq=False)
class SulqOptionValue:
    """A SuLQ learner callable from Jostle: `SuLQID3(t, "class", rho=R)` (see the module docstring)."""

    public_stateless = True  # training copies may share it (jostle.language.training_boundary)

    jostle_type = "option"
    privacy = "choice"
    task = "classification"
    dims = ()
    name: str

    @property
    def keywords(self) -> tuple[str, ...]:
        """The keywords it takes (`epsilon=` only to be refused with the zCDP hint)."""
        return ("epsilon", "rho", "variance", *PARAMETERS[self.name])

    @property
    def fingerprint(self) -> str:
        return f"builtin-sulq:{self.name}"

    @property
    def engine_option(self) -> Any:
        """What the ChoiceMaker engine trains and runs (the family's Option)."""
        from jostle.learners.sulq_classifiers.options import SULQ_OPTIONS

        return SULQ_OPTIONS[self.name]

    def __str__(self) -> str:
        return f"<option {self.name}>"

    def jostle_call(self, interp: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> SulqModel:
        from jostle.learners.sulq_classifiers import id3, perceptron
        from jostle.learners.sulq_classifiers.family import FAMILY
        from jostle.learners.sulq_classifiers.options import MAX_OPTION_QUERIES
        from jostle.learners.sulq_classifiers.queries import calibrate

        who = f"{self.name}()"
        check_keywords(kwargs, span, who, self.keywords)
        table, target = kit.table_and_target(args, span, who)
        sizes, n_classes = _schema_shape(table, target, span, who)  # public: no row is read before the charge
        if not table.private:
            raise JostleRuntimeError(f"{who} learns from a private table; this one is public", span,
                                     "SuLQ's noise is only worth its cost on private data")
        check_learnable(table, FAMILY.units, span, who, FAMILY.name)
        if "epsilon" in kwargs or not interp.accountant.accounting.is_zcdp:
            raise MeasureMismatch(f"{who} adds Gaussian noise, which has no pure epsilon: it is charged in rho, in "
                                  "a zCDP program", span, ZCDP_HINT)
        settings = dict(self.engine_option.parameters)
        for key in PARAMETERS[self.name]:
            if key in kwargs:
                settings[key] = _public_number(kwargs, key, span, who, key != "stop_factor")
        try:
            if self.name == "SuLQID3":
                id3.check_stop_factor(settings["stop_factor"])  # public: checked before the charge
                depth = settings["depth"] if "depth" in kwargs else id3.usable_depth(
                    sizes, n_classes, settings["depth"], MAX_OPTION_QUERIES)
                settings["depth"] = depth
                plan_batches = id3.batches(sizes, n_classes, depth)
            else:
                plan_batches = perceptron.batches(sizes, n_classes, settings["iterations"])
            if "variance" in kwargs:
                calibration = calibrate(plan_batches, variance=_public_number(kwargs, "variance", span, who, False))
                if "rho" in kwargs:
                    calibration.check(budget_of(interp, {"rho": kwargs["rho"]}, span, who), who)
                cost = calibration.budget
            else:
                budget = budget_of(interp, kwargs, span, who)
                if not isinstance(budget, RhoZCDPBudget):
                    raise MeasureMismatch(f"{who} needs a rho budget, got {budget}", span, ZCDP_HINT)
                calibration = calibrate(plan_batches, rho=budget.rho)
                cost = budget
        except OverBudgetError as error:
            raise JostleRuntimeError(str(error), span, "raise the variance, or give a larger rho") from None
        except ValueError as error:
            raise JostleRuntimeError(f"{who}: {error}", span) from None
        interp.accountant.charge(cost, table.node, f"option {self.name}",
                                 f"{self.name} on '{target}' ({calibration.queries} SuLQ queries, variance "
                                 f"{float(calibration.variance):.6g})", span)
        data = task_data(table, target, span, who)  # the rows are coded only now, after the charge
        return self.fit(data, calibration, settings, interp.randomness, option_guard(self.name, cost), target)

    def fit(self, data: TaskData, calibration: Any, settings: dict[str, Any], noise: Any, guard: Any,
            target: str) -> SulqModel:
        """Train on `data` with a calibration whose cost the caller has charged in full."""
        from jostle.learners.sulq_classifiers.id3 import fit_id3
        from jostle.learners.sulq_classifiers.perceptron import fit_perceptron

        sizes = [len(d) for d in data.domains]
        if self.name == "SuLQID3":
            fitted = fit_id3(data.X, data.y, sizes, len(data.classes), noise, guard, calibration=calibration,
                             depth=settings["depth"], stop_factor=settings["stop_factor"])
        else:
            fitted = fit_perceptron(data.X, data.y, sizes, len(data.classes), noise, guard, calibration=calibration,
                                    iterations=settings["iterations"])
        return SulqModel(self.name, fitted, data.attributes, data.domains, data.classes, target,
                         float(calibration.rho), float(calibration.variance), fitted.queries)


def training_result(value: Any, data: Any) -> kit.CodedModel:
    """What the engine scores of a Jostle option's answer: a SuLQ model, predicting on codes."""
    return kit.training_result(value, data, SulqModel, "SuLQ learners",
                               "return a SuLQ learner's model, e.g. return SuLQID3(db, target)")


def _sulq_model(choice: str, fitted: Any, data: TaskData, target: str, epsilon: float, rho: float | None) -> SulqModel:
    return SulqModel(choice, fitted, data.attributes, data.domains, data.classes, target, float(rho or 0.0),
                     fitted.variance, fitted.queries)


def choice_call(maker: Any, interp: Any, args: list[Any], span: Span) -> ChoiceCall:
    """`C(t, "class", rho=R)` for a ChoiceMaker over SuLQ learners: the engine's input (the
    table's integer codes under its public schema) and how a built-in learner runs on it."""
    from jostle.learners.sulq_classifiers.family import FAMILY

    return kit.choice_call(maker, interp, args, span, FAMILY, _sulq_model,
                           "SuLQ learners need a private table", "train it on sulq_corpus()")


def register(builtin: Any, registry: dict[str, Any]) -> None:
    """Add the SuLQ options, `sulq_corpus` and the classifiers' shared `predict` / `accuracy`."""
    for name in SULQ_LEARNERS:
        registry[name] = SulqOptionValue(name)

    @builtin("sulq_corpus", 0, privacy="choice",
             doc="sulq_corpus(): the SuLQ family's public corpus of categorical classification tasks (offline)")
    def _sulq_corpus(interp, span):
        from jostle.learners.sulq_classifiers.corpus import sulq_corpus

        return CorpusValue(sulq_corpus(), "bundled classification tasks", task="classification")

    kit.register_shared(registry)  # predict, accuracy: shared by every classifier family
