"""The CSV files an engine's reader reads exactly as Jostle's reader does, told apart by one scan.

Jostle's reader (`jostle.data.schema.read_csv_file`: Python's csv module, RFC 4180 records,
`skipinitialspace`, `strict`) is the definition of a CSV file's records on every route. DuckDB's
and Spark's readers are faster but follow other rules on some constructs, and under `auto` the
curator's file goes to DuckDB or stays in memory by its size, so its neighbour one row smaller
can take the other reader (issue 21, hole 3): a record `34,  "F"` read as `"F"` by DuckDB and as
`F` by Python moved every row of a released histogram. An engine therefore reads a curator's
file only when `scan` finds none of the constructs on which the readers differ, and its own
checks (`DuckDBEngine.raw_csv`, `SparkEngine.raw_csv`: field counts, field lengths, blank
records) find nothing either; any other file is read by Jostle's reader on every route, its
rows then handed to the engine as a frame. Either way the records, and the errors with their
point (at bind time, before any program runs), are Jostle's reader's.

What `scan` refuses, each a place where a reader was seen to differ (tests/test_csv_dialects.py
runs the readers against each other on random files built from these constructs):
  * bytes that are not UTF-8 (Python refuses the record or the file; DuckDB fails at a line,
    Spark reads U+FFFD);
  * a carriage return that is not part of a CRLF line end, or CRLF mixed with LF (Python ends
    a line at either; DuckDB refuses mixed line ends, and ends a field at a lone CR only
    sometimes);
  * a double quote anywhere but at the start of a field (right after a comma, a line end or the
    start of the file) or as the end of a quoted field (followed by a comma, a line end, the end
    of the file, or a second quote escaping it): this is where the readers differ on a quote
    after spaces (`1,  "a"`: Python reads `a`, DuckDB `"a"`), spaces or text after a closing
    quote (`"a"  ,`: Python refuses it, DuckDB reads `a`), a quote inside an unquoted field and
    a quote never closed (Python refuses the record, DuckDB reads a missing cell);
  * a quoted field whose text starts with a space (`" a"`): the engines skip the spaces after a
    comma (Python's `skipinitialspace`) with `ltrim`, which cannot tell such a field from an
    unquoted ` a`;
  * a NUL character (Spark's reader takes a line starting with one for a comment);
  * a first line that is not the header record (a blank line, or a header with a quoted line
    break or an unusable field): the engines take the first line as the header, Python the
    first record that is not blank.
None of these depends on anything but the file's bytes, and each only sends the file to the
reader that defines its records, so the scan can make no route read other records.

The scan reads the file once, in chunks (memory-mapped), with byte operations that run in
NumPy and the UTF-8 decoder: about 40 ms for a 20 MB file of 10^6 rows, where DuckDB's bind of
it takes about 200 ms.
"""

from __future__ import annotations

import codecs
import csv
import functools
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

CHUNK_BYTES = 1 << 24          # the file is scanned in chunks of this size
HEADER_LINE_BYTES = 1 << 20    # a first line longer than this is left to Jostle's reader
QUOTE, COMMA, LF, CR, SPACE = (ord(c) for c in '",\n\r ')
BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class CsvScan:
    """What `scan` found.

    Attributes:
        problem: Why an engine's reader might not give Jostle's reader's records for the file
            (for the curator's log), or None when nothing in it was found to make them differ.
        quoted: The file holds a double quote.
        quoted_line_break: A quoted field holds a line break (a record then spans lines: the
            engines read such a file as one stream, and others across threads or tasks). Known
            only when there is no problem; True when the scan stopped before the end.
    """

    problem: str | None
    quoted: bool
    quoted_line_break: bool = True


def scan(path: str | Path) -> CsvScan:
    """Scan a CSV file for the constructs on which the engines' readers differ from Jostle's.

    Never raises: a file that cannot be read is reported as a problem, and Jostle's reader then
    names what is wrong with it, as on the in-memory route.
    """
    try:
        size = Path(path).stat().st_size
        if size == 0:
            return CsvScan("the file is empty", False)
        data = np.memmap(path, dtype=np.uint8, mode="r")
    except (OSError, ValueError) as error:
        return CsvScan(f"the file cannot be read here ({error})", False)
    try:
        return _scan(np.asarray(data))  # a plain array view: indexing a memmap is slower
    finally:
        del data


def _scan(data: np.ndarray) -> CsvScan:
    size = len(data)
    start = len(BOM) if bytes(data[:len(BOM)]) == BOM else 0
    problem, crlf = _header_problem(data, start)
    decoder = codecs.getincrementaldecoder("utf-8")()
    quoted = line_break = False
    odd_line = 0  # the quotes of the line the last chunk ended in, so far, are odd
    pending = np.empty(0, dtype=np.int64)  # an opening quote whose closing quote is in a later chunk
    started = np.empty(0, dtype=np.int64)  # a quoted field whose last quote is in a later chunk
    limit = csv.field_size_limit()
    for begin in range(start, size, CHUNK_BYTES):
        if problem is not None:
            break
        end = min(begin + CHUNK_BYTES, size)
        chunk = bytes(data[begin:end])
        # An ASCII chunk is UTF-8 unless a character split at the last chunk's end is pending.
        held = len(decoder.getstate()[0])
        if not chunk.isascii() or held or end == size:
            try:
                decoder.decode(chunk, final=end == size)
            except UnicodeDecodeError as error:
                at = begin - held + error.start
                return CsvScan(f"it is not UTF-8 text ({error.reason} at byte {at})", quoted)
        if b"\0" in chunk:
            problem = "a NUL character (Spark's reader skips a line starting with one)"
        if crlf or b"\r" in chunk:
            problem = problem or _line_end_problem(data, begin, end, crlf)
        if b'"' in chunk or len(pending):
            quoted = True
            is_quote = np.frombuffer(chunk, dtype=np.uint8) == QUOTE
            if not line_break:
                line_break, odd_line = _odd_line(chunk, is_quote, odd_line)
            quotes = np.concatenate([pending, np.flatnonzero(is_quote) + begin])
            paired = len(quotes) - len(quotes) % 2
            pending = quotes[paired:]
            if problem is None:
                problem, starts, ends = _quoted_fields(data, start, quotes[0:paired:2], quotes[1:paired:2])
                starts = np.concatenate([started, starts])
                started = starts[len(ends):]
                # A quoted field's text is shorter than its span (doubled quotes count once); a
                # field longer than Python's limit is unusable there (an unquoted one makes its
                # line longer than the limit, which the engines refuse: `max_line_size`).
                if len(ends) and int(np.max(ends - starts[:len(ends)])) - 1 > limit:
                    problem = "a quoted field that may be longer than Python's csv field limit"
    if problem is not None:
        return CsvScan(problem, quoted)
    if len(pending):
        return CsvScan("a quote is not closed", quoted)
    return CsvScan(None, quoted, line_break)


def _odd_line(chunk: bytes, is_quote: np.ndarray, odd: int) -> tuple[bool, int]:
    """Whether a line of the chunk holds an odd number of quotes (with `odd`, the parity of the
    line the previous chunk ended in), and the parity of the line this chunk ends in.

    Where every quote is part of a well-formed quoted field (`_quoted_fields`), a quoted field
    holds a line break exactly when some line holds an odd number of quotes: the line where
    such a field starts holds its opening quote and pairs of quotes besides, and a line that no
    field crosses holds whole fields only. Line ends are LF or CRLF by then (`_line_end_problem`).
    """
    feeds = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == LF)
    if not len(feeds):
        return False, odd ^ int(np.count_nonzero(is_quote) & 1)
    starts = np.concatenate([np.zeros(1, dtype=np.int64), feeds + 1])
    tail = starts[-1] < len(chunk)
    parities = np.bitwise_xor.reduceat(is_quote.view(np.uint8), starts if tail else starts[:-1])
    parities[0] ^= odd
    return bool(np.any(parities[:len(feeds)])), int(parities[-1]) if tail else 0


def _line_end_problem(data: np.ndarray, begin: int, end: int, crlf: bool) -> str | None:
    """Why the lines of data[begin:end] do not all end as the header's line does (LF or CRLF):
    with CRLF, every CR is followed by an LF and every LF follows a CR (the bytes next to the
    chunk are read from `data`)."""
    message = "its lines do not all end alike in LF or in CRLF"
    if not crlf:
        return message  # a CR in a file of LF line ends
    chunk = np.asarray(data[begin:end])
    following = np.asarray(data[begin + 1:min(end + 1, len(data))])
    previous = np.asarray(data[max(begin - 1, 0):end - 1]) if begin > 0 else \
        np.concatenate([np.zeros(1, dtype=np.uint8), np.asarray(data[:end - 1])])
    carriage, feed = chunk == CR, chunk == LF
    if np.count_nonzero(carriage) != np.count_nonzero(carriage[:len(following)] & (following == LF)):
        return message
    if np.count_nonzero(feed) != np.count_nonzero(feed & (previous == CR)):
        return message
    return None


def _quoted_fields(data: np.ndarray, start: int, opening: np.ndarray,
                   closing: np.ndarray) -> tuple[str | None, np.ndarray, np.ndarray]:
    """Why some quotes are not exactly RFC 4180's quoted fields, as both readers read them alike
    (or None); and where quoted fields start and end (their first and last quotes).

    Quotes are paired in order (the first opens, the second closes, ...); a doubled quote inside
    a quoted field closes one pair and opens the next right after it. So every opening quote is
    at the start of a field (after a comma, a line end or the start of the file) or right after a
    closing quote, and every closing quote is followed by a comma, a line end, the end of the
    file or an opening quote. A field's opening quote must not be followed by a space (see the
    module docstring).
    """
    size, none = len(data), np.empty(0, dtype=np.int64)
    before = np.where(opening > start, data[np.maximum(opening - 1, 0)], COMMA)
    field_start = (before == COMMA) | (before == LF) | (before == CR)
    if not np.all(field_start | (before == QUOTE)):
        return "a quote that does not start a field (after spaces or inside an unquoted field)", none, none
    after_opening = data[np.minimum(opening + 1, size - 1)]
    if np.any(field_start & (after_opening == SPACE)):
        return "a quoted field starting with a space", none, none
    after = np.where(closing + 1 < size, data[np.minimum(closing + 1, size - 1)], LF)
    field_end = (after == COMMA) | (after == LF) | (after == CR)
    if not np.all(field_end | (after == QUOTE)):
        return "text or spaces after a closing quote", none, none
    return None, opening[field_start], closing[field_end]


def _header_problem(data: np.ndarray, start: int) -> tuple[str | None, bool]:
    """Why the first line is not the header record as Python reads it (or None), and whether
    it ends in CRLF (then every line must; otherwise none may hold a CR)."""
    head = bytes(data[start:start + HEADER_LINE_BYTES])
    ends = [at for at in (head.find(b"\n"), head.find(b"\r")) if at >= 0]
    if not ends and len(data) - start > HEADER_LINE_BYTES:
        return "its first line is too long", False
    line = head[:min(ends)] if ends else head
    crlf = head[len(line):len(line) + 2] == b"\r\n"
    try:
        records = list(csv.reader(io.StringIO(line.decode("utf-8"), newline=""), skipinitialspace=True,
                                  strict=True))
    except (UnicodeDecodeError, csv.Error):
        return "its first line is not a whole, valid header record", crlf
    if len(records) != 1 or not records[0] or (len(records[0]) == 1 and not records[0][0].strip()):
        return "its first line is blank", crlf
    return None, crlf


@functools.cache
def python_whitespace() -> str:
    """The characters Python's str.strip() removes (str.isspace), as the inside of a character
    class of RE2 and of Java's regular expressions: what makes a one-field record blank for
    Jostle's reader."""
    return "".join(f"\\x{{{ord(c):x}}}" for c in map(chr, range(0x110000)) if c.isspace())


__all__ = ["CsvScan", "scan", "python_whitespace", "CHUNK_BYTES"]
