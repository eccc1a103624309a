"""Start-up cost of the `jostle` command, as a ratio to Python's and NumPy's own start-up.

Times N fresh processes of each command, interleaved round by round (so a change in the
machine's load falls on every command alike):
  * `python -c pass`                      the interpreter alone (the floor of any command);
  * `python -c "import numpy"`            the floor of a Jostle that imports NumPy;
  * `python -m jostle -c 'print(1)'`      a program that uses no learner and no table;
  * `python -c "import jostle.cli"`       the imports alone.
and reports, for each, the median, quartiles and minimum wall time and the median CPU time
(user + system, of the child process), the machine's load average before and after, and the
ratios `jostle / numpy` and `(jostle - pass) / (numpy - pass)`.

It measures in two modes, because a Python that does not cache bytecode compiles every one of
Jostle's modules at every start:
  * "bytecode": bytecode cached (as after `pip install`): PYTHONDONTWRITEBYTECODE is cleared
    and PYTHONPYCACHEPREFIX points at a fresh folder, warmed by one untimed run;
  * "environment": the environment as given (this repository's CI sets
    PYTHONDONTWRITEBYTECODE=1, so nothing is cached there).
Both modes use a warmed parser cache (jostle.language.parser_cache) in a fresh JOSTLE_CACHE;
the cost of a cold parser cache (the first run after a grammar change) is measured separately.

Finally it runs `python -X importtime -c "import jostle.cli"` `--importtime-runs` times and
reports the median cumulative time of the largest imports, the median self time per top-level
package, and which heavy libraries (pandas, scikit-learn, SciPy, joblib, matplotlib) the
command imports (none is the goal).

Writes benchmarks/results/import_time.json.

Usage (from the repository root):
    python benchmarks/import_time.py [--runs 21] [--importtime-runs 7] [--quick]
                                     [--baseline NAME=DIR]...
`--baseline before=/path/to/old/checkout` times that checkout's `jostle -c 'print(1)'` in the
same rounds (a before/after comparison under one machine load). A checkout other than this one
is imported from its own folder (the current directory comes first on sys.path).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "import_time.json"
HEAVY = ("pandas", "sklearn", "scipy", "joblib", "matplotlib")

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c 'import numpy'": [sys.executable, "-c", "import numpy"],
    "python -m jostle -c 'print(1)'": [sys.executable, "-m", "jostle", "-c", "print(1)"],
    "python -c 'import jostle.cli'": [sys.executable, "-c", "import jostle.cli"],
}
JOSTLE = "python -m jostle -c 'print(1)'"

# Run in a fresh interpreter: the command's own code path, then the modules it left loaded.
MODULES_PROBE = """
import json, sys
import jostle.cli
code = jostle.cli.main(["-c", "print(1)"])
print(json.dumps({"exit": code, "modules": sorted(sys.modules)}))
"""


def timed_run(command: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one process; raises if it fails."""
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            errors.seek(0)
            raise RuntimeError(f"{command} failed ({process.returncode}): {errors.read().decode()}")
    return wall, usage.ru_utime + usage.ru_stime


def summary(values: list[float]) -> dict[str, float]:
    """Median, quartiles and minimum, in seconds (rounded to 0.1 ms)."""
    quartiles = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return {"median": round(statistics.median(values), 4), "q1": round(quartiles[0], 4),
            "q3": round(quartiles[2], 4), "min": round(min(values), 4)}


def time_commands(env: dict[str, str], runs: int, baselines: dict[str, Path]) -> dict:
    """Every command `runs` times, interleaved; wall and CPU summaries and the ratios.

    `baselines` adds `jostle -c 'print(1)'` run from other checkouts (name -> folder), timed in
    the same rounds, so that a before/after comparison shares the machine's load."""
    commands = {name: (command, ROOT) for name, command in COMMANDS.items()}
    for name, folder in baselines.items():
        commands[f"{JOSTLE} [{name}]"] = (COMMANDS[JOSTLE], folder)
    for command, cwd in commands.values():  # warm-up: bytecode, the parser cache, the page cache
        timed_run(command, env, cwd)
    load_before = os.getloadavg()
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, (command, cwd) in commands.items():
            wall, cpu = timed_run(command, env, cwd)
            walls[name].append(wall)
            cpus[name].append(cpu)
    load_after = os.getloadavg()
    result: dict = {"load_average_before": [round(x, 2) for x in load_before],
                    "load_average_after": [round(x, 2) for x in load_after], "commands": {}}
    for name in commands:
        result["commands"][name] = {"wall": summary(walls[name]), "cpu": summary(cpus[name])}
    for measure in ("wall", "cpu"):
        median = {name: result["commands"][name][measure]["median"] for name in COMMANDS}
        bare, numpy, jostle = median["python -c pass"], median["python -c 'import numpy'"], median[JOSTLE]
        result[f"{measure}_ratio_jostle_to_numpy"] = round(jostle / numpy, 3)
        result[f"{measure}_ratio_jostle_to_numpy_above_python"] = round((jostle - bare) / (numpy - bare), 3)
    return result


def cold_parser_cache(env: dict[str, str], runs: int) -> dict:
    """`jostle -c 'print(1)'` with an empty parser cache (it builds and writes the tables)."""
    walls = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as cache:
            walls.append(timed_run(COMMANDS[JOSTLE], dict(env, JOSTLE_CACHE=cache))[0])
    return {"runs": runs, "wall": summary(walls)}


def parse_importtime(text: str) -> dict[str, tuple[int, int]]:
    """Module -> (self, cumulative) microseconds from `-X importtime` output."""
    out = {}
    for line in text.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, cumulative, name = line[len("import time:"):].split("|")
        out[name.strip()] = (int(own), int(cumulative))
    return out


def importtime(env: dict[str, str], runs: int, top: int = 25) -> dict:
    """Median -X importtime figures of `import jostle.cli` over `runs` processes."""
    samples = []
    for _ in range(runs):
        result = subprocess.run([sys.executable, "-X", "importtime", "-c", "import jostle.cli"], cwd=ROOT,
                                env=env, capture_output=True, text=True, check=True)
        samples.append(parse_importtime(result.stderr))
    names = set.intersection(*(set(sample) for sample in samples))
    median = {name: (statistics.median(s[name][0] for s in samples), statistics.median(s[name][1] for s in samples))
              for name in names}
    by_package: dict[str, float] = {}
    for name, (own, _) in median.items():
        by_package[name.split(".")[0]] = by_package.get(name.split(".")[0], 0.0) + own
    largest = sorted(median.items(), key=lambda item: -item[1][1])[:top]
    return {
        "runs": runs,
        "note": "-X importtime adds its own overhead; compare figures with each other, not with wall times",
        "jostle.cli_cumulative_ms": round(median["jostle.cli"][1] / 1000, 1),
        "top_cumulative_ms": {name: round(cumulative / 1000, 1) for name, (_, cumulative) in largest},
        "self_ms_by_package": {name: round(own / 1000, 1)
                               for name, own in sorted(by_package.items(), key=lambda item: -item[1])[:top]},
        "jostle_self_ms": {name: round(own / 1000, 1) for name, (own, _) in
                           sorted(median.items(), key=lambda item: -item[1][0]) if name.startswith("jostle")
                           and own >= 300},
    }


def heavy_modules(env: dict[str, str]) -> dict:
    """Which heavy libraries `jostle.cli.main(["-c", "print(1)"])` leaves imported."""
    result = subprocess.run([sys.executable, "-c", MODULES_PROBE], cwd=ROOT, env=env, capture_output=True,
                            text=True, check=True)
    report = json.loads(result.stdout.strip().splitlines()[-1])
    modules = report["modules"]
    return {"heavy_imported": [h for h in HEAVY if any(m == h or m.startswith(h + ".") for m in modules)],
            "numpy_imported": "numpy" in modules, "lark_imported": "lark" in modules,
            "jostle_modules": sum(1 for m in modules if m == "jostle" or m.startswith("jostle.")),
            "modules": len(modules)}


def git_commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True)
        return head.stdout.strip() + ("+uncommitted" if dirty.stdout.strip() else "")
    except OSError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21, help="timed runs of each command per mode")
    parser.add_argument("--importtime-runs", type=int, default=7, help="-X importtime runs")
    parser.add_argument("--quick", action="store_true", help="5 runs, 3 importtime runs")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--baseline", action="append", default=[], metavar="NAME=DIR",
                        help="also time `jostle -c 'print(1)'` run from the checkout DIR (repeatable)")
    args = parser.parse_args(argv)
    baselines = {}
    for given in args.baseline:
        name, _, folder = given.partition("=")
        if not name or not folder or not (Path(folder) / "jostle" / "__init__.py").is_file():
            parser.error(f"--baseline takes NAME=DIR with DIR a Jostle checkout, got {given!r}")
        baselines[name] = Path(folder).resolve()
    runs, importtime_runs = (5, 3) if args.quick else (args.runs, args.importtime_runs)

    with tempfile.TemporaryDirectory() as pycache, tempfile.TemporaryDirectory() as cache:
        # A fresh parser cache and a ledger file of its own (the user's ledger is never touched).
        environment = dict(os.environ, JOSTLE_CACHE=cache, JOSTLE_LEDGER=str(Path(cache) / "ledger.sqlite"))
        bytecode = dict(environment, PYTHONPYCACHEPREFIX=pycache)
        bytecode.pop("PYTHONDONTWRITEBYTECODE", None)
        modes = {"bytecode": bytecode, "environment": environment}
        report: dict = {
            "what": "median wall seconds of fresh processes; see the module docstring",
            "commit": git_commit(),
            "machine": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "environment_writes_bytecode": not os.environ.get("PYTHONDONTWRITEBYTECODE"),
            "runs": runs,
            "baselines": {name: str(folder) for name, folder in baselines.items()},
            "modes": {},
        }
        for mode, env in modes.items():
            print(f"timing ({mode}) ...", file=sys.stderr)
            report["modes"][mode] = time_commands(env, runs, baselines)
            report["modes"][mode]["cold_parser_cache"] = cold_parser_cache(env, max(3, runs // 4))
        print("importtime ...", file=sys.stderr)
        report["importtime_bytecode"] = importtime(bytecode, importtime_runs)
        report["modules_after_print_1"] = heavy_modules(bytecode)

    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    for mode, figures in report["modes"].items():
        print(f"[{mode}] load {figures['load_average_before'][0]:.2f} -> {figures['load_average_after'][0]:.2f}")
        for name, figure in figures["commands"].items():
            print(f"  {name:44s} wall median {figure['wall']['median']:.3f} s "
                  f"(q1 {figure['wall']['q1']:.3f}, q3 {figure['wall']['q3']:.3f})  "
                  f"cpu median {figure['cpu']['median']:.3f} s")
        print(f"  jostle / numpy: {figures['wall_ratio_jostle_to_numpy']} (wall), "
              f"{figures['cpu_ratio_jostle_to_numpy']} (cpu); above bare python: "
              f"{figures['wall_ratio_jostle_to_numpy_above_python']} (wall)")
        print(f"  cold parser cache: {figures['cold_parser_cache']['wall']['median']:.3f} s")
    print(f"heavy libraries imported by print(1): {report['modules_after_print_1']['heavy_imported'] or 'none'}")
    print(f"wrote {args.output.relative_to(ROOT) if args.output.is_relative_to(ROOT) else args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
