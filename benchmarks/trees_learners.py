"""Accuracy against epsilon of the private decision-tree family on four UCI tables.

For each data set, each epsilon of a log grid from 0.01 to 10, and each repetition: a random
70/30 train/test split, then every named configuration of `jostle.learners.trees` (Friedman & Schuster,
Mohammed et al., Jagannathan et al., Patil & Singh, Fletcher & Islam) and the non-private C4.5
baseline are trained on the training part and scored on the test part. Domains are *declared*
below from the UCI documentation (numeric columns cut into public bins over a declared range);
nothing is read from the data to set them. The learners' settings are the package defaults for
every data set: nothing is tuned here per data set or on a test split.

Also reported: the time to train one Friedman & Schuster tree on Nursery, and the reference
figures of IBM diffprivlib (best of its learners) at epsilon 0.1 / 0.5 / 1 / 2.

Usage:
    python benchmarks/trees_learners.py            # 10 epsilons, 10 repetitions
    python benchmarks/trees_learners.py --quick    # 4 epsilons, 2 repetitions
    python benchmarks/trees_learners.py --tune     # score candidate defaults (training parts only)
Data: the uci/ folder of --data DIR, else of $JOSTLE_DATA, else of ../shared/datasets (see
benchmarks/benchmark_data.py; README.md, "Benchmarks", says where to get the tables).
Writes benchmarks/results/trees_learners.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from jostle.learners.trees import C45DecisionTreeClassifier, CONFIGURATIONS, NumericBins, make_learner

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import benchmark_data  # noqa: E402  (where the shared data is; the one-line message when it is not)

RESULTS = ROOT / "benchmarks" / "results" / "trees_learners.json"
TUNING = ROOT / "benchmarks" / "results" / "trees_learners_tuning.json"

AMINO_ACIDS = list("ACDEFGHIKLMNPQRSTVWY")
COLOURS_GILL = list("knbhgropuewy")

# Public schemas, from the UCI documentation of each data set.
DATASETS: dict[str, dict] = {
    "nursery": {
        "file": "nursery.csv", "target": "class",
        "classes": ["not_recom", "recommend", "very_recom", "priority", "spec_prior"],
        "domains": {
            "parents": ["usual", "pretentious", "great_pret"],
            "has_nurs": ["proper", "less_proper", "improper", "critical", "very_crit"],
            "form": ["complete", "completed", "incomplete", "foster"],
            "children": ["1", "2", "3", "more"],
            "housing": ["convenient", "less_conv", "critical"],
            "finance": ["convenient", "inconv"],
            "social": ["nonprob", "slightly_prob", "problematic"],
            "health": ["recommended", "priority", "not_recom"],
        },
        "reference": {"diffprivlib": {0.1: 0.63, 0.5: 0.83, 1: 0.86, 2: 0.87}, "non_private_depth5": 0.88},
    },
    "contraceptive": {
        "file": "contraceptive.csv", "target": "contraceptive_method", "classes": [1, 2, 3],
        "domains": {
            "wife_age": NumericBins(15, 50, 7), "wife_education": [1, 2, 3, 4],
            "husband_education": [1, 2, 3, 4], "children_born": NumericBins(0, 16, 8),
            "wife_religion": [0, 1], "wife_working": [0, 1], "husband_occupation": [1, 2, 3, 4],
            "standard_of_living": [1, 2, 3, 4], "media_exposure": [0, 1],
        },
        "reference": {"diffprivlib": {0.1: 0.42, 0.5: 0.43, 1: 0.44, 2: 0.47}, "non_private_depth5": 0.53},
    },
    "hiv1_protease_1625": {
        "file": "hiv1_protease_1625.csv", "target": "cleaved", "classes": ["no", "yes"],
        "domains": {f"p{i}": AMINO_ACIDS for i in range(1, 9)},
        "reference": {"diffprivlib": {0.1: 0.79, 0.5: 0.79, 1: 0.79, 2: 0.79}, "non_private_depth5": 0.88},
    },
    "mushroom": {
        "file": "mushroom.csv", "target": "edibility", "classes": ["e", "p"],
        "domains": {
            "cap-shape": list("bcxfks"), "cap-surface": list("fgys"), "cap-color": list("nbcgrpuewy"),
            "bruises": list("tf"), "odor": list("alcyfmnps"), "gill-attachment": list("adfn"),
            "gill-spacing": list("cwd"), "gill-size": list("bn"), "gill-color": COLOURS_GILL,
            "stalk-shape": list("et"), "stalk-root": list("bcuezr?"),
            "stalk-surface-above-ring": list("fyks"), "stalk-surface-below-ring": list("fyks"),
            "stalk-color-above-ring": list("nbcgopewy"), "stalk-color-below-ring": list("nbcgopewy"),
            "veil-type": list("pu"), "veil-color": list("nowy"), "ring-number": list("not"),
            "ring-type": list("cefnlpsz"), "spore-print-color": list("knbhrouwy"),
            "population": list("acnsvy"), "habitat": list("glmpuwd"),
        },
        "reference": {"diffprivlib": {0.1: 0.83, 0.5: 0.83, 1: 0.87, 2: 0.91}, "non_private_depth5": 0.98},
    },
}

FULL_EPSILONS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
QUICK_EPSILONS = [0.1, 0.5, 1.0, 2.0]


def load(name: str, data_dir: Path) -> tuple[pd.DataFrame, np.ndarray]:
    spec = DATASETS[name]
    frame = pd.read_csv(data_dir / spec["file"], dtype={"children": str} if name == "nursery" else None)
    return frame[list(spec["domains"])], frame[spec["target"]].to_numpy()


def split(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.random.default_rng(seed).permutation(n)
    cut = int(round(0.7 * n))
    return order[:cut], order[cut:]


def time_nursery_tree(data_dir: Path, repeats: int = 20) -> dict:
    X, y = load("nursery", data_dir)
    spec = DATASETS["nursery"]
    train, _ = split(len(y), 0)
    timings = {}
    for config in ("friedman_schuster", "mohammed"):
        learner = make_learner(config, 1.0, domains=spec["domains"], classes=spec["classes"], random_state=0)
        learner.fit(X.iloc[train], y[train])  # warm-up
        start = time.perf_counter()
        for seed in range(repeats):
            learner.set_params(random_state=seed).fit(X.iloc[train], y[train])
        timings[config] = (time.perf_counter() - start) / repeats
    return timings


def run(quick: bool, data_dir: Path, repetitions: int | None) -> dict:
    epsilons = QUICK_EPSILONS if quick else FULL_EPSILONS
    reps = repetitions or (2 if quick else 10)
    results: dict = {"epsilons": epsilons, "repetitions": reps, "datasets": {}}
    for name, spec in DATASETS.items():
        X, y = load(name, data_dir)
        scores: dict[str, dict[str, list[float]]] = {c: {f"{e:g}": [] for e in epsilons} for c in CONFIGURATIONS}
        baseline, majority = [], []
        for rep in range(reps):
            train, test = split(len(y), 1000 + rep)
            Xtr, ytr, Xte, yte = X.iloc[train], y[train], X.iloc[test], y[test]
            c45 = C45DecisionTreeClassifier(domains=spec["domains"], classes=spec["classes"], max_depth=5)
            baseline.append(c45.fit(Xtr, ytr).score(Xte, yte))
            values, counts = np.unique(ytr, return_counts=True)
            majority.append(float(np.mean(yte == values[counts.argmax()])))
            for config in CONFIGURATIONS:
                for eps in epsilons:
                    learner = make_learner(config, eps, domains=spec["domains"], classes=spec["classes"],
                                           random_state=rep * 7919 + int(eps * 1000))
                    learner.fit(Xtr, ytr)
                    assert learner.epsilon_spent_ <= eps
                    scores[config][f"{eps:g}"].append(learner.score(Xte, yte))
        summary = {c: {e: {"mean": float(np.mean(v)), "std": float(np.std(v))} for e, v in by_eps.items()}
                   for c, by_eps in scores.items()}
        results["datasets"][name] = {
            "rows": int(len(y)), "c45_depth5": float(np.mean(baseline)), "majority": float(np.mean(majority)),
            "learners": summary, "reference": {k: ({f"{e:g}": v for e, v in r.items()} if isinstance(r, dict) else r)
                                               for k, r in spec["reference"].items()},
        }
        print_table(name, results["datasets"][name], epsilons)
    return results


# Candidate settings for the choice points the papers leave to the user. `--tune` scores them
# on validation splits carved out of the *training* parts only (the test parts are never used),
# averaged over all four data sets and the tuning epsilons, so one default serves every data set.
TUNING_GRID: dict[str, list[dict]] = {
    "friedman_schuster": [dict(split_utility=u, max_depth=d) for u in ("max", "gini", "entropy")
                          for d in (3, 5, 7, "signal_to_noise")],
    "mohammed": [dict(max_depth=d) for d in (2, 3, 4, 5, "signal_to_noise")],
    "jagannathan": [dict(n_trees=t) for t in (3, 10, 30)],
    "friedman_schuster stop_fraction": [dict(configuration="friedman_schuster", stop_fraction=f)
                                         for f in (0.25, 0.5, 0.75)],
    "patil_singh": [dict(n_trees=t, max_depth=d) for t in (2, 3, 5, 10) for d in (5, "signal_to_noise")],
    "fletcher_islam": [dict(n_trees=t) for t in (3, 10, 30)],
    "patil_singh disjoint": [dict(configuration="patil_singh", n_trees=t, disjoint_trees=True, max_depth=d)
                             for t in (2, 3, 5) for d in (5, "signal_to_noise")],
    "fletcher_islam disjoint": [dict(configuration="fletcher_islam", n_trees=t, disjoint_trees=True)
                                for t in (3, 10)],
    "smoothing (F&S)": [dict(configuration="friedman_schuster", smoothing=s) for s in (0.0, 1.0, 3.0)],
    "smoothing (Jagannathan)": [dict(configuration="jagannathan", smoothing=s) for s in (0.0, 1.0, 3.0)],
}
TUNING_EPSILONS = [0.05, 0.2, 1.0, 5.0]


def tune(data_dir: Path, repetitions: int) -> dict:
    """Mean validation accuracy of every candidate setting (training parts only)."""
    scores: dict[str, dict[str, list[float]]] = {g: {} for g in TUNING_GRID}
    for name, spec in DATASETS.items():
        X, y = load(name, data_dir)
        for rep in range(repetitions):
            train, _ = split(len(y), 1000 + rep)  # the same training parts as the accuracy runs
            inner_train, validation = split(len(train), 5000 + rep)
            fit_rows, val_rows = train[inner_train], train[validation]
            for group, candidates in TUNING_GRID.items():
                for candidate in candidates:
                    settings = dict(candidate)
                    configuration = settings.pop("configuration", group)
                    key = json.dumps(settings, sort_keys=True)
                    for eps in TUNING_EPSILONS:
                        learner = make_learner(configuration, eps, domains=spec["domains"], classes=spec["classes"],
                                               random_state=rep * 104729 + int(eps * 1000), **settings)
                        learner.fit(X.iloc[fit_rows], y[fit_rows])
                        scores[group].setdefault(key, []).append(learner.score(X.iloc[val_rows], y[val_rows]))
    summary = {g: {k: float(np.mean(v)) for k, v in by_key.items()} for g, by_key in scores.items()}
    for group, by_key in summary.items():
        print(f"\n{group}: mean validation accuracy over 4 data sets x epsilons {TUNING_EPSILONS}")
        for key, value in sorted(by_key.items(), key=lambda kv: -kv[1]):
            print(f"  {value:.4f}  {key}")
    return summary


def print_table(name: str, result: dict, epsilons: list[float]) -> None:
    print(f"\n{name} ({result['rows']} rows): C4.5 depth 5 {result['c45_depth5']:.3f}, "
          f"majority {result['majority']:.3f}")
    print(f"{'learner':<20}" + "".join(f"{e:>7g}" for e in epsilons))
    for config, by_eps in result["learners"].items():
        print(f"{config:<20}" + "".join(f"{by_eps[format(e, 'g')]['mean']:>7.3f}" for e in epsilons))
    reference = result["reference"]["diffprivlib"]
    print(f"{'diffprivlib best':<20}" + "".join(f"{reference.get(format(e, 'g'), float('nan')):>7.2f}" for e in epsilons))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 epsilons, 2 repetitions")
    parser.add_argument("--repetitions", type=int, default=None)
    parser.add_argument("--tune", action="store_true",
                        help="score candidate defaults on validation splits of the training parts only")
    parser.add_argument("--data", default=None, help="folder holding uci/ (default $JOSTLE_DATA or ../shared/datasets)")
    args = parser.parse_args(argv)
    data_dir = benchmark_data.require("trees_learners.py", benchmark_data.UCI, args.data,
                                      [spec["file"] for spec in DATASETS.values()])
    if args.tune:
        summary = tune(data_dir, args.repetitions or 3)
        TUNING.parent.mkdir(parents=True, exist_ok=True)
        TUNING.write_text(json.dumps(summary, indent=1))
        print(f"\nwrote {TUNING.relative_to(ROOT)}")
        return
    timings = time_nursery_tree(data_dir)
    print("training time of one tree on Nursery (70% of 12960 rows): "
          + ", ".join(f"{c} {t * 1000:.1f} ms" for c, t in timings.items()))
    results = run(args.quick, data_dir, args.repetitions)
    results["nursery_seconds_per_tree"] = timings
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1))
    print(f"\nwrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
