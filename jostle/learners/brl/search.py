"""Searching rule lists: Letham et al.'s Metropolis-Hastings chain and the exact exponential
mechanism over an enumerated candidate set.

The chain (Letham, Rudin, McCormick & Madigan 2015, section 3): from a list d, choose a move
uniformly among those possible (swap two antecedents if m >= 2; add an unused antecedent if
m < min(|A|, max_length); delete one if m >= 1), then choose its arguments uniformly (two
positions; an unused antecedent and one of m + 1 positions; a position). With k(m) the number
of moves possible at length m and M = |A|, the Hastings ratios q(d | d*) / q(d* | d) are

    swap:   1
    add:    k(m) (M - m) / k(m + 1)          (reverse: delete one of the m + 1 positions)
    delete: k(m) / (k(m - 1) (M - m + 1))    (reverse: add that antecedent back at its place)

and d* is accepted with probability min(1, exp(beta (S(d*) - S(d))) * ratio), S the log score
(`jostle.learners.brl.scoring`), beta = 1 for the posterior and eps / Delta for the
exponential mechanism's distribution (monotone scores: `exponential_mechanism_list`). `tests/test_brl_search.py` checks the chain's long-run
frequencies against the enumerated target.

What a chain does NOT give: a chain run for finitely many steps is not a sample of its target,
so its output carries no differential-privacy guarantee by itself. If its law were within total
variation delta of the exponential mechanism's on every table, it would be
(eps, (1 + e^eps) delta)-DP; no bound on delta is proved for this chain, so a private fit uses
the EXACT sampler (`enumerate_lists` + `choose_exponential`) unless the caller opts into the
chain and its weaker, unproved claim (see `jostle.learners.brl.estimators`).

Convergence diagnostics (`ChainDiagnostics`): per window of 250 steps, the mean and standard
deviation of the log score, the acceptance rate and the best score; and Geweke's z between the
first tenth and the last half of the steps after burn-in. They read the data: a private chain's
diagnostics are private and are never released.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from jostle.learners.brl.scoring import UNIT, ListScorer
from jostle.privacy.safe_noise import choose_exponential

WINDOW = 250


def candidate_count(n_antecedents: int, max_length: int) -> int:
    """How many ordered lists of distinct antecedents have length <= max_length (public)."""
    total, term = 1, 1
    for m in range(1, min(n_antecedents, max_length) + 1):
        term *= n_antecedents - m + 1
        total += term
    return total


def moves_possible(m: int, n_antecedents: int, longest: int) -> tuple[bool, bool, bool]:
    """(swap, add, delete) possible at length m."""
    return m >= 2, m < min(n_antecedents, longest), m >= 1


def _move_count(m: int, n_antecedents: int, longest: int) -> int:
    return sum(moves_possible(m, n_antecedents, longest))


@dataclass
class ChainDiagnostics:
    """Convergence diagnostics of one chain (windows of `WINDOW` steps).

    Attributes:
        windows: Per window: first step, mean and sd of the log score (nats), acceptance rate,
            best log score.
        geweke_z: (mean of the first tenth - mean of the last half) / their standard error,
            after burn-in (|z| < 2 is consistent with a stationary chain); NaN if too short.
        burn_in: Steps discarded before the MAP and Geweke's z.
    """

    windows: list[dict[str, float]] = field(default_factory=list)
    geweke_z: float = math.nan
    burn_in: int = 0

    @classmethod
    def of(cls, scores: np.ndarray, accepted: np.ndarray, burn_in: int) -> ChainDiagnostics:
        windows = []
        for start in range(0, len(scores), WINDOW):
            part, took = scores[start:start + WINDOW], accepted[start:start + WINDOW]
            windows.append({"start": float(start), "mean": float(np.mean(part)), "sd": float(np.std(part)),
                            "acceptance": float(np.mean(took)), "best": float(np.max(part))})
        kept = scores[burn_in:]
        z = math.nan
        if len(kept) >= 20:
            first, last = kept[: len(kept) // 10], kept[len(kept) // 2:]
            se = math.sqrt(np.var(first) / len(first) + np.var(last) / len(last))
            z = float((np.mean(first) - np.mean(last)) / se) if se > 0 else 0.0
        return cls(windows, z, burn_in)

    def summary(self) -> str:
        """One line per window."""
        lines = [f"steps {int(w['start'])}-{int(w['start']) + WINDOW - 1}: log score mean {w['mean']:.2f} "
                 f"(sd {w['sd']:.2f}), acceptance {w['acceptance']:.2f}, best {w['best']:.2f}" for w in self.windows]
        lines.append(f"Geweke z after burn-in {self.burn_in}: {self.geweke_z:.2f}")
        return "\n".join(lines)


@dataclass
class ChainResult:
    """What a chain returns: its last state, the best state after burn-in, its trace."""

    last: tuple[int, ...]
    best: tuple[int, ...]
    best_score: float
    scores: np.ndarray
    diagnostics: ChainDiagnostics
    states: list[tuple[int, ...]] | None = None


def _uniform_index(noise: Any, bound: int) -> int:
    return int(noise.integers_below(int(bound), 1)[0])


def run_chain(scorer: ListScorer, steps: int, noise: Any, beta: float = 1.0, burn_in: int = 0,
              start: Sequence[int] = (), keep_states: bool = False) -> ChainResult:
    """Letham et al.'s Metropolis-Hastings chain on exp(beta * S(d)) * (its support).

    Args:
        scorer: The log score of lists over the antecedent set.
        steps: How many proposals.
        noise: Randomness for proposals and acceptance (integers_below, uniform).
        beta: The inverse temperature (1: the posterior; eps / Delta: the exponential
            mechanism's distribution, `mechanism_beta`).
        burn_in: Steps before the best state is looked for.
        start: The starting list (empty by default).
        keep_states: Also return the state after every step (tests).
    """
    n_antecedents = len(scorer.masks)
    longest = scorer.prior.longest
    current = list(start)
    current_score = scorer.units(current)
    best, best_score = tuple(current), -math.inf
    scores = np.empty(steps)
    accepted = np.zeros(steps, dtype=bool)
    uniforms = noise.uniform(steps) if steps else np.empty(0)
    states: list[tuple[int, ...]] | None = [] if keep_states else None
    for step in range(steps):
        m = len(current)
        swap, add, delete = moves_possible(m, n_antecedents, longest)
        moves = [name for name, ok in (("swap", swap), ("add", add), ("delete", delete)) if ok]
        if moves:
            move = moves[_uniform_index(noise, len(moves))]
            proposal = list(current)
            if move == "swap":
                i = _uniform_index(noise, m)
                j = _uniform_index(noise, m - 1)
                j += j >= i
                proposal[i], proposal[j] = proposal[j], proposal[i]
                log_ratio = 0.0
            elif move == "add":
                used = set(current)
                unused = [a for a in range(n_antecedents) if a not in used]
                antecedent = unused[_uniform_index(noise, len(unused))]
                proposal.insert(_uniform_index(noise, m + 1), antecedent)
                log_ratio = math.log(len(moves) * (n_antecedents - m) / _move_count(m + 1, n_antecedents, longest))
            else:
                del proposal[_uniform_index(noise, m)]
                log_ratio = math.log(len(moves) / (_move_count(m - 1, n_antecedents, longest)
                                                   * (n_antecedents - m + 1)))
            proposed_score = scorer.units(proposal)
            log_accept = beta * (proposed_score - current_score) / UNIT + log_ratio
            if log_accept >= 0 or uniforms[step] < math.exp(log_accept):
                current, current_score = proposal, proposed_score
                accepted[step] = True
        scores[step] = current_score / UNIT
        if states is not None:
            states.append(tuple(current))
        if step >= burn_in and current_score / UNIT > best_score:
            best, best_score = tuple(current), current_score / UNIT
    if steps == 0 or best_score == -math.inf:
        best, best_score = tuple(current), current_score / UNIT
    return ChainResult(tuple(current), best, best_score, scores, ChainDiagnostics.of(scores, accepted, burn_in),
                       states)


def enumerate_lists(scorer: ListScorer) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Every list of distinct antecedents up to the prior's longest length, with its score.

    Depth-first, so each list's captures extend its prefix's (one AND-NOT and C popcounts per
    list). Returns the lists and their clamped scores in units (int64).
    """
    factorials, class_bits = scorer.factorials, scorer.class_bits
    masks, prior = scorer.masks, scorer.prior
    longest = prior.longest
    lists: list[tuple[int, ...]] = []
    scores: list[int] = []

    def visit(prefix: tuple[int, ...], remaining: int, prefix_units: int) -> None:
        default = factorials.rule_units([(remaining & c).bit_count() for c in class_bits])
        total = prior.units(prefix) + prefix_units + default
        lists.append(prefix)
        scores.append(max(-(1 << 52), min(1 << 52, total)))
        if len(prefix) >= longest:
            return
        for index in range(len(masks)):
            if index in prefix:
                continue
            captured = masks[index] & remaining
            units = factorials.rule_units([(captured & c).bit_count() for c in class_bits])
            visit(prefix + (index,), remaining & ~masks[index], prefix_units + units)

    visit((), scorer.everything, 0)
    return lists, np.asarray(scores, dtype=np.int64)


def exponential_mechanism_list(scorer: ListScorer, noise: Any, epsilon: Any) -> tuple[int, ...]:
    """One list from P(d) proportional to exp(eps * S(d) / Delta), exactly: eps-DP.

    The candidate set (every list of the PUBLIC antecedent set up to the public max_length) is
    enumerated; S is the clamped integer score whose neighbour sensitivity is exactly
    Delta = Q units (`scoring`); `choose_exponential` samples the mechanism exactly on an exact
    source (Randomness) from the scores' exact binary values (S / 2^20 is exact as a double).
    The caller has charged `epsilon`.

    Why the factor is eps / Delta and not eps / (2 Delta) (McSherry & Talwar 2007, Thm 6 and
    the remark on monotone utilities; Dwork & Roth 2014, Remark after Thm 3.10). Take D' = D
    plus one row (the other direction is the same pair read backwards). Conditioned on the
    released antecedent set and the public max_length, row bound and lambda / eta (adaptive
    composition: they are fixed before this step), the candidate lists are the same on D and
    D', and for EVERY list d the COMPUTED score moves by S(D', d) - S(D, d) in [-Q, 0]:
      * likelihood: the row (class l) is captured by exactly one rule of d; that rule's term
        G = LF(C - 1) + sum_l LF(N_l) - LF(N + C - 1) changes by q(N_l + 1) - q(N + C); the
        other rules' terms do not change. `LogFactorials` makes q non-decreasing (a running
        maximum over the floored, clipped logs) with 0 = q(1) <= q(i) <= Q, and
        N_l + 1 <= N + C, so the change is in [-Q, 0]. Past the knee K every q is Q, which
        keeps both properties (the clipping is what makes the sensitivity hold at any size);
      * prior: `RuleListPrior.units(d)` reads only d and the public cardinalities: it does not
        move (0 is in [-Q, 0]), and flooring it to units is a function of d alone;
      * clamp to +-2^52 units (`clamp_units`, and the same clamp below): a non-decreasing,
        1-Lipschitz map, so a move in [-Q, 0] stays a move in [-Q, 0] (same direction, no
        larger); in practice scores are <= 0 and above -2^52 units, and the clamp never acts;
      * the division by 2^20 is exact (|units| <= 2^52), so the utilities are the scores.
    So all utilities move in one direction by at most Delta. Then with w = exp(eps S / Delta):
    P(d | D) / P(d | D') = exp(eps (S(D,d) - S(D',d)) / Delta) * Z(D') / Z(D) <= e^eps * 1,
    since S(D,d) - S(D',d) <= Delta and every weight shrinks from D to D' (Z(D') <= Z(D)); and
    P(d | D') / P(d | D) <= 1 * Z(D) / Z(D') <= e^eps, since each weight shrinks by at most
    e^eps. Nothing in the score is non-monotone, so no part keeps the factor 2. The replay
    claim is "linf <= Delta, monotone", which the replay fuzzer checks on neighbours.

    With the majority utility (`scoring.MajorityCounts`, Delta = 1 row) every list's score moves
    UP, by 0 or 1 row, and the public base-measure term (`scoring.ScaledPrior`) does not move;
    the argument is the same read the other way round (each weight grows by at most e^eps and
    so does the normaliser).
    """
    lists, units = enumerate_lists(scorer)
    utilities = units.astype(np.float64) / UNIT   # exact: |units| <= 2^52
    sensitivity = max(scorer.factorials.sensitivity_units, 1) / UNIT
    return lists[choose_exponential(noise, utilities, sensitivity, epsilon, monotone=True)]


def greedy_exponential_list(scorer: ListScorer, noise: Any, charge: Callable[[], Any],
                            allow_stop: bool = True) -> tuple[int, ...]:
    """A list built one rule at a time, each rule one draw of the exponential mechanism.

    Step k offers the released prefix d_(k-1) itself ("stop", unless `allow_stop` is False) and
    every d_(k-1) + (a,) with a an unused antecedent, scored by the full list's utility
    (`scorer.units`: the default rule takes what the prefix leaves), and draws one with
    P ~ exp(eps_k S / Delta), eps_k = `charge()` (called before each draw; it charges the step
    and returns its epsilon). The walk ends at "stop" or at the prior's longest length (or when
    no antecedent is left). Without the stop, the number of steps is a public function of the
    prior's longest length and the antecedent count: a prior that lets lists stop early (a small
    lambda) no longer cuts short lists that still gain rows at each step.

    Privacy (privacy unit: one row added or removed). Conditioned on the released prefix, the
    candidates are public and each one's computed score moves between neighbours by a value in
    [0, Delta] for the majority utility (or [-Delta, 0] for the posterior; `scoring`), all in
    one direction, so step k is eps_k-DP by the monotone argument of
    `exponential_mechanism_list`; the steps compose sequentially (adaptive composition), and
    whether a step runs depends only on the released prefix, so the charges are a function of
    released values. A base-measure prior (`ScaledPrior`) must be scaled to each step's
    epsilon by the caller; it is public either way.
    """
    chosen: tuple[int, ...] = ()
    longest = scorer.prior.longest
    sensitivity = max(scorer.factorials.sensitivity_units, 1) / UNIT
    while len(chosen) < min(longest, len(scorer.masks)):
        epsilon = charge()
        candidates = [chosen] if allow_stop else []
        candidates += [chosen + (a,) for a in range(len(scorer.masks)) if a not in chosen]
        utilities = np.array([scorer.units(c) for c in candidates], dtype=np.float64) / UNIT  # exact: |units| <= 2^52
        picked = candidates[choose_exponential(noise, utilities, sensitivity, epsilon, monotone=True)]
        if picked == chosen:
            break
        chosen = picked
    return chosen


def labelled_candidate_count(n_antecedents: int, n_classes: int) -> int:
    """How many labelled lists `labelled_rule_draw` draws among (public): C "always d" and, per
    antecedent, C (C - 1) "if a then r else d"."""
    return n_classes + n_antecedents * n_classes * (n_classes - 1)


def labelled_rule_utilities(masks: Sequence[int], class_bits: Sequence[int],
                            everything: int) -> tuple[list[tuple[int | None, int, int]], np.ndarray]:
    """The candidates of `labelled_rule_draw` and their utilities (rows classified correctly).

    Returns:
        (candidates, utilities): candidate (a, r, d) is the list "if a then class r, else class
        d" (a an antecedent index, r != d), and (None, d, d) the empty list "always class d"; its
        utility is N(a, r) + N(not a, d), the rows it classifies correctly (an int64 array).
    """
    totals = [c.bit_count() for c in class_bits]
    n_classes = len(class_bits)
    candidates: list[tuple[int | None, int, int]] = [(None, d, d) for d in range(n_classes)]
    utilities = list(totals)
    for index, mask in enumerate(masks):
        captured = [(mask & everything & c).bit_count() for c in class_bits]
        for rule_class in range(n_classes):
            for default_class in range(n_classes):
                if rule_class != default_class:
                    candidates.append((index, rule_class, default_class))
                    utilities.append(captured[rule_class] + totals[default_class] - captured[default_class])
    return candidates, np.asarray(utilities, dtype=np.int64)


def labelled_rule_draw(masks: Sequence[int], class_bits: Sequence[int], everything: int, noise: Any,
                       epsilon: Any) -> tuple[int | None, int, int]:
    """One rule together with its class and the default rule's class, by one exponential draw.

    The candidates are every "if a then class r else class d" (a an antecedent, r != d) and
    every "always class d"; the utility is the rows the list classifies correctly, and the draw
    is P ~ exp(eps u) over the candidates (uniform base measure). The classes are part of what
    is released, so a rule's direction costs nothing beyond the draw: at small eps x rows, where
    noisy capture counts cannot tell a rule's majority class, the drawn class still can.

    Privacy (privacy unit: one row added or removed). A row of class y lies, for each candidate,
    either in the rows its rule captures or in the rest, and it adds 1 to the candidate's
    utility exactly when the class given to that part is y: every utility moves by 0 or +1 when
    a row is added (0 or -1 when one is removed), all in one direction, so sensitivity 1 with
    monotone utilities and exp(eps u) is eps-DP (McSherry and Talwar, as
    `exponential_mechanism_list`). The candidates are public (the antecedents and the classes),
    the utilities are whole row counts, exact as doubles.

    Returns:
        (antecedent index or None for the empty list, the rule's class, the default's class).
    """
    candidates, utilities = labelled_rule_utilities(masks, class_bits, everything)
    return candidates[choose_exponential(noise, utilities.astype(np.float64), 1.0, epsilon, monotone=True)]


def mechanism_beta(epsilon: Any, sensitivity_units: int) -> float:
    """The inverse temperature eps / Delta of the (monotone) exponential mechanism's law, for
    the chain that targets it (`run_chain`; see `exponential_mechanism_list`)."""
    return float(epsilon) / (max(int(sensitivity_units), 1) / UNIT)
