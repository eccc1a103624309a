"""Issue 28: printouts that say what happened.

A tree's printout states what the fit charged and where it went ("epsilon 1 charged: 0.05 on the
table's size, 0.95 on the tree"), not the tree's own 0.95; a private tree that stopped at its
root says why (jostle.learners.trees.printing.root_reason). The rule-list estimator accepts the
NumericBins declarations the tree estimator accepts, and its printout names the target.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.estimators import DPBayesianRuleListClassifier, DPDecisionTreeClassifier, NumericBins, PrivacyBudget
from jostle.learners.trees import make_learner

CLASSES = ["<=50K", ">50K"]


def _adult_like(rows: int, seed: int = 0, signal: bool = False) -> tuple[pd.DataFrame, pd.Series]:
    """Sex and race with an income that (by default) ignores both: two thirds '<=50K' everywhere."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"sex": rng.choice(["F", "M"], rows, p=[0.33, 0.67]),
                          "race": rng.choice(["W", "B", "A", "O"], rows, p=[0.85, 0.1, 0.03, 0.02])})
    share = np.where(frame["sex"] == "M", 0.95, 0.05) if signal else np.full(rows, 0.33)
    income = pd.Series(np.where(rng.random(rows) < share, ">50K", "<=50K"), name="income")
    return frame, income


DOMAINS = {"sex": ["F", "M"], "race": ["W", "B", "A", "O"]}


def test_the_title_says_what_the_fit_charged_and_where_it_went():
    X, y = _adult_like(2000)
    tree = make_learner("friedman_schuster", 1.0, domains=DOMAINS, classes=CLASSES, random_state=1,
                        budget=PrivacyBudget(1.0)).fit(X, y)
    title = tree.to_text().splitlines()[0]
    assert "epsilon 1 charged: 0.05 on the table's size, 0.95 on the tree" in title
    assert "epsilon 0.95," not in title
    assert math.isclose(tree.budget_["table_size_query"] + tree.budget_["per_tree"], 1.0)


def test_a_pruned_root_says_it_was_pruned_and_what_the_leaves_predicted():
    """The issue's case: Friedman-Schuster on two attributes of many rows, a root-only tree."""
    X, y = _adult_like(32_000)
    tree = make_learner("friedman_schuster", 1.0, domains=DOMAINS, classes=CLASSES, random_state=2,
                        budget=PrivacyBudget(1.0)).fit(X, y)
    lines = tree.to_text().splitlines()
    assert tree.trees_[0].n_nodes == 1 and lines[2].startswith("(a single leaf)")
    assert lines[1].startswith("stopped at the root: it grew 2 levels and 8 leaves, then C4.5's pessimistic pruning")
    assert lines[1].endswith("every leaf's noisy counts favoured '<=50K', as the root's do")


def test_a_root_stopped_by_its_noisy_size_gives_the_threshold():
    X, y = _adult_like(40, seed=3)
    tree = make_learner("friedman_schuster", 0.1, domains=DOMAINS, classes=CLASSES, random_state=4,
                        budget=PrivacyBudget(1.0)).fit(X, y)
    lines = tree.to_text().splitlines()
    leaf = tree.budget_["leaf_planned"]
    threshold = 4 * 2 * math.sqrt(2.0) / leaf  # t = 4 values of race, |C| = 2 classes
    assert lines[1].startswith("stopped at the root: its noisy size fell below the stopping threshold")
    assert f"= {threshold:.1f} rows for this budget" in lines[1] and "t = 4" in lines[1]


def test_a_tree_that_splits_gives_no_reason_and_an_ensemble_says_each_trees_share():
    X, y = _adult_like(3000, signal=True)
    tree = make_learner("friedman_schuster", 2.0, domains=DOMAINS, classes=CLASSES, random_state=1,
                        budget=PrivacyBudget(2.0)).fit(X, y)
    assert tree.trees_[0].n_nodes > 1 and "stopped at the root" not in tree.to_text()
    forest = make_learner("jagannathan", 1.0, domains=DOMAINS, classes=CLASSES, random_state=1,
                          budget=PrivacyBudget(1.0)).fit(X, y)
    assert "epsilon 1 charged: 0.05 on the table's size, 0.3167 on each of 3 trees" in forest.to_text()
    majority = make_learner("majority", 1.0, domains=DOMAINS, classes=CLASSES, random_state=1,
                            budget=PrivacyBudget(1.0)).fit(X, y)
    assert majority.to_text().splitlines()[0].endswith("epsilon 1 charged")
    assert majority.to_text().splitlines()[1].startswith("stopped at the root: the configuration grows no level")


def test_a_program_prints_the_charge_not_the_trees_share():
    X, y = _adult_like(2000)
    out = io.StringIO()
    with Session(budget=1.0, ledger_path=":memory:", seed=1, output=out) as session:
        session.bind_private("adult", X.assign(income=y), {**{k: ("categorical", v) for k, v in DOMAINS.items()},
                                                           "income": ("categorical", CLASSES)})
        session.run('m = FriedmanSchuster(adult, "income", epsilon=1)\nprint(m)')
    text = out.getvalue()
    assert text.startswith("FriedmanSchuster for 'income' (epsilon 1)\n")
    assert "epsilon 1 charged: 0.05 on the table's size, 0.95 on the tree" in text


# ---------------------------------------------------------------- rule lists
def _numeric(rows: int = 400) -> tuple[pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.integers(17, 90, rows).astype(float), "sex": rng.choice(["F", "M"], rows)})
    return X, pd.Series(np.where(X["age"] > 40, ">50K", "<=50K"), name="income")


@pytest.mark.parametrize("domains", [
    {"age": NumericBins(17, 90, 5), "sex": ["F", "M"]},
    [NumericBins(17, 90, 5), ["F", "M"]],
    {"age": NumericBins(np.float64(17), np.float64(90), np.int64(5)), "sex": ("F", "M")},
], ids=["by-name", "in-order", "numpy-bounds"])
def test_the_rule_list_accepts_the_numeric_bins_the_tree_accepts(domains):
    X, y = _numeric()
    tree = DPDecisionTreeClassifier(1.0, domains=domains, classes=CLASSES, random_state=0,
                                    budget=PrivacyBudget(1.0)).fit(X, y)
    rules = DPBayesianRuleListClassifier(1.0, domains=domains, classes=CLASSES, max_rows=1000, random_state=0,
                                         budget=PrivacyBudget(1.0)).fit(X, y)
    assert rules.domains_.labels == tree.domains_.labels
    assert rules.predict(X.head(5)).shape == (5,) and rules.predict(X.to_numpy()[:5]).shape == (5,)


def test_the_rule_list_printout_names_the_target():
    X, y = _numeric()
    rules = DPBayesianRuleListClassifier(1.0, domains={"age": NumericBins(17, 90, 5), "sex": ["F", "M"]},
                                         classes=CLASSES, max_rows=1000, random_state=0,
                                         budget=PrivacyBudget(2.0)).fit(X, y)
    assert rules.target_name_ == "income"
    text = rules.to_text()
    assert "that income = >50K" in text and "that class =" not in text
    assert "that salary = >50K" in rules.to_text("salary")
    rules.fit(X, y.to_numpy())  # no name: the neutral word
    assert rules.target_name_ is None and "that class = >50K" in rules.to_text()
