"""The registry of privacy audits: one `AuditCase` per component, run by test_audits.py.

Each case names a component (a mechanism called through `jostle.language.mechanisms`, or a Jostle
program run through `jostle.Session`), a pair of neighbouring tables that is a worst case for
it (one row added, at a bound, flipping an argmax, or just at a threshold), and the epsilon (and
delta) it claims. The auditor (`jostle.audit`) must not find a lower bound above the claim.
`NEGATIVE_CONTROLS` are deliberately mis-calibrated variants that it MUST catch at the same
sample sizes, which shows the audits have power.

To audit a new component, append an AuditCase to CASES; see docs/auditing.md.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from jostle.language import mechanisms
from jostle.audit import SPAN, AuditCase, AuditContext, private_value, release_runner, session_runner
from jostle.privacy.budget import Budget, RhoZCDPBudget
from jostle.privacy.conversions import zcdp_to_epsilon

SCHEMA = {"age": ("numeric", 0, 100), "grp": ("categorical", ["a", "b", "c"])}

# Test-phase samples per dataset (selection draws a quarter as many more). Vectorised draws are
# cheap; a mechanism called once per sample costs ~50 us; a Session run ~1.5 ms.
VECTORISED = 100_000
PER_CALL = 15_000
PER_SESSION = 4_000


def table(groups: list[str] | str, ages: list[float] | None = None) -> pd.DataFrame:
    """A private table with one row per group label (ages default to 50)."""
    groups = list(groups)
    return pd.DataFrame({"age": ages if ages is not None else [50.0] * len(groups), "grp": groups})


def plus(frame: pd.DataFrame, group: str, age: float = 50.0) -> pd.DataFrame:
    """The neighbour of `frame` with one more row."""
    return pd.concat([frame, table([group], [age])], ignore_index=True)


def vectorised(release: Any, expression: str) -> Any:
    """Release the value of `expression` (a private scalar) with all samples in one call."""
    return release_runner(release, expression, SCHEMA, vectorise=True)


def per_call(release: Any, expression: str) -> Any:
    """Release the value of `expression` once per sample."""
    return release_runner(release, expression, SCHEMA)


# ---------------------------------------------------------------- neighbours
COUNTS = (table("a" * 20), plus(table("a" * 20), "a"))
AGES = list(np.random.default_rng(7).integers(0, 101, 30).astype(float))
# A row at the column's upper bound moves a sum by its full sensitivity, 100.
SUMS = (table("a" * 30, AGES), plus(table("a" * 30, AGES), "a", 100.0))
# A mean over few rows at the lower bound, neighbour adds one at the upper bound.
MEANS = (table("aaa", [0.0] * 3), plus(table("aaa", [0.0] * 3), "a", 100.0))
# "a" and "b" tie; the added "a" row makes "a" the argmax.
TIE = (table("aaaabbbbc"), plus(table("aaaabbbbc"), "a"))
# x = number of "a" rows goes from 1 to 2.
ONE_A = (table("abbb"), plus(table("abbb"), "a"))
# Sparse vector: x = number of "a" rows goes from 4 to 5 = the threshold.
AT_THRESHOLD = (table("aaaab"), plus(table("aaaab"), "a"))
# Partition by grp: the added row lands in part "b" only.
PARTS = (table("aaaaabbbcc"), plus(table("aaaaabbbcc"), "b"))
# A row at the age bound changes both a count and a sum.
BLOCK = (table("aaaa", [10.0, 20.0, 30.0, 40.0]), plus(table("aaaa", [10.0, 20.0, 30.0, 40.0]), "a", 100.0))

COUNT_A = 'count(t.where(lambda r: r.grp == "a"))'
# Scores [x, -x]: each has sensitivity 1 but their gap moves by 2 per row, the case where the
# exponential mechanism needs eps u / (2 D) and report-noisy-max needs Laplace(2 D / eps).
NON_MONOTONE = f'map(lambda g: {COUNT_A} if g == "a" else -{COUNT_A}, ["a", "b"])'
MONOTONE = 'map(lambda g: count(t.where(lambda r: r.grp == g)), ["a", "b", "c"])'


def survey(epsilon: float) -> Any:
    """k-ary randomized response on a one-respondent survey, `count` responses at a time.

    Each row's response depends on that row alone, so a table of `count` copies of the one
    respondent gives `count` independent responses of the one-respondent survey in one call.
    """
    def run(frame: pd.DataFrame, count: int, seed: int) -> list[str]:
        copies = pd.concat([frame] * count, ignore_index=True)
        survey_table = private_value(copies, SCHEMA, "t", public_rows=True)
        return list(mechanisms.randomized_response(AuditContext(seed), survey_table, "grp", epsilon, SPAN))
    return run


def ignoring_sensitivity(ctx: AuditContext, value: Any, epsilon: float) -> Any:
    """NEGATIVE CONTROL: Laplace scaled as if every sum had sensitivity 1."""
    return mechanisms.laplace(ctx, dataclasses.replace(value, l1=1.0, l2=1.0), epsilon, SPAN)


PARTITION_PROGRAM = """
with budget 0.5:
    out = []
    for part in t.partition("grp"):
        out = out + [{{ count(part) }}]
"""

BLOCK_PROGRAM = """
with budget 0.6:
    n = {{ count(t) }}
    s = {{ sum(t, "age") }}
"""

# NEGATIVE CONTROL: two overlapping subsets released as if they were parts of a partition.
# Jostle charges this sequentially (1.0); the control claims the parallel cost 0.5.
OVERLAP_PROGRAM = """
with budget 1:
    left = {{ count(t.where(lambda r: r.grp in ["a", "b"])) }}
    right = {{ count(t.where(lambda r: r.grp in ["b", "c"])) }}
"""

# Power floors (at_least) are set to half the claim where the neighbours realise the whole
# claim: a Laplace or geometric shift by the full sensitivity (of a count, a sum at its bound,
# or the one histogram cell that gains the row), k-ary randomized response on a
# changed answer, and the independent releases of a partition's part or a block (true loss
# exactly epsilon), and the non-monotone exponential case (true loss log((1 + e^2)/(1 + e)) =
# 0.82 at epsilon 1). The bound falls short of the truth by the width of the Clopper-Pearson
# intervals at alpha 1e-6: about 0.05 at 1e5 samples, 0.15-0.3 at 4000. The block's floor is a
# third of its claim because its worst event (both releases in their tails) is rarer.
CASES = [
    AuditCase("laplace count", vectorised(lambda c, x: mechanisms.laplace(c, x, 0.5, SPAN), "count(t)"),
              *COUNTS, epsilon=0.5, samples=VECTORISED, at_least=0.25),
    AuditCase("laplace sum, row at bound", vectorised(lambda c, x: mechanisms.laplace(c, x, 1.0, SPAN),
              'sum(t, "age")'), *SUMS, epsilon=1.0, samples=VECTORISED, at_least=0.5),
    AuditCase("geometric count", vectorised(lambda c, x: mechanisms.geometric(c, x, 0.5, SPAN), "count(t)"),
              *COUNTS, epsilon=0.5, samples=VECTORISED, at_least=0.25),
    AuditCase("gaussian count", vectorised(lambda c, x: mechanisms.gaussian(c, x, 0.5, 1e-3, SPAN),
              "count(t)"), *COUNTS, epsilon=0.5, delta=1e-3, samples=VECTORISED),
    AuditCase("{{ }} geometric path", vectorised(
              lambda c, x: mechanisms.release_default(c, x, Budget.of(0.5), SPAN), "count(t)"),
              *COUNTS, epsilon=0.5, samples=VECTORISED, at_least=0.25),
    AuditCase("{{ }} laplace path", vectorised(
              lambda c, x: mechanisms.release_default(c, x, Budget.of(1.0), SPAN), 'sum(t, "age")'),
              *SUMS, epsilon=1.0, samples=VECTORISED, at_least=0.5),
    AuditCase("geometric histogram, row in one cell", per_call(
              lambda c, h: mechanisms.geometric(c, h, 0.5, SPAN), 'histogram(t, "grp")'),
              *PARTS, epsilon=0.5, samples=PER_CALL, at_least=0.25),
    AuditCase("laplace mean", per_call(lambda c, m: mechanisms.laplace(c, m, 1.0, SPAN), 'mean(t, "age")'),
              *MEANS, epsilon=1.0, samples=PER_CALL),
    AuditCase("exponential, row flips argmax", per_call(
              lambda c, u: mechanisms.exponential(c, ("a", "b", "c"), list(u), 1.0, 1, SPAN), MONOTONE),
              *TIE, epsilon=1.0, samples=PER_CALL),
    AuditCase("exponential, non-monotone utility", per_call(
              lambda c, u: mechanisms.exponential(c, ("a", "b"), list(u), 1.0, 1, SPAN), NON_MONOTONE),
              *ONE_A, epsilon=1.0, samples=PER_CALL, at_least=0.5),
    AuditCase("report_noisy_max, non-monotone scores", per_call(
              lambda c, s: mechanisms.report_noisy_max(c, s, 1.0, SPAN), NON_MONOTONE),
              *ONE_A, epsilon=1.0, samples=PER_CALL),
    AuditCase("above_threshold, row at threshold", per_call(
              lambda c, q: mechanisms.above_threshold(c, q, 5, 1.0, SPAN), f"[{COUNT_A}, 9 - {COUNT_A}]"),
              *AT_THRESHOLD, epsilon=1.0, samples=PER_CALL),
    AuditCase("randomized_response", survey(1.0), table("a"), table("b"), epsilon=1.0,
              samples=VECTORISED, at_least=0.5),
    AuditCase("partition, {{ }} in every part", session_runner(PARTITION_PROGRAM, "out", SCHEMA, 0.5),
              *PARTS, epsilon=0.5, samples=PER_SESSION, at_least=0.25),
    AuditCase("with budget block, two {{ }}", session_runner(BLOCK_PROGRAM, "[n, s]", SCHEMA, 0.6),
              *BLOCK, epsilon=0.6, samples=PER_SESSION, at_least=0.2),
]

# zCDP (issue 22): a release at rho R is claimed as the (epsilon, delta) its CKS 2020
# conversion gives at delta 1e-3 (jostle.privacy.conversions.zcdp_to_epsilon); the audit checks
# that no event's probability ratio exceeds it. Count neighbours shift by exactly 1.
ZCDP_DELTA = 1e-3


def at_rho(rho: float) -> float:
    """The epsilon a rho-zCDP release claims at ZCDP_DELTA."""
    return float(zcdp_to_epsilon(Fraction(rho).limit_denominator(10**9), Fraction(ZCDP_DELTA)))


CASES += [
    AuditCase("gaussian count at rho 0.125", vectorised(
              lambda c, x: mechanisms.gaussian_rho(c.in_zcdp(), x, RhoZCDPBudget.of(0.125), SPAN), "count(t)"),
              *COUNTS, epsilon=at_rho(0.125), delta=ZCDP_DELTA, samples=VECTORISED),
    AuditCase("{{ }} gaussian path in a zCDP program", vectorised(
              lambda c, x: mechanisms.release_default(c.in_zcdp(), x, RhoZCDPBudget.of(0.125), SPAN),
              'sum(t, "age")'), *SUMS, epsilon=at_rho(0.125), delta=ZCDP_DELTA, samples=VECTORISED),
]

NEGATIVE_CONTROLS = [
    AuditCase("half-noise laplace", vectorised(lambda c, x: mechanisms.laplace(c, x, 1.0, SPAN), "count(t)"),
              *COUNTS, epsilon=0.5, samples=VECTORISED, expect_violation=True),
    AuditCase("sum ignoring its sensitivity", vectorised(lambda c, x: ignoring_sensitivity(c, x, 1.0),
              'sum(t, "age")'), *SUMS, epsilon=1.0, samples=VECTORISED, expect_violation=True),
    AuditCase("exponential with eps instead of eps/2", per_call(
              lambda c, u: mechanisms.exponential(c, ("a", "b"), list(u), 2.0, 1, SPAN), NON_MONOTONE),
              *ONE_A, epsilon=1.0, samples=PER_CALL, expect_violation=True),
    AuditCase("gaussian at rho 2 claimed as rho 0.005", vectorised(
              lambda c, x: mechanisms.gaussian_rho(c.in_zcdp(), x, RhoZCDPBudget.of(2), SPAN), "count(t)"),
              *COUNTS, epsilon=at_rho(0.005), delta=ZCDP_DELTA, samples=VECTORISED, expect_violation=True),
    AuditCase("overlapping subsets claimed parallel", session_runner(OVERLAP_PROGRAM, "[left, right]", SCHEMA, 1),
              *PARTS, epsilon=0.5, samples=PER_SESSION, expect_violation=True),
]


# ---------------------------------------------------------------- floating point (issue 11, hole 3)
# (a) A count scaled by 1e-12 27 times: the sensitivity (1e-12)^27 ~ 1e-324 used to underflow
# to 0 and the subnormal value was released exactly. Now it is exact and its sensitivity rounds
# up to 5e-324. (b) Rounding at 2^49 moved the value by an ulp (0.125) against a tracked 1e-9;
# the exact value lands above the rounding midpoint with probability 0.303 (no "b" row) or
# 0.697 (one): a true loss of log(0.697 / 0.303) = 0.83 on the event "0.125" at epsilon 1.
UNDERFLOW = "count(t)" + " * 1e-12" * 27
ROUNDING = '((count(t.where(lambda r: r.grp == "b")) - 0.5) * 1e-9 + 0.0625) + 2 ** 49'
ONE_B = (table("aaa"), plus(table("aaa"), "b"))
# 2 rows -> 0.0 and 3 rows -> 5e-324 in doubles (the old code's values), so the old exact
# release told them apart.
TWO_THREE = (table("aa"), plus(table("aa"), "a"))


def as_old_float_code(value: Any, sensitivity: float | None = None) -> Any:
    """NEGATIVE CONTROL: the value as the old code held it, a double (and, for (a), the
    sensitivity it computed in doubles, which underflowed to 0)."""
    rounded = float(value.value)
    if sensitivity is None:
        return dataclasses.replace(value, value=rounded)
    return dataclasses.replace(value, value=rounded, l1=sensitivity, l2=sensitivity)


def claimed_monotone(scores: Any) -> Any:
    """NEGATIVE CONTROL: non-monotone scores passed off as monotone (Lap(D/eps) instead of 2D/eps)."""
    return tuple(dataclasses.replace(s, direction=1) for s in scores)


CASES += [
    AuditCase("hole 3a: underflowed sensitivity, laplace", per_call(
              lambda c, x: mechanisms.laplace(c, x, 1.0, SPAN), UNDERFLOW), *TWO_THREE, epsilon=1.0,
              samples=PER_CALL),
    AuditCase("hole 3b: rounding at 2^49, laplace", per_call(
              lambda c, x: mechanisms.laplace(c, x, 1.0, SPAN) - 2**49, ROUNDING), *ONE_B, epsilon=1.0,
              samples=PER_CALL, at_least=0.5),
    AuditCase("report_noisy_max, monotone counts at Lap(1/eps)", per_call(
              lambda c, s: mechanisms.report_noisy_max(c, s, 1.0, SPAN), 'histogram(t, "grp")'),
              *TIE, epsilon=1.0, samples=PER_CALL),
]

NEGATIVE_CONTROLS += [
    AuditCase("hole 3a as before: sensitivity 0, released exactly", per_call(
              lambda c, x: mechanisms.laplace(c, as_old_float_code(x, 0.0), 1.0, SPAN), UNDERFLOW),
              *TWO_THREE, epsilon=1.0, samples=PER_CALL, expect_violation=True),
    AuditCase("hole 3b as before: the value rounded to a double", per_call(
              lambda c, x: mechanisms.laplace(c, as_old_float_code(x), 1.0, SPAN) - 2**49, ROUNDING),
              *ONE_B, epsilon=1.0, samples=PER_CALL, expect_violation=True),
    AuditCase("report_noisy_max, non-monotone scores claimed monotone", per_call(
              lambda c, s: mechanisms.report_noisy_max(c, claimed_monotone(s), 1.0, SPAN), NON_MONOTONE),
              *ONE_A, epsilon=1.0, samples=PER_CALL, expect_violation=True),
]
