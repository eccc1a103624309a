"""Shared fixtures: small deterministic private tables made here (no network, no ../shared),
and a private durable budget ledger for every test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

_WORKERS_SET = "JOSTLE_PYTEST_WORKERS_SET"


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Run on every core (`-n auto`) when pytest-xdist is loaded and no `-n` was given.

    Not in `addopts`: there it breaks `python -m pytest -p no:xdist` (an unknown option). This
    initial conftest's hook runs before xdist's own (both tryfirst; the later-registered first),
    so xdist sees the number of workers as if it had been typed.
    """
    import os

    if hasattr(config, "workerinput") or os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get(_WORKERS_SET):
        return  # a worker (or a pytest a test started) never starts workers of its own
    if config.pluginmanager.hasplugin("xdist") and getattr(config.option, "numprocesses", 0) is None:
        os.environ[_WORKERS_SET] = "1"  # inherited by the workers: the guard above
        config.option.numprocesses = "auto"
        if getattr(config.option, "dist", "no") in ("no", "load"):
            # A worker that runs out of tests takes some from the other's queue: the suite's
            # durations are very uneven (a few Spark tests and time-limited fuzzers of 20 to
            # 120 s among thousands under a second), and without stealing the last slow test
            # leaves one core idle (CI's time limit, .ci/run).
            config.option.dist = "worksteal"


# The modules of the suite's slowest tests (the audits, the time-limited fuzzers, Spark), slowest
# first; `pytest_collection_modifyitems` starts each worker on a share of them (see there).
SLOW_MODULES = (
    "tests/test_engine_row_limits.py", "tests/privacy/test_audits.py", "tests/privacy/test_neighbour_fuzz.py",
    "tests/test_fingerprint_formats.py", "tests/test_spark_engine.py", "tests/privacy/test_csv_routes.py",
    "tests/test_exotic_cells.py", "tests/test_csv_dialects.py", "tests/test_joins_spark.py",
    "tests/test_units_spark.py", "tests/privacy/test_replay_fuzz.py", "tests/test_ledger_store.py",
    "tests/test_family_conformance.py", "tests/privacy/test_redescription_audits.py",
    "tests/privacy/test_sulq_audits.py",
)


def uses_spark(item: pytest.Item) -> bool:
    """Whether a test may start a Spark driver: every such test says "spark" in its module or
    its name (a driver is a JVM of about 10 s to start and a core's worth of threads)."""
    return "spark" in item.nodeid.lower()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist, start one worker on every test that may start Spark and another on the
    other slow modules (each group slowest module first), the quick tests behind them.

    Worksteal hands each of W workers a contiguous 1/W of the collection, and a worker that
    runs out takes tests from the END of another's queue. With the slow groups at the front of
    the first two shares, they start at once, are never the ones taken, and the run ends on
    short tests; with every Spark test in one share, only one worker starts a Spark driver (two
    drivers on two cores slowed the whole run). CI's time limit (.ci/run) is why. Every worker
    sorts alike (xdist requires identical collections); a run without workers keeps the
    collected order.
    """
    if not hasattr(config, "workerinput"):
        return
    rank = {module: index for index, module in enumerate(SLOW_MODULES)}

    def key(item: pytest.Item) -> int:
        return rank.get(item.nodeid.split("::", 1)[0], len(SLOW_MODULES))

    ordered = sorted(items, key=key)  # stable: tests keep their order within a module
    spark = [item for item in ordered if uses_spark(item)]
    slow = [item for item in ordered if not uses_spark(item) and key(item) < len(SLOW_MODULES)]
    quick = [item for item in ordered if not uses_spark(item) and key(item) == len(SLOW_MODULES)]
    workers = int(config.workerinput.get("workercount", 2))
    if workers < 2:
        items[:] = spark + slow + quick
        return
    first_share = len(items) // workers  # what worksteal gives the first worker
    filler = max(0, first_share - len(spark))
    items[:] = spark + quick[:filler] + slow + quick[filler:]


PATIENT_SCHEMA = {
    "age": {"type": "numeric", "bounds": [0, 100]},
    "sex": {"type": "categorical", "values": ["F", "M"]},
    "smoker": {"type": "categorical", "values": ["yes", "no"]},
}


def make_patients(rows: int = 500, seed: int = 7) -> pd.DataFrame:
    """A synthetic table: age uniform in [0, 100], sex and smoker at random."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(0, 101, rows),
        "sex": rng.choice(["F", "M"], rows),
        "smoker": rng.choice(["yes", "no"], rows, p=[0.3, 0.7]),
    })


@pytest.fixture
def patients() -> pd.DataFrame:
    return make_patients()


@pytest.fixture(autouse=True)
def private_ledger(tmp_path_factory: pytest.TempPathFactory,
                   monkeypatch: pytest.MonkeyPatch) -> str:
    """Point every test (and every subprocess it starts) at its own, new budget ledger.

    The suite never touches ~/.local/share/jostle, and no test sees another test's spending;
    sessions *within* one test share the ledger, as sessions of one user would. (The
    reference's examples say which ledger they use; tests/test_docs.py runs them on this one.)
    """
    home = tmp_path_factory.mktemp("ledger")
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "xdg"))  # in case a test clears JOSTLE_LEDGER
    path = str(home / "ledger.sqlite")
    monkeypatch.setenv("JOSTLE_LEDGER", path)
    return path


# The test driver's JVM: C1 compilation only, one compiler thread, the serial collector. The
# tests run many short queries, for which C2's optimisation never pays back its compile time,
# and the default JVM kept about 1.5 of the machine's 2 cores busy while one xdist worker ran
# Spark tests, slowing the other worker: tests/test_spark_engine.py with the row-limit tests,
# alone, 213 core-seconds in 138 s -> 147 core-seconds in 130 s (same tests, same results).
SPARK_TEST_JVM = "-XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 -XX:+UseSerialGC"


def local_spark(app: str = "jostle-tests") -> Any:
    """A local Spark session for the tests (two threads, two shuffle partitions, no UI or
    progress bar, errors only in the log); Spark returns the running one if there is one."""
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName(app)
               .config("spark.driver.extraJavaOptions", SPARK_TEST_JVM)
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2").config("spark.default.parallelism", "2")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    return session


def spark_jostle_session(spark: Any, budget: float = 100, seed: int = 11) -> Any:
    """A Jostle Session on the Spark engine of `spark` (a local_spark session), its ledger in
    memory and what it prints kept in `.printed` (a StringIO)."""
    import io

    from jostle.session import Session

    buffer = io.StringIO()
    session = Session(budget=budget, seed=seed, ledger_path=":memory:", output=buffer, engine="spark",
                      engine_options={"spark": {"session": spark}})
    session.printed = buffer  # type: ignore[attr-defined]
    return session



@pytest.fixture(autouse=True)
def _real_run_only(request: Any, monkeypatch: Any) -> None:
    """Tests marked `real_run` audit what the real run draws and charges, step by step (a mechanism's
    draws against its charge, a ledger property over refused programs): their Sessions run without
    the dry run in front (issue 29), whose own charges and refusals would be counted with the real
    run's. The dry run is audited by its own tests (tests/test_dry_run.py,
    tests/privacy/test_dry_run_privacy.py, tests/privacy/test_issue29_attacks.py) and by the
    neighbour fuzzer in one case of four."""
    if request.node.get_closest_marker("real_run") is not None:
        monkeypatch.setenv("JOSTLE_DRY_RUN", "0")
