"""DP-BRL on integer codes: the private pipeline (Belardo 2018, with private mining) and the
non-private BRL baseline (Letham et al. 2015), without any table or estimator plumbing.

Private fit with budget eps (privacy unit: one row added or removed; the steps compose
sequentially, `accounting.BudgetSplit`):
  1. antecedents: mined privately (`mining.mine_private`, eps_mine) or taken from the public
     schema (every single item, or every itemset up to `public_cardinality`; free);
  2. the antecedent set is capped so that every list of at most `max_length` antecedents can be
     enumerated (`max_candidates`): mined antecedents are ranked by their noisy supports
     (post-processing), schema antecedents keep their order and the longest list allowed is
     shortened instead. Public.
  3. the list: with sampler "exact", one draw of the exponential mechanism
     P(d) ~ exp(eps_select S(d) / Delta), Delta = log(row_bound + C - 1) rounded down to the
     score grid (`scoring`), sampled exactly over the enumerated lists: eps_select-DP because
     one row moves every list's score in the same direction (monotone utilities, McSherry and
     Talwar; the argument is at `search.exponential_mechanism_list`).
     With score "majority" the utility is the rows the list classifies correctly (sensitivity 1
     row, monotone; the prior as the draw's base measure: `scoring.MajorityCounts`,
     `ScaledPrior`). With sampler "greedy", one such draw per rule over "stop" and each unused
     antecedent, eps_select / max_length each (`search.greedy_exponential_list`; with
     `greedy_stop` False the stop is not offered and the list has max_length rules).
     With sampler "one_rule", one draw over every "if a then class r else class d" and every
     "always class d", for the rows classified correctly (sensitivity 1 row, monotone:
     `search.labelled_rule_draw`): the classes are released with the rule.
     With sampler "mcmc" (opted into), the final state of Letham's chain run on that
     distribution for `steps` steps: NOT proved differentially private (a finite chain is not
     at stationarity; `search` says what would follow from a mixing bound, which is not
     known). Its ledger text says so.
  4. the probabilities: each row is captured by exactly one rule, so the (rules x classes)
     capture counts have L1 sensitivity 1 (Belardo 2018, Lemma 4); two-sided geometric noise of
     scale 1 / eps_estimate on each, clipped at 0, plus alpha = 1 (post-processing). With the
     "one_rule" sampler each rule's probabilities are then moved the least for its drawn class
     to lead (`rule_list.respect_classes`, post-processing): the draw, with most of the budget,
     decides the direction, the counts only the level.
Everything returned is a release or post-processing of releases, except the chain's
diagnostics of a non-private fit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Sequence

import numpy as np

from jostle.learners.brl.accounting import DEFAULT_SPLIT, BudgetSplit, FitLedger
from jostle.learners.brl.bitsets import Antecedent, RowBits, capture_counts
from jostle.learners.brl.mining import (MinedAntecedents, mine_frequent, mine_private, public_antecedents,
                                        rank_antecedents)
from jostle.learners.brl.rule_list import RuleList, probabilities_from_counts, respect_classes
from jostle.learners.brl.scoring import LogFactorials, ListScorer, MajorityCounts, RuleListPrior, ScaledPrior
from jostle.learners.brl.search import (ChainDiagnostics, candidate_count, exponential_mechanism_list,
                                        greedy_exponential_list, labelled_candidate_count, labelled_rule_draw,
                                        mechanism_beta, run_chain)
from jostle.privacy import replay

ANTECEDENT_SOURCES = ("mined", "public")
SAMPLERS = ("exact", "mcmc", "greedy", "one_rule")
SCORES = ("posterior", "majority")


@dataclass(frozen=True)
class BRLSettings:
    """The choice points of a DP-BRL fit (all public).

    Attributes:
        antecedents: "mined" (private DP-FIM) or "public" (itemsets of the schema, no budget).
        split: Weights of (mining, selection, estimates); default `accounting.DEFAULT_SPLIT`.
        min_support: Minimum support within a class, for mining.
        max_cardinality: Largest mined antecedents.
        public_cardinality: Largest schema antecedents ("public").
        max_length: Longest rule list.
        max_candidates: Most lists the exact sampler enumerates.
        max_antecedents: Most mined antecedents kept (the best ranked; None: as many as
            `max_candidates` allows). Schema antecedents are not ranked (no data is read):
            the longest list is shortened until they fit `max_candidates` instead.
        list_length: lambda, the prior mean list length.
        antecedent_length: eta, the prior mean antecedent cardinality.
        sampler: "exact" (one draw over every enumerated list), "greedy" (one draw per rule,
            `search.greedy_exponential_list`; no enumeration, so the schema's antecedents keep
            the longest list), "one_rule" (one rule and the classes of the rule and of the
            default drawn together, `search.labelled_rule_draw`; score "majority" only) or
            "mcmc" (not proved DP).
        score: What the list draw maximises: "posterior" (Letham's log posterior, sensitivity
            log(row_bound + C - 1)) or "majority" (rows classified correctly, sensitivity 1,
            the prior as the draw's base measure; `scoring.MajorityCounts`).
        greedy_stop: Whether each greedy step offers stopping (False: `max_length` rules).
        steps: Chain steps ("mcmc", and the non-private search).
        burn_in: Steps before the non-private MAP is looked for (None: half of `steps`).
        quantile: Share of the transactions the truncation length covers (mining).
        row_bound: The public upper bound on the rows, which fixes the sensitivity.
    """

    antecedents: str = "mined"
    split: tuple[float, float, float] = DEFAULT_SPLIT
    min_support: float = 0.1
    max_cardinality: int = 2
    public_cardinality: int = 1
    max_length: int = 3
    max_candidates: int = 60_000
    max_antecedents: int | None = 8
    list_length: float = 3.0
    antecedent_length: float = 1.0
    sampler: str = "exact"
    score: str = "posterior"
    greedy_stop: bool = True
    steps: int = 3000
    burn_in: int | None = None
    quantile: float = 0.85
    row_bound: int = 1_000_000

    def check(self) -> None:
        """Refuse settings no fit can run with (before anything is charged)."""
        if self.antecedents not in ANTECEDENT_SOURCES:
            raise ValueError(f"antecedents must be one of {ANTECEDENT_SOURCES}, got {self.antecedents!r}")
        if self.sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {SAMPLERS}, got {self.sampler!r}")
        if self.score not in SCORES:
            raise ValueError(f"score must be one of {SCORES}, got {self.score!r}")
        if self.sampler == "mcmc" and self.score != "posterior":
            raise ValueError("the chain sampler targets the posterior: use score='posterior' with sampler='mcmc'")
        if self.sampler == "one_rule" and self.score != "majority":
            raise ValueError("the one-rule sampler draws for the rows classified correctly: use score='majority' "
                             "with sampler='one_rule'")
        BudgetSplit.of(Fraction(1), self.split, self.antecedents == "mined")
        if not 0 < self.min_support <= 1:
            raise ValueError(f"min_support must be in (0, 1], got {self.min_support!r}")
        if self.max_antecedents is not None and not (isinstance(self.max_antecedents, (int, np.integer))
                                                     and self.max_antecedents >= 0):
            raise ValueError(f"max_antecedents must be None or a whole number >= 0, got {self.max_antecedents!r}")
        for name in ("max_cardinality", "public_cardinality", "max_length", "max_candidates", "row_bound"):
            value = getattr(self, name)
            if not (isinstance(value, (int, np.integer)) and value >= 1):
                raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
        if not (isinstance(self.steps, (int, np.integer)) and self.steps >= 0):
            raise ValueError(f"steps must be a whole number >= 0, got {self.steps!r}")
        if not (self.list_length > 0 and self.antecedent_length > 0):
            raise ValueError("list_length (lambda) and antecedent_length (eta) must be > 0")
        if not 0 < self.quantile <= 1:
            raise ValueError(f"quantile must be in (0, 1], got {self.quantile!r}")


@dataclass
class FitResult:
    """A fitted rule list and what the fit did.

    Attributes:
        rule_list: The released list and probabilities.
        antecedent_set: The antecedents the list was chosen from (released or public).
        max_length: The longest list that was allowed.
        charges: (epsilon, description) of every charge, in order.
        diagnostics: The chain's diagnostics (non-private fits only).
        scores: The chain's log score per step (non-private fits only).
        truncation: Per class, the private miner's truncation length.
    """

    rule_list: RuleList
    antecedent_set: list[Antecedent]
    max_length: int
    charges: list[tuple[float, str]] = field(default_factory=list)
    diagnostics: ChainDiagnostics | None = None
    scores: np.ndarray | None = None
    truncation: list[int] = field(default_factory=list)


def cap_antecedents(mined: MinedAntecedents | None, public: list[Antecedent] | None, max_length: int,
                    max_candidates: int, max_antecedents: int | None = None) -> tuple[list[Antecedent], int]:
    """The antecedent set and longest list the exact sampler enumerates (public choices only)."""
    if mined is not None:
        order = rank_antecedents(mined)
        size = len(order) if max_antecedents is None else min(len(order), int(max_antecedents))
        while size > 0 and candidate_count(size, max_length) > max_candidates:
            size -= 1
        return [mined.antecedents[i] for i in order[:size]], max_length
    antecedents = list(public or [])  # no ranking without data: the longest list is shortened instead
    length = max_length
    while length > 1 and candidate_count(len(antecedents), length) > max_candidates:
        length -= 1
    return antecedents[:max(max_candidates - 1, 0)], length


def _scorer(bits: RowBits, antecedents: Sequence[Antecedent], settings: BRLSettings, max_length: int,
            n_classes: int, row_bound: int, draw_epsilon: Fraction | None = None) -> ListScorer:
    """The list score of `settings.score`. With "majority" the prior is the draw's base measure,
    scaled to `draw_epsilon` (public: the planned epsilon of each draw; `scoring.ScaledPrior`)."""
    prior = RuleListPrior([len(a) for a in antecedents], settings.list_length, settings.antecedent_length,
                          max_length)
    masks = [bits.antecedent(a) for a in antecedents]
    if settings.score == "majority":
        if draw_epsilon is None:
            raise ValueError("the majority score needs the epsilon of its draw (its prior is a base measure)")
        majority = MajorityCounts(n_classes)
        return ListScorer(masks, bits.classes, bits.everything,
                          ScaledPrior(prior, draw_epsilon, majority.sensitivity_units), majority)
    return ListScorer(masks, bits.classes, bits.everything, prior, LogFactorials(row_bound, n_classes))


def _score_text(settings: BRLSettings, n_classes: int) -> str:
    """How the list draw's score and sensitivity read in a charge's description."""
    if settings.score == "majority":
        return "rows of each rule's majority class, sensitivity 1"
    return f"sensitivity log({settings.row_bound} + {n_classes - 1})"


def release_capture_counts(masks: Sequence[int], bits: RowBits, epsilon: Fraction, noise: Any) -> np.ndarray:
    """The (rules + 1) x classes capture counts of a rule list plus two-sided geometric noise of
    scale 1 / epsilon on each (exact on a Randomness source).

    Sensitivity (Belardo 2018, Lemma 4): a row is captured by exactly one rule and has one
    class, so adding or removing it changes one count by 1: L1 sensitivity 1, and the discrete
    Laplace law P(z) ~ exp(-epsilon |z|) makes the release epsilon-DP. The caller has charged
    epsilon.
    """
    counts = capture_counts(masks, bits.classes, bits.everything).astype(np.float64)
    noisy = counts + np.asarray(noise.discrete_laplace(1 / Fraction(epsilon), counts.size),
                                dtype=np.float64).reshape(counts.shape)
    return replay.released(noise, "rule list capture counts", counts, noisy, "l1", 1, 1)


def fit_private(X: np.ndarray, y: np.ndarray, domain_sizes: Sequence[int], n_classes: int, epsilon: Fraction,
                settings: BRLSettings, noise: Any, callback: Callable[[float, str], None] | None = None) -> FitResult:
    """The private pipeline of the module docstring, with budget `epsilon` (exact).

    Args:
        X, y: Integer codes (rows x attributes) and class codes.
        domain_sizes, n_classes: The public domains.
        epsilon: The fit's whole budget (already charged to any shared budget by the caller).
        settings: The choice points.
        noise: `Randomness` for releases; a simulation source only on public data.
        callback: charge(epsilon, description), called before each step draws noise.
    """
    settings.check()
    ledger = FitLedger(Fraction(epsilon), callback)
    mine = settings.antecedents == "mined"
    split = BudgetSplit.of(Fraction(epsilon), settings.split, mine)
    X = np.asarray(X, dtype=np.int64).reshape(len(y), len(domain_sizes))
    y = np.asarray(y, dtype=np.int64)
    mined = None
    enumerated = settings.sampler == "exact" or settings.sampler == "mcmc"  # the others enumerate no lists
    if mine:
        mined = mine_private(X, y, domain_sizes, n_classes, split.mining, noise, ledger.charge,
                             settings.min_support, settings.max_cardinality, settings.quantile)
        antecedents, max_length = cap_antecedents(mined, None, settings.max_length, settings.max_candidates,
                                                  settings.max_antecedents)
    elif enumerated:
        antecedents, max_length = cap_antecedents(
            None, public_antecedents(domain_sizes, settings.public_cardinality), settings.max_length,
            settings.max_candidates, settings.max_antecedents)
    else:
        antecedents, max_length = public_antecedents(domain_sizes, settings.public_cardinality), settings.max_length
    bits = RowBits.of(X, y, domain_sizes, n_classes)
    # what mining did not spend (skipped steps) goes to the list and the estimates in the
    # ratio of their weights: `ledger.spent` is a function of released values (`accounting`)
    selection, _ = split.rest(ledger.epsilon - ledger.spent)
    favoured: list[int] | None = None
    if settings.sampler == "one_rule":
        max_length = 1
        eps = ledger.charge(selection, f"BRL one rule and its classes: exponential mechanism over "
                                       f"{labelled_candidate_count(len(antecedents), n_classes)} labelled "
                                       "lists (rows classified correctly, sensitivity 1)")
        index, rule_class, default_class = labelled_rule_draw([bits.antecedent(a) for a in antecedents],
                                                              bits.classes, bits.everything, noise, eps)
        chosen = () if index is None else (index,)
        favoured = [default_class] if index is None else [rule_class, default_class]
    elif settings.sampler == "greedy":
        # one draw per rule: the planned per-step epsilon (public) scales the base-measure prior
        steps = max(min(max_length, len(antecedents)), 1)
        scorer = _scorer(bits, antecedents, settings, max_length, n_classes, settings.row_bound, selection / steps)
        what = _score_text(settings, n_classes)
        offered = "the stop and the " if settings.greedy_stop else "the unused of the "
        chosen = greedy_exponential_list(scorer, noise, lambda: ledger.charge(
            selection / steps, f"BRL rule list, one rule: exponential mechanism over {offered}"
                               f"{len(antecedents)} antecedents ({what}, greedy sampler)"), settings.greedy_stop)
    elif settings.sampler == "exact":
        scorer = _scorer(bits, antecedents, settings, max_length, n_classes, settings.row_bound, selection)
        eps = ledger.charge(selection, f"BRL rule list: exponential mechanism over "
                                       f"{candidate_count(len(antecedents), max_length)} enumerated lists "
                                       f"({_score_text(settings, n_classes)}, exact sampler)")
        chosen = exponential_mechanism_list(scorer, noise, eps)
    else:
        scorer = _scorer(bits, antecedents, settings, max_length, n_classes, settings.row_bound)
        eps = ledger.charge(selection, f"BRL rule list: {settings.steps}-step Metropolis-Hastings chain "
                                       "targeting the exponential mechanism; NOT proved differentially "
                                       "private (a finite chain is not at stationarity)")
        chosen = run_chain(scorer, settings.steps, noise,
                           beta=mechanism_beta(eps, scorer.factorials.sensitivity_units)).last
    masks = [bits.antecedent(antecedents[i]) for i in chosen]
    eps_estimate = ledger.charge(ledger.epsilon - ledger.spent, f"BRL point estimates: {len(chosen) + 1} x {n_classes} capture "
                                                  "counts (L1 sensitivity 1)")
    noisy = release_capture_counts(masks, bits, eps_estimate, noise)
    probabilities = probabilities_from_counts(noisy)
    if favoured is not None:
        probabilities = respect_classes(probabilities, favoured)
    rule_list = RuleList(tuple(antecedents[i] for i in chosen), probabilities, noisy)
    return FitResult(rule_list, antecedents, max_length, list(ledger.records),
                     truncation=list(mined.truncation) if mined is not None else [])


def fit_nonprivate(X: np.ndarray, y: np.ndarray, domain_sizes: Sequence[int], n_classes: int,
                   settings: BRLSettings, noise: Any, chains: int = 1,
                   antecedents: Sequence[Antecedent] | None = None) -> FitResult:
    """Letham et al.'s BRL: FP-growth antecedents, Metropolis-Hastings chains on the posterior,
    the best list visited after burn-in (their point estimate), posterior-mean probabilities.

    Not private: use it on public data or as a reference.
    """
    settings.check()
    X = np.asarray(X, dtype=np.int64).reshape(len(y), len(domain_sizes))
    y = np.asarray(y, dtype=np.int64)
    if antecedents is None:
        antecedents = mine_frequent(X, y, domain_sizes, n_classes, settings.min_support,
                                    settings.max_cardinality).antecedents
    antecedents = list(antecedents)
    bits = RowBits.of(X, y, domain_sizes, n_classes)
    scorer = _scorer(bits, antecedents, settings, settings.max_length, n_classes, max(len(y), 1))
    burn_in = settings.steps // 2 if settings.burn_in is None else int(settings.burn_in)
    best, best_score, first = (), -np.inf, None
    for _ in range(max(int(chains), 1)):
        result = run_chain(scorer, settings.steps, noise, beta=1.0, burn_in=burn_in)
        first = first or result
        if result.best_score > best_score:
            best, best_score = result.best, result.best_score
    masks = [scorer.masks[i] for i in best]
    counts = capture_counts(masks, bits.classes, bits.everything)
    rule_list = RuleList(tuple(antecedents[i] for i in best), probabilities_from_counts(counts), counts)
    return FitResult(rule_list, antecedents, settings.max_length, [], first.diagnostics if first else None,
                     first.scores if first else None)
