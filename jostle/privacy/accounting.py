"""The measure a session accounts in, and how each release's budget is charged in it.

A session, a program and every `with budget` block inside it state one accounting:

  * **DP** (pure or approximate): caps and charges are (epsilon, delta) `Budget`s composed by
    basic composition (epsilons add, deltas add). A pure program is one whose caps have delta
    0, so any release with delta > 0 is over its cap. This is Jostle's accounting before zCDP,
    unchanged.
  * **zCDP**: caps and charges are `RhoZCDPBudget`s, composed by adding rhos (Bun and Steinke
    2016, Lemma 2.3). A total may be stated in rho (`budget rho(0.05)`, `Session(rho=0.05)`)
    or as (epsilon, delta) (`budget 1, 1e-6 using zcdp`), in which case the cap is the largest
    rho whose CKS 2020 conversion meets (epsilon, delta) (jostle.privacy.conversions.rho_for),
    and what is spent is shown both in rho and as its (epsilon, delta) at that delta.

How a release's budget is charged (`Accounting.cost`):
  * DP accounting: an (epsilon, delta) budget as it is; a rho is refused (a zCDP release has
    no pure guarantee, and choosing a delta for it is the program's decision: state the total
    with `using zcdp`);
  * zCDP accounting: a rho as it is; a pure epsilon as epsilon^2 / 2 (Bun and Steinke 2016,
    Prop. 1.4, exact); an (epsilon, delta > 0) budget is refused, since approximate DP does
    not imply any zCDP (a Gaussian release is stated in rho instead: `gaussian(x, rho(R))`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from jostle.diagnostics.errors import JostleRuntimeError, MeasureMismatch  # noqa: F401 (re-exported)
from jostle.diagnostics.source import Span
from jostle.privacy.conversions import pure_to_rho, rho_for, zcdp_to_epsilon
from jostle.privacy.measures import AnyBudget, Budget, RhoZCDPBudget, fmt_exact

DP = "dp"
ZCDP = "zcdp"
ACCOUNTING_NAMES = ("pure", "approximate", "zcdp")


@dataclass(frozen=True)
class Accounting:
    """How a session composes its releases.

    Attributes:
        kind: DP ("dp") or zCDP ("zcdp").
        delta: For zCDP, the delta at which the total was stated (its spending is also shown
            as (epsilon, delta) at it); None when the total was stated in rho.
    """

    kind: str = DP
    delta: Fraction | None = None

    @property
    def is_zcdp(self) -> bool:
        return self.kind == ZCDP

    def zero(self) -> AnyBudget:
        return RhoZCDPBudget.zero() if self.is_zcdp else Budget.zero()

    def cost(self, budget: AnyBudget, span: Span | None = None) -> AnyBudget:
        """What a release's `budget` costs in this accounting (see the module docstring).

        Raises:
            MeasureMismatch: The budget has no sound conversion into this accounting.
        """
        if self.is_zcdp:
            if isinstance(budget, RhoZCDPBudget):
                return budget
            if budget.delta:
                raise MeasureMismatch(
                    f"an (epsilon, delta) release ({budget}) cannot be charged in a zCDP program",
                    span,
                    "approximate DP with delta > 0 implies no rho; release with a rho instead, e.g. "
                    "gaussian(x, rho(R)), or a pure epsilon (laplace(x, eps) costs eps^2/2 in rho)")
            return RhoZCDPBudget(pure_to_rho(budget.epsilon))
        if isinstance(budget, RhoZCDPBudget):
            raise MeasureMismatch(
                f"a zCDP release ({budget}) cannot be charged in a program that accounts in (epsilon, delta)",
                span,
                "state the program's total in zCDP: `budget E, D using zcdp` or `budget rho(R)` "
                "(Session(budget=E, delta=D, accounting=\"zcdp\") or Session(rho=R) in Python, "
                "--accounting zcdp on the command line)")
        return budget

    def accepts_cap(self, cap: AnyBudget) -> bool:
        """Whether a cap (a total or a `with budget` block) is in this accounting's measure."""
        return isinstance(cap, RhoZCDPBudget) == self.is_zcdp

    def describe(self, amount: AnyBudget) -> str:
        """`amount` as people read it: rho with its (epsilon, delta) equivalent when a delta is known."""
        if isinstance(amount, RhoZCDPBudget) and self.delta:
            return f"{amount} (epsilon={fmt_exact(zcdp_to_epsilon(amount.rho, self.delta))} at delta={fmt_exact(self.delta)})" \
                if amount.rho else f"{amount}"
        return str(amount)

    def __str__(self) -> str:
        if self.is_zcdp:
            return "zCDP" + (f" (stated at delta={fmt_exact(self.delta)})" if self.delta else "")
        return "(epsilon, delta)-DP"


def zcdp_total(epsilon: Fraction | None, delta: Fraction | None, rho: Fraction | None,
               span: Span | None = None) -> tuple[RhoZCDPBudget, Accounting]:
    """The rho cap and accounting of a zCDP total stated as (epsilon, delta) or as rho.

    Raises:
        JostleRuntimeError: A delta of 0 with `using zcdp`, or a rho of 0 or below.
    """
    if rho is not None:
        if rho <= 0:
            raise JostleRuntimeError(f"rho must be greater than 0, got {float(rho)}", span,
                                     "a zCDP total is a positive rho, e.g. rho(0.05)")
        return RhoZCDPBudget(Fraction(rho)), Accounting(ZCDP, None)
    assert epsilon is not None
    if not delta:
        raise JostleRuntimeError(
            "`using zcdp` needs a delta greater than 0", span,
            "zCDP implies (epsilon, delta)-DP only for delta > 0: write e.g. `budget 1.0, 1e-6 using zcdp`, "
            "or state the total in rho: `budget rho(0.05)`")
    if epsilon <= 0:
        raise JostleRuntimeError("a budget's epsilon must be greater than 0", span)
    return RhoZCDPBudget(rho_for(epsilon, delta)), Accounting(ZCDP, Fraction(delta))


def epsilon_within_rho(rho: Fraction) -> Fraction:
    """The largest simple rational epsilon with epsilon^2 / 2 <= rho: a pure release that fits in
    `rho` (used where a mechanism has no zCDP form, e.g. the mean). Exact, rounded down."""
    rho = Fraction(rho)
    if rho <= 0:
        return Fraction(0)
    # sqrt(2 rho) to 12 digits, rounded down, then checked exactly.
    scale = 10**12
    target = 2 * rho * scale * scale
    from math import isqrt
    root = isqrt(target.numerator // target.denominator)
    epsilon = Fraction(root, scale)
    while pure_to_rho(epsilon) > rho:
        epsilon -= Fraction(1, scale)
    return epsilon
