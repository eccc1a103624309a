"""Metafeatures of the clustering family: public facts of the call, and one noisy row count.

What decides among the Options (the number of Lloyd iterations, and SuLQ's counting against
DPLloyd's) is signal against noise: how many rows stand behind a cluster's sums against the
noise of a sum at each iteration's share of the budget. d, k and the budget are public; the
number of rows is not (privacy unit: one row added or removed).

Public (cost=False; they read only the public box, k and the budget, so they are identical on
neighbouring inputs):
    epsilon     the pure epsilon within the Option's rho (the learner kit's `EPSILON`)
    log_rho     log10 of the Option's rho
    n_dimensions  d, the number of columns (the public box)
    n_clusters    k, the number of clusters (the call)

Noisy (cost=True), one release "clustering row count": the number of rows with exact discrete
Gaussian noise, charged the metafeature's whole rho part r (`ClusteringFamily.metafeature_cost`)
and spending at most r (its variance 1 / eps^2, eps the pure epsilon within r, eps^2 / 2 <= r).
Sensitivity: adding or removing one row moves the count by exactly 1 (Canonne, Kamath and
Steinke 2020: (1 / (2 sigma^2))-zCDP). Floored at 1 (post-processing):
    n_rows      the noisy row count

Derived (post-processing of `n_rows` and public facts, `requires`):
    log_cluster_signal   log10((n_rows / k) / sd), sd = sqrt(5 (d + 1) / (2 rho)): rows per
                         cluster in units of the noise of one of DPLloyd's sums at 5 iterations
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from jostle.choicemaker.family import MetafeatureContext
from jostle.learnerkit.metafeatures import EPSILON, FunctionMetafeature
from jostle.learners.clustering.data import ClusteringData
from jostle.privacy.measures import RhoZCDPBudget

__all__ = ["CLUSTERING_METAFEATURES", "COUNT_RELEASE", "DEFAULT_METAFEATURES", "PUBLIC_METAFEATURES"]

COUNT_RELEASE = "clustering row count"


def _rho(context: MetafeatureContext) -> float:
    budget = context.budget
    return float(budget.rho) if isinstance(budget, RhoZCDPBudget) else float(context.epsilon) ** 2 / 2


def _log_rho(data: ClusteringData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    return math.log10(max(_rho(context), 1e-300))  # public: the Option's budget


def _d(data: ClusteringData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    return float(data.public_facts()["d"])  # public: the box


def _k(data: ClusteringData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    return float(data.public_facts()["k"])  # public: the call


def _n_rows(data: ClusteringData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    # The row count: one row added or removed moves it by 1 (sensitivity 1). The engine gives
    # eps, the largest float not above the pure epsilon within the unit's rho part r, so
    # rho' = eps^2 / 2 <= r; the count is released with exact discrete Gaussian noise of
    # variance 1 / eps^2 = 1 / (2 rho') on the integers (`sulq.sulq_plan`, rounded up: it costs at
    # most rho' <= r, the part charged, `ClusteringFamily.metafeature_cost`). Flooring at 1 is
    # post-processing.
    from jostle.privacy.sulq import sulq_plan, sulq_release

    plan = sulq_plan(1 / Fraction(eps) ** 2, 1, 1, integer_valued=True)
    return max(float(sulq_release(noise, [int(data.units.shape[0])], plan)[0]), 1.0)


def _log_cluster_signal(data: ClusteringData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    # post-processing of n_rows and the public d, k and rho
    facts = data.public_facts()
    sd = math.sqrt(5 * (facts["d"] + 1) / (2 * max(_rho(context), 1e-300)))
    return math.log10(max(context.released["n_rows"], 1.0) / facts["k"] / sd)


COUNT_SENSITIVITY = "1 (the row count: one row added or removed moves it by 1; row unit; discrete Gaussian)"

CLUSTERING_METAFEATURES: dict[str, FunctionMetafeature] = {m.name: m for m in [
    EPSILON,
    FunctionMetafeature("log_rho", False, _log_rho, "public (the Option's budget)"),
    FunctionMetafeature("n_dimensions", False, _d, "public (the box)"),
    FunctionMetafeature("n_clusters", False, _k, "public (the call)"),
    FunctionMetafeature("n_rows", True, _n_rows, COUNT_SENSITIVITY, release=COUNT_RELEASE),
    FunctionMetafeature("log_cluster_signal", False, _log_cluster_signal, "post-processing of n_rows",
                        ("n_rows",)),
]}

DEFAULT_METAFEATURES: tuple[str, ...] = tuple(CLUSTERING_METAFEATURES)
PUBLIC_METAFEATURES: tuple[str, ...] = ("epsilon", "log_rho", "n_dimensions", "n_clusters")
