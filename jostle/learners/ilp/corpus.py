"""The ILP family's public training corpus: generated trains tasks with random target theories.

The ChoiceMaker of the ILP family learns which Option (naive or relevance-aware reduction, its
levels l and number of clauses, or the trivial theory) does best from public tasks whose answer
is known. Each task (`ILPTask`) is a target theory over the trains' mode vocabulary, drawn with
a public seed:

  * 1 to 3 clauses (in turn, so the corpus holds as many targets of each), each
    `has_car(T, C)` plus 1 to 3 tests on the car C, the tests drawn without replacement from
    `CAR_TESTS` (every test the default train modes allow: short, long, closed, open_car,
    double, shape, roof, wheels, load with each of their public constants);
  * at most `MAX_TARGET_LITERALS` distinct literals (the link and the tests), so that the
    target fits in a fake bottom clause of the smallest k, with room for distractors;
  * degenerate targets are skipped: a clause covering under `MIN_CLAUSE_COVERAGE` of the
    trains on its own (a contradiction such as short and long, or a rare load), or a class
    balance outside [`MIN_BALANCE`, `MAX_BALANCE`], measured on `BALANCE_SAMPLE` public trains
    (Muggleton's generator, `trains.generate_trains`, with a seed derived from the corpus seed);
  * the fake example's bound k drawn from 8 to 12 and the modes' maximum clause length 4 or 5
    (6 would double the naive reduction's training time for an Option that rarely wins), so
    the lattice sizes (and the reductions' noise scales) vary across tasks; the fake example's
    distractors are drawn with the task's own public seed (`fake_seed`).

Each target is its own leave-one-dataset-out group. Everything is generated offline from seeds,
so the corpus is the same on every machine (`ilp_corpus()`; `ILPTask.content_hash` keys the
experience cache). The data are public: nothing here reads private data.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from jostle.learners.ilp import trains
from jostle.learners.ilp.relations import RelationalDatabase
from jostle.learners.ilp.theory import covers, parse_theory

__all__ = ["BALANCE_SAMPLE", "CAR_TESTS", "CORPUS_VERSION", "ILPTask", "K_RANGE", "MAX_BALANCE",
           "MAX_TARGET_LITERALS", "MIN_BALANCE", "MIN_CLAUSE_COVERAGE", "class_balance", "ilp_corpus", "random_clauses",
           "random_target"]

CORPUS_VERSION = "1"  # part of every task's content hash: bump when generation changes

#: Every test on a car that the default train modes (`modes.TRAIN_BODY`) allow, as Prolog text.
CAR_TESTS: tuple[str, ...] = (
    "short(C)", "long(C)", "closed(C)", "open_car(C)", "double(C)",
    *(f"shape(C, {value})" for value in trains.SHAPE.values),
    *(f"roof(C, {value})" for value in trains.ROOF.values),
    *(f"wheels(C, {value})" for value in trains.WHEELS.values),
    *(f"load(C, {shape}, {count})" for shape in trains.LOAD_SHAPE.values for count in trains.LOAD_COUNT.values),
)

K_RANGE = (8, 12)                 # the fake bottom clause's bound k, inclusive
CLAUSE_LENGTHS = (4, 5)           # the modes' maximum clause length (the naive lattice's depth)
MAX_TARGET_LITERALS = 7           # the link and the distinct tests: fits k = 8 with a distractor
MIN_CLAUSE_COVERAGE = 0.02        # a clause covering fewer trains alone is degenerate
MIN_BALANCE, MAX_BALANCE = 0.05, 0.95
BALANCE_SAMPLE = 2_000            # public trains the balance and coverage are measured on


@dataclass(frozen=True)
class ILPTask:
    """One public training task of the ILP family.

    Attributes:
        name: The task's name ("ilp:target:<index>").
        group: Its leave-one-dataset-out group (the target theory: each target its own group).
        target: The target theory, Prolog text over the trains' predicates.
        k: The bound on the fake example's bottom clause (literals kept).
        max_clause_length: The modes' maximum clause length (the naive reduction's lattice depth).
        fake_seed: The public seed choosing the fake example's distractor literals.
        balance: The fraction of eastbound trains on the public balance sample (for reports).
    """

    name: str
    group: str
    target: str
    k: int
    max_clause_length: int
    fake_seed: int
    balance: float

    @property
    def n_clauses(self) -> int:
        """The number of clauses of the target."""
        return self.target.count(":-")

    def content_hash(self) -> str:
        """What the experience cache keys the task on (its definition and the corpus version)."""
        text = "|".join([CORPUS_VERSION, self.name, self.target, str(self.k), str(self.max_clause_length),
                         str(self.fake_seed)])
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def random_clauses(rng: np.random.Generator, sample: RelationalDatabase,
                   n_clauses: int | None = None) -> list[str]:
    """The clauses of a random target: `n_clauses` (default 1 to 3, uniformly), each
    has_car(T, C) and 1 to 3 distinct tests of `CAR_TESTS`. Each clause is redrawn (same number
    of tests) until it covers at least
    `MIN_CLAUSE_COVERAGE` of the public `sample` on its own (a contradiction such as short and
    long, or a rare load, is degenerate), and the whole target until it has at most
    `MAX_TARGET_LITERALS` distinct literals (the link and the tests) and no clause twice."""
    schema = trains.schema()

    def clause() -> tuple[int, ...]:
        size = int(rng.integers(1, 4))
        while True:
            body = tuple(sorted(int(i) for i in rng.choice(len(CAR_TESTS), size=size, replace=False)))
            if covers(parse_theory(_clause_text(body), schema), sample).mean() >= MIN_CLAUSE_COVERAGE:
                return body

    while True:
        count = int(rng.integers(1, 4)) if n_clauses is None else int(n_clauses)
        bodies = [clause() for _ in range(count)]
        distinct_tests = {test for body in bodies for test in body}
        if len(distinct_tests) + 1 <= MAX_TARGET_LITERALS and len(set(bodies)) == len(bodies):
            return [_clause_text(body) for body in bodies]


def _clause_text(body: tuple[int, ...]) -> str:
    return f"eastbound(T) :- has_car(T, C), {', '.join(CAR_TESTS[i] for i in body)}."


def random_target(rng: np.random.Generator, sample: RelationalDatabase, n_clauses: int | None = None) -> str:
    """A random target theory (`random_clauses`, as one Prolog text)."""
    return " ".join(random_clauses(rng, sample, n_clauses))


def class_balance(target: str, sample: RelationalDatabase) -> float:
    """The fraction of the sample's trains the target covers (labels them eastbound)."""
    return float(covers(parse_theory(target, trains.schema()), sample).mean())


def ilp_corpus(n_targets: int = 16, seed: int = 0) -> list[ILPTask]:
    """The offline public corpus: `n_targets` non-degenerate random targets, each its own group,
    with 1, 2, 3, 1, 2, 3, ... clauses.

    Args:
        n_targets: The number of tasks.
        seed: The public seed of the targets, the bounds k and the fake examples' seeds.

    Returns:
        The tasks, the same on every machine for the same arguments.
    """
    rng = np.random.default_rng(seed)
    sample = trains.generate_trains(BALANCE_SAMPLE, seed=np.random.default_rng([seed, 1]), target=None)
    tasks: list[ILPTask] = []
    seen: set[str] = set()
    while len(tasks) < n_targets:
        target = random_target(rng, sample, 1 + len(tasks) % 3)
        k = int(rng.integers(K_RANGE[0], K_RANGE[1] + 1))
        length = int(rng.choice(CLAUSE_LENGTHS))
        fake_seed = int(rng.integers(0, 2**31 - 1))
        balance = class_balance(target, sample)
        if target in seen or not MIN_BALANCE <= balance <= MAX_BALANCE:
            continue
        seen.add(target)
        index = len(tasks)
        tasks.append(ILPTask(f"ilp:target:{index}", f"target:{index}", target, k, length, fake_seed, balance))
    return tasks
