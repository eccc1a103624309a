"""Source texts and spans: where in which file a piece of a program sits.

Every AST node, every private value and every ledger entry carries a `Span`, so that
any error, at any stage, can be shown with file:line:col, the source line and a caret.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, eq=False)
class Source:
    """A program text and the name it is shown under (a path, `<string>` or `<repl>`)."""

    name: str
    text: str = field(repr=False)

    def line(self, number: int) -> str:
        """Return line `number` (1-based) without its newline, or '' if out of range."""
        lines = self.text.split("\n")  # lines end at \n only, as lark counts them (not at \f or \u2028)
        if 1 <= number <= len(lines):
            return lines[number - 1].rstrip("\r")
        return ""


@dataclass(frozen=True)
class Span:
    """A region of a source: 1-based line and column of its start and end."""

    source: Source
    line: int
    column: int
    end_line: int
    end_column: int

    def __repr__(self) -> str:
        return f"Span({self.location})"

    @property
    def location(self) -> str:
        """`file:line:col`, the form every error message uses."""
        return f"{self.source.name}:{self.line}:{self.column}"

    @property
    def short(self) -> str:
        """`line:col`, for naming a place inside the file being shown."""
        return f"{self.line}:{self.column}"

    def text(self) -> str:
        """The source text the span covers (first line only for multi-line spans)."""
        line = self.source.line(self.line)
        end = self.end_column - 1 if self.end_line == self.line else len(line)
        return line[self.column - 1 : max(end, self.column)]


BUILTIN_SOURCE = Source("<builtin>", "")
BUILTIN_SPAN = Span(BUILTIN_SOURCE, 0, 0, 0, 0)
