"""Smoke tests of benchmarks/sulq.py (issue 26) on tiny data made here (the unit tests never read
the shared data folder): the calibration table reproduces the issue's figures, an empty data
folder gives one line and exit 66, and a --quick run on a tiny CSV writes its JSON and PNG with
every learner's figures, intervals, the old-against-new verdicts and what the lecture's R cost.
diffprivlib's learners run when it is installed (the `bench` extra)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"


def _benchmark():
    sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location("sulq", BENCHMARKS / "sulq.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["sulq"] = module  # the part modules import its summarise
    spec.loader.exec_module(module)
    return module


def test_calibration_table_gives_the_issues_figures():
    table = _benchmark().calibration_table()
    row = next(r for r in table["rows"] if (r["T"], r["delta"], r["conversion"]) == (100, 1e-6, "bun_steinke"))
    assert round(row["lecture_variance"], -2) == 271_500 and round(row["lecture_sd"]) == 521
    assert round(row["zcdp_variance"]) == 2862 and round(row["zcdp_sd"], 1) == 53.5
    span = table["ratio_range"]["bun_steinke"]
    assert round(span["min_ratio"]) == 73 and round(span["max_ratio"]) == 144
    assert table["ratio_range"]["cks"]["min_ratio"] > span["min_ratio"]  # the accountant's conversion needs less


def test_an_empty_data_folder_gives_one_clear_line(tmp_path):
    env = {**os.environ, "JOSTLE_DATA": str(tmp_path)}
    result = subprocess.run([sys.executable, str(BENCHMARKS / "sulq.py"), "--quick"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 66, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("sulq.py: the UCI tables are missing: no ") and "Traceback" not in result.stderr


def _tiny_csv(folder: Path, rows: int = 600) -> None:
    import pandas as pd

    rng = np.random.default_rng(3)
    label = rng.random(rows) < 0.45
    frame = pd.DataFrame({
        "height": np.where(label, rng.normal(30, 4, rows), rng.normal(60, 4, rows)).round(1),
        "weight": np.where(label, rng.normal(10, 2, rows), rng.normal(25, 2, rows)).round(1),
        "colour": np.where(label, "red", rng.choice(["blue", "green"], rows)),
        "kind": np.where(label, "yes", "no")})
    frame.to_csv(folder / "tiny.csv", index=False)


@pytest.mark.skipif(importlib.util.find_spec("diffprivlib") is None,
                    reason="diffprivlib (the bench extra) missing: the benchmark compares with its KMeans and exits without it")
def test_quick_run_on_tiny_data_writes_every_figure(tmp_path):
    (tmp_path / "uci").mkdir()
    _tiny_csv(tmp_path / "uci")
    out = tmp_path / "sulq_smoke.json"
    has_diffprivlib = importlib.util.find_spec("diffprivlib") is not None
    _benchmark().main(["--quick", "--repetitions", "2", "--data", str(tmp_path), "--dataset", "tiny.csv:kind",
                       "--only", "calibration", "--only", "kmeans", "--only", "perceptron", "--out", str(out)])
    document = json.loads(out.read_text())
    assert out.with_suffix(".png").stat().st_size > 0
    assert document["_meta"]["repetitions"] == 2 and document["_meta"]["epsilons"] == [0.5, 1.0, 2.0]
    assert [round(b["rho"], 4) for b in document["budgets"]] == [0.0066, 0.0244, 0.0882]
    kmeans = document["kmeans"]["tables"]
    assert set(kmeans) == {"mixture_d2_k4", "mixture_d5_k5", "tiny"}
    assert kmeans["tiny"]["k"] == 2 and kmeans["tiny"]["box"] == "read from the tuning part only"
    for entry in kmeans.values():
        for key, summary in entry["summary"].items():
            assert summary["sulq_lecture"]["n"] == 2 and summary["dplloyd"]["n"] == 2
            assert summary["dplloyd"]["low"] <= summary["dplloyd"]["mean"] <= summary["dplloyd"]["high"]
            # the 2005 bound asks for far more noise than the budget needs: it spends a sliver of rho
            assert 0 < summary["lecture_rho_spent"] < summary["rho_budget"] / 10
            assert summary["variance"]["sulq_lecture"] > 10 * summary["variance"]["sulq_zcdp"]
            assert ("diffprivlib" in entry["runs"][0]) == has_diffprivlib
    perceptron = document["perceptron"]["tables"]["tiny"]
    assert perceptron["positive"] == "no" and perceptron["summary"]["2"]["nonprivate"]["mean"] > 0.95
    assert {"kmeans", "perceptron"} <= set(document["winners"])
    verdict = document["winners"]["kmeans"]
    assert len(verdict["cells"]) == 9 and verdict["sides"]


@pytest.mark.skipif(importlib.util.find_spec("diffprivlib") is None, reason="diffprivlib (the bench extra) missing")
def test_diffprivlib_is_told_its_bounds_and_learns():
    sys.path.insert(0, str(BENCHMARKS))
    import sulq_baselines

    rng = np.random.default_rng(0)
    rows = np.clip(np.concatenate([rng.normal(0.2, 0.03, (500, 2)), rng.normal(0.8, 0.03, (500, 2))]), 0, 1)
    centres = sulq_baselines.diffprivlib_kmeans(rows, 2, 5.0, seed=1)
    assert sulq_baselines.within_cluster_error(rows, centres) < 0.05
    x = np.eye(2)[(rows[:, 0] > 0.5).astype(int)]  # one-hot, norm 1
    weights = sulq_baselines.diffprivlib_logistic(x, (rows[:, 0] > 0.5).astype(int), 5.0, 1.0, seed=1)
    assert sulq_baselines.linear_accuracy(weights, x, (rows[:, 0] > 0.5).astype(int)) == 1.0
