"""Issue 24: the non-private Aleph-style learner (modes, saturation, lattice, coverage, covering).

The bottom clause of hand-built trains lists exactly their true literals; the lattice's clauses
are legal and as many as a hand count; the vectorised P and N equal a naive loop per clause,
train and car; the learner recovers the default target and a two-clause target on generated
trains (fixed seeds), and one fit at 10,000 trains is timed.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from jostle.learners.ilp import aleph, trains
from jostle.learners.ilp.modes import TRAIN_MODES, Mode, ModeError, modes, train_modes
from jostle.learners.ilp.search import Candidate, Coverage, Spec, legal_clauses, saturate
from jostle.learners.ilp.theory import Const, Theory, accuracy, covers, parse_theory

TWO_CLAUSES = ("eastbound(T) :- has_car(T, C), double(C), load(C, triangle, 1). "
               "eastbound(T) :- has_car(T, C), long(C), roof(C, jagged).")
OVERLAPPING = ("eastbound(T) :- has_car(T, C), short(C), closed(C). "
               "eastbound(T) :- has_car(T, C), long(C), wheels(C, 3).")


def _hand_built():
    """Two trains: the seed (a short double flat-roofed car, a long jagged one) and another."""
    return trains.from_cars([
        [{"wall": "double", "roof": "flat"},
         {"length": "long", "roof": "jagged", "wheels": "3", "load_shape": "rectangle",
          "load_count": "3"}],
        [{"shape": "bucket", "load_shape": "triangle"}],
    ])


def test_bottom_clause_lists_exactly_the_true_literals():
    bottom = saturate(_hand_built(), TRAIN_MODES, 0)
    assert str(bottom.to_clause(TRAIN_MODES)) == (
        "eastbound(T) :- has_car(T, C1), short(C1), closed(C1), double(C1), "
        "shape(C1, rectangle), roof(C1, flat), wheels(C1, 2), load(C1, circle, 1), "
        "has_car(T, C2), long(C2), closed(C2), shape(C2, rectangle), roof(C2, jagged), "
        "wheels(C2, 3), load(C2, rectangle, 3).")
    assert (bottom.size, bottom.full_size, bottom.truncated, bottom.bound) == (15, 15, False, 32)
    other = saturate(_hand_built(), TRAIN_MODES, 1)
    assert str(other.to_clause(TRAIN_MODES)) == (
        "eastbound(T) :- has_car(T, C1), short(C1), open_car(C1), shape(C1, bucket), "
        "roof(C1, none), wheels(C1, 2), load(C1, triangle, 1).")


def test_bottom_clause_is_truncated_at_k_and_reported():
    bottom = saturate(_hand_built(), train_modes(max_bottom=5), 0)
    assert (bottom.size, bottom.full_size, bottom.truncated, bottom.bound) == (5, 15, True, 5)
    assert str(bottom.to_clause(TRAIN_MODES)) == (
        "eastbound(T) :- has_car(T, C1), short(C1), closed(C1), double(C1), "
        "shape(C1, rectangle).")


TINY = modes("eastbound", "train", ["has_car(+train, -car)", "short(+car)", "closed(+car)",
                                    "double(+car)"])


@pytest.mark.parametrize("cars", [1, 2])
@pytest.mark.parametrize("max_length, expected", [(6, 1 + 8), (2, 1 + 1 + 3), (1, 1 + 1), (0, 1)])
def test_lattice_size_matches_a_hand_count(cars, max_length, expected):
    # One short, closed, double car: the bottom clause has_car, short, closed, double. The legal
    # clauses are the empty one and has_car with any subset of the 3 tests (2^3), cut at the
    # maximum length; a second identical car gives the same clauses (deduplicated).
    database = trains.from_cars([[{"wall": "double", "roof": "flat"}] * cars])
    bottom = saturate(database, TINY, 0)
    assert bottom.size == 4 * cars
    candidates = legal_clauses(bottom, TINY, max_length)
    assert len(candidates) == expected == len(set(candidates))
    assert [c.length for c in candidates] == sorted(c.length for c in candidates)


def _renamed(atom, variable: str):
    """An atom with the existential variable C renamed (for a subset test on the bottom)."""
    return str(atom).replace("(C,", f"({variable},").replace(", C)", f", {variable})") \
        .replace("(C)", f"({variable})")


def test_every_enumerated_clause_is_legal():
    database = trains.generate_trains(200, 5)
    schema = trains.schema()
    for seed in range(0, 200, 23):
        bottom = saturate(database, TRAIN_MODES, seed)
        bottom_atoms = {str(atom) for atom in bottom.to_clause(TRAIN_MODES).body}
        candidates = legal_clauses(bottom, TRAIN_MODES)
        assert candidates[0] == Candidate() and len(set(candidates)) == len(candidates)
        for candidate in candidates:
            clause = candidate.to_clause(TRAIN_MODES)
            assert len(clause.body) == candidate.length <= TRAIN_MODES.max_clause_length
            parse_theory(str(clause), schema)  # linked as theory's checker requires
            if clause.body:
                assert clause.body[0].predicate == "has_car"
                assert any({_renamed(atom, f"C{j}") for atom in clause.body} <= bottom_atoms
                           for j in range(1, 5)), clause


def _naive_counts(database, candidates, active):
    """P and N by a Python loop per clause, train and car (the trains' rows are the cars)."""
    relation = database.relations["has_car"]
    train_of = relation.columns["train"]
    masks = {}
    positives, negatives = [], []
    for candidate in candidates:
        clause = candidate.to_clause(TRAIN_MODES)
        tests = [atom for atom in clause.body if atom.predicate != "has_car"]
        for atom in tests:
            if str(atom) not in masks:
                predicate = database.predicates[atom.predicate]
                constants = {i: a.value for i, a in enumerate(atom.args) if isinstance(a, Const)}
                masks[str(atom)] = predicate.rows(relation, constants)
        p = n = 0
        for example, label in enumerate(database.examples.labels):
            if not active[example]:
                continue
            if not clause.body:
                hit = True
            else:
                hit = any(all(masks[str(atom)][car] for atom in tests)
                          for car in range(len(train_of)) if train_of[car] == example)
            p += bool(hit and label)
            n += bool(hit and not label)
        positives.append(p)
        negatives.append(n)
    return np.array(positives), np.array(negatives)


def test_vectorised_counts_equal_a_naive_loop():
    database = trains.generate_trains(60, 11, OVERLAPPING)
    coverage = Coverage(database, TRAIN_MODES)
    active = np.random.default_rng(3).random(60) < 0.7
    candidates = sorted({c for seed in (0, 7, 19) for c in
                         legal_clauses(saturate(database, TRAIN_MODES, seed), TRAIN_MODES)},
                        key=lambda c: c.length)
    positives, negatives = coverage.counts(candidates, active)
    naive_p, naive_n = _naive_counts(database, candidates, active)
    np.testing.assert_array_equal(positives, naive_p)
    np.testing.assert_array_equal(negatives, naive_n)
    matrix = coverage.matrix(candidates)
    for row in range(0, len(candidates), 17):  # and theory's coverage, clause by clause
        clause = candidates[row].to_clause(TRAIN_MODES)
        np.testing.assert_array_equal(matrix[row], covers(Theory((clause,)), database))


def test_reduce_takes_the_first_best_in_breadth_first_order():
    candidates = [Candidate(), Candidate((), Spec(0)), Candidate((), Spec(0), (Spec(1),))]
    assert aleph.reduce(candidates, np.array([5, 7, 7]), np.array([3, 0, 0])) == 1
    with pytest.raises(ValueError):
        aleph.reduce([], np.array([]), np.array([]))


def test_learner_recovers_the_default_target():
    database = trains.generate_trains(1_000, 1)
    test = trains.generate_trains(10_000, 101)
    learned = aleph.learn(database, seed=0)
    assert learned.to_prolog() == trains.DEFAULT_TARGET
    assert accuracy(learned.theory, test) == 1.0
    report = learned.reports[0]
    assert report.negatives == 0 and report.positives == int(database.examples.labels.sum())
    assert report.bottom_size <= report.bound == 32 and report.lattice_size > 1


@pytest.mark.parametrize("target, noise", [(TWO_CLAUSES, None), (OVERLAPPING, 0)])
def test_learner_learns_two_clause_targets(target, noise):
    database = trains.generate_trains(1_000, 2, target)
    test = trains.generate_trains(10_000, 102, target)
    learned = aleph.learn(database, seed=0, noise=noise)
    assert len(learned.theory.clauses) == 2
    assert accuracy(learned.theory, test) >= 0.99


def test_without_the_noise_bound_p_minus_n_overgeneralises_an_overlapping_target():
    # The paper's Algorithm 1 scores P - N with no bound on N: has_car(T, C), closed(C) covers
    # more positives than negatives and wins over short(C), closed(C) (documented behaviour).
    database = trains.generate_trains(1_000, 2, OVERLAPPING)
    learned = aleph.learn(database, seed=0)
    assert learned.reports[0].negatives > 0


def test_nothing_learned_prints_a_comment():
    database = trains.generate_trains(300, 4, target=None)  # no positives
    learned = aleph.learn(database)
    assert learned.theory.clauses == () and learned.to_prolog().startswith("% no clause")
    assert not covers(learned.theory, database).any()


def test_fit_time_at_10000_trains():
    database = trains.generate_trains(10_000, 3)
    start = time.perf_counter()
    learned = aleph.learn(database, seed=0)
    elapsed = time.perf_counter() - start
    print(f"\none fit at 10,000 trains: {elapsed:.3f} s; {learned.to_prolog()}")
    assert learned.to_prolog() == trains.DEFAULT_TARGET
    assert elapsed < 10.0


@pytest.mark.parametrize("text, message", [
    ("short(car)", r"is not \+type"),
    ("short", "not of the form"),
    ("nosuch(+car)", "unknown predicate"),
    ("short(+car, +car)", "exactly one input"),
    ("short(+train)", "is a car, not a train"),
    ("shape(+car, #shape, +car)", "exactly one input"),
    ("wheels(+car, +wheels)", "exactly one input"),
    ("wheels(#wheels, +car)", "is a car, not a wheels"),
    ("load(+car, #load_shape, #car)", "is a load_count, not a car"),
    ("has_car(+train, #car)", "cannot be a constant"),
])
def test_bad_modes_are_refused_clearly(text, message):
    with pytest.raises(ModeError, match=message):
        modes("eastbound", "train", ["has_car(+train, -car)", text]).check(trains.schema())


def test_mode_round_trip_and_output_rules():
    assert str(Mode.parse("load(+car, #load_shape, #load_count)")) == \
        "load(+car, #load_shape, #load_count)"
    with pytest.raises(ModeError, match="only be introduced from the head"):
        modes("eastbound", "train", ["has_car(+car, -train)"])


def _with_train_facts(database):
    """The trains with a second fact table keyed by train: its number of cars, cars(T, N)."""
    from jostle.learners.ilp.relations import Domain, Predicate, Relation, RelationalDatabase
    n_trains = database.count(trains.TRAIN)
    counts = np.bincount(database.relations["has_car"].columns["train"], minlength=n_trains)
    domain = Domain("n_cars", ("2", "3", "4"))
    relation = Relation("train_facts", {"train": np.arange(n_trains), "n_cars": counts - 2},
                        {"train": trains.TRAIN, "n_cars": domain}, key="train")
    predicates = {**database.predicates,
                  "cars": Predicate("cars", "train_facts", ("train", "n_cars"), (), "N cars")}
    return RelationalDatabase(database.examples, database.counts,
                              {**database.relations, "train_facts": relation}, predicates)


def test_tests_on_the_head_variable_are_saturated_searched_and_covered():
    target = "eastbound(T) :- cars(T, 2), has_car(T, C), short(C), closed(C)."
    database = _with_train_facts(trains.generate_trains(400, 8, target=None))
    database = database.with_labels(covers(parse_theory(target, database), database))
    with_cars = modes("eastbound", "train", ("cars(+train, #n_cars)",) + tuple(
        str(mode) for mode in TRAIN_MODES.body))
    seed = int(np.flatnonzero(database.examples.labels)[0])
    bottom = saturate(database, with_cars, seed)
    assert str(bottom.to_clause(with_cars)).startswith("eastbound(T) :- cars(T, 2), has_car(T, C1)")
    candidates = legal_clauses(bottom, with_cars)
    # The head test doubles every clause shorter than the length bound (with it or without it).
    with_head = [c for c in candidates if c.head_tests]
    shorter = [c for c in candidates if not c.head_tests and c.length < with_cars.max_clause_length]
    assert len(with_head) == len(shorter) > 0
    matrix = Coverage(database, with_cars).matrix(candidates)
    for row in range(0, len(candidates), 7):
        clause = candidates[row].to_clause(with_cars)
        np.testing.assert_array_equal(matrix[row], covers(Theory((clause,)), database))
    learned = aleph.learn(database, with_cars, seed=0)
    assert accuracy(learned.theory, database) == 1.0
