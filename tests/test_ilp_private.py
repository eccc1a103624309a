"""Issue 24: the private core of DP ILP (fake seed, both reductions, the covering loop, the
trivial theory, Theorem 3's report).

Each test asserts something the code could get wrong: the fake example reads no row, the
charges come before any draw and add up to epsilon, a refused charge draws nothing, the noise
has the standard deviation its calibration claims (tolerance from the sampling distribution of
a standard deviation), pruning removes exactly the subtrees below a pruned clause, and with a
negligible noise the reductions find what the non-private learner finds.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from jostle.learners.ilp import aleph, bounds, fake, private, trains
from jostle.learners.ilp.modes import ModeError, modes, train_modes
from jostle.learners.ilp.search import Coverage, legal_clauses
from jostle.learners.ilp.theory import TheoryError, accuracy, covers
from jostle.privacy.noise import Randomness, SimulationNoise
from jostle.privacy.subledger import OverBudgetError, Subledger

MODES = train_modes(max_clause_length=6, max_bottom=12)
SCHEMA = trains.schema()
TARGET = trains.DEFAULT_TARGET
TWO = ("eastbound(T) :- has_car(T, C), double(C), load(C, triangle, 1). "
       "eastbound(T) :- has_car(T, C), long(C), roof(C, jagged).")


class Recorder:
    """A charge function that records (epsilon, description) and may refuse."""

    def __init__(self, cap: Fraction | None = None) -> None:
        self.charges: list[tuple[Fraction, str]] = []
        self.cap = cap

    def __call__(self, epsilon: Fraction, description: str) -> None:
        spent = sum(e for e, _ in self.charges)
        if self.cap is not None and spent + epsilon > self.cap:
            raise OverBudgetError(f"over {self.cap}")
        self.charges.append((epsilon, description))

    @property
    def total(self) -> Fraction:
        return sum((e for e, _ in self.charges), Fraction(0))


class CountingNoise(Randomness):
    """An exact seeded source that counts the draws made from it."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed=seed)
        self.draws = 0

    def discrete_laplace(self, scale, size):
        self.draws += 1
        return super().discrete_laplace(scale, size)


# ------------------------------------------------------------------ the fake example

def test_vocabulary_reads_no_row():
    """The same schema with 0 or 500 trains gives the same fake example."""
    data = trains.generate_trains(500, seed=3, target=TARGET)
    assert fake.vocabulary(MODES, SCHEMA) == fake.vocabulary(MODES, data)
    assert fake.fake_bottom(MODES, SCHEMA, seed=4) == fake.fake_bottom(MODES, data, seed=4)
    full = fake.vocabulary(MODES, SCHEMA)
    # has_car, short, long, closed, open_car, double, 5 shapes, 5 roofs, 2 wheels, 6 x 4 loads
    assert len(full) == 1 + 2 + 2 + 1 + 5 + 5 + 2 + 24


def test_fake_bottom_is_cut_at_k_and_reports_it():
    bottom = fake.fake_bottom(MODES, SCHEMA, k=8)
    assert (bottom.size, bottom.full_size, bottom.truncated, bottom.bound, bottom.seed) == (8, 42, True, 8, -1)
    assert str(bottom.to_clause(MODES)).startswith("eastbound(T) :- has_car(T, C1), short(C1)")


def test_declared_fake_example_is_checked_against_the_modes():
    bottom = fake.fake_bottom(MODES, SCHEMA, "has_car(T, C), short(C), closed(C), roof(C, flat)")
    assert str(bottom.to_clause(MODES)) == (
        "eastbound(T) :- has_car(T, C1), short(C1), closed(C1), roof(C1, flat).")
    assert not bottom.truncated
    with pytest.raises(ModeError, match="no link literal before it"):
        fake.fake_bottom(MODES, SCHEMA, "short(C), has_car(T, C)")
    with pytest.raises(ModeError, match="fits no mode"):
        fake.fake_bottom(MODES, SCHEMA, "has_car(T, C), ellipse(C)")
    with pytest.raises(TheoryError, match="not in the public domain"):
        fake.fake_bottom(MODES, SCHEMA, "has_car(T, C), roof(C, dome)")
    with pytest.raises(ModeError, match="declares 4 literals but k is 3"):
        fake.fake_bottom(MODES, SCHEMA, "has_car(T, C), short(C), closed(C), double(C)", k=3)


def test_fake_for_target_holds_the_target_and_k_literals():
    bottom = fake.fake_for_target(TWO, MODES, SCHEMA, k=10, seed=0)
    text = str(bottom.to_clause(MODES))
    for literal in ("double(C1)", "load(C1, triangle, 1)", "long(C1)", "roof(C1, jagged)"):
        assert literal in text
    assert bottom.size == 10
    assert fake.fake_for_target(TWO, MODES, SCHEMA, k=10, seed=0) == bottom
    assert fake.fake_for_target(TWO, MODES, SCHEMA, k=10, seed=1) != bottom


# ------------------------------------------------------------------ the reductions

@pytest.fixture(scope="module")
def data():
    return trains.generate_trains(2000, seed=11, target=TARGET)


def _setup(data, k=8, seed=0, levels=None):
    bottom = fake.fake_for_target(TARGET, MODES, SCHEMA, k=k, seed=seed)
    candidates = legal_clauses(bottom, MODES, max_length=levels)
    return Coverage(data, MODES), candidates, np.ones(len(data.examples.labels), dtype=bool)


def test_naive_reduction_charges_once_then_draws_at_eps_over_L(data):
    coverage, candidates, active = _setup(data)
    recorder, noise = Recorder(), CountingNoise(1)
    result = private.naive_reduction(coverage, candidates, active, Fraction(1, 2), noise, recorder)
    assert recorder.charges == [(Fraction(1, 2), recorder.charges[0][1])]
    assert noise.draws == 1 and result.evaluated == len(candidates) == result.level_sizes[0]
    assert not np.isnan(result.noisy_positives).any()


def test_refused_charge_draws_nothing(data):
    coverage, candidates, active = _setup(data)
    noise = CountingNoise(1)
    with pytest.raises(OverBudgetError):
        private.naive_reduction(coverage, candidates, active, Fraction(1), noise, Recorder(Fraction(1, 2)))
    assert noise.draws == 0
    recorder = Recorder(Fraction(1, 2))  # levels 0, 1 fit (1/8 each), level 2 ... refused
    with pytest.raises(OverBudgetError):
        private.relevance_reduction(coverage, candidates, active, Fraction(2), 3, noise, recorder)
    assert noise.draws == len(recorder.charges) == 1


def test_naive_noise_has_the_claimed_standard_deviation(data):
    """P' - P over many counts: sample std within 4 standard errors of geometric_std(eps/|L|)."""
    coverage, candidates, active = _setup(data, k=6)
    exact_p, exact_n = coverage.counts(candidates, active)
    deviations = []
    for seed in range(40):
        result = private.naive_reduction(coverage, candidates, active, Fraction(1), Randomness(seed=seed),
                                         Recorder())
        deviations.append(result.noisy_positives - exact_p)
        deviations.append(result.noisy_negatives - exact_n)
    sample = np.concatenate(deviations)
    claimed = private.geometric_std(Fraction(1, len(candidates)))
    # the std of a sample std is about sigma * sqrt((kurtosis - 1) / (4 n)); Laplace kurtosis 6
    tolerance = 4 * claimed * math.sqrt(5 / (4 * len(sample)))
    assert abs(sample.std() - claimed) < tolerance
    assert claimed == pytest.approx(bounds.naive_std(len(candidates), 1))


def test_relevance_levels_charge_eps_over_l_plus_1_and_scale_by_alive_clauses(data):
    coverage, candidates, active = _setup(data, k=8, levels=3)
    recorder = Recorder()
    result = private.relevance_reduction(coverage, candidates, active, Fraction(1), 3, Randomness(seed=2),
                                         recorder)
    assert [e for e, _ in recorder.charges] == [Fraction(1, 4)] * len([s for s in result.level_sizes if s])
    assert recorder.total <= 1
    lengths = np.array([c.length for c in candidates])
    evaluated = ~np.isnan(result.noisy_positives)
    for level, size in enumerate(result.level_sizes):
        assert evaluated[lengths == level].sum() == size
        assert f"{size} alive clauses" in recorder.charges[level][1] or size == 0


def test_pruning_drops_exactly_the_subtrees_below_pruned_clauses(data):
    """With a high minimum positive count, a clause is evaluated iff no evaluated subset of it
    fell below the criterion."""
    coverage, candidates, active = _setup(data, k=8, levels=3)
    result = private.relevance_reduction(coverage, candidates, active, Fraction(1000), 3, Randomness(seed=5),
                                         Recorder(), min_positives=400, slack=0.0)
    masks = private._bitmasks(candidates)
    evaluated = ~np.isnan(result.noisy_positives)
    best = -np.inf
    pruned_masks = []
    for level in range(4):
        rows = [i for i, c in enumerate(candidates) if c.length == level]
        for i in rows:
            dead = any(int(p) & ~int(masks[i]) == 0 for p in pruned_masks)
            assert evaluated[i] == (not dead), candidates[i]
        alive = [i for i in rows if evaluated[i]]
        if alive:
            best = max(best, max(result.noisy_positives[i] - result.noisy_negatives[i] for i in alive))
            pruned_masks += [masks[i] for i in alive if result.noisy_positives[i] < max(400, best)]
    assert 0 < evaluated.sum() < len(candidates)


def test_with_negligible_noise_both_reductions_choose_the_exact_best(data):
    coverage, candidates, active = _setup(data, k=8, levels=3)
    exact_p, exact_n = coverage.counts(candidates, active)
    best = aleph.reduce(candidates, exact_p, exact_n)
    naive = private.naive_reduction(coverage, candidates, active, Fraction(10**6), Randomness(seed=0), Recorder())
    relevance = private.relevance_reduction(coverage, candidates, active, Fraction(10**6), 3, Randomness(seed=0),
                                            Recorder())
    assert naive.index == best == relevance.index


# ------------------------------------------------------------------ the covering loop

def test_dp_learn_charges_epsilon_over_rounds_and_learns_two_clauses():
    data = trains.generate_trains(3000, seed=7, target=TWO)
    bottom = fake.fake_for_target(TWO, MODES, SCHEMA, k=9, seed=2)
    ledger = Subledger(Fraction(30))  # a large budget: this checks the loop, not utility
    theory = private.dp_learn(data, MODES, bottom, Fraction(30), method="relevance", levels=3, rounds=2,
                              noise=Randomness(seed=3), charge=ledger.guard)
    assert ledger.spent_epsilon <= Fraction(30)
    assert len(theory.theory.clauses) == 2
    test = trains.generate_trains(3000, seed=8, target=TWO)
    assert accuracy(theory.theory, test) == 1.0
    recorder = Recorder()
    private.dp_learn(data, MODES, bottom, Fraction(3), method="naive", rounds=2, noise=Randomness(seed=3),
                     charge=recorder)
    assert [e for e, _ in recorder.charges] == [Fraction(3, 2)] * 2


def test_dp_learn_removes_covered_positives_between_rounds():
    """The second round's counts are on the positives the first clause left uncovered."""
    data = trains.generate_trains(1500, seed=9, target=TWO)
    bottom = fake.fake_for_target(TWO, MODES, SCHEMA, k=9, seed=2)
    theory = private.dp_learn(data, MODES, bottom, Fraction(10**6), method="naive", rounds=2,
                              noise=Randomness(seed=1), charge=Recorder())
    first = theory.theory.clauses[0]
    from jostle.learners.ilp.theory import Theory
    left = data.examples.labels & ~covers(Theory((first,)), data)
    assert theory.reports[1].positives == pytest.approx(
        int((covers(Theory((theory.theory.clauses[1],)), data) & left).sum()), abs=1)


def test_dp_learn_refuses_a_seed_read_from_the_data(data):
    from jostle.learners.ilp.search import saturate
    real = saturate(data, MODES, int(np.flatnonzero(data.examples.labels)[0]))
    with pytest.raises(ValueError, match="not differentially private"):
        private.dp_learn(data, MODES, real, 1, noise=Randomness(seed=0), charge=Recorder())


def test_trivial_theories():
    data = trains.generate_trains(300, seed=1, target=TARGET)
    recorder = Recorder()
    everything = private.trivial_theory(data, MODES, 1, noise=Randomness(seed=0), charge=recorder,
                                        rule="all_positive")
    assert recorder.charges == [] and covers(everything.theory, data).all()
    assert everything.to_prolog() == "eastbound(T)."
    majority = private.trivial_theory(data, MODES, 1, noise=Randomness(seed=0), charge=recorder)
    assert [e for e, _ in recorder.charges] == [Fraction(1)]
    # 43% of trains are eastbound under the default target: the majority is negative
    assert not covers(majority.theory, data).any()
    assert private.planned_cost(1, "all_positive") == 0 and private.planned_cost(Fraction(1, 3)) == Fraction(1, 3)


def test_dp_learn_runs_on_simulation_noise_for_training():
    data = trains.generate_trains(500, seed=2, target=TARGET)
    bottom = fake.fake_for_target(TARGET, MODES, SCHEMA, k=8, seed=0)
    one = private.dp_learn(data, MODES, bottom, 1, noise=SimulationNoise(4), charge=Recorder())
    two = private.dp_learn(data, MODES, bottom, 1, noise=SimulationNoise(4), charge=Recorder())
    assert one == two


# ------------------------------------------------------------------ Theorem 3

def test_theorem3_bound():
    assert bounds.theorem3_epsilon(10, 1000, 0.9, 0.1) == pytest.approx(math.log(1024 * 0.9) / 202)
    assert round(bounds.theorem3_epsilon(10, 1000, 0.9, 0.1), 3) == 0.034
    assert bounds.theorem3_epsilon(0, 1000, 0.9, 0.1) == 0.0  # 2^0 (1 - eta) < 1
    with pytest.raises(ValueError):
        bounds.theorem3_epsilon(10, 1000, 1.0, 0.1)


def test_report_is_public_and_says_what_it_does_not_claim():
    bottom = fake.fake_for_target(TARGET, MODES, SCHEMA, k=10, seed=1)
    report = bounds.report(MODES, bottom, 1, rounds=2, levels=3, max_examples=1000)
    assert report.k == 10 and report.level_sizes == (1, 1, 9, 36)
    assert report.naive_lattice == len(legal_clauses(bottom, MODES))
    assert report.naive_std == pytest.approx(private.geometric_std(Fraction(1, 2 * report.naive_lattice)))
    assert report.relevance_stds[3] == pytest.approx(private.geometric_std(Fraction(1, 2) / 4 / 36))
    text = report.text()
    assert "does not say that this database yields no useful theory" in text
    assert "2^10" in text
    assert report.as_dict()["theorem3_epsilon"] == pytest.approx(bounds.theorem3_epsilon(10, 1000, 0.9, 0.1))


def test_a_small_language_mode_set_works():
    tiny = modes("eastbound", "train", ["has_car(+train, -car)", "short(+car)", "closed(+car)"])
    bottom = fake.fake_bottom(tiny, SCHEMA)
    assert bottom.size == 3 and not bottom.truncated


def test_release_counts_is_integer_geometric_and_refuses_non_counts():
    from jostle.privacy.safe_noise import release_counts
    counts = np.arange(2000, dtype=np.int64)
    noisy = release_counts(Randomness(seed=4), counts, 5, Fraction(1, 2))
    assert np.array_equal(noisy, np.rint(noisy))
    deviations = noisy - counts
    claimed = private.geometric_std(Fraction(1, 10))
    assert abs(deviations.std() - claimed) < 4 * claimed * math.sqrt(5 / (4 * len(counts)))
    with pytest.raises(TypeError):
        release_counts(Randomness(seed=4), np.array([1.5]), 1, 1)
    with pytest.raises(ValueError):
        release_counts(Randomness(seed=4), counts, 0, 1)


def test_lattice_is_counted_exactly_and_capped_before_any_charge():
    from jostle.learners.ilp.search import MAX_LATTICE, check_lattice, count_legal_clauses
    for k, seed, limit in ((8, 0, 3), (10, 1, 6), (12, 2, 4), (6, None, 6)):
        bottom = fake.fake_bottom(MODES, SCHEMA, k=k, seed=seed)
        assert count_legal_clauses(bottom, MODES, limit) == len(legal_clauses(bottom, MODES, max_length=limit))
    big = fake.fake_bottom(train_modes(max_clause_length=30, max_bottom=30), SCHEMA)
    wide = train_modes(max_clause_length=30, max_bottom=30)
    assert count_legal_clauses(big, wide) > MAX_LATTICE
    with pytest.raises(ValueError, match="declare a smaller k"):
        check_lattice(big, wide)
    recorder, noise = Recorder(), CountingNoise(0)
    with pytest.raises(ValueError, match="declare a smaller k"):
        private.dp_learn(trains.generate_trains(20, seed=0), wide, big, 1, method="naive", noise=noise,
                         charge=recorder)
    assert recorder.charges == [] and noise.draws == 0
    assert math.isfinite(private.geometric_std(1e-300))
