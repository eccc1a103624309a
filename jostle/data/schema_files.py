"""The curator's schema files: data.schema.json beside a data file declares its columns' public
domains and, optionally, that its row count is public, its name in the budget ledger, its
lifetime budget and its privacy unit (`read_schema_declaration`).

Re-exported by jostle.data.schema.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jostle.diagnostics.errors import DataError

if TYPE_CHECKING:
    from jostle.data.schema import Schema


def load_schema_file(path: Path) -> Schema:
    """Read a JSON schema file: {"column": {"type": ..., ...}, ...}."""
    return read_schema_file(path)[0]


@dataclass(frozen=True)
class SchemaFile:
    """What a curator's schema file declares about the data beside it.

    Attributes:
        schema: The columns' public domains.
        public_rows: The row count is public.
        dataset: The data's name in the budget ledger, if given ("dataset": "NAME").
        lifetime: Its lifetime budget as (epsilon, delta) numbers ("lifetime": E or {"epsilon": E,
            "delta": D}) or as {"rho": R} ("lifetime": {"rho": R}), if given; checked as a budget
            by whoever binds it.
        privacy_unit: Its privacy unit as written ("privacy_unit": "row", "replace_one" or
            {"entity": "KEY"}), if given; read by jostle.privacy.units.parse_unit where it is
            bound (jostle.data knows nothing of the privacy runtime).
    """

    schema: Schema
    public_rows: bool = False
    dataset: str | None = None
    lifetime: tuple[float, float] | dict[str, float] | None = None
    privacy_unit: str | dict | None = None


# The first words of the comment `jostle schema draft` writes: a file still holding them is refused.
DRAFT_MARKER = "DRAFT written by `jostle schema draft`"

SCHEMA_FILE_KEYS = ("columns", "public_rows", "dataset", "lifetime", "privacy_unit", "comment")


def read_schema_file(path: Path) -> tuple[Schema, bool]:
    """Read a JSON schema file and whether it declares the number of rows public (see
    `read_schema_declaration` for everything it may declare)."""
    declared = read_schema_declaration(path)
    return declared.schema, declared.public_rows


def read_schema_declaration(path: Path, allow_draft: bool = False) -> SchemaFile:
    """Read a curator's JSON schema file.

    The file is the curator's: {"column": {...}, ...}, or {"columns": {...}} optionally with
    "public_rows": true (the row count is public, e.g. survey respondents; only the curator
    can declare it, see docs/threat_model.md), "dataset": "NAME" (the data's name in the
    budget ledger), "lifetime": E, {"epsilon": E, "delta": D} or {"rho": R} (its lifetime budget) and
    "privacy_unit": "row", "replace_one" or {"entity": "KEY"} (its privacy unit), and "comment": a
    text or a list of texts, ignored (the curator's notes; `jostle schema draft` writes its
    review notes there). A file whose comment still holds the DRAFT line of `jostle schema draft`
    is refused (its bounds and categories were read from the rows) unless `allow_draft` (only
    the draft command, checking what it wrote).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise DataError(f"cannot read schema file {path}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise DataError(f"cannot read schema file {path}: it is not UTF-8 text ({error.reason} at byte "
                        f"{error.start})", hint="save the schema file as UTF-8") from None
    except json.JSONDecodeError as error:
        raise DataError(f"schema file {path} is not valid JSON: {error.msg} at line {error.lineno}") from None
    if not isinstance(data, dict):
        raise DataError(f"schema file {path} must hold a JSON object of columns")
    columns = data.get("columns", data)
    if not isinstance(columns, dict):
        raise DataError(f"schema file {path}: \"columns\" must be a JSON object of columns, "
                        f"got a {type(columns).__name__}")
    public_rows = data.get("public_rows", False) if "columns" in data else False
    if not isinstance(public_rows, bool):
        raise DataError(f"schema file {path}: \"public_rows\" must be true or false, got {public_rows!r}")
    extra = sorted(set(data) - set(SCHEMA_FILE_KEYS)) if "columns" in data else []
    if extra:
        raise DataError(f"schema file {path}: unknown key {extra[0]!r} beside \"columns\"",
                        hint='the keys are ' + ", ".join(f'"{k}"' for k in SCHEMA_FILE_KEYS))
    comment = data.get("comment") if "columns" in data else None  # the curator's notes (JSON has no comments)
    if comment is not None and not isinstance(comment, str) and not (
            isinstance(comment, list) and all(isinstance(line, str) for line in comment)):
        raise DataError(f"schema file {path}: \"comment\" must be a text or a list of texts, got {comment!r}")
    lines = [comment] if isinstance(comment, str) else comment or []
    if not allow_draft and any(line.startswith(DRAFT_MARKER) for line in lines):  # read from the rows: not public until reviewed
        raise DataError(f"schema file {path} is still the draft `jostle schema draft` wrote: its bounds and "
                        "categories were read from the private rows, so they are not public",
                        hint="review every bound and category list as its \"comment\" says, then delete the "
                             "comment's DRAFT line")
    dataset = data.get("dataset") if "columns" in data else None
    if dataset is not None and (not isinstance(dataset, str) or not dataset.strip()):
        raise DataError(f"schema file {path}: \"dataset\" must be a non-empty name, got {dataset!r}")
    lifetime = _lifetime_entry(path, data.get("lifetime")) if "columns" in data else None
    unit = data.get("privacy_unit") if "columns" in data else None
    if unit is not None and not isinstance(unit, (str, dict)):
        raise DataError(f"schema file {path}: \"privacy_unit\" must be \"row\", \"replace_one\" or "
                        f"{{\"entity\": \"KEY\"}}, got {unit!r}")
    from jostle.data.schema import Schema  # schema re-exports this module's names

    try:
        return SchemaFile(Schema.of(columns), public_rows, dataset, lifetime, unit)
    except DataError as error:  # errors from a file have no place in a program: name the file
        error.message = f"schema file {path}: {error.message}"
        error.args = (error.message,)
        raise


def _lifetime_entry(path: Path, value: Any) -> tuple[float, float] | dict[str, float] | None:
    """A schema file's "lifetime": a number (epsilon), {"epsilon": E, "delta": D}, or {"rho": R}
    (a lifetime held in zCDP; returned as {"rho": R})."""
    if value is None:
        return None
    if isinstance(value, dict) and set(value) == {"rho"}:
        rho = value["rho"]
        if isinstance(rho, bool) or not isinstance(rho, (int, float)) or not rho > 0 or rho == float("inf"):
            raise DataError(f"schema file {path}: \"lifetime\": {{\"rho\": R}} needs a number R > 0, got {value!r}")
        return {"rho": float(rho)}
    if isinstance(value, dict) and set(value) <= {"epsilon", "delta"} and "epsilon" in value:
        epsilon, delta = value["epsilon"], value.get("delta", 0)
    else:
        epsilon, delta = value, 0
    for number in (epsilon, delta):
        if isinstance(number, bool) or not isinstance(number, (int, float)):
            raise DataError(f"schema file {path}: \"lifetime\" must be a number (epsilon), "
                            f'{{"epsilon": E, "delta": D}} or {{"rho": R}}, got {value!r}')
    if not epsilon > 0 or not 0 <= delta < 1:
        raise DataError(f"schema file {path}: \"lifetime\" needs epsilon > 0 and 0 <= delta < 1, got {value!r}")
    return float(epsilon), float(delta)


def schema_file_for(csv_path: Path) -> Path:
    """Where a schema file beside a data file is looked for: data.csv -> data.schema.json."""
    return csv_path.with_name(csv_path.stem + ".schema.json")
