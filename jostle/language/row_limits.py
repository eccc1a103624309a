"""How large a value one row may hold inside a row function, and how the limit is kept.

A row function (`where`, `derive`) computes on whole columns, and a Python object column holds
one object per row: a text, or a whole number of unbounded size. Two operations can build from
small operands a value whose size is proportional to an operand's *value*: repeating a text
(`r.s * r.n`, `r.n * r.s`) and raising a whole number to a whole power (`r.a ** r.b`). Without a
limit, one row holding `n = 10**12` made its row ask for a terabyte: the run died with
MemoryError (exit 70) only when that row was present (issue 21, hole 2), and when the public
probe met the same combination, every table died the same internal way.

The rule, decided before anything is built:

1. **Every value a row holds stays within public limits**: a text of at most MAX_ROW_TEXT
   characters, a whole number below MAX_WHOLE (10**308, the limit on public numbers too).
   `row_apply` (jostle.language.row_apply) enforces it after every operation: a row whose result
   is beyond a limit takes the missing value (`where` drops it, `derive` gives the domain's
   default) and holds a placeholder instead (the probe's first value, itself within the
   limits), never the oversized value, so the next operation starts from bounded operands.
2. **The two growing operations are sized before they run** (`oversized_results`): from the
   operands alone, `len(text) * times` and `exponent * log10(|base|)` say how large each
   row's result would be, without building it. A row whose result would break a limit is not
   computed: it takes the missing value directly. Every other operation of a row function
   (`+ - * / // %` on numbers, `+` on texts, comparisons, `if`, the math built-ins) gives at
   most twice the size of its bounded operands, so nothing else can allocate more than a
   constant per row.
3. **On the public probe the same sizing raises** a located JostleRuntimeError with a hint,
   before the probe is computed, like every other error the probe finds: the probe is made
   of the columns' public domains, so the error is raised on every table or on none.

Why this is sound. Whether a row's result is computed, and what it holds, depends on that
row's own values and public constants only (the limits, the program); it never depends on
another row, so the outcome of each row, and therefore `where` and `derive`, stay 1-stable,
and the error the program can see depends on the public probe only. A row's memory is bounded
by a public constant (MAX_ROW_TEXT characters, or the ~128 bytes of a whole number below
10**308) for every value the program holds, so one row can change the memory a run uses by at
most that constant per value held, however large the numbers it holds: the same order as any
row does by being there at all (a row of a column takes 8 to ~60 bytes per value held, so
one row counts at most as a few hundred rows). Memory use as a function of the number of rows
is a known limit (docs/threat_model.md, Known limits); what this rule removes is the lever of
one row's *values* making a run exhaust memory.

Fixed-width text arrays (numpy's `<U` dtype, made by `a if c else b` with text constants and
`+` between them) take their width from the program's constants and the probe's dtype, never
from the rows, and every row of them occupies the whole width: a width beyond MAX_ROW_TEXT is
refused on the probe (`long_texts` reads the width), so such arrays cannot double past the
limit either.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from jostle.data.limits import MAX_ROW_TEXT

# Whole numbers are Python ints, which have no size limit: a program could build one so large
# that converting it to a float overflows, printing it fails, or computing it exhausts memory.
# Literals and arithmetic results are therefore kept below 10**308, which every float holds.
MAX_WHOLE_DIGITS = 308
MAX_WHOLE = 10**MAX_WHOLE_DIGITS

# Characters in one row's text. Public texts may be longer (`text * n` is capped at 10,000,000
# characters by jostle.language.operators.MAX_REPEAT): a public value exists once, a row's
# value once per row, and its size is what one row can add to the memory of every value the
# program holds (see the module docstring), so it is kept to a size labels and concatenated
# categories never reach. MAX_ROW_TEXT (10,000) is defined in jostle.data.limits, imported above,
# because the engines' compiler reads it too (jostle.data.engine.expressions compiles a row's
# text only where no row can exceed it).

# `a ** b` of whole numbers is sized as b * log10(|a|) digits, in floating point: a result
# sized beyond MAX_WHOLE_DIGITS + POWER_MARGIN is not computed. The margin absorbs the
# rounding of the estimate; a result within it is computed (it has at most ~310 digits) and
# the exact check of rule 1 then decides, so the outcome is exactly that of computing it.
POWER_MARGIN = 2

TEXT_HINT = (f"a text in a row function holds at most {MAX_ROW_TEXT:,} characters; bound the count "
             "first, e.g. r.s * (r.n if r.n < 100 else 100)")
WHOLE_HINT = "use floats for numbers this large"


def _whole(value: Any) -> bool:
    """A whole number as Python or numpy holds it (booleans count, as Python multiplies them)."""
    return isinstance(value, (int, np.integer))


def _repetition_length(left: Any, right: Any) -> int:
    """The length of `left * right` when it repeats a text, else 0 (nothing is built)."""
    for text, times in ((left, right), (right, left)):
        if isinstance(text, str) and _whole(times):
            return len(text) * max(int(times), 0)
    return 0


def _power_digits(base: Any, exponent: Any) -> float:
    """About how many digits `base ** exponent` has when both are whole, else 0."""
    if _whole(base) and _whole(exponent) and not isinstance(exponent, (bool, np.bool_)) \
            and exponent > 0 and abs(int(base)) > 1:
        return int(exponent) * math.log10(abs(int(base)))
    return 0.0


_REPETITION = np.frompyfunc(lambda a, b: _repetition_length(a, b) > MAX_ROW_TEXT, 2, 1)
_POWER = np.frompyfunc(lambda a, b: _power_digits(a, b) > MAX_WHOLE_DIGITS + POWER_MARGIN, 2, 1)


def oversized_results(op: tuple | None, operands: list[Any]) -> np.ndarray | None:
    """Which elements of an operation's result would break a limit, found without building them.

    Args:
        op: The operation's name as row_apply receives it (`("*",)`, `("**",)`, ...).
        operands: The operands as the operation receives them: arrays (the probe's or the
            rows') and public scalars.

    Returns:
        A boolean array over the broadcast operands, or None when the operation cannot grow
        beyond its operands (every operation but `*` and `**`, and these on fixed-width
        numbers: numpy's int64 and float64 wrap or overflow in place).
    """
    if op is None or op[0] not in ("*", "**") or len(operands) != 2:
        return None
    if not any(isinstance(o, np.ndarray) and o.dtype == object for o in operands):
        return None  # only Python objects grow: fixed-width arrays keep their size
    check = _REPETITION if op[0] == "*" else _POWER
    return np.asarray(check(*operands), dtype=bool)


def limit_message(op: tuple | None, what: str) -> tuple[str, str]:
    """The error (message, hint) for a probe on which `op` would break a limit."""
    if op is not None and op[0] == "**":
        return f"{what} gives a whole number of more than {MAX_WHOLE_DIGITS} digits", WHOLE_HINT
    return f"{what} gives a text of more than {MAX_ROW_TEXT:,} characters", TEXT_HINT


def huge_wholes(values: np.ndarray) -> np.ndarray:
    """Which entries are Python whole numbers of MAX_WHOLE or more (only object arrays hold them)."""
    if values.dtype != object:
        return np.zeros(values.shape, dtype=bool)
    return np.fromiter((isinstance(v, int) and not isinstance(v, bool) and abs(v) >= MAX_WHOLE
                        for v in values.reshape(-1).tolist()), dtype=bool, count=values.size).reshape(values.shape)


def long_texts(values: np.ndarray) -> np.ndarray:
    """Which entries are texts longer than MAX_ROW_TEXT.

    An object array holds each row's own text; a fixed-width text array (`<U`, `|S`) gives
    every entry its width, whatever the entry holds, so all of them count when the width is
    beyond the limit (the width is public: see the module docstring).
    """
    if values.dtype.kind in "US":
        width = values.dtype.itemsize // (4 if values.dtype.kind == "U" else 1)
        return np.full(values.shape, width > MAX_ROW_TEXT, dtype=bool)
    if values.dtype != object:
        return np.zeros(values.shape, dtype=bool)
    return np.fromiter((isinstance(v, str) and len(v) > MAX_ROW_TEXT for v in values.reshape(-1).tolist()),
                       dtype=bool, count=values.size).reshape(values.shape)
