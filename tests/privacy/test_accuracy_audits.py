"""Audits of accuracy-first releases (issue 29): the replay fuzzer's accuracy form (fuzz_accuracy.py)
and a control showing that it catches a gradual release whose claim is too small.

$JOSTLE_FUZZ_THOROUGH (neighbour_fuzz.fuzz_seconds) lengthens the fuzzing runs.
"""

from __future__ import annotations

import pytest

from jostle.privacy import gradual_release
from tests.privacy.fuzz_accuracy import AccuracyStats, fuzz_accuracy
from tests.privacy.neighbour_fuzz import fuzz_seconds

SEED = 20261127


@pytest.mark.parametrize("unit, seconds", [("row", 3.0), ("replace_one", 2.0), ("entity_bounded", 2.0)])
def test_accuracy_first_releases_keep_their_claims_on_neighbours(unit: str, seconds: float) -> None:
    stats = AccuracyStats()
    finding = fuzz_accuracy(fuzz_seconds(seconds), SEED, unit, stats)
    print(stats)
    assert finding is None, f"{finding.report()}\n\n{stats}"
    assert stats.programs >= 5, stats
    assert stats.played >= stats.programs * 9 // 10, stats
    assert stats.points.get("gradual count", 0) >= 1 or unit == "entity_bounded", stats


def test_the_fuzzer_catches_a_gradual_release_claiming_too_little(monkeypatch: pytest.MonkeyPatch) -> None:
    """Control: a chain that claims one grid step less than its sensitivity is found."""
    reveal = gradual_release.Chain.reveal

    def understated(self, noise, step, units, point):  # type: ignore[no-untyped-def]
        real = self.sensitivity
        self.sensitivity = real - 1
        try:
            return reveal(self, noise, step, units, point)
        finally:
            self.sensitivity = real

    monkeypatch.setattr(gradual_release.Chain, "reveal", understated)
    stats = AccuracyStats()
    finding = fuzz_accuracy(20.0, SEED + 1, "row", stats)
    assert finding is not None and "claimed sensitivity" in finding.reason, stats
    assert any(first.point.startswith("gradual") for first, _, _ in finding.comparison.violations)
