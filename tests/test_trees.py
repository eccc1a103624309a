"""Tests of jostle.learners.trees: the private decision-tree family and the C4.5 baseline.

Synthetic categorical data made here (no ../shared): attribute a0 decides the class (with 10%
label noise), the other attributes are independent noise. Randomness comes from seeded
`Randomness` objects; tolerances are derived from binomial standard deviations.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.utils.estimator_checks import (check_get_params_invariance, check_parameters_default_constructible,
                                            check_set_params)

from jostle.privacy.noise import Randomness
from jostle.learners.trees.configurations import CHOICE_POINTS
from jostle.learners.trees import (CONFIGURATIONS, BudgetExceededError, C45DecisionTreeClassifier, DPDecisionTreeClassifier,
                          NumericBins, PrivacyLedger, encode_features, make_learner)
from jostle.learners.trees.accounting import plan_tree_budget
from jostle.learners.trees.pruning import pessimistic_extra_errors
from jostle.privacy import safe_noise
from jostle.learners.trees.releases import exponential_mechanism, noisy_counts
from jostle.learners.trees.utilities import UTILITY_IS_MONOTONE, split_utility, utility_sensitivity

LABEL_NOISE = 0.1
N_ATTRIBUTES = 5
CLASSES = ["low", "mid", "high"]
DOMAINS = {f"a{i}": ["x", "y", "z"] for i in range(N_ATTRIBUTES)}
BAYES_ACCURACY = 1 - LABEL_NOISE + LABEL_NOISE / 3


def make_table(rows: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """a0 decides the class (x->low, y->mid, z->high) except for 10% random labels."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, size=(rows, N_ATTRIBUTES))
    frame = pd.DataFrame({f"a{i}": np.array(["x", "y", "z"])[codes[:, i]] for i in range(N_ATTRIBUTES)})
    label = np.where(rng.random(rows) < LABEL_NOISE, rng.integers(0, 3, rows), codes[:, 0])
    return frame, np.array(CLASSES)[label]


@pytest.fixture(scope="module")
def data() -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame, np.ndarray]:
    X, y = make_table(3000, seed=11)
    X_test, y_test = make_table(1500, seed=12)
    return X, y, X_test, y_test


def accuracy_margin(p: float, n: int, sigmas: float = 4.0) -> float:
    """sigmas binomial standard deviations of an accuracy p measured on n rows."""
    return sigmas * math.sqrt(p * (1 - p) / n)


# --- the non-private baseline -------------------------------------------------------------------

def test_c45_recovers_the_deciding_attribute(data):
    X, y, X_test, y_test = data
    tree = C45DecisionTreeClassifier(domains=DOMAINS, classes=CLASSES, max_depth=5).fit(X, y)
    grown = tree.trees_[0]
    assert grown.attribute[0] == 0  # the root splits on a0
    assert grown.n_leaves == 3  # pessimistic pruning removes every split on noise attributes
    assert tree.score(X_test, y_test) >= BAYES_ACCURACY - accuracy_margin(BAYES_ACCURACY, len(y_test))


def test_c45_without_pruning_splits_on_noise_down_to_the_depth_limit(data):
    X, y, _, _ = data
    unpruned = C45DecisionTreeClassifier(domains=DOMAINS, classes=CLASSES, max_depth=3, prune=False).fit(X, y)
    assert unpruned.trees_[0].max_depth == 3 and unpruned.trees_[0].n_leaves > 3


def test_pessimistic_errors_match_c45():
    # Quinlan (1993): U_25%(0, 6) = 0.206, U_25%(0, 9) = 0.143, U_25%(0, 1) = 0.750; for E >= 1 C4.5
    # uses a normal approximation, within 0.01 of the exact binomial limit (beta quantile)
    n = np.array([6.0, 9.0, 1.0, 16.0, 100.0, 20.0, 200.0])
    e = np.array([0.0, 0.0, 0.0, 1.0, 10.0, 3.0, 40.0])
    upper = (pessimistic_extra_errors(n, e, 0.25) + e) / n
    exact = stats.beta.ppf(0.75, e + 1, n - e)
    np.testing.assert_allclose(upper[:3], [0.2063, 0.1428, 0.75], atol=5e-4)
    np.testing.assert_allclose(upper, exact, atol=0.01)


# --- the private family: accuracy at the ends of the epsilon range -------------------------------

# configurations that cannot represent a three-way rule on a0 (one label; one binary split)
LIMITED_CAPACITY = {"majority", "one_rule"}


@pytest.mark.parametrize("configuration", sorted(set(CONFIGURATIONS) - LIMITED_CAPACITY))
def test_large_epsilon_is_near_the_non_private_tree(data, configuration):
    X, y, X_test, y_test = data
    baseline = C45DecisionTreeClassifier(domains=DOMAINS, classes=CLASSES).fit(X, y).score(X_test, y_test)
    learner = make_learner(configuration, 1000.0, domains=DOMAINS, classes=CLASSES, random_state=3).fit(X, y)
    assert learner.score(X_test, y_test) >= baseline - accuracy_margin(baseline, len(y_test))


def test_one_rule_at_large_epsilon_is_the_best_labelled_binary_split(data):
    X, y, _, _ = data
    codes = np.column_stack([pd.Categorical(X[c], categories=DOMAINS[c]).codes for c in DOMAINS])
    labels = np.array([CLASSES.index(v) for v in y])
    counts = np.bincount(labels, minlength=3)
    best = counts.max()  # a constant label
    for a in range(N_ATTRIBUTES):
        for v in range(3):
            inside = np.bincount(labels[codes[:, a] == v], minlength=3)
            outside = counts - inside
            best = max(best, max(inside[i] + outside[o] for i in range(3) for o in range(3) if i != o))
    learner = make_learner("one_rule", 1000.0, domains=DOMAINS, classes=CLASSES, random_state=3).fit(X, y)
    # at epsilon 1000 a candidate one row worse is e^-1000 times less likely: the argmax
    assert learner.score(X, y) == best / len(y)
    tree = learner.trees_[0]
    assert tree.attribute[0] == 0 and tree.split_value[0] >= 0 and tree.n_leaves == 2
    assert learner.epsilon_spent_ <= 1000.0 and len(learner.ledger_.records) == 1


def test_majority_at_large_epsilon_answers_the_majority_class(data):
    X, y, X_test, _ = data
    learner = make_learner("majority", 1000.0, domains=DOMAINS, classes=CLASSES, random_state=3).fit(X, y)
    values, counts = np.unique(y, return_counts=True)
    assert set(learner.predict(X_test)) == {values[counts.argmax()]}


def test_binary_splits_route_rows_by_equality_and_print_both_sides():
    # a0 == "z" decides the class; a binary tree needs one split, a multiway one three leaves
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 3, size=(2000, 2))
    X = pd.DataFrame({"a0": np.array(["x", "y", "z"])[codes[:, 0]], "a1": np.array(["x", "y", "z"])[codes[:, 1]]})
    y = np.where(codes[:, 0] == 2, "high", "low")
    domains = {"a0": ["x", "y", "z"], "a1": ["x", "y", "z"]}
    for configuration in ("one_rule", "binary_joint"):
        learner = make_learner(configuration, 50.0, domains=domains, classes=["low", "high"], random_state=1)
        learner.fit(X, y)
        assert learner.score(X, y) == 1.0
    text = make_learner("one_rule", 50.0, domains=domains, classes=["low", "high"], random_state=1).fit(X, y).to_text()
    assert "a0 = z: high" in text and "a0 != z: low" in text


@pytest.mark.parametrize("configuration", sorted(CONFIGURATIONS))
def test_tiny_epsilon_falls_to_majority_accuracy(data, configuration):
    X, y, X_test, y_test = data
    majority = max(np.mean(y_test == c) for c in CLASSES)
    seeds = range(8)
    scores = [make_learner(configuration, 1e-4, domains=DOMAINS, classes=CLASSES, random_state=s)
              .fit(X, y).score(X_test, y_test) for s in seeds]
    # no better than always answering the majority class, up to 4 sd of the mean of 8 scores:
    # the test rows' binomial sd plus, for learners whose output varies between runs (a
    # uniformly random rule scores anywhere from 0.2 to 0.6 here), the scores' own sd. A leak
    # of the deciding attribute would score about 0.93
    between_runs = 4 * np.std(scores, ddof=1) / math.sqrt(len(seeds))
    assert np.mean(scores) <= majority + accuracy_margin(majority, len(y_test) * len(seeds)) + between_runs


# --- budget accounting ----------------------------------------------------------------------------

@pytest.mark.parametrize("configuration", sorted(CONFIGURATIONS))
@pytest.mark.parametrize("epsilon", [0.03, 0.7, 3.0])
def test_spent_epsilon_never_exceeds_the_given_epsilon(data, configuration, epsilon):
    X, y, _, _ = data
    charged: list[float] = []
    learner = make_learner(configuration, epsilon, domains=DOMAINS, classes=CLASSES, random_state=5,
                           charge=lambda eps, what: charged.append(eps)).fit(X, y)
    assert 0 < learner.epsilon_spent_ <= epsilon
    assert math.fsum(charged) == pytest.approx(learner.epsilon_spent_, rel=1e-12)
    assert math.fsum(charged) <= epsilon * (1 + 1e-12)


def test_disjoint_trees_compose_in_parallel(data):
    X, y, _, _ = data
    charged: list[float] = []
    learner = DPDecisionTreeClassifier(0.5, domains=DOMAINS, classes=CLASSES, n_trees=4, disjoint_trees=True,
                                       max_depth=3, random_state=2, charge=lambda eps, what: charged.append(eps)).fit(X, y)
    per_tree = [tree.epsilon for tree in learner.trees_]
    assert max(per_tree) == pytest.approx(learner.epsilon_spent_)  # not their sum
    assert sum(per_tree) > 2 * learner.epsilon_spent_
    assert learner.epsilon_spent_ <= 0.5 and math.fsum(charged) == pytest.approx(learner.epsilon_spent_)


def test_the_table_size_query_comes_off_the_top(data):
    X, y, _, _ = data
    learner = DPDecisionTreeClassifier(1.0, domains=DOMAINS, classes=CLASSES, n_trees=2,
                                       max_depth="signal_to_noise", size_fraction=0.1, random_state=2).fit(X, y)
    assert learner.budget_["table_size_query"] == pytest.approx(0.1)
    assert learner.tree_epsilon_ == pytest.approx(0.45)
    assert learner.epsilon_spent_ == pytest.approx(0.1 + sum(tree.epsilon for tree in learner.trees_))


def test_sequential_trees_share_the_budget(data):
    X, y, _, _ = data
    learner = DPDecisionTreeClassifier(0.5, domains=DOMAINS, classes=CLASSES, n_trees=4, max_depth=3,
                                       random_state=2).fit(X, y)
    assert learner.tree_epsilon_ == pytest.approx(0.125)
    assert sum(tree.epsilon for tree in learner.trees_) == pytest.approx(learner.epsilon_spent_)


def test_ledger_refuses_an_over_budget_charge_before_calling_back():
    calls: list[tuple[float, str]] = []
    ledger = PrivacyLedger(1.0, lambda eps, what: calls.append((eps, what)))
    ledger.charge(0.6, "first")
    with pytest.raises(BudgetExceededError):
        ledger.charge(0.5, "second")
    assert calls == [(0.6, "first")] and ledger.spent == 0.6
    ledger.charge(0.4, "third", part=1)
    ledger.charge(0.4, "fourth", part=2)  # parallel to part 1: free
    assert ledger.spent == 1.0 and [what for _, what in calls] == ["first", "third"]


def test_budget_plan_never_overspends():
    for total in (0.1, 1.0, 7.3):
        for levels in (1, 3, 7):
            for leaf_fraction in (None, 0.2, 0.5):
                plan = plan_tree_budget(__import__("fractions").Fraction(total), levels, True, True,
                                        leaf_fraction, 0.3)
                spent = levels * (plan.size_epsilon + plan.split_epsilon) + plan.leaf_epsilon
                assert spent <= total and spent == pytest.approx(total)


class RecordingNoise:
    """A Randomness whose draws are logged, to check the order of charges and measurements."""

    def __init__(self, seed: int, log: list[tuple[str, object]]) -> None:
        self._inner = Randomness(seed=seed)
        self.log = log

    def uniform(self, size):  # public randomness (attribute choices, tree parts)
        self.log.append(("public", size))
        return self._inner.uniform(size)

    def laplace(self, scale, size):
        self.log.append(("noise", "laplace"))
        return self._inner.laplace(scale, size)

    def gumbel(self, size):
        self.log.append(("noise", "gumbel"))
        return self._inner.gumbel(size)

    def two_sided_geometric(self, epsilon_per_unit, size):
        self.log.append(("noise", "geometric"))
        return self._inner.two_sided_geometric(epsilon_per_unit, size)

    def discrete_laplace(self, scale, size):
        self.log.append(("noise", "discrete laplace"))
        return self._inner.discrete_laplace(scale, size)

    def exponential_index(self, utilities, coefficient):
        self.log.append(("noise", "exponential"))
        return self._inner.exponential_index(utilities, coefficient)

    def exponential_indices(self, utilities, coefficient):
        self.log.append(("noise", "exponential per row"))
        return self._inner.exponential_indices(utilities, coefficient)


@pytest.mark.parametrize("configuration", sorted(CONFIGURATIONS))
def test_every_measurement_is_charged_before_its_noise(data, configuration):
    X, y, _, _ = data
    log: list[tuple[str, object]] = []
    learner = make_learner(configuration, 1.0, domains=DOMAINS, classes=CLASSES,
                           noise=RecordingNoise(7, log), charge=lambda eps, what: log.append(("charge", eps)))
    learner.fit(X, y)
    measurements = [i for i, (kind, _) in enumerate(log) if kind == "noise"]
    assert measurements, "a private learner must draw noise"
    previous = -1
    for index in measurements:
        between = [kind for kind, _ in log[previous + 1:index]]
        assert "charge" in between, f"noise draw {log[index]} not preceded by its own charge"
        previous = index
    assert [kind for kind, _ in log].count("charge") == len(learner.ledger_.records)


def test_configurations_spend_on_the_queries_they_name(data):
    X, y, _, _ = data

    def charges(configuration: str) -> str:
        learner = make_learner(configuration, 1.0, domains=DOMAINS, classes=CLASSES, random_state=1).fit(X, y)
        return " | ".join(what for _, what in learner.budget_["charges"])

    assert "noisy sizes" in charges("friedman_schuster") and "exponential mechanism" in charges("friedman_schuster")
    assert "noisy sizes" not in charges("mohammed") and "entropy utility" in charges("mohammed")
    jagannathan = charges("jagannathan")
    assert "exponential mechanism" not in jagannathan and "noisy size of the table" in jagannathan
    assert "labels of" in charges("fletcher_islam") and "choosing splits" not in charges("fletcher_islam")
    assert charges("one_rule").count("exponential mechanism") == 1 and "last splits and labels" in charges("one_rule")
    binary = charges("binary_joint")  # depth 3: two split levels, then the joint release
    assert binary.count("choosing splits") == 2 and binary.count("last splits and labels") == 1
    assert "noisy" not in charges("majority") and "labels of 1 leaves" in charges("majority")


VARIATIONS = [(point, value) for point, values in CHOICE_POINTS.items() for value in values] + [("max_features", 2)]


@pytest.mark.parametrize("point,value", VARIATIONS, ids=[f"{p}={v}" for p, v in VARIATIONS])
def test_every_choice_point_value_fits_within_budget(data, point, value):
    X, y, X_test, _ = data
    overrides = {point: value}
    if point == "leaf_mechanism" and value in ("exponential", "joint"):
        overrides["prune"] = False  # pruning reads counts
    if point == "leaf_mechanism" and value == "joint":
        overrides["split_kind"] = "binary"  # its candidates are labelled binary splits
    learner = make_learner("friedman_schuster", 0.8, domains=DOMAINS, classes=CLASSES, random_state=13,
                           **overrides).fit(X[:1500], y[:1500])
    assert 0 < learner.epsilon_spent_ <= 0.8
    assert learner.get_params()[point] == value
    np.testing.assert_allclose(learner.predict_proba(X_test).sum(axis=1), 1.0, atol=1e-12)


def test_node_cap_bounds_every_tree(data):
    X, y, _, _ = data
    learner = DPDecisionTreeClassifier(100.0, domains=DOMAINS, classes=CLASSES, split_utility="random",
                                       stopping="depth", max_depth=None, max_nodes=50, random_state=0).fit(X, y)
    assert learner.trees_[0].attribute.size <= 50 and learner.trees_[0].max_depth == 3  # 1 + 3 + 9 + 27 = 40


def test_hole9_tree_row_bound_is_a_clamp_not_an_error(data):
    """Issue 11, hole 9: a table above the entropy utility's public row bound max_rows used to
    raise "too many rows" after the budget was charged, an exact one-bit answer to "n > N?".
    It is now learnt like any other (the utility is continued linearly above N, so its
    sensitivity holds): no error, the charges stay within epsilon, and a clear split is found."""
    X, y, X_test, y_test = data
    assert len(X) > 100
    charges = []
    learner = make_learner("mohammed", 1.0, domains=DOMAINS, classes=CLASSES, max_rows=100,
                           noise=Randomness(seed=4), charge=lambda eps, what: charges.append(eps)).fit(X, y)
    assert 0 < sum(Fraction(c) for c in charges) <= Fraction(1.0)
    assert learner.epsilon_spent_ <= 1.0
    assert learner.trees_[0].attribute[0] == 0  # the root splits on a0, the attribute that decides the class


def test_hole9_capped_entropy_utility_keeps_its_sensitivity_above_the_bound():
    """The capped entropy utility equals the exact one on nodes of at most max_rows rows, and for
    any size adding a row moves it down by at most log2(max_rows + 1) + 1/ln 2 (monotone)."""
    rng = np.random.default_rng(7)
    max_rows = 50
    sensitivity = utility_sensitivity("entropy", max_rows)
    largest = 0.0
    for _ in range(500):
        values, classes = rng.integers(1, 5), rng.integers(2, 4)
        table = rng.integers(0, 4 * max_rows, size=(1, values, classes)).astype(float)
        before = split_utility("entropy", table, max_rows)[0]
        j, c = rng.integers(values), rng.integers(classes)
        table[0, j, c] += 1
        change = split_utility("entropy", table, max_rows)[0] - before
        assert -sensitivity - 1e-9 <= change <= 1e-9
        largest = max(largest, -change)
    assert largest > math.log2(max_rows)  # the bound is nearly reached: counts above the cap were drawn
    small = rng.integers(0, 5, size=(20, 3, 2)).astype(float)  # every node below 50 rows
    np.testing.assert_allclose(split_utility("entropy", small, max_rows), split_utility("entropy", small))


# --- the utilities' sensitivity and monotonicity, on which the exponential mechanism relies -------

@pytest.mark.parametrize("name", ["entropy", "gini", "max"])
def test_adding_a_row_moves_every_utility_one_way_within_the_sensitivity(name):
    rng = np.random.default_rng(0)
    max_rows = 60
    sensitivity = utility_sensitivity(name, max_rows)
    for _ in range(300):
        values, classes = rng.integers(1, 6), rng.integers(2, 5)
        table = rng.integers(0, 4, size=(1, values, classes)).astype(float)
        table *= (max_rows - 1) / max(table.sum(), 1) if table.sum() > max_rows - 1 else 1
        table = np.floor(table)
        before = split_utility(name, table)[0]
        j, c = rng.integers(values), rng.integers(classes)
        table[0, j, c] += 1
        change = split_utility(name, table)[0] - before
        if name == "max":
            assert -1e-9 <= change <= sensitivity + 1e-9
        else:
            assert -sensitivity - 1e-9 <= change <= 1e-9
        assert UTILITY_IS_MONOTONE[name]


def test_exponential_mechanism_samples_its_distribution():
    utilities = np.array([[0.0, 1.0, 2.0, -np.inf, 0.5]])
    epsilon, sensitivity, draws = 1.3, 1.0, 20000
    noise = Randomness(seed=42)
    choices = np.array([exponential_mechanism(noise, utilities, epsilon, sensitivity, monotone=True)[0]
                        for _ in range(draws)])
    weights = np.exp(epsilon * np.array([0.0, 1.0, 2.0, 0.5]) / sensitivity)
    expected = weights / weights.sum() * draws
    observed = np.bincount(choices, minlength=5)
    assert observed[3] == 0  # an excluded candidate is never chosen
    assert stats.chisquare(observed[[0, 1, 2, 4]], expected).pvalue > 1e-6


# --- scikit-learn compatibility, prediction and printouts ----------------------------------------

@pytest.mark.parametrize("estimator", [DPDecisionTreeClassifier(0.5, domains=DOMAINS, classes=CLASSES),
                                       C45DecisionTreeClassifier(domains=DOMAINS, classes=CLASSES)])
def test_sklearn_parameter_protocol(estimator):
    name = type(estimator).__name__
    check_get_params_invariance(name, estimator)
    check_set_params(name, estimator)
    check_parameters_default_constructible(name, estimator)
    copy = clone(estimator)
    assert copy.get_params() == estimator.get_params() and copy is not estimator


def test_clone_of_a_named_configuration_keeps_its_choice_points(data):
    X, y, X_test, _ = data
    learner = make_learner("fletcher_islam", 2.0, domains=DOMAINS, classes=CLASSES, random_state=9)
    copy = clone(learner)
    for choice_point, value in CONFIGURATIONS["fletcher_islam"].items():
        assert copy.get_params()[choice_point] == value
    np.testing.assert_array_equal(learner.fit(X, y).predict(X_test), copy.fit(X, y).predict(X_test))


@pytest.mark.parametrize("configuration", sorted(CONFIGURATIONS))
def test_predict_proba_rows_are_distributions(data, configuration):
    X, y, X_test, _ = data
    learner = make_learner(configuration, 0.3, domains=DOMAINS, classes=CLASSES, random_state=4).fit(X, y)
    proba = learner.predict_proba(X_test)
    assert proba.shape == (len(X_test), len(CLASSES)) and (proba >= 0).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(learner.predict(X_test), np.array(CLASSES)[proba.argmax(axis=1)])


def test_prediction_follows_column_names_not_positions(data):
    X, y, X_test, _ = data
    learner = C45DecisionTreeClassifier(domains=DOMAINS, classes=CLASSES).fit(X, y)
    shuffled = X_test[list(reversed(X_test.columns))]
    np.testing.assert_array_equal(learner.predict(shuffled), learner.predict(X_test))
    as_array = DPDecisionTreeClassifier(1.0, domains=list(DOMAINS.values()), classes=CLASSES, random_state=1)
    as_array.fit(X.to_numpy(), y)
    assert as_array.predict(X_test.to_numpy()).shape == (len(X_test),)


def test_runs_are_reproducible_from_the_noise_source_alone(data):
    X, y, X_test, _ = data
    first = make_learner("jagannathan", 0.5, domains=DOMAINS, classes=CLASSES, random_state=21).fit(X, y)
    np.random.seed(1)  # NumPy's global generator must play no part
    second = make_learner("jagannathan", 0.5, domains=DOMAINS, classes=CLASSES, random_state=21).fit(X, y)
    np.testing.assert_array_equal(first.predict_proba(X_test), second.predict_proba(X_test))


def test_printout_is_readable(data):
    X, y, _, _ = data
    text = make_learner("friedman_schuster", 5.0, domains=DOMAINS, classes=CLASSES, random_state=0).fit(X, y).to_text()
    lines = text.splitlines()
    assert lines[0].startswith("Friedman & Schuster: ") and "epsilon" in lines[0] and "tree tree" not in lines[0]
    assert "a0 = x: low  [low " in text and "a0 = z: high" in text
    exact = C45DecisionTreeClassifier(domains=DOMAINS, classes=CLASSES).fit(X, y).to_text()
    assert [line.split(":")[0] for line in exact.splitlines()[1:]] == ["a0 = x", "a0 = y", "a0 = z"]


def test_printout_of_a_deeper_tree_indents_children():
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 2, size=(2000, 2))
    X = pd.DataFrame({"p": np.array(["no", "yes"])[codes[:, 0]], "q": np.array(["no", "yes"])[codes[:, 1]]})
    y = np.where(codes[:, 0] ^ codes[:, 1], "odd", "even")
    text = C45DecisionTreeClassifier(domains={"p": ["no", "yes"], "q": ["no", "yes"]}, classes=["even", "odd"],
                                     min_samples_split=2, prune=False).fit(X, y).to_text()
    body = text.splitlines()[1:]
    assert body[0] in ("p = no", "q = no") and body[1].startswith("|   ") and body[1].endswith("]")


# --- encoding under public domains ----------------------------------------------------------------

def test_numeric_columns_are_clamped_into_public_bins():
    X = pd.DataFrame({"age": [-5, 15, 24.9, 25, 49, 50, 90], "sex": ["F", "M", "F", "M", "F", "M", "F"]})
    codes, described = encode_features(X, {"age": NumericBins(15, 50, 7), "sex": ["F", "M"]})
    np.testing.assert_array_equal(codes[:, 0], [0, 0, 1, 2, 6, 6, 6])
    assert described.labels[0][0] == "[15, 20)" and described.labels[0][-1] == "[45, 50]"
    assert list(described.sizes) == [7, 2]


def test_a_value_outside_its_declared_domain_is_an_error(data):
    X, y, _, _ = data
    bad = X.copy()
    bad.loc[0, "a3"] = "w"
    with pytest.raises(ValueError, match="outside the declared public domain"):
        DPDecisionTreeClassifier(1.0, domains=DOMAINS, classes=CLASSES).fit(bad, y)
    with pytest.raises(ValueError, match="declare the public domains"):
        DPDecisionTreeClassifier(1.0).fit(X, y)


class NoFloatRandomness(Randomness):
    """The exact source with its floating-point samplers disabled."""

    def laplace(self, scale, size):
        raise AssertionError("float-path laplace used on an exact source")

    def gumbel(self, size):
        raise AssertionError("Gumbel draws used on an exact source")


@pytest.mark.parametrize("configuration", sorted(CONFIGURATIONS))
def test_learners_on_an_exact_source_use_only_exact_samplers(data, configuration):
    X, y, _, _ = data
    learner = make_learner(configuration, 1.0, domains=DOMAINS, classes=CLASSES, noise=NoFloatRandomness(seed=3))
    assert learner.fit(X, y).epsilon_spent_ <= 1.0


def test_noisy_counts_are_integers_for_integer_counts_and_on_a_grid_otherwise():
    noise = Randomness(seed=8)
    counts = np.array([[0, 4, 9], [120, 3, 0]], dtype=np.int64)
    noisy = noisy_counts(noise, counts, 0.5)
    assert noisy.shape == counts.shape and np.all(noisy == np.round(noisy))  # integer + integer noise
    real = np.array([0.5, 3.25, 7.125])  # not an integer dtype: released on the public grid
    released = noisy_counts(noise, real, 0.5)
    grid = safe_noise.vector_plan(3, 1.0, 0.5).grid
    assert all((Fraction(float(v)) / grid).denominator == 1 for v in released)


def test_the_joint_release_base_measure_is_a_capped_whole_number_of_public_facts():
    from jostle.learners.trees.builder import BASE_MEASURE_CAP, _leaf_base_measure

    for epsilon in (0.01, 0.1, 1.0, 10.0):
        bonus = _leaf_base_measure(np.array([5, 0, 2]), 2, epsilon)
        assert np.all(bonus == np.floor(bonus)) and np.all(bonus >= 0)
        # S = 5 eligible splits and C = 2 labels: exp(eps b) <= S / C < exp(eps (b + 1))
        assert math.exp(epsilon * bonus[0]) <= 5 / 2 < math.exp(epsilon * (bonus[0] + 1))
        assert bonus[1] == 0 and bonus[2] == 0  # S <= C: nothing to balance
    # tiny budgets: capped, so label utilities (b + rows) stay whole doubles below 2^53
    for epsilon in (1e-15, 1e-16, 1e-300, 5e-324):
        bonus = _leaf_base_measure(np.array([10**6]), 2, epsilon)
        assert bonus[0] == BASE_MEASURE_CAP and BASE_MEASURE_CAP + 10**9 + 1 - (BASE_MEASURE_CAP + 10**9) == 1.0


def test_one_rule_at_a_tiny_budget_keeps_its_utilities_whole_doubles(monkeypatch):
    # eps 1e-16 without the cap gave b of about 6e16, where doubles are 8 apart: a label's
    # utility would move by 0 or 8 between neighbours instead of 0 or 1
    seen = []
    original = safe_noise.choose_exponential_rows

    def spy(noise, utilities, *args, **kwargs):
        seen.append(np.array(utilities, dtype=float))
        return original(noise, utilities, *args, **kwargs)

    monkeypatch.setattr(safe_noise, "choose_exponential_rows", spy)
    rng = np.random.default_rng(3)
    X = pd.DataFrame({f"a{i}": rng.choice(["x", "y", "z"], 300) for i in range(5)})
    y = np.where(rng.random(300) < 0.7, "low", "high")
    domains = {f"a{i}": ["x", "y", "z"] for i in range(5)}
    learner = make_learner("one_rule", 1e-16, domains=domains, classes=["low", "high"], noise=Randomness(seed=1))
    assert learner.fit(X, y).epsilon_spent_ <= 1e-16
    finite = np.concatenate([m[np.isfinite(m)] for m in seen])
    assert seen and finite.max() < 2.0**53 and np.all(finite + 1 - finite == 1)


def test_one_rule_falls_back_to_a_label_where_the_budget_cannot_tell_splits_apart():
    # no attribute tells the class (70% "low"): at epsilon 0.01 a uniform base measure drew one of
    # the 5 x 3 x 2 = 30 labelled splits nearly always (about 30 / 32 of the time); the base
    # measure gives the two labels together about half the mass, and the majority label
    # (280 rows more than the other) nearly all of that half
    rng = np.random.default_rng(11)
    rows = 700
    X = pd.DataFrame({f"a{i}": rng.choice(["x", "y", "z"], rows) for i in range(5)})
    y = np.where(rng.random(rows) < 0.7, "low", "high")
    domains = {f"a{i}": ["x", "y", "z"] for i in range(5)}
    noise = Randomness(seed=12)
    fits = 400
    stayed = sum(make_learner("one_rule", 0.01, domains=domains, classes=["low", "high"], noise=noise)
                 .fit(X, y).trees_[0].n_leaves == 1 for _ in range(fits))
    # exp(0.01 b) <= 15 (b = 270): the labels weigh between 15 / (15 + 30) and 1/2 of the uniform
    # mass; the utilities (within a few dozen rows of each other) move that by a factor e^0.5 at most
    low = fits * (15 / 45) / math.exp(0.5)
    assert stayed >= low - 3 * math.sqrt(fits * 0.25), stayed
