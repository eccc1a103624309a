"""Metafeatures of the tree family: public facts of a classification task and noisy statistics.

Public ones (attributes, branching, classes, epsilon) cost nothing; the noisy ones (the table's
size, its class balance) read the private rows and spend the epsilon they are given, each with
its sensitivity argument next to it (privacy unit: one row added or removed). Derived ones
(`requires`) post-process metafeatures released earlier in the same call.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from jostle.choicemaker.family import MetafeatureContext
from jostle.learners.trees.corpus import ClassificationData
from jostle.privacy import replay

TreeMetafeatureContext = MetafeatureContext  # the engine's context: epsilon, total_epsilon, released

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
    return max(float(replay.released(noise, "tree rows", data.n_rows, data.n_rows + int(np.asarray(noise.two_sided_geometric(eps, 1)).ravel()[0]), "l1", 1, 1)), 1.0)  # noqa: E501


def _class_balance(data: ClassificationData, eps: float, noise: Any, context: TreeMetafeatureContext) -> float:
    # The class histogram: one row changes one class count by 1 (L1 sensitivity 1), geometric
    # noise on each count is eps-DP. The released value is the largest class's share of the
    # clipped noisy counts (post-processing); 1 / C when every noisy count is <= 0.
    counts = np.bincount(data.y, minlength=data.n_classes)
    noisy = np.clip(replay.released(noise, "tree class counts", counts, counts + np.asarray(noise.two_sided_geometric(eps, data.n_classes), dtype=float), "l1", 1, 1), 0.0, None)  # noqa: E501
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
