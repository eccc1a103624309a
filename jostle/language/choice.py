"""Options, metafeatures and ChoiceMakers as Jostle values, for every learner family.

This is the language side of the ChoiceMaker (the engine is `jostle.choicemaker`; each family's
own language values are in `jostle.learners.<family>.language`), in three modules by job:

  * `choice_values`: the parts a ChoiceMaker lists, options written in Jostle
    (`option NAME(params): answer: ... [predict(F): ...]`, `JostleOption`), metafeatures
    written in Jostle (`JostleMetafeature`) and the built-in metafeature names
    (`BuiltinMetafeature`), with the cap a Jostle-defined part runs under (`session_cap`);
  * `choice_runtime`: the `ChoiceMaker` value and its call, through the engine's one dispatch
    with a `LanguageRuntime`; which family serves its options (one family, or the
    `CombinedFamily` of several families of one task, `serving_family`); `explain`;
  * `choice_validation`: `make_choicemaker`, which checks every part of a `choicemaker`
    expression, located, before the value exists.

The language keeps no knowledge of any family: the error measures are the families' own
(`Family.error_measures`), the metafeatures their shared set, and what a Jostle-defined part
reads on a public training input their language module's (`training_arguments`,
`metafeature_training_argument`).

Training (the training boundary, `jostle.language.training_boundary`): a ChoiceMaker learns on
the public corpus by running every option and metafeature there, uncharged, so Jostle-defined
ones run only as training copies whose environment holds public values alone
(`public_environment`); code that reads a private value is refused, with its location, when the
ChoiceMaker is built or trained.

This module re-exports the names callers import from it.
"""

from __future__ import annotations

from jostle.diagnostics.errors import PrivacyError
from jostle.language.choice_runtime import (ChoiceMaker, LanguageRuntime, explain, option_families, options_task,
                                            serving_family)
from jostle.language.choice_validation import DEFAULT_SHARE, make_choicemaker, source_text
from jostle.language.choice_values import (BuiltinMetafeature, JostleMetafeature, JostleOption, family_language,
                                           session_cap)

__all__ = [
    "JostleOption", "BuiltinMetafeature", "JostleMetafeature", "ChoiceMaker", "LanguageRuntime", "explain",
    "make_choicemaker", "family_language", "PrivacyError", "session_cap", "source_text", "options_task",
    "option_families", "serving_family", "DEFAULT_SHARE",
]
