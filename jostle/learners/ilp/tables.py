"""A relational database for ILP built from tables: examples, private facts, public background.

What a data owner has is tables, not Prolog facts. `RelationalSchema` declares, from PUBLIC
information only, how tables become the `relations.RelationalDatabase` the learners read:

    the examples table   one row per example: its id (the key column, the privacy unit's key)
                         and its label column (`target`; `positive` is the label value of a
                         positive example); its other declared categorical columns are facts
                         about the example itself (tests on the head variable)
    private fact tables  `FactTable`: each keyed by the example id. A table with an `entity`
                         introduces a new entity per row (or per value of its `id_column` within
                         an example), e.g. one row per car: a link predicate has_car(T, C) and
                         its categorical columns as predicates on C, with constants from the
                         columns' public domains; a table without an entity holds facts about
                         the example itself (several rows per example allowed)
    public background    `Background`: public facts about constants shared by many examples,
                         e.g. which roofs are closed, or which shapes are polygons; each gives a
                         derived unary predicate (`closed(C)`: the car's roof is one of the
                         listed constants) through `relations.Predicate.where`

Predicates, by default, for a fact table with entity E and categorical column c:
`link(Example, E)` (default `has_<E>`), the binary `c(E, #c)`; with `unary=(c, ...)` one unary
predicate per constant v of c, named v (`short(C)`); with `predicates={name: (c1, c2)}` one
predicate over several columns (`load(C, #load_shape, #load_count)`).

Privacy. Under the `entity(example id)` unit a neighbour removes one example and all its facts
(Zeng et al.'s footnote 1): every private row is keyed by the example it belongs to, so every
coverage count moves by at most 1. Facts shared by several examples (background knowledge)
cannot be keyed by one example, so they must be public: they enter only as `Background`
predicates over public constants, never as private rows. A private fact table without the
example's key column is refused (`TableError`, with a fix). Every domain, name, predicate and
type comes from the declarations, never from the rows: the schema database (`empty()`), which
the modes, the fake example and the Theorem 3 report are checked against, reads no data.

An entity belongs to one example: entities are told apart by (example id, `id_column` value)
pairs, so the same car id under two trains is two cars, never one car shared by two examples
(which `relations.RelationalDatabase` refuses: removing one example would change another's
facts). Building is vectorised: each column is coded against its domain in one `pandas.Categorical`,
example keys are mapped with one `Index.get_indexer`, entity ids with one `factorize`; no
Python loop runs per row.

Rows that the declarations cannot place (a fact whose example is not in the examples table, a
value outside its declared domain, a missing value) are errors when `strict` (the Python API:
the data's curator runs it, as the estimators refuse a value outside its declaration), and are
dropped row by row otherwise (the language, where the schema already conformed every cell and
an error would depend on private rows).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from jostle.learners.ilp.relations import (
    Domain, EntityType, Examples, Predicate, Relation, RelationalDatabase)

if TYPE_CHECKING:  # pandas is imported where a frame is read, not at start-up
    import pandas as pd

#: A name usable as a Prolog predicate, a mode type or a constant.
_NAME = re.compile(r"[a-z][A-Za-z0-9_]*\Z")
#: A Prolog constant: a name or a whole number.
_CONSTANT = re.compile(r"([a-z][A-Za-z0-9_]*|\d+)\Z")


class TableError(ValueError):
    """A declaration that cannot make a relational database, with how to fix it.

    Attributes:
        message: What is wrong (names only public declarations).
        hint: How to fix it.
    """

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(f"{message} ({hint})" if hint else message)
        self.message = message
        self.hint = hint


@dataclass(frozen=True)
class FactTable:
    """A private fact table keyed by the example id, and the predicates it gives.

    Attributes:
        name: The table's name (the relation's name in the database).
        entity: The entity type each row (or each `id_column` value within an example)
            introduces, e.g. "car"; None when the rows are facts about the example itself.
        link: The link predicate's name (default `has_<entity>`); "" for none (a table that
            describes entities another table introduces, which then both need `id_column`).
        id_column: The column naming the entity within its example (None: one entity per row).
        columns: The categorical columns read; `schema_for` (and `relational_database`) fill
            None with every declared column the table has but the key and the id; a
            `RelationalSchema` reads none of a table whose columns are None.
        unary: Columns whose each constant v becomes a unary predicate v(E).
        predicates: Predicates over several columns: (name, (column, ...)), e.g.
            ("load", ("load_shape", "load_count")) gives load(C, #load_shape, #load_count).
    """

    name: str
    entity: str | None = None
    link: str | None = None
    id_column: str | None = None
    columns: tuple[str, ...] | None = None
    unary: tuple[str, ...] = ()
    predicates: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def link_name(self) -> str | None:
        """The link predicate's name, or None (no entity, or `link=""`)."""
        if self.entity is None or self.link == "":
            return None
        return self.link or f"has_{self.entity}"


@dataclass(frozen=True)
class Background:
    """Public facts about the constants of one column: derived unary predicates.

    Attributes:
        column: The categorical column whose constants it describes (e.g. "roof").
        predicates: (name, constants): name(E) holds when E's column value is one of the
            constants, e.g. ("closed", ("arc", "flat", "peaked", "jagged")).
        name: Where it came from, for messages (e.g. the public table's name).
    """

    column: str
    predicates: tuple[tuple[str, tuple[Any, ...]], ...]
    name: str = "background"

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, name: str = "background") -> Background:
        """Read a PUBLIC background table (its rows are public facts, read freely).

        One column (named as a categorical column, e.g. "roof") lists the constants of ONE
        predicate named `name` (e.g. a table "closed" listing arc, flat, peaked, jagged). Two
        columns (the categorical column, then a property column) give one predicate per
        property value, holding for the constants listed with it (e.g. a table of shapes and
        their kind: polygon(C), curved(C)).

        Raises:
            TableError: The table has no column, or more than two.
        """
        columns = list(frame.columns)
        if len(columns) == 1:
            values = tuple(dict.fromkeys(frame[columns[0]].tolist()))
            return cls(str(columns[0]), ((name, values),), name)
        if len(columns) == 2:
            column, kind = columns
            groups: dict[str, list[Any]] = {}
            for value, property_value in zip(frame[column].tolist(), frame[kind].tolist()):
                groups.setdefault(str(property_value), []).append(value)
            return cls(str(column), tuple((key, tuple(dict.fromkeys(v))) for key, v in groups.items()), name)
        raise TableError(f"the background table '{name}' has {len(columns)} columns",
                         "give one column of constants (a predicate named as the table), or two: "
                         "the constants' column and a property whose values name the predicates")


@dataclass(frozen=True)
class RelationalSchema:
    """How tables become a relational database: public declarations only (see the module).

    Attributes:
        key: The examples' id column, which every private fact table has (the unit's key).
        target: The examples table's label column.
        positive: The label value of a positive example.
        domains: Column name -> its public constants (every categorical column read).
        facts: The fact tables.
        background: The public background predicates.
        example: The examples' entity type name in modes (default: the key without "_id").
        head: The target predicate's name (default: the target column's name).
        example_columns: Categorical columns of the examples table read as tests on the head.
        example_unary: Of those, the columns whose constants become unary predicates.
        examples_name: The examples table's name (the relation of the example columns).
    """

    key: str
    target: str
    positive: Any
    domains: tuple[tuple[str, tuple[Any, ...]], ...]
    facts: tuple[FactTable, ...] = ()
    background: tuple[Background, ...] = ()
    example: str = ""
    head: str = ""
    example_columns: tuple[str, ...] = ()
    example_unary: tuple[str, ...] = ()
    examples_name: str = "examples"
    _predicates: dict[str, Predicate] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.example:
            object.__setattr__(self, "example", _default_entity(self.key))
        if not self.head:
            object.__setattr__(self, "head", self.target)
        self._predicates.update(self._check())

    # ------------------------------------------------------------------ the declarations
    @property
    def example_type(self) -> EntityType:
        """The examples' entity type."""
        return EntityType(self.example)

    def domain(self, column: str) -> Domain:
        """A column's public domain, its constants as Prolog text."""
        values = dict(self.domains).get(column)
        if values is None:
            raise TableError(f"the column '{column}' has no declared domain",
                             "declare its public constants (a categorical column)")
        return Domain(column, tuple(str(value) for value in values))

    @property
    def predicates(self) -> dict[str, Predicate]:
        """The predicate vocabulary, by name (public: from the declarations)."""
        return dict(self._predicates)

    def _check(self) -> dict[str, Predicate]:
        """Check every declaration and make the predicates (refusing with a fix)."""
        _name(self.example, "the examples' entity type", "name it with example=")
        _name(self.head, "the target predicate", "name it with head=")
        domains = dict(self.domains)
        for column, values in domains.items():
            _name(column, f"the column '{column}' (a type in modes)", "rename the column")
            for value in values:
                if not _CONSTANT.match(str(value)):
                    raise TableError(f"the constant {value!r} of column '{column}' is not a Prolog constant "
                                     "(a lower-case name or a whole number)",
                                     "declare the column's categories as lower-case names, e.g. 'u_shaped'")
        entities = {fact.entity for fact in self.facts if fact.entity is not None}
        for entity in entities:
            _name(entity, f"the entity type '{entity}'", "name entities in lower case, e.g. entity='car'")
            if entity == self.example or entity in domains:
                raise TableError(f"the entity type '{entity}' is also the examples' type or a column",
                                 "give each entity type its own name")
            tables = [fact for fact in self.facts if fact.entity == entity]
            if len(tables) > 1 and any(fact.id_column is None for fact in tables):
                raise TableError(f"several tables hold the entity '{entity}' "
                                 f"({', '.join(fact.name for fact in tables)})",
                                 "give each of them the id_column naming the entity within its example")
        names = [fact.name for fact in self.facts] + [self.examples_name]
        if len(set(names)) != len(names):
            raise TableError(f"two tables share a name among {names}", "give each table its own name")
        found: dict[str, tuple[Predicate, str]] = {}

        def add(predicate: Predicate, origin: str) -> None:
            _name(predicate.name, f"the predicate {predicate.name!r} ({origin})",
                  "rename it, or leave the column out of unary=")
            if predicate.name in found or predicate.name == self.head:
                other = found[predicate.name][1] if predicate.name in found else "the target predicate"
                raise TableError(f"two predicates are named '{predicate.name}': {other} and {origin}",
                                 "rename one (a link with link=, a column, or a background predicate), "
                                 "or leave the column out of unary=")
            found[predicate.name] = (predicate, origin)

        example = self.example
        for column in self.example_columns:
            self.domain(column)
            add(Predicate(column, self.examples_name, (example, column), (), f"{example}'s {column} is V"),
                f"column '{column}' of '{self.examples_name}'")
        for column in self.example_unary:
            self._unary(self.examples_name, example, column, self.example_columns, add)
        for fact in self.facts:
            subject = fact.entity or example
            columns = self.fact_columns(fact)
            if fact.link_name is not None:
                add(Predicate(fact.link_name, fact.name, (example, subject), (), f"{example} has {subject}"),
                    f"the link of '{fact.name}'")
            for column in columns:
                add(Predicate(column, fact.name, (subject, column), (), f"{subject}'s {column} is V"),
                    f"column '{column}' of '{fact.name}'")
            for column in fact.unary:
                self._unary(fact.name, subject, column, columns, add)
            for name, group in fact.predicates:
                missing = [column for column in group if column not in columns]
                if missing or not group:
                    raise TableError(f"the predicate '{name}' of '{fact.name}' reads {list(group)}, "
                                     f"which are not all its categorical columns {list(columns)}",
                                     "name columns the table reads")
                add(Predicate(name, fact.name, (subject, *group), (), f"{subject}'s {', '.join(group)}"),
                    f"predicate '{name}' of '{fact.name}'")
        for background in self.background:
            holders = [(fact.name, fact.entity or example) for fact in self.facts
                       if background.column in self.fact_columns(fact)]
            if background.column in self.example_columns:
                holders.append((self.examples_name, example))
            if len(holders) != 1:
                where = ", ".join(name for name, _ in holders) or "no table"
                raise TableError(f"the background '{background.name}' describes the column '{background.column}', "
                                 f"read by {where}",
                                 "describe a categorical column that exactly one table reads")
            table, subject = holders[0]
            domain = self.domain(background.column)
            for name, constants in background.predicates:
                texts = tuple(str(value) for value in constants)
                for text in texts:
                    if text not in domain.values:
                        raise TableError(f"the background '{background.name}' lists {text!r}, not a constant of "
                                         f"'{background.column}' (its constants: {', '.join(domain.values)})",
                                         "list constants of the column's declared domain")
                add(Predicate(name, table, (subject,), ((background.column, texts),),
                              f"{subject}'s {background.column} is one of {', '.join(texts)} (public)"),
                    f"background '{background.name}'")
        return {name: predicate for name, (predicate, _) in found.items()}

    def _unary(self, table: str, subject: str, column: str, columns: Sequence[str], add: Any) -> None:
        if column not in columns:
            raise TableError(f"unary= names '{column}', not a categorical column '{table}' reads",
                             f"its columns are {list(columns)}")
        for value in self.domain(column).values:
            if not _NAME.match(value):
                raise TableError(f"the constant {value!r} of '{column}' cannot name a unary predicate",
                                 "leave the column out of unary= (use the binary predicate), or rename it")
            add(Predicate(value, table, (subject,), ((column, (value,)),), f"{subject}'s {column} is {value}"),
                f"unary constant '{value}' of column '{column}' of '{table}'")

    def fact_columns(self, fact: FactTable) -> tuple[str, ...]:
        """The categorical columns a fact table reads (declared ones, minus the key and the id)."""
        if fact.columns is not None:
            for column in fact.columns:
                self.domain(column)
            return tuple(fact.columns)
        return ()

    # ------------------------------------------------------------------ databases
    def empty(self) -> RelationalDatabase:
        """The schema as a database without rows: what modes, theories and fake examples are
        checked against, read from the declarations alone."""
        import pandas as pd

        examples = pd.DataFrame({self.key: [], self.target: []})
        facts = {fact.name: pd.DataFrame({column: [] for column in self._fact_frame_columns(fact)})
                 for fact in self.facts}
        for column in self.example_columns:
            examples[column] = []
        return self.build(examples, facts)

    def _fact_frame_columns(self, fact: FactTable) -> list[str]:
        extra = [fact.id_column] if fact.id_column else []
        return [self.key, *extra, *self.fact_columns(fact)]

    def build(self, examples: pd.DataFrame, facts: Mapping[str, pd.DataFrame], *,
              strict: bool = True) -> RelationalDatabase:
        """The relational database of the tables, vectorised.

        Args:
            examples: The examples table (the key, the target column, `example_columns`).
            facts: Each fact table's rows by its name (every `FactTable` given).
            strict: Refuse rows the declarations cannot place (the Python API); False drops
                them row by row (see the module docstring).

        Raises:
            TableError: A table or a column is missing (the key above all), or, when strict,
                a duplicate example id, a fact about an unknown example, a value outside its
                domain or a missing value.
        """
        import pandas as pd

        self._require(examples, self.examples_name, [self.key, self.target, *self.example_columns])
        unknown = sorted(set(facts) - {fact.name for fact in self.facts})
        if unknown:
            raise TableError(f"no fact table is declared for {unknown}", "declare it as a FactTable")
        keys = examples[self.key]
        if keys.duplicated().any():
            if strict:
                raise TableError(f"the examples table '{self.examples_name}' repeats an id in '{self.key}'",
                                 "give each example one row")
            examples = examples[~keys.duplicated()]
        examples = examples.reset_index(drop=True)
        example_codes = self._codes(examples, self.example_columns, self.examples_name, strict)
        kept = np.ones(len(examples), dtype=bool)
        for codes in example_codes.values():
            kept &= codes >= 0
        examples = examples[kept].reset_index(drop=True)
        example_codes = {column: codes[kept] for column, codes in example_codes.items()}
        n = len(examples)
        index = pd.Index(examples[self.key])
        labels = (examples[self.target] == self.positive).to_numpy(dtype=bool)
        example = self.example_type
        relations: dict[str, Relation] = {}
        ids = np.arange(n, dtype=np.int64)
        if self.example_columns:
            columns = {self.example: ids, **example_codes}
            types = {self.example: example, **{c: self.domain(c) for c in self.example_columns}}
            relations[self.examples_name] = Relation(self.examples_name, columns, types, key=self.example)
        placed: dict[str, tuple[pd.DataFrame, np.ndarray, dict[str, np.ndarray]]] = {}
        for fact in self.facts:
            if fact.name not in facts:
                raise TableError(f"the fact table '{fact.name}' is declared but not given", "pass its rows")
            frame = facts[fact.name]
            self._require(frame, fact.name, self._fact_frame_columns(fact))
            owners = index.get_indexer(frame[self.key])
            codes = self._codes(frame, self.fact_columns(fact), fact.name, strict)
            ok = owners >= 0
            if strict and not ok.all():
                raise TableError(f"the fact table '{fact.name}' holds facts about ids of '{self.key}' that are not "
                                 "examples", "give every example a row in the examples table, or drop its facts")
            for column, column_codes in codes.items():
                ok &= column_codes >= 0
            if fact.id_column:
                ok &= frame[fact.id_column].notna().to_numpy()
            rows = np.flatnonzero(ok)
            placed[fact.name] = (frame.iloc[rows], owners[rows].astype(np.int64),
                                 {column: column_codes[rows] for column, column_codes in codes.items()})
        counts = {self.example: n}
        entity_ids = self._entity_ids(placed, counts)
        for fact in self.facts:
            frame, owners, codes = placed[fact.name]
            columns = {self.example: owners, **codes}
            types: dict[str, Any] = {self.example: example, **{c: self.domain(c) for c in codes}}
            if fact.entity is not None:
                columns[fact.entity] = entity_ids[fact.name]
                types[fact.entity] = EntityType(fact.entity)
            relations[fact.name] = Relation(fact.name, columns, types, key=self.example)
        return RelationalDatabase(Examples(example, ids, labels), counts, relations, self.predicates)

    def _entity_ids(self, placed: Mapping[str, tuple[pd.DataFrame, np.ndarray, Any]],
                    counts: dict[str, int]) -> dict[str, np.ndarray]:
        """Dense ids 0..m-1 of each entity type (one factorize over all its tables), by table."""
        import pandas as pd

        out: dict[str, np.ndarray] = {}
        for entity in dict.fromkeys(fact.entity for fact in self.facts if fact.entity is not None):
            tables = [fact for fact in self.facts if fact.entity == entity]
            if tables[0].id_column is None:  # one table, one entity per row
                out[tables[0].name] = np.arange(len(placed[tables[0].name][1]), dtype=np.int64)
                counts[entity] = len(out[tables[0].name])
                continue
            owners = np.concatenate([placed[fact.name][1] for fact in tables])
            names = pd.concat([placed[fact.name][0][fact.id_column].astype(object) for fact in tables],
                              ignore_index=True)
            codes, uniques = pd.MultiIndex.from_arrays([owners, names]).factorize()
            counts[entity] = len(uniques)
            start = 0
            for fact in tables:
                size = len(placed[fact.name][1])
                out[fact.name] = codes[start:start + size].astype(np.int64)
                start += size
        return out

    def _codes(self, frame: pd.DataFrame, columns: Sequence[str], table: str,
               strict: bool) -> dict[str, np.ndarray]:
        """Each column's codes under its declared domain (-1 outside it, refused when strict)."""
        import pandas as pd

        out = {}
        for column in columns:
            values = list(dict(self.domains)[column])
            codes = pd.Categorical(frame[column], categories=values).codes.astype(np.int64)
            if strict and (codes < 0).any():
                raise TableError(f"the column '{column}' of '{table}' holds a value outside its declared domain "
                                 f"{values} (or a missing value)", "declare every category the column holds")
            out[column] = codes
        return out

    def _require(self, frame: pd.DataFrame, table: str, columns: Sequence[str]) -> None:
        missing = [column for column in columns if column not in frame.columns]
        if not missing:
            return
        if self.key in missing:
            raise TableError(f"the table '{table}' has no column '{self.key}': a private fact table must be keyed "
                             "by the example id",
                             f"add '{self.key}' (the example each fact belongs to) to '{table}'; facts shared by "
                             "several examples are background knowledge and must be public (background=)")
        raise TableError(f"the table '{table}' has no column(s) {missing}", f"its columns are {list(frame.columns)}")


def _default_entity(key: str) -> str:
    """The examples' type from their key column: "train_id" -> "train"."""
    base = key[:-3] if key.lower().endswith("_id") and len(key) > 3 else key
    return base.lower()


def _name(text: str, what: str, hint: str) -> None:
    if not isinstance(text, str) or not _NAME.match(text):
        raise TableError(f"{what} {text!r} is not a Prolog name (a lower-case letter, then letters, digits, _)",
                         hint)


__all__ = ["TableError", "FactTable", "Background", "RelationalSchema"]
