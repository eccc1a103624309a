"""Tests of the scikit-learn tree estimators as a newcomer meets them (issue 13, point 4).

The shared privacy budget (`jostle.learners.trees.shared_budget.PrivacyBudget`): a refused fit
draws no noise (a recording noise source counts every random word drawn) and spends nothing;
clones share the budget under `cross_val_score` and `GridSearchCV`; pickled copies refuse;
the default budget warns when fits add up. Then what `check_estimator` found: `NotFittedError`,
ndarray/DataFrame interop, `(lo, hi)` domains, sparse input, printouts. Finally the examples of
docs/estimators.md run, and it names every reason of the expected `check_estimator` failures
(the checks themselves run in tests/test_estimator_checks.py). Data is synthetic and made here.
"""

from __future__ import annotations

import contextlib
import copy
import io
import pickle
import re
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, cross_val_score

from jostle import Session
from jostle.learnerkit import estimator_checks
from jostle.learners.trees import (CONFIGURATIONS, BudgetExceededError, C45DecisionTreeClassifier,
                                   DPDecisionTreeClassifier, NumericBins, PrivacyBudget, PrivacyBudgetWarning,
                                   default_budget, make_learner)
from jostle.privacy.noise import Randomness

DOC = Path(__file__).resolve().parents[1] / "docs" / "estimators.md"
CLASSES = ["p", "n"]
DOMAINS = {"a": ["x", "y", "z"], "b": ["u", "v"]}


class RecordingNoise(Randomness):
    """A seeded source that counts every random word drawn (all samplers draw through `_words`)."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.drawn = 0

    def _words(self, size: int) -> np.ndarray:
        self.drawn += int(size)
        return super()._words(size)


def make_data(rows: int = 300, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Attribute a decides the class (x -> p, otherwise n), b is noise."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.choice(["x", "y", "z"], rows), "b": rng.choice(["u", "v"], rows)})
    return X, np.where(X["a"] == "x", "p", "n")


@pytest.fixture(scope="module")
def data() -> tuple[pd.DataFrame, np.ndarray]:
    return make_data()


@pytest.fixture(autouse=True)
def quiet_default_budget():
    """Most tests here pass a budget; the ones that use the default check its warning themselves."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyBudgetWarning)
        yield


# --------------------------------------------------------------------------- the shared budget
def test_a_fit_past_the_total_is_refused_with_nothing_drawn_or_spent(data):
    X, y = data
    budget = PrivacyBudget(1.5)
    noise = RecordingNoise(seed=1)
    callbacks: list[float] = []
    first = DPDecisionTreeClassifier(1.0, domains=DOMAINS, classes=CLASSES, budget=budget, noise=noise,
                                     charge=lambda eps, what: callbacks.append(eps))
    first.fit(X, y)
    drawn, calls = noise.drawn, len(callbacks)
    assert drawn > 0 and calls > 0  # the recorder sees a real fit's noise
    assert budget.spent.epsilon == 1 and budget.remaining.epsilon == Fraction(1, 2)

    second = clone(first)  # shares the budget and the noise source
    with pytest.raises(BudgetExceededError, match="nothing was spent"):
        second.fit(X, y)
    assert noise.drawn == drawn and len(callbacks) == calls  # no noise, no measurement charged
    assert budget.spent.epsilon == 1 and len(budget.charges) == 1
    with pytest.raises(NotFittedError):  # a refused fit leaves the estimator as it was
        second.predict(X)

    trees = first.trees_
    first.set_params(epsilon=0.75)
    with pytest.raises(BudgetExceededError):
        first.fit(X, y)
    assert first.trees_ is trees and noise.drawn == drawn

    second.set_params(epsilon=0.5).fit(X, y)  # exactly what remains
    assert budget.remaining.epsilon == 0 and noise.drawn > drawn


def test_exact_budgets_let_ten_tenths_fit_in_one(data):
    X, y = data
    budget = PrivacyBudget(1.0)
    learner = make_learner("majority", 0.1, domains=DOMAINS, classes=CLASSES, budget=budget)
    for _ in range(10):
        clone(learner).fit(X, y)
    assert budget.spent.epsilon == 1 and budget.remaining.epsilon == 0
    with pytest.raises(BudgetExceededError):
        clone(learner).fit(X, y)
    # the learner calibrates to the amount charged (1/10), rounded down, never above it
    fitted = clone(learner).set_params(budget=PrivacyBudget(1)).fit(X, y)
    assert Fraction(fitted.epsilon_spent_) <= Fraction(1, 10)


def test_a_fit_that_fails_on_its_input_spends_nothing(data):
    X, y = data
    budget = PrivacyBudget(1.0)
    bad = X.copy()
    bad.loc[0, "a"] = "w"  # outside the declared domain
    with pytest.raises(ValueError, match="outside the declared public domain"):
        DPDecisionTreeClassifier(1.0, domains=DOMAINS, classes=CLASSES, budget=budget).fit(bad, y)
    assert budget.spent.epsilon == 0 and budget.charges == []


def test_clones_share_the_budget_under_cross_val_score(data):
    X, y = data
    budget = PrivacyBudget(3.0)
    learner = DPDecisionTreeClassifier(1.0, domains=DOMAINS, classes=CLASSES, budget=budget)
    assert clone(learner).budget is budget and copy.deepcopy(budget) is budget and copy.copy(budget) is budget
    scores = cross_val_score(learner, X, y, cv=3)
    assert len(scores) == 3 and budget.spent.epsilon == 3 and len(budget.charges) == 3
    with pytest.raises(BudgetExceededError):
        cross_val_score(learner, X, y, cv=3, error_score="raise")
    assert budget.spent.epsilon == 3


def test_grid_search_charges_every_candidate_fold_and_the_refit(data):
    X, y = data
    budget = PrivacyBudget(10)
    learner = DPDecisionTreeClassifier(1.0, domains=DOMAINS, classes=CLASSES, budget=budget)
    search = GridSearchCV(learner, {"epsilon": [0.25, 0.5]}, cv=2).fit(X, y)
    best = Fraction(search.best_params_["epsilon"]).limit_denominator(100)
    assert budget.spent.epsilon == 2 * (Fraction(1, 4) + Fraction(1, 2)) + best
    assert len(budget.charges) == 5


def test_a_pickled_budget_is_detached_and_refuses(data):
    X, y = data
    budget = PrivacyBudget(5.0)
    learner = DPDecisionTreeClassifier(1.0, domains=DOMAINS, classes=CLASSES, budget=budget).fit(X, y)
    copied = pickle.loads(pickle.dumps(learner))
    np.testing.assert_array_equal(copied.predict(X), learner.predict(X))  # a fitted model still predicts
    assert copied.budget is not budget and copied.budget.detached
    assert copied.budget.spent.epsilon == 1 and copied.budget.total.epsilon == 5
    with pytest.raises(BudgetExceededError, match="copy made by pickling"):
        copied.fit(X, y)
    assert budget.spent.epsilon == 1


def test_cross_validation_in_worker_processes_is_refused(data):
    X, y = data
    budget = PrivacyBudget(5.0)
    learner = DPDecisionTreeClassifier(1.0, domains=DOMAINS, classes=CLASSES, budget=budget)
    with pytest.raises(BudgetExceededError, match="n_jobs"):
        cross_val_score(learner, X, y, cv=2, n_jobs=2, error_score="raise")
    assert budget.spent.epsilon == 0


def test_the_default_budget_records_every_fit_and_warns_when_they_add_up(data):
    X, y = data
    before, count = default_budget().spent.epsilon, len(default_budget().charges)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            DPDecisionTreeClassifier(0.5, domains=DOMAINS, classes=CLASSES).fit(X, y)
    assert default_budget().spent.epsilon - before == 1 and len(default_budget().charges) == count + 2
    budget_warnings = [w for w in caught if issubclass(w.category, PrivacyBudgetWarning)]
    assert budget_warnings and "PrivacyBudget(total)" in str(budget_warnings[-1].message)
    assert budget_warnings[-1].filename == __file__  # it points at the caller's fit
    assert default_budget().total is None and default_budget().remaining is None


def test_an_outside_accountant_alone_leaves_the_default_budget_alone(data):
    X, y = data
    before = len(default_budget().charges)
    charged: list[float] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyBudgetWarning)
        DPDecisionTreeClassifier(0.5, domains=DOMAINS, classes=CLASSES,
                                 charge=lambda eps, what: charged.append(eps)).fit(X, y)
    assert len(default_budget().charges) == before and 0 < sum(charged) <= 0.5


def test_a_budget_can_charge_a_sessions_accountant(data):
    X, y = data
    with Session(budget=1.0, ledger_path=":memory:") as session:
        budget = PrivacyBudget(accountant=session.accountant)
        DPDecisionTreeClassifier(0.6, domains=DOMAINS, classes=CLASSES, budget=budget).fit(X, y)
        assert session.spent.epsilon == Fraction(3, 5) and len(session.ledger) == 1
        assert "DPDecisionTreeClassifier.fit" in session.ledger[0].description
        with pytest.raises(BudgetExceededError, match="only 0.4 remains"):
            DPDecisionTreeClassifier(0.6, domains=DOMAINS, classes=CLASSES, budget=budget).fit(X, y)
        assert session.spent.epsilon == Fraction(3, 5)


def test_budget_arguments_are_checked():
    with pytest.raises(ValueError):
        PrivacyBudget(0)
    with pytest.raises(ValueError):
        PrivacyBudget(-1)
    with pytest.raises(TypeError, match="PrivacyBudget"):
        DPDecisionTreeClassifier(1.0, domains=DOMAINS, classes=CLASSES, budget=3.0).fit(*make_data(20))


# --------------------------------------------------------------------------- what check_estimator found
@pytest.mark.parametrize("estimator", [DPDecisionTreeClassifier(1.0, domains=DOMAINS, classes=CLASSES),
                                       C45DecisionTreeClassifier(domains=DOMAINS, classes=CLASSES)])
@pytest.mark.parametrize("method", ["predict", "predict_proba", "score", "to_text"])
def test_using_an_unfitted_estimator_raises_not_fitted(estimator, method, data):
    X, y = data
    with pytest.raises(NotFittedError):
        getattr(clone(estimator), method)(*((X, y) if method == "score" else (X,) if method != "to_text" else ()))


@pytest.mark.parametrize("make", [
    lambda: DPDecisionTreeClassifier(2.0, domains=list(DOMAINS.values()), classes=CLASSES,
                                     budget=PrivacyBudget(2.0)),
    lambda: C45DecisionTreeClassifier(domains=list(DOMAINS.values()), classes=CLASSES)])
def test_fit_on_an_array_and_predict_on_a_frame_and_back(make, data):
    X, y = data
    on_array = make().fit(X.to_numpy(), y)
    renamed = pd.DataFrame(X.to_numpy(), columns=["first", "second"])  # any names: read by position
    np.testing.assert_array_equal(on_array.predict(renamed), on_array.predict(X.to_numpy()))
    np.testing.assert_array_equal(on_array.predict(X), on_array.predict(X.to_numpy()))
    with pytest.raises(ValueError, match="X has 1 features, but .* is expecting 2"):
        on_array.predict(X[["a"]])

    on_frame = make().fit(X, y)
    assert list(on_frame.feature_names_in_) == ["a", "b"]
    np.testing.assert_array_equal(on_frame.predict(X.to_numpy()), on_frame.predict(X))
    np.testing.assert_array_equal(on_frame.predict(X[["b", "a"]]), on_frame.predict(X))  # by name
    with pytest.raises(ValueError, match="lacks the column"):
        on_frame.predict(renamed)


def test_domains_keyed_by_name_fit_an_array_in_the_dicts_order(data):
    X, y = data
    learner = C45DecisionTreeClassifier(domains=DOMAINS, classes=CLASSES).fit(X.to_numpy(), y)
    assert learner.domains_.names == ("a", "b")
    np.testing.assert_array_equal(learner.predict(X[["b", "a"]]), y)


def test_a_pair_of_numbers_as_a_domain_is_refused_with_a_hint_to_numeric_bins():
    X = pd.DataFrame({"age": [20, 37, 64], "sex": ["F", "M", "F"]})
    learner = DPDecisionTreeClassifier(1.0, domains={"age": (0, 100), "sex": ["F", "M"]}, classes=CLASSES,
                                       budget=PrivacyBudget(1))
    with pytest.raises(ValueError, match=r"NumericBins\(0, 100, bins\)"):
        learner.fit(X, ["p", "n", "p"])
    assert learner.budget.spent.epsilon == 0
    # a list of two numbers is two categories; a value between them gets the same hint
    with pytest.raises(ValueError, match=r"value 20 is outside.*NumericBins\(0, 100, bins\)"):
        C45DecisionTreeClassifier(domains={"age": [0, 100], "sex": ["F", "M"]}, classes=CLASSES).fit(
            X, ["p", "n", "p"])
    # declared as bins, it fits
    binned = C45DecisionTreeClassifier(domains={"age": NumericBins(0, 100, 4), "sex": ["F", "M"]}, classes=CLASSES)
    assert binned.fit(X, ["p", "n", "p"]).domains_.labels[0][0] == "[0, 25)"


@pytest.mark.parametrize("kind", [sp.csr_matrix, sp.csc_array])
def test_sparse_input_gets_a_clear_error(kind, data):
    X, y = data
    codes = (X.to_numpy() == "x").astype(float)
    learner = DPDecisionTreeClassifier(1.0, domains=[[0.0, 1.0], [0.0, 1.0]], classes=CLASSES,
                                       budget=PrivacyBudget(2))
    with pytest.raises(TypeError, match="does not accept sparse input.*toarray"):
        learner.fit(kind(codes), y)
    assert learner.budget.spent.epsilon == 0
    learner.fit(codes, y)
    with pytest.raises(TypeError, match="sparse"):
        learner.predict(kind(codes))


def test_missing_values_are_refused_and_infinities_clamp():
    X = np.array([[0.5], [np.inf], [-np.inf]])
    learner = C45DecisionTreeClassifier(domains=[NumericBins(0, 1, 2)], classes=CLASSES).fit(X, ["p", "n", "p"])
    assert learner.n_features_in_ == 1
    with pytest.raises(ValueError, match="NaN"):
        C45DecisionTreeClassifier(domains=[NumericBins(0, 1, 2)], classes=CLASSES).fit(
            np.array([[0.5], [np.nan]]), ["p", "n"])


def _noisy_counts_fit(seed: int) -> DPDecisionTreeClassifier:
    """Mohammed et al.'s tree (counts at the leaves, no pruning) at a tiny epsilon on few rows:
    most leaves hold almost no rows, so some noisy counts come out negative."""
    X, y = make_data(rows=40, seed=seed)
    return make_learner("mohammed", 0.05, domains=DOMAINS, classes=CLASSES, noise=Randomness(seed),
                        budget=PrivacyBudget(1)).fit(X, y)


def test_noisy_leaf_counts_print_as_estimates_and_never_negative():
    learner = next(m for m in map(_noisy_counts_fit, range(20)) if (m.trees_[0].counts < 0).any())
    text = learner.to_text()
    counts = re.findall(r"\[([^\]]*)\]", text)
    assert counts and all(re.fullmatch(r"(p|n) ~\d+", item) for group in counts for item in group.split(", "))
    assert "-" not in "".join(counts)
    assert "noisy" in text.splitlines()[0]
    exact = C45DecisionTreeClassifier(domains=DOMAINS, classes=CLASSES).fit(*make_data()).to_text()
    assert "~" not in exact and re.search(r"\[p \d+, n \d+\]", exact)


@pytest.mark.parametrize("configuration", sorted(CONFIGURATIONS))
def test_titles_never_read_tree_tree(configuration, data):
    X, y = data
    learner = make_learner(configuration, 2.0, domains=DOMAINS, classes=CLASSES, budget=PrivacyBudget(2)).fit(X, y)
    text = learner.to_text(max_trees=3)
    titles = [line for line in text.splitlines() if "nodes," in line]
    assert titles and not any(re.search(r"\btrees? tree", line, re.IGNORECASE) for line in titles)
    if learner.n_trees > 1:
        assert titles[0].startswith(f"{learner.name}, tree 1 of {learner.n_trees}: ")
    else:
        assert titles[0].startswith(f"{learner.name}: ")
    default_name = DPDecisionTreeClassifier(1.0, domains=DOMAINS, classes=CLASSES, budget=PrivacyBudget(1))
    assert default_name.fit(X, y).to_text().startswith("DP decision tree: ")


# --------------------------------------------------------------------------- check_estimator and the docs
def _doc_section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else None]


def test_the_docs_name_every_reason_the_checks_give():
    """The reasons live in code (jostle.learnerkit.estimator_checks); the docs name each one."""
    section = _doc_section("What `check_estimator` still reports")
    for reason in ("DECLARED_DOMAINS_ONLY", "CLAMPED_TO_DECLARED_BOUNDS", "CLASSES_AS_DECLARED", "RANDOM_UNDER_DP"):
        assert f"`{reason}`" in section, reason
        assert getattr(estimator_checks, reason)  # and it exists, with its text


def _python_blocks() -> list[tuple[int, str]]:
    blocks, lines, i = [], DOC.read_text(encoding="utf-8").splitlines(), 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            end = lines.index("```", i + 1)
            blocks.append((i + 2, "\n".join(lines[i + 1:end]) + "\n"))
            i = end
        i += 1
    return blocks


def test_the_docs_examples_run_and_print_what_they_say(tmp_path, monkeypatch):
    """Every ```python block of docs/estimators.md, in order, in one namespace (as a reader runs
    them); each `# =>` line is what the block prints, in order."""
    monkeypatch.chdir(tmp_path)
    blocks = _python_blocks()
    assert len(blocks) >= 6
    namespace: dict = {"__name__": "__docs__"}
    for line, code in blocks:
        expected = [m.group(1) for m in re.finditer(r"^\s*# => ?(.*)$", code, re.MULTILINE)]
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            exec(compile(code, f"{DOC}:{line}", "exec"), namespace)
        assert output.getvalue().splitlines() == expected, f"docs/estimators.md:{line}"


def test_the_readme_links_the_estimator_docs():
    readme = (DOC.parents[1] / "README.md").read_text(encoding="utf-8")
    assert "(docs/estimators.md)" in readme
