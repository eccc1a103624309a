"""The error-bound built-ins: `accuracy(x, c)` and `interval(x, c)` on released values.

`accuracy(x, 0.95)` is the half-width h of x's noise at confidence 0.95: the smallest h with
P(|noise| <= h) >= 0.95 (jostle.privacy.error_bounds), a number for a released number and a
vector (one per cell) for a released vector. `interval(x, 0.95)` is `[x - h, x + h]`: a list of
two numbers, or for a vector a list of two vectors (the lows and the highs, cell by cell).

ONE built-in `accuracy` serves two uses: with three arguments, `accuracy(model, t, "class")`,
it is the classifiers' accuracy on a public table (jostle.learnerkit.language, unchanged);
with two, `accuracy(x, c)`, it is the half-width here (`value_accuracy`).

Privacy: h is computed from the release's noise law only (its grid, scale, sensitivity and budget:
public) and the coefficients the program wrote; the interval adds the released value (public).
Nothing is charged, and nothing is read from private rows, so the results are identical on
neighbouring datasets. A mean's half-width is an ESTIMATE (computed from its released sum and
count, public): the message and the docs say so. Clipping (values clamped to declared bounds)
biases a release in a way the interval does not include: `interval` says so in a warning.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from jostle.diagnostics.errors import JostleRuntimeError, JostleWarning
from jostle.diagnostics.source import Span
from jostle.language.builtin_registry import builtin
from jostle.language.noisy_values import EstimatedError, NoLaw, carrier_of, law_of
from jostle.language.sensitivity import refuse
from jostle.language.values import Private, PrivateMean, is_private, type_name

_NO_LAW_HINT = ("accuracy and interval apply to a value a release returned (laplace, geometric, gaussian, "
                "{{ }}, sulq), to its cells, and to sums, differences and public multiples of releases")


def _confidence(confidence: Any, span: Span, name: str) -> float:
    if is_private(confidence):
        raise refuse(f"the confidence of {name} must be public", confidence, span, "write a number such as 0.95")
    if isinstance(confidence, (bool, np.bool_)) or not isinstance(confidence, (int, float, np.integer, np.floating)):
        raise JostleRuntimeError(f"{name}: the confidence must be a number, got a {type_name(confidence)}", span,
                                 "write a number in (0, 1), e.g. 0.95")
    value = float(confidence)
    if not 0.0 < value < 1.0 or math.isnan(value):
        raise JostleRuntimeError(f"{name}: the confidence must be in (0, 1), got {confidence}", span,
                                 "write a number strictly between 0 and 1, e.g. 0.95")
    return value


def _missing(value: Any, span: Span, name: str) -> JostleRuntimeError:
    """The error for a value without a law, with the reason where one was recorded."""
    reason = law_of(value)
    if isinstance(value, (bool, np.bool_)):
        why = "it is a truth value (a comparison's answer), which has no additive noise"
    elif isinstance(reason, NoLaw):
        why = reason.reason
    elif isinstance(value, (int, float, np.integer, np.floating, np.ndarray)):
        why = ("it is not a release: a public number, or a number computed from a release by a function "
               "(round, abs, sqrt, min, ...) or an operation whose error has no exact closed form")
    else:
        why = (f"a {type_name(value)} has no additive noise (a selection such as exponential or "
               "report_noisy_max, randomized responses and models have none)")
    return JostleRuntimeError(f"{name}() cannot state this value's error: {why}", span, _NO_LAW_HINT)


def _half_width(law: Any, confidence: float, value: Any, span: Span, name: str) -> float:
    if law is None or isinstance(law, NoLaw):
        raise _missing(value, span, name)
    try:
        return float(law.half_width(confidence))
    except ValueError as error:
        raise JostleRuntimeError(f"{name}(): {error}", span) from None


def half_widths(value: Any, confidence: Any, span: Span, name: str = "accuracy") -> Any:
    """The half-width of `value`'s noise at `confidence`: a float, or an array per cell.

    Raises:
        PrivacyError: `value` or the confidence is private (release it first).
        JostleRuntimeError: a confidence outside (0, 1), or a value without a law (with why).
    """
    if isinstance(value, (Private, PrivateMean)) or is_private(value):
        raise refuse(f"{name}() states the error of a released value, and this one is private", value, span,
                     "release it first, e.g. c = laplace(x, eps), then accuracy(c, 0.95)")
    level = _confidence(confidence, span, name)
    law = law_of(value)
    if isinstance(law, tuple):
        return np.array([_half_width(cell, level, value, span, name) for cell in law], dtype=float)
    return _half_width(law, level, value, span, name)


def clipping_note(value: Any) -> str | None:
    """The clipping note of a released value (values clamped to declared bounds), or None."""
    law = law_of(value)
    laws = law if isinstance(law, tuple) else (law,)
    notes = sorted({note for item in laws if (note := getattr(item, "clipping", None))})
    return "; ".join(notes) if notes else None


def is_estimate(value: Any) -> bool:
    """Whether the value's error is an estimate (a mean, a ChoiceMaker's prediction) rather than exact."""
    law = law_of(value)
    laws = law if isinstance(law, tuple) else (law,)
    return any(isinstance(item, EstimatedError) for item in laws)


def value_accuracy(interp: Any, span: Span, value: Any, confidence: Any) -> Any:
    """`accuracy(x, c)`: the half-width (see the module docstring); an estimate warns that it is one."""
    result = half_widths(value, confidence, span, "accuracy")
    _warn_estimate(interp, value, span)
    return result


def _warn_estimate(interp: Any, value: Any, span: Span) -> None:
    if is_estimate(value) and hasattr(interp, "warn"):
        law = law_of(value)
        source = next((item.source for item in (law if isinstance(law, tuple) else (law,))
                       if isinstance(item, EstimatedError)), "an estimate")
        interp.warn(JostleWarning(f"this error is an estimate, not a bound: {source}", span))


@builtin("interval", 2, privacy="public",
         doc="interval(x, 0.95): [x - h, x + h] with h = accuracy(x, 0.95) (for a vector: [lows, highs])")
def interval(interp: Any, span: Span, value: Any, confidence: Any) -> tuple:
    """`interval(x, c)`: [low, high] around a released value (a vector: a list of two vectors)."""
    widths = half_widths(value, confidence, span, "interval")
    _warn_estimate(interp, value, span)
    note = clipping_note(value)
    if note and hasattr(interp, "warn"):
        interp.warn(JostleWarning(f"clipping: {note}", span))
    if isinstance(widths, np.ndarray):
        centre = np.asarray(value, dtype=float)
        return (centre - widths, centre + widths)
    return (float(value) - widths, float(value) + widths)


__all__ = ["clipping_note", "half_widths", "interval", "is_estimate", "value_accuracy", "carrier_of"]
