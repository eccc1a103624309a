"""Built-ins never overwrite one another: the registry refuses a second built-in under a taken
name, at start-up (jostle.language.builtin_registry), and the whole language starts with every
name given once."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from jostle.choicemaker import families
from jostle.language import builtin_registry, builtins
from jostle.language.builtin_registry import BuiltinClash, BuiltinRegistry
from jostle.language.builtins import REGISTRY, start_registry
from jostle.language.choice import family_language


def register(builtin: Any, registry: dict[str, Any]) -> None:
    """The language module of the planted family below: a built-in named like a core one."""

    @builtin("print", 0, doc="a family's print, which would replace the language's")
    def _print(interp, span):
        return None


PLANTED = SimpleNamespace(name="planted", language_module=__name__, metafeatures=lambda: {})


def test_the_whole_language_starts_with_every_name_once() -> None:
    """A fresh start (the core, the ChoiceMaker's and every discovered family's built-ins) raises
    no clash and gives the registry a session starts with; each family's names are all there,
    and the parts add up: nothing was replaced."""
    fresh = start_registry()
    assert list(fresh) == list(REGISTRY)
    assert len(families.discover()) >= 3  # histograms, trees and rule lists at least
    family_names: set[str] = set()
    metafeatures: set[str] = set()
    for family in families.discover().values():
        own = BuiltinRegistry()
        family_language(family).register(own.builtin, own)
        assert own and set(own) <= set(REGISTRY), family.name
        assert not set(own) & set(builtin_registry.CORE), family.name
        family_names |= set(own)  # a built-in shared by several families (one object) counts once
        metafeatures |= set(family.metafeatures())
    assert not family_names & metafeatures
    assert len(builtin_registry.CORE) + 3 + len(family_names) + len(metafeatures) == len(REGISTRY)  # + trace, explain, predicted_error


def test_a_planted_clash_fails_at_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """A family whose built-in takes a core name, or one family registered twice, stops the start."""
    real = families.discover()
    monkeypatch.setattr(families, "discover", lambda: {**real, "planted": PLANTED})
    with pytest.raises(BuiltinClash, match=r"'print' is registered twice: by jostle\.language\.builtins and by "
                                           r"\S*test_builtin_registry"):
        start_registry()
    twice = next(iter(real.values()))
    monkeypatch.setattr(families, "discover", lambda: {**real, "again": twice})
    with pytest.raises(BuiltinClash, match="is registered twice"):
        start_registry()


def test_the_registry_refuses_another_object_under_a_taken_name() -> None:
    registry = BuiltinRegistry()
    shared = object()
    registry["predict"] = shared
    registry["predict"] = shared  # one built-in shared by two families: registered by each
    with pytest.raises(BuiltinClash, match="'predict' is registered twice"):
        registry["predict"] = object()
    registry.builtin("f", 1)(lambda interp, span, x: x)
    with pytest.raises(BuiltinClash, match="'f' is registered twice"):
        registry.builtin("f", 1)(lambda interp, span, x: x)
    assert registry["predict"] is shared and registry["f"].min_args == 1


def test_the_decorator_registers_into_the_core() -> None:
    """The language's own built-ins come through `builtin` into CORE, which the start copies."""
    assert builtins.builtin is builtin_registry.builtin
    for name in ("print", "load", "laplace", "remaining"):
        assert builtin_registry.CORE[name] is REGISTRY[name]
