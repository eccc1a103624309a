"""Noisy measurements for the histogram algorithms, each charged to a ledger first.

Every histogram algorithm in this package draws all of its randomness through a `noise`
object with the interface of `jostle.noise.Randomness` (`laplace(scale, size)`,
`gumbel(size)`, `uniform(size)`), so the release path can plug in the exact secure sampler.
The helpers here pair each draw with a privacy charge:

* `laplace_mechanism`: values + Laplace(sensitivity / epsilon) noise. With L1 sensitivity
  Delta of the measured vector, this is epsilon-DP (Dwork, McSherry, Nissim, Smith 2006).
* `exponential_mechanism`: Gumbel-max sampling. argmax_i (epsilon * u_i / (2 Delta_u) + G_i)
  with i.i.d. standard Gumbel G_i returns i with probability proportional to
  exp(epsilon * u_i / (2 Delta_u)), which is exactly McSherry & Talwar's exponential mechanism,
  hence epsilon-DP when each score u_i has sensitivity Delta_u.

The privacy unit is one record added or removed, so a histogram (or any set of disjoint cell
groups) has L1 sensitivity 1. A `PrivacyLedger` holds the epsilon an algorithm was given; a
charge that would push the exact (rational) sum of charges past it raises
`HistogramBudgetError` *before* any noise is drawn. Sequential composition: charges add up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Protocol

import numpy as np


class NoiseSource(Protocol):
    """What the algorithms need from a source of randomness (cf. `jostle.noise.Randomness`)."""

    def laplace(self, scale: float, size: int) -> np.ndarray: ...

    def gumbel(self, size: int) -> np.ndarray: ...

    def uniform(self, size: int) -> np.ndarray: ...


class HistogramBudgetError(ValueError):
    """An algorithm tried to spend more epsilon than it was given (nothing was drawn)."""


@dataclass(frozen=True)
class Charge:
    """One noisy measurement: what, which mechanism, its epsilon and its sensitivity."""

    label: str
    mechanism: str
    epsilon: float
    sensitivity: float


@dataclass
class PrivacyLedger:
    """Charges of one algorithm run, capped at the epsilon the run was given.

    Args:
        limit: The epsilon the algorithm may spend in total.
    """

    limit: float
    charges: list[Charge] = field(default_factory=list)
    _total: Fraction = field(default=Fraction(0), init=False, repr=False)

    @property
    def spent(self) -> float:
        return float(self._total)

    def charge(self, label: str, mechanism: str, epsilon: float, sensitivity: float) -> None:
        """Record a charge, refusing it if the exact running sum would exceed the limit."""
        if not (epsilon > 0 and np.isfinite(epsilon)):
            raise HistogramBudgetError(f"{label}: epsilon must be positive and finite, got {epsilon}")
        total = self._total + Fraction(epsilon)
        if total > Fraction(self.limit):
            raise HistogramBudgetError(
                f"{label}: charging {epsilon} would spend {float(total)} > limit {self.limit}")
        self._total = total
        self.charges.append(Charge(label, mechanism, float(epsilon), float(sensitivity)))


def split_budget(epsilon: float, shares: dict[str, float]) -> dict[str, float]:
    """Split epsilon into named parts proportional to `shares` (which must sum to 1).

    The parts are floats whose exact sum is <= epsilon: the last part is epsilon minus the
    others, nudged down by ulps if rounding would make the exact sum exceed epsilon.
    """
    if not shares or any(v < 0 for v in shares.values()):
        raise ValueError("shares must be non-negative and non-empty")
    if abs(sum(shares.values()) - 1.0) > 1e-9:
        raise ValueError(f"shares must sum to 1, got {sum(shares.values())}")
    names = list(shares)
    parts = {name: epsilon * shares[name] for name in names[:-1]}
    last = epsilon - sum(parts.values())
    while Fraction(last) + sum((Fraction(v) for v in parts.values()), Fraction(0)) > Fraction(epsilon):
        last = float(np.nextafter(last, 0.0))
    parts[names[-1]] = max(last, 0.0)
    return parts


def laplace_mechanism(values: np.ndarray, sensitivity: float, epsilon: float, noise: NoiseSource,
                      ledger: PrivacyLedger, label: str) -> np.ndarray:
    """Release `values` (a vector of L1 sensitivity `sensitivity`) with Laplace noise.

    Charges `epsilon` to the ledger before drawing Laplace(sensitivity / epsilon) noise.
    """
    values = np.asarray(values, dtype=float)
    ledger.charge(label, "laplace", epsilon, sensitivity)
    if values.size == 0:
        return values.copy()
    return values + noise.laplace(sensitivity / epsilon, values.size).reshape(values.shape)


def exponential_mechanism(scores: np.ndarray, sensitivity: float, epsilon: float,
                          noise: NoiseSource, ledger: PrivacyLedger, label: str) -> int:
    """Index chosen with probability proportional to exp(epsilon * score / (2 sensitivity)).

    Implemented as Gumbel-max (see the module docstring); charges `epsilon` first.
    """
    scores = np.asarray(scores, dtype=float).ravel()
    if scores.size == 0:
        raise ValueError("the exponential mechanism needs at least one candidate")
    ledger.charge(label, "exponential", epsilon, sensitivity)
    gumbel = noise.gumbel(scores.size)
    return int(np.argmax(epsilon * scores / (2.0 * sensitivity) + gumbel))


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
