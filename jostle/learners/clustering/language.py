"""Private k-means in the language: `SuLQKMeans(...)`, `DPLloyd(...)`, models as values, ChoiceMakers.

    budget rho(1.0)
    m = DPLloyd(t, ["x", "y"], k=3, iterations=5, bounds={x: [0, 10], y: [0, 10]}, rho=0.1)
    s = SuLQKMeans(t, ["x", "y"], k=3, bounds={x: [0, 10], y: [0, 10]}, variance=400)  # the lecture's R
    print(m)                                  # the released centres, T, variance, rho
    c = centres(m)                            # one record per centre (public after release)
    labels = assign(m, public_rows)           # nearest centre of each row of a PUBLIC table
    err = kmeans_error(m, public_rows)        # held-out within-cluster SS / total SS (PUBLIC rows)
    task = clustering_task(["x", "y"], k=3, bounds={x: [0, 10], y: [0, 10]})
    choicemaker C among {SuLQKMeans, DPLloyd, DPLloyd2, DPLloyd10} informed by {n_dimensions, n_clusters, log_rho}
        trained on clustering_corpus()
    m2 = C(t, task, rho=0.1)

Every Option name is also its learner: `SuLQKMeans`, `DPLloyd` (5 iterations unless
`iterations=` says otherwise), `DPLloyd2`, `DPLloyd10`, `DPLloydReseed` (`reseed=true`:
near-empty clusters moved next to the largest after each iteration, post-processing). A call
names the columns and their PUBLIC bounds (`bounds=`: each column's [low, high]; default: the
schema's declared `numeric(lo, hi)`; never read from the data), k, and optionally the public
`seed=` of the initial centres (uniform in the box) or the `initial=` centres themselves.

Privacy (unit: one row added or removed). The learners are Gaussian: they run in a zCDP program
only (`budget E, D using zcdp` or `budget rho(R)`). Before anything is charged, from public facts
only (the table's unit and stability, the declarations, the budget), the call refuses: a table
under another unit or with stability above 1, bad columns, bounds, k, iterations or initial
centres, a pure or approximate budget, both `rho=` and `variance=`. Then the plan is fixed
(`kmeans.kmeans_plan`: T = iterations k (d + 1), the variance, the rho), its rho is charged to
the accountant ONCE (given `variance=R`: the rho that R costs, `KMeansPlan.rho`; given a rho:
the rho), the rows are coded (never refusing one) and `kmeans.fit` runs under
`option_guard(rho)`, which refuses any batch past it before its draw. On a PUBLIC table the same
fit runs at the given rho (default 1) or variance and charges nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

from jostle.diagnostics.errors import JostleRuntimeError, MeasureMismatch
from jostle.diagnostics.source import Span
from jostle.language.calls import (BUDGET_KEYWORDS, ChoiceCall, budget_of, check_keywords, check_learnable,
                                   refuse_private_declarations, unit_of)
from jostle.language.values import CorpusValue, Record, Table, type_name
from jostle.learnerkit.keyed import FamilyCall, engine_closures
from jostle.privacy.measures import RhoZCDPBudget
from jostle.privacy.subledger import option_guard

TASK = "clustering"
UNITS = ("row",)
TASK_KEYWORDS = ("k", "bounds", "seed", "initial")
LEARNER_KEYWORDS = (*BUDGET_KEYWORDS, *TASK_KEYWORDS, "iterations", "variance", "reseed")
PUBLIC_RHO = Fraction(1)  # what a call on a public table runs at without rho= or variance=


def _fail(who: str, message: str, span: Span, hint: str = "") -> JostleRuntimeError:
    return JostleRuntimeError(f"{who}: {message}", span, (hint + "; " if hint else "") + "nothing was spent")


# ---------------------------------------------------------------- the declaration
@dataclass(frozen=True, eq=False)
class Declaration:
    """What a call declares, checked from public facts only (no row is read)."""

    table: Table
    box: Any                  # data.Box
    k: int
    seed: int
    initial: Any              # k x d centres in the box's units, or None
    private: bool

    def task_data(self) -> Any:
        """The coded rows (`data.ClusteringData`); never refuses a row."""
        from jostle.learners.clustering.data import ClusteringData

        return ClusteringData.from_values(self.table.frame, self.box, self.k, self.table.name, self.initial,
                                          self.seed)


def _plain(value: Any) -> Any:
    """A Jostle record or dict as a dict; other values as they are."""
    if isinstance(value, Record):
        return dict(value.fields)
    return value


def _whole(value: Any, what: str, who: str, span: Span, low: int, high: int) -> int:
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value)
            or not low <= value <= high):
        raise _fail(who, f"{what} must be a whole number in {low}..{high}, got {value!r}", span)
    return int(value)


def _schema_bounds(table: Table, columns: Sequence[str]) -> dict[str, Any] | None:
    """The columns' bounds declared in the table's schema (`numeric(lo, hi)`: public), or None
    unless every column declares lo < hi."""
    from jostle.data.schema import Numeric

    found = {}
    for column in columns:
        spec = table.schema[column]
        if not isinstance(spec, Numeric) or not spec.lo < spec.hi:
            return None
        found[column] = [spec.lo, spec.hi]
    return found


def declaration(table: Any, columns: Any, kwargs: dict[str, Any], who: str, span: Span) -> Declaration:
    """Check a call's table and declarations (public facts only) and build the public box.

    Raises:
        JostleRuntimeError / PrivacyError: What is wrong and how to fix it ("nothing was spent").
    """
    from jostle.learners.clustering.data import box_from

    if not isinstance(table, Table):
        raise _fail(who, f"the first argument must be a table, got a {type_name(table)}", span)
    if table.private:
        check_learnable(table, UNITS, span, who, TASK)
    if not isinstance(columns, (list, tuple)) or not columns or not all(isinstance(c, str) for c in columns):
        raise _fail(who, "the columns must be a non-empty list of column names", span, 'e.g. ["x", "y"]')
    missing = [c for c in columns if c not in table.schema]
    if missing:
        raise _fail(who, f"the table '{table.name}' has no column(s) {', '.join(missing)}", span)
    bounds = _plain(kwargs.get("bounds"))
    if bounds is None:
        bounds = _schema_bounds(table, columns)
    if not isinstance(bounds, dict):
        raise _fail(who, "bounds= must give each column its PUBLIC [low, high]", span,
                    'e.g. bounds={x: [0, 10], y: [0, 10]}: declared, never read from the data (without it, the '
                    "schema's numeric(lo, hi) bounds are used)")
    k = _whole(kwargs.get("k"), "k", who, span, 1, 10_000)
    seed = _whole(kwargs.get("seed", 0), "seed", who, span, 0, 2**31 - 1)
    try:
        box = box_from(columns, {str(c): _plain(b) for c, b in bounds.items()})
    except ValueError as error:
        raise _fail(who, str(error), span) from None
    initial = kwargs.get("initial")
    if initial is not None:
        rows = [_plain(row) for row in initial] if isinstance(initial, (list, tuple)) else None
        ok = rows is not None and len(rows) == k and all(
            isinstance(r, (list, tuple)) and len(r) == box.d and all(
                not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v) for v in r) for r in rows)
        if not ok:
            raise _fail(who, f"initial= must list {k} public centres of {box.d} number(s) each", span)
        initial = [list(map(float, r)) for r in rows]
    return Declaration(table, box, k, seed, initial, bool(table.private))


@dataclass(frozen=True, eq=False)
class ClusteringTaskValue:
    """`clustering_task(["x", "y"], k=3, bounds={...}, seed=, initial=)`: a call's declarations as
    one public value, for the Options and ChoiceMakers: `C(t, task, rho=R)`."""

    jostle_type = "clustering_task"
    public_stateless = True

    columns: tuple[str, ...]
    keywords: tuple[tuple[str, Any], ...]

    def __str__(self) -> str:
        shown = ", ".join(f"{key}={value!r}" for key, value in self.keywords)
        return f"<clustering task {list(self.columns)}, {shown}>"


def arguments(args: Sequence[Any], kwargs: dict[str, Any], who: str, span: Span) -> tuple[Any, Any, dict[str, Any]]:
    """(table, columns, declarations) of a call: `(t, columns, k=, bounds=, ...)` or `(t, task)`
    (a keyword given both by the call and by its task is refused)."""
    if len(args) != 2:
        raise _fail(who, f"takes a table and its columns (or a clustering_task), got {len(args)} argument(s)", span,
                    'e.g. DPLloyd(t, ["x", "y"], k=3, bounds={x: [0, 10], y: [0, 10]}, rho=0.1)')
    table, second = args
    merged = {key: value for key, value in kwargs.items() if key not in BUDGET_KEYWORDS}
    if isinstance(second, ClusteringTaskValue):
        twice = sorted(set(merged) & {key for key, _ in second.keywords})
        if twice:
            raise _fail(who, f"{', '.join(twice)} given both by the call and by its clustering_task", span)
        merged.update(second.keywords)
        return table, list(second.columns), merged
    return table, second, merged


# ---------------------------------------------------------------- the released value
@dataclass(eq=False)
class KMeansValue:
    """A released k-means model: public (post-processing of charged noisy sums)."""

    jostle_type = "kmeans_model"
    public_stateless = True
    public_result = True

    model: Any        # kmeans.KMeansModel
    learner: str
    charged: bool     # False: fit on a public table, nothing charged

    def centres(self) -> tuple[Record, ...]:
        """One record per centre, in the box's units."""
        columns = self.model.box.columns
        return tuple(Record(tuple((c, float(v)) for c, v in zip(columns, centre))) for centre in self.model.centres)

    def __str__(self) -> str:
        text = str(self.model)
        return text if self.charged else text.replace("\n", " (public table, nothing charged)\n", 1)


# ---------------------------------------------------------------- the learner
def _plan(interp: Any, decl: Declaration, method: str, iterations: int, kwargs: dict[str, Any], span: Span,
          who: str) -> Any:
    """The fit's public plan: from `variance=R`, or from the call's rho (refused: a pure budget)."""
    from jostle.learners.clustering.kmeans import kmeans_plan

    variance = kwargs.get("variance")
    if variance is not None:
        if any(key in kwargs for key in BUDGET_KEYWORDS):
            raise _fail(who, "takes variance= (R per query) or a budget (rho=), not both", span)
        if isinstance(variance, bool) or not isinstance(variance, (int, float)) or not (
                math.isfinite(variance) and variance > 0):
            raise _fail(who, f"variance= must be a positive finite number, got {variance!r}", span)
        return kmeans_plan(method, decl.k, decl.box.d, iterations, variance=variance)
    if "epsilon" in kwargs:
        raise MeasureMismatch(f"{who} adds Gaussian noise, which has no pure epsilon", span,
                              "give rho=R in a zCDP program (`budget E, D using zcdp` or `budget rho(R)`), or "
                              "variance=R; nothing was spent")
    if not decl.private and "rho" not in kwargs:
        return kmeans_plan(method, decl.k, decl.box.d, iterations, rho=PUBLIC_RHO)
    budget = budget_of(interp, kwargs, span, who)
    if not isinstance(budget, RhoZCDPBudget):
        raise MeasureMismatch(f"{who} adds Gaussian noise: it is charged in rho, in a zCDP program", span,
                              "state the program's total in zCDP (`budget E, D using zcdp` or `budget rho(R)`); "
                              "nothing was spent")
    return kmeans_plan(method, decl.k, decl.box.d, iterations, rho=budget)


@dataclass(eq=False)
class ClusteringLearner(FamilyCall):
    """`SuLQKMeans(t, columns, k=, bounds=, iterations=, rho= | variance=)` and the other Options:
    each is both a learner call and a built-in Option of the clustering family."""

    task = TASK
    learner_keywords = LEARNER_KEYWORDS
    option_keywords = LEARNER_KEYWORDS

    def family_options(self) -> tuple[Any, str]:
        from jostle.learners.clustering.options import CLUSTERING_OPTIONS

        return CLUSTERING_OPTIONS, "DPLloyd"

    def jostle_call(self, interp: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> KMeansValue:
        from jostle.learners.clustering.kmeans import MAX_ITERATIONS, fit

        who = f"{self.name}()"
        check_keywords(kwargs, span, who, LEARNER_KEYWORDS)
        table, columns, merged = arguments(args, kwargs, who, span)
        decl = declaration(table, columns, merged, who, span)
        option = self.engine_option
        iterations = _whole(merged.get("iterations", option.iterations), "iterations", who, span, 1, MAX_ITERATIONS)
        if decl.private and not interp.accountant.accounting.is_zcdp:
            raise MeasureMismatch(f"{who} adds Gaussian noise: it is charged in rho, in a zCDP program", span,
                                  "state the program's total in zCDP (`budget E, D using zcdp` or `budget rho(R)`); "
                                  "nothing was spent")
        reseeding = merged.get("reseed", option.reseeding)
        if not isinstance(reseeding, bool):
            raise _fail(who, f"reseed= must be true or false, got a {type_name(reseeding)}", span)
        plan = _plan(interp, decl, option.method, iterations, kwargs, span, who)
        if decl.private:
            interp.accountant.charge(plan.budget, table.node, f"option {self.name}",
                                     f"{self.name}: k-means of '{table.name}' ({plan.iterations} iteration(s), "
                                     f"k={plan.k}, T={plan.queries}, variance {float(plan.variance):.6g})", span)
        # the rows are coded only once the charge went through; coding never refuses a row
        data = decl.task_data()
        guard = option_guard(self.name, plan.budget) if decl.private else (lambda cost, description: None)
        return KMeansValue(fit(data, plan, interp.randomness, guard, self.name, reseeding), self.name, decl.private)


# ---------------------------------------------------------------- the ChoiceMaker
def choice_call(maker: Any, interp: Any, args: list[Any], span: Span) -> ChoiceCall:
    """`C(t, task, rho=R)` for a ChoiceMaker over clustering Options: the engine's input (the rows
    coded against the task's public box), checked before anything is charged as the learners
    check it; the dispatch refuses a pure budget (the family's measures) before any charge."""
    from jostle.learners.clustering.family import FAMILY
    from jostle.learners.clustering.kmeans import fit, kmeans_plan

    who = f"{maker.name}()"
    if len(args) != 2 or not isinstance(args[1], ClusteringTaskValue):
        raise _fail(who, "takes a table and a clustering_task", span,
                    'e.g. C(t, clustering_task(["x", "y"], k=3, bounds={x: [0, 10], y: [0, 10]}), rho=0.1)')
    table, columns, merged = arguments(args, {}, who, span)
    decl = declaration(table, columns, merged, who, span)
    if not decl.private:
        plan = kmeans_plan("dplloyd", decl.k, decl.box.d, 5, rho=PUBLIC_RHO)
        model = fit(decl.task_data(), plan, interp.randomness, lambda cost, description: None, maker.name)
        return ChoiceCall(None, None, False, KMeansValue(model, maker.name, False))
    data = decl.task_data()
    measure, run = engine_closures(FAMILY, data, interp)

    def wrap(result: Any, choice: str, budget: Any) -> KMeansValue:
        import dataclasses

        return KMeansValue(dataclasses.replace(result, learner=f"{maker.name}: {choice}"), f"{maker.name}: {choice}",
                           True)

    return ChoiceCall(data, table.node, True, None, measure, run, wrap, "train it on clustering_corpus()",
                      unit_of(table))


# ---------------------------------------------------------------- built-ins
def _model(value: Any, span: Span, who: str) -> KMeansValue:
    if not isinstance(value, KMeansValue):
        raise JostleRuntimeError(f"{who} needs a k-means model, got a {type_name(value)}", span,
                                 'fit one with DPLloyd(t, ["x", "y"], k=3, bounds={...}, rho=0.1)')
    return value


def _public_table(table: Any, span: Span, who: str) -> Table:
    from jostle.diagnostics.errors import PrivacyError

    if not isinstance(table, Table):
        raise JostleRuntimeError(f"{who} needs a table, got a {type_name(table)}", span)
    if table.private:
        raise PrivacyError(f"{who} would publish exact facts of the private table '{table.name}'", span,
                           "use it on public rows (load_public, bind_public)")
    return table


def register(builtin: Any, registry: dict[str, Any]) -> None:
    """Add the Options (each also a learner), `clustering_task`, the model's built-ins and the corpus."""
    from jostle.learners.clustering.options import CLUSTERING_OPTIONS

    for name in CLUSTERING_OPTIONS:
        registry[name] = ClusteringLearner(name, name)

    @builtin("clustering_task", 1, privacy="choice", keywords=TASK_KEYWORDS,
             doc='clustering_task(["x", "y"], k=3, bounds={x: [0, 10], y: [0, 10]}): a k-means call\'s public '
                 "declarations as one value")
    def _task(interp, span, columns, **kwargs):
        if not isinstance(columns, (list, tuple)) or not columns or not all(isinstance(c, str) for c in columns):
            raise _fail("clustering_task()", "the columns must be a non-empty list of column names", span)
        refuse_private_declarations(kwargs, "clustering_task()", span)  # a task value reaches training runs as it is
        return ClusteringTaskValue(tuple(columns), tuple(kwargs.items()))

    @builtin("centres", 1, privacy="choice", doc="centres(M): the released centres of a k-means model, one record each")
    def _centres(interp, span, model):
        return _model(model, span, "centres()").centres()

    @builtin("assign", 2, privacy="choice",
             doc="assign(M, T): the nearest centre's index of each row of a PUBLIC table")
    def _assign(interp, span, model, table):
        value = _model(model, span, "assign()")
        rows = _public_table(table, span, "assign()")
        return tuple(int(label) for label in value.model.predict(rows.frame))

    @builtin("kmeans_error", 2, privacy="choice",
             doc="kmeans_error(M, T): within-cluster sum of squares / total sum of squares on a PUBLIC table")
    def _error(interp, span, model, table):
        value = _model(model, span, "kmeans_error()")
        return float(value.model.error(_public_table(table, span, "kmeans_error()").frame))

    @builtin("kmeans_queries", 1, privacy="choice", doc="kmeans_queries(M): T, the queries the fit asked")
    def _queries(interp, span, model):
        return int(_model(model, span, "kmeans_queries()").model.queries)

    @builtin("clustering_corpus", 0, privacy="choice",
             doc="clustering_corpus(): generated public Gaussian-mixture tasks (offline)")
    def _corpus(interp, span):
        from jostle.learners.clustering.corpus import clustering_corpus

        return CorpusValue(clustering_corpus(), "generated Gaussian mixtures", task=TASK)


__all__ = ["TASK", "LEARNER_KEYWORDS", "TASK_KEYWORDS", "ClusteringLearner", "ClusteringTaskValue", "Declaration",
           "KMeansValue", "arguments", "choice_call", "declaration", "register"]
