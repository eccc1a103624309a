"""Benchmark of DP-BRL (issues 15 and 27): test AUC of the private rule lists (WITH private
antecedent mining) at epsilon 0.9, 0.5, 0.1, 0.01 for every fixed Option of the family and for
the rule-list ChoiceMaker (trained on the GENERATED corpus `generated_rule_corpus()` only), with
95% intervals over at least 50 runs per cell, against Belardo's Table 6.1 (mining NOT private),
the non-private BRL of this package and imodels' BayesianRuleListClassifier on the same splits;
a plot of the log score against the MCMC step; and the time of 3,000 MCMC steps on 30,000 rows.

    python benchmarks/brl.py [--data DIR] [--dataset FILE:TARGET ...] [--quick] [--runs N]

`--data` defaults to $JOSTLE_DATA or ../shared/datasets (relative to the repository); datasets
are CSV files under DIR/uci (default: titanic.csv:Survived and mushroom.csv:edibility).

Public domains, as the literature takes them: a categorical column's categories and a numeric
column's range are READ FROM THE FILE (numeric columns with more than 12 distinct values are cut
into 5 equal-width bins over the file's [min, max]; a missing value is its own category "?");
identifier-like columns (one value per row, or text with more than 30 categories) are dropped.
The private learner's row bound (`max_rows`) is the file's row count, for the fixed Options and
the ChoiceMaker alike. Run r holds out the seeded 10% of the rows of split r for testing; its
noise is seeded by r (the same for every Option). Nothing is tuned here: the Options, the
default split and the ChoiceMaker come from the generated corpus of jostle.learners.brl.corpus.

Per cell: the mean test AUC, its standard deviation and a 95% interval for the mean (Student t);
`goal` compares the interval with Table 6.1: "met" (the interval is at or above the thesis),
"within the interval" (the thesis lies in it), "missed by X" (the interval's top is X below).
The baselines (non-private BRL, imodels) run on the first `baseline_runs` splits, and an Option
whose first fit takes more than 2 s (BRLMinedTriples on Mushroom) on the first 10 (`runs` in
each cell says how many).

Writes benchmarks/results/brl.json ({"<dataset>": {"options": {"<Option>": {"<eps>": cell}},
"choicemaker": {"<eps>": cell + "choices"}, "nonprivate", "imodels", "thesis_table_6_1",
"goal": {"choicemaker"|"<Option>": {"<eps>": verdict}}}, "timing", "settings"}),
benchmarks/results/brl.png (AUC against epsilon with the intervals) and brl_traces.png (chains).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
import warnings
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchmark_data  # noqa: E402  (where the shared data is; the one-line message when it is not)

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
EPSILONS = (0.9, 0.5, 0.1, 0.01)
SLOW_SECONDS, SLOW_RUNS = 2.0, 10   # an Option slower than this per fit gets fewer runs (its cells say so)
DEFAULT_DATASETS = ("titanic.csv:Survived", "mushroom.csv:edibility")
THESIS = {  # Belardo 2018, Table 6.1 (test AUC, mining NOT privatised)
    "titanic": {"nonprivate": 0.813, "0.9": 0.782, "0.5": 0.770, "0.1": 0.650, "0.01": 0.563},
    "mushroom": {"nonprivate": 0.997, "0.9": 0.978, "0.5": 0.974, "0.1": 0.972, "0.01": 0.613},
}


def load(path: Path, target: str, bins: int = 5, max_categories: int = 12) -> tuple[pd.DataFrame, pd.Series, dict]:
    """The table's features as public categories (domains read from the file: see the docstring)."""
    frame = pd.read_csv(path)
    if target not in frame.columns:
        raise SystemExit(f"{path}: no column {target!r}; its columns are {list(frame.columns)}")
    y = frame[target].astype(str)
    features, domains = {}, {}
    for column in frame.columns:
        if column == target:
            continue
        values = frame[column]
        distinct = values.nunique()
        if distinct >= len(frame) * 0.9:
            continue  # an identifier
        if pd.api.types.is_numeric_dtype(values) and distinct > max_categories:
            low, high = float(values.min()), float(values.max())
            edges = np.linspace(low, high, bins + 1)
            labels = [f"[{edges[i]:.3g}, {edges[i + 1]:.3g})" for i in range(bins)]
            codes = np.clip(np.searchsorted(edges, values.fillna(low).to_numpy(float), side="right") - 1, 0, bins - 1)
            text = np.where(values.isna(), "?", np.asarray(labels, dtype=object)[codes])
            domain = labels + ["?"]
        else:
            if distinct > 30:
                continue  # free text (names, tickets)
            text = values.astype(str).where(values.notna(), "?").to_numpy(dtype=object)
            domain = sorted(set(text))
        features[str(column)] = text
        domains[str(column)] = list(domain)
    return pd.DataFrame(features), y, domains


def auc(labels: np.ndarray, scores: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(labels, scores))


def summarise(rows: list[dict[str, float]]) -> dict[str, float]:
    """Mean, sd and the 95% Student-t interval of the mean AUC, and the mean sizes and time."""
    from scipy import stats

    aucs = np.array([r["auc"] for r in rows], dtype=float)
    sd = float(np.std(aucs, ddof=1)) if len(aucs) > 1 else 0.0
    half = float(stats.t.ppf(0.975, len(aucs) - 1) * sd / math.sqrt(len(aucs))) if len(aucs) > 1 else 0.0
    return {"auc": float(aucs.mean()), "auc_std": sd, "ci_low": float(aucs.mean()) - half,
            "ci_high": float(aucs.mean()) + half,
            "length": float(np.mean([r["length"] for r in rows])),
            "antecedent_length": float(np.mean([r["antecedent_length"] for r in rows])),
            "seconds": float(np.mean([r["seconds"] for r in rows])), "runs": len(rows)}


def verdict(cell: dict[str, float], thesis: float) -> str:
    """The goal "at or above Table 6.1" judged with the cell's 95% interval."""
    if cell["ci_low"] >= thesis:
        return "met"
    if cell["ci_high"] >= thesis:
        return "within the interval"
    return f"missed by {thesis - cell['ci_high']:.3f}"


def run_ours(model: Any, X: pd.DataFrame, y: pd.Series, train: np.ndarray, test: np.ndarray,
             positive: str) -> dict[str, float]:
    start = time.perf_counter()
    model.fit(X.iloc[train], y.iloc[train])
    seconds = time.perf_counter() - start
    column = list(model.classes_).index(positive)
    return {"auc": auc((y.iloc[test] == positive).to_numpy(), model.predict_proba(X.iloc[test])[:, column]),
            "length": model.length_, "antecedent_length": model.average_antecedent_length_, "seconds": seconds}


def run_coded(fit: Callable[[], Any], codes: np.ndarray, labels: np.ndarray, test: np.ndarray) -> dict[str, float]:
    """One private fit on coded rows (`fit()` returns a fitted rule list), scored on `test`."""
    start = time.perf_counter()
    rules = fit()
    seconds = time.perf_counter() - start
    return {"auc": auc(labels[test] == 1, rules.predict_proba(codes[test])[:, 1]), "length": rules.length,
            "antecedent_length": rules.average_antecedent_length, "seconds": seconds}


def run_imodels(X: pd.DataFrame, y: pd.Series, train: np.ndarray, test: np.ndarray, positive: str,
                seed: int, iterations: int) -> dict[str, float]:
    from imodels import BayesianRuleListClassifier

    onehot = pd.get_dummies(X).astype(int)
    labels = (y == positive).astype(int).to_numpy()
    model = BayesianRuleListClassifier(max_iter=iterations, n_chains=3, random_state=seed)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(onehot.iloc[train].to_numpy(), labels[train], feature_names=list(onehot.columns))
    seconds = time.perf_counter() - start
    rules = [r for r in model.final_itemsets if r != "null"]
    return {"auc": auc(labels[test], model.predict_proba(onehot.iloc[test].to_numpy())[:, 1]), "length": len(rules),
            "antecedent_length": float(np.mean([len(r) for r in rules])) if rules else 0.0, "seconds": seconds}


def trained_choicemaker(quick: bool) -> Any:
    """The rule-list ChoiceMaker of stdlib/brl.jst, trained on the generated corpus only (the
    shipped model when it matches, else trained here, reusing the experience cache)."""
    from jostle.choicemaker.families import get
    from jostle.choicemaker.pretrained import load_or_train
    from jostle.learners.brl.corpus import generated_rule_corpus
    from jostle.learners.brl.options import BRL_OPTIONS
    from jostle.learners.brl.task import DEFAULT_METAFEATURES, RuleGrid

    family = get("brl")
    features = family.metafeatures()
    return load_or_train(family, list(BRL_OPTIONS.values()), [features[n] for n in DEFAULT_METAFEATURES],
                         generated_rule_corpus(), RuleGrid(), n_jobs=1, progress=False,
                         corpus_name="generated_rule_corpus()")


def choicemaker_cells(name: str, codes: np.ndarray, labels: np.ndarray, sizes: tuple, splits: list,
                      row_bound: int, chooser: Any, log: Callable[[str], None]) -> dict[str, Any]:
    """The ChoiceMaker's cells: per epsilon and split, one private dispatch (metafeature noise
    seeded by the run, the chosen Option's noise as the fixed Options'), scored on the test part."""
    from jostle.choicemaker import dispatch
    from jostle.learners.brl.corpus import RuleData
    from jostle.privacy.noise import Randomness

    cells: dict[str, Any] = {}
    for epsilon in EPSILONS:
        choices: dict[str, int] = {}

        def chosen(train: np.ndarray, run: int) -> Any:
            data = RuleData(codes[train], labels[train], sizes, 2, name=name, row_bound=row_bound)
            result = dispatch(chooser, data, float(epsilon), uncharged=True, noise=Randomness(10 * run + 2),
                              option_noise=lambda _: Randomness(10 * run + 1))
            choices[result.choice] = choices.get(result.choice, 0) + 1
            return result.result.fit.rule_list

        rows = [run_coded(lambda: chosen(train, run), codes, labels, test) for run, (train, test) in enumerate(splits)]
        cell = cells[str(epsilon)] = {**summarise(rows), "choices": choices}
        log(f"{name} ChoiceMaker eps {epsilon}: AUC {cell['auc']:.3f} [{cell['ci_low']:.3f}, {cell['ci_high']:.3f}] "
            f"choices {choices}")
    return cells


def benchmark_dataset(name: str, X: pd.DataFrame, y: pd.Series, domains: dict, runs: int, baseline_runs: int,
                      steps: int, imodels_iterations: int, chooser: Any, log: Callable[[str], None],
                      only_choicemaker: bool = False) -> dict[str, Any]:
    from jostle.learners.brl import BayesianRuleListClassifier
    from jostle.learners.brl.corpus import RuleData
    from jostle.learners.brl.options import BRL_OPTIONS
    from jostle.privacy.noise import Randomness

    classes = sorted(set(y))
    positive = classes[-1]
    names = list(domains)
    codes = np.column_stack([pd.Index(domains[n]).get_indexer(X[n]) for n in names]).astype(np.int64)
    labels = (y == positive).to_numpy().astype(np.int64)
    sizes = tuple(len(domains[n]) for n in names)
    splits = []
    for run in range(runs):
        order = np.random.default_rng(1000 + run).permutation(len(X))
        cut = max(len(X) // 10, 1)
        splits.append((order[cut:], order[:cut]))

    def data(train: np.ndarray) -> Any:
        return RuleData(codes[train], labels[train], sizes, 2, name=name, row_bound=len(X))

    out: dict[str, Any] = {"options": {}, "choicemaker": {}}
    for option in ([] if only_choicemaker else BRL_OPTIONS.values()):
        # an Option whose first fit takes more than SLOW_SECONDS (itemsets of 3 on Mushroom: 20,000
        # level-3 candidates) runs on the first SLOW_RUNS splits only; its cells say how many runs
        first = run_coded(lambda: option.fit(data(splits[0][0]), Fraction(EPSILONS[0]), Randomness(1)).fit.rule_list,
                          codes, labels, splits[0][1])
        used = splits if first["seconds"] <= SLOW_SECONDS else splits[:SLOW_RUNS]
        for epsilon in EPSILONS:
            rows = [run_coded(lambda: option.fit(data(train), Fraction(epsilon), Randomness(10 * run + 1)).fit.rule_list,
                              codes, labels, test) for run, (train, test) in enumerate(used)]
            cell = out["options"].setdefault(option.name, {})[str(epsilon)] = summarise(rows)
            log(f"{name} {option.name} eps {epsilon}: AUC {cell['auc']:.3f} [{cell['ci_low']:.3f}, "
                f"{cell['ci_high']:.3f}], length {cell['length']:.1f}, {cell['seconds']:.3f} s")
    if chooser is not None:
        out["choicemaker"] = choicemaker_cells(name, codes, labels, sizes, splits, len(X), chooser, log)
    if only_choicemaker:
        return out
    rows = [run_ours(BayesianRuleListClassifier(domains=domains, classes=classes, steps=steps, random_state=run),
                     X, y, train, test, positive) for run, (train, test) in enumerate(splits[:baseline_runs])]
    out["nonprivate"] = summarise(rows)
    log(f"{name} nonprivate: AUC {out['nonprivate']['auc']:.3f} +- {out['nonprivate']['auc_std']:.3f}")
    rows = [run_imodels(X, y, train, test, positive, run, imodels_iterations)
            for run, (train, test) in enumerate(splits[:baseline_runs])]
    out["imodels"] = summarise(rows)
    log(f"{name} imodels: AUC {out['imodels']['auc']:.3f} +- {out['imodels']['auc_std']:.3f}")
    return out


def goals(result: dict[str, Any], thesis: dict[str, float]) -> dict[str, dict[str, str]]:
    """Per row (the ChoiceMaker and every fixed Option) and epsilon, `verdict` against Table 6.1."""
    rows = {"choicemaker": result["choicemaker"], **result["options"]}
    return {row: {eps: verdict(cell, thesis[eps]) for eps, cell in cells.items() if eps in thesis}
            for row, cells in rows.items() if cells}


def chain_traces(X: pd.DataFrame, y: pd.Series, domains: dict, steps: int, epsilon: float) -> dict[str, Any]:
    """Log score per MCMC step on the whole table: the posterior chain (beta = 1) over FP-growth
    antecedents, and the chain on the exponential mechanism's distribution (beta = eps_select /
    Delta, the default split's selection share) over the same antecedents; plus the scores of
    200 exact-sampler draws. The benchmark reads the data to plot them; a private fit never
    releases them."""
    from jostle.learners.brl.bitsets import RowBits
    from jostle.learners.brl.mining import mine_frequent
    from jostle.learners.brl.scoring import ListScorer, LogFactorials, RuleListPrior
    from jostle.learners.brl.search import exponential_mechanism_list, run_chain
    from jostle.privacy.noise import Randomness, SimulationNoise

    names = list(domains)
    codes = np.column_stack([pd.Index(domains[n]).get_indexer(X[n]) for n in names])
    classes = sorted(set(y))
    labels = pd.Index(classes).get_indexer(y)
    sizes = [len(domains[n]) for n in names]
    mined = mine_frequent(codes, labels, sizes, len(classes), 0.1, 2)
    bits = RowBits.of(codes, labels, sizes, len(classes))

    def scorer(antecedents: list, max_length: int) -> ListScorer:
        prior = RuleListPrior([len(a) for a in antecedents], 3.0, 1.0, max_length)
        return ListScorer([bits.antecedent(a) for a in antecedents], bits.classes, bits.everything, prior,
                          LogFactorials(len(X), len(classes)))

    full = scorer(mined.antecedents, 10)
    posterior = run_chain(full, steps, SimulationNoise(0), beta=1.0)
    from jostle.learners.brl.accounting import BudgetSplit
    from jostle.learners.brl.learner import BRLSettings
    from jostle.learners.brl.search import mechanism_beta

    selection = BudgetSplit.of(Fraction(epsilon), BRLSettings().split, True).selection
    beta = mechanism_beta(selection, full.factorials.sensitivity_units)
    tempered = run_chain(full, steps, SimulationNoise(1), beta=beta)
    from jostle.learners.brl.mining import rank_antecedents

    small = scorer([mined.antecedents[i] for i in rank_antecedents(mined)[:8]], 3)
    noise = Randomness(2)
    exact = [small.nats(exponential_mechanism_list(small, noise, selection)) for _ in range(200)]
    return {"posterior": posterior.scores.tolist(), "tempered": tempered.scores.tolist(), "beta": beta,
            "exact_mean": float(np.mean(exact)), "exact_best_possible": float(max(exact)),
            "diagnostics": posterior.diagnostics.windows, "geweke_z": posterior.diagnostics.geweke_z}


def timing(X: pd.DataFrame, y: pd.Series, domains: dict, rows: int = 30_000, steps: int = 3000) -> dict[str, float]:
    """3,000 MCMC steps on `rows` rows (the table resampled with replacement, seeded)."""
    from jostle.learners.brl import BayesianRuleListClassifier

    index = np.random.default_rng(0).integers(0, len(X), rows)
    model = BayesianRuleListClassifier(domains=domains, classes=sorted(set(y)), steps=steps, chains=1, random_state=0)
    start = time.perf_counter()
    model.fit(X.iloc[index], y.iloc[index])
    return {"rows": rows, "steps": steps, "seconds_with_mining": time.perf_counter() - start,
            "antecedents": len(model.result_.antecedent_set)}


def plot_auc(results: dict[str, Any], path: Path) -> None:
    """AUC against epsilon per dataset: every fixed Option (thin), the ChoiceMaker (bold) with
    their 95% intervals, Table 6.1 and the non-private baselines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n in results if isinstance(results[n], dict) and "options" in results[n]]
    figure, axes = plt.subplots(1, len(names), figsize=(7 * len(names), 5.8), squeeze=False)
    for axis, name in zip(axes[0], names):
        result = results[name]
        positions = np.arange(len(EPSILONS))
        rows = list(result["options"].items()) + ([("ChoiceMaker", result["choicemaker"])] if result["choicemaker"]
                                                   else [])
        palette = plt.get_cmap("tab20")   # 14 Options: tab10's colours would repeat
        for index, (label, cells) in enumerate(rows):
            mean = [cells[str(e)]["auc"] for e in EPSILONS]
            low = [cells[str(e)]["auc"] - cells[str(e)]["ci_low"] for e in EPSILONS]
            high = [cells[str(e)]["ci_high"] - cells[str(e)]["auc"] for e in EPSILONS]
            bold = label == "ChoiceMaker"
            shift = (index - len(rows) / 2) * 0.025
            axis.errorbar(positions + shift, mean, yerr=[low, high], label=label, capsize=2,
                          linewidth=2.5 if bold else 0.9, color="black" if bold else palette(index % 20),
                          marker="o" if bold else ".")
        thesis = result.get("thesis_table_6_1")
        if thesis:
            axis.plot(positions, [thesis[str(e)] for e in EPSILONS], "r*", markersize=12,
                      label="Belardo 2018 Table 6.1 (mining not private)")
        for key, style in (("nonprivate", "--"), ("imodels", ":")):
            axis.axhline(result[key]["auc"], color="0.4", linestyle=style, label=f"{key} (not private)")
        axis.set_xticks(positions, [str(e) for e in EPSILONS])
        axis.set_xlabel("epsilon")
        runs = next(iter(result["options"].values()))[str(EPSILONS[0])]["runs"] if result["options"] else ""
        axis.set_ylabel(f"test AUC (mean and 95% interval of {runs} runs)")
        axis.set_ylim(0.4, 1.02)
        axis.set_title(f"{name}: private rule lists with private mining")
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.legend(handles, labels, fontsize=7, loc="lower center", ncol=6)   # below the panels: clear of the data
    figure.tight_layout(rect=(0, 0.17, 1, 1))
    figure.savefig(path, dpi=110)


def plot(traces: dict[str, dict[str, Any]], path: Path, epsilon: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(traces), figsize=(6.5 * len(traces), 4.2), squeeze=False)
    for axis, (name, trace) in zip(axes[0], traces.items()):
        steps = np.arange(1, len(trace["posterior"]) + 1)
        axis.plot(steps, trace["posterior"], label="posterior chain (beta = 1), non-private", color="tab:blue")
        axis.plot(steps, trace["tempered"], label=f"chain on the exp. mechanism, eps {epsilon} (beta = "
                  f"{trace['beta']:.3g})", color="tab:orange", alpha=0.8)
        axis.axhline(trace["exact_mean"], color="tab:green", linestyle="--",
                     label=f"exact sampler, eps {epsilon}: mean log score of 200 draws")
        for start in range(0, len(steps), 250):
            axis.axvline(start, color="0.9", linewidth=0.5, zorder=0)
        axis.set_title(f"{name}: log score against MCMC step (windows of 250)")
        axis.set_xlabel("MCMC step")
        axis.set_ylabel("log prior + log likelihood (nats)")
        axis.legend(fontsize=8, loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="data folder (default: $JOSTLE_DATA, else ../shared/datasets)")
    parser.add_argument("--dataset", action="append", help="FILE:TARGET under DIR/uci (repeatable)")
    parser.add_argument("--quick", action="store_true", help="10 runs, 3 baseline runs, shorter chains")
    parser.add_argument("--runs", type=int, default=None, help="runs per cell (default 50; 10 with --quick)")
    parser.add_argument("--no-choicemaker", action="store_true", help="skip the ChoiceMaker (no training)")
    parser.add_argument("--choicemaker-only", action="store_true",
                        help="add the ChoiceMaker's cells to the results file written before (same runs)")
    args = parser.parse_args(argv)
    runs, baseline_runs, steps, imodels_iterations = (10, 3, 2000, 3000) if args.quick else (50, 5, 3000, 10000)
    runs = args.runs or runs
    RESULTS.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    results: dict[str, Any] = {}
    traces: dict[str, Any] = {}
    loaded = {}
    specs = args.dataset or DEFAULT_DATASETS
    collection = benchmark_data.UCI
    if args.dataset:
        collection = dataclasses.replace(
            collection, what="the --dataset files",
            source="where you found them (the default tables: https://archive.ics.uci.edu)")
    folder = benchmark_data.require("brl.py", collection, args.data, [s.partition(":")[0] for s in specs])
    suffix = "_quick" if args.quick else ""
    previous = json.loads((RESULTS / f"brl{suffix}.json").read_text()) if args.choicemaker_only else {}
    chooser = None
    training_seconds = 0.0
    if not args.no_choicemaker:
        before = time.perf_counter()
        chooser = trained_choicemaker(args.quick)
        training_seconds = time.perf_counter() - before
        print(f"ChoiceMaker ready in {training_seconds:.0f} s (modes {chooser.modes})", flush=True)
    for spec in specs:
        file, _, target = spec.partition(":")
        path = folder / file
        name = Path(file).stem
        X, y, domains = load(path, target)
        if y.nunique() != 2:
            raise SystemExit(f"{file}: the class column {target!r} must have two values, it has {y.nunique()}")
        loaded[name] = (X, y, domains)
        print(f"{name}: {len(X)} rows, {X.shape[1]} features, {sum(len(d) for d in domains.values())} items",
              flush=True)
        if args.choicemaker_only:
            results = previous
            results[name]["choicemaker"] = benchmark_dataset(
                name, X, y, domains, results["settings"]["runs"], 0, steps, imodels_iterations, chooser,
                lambda text: print(text, flush=True), only_choicemaker=True)["choicemaker"]
        else:
            results[name] = benchmark_dataset(name, X, y, domains, runs, baseline_runs, steps, imodels_iterations,
                                              chooser, lambda text: print(text, flush=True))
        if name in THESIS:
            results[name]["thesis_table_6_1"] = THESIS[name]
            results[name]["goal"] = goals(results[name], THESIS[name])
            print(f"{name} goal (ChoiceMaker): {results[name]['goal'].get('choicemaker')}", flush=True)
        if not args.choicemaker_only:
            traces[name] = chain_traces(X, y, domains, steps, 0.9)
    if args.choicemaker_only:
        results["settings"]["choicemaker_training_seconds"] = training_seconds
        results["settings"]["choicemaker_seconds"] = time.perf_counter() - started
    else:
        largest = max(loaded, key=lambda n: len(loaded[n][0]))
        results["timing"] = {"dataset": largest, **timing(*loaded[largest])}
        print(f"timing: {results['timing']}", flush=True)
        results["settings"] = {"runs": runs, "baseline_runs": baseline_runs, "steps": steps,
                               "imodels_max_iter": imodels_iterations, "quick": args.quick, "test_share": 0.1,
                               "choicemaker_training_seconds": training_seconds,
                               "choicemaker_corpus": "generated_rule_corpus() (no benchmark table)",
                               "seconds": time.perf_counter() - started}
    (RESULTS / f"brl{suffix}.json").write_text(json.dumps(results, indent=2, default=float))
    plot_auc(results, RESULTS / f"brl{suffix}.png")
    if traces:
        (RESULTS / f"brl_traces{suffix}.json").write_text(json.dumps(traces, default=float))
        plot(traces, RESULTS / f"brl_traces{suffix}.png", 0.9)
    print(f"wrote {RESULTS / f'brl{suffix}.json'} and {RESULTS / f'brl{suffix}.png'} "
          f"in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
