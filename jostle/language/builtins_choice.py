"""Built-ins of the ChoiceMaker: `trace`, `explain`, the metafeature names, and every family's own.

Registered into the same registry as every other built-in (`jostle.language.builtins.REGISTRY`):

  * each learner family's built-ins, from its language module's `register(builtin, registry)`
    (the histogram algorithms and workloads, the tree learners and `predict`, corpora, ...);
    families are discovered (`jostle.choicemaker.families`), so a new family needs no line here;
  * one `BuiltinMetafeature` per metafeature name, holding each family's version of it
    (`size` is a histogram's noisy total and a table's noisy row count);
  * `trace(H)` (the list of dispatch records) and `explain(H)` (the same, as text);
  * `predicted_error(H)`: the chosen Option's predicted error and interval of H's last call (a
    record labelled an estimate; `accuracy(x, 0.95)` on the call's result gives the same once
    released values carry their laws, `jostle.language.noisy_values`);
  * (imported from here, registered in the core) the private evaluation of any classifier
    family's model and `split` (jostle.language.evaluation).
"""

from __future__ import annotations

from typing import Any

from jostle.choicemaker import families
from jostle.diagnostics.errors import JostleRuntimeError
from jostle.language import evaluation  # noqa: F401 (registers the evaluation built-ins and split in CORE)
from jostle.language.choice import BuiltinMetafeature, ChoiceMaker, explain, family_language
from jostle.language.choice_runtime import estimate_record
from jostle.language.values import type_name


def register(builtin: Any, registry: dict[str, Any]) -> None:
    """Add the ChoiceMaker's and every family's built-ins to `registry` (called once)."""
    versions: dict[str, dict[str, Any]] = {}
    for family in families.discover().values():
        family_language(family).register(builtin, registry)
        for name, metafeature in family.metafeatures().items():
            versions.setdefault(name, {})[family.name] = metafeature
    for name, by_family in versions.items():
        registry[name] = BuiltinMetafeature(name, by_family)

    @builtin("trace", 1, privacy="choice", doc="trace(H): a record per dispatch of ChoiceMaker H (public)")
    def _trace(interp, span, maker):
        if not isinstance(maker, ChoiceMaker):
            raise JostleRuntimeError(f"trace() needs a ChoiceMaker, got a {type_name(maker)}", span)
        return tuple(maker.traces)

    @builtin("predicted_error", 1, privacy="choice",
             doc="predicted_error(H): the predicted error and 95% interval of H's last call (an estimate)")
    def _predicted_error(interp, span, maker):
        # Post-processing of the call's released metafeatures and of public training data (the
        # meta-model's prediction and the held-out interval): public, costs nothing.
        if not isinstance(maker, ChoiceMaker):
            raise JostleRuntimeError(f"predicted_error() needs a ChoiceMaker, got a {type_name(maker)}", span)
        if not maker.estimates:
            raise JostleRuntimeError(f"{maker.name} has not been called yet", span,
                                     f"call it first, e.g. estimate = {maker.name}(...)")
        if maker.estimates[-1] is None:
            raise JostleRuntimeError(f"{maker.name}'s last call predicted no error for the option it ran", span,
                                     "an option with neither training nor a predict(F) prior has none")
        return estimate_record(maker.estimates[-1])

    @builtin("explain", 1, privacy="choice", doc="explain(H): the dispatches of ChoiceMaker H as text")
    def _explain(interp, span, maker):
        if not isinstance(maker, ChoiceMaker):
            raise JostleRuntimeError(f"explain() needs a ChoiceMaker, got a {type_name(maker)}", span)
        return explain(maker)


__all__ = ["register"]
