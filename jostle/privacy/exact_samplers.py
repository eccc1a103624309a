"""Exact samplers for privacy noise, in integer arithmetic, driven by uniform random words.

Every sampler here returns *exactly* the distribution it names: all arithmetic is on integers
(NumPy int64 where it provably cannot overflow, Python integers otherwise) or on
`fractions.Fraction`s, and the only randomness is a stream of independent uniform 64-bit words
(`RandomWords`). The algorithms are those of Canonne, Kamath & Steinke, "The Discrete Gaussian
for Differential Privacy" (NeurIPS 2020), written here from the paper:

  * `bernoulli_exp`: Bernoulli(exp(-gamma)) for rational gamma >= 0 (CKS Algorithm 1: for
    gamma in [0, 1], draw A_k ~ Bernoulli(gamma / k) for k = 1, 2, ... until one is 0 and
    return 1 iff that k is odd; a larger gamma is floor(gamma) independent Bernoulli(exp(-1))
    draws times one Bernoulli(exp(-(gamma - floor(gamma))))). Bernoulli(gamma / k) is drawn as
    Bernoulli(1/k) AND Bernoulli(gamma), so no denominator ever grows with k.
  * `discrete_laplace`: P(x) proportional to exp(-|x| / scale) on the integers, for a rational
    scale t/s (CKS Algorithm 2).
  * `discrete_gaussian`: P(x) proportional to exp(-x^2 / (2 sigma^2)) on the integers, for a
    rational sigma^2 (CKS Algorithm 3: discrete Laplace proposals of integer scale t, accepted
    with probability exp(-(|y| - sigma^2/t)^2 / (2 sigma^2)); exact for every t >= 1).
  * `integers_below` (rejection from masked words, so exactly uniform for any bound) and
    `bernoulli_rational` (Bernoulli(p) for rational p).

Vectorisation: a batch of draws goes through the rejection loops in lockstep (every pending draw
takes the same step at once; finished draws leave the batch). This is used when the parameters
fit comfortably in 62 bits. Otherwise, and for batches of a few draws (where NumPy's per-call
overhead dominates), the scalar forms on Python integers are used. A draw whose intermediate
value would overflow int64 part-way (a far tail) is *finished* on Python integers from the state
it reached, never redrawn: redrawing would cut off the tail and bias the distribution. Results
are int64 arrays, or object arrays of Python integers when a value does not fit.

Timing: the number of loop iterations depends on the drawn values (and, for rejection samplers
with a data-dependent acceptance, on the data). Jostle does not defend against timing side
channels.
"""

from __future__ import annotations

from fractions import Fraction
from math import isqrt
from typing import Callable

import numpy as np

# Quantities in the vectorised paths stay below this, so sums and products of two of them
# that the code forms are checked to stay inside int64.
_SAFE = 1 << 62
# Batches up to this size use the scalar Python-integer forms (faster for tiny batches).
_SCALAR_BATCH = 12
# Vectorised discrete Laplace: t * V stays exact while V <= this (t < 2^56); a larger V (a far
# tail, probability e^-128) is finished on Python ints. Tests lower it to exercise that path.
_V_CAP = 127
# Vectorised discrete Gaussian: | |y| md - mn | at most this is squared in int64; beyond, the
# acceptance test runs on Python ints. Tests lower it to exercise that path.
_DIFF_CAP = 1 << 31


class RandomWords:
    """A stream of independent uniform 64-bit words, as arrays or one at a time.

    Args:
        fill: Returns `n` fresh uniform words as a NumPy uint64 array. It is the only source of
            randomness; single words are served from a small buffer filled through it.
    """

    _BUFFER = 64

    def __init__(self, fill: Callable[[int], np.ndarray]) -> None:
        self._fill = fill
        self._buffer: list[int] = []

    def array(self, n: int) -> np.ndarray:
        """`n` uniform words (uint64)."""
        return self._fill(n)

    def word(self) -> int:
        """One uniform word as a Python int in [0, 2^64)."""
        if not self._buffer:
            self._buffer = self._fill(self._BUFFER).tolist()
        return self._buffer.pop()


# ---------------------------------------------------------------- uniform integers
def _below_int(words: RandomWords, bound: int) -> int:
    """A uniform integer in [0, bound) for any Python int bound >= 1 (masked rejection:
    draw just enough bits for bound - 1 and retry if the value is too large; each try
    succeeds with probability > 1/2)."""
    if bound == 1:
        return 0
    bits = (bound - 1).bit_length()
    if bits <= 64:
        mask = (1 << bits) - 1
        while True:
            value = words.word() & mask
            if value < bound:
                return value
    chunks = (bits + 63) // 64
    mask = (1 << bits) - 1
    while True:
        value = 0
        for _ in range(chunks):
            value = (value << 64) | words.word()
        value &= mask
        if value < bound:
            return value


def _smear(values: np.ndarray) -> np.ndarray:
    """Set every bit below the highest set bit (uint64), giving the mask for masked rejection."""
    values = values.copy()
    for shift in (1, 2, 4, 8, 16, 32):
        values |= values >> np.uint64(shift)
    return values


def integers_below(words: RandomWords, bound: int | np.ndarray, size: int) -> np.ndarray:
    """`size` independent uniform integers in [0, bound).

    Args:
        words: The random source.
        bound: A Python int >= 1 (any size), or an int64 array of `size` bounds in [1, 2^62].

    Returns:
        An int64 array, or an object array of Python ints when the bound exceeds 2^62.
    """
    if isinstance(bound, np.ndarray):
        limits = bound.astype(np.uint64)
        masks = _smear(limits - np.uint64(1))
        out = np.empty(size, dtype=np.int64)
        pending = np.arange(size)
        while pending.size:
            draws = words.array(pending.size) & masks[pending]
            good = draws < limits[pending]
            out[pending[good]] = draws[good].astype(np.int64)
            pending = pending[~good]
        return out
    bound = int(bound)
    if bound < 1:
        raise ValueError(f"the bound must be at least 1, got {bound}")
    if bound > _SAFE:
        return np.array([_below_int(words, bound) for _ in range(size)], dtype=object)
    if size <= _SCALAR_BATCH:
        return np.array([_below_int(words, bound) for _ in range(size)], dtype=np.int64)
    mask = np.uint64((1 << (bound - 1).bit_length()) - 1)
    limit = np.uint64(bound)
    out = np.empty(size, dtype=np.int64)
    filled = 0
    while filled < size:
        need = size - filled
        draws = words.array(need + need // 8 + 4) & mask  # a few spare draws for rejections
        draws = draws[draws < limit][:need]
        out[filled:filled + draws.size] = draws.astype(np.int64)
        filled += draws.size
    return out


def bernoulli_rational(words: RandomWords, probability: Fraction, size: int) -> np.ndarray:
    """`size` independent Bernoulli(p) draws for a rational p in [0, 1] (exact).

    A uniform integer below the denominator is compared with the numerator.
    """
    p = Fraction(probability)
    if not 0 <= p <= 1:
        raise ValueError(f"a probability must be in [0, 1], got {p}")
    draws = integers_below(words, p.denominator, size)
    return np.asarray(draws < p.numerator, dtype=bool)


# ---------------------------------------------------------------- Bernoulli(exp(-gamma))
def _bernoulli_exp_unit_scalar(words: RandomWords, num: int, den: int) -> bool:
    """Bernoulli(exp(-num/den)) for 0 <= num <= den (CKS Algorithm 1, the gamma <= 1 case)."""
    k = 1
    while True:
        # A_k ~ Bernoulli(gamma / k) = Bernoulli(1/k) and Bernoulli(gamma), independent.
        if k > 1 and _below_int(words, k) != 0:
            break
        if _below_int(words, den) >= num:
            break
        k += 1
    return k % 2 == 1


def _bernoulli_exp_scalar(words: RandomWords, num: int, den: int) -> bool:
    """Bernoulli(exp(-num/den)) for any num >= 0, den >= 1 (Python ints of any size)."""
    whole, rest = divmod(num, den)
    count = 0
    while count < whole:  # exp(-whole) = product of `whole` independent Bernoulli(exp(-1))
        if not _bernoulli_exp_unit_scalar(words, 1, 1):
            return False
        count += 1
    return _bernoulli_exp_unit_scalar(words, rest, den)


def _bernoulli_fraction_arrays(words: RandomWords, num: np.ndarray, den: int | np.ndarray) -> np.ndarray:
    """Bernoulli(num/den) elementwise (0 <= num <= den <= 2^62)."""
    if isinstance(den, np.ndarray):
        return integers_below(words, den, num.size) < num
    return integers_below(words, den, num.size) < num


def _bernoulli_exp_unit_arrays(words: RandomWords, num: np.ndarray, den: int | np.ndarray) -> np.ndarray:
    """Bernoulli(exp(-num/den)) elementwise for 0 <= num <= den <= 2^62, in lockstep: every
    still-running draw is at the same k of CKS Algorithm 1."""
    n = num.size
    result = np.empty(n, dtype=bool)
    active = np.arange(n)
    per_element = isinstance(den, np.ndarray)
    k = 1
    while active.size:
        if k == 1:
            go_on = _bernoulli_fraction_arrays(words, num, den)
        else:
            go_on = integers_below(words, k, active.size) == 0
            sub = np.nonzero(go_on)[0]
            if sub.size:
                chosen = active[sub]
                go_on[sub] = _bernoulli_fraction_arrays(words, num[chosen], den[chosen] if per_element else den)
        result[active[~go_on]] = k % 2 == 1
        active = active[go_on]
        k += 1
    return result


def _bernoulli_exp_arrays(words: RandomWords, num: np.ndarray, den: int | np.ndarray) -> np.ndarray:
    """Bernoulli(exp(-num/den)) elementwise for int64 num >= 0 and 1 <= den <= 2^62."""
    whole, rest = np.divmod(num, den)
    result = np.ones(num.size, dtype=bool)
    remaining = whole.copy()
    alive = np.nonzero(remaining > 0)[0]
    ones = np.ones(num.size, dtype=np.int64)
    while alive.size:  # one Bernoulli(exp(-1)) per round for every draw with whole parts left
        survived = _bernoulli_exp_unit_arrays(words, ones[:alive.size], 1)
        result[alive[~survived]] = False
        alive = alive[survived]
        remaining[alive] -= 1
        alive = alive[remaining[alive] > 0]
    still = np.nonzero(result)[0]
    if still.size:
        per_element = isinstance(den, np.ndarray)
        result[still] = _bernoulli_exp_unit_arrays(words, rest[still], den[still] if per_element else den)
    return result


def bernoulli_exp(words: RandomWords, gamma: Fraction, size: int) -> np.ndarray:
    """`size` independent Bernoulli(exp(-gamma)) draws for a rational gamma >= 0 (exact)."""
    gamma = Fraction(gamma)
    if gamma < 0:
        raise ValueError(f"gamma must be >= 0, got {gamma}")
    num, den = gamma.numerator, gamma.denominator
    if size <= _SCALAR_BATCH or num >= _SAFE or den > _SAFE:
        return np.array([_bernoulli_exp_scalar(words, num, den) for _ in range(size)], dtype=bool)
    return _bernoulli_exp_arrays(words, np.full(size, num, dtype=np.int64), den)


# ---------------------------------------------------------------- discrete Laplace
def _discrete_laplace_scalar(words: RandomWords, t: int, s: int) -> int:
    """One draw of P(x) ~ exp(-|x| s / t) (CKS Algorithm 2) on Python ints."""
    while True:
        u = _below_int(words, t)
        if not _bernoulli_exp_unit_scalar(words, u, t):
            continue
        v = 0
        while _bernoulli_exp_unit_scalar(words, 1, 1):
            v += 1
        y = (u + t * v) // s  # u + t v is Geometric(1 - exp(-1/t)); y is Geometric(1 - exp(-s/t))
        negative = _below_int(words, 2) == 1
        if negative and y == 0:
            continue  # so that 0 is not counted twice
        return -y if negative else y


def _to_output(values: np.ndarray, big: dict[int, int]) -> np.ndarray:
    """An int64 array, or an object array when some finished-on-Python-ints values are huge."""
    if not big:
        return values
    if all(-_SAFE < v < _SAFE for v in big.values()):
        for index, v in big.items():
            values[index] = v
        return values
    out = values.astype(object)
    for index, v in big.items():
        out[index] = v
    return out


def _discrete_laplace_arrays(words: RandomWords, t: int, s: int, size: int) -> np.ndarray:
    """`size` draws of CKS Algorithm 2 in lockstep; t < 2^56 and s <= 2^62."""
    out = np.zeros(size, dtype=np.int64)
    big: dict[int, int] = {}
    pending = np.arange(size)
    ones = np.ones(size, dtype=np.int64)
    v_cap = _V_CAP  # t * 127 + u < 2^63 for t < 2^56
    while pending.size:
        u = integers_below(words, t, pending.size)
        keep = _bernoulli_exp_unit_arrays(words, u, t)
        retry = [pending[~keep]]
        pending, u = pending[keep], u[keep]
        v = np.zeros(pending.size, dtype=np.int64)
        alive = np.arange(pending.size)
        while alive.size:  # V = number of Bernoulli(exp(-1)) successes before the first failure
            success = _bernoulli_exp_unit_arrays(words, ones[:alive.size], 1)
            alive = alive[success]
            v[alive] += 1
        negative = integers_below(words, 2, pending.size) == 1
        y = (u + t * np.minimum(v, v_cap)) // s
        overflow = np.nonzero(v > v_cap)[0]
        for i in overflow.tolist():  # finish the far tail exactly on Python ints
            exact = (int(u[i]) + t * int(v[i])) // s
            y[i] = 1 if exact else 0  # placeholder: only its zero-ness is read below
            big[int(pending[i])] = -exact if negative[i] else exact
        accept = ~(negative & (y == 0))
        done = pending[accept]
        out[done] = np.where(negative, -y, y)[accept]
        for i in overflow.tolist():
            if not accept[i]:
                big.pop(int(pending[i]), None)
        retry.append(pending[~accept])
        pending = np.concatenate(retry)
    return _to_output(out, big)


def discrete_laplace(words: RandomWords, scale: Fraction, size: int) -> np.ndarray:
    """`size` independent draws of the discrete Laplace law on the integers,
    P(x) = (e^(1/scale) - 1) / (e^(1/scale) + 1) * exp(-|x| / scale), for a rational scale > 0.

    Returns:
        An int64 array (an object array of Python ints if some value exceeds 2^62).
    """
    scale = Fraction(scale)
    if scale <= 0:
        raise ValueError(f"the scale must be positive, got {scale}")
    t, s = scale.numerator, scale.denominator
    if size <= _SCALAR_BATCH or t >= (1 << 56) or s > _SAFE:
        values = [_discrete_laplace_scalar(words, t, s) for _ in range(size)]
        if all(-_SAFE < v < _SAFE for v in values):
            return np.array(values, dtype=np.int64)
        return np.array(values, dtype=object)
    return _discrete_laplace_arrays(words, t, s, size)


# ---------------------------------------------------------------- discrete Gaussian
def _gaussian_proposal_scale(sigma2: Fraction) -> int:
    """CKS's proposal scale t = floor(sigma) + 1 (floor(sqrt(x)) = isqrt(floor(x)))."""
    return isqrt(sigma2.numerator // sigma2.denominator) + 1


def _discrete_gaussian_scalar(words: RandomWords, sigma2: Fraction, t: int) -> int:
    """One draw of CKS Algorithm 3 on Python ints and Fractions."""
    centre = sigma2 / t
    while True:
        y = _discrete_laplace_scalar(words, t, 1)
        gamma = (abs(y) - centre) ** 2 / (2 * sigma2)
        if _bernoulli_exp_scalar(words, gamma.numerator, gamma.denominator):
            return y


def discrete_gaussian(words: RandomWords, sigma2: Fraction, size: int, t: int | None = None) -> np.ndarray:
    """`size` independent draws of the discrete Gaussian on the integers,
    P(x) proportional to exp(-x^2 / (2 sigma^2)), for a rational sigma^2 > 0.

    Args:
        words: The random source.
        sigma2: sigma^2 as a rational.
        size: How many draws.
        t: The integer scale of the discrete Laplace proposals. The output law does not depend
            on it (CKS Algorithm 3 is exact for any t >= 1); floor(sigma) + 1, the default, makes
            the acceptance rate high. Callers that choose sigma^2 = c * t for an integer c keep
            every intermediate quantity small.

    Returns:
        An int64 array (an object array of Python ints if some value exceeds 2^62).
    """
    sigma2 = Fraction(sigma2)
    if sigma2 <= 0:
        raise ValueError(f"sigma^2 must be positive, got {sigma2}")
    t = _gaussian_proposal_scale(sigma2) if t is None else int(t)
    if t < 1:
        raise ValueError(f"the proposal scale must be a positive integer, got {t}")
    # gamma = (|y| - centre)^2 / (2 sigma^2) = (|y| md - mn)^2 q / (2 p md^2)
    centre = sigma2 / t
    mn, md = centre.numerator, centre.denominator
    p, q = sigma2.numerator, sigma2.denominator
    den = 2 * p * md * md
    natural = isqrt((_SAFE - 1) // q)  # |diff| <= natural keeps diff^2 q below 2^62
    limit = min(natural, _DIFF_CAP)
    if size <= _SCALAR_BATCH or t >= (1 << 40) or den > _SAFE or mn > natural:
        values = [_discrete_gaussian_scalar(words, sigma2, t) for _ in range(size)]
        if all(-_SAFE < v < _SAFE for v in values):
            return np.array(values, dtype=np.int64)
        return np.array(values, dtype=object)
    y_max = (limit + mn) // md  # |y| <= y_max keeps |y| md - mn in [-mn, limit]
    out = np.zeros(size, dtype=np.int64)
    big: dict[int, int] = {}
    pending = np.arange(size)
    while pending.size:
        y = discrete_laplace(words, Fraction(t), pending.size)
        if y.dtype == object:  # astronomically far proposals: finish this batch exactly
            accepted = np.array([_bernoulli_exp_scalar(words, *_gamma_parts(int(v), centre, sigma2)) for v in y],
                                dtype=bool)
            for index, value in zip(pending[accepted].tolist(), y[accepted].tolist()):
                big[index] = int(value)
            pending = pending[~accepted]
            continue
        magnitude = np.abs(y)
        safe = magnitude <= y_max
        accepted = np.zeros(pending.size, dtype=bool)
        if safe.any():
            diff = magnitude[safe] * md - mn
            accepted[safe] = _bernoulli_exp_arrays(words, diff * diff * q, den)
        for i in np.nonzero(~safe)[0].tolist():  # far tail: same test on Python ints
            accepted[i] = _bernoulli_exp_scalar(words, *_gamma_parts(int(y[i]), centre, sigma2))
        out[pending[accepted]] = y[accepted]
        pending = pending[~accepted]
    return _to_output(out, big)


def _gamma_parts(y: int, centre: Fraction, sigma2: Fraction) -> tuple[int, int]:
    gamma = (abs(y) - centre) ** 2 / (2 * sigma2)
    return gamma.numerator, gamma.denominator
