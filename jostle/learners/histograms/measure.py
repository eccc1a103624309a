"""Noisy measurements for the histogram algorithms, each charged to a ledger first.

Every histogram algorithm in this package draws all of its randomness through a `noise`
object: `jostle.privacy.noise.Randomness` for releases, or a simulation source on public data (see
`jostle.privacy.safe_noise`, which makes every draw and holds the privacy argument). The helpers here
pair each draw with a privacy charge:

* `laplace_mechanism`: values + Laplace(sensitivity / epsilon) noise. With L1 sensitivity
  Delta of the measured vector, this is epsilon-DP (Dwork, McSherry, Nissim, Smith 2006). On an
  exact source the vector is released on a public power-of-two grid with exact discrete
  Laplace noise (`safe_noise.release_vector`), so no output is impossible on a neighbouring
  histogram; the values may be real (wavelet coefficients, weighted totals).
* `exponential_mechanism`: index i with probability proportional to
  exp(epsilon * u_i / (2 Delta_u)), McSherry & Talwar's exponential mechanism, epsilon-DP when
  each score u_i has sensitivity Delta_u. Sampled exactly on an exact source
  (`safe_noise.choose_exponential`), by Gumbel-max in simulation.

The privacy unit is one record added or removed, so a histogram (or any set of disjoint cell
groups) has L1 sensitivity 1. A `PrivacyLedger` holds the epsilon an algorithm was given (on the
one sub-ledger, `jostle.privacy.subledger.Subledger`); a charge that would push the exact
(rational) sum of charges past it raises `OverBudgetError` (also named `HistogramBudgetError`)
*before* any noise is drawn. Sequential composition: charges add up.
A ledger made with `keep_releases=True` also keeps every noisy vector with its public grid
(for audits and tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol

import numpy as np

from jostle.privacy import safe_noise
from jostle.privacy.rounding import split_budget  # noqa: F401 (re-exported: the algorithms split with it)
from jostle.privacy.subledger import HistogramBudgetError, OverBudgetError, Subledger  # noqa: F401 (re-exported)


class HistogramNoise(Protocol):
    """What the algorithms need from a source of randomness: `jostle.privacy.noise.Randomness` (exact:
    discrete_laplace, exponential_index) or a simulation source (laplace, gumbel), see
    `jostle.privacy.safe_noise.is_simulation`."""

    def laplace(self, scale: float, size: int) -> np.ndarray: ...

    def uniform(self, size: int) -> np.ndarray: ...


@dataclass(frozen=True)
class Charge:
    """One noisy measurement: what, which mechanism, its epsilon and its sensitivity."""

    label: str
    mechanism: str
    epsilon: float
    sensitivity: float


@dataclass(frozen=True)
class Release:
    """One noisy vector an algorithm drew (kept when the ledger asks for it).

    Attributes:
        label: The charge's label.
        grid: The public grid every value lies on (an exact source), or None (simulation).
        values: The noisy values.
    """

    label: str
    grid: Fraction | None
    values: np.ndarray


class PrivacyLedger:
    """Charges of one algorithm run, capped at the epsilon the run was given: a `Subledger`
    (exact, refused before added) that also keeps each charge's mechanism and sensitivity.

    Args:
        limit: The epsilon the algorithm may spend in total.
        keep_releases: Keep every noisy vector in `releases` (audits and tests).
    """

    def __init__(self, limit: float, keep_releases: bool = False) -> None:
        self.limit = limit
        self.keep_releases = keep_releases
        self.ledger = Subledger(limit, name="the algorithm's epsilon")
        self.charges: list[Charge] = []
        self.releases: list[Release] = []

    @property
    def spent(self) -> float:
        return float(self.ledger.spent_epsilon)

    def record(self, label: str, grid: Fraction | None, values: np.ndarray) -> None:
        """Keep a noisy vector, if this ledger keeps them."""
        if self.keep_releases:
            self.releases.append(Release(label, grid, np.array(values, dtype=float, copy=True)))

    def charge(self, label: str, mechanism: str, epsilon: float, sensitivity: float) -> None:
        """Record a charge, refusing it (`OverBudgetError`, nothing drawn) if its epsilon is not
        positive and finite or the exact running sum would exceed the limit."""
        if not (epsilon > 0 and np.isfinite(epsilon)):
            raise OverBudgetError(f"{label}: epsilon must be positive and finite, got {epsilon}")
        self.ledger.charge(epsilon, label)
        self.charges.append(Charge(label, mechanism, float(epsilon), float(sensitivity)))


def laplace_mechanism(values: np.ndarray, sensitivity: float, epsilon: float, noise: HistogramNoise,
                      ledger: PrivacyLedger, label: str) -> np.ndarray:
    """Release `values` (a vector of L1 sensitivity `sensitivity`) with Laplace noise.

    The grid is planned from public inputs (length, sensitivity, epsilon), then `epsilon` is
    charged to the ledger, then the noise is drawn (`safe_noise.release_vector`: exact
    discrete Laplace(sensitivity / epsilon) on that grid, or float Laplace in simulation).
    """
    values = np.asarray(values, dtype=float)
    exact = values.size > 0 and not safe_noise.is_simulation(noise)
    plan = None
    if exact and epsilon > 0 and np.isfinite(epsilon):  # else the charge below refuses epsilon
        plan = safe_noise.vector_plan(values.size, sensitivity, epsilon)
    ledger.charge(label, "laplace", epsilon, sensitivity)
    if values.size == 0:
        return values.copy()
    if plan is None:
        noisy = safe_noise.release_vector(noise, values, sensitivity, epsilon)
    else:
        noisy = safe_noise.release_planned(noise, values, plan)
    ledger.record(label, plan.grid if plan else None, noisy)
    return noisy


def exponential_mechanism(scores: np.ndarray, sensitivity: float, epsilon: float,
                          noise: HistogramNoise, ledger: PrivacyLedger, label: str) -> int:
    """Index chosen with probability proportional to exp(epsilon * score / (2 sensitivity)).

    Scores of -inf are ineligible (which ones must be public). Charges `epsilon` first, then
    samples with `safe_noise.choose_exponential` (exact on an exact source).
    """
    scores = np.asarray(scores, dtype=float).ravel()
    if not np.any(scores > -np.inf):
        raise ValueError("the exponential mechanism needs at least one candidate")
    safe_noise.is_simulation(noise)  # an unusable source is refused before charging
    ledger.charge(label, "exponential", epsilon, sensitivity)
    return safe_noise.choose_exponential(noise, scores, sensitivity, epsilon)


def exponential_mechanism_exact(high: np.ndarray, low: np.ndarray, eligible: np.ndarray, sensitivity: float,
                                epsilon: float, noise: HistogramNoise, ledger: PrivacyLedger, label: str) -> int:
    """`exponential_mechanism` on utilities held exactly as double-doubles high + low
    (`safe_noise.exact_differences`; `eligible` is a public choice): charges `epsilon` first,
    then samples with `safe_noise.choose_exponential_exact`."""
    if not np.any(eligible):
        raise ValueError("the exponential mechanism needs at least one candidate")
    safe_noise.is_simulation(noise)  # an unusable source is refused before charging
    ledger.charge(label, "exponential", epsilon, sensitivity)
    return safe_noise.choose_exponential_exact(noise, high, low, eligible, sensitivity, epsilon)


def check_inputs(x: np.ndarray, epsilon: float, ledger: PrivacyLedger | None) -> tuple[np.ndarray, PrivacyLedger]:
    """Validate a histogram and epsilon; return x as floats and the ledger to charge."""
    x = np.asarray(x, dtype=float)
    if x.ndim not in (1, 2) or x.size == 0:
        raise ValueError(f"a histogram must be a non-empty 1D or 2D array, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("histogram counts must be finite")
    if not (epsilon > 0 and np.isfinite(epsilon)):
        raise ValueError(f"epsilon must be positive and finite, got {epsilon}")
    return x, (ledger if ledger is not None else PrivacyLedger(float(epsilon)))
