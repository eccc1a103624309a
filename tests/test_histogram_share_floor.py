"""The histogram family's metafeature floor (issue 27): at small budgets its metafeatures get at
least a public absolute epsilon, decided by the plan from the public share and budget alone,
charged before anything is drawn, and the same on neighbouring inputs."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from jostle.choicemaker.budgets import pure_epsilon_within
from jostle.choicemaker.engine import credited_share
from jostle.choicemaker.measurement import plan_budget
from jostle.choicemaker.private_dispatch import ChoiceSpec, Runtime, dispatch
from jostle.learners.histograms.family import FAMILY, SHARE_CAP, SHARE_FLOOR, HistogramData, HistogramFamily
from jostle.learners.histograms.metafeatures import BUILTIN_METAFEATURES
from jostle.learners.histograms.options import BUILTIN_OPTIONS
from jostle.learners.histograms.task import default_workload
from jostle.privacy.measures import Budget, RhoZCDPBudget
from jostle.privacy.noise import Randomness

NOISY = [BUILTIN_METAFEATURES["size"], BUILTIN_METAFEATURES["profile_size"], BUILTIN_METAFEATURES["epsilon"]]


def _metafeature_epsilon(plan: dict) -> Fraction:
    return sum((pure_epsilon_within(part) for key, part in plan.items() if key != "option"), Fraction(0))


@pytest.mark.parametrize("epsilon, share", [
    (Fraction(1), Fraction(1, 100)),        # s * eps = 0.01 >= the floor: unchanged
    (Fraction(1, 10), Fraction(1, 100)),    # s * eps = 0.001 = the floor: unchanged
    (Fraction(1, 100), Fraction(1, 10)),    # raised to floor / eps = 0.1
    (Fraction(1, 1000), Fraction(1, 5)),    # floor / eps = 1: capped at 20%
])
def test_the_floor_raises_the_share_at_small_budgets_only(epsilon: Fraction, share: Fraction) -> None:
    assert FAMILY.metafeature_share_at(Fraction(1, 100), Budget(epsilon, Fraction(0))) == share
    plan = plan_budget(NOISY, epsilon, 0.01, FAMILY)
    assert sum(plan.values(), Budget(Fraction(0), Fraction(0))) == Budget(epsilon, Fraction(0))  # exact
    assert _metafeature_epsilon(plan) == share * epsilon
    assert _metafeature_epsilon(plan) >= min(SHARE_FLOOR, SHARE_CAP * epsilon)
    assert plan_budget(NOISY, epsilon, 0.01) == plan_budget(NOISY, epsilon, 0.01, HistogramFamily(share_floor=0))


def test_the_floor_never_lowers_a_share_and_counts_a_rho_in_epsilon() -> None:
    assert FAMILY.metafeature_share_at(Fraction(1, 2), Budget(Fraction(1, 100), Fraction(0))) == Fraction(1, 2)
    assert FAMILY.metafeature_share_at(Fraction(0), Budget(Fraction(1, 100), Fraction(0))) == Fraction(1, 10)
    # a rho whose epsilon is 0.01: a share s of it holds epsilon sqrt(s) * 0.01, so the floor
    # needs s = (0.001 / 0.01)^2 = 1%
    rho = RhoZCDPBudget(Fraction(1, 20000))
    assert pure_epsilon_within(rho) == Fraction(1, 100)
    assert FAMILY.metafeature_share_at(Fraction(1, 1000), rho) == Fraction(1, 100)
    plan = plan_budget(NOISY[:1], rho, 0.001, FAMILY)
    assert pure_epsilon_within(plan["metafeature size"]) >= SHARE_FLOOR * Fraction(999, 1000)


def test_a_family_raising_the_share_out_of_range_is_refused_before_any_plan() -> None:
    class Greedy(HistogramFamily):
        def metafeature_share_at(self, share, budget):
            return Fraction(1)

    with pytest.raises(ValueError, match="outside"):
        plan_budget(NOISY, 0.01, 0.01, Greedy())


def test_training_credits_the_largest_share_paid() -> None:
    import pandas as pd

    experience = pd.DataFrame({"epsilon": [0.01, 0.1, 1.0]})
    assert credited_share(FAMILY, experience, 0.01) == pytest.approx(0.1)
    assert credited_share(HistogramFamily(share_floor=0), experience, 0.01) == 0.01
    assert credited_share(FAMILY, experience[experience["epsilon"] > 0.05], 0.01) == 0.01


class _Identity(Runtime):
    def priors(self, features):
        return {"Identity": 0.0}


def _dispatch(x: np.ndarray, epsilon: float) -> tuple[list, object]:
    charges: list = []
    spec = ChoiceSpec(FAMILY, {"Identity": BUILTIN_OPTIONS["Identity"]}, list(NOISY), 0.01)
    runtime = _Identity(FAMILY, Randomness(seed=7), lambda cost, what: charges.append((what, cost)))
    result = dispatch(spec, HistogramData(x, default_workload((64,), 100)), epsilon, runtime=runtime)
    return charges, result


def test_a_dispatch_charges_the_raised_share_and_the_same_on_neighbours() -> None:
    x = np.zeros(64)
    x[3] = 40
    neighbour = x.copy()
    neighbour[10] += 1
    charges, result = _dispatch(x, 0.01)
    assert [what for what, _ in charges] == ["metafeature size", "metafeature profile", "option Identity"]
    assert [c.epsilon for _, c in charges[:2]] == [Fraction(1, 2000), Fraction(1, 2000)]  # 10% of 0.01, halved
    assert sum((c.epsilon for _, c in charges), Fraction(0)) <= Fraction(0.01)  # the float budget, exactly
    assert charges == _dispatch(neighbour, 0.01)[0]  # the plan reads the budget, never the data
    big, _ = _dispatch(x, 1.0)
    assert [c.epsilon for _, c in big[:2]] == [Fraction(1, 200), Fraction(1, 200)]  # 1%: not raised


def test_a_share_rule_that_changes_between_check_and_charge_is_refused_before_any_charge() -> None:
    class FlipFlop(HistogramFamily):
        calls = 0

        def metafeature_share_at(self, share, budget):
            FlipFlop.calls += 1
            return share if FlipFlop.calls % 2 else min(share * 2, Fraction(1, 2))

    family = FlipFlop()
    charges: list = []
    spec = ChoiceSpec(family, {"Identity": BUILTIN_OPTIONS["Identity"]}, list(NOISY), 0.01)
    runtime = _Identity(family, Randomness(seed=7), lambda cost, what: charges.append((what, cost)))
    with pytest.raises(ValueError, match="plan changed"):
        dispatch(spec, HistogramData(np.ones(64), default_workload((64,), 100)), 0.5, runtime=runtime)
    assert charges == []
