"""Differentially private inductive logic programming (Zeng, Lantz, Naughton and Page), issue 24.

What the package will be: a learner family over keyed relational data (examples of a target
predicate and fact tables keyed by the example, under the `entity(example id)` unit) that learns
theories of Prolog clauses: a non-private Aleph-style learner, the paper's naive and
relevance-aware DP reductions, the full DP ILP covering loop, a trivial-theory Option and a
ChoiceMaker among them, with the trains benchmark of the paper.

What exists now (the first foundation; there is no `family.py` yet, so the family is not
discovered):
  relations   a relational example database as columnar numpy arrays: public domains, entity
              types, fact tables keyed by example id, predicates read off them
  theory      theories parsed from Prolog text, printed back, and their vectorised coverage
  trains      Michalski's east/west trains after Muggleton's generator, with the issue's
              probabilities, labelled by a target theory
  modes       Aleph-style mode declarations and the bounds (clause length, bottom clause size k)
  search      saturation (the bottom clause of a seed), the legal clauses of its lattice, and
              their vectorised coverage counts P and N (the query the DP reductions will noise)
  aleph       the non-private learner: breadth-first reduction by P - N and the covering loop
  fake        the private selection: a fake seed example from the modes and public domains only
  private     the DP reductions (naive, relevance-aware), the DP covering loop and the trivial
              theory, each with its sensitivity argument
  bounds      Theorem 3 stated correctly and both reductions' noise, before any data is read
"""
