"""The ILP family as the ChoiceMaker engine sees it: DP inductive logic programming (issue 24).

Input: an `ILPData` (`task`): a relational database of training examples and their facts, the
mode declarations and the fake example's bottom clause(s) (public). Options: the DP ILP
configurations of `options.ILP_OPTIONS` (relevance-aware with l = 2, 3, 4 and naive, with 1 or
2 clauses, and the trivial theory). Error: 1 - the learned theory's accuracy on public test
examples (`theory.accuracy`), floored at 0.01 (`task.theory_error`). Task "ilp" (no other
family serves it). One segment. Payoff rule "paired": accuracies do not scale as 1/epsilon, so
the free "public" mode (public metafeatures only, the whole budget to the Option) is validated
beside the "measured" one, and measuring is kept only if it is clearly better.

Units and measures. The privacy unit is `entity(example id)`: a neighbour removes one example
and every fact keyed by it (the paper's footnote 1); the Options' sensitivity arguments
(`options`, `private`) are for that unit, so data under any other unit (row, replace-one) is
refused before any charge. The Options are pure-epsilon mechanisms, run at the pure epsilon
within the budget they are given (a rho r in a zCDP program: the largest epsilon with
epsilon^2 / 2 <= r).

`run_option` gives the Option the one guard of `jostle.privacy.subledger` (`option_guard`),
which refuses, before any draw, a step that would take it past the pure epsilon its Option was
charged.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from jostle.choicemaker.family import Family, Instance, MetafeatureContext, run_epsilon
from jostle.privacy.measures import AnyBudget
from jostle.privacy.subledger import option_guard
from jostle.learners.ilp.task import ERROR_MEASURES, ILPData, ILPGrid, remove_example, theory_error

__all__ = ["FAMILY", "ILPData", "ILPFamily"]


class ILPFamily(Family):
    """Theories of Prolog clauses learned privately from keyed relational data (see the module
    docstring)."""

    name = "ilp"
    task = "ilp"
    error_measure = "accuracy"
    error_name = ERROR_MEASURES["accuracy"]
    config_columns = ("task", "group", "train_size", "k", "epsilon")
    # log10(noisy examples * epsilon): the signal-to-noise product most choices hinge on
    meta_input_products = (("n_examples", "epsilon"),)
    segment_column = None
    modes = ("measured", "public")
    payoff_rule = "paired"
    seconds_per_piece = 4.0  # rough mean: 9 Options x 2 modes x 4 epsilons x 2 repetitions of one size, one core
    language_module = "jostle.learners.ilp.language"
    units = ("entity",)
    measures = ("pure", "zcdp")

    @property
    def default_metafeatures(self) -> tuple[str, ...]:  # type: ignore[override]
        from jostle.learners.ilp.metafeatures import DEFAULT_METAFEATURES

        return DEFAULT_METAFEATURES

    def error_measures(self) -> Mapping[str, str]:
        return dict(ERROR_MEASURES)

    def options(self) -> Mapping[str, Any]:
        from jostle.learners.ilp.options import ILP_OPTIONS

        return ILP_OPTIONS

    def metafeatures(self) -> Mapping[str, Any]:
        from jostle.learners.ilp.metafeatures import ILP_METAFEATURES

        return ILP_METAFEATURES

    def default_corpus(self, options: Sequence[Any]) -> Sequence[Any]:
        from jostle.learners.ilp.corpus import ilp_corpus

        return ilp_corpus()

    def default_grid(self) -> ILPGrid:
        return ILPGrid()

    def pieces(self, task: Any, grid: Any, options: Sequence[Any]) -> list[tuple[str, Any]]:
        return [(f"n{size}", int(size)) for size in grid.sizes]

    def piece_cost(self, task: Any, piece: Any) -> float:
        return float(piece)

    def instances(self, task: Any, piece: Any, grid: Any) -> Iterable[Instance]:
        from jostle.learners.ilp.task import instances

        return instances(task, piece, grid)

    def context(self, data: Any, option_budget: AnyBudget, total_budget: AnyBudget) -> MetafeatureContext:
        # public facts only: the fake example's size and the lattice's level sizes
        return MetafeatureContext(option_budget, total_budget,
                                  facts={"k": data.k, "level_sizes": data.level_sizes()})

    def run_option(self, option: Any, data: Any, budget: AnyBudget, noise: Any,
                   released: Mapping[str, float]) -> Any:
        # The caller charged the pure epsilon within `budget` in full (`planned_cost`); the
        # guard refuses, before any draw, a step that would spend more.
        epsilon = run_epsilon(budget)
        return option.learn(data, Fraction(epsilon), noise, option_guard(option.name, epsilon))

    def error(self, instance: Instance, result: Any) -> float:
        return theory_error(result.theory, instance.evaluation)

    def neighbouring_inputs(self, seed: int) -> tuple[Any, Any]:
        from jostle.learners.ilp import trains
        from jostle.learners.ilp.fake import fake_bottom
        from jostle.learners.ilp.modes import train_modes

        modes = train_modes(max_clause_length=4, max_bottom=8)
        database = trains.generate_trains(40, seed, trains.DEFAULT_TARGET)
        fake = fake_bottom(modes, trains.schema(), "has_car(T, C), short(C), closed(C), long(C), double(C)")
        rng = np.random.default_rng(seed)
        neighbour = remove_example(database, int(rng.integers(0, 40)))  # one train and its cars removed
        return ILPData(database, modes, (fake,), "neighbours"), ILPData(neighbour, modes, (fake,), "neighbours")

    def describe(self, result: Any) -> str:
        to_prolog = getattr(result, "to_prolog", None)
        return to_prolog() if callable(to_prolog) else repr(result)


FAMILY = ILPFamily()
