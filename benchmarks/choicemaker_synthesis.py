"""Benchmark of synthesised metafeatures and predict rules (jostle/choicemaker/synthesis*.py).

For each segment (histograms 1D and 2D on DPBench's shapes; trees on the bundled classification
corpus), the outer leave-one-dataset-out regret (`synthesis_report.nested_evaluation`: the
outer held-out groups only report; the synthesis search, the meta-model kind and the decision
to measure see only the training groups, through inner folds of them) of:
  * best_fixed: the best single Option on the training groups, measuring nothing (whole budget);
  * current: the metafeatures the shipped ChoiceMaker reads (histograms: stdlib/histograms.jst's,
    the noisy size and the profile ones, and log(profile_size * epsilon); trees: the family's
    defaults in the table);
  * synthesised: expressions found by the search over every base statistic of the table;
  * augmented: the current metafeatures plus up to two expressions the search adds to them;
  * predict_rules: per-Option linear rules for log error over 1-3 synthesised expressions.
Regret is DPBench's: the chosen runs' mean error (scaled for the budget its releases take:
a choice that measures nothing runs at the whole budget) over the configuration's best Option
at the whole budget. Intervals: 95% t intervals over held-out configurations (configurations of
one group are not independent, so they are optimistic) and of the paired difference to current.
The winners of a final search on every group are written as Jostle code.

Experience: `--source fresh` (default) builds it through `jostle.choicemaker` (cached in
~/.cache/jostle, n_jobs=1): histograms on DPBench's shapes with choicemaker_histograms.py's
training grid (--quick: its quick grid); trees with the family's default grid on its corpus.
`--source cache` reads the newest cached experience pieces of each family that have the
metafeature columns (what earlier runs of the family's code computed; the JSON says which).

Usage:
    python benchmarks/choicemaker_synthesis.py [--quick] [--data DIR] [--source fresh|cache]
                                               [--trees-source fresh|cache] [--transfer]
                                               [--families histograms,trees]
Results: benchmarks/results/choicemaker_synthesis.json, .png and _code.jst (the winners).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import benchmark_data  # noqa: E402

from jostle.choicemaker import families  # noqa: E402
from jostle.choicemaker.experience import default_cache_dir, experience_table  # noqa: E402
from jostle.choicemaker.model import MODEL_KINDS  # noqa: E402
from jostle.choicemaker.synthesis import Expression, statistics_of, synthesis_data  # noqa: E402
from jostle.choicemaker.synthesis_report import (CHOOSERS, nested_evaluation, transfer_evaluation,  # noqa: E402
                                                 winners_code)

RESULTS = ROOT / "benchmarks" / "results"
# What stdlib/histograms.jst's ChoiceMakers read, in its order (the noisy size is a release of its own)
HISTOGRAM_CURRENT = ("size", "domain_size", "epsilon", "profile_size", "profile_uniformity", "profile_roughness",
                     "profile_entropy", "profile_signal", "profile_peaks", "profile_max_share", "profile_empty_share",
                     "profile_records_per_cell")
HISTOGRAM_SHARE = 0.01  # stdlib/histograms.jst's share


def histogram_experience(args: argparse.Namespace) -> tuple[pd.DataFrame, list, str]:
    """The DPBench experience with every profile statistic (one release: the profile)."""
    import choicemaker_histograms as bench
    from jostle.learners.histograms.corpus import dpbench_corpus
    from jostle.learners.histograms.metafeatures import BUILTIN_METAFEATURES
    from jostle.learners.histograms.options import BUILTIN_OPTIONS

    family = families.get("histograms")
    names = [*HISTOGRAM_CURRENT, *(n for n in BUILTIN_METAFEATURES if n.startswith("profile_")
                                   and n not in HISTOGRAM_CURRENT)]
    features = [BUILTIN_METAFEATURES[n] for n in names]
    if args.source == "cache":
        return cached_pieces("histograms", names), features, "newest cached pieces"
    folder = benchmark_data.require("choicemaker_synthesis.py", benchmark_data.DPBENCH, args.data,
                                    ["1D/*.npy", "2D/*.npy"])
    grid = bench.grids(args.quick)[0]
    table = experience_table(family, list(BUILTIN_OPTIONS.values()), features, dpbench_corpus(folder), grid,
                             HISTOGRAM_SHARE, n_jobs=1, progress=False)
    return table, features, f"DPBench shapes, choicemaker_histograms.py's {'quick ' if args.quick else ''}grid"


def bundled_histogram_experience(features: list) -> pd.DataFrame:
    """The bundled offline corpus's experience (what stdlib ChoiceMakers train on), default grid."""
    from jostle.learners.histograms.corpus import default_corpus
    from jostle.learners.histograms.options import BUILTIN_OPTIONS

    family = families.get("histograms")
    return experience_table(family, list(BUILTIN_OPTIONS.values()), features, default_corpus(),
                            family.default_grid(), HISTOGRAM_SHARE, n_jobs=1, progress=False)


def transfer_segment(label: str, family: object, train_rows: pd.DataFrame, test_rows: pd.DataFrame,
                     features: list, current: list[str], args: argparse.Namespace, corpus: str) -> dict:
    """Selected and fitted on the bundled corpus, judged on DPBench's shapes (nothing of them
    selects); the winners' code is the bundled corpus's (what stdlib/synthesised.jst ships)."""
    statistics = statistics_of(features)
    make = lambda rows: synthesis_data(rows, statistics, family.config_columns, HISTOGRAM_SHARE,  # noqa: E731
                                       family.payoff_rule, family.group_column)
    train, test = make(train_rows), make(test_rows)
    current_expressions = [Expression("x", (n,)) for n in current] + [Expression("log_product",
                                                                                 ("profile_size", "epsilon"))]
    started = time.time()
    evaluation = transfer_evaluation(train, test, current_expressions, model_kinds=args.model_kinds)
    summary = evaluation.summary()
    augment = summary["augmented"]["avg_regret"] < summary["synthesised"]["avg_regret"]
    winners = winners_code(train, ["h", "q"], corpus, name=re.sub(r"\W+", "_", label.lower()).strip("_"),
                           max_terms=2 if augment else 3, start=current_expressions if augment else ())
    return {"segment": label, "groups": int(len(np.unique(test.measured.groups))), "code_augments_current": augment,
            "training_groups": int(len(np.unique(train.measured.groups))), "summary": summary,
            "selected": evaluation.folds[0], "code": winners.code,
            "winning_metafeatures": [e.code() for e in winners.metafeatures.expressions],
            "winning_rule_inputs": [e.code() for e in winners.rule_selection.expressions],
            "seconds": time.time() - started}


def tree_experience(args: argparse.Namespace) -> tuple[pd.DataFrame, list, str]:
    """The tree family's experience on its corpus with its default metafeatures."""
    family = families.get("trees")
    registry = family.metafeatures()
    features = [registry[n] for n in family.default_metafeatures]
    if (args.trees_source or args.source) == "cache":
        table = cached_pieces("trees", [f.name for f in features if f.name in ("size", "epsilon", "log_signal")])
        present = [f for f in features if "mf_" + f.name in table.columns]
        return table, present, "newest cached pieces"
    options = list(family.options().values())
    table = experience_table(family, options, features, family.default_corpus(options), family.default_grid(),
                             0.1, n_jobs=1, progress=False)
    return table, features, "the family's corpus and default grid"


def cached_pieces(family: str, names: list[str]) -> pd.DataFrame:
    """The newest cached experience piece of each (task, piece) having every `mf_<name>` column."""
    wanted = {"mf_" + n for n in names}
    chosen: dict[tuple, tuple[float, pd.DataFrame]] = {}
    for path in glob.glob(str(default_cache_dir() / "experience" / family / "*.pkl")):
        piece = pd.read_pickle(path)
        if piece.empty or not wanted <= set(piece.columns):
            continue
        extra = {c for c in piece.columns if c.startswith("mf_")} - wanted
        key = (tuple(sorted(extra)), *(str(piece[c].iloc[0]) for c in piece.columns[:3]),
               tuple(sorted(piece["option"].unique())))
        stamp = os.path.getmtime(path)
        if key not in chosen or stamp > chosen[key][0]:
            chosen[key] = (stamp, piece)
    if not chosen:
        raise SystemExit(f"no cached {family} experience with {sorted(wanted)}; run with --source fresh")
    frames = [piece for _, piece in chosen.values()]
    columns = set.intersection(*(set(f.columns) for f in frames))
    return pd.concat([f[[c for c in f.columns if c in columns]] for f in frames], ignore_index=True)


def segments(family_name: str, table: pd.DataFrame) -> list[tuple[str, pd.DataFrame, str]]:
    """(label, rows, corpus text for the code) per segment."""
    if family_name == "histograms":
        return [(f"histograms {d}D", table[table["dims"] == d], f"dpbench_corpus(DIR)  # or histogram_corpus({d})")
                for d in sorted(table["dims"].unique())]
    return [("trees", table, "tree_corpus()")]


def run_segment(label: str, family: object, rows: pd.DataFrame, features: list, current: list[str],
                share: float, args: argparse.Namespace, params: list[str], corpus: str) -> dict:
    statistics = statistics_of(features)
    data = synthesis_data(rows, statistics, family.config_columns, share, family.payoff_rule, family.group_column,
                          regret_measure=family.regret_measure)
    current_expressions = [Expression("x", (n,)) for n in current if n in data.statistics]
    for first, second in family.meta_input_products:  # the engine's products, as the shipped model reads them
        if first in data.statistics and second in data.statistics and first in current and second in current:
            current_expressions.append(Expression("log_product", (first, second)))
    groups = len(np.unique(data.measured.groups))
    outer = None if groups <= 20 else 10
    started = time.time()
    evaluation = nested_evaluation(data, current_expressions, outer_folds=outer, inner_folds=4,
                                   max_terms=3, model_kinds=args.model_kinds)
    summary = evaluation.summary()
    augment = summary["augmented"]["avg_regret"] < summary["synthesised"]["avg_regret"]
    winners = winners_code(data, params, corpus, name=re.sub(r"\W+", "_", label.lower()).strip("_"),
                           max_terms=2 if augment else 3, start=current_expressions if augment else ())
    return {"segment": label, "groups": groups, "code_augments_current": bool(augment), "outer_folds": outer or groups,
            "rows": int(len(data.measured.errors)), "options": data.measured.options,
            "base_statistics": {s.name: s.unit or "free" for s in data.statistics.values()},
            "current": [e.name for e in current_expressions], "share": share, "payoff_rule": family.payoff_rule,
            "summary": summary, "folds": evaluation.folds,
            "winning_metafeatures": [e.code() for e in winners.metafeatures.expressions],
            "winning_metafeatures_inner_regret_path": list(winners.metafeatures.path),
            "winning_rule_inputs": [e.code() for e in winners.rule_selection.expressions],
            "code": winners.code, "seconds": time.time() - started}


def plot(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(4.2 * len(results), 3.6), squeeze=False)
    colours = {"best_fixed": "#999999", "current": "#1f77b4", "synthesised": "#d62728", "augmented": "#ff7f0e",
               "predict_rules": "#2ca02c"}
    for ax, result in zip(axes[0], results):
        names = [c for c in CHOOSERS if c in result["summary"]]
        means = [result["summary"][c]["avg_regret"] for c in names]
        errors = [result["summary"][c]["ci95"] for c in names]
        ax.bar(range(len(names)), means, yerr=errors, color=[colours[c] for c in names], capsize=4)
        ax.set_xticks(range(len(names)), [n.replace("_", "\n") for n in names], rotation=30, ha="right",
                      fontsize=8)
        ax.axhline(1.0, color="black", linewidth=0.6)
        ax.set_ylim(bottom=min(0.9, min(means) - 0.05))
        ax.set_title(f"{result['segment']} ({result['groups']} groups)", fontsize=10)
        ax.set_ylabel("outer-LODO average regret (95% CI)")
    fig.suptitle("Synthesised metafeatures and predict rules vs current, held-out groups", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=None, help="folder holding dpbench/ (default $JOSTLE_DATA, else "
                                                     "../shared/datasets)")
    parser.add_argument("--quick", action="store_true", help="the histogram benchmark's quick grid; fewer "
                                                             "meta-model kinds")
    parser.add_argument("--source", choices=["fresh", "cache"], default="fresh")
    parser.add_argument("--trees-source", choices=["fresh", "cache"], default=None,
                        help="the trees' experience source (default: --source)")
    parser.add_argument("--families", default="histograms,trees")
    parser.add_argument("--transfer", action="store_true",
                        help="histograms: also select on the bundled corpus and judge on DPBench")
    parser.add_argument("--output", default=str(RESULTS / "choicemaker_synthesis"))
    args = parser.parse_args(argv)
    args.model_kinds = ("best_fixed", "forest_regret", "knn_regret") if args.quick else MODEL_KINDS
    started = time.time()
    results, sources = [], {}
    for name in args.families.split(","):
        family = families.get(name)
        if name == "histograms":
            table, features, source = histogram_experience(args)
            current, share, params = list(HISTOGRAM_CURRENT), HISTOGRAM_SHARE, ["h", "q"]
        else:
            table, features, source = tree_experience(args)
            current, share, params = [f.name for f in features], 0.1, ["t", "target"]
        sources[name] = source
        for label, rows, corpus in segments(name, table):
            print(f"{label}: {rows['group'].nunique()} groups, {len(rows)} runs", flush=True)
            result = run_segment(label, family, rows, features, current, share, args, params, corpus)
            result["experience"] = source
            results.append(result)
            print(json.dumps({c: round(v["avg_regret"], 3) for c, v in result["summary"].items()}), flush=True)
        if name == "histograms" and args.transfer:
            bundled = bundled_histogram_experience(features)
            for dims in sorted(table["dims"].unique()):
                label = f"histograms {dims}D: bundled corpus -> DPBench"
                print(label, flush=True)
                result = transfer_segment(label, family, bundled[bundled["dims"] == dims], table[table["dims"] == dims],
                                          features, current, args, f"histogram_corpus({dims})")
                result["experience"] = "selected on the bundled corpus (default grid); judged on " + source
                results.append(result)
                print(json.dumps({c: round(v["avg_regret"], 3) for c, v in result["summary"].items()}), flush=True)
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    document = {"command": "python benchmarks/choicemaker_synthesis.py " + " ".join(argv or sys.argv[1:]),
                "quick": args.quick, "sources": sources, "model_kinds": list(args.model_kinds),
                "wall_seconds": time.time() - started, "segments": results}
    output.with_suffix(".json").write_text(json.dumps(document, indent=2, default=float))
    output.with_name(output.name + "_code.jst").write_text(
        "\n".join(f"# ---- {r['segment']}\n{r['code']}" for r in results))
    plot(results, output.with_suffix(".png"))
    return results


if __name__ == "__main__":
    main()
