"""Start-up cost: a program that uses no learner and no table imports no heavy library.

A wall-clock bound would fail on a loaded machine, so the timing lives in
benchmarks/import_time.py; what is tested here is the cause of a slow start: which modules a
fresh `jostle` process imports (pandas alone took 0.37 s, scikit-learn more). Each probe runs
the command's own code path (`jostle.cli.main`) in a new interpreter and reports `sys.modules`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("pandas", "sklearn", "scipy", "joblib", "matplotlib")

PROBE = """
import json, sys
import jostle.cli
code = jostle.cli.main(sys.argv[1:])
sys.stdout.flush()
print("\\n" + json.dumps({"exit": code, "modules": sorted(sys.modules)}))
"""

NO_TABLE_PROGRAMS = {
    "print": "print(1)",
    "functions, records and loops": (
        "def square(x):\n"
        "    return x * x\n"
        "r = {a: 1, b: [1, 2, 3]}\n"
        "total = 0\n"
        "for v in r.b:\n"
        "    total = total + square(v)\n"
        "print(total, len(r.b), str(r.a))\n"),
    "stdlib stats module": "import stats\nprint(stats.clamp(5, 0, 3))\n",
}


def probe(args: list[str], cache: Path, tmp_path: Path, stdin: str | None = None) -> tuple[str, int, list[str]]:
    """Run `jostle ARGS` through `jostle.cli.main` in a fresh interpreter: output, exit, modules."""
    env = dict(os.environ, JOSTLE_CACHE=str(cache), JOSTLE_LEDGER=str(tmp_path / "ledger.sqlite"),
               JOSTLE_HISTORY=os.devnull)
    result = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=ROOT,
                            env=env, timeout=300, input=stdin)
    assert result.returncode == 0, result.stderr
    output, _, last = result.stdout.rstrip("\n").rpartition("\n")
    report = json.loads(last)
    return output.strip(), report["exit"], report["modules"]


def heavy(modules: list[str]) -> list[str]:
    return sorted({m.split(".")[0] for m in modules if m.split(".")[0] in HEAVY})


@pytest.mark.parametrize("cache_state", ["cold parser cache", "warm parser cache"])
def test_print_imports_no_heavy_library(cache_state, tmp_path):
    cache = tmp_path / "cache"
    if cache_state == "warm parser cache":
        probe(["-c", "print(0)"], cache, tmp_path)
        assert list((cache / "parser").glob("*.marshal")), "the first run should have stored the parser"
    output, code, modules = probe(["-c", "print(1)"], cache, tmp_path)
    assert (output, code) == ("1", 0)
    assert heavy(modules) == []
    assert "jostle.language.evaluator" in modules  # the probe did run a program
    assert list((cache / "parser").glob("*.marshal"))


@pytest.mark.parametrize("name", list(NO_TABLE_PROGRAMS))
def test_programs_without_tables_import_no_heavy_library(name, tmp_path):
    output, code, modules = probe(["-c", NO_TABLE_PROGRAMS[name]], tmp_path / "cache", tmp_path)
    assert code == 0, output
    assert output
    assert heavy(modules) == []


def test_run_and_check_import_no_heavy_library(tmp_path):
    program = tmp_path / "p.jst"
    program.write_text("x = [1, 2, 3]\nprint(sum(x))\n")
    output, code, modules = probe(["run", str(program)], tmp_path / "cache", tmp_path)
    assert (output, code) == ("6", 0)
    assert heavy(modules) == []
    output, code, modules = probe(["check", str(program)], tmp_path / "cache", tmp_path)
    assert (code, output.endswith(": ok")) == (0, True)
    assert heavy(modules) == []


def test_repl_imports_no_heavy_library(tmp_path):
    output, code, modules = probe(["repl"], tmp_path / "cache", tmp_path, stdin="x = 20\nprint(x + 1)\n")
    assert code == 0
    assert "21" in output
    assert heavy(modules) == []


def test_the_probe_sees_a_heavy_import(tmp_path):
    """Negative control: a program that reads a table does import pandas, and the probe says so."""
    (tmp_path / "public.csv").write_text("a,b\n1,x\n2,y\n")
    output, code, modules = probe(["-c", f'print(count(load_public("{tmp_path / "public.csv"}")))'],
                                  tmp_path / "cache", tmp_path)
    assert (output, code) == ("2", 0)
    assert heavy(modules) == ["pandas"]


def test_import_jostle_imports_no_heavy_library():
    """The library entry point (`import jostle`, `Session`) is as light as the command."""
    code = "import json, sys, jostle; print(json.dumps(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300,
                            check=True)
    assert heavy(json.loads(result.stdout)) == []
