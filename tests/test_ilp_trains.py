"""Issue 24, first foundation: the trains generator, theories over its predicates, coverage.

The generator's frequencies are checked against the issue's probabilities within 5 binomial
standard errors at a fixed seed (n = 30,000 trains); theories round-trip through Prolog text;
coverage is checked on hand-built trains and against a naive loop per train and car.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from jostle.learners.ilp import theory as theory_module
from jostle.learners.ilp import trains
from jostle.learners.ilp.theory import Const, TheoryError, Var, covers, parse_theory

N_TRAINS = 30_000
SEED = 2024


@pytest.fixture(scope="module")
def cars() -> dict[str, np.ndarray]:
    """The decoded car columns of 30,000 generated trains (values as strings), with car counts."""
    database = trains.generate_trains(N_TRAINS, SEED, target=None)
    columns = database.relations["has_car"].columns
    decoded = {name: np.array(domain.values)[columns[name]]
               for name, domain in trains.CAR_COLUMNS.items()}
    decoded["cars_per_train"] = np.bincount(columns["train"], minlength=N_TRAINS)
    return decoded


def _check_frequencies(values: np.ndarray, table, what: str) -> None:
    """Each value's frequency is within 5 binomial standard errors of its probability."""
    n = len(values)
    assert n > 500, f"{what}: too few draws ({n}) to test"
    assert set(np.unique(values)) <= {str(value) for value, _ in table}, what
    for value, probability in table:
        observed = float(np.mean(values == str(value)))
        tolerance = 5 * np.sqrt(probability * (1 - probability) / n)
        assert abs(observed - probability) <= tolerance, \
            f"{what}: P({value}) = {observed:.4f}, expected {probability} +- {tolerance:.4f} (n={n})"


def test_car_counts_and_lengths(cars):
    _check_frequencies(cars["cars_per_train"].astype(str), trains.CAR_COUNTS, "cars per train")
    _check_frequencies(cars["length"], (("long", 0.3), ("short", 0.7)), "length")


def test_shapes_and_walls(cars):
    short, long = cars["length"] == "short", cars["length"] == "long"
    _check_frequencies(cars["shape"][short], trains.SHORT_SHAPES, "short shapes")
    assert np.all(cars["shape"][long] == "rectangle")
    short_rectangles = short & (cars["shape"] == "rectangle")
    _check_frequencies(cars["wall"][short_rectangles], (("double", 0.27), ("single", 0.73)),
                       "walls of short rectangles")
    assert np.all(cars["wall"][~short_rectangles] == "single")


def test_roofs(cars):
    short = cars["length"] == "short"
    assert np.all(cars["roof"][short & (cars["shape"] == "ellipse")] == "arc")
    assert np.all(cars["roof"][short & (cars["shape"] == "hexagon")] == "flat")
    other = short & ~np.isin(cars["shape"], ["ellipse", "hexagon"])
    _check_frequencies(cars["roof"][other], trains.SHORT_ROOFS, "roofs of other short cars")
    _check_frequencies(cars["roof"][~short], trains.LONG_ROOFS, "roofs of long cars")


def test_wheels_and_loads(cars):
    short = cars["length"] == "short"
    assert np.all(cars["wheels"][short] == "2")
    _check_frequencies(cars["wheels"][~short], trains.LONG_WHEELS, "wheels of long cars")
    _check_frequencies(cars["load_shape"][short], trains.SHORT_LOADS, "loads of short cars")
    _check_frequencies(cars["load_count"][short], trains.SHORT_LOAD_COUNTS, "short load counts")
    _check_frequencies(cars["load_shape"][~short], trains.LONG_LOADS, "loads of long cars")
    _check_frequencies(cars["load_count"][~short], trains.LONG_LOAD_COUNTS, "long load counts")


def test_generator_is_seeded_and_labels_from_target():
    first, second = trains.generate_trains(500, 7), trains.generate_trains(500, 7)
    for name, column in first.relations["has_car"].columns.items():
        assert np.array_equal(column, second.relations["has_car"].columns[name]), name
    assert np.array_equal(first.examples.labels, covers(trains.parse_target(
        trains.DEFAULT_TARGET), first))
    # P(a car is short and closed) = 0.7 * (0.096 + 0.904 * 0.158) = 0.167, so about 43% of
    # trains are eastbound under the default target.
    balance = trains.class_balance(trains.generate_trains(N_TRAINS, SEED))
    assert 0.40 < balance < 0.46


def test_generator_speed():
    trains.generate_trains(1000, 0)
    start = time.perf_counter()
    trains.generate_trains(N_TRAINS, 1)
    assert time.perf_counter() - start < 2.0


ROUND_TRIPS = [
    trains.DEFAULT_TARGET,
    "eastbound(T) :- has_car(T, C), short(C), closed(C).\n"
    "eastbound(T):-has_car(T,C),long(C),load(C, rectangle, 3). % a comment",
    "eastbound(T) :- has_car(T, C), shape(C, u_shaped), roof(C, _), wheels(C, 2).",
    "eastbound(Train) :- has_car(Train, Car), load(Car, Shape, 1), double(Car).",
    "eastbound(T).",
]


@pytest.mark.parametrize("text", ROUND_TRIPS)
def test_parse_print_parse_round_trip(text):
    parsed = trains.parse_target(text)
    printed = parsed.to_prolog()
    assert trains.parse_target(printed) == parsed
    assert trains.parse_target(printed).to_prolog() == printed


def test_printing_is_prolog():
    parsed = trains.parse_target("eastbound(T):-has_car(T,C),short(C),closed(C).")
    assert str(parsed) == "eastbound(T) :- has_car(T, C), short(C), closed(C)."
    assert parsed.clauses[0].body[0].args == (Var("T"), Var("C"))
    assert trains.parse_target("e(T) :- has_car(T, C), wheels(C, 3).").clauses[0].body[1].args[1] \
        == Const("3")


def test_coverage_of_hand_built_trains():
    database = trains.from_cars([
        [{"length": "short", "roof": "flat"}, {"length": "long", "roof": "none"}],  # short closed
        [{"length": "short", "roof": "none"}, {"length": "long", "roof": "jagged"}],  # not
        [{"length": "long", "roof": "flat"}],  # closed but long
        [{"length": "short", "shape": "ellipse", "roof": "arc"}],  # short closed (arc)
        [],  # no cars
    ])
    target = trains.parse_target(trains.DEFAULT_TARGET)
    assert covers(target, database).tolist() == [True, False, False, True, False]
    everything = trains.parse_target("eastbound(T).")
    assert covers(everything, database).tolist() == [True] * 5
    loads = trains.parse_target("eastbound(T) :- has_car(T, C), load(C, circle, _), long(C).")
    assert covers(loads, database).tolist() == [True, True, True, False, False]


def _naive_atom(atom, car: dict[str, str]) -> bool:
    """An atom on the car variable, by hand from the predicates' meanings (not from the code)."""
    name, args = atom.predicate, [a.value if isinstance(a, Const) else None for a in atom.args]

    def is_(value: str, wanted: str | None) -> bool:
        return wanted is None or value == wanted

    if name in ("short", "long"):
        return car["length"] == name
    if name in trains.SHAPE.values:
        return car["shape"] == name
    tests = {
        "double": lambda: car["wall"] == "double",
        "closed": lambda: car["roof"] != "none",
        "open_car": lambda: car["roof"] == "none",
        "shape": lambda: is_(car["shape"], args[1]),
        "roof": lambda: is_(car["roof"], args[1]),
        "wheels": lambda: is_(car["wheels"], args[1]),
        "load": lambda: is_(car["load_shape"], args[1]) and is_(car["load_count"], args[2]),
    }
    return tests[name]()


def _naive_covers(theory, per_train: list[list[dict[str, str]]]) -> list[bool]:
    """A loop per train, clause and car: exists a car of the train passing every car atom."""
    result = []
    for train in per_train:
        covered = False
        for clause in theory.clauses:
            car_atoms = [atom for atom in clause.body if atom.predicate != "has_car"]
            if not clause.body:
                covered = True
            elif any(all(_naive_atom(atom, car) for atom in car_atoms) for car in train):
                covered = True
        result.append(covered)
    return result


NAIVE_THEORIES = [
    trains.DEFAULT_TARGET,
    "eastbound(T) :- has_car(T, C), long(C), wheels(C, 3), load(C, rectangle, 3).",
    "eastbound(T) :- has_car(T, C), double(C), roof(C, R).\n"
    "eastbound(T) :- has_car(T, C), hexagon(C).\neastbound(T) :- has_car(T, C), load(C, diamond, 2).",
    "eastbound(T) :- has_car(T, C), open_car(C), shape(C, bucket), load(C, _, 1).",
    "eastbound(T) :- has_car(T, C), short(C), closed(C), double(C), load(C, triangle, 1), "
    "wheels(C, 2).",
    "eastbound(T).",
]


@pytest.mark.parametrize("text", NAIVE_THEORIES)
def test_vectorised_coverage_equals_a_naive_loop(text):
    database = trains.generate_trains(2000, 11, target=None)
    columns = database.relations["has_car"].columns
    per_train: list[list[dict[str, str]]] = [[] for _ in range(2000)]
    for i in range(len(columns["car"])):
        per_train[columns["train"][i]].append(
            {name: domain.values[columns[name][i]] for name, domain in trains.CAR_COLUMNS.items()})
    theory = trains.parse_target(text)
    vectorised = covers(theory, database)
    assert vectorised.tolist() == _naive_covers(theory, per_train)
    assert 0 < vectorised.sum() or text != trains.DEFAULT_TARGET


@pytest.mark.parametrize("text, message", [
    ("eastbound(T) :- has_car(T, C), purple(C).", "unknown predicate 'purple'"),
    ("eastbound(T) :- has_car(T, C), short(C, long).", "short takes 1 argument"),
    ("eastbound(T) :- has_car(T, C), load(C, star, 1).", "'star' is not a constant"),
    ("eastbound(T) :- has_car(T, C), has_car(T, D), short(D).", "more than one existential"),
    ("eastbound(T) :- short(C).", "must be linked"),
    ("eastbound(T) :- has_car(T, C), short(C)", "does the last clause end with '.'"),
    ("eastbound(T) :- has_car(T, C), load(C, S, _), shape(C, S).", "joins on constants"),
    ("eastbound(T) :- has_car(T, C).\nwestbound(T) :- has_car(T, C).", "differs from"),
    ("eastbound(T) :- has_car(T, C) & short(C).", "unexpected character '&'"),
])
def test_bad_theories_are_refused_clearly(text, message):
    with pytest.raises(TheoryError, match=message.replace("(", r"\(").replace(".", r"\.")):
        trains.parse_target(text)


def test_unknown_predicate_message_lists_the_known_ones():
    with pytest.raises(TheoryError) as error:
        parse_theory("eastbound(T) :- has_car(T, C), purple(C).", trains.schema())
    assert "purple" in str(error.value) and "closed" in str(error.value)


def test_every_predicate_is_documented_with_its_meaning():
    for name, predicate in trains.TRAIN_PREDICATES.items():
        assert f"{name}(" in theory_module.__doc__, name
        assert predicate.meaning, name


def test_an_entity_shared_by_two_examples_is_refused():
    """A car under two trains' keys would let removing one train change the other's coverage."""
    from jostle.learners.ilp.relations import RelationalDatabase, Relation
    base = trains.generate_trains(5, seed=0)
    has_car = base.relations["has_car"]
    columns = {name: values.copy() for name, values in has_car.columns.items()}
    second_train_row = int(np.flatnonzero(columns["train"] == 1)[0])
    columns["car"][second_train_row] = 0  # train 0's first car, now also under train 1
    relation = Relation("has_car", columns, has_car.types, has_car.key)
    with pytest.raises(ValueError, match="car 0 belongs to more than one example"):
        RelationalDatabase(base.examples, base.counts, {"has_car": relation}, base.predicates)
    columns = {name: values.copy() for name, values in has_car.columns.items()}
    columns["other_train"] = columns["train"][::-1].copy()
    types = {**has_car.types, "other_train": trains.TRAIN}
    with pytest.raises(ValueError, match="names other examples"):
        RelationalDatabase(base.examples, base.counts, {"has_car": Relation("has_car", columns, types, "train")},
                           base.predicates)
