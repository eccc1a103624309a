"""Which share of epsilon should the histogram ChoiceMaker give its metafeatures? A study on
the generated public corpus (never on DPBench's shapes, which the histogram benchmark reports on).

For each candidate share s and each dimensionality, the profile metafeatures are measured by the
real code path (`jostle.choicemaker.measurement.measure_features`, simulated noise) on every
training input of the generated corpus, and the meta-model kinds are scored by
leave-one-shape-out regret. The Options' errors are those of the experience table at share
0.01 (the Options ran at 0.99 epsilon), rescaled to (1 - s) epsilon by 0.99 / (1 - s): exact
for the data-independent Laplace algorithms, an approximation for the data-dependent ones.
Regret is against the best Option with the WHOLE epsilon (its error at 0.99 epsilon times
0.99), so a larger share pays for itself only if it buys better choices.

Share schedules (issue 27): --floors F1,F2 also scores share(epsilon) = min(cap, max(0.01,
F / epsilon)), the metafeatures getting at least a pure epsilon F (`HistogramFamily.share_floor`);
--with-size adds the noisy size (its own release, so the profile gets half the share). Each row's
Options are rescaled from its own share, and the regret is reported per epsilon too.

Usage: python benchmarks/choicemaker_histograms_share.py [--shapes 16] [--shares 0.005,0.01,0.02,0.05,0.1]
           [--floors 0.0005,0.001] [--cap 0.2] [--with-size] [--output JSON]
Needs the experience of `choicemaker_histograms.py --train-corpus generated --generated-shapes N`
(in the cache; built here otherwise). Results: benchmarks/results/choicemaker_histograms_share.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from typing import Any, Callable

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import choicemaker_histograms as bench  # noqa: E402

from jostle.choicemaker import experience_table  # noqa: E402
from jostle.choicemaker.measurement import measure_features  # noqa: E402
from jostle.choicemaker.model import REGRET_CAP, TrainingMatrix, group_folds, input_matrix, make_model  # noqa: E402
from jostle.learners.histograms.corpus import generated_corpus, rebin  # noqa: E402
from jostle.learners.histograms.family import HistogramFamily  # noqa: E402
from jostle.learners.histograms.metafeatures import BUILTIN_METAFEATURES  # noqa: E402
from jostle.learners.histograms.options import BUILTIN_OPTIONS  # noqa: E402
from jostle.learners.histograms.simulation import FloatSimulationNoise  # noqa: E402
from jostle.learners.histograms.task import _seed, sample_input  # noqa: E402

BASE_SHARE = 0.01
UNRAISED = HistogramFamily(share_floor=0)
"""The family without its floor: the study applies each candidate share itself."""


def share_matrix(experience, corpus, dims: int, share: Any, features: list[str]) -> tuple[TrainingMatrix, np.ndarray]:
    """The training matrix of one dimensionality with the metafeatures measured at `share` (a
    number, or a function of epsilon), and each row's share."""
    sub = experience[experience["dims"] == dims]
    keys = ["shape", "group", "domain", "scale", "epsilon", "rep"]
    wide = sub.pivot_table(index=keys, columns="option", values="error", aggfunc="first").dropna().reset_index()
    options = [c for c in wide.columns if c not in keys]
    shapes = {s.name: s for s in corpus}
    metafeatures = [BUILTIN_METAFEATURES[f] for f in features]
    columns: dict[str, list[float]] = {f: [] for f in features}
    bases: dict = {}
    shares = np.array([share(float(e)) if callable(share) else share for e in wide["epsilon"]], float)
    for row, row_share in zip(wide.itertuples(index=False), shares):
        shape = shapes[row.shape]
        domain = tuple(int(v) for v in row.domain.split("x"))
        if (row.shape, domain) not in bases:
            bases[(row.shape, domain)] = rebin(shape.values, domain)
        x = sample_input(bases[(row.shape, domain)], shape.content_hash(), domain, row.scale, row.rep)
        tag = shape.content_hash()
        noise = FloatSimulationNoise(_seed(tag, domain, row.scale, row.epsilon, row.rep, "share", float(row_share)))
        measured = measure_features(UNRAISED, metafeatures, x, float(row.epsilon), float(row_share), noise)
        for f in features:
            columns[f].append(float(measured.features[f]))
    errors = wide[options].to_numpy(float) * ((1.0 - BASE_SHARE) / (1.0 - shares))[:, None]
    config = wide.groupby(["shape", "domain", "scale", "epsilon"], sort=False).ngroup().to_numpy()
    mean = np.maximum(np.stack([errors[config == c].mean(axis=0) for c in config]), 1e-300)
    regret = np.minimum(mean / mean.min(axis=1, keepdims=True), REGRET_CAP)
    X = input_matrix(columns, features, HistogramFamily.meta_input_products)
    return (TrainingMatrix(X, errors, np.log(mean), regret, config, wide["group"].to_numpy(str), options,
                           features, HistogramFamily.meta_input_products), shares)


def floor_schedule(floor: float, cap: float) -> Callable[[float], float]:
    """share(epsilon) = min(cap, max(BASE_SHARE, floor / epsilon)): the metafeatures get at least
    an absolute epsilon `floor` (so their noise stops growing as epsilon shrinks), up to `cap`."""
    return lambda epsilon: min(cap, max(BASE_SHARE, floor / epsilon))


def whole_budget_regret(kind: str, data: TrainingMatrix, shares: np.ndarray) -> pd.DataFrame:
    """Leave-one-shape-out regret per configuration against the best Option with the WHOLE
    budget (the chosen Option ran at 1 - share; `lodo_regret` with each row's share)."""
    frames = []
    for held_out in group_folds(data.groups):
        model = make_model(kind, 1).fit(data.rows(~held_out))
        test = data.rows(held_out)
        chosen = model.choose(test.X)
        per_row = test.errors[np.arange(len(chosen)), chosen]
        frame = pd.DataFrame({"config": test.config, "chosen": per_row, "share": shares[held_out]})
        frame[test.options] = test.errors
        per_config = frame.groupby("config").mean()
        best = per_config[test.options].min(axis=1)
        frames.append(pd.DataFrame({"config": per_config.index,
                                    "regret": per_config["chosen"] / best / (1.0 - per_config["share"])}))
    return pd.concat(frames, ignore_index=True)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", type=int, default=16)
    parser.add_argument("--shares", default="0.005,0.01,0.02,0.05,0.1")
    parser.add_argument("--floors", default="",
                        help="absolute epsilon floors of share schedules min(cap, max(0.01, floor / epsilon))")
    parser.add_argument("--cap", type=float, default=0.2)
    parser.add_argument("--with-size", action="store_true", help="also measure the noisy size (its own release)")
    parser.add_argument("--kinds", default="forest_regret,blend_regret")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--output", default=str(bench.RESULTS / "choicemaker_histograms_share.json"))
    args = parser.parse_args(argv)
    started = time.time()
    corpus = generated_corpus((1, 2), args.shapes)
    train_grid, _ = bench.grids(False)
    features = list(bench.DEFAULT_BENCH_FEATURES)
    experience = experience_table(list(BUILTIN_OPTIONS.values()), [BUILTIN_METAFEATURES[f] for f in features],
                                  corpus, train_grid, UNRAISED, mf_share=BASE_SHARE, n_jobs=args.n_jobs, progress=False)
    if args.with_size:
        features.append("size")
    candidates: dict[str, Any] = {s: float(s) for s in args.shares.split(",") if s}
    candidates.update({f"floor {f} cap {args.cap}": floor_schedule(float(f), args.cap)
                       for f in args.floors.split(",") if f})
    results: dict = {}
    by_epsilon: dict = {}
    for dims in (1, 2):
        for label, share in candidates.items():
            data, shares = share_matrix(experience, corpus, dims, share, features)
            epsilon_of = pd.Series(0.0, index=np.unique(data.config))
            epsilon_of[data.config] = [float(e) for e in
                                      experience[experience["dims"] == dims].pivot_table(
                                          index=["shape", "group", "domain", "scale", "epsilon", "rep"],
                                          columns="option", values="error", aggfunc="first").dropna()
                                      .reset_index()["epsilon"]]
            for kind in args.kinds.split(","):
                frame = whole_budget_regret(kind, data, shares)
                regret = frame["regret"].to_numpy()
                results.setdefault(f"{dims}D", {}).setdefault(kind, {})[label] = float(regret.mean())
                per_epsilon = frame.groupby(epsilon_of[frame["config"]].to_numpy())["regret"].mean()
                by_epsilon.setdefault(f"{dims}D", {}).setdefault(kind, {})[label] = {
                    str(e): round(float(r), 4) for e, r in per_epsilon.items()}
                print(dims, label, kind, round(float(regret.mean()), 3), by_epsilon[f"{dims}D"][kind][label],
                      flush=True)
    best = {label: min(((s, k) for k, by in kinds.items() for s in by), key=lambda sk: kinds[sk[1]][sk[0]])
            for label, kinds in results.items()}
    summary = {"data": f"generated_corpus((1, 2), {args.shapes}): no DPBench shape", "regret_by_share": results,
               "regret_by_share_and_epsilon": by_epsilon, "features": features,
               "best_share_and_kind": best, "base_share": BASE_SHARE, "wall_seconds": time.time() - started,
               "command": "python benchmarks/choicemaker_histograms_share.py " + " ".join(argv or sys.argv[1:])}
    out = Path(args.output)
    out.write_text(json.dumps(summary, indent=2))
    print(json.dumps(best))
    return summary


if __name__ == "__main__":
    main()
