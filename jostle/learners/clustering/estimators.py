"""scikit-learn style private k-means: `SuLQKMeans` and `DPLloydKMeans`.

    from jostle.estimators import DPLloydKMeans, PrivacyBudget, SuLQKMeans

    budget = PrivacyBudget(rho=1.0)     # a zCDP total: the noise is Gaussian, it has no pure epsilon
    km = DPLloydKMeans(3, bounds={"x": (0, 10), "y": (0, 10)}, rho=0.25, iterations=5, budget=budget)
    km.fit(frame)                       # a pandas DataFrame (the bounds' columns) or an n x d array
    km.cluster_centers_                 # k x d, in the box's units (public after release)
    km.predict(public_frame)            # nearest centre of each row
    km.error(public_frame)              # within-cluster SS / total SS on PUBLIC rows
    SuLQKMeans(3, bounds=..., variance=400)   # the lecture's calibration: R per query

The box is public: `bounds=` gives each column's (low, high), a mapping column -> pair (for a
DataFrame; its keys are the columns, in order) or a list of pairs (one per column of an array,
or of the DataFrame's columns in order). Nothing is read off the rows: a value outside the box
is clipped, a missing or non-numeric one is the box's midpoint (`data.code_rows`).

Privacy of a fit (unit: one row added or removed), with the plan fixed from public parameters
before any row is read (`kmeans.kmeans_plan`: T = iterations k (d + 1)):
  * `rho=r` (default 1.0): the variance is the smallest whose batches add up to at most r; the
    fit is charged r;
  * `variance=R` (with `rho=None`): the fit is charged what R costs (`KMeansPlan.rho`); with a
    `rho=` too, a variance too small for it is refused before anything is charged.
Then, before any noise is drawn, the fit charges its whole rho to `budget=` (a `PrivacyBudget`
with a zCDP total, shared by clones), or, given an outside accountant's `charge=` callback
instead, calls it with each iteration's rho before that iteration's draw. A refused charge
raises `BudgetExceededError` with nothing drawn and the estimator left as it was. Given
neither, the fit is charged nowhere and warns (`PrivacyBudgetWarning`) from the second such fit
in a process on. `SuLQKMeans` counts every coordinate as a query (touched = k (d + 1) per
iteration); `DPLloydKMeans` the d + 1 sums one row can touch (k times less variance).
`reseed=True` moves near-empty clusters next to the largest after each iteration
(`kmeans.reseed`, post-processing of released values).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable, ClassVar, Mapping, Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import check_is_fitted

from jostle.learners.clustering.data import SCALE, Box, ClusteringData, box_from, code_rows
from jostle.learners.clustering.kmeans import DPLLOYD, MAX_ITERATIONS, SULQ, fit, kmeans_plan, wcss
from jostle.privacy.measures import RhoZCDPBudget
from jostle.privacy.noise import Randomness
from jostle.privacy.shared_budget import PrivacyBudget, charge_rho_fit

__all__ = ["DPLloydKMeans", "SuLQKMeans"]



def _positive(value: Any, what: str) -> None:
    if not (isinstance(value, (int, float, Fraction, np.integer, np.floating)) and not isinstance(value, bool)
            and math.isfinite(float(value)) and float(value) > 0):
        raise ValueError(f"{what} must be a finite number > 0, got {value!r}")


def _check_shape(X: Any, box: Box) -> None:
    """The table's columns (public: its schema), checked before anything is charged."""
    import pandas as pd

    if isinstance(X, pd.DataFrame):
        missing = [c for c in box.columns if c not in X.columns]
        if missing:
            raise ValueError(f"X has no column(s) {', '.join(missing)} (the bounds' columns)")
        return
    shape = np.shape(X)
    if len(shape) != 2 or shape[1] != box.d:
        raise ValueError(f"X must be n x {box.d} (one column per pair of bounds), got shape {shape}")


class _PrivateKMeans(ClusterMixin, BaseEstimator):
    """What both estimators share (see the module docstring); a subclass sets `_method`."""

    _method: ClassVar[str] = ""

    def __init__(self, n_clusters: int = 8, *, bounds: Mapping[str, Any] | Sequence[Any] | None = None,
                 rho: Any = 1.0, variance: Any = None, iterations: int = 5, reseed: bool = False, init: Any = None,
                 init_seed: int = 0,
                 random_state: Any = None, noise: Any = None, charge: Callable[[Any, str], Any] | None = None,
                 budget: PrivacyBudget | None = None) -> None:
        self.n_clusters = n_clusters
        self.bounds = bounds
        self.rho = rho
        self.variance = variance
        self.iterations = iterations
        self.reseed = reseed
        self.init = init
        self.init_seed = init_seed
        self.random_state = random_state
        self.noise = noise
        self.charge = charge
        self.budget = budget

    # ------------------------------------------------------------------ public checks
    def _box(self, X: Any) -> Box:
        import pandas as pd

        if self.bounds is None:
            raise ValueError("bounds= must give each column its PUBLIC (low, high); none is read off the data")
        if isinstance(self.bounds, Mapping):
            return box_from(list(self.bounds), self.bounds)
        columns = [str(c) for c in X.columns] if isinstance(X, pd.DataFrame) else [
            f"x{i}" for i in range(np.shape(X)[1] if np.ndim(X) == 2 else 1)]
        return box_from(columns, list(self.bounds))

    def _plan(self, d: int) -> tuple[Any, RhoZCDPBudget]:
        k = self.n_clusters
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"n_clusters must be a positive integer, got {self.n_clusters!r}")
        if self.budget is not None and not isinstance(self.budget, PrivacyBudget):
            raise TypeError(f"budget must be a PrivacyBudget shared by fits (or None), got {self.budget!r}")
        if self.variance is not None:
            _positive(self.variance, "variance")
            plan = kmeans_plan(self._method, int(self.n_clusters), d, self.iterations, variance=self.variance)
            if self.rho is not None:
                _positive(self.rho, "rho")
                if plan.rho > Fraction(self.rho):
                    raise ValueError(f"variance={self.variance} costs rho {float(plan.rho):.6g}, more than rho="
                                     f"{self.rho}; give a larger variance, or rho=None to state the variance alone")
            return plan, plan.budget
        _positive(self.rho, "rho")
        plan = kmeans_plan(self._method, int(self.n_clusters), d, self.iterations, rho=self.rho)
        return plan, RhoZCDPBudget(Fraction(self.rho))  # the whole rho, as every estimator charges its budget

    def _initial(self, box: Box) -> np.ndarray | None:
        if self.init is None:
            return None
        centres = np.asarray(self.init, dtype=float)
        if centres.shape != (int(self.n_clusters), box.d) or not np.all(np.isfinite(centres)):
            raise ValueError(f"init must be {self.n_clusters} x {box.d} finite centres (public, in the box's units)")
        return centres

    # ------------------------------------------------------------------ the fit
    def fit(self, X: Any, y: Any = None) -> "_PrivateKMeans":
        """Check the arguments, plan, charge the fit's rho, then run (see the module docstring); a
        refused charge draws nothing and leaves the estimator as it was."""
        box = self._box(X)
        if isinstance(self.iterations, bool) or not isinstance(self.iterations, (int, np.integer)) or not (
                1 <= self.iterations <= MAX_ITERATIONS):
            raise ValueError(f"iterations must be an integer in 1..{MAX_ITERATIONS}, got {self.iterations!r}")
        if not isinstance(self.reseed, (bool, np.bool_)):
            raise ValueError(f"reseed must be True or False, got {self.reseed!r}")
        plan, cost = self._plan(box.d)
        initial = self._initial(box)
        if not isinstance(self.init_seed, (int, np.integer)) or isinstance(self.init_seed, bool) or self.init_seed < 0:
            raise ValueError(f"init_seed must be a non-negative integer, got {self.init_seed!r}")
        _check_shape(X, box)
        name = type(self).__name__
        what = (f"{name}.fit (k={plan.k}, {plan.iterations} iteration(s), T={plan.queries}, variance "
                f"{float(plan.variance):.6g}, rho {float(cost.rho):.6g})")
        noise = self.noise if self.noise is not None else Randomness(seed=self.random_state)
        # Before any draw: the budget is charged the whole rho (refused: nothing drawn or spent), or the
        # outside accountant's charge is called before each iteration's draw (shared_budget.charge_rho_fit).
        charge = charge_rho_fit(name, cost, what, self.budget, self.charge, stacklevel=2)
        data = ClusteringData.from_values(X, box, int(self.n_clusters), name, initial, int(self.init_seed))
        model = fit(data, plan, noise, charge, name, bool(self.reseed))
        self.model_ = model
        self.box_ = box
        self.cluster_centers_ = model.centres
        self.n_features_in_ = box.d
        self.queries_ = int(plan.queries)
        self.variance_ = float(plan.variance)
        self.rho_spent_ = float(cost.rho)
        return self

    # ------------------------------------------------------------------ using the released model
    def predict(self, X: Any) -> np.ndarray:
        """The nearest centre's index of each row (rows coded against the box)."""
        check_is_fitted(self, "model_")
        return self.model_.predict(X)

    def fit_predict(self, X: Any, y: Any = None) -> np.ndarray:
        """Fit, then predict the same rows (the labels are a function of private rows: the
        caller's, not a release)."""
        return self.fit(X).predict(X)

    def score(self, X: Any, y: Any = None) -> float:
        """Minus the within-cluster sum of squares of X, in [0, 1]^d units (scikit-learn's sign:
        higher is better)."""
        check_is_fitted(self, "model_")
        return -wcss(code_rows(X, self.box_) / SCALE, self.model_.centres_scaled)

    def error(self, X: Any, reference: Any = None) -> float:
        """The normalised within-cluster error on PUBLIC rows: divided by the total sum of
        squares, or by the same for `reference` centres (box units; e.g. a non-private k-means)."""
        check_is_fitted(self, "model_")
        return self.model_.error(X, None if reference is None else np.asarray(reference, dtype=float))


class SuLQKMeans(_PrivateKMeans):
    """SuLQ k-means (Blum, Dwork, McSherry and Nissim 2005): every coordinate a query, T =
    iterations k (d + 1) (see the module docstring and `jostle.learners.clustering.kmeans`)."""

    _method = SULQ


class DPLloydKMeans(_PrivateKMeans):
    """zCDP DPLloyd: the same iterations, one row touching d + 1 sums per iteration, so k times
    less variance at the same rho (see the module docstring)."""

    _method = DPLLOYD
