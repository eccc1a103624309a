"""A relational example database held as columnar numpy arrays.

The data an ILP learner reads: examples of a target predicate (their ids and labels) and fact
tables keyed by the example each fact belongs to, so that removing one example and all its facts
(the `entity(example id)` unit of issue 24) is removing the rows with that key.

    Domain          a public categorical domain: its constants, coded 0..size-1
    EntityType      a kind of entity (train, car); its ids are dense integers 0..count-1
    Relation        a stored fact table: named, typed columns of equal length and a key column
    Predicate       a logical predicate read off a relation: which columns are its arguments and
                    which fixed tests (column in a set of constants) select its rows
    Examples        example ids (entities of one type) and boolean labels
    RelationalDatabase
                    the examples, the entity counts, the relations and the predicate vocabulary

Every array is columnar: a query filters whole columns and scatters with `np.bincount`, never a
Python loop per example or fact (`Predicate.rows`, `entity_mask`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np


@dataclass(frozen=True)
class Domain:
    """A public categorical domain: constants as written in Prolog, coded by their position.

    Attributes:
        name: The domain's name (e.g. "shape").
        values: Its constants in code order (e.g. ("ellipse", "hexagon", ...)); numbers as text.
    """

    name: str
    values: tuple[str, ...]

    def code(self, value: str) -> int:
        """The code of a constant.

        Raises:
            KeyError: If the constant is not in the domain (with the domain's constants named).
        """
        try:
            return self.values.index(value)
        except ValueError:
            raise KeyError(f"{value!r} is not a constant of the public domain {self.name!r} "
                           f"(its constants: {', '.join(self.values)})") from None

    def codes(self, values: tuple[str, ...] | list[str]) -> np.ndarray:
        """The codes of several constants, as an int64 array."""
        return np.array([self.code(value) for value in values], dtype=np.int64)


@dataclass(frozen=True)
class EntityType:
    """A kind of entity (e.g. train, car). Its ids are the dense integers 0..count-1."""

    name: str


ArgType = Domain | EntityType


@dataclass(frozen=True, eq=False)
class Relation:
    """A stored fact table: typed columns of equal length, one fact per row.

    Attributes:
        name: The table's name.
        columns: Column name -> int64 array (entity ids, or codes of the column's domain).
        types: Column name -> its type (an `EntityType` or a `Domain`).
        key: The column holding the id of the example each fact belongs to.
    """

    name: str
    columns: Mapping[str, np.ndarray]
    types: Mapping[str, ArgType]
    key: str

    def __post_init__(self) -> None:
        if set(self.columns) != set(self.types):
            raise ValueError(f"relation {self.name!r}: columns and types name different columns")
        if self.key not in self.columns:
            raise ValueError(f"relation {self.name!r}: key column {self.key!r} is not a column")
        lengths = {len(column) for column in self.columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"relation {self.name!r}: columns of different lengths {sorted(lengths)}")

    def __len__(self) -> int:
        return len(self.columns[self.key])


@dataclass(frozen=True)
class Predicate:
    """A predicate read off a relation: `name(arg_1, ..., arg_n)`.

    Attributes:
        name: The predicate's name in Prolog text (e.g. "short", "has_car", "load").
        relation: The name of the relation it reads.
        args: The relation's columns that are its arguments, in order.
        where: Fixed tests, (column, allowed constants): a row is a fact of the predicate when
            each tested column's value is one of its constants (e.g. short(C) reads the rows of
            has_car whose length is "short").
        meaning: One line saying what the predicate means (for docs and error messages).
    """

    name: str
    relation: str
    args: tuple[str, ...]
    where: tuple[tuple[str, tuple[str, ...]], ...] = ()
    meaning: str = ""

    @property
    def arity(self) -> int:
        """The number of arguments."""
        return len(self.args)

    def signature(self) -> str:
        """`name(col, ...)`: the predicate with its argument columns, for messages."""
        return f"{self.name}({', '.join(self.args)})"

    def rows(self, relation: Relation, constants: Mapping[int, str] | None = None) -> np.ndarray:
        """The boolean mask of the relation's rows that are facts of the predicate.

        Args:
            relation: The relation the predicate reads.
            constants: Argument position -> constant it is bound to (a test on that column).

        Returns:
            A boolean array with one entry per row of the relation.
        """
        mask = np.ones(len(relation), dtype=bool)
        tests = list(self.where) + [(self.args[i], (value,)) for i, value in (constants or {}).items()]
        for column, values in tests:
            domain = relation.types[column]
            if not isinstance(domain, Domain):
                raise TypeError(f"{self.name}: column {column!r} holds entities, not constants")
            mask &= np.isin(relation.columns[column], domain.codes(list(values)))
        return mask


def entity_mask(ids: np.ndarray, count: int) -> np.ndarray:
    """A boolean mask over entities 0..count-1, True for each id that occurs in `ids`.

    This is the vectorised "exists" of a query: `np.bincount` scatters all ids at once.
    """
    if count == 0:
        return np.zeros(0, dtype=bool)
    return np.bincount(ids, minlength=count)[:count] > 0


@dataclass(frozen=True, eq=False)
class Examples:
    """The examples of a target predicate.

    Attributes:
        entity: The entity type of the examples (e.g. train).
        ids: Their entity ids (unique, int64).
        labels: True for a positive example, False for a negative one.
    """

    entity: EntityType
    ids: np.ndarray
    labels: np.ndarray

    def __post_init__(self) -> None:
        if self.ids.shape != self.labels.shape:
            raise ValueError("example ids and labels differ in length")
        if len(np.unique(self.ids)) != len(self.ids):
            raise ValueError("example ids are not unique")

    def __len__(self) -> int:
        return len(self.ids)

    def positive_fraction(self) -> float:
        """The fraction of positive examples (the class balance); nan without examples."""
        return float(np.mean(self.labels)) if len(self.labels) else float("nan")


@dataclass(frozen=True, eq=False)
class RelationalDatabase:
    """Examples, fact tables keyed by example id, and the predicates read off them.

    Attributes:
        examples: The examples (ids and labels).
        counts: Entity type name -> number of entities (their ids are 0..count-1).
        relations: Relation name -> relation; every relation's key column holds example ids.
        predicates: Predicate name -> predicate, the vocabulary a theory may use.
    """

    examples: Examples
    counts: Mapping[str, int]
    relations: Mapping[str, Relation]
    predicates: Mapping[str, Predicate] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for relation in self.relations.values():
            if relation.types[relation.key] != self.examples.entity:
                raise ValueError(f"relation {relation.name!r} is not keyed by the examples' "
                                 f"entity {self.examples.entity.name!r}")
            for column, kind in relation.types.items():
                values = relation.columns[column]
                bound = self.counts[kind.name] if isinstance(kind, EntityType) else len(kind.values)
                if len(values) and (values.min() < 0 or values.max() >= bound):
                    raise ValueError(f"relation {relation.name!r}: column {column!r} out of range")
                if kind == self.examples.entity and column != relation.key:
                    raise ValueError(f"relation {relation.name!r}: column {column!r} names other "
                                     f"examples; a fact may be about its own example only "
                                     f"(the entity unit removes an example with its facts)")
        self._check_owned_entities()
        for predicate in self.predicates.values():
            relation = self.relations.get(predicate.relation)
            if relation is None:
                raise ValueError(f"predicate {predicate.name!r} reads an unknown relation "
                                 f"{predicate.relation!r}")
            missing = [c for c in predicate.args + tuple(c for c, _ in predicate.where)
                       if c not in relation.columns]
            if missing:
                raise ValueError(f"predicate {predicate.name!r}: no column {missing[0]!r} "
                                 f"in relation {predicate.relation!r}")

    def _check_owned_entities(self) -> None:
        """Refuse an entity (a car) that occurs under two examples' keys.

        The entity unit removes one example and every fact keyed by it. If a car's rows sat
        under two trains, removing one train would change the other's coverage (a test on the
        car reads all its rows), and the sensitivity of the counts (Theorem 4) and the
        1-stability of the covering loop would fail. Facts shared by several examples are
        background knowledge and must be public. Vectorised: per entity type, the distinct
        (id, key) pairs must be as many as the distinct ids.
        """
        pairs: dict[str, list[np.ndarray]] = {}
        for relation in self.relations.values():
            key = relation.columns[relation.key]
            for column, kind in relation.types.items():
                if isinstance(kind, EntityType) and kind != self.examples.entity:
                    pairs.setdefault(kind.name, []).append(
                        np.stack([relation.columns[column], key], axis=1))
        for name, stacks in pairs.items():
            both = np.unique(np.concatenate(stacks), axis=0)
            ids, counts = np.unique(both[:, 0], return_counts=True)
            if len(ids) != len(both):
                shared = int(ids[np.argmax(counts > 1)])
                raise ValueError(f"{name} {shared} belongs to more than one example: a private "
                                 f"fact shared by several examples breaks the entity unit; "
                                 f"key every {name} by one example, or declare the shared facts "
                                 f"as public background knowledge")

    def count(self, entity: EntityType) -> int:
        """The number of entities of a type."""
        return int(self.counts[entity.name])

    def arg_type(self, predicate: Predicate, position: int) -> ArgType:
        """The type of a predicate's argument."""
        return self.relations[predicate.relation].types[predicate.args[position]]

    def with_labels(self, labels: np.ndarray) -> RelationalDatabase:
        """The same database with new example labels (e.g. from a target theory)."""
        examples = Examples(self.examples.entity, self.examples.ids, np.asarray(labels, dtype=bool))
        return RelationalDatabase(examples, self.counts, self.relations, self.predicates)
