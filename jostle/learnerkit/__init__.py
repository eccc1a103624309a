"""The learner kit: what every classifier family builds on, written once below the families.

A layer between `jostle.learners` (the families import it) and `jostle.choicemaker` (it imports
the engine's interface, `jostle.privacy`, `jostle.data` and `jostle.diagnostics`, never a
family). Modules, one job each:

  tables        coded tables against public domains (`ClassificationData`), `train_test_split`,
                `encode_public_frame` (public data only)
  corpus        the public classification corpus (`classification_corpus()`), from which each
                family's default corpus is a selection
  grids         split grids and training instances (`SplitGrid`, `instances`)
  metafeatures  metafeatures defined by a function, fingerprinted by the source of everything
                they call (`FunctionMetafeature`, `code_digest`), and the standard
                classification metafeatures (`CLASSIFICATION_METAFEATURES`)
  family        the classification family base (`ClassificationFamily`: error measures as a
                hook, `run_option` under the one guard of `jostle.privacy.subledger`)
  options       what the families' Options share (`PureEpsilonOption`, `package_digest`)
  language      the language code of classifier families: task data, the public-table
                prediction rules, `training_arguments`, the `choice_call` closures, and the
                shared built-ins `predict` and `accuracy` (its one exception to the layers: it
                imports `jostle.language.values`, `calls` and `sensitivity`, as a family's
                language module may)
  keyed         what the keyed multi-table families' language modules share (ILP, redescription):
                `database_name`, the `FamilyCall` base of a learner call that is also each built-in
                Option's value, the ChoiceMaker call's `engine_closures`
  encoding      public domains and integer encoding (declared, never read off private data)
  estimators    the scikit-learn estimator base of the classifier families, and every estimator's
                `check_fit_privacy` and `charge_fit` (the shared budget, charged before any draw)
  estimator_checks  scikit-learn's check_estimator with the expected failures and their privacy reasons
  exports       the lazy exports of a family package (`lazy_exports`)
"""
