"""The test command works with and without pytest-xdist (issue 28: `-p no:xdist` used to fail on
the `-n auto` in addopts)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pytest(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("JOSTLE_PYTEST_WORKERS_SET", "PYTEST_XDIST_WORKER")}
    return subprocess.run([sys.executable, "-m", "pytest", *args, "--collect-only", "tests/test_budget.py", "-q"], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=300)


def test_pytest_runs_without_xdist() -> None:
    run = _pytest("-p", "no:xdist")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "bringing up nodes" not in run.stdout


def test_pytest_runs_serially_with_n_0() -> None:
    run = _pytest("-n", "0")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "bringing up nodes" not in run.stdout
