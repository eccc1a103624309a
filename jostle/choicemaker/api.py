"""The Python front door of the ChoiceMaker engine, the same for every learner family.

For benchmarks, notebooks and tests that hold a family's inputs (count vectors, coded tables)
rather than Jostle programs:

    from jostle.choicemaker import dispatch, train
    trained = train(["OptionA", "OptionB"], corpus=corpus)          # Options of one task's families
    result = dispatch(trained, data, budget=1.0, charge=my_ledger)  # or accountant=, or uncharged=True

`train` finds the family (or the families) from the Options, so no family has its own helper;
`dispatch` is the engine's one private dispatch (`jostle.choicemaker.private_dispatch.dispatch`), and
it never runs uncharged unless asked: the caller passes a `charge(cost, description)`
function, an `accountant` (a `Session`, its `Accountant`, or a shared `PrivacyBudget`), or
`uncharged=True` (experiments on public data, where no ledger is kept). Each typed cost
reaches the charge before the noise it pays for is drawn; a charge that raises stops the
dispatch with nothing drawn for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import pandas as pd

from jostle.choicemaker import engine, experience, families
from jostle.choicemaker.budgets import as_budget, is_positive
from jostle.choicemaker.private_dispatch import DispatchResult, dispatch as engine_dispatch
from jostle.choicemaker.family import Family
from jostle.choicemaker.model import MODEL_KINDS
from jostle.diagnostics.errors import BudgetExceeded
from jostle.privacy.accounting import MeasureMismatch
from jostle.privacy.budget import Accountant
from jostle.privacy.measures import AnyBudget, Budget, fmt
from jostle.privacy.noise import Randomness
from jostle.privacy.refusals import cap_refusal
from jostle.privacy.shared_budget import PrivacyBudget
from jostle.privacy.subledger import OverBudgetError
from jostle.privacy.units import PrivacyUnit

UNCHARGED_REFUSAL = (
    "jostle.choicemaker.dispatch (the front door) charges every release of a private run, and was given nothing to charge: "
    "pass charge=<function(cost, description)> or accountant=<a Session, its Accountant or a PrivacyBudget>, "
    "or uncharged=True for an experiment on public data that keeps no ledger")


# ------------------------------------------------------------------------------ which family
def _families_of_name(name: str) -> list[Family]:
    """The discovered families with a built-in Option called `name` (case-insensitive)."""
    lower = name.lower()
    return [family for family in families.discover().values()
            if any(key.lower() == lower for key in family.options())]


def owner_of(option: Any) -> Family:
    """The learner family `option` belongs to: an Option object of a family's registry, an
    object of a family's Option class, or the name of a built-in Option of exactly one family.

    Raises:
        KeyError: No family has an Option of that name.
        ValueError: The owner cannot be told (an ambiguous name, an Option of no family).
    """
    if isinstance(option, str):
        owners = _families_of_name(option)
        if not owners:
            raise KeyError(f"no learner family has an Option called {option!r}")
        if len(owners) > 1:
            raise ValueError(f"the Option name {option!r} belongs to the families "
                             f"{', '.join(f.name for f in owners)}: pass the Option object or family=")
        return owners[0]
    owner = families.family_of(option)
    if owner is None:
        raise ValueError(f"cannot tell which learner family the Option {getattr(option, 'name', option)!r} "
                         f"belongs to: pass family=")
    return owner


def family_for(options: Iterable[Any] | None = None, family: Family | str | None = None,
               error: str | None = None) -> Family:
    """The family a ChoiceMaker over `options` trains and dispatches with.

    Args:
        options: Options (objects or built-in names); their families must serve one task.
        family: A family (or its name) to use instead of finding it from the Options.
        error: The error measure to score with (a family hook: `Family.error_measures()`);
            default the family's own.

    Raises:
        ValueError: Neither Options nor a family were given, or the Options' families serve
            different tasks or share no error measure.
    """
    if family is not None:
        chosen = families.get(family) if isinstance(family, str) else family
        if not isinstance(chosen, Family):
            raise TypeError(f"family must be a jostle.choicemaker.family.Family or its name, "
                            f"got {type(chosen).__name__}")
        return chosen.with_error(error)
    listed = _as_list(options)
    if not listed:
        raise ValueError("a ChoiceMaker needs Options (objects or names) or family= to take all of a family's")
    # An Option made outside every family (a user's own object) joins the family of the others.
    owners = [owner_of(o) for o in listed if isinstance(o, str) or families.family_of(o)]
    if not owners:
        raise ValueError(f"cannot tell which learner family the Options "
                         f"{[getattr(o, 'name', o) for o in listed]} belong to: pass family=")
    return families.serving(owners, error)


def _as_list(options: Iterable[Any] | None) -> list[Any]:
    if options is None:
        return []
    if isinstance(options, str):
        return [options]
    if hasattr(options, "values") and callable(options.values):  # a mapping name -> Option
        return list(options.values())
    return list(options)


# ------------------------------------------------------------------------------ training
def train(options: Iterable[Any] | None = None, metafeatures: Any = None, corpus: Any = None, grid: Any = None,
          family: Family | str | None = None, *, error: str | None = None, mf_share: float = 0.1,
          cache_dir: str | Path | None = None, n_jobs: int = -1, progress: bool = True,
          model_kinds: tuple[str, ...] = MODEL_KINDS, selection_folds: int | None = None,
          before_training: Callable[[int], None] | None = None) -> engine.TrainedChoiceMaker:
    """Train a ChoiceMaker on public data (reusing cached experience and models).

    Args:
        options: Options or built-in Option names, of one family or of several families of one
            task (default, with `family=`: all of the family's built-in Options).
        metafeatures: Metafeatures or built-in names (default: the family's defaults).
        corpus: Public training tasks (default: the family's default corpus).
        grid: Training configurations (default: the family's default grid).
        family: The family (or its name), instead of finding it from `options`.
        error: The error measure training scores with (default: the family's own).
        mf_share: Share of the budget spent on noisy metafeatures.
        cache_dir: Cache folder (default $JOSTLE_CACHE or ~/.cache/jostle).
        n_jobs: Processes for building the experience (-1: all cores).
        progress: Show a progress bar.
        model_kinds: Meta-model kinds to choose from (`jostle.choicemaker.model.MODEL_KINDS`).
        selection_folds: None for leave-one-dataset-out; k for k folds of whole groups.
        before_training: Called with the number of experience pieces to run, before running them.

    Returns:
        The `TrainedChoiceMaker`, to pass to `dispatch`.
    """
    serving = family_for(options, family, error)
    option_list = None if options is None else _as_list(options)
    return engine.train(serving, option_list, metafeatures, corpus, grid, mf_share, cache_dir=cache_dir,
                        n_jobs=n_jobs, progress=progress, model_kinds=model_kinds,
                        selection_folds=selection_folds, before_training=before_training)


def experience_table(options: Iterable[Any], metafeatures: Sequence[Any], corpus: Any, grid: Any = None,
                     family: Family | str | None = None, *, error: str | None = None, mf_share: float = 0.1,
                     cache_dir: str | Path | None = None, n_jobs: int = -1,
                     progress: bool = True) -> pd.DataFrame:
    """The experience table of `options` on a public corpus (what `train` learns from): every
    Option run on every training instance of `grid` (default: the family's default grid)."""
    serving = family_for(options, family, error)
    option_list = engine.resolve(_as_list(options), serving.options(), [])
    feature_list = engine.resolve(list(metafeatures), serving.metafeatures(), [])
    return experience.experience_table(serving, option_list, feature_list, corpus,
                                       grid if grid is not None else serving.default_grid(), mf_share,
                                       cache_dir, n_jobs, progress)


# ------------------------------------------------------------------------------ the private run
def account_charge(accountant: Any) -> Callable[[Any, str], None]:
    """The charge function of an accountant: a `jostle.privacy.shared_budget.BudgetAccount` (a
    `Session` or its `Accountant`: `charge_fit(cost, description)` checks every limit, then
    records the typed cost in its ledger) or a budget shared with estimator fits (a
    `PrivacyBudget`: `charge(epsilon, description)`, charged the pure epsilon of each cost).

    Raises:
        TypeError: The object has neither method.
    """
    charge_fit = getattr(accountant, "charge_fit", None)
    if callable(charge_fit):
        return charge_fit
    charge_epsilon = getattr(accountant, "charge", None)
    if not callable(charge_epsilon):
        raise TypeError(f"accountant must be a Session, an Accountant or a PrivacyBudget (charge_fit(cost, "
                        f"description) or charge(epsilon, description)), got {type(accountant).__name__}")

    def charge_pure(cost: Any, description: str) -> None:
        if not isinstance(cost, Budget) or cost.delta:
            raise TypeError(f"{type(accountant).__name__} charges pure epsilons; {description} costs {cost}: "
                            f"pass a Session or charge=")
        charge_epsilon(cost.epsilon, description)

    return charge_pure


def _accountant_behind(account: Any) -> Accountant | None:
    """The `Accountant` an account charges: itself, or a `Session`'s `accountant`."""
    if isinstance(account, Accountant):
        return account
    inner = getattr(account, "accountant", None)
    return inner if isinstance(inner, Accountant) else None


def _check_accountant(accountant: Accountant, cost: AnyBudget) -> None:
    """The accountant's own check of `cost` (in its measure) against every cap, as each charge
    will make it (`Accountant.check` at the row root, where `charge_fit` records), then against
    what the data's lifetime budgets leave (`Accountant.remaining`, checked by the durable ledger
    only when a charge is committed, so a later part could otherwise be refused after an earlier
    one was recorded).

    Raises:
        BudgetExceeded: It does not fit; nothing is recorded.
    """
    accountant.check(cost, accountant.root)
    if accountant.store is None:
        return
    left = accountant.remaining
    assert left is not None  # `check` refused a session without a total
    limits = dict(left.quantities())
    for quantity, requested in cost.quantities():
        if requested > limits.get(quantity, requested):
            raise cap_refusal(quantity, requested, limits[quantity],
                              "what the data's lifetime budget leaves (see `jostle ledger show`)", None,
                              accountant.spent, None)


def _returning_entries(charge: Callable[[Any, str], None],
                       behind: Accountant | None) -> Callable[[Any, str], Any]:
    """`charge`, returning the ledger entry it recorded when the account is an `Accountant` (or a
    `Session`'s), so that the dispatch can add the predicted error to its details."""
    if behind is None:
        return charge

    def charge_and_return(cost: Any, description: str) -> Any:
        before = len(behind.ledger)
        charge(cost, description)
        return behind.ledger[-1] if len(behind.ledger) > before else None

    return charge_and_return


def check_account(accountant: Any, budget: Any) -> None:
    """Refuse, before anything is measured, a dispatch of `budget` that `accountant` cannot pay
    in whole (the engine charges the metafeatures' part first, so an account refusing only the
    Option's part would leave that share spent). As the language's ChoiceMaker call does: a
    `Session` or its `Accountant` checks the whole budget, in its own measure
    (`accounting.cost`), against every cap and lifetime; a `PrivacyBudget` checks the whole
    pure epsilon exactly as its charges will (against its own total, or the account it charges).
    The dispatch's parts add up to `budget` exactly (`measurement.plan_budget`), and in a zCDP
    account the parts' epsilons cost less together than the whole's, so a budget that passes
    here is never refused part-way by the limits checked here.

    Raises:
        BudgetExceeded: A `Session` or `Accountant` cannot pay `budget` (nothing recorded).
        OverBudgetError: A `PrivacyBudget` cannot (nothing recorded).
        TypeError: The account cannot be checked in advance, or a `PrivacyBudget` is given a
            budget that is not a pure epsilon.
    """
    total = as_budget(budget)
    if isinstance(accountant, PrivacyBudget):
        if not isinstance(total, Budget) or total.delta:
            raise TypeError(f"a PrivacyBudget charges pure epsilons, and this dispatch's budget is {total}: "
                            "pass a Session or charge=")
        if accountant.detached:
            accountant.charge(total.epsilon, "a ChoiceMaker's dispatch")  # refuses: nothing is recorded
        if accountant.account is None:
            return  # no total: it records and refuses nothing
        behind = _accountant_behind(accountant.account)
        if behind is None:
            raise TypeError(f"the account of {accountant.name} cannot be checked before the dispatch measures "
                            "anything: give the PrivacyBudget a Session or an Accountant, or pass charge=")
        try:
            _check_accountant(behind, behind.accounting.cost(total))
        except (BudgetExceeded, MeasureMismatch) as refusal:  # refused before anything is measured
            raise OverBudgetError(
                f"a ChoiceMaker's dispatch of epsilon {fmt(total.epsilon)} was refused: {refusal.message} "
                f"({accountant.name} has spent {accountant.spent}). Nothing was drawn and nothing was spent."
            ) from None
        return
    behind = _accountant_behind(accountant)
    if behind is None:
        raise TypeError(f"accountant must be a Session, an Accountant or a PrivacyBudget (its limits are checked "
                        f"before anything is measured), got {type(accountant).__name__}: for another account "
                        "pass charge=")
    _check_accountant(behind, behind.accounting.cost(total))


def check_unit(family: Family, unit: PrivacyUnit | None, stability: int | None) -> None:
    """Refuse, before any charge, data under a unit the front door cannot calibrate for.

    The family must declare the unit (`Family.check_unit`). Data the Python caller hands over
    is the family's input as it is (counts, a coded table): its noise is calibrated to one row
    added or removed, and nothing here knows how many rows one entity holds. So data under an
    entity unit is taken only when the caller states that each entity holds at most one row,
    `stability=1` (e.g. after bounding the rows per entity to one); the language scales or
    refuses by the table's stability itself.

    Raises:
        UnsupportedUnit: The family does not declare the unit.
        ValueError: Entity data without `stability=1`, or a stability given for row data
            other than 1.
    """
    checked = family.check_unit(unit)
    if checked.is_entity and stability != 1:
        raise ValueError(
            f"the front door's noise is calibrated to one row, and under the unit {checked} one entity may hold "
            f"several rows: pass stability=1 once each entity holds at most one row of the data "
            f"(got stability={stability!r}); nothing was spent")
    if stability is not None and stability != 1:
        raise ValueError(f"stability must be 1 (each privacy unit holds at most one row), got {stability!r}")


def dispatch(trained: Any, data: Any, budget: Any, *, charge: Callable[[Any, str], None] | None = None,
             accountant: Any = None, uncharged: bool = False, noise: Any = None,
             option_noise: Callable[[str], Any] | None = None, unit: PrivacyUnit | None = None,
             stability: int | None = None, name: str = "choicemaker") -> DispatchResult:
    """Choose and run the best Option on private `data`, spending at most `budget` in total.

    Args:
        trained: A ChoiceMaker from `train` (or `jostle.choicemaker.pretrained`).
        data: The private input as the family's Options read it (the family's input type).
        budget: The whole budget: a `Budget` (pure epsilon) or `RhoZCDPBudget`; a number is a
            pure epsilon.
        charge: charge(cost, description), called with each part's typed cost before the noise
            it pays for is drawn; it raises to refuse.
        accountant: Instead of `charge`, the account to charge (`account_charge`): a `Session`
            or its `Accountant` (every limit checked, the charges in its ledger), or a
            `PrivacyBudget` shared with estimator fits.
        uncharged: Run without charging anything: only for experiments on public data.
        noise: The metafeatures' (and, without `option_noise`, the Option's) noise source
            (default: `Randomness()`, the secure exact source).
        option_noise: option_noise(name) gives the chosen Option's noise source.
        unit: The data's privacy unit (default: one row added or removed); one the family
            declares (`Family.units`).
        stability: For data under an entity unit, 1: the caller states that each entity holds
            at most one row (`check_unit`); such data is refused without it.
        name: The ChoiceMaker's name in the trace.

    Raises:
        ValueError: Nothing to charge and not `uncharged=True`, or charges given together with
            `uncharged=True`, or entity data without `stability=1` (before anything happens).
        BudgetExceeded, OverBudgetError: The account cannot pay the whole budget (`check_account`,
            before anything is measured).
        UnsupportedUnit, UnsupportedMeasure, ChoiceBudgetError: As the engine's dispatch.
    """
    if accountant is not None:
        if charge is not None:
            raise ValueError("give dispatch either charge= or accountant=, not both")
        charge = _returning_entries(account_charge(accountant), _accountant_behind(accountant))
    if uncharged and charge is not None:
        raise ValueError("dispatch was asked to run uncharged and given something to charge: choose one")
    if charge is None and not uncharged:
        raise ValueError(UNCHARGED_REFUSAL)
    family = trained.family
    check_unit(family, unit, stability)
    try:
        total = as_budget(budget)
    except ValueError:
        total = None  # the engine refuses it, with its message, before anything
    if accountant is not None and total is not None and is_positive(total):
        family.check_measure(total)  # a measure the family refuses: refused as the engine would, first
        check_account(accountant, total)
    return engine_dispatch(trained, data, budget, Randomness() if noise is None else noise, charge, option_noise,
                           name=name, unit=unit)


__all__ = ["UNCHARGED_REFUSAL", "account_charge", "check_account", "check_unit", "dispatch", "experience_table",
           "family_for", "owner_of", "train"]
