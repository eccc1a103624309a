"""The log score of a rule list: Letham et al.'s prior and a Dirichlet-multinomial likelihood
whose neighbour sensitivity is exact on the computed values.

Model (Letham, Rudin, McCormick & Madigan, "Interpretable classifiers using rules and Bayesian
analysis", Annals of Applied Statistics 2015, section 2):
  * prior on the list d = (a_1, ..., a_m) drawn from the antecedent set A: the length m is
    Poisson(lambda) truncated to 0..min(|A|, max_length); each antecedent's cardinality c_j is
    Poisson(eta) truncated to the cardinalities that still have unused antecedents; the
    antecedent is uniform among the unused ones of that cardinality;
  * likelihood: the rows each rule captures (satisfying its antecedent and none before it; the
    default rule takes the rest) are multinomial with a Dirichlet(alpha) prior, alpha = (1, ..., 1),
    integrated out: per rule, log Gamma(C) + sum_l log N_l! - log (N + C - 1)!.

The score is kept in integer UNITS of 2^-20 nats so that its sensitivity is an exact property
of the computed numbers (the privacy standard: sensitivities bound the computed values):

  q_i = min(floor(2^20 log i), Q) for i >= 1 (made non-decreasing), Q = q_K, K = row_bound + C - 1,
  LF(x) = q_1 + ... + q_x (integers; LF(x) = LF(K) + (x - K) Q beyond K),
  rule term G(N) = LF(C - 1) + sum_l LF(N_l) - LF(N + C - 1).

Sensitivity (privacy unit: one row added or removed). The added row of class l is captured by
exactly one rule, whose term changes by q_(N_l + 1) - q_(N + C); the other terms and the prior
do not change. As q is non-decreasing and N_l + 1 <= N + C, the change lies in [-Q, 0]: the
score moves by at most Q units, exactly, in integers. Q / 2^20 <= log(row_bound + C - 1), which
is the thesis' log(n + 1) (Belardo 2018, Lemma 2) for C = 2 with n replaced by the PUBLIC
`row_bound`. The sensitivity holds at ANY table size, also above the bound: past K every q_i
is clipped to Q (the likelihood then grows linearly in the counts, a slightly different model
for tables larger than declared), so nothing needs to check the private size. Below the bound
the score is the textbook log posterior to within 2^-20 nats per factorial term.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

UNIT_BITS = 20
UNIT = 1 << UNIT_BITS           # score units per nat
SCORE_LIMIT = 1 << 52           # scores are clamped to +-2^52 units: exact as doubles after / UNIT


@dataclass
class LogFactorials:
    """The clipped integer log-factorials LF(x) of the module docstring.

    Args:
        row_bound: The public upper bound on the rows (declared; never read from the data).
        n_classes: C, the number of classes.
    """

    row_bound: int
    n_classes: int
    _table: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if int(self.row_bound) < 1:
            raise ValueError(f"the row bound must be a whole number >= 1, got {self.row_bound!r}")
        self.row_bound = int(self.row_bound)
        self.knee = self.row_bound + self.n_classes - 1   # K: q_i is clipped to Q from here on
        self.Q = int(math.floor(math.log(self.knee) * UNIT)) if self.knee > 1 else 0
        self._table = [0]

    @property
    def sensitivity_units(self) -> int:
        """Q: the most one row can move a score, in units."""
        return self.Q

    def _grow(self, top: int) -> None:
        """Extend the table to cover LF(0..top) (top <= K)."""
        start = len(self._table)
        if top < start:
            return
        i = np.arange(start, top + 1, dtype=np.float64)
        q = np.minimum(np.floor(np.log(np.maximum(i, 1.0)) * UNIT), float(self.Q)).astype(np.int64)
        q = np.maximum.accumulate(np.concatenate([[self._q_last()], q]))[1:]  # non-decreasing
        last = self._table[-1]
        self._table.extend((last + np.cumsum(q)).tolist())

    def _q_last(self) -> int:
        if len(self._table) < 2:
            return 0
        return self._table[-1] - self._table[-2]

    def __call__(self, x: int) -> int:
        """LF(x) for a whole x >= 0."""
        if x <= self.knee:
            if x >= len(self._table):
                self._grow(max(x, min(2 * len(self._table), self.knee)))
            return self._table[x]
        self._grow(self.knee)
        return self._table[self.knee] + (x - self.knee) * self.Q

    def rule_units(self, counts: Sequence[int]) -> int:
        """G(N): one rule's integrated likelihood, in units."""
        total = 0
        size = 0
        for count in counts:
            total += self(int(count))
            size += int(count)
        return self(self.n_classes - 1) + total - self(size + self.n_classes - 1)


def truncated_poisson_log(value: int, rate: float, support: Sequence[int]) -> float:
    """log P(value) for Poisson(rate) truncated to `support` (-inf outside it)."""
    if value not in support:
        return -math.inf
    logs = [k * math.log(rate) - math.lgamma(k + 1) for k in support]
    top = max(logs)
    normaliser = top + math.log(sum(math.exp(v - top) for v in logs))
    return value * math.log(rate) - math.lgamma(value + 1) - normaliser


@dataclass
class RuleListPrior:
    """Letham et al.'s prior over lists of distinct antecedents (public: no data is read).

    Args:
        cardinalities: The cardinality of each antecedent of the set A.
        list_length: lambda, the prior mean of the list length.
        antecedent_length: eta, the prior mean of an antecedent's cardinality.
        max_length: The longest list allowed (the length prior is truncated there too).
    """

    cardinalities: Sequence[int]
    list_length: float = 3.0
    antecedent_length: float = 1.0
    max_length: int = 4

    def __post_init__(self) -> None:
        if not self.list_length > 0 or not self.antecedent_length > 0:
            raise ValueError("lambda and eta must be > 0")
        self.cardinalities = [int(c) for c in self.cardinalities]
        self.longest = min(len(self.cardinalities), int(self.max_length))
        self._by_cardinality: dict[int, int] = {}
        for c in self.cardinalities:
            self._by_cardinality[c] = self._by_cardinality.get(c, 0) + 1
        self._units_by_cardinalities: dict[tuple[int, ...], int] = {}
        self._length_logs = [truncated_poisson_log(m, self.list_length, range(self.longest + 1))
                             for m in range(self.longest + 1)]

    def log_prior(self, rule_list: Sequence[int]) -> float:
        """log p(d) in nats (-inf for a list outside the support)."""
        m = len(rule_list)
        if m > self.longest or len(set(rule_list)) != m:
            return -math.inf
        total = self._length_logs[m]
        left = dict(self._by_cardinality)
        eta = self.antecedent_length
        for index in rule_list:
            c = self.cardinalities[index]
            available = [k for k, count in left.items() if count > 0]
            total += truncated_poisson_log(c, eta, available) - math.log(left[c])
            left[c] -= 1
        return total

    def units(self, rule_list: Sequence[int]) -> int:
        """The log prior in whole units (rounded down; a public function of the list).

        Memoised by the list's sequence of cardinalities (for lists of distinct antecedents,
        `log_prior` reads nothing else: the truncated Poissons and the counts left per
        cardinality follow from that sequence), so enumerating thousands of lists computes each
        distinct prior once; the values are exactly those of `log_prior`."""
        if len(set(rule_list)) != len(rule_list):
            return int(math.floor(self.log_prior(rule_list) * UNIT))
        key = tuple(self.cardinalities[i] for i in rule_list)
        cached = self._units_by_cardinalities.get(key)
        if cached is None:
            cached = self._units_by_cardinalities[key] = int(math.floor(self.log_prior(rule_list) * UNIT))
        return cached


def clamp_units(score: int) -> int:
    """Clamp a score into [-2^52, 2^52] units (1-Lipschitz: the sensitivity is kept)."""
    return max(-SCORE_LIMIT, min(SCORE_LIMIT, int(score)))


class ListScorer:
    """Scores of rule lists over one table's bitsets: prior + likelihood, in units.

    Args:
        masks: Each antecedent's bitset over the rows.
        class_bits: Each class's bitset.
        everything: The bitset of all rows.
        prior: The prior over lists of these antecedents.
        factorials: The clipped log-factorials (they fix the sensitivity).
    """

    def __init__(self, masks: Sequence[int], class_bits: Sequence[int], everything: int, prior: RuleListPrior,
                 factorials: LogFactorials) -> None:
        self.masks = list(masks)
        self.class_bits = list(class_bits)
        self.everything = everything
        self.prior = prior
        self.factorials = factorials

    def likelihood_units(self, rule_list: Sequence[int]) -> int:
        """sum over the rules (default included) of G(captured class counts)."""
        remaining = self.everything
        total = 0
        rule_units = self.factorials.rule_units
        for index in rule_list:
            mask = self.masks[index]
            captured = mask & remaining
            remaining &= ~mask
            total += rule_units([(captured & c).bit_count() for c in self.class_bits])
        return total + rule_units([(remaining & c).bit_count() for c in self.class_bits])

    def units(self, rule_list: Sequence[int]) -> int:
        """The clamped log score (prior + likelihood) in units."""
        return clamp_units(self.prior.units(rule_list) + self.likelihood_units(rule_list))

    def nats(self, rule_list: Sequence[int]) -> float:
        """The log score in nats (for reports and the chain)."""
        return self.units(rule_list) / UNIT


class MajorityCounts:
    """The "majority" list utility: each rule scores the rows of its majority class, in units.

    A list's utility is the number of rows it classifies correctly when every rule (the default
    included) predicts the majority class of the rows it captures: sum over rules of
    max_l N_l. It plays the part of `LogFactorials` in a `ListScorer` (`rule_units`,
    `sensitivity_units`), so the enumeration and the samplers are shared.

    Sensitivity (privacy unit: one row added or removed). The added row of class l is captured
    by exactly one rule; that rule's max_l N_l rises by 0 or 1 and no other rule moves, so every
    list's utility moves by a value in [0, 1] row: sensitivity exactly 1, all in one direction
    (monotone; the row bound does not enter). In units: [0, UNIT], exact integers. With the
    BRL likelihood the sensitivity is log(row_bound + C - 1) nats for a score whose differences
    between lists are of the order of n times an information gain; here it is 1 for differences
    of the order of n times an accuracy gain, which is why this utility separates lists at
    budgets where the posterior cannot (Friedman and Schuster 2010 make the same argument for
    the max operator in trees).
    """

    sensitivity_units = UNIT

    def __init__(self, n_classes: int) -> None:
        self.n_classes = int(n_classes)

    def rule_units(self, counts: Sequence[int]) -> int:
        """max_l N_l of one rule's captured class counts, in units."""
        return max((int(c) for c in counts), default=0) * UNIT


class ScaledPrior:
    """A public prior folded into an exponential mechanism as its base measure.

    Drawing d with P(d) ~ p(d) exp(eps u(d) / Delta) is the exponential mechanism with the
    utility u(d) + Delta log p(d) / eps: the added term reads only d and public parameters, so it
    is identical on neighbours and the sensitivity and direction of u are kept. `units(d)` is
    that term in whole units, floor(Delta_units * prior_units(d) / (eps UNIT)), computed exactly
    (integers and a Fraction), so neighbouring scores still differ by exactly u's change.

    Args:
        prior: The prior over lists (`RuleListPrior`).
        epsilon: The budget of the draw the prior is folded into (> 0).
        sensitivity_units: Delta of the utility, in units.
    """

    def __init__(self, prior: RuleListPrior, epsilon: Any, sensitivity_units: int) -> None:
        self.prior = prior
        self.longest = prior.longest
        self.scale = Fraction(int(sensitivity_units), UNIT) / Fraction(epsilon)
        if self.scale <= 0:
            raise ValueError("the budget of a draw with a prior must be > 0")

    def units(self, rule_list: Sequence[int]) -> int:
        return math.floor(self.prior.units(rule_list) * self.scale)
