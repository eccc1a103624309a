"""A privacy budget shared by the scikit-learn estimators' fits, of every family: `PrivacyBudget`.

Every estimator's fit (`DPDecisionTreeClassifier.fit`, `DPBayesianRuleListClassifier.fit`, ...) spends its `epsilon` on the rows it is given. Fits on data
about the same people add up (sequential composition), so five folds of `cross_val_score` spend
five times epsilon, and a `GridSearchCV` spends epsilon once per candidate and fold, plus once
for the final refit. A `PrivacyBudget` makes that spending visible and bounded:

    budget = PrivacyBudget(3.0)
    learner = DPDecisionTreeClassifier(1.0, domains=..., classes=..., budget=budget)
    learner.fit(X, y)           # charges 1 of 3
    clone(learner).fit(X, y)    # the clone shares the budget: 2 of 3
    ...                         # a fit that would pass 3 is refused before any noise is drawn

How it works:
  * A fit charges its whole `epsilon` to the budget *before* it draws any noise (and after its
    arguments and data are checked, so a fit that fails on bad input spends nothing). A charge
    that would take the total past the budget raises `OverBudgetError` (also named
    `BudgetExceededError`, the one over-budget error of `jostle.privacy.subledger`): nothing is
    drawn, nothing is spent, the estimator is left unfitted.
  * Amounts are Jostle's exact budgets (`jostle.privacy.budget`): the float a user writes is
    snapped to the nearest simple rational (0.1 is 1/10), so ten fits of 0.1 fit exactly in
    1.0. The accounting is the same `Accountant` that Jostle programs use; a budget can also
    charge an existing account, any object with the small `BudgetAccount` interface (`cap`,
    `spent`, `charge_fit`): a `Session` (`PrivacyBudget(account=session)`) or its accountant
    (`PrivacyBudget(accountant=session.accountant)`), so programs and estimators share one total
    and, with a durable ledger, one lifetime budget. The budget only calls that interface; the
    account checks every limit before it records a fit.
  * The object is shared, never copied: `copy.copy`, `copy.deepcopy` and so scikit-learn's
    `clone` return the budget itself, so every clone that `cross_val_score` or `GridSearchCV`
    makes charges the same total.
  * A copy made by pickling (e.g. to send an estimator to another process with
    `n_jobs > 1`) cannot report its charges back, so it is *detached*: it refuses every charge.
    Run cross-validation with a `PrivacyBudget` in one process (`n_jobs=None` or `1`). A fitted
    estimator pickles and predicts normally.
  * Estimators given no budget charge `default_budget()`, one per process and for every family
    (tree and rule-list fits add up in it), which has no total: it records every fit and, from
    the second fit on, warns (`PrivacyBudgetWarning`, through `charge_default`) that the
    spending adds up. It refuses nothing. The internal callers that account elsewhere
    (the Jostle language and the ChoiceMaker pass `charge=` to their own accountant) do not
    charge it.

Gaussian fits (the SuLQ estimators) are charged in rho: `charge(RhoZCDPBudget(r), ...)` on a
budget whose total is a rho (`PrivacyBudget(rho=R)`) or whose account accounts in zCDP (a
session with `budget E, D using zcdp` or `rho=`). A budget in pure epsilon, or with no total
(`default_budget()`), refuses a rho: a Gaussian mechanism has no pure epsilon.

Privacy unit: one row added or removed. All fits charged to one budget are treated as fits on
data about the same people, so their costs add up; the budget cannot know when two fits saw
disjoint people and never takes the (smaller) parallel cost.
"""

from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol, runtime_checkable

from jostle.diagnostics.errors import BudgetExceeded, JostleRuntimeError, MeasureMismatch
from jostle.privacy.budget import Accountant
from jostle.privacy.measures import AnyBudget, Budget, RhoZCDPBudget, exact, fmt
from jostle.privacy.subledger import BudgetExceededError, OverBudgetError  # noqa: F401 (re-exported)


@runtime_checkable
class BudgetAccount(Protocol):
    """What a `PrivacyBudget` charges when it does not keep its own total: a Jostle `Session`,
    its `Accountant`, or any account that checks every limit before it records.

    `charge_fit(amount, description)` records one fit's pure epsilon against the account's
    data (the root of its privacy unit), converted into the account's measure, after checking
    every limit; it raises `jostle.diagnostics.errors.BudgetExceeded` (with `requested` and
    `remaining` when it knows them) and records nothing when it refuses.
    """

    @property
    def cap(self) -> AnyBudget | None:
        """The account's total (None: none set yet)."""

    @property
    def spent(self) -> AnyBudget:
        """What the account has recorded."""

    def charge_fit(self, amount: Budget, description: str) -> None:
        """Check, then record one fit's cost (see the class docstring)."""


def _shown(amount: AnyBudget) -> str:
    """An amount as a refusal writes it: a pure budget's epsilon, otherwise the budget."""
    if isinstance(amount, Budget) and not amount.delta:
        return fmt(amount.epsilon)
    return str(amount)


class PrivacyBudgetWarning(UserWarning):
    """Privacy budget is being spent in a way the user may not have noticed (repeated fits)."""


@dataclass(frozen=True)
class FitCharge:
    """One charge of a `PrivacyBudget`: what was fitted and the exact epsilon it cost (0 for a
    fit charged in rho, whose cost is `rho`)."""

    description: str
    epsilon: Fraction
    rho: Fraction | None = None


class PrivacyBudget:
    """An epsilon budget that estimator fits share; it refuses a fit that would pass its total.

    Args:
        epsilon: The total epsilon the fits may spend together; None for no total (the budget
            then only records what is spent, as `default_budget()` does).
        account: Charge this account instead of a total of its own (a `BudgetAccount`: a
            `Session`, or its `session.accountant`): its total, its open limits and its durable
            ledger apply, and the fits appear in its ledger. Give either `epsilon` or `account`.
        accountant: The same as `account` (its older name).
        name: How the budget is named in messages.
        rho: A total in rho instead of epsilon (zCDP: what Gaussian fits charge).

    Raises:
        ValueError: `epsilon` is not a number > 0, or more than one of the arguments was given.
        TypeError: `account` does not offer the `BudgetAccount` interface.
    """

    def __init__(self, epsilon: float | int | str | Fraction | None = None, *, account: BudgetAccount | None = None,
                 accountant: BudgetAccount | None = None, name: str | None = None, rho: Any = None) -> None:
        if account is not None and accountant is not None:
            raise ValueError("give a PrivacyBudget an account (account=) or an accountant (accountant=), not both")
        account = account if account is not None else accountant
        if epsilon is not None and account is not None:
            raise ValueError("give a PrivacyBudget either its own total (epsilon) or an account to charge, "
                             "not both")
        total: AnyBudget | None = None
        if rho is not None:
            if epsilon is not None or account is not None:
                raise ValueError("give a PrivacyBudget one total: epsilon, rho or an account")
            try:
                total = RhoZCDPBudget.of(rho)
            except (JostleRuntimeError, TypeError, ValueError) as error:
                raise ValueError(f"PrivacyBudget: rho must be a number > 0, got {rho!r} ({error})") from None
            if total.rho <= 0:
                raise ValueError(f"PrivacyBudget: the total rho must be greater than 0, got {rho!r}")
        if epsilon is not None:
            try:
                total = Budget.of(epsilon)
            except JostleRuntimeError as error:
                raise ValueError(f"PrivacyBudget: {error.message}") from None
            if total.epsilon <= 0:
                raise ValueError(f"PrivacyBudget: the total epsilon must be greater than 0, got {epsilon!r}")
        if account is not None and not isinstance(account, BudgetAccount):
            raise TypeError("account must offer cap, spent and charge_fit (a jostle Session or its accountant), "
                            f"got {type(account).__name__}")
        self.name = name or ("the PrivacyBudget" if account is None else "the accountant's budget")
        self._account: BudgetAccount | None = account
        if account is None and total is not None:
            own = Accountant(total)
            assert own.total is not None
            own.total.label = self.name  # how refusals name the total
            self._account = own
        self._charges: list[FitCharge] = []
        self._detached: tuple[AnyBudget | None, AnyBudget] | None = None  # a pickled copy: (total, spent)
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ what is spent
    @property
    def total(self) -> AnyBudget | None:
        """What may be spent in all (None: no total)."""
        if self._detached is not None:
            return self._detached[0]
        if self._account is None:
            return None
        return self._account.cap

    @property
    def spent(self) -> AnyBudget:
        """What is spent: the charges made through this object or, with a shared accountant,
        everything that accountant has recorded against the data (programs included)."""
        if self._detached is not None:
            return self._detached[1]
        if self._account is not None:
            return self._account.spent
        return Budget(sum((c.epsilon for c in self._charges), Fraction(0)))

    @property
    def remaining(self) -> AnyBudget | None:
        """What is left (None: no total)."""
        total = self.total
        return None if total is None else total - self.spent  # type: ignore[operator]

    @property
    def charges(self) -> list[FitCharge]:
        """The fits charged through this object, in order."""
        return list(self._charges)

    @property
    def charge_count(self) -> int:
        """How many fits were charged through this object (without copying `charges`)."""
        return len(self._charges)

    @property
    def detached(self) -> bool:
        """True for a copy made by pickling: it refuses every charge."""
        return self._detached is not None

    @property
    def account(self) -> BudgetAccount | None:
        """What the fits are charged to: the account given (a `Session`, its `Accountant`), the
        `Accountant` keeping this budget's own total, or None (no total; a detached copy)."""
        return None if self._detached is not None else self._account

    def __repr__(self) -> str:
        total = self.total
        limit = f"total {total}" if total is not None else "no total"
        state = ", a detached copy that refuses every charge" if self._detached is not None else ""
        return (f"PrivacyBudget({limit}, spent {self.spent}, {len(self._charges)} fit(s) charged here{state}; "
                f"{self.name})")

    # ------------------------------------------------------------------ charging
    def charge(self, epsilon: float | int | str | Fraction, description: str) -> Fraction:
        """Charge one fit's whole epsilon; call it before the fit draws any noise.

        Args:
            epsilon: What the fit may spend (snapped to an exact rational, as Jostle does).
            description: What is fitted, for the ledger and messages.

        Returns:
            The exact epsilon charged; the fit must not calibrate noise to more than this.

        Raises:
            OverBudgetError: The charge would pass the total, or this is a detached copy;
                nothing is recorded.
        """
        if isinstance(epsilon, RhoZCDPBudget):
            return self._charge_rho(epsilon, description)
        try:
            amount = exact(epsilon)
        except JostleRuntimeError as error:
            raise ValueError(error.message) from None
        if amount <= 0:
            raise ValueError(f"a fit needs an epsilon greater than 0, got {epsilon!r}")
        with self._lock:
            if self._detached is not None:
                raise OverBudgetError(
                    f"{description}: refused: {self.name} is a copy made by pickling (for example to run "
                    "in another process with n_jobs > 1), and charges made by a copy could not reach the "
                    "original, so a copy refuses every charge. Nothing was drawn and nothing was spent. "
                    "Run the fits in this process (n_jobs=None or 1), or give the copy a PrivacyBudget of its own.")
            if self._account is not None:
                try:
                    self._account.charge_fit(Budget(amount), description)
                except BudgetExceeded as refusal:
                    if refusal.requested is None or refusal.remaining is None:
                        reason = refusal.message
                    else:
                        reason = (f"it needs {refusal.quantity} {fmt(refusal.requested)} but only "
                                  f"{fmt(refusal.remaining)} remains of {self.name} (spent "
                                  f"{_shown(self._account.spent)}; {len(self._charges)} fit(s) charged through "
                                  "this object)")
                    raise OverBudgetError(
                        f"{description}: refused: {reason}. Nothing was drawn and nothing was spent. Every fit "
                        "spends its epsilon again (k-fold cross-validation spends k times epsilon); lower "
                        "epsilon, fit fewer times, or give the budget a larger total if the data's owner "
                        "allows it.") from None
            self._charges.append(FitCharge(description, amount))
            return amount

    def _charge_rho(self, amount: RhoZCDPBudget, description: str) -> RhoZCDPBudget:
        """Charge one Gaussian fit's rho (see the module docstring); refused by a budget without
        a zCDP total. Returns the rho charged."""
        if not amount.rho > 0:
            raise ValueError(f"a fit needs a rho greater than 0, got {amount}")
        with self._lock:
            if self._detached is not None or self._account is None:
                raise OverBudgetError(
                    f"{description}: refused: {self.name} "
                    f"{'is a copy made by pickling' if self._detached is not None else 'has no total'}, and a "
                    "fit charged in rho needs a zCDP total (PrivacyBudget(rho=R), or the account of a zCDP "
                    "session). Nothing was drawn and nothing was spent.")
            try:
                self._account.charge_fit(amount, description)  # type: ignore[arg-type]
            except MeasureMismatch:
                raise OverBudgetError(
                    f"{description}: refused: {self.name} accounts in (epsilon, delta), and a Gaussian fit has no "
                    "pure epsilon: give it a zCDP total (PrivacyBudget(rho=R), or a session with `budget E, D "
                    "using zcdp`). Nothing was drawn and nothing was spent.") from None
            except BudgetExceeded as refusal:
                raise OverBudgetError(
                    f"{description}: refused: {refusal.message}. Nothing was drawn and nothing was spent. Every fit "
                    "spends its rho again; lower rho, fit fewer times, or give the budget a larger total if the "
                    "data's owner allows it.") from None
            self._charges.append(FitCharge(description, Fraction(0), amount.rho))
            return amount

    # ------------------------------------------------------------------ shared, never copied
    def __copy__(self) -> PrivacyBudget:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> PrivacyBudget:
        return self

    def __getstate__(self) -> dict[str, Any]:
        total = self.total
        return {"name": self.name, "charges": list(self._charges), "total": total, "spent": self.spent}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.name = state["name"]
        self._charges = list(state["charges"])
        self._account = None
        self._detached = (state["total"], state["spent"])
        self._lock = threading.Lock()


_DEFAULT = PrivacyBudget(None, name="the default budget, default_budget()")


def default_budget() -> PrivacyBudget:
    """The budget charged by estimator fits given no `budget=`: one per process, no total.

    It records every such fit (`default_budget().spent`, `.charges`) and warns from the second
    fit on that the spending adds up; it refuses nothing.
    """
    return _DEFAULT


_UNBUDGETED_RHO_FITS = [0]  # Gaussian fits given neither budget= nor charge= in this process


def charge_rho_fit(estimator: str, cost: RhoZCDPBudget, description: str, budget: PrivacyBudget | None,
                   charge: Any, stacklevel: int = 2) -> Any:
    """Charge a Gaussian fit's whole rho before any draw, and return the charge function its
    learner calls before each draw (every estimator charged in rho uses it):

      * `budget` given: the budget is charged `cost` now (refused: `OverBudgetError`, nothing
        drawn or spent); the learner's steps are held within `cost` by a guard;
      * else `charge` given (an outside accountant): it is the learner's charge function, called
        with each step's rho before that step draws;
      * neither: nothing records the fit (a budget in epsilon, such as `default_budget()`, cannot
        hold a rho); from the second such fit in a process on, a `PrivacyBudgetWarning` says the
        spending adds up; the learner's steps are held within `cost`.
    """
    from jostle.privacy.subledger import option_guard

    if budget is not None:
        budget.charge(cost, description)
        return option_guard(estimator, cost)
    if charge is not None:
        return charge
    _UNBUDGETED_RHO_FITS[0] += 1
    if _UNBUDGETED_RHO_FITS[0] > 1:
        warnings.warn(f"{estimator}.fit spends its rho again, on top of the earlier fits in this process, and no "
                      "budget= records it: pass budget=PrivacyBudget(rho=R) to share and cap the spending "
                      "(docs/estimators.md).", PrivacyBudgetWarning, stacklevel=stacklevel + 1)
    return option_guard(estimator, cost)


def charge_default(estimator: str, epsilon: float, description: str, stacklevel: int) -> Fraction:
    """Charge a fit given no budget to the default budget, warning when fits add up."""
    amount = _DEFAULT.charge(epsilon, description)
    if _DEFAULT.charge_count > 1:
        warnings.warn(
            f"{estimator}.fit spends its epsilon again, on top of the earlier fits in this process: fits "
            "given no budget= are charged to jostle.privacy.shared_budget.default_budget(), which has no total, so it "
            "records and warns but refuses nothing (k-fold cross_val_score spends k times epsilon; GridSearchCV "
            "spends it per candidate and fold, plus the refit). Pass budget=PrivacyBudget(total) to share "
            "and cap the spending; see docs/estimators.md.", PrivacyBudgetWarning, stacklevel=stacklevel + 1)
    return amount
