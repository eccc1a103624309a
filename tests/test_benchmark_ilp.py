"""Smoke test of benchmarks/ilp.py (issue 24) on tiny sizes: it runs end to end, writes its JSON
and both plots, scores the guess at the test balance, spends at most epsilon per private run,
and gives every finding a verdict."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _benchmark():
    spec = importlib.util.spec_from_file_location("benchmark_ilp", ROOT / "benchmarks" / "ilp.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_benchmark_runs_on_tiny_sizes(tmp_path, capsys):
    out = tmp_path / "ilp_smoke.json"
    assert _benchmark().main(["--sizes", "100,300", "--seeds", "2", "--test-size", "300",
                              "--levels", "3", "--skip-timing", "--out", str(out)]) == 0
    document = json.loads(out.read_text())
    assert out.with_suffix(".png").stat().st_size > 0
    assert (tmp_path / "ilp_smoke_clauses.png").stat().st_size > 0
    assert set(document["targets"]) == {"3 atoms", "6 atoms", "2 clauses of 3 atoms",
                                        "3 clauses of 3 atoms", "4 clauses of 3 atoms"}
    assert len(document["findings"]) == 6
    assert {item["verdict"] for item in document["findings"]} <= {"holds", "does not hold",
                                                                 "not evaluated"}
    for result in document["targets"].values():
        for size, runs in result["runs"].items():
            for run in runs:
                assert run["accuracy"]["guess"] == run["test_balance"]
            summary = result["sizes"][size]
            assert summary["runs"] == 2
            assert summary["full_budget_runs"]["naive"] == 2  # the naive charges sum to epsilon
            assert 0 <= summary["full_budget_runs"]["relevance"] <= 2
    assert document["targets"]["2 clauses of 3 atoms"]["rounds"] == 2
    assert "public domain knowledge" in document["meta"]["fake"]
    assert "Findings (verdicts from 95% intervals over seeds):" in capsys.readouterr().out
