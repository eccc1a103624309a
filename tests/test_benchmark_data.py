"""The benchmarks without their shared data: one clear line and a non-zero exit, never a traceback.

Each benchmark that reads public data the repository does not ship (UCI tables, DPBench shapes)
is run in a subprocess with an empty `JOSTLE_DATA` folder: it must stop at its data lookup,
before any expensive work, with ONE line on stderr naming what is missing, the folder it looked
in, the lookup order (--data, $JOSTLE_DATA, ../shared/datasets) and where to get the data. The
plots' `--replot` is checked too: it redraws a PNG from a results JSON without touching the JSON.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"

spec = importlib.util.spec_from_file_location("benchmark_data", BENCHMARKS / "benchmark_data.py")
benchmark_data = importlib.util.module_from_spec(spec)
sys.modules.setdefault("benchmark_data", benchmark_data)  # dataclasses look their module up
spec.loader.exec_module(benchmark_data)

# script -> (what its message says is missing, where to get it, files it needs)
DATA_BENCHMARKS = {
    "trees.py": ("the UCI tables", "archive.ics.uci.edu", ["nursery.csv", "mushroom.csv"]),
    "trees_learners.py": ("the UCI tables", "archive.ics.uci.edu", ["nursery.csv", "mushroom.csv"]),
    "brl.py": ("the UCI tables", "archive.ics.uci.edu", ["titanic.csv", "mushroom.csv"]),
    "sulq.py": ("the UCI tables", "archive.ics.uci.edu", ["nursery.csv", "mushroom.csv"]),
    "choicemaker_histograms.py": ("the DPBench shapes", "github.com/dpcomp-org/dpcomp_core", ["1D/*.npy"]),
    "choicemaker_synthesis.py": ("the DPBench shapes", "github.com/dpcomp-org/dpcomp_core", ["1D/*.npy"]),
    "accuracy_choicemaker.py": ("the DPBench shapes", "github.com/dpcomp-org/dpcomp_core", ["1D/*.npy"]),
}


def run(script: str, *arguments: str, data: Path | None) -> subprocess.CompletedProcess:
    """Run a benchmark with JOSTLE_DATA set to `data` (unset when None)."""
    env = {k: v for k, v in os.environ.items() if k != "JOSTLE_DATA"}
    if data is not None:
        env["JOSTLE_DATA"] = str(data)
    return subprocess.run([sys.executable, str(BENCHMARKS / script), *arguments], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("script", sorted(DATA_BENCHMARKS))
def test_an_empty_data_folder_gives_one_clear_line(script: str, tmp_path: Path) -> None:
    what, source, _ = DATA_BENCHMARKS[script]
    result = run(script, "--quick", data=tmp_path)
    assert result.returncode == benchmark_data.EXIT_NO_DATA != 0, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith(f"{script}: {what} are missing: no ")
    assert f" in {tmp_path} (from $JOSTLE_DATA;" in line  # where it looked, and why there
    assert "--data DIR, else $JOSTLE_DATA, else ../shared/datasets" in line  # the lookup order
    assert f"get them from https://{source}" in line
    assert "--dataset" not in line  # the old message blamed an option that was not passed


def test_data_given_by_option_that_does_not_exist(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    result = run("trees.py", "--data", str(missing), data=tmp_path)  # --data wins over $JOSTLE_DATA
    assert result.returncode == benchmark_data.EXIT_NO_DATA
    [line] = result.stderr.strip().splitlines()
    assert f"in {missing} (no such folder) (from --data;" in line


def test_a_partial_uci_folder_names_only_what_is_missing(tmp_path: Path) -> None:
    (tmp_path / "uci").mkdir()
    (tmp_path / "uci" / "nursery.csv").write_text("parents,class\nusual,recommend\n")
    result = run("trees_learners.py", data=tmp_path)
    assert result.returncode == benchmark_data.EXIT_NO_DATA
    [line] = result.stderr.strip().splitlines()
    assert f"in {tmp_path / 'uci'} " in line  # DIR/uci is used when it exists
    assert "nursery.csv" not in line.split(" in ")[0]
    assert "contraceptive.csv" in line and "hiv1_protease_1625.csv" in line


def test_lookup_order_and_folder_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JOSTLE_DATA", str(tmp_path / "env"))
    assert benchmark_data.data_root(str(tmp_path / "option")) == (tmp_path / "option", "from --data")
    assert benchmark_data.data_root(None) == (tmp_path / "env", "from $JOSTLE_DATA")
    monkeypatch.delenv("JOSTLE_DATA")
    assert benchmark_data.data_root(None) == (benchmark_data.DEFAULT_ROOT, "the default")
    assert benchmark_data.DEFAULT_ROOT == ROOT.parent / "shared" / "datasets"
    (tmp_path / "dpbench" / "1D").mkdir(parents=True)
    (tmp_path / "dpbench" / "1D" / "shape.npy").write_bytes(b"")
    folder = benchmark_data.require("x.py", benchmark_data.DPBENCH, str(tmp_path), ["1D/*.npy"])
    assert folder == tmp_path / "dpbench"
    # the collection folder itself can be given
    assert benchmark_data.require("x.py", benchmark_data.DPBENCH, str(tmp_path / "dpbench"),
                                  ["1D/*.npy"]) == tmp_path / "dpbench"
    with pytest.raises(SystemExit) as stopped:
        benchmark_data.require("x.py", benchmark_data.DPBENCH, str(tmp_path), ["1D/*.npy", "2D/*.npy"])
    assert stopped.value.code == benchmark_data.EXIT_NO_DATA


def test_every_benchmark_reading_shared_data_goes_through_the_lookup() -> None:
    """A benchmark reading $JOSTLE_DATA or ../shared/datasets on its own would escape the tests above."""
    for path in sorted(BENCHMARKS.glob("*.py")):
        if path.name == "benchmark_data.py":
            continue
        text = path.read_text()
        uses_lookup = "import benchmark_data" in text
        assert uses_lookup == (path.name in DATA_BENCHMARKS), path.name
        code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
        assert not re.search(r"environ[^\n]*JOSTLE_DATA", code), path.name
        assert not re.search(r"""["']shared["']\s*/\s*["']datasets["']""", code), path.name


@pytest.mark.parametrize("script, results", [("trees.py", "trees_quick.json"),
                                             ("choicemaker_histograms.py", "choicemaker_histograms_quick.json"),
                                             ("dawa_penalty.py", "dawa_penalty.json")])
def test_replot_redraws_the_png_and_leaves_the_json(script: str, results: str, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    source = BENCHMARKS / "results" / results
    copy = tmp_path / results
    shutil.copy(source, copy)
    before = copy.read_bytes()
    result = run(script, "--replot", str(copy), data=tmp_path)  # an empty data folder: replot needs none
    assert result.returncode == 0, result.stderr
    png = copy.with_suffix(".png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert copy.read_bytes() == before
    json.loads(before)
