"""How well iterative Bayesian reconstruction recovers a distribution from locally randomised
values (issue 26): the mass of a wide property well, a single point badly.

Data: the lecture's prior on 0..1000 (p(0) = 0.01, every other value 0.00099), n = 10,000 and
100,000 rows, 20 seeds (public, generated data: nothing here is private). Each row is randomised
by the lecture's R3 (half R2 = x + uniform[-100, 100] mod 1001, half uniform; gamma 1202/201,
1.79-locally DP) and, for contrast, R1 (keep 20%, else uniform; gamma 251.25), with Jostle's exact
sampler (jostle.privacy.randomisation.sample). The original distribution is estimated by EM
(Agrawal and Srikant 2000; jostle.privacy.reconstruction) with its default stopping rule (a step gaining
under 1/2 nat of log-likelihood) and, for contrast, run on (tolerance 1e-6, at most 1000 steps). Reported
against the truth of each sample:

  * Q2 = P(x outside 200..800) (true mass about 0.405): the EM estimate, and the naive one (the
    share of randomised values outside 200..800);
  * Q1 = P(x = 0) (true mass about 0.01): the EM estimate, and the naive one.

Mean absolute error and a 95% interval (2.5 and 97.5 percentiles over seeds) per n, operator and
stopping rule. `--dataset FILE:COLUMN:LO:HI` runs the same on a column of a CSV (values rounded and
clipped into LO..HI; R3's analogue: half cyclic noise of width (HI - LO + 1) / 5, half uniform;
Q2 the mass outside the middle 60% of the domain, Q1 the mass of its most frequent value).

Writes benchmarks/results/reconstruction.json and reconstruction.png (reconstruction_quick.*
with --quick: n = 10,000 only, 5 seeds, no run-on EM).

Usage (from the repository root):
    python benchmarks/reconstruction.py [--quick] [--dataset FILE:COLUMN:LO:HI] [--output DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from jostle.privacy.noise import Randomness
from jostle.privacy.randomisation import Operator, amplification, cyclic_uniform, keep_or_uniform, mixture, sample
from jostle.privacy.reconstruction import reconstruct

RESULTS = Path(__file__).resolve().parent / "results"


def lecture_data(n: int, seed: int) -> np.ndarray:
    """n values of the lecture's prior on 0..1000."""
    prior = np.full(1001, 0.00099)
    prior[0] = 0.01
    return np.random.default_rng(seed).choice(1001, size=n, p=prior)


def operators(size: int, width: int) -> dict[str, Operator]:
    """R3 (half cyclic noise in [-width, width], half uniform) and R1 (keep 20%, else uniform)."""
    return {"R3": mixture([("1/2", cyclic_uniform(size, width)), ("1/2", keep_or_uniform(size, 0))]),
            "R1": keep_or_uniform(size, "1/5")}


def one_run(x: np.ndarray, operator: Operator, seed: int, q2: np.ndarray, point: int,
            run_on: bool) -> dict:
    """Randomise x, reconstruct, and compare the two masses with the truth of this sample."""
    y = sample(Randomness(seed), operator, x)
    row = {"true_q2": float(q2[x].mean()), "true_q1": float(np.mean(x == point)),
           "naive_q2": float(q2[np.clip(y, 0, len(q2) - 1)].mean()), "naive_q1": float(np.mean(y == point))}
    rules = {"likelihood": {}, "run_on": {"likelihood_stop": False, "tolerance": 1e-6, "iterations": 1000}}
    for rule, options in rules.items():
        if rule == "run_on" and not run_on:
            continue
        start = time.perf_counter()
        estimate = reconstruct(operator, y, **options)
        f = estimate.probabilities
        row[f"{rule}_q2"], row[f"{rule}_q1"] = float(f[q2].sum()), float(f[point])
        row[f"{rule}_iterations"], row[f"{rule}_seconds"] = estimate.iterations, time.perf_counter() - start
    return row


def summarise(rows: list[dict]) -> dict:
    """Mean absolute error and 95% interval of the signed error, per estimator and property."""
    frame = pd.DataFrame(rows)
    out: dict = {}
    for estimator in ("naive", "likelihood", "run_on"):
        for q in ("q2", "q1"):
            column = f"{estimator}_{q}"
            if column not in frame:
                continue
            error = frame[column] - frame[f"true_{q}"]
            out[column] = {"mean_estimate": float(frame[column].mean()), "mean_truth": float(frame[f"true_{q}"].mean()),
                           "mean_abs_error": float(error.abs().mean()),
                           "relative_abs_error": float((error.abs() / frame[f"true_{q}"]).mean()),
                           "error_interval_95": [float(error.quantile(0.025)), float(error.quantile(0.975))]}
        if f"{estimator}_iterations" in frame:
            out[f"{estimator}_iterations_mean"] = float(frame[f"{estimator}_iterations"].mean())
    return out


def load_dataset(spec: str) -> tuple[np.ndarray, int, int, str]:
    """FILE:COLUMN:LO:HI -> the column rounded and clipped into LO..HI, shifted to 0..HI-LO."""
    file, column, lo, hi = spec.rsplit(":", 3)
    lo_i, hi_i = int(lo), int(hi)
    values = pd.read_csv(file)[column].dropna().to_numpy(dtype=float)
    return (np.clip(np.round(values), lo_i, hi_i) - lo_i).astype(np.int64), lo_i, hi_i, f"{Path(file).name}:{column}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 10,000, 5 seeds, no run-on EM")
    parser.add_argument("--dataset", help="FILE:COLUMN:LO:HI, a CSV column instead of the lecture's prior")
    parser.add_argument("--seeds", type=int, default=None, help="repetitions (default 20; 5 with --quick)")
    parser.add_argument("--output", type=Path, default=RESULTS, help="where the JSON and PNG go")
    args = parser.parse_args(argv)
    seeds = args.seeds or (5 if args.quick else 20)
    sizes = [10_000] if args.quick else [10_000, 100_000]
    if args.dataset:
        data, lo, hi, name = load_dataset(args.dataset)
        size = hi - lo + 1
        width, point = max(size // 10, 1), int(np.bincount(data, minlength=size).argmax())
        middle = (int(lo + 0.2 * size), int(lo + 0.8 * size))
        sizes = [len(data)]
    else:
        data, lo, size, width, point, middle, name = None, 0, 1001, 100, 0, (200, 800), "lecture prior"
    values = np.arange(lo, lo + size)
    q2 = (values < middle[0]) | (values > middle[1])
    results = {"data": name, "domain": [lo, lo + size - 1], "q2": f"x outside {middle[0]}..{middle[1]}",
               "q1": f"x = {lo + point}", "seeds": seeds, "operators": {}, "runs": {}}
    started = time.perf_counter()
    for op_name, operator in operators(size, width).items():
        results["operators"][op_name] = {"name": operator.name, "gamma": str(amplification(operator))}
        for n in sizes:
            rows = []
            for seed in range(seeds):
                x = data if data is not None else lecture_data(n, seed)
                rows.append(one_run(x, operator, 1000 + seed, q2, point, run_on=not args.quick))
            summary = summarise(rows)
            results["runs"][f"{op_name} n={n}"] = {"n": n, "operator": op_name, "summary": summary, "rows": rows}
            print(f"{op_name} n={n}: " + ", ".join(f"{k} |err| {v['mean_abs_error']:.4f}" for k, v in summary.items()
                                                   if isinstance(v, dict)), flush=True)
    results["seconds"] = time.perf_counter() - started
    example_x = data if data is not None else lecture_data(sizes[-1], 0)
    example_op = operators(size, width)["R3"]
    example = reconstruct(example_op, sample(Randomness(7), example_op, example_x))
    results["example"] = {"n": len(example_x), "estimate": example.probabilities.tolist(),
                          "truth": (np.bincount(example_x, minlength=size) / len(example_x)).tolist()}
    args.output.mkdir(parents=True, exist_ok=True)
    suffix = "_quick" if args.quick else ""
    stem = "reconstruction" if not args.dataset else f"reconstruction_{Path(name.split(':')[0]).stem}"
    (args.output / f"{stem}{suffix}.json").write_text(json.dumps(results, indent=1) + "\n")
    _plot(results, values, args.output / f"{stem}{suffix}.png")
    print(f"wrote {args.output / (stem + suffix)}.json and .png in {results['seconds']:.0f} s")
    return 0


def _plot(results: dict, values: np.ndarray, path: Path) -> None:
    """Left: one reconstruction against its sample. Middle, right: relative errors over seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 3, figsize=(15, 4.8), gridspec_kw={"width_ratios": [1.3, 1, 1]})
    example = results["example"]
    axes[0].plot(values, example["truth"], lw=0.6, color="0.6", label="true (sample)")
    axes[0].plot(values, example["estimate"], lw=1.4, color="C0", label="EM reconstruction from R3")
    axes[0].set_yscale("log")
    axes[0].set_title(f"{results['data']}, R3, n = {example['n']:,}")
    axes[0].set_xlabel("value")
    axes[0].set_ylabel("probability")
    axes[0].legend()
    names = {"naive": "naive", "likelihood": "EM", "run_on": "EM run on"}
    for axis, q in zip(axes[1:], ("q2", "q1")):
        labels, errors = [], []
        for key, run in results["runs"].items():
            truth = np.array([r[f"true_{q}"] for r in run["rows"]])
            for estimator, short in names.items():
                if f"{estimator}_{q}" in run["summary"]:
                    estimate = np.array([r[f"{estimator}_{q}"] for r in run["rows"]])
                    errors.append(np.maximum(np.abs(estimate - truth) / truth, 1e-4))
                    labels.append(f"{run['operator']} n={run['n']:,} {short}")
        axis.boxplot(errors, orientation="horizontal", tick_labels=labels, showfliers=False)
        axis.set_xscale("log")
        axis.set_xlim(1e-4, 2)
        axis.tick_params(axis="y", labelsize=7)
        axis.set_xlabel(f"|estimate - truth| / truth ({results['seeds']} seeds)")
        axis.set_title(("Q2: " + results["q2"]) if q == "q2" else ("Q1: " + results["q1"]))
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


if __name__ == "__main__":
    sys.exit(main())
