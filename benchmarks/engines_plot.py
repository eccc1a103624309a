"""The plot of benchmarks/engines.py: time against rows, Jostle against the raw engine.

`plot(report, path)` draws a report of `python benchmarks/engines.py` (also `--replot FILE`):
one log-log panel per step, solid lines for Jostle, dashed for the raw engine on the same input,
and stars for the published figures of issue 14's table (`REFERENCE`, also kept in the report).
"""

from __future__ import annotations

from pathlib import Path

from engines_raw import ENGINE_ORDER

# The table at the top of issue 14: measured by its author on this machine, 1e7 rows (age, region),
# side by side in one process. Not rerun here (OpenDP and Tumult are not installed).
REFERENCE = {
    "source": "issue 14, table of figures at its top; measured by the issue's author on this machine, "
              "10 million rows (age, region); not rerun by this benchmark",
    "rows": 10_000_000,
    "bind": {"jostle_before_issue_14": 30.4, "raw_pandas_read": 0.41, "opendp_0.16_polars_scan": 0.03,
             "tumult_0.21_spark_local_load": 7.4},
    "count_per_region": {"jostle_before_issue_14": 2.03, "raw_pandas": 0.375, "opendp_0.16_polars_scan": 1.05,
                         "tumult_0.21_spark_local_load": 4.2},
    "histogram_10": {"jostle_before_issue_14": 2.21, "raw_pandas": 0.067, "opendp_0.16_polars_scan": 0.99,
                     "tumult_0.21_spark_local_load": 327.0},
    "jostle_before_issue_14_bind_peak_GB": 2.6,
}


# ---------------------------------------------------------------- the plot
COLOURS = {"pandas": "tab:blue", "duckdb": "tab:orange", "spark": "tab:green"}
MARKERS = {"csv": "o", "parquet": "s", "frame": "^"}
PANELS = [("bind", "bind (CSV / Parquet / DataFrame)"), ("count", "noisy count"), ("sum", "noisy sum of age"),
          ("count_per_region", "noisy count per region (histogram)"),
          ("histogram_10", "noisy 10-bin histogram of age"),
          ("count_per_region_partition", "partition + a noisy count per part (not a goal)")]


def plot(report: dict, path: Path) -> None:
    """Time against rows (log-log), one panel per step; solid Jostle, dashed the raw engine."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    runs = [r for r in report["runs"] if "error" not in r]
    series = sorted({(r["engine"], r["kind"]) for r in runs},
                    key=lambda s: (ENGINE_ORDER.index(s[0]), list(MARKERS).index(s[1])))
    fig, axes = plt.subplots(2, 3, figsize=(15, 9.5), sharex=True)
    for ax, (step, title) in zip(axes.flat, PANELS):
        for engine, kind in series:
            mine = sorted((r for r in runs if (r["engine"], r["kind"]) == (engine, kind)), key=lambda r: r["rows"])
            if step == "bind":
                points = [(r["rows"], r["bind_seconds"], r.get("read_seconds")) for r in mine]
            else:
                points = [(r["rows"], r["releases"][step]["seconds"], r["releases"][step].get("raw_seconds"))
                          for r in mine if step in r["releases"]]
            if not points:
                continue
            style = dict(color=COLOURS[engine], marker=MARKERS[kind], ms=5)
            ax.plot([p[0] for p in points], [p[1] for p in points], lw=1.6, **style)
            raw = [(p[0], p[2]) for p in points if p[2]]
            if raw:
                ax.plot([p[0] for p in raw], [p[1] for p in raw], lw=1.0, ls="--", alpha=0.75, mfc="none", **style)
        if step in ("bind", "count_per_region", "histogram_10"):
            reference = REFERENCE[step]
            for who, colour, label in (("opendp_0.16_polars_scan", "tab:purple", "OpenDP"),
                                       ("tumult_0.21_spark_local_load", "tab:red", "Tumult")):
                ax.plot([REFERENCE["rows"]], [reference[who]], "*", color=colour, ms=12, mec="white", zorder=5)
                ax.annotate(label, (REFERENCE["rows"], reference[who]), xytext=(6, -3), textcoords="offset points",
                            fontsize=8, color=colour)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(title, fontsize=10.5)
        ax.grid(alpha=0.3, which="both", lw=0.5)
        if ax in axes[:, 0]:
            ax.set_ylabel("seconds (median)")
        if ax in axes[1]:
            ax.set_xlabel("rows")
    handles = [Line2D([], [], color=COLOURS[e], marker=MARKERS[k], lw=1.6, label=f"Jostle {e}, {k}")
               for e, k in series]
    handles += [Line2D([], [], color="0.3", ls="--", lw=1.0, marker="o", mfc="none",
                       label="the raw engine, same input (dashed, hollow)"),
                Line2D([], [], color="tab:purple", marker="*", ls="none", ms=11, label="OpenDP 0.16 (issue 14's table)"),
                Line2D([], [], color="tab:red", marker="*", ls="none", ms=11, label="Tumult 0.21 (issue 14's table)")]
    fig.legend(handles=handles, loc="lower center", ncol=5, fontsize=9, frameon=False, bbox_to_anchor=(0.5, 0.025))
    spark = report.get("spark", {})
    notes = [f"medians of {report.get('repeats', '?')} runs, each release one session.run; stars: the figures of "
             "issue 14's table at 1e7 rows (measured by its author, not rerun)"]
    if spark.get("available") and spark.get("csv_max_rows"):
        notes.append(f"Spark's CSV runs stop at {spark['csv_max_rows']:,} rows (--spark-csv-max-rows)")
    fig.text(0.5, 0.008, "; ".join(notes), ha="center", fontsize=8.5, color="0.35")
    machine = report.get("environment", {})
    fig.suptitle(f"Private tables on engines: Jostle against the raw engine "
                 f"({machine.get('cpus', '?')} cores, load {report.get('load_average_before', ['?'])[0]})",
                 fontsize=12.5)
    fig.tight_layout(rect=(0, 0.1, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)
