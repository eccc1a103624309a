"""Errors as Python sees them at the API boundary: short, with no internal frames.

A `JostleError` is the user's to fix, and its message, location and hint say everything the user
needs (`str(error)`: `prog.jst:2:7: message (hint: ...)`). Raised from deep inside the
interpreter, it would reach Python with a traceback of twenty internal frames above that line.
`short_errors` wraps the public methods of an API class (`jostle.Session`) so that a
`JostleError` leaving them is raised again from the boundary, with its traceback cleared and its
context dropped: Python prints the caller's line, one frame of the boundary and the error.

For developers of Jostle, `JOSTLE_TRACEBACK=1` in the environment turns the shortening off: the
error then propagates untouched, frames and all.

Privacy. The shortened exception holds no frame of the interpreter: before, the traceback's
frames reached the interpreter, its scopes, the private tables and the source of randomness
through their local variables. The one frame left, the boundary's wrapper, has dropped its
arguments (the session) before it raises. The internal frames are not kept even as text: which
internal route a run took (an engine chosen by the table's size, say) is not the author's to
see, and the error's message, location and hint are the same on neighbouring inputs by the
rules every error follows. Errors other than `JostleError` (a bug in Jostle) propagate
untouched, with their traceback, as bugs should.
"""

from __future__ import annotations

import functools
import inspect
import os
from typing import Any, Callable, TypeVar

from jostle.diagnostics.errors import JostleError

TRACEBACK_VARIABLE = "JOSTLE_TRACEBACK"
"""Set to a non-empty value other than "0" to let errors reach Python with every internal frame."""

_Class = TypeVar("_Class", bound=type)


def full_tracebacks() -> bool:
    """Whether the developer asked for full tracebacks (`JOSTLE_TRACEBACK=1`)."""
    return os.environ.get(TRACEBACK_VARIABLE, "") not in ("", "0")


def shortened(error: JostleError) -> JostleError:
    """`error` ready to be raised from the boundary: its traceback cleared and its context and
    cause dropped."""
    error.__context__ = None
    error.__cause__ = None
    return error.with_traceback(None)


def _short(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except JostleError as caught:
            if full_tracebacks():
                raise
            error = caught
        args = kwargs = ()  # type: ignore[assignment]  # this frame stays in the traceback: hold nothing
        raise shortened(error) from None

    call.__wrapped_for_short_errors__ = True  # type: ignore[attr-defined]
    return call


def short_errors(cls: _Class) -> _Class:
    """Class decorator: every public method of `cls` (and `__init__`) raises a `JostleError`
    shortened (see the module docstring). Properties and private methods are left alone."""
    for name, member in list(vars(cls).items()):
        if inspect.isfunction(member) and (name == "__init__" or not name.startswith("_")):
            if not getattr(member, "__wrapped_for_short_errors__", False):
                setattr(cls, name, _short(member))
    return cls


__all__ = ["TRACEBACK_VARIABLE", "full_tracebacks", "short_errors", "shortened"]
