"""Scopes of a running program: `Environment` (names bound to values, with a parent scope: the
built-ins, a module's globals, a function call's frame), the signals that unwind blocks
(`ReturnSignal`, `BreakSignal`, `ContinueSignal`), and the modules a program imports, each run
once in a scope of its own.

`import name` finds name.jst (the standard library first, then beside the program, on the
search path, in the working directory), checks and runs it once per session. `in_library`
tells where the standard library lies, so that releases written in it are located at the
user's call that entered it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jostle.diagnostics.errors import JostleRuntimeError
from jostle.diagnostics.source import Span
from jostle.language.values import Module


class ReturnSignal(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


class BreakSignal(Exception):
    pass


class ContinueSignal(Exception):
    pass


@dataclass(eq=False)
class Environment:
    """A scope: names bound to values, with a parent scope."""

    values: dict[str, Any] = field(default_factory=dict)
    parent: Environment | None = None

    def __repr__(self) -> str:  # names only, never the values bound to them
        return f"<scope of {len(self.values)} names>"

    def lookup(self, name: str) -> Any:
        env: Environment | None = self
        while env is not None:
            if name in env.values:
                return env.values[name]
            env = env.parent
        raise KeyError(name)

    def define(self, name: str, value: Any) -> None:
        self.values[name] = value


def import_module(interp: Any, name: str, span: Span) -> Module:
    """Load `name` into the interpreter `interp` (once: later imports get the same module).

    Raises:
        JostleRuntimeError: No module of that name, it cannot be read, or it imports itself.
        JostleSyntaxError, JostleCheckError: The module does not parse or check.
    """
    if name in interp.modules:
        return interp.modules[name]
    if name in interp.loading:
        raise JostleRuntimeError(f"module '{name}' imports itself (circular import)", span)
    path = find_module(name, span, interp.search_path)
    from jostle.language.checker import check
    from jostle.language.parser import parse

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise JostleRuntimeError(f"cannot read module {path}: {error.strerror}", span) from None
    except UnicodeDecodeError as error:
        raise JostleRuntimeError(f"cannot read module {path}: it is not UTF-8 text ({error.reason} at "
                                 f"byte {error.start})", span, "save the module as UTF-8") from None
    program = parse(text, str(path))
    check(program, interp.builtins.values.keys())
    module_env = Environment(parent=interp.builtins)
    interp.loading.add(name)
    try:
        interp.exec_block(program.body, module_env)
    finally:
        interp.loading.discard(name)
    module = Module(name, module_env)
    interp.modules[name] = module
    return module


def find_module(name: str, span: Span, search_path: list[Path]) -> Path:
    """The file of module `name`: stdlib/name.jst, else name.jst beside the program (the file
    `span` is in), on `search_path` or in the working directory."""
    from importlib import resources

    stdlib = resources.files("jostle.stdlib").joinpath(f"{name}.jst")
    if stdlib.is_file():
        return Path(str(stdlib))
    beside = Path(span.source.name).parent if span.source.name and not span.source.name.startswith("<") else None
    candidates = ([beside] if beside is not None else []) + search_path + [Path.cwd()]
    for directory in candidates:
        candidate = directory / f"{name}.jst"
        if candidate.is_file():
            return candidate
    raise JostleRuntimeError(
        f"no module named '{name}'", span,
        f"looked for {name}.jst in the standard library and in "
        + ", ".join(str(d) for d in candidates),
    )


def _library_folder() -> str:
    from importlib import resources

    return str(Path(str(resources.files("jostle.stdlib"))).resolve())


_LIBRARY = _library_folder()


def in_library(span: Span | None) -> bool:
    """Whether `span` lies in a module of the standard library (stdlib/*.jst)."""
    return span is not None and _library_file(span.source.name)


@functools.lru_cache(maxsize=512)
def _library_file(name: str) -> bool:
    if not name or name.startswith("<"):
        return False
    try:
        return str(Path(name).resolve().parent) == _LIBRARY
    except (OSError, RuntimeError, ValueError):
        return False
