"""Audit cases of the rule-list family (DP-BRL): DP-FIM, the exact rule-list sampler, the noisy
capture counts and the whole private fit. Same contract as cases.py and learner_cases.py
(test_brl_audits.py runs them): neighbours one row apart, chosen to be a worst case, and the
epsilon each component claims; negative controls, mis-calibrated on purpose, must be caught at
the same sample sizes.

The chain sampler (`sampler="mcmc"`) claims no differential privacy, so it has no case.

Issue 27: the list is drawn with exp(eps S / Delta) (monotone scores): `selection_laws` gives
the sampler's exact law on both neighbours from the COMPUTED scores (the check of the monotone
argument on the numbers the sampler uses), `empirical_selection` the seeded draws the audit
compares with it; `mining_charges` runs DP-FIM on neighbours with the same seed (its charges
must be identical whenever the released frequent itemsets are); `record_option_fit` records a
fit of each Option on D and plays it on D' (replay: every release within its claim).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from jostle.audit import AuditCase, Categories, Projection, Thresholds
from jostle.learners.brl.bitsets import RowBits
from jostle.learners.brl.learner import BRLSettings, fit_private, release_capture_counts
from jostle.learners.brl.mining import mine_private, public_antecedents
from jostle.learners.brl.scoring import ListScorer, LogFactorials, MajorityCounts, RuleListPrior, ScaledPrior
from jostle.learners.brl.search import enumerate_lists, exponential_mechanism_list
from jostle.learners.brl.scoring import UNIT
from jostle.privacy.noise import Randomness

SAMPLER_SAMPLES = 6_000
COUNT_SAMPLES = 20_000
MINING_SAMPLES = 3_000
FIT_SAMPLES = 1_500

Data = tuple[np.ndarray, np.ndarray]


def _plus(data: Data, row: list[int], label: int) -> Data:
    X, y = data
    return np.vstack([X, np.asarray([row])]), np.append(y, label)


# ---------------------------------------------------------------- the exact rule-list sampler
# 30 rows of class 0, all with a1 = 0; the neighbour adds a class-1 row with a0 = 0, a1 = 1.
# Lists that give the new row a rule of its own (a1 = 1 first) lose log 2 of score; lists whose
# default rule takes it with 30 class-0 rows lose log 32, about the whole sensitivity
# log(31 + 1): the largest spread of score changes one row can make here.
SAMPLER_D: Data = (np.column_stack([np.arange(30) % 2, np.zeros(30, dtype=np.int64)]), np.zeros(30, dtype=np.int64))
SAMPLER_D_PRIME = _plus(SAMPLER_D, [0, 1], 1)
SAMPLER_SIZES = [2, 2]
SAMPLER_BOUND = 31


def _sampler_scorer(data: Data) -> ListScorer:
    X, y = data
    antecedents = public_antecedents(SAMPLER_SIZES, 1)
    bits = RowBits.of(X, y, SAMPLER_SIZES, 2)
    prior = RuleListPrior([1] * len(antecedents), 3.0, 1.0, 2)
    return ListScorer([bits.antecedent(a) for a in antecedents], bits.classes, bits.everything, prior,
                      LogFactorials(SAMPLER_BOUND, 2))


def _majority_scorer(data: Data, epsilon: float) -> ListScorer:
    """The sampler case scored by the majority utility (sensitivity 1 row), the prior its base
    measure at the draw's epsilon (`scoring.MajorityCounts`, `ScaledPrior`)."""
    X, y = data
    antecedents = public_antecedents(SAMPLER_SIZES, 1)
    bits = RowBits.of(X, y, SAMPLER_SIZES, 2)
    prior = RuleListPrior([1] * len(antecedents), 3.0, 1.0, 2)
    return ListScorer([bits.antecedent(a) for a in antecedents], bits.classes, bits.everything,
                      ScaledPrior(prior, Fraction(epsilon), UNIT), MajorityCounts(2))


def majority_sampler_runner(epsilon: float, drawn_at: float | None = None) -> Any:
    """`count` exact draws over the 17 lists with the majority utility; `drawn_at` (a negative
    control) draws at another epsilon than the prior is scaled to and the case claims."""
    def run(data: Data, count: int, seed: int) -> np.ndarray:
        scorer = _majority_scorer(data, epsilon)
        lists, _ = enumerate_lists(scorer)
        index = {rule_list: i for i, rule_list in enumerate(lists)}
        noise = Randomness(seed)
        at = Fraction(drawn_at if drawn_at is not None else epsilon)
        return np.array([f"list {index[exponential_mechanism_list(scorer, noise, at)]}" for _ in range(count)],
                        dtype=object)
    return run


def sampler_runner(epsilon: float) -> Any:
    """`count` draws of the exact exponential mechanism over the 17 lists (named by index)."""
    def run(data: Data, count: int, seed: int) -> np.ndarray:
        scorer = _sampler_scorer(data)
        lists, _ = enumerate_lists(scorer)
        index = {rule_list: i for i, rule_list in enumerate(lists)}
        noise = Randomness(seed)
        return np.array([f"list {index[exponential_mechanism_list(scorer, noise, Fraction(epsilon))]}"
                         for _ in range(count)], dtype=object)
    return run


def selection_laws(epsilon: float, factor: float = 1.0) -> tuple[list, np.ndarray, np.ndarray]:
    """The lists of the sampler case and the exact law P(d) ~ exp(factor * eps * S(d) / Delta)
    on D and on D' (factor 1: what `exponential_mechanism_list` draws), from the computed scores."""
    laws = []
    for data in (SAMPLER_D, SAMPLER_D_PRIME):
        scorer = _sampler_scorer(data)
        lists, units = enumerate_lists(scorer)
        logits = factor * epsilon * (units / UNIT) / (scorer.factorials.sensitivity_units / UNIT)
        weights = np.exp(logits - logits.max())
        laws.append(weights / weights.sum())
    return lists, laws[0], laws[1]


def empirical_selection(epsilon: float, draws: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """How often each list of the sampler case is drawn in `draws` seeded draws on D and on D'."""
    counts = []
    for data, offset in ((SAMPLER_D, 0), (SAMPLER_D_PRIME, 1)):
        scorer = _sampler_scorer(data)
        lists, _ = enumerate_lists(scorer)
        index = {rule_list: i for i, rule_list in enumerate(lists)}
        noise = Randomness(seed + offset)
        drawn = [index[exponential_mechanism_list(scorer, noise, Fraction(epsilon))] for _ in range(draws)]
        counts.append(np.bincount(drawn, minlength=len(lists)))
    return counts[0], counts[1]


def mining_charges(data: Data, seed: int, epsilon: float = 1.0, max_cardinality: int = 3,
                   min_support: float = 0.3) -> tuple[list[tuple[Fraction, str]], list[Any]]:
    """DP-FIM's charges on `data` under a seed, and the itemsets it released (per level)."""
    X, y = data
    charged: list[tuple[Fraction, str]] = []

    def charge(amount: Fraction, description: str) -> Fraction:
        charged.append((Fraction(amount), description))
        return Fraction(amount)

    mined = mine_private(X, y, [2, 2, 2], 2, Fraction(epsilon), Randomness(seed), charge, min_support,
                         max_cardinality)
    return charged, sorted(mined.antecedents)


class _Ledger:
    """The accountant a replay recorder watches: it notes every charge a fit reports."""

    def __init__(self) -> None:
        self.charges: list[tuple[float, str]] = []

    def charge(self, budget: Any, node: Any, mechanism: str, description: str, span: Any) -> None:
        self.charges.append((budget, description))


def record_option_fit(option: Any, data: Data, seed: int, epsilon: float, play: Any = None) -> tuple[Any, Any]:
    """Fit a rule-list Option on `data` under a replay recorder (recording, or playing `play`);
    returns the recorder and the ledger of its charges."""
    from jostle.learners.brl.corpus import RuleData
    from jostle.privacy.replay import Recorder

    X, y = data
    ledger, noise, recorder = _Ledger(), Randomness(seed), Recorder()
    recorder.attach(ledger, noise, play)
    try:
        option.fit(RuleData(X, y, (2, 2, 2), 2, name="audit", row_bound=40), Fraction(epsilon), noise,
                   lambda amount, description: ledger.charge(amount, None, option.name, description, None))
    finally:
        recorder.detach()
    return recorder, ledger


# ---------------------------------------------------------------- the point estimates
# A fixed list (a0 = 0, then the default); the added row lands in rule 0, class 1.
COUNT_D: Data = (np.column_stack([np.arange(12) % 2, np.zeros(12, dtype=np.int64)]), np.arange(12) % 3 // 2)
COUNT_D_PRIME = _plus(COUNT_D, [0, 0], 1)


def counts_runner(epsilon: float) -> Any:
    """`count` releases of the noisy capture counts of the fixed list, flattened (2 x 2)."""
    def run(data: Data, count: int, seed: int) -> np.ndarray:
        X, y = data
        bits = RowBits.of(X, y, [2, 2], 2)
        masks = [bits.antecedent(((0, 0),))]
        noise = Randomness(seed)
        return np.array([release_capture_counts(masks, bits, Fraction(epsilon), noise).ravel() for _ in range(count)])
    return run


CELL = Projection(lambda y: y[:, 1], "count of rule 0, class 1", Thresholds())


# ---------------------------------------------------------------- DP-FIM
# Three binary attributes; the neighbour adds a class-1 row (1, 1, 1). The output is the sum of
# that row's items' noisy level-1 supports in class 1 (all k supports it moves), class 1's
# truncation length and how many itemsets came out frequent.
MINING_D: Data = (np.array([[0, 0, 1], [1, 0, 0], [1, 1, 0], [0, 1, 1], [1, 1, 1], [0, 0, 0]] * 3),
                  np.array([0, 1, 1, 0, 1, 0] * 3))
MINING_D_PRIME = _plus(MINING_D, [1, 1, 1], 1)


def mining_runner(epsilon: float) -> Any:
    def run(data: Data, count: int, seed: int) -> np.ndarray:
        X, y = data
        noise = Randomness(seed)
        out = np.empty((count, 3))
        for i in range(count):
            mined = mine_private(X, y, [2, 2, 2], 2, Fraction(epsilon), noise, lambda e, d: Fraction(e), 0.3, 2)
            support = {a: mined.supports[j] for j, a in enumerate(mined.antecedents)}
            row_items = [((0, 1),), ((1, 1),), ((2, 1),)]
            # an item that is not frequent has no released support: count it as 0 (post-processing)
            out[i] = [sum(float(support[a][1]) if a in support else 0.0 for a in row_items),
                      mined.truncation[1], len(mined.antecedents)]
        return out
    return run


# ---------------------------------------------------------------- the whole private fit
FIT_GRID = np.array([[a, b, c] for a in range(2) for b in range(2) for c in range(2)])


def fit_runner(epsilon: float, antecedents: str, **choices: Any) -> Any:
    """`count` private fits; the output is the mean predicted P(class 1) over the whole (public)
    domain, which moves with the chosen list and with every noisy count. `choices` are further
    `BRLSettings` (the score, the sampler)."""
    settings = BRLSettings(antecedents=antecedents, min_support=0.3, max_length=2, max_antecedents=4,
                           row_bound=40, **choices)

    def run(data: Data, count: int, seed: int) -> np.ndarray:
        X, y = data
        noise = Randomness(seed)
        return np.array([fit_private(X, y, [2, 2, 2], 2, Fraction(epsilon), settings, noise)
                         .rule_list.predict_proba(FIT_GRID)[:, 1].mean() for _ in range(count)])
    return run


BRL_CASES = [
    AuditCase("BRL exact rule-list sampler", sampler_runner(2.0), SAMPLER_D, SAMPLER_D_PRIME, epsilon=2.0,
              samples=SAMPLER_SAMPLES, events=Categories()),
    AuditCase("BRL point estimates (noisy capture counts)", counts_runner(1.0), COUNT_D, COUNT_D_PRIME,
              epsilon=1.0, samples=COUNT_SAMPLES, events=CELL, at_least=0.7),
    AuditCase("BRL DP-FIM (private antecedent mining)", mining_runner(1.0), MINING_D, MINING_D_PRIME, epsilon=1.0,
              samples=MINING_SAMPLES),
    AuditCase("BRL private fit, mined antecedents", fit_runner(1.0, "mined"), MINING_D, MINING_D_PRIME,
              epsilon=1.0, samples=FIT_SAMPLES),
    AuditCase("BRL private fit, schema antecedents", fit_runner(1.0, "public"), MINING_D, MINING_D_PRIME,
              epsilon=1.0, samples=FIT_SAMPLES),
    AuditCase("BRL exact sampler, majority utility", majority_sampler_runner(2.0), SAMPLER_D, SAMPLER_D_PRIME,
              epsilon=2.0, samples=SAMPLER_SAMPLES, events=Categories()),
    AuditCase("BRL private fit, majority utility, greedy sampler",
              fit_runner(1.0, "public", score="majority", sampler="greedy"), MINING_D, MINING_D_PRIME,
              epsilon=1.0, samples=FIT_SAMPLES),
    AuditCase("BRL private fit, one rule drawn with its classes",
              fit_runner(1.0, "public", score="majority", sampler="one_rule"), MINING_D, MINING_D_PRIME,
              epsilon=1.0, samples=FIT_SAMPLES),
    AuditCase("BRL private fit, greedy sampler without its stop",
              fit_runner(1.0, "public", score="majority", sampler="greedy", greedy_stop=False), MINING_D,
              MINING_D_PRIME, epsilon=1.0, samples=FIT_SAMPLES),
]

BRL_NEGATIVE_CONTROLS = [
    # the sampler and the counts run at 8 times the epsilon they claim
    AuditCase("BRL rule-list sampler given 8x its claimed epsilon", sampler_runner(16.0), SAMPLER_D,
              SAMPLER_D_PRIME, epsilon=2.0, samples=SAMPLER_SAMPLES, events=Categories(), expect_violation=True),
    AuditCase("BRL majority sampler drawing at 8x its claimed epsilon", majority_sampler_runner(2.0, 16.0),
              SAMPLER_D, SAMPLER_D_PRIME, epsilon=2.0, samples=SAMPLER_SAMPLES, events=Categories(),
              expect_violation=True),
    AuditCase("BRL capture counts given 8x their claimed epsilon", counts_runner(8.0), COUNT_D, COUNT_D_PRIME,
              epsilon=1.0, samples=COUNT_SAMPLES, events=CELL, expect_violation=True),
]
