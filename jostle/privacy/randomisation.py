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

Every operator is a function of public parameters only; nothing here reads private data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Iterable, Mapping, Sequence

Probability = Fraction


@dataclass(frozen=True)
class Operator:
    """A randomisation operator over the inputs 0..size-1.

    Attributes:
        name: A readable name ("R1 keep 1/5").
        size: The number of inputs (the domain 0..size-1).
        outputs: The possible outputs, in order.
        law: p(x -> y), an exact Fraction.
    """

    name: str
    size: int
    outputs: tuple[int, ...]
    law: Callable[[int, int], Fraction]

    def probability(self, x: int, y: int) -> Fraction:
        """p(x -> y)."""
        return self.law(x, y)

    def column(self, y: int) -> list[Fraction]:
        """p(x -> y) for every input x."""
        return [self.law(x, y) for x in range(self.size)]


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
    return Operator(f"R1 keep {p}", size, tuple(range(size)), lambda x, y: (p if x == y else 0) + spread)


def cyclic_uniform(size: int, k: int) -> Operator:
    """R2: x plus a uniform integer in [-k, k], modulo `size` (2k + 1 <= size)."""
    _check_size(size)
    if k < 0 or 2 * k + 1 > size:
        raise ValueError(f"cyclic noise needs 0 <= k and 2k + 1 <= size, got k={k}, size={size}")
    weight = Fraction(1, 2 * k + 1)

    def law(x: int, y: int) -> Fraction:
        d = (y - x) % size
        return weight if d <= k or d >= size - k else Fraction(0)

    return Operator(f"R2 +-{k} mod {size}", size, tuple(range(size)), law)


def additive_uniform(size: int, k: int) -> Operator:
    """x plus a uniform integer in [-k, k], no wrap-around: outputs -k..size-1+k."""
    _check_size(size)
    if k < 0:
        raise ValueError(f"k must be non-negative, got {k}")
    weight = Fraction(1, 2 * k + 1)
    return Operator(f"additive +-{k}", size, tuple(range(-k, size + k)),
                    lambda x, y: weight if abs(y - x) <= k else Fraction(0))


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
    return Operator(f"randomized response eps {float(epsilon):g}", size, tuple(range(size)),
                    lambda x, y: stay if x == y else move)


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
    return Operator(name, operators[0].size, operators[0].outputs,
                    lambda x, y: sum((w * op.law(x, y) for w, op in zip(weights, operators)), Fraction(0)))


def amplification(operator: Operator, outputs: Iterable[int] | None = None) -> Fraction | float:
    """gamma = max over y, x1, x2 of p(x1 -> y) / p(x2 -> y); math.inf when some output is
    possible from one input and impossible from another. Outputs no input reaches are skipped."""
    worst: Fraction = Fraction(1)
    for y in operator.outputs if outputs is None else outputs:
        column = operator.column(y)
        high, low = max(column), min(column)
        if high == 0:
            continue
        if low == 0:
            return math.inf
        worst = max(worst, high / low)
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
