"""Calibration of the stated error bounds: do 95% of releases fall within `accuracy(x, 0.95)`?

For each closed-form mechanism (laplace on a real sum, geometric on a count, gaussian (eps, delta)
on a real sum, gaussian(x, rho(R)) on a count, the `{{ }}` discrete Gaussian of a zCDP program on a
real sum, and a geometric histogram's cells) at several budgets and sensitivities, it releases a
fixed private value 1,000 times through the real mechanism code (jostle.language.mechanisms, the
exact samplers with a seeded source), and reports the share of releases whose true error is
within the half-width the release states (`jostle.privacy.error_bounds`, read from the released
value's law: `jostle.language.noisy_values.law_of`), with a Wilson 95% interval. The goal is a
share in [0.94, 0.96]. The stated coverage of the discrete half-width (the exact
P(|noise| <= h), which can exceed 0.95 on a coarse grid) is reported next to it: a share should
agree with THAT, and a row is flagged when the stated coverage is outside the Wilson interval.
With 1,000 releases the share's sd is about 0.007, so an exact bound falls outside [0.94, 0.96]
about 15% of the time by chance; the pooled row (all rows together) is the sharper test.
Nothing here is tuned: the values, budgets and seeds are fixed below and chose no design parameter.

The ChoiceMaker's predicted errors are measured by benchmarks/accuracy_choicemaker.py (the cmerr
helper's), which this script runs with --choicemaker (the default) when it exists.

Run from the repository root:  python benchmarks/accuracy.py [--quick] [--no-choicemaker]
Writes benchmarks/results/accuracy.json (accuracy_quick.json) and accuracy.png (accuracy_quick.png).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from jostle.diagnostics.source import BUILTIN_SPAN
from jostle.language import mechanisms
from jostle.language.noisy_values import law_of
from jostle.language.values import Private
from jostle.privacy.accounting import ZCDP, Accounting
from jostle.privacy.budget import Accountant
from jostle.privacy.measures import Budget, RhoZCDPBudget
from jostle.privacy.noise import Randomness

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
CONFIDENCE = 0.95
REAL_VALUE = Fraction(123456789, 1000)   # a sum of a bounded real column, exact
COUNT_VALUE = 5000


class _Context:
    def __init__(self, seed: int, zcdp: bool) -> None:
        self.randomness = Randomness(seed)
        total = RhoZCDPBudget.of(10**9) if zcdp else Budget.of(10**9, Fraction(1, 2))
        self.accountant = Accountant(total, accounting=Accounting(ZCDP) if zcdp else None)


def wilson(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval of a binomial share."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def _private(value: Any, sensitivity: float, integer: bool, ctx: _Context, l2: float | None = None) -> Private:
    return Private(value, float(sensitivity), float(l2 if l2 is not None else sensitivity), BUILTIN_SPAN,
                   "benchmark value", ctx.accountant.root, integer=integer)


def _cases(quick: bool) -> list[dict]:
    """(name, mechanism, budget, sensitivity, a release function) for every row."""
    cases: list[dict] = []
    epsilons = [0.1, 1.0] if quick else [0.1, 0.5, 1.0, 4.0]
    for sensitivity in ([1.0] if quick else [1.0, 100.0]):
        for eps in epsilons:
            cases.append(dict(mechanism="laplace (real)", budget=f"eps {eps:g}", sensitivity=sensitivity, zcdp=False,
                              release=lambda c, s=sensitivity, e=eps: mechanisms.laplace(
                                  c, _private(REAL_VALUE, s, False, c), e, BUILTIN_SPAN), truth=float(REAL_VALUE)))
    for sensitivity in ([1] if quick else [1, 3]):
        for eps in epsilons:
            cases.append(dict(mechanism="geometric (count)", budget=f"eps {eps:g}", sensitivity=sensitivity,
                              zcdp=False, release=lambda c, s=sensitivity, e=eps: mechanisms.geometric(
                                  c, _private(COUNT_VALUE, s, True, c), e, BUILTIN_SPAN), truth=COUNT_VALUE))
    for sensitivity in ([1.0] if quick else [1.0, 10.0]):
        for eps in ([0.5, 2.0] if quick else [0.25, 0.5, 1.0, 2.0]):
            cases.append(dict(mechanism="gaussian (eps, delta 1e-6)", budget=f"eps {eps:g}", sensitivity=sensitivity,
                              zcdp=False, release=lambda c, s=sensitivity, e=eps: mechanisms.gaussian(
                                  c, _private(REAL_VALUE, s, False, c), e, 1e-6, BUILTIN_SPAN),
                              truth=float(REAL_VALUE)))
    rhos = [0.05, 0.5] if quick else [0.01, 0.05, 0.5, 2.0]
    for rho in rhos:
        cases.append(dict(mechanism="gaussian rho (count)", budget=f"rho {rho:g}", sensitivity=1, zcdp=True,
                          release=lambda c, r=rho: mechanisms.gaussian_rho(
                              c, _private(COUNT_VALUE, 1, True, c), RhoZCDPBudget.of(r), BUILTIN_SPAN),
                          truth=COUNT_VALUE))
    for sensitivity in ([1.0] if quick else [1.0, 50.0]):
        for rho in rhos:
            cases.append(dict(mechanism="{{ }} discrete Gaussian (zCDP, real)", budget=f"rho {rho:g}",
                              sensitivity=sensitivity, zcdp=True,
                              release=lambda c, s=sensitivity, r=rho: mechanisms.release_default(
                                  c, _private(REAL_VALUE, s, False, c), RhoZCDPBudget.of(r), BUILTIN_SPAN),
                              truth=float(REAL_VALUE)))
    histogram = np.array([5, 0, 120, 33, 900, 7, 64, 2, 0, 41], dtype=np.int64)
    for eps in epsilons:
        cases.append(dict(mechanism="geometric histogram (10 cells)", budget=f"eps {eps:g}", sensitivity=1,
                          zcdp=False, release=lambda c, e=eps: mechanisms.geometric(
                              c, _private(histogram, 1, True, c), e, BUILTIN_SPAN), truth=histogram))
    return cases


def _run_case(case: dict, releases: int, seed: int) -> dict:
    ctx = _Context(seed, case["zcdp"])
    within = total = 0
    stated: list[float] = []
    widths: list[float] = []
    started = time.perf_counter()
    for _ in range(releases):
        value = case["release"](ctx)
        law = law_of(value)
        laws = law if isinstance(law, tuple) else (law,)
        values = np.atleast_1d(np.asarray(value, dtype=float))
        truths = np.atleast_1d(np.asarray(case["truth"], dtype=float))
        for cell_law, released, true in zip(laws, values, truths):
            width = cell_law.half_width(CONFIDENCE)
            within += abs(released - true) <= width
            total += 1
            widths.append(width)
            stated.append(cell_law.coverage(width))
    low, high = wilson(within, total)
    share = within / total
    coverage = float(np.mean(stated))
    return dict(mechanism=case["mechanism"], budget=case["budget"], sensitivity=case["sensitivity"],
                releases=releases, observations=total, within=int(within), share=share, wilson_low=low,
                wilson_high=high, stated_coverage=coverage, half_width=float(np.mean(widths)),
                in_goal=bool(0.94 <= share <= 0.96), agrees_with_stated=bool(low <= coverage <= high),
                seconds=round(time.perf_counter() - started, 2))


def _pooled(rows: list[dict], name: str = "pooled (every row)") -> dict:
    within = sum(r["within"] for r in rows)
    total = sum(r["observations"] for r in rows)
    stated = sum(r["stated_coverage"] * r["observations"] for r in rows) / total
    low, high = wilson(within, total)
    return dict(mechanism=name, budget="", sensitivity="", releases=sum(r["releases"] for r in rows),
                observations=total, within=within, share=within / total, wilson_low=low, wilson_high=high,
                stated_coverage=stated, half_width=float("nan"), in_goal=bool(0.94 <= within / total <= 0.96),
                agrees_with_stated=bool(low <= stated <= high), seconds=sum(r["seconds"] for r in rows))


def _plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 0.3 * len(rows) + 1.5))
    ys = np.arange(len(rows))[::-1]
    for y, row in zip(ys, rows):
        colour = "tab:blue" if row["agrees_with_stated"] else "tab:red"
        ax.plot([row["wilson_low"], row["wilson_high"]], [y, y], color=colour, lw=2)
        ax.plot(row["share"], y, "o", color=colour, ms=4)
        ax.plot(row["stated_coverage"], y, "k|", ms=9)
    ax.axvspan(0.94, 0.96, color="0.9", zorder=0)
    ax.axvline(0.95, color="0.5", lw=0.8)
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{r['mechanism']} {r['budget']}" + (f" s={r['sensitivity']}" if r["budget"] else "")
                        for r in rows], fontsize=7)
    ax.set_xlabel("share within the stated 95% half-width (dot; bar: Wilson 95%); tick: the law's stated coverage",
                  fontsize=8)
    ax.set_title("Calibration of accuracy(x, 0.95), 1,000 releases per row; grey: goal [0.94, 0.96]", fontsize=9)
    fig.subplots_adjust(left=0.36, right=0.98, top=0.97, bottom=0.06)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _choicemaker(quick: bool) -> Any:
    script = HERE / "accuracy_choicemaker.py"
    if not script.exists():
        print("benchmarks/accuracy_choicemaker.py is not there: the ChoiceMaker's predicted errors are skipped",
              file=sys.stderr)
        return None
    spec = importlib.util.spec_from_file_location("accuracy_choicemaker", script)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("accuracy_choicemaker", module)
    spec.loader.exec_module(module)
    return module.main(["--quick"] if quick else [])


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer budgets and sensitivities (still 1,000 releases)")
    parser.add_argument("--releases", type=int, default=1000, help="releases per row (default 1,000)")
    parser.add_argument("--choicemaker", action=argparse.BooleanOptionalAction, default=True,
                        help="also run benchmarks/accuracy_choicemaker.py (default: yes, when it exists)")
    args = parser.parse_args(argv)
    rows = []
    for index, case in enumerate(_cases(args.quick)):
        row = _run_case(case, args.releases, seed=1000 + index)
        rows.append(row)
        print(f"{row['mechanism']:38s} {row['budget']:9s} s={row['sensitivity']!s:5s} share {row['share']:.4f} "
              f"[{row['wilson_low']:.4f}, {row['wilson_high']:.4f}] stated {row['stated_coverage']:.4f}"
              f"{'' if row['agrees_with_stated'] else '  (stated outside the interval)'}", flush=True)
    exact = [r for r in rows if abs(r["stated_coverage"] - CONFIDENCE) < 5e-4]
    for pooled in (_pooled(exact, "pooled (rows stating 0.95)"), _pooled(list(rows))):
        rows.append(pooled)
        print(f"{pooled['mechanism']:38s} {'':17s} share {pooled['share']:.4f} [{pooled['wilson_low']:.4f}, "
              f"{pooled['wilson_high']:.4f}] stated {pooled['stated_coverage']:.4f}")
    suffix = "_quick" if args.quick else ""
    RESULTS.mkdir(exist_ok=True)
    result = dict(command="python benchmarks/accuracy.py" + (" --quick" if args.quick else ""),
                  confidence=CONFIDENCE, goal=[0.94, 0.96], rows=rows,
                  note=("share: releases whose true error <= the stated half-width; stated_coverage: the exact "
                        "P(|noise| <= half-width) of the law (above 0.95 where the grid is coarse); "
                        "agrees_with_stated: the stated coverage is inside the share's Wilson 95% interval"))
    if args.choicemaker:
        result["choicemaker"] = "see benchmarks/results/accuracy_choicemaker*.json" \
            if _choicemaker(args.quick) is not None else "skipped (benchmarks/accuracy_choicemaker.py is missing)"
    (RESULTS / f"accuracy{suffix}.json").write_text(json.dumps(result, indent=2, default=float) + "\n")
    _plot(rows, RESULTS / f"accuracy{suffix}.png")
    return result


if __name__ == "__main__":
    main()
