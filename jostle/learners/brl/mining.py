"""Antecedents for rule lists: a non-private frequent-itemset baseline, a private miner after
Zeng, Naughton & Cai (PVLDB 2012), public antecedents from the schema, and the ranking that
caps the antecedent set.

Transactions. A row is the transaction of its items (attribute j has value v), one item per
attribute, over the PUBLIC domains. As in Letham et al.'s BRL, itemsets are mined within each
class (minimum support relative to the class) and the union is the antecedent set; an itemset
never holds two items of one attribute.

Non-private (`mine_frequent`): mlxtend's FP-growth on each class's one-hot rows.

Private (`mine_private`), for a mining budget eps. The PLAN (public): eps_length =
length_share * eps for the truncation length when max_cardinality >= 2 (else 0), and the rest,
eps_levels = eps - eps_length, for the levels; the classes are disjoint sets of rows, so each
step, run on every class, costs its epsilon ONCE (parallel composition, McSherry 2009 Thm 4).
Each step is charged before its noise is drawn:
  1. Level 1: every item's support in each class, plus two-sided geometric noise of scale
     k / eps_1, eps_1 = eps_levels / L_1, L_1 = min(max_cardinality, k) the levels that can
     have candidates at all (an itemset holds items of distinct attributes). A row holds
     exactly k items (one per attribute), so adding or removing it moves k supports by 1 each:
     L1 sensitivity k. The class sizes are estimated by post-processing (the mean over
     attributes of the sum of an attribute's noisy supports), and an item is frequent when its
     noisy support reaches min_support times that size in some class.
  2. Truncation length (Zeng et al. section 4), run only when level 2 has candidates: per
     class, the histogram of transaction lengths, a row's length being how many of its items
     are frequent (0..k); one row is in one bucket: sensitivity 1, geometric noise of scale
     1 / eps_length. The length l_c is the smallest length covering `quantile` of the noisy
     histogram (at least 1). (Over the full one-hot items every row has length k, which is
     why lengths count frequent items: the full-item lengths are public and constant.)
  3. Truncation: each row keeps at most l_c of its frequent items, those of largest noisy
     level-1 support in its class (ties: the item order). This is a function of the row and of
     released values only, so adding a row adds one truncated row and changes no other.
  4. Level i = 2..max_cardinality, run only while it has candidates: the candidates are the
     Apriori joins of the frequent (i-1)-itemsets (public: released values); each candidate's
     support in the truncated rows of each class gets geometric noise of scale
     C(l_c, i) / eps_i: a truncated row has at most l_c items, so it is in at most C(l_c, i)
     candidates (L1 sensitivity C(l_c, i)). eps_i = (what is left of eps_levels) / L_i, L_i the
     levels i..L that can still have candidates, L = min(max_cardinality, the attributes the
     level-i candidates use): a level-j candidate needs items of j distinct attributes, all
     among those.

Skipped charges and the budget they save (adaptive composition). A step with no candidates
releases nothing and is NOT charged: when level 2 has no candidates, neither the truncation
length nor any level >= 2 runs; when level i has none, no level >= i runs (Apriori: no
frequent (i-1)-itemsets, no i-candidates). Whether a step runs, and each eps_i, are functions
of the values released before it (the frequent itemsets) and of public parameters only. Under
adaptive sequential composition for pure DP (Dwork, Rothblum & Vadhan 2010; as a "privacy
filter", Rogers, Roth, Ullman & Vadhan 2016: for pure epsilon the basic composition bound is a
valid filter), a sequence of mechanisms each eps_i(past outputs)-DP given the past outputs is
(sum over the run of eps_i)-DP when that sum is at most eps on every run: the likelihood ratio
of a whole transcript is the product of the steps' ratios, each at most exp(eps_i). Here every
run charges at most eps (the charges sum to at most eps_length + eps_levels), so mining is
eps-DP; what it does not spend (`MinedAntecedents.spent` says what it did) is left to the
fit's later steps (`learner.fit_private`). The charges are a function of released values: on
neighbours whose released frequent itemsets agree, the charges are identical.
The released output is the frequent itemsets and their noisy per-class supports.

Ranking (`rank_antecedents`): the exact sampler enumerates every list, so the antecedent set is
capped; antecedents are ranked by sum_c |s_c - s p_c| (s_c their support in class c, s the
total, p_c the class shares), from noisy supports for private mining (post-processing).
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Sequence

import numpy as np

from jostle.learners.brl.bitsets import Antecedent, Item, RowBits, items_of, to_bitset
from jostle.privacy import replay

MAX_CANDIDATES_PER_LEVEL = 20_000

ChargeStep = Callable[[Fraction, str], Fraction]


@dataclass
class MinedAntecedents:
    """An antecedent set and each antecedent's (noisy, for private mining) support per class.

    Attributes:
        antecedents: The itemsets, sorted items on distinct attributes.
        supports: (antecedents, classes) supports; noisy when mined privately.
        class_sizes: The (estimated, when private) rows per class.
        truncation: Per class, the truncation length chosen (private mining only).
        private: Whether the supports are noisy releases.
        noise_scales: Per antecedent, the largest scale b of the noise on its supports times
            max(1, ln N), N the number of itemsets measured at its level (public; about the
            largest noise among them, Laplace maxima growing as b ln N).
        spent: What private mining charged (exact: the sum of what its steps calibrated to); a
            function of released values only.
    """

    antecedents: list[Antecedent]
    supports: np.ndarray
    class_sizes: np.ndarray
    truncation: list[int] = field(default_factory=list)
    private: bool = False
    noise_scales: np.ndarray | None = None
    spent: Fraction = Fraction(0)


def public_antecedents(domain_sizes: Sequence[int], max_cardinality: int = 1) -> list[Antecedent]:
    """Every itemset of at most `max_cardinality` items from the public schema (no data read)."""
    items = items_of(domain_sizes)
    out: list[Antecedent] = [(item,) for item in items]
    for size in range(2, max_cardinality + 1):
        for combination in itertools.combinations(range(len(domain_sizes)), size):
            for values in itertools.product(*[range(int(domain_sizes[j])) for j in combination]):
                out.append(tuple(zip(combination, values)))
    return out


def exact_supports(bits: RowBits, antecedents: Sequence[Antecedent]) -> np.ndarray:
    """Each antecedent's exact support in each class."""
    return np.array([[(bits.antecedent(a) & c).bit_count() for c in bits.classes] for a in antecedents],
                    dtype=np.int64).reshape(len(antecedents), len(bits.classes))


def mine_frequent(X: np.ndarray, y: np.ndarray, domain_sizes: Sequence[int], n_classes: int,
                  min_support: float, max_cardinality: int) -> MinedAntecedents:
    """Non-private: FP-growth (mlxtend) within each class; the union with exact supports."""
    import pandas as pd
    from mlxtend.frequent_patterns import fpgrowth

    items = items_of(domain_sizes)
    X = np.asarray(X, dtype=np.int64)
    onehot = np.column_stack([X[:, j] == v for j, v in items]) if len(items) else np.zeros((len(X), 0), bool)
    found: set[Antecedent] = set()
    for c in range(n_classes):
        rows = onehot[np.asarray(y) == c]
        if len(rows) == 0 or not len(items):
            continue
        frame = pd.DataFrame(rows, columns=range(len(items)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            itemsets = fpgrowth(frame, min_support=min_support, max_len=max_cardinality)["itemsets"]
        for itemset in itemsets:
            chosen = sorted(items[i] for i in itemset)
            if len({j for j, _ in chosen}) == len(chosen):  # one value per attribute (always true here)
                found.add(tuple(chosen))
    antecedents = sorted(found, key=lambda a: (len(a), a))
    bits = RowBits.of(X, y, domain_sizes, n_classes)
    sizes = np.array([c.bit_count() for c in bits.classes], dtype=float)
    return MinedAntecedents(antecedents, exact_supports(bits, antecedents), sizes)


def _geometric(noise: Any, scale: Fraction, size: int) -> np.ndarray:
    """Two-sided geometric (discrete Laplace) noise of an exact rational scale."""
    if size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.asarray(noise.discrete_laplace(scale, size)).astype(np.float64)


def _joins(frequent: Sequence[Antecedent], size: int) -> list[Antecedent]:
    """Apriori candidates of `size` items: unions of two frequent (size-1)-itemsets whose every
    (size-1)-subset is frequent, on distinct attributes."""
    known = set(frequent)
    out: set[Antecedent] = set()
    ordered = sorted(frequent)
    for a, b in itertools.combinations(ordered, 2):
        union = tuple(sorted(set(a) | set(b)))
        if len(union) != size or len({j for j, _ in union}) != size:
            continue
        if all(tuple(sub) in known for sub in itertools.combinations(union, size - 1)):
            out.add(union)
    return sorted(out)[:MAX_CANDIDATES_PER_LEVEL]


def mine_private(X: np.ndarray, y: np.ndarray, domain_sizes: Sequence[int], n_classes: int, epsilon: Fraction,
                 noise: Any, charge: ChargeStep, min_support: float = 0.1, max_cardinality: int = 2,
                 quantile: float = 0.85, length_share: Fraction = Fraction(1, 10)) -> MinedAntecedents:
    """Private frequent itemsets within each class (see the module docstring for the argument).

    Args:
        X, y: Integer codes and class codes (private).
        domain_sizes, n_classes: Public domains.
        epsilon: The whole mining budget (exact).
        noise: Randomness (exact) or a simulation source on public data.
        charge: charge(epsilon, description) -> the epsilon the step may calibrate to; called
            before each step's noise is drawn (it refuses an overspend).
        min_support: Minimum support, a share of the class.
        max_cardinality: The largest itemsets mined.
        quantile: The share of (noisy) transactions the truncation length must cover.
        length_share: The share of epsilon spent on the truncation length.
    """
    k = len(domain_sizes)
    X = np.asarray(X, dtype=np.int64).reshape(len(y), k)
    y = np.asarray(y, dtype=np.int64)
    bits = RowBits.of(X, y, domain_sizes, n_classes)
    items = items_of(domain_sizes)
    epsilon = Fraction(epsilon)
    # the plan: the truncation length only serves levels >= 2; the levels share the rest
    length_epsilon = epsilon * Fraction(length_share) if max_cardinality >= 2 else Fraction(0)
    levels_left = epsilon - length_epsilon
    spent = Fraction(0)

    # 1. item supports per class: L1 sensitivity k (a row holds one item per attribute)
    eps1 = charge(levels_left / max(min(int(max_cardinality), k), 1),
                  f"DP-FIM level 1: {len(items)} item supports per class (L1 sensitivity {k}; "
                  "classes are disjoint: parallel composition)")
    spent += eps1
    levels_left -= eps1
    exact1 = exact_supports(bits, [(item,) for item in items]).T.astype(np.float64)  # (classes, items)
    noisy1 = replay.released(noise, "DP-FIM level 1", exact1, exact1 + _geometric(noise, Fraction(max(k, 1)) / eps1, exact1.size).reshape(exact1.shape), "l1", max(k, 1), 1)  # noqa: E501
    offsets = np.concatenate([[0], np.cumsum(domain_sizes)]).astype(int)
    if k:
        sizes = np.array([np.mean([noisy1[c, offsets[j]:offsets[j + 1]].sum() for j in range(k)])
                          for c in range(n_classes)])
    else:
        sizes = np.zeros(n_classes)
    sizes = np.maximum(sizes, 1.0)
    threshold = min_support * sizes                                      # per class
    frequent1 = [item for i, item in enumerate(items) if np.any(noisy1[:, i] >= threshold)]

    support_of: dict[Antecedent, np.ndarray] = {(item,): noisy1[:, i] for i, item in enumerate(items)}
    level1_scale = float(max(k, 1) / eps1) * max(1.0, math.log(max(len(items), 1)))
    scale_of: dict[Antecedent, float] = {(item,): level1_scale for item in items}
    frequent: list[Antecedent] = [(item,) for item in frequent1]
    candidates = _joins(frequent, 2) if max_cardinality >= 2 else []
    truncation: list[int] = []
    if candidates:  # released values say level 2 runs: the truncation length serves it
        eps_len = charge(length_epsilon, f"DP-FIM truncation length: histogram of transaction lengths 0..{k} per "
                                         "class (sensitivity 1; parallel over classes)")
        spent += eps_len
        truncation, truncated = _truncate(X, y, n_classes, noisy1, frequent1, offsets, eps_len, quantile, noise)

    # 4. levels 2..max_cardinality on the truncated rows while they have candidates (C(l_c, i) per class)
    size = 2
    while candidates:
        attributes = len({j for antecedent in candidates for j, _ in antecedent})
        last = min(int(max_cardinality), attributes)   # no level past `last` can have candidates
        eps_i = charge(levels_left / (last - size + 1),
                       f"DP-FIM level {size}: {len(candidates)} itemset supports per class on truncated rows "
                       f"(L1 sensitivity C(l_c, {size}); parallel over classes)")
        spent += eps_i
        levels_left -= eps_i
        counts = np.zeros((n_classes, len(candidates)))
        for a_index, antecedent in enumerate(candidates):
            mask = bits.everything
            for item in antecedent:
                mask &= truncated[item]
            counts[:, a_index] = [(mask & cls).bit_count() for cls in bits.classes]
        for c in range(n_classes):
            sensitivity = max(math.comb(truncation[c], size), 1)
            counts[c] = replay.released(noise, "DP-FIM level", counts[c].copy(), counts[c] + _geometric(noise, Fraction(sensitivity) / eps_i, len(candidates)), "l1", sensitivity, 1)  # noqa: E501
        scale = (max(max(math.comb(truncation[c], size), 1) for c in range(n_classes)) / eps_i
                 * max(1.0, math.log(len(candidates))))
        level: list[Antecedent] = []
        for a_index, antecedent in enumerate(candidates):
            support_of[antecedent] = counts[:, a_index]
            scale_of[antecedent] = float(scale)
            if np.any(counts[:, a_index] >= threshold):
                level.append(antecedent)
        frequent = frequent + level
        size += 1
        candidates = _joins(level, size) if size <= last else []
    supports = np.array([support_of[a] for a in frequent]).reshape(len(frequent), n_classes)
    return MinedAntecedents(frequent, supports, sizes, truncation, True, np.array([scale_of[a] for a in frequent]),
                            spent)


def _truncate(X: np.ndarray, y: np.ndarray, n_classes: int, noisy1: np.ndarray, frequent1: Sequence[Item],
              offsets: np.ndarray, eps_len: Fraction, quantile: float,
              noise: Any) -> tuple[list[int], dict[Item, int]]:
    """Steps 2 and 3 of the module docstring: the noisy truncation length per class (charged by
    the caller: sensitivity 1, parallel over classes) and each item's bitset over the rows that
    keep it after truncation."""
    k = X.shape[1]
    is_frequent = np.zeros((len(y), k), dtype=bool)
    for j in range(k):
        is_frequent[:, j] = np.isin(X[:, j], [v for (jj, v) in frequent1 if jj == j])
    lengths = is_frequent.sum(axis=1)
    truncation = []
    for c in range(n_classes):
        histogram = np.bincount(lengths[y == c], minlength=k + 1)[:k + 1].astype(np.float64)
        noisy = np.clip(replay.released(noise, "DP-FIM lengths", histogram, histogram + _geometric(noise, 1 / eps_len, k + 1), "l1", 1, 1), 0.0, None)  # noqa: E501
        cumulative = np.cumsum(noisy)
        total = cumulative[-1]
        chosen = int(np.searchsorted(cumulative, quantile * total)) if total > 0 else k
        truncation.append(int(min(max(chosen, 1), max(k, 1))))
    # keep each row's l_c frequent items of largest noisy support in its class
    kept = np.zeros((len(y), k), dtype=bool)
    for c in range(n_classes):
        rows = np.flatnonzero(y == c)
        if rows.size == 0:
            continue
        priority = np.full((rows.size, k), np.inf)
        for j in range(k):
            values = X[rows, j]
            support = noisy1[c, offsets[j] + values]
            # rank key: larger noisy support first; ties by attribute index (public)
            priority[:, j] = np.where(is_frequent[rows, j], -support, np.inf)
        order = np.argsort(priority, axis=1, kind="stable")
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.arange(k)[None, :].repeat(rows.size, axis=0), axis=1)
        kept[rows] = (rank < truncation[c]) & np.isfinite(priority)
    domain_items = [(j, v) for j in range(k) for v in range(int(offsets[j + 1] - offsets[j]))]
    return truncation, {(j, v): to_bitset((X[:, j] == v) & kept[:, j]) for (j, v) in domain_items}


def rank_antecedents(mined: MinedAntecedents) -> list[int]:
    """Indices of the antecedents, most predictive first (ties: order).

    The key is the gain sum_c |s_c - s p_c| less 2 C b', b' = `noise_scales` (each
    |s_c - s p_c| is off by at most about |noise_c| + p_c |noise|, and the largest of N noisy
    gains by about b ln N): a pessimistic gain, so that itemsets measured with larger noise
    (higher levels, whose sensitivity C(l, i) is larger, and many candidates) do not win on their
    noise alone. Post-processing.
    """
    if not mined.antecedents:
        return []
    supports = np.clip(mined.supports.astype(float), 0.0, None)
    shares = np.clip(mined.class_sizes.astype(float), 0.0, None)
    shares = shares / shares.sum() if shares.sum() > 0 else np.full(len(shares), 1.0 / len(shares))
    totals = supports.sum(axis=1, keepdims=True)
    gain = np.abs(supports - totals * shares[None, :]).sum(axis=1)
    if mined.noise_scales is not None:
        gain = gain - 2.0 * len(shares) * np.asarray(mined.noise_scales, dtype=float)
    return sorted(range(len(mined.antecedents)), key=lambda i: (-gain[i], i))


def item_label(item: Item, names: Sequence[str], values: Sequence[Sequence[Any]]) -> str:
    """`name = value` for printouts."""
    j, v = item
    return f"{names[j]} = {values[j][v]}"
