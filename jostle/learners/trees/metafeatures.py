"""Metafeatures of the tree family: the standard metafeatures of a classification table.

They are the learner kit's (`jostle.learnerkit.metafeatures.CLASSIFICATION_METAFEATURES`): public
ones (attributes, branching, classes, epsilon) cost nothing; the noisy ones (the table's size,
its class balance) read the private rows and spend the epsilon they are given, each with its
sensitivity argument next to it (privacy unit: one row added or removed). Derived ones
(`requires`) post-process metafeatures released earlier in the same call. Their fingerprints
hash the source of everything they call (`code_digest`).
"""

from __future__ import annotations

from jostle.choicemaker.family import MetafeatureContext
from jostle.learnerkit.metafeatures import CLASSIFICATION_METAFEATURES, FunctionMetafeature, MeasureFunction

__all__ = ["TREE_METAFEATURES", "TreeMeasureFunction", "TreeMetafeature", "TreeMetafeatureContext"]

TreeMetafeature = FunctionMetafeature
TreeMetafeatureContext = MetafeatureContext  # the engine's context: epsilon, total_epsilon, released
TreeMeasureFunction = MeasureFunction

TREE_METAFEATURES: dict[str, FunctionMetafeature] = dict(CLASSIFICATION_METAFEATURES)
