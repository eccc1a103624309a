"""Row functions applied to private columns: every operation a row function performs on a
column goes through `row_apply`, which decides type errors on the columns' public domains
first (a probe of every domain value), so whether a row function fails never depends on the
rows; then computes on the rows, a row's own failure becoming that row's missing value, within
the public limits of jostle.language.row_limits. And the rule that a column goes to nothing
else (`refuse_row_arguments`).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from jostle.diagnostics.source import Span
from jostle.language.row_limits import huge_wholes as _huge_wholes, long_texts as _long_texts
from jostle.language.row_limits import limit_message, oversized_results
from jostle.language.row_values import ROW_SCALARS, RowValues, RowView, _joint_probe
from jostle.language.sensitivity import refuse
from jostle.language.values import is_private, type_name


def row_operand_problem(operands: list[Any], span: Span) -> Exception | None:
    """Why these operands cannot meet in one row operation, or None when they can.

    The rule that keeps a row function inside its row: every column comes from one row scope
    (the row the function was given) and every other operand is a public scalar. A public
    list or vector would be broadcast against the rows (its length compared with the private
    row count), another table's column would carry that table's rows in. Decided on types and
    scopes only, never on the rows.
    """
    from jostle.diagnostics.errors import JostleRuntimeError, PrivacyError

    columns = [o for o in operands if isinstance(o, RowValues)]
    if len({id(c.scope) for c in columns}) > 1:
        return PrivacyError(
            "a row function can only combine the columns of the row it is given", span,
            "compute each table's columns in that table's own row function; to relate two "
            "tables, aggregate each (count, sum, histogram) and combine released values",
            [(f"the column '{c.column}' comes from the rows of {c.scope.table_name if c.scope else '?'}",
              c.origin) for c in columns[:2]])
    for operand in operands:
        if isinstance(operand, RowValues) or operand is None or isinstance(operand, ROW_SCALARS):
            continue
        if isinstance(operand, RowView):
            return PrivacyError("a row function can only combine the columns of the row it is given", span,
                                "read a column of it, e.g. r.age")
        if is_private(operand):
            return PrivacyError("a private value cannot be combined with a table's rows", span,
                                "use public thresholds; release a private value first")
        return JostleRuntimeError(
            f"a row function can combine its row's columns only with public numbers, strings and "
            f"booleans, not a {'public list' if isinstance(operand, (tuple, np.ndarray)) else type_name(operand)}",
            span, "to test membership write `r.col in [a, b]`; a list is never matched to rows by position")
    return None


def row_apply(function: Callable[..., Any], operands: list[Any], span: Span, what: str,
              op: tuple | None = None) -> RowValues:
    """Apply an elementwise `function` to columns of one row scope (and public scalars).

    The function runs on the operands' joint public probe first: if it fails there, the
    error is raised whatever the private rows hold. Only then does it run on the columns;
    there it never raises: rows on which it fails are marked missing (see RowValues).

    Sizes are kept within the public limits of jostle.language.row_limits (its docstring has
    the argument): an operation that would build an oversized value (`text * n`, `a ** b`) is
    sized first, from the operands alone; on the probe that raises, on a row that row takes
    the missing value without being computed, and a row whose result is beyond a limit after
    any operation holds the placeholder, never the oversized value.
    """
    from jostle.diagnostics.errors import JostleRuntimeError

    problem = row_operand_problem(operands, span)
    if problem is not None:
        raise problem
    columns = [o for o in operands if isinstance(o, RowValues)]
    message = f"{what} cannot be applied to column '{columns[0].column}' (type mismatch)"
    joint, sources = _joint_probe(columns)
    probes = iter(joint)
    probe_operands = [next(probes) if isinstance(o, RowValues) else o for o in operands]
    with np.errstate(all="ignore"):
        oversized = _oversized(op, probe_operands, message, span)
        if oversized is not None and oversized.any():  # sized before it is built: public values only
            raise JostleRuntimeError(*_located(limit_message(op, what), span))
        try:
            probe = np.asarray(function(*probe_operands))
        except ROW_ERRORS:
            raise JostleRuntimeError(message, span) from None
        except MemoryError:
            # The probe is made of the public domains and the program's constants, so what it
            # asks for is the same on every table (the memory left beside it is not protected,
            # as the run's memory use in general; see docs/threat_model.md, Known limits): a
            # located error, not an internal one. Rows never get here (see ROW_ERRORS).
            raise JostleRuntimeError(f"{what} needs more memory than there is, on the columns' public "
                                     "domains", span, "the operation builds values too large for any "
                                     "row; bound its operands first") from None
        if probe.shape != (len(joint[0]),):
            raise JostleRuntimeError(f"{what} does not give one value per row", span)
        if _huge_wholes(probe).any():  # the same limit as on public numbers (MAX_WHOLE)
            raise JostleRuntimeError(*_located(limit_message(("**",), what), span))
        if _long_texts(probe).any():  # a row's text: jostle.language.row_limits.MAX_ROW_TEXT
            raise JostleRuntimeError(*_located(limit_message(("*",), what), span))
        if columns[0].expr is not None:  # an engine table: build the expression, run nothing here
            return _row_expression(op, operands, columns, probe, sources, span, what, function)
        arrays = [o.array if isinstance(o, RowValues) else o for o in operands]
        missing = _missing_union(columns)
        n = len(columns[0].array)
        skipped = _oversized(op, arrays, message, span)  # each row sized from its own values
        if skipped is not None and skipped.any():
            result, failed = _apply_within_limits(function, arrays, np.broadcast_to(skipped, (n,)), probe)
        else:
            result, failed = _apply_to_rows(function, arrays, n, probe)
    huge = _huge_wholes(result) | _long_texts(result)
    if huge.any():  # the row keeps the placeholder, not the oversized value (row_limits, rule 1)
        result = _with_placeholder(result, huge, probe)
        failed = huge if failed is None else (failed | huge)
    if failed is not None:
        missing = failed if missing is None else (missing | failed)
    return RowValues(result, span, columns[0].column, probe, any(o.private for o in columns),
                     columns[0].scope, sources, missing)


def _row_expression(op: tuple | None, operands: list[Any], columns: list[RowValues], probe: np.ndarray,
                    sources: tuple, span: Span, what: str, function: Callable[..., Any]) -> RowValues:
    """The symbolic result of a row operation on an engine table's columns.

    `op` names the operation (its first item) and its public parameter (the second, if any):
    the language's operators and built-ins pass it (jostle.data.engine.expressions lists how
    each is compiled). The probe, computed as on the in-memory path, already decided errors.
    """
    from jostle.data.engine.expressions import Apply, Literal

    if op is None:  # pragma: no cover - every row operation of the language names itself
        raise AssertionError(f"{what} has no engine form")
    args = tuple(o.expr if isinstance(o, RowValues) else Literal(o) for o in operands)
    expression = Apply(op[0], args, op[1] if len(op) > 1 else None)

    def replay(view: RowView) -> RowValues:  # this operation in memory (see RowValues.replay)
        return row_apply(function, [o.replay(view) if isinstance(o, RowValues) else o for o in operands],
                         span, what, op)

    return RowValues(None, span, columns[0].column, probe, any(o.private for o in columns), columns[0].scope,
                     sources, None, expr=expression, replay=replay)


def _missing_union(columns: list[RowValues]) -> np.ndarray | None:
    masks = [c.missing for c in columns if c.missing is not None]
    if not masks:
        return None
    return np.logical_or.reduce(masks)


# What a row's computation may raise and still be that row's own business. Not MemoryError
# (or any other resource error): whether it happens depends on what the other rows already
# hold, so catching it per row would let one row change another row's outcome (found by an
# adversarial review); it propagates and ends the run, as running out of memory does anywhere.
# A row's values cannot cause one: what an operation may build is sized before it runs and no
# row holds a value beyond the public limits (jostle.language.row_limits, issue 21).
ROW_ERRORS = (TypeError, ValueError, ArithmeticError, AttributeError)


def _located(message_and_hint: tuple[str, str], span: Span) -> tuple[str, Span, str]:
    """(message, span, hint): the arguments of a located error."""
    return message_and_hint[0], span, message_and_hint[1]


def _oversized(op: tuple | None, operands: list[Any], message: str, span: Span) -> np.ndarray | None:
    """row_limits.oversized_results, with operands it cannot size refused as a type mismatch."""
    from jostle.diagnostics.errors import JostleRuntimeError

    try:
        return oversized_results(op, operands)
    except ROW_ERRORS:  # e.g. arrays that do not broadcast: the operation itself fails alike
        raise JostleRuntimeError(message, span) from None


def _placeholder(probe: np.ndarray) -> Any:
    """The value a failed row holds: the probe's first (within every limit, typed like the column)."""
    return probe.reshape(-1)[0] if probe.size else None


def _with_placeholder(result: np.ndarray, rows: np.ndarray, probe: np.ndarray) -> np.ndarray:
    """`result` with the placeholder on `rows` (a fixed-width text array becomes an object array)."""
    result = result.astype(object) if result.dtype.kind in "US" else result.copy()
    try:
        result[rows] = _placeholder(probe)
    except (TypeError, ValueError, OverflowError):
        result = result.astype(object)
        result[rows] = _placeholder(probe)
    return result


def _apply_within_limits(function: Callable[..., Any], arrays: list[Any], skipped: np.ndarray,
                         probe: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`function` on the rows not `skipped`; skipped rows hold the placeholder and are failed.

    The skipped rows are those whose result row_limits sized beyond a limit from their own
    operands: they are never computed, so no row allocates more than the limits allow.
    """
    kept = ~skipped
    subset = [a[kept] if isinstance(a, np.ndarray) and a.ndim == 1 else a for a in arrays]
    values, failed_kept = _apply_to_rows(function, subset, int(kept.sum()), probe)
    result = np.empty(len(skipped), dtype=object)
    result[kept] = list(values)
    result[skipped] = _placeholder(probe)
    try:
        dtype = np.result_type(values.dtype, probe.dtype)
        if dtype != object:
            result = result.astype(dtype)
    except (TypeError, ValueError, OverflowError):
        pass  # mixed kinds stay Python objects, as in _apply_to_rows
    failed = skipped.copy()
    if failed_kept is not None:
        failed[kept] = failed_kept
    return result, failed


def _apply_to_rows(function: Callable[..., Any], arrays: list[Any], n: int,
                   probe: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """`function` on the rows, and the mask of rows where it failed (None: no row failed).

    Vectorised first; if that raises, row by row, a failing row getting the probe's first
    value as a placeholder (so the column keeps the probe's type).
    """
    try:
        result = np.asarray(function(*arrays))
        if result.shape == (n,):
            return result, None
    except ROW_ERRORS:
        pass
    placeholder = probe.reshape(-1)[0] if probe.size else None
    values: list[Any] = []
    failed = np.zeros(n, dtype=bool)
    for i in range(n):
        try:
            value = np.asarray(function(*[a[i:i + 1] if isinstance(a, np.ndarray) else a for a in arrays]))
            values.append(value.reshape(-1)[0] if value.size == 1 else placeholder)
            failed[i] = value.size != 1
        except ROW_ERRORS:
            values.append(placeholder)
            failed[i] = True
    try:
        result = np.asarray(values, dtype=probe.dtype) if n else np.asarray(values, dtype=probe.dtype)
    except (TypeError, ValueError, OverflowError):
        result = np.empty(n, dtype=object)
        result[:] = values
    return result, failed if failed.any() else None


def refuse_row_arguments(function: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> None:
    """Columns and row views go only to user functions and the row built-ins (sqrt, abs, ...).

    A column inside a row function is one value per row; passing it to anything else (a
    release, a table operation, len, an option) would treat the rows as a list. The refusal
    depends on the argument's type only.
    """
    for arg in list(args) + list(kwargs.values()):
        if isinstance(arg, (RowValues, RowView)):
            name = getattr(function, "name", None) or type_name(function)
            raise refuse(
                f"a column inside a row function cannot be passed to {name}()", arg, span,
                "a row function computes one value per row from its columns with operators and "
                "the row functions sqrt, log, exp, abs and round; aggregate the table outside "
                "the row function instead")
