"""DP-BRL's algorithms on integer codes: bitsets, the score and its exact sensitivity, the chain
against the enumerated target, the exact sampler, mining (FP-growth and DP-FIM) and the fit's
ledger. Randomized checks use fixed seeds; tolerances are derived in each test."""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from jostle.learners.brl.accounting import BudgetExceededError, BudgetSplit
from jostle.learners.brl.bitsets import RowBits, capture_counts, rows_captured
from jostle.learners.brl.learner import BRLSettings, fit_nonprivate, fit_private
from jostle.learners.brl.mining import mine_frequent, mine_private, public_antecedents, rank_antecedents
from jostle.learners.brl.rule_list import RuleList
from jostle.learners.brl.scoring import UNIT, ListScorer, LogFactorials, MajorityCounts, RuleListPrior, ScaledPrior
from jostle.learners.brl.search import candidate_count, enumerate_lists, exponential_mechanism_list, run_chain
from jostle.privacy.noise import Randomness, SimulationNoise


def planted(n: int, seed: int = 0, k: int = 4) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Codes over k three-valued attributes; class 1 mostly when a0 = 1, or a1 = 2 and a2 = 0."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, (n, k))
    p = np.where(X[:, 0] == 1, 0.85, np.where((X[:, 1] == 2) & (X[:, 2] == 0), 0.7, 0.15))
    return X, (rng.random(n) < p).astype(np.int64), [3] * k


def scorer_for(X: np.ndarray, y: np.ndarray, sizes: list[int], antecedents: list, row_bound: int,
               max_length: int = 2) -> ListScorer:
    bits = RowBits.of(X, y, sizes, 2)
    prior = RuleListPrior([len(a) for a in antecedents], 3.0, 1.0, max_length)
    return ListScorer([bits.antecedent(a) for a in antecedents], bits.classes, bits.everything, prior,
                      LogFactorials(row_bound, 2))


# ---------------------------------------------------------------- the score
def test_clipped_log_factorials_equal_lgamma_below_the_bound() -> None:
    factorials = LogFactorials(10_000, 2)
    for a, b in [(0, 0), (1, 0), (10, 20), (3000, 100), (4999, 5000)]:
        exact = math.lgamma(2) + math.lgamma(a + 1) + math.lgamma(b + 1) - math.lgamma(a + b + 2)
        # each of the three factorial terms is floored to the 2^-20 grid per factor: error < (a + b + 2) 2^-20
        assert abs(factorials.rule_units([a, b]) / UNIT - exact) <= (a + b + 2) / UNIT


@pytest.mark.parametrize("classes", [2, 3])
def test_one_row_moves_a_rule_term_by_at_most_q_even_above_the_bound(classes: int) -> None:
    factorials = LogFactorials(200, classes)
    rng = np.random.default_rng(1)
    q = factorials.sensitivity_units
    assert q == math.floor(math.log(200 + classes - 1) * UNIT)
    for _ in range(2000):
        counts = list(rng.integers(0, 400, classes))  # past the bound too
        l = int(rng.integers(0, classes))
        bigger = list(counts)
        bigger[l] += 1
        change = factorials.rule_units(bigger) - factorials.rule_units(counts)
        assert -q <= change <= 0


def test_list_scores_of_neighbouring_tables_differ_by_at_most_q() -> None:
    X, y, sizes = planted(300, seed=2)
    antecedents = [((0, 1),), ((1, 2), (2, 0)), ((3, 0),), ((2, 2),)]
    rng = np.random.default_rng(3)
    lists = [()] + [tuple(rng.permutation(4)[:m]) for m in (1, 2, 2, 3, 4) for _ in range(3)]
    for trial in range(10):
        extra_x = rng.integers(0, 3, (1, 4))
        extra_y = rng.integers(0, 2, 1)
        bound = 250 if trial % 2 else 1000   # a bound below the table's size keeps the sensitivity too
        small = scorer_for(X, y, sizes, antecedents, bound, max_length=4)
        large = scorer_for(np.vstack([X, extra_x]), np.concatenate([y, extra_y]), sizes, antecedents, bound,
                           max_length=4)
        q = small.factorials.sensitivity_units
        for rule_list in lists:
            assert abs(large.units(rule_list) - small.units(rule_list)) <= q


def test_prior_matches_letham_for_a_small_case() -> None:
    # A = two singletons and one pair; lambda = 2, eta = 1, lists up to length 3 (= |A|).
    prior = RuleListPrior([1, 1, 2], 2.0, 1.0, 3)
    length = math.log(2.0 ** 1 / 1) - math.log(sum(2.0 ** m / math.factorial(m) for m in range(4)))
    card = math.log(1.0) - math.log(1.0 + 0.5)   # P(c = 1 | cardinalities {1, 2} available)
    assert prior.log_prior([0]) == pytest.approx(length + card - math.log(2))
    assert prior.log_prior([0, 0]) == -math.inf


# ---------------------------------------------------------------- bitsets and rule lists
def test_capture_counts_partition_the_rows_and_match_the_rule_list() -> None:
    X, y, sizes = planted(500, seed=4)
    bits = RowBits.of(X, y, sizes, 2)
    antecedents = (((0, 1),), ((1, 2), (2, 0)), ((2, 0),))
    masks = [bits.antecedent(a) for a in antecedents]
    counts = capture_counts(masks, bits.classes, bits.everything)
    assert counts.sum() == len(y) and list(counts.sum(axis=0)) == list(np.bincount(y, minlength=2))
    rules = RuleList(antecedents, np.full((4, 2), 0.5), counts)
    by_rule = rules.rule_of_rows(X)
    assert np.array_equal(by_rule, rows_captured(masks, len(y)))
    for index in range(4):
        assert list(np.bincount(y[by_rule == index], minlength=2)) == list(counts[index])


# ---------------------------------------------------------------- search
def test_candidate_count_matches_the_enumeration() -> None:
    X, y, sizes = planted(60, seed=5)
    antecedents = [((0, v),) for v in range(3)] + [((1, 2),)]
    for length in (0, 1, 2, 3):
        scorer = scorer_for(X, y, sizes, antecedents, 100, max_length=length)
        lists, scores = enumerate_lists(scorer)
        assert len(lists) == candidate_count(4, length) == len(set(lists))
        assert all(scores[i] == scorer.units(lists[i]) for i in range(len(lists)))


def _target(scorer: ListScorer, beta: float) -> tuple[list, np.ndarray]:
    lists, units = enumerate_lists(scorer)
    logits = beta * units / UNIT
    p = np.exp(logits - logits.max())
    return lists, p / p.sum()


def test_the_chain_samples_the_enumerated_target() -> None:
    """Letham's moves with the Hastings ratios of search.py: the long-run frequencies of the
    chain's states match exp(beta S) over the 10 lists (3 antecedents, length <= 2).

    Tolerance: 60,000 steps thinned to every 6th (10,000 draws; acceptance is high at this
    temperature, so they are close to independent); the total variation distance of an
    empirical law on 10 states from n draws has sd of order sqrt(10 / n) / 2 = 0.016, so 0.05
    is three such sds (a wrong ratio, e.g. dropping the (M - m) factor, gives about 0.2)."""
    X, y, sizes = planted(40, seed=6)
    scorer = scorer_for(X, y, sizes, [((0, 1),), ((1, 2),), ((2, 0),)], 100, max_length=2)
    beta = 0.08
    lists, target = _target(scorer, beta)
    assert target.max() < 0.5  # spread enough to test the ratios
    chain = run_chain(scorer, 60_000, SimulationNoise(7), beta=beta, keep_states=True)
    assert chain.states is not None and len(chain.states) == 60_000
    states = chain.states[::6]
    index = {rule_list: i for i, rule_list in enumerate(lists)}
    counts = np.bincount([index[s] for s in states], minlength=len(lists))
    assert 0.5 * np.abs(counts / counts.sum() - target).sum() < 0.05


def test_the_exact_sampler_draws_the_exponential_mechanism() -> None:
    """exponential_mechanism_list draws P(d) ~ exp(eps S / Q) exactly (monotone scores, no
    factor 2): a chi-squared test of 3,000 seeded draws against the enumerated law (p > 1e-3 at
    this fixed seed)."""
    X, y, sizes = planted(50, seed=8)
    scorer = scorer_for(X, y, sizes, [((0, 1),), ((1, 2),), ((2, 0),)], 60, max_length=2)
    epsilon = Fraction(1, 2)
    beta = float(epsilon) / (scorer.factorials.sensitivity_units / UNIT)
    lists, target = _target(scorer, beta)
    noise = Randomness(9)
    index = {rule_list: i for i, rule_list in enumerate(lists)}
    draws = [index[exponential_mechanism_list(scorer, noise, epsilon)] for _ in range(3000)]
    observed = np.bincount(draws, minlength=len(lists))
    expected = target * len(draws)
    keep = expected >= 5
    if keep.all():
        chi2 = stats.chisquare(observed, expected)
    else:
        chi2 = stats.chisquare(np.append(observed[keep], observed[~keep].sum()),
                               np.append(expected[keep], expected[~keep].sum()))
    assert chi2.pvalue > 1e-3


def test_mcmc_speed_3000_steps_on_30000_rows_under_30_seconds() -> None:
    X, y, sizes = planted(30_000, seed=10, k=8)
    settings = BRLSettings(steps=3000, max_length=10, min_support=0.05)
    start = time.perf_counter()
    result = fit_nonprivate(X, y, sizes, 2, settings, SimulationNoise(0))
    elapsed = time.perf_counter() - start
    assert elapsed < 30.0, f"3000 steps on 30,000 rows took {elapsed:.1f} s"
    assert len(result.scores) == 3000
    windows = result.diagnostics.windows
    assert len(windows) == 12 and all(0.0 <= w["acceptance"] <= 1.0 for w in windows)


# ---------------------------------------------------------------- mining
def test_fp_growth_finds_the_planted_itemsets() -> None:
    X, y, sizes = planted(2000, seed=11)
    mined = mine_frequent(X, y, sizes, 2, 0.1, 2)
    assert ((0, 1),) in mined.antecedents and ((1, 2), (2, 0)) in mined.antecedents
    bits = RowBits.of(X, y, sizes, 2)
    i = mined.antecedents.index(((0, 1),))
    assert list(mined.supports[i]) == [np.sum((X[:, 0] == 1) & (y == c)) for c in (0, 1)]
    assert rank_antecedents(mined)[0] == i  # the most predictive antecedent ranks first
    assert all(len({j for j, _ in a}) == len(a) for a in mined.antecedents)
    assert bits.n_rows == 2000


def test_schema_antecedents_read_no_data() -> None:
    assert len(public_antecedents([2, 3], 1)) == 5
    assert len(public_antecedents([2, 3], 2)) == 5 + 6


def test_private_mining_with_a_huge_budget_finds_what_fp_growth_finds() -> None:
    """At epsilon 10^7 the geometric noise is 0 with overwhelming probability; with quantile 1
    no row loses a frequent item, so DP-FIM's output equals FP-growth's (same thresholds)."""
    X, y, sizes = planted(3000, seed=12)
    exact = mine_frequent(X, y, sizes, 2, 0.12, 2)
    private = mine_private(X, y, sizes, 2, Fraction(10**7), Randomness(1), lambda e, d: Fraction(e), 0.12, 2, 1.0)
    assert set(private.antecedents) == set(exact.antecedents)


def test_private_mining_charges_every_step_before_its_noise() -> None:
    events: list[str] = []

    class Recording(Randomness):
        def discrete_laplace(self, scale, size):  # type: ignore[no-untyped-def]
            events.append("draw")
            return super().discrete_laplace(scale, size)

    def charge(epsilon: Fraction, description: str) -> Fraction:
        events.append("charge")
        charged.append(Fraction(epsilon))
        return Fraction(epsilon)

    charged: list[Fraction] = []
    X, y, sizes = planted(400, seed=13)
    mine_private(X, y, sizes, 2, Fraction(1, 3), Recording(2), charge, 0.1, 2)
    assert sum(charged) == Fraction(1, 3) and len(charged) == 3   # level 1, length, level 2
    assert events[0] == "charge"
    # each charge is followed by its draws (one per class) before the next charge
    assert events == ["charge", "draw", "charge", "draw", "draw", "charge", "draw", "draw"]


# ---------------------------------------------------------------- the private fit
def test_budget_split_is_exact() -> None:
    split = BudgetSplit.of(Fraction(9, 10), (1, 1, 1), True)
    assert split.mining == split.selection == split.estimates == Fraction(3, 10)
    public = BudgetSplit.of(Fraction(1), (5, 1, 3), False)
    assert public.mining == 0 and public.selection + public.estimates == 1 and public.selection == Fraction(1, 4)


@pytest.mark.parametrize("source", ["mined", "public"])
def test_private_fit_spends_its_epsilon_and_no_more(source: str) -> None:
    X, y, sizes = planted(300, seed=14)
    reported: list[float] = []
    result = fit_private(X, y, sizes, 2, Fraction(1, 10), BRLSettings(antecedents=source, row_bound=400),
                         Randomness(3), lambda e, d: reported.append(e))
    total = sum(Fraction(e) for e in reported)
    assert total <= Fraction(1, 10) and float(total) == pytest.approx(0.1, rel=1e-12)
    assert [e for e, _ in result.charges] == reported
    assert result.rule_list.probabilities.shape == (result.rule_list.length + 1, 2)
    assert result.max_length <= 3


def test_a_refused_charge_draws_nothing() -> None:
    drawn: list[int] = []

    class Counting(Randomness):
        def _words(self, size):  # type: ignore[no-untyped-def]
            drawn.append(size)
            return super()._words(size)

    def refuse(amount: float, description: str) -> None:
        raise BudgetExceededError("no")

    X, y, sizes = planted(100, seed=15)
    with pytest.raises(BudgetExceededError):
        fit_private(X, y, sizes, 2, Fraction(1), BRLSettings(row_bound=200), Counting(4), refuse)
    assert drawn == []


def test_private_fit_is_deterministic_under_a_seed_and_finds_the_signal() -> None:
    X, y, sizes = planted(3000, seed=16)
    settings = BRLSettings(row_bound=4000)
    first = fit_private(X, y, sizes, 2, Fraction(2), settings, Randomness(5))
    again = fit_private(X, y, sizes, 2, Fraction(2), settings, Randomness(5))
    assert first.rule_list.antecedents == again.rule_list.antecedents
    assert np.array_equal(first.rule_list.counts, again.rule_list.counts)
    # at epsilon 2 on 3,000 rows the list separates the strongest signal, a0 = 1 (P(1) = 0.85
    # there, 0.15 where neither planted rule holds), in one way or another
    p = first.rule_list.predict_proba(X)[:, 1]
    plain = (X[:, 0] != 1) & ~((X[:, 1] == 2) & (X[:, 2] == 0))
    assert p[X[:, 0] == 1].mean() > 0.6 and p[plain].mean() < 0.4


def test_the_chain_sampler_says_it_is_not_proved_private() -> None:
    X, y, sizes = planted(200, seed=17)
    result = fit_private(X, y, sizes, 2, Fraction(1), BRLSettings(sampler="mcmc", steps=200, row_bound=300),
                         Randomness(6))
    assert any("NOT proved differentially private" in text for _, text in result.charges)
    assert not any("NOT proved" in text for _, text in fit_private(
        X, y, sizes, 2, Fraction(1), BRLSettings(row_bound=300), Randomness(6)).charges)


def test_mining_skips_the_steps_without_candidates_and_the_fit_spends_what_it_saves() -> None:
    """Issue 27: with min_support 1 no item is frequent, so level 2 has no candidates: neither
    the truncation length nor any higher level is charged, mining spends only level 1's share,
    and the list and the estimates share the rest, 1 - eps_1, in the ratio of their weights
    (1 : 1 in the default split); the fit still spends exactly its epsilon."""
    X, y, sizes = planted(300, seed=18)
    reported: list[tuple[float, str]] = []
    settings = BRLSettings(min_support=1.0, max_cardinality=3, row_bound=400)
    result = fit_private(X, y, sizes, 2, Fraction(1), settings, Randomness(7),
                         lambda e, d: reported.append((e, d)))
    texts = [d for _, d in reported]
    assert len(texts) == 3 and texts[0].startswith("DP-FIM level 1") and not any("truncation" in t for t in texts)
    level1 = Fraction(reported[0][0])
    assert level1 <= Fraction(1, 2) / 3     # the mining half over its 3 planned levels
    selection, estimates = Fraction(reported[1][0]), Fraction(reported[2][0])
    assert float(selection) == pytest.approx(float(1 - level1) / 2, rel=1e-12)
    assert float(level1 + selection + estimates) == pytest.approx(1.0, rel=1e-12)
    assert level1 + selection + estimates <= 1 and result.truncation == []


def test_each_level_gets_what_is_left_over_the_levels_that_can_still_have_candidates() -> None:
    """Level i is charged what is left of the levels' budget over the levels up to the last
    one its candidates' attributes allow: with 3 attributes and max_cardinality 5, level 1 gets
    a third (at most 3 levels can have candidates), and the charges never pass the budget."""
    X, y, sizes = planted(400, seed=19, k=3)
    charged: list[tuple[Fraction, str]] = []

    def charge(epsilon: Fraction, description: str) -> Fraction:
        charged.append((Fraction(epsilon), description))
        return Fraction(epsilon)

    mine_private(X, y, sizes, 2, Fraction(1), Randomness(3), charge, 0.05, 5, length_share=Fraction(1, 10))
    assert charged[0][0] == Fraction(9, 10) / 3
    assert sum(e for e, _ in charged) <= 1
    assert not any("level 4" in d or "level 5" in d for _, d in charged)


def test_the_memoised_prior_equals_the_prior_on_every_list() -> None:
    """`RuleListPrior.units` is memoised by the list's cardinalities: on every list of a mixed
    antecedent set it equals floor(2^20 log_prior) exactly."""
    prior = RuleListPrior([1, 2, 1, 3, 2, 1], 2.5, 1.5, 3)
    lists = [()] + [p for m in range(1, 4) for p in __import__("itertools").permutations(range(6), m)]
    for rule_list in lists + lists[::-1]:
        assert prior.units(rule_list) == math.floor(prior.log_prior(rule_list) * UNIT)


# ---------------------------------------------------------------- issue 27: the majority utility and the greedy walk
def test_the_majority_score_counts_the_rows_each_rule_classifies_correctly() -> None:
    """Without a prior's weight (a huge epsilon), a list's majority score is the number of rows
    it classifies correctly when each rule predicts its majority class, counted directly."""
    X, y, sizes = planted(400, seed=30)
    antecedents = public_antecedents(sizes, 1)
    bits = RowBits.of(X, y, sizes, 2)
    prior = RuleListPrior([1] * len(antecedents), 3.0, 1.0, 2)
    scorer = ListScorer([bits.antecedent(a) for a in antecedents], bits.classes, bits.everything,
                        ScaledPrior(prior, Fraction(10 ** 12), UNIT), MajorityCounts(2))
    lists, units = enumerate_lists(scorer)
    for rule_list, score in list(zip(lists, units))[::7]:
        rule = np.full(len(y), len(rule_list))
        for position in reversed(range(len(rule_list))):
            ((attribute, value),) = antecedents[rule_list[position]]
            rule[X[:, attribute] == value] = position
        correct = sum(np.bincount(y[rule == r], minlength=2).max() for r in range(len(rule_list) + 1))
        assert score == correct * UNIT - 1   # the prior (log p < 0) scaled by 1e-12 floors to -1 unit


def test_the_chain_sampler_refuses_the_majority_score() -> None:
    with pytest.raises(ValueError, match="posterior"):
        BRLSettings(sampler="mcmc", score="majority").check()


@pytest.mark.parametrize("sampler", ["exact", "greedy"])
def test_majority_fits_spend_their_epsilon_and_find_the_signal_at_a_small_budget(sampler: str) -> None:
    """At epsilon 0.2 on 3,000 rows (where the posterior's sensitivity log(4001) drowns the
    signal) the majority utility separates a0 = 1; the fit's charges sum to its epsilon, and a
    greedy walk charges one step per rule drawn plus the stop (if it stopped early)."""
    X, y, sizes = planted(3000, seed=31)
    settings = BRLSettings(antecedents="public", split=(0.0, 3.0, 1.0), score="majority", sampler=sampler,
                           max_length=4, row_bound=4000)
    hits = 0
    for seed in range(10):
        result = fit_private(X, y, sizes, 2, Fraction(1, 5), settings, Randomness(seed))
        total = sum(Fraction(e) for e, _ in result.charges)
        assert total <= Fraction(1, 5) and float(total) == pytest.approx(0.2, rel=1e-12)
        if sampler == "greedy":
            steps = [text for _, text in result.charges if "one rule" in text]
            assert len(steps) == min(result.rule_list.length + 1, 4)
        p = result.rule_list.predict_proba(X)[:, 1]
        hits += p[X[:, 0] == 1].mean() > 0.6
    assert hits >= 8


def test_the_generated_rule_corpus_is_seeded_and_holds_large_schemas():
    """The shipped rule-list ChoiceMaker's corpus: the same tasks on every call, each its own
    validation group, the first 24 tasks as before issue 27's large ones were added, and large
    tasks past the small ones' 5,000 rows and 128 items."""
    from jostle.learners.brl.corpus import generated_rule_corpus, generated_rule_task, large_rule_corpus

    tasks, again = generated_rule_corpus(), generated_rule_corpus()
    assert all(np.array_equal(a.y, b.y) and np.array_equal(a.X, b.X) for a, b in zip(tasks, again))
    assert len({t.group for t in tasks}) == len(tasks) == 24 + 16
    rng = np.random.default_rng(27)
    first = generated_rule_task(rng, "generated:rules:0")
    assert np.array_equal(first.X, tasks[0].X) and first.domain_sizes == tasks[0].domain_sizes
    small, large = tasks[:24], large_rule_corpus()
    assert max(t.n_rows for t in small) <= 5_000 and max(sum(t.domain_sizes) for t in small) <= 128
    assert min(t.n_rows for t in large) >= 5_000 and max(t.n_rows for t in large) > 30_000
    assert max(sum(t.domain_sizes) for t in large) > 128
