"""The redescription family's private core: views, trees, the exponential mechanism, the exact
samplers, extractReds and the three miners' budgets."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from jostle.learners.redescription import expmech, extract, sampler
from jostle.learners.redescription.algorithms import MinerSettings, mine, non_robust, stable
from jostle.learners.redescription.planted import planted_two_views
from jostle.learners.redescription.queries import Query, Redescription, Term, binomial_pvalue, true_statistics
from jostle.learners.redescription.trees import SplitTree, normalised_gini, pair_score, random_tree
from jostle.learners.redescription.views import ViewSchema, categorical, encode_views, equal_width, from_codes, numeric
from jostle.privacy.noise import Randomness, SimulationNoise
from jostle.privacy.subledger import OverBudgetError


@pytest.fixture(scope="module")
def task():
    return planted_two_views(2000, 7)


def no_charge(epsilon, description):
    return None


# ---------------------------------------------------------------- views
def test_coding_never_fails_and_uses_public_domains_only():
    schema = ViewSchema("v", (categorical("c", ["x", "y"]), numeric("n", [0, 10, 20, 30])))
    frame = pd.DataFrame({"c": ["x", "zzz", None, "y"], "n": [-5.0, 10.0, np.nan, 99.0]})
    codes = encode_views(frame, frame, (schema, schema)).codes[0]
    assert codes[:, 0].tolist() == [0, 2, 2, 1]            # unknown and missing -> "other"
    assert codes[:, 1].tolist() == [0, 1, 3, 2]            # clipped into the bins; NaN -> missing
    splits = schema.splits                                  # "c = x", "c = y", "n < 10", "n < 20"
    assert splits.attribute.tolist() == [0, 0, 1, 1] and splits.value.tolist() == [0, 1, 0, 1]
    # the candidates are the same whatever the data
    other = pd.DataFrame({"c": ["y"] * 4, "n": [15.5] * 4})
    assert ViewSchema("v", schema.attributes).splits.value.tolist() == splits.value.tolist()
    assert encode_views(other, other, (schema, schema)).codes[0][:, 1].tolist() == [1] * 4


def test_views_are_aligned_on_the_entity_key():
    schema = ViewSchema("v", (categorical("c", ["x", "y"]),))
    left = pd.DataFrame({"id": [1, 2, 3], "c": ["x", "y", "x"]})
    right = pd.DataFrame({"id": [3, 1, 9], "c": ["y", "x", "x"]})
    views = encode_views(left, right, (schema, schema), key="id")
    assert views.n_entities == 2
    assert views.codes[0][:, 0].tolist() == [0, 0] and views.codes[1][:, 0].tolist() == [0, 1]


def test_bad_declarations_are_refused():
    with pytest.raises(ValueError, match="strictly"):
        numeric("n", [0, 0, 1])
    with pytest.raises(ValueError, match="domain"):
        categorical("c", [])
    with pytest.raises(ValueError, match="split candidate"):
        ViewSchema("v", (numeric("n", [0, 1]),))          # one bin: nothing to split on
    with pytest.raises(ValueError, match="outside"):
        schema = ViewSchema("v", (categorical("c", ["x"]),))
        from_codes((schema, schema), [[5]], [[0]])


# ---------------------------------------------------------------- trees
def test_leaves_match_their_queries_and_unsatisfiable_leaves_are_empty(task):
    schema = task.views.schemas[0]
    for seed in range(5):
        tree = random_tree(schema, 0, 4, Randomness(seed))
        leaves = tree.leaves(task.views.codes[0], schema)
        satisfiable = tree.satisfiable_leaves(schema)
        for leaf in range(tree.n_leaves):
            mask = tree.leaf_term(leaf, schema).mask(task.views.codes[0])
            assert np.array_equal(mask, leaves == leaf)
            negated = tree.leaf_term(leaf, schema, negated=True).mask(task.views.codes[0])
            assert np.array_equal(negated, leaves != leaf)
            if not satisfiable[leaf]:
                assert not mask.any()


def test_contradictory_paths_are_found_from_the_schema():
    schema = ViewSchema("v", (categorical("c", ["x", "y"]), equal_width("n", 0, 40, 4)))
    # root "c = x", its yes-child "c = y": leaves 0 and 1 need c = x and c = y at once
    tree = SplitTree(0, 2, (0, 1, 2))
    assert tree.satisfiable_leaves(schema).tolist() == [False, True, True, True]


def test_normalised_gini_is_exact_and_in_the_unit_interval():
    counts = np.array([[3, 1], [0, 0], [2, 2]])
    assert normalised_gini(counts) == Fraction(1, 8) * (Fraction(10, 4) + Fraction(8, 4))
    assert normalised_gini(np.zeros((2, 3), dtype=int)) == 0
    assert normalised_gini(np.array([[5, 0], [0, 7]])) == 1
    rng = np.random.default_rng(0)
    for _ in range(50):
        g = normalised_gini(rng.integers(0, 20, size=(4, 3)))
        assert 0 <= g <= 1
    assert pair_score(Fraction(1), Fraction(1)) == 1 and pair_score(Fraction(0), Fraction(1)) == 0


# ---------------------------------------------------------------- the exponential mechanism
def test_expmech_picks_the_attribute_copied_into_the_other_view_at_a_large_budget():
    rng = np.random.default_rng(3)
    n = 3000
    hidden = rng.integers(0, 2, n)
    left = pd.DataFrame({"a": rng.choice(["p", "q", "r"], n), "b": np.where(hidden == 1, "s", "t"),
                         "c": rng.uniform(0, 100, n)})
    right = pd.DataFrame({"z": np.where(hidden == 1, "yes", "no")})
    schemas = (ViewSchema("l", (categorical("a", "pqr"), categorical("b", "st"), equal_width("c", 0, 100, 5))),
               ViewSchema("r", (categorical("z", ["yes", "no"]),)))
    views = encode_views(left, right, schemas)
    target = views.codes[1][:, 0]
    tree = expmech.exp_mech_tree(views, 0, target, 3, 2, 50.0, Randomness(1))
    attribute = schemas[0].splits.attribute[tree.candidate[0]]
    assert schemas[0].attributes[attribute].name == "b"


def test_gini_utilities_match_a_direct_computation(task):
    views = task.views
    target = views.codes[1][:, 0]
    node = np.zeros(views.n_entities, dtype=np.int64)
    utilities = expmech.split_utilities(views, 0, node, 1, target, views.schemas[1].attributes[0].n_codes)
    splits = views.schemas[0].splits
    for k in range(0, len(splits), 7):
        column = views.codes[0][:, splits.attribute[k]]
        yes = column <= splits.value[k] if splits.numeric[k] else column == splits.value[k]
        expected = 0.0
        for side in (yes, ~yes):
            counts = np.bincount(target[side], minlength=views.schemas[1].attributes[0].n_codes)
            if counts.sum():
                expected -= counts.sum() - (counts ** 2).sum() / counts.sum()
        assert utilities[0, k] == pytest.approx(expected)


# ---------------------------------------------------------------- the exact samplers
def test_rejection_sampling_draws_the_exponential_mechanism_exactly():
    from scipy.stats import chisquare

    scores = [Fraction(0), Fraction(1, 2), Fraction(1)]
    noise = Randomness(11)
    epsilon = Fraction(3)
    draws = [sampler.rejection_sample(noise, epsilon, lambda: int(noise.integers_below(3, 1)[0]),
                                      lambda i: scores[i], "test") for _ in range(3000)]
    weights = np.exp([float(epsilon) * float(s) / 2 for s in scores])
    expected = 3000 * weights / weights.sum()
    observed = np.bincount(draws, minlength=3)
    assert chisquare(observed, expected).pvalue > 1e-3


def test_a_score_outside_the_unit_interval_is_refused():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        sampler.rejection_sample(Randomness(0), 1.0, lambda: 0, lambda _: Fraction(3, 2), "test")


def test_block_size_is_public_and_bounds_a_whole_block_rejection():
    for epsilon in (0.01, 0.1, 1.0, 4.0, 10.0):
        k = sampler.block_size(epsilon)
        assert (1 - math.exp(-epsilon / 2)) ** k <= 2.0 ** -30 or k == sampler.MAX_BLOCK
    assert sampler.block_size(100.0) == sampler.MAX_BLOCK


def test_tree_pair_sampler_returns_one_tree_per_view(task):
    target = task.views.codes[1][:, 0]
    left, right = sampler.sample_tree_pair(task.views, 0, target, task.views.schemas[1].attributes[0].n_codes, 3,
                                           1.0, Randomness(2))
    assert (left.view, right.view, left.depth, right.depth) == (0, 1, 3, 3)


# ---------------------------------------------------------------- extractReds
def test_extraction_makes_two_releases_at_half_the_budget_each(task, monkeypatch):
    calls = []
    original = extract.safe_noise.release_counts

    def spy(noise, counts, l1, epsilon):
        calls.append((np.asarray(counts).shape, l1, Fraction(epsilon)))
        return original(noise, counts, l1, epsilon)

    monkeypatch.setattr(extract.safe_noise, "release_counts", spy)
    noise = Randomness(4)
    left = random_tree(task.views.schemas[0], 0, 3, noise)
    right = random_tree(task.views.schemas[1], 1, 3, noise)
    extract.extract_redescriptions(task.views, left, right, Fraction(1, 3), noise)
    assert len(calls) == 2                                          # never a third (right supports)
    assert all(l1 == 1 and eps == Fraction(1, 6) for _, l1, eps in calls)
    sat = (left.satisfiable_leaves(task.views.schemas[0]).sum(), right.satisfiable_leaves(task.views.schemas[1]).sum())
    assert calls[0][0] == sat and calls[1][0] == (sat[0],)


def test_noisy_statistics_track_the_true_ones_at_a_large_budget(task):
    noise = Randomness(5)
    left = random_tree(task.views.schemas[0], 0, 2, noise)
    right = random_tree(task.views.schemas[1], 1, 2, noise)
    constraints = extract.Constraints(min_support=0, max_pvalue=1.0, min_jaccard=0.0)
    reds = extract.extract_redescriptions(task.views, left, right, 200.0, noise, constraints)
    assert reds
    for red in reds:
        truth = true_statistics(red, task.views)
        assert abs(red.noisy_support - truth["support"]) <= 8 * red.support_noise_sd + 1
        assert abs(red.noisy_size - truth["size"]) <= 20
        assert red.left.terms and red.right.terms
        assert red.left.mask(task.views.codes[0]).mean() < 1 and red.right.mask(task.views.codes[1]).mean() < 1


def test_pruning_threshold_follows_the_noise_scale():
    sd = extract.cell_noise_sd(1.0)
    t = math.exp(-0.5)
    assert sd == pytest.approx(math.sqrt(2 * t) / (1 - t))
    assert extract.pruning_threshold(4, 1.0, 0.1) == pytest.approx(2 * sd / 0.1)
    assert extract.pruning_threshold(1, 0.1) > extract.pruning_threshold(1, 1.0)


def test_binomial_pvalue_is_the_clired_formula():
    from scipy.stats import binom

    assert binomial_pvalue(30, 40, 50, 100) == pytest.approx(1 - binom.cdf(29, 100, 0.4 * 0.5))
    assert binomial_pvalue(0, 0, 0, 0) == 1.0


# ---------------------------------------------------------------- the miners
@pytest.mark.parametrize("settings", [non_robust("AltExpM", 2), stable("AltExpM", 2), non_robust("AltMCMC", 2),
                                      stable("AltMCMC", 3), MinerSettings("MCMCTreePair", tries=3),
                                      MinerSettings("MCMCTreePair", tries=2, omega=Fraction(1, 10))])
def test_charges_add_to_exactly_epsilon_and_precede_every_draw(task, settings):
    events = []

    class Watched(Randomness):
        def integers_below(self, bound, size):
            events.append("draw")
            return super().integers_below(bound, size)

        def discrete_laplace(self, scale, size):
            events.append("draw")
            return super().discrete_laplace(scale, size)

    charges = []

    def charge(epsilon, description):
        events.append("charge")
        charges.append((epsilon, description))

    result = mine(task.views, settings, Fraction(7, 10), noise=Watched(3), charge=charge)
    assert sum(c[0] for c in charges) == Fraction(7, 10)
    assert all(isinstance(c[0], Fraction) for c in charges)
    assert [c[1].split(": ", 1)[1] for c in charges] == [d for _, d in settings.planned_steps()]
    assert events[0] == "charge"
    assert result.epsilon == Fraction(7, 10) and result.algorithm == settings.label


def test_a_refused_first_charge_draws_nothing(task):
    class Counting(Randomness):
        draws = 0

        def _words(self, size):
            Counting.draws += 1
            return super()._words(size)

    def refuse(epsilon, description):
        raise OverBudgetError("no budget")

    with pytest.raises(OverBudgetError):
        mine(task.views, non_robust("AltExpM", 2), 1.0, noise=Counting(1), charge=refuse)
    assert Counting.draws == 0


@pytest.mark.parametrize("bad", [dict(algorithm="SplitT"), dict(algorithm="AltExpM", tries=0),
                                 dict(algorithm="MCMCTreePair", omega=1), dict(algorithm="AltExpM", depth=9),
                                 dict(algorithm="AltExpM", tries=40, alternations=40)])
def test_bad_settings_are_refused_before_anything_is_charged(bad):
    with pytest.raises(ValueError):
        MinerSettings(**bad)


def test_bad_epsilon_is_refused_before_the_first_charge(task):
    charges = []
    for epsilon in (0, -1, float("nan")):
        with pytest.raises(ValueError):
            mine(task.views, non_robust("AltExpM", 1), epsilon, noise=Randomness(0),
                 charge=lambda e, d: charges.append(e))
    assert charges == []


def test_at_a_large_budget_the_miners_find_a_planted_redescription():
    task = planted_two_views(4000, 1, planted=1, noise_attributes=2, flip=0.02)
    truth = Redescription(*task.truths[0], 0, 0, 0, 0, 0, 0, 0)
    planted_jaccard = true_statistics(truth, task.views)["jaccard"]
    # AltExpM's count-weighted Gini separates trees at a moderate budget; the normalised score of
    # the samplers needs a per-tree epsilon in the tens (thousands of proposals per block) to do so
    result = mine(task.views, non_robust("AltExpM", 2), 50.0, noise=Randomness(2), charge=no_charge)
    frame = result.evaluate(task.views, include_pruned=False)
    assert len(frame) > 0
    assert frame.true_jaccard.max() >= 0.8 * planted_jaccard


def test_simulation_noise_runs_the_same_miners(task):
    result = mine(task.views, MinerSettings("MCMCTreePair", tries=2), 1.0, noise=SimulationNoise(0), charge=no_charge)
    assert result.algorithm.startswith("MCMCTreePair")


def test_a_set_prints_and_converts_to_pandas(task):
    result = mine(task.views, non_robust("AltExpM", 2), 2.0, noise=Randomness(8), charge=no_charge)
    text = str(result)
    assert text.startswith("AltExpM(InTr=1, RMIter=2) at epsilon 2:")
    frame = result.to_frame(include_pruned=True)
    assert list(frame.columns)[:5] == ["left", "right", "support", "jaccard", "pvalue"]
    assert len(frame) == len(result)
    assert set(result.evaluate(task.views).columns) >= {"true_support", "true_jaccard", "true_pvalue"}


def test_queries_print_in_the_schema_names():
    schema = ViewSchema("v", (categorical("c", ["x", "y"]), equal_width("n", 0, 40, 4)))
    from jostle.learners.redescription.queries import Literal
    query = Query(0, (Term((Literal(0, False, 0), Literal(1, True, 1, False))), Term((Literal(0, False, 1),), True)))
    assert query.text(schema) == "(c = x AND n >= 20) OR NOT (c = y)"
