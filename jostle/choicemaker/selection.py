"""The "selection" mode of a ChoiceMaker: choosing without measuring metafeatures.

Instead of measuring metafeatures and predicting each Option's error (measure-then-choose), a
family that opts in through the hook `Family.private_score` (None by default) may be run by
Liu and Talwar's private selection (`jostle.privacy.private_selection`): a geometric number of
candidate runs, each an Option drawn uniformly at random (public randomness) run with part of
eps1 and scored on the private data with the rest (the family's `private_score(option, data,
output) -> (score, sensitivity)` plus Laplace(sensitivity / eps_score), `safe_noise.noisy_scores`),
the best noisy score released. With a budget E: eps1 = E / 3 (a rho: E is the pure epsilon within
it), and E is charged, once, before anything is drawn.

Training decides, per segment and on the public corpus only (a public decision, costing no
privacy), whether selection pays: `simulate` runs the selection on every training instance of
the segment with simulated noise at the instance's budget, and `decide` keeps it only when its
per-group mean errors are clearly below those of the kept measure-then-choose design (held out
by leave-one-dataset-out, `model.lodo_chosen_errors`; for the "credit" payoff rule a ChoiceMaker
that measures nothing runs with the whole budget, so its errors are credited the share), by the
engine's paired rule (`model.measuring_pays`: mean per-group difference below zero by more than
two standard errors). Families without the hook train and dispatch exactly as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from jostle.choicemaker.budgets import as_budget, pure_epsilon_within
from jostle.choicemaker.family import Family, stable_seed
from jostle.choicemaker.model import measuring_pays
from jostle.privacy import safe_noise
from jostle.privacy.measures import Budget
from jostle.privacy.private_selection import Selected, SelectionPlan, plan_selection, select_private_candidate

DEFAULT_RUN_SHARE = Fraction(9, 10)
"""The share of each candidate's eps1 its Option runs with (the score gets the rest)."""


def default_stop_probability(candidates: int) -> Fraction:
    """gamma = 1 / (2 K) for K candidates: 2 K runs expected, so each Option is tried about twice."""
    return Fraction(1, 2 * max(int(candidates), 1))


@dataclass(frozen=True)
class SelectionDecision:
    """What training found about private selection on one segment (public facts about the corpus).

    Attributes:
        used: Whether the segment's dispatch runs the selection.
        stop_probability: gamma of the selection.
        run_share: The Option's share of each candidate's eps1.
        selection_error: Mean per-group error of the simulated selection.
        measured_error: Mean per-group error of the kept measure-then-choose design.
        groups: How many corpus groups the comparison used.
    """

    used: bool
    stop_probability: Fraction
    run_share: Fraction
    selection_error: float
    measured_error: float
    groups: int

    def sentence(self) -> str:
        """The decision in words, for `explain`."""
        verdict = "paid" if self.used else "did not pay"
        return (f"private selection (no metafeatures, 3 candidate budgets) {verdict} on the public corpus: "
                f"held-out mean error {self.selection_error:.3g} against {self.measured_error:.3g} for "
                f"measure-then-choose ({self.groups} groups)")


def selection_plan(budget: Any, stop_probability: Fraction, run_share: Fraction) -> SelectionPlan:
    """The plan of a selection spending the pure epsilon within `budget` (all of a pure budget)."""
    return plan_selection(pure_epsilon_within(as_budget(budget)), stop_probability, run_share)


def run_selection(family: Family, options: Sequence[Any], data: Any, plan: SelectionPlan, noise: Any,
                  run: Callable[[Any, Budget], Any], charge: Callable[[Any, str], None]) -> Selected:
    """One private selection among `options` on `data` (see the module docstring).

    Args:
        family: The family (its `private_score` scores each output).
        options: The candidates (public: the segment's available Options, in a fixed order).
        data: The input.
        plan: `selection_plan(...)`.
        noise: Randomness for the number of runs, the Option drawn at each run and the scores.
        run: run(option, budget) -> the Option's output at the run's pure budget (uncharged:
            `charge` pays for every run).
        charge: Called once with the selection's whole pure epsilon before anything is drawn.
    """
    if family.private_score is None:
        raise ValueError(f"the {family.name} family has no private_score hook: it cannot run a private selection")
    options = list(options)
    run_budget = Budget(plan.run_epsilon, Fraction(0))

    def candidate() -> tuple[Any, Any, float]:
        # One eps1-DP run: an Option drawn by public coins, run at eps1 * share, its output
        # scored with Laplace(sensitivity / (eps1 - run)) (sequential composition: eps1).
        index = int(np.asarray(noise.integers_below(len(options), 1))[0])
        option = options[index]
        output = run(option, run_budget)
        score, sensitivity = family.private_score(option, data, output)
        noisy = safe_noise.noisy_scores(noise, np.array([float(score)]), float(sensitivity), plan.score_epsilon)
        return option.name, output, float(noisy[0])

    chosen = select_private_candidate(noise, candidate, plan, charge)
    assert chosen is not None  # the best-of always returns a candidate
    return chosen


def simulate(family: Family, options: Sequence[Any], corpus: Sequence[Any], grid: Any, segment: Hashable,
             stop_probability: Fraction, run_share: Fraction) -> pd.Series:
    """Mean error per corpus group of the selection on the segment's public training instances,
    with seeded simulated noise (public data: nothing is charged)."""
    rows = []
    for task in corpus:
        for _, piece in family.pieces(task, grid, list(options)):
            candidates = [o for o in family.piece_options(task, piece, list(options)) if segment in family.segments(o)]
            if not candidates:
                continue
            for instance in family.instances(task, piece, grid):
                if family.segment_of(instance.data) != segment:
                    continue
                noise = family.simulation_noise(stable_seed(*instance.seed_parts, "private selection"))
                plan = selection_plan(instance.budget, stop_probability, run_share)
                chosen = run_selection(family, candidates, instance.data, plan, noise,
                                       lambda option, part: family.run(option, instance.data, part, noise, {}),
                                       lambda cost, description: None)
                option = next(o for o in candidates if o.name == chosen.candidate)
                rows.append((str(instance.columns[family.group_column]),
                             float(family.option_error(option, instance, chosen.output))))
    if not rows:
        return pd.Series(dtype=float)
    frame = pd.DataFrame(rows, columns=["group", "error"])
    return frame.groupby("group")["error"].mean()


def decide(selection_errors: pd.Series, measured_errors: pd.Series, stop_probability: Fraction,
           run_share: Fraction) -> SelectionDecision:
    """Keep the selection only where its per-group errors are clearly lower (`measuring_pays`)."""
    selection_errors, measured_errors = selection_errors.align(measured_errors, join="inner")
    used = len(selection_errors) > 0 and measuring_pays(selection_errors, measured_errors)
    return SelectionDecision(bool(used), Fraction(stop_probability), Fraction(run_share),
                             float(selection_errors.mean()) if len(selection_errors) else float("nan"),
                             float(measured_errors.mean()) if len(measured_errors) else float("nan"),
                             int(len(selection_errors)))


def used_on(decisions: Mapping[Hashable, SelectionDecision] | None, segment: Hashable) -> SelectionDecision | None:
    """The segment's decision if the selection runs there (None: measure-then-choose)."""
    decision = (decisions or {}).get(segment)
    return decision if decision is not None and decision.used else None


__all__ = ["DEFAULT_RUN_SHARE", "SelectionDecision", "decide", "default_stop_probability", "run_selection",
           "selection_plan", "simulate", "used_on"]
