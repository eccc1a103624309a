"""Part 5b of `benchmarks/sulq.py`: choosing between the SuLQ perceptron and diffprivlib's DP
logistic regression, with its regret.

The two linear learners' winner changes with the data and the budget (part 4), but diffprivlib's
learner is not a Jostle Option (diffprivlib is a benchmark-only dependency), so the engine's
ChoiceMaker cannot hold both. This chooser is the same idea built here, small: it is trained on
public tasks apart from the reported ones (the SuLQ family's corpus,
`jostle.learners.sulq_classifiers.corpus.sulq_corpus`: each task read binary, its first class
against the rest, one-hot with norm 1 as in `sulq_data`), where both learners run at every
epsilon of the benchmark on seeded 70/30 splits (default settings: 10 iterations, C = 1; no
tuning on the reported tables). Its metafeatures are PUBLIC only, so it spends nothing: log
epsilon and log of the one-hot dimension D (from the public domains). Its model: a depth-2
decision tree predicting which learner is more accurate, each training row weighted by the
size of the difference. On a reported table it picks at each epsilon (the same pick for every
split: nothing private is read), and its accuracy is the picked learner's on that split (the
part 4 runs). Regret = the better learner's mean accuracy in hindsight minus the chooser's, with
the 95% interval over the repetitions; the best fixed learner on the corpus is the baseline.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

import sulq_baselines as baselines
import sulq_data
import sulq_learners as learners

QUICK_TASKS = 10
SPLITS = {"full": 2, "quick": 1}
ITERATIONS = 10
C = 1.0


def corpus_tasks(quick: bool) -> list:
    """The SuLQ corpus, one binary one-hot reading per task (the largest first; --quick: 10)."""
    from jostle.learners.sulq_classifiers.corpus import sulq_corpus

    tasks = sorted(sulq_corpus(), key=lambda t: -t.n_rows)
    if quick:
        by_group: dict = {}
        for task in tasks:
            by_group.setdefault(task.group, task)
        tasks = list(by_group.values())[:QUICK_TASKS]
    return tasks


def experience(tasks: list, budgets: list[dict], quick: bool) -> list[dict]:
    """Both learners on every corpus task, epsilon and split: accuracies and the metafeatures."""
    rows = []
    for number, task in enumerate(tasks):
        codes, labels = np.asarray(task.X), (np.asarray(task.y) == 0).astype(int)
        if labels.min() == labels.max():
            continue
        onehot = sulq_data.onehot_rows(codes, task.domain_sizes)
        for split in range(SPLITS["quick" if quick else "full"]):
            train, test = sulq_data.split_report(len(labels), 500 + split)
            for index, point in enumerate(budgets):
                seed = ((number * 10 + split) * 10 + index) * 10 + 7
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = learners.perceptron(codes[train], labels[train], task.domain_sizes, point, ITERATIONS, seed)
                    weights = baselines.diffprivlib_logistic(onehot[train], labels[train], point["epsilon"], C, seed + 1)
                rows.append({"task": task.name, "rows": int(len(labels)), "dimension": int(onehot.shape[1]),
                             "epsilon": point["epsilon"],
                             "sulq_perceptron": float(np.mean(model.predict(codes[test]) == labels[test])),
                             "diffprivlib_logistic": baselines.linear_accuracy(weights, onehot[test], labels[test])})
    return rows


def features(epsilon: float, dimension: int) -> list[float]:
    """The public metafeatures: log epsilon, log D."""
    return [float(np.log(epsilon)), float(np.log(dimension))]


def run(perceptron: dict, budgets: list[dict], quick: bool) -> dict:
    """Train the chooser on the corpus, then score its picks on the reported tables' part 4 runs."""
    from sklearn.tree import DecisionTreeClassifier, export_text

    started = time.perf_counter()
    tasks = corpus_tasks(quick)
    table = experience(tasks, budgets, quick)
    x = np.array([features(r["epsilon"], r["dimension"]) for r in table])
    difference = np.array([r["sulq_perceptron"] - r["diffprivlib_logistic"] for r in table])
    chooser = DecisionTreeClassifier(max_depth=2, random_state=0)
    chooser.fit(x, (difference > 0).astype(int), sample_weight=np.abs(difference) + 1e-9)
    fixed = "sulq_perceptron" if difference.mean() > 0 else "diffprivlib_logistic"
    out: dict = {"corpus_tasks": len({r["task"] for r in table}), "experience_rows": len(table),
                 "corpus_mean_difference": float(difference.mean()), "best_fixed_on_corpus": fixed,
                 "corpus_sulq_share_better": float(np.mean(difference > 0)),
                 "model": export_text(chooser, feature_names=["log_epsilon", "log_dimension"]),
                 "experience": table, "tables": {}}
    for name, entry in perceptron["tables"].items():
        summary = {}
        for point in budgets:
            key = f"{point['epsilon']:g}"
            runs = [r for r in entry["runs"] if r["epsilon"] == point["epsilon"] and "sulq_perceptron" in r]
            if not runs:
                continue
            pick = ("sulq_perceptron" if chooser.predict([features(point["epsilon"], entry["dimension"])])[0] == 1
                    else "diffprivlib_logistic")
            means = {n: float(np.mean([r[n] for r in runs])) for n in ("sulq_perceptron", "diffprivlib_logistic")}
            best = max(means, key=means.get)
            summary[key] = {"pick": pick, "best": best, "chooser": baselines.mean_interval([r[pick] for r in runs]),
                            "regret": baselines.mean_interval([r[best] - r[pick] for r in runs]),
                            "fixed_regret": baselines.mean_interval([r[best] - r[fixed] for r in runs])}
        out["tables"][name] = summary
    out["seconds"] = time.perf_counter() - started
    print(f"\nchooser between the SuLQ perceptron and diffprivlib's logistic regression (trained on "
          f"{out['corpus_tasks']} corpus tasks, {len(table)} runs, {out['seconds']:.0f} s): the SuLQ perceptron is "
          f"better in {out['corpus_sulq_share_better']:.0%} of the corpus runs; best fixed on the corpus {fixed}")
    print("  " + out["model"].replace("\n", "\n  "))
    for name, summary in out["tables"].items():
        for key, cell in summary.items():
            print(f"  {name} eps {key}: picks {cell['pick']} (best {cell['best']}); regret {cell['regret']['mean']:.3f} "
                  f"[{cell['regret']['low']:.3f}, {cell['regret']['high']:.3f}]; always {fixed}: "
                  f"{cell['fixed_regret']['mean']:.3f}")
    return out

