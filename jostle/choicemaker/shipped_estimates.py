"""The expected error of an Option called directly, from the experience a shipped ChoiceMaker holds.

A program may call an Option itself (`FriedmanSchuster(t, "class", epsilon=1)`, `DAWA(h,
epsilon=0.5)`) rather than through a ChoiceMaker. The cost report (issue 29) still owes it an
error "from the experience table of the Option at that budget and public size bound, labelled as
an estimate". Every shipped ChoiceMaker (`pretrained.save_shipped`) keeps a summary of its
experience: each Option's mean error, spread, run count (and, from issue 29 on, quantiles of
single runs) per segment, mode and budget. `option_estimate` finds the shipped summaries that
hold runs of the Option, keeps the one with the most runs of it, and asks
`error_estimates.estimate_error` for the Option at the call's budget.

One correction, said in the estimate's source: in the "measured" mode of training the Option
ran at its share of the budget, (1 - mf_share) of the grid budget (less where the family raised
the metafeature share at small budgets, `Family.metafeature_share_at`), the rest paying for
metafeatures; a direct call gives the Option the whole budget, so the grid budget looked up is the
one whose Option share is the call's: the call's divided by (1 - the share at that budget).

Privacy: the summaries are functions of public corpora only (shipped package data), and the
budget, the segment (a histogram's number of dimensions) and the size bound are public facts of
the program; nothing here reads a private row, so the estimate is identical on neighbouring inputs.
The estimate is the spread over the corpus's tasks near that budget: calibrated for a task drawn
like the corpus's, not a bound on this input's error.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Hashable

from jostle.choicemaker import error_estimates, families
from jostle.choicemaker.budgets import as_budget, pure_epsilon_within
from jostle.choicemaker.error_estimates import ErrorEstimate
from jostle.choicemaker.family import exact_share
from jostle.privacy.measures import RhoZCDPBudget


@dataclass(frozen=True)
class ShippedExperience:
    """The public part of a shipped ChoiceMaker that `estimate_error` reads (no meta-models used).

    Attributes:
        family: The trained family (its error measure, segment and configuration columns).
        experience: The shipped experience summary (one row per segment, mode, budget, Option).
        options: The Options it was trained on, by name.
        models: Segment -> meta-model (only its keys are read: the segments it covers).
        modes: Segment -> the mode dispatch uses there.
        mf_share: The budget share training gave metafeatures in the "measured" mode.
        path: Where it was loaded from.
        origin: Always "shipped".
    """

    family: Any
    experience: Any
    options: tuple[str, ...]
    models: dict
    modes: dict
    mf_share: float
    path: Path
    origin: str = "shipped"


def _family_named(name: str) -> Any:
    """The family of a shipped payload, combined families ("brl+trees") included; None if unknown."""
    from jostle.choicemaker.combined import CombinedFamily

    parts = name.split("+")
    try:
        found = [families.get(part) for part in parts]
    except KeyError:
        return None
    return found[0] if len(found) == 1 else CombinedFamily(tuple(found))


@lru_cache(maxsize=None)
def shipped_experiences() -> tuple[ShippedExperience, ...]:
    """Every shipped ChoiceMaker's experience summary, over every family (loaded once)."""
    import joblib

    from jostle.choicemaker.pretrained import _sklearn_version, shipped_folder

    found: list[ShippedExperience] = []
    version = _sklearn_version()
    for family in families.discover().values():
        for path in sorted(shipped_folder(family).glob("*.joblib")):
            stored = joblib.load(path)
            trained_family = _family_named(str(stored.get("family", "")))
            summary = stored.get("experience_summary")
            if stored.get("sklearn") != version or trained_family is None or summary is None or not len(summary):
                continue  # another scikit-learn's pickles, or a family this code does not know
            found.append(ShippedExperience(trained_family, summary, tuple(stored["options"]), dict(stored["models"]),
                                           dict(stored["modes"]), float(stored.get("mf_share", 0.0)), path))
    return tuple(found)


def _runs_of(shipped: ShippedExperience, option_name: str, segment: Hashable) -> int:
    table = shipped.experience
    rows = table[table["option"] == option_name]
    column = shipped.family.segment_column
    if segment is not None and column is not None and column in rows.columns:
        rows = rows[rows[column] == segment]
    return int(rows["runs"].sum()) if "runs" in rows.columns else len(rows)


def _whole_budget_target(budget: Any, share: float, family: Any = None) -> Any:
    """The grid budget whose measured-mode Option share equals the call's whole budget. Where
    the family raises the share at small budgets (`Family.metafeature_share_at`), the share is
    the one at the target: a few fixed-point steps (the raised share falls as the budget grows)."""
    total = as_budget(budget)
    if share <= 0.0:
        return total

    def target(at: float) -> Any:
        if isinstance(total, RhoZCDPBudget):
            return RhoZCDPBudget(total.rho / (1.0 - at) ** 2)  # rho scales as epsilon squared
        return float(pure_epsilon_within(total)) / (1.0 - at)

    found = target(share)
    for _ in range(8 if family is not None else 0):
        found = target(float(family.metafeature_share_at(exact_share(share), as_budget(found))))
    return found


def option_estimate(option_name: str, budget: Any, segment: Hashable = None, size_bound: int | None = None,
                    confidence: float = error_estimates.LEVEL) -> ErrorEstimate | None:
    """The expected error of `option_name` run directly at `budget`, from the shipped experience
    with the most runs of it; None when no shipped ChoiceMaker has tried it (or none fits the
    segment or budget).

    Args:
        option_name: The Option's name in the language ("FriedmanSchuster", "DAWA").
        budget: The call's whole budget (a `Budget`, a `RhoZCDPBudget`, or a pure epsilon).
        segment: The input's segment where the family has one (a histogram's dimensions), or None.
        size_bound: A public bound on the input's size, or None.
        confidence: The interval's confidence, in (0, 1).

    Raises:
        ValueError: A confidence outside (0, 1).
    """
    confidence = error_estimates.check_confidence(confidence)
    candidates = [(runs, index, shipped) for index, shipped in enumerate(shipped_experiences())
                  if option_name in shipped.options and (runs := _runs_of(shipped, option_name, segment)) > 0]
    if not candidates:
        return None
    _, _, shipped = max(candidates, key=lambda item: (item[0], -item[1]))
    measured = "mode" in shipped.experience.columns and (shipped.experience["mode"] == "measured").all()
    share = shipped.mf_share if measured else 0.0
    try:
        target = _whole_budget_target(budget, share, shipped.family)
        found = error_estimates.estimate_error(shipped, option_name, target, size_bound, confidence, segment,
                                               f"the shipped ChoiceMaker {shipped.path.stem}")
    except (ValueError, KeyError):
        return None
    said = (f"; looked up at the budget whose Option share in training (1 - {share:g}, or less where the "
            f"family raised the metafeature share) is the call's" if share > 0 else "")
    return replace(found, source=f"called directly: {found.source}{said}")


__all__ = ["ShippedExperience", "option_estimate", "shipped_experiences"]
