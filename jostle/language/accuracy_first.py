"""Accuracy-first budgets: `with accuracy E at C:` and `release(x, error=E, confidence=C)`.

A release in an accuracy block (every `{{ }}` evaluated while the block is the innermost budget
rule, written in it or in a function it calls) does not take a share of a `with budget` cap: it
spends the smallest budget whose stated error meets the target, E a half-width in the value's
units and C a confidence in (0, 1) (P(|released - exact| <= E) >= C).

**When the error does not depend on the data** (a private number or vector: a count, a sum, a
histogram, per cell), the budget comes from the closed form of the mechanism the release WILL
use (`{{ }}`'s: geometric for integer values, Laplace on its grid otherwise, the discrete
Gaussian at a rho in a zCDP program), inverted by jostle.privacy.error_bounds
(`smallest_budget_for`, `law_for`, which account for the grids): public inputs only (the
sensitivity, the length, the target). It is then released through the same `{{ }}` path at that
budget (jostle.language.mechanisms.release_default), charged before its noise is drawn.

**When it does** (a mean: a noisy sum over a noisy count, whose error depends on the count), the
value is revealed gradually with correlated noise (jostle.privacy.gradual_release): a public
schedule eps_1 < ... < eps_K = cap, eps_k charged before y_k is revealed, stopping at the first
step whose error bound, computed from the released values alone, meets E. The bound holds with
confidence C for whichever step the rule stops at (each step's bound holds with 1 - (1 - C) / K,
a union bound over the K steps). Privacy: EX-POST (Ligett et al. 2017): the revealed values' loss
is at most the epsilon charged; the a-priori worst case is the cap (see gradual_release).

**The cap** is what the accountant can still spend on a release at that data node: the session
total, every open `with budget` cap (inside `with budget B:`, B), parallel composition over a
partition included (`accountant.check`), and the data's lifetime left (`remaining`, counted
without the partition's slack, a conservative guide). A target the cap cannot meet is refused
BEFORE anything is spent, with the smallest error the cap can reach at C in the hint.

**Refused, nothing spent**: a gradual release in a zCDP or an (epsilon, delta) program (the ex-post
argument bounds the revealed prefix's loss pointwise; the session's total holds a priori only when
every release's loss is pointwise bounded by its charge, i.e. in pure DP), a gradual release in a
pure-DP session over data whose lifetime is
kept in rho (the store would charge each step its own epsilon^2/2, less than the prefix's
eps_k^2/2), an error target <= 0, a confidence outside (0, 1), a private or
non-numeric target, and, inside the block, any other charge (a learner, a ChoiceMaker, a
mechanism that states its own epsilon: their error has no closed form here and no gradual
release); the checker refuses, statically, a block with nothing to release, a `with budget`
written inside it, and calls of the mechanisms that take an epsilon. A `with budget` block around
`with accuracy` caps it; a `with budget` opened (in a function) inside it is the innermost rule
for its own releases.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np

from jostle.diagnostics.errors import BudgetExceeded, JostleRuntimeError, JostleWarning, PrivacyError
from jostle.diagnostics.source import Span
from jostle.language import ast_nodes as A
from jostle.language.builtin_registry import builtin
from jostle.language.mechanisms import _as_private, release_default
from jostle.language.sensitivity import refuse, up
from jostle.language.values import Private, PrivateMean, RowValues, RowView, Table, is_private, type_name
from jostle.privacy import error_bounds, gradual_release, grid_release
from jostle.privacy.budget import Accountant, AnyBudget, Budget, BudgetContext, DataNode, RhoZCDPBudget
from jostle.privacy.refusals import no_total_refusal

__all__ = ["Target", "active_target", "exec_with_accuracy", "release_for", "releases_nothing", "static_problems"]


@dataclass
class Target:
    """An accuracy target in force: the error E, the confidence C, where it was stated, and the
    budget context that was innermost when it opened (it applies while that one still is)."""

    error: float
    confidence: float
    span: Span
    context: BudgetContext | None
    charging: bool = field(default=False)  # True while accuracy-first itself charges

    def describe(self) -> str:
        """'for error 10 at 95%': what the ledger's descriptions say."""
        return f"for error {self.error:g} at {100 * self.confidence:g}%"


# ---------------------------------------------------------------- static checks (checker.py)
def _constant(expr: A.Expr) -> float | None:
    """The value of a written number (or its negation), else None."""
    if isinstance(expr, A.Number) and not isinstance(expr.value, bool):
        return float(expr.value)
    if isinstance(expr, A.UnaryOp) and expr.op in "+-":
        inner = _constant(expr.operand)
        return None if inner is None else (-inner if expr.op == "-" else inner)
    return None


def _may_release(node: object, is_builtin: Callable[[str], bool]) -> bool:
    """Whether `node` may make an accuracy-first release: a `{{ }}`, a call of `release`, or a call
    of anything that is not a built-in (a function of the program may release)."""
    from dataclasses import fields

    if isinstance(node, A.Release):
        return True
    if isinstance(node, A.Call):
        func = node.func
        if not isinstance(func, A.Name) or not is_builtin(func.id) or func.id == "release":
            return True
    if isinstance(node, (A.Def, A.Lambda, A.OptionDef, A.ChoiceMakerExpr)):
        return False
    if isinstance(node, tuple):
        return any(_may_release(item, is_builtin) for item in node)
    if isinstance(node, A.Node):
        return any(_may_release(getattr(node, f.name), is_builtin) for f in fields(node) if f.name != "span")
    return False


def _nested_budget(body: object) -> A.WithBudget | None:
    """The first `with budget` written inside `body` (not inside a function)."""
    if isinstance(body, A.WithBudget):
        return body
    if isinstance(body, (A.Def, A.OptionDef)):
        return None
    if isinstance(body, tuple):
        for item in body:
            found = _nested_budget(item)
            if found is not None:
                return found
        return None
    if isinstance(body, (A.If, A.While, A.For, A.WithAccuracy)):
        parts = [b for _, b in body.branches] + [body.orelse] if isinstance(body, A.If) else [body.body]
        return _nested_budget(tuple(parts))
    return None


def static_problems(stmt: A.WithAccuracy, is_builtin: Callable[[str], bool]) -> Iterator[tuple[str, Span, str]]:
    """What the checker refuses in the header of `with accuracy E at C:` and a `with budget` written
    in its body (message, span, hint), in order."""
    error = _constant(stmt.error)
    if error is not None and not error > 0:
        yield (f"an accuracy target must be greater than 0, got {error:g}", stmt.error.span,
               "E is the largest error you accept, in the value's units, e.g. `with accuracy 10 at 0.95:`")
    confidence = _constant(stmt.confidence)
    if confidence is not None and not 0 < confidence < 1:
        yield (f"a confidence must be strictly between 0 and 1, got {confidence:g}", stmt.confidence.span,
               "C is the probability that the error is at most E, e.g. 0.95 (1 would need infinite budget)")
    nested = _nested_budget(stmt.body)
    if nested is not None:
        yield ("a `with budget` block inside `with accuracy` would take its budget shares instead of meeting "
               "the target", nested.span, "put `with budget B:` around the accuracy block: it then caps what "
               "the block may spend")


def releases_nothing(stmt: A.WithAccuracy, is_builtin: Callable[[str], bool]) -> tuple[str, Span, str] | None:
    """The checker's refusal of a block with nothing in it that could release, or None."""
    if _may_release(stmt.body, is_builtin):
        return None
    return ("this `with accuracy` block releases nothing", stmt.span,
            "put the releases the target is for inside it, e.g. `x = {{ count(t) }}`, or release "
            "one value with release(x, error=E, confidence=C)")


# ---------------------------------------------------------------- the block
def _target_numbers(interp: Any, error: Any, confidence: Any, error_span: Span, confidence_span: Span) -> None:
    """Refuse a private, non-numeric, non-finite or out-of-range target (before anything is spent)."""
    for value, span, name in ((error, error_span, "an accuracy target"), (confidence, confidence_span,
                                                                             "a confidence")):
        if is_private(value):
            raise refuse(f"{name} must be public", value, span, "write a number")
        if isinstance(value, bool) or not isinstance(value, (int, float, Fraction, np.integer, np.floating)) \
                or not math.isfinite(float(value)):
            raise JostleRuntimeError(f"{name} must be a finite number, got a {type_name(value)}", span)
    if not float(error) > 0:
        raise JostleRuntimeError(f"an accuracy target must be greater than 0, got {float(error):g}", error_span,
                                 "E is the largest error you accept, in the value's units; nothing was spent")
    if not 0 < float(confidence) < 1:
        raise JostleRuntimeError(f"a confidence must be strictly between 0 and 1, got {float(confidence):g}",
                                 confidence_span, "e.g. 0.95; nothing was spent")


def _targets(interp: Any) -> list[Target]:
    targets = interp.__dict__.get("_accuracy_targets")
    if targets is None:
        targets = interp.__dict__["_accuracy_targets"] = []
    return targets


def active_target(interp: Any) -> Target | None:
    """The accuracy target a `{{ }}` evaluated now must meet, or None (no block, or a `with budget`
    opened since the innermost block: that block's budget rule applies)."""
    targets = interp.__dict__.get("_accuracy_targets")
    if targets and targets[-1].context is interp.accountant.innermost:
        return targets[-1]
    return None


@contextmanager
def _target_in_force(interp: Any, target: Target) -> Iterator[None]:
    """Push `target`, and refuse every charge made while it is the innermost rule that is not
    accuracy-first's own (a learner, a ChoiceMaker): before it is recorded, so nothing is spent."""
    accountant = interp.accountant
    targets = _targets(interp)
    wrapped = accountant.__dict__.get("charge")  # a recorder's wrapper, if any (jostle.privacy.replay)
    inner = accountant.charge

    def guarded(budget: Any, node: Any, mechanism: str, description: str, span: Any) -> Any:
        current = active_target(interp)
        if current is not None and not current.charging:
            raise PrivacyError(
                f"{mechanism} ({description}) has no closed-form error and no gradual release, so "
                f"`with accuracy` cannot choose its budget", span,
                "call it outside the accuracy block with its own epsilon; inside, release values with "
                "{{ x }} or release(x, error=E, confidence=C); nothing was spent",
                [("the accuracy block starts here", current.span)])
        return inner(budget, node, mechanism, description, span)

    targets.append(target)
    accountant.charge = guarded
    try:
        yield
    finally:
        targets.pop()
        if wrapped is not None:
            accountant.charge = wrapped
        else:
            accountant.__dict__.pop("charge", None)


def exec_with_accuracy(interp: Any, stmt: A.WithAccuracy, env: Any) -> None:
    """`with accuracy E at C:` (the evaluator's `_exec_WithAccuracy`)."""
    error = interp.eval(stmt.error, env)
    confidence = interp.eval(stmt.confidence, env)
    _target_numbers(interp, error, confidence, stmt.error.span, stmt.confidence.span)
    target = Target(float(error), float(confidence), stmt.span, interp.accountant.innermost)
    with _target_in_force(interp, target):
        interp.exec_block(stmt.body, env)


@builtin("release", 1, privacy="release", keywords=("error", "confidence"),
         doc="release(x, error=E, confidence=0.95): x released at the smallest budget whose error at C is at most E")
def _release(interp: Any, span: Span, value: Any, error: Any = None, confidence: Any = 0.95) -> Any:
    if error is None:
        raise JostleRuntimeError("release() needs a target error: release(x, error=E, confidence=C)", span,
                                 "E is the largest error you accept, in x's units, e.g. error=10")
    _target_numbers(interp, error, confidence, span, span)
    if not is_private(value):
        return value  # a public value is exact and free
    if isinstance(value, (Table, RowValues, RowView)):
        raise PrivacyError("release() releases numbers and vectors, not tables or columns", span,
                           "release an aggregate, e.g. release(count(t), error=10)")
    target = Target(float(error), float(confidence), span, interp.accountant.innermost)
    with _target_in_force(interp, target):
        return release_for(interp, value, target, span)


# ---------------------------------------------------------------- the cap
def _cost(accountant: Accountant, budget: AnyBudget, span: Span) -> AnyBudget:
    return accountant.accounting.cost(budget, span)


def _fits(accountant: Accountant, budget: AnyBudget, node: DataNode, span: Span, lifetime: AnyBudget | None) -> bool:
    """Whether a charge of `budget` at `node` passes every cap of the session (and, conservatively,
    the data's lifetime left)."""
    try:
        cost = _cost(accountant, budget, span)
        accountant.check(cost, node, span)
    except BudgetExceeded:
        return False
    if lifetime is not None:
        limits = dict(lifetime.quantities())
        return all(amount <= limits.get(quantity, amount) for quantity, amount in cost.quantities())
    return True


def _lifetime_limit(accountant: Accountant) -> AnyBudget | None:
    """What the data's lifetime leaves, when it binds tighter than the session's total."""
    remaining = accountant.remaining
    assert accountant.total is not None
    room = (accountant.total.cap - accountant.spent).floor_at_zero()
    return remaining if remaining is not None and remaining != room else None


def _largest(accountant: Accountant, node: DataNode, span: Span, rho: bool) -> Fraction:
    """The largest epsilon (a rho in zCDP) a release at `node` may spend now, to 1e-9 relative
    (bisection on `accountant.check`: parallel composition over partitions included)."""
    if accountant.total is None:
        raise no_total_refusal(span)
    make = (lambda q: RhoZCDPBudget(q)) if rho else (lambda q: Budget(q))
    lifetime = _lifetime_limit(accountant)
    cap = accountant.total.cap
    high = Fraction(cap.rho if rho else cap.epsilon)
    if high <= 0 or not _fits(accountant, make(high / 2**40), node, span, lifetime):
        return Fraction(0)
    if _fits(accountant, make(high), node, span, lifetime):
        return high
    low = high / 2**40
    while (high - low) > low * Fraction(1, 10**9):
        middle = ((low + high) / 2).limit_denominator(10**15)
        if not low < middle < high:
            break
        if _fits(accountant, make(middle), node, span, lifetime):
            low = middle
        else:
            high = middle
    return low


# ---------------------------------------------------------------- releases
def release_for(interp: Any, value: Any, target: Target, span: Span) -> Any:
    """Release the private `value` at the smallest budget meeting `target` (see the module docstring)."""
    value = _as_private(value, span)
    if isinstance(value, PrivateMean):
        return _gradual_mean(interp, value, target, span)
    if not isinstance(value, Private):
        raise PrivacyError(f"{type_name(value)} has no closed-form error and no gradual release", span,
                           "release numbers, vectors or means inside `with accuracy`; nothing was spent")
    if value.l1 <= 0 and value.l2 <= 0:
        return release_default(interp, value, Budget(1), span)  # exact: the same on every neighbour, free
    zcdp = interp.accountant.accounting.is_zcdp
    integer = value.integer and float(value.l1).is_integer()
    mechanism = "gaussian_rho" if zcdp else ("geometric" if integer else "laplace")
    sensitivity = value.l2 if zcdp else value.l1
    budget = error_bounds.smallest_budget_for(mechanism, sensitivity, target.error, target.confidence,
                                              integer=value.integer, cap=None, length=value.length,
                                              l1=value.l1 if zcdp else None)
    cap_amount = _largest(interp.accountant, value.node, span, zcdp)
    cap = RhoZCDPBudget(cap_amount) if zcdp else Budget(cap_amount)
    amount = None if budget is None else budget.rho if zcdp else budget.epsilon  # None: no budget can
    if cap_amount <= 0 or amount is None or amount > cap_amount:
        raise _unreachable(mechanism, sensitivity, value, target, cap, cap_amount, span, zcdp)
    described = replace(value, what=f"{value.what}, {target.describe()}")
    charges = len(interp.accountant.ledger)
    target.charging = True
    try:
        released = release_default(interp, described, budget, span)
    finally:
        target.charging = False
    for entry in interp.accountant.ledger[charges:]:  # a public fact for the cost report
        entry.details["accuracy_target"] = (target.error, target.confidence)
    interp.vector_labels.carry(released, value)
    return released


def _unreachable(mechanism: str, sensitivity: float, value: Private, target: Target, cap: AnyBudget,
                 amount: Fraction, span: Span, zcdp: bool) -> BudgetExceeded:
    """The refusal of a target the cap cannot meet, with the smallest error the cap can reach."""
    measure = "rho" if zcdp else "epsilon"
    if amount > 0:
        law = error_bounds.law_for(mechanism, sensitivity, cap, integer=value.integer, length=value.length,
                                   l1=value.l1 if zcdp else None, is_vector=value.is_vector)
        best = law.half_width(target.confidence)
        hint = (f"the most this release may spend here is {measure} {float(amount):.6g}, which reaches an error "
                f"of {best:.6g} at {100 * target.confidence:g}%: ask for an error of at least {best:.6g}, a "
                "lower confidence, or more budget; nothing was spent")
    else:
        hint = "nothing is left to spend here (see remaining()); nothing was spent"
    return BudgetExceeded(
        f"the budget left cannot release {value.what} with an error of at most {target.error:g} at "
        f"{100 * target.confidence:g}%", span, hint, [("the accuracy target is stated here", target.span)]
        if target.span != span else None)


def _mean_bound(noisy_sum: float, noisy_count: float, sum_half: float, count_half: float,
                lo: float, hi: float, midpoint: float) -> tuple[float, float]:
    """The released mean and the largest error it can have when the true sum of (x - mid) is within
    sum_half of the noisy sum and the true count within count_half of the noisy count (public
    values only: post-processing). The true mean lies in [lo, hi]."""
    released = float(np.clip(midpoint + noisy_sum / max(noisy_count, 1.0), lo, hi))
    n_low, n_high = max(1.0, math.ceil(noisy_count - count_half)), noisy_count + count_half
    if n_high < 1:
        return released, hi - lo
    t_low = max(noisy_sum - sum_half, (lo - midpoint) * n_high)
    t_high = min(noisy_sum + sum_half, (hi - midpoint) * n_high)
    ratios = [t / n for t in (t_low, t_high) for n in (n_low, n_high)]
    low = max(lo, midpoint + min(ratios))
    high = min(hi, midpoint + max(ratios))
    return released, min(hi - lo, max(released - low, high - released, 0.0))


def _gradual_mean(interp: Any, value: PrivateMean, target: Target, span: Span) -> float:
    """A mean, revealed gradually (module docstring): the sum of (x - mid) and the count, each at
    eps_k / 2 on its own grid, each a correlated chain (jostle.privacy.gradual_release)."""
    accountant, noise = interp.accountant, interp.randomness
    zcdp = accountant.accounting.is_zcdp
    cap = accountant.cap
    if zcdp or (isinstance(cap, Budget) and cap.delta > 0):
        # The ex-post argument (module docstring) bounds the revealed prefix's loss pointwise, by
        # eps_k; the session's total then holds a priori only when every other release's loss is
        # pointwise bounded by its charge too, i.e. in pure epsilon-DP. Not proved in zCDP (a charge
        # of the steps' rho would understate the a-priori cost, the cap) nor with delta: refused.
        raise PrivacyError(f"the error of {value.what} depends on the data, so it would be revealed gradually, "
                           "which Jostle proves private (ex-post) only in a pure epsilon-DP program", span,
                           "in a zCDP or (epsilon, delta) program, release the mean at a stated budget "
                           "(`{{ }}` in a `with budget` block) and read its error with accuracy(m, 0.95); "
                           "nothing was spent")
    if any(isinstance(s.lifetime, RhoZCDPBudget) for s in accountant.datasets_status()):
        # A pure session records each charge against a rho lifetime as its own epsilon^2 / 2: the
        # increments' squares would add up to less than eps_k^2 / 2, which is what the revealed
        # prefix costs in rho (it is a function of y_k alone, not a composition of the steps).
        raise PrivacyError(f"{value.what} would be revealed gradually, which a data lifetime kept in rho "
                           "cannot be charged for step by step", span,
                           "run the program in zCDP (`budget rho(R)`), or release the mean at a stated "
                           "epsilon; nothing was spent")
    cap_epsilon = _largest(accountant, value.node, span, False)  # a pure session (refused otherwise, above)
    if cap_epsilon <= 0:
        raise BudgetExceeded(f"the budget left cannot release {value.what} with an error of at most "
                             f"{target.error:g}", span, "nothing is left to spend here (see remaining()); "
                             "nothing was spent")
    # The grids and sensitivities exactly as mechanisms._release_mean plans them, at the cap.
    midpoint = (value.lo + value.hi) / 2
    exact_mid = Fraction(midpoint)
    half_range = up(value.stability * max(Fraction(value.hi) - exact_mid, exact_mid - Fraction(value.lo)))
    epsilons = gradual_release.schedule(cap_epsilon)
    count_plan = grid_release.laplace_plan(float(value.stability), cap_epsilon / 2, 1, True, False)
    sum_plan = grid_release.laplace_plan(half_range, cap_epsilon / 2, 1, False, False) if half_range > 0 else None
    halves = [e / 2 for e in epsilons]
    alpha = (1 - target.confidence) / len(epsilons) / 2  # per step and per chain: a union bound
    count_units = grid_release.snap(value.count, count_plan.grid)
    sum_units = grid_release.snap(value.total, sum_plan.grid) if sum_plan else None
    base = f"{value.what}, {target.describe()}, gradual release"
    previous: AnyBudget | None = None
    count_chain = sum_chain = None
    result = float(np.clip(midpoint, value.lo, value.hi))
    for step, epsilon in enumerate(epsilons, start=1):
        budget: AnyBudget = Budget(epsilon)
        increment = budget if previous is None else budget - previous
        note = (f"{base} step {step}/{len(epsilons)}: epsilon {float(epsilon):.6g} in all so far, an ex-post "
                f"bound (a-priori worst case: the cap {float(cap_epsilon):.6g})")
        target.charging = True
        try:
            entry = accountant.charge(increment, value.node, "gradual laplace", note, span)  # before revealing
        finally:
            target.charging = False
        # Public facts for the cost report: the run's total is data-dependent, at most the cap.
        entry.details["accuracy_target"] = (target.error, target.confidence)
        entry.details["gradual"] = {"step": step, "steps": len(epsilons), "cap": Budget(cap_epsilon)}
        previous = budget
        if count_chain is None:  # drawn once, after the first charge: nothing revealed yet
            count_chain = gradual_release.draw_chain(noise, count_units, count_plan.sensitivity, halves,
                                                     count_plan.grid)
            if sum_plan is not None:
                sum_chain = gradual_release.draw_chain(noise, sum_units, sum_plan.sensitivity, halves, sum_plan.grid)
        noisy_count = float(grid_release.to_floats(count_chain.reveal(noise, step, count_units, "gradual count"),
                                                    count_plan.grid)[0])
        count_half = _half_width(count_plan, epsilon / 2, 1 - alpha)
        if sum_chain is not None:
            noisy_sum = float(grid_release.to_floats(sum_chain.reveal(noise, step, sum_units, "gradual sum"),
                                                      sum_plan.grid)[0])
            sum_half = _half_width(sum_plan, epsilon / 2, 1 - alpha) + float(sum_plan.grid) / 2
        else:  # lo == hi: every x - mid is 0, so the sum is 0 on every dataset (public)
            noisy_sum, sum_half = 0.0, 0.0
        result, bound = _mean_bound(noisy_sum, noisy_count, sum_half, count_half, value.lo, value.hi, midpoint)
        if bound <= target.error:
            return result
    interp.warn(JostleWarning(
        f"the gradual release of {value.what} spent its cap (epsilon {float(cap_epsilon):.6g}) and its error bound "
        f"is still above {target.error:g} at {100 * target.confidence:g}%", span,
        "the released mean is the least noisy one; give the block more budget or accept a larger error"))
    return result


def _half_width(plan: grid_release.LaplacePlan, epsilon: Fraction, confidence: float) -> float:
    """The half-width at `confidence` of the discrete Laplace noise of `plan`'s grid and sensitivity at
    `epsilon`, in value units (jostle.privacy.error_bounds)."""
    law = error_bounds.NoiseLaw("discrete_laplace", float(Fraction(plan.sensitivity) / epsilon), float(plan.grid))
    return law.half_width(confidence)
