"""Sensitivity rules: how arithmetic on private values moves their sensitivity.

Sensitivities are with respect to the privacy unit, one row added to or removed from the
private data; aggregates start them (jostle.language.tables) and these rules propagate them.

Floating point (Casacuberta, Shoemate, Vadhan & Wagaman, "Widespread Underestimation of
Sensitivity in Differentially Private Libraries and How to Fix It", CCS 2022). The rules below
are theorems about real numbers; a library that computes the value in doubles and states the
real-number sensitivity understates it: rounding moves the computed value by up to half an ulp
of its (private, unbounded) magnitude, and a sensitivity computed in doubles can itself round
down, even to 0 (issue 11, hole 3: `count(t) * 1e-12` 27 times underflowed l1 to 0.0 while
the value stayed a non-zero subnormal; `((a - 0.5) * 1e-9 + 0.0625) + 2 ** 49` moved by an ulp,
0.125, against a stated 1e-9). A relative-error bound (|fl(z) - z| <= 2^-53 |z| + 2^-1075)
would need a public bound on |z|, and a private count has none, so Jostle removes the
rounding instead of bounding it:

  1. Private values are held EXACTLY: Python ints (counts), `fractions.Fraction`s (anything
     scaled, shifted, divided or summed), and numpy arrays of int64 (small integers, e.g. a
     histogram) or of those Python objects. Public operands enter as the exact rational value
     of their double. Column sums are exact (`exact_sum`). Every rule below is then an exact
     statement about the value actually held: there is no rounding error to add.
  2. Every propagated sensitivity is computed in exact rationals from the (already upward)
     sensitivities of the operands and rounded UP to a double (`up`, `sqrt_up`): it is at least
     the real bound, never 0 unless the real bound is 0 (`up` of a positive rational is at
     least the smallest subnormal, 2^-1074), and a sensitivity that overflows becomes inf and
     is refused by `_guard`.
  3. A tracked sensitivity of exactly 0 therefore means the value is the same on every pair of
     neighbours (e.g. `count(t) * 0`); the mechanisms may release such a value as it is.
  4. Rounding happens only at a release, after noise on a public grid (jostle.privacy.grid_release),
     which is post-processing.

The rules (each exact, then rounded up):

  * x + y, x - y     (both private)    l1 = l1(x) + l1(y), l2 = l2(x) + l2(y)
                      The triangle inequality: |(x+y) - (x'+y')| <= |x-x'| + |y-y'|.
                      If x and y depend on DISJOINT parts of the data (different parts of one
                      `partition`, see `_disjoint`), one row changes at most one of them, so
                      l1 = max(l1(x), l1(y)), l2 = max(l2(x), l2(y)).
  * x + c, x - c      (c public)        unchanged: a public shift moves both neighbours alike.
  * c * x, x * c, x / c  (c public)     scaled by |c| (or 1/|c|): |cx - cx'| = |c| |x - x'|.
  * -x                                  unchanged.
  * abs(x)                              unchanged: ||x| - |x'|| <= |x - x'| (1-Lipschitz).
  * sum(v) of a private vector          l1(v): the change of a sum is at most the L1 change.
  * [x1, ..., xk] of private scalars    l1 = sum l1(xi), l2 = sqrt(sum l2(xi)^2), since each
                                        coordinate moves by at most its own sensitivity;
                                        on pairwise disjoint parts, max l1(xi) and max l2(xi).
  * v[i] (public i)                     l1(v): one coordinate moves at most the whole L1 change.

Monotonicity (`Private.direction`): +1 when adding a row can only increase every coordinate
(counts, histograms, sums of a column with lo >= 0), -1 when it can only decrease them, 0 when
unknown. It is kept by public shifts and positive factors, flipped by negation and negative
factors, kept by x + y (and x - y, y flipped) when both agree, and lost otherwise (abs, mixed
directions). report_noisy_max uses it (jostle.language.mechanisms).

Magnitude guards: column bounds are limited to |x| <= 1e12 (jostle.data.schema), public constants
added to private values to |c| <= 1e15, scale factors to [1e-12, 1e12], and any sensitivity
to 1e100. The exact values cannot overflow; the guards keep releases within the doubles.
Everything else on private input (x * y, x / y, c / x, x ** c, sqrt, log, comparisons, ...) has
no sensitivity Jostle can bound, so it is refused with a PrivacyError.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from jostle.privacy.budget import DataNode, common_node
from jostle.diagnostics.errors import JostleRuntimeError, PrivacyError
from jostle.diagnostics.source import Span
from jostle.language.values import Private, PrivateMean, RowValues, type_name

Exact = int | Fraction
"""An exact private scalar: a Python int or a Fraction."""

_INT64_SMALL = 1 << 61  # int64 arrays whose entries stay below this add and negate without overflow
_INT64_LIMIT = 1 << 62


def made_at(value: Any) -> list[tuple[str, Span | None]]:
    """A note naming where a private value was made, for error messages."""
    if isinstance(value, (Private, PrivateMean)):
        return [(f"the private value was made by {value.what}", value.origin)]
    if isinstance(value, RowValues):
        return [(f"the private column '{value.column}' is read", value.origin)]
    return []


RELEASE_HINT = "release it first, e.g. laplace(x, 0.1) or {{ x }}, and use the released value"


def refuse(message: str, value: Any, span: Span, hint: str = RELEASE_HINT) -> PrivacyError:
    """Build the PrivacyError for a private value used where it may not go."""
    return PrivacyError(message, span, hint, made_at(value))


# ---------------------------------------------------------------- rounding bounds upward
def up(bound: Exact | float) -> float:
    """The least double >= `bound` (a non-negative exact number): an upward-rounded sensitivity.

    A positive bound never becomes 0 (at least 2^-1074); one beyond the doubles becomes inf.
    """
    exact = Fraction(bound)
    if exact < 0:
        raise ValueError(f"a sensitivity bound must be >= 0, got {bound}")
    try:
        result = float(exact)  # int / int true division: correctly rounded (to nearest)
    except OverflowError:
        return math.inf
    if Fraction(result) < exact:
        result = math.nextafter(result, math.inf)
    return result


def sqrt_up(square: Exact) -> float:
    """The least double r found with r * r >= `square` exactly (an upward square root)."""
    exact = Fraction(square)
    root = math.sqrt(up(exact))
    while Fraction(root) ** 2 < exact:
        root = math.nextafter(root, math.inf)
    return root


# ---------------------------------------------------------------- exact values
def exact_number(number: Any) -> Exact:
    """The exact value of a public or held number: an int when whole, else a Fraction.

    Raises:
        ValueError: for a non-finite float (a private value is never one; callers check
            public numbers first).
    """
    if isinstance(number, (int, np.integer)) and not isinstance(number, (bool, np.bool_)):
        return int(number)
    exact = number if isinstance(number, Fraction) else Fraction(float(number))
    return exact.numerator if exact.denominator == 1 else exact


def _within(array: np.ndarray, limit: int) -> bool:
    """Whether an integer array's entries all lie strictly between -limit and limit."""
    return array.dtype.kind in "iu" and (array.size == 0 or (int(array.max()) < limit and int(array.min()) > -limit))


def exact_array(values: Any) -> np.ndarray:
    """A 1-d array holding `values` exactly: int64 when whole and small, else Python objects."""
    array = np.asarray(values)
    if array.dtype.kind == "b":
        array = array.astype(np.int64)
    if array.dtype.kind in "iu":
        return array.astype(np.int64) if _within(array, _INT64_LIMIT) else array.astype(object)
    items = [exact_number(v) for v in array.tolist()]
    if all(isinstance(v, int) and -_INT64_LIMIT < v < _INT64_LIMIT for v in items):
        return np.array(items, dtype=np.int64)
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def exact_value(value: Any) -> Any:
    """A held value (number or vector) in exact form (see the module docstring)."""
    if isinstance(value, np.ndarray):
        return exact_array(value)
    return exact_number(value)


def _small_int64(array: np.ndarray) -> bool:
    return _within(array, _INT64_SMALL)


def _largest(array: np.ndarray) -> int:
    """The largest magnitude in a non-empty integer array, as a Python int."""
    return max(abs(int(array.max())), abs(int(array.min())))


def _objects(array: np.ndarray) -> np.ndarray:
    return array if array.dtype == object else array.astype(object)


def _normal(number: Any) -> Any:
    """A Fraction with denominator 1 as an int (scalars); arrays pass through."""
    if isinstance(number, Fraction) and number.denominator == 1:
        return number.numerator
    if isinstance(number, np.integer):
        return int(number)
    return number


def exact_add(left: Any, right: Any, sign: int = 1) -> Any:
    """left + sign * right, exactly (scalars or equal-length vectors, already exact)."""
    if not isinstance(left, np.ndarray) and not isinstance(right, np.ndarray):
        return _normal(left + right if sign > 0 else left - right)

    def small(x: Any) -> bool:  # int64 arithmetic cannot overflow below 2^61 + 2^61
        return _small_int64(x) if isinstance(x, np.ndarray) else isinstance(x, int) and abs(x) < _INT64_SMALL

    if not (small(left) and small(right)):
        left = _objects(left) if isinstance(left, np.ndarray) else left
        right = _objects(right) if isinstance(right, np.ndarray) else right
    return left + right if sign > 0 else left - right


def exact_scale(value: Any, factor: Exact) -> Any:
    """value * factor, exactly (`factor` an exact public number)."""
    factor = _normal(Fraction(factor))
    if isinstance(value, np.ndarray):
        if isinstance(factor, int) and _small_int64(value) and \
                (value.size == 0 or _largest(value) * abs(factor) < _INT64_LIMIT):
            return value * factor
        return _objects(value) * factor
    return _normal(value * factor)


def exact_total(values: np.ndarray) -> Exact:
    """The exact sum of an exact vector."""
    if values.dtype.kind in "iu" and (values.size == 0 or _largest(values) * values.size < _INT64_LIMIT):
        return int(values.sum())
    return _normal(sum(_objects(values).tolist(), 0))


def exact_sum(values: Any) -> Exact:
    """The exact sum of a column of doubles (or integers), as an int or a Fraction.

    numpy's float sum rounds at every step, in an order that depends on the data, so its
    sensitivity is not the column's bound (Casacuberta et al. 2022, Sec. 3). Here each double
    x = m 2^e (m a 53-bit integer) is summed exactly: the integer mantissas of each exponent
    are added in int64 halves (26 and 27 bits, which cannot overflow below 2^36 rows) and the
    per-exponent totals are combined as Python integers. The result is the real sum, so the
    column's bound is its exact sensitivity.

    Raises:
        ValueError: for a value that is not finite (columns are finite by their schema).
    """
    array = np.asarray(values).ravel()
    if array.size == 0:
        return 0
    if array.dtype.kind in "iub":
        return exact_total(exact_array(array.astype(np.int64) if array.dtype.kind == "b" else array))
    array = array.astype(float)
    if not np.all(np.isfinite(array)):
        raise ValueError("cannot sum values that are not finite")
    mantissa, exponent = np.frexp(array)
    ints = np.ldexp(mantissa, 53).astype(np.int64)  # exact: |m 2^53| < 2^53 is a whole number
    exps = exponent.astype(np.int64) - 53
    order = np.argsort(exps, kind="stable")
    ints, exps = ints[order], exps[order]
    starts = np.flatnonzero(np.r_[True, exps[1:] != exps[:-1]])
    high = np.add.reduceat(ints >> 26, starts)           # |ints >> 26| < 2^27
    low = np.add.reduceat(ints & ((1 << 26) - 1), starts)  # in [0, 2^26)
    lowest = int(exps[starts[0]])
    total = 0
    for h, lo, e in zip(high.tolist(), low.tolist(), exps[starts].tolist()):
        total += ((h << 26) + lo) << (e - lowest)
    return _normal(Fraction(total) * Fraction(2) ** lowest)


def as_float(number: Any) -> float:
    """A held exact number as the nearest double (inf beyond the doubles): for public results."""
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf


def as_floats(values: Any) -> Any:
    """A held value (number or vector) as doubles, saturating to inf (post-processing only)."""
    if isinstance(values, np.ndarray):
        if values.dtype != object:
            return values.astype(float)
        return np.array([as_float(v) for v in values.tolist()], dtype=float)
    return as_float(values)


# ---------------------------------------------------------------- operands
def _is_public_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _is_public_numeric(value: Any) -> bool:
    if _is_public_number(value):
        return True
    if isinstance(value, np.ndarray) and value.dtype.kind in "iuf":
        return True
    if isinstance(value, tuple) and all(_is_public_number(v) for v in value):
        return True
    return False


def _as_array(value: Any) -> Any:
    return np.asarray(value, dtype=float) if isinstance(value, tuple) else value


def _join(left: Private, right: Private) -> DataNode:
    return common_node([left.node, right.node])


def _disjoint(nodes: list[DataNode]) -> bool:
    """Whether the nodes lie in pairwise different parts of ONE partition (so one row, which
    falls in at most one part, can move values computed from at most one of them).

    Sound and conservative: below their deepest common ancestor, each node's branch must be a
    different part of the same `ParallelGroup`; a node equal to that ancestor, or two nodes in
    the same branch, or branches of two different partitions (a row lies in one part of EACH
    partition) make it False. This is the invariant parallel composition already relies on:
    a value's node is the data it depends on (jostle.privacy.budget.DataNode).
    """
    if len(nodes) < 2:
        return False
    common = common_node(nodes)
    depth = len(common.path())
    branches = []
    for node in nodes:
        path = node.path()
        if len(path) <= depth:
            return False
        branches.append(path[depth])
    group = branches[0].group
    return group is not None and all(b.group is group for b in branches) and \
        len({id(b) for b in branches}) == len(branches)


def _direction(*directions: int) -> int:
    """The common monotone direction of several values (0 if they disagree or one is unknown)."""
    first = directions[0]
    return first if all(d == first for d in directions) else 0


def _check_shapes(left: Any, right: Any, span: Span, private: Private) -> None:
    """Private arithmetic is elementwise on equal shapes; broadcasting is refused.

    A private scalar broadcast against a list would move every coordinate of the result by its
    own sensitivity, so the vector's L1 sensitivity would be length x l1, not l1: rather than
    guess what the program meant, the combination is refused.
    """
    lshape = np.shape(left)
    rshape = np.shape(right)
    if lshape == rshape:
        return
    if lshape and rshape:
        raise JostleRuntimeError(
            f"cannot combine vectors of lengths {lshape[0]} and {rshape[0]}", span,
            "private vectors combine elementwise and must have the same length",
        )
    raise refuse(
        "a private value cannot be combined with a list of another shape: each coordinate would "
        "move with the scalar, so the result's sensitivity would be understated", private, span,
        "combine scalars with scalars and vectors with vectors of the same length "
        "(for example [x + 1, x + 2] builds a private vector from scalars)",
    )


MAX_CONSTANT = 1e15
MAX_FACTOR = 1e12
MAX_SENSITIVITY = 1e100


def _guard(value: Private, span: Span) -> Private:
    if not value.l1 <= MAX_SENSITIVITY:
        raise refuse(f"the sensitivity {value.l1:g} has grown too large to release meaningfully",
                     value, span, "scale private values by moderate public factors")
    return value


def _guard_constant(constant: Any, private: Private, span: Span, factor: bool) -> None:
    magnitudes = np.abs(np.asarray(constant, dtype=float))
    if factor:
        bad = np.any((magnitudes > MAX_FACTOR) | ((magnitudes < 1 / MAX_FACTOR) & (magnitudes != 0)))
        limit = f"between {1 / MAX_FACTOR:g} and {MAX_FACTOR:g} in magnitude (or 0)"
    else:
        bad = np.any(magnitudes > MAX_CONSTANT) or not np.all(np.isfinite(magnitudes))
        limit = f"finite and at most {MAX_CONSTANT:g} in magnitude"
    if bad:
        raise refuse(f"a public number combined with a private value must be {limit}", private, span,
                     "very large or tiny constants could make the result overflow in a way that "
                     "depends on the private data")


def _held(private: Private) -> Any:
    """The private value in exact form (values made by other modules may be plain doubles,
    which are exact as held)."""
    return exact_value(private.value)


def _public_exact(public: Any) -> Any:
    """A (checked, finite) public number or vector as an exact number or array."""
    if isinstance(public, np.ndarray):
        return exact_array(public)
    return exact_number(public)


def _with(private: Private, value: Any, l1: float, l2: float, span: Span, description: str, **changes: Any) -> Private:
    """A Private derived from `private` with a new value, sensitivities and attributes."""
    fields = {"node": private.node, "integer": private.integer, "labels": private.labels,
              "shape": private.shape, "direction": private.direction}
    fields.update(changes)
    return _guard(Private(value, l1, l2, span, description, **fields), span)


# ---------------------------------------------------------------- the rules
def private_binary(op: str, left: Any, right: Any, span: Span) -> Private:
    """Apply `op` when at least one side is a Private, propagating sensitivity (exactly)."""
    description = f"'{op}' at {span.short}"
    if isinstance(left, PrivateMean) or isinstance(right, PrivateMean):
        mean = left if isinstance(left, PrivateMean) else right
        raise refuse(
            "arithmetic on a private mean is not supported", mean, span,
            "release the mean first (laplace(m, eps) or {{ m }}), or compute with sum and count",
        )
    if op in ("+", "-"):
        sign = 1 if op == "+" else -1
        if isinstance(left, Private) and isinstance(right, Private):
            _check_shapes(left.value, right.value, span, left)
            value = exact_add(_held(left), _held(right), sign)
            if _disjoint([left.node, right.node]):  # one row moves at most one operand
                l1, l2 = max(left.l1, right.l1), max(left.l2, right.l2)
            else:  # triangle inequality, in exact rationals rounded up
                l1 = up(Fraction(left.l1) + Fraction(right.l1))
                l2 = up(Fraction(left.l2) + Fraction(right.l2))
            return _with(left, value, l1, l2, span, description, node=_join(left, right),
                         integer=left.integer and right.integer, labels=left.labels or right.labels,
                         shape=left.shape or right.shape,
                         direction=_direction(left.direction, sign * right.direction))
        private, public = (left, right) if isinstance(left, Private) else (right, left)
        if not _is_public_numeric(public):
            raise refuse(f"cannot apply '{op}' to a private value and a {type_name(public)}", private, span,
                         "private values combine only with numbers and with each other")
        public = _as_array(public)
        _check_shapes(private.value, public, span, private)
        _guard_constant(public, private, span, factor=False)
        constant = _public_exact(public)
        if isinstance(left, Private):
            value, direction = exact_add(_held(private), constant, sign), private.direction
        else:  # c - x runs against x
            value, direction = exact_add(constant, _held(private), sign), sign * private.direction
        integer = private.integer and bool(np.all(np.mod(public, 1) == 0))
        return _with(private, value, private.l1, private.l2, span, description, integer=integer,
                     direction=direction)
    if op == "*":
        if isinstance(left, Private) and isinstance(right, Private):
            raise refuse(
                "cannot multiply two private values: the product's sensitivity is unbounded",
                left, span, "release each value first, then multiply the released numbers",
            )
        private, public = (left, right) if isinstance(left, Private) else (right, left)
        if not _is_public_number(public) or not math.isfinite(float(public)):
            raise refuse(
                f"a private value can only be scaled by a public finite number, not a {type_name(public)}",
                private, span,
            )
        _guard_constant(public, private, span, factor=True)
        factor = Fraction(exact_number(public))
        return _scaled(private, factor, span, description,
                       integer=private.integer and factor.denominator == 1)
    if op == "/":
        if isinstance(right, Private):
            raise refuse(
                "cannot divide by a private value: the quotient's sensitivity is unbounded",
                right, span, "release the divisor first (e.g. a noisy count), then divide",
            )
        if not _is_public_number(right) or not math.isfinite(float(right)) or float(right) == 0:
            raise refuse(
                "a private value can only be divided by a public non-zero number", left, span,
            )
        _guard_constant(right, left, span, factor=True)
        return _scaled(left, 1 / Fraction(exact_number(right)), span, description, integer=False)
    private = left if isinstance(left, Private) else right
    raise refuse(
        f"the operator '{op}' cannot be applied to a private value: its sensitivity is unknown",
        private, span,
    )


def _scaled(private: Private, factor: Fraction, span: Span, description: str, integer: bool) -> Private:
    """factor * x: |c x - c x'| = |c| |x - x'|, so l1 and l2 scale by |c| (exactly, rounded up);
    a negative factor flips the monotone direction (a zero factor makes a constant, which is
    monotone either way, so the direction is kept)."""
    size = abs(factor)
    direction = -private.direction if factor < 0 else private.direction
    return _with(private, exact_scale(_held(private), factor), up(Fraction(private.l1) * size),
                 up(Fraction(private.l2) * size), span, description, integer=integer, direction=direction)


def private_negate(value: Private, span: Span) -> Private:
    """-x: the same sensitivities, the opposite direction."""
    return _with(value, exact_scale(_held(value), Fraction(-1)), value.l1, value.l2, span,
                 f"'-' at {span.short}", direction=-value.direction)


def private_abs(value: Private, span: Span) -> Private:
    """abs(x): 1-Lipschitz, so the same sensitivities; no known direction."""
    held = _held(value)
    magnitude = np.abs(held) if isinstance(held, np.ndarray) else abs(held)
    return _with(value, magnitude, value.l1, value.l2, span, f"abs at {span.short}", direction=0)


def private_sum(value: Private, span: Span) -> Private:
    """Sum the coordinates of a private vector (sensitivity: its L1 sensitivity)."""
    held = _held(value)
    total = exact_total(held) if isinstance(held, np.ndarray) else held
    return _with(value, total, value.l1, value.l1, span, f"sum at {span.short}", labels=None, shape=None)


def private_vector(items: list[Any], span: Span) -> Private:
    """Stack private (and public) scalars into one private vector.

    l1 = sum l1(xi) and l2 = sqrt(sum l2(xi)^2), exact and rounded up; when the private items
    lie in pairwise disjoint parts of one partition (`_disjoint`), one row moves at most one
    of them, so l1 = max l1(xi) and l2 = max l2(xi), like a histogram.
    """
    values, privates, integer = [], [], True
    for item in items:
        if isinstance(item, Private):
            if item.is_vector:
                raise refuse("a list of private values may only hold scalars", item, span,
                             "index the vector first, or keep the vectors apart")
            values.append(_held(item))
            privates.append(item)
            integer = integer and item.integer
        elif _is_public_number(item):
            if not math.isfinite(float(item)):
                raise PrivacyError("a list with private values may only hold finite numbers", span,
                                   "replace inf and nan by finite numbers")
            values.append(exact_number(item))
            integer = integer and float(item).is_integer()
        else:
            raise PrivacyError(
                f"a list with private values may only hold numbers, not a {type_name(item)}", span,
                "release the private values one by one, or build the list from numbers only",
            )
    if not privates:
        raise JostleRuntimeError("a private vector needs at least one private value", span)
    nodes = [p.node for p in privates]
    if _disjoint(nodes):
        l1, l2 = max(p.l1 for p in privates), max(p.l2 for p in privates)
    else:
        l1 = up(sum((Fraction(p.l1) for p in privates), Fraction(0)))
        l2 = sqrt_up(sum((Fraction(p.l2) ** 2 for p in privates), Fraction(0)))
    vector = np.empty(len(values), dtype=object)
    vector[:] = values
    return _guard(Private(exact_array(vector), l1, l2, span, f"a list at {span.short}", common_node(nodes),
                          integer, direction=_direction(*(p.direction for p in privates))), span)


def private_index(value: Private, index: Any, span: Span) -> Private:
    """One coordinate of a private vector, at a public index."""
    position = int(index)
    if not -value.length <= position < value.length:
        raise JostleRuntimeError(f"index {position} is outside a vector of length {value.length}", span)
    return _with(value, exact_number(value.value[position]), value.l1, value.l2, span,
                 f"indexing at {span.short}", labels=None, shape=None)
