"""Local randomisation operators and their privacy-breach analysis, in exact arithmetic (issue 26).

Input perturbation (Evfimievski, Gehrke and Srikant, PODS 2003; the lecture notes in
`../shared/papers/shmatikov_ppdm.txt`) replaces each value x of a public finite domain by a
random y drawn from an operator's transition law p(x -> y), before anything leaves the owner.
This module holds the operators and what can be said of them, all as exact Fractions:

  keep_or_uniform     R1: keep x with probability p, else a uniform value of the domain
  cyclic_uniform      R2: x plus a uniform integer in [-k, k], modulo the domain size
  additive_uniform    x plus a uniform integer in [-k, k], no wrap-around (outputs beyond the domain)
  randomized_response keep x with probability e^eps / (e^eps + m - 1), else one of the other m - 1
  mixture             R3: sum_i w_i R_i (weights adding to 1), over operators with one output domain

  amplification       gamma = max over y, x1, x2 of p(x1 -> y) / p(x2 -> y) (infinite when some
                      output has probability 0 from one input and not from another)
  has_breach          a straight or inverse (rho1, rho2) breach is possible unless
                      rho2 (1 - rho1) / (rho1 (1 - rho2)) > gamma (Evfimievski et al., Theorem 1)
  breach_threshold    the largest rho1 with no breach for a given rho2: rho1 < rho2 / (rho2 + gamma (1 - rho2))
  posterior           P(Q | y) for a property Q (a set of inputs) under a prior
  local_epsilon       ln gamma: an operator with amplification gamma is (ln gamma)-locally DP
  epsilon_upper_bound an exact rational >= ln of a product of amplifications (what a release charges)

  counts              the exact law as one integer matrix over a common denominator: p(x -> y) = N[x, y] / D
  transition_matrix   the same law in floating point (for reconstruction, which is post-processing)
  sample              exact draws of y for many inputs x: per distinct input, uniform integers below D
                      located in the cumulative row of N (inverse CDF on integers; no floating point)

Every operator is a function of public parameters only; nothing here reads private data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Callable, Iterable, Mapping, Protocol, Sequence

import numpy as np

Probability = Fraction


@dataclass(frozen=True)
class Operator:
    """A randomisation operator over the inputs 0..size-1.

    Attributes:
        name: A readable name ("R1 keep 1/5").
        size: The number of inputs (the domain 0..size-1).
        outputs: The possible outputs, in order.
        law: p(x -> y), an exact Fraction.
        integer_law: Optional: returns (N, D) with p(x -> y) = N[x, j] / D for y = outputs[j], a
            vectorised form of `law` (without it, `counts` evaluates `law` on every pair).
    """

    name: str
    size: int
    outputs: tuple[int, ...]
    law: Callable[[int, int], Fraction]
    integer_law: Callable[[], tuple[np.ndarray, int]] | None = field(default=None, compare=False, repr=False)

    @cached_property
    def counts(self) -> tuple[np.ndarray, int]:
        """(N, D): p(x -> outputs[j]) = N[x, j] / D exactly, N an int64 array (an object array of
        Python ints when D exceeds 2^62), every row adding to D."""
        if self.integer_law is not None:
            return self.integer_law()
        rows = [[self.law(x, y) for y in self.outputs] for x in range(self.size)]
        denominator = math.lcm(*(p.denominator for row in rows for p in row))
        return _integer_array([[int(p * denominator) for p in row] for row in rows], denominator), denominator

    def probability(self, x: int, y: int) -> Fraction:
        """p(x -> y)."""
        return self.law(x, y)

    def column(self, y: int) -> list[Fraction]:
        """p(x -> y) for every input x."""
        return [self.law(x, y) for x in range(self.size)]


def _integer_array(values: object, denominator: int) -> np.ndarray:
    """An int64 array when the denominator leaves room (sums stay below 2^63), else Python ints."""
    return np.array(values, dtype=np.int64 if denominator < 2 ** 62 else object)


def _fraction(value: Fraction | int | str, what: str) -> Fraction:
    try:
        result = Fraction(value)
    except (TypeError, ValueError, ZeroDivisionError) as error:
        raise ValueError(f"{what} must be an exact number (a Fraction, an int or a decimal string), got {value!r}") \
            from error
    return result


def _check_size(size: int) -> None:
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"the domain size must be a positive integer, got {size!r}")


def keep_or_uniform(size: int, keep: Fraction | int | str) -> Operator:
    """R1: keep x with probability `keep`, else replace it by a uniform value of 0..size-1."""
    _check_size(size)
    p = _fraction(keep, "keep")
    if not 0 <= p <= 1:
        raise ValueError(f"keep must lie in [0, 1], got {p}")
    spread = (1 - p) / size

    def integer_law() -> tuple[np.ndarray, int]:
        # p = a/b: p(x -> y) = (a size [x = y] + (b - a)) / (b size)
        a, b = p.numerator, p.denominator
        matrix = np.full((size, size), b - a, dtype=np.int64 if b * size < 2 ** 62 else object)
        np.fill_diagonal(matrix, b - a + a * size)
        return matrix, b * size

    return Operator(f"R1 keep {p}", size, tuple(range(size)), lambda x, y: (p if x == y else 0) + spread,
                    integer_law)


def cyclic_uniform(size: int, k: int) -> Operator:
    """R2: x plus a uniform integer in [-k, k], modulo `size` (2k + 1 <= size)."""
    _check_size(size)
    if k < 0 or 2 * k + 1 > size:
        raise ValueError(f"cyclic noise needs 0 <= k and 2k + 1 <= size, got k={k}, size={size}")
    weight = Fraction(1, 2 * k + 1)

    def law(x: int, y: int) -> Fraction:
        d = (y - x) % size
        return weight if d <= k or d >= size - k else Fraction(0)

    def integer_law() -> tuple[np.ndarray, int]:
        d = (np.arange(size)[None, :] - np.arange(size)[:, None]) % size
        return ((d <= k) | (d >= size - k)).astype(np.int64), 2 * k + 1

    return Operator(f"R2 +-{k} mod {size}", size, tuple(range(size)), law, integer_law)


def additive_uniform(size: int, k: int) -> Operator:
    """x plus a uniform integer in [-k, k], no wrap-around: outputs -k..size-1+k."""
    _check_size(size)
    if k < 0:
        raise ValueError(f"k must be non-negative, got {k}")
    weight = Fraction(1, 2 * k + 1)

    def integer_law() -> tuple[np.ndarray, int]:
        outputs = np.arange(-k, size + k)
        return (np.abs(outputs[None, :] - np.arange(size)[:, None]) <= k).astype(np.int64), 2 * k + 1

    return Operator(f"additive +-{k}", size, tuple(range(-k, size + k)),
                    lambda x, y: weight if abs(y - x) <= k else Fraction(0), integer_law)


def randomized_response(size: int, epsilon: float | Fraction) -> Operator:
    """Keep x with probability e^eps / (e^eps + m - 1), else one of the m - 1 others uniformly.

    e^eps is taken at the exact value of the double `math.exp(epsilon)` (a public choice); the
    operator's amplification is then exactly that value.
    """
    _check_size(size)
    if size < 2:
        raise ValueError("randomized response needs at least two values")
    e = Fraction(math.exp(float(epsilon)))
    stay, move = e / (e + size - 1), 1 / (e + size - 1)

    def integer_law() -> tuple[np.ndarray, int]:
        # e = M / 2^j: stay = M / (M + (size - 1) 2^j), move = 2^j / (M + (size - 1) 2^j)
        m, two_j = e.numerator, e.denominator
        denominator = m + (size - 1) * two_j
        matrix = np.full((size, size), two_j, dtype=np.int64 if denominator < 2 ** 62 else object)
        np.fill_diagonal(matrix, m)
        return matrix, denominator

    return Operator(f"randomized response eps {float(epsilon):g}", size, tuple(range(size)),
                    lambda x, y: stay if x == y else move, integer_law)


def mixture(parts: Sequence[tuple[Fraction | int | str, Operator]]) -> Operator:
    """R3: with probability w_i apply operator i (the weights add to 1; one domain, one output set)."""
    if not parts:
        raise ValueError("a mixture needs at least one operator")
    weights = [_fraction(w, "a mixture weight") for w, _ in parts]
    operators = [op for _, op in parts]
    if sum(weights) != 1 or any(w < 0 for w in weights):
        raise ValueError(f"mixture weights must be non-negative and add to 1, got {[str(w) for w in weights]}")
    if len({(op.size, op.outputs) for op in operators}) != 1:
        raise ValueError("a mixture's operators must share their inputs and outputs")
    name = " + ".join(f"{w} {op.name}" for w, op in zip(weights, operators))

    def integer_law() -> tuple[np.ndarray, int]:
        # sum_i w_i N_i / D_i over the common denominator D = lcm_i(den(w_i) D_i)
        laws = [op.counts for op in operators]
        denominator = math.lcm(*(w.denominator * d for w, (_, d) in zip(weights, laws)))
        dtype = np.int64 if denominator < 2 ** 62 else object
        total = np.zeros(laws[0][0].shape, dtype=dtype)
        for w, (matrix, d) in zip(weights, laws):
            total = total + matrix.astype(dtype) * (w.numerator * (denominator // (w.denominator * d)))
        return total, denominator

    return Operator(name, operators[0].size, operators[0].outputs,
                    lambda x, y: sum((w * op.law(x, y) for w, op in zip(weights, operators)), Fraction(0)),
                    integer_law)


def amplification(operator: Operator, outputs: Iterable[int] | None = None) -> Fraction | float:
    """gamma = max over y, x1, x2 of p(x1 -> y) / p(x2 -> y); math.inf when some output is
    possible from one input and impossible from another. Outputs no input reaches are skipped."""
    if outputs is None:
        return _amplification_of_counts(*operator.counts)
    worst: Fraction = Fraction(1)
    for y in outputs:
        column = operator.column(y)
        high, low = max(column), min(column)
        if high == 0:
            continue
        if low == 0:
            return math.inf
        worst = max(worst, high / low)
    return worst


def _amplification_of_counts(matrix: np.ndarray, denominator: int) -> Fraction | float:
    """gamma from the integer law: max over columns of max N / min N (the denominators cancel)."""
    high, low = matrix.max(axis=0), matrix.min(axis=0)
    reached = np.asarray(high != 0, dtype=bool)
    if np.any(np.asarray(low[reached] == 0, dtype=bool)):
        return math.inf
    worst = Fraction(1)
    for h, lo in zip(high[reached].tolist(), low[reached].tolist()):
        if h * worst.denominator > worst.numerator * lo:
            worst = Fraction(int(h), int(lo))
    return worst


def local_epsilon(gamma: Fraction | float) -> float:
    """ln gamma: the local-DP epsilon of an operator with amplification gamma."""
    return math.inf if gamma == math.inf else math.log(gamma)


def has_breach(gamma: Fraction | float, rho1: Fraction | int | str, rho2: Fraction | int | str) -> bool:
    """Whether a straight or inverse (rho1, rho2) privacy breach is possible: False exactly when
    rho2 (1 - rho1) / (rho1 (1 - rho2)) > gamma (Evfimievski, Gehrke and Srikant 2003)."""
    r1, r2 = _fraction(rho1, "rho1"), _fraction(rho2, "rho2")
    if not 0 < r1 < r2 < 1:
        raise ValueError(f"a breach needs 0 < rho1 < rho2 < 1, got {r1}, {r2}")
    if gamma == math.inf:
        return True
    return not r2 * (1 - r1) / (r1 * (1 - r2)) > gamma


def breach_threshold(gamma: Fraction | float, rho2: Fraction | int | str) -> Fraction:
    """The supremum of the rho1 with no (rho1, rho2) breach: rho2 / (rho2 + gamma (1 - rho2))
    (0 for an infinite gamma); for rho2 = 1/2 it is 1 / (1 + gamma)."""
    r2 = _fraction(rho2, "rho2")
    if gamma == math.inf:
        return Fraction(0)
    g = Fraction(gamma)
    return r2 / (r2 + g * (1 - r2))


def posterior(operator: Operator, prior: Mapping[int, Fraction] | Sequence[Fraction], prop: Iterable[int],
              observed: int) -> Fraction:
    """P(x in prop | y = observed) under `prior` (a probability per input, adding to 1).

    Raises:
        ValueError: When the prior does not add to 1, or the observation has probability 0.
    """
    values = prior if isinstance(prior, Mapping) else dict(enumerate(prior))
    masses = {x: _fraction(p, "a prior probability") for x, p in values.items()}
    if sum(masses.values()) != 1 or any(p < 0 for p in masses.values()):
        raise ValueError("the prior must be non-negative and add to exactly 1")
    joint = {x: p * operator.law(x, observed) for x, p in masses.items() if p}
    evidence = sum(joint.values(), Fraction(0))
    if evidence == 0:
        raise ValueError(f"the output {observed} has probability 0 under this prior and operator")
    wanted = set(prop)
    return sum((v for x, v in joint.items() if x in wanted), Fraction(0)) / evidence


def epsilon_upper_bound(gammas: Sequence[Fraction | float], places: int = 6) -> Fraction:
    """The smallest multiple of 10^-places that is provably >= sum_i ln gamma_i (an exact rational).

    The candidate comes from floating point and is checked exactly: e^t >= sum_{j <= 40} t^j / j!
    (every term positive), so a partial sum of the series at least prod gamma_i proves
    t >= ln prod gamma_i; a candidate that fails the check is raised by one step until one passes.

    Raises:
        ValueError: When some gamma is infinite (no epsilon bounds it).
    """
    if any(g == math.inf for g in gammas):
        raise ValueError("an infinite amplification has no finite epsilon")
    product = math.prod((Fraction(g) for g in gammas), start=Fraction(1))
    step = Fraction(1, 10 ** places)
    candidate = Fraction(math.ceil(sum(math.log(g) for g in gammas) / step)) * step
    while True:
        term, series = Fraction(1), Fraction(1)
        for j in range(1, 41 + 4 * math.ceil(candidate)):
            term = term * candidate / j
            series += term
        if series >= product:
            return max(candidate, step)
        candidate += step


class IntegerSource(Protocol):
    """What `sample` draws from (jostle.privacy.noise.NoiseSource has it)."""

    def integers_below(self, bound: int, size: int) -> np.ndarray: ...


def sample(noise: IntegerSource, operator: Operator, inputs: np.ndarray | Sequence[int]) -> np.ndarray:
    """Exact draws y ~ p(x -> .) for each input index x (0..size-1), independently.

    With p(x -> y_j) = N[x, j] / D: one uniform integer u below D per row and y = outputs[j] for the
    first j whose cumulative N[x, 0] + ... + N[x, j] exceeds u, which has probability exactly
    N[x, j] / D. Vectorised: one draw of n integers, then one search per DISTINCT input value.

    Returns:
        The outputs (an int64 array, values of `operator.outputs`), one per input, in order.
    """
    x = np.asarray(inputs, dtype=np.int64)
    if x.size and (x.min() < 0 or x.max() >= operator.size):
        raise ValueError(f"inputs must lie in 0..{operator.size - 1}")
    matrix, denominator = operator.counts
    outputs = np.asarray(operator.outputs, dtype=np.int64)
    uniforms = noise.integers_below(denominator, x.size)
    result = np.empty(x.size, dtype=np.int64)
    order = np.argsort(x, kind="stable")
    distinct, starts = np.unique(x[order], return_index=True)
    for value, start, stop in zip(distinct.tolist(), starts.tolist(), [*starts[1:].tolist(), x.size]):
        rows = order[start:stop]
        cumulative = np.cumsum(matrix[value])
        result[rows] = outputs[np.searchsorted(cumulative, uniforms[rows], side="right")]
    return result


def transition_matrix(operator: Operator) -> np.ndarray:
    """p(x -> outputs[j]) as doubles, shape (size, len(outputs)): for post-processing only."""
    matrix, denominator = operator.counts
    if matrix.dtype == object:
        return np.array([[float(Fraction(int(v), denominator)) for v in row] for row in matrix])
    return matrix.astype(np.float64) / float(denominator)
