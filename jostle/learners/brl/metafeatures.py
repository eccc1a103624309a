"""Metafeatures of the rule-list family: public facts of a classification task and its noisy size.

Public ones (attributes, items, classes, epsilon) cost nothing; `size` reads the private rows
and spends the epsilon it is given (privacy unit: one row added or removed; sensitivity 1);
`log_signal` post-processes it. A released size also serves the Options as their row bound
(`options.row_bound_for`), for free.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from jostle.choicemaker.family import MetafeatureContext
from jostle.learners.brl.corpus import RuleData
from jostle.privacy import replay

MeasureFunction = Callable[[RuleData, float, Any, MetafeatureContext], float]


@dataclass(frozen=True)
class RuleMetafeature:
    """A named summary of a classification table (see `jostle.choicemaker.family.Metafeature`)."""

    name: str
    cost: bool
    function: MeasureFunction = field(repr=False, compare=False)
    sensitivity: str = ""
    requires: tuple[str, ...] = ()

    def measure(self, data: RuleData, epsilon_mf: float, noise: Any, context: MetafeatureContext) -> float:
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


def _noisy_size(data: RuleData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    # The number of rows: one row added or removed changes it by 1 (sensitivity 1); two-sided
    # geometric noise P(k) ~ exp(-eps |k|) (exact, of the float eps's binary value, <= what was
    # charged) is eps-DP. Flooring at 1 is post-processing.
    draw = np.asarray(noise.discrete_laplace(1 / Fraction(eps), 1)).ravel()[0]
    return max(float(replay.released(noise, "rule list rows", data.n_rows, data.n_rows + int(draw), "l1", 1, Fraction(1))), 1.0)  # noqa: E501


def _epsilon(data: RuleData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    return float(context.epsilon)  # public: the chosen Option's budget


def _n_attributes(data: RuleData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    return float(data.n_attributes)  # public: the schema


def _n_items(data: RuleData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    return float(sum(data.domain_sizes))  # public: the domains' sizes


def _log_signal(data: RuleData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    # log10(noisy size * epsilon / items): rows per item in units of a count's noise. Post-processing of "size".
    return math.log10(max(context.released["size"], 1.0) * context.epsilon / max(sum(data.domain_sizes), 1))


BRL_METAFEATURES: dict[str, RuleMetafeature] = {m.name: m for m in [
    RuleMetafeature("size", True, _noisy_size, "1 (row count)"),
    RuleMetafeature("epsilon", False, _epsilon, "public (the Option's budget)"),
    RuleMetafeature("n_attributes", False, _n_attributes, "public"),
    RuleMetafeature("n_items", False, _n_items, "public (sum of the domain sizes)"),
    RuleMetafeature("log_signal", False, _log_signal, "post-processing of size", ("size",)),
]}
