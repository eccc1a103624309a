"""Part 2 of `benchmarks/sulq.py`: private k-means, SuLQ's against the modern ones.

Learners (rows in [0, 1]^d, the box every private learner is told; k public):

  * ``sulq_lecture``: SuLQ k-means with the lecture's R = 8 T log^2(T / delta) / epsilon^2, T its
    public query count (every coordinate sum and size, every iteration);
  * ``sulq_zcdp``: SuLQ k-means given the budget rho (every query counted, as SuLQ counts);
  * ``dplloyd``: Jostle's zCDP DPLloyd at rho (one row touches one size and d sums a round);
  * ``dplloyd_reseed``: the same with near-empty clusters moved next to the largest one after
    each round (the Option DPLloydReseed; post-processing, same cost);
  * ``diffprivlib``: IBM diffprivlib's KMeans (DPLloyd, Laplace, pure epsilon);
  * ``nonprivate``: scikit-learn's k-means (k-means++, 10 starts).

Score: within-cluster error of the test rows (mean squared distance to the nearest centre).
The iteration count of each Jostle learner is chosen per budget on the table's tuning part.
"""

from __future__ import annotations

import time

import numpy as np

import sulq_baselines as baselines
import sulq_data
import sulq_learners as learners

LEARNERS = ["sulq_lecture", "sulq_zcdp", "dplloyd", "dplloyd_reseed", "diffprivlib", "nonprivate"]
ITERATIONS = {"full": [2, 3, 5, 8], "quick": [3, 6]}
TUNING_SEEDS = 2


def fit(name: str, train: np.ndarray, k: int, point: dict, iterations: int, seed: int, start: int) -> dict | None:
    """One learner's centres (and what it spent), or None when this checkout lacks it."""
    if name == "diffprivlib":
        return {"centres": baselines.diffprivlib_kmeans(train, k, point["epsilon"], seed)}
    if name == "nonprivate":
        return {"centres": baselines.nonprivate_kmeans(train, k, seed)}
    return learners.kmeans(name, train, k, point, iterations, seed, start)


def tune(table: sulq_data.ClusteringTable, point: dict, grid: list[int]) -> dict[str, int]:
    """Per Jostle learner, the iteration count of least mean error on the tuning part."""
    chosen = {}
    for name in ("sulq_lecture", "sulq_zcdp", "dplloyd", "dplloyd_reseed"):
        scores = {}
        for iterations in grid:
            errors = []
            for seed in range(TUNING_SEEDS):
                fitted = fit(name, table.tuning, table.k, point, iterations, 500 + seed, 500 + seed)
                if fitted is None:
                    break
                errors.append(baselines.within_cluster_error(table.tuning, fitted["centres"]))
            if errors:
                scores[iterations] = float(np.mean(errors))
        if scores:
            chosen[name] = min(scores, key=scores.get)
    return chosen


def run(tables: list[sulq_data.ClusteringTable], budgets: list[dict], repetitions: int, quick: bool) -> dict:
    """Every table, budget and repetition; summaries and the runs themselves."""
    from sulq import summarise

    grid = ITERATIONS["quick" if quick else "full"]
    out: dict = {"learners": LEARNERS, "measure": "within-cluster error on held-out rows (lower is better)",
                 "iteration_grid": grid, "tables": {}}
    for table in tables:
        started = time.perf_counter()
        tuned = {f"{p['epsilon']:g}": tune(table, p, grid) for p in budgets}
        runs = []
        for repetition in range(repetitions):
            train_index, test_index = sulq_data.split_report(len(table.rows), repetition)
            train, test = table.rows[train_index], table.rows[test_index]
            reference = None
            for index, point in enumerate(budgets):
                row: dict = {"repetition": repetition, "epsilon": point["epsilon"], "spent": {}}
                for learner_index, name in enumerate(LEARNERS):
                    if name == "nonprivate" and reference is not None:
                        row[name] = reference
                        continue
                    seed = (repetition * 100 + index) * 10 + learner_index
                    iterations = tuned[f"{point['epsilon']:g}"].get(name, grid[0])
                    # the public initial centres: one seed per repetition and budget, shared by the learners
                    fitted = fit(name, train, table.k, point, iterations, seed, repetition * 100 + index)
                    if fitted is None:
                        continue
                    row[name] = baselines.within_cluster_error(test, fitted["centres"])
                    if "rho_spent" in fitted:
                        row["spent"][name] = fitted["rho_spent"]
                    for what in ("queries", "variance"):
                        if what in fitted:
                            row.setdefault(what, {})[name] = fitted[what]
                    if name == "nonprivate":
                        reference = row[name]
                runs.append(row)
        summary = summarise(runs, budgets, LEARNERS, "kmeans")
        for point in budgets:  # what the lecture's R costs in rho, next to the budget the others get
            spent = [r["spent"]["sulq_lecture"] for r in runs if r["epsilon"] == point["epsilon"]
                     and "sulq_lecture" in r["spent"]]
            variances = {name: [r["variance"][name] for r in runs if r["epsilon"] == point["epsilon"]
                                and name in r.get("variance", {})] for name in ("sulq_lecture", "sulq_zcdp", "dplloyd")}
            if spent:
                summary[f"{point['epsilon']:g}"]["lecture_rho_spent"] = float(np.mean(spent))
                summary[f"{point['epsilon']:g}"]["rho_budget"] = point["rho"]
                summary[f"{point['epsilon']:g}"]["variance"] = {n: float(np.mean(v)) for n, v in variances.items() if v}
        out["tables"][table.name] = {"k": table.k, "d": int(table.rows.shape[1]), "rows": int(len(table.rows)),
                                     "tuning_rows": int(len(table.tuning)), "box": table.box,
                                     "tuned_iterations": tuned, "summary": summary, "runs": runs,
                                     "seconds": time.perf_counter() - started}
        print_table(table.name, out["tables"][table.name])
    return out


def print_table(name: str, entry: dict) -> None:
    print(f"\nk-means on {name} ({entry['rows']} rows, d {entry['d']}, k {entry['k']}; box {entry['box']}; "
          f"{entry['seconds']:.0f} s): within-cluster error on test rows, mean [95% interval]")
    for key, summary in entry["summary"].items():
        cells = [f"{n} {s['mean']:.4f} [{s['low']:.4f}, {s['high']:.4f}]" for n in LEARNERS
                 if np.isfinite((s := summary[n])["mean"])]
        print(f"  eps {key}: " + "; ".join(cells))
        if "lecture_rho_spent" in summary:
            print(f"    the lecture's R costs rho {summary['lecture_rho_spent']:.3g} of the {summary['rho_budget']:.3g} "
                  f"the zCDP learners get; R per query: " + ", ".join(f"{n} {v:.4g}"
                                                                    for n, v in summary["variance"].items()))
