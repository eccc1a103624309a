"""Differentially private ILP on Michalski's trains: the experiments of Zeng et al. (section 6).

    python benchmarks/ilp.py [--quick] [--target THEORY]... [--sizes N,...] [--seeds S]
                             [--epsilon E] [--test-size N] [--k K] [--levels L] [--out PATH]

For each target theory, training size and seed: trains from `trains.generate_trains` labelled by
the target, and 10,000 public test trains (one test set per seed, shared by every target and
size); four methods scored by test accuracy:

  * non-private  `aleph.learn`: Aleph's covering loop and breadth-first reduction by P - N, on
                 real seeds saturated with the default trains modes (k = 32, clauses of at most
                 6 literals) and WITHOUT Aleph's `noise` bound (noise=None, the paper's
                 Algorithm 1: any number of covered negatives is allowed, the score decides);
  * naive        `private.dp_learn(method="naive")` (Algorithm 2 in Algorithm 4): every legal
                 clause of the fake bottom clause up to 6 literals, noise at eps / |L|;
  * relevance    `private.dp_learn(method="relevance", levels=l)` (Algorithm 3 in Algorithm 4),
                 the core's pruning criterion with its defaults (min_positives 0, slack 1);
  * guess        "every train is eastbound" (`private.trivial_theory(rule="all_positive")`:
                 reads nothing, spends nothing); its accuracy is the test set's class balance.

Private runs: epsilon 1 (the paper's) over rounds = the number of the target's clauses (eps /
rounds each); a min_score of 0 (a round's clause is kept when its noisy P' - N' > 0); noise from
`jostle.privacy.noise.Randomness(seed=...)` (the exact samplers, seeded so the benchmark is
reproducible; a release would use the secure source); a charge function that records every
charge, whose sum is checked against epsilon (it is below epsilon exactly when the
relevance-aware reduction pruned a whole level, which then draws and spends nothing).
The fake seed example is `fake.fake_for_target(target, modes, schema, k, seed)`: the target's
literals plus public distractor literals (chosen with the run's public seed) up to k. It stands
for PUBLIC DOMAIN KNOWLEDGE THAT THE TARGET'S LITERALS ARE CANDIDATES: without it no reduction
could learn the target exactly. k = 10 for every target by default (the smallest bound holding
every default target's literals, 9 for four clauses, plus one distractor; one k keeps the
hypothesis space the same across targets). l is chosen before the reported targets are run, on
TUNING targets (`TUNING_TARGETS`, not reported), among 3 and 4 (`--levels` fixes it).

Default targets (public; their class balance is printed and stored):
  3 atoms           the paper's Fig. 1a: `trains.DEFAULT_TARGET` (has_car, short, closed);
  6 atoms           Fig. 1b: has_car, short, shape rectangle, open_car, wheels 2, load circle 1.
                    The generator's dependencies (short cars have 2 wheels; double walls only on
                    short rectangles; long cars are rectangles) leave no one-car clause with more
                    than 5 irreducible atoms: here wheels(C, 2) is implied by short(C), so the
                    shortest equivalent clause has 5 atoms (4 tests on the car against the
                    3-atom target's 2). With l <= 4 the relevance-aware reduction cannot reach
                    it (only 4-literal approximations); the naive one (up to 6 literals) can;
  2 clauses         Fig. 2a: two 3-atom clauses (double & open_car; closed & 3 wheels);
  3, 4 clauses      Fig. 2b's sweep (with the 3-atom and 2-clause targets as 1 and 2 clauses).
The multi-clause targets were chosen, before any learner ran, among the irreducible 3-atom
clauses for a union class balance of 0.40-0.46 (near the 3-atom target's 0.43, so that a
constant guess scores alike on every point of the sweep) and the largest share of trains each
clause covers alone.

Metrics, per run on its test set: accuracy; the paper's error reduction over the guess,
1 - err / err_guess; and the error reduction over the better constant theory (majority class),
1 - err / min(b, 1 - b), which does not favour rare classes: cross-target comparisons (6 atoms
vs 3, 2 clauses vs 6 atoms) use it, because under the paper's metric the empty theory already
scores 1 - b / (1 - b) (0.25 on the 3-atom target, 0.56 on the 6-atom one). Intervals are 95%
t-intervals of the mean over seeds; the paired ones are over per-seed differences.

Findings (each verdict computed from the intervals, never tuned; `findings`):
  1. non-private perfect: every run at >= 1,000 trains has test accuracy 1;
  2. on the 3-atom target, relevance >= naive at every size (the paired difference's interval
     is not entirely below 0) and clearly better (non-overlapping intervals) at >= 2 sizes;
  3. for both reductions on the three main targets, the largest size's accuracy interval lies
     above the smallest's with no significant drop between neighbouring sizes, and above the
     guess's at the largest size;
  4. 6 atoms much harder than 3: the relevance-aware error reduction over the majority class is
     clearly lower on the 6-atom target at every size >= 1,000 (naive reported alongside);
  5. two 3-atom clauses better than one 6-atom clause, same measure, at the two largest sizes;
  6. Fig. 2b: the relevance-aware error reduction over the guess at 4 clauses lies entirely
     below the one at 1 clause, with no significant rise in between, at the largest size (every
     size is reported). A budget-split ablation reruns the 2-4 clause targets with epsilon per
     round as for one clause, to tell the budget split from the smaller clauses.

Writes benchmarks/results/ilp.json (ilp_quick.json with --quick; --out PATH elsewhere), a PNG of
accuracy against training size per target beside it, and <stem>_clauses.png (Fig. 2b).
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

from choicemaker_classification import interval  # noqa: E402  (mean and 95% t-interval)
from ilp_findings import _item, _sizes, findings, text  # noqa: E402  (the paper's findings, verdicts)
from jostle.learners.ilp import aleph, bounds, fake, private, trains  # noqa: E402
from jostle.learners.ilp.modes import TRAIN_MODES, Modes, train_modes  # noqa: E402
from jostle.learners.ilp.relations import RelationalDatabase  # noqa: E402
from jostle.learners.ilp.theory import Theory, accuracy, covers  # noqa: E402
from jostle.privacy.noise import Randomness  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
METHODS = ("nonprivate", "relevance", "naive", "guess")
SIZES = (100, 300, 1000, 3000, 10000, 30000)
QUICK_SIZES = (100, 1000, 10000)

T3 = trains.DEFAULT_TARGET
T6 = ("eastbound(T) :- has_car(T, C), short(C), shape(C, rectangle), open_car(C), "
      "wheels(C, 2), load(C, circle, 1).")
T2x3 = ("eastbound(T) :- has_car(T, C), double(C), open_car(C).\n"
        "eastbound(T) :- has_car(T, C), closed(C), wheels(C, 3).")
SWEEP_3 = ("eastbound(T) :- has_car(T, C), shape(C, u_shaped), load(C, circle, 1).\n"
           "eastbound(T) :- has_car(T, C), shape(C, bucket), load(C, triangle, 1).\n"
           "eastbound(T) :- has_car(T, C), roof(C, flat), wheels(C, 3).")
SWEEP_4 = ("eastbound(T) :- has_car(T, C), roof(C, flat), load(C, circle, 1).\n"
           "eastbound(T) :- has_car(T, C), open_car(C), wheels(C, 3).\n"
           "eastbound(T) :- has_car(T, C), shape(C, bucket), load(C, circle, 1).\n"
           "eastbound(T) :- has_car(T, C), shape(C, u_shaped), load(C, triangle, 1).")
TARGETS = {"3 atoms": T3, "6 atoms": T6, "2 clauses of 3 atoms": T2x3}
SWEEP = {1: "3 atoms", 2: "2 clauses of 3 atoms", 3: "3 clauses of 3 atoms",
         4: "4 clauses of 3 atoms"}
SWEEP_TARGETS = {"3 clauses of 3 atoms": SWEEP_3, "4 clauses of 3 atoms": SWEEP_4}
#: Where l is chosen (never reported as findings): a 3-atom clause and two 3-atom clauses.
TUNING_TARGETS = {
    "tuning: long & flat roof": "eastbound(T) :- has_car(T, C), long(C), roof(C, flat).",
    "tuning: 2 clauses": ("eastbound(T) :- has_car(T, C), shape(C, bucket), load(C, circle, 1).\n"
                          "eastbound(T) :- has_car(T, C), long(C), open_car(C)."),
}
FAKE_NOTE = ("The fake seed example is fake.fake_for_target(target, modes, schema, k, seed): the "
             "target's literals plus public distractors up to k. It stands for public domain "
             "knowledge that the target's literals are candidates.")


# ------------------------------------------------------------------------------ the runs
class Budget:
    """A charge function that records every charge (exact Fractions) of one private run."""

    def __init__(self) -> None:
        self.charges: list[tuple[Fraction, str]] = []

    def __call__(self, epsilon: Fraction, description: str) -> None:
        self.charges.append((Fraction(epsilon), description))

    @property
    def total(self) -> Fraction:
        return sum((epsilon for epsilon, _ in self.charges), Fraction(0))


def refuse(epsilon: Fraction, description: str) -> None:
    """The guess's charge function: it must never be called (the guess spends nothing)."""
    raise AssertionError(f"the guess charged {epsilon} for {description}")


def rounds_of(target: Theory) -> int:
    """Rounds of Algorithm 4: the number of the target's clauses."""
    return len(target.clauses)


class Trains:
    """Unlabelled trains, cached per (seed, size) so every target labels the same trains."""

    def __init__(self) -> None:
        self._cache: dict[tuple[int, int, int], RelationalDatabase] = {}

    def get(self, kind: int, seed: int, size: int, target: Theory) -> RelationalDatabase:
        key = (kind, seed, size)
        if key not in self._cache:
            rng = np.random.default_rng([kind, seed, size])
            self._cache[key] = trains.generate_trains(size, rng, None)
        database = self._cache[key]
        return database.with_labels(covers(target, database))

    def clear(self) -> None:
        self._cache.clear()


def run_once(target: Theory, size: int, seed: int, config: dict[str, Any], data: Trains,
             noise_key: int) -> dict[str, Any]:
    """One run: the four methods on one training set, scored on the seed's test set."""
    train = data.get(1, seed, size, target)
    test = data.get(2, seed, config["test_size"], target)
    modes: Modes = config["modes"]
    epsilon = Fraction(config["epsilon"])
    rounds = rounds_of(target)
    balance = trains.class_balance(test)
    out: dict[str, Any] = {"seed": seed, "size": size, "test_balance": balance,
                           "train_balance": trains.class_balance(train), "accuracy": {},
                           "seconds": {}, "theory": {}, "charged": {}}
    start = time.perf_counter()
    learned = aleph.learn(train, TRAIN_MODES, seed=seed)
    out["seconds"]["nonprivate"] = time.perf_counter() - start
    out["accuracy"]["nonprivate"] = accuracy(learned.theory, test)
    out["theory"]["nonprivate"] = learned.to_prolog()
    bottom = fake.fake_for_target(target, modes, trains.schema(), config["k"], seed)
    for index, method in enumerate(("relevance", "naive")):
        budget = Budget()
        noise = Randomness(seed=int(np.random.SeedSequence([noise_key, size, seed, index])
                                    .generate_state(1)[0]))
        start = time.perf_counter()
        learned = private.dp_learn(train, modes, bottom, epsilon, method=method,
                                   levels=config["levels"], rounds=rounds, noise=noise,
                                   charge=budget)
        out["seconds"][method] = time.perf_counter() - start
        if budget.total > epsilon:
            raise AssertionError(f"{method} charged {budget.total} > epsilon {epsilon}")
        out["charged"][method] = {"total": str(budget.total), "equals_epsilon":
                                  budget.total == epsilon, "charges": len(budget.charges)}
        out["accuracy"][method] = accuracy(learned.theory, test)
        out["theory"][method] = learned.to_prolog()
    guess = private.trivial_theory(train, modes, epsilon, noise=None, charge=refuse,
                                   rule="all_positive")
    out["accuracy"]["guess"] = accuracy(guess.theory, test)
    return out


def metrics(run: dict[str, Any], method: str) -> dict[str, float]:
    """Accuracy and both error reductions of one method in one run."""
    error = 1 - run["accuracy"][method]
    balance = run["test_balance"]
    guess_error = 1 - balance
    majority_error = min(balance, 1 - balance)
    return {"accuracy": run["accuracy"][method],
            "error_reduction_guess": 1 - error / guess_error if guess_error else float("nan"),
            "error_reduction_majority": 1 - error / majority_error if majority_error else float("nan")}


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per method: intervals of the three metrics; plus the paired relevance - naive difference."""
    summary: dict[str, Any] = {}
    for method in METHODS:
        values = [metrics(run, method) for run in runs]
        summary[method] = {name: interval([v[name] for v in values]) for name in values[0]}
        summary[method]["seconds"] = float(np.mean([run["seconds"].get(method, 0.0) for run in runs]))
    summary["relevance_minus_naive"] = interval(
        [run["accuracy"]["relevance"] - run["accuracy"]["naive"] for run in runs])
    summary["test_balance"] = float(np.mean([run["test_balance"] for run in runs]))
    summary["full_budget_runs"] = {method: int(sum(run["charged"][method]["equals_epsilon"]
                                                   for run in runs)) for method in ("relevance", "naive")}
    summary["runs"] = len(runs)
    summary["example_theories_seed0"] = runs[0]["theory"]
    return summary


def run_target(name: str, text_: str, config: dict[str, Any], data: Trains, key: int,
               log: Callable[[str], None]) -> dict[str, Any]:
    """Every size and seed of one target, with the Theorem 3 report per size."""
    target = trains.parse_target(text_)
    rounds = rounds_of(target)
    bottom = fake.fake_for_target(target, config["modes"], trains.schema(), config["k"], 0)
    out: dict[str, Any] = {"target": target.to_prolog(), "rounds": rounds, "sizes": {}, "runs": {},
                           "fake_seed0": str(bottom.to_clause(config["modes"])), "theorem3": {}}
    for size in config["sizes"]:
        start = time.perf_counter()
        runs = [run_once(target, size, seed, config, data, key) for seed in range(config["seeds"])]
        summary = summarise(runs)
        out["sizes"][str(size)] = summary
        out["runs"][str(size)] = [{key: run[key] for key in ("seed", "accuracy", "test_balance",
                                                             "seconds")} for run in runs]
        report = bounds.report(config["modes"], bottom, Fraction(config["epsilon"]), rounds=rounds,
                               levels=config["levels"], max_examples=size)
        out["theorem3"][str(size)] = report.as_dict()
        if size == config["sizes"][-1]:
            out["theorem3_text"] = report.text()
        log(f"  {name}, {size} trains (balance {summary['test_balance']:.3f}): " + ", ".join(
            f"{m} {summary[m]['accuracy']['mean']:.3f}" for m in METHODS) +
            f"  [{time.perf_counter() - start:.1f} s]")
    out["class_balance"] = float(np.mean([out["sizes"][s]["test_balance"] for s in out["sizes"]]))
    return out


def tune_levels(config: dict[str, Any], data: Trains, log: Callable[[str], None]) -> dict[str, Any]:
    """Choose l in {3, 4} on the tuning targets (mean relevance-aware accuracy), sizes 300-3,000."""
    sizes = (300, 1000) if config["quick"] else (300, 1000, 3000)
    seeds = 2 if config["quick"] else 5
    scores: dict[str, float] = {}
    for levels in (3, 4):
        local = {**config, "levels": levels, "seeds": seeds}
        accuracies = [run_once(trains.parse_target(t), size, 100 + seed, local, data, 99)
                      ["accuracy"]["relevance"]
                      for t in TUNING_TARGETS.values() for size in sizes for seed in range(seeds)]
        scores[str(levels)] = float(np.mean(accuracies))
    chosen = int(max(scores, key=lambda levels: (scores[levels], -int(levels))))
    log(f"l chosen on the tuning targets (not reported): {chosen} (mean relevance-aware accuracy "
        f"{', '.join(f'l={l}: {s:.3f}' for l, s in scores.items())}; sizes {list(sizes)}, {seeds} seeds)")
    return {"targets": TUNING_TARGETS, "sizes": list(sizes), "seeds": seeds,
            "mean_accuracy_by_levels": scores, "chosen": chosen}


def split_ablation(config: dict[str, Any], data: Trains, log: Callable[[str], None]) -> dict[str, Any]:
    """The sweep's multi-clause targets again with epsilon per ROUND equal to the 1-clause budget
    (total rounds x epsilon): how much of the Fig. 2b drop is the budget split, and how much the
    smaller clauses (each clause of a j-clause target covers fewer trains). Relevance-aware only;
    same trains, seeds and fake examples as the main runs; not a DP setting of its own."""
    out: dict[str, Any] = {}
    for clauses in sorted(SWEEP)[1:]:
        name = SWEEP[clauses]
        target = trains.parse_target({**TARGETS, **SWEEP_TARGETS}[name])
        epsilon = Fraction(config["epsilon"]) * clauses
        out[name] = {"epsilon_total": float(epsilon), "sizes": {}}
        for size in config["sizes"]:
            values = []
            for seed in range(config["seeds"]):
                train = data.get(1, seed, size, target)
                test = data.get(2, seed, config["test_size"], target)
                bottom = fake.fake_for_target(target, config["modes"], trains.schema(), config["k"], seed)
                learned = private.dp_learn(train, config["modes"], bottom, epsilon, method="relevance",
                                           levels=config["levels"], rounds=clauses,
                                           noise=Randomness(seed=7_000_000 + 1000 * clauses + seed),
                                           charge=Budget())
                balance = trains.class_balance(test)
                values.append(1 - (1 - accuracy(learned.theory, test)) / (1 - balance))
            out[name]["sizes"][str(size)] = interval(values)
        log(f"  {name} at epsilon {config['epsilon']:g} per round: error reduction over the guess " +
            ", ".join(f"{s} {text(v)}" for s, v in out[name]["sizes"].items()))
    return out


def split_shares(results: dict[str, Any], ablation: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per multi-clause target and size: (ER at eps per round - ER at eps / rounds) / (ER of one
    clause - ER at eps / rounds), the share of the drop due to the budget split (None when the
    drop is under 0.05: nothing to explain)."""
    shares: dict[str, dict[str, Any]] = {}
    for name, item in ablation.items():
        shares[name] = {}
        for size, whole in item["sizes"].items():
            one = _item(results[SWEEP[1]], int(size), "relevance", "error_reduction_guess")["mean"]
            split = _item(results[name], int(size), "relevance", "error_reduction_guess")["mean"]
            drop = one - split
            shares[name][size] = round((whole["mean"] - split) / drop, 2) if drop >= 0.05 else None
    return shares


def timing(config: dict[str, Any], repeats: int = 3) -> dict[str, Any]:
    """Seconds of one private run on 10,000 trains (3-atom target), at the benchmark's (k, l) and
    at the issue's limits (k = 12, l = 4); the largest of `repeats` runs."""
    database = trains.generate_trains(10_000, 7, T3)
    out: dict[str, Any] = {"trains": 10_000, "target": T3, "limit_seconds": 10.0}
    for label, k, levels in (("benchmark", config["k"], config["levels"]), ("limits", 12, 4)):
        modes = train_modes(max_bottom=k)
        bottom = fake.fake_for_target(T3, modes, trains.schema(), k, 0)
        for method in ("relevance", "naive"):
            seconds = []
            for repeat in range(repeats):
                start = time.perf_counter()
                private.dp_learn(database, modes, bottom, Fraction(config["epsilon"]), method=method,
                                 levels=levels, noise=Randomness(seed=repeat), charge=Budget())
                seconds.append(time.perf_counter() - start)
            out[f"{label}: {method} (k={k}, l={levels})"] = max(seconds)
    out["under_limit"] = all(v < 10.0 for k, v in out.items() if ": " in k)
    return out


# ------------------------------------------------------------------------------ plots
COLOURS = {"nonprivate": "black", "relevance": "tab:blue", "naive": "tab:orange", "guess": "0.5"}
LABELS = {"nonprivate": "non-private (Aleph)", "relevance": "relevance-aware DP",
          "naive": "naive DP", "guess": "guess: every train eastbound"}


def _errorbar(axis: Any, xs: list[float], items: list[dict[str, float]], **style: Any) -> None:
    means = np.array([i["mean"] for i in items])
    low = np.array([i["low"] for i in items])
    high = np.array([i["high"] for i in items])
    error = np.vstack([means - low, high - means]) if np.all(np.isfinite(low)) else None
    axis.errorbar(xs, means, yerr=error, capsize=3, marker="o", ms=4, **style)


def plot_accuracy(results: dict[str, Any], config: dict[str, Any], path: Path) -> None:
    """Accuracy against training size, one panel per target, 95% intervals over seeds."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n in results if n in config["reported"]]
    figure, axes = plt.subplots(1, len(names), figsize=(5.2 * len(names), 4.4), squeeze=False)
    for axis, name in zip(axes[0], names):
        sizes = _sizes(results[name])
        for method in METHODS:
            _errorbar(axis, sizes, [_item(results[name], s, method) for s in sizes],
                      color=COLOURS[method], label=LABELS[method],
                      linestyle="--" if method == "guess" else "-")
        axis.set_xscale("log")
        axis.set_ylim(0, 1.08)
        axis.set_xlabel("training trains")
        axis.set_ylabel("test accuracy")
        axis.set_title(f"{name} (balance {results[name]['class_balance']:.2f}, "
                       f"{results[name]['rounds']} round(s))", fontsize=10)
        axis.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8, loc="lower right")
    figure.suptitle(f"DP ILP on trains, epsilon {config['epsilon']:g}, k = {config['k']}, "
                    f"l = {config['levels']}: means and 95% intervals over {config['seeds']} seeds",
                    fontsize=11)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def plot_sweep(results: dict[str, Any], config: dict[str, Any], path: Path) -> None:
    """Fig. 2b: error reduction over the guess against the number of 3-atom clauses."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [SWEEP[j] for j in sorted(SWEEP)]
    sizes = sorted(set.intersection(*(set(_sizes(results[n])) for n in names)))
    shown = [s for s in sizes if s >= 1000] or sizes
    figure, axes = plt.subplots(1, 2, figsize=(12, 5.4))
    clauses = np.array(sorted(SWEEP), dtype=float)
    shades = plt.cm.viridis(np.linspace(0.1, 0.85, len(shown)))
    for axis, method in zip(axes, ("relevance", "naive")):
        for offset, (size, colour) in enumerate(zip(shown, shades)):
            _errorbar(axis, list(clauses + 0.04 * (offset - len(shown) / 2)),
                      [_item(results[n], size, method, "error_reduction_guess") for n in names],
                      color=colour, label=f"{size} trains")
        ablation = config.get("split_ablation")
        if method == "relevance" and ablation:
            for offset, (size, colour) in enumerate(zip(shown, shades)):
                items = [ablation[n]["sizes"][str(size)] for n in names[1:]]
                axis.plot(clauses[1:] + 0.04 * (offset - len(shown) / 2), [i["mean"] for i in items],
                          color=colour, linestyle="--", marker="x", ms=5, lw=1,
                          label="eps per round as for 1 clause (ablation)" if offset == 0 else None)
        empty = [1 - results[n]["class_balance"] / (1 - results[n]["class_balance"]) for n in names]
        axis.plot(clauses, empty, color="0.5", linestyle=":", label="empty theory (learns nothing)")
        axis.axhline(1.0, color="black", lw=0.6, label="non-private (perfect)")
        axis.set_xticks(clauses)
        axis.set_xlabel("clauses of 3 atoms in the target (rounds; eps / rounds each)")
        axis.set_ylabel("error reduction over the guess, 1 - err / err_guess")
        axis.set_title(f"{LABELS[method]}: Fig. 2b", fontsize=10)
        axis.grid(alpha=0.3)
        axis.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3)
    figure.suptitle(f"Error reduction as more clauses must be learned, epsilon "
                    f"{config['epsilon']:g}: 95% intervals over {config['seeds']} seeds", fontsize=11)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


# ------------------------------------------------------------------------------ main
def parse_sizes(value: str) -> tuple[int, ...]:
    try:
        sizes = tuple(sorted({int(part) for part in value.split(",") if part.strip()}))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--sizes wants integers separated by commas, got {value!r}")
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError("--sizes wants positive integers")
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"sizes {QUICK_SIZES}, 3 seeds, 2,000 test trains (about a minute)")
    parser.add_argument("--target", action="append",
                        help="a target theory in Prolog over the trains' predicates (repeatable; "
                             "default: the paper's settings and the Fig. 2b sweep)")
    parser.add_argument("--sizes", type=parse_sizes, help="training sizes, e.g. 100,1000,10000")
    parser.add_argument("--seeds", type=int, help="seeds per setting (default 10; --quick 3)")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--test-size", type=int, help="test trains per seed (default 10,000)")
    parser.add_argument("--k", type=int, default=10, help="bound on the fake bottom clause")
    parser.add_argument("--levels", type=int, help="l of the relevance-aware reduction "
                        "(default: chosen in {3, 4} on the tuning targets)")
    parser.add_argument("--out", type=Path, help="the JSON path (PNGs beside it)")
    parser.add_argument("--skip-timing", action="store_true",
                        help="skip the 10,000-train timing (for the smoke test)")
    args = parser.parse_args(argv)
    started = time.perf_counter()

    def log(line: str) -> None:
        print(line, flush=True)

    config: dict[str, Any] = {
        "quick": args.quick, "epsilon": args.epsilon, "k": args.k,
        "sizes": args.sizes or (QUICK_SIZES if args.quick else SIZES),
        "seeds": args.seeds or (3 if args.quick else 10),
        "test_size": args.test_size or (2000 if args.quick else 10_000),
        "modes": train_modes(max_bottom=args.k)}
    if args.target:
        targets = {f"target {i + 1}": t for i, t in enumerate(args.target)}
    else:
        targets = {**TARGETS, **SWEEP_TARGETS}
    config["reported"] = list(targets)[:3] if not args.target else list(targets)
    data = Trains()
    for name, target_text in targets.items():
        theory = trains.parse_target(target_text)
        fake.fake_for_target(theory, config["modes"], trains.schema(), args.k, 0)  # fits k?
        balance = trains.class_balance(trains.generate_trains(100_000, 12345, theory))
        log(f"{name}: {len(theory.clauses)} clause(s), class balance {balance:.3f} "
            f"(100,000 trains): {theory.to_prolog().replace(chr(10), ' ')}")
    tuning = None
    if args.levels is None:
        log("choosing l in {3, 4} on the tuning targets ...")
        tuning = tune_levels({**config, "levels": 3}, data, log)
        config["levels"] = tuning["chosen"]
    else:
        config["levels"] = args.levels
    log(f"epsilon {args.epsilon:g}, k = {args.k}, l = {config['levels']}, sizes "
        f"{list(config['sizes'])}, {config['seeds']} seeds, {config['test_size']} test trains per seed")
    log(FAKE_NOTE)

    results: dict[str, Any] = {}
    for index, (name, target_text) in enumerate(targets.items()):
        log(f"{name} ({len(trains.parse_target(target_text).clauses)} round(s)):")
        target_start = time.perf_counter()
        results[name] = run_target(name, target_text, config, data, 1000 + index, log)
        log(f"  [{name}: {time.perf_counter() - target_start:.0f} s]")
    if not args.target:
        log("Budget-split ablation (relevance-aware, epsilon per round as for one clause) ...")
        config["split_ablation"] = split_ablation(config, data, log)
    log("Theorem 3 and the noise (per target, at the largest size):")
    for name in results:
        log(f"  {name}:\n    " + results[name]["theorem3_text"].replace("\n", "\n    "))
    return finish(args, config, tuning, results, started, log)


def finish(args: argparse.Namespace, config: dict[str, Any], tuning: dict[str, Any] | None,
           results: dict[str, Any], started: float, log: Callable[[str], None]) -> int:
    """Findings, timing, JSON and plots."""
    verdicts = findings(results, list(TARGETS), SWEEP) if not args.target else []
    if verdicts:
        log("Findings (verdicts from 95% intervals over seeds):")
        for item in verdicts:
            log(f"  [{item['verdict']}] {item['finding']}: {item['detail']}")
    timed: dict[str, Any] = {"skipped": True}
    if not args.skip_timing:
        log("Timing of one private run on 10,000 trains (the largest of 3) ...")
        timed = timing(config)
        for key, value in timed.items():
            if ": " in key:
                log(f"  {key}: {value:.2f} s")
        log(f"  under 10 s: {timed['under_limit']}")
    out = args.out or RESULTS / ("ilp_quick.json" if args.quick else "ilp.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    budget_ok = all(count == summary["runs"] for result in results.values()
                    for summary in result["sizes"].values()
                    for count in summary["full_budget_runs"].values())
    ablation = config.pop("split_ablation", None)
    meta = {key: value for key, value in config.items() if key != "modes"}
    meta.update({
        "sizes": list(config["sizes"]), "modes": [str(m) for m in config["modes"].body],
        "max_clause_length": config["modes"].max_clause_length,
        "nonprivate": "aleph.learn with TRAIN_MODES (k = 32, clauses of at most 6 literals), "
                      "noise=None (no bound on covered negatives: the paper's Algorithm 1)",
        "private": "private.dp_learn, rounds = the target's clauses, min_score 0, the "
                   "relevance-aware pruning's defaults (min_positives 0, slack 1); noise "
                   "Randomness(seed=...) (exact samplers, seeded for reproducibility)",
        "fake": FAKE_NOTE, "tuning": tuning, "seconds": time.perf_counter() - started,
        "budget": "every private run's charges are recorded; each sum is <= epsilon (checked), "
                  "and equals it unless the relevance-aware reduction pruned a whole level "
                  "(see full_budget_runs per size)",
        "budget_always_full": budget_ok})
    document = {"meta": meta, "findings": verdicts, "timing": timed, "targets": results,
                "budget_split_ablation": ablation and {"note": split_ablation.__doc__.split("\n\n")[0].replace("\n    ", " ").strip(),
                                                       "by_target": ablation,
                                                       "share_of_drop": split_shares(results, ablation)}}
    if ablation:
        log("Share of the 1-to-j-clause drop (relevance-aware) removed by giving each round the whole "
            "epsilon: " + "; ".join(f"{name} at {size}: {share}" for name, by_size
                                    in document["budget_split_ablation"]["share_of_drop"].items()
                                    for size, share in by_size.items()))
    out.write_text(json.dumps(document, indent=1, default=float))
    plot_accuracy(results, config, out.with_suffix(".png"))
    config["split_ablation"] = ablation
    written = [out, out.with_suffix(".png")]
    if all(SWEEP[j] in results for j in SWEEP):
        sweep_path = out.with_name(out.stem + "_clauses.png")
        plot_sweep(results, config, sweep_path)
        written.append(sweep_path)
    log(f"wrote {', '.join(str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p) for p in written)} "
        f"in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
