"""scikit-learn estimators of the SuLQ classifiers: `SuLQID3Classifier`, `SuLQPerceptronClassifier`.

    budget = PrivacyBudget(rho=1.0)   # a zCDP total: SuLQ's Gaussian noise has no pure epsilon
    tree = SuLQID3Classifier(rho=0.25, domains=..., classes=..., budget=budget).fit(X, y)
    line = SuLQPerceptronClassifier(rho=0.25, iterations=10, domains=..., classes=..., budget=budget).fit(X, y)

Both are on the kit's `jostle.learnerkit.estimators.DeclaredDomainClassifier`: the features'
domains (`domains=`, categories or `NumericBins`) and the classes (`classes=`) are declared,
never read from the rows, and the fitted attributes are the kit's (`classes_`, `domains_`, ...),
plus `model_` (the `SuLQTree` / `SuLQLinear`), `queries_` (T), `variance_` (R) and
`rho_spent_` (what the fit was charged: rho, or the batches' cost for a stated variance).

Privacy of a fit (unit: one row added or removed), with the plan fixed from the declared
domains and the public parameters before any row is read (`jostle.learners.sulq_classifiers`):
  * `rho=r` (default 1.0): R = `variance_for_rho(r, T)`; the fit costs at most r;
  * `variance=R`: the fit costs the batches' rhos; with `rho=` too, a variance too small for it
    is refused before anything is charged (pass `rho=None` to state the variance alone).
After the arguments and the data are checked, and before any noise is drawn, the fit charges
its whole cost in rho to `budget=` (a `PrivacyBudget` with a zCDP total, `PrivacyBudget(rho=R)`,
or on a zCDP session's account; shared by clones, so `cross_val_score` charges one total), or,
given an outside accountant's `charge=` callback instead, calls it with each batch's rho before
that batch is drawn. A refused charge raises `BudgetExceededError` with nothing drawn and the
estimator left as it was. Given neither, the fit is charged nowhere (a budget in epsilon, such as
`default_budget()`, cannot hold a rho) and warns (`PrivacyBudgetWarning`) from the second such
fit in a process on that the spending adds up.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, ClassVar, Sequence

import numpy as np

from jostle.learnerkit.estimators import ChargeCallback, DeclaredDomainClassifier, Domains
from jostle.learners.sulq_classifiers import id3, perceptron
from jostle.learners.sulq_classifiers.queries import Calibration, calibrate, exact_rho
from jostle.privacy.measures import RhoZCDPBudget
from jostle.privacy.noise import Randomness
from jostle.privacy.shared_budget import PrivacyBudget, charge_rho_fit

__all__ = ["SuLQID3Classifier", "SuLQPerceptronClassifier"]


def _check_positive(value: Any, what: str, allow_none: bool) -> None:
    if value is None and allow_none:
        return
    if not (isinstance(value, (int, float, Fraction, np.integer, np.floating)) and not isinstance(value, bool)
            and math.isfinite(float(value)) and float(value) > 0):
        raise ValueError(f"{what} must be a finite number > 0, got {value!r}")


class _SuLQClassifier(DeclaredDomainClassifier):
    """What both SuLQ estimators share: the rho / variance calibration and the charge before the
    first draw (see the module docstring). A subclass gives `_batches` and `_learn`."""

    _model_attribute = "model_"
    _learner_name: ClassVar[str] = ""

    rho: Any
    variance: Any
    random_state: Any
    noise: Any
    charge: ChargeCallback | None
    budget: PrivacyBudget | None

    def _validate_privacy(self) -> None:
        _check_positive(self.rho, "rho", allow_none=self.variance is not None)
        _check_positive(self.variance, "variance", allow_none=True)
        if self.budget is not None and not isinstance(self.budget, PrivacyBudget):
            raise TypeError(f"budget must be a PrivacyBudget shared by fits (or None), got {self.budget!r}")

    def _batches(self, sizes: Sequence[int], n_classes: int) -> list[int]:
        """The learner's public query plan, one length per batch (each subclass gives its
        learner's: `id3.batches` or `perceptron.batches`)."""
        raise NotImplementedError(f"{type(self).__name__} must give its learner's query plan")

    def _learn(self, codes: np.ndarray, labels: np.ndarray, sizes: Sequence[int], n_classes: int,
               noise: Any, charge: Any, calibration: Calibration) -> Any:
        """Run the learner on the coded rows at `calibration`, charging each batch through
        `charge` before its draw (each subclass calls its learner)."""
        raise NotImplementedError(f"{type(self).__name__} must run its learner")

    def _fit_codes(self, codes: np.ndarray, labels: np.ndarray, charged: Fraction | None) -> None:
        """Never called: the kit's pure-epsilon fit path is replaced by `fit`, which plans and
        charges in rho; the kit declares this hook abstract, so it is closed here on purpose."""
        raise NotImplementedError("a SuLQ fit plans and charges in rho (fit)")

    def fit(self, X: Any, y: Any) -> "_SuLQClassifier":
        """Check the arguments and the data, plan, charge the fit's rho, then learn (see the
        module docstring); a refused charge draws nothing and leaves the estimator as it was."""
        self._validate_privacy()
        self._validate()
        codes, labels, fitted = self._encode_training(X, y)
        sizes = [int(size) for size in fitted["domains_"].sizes]
        n_classes = len(fitted["classes_"])
        batches = self._batches(sizes, n_classes)
        if self.variance is not None:
            calibration = calibrate(batches, variance=self.variance)
            if self.rho is not None:
                calibration.check(self.rho, f"{type(self).__name__}.fit")
            cost = calibration.budget
        else:
            calibration = calibrate(batches, rho=self.rho)
            cost = RhoZCDPBudget(exact_rho(self.rho))  # the whole rho, as every estimator charges its budget
        what = (f"{type(self).__name__}.fit ({calibration.queries} SuLQ queries, variance "
                f"{float(calibration.variance):.6g}, rho {float(cost.rho):.6g})")
        noise = self.noise if self.noise is not None else Randomness(seed=self.random_state)
        # before any draw; a refusal draws nothing and spends nothing
        charge = charge_rho_fit(type(self).__name__, cost, what, self.budget, self.charge)
        self._set_fitted(fitted)
        self.model_ = self._learn(codes, labels, sizes, n_classes, noise, charge, calibration)
        self.queries_ = int(self.model_.queries)
        self.variance_ = float(calibration.variance)
        self.rho_spent_ = float(cost.rho)
        return self

    def _predict_proba_codes(self, codes: np.ndarray) -> np.ndarray:
        return np.asarray(self.model_.predict_proba(codes))

    def to_text(self, **kwargs: Any) -> str:
        """A readable printout of the fitted model."""
        return self.model_.to_text(self.domains_.names, self.domains_.labels, [str(c) for c in self.classes_],
                                   **kwargs)


class SuLQID3Classifier(_SuLQClassifier):
    """SuLQ ID3 (Blum et al. 2005) as a scikit-learn classifier (see the module docstring and
    `jostle.learners.sulq_classifiers.id3`).

    Args:
        rho: The fit's zCDP budget (R = `variance_for_rho(rho, T)`); with `variance`, a cap.
        domains: The features' public domains (categories or `NumericBins`).
        classes: The public class list.
        depth: The public maximum depth D (T grows as the largest domain size to the D).
        stop_factor: A node is a leaf when its noisy size falls below stop_factor * sd * C * |D_a| (a: its best split).
        variance: R itself (the lecture's calibration), instead of deriving it from rho.
        random_state: Seed of the noise (None: secure randomness).
        noise: A noise source (overrides `random_state`; tests and simulations).
        charge: An outside accountant's charge(RhoZCDPBudget, description), per batch.
        budget: A `PrivacyBudget` with a zCDP total, charged the fit's rho before any draw.
    """

    _learner_name = "SuLQ ID3"

    def __init__(self, rho: Any = 1.0, *, domains: Domains | None = None, classes: Sequence[Any] | None = None,
                 depth: int = id3.DEFAULT_DEPTH, stop_factor: float = id3.DEFAULT_STOP_FACTOR,
                 variance: Any = None, random_state: Any = None, noise: Any = None,
                 charge: ChargeCallback | None = None, budget: PrivacyBudget | None = None) -> None:
        self._keep_parameters(locals())

    def _validate(self) -> None:
        id3.check_stop_factor(self.stop_factor)  # public, before anything is charged

    def _batches(self, sizes: Sequence[int], n_classes: int) -> list[int]:
        return id3.batches(sizes, n_classes, self.depth)

    def _learn(self, codes: np.ndarray, labels: np.ndarray, sizes: Sequence[int], n_classes: int,
               noise: Any, charge: Any, calibration: Calibration) -> Any:
        return id3.fit_id3(codes, labels, sizes, n_classes, noise, charge, calibration=calibration,
                           depth=self.depth, stop_factor=self.stop_factor)


class SuLQPerceptronClassifier(_SuLQClassifier):
    """The SuLQ perceptron (Blum et al. 2005) as a scikit-learn classifier (see the module
    docstring and `jostle.learners.sulq_classifiers.perceptron`).

    Args:
        rho, domains, classes, variance, random_state, noise, charge, budget: As for
            `SuLQID3Classifier`.
        iterations: The public number of perceptron updates I (T = I times the batch length).
    """

    _learner_name = "SuLQ perceptron"

    def __init__(self, rho: Any = 1.0, *, domains: Domains | None = None, classes: Sequence[Any] | None = None,
                 iterations: int = perceptron.DEFAULT_ITERATIONS, variance: Any = None, random_state: Any = None,
                 noise: Any = None, charge: ChargeCallback | None = None,
                 budget: PrivacyBudget | None = None) -> None:
        self._keep_parameters(locals())

    def _batches(self, sizes: Sequence[int], n_classes: int) -> list[int]:
        return perceptron.batches(sizes, n_classes, self.iterations)

    def _learn(self, codes: np.ndarray, labels: np.ndarray, sizes: Sequence[int], n_classes: int,
               noise: Any, charge: Any, calibration: Calibration) -> Any:
        return perceptron.fit_perceptron(codes, labels, sizes, n_classes, noise, charge, calibration=calibration,
                                         iterations=self.iterations)
