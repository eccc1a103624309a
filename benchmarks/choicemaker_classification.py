"""A ChoiceMaker across families: tree learners and rule lists on one public corpus.

    python benchmarks/choicemaker_classification.py --quick          # minutes, on one core
    python benchmarks/choicemaker_classification.py                  # the full grid
    python benchmarks/choicemaker_classification.py --data DIR --dataset nursery.csv:class

One ChoiceMaker chooses among Options of two families, the private decision trees
(`jostle.learners.trees`) and the private Bayesian rule lists (`jostle.learners.brl`), trained
on ONE public corpus (`jostle.learnerkit.corpus.classification_corpus`, plus the --dataset
tables, each its own dataset) and one grid, through the engine's `CombinedFamily`: each Option
runs through its own family, every Option's result is scored by the one error measure both
families offer (1 - test accuracy), and the metafeatures are the shared classification set.

What is reported: the held-out error of each chooser, leave-one-dataset-out (LODO; --quick: k
folds of whole datasets). For each held-out fold, a ChoiceMaker is trained on the experience of
the other datasets exactly as `jostle.choicemaker.engine` trains one (meta-model kind selected
by an inner validation on whole datasets, the "public" and "measured" modes compared, the one
that pays kept), then chooses on the held-out rows from the noisy metafeatures released there;
its error is the chosen Option's test error on that row. Compared on the same experience (same
corpus, grid, splits and noise):

  * the cross-family ChoiceMaker (every tree and rule-list Option);
  * a trees-only and a brl-only ChoiceMaker (each family's Options alone);
  * every fixed Option (run with the whole budget, the "public" mode's runs);
  * the best single family: the better of the two one-family ChoiceMakers (chosen in hindsight,
    which favours it).

A score is the mean over held-out datasets of the mean error on their rows; the experiment is
repeated with independent splits and noise (`--repetitions`, grids with other `first_rep`),
and intervals are 95% t-intervals of the mean across repetitions (and of the paired difference
cross-family minus best single family). Everything runs on public data with the engine's
seeded simulation noise. Writes benchmarks/results/choicemaker_classification[_quick].json and
.png.
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

from jostle.choicemaker import families  # noqa: E402
from jostle.choicemaker.engine import fit_segment  # noqa: E402
from jostle.choicemaker.experience import FEATURE_PREFIX, experience_table, public_metafeatures  # noqa: E402
from jostle.choicemaker.model import MODEL_KINDS, group_folds, training_matrix  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
TREE_OPTIONS = ("FriedmanSchuster", "Mohammed", "RandomTrees", "PatilSingh", "FletcherIslam")
RULE_OPTIONS = ("BRLMined", "BRLMinedList", "BRLSchema", "BRLSchemaList")
QUICK_TREE_OPTIONS = ("FriedmanSchuster", "RandomTrees")
QUICK_RULE_OPTIONS = ("BRLMined", "BRLSchemaList")
METAFEATURES = ("size", "epsilon", "log_signal")
ERROR_MEASURE = "accuracy"
QUICK_MAX_ROWS = 2500      # --quick: tasks of at most this many rows
QUICK_MAX_TASKS = 12       # --quick: at most this many tasks (the smallest ones)
QUICK_KINDS = ("best_fixed", "forest_regret", "knn_regret")


# ---------------------------------------------------------------------------------- the corpus
def corpus(quick: bool, data: str | None, datasets: list[str] | None) -> list[Any]:
    """The public classification corpus (and the --dataset tables, each its own dataset)."""
    from jostle.learnerkit.corpus import classification_corpus

    tasks = list(classification_corpus())
    if quick:
        small = sorted((t for t in tasks if t.n_rows <= QUICK_MAX_ROWS), key=lambda t: (t.n_rows, t.name))
        by_group: dict[str, Any] = {}
        for task in small:  # one task per dataset, so that every fold holds out whole datasets
            by_group.setdefault(task.group, task)
        tasks = sorted(by_group.values(), key=lambda t: t.name)[:QUICK_MAX_TASKS]
    if datasets:
        from trees import data_folder, load_dataset, split_dataset_argument

        folder = data_folder(data, [split_dataset_argument(d)[0] for d in datasets], named=True)
        for spec in datasets:
            task, source = load_dataset(folder, spec)
            print(f"--dataset {spec}: {task.n_rows} rows, {len(task.domain_sizes)} attributes ({source})")
            tasks.append(task)
    return tasks


def grid_for(quick: bool, repetition: int) -> Any:
    """The grid of one repetition of the experiment (independent splits and noise)."""
    from jostle.learnerkit.grids import SplitGrid

    if quick:
        return SplitGrid(epsilons=(0.1, 1.0), repetitions=2, first_rep=100 * repetition)
    return SplitGrid(epsilons=(0.05, 0.1, 0.3, 1.0, 3.0), repetitions=3, first_rep=100 * repetition)


# ---------------------------------------------------------------------------------- held-out choices
def held_out_errors(family: Any, experience: pd.DataFrame, options: list[str], features: list[Any],
                    mf_share: float, kinds: tuple[str, ...], folds: int | None,
                    inner_folds: int | None) -> tuple[pd.Series, dict[str, int]]:
    """Per held-out dataset, the mean test error of the Options a ChoiceMaker over `options`
    trained on the other datasets chooses there (see the module docstring), and how often it
    chose each Option."""
    group = family.group_column
    groups = np.array(sorted(experience[group].astype(str).unique()))
    errors: dict[str, float] = {}
    picked: dict[str, int] = {}
    for held_out in group_folds(groups, folds):
        names = set(groups[held_out])
        held = experience[group].astype(str).isin(names)
        kept = fit_segment(family, experience[~held], options, features, mf_share, kinds, 1, inner_folds)
        model, mode = kept.model, kept.mode
        test = experience[held & (experience["mode"] == mode)]
        mode_features = [m.name for m in (features if mode == "measured" else public_metafeatures(features))]
        if not mode_features:
            test, mode_features = test.assign(**{FEATURE_PREFIX + "constant": 0.0}), ["constant"]
        matrix = training_matrix(test, mode_features, options, list(family.config_columns),
                                 family.meta_input_products, group, family.regret_measure)
        # the model reads the mode's metafeatures (and their products) as the matrix holds them,
        # or nothing (the best fixed Option)
        assert model.features in ([], mode_features), (model.features, mode_features)
        X = matrix.X if model.features else np.zeros((len(matrix.X), 1))
        picks = model.choose(X)
        chosen = matrix.errors[np.arange(len(picks)), picks]
        for index in picks:
            picked[matrix.options[int(index)]] = picked.get(matrix.options[int(index)], 0) + 1
        for name, value in pd.Series(chosen).groupby(matrix.groups).mean().items():
            errors[str(name)] = float(value)
    return pd.Series(errors).sort_index(), picked


def fixed_errors(family: Any, experience: pd.DataFrame, options: list[str]) -> pd.DataFrame:
    """Per dataset, the mean test error of each Option run with the whole budget."""
    public = experience[experience["mode"] == "public"]
    table = public.groupby([family.group_column, "option"], observed=True)["error"].mean().unstack("option")
    table.index = table.index.astype(str)
    return table[options].sort_index()


# ---------------------------------------------------------------------------------- one repetition
def run_repetition(repetition: int, tasks: list[Any], tree_options: list[str], rule_options: list[str],
                   args: argparse.Namespace) -> dict[str, Any]:
    """Every chooser's held-out error (mean over datasets) in one repetition."""
    trees, brl = families.get("trees"), families.get("brl")
    combined = families.serving([brl, trees], ERROR_MEASURE)
    options = [combined.options()[name] for name in [*tree_options, *rule_options]]
    shared = combined.metafeatures()
    features = [shared[name] for name in METAFEATURES]
    grid = grid_for(args.quick, repetition)
    start = time.perf_counter()
    experience = experience_table(combined, options, features, tasks, grid, args.mf_share, args.cache_dir,
                                  args.n_jobs, progress=False)
    seconds = time.perf_counter() - start
    kinds = QUICK_KINDS if args.quick else MODEL_KINDS
    folds = args.folds if args.folds else (5 if args.quick else None)
    inner = 3 if args.quick else 4
    choosers = {"cross-family": [*tree_options, *rule_options], "trees only": list(tree_options),
                "brl only": list(rule_options)}
    per_dataset, picks = {}, {}
    for name, opts in choosers.items():
        per_dataset[name], picks[name] = held_out_errors(combined, experience, opts, features, args.mf_share, kinds,
                                                         folds, inner)
    owners = {name: combined.option_family(combined.options()[name]) for name in choosers["cross-family"]}
    by_family = {}
    for option, count in picks["cross-family"].items():
        by_family[owners[option]] = by_family.get(owners[option], 0) + count
    fixed = fixed_errors(combined, experience, [*tree_options, *rule_options])
    scores = {name: float(values.mean()) for name, values in per_dataset.items()}
    scores.update({f"fixed {name}": float(fixed[name].mean()) for name in fixed.columns})
    print(f"repetition {repetition}: experience {len(experience)} runs in {seconds:.0f} s; " +
          ", ".join(f"{k} {v:.4f}" for k, v in scores.items() if not k.startswith("fixed")) +
          f"; the cross-family ChoiceMaker picked {picks['cross-family']} (by family {by_family})")
    return {"scores": scores, "picks": picks, "picks_by_family": by_family,
            "per_dataset": {k: v.to_dict() for k, v in per_dataset.items()},
            "fixed_per_dataset": fixed.to_dict(), "experience_seconds": seconds,
            "experience_runs": int(len(experience))}


def interval(values: list[float]) -> dict[str, float]:
    """Mean and 95% t-interval across repetitions."""
    from scipy import stats

    values = np.asarray(values, dtype=float)
    mean = float(values.mean())
    if len(values) < 2:
        return {"mean": mean, "low": float("nan"), "high": float("nan"), "n": int(len(values))}
    half = float(stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values)))
    return {"mean": mean, "low": mean - half, "high": mean + half, "n": int(len(values))}


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    names = list(runs[0]["scores"])
    summary = {name: interval([run["scores"][name] for run in runs]) for name in names}
    single = [min(run["scores"]["trees only"], run["scores"]["brl only"]) for run in runs]
    summary["best single family"] = interval(single)
    summary["cross-family minus best single family"] = interval(
        [run["scores"]["cross-family"] - s for run, s in zip(runs, single)])
    best_fixed = [min(v for k, v in run["scores"].items() if k.startswith("fixed ")) for run in runs]
    summary["best fixed option (hindsight)"] = interval(best_fixed)
    return summary


# ---------------------------------------------------------------------------------- output
def plot(results: dict[str, Any], path: Path) -> None:
    """Held-out error of every chooser with its 95% interval across repetitions."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = results["summary"]
    order = ["cross-family", "trees only", "brl only", "best single family"] + \
        sorted((k for k in summary if k.startswith("fixed ")), key=lambda k: summary[k]["mean"])
    colours = {"cross-family": "black", "trees only": "tab:green", "brl only": "tab:orange",
               "best single family": "tab:purple"}
    figure, axis = plt.subplots(figsize=(9, 0.42 * len(order) + 2.5))
    for row, name in enumerate(order):
        item = summary[name]
        colour = colours.get(name, "0.55")
        low, high = item["low"], item["high"]
        error = None if not np.isfinite(low) else [[item["mean"] - low], [high - item["mean"]]]
        axis.errorbar(item["mean"], row, xerr=error, fmt="o", color=colour, capsize=4,
                      ms=8 if name in colours else 6, lw=2 if name in colours else 1)
    axis.axvline(summary["cross-family"]["mean"], color="black", lw=0.8, ls=":")
    axis.set_yticks(range(len(order)))
    axis.set_yticklabels([name.replace("fixed ", "fixed: ") for name in order])
    axis.invert_yaxis()
    axis.set_xlabel("held-out error, 1 - test accuracy (lower is better)")
    meta = results["meta"]
    held = "leave-one-dataset-out" if not meta["folds"] else f"{meta['folds']} folds of whole datasets"
    difference = summary["cross-family minus best single family"]
    families_picked = {}
    for run in results["runs"]:
        for family, count in run.get("picks_by_family", {}).items():
            families_picked[family] = families_picked.get(family, 0) + count
    total = max(sum(families_picked.values()), 1)
    shares = ", ".join(f"{family} {count / total:.0%}" for family, count in sorted(families_picked.items()))
    axis.set_title(f"A ChoiceMaker across tree and rule-list families: {meta['tasks']} public tasks "
                   f"({meta['datasets']} datasets), {held}\n"
                   f"means and 95% intervals over {meta['repetitions']} repetitions of splits and noise\n"
                   f"cross-family minus best single family: {difference['mean']:+.4f} "
                   f"[{difference['low']:+.4f}, {difference['high']:+.4f}]\nthe cross-family ChoiceMaker's held-out "
                   f"choices by family: {shares}",
                   fontsize=9)
    axis.grid(alpha=0.3, axis="x")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def print_summary(summary: dict[str, Any], over: str = "repetitions", width: int = 40) -> None:
    """Each chooser's held-out error with its 95% interval (`over`: what the interval is over)."""
    print(f"\nheld-out error (1 - test accuracy), mean [95% interval] over {over}:")
    for name, item in summary.items():
        print(f"  {name:<{width}} {item['mean']:.4f} [{item['low']:.4f}, {item['high']:.4f}]")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small grid, small tasks, 2 Options per family")
    parser.add_argument("--data", default=None, help="folder holding uci/ for --dataset (default $JOSTLE_DATA)")
    parser.add_argument("--dataset", action="append", default=None, metavar="FILE:TARGET",
                        help="a CSV under the data folder's uci/ and its class column, added as its own dataset")
    parser.add_argument("--repetitions", type=int, default=None, help="default 5 (3 with --quick)")
    parser.add_argument("--folds", type=int, default=None,
                        help="held-out folds of whole datasets (default: one per dataset; 5 with --quick)")
    parser.add_argument("--mf-share", type=float, default=0.1)
    parser.add_argument("--n-jobs", type=int, default=1, help="processes for the experience (default 1)")
    parser.add_argument("--cache-dir", default=None, help="default $JOSTLE_CACHE or ~/.cache/jostle")
    parser.add_argument("--output", default=None, help="results path without suffix")
    parser.add_argument("--replot", metavar="JSON", help="only redraw the PNG of a results file")
    args = parser.parse_args(argv)
    if args.replot:
        results = json.loads(Path(args.replot).read_text())
        plot(results, Path(args.replot).with_suffix(".png"))
        return results
    start = time.perf_counter()
    repetitions = args.repetitions or (3 if args.quick else 5)
    tree_options = list(QUICK_TREE_OPTIONS if args.quick else TREE_OPTIONS)
    rule_options = list(QUICK_RULE_OPTIONS if args.quick else RULE_OPTIONS)
    tasks = corpus(args.quick, args.data, args.dataset)
    print(f"{len(tasks)} tasks ({len({t.group for t in tasks})} datasets); options {tree_options + rule_options}; "
          f"error measure {ERROR_MEASURE}; {repetitions} repetitions")
    runs = [run_repetition(r, tasks, tree_options, rule_options, args) for r in range(repetitions)]
    summary = summarise(runs)
    print_summary(summary)
    output = Path(args.output) if args.output else RESULTS / ("choicemaker_classification_quick" if args.quick
                                                             else "choicemaker_classification")
    output.parent.mkdir(parents=True, exist_ok=True)
    results = {
        "meta": {"quick": args.quick, "tasks": len(tasks), "datasets": len({t.group for t in tasks}),
                 "task_names": [t.name for t in tasks], "options": tree_options + rule_options,
                 "metafeatures": list(METAFEATURES), "error_measure": ERROR_MEASURE,
                 "repetitions": repetitions, "folds": args.folds or (5 if args.quick else None),
                 "mf_share": args.mf_share, "seconds": round(time.perf_counter() - start, 1),
                 "command": "python benchmarks/choicemaker_classification.py " + " ".join(argv or sys.argv[1:])},
        "summary": summary,
        "runs": runs,
    }
    output.with_suffix(".json").write_text(json.dumps(results, indent=1, default=float))
    plot(results, output.with_suffix(".png"))
    print(f"\nwrote {output.with_suffix('.json')} and .png in {results['meta']['seconds']:.0f} s")
    return results


if __name__ == "__main__":
    main()
