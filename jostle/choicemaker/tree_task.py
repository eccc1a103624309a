"""The ChoiceMaker for differentially private decision trees: Options, metafeatures, dispatch.

Options (`TREE_OPTIONS`) are the published learners of `jostle.trees` (Friedman & Schuster,
Mohammed et al., Jagannathan et al.'s random trees, Patil & Singh, Fletcher & Islam) run on a
`ClassificationData` (integer codes, public domain sizes and class count). Metafeatures
(`TREE_METAFEATURES`) are public facts of the task (attributes, branching, classes, epsilon)
and a few noisy statistics (the table's size, its class balance). The training side
(experience table, meta-model) is in `jostle.choicemaker.tree_training`.

`dispatch_tree(trained, data, epsilon, noise, charge)` is the private run:
  1. the metafeature share of epsilon is split EQUALLY among the noisy metafeatures
     (`metafeatures.plan_budget`, shared with the histogram ChoiceMaker) and each is charged
     before it is measured;
  2. the meta-model picks the Option with the lowest predicted error (post-processing of the
     released metafeatures);
  3. the Option is trained with the rest of epsilon; its learner charges before each of its
     noisy measurements. When the noisy size was released in step 1, the learner gets it as its
     `table_size` (a released value: reusing it costs nothing) instead of measuring it again.
Privacy: sequential composition of the metafeature releases and the learner (privacy unit:
one row added or removed). A `BudgetGuard` adds every charge up exactly and refuses, before
anything is drawn, one that would take the total above epsilon.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from jostle.choicemaker.metafeatures import FeatureMeasurement, plan_budget
from jostle.choicemaker.tree_corpus import ClassificationData
from jostle.trees import DPDecisionTreeClassifier, make_learner

ChargeFunction = Callable[[float, str], None]

# The learner's ledger reports each charge rounded UP to a float (`ceil_float`), so the reported
# charges of a learner given exactly e could add up to e plus a few ulps. Giving the learner
# e * (1 - OPTION_MARGIN) (rounded down) keeps the reported sum below e for any realistic
# number of charges (each rounding adds less than 2^-52 relative).
OPTION_MARGIN = 1e-9


class TreeBudgetError(ValueError):
    """A charge would take the ChoiceMaker's total above its epsilon (nothing was measured)."""


class BudgetGuard:
    """Exact running total of a dispatch's charges, checked against its epsilon.

    `charge(epsilon, description)` refuses a charge that would exceed the total (before the
    caller measures anything), then forwards it to the outside accountant `callback`.
    """

    def __init__(self, epsilon: float, callback: ChargeFunction | None = None) -> None:
        self.epsilon = float(epsilon)
        self.callback = callback
        self.spent = Fraction(0)
        self.records: list[tuple[float, str]] = []

    def charge(self, epsilon: float, description: str) -> None:
        if not (epsilon > 0 and math.isfinite(epsilon)):
            raise ValueError(f"a charge needs a finite epsilon > 0, got {epsilon} for {description}")
        after = self.spent + Fraction(float(epsilon))
        if after > Fraction(self.epsilon):
            raise TreeBudgetError(f"{description}: epsilon {epsilon:g} would bring the total to "
                                  f"{float(after):.17g}, over {self.epsilon:.17g}")
        if self.callback is not None:
            self.callback(float(epsilon), description)
        self.spent = after
        self.records.append((float(epsilon), description))


def _trees_source_digest() -> str:
    """Hash of the source of `jostle.trees` (an edit to a learner invalidates cached experience)."""
    import jostle.trees
    folder = Path(jostle.trees.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.py")):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class TreeOption:
    """A private tree learner the ChoiceMaker may choose: a named configuration of `jostle.trees`.

    Args:
        name: The Option's name (e.g. "FriedmanSchuster").
        configuration: A key of `jostle.trees.CONFIGURATIONS`.
        overrides: Extra constructor arguments of `DPDecisionTreeClassifier`, as (name, value) pairs.
        description: One line for reports.
    """

    name: str
    configuration: str
    overrides: tuple[tuple[str, Any], ...] = ()
    description: str = ""

    def make(self, data: ClassificationData, epsilon: float, noise: Any, charge: ChargeFunction | None = None,
             table_size: float | None = None) -> DPDecisionTreeClassifier:
        """The unfitted learner for `data`'s public domains (codes 0..size-1, classes 0..C-1)."""
        return make_learner(self.configuration, float(epsilon),
                            domains=[list(range(size)) for size in data.domain_sizes],
                            classes=list(range(data.n_classes)), noise=noise, charge=charge,
                            table_size=None if table_size is None else max(int(round(table_size)), 1),
                            **dict(self.overrides))

    def fit(self, data: ClassificationData, epsilon: float, noise: Any, charge: ChargeFunction | None = None,
            table_size: float | None = None) -> DPDecisionTreeClassifier:
        """Train under `epsilon`-DP; returns the fitted estimator (`predict` takes integer codes).

        Args:
            data: The training table.
            epsilon: The learner's whole budget.
            noise: Randomness (`jostle.noise.Randomness()` for real releases; a simulation
                noise only on public data).
            charge: Called as charge(epsilon, description) before each noisy measurement.
            table_size: An already released (noisy) size of the table; the learner then does
                not spend budget measuring it.
        """
        return self.make(data, epsilon, noise, charge, table_size).fit(data.X, data.y)

    @property
    def fingerprint(self) -> str:
        """Cache identity: name, configuration, overrides and the source of `jostle.trees`."""
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
]}


# Metafeatures -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TreeMetafeatureContext:
    """Public facts a tree metafeature may use.

    Attributes:
        epsilon: The budget the chosen Option will run with (public).
        total_epsilon: The whole budget of the ChoiceMaker call (public).
        released: Metafeatures released earlier in the same call (post-processing may use them).
    """

    epsilon: float
    total_epsilon: float
    released: Mapping[str, float] = field(default_factory=dict)


TreeMeasureFunction = Callable[[ClassificationData, float, Any, TreeMetafeatureContext], float]


@dataclass(frozen=True)
class TreeMetafeature:
    """A named summary of a classification table.

    Args:
        name: Feature name (a column of the experience table, an input of the meta-model).
        cost: True if it reads the private rows and must be given epsilon.
        function: f(data, epsilon_mf, noise, context) -> float.
        sensitivity: The sensitivity argument (privacy unit: one row added or removed).
        requires: Metafeatures this one post-processes (measured earlier in the same call).
    """

    name: str
    cost: bool
    function: TreeMeasureFunction = field(repr=False, compare=False)
    sensitivity: str = ""
    requires: tuple[str, ...] = ()

    def measure(self, data: ClassificationData, epsilon_mf: float, noise: Any, context: TreeMetafeatureContext) -> float:
        """The feature's value, spending `epsilon_mf` (0 for public and derived ones)."""
        if self.cost and not epsilon_mf > 0:
            raise ValueError(f"metafeature {self.name!r} reads private rows and needs epsilon > 0")
        return float(self.function(data, float(epsilon_mf), noise, context))

    @property
    def fingerprint(self) -> str:
        import inspect
        try:
            text = inspect.getsource(self.function)
        except (OSError, TypeError):
            text = getattr(self.function, "__qualname__", repr(self.function))
        return f"{self.name}|{self.cost}|{self.requires}|{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def _noisy_size(data: ClassificationData, eps: float, noise: Any, context: TreeMetafeatureContext) -> float:
    # The number of rows: one row added or removed changes it by 1 (sensitivity 1); two-sided
    # geometric noise P(k) ~ exp(-eps |k|) is eps-DP (Ghosh et al. 2009). Flooring at 1 is
    # post-processing.
    return max(float(data.n_rows + int(np.asarray(noise.two_sided_geometric(eps, 1)).ravel()[0])), 1.0)


def _class_balance(data: ClassificationData, eps: float, noise: Any, context: TreeMetafeatureContext) -> float:
    # The class histogram: one row changes one class count by 1 (L1 sensitivity 1), geometric
    # noise on each count is eps-DP. The released value is the largest class's share of the
    # clipped noisy counts (post-processing); 1 / C when every noisy count is <= 0.
    counts = np.bincount(data.y, minlength=data.n_classes)
    noisy = np.clip(counts + np.asarray(noise.two_sided_geometric(eps, data.n_classes), dtype=float), 0.0, None)
    return float(noisy.max() / noisy.sum()) if noisy.sum() > 0 else 1.0 / data.n_classes


def _n_attributes(data: ClassificationData, eps: float, noise: Any, context: TreeMetafeatureContext) -> float:
    return float(data.n_attributes)  # public: the schema


def _branching(data: ClassificationData, eps: float, noise: Any, context: TreeMetafeatureContext) -> float:
    return float(np.mean(data.domain_sizes)) if data.domain_sizes else 1.0  # public domain sizes


def _n_classes(data: ClassificationData, eps: float, noise: Any, context: TreeMetafeatureContext) -> float:
    return float(data.n_classes)  # public class list


def _epsilon(data: ClassificationData, eps: float, noise: Any, context: TreeMetafeatureContext) -> float:
    return float(context.epsilon)  # public: the chosen Option's budget


def _log_rows_per_cell(data: ClassificationData, eps: float, noise: Any, context: TreeMetafeatureContext) -> float:
    # log10(noisy size / product of the public domain sizes): post-processing of "size".
    return math.log10(max(context.released["size"], 1.0)) - float(np.sum(np.log10(data.domain_sizes)))


def _log_signal(data: ClassificationData, eps: float, noise: Any, context: TreeMetafeatureContext) -> float:
    # log10(noisy size * epsilon / (classes * mean branching)): rows per child and class of a
    # first split, in units of the count noise 1/epsilon. Post-processing of "size".
    branching = max(float(np.mean(data.domain_sizes)), 1.0) if data.domain_sizes else 1.0
    return math.log10(max(context.released["size"], 1.0) * context.epsilon / (data.n_classes * branching))


TREE_METAFEATURES: dict[str, TreeMetafeature] = {m.name: m for m in [
    TreeMetafeature("size", True, _noisy_size, "1 (row count)"),
    TreeMetafeature("class_balance", True, _class_balance, "1 (L1 of the class histogram)"),
    TreeMetafeature("n_attributes", False, _n_attributes, "public"),
    TreeMetafeature("branching", False, _branching, "public (mean domain size)"),
    TreeMetafeature("n_classes", False, _n_classes, "public"),
    TreeMetafeature("epsilon", False, _epsilon, "public (the Option's budget)"),
    TreeMetafeature("log_rows_per_cell", False, _log_rows_per_cell, "post-processing of size", ("size",)),
    TreeMetafeature("log_signal", False, _log_signal, "post-processing of size", ("size",)),
]}


def measure_tree_features(metafeatures: list[Any], data: ClassificationData, epsilon: float, mf_share: float,
                          noise: Any, charge: ChargeFunction | None = None) -> FeatureMeasurement:
    """Measure metafeatures privately, charging each noisy one before it is measured.

    The code path of both training (public data, simulated noise) and `dispatch_tree`: the
    share `mf_share` of epsilon is split equally among the noisy metafeatures and the Option
    gets the rest (`metafeatures.plan_budget`, whose parts never add up to more than epsilon).

    Args:
        metafeatures: TreeMetafeature-like objects with distinct names; a derived one must
            come after the metafeatures it `requires`.
        data: The (private) table.
        epsilon: The whole budget of the ChoiceMaker call.
        mf_share: Share of epsilon for the noisy metafeatures.
        noise: Source of randomness.
        charge: charge(epsilon, description), called before each noisy measurement.
    """
    names = [m.name for m in metafeatures]
    if len(set(names)) != len(names):
        raise ValueError("metafeature names must be distinct")
    for index, feature in enumerate(metafeatures):
        missing = [r for r in getattr(feature, "requires", ()) if r not in names[:index]]
        if missing:
            raise ValueError(f"metafeature {feature.name!r} post-processes {missing}: list them before it")
    split = plan_budget(list(metafeatures), float(epsilon), mf_share)
    option_epsilon = split["option"]
    released: dict[str, float] = {}
    for feature in metafeatures:
        context = TreeMetafeatureContext(option_epsilon, float(epsilon), dict(released))
        if feature.cost:
            share = split[f"metafeature {feature.name}"]
            if charge is not None:
                charge(share, f"metafeature {feature.name}")
            released[feature.name] = float(feature.measure(data, share, noise, context))
        else:
            released[feature.name] = float(feature.measure(data, 0.0, noise, context))
    return FeatureMeasurement(released, split, option_epsilon)


def learner_budget(option_epsilon: float) -> float:
    """What the chosen learner is given: its share less OPTION_MARGIN (see there), rounded down."""
    value = float(option_epsilon) * (1.0 - OPTION_MARGIN)
    return value if Fraction(value) <= Fraction(float(option_epsilon)) else math.nextafter(value, 0.0)


def released_size(metafeatures: list[Any], features: Mapping[str, float]) -> float | None:
    """The noisy table size released by the metafeature "size", if it was measured."""
    for feature in metafeatures:
        if feature.name == "size" and feature.cost:
            return float(features["size"])
    return None


def run_option(option: TreeOption, metafeatures: list[Any], data: ClassificationData, measured: FeatureMeasurement,
               noise: Any, charge: ChargeFunction | None = None) -> DPDecisionTreeClassifier:
    """Train `option` with the budget `measure_tree_features` left for it (training and dispatch)."""
    return option.fit(data, learner_budget(measured.option_epsilon), noise, charge,
                      released_size(metafeatures, measured.features))


class TreeDispatchResult(NamedTuple):
    """What `dispatch_tree` released and how (a tuple: model, choice, features, predictions,
    budget_split).

    Attributes:
        model: The chosen learner, fitted (predict on integer codes).
        choice: Name of the Option that ran.
        features: Released metafeature values.
        predictions: Predicted error (1 - accuracy) of every Option.
        budget_split: Description -> epsilon actually charged (metafeatures, then the Option).
    """

    model: DPDecisionTreeClassifier
    choice: str
    features: dict[str, float]
    predictions: dict[str, float]
    budget_split: dict[str, float]


def dispatch_tree(trained: Any, data: ClassificationData, epsilon: float, noise: Any,
                  charge: ChargeFunction | None = None) -> TreeDispatchResult:
    """Choose and train the best tree learner privately, spending at most `epsilon` in total.

    Args:
        trained: A trained tree ChoiceMaker (`tree_training.train_tree_choicemaker`).
        data: The private training table (integer codes with public domains).
        epsilon: The whole budget (metafeatures plus the learner).
        noise: Source of randomness (`jostle.noise.Randomness()` for real releases).
        charge: charge(epsilon, description), called before every noisy measurement; it
            should raise if the outside budget cannot pay.
    """
    if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be positive and finite, got {epsilon!r}")
    guard = BudgetGuard(float(epsilon), charge)
    features = list(trained.metafeatures)
    measured = measure_tree_features(features, data, float(epsilon), trained.mf_share, noise, guard.charge)
    choice, predictions = trained.choose(measured.features)
    before = guard.spent
    model = run_option(trained.options[choice], features, data, measured, noise, guard.charge)
    split = {k: v for k, v in measured.budget_split.items() if k != "option"}
    split[f"option {choice}"] = float(guard.spent - before)
    return TreeDispatchResult(model, choice, dict(measured.features), predictions, split)


_TRAINING_NAMES = ("train_tree_choicemaker", "TrainedTreeChoiceMaker", "TreeGrid", "tree_experience_table")


def __getattr__(name: str) -> Any:
    """The training side lives in `tree_training` (which imports this module); its public names
    are also reachable from here."""
    if name in _TRAINING_NAMES:
        from jostle.choicemaker import tree_training
        return getattr(tree_training, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
