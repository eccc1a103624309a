"""benchmarks/trees.py evaluates the ChoiceMaker the standard library ships: its metafeatures and
share are the ones `stdlib/trees.jst` declares for `chooser` (issue 27)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _benchmark():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location("benchmark_trees", ROOT / "benchmarks" / "trees.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return module


def test_the_benchmark_trains_the_declaration_the_standard_library_ships():
    source = (ROOT / "stdlib" / "trees.jst").read_text().replace("\\\n", " ")
    declaration = re.search(r"^choicemaker chooser among \{(.*?)\}\s+informed by \{(.*?)\}\s+trained on tree_corpus\(\) "
                            r"spending ([0-9.]+) on metafeatures", source, re.MULTILINE)
    assert declaration is not None
    metafeatures = tuple(name.strip() for name in declaration.group(2).split(","))
    benchmark = _benchmark()
    assert benchmark.CHOICEMAKER_METAFEATURES == metafeatures
    assert benchmark.CHOICEMAKER_MF_SHARE == float(declaration.group(3))
    options = [name.strip() for name in declaration.group(1).split(",")]
    assert options == list(benchmark.TREE_OPTIONS)  # the benchmark trains on all of the family's Options


def _rows(accuracies: dict[str, list[float]], chosen: list[float]) -> list[dict]:
    benchmark = _benchmark()
    rows = []
    for index, value in enumerate(chosen):
        row = {name: 0.0 for name in benchmark.TREE_OPTIONS}
        row.update({name: values[index] for name, values in accuracies.items()})
        row["choicemaker"] = {"accuracy": value}
        rows.append(row)
    return rows


def test_the_cross_fitted_gap_picks_the_best_option_on_the_other_half_of_the_splits():
    benchmark = _benchmark()
    first, second = list(benchmark.TREE_OPTIONS)[:2]
    # the first Option is best on the even splits, the second on the odd ones: each half's pick
    # is scored on the other half, where it is the worse of the two
    accuracies = {first: [0.9, 0.5, 0.9, 0.5], second: [0.5, 0.9, 0.5, 0.9]}
    chosen = np.array([0.6, 0.6, 0.6, 0.6])
    rows = _rows(accuracies, list(chosen))
    assert benchmark.cross_fitted_gap(rows, chosen) == pytest.approx(0.5 - 0.6)
    # the in-hindsight gap picks the best mean over all four splits (0.7): 0.1
    assert np.mean(accuracies[first]) - chosen.mean() == pytest.approx(0.1)
    # an Option best on both halves: the two figures agree
    accuracies = {first: [0.9, 0.8, 0.9, 0.8], second: [0.5, 0.5, 0.5, 0.5]}
    assert benchmark.cross_fitted_gap(_rows(accuracies, list(chosen)), chosen) == pytest.approx(0.85 - 0.6)


def test_the_budget_only_reference_uses_one_option_per_epsilon_for_every_table():
    benchmark = _benchmark()
    first, second = list(benchmark.TREE_OPTIONS)[:2]
    cell = lambda a, b: {**{name: 0.0 for name in benchmark.TREE_OPTIONS}, first: a, second: b,  # noqa: E731
                         "best_option": first if a >= b else second}
    results = {"one": {"1": cell(0.9, 0.8)}, "two": {"1": cell(0.6, 0.8)}, "_meta": {}}
    lines = benchmark.budget_only_reference(results, [1.0])
    # the one Option for both tables is the second (mean 0.8 against 0.75): gaps 0.1 and 0
    assert len(lines) == 2 and "mean gap 0.0500 over 2 cells" in lines[0]
