"""Queries over one view, redescriptions, and the set a mining run releases.

A query is a disjunction of terms; a term is a conjunction of split tests (the path from a
tree's root to a leaf), possibly negated: "(sex = F AND age < 40) OR NOT (job = x AND ...)".
A redescription pairs a query on view 0 with a query on view 1, with the statistics released
for it: the noisy support |supp(L) & supp(R)|, the noisy supports of both queries, the noisy
number of entities, the noisy Jaccard index and the noisy p-value. All of them are
post-processing of the noisy counts `extract.extract_redescriptions` releases.

`true_statistics` and `RedescriptionSet.evaluate` compute the exact statistics of the queries on
views given to them: on public data, for benchmarks, or on a public hold-out. They are never
called on private data by the family.

The p-value is python-clired's: the probability that two independent queries with the
supports' marginal probabilities p_L = |L| / N and p_R = |R| / N share at least |L & R|
entities, 1 - BinomCDF(|L & R| - 1; N, p_L p_R).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from jostle.learners.redescription.views import TwoViews, ViewSchema


@dataclass(frozen=True)
class Literal:
    """One split test: categorical code == value, or numeric code <= value; negated when not positive."""

    attribute: int
    numeric: bool
    value: int
    positive: bool = True

    def mask(self, codes: np.ndarray) -> np.ndarray:
        """Which rows of a view's code matrix satisfy the test."""
        column = codes[:, self.attribute]
        hit = column <= self.value if self.numeric else column == self.value
        return hit if self.positive else ~hit

    def text(self, schema: ViewSchema) -> str:
        """The test as text, in the schema's names and labels."""
        return schema.literal_text(self.attribute, self.numeric, self.value, self.positive)


@dataclass(frozen=True)
class Term:
    """A conjunction of literals (a leaf's path), or its negation."""

    literals: tuple[Literal, ...]
    negated: bool = False

    def mask(self, codes: np.ndarray) -> np.ndarray:
        """Which rows satisfy the term."""
        hit = np.ones(codes.shape[0], dtype=bool)
        for literal in self.literals:
            hit &= literal.mask(codes)
        return ~hit if self.negated else hit

    def text(self, schema: ViewSchema) -> str:
        """The term as text."""
        body = " AND ".join(literal.text(schema) for literal in self.literals) or "TRUE"
        if self.negated:
            return f"NOT ({body})"
        return f"({body})" if len(self.literals) > 1 else body


@dataclass(frozen=True)
class Query:
    """A disjunction of terms over one view (0 or 1)."""

    view: int
    terms: tuple[Term, ...]

    def mask(self, codes: np.ndarray) -> np.ndarray:
        """Which rows of the view satisfy the query."""
        hit = np.zeros(codes.shape[0], dtype=bool)
        for term in self.terms:
            hit |= term.mask(codes)
        return hit

    def text(self, schema: ViewSchema) -> str:
        """The query as text."""
        return " OR ".join(term.text(schema) for term in self.terms) or "FALSE"


@dataclass(frozen=True)
class Redescription:
    """A pair of queries with its released (noisy) statistics.

    Attributes:
        left: The query on view 0.
        right: The query on view 1.
        noisy_support: |supp(left) & supp(right)|, noisy.
        noisy_left: |supp(left)|, noisy.
        noisy_right: |supp(right)|, noisy.
        noisy_size: The number of entities, noisy.
        noisy_jaccard: Support over the union, from the noisy counts.
        noisy_pvalue: `binomial_pvalue` of the noisy counts.
        support_noise_sd: The public standard deviation of the noise in `noisy_support`.
        pruned: Below the public noisy-support threshold (`extract.pruning_threshold`).
        origin: Which try / alternation produced it.
    """

    left: Query
    right: Query
    noisy_support: float
    noisy_left: float
    noisy_right: float
    noisy_size: float
    noisy_jaccard: float
    noisy_pvalue: float
    support_noise_sd: float
    pruned: bool = False
    origin: str = ""

    def text(self, schemas: Sequence[ViewSchema]) -> str:
        """Both queries and the noisy statistics, on one line."""
        return (f"{self.left.text(schemas[0])}  <=>  {self.right.text(schemas[1])}   "
                f"[support ~{self.noisy_support:.0f}, J ~{self.noisy_jaccard:.3f}, "
                f"p ~{self.noisy_pvalue:.2g}{', pruned' if self.pruned else ''}]")


def binomial_pvalue(intersection: float, left: float, right: float, size: float) -> float:
    """python-clired's p-value: 1 - BinomCDF(intersection - 1; size, (left / size)(right / size)).

    Noisy inputs are rounded and clipped to a valid binomial (0 <= counts <= size, size >= 1).
    """
    from scipy.special import bdtrc  # the binomial upper tail; lighter to import than scipy.stats

    n = max(int(round(size)), 1)
    k = min(max(int(round(intersection)), 0), n)
    if k == 0:
        return 1.0
    p_left = min(max(left / n, 0.0), 1.0)
    p_right = min(max(right / n, 0.0), 1.0)
    return float(bdtrc(k - 1, n, p_left * p_right))  # P(X > k - 1) = P(X >= k)


def jaccard(intersection: float, left: float, right: float) -> float:
    """|L & R| / |L | R| from (possibly noisy) counts, clipped to [0, 1]; 0 on an empty union."""
    union = left + right - intersection
    if not union > 0:
        return 0.0
    return float(min(max(intersection / union, 0.0), 1.0))


def true_statistics(redescription: Redescription, views: TwoViews) -> dict[str, float]:
    """The exact statistics of a redescription's queries on `views` (public data only).

    Returns:
        support, left, right, size, jaccard and pvalue.
    """
    left = redescription.left.mask(views.codes[0])
    right = redescription.right.mask(views.codes[1])
    support = int(np.count_nonzero(left & right))
    n_left, n_right, size = int(left.sum()), int(right.sum()), views.n_entities
    return {"support": support, "left": n_left, "right": n_right, "size": size,
            "jaccard": jaccard(support, n_left, n_right),
            "pvalue": binomial_pvalue(support, n_left, n_right, size) if size else 1.0}


@dataclass(frozen=True)
class RedescriptionSet:
    """What one mining run releases: the redescriptions (kept and pruned) and how they were made."""

    redescriptions: tuple[Redescription, ...]
    schemas: tuple[ViewSchema, ViewSchema]
    algorithm: str
    epsilon: Fraction
    notes: tuple[str, ...] = field(default=())

    def kept(self) -> list[Redescription]:
        """The redescriptions above the pruning threshold."""
        return [r for r in self.redescriptions if not r.pruned]

    def __len__(self) -> int:
        return len(self.redescriptions)

    def to_frame(self, include_pruned: bool = False) -> Any:
        """A pandas DataFrame, one row per redescription (kept only unless `include_pruned`)."""
        import pandas as pd

        rows = [{"left": r.left.text(self.schemas[0]), "right": r.right.text(self.schemas[1]),
                 "support": r.noisy_support, "jaccard": r.noisy_jaccard, "pvalue": r.noisy_pvalue,
                 "left_support": r.noisy_left, "right_support": r.noisy_right, "pruned": r.pruned,
                 "origin": r.origin}
                for r in self.redescriptions if include_pruned or not r.pruned]
        columns = ["left", "right", "support", "jaccard", "pvalue", "left_support", "right_support",
                   "pruned", "origin"]
        return pd.DataFrame(rows, columns=columns)

    def evaluate(self, views: TwoViews, include_pruned: bool = True) -> Any:
        """`to_frame` plus the exact statistics on `views` (public data): true_support,
        true_jaccard, true_pvalue."""
        frame = self.to_frame(include_pruned=include_pruned)
        chosen = [r for r in self.redescriptions if include_pruned or not r.pruned]
        truths = [true_statistics(r, views) for r in chosen]
        frame["true_support"] = [t["support"] for t in truths]
        frame["true_jaccard"] = [t["jaccard"] for t in truths]
        frame["true_pvalue"] = [t["pvalue"] for t in truths]
        return frame

    def __str__(self) -> str:
        kept = self.kept()
        head = (f"{self.algorithm} at epsilon {float(self.epsilon):g}: {len(kept)} redescription"
                f"{'' if len(kept) == 1 else 's'} kept, {len(self.redescriptions) - len(kept)} pruned")
        lines = [head] + [f"  {r.text(self.schemas)}" for r in kept]
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)
