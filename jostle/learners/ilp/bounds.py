"""What the privacy-utility trade-off of DP ILP looks like before any data is read.

**Theorem 3 of Zeng et al., stated correctly.** Let the hypothesis space be the conjunctions of
n atoms (here the k literals of the fake bottom clause), the databases hold m examples (a public
upper bound), and (delta, eta) be a usefulness requirement (Definition 6: on EVERY database of
that size, with probability at least 1 - eta, the output is delta-useful). Then no eps-DP
learner meets the requirement on every such database unless

    eps >= ln(2^n (1 - eta)) / (2 ((1 - delta) m + 1)).

The proof builds two databases D and D' that differ in (1 - delta) m + 1 examples, each a
replacement, i.e. 2 ((1 - delta) m + 1) additions or removals (our unit), and uses group privacy:
1 - eta <= Pr[f(D') = h3] <= e^{2 eps ((1 - delta) m + 1)} Pr[f(D) = h3] <= e^{...} / 2^n.
It is a worst case over all databases of m examples, built from two adversarial ones. It does
NOT say that no useful theory can come out of a given database at a smaller eps; at n = 10,
m = 1,000, delta = 0.9, eta = 0.1 it is only 0.034. (With 2^n (1 - eta) <= 1 the bound is 0.)

**The noise of the two reductions**, also public: the naive reduction puts two-sided geometric
noise at eps_round / |L| on each count (std sqrt(2a) / (1 - a), a = exp(-eps_round / |L|)); the
relevance-aware one at eps_round / ((l + 1) beta_i) on level i, where beta_i is at most the number
of legal clauses of length i (fewer when pruning removes some), so the worst case per level is
computable from the fake bottom clause alone. `report` gathers both, with k and the lattice size.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

from jostle.learners.ilp.modes import Modes
from jostle.learners.ilp.private import geometric_std
from jostle.learners.ilp.search import BottomClause, legal_clauses


def theorem3_epsilon(n_atoms: int, max_examples: int, delta: float, eta: float) -> float:
    """The eps below which no eps-DP learner is (delta, eta)-useful on every database of m examples.

    Args:
        n_atoms: n, the atoms of the hypothesis space (2^n conjunctions).
        max_examples: m, a public upper bound on the number of examples.
        delta: The usefulness fraction, in (0, 1).
        eta: The failure probability, in (0, 1).
    """
    if n_atoms < 0 or max_examples < 0:
        raise ValueError("n_atoms and max_examples must not be negative")
    if not (0 < delta < 1 and 0 < eta < 1):
        raise ValueError(f"delta and eta must lie in (0, 1), got {delta} and {eta}")
    numerator = n_atoms * math.log(2) + math.log1p(-eta)
    return max(numerator, 0.0) / (2 * ((1 - delta) * max_examples + 1))


def naive_std(lattice_size: int, epsilon: Fraction | float) -> float:
    """The std of one count's noise in the naive reduction (geometric at eps / |L|)."""
    return geometric_std(Fraction(epsilon) / lattice_size)


def relevance_stds(level_sizes: Sequence[int], epsilon: Fraction | float,
                   levels: int) -> list[float]:
    """Per level 0..l, the std of one count's noise with no pruning (beta_i = level size);
    0 for an empty level (nothing is drawn)."""
    per_level = Fraction(epsilon) / (levels + 1)
    return [geometric_std(per_level / size) if size else 0.0 for size in level_sizes[:levels + 1]]


@dataclass(frozen=True)
class PrivacyUtilityReport:
    """The public facts of a DP ILP run, computable before any data is read.

    Attributes:
        k: The fake bottom clause's literals (the atoms of the hypothesis space).
        k_full: The literals before the cut at the bound.
        bound: The declared bound on k.
        epsilon: The whole budget; rounds: the rounds it is split over.
        levels: l of the relevance-aware reduction.
        naive_lattice: |L| of the naive reduction (legal clauses up to the maximum length).
        level_sizes: Legal clauses of each length 0..l.
        naive_std: The std of one count's noise in the naive reduction, per round.
        relevance_stds: The same per level of the relevance-aware one (no pruning).
        max_examples, delta, eta: Theorem 3's inputs; lower_bound: its epsilon.
    """

    k: int
    k_full: int
    bound: int
    epsilon: Fraction
    rounds: int
    levels: int
    naive_lattice: int
    level_sizes: tuple[int, ...]
    naive_std: float
    relevance_stds: tuple[float, ...]
    max_examples: int
    delta: float
    eta: float
    lower_bound: float

    def as_dict(self) -> dict:
        """The report as JSON-ready values."""
        return {"k": self.k, "k_full": self.k_full, "bound": self.bound,
                "epsilon": float(self.epsilon), "rounds": self.rounds, "levels": self.levels,
                "naive_lattice": self.naive_lattice, "level_sizes": list(self.level_sizes),
                "naive_std": self.naive_std, "relevance_stds": list(self.relevance_stds),
                "max_examples": self.max_examples, "delta": self.delta, "eta": self.eta,
                "theorem3_epsilon": self.lower_bound}

    def text(self) -> str:
        """The report as text for a person."""
        cut = f" (cut from {self.k_full} at the bound k = {self.bound})" if self.k_full > self.k else ""
        per_level = ", ".join(f"level {i}: {size} clauses, std {std:.1f}"
                              for i, (size, std) in enumerate(zip(self.level_sizes,
                                                                  self.relevance_stds)))
        return "\n".join([
            f"fake bottom clause: {self.k} literals{cut}; its lattice has up to 2^{self.k} "
            f"clauses",
            f"budget: epsilon {float(self.epsilon):g} over {self.rounds} round(s), "
            f"{float(self.epsilon / self.rounds):g} each",
            f"naive reduction: |L| = {self.naive_lattice} legal clauses, noise std "
            f"{self.naive_std:.1f} on every count",
            f"relevance-aware reduction (l = {self.levels}, eps/{self.levels + 1} per level, "
            f"worst case without pruning): {per_level}",
            f"Theorem 3: for n = {self.k} atoms and at most {self.max_examples} examples, no "
            f"epsilon-DP learner is ({self.delta:g}, {self.eta:g})-useful on every such "
            f"database below epsilon = {self.lower_bound:.4g}. This is a worst case over all "
            f"databases of that size; it does not say that this database yields no useful "
            f"theory.",
        ])


def report(modes: Modes, fake: BottomClause, epsilon: Fraction | float, *, rounds: int = 1,
           levels: int = 3, max_examples: int, delta: float = 0.9,
           eta: float = 0.1) -> PrivacyUtilityReport:
    """The public facts of a run: k, both reductions' noise, and Theorem 3's bound.

    Args:
        modes: The language bias (its maximum clause length bounds the naive lattice).
        fake: The fake bottom clause (public).
        epsilon: The whole budget.
        rounds: The rounds of the covering loop.
        levels: l of the relevance-aware reduction.
        max_examples: A public upper bound on the number of examples.
        delta, eta: The usefulness requirement of Theorem 3.
    """
    epsilon = Fraction(epsilon)
    per_round = epsilon / rounds
    naive = legal_clauses(fake, modes)
    lengths = Counter(candidate.length for candidate in legal_clauses(fake, modes, max_length=levels))
    sizes = tuple(lengths.get(i, 0) for i in range(levels + 1))
    return PrivacyUtilityReport(
        fake.size, fake.full_size, fake.bound, epsilon, rounds, levels, len(naive), sizes,
        naive_std(len(naive), per_round), tuple(relevance_stds(sizes, per_round, levels)),
        max_examples, delta, eta, theorem3_epsilon(fake.size, max_examples, delta, eta))
