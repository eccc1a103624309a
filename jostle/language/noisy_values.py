"""Released values keep the public law of their noise, and propagate it where it is exact.

A release (jostle.language.mechanisms) returns its value with `attach(value, law)`; `law_of(value)`
gives it back for `accuracy` and `interval` (jostle.language.builtins_accuracy) and for Python.

Carriers. Python ints and floats cannot be remembered by identity (small ints and many floats are
shared objects), so a released scalar is a `NoisyInt` / `NoisyFloat`: a subclass of int / float
that IS the number (printing, formatting, equality, hashing, JSON, NumPy all see the number) with
the noise attached; any arithmetic on it returns a plain int / float, so a law is never carried
by accident, and `to_python` strips it (jostle.language.detach). A released vector (an ndarray) and
any other released object keep theirs in an identity table (weak references, as VectorLabels
does for cell labels), per cell.

What is carried (`Noise`): sum_i c_i N_i over independent noises N_i, each named by (release,
cell), so the same release used twice is ONE term (x + x has coefficient 2, x - x none) and
different releases (different charges, or different cells of one vector) are independent.
Propagation (`binary`, `unary`, `cell`, called by jostle.language.operators and the evaluator's
indexing): x + y, x - y, c * x, x * c, x / c, -x, +x for public c, per cell for vectors; indexing
a released vector keeps the cell's noise. Anything else (x * y, x / y, c / x, powers, //, %)
gives a `NoLaw` with the reason; functions and comparisons give values without a carrier, and
`accuracy` explains that too. A mean (`EstimatedError`) does not propagate.

Privacy: a carrier holds only public facts (the law: grid, scale, sensitivity, budget; release
counters; coefficients the program wrote); nothing is read from private rows.
"""

from __future__ import annotations

import itertools
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from jostle.privacy.error_bounds import CombinedLaw, NoiseLaw, half_width_of_sum

_releases = itertools.count(1)


@dataclass(frozen=True)
class Noise:
    """sum of coefficient * noise over independent noises, each keyed by (release, cell)."""

    terms: tuple[tuple[tuple[int, int], float, NoiseLaw], ...]

    @classmethod
    def fresh(cls, law: NoiseLaw, release: int, cell: int = 0) -> Noise:
        """One release's (cell's) own noise."""
        return cls((((release, cell), 1.0, law),))

    def law(self) -> NoiseLaw | CombinedLaw:
        """The law of the noise: the release's own law, or a CombinedLaw of the terms."""
        if len(self.terms) == 1 and self.terms[0][1] == 1.0:
            return self.terms[0][2]
        return CombinedLaw(tuple((c, law) for _, c, law in self.terms))

    def scaled(self, factor: float) -> Noise:
        """factor * noise."""
        return Noise(tuple((key, c * factor, law) for key, c, law in self.terms if c * factor != 0))

    def plus(self, other: Noise, sign: float = 1.0) -> Noise:
        """self + sign * other; the same (release, cell) adds its coefficients."""
        merged: dict[tuple[int, int], list] = {key: [c, law] for key, c, law in self.terms}
        for key, c, law in other.terms:
            if key in merged:
                merged[key][0] += sign * c
            else:
                merged[key] = [sign * c, law]
        return Noise(tuple((key, c, law) for key, (c, law) in merged.items() if c != 0))


@dataclass(frozen=True)
class NoLaw:
    """A value computed from releases whose error cannot be stated exactly, and why."""

    reason: str


@dataclass(frozen=True)
class EstimatedError:
    """An error that depends on the data, estimated from released (public) values only.

    Attributes:
        source: What the estimate is and what it comes from (shown to the user).
        terms: The linearised noise (coefficient, law) when the estimate is a delta-method one.
        estimate: Or an object stating it (cmerr's ErrorEstimate: value, low, high, confidence),
            or anything with `half_width(confidence)`.
        clipping: A note when the value was clamped to declared bounds.
    """

    source: str
    terms: tuple[tuple[float, NoiseLaw], ...] = ()
    estimate: Any = None
    clipping: str | None = None

    def half_width(self, confidence: float) -> float:
        """The estimated half-width at `confidence`."""
        if self.terms:
            return half_width_of_sum(self.terms, confidence)
        if hasattr(self.estimate, "half_width"):
            return float(self.estimate.half_width(confidence))
        stated = getattr(self.estimate, "confidence", None)
        if stated is not None and abs(float(stated) - confidence) < 1e-12:
            return float(self.estimate.value)
        raise ValueError(f"this estimate is stated at confidence {stated} only")


Carrier = Noise | NoLaw | EstimatedError


class _Noisy:
    """What NoisyInt and NoisyFloat share: they print, copy and pickle as their plain number."""

    carrier: Carrier
    _plain: type

    def __repr__(self) -> str:
        return self._plain.__repr__(self)

    __str__ = __repr__

    def __reduce__(self) -> tuple:
        return (self._plain, (self._plain(self),))


class NoisyInt(_Noisy, int):
    """A released whole number: the number itself, with its noise attached (`carrier`)."""

    _plain = int


class NoisyFloat(_Noisy, float):
    """A released real number: the number itself, with its noise attached (`carrier`)."""

    _plain = float


class _IdentityTable:
    """Carriers of objects (released vectors, models) by identity, forgotten with the object."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[weakref.ref, Any]] = {}

    def get(self, value: Any) -> Any:
        entry = self._by_id.get(id(value))
        return entry[1] if entry is not None and entry[0]() is value else None

    def put(self, value: Any, carrier: Any) -> None:
        key = id(value)

        def forget(ref: weakref.ref, key: int = key) -> None:
            entry = self._by_id.get(key)
            if entry is not None and entry[0] is ref:
                del self._by_id[key]

        try:
            self._by_id[key] = (weakref.ref(value, forget), carrier)
        except TypeError:  # not weakly referable: not carried
            pass


_objects = _IdentityTable()


@dataclass(frozen=True)
class _VectorCarrier:
    """Per-cell carriers of a vector: one fresh law for every cell of one release, or a tuple."""

    length: int
    law: NoiseLaw | None = None
    release: int = 0
    cells: tuple | None = None
    whole: Any = None  # one carrier for every cell (NoLaw / EstimatedError)

    def cell(self, index: int) -> Carrier | None:
        if self.cells is not None:
            return self.cells[index]
        if self.law is not None:
            return Noise.fresh(self.law, self.release, index % self.length)
        return self.whole

    def all(self) -> tuple:
        return tuple(self.cell(i) for i in range(self.length))


def _as_carrier(law: Any, release: int | None = None, cell: int = 0) -> Any:
    if isinstance(law, NoiseLaw):
        return Noise.fresh(law, next(_releases) if release is None else release, cell)
    return law


def attach(value: Any, law: NoiseLaw | Carrier | None) -> Any:
    """`value` carrying `law` (a release's NoiseLaw: a fresh independent noise per cell; or a carrier).

    Scalars come back as NoisyInt / NoisyFloat (booleans and None are left alone), a vector is
    remembered by identity, another object (a model) by identity when it can be.
    """
    if law is None or value is None or isinstance(value, (bool, np.bool_)):
        return value
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            return value
        if isinstance(law, NoiseLaw):
            carrier = _VectorCarrier(len(value), law, next(_releases))
        elif isinstance(law, _VectorCarrier):
            carrier = law
        else:
            carrier = _VectorCarrier(len(value), whole=law)
        _objects.put(value, carrier)
        return value
    carrier = _as_carrier(law)
    if isinstance(value, (int, np.integer)):
        number = NoisyInt(int(value))
    elif isinstance(value, (float, np.floating)):
        number = NoisyFloat(float(value))
    else:
        _objects.put(value, carrier)
        return value
    number.carrier = carrier
    return number


def carrier_of(value: Any) -> Any:
    """The carrier of a scalar (Noise, NoLaw, EstimatedError), a vector's _VectorCarrier, or None."""
    if isinstance(value, (NoisyInt, NoisyFloat)):
        return getattr(value, "carrier", None)
    if isinstance(value, (int, float, bool, str, type(None), np.generic, tuple)):
        return None
    return _objects.get(value)


def _public(carrier: Any) -> Any:
    if isinstance(carrier, Noise):
        return carrier.law()
    return carrier


def law_of(value: Any) -> Any:
    """The public law of a value's noise: NoiseLaw | CombinedLaw | EstimatedError | NoLaw | None
    for a scalar (None: it carries nothing), a tuple of those per cell for a released vector."""
    carrier = carrier_of(value)
    if isinstance(carrier, _VectorCarrier):
        return tuple(_public(c) for c in carrier.all())
    return _public(carrier)


def plain(value: Any) -> Any:
    """A released scalar as a plain int / float (anything else unchanged)."""
    if isinstance(value, NoisyInt):
        return int(value)
    if isinstance(value, NoisyFloat):
        return float(value)
    return value


# ---------------------------------------------------------------- propagation
def _constant(value: Any) -> bool:
    """A public number with no carrier (a constant the program wrote or computed publicly)."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)) \
        and carrier_of(value) is None


def _cells(value: Any, length: int) -> list:
    carrier = carrier_of(value)
    if isinstance(carrier, _VectorCarrier):
        return list(carrier.all())
    if isinstance(value, np.ndarray):
        return [None] * length
    return [carrier] * length


_LOST = {
    "*": "the product of two released values",
    "/": "a quotient by a released value",
    "//": "a floor division involving a released value",
    "%": "a remainder involving a released value",
    "**": "a power involving a released value",
}


def _combine(op: str, left: Any, right: Any, a_const: Any, b_const: Any) -> Any:
    """The carrier of `left op right` for scalar carriers (None: public), or a NoLaw."""
    if left is None and right is None:
        return None
    for side in (left, right):
        if isinstance(side, NoLaw):
            return side
        if isinstance(side, EstimatedError):
            return NoLaw("it was computed from a value whose error is itself an estimate (a mean), "
                         "which does not propagate")
    if op in ("+", "-"):
        zero = Noise(())
        return (left or zero).plus(right or zero, 1.0 if op == "+" else -1.0)
    if op == "*" and (left is None) != (right is None):
        factor = a_const if left is None else b_const
        if factor is not None:
            return (left or right).scaled(float(factor))
    if op == "/" and right is None and left is not None and b_const is not None and b_const != 0:
        return left.scaled(1.0 / float(b_const))
    reason = _LOST.get(op, f"the operator '{op}'")
    return NoLaw(f"it is {reason}: its error has no exact closed form (only sums and differences of "
                 "independent releases and products by public constants propagate)")


def _coefficient(value: Any, index: int | None) -> Any:
    if isinstance(value, np.ndarray):
        item = value[index] if index is not None and value.ndim == 1 and len(value) > index else None
        return None if item is None else float(item)
    if _constant(value):
        return float(value)
    return None


def binary(op: str, left: Any, right: Any, result: Any) -> Any:
    """`result` = left op right (public values), carrying the propagated noise when an operand carries one."""
    left_carrier, right_carrier = carrier_of(left), carrier_of(right)
    if left_carrier is None and right_carrier is None:
        if isinstance(left, tuple) or isinstance(right, tuple):
            carried = [carrier_of(v) for side in (left, right) if isinstance(side, tuple) for v in side]
            if any(c is not None for c in carried):
                return attach(result, NoLaw("it was computed from a list of released values, "
                                            "whose errors are not propagated"))
        return result
    if isinstance(result, np.ndarray) and result.ndim == 1:
        n = len(result)
        lefts, rights = _cells(left, n), _cells(right, n)
        cells = tuple(_combine(op, lefts[i], rights[i], _coefficient(left, i), _coefficient(right, i))
                      for i in range(n))
        return attach(result, _VectorCarrier(n, cells=cells))
    if isinstance(left_carrier, _VectorCarrier) or isinstance(right_carrier, _VectorCarrier):
        return result
    carrier = _combine(op, left_carrier, right_carrier, _coefficient(left, None), _coefficient(right, None))
    return attach(result, carrier) if carrier is not None else result


def unary(op: str, value: Any, result: Any) -> Any:
    """`-x` / `+x` on a public value: the noise is negated / kept."""
    carrier = carrier_of(value)
    if carrier is None or result is value:
        return result
    if isinstance(carrier, _VectorCarrier):
        cells = tuple(c.scaled(-1.0) if isinstance(c, Noise) and op == "-" else c for c in carrier.all())
        return attach(result, _VectorCarrier(carrier.length, cells=cells))
    if isinstance(carrier, Noise):
        return attach(result, carrier.scaled(-1.0) if op == "-" else carrier)
    return attach(result, carrier)


def cell(vector: Any, index: int, item: Any) -> Any:
    """`vector[index]` = item, carrying the cell's noise when the vector carries one."""
    carrier = carrier_of(vector) if isinstance(vector, np.ndarray) else None
    if not isinstance(carrier, _VectorCarrier):
        return item
    return attach(item, carrier.cell(int(index) % carrier.length))


def lost(value: Any, reason: str) -> Any:
    """`value` (computed by a function from released values) marked as carrying no law, with why."""
    if isinstance(value, (NoisyInt, NoisyFloat)) or carrier_of(value) is not None:
        return value
    return attach(value, NoLaw(reason))
