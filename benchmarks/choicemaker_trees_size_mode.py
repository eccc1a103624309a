"""Would a size-only experience mode pay for the tree ChoiceMaker? (issue 27, offline estimate)

    python benchmarks/choicemaker_trees_size_mode.py [--quick]

Reads the cached experience of the shipped 5-Option tree ChoiceMaker (`stdlib/documented.jst`'s
readme_trees: FriedmanSchuster, Mohammed, RandomTrees, PatilSingh, FletcherIslam; metafeatures
size, n_attributes, branching, n_classes, epsilon; mf_share 0.1) through the engine's own loader,
which computes nothing: run `jostle train --all` first (its 5-Option tree piece takes about ten
minutes on 2 cores), or the script exits with one line. Its "measured" mode measures only the
noisy size, at 10% of epsilon. The choosers below are compared by leave-one-group-out regret
(`model.choice_regret`, the engine's), all scored on the "public"-mode errors (the Option got the
whole budget; a 1% size costs the Option about nothing, which if anything favours the size
choosers):

  a   public features (epsilon, n_attributes, branching, n_classes)
  b10 a + the noisy size of the same (task, epsilon, rep)'s "measured" row (10% of epsilon)
  b1  a + a noisy size simulated at 1% of epsilon (rows + two-sided geometric(0.01 eps))
  c   a + the exact size: the upper bound of what size can give
  d   the best fixed Option per epsilon; d0 over all epsilons (what the shipped model keeps)
  e   the oracle (regret 1)

The meta-models are the engine's `make_model` kinds (one core, fixed seeds); intervals are 95%
bootstrap intervals over held-out groups. The corpus is public (`tree_corpus()`), not the tables
`benchmarks/trees.py` reports on, so nothing here tunes on them. Writes
benchmarks/results/choicemaker_trees_size_mode[_quick].json and .png.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from jostle.choicemaker import families
from jostle.choicemaker.experience import experience_table
from jostle.choicemaker.model import choice_regret, group_folds, make_model, training_matrix
from jostle.learners.trees.task import TreeGrid

START = time.perf_counter()
RESULTS = Path(__file__).resolve().parent / "results"
OPTIONS = ["FriedmanSchuster", "Mohammed", "RandomTrees", "PatilSingh", "FletcherIslam"]
METAFEATURES = ["size", "n_attributes", "branching", "n_classes", "epsilon"]
MF_SHARE = 0.1  # the share the cached 5-Option experience was computed with
PUBLIC = ["epsilon", "n_attributes", "branching", "n_classes"]
KINDS = ["forest_regret", "forest_log_error"]
B = 2000  # bootstrap draws (--quick: 400)
SIM_SEED = 12345
BOOT_SEED = 0


def load() -> pd.DataFrame:
    family = families.get("trees")
    options = [family.options()[n] for n in OPTIONS]
    metafeatures = [family.metafeatures()[n] for n in METAFEATURES]

    def refuse(pieces: int) -> None:
        raise SystemExit(f"choicemaker_trees_size_mode.py: {pieces} pieces of the 5-Option tree experience are not "
                         "cached; run `jostle train --all` first (this analysis computes nothing)")

    return experience_table(family, options, metafeatures, family.default_corpus(options), TreeGrid(),
                            MF_SHARE, n_jobs=1, progress=False, before_training=refuse)


def two_sided_geometric(eps: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """P(k) ~ exp(-eps |k|): difference of two iid geometric variables with p = 1 - exp(-eps)."""
    p = -np.expm1(-eps)
    return rng.geometric(p) - rng.geometric(p)


def geometric_sd(eps: np.ndarray) -> np.ndarray:
    q = np.exp(-eps)
    return np.sqrt(2 * q) / (1 - q)


def variants(table: pd.DataFrame) -> dict[str, tuple[pd.DataFrame, list[str]]]:
    public = table[table["mode"] == "public"].drop(columns=["mf_size"])
    measured = table[table["mode"] == "measured"]
    noisy = measured.groupby(["task", "epsilon", "rep"], observed=True)["mf_size"].first().rename("mf_size")
    b10 = public.merge(noisy.reset_index(), on=["task", "epsilon", "rep"], how="left", validate="many_to_one")
    assert b10["mf_size"].notna().all()
    # b1: one simulated 1%-share size per (task, epsilon, rep), shared by its five Option rows
    keys = public[["task", "epsilon", "rep", "rows"]].drop_duplicates().sort_values(["task", "epsilon", "rep"])
    rng = np.random.default_rng(SIM_SEED)
    keys["mf_size"] = np.maximum(keys["rows"] + two_sided_geometric(0.01 * keys["epsilon"].to_numpy(), rng), 1.0)
    b1 = public.merge(keys.drop(columns="rows"), on=["task", "epsilon", "rep"], how="left", validate="many_to_one")
    c = public.assign(mf_size=public["rows"].astype(float))
    size = PUBLIC + ["size"]
    return {"a": (public, PUBLIC), "b10": (b10, size), "b1": (b1, size), "c": (c, size)}


def matrix(frame: pd.DataFrame, features: list[str]):
    family = families.get("trees")
    return training_matrix(frame, features, OPTIONS, list(family.config_columns), family.meta_input_products,
                           family.group_column, family.regret_measure)


def per_config(data, chosen: np.ndarray) -> pd.DataFrame:
    """`model.choice_regret` plus each configuration's epsilon."""
    regret = choice_regret(data, chosen)
    eps = pd.Series(data.X[:, data.features.index("epsilon")]).groupby(data.config).first()
    return regret.assign(epsilon=eps.loc[regret.index].to_numpy())


def lodo_choices(data, kind: str) -> np.ndarray:
    chosen = np.empty(len(data.X), dtype=int)
    for held_out in group_folds(data.groups):
        model = make_model(kind, 1).fit(data.rows(~held_out))
        chosen[held_out] = model.choose(data.X[held_out])
    return chosen


def lodo_best_fixed_per_epsilon(data) -> np.ndarray:
    eps = data.X[:, data.features.index("epsilon")]
    chosen = np.empty(len(data.X), dtype=int)
    for held_out in group_folds(data.groups):
        for e in np.unique(eps):
            train, test = ~held_out & (eps == e), held_out & (eps == e)
            if test.any():
                chosen[test] = make_model("best_fixed", 1).fit(data.rows(train)).choose(data.X[test])
    return chosen


def bootstrap(frame: pd.DataFrame, column: str, rng_seed: int = BOOT_SEED) -> tuple[float, float, float]:
    """Mean over configurations and a 95% percentile interval, resampling whole groups."""
    by_group = frame.groupby("group")[column].agg(["sum", "count"])
    sums, counts = by_group["sum"].to_numpy(), by_group["count"].to_numpy()
    rng = np.random.default_rng(rng_seed)
    draws = rng.integers(0, len(sums), size=(B, len(sums)))
    means = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    return float(sums.sum() / counts.sum()), float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def main(argv: list[str] | None = None) -> None:
    global B, KINDS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one meta-model kind and 400 bootstrap draws")
    parser.add_argument("--out", type=Path, default=None, help="the JSON to write (a PNG beside it)")
    args = parser.parse_args(argv)
    if args.quick:
        B, KINDS = 400, KINDS[:1]
    out = args.out or RESULTS / f"choicemaker_trees_size_mode{'_quick' if args.quick else ''}.json"
    table = load()
    print(f"experience: {table.shape}, modes {sorted(table['mode'].unique())}, "
          f"epsilons {sorted(table['epsilon'].unique())}, groups {table['group'].nunique()}, "
          f"tasks {table['task'].nunique()}, reps {table['rep'].nunique()}")
    results: dict = {"shape": list(table.shape), "modes": sorted(table["mode"].unique()),
                     "epsilons": [float(e) for e in sorted(table["epsilon"].unique())],
                     "groups": int(table["group"].nunique()), "tasks": int(table["task"].nunique())}

    # --- noise of the size metafeature -------------------------------------------------------
    measured = table[(table["mode"] == "measured")].drop_duplicates(["task", "epsilon", "rep"])
    share = float(np.median(1 - measured["option_epsilon"] / measured["epsilon"]))
    noise_rows = []
    for e, part in measured.groupby("epsilon"):
        err = part["mf_size"] - part["rows"]
        rel = (err.abs() / part["rows"])
        noise_rows.append({"epsilon": e, "size_eps_measured": share * e,
                           "sd_theory_10pct": float(geometric_sd(np.array(share * e))),
                           "sd_empirical_10pct": float(err.std()),
                           "median_rel_abs_err_10pct": float(rel.median()),
                           "size_eps_1pct": 0.01 * e,
                           "sd_theory_1pct": float(geometric_sd(np.array(0.01 * e))),
                           "sd_theory_1pct_over_median_rows": float(geometric_sd(np.array(0.01 * e)) / table["rows"].median())})
    noise = pd.DataFrame(noise_rows)
    print(f"share of eps spent on size in 'measured' mode: {share:.3f}; median rows {table['rows'].median():.0f}")
    print(noise.round(4).to_string(index=False))
    results["size_share_measured"] = share
    results["rows_quantiles"] = {q: float(table["rows"].quantile(q)) for q in (0.1, 0.25, 0.5, 0.75, 0.9)}
    results["noise"] = noise.to_dict("records")

    # --- choosers ------------------------------------------------------------------------------
    frames: dict[str, pd.DataFrame] = {}
    base_errors = None
    for name, (frame, features) in variants(table).items():
        data = matrix(frame, features)
        if base_errors is None:
            base_errors = data.errors
            base = data
            frames["d0 best fixed (all eps)"] = per_config(data, lodo_choices(data, "best_fixed"))
            frames["d best fixed per eps"] = per_config(data, lodo_best_fixed_per_epsilon(data))
        assert np.array_equal(data.errors, base_errors)  # same rows, same order: choosers are paired
        for kind in KINDS:
            t0 = time.perf_counter()
            frames[f"{name} {kind}"] = per_config(data, lodo_choices(data, kind))
            print(f"  {name} {kind}: {frames[f'{name} {kind}']['regret'].mean():.4f} ({time.perf_counter() - t0:.0f}s)")
    oracle = per_config(base, base.errors.argmin(axis=1))  # per-run oracle (<= 1), for reference
    frames["e oracle (per config)"] = frames["a forest_regret"].assign(regret=1.0)
    frames["e' per-run oracle"] = oracle

    rows = []
    for name, frame in frames.items():
        row = {"chooser": name}
        row["all"] = bootstrap(frame, "regret")
        for e, part in frame.groupby("epsilon"):
            row[f"{e:g}"] = bootstrap(part, "regret")
        rows.append(row)
    summary = pd.DataFrame(rows)
    results["regret"] = summary.to_dict("records")

    diffs = []
    for kind in KINDS:
        for other in ("b10", "b1", "c"):
            d = frames[f"{other} {kind}"].assign(diff=frames[f"{other} {kind}"]["regret"] - frames[f"a {kind}"]["regret"])
            row = {"difference": f"{other} - a ({kind})", "all": bootstrap(d, "diff")}
            for e, part in d.groupby("epsilon"):
                row[f"{e:g}"] = bootstrap(part, "diff")
            diffs.append(row)
        for other in ("b10", "b1", "c", "a"):
            d = frames[f"{other} {kind}"].assign(diff=frames[f"{other} {kind}"]["regret"] - frames["d0 best fixed (all eps)"]["regret"])
            row = {"difference": f"{other} - d0 ({kind})", "all": bootstrap(d, "diff")}
            for e, part in d.groupby("epsilon"):
                row[f"{e:g}"] = bootstrap(part, "diff")
            diffs.append(row)
    results["differences"] = diffs

    def fmt(cell):
        return f"{cell[0]:.3f} [{cell[1]:.3f}, {cell[2]:.3f}]"

    def fmt_diff(cell):
        return f"{cell[0]:+.4f} [{cell[1]:+.4f}, {cell[2]:+.4f}]"

    pd.set_option("display.width", 250)
    print("\nmean regret [95% group-bootstrap interval]")
    print(summary.set_index("chooser").map(fmt).to_string())
    print("\npaired differences of regret")
    print(pd.DataFrame(diffs).set_index("difference").map(fmt_diff).to_string())
    results["seconds"] = time.perf_counter() - START
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1, default=float))
    plot(summary, out.with_suffix(".png"))
    print(f"\nruntime {results['seconds']:.0f} s -> {out}")


def plot(summary: pd.DataFrame, path: Path) -> None:
    """Mean regret of each chooser with its 95% interval, overall (a horizontal bar per chooser)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = summary[~summary["chooser"].str.startswith("e")]
    means = np.array([cell[0] for cell in rows["all"]])
    lows = means - np.array([cell[1] for cell in rows["all"]])
    highs = np.array([cell[2] for cell in rows["all"]]) - means
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.2))
    ax.barh(range(len(rows)), means - 1, left=1, xerr=[lows, highs], color="tab:blue", alpha=0.7, capsize=3)
    ax.set_yticks(range(len(rows)), rows["chooser"])
    ax.invert_yaxis()
    ax.axvline(1, color="black", linewidth=0.8)
    ax.set_xlabel("mean regret, leave one group out (1 = the oracle); 95% bootstrap interval over groups")
    ax.set_title("5-Option tree ChoiceMaker: does measuring the size pay?")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
