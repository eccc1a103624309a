"""The ChoiceMaker engine, written once for every learner family.

Given several private algorithms (Options) for the same task, a ChoiceMaker learns on public
data which one does best on which kind of input, then at run time measures a few metafeatures
privately, predicts each Option's error and runs the best with the rest of the budget
(cf. Pythia, Kotsogiannis et al., SIGMOD 2017). A learner family plugs in through one interface.
Modules:
  family       the interface a family implements (`Family`, `Instance`, `MetafeatureContext`)
  budgets      the typed budget of a call: parts, planned costs, conversions into its measure
  families     discovery of the families under `jostle.learners`
  measurement  the budget plan and the one metafeature measurement loop
  experience   the experience table (parallel, cached)
  model        meta-model families and leave-one-dataset-out selection
  engine       train() and TrainedChoiceMaker
  dispatch     the one private dispatch, its budget guard, trace and explain
  pretrained   the ChoiceMakers shipped with the package
  api          the Python front door: `train`, `dispatch`, `experience_table` (exported here)
  conformance  the checks every family must pass, in one call: `check_family(FAMILY)`

`jostle.choicemaker.train` and `jostle.choicemaker.dispatch` are the front door's functions
(the package attribute `dispatch` is the function; the engine's module is imported by its
full name, `from jostle.choicemaker.dispatch import ...`).
"""

from jostle.choicemaker.api import dispatch, experience_table, family_for, train

__all__ = ["dispatch", "experience_table", "family_for", "train"]
