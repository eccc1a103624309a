"""Privacy audits of the ILP family (tests/privacy/ilp_cases.py), with the contract of
test_audits.py: no case may show a lower bound on its realised epsilon above its claim, the
power floors must be reached, and the mis-calibrated controls must be caught. The neighbours and
the privacy-loss statistic the audits rest on are checked directly as well."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from jostle.audit import AuditCase
from jostle.learners.ilp import private
from jostle.learners.ilp.search import Coverage
from tests.privacy import ilp_cases
from tests.privacy.ilp_cases import ILP_CASES, ILP_NEGATIVE_CONTROLS


@pytest.mark.parametrize("case", ILP_CASES, ids=[c.name for c in ILP_CASES])
def test_ilp_component_respects_its_claimed_epsilon(case: AuditCase, audit_scale: float) -> None:
    result = case.audit(audit_scale)
    print(f"{case.name}: {result}")
    assert not result.violated, f"{case.name}: {result}"
    if case.at_least is not None:
        assert result.epsilon_lower_bound >= case.at_least, f"{case.name}: the audit lost its power: {result}"


@pytest.mark.parametrize("case", ILP_NEGATIVE_CONTROLS, ids=[c.name for c in ILP_NEGATIVE_CONTROLS])
def test_ilp_miscalibrated_component_is_caught(case: AuditCase, audit_scale: float) -> None:
    assert case.expect_violation
    result = case.audit(audit_scale)
    print(f"{case.name}: {result}")
    assert result.violated, f"{case.name}: a mis-calibrated mechanism passed the audit: {result}"


def test_ilp_controls_use_the_sample_sizes_of_passing_cases() -> None:
    assert {c.samples for c in ILP_NEGATIVE_CONTROLS} <= {c.samples for c in ILP_CASES}


def test_the_neighbours_differ_by_one_example_and_all_its_facts() -> None:
    d, d_prime = ilp_cases.REDUCTION_D, ilp_cases.REDUCTION_D_PRIME
    assert len(d.examples) - len(d_prime.examples) == 1 and 0 not in d_prime.examples.ids
    cars, cars_prime = d.relations["has_car"], d_prime.relations["has_car"]
    assert len(cars) - len(cars_prime) == int(np.sum(cars.columns["train"] == 0)) >= 1
    assert not np.any(cars_prime.columns["train"] == 0)


def test_the_removed_examples_move_every_count_the_claims_allow() -> None:
    """Worst cases: the removed train is covered by every clause scored, so the 2|L| counts move
    by exactly |L| in L1 (Theorem 4's bound, reached); the shared car moves them by more."""
    assert ilp_cases.REDUCTION_LOSS.moved() == len(ilp_cases.CANDIDATES) == 5
    positives, negatives = ilp_cases.REDUCTION_LOSS.d
    assert np.all(ilp_cases.REDUCTION_LOSS.d_prime[0] == positives - 1)
    assert np.all(ilp_cases.REDUCTION_LOSS.d_prime[1] == negatives)
    loop = ilp_cases.LoopLoss(ilp_cases.LOOP_D, ilp_cases.LOOP_D_PRIME, "relevance", ilp_cases.LOOP_LEVELS)
    for fake in range(len(ilp_cases.FAKES)):  # a negative: every round's N counts move, whatever was released
        loss = loop._loss(fake, ())
        assert loss.moved() == len(loss.candidates) and np.all(loss.d[0] == loss.d_prime[0])
    naive = ilp_cases.LoopLoss(ilp_cases.NAIVE_LOOP_D, ilp_cases.NAIVE_LOOP_D_PRIME, "naive", ilp_cases.LOOP_LEVELS)
    first, second = naive.candidates
    covers_removed = Coverage(ilp_cases.NAIVE_LOOP_D, ilp_cases.MODES).matrix(first)[:, 0]
    assert covers_removed.any() and not covers_removed.all()  # round 1 may keep it or remove it
    for index, covers in enumerate(covers_removed):
        moved = naive._loss(1, (first[index],)).moved()
        assert moved == (0 if covers else len(second)), (index, moved)  # kept: every round-2 clause covers it
    assert ilp_cases.SHARED_LOSS.moved() == 14 > len(ilp_cases.CANDIDATES)


def test_the_privacy_loss_reaches_the_claim_exactly_at_d_counts() -> None:
    """Released counts equal to D's give the largest loss, the claimed epsilon (the statistic is
    calibrated as the component claims); equal to D''s, minus it."""
    loss = ilp_cases.REDUCTION_LOSS
    size = len(ilp_cases.CANDIDATES)
    at = lambda counts: private.ReductionResult(  # noqa: E731
        0, counts[0].astype(float), counts[1].astype(float), size, Fraction(2), (size,))
    assert loss.of(at(loss.d), None) == pytest.approx(2.0)
    assert loss.of(at(loss.d_prime), None) == pytest.approx(-2.0)
    levels = (1, 1, 2, 1)  # relevance-aware, l = 3, nothing pruned
    relevance = private.ReductionResult(0, loss.d[0].astype(float), loss.d[1].astype(float), size, Fraction(2), levels)
    assert loss.of(relevance, ilp_cases.LEVELS) == pytest.approx(2.0)


def test_the_pruning_case_prunes_on_both_neighbours() -> None:
    """At PRUNE_AT the empty clause is pruned (nothing else evaluated) in a share of runs on
    each neighbour, more often without the removed positive, and never always."""
    run = ilp_cases.reduction_runner(2.0, ilp_cases.PRUNING_LEVELS, ilp_cases.PRUNING_LOSS,
                                     min_positives=ilp_cases.PRUNE_AT)
    only_level_0 = [np.mean(run(data, 400, 5)[:, 2] == 1) for data in (ilp_cases.PRUNING_D, ilp_cases.PRUNING_D_PRIME)]
    assert 0.15 < only_level_0[0] < only_level_0[1] < 0.9, only_level_0


# ---------------------------------------------------------------- the language call's calibration
CALL = ('th = ILP(t.bound_per_key(1), cars, target="label", positive="yes", entities={cars: "car"}, '
        'BUDGET, method="METHOD", rounds=ROUNDS, levels=1)\nprint(th)')


@pytest.mark.real_run  # audits the real run's draws and charges (tests/conftest.py)
@pytest.mark.parametrize("method, rounds", [("naive", 1), ("relevance", 2), ("majority", 1)])
@pytest.mark.parametrize("measure", ["pure", "zcdp"])
def test_the_language_call_draws_at_most_what_it_charged(method: str, rounds: int, measure: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end, the ILP call's noisy counts run at the epsilon the ledger was charged (pure
    epsilon E; in a zCDP session rho = E^2 / 2), split over its steps, each at sensitivity the
    number of counts it releases / 2 (|L| for P and N of |L| clauses, 1 for the majority)."""
    import pandas as pd

    from jostle import Session

    drawn: list[tuple[int, int, Fraction]] = []
    original = private.release_counts

    def recording(noise, counts, l1, epsilon):  # type: ignore[no-untyped-def]
        drawn.append((np.asarray(counts).size, int(l1), Fraction(epsilon)))
        return original(noise, counts, l1, epsilon)

    monkeypatch.setattr(private, "release_counts", recording)
    t = pd.DataFrame({"pid": range(12), "label": ["yes", "no", "yes"] * 4})
    cars = pd.DataFrame({"pid": [p for p in range(12) for _ in range(p % 3 + 1)], "shape": ["rect", "oval"] * 12})
    schemas = {"t": {"pid": ("numeric", 0, 50), "label": ("categorical", ["yes", "no"])},
               "cars": {"pid": ("numeric", 0, 50), "shape": ("categorical", ["rect", "oval"])}}
    session = Session(ledger_path=":memory:", seed=3, **({"budget": 10} if measure == "pure" else {"rho": 10}))
    session.bind_database({"t": t, "cars": cars}, key="pid", schemas=schemas)
    budget = "epsilon=0.75" if measure == "pure" else "rho=0.125"
    session.run(CALL.replace("BUDGET", budget).replace("METHOD", method).replace("ROUNDS", str(rounds)))
    [charge] = list(session.ledger)
    charged = charge.budget.epsilon
    if measure == "zcdp":  # rho 1/8 charged = E^2 / 2 at the pure E = 1/2 the learner runs at
        assert charge.cost.rho == Fraction(1, 8) and charged == Fraction(1, 2)
    assert drawn and sum(e for _, _, e in drawn) <= charged
    if method != "relevance":  # every step runs: exactly the charge
        assert sum(e for _, _, e in drawn) == charged
    for size, l1, _ in drawn:
        assert l1 == (1 if method == "majority" else size // 2)


@pytest.mark.parametrize("method, rounds", [("naive", 2), ("relevance", 1), ("majority", 1)])
def test_the_estimator_draws_at_most_what_it_charged(method: str, rounds: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """DPILPClassifier.fit charges the shared budget first, then noises at most that exact
    epsilon (a double epsilon such as 0.1 is charged as the rational it stands for)."""
    from jostle.estimators import DPILPClassifier, PrivacyBudget

    drawn: list[Fraction] = []
    original = private.release_counts

    def recording(noise, counts, l1, epsilon):  # type: ignore[no-untyped-def]
        drawn.append(Fraction(epsilon))
        return original(noise, counts, l1, epsilon)

    monkeypatch.setattr(private, "release_counts", recording)
    budget = PrivacyBudget(1)
    learner = DPILPClassifier(0.1, fake="has_car(T, C), short(C), closed(C)", method=method, rounds=rounds,
                              levels=2, budget=budget, random_state=4)
    learner.fit(ilp_cases.REDUCTION_D, "eastbound")
    assert drawn and learner.epsilon_spent_ == Fraction(1, 10) == Fraction(budget.spent.epsilon)
    assert sum(drawn) <= learner.epsilon_spent_
    if method != "relevance":
        assert sum(drawn) == learner.epsilon_spent_
