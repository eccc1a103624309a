"""Does the ILP ChoiceMaker choose well, and does measuring the noisy example count pay?

    python benchmarks/choicemaker_ilp.py --quick        # a few minutes on 2 cores
    python benchmarks/choicemaker_ilp.py                # the shipped ChoiceMaker's corpus and grid
    python benchmarks/choicemaker_ilp.py --target "eastbound(T) :- has_car(T, C), short(C), closed(C)."

The ILP family's ChoiceMaker (`jostle.learners.ilp`, stdlib `ilp.chooser`) chooses among the DP
ILP Options (relevance-aware reduction with l = 2, 3, 4, naive reduction, one or two clauses,
and the trivial majority theory) from public facts (k, the lattice's size, both reductions'
noise at the budget) and, when it pays, a noisy count of the examples and of the positives
(10% of the budget). It is trained on generated east/west train tasks (`ilp_corpus()`: random
target theories, each its own dataset; --target adds a theory of yours as one more dataset).

What is reported: the held-out error (1 - test accuracy, floored at 0.01 as the family scores
it) of each chooser, leave-one-target-out (--quick: 4 folds of whole targets). For each held-out
fold a ChoiceMaker is trained on the experience of the other targets, then chooses on the
held-out rows from the metafeatures released there; its error is the chosen Option's test
error on that row. Compared on the same experience (same tasks, grid, trains and noise):

  * "ChoiceMaker": trained as `jostle.choicemaker.engine` trains one (meta-model kind selected
    by an inner validation on whole targets; the "measured" and "public" modes compared and
    measuring kept only if it is clearly better: the paired payoff rule);
  * "measured": the ChoiceMaker forced to measure the noisy counts (the Option gets 90%);
  * "public only": the ChoiceMaker without the noisy metafeatures (public facts only, the whole
    budget to the Option);
  * every fixed Option (run with the whole budget), and the best of them in hindsight.

A score is the mean over held-out targets of the mean error on their rows. The experiment is
repeated with independent trains and noise (`--repetitions`, grids with other `first_rep`);
each target's errors are averaged over the repetitions, and intervals are 95% t-intervals over
the targets (the independent units: how does a ChoiceMaker do on a target it was not trained
on?), also of the paired difference "measured minus public only", which says whether measuring
paid. Everything runs on public data with the
engine's seeded simulation noise. Writes benchmarks/results/choicemaker_ilp[_quick].json and
.png (overall, and by training size).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from choicemaker_classification import interval, print_summary  # noqa: E402  (t-intervals, the summary)

from jostle.choicemaker.engine import fit_segment  # noqa: E402
from jostle.choicemaker.experience import FEATURE_PREFIX, experience_table, public_metafeatures  # noqa: E402
from jostle.choicemaker.model import (FittedMetaModel, group_folds, select_model_kind,  # noqa: E402
                                      training_matrix)
from jostle.learners.ilp.corpus import ILPTask, class_balance, ilp_corpus  # noqa: E402
from jostle.learners.ilp.family import FAMILY  # noqa: E402
from jostle.learners.ilp.task import ILPGrid  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
KINDS = ("best_fixed", "forest_regret", "knn_regret")
QUICK_TARGETS = 8
CHOOSERS = ("ChoiceMaker", "measured", "public only")


# ---------------------------------------------------------------------------------- tasks and grid
def tasks_for(quick: bool, targets: list[str] | None, n_targets: int | None, k: int) -> list[ILPTask]:
    """The corpus's targets (fewer with --quick) and each --target theory as its own dataset."""
    tasks = ilp_corpus(n_targets or (QUICK_TARGETS if quick else 16))
    if targets:
        from jostle.learners.ilp import trains

        sample = trains.generate_trains(2000, 12345, target=None)
        for index, text in enumerate(targets):
            trains.parse_target(text)  # a located error for a theory the trains cannot hold
            tasks.append(ILPTask(f"ilp:user:{index}", f"user:{index}", text, k, 4, 1000 + index,
                                 class_balance(text, sample)))
    return tasks


def grid_for(quick: bool, repetition: int) -> ILPGrid:
    """The grid of one repetition (repetition 0 is the shipped ChoiceMaker's own grid)."""
    if quick:
        return ILPGrid(sizes=(100, 1_000, 3_000), epsilons=(0.1, 1.0), repetitions=2, test_size=1_000,
                       first_rep=100 * repetition)
    return ILPGrid(first_rep=100 * repetition)


# ---------------------------------------------------------------------------------- held-out choices
def _wide(subset: pd.DataFrame, names: list[str], options: list[str]) -> pd.DataFrame:
    """The rows of `training_matrix(subset, names, ...)`, in its order, with their config columns."""
    keys = list(FAMILY.config_columns) + ["rep"]
    columns = [FEATURE_PREFIX + n for n in names]
    wide = subset.pivot_table(index=keys + columns, columns="option", values="error", aggfunc="first",
                              observed=True)
    return wide.reindex(columns=options).dropna().reset_index()


def held_out(experience: pd.DataFrame, options: list[str], features: list[Any], chooser: str,
             folds: int | None, inner: int | None) -> tuple[pd.DataFrame, dict[str, int], dict[str, int]]:
    """One row per held-out experience row: its target, training size and the chosen Option's
    error; plus how often each Option was chosen, and each mode kept (see the module docstring)."""
    group = FAMILY.group_column
    groups = np.array(sorted(experience[group].astype(str).unique()))
    rows, picked, modes = [], {}, {}
    for mask in group_folds(groups, folds):
        held = experience[group].astype(str).isin(set(groups[mask]))
        train = experience[~held]
        if chooser == "ChoiceMaker":
            kept = fit_segment(FAMILY, train, options, features, 0.1, KINDS, 1, inner)
            model, mode = kept.model, kept.mode
        else:
            mode = "measured" if chooser == "measured" else "public"
            names = [m.name for m in (features if mode == "measured" else public_metafeatures(features))]
            data = training_matrix(train[train["mode"] == mode], names, options, list(FAMILY.config_columns),
                                   FAMILY.meta_input_products, group)
            kind, _ = select_model_kind(data, KINDS, 1, inner)
            model = FittedMetaModel.fit(data, kind, 1)
        modes[mode] = modes.get(mode, 0) + 1
        names = [m.name for m in (features if mode == "measured" else public_metafeatures(features))]
        test = experience[held & (experience["mode"] == mode)]
        matrix = training_matrix(test, names, options, list(FAMILY.config_columns), FAMILY.meta_input_products,
                                 group)
        wide = _wide(test, names, options)
        X = matrix.X if model.features else np.zeros((len(matrix.X), 1))
        picks = model.choose(X)
        for index in picks:
            picked[options[int(index)]] = picked.get(options[int(index)], 0) + 1
        rows.append(pd.DataFrame({"group": matrix.groups, "train_size": wide["train_size"].to_numpy(),
                                  "error": matrix.errors[np.arange(len(picks)), picks]}))
    return pd.concat(rows, ignore_index=True), picked, modes


def fixed_rows(experience: pd.DataFrame, options: list[str]) -> pd.DataFrame:
    """Each fixed Option's errors with the whole budget (the "public" mode's runs)."""
    public = experience[experience["mode"] == "public"]
    return public[[FAMILY.group_column, "train_size", "option", "error"]].rename(
        columns={FAMILY.group_column: "group"})


def per_target(rows: pd.DataFrame) -> dict[str, float]:
    """Target -> the mean error on its rows."""
    return {str(group): float(value) for group, value in rows.groupby("group")["error"].mean().items()}


def run_repetition(repetition: int, tasks: list[ILPTask], args: argparse.Namespace) -> dict[str, Any]:
    """Every chooser's held-out error per target in one repetition (overall, and per size)."""
    option_objects = list(FAMILY.options().values())
    options = [o.name for o in option_objects]
    features = [FAMILY.metafeatures()[name] for name in FAMILY.default_metafeatures]
    grid = grid_for(args.quick, repetition)
    start = time.perf_counter()
    experience = experience_table(FAMILY, option_objects, features, tasks, grid, 0.1, args.cache_dir, args.n_jobs,
                                  progress=False)
    seconds = time.perf_counter() - start
    folds = args.folds if args.folds else (4 if args.quick else None)
    targets, by_size, picks, modes = {}, {}, {}, {}
    for chooser in CHOOSERS:
        rows, picks[chooser], modes[chooser] = held_out(experience, options, features, chooser, folds, 4)
        targets[chooser] = per_target(rows)
        by_size[chooser] = {int(size): per_target(part) for size, part in rows.groupby("train_size")}
    for option, part in fixed_rows(experience, options).groupby("option"):
        targets[f"fixed {option}"] = per_target(part)
        by_size[f"fixed {option}"] = {int(size): per_target(p) for size, p in part.groupby("train_size")}
    scores = {name: float(np.mean(list(values.values()))) for name, values in targets.items()}
    print(f"repetition {repetition}: experience {len(experience)} runs in {seconds:.0f} s; " +
          ", ".join(f"{name} {scores[name]:.4f}" for name in CHOOSERS) +
          f"; the ChoiceMaker kept {modes['ChoiceMaker']} and picked {picks['ChoiceMaker']}")
    return {"scores": scores, "targets": targets, "by_size": by_size, "picks": picks, "modes": modes,
            "experience_seconds": seconds, "experience_runs": int(len(experience))}


# ---------------------------------------------------------------------------------- summary
def target_means(runs: list[dict[str, Any]], name: str, size: int | None = None) -> pd.Series:
    """Per target, the chooser's error averaged over the repetitions (the targets are the
    independent units: the question is how a ChoiceMaker does on a target it was not trained on)."""
    frames = [pd.Series(run["targets"][name] if size is None else run["by_size"][name][size]) for run in runs]
    return pd.concat(frames, axis=1).mean(axis=1)


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    names = list(runs[0]["targets"])
    means = {name: target_means(runs, name) for name in names}
    summary = {name: interval(list(values)) for name, values in means.items()}
    fixed = pd.concat({n: means[n] for n in names if n.startswith("fixed ")}, axis=1)
    best = str(fixed.columns[int(np.argmin(fixed.mean(axis=0)))])
    summary["best fixed Option (hindsight)"] = {**interval(list(fixed[best])), "option": best}
    for name in names:  # paired by target: the spread of the targets' difficulty cancels
        if name != "ChoiceMaker":
            summary[f"{name} minus ChoiceMaker"] = interval(list(means[name] - means["ChoiceMaker"]))
    summary["measured minus public only"] = interval(list(means["measured"] - means["public only"]))
    summary["ChoiceMaker minus public only"] = interval(list(means["ChoiceMaker"] - means["public only"]))
    summary["ChoiceMaker minus best fixed (hindsight)"] = interval(list(means["ChoiceMaker"] - fixed[best]))
    return summary


def size_summary(runs: list[dict[str, Any]]) -> dict[str, dict[int, dict[str, float]]]:
    return {name: {int(size): interval(list(target_means(runs, name, size))) for size in sizes}
            for name, sizes in runs[0]["by_size"].items()}


# ---------------------------------------------------------------------------------- output
def plot(results: dict[str, Any], path: Path) -> None:
    """Left: held-out error of every chooser with its 95% interval; right: by training size."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary, sizes = results["summary"], results["by_size"]
    fixed = sorted((k for k in summary if k.startswith("fixed ") and " minus " not in k),
                   key=lambda k: summary[k]["mean"])
    order = [*CHOOSERS, "best fixed Option (hindsight)", *fixed]
    colours = {"ChoiceMaker": "black", "measured": "tab:blue", "public only": "tab:orange",
               "best fixed Option (hindsight)": "tab:purple"}
    figure, (left, right) = plt.subplots(1, 2, figsize=(14, 0.36 * len(order) + 3.2),
                                         gridspec_kw={"width_ratios": [1.1, 1]})
    reference = summary["ChoiceMaker"]["mean"]
    for row, name in enumerate(order):
        # paired by target: each chooser's error minus the ChoiceMaker's (0 for the ChoiceMaker)
        key = summary["best fixed Option (hindsight)"]["option"] if name.startswith("best ") else name
        item = summary.get(f"{key} minus ChoiceMaker", {"mean": 0.0, "low": float("nan"), "high": float("nan")})
        low, high = item["low"], item["high"]
        error = None if not np.isfinite(low) else [[item["mean"] - low], [high - item["mean"]]]
        left.errorbar(item["mean"], row, xerr=error, fmt="o", color=colours.get(name, "0.55"), capsize=4,
                      ms=8 if name in colours else 6, lw=2 if name in colours else 1)
        left.annotate(f"{summary[name]['mean']:.3f}", (1.0, row), xycoords=("axes fraction", "data"),
                      xytext=(4, 0), textcoords="offset points", va="center", fontsize=8)
    left.axvline(0.0, color="black", lw=0.8, ls=":")
    left.set_yticks(range(len(order)))
    left.set_yticklabels([f"fixed: {name[6:]}" if name.startswith("fixed ") else
                          f"best fixed in hindsight ({summary[name]['option'][6:]})" if name.startswith("best ") else
                          name for name in order])
    left.invert_yaxis()
    left.set_xlabel(f"held-out error minus the ChoiceMaker's ({reference:.3f}), paired by target\n"
                    "(right margin: mean held-out error, 1 - test accuracy; lower is better)")
    left.grid(alpha=0.3, axis="x")
    shown = [*CHOOSERS, "fixed ILPTrivial", summary["best fixed Option (hindsight)"]["option"]]
    for name in dict.fromkeys(shown):
        points = sorted((int(size), item) for size, item in sizes[name].items())
        xs = [size for size, _ in points]
        means = np.array([item["mean"] for _, item in points])
        lows = np.array([item["low"] for _, item in points])
        highs = np.array([item["high"] for _, item in points])
        colour = colours.get(name, "tab:green" if name == "fixed ILPTrivial" else "tab:red")
        right.plot(xs, means, "o-", color=colour, label=f"fixed: {name[6:]}" if name.startswith("fixed ") else name)
        if np.all(np.isfinite(lows)):
            right.fill_between(xs, lows, highs, color=colour, alpha=0.12)
    right.set_xscale("log")
    right.set_xlabel("training trains")
    right.set_ylabel("held-out error (mean over targets)")
    right.grid(alpha=0.3)
    right.legend(fontsize=8)
    meta = results["meta"]
    paid = summary["measured minus public only"]
    held = "leave-one-target-out" if not meta["folds"] else f"{meta['folds']} folds of whole targets"
    verdict = ("measuring paid" if paid["high"] < 0 else "measuring did not pay" if paid["low"] > 0
               else "measuring neither clearly paid nor clearly cost")
    figure.suptitle(f"The ILP ChoiceMaker: {meta['tasks']} generated targets, {held}, epsilon "
                    f"{meta['epsilons']}, {meta['repetitions']} repetitions (95% intervals over targets)\n"
                    f"measured minus public only: {paid['mean']:+.4f} [{paid['low']:+.4f}, {paid['high']:+.4f}]: "
                    f"{verdict}; the ChoiceMaker kept the measured mode in {meta['measured_share']:.0%} of its folds",
                    fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="8 targets, 3 sizes, 2 epsilons, 4 folds")
    parser.add_argument("--target", "--dataset", action="append", default=None, metavar="THEORY", dest="target",
                        help="a target theory over the trains' predicates, added as its own dataset")
    parser.add_argument("--k", type=int, default=10, help="the fake example's k for --target theories")
    parser.add_argument("--n-targets", type=int, default=None, help="corpus targets (default 16; 8 with --quick)")
    parser.add_argument("--repetitions", type=int, default=None, help="default 3")
    parser.add_argument("--folds", type=int, default=None,
                        help="held-out folds of whole targets (default: one per target; 4 with --quick)")
    parser.add_argument("--n-jobs", type=int, default=-1, help="processes for the experience (default all)")
    parser.add_argument("--cache-dir", default=None, help="default $JOSTLE_CACHE or ~/.cache/jostle")
    parser.add_argument("--output", default=None, help="results path without suffix")
    parser.add_argument("--replot", metavar="JSON", help="only resummarise a results file and redraw its PNG")
    args = parser.parse_args(argv)
    if args.replot:  # summaries recomputed from the stored runs, then redrawn
        results = json.loads(Path(args.replot).read_text())
        results["summary"], results["by_size"] = summarise(results["runs"]), size_summary(results["runs"])
        Path(args.replot).write_text(json.dumps(results, indent=1, default=float))
        plot(results, Path(args.replot).with_suffix(".png"))
        return results
    start = time.perf_counter()
    repetitions = args.repetitions or 3
    tasks = tasks_for(args.quick, args.target, args.n_targets, args.k)
    grid = grid_for(args.quick, 0)
    print(f"{len(tasks)} targets; sizes {grid.sizes}; epsilons {grid.epsilons}; {repetitions} repetitions")
    runs = [run_repetition(r, tasks, args) for r in range(repetitions)]
    summary = summarise(runs)
    print_summary(summary, "targets (averaged over repetitions)", 44)
    output = Path(args.output) if args.output else RESULTS / ("choicemaker_ilp_quick" if args.quick
                                                             else "choicemaker_ilp")
    output.parent.mkdir(parents=True, exist_ok=True)
    kept = sum(run["modes"]["ChoiceMaker"].get("measured", 0) for run in runs)
    total = sum(sum(run["modes"]["ChoiceMaker"].values()) for run in runs)
    results = {
        "meta": {"quick": args.quick, "tasks": len(tasks), "targets": [t.target for t in tasks],
                 "sizes": list(grid.sizes), "epsilons": list(grid.epsilons), "options": list(FAMILY.options()),
                 "metafeatures": list(FAMILY.default_metafeatures), "repetitions": repetitions,
                 "folds": args.folds or (4 if args.quick else None), "measured_share": kept / max(total, 1),
                 "seconds": round(time.perf_counter() - start, 1),
                 "command": "python benchmarks/choicemaker_ilp.py " + " ".join(argv or sys.argv[1:])},
        "summary": summary,
        "by_size": size_summary(runs),
        "runs": runs,
    }
    output.with_suffix(".json").write_text(json.dumps(results, indent=1, default=float))
    plot(results, output.with_suffix(".png"))
    print(f"\nwrote {output.with_suffix('.json')} and .png in {results['meta']['seconds']:.0f} s")
    return results


if __name__ == "__main__":
    main()
