"""Accuracy-first releases (issue 29) under the replay check: a form of fuzz_replay.py.

Random programs whose releases are made by `with accuracy E at C:` blocks and by
`release(x, error=E, confidence=C)` (jostle.language.accuracy_first), each inside a `with budget B:`
cap (so that the caps, not the fuzzer's huge session total, bound the budgets), over the replay
fuzzer's tables and neighbours (row, replace_one, entity with bounded rows; zCDP sessions now and
then): counts, sums, histograms (the closed-form inverse), means (the gradual release of
jostle.privacy.gradual_release: its points "gradual count" and "gradual sum", one per revealed
step, each claiming an L1 move of at most its grid sensitivity), parts of partitions (parallel
composition inside the block), targets the cap cannot meet (refused before anything is spent,
the same on both neighbours), and plain releases between them (adaptivity: a block's target may
be a released value).

Each case is recorded on D and played on D' (fuzz_replay.check_case): every paired noise point
within its claim, and when the whole transcript was played, the same printed text, ledger and
end on both neighbours: where a gradual release stops, how many charges it makes and their
descriptions are functions of released values only.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from tests.privacy.fuzz_replay import (
    RHOS, ZCDP_RATE, ReplayCase, ReplayFinding, ReplayGenerator, case_columns, check_case, make_neighbours,
)
from tests.privacy.neighbour_fuzz import TableSpec

UNITS = ("row", "replace_one", "entity_bounded")
ERRORS = ["0.5", "2", "5", "10", "20", "50", "100", "1000"]
CONFIDENCES = ["0.5", "0.9", "0.95", "0.99"]
CAPS = ["0.5", "1", "2", "5"]


def _cap(generator: ReplayGenerator) -> str:
    return f"rho({generator.pick(RHOS)})" if generator.zcdp else generator.pick(CAPS)


def _value(generator: ReplayGenerator, table: str) -> str:
    """A private aggregate of `table`, a mean more often than the replay fuzzer draws one."""
    if not generator.unbounded(table) and generator.chance(0.35):
        return f'mean({table}, "x")'
    return generator.value(table)


def accuracy_statement(generator: ReplayGenerator, chunks: list[str]) -> None:
    """One accuracy-first statement (or a plain release, for adaptivity), appended to `chunks`."""
    table = generator.table()
    error, confidence = generator.pick(ERRORS), generator.pick(CONFIDENCES)
    form = generator.pick(["block", "call", "partition", "adaptive", "plain"], [35, 20, 15, 15, 15])
    cap = _cap(generator)
    if form == "block":
        values = [_value(generator, table) for _ in range(generator.rng.randint(1, 2))]
        body = "".join(f"        print({{{{ {v} }}}})\n" for v in values)
        chunks.append(f"with budget {cap}:\n    with accuracy {error} at {confidence}:\n{body.rstrip()}")
    elif form == "call":
        chunks.append(f"with budget {cap}:\n    print(release({_value(generator, table)}, error={error}, "
                      f"confidence={confidence}))")
    elif form == "partition" and not generator.unbounded(table):
        value = generator.pick(["count(p)", 'sum(p, "x")', 'mean(p, "x")'])
        chunks.append(f"with budget {cap}:\n    with accuracy {error} at {confidence}:\n"
                      f'        for p in {table}.partition("grp"):\n            print(p.key, {{{{ {value} }}}})')
    elif form == "adaptive":  # the target is a released value: public, and the same on D' when played
        name = generator.fresh("e")
        chunks.append(f"{name} = max(abs(laplace(count({table}), {generator.eps()})), 1)" if not generator.unbounded(table)
                      else f"{name} = max(abs(laplace(count_keys({table}), {generator.eps()})), 1)")
        chunks.append(f"with budget {cap}:\n    with accuracy {name} at {confidence}:\n"
                      f"        print({{{{ {_value(generator, table)} }}}})")
    else:
        generator.st_release(chunks)


def make_accuracy_case(rng: random.Random, unit: str, statements: int | None = None) -> ReplayCase:
    """A random case of accuracy-first statements under `unit` (UNITS)."""
    columns = case_columns(rng, unit)
    rows, neighbour_rows, change = make_neighbours(rng, columns, unit)
    bound = rng.choice([1, 2]) if unit == "entity_bounded" else None
    generator = ReplayGenerator(rng, TableSpec("t", columns, rows), unit, bound)
    generator.zcdp = rng.random() < ZCDP_RATE
    chunks: list[str] = [] if bound is None else [f"b = t.bound_per_key({bound})"]
    for _ in range(statements if statements is not None else rng.choice([2, 3, 4])):
        accuracy_statement(generator, chunks)
    # Gradual releases run in pure epsilon-DP programs only (refused with delta or in zCDP), so most
    # of the other cases are pure; their (epsilon, delta) Gaussian releases are refused there.
    pure = not generator.zcdp and rng.random() < 0.75
    return ReplayCase(tuple(chunks), columns, rows, neighbour_rows, unit, change, rng.randrange(1 << 30), None,
                      generator.zcdp, pure)


@dataclass
class AccuracyStats:
    """What an accuracy fuzzing run did."""

    programs: int = 0
    releases: int = 0       # noise points paired and checked
    played: int = 0         # programs whose whole transcript was played on D'
    refused: int = 0        # programs ending in a JostleError (targets the cap cannot meet among them)
    points: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def __str__(self) -> str:
        points = ", ".join(f"{k} {v}" for k, v in sorted(self.points.items()))
        return (f"{self.programs} accuracy-first programs in {self.seconds:.1f} s: {self.releases} releases "
                f"checked ({points}); {self.played} played whole, {self.refused} ended in an error")


def fuzz_accuracy(seconds: float, seed: int, unit: str, stats: AccuracyStats) -> ReplayFinding | None:
    """Check random accuracy-first programs under `unit` for `seconds`; the first finding, or None."""
    rng = random.Random(seed)
    start = time.monotonic()
    try:
        while time.monotonic() - start < seconds:
            case = make_accuracy_case(rng, unit)
            finding, comparison, (first, second) = check_case(case)
            stats.programs += 1
            stats.releases += comparison.checked
            for record in first.records[:comparison.checked]:
                stats.points[record.point] = stats.points.get(record.point, 0) + 1
            stats.played += second.diverged_at is None and len(first.records) == len(second.records)
            stats.refused += first.end[0] == "error"
            if finding is not None:
                return finding
    finally:
        stats.seconds = time.monotonic() - start
    return None
