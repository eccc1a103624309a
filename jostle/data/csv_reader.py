"""Jostle's one CSV reader, for every route: RFC 4180 records (Python's csv module), UTF-8 with
an optional byte-order mark, never failing on a row (`read_csv_file`).

A record the reader cannot use (not UTF-8, a stray quote, more fields than the header) is a
*problem*: the curator's and the public routes refuse the file and name the line (`read_csv`,
`CsvFile.checked`), the program's route drops the record (`CsvFile.rows_for_program`), which
is 1-stable at the level of records. Also here: `DATA_LOG`, the curator's logger, which both
this reader and the schema's conformance (jostle.data.schema) write to.

Re-exported by jostle.data.schema.
"""

from __future__ import annotations

import csv
import io
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from jostle.diagnostics.errors import DataError

if TYPE_CHECKING:
    import pandas as pd

# The curator's channel for what a program-declared schema did to the rows (counts only). A
# NullHandler keeps Python's last-resort handler from printing it on stderr, where the
# program's author may read it; an application that configures logging receives it.
DATA_LOG = logging.getLogger("jostle.data")
DATA_LOG.addHandler(logging.NullHandler())


@dataclass(frozen=True)
class CsvFile:
    """A CSV file as read: its header, its usable records, and the problems of the others.

    Attributes:
        path: The file.
        frame: The usable records as a frame of text cells (a cell missing from a short record
            is None).
        problems: One message per unusable record, naming its line: these describe the rows,
            so they are for the curator only.
        lines: The 1-based line on which each record of `frame` starts.
    """

    path: Path
    frame: pd.DataFrame
    problems: tuple[str, ...] = ()
    lines: tuple[int, ...] = field(default=(), repr=False)
    encoding_problem: str | None = None

    def checked(self) -> pd.DataFrame:
        """The frame, or a DataError naming the first problem (the curator's and public routes)."""
        if self.encoding_problem is not None:
            raise DataError(f"cannot read data file {self.path}: {self.encoding_problem}",
                            hint="save the file as UTF-8")
        if self.problems:
            more = f" (and {len(self.problems) - 1} more)" if len(self.problems) > 1 else ""
            raise DataError(f"data file {self.path} is not valid CSV: {self.problems[0]}{more}",
                            hint="fix the file: each record needs as many fields as the header, "
                            "quotes must be closed, and the text must be UTF-8")
        return self.frame

    def rows_for_program(self, table: str) -> pd.DataFrame:
        """The frame with unusable records dropped (the program's route: never an error).

        Dropping a record is 1-stable (a record gives at most one row). How many were dropped
        goes to the curator's logger `DATA_LOG` only.
        """
        if self.problems:
            DATA_LOG.warning("table '%s' (%s): %d unusable CSV records dropped", table, self.path,
                             len(self.problems))
        return self.frame


def _decode(raw: bytes) -> tuple[str, str | None]:
    """UTF-8 text (a byte-order mark removed), and a problem if some bytes are not UTF-8.

    Bytes that are not UTF-8 become lone surrogates (U+DC80..U+DCFF, which no UTF-8 text
    holds), so the rest of the file still reads and each record holding one is a problem of
    its own (see `read_csv_file`).
    """
    try:
        return raw.decode("utf-8-sig"), None
    except UnicodeDecodeError as error:
        return (raw.decode("utf-8-sig", errors="surrogateescape"),
                f"it is not UTF-8 text ({error.reason} at byte {error.start})")


def _undecodable(cells: list[str]) -> bool:
    """True if a record holds a byte that was not UTF-8 (see `_decode`)."""
    return any("\udc80" <= ch <= "\udcff" for cell in cells for ch in cell)


def _header_names(fields: list[str]) -> list[str]:
    """Column names as pandas gives them: blanks as 'Unnamed: i', repeats as 'a.1', 'a.2'."""
    names: list[str] = []
    seen: Counter = Counter()
    for index, name in enumerate(fields):
        name = name if name.strip() else f"Unnamed: {index}"
        candidate = name
        while candidate in names:
            seen[name] += 1
            candidate = f"{name}.{seen[name]}"
        names.append(candidate)
    return names


def read_csv_file(path: str | Path) -> CsvFile:
    """Read a CSV file into text columns (typing happens under the schema), never failing on a row.

    The header is the first non-blank record; blank lines are skipped. A record is unusable,
    and listed in `problems` instead of the frame, when it holds bytes that are not UTF-8, a
    quote that is not closed properly, or more fields than the header. A record with fewer
    fields is padded with missing cells. Leading spaces of fields are skipped.

    Raises:
        DataError: The file cannot be read, or has no header (or an unusable one). These do
            not depend on the rows: a header is the same on neighbouring tables.
    """
    import pandas as pd
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"data file {path} does not exist") from None
    except OSError as error:
        raise DataError(f"cannot read data file {path}: {error.strerror or error}") from None
    text, undecodable = _decode(raw)
    reader = csv.reader(io.StringIO(text, newline=""), skipinitialspace=True, strict=True)
    header: list[str] | None = None
    records: list[list[str | None]] = []
    starts: list[int] = []
    problems: list[str] = []
    while True:
        start = reader.line_num + 1
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            if header is None:
                raise DataError(f"the header of data file {path} (line {start}) is not valid CSV: {error}",
                                hint="fix the file's first line") from None
            problems.append(f"the record on line {start} is malformed ({error})")
            continue
        if not record or (len(record) == 1 and not record[0].strip()):
            continue  # a blank line
        if header is None:
            if undecodable and _undecodable(record):
                raise DataError(f"cannot read data file {path}: {undecodable}", hint="save the file as UTF-8")
            header = _header_names(record)
            continue
        if undecodable and _undecodable(record):
            problems.append(f"the record on line {start} is not UTF-8 text")
            continue
        if len(record) > len(header):
            problems.append(f"line {start} has {len(record)} fields, the header has {len(header)}")
            continue
        records.append(record + [None] * (len(header) - len(record)))
        starts.append(start)
    if header is None:
        raise DataError(f"data file {path} is empty", hint="a CSV needs at least a header row")
    frame = pd.DataFrame(records, columns=header, dtype=object) if records else \
        pd.DataFrame({name: pd.Series([], dtype=object) for name in header})
    return CsvFile(path, frame, tuple(problems), tuple(starts), undecodable)


def read_csv(path: str | Path) -> pd.DataFrame:
    """Read a CSV file as text columns, refusing a file with any unusable record.

    For the curator's and the public routes, where naming the line of a bad record is fine.
    The program's route uses `read_csv_file(path).rows_for_program(name)`.

    Raises:
        DataError: The file cannot be read, is empty, or has an unusable record (named).
    """
    return read_csv_file(path).checked()
