"""The ChoiceMaker engine, written once for every learner family.

Given several private algorithms (Options) for the same task, a ChoiceMaker learns on public
data which one does best on which kind of input, then at run time measures a few metafeatures
privately, predicts each Option's error and runs the best with the rest of the budget
(cf. Pythia, Kotsogiannis et al., SIGMOD 2017). A learner family plugs in through one interface.
Modules:
  family       the interface a family implements (`Family`, `Instance`, `MetafeatureContext`)
  budgets      the typed budget of a call: parts, planned costs, conversions into its measure
  families     discovery of the families under `jostle.learners`, and the families of a task
  combined     a ChoiceMaker over Options of several families of one task (`CombinedFamily`)
  measurement  the budget plan and the one metafeature measurement loop
  experience   the experience table (parallel, cached)
  model        meta-models (their kinds, named apart from learner families) and leave-one-dataset-out selection
  engine       train() and TrainedChoiceMaker
  private_dispatch  the one private dispatch, its budget guard, trace and explain
  pretrained   the ChoiceMakers shipped with the package
  api          the Python front door: `train`, `dispatch`, `experience_table` (exported here)
  conformance  the checks every family must pass, in one call: `check_family(FAMILY)`

`jostle.choicemaker.train`, `.dispatch`, `.experience_table` and `.family_for` are the front
door's functions, imported on first use (`api` pulls in scikit-learn, which a program that
trains no ChoiceMaker must not pay for at start-up). The engine's own dispatch is the module
`private_dispatch`, named apart from the front door's `dispatch`.
"""

from __future__ import annotations

from typing import Any

_FRONT_DOOR = ("dispatch", "experience_table", "family_for", "train")


def __getattr__(name: str) -> Any:
    """The front door's functions, from `jostle.choicemaker.api` on first use."""
    if name in _FRONT_DOOR:
        from jostle.choicemaker import api

        value = getattr(api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["dispatch", "experience_table", "family_for", "train"]
