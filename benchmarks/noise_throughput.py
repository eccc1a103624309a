"""Throughput of the exact samplers and of the releases built on them (draws per second).

For each sampler (discrete Laplace, discrete Gaussian, Bernoulli(exp(-gamma)), and the
`Randomness.laplace` noise that histogram algorithms call) and each source (the secure
`secrets` path and a seeded one), times batches of 1 (the scalar Python-integer path), 4096 (a
histogram) and 100,000 (an audit), and one release of `laplace` / `gaussian` on a private
4096-cell histogram; `SimulationNoise` (floating point, not for releases) is the baseline.
Each figure is the best of `--repeats` timings.

Run from the repository root:  python benchmarks/noise_throughput.py [--repeats 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import time
from fractions import Fraction
from typing import Callable

import numpy as np
import pandas as pd

from jostle import Session

from jostle.language import mechanisms
from jostle.privacy.budget import Accountant, Budget
from jostle.privacy.noise import Randomness, SimulationNoise
from jostle.diagnostics.source import BUILTIN_SPAN


def rate(draw: Callable[[int], object], size: int, repeats: int, total: int = 100_000) -> float:
    """Draws per second: calls of `draw(size)` adding up to about `total` draws, best of `repeats`."""
    calls = max(1, total // size)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            draw(size)
        best = min(best, time.perf_counter() - start)
    return calls * size / best


class _Context:
    def __init__(self, randomness: Randomness) -> None:
        self.randomness = randomness
        self.accountant = Accountant(Budget.of(10**9, Fraction(1, 2)))


def release_times(randomness: Randomness, repeats: int) -> dict[str, float]:
    """Seconds per release of laplace / gaussian on a private 4096-cell histogram."""
    session = Session(budget=1.0, ledger_path=":memory:")
    cells = [f"c{i}" for i in range(4096)]
    frame = pd.DataFrame({"cell": np.random.default_rng(0).choice(cells, 50_000)})
    session.bind_private("t", frame, {"cell": {"type": "categorical", "values": cells}})
    session.run('h = histogram(t, "cell")')
    histogram = session.interpreter.globals.lookup("h")
    results = {}
    for name, release in (("laplace(histogram, 0.5)", lambda: mechanisms.laplace(_Context(randomness), histogram,
                                                                                 0.5, BUILTIN_SPAN)),
                          ("gaussian(histogram, 0.5, 1e-6)", lambda: mechanisms.gaussian(
                              _Context(randomness), histogram, 0.5, 1e-6, BUILTIN_SPAN))):
        release()  # the first call calibrates (cached afterwards)
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            release()
            best = min(best, time.perf_counter() - start)
        results[name] = best
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    sizes = (1, 4096, 100_000)
    report: dict[str, dict] = {}
    for source_name, randomness in (("secure", Randomness()), ("seeded", Randomness(1))):
        samplers = {
            "discrete_laplace(10/3)": lambda n, r=randomness: r.discrete_laplace(Fraction(10, 3), n),
            "discrete_laplace(2^21 steps)": lambda n, r=randomness: r.discrete_laplace(Fraction(2**21), n),
            "discrete_gaussian(sigma^2 = 9)": lambda n, r=randomness: r.discrete_gaussian(Fraction(9), n),
            "discrete_gaussian(sigma ~ 4096)": lambda n, r=randomness: r.discrete_gaussian(Fraction(4097 * 4096), n, 4097),
            "bernoulli_exp(1/2)": lambda n, r=randomness: r.bernoulli_exp(Fraction(1, 2), n),
            "Randomness.laplace(2.0)": lambda n, r=randomness: r.laplace(2.0, n),
        }
        report[source_name] = {name: {str(size): rate(draw, size, args.repeats) for size in sizes}
                               for name, draw in samplers.items()}
        report[source_name]["releases (seconds)"] = release_times(randomness, args.repeats)
    simulation = SimulationNoise(1)
    report["SimulationNoise"] = {"laplace(2.0)": {str(size): rate(lambda n: simulation.laplace(2.0, n), size,
                                                                   args.repeats) for size in sizes}}
    for source_name, rows in report.items():
        print(f"\n{source_name}")
        for name, figures in rows.items():
            if name.startswith("releases"):
                print("  " + "; ".join(f"{k}: {v * 1e3:.1f} ms" for k, v in figures.items()))
            else:
                print(f"  {name:34s} " + "  ".join(f"batch {k:>6}: {v:>12,.0f}/s" for k, v in figures.items()))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(report, handle, indent=2)


if __name__ == "__main__":
    main()
