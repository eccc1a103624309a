"""The non-private Aleph-style learner: reduction by breadth-first search, and the covering loop.

Zeng et al.'s baseline (section 5.1, Algorithm 1), which the DP versions of issue 24 reduce:

    reduce      score every legal clause of a bottom clause's lattice by P - N (positives minus
                negatives covered) and return the best, the first among equals in breadth-first
                order (so the shortest); the counts come in as vectors, so a DP reduction passes
                noisy P and N to the same selection
    learn       the covering loop: pick a seed among the positives not yet covered, saturate it,
                reduce its lattice on the remaining positives and all negatives, keep the clause
                when its score exceeds a public minimum, remove the positives it covers, repeat

The result is a `theory.Theory` (printable as Prolog) with a report per clause (seed, bottom
clause size and bound k, lattice size, P and N).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jostle.learners.ilp.modes import TRAIN_MODES, Modes
from jostle.learners.ilp.relations import RelationalDatabase
from jostle.learners.ilp.search import Candidate, Coverage, legal_clauses, saturate
from jostle.learners.ilp.theory import Clause, Theory


def reduce(candidates: list[Candidate], positives: np.ndarray, negatives: np.ndarray) -> int:
    """The index of the best clause by P - N; ties go to the earliest (breadth-first order).

    Args:
        candidates: The clauses, by increasing length.
        positives: P per clause (exact or noisy).
        negatives: N per clause (exact or noisy).
    """
    if not candidates:
        raise ValueError("no clause to choose from")
    return int(np.argmax(np.asarray(positives) - np.asarray(negatives)))


@dataclass(frozen=True)
class ClauseReport:
    """How one clause of a learned theory was found.

    Attributes:
        clause: The clause.
        seed: The seed example's id.
        bottom_size: The bottom clause's size (literals kept).
        bottom_full_size: The literals true of the seed before truncation at k.
        bound: The declared bound k.
        lattice_size: The number of legal clauses scored.
        positives: P, the remaining positives it covered when chosen.
        negatives: N, the negatives it covered.
    """

    clause: Clause
    seed: int
    bottom_size: int
    bottom_full_size: int
    bound: int
    lattice_size: int
    positives: int
    negatives: int

    @property
    def score(self) -> int:
        """P - N."""
        return self.positives - self.negatives


@dataclass(frozen=True)
class LearnedTheory:
    """A learned theory and how each of its clauses was found.

    Attributes:
        theory: The theory (no clauses when none scored above the minimum: it covers nothing).
        reports: One report per clause, in the order learned.
        target: The head predicate's name.
        notes: What else a reader should know (e.g. a DP round that added no clause).
    """

    theory: Theory
    reports: tuple[ClauseReport, ...]
    target: str
    notes: tuple[str, ...] = ()

    def to_prolog(self) -> str:
        """The theory as Prolog text (a comment when it has no clause)."""
        if not self.theory.clauses:
            return f"% no clause for {self.target} scored above the minimum: nothing is covered"
        return self.theory.to_prolog()


def learn(database: RelationalDatabase, modes: Modes = TRAIN_MODES, *, min_score: int = 0,
          max_clauses: int = 10, noise: int | None = None,
          seed: int | np.random.Generator = 0) -> LearnedTheory:
    """Learn a theory with Aleph's covering loop and breadth-first reduction (non-private).

    Args:
        database: The examples (positive and negative) and their facts.
        modes: The language bias: body modes, maximum clause length, bound k on bottom clauses.
        min_score: The public minimum: a clause is kept only when its P - N exceeds it.
        max_clauses: The most clauses learned.
        noise: Aleph's `noise` setting: when given, only clauses covering at most this many
            negatives are acceptable (the paper's Algorithm 1 has no such bound: None).
        seed: Seeds the choice of seed examples (uniform among the uncovered positives).

    Returns:
        The theory and a report per clause.
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    coverage = Coverage(database, modes)
    labels = database.examples.labels
    remaining = labels.copy()
    clauses: list[Clause] = []
    reports: list[ClauseReport] = []
    while len(clauses) < max_clauses and remaining.any():
        example = int(rng.choice(np.flatnonzero(remaining)))
        bottom = saturate(database, modes, int(database.examples.ids[example]))
        candidates = legal_clauses(bottom, modes)
        active = remaining | ~labels
        positives, negatives = coverage.counts(candidates, active)
        if noise is not None:
            positives = np.where(negatives <= noise, positives, np.iinfo(np.int64).min // 2)
        best = reduce(candidates, positives, negatives)
        if positives[best] - negatives[best] <= min_score or positives[best] == 0:
            break
        clause = candidates[best].to_clause(modes)
        clauses.append(clause)
        reports.append(ClauseReport(clause, bottom.seed, bottom.size, bottom.full_size,
                                    bottom.bound, len(candidates), int(positives[best]),
                                    int(negatives[best])))
        remaining &= ~coverage.matrix([candidates[best]])[0]
    return LearnedTheory(Theory(tuple(clauses)), tuple(reports), modes.target)
