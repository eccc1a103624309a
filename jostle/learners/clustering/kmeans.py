"""SuLQ k-means and a zCDP DPLloyd: Lloyd's iterations from noisy cluster sizes and noisy sums.

What we relied on. SuLQ k-means is from Blum, Dwork, McSherry and Nissim, "Practical privacy:
the SuLQ framework" (PODS 2005, section 4), as the lecture notes present it
(`../shared/papers/shmatikov_ppdm.txt`): per iteration, for each cluster j, ask the noisy size
sum_rows [row nearest to c_j] and the noisy coordinate sums sum_rows [row nearest to c_j] x_i,
and move c_j to noisy sum / noisy size; every coordinate is one query, so an iteration asks
k (d + 1) queries and T = iterations * k * (d + 1), the number of iterations fixed in advance
(a convergence test on private data would be one more query). DPLloyd (Su, Cao, Li, Bertino,
Lin and Xiao, "Differentially private k-means clustering", CODASPY 2016, and its Gaussian
variants) is the same iteration with a modern sensitivity argument.

The algorithm (both learners; `fit`). The rows are coded into [0, 1]^d on the grid 2^-12
(`data.code_rows`: clipped into a PUBLIC box, never bounds read from the data). The initial
centres are public (a seeded uniform draw in the box, `initial_centres`, or given). Each of the
`iterations` rounds, fixed in advance:

  1. assign each row to its nearest current centre (the centres are released values: public);
  2. one batch of k (d + 1) sums: for each cluster j its size (g(row) in {0, 1}) and its d
     coordinate sums (g(row) = x_i in [0, 1] for rows of cluster j, 0 otherwise): every query
     value lies in [0, 1];
  3. charge the batch (`sulq.sulq_plan(...).budget`) to the guard, THEN release it with exact
     discrete Gaussian noise of variance R (`sulq.sulq_release`);
  4. new centre j = noisy sums / max(noisy size, 1), clipped into [0, 1]^d (post-processing);
     optionally (`reseeding`, the Option DPLloydReseed) a cluster whose noisy size is below
     max(1, 3 sd) is moved next to the largest noisy cluster with public jitter (`reseed`; also
     post-processing): a centre that lost all its rows otherwise flies to a corner of the box
     (noisy sums over max(noise, 1)) and stays there.

Privacy, two countings of the same batches (privacy unit: one row added or removed):

  * **SuLQ's counting** (`SULQ`): every coordinate counts as a query that one row may move, so
    touched = the batch's length k (d + 1), and T = iterations * k (d + 1) queries in all. A
    batch of variance R then costs k (d + 1) / (2 R) in rho (on the grid: `sulq_plan`), and the
    fit iterations * k (d + 1) / (2 R).
  * **DPLloyd's counting** (`DPLLOYD`): a row belongs to exactly one cluster, so it moves
    exactly one size (by 1) and that cluster's d coordinate sums (each by at most 1): touched
    = d + 1 per iteration, the L2 sensitivity of the batch sqrt(d + 1). The same variance R
    then costs (d + 1) / (2 R) per iteration; equivalently, at the same rho the variance is k
    times smaller. The budget is split equally across the iterations (each batch the same R).

Given a rho, R = `sulq.variance_for_rho(rho, T, touched_total)`, touched_total = T (SuLQ) or
iterations * (d + 1) (DPLloyd): every batch then has the same sigma^2 on the grid, so the
batches' rhos add up to touched_total / (2 g^2 sigma^2) <= rho exactly (`KMeansPlan.rho`).
Given a variance R, the fit costs `KMeansPlan.rho`; the caller charges that (or checks it
against its budget) before `fit`, and `fit` charges each batch to the guard before its draw.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from jostle.learners.clustering.data import SCALE, Box, ClusteringData, code_rows
from jostle.privacy.measures import RhoZCDPBudget
from jostle.privacy.sulq import SulqPlan, sulq_plan, sulq_release, variance_for_rho

__all__ = ["DPLLOYD", "METHODS", "SULQ", "KMeansModel", "KMeansPlan", "assign", "cluster_sums", "fit",
           "initial_centres", "kmeans_plan", "normalised_wcss", "query_count", "reseed",
           "touched_per_iteration", "wcss"]

SULQ = "sulq"
DPLLOYD = "dplloyd"
METHODS = (SULQ, DPLLOYD)
MAX_ITERATIONS = 1000

Charge = Callable[[Any, str], Any]


# ---------------------------------------------------------------- the public query plan
def query_count(k: int, d: int, iterations: int) -> int:
    """T, the number of queries of a fit: iterations * k * (d + 1) (a size and d coordinate
    sums per cluster per iteration), from public parameters only."""
    return int(iterations) * int(k) * (int(d) + 1)


def touched_per_iteration(method: str, k: int, d: int) -> int:
    """How many of an iteration's k (d + 1) sums one row may move (each by at most 1):
    k (d + 1) by SuLQ's counting, d + 1 by DPLloyd's (its cluster's size and sums)."""
    if method not in METHODS:
        raise ValueError(f"unknown k-means method {method!r}; the methods are {', '.join(METHODS)}")
    return int(k) * (int(d) + 1) if method == SULQ else int(d) + 1


def _check_shape(k: Any, d: Any, iterations: Any) -> None:
    for name, value, top in (("k", k, 10_000), ("d", d, 10_000), ("iterations", iterations, MAX_ITERATIONS)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= top:
            raise ValueError(f"{name} must be an integer in 1..{top}, got {value!r}")


@dataclass(frozen=True)
class KMeansPlan:
    """The whole public plan of a fit: `iterations` batches, each released with `batch`.

    Attributes:
        method: SULQ or DPLLOYD (how the batches are counted).
        k, d, iterations: The public shape.
        batch: The plan of each iteration's batch of k (d + 1) sums (`sulq.SulqPlan`).
    """

    method: str
    k: int
    d: int
    iterations: int
    batch: SulqPlan

    @property
    def queries(self) -> int:
        """T = iterations * k * (d + 1)."""
        return query_count(self.k, self.d, self.iterations)

    @property
    def touched(self) -> int:
        """The sums one row may move over the whole fit."""
        return self.iterations * self.batch.touched

    @property
    def rho(self) -> Fraction:
        """What the fit costs, exactly: the sum of the batches' rhos."""
        return self.iterations * self.batch.rho

    @property
    def budget(self) -> RhoZCDPBudget:
        return RhoZCDPBudget(self.rho)

    @property
    def variance(self) -> Fraction:
        return self.batch.variance

    @property
    def sd(self) -> float:
        """The noise's standard deviation per released sum."""
        return self.batch.sd


def kmeans_plan(method: str, k: int, d: int, iterations: int, rho: Any = None, variance: Any = None) -> KMeansPlan:
    """The plan of a fit from public parameters: exactly one of `rho` (a budget: the variance is
    the smallest whose batches add up to at most rho) or `variance` (R per query, the lecture's
    calibration: the fit then costs `plan.rho`).

    Raises:
        ValueError: Bad shape, an unknown method, neither or both of rho and variance, or a
            rho / variance that is not positive and finite.
    """
    _check_shape(k, d, iterations)
    per_iteration = touched_per_iteration(method, k, d)
    length = int(k) * (int(d) + 1)
    if (rho is None) == (variance is None):
        raise ValueError("give exactly one of rho= (a zCDP budget) and variance= (R per query)")
    if variance is None:
        variance = variance_for_rho(rho, length * int(iterations), per_iteration * int(iterations))
    batch = sulq_plan(variance, length, per_iteration, integer_valued=False)
    plan = KMeansPlan(method, int(k), int(d), int(iterations), batch)
    if rho is not None:
        cap = rho.rho if isinstance(rho, RhoZCDPBudget) else Fraction(rho)
        assert plan.rho <= cap, "variance_for_rho keeps every batch's sigma^2 equal: the sum fits"
    return plan


def initial_centres(k: int, d: int, seed: int = 0) -> np.ndarray:
    """k public centres drawn uniformly in [0, 1]^d from the public `seed` (no row is read)."""
    return np.random.default_rng([int(seed), 26]).uniform(0.0, 1.0, size=(int(k), int(d)))


# ---------------------------------------------------------------- the exact sums
def assign(points: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """The index of each row's nearest centre (ties: the lowest index), vectorised."""
    points = np.asarray(points, dtype=float)
    centres = np.asarray(centres, dtype=float)
    distances = (centres * centres).sum(axis=1)[None, :] - 2.0 * points @ centres.T
    return np.argmin(distances, axis=1)


def cluster_sums(units: np.ndarray, labels: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each cluster's size and coordinate sums in grid steps, exact integers (int64)."""
    n, d = units.shape
    sizes = np.bincount(labels, minlength=k).astype(np.int64)
    flat = (labels[:, None] * d + np.arange(d)[None, :]).ravel()
    # float64 weights of integers < 2^12, partial sums < 2^53 for n < 2^41 rows: exact
    sums = np.bincount(flat, weights=units.ravel().astype(np.float64), minlength=k * d)
    return sizes, np.rint(sums).astype(np.int64).reshape(k, d)


# ---------------------------------------------------------------- the fit
@dataclass(frozen=True, eq=False)
class KMeansModel:
    """A released k-means model: public (post-processing of the noisy sums and the public box).

    Attributes:
        centres_scaled: The centres in [0, 1]^d (k x d).
        box: The public box.
        plan: The fit's public plan (method, T, variance, rho).
        sizes: The last iteration's noisy cluster sizes (released).
        learner: Who fit it (for printing).
    """

    centres_scaled: np.ndarray
    box: Box
    plan: KMeansPlan
    sizes: np.ndarray
    learner: str = ""

    @property
    def centres(self) -> np.ndarray:
        """The centres in the box's units."""
        return self.box.unscale(self.centres_scaled)

    @property
    def k(self) -> int:
        return self.plan.k

    @property
    def queries(self) -> int:
        """T, fixed before the fit: iterations * k * (d + 1)."""
        return self.plan.queries

    def predict(self, values: Any) -> np.ndarray:
        """The nearest centre's index of each row of `values` (coded against the box)."""
        return assign(code_rows(values, self.box) / SCALE, self.centres_scaled)

    def error(self, values: Any, reference: np.ndarray | None = None) -> float:
        """Its normalised within-cluster error on PUBLIC rows (`normalised_wcss`); `reference`
        centres are in the box's units."""
        points = code_rows(values, self.box) / SCALE
        scaled = None if reference is None else self.box.scale(np.asarray(reference, dtype=float))
        return normalised_wcss(points, self.centres_scaled, scaled)

    def __str__(self) -> str:
        rows = "\n".join("  " + ", ".join(f"{c}={v:.4g}" for c, v in zip(self.box.columns, centre))
                         for centre in self.centres)
        return (f"% {self.learner or self.plan.method} k-means: k={self.k}, {self.plan.iterations} iteration(s), "
                f"T={self.queries}, variance {float(self.plan.variance):.4g}, rho {float(self.plan.rho):.4g}\n{rows}")


RESEED_FACTOR = 3.0   # a cluster whose noisy size is below max(1, 3 sd) is reseeded (when asked)
RESEED_JITTER = 0.05  # the reseeded centre's public offset, in [0, 1] units


def reseed(centres: np.ndarray, sizes: np.ndarray, sd: float, seed: int, iteration: int) -> np.ndarray:
    """Move the centres of near-empty clusters (noisy size below max(1, RESEED_FACTOR sd)) next
    to the centre of the largest noisy cluster, offset by public Gaussian jitter (seeded by the
    public seed and the iteration), so that they split it on the next iteration. Post-processing
    of released sizes and centres and of public randomness: no privacy cost. Unchanged when no
    cluster, or every cluster, is near-empty."""
    dead = sizes < max(1.0, RESEED_FACTOR * sd)
    if not dead.any() or dead.all():
        return centres
    moved = centres.copy()
    rng = np.random.default_rng([int(seed), 7, int(iteration)])
    moved[dead] = np.clip(centres[int(np.argmax(sizes))] + rng.normal(0.0, RESEED_JITTER, (int(dead.sum()),
                                                                                           centres.shape[1])), 0, 1)
    return moved


def fit(data: ClusteringData, plan: KMeansPlan, noise: Any, charge: Charge, learner: str = "",
        reseeding: bool = False) -> KMeansModel:
    """Run the plan's iterations on `data` (see the module docstring).

    Args:
        data: The coded rows, the public box, k and the public initial centres.
        plan: The public plan (`kmeans_plan`), of data's k and d.
        noise: The randomness (`jostle.privacy.noise.Randomness` or a simulation source).
        charge: The guard: called with each batch's cost BEFORE its noise is drawn; it raises
            (e.g. `OverBudgetError`) to refuse, and nothing more is drawn.
        learner: A name for the model's printout.
        reseeding: After each iteration, reseed near-empty clusters (`reseed`; post-processing).
    """
    if (plan.k, plan.d) != (data.k, data.d):
        raise ValueError(f"the plan is for k={plan.k}, d={plan.d}; the data have k={data.k}, d={data.d}")
    k, d = data.k, data.d
    centres = initial_centres(k, d, data.seed) if data.initial is None else np.asarray(data.initial, dtype=float)
    points = data.units / SCALE
    sizes = np.zeros(k)
    for iteration in range(plan.iterations):
        labels = assign(points, centres)
        exact_sizes, exact_sums = cluster_sums(data.units, labels, k)
        # the sums in [0, 1] units: integers times 2^-12, exact doubles; the sizes exact integers
        sums = np.concatenate([exact_sizes.astype(np.float64), exact_sums.ravel() / SCALE])
        charge(plan.batch.budget, f"{learner or plan.method} k-means iteration {iteration + 1} of {plan.iterations}: "
                                  f"{plan.batch.queries} sums, {plan.batch.touched} touched by one row")
        noisy = sulq_release(noise, sums, plan.batch)
        sizes = noisy[:k]
        centres = np.clip(noisy[k:].reshape(k, d) / np.maximum(sizes, 1.0)[:, None], 0.0, 1.0)  # post-processing
        if reseeding:
            centres = reseed(centres, sizes, plan.sd, data.seed, iteration)  # post-processing too
    return KMeansModel(centres, data.box, plan, sizes, learner)


# ---------------------------------------------------------------- the error, on PUBLIC rows
def wcss(points: np.ndarray, centres: np.ndarray) -> float:
    """The within-cluster sum of squared distances of `points` to their nearest centre."""
    points = np.asarray(points, dtype=float)
    if not len(points):
        return 0.0
    labels = assign(points, centres)
    difference = points - np.asarray(centres, dtype=float)[labels]
    return float((difference * difference).sum())


def normalised_wcss(points: np.ndarray, centres: np.ndarray, reference: np.ndarray | None = None) -> float:
    """The within-cluster error of `centres` on PUBLIC `points` (all in [0, 1]^d), normalised so
    that tasks compare: divided by the same for the `reference` centres (e.g. the true mixture
    centres, or a non-private k-means: about 1 at best), or, without a reference, by the total
    sum of squares around the points' mean (the share of variance left unexplained, in [0, 1]
    for any centres at least as good as the mean)."""
    points = np.asarray(points, dtype=float)
    own = wcss(points, centres)
    if reference is not None:
        base = wcss(points, reference)
    else:
        base = float(((points - points.mean(axis=0)) ** 2).sum()) if len(points) else 0.0
    return own / base if base > 0 else (0.0 if own == 0 else float("inf"))
