"""The paper's findings on DP redescription mining, their verdicts, and the benchmark's plots.

Used by benchmarks/redescription.py. Each finding of Mihelčić and Miettinen (2023, section 5.4)
gets a verdict computed from the benchmark's pooled results, never tuned: "holds", "does not
hold" (with where and why in `detail`) or "not evaluated" (no data set in the finding's range,
or no kept redescription to compare). Data sets enter a finding by their entity count, planted
and UCI alike. MCMCTreePair and each Alt* algorithm are compared through the better of their
two settings where the finding names the algorithm (the paper reports both settings and its
tables compare the best methodology with the others); the miners' results are all in the JSON.

  1. at epsilon 1 on >= 46,000 entities, non-robust AltExpM and AltMCMC keep > 90% truly
     significant redescriptions (point estimate; the Wilson interval is reported) and keep none
     (after the pruning a user applies; runs releasing nothing at all are reported too) in at
     most 10% of runs, and the stable settings never keep none;
  2. on 800-2,000 entities (the paper's NPAS: 1,221), MCMCTreePair's median true Jaccard is at
     least each Alt* setting's at every budget;
  3. at epsilon 1 on >= 46,000 entities, each non-robust Alt* beats each MCMCTreePair setting's
     true Jaccard (one-sided Mann-Whitney p < 0.05);
  4. at epsilon 0.1, MCMCTreePair has the larger share of significant redescriptions up to 7,200
     entities and Alt* from 28,800 (one-sided Fisher exact tests reported);
  5. at epsilon 0.01 (runs pooled), AltExpM has the largest share of significant redescriptions
     on every data set;
  6. noisy and true Jaccard agree better as the data grow, for every miner: on the planted sizes,
     at every budget where both the smallest and the largest size keep redescriptions, the
     largest size's |noisy - true Jaccard| is smaller (one-sided Mann-Whitney p < 0.05).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any


ALT = ("AltExpM non-robust", "AltExpM stable", "AltMCMC non-robust", "AltMCMC stable")
NON_ROBUST = ("AltExpM non-robust", "AltMCMC non-robust")
STABLE = ("AltExpM stable", "AltMCMC stable")
PAIR = ("MCMCTreePair omega 0.1", "MCMCTreePair omega 0.5")
LARGE, SMALL_LOW, SMALL_HIGH, MEDIUM_HIGH, MEDIUM_LOW = 46_000, 800, 2_000, 7_200, 28_800


def _finite(value: float) -> bool:
    return value is not None and isinstance(value, (int, float)) and math.isfinite(value)


def _item(finding: str, verdict: str, detail: str, evidence: Any = None) -> dict[str, Any]:
    return {"finding": finding, "verdict": verdict, "detail": detail, "evidence": evidence}


def _best(miners: dict[str, Any], names: tuple[str, ...], budget: str, measure: str) -> tuple[str, float]:
    """The miner among `names` with the largest finite value of `measure` ("sig" or "jaccard")."""
    values = {n: (miners[n][budget]["significant"]["share"] if measure == "sig"
                  else miners[n][budget]["true_jaccard"]["median"]) for n in names}
    finite = {n: v for n, v in values.items() if _finite(v)}
    if not finite:
        return names[0], float("nan")
    name = max(finite, key=finite.get)
    return name, finite[name]


def _in_range(results: dict[str, Any], low: float, high: float) -> list[str]:
    return [name for name, r in results.items() if low <= r["n"] <= high]


def _fisher_greater(a: dict[str, Any], b: dict[str, Any]) -> float:
    from scipy.stats import fisher_exact

    if a["n"] == 0 or b["n"] == 0:
        return float("nan")
    table = [[a["k"], a["n"] - a["k"]], [b["k"], b["n"] - b["k"]]]
    return float(fisher_exact(table, alternative="greater")[1])


def _large(results: dict[str, Any], title: str) -> tuple[list[str], dict[str, Any] | None]:
    """The data sets of 46,000 entities or more, or the "not evaluated" item when there is none."""
    names = _in_range(results, LARGE, math.inf)
    return names, None if names else _item(title, "not evaluated", "no data set of 46,000 entities or more")


def finding_1(results: dict[str, Any]) -> dict[str, Any]:
    title = "eps 1, >= 46,000 entities: non-robust Alt* > 90% significant, <= 10% empty runs; stable never empty"
    names, missing = _large(results, title)
    if missing:
        return missing
    failures, parts = [], []
    for name in names:
        miners = results[name]["miners"]
        for miner in NON_ROBUST:
            s = miners[miner]["1.0"]
            sig, empty = s["significant"], s["runs_without_redescription"] / s["runs"]
            parts.append(f"{name} {miner}: {sig['share']:.3f} [{sig['low']:.3f}, {sig['high']:.3f}] "
                         f"significant of {sig['n']} kept, {s['runs_without_redescription']}/{s['runs']} "
                         f"runs kept none ({s['runs_releasing_nothing']} released none)")
            if not (_finite(sig["share"]) and sig["share"] > 0.9):
                failures.append(f"{name} {miner}: share significant {sig['share']:.3f} <= 0.9")
            if empty > 0.1:
                failures.append(f"{name} {miner}: {empty:.0%} of runs empty")
        for miner in STABLE:
            s = miners[miner]["1.0"]
            parts.append(f"{name} {miner}: {s['runs_without_redescription']}/{s['runs']} runs kept none "
                         f"({s['runs_releasing_nothing']} released none)")
            if s["runs_without_redescription"]:
                failures.append(f"{name} {miner}: {s['runs_without_redescription']} empty run(s)")
    return _item(title, "does not hold" if failures else "holds", "; ".join(failures or parts), parts)


def finding_2(results: dict[str, Any]) -> dict[str, Any]:
    title = "800-2,000 entities: MCMCTreePair's median true Jaccard >= each Alt*'s at every budget"
    names = _in_range(results, SMALL_LOW, SMALL_HIGH)
    if not names:
        return _item(title, "not evaluated", "no data set of 800-2,000 entities")
    failures, parts, compared = [], [], 0
    for name in names:
        miners, tests = results[name]["miners"], results[name]["mann_whitney_greater"]
        for budget in miners[PAIR[0]]:
            pair, value = _best(miners, PAIR, budget, "jaccard")
            if _finite(value) and not any(miners[alt][budget]["kept"] for alt in ALT):
                parts.append(f"{name} eps {budget}: {pair} kept {miners[pair][budget]['kept']} (median "
                             f"{value:.3f}), no Alt* setting kept any")
            for alt in ALT:
                other = miners[alt][budget]["true_jaccard"]["median"]
                if not _finite(other):
                    continue
                compared += 1
                p = tests[budget][alt][pair]
                parts.append(f"{name} eps {budget}: {pair} {value:.3f} vs {alt} {other:.3f} "
                             f"(MW {alt} > pair: p={p:.3g})")
                if not (_finite(value) and value >= other):
                    failures.append(f"{name} eps {budget}: {pair} {value:.3f} < {alt} {other:.3f}"
                                    f" (one-sided Mann-Whitney p={p:.3g})")
    if not compared:
        kept = {name: {f"{p} eps {b}": results[name]["miners"][p][b]["kept"]
                       for p in PAIR for b in results[name]["miners"][p]} for name in names}
        return _item(title, "not evaluated", "no Alt* setting kept any redescription at any budget on "
                     f"{', '.join(names)} (nothing to compare; MCMCTreePair kept {kept})")
    return _item(title, "does not hold" if failures else "holds",
                 "; ".join(failures or parts), parts)


def finding_3(results: dict[str, Any]) -> dict[str, Any]:
    title = "eps 1, >= 46,000 entities: non-robust Alt* beats MCMCTreePair's true Jaccard (Mann-Whitney p < 0.05)"
    names, missing = _large(results, title)
    if missing:
        return missing
    failures, parts = [], []
    for name in names:
        miners, tests = results[name]["miners"], results[name]["mann_whitney_greater"]["1.0"]
        for alt in NON_ROBUST:
            for pair in PAIR:
                p = tests[alt][pair]
                a = miners[alt]["1.0"]["true_jaccard"]["median"]
                b = miners[pair]["1.0"]["true_jaccard"]["median"]
                parts.append(f"{name}: {alt} {a:.3f} vs {pair} {b:.3f}, p={p:.3g}")
                if not (_finite(p) and p < 0.05):
                    failures.append(f"{name}: {alt} {a:.3f} vs {pair} {b:.3f}, p={p:.3g}")
    return _item(title, "does not hold" if failures else "holds", "; ".join(failures or parts), parts)


def finding_4(results: dict[str, Any]) -> dict[str, Any]:
    title = "eps 0.1: MCMCTreePair has the larger share significant up to 7,200 entities, Alt* from 28,800"
    ranges = {"up to 7,200": _in_range(results, 0, MEDIUM_HIGH), "from 28,800": _in_range(results, MEDIUM_LOW, math.inf)}
    if not any(ranges.values()):
        return _item(title, "not evaluated", "no data set")
    failures, parts, unchecked = [], [], []
    for label, names in ranges.items():
        compared = 0
        for name in names:
            miners = results[name]["miners"]
            pair, pair_share = _best(miners, PAIR, "0.1", "sig")
            alt, alt_share = _best(miners, ALT, "0.1", "sig")
            if not _finite(pair_share) or not _finite(alt_share):
                kept_by = pair if _finite(pair_share) else alt if _finite(alt_share) else None
                parts.append(f"{name}: nothing kept" if kept_by is None else
                             f"{name}: only {kept_by} kept anything (share "
                             f"{miners[kept_by]['0.1']['significant']['share']:.3f}): nothing to compare")
                continue
            compared += 1
            first, second = (pair, alt) if label == "up to 7,200" else (alt, pair)
            s1, s2 = miners[first]["0.1"]["significant"], miners[second]["0.1"]["significant"]
            p = _fisher_greater(s1, s2)
            text = (f"{name} [{results[name]['n']}]: {first} {s1['share']:.3f} ({s1['k']}/{s1['n']}) vs "
                    f"{second} {s2['share']:.3f} ({s2['k']}/{s2['n']}), Fisher p={p:.3g}")
            parts.append(text)
            if not (_finite(s1["share"]) and (not _finite(s2["share"]) or s1["share"] > s2["share"])):
                failures.append(text)
        if names and not compared:
            unchecked.append(f"{label} entities: no data set where both MCMCTreePair and Alt* kept "
                             f"redescriptions at eps 0.1 ({', '.join(names)})")
    if failures:
        return _item(title, "does not hold", "; ".join(failures), parts)
    if unchecked:
        elsewhere = "; ".join(p for p in parts if "Fisher" in p)
        return _item(title, "not evaluated", "; ".join(unchecked + [p for p in parts if "only " in p])
                     + (f" (elsewhere: {elsewhere})" if elsewhere else ""), parts)
    return _item(title, "holds", "; ".join(parts), parts)


def finding_5(results: dict[str, Any]) -> dict[str, Any]:
    title = "eps 0.01 (runs pooled): AltExpM has the largest share significant on every data set"
    failures, parts, compared = [], [], 0
    for name, result in results.items():
        miners = result["miners"]
        expm, expm_share = _best(miners, ("AltExpM non-robust", "AltExpM stable"), "0.01", "sig")
        others = [m for m in miners if not m.startswith("AltExpM")]
        best, best_share = _best(miners, tuple(others), "0.01", "sig")
        kept = {m: miners[m]["0.01"]["kept"] for m in miners}
        if not _finite(expm_share) and not _finite(best_share):
            parts.append(f"{name}: nothing kept at eps 0.01 ({sum(kept.values())} kept)")
            continue
        compared += 1
        text = (f"{name}: {expm} {expm_share:.3f} of {kept[expm]} vs {best} {best_share:.3f} of {kept[best]}")
        parts.append(text)
        if not (_finite(expm_share) and (not _finite(best_share) or expm_share >= best_share)):
            failures.append(text)
    if not compared:
        return _item(title, "not evaluated", "no miner kept a redescription at eps 0.01 on any data set: "
                     + "; ".join(parts), parts)
    verdict = "does not hold" if failures else "holds"
    skipped = [p for p in parts if "nothing kept" in p]
    return _item(title, verdict, "; ".join(failures or parts) + (f" (no kept redescription at all on {len(skipped)} "
                                                                 f"data set(s))" if skipped else ""), parts)


def finding_6(trend: dict[str, Any]) -> dict[str, Any]:
    title = "noisy and true Jaccard agree better as the data grow, for every miner (planted sizes)"
    if not trend:
        return _item(title, "not evaluated", "fewer than two planted sizes")
    failures, parts, evaluated = [], [], set()
    for miner, budgets in trend.items():
        for budget, t in budgets.items():
            kept, errors = t["kept"], t["median_abs_error"]
            first = next((i for i, k in enumerate(kept) if k > 0), None)
            if first is None or first == len(kept) - 1 or kept[-1] == 0:
                continue
            # the test of the largest size against the smallest that kept anything (older result
            # files only tested against the smallest size)
            p = t.get("first_kept_p", t["largest_smaller_p"] if first == 0 else float("nan"))
            evaluated.add(miner)
            shown = ", ".join(f"{n}: {e:.3f}" for n, e in zip(t["sizes"], errors) if _finite(e))
            text = (f"{miner} eps {budget}: median |noisy - true| {shown}; largest < {t['sizes'][first]}: "
                    + (f"p={p:.3g}" if _finite(p) else "no test stored"))
            parts.append(text)
            if not (errors[-1] < errors[first] and (not _finite(p) or p < 0.05)):
                failures.append(text)
    missing = [m for m in trend if m not in evaluated]
    if failures:
        return _item(title, "does not hold", "; ".join(failures), parts)
    if missing:
        return _item(title, "not evaluated", f"{', '.join(missing)}: kept nothing at two planted sizes at any "
                     "budget; " + ("; ".join(parts) or "no miner could be compared"), parts)
    return _item(title, "holds", "; ".join(parts), parts)


def findings(results: dict[str, Any], trend: dict[str, Any]) -> list[dict[str, Any]]:
    """The six findings (module docstring) with their verdicts."""
    return [finding_1(results), finding_2(results), finding_3(results), finding_4(results),
            finding_5(results), finding_6(trend)]


# ------------------------------------------------------------------------------ plots
COLOURS = {"AltExpM non-robust": "tab:blue", "AltExpM stable": "tab:cyan",
           "AltMCMC non-robust": "tab:red", "AltMCMC stable": "tab:orange",
           "MCMCTreePair omega 0.1": "tab:green", "MCMCTreePair omega 0.5": "olive"}


def _pyplot() -> Any:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_sizes(results: dict[str, Any], path: Path) -> None:
    """Share of kept redescriptions truly significant and median true Jaccard against entities,
    one column per budget; planted sizes as lines, UCI splits as hollow markers, clired's SplitT
    as black crosses."""
    plt = _pyplot()
    budgets = list(next(iter(results.values()))["miners"][PAIR[0]])
    figure, axes = plt.subplots(2, len(budgets), figsize=(5.2 * len(budgets), 8.8), squeeze=False)
    sizes = [results[n]["n"] for n in results]
    planted = sorted((n for n in results if results[n]["kind"] == "planted"), key=lambda n: results[n]["n"])
    others = [n for n in results if results[n]["kind"] != "planted"]
    for column, budget in enumerate(budgets):
        for row, (measure, label) in enumerate((("sig", "share of kept with true p < 0.01"),
                                                 ("jaccard", "median true Jaccard of kept"))):
            axis = axes[row][column]
            for offset, miner in enumerate(COLOURS):
                def value(name: str) -> float:
                    s = results[name]["miners"][miner][budget]
                    return s["significant"]["share"] if measure == "sig" else s["true_jaccard"]["median"]
                shift = 1 + 0.02 * (offset - 2.5)
                if planted:
                    axis.plot([results[n]["n"] * shift for n in planted], [value(n) for n in planted], marker="o",
                              ms=4, color=COLOURS[miner], label=miner)
                if others:
                    axis.plot([results[n]["n"] * shift for n in others], [value(n) for n in others], ls="none",
                              marker="s", mfc="none", ms=6, color=COLOURS[miner])
            if measure == "jaccard":
                split = [(results[n]["n"], results[n]["baselines"].get("SplitT", {}).get("all", {})
                          .get("true_jaccard", {}).get("median")) for n in results]
                split = [(x, y) for x, y in split if _finite(y)]
                if split:
                    axis.plot(*zip(*split), ls="none", marker="x", color="black", ms=7,
                              label="clired SplitT (non-private)")
            axis.set_xscale("log")
            axis.set_xlim(min(sizes) / 1.4, max(sizes) * 1.4)
            axis.set_ylim(-0.03, 1.03)
            axis.set_xlabel("entities (lines: planted; hollow squares: UCI splits)")
            axis.set_ylabel(label)
            axis.set_title(f"epsilon {budget} per run", fontsize=10)
            axis.grid(alpha=0.3)
    handles, labels = axes[1][0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=4, fontsize=8)
    figure.suptitle("DP redescription miners, kept (unpruned) redescriptions pooled over runs "
                    "(missing points: nothing kept)", fontsize=11)
    figure.tight_layout(rect=(0, 0.06, 1, 1))
    figure.savefig(path, dpi=100)
    plt.close(figure)


def plot_scatter(results: dict[str, Any], arrays: dict[str, Any], path: Path, budget: str = "1.0") -> None:
    """Noisy against true Jaccard of the kept redescriptions at one budget (the paper's Figs. 2-3):
    one row per miner, one column per data set ordered by size."""
    plt = _pyplot()
    names = sorted(results, key=lambda n: results[n]["n"])
    miners = list(COLOURS)
    figure, axes = plt.subplots(len(miners), len(names), figsize=(2.3 * len(names) + 1, 2.2 * len(miners)),
                                squeeze=False)
    for row, miner in enumerate(miners):
        for column, name in enumerate(names):
            axis = axes[row][column]
            data = arrays[name][miner][budget]
            axis.plot([0, 1], [0, 1], color="0.6", lw=0.7)
            axis.scatter(data["true_jaccard"], data["noisy_jaccard"], s=5, alpha=0.4, color=COLOURS[miner])
            axis.set_xlim(0, 1)
            axis.set_ylim(0, 1)
            axis.tick_params(labelsize=6)
            if row == 0:
                axis.set_title(f"{name}\n[{results[name]['n']}]", fontsize=7)
            if column == 0:
                axis.set_ylabel(f"{miner}\nnoisy J", fontsize=7)
            if row == len(miners) - 1:
                axis.set_xlabel("true J", fontsize=7)
            axis.text(0.03, 0.9, f"{len(data['true_jaccard'])} kept", fontsize=6, transform=axis.transAxes)
    figure.suptitle(f"Noisy against true Jaccard of kept redescriptions, epsilon {budget}", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    """`python benchmarks/redescription_findings.py RESULT.json`: recompute the verdicts from a
    result file's summaries (and its size plot) and write them back."""
    import json
    import sys

    path = Path((argv if argv is not None else sys.argv[1:])[0])
    document = json.loads(path.read_text())
    document["findings"] = findings(document["datasets"], document["agreement_trend"])
    for item in document["findings"]:
        print(f"[{item['verdict']}] {item['finding']}: {item['detail']}")
    path.write_text(json.dumps(document, indent=1, default=float))
    plot_sizes(document["datasets"], path.with_suffix(".png"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
