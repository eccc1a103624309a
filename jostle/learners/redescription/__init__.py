"""Differentially private tree-based redescription mining (Mihelčić and Miettinen 2023), issue 25.

A learner family over two private views of the same entities (bound under `entity(key)`: a
neighbour removes one entity from both views) that finds pairs of queries describing nearly the
same entities, with noisy support, Jaccard index and p-value. Modules, one job each:

  views       the two views coded against public domains; public split candidates and bins
  queries     queries, redescriptions, the released set, and exact statistics on public data
  trees       fixed-depth split trees, their leaves and the normalised score in [0, 1]
  expmech     createDTExpMech: the exponential mechanism on Gini, level by level
  sampler     the exact samplers that replace the paper's MCMC chains (rejection sampling)
  extract     extractReds: noisy leaf-pair counts, simple and extended redescriptions, pruning
  algorithms  AltExpM, AltMCMC and MCMCTreePair with their budget splits
  planted     a planted two-view generator with known true redescriptions (public data)
"""
