"""The redescription family as the ChoiceMaker engine sees it: DP tree-based redescription mining
(Mihelcic and Miettinen 2023; issue 25).

Input: a `RedescriptionData` (`task`): two views of the same entities coded against public
domains, and the public facts of the call (the planned runs). Options: the paper's miners in
their tested settings (`options.REDESCRIPTION_OPTIONS`: AltExpM and AltMCMC, each non-robust and
stable, and MCMCTreePair with omega 0.1 and 0.5). Error (`task.redescription_error`): 1 - the
median true Jaccard of the kept (not pruned) redescriptions, 1 when none is kept, computed on
the public training views; or, by name, the share of the kept ones not significant. Task
"redescription" (no other family serves it). One segment. Payoff rule "paired": the errors do
not scale as 1/epsilon, so the free "public" mode (public metafeatures only, the whole budget to
the Option) is validated beside the "measured" one, and measuring is kept only if it is clearly
better.

Units and measures. The privacy unit is `entity(key)`: a neighbour removes one entity from both
views; the Options' sensitivity arguments (`options` and the core) are for that unit, so data
under any other unit (row, replace-one) is refused before any charge. The Options are
pure-epsilon mechanisms, run at the pure epsilon within the budget they are given (a rho r in a
zCDP program: the largest epsilon with epsilon^2 / 2 <= r).

`run_option` gives the Option the one guard of `jostle.privacy.subledger` (`option_guard`),
which refuses, before any draw, a step that would take it past the pure epsilon its Option was
charged; the Option may read the entity count released earlier in the same call (`released`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

from jostle.choicemaker.family import Family, Instance, MetafeatureContext, run_epsilon
from jostle.privacy.measures import AnyBudget
from jostle.privacy.subledger import option_guard
from jostle.learners.redescription.corpus import redescription_corpus
from jostle.learners.redescription.metafeatures import DEFAULT_METAFEATURES, REDESCRIPTION_METAFEATURES
from jostle.learners.redescription.options import REDESCRIPTION_OPTIONS
from jostle.learners.redescription.task import (ERROR_MEASURES, RedescriptionData, RedescriptionGrid, instances,
                                                redescription_error, remove_entity)

__all__ = ["FAMILY", "RedescriptionData", "RedescriptionFamily"]

NEIGHBOUR_ENTITIES = 300  # the size of the neighbouring inputs (public, generated)


class RedescriptionFamily(Family):
    """Redescriptions mined privately from two views of the same entities (see the module
    docstring)."""

    name = "redescription"
    task = "redescription"
    error_measure = "jaccard"
    error_name = ERROR_MEASURES["jaccard"]
    config_columns = ("task", "group", "entities", "epsilon")
    # log10(noisy entities * epsilon): the signal-to-noise product the paper's choice hinges on
    meta_input_products = (("n_entities", "epsilon"),)
    segment_column = None
    modes = ("measured", "public")
    payoff_rule = "paired"
    seconds_per_piece = 45.0  # rough mean: 6 Options x 2 modes x 3 epsilons of one size, one core
    language_module = "jostle.learners.redescription.language"
    units = ("entity",)
    measures = ("pure", "zcdp")

    default_metafeatures = DEFAULT_METAFEATURES

    def error_measures(self) -> Mapping[str, str]:
        return dict(ERROR_MEASURES)

    def options(self) -> Mapping[str, Any]:
        return REDESCRIPTION_OPTIONS

    def metafeatures(self) -> Mapping[str, Any]:
        return REDESCRIPTION_METAFEATURES

    def default_corpus(self, options: Sequence[Any]) -> Sequence[Any]:
        return redescription_corpus()  # four generated tasks (`corpus`), each its own group

    def default_grid(self) -> RedescriptionGrid:
        return RedescriptionGrid()

    def pieces(self, task: Any, grid: Any, options: Sequence[Any]) -> list[tuple[str, Any]]:
        return [(f"{size} entities", int(size)) for size in grid.sizes]  # one cache piece per size

    def piece_cost(self, task: Any, piece: Any) -> float:
        return float(piece)

    def instances(self, task: Any, piece: Any, grid: Any) -> Iterable[Instance]:
        return instances(task, piece, grid)

    def context(self, data: Any, option_budget: AnyBudget, total_budget: AnyBudget) -> MetafeatureContext:
        # public facts only: the planned runs and the schemas' shapes
        return MetafeatureContext(option_budget, total_budget, facts=data.public_facts())

    def run_option(self, option: Any, data: Any, budget: AnyBudget, noise: Any,
                   released: Mapping[str, float]) -> Any:
        # The caller charged the pure epsilon within `budget` in full (`planned_cost`); the
        # guard refuses, before any draw, a step that would spend more.
        epsilon = run_epsilon(budget)
        return option.learn(data, Fraction(epsilon), noise, option_guard(option.name, epsilon), released)

    def error(self, instance: Instance, result: Any) -> float:
        return redescription_error(result, instance.evaluation, self.error_measure)

    def failed(self, result: Any) -> bool:
        return not list(result.kept())  # nothing kept: scored 1 by either measure

    def neighbouring_inputs(self, seed: int) -> tuple[Any, Any]:
        import numpy as np

        from jostle.learners.redescription.planted import planted_two_views

        views = planted_two_views(NEIGHBOUR_ENTITIES, seed, planted=2, noise_attributes=2).views
        position = int(np.random.default_rng(seed).integers(0, NEIGHBOUR_ENTITIES))
        # one entity removed from both views
        return RedescriptionData(views, 1, "neighbours"), RedescriptionData(remove_entity(views, position), 1,
                                                                            "neighbours")

    def describe(self, result: Any) -> str:
        return str(result)


FAMILY = RedescriptionFamily()
