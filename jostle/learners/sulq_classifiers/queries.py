"""The SuLQ query plan of a learner: batches fixed in advance, one calibration, charged releases.

A SuLQ learner (`id3`, `perceptron`) asks its queries in batches whose lengths are fixed before
any row is read, from public parameters only (domain sizes, class count, depth or iterations).
T, the total number of queries, is their sum: never data-dependent (a convergence test on
private data would itself be a query, so the learners run a fixed number of steps).

Every query is a sum over rows of a per-row value in [0, 1] (a count, or a one-hot coordinate
of a misclassified row), released by the primitive `jostle.privacy.sulq.sulq_release` with
noise of variance R. SuLQ's own counting is used: every query of a batch counts, so one batch
of L queries is planned with touched = L (`sulq_plan(R, L)`), whatever the rows. Two
calibrations (the contract in /work/notes/api26.md):

  * **a rho budget** (an Option's part, or `rho=`): R = `variance_for_rho(rho, T)`; every batch
    uses the same R, so its discrete Gaussian has the same sigma^2 (in steps of the one grid
    2^-12 every batch uses) and the batches' rhos, L_b / (2 grid^2 sigma^2), add up to
    T / (2 grid^2 sigma^2) = `sulq_plan(R, T).rho`, at most rho, exactly;
  * **a variance R** (`variance=`, the lecture's calibration): the fit costs the sum of the
    batches' rhos, which the caller checks against its budget (`Calibration.check`) BEFORE the
    first draw, refusing the whole fit if it does not fit.

`Releases` releases the batches in order: it calls the learner's charge function (the one guard,
`jostle.privacy.subledger.option_guard`, or an outside accountant's) with the batch's rho first,
then draws. A learner asks every batch of its plan, so what it releases is exactly T queries
(`Releases.finish` checks it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Sequence

import numpy as np

from jostle.privacy.measures import RhoZCDPBudget
from jostle.privacy.subledger import OverBudgetError
from jostle.privacy.sulq import SulqPlan, sulq_plan, sulq_release, variance_for_rho

__all__ = ["MAX_QUERIES", "Calibration", "ChargeFunction", "Releases", "calibrate", "check_shape", "exact_rho"]

MAX_QUERIES = 4_000_000
"""The most queries a learner's plan may hold (a public limit on memory and time; T should be
sublinear in the rows anyway, or the noise swamps every count)."""

ChargeFunction = Callable[[Any, str], None]
"""Called as charge(RhoZCDPBudget, description) before each batch is drawn."""


def check_shape(who: str, domain_sizes: Sequence[int], n_classes: int, steps: Any, what: str,
                least: int) -> tuple[list[int], int, int]:
    """A learner's public shape, checked before anything is charged: (sizes, classes, steps).

    Raises:
        ValueError: No attribute, an empty domain, fewer than one class, or `steps` (the depth or
            the iterations, named `what`) not a whole number >= `least`.
    """
    sizes = [int(size) for size in domain_sizes]
    if not sizes or min(sizes) < 1:
        raise ValueError(f"{who} needs at least one attribute with a public domain, got sizes {sizes}")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < least:
        raise ValueError(f"the {what} must be a whole number >= {least}, got {steps!r}")
    if int(n_classes) < 1:
        raise ValueError(f"the class count must be at least 1, got {n_classes}")
    return sizes, int(n_classes), int(steps)


def exact_rho(rho: Any) -> Fraction:
    """A rho (a number, a Fraction or a `RhoZCDPBudget`) as an exact positive rational.

    Raises:
        ValueError: It is not a positive finite number.
    """
    value = rho.rho if isinstance(rho, RhoZCDPBudget) else rho
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction, np.integer, np.floating)):
        raise ValueError(f"rho must be a positive number, got {rho!r}")
    if isinstance(value, (float, np.floating)) and not math.isfinite(float(value)):
        raise ValueError(f"rho must be finite, got {rho!r}")
    value = Fraction(float(value)) if isinstance(value, (float, np.floating)) else Fraction(value)
    if value <= 0:
        raise ValueError(f"rho must be greater than 0, got {rho!r}")
    return value


@dataclass(frozen=True)
class Calibration:
    """A learner's batches with their noise: all public, fixed before any row is read.

    Attributes:
        variance: R, the variance of every query's noise (in the queries' units).
        plans: One `SulqPlan` per batch, in the order the learner asks them.
        given: "rho" (R from a budget) or "variance" (R stated).
    """

    variance: Fraction
    plans: tuple[SulqPlan, ...]
    given: str

    @property
    def queries(self) -> int:
        """T: the number of queries the learner asks in all."""
        return sum(plan.queries for plan in self.plans)

    @property
    def rho(self) -> Fraction:
        """What the whole fit costs, exactly (the sum of the batches' rhos)."""
        return sum((plan.rho for plan in self.plans), Fraction(0))

    @property
    def budget(self) -> RhoZCDPBudget:
        """The fit's cost as a typed budget."""
        return RhoZCDPBudget(self.rho)

    @property
    def sd(self) -> float:
        """The standard deviation of every query's noise."""
        return self.plans[0].sd

    def check(self, cap: Any, who: str) -> None:
        """Refuse the whole fit, before anything is charged or drawn, if it costs more than `cap`.

        Raises:
            OverBudgetError: The batches' rhos add up to more than `cap`.
        """
        limit = exact_rho(cap)
        if self.rho > limit:
            raise OverBudgetError(
                f"{who}: {self.queries} SuLQ queries of variance {float(self.variance):.6g} cost rho "
                f"{float(self.rho):.6g}, more than the budget's rho {float(limit):.6g}; nothing was charged or "
                f"drawn (a larger variance costs less: at most this budget, R >= "
                f"{float(variance_for_rho(limit, self.queries)):.6g})")


def calibrate(batches: Sequence[int], rho: Any = None, variance: Any = None) -> Calibration:
    """The calibration of a learner asking `batches` (their lengths), from a rho or a variance.

    Args:
        batches: The batch lengths, in order (each at least 1).
        rho: The fit's budget: R = `variance_for_rho(rho, T)` (the batches then cost at most rho).
        variance: R itself (the fit then costs the batches' rhos; check it with `Calibration.check`).

    Raises:
        ValueError: Neither or both given, a bad number, or more than `MAX_QUERIES` queries.
    """
    if (rho is None) == (variance is None):
        raise ValueError("give a SuLQ learner either a budget rho or a variance R, not both and not neither")
    lengths = [int(length) for length in batches]
    if not lengths or min(lengths) < 1:
        raise ValueError(f"a SuLQ plan needs batches of at least one query, got {lengths}")
    total = sum(lengths)
    if total > MAX_QUERIES:
        raise ValueError(f"the plan asks {total} SuLQ queries, more than {MAX_QUERIES}: lower the depth or the "
                         "iterations (T should be far below the number of rows, or the noise swamps every count)")
    if variance is None:
        # SuLQ's counting: every query counts (touched = T); integer_valued False for every batch
        # (one grid), so the batches' sigma^2 are equal and their rhos add up to the T-plan's.
        amount = variance_for_rho(exact_rho(rho), total)
        given = "rho"
    else:
        if isinstance(variance, bool) or not isinstance(variance, (int, float, Fraction, np.integer, np.floating)):
            raise ValueError(f"the variance R must be a positive number, got {variance!r}")
        if not math.isfinite(float(variance)) or float(variance) <= 0:
            raise ValueError(f"the variance R must be a positive finite number, got {variance!r}")
        amount = Fraction(float(variance)) if isinstance(variance, (float, np.floating)) else Fraction(variance)
        given = "variance"
    return Calibration(amount, tuple(sulq_plan(amount, length) for length in lengths), given)


class Releases:
    """Releases a calibration's batches in order, each charged before it is drawn.

    Args:
        calibration: The learner's plan.
        noise: The randomness (`Randomness` for real releases, a simulation source on public data).
        charge: charge(RhoZCDPBudget, description), called before each draw; it refuses by raising.
        who: The learner's name, for descriptions.
    """

    def __init__(self, calibration: Calibration, noise: Any, charge: ChargeFunction | None, who: str) -> None:
        self.calibration = calibration
        self.noise = noise
        self.charge = charge
        self.who = who
        self.index = 0
        self.released = 0

    def release(self, sums: np.ndarray, what: str) -> np.ndarray:
        """The next batch's noisy sums (charged first).

        Raises:
            ValueError: The learner asks more batches than planned, or a batch of another length.
        """
        if self.index >= len(self.calibration.plans):
            raise ValueError(f"{self.who} asked more batches than its plan holds")
        plan = self.calibration.plans[self.index]
        if np.size(sums) != plan.queries:
            raise ValueError(f"{self.who}: batch {self.index} was planned with {plan.queries} queries, not "
                             f"{np.size(sums)}")
        if self.charge is not None:
            self.charge(plan.budget, f"{self.who}: {what} ({plan.queries} SuLQ queries, variance "
                                     f"{float(plan.variance):.6g})")
        noisy = sulq_release(self.noise, np.asarray(sums).ravel(), plan)
        self.index += 1
        self.released += plan.queries
        return noisy

    def finish(self) -> int:
        """The number of queries released, after checking the whole plan was asked (T exactly)."""
        if self.index != len(self.calibration.plans):
            raise ValueError(f"{self.who} asked {self.index} of its {len(self.calibration.plans)} planned batches")
        return self.released
