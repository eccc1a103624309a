"""Privacy units: what one individual's data is, and so which datasets are neighbours.

  * `row` (the default): neighbours differ by one row added or removed;
  * `entity(key)`: neighbours differ by every row sharing one value of `key`, added or removed
    together (Tumult's `AddRowsWithID`): one person with all their visits, one train with all
    its cars. Row-level aggregates need a bound on the rows per entity first
    (`bound_per_key(k)`, which makes the table's stability k);
  * `replace_one`: neighbours have the same number of rows and differ in one row's values. The
    row count is public. Only local randomisation (`randomized_response` of a whole column)
    needs it; every other release on such a table is computed as for `row` with stability 2,
    because a replaced row is one row removed and one added (group privacy of size 2,
    jostle.privacy.conversions.group_privacy).

A unit is a public fact the curator states when binding the data; it is never read from the
rows. It is shown in errors and stored with every charge in the durable ledger, but a dataset's
identity there does not include it (binding the same data under a second unit cannot open a
second lifetime budget). `convert_charge` says how a charge made under one unit counts in a
dataset kept under another, or why it cannot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from jostle.privacy.conversions import group_privacy
from jostle.privacy.measures import AnyBudget

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
UNIT_FORMS = 'row, entity:KEY (or entity(KEY)), replace_one'


@dataclass(frozen=True)
class PrivacyUnit:
    """A privacy unit: `kind` is "row", "entity" or "replace_one"; `key` names the entity
    column for "entity" (None otherwise)."""

    kind: str
    key: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("row", "entity", "replace_one"):
            raise ValueError(f"unknown privacy unit {self.kind!r}; the units are {UNIT_FORMS}")
        if (self.kind == "entity") != (self.key is not None):
            raise ValueError("an entity unit names its key column, and only it does")

    @property
    def is_row(self) -> bool:
        return self.kind == "row"

    @property
    def is_entity(self) -> bool:
        return self.kind == "entity"

    @property
    def is_replace_one(self) -> bool:
        return self.kind == "replace_one"

    @property
    def text(self) -> str:
        """The unit as stored in the ledger and accepted by `parse_unit`: row, entity:KEY, replace_one."""
        return f"entity:{self.key}" if self.kind == "entity" else self.kind

    def __str__(self) -> str:
        return f"entity({self.key})" if self.kind == "entity" else self.kind

    def describe(self) -> str:
        """What a neighbour is under this unit, in words."""
        if self.kind == "row":
            return "one row added or removed"
        if self.kind == "entity":
            return f"every row with one value of '{self.key}' added or removed together"
        return "one row replaced by another (the number of rows is public)"


ROW = PrivacyUnit("row")
REPLACE_ONE = PrivacyUnit("replace_one")


def entity(key: str) -> PrivacyUnit:
    """The unit of every row sharing a value of `key`."""
    return PrivacyUnit("entity", key)


def parse_unit(value: Any) -> PrivacyUnit:
    """Read a unit as a person writes it: "row", "replace_one", "entity:KEY", "entity(KEY)",
    {"entity": "KEY"} (a schema file), or a PrivacyUnit.

    Raises:
        ValueError: Not one of those forms (the message lists them).
    """
    if isinstance(value, PrivacyUnit):
        return value
    if isinstance(value, dict):
        if set(value) == {"entity"} and isinstance(value["entity"], str) and _KEY.match(value["entity"]):
            return entity(value["entity"])
        raise ValueError(f"a privacy unit written as an object must be {{\"entity\": \"KEY\"}}, got {value!r}")
    if not isinstance(value, str):
        raise ValueError(f"a privacy unit must be text ({UNIT_FORMS}), got {value!r}")
    text = value.strip()
    if text in ("row", "replace_one"):
        return PrivacyUnit(text)
    match = re.fullmatch(r"entity\s*(?::\s*|\(\s*)([A-Za-z_][A-Za-z0-9_]*)\s*\)?", text)
    if match and (text.endswith(")") == ("(" in text)):
        return entity(match.group(1))
    raise ValueError(f"unknown privacy unit {value!r}; write one of: {UNIT_FORMS}")


class UnitMismatch(ValueError):
    """A charge made under one unit cannot be counted in a dataset kept under another."""


def convert_charge(budget: AnyBudget, made_under: PrivacyUnit, kept_under: PrivacyUnit) -> AnyBudget:
    """What a charge made under `made_under` costs a dataset whose ledger is kept under `kept_under`.

    * the same unit: the charge as it is;
    * made under `row`, kept under `replace_one`: a replacement is a removal then an addition,
      so the guarantee for replace-one neighbours is group privacy of size 2
      (jostle.privacy.conversions.group_privacy: 2 epsilon, or 4 rho);
    * every other pair is refused: a replace-one guarantee says nothing about adding or removing
      a row (a release may reveal the row count); a row-level guarantee says nothing about an
      entity with many rows unless its rows are bounded (which is done on the table, making the
      charge an entity one); two entity keys describe different individuals.

    Raises:
        UnitMismatch: With the reason, when no conversion is sound.
    """
    if made_under == kept_under:
        return budget
    if made_under.is_row and kept_under.is_replace_one:
        return group_privacy(budget, 2)
    if made_under.is_replace_one:
        reason = ("a release private under replace_one may reveal the number of rows, so it has no "
                  f"guarantee for {kept_under.describe()}")
    elif kept_under.is_entity:
        reason = (f"a release private for one row says nothing about {kept_under.describe()}; bind "
                  f"the table under {kept_under} and bound its rows per key with bound_per_key(k)")
    else:
        reason = f"a release private for {made_under.describe()} is not one for {kept_under.describe()}"
    raise UnitMismatch(f"a charge under {made_under} cannot count in a dataset kept under {kept_under}: {reason}")
