"""A ChoiceMaker across families: one task, Options of several families, one public corpus.

Several families may serve one task (`families.for_task`): they read the same public inputs
(e.g. coded tables with public domains), so one ChoiceMaker may choose among their Options.
`CombinedFamily(members, error_measure)` is the family such a ChoiceMaker trains and dispatches
with; the engine (`experience`, `engine`, `dispatch`) sees one `Family` and needs nothing else:

  * the public inputs (corpus, grid, pieces, instances), the metafeatures' context and input,
    the segments and the simulation noise are the *lead* member's, the first in discovery
    order (so the order the Options are listed in changes nothing);
  * each Option runs through its own family's `run_option` and states its cost through its
    own family's `planned_cost`; Options written in Jostle run in the lead's language values;
  * the metafeature share at a budget is the largest any member raises it to
    (`Family.metafeature_share_at`);
  * each Option's result is scored by its own family's error measure of the one name the
    ChoiceMaker uses (`option_error`): a measure every member offers, and a name means one
    thing (`error_measures()` is what they all offer);
  * metafeatures come from the members' shared set: a name two members define must be the
    same metafeature (equal fingerprints), or the combination is refused;
  * the experience cache keys each Option on the family that runs it (`option_fingerprint`)
    and the combination on every member's code (`fingerprint`);
  * it supports the units and measures every member supports (a call under another is refused
    before any charge, as for one family); a training instance whose budget is in a measure not
    every member supports (the lead's pure epsilons, when a member runs in zCDP only) is given
    the same budget in zCDP, converted by the accountant's rule (a pure epsilon e is the rho
    e^2 / 2, `budgets.in_measure`), so the `epsilon` metafeature still reads e.

Privacy: nothing new. The dispatch's plan, guard and charges are the engine's; an Option run
with its part is private by its own family's argument, and the choice among Options of several
families is post-processing of the released metafeatures, as it is within one family.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any, Hashable, Iterable, Mapping, Sequence

from jostle.choicemaker.budgets import PURE, in_measure, measure_of
from jostle.choicemaker.families import family_by_module
from jostle.choicemaker.family import Family, Instance, MetafeatureContext, fingerprint, source_digest
from jostle.choicemaker.measurement import budget_unit
from jostle.privacy.measures import AnyBudget, RhoZCDPBudget

# What every member must agree on: the layout of the experience and how measuring pays.
SHARED_LAYOUT = ("task", "config_columns", "segment_column", "modes", "payoff_rule", "regret_measure")
# Where the language's Options written in Jostle are defined (named, not imported: the language
# is a layer above); they run in the lead's language values.
JOSTLE_WRITTEN = "jostle.language."


class CombinedFamily(Family):
    """Options of several families of one task, as one family (see the module docstring).

    Args:
        members: The families (at least two, one task); ordered by name, the first is the lead.
        error_measure: The error measure (default: the lead's, when every member offers it,
            else the first the lead offers that every member offers).

    Raises:
        ValueError: The members disagree on the task or the experience layout, share no error
            measure, or define one metafeature or Option name twice with different meanings.
        KeyError: `error_measure` is not one every member offers.
    """

    def __init__(self, members: Sequence[Family], error_measure: str | None = None) -> None:
        members = sorted(dict.fromkeys(members), key=lambda member: member.name)
        if len(members) < 2:
            raise ValueError("a combined family needs at least two families")
        lead = members[0]
        for attribute in SHARED_LAYOUT:
            values = {repr(getattr(member, attribute)) for member in members}
            if len(values) > 1:
                raise ValueError(f"the {', '.join(m.name for m in members)} families cannot share a ChoiceMaker: "
                                 f"their {attribute} differ ({', '.join(sorted(values))})")
        common = [name for name in lead.error_measures() if all(name in m.error_measures() for m in members)]
        if not common:
            raise ValueError(f"the {', '.join(m.name for m in members)} families share no error measure "
                             f"({'; '.join(f'{m.name}: ' + ', '.join(m.error_measures()) for m in members)})")
        if error_measure is None:
            error_measure = lead.error_measure if lead.error_measure in common else common[0]
        if error_measure not in common:
            raise KeyError(f"the error measure {error_measure!r} is not one every family of this ChoiceMaker "
                           f"offers; they all offer {', '.join(common)}")
        self.members = tuple(member.with_error(error_measure) for member in members)
        self.lead = self.members[0]
        self.name = "+".join(member.name for member in members)
        self.task = lead.task
        self.error_measure = error_measure
        self.error_name = lead.error_measures()[error_measure]
        self.common_measures = {name: lead.error_measures()[name] for name in common}
        self.config_columns = lead.config_columns
        self.segment_column = lead.segment_column
        self.modes = lead.modes
        self.payoff_rule = lead.payoff_rule
        self.regret_measure = lead.regret_measure
        self.errors_scale_as_inverse_epsilon = all(m.errors_scale_as_inverse_epsilon for m in members)
        self.meta_input_products = tuple(dict.fromkeys(p for m in members for p in m.meta_input_products))
        self.default_metafeatures = lead.default_metafeatures
        self.language_module = lead.language_module
        self.seconds_per_piece = sum(member.seconds_per_piece for member in members)
        self.units = tuple(u for u in lead.units if all(u in m.units for m in members))
        self.measures = tuple(u for u in lead.measures if all(u in m.measures for m in members))
        self._owners: dict[str, Family] = {}
        for member in self.members:
            for option_name, option in member.options().items():
                if option_name in self._owners:
                    raise ValueError(f"the {self._owners[option_name].name} and {member.name} families both "
                                     f"have an Option called {option_name!r}")
                self._owners[option_name] = member
        self._metafeatures: dict[str, Any] = {}
        for member in self.members:
            for feature_name, feature in member.metafeatures().items():
                known = self._metafeatures.get(feature_name)
                if known is not None and fingerprint(known) != fingerprint(feature):
                    raise ValueError(f"the metafeature {feature_name!r} means different things in the "
                                     f"{', '.join(m.name for m in self.members)} families (a name must mean one "
                                     "thing: define it once, in the shared set)")
                self._metafeatures.setdefault(feature_name, feature)
        self._check_budget_units()

    def _check_budget_units(self) -> None:
        """Refuse a noisy budget unit (a shared `release`, `measurement.budget_unit`) whose
        metafeatures no one member defines all of.

        A unit is charged once per dispatch and each of its metafeatures is calibrated to the
        whole unit; it is drawn once only because one family's code shares the release among
        its metafeatures (e.g. memoised in the context). Two members' metafeatures under one
        release name each draw their own release: charged once, drawn twice. Refusing is
        simpler and sound, where keying units by owning family would change the plan's units
        and the charges of every dispatch: a metafeature both members define is the same one
        (the names are checked above to mean one thing, equal fingerprints), so a unit whose
        metafeatures one member defines entirely is that member's own release, as in a
        ChoiceMaker of that family alone.

        Raises:
            ValueError: A unit's metafeatures come from several members and none defines all.
        """
        units: dict[str, set[str]] = {}
        for feature_name, feature in self._metafeatures.items():
            if feature.cost:
                units.setdefault(budget_unit(feature), set()).add(feature_name)
        for unit, names in units.items():
            if not any(names <= set(member.metafeatures()) for member in self.members):
                holders = {m.name: sorted(names & set(m.metafeatures())) for m in self.members}
                raise ValueError(
                    f"the noisy metafeatures {', '.join(sorted(names))} of the "
                    f"{', '.join(m.name for m in self.members)} families share the budget unit {unit!r} "
                    f"({'; '.join(f'{k}: {v}' for k, v in holders.items() if v)}), charged once per dispatch, "
                    "but no one family defines them all, so each family would draw its own release: give "
                    "each family's release a name of its own, or define the metafeatures once, in the shared set")

    def __reduce__(self) -> tuple:
        return CombinedFamily, (self.members, self.error_measure)

    # ------------------------------------------------------------------ which family an Option is of
    def owner(self, option: Any) -> Family:
        """The member that runs, costs and traces `option`: the one whose built-in Option it is
        (matched by name and fingerprint, so it holds in worker processes too); else the member
        whose package defines its class (`families.family_by_module`: an Option made from a
        member's Option class outside its registry, by `dataclasses.replace` or as a subclass);
        the lead for an Option written in Jostle (it runs in the lead's language values).

        Raises:
            ValueError: The Option is of no member (before anything is charged: the dispatch
                asks every available Option's planned cost first).
        """
        member = self._owners.get(getattr(option, "name", None))
        if member is not None and fingerprint(member.options()[option.name]) == fingerprint(option):
            return member
        member = family_by_module(option, self.members)
        if member is not None:
            return member
        if type(option).__module__.startswith(JOSTLE_WRITTEN):
            return self.lead
        raise ValueError(f"the Option {getattr(option, 'name', option)!r} ({type(option).__module__}."
                         f"{type(option).__qualname__}) is of none of the {', '.join(m.name for m in self.members)} "
                         "families: an Option of a ChoiceMaker across families must be a member's (its registry's, "
                         "or an object of its Option class) or written in Jostle")

    def member_families(self) -> tuple[Family, ...]:
        return self.members

    def option_family(self, option: Any) -> str:
        """The name of the family that runs `option` (for traces and explanations)."""
        return self.owner(option).name

    # ------------------------------------------------------------------ the Family interface
    def error_measures(self) -> Mapping[str, str]:
        return dict(self.common_measures)

    def with_error(self, measure: str | None) -> Family:
        if measure is None or measure == self.error_measure:
            return self
        return CombinedFamily(self.members, measure)

    def option_error(self, option: Any, instance: Instance, result: Any) -> float:
        return self.owner(option).error(instance, result)

    def error(self, instance: Instance, result: Any) -> float:
        return self.lead.error(instance, result)

    def options(self) -> Mapping[str, Any]:
        return {name: option for member in self.members for name, option in member.options().items()}

    def metafeatures(self) -> Mapping[str, Any]:
        return dict(self._metafeatures)

    def planned_cost(self, option: Any, budget: AnyBudget) -> AnyBudget:
        return self.owner(option).planned_cost(option, budget)

    def metafeature_cost(self, metafeature: Any, budget: AnyBudget) -> AnyBudget:
        return self.lead.metafeature_cost(metafeature, budget)

    def metafeature_share_at(self, share: Fraction, budget: AnyBudget) -> Fraction:
        """The largest share any member raises `share` to at `budget`: each member's rule says
        what its own metafeatures need there, and the metafeatures come from the members' shared
        set. Each rule is a function of the public share and budget alone, in [share, 1), so
        their largest is too (the plan calls it before any charge)."""
        return max(member.metafeature_share_at(share, budget) for member in self.members)

    def segments(self, option: Any) -> tuple[Hashable, ...]:
        return self.owner(option).segments(option)

    def segment_of(self, data: Any) -> Hashable:
        return self.lead.segment_of(data)

    def segment_label(self, segment: Hashable) -> str:
        return self.lead.segment_label(segment)

    def default_corpus(self, options: Sequence[Any]) -> Sequence[Any]:
        return self.lead.default_corpus(options)

    def default_grid(self) -> Any:
        return self.lead.default_grid()

    def pieces(self, task: Any, grid: Any, options: Sequence[Any]) -> list[tuple[str, Any]]:
        return self.lead.pieces(task, grid, options)

    def piece_options(self, task: Any, piece: Any, options: Sequence[Any]) -> list[Any]:
        return [o for o in options if o in self.owner(o).piece_options(task, piece, [o])]

    def piece_cost(self, task: Any, piece: Any) -> float:
        return self.lead.piece_cost(task, piece)

    def instances(self, task: Any, piece: Any, grid: Any) -> Iterable[Instance]:
        for instance in self.lead.instances(task, piece, grid):
            yield self.in_shared_measure(instance)

    def in_shared_measure(self, instance: Instance) -> Instance:
        """`instance` with its budget in a measure every member supports: as it is, or a pure
        epsilon e as the rho e^2 / 2 when the members share zCDP but not pure budgets (the
        accountant's conversion: an e-DP release is counted e^2 / 2 in rho). Public data only."""
        measure = measure_of(instance.budget)
        if measure in self.measures or measure != PURE or "zcdp" not in self.measures:
            return instance
        return dataclasses.replace(instance, budget=in_measure(instance.budget, RhoZCDPBudget(Fraction(0))))

    def context(self, data: Any, option_budget: AnyBudget, total_budget: AnyBudget) -> MetafeatureContext:
        return self.lead.context(data, option_budget, total_budget)

    def metafeature_input(self, data: Any) -> Any:
        return self.lead.metafeature_input(data)

    def run_option(self, option: Any, data: Any, budget: AnyBudget, noise: Any,
                   released: Mapping[str, float]) -> Any:
        return self.owner(option).run_option(option, data, budget, noise, released)

    def failed(self, result: Any) -> bool:
        return self.lead.failed(result)

    def simulation_noise(self, seed: int) -> Any:
        return self.lead.simulation_noise(seed)

    def neighbouring_inputs(self, seed: int) -> tuple[Any, Any]:
        return self.lead.neighbouring_inputs(seed)

    def describe(self, result: Any) -> str:
        for member in self.members:  # the result is one member's release; the others cannot print it
            try:
                return member.describe(result)
            except Exception:  # noqa: BLE001 - a public result another member's printer does not know
                continue
        return repr(result)

    def option_fingerprint(self, option: Any) -> str:
        owner = self.owner(option)
        return f"{owner.name}:{owner.option_fingerprint(option)}"

    @property
    def fingerprint(self) -> str:
        return "+".join(member.fingerprint for member in self.members) + f"|{source_digest(CombinedFamily)}"

    @property
    def module_name(self) -> str:
        return self.lead.module_name
