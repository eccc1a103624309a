"""Audit cases of the ILP family (issue 24): the naive and the relevance-aware DP reductions, the
full DP ILP covering loop and the trivial "majority" theory, on tiny trains databases. Same
contract as cases.py and brl_cases.py (test_ilp_audits.py runs them): neighbours chosen to be a
worst case, the epsilon each component claims, and negative controls, mis-calibrated on
purpose, that must be caught at the sample sizes of passing cases.

**Neighbours (the entity unit).** D' is D without one example and every fact keyed by it
(`without`): the train and all its cars. The example removed is covered by every clause the
component scores, so each of its counts moves by 1 (the L1 sensitivity |L| of Theorem 4 is
realised in full): a positive train with a short closed car for the reductions, a negative one
with a short closed car and a long closed car for the relevance-aware covering loop (negatives
are never removed between rounds, so it moves every round's N counts). The naive covering loop
removes a positive that round 1's clause may cover (then exact coverage removal drops it and
round 2's counts are equal on D and D') or not (then it moves round 2's counts too): the
1-stability of the removal, both ways (`LoopLoss` recomputes each round's counts on D and D').

**What is audited.** The reductions return every noisy count they drew (`ReductionResult`), and
the covering loop's rounds are captured by wrapping the reductions it calls: the audit sees the
whole transcript, of which the learned theory is post-processing. The runners reduce each
transcript to its privacy loss under the claimed calibration (`PrivacyLoss`): the log of the
ratio of its two-sided geometric laws on D and on D' (`safe_noise.release_counts`; each count's
scale as the component claims it: |L| / eps, or beta_i (l + 1) / eps on level i). It is a function of the output and of the two public neighbours only, so
events on it are legitimate; by Neyman-Pearson its upper sets are the most telling events, and
its largest value is exactly the claimed epsilon, reached when every count lands on D's side.
The runners also output the chosen clause and the level sizes beta_i (which clauses were
evaluated is released too), or the theory's text, audited as categories. One relevance-aware
case sits at the pruning threshold, so that whether the lattice below the empty clause is
evaluated turns on the removed example.

**Negative controls.** (a) the counts noised for one clause instead of |L|; (b) a car shared by
four trains, a private fact not keyed by one example (`shared_car_database`); (c) the
relevance-aware pruning, and so beta_i, computed from exact counts (`pruning_on_exact_counts`;
noise scaled by the full level sizes instead of the alive beta_i would be no control: it is
more private).

Sample sizes are set so each audit takes a few seconds (a reduction runs in ~0.1-0.3 ms, a
two-round covering loop in ~0.7 ms); the power floors (`at_least`) are derived from the loss
distribution: see the comments at each case.
"""

from __future__ import annotations

import contextlib
import zlib
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Iterator, Sequence
from unittest import mock

import numpy as np

from jostle.audit import AuditCase, Categories, Event, Projection, Thresholds
from jostle.learners.ilp import private, trains
from jostle.learners.ilp.fake import fake_bottom
from jostle.learners.ilp.modes import train_modes
from jostle.learners.ilp.relations import Examples, Relation, RelationalDatabase
from jostle.learners.ilp.search import Candidate, Coverage, legal_clauses
from jostle.privacy.noise import Randomness

REDUCTION_SAMPLES = 8_000
RELEVANCE_SAMPLES = 5_000
LOOP_SAMPLES = 3_000
NAIVE_LOOP_SAMPLES = 2_000
TRIVIAL_SAMPLES = 8_000

MODES = train_modes(max_clause_length=4, max_bottom=8)
SCHEMA = trains.schema()
# The fake example of the reductions: 3 literals, a lattice of 5 legal clauses (the empty
# clause, has_car, has_car + short, has_car + closed, has_car + short + closed); relevance-aware
# at l = 3 evaluates levels of 1, 1, 2 and 1 clauses.
FAKE = fake_bottom(MODES, SCHEMA, "has_car(T, C), short(C), closed(C)")
CANDIDATES = legal_clauses(FAKE, MODES)
LEVELS = 3
# The covering loop's two fake examples (round r uses FAKES[r % 2]), at l = 2: 4 clauses each.
FAKES = (FAKE, fake_bottom(MODES, SCHEMA, "has_car(T, C), long(C), closed(C)"))
LOOP_LEVELS = 2
ROUNDS = 2

SHORT_CLOSED = {"roof": "flat"}                      # short by default
SHORT_OPEN: dict[str, str] = {}                      # short, no roof
LONG_OPEN = {"length": "long"}
LONG_CLOSED = {"length": "long", "roof": "flat"}


# ---------------------------------------------------------------- databases and neighbours
def without(database: RelationalDatabase, example: int) -> RelationalDatabase:
    """The neighbour under the entity unit: `example` and every fact keyed by it removed.

    Entity ids keep their values (the counts are public upper bounds on them), so a fact that
    another example shares, if the data has one, stays (the shared-fact control).
    """
    keep = database.examples.ids != example
    examples = Examples(database.examples.entity, database.examples.ids[keep], database.examples.labels[keep])
    relations = {}
    for name, relation in database.relations.items():
        rows = relation.columns[relation.key] != example
        relations[name] = Relation(relation.name, {c: v[rows] for c, v in relation.columns.items()},
                                   relation.types, relation.key)
    return type(database)(examples, database.counts, relations, database.predicates)


def _trains(groups: Sequence[tuple[int, Sequence[dict[str, str]], bool]]) -> RelationalDatabase:
    """A trains database from (how many copies, a train's cars, its label) groups."""
    cars = [list(train) for count, train, _ in groups for _ in range(count)]
    labels = [label for count, _, label in groups for _ in range(count)]
    return trains.from_cars(cars, labels)


# The reductions' D: train 0 (removed in D') is positive with a short closed car, covered by all
# 5 clauses. Ten more such positives and ten negatives with a short open car and a long closed
# one (covered by all but has_car + short + closed) keep every noisy P well above the best noisy
# score, so the relevance-aware pruning rarely cuts a level and the whole epsilon is exposed.
REDUCTION_D = _trains([(11, [SHORT_CLOSED], True), (10, [SHORT_OPEN, LONG_CLOSED], False)])
REDUCTION_D_PRIME = without(REDUCTION_D, 0)

# The covering loop's D: train 0 (removed) is negative with a short closed car and a long closed
# car: every clause of both fakes covers it. Positives of two kinds, so round 1's clause
# removes some of them (by exact coverage) and round 2 scores what remains.
LOOP_D = _trains([(1, [SHORT_CLOSED, LONG_CLOSED], False), (6, [SHORT_CLOSED], True),
                  (6, [LONG_CLOSED, SHORT_OPEN], True), (6, [LONG_OPEN], False)])
LOOP_D_PRIME = without(LOOP_D, 0)

# The naive covering loop's D: train 0 (removed) is POSITIVE with a long closed car only, so
# round 1 (short, closed) covers it by the empty clause, has_car and has_car + closed, not by
# has_car + short or has_car + short + closed. When round 1 releases one of the latter it stays
# for round 2 (long, closed: every clause covers it) and moves its counts too; otherwise exact
# coverage removal drops it and round 2's counts are equal on D and D'.
NAIVE_LOOP_D = _trains([(1, [LONG_CLOSED], True), (8, [SHORT_CLOSED], True), (4, [LONG_CLOSED], True),
                        (6, [LONG_OPEN, SHORT_OPEN], False)])
NAIVE_LOOP_D_PRIME = without(NAIVE_LOOP_D, 0)

# The trivial theory's D: P - N = 0; D' drops a negative (P - N = 1). The theory is the empty
# one when the noisy difference is not positive: probability 1/2 on D, e^-eps / 2 on D'.
TRIVIAL_D = _trains([(4, [SHORT_CLOSED], True), (4, [LONG_OPEN], False)])
TRIVIAL_D_PRIME = without(TRIVIAL_D, int(np.flatnonzero(~TRIVIAL_D.examples.labels)[0]))


# Pruning at the public minimum: 5 positives with a short closed car (train 0, removed, among
# them) and 20 negatives with a long open car, so the best noisy score stays far below
# PRUNE_AT and the criterion reads P'(S) + sigma_i < PRUNE_AT. At eps 2 and l = 2 the level-0
# noise has sigma 2.08: the empty clause (P = 5 on D, 4 on D') is pruned, and with it the whole
# lattice, about as often as not, and the decision turns on the removed example.
PRUNING_D = _trains([(5, [SHORT_CLOSED], True), (20, [LONG_OPEN], False)])
PRUNING_D_PRIME = without(PRUNING_D, 0)
PRUNING_LEVELS = 2
PRUNE_AT = 7


def shared_car_database() -> RelationalDatabase:
    """NEGATIVE CONTROL data: a car shared by four trains (a private fact not keyed by one example).

    Train 0's row says car 0 is short and closed; trains 1-3 link to the same car 0 in rows of
    their own that say it is long and open. Coverage reads a car's tests over every row of the
    car, so trains 1-3 are covered by short(C) and closed(C) only through train 0's facts:
    removing train 0 moves 3 more examples' coverage of 3 clauses (L1 move 14, not 5). Ten
    positives and ten negatives of their own complete it, as in REDUCTION_D.
    """
    base = REDUCTION_D
    has_car = base.relations["has_car"]
    columns = {name: values.copy() for name, values in has_car.columns.items()}
    trains_of_car0 = np.array([0, 1, 2, 3])
    # rows of trains 1-3: their first car becomes car 0, with a long open car's attributes
    for train in trains_of_car0[1:]:
        row = int(np.flatnonzero(columns["train"] == train)[0])
        columns["car"][row] = 0
        columns["length"][row] = trains.LENGTH.code("long")
        columns["roof"][row] = trains.ROOF.code("none")
    relation = Relation("has_car", columns, has_car.types, has_car.key)
    return _UncheckedDatabase(base.examples, base.counts, {"has_car": relation}, base.predicates)


class _UncheckedDatabase(RelationalDatabase):
    """NEGATIVE CONTROL only: a database that skips the refusal of an entity shared by several
    examples (`RelationalDatabase._check_owned_entities`), to show what that refusal prevents."""

    def _check_owned_entities(self) -> None:
        return None


SHARED_D = shared_car_database()
SHARED_D_PRIME = without(SHARED_D, 0)


# ---------------------------------------------------------------- the privacy loss of a transcript
@dataclass(frozen=True)
class PrivacyLoss:
    """log p_D(y) / p_D'(y) of released noisy counts y under the claimed calibration.

    A count with value a on D and b on D', released with two-sided geometric noise
    P(z) ~ exp(-|z| / s), has log probability ratio (|y - b| - |y - a|) / s at y; independent counts add (a relevance-aware
    level's clauses and scale are fixed by the levels released before it, so the ratio of the
    whole transcript is the sum over what was evaluated).

    Attributes:
        candidates: The clauses scored (index order of the reductions' results).
        d, d_prime: (P, N) per clause on D and on D'.
    """

    candidates: tuple[Candidate, ...]
    d: tuple[np.ndarray, np.ndarray]
    d_prime: tuple[np.ndarray, np.ndarray]

    @classmethod
    def between(cls, d: RelationalDatabase, d_prime: RelationalDatabase,
                candidates: Sequence[Candidate]) -> PrivacyLoss:
        """The counts of every candidate over all examples of D and of D'."""
        return cls(tuple(candidates), Coverage(d, MODES).counts(list(candidates)),
                   Coverage(d_prime, MODES).counts(list(candidates)))

    def moved(self) -> int:
        """The L1 move of the 2 |L| counts between the neighbours."""
        return int(sum(np.abs(a - b).sum() for a, b in zip(self.d, self.d_prime)))

    def of(self, result: private.ReductionResult, levels: int | None) -> float:
        """The loss of one reduction's released counts; `levels` None for the naive reduction
        (scale |L| / eps), else l (level i's scale beta_i (l + 1) / eps)."""
        evaluated = ~np.isnan(result.noisy_positives)
        if levels is None:
            scales = np.full(len(self.candidates), len(self.candidates) / float(result.epsilon))
        else:
            lengths = np.array([c.length for c in self.candidates])
            beta = np.array([result.level_sizes[n] if n < len(result.level_sizes) else 0 for n in lengths])
            scales = beta * (levels + 1) / float(result.epsilon)
        total = 0.0
        for released, a, b in zip((result.noisy_positives, result.noisy_negatives), self.d, self.d_prime):
            y = released[evaluated]
            total += float(np.sum((np.abs(y - b[evaluated]) - np.abs(y - a[evaluated])) / scales[evaluated]))
        return total


@dataclass(frozen=True)
class Union:
    """Every event of several families (here: loss thresholds and chosen-clause categories)."""

    families: tuple[Any, ...]

    def candidates(self, first: np.ndarray, second: np.ndarray) -> list[Event]:
        return [event for family in self.families for event in family.candidates(first, second)]


def _labels(column: int, prefix: str) -> Any:
    return lambda y: np.array([f"{prefix} {int(v):x}" for v in y[:, column]], dtype=object)


LOSS_AND_CHOICE = Union((Projection(lambda y: y[:, 0], "loss", Thresholds()),
                         Projection(_labels(1, "clause"), "chosen", Categories()),
                         Projection(_labels(2, "level sizes"), "levels", Categories())))


# ---------------------------------------------------------------- runners
Patch = Callable[[], contextlib.AbstractContextManager[Any]]


def _charged(spent: list[Fraction], claim: Fraction) -> None:
    """Every step was charged, and no more than the claim in all."""
    if not spent or sum(spent) > claim:
        raise AssertionError(f"charged {spent} for a claim of {claim}")


def reduction_runner(epsilon: float, levels: int | None, loss: PrivacyLoss,
                     patch: Patch = contextlib.nullcontext, min_positives: int = 0) -> Any:
    """`count` runs of the naive (`levels` None) or relevance-aware reduction over CANDIDATES;
    each output is (privacy loss of the released counts, chosen clause, the level sizes beta_i
    as one number: which clauses were evaluated is released too)."""
    claim = Fraction(epsilon)

    def run(database: RelationalDatabase, count: int, seed: int) -> np.ndarray:
        coverage = Coverage(database, MODES)
        active = np.ones(len(database.examples), dtype=bool)
        noise = Randomness(seed)
        out = np.empty((count, 3))
        with patch():
            for i in range(count):
                spent: list[Fraction] = []
                charge = lambda e, _d: spent.append(Fraction(e))  # noqa: E731
                if levels is None:
                    result = private.naive_reduction(coverage, CANDIDATES, active, claim, noise, charge)
                else:
                    result = private.relevance_reduction(coverage, CANDIDATES, active, claim, levels, noise, charge,
                                                         min_positives)
                _charged(spent, claim)
                out[i] = (loss.of(result, levels), result.index, sum(b * 16 ** n for n, b in enumerate(result.level_sizes)))
        return out
    return run


@contextlib.contextmanager
def _captured(results: list[private.ReductionResult]) -> Iterator[None]:
    """Record every reduction the covering loop calls (its rounds' transcripts)."""
    def wrap(original: Callable[..., private.ReductionResult]) -> Callable[..., private.ReductionResult]:
        def recorded(*args: Any, **kwargs: Any) -> private.ReductionResult:
            result = original(*args, **kwargs)
            results.append(result)
            return result
        return recorded

    with mock.patch.object(private, "naive_reduction", wrap(private.naive_reduction)), \
            mock.patch.object(private, "relevance_reduction", wrap(private.relevance_reduction)):
        yield


class LoopLoss:
    """The privacy loss of a covering loop's rounds (every count of every round it released).

    Given the clauses released in rounds 1..r-1 (the transcript's choices whose noisy score
    passed min_score), round r's counts on D and on D' are exact counts over the examples each
    database keeps: its negatives and the positives those clauses do not cover (the loop's exact
    coverage removal, computed here independently from each database). So the removed example
    moves round r's counts by its own coverage while it is kept, and not at all once a released
    clause covers it. Counts are cached per (fake, clauses released before).
    """

    def __init__(self, d: RelationalDatabase, d_prime: RelationalDatabase, method: str, levels: int) -> None:
        self.databases = (d, d_prime)
        self.coverages = (Coverage(d, MODES), Coverage(d_prime, MODES))
        self.levels = levels if method == "relevance" else None
        limit = levels if method == "relevance" else MODES.max_clause_length
        self.candidates = [legal_clauses(f, MODES, max_length=limit) for f in FAKES]
        self._cache: dict[tuple, PrivacyLoss] = {}

    def _loss(self, fake: int, released: tuple[Candidate, ...]) -> PrivacyLoss:
        key = (fake, released)
        if key not in self._cache:
            counts = []
            for database, coverage in zip(self.databases, self.coverages):
                labels = database.examples.labels
                covered = coverage.matrix(list(released)).any(axis=0) if released else np.zeros(len(labels), bool)
                counts.append(coverage.counts(self.candidates[fake], (labels & ~covered) | ~labels))
            self._cache[key] = PrivacyLoss(tuple(self.candidates[fake]), counts[0], counts[1])
        return self._cache[key]

    def of(self, rounds: Sequence[private.ReductionResult], min_score: float = 0) -> float:
        released: tuple[Candidate, ...] = ()
        total = 0.0
        for number, result in enumerate(rounds):
            fake = number % len(FAKES)
            total += self._loss(fake, released).of(result, self.levels)
            if result.noisy_score > min_score:
                released += (self.candidates[fake][result.index],)
        return total


def loop_runner(epsilon: float, loss: LoopLoss, method: str = "relevance") -> Any:
    """`count` runs of dp_learn (ROUNDS rounds, covering removal between them); each output is
    (privacy loss of every round's released counts, the CRC-32 of the learned theory's Prolog text)."""
    claim = Fraction(epsilon)

    def run(database: RelationalDatabase, count: int, seed: int) -> np.ndarray:
        noise = Randomness(seed)
        out = np.empty((count, 2))
        for i in range(count):
            spent: list[Fraction] = []
            rounds: list[private.ReductionResult] = []
            with _captured(rounds):
                learned = private.dp_learn(database, MODES, list(FAKES), claim, method=method, levels=LOOP_LEVELS,
                                           rounds=ROUNDS, noise=noise, charge=lambda e, _d: spent.append(Fraction(e)))
            _charged(spent, claim)
            if len(rounds) != ROUNDS:
                raise AssertionError(f"captured {len(rounds)} reductions of {ROUNDS} rounds")
            out[i] = (loss.of(rounds), zlib.crc32(learned.to_prolog().encode()))
        return out
    return run


LOSS_AND_THEORY = Union((Projection(lambda y: y[:, 0], "loss", Thresholds()),
                         Projection(lambda y: np.array([f"theory {int(v):08x}" for v in y[:, 1]], dtype=object),
                                    "theory", Categories())))


def trivial_runner(epsilon: float) -> Any:
    """`count` runs of the trivial "majority" theory; the output is its Prolog text."""
    claim = Fraction(epsilon)

    def run(database: RelationalDatabase, count: int, seed: int) -> np.ndarray:
        noise = Randomness(seed)
        out = []
        for _ in range(count):
            spent: list[Fraction] = []
            learned = private.trivial_theory(database, MODES, claim, noise=noise,
                                             charge=lambda e, _d: spent.append(Fraction(e)))
            _charged(spent, claim)
            out.append(learned.to_prolog())
        return np.array(out, dtype=object)
    return run


def metafeature_runner(epsilon: float) -> Any:
    """`count` releases of the ILP ChoiceMaker's shared noisy example counts (P', N')
    (`metafeatures.example_counts`, what n_examples and positive_fraction post-process), each in
    a fresh measurement; the output is their privacy loss between TRIVIAL_D and TRIVIAL_D'
    (sensitivity 1: scale 1 / eps)."""
    from jostle.choicemaker.family import MetafeatureContext
    from jostle.learners.ilp.metafeatures import example_counts
    from jostle.learners.ilp.task import ILPData

    d, d_prime = ([int(np.sum(db.examples.labels)), int(np.sum(~db.examples.labels))]
                  for db in (TRIVIAL_D, TRIVIAL_D_PRIME))

    def run(database: RelationalDatabase, count: int, seed: int) -> np.ndarray:
        noise = Randomness(seed)
        data = ILPData(database, MODES, (FAKE,), "audit")
        out = np.empty(count)
        for i in range(count):
            y = example_counts(data, epsilon, noise, MetafeatureContext(epsilon, epsilon))
            out[i] = epsilon * float(np.sum(np.abs(y - d_prime) - np.abs(y - d)))
        return out
    return run


# ---------------------------------------------------------------- negative-control patches
def one_clause_noise() -> contextlib.AbstractContextManager[Any]:
    """NEGATIVE CONTROL (a): every release calibrated for one clause (L1 sensitivity 1, not |L|)."""
    original = private.release_counts
    return mock.patch.object(private, "release_counts",
                             lambda noise, values, l1, epsilon: original(noise, values, 1, epsilon))


class _ExactWhenCompared(np.ndarray):
    """NEGATIVE CONTROL (c) device: noisy P' that adds and compares as the exact P.

    Stored and subtracted (the released counts, the best noisy score) it is the noisy vector;
    in the pruning test `P' + slack sigma < threshold` it is the exact one. So the alive clauses
    and beta_i come from exact counts while every released count is still noisy.
    """

    exact: np.ndarray

    def __add__(self, other: Any) -> Any:
        return np.asarray(self.exact, dtype=float) + other

    __radd__ = __add__

    def __lt__(self, other: Any) -> Any:
        return np.asarray(self.exact, dtype=float) < other


def pruning_on_exact_counts() -> contextlib.AbstractContextManager[Any]:
    """NEGATIVE CONTROL (c): the relevance-aware reduction prunes (so sets beta_i) on exact counts."""
    original = private._noisy_counts

    def leaky(coverage: Coverage, candidates: Sequence[Candidate], active: np.ndarray, *args: Any) -> Any:
        positives, negatives = original(coverage, candidates, active, *args)
        leaked = np.asarray(positives, dtype=float).view(_ExactWhenCompared)
        leaked.exact = coverage.counts(list(candidates), active)[0]
        return leaked, negatives

    return mock.patch.object(private, "_noisy_counts", leaky)


REDUCTION_LOSS = PrivacyLoss.between(REDUCTION_D, REDUCTION_D_PRIME, CANDIDATES)
SHARED_LOSS = PrivacyLoss.between(SHARED_D, SHARED_D_PRIME, CANDIDATES)
PRUNING_LOSS = PrivacyLoss.between(PRUNING_D, PRUNING_D_PRIME, CANDIDATES)

# Power floors (each count's noise is two-sided geometric, P(Z >= 0) = 1 / (1 + e^-eps/s)).
# The naive reduction at eps 2 spreads the loss over 5 counts of scale 2.5: the event
# "loss = 2" (every P' on D's side) has probability 0.6^5 = 0.08 on D and e^-2 times that on
# D'; at 8,000 samples the Clopper-Pearson bounds at alpha 1e-6 leave about 1.2 of the 2.
# Relevance-aware at eps 2 and l = 3: 5 counts over 4 levels (85% of runs prune nothing), about
# 1.2 at 5,000 samples; at the pruning threshold about 1.3. The covering loop at eps 4: 8 N'
# counts over 2 rounds x 3 levels, about 1.8 of 4 at 3,000 (the naive loop's positive moves 3
# of round 1's 5 counts, and round 2's only when kept: about 0.6, no floor). The trivial theory realises its
# whole claim on one event (the empty theory: 1 / (1 + e^-1) against e^-1 / (1 + e^-1)), about
# 0.9 of 1, as do the ChoiceMaker's noisy example counts (loss 1 when N' lands on D's side).
ILP_CASES = [
    AuditCase("ILP naive reduction (Algorithm 2), example covered by all |L| clauses",
              reduction_runner(2.0, None, REDUCTION_LOSS), REDUCTION_D, REDUCTION_D_PRIME, epsilon=2.0,
              samples=REDUCTION_SAMPLES, events=LOSS_AND_CHOICE, at_least=1.0),
    AuditCase("ILP relevance-aware reduction (Algorithm 3), l = 3",
              reduction_runner(2.0, LEVELS, REDUCTION_LOSS), REDUCTION_D, REDUCTION_D_PRIME, epsilon=2.0,
              samples=RELEVANCE_SAMPLES, events=LOSS_AND_CHOICE, at_least=0.8),
    AuditCase("ILP relevance-aware reduction, pruning at the minimum positive count",
              reduction_runner(2.0, PRUNING_LEVELS, PRUNING_LOSS, min_positives=PRUNE_AT), PRUNING_D,
              PRUNING_D_PRIME, epsilon=2.0, samples=RELEVANCE_SAMPLES, events=LOSS_AND_CHOICE, at_least=0.9),
    AuditCase("ILP covering loop (Algorithm 4), 2 rounds relevance-aware, covering removal",
              loop_runner(4.0, LoopLoss(LOOP_D, LOOP_D_PRIME, "relevance", LOOP_LEVELS)), LOOP_D, LOOP_D_PRIME,
              epsilon=4.0, samples=LOOP_SAMPLES, events=LOSS_AND_THEORY, at_least=1.5),
    AuditCase("ILP covering loop, 2 rounds naive, a positive example kept or removed between rounds",
              loop_runner(4.0, LoopLoss(NAIVE_LOOP_D, NAIVE_LOOP_D_PRIME, "naive", LOOP_LEVELS), "naive"),
              NAIVE_LOOP_D, NAIVE_LOOP_D_PRIME, epsilon=4.0, samples=NAIVE_LOOP_SAMPLES, events=LOSS_AND_THEORY),
    AuditCase("ILP trivial majority theory", trivial_runner(1.0), TRIVIAL_D, TRIVIAL_D_PRIME, epsilon=1.0,
              samples=TRIVIAL_SAMPLES, events=Categories(), at_least=0.6),
    AuditCase("ILP ChoiceMaker metafeature release (noisy example counts)", metafeature_runner(1.0), TRIVIAL_D,
              TRIVIAL_D_PRIME, epsilon=1.0, samples=TRIVIAL_SAMPLES, at_least=0.6),
]

ILP_NEGATIVE_CONTROLS = [
    # (a) the counts noised as if the lattice had one clause: a realised loss of 5 x 2
    AuditCase("ILP naive reduction with noise for one clause instead of |L|",
              reduction_runner(2.0, None, REDUCTION_LOSS, one_clause_noise), REDUCTION_D, REDUCTION_D_PRIME,
              epsilon=2.0, samples=REDUCTION_SAMPLES, events=LOSS_AND_CHOICE, expect_violation=True),
    # (b) a car shared by four trains: removing train 0 moves the counts by 14 in L1, not 5
    AuditCase("ILP naive reduction on a car shared by four trains (a fact not keyed by one example)",
              reduction_runner(2.0, None, SHARED_LOSS), SHARED_D, SHARED_D_PRIME, epsilon=2.0,
              samples=REDUCTION_SAMPLES, events=LOSS_AND_CHOICE, expect_violation=True),
    # (c) pruning, so the alive clauses and beta_i, from exact counts: whether the lattice below
    # the empty clause is evaluated at all then tells D (P = 5) from D' (P = 4) for sure
    AuditCase("ILP relevance-aware reduction pruning on exact counts (beta_i not from noisy counts)",
              reduction_runner(2.0, PRUNING_LEVELS, PRUNING_LOSS, pruning_on_exact_counts, PRUNE_AT), PRUNING_D,
              PRUNING_D_PRIME, epsilon=2.0, samples=RELEVANCE_SAMPLES, events=LOSS_AND_CHOICE, expect_violation=True),
]
