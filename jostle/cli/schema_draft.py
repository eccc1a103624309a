"""`jostle schema draft DATA`: the curator's tool that drafts a schema file from a data file the
curator owns (CSV, or Parquet), for the curator to review before anything is bound with it.

A schema is public, and a draft read from private data is not: its categories are the values
the rows hold (a category only one person has names them) and its numeric bounds come from the
rows' extremes (a bound set by one person's value reveals it). So the draft is marked as one,
in the file's "comment" (jostle.data.schema_files reads it and ignores it) and in what the
command prints, and it is written beside the data as `DATA.schema.draft.json`, which nothing
reads until the curator renames it `DATA.schema.json` (or passes it on purpose). The bounds are
the data's smallest and largest values rounded outward to a power of ten (from 0 when the range
starts near it), so a bound is a data extreme only when that extreme is itself round (an age of
90 gives 90); the curator should replace them with the domain's public bounds.

This is the curator's tool only: it lives in the command line (the interfaces layer), which the
language cannot import (the layers of docs/architecture.md); no built-in, Session method or
anything a program can reach calls it.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jostle.diagnostics.errors import UsageError
from jostle.data.schema_files import DRAFT_MARKER

# A text column with more distinct values than this is left out of the draft (an identifier or
# free text, rarely a category); --max-categories changes it.
MAX_CATEGORIES = 200
MISSING_TEXTS = ("", "na", "nan", "null")

DRAFT_WARNING = [
    f"{DRAFT_MARKER} from the private data itself: review every line before use; the schema reader "
    "refuses this file while this line is here.",
    "A schema is public, and this draft is not: its categories are the values the rows hold and its numeric "
    "bounds were read from the rows' smallest and largest values (rounded outward).",
    "Replace each bound with the domain's public bound (e.g. age 0 to 120), and each category list with the "
    "domain's public list; drop any category that only a few people have, or that names someone.",
    "When it is right, rename this file DATA.schema.json (beside the data) or pass it to --data, and delete "
    "this comment (at least its first line).",
]


@dataclass
class ColumnDraft:
    """One column's drafted declaration and the notes the curator must read about it."""

    name: str
    spec: dict[str, Any] | None
    notes: list[str] = field(default_factory=list)


def read_curator_file(path: Path) -> Any:
    """The curator's data file as a frame of raw cells (CSV by Jostle's one reader, Parquet by DuckDB)."""
    from jostle.language.binding import is_parquet, read_parquet_frame

    if is_parquet(path):
        return read_parquet_frame(path)
    from jostle.data.csv_reader import read_csv

    return read_csv(path)


def _present_values(series: Any) -> tuple[Any, bool]:
    """The distinct present values of a column, as Jostle reads them, and whether any cell is missing.

    Computed on the column's distinct cells (pandas' hash-based `unique`), not on every row, so a column of millions of rows with few distinct values costs one pass: a cell
    is missing when it is None/NaN or a text that is blank, na, nan or null; a text is read with
    its surrounding spaces stripped (as a category matches it and a number parses it).
    """
    import pandas as pd

    uniques = pd.Series(pd.unique(series), dtype=object)
    stripped = uniques.map(lambda cell: cell.strip() if isinstance(cell, str) else None)
    is_text = stripped.notna()
    missing = uniques.isna() | stripped.map(lambda text: text is not None and text.lower() in MISSING_TEXTS)
    values = stripped.where(is_text, uniques)[~missing.astype(bool)]
    return pd.Series(pd.unique(values), dtype=object), bool(missing.any())


def round_outward(lo: float, hi: float) -> tuple[float, float]:
    """[lo, hi] widened to round numbers: a grid of 10^k, the largest power of ten within the
    range (from 0 for a non-negative range that starts near it), so the draft holds the data's
    own extremes only when they are round: 17..90 -> [0, 90], 12285..1484705 -> [0, 2000000]."""
    span = hi - lo
    if span <= 0:
        span = max(abs(lo), 1.0)
    step = 10.0 ** math.floor(math.log10(span))
    low, high = math.floor(lo / step) * step, math.ceil(hi / step) * step
    if 0 <= lo <= span:  # a non-negative quantity near zero (ages, counts, amounts): from 0
        low = 0.0
    if -span <= hi <= 0:
        high = 0.0
    return _tidy(low), _tidy(high)


def _tidy(number: float) -> float | int:
    rounded = round(number, 10)
    return int(rounded) if float(rounded).is_integer() and abs(rounded) < 1e15 else rounded


def draft_column(name: str, series: Any, max_categories: int = MAX_CATEGORIES) -> ColumnDraft:
    """Draft one column: numeric when every present cell is a number, else categorical."""
    import numpy as np
    import pandas as pd

    if series.dtype.kind in "iuf":  # typed numbers (Parquet): nothing to read as text
        has_missing = bool(series.isna().any())
        present = pd.Series(pd.unique(series.dropna()), dtype=object)
    else:
        present, has_missing = _present_values(series)
    draft = ColumnDraft(name, None)
    if has_missing:
        draft.notes.append(f"'{name}' has missing cells: binding refuses them unless you declare a \"default\" "
                           "(or clean the data)")
    if present.empty:
        draft.notes.append(f"'{name}' has no values at all: declare it yourself, or leave it out")
        return draft
    has_bool = series.dtype.kind == "b" or any(isinstance(v, (bool, np.bool_)) for v in present.tolist())
    numbers = None if has_bool else pd.to_numeric(present, errors="coerce")
    if numbers is not None and not numbers.isna().any():
        values = numbers.to_numpy(dtype=float)
        finite = values[np.isfinite(values)]
        if len(finite) < len(values):
            draft.notes.append(f"'{name}' holds infinite values: they are clamped to the bounds")
        if len(finite) == 0:
            draft.notes.append(f"'{name}' has no finite number: declare its bounds yourself")
            return draft
        lo, hi = round_outward(float(finite.min()), float(finite.max()))
        draft.spec = {"type": "numeric", "bounds": [lo, hi]}
        if bool(np.all(finite == np.floor(finite))):
            draft.spec["integer"] = True
        draft.notes.append(f"'{name}': bounds [{lo}, {hi}] were read from the data (rounded outward): "
                           "replace them with the domain's public bounds")
        return draft
    categories = sorted(set(present.tolist()), key=lambda v: (type(v).__name__, str(v)))
    if len(categories) > max_categories:
        draft.notes.append(f"'{name}' has more than {max_categories} distinct values (an identifier or free "
                           "text?): left out of the draft; bin it, list its categories yourself, or drop it")
        return draft
    draft.spec = {"type": "categorical", "values": [_json_value(v) for v in categories]}
    draft.notes.append(f"'{name}': {len(categories)} categories read from the data: check the list is the "
                       "domain's public one (add values no row has yet, drop any that identifies someone)")
    return draft


def _json_value(value: Any) -> Any:
    """A category as JSON holds it (NumPy scalars as Python numbers)."""
    item = getattr(value, "item", None)
    return item() if callable(item) and not isinstance(value, str) else value


def draft_schema(path: Path, max_categories: int = MAX_CATEGORIES) -> tuple[dict[str, Any], list[ColumnDraft]]:
    """The draft schema file's document for the data file `path`, and each column's draft."""
    frame = read_curator_file(path)
    drafts = [draft_column(str(name), frame[name], max_categories) for name in frame.columns]
    columns = {d.name: d.spec for d in drafts if d.spec is not None}
    if not columns:
        raise UsageError(f"no column of {path} could be drafted", hint="declare the schema by hand")
    notes = [note for d in drafts for note in d.notes]
    document = {"comment": DRAFT_WARNING + ["Per column:"] + notes, "columns": columns}
    return document, drafts


def draft_text(document: dict[str, Any]) -> str:
    """The draft as a person reads it: the comment's lines, then one line per column."""
    def dump(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    comment = ",\n".join(f"    {dump(line)}" for line in document["comment"])
    columns = ",\n".join(f"    {dump(name)}: {dump(spec)}" for name, spec in document["columns"].items())
    return f'{{\n  "comment": [\n{comment}\n  ],\n  "columns": {{\n{columns}\n  }}\n}}\n'


def draft_path(data: Path) -> Path:
    """Where the draft goes by default: data.csv -> data.schema.draft.json (read by nothing)."""
    return data.with_name(data.stem + ".schema.draft.json")


def schema_command(args: argparse.Namespace) -> int:
    """`jostle schema draft DATA [--output FILE|-] [--max-categories N] [--force]`; returns 0."""
    from jostle.data.schema_files import read_schema_declaration

    data = Path(args.file)
    if not data.is_file():
        raise UsageError(f"data file {data} does not exist")
    document, drafts = draft_schema(data, args.max_categories)
    text = draft_text(document)
    if args.output == "-":
        print(text, end="")
        return 0
    target = Path(args.output) if args.output else draft_path(data)
    if target.exists() and not args.force:
        raise UsageError(f"{target} exists", hint="pass --force to replace it, or --output another file")
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot write {target}: {error.strerror}") from None
    read_schema_declaration(target, allow_draft=True)  # the draft reads back as a schema file, or this is a bug
    kept = sum(d.spec is not None for d in drafts)
    print(f"wrote a DRAFT schema of {kept} of {len(drafts)} columns to {target}")
    print("It was read from the private data: its bounds and categories are NOT public until you have "
          "reviewed them.")
    for d in drafts:
        kind = "left out" if d.spec is None else d.spec["type"]
        print(f"  {d.name}: {kind}")
    print("Review every bound and category list (see the \"comment\" in the file), then rename it "
          f"{data.stem}.schema.json to use it.")
    return 0


def add_schema_parser(commands: Any, parser_class: type) -> None:
    """`jostle schema draft ...` in the command's parser."""
    schema = commands.add_parser("schema", help="the curator's schema tools (never callable from a program)",
                                 allow_abbrev=False)
    actions = schema.add_subparsers(dest="schema_action", metavar="draft", parser_class=parser_class, required=True)
    draft = actions.add_parser("draft", help="draft a schema file from a data file you own, for you to review",
                               allow_abbrev=False)
    draft.add_argument("file", metavar="DATA", help="the data file (CSV, or Parquet)")
    draft.add_argument("--output", "-o", metavar="FILE",
                       help="where to write the draft (default DATA.schema.draft.json beside it; - for stdout)")
    draft.add_argument("--max-categories", type=int, default=MAX_CATEGORIES, metavar="N",
                       help=f"leave out text columns with more distinct values (default {MAX_CATEGORIES})")
    draft.add_argument("--force", action="store_true", help="replace an existing draft")
