"""Empirical privacy auditing: high-confidence lower bounds on the epsilon a release spends.

A mechanism M is (eps, delta)-DP when, for all neighbouring datasets D, D' (one row added or
removed) and every set S of outputs, P[M(D) in S] <= e^eps P[M(D') in S] + delta. Sampling cannot
prove this, but it can refute it: if for some S the two probabilities are far enough apart, then
with high confidence no epsilon below log((P[M(D) in S] - delta) / P[M(D') in S]) holds. The
auditor here computes such a lower bound, so a test can fail when it exceeds the claimed epsilon.

Method, in two phases as in StatDP (Ding, Wang, Wang, Zhang, Kifer; CCS 2018) and DP-Sniper
(Bichsel, Steffen, Bogunovic, Vechev; IEEE S&P 2021):

1. *Selection.* Draw `selection_samples` outputs of M(D) and of M(D'). An `EventFamily` proposes
   candidate events from them (threshold sets for numbers, orthants for vectors, unions of
   categories ordered by their estimated likelihood ratio, thresholds of a likelihood ratio
   learnt by a classifier). Each candidate is scored in both directions (D over D' and D'
   over D) by the bound it is forecast to give in the test, and the best `finalists` are kept.
2. *Test.* Draw `samples` FRESH outputs of each. For every finalist, a one-sided Clopper-Pearson
   lower bound on the numerator probability and upper bound on the denominator probability
   (`scipy.stats.beta`) give log((lower - delta) / upper). All 2 x finalists bounds share the
   family-wise error `alpha` (Bonferroni), and the events were fixed before the fresh samples
   were drawn, so P[reported bound > true epsilon] <= alpha.

A mechanism under audit is a *batched runner* `run(dataset, count, seed) -> outputs`: `count`
independent outputs of M(dataset), reproducible from `seed`. Outputs are numbers (a 1-d array),
vectors (an array of shape (count, d)) or anything hashable (categorical: the exponential
mechanism's pick, the index above a threshold, a tree's structure as a string). The helpers below
build runners from the public APIs: `release_runner` calls a `jostle.language.mechanisms` function on a
private value made by the language (optionally drawing all `count` samples in one call), and
`session_runner` runs a whole Jostle program in `jostle.Session`s. `AuditCase` bundles a runner
with its adversarial neighbours and claim, so auditing a new component takes a few lines; see
docs/auditing.md. The module needs scipy, which the `test` extras install.

This package holds the auditor and its confidence bounds; the events are in `jostle.audit.events`
and the runners in `jostle.audit.runners`, and every public name is exported here.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from jostle.diagnostics.source import BUILTIN_SPAN
from jostle.audit.events import (  # noqa: F401 (re-exported)
    TAIL_LEVELS, Categories, Event, EventFamily, LikelihoodRatio, Orthants, Projection, Thresholds, as_outputs,
    coordinate, default_events,
)
from jostle.audit.runners import (  # noqa: F401 (re-exported)
    AuditContext, BatchRun, private_value, release_runner, replicate, seeds_from, session_runner,
)

ALPHA = 1e-6
"""Default family-wise probability that a reported lower bound exceeds the true epsilon."""

SPAN = BUILTIN_SPAN
"""The source span to pass to `jostle.language.mechanisms` functions called from Python."""



# ---------------------------------------------------------------- confidence bounds
def clopper_pearson_lower(successes: Any, trials: int, alpha: float) -> Any:
    """One-sided Clopper-Pearson lower bound on a binomial proportion (confidence 1 - alpha).

    Exact: P[bound > p] <= alpha for every true p (Clopper & Pearson 1934). Vectorised over
    `successes`; the bound is 0 when there are none.
    """
    k = np.asarray(successes, dtype=float)
    with np.errstate(invalid="ignore"):
        bound = stats.beta.ppf(alpha, np.maximum(k, 1), trials - k + 1)
    return np.where(k > 0, bound, 0.0)


def clopper_pearson_upper(successes: Any, trials: int, alpha: float) -> Any:
    """One-sided Clopper-Pearson upper bound on a binomial proportion (confidence 1 - alpha)."""
    k = np.asarray(successes, dtype=float)
    with np.errstate(invalid="ignore"):
        bound = stats.beta.isf(alpha, k + 1, np.maximum(trials - k, 1))
    return np.where(k < trials, bound, 1.0)


def epsilon_bound(numerator_hits: Any, numerator_trials: int, denominator_hits: Any,
                  denominator_trials: int, delta: float, alpha: float) -> Any:
    """log((lower(P_num) - delta) / upper(P_den)), each bound at confidence 1 - alpha.

    -inf where the lower bound does not exceed delta (the event proves nothing).
    """
    lower = clopper_pearson_lower(numerator_hits, numerator_trials, alpha) - delta
    upper = clopper_pearson_upper(denominator_hits, denominator_trials, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(lower > 0, np.log(np.maximum(lower, 1e-300) / upper), -np.inf)


# ---------------------------------------------------------------- the auditor
@dataclass(frozen=True)
class AuditResult:
    """What an audit found.

    Attributes:
        epsilon_lower_bound: With probability >= 1 - alpha the mechanism's epsilon is at least
            this (-inf when no event gave evidence).
        claimed_epsilon, claimed_delta: The claim under audit.
        event: The finalist event that gave the bound.
        direction: "D/D'" (P[M(D) in S] over P[M(D') in S]) or "D'/D".
        counts: Test-phase hits of the event in the numerator and denominator samples.
        samples: Test-phase outputs per dataset; selection_samples likewise for selection.
        alpha: The family-wise error of the bound.
        finalists: How many events were tested on the fresh samples.
    """

    epsilon_lower_bound: float
    claimed_epsilon: float
    claimed_delta: float
    event: str
    direction: str
    counts: tuple[int, int]
    samples: int
    selection_samples: int
    alpha: float
    finalists: int

    @property
    def estimate(self) -> float:
        """The point estimate log((P_num - delta) / P_den) of the chosen event on the test samples."""
        numerator = self.counts[0] / self.samples - self.claimed_delta
        denominator = self.counts[1] / self.samples
        if numerator <= 0:
            return -math.inf
        return math.log(numerator / denominator) if denominator > 0 else math.inf

    @property
    def violated(self) -> bool:
        """True when the audit refutes the claim: the lower bound exceeds the claimed epsilon."""
        return self.epsilon_lower_bound > self.claimed_epsilon

    def __str__(self) -> str:
        return (f"epsilon >= {self.epsilon_lower_bound:.4f} (claimed {self.claimed_epsilon:g}"
                f"{f', delta {self.claimed_delta:g}' if self.claimed_delta else ''}) at confidence "
                f"1 - {self.alpha:g}; event {self.event} [{self.direction}], hits {self.counts[0]} vs "
                f"{self.counts[1]} of {self.samples} per side (point estimate {self.estimate:.4f})")


def audit(run: BatchRun, d: Any, d_prime: Any, claimed_epsilon: float, claimed_delta: float = 0.0,
          samples: int = 50_000, selection_samples: int | None = None, events: Any = None,
          alpha: float = ALPHA, finalists: int = 3, seed: int = 0) -> AuditResult:
    """Lower-bound the epsilon that `run` realises on the neighbours `d`, `d_prime`.

    Args:
        run: The batched runner of the mechanism under audit.
        d, d_prime: Neighbouring datasets (whatever `run` takes), chosen adversarially.
        claimed_epsilon, claimed_delta: The guarantee the mechanism claims; delta enters the
            bound as log((lower(P) - delta) / upper(P')).
        samples: Fresh outputs per dataset for the test phase.
        selection_samples: Outputs per dataset for choosing events (default samples // 4).
        events: An EventFamily; by default chosen from the kind of output (default_events).
        alpha: Family-wise probability that the bound exceeds the true epsilon.
        finalists: How many selected events are tested (Bonferroni over 2 bounds each).
        seed: Makes the audit reproducible; the four sample batches get independent seeds.

    Returns:
        The AuditResult of the finalist with the largest bound.
    """
    selection_samples = selection_samples or max(samples // 4, 1)
    seed_a, seed_b, seed_c, seed_d = seeds_from(seed, 4)
    first = as_outputs(run(d, selection_samples, seed_a))
    second = as_outputs(run(d_prime, selection_samples, seed_b))
    family = events if events is not None else default_events(first)
    candidates = family.candidates(first, second)
    if not candidates:
        raise ValueError("the event family proposed no events")
    split = alpha / (2 * finalists)
    hits_a = np.array([np.count_nonzero(e.contains(first)) for e in candidates])
    hits_b = np.array([np.count_nonzero(e.contains(second)) for e in candidates])
    # Score each event by the bound it is forecast to give in the test: its smoothed selection
    # frequencies, (hits + 1) / (n + 2), as counts out of the test's sample size, at the test's
    # confidence. Rare events, whose ratio is noisy and whose bound is wide, score low; the
    # forecast only picks the finalists, the fresh test samples decide the bound.
    forecast_a = np.round((hits_a + 1) / (selection_samples + 2) * samples)
    forecast_b = np.round((hits_b + 1) / (selection_samples + 2) * samples)
    forward = epsilon_bound(forecast_a, samples, forecast_b, samples, claimed_delta, split)
    backward = epsilon_bound(forecast_b, samples, forecast_a, samples, claimed_delta, split)
    scored = [(float(s), i, "D/D'") for i, s in enumerate(forward)]
    scored += [(float(s), i, "D'/D") for i, s in enumerate(backward)]
    scored.sort(key=lambda item: (-item[0], item[1], item[2]))
    chosen = scored[:finalists]

    test_a = as_outputs(run(d, samples, seed_c))
    test_b = as_outputs(run(d_prime, samples, seed_d))
    best: AuditResult | None = None
    for _, index, direction in chosen:
        event = candidates[index]
        in_a, in_b = int(np.count_nonzero(event.contains(test_a))), int(np.count_nonzero(event.contains(test_b)))
        numerator, denominator = (in_a, in_b) if direction == "D/D'" else (in_b, in_a)
        bound = float(epsilon_bound(numerator, samples, denominator, samples, claimed_delta, split))
        result = AuditResult(bound, float(claimed_epsilon), float(claimed_delta), event.name, direction,
                             (numerator, denominator), samples, selection_samples, alpha, len(chosen))
        if best is None or bound > best.epsilon_lower_bound:
            best = result
    assert best is not None
    return best


# ---------------------------------------------------------------- a registry of audits
@dataclass(frozen=True)
class AuditCase:
    """One audit: a component, its adversarial neighbours and its claim.

    Attributes:
        name: Test id.
        run: The component as a batched runner.
        d, d_prime: The neighbouring datasets (a row added, chosen to be a worst case).
        epsilon, delta: The claimed guarantee.
        samples: Test-phase samples per dataset at scale 1 (selection uses a quarter).
        events: An EventFamily, or None for the default for the output kind.
        expect_violation: A negative control: the audit must refute the claim.
        at_least: Power check: the bound must reach this (the neighbours and events realise
            most of the claim), or None.
        seed: The audit's seed; by default derived from the name, so cases draw different noise.
    """

    name: str
    run: BatchRun
    d: Any
    d_prime: Any
    epsilon: float
    delta: float = 0.0
    samples: int = 100_000
    events: Any = None
    expect_violation: bool = False
    at_least: float | None = None
    seed: int | None = None

    def audit(self, scale: float = 1.0) -> AuditResult:
        """Run the audit with `scale` times the samples (thorough mode uses more)."""
        return audit(self.run, self.d, self.d_prime, self.epsilon, self.delta,
                     samples=int(self.samples * scale), events=self.events,
                     seed=self.seed if self.seed is not None else zlib.crc32(self.name.encode()))


__all__ = [
    "ALPHA", "SPAN", "AuditCase", "AuditContext", "AuditResult", "BatchRun", "Categories", "Event",
    "EventFamily", "LikelihoodRatio", "Orthants", "Projection", "Thresholds", "audit", "clopper_pearson_lower",
    "clopper_pearson_upper", "coordinate", "default_events", "epsilon_bound", "private_value",
    "release_runner", "replicate", "session_runner",
]
