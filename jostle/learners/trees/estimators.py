"""scikit-learn-compatible decision-tree estimators: the private family and the C4.5 baseline.

`DPDecisionTreeClassifier` is the one parameterised learner of the family; its constructor
arguments are the family's choice points (split utility, stopping rule, budget of the stopping
query, number of trees, budget split between inner nodes and leaves, leaf release, pruning).
The published algorithms are named configurations of it (`jostle.learners.trees.configurations`).
`C45DecisionTreeClassifier` is the non-private ID3/C4.5 baseline (information gain, depth
limit, pessimistic pruning) grown by the same engine.

Both take the features' public domains (`domains`) and the public class list (`classes`);
nothing is read from the data to fix a domain, a bound, or a size. Both are built on the kit's
`jostle.learnerkit.estimators.DeclaredDomainClassifier` (encoding against the declared domains,
the fitted attributes shared by every family, the budget charged before the fit draws).

Privacy of `DPDecisionTreeClassifier.fit` (unit: one row added or removed), with epsilon the
argument `epsilon`:
  1. The table's size, when a rule needs it (signal-to-noise stopping, depth "auto") and
     `table_size` is not given, is one noisy count with epsilon * size_fraction (sensitivity 1).
  2. The remaining budget goes to the trees. Trees grown on the same rows compose
     sequentially: each gets remaining / n_trees. With `disjoint_trees`, each row is sent to
     one tree by public randomness (independent of the data), the trees see disjoint rows and
     compose in parallel: each gets the whole remaining budget.
  3. Inside a tree (see `jostle.learners.trees.builder`), each level's size and split queries
     cost their epsilon once (parallel composition over the level's disjoint nodes), levels add up, and
     the leaves get what is left of the tree's budget.
The ledger (`jostle.learners.trees.accounting`) checks the composed total against epsilon
before each measurement and calls `charge(epsilon, description)` first; `epsilon_spent_` is the composed
total, never above `epsilon`. Everything stored in a fitted estimator is a release or
post-processing of releases.

Across fits: each fit spends its epsilon again. Before drawing any noise (and after checking
its arguments and data), the kit's `fit` charges its whole epsilon to a shared `PrivacyBudget`
(`budget=`, shared by clones, so `cross_val_score` and `GridSearchCV` charge one total), or to
`default_budget()`, which has no total and warns when fits add up
(`jostle.privacy.shared_budget`; docs/estimators.md). A refused charge raises
`BudgetExceededError` with nothing drawn.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Sequence

import numpy as np
from sklearn.utils.validation import check_is_fitted

from jostle.learnerkit.encoding import EncodedDomains
from jostle.learnerkit.estimators import ChargeCallback, DeclaredDomainClassifier, Domains
from jostle.learners.trees.accounting import PrivacyLedger, floor_float, plan_tree_budget
from jostle.learners.trees.builder import LEAF_MECHANISMS, SPLIT_KINDS, STOPPING_RULES, GrowthRules, grow_tree
from jostle.learners.trees.printing import FitFacts, root_reason, tree_title, tree_to_text
from jostle.learners.trees.pruning import prune_pessimistic
from jostle.learners.trees.releases import noisy_counts
from jostle.learners.trees.structure import TreeArrays, distributions_from_counts
from jostle.learners.trees.utilities import SPLIT_UTILITIES
from jostle.privacy.shared_budget import PrivacyBudget


class _TreeClassifierBase(DeclaredDomainClassifier):
    """Prediction and printing shared by the tree estimators (the rest is the kit's base)."""

    _model_attribute = "trees_"
    trees_: list[TreeArrays]

    def _predict_proba_codes(self, codes: np.ndarray) -> np.ndarray:
        """Class probabilities averaged over the trees."""
        return np.mean([tree.predict_proba(codes) for tree in self.trees_], axis=0)

    # ------------------------------------------------------------------ printing
    def to_text(self, max_trees: int = 1, max_depth: int | None = None, max_lines: int = 200,
                domains: EncodedDomains | None = None, classes: Sequence[Any] | None = None) -> str:
        """A readable printout of the first `max_trees` trees.

        Args:
            max_trees: How many trees of an ensemble to print.
            max_depth: Print nodes down to this depth only.
            max_lines: Most node lines per tree.
            domains: Names and value labels to print instead of the fitted ones (e.g. the table's
                own labels when the trees were fitted on integer codes).
            classes: Class labels to print instead of `classes_`.
        """
        check_is_fitted(self, "trees_")
        parts = []
        facts = self._fit_facts()
        labels = classes if classes is not None else self.classes_
        for index, tree in enumerate(self.trees_[:max_trees]):
            title = tree_title(self._title(), index, len(self.trees_), tree, self._private, facts)
            reason = None if facts is None else root_reason(tree, facts, self._tree_charges(index), labels)
            title += f"\n{reason}" if reason else ""  # why a private tree stopped at its root
            parts.append(tree_to_text(tree, domains if domains is not None else self.domains_,
                                      labels, title, max_depth, max_lines))
        if len(self.trees_) > max_trees:
            parts.append(f"({len(self.trees_) - max_trees} more trees not shown)")
        return "\n\n".join(parts)

    def _title(self) -> str:
        return type(self).__name__

    def _fit_facts(self) -> FitFacts | None:
        """The fit's budget and configuration for the printout (None: not private)."""
        return None

    def _tree_charges(self, index: int) -> list[str]:
        """The descriptions of tree `index`'s charges, without the "tree i/n: " prefix."""
        prefix = f"tree {index + 1}/{len(self.trees_)}: "
        return [d[len(prefix):] for _, d in getattr(self, "charges_", []) if d.startswith(prefix)]


class DPDecisionTreeClassifier(_TreeClassifierBase):
    """The differentially private decision-tree family, one learner with explicit choice points.

    Args:
        epsilon: the total privacy budget (pure epsilon-DP; unit: one row added or removed).
        domains: public domain of each feature: a list of categories or `NumericBins`, in column
            order or keyed by column name.
        classes: the public list of class labels.
        split_utility: "entropy", "gini", "max" (exponential mechanism) or "random" (no epsilon).
        stopping: "depth", "noisy_size" (Friedman & Schuster) or "signal_to_noise"
            (Fletcher & Islam).
        max_depth: most split levels; "auto" is Jagannathan et al.'s min(k/2, log_b(n) - 1) with
            b the mean domain size and n the (estimated) rows of a tree; "signal_to_noise" the
            deepest d with n / b^d >= |C| sqrt(2) (d + 1) / eps_tree (leaves at depth d still
            hold more rows per class than their noise); None: no fixed limit (at most every
            attribute once along a path). "auto" and "signal_to_noise" need the table's size.
        n_trees: number of trees; predictions average their class distributions.
        disjoint_trees: give each tree a disjoint random part of the rows (parallel composition)
            instead of the whole table with a share of the budget (sequential composition).
        leaf_mechanism: "counts" (noisy class counts), "exponential" (only the majority label), or
            "joint" (binary splits only: the last level's splits and their leaves' labels chosen
            together by one exponential mechanism on the correctly classified rows, with the
            leaves' budget; see `jostle.learners.trees.builder`).
        split_kind: "multiway" (a child per value) or "binary" (attribute == value, or not).
        leaf_fraction: share of a tree's budget planned for the leaves; None gives the leaves one
            level's share, 1 / (levels + 1). Leaves also receive whatever the levels left unspent.
        stop_fraction: share of a level's budget spent on the noisy size query ("noisy_size").
        size_fraction: share of epsilon spent on one noisy count of the table when a rule needs
            its size and `table_size` is not given.
        table_size: the table's size if it is public (then not measured).
        max_features: if set, each node considers this many random unused attributes.
        prune: C4.5 pessimistic pruning on the noisy counts (post-processing; needs "counts").
        smoothing: each node's class distribution is shrunk towards its parent's with a
            pseudo-count of smoothing * sqrt(2) / eps_leaf * sqrt(|C| L) rows, the scale of the
            noise in its count vector (a sum of L released leaf vectors); 0 only falls back to
            the parent for an empty leaf. Post-processing.
        confidence: C4.5's confidence level CF for pruning.
        max_rows: the public N of the entropy utility's sensitivity log2(N+1) + 1/ln 2; counts
            above it are scored by the utility's linear continuation, so a larger table is
            learnt (with a coarser utility), never refused.
        max_nodes: public cap on the nodes of one tree.
        random_state: seed of a reproducible (UNSAFE for real releases) noise stream when `noise`
            is None; None uses the operating system's secure source.
        noise: a randomness source with the interface of `jostle.privacy.noise.Randomness`.
        charge: optional callback charge(epsilon, description), called before each noisy
            measurement with the increase of the composed cost (for an outside accountant).
            When it is given and `budget` is None, that outside accountant is the only one
            charged (the Jostle language and the ChoiceMaker fit this way).
        budget: a `PrivacyBudget` that several estimators and fits share: each fit charges its
            whole `epsilon` to it before drawing any noise, and a fit that would pass its total
            is refused (`BudgetExceededError`) with nothing drawn. Clones share it
            (`cross_val_score`, `GridSearchCV`). None charges `default_budget()`, which has no
            total and warns when fits add up (unless `charge` is given). See docs/estimators.md.
        name: a label for printouts (the named configurations set it).
    """

    def __init__(self, epsilon: float = 1.0, *, domains: Domains | None = None,
                 classes: Sequence[Any] | None = None, split_utility: str = "max", stopping: str = "noisy_size",
                 max_depth: int | str | None = "signal_to_noise", n_trees: int = 1, disjoint_trees: bool = False,
                 leaf_mechanism: str = "counts", split_kind: str = "multiway",
                 leaf_fraction: float | None = None, stop_fraction: float = 0.5,
                 size_fraction: float = 0.05, table_size: int | None = None, max_features: int | None = None,
                 prune: bool = True, smoothing: float = 1.0, confidence: float = 0.25, max_rows: int = 1_000_000,
                 max_nodes: int = 100_000, random_state: int | None = None, noise: Any = None,
                 charge: ChargeCallback | None = None, budget: PrivacyBudget | None = None,
                 name: str | None = None) -> None:
        self._keep_parameters(locals())

    def _title(self) -> str:
        return self.name or "DP decision tree"

    def _fit_facts(self) -> FitFacts:
        budget = self.budget_
        return FitFacts(budget["epsilon"], budget["table_size_query"], budget["per_tree"], len(self.trees_),
                        bool(self.disjoint_trees and self.n_trees > 1), self.stopping, self.split_kind,
                        self.leaf_mechanism, self.levels_, budget["leaf_planned"],
                        tuple(int(v) for v in self.domains_.sizes), len(self.classes_), self.max_nodes)

    def _charge_label(self) -> str:
        return self._title()

    def _validate(self) -> None:
        if self.split_utility not in SPLIT_UTILITIES + ("random",):
            raise ValueError(f"split_utility must be one of {SPLIT_UTILITIES + ('random',)}, got {self.split_utility!r}")
        if self.stopping not in STOPPING_RULES:
            raise ValueError(f"stopping must be one of {STOPPING_RULES}, got {self.stopping!r}")
        if self.leaf_mechanism not in LEAF_MECHANISMS:
            raise ValueError(f"leaf_mechanism must be one of {LEAF_MECHANISMS}, got {self.leaf_mechanism!r}")
        if self.split_kind not in SPLIT_KINDS:
            raise ValueError(f"split_kind must be one of {SPLIT_KINDS}, got {self.split_kind!r}")
        if self.leaf_mechanism == "joint" and self.split_kind != "binary":
            raise ValueError("leaf_mechanism='joint' needs split_kind='binary' (its candidates are labelled "
                             "binary splits)")
        if not (self.max_depth is None or self.max_depth in ("auto", "signal_to_noise")
                or (isinstance(self.max_depth, (int, np.integer)) and self.max_depth >= 0)):
            raise ValueError(f"max_depth must be an int >= 0, 'auto', 'signal_to_noise' or None, "
                             f"got {self.max_depth!r}")
        if not (isinstance(self.n_trees, (int, np.integer)) and self.n_trees >= 1):
            raise ValueError(f"n_trees must be an int >= 1, got {self.n_trees!r}")
        for label, value in (("stop_fraction", self.stop_fraction), ("size_fraction", self.size_fraction)):
            if not 0 < value < 1:
                raise ValueError(f"{label} must be in (0, 1), got {value!r}")
        if not (isinstance(self.smoothing, (int, float)) and 0 <= self.smoothing < math.inf):
            raise ValueError(f"smoothing must be a number >= 0, got {self.smoothing!r}")
        if self.prune and self.leaf_mechanism != "counts":
            raise ValueError("prune=True needs leaf_mechanism='counts' (pruning reads the leaves' counts)")
        if self.max_features is not None and not (isinstance(self.max_features, (int, np.integer))
                                                  and self.max_features >= 1):
            raise ValueError(f"max_features must be None or an int >= 1, got {self.max_features!r}")

    def _fit_codes(self, codes: np.ndarray, labels: np.ndarray, charged: Fraction | None) -> None:
        """Train the trees under `epsilon`-DP (see the module docstring for the argument).

        The kit's `fit` has checked the arguments and the data and charged the whole epsilon to
        the shared budget; the learner spends the largest float not above the exact amount
        charged (a budget snaps 0.1 to 1/10, so the learner gets 1/10 rounded down), or, with
        only an outside `charge` callback, `epsilon` as given.
        """
        epsilon = float(self.epsilon) if charged is None else floor_float(charged)
        n, k = codes.shape
        n_classes = len(self.classes_)
        # No check of n against max_rows: it would run after the budget is charged and tell the
        # size exactly. The entropy utility scores counts above max_rows linearly instead, so its
        # sensitivity holds at any size (jostle.learners.trees.utilities).
        noise = self._noise_source()
        ledger = PrivacyLedger(epsilon, self.charge)
        total = Fraction(epsilon)
        needs_size = self.stopping == "signal_to_noise" or self.max_depth in ("auto", "signal_to_noise")
        estimated_rows = None
        if needs_size and self.table_size is not None:
            estimated_rows = float(self.table_size)
        elif needs_size:
            size_epsilon = floor_float(total * Fraction(self.size_fraction))
            # the table's size: one count, sensitivity 1
            ledger.charge(size_epsilon, "noisy size of the table (sensitivity 1)")
            estimated_rows = max(float(noisy_counts(noise, np.array([n]), size_epsilon)[0]), 1.0)
        remaining = total - ledger.spent_exact
        per_tree = remaining if self.disjoint_trees else remaining / self.n_trees
        if self.disjoint_trees and self.n_trees > 1:
            # public randomness, independent of the rows' values: each row goes to one tree
            assignment = np.minimum((noise.uniform(n) * self.n_trees).astype(np.int64), self.n_trees - 1)
        else:
            assignment = np.zeros(n, dtype=np.int64)
        tree_rows = None if estimated_rows is None else (
            estimated_rows / self.n_trees if self.disjoint_trees else estimated_rows)
        levels = self._levels(k, tree_rows, float(per_tree), n_classes)
        self.trees_ = []
        for index in range(self.n_trees):
            part = index if self.disjoint_trees and self.n_trees > 1 else None
            rows = np.flatnonzero(assignment == index) if part is not None else slice(None)
            # with joint leaves the last level is chosen by the leaves' mechanism itself
            query_levels = max(levels - 1, 0) if self.leaf_mechanism == "joint" else levels
            budget = plan_tree_budget(per_tree, query_levels, size_queries=self.stopping == "noisy_size",
                                      split_queries=self.split_utility != "random",
                                      leaf_fraction=self.leaf_fraction, stop_fraction=self.stop_fraction)
            rules = GrowthRules(split_utility=self.split_utility, stopping=self.stopping, max_depth=levels,
                                leaf_mechanism=self.leaf_mechanism, private=True, max_features=self.max_features,
                                max_nodes=self.max_nodes, max_rows=self.max_rows, root_support=tree_rows,
                                split_kind=self.split_kind)
            tree = grow_tree(codes[rows], labels[rows], self.domains_.sizes, n_classes, rules, budget, ledger,
                             noise, part, f"tree {index + 1}/{self.n_trees}")
            if self.prune:
                prune_pessimistic(tree, self.confidence)
            if tree.counts is not None:
                # post-processing: shrink noisy nodes towards their parents by the noise of
                # their counts (a sum of `released_leaves` leaf vectors, each cell ~ sqrt(2)/eps)
                noise_scale = math.sqrt(2.0) / tree.leaf_epsilon * np.sqrt(n_classes * tree.released_leaves)
                pseudo_count = self.smoothing * noise_scale
                tree.proba = distributions_from_counts(tree.counts, tree.parent, tree.depth, pseudo_count)
            self.trees_.append(tree)
        self.ledger_ = ledger
        self.epsilon_spent_ = ledger.spent
        self.tree_epsilon_ = float(per_tree)
        self.levels_ = levels
        self.budget_ = {
            "epsilon": float(self.epsilon), "spent": ledger.spent,
            "table_size_query": ledger.records[0].epsilon if needs_size and self.table_size is None else 0.0,
            "per_tree": float(per_tree), "composition_across_trees": "parallel" if self.disjoint_trees else "sequential",
            "per_level_size_query": budget.size_epsilon, "per_level_split_query": budget.split_epsilon,
            "leaf_planned": budget.leaf_epsilon, "levels": levels,
            "charges": [(r.epsilon, r.description) for r in ledger.records],
        }
        self.charges_ = list(self.budget_["charges"])

    def _levels(self, n_features: int, tree_rows: float | None, tree_epsilon: float, n_classes: int) -> int:
        """The depth limit: fixed, all attributes (None), Jagannathan et al.'s rule ("auto"), or
        the deepest level whose expected support still exceeds the leaf noise ("signal_to_noise").

        Both rules read only public values: the domain sizes, epsilon, and the noisy (or public)
        table size.
        """
        # a binary split has two children, and a path may split an attribute again
        cap = n_features if self.split_kind == "multiway" else int(np.sum(np.asarray(self.domains_.sizes) - 1))
        if self.max_depth is None:
            return cap
        mean_domain = 2.0 if self.split_kind == "binary" else max(float(np.mean(self.domains_.sizes)), 2.0)
        if self.max_depth == "auto":
            by_size = math.log(max(tree_rows, 1.0)) / math.log(mean_domain) - 1.0
            return max(1, int(math.floor(min(cap / 2.0, by_size))))
        if self.max_depth == "signal_to_noise":
            # depth d leaves hold about n / b^d rows; with the leaves' share 1/(d+1) of the tree's
            # budget their per-class noise is sqrt(2) (d+1) / eps_tree: keep the deepest d whose
            # expected support is at least |C| times that noise
            depth = 1
            for d in range(1, cap + 1):
                if tree_rows / mean_domain ** d >= n_classes * math.sqrt(2.0) * (d + 1) / tree_epsilon:
                    depth = d
            return depth
        return int(min(self.max_depth, cap))


class C45DecisionTreeClassifier(_TreeClassifierBase):
    """Non-private ID3/C4.5 baseline on categorical (or publicly binned) features.

    Multiway splits on the attribute of largest information gain, a depth limit, C4.5's MINOBJS
    rule (a split needs two branches with `min_samples_split` rows), and C4.5's pessimistic
    pruning at confidence `confidence`. Not private: use it only as a reference.

    Args:
        domains: public domain of each feature (categories or `NumericBins`).
        classes: the list of class labels.
        max_depth: most split levels (None: no limit).
        prune: apply pessimistic pruning.
        confidence: C4.5's CF.
        min_samples_split: C4.5's MINOBJS (2).
    """

    _private = False

    def __init__(self, *, domains: Domains | None = None,
                 classes: Sequence[Any] | None = None, max_depth: int | None = 5, prune: bool = True,
                 confidence: float = 0.25, min_samples_split: int = 2) -> None:
        self._keep_parameters(locals())

    def _title(self) -> str:
        return "C4.5 (not private)"

    def _fit_codes(self, codes: np.ndarray, labels: np.ndarray, charged: Fraction | None) -> None:
        """Grow (and prune) one exact tree."""
        depth = codes.shape[1] if self.max_depth is None else int(min(self.max_depth, codes.shape[1]))
        rules = GrowthRules(split_utility="entropy", stopping="depth", max_depth=depth, private=False,
                            min_samples_split=self.min_samples_split, max_nodes=10**7)
        tree = grow_tree(codes, labels, self.domains_.sizes, len(self.classes_), rules, None, None, noise=None)
        if self.prune:
            prune_pessimistic(tree, self.confidence)
            tree.proba = distributions_from_counts(tree.counts, tree.parent, tree.depth)
        self.trees_ = [tree]
