"""Does the redescription ChoiceMaker choose well? It against each fixed Option, on data it never saw.

    python benchmarks/choicemaker_redescription.py --quick      # about 13 minutes on 2 cores (7 of them
                                                                # training, unless the shipped model is current)
    python benchmarks/choicemaker_redescription.py              # 8 held-out tasks, 3 repetitions
    python benchmarks/choicemaker_redescription.py --quick --dataset "mushroom.csv:odor,gill-color|cap-color,ring-type"

The redescription family's ChoiceMaker (`jostle.learners.redescription`, stdlib
`redescription.chooser`) chooses among AltExpM and AltMCMC (each non-robust, InTr = 1 and
RMIter = m, and stable, InTr = m and RMIter = 1) and MCMCTreePair (omega 0.1 and 0.5) from
public facts (the per-run budget, the planned runs, the views' attribute counts, numeric shares
and split candidates) and, when it pays, a noisy entity count (10% of the budget). It is the
ChoiceMaker of the family's defaults (its generated corpus and grid: the shipped model when it
is current, else trained once and cached).

What is reported: the error the family scores with (1 - the median true Jaccard of the kept
redescriptions, 1 when none is kept; lower is better) and the regret (the error minus the best
Option's on the same input, in hindsight) of
  * "ChoiceMaker": the trained ChoiceMaker (its kept mode: measured, or public only);
  * "measured": the ChoiceMaker forced to measure the noisy entity count (10% of the budget; a
    meta-model fitted on the training experience's measured rows): does measuring pay?
  * every fixed Option, run with the whole budget;
on inputs the ChoiceMaker was not trained on:
  * held-out generated tasks: settings of the planted generator drawn with another seed
    (`redescription_corpus(n, seed=1)`: other planted counts, noise attributes, flips and
    numeric shares, other data seeds), at the training sizes and budgets;
  * with --dataset: two-view splits of UCI tables (`FILE:COLS|COLS`: a CSV under the data
    folder (--data, else $JOSTLE_DATA, else ../shared/datasets) and its two views' column
    lists; `FILE` alone splits its columns in half), coded on public domains (categorical: the
    values in the table; numeric: 10 equal-width bins between its minimum and maximum: the
    tables are public here).
Each repetition draws independent data (generated tasks) and noise (`first_rep`); intervals are
95% t-intervals over the repetitions. Everything runs on public data with the engine's seeded
simulation noise. Writes benchmarks/results/choicemaker_redescription[_quick].json and .png.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from benchmark_data import UCI, require  # noqa: E402  (the data folder)
from choicemaker_classification import interval  # noqa: E402  (t-intervals)

from jostle.choicemaker.engine import TrainedChoiceMaker  # noqa: E402
from jostle.choicemaker.experience import FEATURE_PREFIX, experience_table  # noqa: E402
from jostle.choicemaker.model import FittedMetaModel, select_model_kind, training_matrix  # noqa: E402
from jostle.choicemaker.family import Instance, stable_seed  # noqa: E402
from jostle.choicemaker.pretrained import load_or_train  # noqa: E402
from jostle.learners.redescription.corpus import redescription_corpus  # noqa: E402
from jostle.learners.redescription.family import FAMILY, RedescriptionFamily  # noqa: E402
from jostle.learners.redescription.task import RedescriptionData, RedescriptionGrid, planned_runs  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
NUMERIC_BINS = 10


# ---------------------------------------------------------------------------------- inputs
@dataclass(frozen=True)
class TableTask:
    """A two-view split of a public CSV table (one benchmark dataset)."""

    name: str
    group: str
    path: str
    left: tuple[str, ...]
    right: tuple[str, ...]

    def content_hash(self) -> str:
        return f"{stable_seed(self.path, self.left, self.right):08x}"


def table_task(spec: str, data: str | None) -> TableTask:
    """`FILE:COLS|COLS` (or `FILE`: its columns split in half) -> a `TableTask` (FILE under the
    data folder, `benchmark_data`; one line and exit when it is missing)."""
    file, _, columns = spec.partition(":")
    path = require("choicemaker_redescription.py", UCI, data, [file]) / file
    header = list(pd.read_csv(path, nrows=0).columns)
    if columns:
        left, _, right = columns.partition("|")
        views = [tuple(c.strip() for c in part.split(",") if c.strip()) for part in (left, right)]
    else:
        views = [tuple(header[: len(header) // 2]), tuple(header[len(header) // 2:])]
    missing = [c for c in (*views[0], *views[1]) if c not in header]
    if missing or not views[0] or not views[1]:
        raise SystemExit(f"--dataset {spec}: two non-empty column lists of {path.name} needed; unknown {missing}")
    return TableTask(f"table:{path.stem}", f"table:{path.stem}", str(path), views[0], views[1])


def table_views(task: TableTask) -> Any:
    """The table's two views coded on public domains (see the module docstring)."""
    from jostle.learners.redescription.views import ViewSchema, categorical, encode_views, equal_width

    frame = pd.read_csv(task.path)
    schemas = []
    for label, columns in (("left", task.left), ("right", task.right)):
        attributes = []
        for column in columns:
            values = frame[column]
            if pd.api.types.is_numeric_dtype(values) and values.nunique() > NUMERIC_BINS:
                attributes.append(equal_width(column, float(values.min()), float(values.max()), NUMERIC_BINS))
            else:
                attributes.append(categorical(column, sorted(values.dropna().unique().tolist(), key=str)))
        schemas.append(ViewSchema(label, tuple(attributes)))
    return encode_views(frame[list(task.left)], frame[list(task.right)], schemas)


class BenchmarkFamily(RedescriptionFamily):
    """The family, also drawing inputs from two-view splits of tables (`TableTask`)."""

    def pieces(self, task: Any, grid: Any, options: Any) -> list[tuple[str, Any]]:
        if isinstance(task, TableTask):
            return [("table", None)]
        return super().pieces(task, grid, options)

    def piece_cost(self, task: Any, piece: Any) -> float:
        return 10_000.0 if piece is None else super().piece_cost(task, piece)

    def instances(self, task: Any, piece: Any, grid: Any) -> Iterator[Instance]:
        if not isinstance(task, TableTask):
            yield from super().instances(task, piece, grid)
            return
        views = table_views(task)
        for rep in range(grid.first_rep, grid.first_rep + grid.repetitions):
            for epsilon in grid.epsilons:
                columns = {"task": task.name, "group": task.group, "entities": int(views.n_entities),
                           "epsilon": float(epsilon), "rep": rep}
                yield Instance(columns, RedescriptionData(views, planned_runs(epsilon), task.name), float(epsilon),
                               (task.content_hash(), rep, epsilon), views)


BENCHMARK_FAMILY = BenchmarkFamily()


def grid_for(quick: bool, repetition: int) -> RedescriptionGrid:
    """The held-out grid of one repetition: the training grid's sizes and budgets (--quick: two
    sizes between and beyond them)."""
    default = FAMILY.default_grid()
    sizes = (2_000, 20_000) if quick else default.sizes
    return RedescriptionGrid(sizes=sizes, epsilons=default.epsilons, repetitions=1, first_rep=1000 + 100 * repetition)


# ---------------------------------------------------------------------------------- choices and regrets
class MeasuredChooser:
    """The ChoiceMaker forced to measure: a meta-model fitted, as the engine fits one, on the
    training experience's "measured" rows (every metafeature, the noisy entity count at 10% of
    the budget, the Option with the rest), whether or not the engine found that measuring pays."""

    mode = "measured"

    def __init__(self, trained: TrainedChoiceMaker, args: argparse.Namespace) -> None:
        options = list(trained.options.values())
        training = experience_table(FAMILY, options, trained.metafeatures, FAMILY.default_corpus(options),
                                    FAMILY.default_grid(), trained.mf_share, args.cache_dir, args.n_jobs,
                                    progress=False)  # cached when the ChoiceMaker was trained here
        self.metafeatures = list(trained.metafeatures)
        data = training_matrix(training[training["mode"] == "measured"], [m.name for m in self.metafeatures],
                               [o.name for o in options], list(FAMILY.config_columns), FAMILY.meta_input_products,
                               FAMILY.group_column)
        kind, _ = select_model_kind(data)
        self.model = FittedMetaModel.fit(data, kind)

    def metafeatures_for(self) -> list[Any]:
        return self.metafeatures

    def choose(self, features: dict[str, float]) -> tuple[str, dict[str, float]]:
        return self.model.options[int(self.model.choose(self.model.inputs(features))[0])], {}


def chosen_errors(experience: pd.DataFrame, choosers: dict[str, Any]) -> pd.DataFrame:
    """One row per input: each chooser's error (its mode's row of the Option it picks from the
    metafeatures released there) and pick, every fixed Option's error with the whole budget, and
    the best one's."""
    keys = ["task", "entities", "epsilon", "rep"]
    fixed = experience[experience["mode"] == "public"].pivot_table(index=keys, columns="option", values="error",
                                                                   aggfunc="first")
    table = fixed.add_prefix("fixed ")
    for label, chooser in choosers.items():
        names = [m.name for m in chooser.metafeatures_for()]
        rows = []
        for key, part in experience[experience["mode"] == chooser.mode].groupby(keys):
            choice, _ = chooser.choose({name: float(part[FEATURE_PREFIX + name].iloc[0]) for name in names})
            rows.append({**dict(zip(keys, key)), f"{label} choice": choice,
                         label: float(part.set_index("option")["error"][choice])})
        table = table.join(pd.DataFrame(rows).set_index(keys))
    table["best"] = fixed.min(axis=1)
    return table.reset_index()


def run_repetition(repetition: int, tasks: list[Any], trained: TrainedChoiceMaker, measured: MeasuredChooser,
                   args: argparse.Namespace) -> dict[str, Any]:
    """Every chooser's mean error and regret in one repetition (overall, per size and per budget)."""
    options = list(trained.options.values())
    grid = grid_for(args.quick, repetition)
    start = time.perf_counter()
    experience = experience_table(BENCHMARK_FAMILY, options, trained.metafeatures, tasks, grid, trained.mf_share,
                                  args.cache_dir, args.n_jobs, progress=False)
    table = chosen_errors(experience, {"ChoiceMaker": trained, "measured": measured})
    choosers = ["ChoiceMaker", "measured", *[f"fixed {o.name}" for o in options]]
    generated = table[~table["task"].str.startswith("table:")]

    def scores(part: pd.DataFrame) -> dict[str, dict[str, float]]:
        return {name: {"error": float(part[name].mean()), "regret": float((part[name] - part["best"]).mean())}
                for name in choosers} if len(part) else {}

    result = {"generated": scores(generated),
              "by_size": {int(s): scores(p) for s, p in generated.groupby("entities")},
              "by_epsilon": {float(e): scores(p) for e, p in generated.groupby("epsilon")},
              "tables": {str(t): scores(p) for t, p in table[table["task"].str.startswith("table:")].groupby("task")},
              "picks": table["ChoiceMaker choice"].value_counts().to_dict(),
              "measured_picks": table["measured choice"].value_counts().to_dict(),
              "rows": table.to_dict(orient="records"),
              "seconds": time.perf_counter() - start}
    overall = result["generated"]
    print(f"repetition {repetition}: {len(table)} inputs in {result['seconds']:.0f} s; ChoiceMaker error "
          f"{overall['ChoiceMaker']['error']:.3f}, regret {overall['ChoiceMaker']['regret']:.3f}; picks "
          f"{result['picks']}; forced to measure: regret {overall['measured']['regret']:.3f}, picks "
          f"{result['measured_picks']}", flush=True)
    return result


def summarise(runs: list[dict[str, Any]], part: str, key: Any = None) -> dict[str, dict[str, dict[str, float]]]:
    """Chooser -> {"error", "regret"} -> mean and 95% interval over the repetitions."""
    def scores(run: dict[str, Any]) -> dict[str, dict[str, float]]:
        return run[part] if key is None else run[part].get(key, {})

    names = list(scores(runs[0]))
    return {name: {measure: interval([scores(run)[name][measure] for run in runs if name in scores(run)])
                   for measure in ("error", "regret")} for name in names}


# ---------------------------------------------------------------------------------- output
def plot(results: dict[str, Any], path: Path) -> None:
    """Left: regret of the ChoiceMaker and each fixed Option on the held-out generated tasks (95%
    intervals over repetitions); middle: error by entity count; right: error by budget (and the
    tables, when given)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = results["summary"]
    names = sorted(summary, key=lambda n: summary[n]["regret"]["mean"])
    figure, axes = plt.subplots(1, 3, figsize=(17, 5.2), gridspec_kw={"width_ratios": [1.25, 1, 1]})
    left = axes[0]
    for row, name in enumerate(names):
        item = summary[name]["regret"]
        error = None if not np.isfinite(item["low"]) else [[item["mean"] - item["low"]], [item["high"] - item["mean"]]]
        colour = {"ChoiceMaker": "black", "measured": "tab:purple"}.get(name, "0.5")
        left.errorbar(item["mean"], row, xerr=error, fmt="o", color=colour, capsize=4, ms=8 if colour == "black" else 6)
    left.set_yticks(range(len(names)))
    left.set_yticklabels([n.replace("fixed ", "fixed: ") for n in names])
    left.invert_yaxis()
    left.axvline(0, color="black", lw=0.8, ls=":")
    left.set_xlabel("regret: error minus the best Option's on the same input (lower is better)")
    left.grid(alpha=0.3, axis="x")
    shown = [*sorted((n for n in names if n.startswith("fixed ")), key=lambda n: summary[n]["error"]["mean"])[:3],
             "measured", "ChoiceMaker"]  # drawn last (dashed): it is often one of the fixed Options
    for axis, part, label in ((axes[1], "by_size", "entities"), (axes[2], "by_epsilon", "per-run epsilon")):
        for name in shown:
            points = sorted((float(k), v[name]["error"]) for k, v in results[part].items() if name in v)
            xs = [k for k, _ in points]
            means = np.array([v["mean"] for _, v in points])
            lows, highs = np.array([v["low"] for _, v in points]), np.array([v["high"] for _, v in points])
            chooser = name == "ChoiceMaker"
            style = {"color": "black", "lw": 2.2, "zorder": 3, "ls": "--"} if chooser else \
                {"color": "tab:purple", "lw": 1.6, "ls": ":"} if name == "measured" else {"lw": 1.4}
            line = axis.plot(xs, means, marker="o", label=name.replace("fixed ", "fixed: "), **style)[0]
            if chooser and np.all(np.isfinite(lows)):  # the ChoiceMaker's 95% interval only (readable)
                axis.fill_between(xs, np.clip(lows, 0, 1.05), np.clip(highs, 0, 1.05), color=line.get_color(),
                                  alpha=0.1)
        axis.set_xscale("log")
        axis.set_xticks(xs, [f"{x:g}" for x in xs])
        axis.minorticks_off()
        axis.set_xlabel(label)
        axis.set_ylabel("error: 1 - median true Jaccard of the kept set")
        axis.set_ylim(0, 1.05)
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8, loc="lower left")
    tables = [f"{table[6:]}: ChoiceMaker {items['ChoiceMaker']['error']['mean']:.2f}, best fixed "
              f"{min((n for n in items if n.startswith('fixed ')), key=lambda n: items[n]['error']['mean'])[6:]} "
              f"{min(v['error']['mean'] for n, v in items.items() if n.startswith('fixed ')):.2f}"
              for table, items in results["tables"].items()]
    meta = results["meta"]
    item = summary["ChoiceMaker"]["regret"]
    figure.suptitle(f"The redescription ChoiceMaker ({meta['choicemaker']}, mode {meta['mode']}) on "
                    f"{meta['held_out_tasks']} held-out generated tasks, sizes {meta['sizes']}, epsilon "
                    f"{meta['epsilons']}, {meta['repetitions']} repetitions\nChoiceMaker regret "
                    f"{item['mean']:.3f} [{item['low']:.3f}, {item['high']:.3f}] (95% over repetitions)"
                    + (f"\nUCI two-view splits (error): {'; '.join(tables)}" if tables else ""), fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 held-out tasks, 2 sizes, 2 repetitions")
    parser.add_argument("--dataset", action="append", default=[], metavar="FILE:COLS|COLS",
                        help="a two-view split of a CSV under the data folder (repeatable)")
    parser.add_argument("--data", default=None, help="the data folder (default $JOSTLE_DATA or ../shared/datasets)")
    parser.add_argument("--tasks", type=int, default=None, help="held-out generated tasks (default 8; 3 with --quick)")
    parser.add_argument("--repetitions", type=int, default=None, help="default 3; 2 with --quick")
    parser.add_argument("--n-jobs", type=int, default=-1, help="processes for the experience (default all)")
    parser.add_argument("--cache-dir", default=None, help="default $JOSTLE_CACHE or ~/.cache/jostle")
    parser.add_argument("--output", default=None, help="results path without suffix")
    parser.add_argument("--replot", metavar="JSON", help="only redraw the PNG of a results file")
    args = parser.parse_args(argv)
    if args.replot:
        results = json.loads(Path(args.replot).read_text())
        plot(results, Path(args.replot).with_suffix(".png"))
        return results
    start = time.perf_counter()
    options = list(FAMILY.options().values())
    metafeatures = [FAMILY.metafeatures()[name] for name in FAMILY.default_metafeatures]
    trained = load_or_train(FAMILY, options, metafeatures, FAMILY.default_corpus(options), FAMILY.default_grid(),
                            0.1, n_jobs=args.n_jobs, progress=False, cache_dir=args.cache_dir)
    tasks: list[Any] = redescription_corpus(args.tasks or (3 if args.quick else 8), seed=1)
    tasks += [table_task(spec, args.data) for spec in args.dataset]
    repetitions = args.repetitions or (2 if args.quick else 3)
    grid = grid_for(args.quick, 0)
    tables = sum(isinstance(t, TableTask) for t in tasks)
    print(f"ChoiceMaker: {trained.origin}, mode {trained.mode}, reads {[m.name for m in trained.metafeatures_for()]}; "
          f"{len(tasks) - tables} held-out generated tasks (sizes {grid.sizes}) and {tables} tables; epsilons "
          f"{grid.epsilons}; {repetitions} repetitions", flush=True)
    measured = MeasuredChooser(trained, args)
    runs = [run_repetition(r, tasks, trained, measured, args) for r in range(repetitions)]
    results = {
        "meta": {"quick": args.quick, "choicemaker": trained.origin, "mode": trained.mode,
                 "metafeatures": [m.name for m in trained.metafeatures_for()],
                 "held_out_tasks": sum(not isinstance(t, TableTask) for t in tasks),
                 "tasks": [t.name for t in tasks], "datasets": args.dataset, "sizes": list(grid.sizes),
                 "epsilons": list(grid.epsilons), "options": [o.name for o in options], "repetitions": repetitions,
                 "seconds": 0.0,
                 "command": "python benchmarks/choicemaker_redescription.py " + " ".join(argv or sys.argv[1:])},
        "summary": summarise(runs, "generated"),
        "by_size": {size: summarise(runs, "by_size", size) for size in runs[0]["by_size"]},
        "by_epsilon": {eps: summarise(runs, "by_epsilon", eps) for eps in runs[0]["by_epsilon"]},
        "tables": {table: summarise(runs, "tables", table) for table in runs[0]["tables"]},
        "runs": runs,
    }
    for name, item in sorted(results["summary"].items(), key=lambda kv: kv[1]["regret"]["mean"]):
        e, r = item["error"], item["regret"]
        print(f"  {name:<30} error {e['mean']:.3f} [{e['low']:.3f}, {e['high']:.3f}]   "
              f"regret {r['mean']:.3f} [{r['low']:.3f}, {r['high']:.3f}]")
    for table, items in results["tables"].items():
        print(f"  {table}: " + ", ".join(f"{n} {v['error']['mean']:.3f}" for n, v in items.items()))
    results["meta"]["seconds"] = round(time.perf_counter() - start, 1)
    output = Path(args.output) if args.output else RESULTS / ("choicemaker_redescription_quick" if args.quick
                                                             else "choicemaker_redescription")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.with_suffix(".json").write_text(json.dumps(results, indent=1, default=float))
    plot(results, output.with_suffix(".png"))
    print(f"\nwrote {output.with_suffix('.json')} and .png in {results['meta']['seconds']:.0f} s")
    return results


if __name__ == "__main__":
    main()
