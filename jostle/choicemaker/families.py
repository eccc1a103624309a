"""Discovering learner families: every `jostle.learners.<name>.family` module with a `FAMILY`.

Families are found, never registered: adding a folder under `jostle/learners/` with a
`family.py` that defines `FAMILY` (a `Family`) is all it takes for the engine, the language,
the shipped-model builder and the conformance suite to see it. The engine imports families by
name only (`importlib`), so it never depends on them statically.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from typing import Any, Iterable, Sequence

from jostle.choicemaker.family import Family

LEARNERS_PACKAGE = "jostle.learners"


@lru_cache(maxsize=None)
def discover() -> dict[str, Family]:
    """Name -> family, for every family under `jostle.learners` (sorted by name)."""
    package = importlib.import_module(LEARNERS_PACKAGE)
    found: dict[str, Family] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        try:
            module = importlib.import_module(f"{LEARNERS_PACKAGE}.{info.name}.family")
        except ModuleNotFoundError as error:
            if error.name == f"{LEARNERS_PACKAGE}.{info.name}.family":
                continue  # a sub-package that is not a family
            raise
        family = getattr(module, "FAMILY", None)
        if not isinstance(family, Family):
            raise TypeError(f"{module.__name__}.FAMILY must be a jostle.choicemaker.family.Family")
        found[family.name] = family
    return found


def get(name: str) -> Family:
    """The family called `name` ("histograms", "trees", ...)."""
    families = discover()
    if name not in families:
        raise KeyError(f"no learner family {name!r}; known: {', '.join(families)}")
    return families[name]


def for_task(task: str) -> tuple[Family, ...]:
    """Every family whose language task is `task`, in discovery order (several families may
    serve one task: they read the same public inputs, and one ChoiceMaker may choose among
    their Options, `combined.CombinedFamily`).

    Raises:
        KeyError: No family serves `task`.
    """
    found = tuple(family for family in discover().values() if family.task == task)
    if not found:
        raise KeyError(f"no learner family for the task {task!r}")
    return found


def tasks() -> tuple[str, ...]:
    """The tasks the discovered families serve (each once, in discovery order)."""
    return tuple(dict.fromkeys(family.task for family in discover().values()))


def learner_package(module: str) -> str | None:
    """`jostle.learners.<name>` for a module inside that package, else None."""
    parts = module.split(".")
    if len(parts) < 3 or ".".join(parts[:2]) != LEARNERS_PACKAGE:
        return None
    return ".".join(parts[:3])


def family_by_module(option: Any, candidates: Iterable[Family] | None = None) -> Family | None:
    """The family (of `candidates`, default every discovered one) whose package
    (`jostle.learners.<name>`) defines `option`'s class: the nearest class in its MRO defined
    under `jostle.learners` (an Option made from a family's Option class outside its registry,
    e.g. by `dataclasses.replace` or as a subclass; the kit's shared base classes live outside
    `jostle.learners` and name no family). None when that class's package is no candidate's, or
    no class of the Option is defined under `jostle.learners`."""
    for klass in type(option).__mro__:
        package = learner_package(getattr(klass, "__module__", "") or "")
        if package is None:
            continue
        for family in discover().values() if candidates is None else candidates:
            if learner_package(family.module_name) == package:
                return family
        return None
    return None


def family_of(option: Any) -> Family | None:
    """The family of `option`: the one one of whose built-in Options it is (same name and
    fingerprint), else the one whose package defines its class (`family_by_module`); None for
    an Option written in Jostle, or one of no family's class."""
    from jostle.choicemaker.family import fingerprint

    name = getattr(option, "name", None)
    for family in discover().values():
        candidate = family.options().get(name)
        if candidate is not None and fingerprint(candidate) == fingerprint(option):
            return family
    return family_by_module(option)


def serving(members: Sequence[Family], error: str | None = None) -> Family:
    """The family a ChoiceMaker over Options of `members` (one task) trains and dispatches with:
    the one family itself, or a `combined.CombinedFamily` of several; scoring with the error
    measure `error` (default: the first member's, when every member offers it).

    Raises:
        ValueError: The members serve different tasks, or share no error measure.
        KeyError: A member lacks the error measure `error`.
    """
    members = list(dict.fromkeys(members))
    if not members:
        raise ValueError("a ChoiceMaker needs a family")
    if len(members) == 1:
        return members[0].with_error(error)
    from jostle.choicemaker.combined import CombinedFamily

    return CombinedFamily(members, error)
