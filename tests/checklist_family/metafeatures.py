"""The metafeatures of the median family: one noisy, two public (`FunctionMetafeature`s)."""

from __future__ import annotations

from typing import Any

import numpy as np

from jostle.choicemaker.family import MetafeatureContext
from jostle.learnerkit.metafeatures import FunctionMetafeature
from jostle.privacy import safe_noise
from tests.checklist_family.task import MedianData


def noisy_log_size(data: MedianData, epsilon_mf: float, noise: Any, context: MetafeatureContext) -> float:
    """log10 of the count of values, released with Laplace(1 / epsilon_mf).

    Sensitivity 1: one value added or removed changes the count by 1; the log is post-processing.
    """
    count = safe_noise.release_vector(noise, np.array([data.values.size]), 1.0, epsilon_mf)[0]
    return float(np.log10(max(count, 1.0)))


def log_domain(data: MedianData, epsilon_mf: float, noise: Any, context: MetafeatureContext) -> float:
    """log10 of the public domain's size (public: declared, never read from the values)."""
    return float(np.log10(data.domain_size))


def call_epsilon(data: MedianData, epsilon_mf: float, noise: Any, context: MetafeatureContext) -> float:
    """The call's whole budget (public)."""
    return float(context.total_epsilon)


MEDIAN_METAFEATURES: dict[str, FunctionMetafeature] = {
    "log_size": FunctionMetafeature("log_size", True, noisy_log_size,
                                    "1 (one value added or removed changes the count by 1)"),
    "log_domain": FunctionMetafeature("log_domain", False, log_domain),
    "median_epsilon": FunctionMetafeature("median_epsilon", False, call_epsilon),
}
