"""Benchmark of DP-BRL (issue 15): test AUC, rule-list length, antecedent length and time of the
private rule lists (WITH private antecedent mining) at epsilon 0.9, 0.5, 0.1, 0.01, against the
non-private BRL of this package and imodels' BayesianRuleListClassifier on the same splits; a
plot of the log score against the MCMC step; and the time of 3,000 MCMC steps on 30,000 rows.

    python benchmarks/brl.py [--data DIR] [--dataset FILE:TARGET ...] [--quick]

`--data` defaults to $JOSTLE_DATA or ../shared/datasets (relative to the repository); datasets
are CSV files under DIR/uci (default: titanic.csv:Survived and mushroom.csv:edibility).

Public domains, as the literature takes them: a categorical column's categories and a numeric
column's range are READ FROM THE FILE (numeric columns with more than 12 distinct values are cut
into 5 equal-width bins over the file's [min, max]; a missing value is its own category "?");
identifier-like columns (one value per row, or text with more than 30 categories) are dropped.
The private learner's row bound (`max_rows`) is the file's row count. Each run holds out a
seeded 10% of the rows for testing; nothing is tuned here (the configurations were chosen on
the public corpus of jostle.learners.brl.corpus).

Writes benchmarks/results/brl.json ({"<dataset>": {"<eps>": {"auc", "auc_std", "length",
"antecedent_length", "seconds"}, "nonprivate": {...}, "imodels": {...}, "schema": {"<eps>": ...}}},
plus "timing") and benchmarks/results/brl.png.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
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
    aucs = [r["auc"] for r in rows]
    return {"auc": float(np.mean(aucs)), "auc_std": float(np.std(aucs, ddof=1)) if len(aucs) > 1 else 0.0,
            "length": float(np.mean([r["length"] for r in rows])),
            "antecedent_length": float(np.mean([r["antecedent_length"] for r in rows])),
            "seconds": float(np.mean([r["seconds"] for r in rows])), "runs": len(rows)}


def run_ours(model: Any, X: pd.DataFrame, y: pd.Series, train: np.ndarray, test: np.ndarray,
             positive: str) -> dict[str, float]:
    start = time.perf_counter()
    model.fit(X.iloc[train], y.iloc[train])
    seconds = time.perf_counter() - start
    column = list(model.classes_).index(positive)
    return {"auc": auc((y.iloc[test] == positive).to_numpy(), model.predict_proba(X.iloc[test])[:, column]),
            "length": model.length_, "antecedent_length": model.average_antecedent_length_, "seconds": seconds}


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


def benchmark_dataset(name: str, X: pd.DataFrame, y: pd.Series, domains: dict, runs: int, steps: int,
                      imodels_iterations: int, log: Callable[[str], None]) -> dict[str, Any]:
    from jostle.learners.brl import BayesianRuleListClassifier, DPBayesianRuleListClassifier
    from jostle.privacy.noise import Randomness

    classes = sorted(set(y))
    positive = classes[-1]
    splits = []
    for run in range(runs):
        order = np.random.default_rng(1000 + run).permutation(len(X))
        cut = max(len(X) // 10, 1)
        splits.append((order[cut:], order[:cut]))
    out: dict[str, Any] = {}
    common = dict(domains=domains, classes=classes, max_rows=len(X))
    for label, extra in (("default", {}), ("schema", {"antecedents": "public", "split": (0.0, 3.0, 1.0)})):
        for epsilon in EPSILONS:
            rows = [run_ours(DPBayesianRuleListClassifier(epsilon, noise=Randomness(10 * run + 1),
                                                          charge=lambda e, d: None, **common, **extra),
                             X, y, train, test, positive) for run, (train, test) in enumerate(splits)]
            summary = summarise(rows)
            (out if label == "default" else out.setdefault("schema", {}))[str(epsilon)] = summary
            log(f"{name} {label} eps {epsilon}: AUC {summary['auc']:.3f} +- {summary['auc_std']:.3f}, length "
                f"{summary['length']:.1f}, antecedent length {summary['antecedent_length']:.2f}, "
                f"{summary['seconds']:.2f} s")
    rows = [run_ours(BayesianRuleListClassifier(domains=domains, classes=classes, steps=steps, random_state=run),
                     X, y, train, test, positive) for run, (train, test) in enumerate(splits)]
    out["nonprivate"] = summarise(rows)
    log(f"{name} nonprivate: AUC {out['nonprivate']['auc']:.3f} +- {out['nonprivate']['auc_std']:.3f}")
    rows = [run_imodels(X, y, train, test, positive, run, imodels_iterations) for run, (train, test) in enumerate(splits)]
    out["imodels"] = summarise(rows)
    log(f"{name} imodels: AUC {out['imodels']['auc']:.3f} +- {out['imodels']['auc_std']:.3f}")
    return out


def chain_traces(X: pd.DataFrame, y: pd.Series, domains: dict, steps: int, epsilon: float) -> dict[str, Any]:
    """Log score per MCMC step on the whole table: the posterior chain (beta = 1) over FP-growth
    antecedents, and the chain on the exponential mechanism's distribution (beta = eps_select /
    (2 Delta)) over the same antecedents; plus the scores of 200 exact-sampler draws. The
    benchmark reads the data to plot them; a private fit never releases them."""
    from jostle.learners.brl.bitsets import RowBits
    from jostle.learners.brl.mining import mine_frequent
    from jostle.learners.brl.scoring import UNIT, ListScorer, LogFactorials, RuleListPrior
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
    beta = (epsilon / 3) / (2 * full.factorials.sensitivity_units / UNIT)
    tempered = run_chain(full, steps, SimulationNoise(1), beta=beta)
    from jostle.learners.brl.mining import rank_antecedents

    small = scorer([mined.antecedents[i] for i in rank_antecedents(mined)[:8]], 3)
    noise = Randomness(2)
    exact = [small.nats(exponential_mechanism_list(small, noise, Fraction(epsilon / 3))) for _ in range(200)]
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
    parser.add_argument("--quick", action="store_true", help="3 runs and shorter chains (under 10 minutes)")
    args = parser.parse_args(argv)
    runs, steps, imodels_iterations = (3, 2000, 3000) if args.quick else (5, 3000, 10000)
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
        results[name] = benchmark_dataset(name, X, y, domains, runs, steps, imodels_iterations,
                                          lambda text: print(text, flush=True))
        if name in THESIS:
            results[name]["thesis_table_6_1"] = THESIS[name]
        traces[name] = chain_traces(X, y, domains, steps, 0.9)
    largest = max(loaded, key=lambda n: len(loaded[n][0]))
    results["timing"] = {"dataset": largest, **timing(*loaded[largest])}
    print(f"timing: {results['timing']}", flush=True)
    results["settings"] = {"runs": runs, "steps": steps, "imodels_max_iter": imodels_iterations, "quick": args.quick,
                           "test_share": 0.1, "seconds": time.perf_counter() - started}
    suffix = "_quick" if args.quick else ""
    (RESULTS / f"brl{suffix}.json").write_text(json.dumps(results, indent=2, default=float))
    (RESULTS / f"brl_traces{suffix}.json").write_text(json.dumps(traces, default=float))
    plot(traces, RESULTS / f"brl{suffix}.png", 0.9)
    print(f"wrote {RESULTS / f'brl{suffix}.json'} and {RESULTS / f'brl{suffix}.png'} "
          f"in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
