"""Privacy audits of private evaluation (issue 28): the replay fuzzer over `split`, a released model
in a row function and the charged releases (tests/privacy/fuzz_evaluation.py), on every unit, and
two negative controls showing the audit catches a broken claim: a split by row position (the
parts then change by many rows between neighbours) and a release that calibrates to one row on a
table of higher stability.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

from jostle.language import evaluation
from tests.privacy.fuzz_replay import ReplayFinding, ReplayStats, check_case, fuzz

SEED = 20261128
FORMS = {"histogram": 0.0, "tree": 0.0, "rules": 0.0, "choicemaker": 0.0, "ilp": 0.0, "redescription": 0.0,
         "evaluation": 1.0}
EVALUATIONS = ("private_accuracy", "confusion_matrix", "auc", "calibration")
PROGRAMS = 6  # per unit: a fixed number of programs (not seconds), so a loaded machine runs the same test


@pytest.mark.parametrize("unit", ["row", "replace_one", "entity", "entity_bounded"])
def test_replay_fuzz_of_private_evaluation(unit: str) -> None:
    stats = ReplayStats()
    finding = fuzz(120.0, seed=SEED, unit=unit, stats=stats, learners=0.7, forms=FORMS, max_programs=PROGRAMS)
    print(stats)
    assert finding is None, f"{finding.report()}\n\n{stats}"
    assert stats.programs == PROGRAMS, stats
    assert sum(stats.mechanisms.get(name, 0) for name in EVALUATIONS) >= 5, stats  # the evaluations ran
    assert stats.played >= stats.programs * 9 // 10, stats


def _found(monkeypatch: pytest.MonkeyPatch, unit: str, name: str, hole: Callable[..., Any]) -> ReplayFinding:
    """The first broken claim under the hole `evaluation.<name> = hole` that goes away with the
    original restored (so the finding is the hole's)."""
    original = getattr(evaluation, name)
    monkeypatch.setattr(evaluation, name, hole)

    def attributable(finding: ReplayFinding) -> bool:
        if not finding.comparison.violations:
            return False
        setattr(evaluation, name, original)
        try:
            again, _, _ = check_case(finding.case)
        finally:
            setattr(evaluation, name, hole)
        return again is None

    stats = ReplayStats()
    finding = fuzz(20.0, seed=SEED + 1, unit=unit, stats=stats, learners=0.9, forms=FORMS, accept=attributable)
    assert finding is not None, f"the replay fuzzer did not find the hole {name}: {stats}"
    return finding


def test_a_split_by_row_position_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """Coins drawn in row order: removing a row shifts every later row's coin, so a part's
    counts move by more than one row between neighbours (with the session's one seed)."""
    def positional(frame: Any, schema: Any, fractions: list[float], key_column: str | None,
                   randomness: Any) -> np.ndarray:
        draws = randomness.integers_below(1 << 30, len(frame)) / float(1 << 30) if len(frame) else np.zeros(0)
        return np.minimum(np.searchsorted(np.cumsum(fractions), draws, side="right"), len(fractions) - 1)

    finding = _found(monkeypatch, "row", "assign_parts", positional)
    print(finding.comparison.report())


def test_a_release_ignoring_the_tables_stability_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counts of a joined replace_one table (stability 4) released as if one row moved them."""
    finding = _found(monkeypatch, "replace_one", "release_stability", lambda table: 1)
    assert any(first.release.split(":")[0] in EVALUATIONS for first, _, _ in finding.comparison.violations)


def test_evaluation_calls_are_fuzzed_on_neighbours() -> None:
    """The neighbour fuzzer's evaluation family (tests/privacy/fuzz_evaluation.py): models in row
    functions, splits and the four releases with valid and invalid arguments; nothing before the
    first charge may depend on the rows (refusals included)."""
    from tests.privacy.neighbour_fuzz import FuzzStats, fuzz as neighbour_fuzz

    calls: list[bool] = []
    stats = FuzzStats()
    finding = neighbour_fuzz(120.0, seed=SEED + 2, families={"evaluation": 3, "compose": 1}, stats=stats,
                             max_programs=30,
                             on_case=lambda case: calls.append("predict(" in case.source or "split(" in case.source))
    print(stats, f"{sum(calls)} with an evaluation call")
    assert finding is None, f"{finding.report()}\n\n{stats}"
    assert sum(calls) >= 15, stats


def test_evaluation_statements_parse_and_vary() -> None:
    import random

    from jostle.language.parser import parse
    from tests.privacy.neighbour_fuzz import make_case

    rng = random.Random(SEED)
    sources = [make_case(rng, {"evaluation": 1}).source for _ in range(150)]
    for source in sources:
        parse(source, "case.jst")
    for construct in ("C45(", "predict(", "predict_proba(", "split(", "private_accuracy(", "confusion_matrix(",
                      "auc(", "calibration(", "bins="):
        assert any(construct in source for source in sources), construct
