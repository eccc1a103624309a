"""A dataset's balance in the durable ledger across measures, and the rule that admits a charge.

A dataset's lifetime budget is held in one measure, the one its curator declared (or, without a
declaration, the measure of the binding session's default lifetime): (epsilon, delta) (pure when
delta is 0) or a rho of zCDP (jostle.privacy.measures). Its balance keeps two parts, each the sum
of the rises recorded in it (jostle.privacy.ledger_store):

  * `dp`: the (epsilon, delta) spent by pure and approximate charges (basic composition: both
    add, Dwork and Roth 2014, Thm 3.16);
  * `rho`: the rho spent by zCDP charges (rhos add, Bun and Steinke 2016, Lemma 2.3).

How a charge in one measure counts against a lifetime in another (`convert_rise`), each step
rounded so that it never under-reports:

  * against a rho lifetime: a rho as it is; a pure epsilon as epsilon^2 / 2 (an epsilon-DP
    mechanism is (epsilon^2/2)-zCDP, Bun and Steinke 2016, Prop. 1.4; exact); an (epsilon,
    delta > 0) charge is refused: approximate DP implies no zCDP at all (a mechanism may fail
    with probability delta in an unbounded way, which no Renyi divergence bounds);
  * against an (epsilon_L, delta_L) lifetime: an (epsilon, delta) charge as it is; a rho is
    kept as rho (the `rho` part of the balance) and admitted by the rule below when delta_L > 0;
    with delta_L = 0 (a pure lifetime) it is refused: zCDP implies no pure DP (the Gaussian's
    privacy loss is unbounded).

The balance rule (`admit`), for an (epsilon_L, delta_L) lifetime with balance B (the (epsilon,
delta) part) and R (the rho part):
  * R = 0: B.epsilon <= epsilon_L and B.delta <= delta_L (basic composition, as format 2);
  * R > 0: B.delta < delta_L and B.epsilon + zcdp_to_epsilon(R, delta_L - B.delta) <= epsilon_L.
    The zCDP spending composes to R-zCDP (Lemma 2.3), which is (zcdp_to_epsilon(R, d'), d')-DP
    for every d' in (0, 1) (Canonne, Kamath and Steinke 2020, Cor. 13; `zcdp_to_epsilon` rounds
    up); taking d' = delta_L - B.delta and composing it with the (B.epsilon, B.delta)-DP rest by
    basic composition gives (B.epsilon + zcdp_to_epsilon(R, d'), delta_L)-DP.
For a rho lifetime rho_L: R + rho(B) <= rho_L, where rho(B) = B.epsilon^2 / 2 when B.delta = 0
(B is then a pure B.epsilon-DP guarantee, so (B.epsilon^2/2)-zCDP: Prop. 1.4) and is infinite
when B.delta > 0 (only a lifetime changed from (epsilon, delta) to rho after such spending can
hold one: the data then takes no further charge). Zero-concentrated DP composes additively
(Lemma 2.3), so the whole is (R + rho(B))-zCDP.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

from jostle.privacy.conversions import pure_to_rho, rho_for, zcdp_to_epsilon
from jostle.privacy.measures import AnyBudget, Budget, RhoZCDPBudget, fmt_exact
from jostle.privacy.units import ROW, PrivacyUnit, UnitMismatch, convert_charge

PURE, APPROXIMATE, ZCDP_MEASURE = "pure", "approximate", "zcdp"
MEASURES = (PURE, APPROXIMATE, ZCDP_MEASURE)
# The delta at which rho spending is shown as (epsilon, delta) when the lifetime has none.
DISPLAY_DELTA = Fraction(1, 10**6)


def measure_of(budget: AnyBudget) -> str:
    """"pure", "approximate" or "zcdp": the measure of an amount, as the ledger stores it."""
    if isinstance(budget, RhoZCDPBudget):
        return ZCDP_MEASURE
    return APPROXIMATE if budget.delta else PURE


class MeasureRefusal(ValueError):
    """A charge in one measure cannot count against a lifetime held in another (the reason)."""


@dataclass(frozen=True)
class Balance:
    """What a dataset has spent since its last reset: an (epsilon, delta) part and a rho part."""

    dp: Budget = field(default_factory=Budget.zero)
    rho: Fraction = Fraction(0)

    def plus(self, rise: AnyBudget) -> Balance:
        """The balance after a rise (in either measure) is added to its part."""
        if isinstance(rise, RhoZCDPBudget):
            return Balance(self.dp, self.rho + rise.rho)
        return Balance(self.dp + rise, self.rho)

    def is_zero(self) -> bool:
        return self.dp.is_zero() and self.rho == 0

    def rho_equivalent(self) -> Fraction | None:
        """The whole balance as one rho (R + B.epsilon^2/2), or None when B has a delta (no rho)."""
        if self.dp.delta:
            return None
        return self.rho + pure_to_rho(self.dp.epsilon)

    def epsilon_equivalent(self, lifetime_delta: Fraction) -> Fraction | None:
        """The whole balance as an epsilon at the lifetime's delta (B.epsilon plus the rho part at
        the delta B leaves), or None when no delta is left for the rho part."""
        if not self.rho:
            return self.dp.epsilon
        left = Fraction(lifetime_delta) - self.dp.delta
        if left <= 0:
            return None
        return self.dp.epsilon + zcdp_to_epsilon(self.rho, left)


@dataclass(frozen=True)
class ChargeRise:
    """What one charge adds to the session's composed cost, in the forms the ledger may need.

    Attributes:
        amount: The rise of the session's composed cost, in the session's measure.
        unit: The privacy unit the release was made under (its data's root).
        own: The release's own cost in the session's measure (no parallel discount); group
            privacy of an approximate charge is applied to it (see `convert_rise`).
        as_rho: For a pure charge in a DP session, the rise of the session's cost composed in
            rho (each pure release as epsilon^2/2, parallel parts at their largest rho), which a
            rho lifetime is charged; None otherwise. (Without it, a pure rise is converted on its
            own, epsilon^2/2, which is sound for rises of sequential charges only: under parallel
            composition, squares of rises can sum to less than the square of the largest part.
            The accountant always gives it.)
    """

    amount: AnyBudget
    unit: PrivacyUnit = ROW
    own: AnyBudget | None = None
    as_rho: RhoZCDPBudget | None = None


def as_budget(value: AnyBudget | tuple[Fraction, Fraction] | None) -> AnyBudget | None:
    """A budget given as a Budget, a RhoZCDPBudget or an (epsilon, delta) pair (format 2's form)."""
    if value is None or isinstance(value, (Budget, RhoZCDPBudget)):
        return value
    return Budget(Fraction(value[0]), Fraction(value[1]))


def convert_rise(rise: ChargeRise, lifetime: AnyBudget | None, kept_under: PrivacyUnit) -> AnyBudget:
    """What `rise` adds to the balance of a dataset kept under `kept_under` with `lifetime`.

    First the unit (jostle.privacy.units.convert_charge: row counted under replace_one is group
    privacy of 2). Group privacy is linear in epsilon and in rho, so applying it to each rise
    sums to applying it to the session's composed cost; for an approximate charge the delta
    grows by e^((k-1) epsilon), which is not linear, so it is applied to the release's own cost
    (`rise.own`, each release's group guarantee then composes sequentially). Then the measure
    (see the module docstring).

    Raises:
        UnitMismatch: No sound conversion between the units (with the reason).
        MeasureRefusal: The charge's measure cannot count against the lifetime's (with the reason).
    """
    amount, as_rho = rise.amount, rise.as_rho
    if rise.unit != kept_under:
        if isinstance(amount, Budget) and amount.delta:
            amount = convert_charge(rise.own if rise.own is not None else amount, rise.unit, kept_under)
        else:
            amount = convert_charge(amount, rise.unit, kept_under)
        if as_rho is not None:
            as_rho = convert_charge(as_rho, rise.unit, kept_under)  # type: ignore[assignment]
    if lifetime is None:
        return amount
    if isinstance(lifetime, RhoZCDPBudget):
        if isinstance(amount, RhoZCDPBudget):
            return amount
        if amount.delta:
            raise MeasureRefusal(
                f"an (epsilon, delta) charge ({amount}) cannot count against a lifetime budget in rho: "
                "approximate DP with delta > 0 implies no zCDP")
        return as_rho if as_rho is not None else RhoZCDPBudget(pure_to_rho(amount.epsilon))
    if isinstance(amount, RhoZCDPBudget) and not lifetime.delta:
        raise MeasureRefusal(
            f"a zCDP charge ({amount}) cannot count against a pure lifetime budget ({lifetime}): "
            "zCDP implies (epsilon, delta)-DP only for delta > 0")
    return amount


@dataclass(frozen=True)
class Shortfall:
    """Why a balance plus a rise does not fit a lifetime, in the lifetime's quantity.

    `balance` and `rise` are in `quantity` (for a mixed balance, epsilon equivalents at the
    lifetime's delta); `total` is the lifetime's; `note` explains a strict or converted bound.
    """

    quantity: str
    balance: Fraction
    rise: Fraction
    total: Fraction
    note: str = ""


def admit(balance: Balance, rise: AnyBudget, lifetime: AnyBudget) -> Shortfall | None:
    """None if `balance` plus `rise` fits `lifetime` (the rule of the module docstring), else why not."""
    after = balance.plus(rise)
    if isinstance(lifetime, RhoZCDPBudget):
        before_rho, after_rho = balance.rho_equivalent(), after.rho_equivalent()
        if after_rho is None:
            return Shortfall("rho", balance.rho, Fraction(0), lifetime.rho,
                             f"its balance holds (epsilon, delta) spending ({balance.dp}), which has no rho")
        if after_rho > lifetime.rho:
            before = before_rho if before_rho is not None else balance.rho
            return Shortfall("rho", before, after_rho - before, lifetime.rho)
        return None
    if not after.rho:
        for quantity, spent, cap in (("epsilon", after.dp.epsilon, lifetime.epsilon),
                                     ("delta", after.dp.delta, lifetime.delta)):
            if spent > cap:
                return Shortfall(quantity, getattr(balance.dp, quantity), getattr(rise, quantity, Fraction(0)), cap)
        return None
    if after.dp.delta >= lifetime.delta:
        return Shortfall("delta", balance.dp.delta, after.dp.delta - balance.dp.delta, lifetime.delta,
                         "with rho spent, the (epsilon, delta) spending must leave some delta for it")
    before_eps = balance.epsilon_equivalent(lifetime.delta)
    after_eps = after.epsilon_equivalent(lifetime.delta)
    assert after_eps is not None  # after.dp.delta < lifetime.delta
    if after_eps > lifetime.epsilon:
        before = before_eps if before_eps is not None else balance.dp.epsilon
        return Shortfall("epsilon", before, after_eps - before, lifetime.epsilon,
                         f"the rho spent counts as epsilon at the delta left (CKS 2020), "
                         f"rho {fmt_exact(after.rho)} in all")
    return None


@lru_cache(maxsize=256)
def _rho_for(epsilon: Fraction, delta: Fraction) -> Fraction:
    return rho_for(epsilon, delta)


def spent_in_lifetime_measure(balance: Balance, lifetime: AnyBudget | None) -> AnyBudget:
    """The balance as one amount in the lifetime's measure: a rho for a rho lifetime (None-free:
    a balance with no rho form is shown in (epsilon, delta)); (epsilon, delta) otherwise, the rho
    part counted as epsilon at the delta left (or at DISPLAY_DELTA without a lifetime delta)."""
    if isinstance(lifetime, RhoZCDPBudget):
        rho = balance.rho_equivalent()
        return RhoZCDPBudget(rho) if rho is not None else balance.dp
    if lifetime is None and balance.dp.is_zero() and balance.rho:
        return RhoZCDPBudget(balance.rho)
    if not balance.rho:
        return balance.dp
    delta = lifetime.delta if lifetime is not None and lifetime.delta else balance.dp.delta + DISPLAY_DELTA
    eps = balance.epsilon_equivalent(delta)
    return Budget(eps if eps is not None else balance.dp.epsilon, balance.dp.delta)


def left_in(balance: Balance, lifetime: AnyBudget, zcdp: bool) -> AnyBudget:
    """What a lifetime leaves for the next charge, in a session's measure (rho when `zcdp`, else
    (epsilon, delta)); zero where no charge of that measure fits. A guide (what `remaining`
    shows): every charge is still checked by `admit`."""
    if isinstance(lifetime, RhoZCDPBudget):
        spent = balance.rho_equivalent()
        rho_left = Fraction(0) if spent is None else max(Fraction(0), lifetime.rho - spent)
        if zcdp:
            return RhoZCDPBudget(rho_left)
        # A pure epsilon costs epsilon^2/2: the largest epsilon that fits, rounded down.
        from jostle.privacy.accounting import epsilon_within_rho
        return Budget(epsilon_within_rho(rho_left), Fraction(0))
    delta_left = max(Fraction(0), lifetime.delta - balance.dp.delta)
    if zcdp:
        if not delta_left or balance.dp.epsilon >= lifetime.epsilon:
            return RhoZCDPBudget.zero()
        return RhoZCDPBudget(max(Fraction(0), _rho_for(lifetime.epsilon - balance.dp.epsilon, delta_left) - balance.rho))
    eps = balance.epsilon_equivalent(lifetime.delta)
    if eps is None:
        return Budget.zero()
    return Budget(max(Fraction(0), lifetime.epsilon - eps), delta_left)


def describe_rho(rho: Fraction, lifetime: AnyBudget | None, labelled: bool = True) -> str:
    """`rho=R (epsilon=E at delta=D: ...)`: a rho with its (epsilon, delta) equivalent (CKS 2020),
    at the lifetime's delta when it has one, else at DISPLAY_DELTA (labelled so, unless not
    `labelled`: a table's cells, whose dataset line carries the label)."""
    if not rho:
        return "rho=0"
    if isinstance(lifetime, Budget) and lifetime.delta:
        delta, label = lifetime.delta, "the lifetime's delta"
    else:
        delta, label = DISPLAY_DELTA, "delta 1e-6, for comparison"
    return (f"rho={fmt_exact(rho)} (epsilon={fmt_exact(zcdp_to_epsilon(rho, delta))} at "
            f"delta={fmt_exact(delta)}" + (f": {label})" if labelled else ")"))


__all__ = ["Balance", "ChargeRise", "MeasureRefusal", "Shortfall", "UnitMismatch", "admit", "convert_rise",
           "left_in", "measure_of", "spent_in_lifetime_measure", "describe_rho", "MEASURES", "DISPLAY_DELTA"]
