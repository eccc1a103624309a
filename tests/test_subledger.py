"""The one sub-ledger (`jostle.privacy.subledger`) and the one over-budget error.

What is checked: the guard refuses before it adds or forwards (a refused charge leaves the total,
the records and the outside accountant as they were); amounts are exact (a float is its binary
value, never snapped); disjoint parts cost their maximum; a pure epsilon counts e^2/2 against a
rho; and every old path (a histogram algorithm, a tree Option, a rule-list Option, the
dispatch's guard) raises the one class when made to overspend (negative controls).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from jostle.privacy.measures import Budget, PureDPBudget, RhoZCDPBudget
from jostle.privacy.subledger import (BudgetExceededError, ChoiceBudgetError, HistogramBudgetError, LearnerOverspent,
                                      OverBudgetError, Subledger, option_guard)


def test_every_old_name_is_the_one_class_and_it_is_a_value_error() -> None:
    import importlib

    import jostle.learners.brl.accounting as brl
    import jostle.learners.histograms as histograms
    import jostle.learners.trees as trees

    dispatch = importlib.import_module("jostle.choicemaker.private_dispatch")
    for name in (BudgetExceededError, ChoiceBudgetError, HistogramBudgetError, LearnerOverspent,
                 trees.BudgetExceededError, brl.BudgetExceededError, histograms.HistogramBudgetError,
                 dispatch.ChoiceBudgetError):
        assert name is OverBudgetError
    assert issubclass(OverBudgetError, ValueError)
    assert issubclass(dispatch.BudgetGuard, Subledger) and dispatch.BudgetGuard is not Subledger


def test_a_refused_charge_leaves_the_total_the_records_and_the_accountant_unchanged() -> None:
    forwarded: list[tuple[object, str]] = []
    ledger = Subledger(1.0, lambda cost, what: forwarded.append((cost, what)))
    ledger.charge(0.7, "first")
    with pytest.raises(OverBudgetError, match="second"):
        ledger.charge(0.3000000000000001, "second")  # 0.7 + this > 1, exactly
    assert ledger.spent == Budget(Fraction(0.7)) and len(ledger.records) == 1
    assert forwarded == [(Budget(Fraction(0.7)), "first")]
    ledger.charge(0.3 - 1e-16, "third")  # fits exactly
    assert ledger.spent.epsilon <= 1 and [r.description for r in ledger.records] == ["first", "third"]


def test_an_outside_refusal_adds_nothing() -> None:
    def refuse(cost: object, what: str) -> None:
        raise RuntimeError("the outside accountant refuses")

    ledger = Subledger(Fraction(1), refuse)
    with pytest.raises(RuntimeError):
        ledger.charge(Fraction(1, 2), "refused outside")
    assert ledger.spent == Budget.zero() and ledger.records == []


def test_amounts_are_exact_fractions_and_floats_are_never_snapped() -> None:
    tenths = Subledger(Fraction(1))
    for _ in range(10):
        tenths.charge(Fraction(1, 10), "a tenth")
    assert tenths.spent == Budget(Fraction(1)) and tenths.remaining == Budget.zero()
    with pytest.raises(OverBudgetError):
        tenths.charge(Fraction(1, 10**30), "one more")
    floats = Subledger(1.0)
    for _ in range(9):
        floats.charge(0.1, "0.1")
    with pytest.raises(OverBudgetError):  # the float 0.1 is a little above 1/10: ten do not fit in 1
        floats.charge(0.1, "the tenth 0.1")
    assert floats.spent_epsilon == 9 * Fraction(0.1) and isinstance(floats.spent_epsilon, Fraction)


def test_disjoint_parts_cost_their_maximum_and_only_increases_are_forwarded() -> None:
    forwarded: list[tuple[object, str]] = []
    ledger = Subledger(1.0, lambda cost, what: forwarded.append((cost, what)), forward_increase=True)
    ledger.charge(Fraction(1, 4), "whole")
    ledger.charge(Fraction(1, 2), "part 1", part=1)
    ledger.charge(Fraction(1, 2), "part 2", part=2)  # parallel to part 1: free
    ledger.charge(Fraction(1, 8), "part 2 again", part=2)  # now part 2 is the costliest
    assert ledger.spent == Budget(Fraction(1, 4) + Fraction(5, 8))
    assert ledger.part_spent(1) == Budget(Fraction(1, 2)) and ledger.part_spent(None) == Budget(Fraction(1, 4))
    assert forwarded == [(Budget(Fraction(1, 4)), "whole"), (Budget(Fraction(1, 2)), "part 1"),
                         (Budget(Fraction(1, 8)), "part 2 again")]
    assert [r.increase for r in ledger.records][2] == Budget.zero()
    with pytest.raises(OverBudgetError):
        ledger.charge(Fraction(3, 8), "part 1 past the cap", part=1)  # part 1 at 7/8: 1/4 + 7/8 > 1
    assert ledger.spent == Budget(Fraction(7, 8))


def test_a_pure_epsilon_counts_its_rho_and_a_rho_has_no_pure_guarantee() -> None:
    forwarded: list[object] = []
    rho = Subledger(RhoZCDPBudget(Fraction(1, 8)), lambda cost, what: forwarded.append(cost))
    rho.charge(PureDPBudget(Fraction(1, 2)), "e = 1/2 is rho 1/8")
    assert rho.spent == RhoZCDPBudget(Fraction(1, 8)) and forwarded == [PureDPBudget(Fraction(1, 2))]
    with pytest.raises(OverBudgetError):
        rho.charge(PureDPBudget(Fraction(1, 10**6)), "one too many")
    pure = Subledger(1.0, lambda cost, what: forwarded.append(cost))
    with pytest.raises(OverBudgetError):
        pure.charge(RhoZCDPBudget(Fraction(1, 100)), "a rho")
    assert pure.spent == Budget.zero() and len(forwarded) == 1


def test_a_charge_must_be_positive_and_finite() -> None:
    ledger = Subledger(1.0)
    for bad in (0.0, -0.1, float("inf"), float("nan")):
        with pytest.raises(ValueError):
            ledger.charge(bad, "bad")
    assert ledger.records == []


# ------------------------------------------------------------------ negative controls: overspending learners
def test_a_histogram_algorithm_given_a_smaller_ledger_raises_the_one_class_before_drawing() -> None:
    import jostle.learners.histograms as H
    from jostle.privacy.noise import Randomness

    x = np.arange(16, dtype=float)
    ledger = H.PrivacyLedger(0.5)
    with pytest.raises(OverBudgetError):
        H.get_algorithm("Identity")(x, 1.0, None, Randomness(0), ledger)
    assert ledger.charges == [] and ledger.spent == 0


def _overspending_option_raises(family_module: str) -> None:
    import importlib

    from jostle.privacy.noise import Randomness

    family = importlib.import_module(family_module).FAMILY
    data, _ = family.neighbouring_inputs(0)
    forwarded: list[tuple[object, str]] = []
    guard = Subledger(0.5, lambda cost, what: forwarded.append((cost, what)), name="what the Option was charged")
    option = next(iter(family.options().values()))
    with pytest.raises(OverBudgetError):  # the learner runs at 2, its Option was charged 0.5
        option.fit(data, 2.0, Randomness(1), guard.guard, None)
    assert guard.spent.epsilon <= Fraction(1, 2) and len(forwarded) == len(guard.records)


def test_a_tree_option_that_overspends_raises_the_one_class() -> None:
    _overspending_option_raises("jostle.learners.trees.family")


def test_a_rule_list_option_that_overspends_raises_the_one_class() -> None:
    _overspending_option_raises("jostle.learners.brl.family")


def test_option_guard_refuses_past_the_options_charge() -> None:
    guard = option_guard("Some Option", 0.25)
    guard(0.125, "half")
    guard(0.125, "the other half")
    with pytest.raises(OverBudgetError, match="Some Option"):
        guard(2.0**-60, "a hair more")


def test_the_dispatch_guard_refuses_the_one_class_before_forwarding() -> None:
    import importlib

    BudgetGuard = importlib.import_module("jostle.choicemaker.private_dispatch").BudgetGuard  # noqa: N806

    forwarded: list[object] = []
    guard = BudgetGuard(1.0, lambda cost, what: forwarded.append(cost))
    guard.charge(0.7, "metafeature size")
    with pytest.raises(OverBudgetError):
        guard.charge(0.5, "option X")
    assert len(forwarded) == 1 and guard.spent == Budget(Fraction(0.7))


def test_a_models_record_of_charges_is_not_a_live_guard_but_a_dispatchs_guard_is() -> None:
    """Fitted models keep their sub-ledger (a public record of charges): it may be returned to
    Python; the guard of a running dispatch may not (jostle.language.detach)."""
    import importlib

    from jostle.language.detach import live_kind
    from jostle.learners.trees.accounting import PrivacyLedger

    BudgetGuard = importlib.import_module("jostle.choicemaker.private_dispatch").BudgetGuard  # noqa: N806
    assert live_kind(PrivacyLedger(1.0).ledger) is None and live_kind(Subledger(1.0)) is None
    assert live_kind(BudgetGuard(1.0)) == "a dispatch's budget guard"


def test_a_part_overspending_inside_a_programs_dispatch_is_an_internal_error(monkeypatch: pytest.MonkeyPatch,
                                                                             capsys: pytest.CaptureFixture) -> None:
    """An Option that spends past what it was charged is a bug in Jostle, not the program's: the
    language lets the one error through (exit code 70, "internal error") rather than turning it
    into a user error with a hint about priors (negative control: the runtime made to overspend)."""
    from jostle.cli import EXIT_CODES, _report
    from jostle.language import choice_runtime
    from tests.test_choicemaker_budgets import CHOOSER, _run

    def overspend(self: object, option: object, data: object, amount: object, released: object) -> None:
        raise OverBudgetError("option Cells: spent past what it was charged")

    monkeypatch.setattr(choice_runtime.LanguageRuntime, "run", overspend)
    _, _, error = _run("budget 1\n" + CHOOSER)
    assert type(error) is OverBudgetError
    assert _report(error) == EXIT_CODES["internal"] and "internal error" in capsys.readouterr().err
