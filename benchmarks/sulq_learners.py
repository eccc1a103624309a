"""Jostle's SuLQ learners and their modern counterparts, as `benchmarks/sulq.py` calls them.

Each function runs one learner on public training rows with seeded exact noise (reproducible
benchmark runs; a real release uses `Randomness()`), checks that it spent no more than it was
given, and returns what the benchmark scores. The learners are those of
`jostle.learners.clustering` (SuLQ k-means, zCDP DPLloyd) and `jostle.learners.sulq` (SuLQ ID3,
SuLQ perceptron); `available()` says which of them this checkout has.
"""

from __future__ import annotations

import importlib
from fractions import Fraction
from typing import Any

import numpy as np

from jostle.privacy.noise import Randomness


def available() -> dict[str, bool]:
    """Which learner packages this checkout has."""
    found = {}
    for name in ("clustering", "sulq_classifiers"):
        try:
            importlib.import_module(f"jostle.learners.{name}")
            found[name] = True
        except ImportError:
            found[name] = False
    return found


def _seeded(seed: int) -> Randomness:
    return Randomness(seed=seed)


def _meter(cap: Fraction) -> tuple[Any, list]:
    """A charge function that records each batch's rho and refuses one past `cap` (before its draw)."""
    spent: list = []

    def charge(cost: Any, what: str) -> None:
        rho = Fraction(cost.rho)
        if sum(spent, Fraction(0)) + rho > cap:
            raise AssertionError(f"overspent at {what}")
        spent.append(rho)
    return charge, spent


def kmeans(name: str, train: np.ndarray, k: int, point: dict, iterations: int, seed: int,
           start: int = 0) -> dict | None:
    """SuLQ k-means with the lecture's R ("sulq_lecture") or given the point's rho ("sulq_zcdp"),
    or the zCDP DPLloyd at that rho ("dplloyd"; "dplloyd_reseed": with the family's reseeding of
    near-empty clusters, post-processing, the Option DPLloydReseed), on rows already in [0, 1]^d (box [0, 1]^d):
    {"centres", "rho_spent", "queries", "variance"}; None when this checkout lacks the family.
    `seed` seeds the noise, `start` the public initial centres (the same for every learner of a
    repetition, so that paired differences are about the noise, not the start)."""
    try:
        from jostle.learners.clustering import kmeans as learner
        from jostle.learners.clustering.data import ClusteringData, box_from
    except ImportError:
        return None
    from jostle.privacy.sulq import lecture_variance

    d = train.shape[1]
    method = learner.DPLLOYD if name.startswith("dplloyd") else learner.SULQ
    if name == "sulq_lecture":  # the 2005 calibration for this fit's T (public: k, d, iterations)
        variance = Fraction(lecture_variance(learner.query_count(k, d, iterations), point["epsilon"], point["delta"]))
        plan = learner.kmeans_plan(method, k, d, iterations, variance=variance)
        cap = plan.rho
        assert cap <= Fraction(point["rho"]), "the lecture's R costs more than the zCDP budget"
    else:
        plan = learner.kmeans_plan(method, k, d, iterations, rho=Fraction(point["rho"]))
        cap = Fraction(point["rho"])
    box = box_from([f"x{i}" for i in range(d)], [(0.0, 1.0)] * d)
    data = ClusteringData.from_values(train, box, k, seed=start)
    charge, spent = _meter(cap)
    model = learner.fit(data, plan, _seeded(seed), charge, name, reseeding=name == "dplloyd_reseed")
    return {"centres": np.asarray(model.centres, dtype=float), "rho_spent": float(sum(spent, Fraction(0))),
            "queries": plan.queries, "variance": float(plan.variance)}


def _sulq_classifiers() -> Any | None:
    try:
        from jostle.learners.sulq_classifiers import id3, perceptron
    except ImportError:
        return None
    return id3, perceptron


def id3(train: Any, point: dict, depth: int, seed: int) -> Any | None:
    """SuLQ ID3 of public maximum depth `depth` at the point's rho (every query counted), on a
    `ClassificationData`: a model with predict(codes); None when this checkout lacks it or the
    depth asks more queries than the learner allows."""
    modules = _sulq_classifiers()
    if modules is None:
        return None
    rho = Fraction(point["rho"])
    charge, _ = _meter(rho)
    try:
        return modules[0].fit_id3(np.asarray(train.X), np.asarray(train.y), train.domain_sizes, train.n_classes,
                                  _seeded(seed), charge, rho=rho, cap=rho, depth=depth)
    except ValueError as error:
        if "queries" in str(error):  # more queries than the learner allows at this depth
            return None
        raise


def perceptron(codes: np.ndarray, labels: np.ndarray, domain_sizes: tuple[int, ...], point: dict,
               iterations: int, seed: int) -> Any | None:
    """The SuLQ perceptron (binary: labels 0 / 1) with `iterations` public iterations at the point's
    rho (every query counted), on integer codes: a model with predict(codes); None without it."""
    modules = _sulq_classifiers()
    if modules is None:
        return None
    rho = Fraction(point["rho"])
    charge, _ = _meter(rho)
    return modules[1].fit_perceptron(np.asarray(codes), np.asarray(labels), domain_sizes, 2, _seeded(seed), charge,
                                     rho=rho, cap=rho, iterations=iterations)
