"""A ChoiceMaker across families in the engine: Options of several families of one task.

Two toy families of one task (`tests/toy_family.py`): each Option runs through its own family,
the experience cache keys name the family that runs an Option, a dispatch charges exactly its
budget and its trace names each Option's family, and families that cannot share a ChoiceMaker
(other tasks, a metafeature name meaning two things, no common error measure) are refused.
The program-level test is `tests/test_choicemaker_cross_program.py`.
"""

from __future__ import annotations

import pickle
from fractions import Fraction
from typing import Any, Mapping

import pytest

from jostle.choicemaker import engine, families
from jostle.choicemaker.combined import CombinedFamily
from jostle.choicemaker.private_dispatch import dispatch, explain
from tests.toy_family import TOY_METAFEATURES, ToyFamily, ToyGrid, ToyMetafeature, ToyOption, toy_corpus

TWIN_OPTIONS = {"twin_ratio": ToyOption("twin_ratio", "noisy count and clamped sum, their ratio")}
RUNS: list[tuple[str, str]] = []  # (family, Option) of every run_option, in order


class TwinFamily(ToyFamily):
    """A second family of the toy's task, with an Option of its own (same inputs, metafeatures)."""

    name = "toy_twin"

    def options(self) -> Mapping[str, Any]:
        return TWIN_OPTIONS

    def run_option(self, option: Any, data: Any, budget: Any, noise: Any, released: Mapping[str, float]) -> Any:
        RUNS.append((self.name, option.name))
        return super().run_option(option, data, budget, noise, released)


class RecordingToy(ToyFamily):
    def run_option(self, option: Any, data: Any, budget: Any, noise: Any, released: Mapping[str, float]) -> Any:
        RUNS.append((self.name, option.name))
        return super().run_option(option, data, budget, noise, released)


class OtherTask(ToyFamily):
    name, task = "toy_other_task", "median"


class OtherSize(TwinFamily):
    """Calls another metafeature `size`: a name must mean one thing."""

    name = "toy_other_size"

    def metafeatures(self) -> Mapping[str, Any]:
        return {**TOY_METAFEATURES, "size": ToyMetafeature("size", False)}  # a public size: another thing


def combined() -> CombinedFamily:
    return CombinedFamily([TwinFamily(), RecordingToy()])


def test_a_combined_family_runs_each_option_through_its_own_family(tmp_path):
    family = combined()
    assert family.name == "toy+toy_twin" and family.member_families()[0].name == "toy"  # ordered by name
    assert set(family.options()) == {"laplace_sum", "count_and_sum", "twin_ratio"}
    assert family.option_family(TWIN_OPTIONS["twin_ratio"]) == "toy_twin"
    assert family.option_family(family.options()["laplace_sum"]) == "toy"
    # the cache keys name the family that runs each Option
    assert family.option_fingerprint(TWIN_OPTIONS["twin_ratio"]).startswith("toy_twin:")
    assert family.option_fingerprint(family.options()["laplace_sum"]).startswith("toy:")
    assert family.fingerprint != RecordingToy().fingerprint
    # it survives pickling (parallel training) and still finds each Option's family
    copy = pickle.loads(pickle.dumps(family))
    assert copy.option_family(pickle.loads(pickle.dumps(TWIN_OPTIONS["twin_ratio"]))) == "toy_twin"
    RUNS.clear()
    trained = engine.train(family, None, ["size", "epsilon"], toy_corpus()[:4], ToyGrid(repetitions=2),
                           cache_dir=tmp_path, n_jobs=1, progress=False)
    assert set(trained.experience["option"]) == {"laplace_sum", "count_and_sum", "twin_ratio"}
    assert {run for run in RUNS} == {("toy", "laplace_sum"), ("toy", "count_and_sum"), ("toy_twin", "twin_ratio")}
    assert (tmp_path / "experience" / "toy+toy_twin").is_dir()

    RUNS.clear()
    charges: list[tuple[Any, str]] = []
    data = family.neighbouring_inputs(3)[0]
    result = dispatch(trained, data, Fraction(1), noise=family.simulation_noise(1),
                      charge=lambda cost, what: charges.append((cost, what)))
    assert dict(result.trace.option_families) == {"laplace_sum": "toy", "count_and_sum": "toy",
                                                  "twin_ratio": "toy_twin"}
    assert RUNS == [(result.trace.choice_family, result.choice)]
    assert sum((c.epsilon for c, _ in charges), Fraction(0)) == 1  # exactly its budget
    text = explain([result.trace.as_dict()])
    assert f"chose {result.choice} ({result.trace.choice_family})" in text
    assert "twin_ratio (toy_twin)=" in text and "laplace_sum (toy)=" in text


def test_one_family_explains_as_before():
    family = RecordingToy()
    assert families.serving([family]) is family
    assert family.option_family(family.options()["laplace_sum"]) == "toy"
    assert family.member_families() == (family,)


def test_families_that_cannot_share_a_choicemaker_are_refused():
    with pytest.raises(ValueError, match="task"):
        CombinedFamily([RecordingToy(), OtherTask()])
    with pytest.raises(ValueError, match="means different things"):
        CombinedFamily([RecordingToy(), OtherSize()])
    with pytest.raises(KeyError, match="error measure"):
        CombinedFamily([RecordingToy(), TwinFamily()], "accuracy")


def test_every_family_of_a_task_is_found():
    for task in families.tasks():
        found = families.for_task(task)
        assert found and all(f.task == task for f in found)
    assert sum(len(families.for_task(t)) for t in families.tasks()) == len(families.discover())
    with pytest.raises(KeyError):
        families.for_task("no such task")


class _AlwaysChooses:
    """A trained ChoiceMaker as the engine reads one: it measures the noisy size and always
    chooses its one Option (so the metafeature part would be charged first)."""

    def __init__(self, family: CombinedFamily, option: Any) -> None:
        self.family, self.options = family, {option.name: option}

    def metafeatures_for(self, segment: Any = None) -> list[Any]:
        return [self.family.metafeatures()["size"]]

    def metafeature_share(self, segment: Any = None) -> float:
        return 0.1

    def choose(self, features: Any, segment: Any) -> tuple[str, dict[str, float]]:
        name = next(iter(self.options))
        return name, {name: 0.1}

    def measuring_decision(self, segment: Any) -> None:
        return None


def test_an_option_of_no_member_is_refused_before_anything_is_charged():
    """An Option no member has (not in a registry, its class defined by no member's package) is
    not handed to the lead: the dispatch refuses it, naming it, with nothing charged or drawn."""
    family = combined()
    stranger = ToyOption("stranger", "not in any registry")
    with pytest.raises(ValueError, match="is of none of the toy, toy_twin families"):
        family.option_family(stranger)
    charges: list[tuple[Any, str]] = []
    with pytest.raises(ValueError, match="'stranger'"):
        dispatch(_AlwaysChooses(family, stranger), family.neighbouring_inputs(3)[0], Fraction(1),
                 noise=family.simulation_noise(1), charge=lambda cost, what: charges.append((cost, what)))
    assert charges == []
    assert family.option_family(TWIN_OPTIONS["twin_ratio"]) == "toy_twin"  # a member's Option still is its own


def _with_features(base: type, family_name: str, extra: dict[str, Any]) -> Any:
    """A toy family (of `base`) named `family_name` whose metafeatures are the toy's plus `extra`."""

    class Extended(base):  # type: ignore[valid-type, misc]
        name = family_name

        def metafeatures(self) -> Mapping[str, Any]:
            return {**TOY_METAFEATURES, **extra}

    return Extended()


def test_a_release_shared_across_families_is_refused_unless_one_family_defines_all_of_it():
    """A shared release is one budget unit, charged once and drawn once by the family whose code
    shares it: two families' metafeatures under one release name would draw twice."""
    profile_a = ToyMetafeature("profile_a", True, "1", release="profile")
    profile_b = ToyMetafeature("profile_b", True, "1", release="profile")
    with pytest.raises(ValueError, match="share the budget unit 'profile'"):
        CombinedFamily([_with_features(RecordingToy, "toy", {"profile_a": profile_a}),
                        _with_features(TwinFamily, "toy_twin", {"profile_b": profile_b})])
    clash = ToyMetafeature("profile", True, "1")  # a metafeature named like the other family's release
    with pytest.raises(ValueError, match="budget unit 'profile'"):
        CombinedFamily([_with_features(RecordingToy, "toy", {"profile_a": profile_a}),
                        _with_features(TwinFamily, "toy_twin", {"profile": clash})])
    # the same metafeatures in both, or a release one family defines entirely: one release, accepted
    both = {"profile_a": profile_a, "profile_b": profile_b}
    CombinedFamily([_with_features(RecordingToy, "toy", both), _with_features(TwinFamily, "toy_twin", both)])
    CombinedFamily([_with_features(RecordingToy, "toy", both),
                    _with_features(TwinFamily, "toy_twin", {"profile_a": profile_a})])


class RaisingTwin(TwinFamily):
    """A member whose metafeatures need at least epsilon 1/10 (as the histogram family's floor)."""

    name = "toy_raising"

    def metafeature_share_at(self, share, budget):
        from jostle.choicemaker.budgets import pure_epsilon_within

        return max(share, min(Fraction(1, 2), Fraction(1, 10) / pure_epsilon_within(budget)))


def test_a_combined_family_gives_its_metafeatures_the_largest_share_a_member_asks_for():
    from jostle.choicemaker.budgets import as_budget
    from jostle.choicemaker.measurement import plan_budget

    family = CombinedFamily([RaisingTwin(), RecordingToy()])
    share = Fraction(1, 20)
    assert family.metafeature_share_at(share, as_budget(Fraction(1, 2))) == Fraction(1, 5)  # the raising member's
    assert family.metafeature_share_at(share, as_budget(Fraction(4))) == share  # nobody raises it at a large budget
    assert combined().metafeature_share_at(share, as_budget(Fraction(1, 2))) == share  # no member raises it
    plan = plan_budget([m for m in family.metafeatures().values() if m.cost], as_budget(Fraction(1, 2)), share, family)
    assert plan["option"] == as_budget(Fraction(2, 5))  # 1/2 less the raised fifth
