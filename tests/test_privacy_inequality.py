"""Empirical checks of the differential-privacy inequality on neighbouring datasets.

For an eps-DP mechanism M and neighbouring datasets D, D', every event S satisfies
P[M(D) in S] <= e^eps P[M(D') in S] (and symmetrically). We draw many outputs of M(D) and
M(D'), bucket them into a fixed partition of events, and for each event compute one-sided
Clopper-Pearson bounds (``scipy.stats.beta``) so that, with family-wise confidence 1 - 1e-6
(Bonferroni over every bound computed), ``lower(P[M(D) in S]) / upper(P[M(D') in S])`` is a
lower bound on the mechanism's realised epsilon. The tests assert that this lower bound does
not exceed the claimed epsilon. A negative control (Laplace at half the scale, i.e. a
sensitivity under-reported by half) must be flagged, which shows the check has power.

Neighbours follow Jostle's privacy unit: D' is D plus one row (placed at a bound for sums),
except for randomized response, which needs a public row count and protects each respondent's
value, so its neighbours differ in the value of one row.

The budget is part of the guarantee too: every release must be charged before any noise is
drawn, so an over-budget request fails with nothing drawn and nothing released.

The final tests look at the exact support of the Laplace release (Mironov, CCS 2012): an
output of M(D) that M(D') can never produce is an event with P[M(D') in S] = 0 < P[M(D) in S],
which no finite epsilon allows. Textbook floating-point Laplace has such outputs; Jostle's
release is g * (round(x / g) + Z) with Z exactly discrete Laplace on a public grid g, so each
output's probability under D and D' can be computed exactly from the discrete Laplace pmf and
compared.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import Any, Callable

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from jostle import Session

from jostle.language import mechanisms
from jostle.privacy.budget import Accountant, Budget
from jostle.diagnostics.errors import BudgetExceeded
from jostle.privacy.grid_release import LaplacePlan, laplace_plan
from jostle.privacy.noise import Randomness, SimulationNoise
from jostle.diagnostics.source import BUILTIN_SPAN

ALPHA = 1e-6
CAP = Budget(Fraction(10**9), Fraction(1, 2))
SCHEMA = {
    "age": {"type": "numeric", "bounds": [0, 100]},
    "grp": {"type": "categorical", "values": ["a", "b", "c", "d"]},
}


# ---------------------------------------------------------------- helpers
class ReleaseCtx:
    """A minimal ``ReleaseContext`` with a fresh accountant (so each charge stays cheap).

    Args:
        randomness: The source the mechanism draws from.
    """

    def __init__(self, randomness: Randomness) -> None:
        self.randomness = randomness
        self.accountant = Accountant(CAP)


def draws(n: int, randomness: Randomness, release: Callable[..., Any], *args: Any) -> list[Any]:
    """Call ``release(ctx, *args, span)`` ``n`` times and collect the outputs."""
    return [release(ReleaseCtx(randomness), *args, BUILTIN_SPAN) for _ in range(n)]


def table(groups: list[str], ages: list[float] | None = None) -> pd.DataFrame:
    """A private table with the given group of each row (and ages, 50 by default)."""
    return pd.DataFrame({"age": ages if ages is not None else [50.0] * len(groups), "grp": groups})


def language_value(frame: pd.DataFrame, expression: str, public_rows: bool = False) -> Any:
    """The run-time (private) value of ``expression`` over ``frame`` bound as ``t``."""
    session = Session(budget=1.0)
    session.bind_private("t", frame, SCHEMA, public_rows=public_rows)
    session.run(f"value_under_test = {expression}")
    return session.interpreter.globals.lookup("value_under_test")


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """One-sided Clopper-Pearson lower and upper bounds for a binomial proportion, each at
    confidence 1 - alpha."""
    lower = float(stats.beta.ppf(alpha, k, n - k + 1)) if k > 0 else 0.0
    upper = float(stats.beta.isf(alpha, k + 1, n - k)) if k < n else 1.0
    return lower, upper


def epsilon_lower_bound(events_d: np.ndarray, events_dp: np.ndarray, n_events: int) -> float:
    """A lower confidence bound (family-wise 1 - ALPHA) on the mechanism's realised epsilon.

    Args:
        events_d: The event index (0 .. n_events - 1) of each output drawn from M(D).
        events_dp: The same for outputs drawn from M(D').
        n_events: The number of events in the partition.

    Returns:
        max over events S and both directions of log(lower(P[M(X) in S]) / upper(P[M(Y) in S])),
        or -inf when no event has a positive lower bound.
    """
    alpha = ALPHA / (4 * n_events)  # Bonferroni over the 4 one-sided bounds of every event
    counts_d = np.bincount(events_d, minlength=n_events)
    counts_dp = np.bincount(events_dp, minlength=n_events)
    best = -math.inf
    for k_d, k_dp in zip(counts_d, counts_dp):
        low_d, up_d = clopper_pearson(int(k_d), len(events_d), alpha)
        low_dp, up_dp = clopper_pearson(int(k_dp), len(events_dp), alpha)
        for low, up in ((low_d, up_dp), (low_dp, up_d)):
            if low > 0:
                best = max(best, math.log(low / up))
    return best


def bucket(outputs: list[float], edges: np.ndarray) -> np.ndarray:
    """Event index of each real output for the partition of the line at ``edges``."""
    return np.digitize(np.asarray(outputs, dtype=float), edges)


# ---------------------------------------------------------------- the privacy inequality
COUNT_EDGES = 20 + np.array([-4.0, -2.0, -1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 5.0])


def test_laplace_count_respects_epsilon() -> None:
    """laplace(count(t), eps) on D (20 rows) and D' (21 rows)."""
    epsilon = 0.5
    count_d = language_value(table(["a"] * 20), "count(t)")
    count_dp = language_value(table(["a"] * 21), "count(t)")
    out_d = draws(8_000, Randomness(201), mechanisms.laplace, count_d, epsilon)
    out_dp = draws(8_000, Randomness(202), mechanisms.laplace, count_dp, epsilon)
    bound = epsilon_lower_bound(bucket(out_d, COUNT_EDGES), bucket(out_dp, COUNT_EDGES), len(COUNT_EDGES) + 1)
    assert bound <= epsilon, f"realised epsilon >= {bound:.3f} > claimed {epsilon}"


def test_half_scale_laplace_is_detected() -> None:
    """Negative control: the same check on Laplace with half the calibrated scale (a count
    whose sensitivity is under-reported as 1/2) must find a realised epsilon above the claim.
    Its true worst-case ratio is e^(2 eps), reached by every event right of D' = 21."""
    epsilon = 0.5
    count_d = language_value(table(["a"] * 20), "count(t)")
    count_dp = language_value(table(["a"] * 21), "count(t)")
    assert count_d.l1 == 1
    half_d, half_dp = (dataclasses.replace(c, l1=0.5, l2=0.5) for c in (count_d, count_dp))
    out_d = draws(8_000, Randomness(203), mechanisms.laplace, half_d, epsilon)
    out_dp = draws(8_000, Randomness(204), mechanisms.laplace, half_dp, epsilon)
    bound = epsilon_lower_bound(bucket(out_d, COUNT_EDGES), bucket(out_dp, COUNT_EDGES), len(COUNT_EDGES) + 1)
    assert bound > epsilon, f"missed a mechanism with realised epsilon {2 * epsilon} (bound {bound:.3f})"


def test_laplace_sum_respects_epsilon() -> None:
    """laplace(sum(t, "age"), eps) on D and D' = D plus a row with age = 100 (the upper bound)."""
    epsilon = 1.0
    ages = list(np.random.default_rng(7).integers(0, 101, 30).astype(float))
    sum_d = language_value(table(["a"] * 30, ages), 'sum(t, "age")')
    sum_dp = language_value(table(["a"] * 31, ages + [100.0]), 'sum(t, "age")')
    edges = sum(ages) + 100 * np.array([-3.0, -1.5, -0.5, 0.0, 0.5, 1.0, 1.5, 2.5, 4.0])
    out_d = draws(8_000, Randomness(205), mechanisms.laplace, sum_d, epsilon)
    out_dp = draws(8_000, Randomness(206), mechanisms.laplace, sum_dp, epsilon)
    bound = epsilon_lower_bound(bucket(out_d, edges), bucket(out_dp, edges), len(edges) + 1)
    assert bound <= epsilon, f"realised epsilon >= {bound:.3f} > claimed {epsilon}"


def test_geometric_count_respects_epsilon() -> None:
    """geometric(count(t), eps) on D (20 rows) and D' (21 rows); events are single values
    15 .. 26 and the two tails (for these the true ratio is exactly e^eps)."""
    epsilon = 0.5
    count_d = language_value(table(["b"] * 20), "count(t)")
    count_dp = language_value(table(["b"] * 21), "count(t)")
    edges = np.arange(15, 27) - 0.5
    out_d = draws(8_000, Randomness(207), mechanisms.geometric, count_d, epsilon)
    out_dp = draws(8_000, Randomness(208), mechanisms.geometric, count_dp, epsilon)
    bound = epsilon_lower_bound(bucket(out_d, edges), bucket(out_dp, edges), len(edges) + 1)
    assert bound <= epsilon, f"realised epsilon >= {bound:.3f} > claimed {epsilon}"


EXPONENTIAL_CASES = {
    # Counts are monotone (a row only raises utilities), so the true loss is at most eps/2.
    "monotone counts": (("a", "b", "c", "d"), ["a"] * 6 + ["b"] * 4 + ["c"], "b",
                        'lambda g: count(t.where(lambda r: r.grp == g))'),
    # u(a) = x, u(d) = -x with x the number of "a" rows: adding an "a" row moves the two
    # utilities apart, and P(d) = 1/(1 + e^(eps x)) changes by a factor (1 + e^(2 eps))/(1 + e^eps)
    # from x = 1 to x = 2, about e^(0.82 eps) at eps = 1: the 2 in eps u/(2D) is needed here.
    "non-monotone": (("a", "d"), ["a", "b", "b", "b"], "a",
                     'lambda g: count(t.where(lambda r: r.grp == "a")) if g == "a" '
                     'else -count(t.where(lambda r: r.grp == "a"))'),
}


@pytest.mark.parametrize("candidates,rows,added,utility", EXPONENTIAL_CASES.values(),
                         ids=EXPONENTIAL_CASES.keys())
def test_exponential_mechanism_respects_epsilon(candidates: tuple, rows: list[str], added: str,
                                                utility: str) -> None:
    """exponential(candidates, utility, eps, 1) on D and on D' = D plus one row in group
    ``added``; events are the picked candidates."""
    epsilon = 1.0
    scores = f"map({utility}, {list(candidates)!r})"
    scores_d = list(language_value(table(rows), scores))
    scores_dp = list(language_value(table(rows + [added]), scores))
    out_d = draws(8_000, Randomness(209), mechanisms.exponential, candidates, scores_d, epsilon, 1)
    out_dp = draws(8_000, Randomness(210), mechanisms.exponential, candidates, scores_dp, epsilon, 1)
    index = {c: i for i, c in enumerate(candidates)}
    events_d, events_dp = (np.array([index[c] for c in out]) for out in (out_d, out_dp))
    bound = epsilon_lower_bound(events_d, events_dp, len(candidates))
    assert bound <= epsilon, f"realised epsilon >= {bound:.3f} > claimed {epsilon}"


def test_randomized_response_respects_epsilon() -> None:
    """randomized_response on one-respondent surveys D = ["a"] and D' = ["b"] (public row
    count; the neighbours differ in the respondent's value); events are the responses."""
    epsilon, values = 1.0, ("a", "b", "c", "d")
    survey_d = language_value(table(["a"]), "t", public_rows=True)
    survey_dp = language_value(table(["b"]), "t", public_rows=True)
    out_d = draws(4_000, Randomness(211), mechanisms.randomized_response, survey_d, "grp", epsilon)
    out_dp = draws(4_000, Randomness(212), mechanisms.randomized_response, survey_dp, "grp", epsilon)
    index = {v: i for i, v in enumerate(values)}
    events_d, events_dp = (np.array([index[r[0]] for r in out]) for out in (out_d, out_dp))
    bound = epsilon_lower_bound(events_d, events_dp, 4)
    assert bound <= epsilon, f"realised epsilon >= {bound:.3f} > claimed {epsilon}"


# ---------------------------------------------------------------- charging before drawing
class WatchedRandomness(Randomness):
    """Randomness that records, at every call of its one primitive ``_words`` (through which
    every draw goes), how many charges the ledger holds.

    Args:
        seed: As for Randomness.
        accountant: The accountant whose ledger is watched.
    """

    def __init__(self, seed: int | None, accountant: Accountant) -> None:
        super().__init__(seed)
        self.accountant = accountant
        self.ledger_sizes: list[int] = []

    def _words(self, size: int) -> np.ndarray:
        self.ledger_sizes.append(len(self.accountant.ledger))
        return super()._words(size)


# t is a replace_one table (public_rows, for randomized_response): the count of the whole
# table is public there, so the counts released here are of a filtered table.
RELEASES = [
    "laplace(count(t.where(lambda r: r.age >= 0)), {eps})",
    'laplace(sum(t, "age"), {eps})',
    'laplace(mean(t, "age"), {eps})',
    'laplace(histogram(t, "grp"), {eps})',
    "geometric(count(t.where(lambda r: r.age >= 0)), {eps})",
    "gaussian(count(t.where(lambda r: r.age >= 0)), {eps}, 0.0001)",
    'exponential(["a", "b"], lambda g: count(t.where(lambda r: r.grp == g)), {eps}, 2)',  # stability 2
    'report_noisy_max(histogram(t, "grp"), {eps})',
    'above_threshold(histogram(t, "grp"), 2, {eps})',
    'randomized_response(t, "grp", {eps})',
]
RELEASE_IDS = [r.split("(")[0] + str(i) for i, r in enumerate(RELEASES)]


def _watched_session() -> tuple[Session, WatchedRandomness]:
    session = Session(budget=1.0, delta=0.001, seed=5)
    session.bind_private("t", table(["a"] * 4 + ["b"] * 2), SCHEMA, public_rows=True)
    watched = WatchedRandomness(5, session.accountant)
    session.randomness = session.interpreter.randomness = watched
    return session, watched


@pytest.mark.parametrize("template", RELEASES, ids=RELEASE_IDS)
def test_over_budget_release_draws_no_noise(template: str) -> None:
    """A release that exceeds the budget raises BudgetExceeded, charges nothing, draws nothing."""
    session, watched = _watched_session()
    with pytest.raises(BudgetExceeded):
        session.eval(template.format(eps=2.0))
    assert watched.ledger_sizes == [] and len(session.ledger) == 0


@pytest.mark.parametrize("template", RELEASES, ids=RELEASE_IDS)
def test_release_is_charged_before_noise_is_drawn(template: str) -> None:
    """Every draw of a successful release happens after its charge is in the ledger."""
    session, watched = _watched_session()
    session.eval(template.format(eps=0.5))
    assert len(session.ledger) == 1
    assert watched.ledger_sizes and set(watched.ledger_sizes) == {1}


# ---------------------------------------------------------------- the exact support of Laplace
def grid_steps(y: float, grid: Fraction) -> int | None:
    """y / grid when y is an exact multiple of the grid, else None."""
    steps = Fraction(y) / grid
    return steps.numerator if steps.denominator == 1 else None


def snapped(x: float, grid: Fraction) -> int:
    """round(x / grid), half up, in exact arithmetic (independent of jostle's snap)."""
    return math.floor(Fraction(x) / grid + Fraction(1, 2))


def log_likelihood_ratio(y: float, x: float, x_prime: float, plan: LaplacePlan) -> Fraction:
    """log P[M(D) = y] - log P[M(D') = y] for the grid release: the discrete Laplace pmf's
    normaliser cancels, leaving (|k - k'| - |k - k_D|) / scale in grid steps. None of the
    probabilities is 0: every integer has positive discrete Laplace probability."""
    steps = grid_steps(y, plan.grid)
    assert steps is not None, f"output {y!r} is not on the public grid {plan.grid}"
    return Fraction(abs(steps - snapped(x_prime, plan.grid)) - abs(steps - snapped(x, plan.grid))) / plan.scale


NEIGHBOURS = {  # expression, D, D', the two true values, epsilon
    "count": ("count(t)", table(["a"] * 10), table(["a"] * 11), 10.0, 11.0, 0.5),
    "real sum, row at the bound": ('sum(t, "age")', table(["a"] * 3, [12.3, 45.6, 78.9]),
                                   table(["a"] * 4, [12.3, 45.6, 78.9, 100.0]), 136.8, 236.8, 1.0),
}


@pytest.mark.parametrize("expression,d,d_prime,x,x_prime,epsilon", NEIGHBOURS.values(), ids=NEIGHBOURS.keys())
def test_laplace_outputs_on_d_are_attainable_on_neighbour(expression: str, d: pd.DataFrame, d_prime: pd.DataFrame,
                                                         x: float, x_prime: float, epsilon: float) -> None:
    """Pure eps-DP needs equal supports: each output drawn from M(D) must also be a possible
    output of M(D'), with probability at most e^eps times smaller. Every output lies on the
    public grid (the same for D and D': it depends on the sensitivity and epsilon only), the
    snapped neighbours differ by at most the plan's grid sensitivity, that sensitivity over the
    noise scale is at most epsilon, and each drawn output's exact likelihood ratio is <= e^eps."""
    value_d, value_dp = language_value(d, expression), language_value(d_prime, expression)
    assert float(value_d.value) == pytest.approx(x) and float(value_dp.value) == pytest.approx(x_prime)
    exact_epsilon = Budget.of(epsilon).epsilon
    plan = laplace_plan(value_d.l1, exact_epsilon, 1, value_d.integer, False)
    assert plan == laplace_plan(value_dp.l1, exact_epsilon, 1, value_dp.integer, False)
    assert plan.grid.numerator == 1 and plan.grid.denominator & (plan.grid.denominator - 1) == 0  # 2^-j
    x, x_prime = float(value_d.value), float(value_dp.value)
    assert abs(snapped(x, plan.grid) - snapped(x_prime, plan.grid)) <= plan.sensitivity
    assert Fraction(plan.sensitivity) / plan.scale <= exact_epsilon
    outputs = draws(2_000, Randomness(214), mechanisms.laplace, value_d, epsilon)
    ratios = [log_likelihood_ratio(y, x, x_prime, plan) for y in outputs]
    assert max(ratios) <= exact_epsilon
    assert max(ratios) > exact_epsilon / 2, "the draws never came near the worst case: a weak check"


def test_attainability_check_flags_floating_point_laplace() -> None:
    """Negative control: textbook floating-point Laplace outputs (count + a double drawn by
    NumPy, as the old release did) are not on the grid, so the check above has power."""
    count_d = language_value(table(["a"] * 10), "count(t)")
    plan = laplace_plan(count_d.l1, Budget.of(0.5).epsilon, 1, True, False)
    textbook = 10 + SimulationNoise(215).laplace(2.0, 200)
    off_grid = sum(grid_steps(float(y), plan.grid) is None for y in textbook)
    assert off_grid >= 190, f"only {off_grid}/200 floating-point outputs fell off the grid"
