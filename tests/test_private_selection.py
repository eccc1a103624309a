"""Private selection (Liu and Talwar), the common mechanism, and the ChoiceMaker's selection mode,
intervals and explain (jostle/privacy/private_selection.py, jostle/choicemaker/selection.py,
jostle/choicemaker/intervals.py)."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np
import pytest

from jostle.choicemaker import engine, private_dispatch
from jostle.choicemaker.selection import SelectionDecision
from jostle.privacy import private_selection as ps
from jostle.privacy.measures import Budget
from jostle.privacy.noise import Randomness
from tests.selection_toy_family import FAMILY


def test_the_plans_state_what_the_paper_proves():
    best = ps.plan_selection(Fraction(3, 2), Fraction(1, 4), Fraction(9, 10))
    assert best.candidate_epsilon == Fraction(1, 2) and best.total_epsilon == Fraction(3, 2) and best.multiplier == 3
    assert best.run_epsilon + best.score_epsilon == best.candidate_epsilon
    threshold = ps.plan_selection(1.0, 0.25, 0.5, threshold=-3.0)
    assert threshold.candidate_epsilon == Fraction(1, 2) and threshold.multiplier == 2
    for bad in [dict(total_epsilon=0), dict(stop_probability=0), dict(run_share=1)]:
        args = dict(total_epsilon=1, stop_probability=Fraction(1, 2), run_share=Fraction(1, 2)) | bad
        with pytest.raises(ValueError):
            ps.plan_selection(**args)


def test_the_number_of_runs_is_geometric():
    noise = Randomness(5)
    runs = np.array([ps.draw_runs(noise, Fraction(1, 4)) for _ in range(2000)])
    assert runs.min() >= 1
    # mean 4, standard deviation sqrt(12): 6 standard errors of 2000 draws is 0.46
    assert abs(runs.mean() - 4.0) < 6 * np.sqrt(12 / 2000)


def test_one_charge_before_any_draw_and_a_refusal_draws_nothing():
    events = []

    def candidate():
        events.append("run")
        return "a", 1, float(events.count("run"))

    plan = ps.plan_selection(Fraction(3), Fraction(1, 2), Fraction(1, 2))
    chosen = ps.select_private_candidate(Randomness(1), candidate, plan, lambda c, d: events.append(c))
    assert events[0] == Budget(Fraction(3), Fraction(0)) and events.count("run") == len(events) - 1
    assert chosen.score == float(events.count("run"))  # the best (the last, here)

    def refuse(cost, description):
        raise ValueError("no")

    runs = []
    with pytest.raises(ValueError):
        ps.select_private_candidate(Randomness(1), lambda: runs.append(1) or ("a", 1, 0.0), plan, refuse)
    assert runs == []


def test_the_threshold_variant_returns_the_first_score_above_or_nothing():
    plan = ps.plan_selection(Fraction(2), Fraction(1, 2), Fraction(1, 2), threshold=5.0)
    scores = iter([1.0, 7.0, 9.0])
    chosen = ps.select_private_candidate(Randomness(2), lambda: ("a", 0, next(scores, 0.0)), plan, lambda c, d: None)
    assert chosen is None or chosen.score == 7.0
    outcomes = [ps.select_private_candidate(Randomness(s), lambda: ("a", 0, 0.0), plan, lambda c, d: None)
                for s in range(20)]
    assert all(o is None for o in outcomes)


def test_the_common_part_is_below_both_mechanisms_and_the_whole_costs_rho():
    plan = ps.plan_identity_or_hierarchy(8, Fraction(1, 2))
    info = plan.informations()
    assert ps.loewner_below(info["common"], info["identity"]) and ps.loewner_below(info["common"], info["hierarchy"])
    assert ps.gaussian_rho(info["identity"]) == pytest.approx(0.5)
    assert ps.gaussian_rho(info["hierarchy"]) == pytest.approx(0.5)
    for name in ("identity", "hierarchy"):  # common then remainder: exactly the mechanism's information
        assert np.allclose(info["common"] + info[f"{name}_rest"], info[name])
        assert np.linalg.eigvalsh(info[f"{name}_rest"]).min() > -1e-9
    charges = []
    counts = np.array([5, 0, 3, 9, 1, 0, 0, 2])
    for rule in ("identity", "hierarchy"):
        run = ps.identity_or_hierarchy(Randomness(3), counts, plan, lambda common: rule,
                                       lambda c, d: charges.append(c))
        assert run.choice == rule and run.estimate.shape == (8,)
    assert [float(c.rho) for c in charges] == [0.5, 0.5]


def test_the_common_estimates_have_the_stated_variance():
    plan = ps.plan_identity_or_hierarchy(4, Fraction(2))  # s^2 = 1/4
    counts = np.array([3, 1, 4, 1])
    from jostle.privacy.noise import SimulationNoise

    noise = SimulationNoise(0)
    estimates = np.array([ps.identity_or_hierarchy(noise, counts, plan, lambda c: "identity", lambda c, d: None).estimate
                          for _ in range(3000)])
    # the combined estimate has variance s^2 = 1/4 per cell (rounded discrete Gaussians: close to it)
    assert np.allclose(estimates.mean(axis=0), counts, atol=0.06)
    assert np.allclose(estimates.var(axis=0), 0.25, rtol=0.25)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    return engine.train(FAMILY, cache_dir=tmp_path_factory.mktemp("cache"), n_jobs=1, progress=False)


def test_training_decides_selection_and_keeps_intervals(trained):
    decision = trained.selection_decision(None)
    assert decision is not None and decision.groups >= 2
    assert decision.used == trained.selects_privately(None)
    intervals = trained.error_intervals({"laplace_sum": 0.1, "half": 0.2})
    assert set(intervals) == {"laplace_sum", "half"}
    assert all(low <= 0.1 * 10 and low < high for low, high in intervals.values())


def _forced(trained):
    return dataclasses.replace(trained, selection={None: SelectionDecision(True, Fraction(1, 6), Fraction(9, 10),
                                                                           0.1, 0.2, 4)})


def test_the_selection_mode_charges_the_whole_budget_once_and_traces_no_runs(trained):
    data, _ = FAMILY.neighbouring_inputs(0)
    charges = []
    result = private_dispatch.dispatch(_forced(trained), data, 0.9, Randomness(4), lambda c, d: charges.append(c))
    assert charges == [Budget(Fraction(0.9), Fraction(0))]
    trace = result.trace.as_dict()
    assert trace["chosen_by"] == "private selection" and result.choice in FAMILY.options()
    assert "runs" not in str(trace).lower().replace("number of runs", "")  # the plan's words only
    text = private_dispatch.explain([trace])
    assert "by private selection" in text and "charged once" in text


def test_the_measured_mode_explains_intervals_and_parts(trained):
    data, _ = FAMILY.neighbouring_inputs(0)
    plain = dataclasses.replace(trained, selection=None)
    result = private_dispatch.dispatch(plain, data, 1.0, Randomness(4), lambda c, d: None)
    text = private_dispatch.explain([result.trace.as_dict()])
    assert "(by measuring)" in text and "95% interval" in text and "size=" in text and "[epsilon=0.1]" in text


def test_a_model_pickled_before_intervals_and_selection_dispatches_as_before(trained):
    old = dataclasses.replace(trained)
    del old.__dict__["intervals"], old.__dict__["selection"]  # as an old pickle restores it
    assert engine.TrainedChoiceMaker.intervals is None and engine.TrainedChoiceMaker.selection is None
    data, _ = FAMILY.neighbouring_inputs(0)
    result = private_dispatch.dispatch(old, data, 1.0, Randomness(4), lambda c, d: None)
    assert result.trace.chosen_by == "measuring" and result.trace.intervals == ()


class FixedRelease(private_dispatch.Runtime):
    """Every metafeature releases 0.75 and every Option 0.5: what a dispatch shows is then a
    function of released values alone, on any input."""

    def measure(self, metafeature, data, amount, noise, context):
        return 0.75 if metafeature.cost else super().measure(metafeature, data, amount, noise, context)

    def run(self, option, data, amount, released):
        return 0.5


def test_explain_is_identical_on_neighbours_given_the_same_released_values(trained):
    first, second = FAMILY.neighbouring_inputs(3)
    texts = []
    for data in (first, second):
        runtime = FixedRelease(FAMILY, Randomness(9))
        result = private_dispatch.dispatch(trained, data, 1.0, runtime=runtime)
        texts.append((private_dispatch.explain([result.trace.as_dict()]), result.trace.as_dict()))
    assert texts[0] == texts[1]
