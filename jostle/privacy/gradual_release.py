"""Gradual release: noise reduction with correlated discrete Laplace noise, on an integer grid.

Used where a release's error depends on the data (a mean: a noisy sum over a noisy count), so
that no budget can be chosen in advance for a target error: the value is revealed at a public,
increasing schedule of budgets eps_1 < eps_2 < ... < eps_K = cap, each revealed value less noisy
than the one before, and the revealing stops at the first step whose error, estimated from the
released values alone, meets the target. This is the noise-reduction idea of Koufogiannis, Han
and Pappas (2015, "Optimality of the Laplace mechanism in differential privacy"; "Gradual release
of sensitive data under differential privacy", J. Privacy and Confidentiality 2016) and of
Ligett, Neel, Roth, Waggoner and Wu (NeurIPS 2017, "Accuracy First: Selecting a Differential
Privacy Level for Accuracy-Constrained ERM"), built here for the discrete Laplace law on
Jostle's integer grids (jostle.privacy.grid_release) and drawn with the exact samplers.

**The chain.** For grid steps u (the exact value snapped to the grid), sensitivity S steps and
a_k = exp(-eps_k / S), draw the least noisy value first, y_K = u + DLap(a_K), then for k = K..2
y_{k-1} = y_k + Z_k, with Z_k independent of everything else:

    Z_k = 0 with probability w0,  a discrete Laplace of parameter a_{k-1} otherwise,
    w0 = (a_k / a_{k-1}) ((1 - a_{k-1}) / (1 - a_k))^2.

Why y_{k-1} has the law DLap(a_{k-1}) around u: the characteristic function of DLap(a) is
phi_a(t) = (1 - a)^2 / D_a(t), D_a(t) = 1 - 2a cos t + a^2. With a = a_k < a' = a_{k-1},
D_a = (a / a') D_a' + (1 - a a')(1 - a / a') (expand both sides), so

    phi_a' / phi_a = w0 + w1 phi_a',  w0 = (a/a') (1-a')^2/(1-a)^2,  w1 = (1 - a a')(1 - a/a')/(1-a)^2,

and w0 + w1 = 1 (multiply by a'(1 - a)^2: a(1-a')^2 + (1 - a a')(a' - a) = a'(1 - a)^2), w0, w1 > 0.
Hence phi_a' = phi_a (w0 + w1 phi_a'): DLap(a') is DLap(a) plus the independent mixture Z.
`tests/test_accuracy_first_gradual.py` checks it by exact convolution of the pmfs and by a
seeded chi-square test of the sampled chain.

**Sampling w0 exactly.** The schedule is geometric with a rational ratio j/n (eps_{k-1} =
(j/n) eps_k), so with x = eps_k / S and b = exp(-x / n): a_k / a_{k-1} = b^(n-j) and
(1 - a_{k-1}) / (1 - a_k) = (1 + b + ... + b^(j-1)) / (1 + b + ... + b^(n-1)) = P(I < j) for I
on {0, ..., n-1} with weights b^i. So Z_k = 0 exactly when a Bernoulli(exp(-(n-j) x / n)) and two
independent draws I1, I2 < j all succeed; I is drawn exactly by rejection (a uniform proposal i
accepted with probability b^i when x <= 1; a geometric proposal of ratio b, refused past n - 1,
otherwise), every Bernoulli(exp(-gamma)) by the CKS samplers of the session's randomness.

**Privacy (say exactly this, never more).** Each y_k alone is the discrete Laplace mechanism at
eps_k on the grid (sensitivity S steps, scale S / eps_k): eps_k-DP. The revealed prefix
y_1, ..., y_k is y_k plus noise drawn independently of the data (the Z's), a post-processing
of y_k, so its privacy loss is that of y_k alone, at most eps_k. The caller charges eps_1 before
anything is drawn and eps_k - eps_{k-1} before revealing y_k (in zCDP, the rho increments
eps_k^2/2 - eps_{k-1}^2/2), so the charges of a prefix add up to eps_k exactly. Because where
the revealing stops depends on the released values, this is an EX-POST guarantee (Ligett et al.
2017, Def. 2.1 and Thm 3.2): the realised loss of the outcome is bounded by what was charged;
the a-priori worst case over all outcomes is the cap eps_K, which is checked to fit the
accountant before the first charge. Anything computed from the revealed values (the error
estimate, the stopping rule, the ledger's number of entries) is post-processing.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from jostle.privacy import replay
from jostle.privacy.grid_release import add
from jostle.privacy.noise import NoiseSource

__all__ = ["RATIO", "STEPS", "Chain", "draw_chain", "schedule", "stay_probability"]

# The public schedule: eps_{k-1} = RATIO * eps_k, STEPS values ending at the cap
# (eps_1 = cap * (2/3)^11, about 1.2% of the cap; each step at most 1.5 times the one before).
RATIO = Fraction(2, 3)
STEPS = 12


def schedule(cap: Fraction, steps: int = STEPS, ratio: Fraction = RATIO) -> list[Fraction]:
    """The public, increasing budgets eps_1 < ... < eps_K = cap (exact rationals)."""
    if cap <= 0 or steps < 1 or not 0 < ratio < 1:
        raise ValueError("a schedule needs a positive cap, at least one step and a ratio in (0, 1)")
    return [Fraction(cap) * ratio ** (steps - 1 - i) for i in range(steps)]


def stay_probability(epsilon_next: Fraction, epsilon_previous: Fraction, sensitivity: int) -> float:
    """w0 = (a/a') ((1 - a') / (1 - a))^2 for a = exp(-epsilon_next / S), a' = exp(-epsilon_previous / S),
    as a double (for tests and documentation: the sampler never uses it)."""
    import math

    a = math.exp(-float(epsilon_next) / sensitivity)
    a_previous = math.exp(-float(epsilon_previous) / sensitivity)
    return (a / a_previous) * ((1 - a_previous) / (1 - a)) ** 2


def _weighted_index_below(noise: NoiseSource, x_over_n: Fraction, n: int, size: int) -> np.ndarray:
    """`size` exact draws of I on {0, ..., n-1} with P(I = i) proportional to exp(-i x / n)."""
    out = np.zeros(size, dtype=np.int64)
    pending = np.arange(size)
    while pending.size:
        if x_over_n * (n - 1) <= 1:
            # A uniform proposal i, accepted with probability exp(-i x / n) >= exp(-1).
            proposal = noise.integers_below(n, pending.size)
            accept = np.ones(pending.size, dtype=bool)
            for i in range(1, n):
                chosen = np.nonzero(proposal == i)[0]
                if chosen.size:
                    accept[chosen] = noise.bernoulli_exp(i * x_over_n, chosen.size)
        else:
            # A geometric proposal: successes of Bernoulli(exp(-x/n)) before the first failure,
            # refused when it reaches n (acceptance 1 - exp(-x (n-1)/n) * ... >= 1 - e^-1).
            proposal = np.zeros(pending.size, dtype=np.int64)
            alive = np.arange(pending.size)
            while alive.size:
                success = noise.bernoulli_exp(x_over_n, alive.size)
                alive = alive[success]
                proposal[alive] += 1
                alive = alive[proposal[alive] < n]
            accept = proposal < n
        out[pending[accept]] = proposal[accept]
        pending = pending[~accept]
    return out


def _chain_step(noise: NoiseSource, sensitivity: int, epsilon_next: Fraction, ratio: Fraction,
                size: int) -> np.ndarray:
    """`size` independent draws of Z (see the module docstring): 0 with probability w0, else a
    discrete Laplace of scale S / epsilon_previous, epsilon_previous = ratio * epsilon_next."""
    j, n = ratio.numerator, ratio.denominator
    x_over_n = epsilon_next / sensitivity / n
    stay = noise.bernoulli_exp((n - j) * x_over_n, size)
    for _ in range(2):
        stay &= _weighted_index_below(noise, x_over_n, n, size) < j
    z = np.zeros(size, dtype=np.int64)
    moved = np.nonzero(~stay)[0]
    if moved.size:
        draws = noise.discrete_laplace(Fraction(sensitivity) / (ratio * epsilon_next), moved.size)
        if draws.dtype == object:
            z = z.astype(object)
        z[moved] = draws
    return z


@dataclass
class Chain:
    """The drawn chain: `values[k]` is y_{k+1} in grid steps (index 0 the noisiest)."""

    epsilons: list[Fraction]
    values: list[np.ndarray]
    grid: Fraction
    sensitivity: int

    def reveal(self, noise: NoiseSource, step: int, units: np.ndarray, point: str) -> np.ndarray:
        """y_step (1-based), through the replay hook (its claim: an L1 move of at most S grid
        steps, the same for every step). Call only after charging the step."""
        return replay.released(noise, point, units, self.values[step - 1], "l1", self.sensitivity, self.grid)


def draw_chain(noise: NoiseSource, units: Any, sensitivity: int, epsilons: list[Fraction], grid: Fraction,
               ratio: Fraction = RATIO) -> Chain:
    """Draw y_K = u + DLap(scale S / eps_K), then y_{k-1} = y_k + Z_k down to y_1.

    Args:
        noise: The session's randomness (exact samplers).
        units: The exact value snapped to the grid (grid_release.snap), a 1-d integer array.
        sensitivity: S, the value's L1 sensitivity in grid steps (> 0).
        epsilons: The schedule (`schedule`): eps_{k-1} = ratio * eps_k for every k.
        grid: The grid (public; for the replay claim).

    Returns:
        The chain. Nothing is revealed: the caller charges, then calls `Chain.reveal`.
    """
    units = np.atleast_1d(np.asarray(units))
    if sensitivity <= 0:
        raise ValueError("a gradual release needs a positive sensitivity")
    for before, after in zip(epsilons, epsilons[1:]):
        if before != ratio * after:
            raise ValueError("the schedule must be geometric with the chain's ratio")
    last = add(units, noise.discrete_laplace(Fraction(sensitivity) / epsilons[-1], units.size))
    values = [last]
    for epsilon_next in reversed(epsilons[1:]):
        values.append(add(values[-1], _chain_step(noise, sensitivity, epsilon_next, ratio, units.size)))
    values.reverse()
    return Chain(list(epsilons), values, grid, sensitivity)
