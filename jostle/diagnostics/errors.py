"""The exceptions Jostle raises, one class per kind of user error, plus internal errors.

Every user error carries the span it is about, a message, and a hint saying how to fix it;
`jostle.diagnostics.render.render_error` turns any of them into the one shape used everywhere
(file:line:col, the source line, a caret, the hint). Each class has a distinct process exit
code so that scripts can tell a privacy refusal from an over-budget request or a typo.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jostle.diagnostics.source import Span


class JostleError(Exception):
    """Base of every error that is the user's to fix (as opposed to a bug in Jostle).

    Attributes:
        message: One sentence saying what is wrong.
        span: Where in the program, if known.
        hint: How to fix it, if there is something useful to say.
        notes: Further located remarks, e.g. where a private value was made.
    """

    kind = "error"
    exit_code = 1

    def __init__(
        self,
        message: str,
        span: Span | None = None,
        hint: str | None = None,
        notes: list[tuple[str, Span | None]] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.span = span
        self.hint = hint
        self.notes = list(notes or [])

    def __str__(self) -> str:
        # A span with no line (the curator's data, a call from Python) has no place to show.
        where = f"{self.span.location}: " if self.span is not None and self.span.line > 0 else ""
        text = f"{where}{self.message}"
        if self.hint:
            text += f" (hint: {self.hint})"
        return text

    def render(self) -> str:
        """The full diagnostic with source line and caret."""
        from jostle.diagnostics.render import render_error

        return render_error(self)


class UsageError(JostleError):
    """Bad command-line arguments or a bad call into the Python API."""

    kind = "usage error"
    exit_code = 2


class JostleSyntaxError(JostleError):
    """The program does not parse."""

    kind = "syntax error"
    exit_code = 3


class CheckError(JostleError):
    """The program parses but a static check refuses it (undefined name, wrong arity...)."""

    kind = "check error"
    exit_code = 4


class PrivacyError(JostleError):
    """A private value would reach somewhere only public values may go."""

    kind = "privacy error"
    exit_code = 5


class BudgetExceeded(JostleError):
    """A release would spend more than the budget that remains. Nothing was released.

    Attributes:
        requested: The epsilon (or delta) the release asked for.
        remaining: What the tightest enclosing budget had left for it.
        difference: requested - remaining (> 0).
        quantity: "epsilon" or "delta".
    """

    kind = "budget exceeded"
    exit_code = 6

    def __init__(
        self,
        message: str,
        span: Span | None = None,
        hint: str | None = None,
        notes: list[tuple[str, Span | None]] | None = None,
        requested: Fraction | None = None,
        remaining: Fraction | None = None,
        quantity: str = "epsilon",
    ) -> None:
        super().__init__(message, span, hint, notes)
        self.requested = requested
        self.remaining = remaining
        self.quantity = quantity
        self.difference = (
            requested - remaining if requested is not None and remaining is not None else None
        )


class JostleRuntimeError(JostleError):
    """A run-time error in the program: a type error, a bad argument, division by zero."""

    kind = "runtime error"
    exit_code = 7


class MeasureMismatch(JostleRuntimeError):
    """A budget in one privacy measure where the session accounts in another (pure or
    approximate DP against zCDP): refused before anything is charged (jostle.privacy.accounting)."""


class DataError(JostleError):
    """A table or schema is unusable: unreadable file, missing column, value outside its domain."""

    kind = "data error"
    exit_code = 8


class JostleWarning(UserWarning):
    """Something in the program is probably not what its author meant, but is not an error.

    A warning never depends on the private rows: only on the program text and public values
    (schemas, literals, released numbers), so showing it reveals nothing. It renders in the
    same shape as an error, with `warning:` in front (`render`).

    Attributes: as JostleError's (message, span, hint, notes).
    """

    kind = "warning"

    def __init__(
        self,
        message: str,
        span: Span | None = None,
        hint: str | None = None,
        notes: list[tuple[str, Span | None]] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.span = span
        self.hint = hint
        self.notes = list(notes or [])

    __str__ = JostleError.__str__
    render = JostleError.render


class InternalError(Exception):
    """A bug in Jostle itself, not in the user's program."""

    exit_code = 70
