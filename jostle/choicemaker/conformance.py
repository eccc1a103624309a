"""The conformance checks every learner family must pass, shipped with the package (in the
manner of scikit-learn's `estimator_checks`).

The author of a new family runs them all in one line:

    from jostle.choicemaker.conformance import check_family
    check_family(FAMILY)          # trains FAMILY on a tiny public setup, runs every check

`check_family` raises `ConformanceError` (an `AssertionError`) at the first property the
family breaks, its message starting with `[<family>] <property>:` and its `property` attribute
naming it. `tests/test_family_conformance.py` runs every check on every family that
`jostle.choicemaker.families.discover()` finds, and on broken toy families to show that each
check can fail.

The properties (the privacy ones observed from outside, through the dispatch's `charge=`
callback and noise sources that record every call made on them):

  * declarations: every noisy metafeature states its sensitivity argument, every Option has a
    fingerprint, the family's declared names and modes are consistent;
  * planned charges equal the ledger total: a dispatch's charges add up exactly (Fractions) to
    its plan (`result.budget_split`) and to epsilon; the Option's part is charged once, in full;
  * a charge before every draw: no draw precedes the first charge; a metafeature draws only
    after its budget unit is charged (a free one never draws); an Option draws only after its
    part is charged, and runs only then;
  * an over-budget request is refused with nothing released: an outside accountant holding
    less than epsilon refuses a charge; the dispatch raises it, and nothing is drawn, charged
    or run after the refused charge (nothing at all when the accountant holds nothing); a
    `BudgetGuard` refuses a charge above its epsilon before forwarding it;
  * seed determinism: equally seeded dispatches give the same choice, release, trace and
    draws; the experience table built twice (fresh caches, one process) is identical except
    for the `seconds` column;
  * the zero-spend neighbour rule: on two neighbouring public inputs, a dispatch whose first
    charge is refused fails identically (type, message, charges asked for) and draws nothing;
    the public metafeatures and the public context are identical on both;
  * pickling for parallel training: the family, its Options and metafeatures and a trained
    ChoiceMaker survive pickle and cloudpickle, keep their fingerprints, and the unpickled
    ChoiceMaker chooses (and dispatches) the same;
  * every privacy unit and every measure it declares (charges equal to the planned costs,
    each within its part, in total within the budget), and refusal of the others before
    anything happens.

Every dispatch check runs the trained ChoiceMaker on a public input of every trained segment
and on the family's neighbouring input, and also forces every Option once (a `ChoiceSpec`
holding that Option alone, with all of the family's metafeatures), so Options a small
ChoiceMaker never picks are checked too. Modules: `conformance_setup` (the recorders, the tiny
setup, the `Subject`), `conformance_privacy` and `conformance_determinism` (the checks).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Callable, Iterable

from jostle.choicemaker.conformance_determinism import (check_experience_determinism, check_neighbour_rule,
                                                        check_pickling, check_seed_determinism, same_release)
from jostle.choicemaker.conformance_privacy import (check_budget_guard, check_charge_before_draw,
                                                    check_declarations, check_measures, check_over_budget_refused,
                                                    check_planned_charges, check_units)
from jostle.choicemaker.conformance_setup import (BUDGET_GUARD, CHARGE_BEFORE_DRAW, DECLARATIONS, EPSILON,
                                                  EXPERIENCE_DETERMINISM, MEASURES, NEIGHBOUR_RULE, OVER_BUDGET,
                                                  PICKLING, PLANNED_CHARGES, SEED_DETERMINISM, UNITS,
                                                  ConformanceError, Ledger, OutsideBudgetExceeded, RecordingNoise,
                                                  RecordingRuntime, Subject, TinySetup, make_subject, tiny_setup,
                                                  train_tiny)
from jostle.choicemaker.family import Family

Check = Callable[[Subject], None]

CHECKS: tuple[Check, ...] = (
    check_declarations, check_planned_charges, check_charge_before_draw, check_over_budget_refused,
    check_budget_guard, check_seed_determinism, check_experience_determinism, check_neighbour_rule,
    check_pickling, check_units, check_measures)


def run_checks(subject: Subject, checks: Iterable[Check] = CHECKS) -> None:
    """Run `checks` (default: every check) on an already trained `subject`; the first failure raises."""
    for check in checks:
        check(subject)


def check_family(family: Family, workdir: str | Path | None = None, seed: int = 0,
                 checks: Iterable[Check] = CHECKS) -> Subject:
    """Check that `family` conforms: train it on a tiny public setup and run every check.

    Args:
        family: The family (an instance of a `jostle.choicemaker.family.Family` subclass).
        workdir: A folder for the training cache and the checks' fresh caches (default: a
            temporary folder, removed afterwards).
        seed: The seed of the checks' noise and of the family's neighbouring inputs.
        checks: The checks to run (default: all of `CHECKS`, in order).

    Returns:
        The `Subject` the checks ran on (its trained ChoiceMaker, setup and seed).

    Raises:
        ConformanceError: The first property the family breaks (an `AssertionError` whose
            message starts with `[<family>] <property>:`).
    """
    if not isinstance(family, Family):
        raise TypeError(f"check_family needs a jostle.choicemaker.family.Family, got {type(family).__name__}")
    if workdir is not None:
        folder = Path(workdir)
        folder.mkdir(parents=True, exist_ok=True)
        subject = make_subject(family, folder, seed)
        run_checks(subject, checks)
        return subject
    with tempfile.TemporaryDirectory(prefix=f"jostle-conformance-{family.name}-") as temporary:
        subject = make_subject(family, Path(temporary), seed)
        run_checks(subject, checks)
        return subject


__all__ = ["BUDGET_GUARD", "CHARGE_BEFORE_DRAW", "CHECKS", "DECLARATIONS", "EPSILON", "EXPERIENCE_DETERMINISM",
           "MEASURES", "NEIGHBOUR_RULE", "OVER_BUDGET", "PICKLING", "PLANNED_CHARGES", "SEED_DETERMINISM", "UNITS",
           "Check", "ConformanceError", "Ledger", "OutsideBudgetExceeded", "RecordingNoise", "RecordingRuntime",
           "Subject", "TinySetup", "check_budget_guard", "check_charge_before_draw", "check_declarations",
           "check_experience_determinism", "check_family", "check_measures", "check_neighbour_rule",
           "check_over_budget_refused", "check_pickling", "check_planned_charges", "check_seed_determinism",
           "check_units", "make_subject", "run_checks", "same_release", "tiny_setup", "train_tiny"]
