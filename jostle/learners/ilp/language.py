"""DP inductive logic programming in the language: the learner call, theories as values.

    theory = ILP(trains.bound_per_key(1), cars, target="direction", positive="east",
                 entities={cars: "car"}, modes=["has_car(+train, -car)", "short(+car)", ...],
                 fake="has_car(T, C), short(C), closed(C)", epsilon=1.0)
    print(theory)                                             # Prolog clauses
    print(theory_accuracy(theory, test_trains, test_cars))    # on PUBLIC tables
    task = ilp_task(target="direction", ...)   # the declarations as one value, for ChoiceMakers:
    chooser(trains.bound_per_key(1), cars, task, epsilon=1.0)
    print(ilp_bounds(trains, cars, task, epsilon=1.0, max_examples=10000))  # reads no row

The tables. The first argument is the examples table (one row per example: the key, the label
column `target=`, optionally categorical columns about the example), the others private fact
tables keyed by the example id (`jostle.learners.ilp.tables`): `entities={cars: "car"}` (or a
list, one entry per fact table in order, `entities=["car"]`, which fits training and test tables
of other names alike) says each row of `cars` is a new entity (a car) linked to its example by
`has_car` (`links=` renames the link, `ids=` names a column telling the entity apart within its
example); a table not in `entities` holds facts about the example itself. Every categorical column gives a predicate
`column(E, #column)`; `unary=[...]` columns give one predicate per constant (`short(C)`);
`predicates={load: ["load_shape", "load_count"]}` one over several columns; `background=[t]`
public tables give derived predicates over public constants (`closed(C)`). Modes are Aleph's
texts (default: every predicate, once); the fake example is a Prolog body (`fake=`, public), or
the vocabulary of the modes cut at `k=`.

Privacy (unit: one example and all its facts, `entity(example id)`, Zeng et al.'s footnote 1).
Before anything is charged, from public facts only (schemas, units, stabilities, the names and
the declarations), the call refuses: tables that are not all private of ONE database bound under
`entity(key)` (or all public), an examples table that may hold more than one row per example
(stability above 1: `bound_per_key(1)` first), a fact table without the key column (facts shared
by several examples must be public background), an unknown predicate or column, bad modes, a
fake example the modes do not allow, and bad settings. Then it builds the database (dropping, row
by row, rows the declarations cannot place, never refusing on a row), charges the pure epsilon E
within the call's budget to the accountant ONCE, and runs `private.dp_learn` (or the trivial
theory) under `option_guard(E)`, which refuses any step past E before its noise is drawn. Every
count the learner noises is a count of examples, so removing one example with all its facts
moves each by at most 1, whatever the number of its facts: fact tables need no bound on their
rows per key. The returned theory is post-processing of the noisy counts: public. On PUBLIC
tables the call is the non-private Aleph learner, for free.

The Options (`ILPRelevance3(examples, facts, task, epsilon=E)`, ...) are the same call with the
method, l and rounds of `options.ILP_OPTIONS`; `choice_call` gives a ChoiceMaker over them the
same checked database (`task.ILPData`), which the engine's dispatch charges and runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from jostle.choicemaker.budgets import pure_cost
from jostle.diagnostics.errors import JostleRuntimeError, PrivacyError
from jostle.diagnostics.source import Span
from jostle.language.calls import (BUDGET_KEYWORDS, ChoiceCall, budget_of, check_keywords,
                                   refuse_private_declarations, unit_of)
from jostle.language.values import CorpusValue, Record, Table, type_name
from jostle.learnerkit.keyed import FamilyCall, database_name, engine_closures
from jostle.learners.ilp.declare import TRIVIAL_METHODS, declare_schema, search
from jostle.learners.ilp.tables import Background, RelationalSchema, TableError
from jostle.privacy.composition import common_node
from jostle.privacy.measures import RhoZCDPBudget
from jostle.privacy.subledger import option_guard

TASK = "ilp"
DECLARATION_KEYWORDS = ("key", "target", "positive", "example", "head", "entities", "links", "ids", "unary",
                        "predicates", "background")
SEARCH_KEYWORDS = ("modes", "fake", "fake_seed", "k", "max_length", "levels", "rounds", "method", "min_score",
                   "min_positives")
LEARNER_KEYWORDS = (*BUDGET_KEYWORDS, *DECLARATION_KEYWORDS, *SEARCH_KEYWORDS)
BOUNDS_KEYWORDS = ("epsilon", "max_examples", "delta", "eta")


# ---------------------------------------------------------------- the declaration
@dataclass(frozen=True)
class Declaration:
    """What a call declares, checked from public facts only (no row is read).

    Attributes:
        tables: The examples table, then the fact tables.
        schema: How they make a relational database.
        modes: The language bias (`modes.Modes`, head = the target predicate).
        fakes: The fake bottom clauses (public), one per round in turn.
        settings: method, levels, rounds, min_score, min_positives.
        private: Whether the tables are private.
    """

    tables: tuple[Table, ...]
    schema: RelationalSchema
    modes: Any
    fakes: tuple[Any, ...]
    settings: dict[str, Any]
    private: bool


def _fail(who: str, message: str, span: Span, hint: str = "") -> JostleRuntimeError:
    return JostleRuntimeError(f"{who}: {message}", span, (hint + "; " if hint else "") + "nothing was spent")


def _names(value: Any, what: str, who: str, span: Span) -> tuple[str, ...]:
    """A Jostle list of texts (or one text) as a tuple of texts."""
    items = (value,) if isinstance(value, str) else value
    if not isinstance(items, (tuple, list)) or not all(isinstance(item, str) for item in items):
        raise _fail(who, f"{what} must be a list of texts, got a {type_name(value)}", span)
    return tuple(items)


def _by_table(value: Any, what: str, who: str, span: Span, names: Sequence[str]) -> dict[str, str]:
    """A declaration per fact table, as a dict of texts by table name: a list in the fact
    tables' order (`entities=["car"]`, none for a table without one; an `ilp_task` then fits
    training and test tables alike), or a record keyed by table names (`entities={cars: "car"}`)."""
    if value is None:
        return {}
    if isinstance(value, tuple):
        if len(value) != len(names):
            raise _fail(who, f"{what} lists {len(value)} entries for {len(names)} fact table(s) {list(names)}", span,
                        "give one entry per fact table, in order (none for a table without one)")
        pairs = [(name, text) for name, text in zip(names, value) if text is not None and text != ""]
    elif isinstance(value, Record):
        pairs = list(value.fields)
    else:
        raise _fail(who, f"{what} must be a list (one entry per fact table) or a record keyed by table names, "
                         f"got a {type_name(value)}", span)
    out = {}
    for key, text in pairs:
        if key not in names:
            raise _fail(who, f"{what} names '{key}', which is not a fact table of the call", span,
                        f"the fact tables are {list(names)}; a list of entries, in their order, fits any names")
        if not isinstance(text, str):
            raise _fail(who, f"{what} for '{key}' must be a text, got a {type_name(text)}", span)
        out[key] = text
    return out


def _check_tables(args: Sequence[Any], declared_key: Any, who: str, span: Span,
                  reads_rows: bool = True) -> tuple[tuple[Table, ...], str, bool]:
    """The tables of a call, their example key and whether they are private (refusals: public).

    The key of private tables is their unit's (a `key=` that differs is refused); of public ones
    `key=`, else the first column of the examples table that every fact table has. The
    examples' stability is checked only for a call that reads rows (`reads_rows`).
    """
    if not args:
        raise _fail(who, "needs the examples table (and its fact tables)", span,
                    'e.g. ILP(trains.bound_per_key(1), cars, target="direction", ...)')
    for position, table in enumerate(args, start=1):
        if not isinstance(table, Table):
            raise _fail(who, f"argument {position} must be a table, got a {type_name(table)}", span)
    tables = tuple(args)
    examples = tables[0]
    private = [table.private for table in tables]
    if any(private) and not all(private):
        raise _fail(who, "mixes private and public tables", span,
                    "pass the private examples and their private fact tables of one database; public facts "
                    "about constants go in background=")
    if not examples.private:
        if isinstance(declared_key, str) and declared_key:
            return tables, declared_key, False
        shared = [name for name in examples.schema.names if all(name in table.schema for table in tables[1:])]
        if not shared:
            raise _fail(who, f"no column of '{examples.name}' is in every fact table", span,
                        "name the example id column with key=")
        return tables, shared[0], False
    unit = unit_of(examples)
    if not unit.is_entity:
        raise PrivacyError(f"{who}: the examples table '{examples.name}' is bound under the unit {unit}; DP ILP "
                           "protects one example and all its facts, the unit entity(example id)", span,
                           'bind the examples and their facts as one database: bind_database({...}, key="id"); '
                           "nothing was spent")
    key = unit.key
    if declared_key is not None and declared_key != key:
        raise _fail(who, f"key={declared_key!r}, but the tables are bound under {unit}", span,
                    f"the example id is the unit's key: leave key= out or write key={key!r}")
    if reads_rows and examples.stability != 1:
        bound = "unbounded" if examples.stability is None else str(examples.stability)
        raise PrivacyError(f"{who}: the examples table '{examples.name}' may hold several rows per example "
                           f"(stability {bound}); the learner reads one label per example", span,
                           f"keep one row per example first: {examples.name}.bound_per_key(1); nothing was spent")
    database = database_name(examples.node)
    for table in tables[1:]:
        if unit_of(table) != unit or database_name(table.node) != database:
            raise PrivacyError(f"{who}: the fact table '{table.name}' is not a table of the examples' database "
                               f"under {unit} (its unit: {unit_of(table)})", span,
                               "bind the examples and all their private facts as one database "
                               "(bind_database), so that removing an example removes all its facts; "
                               "nothing was spent")
        if key not in table.schema:
            raise PrivacyError(f"{who}: the private fact table '{table.name}' has no column '{key}', so its facts "
                               "are not keyed by the example they belong to", span,
                               f"keep '{key}' in '{table.name}'; facts shared by several examples must be public "
                               "background knowledge (background=[public tables]); nothing was spent")
    return tables, key, True


def _categorical_columns(table: Table) -> dict[str, tuple]:
    """A table's categorical columns and their public values (its schema)."""
    from jostle.data.schema import Categorical

    return {name: tuple(table.schema[name].values) for name in table.schema.names
            if isinstance(table.schema[name], Categorical)}


def _backgrounds(value: Any, who: str, span: Span) -> tuple[Background, ...]:
    """`background=[t, ...]`: public tables of facts about constants (a private one is refused)."""
    items = (value,) if isinstance(value, Table) else value
    if not isinstance(items, tuple) or not all(isinstance(table, Table) for table in items):
        raise _fail(who, "background must be a list of public tables", span)
    found = []
    for table in items:
        if table.private:
            raise PrivacyError(f"{who}: the background table '{table.name}' is private; background knowledge is "
                               "shared by several examples, so it must be public", span,
                               "bind it with bind_public or load_public (a fact about one example belongs in a "
                               "fact table keyed by the example); nothing was spent")
        try:
            found.append(Background.from_frame(table.frame, table.name))
        except TableError as error:
            raise _fail(who, error.message, span, error.hint) from None
    return tuple(found)


@dataclass(frozen=True, eq=False)
class ILPTaskValue:
    """`ilp_task(target=..., modes=[...], ...)`: a call's declarations as one public value, for
    `ILP(examples, facts..., task, epsilon=E)` and for ChoiceMakers (whose calls take only a
    budget as keyword): `chooser(examples, facts, task, epsilon=E)`."""

    jostle_type = "ilp_task"
    public_stateless = True

    keywords: tuple[tuple[str, Any], ...]

    def __str__(self) -> str:
        shown = ", ".join(f"{key}={getattr(value, 'name', value)!r}" if isinstance(value, Table)
                          else f"{key}={value!r}" for key, value in self.keywords)
        return f"<ilp task {shown}>"


TASK_KEYWORDS = (*DECLARATION_KEYWORDS, *SEARCH_KEYWORDS)


def arguments(args: Sequence[Any], kwargs: dict[str, Any], who: str, span: Span) -> tuple[list[Any], dict[str, Any]]:
    """The tables of a call (a list of fact tables is spread) and its keywords, with an
    `ilp_task` value's (the last positional argument) merged in; a keyword given twice is refused."""
    items = list(args)
    merged = dict(kwargs)
    if items and isinstance(items[-1], ILPTaskValue):
        for key, value in items.pop().keywords:
            if key in merged:
                raise _fail(who, f"{key}= is given both by the call and by its ilp_task", span, "give it once")
            merged[key] = value
    tables: list[Any] = []
    for item in items:
        tables.extend(item if isinstance(item, tuple) else (item,))
    return tables, merged


def declaration(args: Sequence[Any], kwargs: dict[str, Any], span: Span, who: str,
                reads_rows: bool = True) -> Declaration:
    """Check a call's tables and declarations from public facts only, before anything is charged
    (`reads_rows` False: for a report that reads no row, e.g. `ilp_bounds`).

    Raises:
        JostleRuntimeError / PrivacyError: What is wrong and how to fix it ("nothing was spent").
    """
    tables, key, private = _check_tables(args, kwargs.get("key"), who, span, reads_rows)
    examples, facts = tables[0], tables[1:]
    names = [table.name for table in facts]
    grouped = kwargs.get("predicates")
    if grouped is not None and not isinstance(grouped, Record):
        raise _fail(who, "predicates must be a record, e.g. {load: [\"load_shape\", \"load_count\"]}", span)
    try:
        schema = declare_schema(
            key, kwargs.get("target"), kwargs.get("positive", True),
            (examples.name, _categorical_columns(examples)),
            [(table.name, table.schema.names, _categorical_columns(table)) for table in facts],
            entities=_by_table(kwargs.get("entities"), "entities", who, span, names),
            links=_by_table(kwargs.get("links"), "links", who, span, names),
            ids=_by_table(kwargs.get("ids"), "ids", who, span, names),
            unary=_names(kwargs.get("unary", ()), "unary", who, span),
            predicates={name: _names(columns, f"predicates.{name}", who, span)
                        for name, columns in (grouped.fields if grouped else ())},
            background=_backgrounds(kwargs.get("background", ()), who, span),
            example=kwargs.get("example", ""), head=kwargs.get("head", ""))
    except TableError as error:
        raise _fail(who, error.message, span, error.hint) from None
    try:
        modes, fakes, settings = search(schema, kwargs)
    except (TableError, ValueError) as error:
        message, hint = (error.message, error.hint) if isinstance(error, TableError) else (str(error), "")
        raise _fail(who, message, span, hint) from None
    return Declaration(tables, schema, modes, fakes, settings, private)


def build(decl: Declaration, span: Span, who: str) -> Any:
    """The relational database of a declaration's tables: rows the declarations cannot place
    are dropped row by row on private tables (never a refusal that depends on a row), and
    refused, located, on public ones (a duplicate example id, a fact about no example)."""
    frames = {fact.name: table.frame for fact, table in zip(decl.schema.facts, decl.tables[1:])}
    try:
        return decl.schema.build(decl.tables[0].frame, frames, strict=not decl.private)
    except TableError as error:
        raise _fail(who, error.message, span, error.hint) from None


# ---------------------------------------------------------------- the theory value
@dataclass(eq=False)
class TheoryValue:
    """A learned theory: public, prints as Prolog, is evaluated on public tables."""

    jostle_type = "theory"
    public_stateless = True  # training copies may share it (jostle.language.training_boundary)
    public_result = True     # a released value: Session.eval may return it to Python

    learned: Any                    # jostle.learners.ilp.aleph.LearnedTheory
    schema: RelationalSchema
    learner: str
    method: str
    epsilon: float | None
    rho: float | None = None

    @property
    def theory(self) -> Any:
        return self.learned.theory

    def prolog(self) -> str:
        """The clauses as Prolog text (a comment when there is none: nothing is covered)."""
        return self.learned.to_prolog()

    def __str__(self) -> str:
        privacy = "not private" if self.epsilon is None else f"epsilon {self.epsilon:g}"
        if self.rho is not None:
            privacy = f"rho {self.rho:g}, run at {privacy}"
        count = len(self.theory.clauses)
        return (f"% {self.learner} ({self.method}, {privacy}): {count} clause(s) for {self.schema.head}\n"
                + self.prolog())

    def covers(self, tables: Sequence[Any], span: Span, who: str) -> np.ndarray:
        """Which examples of PUBLIC tables (examples first, facts in the training order) it covers."""
        from jostle.learners.ilp.theory import covers

        database = self.database(tables, span, who)
        return covers(self.theory, database) if self.theory.clauses else np.zeros(len(database.examples), bool)

    def database(self, tables: Sequence[Any], span: Span, who: str) -> Any:
        tables = arguments(tables, {}, who, span)[0]
        if len(tables) != 1 + len(self.schema.facts) or not all(isinstance(t, Table) for t in tables):
            raise JostleRuntimeError(f"{who} takes the theory, then the examples table and its "
                                     f"{len(self.schema.facts)} fact table(s) in the order it was trained on", span)
        if any(table.private for table in tables):
            raise PrivacyError(f"{who} would publish one answer per example of a private table", span,
                               "evaluate on public test tables (load_public, bind_public)")
        frames = {fact.name: table.frame for fact, table in zip(self.schema.facts, tables[1:])}
        try:
            return self.schema.build(tables[0].frame, frames)
        except TableError as error:
            raise JostleRuntimeError(f"{who}: {error.message}", span, error.hint) from None


# ---------------------------------------------------------------- the learner
@dataclass(eq=False)
class ILPLearner(FamilyCall):
    """`ILP(examples, facts..., target=..., modes=[...], epsilon=E)`, and the family's Options
    (`ILPRelevance3(...)`: the same call with the Option's method, l and rounds)."""

    task = TASK
    learner_keywords = LEARNER_KEYWORDS  # every declaration; an Option's call: its budget
    option_keywords = BUDGET_KEYWORDS

    def family_options(self) -> tuple[Any, str]:
        """The family's Options; `ILP` itself stands for `DEFAULT_OPTION`."""
        from jostle.learners.ilp.options import ILP_OPTIONS

        return ILP_OPTIONS, DEFAULT_OPTION

    def jostle_call(self, interp: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> TheoryValue:
        who = f"{self.name}()"
        check_keywords(kwargs, span, who, self.keywords)
        tables, merged = arguments(args, kwargs, who, span)
        if self.option is not None:
            check_keywords(merged, span, who, (*BUDGET_KEYWORDS, *TASK_KEYWORDS))
            fixed = sorted(set(merged) & set(OPTION_FIXED))
            if fixed:
                raise _fail(who, f"the Option fixes {', '.join(fixed)}; its task may not set them", span,
                            "use ILP(...) to choose them")
            merged.update(option_settings(self.engine_option))
        decl = declaration(tables, merged, span, who)
        if not decl.private:
            return public_theory(decl, self.name, span)
        budget = budget_of(interp, kwargs, span, who)
        return learn_private(interp, decl, budget, span, self.name)


#: The settings an Option fixes (a call of an Option may not give them).
OPTION_FIXED = ("method", "levels", "rounds")
DEFAULT_OPTION = "ILPRelevance3"


def option_settings(option: Any) -> dict[str, Any]:
    """An engine Option's method, l and rounds as the call's keywords ("trivial": "majority")."""
    method = "majority" if option.method == "trivial" else option.method
    return {"method": method, "levels": max(int(option.levels), 0), "rounds": int(option.rounds)}


def public_theory(decl: Declaration, name: str, span: Span) -> TheoryValue:
    """On public tables: Aleph's non-private covering loop, for free."""
    from jostle.learners.ilp.aleph import learn

    learned = learn(build(decl, span, f"{name}()"), decl.modes, min_score=int(decl.settings["min_score"]))
    return TheoryValue(learned, decl.schema, name, "non-private Aleph", None)


def learn_private(interp: Any, decl: Declaration, budget: Any, span: Span, name: str) -> TheoryValue:
    """Build the database, charge the pure epsilon within `budget` ONCE, then learn.

    Everything refused is refused before this (`declaration`); building reads the rows but
    refuses none. The accountant is charged E (E^2/2 in a zCDP program) before anything is
    drawn; the learner's steps go through `option_guard(E)`, which refuses a step past E.
    """
    from jostle.learners.ilp.private import dp_learn, planned_cost, trivial_theory

    database = build(decl, span, f"{name}()")
    settings = decl.settings
    method = settings["method"]
    cost = pure_cost(budget)
    epsilon = Fraction(cost.epsilon)
    node = common_node([table.node for table in decl.tables])
    if planned_cost(epsilon, method if method in TRIVIAL_METHODS else None) > 0:
        interp.accountant.charge(cost, node, f"option {name}",
                                 f"{name} theory for '{decl.schema.head}' ({method}, {settings['rounds']} "
                                 f"round(s), k = {decl.fakes[0].size})", span)
    guard = option_guard(name, epsilon)
    if method in TRIVIAL_METHODS:
        learned = trivial_theory(database, decl.modes, epsilon, noise=interp.randomness, charge=guard, rule=method)
    else:
        learned = dp_learn(database, decl.modes, list(decl.fakes), epsilon, method=method,
                           levels=settings["levels"], rounds=settings["rounds"], noise=interp.randomness,
                           charge=guard, min_score=settings["min_score"],
                           min_positives=settings["min_positives"])
    rho = float(budget.rho) if isinstance(budget, RhoZCDPBudget) else None
    return TheoryValue(learned, decl.schema, name, method, float(epsilon), rho)


# ---------------------------------------------------------------- the ChoiceMaker
def choice_call(maker: Any, interp: Any, args: list[Any], span: Span) -> ChoiceCall:
    """`C(examples, facts, task, epsilon=E)` for a ChoiceMaker over ILP Options: the engine's
    input (`task.ILPData`: the database built from the tables, the modes and the fake example,
    checked before anything is charged, as `ILP(...)` checks them) and how a built-in Option
    runs on it. The Options fix the method, l and rounds; the task's declare the rest."""
    from jostle.learners.ilp.family import FAMILY
    from jostle.learners.ilp.task import ILPData

    who = f"{maker.name}()"
    tables, merged = arguments(args, {}, who, span)
    check_keywords(merged, span, who, TASK_KEYWORDS)
    decl = declaration(tables, merged, span, who)
    if not decl.private:
        return ChoiceCall(None, None, False, public_theory(decl, maker.name, span))
    data = ILPData(build(decl, span, who), decl.modes, decl.fakes, decl.tables[0].name,
                   decl.settings["min_score"], decl.settings["min_positives"])

    measure, run = engine_closures(FAMILY, data, interp)

    def wrap(learned: Any, choice: str, budget: Any) -> TheoryValue:
        from jostle.choicemaker.budgets import pure_epsilon_within
        from jostle.learners.ilp.options import ILP_OPTIONS

        method = ILP_OPTIONS[choice].method if choice in ILP_OPTIONS else "option"
        rho = float(budget.rho) if isinstance(budget, RhoZCDPBudget) else None
        return TheoryValue(learned, decl.schema, f"{maker.name}: {choice}", method,
                           float(pure_epsilon_within(budget)), rho)

    node = common_node([table.node for table in decl.tables])
    return ChoiceCall(data, node, True, None, measure, run, wrap, "train it on ilp_corpus()",
                      unit_of(decl.tables[0]))


# ---------------------------------------------------------------- built-ins
def register(builtin: Any, registry: dict[str, Any]) -> None:
    """Add `ILP`, the theory built-ins and `ilp_bounds`."""
    from jostle.learners.ilp.options import ILP_OPTIONS

    registry["ILP"] = ILPLearner("ILP")
    for name in ILP_OPTIONS:
        registry[name] = ILPLearner(name, name)

    @builtin("ilp_task", 0, privacy="choice", keywords=TASK_KEYWORDS,
             doc="ilp_task(target=, modes=, fake=, ...): an ILP call's declarations as one public value")
    def _task(interp, span, **kwargs):
        _backgrounds(kwargs.get("background", ()), "ilp_task()", span)  # a private one is refused now
        refuse_private_declarations(kwargs, "ilp_task()", span)  # a task value reaches training runs as it is
        return ILPTaskValue(tuple(kwargs.items()))

    @builtin("ilp_corpus", 0, privacy="choice",
             doc="ilp_corpus(): generated public east/west train tasks (random target theories, offline)")
    def _corpus(interp, span):
        from jostle.learners.ilp.corpus import ilp_corpus

        return CorpusValue(ilp_corpus(), "generated east/west train tasks", task=TASK)

    @builtin("theory_accuracy", 2, -1, privacy="choice",
             doc="theory_accuracy(theory, examples, facts...): the share of PUBLIC examples a theory labels right")
    def _accuracy(interp, span, theory, *tables):
        value = _theory(theory, span, "theory_accuracy()")
        covered = value.covers(tables, span, "theory_accuracy()")
        labels = value.database(tables, span, "theory_accuracy()").examples.labels
        if len(labels) == 0:
            raise JostleRuntimeError("theory_accuracy() of no examples", span)
        return float(np.mean(covered == labels))

    @builtin("covers", 2, -1, privacy="choice",
             doc="covers(theory, examples, facts...): per PUBLIC example (in order), whether the theory covers it")
    def _covers(interp, span, theory, *tables):
        value = _theory(theory, span, "covers()")
        return tuple(bool(b) for b in value.covers(tables, span, "covers()"))

    @builtin("prolog", 1, privacy="choice", doc="prolog(theory): the theory's clauses as Prolog text")
    def _prolog(interp, span, theory):
        return _theory(theory, span, "prolog()").prolog()

    @builtin("ilp_bounds", 1, -1, privacy="choice", keywords=BOUNDS_KEYWORDS,
             doc="ilp_bounds(examples, facts..., task, epsilon=, max_examples=): k, the noise of both reductions "
                 "and Theorem 3's bound, from public facts only (no row is read)")
    def _bounds(interp, span, *tables, **kwargs):
        return bounds_text(tables, kwargs, span)


def bounds_text(tables: Sequence[Any], kwargs: dict[str, Any], span: Span) -> str:
    """Theorem 3's report of a call's declarations; reads the tables' schemas, never a row."""
    from jostle.learners.ilp.bounds import report

    who = "ilp_bounds()"
    epsilon = kwargs.get("epsilon")
    limit = kwargs.get("max_examples")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not epsilon > 0:
        raise _fail(who, f"epsilon= must be a number > 0, got {epsilon!r}", span)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise _fail(who, f"max_examples= must be a public upper bound on the examples (a whole number >= 1), got "
                         f"{limit!r}", span)
    delta, eta = kwargs.get("delta", 0.9), kwargs.get("eta", 0.1)
    for name, value in (("delta", delta), ("eta", eta)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
            raise _fail(who, f"{name} must be a number in (0, 1), got {value!r}", span)
    tables, merged = arguments(tables, {}, who, span)
    check_keywords(merged, span, who, TASK_KEYWORDS)
    decl = declaration(tables, merged, span, who, reads_rows=False)
    settings = decl.settings
    return report(decl.modes, decl.fakes[0], Fraction(epsilon), rounds=settings["rounds"], levels=settings["levels"],
                  max_examples=int(limit), delta=float(delta), eta=float(eta)).text()


def _theory(value: Any, span: Span, who: str) -> TheoryValue:
    if not isinstance(value, TheoryValue):
        raise JostleRuntimeError(f"{who} needs a learned theory, got a {type_name(value)}", span,
                                 "learn one with ILP(examples, facts..., target=..., epsilon=...)")
    return value


__all__ = ["TASK", "LEARNER_KEYWORDS", "TASK_KEYWORDS", "Declaration", "ILPLearner", "ILPTaskValue", "TheoryValue",
           "arguments", "declaration", "option_settings", "public_theory",
           "build", "learn_private", "bounds_text", "choice_call", "register"]
