"""DP tree-based redescription mining (Mihelčić and Miettinen 2023, section 5): the paper's protocol.

    python benchmarks/redescription.py [--quick] [--dataset FILE:COLS|COLS]... [--sizes N,...]
                                       [--data DIR] [--runs R1,R01,R001] [--m M] [--no-uci]
                                       [--baselines SplitT,LayeredT,ReReMi|none] [--skip-timing]
                                       [--out PATH]

Data (all public):
  * planted   `planted.planted_two_views(n, seed=n)` (3 planted redescriptions, 4 noise attributes
              per view, 5% flips, numeric attributes on ten public bins of [0, 100)), one data set
              per size; default sizes 1,200 (the paper's NPAS), 7,200, 28,800, 46,000 (MIMIC-III)
              and 115,200 (CMS-2-16), `--sizes` to change them;
  * UCI       two-view splits of the UCI tables in the data folder (`--data DIR`, else $JOSTLE_DATA,
              else ../shared/datasets): `DEFAULT_DATASETS`; `--dataset FILE:COLS|COLS` (repeatable)
              takes any CSV under the data folder with its two views' columns separated by `|`,
              e.g. `uci/nursery.csv:parents,has_nurs,form|children,housing,finance,social,health`.
              Public declarations (`declare_column`): a column is numeric when every value is a
              number and it has more than 12 distinct values; its public bins are 10 equal-width
              bins on its DECLARED RANGE, [min, max] of the public file (these tables are public:
              the range stands for what a curator would declare; a private table's range is
              declared, never read), never Freedman-Diaconis on private data. Other columns are
              categorical, with the file's values as the declared domain (UCI documents them).

Miners (`settings_for`), with m = 4 (`--m`; the paper's "InTr 4 on small data"), depth 4 and
min_support 10, or 100 on data of 10,000 entities or more (the paper's public "small or large"):
AltExpM and AltMCMC non-robust (InTr = 1, RMIter = m) and stable (InTr = m, RMIter = 1);
MCMCTreePair with omega 0.1 (the paper's standard) and 0.5 ("balanced"), InTr = m. Each run
gets its own exact noise stream (`Randomness(seed)`, seeded for reproducibility) and a charge
recorder; every run's charges are checked to add to exactly its epsilon.

Protocol (per data set and miner): 10 runs at epsilon 1.0, 10 at 0.1, 100 at 0.01, pooled per
budget (`--runs` changes the counts; --quick: 2, 2, 4 on sizes 1,200 and 46,000 and one UCI
split, ReReMi up to 20,000 entities). Per (data set, miner, budget): runs that release no kept
(unpruned) redescription; the
share of the kept ("pruned set" in the paper: what survives pruning) whose TRUE p-value is below
0.01 (Wilson 95% interval); the median true Jaccard (95% order-statistic interval); the median
|noisy - true Jaccard|; Pearson and Spearman correlations of noisy and true Jaccard; seconds.
Pairwise one-sided Mann-Whitney tests of the true Jaccard between miners, and per miner the
trend of |noisy - true| from the smallest to the largest planted size.

Baselines (`redescription_clired.py`): python-clired's SplitT, LayeredT and ReReMi, once per
data set, on the views with numeric attributes replaced by their public bin (the information
the DP miners get; on raw values ReReMi's initial pair search did not finish in 150 s on 1,000
entities), scored with the same formulas. Findings: `redescription_findings.py`.

Writes benchmarks/results/redescription.json (redescription_quick.json with --quick; --out PATH
elsewhere) and PNGs beside it: <stem>.png (share significant and median true Jaccard against
size, per budget) and <stem>_scatter.png (noisy against true Jaccard at epsilon 1).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import redescription_clired as clired  # noqa: E402
from benchmark_data import UCI, data_root, fail, missing_data_line  # noqa: E402
from redescription_findings import findings, plot_scatter, plot_sizes  # noqa: E402
from jostle.learners.redescription import algorithms, planted  # noqa: E402
from jostle.learners.redescription.algorithms import MinerSettings  # noqa: E402
from jostle.learners.redescription.queries import true_statistics  # noqa: E402
from jostle.learners.redescription.views import TwoViews, ViewSchema, categorical, encode_views, \
    equal_width  # noqa: E402
from jostle.privacy.noise import Randomness  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
SIZES = (1200, 7200, 28800, 46000, 115200)
QUICK_SIZES = (1200, 46000)
BUDGETS = (Fraction(1), Fraction(1, 10), Fraction(1, 100))
RUNS = (10, 10, 100)
QUICK_RUNS = (2, 2, 4)
LARGE = 10_000          # data of at least this many entities use min_support 100 (public size class)
NUMERIC_BINS = 10
MAX_CATEGORIES = 12     # more distinct numbers than this: a numeric column
TIMING_SIZE = 115_200
TIMING_LIMIT = 15 * 60.0
DEFAULT_DATASETS = (
    "uci/contraceptive.csv:wife_age,wife_education,husband_education,children_born,wife_religion"
    "|wife_working,husband_occupation,standard_of_living,media_exposure,contraceptive_method",
    "uci/hiv1_protease_schilling.csv:p1,p2,p3,p4|p5,p6,p7,p8,cleaved",
    "uci/mushroom.csv:cap-shape,cap-surface,cap-color,bruises,odor,gill-attachment,gill-spacing,"
    "gill-size,gill-color|stalk-shape,stalk-root,stalk-surface-above-ring,stalk-surface-below-ring,"
    "stalk-color-above-ring,stalk-color-below-ring,veil-color,ring-number,ring-type,"
    "spore-print-color,population,habitat,edibility",
    "uci/nursery.csv:parents,has_nurs,form,children|housing,finance,social,health,class",
)
QUICK_DATASETS = DEFAULT_DATASETS[:1]


# ------------------------------------------------------------------------------ data
class Dataset:
    """One two-view data set: the coded views, the raw frames (for clired) and how it was made."""

    def __init__(self, name: str, views: TwoViews, left: Any, right: Any, kind: str, note: str) -> None:
        self.name, self.views, self.left, self.right = name, views, left, right
        self.kind, self.note = kind, note

    @property
    def n(self) -> int:
        return self.views.n_entities

    def binned(self) -> tuple[Any, Any]:
        """Both views with every numeric attribute replaced by its public bin (clired's input)."""
        out = []
        for view, frame in ((0, self.left), (1, self.right)):
            frame = frame[list(self.views.schemas[view].names)].copy()
            for index, attribute in enumerate(self.views.schemas[view].attributes):
                if attribute.kind == "numeric":
                    frame[attribute.name] = self.views.codes[view][:, index]
                else:
                    frame[attribute.name] = frame[attribute.name].astype(str)
            out.append(frame)
        return out[0], out[1]


def declare_column(name: str, column: Any) -> tuple[Any, str]:
    """The public declaration of a column of a public table (module docstring) and how it was made."""
    import pandas as pd

    values = column.dropna()
    numbers = pd.to_numeric(values, errors="coerce")
    if len(values) and numbers.notna().all() and numbers.nunique() > MAX_CATEGORIES:
        low, high = float(numbers.min()), float(numbers.max())
        return (equal_width(name, low, high if high > low else low + 1, NUMERIC_BINS),
                f"{name}: numeric, {NUMERIC_BINS} equal-width bins on [{low:g}, {high:g}]")
    domain = sorted(values.unique().tolist(), key=str)
    return categorical(name, domain), f"{name}: categorical, {len(domain)} values"


def parse_dataset(spec: str) -> tuple[str, list[str], list[str]]:
    """FILE:COLS|COLS -> (file, left columns, right columns)."""
    if ":" not in spec or "|" not in spec.split(":", 1)[1]:
        raise argparse.ArgumentTypeError(f"--dataset wants FILE:COLS|COLS, got {spec!r}")
    path, columns = spec.split(":", 1)
    left, right = ([c.strip() for c in side.split(",") if c.strip()] for side in columns.split("|", 1))
    if not left or not right:
        raise argparse.ArgumentTypeError(f"--dataset {spec!r}: both views need at least one column")
    return path, left, right


def load_table(folder: Path, spec: str, origin: str) -> Dataset:
    """A two-view split of a public CSV under the data folder."""
    import pandas as pd

    path, left_columns, right_columns = parse_dataset(spec)
    # FILE is relative to the data folder; "uci/x.csv" also resolves when the folder is uci/ itself
    candidates = [folder / path, folder / UCI.folder / path, folder / Path(path).name]
    file = next((c for c in candidates if c.is_file()), None)
    if file is None:
        fail(missing_data_line("redescription.py", UCI, [path], folder, origin))
    frame = pd.read_csv(file, keep_default_na=True)
    unknown = [c for c in left_columns + right_columns if c not in frame.columns]
    if unknown:
        raise SystemExit(f"redescription.py: {path} has no column(s) {unknown}; it has {list(frame.columns)}")
    schemas, notes = [], []
    for view, columns in (("left", left_columns), ("right", right_columns)):
        declared = [declare_column(c, frame[c]) for c in columns]
        schemas.append(ViewSchema(view, tuple(d[0] for d in declared)))
        notes += [d[1] for d in declared]
    left, right = frame[left_columns].reset_index(drop=True), frame[right_columns].reset_index(drop=True)
    views = encode_views(left, right, schemas)
    name = f"{Path(path).stem} ({len(left_columns)}|{len(right_columns)})"
    return Dataset(name, views, left, right, "uci", "; ".join(notes))


def planted_dataset(size: int) -> Dataset:
    task = planted.planted_two_views(size, seed=size)
    left, right = task.left.drop(columns="id"), task.right.drop(columns="id")
    truths = [f"{q.text(task.views.schemas[0])} <-> {r.text(task.views.schemas[1])}" for q, r in task.truths]
    note = task.name + "; truths: " + "; ".join(truths)
    return Dataset(f"planted {size}", task.views, left, right, "planted", note)


# ------------------------------------------------------------------------------ miners and runs
def settings_for(m: int, size: int) -> dict[str, MinerSettings]:
    """The six miners of the paper's comparison (module docstring), with the public min_support."""
    base = {"AltExpM non-robust": algorithms.non_robust("AltExpM", m),
            "AltExpM stable": algorithms.stable("AltExpM", m),
            "AltMCMC non-robust": algorithms.non_robust("AltMCMC", m),
            "AltMCMC stable": algorithms.stable("AltMCMC", m),
            "MCMCTreePair omega 0.1": algorithms.non_robust("MCMCTreePair", m, omega=Fraction(1, 10)),
            "MCMCTreePair omega 0.5": algorithms.non_robust("MCMCTreePair", m, omega=Fraction(1, 2))}
    support = 100 if size >= LARGE else 10
    return {name: algorithms.with_constraints(s, min_support=support) for name, s in base.items()}


class Charges:
    """Records a run's charges (exact Fractions)."""

    def __init__(self) -> None:
        self.total = Fraction(0)
        self.count = 0

    def __call__(self, epsilon: Fraction, description: str) -> None:
        self.total += Fraction(epsilon)
        self.count += 1


def run_once(data: Dataset, settings: MinerSettings, epsilon: Fraction, seed: int) -> dict[str, Any]:
    """One private run and the true statistics of what it kept."""
    charges = Charges()
    start = time.perf_counter()
    result = algorithms.mine(data.views, settings, epsilon, noise=Randomness(seed=seed), charge=charges)
    seconds = time.perf_counter() - start
    if charges.total != epsilon:
        raise AssertionError(f"{settings.label} charged {charges.total} for a run at epsilon {epsilon}")
    kept = result.kept()
    truths = [true_statistics(red, data.views) for red in kept]
    return {"seconds": seconds, "released": len(result), "kept": len(kept), "charges": charges.count,
            "true_jaccard": [t["jaccard"] for t in truths], "true_pvalue": [t["pvalue"] for t in truths],
            "noisy_jaccard": [float(r.noisy_jaccard) for r in kept],
            "noisy_support": [float(r.noisy_support) for r in kept]}


def wilson(k: int, n: int) -> dict[str, float]:
    """k / n with its Wilson 95% interval (NaN when n = 0)."""
    if n == 0:
        return {"share": float("nan"), "low": float("nan"), "high": float("nan"), "k": 0, "n": 0}
    z, p = 1.959964, k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return {"share": p, "low": float(centre - half), "high": float(centre + half), "k": k, "n": n}


def median_interval(values: np.ndarray) -> dict[str, float]:
    """The median and its distribution-free 95% interval (order statistics of Binomial(n, 1/2))."""
    from scipy.stats import binom

    n = len(values)
    if n == 0:
        return {"median": float("nan"), "low": float("nan"), "high": float("nan"), "n": 0}
    ordered = np.sort(values)
    low = int(binom.ppf(0.025, n, 0.5))
    high = min(int(n - 1 - low), n - 1)
    return {"median": float(np.median(values)), "low": float(ordered[max(low - 1, 0)]),
            "high": float(ordered[high]), "n": int(n)}


def correlations(noisy: np.ndarray, true: np.ndarray) -> dict[str, float]:
    from scipy.stats import pearsonr, spearmanr

    if len(noisy) < 3 or np.ptp(noisy) == 0 or np.ptp(true) == 0:
        return {"pearson": float("nan"), "pearson_p": float("nan"), "spearman": float("nan"), "n": len(noisy)}
    r, p = pearsonr(noisy, true)
    return {"pearson": float(r), "pearson_p": float(p), "spearman": float(spearmanr(noisy, true)[0]),
            "n": int(len(noisy))}


def pooled(runs: list[dict[str, Any]], key: str) -> np.ndarray:
    return np.asarray([v for run in runs for v in run[key]], dtype=float)


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The protocol's measures for one (data set, miner, budget), pooled over its runs."""
    true_j, noisy_j = pooled(runs, "true_jaccard"), pooled(runs, "noisy_jaccard")
    true_p = pooled(runs, "true_pvalue")
    error = np.abs(noisy_j - true_j)
    return {"runs": len(runs), "runs_without_redescription": sum(run["kept"] == 0 for run in runs),
            "runs_releasing_nothing": sum(run["released"] == 0 for run in runs),
            "kept": int(len(true_j)), "released": int(sum(run["released"] for run in runs)),
            "significant": wilson(int(np.sum(true_p < 0.01)), len(true_p)),
            "true_jaccard": median_interval(true_j),
            "abs_error": {"median": float(np.median(error)) if len(error) else float("nan"),
                          "mean": float(error.mean()) if len(error) else float("nan")},
            "correlation": correlations(noisy_j, true_j),
            "seconds": {"mean": float(np.mean([r["seconds"] for r in runs])),
                        "max": float(np.max([r["seconds"] for r in runs]))},
            "min_kept_noisy_support": float(min((s for r in runs for s in r["noisy_support"]),
                                                default=float("nan")))}


def mann_whitney(a: np.ndarray, b: np.ndarray, alternative: str = "greater") -> float:
    from scipy.stats import mannwhitneyu

    if len(a) == 0 or len(b) == 0:
        return float("nan")
    return float(mannwhitneyu(a, b, alternative=alternative).pvalue)


def run_dataset(data: Dataset, config: dict[str, Any], key: int,
                log: Callable[[str], None]) -> dict[str, Any]:
    """The protocol on one data set: every miner and budget; pooled arrays kept for tests and plots."""
    out: dict[str, Any] = {"n": data.n, "kind": data.kind, "note": data.note, "miners": {},
                           "labels": {}, "mann_whitney_greater": {}}
    arrays: dict[str, dict[str, dict[str, np.ndarray]]] = {}
    for index, (name, settings) in enumerate(settings_for(config["m"], data.n).items()):
        out["labels"][name] = settings.label
        out["miners"][name] = {}
        arrays[name] = {}
        for budget, runs_at in zip(BUDGETS, config["runs"]):
            runs = [run_once(data, settings, budget, int(np.random.SeedSequence(
                [key, index, budget.denominator, r]).generate_state(1)[0])) for r in range(runs_at)]
            out["miners"][name][str(float(budget))] = summarise(runs)
            arrays[name][str(float(budget))] = {k: pooled(runs, k) for k in ("true_jaccard", "noisy_jaccard")}
        summary = out["miners"][name]
        log(f"  {name:24s} " + "  ".join(
            f"eps {b}: kept {s['kept']:5d} ({s['runs_without_redescription']}/{s['runs']} empty), "
            f"sig {s['significant']['share']:.2f}, J {s['true_jaccard']['median']:.2f}"
            for b, s in summary.items())
            + f"  [{sum(s['seconds']['mean'] * s['runs'] for s in summary.values()):.0f} s]")
    for budget in (str(float(b)) for b in BUDGETS):
        out["mann_whitney_greater"][budget] = {
            a: {b: mann_whitney(arrays[a][budget]["true_jaccard"], arrays[b][budget]["true_jaccard"])
                for b in arrays if b != a} for a in arrays}
    out["_arrays"] = arrays
    return out


def agreement_trend(results: dict[str, Any]) -> dict[str, Any]:
    """Per miner and budget on the planted sizes: |noisy - true Jaccard| and the correlation by
    size, and one-sided Mann-Whitney tests that the largest size's errors are smaller than the
    smallest size's and than those of the smallest size that kept anything."""
    planted_names = sorted((n for n, r in results.items() if r["kind"] == "planted"),
                           key=lambda n: results[n]["n"])
    out: dict[str, Any] = {}
    if len(planted_names) < 2:
        return out
    for miner in results[planted_names[0]]["miners"]:
        out[miner] = {}
        for budget in results[planted_names[0]]["miners"][miner]:
            errors = [np.abs(results[n]["_arrays"][miner][budget]["noisy_jaccard"] -
                             results[n]["_arrays"][miner][budget]["true_jaccard"]) for n in planted_names]
            out[miner][budget] = {
                "sizes": [results[n]["n"] for n in planted_names],
                "median_abs_error": [float(np.median(e)) if len(e) else float("nan") for e in errors],
                "pearson": [results[n]["miners"][miner][budget]["correlation"]["pearson"]
                            for n in planted_names],
                "kept": [len(e) for e in errors],
                "largest_smaller_p": mann_whitney(errors[-1], errors[0], "less")}
            first = next((i for i, e in enumerate(errors) if len(e)), len(errors) - 1)
            out[miner][budget]["first_kept_size"] = results[planted_names[first]]["n"]
            out[miner][budget]["first_kept_p"] = mann_whitney(errors[-1], errors[first], "less")
    return out


def run_baselines(data: Dataset, config: dict[str, Any], dp: dict[str, Any],
                  log: Callable[[str], None]) -> dict[str, Any]:
    """python-clired's miners on the binned views; the paper's support filter (the smallest noisy
    support MCMCTreePair omega 0.1 kept at epsilon 1) applied alongside."""
    if not config["baselines"]:
        return {}
    left, right = data.binned()
    floor = dp["miners"]["MCMCTreePair omega 0.1"]["1.0"]["min_kept_noisy_support"]
    out: dict[str, Any] = {"input": "numeric attributes replaced by their public bin", "support_floor": floor}
    for algorithm in config["baselines"]:
        if algorithm == "ReReMi" and data.n > config["reremi_max"]:
            out[algorithm] = {"skipped": f"more than {config['reremi_max']} entities (--reremi-max)"}
            continue
        try:
            mined = clired.mine(left, right, algorithm, min_support=100 if data.n >= LARGE else 10)
        except clired.CliredUnavailable as error:
            out[algorithm] = {"skipped": str(error)}
            log(f"  {algorithm}: skipped ({error})")
            continue
        except Exception as error:  # noqa: BLE001  (a crash inside clired is a baseline's result)
            out[algorithm] = {"failed": f"{type(error).__name__}: {error} (inside python-clired)"}
            log(f"  {algorithm}: failed inside python-clired ({type(error).__name__}: {error})")
            continue
        reds = mined["redescriptions"]
        entry = {"seconds": mined["seconds"],
                 "settings": {k: v for k, v in mined["settings"].items() if k != "logfile"}}
        for label, chosen in (("all", reds), ("support_filtered", [r for r in reds if not r["support"] < floor])):
            true_j = np.asarray([r["jaccard"] for r in chosen])
            entry[label] = {"count": len(chosen), "true_jaccard": median_interval(true_j),
                            "significant": wilson(sum(r["pvalue"] < 0.01 for r in chosen), len(chosen))}
        entry["examples"] = [f"{r['left']} <-> {r['right']} (J {r['jaccard']:.3f}, support {r['support']})"
                             for r in reds[:3]]
        out[algorithm] = entry
        log(f"  {algorithm}: {len(reds)} redescriptions, median J {entry['all']['true_jaccard']['median']:.2f}, "
            f"significant {entry['all']['significant']['share']:.2f} [{mined['seconds']:.1f} s]")
    return out


def timing(m: int) -> dict[str, Any]:
    """One run of every miner at epsilon 1 on 115,200 planted entities (the paper's largest)."""
    start = time.perf_counter()
    data = planted_dataset(TIMING_SIZE)
    out: dict[str, Any] = {"entities": TIMING_SIZE, "limit_seconds": TIMING_LIMIT,
                           "generate_and_encode_seconds": time.perf_counter() - start, "miners": {}}
    for index, (name, settings) in enumerate(settings_for(m, TIMING_SIZE).items()):
        out["miners"][name] = run_once(data, settings, Fraction(1), 99_000 + index)["seconds"]
    out["under_limit"] = all(v <= TIMING_LIMIT for v in out["miners"].values())
    return out


# ------------------------------------------------------------------------------ main
def parse_ints(value: str, what: str) -> tuple[int, ...]:
    try:
        numbers = tuple(int(part) for part in value.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what} wants integers separated by commas, got {value!r}")
    if not numbers or min(numbers) < 1:
        raise argparse.ArgumentTypeError(f"{what} wants positive integers")
    return numbers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="sizes 1,200 and 46,000, one UCI split, runs 2,2,4 (a few minutes)")
    parser.add_argument("--dataset", action="append", type=str,
                        help="FILE:COLS|COLS under the data folder (repeatable)")
    parser.add_argument("--sizes", type=lambda v: tuple(sorted(set(parse_ints(v, "--sizes")))),
                        help="planted sizes, e.g. 1200,46000")
    parser.add_argument("--data", help="the data folder (default $JOSTLE_DATA, else ../shared/datasets)")
    parser.add_argument("--runs", type=lambda v: parse_ints(v, "--runs"),
                        help="runs at epsilon 1, 0.1, 0.01 (default 10,10,100)")
    parser.add_argument("--m", type=int, default=4,
                        help="InTr of the stable settings and MCMCTreePair, RMIter of the non-robust ones")
    parser.add_argument("--no-uci", action="store_true", help="planted data only")
    parser.add_argument("--baselines", default="SplitT,LayeredT,ReReMi", help="clired miners, or none")
    parser.add_argument("--reremi-max", type=int,
                        help="ReReMi only up to this many entities (default 120,000; --quick 20,000)")
    parser.add_argument("--skip-timing", action="store_true", help="skip the 115,200-entity timing")
    parser.add_argument("--out", type=Path, help="the JSON path (PNGs beside it)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    runs = args.runs or (QUICK_RUNS if args.quick else RUNS)
    if len(runs) != 3:
        parser.error("--runs wants three counts: epsilon 1, 0.1 and 0.01")
    baselines = ([] if args.baselines.lower() == "none"
                 else [b.strip() for b in args.baselines.split(",") if b.strip()])
    if any(b not in clired.ALGORITHMS for b in baselines):
        parser.error(f"--baselines: choose among {', '.join(clired.ALGORITHMS)} or none")
    config: dict[str, Any] = {"quick": args.quick, "m": args.m, "runs": list(runs), "baselines": baselines,
                              "reremi_max": args.reremi_max or (20_000 if args.quick else 120_000),
                              "sizes": list(args.sizes or (QUICK_SIZES if args.quick else SIZES)),
                              "budgets": [str(b) for b in BUDGETS]}

    def log(line: str) -> None:
        print(line, flush=True)

    specs = list(args.dataset or ([] if args.no_uci else (QUICK_DATASETS if args.quick else DEFAULT_DATASETS)))
    datasets: list[Dataset] = [planted_dataset(size) for size in config["sizes"]]
    if specs:
        root, origin = data_root(args.data)
        datasets += [load_table(root, spec, origin) for spec in specs]
    config["datasets"] = [d.name for d in datasets]
    log(f"runs per miner at epsilon 1 / 0.1 / 0.01: {runs}; m = {args.m}; data sets: "
        + ", ".join(f"{d.name} [{d.n}]" for d in datasets) + f"; baselines: {', '.join(baselines) or 'none'}")
    if baselines and clired.available() is None:
        log("python-clired is not installed: baselines skipped (pip install -e '.[bench]')")
        config["baselines"] = baselines = []
    results: dict[str, Any] = {}
    for key, data in enumerate(datasets):
        log(f"{data.name}: {data.n} entities")
        results[data.name] = run_dataset(data, config, 1000 + key, log)
        results[data.name]["baselines"] = run_baselines(data, config, results[data.name], log)
    trend = agreement_trend(results)
    verdicts = findings(results, trend)
    log("Findings:")
    for item in verdicts:
        log(f"  [{item['verdict']}] {item['finding']}: {item['detail']}")
    timed: dict[str, Any] = {"skipped": True}
    if not args.skip_timing:
        timed = timing(args.m)
        log(f"Timing on {TIMING_SIZE} entities at epsilon 1: " + ", ".join(
            f"{k} {v:.1f} s" for k, v in timed["miners"].items()) + f" (limit {TIMING_LIMIT:.0f} s)")
    out = args.out or RESULTS / ("redescription_quick.json" if args.quick else "redescription.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    arrays = {name: result.pop("_arrays") for name, result in results.items()}
    config["seconds"] = time.perf_counter() - started
    config["noise"] = "jostle.privacy.noise.Randomness(seed) per run (exact samplers, seeded for reproducibility)"
    config["min_support"] = f"10, or 100 on data of {LARGE} entities or more"
    config["command"] = "python benchmarks/redescription.py " + " ".join(argv if argv is not None else sys.argv[1:])
    document = {"meta": config, "findings": verdicts, "agreement_trend": trend, "timing": timed,
                "datasets": results}
    out.write_text(json.dumps(document, indent=1, default=float))
    plot_sizes(results, out.with_suffix(".png"))
    plot_scatter(results, arrays, out.with_name(out.stem + "_scatter.png"))
    log(f"wrote {out} and its plots in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
