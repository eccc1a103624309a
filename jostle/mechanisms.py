"""Release mechanisms: the only ways a private value becomes public.

Each mechanism (1) validates its arguments and works out, from public inputs only, how it will
add noise (grid, noise scale, calibration), (2) charges the accountant, which refuses an
over-budget request, and only then (3) draws noise. Public inputs pass through unchanged and
cost nothing.

All noise is exact: integers drawn by the Canonne-Kamath-Steinke samplers (CKS 2020, "The
Discrete Gaussian for Differential Privacy", Algorithms 1-3; jostle.exact_samplers) from the
secure source (or a seed, for tests). Real values are released on a public power-of-two grid:
snapped to it, given integer noise in grid steps, and scaled back (jostle.grid_release, whose
docstring has the argument that rounding to the grid turns sensitivity D into at most
ceil(D/g) steps for a scalar, floor(D/g) + n for a length-n vector in L1, D/g + sqrt(n) in L2,
and exactly D/g for integer values on a grid g <= 1; the noise is calibrated to that). So no
output is impossible on a neighbouring dataset (the floating-point Laplace weakness, Mironov
2012). The calibrations, with their sources:

  * laplace(x, eps)             discrete Laplace of scale S/eps grid steps, S the grid L1
                                sensitivity; grid 2^-20 of min(l1/eps, l1/n) (integers: of
                                l1/eps, at most 1). Laplace mechanism of Dwork, McSherry,
                                Nissim & Smith 2006 on the grid; discrete Laplace P(k) ~
                                exp(-|k| eps / S) gives ratio <= e^eps for shifts <= S.
                                A mean: sum of (x - mid) and count, each at eps/2 on its own
                                grid, then mid + sum / max(count, 1) clamped (post-processing).
  * geometric(x, eps)           exact discrete Laplace P(k) ~ exp(-eps |k| / l1) on the integers
                                (the two-sided geometric mechanism, Ghosh, Roughgarden &
                                Sundararajan 2009), with Python integers when the noise is huge.
  * gaussian(x, eps, delta)     discrete Gaussian on a grid 2^-12 of l2 (of l2 / sqrt(n) for a
                                real length-n vector) (CKS 2020). sigma is
                                certified at the exact value used: for one-axis shifts (scalars;
                                integer vectors with l1 < 2 such as histograms) by CKS Thm 7's
                                exact delta, maximised over every integer shift, with rigorous
                                tail bounds (within 1e-4 of the analytic sigma of Balle & Wang
                                2018 for eps <= 10, 0.5% at eps = 1000); for other vectors by
                                zCDP (CKS Prop. 5 and Cor. 13: 4-11% more sigma for eps in
                                0.01..10, 1% at 1000). jostle.gaussian_privacy has the proofs;
                                any eps works (no overflow).
  * exponential(c, u, eps, D)   P(c) ~ exp(eps u(c) / (2D)) (McSherry & Talwar 2007), sampled
                                exactly by rejection: a uniform candidate r is accepted with
                                probability exp(-eps (u* - u(r)) / (2D)) (CKS Alg. 1 on the
                                utilities' exact rational values), u* the largest utility.
  * report_noisy_max(s, eps)    argmax (first index on ties) of snap(s_i) + discrete Laplace of
                                scale 2S/eps, S = ceil(D/g) the grid per-score sensitivity, D the
                                largest per-score sensitivity (Dwork & Roth 2014, Sec. 3.3; the
                                2D form holds without monotonicity; the proof only uses
                                P[Z >= z + 2S] >= e^-eps P[Z >= z], true on the integers).
  * above_threshold(q, T, eps)  AboveThreshold on the grid: snap(T) + discrete Laplace(2S/eps),
                                each snap(q_i) + discrete Laplace(4S/eps); the index of the
                                first query at or above, or none (Dwork & Roth 2014, Alg. 1;
                                the proof's shifts by S and 2S are integer shifts here).
  * randomized_response(t, c, eps)  keep each row's value with probability
                                e^eps / (e^eps + k - 1), else report one of the k - 1 others
                                uniformly (Warner 1965; k-ary form of Kairouz et al. 2016),
                                sampled exactly by rejection: a uniform proposal is accepted if
                                it is the truth, else with probability exp(-eps) (CKS Alg. 1).

What remains inexact: the private values themselves are computed in floating point (sums,
means), and their declared sensitivities assume exact arithmetic; the release of a given
double is exact. Private values are finite (the magnitude guards of jostle.sensitivity), so no
mechanism tests them before charging (such a test would be a data-dependent refusal); were the
invariant ever broken, snapping raises after the charge and nothing is released. Rejection
samplers take a data-dependent number of steps; Jostle does not defend against timing side
channels.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from jostle import grid_release
from jostle.budget import Accountant, Budget, Charge, DataNode, common_node
from jostle.errors import JostleRuntimeError, PrivacyError
from jostle.noise import NoiseSource, power_of_two_at_most
from jostle.sensitivity import private_vector, refuse
from jostle.source import Span
from jostle.values import Private, PrivateMean, Table, type_name


class ReleaseContext(Protocol):
    accountant: Accountant
    randomness: NoiseSource


def _epsilon(value: Any, span: Span, name: str = "epsilon") -> Budget:
    if isinstance(value, (Private, PrivateMean)):
        raise refuse(f"{name} must be public", value, span, "budgets are public parameters: write a number")
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating, Fraction)):
        raise JostleRuntimeError(f"{name} must be a number, got a {type_name(value)}", span)
    if isinstance(value, float) and not math.isfinite(value):
        raise JostleRuntimeError(f"{name} must be finite, got {value}", span)
    budget = Budget.of(float(value) if isinstance(value, (np.floating, np.integer)) else value)
    if budget.epsilon <= 0:
        raise JostleRuntimeError(f"{name} must be greater than 0, got {value}", span,
                                 "a release with epsilon 0 would be pure noise")
    return budget


def _as_private(value: Any, span: Span) -> Any:
    """Lists holding private scalars become one private vector; other values pass."""
    if isinstance(value, tuple) and any(isinstance(v, Private) for v in value):
        return private_vector(list(value), span)
    return value


def _public_passthrough(value: Any, span: Span, what: str) -> Any:
    if isinstance(value, tuple):
        return np.asarray(value, dtype=float)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.ndarray, np.integer, np.floating)):
        raise JostleRuntimeError(f"{what} releases a number or a vector, got a {type_name(value)}", span)
    return value


def _charge(ctx: ReleaseContext, budget: Budget, node: DataNode, mechanism: str, what: str, span: Span) -> Charge:
    return ctx.accountant.charge(budget, node, mechanism, what, span)


def _shape_like(value: Private, released: np.ndarray) -> Any:
    """A vector release stays a vector; a scalar one becomes a Python number."""
    if value.is_vector:
        return released
    item = released[0]
    return float(item) if isinstance(item, (float, np.floating)) else int(item)


def laplace(ctx: ReleaseContext, value: Any, epsilon: Any, span: Span, mechanism: str = "laplace") -> Any:
    """Release `value` with discretised Laplace noise of scale l1 / epsilon (see the module docstring)."""
    budget = _epsilon(epsilon, span)
    value = _as_private(value, span)
    if isinstance(value, PrivateMean):
        return _release_mean(ctx, value, budget, span, mechanism)
    if not isinstance(value, Private):
        return _public_passthrough(value, span, mechanism)
    plan = None
    if value.l1 > 0:
        plan = grid_release.laplace_plan(value.l1, budget.epsilon, value.length, value.integer, value.is_vector)
    _charge(ctx, budget, value.node, mechanism, value.what, span)
    if plan is None:  # sensitivity 0: the value cannot depend on any one row
        return np.asarray(value.value, dtype=float) if value.is_vector else float(value.value)
    return _shape_like(value, grid_release.release_laplace(ctx.randomness, value.value, plan))


def _release_mean(ctx: ReleaseContext, value: PrivateMean, budget: Budget, span: Span, mechanism: str) -> float:
    """Noisy sum of (x - mid) [sens (hi-lo)/2] and noisy count [sens 1], each at eps/2, both on
    their grids; then the post-processing mid + noisy_sum / max(noisy_count, 1), clamped."""
    half = budget.epsilon / 2
    half_range = (value.hi - value.lo) / 2
    sum_plan = grid_release.laplace_plan(half_range, half, 1, False, False) if half_range > 0 else None
    count_plan = grid_release.laplace_plan(1.0, half, 1, True, False)
    _charge(ctx, budget, value.node, mechanism, value.what, span)
    noisy_sum = float(grid_release.release_laplace(ctx.randomness, value.total, sum_plan)[0]) if sum_plan \
        else float(value.total)
    noisy_count = float(grid_release.release_laplace(ctx.randomness, value.count, count_plan)[0])
    midpoint = (value.lo + value.hi) / 2
    return float(np.clip(midpoint + noisy_sum / max(noisy_count, 1.0), value.lo, value.hi))


def geometric(ctx: ReleaseContext, value: Any, epsilon: Any, span: Span, mechanism: str = "geometric") -> Any:
    """Release an integer-valued `value` with exact two-sided geometric (discrete Laplace) noise."""
    budget = _epsilon(epsilon, span)
    value = _as_private(value, span)
    if isinstance(value, PrivateMean):
        raise JostleRuntimeError("geometric releases integer values; a mean is not one", span,
                                 "use laplace(m, eps) for a mean")
    if not isinstance(value, Private):
        return _public_passthrough(value, span, "geometric")
    if not value.integer or not float(value.l1).is_integer():
        raise JostleRuntimeError(
            f"geometric needs an integer-valued private value, and {value.what} is not one", span,
            "use laplace(x, eps) for real values",
        )
    sensitivity = int(float(value.l1))
    _charge(ctx, budget, value.node, mechanism, value.what, span)
    units = grid_release.snap(value.value, Fraction(1))  # exact integers (they are on the grid 1)
    if sensitivity > 0:
        # P(k) ~ exp(-|k| eps / l1): shifting by at most l1 changes each probability by <= e^eps.
        units = grid_release.add(units, ctx.randomness.discrete_laplace(sensitivity / budget.epsilon, units.size))
    if value.is_vector:
        return units
    return int(units[0])


def gaussian(ctx: ReleaseContext, value: Any, epsilon: Any, delta: Any, span: Span) -> Any:
    """Release `value` with discrete Gaussian noise certified for (epsilon, delta) on its L2 sensitivity."""
    budget = _epsilon(epsilon, span)
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 < delta < 1:
        raise JostleRuntimeError(f"delta must be a number in (0, 1), got {delta!r}", span)
    budget = Budget.of(budget.epsilon, delta)
    value = _as_private(value, span)
    if isinstance(value, PrivateMean):
        raise JostleRuntimeError("gaussian does not release a mean", span,
                                 "release sum and count, or use laplace(m, eps)")
    if not isinstance(value, Private):
        return _public_passthrough(value, span, "gaussian")
    plan = None
    if value.l2 > 0:  # the calibration depends on public parameters only: done before charging
        plan = grid_release.gaussian_plan(value.l1, value.l2, budget.epsilon, budget.delta, value.length,
                                          value.integer, value.is_vector)
    _charge(ctx, budget, value.node, "gaussian", value.what, span)
    if plan is None:
        return np.asarray(value.value, dtype=float) if value.is_vector else float(value.value)
    return _shape_like(value, grid_release.release_gaussian(ctx.randomness, value.value, plan))


def _scores(values: list[Any], span: Span, what: str) -> tuple[np.ndarray, float, DataNode | None]:
    """Scores as floats, the largest per-score sensitivity, and the data they depend on."""
    numbers, sensitivity, nodes = [], 0.0, []
    for item in values:
        if isinstance(item, Private):
            if item.is_vector:
                raise JostleRuntimeError(f"{what} needs one number per candidate, got a vector", span)
            numbers.append(float(item.value))
            sensitivity = max(sensitivity, item.l1)
            nodes.append(item.node)
        elif isinstance(item, PrivateMean):
            raise JostleRuntimeError(f"{what} cannot score with a private mean", span)
        elif isinstance(item, (int, float, np.integer, np.floating)) and not isinstance(item, bool):
            numbers.append(float(item))
        else:
            raise JostleRuntimeError(f"{what} scores must be numbers, got a {type_name(item)}", span)
    return np.asarray(numbers, dtype=float), sensitivity, common_node(nodes) if nodes else None


def exponential(ctx: ReleaseContext, candidates: Any, utilities: list[Any], epsilon: Any,
                sensitivity: Any, span: Span) -> Any:
    """Pick a candidate with probability proportional to exp(eps * u / (2 * sensitivity)), exactly."""
    budget = _epsilon(epsilon, span)
    if isinstance(sensitivity, (Private, PrivateMean)):
        raise refuse("the sensitivity of exponential must be public", sensitivity, span,
                     "a sensitivity is a public bound on how much one row can move the utility: write a number")
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, (int, float)) or not sensitivity > 0:
        raise JostleRuntimeError("exponential needs a positive public sensitivity", span)
    scores, tracked, node = _scores(utilities, span, "exponential")
    if tracked > sensitivity * (1 + 1e-12):
        raise PrivacyError(
            f"the utility's tracked sensitivity is {tracked:g}, larger than the declared {sensitivity:g}",
            span, f"declare sensitivity={tracked:g} (or more)",
        )
    if node is None:  # every utility is public: the best candidate is public too
        return candidates[int(np.argmax(scores))]
    coefficient = budget.epsilon / (2 * Fraction(float(sensitivity)))  # P(c) ~ exp(eps u(c) / (2D))
    _charge(ctx, budget, node, "exponential", f"exponential over {len(candidates)} candidates", span)
    return candidates[ctx.randomness.exponential_index(scores, coefficient)]


@lru_cache(maxsize=1024)
def _score_grid(sensitivity: float, epsilon: Fraction) -> tuple[Fraction, int]:
    """The public grid for scores of per-score sensitivity D (2^-20 of min(2D/eps, D)) and
    the per-score sensitivity in grid steps, ceil(D / g) (see jostle.grid_release)."""
    d = Fraction(float(sensitivity))
    grid = power_of_two_at_most(min(2 * d / epsilon, d)) / 2**grid_release.LAPLACE_BITS
    steps = d / grid
    return grid, -((-steps.numerator) // steps.denominator)


def _first_max(values: np.ndarray) -> int:
    if values.dtype == object:
        return max(range(len(values)), key=lambda i: values[i])  # max() keeps the first
    return int(np.argmax(values))


def report_noisy_max(ctx: ReleaseContext, scores: Any, epsilon: Any, span: Span) -> int:
    """Index of the largest score after discrete Laplace(2D/eps) noise on each, on a grid."""
    budget = _epsilon(epsilon, span)
    if isinstance(scores, Private) and scores.is_vector:
        numbers, sens, node = np.asarray(scores.value, dtype=float), scores.l1, scores.node
    elif isinstance(scores, (tuple, np.ndarray)):
        numbers, sens, node = _scores(list(scores), span, "report_noisy_max")
    else:
        raise JostleRuntimeError(f"report_noisy_max needs a list of scores, got a {type_name(scores)}", span)
    if len(numbers) == 0:
        raise JostleRuntimeError("report_noisy_max needs at least one score", span)
    if node is None:
        return int(np.argmax(numbers))
    plan = _score_grid(sens, budget.epsilon) if sens > 0 else None
    _charge(ctx, budget, node, "report_noisy_max", f"noisy max of {len(numbers)} scores", span)
    if plan is None:
        return int(np.argmax(numbers))
    grid, steps = plan
    units = grid_release.snap(numbers, grid)
    noisy = grid_release.add(units, ctx.randomness.discrete_laplace(2 * steps / budget.epsilon, units.size))
    return _first_max(noisy)


def above_threshold(ctx: ReleaseContext, queries: Any, threshold: Any, epsilon: Any, span: Span) -> int | None:
    """AboveThreshold (sparse vector) on a grid: index of the first query above a noisy threshold."""
    budget = _epsilon(epsilon, span)
    if isinstance(threshold, (Private, PrivateMean)):
        raise refuse("the threshold of above_threshold must be public", threshold, span,
                     "use a public threshold, or release the value first and use the released number")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise JostleRuntimeError("the threshold must be a number", span)
    if isinstance(queries, Private) and queries.is_vector:
        numbers, sens, node = np.asarray(queries.value, dtype=float), queries.l1, queries.node
    elif isinstance(queries, (tuple, np.ndarray)):
        numbers, sens, node = _scores(list(queries), span, "above_threshold")
    else:
        raise JostleRuntimeError("above_threshold needs a list of queries", span)
    if node is None:
        above = np.nonzero(numbers >= threshold)[0]
        return int(above[0]) if len(above) else None
    if not math.isfinite(threshold):
        raise JostleRuntimeError("the threshold must be finite", span)
    plan = _score_grid(sens, budget.epsilon) if sens > 0 else None
    _charge(ctx, budget, node, "above_threshold", f"sparse vector over {len(numbers)} queries", span)
    if plan is None:
        above = np.nonzero(numbers >= threshold)[0]
        return int(above[0]) if len(above) else None
    grid, steps = plan
    eps = budget.epsilon
    noisy_threshold = int(grid_release.add(grid_release.snap(threshold, grid),
                                           ctx.randomness.discrete_laplace(2 * steps / eps, 1))[0])
    units = grid_release.snap(numbers, grid)
    noisy = grid_release.add(units, ctx.randomness.discrete_laplace(4 * steps / eps, units.size))
    for index, value in enumerate(noisy.tolist()):
        if value >= noisy_threshold:
            return index
    return None


def release_default(ctx: ReleaseContext, value: Any, budget: Budget, span: Span) -> Any:
    """The `{{ expr }}` release: geometric for integer values, Laplace otherwise."""
    value = _as_private(value, span)
    epsilon = budget.epsilon
    if isinstance(value, Private) and value.integer and float(value.l1).is_integer():
        return geometric(ctx, value, epsilon, span, mechanism="{{ }} geometric")
    if isinstance(value, (Private, PrivateMean)):
        return laplace(ctx, value, epsilon, span, mechanism="{{ }} laplace")
    return value


def randomized_response(ctx: ReleaseContext, table: Any, column: Any, epsilon: Any, span: Span) -> tuple:
    """k-ary randomized response on a categorical column of a table with a public row count.

    Each response satisfies eps-local DP for its row's value. The list of responses has one
    entry per row, so it also reveals the number of rows; under Jostle's add/remove privacy unit
    that count is private, so randomized response is only allowed on a table bound with
    `public_rows=True` (the number of respondents is public, as in a survey) and not on a table
    filtered by where (its size would reveal how many rows matched).
    """
    budget = _epsilon(epsilon, span)
    if not isinstance(table, Table):
        raise JostleRuntimeError(f"randomized_response needs a table, got a {type_name(table)}", span)
    if not isinstance(column, str) or column not in table.schema:
        raise JostleRuntimeError(f"table '{table.name}' has no column {column!r}", span)
    spec = table.schema[column]
    from jostle.schema import Categorical

    if not isinstance(spec, Categorical):
        raise JostleRuntimeError(f"randomized_response needs a categorical column; '{column}' is numeric", span,
                                 f"bin it first: t.bin(\"{column}\", [edges...])")
    values = list(spec.values)
    if not table.private:
        return tuple(table.frame[column].tolist())
    if not getattr(table, "public_rows", False):
        raise PrivacyError(
            "randomized_response releases one response per row, which reveals the number of rows",
            span,
            "bind the table with public_rows=True when its row count is public (e.g. the number "
            "of survey respondents), and apply it to the whole table",
        )
    _charge(ctx, budget, table.node, "randomized_response", f"randomized_response({table.name}, '{column}')", span)
    k = len(values)
    index = {v: i for i, v in enumerate(values)}
    truth = np.fromiter((index[v] for v in table.frame[column].tolist()), dtype=np.int64, count=len(table.frame))
    if k == 1:
        return tuple(values[i] for i in truth)
    answers = _randomized_responses(ctx.randomness, truth, k, budget.epsilon)
    return tuple(values[i] for i in answers)


def _randomized_responses(noise: NoiseSource, truth: np.ndarray, k: int, epsilon: Fraction) -> np.ndarray:
    """Each row answers its true index with probability e^eps / (e^eps + k - 1) and each other
    index with probability 1 / (e^eps + k - 1), exactly: a uniform proposal among the k values
    is accepted if it is the truth, else with probability exp(-eps) (weights 1 and e^-eps)."""
    answers = np.empty(truth.size, dtype=np.int64)
    pending = np.arange(truth.size)
    while pending.size:
        proposal = noise.integers_below(k, pending.size)
        accept = proposal == truth[pending]
        others = np.nonzero(~accept)[0]
        if others.size:
            accept[others] = noise.bernoulli_exp(epsilon, others.size)
        answers[pending[accept]] = proposal[accept]
        pending = pending[~accept]
    return answers
