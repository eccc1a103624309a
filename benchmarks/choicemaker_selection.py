"""Where private selection beats measure-then-choose, and where not (issue 27).

    python benchmarks/choicemaker_selection.py [--quick] [--data DIR]

A ChoiceMaker of the toy family with the `private_score` hook (tests/selection_toy_family.py:
means of numbers in [0, 1], Options `laplace_sum`, `count_and_sum`, `half`) is trained on its
generated corpus; it is then run on HELD-OUT generated tasks (other sizes, guesses and Beta
shapes, other seeds: data the training did not see) at several epsilons, once by
measure-then-choose (the trained design) and once by private selection (forced), both with the
same total budget. Reported per epsilon: the mean absolute error of each and the mean paired
difference (selection minus measured) with a 95% interval (normal approximation over the
held-out runs). No built-in family has the hook yet, so this says nothing about histograms or
trees. `--data DIR` writes the held-out tasks' numbers there as CSV (for inspection) and reads
nothing else. Writes benchmarks/results/choicemaker_selection[_quick].json and .png.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jostle.choicemaker import engine, private_dispatch  # noqa: E402
from jostle.choicemaker.selection import SelectionDecision, default_stop_probability  # noqa: E402
from jostle.privacy.noise import SimulationNoise  # noqa: E402
from tests.selection_toy_family import FAMILY  # noqa: E402
from tests.toy_family import MeanData  # noqa: E402

EPSILONS = (0.05, 0.2, 1.0, 5.0)
HELD_OUT = [(80, 80, 3.0, 3.0), (80, 200, 3.0, 3.0), (300, 300, 0.7, 2.0), (300, 120, 0.7, 2.0),
            (2000, 2000, 2.0, 2.0), (2000, 900, 2.0, 2.0), (40, 40, 1.0, 4.0), (40, 90, 1.0, 4.0)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--data", type=Path, default=None)
    args = parser.parse_args()
    runs = 30 if args.quick else 200
    started = time.time()
    with tempfile.TemporaryDirectory() as cache:
        trained = engine.train(FAMILY, cache_dir=cache, n_jobs=1, progress=False)
    decision = trained.selection_decision(None)
    forced = dataclasses.replace(trained, selection={None: SelectionDecision(
        True, default_stop_probability(len(trained.options)), Fraction(9, 10), np.nan, np.nan, 0)})
    results = []
    for epsilon in EPSILONS:
        differences, measured_errors, selection_errors = [], [], []
        for index, (n, guess, a, b) in enumerate(HELD_OUT):
            for rep in range(runs):
                rng = np.random.default_rng(10_000 + 97 * index + rep)
                values = rng.beta(a, b, n)
                if args.data is not None and rep == 0 and epsilon == EPSILONS[0]:
                    args.data.mkdir(parents=True, exist_ok=True)
                    np.savetxt(args.data / f"heldout_{index}.csv", values, delimiter=",")
                data, truth = MeanData(values, guess), float(values.mean())
                seed = 1_000_000 * index + 1000 * rep + int(epsilon * 100)
                out = []
                for chooser in (trained, forced):
                    result = private_dispatch.dispatch(chooser, data, epsilon, SimulationNoise(seed), None)
                    out.append(abs(float(result.result) - truth))
                measured_errors.append(out[0])
                selection_errors.append(out[1])
                differences.append(out[1] - out[0])
        d = np.array(differences)
        half = 1.96 * d.std(ddof=1) / np.sqrt(len(d))
        results.append({"epsilon": epsilon, "runs": len(d), "measured_mae": float(np.mean(measured_errors)),
                        "selection_mae": float(np.mean(selection_errors)), "difference": float(d.mean()),
                        "difference_ci95": [float(d.mean() - half), float(d.mean() + half)],
                        "verdict": "selection better" if d.mean() + half < 0 else
                        "measured better" if d.mean() - half > 0 else "not separated"})
        print(json.dumps(results[-1]))
    payload = {"command": "python benchmarks/choicemaker_selection.py" + (" --quick" if args.quick else ""),
               "family": "toy_selecting (tests/selection_toy_family.py)", "held_out_tasks": HELD_OUT,
               "training_decision": decision.sentence() if decision else None,
               "seconds": round(time.time() - started, 1), "results": results}
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    stem = "choicemaker_selection" + ("_quick" if args.quick else "")
    (out / f"{stem}.json").write_text(json.dumps(payload, indent=2) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    xs = np.arange(len(results))
    ax.errorbar(xs, [r["difference"] for r in results],
                yerr=[[r["difference"] - r["difference_ci95"][0] for r in results],
                      [r["difference_ci95"][1] - r["difference"] for r in results]], fmt="o", capsize=4)
    ax.axhline(0, color="grey", lw=1)
    ax.set_xticks(xs, [f"eps {r['epsilon']:g}" for r in results])
    ax.set_ylabel("selection MAE - measured MAE (95% CI)")
    ax.set_title("Private selection vs measure-then-choose (held-out toy tasks)\nbelow 0: selection wins")
    fig.tight_layout()
    fig.savefig(out / f"{stem}.png", dpi=110)
    print(f"wrote {out / stem}.json/.png in {payload['seconds']} s")


if __name__ == "__main__":
    main()
