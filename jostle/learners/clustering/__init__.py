"""Differentially private k-means, issue 26: SuLQ k-means and a zCDP DPLloyd, task "clustering".

A learner family over one private numeric table whose rows are clipped into a PUBLIC box and
scaled to [0, 1]^d. Both learners run Lloyd's iterations from noisy cluster sizes and noisy
coordinate sums released with `jostle.privacy.sulq`; they differ only in how the queries are
counted (SuLQ: every coordinate; DPLloyd: the d + 1 sums one row can touch). Modules, one job each:

  data         the public box, the coding of rows into [0, 1]^d (never failing per row), the input
  kmeans       the query plan, the fit, the released model, the within-cluster error
  mixtures     public Gaussian-mixture generator (corpus tasks, tests)
  corpus/task  the public training tasks, grid and instances of the "clustering" task
  options      the Options SuLQKMeans, DPLloyd and DPLloyd variants by iterations
  metafeatures public d, k, rho and one noisy row count
  family       the family as the ChoiceMaker engine sees it
  language     SuLQKMeans(...), DPLloyd(...), models as values, the ChoiceMaker call
  estimators   scikit-learn style estimators
"""
