"""The noisy releases of the learning libraries (histograms, trees, metafeatures), in one place.

The histogram algorithms, the tree learners and the ChoiceMaker's metafeatures draw their noise
from a `noise` object passed in by the caller. Two kinds of source reach them:

  * an EXACT source, `jostle.privacy.noise.Randomness` (secure, or seeded for tests): every release of
    private data goes through the exact machinery here, so no output is impossible on a
    neighbouring dataset (the floating-point attack of Mironov, CCS 2012);
  * a SIMULATION source (`jostle.privacy.noise.SimulationNoise`, `jostle.learners.histograms.simulation.
    SimulationNoise`), used only on PUBLIC data, e.g. thousands of simulated runs while training
    the ChoiceMaker: here the textbook floating-point formulas are kept, because they are fast
    and the data are public. They draw exactly what the libraries drew before this module
    existed, so simulated experience stays reproducible.

`is_simulation` tells them apart by feature test: a source that says so (`simulation_only =
True`, as `jostle.privacy.noise.SimulationNoise` does) is a simulation source; otherwise a source with the
exact samplers (`discrete_laplace`, `exponential_index`, `exponential_indices`) is exact; a
source without them cannot make an exact release and is treated as a simulation source (the
light `jostle.learners.histograms.simulation.SimulationNoise`, test doubles), unless it claims
`secure = True`, which is refused (TypeError). Jostle's own release paths always pass a
`Randomness`.

The mechanisms, and why each is private on an exact source:

  * `release_vector(noise, values, l1, epsilon)`: a vector of L1 sensitivity `l1` plus
    Laplace(l1 / epsilon) noise on every entry (Dwork, McSherry, Nissim & Smith 2006). Exactly:
    the vector is snapped to the public power-of-two grid g of `jostle.privacy.grid_release.
    laplace_plan` (chosen from l1, epsilon, the length n and the dtype only), which turns
    sensitivity l1 into at most floor(l1 / g) + n grid steps (exactly l1 / g for an integer
    dtype on a grid g <= 1; the argument is in grid_release's docstring); exact discrete
    Laplace noise of scale steps / epsilon is added in grid steps (CKS 2020, Algorithm 2) and
    g * (k + Z) is released (the scale is rounded up by a relative 2^-40 at most,
    `grid_release.with_simple_scale`, which only adds privacy). P(k + Z = u) is proportional
    to exp(-eps |u - k|_1 / steps), so moving k by at most `steps` in L1 changes it by at most
    a factor e^eps, and every multiple of g stays possible on every dataset.
  * `noisy_scores(noise, scores, sensitivity, epsilon)`: each score plus its own
    Laplace(sensitivity / epsilon), for selections (noisy min / max) whose proofs need only that
    each score moves by at most `sensitivity` and gets independent Laplace noise of that scale.
    Exactly: each score is snapped to the grid of a scalar plan (steps = ceil(D / g) per score)
    and gets discrete Laplace noise of scale steps / epsilon; for integer shifts of at most
    `steps` the discrete Laplace satisfies the same density-ratio bound
    P(z) <= e^(eps |s| / steps) P(z + s) that those proofs use for the continuous one.
  * `choose_exponential(noise, scores, sensitivity, epsilon, monotone)`: index i with
    probability proportional to exp(eps u_i / (2 D)) (exp(eps u_i / D) for a monotone utility),
    McSherry & Talwar 2007. Exactly: `noise.exponential_index` samples it by rejection on the
    scores' exact binary values (CKS Algorithm 1). Candidates scored -inf are not eligible (the
    set of eligible candidates must be public). `choose_exponential_rows` does one choice per
    row (disjoint data per row: parallel composition), with `noise.exponential_indices`.

Epsilon: a Fraction is used exactly; a double is read as the next double below it, so a
release handed float(q) for a charged rational q never runs above q (`_epsilon`).

Every function here only calibrates and draws: the caller charges its ledger BEFORE calling,
and anything that can be computed from public inputs (the plan) is computed by `vector_plan` /
`score_plan` so callers can check it before charging.

What remains inexact (as in `jostle.language.mechanisms`): the private values themselves (wavelet
coefficients, bucket deviations, split utilities) are computed in floating point and their
stated sensitivities assume exact arithmetic; the release of the computed doubles is exact.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from jostle.privacy import grid_release, replay
from jostle.privacy.grid_release import LaplacePlan

__all__ = ["choose_exponential", "choose_exponential_rows", "is_simulation", "noisy_scores",
           "release_counts", "release_vector", "score_plan", "vector_plan"]

_EXACT_METHODS = ("discrete_laplace", "exponential_index", "exponential_indices")


def is_simulation(noise: Any) -> bool:
    """True for a fast floating-point source meant for PUBLIC data; False for an exact one.

    Raises:
        TypeError: for a source that claims to be secure but has no exact samplers.
    """
    if getattr(noise, "simulation_only", False):
        return True
    if all(callable(getattr(noise, name, None)) for name in _EXACT_METHODS):
        return False
    if getattr(noise, "secure", False) is True:
        raise TypeError(f"{type(noise).__name__} claims to be secure but has no exact samplers "
                        f"({', '.join(_EXACT_METHODS)}): use jostle.privacy.noise.Randomness for releases")
    return True  # no exact samplers: e.g. jostle.learners.histograms.simulation.SimulationNoise


def _epsilon(epsilon: float | Fraction) -> Fraction:
    """The epsilon a release runs at: never above the rational the caller charged.

    A Fraction (or int) is the charged value itself and is used exactly. A double is at best
    the nearest double to the charged rational q (Budget epsilons are rationals such as 1/10,
    and float(1/10) = 0.1000000000000000055 > 1/10), so running at its exact binary value could
    spend more than was charged (issue 11, hole 9). It is read as the next double below it,
    f-, which is < q whenever f is q rounded to nearest (q lies within half the gap f - f- of
    f) or rounded down (`trees.accounting.floor_float`, or any f <= q). The cost is a relative
    2^-52 of epsilon. Callers should pass the charged Fraction itself where they have it.

    Raises:
        ValueError: for an epsilon that is not positive.
    """
    if isinstance(epsilon, Fraction):
        value = epsilon
    elif isinstance(epsilon, (int, np.integer)) and not isinstance(epsilon, (bool, np.bool_)):
        value = Fraction(int(epsilon))
    else:
        number = float(epsilon)
        if not (number > 0 and math.isfinite(number)):
            raise ValueError(f"epsilon must be positive and finite, got {epsilon}")
        value = Fraction(math.nextafter(number, 0.0))
    if not value > 0:
        raise ValueError(f"epsilon must be positive, got {epsilon}")
    return value


def _positive_finite(value: float, what: str) -> float:
    value = float(value)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{what} must be positive and finite, got {value}")
    return value


# ---------------------------------------------------------------- Laplace on a vector
def vector_plan(length: int, l1: float, epsilon: float | Fraction, integer_valued: bool = False) -> LaplacePlan:
    """The public grid and discrete Laplace scale of `release_vector` (exact sources).

    Args:
        length: The number of entries released together.
        l1: The L1 sensitivity of the whole vector.
        epsilon: The budget of the release.
        integer_valued: Whether the values are integers by TYPE (an integer dtype), never by
            inspecting them (that would be a data-dependent choice).
    """
    plan = grid_release.laplace_plan(_positive_finite(l1, "the L1 sensitivity"), _epsilon(epsilon),
                                     max(int(length), 1), bool(integer_valued), True)
    return grid_release.with_simple_scale(plan)


def release_vector(noise: Any, values: Any, l1: float, epsilon: float | Fraction) -> np.ndarray:
    """`values` (L1 sensitivity `l1`) plus Laplace(l1 / epsilon) noise on each entry, as floats.

    Exact source: g * (snap(values) + Z) on the grid of `vector_plan` (see the module
    docstring); an integer dtype counts as integer-valued. Simulation source:
    values + noise.laplace(l1 / epsilon), in floating point. The caller has charged epsilon.

    Returns:
        An array of floats with the shape of `values`.
    """
    array = np.asarray(values)
    if array.size == 0:
        return array.astype(float)
    if is_simulation(noise):
        floats = array.astype(float)
        return floats + np.asarray(noise.laplace(float(l1) / float(epsilon), floats.size)).reshape(floats.shape)
    plan = vector_plan(array.size, l1, epsilon, array.dtype.kind in "iu")
    return release_planned(noise, array, plan)


def release_planned(noise: Any, values: Any, plan: LaplacePlan, norm: str = "l1") -> np.ndarray:
    """g * (snap(values) + Z), Z exact discrete Laplace of the plan's scale, shaped as `values`
    (`norm`: what the plan's sensitivity bounds, `grid_release.release_laplace`)."""
    array = np.asarray(values)
    released = grid_release.release_laplace(noise, array.ravel(), plan, norm)
    return np.asarray(released, dtype=float).reshape(array.shape)


def release_counts(noise: Any, counts: Any, l1: int, epsilon: float | Fraction) -> np.ndarray:
    """Integer counts of L1 sensitivity `l1` plus two-sided geometric noise at epsilon / l1.

    Exact source: each count plus Z with P(Z = z) proportional to exp(-(epsilon / l1) |z|), the
    exact discrete Laplace of scale l1 / epsilon on the integers (Ghosh, Roughgarden and
    Sundararajan 2009): a grid release on the unit grid with sensitivity `l1` steps, so moving
    the counts by at most l1 in L1 changes the probability of any output by at most e^epsilon,
    every integer output stays possible, and the release is recorded for the replay check.
    Simulation source: the same law from `noise.two_sided_geometric`. The caller has charged
    epsilon.

    Args:
        noise: The noise source.
        counts: Integer counts (any shape).
        l1: Their L1 sensitivity, a positive integer.
        epsilon: The budget of the release.

    Returns:
        Integer-valued floats with the shape of `counts`.
    """
    array = np.asarray(counts)
    if array.dtype.kind not in "iu":
        raise TypeError(f"release_counts releases integer counts, got dtype {array.dtype}")
    if isinstance(l1, bool) or int(l1) != l1 or l1 < 1:
        raise ValueError(f"the L1 sensitivity of counts must be a positive integer, got {l1!r}")
    if array.size == 0:
        return array.astype(float)
    if is_simulation(noise):
        draws = noise.two_sided_geometric(float(epsilon) / int(l1), array.size)
        return array.astype(float) + np.asarray(draws, dtype=float).reshape(array.shape)
    plan = LaplacePlan(Fraction(1), int(l1), Fraction(int(l1)) / _epsilon(epsilon))
    return release_planned(noise, array, plan)


# ---------------------------------------------------------------- Laplace on each score
def score_plan(sensitivity: float, epsilon: float | Fraction) -> LaplacePlan:
    """The public grid and per-score discrete Laplace scale of `noisy_scores` (a scalar plan:
    g = 2^-20 pow2(min(D / eps, D)), ceil(D / g) steps per score)."""
    return grid_release.with_simple_scale(grid_release.laplace_plan(
        _positive_finite(sensitivity, "the per-score sensitivity"), _epsilon(epsilon), 1, False, False))


def noisy_scores(noise: Any, scores: Any, sensitivity: float, epsilon: float | Fraction) -> np.ndarray:
    """Each score plus its own Laplace(sensitivity / epsilon), for a noisy-min/max selection.

    Not a release of the vector: only a selection's proof (each score moving by at most
    `sensitivity`) makes the outcome private; see the module docstring.
    """
    array = np.asarray(scores)
    if array.size == 0:
        return array.astype(float)
    if is_simulation(noise):
        floats = array.astype(float)
        return floats + np.asarray(noise.laplace(float(sensitivity) / float(epsilon), floats.size)
                                   ).reshape(floats.shape)
    return release_planned(noise, array.astype(float), score_plan(sensitivity, epsilon), "linf")


# ---------------------------------------------------------------- the exponential mechanism
def _coefficient(sensitivity: float, epsilon: float | Fraction, monotone: bool) -> Fraction:
    """eps / (2 D), or eps / D for a monotone utility, from the exact binary values."""
    d = Fraction(_positive_finite(sensitivity, "the utility's sensitivity"))
    return _epsilon(epsilon) / (d if monotone else 2 * d)


def choose_exponential(noise: Any, scores: Any, sensitivity: float, epsilon: float | Fraction,
                       monotone: bool = False) -> int:
    """An index i with probability proportional to exp(eps * scores[i] / (2 sensitivity))
    (exp(eps * scores[i] / sensitivity) when `monotone`); -inf marks ineligible candidates.

    Exact source: `noise.exponential_index` (exact rejection sampling). Simulation source:
    Gumbel-max in floating point (argmax of the scaled scores plus standard Gumbel draws).
    """
    values = np.asarray(scores, dtype=float).ravel()
    eligible = np.flatnonzero(values != -np.inf)  # NaN stays in, for _finite to refuse
    if eligible.size == 0:
        raise ValueError("the exponential mechanism needs at least one eligible candidate")
    if is_simulation(noise):
        divisor = float(sensitivity) if monotone else 2.0 * float(sensitivity)
        gumbel = np.asarray(noise.gumbel(values.size), dtype=float)
        return int(np.argmax(float(epsilon) * values / divisor + gumbel))
    coefficient = _coefficient(sensitivity, epsilon, monotone)
    index = int(eligible[noise.exponential_index(_finite(values[eligible]), coefficient)])
    return replay.released(noise, "exponential", values, index, "linf", sensitivity, None, monotone, floating=True)


def choose_exponential_exact(noise: Any, high: np.ndarray, low: np.ndarray, eligible: np.ndarray,
                             sensitivity: float, epsilon: float | Fraction) -> int:
    """`choose_exponential` on utilities known exactly as double-doubles: utility i is the exact
    rational high[i] + low[i] (e.g. from an error-free subtraction, `exact_differences`);
    `eligible` marks the candidates that may be chosen (a public choice).

    For utilities a library computes from data in floating point, the rounding of the last
    operation can move a utility between neighbours by more than its sensitivity (MWEM's
    |q(x) - q(A)| moved by 1 + 2^-53 and more, found by the replay fuzzer, issue 22): held
    exactly, they move by at most the sensitivity. Exact source: rejection sampling on the exact
    values (CKS 2020 Algorithm 1, as `Randomness.exponential_index`), the exact rationals formed
    only for the proposals and for the few candidates that may be the largest (|low| is at most
    half a unit in the last place of high, so a candidate whose high is 4 units below the
    largest high cannot be the largest). Simulation source: Gumbel-max on `high`.
    """
    high, low = np.asarray(high, dtype=float), np.asarray(low, dtype=float)
    candidates = np.flatnonzero(np.asarray(eligible, dtype=bool))
    if candidates.size == 0:
        raise ValueError("the exponential mechanism needs at least one eligible candidate")
    if is_simulation(noise):
        return choose_exponential(noise, np.where(eligible, high, -np.inf), sensitivity, epsilon)
    _finite(high[candidates])
    _finite(low[candidates])

    def exact(i: int) -> Fraction:
        return Fraction(float(high[i])) + Fraction(float(low[i]))

    top = float(high[candidates].max())
    near = candidates[high[candidates] >= top - 4 * float(np.spacing(abs(top)))]
    best = max(exact(int(i)) for i in near)
    coefficient = _coefficient(sensitivity, epsilon, False)
    chosen = None
    while chosen is None:
        for proposal in noise.integers_below(candidates.size, min(candidates.size, 64)).tolist():
            index = int(candidates[proposal])
            gamma = coefficient * (best - exact(index))
            if gamma == 0 or bool(noise.bernoulli_exp(gamma, 1)[0]):
                chosen = index
                break

    def values() -> np.ndarray:
        exact_values = np.empty(high.size, dtype=object)
        exact_values[:] = [exact(i) if eligible[i] else -np.inf for i in range(high.size)]
        return exact_values

    return replay.released(noise, "exponential", values, chosen, "linf", sensitivity, None, False)


def exact_differences(minuend: np.ndarray, subtrahend: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """|minuend - subtrahend| exactly, as a double-double (high, low): high the rounded
    difference's magnitude, low the rounding error with the same orientation (TwoSum, Knuth;
    exact for finite doubles without overflow)."""
    a = np.asarray(minuend, dtype=float)
    b = -np.asarray(subtrahend, dtype=float)
    total = a + b
    back = total - a
    error = (a - (total - back)) + (b - back)
    sign = np.where(total < 0, -1.0, 1.0)
    return np.abs(total), sign * error


def choose_exponential_rows(noise: Any, utilities: Any, sensitivity: float, epsilon: float | Fraction,
                            monotone: bool = False) -> np.ndarray:
    """`choose_exponential` on each row of a 2D array (rows: disjoint parts of the data).

    A row with no eligible candidate gets index 0 (the eligible set is public, so this reveals
    nothing). The simulation path draws one Gumbel matrix, as the libraries always did.
    """
    matrix = np.asarray(utilities, dtype=float)
    if matrix.ndim != 2:
        raise ValueError(f"utilities must be a 2D array (rows x candidates), got shape {matrix.shape}")
    if matrix.size == 0:
        return np.zeros(matrix.shape[0], dtype=np.int64)
    if is_simulation(noise):
        scale = float(epsilon) / (float(sensitivity) if monotone else 2.0 * float(sensitivity))
        gumbel = np.asarray(noise.gumbel(matrix.size), dtype=float).reshape(matrix.shape)
        keys = np.where(np.isfinite(matrix), scale * matrix + gumbel, -np.inf)
        return keys.argmax(axis=1).astype(np.int64)
    coefficient = _coefficient(sensitivity, epsilon, monotone)
    _finite(matrix[matrix != -np.inf])
    chosen = np.asarray(noise.exponential_indices(matrix, coefficient), dtype=np.int64)
    return replay.released(noise, "exponential rows", matrix, chosen, "one_row", sensitivity, None, monotone,
                           matrix.shape[1], floating=True)


def _finite(values: np.ndarray) -> np.ndarray:
    """The eligible scores, which must be finite (NaN or +inf is a bug in the utility)."""
    if not np.all(np.isfinite(values)):
        raise ValueError("exponential mechanism scores must be finite or -inf (ineligible)")
    return values
