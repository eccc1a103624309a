"""Sensitivity rules: how arithmetic on private values moves their sensitivity.

Sensitivities are with respect to the privacy unit, one row added to or removed from the
private data; aggregates start them (jostle.tables) and these rules propagate them:

  * x + y, x - y     (both private)    l1 = l1(x) + l1(y), l2 = l2(x) + l2(y)
                      The triangle inequality: |(x+y) - (x'+y')| <= |x-x'| + |y-y'|.
  * x + c, x - c      (c public)        unchanged: a public shift moves both neighbours alike.
  * c * x, x * c, x / c  (c public)     scaled by |c| (or 1/|c|): |cx - cx'| = |c| |x - x'|.
  * -x                                  unchanged.
  * abs(x)                              unchanged: ||x| - |x'|| <= |x - x'| (1-Lipschitz).
  * sum(v) of a private vector          l1(v): the change of a sum is at most the L1 change.
  * [x1, ..., xk] of private scalars    l1 = sum l1(xi), l2 = sqrt(sum l2(xi)^2), since each
                                        coordinate moves by at most its own sensitivity.
  * v[i] (public i)                     l1(v): one coordinate moves at most the whole L1 change.
Magnitude guards: a private value must never overflow to inf (or lose all precision) in a way
that depends on the data, or the noisy output would reveal it (cf. Mironov, CCS 2012). Column
bounds are limited to |x| <= 1e12 (jostle.schema), public constants added to private values
to |c| <= 1e15, scale factors to [1e-12, 1e12], and any sensitivity to 1e100; then every
private value of a table under 1e10 rows stays below 1e111, far from overflow.
Everything else on private input (x * y, x / y, c / x, x ** c, sqrt, log, comparisons, ...) has
no sensitivity Jostle can bound, so it is refused with a PrivacyError.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from jostle.budget import DataNode, common_node
from jostle.errors import JostleRuntimeError, PrivacyError
from jostle.source import Span
from jostle.values import Private, PrivateMean, RowValues, type_name


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


def _is_public_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


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


def private_binary(op: str, left: Any, right: Any, span: Span) -> Private:
    """Apply `op` when at least one side is a Private, propagating sensitivity."""
    description = f"'{op}' at {span.short}"
    if isinstance(left, PrivateMean) or isinstance(right, PrivateMean):
        mean = left if isinstance(left, PrivateMean) else right
        raise refuse(
            "arithmetic on a private mean is not supported", mean, span,
            "release the mean first (laplace(m, eps) or {{ m }}), or compute with sum and count",
        )
    if op in ("+", "-"):
        if isinstance(left, Private) and isinstance(right, Private):
            _check_shapes(left.value, right.value, span, left)
            value = left.value + right.value if op == "+" else left.value - right.value
            return _guard(Private(
                value, left.l1 + right.l1, left.l2 + right.l2, span, description,
                _join(left, right), left.integer and right.integer, left.labels or right.labels,
                left.shape or right.shape,
            ), span)
        private, public = (left, right) if isinstance(left, Private) else (right, left)
        if not _is_public_numeric(public):
            raise refuse(f"cannot apply '{op}' to a private value and a {type_name(public)}", private, span,
                         "private values combine only with numbers and with each other")
        public = _as_array(public)
        _check_shapes(private.value, public, span, private)
        _guard_constant(public, private, span, factor=False)
        if isinstance(left, Private):
            value = left.value + public if op == "+" else left.value - public
        else:
            value = public + right.value if op == "+" else public - right.value
        integer = private.integer and bool(np.all(np.mod(public, 1) == 0))
        return Private(value, private.l1, private.l2, span, description, private.node, integer, private.labels,
                       private.shape)
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
        factor = abs(float(public))
        integer = private.integer and float(public).is_integer()
        return _guard(Private(
            private.value * public, private.l1 * factor, private.l2 * factor, span, description,
            private.node, integer, private.labels, private.shape,
        ), span)
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
        factor = 1.0 / abs(float(right))
        return _guard(Private(
            left.value / right, left.l1 * factor, left.l2 * factor, span, description,
            left.node, False, left.labels, left.shape,
        ), span)
    private = left if isinstance(left, Private) else right
    raise refuse(
        f"the operator '{op}' cannot be applied to a private value: its sensitivity is unknown",
        private, span,
    )


def private_negate(value: Private, span: Span) -> Private:
    return Private(-value.value, value.l1, value.l2, span, f"'-' at {span.short}", value.node,
                   value.integer, value.labels, value.shape)


def private_abs(value: Private, span: Span) -> Private:
    return Private(np.abs(value.value), value.l1, value.l2, span, f"abs at {span.short}",
                   value.node, value.integer, value.labels, value.shape)


def private_sum(value: Private, span: Span) -> Private:
    """Sum the coordinates of a private vector (sensitivity: its L1 sensitivity)."""
    return Private(value.value.sum() if value.is_vector else value.value, value.l1, value.l1,
                   span, f"sum at {span.short}", value.node, value.integer)


def private_vector(items: list[Any], span: Span) -> Private:
    """Stack private (and public) scalars into one private vector."""
    values, l1, l2sq, nodes, integer = [], 0.0, 0.0, [], True
    for item in items:
        if isinstance(item, Private):
            if item.is_vector:
                raise refuse("a list of private values may only hold scalars", item, span,
                             "index the vector first, or keep the vectors apart")
            values.append(item.value)
            l1 += item.l1
            l2sq += item.l2**2
            nodes.append(item.node)
            integer = integer and item.integer
        elif _is_public_number(item):
            values.append(item)
            integer = integer and float(item).is_integer()
        else:
            raise PrivacyError(
                f"a list with private values may only hold numbers, not a {type_name(item)}", span,
                "release the private values one by one, or build the list from numbers only",
            )
    return Private(np.asarray(values, dtype=float), l1, math.sqrt(l2sq), span,
                   f"a list at {span.short}", common_node(nodes), integer)


def private_index(value: Private, index: Any, span: Span) -> Private:
    """One coordinate of a private vector, at a public index."""
    position = int(index)
    if not -value.length <= position < value.length:
        raise JostleRuntimeError(f"index {position} is outside a vector of length {value.length}", span)
    return Private(value.value[position], value.l1, value.l2, span,
                   f"indexing at {span.short}", value.node, value.integer)
