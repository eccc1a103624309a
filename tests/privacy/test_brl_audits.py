"""Privacy audits of the rule-list family (tests/privacy/brl_cases.py), with the contract of
test_audits.py: no case may show a lower bound on its realised epsilon above its claim, the
cases with power floors must reach them, and the mis-calibrated controls must be caught."""

from __future__ import annotations

import pytest

from jostle.audit import AuditCase
from tests.privacy.brl_cases import BRL_CASES, BRL_NEGATIVE_CONTROLS


@pytest.mark.parametrize("case", BRL_CASES, ids=[c.name for c in BRL_CASES])
def test_brl_component_respects_its_claimed_epsilon(case: AuditCase, audit_scale: float) -> None:
    result = case.audit(audit_scale)
    assert not result.violated, f"{case.name}: {result}"
    if case.at_least is not None:
        assert result.epsilon_lower_bound >= case.at_least, f"{case.name}: the audit lost its power: {result}"


@pytest.mark.parametrize("case", BRL_NEGATIVE_CONTROLS, ids=[c.name for c in BRL_NEGATIVE_CONTROLS])
def test_brl_miscalibrated_component_is_caught(case: AuditCase, audit_scale: float) -> None:
    assert case.expect_violation
    result = case.audit(audit_scale)
    assert result.violated, f"{case.name}: a mis-calibrated mechanism passed the audit: {result}"


def test_brl_controls_use_the_sample_sizes_of_passing_cases() -> None:
    assert {c.samples for c in BRL_NEGATIVE_CONTROLS} <= {c.samples for c in BRL_CASES}
