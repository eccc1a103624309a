"""Relational schemas from public declarations, and Michalski's trains as tables.

How the tables of a call or a Python user become a `tables.RelationalSchema`, from public facts
only (names, column names, declared domains; never a row):

    declare_schema        the language's route: each table's name, columns and categorical
                          domains (its schema), plus the keyword declarations of `ILP(...)`
    schema_for            the Python route: frames' column names and declared domains
    relational_database   schema_for, then build, in one call
    default_modes         one Aleph mode per predicate of a schema
    search                a call's modes, fake example(s) and search settings, checked against
                          the schema's predicates

and the trains of `trains.generate_trains` as two tables (`trains_frames`, `trains_schema`), the
same predicates as `trains.TRAIN_PREDICATES`, so a theory covers the same trains either way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from jostle.learners.ilp.relations import EntityType, RelationalDatabase
from jostle.learners.ilp.tables import Background, FactTable, RelationalSchema, TableError

if TYPE_CHECKING:  # pandas is imported where a frame is read, not at start-up
    import pandas as pd


def relational_database(examples: pd.DataFrame, key: str, target: str, positive: Any,
                        facts: Mapping[str, tuple[pd.DataFrame, FactTable]] | None = None, *,
                        domains: Mapping[str, Sequence[Any]],
                        background: Sequence[Background] = (), example: str = "", head: str = "",
                        example_columns: Sequence[str] = (), example_unary: Sequence[str] = (),
                        strict: bool = True) -> RelationalDatabase:
    """Build a relational database from frames under public declarations (see the module).

    Args:
        examples: One row per example: the key, the target column, `example_columns`.
        key: The example id column; every fact table must have it.
        target: The label column; `positive` is the label of a positive example.
        facts: Table name -> (its rows, its `FactTable` declaration; the name is the key's).
        domains: Column -> its public constants, for every categorical column read (a fact
            table reads the declared columns it has, but the key and its id column, unless its
            `FactTable.columns` names them).
        background: Public background predicates (`Background`, or `Background.from_frame`).
        example, head, example_columns, example_unary: See `RelationalSchema`.
        strict: See `RelationalSchema.build`.

    Raises:
        TableError: A declaration or a table that cannot make the database (with a fix).
    """
    schema = schema_for(examples, key, target, positive, facts or {}, domains=domains, background=background,
                        example=example, head=head, example_columns=example_columns, example_unary=example_unary)
    return schema.build(examples, {name: frame for name, (frame, _) in (facts or {}).items()}, strict=strict)


def schema_for(examples: Any, key: str, target: str, positive: Any,
               facts: Mapping[str, tuple[Any, FactTable]], *, domains: Mapping[str, Sequence[Any]],
               background: Sequence[Background] = (), example: str = "", head: str = "",
               example_columns: Sequence[str] = (), example_unary: Sequence[str] = ()) -> RelationalSchema:
    """The `RelationalSchema` of tables given by their column names (frames, or anything with
    `.columns`; only the names are read): each fact table reads the declared columns it has."""
    declared = {str(column): tuple(values) for column, values in domains.items()}
    resolved = []
    for name, (frame, fact) in facts.items():
        names = [str(column) for column in getattr(frame, "columns", ())]
        if key not in names:
            raise TableError(f"the table '{name}' has no column '{key}': a private fact table must be keyed by the "
                             "example id",
                             f"add '{key}' (the example each fact belongs to) to '{name}'; facts shared by several "
                             "examples are background knowledge and must be public (background=)")
        columns = fact.columns if fact.columns is not None else tuple(
            column for column in names if column in declared and column not in (key, fact.id_column))
        resolved.append(FactTable(name, fact.entity, fact.link, fact.id_column, tuple(columns), tuple(fact.unary),
                                  tuple(fact.predicates)))
    return RelationalSchema(key, target, positive, tuple(declared.items()), tuple(resolved), tuple(background),
                            example, head, tuple(example_columns), tuple(example_unary))


def declare_schema(key: str, target: str, positive: Any, examples: tuple[str, Mapping[str, tuple]],
                   facts: Sequence[tuple[str, Sequence[str], Mapping[str, tuple]]], *,
                   entities: Mapping[str, str] | None = None, links: Mapping[str, str] | None = None,
                   ids: Mapping[str, str] | None = None, unary: Sequence[str] = (),
                   predicates: Mapping[str, Sequence[str]] | None = None, background: Sequence[Background] = (),
                   example: str = "", head: str = "") -> RelationalSchema:
    """A `RelationalSchema` from public facts only: the tables' names, columns and domains.

    Every categorical column of a table is read (but the key, the target and an id column);
    numeric ones are not (bin them into public categories first).

    Args:
        key, target, positive: The example id column, the label column, the positive label.
        examples: The examples table's name and its categorical columns' domains (the target's
            among them).
        facts: Per fact table: its name, all its column names, its categorical columns' domains.
        entities, links, ids: By fact table name: the entity each row introduces, the link's
            name, the column telling the entity apart within its example (see `FactTable`).
        unary: Columns whose constants become unary predicates (in whichever table reads them).
        predicates: Name -> columns of one fact table, for predicates over several columns.
        background: Public background predicates.
        example, head: See `RelationalSchema`.

    Raises:
        TableError: What cannot be declared, with the fix.
    """
    entities, links, ids, predicates = entities or {}, links or {}, ids or {}, predicates or {}
    name, example_domains = examples
    labels = example_domains.get(target) if isinstance(target, str) else None
    if target == key or labels is None:
        raise TableError(f"target= must name a categorical label column of '{name}', got {target!r}",
                         f"its categorical columns are {[c for c in example_domains if c != key]}")
    if positive not in labels:
        raise TableError(f"positive= must be the label of a positive example, one of {list(labels)}; got "
                         f"{positive!r}")
    names = [fact[0] for fact in facts]
    if len(set(names)) != len(names) or name in names:
        raise TableError(f"two tables share a name among {[name, *names]}", "pass each table once")
    for what, mapping in (("entities", entities), ("links", links), ("ids", ids)):
        unknown = sorted(set(mapping) - set(names))
        if unknown:
            raise TableError(f"{what} names {unknown}, not fact tables of the call", f"the fact tables are {names}")
    domains: dict[str, tuple] = {}

    def collect(table: str, columns: Mapping[str, tuple], skip: Sequence[Any]) -> tuple[str, ...]:
        read = [column for column in columns if column not in skip]
        for column in read:
            if domains.get(column, columns[column]) != columns[column]:
                raise TableError(f"the column '{column}' has different domains in two tables",
                                 "give a column one public domain in every table (it is one type in modes)")
            domains[column] = tuple(columns[column])
        return tuple(read)

    unary_set = set(unary)
    example_columns = collect(name, example_domains, (key, target))
    seen = set(example_columns) & unary_set
    declared = []
    for table, columns, categorical in facts:
        id_column = ids.get(table)
        if id_column is not None and id_column not in columns:
            raise TableError(f"ids names '{id_column}', not a column of '{table}'", f"its columns are {list(columns)}")
        if key not in columns:
            raise TableError(f"the table '{table}' has no column '{key}': a private fact table must be keyed by the "
                             "example id", f"keep '{key}' in '{table}'; facts shared by several examples are "
                             "background knowledge and must be public (background=)")
        read = collect(table, categorical, (key, id_column))
        seen |= set(read) & unary_set
        mine = tuple((group, tuple(cols)) for group, cols in predicates.items() if set(cols) <= set(read))
        declared.append(FactTable(table, entities.get(table), links.get(table), id_column, read,
                                  tuple(column for column in read if column in unary_set), mine))
    placed = {group for fact in declared for group, _ in fact.predicates}
    missing = sorted(unary_set - seen) or sorted(set(predicates) - placed)
    if missing:
        raise TableError(f"no table reads {missing} as its categorical column(s) (named in unary= or predicates=)",
                         "name categorical columns of one table")
    return RelationalSchema(key, target, positive, tuple(domains.items()), tuple(declared), tuple(background),
                            example, head, example_columns,
                            tuple(column for column in example_columns if column in unary_set), name)


def default_modes(schema: RelationalDatabase) -> tuple[str, ...]:
    """One mode per predicate of a database (its schema: predicates and types, never rows):
    links `has_car(+train, -car)` first, then tests with their constants (`roof(+car, #roof)`,
    `short(+car)`), in the predicates' order."""
    example = schema.examples.entity.name
    links, tests = [], []
    for predicate in schema.predicates.values():
        kinds = [schema.arg_type(predicate, position) for position in range(predicate.arity)]
        if len(kinds) == 2 and kinds[0].name == example and isinstance(kinds[1], EntityType):
            links.append(f"{predicate.name}(+{kinds[0].name}, -{kinds[1].name})")
        else:
            args = [f"+{kinds[0].name}", *(f"#{kind.name}" for kind in kinds[1:])]
            tests.append(f"{predicate.name}({', '.join(args)})")
    return tuple(links + tests)


#: Defaults of the search: k literals in the fake example, clause length, l, rounds, method.
DEFAULTS = {"k": 10, "max_length": 4, "levels": 3, "rounds": 1, "method": "relevance", "min_score": 0,
            "min_positives": 0}
#: The largest k (and clause length) a call may declare: 2^30 clauses is already far past what
#: any budget can noise usefully.
MAX_K = 30
#: The trivial theories (`private.trivial_theory`'s rules) a call may ask for as its method.
TRIVIAL_METHODS = ("majority", "all_positive")


def search(schema: RelationalSchema | RelationalDatabase, declared: Mapping[str, Any],
           head: str = "") -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    """The modes, the fake example(s) and the settings a call declares, checked against the
    schema's predicates (public facts only).

    Args:
        schema: The relational schema, or a database whose predicates, types and domains serve
            as one (its rows are not read; then `head` names the target predicate).
        declared: modes (Aleph texts; default one per predicate), fake (a Prolog body, or a
            list of them, one per round in turn; default the vocabulary cut at k, shuffled by
            fake_seed), k, max_length, levels, rounds, method, min_score, min_positives.

    Returns:
        (modes.Modes, fake bottom clauses, settings).

    Raises:
        TableError: A bad setting. ModeError, TheoryError (ValueErrors): bad modes or fake.
    """
    from jostle.learners.ilp.fake import fake_bottom
    from jostle.learners.ilp.modes import Mode, Modes
    from jostle.learners.ilp.private import METHODS
    from jostle.learners.ilp.search import check_lattice

    settings: dict[str, Any] = {}
    for name, low, high in (("k", 0, MAX_K), ("max_length", 0, MAX_K), ("levels", 0, MAX_K), ("rounds", 1, 100),
                            ("min_positives", 0, None)):
        value = declared.get(name, DEFAULTS[name])
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low \
                or (high is not None and value > high):
            within = f"in {low}..{high}" if high is not None else f">= {low}"
            raise TableError(f"{name} must be a whole number {within} (public), got {value!r}",
                             "a fake bottom clause of k literals spans up to 2^k clauses" if name == "k" else "")
        settings[name] = int(value)
    method = declared.get("method", DEFAULTS["method"])
    if method not in (*METHODS, *TRIVIAL_METHODS):
        raise TableError(f"method must be one of {', '.join((*METHODS, *TRIVIAL_METHODS))}, got {method!r}")
    min_score = declared.get("min_score", 0)
    if isinstance(min_score, bool) or not isinstance(min_score, (int, float, np.integer, np.floating)) \
            or not np.isfinite(min_score):
        raise TableError(f"min_score must be a finite number (public), got {min_score!r}")
    settings.update(method=method, min_score=float(min_score))
    seed = declared.get("fake_seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise TableError(f"fake_seed must be a whole number (public), got {seed!r}")
    if isinstance(schema, RelationalSchema):
        empty, head = schema.empty(), schema.head
    else:
        empty = schema
    texts = _texts(declared["modes"], "modes") if declared.get("modes") is not None else default_modes(empty)
    modes = Modes(head, empty.examples.entity.name, tuple(Mode.parse(text) for text in texts),
                  settings["max_length"], settings["k"])
    modes.check(empty)
    if declared.get("fake") is None:
        fakes = (fake_bottom(modes, empty, None, seed=None if seed is None else int(seed)),)
    else:
        fakes = tuple(fake_bottom(modes, empty, text) for text in _texts(declared["fake"], "fake"))
    # the lattice is enumerated after the charge: refuse one too large to enumerate now, at the
    # longest clauses any Option may search (levels up to 4, the naive reduction's max_length)
    for bottom in fakes:
        try:
            check_lattice(bottom, modes, max(settings["max_length"], settings["levels"], 4))
        except ValueError as error:
            raise TableError(str(error), "lower k= or max_length=") from None
    return modes, fakes, settings


def _texts(value: Any, what: str) -> tuple[str, ...]:
    items = (value,) if isinstance(value, str) else value
    if not isinstance(items, (tuple, list)) or not all(isinstance(item, str) for item in items):
        raise TableError(f"{what} must be a text or a list of texts, got {value!r}")
    return tuple(items)


# ---------------------------------------------------------------- Michalski's trains as tables
#: The trains' car table: one row per car, its predicates those of `trains.TRAIN_PREDICATES`.
TRAIN_CARS = FactTable("cars", entity="car", link="has_car", id_column="car_id",
                       unary=("length", "shape", "wall"),
                       predicates=(("load", ("load_shape", "load_count")),))
#: Which roofs are closed: public background knowledge (closed(C), open_car(C)).
TRAIN_ROOFS = Background("roof", (("closed", ("arc", "flat", "peaked", "jagged")), ("open_car", ("none",))),
                         "roofs")


def train_domains() -> dict[str, tuple[str, ...]]:
    """The cars' public domains (`trains.CAR_COLUMNS`)."""
    from jostle.learners.ilp.trains import CAR_COLUMNS

    return {name: domain.values for name, domain in CAR_COLUMNS.items()}


def trains_frames(trains: RelationalDatabase, key: str = "train_id",
                  target: str = "eastbound") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Trains (from `trains.generate_trains`) as two tables: examples (key, a boolean target)
    and cars (key, car_id, one column per car attribute, constants as text). Vectorised."""
    import pandas as pd

    from jostle.learners.ilp.trains import CAR_COLUMNS

    has_car = trains.relations["has_car"]
    examples = pd.DataFrame({key: trains.examples.ids, target: trains.examples.labels})
    cars = pd.DataFrame({key: has_car.columns["train"], "car_id": has_car.columns["car"]})
    for name, domain in CAR_COLUMNS.items():
        cars[name] = np.asarray(domain.values, dtype=object)[has_car.columns[name]]
    return examples, cars


def trains_schema(key: str = "train_id", target: str = "eastbound") -> RelationalSchema:
    """The schema of `trains_frames`: the predicates of `trains.TRAIN_PREDICATES` (and the
    binary predicate of every car column)."""
    domains = train_domains()
    cars = FactTable(TRAIN_CARS.name, TRAIN_CARS.entity, TRAIN_CARS.link, TRAIN_CARS.id_column,
                     tuple(domains), TRAIN_CARS.unary, TRAIN_CARS.predicates)
    return RelationalSchema(key, target, True, tuple(domains.items()), (cars,), (TRAIN_ROOFS,), example="train")


__all__ = ["declare_schema", "schema_for", "relational_database", "default_modes", "search", "DEFAULTS",
           "TRIVIAL_METHODS", "TRAIN_CARS", "TRAIN_ROOFS",
           "train_domains", "trains_frames", "trains_schema"]
