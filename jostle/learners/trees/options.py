"""Options of the tree family: named configurations of the private tree learners.

`TREE_OPTIONS` are the published learners of `jostle.learners.trees` (Friedman & Schuster,
Mohammed et al., Jagannathan et al.'s random trees, Patil & Singh, Fletcher & Islam), three
simple ones and configurations varying one choice point (depth, trees, budget split, stopping), run on a `ClassificationData` (integer codes, public domain sizes and class count).
An Option run with budget e is e-DP: its learner's own ledger refuses any measurement that would
take it past e (`jostle.learners.trees.accounting`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from jostle.learnerkit.options import ChargeFunction, PureEpsilonOption, package_digest
from jostle.learnerkit.tables import ClassificationData

# The learner's ledger reports each charge rounded UP to a float (`ceil_float`), so the reported
# charges of a learner given exactly e could add up to e plus a few ulps. Giving the learner
# e * (1 - OPTION_MARGIN) (rounded down) keeps the reported sum below e for any realistic
# number of charges (each rounding adds less than 2^-52 relative).
OPTION_MARGIN = 1e-9


def _trees_source_digest() -> str:
    """Hash of the source of `jostle.learners.trees` (an edit to a learner invalidates cached
    experience); the language module is the language's view of the family, not the learners."""
    return package_digest("jostle.learners.trees", ("language.py",))


@dataclass(frozen=True)
class TreeOption(PureEpsilonOption):
    """A private tree learner the ChoiceMaker may choose: a named configuration of `jostle.learners.trees`.

    Args:
        name: The Option's name (e.g. "FriedmanSchuster").
        configuration: A key of `jostle.learners.trees.CONFIGURATIONS`.
        overrides: Extra constructor arguments of `DPDecisionTreeClassifier`, as (name, value) pairs.
        description: One line for reports.
    """

    name: str
    configuration: str
    overrides: tuple[tuple[str, Any], ...] = ()
    description: str = ""

    def make(self, data: ClassificationData, epsilon: float, noise: Any, charge: ChargeFunction | None = None,
             table_size: float | None = None) -> Any:
        """The unfitted learner for `data`'s public domains (codes 0..size-1, classes 0..C-1)."""
        from jostle.learners.trees.configurations import make_learner  # scikit-learn: imported when used

        return make_learner(self.configuration, float(epsilon),
                            domains=[list(range(size)) for size in data.domain_sizes],
                            classes=list(range(data.n_classes)), noise=noise, charge=charge,
                            table_size=None if table_size is None else max(int(round(table_size)), 1),
                            **dict(self.overrides))

    def fit(self, data: ClassificationData, epsilon: float, noise: Any, charge: ChargeFunction | None = None,
            table_size: float | None = None) -> Any:
        """Train under `epsilon`-DP; returns the fitted estimator (`predict` takes integer codes).

        Args:
            data: The training table.
            epsilon: The learner's whole budget.
            noise: Randomness (`jostle.privacy.noise.Randomness()` for real releases; a simulation
                noise only on public data).
            charge: Called as charge(epsilon, description) before each noisy measurement.
            table_size: An already released (noisy) size of the table; the learner then does
                not spend budget measuring it.
        """
        return self.make(data, epsilon, noise, charge, table_size).fit(data.X, data.y)

    @property
    def fingerprint(self) -> str:
        """Cache identity: name, configuration, overrides and the source of `jostle.learners.trees`."""
        return f"{self.name}|{self.configuration}|{self.overrides!r}|{_trees_source_digest()}"


TREE_OPTIONS: dict[str, TreeOption] = {o.name: o for o in [
    TreeOption("FriedmanSchuster", "friedman_schuster", description="Friedman & Schuster 2010, DiffP-C4.5"),
    TreeOption("Mohammed", "mohammed", description="Mohammed et al. 2011, DiffGen's tree"),
    TreeOption("RandomTrees", "jagannathan", description="Jagannathan et al. 2012, random decision trees"),
    TreeOption("PatilSingh", "patil_singh", description="Patil & Singh 2014, DiffPRF"),
    TreeOption("FletcherIslam", "fletcher_islam", description="Fletcher & Islam 2017, random forest"),
    TreeOption("OneRule", "one_rule", description="one labelled binary split, joint exponential mechanism"),
    TreeOption("BinaryTree", "binary_joint", description="binary splits, last level and labels chosen jointly"),
    TreeOption("Majority", "majority", description="the noisy majority class"),
    # choice points beyond the named learners (configurations.VARIANTS)
    TreeOption("Mohammed2", "mohammed_2", description="Mohammed et al., depth 2 (the former default)"),
    TreeOption("Mohammed6", "mohammed_6", description="Mohammed et al., depth 6"),
    TreeOption("MohammedLeafHeavy", "mohammed_leaves_75", description="Mohammed et al., 3/4 of the budget to the leaves"),
    TreeOption("RandomTrees10", "jagannathan_10", description="Jagannathan et al., ten random trees"),
    TreeOption("BinaryTree2", "binary_joint_2", description="binary tree of depth 2, last level and labels jointly"),
    TreeOption("FriedmanSchusterLeanStop", "friedman_schuster_lean_stop",
               description="Friedman & Schuster, a quarter of each level on the stopping query"),
]}
"""Every tree Option, by language name. The first eight are the published learners and the
low-budget configurations; the rest vary one choice point each (`configurations.VARIANTS`)."""


def learner_budget(option_epsilon: float) -> float:
    """What the chosen learner is given: its share less OPTION_MARGIN (see there), rounded down."""
    value = float(option_epsilon) * (1.0 - OPTION_MARGIN)
    return value if Fraction(value) <= Fraction(float(option_epsilon)) else math.nextafter(value, 0.0)
