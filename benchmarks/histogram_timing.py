"""Time the DP histogram algorithms against domain size, and tabulate their accuracy.

Writes benchmarks/results/histogram_timing.json with
  * "timing": seconds per run (median of `--repeats`) for every algorithm at each 1D domain
    size (Prefix workload) and each 2D side (random rectangles), epsilon = 1;
  * "accuracy": DPBench's scaled average per-query L1 error (mean over `--seeds` runs) on
    synthetic shapes at epsilon 0.1 and 1.
Noise comes from a NumPy-backed source with the `jostle.privacy.noise.Randomness` interface, so the
figures measure the algorithms, not the exact sampler.

Usage: python benchmarks/histogram_timing.py [--quick] [--repeats 3] [--seeds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

import jostle.learners.histograms as H
from jostle.learners.histograms import data, workloads
from jostle.learners.histograms.dawa import dawa_budget
from jostle.learners.histograms.dawa_partition import l1_partition
from jostle.learners.histograms.greedy_h import GramForms, greedy_hierarchy
from jostle.learners.histograms.measure import PrivacyLedger
from jostle.learners.histograms.tree import tree_least_squares


class SimulatedNoise:
    """Fast float noise with the Randomness interface (for benchmarks only)."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def laplace(self, scale: float, size: int) -> np.ndarray:
        return self.rng.laplace(0.0, scale, size)

    def gumbel(self, size: int) -> np.ndarray:
        return self.rng.gumbel(0.0, 1.0, size)

    def uniform(self, size: int) -> np.ndarray:
        return self.rng.uniform(0.0, 1.0, size)


def time_algorithm(algorithm: H.HistogramAlgorithm, x: np.ndarray, workload, repeats: int) -> float:
    seconds = []
    for r in range(repeats):
        start = time.perf_counter()
        algorithm(x, 1.0, workload, SimulatedNoise(r))
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def timing(sizes_1d: list[int], sides_2d: list[int], repeats: int) -> dict:
    result: dict = {"1D (Prefix workload)": {}, "2D (1000 random rectangles)": {}}
    for n in sizes_1d:
        x = data.sample_from_shape(data.synthetic_shape("gaussian", n), 100000)
        workload = workloads.prefix_1d(n)
        result["1D (Prefix workload)"][str(n)] = {
            a.name: round(time_algorithm(a, x, workload, repeats), 4) for a in H.algorithms_for(1)}
        print("1D", n, result["1D (Prefix workload)"][str(n)], flush=True)
    for side in sides_2d:
        x = data.sample_from_shape(data.synthetic_shape_2d("clusters", side), 100000)
        workload = workloads.random_rectangles_2d((side, side), 1000)
        result["2D (1000 random rectangles)"][f"{side}x{side}"] = {
            a.name: round(time_algorithm(a, x, workload, repeats), 4) for a in H.algorithms_for(2)}
        print("2D", side, result["2D (1000 random rectangles)"][f"{side}x{side}"], flush=True)
    return result


def dawa_stages(n: int, repeats: int) -> dict:
    """DAWA's three stages timed apart at n cells (Prefix workload, epsilon 0.1 and 1)."""
    result = {}
    workload = workloads.prefix_1d(n)
    for kind in ("gaussian", "uniform"):
        x = data.sample_from_shape(data.synthetic_shape(kind, n), 100000)
        for epsilon in (0.1, 1.0):
            budget = dawa_budget(epsilon)
            stages: dict[str, list[float]] = {"partition": [], "strategy": [], "inference": []}
            for r in range(repeats):
                start = time.perf_counter()
                starts = l1_partition(x, budget["partition"], budget["measurements"],
                                      SimulatedNoise(r), PrivacyLedger(epsilon))
                middle = time.perf_counter()
                tree, weights = greedy_hierarchy(GramForms(workload.bucket_gram(starts)), starts.size)
                end = time.perf_counter()
                variance = np.full(tree.size, np.inf)
                variance[weights > 0] = 1.0 / weights[weights > 0] ** 2
                tree_least_squares(tree, np.random.default_rng(r).normal(size=tree.size), variance)
                stages["partition"].append(middle - start)
                stages["strategy"].append(end - middle)
                stages["inference"].append(time.perf_counter() - end)
            key = f"n={n} {kind} eps={epsilon} buckets={starts.size}"
            result[key] = {k: round(statistics.median(v), 4) for k, v in stages.items()}
            print("DAWA stages", key, result[key], flush=True)
    return result


def accuracy(n: int, side: int, scale: int, seeds: int) -> dict:
    result: dict = {}
    prefix = workloads.prefix_1d(n)
    for kind in ("uniform", "step", "sparse", "gaussian", "zipf"):
        shape = data.synthetic_shape(kind, n, seed=3)
        for epsilon in (0.1, 1.0):
            errors = {a.name: [] for a in H.algorithms_for(1)}
            for seed in range(seeds):
                x = data.sample_from_shape(shape, scale, seed=seed)
                for a in H.algorithms_for(1):
                    estimate = a(x, epsilon, prefix, SimulatedNoise(100 + seed))
                    errors[a.name].append(H.scaled_error(prefix, x, estimate))
            result[f"1D n={n} {kind} eps={epsilon}"] = {k: float(np.mean(v)) for k, v in errors.items()}
            print(kind, epsilon, result[f"1D n={n} {kind} eps={epsilon}"], flush=True)
    rectangles = workloads.random_rectangles_2d((side, side), 1000)
    for kind in ("uniform", "clusters", "sparse"):
        shape = data.synthetic_shape_2d(kind, side, seed=3)
        for epsilon in (0.1, 1.0):
            errors = {a.name: [] for a in H.algorithms_for(2)}
            for seed in range(seeds):
                x = data.sample_from_shape(shape, scale, seed=seed)
                for a in H.algorithms_for(2):
                    estimate = a(x, epsilon, rectangles, SimulatedNoise(100 + seed))
                    errors[a.name].append(H.scaled_error(rectangles, x, estimate))
            key = f"2D {side}x{side} {kind} eps={epsilon}"
            result[key] = {k: float(np.mean(v)) for k, v in errors.items()}
            print(key, result[key], flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (smoke run)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--scale", type=int, default=100000)
    args = parser.parse_args()
    sizes_1d = [256, 1024] if args.quick else [256, 1024, 2048, 4096]
    sides_2d = [32, 64] if args.quick else [32, 64, 128, 256]
    report = {
        "machine": platform.platform(), "python": platform.python_version(),
        "load_average_at_start": list(os.getloadavg()),
        "timing_seconds": timing(sizes_1d, sides_2d, args.repeats),
        "dawa_stage_seconds": dawa_stages(1024 if args.quick else 4096, args.repeats),
        "accuracy_scaled_l1_error": {"scale": args.scale, "seeds": args.seeds,
                                     **accuracy(256 if args.quick else 1024, 32 if args.quick else 64,
                                                args.scale, args.seeds)},
    }
    out = Path(__file__).resolve().parent / "results" / "histogram_timing.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
