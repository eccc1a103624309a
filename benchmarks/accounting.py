"""How much epsilon many Gaussian releases spend under basic composition, advanced composition
and zCDP (issue 22).

T Gaussian releases of L2 sensitivity 1, each with the same noise sigma (default 20), are
composed three ways and converted to an epsilon at delta = 1e-6 (the total delta):

  * basic composition (Dwork and Roth 2014, Thm 3.16): each release gets delta / T; its
    epsilon is the smallest epsilon at which the Gaussian mechanism of that sigma is
    (epsilon, delta / T)-DP, by the exact privacy profile of the Gaussian (Balle and Wang
    2018, Thm 8), and the epsilons add. This is how Jostle composes `budget E, D` programs.
  * advanced composition (Dwork, Rothblum and Vadhan 2010; Dwork and Roth 2014, Thm 3.20):
    each release gets delta_i, the theorem's slack gets delta - T delta_i; the split is
    optimised over 41 values of delta_i (any split is valid, so the best one is reported).
  * zCDP (Bun and Steinke 2016): each release is 1 / (2 sigma^2)-zCDP, rhos add, and the total
    is converted by Canonne, Kamath and Steinke 2020 Cor. 13 (jostle.privacy.conversions), the
    conversion a `budget E, D using zcdp` program uses. The zCDP column is also MEASURED: a
    Jostle session with `Session(rho=...)` runs T `gaussian(count(t), rho(R))` releases on a
    small generated table, and what its accountant spent is converted; the benchmark checks that
    it equals the analytic figure.

The figures are deterministic (no noise enters them), so one run is enough; there is nothing to
tune and no data to tune on (`--data` is not needed: the table the measured column releases on is
generated, and its contents do not enter the accounting).

Writes benchmarks/results/accounting.json and accounting.png (accounting_quick.* with
--quick): epsilon against T, log-log, one line per composition; and the ratio zCDP / basic at
each T.

Usage (from the repository root):
    python benchmarks/accounting.py [--quick] [--sigma 20] [--delta 1e-6] [--output DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from jostle import Session
from jostle.privacy.conversions import advanced_composition, zcdp_to_epsilon

RESULTS = Path(__file__).resolve().parent / "results"
FULL_T = [10, 20, 50, 100, 200, 500, 1000]
QUICK_T = [10, 100, 1000]


def _normal_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2))


def gaussian_delta(epsilon: float, sigma: float) -> float:
    """The exact delta of the Gaussian mechanism of sensitivity 1 and noise sigma at epsilon
    (Balle and Wang 2018, Thm 8): Phi(1/(2s) - eps s) - e^eps Phi(-1/(2s) - eps s)."""
    a = 1 / (2 * sigma)
    return _normal_cdf(a - epsilon * sigma) - math.exp(epsilon) * _normal_cdf(-a - epsilon * sigma)


def gaussian_epsilon(delta: float, sigma: float) -> float:
    """The smallest epsilon at which the Gaussian of noise sigma is (epsilon, delta)-DP (bisection
    on the decreasing privacy profile, to a relative 1e-12)."""
    low, high = 0.0, 1.0
    while gaussian_delta(high, sigma) > delta:
        high *= 2
    for _ in range(200):
        middle = (low + high) / 2
        if gaussian_delta(middle, sigma) > delta:
            low = middle
        else:
            high = middle
        if high - low <= 1e-12 * high:
            break
    return high


def basic(releases: int, sigma: float, delta: float) -> float:
    return releases * gaussian_epsilon(delta / releases, sigma)


def advanced(releases: int, sigma: float, delta: float) -> float:
    best = math.inf
    for share in np.linspace(0.025, 0.975, 41):  # the share of delta given to the releases
        per_release = share * delta / releases
        epsilon_i = gaussian_epsilon(per_release, sigma)
        total, _ = advanced_composition(epsilon_i, per_release, releases, delta - share * delta)
        best = min(best, total)
    return best


def zcdp(releases: int, sigma: float, delta: float) -> float:
    rho = Fraction(releases) / (2 * Fraction(sigma) ** 2)
    return float(zcdp_to_epsilon(rho, Fraction(delta)))


def measured_zcdp(releases: int, sigma: float, delta: float) -> tuple[float, float]:
    """Run T Gaussian releases in a Jostle zCDP session; its spent rho, converted, and the seconds."""
    per_release = Fraction(1) / (2 * Fraction(sigma) ** 2)
    session = Session(rho=float(per_release * releases * 2), seed=1, ledger_path=":memory:")
    session.bind_private("t", pd.DataFrame({"x": np.arange(100) % 7}),
                         {"x": {"type": "numeric", "bounds": [0, 10]}})
    start = time.perf_counter()
    session.run(f"for i in range({releases}):\n    y = gaussian(count(t), rho({float(per_release)!r}))\n")
    seconds = time.perf_counter() - start
    spent = session.accountant.spent.rho
    return float(zcdp_to_epsilon(spent, Fraction(delta))), seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T in {10, 100, 1000} only")
    parser.add_argument("--sigma", type=float, default=20.0, help="the noise of each release (sensitivity 1)")
    parser.add_argument("--delta", type=float, default=1e-6, help="the total delta")
    parser.add_argument("--output", type=Path, default=RESULTS, help="where the JSON and PNG go")
    args = parser.parse_args(argv)
    counts = QUICK_T if args.quick else FULL_T
    rows = []
    for releases in counts:
        row = {"T": releases, "basic": basic(releases, args.sigma, args.delta),
               "advanced": advanced(releases, args.sigma, args.delta),
               "zcdp": zcdp(releases, args.sigma, args.delta)}
        row["zcdp_measured"], row["measured_seconds"] = measured_zcdp(releases, args.sigma, args.delta)
        row["zcdp_over_basic"] = row["zcdp"] / row["basic"]
        row["zcdp_over_advanced"] = row["zcdp"] / row["advanced"]
        rows.append(row)
        print(f"T={releases:5d}  basic {row['basic']:.4f}  advanced {row['advanced']:.4f}  zCDP {row['zcdp']:.4f}"
              f" (measured {row['zcdp_measured']:.4f})  zCDP/basic {row['zcdp_over_basic']:.3f}", file=sys.stderr)
        if abs(row["zcdp_measured"] - row["zcdp"]) > 1e-9 * row["zcdp"]:
            raise SystemExit(f"the session's accountant spent {row['zcdp_measured']} against {row['zcdp']} analytic")
    suffix = "_quick" if args.quick else ""
    args.output.mkdir(parents=True, exist_ok=True)
    result = {"sigma": args.sigma, "delta": args.delta, "sensitivity": 1, "rows": rows,
              "command": "python benchmarks/accounting.py" + (" --quick" if args.quick else "")}
    (args.output / f"accounting{suffix}.json").write_text(json.dumps(result, indent=2) + "\n")
    _plot(rows, args, args.output / f"accounting{suffix}.png")
    return 0


def _plot(rows: list[dict], args: argparse.Namespace, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [r["T"] for r in rows]
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for key, label in (("basic", "basic composition"), ("advanced", "advanced composition (best split)"),
                       ("zcdp", "zCDP, converted by CKS 2020")):
        left.plot(t, [r[key] for r in rows], marker="o", label=label)
    left.set(xscale="log", yscale="log", xlabel="number of Gaussian releases T",
             ylabel=f"epsilon at delta = {args.delta:g}",
             title=f"T releases of sensitivity 1, sigma = {args.sigma:g}")
    left.grid(True, which="both", alpha=0.3)
    left.legend()
    right.plot(t, [r["zcdp_over_basic"] for r in rows], marker="o", label="zCDP / basic")
    right.plot(t, [r["zcdp_over_advanced"] for r in rows], marker="s", label="zCDP / advanced")
    right.set(xscale="log", xlabel="number of Gaussian releases T", ylabel="ratio of epsilons",
              title="what zCDP spends, relative", ylim=(0, 1.05))
    right.grid(True, which="both", alpha=0.3)
    right.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)


if __name__ == "__main__":
    raise SystemExit(main())
