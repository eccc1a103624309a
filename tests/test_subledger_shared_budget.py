"""The one budget shared by the estimators' fits (`jostle.privacy.shared_budget.PrivacyBudget`)
and the small account interface it charges (`BudgetAccount`: a Session, its accountant, or any
object with `cap`, `spent` and `charge_fit` that checks before it records)."""

from __future__ import annotations

import copy
import pickle
from fractions import Fraction

import pytest

from jostle import Session
from jostle.diagnostics.errors import BudgetExceeded
from jostle.privacy.measures import AnyBudget, Budget, RhoZCDPBudget
from jostle.privacy.shared_budget import BudgetAccount, PrivacyBudget
from jostle.privacy.subledger import OverBudgetError


def test_the_old_homes_name_the_same_budget() -> None:
    import jostle.learners.trees as trees
    from jostle.learners.trees import shared_budget

    assert trees.PrivacyBudget is PrivacyBudget and shared_budget.PrivacyBudget is PrivacyBudget
    assert trees.BudgetExceededError is OverBudgetError


def test_a_session_is_an_account_and_refuses_before_recording() -> None:
    with Session(budget=1.0, ledger_path=":memory:") as session:
        assert isinstance(session, BudgetAccount) and isinstance(session.accountant, BudgetAccount)
        budget = PrivacyBudget(account=session)
        assert budget.charge(0.6, "first fit") == Fraction(3, 5)
        assert session.spent == Budget(Fraction(3, 5)) and len(session.ledger) == 1
        with pytest.raises(OverBudgetError, match="only 0.4 remains"):
            budget.charge(0.6, "second fit")
        assert session.spent == Budget(Fraction(3, 5)) and len(session.ledger) == 1 and len(budget.charges) == 1
        assert budget.total == Budget(Fraction(1)) and budget.remaining == Budget(Fraction(2, 5))


def test_a_zcdp_session_counts_a_fit_as_its_rho_and_says_so_when_it_refuses() -> None:
    with Session(rho=0.125, ledger_path=":memory:") as session:
        budget = PrivacyBudget(account=session)
        budget.charge(0.5, "a fit at epsilon 1/2")  # rho 1/8: all of it
        assert session.spent == RhoZCDPBudget(Fraction(1, 8))
        with pytest.raises(OverBudgetError, match="Nothing was drawn"):
            budget.charge(0.01, "one more fit")
        assert session.spent == RhoZCDPBudget(Fraction(1, 8)) and len(budget.charges) == 1


class _Account:
    """A minimal account: a total, what is spent, and a check before it records."""

    def __init__(self, total: Fraction) -> None:
        self.total, self.recorded = Budget(total), Budget.zero()

    @property
    def cap(self) -> AnyBudget | None:
        return self.total

    @property
    def spent(self) -> AnyBudget:
        return self.recorded

    def charge_fit(self, amount: Budget, description: str) -> None:
        if not self.total.covers(self.recorded + amount):
            raise BudgetExceeded(f"{description}: over", requested=amount.epsilon,
                                 remaining=self.total.epsilon - self.recorded.epsilon)
        self.recorded = self.recorded + amount


def test_any_account_with_the_interface_is_charged_and_nothing_else_is_accepted() -> None:
    account = _Account(Fraction(1))
    budget = PrivacyBudget(account=account)
    budget.charge(Fraction(1, 2), "fit")
    with pytest.raises(OverBudgetError, match="only 1/2 remains|only 0.5 remains"):
        budget.charge(Fraction(3, 4), "fit")
    assert account.recorded == Budget(Fraction(1, 2))
    with pytest.raises(TypeError):
        PrivacyBudget(account=object())  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        PrivacyBudget(1.0, account=account)


def test_copies_share_the_budget_and_a_pickled_copy_refuses_everything() -> None:
    budget = PrivacyBudget(1.0)
    assert copy.copy(budget) is budget and copy.deepcopy(budget) is budget
    budget.charge(Fraction(1, 4), "fit")
    detached = pickle.loads(pickle.dumps(budget))
    assert detached.detached and detached.spent == Budget(Fraction(1, 4))
    with pytest.raises(OverBudgetError, match="copy made by pickling"):
        detached.charge(Fraction(1, 100), "fit in another process")
    assert budget.spent == Budget(Fraction(1, 4))
