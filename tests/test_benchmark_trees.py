"""benchmarks/trees.py evaluates the ChoiceMaker the standard library ships: its metafeatures and
share are the ones `stdlib/trees.jst` declares for `chooser` (issue 27)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

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
