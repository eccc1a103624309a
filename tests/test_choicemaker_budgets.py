"""Typed budgets and privacy units at the family interface (issue 22).

The engine's side (`jostle.choicemaker.budgets`, the plan, the guard, the dispatch's refusals) is
tested on the toy family; the learners' entry points in programs (trees, rule lists, histograms)
run in an interpreter whose accountant keeps its charges in memory: in a zCDP program they run
at the pure epsilon within their rho allotment and charge that epsilon, which the accountant
counts as epsilon^2 / 2; a table of stability above 1 (or unbounded) is refused by the tree and
rule-list learners before any charge, while the histogram options scale to it; a table under a
unit a family does not declare is refused before any charge.
"""

from __future__ import annotations

import dataclasses
import io
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from jostle.choicemaker.budgets import as_budget, in_measure, pure_cost, pure_epsilon_within, scaled
from jostle.choicemaker.private_dispatch import BudgetGuard, ChoiceBudgetError, ChoiceSpec, Runtime, dispatch
from jostle.choicemaker.family import OverstatedCost, UnsupportedMeasure, UnsupportedUnit, run_epsilon
from jostle.choicemaker.measurement import plan_budget
from jostle.data.schema import Categorical, Schema
from jostle.diagnostics.errors import JostleRuntimeError
from jostle.diagnostics.source import BUILTIN_SPAN
from jostle.language.checker import check
from jostle.language.evaluator import Interpreter
from jostle.language.parser import parse
from jostle.language.values import Table
from jostle.privacy.accounting import ZCDP, Accounting, epsilon_within_rho
from jostle.privacy.budget import Accountant
from jostle.privacy.conversions import pure_to_rho
from jostle.privacy.measures import Budget, PureDPBudget, RhoZCDPBudget
from jostle.privacy.noise import Randomness
from jostle.privacy.units import REPLACE_ONE, ROW, entity
from tests import toy_family


# ====================================================================================== the engine
def test_a_number_is_a_pure_epsilon_and_a_budget_stays_typed() -> None:
    assert as_budget(0.5) == Budget(Fraction(1, 2), Fraction(0))
    assert as_budget(Fraction(7, 10)) == Budget(Fraction(7, 10), Fraction(0))
    rho = RhoZCDPBudget(Fraction(1, 20))
    assert as_budget(rho) is rho
    with pytest.raises(ValueError):
        as_budget(float("inf"))
    with pytest.raises(ValueError):
        as_budget(-1)


def test_the_pure_epsilon_within_a_rho_costs_at_most_the_rho() -> None:
    for rho in (Fraction(1, 20), Fraction(7, 100), Fraction(1, 3), Fraction(2)):
        epsilon = pure_epsilon_within(RhoZCDPBudget(rho))
        assert pure_to_rho(epsilon) <= rho  # Bun and Steinke 2016, Prop. 1.4: e-DP is e^2/2-zCDP
        assert float(epsilon) == pytest.approx(float((2 * rho) ** 0.5), rel=1e-10)
        assert in_measure(pure_cost(RhoZCDPBudget(rho)), RhoZCDPBudget(rho)) == RhoZCDPBudget(pure_to_rho(epsilon))
    assert pure_epsilon_within(Budget(Fraction(1, 3), Fraction(0))) == Fraction(1, 3)


def test_the_plan_splits_a_rho_exactly() -> None:
    metafeatures = list(toy_family.TOY_METAFEATURES.values())
    rho = RhoZCDPBudget(Fraction(7, 100))
    plan = plan_budget(metafeatures, rho, 0.1)
    assert plan == {"metafeature size": RhoZCDPBudget(Fraction(7, 1000)), "option": RhoZCDPBudget(Fraction(63, 1000))}
    assert sum(plan.values(), RhoZCDPBudget.zero()) == rho
    assert plan_budget(metafeatures, 0.5, 0.1)["option"] == scaled(as_budget(0.5), Fraction(9, 10))


def test_the_guard_counts_pure_charges_in_rho_and_refuses_before_forwarding() -> None:
    forwarded: list = []
    guard = BudgetGuard(RhoZCDPBudget(Fraction(1, 8)), lambda cost, what: forwarded.append(cost))
    guard.charge(PureDPBudget(Fraction(1, 2)), "first")  # 1/8 in rho: the whole budget
    assert guard.spent == RhoZCDPBudget(Fraction(1, 8)) and forwarded == [PureDPBudget(Fraction(1, 2))]
    with pytest.raises(ChoiceBudgetError):
        guard.charge(PureDPBudget(Fraction(1, 10**6)), "one too many")
    assert len(forwarded) == 1
    pure = BudgetGuard(1.0)
    with pytest.raises(ChoiceBudgetError):  # a rho has no pure guarantee
        pure.charge(RhoZCDPBudget(Fraction(1, 100)), "a rho")
    assert pure.spent == Budget.zero()


def _toy_spec(family=None):
    family = family or toy_family.FAMILY
    return ChoiceSpec(family, dict(family.options()), list(family.metafeatures().values()), 0.1)


class _PriorRuntime(Runtime):
    """The default runtime, choosing the Option `laplace_sum` by its prior."""

    def priors(self, features):
        return {"laplace_sum": 0.0}


class Forced:
    """A runtime choosing `laplace_sum` (`runtime`) and the charges it was asked for (`charges`)."""

    def __init__(self, family) -> None:
        self.charges: list = []
        self.runtime = _PriorRuntime(family, Randomness(3), lambda cost, what: self.charges.append((what, cost)))


def test_a_zcdp_dispatch_charges_pure_epsilons_within_the_rho() -> None:
    family = toy_family.FAMILY
    data = family.neighbouring_inputs(1)[0]
    forced = Forced(family)
    rho = RhoZCDPBudget(Fraction(1, 20))
    result = dispatch(_toy_spec(), data, rho, runtime=forced.runtime)
    size_part, option_part = RhoZCDPBudget(Fraction(1, 200)), RhoZCDPBudget(Fraction(9, 200))
    assert forced.charges == [("metafeature size", PureDPBudget(epsilon_within_rho(size_part.rho))),
                              ("option laplace_sum", PureDPBudget(epsilon_within_rho(option_part.rho)))]
    counted = sum((in_measure(cost, rho) for _, cost in forced.charges), RhoZCDPBudget.zero())
    assert rho.covers(counted) and float(counted.rho) == pytest.approx(0.05, rel=1e-9)
    assert result.trace.budget == rho and result.trace.option_budget == option_part
    assert result.trace.option_epsilon == pytest.approx(float(epsilon_within_rho(option_part.rho)))
    assert result.features["epsilon"] == pytest.approx((2 * 0.05) ** 0.5, rel=1e-9)  # the call's epsilon
    text = result.trace.as_dict()
    assert text["measure"] == "zcdp" and text["rho"] == 0.05 and "epsilon" not in text


def test_undeclared_units_and_measures_are_refused_before_anything_happens() -> None:
    family = toy_family.FAMILY  # declares the row unit, pure and zCDP budgets
    data = family.neighbouring_inputs(1)[0]
    for unit in (entity("patient"), REPLACE_ONE):
        forced = Forced(family)
        with pytest.raises(UnsupportedUnit, match=str(unit).replace("(", r"\(").replace(")", r"\)")):
            dispatch(_toy_spec(), data, 0.5, runtime=forced.runtime, unit=unit)
        assert forced.charges == []
    forced = Forced(family)
    with pytest.raises(UnsupportedMeasure, match="approximate"):
        dispatch(_toy_spec(), data, Budget(Fraction(1, 2), Fraction(1, 10**6)), runtime=forced.runtime)
    assert forced.charges == []
    result = dispatch(_toy_spec(), data, 0.5, runtime=Forced(family).runtime, unit=ROW)
    assert result.trace.unit == "row"


def test_an_option_that_overstates_its_cost_is_refused_before_any_charge() -> None:
    @dataclasses.dataclass(frozen=True)
    class Greedy(toy_family.ToyOption):
        def planned_cost(self, budget):
            return pure_cost(budget) + pure_cost(budget)  # twice its part

    class GreedyToy(toy_family.ToyFamily):
        name = "toy_greedy"

        def options(self):
            return {"laplace_sum": Greedy("laplace_sum"), "count_and_sum": toy_family.TOY_OPTIONS["count_and_sum"]}

    family = GreedyToy()
    forced = Forced(family)
    with pytest.raises(OverstatedCost, match="laplace_sum"):
        dispatch(_toy_spec(family), family.neighbouring_inputs(1)[0], 0.5, runtime=forced.runtime)
    assert forced.charges == []  # refused for every available Option, before the metafeatures


# ====================================================================================== the learners
SCHEMA = Schema.of({"a": Categorical(["x", "y"]), "b": Categorical(["p", "q", "r"]),
                    "class": Categorical(["yes", "no"])})


def _frame(rows: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.choice(["x", "y"], rows)
    return pd.DataFrame({"a": a, "b": rng.choice(["p", "q", "r"], rows),
                         "class": np.where((a == "x") ^ (rng.random(rows) < 0.1), "yes", "no")})


def _run(source: str, stability=1, unit=None, zcdp: bool = False) -> tuple[str, Accountant, Exception | None]:
    """Run `source` with a private table `t` (in-memory accountant, no durable ledger)."""
    accountant = Accountant(None, None, accounting=Accounting(ZCDP) if zcdp else None)
    output = io.StringIO()
    interp = Interpreter(accountant, Randomness(5), output)
    root = accountant.root if unit is None else accountant.root_for(unit)  # the unit is the data root's
    table = Table(_frame(), SCHEMA, True, "t", root, BUILTIN_SPAN, stability=stability)
    if unit is not None and hasattr(table, "unit"):
        table = dataclasses.replace(table, unit=unit)
    interp.globals.define("t", table)
    program = parse(source)
    check(program, interp.builtins.values, {"t"})
    try:
        interp.run_program(program)
    except Exception as error:  # noqa: BLE001 - the tests judge it
        return output.getvalue(), accountant, error
    return output.getvalue(), accountant, None


LEARNERS = ['FriedmanSchuster(t, "class")', 'BayesianRuleList(t, "class", max_rows=1000)',
            'BRLSchema(t, "class")']


@pytest.mark.parametrize("call", LEARNERS)
def test_learners_in_a_zcdp_program_run_at_the_epsilon_within_their_rho(call: str) -> None:
    out, accountant, error = _run(f"budget rho(0.125)\nm = {call}\nprint(m)", zcdp=True)
    assert error is None, error
    [charge] = accountant.ledger
    assert charge.budget == PureDPBudget(Fraction(1, 2))  # sqrt(2 * 1/8): the pure epsilon charged
    assert charge.charged == RhoZCDPBudget(Fraction(1, 8))  # counted by the accountant as e^2 / 2
    assert "rho 0.125" in out and "epsilon 0.5" in out


@pytest.mark.parametrize("call", LEARNERS)
def test_learners_in_a_dp_program_charge_their_epsilon_as_before(call: str) -> None:
    out, accountant, error = _run(f"budget 1\nm = {call}\nprint(m)")
    assert error is None, error
    [charge] = accountant.ledger
    assert charge.budget == PureDPBudget(1) and "epsilon 1" in out and "rho" not in out


@pytest.mark.parametrize("call", LEARNERS)
@pytest.mark.parametrize("stability", [2, None])
def test_tree_and_rule_list_learners_refuse_a_table_of_stability_above_one(call: str, stability) -> None:
    out, accountant, error = _run(f"budget 1\nm = {call}", stability=stability)
    assert isinstance(error, JostleRuntimeError) and "stability" in str(error) and "bound_per_key" in error.hint
    assert accountant.ledger == []  # nothing was charged


@pytest.mark.parametrize("call", LEARNERS)
def test_tree_and_rule_list_learners_refuse_replace_one_data(call: str) -> None:
    out, accountant, error = _run(f"budget 1\nm = {call}", unit=REPLACE_ONE)
    assert isinstance(error, JostleRuntimeError) and "replace_one" in str(error)
    assert accountant.ledger == []


def test_histogram_options_scale_to_the_table_stability() -> None:
    source = 'budget 1\nh = histogram(t, "b")\nprint(Identity(h, all_ranges(3), epsilon=1))'
    for stability in (1, 2):
        out, accountant, error = _run(source, stability=stability)
        assert error is None, error
        [charge] = accountant.ledger
        assert charge.budget == PureDPBudget(1)


def test_histogram_options_in_a_zcdp_program() -> None:
    out, accountant, error = _run('budget rho(0.5)\nh = histogram(t, "b")\nprint(Identity(h, all_ranges(3)))', zcdp=True)
    assert error is None, error
    [charge] = accountant.ledger
    assert charge.budget == PureDPBudget(1) and charge.charged == RhoZCDPBudget(Fraction(1, 2))


CHOOSER = '''h = histogram(t, "b")
q = all_ranges(3)
option Flat(db, queries):
    answer:
        n = {{ sum(db) }}
        return map(lambda i: n / 3, range(3))
    predict(F):
        return F.sparsity
option Cells(db, queries):
    answer:
        return {{ db }}
    predict(F):
        return 2 - F.sparsity
choicemaker H among {Flat, Cells, Identity} informed by {sparsity} trained on none
estimate = H(h, q)
print(trace(H))
print(explain(H))
'''


def test_a_choicemaker_in_a_zcdp_program_splits_its_rho() -> None:
    """The rho allotment of the call is split by the plan; the built-in metafeature charges the
    pure epsilon within its part (counted as epsilon^2 / 2), the Jostle option runs under a cap
    of its rho part and its own `{{ }}` charge within it; the trace shows rhos."""
    out, accountant, error = _run("budget rho(0.125)\n" + CHOOSER, zcdp=True)
    assert error is None, error
    metafeature, *option = accountant.ledger
    assert metafeature.budget == PureDPBudget(epsilon_within_rho(Fraction(1, 80)))  # a tenth of 1/8
    assert RhoZCDPBudget(Fraction(1, 80)).covers(metafeature.charged)
    spent = sum((c.charged for c in accountant.ledger), RhoZCDPBudget.zero())
    assert RhoZCDPBudget(Fraction(1, 8)).covers(spent)
    assert sum((c.charged for c in option), RhoZCDPBudget.zero()) == RhoZCDPBudget(Fraction(9, 80))
    assert "rho: 0.125, metafeature_rho: 0.0125, option_rho: 0.1125, option_epsilon: 0.4743" in out
    assert "budget: rho 0.125 = 0.0125 on metafeatures + 0.1125 on" in out


def test_a_choicemaker_in_a_dp_program_traces_epsilons_as_before() -> None:
    out, accountant, error = _run("budget 1\n" + CHOOSER)
    assert error is None, error
    assert accountant.ledger[0].budget == PureDPBudget(Fraction(1, 10))
    assert "epsilon: 1.0, metafeature_epsilon: 0.1, option_epsilon: 0.9, measuring: ''" in out
    assert "rho" not in out and "budget: epsilon 1 = 0.1 on metafeatures + 0.9 on" in out


def test_a_choicemaker_refuses_a_table_under_an_undeclared_unit_before_any_charge() -> None:
    out, accountant, error = _run("budget 1\n" + CHOOSER, unit=REPLACE_ONE)
    assert isinstance(error, JostleRuntimeError) and "replace_one" in str(error) and "histograms" in str(error)
    assert accountant.ledger == []


def test_a_pure_epsilon_in_a_zcdp_program_is_counted_as_its_rho() -> None:
    """`H(h, q, epsilon=0.5)` in a zCDP program: a pure budget (the family declares both), whose
    Jostle option runs under the rho cap its part would cost (0.45^2 / 2), so the call spends at
    most 0.5^2 / 2 in rho; a `rho=` budget in a DP program is refused before any charge."""
    source = "budget rho(0.5)\n" + CHOOSER.replace("estimate = H(h, q)", "estimate = H(h, q, epsilon=0.5)")
    out, accountant, error = _run(source, zcdp=True)
    assert error is None, error
    assert accountant.ledger[0].budget == PureDPBudget(Fraction(1, 20))
    spent = sum((c.charged for c in accountant.ledger), RhoZCDPBudget.zero())
    assert RhoZCDPBudget(Fraction(1, 8)).covers(spent)
    assert "budget: epsilon 0.5 = 0.05 on metafeatures + 0.45 on" in out
    source = "budget 1\n" + CHOOSER.replace("estimate = H(h, q)", "estimate = H(h, q, rho=0.5)")
    out, accountant, error = _run(source)
    assert isinstance(error, JostleRuntimeError) and "zCDP" in str(error) and accountant.ledger == []


def test_experience_keeps_its_epsilon_column_and_reads_old_pieces_as_pure() -> None:
    from jostle.choicemaker.experience import run_piece, with_measure

    family = toy_family.FAMILY
    task = toy_family.toy_corpus()[0]
    piece = run_piece(family, task, None, list(family.options().values()), list(family.metafeatures().values()),
                      toy_family.ToyGrid(), 0.1)
    assert (piece["measure"] == "pure").all() and piece["option_epsilon"].dtype == float
    # the float the Options ran at: the largest not above 9/10 of the instance's epsilon
    assert set(piece["option_epsilon"]) == {run_epsilon(scaled(as_budget(e), Fraction(9, 10)))
                                            for e in toy_family.ToyGrid().epsilons}
    old = piece.drop(columns=["measure"])  # a piece cached before budgets were typed
    assert with_measure(old).equals(old.assign(measure="pure"))


def test_a_rho_too_small_for_any_epsilon_is_refused_before_any_charge() -> None:
    """A rho whose parts hold no representable pure epsilon (epsilon_within_rho rounds down to
    12 digits): refused before the metafeatures are charged, not after."""
    family = toy_family.FAMILY
    forced = Forced(family)
    with pytest.raises(ValueError, match="too small"):
        dispatch(_toy_spec(), family.neighbouring_inputs(1)[0], RhoZCDPBudget(Fraction(1, 10**26)),
                 runtime=forced.runtime)
    assert forced.charges == []
