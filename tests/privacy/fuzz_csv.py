"""The neighbour fuzzer's class "CSV dialects across the route threshold" (issue 21, hole 3).

Under `auto` a curator's CSV file goes to DuckDB when it is large and stays in memory when it is
small (jostle/language/binding.py), so a file and its neighbour one row smaller can be read by
different readers. A case of this class (`Case.csv` set, by the `csv` family of
tests/privacy/neighbour_fuzz.py) binds the private table by the path of a CSV file written in a
random dialect (`CsvDialect`): cells quoted or not, quotes after spaces (`34,  "F"`), spaces
after commas, quoted text starting with a space, a byte-order mark, LF, CRLF or CR line ends and
lines ending otherwise than the rest, blank lines and lines of white space, `""` lines, blank
lines before the header, no final line end, and broken records: a field too many (also an empty
one), spaces or text after a closing quote, a stray quote, a quote never closed, bytes that are
not UTF-8, a NUL character, a tab before a cell, a field longer than Python's csv limit.

The neighbours' files are the same dialect applied to their rows: each row is written the same
way in both (its rendering is drawn from the row's own content and the dialect's seed), and so
are the junk lines around it, so the files differ by exactly the extra row's record (which may
itself be broken). Each neighbour runs in memory and on DuckDB (`fuzz(..., engine=LARGE)`): the
neighbours obey the pre-release rule (`violation`), and each neighbour's whole run, the
curator's binding included (refused on both routes with the same error, or on neither), is the
same on both routes (`route_violation`). The statements (`csv_statements`) print released
histograms, counts and sums of the private table, whose values show any row read otherwise.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from tests.privacy.neighbour_fuzz import Generator, TableSpec

# How a cell may be written. "spaced_quote" is the reproducer (`34,  "F"`); the last
# ones make the record unusable for Python's reader (refused on the curator's route).
CELL_STYLES = {"plain": 40, "quoted": 20, "spaced": 10, "spaced_quote": 12, "quote_space": 3, "tab": 3,
               "stray_quote": 2, "space_after_quote": 2, "text_after_quote": 1, "unclosed": 1, "not_utf8": 1,
               "nul": 1, "long": 1}
# Lines written before a record (keyed by the record's content, so the same in both neighbours).
JUNK_LINES = ["", "", "   ", "\t", '""', '"  "', "\u3000", ","]
LINE_ENDS = {"\n": 50, "\r\n": 30, "\r": 10, "mixed": 10}


@dataclass(frozen=True)
class CsvDialect:
    """How a case's private CSV file is written (see the module docstring)."""

    seed: int
    line_end: str           # "\n", "\r\n", "\r" or "mixed"
    bom: bool
    header_quoted: bool
    lead: str               # lines before the header ("" usually)
    final_end: bool         # a line end after the last record
    styles: tuple[tuple[str, float], ...]  # cell styles and their weights, this dialect's mix
    junk_rate: float        # how often a record is preceded by a junk line
    broken_rate: float      # how often a record has a field too many

    def render(self, table: TableSpec) -> bytes:
        """The CSV file of a neighbour's rows in this dialect."""
        names = [c.name for c in table.columns]
        header = ",".join(f'"{n}"' if self.header_quoted else n for n in names).encode()
        lines = [header + self._line_end(random.Random(f"{self.seed}:header"))]
        for row in table.rows:
            rng = random.Random(f"{self.seed}:{_row_key(row)}")
            if rng.random() < self.junk_rate:
                lines.append(rng.choice(JUNK_LINES).encode() + self._line_end(rng))
            lines.append(self._record(rng, row) + self._line_end(rng))
        tail = random.Random(f"{self.seed}:tail")
        if tail.random() < self.junk_rate:
            lines.append(tail.choice(JUNK_LINES).encode() + self._line_end(tail))
        body = b"".join(lines)
        if not self.final_end:
            body = body.rstrip(b"\r\n")
        return (b"\xef\xbb\xbf" if self.bom else b"") + self.lead.encode() + body

    def _line_end(self, rng: random.Random) -> bytes:
        if self.line_end != "mixed":
            return self.line_end.encode()
        return rng.choice([b"\n", b"\n", b"\r\n", b"\r"])

    def _record(self, rng: random.Random, row: tuple) -> bytes:
        names, weights = zip(*self.styles)
        cells = [_cell(rng.choices(names, weights=weights)[0], _text(value), rng) for value in row]
        if rng.random() < self.broken_rate:
            cells.append(rng.choice([b"", b"x", b'"y"']))
        return b",".join(cells)


def _row_key(row: tuple) -> str:
    """A stable key of a row's content (reprs of its cells; a whole number too long for repr
    counts by its size)."""
    parts = []
    for value in row:
        try:
            parts.append(f"{type(value).__name__}:{value!r}")
        except ValueError:
            parts.append(f"int:{value.bit_length()}")
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def _text(value: Any) -> str:
    """A cell's text as pandas' to_csv writes it (missing as empty)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bytes):
        return repr(value)
    try:
        return str(value)
    except ValueError:  # a whole number too long for str()
        return "9" * 5000


def _cell(style: str, text: str, rng: random.Random) -> bytes:
    """One cell of `text` written in `style`."""
    quoted = '"' + text.replace('"', '""') + '"'
    if '"' in text or "," in text or "\n" in text or "\r" in text:
        style = style if style not in ("plain", "spaced", "tab", "stray_quote") else "quoted"
    written = {
        "plain": text,
        "quoted": quoted,
        "spaced": " " * rng.randint(1, 3) + text,
        "spaced_quote": " " * rng.randint(1, 3) + quoted,
        "quote_space": '" ' + text.replace('"', '""') + '"',
        "tab": "\t" + text,
        "stray_quote": text + '"',
        "space_after_quote": quoted + " " * rng.randint(1, 2),
        "text_after_quote": quoted + "x",
        "unclosed": '"' + text,
        "nul": text + "\x00",
        "long": text + " " * 140_000,
    }.get(style, text)
    if style == "not_utf8":
        return text.encode() + b"\xff"
    return written.encode("utf-8", "surrogatepass")


def draw_dialect(rng: random.Random) -> CsvDialect:
    """A random dialect for a case of this class."""
    weights = dict(CELL_STYLES)
    for style in rng.sample(sorted(weights), rng.randint(0, len(weights))):
        weights[style] = 0.0  # each dialect uses a few styles
    weights["plain"] = rng.choice([1.0, 10.0, 40.0])  # from the odd cell to every cell written otherwise
    breaking = rng.random() < 0.5  # half the dialects write no unusable record
    if not breaking:
        for style in ("space_after_quote", "text_after_quote", "unclosed", "not_utf8", "long"):
            weights[style] = 0.0
    return CsvDialect(
        seed=rng.randrange(1 << 30),
        line_end=rng.choices(list(LINE_ENDS), weights=list(LINE_ENDS.values()))[0],
        bom=rng.random() < 0.15,
        header_quoted=rng.random() < 0.2,
        lead=rng.choice(["", "", "", "", "\n", "  \n"]),
        final_end=rng.random() < 0.85,
        styles=tuple((s, w) for s, w in sorted(weights.items()) if w > 0),
        junk_rate=rng.choice([0.0, 0.0, 0.1, 0.3]),
        broken_rate=rng.choice([0.0, 0.0, 0.05, 0.2]) if breaking else 0.0,
    )


def csv_statements(generator: Generator, chunks: list[str]) -> None:
    """Releases of the private table that print what its rows hold: a histogram of each
    categorical column, counts, sums (the values show a row read otherwise on one route)."""
    columns = generator.private.columns
    categorical = [c.name for c in columns if not c.numeric]
    numeric = [c.name for c in columns if c.numeric]
    releases = ["count(t)"]
    releases += [f'histogram(t, "{name}")' for name in categorical]
    releases += [f'sum(t, "{name}")' for name in numeric]
    chosen = generator.rng.sample(releases, min(len(releases), generator.rng.randint(1, 3)))
    body = [f"    print({{{{ {release} }}}})" for release in chosen]
    if categorical and generator.chance(0.4):
        body.append(f'    print({{{{ count(t.where(lambda r: r.{generator.pick(categorical)} == '
                    f'{generator.text_literal()})) }}}})')
    chunks.append("print(t.columns)")
    chunks.append(f"with budget {generator.pick(['1', '2'])}:\n" + "\n".join(body))


__all__ = ["CsvDialect", "draw_dialect", "csv_statements"]
