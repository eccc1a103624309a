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


def for_task(task: str) -> Family:
    """The family whose language task is `task` ("histogram", "classification", ...)."""
    for family in discover().values():
        if family.task == task:
            return family
    raise KeyError(f"no learner family for the task {task!r}")
