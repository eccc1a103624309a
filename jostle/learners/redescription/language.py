"""DP redescription mining in the language: the `redescribe` call, redescription sets as values.

    found = redescribe(diagnoses.bound_per_key(1), labs.bound_per_key(1), algorithm="MCMCTreePair",
                       tries=4, edges={age: [0, 40, 65, 120]}, epsilon=0.5)
    print(found)                                   # both queries, noisy support, Jaccard, p-value
    print(redescription_text(found, pruned=true))  # with the pruned ones
    rows = redescriptions(found)                   # one record per kept redescription
    print(evaluate_redescriptions(found, public_diagnoses, public_labs))   # true statistics, PUBLIC

The views. The two tables are the left and the right view of the same entities: private tables of
ONE database bound under `entity(key)` (`bind_database({...}, key=...)`, `--key`), so that a
neighbour removes one entity from both views, each holding one row per entity (stability 1:
`t.bound_per_key(1)` first). The entities are those present in both views, matched on the key.
Every other column is an attribute, coded against its PUBLIC domain (`declare.view_from_schema`):
a categorical column by its declared values (a value outside them is "other"), a numeric one on
declared bin edges (`edges={age: [0, 40, 65, 120]}`, public: declared, or released by a charged
DP quantile such as `stats.private_quantile`) or on `bins=` equal-width bins over its declared
bounds (default 4). Never bins read off the private rows. Select the attributes with `t.select`.

Privacy (unit: one entity, both its rows). Before anything is charged, from public facts only
(the tables' schemas, units, stabilities, databases, and the call's declarations), the call
refuses: views that are not private tables of one database under `entity(key)` (or both
public), a view that may hold several rows per entity, a view without the key, bad edges or bins,
an unknown algorithm (only the exact samplers are offered: the chains the paper uses are not
proved private and are unreachable from here), settings out of range and a bad budget. Then it
codes the rows (never refusing one: an unknown value is "other", a missing one "missing"),
charges the pure epsilon E within the call's budget to the accountant ONCE, and runs
`algorithms.mine` under `option_guard(E)`, which refuses any step past E before its noise is
drawn. The released set is post-processing of the miner's noisy counts: public. On PUBLIC
tables the call runs the same miner at the given epsilon (default 1) and charges nothing.

The Options (`REDESCRIPTION_OPTIONS` of `options`) are the same call with their algorithm and
settings fixed, the rest declared in a `redescription_task(...)` value: `AltExpMStable3(left,
right, task, epsilon=E)`; `choice_call` gives a ChoiceMaker over them the same checked views.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

from jostle.choicemaker.budgets import pure_cost
from jostle.diagnostics.errors import JostleRuntimeError, PrivacyError
from jostle.diagnostics.source import Span
from jostle.language.calls import BUDGET_KEYWORDS, ChoiceCall, budget_of, check_keywords, unit_of
from jostle.language.values import CorpusValue, Record, Table, type_name
from jostle.learnerkit.keyed import FamilyCall, database_name, engine_closures
from jostle.learners.redescription.declare import (
    ALGORITHM_KEYWORDS, DEFAULT_BINS, SETTING_KEYWORDS, DeclarationError, check_edges_used, initial_attribute,
    settings_from, view_from_schema,
)
from jostle.privacy.composition import common_node
from jostle.privacy.measures import RhoZCDPBudget
from jostle.privacy.subledger import option_guard

TASK = "redescription"
#: The Option `redescribe` stands for as a ChoiceMaker member (the paper's choice on small data).
DEFAULT_OPTION = "MCMCTreePair"
DECLARATION_KEYWORDS = ("key", "bins", "edges", "initial_target", "runs")
TASK_KEYWORDS = (*DECLARATION_KEYWORDS, *SETTING_KEYWORDS)
LEARNER_KEYWORDS = (*BUDGET_KEYWORDS, *TASK_KEYWORDS)
#: What a public call runs at when it is given no epsilon (nothing is charged on public tables).
PUBLIC_EPSILON = Fraction(1)


# ---------------------------------------------------------------- the declaration
@dataclass(frozen=True)
class Declaration:
    """What a call declares, checked from public facts only (no row is read).

    Attributes:
        tables: The left and the right view.
        key: The entity key both views carry (None: public views aligned by position).
        schemas: The two public view schemas (`views.ViewSchema`).
        settings: The checked algorithm settings and constraints (`declare.settings_from`).
        private: Whether the tables are private.
        initial: The public (view, attribute) every try starts from, or None (a random one).
        runs: The runs the analyst plans at this budget (public; for ChoiceMakers).
    """

    tables: tuple[Table, Table]
    key: str | None
    schemas: tuple[Any, Any]
    settings: dict[str, Any]
    private: bool
    initial: tuple[int, int] | None = None
    runs: int = 1

    @property
    def algorithm(self) -> str:
        return self.settings["algorithm"]

    def constraints(self) -> Any:
        """The constraints the call declares (`extract.Constraints`), or None if it declares none
        (an Option then applies its family's rule)."""
        from jostle.learners.redescription.declare import CONSTRAINT_KEYWORDS

        if not set(CONSTRAINT_KEYWORDS) & set(self.settings):
            return None
        return self.miner_settings().constraints

    def task_data(self, span: Span, who: str) -> Any:
        """The coded views as an Option's input (`task.RedescriptionData`)."""
        from jostle.learners.redescription.task import RedescriptionData

        return RedescriptionData(build(self, span, who), self.runs, self.tables[0].name, self.constraints())

    def miner_settings(self) -> Any:
        """The checked settings as `algorithms.MinerSettings`."""
        from jostle.learners.redescription.declare import miner_settings

        return miner_settings(self.settings)


def _fail(who: str, message: str, span: Span, hint: str = "") -> JostleRuntimeError:
    return JostleRuntimeError(f"{who}: {message}", span, (hint + "; " if hint else "") + "nothing was spent")


def _check_views(args: Sequence[Any], declared_key: Any, who: str,
                 span: Span) -> tuple[tuple[Table, Table], str | None, bool]:
    """The two views of a call, their entity key and whether they are private (refusals: public)."""
    if len(args) != 2:
        raise _fail(who, f"needs the left and the right view (two tables), got {len(args)} argument(s)", span,
                    "e.g. redescribe(diagnoses.bound_per_key(1), labs.bound_per_key(1), epsilon=0.5)")
    for position, table in enumerate(args, start=1):
        if not isinstance(table, Table):
            raise _fail(who, f"argument {position} must be a table (a view), got a {type_name(table)}", span)
    left, right = args
    if declared_key is not None and (not isinstance(declared_key, str) or not declared_key):
        raise _fail(who, f"key= must be a column name, got {declared_key!r}", span)
    if left.private != right.private:
        raise _fail(who, "mixes a private and a public view", span,
                    "pass two private tables of one database, or two public tables")
    if not left.private:
        key = declared_key if declared_key is not None else (left.unit.key if left.unit.is_entity else None)
        for table in (left, right):
            if key is not None and key not in table.schema:
                raise _fail(who, f"the view '{table.name}' has no key column '{key}'", span,
                            f"its columns are {table.schema.names}")
        return (left, right), key, False
    unit = unit_of(left)
    if not unit.is_entity:
        raise PrivacyError(f"{who}: the view '{left.name}' is bound under the unit {unit}; DP redescription mining "
                           "protects one entity in both views, the unit entity(key)", span,
                           'bind both views as one database: bind_database({"left": ..., "right": ...}, key="id"); '
                           "nothing was spent")
    key = unit.key
    if declared_key is not None and declared_key != key:
        raise _fail(who, f"key={declared_key!r}, but the views are bound under {unit}", span,
                    f"the entity key is the unit's: leave key= out or write key={key!r}")
    if unit_of(right) != unit or database_name(right.node) != database_name(left.node):
        raise PrivacyError(f"{who}: the views '{left.name}' and '{right.name}' are not tables of one database under "
                           f"{unit} (units {unit} and {unit_of(right)})", span,
                           "bind both views as one database (bind_database), so that removing an entity removes "
                           "its rows from both; nothing was spent")
    for table in (left, right):
        if key not in table.schema:
            raise PrivacyError(f"{who}: the view '{table.name}' has no column '{key}', so its rows are not matched "
                               "to their entities", span, f"keep '{key}' in '{table.name}'; nothing was spent")
        if table.stability != 1:
            bound = "unbounded" if table.stability is None else str(table.stability)
            raise PrivacyError(f"{who}: the view '{table.name}' may hold several rows per entity (stability "
                               f"{bound}); each view gives one row per entity", span,
                               f"keep one row per entity first: {table.name}.bound_per_key(1); nothing was spent")
    return (left, right), key, True


def _edges(value: Any, who: str, span: Span) -> dict[str, Any]:
    """`edges={age: [0, 40, 65, 120]}` as a dict (a record of lists of public numbers)."""
    if value is None:
        return {}
    if not isinstance(value, Record):
        raise _fail(who, f"edges must be a record of bin edges by column, got a {type_name(value)}", span,
                    "e.g. edges={age: [0, 40, 65, 120]}")
    return dict(value.fields)


def declaration(args: Sequence[Any], kwargs: dict[str, Any], span: Span, who: str) -> Declaration:
    """Check a call's views and declarations (public facts only) and build its view schemas.

    Raises:
        JostleRuntimeError / PrivacyError: What is wrong and how to fix it ("nothing was spent").
    """
    tables, key, private = _check_views(args, kwargs.get("key"), who, span)
    edges = _edges(kwargs.get("edges"), who, span)
    try:
        check_edges_used(edges, [table.schema for table in tables], key)
        schemas = tuple(view_from_schema(table.name, table.schema, key, bins=kwargs.get("bins", DEFAULT_BINS),
                                         edges={c: e for c, e in edges.items() if c in table.schema})
                        for table in tables)
        settings = settings_from(kwargs)
        initial = initial_attribute(schemas, kwargs.get("initial_target"))
        declared = Declaration(tables, key, schemas, settings, private, initial, settings.get("runs", 1))  # type: ignore[arg-type]
        declared.miner_settings()
    except DeclarationError as error:
        raise _fail(who, error.message, span, error.hint) from None
    return declared


def build(decl: Declaration, span: Span, who: str) -> Any:
    """The coded views of a declaration's tables (`views.TwoViews`): the entities of both views,
    matched on the key (public views without one: by position). Never refuses a private row."""
    from jostle.learners.redescription.views import encode_views

    frames = [table.frame for table in decl.tables]
    if decl.private:
        return encode_views(frames[0], frames[1], decl.schemas, decl.key)
    if decl.key is None and len(frames[0]) != len(frames[1]):
        raise _fail(who, f"the public views have {len(frames[0])} and {len(frames[1])} rows and no key to match them",
                    span, "give key= (a column both views have), or views of the same length")
    try:
        return encode_views(frames[0], frames[1], decl.schemas, decl.key)
    except (ValueError, TypeError) as error:  # public rows: say what is wrong with them
        raise _fail(who, str(error), span) from None


# ---------------------------------------------------------------- the released value
@dataclass(eq=False)
class RedescriptionsValue:
    """A released redescription set: public, prints both queries and the noisy statistics."""

    jostle_type = "redescriptions"
    public_stateless = True  # training copies may share it (jostle.language.training_boundary)
    public_result = True     # a released value: Session.eval may return it to Python

    released: Any            # queries.RedescriptionSet
    learner: str
    epsilon: float | None    # None: mined on public tables, nothing charged
    rho: float | None = None

    def __len__(self) -> int:
        return len(self.released.kept())

    def header(self) -> str:
        """Who mined it, at what budget (the set's own first line says what was kept)."""
        if self.epsilon is None:
            privacy = "public tables, nothing charged"
        else:
            privacy = f"epsilon {self.epsilon:g}" + (f" (rho {self.rho:g})" if self.rho is not None else "")
        return f"% {self.learner} ({self.released.algorithm}, {privacy})"

    def text(self, pruned: bool = False) -> str:
        """Both queries, noisy support, Jaccard and p-value of every kept redescription (and of the
        pruned ones, marked, when `pruned`)."""
        lines = [self.header(), str(self.released)]
        if pruned:
            schemas = self.released.schemas
            lines += [f"  {r.text(schemas)}" for r in self.released.redescriptions if r.pruned]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def to_frame(self, include_pruned: bool = False) -> Any:
        """A pandas DataFrame, one row per redescription (`queries.RedescriptionSet.to_frame`)."""
        return self.released.to_frame(include_pruned=include_pruned)

    def records(self, pruned: bool = False) -> tuple[Record, ...]:
        """One Jostle record per redescription (kept only unless `pruned`)."""
        return _frame_records(self.to_frame(include_pruned=pruned))

    def evaluate(self, left: Any, right: Any, key: str | None = None, include_pruned: bool = True) -> Any:
        """`to_frame` plus the exact statistics on PUBLIC frames of the two views (pandas; the
        columns of the schemas it was mined on, matched on `key`, else by position)."""
        from jostle.learners.redescription.views import encode_views

        views = encode_views(left, right, self.released.schemas, key)
        return self.released.evaluate(views, include_pruned=include_pruned)


def _plain(value: Any) -> Any:
    """A pandas cell as a Jostle value (NumPy scalars as Python numbers)."""
    return value.item() if hasattr(value, "item") and not isinstance(value, str) else value


def _frame_records(frame: Any) -> tuple[Record, ...]:
    return tuple(Record(tuple((str(column), _plain(value)) for column, value in row.items()))
                 for _, row in frame.iterrows())


# ---------------------------------------------------------------- the learner
@dataclass(eq=False)
class RedescriptionLearner(FamilyCall):
    """`redescribe(left, right, ..., epsilon=E)`, and the family's Options (`AltExpMStable(left,
    right, task, epsilon=E)`: the same call with the Option's algorithm and settings)."""

    task = TASK
    learner_keywords = LEARNER_KEYWORDS  # every declaration; an Option's call: its budget
    option_keywords = BUDGET_KEYWORDS

    def family_options(self) -> tuple[Any, str]:
        """The family's Options; `redescribe` stands for "MCMCTreePair" in a ChoiceMaker."""
        from jostle.learners.redescription.options import REDESCRIPTION_OPTIONS

        return REDESCRIPTION_OPTIONS, DEFAULT_OPTION

    def jostle_call(self, interp: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> RedescriptionsValue:
        who = f"{self.name}()"
        check_keywords(kwargs, span, who, self.keywords)
        tables, merged = arguments(args, kwargs, who, span)
        if self.option is not None:
            check_keywords(merged, span, who, (*BUDGET_KEYWORDS, *TASK_KEYWORDS))
            _refuse_fixed(merged, who, span)
            merged["algorithm"] = self.engine_option.algorithm
        decl = declaration(tables, merged, span, who)
        if not decl.private:
            return public_redescriptions(interp, decl, kwargs, span, self.name)
        budget = budget_of(interp, kwargs, span, who)
        return mine_private(interp, decl, budget, span, self.name, self.option)


def _refuse_fixed(merged: dict[str, Any], who: str, span: Span) -> None:
    """An Option (or a ChoiceMaker choosing one) fixes the algorithm and its settings."""
    fixed = sorted(set(merged) & {*ALGORITHM_KEYWORDS, "initial_target"})
    if fixed:
        raise _fail(who, f"an Option fixes {', '.join(fixed)}; its task may not set them", span,
                    "use redescribe(...) to choose them")


@dataclass(frozen=True, eq=False)
class RedescriptionTaskValue:
    """`redescription_task(bins=, edges=, min_support=, ...)`: a call's declarations as one public
    value, for `redescribe(left, right, task, epsilon=E)`, the Options and ChoiceMakers (whose
    calls take only a budget as keyword): `chooser(left, right, task, epsilon=E)`."""

    jostle_type = "redescription_task"
    public_stateless = True

    keywords: tuple[tuple[str, Any], ...]

    def __str__(self) -> str:
        shown = ", ".join(f"{key}={value!r}" for key, value in self.keywords)
        return f"<redescription task {shown}>"


def arguments(args: Sequence[Any], kwargs: dict[str, Any], who: str,
              span: Span) -> tuple[list[Any], dict[str, Any]]:
    """The views of a call and its keywords, with a trailing `redescription_task` merged in (a
    keyword given both by the call and by its task is refused)."""
    tables, merged = list(args), {key: value for key, value in kwargs.items() if key not in BUDGET_KEYWORDS}
    if tables and isinstance(tables[-1], RedescriptionTaskValue):
        task = tables.pop()
        twice = sorted(set(merged) & {key for key, _ in task.keywords})
        if twice:
            raise _fail(who, f"{', '.join(twice)} given both by the call and by its redescription_task", span,
                        "give each declaration once")
        merged.update(task.keywords)
    return tables, merged


def public_redescriptions(interp: Any, decl: Declaration, kwargs: dict[str, Any], span: Span,
                          name: str) -> RedescriptionsValue:
    """On public tables: the same miner at the call's epsilon (default 1), for free."""
    from jostle.learners.redescription.algorithms import mine

    epsilon = kwargs.get("epsilon", PUBLIC_EPSILON)
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, Fraction)) or not 0 < epsilon < float("inf"):
        raise _fail(f"{name}()", f"epsilon must be a finite number > 0, got {epsilon!r}", span)
    views = build(decl, span, f"{name}()")
    released = mine(views, decl.miner_settings(), Fraction(epsilon), noise=interp.randomness,
                    charge=lambda cost, description: None, initial_attribute=decl.initial)
    return RedescriptionsValue(released, name, None)


def mine_private(interp: Any, decl: Declaration, budget: Any, span: Span, name: str,
                 option: str | None = None) -> RedescriptionsValue:
    """Charge the pure epsilon within `budget` ONCE, then code the views and mine.

    Everything refused is refused before this (`declaration`, `budget_of`); coding reads the
    rows but refuses none. The accountant is charged E (E^2/2 in a zCDP program) before
    anything is drawn; the miner's steps go through `option_guard(E)`, which refuses a step
    past E before its noise is drawn.
    """
    from jostle.learners.redescription.algorithms import mine

    settings = decl.miner_settings()
    cost = pure_cost(budget)
    epsilon = Fraction(cost.epsilon)
    node = common_node([table.node for table in decl.tables])
    what = f"the Option {option}" if option is not None else f"{settings.tries} tr(ies), depth {settings.depth}"
    interp.accountant.charge(cost, node, f"option {name}" if option is not None else f"{name} {decl.algorithm}",
                             f"{name}: {decl.algorithm} redescriptions of '{decl.tables[0].name}' and "
                             f"'{decl.tables[1].name}' ({what})", span)
    # the rows are coded only once the charge went through: a refusal reads no private row (its
    # time does not grow with the rows); coding a private row never fails
    data = decl.task_data(span, f"{name}()") if option is not None else build(decl, span, f"{name}()")
    guard = option_guard(name, epsilon)
    if option is not None:
        released = RedescriptionLearner(name, option).engine_option.learn(data, epsilon, interp.randomness, guard)
    else:
        released = mine(data, settings, epsilon, noise=interp.randomness, charge=guard,
                        initial_attribute=decl.initial)
    rho = float(budget.rho) if isinstance(budget, RhoZCDPBudget) else None
    return RedescriptionsValue(released, name, float(epsilon), rho)


# ---------------------------------------------------------------- the ChoiceMaker
def choice_call(maker: Any, interp: Any, args: list[Any], span: Span) -> ChoiceCall:
    """`C(left, right, task, epsilon=E)` for a ChoiceMaker over redescription Options: the
    engine's input (`task.RedescriptionData`: the views coded on public bins and the task's
    constraints, checked before anything is charged, as `redescribe(...)` checks them) and how a
    built-in Option runs on it. The Options fix the algorithm and its settings."""
    from jostle.learners.redescription.family import FAMILY

    who = f"{maker.name}()"
    tables, merged = arguments(args, {}, who, span)
    check_keywords(merged, span, who, TASK_KEYWORDS)
    _refuse_fixed(merged, who, span)
    decl = declaration(tables, merged, span, who)
    if not decl.private:
        return ChoiceCall(None, None, False, public_redescriptions(interp, decl, {}, span, maker.name))
    data = decl.task_data(span, who)

    measure, run = engine_closures(FAMILY, data, interp)

    def wrap(result: Any, choice: str, budget: Any) -> RedescriptionsValue:
        from jostle.choicemaker.budgets import pure_epsilon_within

        rho = float(budget.rho) if isinstance(budget, RhoZCDPBudget) else None
        return RedescriptionsValue(result, f"{maker.name}: {choice}", float(pure_epsilon_within(budget)), rho)

    node = common_node([table.node for table in decl.tables])
    return ChoiceCall(data, node, True, None, measure, run, wrap, "train it on redescription_corpus()",
                      unit_of(decl.tables[0]))


# ---------------------------------------------------------------- built-ins
def register(builtin: Any, registry: dict[str, Any]) -> None:
    """Add `redescribe`, the family's Options, `redescription_task` and the set's built-ins."""
    registry["redescribe"] = RedescriptionLearner("redescribe")
    for name in _option_names():
        registry[name] = RedescriptionLearner(name, name)

    @builtin("redescription_task", 0, privacy="choice", keywords=TASK_KEYWORDS,
             doc="redescription_task(bins=, edges=, min_support=, ...): a redescribe call's declarations as one "
                 "public value")
    def _task(interp, span, **kwargs):
        _edges(kwargs.get("edges"), "redescription_task()", span)
        try:
            settings_from(kwargs)
        except DeclarationError as error:
            raise _fail("redescription_task()", error.message, span, error.hint) from None
        return RedescriptionTaskValue(tuple(kwargs.items()))

    @builtin("redescriptions", 1, privacy="choice", keywords=("pruned",),
             doc="redescriptions(R, pruned=false): one record per released redescription (queries, noisy "
                 "support, Jaccard, p-value)")
    def _records(interp, span, found, pruned=False):
        return _value(found, span, "redescriptions()").records(_flag(pruned, span, "redescriptions()"))

    @builtin("redescription_text", 1, privacy="choice", keywords=("pruned",),
             doc="redescription_text(R, pruned=false): the released redescriptions as text")
    def _text(interp, span, found, pruned=False):
        return _value(found, span, "redescription_text()").text(_flag(pruned, span, "redescription_text()"))

    @builtin("evaluate_redescriptions", 3, privacy="choice", keywords=("key", "pruned"),
             doc="evaluate_redescriptions(R, left, right, key=, pruned=true): each redescription's noisy and TRUE "
                 "statistics on PUBLIC views")
    def _evaluate(interp, span, found, left, right, key=None, pruned=True):
        who = "evaluate_redescriptions()"
        value = _value(found, span, who)
        for table in (left, right):
            if not isinstance(table, Table):
                raise JostleRuntimeError(f"{who} needs two public tables (the views), got a {type_name(table)}",
                                         span)
            if table.private:
                raise PrivacyError(f"{who} would publish exact statistics of the private table '{table.name}'",
                                   span, "evaluate on public views (load_public, bind_public)")
        try:
            frame = value.evaluate(left.frame, right.frame, key, include_pruned=_flag(pruned, span, who))
        except (ValueError, TypeError) as error:
            raise JostleRuntimeError(f"{who}: {error}", span,
                                     "give the views it was mined on (the same columns), with key= to match "
                                     "their rows") from None
        return _frame_records(frame)

    if _has_module("corpus"):
        @builtin("redescription_corpus", 0, privacy="choice",
                 doc="redescription_corpus(): generated public two-view tasks with planted redescriptions (offline)")
        def _corpus(interp, span):
            from jostle.learners.redescription.corpus import redescription_corpus

            return CorpusValue(redescription_corpus(), "generated planted two-view tasks", task=TASK)


def _has_module(name: str) -> bool:
    """Whether the family's module `name` exists (without importing it)."""
    import importlib.util

    return importlib.util.find_spec(f"jostle.learners.redescription.{name}") is not None


def _option_names() -> tuple[str, ...]:
    """The family's Option names (none before its options module exists)."""
    if not _has_module("options"):
        return ()
    from jostle.learners.redescription.options import REDESCRIPTION_OPTIONS

    return tuple(REDESCRIPTION_OPTIONS)


def _flag(value: Any, span: Span, who: str) -> bool:
    if not isinstance(value, bool):
        raise JostleRuntimeError(f"{who}: pruned= must be true or false, got a {type_name(value)}", span)
    return value


def _value(value: Any, span: Span, who: str) -> RedescriptionsValue:
    if not isinstance(value, RedescriptionsValue):
        raise JostleRuntimeError(f"{who} needs released redescriptions, got a {type_name(value)}", span,
                                 "mine them with redescribe(left, right, epsilon=...)")
    return value


__all__ = ["TASK", "LEARNER_KEYWORDS", "TASK_KEYWORDS", "Declaration", "RedescriptionLearner",
           "RedescriptionTaskValue", "RedescriptionsValue", "arguments", "declaration", "build",
           "public_redescriptions", "mine_private", "choice_call", "register"]
