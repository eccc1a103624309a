"""The SuLQ learners (Blum, Dwork, McSherry and Nissim 2005) against modern DP learners at the same
(epsilon, delta), on public data.

    python benchmarks/sulq.py --quick                       # under 3 minutes
    python benchmarks/sulq.py                               # the full run (10 repetitions)
    python benchmarks/sulq.py --dataset titanic.csv:Survived --dataset nursery.csv:class
    python benchmarks/sulq.py --replot benchmarks/results/sulq.json

What is measured (every figure a mean over repetitions with its 95% t-interval, never one run):

1. **Calibration.** The lecture's variance R = 8 T log^2(T / delta) / epsilon^2 against the
   variance T queries of sensitivity 1 need under zCDP for a total that meets (epsilon, delta)
   (`jostle.privacy.sulq.calibration_row`), for T = 10..1000 and delta = 1e-6..1e-9 at
   epsilon 1, under both conversions (Bun-Steinke's simple one and the accountant's CKS one).
2. **k-means** (within-cluster error: mean squared distance of HELD-OUT rows to their nearest
   centre, rows in [0, 1]^d): SuLQ k-means with the lecture's R; SuLQ k-means given the zCDP
   budget (every query counted, as SuLQ counts); our zCDP DPLloyd (one row touches one cluster's
   size and its d sums), also with its reseeding of near-empty clusters; diffprivlib's KMeans (DPLloyd, pure epsilon, told the box); and
   scikit-learn's k-means, not private. On generated mixtures and UCI numeric columns.
3. **ID3** (test accuracy): SuLQ ID3 against the tree family's shipped ChoiceMaker
   (`jostle.choicemaker.dispatch` at the same rho: it runs its pure-epsilon Options at the
   largest epsilon with epsilon^2 / 2 <= its share) and against the tree family's best fixed
   Option on its public corpus (chosen on the corpus, not on these tables), and a non-private
   depth-5 C4.5 tree.
4. **Perceptron** (test accuracy, binary): the SuLQ perceptron against diffprivlib's DP
   logistic regression (objective perturbation, pure epsilon, data_norm = 1 passed in) and a
   non-private logistic regression.
5. **Old against new, and a ChoiceMaker across them.** For each comparison, table and budget,
   the best SuLQ learner against the best modern one (paired 95% interval of the difference),
   and whether the winning side ever changes ("winners"). A ChoiceMaker across old and new
   classifiers (tree Options + SuLQID3 + SuLQPerceptron, trained on the SuLQ family's public
   corpus, `sulq_choice`) is dispatched on the classification tables at the same rho and scored
   by its regret against the best single Option of its menu in hindsight. k-means has no such
   ChoiceMaker: at the same rho, iterations and start, DPLloyd asks the same batches as SuLQ
   k-means with k times less noise variance, so the old one cannot win but by chance. The SuLQ
   perceptron against diffprivlib's logistic regression (not a Jostle Option) gets a small
   chooser of its own on public metafeatures, trained on the same corpus (`sulq_linear_choice`).

Budgets. Each (epsilon, delta) point gives the zCDP learners rho = the largest rho whose CKS
conversion (Canonne, Kamath and Steinke 2020, the accountant's, `jostle.privacy.conversions.rho_for`)
meets (epsilon, delta); the Bun-Steinke rho is recorded beside it. SuLQ with the lecture's R is
run at that R: what it actually costs in rho is recorded (far less than rho: the 2005 bound is
loose). diffprivlib runs at pure epsilon, a STRONGER guarantee than (epsilon, delta).

Tuning. Hyperparameters (iterations of the k-means learners and of the perceptron, ID3's
depth, the logistic regressions' C) are chosen on each table's tuning part (20% of its rows,
never reported on; `sulq_data`), per budget, by the mean over two seeds; the figures come from
the other 80%, split 70/30 per repetition.

Data: `sulq_data` (--data DIR, else $JOSTLE_DATA, else ../shared/datasets). --dataset
FILE:TARGET (repeatable) replaces the default UCI tables in all three comparisons (k-means:
the file's numeric columns, k = the number of TARGET values). Writes
benchmarks/results/sulq.json and sulq.png (--quick: sulq_quick.json / .png).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import benchmark_data  # noqa: E402
import sulq_baselines as baselines  # noqa: E402
import sulq_data  # noqa: E402
import sulq_learners as learners  # noqa: E402

from jostle.privacy.conversions import rho_for  # noqa: E402
from jostle.privacy.sulq import calibration_row, simple_rho_for  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
DELTA = 1e-6
FULL_EPSILONS = [0.25, 0.5, 1.0, 2.0, 4.0]
QUICK_EPSILONS = [0.5, 1.0, 2.0]
CALIBRATION_T = [10, 20, 50, 100, 200, 500, 1000]
CALIBRATION_DELTAS = [1e-6, 1e-7, 1e-8, 1e-9]


# ------------------------------------------------------------------------------- 1. calibration
def calibration_table() -> dict:
    """Every (T, delta, conversion) row at epsilon 1 and each conversion's ratio range."""
    rows = [calibration_row(t, 1.0, delta, conversion) for conversion in ("bun_steinke", "cks")
            for delta in CALIBRATION_DELTAS for t in CALIBRATION_T]
    ranges = {}
    for conversion in ("bun_steinke", "cks"):
        ratios = [r["ratio"] for r in rows if r["conversion"] == conversion]
        ranges[conversion] = {"min_ratio": min(ratios), "max_ratio": max(ratios)}
    return {"epsilon": 1.0, "rows": rows, "ratio_range": ranges}


def print_calibration(table: dict) -> None:
    print("Calibration at epsilon 1: lecture R = 8 T log^2(T/delta) / eps^2 vs zCDP R = T / (2 rho)")
    print(f"{'T':>6} {'delta':>7} {'lecture R':>12} {'sd':>7} {'zCDP R (BS)':>12} {'sd':>6} {'ratio':>6}"
          f" {'zCDP R (CKS)':>13} {'ratio':>6}")
    by_key = {(r["T"], r["delta"], r["conversion"]): r for r in table["rows"]}
    for delta in CALIBRATION_DELTAS:
        for t in CALIBRATION_T:
            simple, cks = by_key[(t, delta, "bun_steinke")], by_key[(t, delta, "cks")]
            print(f"{t:>6} {delta:>7.0e} {simple['lecture_variance']:>12.4g} {simple['lecture_sd']:>7.1f} "
                  f"{simple['zcdp_variance']:>12.4g} {simple['zcdp_sd']:>6.1f} {simple['ratio']:>6.1f} "
                  f"{cks['zcdp_variance']:>13.4g} {cks['ratio']:>6.1f}")
    for conversion, span in table["ratio_range"].items():
        print(f"  ratio lecture / zCDP ({conversion}): {span['min_ratio']:.1f} .. {span['max_ratio']:.1f}")


def budget_points(epsilons: list[float]) -> list[dict]:
    """Each (epsilon, delta) point with the rho the zCDP learners get (CKS) and the simple one."""
    return [{"epsilon": e, "delta": DELTA, "rho": float(rho_for(Fraction(e), Fraction(DELTA))),
             "rho_bun_steinke": simple_rho_for(e, DELTA)} for e in epsilons]


# ------------------------------------------------------------------------------- summaries
# Per comparison: the old (SuLQ) learners, the new ones, and the pairs whose paired differences
# are reported (first minus second, per repetition, then the mean's 95% t-interval).
OLD_NEW = {
    "kmeans": (["sulq_lecture", "sulq_zcdp"], ["dplloyd", "dplloyd_reseed", "diffprivlib"],
               [("sulq_lecture", "sulq_zcdp"), ("sulq_zcdp", "dplloyd"), ("dplloyd", "diffprivlib"),
                ("dplloyd_reseed", "dplloyd"), ("dplloyd_reseed", "diffprivlib"), ("sulq_zcdp", "diffprivlib")]),
    "id3": (["sulq_id3"], ["tree_choicemaker", "tree_best_fixed"],
            [("sulq_id3", "tree_choicemaker"), ("sulq_id3", "tree_best_fixed"),
             ("tree_choicemaker", "tree_best_fixed")]),
    "perceptron": (["sulq_perceptron"], ["diffprivlib_logistic"], [("sulq_perceptron", "diffprivlib_logistic")]),
}


def paired(rows: list[dict], first: str, second: str) -> dict:
    """The mean of first - second over the repetitions where both ran, with its 95% interval."""
    differences = [r[first] - r[second] for r in rows if r.get(first) is not None and r.get(second) is not None]
    interval = baselines.mean_interval(differences)
    interval["separated"] = bool(len(differences) > 1 and (interval["low"] > 0 or interval["high"] < 0))
    return interval


def summarise(runs: list[dict], budgets: list[dict], names: list[str], part: str) -> dict:
    """Per epsilon: each learner's mean with its 95% interval, the paired differences of
    `OLD_NEW[part]`'s pairs, and old against new (the best mean of each side, their paired
    difference, who wins and whether the interval is clear of 0)."""
    old, new, pairs = OLD_NEW[part]
    higher_is_better = part != "kmeans"
    out = {}
    for point in budgets:
        rows = [r for r in runs if r["epsilon"] == point["epsilon"]]
        entry: dict = {name: baselines.mean_interval([r.get(name) for r in rows]) for name in names}
        entry["pairs"] = {f"{a} - {b}": paired(rows, a, b) for a, b in pairs}

        def best(side: list[str]) -> str | None:
            ran = [n for n in side if np.isfinite(entry[n]["mean"])]
            return (max if higher_is_better else min)(ran, key=lambda n: entry[n]["mean"]) if ran else None
        best_old, best_new = best(old), best(new)
        if best_old and best_new:
            difference = paired(rows, best_old, best_new)
            old_better = difference["mean"] > 0 if higher_is_better else difference["mean"] < 0
            entry["old_vs_new"] = {"old": best_old, "new": best_new, "difference": difference,
                                   "winner": best_old if old_better else best_new, "winner_side": "old" if old_better
                                   else "new", "separated": difference["separated"]}
        out[f"{point['epsilon']:g}"] = entry
    return out


# ------------------------------------------------------------------------------- main
def data_folder(argument: str | None, files: list[str], named: bool) -> Path:
    """The UCI folder, or exit with one line and code 66 when a file is missing."""
    collection = benchmark_data.UCI
    if named:
        collection = dataclasses.replace(collection, what="the --dataset files",
                                         source="where you found them (the default tables: https://archive.ics.uci.edu)")
    return benchmark_data.require("sulq.py", collection, argument, files)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="folder holding uci/ (default $JOSTLE_DATA or ../shared/datasets)")
    parser.add_argument("--dataset", action="append", default=None, metavar="FILE:TARGET",
                        help="a CSV under DIR/uci and its class column (repeatable; replaces the default tables)")
    parser.add_argument("--quick", action="store_true", help="3 epsilons, 3 repetitions, smaller tables (< 3 min)")
    parser.add_argument("--repetitions", type=int, default=None, help="default 10 (3 with --quick)")
    parser.add_argument("--only", choices=("calibration", "kmeans", "id3", "perceptron", "choicemaker"), action="append",
                        help="run only these parts (repeatable; default all)")
    parser.add_argument("--replot", metavar="JSON", help="only redraw the PNG beside a results file")
    parser.add_argument("--out", metavar="JSON", help="write the results here (the PNG beside it) instead of "
                        "benchmarks/results/sulq[_quick].json")
    args = parser.parse_args(argv)
    import sulq_plot

    if args.replot:
        path = Path(args.replot)
        sulq_plot.plot(json.loads(path.read_text()), path.with_suffix(".png"))
        print(f"wrote {path.with_suffix('.png')}")
        return
    suffix = "_quick" if args.quick else ""
    results_path = Path(args.out) if args.out else RESULTS / f"sulq{suffix}.json"
    plot_path = results_path.with_suffix(".png")
    parts = set(args.only or ("calibration", "kmeans", "id3", "perceptron", "choicemaker"))
    epsilons = QUICK_EPSILONS if args.quick else FULL_EPSILONS
    repetitions = args.repetitions or (3 if args.quick else 10)
    budgets = budget_points(epsilons)
    classification_specs = args.dataset or sulq_data.DEFAULT_CLASSIFICATION
    clustering_specs = args.dataset or [f"{f}:" for f in sulq_data.DEFAULT_CLUSTERING_FILES]
    files = sorted({s.partition(":")[0] for s in classification_specs + clustering_specs})
    for spec in args.dataset or []:
        if not spec.partition(":")[2]:
            raise SystemExit(f"sulq.py: --dataset wants FILE:TARGET; got {spec!r}")
    folder = data_folder(args.data, files, named=bool(args.dataset))
    start = time.perf_counter()
    results: dict = {"budgets": budgets, "_meta": {
        "repetitions": repetitions, "epsilons": epsilons, "delta": DELTA, "quick": args.quick,
        "conversion": "the zCDP learners get rho = rho_for(epsilon, delta) (CKS, the accountant's); "
                      "diffprivlib runs at pure epsilon (stronger)",
        "learners_available": learners.available(), "commit": commit(), "command": " ".join(["python", "benchmarks/sulq.py",
                                                                         *(argv if argv is not None else sys.argv[1:])])}}
    if "calibration" in parts:
        results["calibration"] = calibration_table()
        print_calibration(results["calibration"])
    if "kmeans" in parts:
        import sulq_kmeans

        results["kmeans"] = sulq_kmeans.run(sulq_data.clustering_tables(folder, clustering_specs), budgets,
                                            repetitions, args.quick)
    if parts & {"id3", "perceptron", "choicemaker"}:
        import sulq_classify

        tables = sulq_data.classification_tables(folder, classification_specs)
        if "id3" in parts:
            results["id3"] = sulq_classify.run_id3(tables, budgets, repetitions, args.quick)
        if "perceptron" in parts:
            results["perceptron"] = sulq_classify.run_perceptron(tables, budgets, repetitions, args.quick)
        if "choicemaker" in parts and learners.available()["sulq_classifiers"]:
            import sulq_choice

            results["choicemaker"] = sulq_choice.run(tables, budgets, repetitions, args.quick)
        if "choicemaker" in parts and "perceptron" in results and learners.available()["sulq_classifiers"]:
            import sulq_linear_choice

            results["linear_choice"] = sulq_linear_choice.run(results["perceptron"], budgets, args.quick)
    results["winners"] = winners(results)
    print_winners(results["winners"])
    results["_meta"]["seconds"] = time.perf_counter() - start
    results_path.parent.mkdir(parents=True, exist_ok=True)
    results_path.write_text(json.dumps(results, indent=1, default=float))
    sulq_plot.plot(results, plot_path)
    print(f"\n{results['_meta']['seconds']:.0f} s; wrote {results_path} and {plot_path}")


def family_main(name: str, parts: tuple[str, ...], argv: list[str] | None = None) -> None:
    """Run only `parts`, writing benchmarks/results/<name>[_quick].json unless --out says otherwise:
    the one command a learner family's benchmark is (benchmarks/clustering.py,
    benchmarks/sulq_classifiers.py)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if "--out" not in arguments and "--replot" not in arguments:
        arguments += ["--out", str(RESULTS / f"{name}{'_quick' if '--quick' in arguments else ''}.json")]
    main(arguments + [option for part in parts for option in ("--only", part)])


def commit() -> str:
    """The checkout's commit, with "+changes" when jostle/ or benchmarks/ differ from it
    ($JOSTLE_COMMIT when the code runs from an export without git, e.g. `git archive HEAD`)."""
    import os
    import subprocess

    if os.environ.get("JOSTLE_COMMIT"):
        return os.environ["JOSTLE_COMMIT"]
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--short", "--", "jostle", "benchmarks/sulq*.py"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+changes" if dirty else "")


def winners(results: dict) -> dict:
    """Per comparison: old (SuLQ) against new at every (table, epsilon), and whether the winning
    side ever changes (by means; and counting only cells whose paired interval is clear of 0)."""
    out = {}
    for part in ("kmeans", "id3", "perceptron"):
        if part not in results:
            continue
        cells = {}
        for table, entry in results[part]["tables"].items():
            for key, summary in entry["summary"].items():
                if "old_vs_new" in summary:
                    cells[f"{table} eps {key}"] = summary["old_vs_new"]
        sides = {c["winner_side"] for c in cells.values()}
        clear = {c["winner_side"] for c in cells.values() if c["separated"]}
        out[part] = {"cells": cells, "sides": sorted(sides), "changes": len(sides) > 1,
                     "changes_with_clear_intervals": len(clear) > 1,
                     "old_wins": sorted(k for k, c in cells.items() if c["winner_side"] == "old"),
                     "old_wins_clear": sorted(k for k, c in cells.items() if c["winner_side"] == "old" and c["separated"])}
    return out


def print_winners(table: dict) -> None:
    for part, entry in table.items():
        print(f"\n{part}, old (SuLQ) against new: the winning side "
              f"{'changes' if entry['changes'] else 'never changes'} by means, "
              f"{'changes' if entry['changes_with_clear_intervals'] else 'never changes'} counting clear intervals only")
        for cell, what in entry["cells"].items():
            difference = what["difference"]
            print(f"  {cell}: {what['winner']} ({what['winner_side']}); {what['old']} - {what['new']} = "
                  f"{difference['mean']:+.4f} [{difference['low']:+.4f}, {difference['high']:+.4f}]"
                  f"{'' if what['separated'] else ' (interval includes 0)'}")


if __name__ == "__main__":
    main()
