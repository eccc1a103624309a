"""The Python front door of the ChoiceMaker engine (`jostle.choicemaker.train` / `dispatch`).

One `train` for every family (the family is found from the Options), one `dispatch` that never
runs uncharged unless asked: without a charge function, an accountant or `uncharged=True` it
refuses before anything is measured or drawn.
"""

from __future__ import annotations

import importlib
import sys
from fractions import Fraction

import pytest

import jostle.choicemaker
from jostle.choicemaker import api, dispatch, family_for, train
from jostle.choicemaker.conformance import RecordingNoise
from jostle.choicemaker.families import get
from jostle.privacy.measures import PureDPBudget
from jostle.privacy.noise import Randomness
from jostle.privacy.shared_budget import PrivacyBudget
from jostle.privacy.subledger import OverBudgetError
from jostle.session import Session
from tests import toy_family


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory):
    """The toy ChoiceMaker, trained through the front door."""
    return train(family=toy_family.FAMILY, cache_dir=tmp_path_factory.mktemp("toy-cache"), n_jobs=1, progress=False)


def _recorded(toy, **how):
    """A dispatch on the toy's neighbouring input with recording noise: (result or error, events)."""
    events: list = []
    noise = RecordingNoise(Randomness(3), events, "features")
    try:
        return dispatch(toy, toy_family.FAMILY.neighbouring_inputs(3)[0], Fraction(1, 2), noise=noise, **how), events
    except Exception as error:  # noqa: BLE001 - the test judges it
        return error, events


def test_dispatch_refuses_to_run_with_nothing_to_charge(toy) -> None:
    error, events = _recorded(toy)
    assert isinstance(error, ValueError) and str(error) == api.UNCHARGED_REFUSAL
    assert "uncharged=True" in str(error) and "charge=" in str(error)
    assert events == []  # refused before anything was measured or drawn


def test_dispatch_refuses_contradictory_charging(toy) -> None:
    charged: list = []
    for how, kind, message in [
            (dict(charge=lambda c, d: charged.append(c), uncharged=True), ValueError, "uncharged and given"),
            (dict(charge=lambda c, d: None, accountant=object()), ValueError, "either charge= or accountant="),
            (dict(accountant=object()), TypeError, "a Session, an Accountant or a PrivacyBudget")]:
        error, events = _recorded(toy, **how)
        assert isinstance(error, kind) and events == [], (how, error)
        with pytest.raises(kind, match=message):
            raise error
    assert charged == []


def test_charge_accountants_and_uncharged_runs_release_the_same(toy) -> None:
    """How a run is charged changes nothing it releases: the same seed gives the same choice and
    answer. A charge function receives every typed part in order; a Session's ledger and a shared
    PrivacyBudget record the same parts."""
    charged: list = []
    by_charge, _ = _recorded(toy, charge=lambda cost, what: charged.append((what, cost)))
    session = Session(1.0, ledger_path=":memory:")
    by_session, _ = _recorded(toy, accountant=session)
    shared = PrivacyBudget(1.0)
    by_budget, _ = _recorded(toy, accountant=shared)
    free, _ = _recorded(toy, uncharged=True)
    assert by_charge.choice == by_session.choice == by_budget.choice == free.choice
    assert by_charge.result == by_session.result == by_budget.result == free.result
    assert charged == [("metafeature size", PureDPBudget(Fraction(1, 20))),
                       (f"option {by_charge.choice}", PureDPBudget(Fraction(9, 20)))]
    assert session.spent == PureDPBudget(Fraction(1, 2)) and len(session.ledger) == 2
    assert [(c.description, c.epsilon) for c in shared.charges] == [(what, cost.epsilon) for what, cost in charged]


def test_an_accountant_that_cannot_pay_stops_the_dispatch_before_any_draw(toy) -> None:
    shared = PrivacyBudget(Fraction(1, 40))  # less than the metafeature's part
    error, events = _recorded(toy, accountant=shared)
    assert isinstance(error, OverBudgetError) and "dispatch of epsilon 0.5 was refused" in str(error)
    assert "nothing was spent" in str(error)
    assert events == [] and shared.charges == [] and shared.spent.epsilon == 0


@pytest.mark.parametrize("account", ["session", "accountant", "privacy_budget", "budget_on_session"])
def test_an_account_that_can_pay_the_metafeatures_but_not_the_whole_budget_spends_nothing(toy, account) -> None:
    """The whole budget (1/2) is checked before the metafeatures' part (1/20) is charged: an
    account holding 1/4 refuses the call with nothing spent and nothing drawn."""
    from jostle.diagnostics.errors import BudgetExceeded

    session = Session(Fraction(1, 4), ledger_path=":memory:")
    holder = {"session": session, "accountant": session.accountant, "privacy_budget": PrivacyBudget(Fraction(1, 4)),
              "budget_on_session": PrivacyBudget(account=session)}[account]
    error, events = _recorded(toy, accountant=holder)
    assert isinstance(error, (BudgetExceeded, OverBudgetError)), error
    assert events == [] and session.spent.epsilon == 0 and len(session.ledger) == 0
    if isinstance(holder, PrivacyBudget):
        assert holder.charges == [] and holder.spent.epsilon == 0
    enough = Session(Fraction(1, 2), ledger_path=":memory:")  # exactly the budget: runs, spends it all
    result, _ = _recorded(toy, accountant=enough)
    assert not isinstance(result, Exception) and enough.spent.epsilon == Fraction(1, 2)


def test_a_session_whose_data_lifetime_cannot_pay_refuses_before_anything_is_measured(toy, tmp_path) -> None:
    """A durable ledger checks a dataset's lifetime only when a charge is committed: the front
    door checks what the lifetime leaves before the first part, so no part is recorded."""
    import pandas as pd

    from jostle.diagnostics.errors import BudgetExceeded

    session = Session(1.0, ledger_path=str(tmp_path / "ledger.db"))
    session.bind_private("t", pd.DataFrame({"x": [1.0, 2.0]}), {"x": {"type": "numeric", "bounds": [0, 3]}},
                         lifetime=Fraction(1, 4))
    error, events = _recorded(toy, accountant=session)
    assert isinstance(error, BudgetExceeded) and "lifetime" in str(error), error
    assert events == [] and len(session.ledger) == 0


def test_the_front_door_refuses_a_unit_the_family_does_not_declare_and_entity_data_of_unstated_stability(
        toy) -> None:
    from jostle.choicemaker.family import UnsupportedUnit
    from jostle.privacy.units import REPLACE_ONE, entity

    declares_entity = "entity" in toy.family.units
    for unit, stability, refusal in [(REPLACE_ONE, None, UnsupportedUnit),
                                     (entity("id"), None, ValueError if declares_entity else UnsupportedUnit),
                                     (entity("id"), 2, ValueError if declares_entity else UnsupportedUnit)]:
        charged: list = []
        error, events = _recorded(toy, charge=lambda c, d: charged.append(c), unit=unit, stability=stability)
        assert isinstance(error, refusal) and events == [] and charged == [], (unit, stability, error)
    trees = get("trees")
    assert "entity" in trees.units  # declared, but only for one row per entity
    with pytest.raises(ValueError, match="stability=1"):
        api.check_unit(trees, entity("id"), None)
    api.check_unit(trees, entity("id"), 1)  # stated by the caller: accepted
    api.check_unit(trees, None, None)


def test_a_refusing_charge_stops_the_dispatch_before_its_draw(toy) -> None:
    def refuse(cost, what):
        raise RuntimeError(f"no budget for {what}")

    error, events = _recorded(toy, charge=refuse)
    assert isinstance(error, RuntimeError) and "metafeature size" in str(error)
    assert events == []


def test_the_family_is_found_from_the_options() -> None:
    histograms, trees = get("histograms"), get("trees")
    assert family_for(["Identity", "Uniform"]) is histograms
    assert family_for([histograms.options()["Identity"]]) is histograms
    assert family_for(["friedmanschuster"]) is trees  # names as the engine reads them, case-insensitive

    class UsersOwn:  # an Option made outside every family joins the family of the others
        name = "UsersOwn"

    assert family_for([trees.options()["FriedmanSchuster"], UsersOwn()]) is trees
    with pytest.raises(ValueError, match="pass family="):
        family_for([UsersOwn()])
    with pytest.raises(KeyError, match="no learner family has an Option called 'NoSuchOption'"):
        family_for(["NoSuchOption"])
    with pytest.raises(ValueError, match="needs Options"):
        family_for(None)
    assert family_for(None, family="trees") is trees and family_for(["Identity"], family=trees) is trees
    both = family_for(["FriedmanSchuster", "BRLMined"])  # two families of one task: one ChoiceMaker over both
    assert {f.name for f in both.member_families()} == {"trees", "brl"}
    assert {"FriedmanSchuster", "BRLMined"} <= set(both.options())
    with pytest.raises(ValueError):
        family_for(["FriedmanSchuster", "Identity"])  # a classifier and a histogram serve different tasks
    with pytest.raises(TypeError, match="family must be"):
        family_for(None, family=3)  # type: ignore[arg-type]


def test_train_takes_every_option_of_the_family_it_is_given(toy) -> None:
    assert set(toy.options) == set(toy_family.TOY_OPTIONS) and toy.family is toy_family.FAMILY
    with pytest.raises(ValueError, match="needs Options"):
        train()


def test_the_package_exports_the_front_door_and_keeps_the_engine_module() -> None:
    assert jostle.choicemaker.dispatch is api.dispatch and jostle.choicemaker.train is api.train
    engine_module = sys.modules["jostle.choicemaker.private_dispatch"]
    from jostle.choicemaker.private_dispatch import dispatch as engine_dispatch

    assert engine_dispatch is engine_module.dispatch and engine_dispatch is not api.dispatch
    for gone in ("jostle.learners.histograms.api", "jostle.learners.trees.api"):  # one front door, not one per family
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(gone)


def test_an_option_made_outside_a_registry_belongs_to_the_family_whose_package_defines_its_class() -> None:
    from dataclasses import fields, replace

    from jostle.learners.trees.options import TREE_OPTIONS, TreeOption

    original = TREE_OPTIONS["FriedmanSchuster"]
    deeper = replace(original, name="FSDeeper", overrides=(("max_depth", 2),))

    class MyTree(TreeOption):  # a user's subclass, defined outside jostle.learners
        pass

    mine = MyTree(**{field.name: getattr(original, field.name) for field in fields(original)})
    trees = get("trees")
    for option in (deeper, mine):
        assert api.owner_of(option) is trees and family_for([option]) is trees
    assert family_for([deeper, "BRLMined"]).name == "brl+trees"
    assert family_for([deeper, "BRLMined"]).option_family(mine) == "trees"
    with pytest.raises(ValueError, match="cannot tell which learner family"):
        api.owner_of(object())


def test_fit_segment_keeps_what_train_kept_and_names_its_parts(toy) -> None:
    """Benchmarks train held-out ChoiceMakers through `engine.fit_segment`; on the same experience
    it must keep the model kind and mode `train` kept, and its parts are read by name."""
    from jostle.choicemaker.engine import SegmentFit, fit_segment

    kept = fit_segment(toy.family, toy.experience, list(toy.options), toy.metafeatures, toy.mf_share,
                       tuple(toy.report["model_kind"].unique()), 1, None)
    assert isinstance(kept, SegmentFit) and SegmentFit._fields == ("model", "mode", "report", "data")
    segment = next(iter(toy.models))
    assert kept.mode == toy.modes[segment]
    assert kept.model.model_kind == toy.models[segment].model_kind
    assert kept.model.options == toy.models[segment].options
    assert bool(kept.report["selected"].sum() == 1)
