"""How far a choice by public facts alone can take the histogram ChoiceMaker (issue 27 diagnosis).

The histogram goal is an average regret of at most 1.10 in 1D and in 2D. This script reads the
per-configuration results that `benchmarks/choicemaker_histograms.py` wrote (every fixed
algorithm's regret on every (shape, domain, scale, epsilon) configuration of DPBench's shapes)
and asks what a choice that sees only some facts of a configuration, and never its shape, could
reach. For each set of facts (epsilon; epsilon and domain; epsilon and the TRUE scale; all
three), and each held-out shape (leave-one-shape-out, as the benchmark): the algorithm with the
lowest mean regret over the other shapes' configurations with the same facts is chosen, and its
regret on the held-out configuration is counted. Knowing the true scale for free is more than
any private ChoiceMaker has (it measures a noisy size with part of its budget), so the rows that
read the scale are a ceiling for a choice by size, not a reachable figure. The ChoiceMaker's own
regret (which includes the budget its metafeatures cost) is given beside them, overall and by
scale x epsilon.

Usage:
    python benchmarks/histogram_choice_ceiling.py [--configurations CSV] [--quick]

--configurations defaults to benchmarks/results/choicemaker_histograms_configurations.csv (the
full benchmark's output; run that benchmark first on your own data to read its results here).
--quick uses the first half of the shapes of each dimensionality. Writes
benchmarks/results/histogram_choice_ceiling[_quick].json and .png. It runs in seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DEFAULT_CSV = RESULTS / "choicemaker_histograms_configurations.csv"
ALGORITHMS = ("AGrid", "AHP", "DAWA", "DAWA10", "HB", "Identity", "MWEM", "Privelet", "QuadTree", "UGrid", "Uniform")
FACT_SETS = {"epsilon": ["epsilon"], "epsilon, domain": ["epsilon", "domain"],
             "epsilon, true scale": ["epsilon", "scale"], "epsilon, true scale, domain": ["epsilon", "scale", "domain"]}


def held_out_choice_regret(table: pd.DataFrame, facts: list[str], algorithms: list[str]) -> pd.Series:
    """Per configuration: the regret of the algorithm best on average over the OTHER shapes'
    configurations with the same `facts` (leave-one-shape-out)."""
    regrets = pd.Series(np.nan, index=table.index)
    for shape in table["shape"].unique():
        held = table["shape"] == shape
        means = table[~held].groupby(facts)[algorithms].mean()
        for index, row in table[held].iterrows():
            key = tuple(row[f] for f in facts)
            chosen = means.loc[key if len(key) > 1 else key[0]].idxmin()
            regrets[index] = row[chosen]
    return regrets


def bootstrap_mean(values: pd.Series, shapes: pd.Series, resamples: int = 2000, seed: int = 0) -> list[float]:
    """95% percentile interval of the mean, resampling shapes (each with all its configurations)."""
    rng = np.random.default_rng(seed)
    groups = [values[shapes == s].to_numpy() for s in shapes.unique()]
    means = [np.concatenate([groups[i] for i in rng.integers(0, len(groups), len(groups))]).mean()
             for _ in range(resamples)]
    return [float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configurations", type=Path, default=DEFAULT_CSV)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if not args.configurations.exists():
        print(f"no results at {args.configurations}: run benchmarks/choicemaker_histograms.py first", file=sys.stderr)
        return 2
    data = pd.read_csv(args.configurations)
    report: dict = {"command": "python benchmarks/histogram_choice_ceiling.py" + (" --quick" if args.quick else ""),
                    "configurations_file": str(args.configurations.relative_to(ROOT)
                                               if args.configurations.is_relative_to(ROOT) else args.configurations),
                    "goal": 1.10, "by_dims": {}}
    for dims in sorted(data["dims"].unique()):
        table = data[data["dims"] == dims].copy()
        if args.quick:
            keep = sorted(table["shape"].unique())[: max(2, table["shape"].nunique() // 2)]
            table = table[table["shape"].isin(keep)]
        algorithms = [a for a in ALGORITHMS if a in table and table[a].notna().all()]
        table["scale_x_epsilon"] = table["scale"] * table["epsilon"]
        rows = {"ChoiceMaker (measured, pays its metafeatures)": table["ChoiceMaker"]}
        for label, facts in FACT_SETS.items():
            rows[f"best on other shapes, by {label}"] = held_out_choice_regret(table, facts, algorithms)
        best_fixed = min(algorithms, key=lambda a: table[a].mean())
        rows[f"best fixed ({best_fixed})"] = table[best_fixed]
        entry = {"shapes": int(table["shape"].nunique()), "configurations": int(len(table)), "rules": {}}
        for label, regrets in rows.items():
            entry["rules"][label] = {
                "avg_regret": float(regrets.mean()), "ci95": bootstrap_mean(regrets, table["shape"]),
                "by_scale_x_epsilon": {f"{k:g}": float(v) for k, v in regrets.groupby(table["scale_x_epsilon"]).mean().items()}}
        report["by_dims"][f"{dims}D"] = entry
    suffix = "_quick" if args.quick else ""
    out = RESULTS / f"histogram_choice_ceiling{suffix}.json"
    out.write_text(json.dumps(report, indent=2))
    plot(report, RESULTS / f"histogram_choice_ceiling{suffix}.png")
    for dims, entry in report["by_dims"].items():
        print(f"{dims} ({entry['shapes']} shapes, {entry['configurations']} configurations):")
        for label, result in entry["rules"].items():
            low, high = result["ci95"]
            print(f"  {label:55s} {result['avg_regret']:.3f} [{low:.3f}, {high:.3f}]")
    print(f"wrote {out}")
    return 0


def plot(report: dict, path: Path) -> None:
    """Average regret by scale x epsilon, one line per rule, a panel per dimensionality."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = list(report["by_dims"].items())
    figure, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.8), squeeze=False)
    for axis, (dims, entry) in zip(axes[0], panels):
        for label, result in entry["rules"].items():
            points = sorted((float(k), v) for k, v in result["by_scale_x_epsilon"].items())
            style = "-" if label.startswith("ChoiceMaker") else "--"
            axis.plot([p[0] for p in points], [p[1] for p in points], style, marker="o", markersize=3,
                      label=f"{label} ({result['avg_regret']:.2f})")
        axis.axhline(report["goal"], color="grey", linewidth=0.8, linestyle=":")
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("scale x epsilon")
        axis.set_ylabel("average regret (1 = best algorithm)")
        axis.set_title(f"{dims}: {entry['shapes']} shapes, leave one shape out")
        axis.legend(fontsize=7, loc="upper right")
    figure.suptitle("A choice from public facts (and the true scale, which no private choice has) vs the ChoiceMaker")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


if __name__ == "__main__":
    sys.exit(main())
