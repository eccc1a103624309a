"""Clustering in the language (being written)."""

from __future__ import annotations

from typing import Any


def register(builtin: Any, registry: dict[str, Any]) -> None:
    """Add the family's built-ins (none yet)."""
