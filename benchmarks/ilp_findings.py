"""The paper's findings on the ILP benchmark's results, each with a verdict from 95% intervals.

Used by `benchmarks/ilp.py` (its docstring lists the six findings and how each verdict is
computed). Every function reads the summarised results only (means and t-intervals per target,
size and method) and never tunes anything.
"""

from __future__ import annotations

from typing import Any, Callable

# ------------------------------------------------------------------------------ statistics
def above(a: dict[str, float], b: dict[str, float]) -> bool:
    """Whether interval a lies entirely above interval b (non-overlapping 95% intervals)."""
    return bool(a["low"] > b["high"])


def text(item: dict[str, float]) -> str:
    return f"{item['mean']:.3f} [{item['low']:.3f}, {item['high']:.3f}]"


# ------------------------------------------------------------------------------ findings
def verdict(finding: str, holds: bool | None, detail: str, **extra: Any) -> dict[str, Any]:
    return {"finding": finding, "verdict": {True: "holds", False: "does not hold",
                                            None: "not evaluated"}[holds],
            "detail": detail, **extra}


def _sizes(result: dict[str, Any]) -> list[int]:
    return sorted(int(size) for size in result["sizes"])


def _item(result: dict[str, Any], size: int, method: str, metric: str = "accuracy") -> dict[str, float]:
    return result["sizes"][str(size)][method][metric]


def finding_nonprivate(results: dict[str, Any]) -> dict[str, Any]:
    """The non-private learner is perfect (every run's test accuracy 1) at 1,000 trains and more."""
    misses = []
    checked = 0
    for name, result in results.items():
        for size, size_runs in ((int(s), r) for s, r in result["runs"].items()):
            if size < 1000:
                continue
            checked += 1
            worst = min(run["accuracy"]["nonprivate"] for run in size_runs)
            if worst < 1.0:
                misses.append(f"{name} at {size}: worst run {worst:.4f}")
    if not checked:
        return verdict("non-private perfect at >= 1,000 trains", None, "no size >= 1,000 was run")
    return verdict("non-private perfect at >= 1,000 trains", not misses,
                   "every run of every target at >= 1,000 trains has test accuracy 1" if not misses
                   else "not perfect: " + "; ".join(misses))


def finding_relevance_vs_naive(result: dict[str, Any] | None) -> dict[str, Any]:
    """On the 3-atom target: relevance >= naive at every size (the paired difference's interval
    is not entirely below 0) and clearly better (non-overlapping intervals) at two sizes or more."""
    name = "relevance-aware >= naive at every size on the 3-atom target, clearly better at >= 2 sizes"
    if result is None:
        return verdict(name, None, "the 3-atom target was not run")
    worse, clearly, rows = [], [], {}
    for size in _sizes(result):
        difference = result["sizes"][str(size)]["relevance_minus_naive"]
        relevance, naive = _item(result, size, "relevance"), _item(result, size, "naive")
        if difference["high"] < 0:
            worse.append(size)
        if above(relevance, naive):
            clearly.append(size)
        rows[str(size)] = {"relevance": relevance, "naive": naive, "paired_difference": difference}
    detail = (f"clearly better (non-overlapping 95% intervals) at {clearly or 'no size'}; "
              f"significantly worse (paired difference interval below 0) at {worse or 'no size'}")
    return verdict(name, not worse and len(clearly) >= 2, detail, clearly_better_at=clearly,
                   worse_at=worse, per_size=rows)


def finding_growth(results: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """Private accuracy grows with data (largest size's interval above the smallest's, no
    significant drop between consecutive sizes) and is clearly above the guess at the largest."""
    name = "private accuracy grows with data and is clearly above the guess at the largest size"
    checks, failures = {}, []
    for target in names:
        if target not in results:
            continue
        sizes = _sizes(results[target])
        if len(sizes) < 2:
            continue
        for method in ("relevance", "naive"):
            items = [_item(results[target], size, method) for size in sizes]
            drops = [f"{a}->{b}" for a, b, x, y in zip(sizes, sizes[1:], items, items[1:]) if above(x, y)]
            grows = above(items[-1], items[0]) and not drops
            guess = _item(results[target], sizes[-1], "guess")
            beats = above(items[-1], guess)
            checks[f"{target} / {method}"] = {"grows": grows, "significant_drops": drops,
                                              "above_guess_at_largest": beats,
                                              "largest": text(items[-1]), "guess": text(guess)}
            if not grows:
                failures.append(f"{target} / {method}: no clear growth from {sizes[0]} to "
                                f"{sizes[-1]} ({text(items[0])} -> {text(items[-1])})"
                                + (f", drops {drops}" if drops else ""))
            if not beats:
                failures.append(f"{target} / {method}: at {sizes[-1]} {text(items[-1])} is not "
                                f"clearly above the guess {text(guess)}")
    if not checks:
        return verdict(name, None, "needs two sizes of the 3-atom or 2-clause target")
    largest = max(_sizes(results[names[0]])) if names[0] in results else None
    detail = ("holds for both reductions on " + ", ".join(n for n in names if n in results)
              if not failures else "; ".join(failures))
    return verdict(name, not failures, detail + (f" (largest size run: {largest})"
                                                 if largest != 30000 else ""), per_target=checks)


def finding_harder(results: dict[str, Any], harder: str, easier: str, finding: str,
                   sizes_of: Callable[[list[int]], list[int]]) -> dict[str, Any]:
    """The `harder` target's error reduction over the majority class lies entirely below the
    `easier` one's (non-overlapping intervals) for the relevance-aware reduction at `sizes_of`."""
    if harder not in results or easier not in results:
        return verdict(finding, None, f"needs both '{harder}' and '{easier}'")
    sizes = sizes_of(sorted(set(_sizes(results[harder])) & set(_sizes(results[easier]))))
    if not sizes:
        return verdict(finding, None, "no size to compare")
    rows, holds_for = {}, {}
    for method in ("relevance", "naive"):
        ok = []
        for size in sizes:
            h = _item(results[harder], size, method, "error_reduction_majority")
            e = _item(results[easier], size, method, "error_reduction_majority")
            rows[f"{method} {size}"] = {harder: text(h), easier: text(e), "clearly": above(e, h)}
            ok.append(above(e, h))
        holds_for[method] = [s for s, good in zip(sizes, ok) if good]
    fails = [s for s in sizes if s not in holds_for["relevance"]]
    detail = (f"error reduction over the majority class, relevance-aware: {easier} clearly above "
              f"{harder} at {holds_for['relevance'] or 'no size'} of {sizes}"
              + (f", not at {fails}" if fails else "") +
              f"; naive (reported, not the verdict): clearly at {holds_for['naive'] or 'no size'}")
    return verdict(finding, not fails, detail, sizes=sizes, per_size=rows)


def finding_sweep(results: dict[str, Any], sweep: dict[int, str]) -> dict[str, Any]:
    """Fig. 2b: the relevance-aware error reduction over the guess falls from 1 to 4 clauses
    (4 clauses' interval entirely below 1 clause's, no significant rise between neighbours)."""
    name = "error reduction over the guess falls as more 3-atom clauses must be learned (1-4)"
    names = [sweep[j] for j in sorted(sweep)]
    if any(n not in results for n in names):
        return verdict(name, None, "the sweep's targets were not all run")
    sizes = sorted(set.intersection(*(set(_sizes(results[n])) for n in names)))
    per_size, failures = {}, []
    for size in sizes:
        items = [_item(results[n], size, "relevance", "error_reduction_guess") for n in names]
        rises = [f"{j}->{j + 1}" for j, x, y in zip(range(1, 5), items, items[1:]) if above(y, x)]
        falls = above(items[0], items[-1]) and not rises
        per_size[str(size)] = {"by_clauses": [text(i) for i in items], "falls": falls,
                               "significant_rises": rises}
        if not falls:
            failures.append(size)
    largest = sizes[-1]
    detail = (f"falls (1 clause clearly above 4, no significant rise) at "
              f"{[s for s in sizes if s not in failures] or 'no size'}; not at {failures or 'no size'}; "
              f"at {largest}: " + ", ".join(per_size[str(largest)]["by_clauses"]))
    return verdict(name, largest not in failures, detail + f" (verdict at the largest size, {largest})",
                   per_size=per_size)


def findings(results: dict[str, Any], targets: list[str], sweep: dict[int, str]) -> list[dict[str, Any]]:
    """Every finding of the paper, with its verdict computed from 95% intervals.

    Args:
        results: Per target name, its summarised runs.
        targets: The three main targets' names (3 atoms, 6 atoms, 2 clauses of 3 atoms).
        sweep: Fig. 2b's targets by number of clauses.
    """
    def two_largest(sizes: list[int]) -> list[int]:
        return sizes[-2:]

    return [
        finding_nonprivate(results),
        finding_relevance_vs_naive(results.get("3 atoms")),
        finding_growth(results, targets),
        finding_harder(results, "6 atoms", "3 atoms", "the 6-atom target is much harder than the "
                       "3-atom one (at every size >= 1,000)",
                       lambda sizes: [s for s in sizes if s >= 1000]),
        finding_harder(results, "6 atoms", "2 clauses of 3 atoms", "two 3-atom clauses are learned "
                       "better than one 6-atom clause at the two largest sizes", two_largest),
        finding_sweep(results, sweep),
    ]
