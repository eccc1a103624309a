"""Iterative Bayesian reconstruction of a distribution from locally randomised values (issue 26).

Given n values y_1..y_n, each the output of a PUBLIC randomisation operator R applied to an
unknown x_i (jostle.privacy.randomisation), estimate the distribution f of the x's. The
iteration is Agrawal and Srikant's (SIGMOD 2000), shown by Agrawal and Aggarwal (PODS 2001) to
be the EM algorithm for this mixture model:

    f_{t+1}(x) = (1/n) sum_y count(y) p(x -> y) f_t(x) / sum_x' p(x' -> y) f_t(x')

started from the uniform distribution. Vectorised: with P the transition matrix (inputs x
outputs) and c the output counts, f_{t+1} = f_t * (P @ (c / n / (f_t @ P))).

**Privacy.** Everything here is post-processing of public randomised values and of a public
operator: it costs nothing and reads no private data. The stopping rule uses only these public
quantities (the L1 change between iterations and a public cap on the number of iterations).

**Error.** EM recovers the mass of large, smooth sets of inputs well (the mass outside 200..800
under the lecture's R3), and single points badly: a spike such as P(x = 0) = 0.01 is smeared over
its neighbours by a noise of width 201 (benchmarks/reconstruction.py shows both).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np
from threadpoolctl import threadpool_limits

from jostle.privacy.randomisation import Operator, transition_matrix

DEFAULT_ITERATIONS = 2000
DEFAULT_TOLERANCE = 1e-6
LIKELIHOOD_GAIN = 0.5


@dataclass(frozen=True)
class Reconstruction:
    """An estimated distribution over an operator's inputs.

    Attributes:
        values: The domain's values, one per input index (ints lo..hi or categories).
        probabilities: The estimate, one per value (non-negative, adding to 1).
        iterations: How many EM steps ran.
        converged: Whether the L1 change fell below the tolerance before the cap.
        rows: How many randomised values it was estimated from.
    """

    values: tuple
    probabilities: np.ndarray
    iterations: int
    converged: bool
    rows: int

    def mass(self, prop: Iterable[Any] | Callable[[Any], bool]) -> float:
        """The estimated probability of a property: a set of values or a predicate on a value."""
        if callable(prop):
            chosen = np.array([bool(prop(v)) for v in self.values], dtype=bool)
        else:
            wanted = set(prop)
            chosen = np.array([v in wanted for v in self.values], dtype=bool)
        return float(self.probabilities[chosen].sum())

    def series(self) -> Any:
        """The estimate as a pandas Series indexed by the domain's values."""
        import pandas as pd

        return pd.Series(self.probabilities, index=list(self.values), name="probability")


def output_counts(operator: Operator, outputs: np.ndarray | Sequence[int]) -> np.ndarray:
    """How many times each of `operator.outputs` occurs among `outputs` (operator output values).

    Raises:
        ValueError: When a value is not one of the operator's outputs.
    """
    y = np.asarray(outputs, dtype=np.int64)
    first = operator.outputs[0]
    if list(operator.outputs) != list(range(first, first + len(operator.outputs))):
        raise ValueError("output_counts needs an operator whose outputs are consecutive integers")
    if y.size and (y.min() < first or y.max() >= first + len(operator.outputs)):
        raise ValueError(f"a value lies outside the operator's outputs {first}..{first + len(operator.outputs) - 1}")
    return np.bincount(y - first, minlength=len(operator.outputs)).astype(np.float64)


def _log_likelihood(counts: np.ndarray, predicted: np.ndarray) -> float:
    """sum_y count(y) ln q(y), q the output law the estimate predicts (cells never seen skipped)."""
    seen = counts > 0
    return float((counts[seen] * np.log(np.maximum(predicted[seen], 1e-300))).sum())


def reconstruct_counts(operator: Operator, counts: np.ndarray, values: Sequence[Any] | None = None,
                       iterations: int = DEFAULT_ITERATIONS, tolerance: float = DEFAULT_TOLERANCE,
                       likelihood_stop: bool = True) -> Reconstruction:
    """EM from the count of each output (in the order of `operator.outputs`).

    Args:
        operator: The public operator the values went through.
        counts: One count per output.
        values: The domain's values (default 0..size-1).
        iterations: The public cap on EM steps.
        tolerance: Stop once sum_x |f_{t+1}(x) - f_t(x)| falls below it.
        likelihood_stop: Also stop once a step raises the log-likelihood of the observed counts
            by less than LIKELIHOOD_GAIN = 1/2 nat (a likelihood-ratio statistic 2 x gain below 1:
            less than one degree of freedom's worth, no significant improvement). EM run to
            convergence fits the randomisation's sampling noise (the estimate grows spiky and large
            masses drift, worst for smoothing operators like R3); this stops it before, and still
            inverts well-conditioned ones like R1. Public quantities only.

    Raises:
        ValueError: When there are no values, or the counts do not match the outputs.
    """
    c = np.asarray(counts, dtype=np.float64)
    if c.shape != (len(operator.outputs),):
        raise ValueError(f"expected {len(operator.outputs)} counts, one per output, got shape {c.shape}")
    n = float(c.sum())
    if n <= 0:
        raise ValueError("reconstruction needs at least one randomised value")
    p = transition_matrix(operator)
    share = c / n
    f = np.full(operator.size, 1.0 / operator.size)
    log_likelihood = _log_likelihood(c, f @ p)
    converged, step = False, 0
    with threadpool_limits(1):  # matrix-vector products: BLAS threads only contend on a shared machine
        for step in range(1, iterations + 1):
            evidence = f @ p
            ratio = np.divide(share, evidence, out=np.zeros_like(share), where=evidence > 0)
            updated = f * (p @ ratio)
            updated /= updated.sum()
            change = float(np.abs(updated - f).sum())
            f = updated
            gain = _log_likelihood(c, f @ p) - log_likelihood
            log_likelihood += gain
            if change < tolerance or (likelihood_stop and gain < LIKELIHOOD_GAIN):
                converged = True
                break
    domain = tuple(values) if values is not None else tuple(range(operator.size))
    return Reconstruction(domain, f, step, converged, int(round(n)))


def reconstruct(operator: Operator, outputs: np.ndarray | Sequence[int], values: Sequence[Any] | None = None,
                iterations: int = DEFAULT_ITERATIONS, tolerance: float = DEFAULT_TOLERANCE,
                likelihood_stop: bool = True) -> Reconstruction:
    """EM from the randomised values themselves (operator output values, e.g. `sample`'s)."""
    return reconstruct_counts(operator, output_counts(operator, outputs), values, iterations, tolerance,
                              likelihood_stop)


__all__ = ["DEFAULT_ITERATIONS", "DEFAULT_TOLERANCE", "LIKELIHOOD_GAIN", "Reconstruction", "output_counts",
           "reconstruct",
           "reconstruct_counts"]
