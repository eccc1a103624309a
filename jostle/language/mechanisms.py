"""Release mechanisms: the only ways a private value becomes public.

Each mechanism (1) validates its arguments and works out, from public inputs only, how it will
add noise (grid, noise scale, calibration), (2) charges the accountant, which refuses an
over-budget request, and only then (3) draws noise. Public inputs pass through unchanged and
cost nothing.

All noise is exact: integers drawn by the Canonne-Kamath-Steinke samplers (CKS 2020, "The
Discrete Gaussian for Differential Privacy", Algorithms 1-3; jostle.privacy.exact_samplers) from the
secure source (or a seed, for tests). Real values are released on a public power-of-two grid:
snapped to it, given integer noise in grid steps, and scaled back (jostle.privacy.grid_release, whose
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
                                0.01..10, 1% at 1000). jostle.privacy.gaussian_privacy has the proofs;
                                any eps works (no overflow).
  * gaussian(x, rho(R))         discrete Gaussian with sigma^2 >= Delta_2^2 / (2R) grid steps^2:
                                R-zCDP (CKS 2020 Thm 4, Prop. 5); also the `{{ }}` release of a
                                zCDP program (grid_release.gaussian_rho_plan).
  * exponential(c, u, eps, D)   P(c) ~ exp(eps u(c) / (2D)) (McSherry & Talwar 2007), or
                                exp(eps u(c) / D) when the utilities are monotone; sampled
                                exactly by rejection: a uniform candidate r is accepted with
                                probability exp(-eps (u* - u(r)) / (2D)) (CKS Alg. 1 on the
                                utilities' exact rational values), u* the largest utility.
  * report_noisy_max(s, eps)    argmax (first index on ties) of snap(s_i) + discrete Laplace of
                                scale 2S/eps, S = ceil(D/g) the grid per-score sensitivity, D the
                                largest per-score sensitivity (Dwork & Roth 2014, Sec. 3.3; the
                                2D form holds without monotonicity; the proof only uses
                                P[Z >= z + 2S] >= e^-eps P[Z >= z], true on the integers).
                                Scale S/eps when the scores are MONOTONE (every score moves in
                                the same direction when a row is added: counts, histograms;
                                `Private.direction`, tracked by jostle.language.sensitivity): Dwork &
                                Roth 2014, Claim 3.9, whose proof uses only c_j <= c'_j <=
                                c_j + D for all j (or the reverse) and P[Z >= z + S] >=
                                e^-eps P[Z >= z]; with first-index tie-breaking the winner's
                                threshold argument holds for ties too, and snapping to the grid
                                is non-decreasing, so it keeps the shifts monotone.
  * above_threshold(q, T, eps)  AboveThreshold on the grid: snap(T) + discrete Laplace(2S/eps),
                                each snap(q_i) + discrete Laplace(4S/eps); the index of the
                                first query at or above, or none (Dwork & Roth 2014, Alg. 1;
                                the proof's shifts by S and 2S are integer shifts here).
  * randomized_response(t, c, eps)  keep each row's value with probability
                                e^eps / (e^eps + k - 1), else report one of the k - 1 others
                                uniformly (Warner 1965; k-ary form of Kairouz et al. 2016),
                                sampled exactly by rejection: a uniform proposal is accepted if
                                it is the truth, else with probability exp(-eps) (CKS Alg. 1).
  * sulq(x, R)                  x + discrete Gaussian of a STATED variance R per coordinate (SuLQ,
                                Blum et al. 2005), charged rho = shift^2 / (2 sigma^2) for x's L2
                                move in grid steps (grid_release.gaussian_variance_plan).

Floating point: private values are held exactly (ints and Fractions, jostle.language.sensitivity) and
their sensitivities are rounded up, so the sensitivity a mechanism calibrates to bounds the
value it snaps; only the released number is rounded to a double, after the noise
(post-processing, saturating to inf rather than raising). A tracked sensitivity of exactly 0
means the value is the same on all neighbours (it is exact), so it is released as it is. Public
inputs (scores, utilities, thresholds, sensitivities) are validated, finiteness included,
BEFORE anything is charged. Private values are exact and finite, so no mechanism tests them
(such a test would be a data-dependent refusal). Every calibration uses the charged epsilon,
the exact rational of the `Budget`, never a double rounded from it. Rejection samplers take a
data-dependent number of steps; Jostle does not defend against timing side channels.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from jostle.privacy import grid_release, replay
from jostle.privacy.error_bounds import NoiseLaw, law_of_plan
from jostle.privacy.accounting import epsilon_within_rho
from jostle.privacy.budget import Accountant, AnyBudget, Budget, Charge, DataNode, RhoZCDPBudget
from jostle.diagnostics.errors import JostleRuntimeError, MeasureMismatch, PrivacyError
from jostle.privacy.noise import NoiseSource, power_of_two_at_most
from jostle.language.sensitivity import Exact, as_floats, exact_number, exact_value, private_vector, refuse, up
from jostle.diagnostics.source import Span
from jostle.language.noisy_values import EstimatedError, NoLaw, Noise, attach
from jostle.language.selection_scores import scores as scores_of
from jostle.language.values import Private, PrivateMean, Table, type_name


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


def _with_law(entry: Charge, released: Any, plan: Any, value: Private, norm: str, mechanism: str,
              budget: Any) -> Any:
    """The released value carrying its public noise law, which the ledger entry records too
    (computed from the plan, the sensitivity and the budget only: jostle.privacy.error_bounds)."""
    if plan is None:  # exact sensitivity 0: no noise
        return attach(released, Noise(()))
    sensitivity = value.l1 if norm == "l1" else value.l2
    if plan is not None and getattr(plan, "one_axis_shift", None) is not None:
        norm = "one_axis"
    try:  # never fails after the charge: a law beyond the doubles is stated as missing instead
        law: Any = law_of_plan(plan, sensitivity, norm, mechanism, budget, getattr(value, "clipping", None))
    except (ValueError, OverflowError, ZeroDivisionError):
        return attach(released, NoLaw("its noise law is beyond floating point (a grid or scale outside the doubles)"))
    entry.details["law"] = law
    return attach(released, law)


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
        plan = grid_release.release_plan("laplace", budget, value.l1, value.l2, value.length, value.integer,
                                         value.is_vector)
    entry = _charge(ctx, budget, value.node, mechanism, value.what, span)
    if plan is None:  # exact sensitivity 0: the exact value is the same on every neighbour
        return _with_law(entry, as_floats(exact_value(value.value)), None, value, "l1", mechanism, budget)
    released = _shape_like(value, grid_release.release_laplace(ctx.randomness, value.value, plan))
    return _with_law(entry, released, plan, value, "l1", mechanism, budget)


def _release_mean(ctx: ReleaseContext, value: PrivateMean, budget: Budget, span: Span, mechanism: str) -> float:
    """Noisy sum of (x - mid) and noisy count [sens 1], each at eps/2, both on their grids; then
    the post-processing mid + noisy_sum / max(noisy_count, 1), clamped.

    The sum's sensitivity is the largest |x - mid| for x in [lo, hi], max(hi - mid, mid - lo),
    computed exactly from the double mid that jostle.language.tables subtracted and rounded up (the
    rounding of (lo + hi) / 2 can make one side exceed (hi - lo) / 2); the sum itself is exact.
    """
    half = budget.epsilon / 2
    midpoint = (value.lo + value.hi) / 2  # the double jostle.language.tables.mean subtracted
    exact_mid = Fraction(midpoint)
    # One individual adds or removes at most `stability` rows of the table (jostle.language.entities):
    # each moves the sum by at most half_range and the count by 1, so both scale by it.
    stability = value.stability
    half_range = up(stability * max(Fraction(value.hi) - exact_mid, exact_mid - Fraction(value.lo)))
    sum_plan = grid_release.laplace_plan(half_range, half, 1, False, False) if half_range > 0 else None
    count_plan = grid_release.laplace_plan(float(stability), half, 1, True, False)
    entry = _charge(ctx, budget, value.node, mechanism, value.what, span)
    noisy_sum = float(grid_release.release_laplace(ctx.randomness, value.total, sum_plan)[0]) if sum_plan \
        else as_floats(value.total)
    noisy_count = float(grid_release.release_laplace(ctx.randomness, value.count, count_plan)[0])
    released = float(np.clip(midpoint + noisy_sum / max(noisy_count, 1.0), value.lo, value.hi))
    return attach(released, _mean_error(entry, sum_plan, count_plan, half_range, stability, noisy_sum, noisy_count,
                                        mechanism, budget, value))


def _mean_error(entry: Charge, sum_plan: Any, count_plan: Any, half_range: Any, stability: Any, noisy_sum: float,
                noisy_count: float, mechanism: str, budget: Budget, value: PrivateMean) -> EstimatedError | NoLaw:
    """The mean's error, estimated from its two RELEASED numbers only (public): the linearisation
    of mid + S / C at the released S and C, noise(S) / C - S noise(C) / C^2. Not a bound: the
    error of a ratio depends on the true count, which is private."""
    note = f"the mean is clamped to [{value.lo:g}, {value.hi:g}] and each value to that range; " \
           "the bias this causes is not in the interval"
    half = Budget(budget.epsilon / 2)
    try:  # never fails after the charge
        count_law = law_of_plan(count_plan, float(stability), "l1", mechanism + " (count)", half)
        laws = {"count": count_law}  # the ledger entry records both laws
        count = max(noisy_count, 1.0)
        terms: list[tuple[float, NoiseLaw]] = [(-noisy_sum / (count * count), count_law)]
        if sum_plan is not None:
            laws["sum"] = law_of_plan(sum_plan, float(half_range), "l1", mechanism + " (sum)", half)
            terms.append((1.0 / count, laws["sum"]))
    except (ValueError, OverflowError, ZeroDivisionError):
        return NoLaw("its noise law is beyond floating point (a grid or scale outside the doubles)")
    entry.details["law"] = laws
    return EstimatedError("an estimate: a mean's error depends on the data (its count); this is the "
                          "delta-method half-width at the released sum and count", tuple(terms), clipping=note)


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
    plan = grid_release.release_plan("geometric", budget, sensitivity, value.l2, value.length, True,
                                     value.is_vector) if sensitivity > 0 else None
    entry = _charge(ctx, budget, value.node, mechanism, value.what, span)
    units = grid_release.snap(value.value, Fraction(1))  # exact integers (they are on the grid 1)
    if plan is not None:
        # P(k) ~ exp(-|k| eps / l1): shifting by at most l1 changes each probability by <= e^eps.
        noisy = grid_release.add(units, ctx.randomness.discrete_laplace(plan.scale, units.size))
        units = replay.released(ctx.randomness, "geometric", units, noisy, "l1", sensitivity, Fraction(1))
    return _with_law(entry, units if value.is_vector else int(units[0]), plan, value, "l1", mechanism, budget)


def gaussian(ctx: ReleaseContext, value: Any, epsilon: Any, delta: Any, span: Span) -> Any:
    """Release `value` with discrete Gaussian noise certified for (epsilon, delta) on its L2
    sensitivity; `gaussian(x, rho(R))` (epsilon a RhoZCDPBudget, delta None) releases it at rho."""
    if isinstance(epsilon, RhoZCDPBudget):
        if delta is not None:
            raise JostleRuntimeError("gaussian(x, rho(R)) takes no delta", span,
                                     "a rho states the whole guarantee: write gaussian(x, rho(R))")
        return gaussian_rho(ctx, value, epsilon, span)
    if delta is None:
        raise JostleRuntimeError("gaussian needs a delta, or a rho", span,
                                 "write gaussian(x, eps, delta), or gaussian(x, rho(R)) in a zCDP program")
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
        plan = grid_release.release_plan("gaussian", budget, value.l1, value.l2, value.length, value.integer,
                                         value.is_vector)
    entry = _charge(ctx, budget, value.node, "gaussian", value.what, span)
    if plan is None:  # exact sensitivity 0: the exact value is the same on every neighbour
        return _with_law(entry, as_floats(exact_value(value.value)), None, value, "l2", "gaussian", budget)
    released = _shape_like(value, grid_release.release_gaussian(ctx.randomness, value.value, plan))
    return _with_law(entry, released, plan, value, "l2", "gaussian", budget)


def gaussian_rho(ctx: ReleaseContext, value: Any, rho: RhoZCDPBudget, span: Span,
                 mechanism: str = "gaussian") -> Any:
    """Release `value` with discrete Gaussian noise of sigma^2 >= Delta_2^2 / (2 rho) in grid
    steps: rho-zCDP (CKS 2020 Thm 4 and Prop. 5; jostle.privacy.grid_release.gaussian_rho_plan).
    A mean is released as its pure-epsilon form at the largest epsilon with epsilon^2/2 <= rho
    (Bun and Steinke 2016, Prop. 1.4), which the accountant charges as epsilon^2/2."""
    if rho.rho <= 0:
        raise JostleRuntimeError(f"rho must be greater than 0, got {float(rho.rho)}", span)
    if not ctx.accountant.accounting.is_zcdp:
        # Checked here, before anything (the mean's pure path below would otherwise spend the
        # rho as a pure epsilon in a DP program: sound, but a silent mix of measures).
        raise MeasureMismatch(
            f"a zCDP release ({rho}) cannot be charged in a program that accounts in (epsilon, delta)", span,
            "state the program's total in zCDP: `budget E, D using zcdp` or `budget rho(R)`; nothing was spent")
    value = _as_private(value, span)
    if isinstance(value, PrivateMean):
        epsilon = epsilon_within_rho(rho.rho)
        if epsilon <= 0:  # public parameters only: refused before anything is charged
            raise JostleRuntimeError(
                f"{rho} is too small to release a mean: the largest epsilon with epsilon^2/2 <= rho is 0 "
                "at 12 digits", span, "give the mean a larger rho (or release its sum and count); nothing was spent")
        return _release_mean(ctx, value, Budget(epsilon), span, mechanism)
    if not isinstance(value, Private):
        return _public_passthrough(value, span, mechanism)
    plan = None
    if value.l2 > 0:  # public parameters only: planned before the charge
        plan = grid_release.release_plan("gaussian_rho", rho, value.l1, value.l2, value.length, value.integer,
                                         value.is_vector)
    entry = _charge(ctx, rho, value.node, mechanism, value.what, span)
    if plan is None:
        return _with_law(entry, as_floats(exact_value(value.value)), None, value, "l2", mechanism, rho)
    return _with_law(entry, _gaussian_shape(value, plan, grid_release.release_gaussian(ctx.randomness, value.value,
                                                                                       plan)),
                     plan, value, "l2", mechanism, rho)


def _gaussian_shape(value: Private, plan: Any, released: np.ndarray) -> Any:
    """An integer scalar released on the grid 1 stays an int; otherwise `_shape_like`."""
    if value.integer and not value.is_vector and plan.grid == 1:
        return int(released[0])
    return _shape_like(value, released)


def sulq(ctx: ReleaseContext, value: Any, variance: Fraction, span: Span) -> Any:
    """Release `value` with discrete Gaussian noise of a stated variance per coordinate (SuLQ's
    N(0, R)), charged the rho that variance costs for the value's L2 sensitivity: the grid, the
    L2 move in grid steps and the rho come from public parameters only
    (grid_release.gaussian_variance_plan), then the rho is charged, then the noise drawn."""
    if not ctx.accountant.accounting.is_zcdp:
        raise MeasureMismatch(
            "sulq adds Gaussian noise, which has no pure epsilon: it is charged in rho, in a zCDP program", span,
            "state the program's total in zCDP: `budget E, D using zcdp` or `budget rho(R)`; nothing was spent")
    value = _as_private(value, span)
    if isinstance(value, PrivateMean):
        raise JostleRuntimeError("sulq releases a sum or a count, not a mean", span,
                                 "release the sum and the count (two SuLQ queries) and divide them")
    if not isinstance(value, Private):
        return _public_passthrough(value, span, "sulq")
    if value.l2 <= 0:
        return as_floats(exact_value(value.value))
    plan, rho = grid_release.gaussian_variance_plan(variance, value.l1, value.l2, value.length, value.integer,
                                                    value.is_vector)
    entry = _charge(ctx, RhoZCDPBudget(rho), value.node, "sulq", value.what, span)
    released = _gaussian_shape(value, plan, grid_release.release_gaussian(ctx.randomness, value.value, plan))
    return _with_law(entry, released, plan, value, "l2", "sulq", RhoZCDPBudget(rho))


def exponential(ctx: ReleaseContext, candidates: Any, utilities: list[Any], epsilon: Any,
                sensitivity: Any, span: Span) -> Any:
    """Pick a candidate with probability proportional to exp(eps * u / (2 * sensitivity)), exactly.

    Everything public is checked before the charge: epsilon, the declared sensitivity (a
    positive finite number at least the utilities' tracked sensitivity, with no tolerance: the
    tracked bound is already rounded up), and each public utility (finite). The utilities are
    the exact held values, so the tracked sensitivity bounds what is sampled from.
    """
    budget = _epsilon(epsilon, span)
    if isinstance(sensitivity, (Private, PrivateMean)):
        raise refuse("the sensitivity of exponential must be public", sensitivity, span,
                     "a sensitivity is a public bound on how much one row can move the utility: write a number")
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(sensitivity)) or not sensitivity > 0:
        raise JostleRuntimeError("exponential needs a positive finite public sensitivity", span,
                                 "the sensitivity bounds how much one row can move any utility, e.g. 1 for counts")
    scores = scores_of(list(utilities), span, "exponential")
    if len(scores) != len(candidates):
        raise JostleRuntimeError("exponential needs one utility per candidate", span)
    declared = Fraction(exact_number(sensitivity))
    if Fraction(scores.sensitivity) > declared:
        raise PrivacyError(
            f"the utility's tracked sensitivity is {scores.sensitivity:g}, "
            f"larger than the declared {float(sensitivity):g}", span,
            f"declare sensitivity={scores.sensitivity!r} (or more)",
        )
    if scores.node is None:  # every utility is public: the best candidate is public too
        return candidates[scores.first_max()]
    # P(c) ~ exp(eps u(c) / (2D)); monotone utilities (all move the same way when a row is
    # added: counts) need only exp(eps u(c) / D) (McSherry and Talwar 2007, Thm 6's remark;
    # Dwork and Roth 2014, Sec. 3.4: the normaliser then moves in the same direction as the
    # numerator, so the ratio is at most e^eps).
    coefficient = budget.epsilon / (declared if scores.monotone else 2 * declared)
    _charge(ctx, budget, scores.node, "exponential", f"exponential over {len(candidates)} candidates", span)
    index = _exponential_index(ctx.randomness, scores.values(), coefficient)
    return _selected(candidates[replay.released(ctx.randomness, "exponential", scores.units, index, "linf",
                                                declared, None, scores.monotone)], "exponential")


def _selected(choice: Any, mechanism: str) -> Any:
    """A selection's answer, marked as having no additive noise law (for `accuracy`)."""
    return attach(choice, NoLaw(f"it is chosen by a selection ({mechanism}), which has no additive noise: "
                                "its error is not a half-width"))


def _exponential_index(noise: NoiseSource, utilities: list[Exact], coefficient: Fraction) -> int:
    """An index i with probability proportional to exp(coefficient * utilities[i]), exactly, on
    the exact utilities: a uniform proposal i is accepted with probability
    exp(-coefficient (u* - u_i)) (CKS 2020, Algorithm 1), u* the largest; the best is always
    accepted. Proposals are drawn in batches of up to 64, as `Randomness.exponential_index`
    does (the same draws for utilities that are doubles)."""
    best = max(utilities)
    n = len(utilities)
    while True:
        for index in noise.integers_below(n, min(n, 64)).tolist():
            gamma = coefficient * (best - utilities[index])
            if gamma == 0 or bool(noise.bernoulli_exp(gamma, 1)[0]):
                return int(index)


@lru_cache(maxsize=1024)
def _score_grid(sensitivity: float, epsilon: Fraction) -> tuple[Fraction, int]:
    """The public grid for scores of per-score sensitivity D (2^-20 of min(2D/eps, D)) and
    the per-score sensitivity in grid steps, ceil(D / g) (see jostle.privacy.grid_release)."""
    d = Fraction(float(sensitivity))
    grid = power_of_two_at_most(min(2 * d / epsilon, d)) / 2**grid_release.LAPLACE_BITS
    steps = d / grid
    return grid, -((-steps.numerator) // steps.denominator)


def _first_max(values: np.ndarray) -> int:
    if values.dtype == object:
        return max(range(len(values)), key=lambda i: values[i])  # max() keeps the first
    return int(np.argmax(values))


def report_noisy_max(ctx: ReleaseContext, scores: Any, epsilon: Any, span: Span) -> int:
    """Index of the largest score after discrete Laplace noise on each, on a grid: scale 2S/eps
    in grid steps, or S/eps when the scores are monotone (see the module docstring)."""
    budget = _epsilon(epsilon, span)
    if not isinstance(scores, (Private, tuple, list, np.ndarray)):
        raise JostleRuntimeError(f"report_noisy_max needs a list of scores, got a {type_name(scores)}", span)
    checked = scores_of(scores, span, "report_noisy_max")
    if len(checked) == 0:
        raise JostleRuntimeError("report_noisy_max needs at least one score", span)
    if checked.node is None:
        return checked.first_max()
    plan = _score_grid(checked.sensitivity, budget.epsilon) if checked.sensitivity > 0 else None
    _charge(ctx, budget, checked.node, "report_noisy_max", f"noisy max of {len(checked)} scores", span)
    if plan is None:  # exact sensitivity 0: the scores are the same on every neighbour
        return checked.first_max()
    grid, steps = plan
    units = grid_release.snap(checked.units, grid)
    # Monotone scores: Lap(S/eps) (Dwork & Roth 2014, Claim 3.9); otherwise Lap(2S/eps).
    scale = (steps if checked.monotone else 2 * steps) / budget.epsilon
    noisy = grid_release.add(units, ctx.randomness.discrete_laplace(scale, units.size))
    noisy = replay.released(ctx.randomness, "report_noisy_max", units, noisy, "linf", steps, grid, checked.monotone)
    return _selected(_first_max(noisy), "report_noisy_max")


def above_threshold(ctx: ReleaseContext, queries: Any, threshold: Any, epsilon: Any, span: Span) -> int | None:
    """AboveThreshold (sparse vector) on a grid: index of the first query above a noisy threshold."""
    budget = _epsilon(epsilon, span)
    if isinstance(threshold, (Private, PrivateMean)):
        raise refuse("the threshold of above_threshold must be public", threshold, span,
                     "use a public threshold, or release the value first and use the released number")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.integer, np.floating)):
        raise JostleRuntimeError("the threshold must be a number", span)
    if not math.isfinite(float(threshold)):
        raise JostleRuntimeError("the threshold must be finite", span, "write a finite number; nothing was charged")
    if not isinstance(queries, (Private, tuple, list, np.ndarray)):
        raise JostleRuntimeError("above_threshold needs a list of queries", span)
    checked = scores_of(queries, span, "above_threshold")
    limit = exact_number(threshold)
    if checked.node is None:
        return next((i for i, v in enumerate(checked.values()) if v >= limit), None)
    plan = _score_grid(checked.sensitivity, budget.epsilon) if checked.sensitivity > 0 else None
    _charge(ctx, budget, checked.node, "above_threshold", f"sparse vector over {len(checked)} queries", span)
    if plan is None:  # exact sensitivity 0: the queries are the same on every neighbour
        return next((i for i, v in enumerate(checked.values()) if v >= limit), None)
    grid, steps = plan
    eps = budget.epsilon
    noisy_threshold = int(grid_release.add(grid_release.snap(limit, grid),
                                           ctx.randomness.discrete_laplace(2 * steps / eps, 1))[0])
    units = grid_release.snap(checked.units, grid)
    noisy = grid_release.add(units, ctx.randomness.discrete_laplace(4 * steps / eps, units.size))
    noisy = replay.released(ctx.randomness, "above_threshold", units, noisy, "linf", steps, grid)
    for index, value in enumerate(noisy.tolist()):
        if value >= noisy_threshold:
            return _selected(index, "above_threshold")
    return None


def release_default(ctx: ReleaseContext, value: Any, budget: AnyBudget, span: Span) -> Any:
    """The `{{ expr }}` release: geometric for integer values, Laplace otherwise; in a zCDP
    program (a rho allotment) the discrete Gaussian at that rho (`gaussian_rho`)."""
    if isinstance(budget, RhoZCDPBudget):
        if isinstance(_as_private(value, span), (Private, PrivateMean)):
            return gaussian_rho(ctx, value, budget, span, mechanism="{{ }} gaussian")
        return value
    value = _as_private(value, span)
    epsilon = budget.epsilon
    if isinstance(value, Private) and value.integer and float(value.l1).is_integer():
        return geometric(ctx, value, epsilon, span, mechanism="{{ }} geometric")
    if isinstance(value, (Private, PrivateMean)):
        return laplace(ctx, value, epsilon, span, mechanism="{{ }} laplace")
    return value


def randomized_response(ctx: ReleaseContext, table: Any, column: Any, epsilon: Any, span: Span) -> tuple:
    """k-ary randomized response on a categorical column of a whole replace_one table.

    Each response satisfies eps-local DP for its row's value, so the list is eps-DP for
    replace-one neighbours (one row's value replaced: only that row's response changes
    distribution, by at most e^eps). The list has one entry per row, so it also reveals the
    number of rows: under the row unit (one row added or removed) and the entity unit that
    number is private, so randomized response runs only on a table bound under replace_one
    (`public_rows=True`, or unit "replace_one": the number of respondents is public, as in a
    survey), unfiltered by where (its size would reveal how many rows matched) and not a part
    of a partition. It is charged at the table's node, under the accountant's replace_one root.
    """
    budget = _epsilon(epsilon, span)
    if not isinstance(table, Table):
        raise JostleRuntimeError(f"randomized_response needs a table, got a {type_name(table)}", span)
    if not isinstance(column, str) or column not in table.schema:
        raise JostleRuntimeError(f"table '{table.name}' has no column {column!r}", span)
    spec = table.schema[column]
    from jostle.data.schema import Categorical

    if not isinstance(spec, Categorical):
        raise JostleRuntimeError(f"randomized_response needs a categorical column; '{column}' is numeric", span,
                                 f"bin it first: t.bin(\"{column}\", [edges...])")
    values = list(spec.values)
    if not table.private:
        return tuple(table.frame[column].tolist())
    if not table.unit.is_replace_one:
        raise PrivacyError(
            f"randomized_response releases one response per row, which reveals the number of rows of "
            f"'{table.name}'; under its unit {table.unit} ({table.unit.describe()}) that number is private",
            span,
            "the curator binds the table under replace_one when its row count is public (e.g. the "
            "number of survey respondents): public_rows=True or unit=\"replace_one\"; apply it to "
            "the whole table",
        )
    if not table.public_rows:
        raise PrivacyError(
            f"randomized_response releases one response per row, and '{table.name}' is no longer the "
            "whole table (where or partition chose some rows): the number of responses would reveal "
            "how many rows were chosen", span,
            "apply it to the whole table, then keep the responses you need",
        )
    _charge(ctx, budget, table.node, "randomized_response", f"randomized_response({table.name}, '{column}')", span)
    k = len(values)
    index = {v: i for i, v in enumerate(values)}
    truth = np.fromiter((index[v] for v in table.frame[column].tolist()), dtype=np.int64, count=len(table.frame))
    if k == 1:
        return tuple(values[i] for i in truth)
    answers = _randomized_responses(ctx.randomness, truth, k, budget.epsilon)
    answers = replay.released(ctx.randomness, "randomized_response", truth, answers, "hamming", 1)
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
