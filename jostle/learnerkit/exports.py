"""Lazy exports of a family package: names imported from its modules on first use (PEP 562).

A program that never learns a tree should not pay for scikit-learn at start-up, so a family's
`__init__` lists its public names by module and imports a module only when a name is read.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping


def lazy_exports(package: str, exports: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: `exports` maps a name to the module (relative to
    `package`) defining it; a name read once is kept in `namespace` (the package's globals)."""

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{exports[name]}"), name)
        namespace[name] = value
        return value

    return __getattr__
