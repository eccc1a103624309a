"""`help()` and `help(name)`: the built-ins by kind, one line each, and one built-in's doc, read
from the registry (jostle.language.builtin_registry) the session started with.

Everything it prints is public: the registry's names, arities, keywords and one-line docs, and,
for a function the program defined, its name, parameters and where it was written. It reads no
data and takes no private argument.
"""

from __future__ import annotations

import difflib
from typing import Any

from jostle.diagnostics.errors import JostleRuntimeError
from jostle.language.builtin_registry import builtin, refuse_private_arguments
from jostle.language.values import BoundMethod, Builtin, Closure, Module, type_name

# The privacy behaviours of jostle.language.builtins, in the order and with the titles of the
# reference's "Built-in functions" section (docs/language.md).
KIND_TITLES = {
    "public": "Public only: public arguments, a private one is refused",
    "aware": "Private-aware: take private values and carry their sensitivity",
    "row": "Row functions: also work on a table's columns inside where/derive",
    "table": "Table operations: private tables in, private tables out",
    "aggregate": "Aggregates: a private table in, a private value out (release it to see it)",
    "release": "Releases: a private value in, a noisy public value out, charged to the budget",
    "data": "Schemas and data",
    "budget": "The budget",
    "choice": "Options, learners and the ChoiceMaker",
}


def _line(value: Builtin) -> str:
    return value.doc or f"{value.name}(...)"


def _signature(value: Builtin) -> str:
    if value.max_args is None:
        count = f"{value.min_args} or more arguments"
    elif value.max_args == value.min_args:
        count = f"{value.min_args} argument{'s' * (value.min_args != 1)}"
    else:
        count = f"{value.min_args} to {value.max_args} arguments"
    keywords = f"; keywords: {', '.join(k + '=' for k in value.keywords)}" if value.keywords else ""
    return f"takes {count}{keywords}"


def _first_sentence(value: Any) -> str:
    """The first sentence of an Option's or metafeature's class docstring (public code text)."""
    import re

    doc = " ".join((type(value).__doc__ or "").split())
    head = re.split(r"(?<=\.)\s+(?=[A-Z])", doc)[0].rstrip(".")
    return head + "." if head else ""


def _is_metafeature(value: Any) -> bool:
    return "Metafeature" in type(value).__name__


def _wrapped_names(names: list[str], width: int = 96) -> list[str]:
    import textwrap

    return ["  " + line for line in textwrap.wrap(", ".join(names), width - 2)]


def overview(builtins: dict[str, Any]) -> str:
    """Every built-in, grouped by its privacy behaviour, one line each (its registry doc); the
    learners, Options and metafeatures the families register, by name."""
    groups: dict[str, list[Builtin]] = {}
    learners: list[str] = []
    metafeatures: list[str] = []
    for name, value in builtins.items():
        if isinstance(value, Builtin):
            groups.setdefault(value.privacy, []).append(value)
        elif _is_metafeature(value):
            metafeatures.append(name)
        elif hasattr(value, "privacy"):
            learners.append(name)
    lines = ["Built-in functions by kind; help(name) shows one (e.g. help(count) or help(\"count\")).",
             "The language reference (docs/language.md, \"Built-in functions\") has them all with examples."]
    for kind in [*KIND_TITLES, *sorted(set(groups) - set(KIND_TITLES))]:
        members = groups.get(kind)
        if not members:
            continue
        lines += ["", f"{KIND_TITLES.get(kind, kind)} ({kind}):"]
        lines += [f"  {_line(value)}" for value in sorted(members, key=lambda b: b.name)]
    if learners:
        lines += ["", "Learners and Options (call one on a table, or list them in a ChoiceMaker; help(name) for one):"]
        lines += _wrapped_names(learners)
    if metafeatures:
        lines += ["", "Metafeatures (for a ChoiceMaker's `informed by`):"]
        lines += _wrapped_names(metafeatures)
    lines += ["", "At the REPL also: :budget, :ledger, :help, :quit."]
    return "\n".join(lines)


def describe(builtins: dict[str, Any], target: Any, span: Any) -> str:
    """One built-in's help (`target` a built-in, a table method or its name), or a function's."""
    if isinstance(target, BoundMethod):
        target = target.builtin
    if isinstance(target, str):
        found = builtins.get(target)
        if found is not None and not isinstance(found, Builtin) and hasattr(found, "privacy"):
            kind = "a metafeature" if _is_metafeature(found) else "a learner or Option"
            return (f"{target}: {kind} (kind: {found.privacy}). {_first_sentence(found)}\n"
                    f"  more in docs/language.md, \"Options and the ChoiceMaker\"")
        if not isinstance(found, Builtin):
            names = [n for n, v in builtins.items() if isinstance(v, Builtin)]
            close = difflib.get_close_matches(target, names, n=1)
            hint = (f"did you mean {' or '.join(repr(c) for c in close)}?" if close
                    else "help() lists every built-in")
            raise JostleRuntimeError(f"there is no built-in named {target!r}", span, hint)
        target = found
    if isinstance(target, Builtin):
        title = KIND_TITLES.get(target.privacy, target.privacy).split(":")[0]
        return (f"{_line(target)}\n  kind: {title} ({target.privacy}); {_signature(target)}\n"
                f"  more in docs/language.md, \"Built-in functions\"")
    if isinstance(target, Closure):
        params = ", ".join(getattr(p, "name", str(p)) for p in target.params)
        where = target.span.location if target.span is not None else "?"
        name = "a lambda" if target.name == "lambda" else f"the function {target.name}"
        return f"{name}({params}), defined in this program at {where}"
    name = next((n for n, v in builtins.items() if v is target and not isinstance(v, Builtin)), None)
    if name is not None:
        return describe(builtins, name, span)
    if isinstance(target, Module):
        return f"the module {target.name}: see its source for its functions"
    raise JostleRuntimeError(f"help() takes a built-in or its name, got a {type_name(target)}", span,
                             "write help() for the list, or help(count) / help(\"count\") for one")


@builtin("help", 0, 1, doc="help() lists the built-ins by kind; help(name) shows one built-in's help")
def _help(interp, span, *args):
    refuse_private_arguments("help", args, span, "help() takes a built-in or its name, not a private value")
    builtins = interp.builtins.values
    text = overview(builtins) if not args else describe(builtins, args[0], span)
    interp.write(text + "\n")


__all__ = ["KIND_TITLES", "overview", "describe"]
