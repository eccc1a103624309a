"""The published private decision-tree learners as named configurations of one learner.

Each entry of `CONFIGURATIONS` fixes the choice points of `DPDecisionTreeClassifier`; the
paper's own privacy argument is the family's (see `jostle.trees.estimators` and
`jostle.trees.builder`) specialised as written below. Privacy unit: one row added or removed.

Where a paper leaves a number to the user (depth, number of trees) the value here is the
project's default, chosen ONCE for all data sets by `python benchmarks/trees_learners.py --tune`:
mean accuracy on validation splits carved out of the training parts of four UCI tables (never
their test parts), over epsilon 0.05, 0.2, 1 and 5. Fewer trees and shallower trees won: at
these budgets splitting epsilon over many trees or levels costs more than it brings.

  * friedman_schuster (Friedman & Schuster, KDD 2010, DiffP-ID3/C4.5): per level, a noisy size
    of each node and the exponential mechanism on a split utility ("max": the best of the
    three in the tuning runs; "entropy" and "gini" are the alternatives); a node stops when
    N_noisy / (t |C|) < sqrt(2) / eps_leaf; leaves release noisy class counts, then C4.5
    pruning runs on them (post-processing). Budget beta / (d + 1) per level: each of the d
    levels spends beta / (d + 1), half on the size and half on the split query, and the leaves
    get at least beta / (d + 1) (in the paper the last level's size query and the leaf counts
    share it; here the leaves get it whole, plus whatever stopped levels left). The paper's
    user depth d is set by the public signal-to-noise rule: the deepest d whose expected leaf
    support n_hat / b^d (b the mean domain size) is at least |C| sqrt(2) (d + 1) / beta, with
    n_hat a noisy count of the table that costs 5% of beta.
    Privacy: 0.05 beta + d (eps_size + eps_split) + eps_leaf <= beta along any row's path;
    sibling nodes hold disjoint rows (parallel composition), levels add up.
  * mohammed (Mohammed et al., KDD 2011, DiffGen's tree part): no size query; the exponential
    mechanism with the entropy (information gain) utility at every level down to a user depth
    d (default 2); half of the budget for the splits (beta / (2 d) per level), half for the
    noisy leaf counts. Privacy: d * beta / (2 d) + beta / 2 = beta.
  * jagannathan (Jagannathan, Pillaipakkamnatt & Wright 2009/2012): random trees: a random
    unused attribute at each node (public randomness, no epsilon), depth
    min(k / 2, log_b |D| - 1) with |D| a noisy count of the table (5% of beta), an ensemble of
    tau trees (default 3) whose noisy leaf counts each use (0.95 beta) / tau (sequential
    composition across trees, parallel across a tree's leaves).
  * patil_singh (Patil & Singh 2014, DiffPRF): Friedman & Schuster's trees, several of them
    (default 2), each with (0.95 beta) / tau on the whole table (sequential composition).
  * fletcher_islam (Fletcher & Islam 2015/2017): random trees without a fixed depth; a path
    stops when the estimated support of the children (n_hat over the domain sizes along the
    path) falls below the leaf noise |C| sqrt(2) / eps_leaf; each leaf releases only its
    majority label with the exponential mechanism (class-count utility, sensitivity 1,
    monotone; the paper's smooth-sensitivity variant is not used, it would not give pure
    epsilon-DP here). tau trees (default 3) compose sequentially, each with (0.95 beta) / tau;
    n_hat costs 5% of beta.
"""

from __future__ import annotations

from typing import Any

from jostle.trees.estimators import DPDecisionTreeClassifier

CONFIGURATIONS: dict[str, dict[str, Any]] = {
    "friedman_schuster": dict(split_utility="max", stopping="noisy_size", max_depth="signal_to_noise", n_trees=1,
                              leaf_mechanism="counts", leaf_fraction=None, stop_fraction=0.5, prune=True,
                              name="Friedman & Schuster"),
    "mohammed": dict(split_utility="entropy", stopping="depth", max_depth=2, n_trees=1,
                     leaf_mechanism="counts", leaf_fraction=0.5, prune=False, name="Mohammed et al."),
    "jagannathan": dict(split_utility="random", stopping="depth", max_depth="auto", n_trees=3,
                        leaf_mechanism="counts", leaf_fraction=None, size_fraction=0.05, prune=False,
                        name="Jagannathan et al."),
    "patil_singh": dict(split_utility="max", stopping="noisy_size", max_depth="signal_to_noise", n_trees=2,
                        leaf_mechanism="counts", leaf_fraction=None, stop_fraction=0.5, max_features=None,
                        prune=True, name="Patil & Singh"),
    "fletcher_islam": dict(split_utility="random", stopping="signal_to_noise", max_depth=None, n_trees=3,
                           leaf_mechanism="exponential", leaf_fraction=None, size_fraction=0.05, prune=False,
                           name="Fletcher & Islam"),
}


def make_learner(configuration: str, epsilon: float, **overrides: Any) -> DPDecisionTreeClassifier:
    """A `DPDecisionTreeClassifier` set up as a named configuration.

    Args:
        configuration: a key of `CONFIGURATIONS`.
        epsilon: the total privacy budget.
        **overrides: any other constructor argument (domains, classes, random_state, charge, or
            a choice point to vary).
    """
    if configuration not in CONFIGURATIONS:
        raise ValueError(f"unknown configuration {configuration!r}; choose one of {sorted(CONFIGURATIONS)}")
    return DPDecisionTreeClassifier(epsilon, **{**CONFIGURATIONS[configuration], **overrides})


def friedman_schuster(epsilon: float, **overrides: Any) -> DPDecisionTreeClassifier:
    """Friedman & Schuster (2010); see the module docstring."""
    return make_learner("friedman_schuster", epsilon, **overrides)


def mohammed(epsilon: float, **overrides: Any) -> DPDecisionTreeClassifier:
    """Mohammed et al. (2011); see the module docstring."""
    return make_learner("mohammed", epsilon, **overrides)


def jagannathan(epsilon: float, **overrides: Any) -> DPDecisionTreeClassifier:
    """Jagannathan et al. (2009); see the module docstring."""
    return make_learner("jagannathan", epsilon, **overrides)


def patil_singh(epsilon: float, **overrides: Any) -> DPDecisionTreeClassifier:
    """Patil & Singh (2014); see the module docstring."""
    return make_learner("patil_singh", epsilon, **overrides)


def fletcher_islam(epsilon: float, **overrides: Any) -> DPDecisionTreeClassifier:
    """Fletcher & Islam (2015/2017); see the module docstring."""
    return make_learner("fletcher_islam", epsilon, **overrides)
