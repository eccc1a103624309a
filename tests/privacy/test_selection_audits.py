"""Privacy audits of private selection and the common mechanism (issue 27).

  * charges precede draws, and add up to what the plan states;
  * the number of runs does not depend on the data (same seed, neighbouring inputs);
  * a replay entry: each noise point of a selection and of the common mechanism, on D and on a
    neighbour D' playing D's transcript, moves by at most its claimed sensitivity;
  * the output distribution on neighbours of a tiny enumerable case, against e^(3 eps1), with a
    tolerance from the sample size.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from jostle.choicemaker import selection
from jostle.privacy import private_selection as ps
from jostle.privacy import replay
from jostle.privacy.noise import Randomness
from tests.selection_toy_family import FAMILY


class CountingNoise(Randomness):
    """A seeded exact source that counts its draws."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.draws = 0

    def _words(self, size: int) -> np.ndarray:
        self.draws += 1
        return super()._words(size)


def _select(data: Any, seed: int, plan: ps.SelectionPlan, log: list) -> ps.Selected:
    noise = CountingNoise(seed)
    options = list(FAMILY.options().values())

    def run(option, part):
        log.append(("run", option.name))
        return FAMILY.run(option, data, part, noise, {})

    return selection.run_selection(FAMILY, options, data, plan, noise, run,
                                   lambda cost, what: log.append(("charge", cost, noise.draws)))


def test_the_charge_precedes_every_draw_and_equals_the_stated_cost():
    data, _ = FAMILY.neighbouring_inputs(1)
    plan = selection.selection_plan(Fraction(3, 4), Fraction(1, 3), Fraction(9, 10))
    log: list = []
    _select(data, 7, plan, log)
    charges = [entry for entry in log if entry[0] == "charge"]
    assert len(charges) == 1 and log[0][0] == "charge" and charges[0][2] == 0  # no draw before it
    assert charges[0][1].epsilon == Fraction(3, 4) == plan.total_epsilon == 3 * plan.candidate_epsilon


def test_the_number_of_runs_does_not_depend_on_the_data():
    first, second = FAMILY.neighbouring_inputs(2)
    plan = selection.selection_plan(Fraction(1), Fraction(1, 4), Fraction(9, 10))
    for seed in range(15):
        runs = []
        for data in (first, second):
            log: list = []
            _select(data, seed, plan, log)
            runs.append([entry for entry in log if entry[0] == "run"])
        assert runs[0] == runs[1]  # the same count, and the same Options, drawn from public coins


class Ledger:
    def charge(self, budget: Any, node: Any, mechanism: str, description: str, span: Any) -> None:
        pass


def _recorded(data: Any, mechanism: str, play: list | None = None) -> list:
    ledger, noise, recorder = Ledger(), Randomness(13), replay.Recorder()
    recorder.attach(ledger, noise, play)
    try:
        if mechanism == "selection":
            ledger.charge(None, None, "selection", "private selection", None)
            plan = selection.selection_plan(Fraction(1), Fraction(1, 3), Fraction(9, 10))
            options = list(FAMILY.options().values())
            selection.run_selection(FAMILY, options, data, plan, noise,
                                    lambda o, part: FAMILY.run(o, data, part, noise, {}), lambda c, d: None)
        else:
            ledger.charge(None, None, "common", "identity or hierarchy", None)
            plan_c = ps.plan_identity_or_hierarchy(len(data), Fraction(1))
            ps.identity_or_hierarchy(noise, data, plan_c, lambda common: "hierarchy" if common.sum() > 5 else "identity",
                                     lambda c, d: None)
    finally:
        recorder.detach()
    return recorder.records


def test_replay_every_noise_point_keeps_its_claim_on_neighbours():
    first, second = FAMILY.neighbouring_inputs(4)
    cases = [("selection", first, second),
             ("common", np.array([3, 0, 2, 5, 1, 0]), np.array([3, 0, 2, 4, 1, 0]))]
    for mechanism, d, neighbour in cases:
        on_d = _recorded(d, mechanism)
        on_neighbour = _recorded(neighbour, mechanism, play=on_d)
        comparison = replay.compare(on_d, on_neighbour)
        assert comparison.checked >= 2 and comparison.diverged_at is None, comparison.report()
        assert not comparison.violations, comparison.report()


def test_replay_catches_a_count_moved_twice():
    """Negative control: a neighbour two rows away breaks the common mechanism's one-axis claim."""
    on_d = _recorded(np.array([3, 0, 2, 5, 1, 0]), "common")
    comparison = replay.compare(on_d, _recorded(np.array([3, 0, 2, 3, 1, 0]), "common", play=on_d))
    assert comparison.violations


def _tiny(data: np.ndarray, seed: int, plan: ps.SelectionPlan) -> str:
    """Two candidates whose outputs are data-independent, scored -|output - count|, sensitivity 1."""
    noise = Randomness(seed)
    outputs = {"low": 0.0, "high": 3.0}

    def candidate():
        name = ("low", "high")[int(noise.integers_below(2, 1)[0])]
        score = -abs(outputs[name] - float(len(data)))
        from jostle.privacy import safe_noise

        return name, outputs[name], float(safe_noise.noisy_scores(noise, np.array([score]), 1.0, plan.score_epsilon)[0])

    return ps.select_private_candidate(noise, candidate, plan, lambda c, d: None).candidate


def test_the_output_law_on_neighbours_is_within_e_to_the_3_eps1():
    """Tiny case: datasets of 2 and 1 rows; P(choice = c) on each, 4000 seeded runs. The bound is
    e^(3 eps1) = e^(0.9) = 2.46; the test checks the ratio of a lower confidence bound of one
    probability over an upper bound of the other (4 standard errors each) stays below it, and that
    the two laws do differ (the selection reads the data)."""
    plan = ps.plan_selection(Fraction(9, 10), Fraction(1, 2), Fraction(1, 10))
    n = 4000
    frequencies = []
    for data in (np.zeros(2), np.zeros(1)):
        picks = [_tiny(data, seed, plan) for seed in range(n)]
        frequencies.append(np.mean([p == "high" for p in picks]))
    bound = np.exp(float(plan.total_epsilon))
    for p, q in [(frequencies[0], frequencies[1]), (frequencies[1], frequencies[0])]:
        for a, b in [(p, q), (1 - p, 1 - q)]:
            lower = a - 4 * np.sqrt(a * (1 - a) / n)
            upper = b + 4 * np.sqrt(b * (1 - b) / n)
            assert lower / upper <= bound
    assert abs(frequencies[0] - frequencies[1]) > 3 * np.sqrt(0.5 / n)  # 3 standard errors of a difference
