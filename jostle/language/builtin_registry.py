"""The registry of built-in functions: one entry per name, and a second entry under a taken
name refused at start-up.

`BuiltinRegistry` is a dict whose every assignment is checked: registering a built-in whose
name is already taken by another raises `BuiltinClash`, so no built-in (the language's own, the
ChoiceMaker's, a learner family's) ever silently replaces another. Registering the very same
object again is not a clash: a built-in shared by several families (one object, made once) may
be registered by each of them. `CORE` holds the language's own built-ins, registered by the
`builtin` decorator as the `builtins*` modules are imported; `jostle.language.builtins` then
starts the whole registry (the core, the ChoiceMaker's and every family's) from it.

Also here: the argument checks every built-in module shares (`refuse_private_arguments`,
`number_argument`, `list_argument`).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from jostle.diagnostics.errors import JostleRuntimeError
from jostle.diagnostics.source import Span
from jostle.language.sensitivity import refuse
from jostle.language.values import Builtin, is_private, type_name

VARIADIC = -1


class BuiltinClash(Exception):
    """Two built-ins were registered under one name (a defect of the code, raised at start-up)."""


def _registered_by(value: Any) -> str:
    """The module a built-in comes from, for the clash message."""
    function = getattr(value, "function", None)
    return getattr(function, "__module__", None) or type(value).__module__


class BuiltinRegistry(dict):
    """Name -> built-in, where a name is given once (see the module docstring).

    Only assignment is checked (`registry[name] = value`, which `builtin` uses); copying the
    registry with `dict(registry)` or `BuiltinRegistry(registry)` copies it as it is.
    """

    def __setitem__(self, name: str, value: Any) -> None:
        taken = self.get(name)
        if taken is not None and taken is not value:
            raise BuiltinClash(
                f"the built-in '{name}' is registered twice: by {_registered_by(taken)} and by "
                f"{_registered_by(value)}; give one of them another name")
        super().__setitem__(name, value)

    def builtin(self, name: str, min_args: int, max_args: int | None = None, privacy: str = "public",
                keywords: tuple[str, ...] = (), doc: str = "") -> Callable:
        """Register `function(interp, span, *args, **kwargs)` as the built-in `name`.

        Args:
            name: Its name in the language (a taken name raises BuiltinClash).
            min_args: The fewest positional arguments.
            max_args: The most: None for exactly `min_args`, VARIADIC for no limit.
            privacy: Its privacy behaviour (see jostle.language.builtins).
            keywords: The keyword arguments it takes.
            doc: One line of help.
        """
        if max_args is None:
            most: int | None = min_args
        elif max_args == VARIADIC:
            most = None
        else:
            most = max_args

        def register(function: Callable) -> Callable:
            self[name] = Builtin(name, function, min_args, most, keywords, privacy, doc)
            return function
        return register


# The language's own built-ins (jostle.language.builtins, builtins_tables, builtins_releases).
CORE = BuiltinRegistry()
builtin = CORE.builtin


def refuse_private_arguments(name: str, args: tuple, span: Span, where: str | None = None) -> None:
    """Refuse a built-in call if any of `args` is private (the message `where`, or a default)."""
    for arg in args:
        if is_private(arg):
            message = where or f"{name}() cannot take a private value"
            raise refuse(message, arg, span)


def number_argument(value: Any, name: str, span: Span) -> float:
    """`value` if it is a number (not a boolean), else the error naming the built-in `name`."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise JostleRuntimeError(f"{name}() needs a number, got a {type_name(value)}", span)
    return value


def as_python_list(value: Any) -> list | None:
    """A Jostle list (a tuple, a vector or a text's characters) as a Python list, else None."""
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, np.ndarray):
        return [v.item() if isinstance(v, np.generic) else v for v in value]
    if isinstance(value, str):
        return list(value)
    return None


def list_argument(value: Any, name: str, span: Span) -> list:
    """A Jostle list as a Python list (`as_python_list`), else the error naming the built-in `name`."""
    items = as_python_list(value)
    if items is None:
        raise JostleRuntimeError(f"{name}() needs a list, got a {type_name(value)}", span)
    return items


__all__ = ["BuiltinClash", "BuiltinRegistry", "CORE", "VARIADIC", "builtin", "refuse_private_arguments",
           "number_argument", "list_argument", "as_python_list"]
