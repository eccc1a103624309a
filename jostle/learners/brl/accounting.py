"""Privacy accounting of one DP-BRL fit: the budget split and the ledger charged before noise.

Privacy unit: one row added to or removed from the training table.

A private fit with budget eps runs three mechanisms in sequence (sequential composition, their
epsilons add up):
  1. antecedent mining (`mining.mine_private`): eps_mine (0 when the antecedents come from the
     public schema);
  2. the choice of the rule list (`search.exponential_mechanism_list`): eps_select;
  3. the point estimates: Laplace (two-sided geometric) noise on the capture counts, eps_estimate.
The default split is `DEFAULT_SPLIT` = (2, 1, 1): eps/2 for mining, eps/4 for the list, eps/4
for the estimates (any positive weights otherwise); the parts are exact rationals whose sum is
eps exactly (the last part is eps minus the others). Why (issue 27): Belardo's thirds were
chosen when the list was drawn with exp(eps S / (2 Delta)), so its eps/3 bought the exponent of
eps/6 and eps/6 of every fit was spent on nothing. The scores are monotone
(`search.exponential_mechanism_list`), so the factor 2 is gone: at eps/4 the list's exponent is
eps/(4 Delta), larger than the old eps/(6 Delta), and the freed budget goes mostly to mining
(eps/2, 1.5 times the old third: its noise scale k / eps_level on every support is what decides
which antecedents exist at all). The estimates get eps/4 (3/4 of the old third: their noise is on
a handful of capture counts, each already large). The weights were chosen on the GENERATED
corpus only (`corpus.generated_rule_corpus`, 40 tasks x 2 splits at eps 0.1, 0.5, 1; mean test
AUC: (2, 1, 1) 0.599, (3, 1, 1) 0.600, (1, 1, 1) 0.587, (5, 2, 5) 0.581, (1, 2, 1) and
(2, 1, 2) below; (2, 1, 1) is above (1, 1, 1) at each of the three epsilons), never on a
benchmark table. Belardo's thirds remain an Option (BRLMinedEven).

What mining does not spend (DP-FIM skips the steps without candidates, `mining`) goes to the
list and the estimates in the ratio of their weights (`BudgetSplit.rest`), a rule that reads
only what the ledger recorded, a function of released values (adaptive composition).

`FitLedger.charge(part, description)` is called before each step draws noise. It refuses (before
anything is drawn, with `OverBudgetError`, through the one sub-ledger `jostle.privacy.subledger`)
a charge that would take the fit past its epsilon, reports the amount to the
caller's `charge` callback (an outside accountant: the Jostle evaluator's, or the ChoiceMaker's
guard), and returns the epsilon the step calibrates its noise to: the largest double not above
the part (`floor_float`), which is also exactly what is reported, so the reported charges add up
to at most eps and no step runs above what it reported.

Across fits, the estimators charge a fit's whole epsilon, before any step, to the one budget
shared by every family's estimators (`jostle.privacy.shared_budget`: a `PrivacyBudget`, or
`default_budget()`, re-exported here, which has no total and warns when fits add up), so tree
and rule-list fits on the same people add up in one total.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Sequence

from jostle.privacy.rounding import floor_float
from jostle.privacy.shared_budget import default_budget  # noqa: F401 (re-exported: the one default budget)
from jostle.privacy.measures import AnyBudget
from jostle.privacy.subledger import BudgetExceededError, OverBudgetError, Subledger  # noqa: F401 (re-exported)

ChargeCallback = Callable[[float, str], None]

DEFAULT_SPLIT: tuple[float, float, float] = (2.0, 1.0, 1.0)   # mining, list, estimates: see the module docstring


@dataclass(frozen=True)
class BudgetSplit:
    """The exact parts of a fit's epsilon.

    Attributes:
        mining: For private antecedent mining (0 with public antecedents).
        selection: For the exponential mechanism choosing the list.
        estimates: For the noisy capture counts.
    """

    mining: Fraction
    selection: Fraction
    estimates: Fraction

    @classmethod
    def of(cls, epsilon: Fraction, weights: Sequence[float], mine: bool) -> BudgetSplit:
        """Split `epsilon` by `weights` (mining, selection, estimates); without mining its weight
        is dropped and the other two share everything."""
        if len(weights) != 3 or any(not (float(w) >= 0) for w in weights):
            raise ValueError(f"split must be three weights >= 0 (mining, selection, estimates), got {weights!r}")
        w = [Fraction(str(float(x))) for x in weights]
        if not mine:
            w[0] = Fraction(0)
        if w[1] <= 0 or w[2] <= 0 or (mine and w[0] <= 0):
            raise ValueError("split needs a weight > 0 for every step the fit runs (mining, selection, estimates), "
                             f"got {weights!r}")
        total = sum(w)
        mining = epsilon * w[0] / total
        selection = epsilon * w[1] / total
        return cls(mining, selection, epsilon - mining - selection)

    def rest(self, remaining: Fraction) -> tuple[Fraction, Fraction]:
        """(selection, estimates): `remaining`, what is left of the fit's epsilon after mining,
        split in the ratio of their parts (exact; their sum is `remaining`)."""
        remaining = max(Fraction(remaining), Fraction(0))
        selection = remaining * self.selection / (self.selection + self.estimates)
        return selection, remaining - selection


class FitLedger:
    """The charges of one fit, checked against its epsilon before any noise is drawn: a
    `Subledger` whose steps are charged the float they calibrate to.

    Args:
        epsilon: What the fit may spend (exact).
        callback: Called as callback(amount, description) before the step's noise is drawn.
    """

    def __init__(self, epsilon: Fraction, callback: ChargeCallback | None = None) -> None:
        self.epsilon = Fraction(epsilon)
        self.callback = callback
        self.ledger = Subledger(self.epsilon, self._forward, name="the fit's epsilon")

    def _forward(self, cost: AnyBudget, description: str) -> None:
        if self.callback is not None:
            self.callback(float(getattr(cost, "epsilon")), description)  # the float the step calibrates to

    @property
    def spent(self) -> Fraction:
        """What the fit has spent, exactly."""
        return self.ledger.spent_epsilon

    @property
    def records(self) -> list[tuple[float, str]]:
        """(epsilon, description) of every step charged, in order."""
        return [(record.epsilon, record.description) for record in self.ledger.records]

    def charge(self, part: Fraction, description: str) -> Fraction:
        """Charge one step; returns the exact epsilon its noise is calibrated to (<= part)."""
        amount = floor_float(Fraction(part))
        if not amount > 0:
            raise ValueError(f"{description}: a step needs an epsilon > 0, got {float(part)!r}")
        self.ledger.charge(amount, description)
        return Fraction(amount)
