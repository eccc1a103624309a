"""The shape of the package: its layers, no cycles between its folders, families discovered.

The layer contract lives in pyproject.toml (`[tool.importlinter]`) and docs/architecture.md
explains it. These tests
  * run `lint-imports` on the package and require every contract to be kept;
  * run it on copies of the package with one violation planted each, and require the contract
    that forbids it to break (so a contract that checks nothing would be noticed);
  * check with grimp (the import graph import-linter builds on) that the top-level folders of
    `jostle` import one another without cycles, apart from the one exception the contract names;
  * check that every folder under jostle/learners with a `family.py` is a discovered family.

grimp counts every import statement, including those inside functions: moving an import into a
function does not hide it from these checks.
"""

from __future__ import annotations

import graphlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "jostle"
CONFIG = ROOT / "pyproject.toml"


def contracts() -> dict[str, dict]:
    """The import-linter contracts of pyproject.toml, by id."""
    with CONFIG.open("rb") as handle:
        config = tomllib.load(handle)["tool"]["importlinter"]
    return {contract["id"]: contract for contract in config["contracts"]}


def lint_imports(cwd: Path, *, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run `lint-imports` with the project's contracts, from `cwd` (no cache written)."""
    script = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which(
        "lint-imports")
    assert script, "lint-imports is not installed (pip install -e '.[test]')"
    return subprocess.run([script, "--config", str(CONFIG), "--no-cache"], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300)


def test_the_contracts_are_kept() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout, result.stdout


def test_the_contracts_are_the_ones_documented() -> None:
    found = contracts()
    layers = found["layers"]
    assert layers["type"] == "layers" and layers["containers"] == ["jostle"]
    assert layers["exhaustive"] is True  # a new top-level module must be given a layer
    assert layers["layers"][1:] == ["language", "learners", "learnerkit", "choicemaker", "privacy | data",
                                    "diagnostics"]
    assert set(layers["layers"][0].replace(" ", "").split(":")) == {
        "cli", "repl", "session", "audit", "build", "__main__", "estimators"}
    # The exception is the family (and learner kit) language modules' use of the language's
    # value types, only.
    for contract in (layers, found["acyclic"]):
        assert sorted(contract["ignore_imports"]) == sorted(
            [f"jostle.learners.*.language -> jostle.language.{name}" for name in ("values", "calls", "sensitivity")]
            + [f"jostle.learnerkit.language -> jostle.language.{name}" for name in ("values", "calls")])
    assert found["acyclic"]["type"] == "acyclic_siblings"
    assert found["acyclic"]["ancestors"] == ["jostle"]
    assert found["families"]["type"] == "independence"
    assert found["value-types"]["type"] == "forbidden"


# (file to plant in, text appended to it, name of the contract that must break)
PLANTED = {
    "privacy imports the language, inside a function": (
        "privacy/noise.py", "\n\ndef _planted():\n    import jostle.language.evaluator\n",
        "Layers"),
    "the engine imports a family statically": (
        "choicemaker/engine.py", "\nimport jostle.learners.trees.builder\n", "Layers"),
    "a family language module imports the evaluator": (
        "learners/trees/language.py", "\nimport jostle.language.evaluator\n", "Layers"),
    "a new top-level module without a layer": (
        "planted_module.py", '"""Planted."""\n', "Layers"),
    "the learner kit imports a family": (
        "learnerkit/__init__.py", "\nimport jostle.learners.trees.utilities\n", "Layers"),
    "the learner kit's language module imports the evaluator": (
        "learnerkit/language.py", "\n\ndef _planted():\n    import jostle.language.evaluator\n", "Layers"),
    "one family imports another": (
        "learners/trees/utilities.py", "\nimport jostle.learners.histograms.basic\n",
        "Learner families are independent"),
    "a value type imports the engine": (
        "language/calls.py", "\nimport jostle.choicemaker.family\n",
        "Language value types stay below the learners"),
    "diagnostics imports the CLI (a cycle)": (
        "diagnostics/render.py", "\n\ndef _planted():\n    import jostle.cli\n",
        "No import cycles between the top-level folders"),
}


@pytest.mark.parametrize("case", sorted(PLANTED))
def test_a_planted_violation_breaks_its_contract(case: str, tmp_path: Path) -> None:
    relative, text, contract_name = PLANTED[case]
    shutil.copytree(PACKAGE, tmp_path / "jostle", ignore=shutil.ignore_patterns("__pycache__"))
    with (tmp_path / "jostle" / relative).open("a") as handle:
        handle.write(text)
    # The copy is found first (cwd and PYTHONPATH), before the editable install of the real one.
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    result = lint_imports(tmp_path, env=env)
    assert result.returncode != 0, result.stdout
    broken = result.stdout.split("Broken contracts", 1)[-1]
    assert contract_name in broken, result.stdout


# ---------------------------------------------------------------- cycles, with grimp directly
def pattern(expression: str) -> re.Pattern:
    """import-linter's module wildcards: `*` one name, `**` one or more names."""
    parts = [r"[^.]+(\.[^.]+)*" if part == "**" else r"[^.]+" if part == "*" else re.escape(part)
             for part in expression.split(".")]
    return re.compile(r"\.".join(parts) + r"\Z")


def folder_graph(graph: grimp.ImportGraph, root: str,
                 ignore_imports: list[str]) -> dict[str, set[str]]:
    """Top-level folder -> folders it imports from, over every direct import in `graph`.

    A folder is a child of `root` (a sub-package with everything under it, or a module); the
    root package's own `__init__` is a node of its own. Imports matching `ignore_imports`
    (`importer -> imported`, with wildcards) are left out.
    """
    ignored = [tuple(pattern(side.strip()) for side in expression.split("->"))
               for expression in ignore_imports]

    def folder(module: str) -> str:
        parts = module.split(".")
        return root if len(parts) == 1 else f"{root}.{parts[1]}"

    edges: dict[str, set[str]] = {}
    for importer in graph.modules:
        if importer.split(".")[0] != root:
            continue
        edges.setdefault(folder(importer), set())
        for imported in graph.find_modules_directly_imported_by(importer):
            if imported.split(".")[0] != root or folder(imported) == folder(importer):
                continue
            if any(a.match(importer) and b.match(imported) for a, b in ignored):
                continue
            edges[folder(importer)].add(folder(imported))
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph (a list of nodes, first repeated last), or None."""
    try:
        graphlib.TopologicalSorter(edges).prepare()
    except graphlib.CycleError as error:
        return list(error.args[1])
    return None


def test_no_import_cycles_between_the_top_level_folders() -> None:
    graph = grimp.build_graph("jostle", cache_dir=None)
    edges = folder_graph(graph, "jostle", contracts()["acyclic"]["ignore_imports"])
    assert {"jostle.language", "jostle.learners", "jostle.choicemaker", "jostle.privacy"} <= set(edges)
    cycle = find_cycle(edges)
    assert cycle is None, " -> ".join(cycle)


def test_the_cycle_check_sees_a_cycle_and_honours_the_exception() -> None:
    graph = grimp.ImportGraph()
    for module in ("pkg", "pkg.lang", "pkg.lang.values", "pkg.lang.choice", "pkg.fam",
                   "pkg.fam.one", "pkg.fam.one.language", "pkg.low"):
        graph.add_module(module)
    graph.add_import(importer="pkg.lang.choice", imported="pkg.fam.one.language")
    graph.add_import(importer="pkg.fam.one.language", imported="pkg.lang.values")
    graph.add_import(importer="pkg.lang.values", imported="pkg.low")
    cycle = find_cycle(folder_graph(graph, "pkg", []))
    assert cycle is not None and set(cycle) == {"pkg.lang", "pkg.fam"}
    exception = ["pkg.fam.*.language -> pkg.lang.values"]
    assert find_cycle(folder_graph(graph, "pkg", exception)) is None
    # The wildcard is one name: a module deeper down is not excused.
    graph.add_module("pkg.fam.one.deep.language")
    graph.add_import(importer="pkg.fam.one.deep.language", imported="pkg.lang.values")
    assert find_cycle(folder_graph(graph, "pkg", exception)) is not None


# ---------------------------------------------------------------- families are discovered
def test_every_family_folder_is_discovered() -> None:
    from jostle.choicemaker.families import discover
    from jostle.choicemaker.family import Family

    folders = {path.parent.name for path in (PACKAGE / "learners").glob("*/family.py")}
    assert {"histograms", "trees"} <= folders
    families = discover()
    assert set(families) == folders
    for name, family in families.items():
        assert isinstance(family, Family) and family.name == name
        module = __import__(f"jostle.learners.{name}.family", fromlist=["FAMILY"])
        assert module.FAMILY is family
