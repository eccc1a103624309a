"""SuLQ k-means and the zCDP DPLloyd (jostle.learners.clustering): the public query plan, the
charge before every draw, the coding of rows into the public box, and the fit's accuracy on
generated Gaussian mixtures with fixed seeds."""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from jostle.learners.clustering import kmeans
from jostle.learners.clustering.corpus import mixture
from jostle.learners.clustering.data import SCALE, ClusteringData, box_from, code_rows
from jostle.privacy.measures import RhoZCDPBudget
from jostle.privacy.noise import Randomness, SimulationNoise
from jostle.privacy.subledger import OverBudgetError, option_guard

BOX = box_from(["x", "y"], {"x": (0, 10), "y": (0, 10)})


class Recording:
    """A noise source that records every draw in a shared event list."""

    def __init__(self, inner, events):
        self.inner, self.events = inner, events

    def discrete_gaussian(self, sigma2, size, t=None):
        self.events.append(("draw", size))
        return self.inner.discrete_gaussian(sigma2, size, t)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _data(n=6000, seed=1, separation=4.0, k=3, d=2, initial=None):
    drawn = mixture(n, d, k, separation, seed)
    box = box_from([f"x{i}" for i in range(d)], [(0, 10)] * d)
    return ClusteringData.from_values(drawn.rows, box, k, initial=initial), drawn


@pytest.mark.parametrize("k,d,iterations", [(3, 2, 5), (8, 10, 1), (2, 1, 7)])
def test_the_query_plan_is_public_and_fixed_in_advance(k, d, iterations) -> None:
    queries = iterations * k * (d + 1)
    assert kmeans.query_count(k, d, iterations) == queries
    sulq = kmeans.kmeans_plan(kmeans.SULQ, k, d, iterations, rho=Fraction(1, 10))
    lloyd = kmeans.kmeans_plan(kmeans.DPLLOYD, k, d, iterations, rho=Fraction(1, 10))
    assert sulq.queries == lloyd.queries == queries
    assert sulq.touched == queries and lloyd.touched == iterations * (d + 1)
    assert sulq.rho <= Fraction(1, 10) and lloyd.rho <= Fraction(1, 10)
    assert sulq.rho > Fraction(1, 10) * (1 - Fraction(1, 10**4))  # the budget is used (to the sampler's rounding)
    # SuLQ's counting needs k times DPLloyd's variance at the same rho
    assert float(sulq.variance) / float(lloyd.variance) == pytest.approx(k, rel=1e-6)
    assert float(lloyd.variance) == pytest.approx(iterations * (d + 1) / (2 * 0.1), rel=1e-6)


def test_a_stated_variance_costs_what_sulq_counts() -> None:
    plan = kmeans.kmeans_plan(kmeans.SULQ, 3, 2, 5, variance=400)
    assert float(plan.variance) == 400
    assert float(plan.rho) == pytest.approx(45 / (2 * 400), rel=1e-4)  # T / (2 R)
    lloyd = kmeans.kmeans_plan(kmeans.DPLLOYD, 3, 2, 5, variance=400)
    assert float(lloyd.rho) == pytest.approx(15 / (2 * 400), rel=1e-4)
    with pytest.raises(ValueError, match="exactly one"):
        kmeans.kmeans_plan(kmeans.SULQ, 3, 2, 5, rho=1, variance=4)
    with pytest.raises(ValueError):
        kmeans.kmeans_plan(kmeans.SULQ, 0, 2, 5, rho=1)


@pytest.mark.parametrize("method", kmeans.METHODS)
def test_every_batch_is_charged_before_its_draw_and_T_values_are_released(method) -> None:
    data, _ = _data(2000)
    plan = kmeans.kmeans_plan(method, 3, 2, 4, rho=Fraction(1, 5))
    events = []
    guard = option_guard("test", plan.budget)

    def charge(cost, description):
        events.append(("charge", cost.rho))
        guard(cost, description)

    kmeans.fit(data, plan, Recording(Randomness(3), events), charge)
    assert [e[0] for e in events] == ["charge", "draw"] * 4
    assert sum(e[1] for e in events if e[0] == "draw") == plan.queries == kmeans.query_count(3, 2, 4)
    assert sum(e[1] for e in events if e[0] == "charge") == plan.rho <= Fraction(1, 5)


def test_a_refused_batch_draws_nothing() -> None:
    data, _ = _data(2000)
    plan = kmeans.kmeans_plan(kmeans.DPLLOYD, 3, 2, 5, rho=Fraction(1, 5))
    events = []
    with pytest.raises(OverBudgetError):
        kmeans.fit(data, plan, Recording(Randomness(3), events), option_guard("test", RhoZCDPBudget(Fraction(1, 10))))
    # 1/5 over 5 batches: the guard of 1/10 accepts two and refuses the third before its draw
    assert events == [("draw", 9), ("draw", 9)]


@pytest.mark.parametrize("method", kmeans.METHODS)
def test_centres_are_near_the_truth_at_a_generous_rho(method) -> None:
    drawn = mixture(20_000, 2, 3, 4.0, 5)
    start = np.clip(drawn.centres + 1.5, 0, 10)  # public initial centres, off the truth
    data = ClusteringData.from_values(drawn.rows, box_from(["x0", "x1"], [(0, 10), (0, 10)]), 3, initial=start)
    plan = kmeans.kmeans_plan(method, 3, 2, 8, rho=10)
    model = kmeans.fit(data, plan, Randomness(7), option_guard("test", plan.budget))
    distance = np.linalg.norm(model.centres[:, None, :] - drawn.centres[None, :, :], axis=2)
    assert distance.min(axis=1).max() < 0.15 and sorted(distance.argmin(axis=1)) == [0, 1, 2]
    assert model.error(drawn.rows, drawn.centres) < 1.01


def test_dplloyd_beats_sulq_at_the_same_rho() -> None:
    errors = {method: [] for method in kmeans.METHODS}
    for seed in range(8):
        data, drawn = _data(3000, seed=seed, k=4, d=3, separation=2.0)
        for method in kmeans.METHODS:
            plan = kmeans.kmeans_plan(method, 4, 3, 5, rho=Fraction(1, 20))
            model = kmeans.fit(data, plan, SimulationNoise(seed), lambda cost, description: None)
            errors[method].append(model.error(drawn.rows, drawn.centres))
    assert np.mean(errors[kmeans.DPLLOYD]) < np.mean(errors[kmeans.SULQ])


def test_rows_are_coded_into_the_public_box_without_failing() -> None:
    frame = pd.DataFrame({"x": [5.0, -3.0, 12.0, np.nan, "abc", np.inf, None],
                          "y": [2.5, 2.5, 2.5, 2.5, 2.5, -np.inf, 2.5], "other": list("abcdefg")})
    units = code_rows(frame, BOX)
    assert units.dtype == np.int64 and units.shape == (7, 2)
    assert list(units[:, 0]) == [SCALE // 2, 0, SCALE, SCALE // 2, SCALE // 2, SCALE, SCALE // 2]
    assert list(units[:, 1]) == [SCALE // 4] * 5 + [0, SCALE // 4]
    # a row's code depends on that row and the public box only
    assert np.array_equal(code_rows(frame.iloc[2:3], BOX), units[2:3])
    with pytest.raises(ValueError, match="no column"):
        code_rows(frame[["x"]], BOX)
    with pytest.raises(ValueError, match="low < high"):
        box_from(["x"], {"x": (1, 1)})
    with pytest.raises(ValueError, match="no bounds"):
        box_from(["x", "y"], {"x": (0, 1)})


def test_the_sums_are_exact_integers() -> None:
    rng = np.random.default_rng(0)
    units = rng.integers(0, SCALE + 1, size=(5000, 3))
    labels = rng.integers(0, 4, size=5000)
    sizes, sums = kmeans.cluster_sums(units, labels, 4)
    assert list(sizes) == [int((labels == j).sum()) for j in range(4)]
    assert np.array_equal(sums, np.array([units[labels == j].sum(axis=0) for j in range(4)]))


def test_reseeding_moves_only_near_empty_clusters() -> None:
    centres = np.array([[0.0, 0.0], [0.5, 0.5], [1.0, 1.0]])
    moved = kmeans.reseed(centres, np.array([2.0, 500.0, 300.0]), 10.0, 0, 0)
    assert np.array_equal(moved[1:], centres[1:]) and np.linalg.norm(moved[0] - centres[1]) < 0.3
    assert np.array_equal(kmeans.reseed(centres, np.array([2.0, 3.0, 1.0]), 10.0, 0, 0), centres)


def test_a_fit_on_100000_rows_and_10_columns_takes_seconds() -> None:
    rows = np.random.default_rng(0).uniform(0, 10, size=(100_000, 10))
    box = box_from([f"c{i}" for i in range(10)], [(0, 10)] * 10)
    start = time.perf_counter()
    data = ClusteringData.from_values(rows, box, 10)
    plan = kmeans.kmeans_plan(kmeans.DPLLOYD, 10, 10, 5, rho=1)
    kmeans.fit(data, plan, SimulationNoise(0), option_guard("test", plan.budget))
    assert time.perf_counter() - start < 6.0
