"""Smoke test of benchmarks/redescription.py (issue 25) on tiny data: it runs end to end on a planted
size and a two-view split of a CSV given with --data/--dataset (made here: the unit tests never
read the shared data folder), writes its JSON and both plots, records the protocol's measures for
every miner and budget, declares public bins from the column's range, and gives every finding a
verdict. python-clired's SplitT runs when it is installed (the `bench` extra)."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
MINERS = {"AltExpM non-robust", "AltExpM stable", "AltMCMC non-robust", "AltMCMC stable",
          "MCMCTreePair omega 0.1", "MCMCTreePair omega 0.5"}


def _benchmark():
    spec = importlib.util.spec_from_file_location("benchmark_redescription", ROOT / "benchmarks" / "redescription.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tiny_csv(folder: Path, rows: int = 240) -> None:
    import pandas as pd

    rng = np.random.default_rng(5)
    group = rng.random(rows) < 0.4
    frame = pd.DataFrame({
        "colour": np.where(group, "red", rng.choice(["blue", "green"], rows)),
        "size": np.where(group, rng.uniform(0, 30, rows), rng.uniform(0, 99, rows)).round(1),
        "shape": np.where(group, "round", rng.choice(["square", "flat", "round"], rows)),
        "noise": rng.choice(["x", "y"], rows)})
    frame.loc[0, "size"], frame.loc[1, "size"] = 0.0, 99.0  # the declared range is [0, 99]
    frame.to_csv(folder / "tiny.csv", index=False)


def test_benchmark_runs_on_tiny_data(tmp_path, capsys):
    _tiny_csv(tmp_path)
    out = tmp_path / "redescription_smoke.json"
    module = _benchmark()
    assert module.main(["--quick", "--sizes", "300", "--runs", "1,1,2", "--m", "2", "--data", str(tmp_path),
                        "--dataset", "tiny.csv:colour,size|shape,noise", "--baselines", "SplitT",
                        "--skip-timing", "--out", str(out)]) == 0
    document = json.loads(out.read_text())
    assert out.with_suffix(".png").stat().st_size > 0
    assert (tmp_path / "redescription_smoke_scatter.png").stat().st_size > 0
    assert document["meta"]["runs"] == [1, 1, 2]
    assert set(document["datasets"]) == {"planted 300", "tiny (2|2)"}
    tiny = document["datasets"]["tiny (2|2)"]
    assert tiny["n"] == 240 and tiny["kind"] == "uci"
    assert "size: numeric, 10 equal-width bins on [0, 99]" in tiny["note"]
    assert "colour: categorical, 3 values" in tiny["note"]
    for name, result in document["datasets"].items():
        assert set(result["miners"]) == MINERS
        for miner, budgets in result["miners"].items():
            assert set(budgets) == {"1.0", "0.1", "0.01"}
            assert [budgets[b]["runs"] for b in ("1.0", "0.1", "0.01")] == [1, 1, 2]
            for summary in budgets.values():
                assert 0 <= summary["runs_without_redescription"] <= summary["runs"]
                assert summary["kept"] == summary["significant"]["n"] == summary["true_jaccard"]["n"]
                share = summary["significant"]["share"]
                assert (summary["kept"] == 0 and math.isnan(share)) or 0 <= share <= 1
                assert summary["kept"] <= summary["released"]
                assert summary["seconds"]["mean"] > 0
        assert set(result["mann_whitney_greater"]["1.0"]) == MINERS
    assert "truths:" in document["datasets"]["planted 300"]["note"]
    assert len(document["findings"]) == 6
    assert {item["verdict"] for item in document["findings"]} <= {"holds", "does not hold", "not evaluated"}
    baselines = tiny["baselines"]
    if module.clired.available() is None:
        assert baselines == {} and document["meta"]["baselines"] == []
    else:
        entry = baselines["SplitT"]
        assert "skipped" in entry or "failed" in entry or entry["all"]["count"] >= entry["support_filtered"]["count"]
    assert document["timing"] == {"skipped": True}
    assert "Findings:" in capsys.readouterr().out


def test_dataset_argument_and_public_declarations():
    import argparse

    import pandas as pd

    module = _benchmark()
    assert module.parse_dataset("uci/nursery.csv:parents,form|health") == ("uci/nursery.csv", ["parents", "form"],
                                                                         ["health"])
    for bad in ("uci/nursery.csv", "uci/nursery.csv:parents,form", "x.csv:|a"):
        with pytest.raises(argparse.ArgumentTypeError):
            module.parse_dataset(bad)
    numeric, note = module.declare_column("age", pd.Series(np.arange(20, 60, dtype=float)))
    assert numeric.kind == "numeric" and numeric.edges[0] == 20 and numeric.edges[-1] == 59
    assert numeric.n_bins == module.NUMERIC_BINS
    few, _ = module.declare_column("grade", pd.Series([1, 2, 3, 2, 1]))
    assert few.kind == "categorical" and few.values == (1, 2, 3)
