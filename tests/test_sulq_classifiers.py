"""The SuLQ classifiers (SuLQ ID3, the SuLQ perceptron): behaviour on public data with fixed seeds,
their query plans fixed in advance, the budget checked before the first draw, zCDP only, and the
family's conformance, alone and in a ChoiceMaker with the tree family."""

from __future__ import annotations

import tempfile
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from jostle.choicemaker.family import UnsupportedMeasure
from jostle.learnerkit.tables import ClassificationData
from jostle.learners.sulq_classifiers import id3, perceptron
from jostle.learners.sulq_classifiers.family import FAMILY
from jostle.learners.sulq_classifiers.options import SULQ_OPTIONS
from jostle.learners.sulq_classifiers.queries import calibrate
from jostle.privacy.measures import Budget, RhoZCDPBudget
from jostle.privacy.noise import Randomness, SimulationNoise
from jostle.privacy.subledger import OverBudgetError, option_guard
from jostle.privacy.sulq import sulq_plan, variance_for_rho

SIZES = (3, 4, 2, 5, 3, 3)


def _table(rows: int, seed: int = 0, kind: str = "tree") -> tuple[np.ndarray, np.ndarray]:
    """Public synthetic rows: "tree" (class = a function of attributes 0 and 3, 10% flipped),
    "linear" (class = sign of an additive score plus noise)."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, size, rows) for size in SIZES])
    if kind == "tree":
        y = ((X[:, 0] == 1) ^ (X[:, 3] > 2)).astype(np.int64)
        flip = rng.random(rows) < 0.1
        y[flip] = 1 - y[flip]
    else:
        weights = np.random.default_rng(99).normal(size=(len(SIZES), 5))
        score = sum(weights[a][X[:, a]] for a in range(len(SIZES)))
        y = (score + 0.5 * rng.normal(size=rows) > 0).astype(np.int64)
    return X, y


class Recorder:
    """A charge function and a noise source that log, in one list, every charge and every draw."""

    def __init__(self, noise: object) -> None:
        self.events: list[tuple] = []
        self.noise = noise

    def charge(self, amount: RhoZCDPBudget, description: str) -> None:
        self.events.append(("charge", amount.rho, description))

    def discrete_gaussian(self, sigma2: Fraction, size: int, t: int | None = None) -> np.ndarray:
        self.events.append(("draw", size))
        return self.noise.discrete_gaussian(sigma2, size, t)

    def __getattr__(self, name: str) -> object:
        return getattr(self.noise, name)


# ---------------------------------------------------------------- learning at a generous rho
def test_sulq_id3_learns_a_two_attribute_rule_well_above_chance():
    X, y = _table(20_000, seed=1)
    test_X, test_y = _table(5_000, seed=2)
    tree = id3.fit_id3(X, y, SIZES, 2, Randomness(3), None, rho=1.0, depth=2)
    # The class is a function of two attributes with 10% flipped: the best tree scores 0.9;
    # chance (the majority class) is about 0.53. At rho 1 over 1,100 queries the noise sd is 23.
    assert np.mean(tree.predict(test_X) == test_y) > 0.85
    assert {int(a) for a in tree.split[0] if a >= 0} <= {0, 3}


def test_sulq_perceptron_learns_a_linear_rule_well_above_chance():
    X, y = _table(20_000, seed=1, kind="linear")
    test_X, test_y = _table(5_000, seed=2, kind="linear")
    model = perceptron.fit_perceptron(X, y, SIZES, 2, Randomness(3), None, rho=1.0, iterations=20)
    majority = max(np.mean(test_y), 1 - np.mean(test_y))  # about 0.8
    assert np.mean(model.predict(test_X) == test_y) > majority + 0.08
    assert len(model.noisy_errors) == 20 and model.noisy_errors[0] > model.noisy_errors[-1]  # W_0 = 0 errs most


def test_multiclass_perceptron_asks_both_signed_halves():
    X, _ = _table(3_000, seed=4)
    y = np.where(np.random.default_rng(4).random(3_000) < 0.2, X[:, 1] % 3, X[:, 0])  # mostly attribute 0
    model = perceptron.fit_perceptron(X, y, SIZES, 3, SimulationNoise(1), None, rho=10.0, iterations=8)
    width = sum(SIZES) + 1
    assert perceptron.batches(SIZES, 3, 8) == [2 * 3 * width] * 8  # E (by truth) and F (by prediction)
    assert perceptron.batches(SIZES, 2, 8) == [2 * width] * 8      # two classes: F is E reversed
    assert model.queries == 8 * 2 * 3 * width
    assert np.mean(model.predict(X) == y) > 0.7  # chance is about 1/3


def test_fits_on_50000_rows_take_a_second_or_two():
    X, y = _table(50_000, seed=5)
    start = time.perf_counter()
    id3.fit_id3(X, y, SIZES, 2, Randomness(1), None, rho=1.0, depth=3)
    perceptron.fit_perceptron(X, y, SIZES, 2, Randomness(1), None, rho=1.0, iterations=10)
    assert time.perf_counter() - start < 4.0


# ---------------------------------------------------------------- the query plan, fixed in advance
@pytest.mark.parametrize("learner", ["id3", "perceptron"])
@pytest.mark.parametrize("rows, seed", [(0, 0), (40, 1), (5_000, 2)])
def test_T_is_computed_in_advance_and_equals_what_is_released(learner, rows, seed):
    X, y = _table(rows, seed)
    recorder = Recorder(SimulationNoise(seed))
    if learner == "id3":
        planned = id3.query_count(SIZES, 2, 2)
        assert planned == 2 * (1 + sum(SIZES)) * (1 + 5) + 2 * 25  # C (1 + V) (1 + b) + C b^2
        model = id3.fit_id3(X, y, SIZES, 2, recorder, recorder.charge, rho=0.5, depth=2)
    else:
        planned = perceptron.query_count(SIZES, 2, 7)
        model = perceptron.fit_perceptron(X, y, SIZES, 2, recorder, recorder.charge, rho=0.5, iterations=7)
    drawn = sum(event[1] for event in recorder.events if event[0] == "draw")
    assert model.queries == planned == drawn  # the same on an empty table and a large one
    # every batch is charged before it is drawn, and the charges add up to at most rho, exactly
    kinds = [event[0] for event in recorder.events]
    assert kinds == ["charge", "draw"] * (len(kinds) // 2)
    charged = sum(event[1] for event in recorder.events if event[0] == "charge")
    assert charged == sulq_plan(variance_for_rho(Fraction(1, 2), planned), planned).rho <= Fraction(1, 2)


def test_the_calibrations_match_the_primitive():
    lengths = id3.batches(SIZES, 2, 2)
    by_rho = calibrate(lengths, rho=0.25)
    assert by_rho.queries == sum(lengths) and by_rho.rho <= Fraction(1, 4)
    assert by_rho.variance == variance_for_rho(Fraction(1, 4), sum(lengths))
    by_variance = calibrate(lengths, variance=5000)
    assert by_variance.rho == sum(sulq_plan(5000, length).rho for length in lengths)
    with pytest.raises(ValueError, match="not both"):
        calibrate(lengths, rho=1, variance=1)


# ---------------------------------------------------------------- budgets: checked before the first draw
@pytest.mark.parametrize("fit", [
    lambda X, y, noise, charge: id3.fit_id3(X, y, SIZES, 2, noise, charge, variance=10, cap=0.01),
    lambda X, y, noise, charge: perceptron.fit_perceptron(X, y, SIZES, 2, noise, charge, variance=10, cap=0.01),
])
def test_a_variance_too_small_for_the_budget_is_refused_before_anything(fit):
    X, y = _table(1_000)
    recorder = Recorder(SimulationNoise(0))
    with pytest.raises(OverBudgetError, match="nothing was charged or drawn"):
        fit(X, y, recorder, recorder.charge)
    assert recorder.events == []


def test_the_guard_refuses_a_batch_before_its_draw():
    X, y = _table(1_000)
    recorder = Recorder(SimulationNoise(0))
    guard = option_guard("SuLQID3", RhoZCDPBudget(Fraction(1, 1000)))

    def charge(amount: RhoZCDPBudget, description: str) -> None:
        guard(amount, description)
        recorder.charge(amount, description)

    with pytest.raises(OverBudgetError):  # the plan is calibrated to rho 1 but the guard holds 1/1000
        id3.fit_id3(X, y, SIZES, 2, recorder, charge, rho=1.0, depth=1)
    assert recorder.events == []


def test_pure_budgets_are_refused_before_any_charge():
    data = ClassificationData(*_table(200), SIZES, 2)
    for option in SULQ_OPTIONS.values():
        with pytest.raises(UnsupportedMeasure, match="no pure epsilon"):
            option.planned_cost(Budget(Fraction(1), Fraction(0)))
        assert option.planned_cost(RhoZCDPBudget(Fraction(1, 3))) == RhoZCDPBudget(Fraction(1, 3))
        with pytest.raises(UnsupportedMeasure):
            FAMILY.run_option(option, data, Budget(Fraction(1), Fraction(0)), Recorder(SimulationNoise(0)), {})
    with pytest.raises(UnsupportedMeasure):
        FAMILY.check_measure(Budget(Fraction(1), Fraction(0)))
    assert FAMILY.measures == ("zcdp",)


def test_an_option_run_spends_its_rho_at_most():
    data = ClassificationData(*_table(2_000), SIZES, 2)
    for option in SULQ_OPTIONS.values():
        model = FAMILY.run_option(option, data, RhoZCDPBudget(Fraction(1, 10)), SimulationNoise(1), {})
        assert model.queries == option.query_count(data) and Fraction(model.rho) <= Fraction(1, 10) + Fraction(1, 10**9)


# ---------------------------------------------------------------- the family: conformance, and with the trees
def test_the_family_conforms(tmp_path):
    from jostle.choicemaker.conformance import check_family

    check_family(FAMILY, tmp_path)


def test_a_choicemaker_across_sulq_and_tree_options_trains_and_dispatches_under_zcdp():
    from jostle.choicemaker.combined import CombinedFamily
    from jostle.choicemaker.conformance_setup import tiny_setup, train_tiny
    from jostle.choicemaker.families import discover
    from jostle.choicemaker.private_dispatch import dispatch

    families = discover()
    combined = CombinedFamily([families["trees"], families["sulq_classifiers"]])
    assert combined.measures == ("zcdp",) and {"SuLQID3", "FriedmanSchuster"} <= set(combined.options())
    setup = tiny_setup(combined)
    with tempfile.TemporaryDirectory() as folder:
        trained = train_tiny(combined, setup, Path(folder))
    data = next(iter(setup.samples.values()))
    charges: list = []
    result = dispatch(trained, data, RhoZCDPBudget(Fraction(1, 2)), noise=Randomness(1),
                      charge=lambda amount, what: charges.append((what, amount)))
    assert result.choice in combined.options()
    part = dict(result.budget_split)[f"option {result.choice}"]
    assert charges[-1] == (f"option {result.choice}", combined.planned_cost(combined.options()[result.choice], part))
    for name in ("SuLQID3", "FriedmanSchuster"):  # an Option of each family runs under the rho
        model = combined.run_option(combined.options()[name], data, RhoZCDPBudget(Fraction(1, 2)), Randomness(2), {})
        assert combined.option_error(combined.options()[name], next(combined.instances(
            setup.corpus[0], None, setup.grid)), model) <= 1.0
    with pytest.raises(UnsupportedMeasure):
        dispatch(trained, data, Budget(Fraction(1), Fraction(0)), noise=Randomness(1))


def test_a_combination_led_by_a_pure_family_trains_its_sulq_options_in_rho():
    """The lead's pure epsilons become rhos e^2 / 2 when a member runs in zCDP only (the
    accountant's conversion), so the SuLQ Options run on every training instance; a combination
    of families that all take pure budgets keeps them pure."""
    from jostle.choicemaker.combined import CombinedFamily
    from jostle.choicemaker.families import discover

    families = discover()
    combined = CombinedFamily([families["brl"], families["sulq_classifiers"]])
    assert combined.lead.name == "brl" and combined.measures == ("zcdp",)
    task = ClassificationData(*_table(600), SIZES, 2, name="public")
    for instance in combined.instances(task, None, families["brl"].default_grid()):
        epsilon = Fraction(instance.columns["epsilon"])  # the float's exact value, as the lead states it
        assert instance.budget == RhoZCDPBudget(epsilon * epsilon / 2)
        model = combined.run(SULQ_OPTIONS["SuLQID3"], instance.data, instance.budget, SimulationNoise(1), {})
        assert Fraction(model.rho) <= instance.budget.rho
    pure = CombinedFamily([families["brl"], families["trees"]])
    assert all(isinstance(i.budget, Budget) for i in pure.instances(task, None, families["brl"].default_grid()))
