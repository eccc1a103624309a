"""The one error renderer used by every stage (parser, checker, evaluator, CLI, REPL).

Shape (modelled on rustc / lark's `get_context`):

    privacy error: a private value cannot be printed
      --> prog.jst:4:7
       |
     4 | print(n)
       |       ^
       = note: the private value was made at prog.jst:3:5 by count(...)
       = hint: release it first, e.g. print(laplace(n, 0.1))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jostle.diagnostics.source import Source, Span

if TYPE_CHECKING:  # a type only: errors.py imports this module to render itself
    from jostle.diagnostics.errors import JostleError


def source_line(source: Source, number: int) -> str:
    """Line `number` (1-based) of a source as the parser counts lines: split at "\\n" only.

    (str.splitlines also splits at form feeds, \\x1c-\\x1e, \\u2028 and more, which would
    put the caret on the wrong line.) '' if out of range.
    """
    lines = source.text.split("\n")
    return lines[number - 1].rstrip("\r") if 1 <= number <= len(lines) else ""


def _caret_block(span: Span) -> list[str]:
    line_text = source_line(span.source, span.line)
    if not line_text and span.line <= 0:
        return []
    number = str(span.line)
    gutter = " " * len(number)
    if span.end_line == span.line and span.end_column > span.column:
        width = span.end_column - span.column
    else:
        width = max(1, len(line_text) - span.column + 1)
    width = max(1, min(width, max(1, len(line_text) - span.column + 1)))
    expanded = line_text.replace("\t", " ")
    return [
        f" {gutter} |",
        f" {number} | {expanded}",
        f" {gutter} | {' ' * (span.column - 1)}{'^' * width}",
    ]


def render_error(error: JostleError) -> str:
    """Render a user error as a located, explained diagnostic.

    Args:
        error: Any JostleError; its span, notes and hint are used when present.

    Returns:
        A multi-line string without a trailing newline.
    """
    lines = [f"{error.kind}: {error.message}"]
    if error.span is not None and error.span.line > 0:
        lines.append(f"  --> {error.span.location}")
        lines.extend(_caret_block(error.span))
    for note, span in error.notes:
        where = f" at {span.location}" if span is not None and span.line > 0 else ""
        lines.append(f"   = note: {note}{where}")
    if error.hint:
        lines.append(f"   = hint: {error.hint}")
    return "\n".join(lines)
