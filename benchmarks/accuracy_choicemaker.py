"""Coverage of the ChoiceMakers' predicted-error intervals on data their corpora did not include.

    python benchmarks/accuracy_choicemaker.py --quick            # under a minute on one core
    python benchmarks/accuracy_choicemaker.py                    # the full grid (a few minutes)
    python benchmarks/accuracy_choicemaker.py --data DIR --dataset nursery.csv:class

Issue 29: a dispatch returns the chosen Option's predicted error with a 95% interval
(`jostle.choicemaker.error_estimates`; the interval is issue 27's, from held-out residuals on the
public corpus). This measures how often the realised error of the chosen Option falls inside it,
per family, with the shipped ChoiceMakers of the standard library used AS SHIPPED (never
retrained: if a shipped model does not match the code, the benchmark stops and says so):

  * histograms (`histograms.chooser`, 1D, and `histograms.chooser_2d`): DPBench's shapes
    (DIR/dpbench/1D, 2D), none of which is in the bundled corpus of shapes it was trained on;
  * trees (`trees.chooser`) and rule lists (`brl.chooser`): the UCI tables under DIR/uci (none
    is in `classification_corpus()`, which holds R and scikit-learn tables and synthetic tasks;
    checked below by name), split train/test with seeds the training grid never used.
Each input (shape or table, budget, size, seed) is dispatched through the engine's one
`dispatch` (uncharged, on public data, with the family's seeded simulation noise) and the chosen
Option's result is scored by the family's own error measure on that instance (the same
`option_error` the experience table uses: scaled L1 for a histogram, 1 - test accuracy or 1 - AUC
for a classifier). A run is covered when low <= realised error <= high.

Also measured, beside it: the coverage of the estimate before measuring (what the cost report
shows, `estimate_error(trained, None, budget, size)`: the expected error of the best fixed
Option at the nearest grid budget, with the spread of the corpus's runs there).

Intervals: Wilson 95% score intervals of the share of covered runs. Runs of one input share a
shape or table, so they are not independent: the Wilson interval is narrower than an honest
one; the per-input range of coverage is reported beside it. DPBench shapes and UCI tables never
chose a design parameter here. Writes benchmarks/results/accuracy_choicemaker[_quick].json and
.png. `run(quick, data, datasets)` returns the results dict (benchmarks/accuracy.py calls it).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import benchmark_data  # noqa: E402

import pandas as pd  # noqa: E402

from jostle.choicemaker import dispatch  # noqa: E402
from jostle.choicemaker.budgets import as_budget, budget_float  # noqa: E402
from jostle.choicemaker.error_estimates import estimate_error, size_column  # noqa: E402
from jostle.choicemaker.family import stable_seed  # noqa: E402
from jostle.choicemaker.pretrained import load_shipped, request_key  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
UCI_TABLES = ["hiv1_protease_746.csv:cleaved", "hiv1_protease_1625.csv:cleaved", "hiv1_protease_impens.csv:cleaved",
              "hiv1_protease_schilling.csv:cleaved", "contraceptive.csv:contraceptive_method",
              "mushroom.csv:edibility", "nursery.csv:class", "titanic.csv:Survived"]
QUICK_UCI = UCI_TABLES[:1] + UCI_TABLES[4:7]
FAMILIES = {  # label -> (stdlib ChoiceMaker, data)
    "histograms 1D": ("histograms.chooser", "dpbench1"),
    "histograms 2D": ("histograms.chooser_2d", "dpbench2"),
    "trees": ("trees.chooser", "uci"),
    "rule lists": ("brl.chooser", "uci"),
}


def wilson(hits: int, runs: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a share hits / runs (95% by default)."""
    if runs == 0:
        return (math.nan, math.nan)
    share = hits / runs
    centre = (share + z * z / (2 * runs)) / (1 + z * z / runs)
    half = z * math.sqrt(share * (1 - share) / runs + z * z / (4 * runs * runs)) / (1 + z * z / runs)
    return (max(0.0, centre - half), min(1.0, centre + half))


def shipped(label: str) -> Any:
    """The shipped ChoiceMaker of a standard-library declaration, as shipped (never trained here)."""
    from jostle.build import standard_choicemakers

    makers = dict(standard_choicemakers())
    maker = makers[label]
    family = maker.family
    options, metafeatures = maker.engine_parts()
    grid = maker.grid or family.default_grid()
    corpus = list(maker.corpus.corpus)
    key = request_key(family, options, metafeatures, corpus, grid, float(maker.share))
    trained = load_shipped(family, key, options, metafeatures, float(maker.share))
    if trained is None:
        raise SystemExit(f"accuracy_choicemaker.py: the shipped model of {label} does not match the code "
                         f"(request key {key}); this benchmark never retrains: run `jostle train --all` first")
    return trained, corpus


def missing_data(kind: str, quick: bool, data: str | None, datasets: list[str] | None) -> str:
    """The one-line message when a family's held-out data is absent ("" when it is there).
    Checked before the shipped model and its corpus are loaded, which takes tens of seconds."""
    root, origin = benchmark_data.data_root(data)
    if kind.startswith("dpbench"):
        folder = benchmark_data.collection_folder(root, benchmark_data.DPBENCH)
        dims = int(kind[-1])
        if not any((folder / f"{dims}D").glob("*.npy")):
            return benchmark_data.missing_data_line("accuracy_choicemaker.py", benchmark_data.DPBENCH,
                                                    [f"{dims}D/*.npy"], folder, origin)
        return ""
    folder = benchmark_data.collection_folder(root, benchmark_data.UCI)
    wanted = datasets or (QUICK_UCI if quick else UCI_TABLES)
    missing = [spec.partition(":")[0] for spec in wanted if not (folder / spec.partition(":")[0]).is_file()]
    if missing:
        return benchmark_data.missing_data_line("accuracy_choicemaker.py", benchmark_data.UCI, missing, folder, origin)
    return ""


def tasks_for(kind: str, quick: bool, data: str | None, datasets: list[str] | None,
              corpus: list[Any]) -> tuple[list[Any], str]:
    """The held-out inputs of a family, whose data `missing_data` found present ([] and a reason
    when every input is in the training corpus)."""
    root, _ = benchmark_data.data_root(data)
    if kind.startswith("dpbench"):
        from jostle.learners.histograms.corpus import dpbench_corpus

        folder = benchmark_data.collection_folder(root, benchmark_data.DPBENCH)
        dims = int(kind[-1])
        shapes = list(dpbench_corpus(folder, dims))
        trained_on = {getattr(t, "name", "") for t in corpus}
        shapes = [s for s in shapes if s.name not in trained_on]
        return (shapes[::2] if quick else shapes), ""
    from trees import load_dataset

    folder = benchmark_data.collection_folder(root, benchmark_data.UCI)
    wanted = datasets or (QUICK_UCI if quick else UCI_TABLES)
    trained_on = {getattr(t, "group", "") for t in corpus} | {getattr(t, "name", "") for t in corpus}
    tables = []
    for spec in wanted:
        task, _ = load_dataset(folder, spec)
        if task.name in trained_on or task.group in trained_on:
            print(f"  {spec}: in the training corpus, left out")
            continue
        tables.append(task)
    return tables, ""


def grid_for(kind: str, quick: bool) -> Any:
    """Budgets, sizes and seeds (first_rep far from training's, so every draw is new)."""
    if kind.startswith("dpbench"):
        from jostle.learners.histograms.task import TrainingGrid

        epsilons = (0.1, 1.0) if quick else (0.01, 0.05, 0.1, 0.3, 1.0)
        scales = (1_000, 100_000) if quick else (1_000, 10_000, 100_000, 1_000_000)
        return TrainingGrid(scales=scales, domains_1d=(256,) if quick else (256, 1024),
                            domains_2d=(32,) if quick else (32, 64), epsilons=epsilons,
                            repetitions=3, first_rep=7_000)
    from jostle.learnerkit.grids import SplitGrid

    epsilons = (0.1, 1.0) if quick else (0.05, 0.1, 0.3, 1.0, 3.0)
    return SplitGrid(epsilons=epsilons, repetitions=5 if quick else 8, first_rep=7_000)


def run_family(label: str, quick: bool, data: str | None, datasets: list[str] | None) -> dict[str, Any]:
    """Dispatch on every held-out input of one family and score the stated intervals."""
    declared, kind = FAMILIES[label]
    absent = missing_data(kind, quick, data, datasets)
    if absent:  # reported by `run`: one line when no family has data
        return {"family": label, "skipped": absent, "missing_data": True}
    trained, corpus = shipped(declared)
    tasks, missing = tasks_for(kind, quick, data, datasets, corpus)
    if not tasks:
        return {"family": label, "skipped": missing or "no held-out input", "missing_data": False}
    family, grid = trained.family, grid_for(kind, quick)
    options = list(trained.options.values())
    runs, start = [], time.perf_counter()
    instances = [instance for task in tasks for _, piece in family.pieces(task, grid, options)
                 for instance in family.instances(task, piece, grid)]
    sizes = size_column(family, pd.DataFrame([instance.columns for instance in instances]))
    for instance in instances:
        noise = family.simulation_noise(stable_seed(*instance.seed_parts, "coverage"))
        result = dispatch(trained, instance.data, instance.budget, uncharged=True, noise=noise,
                          name=declared)
        realised = float(family.option_error(trained.options[result.choice], instance, result.result))
        stated = result.estimate
        size = instance.columns.get(sizes) if sizes else None  # a public size bound: the true size
        before = estimate_error(trained, None, instance.budget, size, name=declared)
        runs.append({"input": str(instance.columns[family.config_columns[0]]),
                     "epsilon": budget_float(as_budget(instance.budget)), "size": size, "choice": result.choice,
                     "realised": realised, "predicted": stated.value, "low": stated.low,
                     "high": stated.high, "confidence": stated.confidence,
                     "covered": bool(stated.low <= realised <= stated.high),
                     "before_value": before.value, "before_low": before.low, "before_high": before.high,
                     "before_covered": bool(before.low <= realised <= before.high)})
    return summarise(label, declared, trained, runs, time.perf_counter() - start)


def summarise(label: str, declared: str, trained: Any, runs: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    """Coverage with its Wilson interval, misses above and below, per budget and per input."""
    n = len(runs)
    hits = sum(r["covered"] for r in runs)
    before = sum(r["before_covered"] for r in runs)
    per_input: dict[str, list[bool]] = {}
    per_budget: dict[float, list[bool]] = {}
    for r in runs:
        per_input.setdefault(r["input"], []).append(r["covered"])
        per_budget.setdefault(r["epsilon"], []).append(r["covered"])
    shares = [sum(v) / len(v) for v in per_input.values()]
    ratio = [r["high"] / r["low"] for r in runs if r["low"] > 0]
    return {
        "family": label, "choicemaker": declared, "error_measure": trained.family.error_measure,
        "error_name": trained.family.error_name, "runs": n, "inputs": len(per_input),
        "coverage": hits / n, "wilson95": wilson(hits, n),
        "above_high": sum(r["realised"] > r["high"] for r in runs) / n,
        "below_low": sum(r["realised"] < r["low"] for r in runs) / n,
        "median_high_over_low": float(sorted(ratio)[len(ratio) // 2]) if ratio else None,
        "per_input_coverage_range": [min(shares), max(shares)],
        "per_budget": {f"{e:g}": {"runs": len(v), "coverage": sum(v) / len(v), "wilson95": wilson(sum(v), len(v))}
                       for e, v in sorted(per_budget.items())},
        "before_measuring_coverage": before / n, "before_measuring_wilson95": wilson(before, n),
        "seconds": round(seconds, 1), "runs_detail": runs,
    }


def plot(results: dict[str, Any], path: Path) -> None:
    """Coverage per family (Wilson intervals, the 95% target) and realised against predicted."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    done = [r for r in results["families"] if "coverage" in r]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    for index, r in enumerate(done):
        for offset, key, wkey, colour, name in ((-0.15, "coverage", "wilson95", "tab:blue", "after measuring"),
                                                (0.15, "before_measuring_coverage", "before_measuring_wilson95",
                                                 "tab:orange", "before (cost report)")):
            low, high = r[wkey]
            left.errorbar(index + offset, r[key], yerr=[[max(r[key] - low, 0.0)], [max(high - r[key], 0.0)]], fmt="o", color=colour,
                          capsize=4, label=name if index == 0 else None)
    left.axhline(0.95, color="grey", linestyle="--", label="stated 95%")
    left.set_xticks(range(len(done)), [f"{r['family']}\n({r['runs']} runs)" for r in done])
    left.set_ylim(0.6, 1.02)
    left.set_ylabel("share of runs inside the stated interval")
    left.set_title("Coverage of the predicted-error intervals (held-out data)")
    left.legend(loc="lower left", fontsize=8)
    for r in done:
        xs = [max(x["predicted"], 1e-6) for x in _runs(r)]
        ys = [max(x["realised"], 1e-6) for x in _runs(r)]
        right.scatter(xs, ys, s=6, alpha=0.4, label=r["family"])
    lims = [1e-6, 2.0]
    right.plot(lims, lims, color="grey", linewidth=0.8)
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("predicted error of the chosen Option")
    right.set_ylabel("realised error")
    right.set_title("Realised against predicted (each family's measure)")
    right.legend(fontsize=8, markerscale=3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _compact(results: dict[str, Any]) -> dict[str, Any]:
    """Each family's runs as one header and rows of values (the results file stays small)."""
    families = []
    for family in results["families"]:
        runs = family.get("runs_detail")
        if runs:
            columns = list(runs[0])
            family = {**family, "runs_detail": {"columns": columns, "rows": [[r[c] for c in columns] for r in runs]}}
        families.append(family)
    return {**results, "families": families}


def _runs(family: dict[str, Any]) -> list[dict[str, Any]]:
    """A family's runs, from either form (`_compact`)."""
    runs = family["runs_detail"]
    return [dict(zip(runs["columns"], row)) for row in runs["rows"]] if isinstance(runs, dict) else runs


def _rounded(value: Any) -> Any:
    """Floats to 5 significant digits (the results file stays small)."""
    if isinstance(value, float):
        return float(f"{value:.5g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return value


def run(quick: bool = True, data: str | None = None, datasets: list[str] | None = None,
        write: bool = True) -> dict[str, Any]:
    """Measure every family; write the JSON and PNG (unless `write` is False); return the results."""
    start = time.perf_counter()
    results = {"quick": quick, "command": "python benchmarks/accuracy_choicemaker.py" + (" --quick" if quick else ""),
               "families": []}
    for label in FAMILIES:
        print(f"{label} ...", flush=True)
        results["families"].append(run_family(label, quick, data, datasets))
    skipped = [family for family in results["families"] if "skipped" in family]
    if len(skipped) == len(results["families"]) and all(f.get("missing_data") for f in skipped):
        print(skipped[0]["skipped"], file=sys.stderr)  # no data at all: one clear line, nothing written
        raise SystemExit(benchmark_data.EXIT_NO_DATA)
    for family in skipped:
        print(family["skipped"] if family.get("missing_data") else f"{family['family']}: {family['skipped']}",
              file=sys.stderr)
    results["seconds"] = round(time.perf_counter() - start, 1)
    if write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        stem = "accuracy_choicemaker" + ("_quick" if quick else "")
        (RESULTS / f"{stem}.json").write_text(json.dumps(_rounded(_compact(results)), default=float))
        plot(results, RESULTS / f"{stem}.png")
    return results


def table(results: dict[str, Any]) -> str:
    """The coverage table as text."""
    lines = [f"{'family':15} {'runs':>5} {'coverage':>9} {'Wilson 95%':>16} {'above':>6} {'below':>6} "
             f"{'per input':>12} {'before':>7}"]
    for r in results["families"]:
        if "coverage" not in r:
            lines.append(f"{r['family']:15} skipped: {r['skipped']}")
            continue
        low, high = r["wilson95"]
        lines.append(f"{r['family']:15} {r['runs']:5d} {r['coverage']:9.3f} {f'[{low:.3f}, {high:.3f}]':>16} "
                     f"{r['above_high']:6.3f} {r['below_low']:6.3f} "
                     f"{'{:.2f}-{:.2f}'.format(*r['per_input_coverage_range']):>12} "
                     f"{r['before_measuring_coverage']:7.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer inputs, budgets and seeds")
    parser.add_argument("--data", default=None, help="folder holding dpbench/ and uci/ (default $JOSTLE_DATA, "
                                                     "else ../shared/datasets)")
    parser.add_argument("--dataset", action="append", default=None,
                        help="FILE:TARGET, a CSV under the data folder's uci/ (repeatable; default: every table)")
    args = parser.parse_args(argv)
    results = run(args.quick, args.data, args.dataset)
    print(table(results))
    print(f"({results['seconds']} s)")
    return results


if __name__ == "__main__":
    main()
