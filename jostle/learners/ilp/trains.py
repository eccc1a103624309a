"""Michalski's east/west trains, generated after Muggleton's public generator (issue 24).

Each train has 2, 3 or 4 cars; each car a length, a shape, a wall, a roof, wheels and a load
(shape and count), drawn with exactly the probabilities of issue 24 (`CAR_COUNTS` ... below).
The trains are held as a `RelationalDatabase`: the examples are the trains (entity "train", ids
0..n-1) and one fact table `has_car`, keyed by the train, with a row per car (entity "car", ids
0..m-1, a train's cars consecutive) and its attributes as coded columns over public domains.
The predicates a theory may use over them are `TRAIN_PREDICATES` (listed, with their meaning,
in `jostle.learners.ilp.theory`). Labels come from a target theory (eastbound = covered).

Generation is seeded (a numpy `Generator`) and vectorised: every attribute of every car is drawn
in one call over all cars, so 30,000 trains take a few hundredths of a second.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from jostle.learners.ilp.relations import (
    Domain, EntityType, Examples, Predicate, Relation, RelationalDatabase)
from jostle.learners.ilp.theory import Theory, covers, parse_theory

TRAIN = EntityType("train")
CAR = EntityType("car")

LENGTH = Domain("length", ("short", "long"))
SHAPE = Domain("shape", ("ellipse", "hexagon", "rectangle", "u_shaped", "bucket"))
WALL = Domain("wall", ("single", "double"))
ROOF = Domain("roof", ("none", "arc", "flat", "peaked", "jagged"))
WHEELS = Domain("wheels", ("2", "3"))
LOAD_SHAPE = Domain("load_shape", ("circle", "diamond", "hexagon", "rectangle", "triangle",
                                   "utriangle"))
LOAD_COUNT = Domain("load_count", ("0", "1", "2", "3"))

# The probabilities of issue 24, as (value, probability) pairs. Each list sums to 1 exactly in
# decimal (.048 + .048 + .524 + .190 + .190 = 1.000; .842 + .105 + .053; .333 + .444 + .223;
# .381 + .048 + .190 + .381; .125 * 3 + .625; .11 + .55 + .11 + .23), but not always exactly in
# binary floating point (the sums can be off by an ulp). `_draw` therefore normalises each list
# by its floating-point sum, and maps a uniform draw through the normalised cumulative sums, so
# the last value takes whatever rounding leaves and no draw falls outside the list.
CAR_COUNTS = ((2, 0.3), (3, 0.3), (4, 0.4))
P_LONG = 0.3
SHORT_SHAPES = (("ellipse", 0.048), ("hexagon", 0.048), ("rectangle", 0.524),
                ("u_shaped", 0.190), ("bucket", 0.190))
P_DOUBLE = 0.27  # double walls, on short rectangles only
SHORT_ROOFS = (("none", 0.842), ("flat", 0.105), ("peaked", 0.053))  # short, not ellipse/hexagon
LONG_ROOFS = (("none", 0.333), ("flat", 0.444), ("jagged", 0.223))
LONG_WHEELS = (("2", 0.56), ("3", 0.44))  # short cars have 2 wheels
SHORT_LOADS = (("circle", 0.381), ("diamond", 0.048), ("rectangle", 0.190), ("triangle", 0.381))
SHORT_LOAD_COUNTS = (("1", 0.952), ("2", 0.048))
LONG_LOADS = (("circle", 0.125), ("hexagon", 0.125), ("utriangle", 0.125), ("rectangle", 0.625))
LONG_LOAD_COUNTS = (("0", 0.11), ("1", 0.55), ("2", 0.11), ("3", 0.23))

CAR_COLUMNS: dict[str, Domain] = {
    "length": LENGTH, "shape": SHAPE, "wall": WALL, "roof": ROOF, "wheels": WHEELS,
    "load_shape": LOAD_SHAPE, "load_count": LOAD_COUNT,
}


def _car_predicates() -> dict[str, Predicate]:
    """The predicates a theory over trains may use (their meanings are in theory's docstring)."""
    def test(name: str, column: str, values: tuple[str, ...], meaning: str) -> Predicate:
        return Predicate(name, "has_car", ("car",), ((column, values),), meaning)

    predicates = [
        Predicate("has_car", "has_car", ("train", "car"), (), "train T has car C"),
        test("short", "length", ("short",), "car C is short"),
        test("long", "length", ("long",), "car C is long"),
        *(test(shape, "shape", (shape,), f"C's shape is {shape}") for shape in SHAPE.values),
        Predicate("shape", "has_car", ("car", "shape"), (), "C's shape is S"),
        test("double", "wall", ("double",), "C has double walls"),
        test("closed", "roof", tuple(r for r in ROOF.values if r != "none"), "C has a roof"),
        test("open_car", "roof", ("none",), "C has no roof"),
        Predicate("roof", "has_car", ("car", "roof"), (), "C's roof is R"),
        Predicate("wheels", "has_car", ("car", "wheels"), (), "C has N wheels"),
        Predicate("load", "has_car", ("car", "load_shape", "load_count"), (),
                  "C carries N loads of shape S"),
    ]
    return {predicate.name: predicate for predicate in predicates}


TRAIN_PREDICATES: dict[str, Predicate] = _car_predicates()

#: The default target: a train is eastbound if it has a short closed car (3 atoms).
DEFAULT_TARGET = "eastbound(T) :- has_car(T, C), short(C), closed(C)."


def _draw(rng: np.random.Generator, table: Sequence[tuple[object, float]], size: int) -> np.ndarray:
    """Indices into `table`, drawn with its probabilities (normalised by their sum), vectorised."""
    cumulative = np.cumsum([probability for _, probability in table])
    cumulative /= cumulative[-1]
    return np.minimum(np.searchsorted(cumulative, rng.random(size), side="right"), len(table) - 1)


def _codes(domain: Domain, table: Sequence[tuple[str, float]]) -> np.ndarray:
    """The domain codes of a probability table's values, for mapping `_draw`'s indices."""
    return domain.codes([value for value, _ in table])


def database(cars: Mapping[str, np.ndarray], car_counts: np.ndarray,
             labels: np.ndarray | None = None) -> RelationalDatabase:
    """The trains database from coded car columns (a train's cars consecutive, in train order).

    Args:
        cars: Column name (`CAR_COLUMNS`) -> int64 codes, one per car.
        car_counts: The number of cars of each train.
        labels: The trains' labels (all negative when not given).
    """
    n_trains, n_cars = len(car_counts), int(np.sum(car_counts))
    columns = {"train": np.repeat(np.arange(n_trains, dtype=np.int64), car_counts),
               "car": np.arange(n_cars, dtype=np.int64),
               **{name: np.asarray(cars[name], dtype=np.int64) for name in CAR_COLUMNS}}
    types = {"train": TRAIN, "car": CAR, **CAR_COLUMNS}
    has_car = Relation("has_car", columns, types, key="train")
    labels = np.zeros(n_trains, dtype=bool) if labels is None else np.asarray(labels, dtype=bool)
    examples = Examples(TRAIN, np.arange(n_trains, dtype=np.int64), labels)
    return RelationalDatabase(examples, {"train": n_trains, "car": n_cars}, {"has_car": has_car},
                              TRAIN_PREDICATES)


def from_cars(trains: Sequence[Sequence[Mapping[str, str]]],
              labels: Sequence[bool] | None = None) -> RelationalDatabase:
    """A trains database from readable cars, for small hand-built examples.

    Args:
        trains: Each train a list of cars; each car a mapping from `CAR_COLUMNS` names to
            constants. Missing attributes default to a short, open, single-walled rectangle with
            2 wheels and one circle.
        labels: The trains' labels (all negative when not given).
    """
    default = {"length": "short", "shape": "rectangle", "wall": "single", "roof": "none",
               "wheels": "2", "load_shape": "circle", "load_count": "1"}
    unknown = {name for train in trains for car in train for name in car} - set(CAR_COLUMNS)
    if unknown:
        raise KeyError(f"unknown car attribute(s) {sorted(unknown)}; known: {list(CAR_COLUMNS)}")
    flat = [{**default, **car} for train in trains for car in train]
    columns = {name: np.array([domain.code(car[name]) for car in flat], dtype=np.int64)
               for name, domain in CAR_COLUMNS.items()}
    counts = np.array([len(train) for train in trains], dtype=np.int64)
    return database(columns, counts, None if labels is None else np.asarray(labels, dtype=bool))


def schema() -> RelationalDatabase:
    """An empty trains database: the schema a theory over trains is checked against."""
    return from_cars([])


def parse_target(text: str) -> Theory:
    """Parse a theory over the trains' predicates (raises `TheoryError` on a bad text)."""
    return parse_theory(text, schema())


def generate_trains(n: int, seed: int | np.random.Generator = 0,
                    target: str | Theory | None = DEFAULT_TARGET) -> RelationalDatabase:
    """Generate n trains with the probabilities of issue 24, labelled by a target theory.

    Args:
        n: The number of trains.
        seed: A seed or a numpy Generator (the draws are reproducible from a seed).
        target: The target theory (text or parsed); a train is eastbound (positive) when the
            target covers it. None leaves every train negative.

    Returns:
        The trains database; `class_balance` gives its fraction of eastbound trains.
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    car_counts = np.array([count for count, _ in CAR_COUNTS])[_draw(rng, CAR_COUNTS, n)]
    m = int(car_counts.sum())
    long = rng.random(m) < P_LONG
    rectangle = SHAPE.code("rectangle")
    shape = np.where(long, rectangle, _codes(SHAPE, SHORT_SHAPES)[_draw(rng, SHORT_SHAPES, m)])
    double = ~long & (shape == rectangle) & (rng.random(m) < P_DOUBLE)
    short_roof = _codes(ROOF, SHORT_ROOFS)[_draw(rng, SHORT_ROOFS, m)]
    short_roof = np.where(shape == SHAPE.code("ellipse"), ROOF.code("arc"), short_roof)
    short_roof = np.where(shape == SHAPE.code("hexagon"), ROOF.code("flat"), short_roof)
    roof = np.where(long, _codes(ROOF, LONG_ROOFS)[_draw(rng, LONG_ROOFS, m)], short_roof)
    wheels = np.where(long, _codes(WHEELS, LONG_WHEELS)[_draw(rng, LONG_WHEELS, m)],
                      WHEELS.code("2"))
    load_shape = np.where(long, _codes(LOAD_SHAPE, LONG_LOADS)[_draw(rng, LONG_LOADS, m)],
                          _codes(LOAD_SHAPE, SHORT_LOADS)[_draw(rng, SHORT_LOADS, m)])
    load_count = np.where(
        long, _codes(LOAD_COUNT, LONG_LOAD_COUNTS)[_draw(rng, LONG_LOAD_COUNTS, m)],
        _codes(LOAD_COUNT, SHORT_LOAD_COUNTS)[_draw(rng, SHORT_LOAD_COUNTS, m)])
    cars = {"length": long.astype(np.int64), "shape": shape, "wall": double.astype(np.int64),
            "roof": roof, "wheels": wheels, "load_shape": load_shape, "load_count": load_count}
    trains = database(cars, car_counts)
    if target is None:
        return trains
    theory = parse_target(target) if isinstance(target, str) else target
    return trains.with_labels(covers(theory, trains))


def class_balance(trains: RelationalDatabase) -> float:
    """The fraction of eastbound (positive) trains."""
    return trains.examples.positive_fraction()
