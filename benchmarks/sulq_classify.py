"""Parts 3 and 4 of `benchmarks/sulq.py`: SuLQ ID3 and the SuLQ perceptron against modern learners.

ID3 (test accuracy, all classes): ``sulq_id3`` (depth chosen per budget on the tuning part)
against ``tree_choicemaker`` (the tree family's shipped ChoiceMaker, dispatched at the same rho
with every charge checked against it), ``tree_best_fixed`` (the tree Option with the least mean
error on the family's public corpus, public mode, at the same rho) and ``nonprivate`` (C4.5 of
depth 5). Under a rho the tree Options (pure-epsilon mechanisms) run at epsilon sqrt(2 rho):
0.060, 0.115, 0.221, 0.420, 0.789 for epsilon 0.25, 0.5, 1, 2, 4 at delta 1e-6; ``tree_choicemaker_pure`` is the same
ChoiceMaker at pure epsilon = the point's epsilon (a stronger guarantee than (epsilon, delta),
as diffprivlib's), shown for what the conversion costs; the old-against-new verdict uses the
same-rho learners only.

Perceptron (test accuracy, binary: declared positive class vs the rest; rows one-hot with norm
1; the SuLQ perceptron reads the same one-hot coordinates from the integer codes):
``sulq_perceptron`` (iterations chosen on the tuning part) against ``diffprivlib_logistic``
(objective perturbation, pure epsilon, data_norm 1 passed in; C chosen on the tuning part) and
``nonprivate`` (L2 logistic regression).
"""

from __future__ import annotations

import time
import warnings
from fractions import Fraction

import numpy as np

import sulq_baselines as baselines
import sulq_data
import sulq_learners as learners

ID3_LEARNERS = ["sulq_id3", "tree_choicemaker", "tree_best_fixed", "tree_choicemaker_pure", "nonprivate"]
PERCEPTRON_LEARNERS = ["sulq_perceptron", "diffprivlib_logistic", "nonprivate"]
DEPTHS = {"full": [1, 2, 3], "quick": [1, 2]}
ITERATIONS = {"full": [3, 6, 10, 20], "quick": [4, 10]}
CS = [0.1, 1.0, 10.0]
TUNING_SEEDS = 2


def tree_choicemaker():
    """The tree family's shipped ChoiceMaker and its best fixed Option on the public corpus."""
    from jostle.choicemaker import train

    trained = train(family="trees")
    table = trained.experience
    public = table[table["mode"] == "public"] if "mode" in table else table
    errors = public.groupby("option")["error"].mean().sort_values()
    return trained, str(errors.index[0]), {k: float(v) for k, v in errors.items()}


def _tuning_split(n: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.random.default_rng(11).permutation(n)
    cut = int(round(0.7 * n))
    return order[:cut], order[cut:]


# ------------------------------------------------------------------------------- ID3
def run_id3(tables: list[sulq_data.ClassificationTable], budgets: list[dict], repetitions: int, quick: bool) -> dict:
    """Every table, budget and repetition of the ID3 comparison."""
    from jostle.choicemaker import dispatch
    from jostle.choicemaker.budgets import in_measure
    from jostle.learners.trees import C45DecisionTreeClassifier
    from jostle.learners.trees.options import TREE_OPTIONS
    from jostle.privacy.measures import RhoZCDPBudget
    from jostle.privacy.noise import Randomness
    from sulq import summarise

    trained, best_fixed, corpus_errors = tree_choicemaker()
    grid = DEPTHS["quick" if quick else "full"]
    out: dict = {"learners": ID3_LEARNERS, "measure": "test accuracy (higher is better)", "depth_grid": grid,
                 "tree_best_fixed": best_fixed, "tree_corpus_errors": corpus_errors,
                 "tree_choicemaker_mode": trained.mode, "tables": {}}
    for table in tables:
        started = time.perf_counter()
        data = table.data
        tuning = data.rows(table.tuning_index)
        tune_train, tune_test = _tuning_split(tuning.n_rows)
        tuned = {}
        for point in budgets:
            scores = {}
            for depth in grid:
                accuracies = []
                for seed in range(TUNING_SEEDS):
                    fitted = learners.id3(tuning.rows(tune_train), point, depth, 500 + seed)
                    if fitted is None:
                        break
                    accuracies.append(float(np.mean(fitted.predict(tuning.X[tune_test]) == tuning.y[tune_test])))
                if accuracies:
                    scores[depth] = float(np.mean(accuracies))
            tuned[f"{point['epsilon']:g}"] = max(scores, key=scores.get) if scores else None
        report = data.rows(table.report_index)
        runs, picks = [], {}
        for repetition in range(repetitions):
            train_index, test_index = sulq_data.split_report(report.n_rows, repetition)
            train, test = report.rows(train_index), report.rows(test_index)
            c45 = C45DecisionTreeClassifier(domains=[list(range(s)) for s in data.domain_sizes],
                                            classes=list(range(data.n_classes)), max_depth=5).fit(train.X, train.y)
            nonprivate = float(np.mean(c45.predict(test.X) == test.y))
            for index, point in enumerate(budgets):
                seed = (repetition * 100 + index) * 10
                rho = Fraction(point["rho"])
                row: dict = {"repetition": repetition, "epsilon": point["epsilon"], "nonprivate": nonprivate}
                depth = tuned[f"{point['epsilon']:g}"]
                fitted = learners.id3(train, point, depth, seed + 1) if depth is not None else None
                if fitted is not None:
                    row["sulq_id3"] = float(np.mean(fitted.predict(test.X) == test.y))
                charged: list = []
                result = dispatch(trained, train, RhoZCDPBudget(rho), noise=Randomness(seed=seed + 2),
                                  charge=lambda cost, what: charged.append(cost))
                # each charge in rho by the accountant's rules (pure epsilon e costs e^2 / 2)
                spent = sum((Fraction(in_measure(c, RhoZCDPBudget(rho)).rho) for c in charged), Fraction(0))
                assert spent <= rho, "the tree ChoiceMaker overspent"
                row["tree_choicemaker"] = float(np.mean(result.model.predict(test.X) == test.y))
                row["tree_choicemaker_pick"] = result.choice
                picks[result.choice] = picks.get(result.choice, 0) + 1
                row["tree_best_fixed"] = tree_option_accuracy(TREE_OPTIONS[best_fixed], train, test, rho, seed + 3)
                # the same ChoiceMaker at pure epsilon = the point's epsilon (delta 0: a stronger
                # guarantee than (epsilon, delta), as diffprivlib's), to show what the rho costs it
                charged = []
                result = dispatch(trained, train, point["epsilon"], noise=Randomness(seed=seed + 4),
                                  charge=lambda cost, what: charged.append(cost))
                assert sum((Fraction(c.epsilon) for c in charged), Fraction(0)) <= Fraction(point["epsilon"])
                row["tree_choicemaker_pure"] = float(np.mean(result.model.predict(test.X) == test.y))
                runs.append(row)
        summary = summarise(runs, budgets, ID3_LEARNERS, "id3")
        out["tables"][table.name] = {"rows": int(data.n_rows), "classes": int(data.n_classes),
                                     "attributes": len(data.domain_sizes), "domains": table.source,
                                     "tuned_depth": tuned, "choicemaker_picks": picks, "summary": summary,
                                     "runs": runs, "seconds": time.perf_counter() - started}
        print_table("ID3", table.name, out["tables"][table.name], ID3_LEARNERS)
    return out


def tree_option_accuracy(option, train, test, rho: Fraction, seed: int) -> float:
    """A pure-epsilon tree Option at the largest epsilon with epsilon^2 / 2 <= rho (as the family
    runs it under a zCDP budget), scored on the test rows."""
    from jostle.choicemaker.family import run_epsilon
    from jostle.privacy.measures import RhoZCDPBudget
    from jostle.privacy.noise import Randomness

    epsilon = run_epsilon(RhoZCDPBudget(rho))
    with warnings.catch_warnings():  # the estimator's note that fits without budget= add up: these are public data
        warnings.simplefilter("ignore")
        model = option.fit(train, epsilon, Randomness(seed=seed))
    assert model.epsilon_spent_ <= epsilon
    return float(np.mean(model.predict(test.X) == test.y))


# ------------------------------------------------------------------------------- perceptron
def run_perceptron(tables: list[sulq_data.ClassificationTable], budgets: list[dict], repetitions: int,
                   quick: bool) -> dict:
    """Every table, budget and repetition of the perceptron comparison."""
    from sulq import summarise

    grid = ITERATIONS["quick" if quick else "full"]
    out: dict = {"learners": PERCEPTRON_LEARNERS, "measure": "test accuracy, binary (higher is better)",
                 "iterations_grid": grid, "c_grid": CS, "tables": {}}
    for table in tables:
        started = time.perf_counter()
        x, y = table.onehot, table.binary
        codes, sizes = np.asarray(table.data.X), table.data.domain_sizes
        tx, ty, tcodes = x[table.tuning_index], y[table.tuning_index], codes[table.tuning_index]
        tune_train, tune_test = _tuning_split(len(ty))
        tuned = {}
        for point in budgets:
            key = f"{point['epsilon']:g}"
            scores = {}
            for iterations in grid:
                accuracies = []
                for seed in range(TUNING_SEEDS):
                    model = learners.perceptron(tcodes[tune_train], ty[tune_train], sizes, point, iterations, 500 + seed)
                    if model is None:
                        break
                    accuracies.append(float(np.mean(model.predict(tcodes[tune_test]) == ty[tune_test])))
                if accuracies:
                    scores[iterations] = float(np.mean(accuracies))
            c_scores = {c: float(np.mean([baselines.linear_accuracy(
                baselines.diffprivlib_logistic(tx[tune_train], ty[tune_train], point["epsilon"], c, 500 + seed),
                tx[tune_test], ty[tune_test]) for seed in range(TUNING_SEEDS)])) for c in CS}
            tuned[key] = {"iterations": max(scores, key=scores.get) if scores else None,
                          "C": max(c_scores, key=c_scores.get)}
        rx, ry, rcodes = x[table.report_index], y[table.report_index], codes[table.report_index]
        runs = []
        for repetition in range(repetitions):
            train_index, test_index = sulq_data.split_report(len(ry), repetition)
            nonprivate = baselines.linear_accuracy(baselines.nonprivate_logistic(rx[train_index], ry[train_index]),
                                                   rx[test_index], ry[test_index])
            for index, point in enumerate(budgets):
                seed = (repetition * 100 + index) * 10
                setting = tuned[f"{point['epsilon']:g}"]
                row: dict = {"repetition": repetition, "epsilon": point["epsilon"], "nonprivate": nonprivate}
                if setting["iterations"] is not None:
                    model = learners.perceptron(rcodes[train_index], ry[train_index], sizes, point,
                                                setting["iterations"], seed + 1)
                    row["sulq_perceptron"] = float(np.mean(model.predict(rcodes[test_index]) == ry[test_index]))
                weights = baselines.diffprivlib_logistic(rx[train_index], ry[train_index], point["epsilon"],
                                                         setting["C"], seed + 2)
                row["diffprivlib_logistic"] = baselines.linear_accuracy(weights, rx[test_index], ry[test_index])
                runs.append(row)
        summary = summarise(runs, budgets, PERCEPTRON_LEARNERS, "perceptron")
        out["tables"][table.name] = {"rows": int(len(y)), "dimension": int(x.shape[1]), "positive": table.positive,
                                     "positive_share": float(np.mean(ry)), "tuned": tuned, "summary": summary,
                                     "runs": runs, "seconds": time.perf_counter() - started}
        print_table("perceptron", table.name, out["tables"][table.name], PERCEPTRON_LEARNERS)
    return out


def print_table(part: str, name: str, entry: dict, names: list[str]) -> None:
    print(f"\n{part} on {name} ({entry['rows']} rows; {entry['seconds']:.0f} s): test accuracy, mean [95% interval]")
    for key, summary in entry["summary"].items():
        cells = [f"{n} {s['mean']:.3f} [{s['low']:.3f}, {s['high']:.3f}]" for n in names
                 if np.isfinite((s := summary[n])["mean"])]
        print(f"  eps {key}: " + "; ".join(cells))
