"""The replay fuzzer of issue 22 (tests/privacy/fuzz_replay.py) and its recorder
(jostle/privacy/replay.py), run as tests.

* The recorder: off by default and without effect when off (the same outputs and randomness
  with and without it), what a record holds, the claims' norms, and record-and-play (the D'
  run shows D's transcript, which it does not without playing).
* The fuzzer, from fixed seeds, for a few seconds each: row, replace_one, entity without and
  with `bound_per_key` (databases and joins among them) neighbours in memory and on DuckDB; one
  short case on Spark; programs weighted towards the learner
  families; the DP ILP learner on entity-unit databases (one example and all its cars
  removed or added); one ChoiceMaker (trained on the tiny corpus on both runs). None may break a claim
  or show a different transcript (output, stderr, ledger); each must have checked
  releases (the figures are printed: programs, releases checked per noise point, transcripts
  played whole).
* Negative controls, each a hole put back with monkeypatch that the fuzzer must find from a
  fixed seed within CONTROL_SECONDS, and that goes away once the hole is closed again (so the
  finding is the hole): a `mean` that ignores the table's stability, a join of a database's
  tables that drops the unit's stability (treats the joined entity table as stability 1),
  every Laplace calibration at half the sensitivity, DP ILP's counts calibrated for one clause,
  and a DP ILP refusal that reads the rows before the charge.

$JOSTLE_FUZZ_THOROUGH (neighbour_fuzz.fuzz_seconds) lengthens the fuzzing runs.
"""

from __future__ import annotations

import contextlib
import io
import random
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.privacy import replay
from jostle.privacy.replay import Claim, Recorder, compare
from tests.privacy.fuzz_replay import ReplayFinding, ReplayStats, check_case, fuzz
from tests.privacy.neighbour_fuzz import fuzz_seconds

SEED = 20261126
CONTROL_SECONDS = 20.0   # a cap: each control stops at its first attributable finding


# ---------------------------------------------------------------- the recorder
PROGRAM = '''
m = laplace(count(t), 1)
if m > 3:
    print(laplace(sum(t, "x"), 1))
else:
    print(geometric(count(t.where(lambda r: r.g == "a")), 1))
with budget 1:
    print({{ mean(t, "x") }})
print(gaussian(histogram(t, "g"), 1, 0.00001))
print(report_noisy_max(histogram(t, "g"), 1))
print(exponential(["a", "b"], lambda c: count(t.where(lambda r: r.g == c)), 1, 1))
print(above_threshold([count(t), sum(t, "x")], 3, 1))
'''
SCHEMA = {"x": {"type": "numeric", "bounds": [0, 10]}, "g": {"type": "categorical", "values": ["a", "b"]}}
D = pd.DataFrame({"x": [1.0, 2.0, 3.0, 9.5, 4.0], "g": ["a", "b", "a", "b", "a"]})


def _run(frame: pd.DataFrame, recorder: Recorder | None = None, play: list | None = None,
         seed: int = 7) -> tuple[str, Any]:
    output = io.StringIO()
    session = Session(budget=100, delta=0.001, seed=seed, output=output, ledger_path=":memory:")
    session.bind_private("t", frame, SCHEMA)
    with recorder.watching(session, play) if recorder is not None else contextlib.nullcontext():
        session.run(PROGRAM)
    return output.getvalue(), session.randomness._generator.bit_generator.state


def test_the_recorder_is_off_by_default_and_changes_nothing_when_on() -> None:
    plain, state = _run(D)
    recorder = Recorder()
    recorded, recorded_state = _run(D, recorder)
    assert recorded == plain and recorded_state == state  # the same releases, the same randomness used
    assert not replay._WATCHED  # detached
    noisy = np.array([3, 4])
    assert replay.released(object(), "laplace", noisy, noisy, "l1", 1) is noisy  # nobody watching: as is
    # one per noise point: the first count, the branch taken, the mean's sum and count, the
    # Gaussian histogram, report_noisy_max, exponential, above_threshold
    assert len(recorder.records) == 8


def test_a_record_holds_the_exact_pre_noise_values_and_the_claim() -> None:
    recorder = Recorder()
    _run(D, recorder)
    first = recorder.records[0]
    assert first.point == "laplace" and first.release == "laplace: count(t)" and first.unit == "row"
    assert first.location.endswith(":2:5")
    grid = first.claim.grid
    assert first.values == (5 / grid,)  # count(t) = 5, in grid steps, exactly
    assert first.claim.norm == "l1" and first.claim.bound == 1 / grid  # sensitivity 1 in steps
    points = [r.point for r in recorder.records]
    assert points.count("laplace") >= 3 and {"gaussian", "exponential", "above_threshold"} <= set(points)
    gaussian = next(r for r in recorder.records if r.point == "gaussian")
    assert gaussian.claim.norm == "one_axis"  # a histogram: one cell moves by one
    noisy_max = next(r for r in recorder.records if r.point == "report_noisy_max")
    assert noisy_max.claim.norm == "linf" and noisy_max.claim.monotone


def test_playing_shows_the_recorded_transcript_on_the_neighbour() -> None:
    neighbour = D.iloc[:4]
    first = Recorder()
    shown, _ = _run(D, first)
    unplayed, _ = _run(neighbour)
    second = Recorder()
    played, _ = _run(neighbour, second, play=first.records)
    assert unplayed != shown and played == shown
    assert second.diverged_at is None and all(r.played for r in second.records)
    comparison = compare(first.records, second.records)
    assert comparison.checked == 8 and not comparison.violations
    assert first.records[0].values != second.records[0].values  # the pre-noise counts differ (5 and 4)


def test_playing_needs_a_seeded_source() -> None:
    session = Session(budget=1, ledger_path=":memory:")
    with pytest.raises(ValueError, match="seeded"):
        Recorder().attach(session.accountant, session.randomness, play=[])


@pytest.mark.parametrize("claim, first, second, broken", [
    (Claim("l1", Fraction(2)), (0, 0, 0), (1, -1, 0), False),
    (Claim("l1", Fraction(2)), (0, 0, 0), (1, -1, 1), True),
    (Claim("l2", Fraction(3, 2)), (0, 0), (1, 1), False),
    (Claim("l2", Fraction(1)), (0, 0), (1, 1), True),
    (Claim("one_axis", Fraction(4)), (0, 0), (0, 4), False),
    (Claim("one_axis", Fraction(4)), (0, 0), (1, 1), True),
    (Claim("linf", Fraction(1), monotone=True), (3, 3), (4, 3), False),
    (Claim("linf", Fraction(1), monotone=True), (3, 3), (4, 2), True),
    # group privacy of 2 (replace_one): one cell down, another up, each by half the bound
    (Claim("linf", Fraction(2), monotone=True, group=2), (3, 3), (4, 2), False),
    (Claim("linf", Fraction(2), monotone=True, group=2), (3, 3), (5, 1), True),
    (Claim("one_row", Fraction(1), width=2), (0, 0, 0, 0), (1, 1, 0, 0), False),
    (Claim("one_row", Fraction(1), width=2), (0, 0, 0, 0), (1, 0, 1, 0), True),
    (Claim("hamming", Fraction(1)), (0, 1, 2), (0, 2, 2), False),
    (Claim("hamming", Fraction(1)), (0, 1, 2), (1, 2, 2), True),
    (Claim("l1", Fraction(5)), (0, 0), (0,), True),            # a release's length is public
    (Claim("linf", Fraction(5)), (None, 0), (0, 0), True),     # so is the set of eligible candidates
])
def test_claims(claim: Claim, first: tuple, second: tuple, broken: bool) -> None:
    assert (claim.exceeded_by(first, second) is not None) == broken
    assert (claim.exceeded_by(second, first) is not None) == broken


def test_the_float_slack_applies_to_floating_point_points_only() -> None:
    one = Fraction(1)
    over = (Fraction(0),), (one + Fraction(1, 2**52),)
    exact = replay.Record(0, "exponential", "r", "", "row", Claim("linf", one), over[0])
    floating = replay.Record(0, "exponential", "r", "", "row", Claim("linf", one, floating=True), over[0])
    for record, counted in ((exact, "violations"), (floating, "within_slack")):
        other = replay.Record(0, record.point, "r", "", "row", record.claim, over[1])
        comparison = compare([record], [other], Fraction(1, 2**40))
        assert len(getattr(comparison, counted)) == 1 and comparison.checked == 1


# ---------------------------------------------------------------- the fuzzer
def _fuzz(unit: str, engine: str, programs: int, seed: int, minimum: int, **kwargs: Any) -> ReplayStats:
    """Fuzz a fixed `programs` seeded programs (about 3/4 of what the seconds the suite gave each
    used to check alone), the same every run. Time-limited, CI's load once cut a run to 7
    programs against a floor of 8, and the learners' points depended on how many were checked.
    $JOSTLE_FUZZ_THOROUGH still fuzzes by time (at least THOROUGH's seconds)."""
    stats = ReplayStats()
    seconds = fuzz_seconds(0.0)
    thorough = seconds > 0.0
    finding = fuzz(seconds if thorough else PROGRAM_CAP_SECONDS, seed=seed, unit=unit, engine=engine, stats=stats,
                   max_programs=None if thorough else programs, **kwargs)
    print(stats)
    assert finding is None, f"{finding.report()}\n\n{stats}"
    assert stats.programs >= minimum, stats
    assert stats.releases >= 2 * stats.programs, stats  # the programs released, past their first charge
    assert stats.played >= stats.programs * 9 // 10, stats
    return stats


PROGRAM_CAP_SECONDS = 300.0  # a safety cap only: the fixed counts take 3 to 6 s alone


@pytest.mark.parametrize("unit, programs, minimum", [
    ("row", 120, 30), ("replace_one", 110, 20), ("entity", 90, 20), ("entity_bounded", 120, 20),
])
def test_replay_fuzz_in_memory(unit: str, programs: int, minimum: int) -> None:
    stats = _fuzz(unit, "pandas", programs, SEED, minimum)
    if unit == "replace_one":
        assert stats.points.get("randomized_response", 0) >= 1, stats
    if unit in ("row", "entity_bounded"):  # the learner families' own noise points
        assert {"tree counts", "DAWA noisy-min costs", "rule list capture counts"} <= set(stats.points), stats


@pytest.mark.parametrize("unit", ["row", "replace_one", "entity", "entity_bounded"])
def test_replay_fuzz_on_duckdb(unit: str) -> None:
    pytest.importorskip("duckdb")
    _fuzz(unit, "duckdb", 24, SEED + 1, 5)


def test_replay_fuzz_of_the_learner_families() -> None:
    stats = _fuzz("row", "pandas", 80, SEED + 2, 8, learners=0.7)
    assert sum(v for k, v in stats.points.items() if k not in ("laplace", "gaussian", "geometric")) >= 40, stats
    assert stats.points.get("sparsity", 0) >= 1, stats  # a metafeature's own noise point


def test_replay_fuzz_of_choicemakers() -> None:
    """ChoiceMakers (trained on neighbour_fuzz's tiny corpus on both runs) among the statements:
    their noisy metafeatures and the chosen Option's releases are replayed too."""
    stats = ReplayStats()
    finding = fuzz(120.0, seed=SEED + 4, unit="row", stats=stats, max_programs=1, learners=1.0,
                   forms={"histogram": 0.0, "tree": 0.0, "rules": 0.0, "choicemaker": 1.0}, statements=1)
    print(stats)
    assert finding is None, finding.report()
    assert stats.played == 1 and stats.releases >= 1, stats


# DP ILP (issue 24, tests/privacy/fuzz_ilp.py) only: its calls on the examples of entity-unit cases
# and, in 40% of them, their cars (a database: one example removed or added with all its cars).
ILP_FORMS = {"histogram": 0.0, "tree": 0.0, "rules": 0.0, "choicemaker": 0.0, "ilp": 1.0}


@pytest.mark.parametrize("unit, engine", [("entity", "pandas"), ("entity_bounded", "duckdb")])
def test_replay_fuzz_of_the_ilp_learner(unit: str, engine: str) -> None:
    """Every noisy count of the DP ILP learner (each level of the relevance-aware reduction, the
    naive reduction, every round, the trivial theory) is a recorded release; on neighbours one
    example and all its cars apart, its pre-noise counts move by at most the claimed L1
    sensitivity (|L|, or beta_i, in unit grid steps), and the printed theory and ledger are the
    same once D's transcript is played. Some calls go through the shipped ChoiceMaker (`import
    ilp`): its noisy example counts, then the chosen Option's counts. The bounded case's tables
    are on DuckDB (the learner reads the engine's rows)."""
    if engine == "duckdb":
        pytest.importorskip("duckdb")
    stats = _fuzz(unit, engine, 24 if engine == "pandas" else 12, SEED + 5, 8, learners=0.6, forms=ILP_FORMS)
    print(stats.mechanisms)
    assert stats.mechanisms.get("option ILP", 0) >= 25, stats
    assert stats.mechanisms.get("metafeature ilp example counts", 0) >= 1, stats
    assert any(name.startswith("option ILP") and name != "option ILP" for name in stats.mechanisms), stats


SPARK_PROGRAM = """b = t.bound_per_key(2)
print(laplace(mean(b, "x"), 1))
j = b.join(cars.bound_per_key(1), on="pid")
print(laplace(count(j), 1))
h = histogram(b.bin("x", [0, 1.25, 2.5, 3.75, 5, 6.25, 7.5, 8.75, 10]), "x")
print(Identity(h, all_ranges(8), epsilon=1))
print(report_noisy_max(histogram(b, "grp"), 1))
"""


def test_replay_on_spark() -> None:
    """One case on Spark (its start dominates): a bounded entity table of a database, its mean,
    a join bounded per key (one SQL step on Spark), a histogram learner and a noisy max, on
    random neighbouring databases (one entity's rows removed from or added to both tables)."""
    pytest.importorskip("pyspark")
    from tests.conftest import local_spark
    from tests.privacy.fuzz_replay import ReplayCase, case_columns, database_cars, make_neighbours

    rng = random.Random(SEED)
    columns = case_columns(rng, "entity_bounded")
    rows, neighbour_rows, change = make_neighbours(rng, columns, "entity_bounded")
    while len(rows) < 8:
        rows, neighbour_rows, change = make_neighbours(rng, columns, "entity_bounded")
    case = ReplayCase((SPARK_PROGRAM,), columns, rows, neighbour_rows, "entity_bounded", change, SEED,
                      database_cars(rng, rows, neighbour_rows))
    finding, comparison, (first, _) = check_case(case, "spark", local_spark("jostle-replay"), timeout=120.0)
    print(comparison.report())
    assert finding is None, finding.report()
    assert first.end == ("ok",) and comparison.checked == 5, (first.end, comparison.report())  # the mean is two


def test_mwem_scores_stay_within_their_claimed_sensitivity() -> None:
    from tests.privacy.fuzz_replay import Column, ReplayCase

    program = ('h = histogram(t.bin("x", [0.0, 1.25, 2.5, 3.75, 5.0, 6.25, 7.5, 8.75, 10.0]), "x")\n'
               "print(MWEM(h, all_ranges(8), epsilon=1))\n")
    case = ReplayCase((program,), (Column("x", "num", 0.0, 10.0, integer=True),), ((9,), (1,), (4,), (1,)),
                      ((1,), (4,), (1,)), "row", "row 0 removed", 1)
    finding, comparison, _ = check_case(case)
    assert finding is None and comparison.checked >= 10
    assert not comparison.within_slack, comparison.report()


# ---------------------------------------------------------------- negative controls
@contextlib.contextmanager
def _closed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The hole closed again for a while (every monkeypatch undone), then reopened."""
    patches = list(monkeypatch._setattr)  # (target, name, original value)
    holes = [(target, name, getattr(target, name)) for target, name, _ in patches]
    for target, name, original in patches:
        setattr(target, name, original)
    try:
        yield
    finally:
        for target, name, hole in holes:
            setattr(target, name, hole)


def _find(monkeypatch: pytest.MonkeyPatch, unit: str, what: str, seed: int = SEED, reason: str | None = None,
          **kwargs: Any) -> ReplayFinding:
    """Fuzz with the hole open; the first broken claim (or finding whose reason holds `reason`)
    that goes away with the hole closed. `kwargs` go to `fuzz` (e.g. learner forms)."""
    def attributable(finding: ReplayFinding) -> bool:
        if not (finding.comparison.violations if reason is None else reason in finding.reason):
            return False
        with _closed(monkeypatch):
            again, _, _ = check_case(finding.case)
        return again is None

    stats = ReplayStats()
    finding = fuzz(CONTROL_SECONDS, seed=seed, unit=unit, stats=stats, accept=attributable, **kwargs)
    print(f"{what}: {'found' if finding else 'NOT found'} after {stats}")
    assert finding is not None, f"the replay fuzzer did not find {what}: {stats}"
    print(finding.comparison.report())
    return finding


def test_a_mean_ignoring_stability_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before issue 22, `mean` read `table.stability` nowhere: its sum and count were released
    for one row whatever the table's stability (bound_per_key(k): k rows per entity)."""
    import dataclasses

    from jostle.language import mechanisms

    original = mechanisms._release_mean

    def ignoring_stability(ctx: Any, value: Any, budget: Any, span: Any, mechanism: str) -> float:
        return original(ctx, dataclasses.replace(value, stability=1), budget, span, mechanism)

    monkeypatch.setattr(mechanisms, "_release_mean", ignoring_stability)
    finding = _find(monkeypatch, "entity_bounded", "a mean ignoring stability")
    assert any("mean" in first.release for first, _, _ in finding.comparison.violations)


def test_a_join_dropping_the_unit_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """A join of a database's tables that treats the joined entity table as stability 1 (one
    entity's rows in both tables pair up: s_a x s_b joined rows, jostle.language.joins)."""
    from jostle.language import joins

    original = joins._private_pair

    def stability_one(left: Any, right: Any, on: str, span: Any) -> tuple:
        node, unit, _ = original(left, right, on, span)
        return node, unit, 1

    monkeypatch.setattr(joins, "_private_pair", stability_one)
    finding = _find(monkeypatch, "entity_bounded", "a join dropping the unit")
    assert ".join(" in finding.case.source


def test_a_sensitivity_halved_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Laplace release calibrated to half its sensitivity (the language's and the
    learners' alike: grid_release.laplace_plan is where both plan their grids and scales)."""
    from jostle.privacy import grid_release

    original = grid_release.laplace_plan

    def halved(l1: float, *args: Any, **kwargs: Any) -> Any:
        return original(l1 / 2, *args, **kwargs)

    monkeypatch.setattr(grid_release, "laplace_plan", halved)
    _find(monkeypatch, "row", "a sensitivity halved")


def test_ilp_counts_calibrated_for_one_clause_are_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """DP ILP's counts noised as if the lattice had one clause (L1 sensitivity 1, not the
    number of clauses scored): a level's counts move by more than the claim when the example
    removed is covered by two clauses or more."""
    from jostle.learners.ilp import private

    original = private.release_counts
    monkeypatch.setattr(private, "release_counts", lambda noise, counts, l1, epsilon: original(noise, counts, 1, epsilon))
    finding = _find(monkeypatch, "entity_bounded", "ILP counts for one clause", SEED + 6, learners=0.6, forms=ILP_FORMS)
    assert any("option ILP" in first.release for first, _, _ in finding.comparison.violations)


def test_an_ilp_refusal_on_the_rows_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """A refusal before the charge that reads the rows (here: "no positive example", once the
    database is built): one neighbour charges and releases, the other does not."""
    from jostle.diagnostics.errors import JostleRuntimeError
    from jostle.learners.ilp import language

    original = language.build

    def refusing(decl: Any, *args: Any, **kwargs: Any) -> Any:
        database = original(decl, *args, **kwargs)
        if decl.private and not database.examples.labels.any():
            raise JostleRuntimeError("ILP(): no positive example to learn from", *args[:1])
        return database

    monkeypatch.setattr(language, "build", refusing)
    finding = _find(monkeypatch, "entity", "an ILP refusal on the rows", SEED + 7, reason="released and the other did not",
                    learners=0.6, forms=ILP_FORMS)
    assert "ILP(" in finding.case.source
