"""The figure of `benchmarks/sulq.py`: the calibration side by side, then one row per comparison
(k-means, ID3, perceptron), one panel per table, each learner's mean against epsilon with its 95%
interval (error bars), the non-private reference dashed."""

from __future__ import annotations

from pathlib import Path

import numpy as np

STYLE = {
    "sulq_lecture": ("SuLQ k-means, lecture R", "tab:red", "s", "-"),
    "sulq_zcdp": ("SuLQ k-means, zCDP R (every query counted)", "tab:orange", "o", "-"),
    "dplloyd": ("DPLloyd (Jostle, zCDP)", "tab:blue", "o", "-"),
    "dplloyd_reseed": ("DPLloyd, reseeding (Jostle, zCDP)", "tab:cyan", "v", "--"),
    "diffprivlib": ("diffprivlib KMeans (pure eps)", "tab:green", "^", "-"),
    "sulq_id3": ("SuLQ ID3 (zCDP)", "tab:orange", "o", "-"),
    "tree_choicemaker": ("tree ChoiceMaker (same rho)", "tab:blue", "o", "-"),
    "tree_best_fixed": ("best fixed tree Option on the corpus", "tab:purple", "D", ":"),
    "tree_choicemaker_pure": ("tree ChoiceMaker at pure epsilon (stronger)", "tab:green", "^", ":"),
    "sulq_perceptron": ("SuLQ perceptron (zCDP)", "tab:orange", "o", "-"),
    "diffprivlib_logistic": ("diffprivlib logistic regression (pure eps)", "tab:green", "^", "-"),
    "nonprivate": ("not private", "0.3", "", "--"),
}


def _calibration(axis_variance, axis_ratio, table: dict) -> None:
    from matplotlib.lines import Line2D

    rows = table["rows"]
    deltas = sorted({r["delta"] for r in rows}, reverse=True)
    colours = dict(zip(deltas, ["tab:blue", "tab:orange", "tab:green", "tab:red"]))
    for delta in deltas:
        for conversion, style in (("bun_steinke", "-"), ("cks", ":")):
            chosen = sorted((r for r in rows if r["delta"] == delta and r["conversion"] == conversion),
                            key=lambda r: r["T"])
            t = [r["T"] for r in chosen]
            if conversion == "bun_steinke":
                axis_variance.plot(t, [r["lecture_variance"] for r in chosen], "-", color=colours[delta], lw=1.8)
                axis_variance.plot(t, [r["zcdp_variance"] for r in chosen], "--", color=colours[delta], lw=1.2)
            axis_ratio.plot(t, [r["ratio"] for r in chosen], style, color=colours[delta], marker=".")
    for axis in (axis_variance, axis_ratio):
        axis.set_xscale("log")
        axis.set_xlabel("T, queries")
        axis.grid(alpha=0.3)
    by_delta = [Line2D([], [], color=colours[d], lw=1.5, label=f"delta {d:.0e}") for d in deltas]
    axis_variance.set_yscale("log")
    axis_variance.set_ylabel("noise variance R per query")
    axis_variance.set_title("Calibration at epsilon 1", fontsize=10)
    axis_variance.legend(handles=by_delta + [
        Line2D([], [], color="0.2", lw=1.8, label="lecture: 8 T log^2(T/delta) / eps^2"),
        Line2D([], [], color="0.2", ls="--", lw=1.2, label="zCDP: T / (2 rho), Bun-Steinke rho")],
        fontsize=6, loc="upper left")
    axis_ratio.set_ylabel("lecture R / zCDP R")
    span = table["ratio_range"]
    axis_ratio.set_title(f"Ratio: {span['bun_steinke']['min_ratio']:.0f}..{span['bun_steinke']['max_ratio']:.0f} "
                         f"(Bun-Steinke), {span['cks']['min_ratio']:.0f}..{span['cks']['max_ratio']:.0f} (CKS)",
                         fontsize=10)
    axis_ratio.legend(handles=by_delta + [Line2D([], [], color="0.2", label="Bun-Steinke conversion"),
                                          Line2D([], [], color="0.2", ls=":", label="CKS conversion")],
                      fontsize=6.5, loc="upper left")


def _regret(axis, entry: dict) -> None:
    """The combined ChoiceMaker's regret per table against epsilon (95% intervals)."""
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"]
    for (name, table), colour in zip(entry["tables"].items(), colours * 3):
        keys = list(table["summary"])
        epsilons = [float(k) for k in keys]
        regret = [table["summary"][k]["regret"] for k in keys]
        means = np.array([r["mean"] for r in regret])
        axis.errorbar(epsilons, means, yerr=[means - [r["low"] for r in regret], [r["high"] for r in regret] - means],
                      color=colour, marker="o", capsize=3, lw=1.3, ms=4, label=name)
    axis.axhline(0.0, color="0.3", lw=0.8)
    axis.set_xscale("log")
    ticks = [float(k) for k in next(iter(entry["tables"].values()))["summary"]]
    axis.set_xticks(ticks)
    axis.set_xticklabels([f"{e:g}" for e in ticks])
    axis.minorticks_off()
    axis.set_xlabel("epsilon (delta 1e-6)")
    axis.set_ylabel("regret (accuracy)")
    axis.set_title("ChoiceMaker across trees + SuLQ: regret vs best Option", fontsize=9)
    axis.legend(fontsize=6.5)
    axis.grid(alpha=0.3)


def _findings(axis, results: dict) -> None:
    """The old-against-new verdicts as text."""
    axis.axis("off")
    lines = ["Old (SuLQ) against new, per table and epsilon (paired 95% intervals):"]
    for part, entry in results.get("winners", {}).items():
        cells = entry["cells"]
        old_clear = entry["old_wins_clear"]
        new_clear = [k for k, c in cells.items() if c["winner_side"] == "new" and c["separated"]]
        lines.append(f"{part}: new wins {sum(c['winner_side'] == 'new' for c in cells.values())} of {len(cells)} "
                     f"cells by means ({len(new_clear)} with the interval clear of 0); old wins "
                     f"{len(entry['old_wins'])} ({len(old_clear)} clear)")
        if old_clear:
            lines.append("   old clearly ahead: " + ", ".join(old_clear))
    choice = results.get("choicemaker")
    if choice:
        picks: dict = {}
        for table in choice["tables"].values():
            for entry in table["summary"].values():
                for name, count in entry["picks"].items():
                    picks[name] = picks.get(name, 0) + count
        lines.append(f"ChoiceMaker across old and new ({choice['model_kind']}, {choice['mode']} mode): picks "
                     + ", ".join(f"{n} {c}" for n, c in sorted(picks.items(), key=lambda x: -x[1])))
    linear = results.get("linear_choice")
    if linear:
        cells = [c for t in linear["tables"].values() for c in t.values()]
        lines.append(f"Chooser SuLQ perceptron / diffprivlib LR (public eps, D; corpus): mean regret "
                     f"{np.mean([c['regret']['mean'] for c in cells]):.3f}, always {linear['best_fixed_on_corpus']} "
                     f"{np.mean([c['fixed_regret']['mean'] for c in cells]):.3f}; picks SuLQ in "
                     f"{sum(c['pick'] == 'sulq_perceptron' for c in cells)} of {len(cells)} cells")
    lines.append("")
    lines.append("k-means: the lecture's R costs far less rho than the budget (recorded per run);")
    lines.append("diffprivlib runs at pure epsilon, a stronger guarantee than (epsilon, 1e-6).")
    import textwrap

    wrapped = [piece for line in lines for piece in (textwrap.wrap(line, 58, subsequent_indent="   ") or [""])]
    text = axis.text(0.0, 1.0, "\n".join(wrapped), va="top", ha="left", fontsize=7.5, family="monospace",
                     transform=axis.transAxes)
    text.set_in_layout(False)


def _comparison(axis, name: str, entry: dict, learners: list[str], ylabel: str, relative: bool) -> None:
    summary = entry["summary"]
    keys = list(summary)
    epsilons = [float(k) for k in keys]
    reference = np.array([summary[k]["nonprivate"]["mean"] for k in keys]) if relative else None
    for learner in learners:
        label, colour, marker, style = STYLE[learner]
        means = np.array([summary[k][learner]["mean"] for k in keys])
        if not np.isfinite(means).any():
            continue
        low = np.array([summary[k][learner]["low"] for k in keys])
        high = np.array([summary[k][learner]["high"] for k in keys])
        if relative:
            means, low, high = means / reference, low / reference, high / reference
        if learner == "nonprivate":
            axis.plot(epsilons, means, style, color=colour, lw=1.2, label=label)
            continue
        axis.errorbar(epsilons, means, yerr=[means - low, high - means], color=colour, marker=marker, ls=style,
                      lw=1.5, capsize=3, ms=4, label=label)
    axis.set_xscale("log")
    axis.set_xticks(epsilons)
    axis.set_xticklabels([f"{e:g}" for e in epsilons])
    axis.minorticks_off()
    if relative:
        axis.set_yscale("log")
    axis.set_xlabel("epsilon (delta 1e-6)")
    axis.set_ylabel(ylabel)
    axis.set_title(name, fontsize=10)
    axis.grid(alpha=0.3)


def plot(results: dict, path: Path) -> None:
    """Draw the figure of a results dict to `path`."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    parts = [p for p in ("kmeans", "id3", "perceptron") if p in results]
    columns = max([2] + [len(results[p]["tables"]) for p in parts])
    rows = 1 + len(parts)
    figure, axes = plt.subplots(rows, columns, figsize=(4.3 * columns, 3.7 * rows), squeeze=False)
    for axis in axes.flat:
        axis.set_visible(False)
    if "calibration" in results:
        axes[0, 0].set_visible(True)
        axes[0, 1].set_visible(True)
        _calibration(axes[0, 0], axes[0, 1], results["calibration"])
    if columns >= 3 and "winners" in results:
        axes[0, 2].set_visible(True)
        _findings(axes[0, 2], results)
    if columns >= 4 and "choicemaker" in results:
        axes[0, 3].set_visible(True)
        _regret(axes[0, 3], results["choicemaker"])
    labels = {"kmeans": ("k-means: within-cluster error / non-private's", True),
              "id3": ("ID3: test accuracy", False), "perceptron": ("perceptron: test accuracy", False)}
    for row, part in enumerate(parts, start=1):
        learners = results[part]["learners"]
        ylabel, relative = labels[part]
        for column, (name, entry) in enumerate(results[part]["tables"].items()):
            axis = axes[row, column]
            axis.set_visible(True)
            _comparison(axis, f"{part}: {name}", entry, learners, ylabel, relative)
            if column == 0:
                axis.legend(fontsize=6.5)
    repetitions = results.get("_meta", {}).get("repetitions")
    figure.suptitle(f"SuLQ against modern DP learners (means over {repetitions} splits, 95% intervals; "
                    "zCDP learners at rho from CKS, diffprivlib at pure epsilon)", fontsize=11)
    figure.tight_layout(rect=(0, 0, 1, 0.97))
    figure.savefig(path, dpi=100)
    plt.close(figure)
