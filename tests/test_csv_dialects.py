"""The engines read a curator's CSV file exactly as Jostle's reader does, or leave it to it (issue 21, hole 3).

Jostle's reader (`jostle.data.schema.read_csv_file`, Python's csv module) defines a CSV file's
records. On the curator's and public routes an engine reads a file itself only when
`jostle.data.engine.csv_dialect.scan` finds none of the constructs on which its reader differs
and its own checks of what it read find nothing Python refuses (`DuckDBEngine.raw_csv` and
`SparkEngine.raw_csv` with `strict`, which return None otherwise). Here random files built from
those constructs (quotes after spaces, spaces and text after closing quotes, stray and unclosed
quotes, fields too many, bytes that are not UTF-8, byte-order marks, CR, CRLF and mixed line
ends, blank and white-space lines, NUL characters, Unicode line separators, long fields) are
read both ways: whenever the engine reads a file, it must give Python's records cell for cell
(Spark writes an empty field as missing, which every consumer reads alike: see
`test_spark_reads_every_file_it_takes_as_python_does`), and whenever Python refuses a file
the engine must not read it. The scan gives the same answer in chunks of any size.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

duckdb = pytest.importorskip("duckdb")

from tests.conftest import local_spark  # noqa: E402
from jostle.data.engine import csv_dialect  # noqa: E402
from jostle.data.engine.duckdb_engine import DuckDBEngine  # noqa: E402
from jostle.data.engine.spark_engine import spark_unavailable  # noqa: E402
from jostle.data.schema import DataError, read_csv_file  # noqa: E402
from jostle.language.binding import csv_header  # noqa: E402

SEED = 20261123
# Pieces of records: the constructs on which the readers were seen to differ, and ordinary ones.
TOKENS = [b"a", b"1", b" ", b"  ", b",", b",", b",", b"\n", b"\n", b"\r\n", b"\r", b'"', b'""', b'"x"', b'" "',
          b"\t", b"\x00", b"\xff", b"\xc3\xa9", b"\xef\xbb\xbf", b"\xe2\x80\xa8", b"\xc2\x85", b"\xc2\xa0", b"#",
          b"\\", b"'", b"\x1c", b"\x0c", b"\x0b", b"NA", b"\xf0\x9f\x98\x80", b"\xed\xa0\x80", b"x" * 200]
CELLS = [b"1", b"a", b"", b" x", b'"q"', b'"a,b"', b'"l\nm"', b'"e""f"', b"\xc3\xa9", b'  "s"', b'"t"  ', b"u\t"]


def random_file(rng: random.Random) -> bytes:
    """A small CSV file: a header, records of cells, and lines of random tokens."""
    header = rng.choice([b"a,b", b"a", b"a,b,c", b'"a",b', b"a, b", b'a,"b\nc"'])
    if rng.random() < 0.15:
        header = rng.choice([b"", b"\n", b" \n", b"\xef\xbb\xbf", b'""\n']) + header
    lines = []
    for _ in range(rng.randint(0, 6)):
        if rng.random() < 0.5:
            lines.append(b",".join(rng.choice(CELLS) for _ in range(rng.randint(1, 4))))
        else:
            lines.append(b"".join(rng.choice(TOKENS) for _ in range(rng.randint(0, 6))))
    end = rng.choice([b"\n", b"\n", b"\r\n"])
    return header + end + end.join(lines) + rng.choice([end, b""])


def python_read(path: Path) -> tuple:
    """Jostle's reader on the curator's route: the records (header and rows), or its error."""
    try:
        frame = read_csv_file(path).checked()
    except DataError as error:
        return ("error", str(error))
    return ("rows", list(frame.columns), [tuple(row) for row in frame.itertuples(index=False)])


def engine_read(engine: Any, path: Path) -> tuple | None:
    """The engine's strict read of `path`, as binding.file_source makes it, or None when the
    file is left to Jostle's reader."""
    scanned = csv_dialect.scan(path)
    if scanned.problem is not None:
        return None
    view = engine.raw_csv(path, csv_header(path), strict=True, scanned=scanned)
    if view is None:
        return None
    return ("rows", engine.source_columns(view), [tuple(row) for row in engine.query(f"SELECT * FROM {view}")])


def differential(engine: Any, tmp_path: Path, files: int, seed: int, same: Any = None) -> dict[str, int]:
    """Read `files` random files both ways; counts of what happened."""
    rng = random.Random(seed)
    path = tmp_path / "t.csv"
    counts = {"engine": 0, "python only": 0, "refused": 0}
    for _ in range(files):
        content = random_file(rng)
        path.write_bytes(content)
        python, on_engine = python_read(path), engine_read(engine, path)
        if on_engine is None:
            counts["refused" if python[0] == "error" else "python only"] += 1
            continue
        counts["engine"] += 1
        assert python[0] == "rows", f"{content!r}: Python refuses it ({python[1]}), the engine read {on_engine}"
        if same is not None:
            python, on_engine = same(python), same(on_engine)
        assert python == on_engine, f"{content!r}\nPython: {python}\nengine: {on_engine}"
    return counts


def test_duckdb_reads_every_file_it_takes_as_python_does(tmp_path: Path) -> None:
    counts = differential(DuckDBEngine(), tmp_path, 1500, SEED)
    print(counts)
    # the engine read a good share of the files, and refused none that Python refuses
    assert counts["engine"] >= 200 and counts["refused"] >= 500, counts


def test_the_scan_does_not_depend_on_the_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Quote pairs, CRLF and UTF-8 characters split across chunks: the same verdict."""
    rng = random.Random(SEED + 1)
    path = tmp_path / "t.csv"
    differences = []
    for _ in range(400):
        content = b"".join(random_file(rng) for _ in range(rng.randint(1, 3)))
        path.write_bytes(content)
        verdicts = set()
        for size in (1, 2, 3, 5, 64, 1 << 24):
            monkeypatch.setattr(csv_dialect, "CHUNK_BYTES", size)
            scanned = csv_dialect.scan(path)
            verdicts.add(scanned.problem is None and (scanned.quoted, scanned.quoted_line_break))
        if len(verdicts) > 1:
            differences.append((content, verdicts))
    assert not differences, differences[:3]


@pytest.mark.parametrize("content, problem", [
    (b"a,b\n1,2\n", None),
    (b'a,b\n1,"x ""y"", z"\n"2\n3","w"\r', "lines do not all end alike"),
    (b'a,b\r\n1,"x\r\ny"\r\n', None),
    (b'a,b\n1,  "x"\n', "does not start a field"),
    (b'a,b\n1,x"y\n', "quote"),
    (b'a,b\n1,x"y\n2,"z"\n', "does not start a field"),
    (b'a,b\n1,"x"  \n', "after a closing quote"),
    (b'a,b\n1,"x"y\n', "after a closing quote"),
    (b'a,b\n1," x"\n', "starting with a space"),
    (b'a,b\n1,"x\n', "not closed"),
    (b"a,b\n1,\xff\n", "not UTF-8"),
    (b"a,b\n1,\xed\xa0\x80\n", "not UTF-8"),  # an encoded surrogate, which Python refuses
    (b"\xef\xbb\xbfa,b\n1,\xc3\xa9\n", None),
    (b"a,b\r\n1,2\n", "lines do not all end alike"),
    (b"a,b\n1,2\r\n", "lines do not all end alike"),
    (b"a,b\r1,2\r", "lines do not all end alike"),
    (b"a,b\n1,\x00\n", "NUL"),
    (b"\na,b\n1,2\n", "first line is blank"),
    (b'""\na,b\n', "first line is blank"),
    (b'a,"b\nc"\n1,2\n', "first line"),
    (b"", "empty"),
    (b'a,b\n1,"' + b"y\n" * 70_000 + b'"\n', "longer than Python's csv field limit"),
    (b'a,b\n1,"' + b'y""' * 44_000 + b'"\n', "longer than Python's csv field limit"),  # 88,000 characters in 132,000 bytes: left to Python
])
def test_the_scan_finds_each_construct(tmp_path: Path, content: bytes, problem: str | None) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(content)
    found = csv_dialect.scan(path).problem
    assert (found is None) if problem is None else (found is not None and problem in found), found


SPARK_REASON = spark_unavailable()


@pytest.mark.skipif(SPARK_REASON is not None, reason=f"Spark cannot run here: {SPARK_REASON}")
def test_spark_reads_every_file_it_takes_as_python_does(tmp_path: Path) -> None:
    """As for DuckDB, on fewer files (a Spark read takes about a second). Spark reads an empty
    unquoted field as missing where Python reads '': compared as one, since the schema's rules
    (`jostle.data.schema._is_missing`) and the fingerprint (`cell_text`: 'm') read them alike."""
    from jostle.data.engine.spark_engine import SparkEngine

    session = local_spark()

    def empty_as_missing(read: tuple) -> tuple:
        return read[:2] + ([tuple(None if cell == "" else cell for cell in row) for row in read[2]],)

    counts = differential(SparkEngine(session=session), tmp_path, 60, SEED + 2, empty_as_missing)
    print(counts)
    assert counts["engine"] >= 10, counts
