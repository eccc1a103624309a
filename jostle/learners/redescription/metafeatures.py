"""Metafeatures of the redescription family: public facts of the call and the schemas, and one
noisy entity count.

The paper's own conclusion is data-dependent: MCMCTreePair on small data and small budgets, the
alternations on larger data with larger budgets. What decides is signal against noise: how many
entities stand behind a leaf against the noise of a count at each step's budget. The budget, the
planned runs and the schemas are public; the number of entities is not. Privacy unit:
`entity(key)`, one entity removed from both views.

Public (cost=False; they read only the public schemas (`RedescriptionData.public_facts`), the
planned runs and the public budget, so they are identical on neighbouring inputs):
    epsilon              the per-run budget of the Option (the learner kit's `EPSILON`)
    log_runs             log10 of the runs the analyst plans at this budget
    attributes_left,     the number of attributes of each view
      attributes_right
    numeric_left,        the share of numeric attributes of each view
      numeric_right
    log_splits_left,     log10 of the public split candidates of each view (`ViewSchema.splits`:
      log_splits_right   a tree's level selects among them)

Noisy (cost=True), one release "redescription entity count": the number of entities with
two-sided geometric noise at the unit's epsilon. Sensitivity: removing one entity (from both
views) changes the count by exactly 1 (L1 sensitivity 1; the release is eps-DP, Ghosh et al.
2009). Post-processing of it, floored at 1:
    n_entities           the noisy entity count (also read by the Options: `options.miner_settings`)

Derived (post-processing of `n_entities`, `requires`):
    log_leaf_signal      log10(n_entities * epsilon / 16): entities per leaf of a depth-4 tree in
                         units of the count noise 1/epsilon (the family also lets the meta-model
                         read log10(n_entities * epsilon), `meta_input_products`)
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from jostle.choicemaker.family import MetafeatureContext
from jostle.learnerkit.metafeatures import EPSILON, FunctionMetafeature
from jostle.learners.redescription.task import RedescriptionData

__all__ = ["COUNT_RELEASE", "DEFAULT_METAFEATURES", "REDESCRIPTION_METAFEATURES"]

COUNT_RELEASE = "redescription entity count"
LEAVES = 16  # 2^4: the leaves of a depth-4 tree (`options.DEPTH`)


# ------------------------------------------------------------------ public
def _log_runs(data: RedescriptionData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    return math.log10(int(data.runs))  # public: the analyst's plan


def _view_fact(fact: str, view: int, log: bool, data: RedescriptionData, eps: float, noise: Any,
               context: MetafeatureContext) -> float:
    """One public fact of one view's schema (bound with `functools.partial`; log10 of it, at
    least 1, when `log`)."""
    value = float(data.public_facts()[f"{fact}_{view}"])  # public: the schema
    return math.log10(max(value, 1.0)) if log else value


def _fact(fact: str, view: int, log: bool = False) -> functools.partial:
    return functools.partial(_view_fact, fact, view, log)


# ------------------------------------------------------------------ the noisy release
def _n_entities(data: RedescriptionData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    # The entity count: removing one entity (from both views) moves it by 1 (L1 sensitivity 1);
    # two-sided geometric noise at eps is eps-DP (`safe_noise.release_counts`, recorded for the
    # replay check). Flooring at 1 is post-processing.
    from jostle.privacy.safe_noise import release_counts

    count = np.array([int(data.views.codes[0].shape[0])], dtype=np.int64)
    return max(float(release_counts(noise, count, 1, eps)[0]), 1.0)


# ------------------------------------------------------------------ derived
def _log_leaf_signal(data: RedescriptionData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    # post-processing of n_entities and the public budget
    return math.log10(max(context.released["n_entities"], 1.0) * context.epsilon / LEAVES)


COUNT_SENSITIVITY = "1 (the entity count: one entity removed from both views moves it by 1; entity unit)"

REDESCRIPTION_METAFEATURES: dict[str, FunctionMetafeature] = {m.name: m for m in [
    EPSILON,
    FunctionMetafeature("log_runs", False, _log_runs, "public (the planned runs)"),
    FunctionMetafeature("attributes_left", False, _fact("attributes", 0), "public (the left schema)"),
    FunctionMetafeature("attributes_right", False, _fact("attributes", 1), "public (the right schema)"),
    FunctionMetafeature("numeric_left", False, _fact("numeric_share", 0), "public (the left schema)"),
    FunctionMetafeature("numeric_right", False, _fact("numeric_share", 1), "public (the right schema)"),
    FunctionMetafeature("log_splits_left", False, _fact("splits", 0, True),
                        "public (the left schema's split candidates)"),
    FunctionMetafeature("log_splits_right", False, _fact("splits", 1, True),
                        "public (the right schema's split candidates)"),
    FunctionMetafeature("n_entities", True, _n_entities, COUNT_SENSITIVITY, release=COUNT_RELEASE),
    FunctionMetafeature("log_leaf_signal", False, _log_leaf_signal, "post-processing of n_entities",
                        ("n_entities",)),
]}

DEFAULT_METAFEATURES: tuple[str, ...] = tuple(REDESCRIPTION_METAFEATURES)
