"""Keyed multi-table data: several private tables bound under one `entity(key)` unit, one database.

A database is what `Session.bind_database({"trains": ..., "cars": ...}, key="train_id")` binds
(`jostle run --data trains=a.csv --data cars=b.csv --key train_id` on the command line). Its
tables hold facts about the same entities, told apart by the key column every table has: one
entity is every row of every table whose key is its key value, and neighbouring databases
differ by one entity's rows in all the tables at once (Tumult's AddRowsWithID over several
tables).

The database is one dataset in the durable ledger (one name, one lifetime budget, one
registration): its tables are parts of it, so a release about any of them spends the
database's budget, and releases about several of them compose sequentially (they are about the
same entities). In the session's data tree its tables share one node, a `DatabaseNode` below
the accountant's root for the unit: every charge on them knows its unit, values mixing them
with tables of another unit are refused (`jostle.privacy.budget.common_node`), and a join can
tell whether two private tables belong to the same database (`database_of`), which is what
makes joining them on the key sound (jostle.language.joins).

Everything decided here is public: the tables' names, schemas, the key and the route; never
the rows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jostle.data.schema import DataError, Schema, read_schema_declaration, schema_file_for
from jostle.diagnostics.errors import UsageError
from jostle.diagnostics.source import BUILTIN_SPAN
from jostle.privacy.budget import DataNode, ParallelGroup
from jostle.privacy.units import PrivacyUnit, entity


@dataclass(eq=False)
class DatabaseNode(DataNode):
    """The data node of one database's tables, below the accountant's root for its unit.

    It is the only part of a one-part `ParallelGroup` of the root, so its cost is its own
    subtree's (the tree's composition rules apply unchanged: two databases under one unit are
    two groups of the root, whose costs add, which is sound whether or not they are about the
    same entities).
    """

    database: str = ""


def database_node(accountant: Any, unit: PrivacyUnit, name: str) -> DatabaseNode:
    """A fresh node for the database `name` under the accountant's root for `unit`."""
    root = accountant.root_for(unit)
    group = ParallelGroup(root, f"database {name}")
    node = DatabaseNode(f"database {name}", root, group, unit, database=name)
    group.parts.append(node)
    return node


def database_of(node: DataNode) -> DatabaseNode | None:
    """The database a table's node belongs to (itself or an ancestor), or None."""
    while node is not None:
        if isinstance(node, DatabaseNode):
            return node
        node = node.parent
    return None


@dataclass
class BoundPart:
    """One table of a database as the curator gave it, read but not yet conformed.

    Attributes:
        name: The name programs use for it.
        raw: Its raw rows as the ledger's fingerprint reads them: a pandas frame (in memory) or
            an `EngineSource`.
        rows: The same rows as the schema reads them (a frame's cells as Python values).
        schema: Its public schema.
        columns: Its column names (the header).
        path: The file it was read from, or None for a DataFrame.
    """

    name: str
    raw: Any
    rows: Any
    schema: Schema
    columns: list[str]
    path: Path | None


def database_unit(key: Any) -> PrivacyUnit:
    """The unit of a database keyed by `key` (a column name)."""
    if not isinstance(key, str) or not key.strip():
        raise UsageError(f"a database's key is a column name, got {key!r}",
                         hint='for example bind_database({...}, key="train_id")')
    return entity(key)


def read_parts(interp: Any, tables: Mapping[str, Any], schemas: Mapping[str, Any] | None,
               schema_of: Any, unit: PrivacyUnit) -> list[BoundPart]:
    """Each table's raw rows and schema, on one route for all of them.

    The route (memory, DuckDB or Spark) is the session's setting; under `auto` each table's own
    rule (its size, a Parquet file) is asked and, if any table goes to DuckDB, all of them do:
    a join then runs in one engine's SQL. The route is the curator's public choice and every
    route gives the same answers (jostle.language.binding).

    Args:
        schema_of: Turns a schema given in Python (a Schema or a mapping) into a Schema.

    A table's schema file may declare its columns only: its unit is the database's, and the
    database's name and lifetime in the ledger are given once, to bind_database; a file that
    declares another unit, a public row count, a dataset name or a lifetime is refused rather
    than silently overruled.

    Raises:
        UsageError: A table without a schema, data that is neither a frame nor a path, or a
            schema file declaring more than columns that contradict the database.
        DataError: A file cannot be read (named, to the curator).
    """
    import pandas as pd

    from jostle.language import binding, private_files

    schemas = dict(schemas or {})
    unknown = sorted(set(schemas) - set(tables))
    if unknown:
        raise UsageError(f"schemas names {', '.join(map(repr, unknown))}, which is not a table of the database",
                         hint=f"the tables are {', '.join(map(repr, tables))}")
    routes = []
    for name, data in tables.items():
        if isinstance(data, (str, Path)):
            routes.append(binding.route_for_file(interp, Path(data), by_curator=True))
        elif isinstance(data, pd.DataFrame):
            routes.append(binding.route_for_frame(interp, data))
        else:
            raise UsageError(f"bind_database needs a DataFrame, or the path of a CSV or Parquet file, for "
                             f"'{name}', got {type(data).__name__}")
    engines = [r for r in routes if r != "pandas"]
    route = engines[0] if engines else "pandas"
    parts = []
    for name, data in tables.items():
        path = Path(data) if isinstance(data, (str, Path)) else None
        schema = schemas.get(name)
        if path is not None:
            rows = private_files.read_private_file(interp, path, by_curator=True, strict=True, table=name, route=route)
            if schema_file_for(path).is_file():
                declared = read_schema_declaration(schema_file_for(path))
                _refuse_table_declarations(declared, name, schema_file_for(path), unit)
                schema = declared.schema if schema is None else schema
        else:
            rows = private_files.curator_frame_rows(interp, data, route)
        if schema is None:
            where = f" (no {schema_file_for(path).name} beside {path})" if path is not None else ""
            raise UsageError(f"the table '{name}' of the database has no schema{where}",
                             hint="give it in schemas={...} or in a schema file beside the data: the key "
                                  "is checked against every table's schema when the database is bound")
        parts.append(BoundPart(name, rows.raw, rows.cells, schema_of(schema), rows.columns, path))
    return parts


def _refuse_table_declarations(declared: Any, name: str, path: Path, unit: PrivacyUnit) -> None:
    """A database table's schema file declares nothing the database decides (see read_parts)."""
    from jostle.privacy.units import parse_unit

    said = []
    if declared.privacy_unit is not None and parse_unit(declared.privacy_unit) != unit:
        said.append(f"the unit {parse_unit(declared.privacy_unit)}")
    if declared.public_rows:
        said.append("a public row count")
    if declared.dataset is not None:
        said.append(f"the dataset name {declared.dataset!r}")
    if declared.lifetime is not None:
        said.append("a lifetime budget")
    if said:
        raise UsageError(f"the schema file {path} of the database's table '{name}' declares {', '.join(said)}",
                         hint=f"a database's tables are all bound under {unit} as one dataset: give its name and "
                              "lifetime to bind_database(..., dataset=, lifetime=) (--dataset, --lifetime) and "
                              "keep only the columns in the table's schema file")


def check_key(parts: list[BoundPart], unit: PrivacyUnit) -> None:
    """Every table has the key column, with one kind of domain (numeric or categorical).

    Checked on the schemas (public) before any row is conformed; the rule on the key column
    itself (no default, numeric bounds) is `jostle.language.entities.check_entity_key`'s.

    Raises:
        DataError: A table lacks the key, or the key's kinds differ between tables.
    """
    from jostle.language.entities import check_entity_key

    key = unit.key
    for part in parts:
        if key not in part.schema:
            raise DataError(f"the database's key '{key}' is not a column of its table '{part.name}'", BUILTIN_SPAN,
                            f"its columns are {part.schema.names}; every table of a database names its entity "
                            f"in the key column: add '{key}' to '{part.name}', or bind it on its own")
        check_entity_key(part.schema, unit, part.name, BUILTIN_SPAN)
    kinds = {type(part.schema[key]).__name__ for part in parts}
    if len(kinds) > 1:
        listed = ", ".join(f"'{p.name}': {type(p.schema[key]).__name__.lower()}" for p in parts)
        raise DataError(f"the key '{key}' has a numeric domain in some tables and a categorical one in others "
                        f"({listed})", BUILTIN_SPAN, "declare the key with one kind of domain in every table")


def database_digest(digests: list[tuple[str, bytes]], unit: PrivacyUnit) -> bytes:
    """The ledger's content digest of a database: its tables' digests, by name, and its unit's key."""
    text = hashlib.sha256()
    text.update(b"jostle-database/1\n" + unit.text.encode() + b"\n")
    for name, digest in sorted(digests):
        text.update(name.encode() + b"\x1f" + digest + b"\n")
    return text.digest()


__all__ = ["DatabaseNode", "database_node", "database_of", "BoundPart", "database_unit", "read_parts",
           "check_key", "database_digest"]
