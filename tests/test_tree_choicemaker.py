"""Tests of the decision-tree ChoiceMaker (the tree family on the one engine, jostle.learners.trees).

Everything runs on small synthetic tasks with a temporary cache: no ../shared, no network.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from jostle.learners.trees.corpus import (ClassificationData, additive_prior_corpus, encode_public_frame,
                                            synthetic_task, synthetic_tree_corpus, train_test_split)
from jostle.choicemaker.private_dispatch import BudgetGuard, ChoiceBudgetError as TreeBudgetError
from jostle.choicemaker.experience import RUN_STATS as TREE_RUN_STATS, experience_table
from jostle.choicemaker import dispatch, train
from jostle.learners.trees.family import FAMILY
from jostle.learners.trees.metafeatures import TREE_METAFEATURES
from jostle.learners.trees.options import TREE_OPTIONS
from jostle.learners.trees.task import DEFAULT_METAFEATURES, TreeGrid


def tree_experience_table(options, metafeatures, corpus, grid, mf_share, cache_dir, n_jobs, progress):
    return experience_table(FAMILY, options, metafeatures, corpus, grid, mf_share, cache_dir, n_jobs, progress)
from jostle.privacy.noise import Randomness, SimulationNoise

TINY_GRID = TreeGrid(epsilons=(0.5, 2.0), repetitions=1)


def tiny_corpus() -> list[ClassificationData]:
    return [synthetic_task("a", 150, (2, 3, 2), 2, 1, 0.1, seed=1),
            synthetic_task("b", 200, (4, 4), 3, 1, 0.2, seed=2)]


# Experience table -------------------------------------------------------------------------


def test_experience_table_has_one_row_per_run_with_the_budget_split(tmp_path):
    options = [TREE_OPTIONS["FriedmanSchuster"], TREE_OPTIONS["RandomTrees"]]
    features = [TREE_METAFEATURES[n] for n in ("size", "n_attributes", "epsilon", "log_signal")]
    table = tree_experience_table(options, features, tiny_corpus(), TINY_GRID, 0.1, tmp_path, 1, False)
    # tasks x repetitions x epsilons x modes x options
    assert len(table) == 2 * 1 * 2 * 2 * 2
    for column in ("task", "group", "rows", "epsilon", "rep", "mode", "option_epsilon", "option", "error",
                   "mf_size", "mf_n_attributes", "mf_epsilon", "mf_log_signal"):
        assert column in table.columns
    assert table["error"].between(0.0, 1.0).all()
    measured = table[table["mode"] == "measured"]
    public = table[table["mode"] == "public"]
    # measured mode: the Option gets 1 - 0.1 of epsilon and the features record that budget
    assert np.allclose(measured["option_epsilon"], 0.9 * measured["epsilon"])
    assert np.allclose(measured["mf_epsilon"], measured["option_epsilon"])
    assert measured["mf_size"].notna().all() and measured["mf_log_signal"].notna().all()
    # public mode: nothing noisy is measured and the Option gets the whole epsilon
    assert np.allclose(public["option_epsilon"], public["epsilon"])
    assert public["mf_size"].isna().all()
    # 70/30 split: the training part of a 150-row task has 105 rows
    assert set(table.loc[table["task"] == "a", "rows"]) == {105}


def test_experience_is_cached_and_reused(tmp_path):
    options = [TREE_OPTIONS["Mohammed"]]
    features = [TREE_METAFEATURES[n] for n in ("size", "epsilon")]
    corpus = tiny_corpus()
    computed = TREE_RUN_STATS["pieces_computed"]
    first = tree_experience_table(options, features, corpus, TINY_GRID, 0.1, tmp_path, 1, False)
    assert TREE_RUN_STATS["pieces_computed"] == computed + 2
    assert len(list((tmp_path / "experience" / "trees").glob("*.pkl"))) == 2
    second = tree_experience_table(options, features, corpus, TINY_GRID, 0.1, tmp_path, 1, False)
    assert TREE_RUN_STATS["pieces_computed"] == computed + 2  # nothing recomputed
    pd.testing.assert_frame_equal(first, second)
    # another metafeature share is another experiment: recomputed
    tree_experience_table(options, features, corpus, TINY_GRID, 0.2, tmp_path, 1, False)
    assert TREE_RUN_STATS["pieces_computed"] == computed + 4


def test_trained_choicemaker_is_cached(tmp_path):
    corpus = synthetic_tree_corpus(sizes=(150,), seeds=1)
    options = ["FriedmanSchuster", "FletcherIslam"]
    first = train(options, corpus=corpus, grid=TINY_GRID, cache_dir=tmp_path, n_jobs=1, progress=False)
    assert not first.experience_from_cache and not first.model_from_cache
    second = train(options, corpus=corpus, grid=TINY_GRID, cache_dir=tmp_path, n_jobs=1, progress=False)
    assert second.experience_from_cache and second.model_from_cache
    assert second.mode == first.mode and second.model.model_kind == first.model.model_kind


# Dispatch: charges before measuring, never above epsilon ------------------------------------


class RecordingNoise:
    """SimulationNoise that logs every draw into a shared event list."""

    def __init__(self, events: list, seed: int) -> None:
        self.events, self.inner = events, SimulationNoise(seed)

    def __getattr__(self, name):
        method = getattr(self.inner, name)
        if not callable(method):
            return method

        def recorded(*args, **kwargs):
            self.events.append(("draw", name))
            return method(*args, **kwargs)
        return recorded


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A ChoiceMaker that measures noisy metafeatures (mf_share 0.1) on the tiny corpus."""
    corpus = synthetic_tree_corpus(sizes=(150, 600), seeds=1)
    names = list(TREE_METAFEATURES)  # all of them: three noisy units (size, class_balance, contingency)
    result = train(metafeatures=names, corpus=corpus, grid=TINY_GRID, family="trees",
                   cache_dir=tmp_path_factory.mktemp("cache"), n_jobs=1, progress=False)
    # force the measured mode so that dispatch measures noisy metafeatures
    from jostle.choicemaker.model import FittedMetaModel, training_matrix
    view = result.experience[result.experience["mode"] == "measured"]
    model = FittedMetaModel.fit(training_matrix(view, names, list(result.options), list(FAMILY.config_columns)),
                                "forest_regret")
    result.models, result.modes = {None: model}, {None: "measured"}
    result.metafeatures, result.mf_share = [TREE_METAFEATURES[n] for n in names], 0.1
    return result


def test_dispatch_charges_before_every_draw_and_stays_within_epsilon(trained):
    data = synthetic_task("private", 400, (3, 3, 2, 4), 2, 2, 0.1, seed=9)
    for epsilon in (0.01, 0.1, 1 / 3, 1.0, 7.3):
        events: list = []
        charges: list[float] = []

        def charge(eps, description):
            events.append(("charge", description))
            charges.append(eps)
        result = dispatch(trained, data, epsilon, noise=RecordingNoise(events, 3), charge=charge)
        assert events[0][0] == "charge" and events[0][1].startswith("metafeature")
        assert sum(c.epsilon for c in charges) <= Fraction(epsilon)  # typed pure budgets
        assert sum(v.epsilon for v in result.budget_split.values()) <= Fraction(epsilon)
        assert result.choice in trained.options
        assert set(result.predictions) == set(trained.options)
        # the metafeature share is split equally among the three noisy budget units (the five
        # contingency_* metafeatures post-process one release: one unit, charged once)
        for unit in ("size", "class_balance", "contingency"):
            assert result.budget_split[f"metafeature {unit}"].epsilon == pytest.approx(0.1 / 3 * epsilon)
        # the chosen learner is charged its whole part once, before it runs (its own ledger keeps
        # it within that part), so the charges are exactly the plan
        assert [c for _, c in events if _ == "charge"][-1] == f"option {result.choice}"
        assert sum(c.epsilon for c in charges) == sum(v.epsilon for v in result.budget_split.values()) \
            == Fraction(epsilon)
        predictions = result.model.predict(data.X)
        assert predictions.shape == (data.n_rows,) and set(predictions) <= {0, 1}


NOISY_DRAWS = {"two_sided_geometric", "laplace", "gumbel", "exponential_index", "discrete_laplace", "normal"}


@pytest.mark.parametrize("refuse_at", [1, 2, 3])
def test_a_refused_charge_comes_before_its_measurement(trained, refuse_at):
    """The accountant refuses the k-th charge: no noise may have been drawn for it.

    Charges 1 and 2 pay for the noisy size and class balance (one geometric draw each), charge
    3 is the chosen learner's first; its public random choices (uniform draws) may come first.
    """
    data = synthetic_task("private", 400, (3, 3, 2, 4), 2, 2, 0.1, seed=9)
    events: list = []

    def charge(eps, description):
        events.append(("charge", description))
        if sum(1 for e in events if e[0] == "charge") == refuse_at:
            raise RuntimeError("budget exhausted")
    with pytest.raises(RuntimeError, match="budget exhausted"):
        dispatch(trained, data, 1.0, noise=RecordingNoise(events, 3), charge=charge)
    assert events[-1][0] == "charge"  # nothing was drawn after the refused charge
    noisy = [e for e in events if e[0] == "draw" and e[1] in NOISY_DRAWS]
    assert len(noisy) == refuse_at - 1  # only the measurements already paid for


def test_budget_guard_refuses_an_overspend_before_forwarding():
    forwarded = []
    guard = BudgetGuard(1.0, lambda eps, what: forwarded.append(eps))
    guard.charge(0.7, "first")
    with pytest.raises(TreeBudgetError):
        guard.charge(0.3000000000000001, "second")  # 0.7 + this > 1 exactly
    assert [float(cost.epsilon) for cost in forwarded] == [0.7]
    guard.charge(0.3 - 1e-16, "third")
    assert guard.spent.epsilon <= Fraction(1)


def test_dispatch_with_exact_randomness_spends_at_most_epsilon(trained):
    data = synthetic_task("private", 300, (2, 5, 3), 3, 1, 0.1, seed=4)
    total = []
    result = dispatch(trained, data, 0.5, noise=Randomness(seed=1), charge=lambda eps, what: total.append(eps))
    assert sum(t.epsilon for t in total) <= Fraction(0.5)
    assert float(sum(t.epsilon for t in total)) == pytest.approx(0.5, rel=1e-6)  # the learner spends its whole share
    assert result.model.epsilon_spent_ <= 0.9 * 0.5


# The choice follows a clear regime -----------------------------------------------------------


@dataclass
class _Constant:
    label: int

    def predict(self, X):
        return np.full(len(X), self.label)


@dataclass
class _CellMajority:
    table: np.ndarray

    def predict(self, X):
        return self.table[X[:, 0]]


@dataclass(frozen=True)
class Careful:
    """Predicts class 0, the publicly known majority: no budget, error = share of class 1."""

    name: str = "Careful"

    def fit(self, data, epsilon, noise, charge=None, table_size=None):
        return _Constant(0)


@dataclass(frozen=True)
class Bold:
    """Noisy class counts per value of attribute 0 (one histogram over disjoint cells,
    L1 sensitivity 1, geometric noise at epsilon); predicts each cell's noisy majority."""

    name: str = "Bold"

    def fit(self, data, epsilon, noise, charge=None, table_size=None):
        if charge is not None:
            charge(epsilon, "cell-by-class histogram")
        counts = np.zeros((data.domain_sizes[0], data.n_classes))
        np.add.at(counts, (data.X[:, 0], data.y), 1)
        noisy = counts + noise.two_sided_geometric(epsilon, counts.size).reshape(counts.shape)
        return _CellMajority(noisy.argmax(axis=1))


def regime_task(name: str, seed: int) -> ClassificationData:
    """Attribute 0 (10 values) predicts the class 90% of the time; class 0 is 74% of the rows."""
    rng = np.random.default_rng(seed)
    n = 400
    x0 = rng.integers(0, 10, n)
    rule = np.where(x0 < 8, 0, 1)  # values 0..7 -> class 0, 8..9 -> class 1
    y = np.where(rng.random(n) < 0.9, rule, 1 - rule)
    X = np.column_stack([x0, rng.integers(0, 3, n)])
    return ClassificationData(X, y, (10, 3), 2, name=name)


def test_the_choice_follows_the_signal_to_noise_regime(tmp_path):
    """Careful wins when epsilon is tiny (Bold's cells drown in noise), Bold when it is large;
    the trained ChoiceMaker picks accordingly on a task it has not seen."""
    corpus = [regime_task(f"regime:{seed}", seed) for seed in range(5)]
    grid = TreeGrid(epsilons=(0.003, 0.01, 0.03, 0.3, 1.0, 3.0), repetitions=3)
    features = ["size", "n_attributes", "branching", "n_classes", "epsilon", "log_signal"]
    result = train([Careful(), Bold()], features, corpus=corpus, grid=grid, family="trees", cache_dir=tmp_path,
                   n_jobs=1, progress=False, model_kinds=("best_fixed", "forest_regret"))
    mean = result.experience.groupby(["epsilon", "option"])["error"].mean().unstack()
    assert mean.loc[0.003, "Careful"] < mean.loc[0.003, "Bold"]  # the regime exists
    assert mean.loc[3.0, "Bold"] < mean.loc[3.0, "Careful"]
    assert result.model.model_kind != "best_fixed"
    unseen = regime_task("unseen", 99)
    picks = {eps: dispatch(result, unseen, eps, noise=SimulationNoise(5), uncharged=True).choice for eps in (0.003, 3.0)}
    assert picks == {0.003: "Careful", 3.0: "Bold"}


# Corpus encoding ------------------------------------------------------------------------------


def test_public_frame_encoding_bins_numeric_columns_and_keeps_categories():
    frame = pd.DataFrame({"colour": ["red", "blue", "red", "green"] * 5,
                          "height": np.linspace(0.0, 100.0, 20),
                          "flag": [0, 1] * 10, "target": ["y", "n", "n", "y"] * 5})
    task = encode_public_frame(frame, "target", "toy", bins=4, max_categories=3)
    assert task.attribute_names == ("colour", "height", "flag")
    assert task.domain_sizes == (3, 4, 2)
    assert task.class_labels == ("n", "y") and task.n_classes == 2
    assert list(task.X[:, 1]) == [0] * 5 + [1] * 5 + [2] * 5 + [3] * 5  # equal-width bins over [0, 100]
    assert list(task.X[:4, 0]) == [2, 0, 2, 1]  # sorted categories: blue, green, red


def test_the_additive_prior_is_seeded_and_spans_weak_to_strong_signal():
    """The generated prior is the same on every call and covers both regimes it is there for:
    tasks where a non-private tree barely beats the majority class and tasks it almost solves."""
    from jostle.learners.trees import C45DecisionTreeClassifier

    first, again, other = additive_prior_corpus(8), additive_prior_corpus(8), additive_prior_corpus(8, seed=1)
    assert all(np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y) for a, b in zip(first, again))
    assert not all(a.X.shape == b.X.shape and np.array_equal(a.y, b.y) for a, b in zip(first, other))
    gains = []
    for task in additive_prior_corpus():
        assert len({*task.y.tolist()}) == task.n_classes  # codes 0..C-1, every class present
        assert 300 <= task.n_rows <= 12_000 and 3 <= task.n_attributes <= 14
        train, test = (task.rows(i) for i in train_test_split(task.n_rows, 0))
        tree = C45DecisionTreeClassifier(domains=[list(range(s)) for s in task.domain_sizes],
                                         classes=list(range(task.n_classes)), max_depth=5).fit(train.X, train.y)
        majority = np.bincount(test.y, minlength=task.n_classes).max() / test.n_rows
        gains.append(float(np.mean(tree.predict(test.X) == test.y)) - majority)
    assert min(gains) < 0.02 and max(gains) > 0.4


def test_classification_data_rejects_codes_outside_the_domain():
    with pytest.raises(ValueError, match="outside its declared domain"):
        ClassificationData(np.array([[0, 3]]), np.array([0]), (2, 3), 2)
    with pytest.raises(ValueError, match="class code"):
        ClassificationData(np.array([[0, 1]]), np.array([2]), (2, 3), 2)


def test_measuring_pays_only_when_clearly_better_over_the_groups():
    from jostle.choicemaker.model import measuring_pays
    public = pd.Series([0.30, 0.20, 0.40, 0.25, 0.35], index=list("abcde"))
    assert measuring_pays(public - 0.02, public)  # better in every group
    assert not measuring_pays(public + 0.02, public)
    mixed = public + np.array([-0.03, 0.03, -0.02, 0.02, -0.01])  # no clear difference
    assert not measuring_pays(mixed, public)


def test_a_choicemaker_informed_only_by_noisy_metafeatures(tmp_path):
    """With no free metafeature the public mode falls back to the best fixed Option."""
    corpus = synthetic_tree_corpus(sizes=(150,), seeds=1)
    result = train(["FriedmanSchuster", "Mohammed"], ["size"], corpus=corpus, grid=TINY_GRID,
                   cache_dir=tmp_path, n_jobs=1, progress=False)
    assert result.mode in ("measured", "public")
    if result.mode == "public":
        assert result.model.model_kind == "best_fixed" and result.metafeature_share() == 0.0
    charges = []
    outcome = dispatch(result, corpus[0], 1.0, noise=SimulationNoise(2), charge=lambda eps, what: charges.append(eps))
    assert outcome.choice in ("FriedmanSchuster", "Mohammed")
    assert sum(c.epsilon for c in charges) <= Fraction(1.0)
