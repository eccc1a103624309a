"""Every learner family passes the conformance checks; the toy family tests the interface.

`test_conformance` runs each check of the shipped suite (`jostle.choicemaker.conformance`, what
a family's author runs with `check_family(FAMILY)`) on every family that
`jostle.choicemaker.families.discover()` finds (a new family is checked by existing) and on the
toy family of `tests/toy_family.py`. Each family is trained once per module on a tiny public
setup (a few of the cheapest tasks of its default corpus, its grid cut to one configuration,
one process, cache under a temporary folder).

The toy tests train, dispatch, trace and explain through the engine, and the negative controls
show that each check fails on a toy broken in the way it looks for (a check that cannot fail
checks nothing).
"""

from __future__ import annotations

import math
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Callable

import pytest

from jostle.choicemaker import conformance as checks
from jostle.choicemaker import conformance_privacy
from jostle.choicemaker.private_dispatch import BudgetGuard, dispatch, explain
from jostle.choicemaker.engine import train
from jostle.choicemaker.experience import RUN_STATS
from jostle.choicemaker.families import discover
from jostle.choicemaker.family import Family
from jostle.privacy.measures import PureDPBudget
from jostle.privacy.noise import Randomness, SimulationNoise
from tests import toy_family

FAMILIES: dict[str, Family] = {**discover(), toy_family.FAMILY.name: toy_family.FAMILY}
BROKEN: dict[str, Family] = {family.name: family for family in toy_family.BROKEN_FAMILIES}


@pytest.fixture(scope="module")
def subject(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], checks.Subject]:
    """subject(name): the family's `Subject`, trained on first use and kept for the module."""
    made: dict[str, checks.Subject] = {}

    def get(name: str) -> checks.Subject:
        if name not in made:
            family = FAMILIES.get(name) or BROKEN[name]
            made[name] = checks.make_subject(family, tmp_path_factory.mktemp(f"family-{name}"))
        return made[name]

    return get


def test_families_are_discovered() -> None:
    found = discover()
    assert {"histograms", "trees"} <= set(found), f"discover() found only {sorted(found)}"
    assert all(name == family.name for name, family in found.items())


@pytest.mark.parametrize("name", sorted(FAMILIES))
@pytest.mark.parametrize("check", checks.CHECKS, ids=lambda check: check.__name__)
def test_conformance(name: str, check: Callable[[checks.Subject], None],
                     subject: Callable[[str], checks.Subject]) -> None:
    check(subject(name))


def test_tiny_setup_covers_every_segment_and_the_neighbours() -> None:
    for family in FAMILIES.values():
        setup = checks.tiny_setup(family)
        segments = {s for option in setup.options for s in family.segments(option)}
        assert set(setup.samples) == segments, f"{family.name}: samples of {set(setup.samples)}, not {segments}"
        assert family.segment_of(family.neighbouring_inputs(0)[0]) in segments
        assert len({task.group for task in setup.corpus}) >= 2, f"{family.name}: one LODO group"


# ====================================================================================== the recorder
def test_recording_noise_sees_draws_through_held_generators() -> None:
    events: list = []
    noise = checks.RecordingNoise(SimulationNoise(1), events, "features")
    assert noise.simulation_only is True and noise.secure is False  # flags pass unrecorded
    noise.laplace(1.0, 3)
    noise.rng.normal(0.0, 1.0, 2)  # a draw through the NumPy generator the source holds
    assert events == [("draw", "features", "laplace"), ("draw", "features.rng", "normal")]


# ====================================================================================== the toy family
@pytest.fixture(scope="module")
def toy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("toy-cache")


@pytest.fixture(scope="module")
def toy_choicemaker(toy_cache: Path):
    """The toy ChoiceMaker trained on the toy's whole default corpus and grid."""
    return train(toy_family.FAMILY, cache_dir=toy_cache, n_jobs=1, progress=False)


def test_toy_experience_table(toy_choicemaker) -> None:
    table = toy_choicemaker.experience
    grid, corpus = toy_family.ToyGrid(), toy_family.toy_corpus()
    assert len(table) == len(corpus) * grid.repetitions * len(grid.epsilons) * len(toy_family.TOY_OPTIONS)
    assert {"mf_size", "mf_epsilon", "mf_nominal_size", "option", "error", "seconds", "failed"} <= set(table.columns)
    assert set(table["option"]) == set(toy_family.TOY_OPTIONS)
    assert (table["error"] >= 0).all() and not table["failed"].any()
    # The noisy size is near (true count / guess) at the budget it gets, and the public ones are exact.
    row = table[(table["task"] == "toy:7") & (table["epsilon"] == 0.5)].iloc[0]
    assert abs(row["mf_size"] - 1000 / 300) < 0.5
    assert row["mf_epsilon"] == 0.5 and row["mf_nominal_size"] == pytest.approx(math.log10(300))
    assert row["option_epsilon"] == pytest.approx(0.45)


def test_toy_training_reuses_its_cache(toy_choicemaker, toy_cache: Path) -> None:
    assert not toy_choicemaker.experience_from_cache and not toy_choicemaker.model_from_cache
    computed = RUN_STATS["pieces_computed"]
    again = train(toy_family.FAMILY, cache_dir=toy_cache, n_jobs=1, progress=False)
    assert again.experience_from_cache and again.model_from_cache
    assert RUN_STATS["pieces_computed"] == computed
    assert again.experience.drop(columns="seconds").equals(toy_choicemaker.experience.drop(columns="seconds"))


def test_toy_choicemaker_learns_when_the_guess_is_wrong(toy_choicemaker) -> None:
    """Laplace on the sum wins when the public size guess is right; the noisy count and sum
    when the guess is far too low (the toy's one lesson, learned from public experience)."""
    assert toy_choicemaker.mode == "measured" and "size" in toy_choicemaker.model.features
    for epsilon in (0.05, 0.5):
        for guess in (60, 400):
            right = {"size": 1.0, "epsilon": epsilon, "nominal_size": math.log10(guess)}
            wrong = {**right, "size": 2.5}
            assert toy_choicemaker.choose(right)[0] == "laplace_sum", right
            assert toy_choicemaker.choose(wrong)[0] == "count_and_sum", wrong


def test_toy_dispatch_trace_and_explain(toy_choicemaker) -> None:
    family = toy_family.FAMILY
    data = family.neighbouring_inputs(5)[0]
    charged: list[tuple[Fraction, str]] = []
    result = dispatch(toy_choicemaker, data, Fraction(1, 2), noise=Randomness(5),
                      charge=lambda amount, description: charged.append((amount, description)),
                      name="toy_cm", where="line 3")
    assert result.choice in toy_family.TOY_OPTIONS and 0.0 <= result.result <= 1.0
    assert charged == [(PureDPBudget(Fraction(1, 20)), "metafeature size"),
                       (PureDPBudget(Fraction(9, 20)), f"option {result.choice}")]
    assert set(result.features) == {"size", "epsilon", "nominal_size"} and result.features["epsilon"] == 0.5
    assert set(result.predictions) == set(toy_family.TOY_OPTIONS)
    assert result.predictions[result.choice] == min(result.predictions.values())
    trace = result.trace
    assert (trace.family, trace.choicemaker, trace.where, trace.choice) == ("toy", "toy_cm", "line 3", result.choice)
    assert trace.charges == (("metafeature size", PureDPBudget(Fraction(1, 20))),
                             (f"option {result.choice}", PureDPBudget(Fraction(9, 20))))
    assert trace.budget == PureDPBudget(Fraction(1, 2)) and trace.unit == "row" and trace.measure == "pure"
    assert (trace.epsilon, trace.metafeature_epsilon, trace.option_epsilon) == (0.5, 0.05, 0.45)
    text = explain([trace.as_dict()], "toy_cm")
    assert f"toy_cm at line 3: chose {result.choice}" in text
    assert "size=" in text and f"budget: epsilon 0.5 = 0.05 on metafeatures + 0.45 on {result.choice}" in text
    assert family.describe(result.result).startswith("mean estimate ")
    assert explain([], "toy_cm") == "toy_cm has not been called yet"


def test_toy_options_release_what_they_say() -> None:
    """Both Options estimate the mean well at a large budget on exact noise."""
    data = toy_family.MeanData([0.2] * 300 + [0.8] * 100, 400)
    for option in toy_family.TOY_OPTIONS.values():
        estimate = toy_family.FAMILY.run_option(option, data, 50.0, Randomness(0), {})
        assert estimate == pytest.approx(0.35, abs=0.01), option.name


# ====================================================================================== negative controls
NEGATIVE_CONTROLS = [
    ("toy_peeks", checks.check_charge_before_draw, checks.CHARGE_BEFORE_DRAW),
    ("toy_peeks", checks.check_over_budget_refused, checks.OVER_BUDGET),
    ("toy_peeks", checks.check_neighbour_rule, checks.NEIGHBOUR_RULE),
    ("toy_unseeded", checks.check_seed_determinism, checks.SEED_DETERMINISM),
    ("toy_unseeded", checks.check_experience_determinism, checks.EXPERIENCE_DETERMINISM),
    ("toy_unpicklable", checks.check_pickling, checks.PICKLING),
    ("toy_leaky_error", checks.check_neighbour_rule, checks.NEIGHBOUR_RULE),
    ("toy_no_fingerprint", checks.check_declarations, checks.DECLARATIONS),
    ("toy_no_sensitivity", checks.check_declarations, checks.DECLARATIONS),
    ("toy_any_unit", checks.check_units, checks.UNITS),
    ("toy_epsilon_only", checks.check_measures, checks.MEASURES),
]


@pytest.mark.parametrize("name, check, prop", NEGATIVE_CONTROLS,
                         ids=[f"{name}-{check.__name__}" for name, check, _ in NEGATIVE_CONTROLS])
def test_broken_toy_fails_its_check(name: str, check: Callable[[checks.Subject], None], prop: str,
                                    subject: Callable[[str], checks.Subject]) -> None:
    with pytest.raises(AssertionError) as failure:
        check(subject(name))
    assert str(failure.value).startswith(f"[{name}] {prop}: "), str(failure.value)


def test_broken_toys_pass_the_checks_they_do_not_break(subject: Callable[[str], checks.Subject]) -> None:
    """The checks are specific: each broken toy passes the checks of the rules it keeps."""
    broken_by = {}
    for name, check, _ in NEGATIVE_CONTROLS:
        broken_by.setdefault(name, set()).add(check)
    also = {"toy_unseeded": {checks.check_pickling},  # its unpickled copy dispatches differently, too
            "toy_peeks": {checks.check_measures}}  # which audits the order of draws under every measure too
    for name, broken in broken_by.items():
        for check in checks.CHECKS:
            if check not in broken | also.get(name, set()):
                check(subject(name))


def test_budget_guard_check_fails_on_a_guard_that_forwards_first(monkeypatch: pytest.MonkeyPatch,
                                                                 subject: Callable[[str], checks.Subject]) -> None:
    class ForwardingFirst(BudgetGuard):
        def charge(self, epsilon, description):  # forwards, then checks: the accountant is charged anyway
            if self.callback is not None:
                self.callback(epsilon, description)
            callback, self.callback = self.callback, None
            try:
                super().charge(epsilon, description)
            finally:
                self.callback = callback

    monkeypatch.setattr(conformance_privacy, "BudgetGuard", ForwardingFirst)
    with pytest.raises(AssertionError, match=r"^\[toy\] the budget guard refuses before forwarding: "):
        checks.check_budget_guard(subject("toy"))


def test_an_option_that_claims_to_charge_itself_is_charged_by_the_engine_anyway(
        subject: Callable[[str], checks.Subject]) -> None:
    """The default runtime ignores `charges_itself` (only the language's runtime knows parts whose own
    releases reach its accountant), so `toy_uncharged` passes the checks it failed when the claim was
    honoured."""
    for check in (checks.check_planned_charges, checks.check_charge_before_draw, checks.check_over_budget_refused):
        check(subject("toy_uncharged"))


# ====================================================================================== the one call
def test_check_family_is_one_call_that_passes_a_conforming_family(tmp_path: Path) -> None:
    subject = checks.check_family(toy_family.FAMILY, workdir=tmp_path)
    assert subject.family is toy_family.FAMILY and subject.choicemaker.options
    assert (tmp_path / "cache").is_dir()  # trained under the folder it was given


def test_check_family_raises_the_property_a_broken_family_breaks() -> None:
    broken = BROKEN["toy_no_sensitivity"]
    with pytest.raises(checks.ConformanceError) as failure:
        checks.check_family(broken)  # a temporary work folder
    assert failure.value.property == checks.DECLARATIONS and failure.value.family == "toy_no_sensitivity"
    assert isinstance(failure.value, AssertionError)
    assert str(failure.value).startswith("[toy_no_sensitivity] declarations: noisy metafeature 'size'")
    with pytest.raises(TypeError, match="needs a jostle.choicemaker.family.Family"):
        checks.check_family("toy")  # type: ignore[arg-type]


def test_the_shipped_checks_import_neither_pytest_nor_the_tests() -> None:
    code = ("import sys, jostle.choicemaker.conformance; "
            "print(sorted(m for m in sys.modules if m == 'pytest' or m == 'tests' or m.startswith(('_pytest', 'tests.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
