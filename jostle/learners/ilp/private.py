"""The DP reductions and the DP ILP covering loop of Zeng, Lantz, Naughton and Page (section 5).

Privacy unit: `entity(example id)`. A neighbouring database has one example more or fewer, and
with it every fact keyed by that example (the paper's footnote 1). Background knowledge shared
by several examples is public, so removing an example changes no other example's facts: the
coverage of every other example by every clause is unchanged.

    naive_reduction      Algorithm 2: P and N of every legal clause, each with two-sided
                         geometric noise at epsilon / |L|
    relevance_reduction  Algorithm 3: level by level (clause length 0..l), epsilon / (l + 1) per
                         level, the noise of level i at epsilon / ((l + 1) beta_i) where beta_i is
                         the number of clauses of level i still alive; clauses below a pruned
                         clause are not evaluated
    dp_learn             Algorithm 4: `rounds` rounds at epsilon / rounds, each a fake seed
                         (`fake`), a reduction, and the removal of the positives the clause covers
    trivial_theory       the trivial Option: every example positive (free), or the majority class
                         from one noisy count

**Sensitivity (Theorem 4, with the paper's typo fixed: line 6 of Algorithm 2 reads q-(E-), the
negatives, not q+(E-)).** For a public set of clauses L, the 2|L| counts (P_h, N_h) for h in L
have L1 sensitivity |L|: the example added or removed is either positive or negative, so for each
clause h it moves exactly one of P_h, N_h, by 1 if h covers it and 0 otherwise, and it moves no
count through any other example (its facts are its own). Each count then gets independent
two-sided geometric noise with P(z) proportional to exp(-(eps/|L|) |z|) (Ghosh, Roughgarden and
Sundararajan 2009); the vector is eps-DP (Dwork et al. 2006, Theorem 1 of the paper). The noise
is drawn exactly by `jostle.privacy.safe_noise.release_counts` on the int64 counts: the exact
discrete Laplace of scale |L| / eps on the integers, which is that geometric law; every release
is recorded for the replay check (claim: L1 move at most |L| unit steps).

**Relevance-aware (Theorem 6).** Level i's clauses are chosen from the lattice (public) and the
noisy counts of levels below i (already released): given those, the beta_i counts of level i
have L1 sensitivity beta_i by the argument above, and noise at eps / ((l + 1) beta_i) makes
level i (eps / (l + 1))-DP. Adaptive sequential composition over the l + 1 levels gives eps.
beta_i, the alive clauses and the best clause are computed from noisy counts only. The paper's
line 3 says "the number of clauses with k atoms"; it means i atoms (the clauses of this level).
A level with no alive clause draws nothing and spends nothing.

**The pruning criterion** (the paper never defines it). A superset S' of S covers a subset of
what S covers, so P(S') <= P(S) and its score P(S') - N(S') <= P(S): no clause below S can beat a
score above P(S). Aleph prunes on that bound; here, on noisy counts: after level i is
released, S is pruned (nothing below it is evaluated) when

    P'(S) + slack * sigma_i < max(min_positives, best')

where best' is the best noisy score P' - N' released so far (this level included), sigma_i the
standard deviation of one count's noise at level i, `slack` (default 1) a public margin against
pruning on noise, and `min_positives` a public minimum positive count (Aleph's minpos). Every
quantity is public or released, so pruning is post-processing.

**The covering loop (Theorem 7).** Round r runs a reduction on the database T_r(D) in which the
positives covered by the clauses released in rounds 1..r-1 are removed. T_r is a 1-stable
transformation under the entity unit: the clauses are public, and whether an example is removed
depends only on its own facts and label, so for D' = D plus one example e, T_r(D') is T_r(D) plus
e (e not covered) or T_r(D) itself (e covered): neighbours or equal. Each round is then
(eps / rounds)-DP in D given the earlier rounds' outputs, and the loop is eps-DP by adaptive
sequential composition. The fake seeds read no data (`fake`), so selection spends nothing.
A round's clause joins the theory only when its noisy score exceeds the public `min_score`
(post-processing; Algorithm 4 adds every round's clause, Aleph's acceptance test refuses bad
ones); the round's budget is spent either way.

**Charging.** `charge(epsilon_step, description)` is called before each step draws (a level, a
round's naive release, the trivial count) with the step's exact epsilon; it raises
`OverBudgetError` to refuse, and then nothing of that step is drawn. The steps of one call add
up to exactly its epsilon when every level runs (less when a level has no alive clause).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Sequence

import numpy as np

from jostle.learners.ilp.aleph import ClauseReport, LearnedTheory
from jostle.learners.ilp.modes import Modes
from jostle.learners.ilp.relations import RelationalDatabase
from jostle.learners.ilp.search import BottomClause, Candidate, Coverage, check_lattice, legal_clauses
from jostle.learners.ilp.theory import Atom, Clause, Theory, Var
from jostle.privacy.safe_noise import release_counts

#: What a learner calls before each noisy step: charge(exact epsilon, description).
Charge = Callable[[Fraction, str], Any]

#: The reductions of `dp_learn`.
METHODS = ("naive", "relevance")

#: The trivial theory's rules.
TRIVIAL_RULES = ("majority", "all_positive")


@dataclass(frozen=True)
class ReductionResult:
    """What a DP reduction released and chose.

    Attributes:
        index: The chosen clause (index into the candidates), best noisy P' - N', the earliest
            (shortest) among equals.
        noisy_positives: P' per candidate (nan where the clause was not evaluated).
        noisy_negatives: N' per candidate (nan where not evaluated).
        evaluated: How many clauses were scored (|L| for the naive reduction).
        epsilon: The budget the reduction ran at (what it may charge).
        level_sizes: beta_i per level evaluated (the naive reduction: one entry, |L|).
    """

    index: int
    noisy_positives: np.ndarray
    noisy_negatives: np.ndarray
    evaluated: int
    epsilon: Fraction
    level_sizes: tuple[int, ...]

    @property
    def noisy_score(self) -> float:
        """The chosen clause's P' - N'."""
        return float(self.noisy_positives[self.index] - self.noisy_negatives[self.index])


def geometric_std(epsilon_per_unit: Fraction | float) -> float:
    """The standard deviation of two-sided geometric noise P(z) ~ exp(-e |z|): sqrt(2a)/(1-a)."""
    alpha = math.exp(-float(epsilon_per_unit))
    return math.sqrt(2 * alpha) / -math.expm1(-float(epsilon_per_unit))  # finite for any e > 0


def _noisy_counts(coverage: Coverage, candidates: Sequence[Candidate], active: np.ndarray,
                  epsilon: Fraction, noise: Any, charge: Charge,
                  description: str) -> tuple[np.ndarray, np.ndarray]:
    """P' and N' of a public set of clauses: charged first, then geometric at eps / |set|.

    Sensitivity: the 2 |set| counts have L1 sensitivity |set| under the entity unit (module
    docstring, Theorem 4), so the whole vector is released at L1 sensitivity |set|.
    """
    charge(epsilon, description)
    positives, negatives = coverage.counts(candidates, active)
    counts = np.concatenate([positives, negatives]).astype(np.int64)
    released = release_counts(noise, counts, len(candidates), epsilon)
    return released[:len(candidates)], released[len(candidates):]


def naive_reduction(coverage: Coverage, candidates: Sequence[Candidate], active: np.ndarray,
                    epsilon: Fraction | float, noise: Any, charge: Charge) -> ReductionResult:
    """Algorithm 2: every legal clause's P and N at eps / |L|; the best noisy P' - N'.

    Args:
        coverage: Coverage over the private database.
        candidates: The legal clauses L of the fake bottom clause (public), by length.
        active: Which examples count (public function of released clauses and each example's
            own facts: the covering loop's remaining examples).
        epsilon: The reduction's budget.
        noise: The noise source (`Randomness` for releases).
        charge: Called once, before the draw, with epsilon.
    """
    if not candidates:
        raise ValueError("no clause to choose from")
    epsilon = Fraction(epsilon)
    positives, negatives = _noisy_counts(coverage, candidates, active, epsilon, noise, charge,
                                         f"naive reduction: P and N of {len(candidates)} clauses")
    best = int(np.argmax(positives - negatives))
    return ReductionResult(best, positives, negatives, len(candidates), epsilon,
                           (len(candidates),))


def _bitmasks(candidates: Sequence[Candidate]) -> np.ndarray:
    """Each clause as a bitmask over the literals it holds (for the subset tests of pruning)."""
    bits: dict[tuple, int] = {}

    def bit(key: tuple) -> int:
        return 1 << bits.setdefault(key, len(bits))

    masks = []
    for c in candidates:
        mask = sum(bit(("head", s)) for s in c.head_tests)
        if c.link is not None:
            mask += bit(("link", c.link)) + sum(bit(("test", c.link, s)) for s in c.tests)
        masks.append(mask)
    if len(bits) > 63:
        raise ValueError(f"the bottom clause has {len(bits)} literals; the relevance-aware "
                         f"reduction supports at most 63 (declare a smaller k)")
    return np.array(masks, dtype=np.uint64)


def relevance_reduction(coverage: Coverage, candidates: Sequence[Candidate], active: np.ndarray,
                        epsilon: Fraction | float, levels: int, noise: Any, charge: Charge,
                        min_positives: int = 0, slack: float = 1.0) -> ReductionResult:
    """Algorithm 3: levels 0..l at eps / (l + 1), noise scaled by the alive clauses beta_i.

    Args:
        coverage: Coverage over the private database.
        candidates: The legal clauses of the fake bottom clause (public), by length; those
            longer than `levels` are ignored.
        active: Which examples count (see `naive_reduction`).
        epsilon: The reduction's budget.
        levels: l, the longest clause evaluated (levels 0..l).
        noise: The noise source.
        charge: Called before each level draws, with epsilon / (l + 1).
        min_positives: The public minimum positive count below which a clause is pruned.
        slack: The public margin of the pruning criterion, in noise standard deviations.
    """
    if levels < 0:
        raise ValueError(f"levels must be at least 0, got {levels}")
    epsilon = Fraction(epsilon)
    per_level = epsilon / (levels + 1)
    lengths = np.array([c.length for c in candidates])
    if not np.any(lengths <= levels):
        raise ValueError("no clause of the lattice is short enough to evaluate")
    masks = _bitmasks(candidates)
    positives = np.full(len(candidates), np.nan)
    negatives = np.full(len(candidates), np.nan)
    pruned = np.zeros(0, dtype=np.uint64)
    best_score = -math.inf
    sizes: list[int] = []
    for level in range(levels + 1):
        rows = np.flatnonzero(lengths == level)
        if len(pruned) and len(rows):
            # a clause is dead when a pruned clause is a subset of it (in the pruned subtree)
            below = (pruned[:, None] & ~masks[rows][None, :]) == 0
            rows = rows[~below.any(axis=0)]
        sizes.append(len(rows))
        if not len(rows):
            continue  # nothing alive at this level: nothing drawn, nothing spent
        level_p, level_n = _noisy_counts(
            coverage, [candidates[i] for i in rows], active, per_level, noise, charge,
            f"relevance-aware reduction, level {level}: P and N of {len(rows)} alive clauses")
        positives[rows], negatives[rows] = level_p, level_n
        best_score = max(best_score, float(np.max(level_p - level_n)))
        threshold = max(float(min_positives), best_score)
        sigma = geometric_std(per_level / len(rows))
        pruned = np.concatenate([pruned, masks[rows][level_p + slack * sigma < threshold]])
    scores = np.where(np.isnan(positives), -np.inf, positives - negatives)
    best = int(np.argmax(scores))
    return ReductionResult(best, positives, negatives, int(np.sum(sizes)), epsilon, tuple(sizes))


def _fakes(fake: BottomClause | Sequence[BottomClause]) -> list[BottomClause]:
    fakes = [fake] if isinstance(fake, BottomClause) else list(fake)
    if not fakes:
        raise ValueError("dp_learn needs at least one fake bottom clause")
    if any(bottom.seed >= 0 for bottom in fakes):
        raise ValueError("dp_learn takes fake bottom clauses only (built by jostle.learners.ilp."
                         "fake from public information): saturating a private example is not "
                         "differentially private")
    return fakes


def dp_learn(database: RelationalDatabase, modes: Modes,
             fake: BottomClause | Sequence[BottomClause], epsilon: Fraction | float, *,
             method: str = "relevance", levels: int = 3, rounds: int = 1, noise: Any,
             charge: Charge, min_score: float = 0, min_positives: int = 0,
             slack: float = 1.0) -> LearnedTheory:
    """Algorithm 4: `rounds` rounds of a DP reduction on a fake seed, with covering removal.

    Args:
        database: The private examples and their facts (entity unit: one example and its facts).
        modes: The language bias (public).
        fake: The fake bottom clause(s) (public); round r uses fake[r % len(fake)].
        epsilon: The whole budget; each round runs at epsilon / rounds (exact).
        method: "relevance" (Algorithm 3, clauses of at most `levels` literals) or "naive"
            (Algorithm 2, clauses of at most `modes.max_clause_length` literals).
        levels: l for the relevance-aware reduction.
        rounds: k, the number of rounds (the most clauses the theory gets).
        noise: The noise source (`Randomness` for releases).
        charge: Called before every step draws, with its exact epsilon.
        min_score: A round's clause joins the theory only when its noisy P' - N' exceeds this.
        min_positives: The relevance-aware pruning's public minimum positive count.
        slack: The relevance-aware pruning's margin, in noise standard deviations.

    Returns:
        The theory, with one report per clause added (noisy P and N, rounded).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    fakes = _fakes(fake)
    epsilon = Fraction(epsilon)
    if epsilon <= 0:
        raise ValueError(f"epsilon must be positive, got {epsilon}")
    per_round = epsilon / rounds
    limit = levels if method == "relevance" else modes.max_clause_length
    for bottom in fakes:  # public, before anything is charged
        check_lattice(bottom, modes, limit)
    coverage = Coverage(database, modes)
    labels = database.examples.labels
    remaining = labels.copy()
    clauses: list[Clause] = []
    reports: list[ClauseReport] = []
    notes: list[str] = []
    for round_number in range(rounds):
        bottom = fakes[round_number % len(fakes)]
        candidates = legal_clauses(bottom, modes, max_length=limit)
        active = remaining | ~labels
        if method == "naive":
            result = naive_reduction(coverage, candidates, active, per_round, noise, charge)
        else:
            result = relevance_reduction(coverage, candidates, active, per_round, levels, noise,
                                         charge, min_positives, slack)
        chosen = candidates[result.index]
        if result.noisy_score <= min_score:
            notes.append(f"round {round_number + 1}: the best clause's noisy score "
                         f"{result.noisy_score:.0f} is not above {min_score}; no clause added")
            continue
        clause = chosen.to_clause(modes)
        clauses.append(clause)
        reports.append(ClauseReport(clause, bottom.seed, bottom.size, bottom.full_size,
                                    bottom.bound, result.evaluated,
                                    int(round(result.noisy_positives[result.index])),
                                    int(round(result.noisy_negatives[result.index]))))
        # the 1-stable transformation of the module docstring: drop the positives it covers
        remaining &= ~coverage.matrix([chosen])[0]
    return LearnedTheory(Theory(tuple(clauses)), tuple(reports), modes.target, tuple(notes))


def everything_clause(modes: Modes) -> Clause:
    """`target(X).`: the clause with no body, which covers every example."""
    return Clause(Atom(modes.target, (Var(modes.variable(modes.head_type)),)), ())


def trivial_theory(database: RelationalDatabase, modes: Modes, epsilon: Fraction | float, *,
                   noise: Any, charge: Charge, rule: str = "majority") -> LearnedTheory:
    """The trivial Option: every example positive, or the majority class from a noisy count.

    "all_positive" reads nothing and spends nothing (it never calls `charge`). "majority"
    releases P - N over all examples with two-sided geometric noise at epsilon: one example
    moves P or N by 1, so the difference has sensitivity 1. The theory is `target(X).` when the
    noisy difference is positive, else the empty theory (every example negative).
    """
    if rule not in TRIVIAL_RULES:
        raise ValueError(f"rule must be one of {', '.join(TRIVIAL_RULES)}, got {rule!r}")
    if rule == "all_positive":
        return LearnedTheory(Theory((everything_clause(modes),)), (), modes.target,
                             ("every example is positive (no data read)",))
    epsilon = Fraction(epsilon)
    charge(epsilon, "trivial theory: the noisy count of positives minus negatives")
    labels = database.examples.labels
    difference = np.array([int(np.sum(labels)) - int(np.sum(~labels))], dtype=np.int64)
    noisy = float(release_counts(noise, difference, 1, epsilon)[0])
    if noisy > 0:
        return LearnedTheory(Theory((everything_clause(modes),)), (), modes.target,
                             (f"majority positive (noisy P - N = {noisy:.0f})",))
    return LearnedTheory(Theory(()), (), modes.target,
                         (f"majority negative (noisy P - N = {noisy:.0f})",))


def planned_cost(epsilon: Fraction | float, rule: str | None = None) -> Fraction:
    """What `dp_learn` (or `trivial_theory` with `rule`) charges at most: epsilon, or 0 for
    the "all_positive" rule."""
    return Fraction(0) if rule == "all_positive" else Fraction(epsilon)
