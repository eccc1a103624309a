"""The SuLQ built-ins: a release of a stated noise variance, and the two calibrations side by side.

  * `sulq(x, R)`: x plus exact discrete Gaussian noise of variance R (per coordinate), on a
    public grid, charged in rho (jostle.privacy.grid_release.gaussian_variance_plan): the rho is
    what R costs for x's L2 sensitivity in its unit, computed before the charge and charged
    before the noise is drawn. For a SuLQ query (a sum of a row function with values in
    [0, 1]) the sensitivity is 1 and the cost about 1 / (2 R). Only in a zCDP program.
  * `sulq_variance(T, eps, delta)`: the 2005 calibration R = 8 T log^2(T / delta) / eps^2.
  * `zcdp_variance(T, eps, delta)`: the variance T sensitivity-1 queries need under zCDP for a
    total whose conversion meets (eps, delta) (Bun and Steinke's simple conversion; pass
    "cks" as a fourth argument for the accountant's tighter one).

Both calibrations are public arithmetic on public numbers. See docs/sulq.md for what SuLQ's
(epsilon, delta, T) promises, which is not (epsilon, delta)-DP.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from jostle.diagnostics.errors import JostleRuntimeError
from jostle.language import mechanisms
from jostle.language.builtin_registry import builtin
from jostle.language.builtin_registry import number_argument as _number
from jostle.language.builtin_registry import refuse_private_arguments as _refuse_private
from jostle.privacy import sulq


def _variance(value: Any, span: Any) -> Fraction:
    _refuse_private("sulq", (value,), span, "the variance is a public parameter: write a number")
    number = _number(value, "sulq", span)
    if not math.isfinite(float(number)) or number <= 0:
        raise JostleRuntimeError(f"the variance R must be a positive finite number, got {number}", span,
                                 "e.g. sulq(x, sulq_variance(T, 1.0, 1e-6)) or sulq(x, zcdp_variance(T, 1.0, 1e-6))")
    return Fraction(float(number)) if isinstance(number, float) else Fraction(int(number))


@builtin("sulq", 2, privacy="release",
         doc="sulq(x, R): x + discrete Gaussian noise of variance R, charged in rho (zCDP programs)")
def _sulq(interp, span, value, variance):
    amount = _variance(variance, span)
    return mechanisms.sulq(interp, value, amount, span)


def _calibration_arguments(name: str, span: Any, queries: Any, epsilon: Any, delta: Any) -> tuple[int, float, float]:
    _refuse_private(name, (queries, epsilon, delta), span, "a calibration takes public numbers")
    count = _number(queries, name, span)
    if float(count) != int(count) or count < 1:
        raise JostleRuntimeError(f"{name}: the number of queries T must be a positive whole number, got {count}",
                                 span)
    eps, dlt = float(_number(epsilon, name, span)), float(_number(delta, name, span))
    if not (math.isfinite(eps) and eps > 0):
        raise JostleRuntimeError(f"{name}: epsilon must be positive and finite, got {eps}", span)
    if not 0 < dlt < 1:
        raise JostleRuntimeError(f"{name}: delta must lie strictly between 0 and 1, got {dlt}", span,
                                 "SuLQ's delta is the probability its guarantee fails, e.g. 1e-6")
    return int(count), eps, dlt


@builtin("sulq_variance", 3, doc="sulq_variance(T, eps, delta): the 2005 calibration 8 T log^2(T/delta) / eps^2")
def _sulq_variance(interp, span, queries, epsilon, delta):
    return sulq.lecture_variance(*_calibration_arguments("sulq_variance", span, queries, epsilon, delta))


@builtin("zcdp_variance", 3, 4,
         doc='zcdp_variance(T, eps, delta[, "cks"]): the variance T queries need under zCDP for (eps, delta)')
def _zcdp_variance(interp, span, queries, epsilon, delta, conversion="bun_steinke"):
    if conversion not in sulq.CONVERSIONS:
        raise JostleRuntimeError(f"zcdp_variance: unknown conversion {conversion!r}", span,
                                 f"the conversions are {', '.join(map(repr, sulq.CONVERSIONS))}")
    return sulq.zcdp_variance(*_calibration_arguments("zcdp_variance", span, queries, epsilon, delta), conversion)
