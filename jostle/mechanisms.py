"""Release mechanisms: the only ways a private value becomes public.

Each mechanism (1) validates its arguments, (2) charges the accountant, which refuses an
over-budget request, and only then (3) draws noise. Public inputs pass through unchanged and
cost nothing. The calibrations, with their sources:

  * laplace(x, eps)             Lap(l1/eps) per coordinate (Dwork, McSherry, Nissim, Smith 2006).
  * geometric(x, eps)           two-sided geometric, P(k) ~ exp(-eps |k| / l1), for integer-valued
                                x with integer sensitivity (Ghosh, Roughgarden, Sundararajan 2009).
  * gaussian(x, eps, delta)     N(0, sigma^2) with sigma from the analytic Gaussian mechanism on
                                the L2 sensitivity (Balle & Wang 2018, Thm 8); valid for any eps.
  * exponential(c, u, eps, D)   P(c) ~ exp(eps u(c) / (2D)), sampled by Gumbel-max
                                (McSherry & Talwar 2007).
  * report_noisy_max(s, eps)    argmax of s_i + Lap(2D/eps), D the largest per-score sensitivity
                                (Dwork & Roth 2014, Sec. 3.3; the 2D form holds without
                                monotonicity).
  * above_threshold(q, T, eps)  AboveThreshold: T + Lap(2D/eps), each q_i + Lap(4D/eps); the index
                                of the first query above, or none (Dwork & Roth 2014, Alg. 1).
  * randomized_response(t, c, eps)  keep each row's value with probability
                                e^eps / (e^eps + k - 1), else report one of the k - 1 others
                                uniformly (Warner 1965; k-ary form of Kairouz et al. 2016).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Protocol

import numpy as np

from jostle.budget import Accountant, Budget, Charge, DataNode, common_node
from jostle.errors import JostleRuntimeError, PrivacyError
from jostle.noise import Randomness, gaussian_sigma
from jostle.sensitivity import private_vector, refuse
from jostle.source import Span
from jostle.values import Private, PrivateMean, Table, type_name


class ReleaseContext(Protocol):
    accountant: Accountant
    randomness: Randomness


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


def _shaped(value: Any, noise: np.ndarray) -> Any:
    if isinstance(value, np.ndarray):
        return value + noise
    return float(value + noise[0]) if noise.dtype.kind == "f" else int(value + noise[0])


def laplace(ctx: ReleaseContext, value: Any, epsilon: Any, span: Span, mechanism: str = "laplace") -> Any:
    """Release `value` with Laplace noise of scale l1 / epsilon."""
    budget = _epsilon(epsilon, span)
    value = _as_private(value, span)
    if isinstance(value, PrivateMean):
        return _release_mean(ctx, value, budget, span, mechanism)
    if not isinstance(value, Private):
        return _public_passthrough(value, span, mechanism)
    _charge(ctx, budget, value.node, mechanism, value.what, span)
    scale = value.l1 / float(budget.epsilon)
    noise = ctx.randomness.laplace(scale, value.length) if scale > 0 else np.zeros(value.length)
    return _shaped(np.asarray(value.value, dtype=float) if value.is_vector else float(value.value), noise)


def _release_mean(ctx: ReleaseContext, value: PrivateMean, budget: Budget, span: Span, mechanism: str) -> float:
    """Noisy sum of (x - mid) [sens (hi-lo)/2] and noisy count [sens 1], each at eps/2."""
    _charge(ctx, budget, value.node, mechanism, value.what, span)
    half = float(budget.epsilon) / 2
    sum_scale = ((value.hi - value.lo) / 2) / half
    noisy_sum = value.total + (ctx.randomness.laplace(sum_scale, 1)[0] if sum_scale > 0 else 0.0)
    noisy_count = value.count + ctx.randomness.laplace(1 / half, 1)[0]
    midpoint = (value.lo + value.hi) / 2
    return float(np.clip(midpoint + noisy_sum / max(noisy_count, 1.0), value.lo, value.hi))


def geometric(ctx: ReleaseContext, value: Any, epsilon: Any, span: Span, mechanism: str = "geometric") -> Any:
    """Release an integer-valued `value` with two-sided geometric noise."""
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
    _charge(ctx, budget, value.node, mechanism, value.what, span)
    if value.l1 == 0:
        noise = np.zeros(value.length, dtype=np.int64)
    else:
        noise = ctx.randomness.two_sided_geometric(float(budget.epsilon) / value.l1, value.length)
    if value.is_vector:
        return np.asarray(value.value, dtype=np.int64) + noise
    return int(value.value) + int(noise[0])


def gaussian(ctx: ReleaseContext, value: Any, epsilon: Any, delta: Any, span: Span) -> Any:
    """Release `value` with Gaussian noise calibrated to its L2 sensitivity."""
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
    _charge(ctx, budget, value.node, "gaussian", value.what, span)
    sigma = gaussian_sigma(float(budget.epsilon), float(budget.delta), value.l2)
    noise = ctx.randomness.normal(sigma, value.length) if sigma > 0 else np.zeros(value.length)
    return _shaped(np.asarray(value.value, dtype=float) if value.is_vector else float(value.value), noise)


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
    """Pick a candidate with probability proportional to exp(eps * u / (2 * sensitivity))."""
    budget = _epsilon(epsilon, span)
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
    _charge(ctx, budget, node, "exponential", f"exponential over {len(candidates)} candidates", span)
    keys = float(budget.epsilon) * scores / (2 * float(sensitivity)) + ctx.randomness.gumbel(len(scores))
    return candidates[int(np.argmax(keys))]


def report_noisy_max(ctx: ReleaseContext, scores: Any, epsilon: Any, span: Span) -> int:
    """Index of the largest score after Laplace(2D/eps) noise on each."""
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
    _charge(ctx, budget, node, "report_noisy_max", f"noisy max of {len(numbers)} scores", span)
    noisy = numbers + ctx.randomness.laplace(2 * sens / float(budget.epsilon), len(numbers))
    return int(np.argmax(noisy))


def above_threshold(ctx: ReleaseContext, queries: Any, threshold: Any, epsilon: Any, span: Span) -> int | None:
    """AboveThreshold (sparse vector): index of the first query above a noisy threshold."""
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
    _charge(ctx, budget, node, "above_threshold", f"sparse vector over {len(numbers)} queries", span)
    eps = float(budget.epsilon)
    noisy_threshold = threshold + ctx.randomness.laplace(2 * sens / eps, 1)[0]
    noisy = numbers + ctx.randomness.laplace(4 * sens / eps, len(numbers))
    above = np.nonzero(noisy >= noisy_threshold)[0]
    return int(above[0]) if len(above) else None


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
    keep_probability = math.exp(float(budget.epsilon)) / (math.exp(float(budget.epsilon)) + k - 1)
    keep = ctx.randomness.bernoulli(keep_probability, len(truth))
    other = ctx.randomness.choice(k - 1, len(truth))
    other = other + (other >= truth)  # uniform over the k - 1 values other than the truth
    answers = np.where(keep, truth, other)
    return tuple(values[i] for i in answers)
