"""Unit tests of the accountant: exact budgets, composition, contexts and refusals."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jostle.privacy.budget import Accountant, Budget, ParallelGroup, cost, exact
from jostle.diagnostics.errors import BudgetExceeded, JostleRuntimeError


def test_exact_snaps_decimal_and_division_roundoff():
    assert exact(0.1) == Fraction(1, 10)
    assert exact(1.0 / 3) == Fraction(1, 3)
    assert exact(0.7 / 7) == Fraction(1, 10)
    assert exact("0.25") == Fraction(1, 4)
    # Any float is represented within a relative 1e-12, and noise is calibrated with this
    # exact value (float(exact(x))), so what is charged is what the noise provides.
    value = 0.123456789012345
    assert abs(exact(value) - Fraction(value)) <= Fraction(1, 10**12) * Fraction(value)


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), "abc", True])
def test_exact_rejects_bad_values(bad):
    with pytest.raises(JostleRuntimeError):
        exact(bad)


@pytest.mark.parametrize("parts", [3, 7, 10, 49, 1000])
def test_equal_splits_are_never_refused(parts):
    total = 0.7
    accountant = Accountant(Budget.of(total))
    for _ in range(parts):
        accountant.charge(Budget.of(total / parts), accountant.root, "test", "", None)
    assert accountant.spent.epsilon == exact(total)
    with pytest.raises(BudgetExceeded):
        accountant.charge(Budget.of(total / parts), accountant.root, "test", "", None)


def test_sum_of_tenths_is_exactly_one():
    accountant = Accountant(Budget.of(1.0))
    for _ in range(10):
        accountant.charge(Budget.of(0.1), accountant.root, "laplace", "", None)
    assert accountant.remaining.epsilon == 0


def test_refusal_states_requested_remaining_difference_and_changes_nothing():
    accountant = Accountant(Budget.of(1.0))
    accountant.charge(Budget.of(0.75), accountant.root, "laplace", "", None)
    before = list(accountant.ledger)
    with pytest.raises(BudgetExceeded) as caught:
        accountant.charge(Budget.of(0.5), accountant.root, "laplace", "", None)
    error = caught.value
    assert error.requested == Fraction(1, 2)
    assert error.remaining == Fraction(1, 4)
    assert error.difference == Fraction(1, 4)
    assert "requested 0.5" in error.message and "remaining 0.25" in error.message
    assert "difference 0.25" in error.message
    assert accountant.ledger == before


def test_delta_is_accounted_separately():
    accountant = Accountant(Budget.of(10, 1e-5))
    accountant.charge(Budget.of(1, 6e-6), accountant.root, "gaussian", "", None)
    with pytest.raises(BudgetExceeded) as caught:
        accountant.charge(Budget.of(1, 6e-6), accountant.root, "gaussian", "", None)
    assert caught.value.quantity == "delta"


def test_parallel_parts_cost_the_maximum():
    accountant = Accountant(Budget.of(1.0))
    group = ParallelGroup(accountant.root, "sex")
    female, male = group.part("F"), group.part("M")
    accountant.charge(Budget.of(0.6), female, "laplace", "", None)
    accountant.charge(Budget.of(0.4), male, "laplace", "", None)
    accountant.charge(Budget.of(0.2), male, "laplace", "", None)
    assert accountant.spent.epsilon == Fraction(3, 5)
    # Another 0.4 on the whole table adds sequentially on top of the parts.
    accountant.charge(Budget.of(0.4), accountant.root, "laplace", "", None)
    assert accountant.spent.epsilon == 1
    with pytest.raises(BudgetExceeded):
        accountant.charge(Budget.of(0.01), male, "laplace", "", None)


def test_part_charge_may_fit_when_another_part_already_spent_more():
    accountant = Accountant(Budget.of(1.0))
    group = ParallelGroup(accountant.root, "region")
    north, south = group.part("north"), group.part("south")
    accountant.charge(Budget.of(1.0), north, "laplace", "", None)
    accountant.charge(Budget.of(1.0), south, "laplace", "", None)  # parallel: still 1
    assert accountant.spent.epsilon == 1


def test_nested_partitions_and_two_partitions_of_one_table_add_up():
    accountant = Accountant(Budget.of(5.0))
    by_sex = ParallelGroup(accountant.root, "sex")
    by_age = ParallelGroup(accountant.root, "age")
    female = by_sex.part("F")
    young = by_age.part("young")
    inner = ParallelGroup(female, "smoker")
    accountant.charge(Budget.of(1), inner.part("yes"), "laplace", "", None)
    accountant.charge(Budget.of(2), inner.part("no"), "laplace", "", None)
    accountant.charge(Budget.of(1), by_sex.part("M"), "laplace", "", None)
    assert accountant.spent.epsilon == 2
    accountant.charge(Budget.of(1), young, "laplace", "", None)  # another partition: sequential
    assert accountant.spent.epsilon == 3


def test_contexts_cap_their_body_and_count_only_their_own_charges():
    accountant = Accountant(Budget.of(1.0))
    accountant.charge(Budget.of(0.5), accountant.root, "laplace", "", None)
    with accountant.context(Budget.of(0.3), "block", None, 0) as block:
        accountant.charge(Budget.of(0.2), accountant.root, "laplace", "", None)
        with pytest.raises(BudgetExceeded) as caught:
            accountant.charge(Budget.of(0.2), accountant.root, "laplace", "", None)
        assert caught.value.remaining == Fraction(1, 10)
        assert len(block.charges) == 1
    assert accountant.spent.epsilon == Fraction(7, 10)
    assert len(accountant.ledger) == 2


def test_context_per_release_allotment():
    accountant = Accountant(Budget.of(1.0))
    with accountant.context(Budget.of(0.9), "block", None, 3) as block:
        assert block.per_release.epsilon == Fraction(3, 10)
    with accountant.context(Budget.of(0.9), "block", None, 0) as block:
        assert block.per_release.epsilon == Fraction(9, 10)


def test_no_budget_at_all_is_refused():
    accountant = Accountant(None)
    with pytest.raises(BudgetExceeded, match="no privacy budget"):
        accountant.charge(Budget.of(0.1), accountant.root, "laplace", "", None)
    assert accountant.ledger == []


def test_cost_of_no_charges_is_zero():
    assert cost([]) == Budget.zero()


def test_zero_epsilon_charge_is_refused():
    accountant = Accountant(Budget.of(1))
    with pytest.raises(JostleRuntimeError):
        accountant.charge(Budget.zero(), accountant.root, "laplace", "", None)


def test_a_with_budget_block_is_not_a_total():
    """Without a total, caps alone would let separate blocks add up without bound."""
    accountant = Accountant(None)
    for _ in range(2):
        with accountant.context(Budget.of(1), "block", None, 1):
            with pytest.raises(BudgetExceeded, match="no privacy budget"):
                accountant.charge(Budget.of(0.5), accountant.root, "laplace", "", None)
    assert accountant.ledger == []
    accountant.set_total(Budget.of(1), None)
    with accountant.context(Budget.of(1), "block", None, 1):
        accountant.charge(Budget.of(0.5), accountant.root, "laplace", "", None)
    assert accountant.spent.epsilon == Fraction(1, 2)


# ---------------------------------------------------------------- the incremental costs
def _random_tree(draw_int, root, depth: int = 3):
    """A random partition tree below `root`: a list of nodes to charge."""
    nodes = [root]
    frontier = [root]
    for _ in range(depth):
        grown = []
        for node in frontier:
            for g in range(draw_int(0, 2)):
                group = ParallelGroup(node, f"c{g}")
                grown += [group.part(k) for k in range(draw_int(1, 3))]
        nodes += grown
        frontier = grown
    return nodes


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_incremental_costs_match_the_reference_definition(data):
    """CostTree (O(depth) per charge) agrees with cost() recomputed from scratch, after
    every charge, for random partition trees, charges and nested contexts."""
    accountant = Accountant(Budget.of(10**6, Fraction(1, 2)))
    nodes = _random_tree(lambda lo, hi: data.draw(st.integers(lo, hi)), accountant.root)
    amounts = st.fractions(min_value=Fraction(1, 12), max_value=3, max_denominator=12)
    with accountant.context(Budget.of(10**6, Fraction(1, 2)), "outer", None, 0) as outer:
        for _ in range(data.draw(st.integers(1, 25))):
            node = nodes[data.draw(st.integers(0, len(nodes) - 1))]
            delta = data.draw(st.sampled_from([Fraction(0), Fraction(1, 10**6)]))
            budget = Budget(data.draw(amounts), delta)
            rise = accountant._tree.rise(budget, node)
            before = accountant.session_spent
            accountant.charge(budget, node, "laplace", "", None)
            assert accountant.session_spent == cost(accountant.ledger) == before + rise
            assert outer.spent == cost(outer.charges)


def test_charging_does_not_recost_the_ledger(monkeypatch):
    """Each charge is O(depth): the accountant never calls the from-scratch cost()."""
    import jostle.privacy.budget as budget_module

    def forbidden(charges):
        raise AssertionError("cost() re-costs the whole ledger")

    monkeypatch.setattr(budget_module, "cost", forbidden)
    accountant = Accountant(Budget.of(10**6))
    group = ParallelGroup(accountant.root, "g")
    parts = [group.part(k) for k in range(4)]
    with accountant.context(Budget.of(10**6), "block", None, 0):
        for i in range(200):
            accountant.charge(Budget.of(Fraction(1, 7)), parts[i % 4], "laplace", "", None)
    assert accountant.spent.epsilon == Fraction(50, 7)


def test_late_charges_are_as_fast_as_early_ones():
    """10,000 charges: the last 1,000 take about as long as the first 1,000 (CPU time).

    The old accountant re-costed the whole ledger on every charge, so the ratio was ~15; an
    O(depth) accountant gives ~1. The bound 3 leaves room for timer noise on a shared machine.
    """
    accountant = Accountant(Budget.of(10**6))
    group = ParallelGroup(accountant.root, "g")
    parts = [group.part(k) for k in range(8)]
    chunk_times = []
    for chunk in range(10):
        start = time.process_time()
        for i in range(1000):
            accountant.charge(Budget.of(0.01), parts[i % 8] if i % 3 else accountant.root, "laplace", "", None)
        chunk_times.append(time.process_time() - start)
    assert len(accountant.ledger) == 10_000
    # The fastest of the last three chunks against the slowest of the first three: a single
    # chunk can be slowed by garbage collection or the scheduler, a growing cost cannot hide.
    assert min(chunk_times[-3:]) / max(chunk_times[:3]) < 3, chunk_times
