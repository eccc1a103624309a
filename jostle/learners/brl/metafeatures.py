"""Metafeatures of the rule-list family: the standard ones of a classification table, and two of its own.

The standard metafeatures (`jostle.learnerkit.metafeatures.CLASSIFICATION_METAFEATURES`: the
noisy size and class balance, attributes, branching, classes, epsilon, log_rows_per_cell,
log_signal) are the same objects the tree family offers, so a ChoiceMaker over tree and
rule-list Options reads one `size`. The noisy `size` reads the private rows and spends the
epsilon it is given (privacy unit: one row added or removed; sensitivity 1). The family adds
`n_items` (public) and `log_item_signal` (post-processing of `size`). A released size also
serves the Options as their row bound (`options.row_bound_for`), for free. Every fingerprint
hashes the source of everything its function calls (`code_digest`).
"""

from __future__ import annotations

import math
from typing import Any

from jostle.choicemaker.family import MetafeatureContext
from jostle.learnerkit.metafeatures import CLASSIFICATION_METAFEATURES, FunctionMetafeature, MeasureFunction
from jostle.learnerkit.tables import ClassificationData

__all__ = ["BRL_METAFEATURES", "MeasureFunction", "RuleMetafeature"]

RuleMetafeature = FunctionMetafeature


def _n_items(data: ClassificationData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    return float(sum(data.domain_sizes))  # public: the domains' sizes


def _log_item_signal(data: ClassificationData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    # log10(noisy size * epsilon / items): rows per item in units of a count's noise. Post-processing of "size".
    return math.log10(max(context.released["size"], 1.0) * context.epsilon / max(sum(data.domain_sizes), 1))


BRL_METAFEATURES: dict[str, FunctionMetafeature] = {**CLASSIFICATION_METAFEATURES, **{m.name: m for m in [
    FunctionMetafeature("n_items", False, _n_items, "public (sum of the domain sizes)"),
    FunctionMetafeature("log_item_signal", False, _log_item_signal, "post-processing of size", ("size",)),
]}}
