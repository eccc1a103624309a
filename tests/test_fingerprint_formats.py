"""One content digest for the same rows however they are written (issue 21: a curator's re-export
of data under a new name must be recognised, or it escapes the data's lifetime budget).

A DataFrame, the CSV file pandas writes of it and its Parquet file (DuckDB's COPY, and
pandas.to_parquet where pyarrow is installed), each read in memory and on DuckDB (and on Spark,
below, where Java is present), give one digest for every cell type a frame commonly holds:
dates, time stamps at and off midnight, in nanoseconds, with time zones, durations, float32,
float16, every integer width, booleans and missing cells. Before, a datetime column was a date
from the frame but a TIMESTAMP text ('2020-01-01 00:00:00') from Parquet, and a float32 cell
the float's exact double (0.100000001490116...) from the frame but '0.1' from its CSV file.
"""

from __future__ import annotations

import datetime
import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

duckdb = pytest.importorskip("duckdb")

from tests.conftest import local_spark  # noqa: E402
from jostle.data.engine.duckdb_engine import DuckDBEngine  # noqa: E402
from jostle.data.engine.expressions import quote  # noqa: E402
from jostle.data.engine.fingerprint import (  # noqa: E402
    _md5_halves, cell_text, engine_digest, engine_digest_v2, finish, float32_rough, float32_value, frame_digest)
from jostle.data.engine.spark_engine import spark_unavailable  # noqa: E402
from jostle.data.schema import read_csv_file  # noqa: E402
from jostle.language.binding import csv_header, read_parquet_frame  # noqa: E402

UNIT = "row"
PYARROW = importlib.util.find_spec("pyarrow") is not None


def iso(*texts: str | None) -> pd.Series:
    return pd.Series(pd.to_datetime(list(texts), format="ISO8601"))


def durations(*texts: str | None) -> pd.Series:
    return pd.Series(pd.to_timedelta(list(texts)))


# label: (a column of four cells, DuckDB writes it to Parquet, Spark reads that Parquet file)
CASES: dict[str, tuple[Any, bool, bool]] = {
    "dates": (iso("2020-01-01", "1969-12-31", None, "2000-02-29"), True, True),
    "date-times at and off midnight": (iso("2020-01-01", "2021-05-03 10:00:00.5", None, "1900-02-28 23:59:59"),
                                       True, True),
    "date-times in nanoseconds": (iso("2020-01-01", "2021-05-03 10:00:00.000000001", None, "2000-02-29")
                                  .astype("datetime64[ns]"), True, False),  # Spark reads no TIMESTAMP(NANOS)
    "time zone Europe/Paris": (iso("2020-01-01", "2021-05-03 10:00", None, "1950-07-14 23:30")
                               .dt.tz_localize("Europe/Paris"), True, True),
    "time zone UTC with a fraction": (iso("2020-01-01", "1960-01-01 12:00:00.25", None, "2038-01-19 03:14:08")
                                      .dt.tz_localize("UTC"), True, True),
    "date objects": ([datetime.date(2020, 1, 1), None, datetime.date(1970, 1, 1), datetime.date(1, 1, 1)], True, True),
    "durations": (durations("1 day", "1 hour", None, "3 days 00:00:01.5"), True, False),  # nor INTERVAL
    "negative durations": (durations("-1 hour", "-2 days", "-0.25s", None), False, False),  # DuckDB writes none
    "float32": (np.array([0.1, 1e20, np.nan, 343126.12], dtype="float32"), True, True),
    # DuckDB widens float16 to FLOAT when it writes Parquet: that file holds other numbers
    # (0.0999755859375 is not the 0.1 pandas writes of float16(0.1)), so it gets its own digest.
    "float16": (np.array([0.1, 65504, np.nan, 2.5], dtype="float16"), False, False),
    "float64 with -0.0": (np.array([1.5, np.nan, -0.0, 5e-324]), True, True),
    **{f"int{bits}": (np.array([np.iinfo(f"int{bits}").min, 0, -1, np.iinfo(f"int{bits}").max], dtype=f"int{bits}"),
                      True, True) for bits in (8, 16, 32, 64)},
    **{f"uint{bits}": (np.array([0, 1, 7, np.iinfo(f"uint{bits}").max], dtype=f"uint{bits}"), True, True)
       for bits in (8, 16, 32, 64)},
    "booleans": (np.array([True, False, True, True]), True, True),
    "nullable booleans": (pd.array([True, None, False, True], dtype="boolean"), True, True),
    "nullable integers": (pd.array([1, None, -5, 2 ** 40], dtype="Int64"), True, True),
    "texts with missing cells": (np.array(["a", None, "b", ""], dtype=object), True, True),
}


def frame_of(label: str) -> pd.DataFrame:
    values = CASES[label][0]
    return pd.DataFrame({"age": [30, 41, 25, 62], "cell": values})


def write_csv(frame: pd.DataFrame, path: Path) -> Path:
    frame.to_csv(path, index=False)
    return path


def write_parquet(frame: pd.DataFrame, path: Path) -> Path:
    connection = duckdb.connect()
    connection.register("frame", frame)
    connection.execute(f"COPY (SELECT * FROM frame) TO '{path}' (FORMAT parquet)")
    connection.close()
    return path


def digests_by_route(frame: pd.DataFrame, folder: Path, parquet: bool) -> dict[str, bytes]:
    """The digest of `frame` and of its files, by every route a binding takes (binding.py's
    dataset_digest: a frame or a file read in memory by frame_digest, a file on an engine by
    engine_digest)."""
    engine = DuckDBEngine()
    csv = write_csv(frame, folder / "export.csv")
    raw = engine.raw_csv(csv, csv_header(csv), strict=True)
    assert raw is not None  # DuckDB's reader reads these files (else Jostle's reader would)
    found = {"frame": frame_digest(frame, UNIT),
             "csv in memory": frame_digest(read_csv_file(csv).checked(), UNIT),
             "csv on duckdb": engine_digest(engine, raw, UNIT)}
    files = []
    if parquet:
        files.append(("duckdb's parquet", write_parquet(frame, folder / "export.parquet")))
        # pyarrow writes a duration as a whole number of its unit (no Parquet logical type for it),
        # which every reader reads back as that number: another value, so another digest
        if PYARROW and not pd.api.types.is_timedelta64_dtype(frame["cell"]):
            frame.to_parquet(folder / "pandas.parquet", index=False)
            files.append(("pandas' parquet", folder / "pandas.parquet"))
    for name, path in files:
        found[f"{name} in memory"] = frame_digest(read_parquet_frame(path), UNIT)
        found[f"{name} on duckdb"] = engine_digest(engine, engine.raw_parquet(path), UNIT)
    return found


@pytest.mark.parametrize("label", list(CASES))
def test_a_frame_its_csv_file_and_its_parquet_file_give_one_digest_on_every_route(label: str, tmp_path: Path) -> None:
    frame = frame_of(label)
    found = digests_by_route(frame, tmp_path, parquet=CASES[label][1])
    assert set(found.values()) == {found["frame"]}, {route: digest.hex()[:12] for route, digest in found.items()}
    assert frame_digest(frame.iloc[1:], UNIT) != found["frame"]  # a neighbour is not merged with it


def test_the_canonical_texts_of_time_stamps_and_durations() -> None:
    """The forms (module docstring of fingerprint): one text per instant or duration, and the
    texts that are neither stay as written."""
    cases = {
        "2020-01-01": "s:2020-01-01", "2020-01-01 00:00:00": "s:2020-01-01", "2020-01-01T00:00:00.000": "s:2020-01-01",
        "2020-01-01 10:00:00.500": "s:2020-01-01 10:00:00.5", "2020-01-01T10:00:00": "s:2020-01-01 10:00:00",
        "2021-05-03 10:00:00+02:00": "z:1620028800", "2021-05-03 08:00:00Z": "z:1620028800",
        "2021-05-03 09:00:00+0100": "z:1620028800", "2021-05-03 08:00:00.250+00": "z:1620028800.25",
        "1 days": "d:1", "1 days 00:00:00": "d:1", "1 day": "d:1", "-1 days +23:00:00": "d:-1 23:00:00",
        "0 days 00:00:01.500000000": "d:0 00:00:01.5", "3 days 00:00:00.000000001": "d:3 00:00:00.000000001",
        # neither: kept as written
        "02:00:00": "s:02:00:00", "2020-02-30 00:00:00+00:00": "s:2020-02-30 00:00:00+00:00",
        "2020-01-01 24:00:00": "s:2020-01-01 24:00:00", "2020-01-01 00:00:00+19:00": "s:2020-01-01 00:00:00+19:00",
        "1 days -01:00:00": "s:1 days -01:00:00", "north": "s:north", "-": "s:-",
    }
    connection = duckdb.connect()
    connection.register("t", pd.DataFrame({"t": list(cases)}))
    got = [row[0] for row in connection.execute(f"SELECT {cell_text('t', 'VARCHAR')} FROM t").fetchall()]
    assert dict(zip(cases, got)) == cases


def _float32_samples(count: int, seed: int) -> np.ndarray:
    """float32 values of every kind: random bit patterns (most need 8 or 9 digits), short
    decimals (0.1-like: few digits), short binary fractions (ties between two shortest
    candidates, as 343126.125), and the extremes."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2 ** 32, count, dtype=np.uint64).astype(np.uint32).view(np.float32)
    decimals = (rng.integers(-10 ** 6, 10 ** 6, count) / 10.0 ** rng.integers(0, 7, count)).astype(np.float32)
    binary = (rng.integers(-2 ** 24, 2 ** 24, count) * 2.0 ** rng.integers(-30, 30, count)).astype(np.float32)
    extremes = np.array([0.1, 343126.12, 65504, 16777217, 1e-45, 2 ** -126, 3.4028235e38, -0.0, 1e20],
                        dtype=np.float32)
    values = np.concatenate([bits, decimals, binary, extremes])
    return values[np.isfinite(values)]


def test_a_float_cell_is_the_shortest_decimal_numpy_and_pandas_write() -> None:
    """float32_value (SQL) against NumPy's repr, which pandas writes to CSV. DuckDB's own cast
    of a FLOAT to text is not always the shortest (343126.125 for 343126.12)."""
    values = _float32_samples(60_000, seed=21)
    connection = duckdb.connect()
    connection.register("t", pd.DataFrame({"f": values}))
    sql = float32_value("f", "CAST(f AS DOUBLE)", float32_rough("f", "duckdb"), "duckdb")
    got = np.array([row[0] for row in connection.execute(f"SELECT {sql} FROM t").fetchall()], dtype=float)
    expected = values.astype(str).astype(float)
    mismatched = np.flatnonzero(got != expected)
    assert mismatched.size == 0, [(repr(values[i]), got[i]) for i in mismatched[:5]]


def test_the_staged_query_gives_cell_texts_definition_for_the_new_kinds() -> None:
    """engine_digest computes float32 cells and time stamps in stages; cell_text, one
    expression per cell, is the definition: both give the same digest (as tests/test_engines.py
    checks for texts, numbers and booleans)."""
    frame = pd.DataFrame({
        "f": np.array([0.1, 343126.12, np.nan, -0.0, 1e20, 1e-45] * 2, dtype="float32"),
        "t": ["2020-01-01 00:00:00", "2021-05-03 10:00:00.5+02:00", "1 days 00:00:00.500", None, "x",
              "2020-01-01T12:00:00"] * 2,
        "d": pd.to_timedelta(["1 day", "-1 hour", "1.5s", None, "0s", "3 days"] * 2),
        "w": iso("2020-01-01", "2021-05-03 10:00", None, "1970-01-01", "2000-02-29", "1999-12-31 23:59:59.25",
                 "2020-01-01", "2021-05-03 10:00", None, "1970-01-01", "2000-02-29", "1999-12-31 23:59:59.25",
                 ).dt.tz_localize("UTC"),
    })
    engine = DuckDBEngine()
    raw = engine.raw_frame(frame)
    types = engine.raw_types(raw)
    assert (types["f"], types["d"]) == ("FLOAT", "INTERVAL")
    columns = sorted(frame.columns)
    cells = " || chr(31) || ".join(cell_text(quote(c), types[c]) for c in columns)
    upper, lower = _md5_halves("r", "duckdb")
    query = f"SELECT count(*), sum({upper}), sum({lower}) FROM (SELECT {cells} AS r FROM {raw})"
    rows, high, low = engine.query(query)[0]
    assert engine_digest_v2(engine, raw, UNIT) == finish(columns, int(rows), int(high), int(low), UNIT)


# ---------------------------------------------------------------- Spark
SPARK_REASON = spark_unavailable()
OFFSETS = ["Z", "+01", "+0100", "+01:00", "-05:30", "+00:09:21", "+14:00", "-12:00", "+17:59"]


# The integer kinds other than int8 and uint64 are read unchanged: not checked again on Spark.
SPARK_CASES = [label for label in CASES if not ("int" in label and label not in ("int8", "uint64"))]


@pytest.mark.skipif(SPARK_REASON is not None, reason=f"Spark cannot run here: {SPARK_REASON}")
@pytest.mark.parametrize("label", SPARK_CASES)
def test_spark_gives_the_same_digests(label: str, tmp_path: Path) -> None:
    """On Spark: the case's CSV file and Parquet file (where Spark reads it) have the frame's
    digest. (One test per case, and the float cells and instants in the next test, so that the
    test workers share this slow Spark work.)"""
    from jostle.data.engine.spark_engine import SparkEngine

    engine = SparkEngine(session=local_spark())
    _, duckdb_writes, spark_reads = CASES[label]
    frame = frame_of(label)
    csv = write_csv(frame, tmp_path / "export.csv")
    reference = frame_digest(frame, UNIT)
    assert engine_digest(engine, engine.raw_csv(csv, csv_header(csv), strict=True), UNIT) == reference, label
    if duckdb_writes and spark_reads:
        parquet = write_parquet(frame, tmp_path / "export.parquet")
        assert engine_digest(engine, engine.raw_parquet(parquet), UNIT) == reference, label


@pytest.mark.skipif(SPARK_REASON is not None, reason=f"Spark cannot run here: {SPARK_REASON}")
def test_spark_gives_float_cells_and_instants(tmp_path: Path) -> None:
    """On Spark: FLOAT cells are NumPy's shortest decimals, and every offset form
    TIMESTAMP_PATTERN admits gives DuckDB's instant (Spark's TIMESTAMP is read with its offset),
    ANSI mode or not."""
    from jostle.data.engine.spark_engine import SparkEngine

    spark = local_spark()
    engine = SparkEngine(session=spark)
    values = _float32_samples(5_000, seed=22)
    write_parquet(pd.DataFrame({"f": values}), tmp_path / "floats.parquet")
    spark.read.parquet(str(tmp_path / "floats.parquet")).createOrReplaceTempView("floats")
    stamps = [f"{day} {clock}{offset}" for day in ("2020-01-01", "0001-01-01", "9999-12-31", "1900-03-01")
              for clock in ("00:00:00", "23:59:59.123456789") for offset in OFFSETS]
    frame = pd.DataFrame({"t": stamps})
    on_duckdb = duckdb.connect()
    on_duckdb.register("t", frame)
    expected = [row[0] for row in on_duckdb.execute(f"SELECT {cell_text('t', 'VARCHAR')} FROM t").fetchall()]
    assert all(text.startswith("z:") for text in expected)
    spark.createDataFrame(frame).createOrReplaceTempView("stamps")
    for ansi in ("false", "true"):
        spark.conf.set("spark.sql.ansi.enabled", ansi)
        try:
            got = [row[0] for row in spark.sql(f"SELECT {cell_text('t', 'VARCHAR', 'spark')} FROM stamps").collect()]
            assert got == expected, ansi
            # FLOAT cells through the staged query: the digest of the same numbers as DOUBLEs
            floats = engine.raw_parquet(tmp_path / "floats.parquet")
            assert engine_digest(engine, floats, UNIT) == frame_digest(
                pd.DataFrame({"f": values.astype(str).astype(float)}), UNIT), ansi
        finally:
            spark.conf.unset("spark.sql.ansi.enabled")
