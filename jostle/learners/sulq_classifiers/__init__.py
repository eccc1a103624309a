"""SuLQ learners for Jostle (issue 26): SuLQ ID3 and the SuLQ perceptron, as a learner family.

Both run every query through the SuLQ primitive (`jostle.privacy.sulq`): a sum over rows of a
per-row value in [0, 1] plus exact discrete Gaussian noise of variance R, charged in rho. Each
fixes its whole query plan, and so T, in advance from public parameters. They run only under a
zCDP budget (rho), or with a stated variance R.

Modules, one job each:
  queries      the query plan: batches, the two calibrations (rho or variance), charged releases
  id3          SuLQ ID3 (`fit_id3`, `query_count`, `SuLQTree`)
  perceptron   the SuLQ perceptron (`fit_perceptron`, `query_count`, `SuLQLinear`)
  options      the Options "SuLQID3" and "SuLQPerceptron" (`SULQ_OPTIONS`)
  family       the family as the ChoiceMaker engine sees it (`FAMILY`; measures zCDP only)
  metafeatures the kit's standard classification metafeatures
  task, corpus the training grid (rho budgets) and the selection of the kit's corpus
  language     the learners in the language (`SuLQID3(t, "class", rho=...)`, ...)
  estimators   scikit-learn estimators: SuLQID3Classifier, SuLQPerceptronClassifier
"""
