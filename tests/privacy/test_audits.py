"""Privacy audits of every mechanism, `{{ }}`, partitions, `with budget` blocks, the histogram
algorithms, Options and the ChoiceMaker, and the decision-tree learners.

Each case of tests/privacy/cases.py and learner_cases.py is audited (jostle.audit): the
high-confidence lower bound on the realised epsilon (family-wise alpha 1e-6) must not exceed the
claimed epsilon. Cases whose neighbours realise the whole claim also have a power floor
(`at_least`), so an audit that has gone blind fails too. The negative controls are
mis-calibrated on purpose and must be caught with the same sample sizes, which shows that a
passing audit means something.
"""

from __future__ import annotations

import pytest

from jostle.audit import AuditCase
from tests.privacy.cases import CASES, NEGATIVE_CONTROLS
from tests.privacy.learner_cases import LEARNER_CASES, LEARNER_NEGATIVE_CONTROLS, OPTION_CASES

ALL_CASES = CASES + LEARNER_CASES + OPTION_CASES
ALL_CONTROLS = NEGATIVE_CONTROLS + LEARNER_NEGATIVE_CONTROLS


@pytest.mark.parametrize("case", ALL_CASES, ids=[c.name for c in ALL_CASES])
def test_component_respects_its_claimed_epsilon(case: AuditCase, audit_scale: float) -> None:
    result = case.audit(audit_scale)
    assert not result.violated, f"{case.name}: {result}"
    if case.at_least is not None:
        assert result.epsilon_lower_bound >= case.at_least, (
            f"{case.name}: the audit lost its power (expected a bound of at least {case.at_least}): {result}")


@pytest.mark.parametrize("case", ALL_CONTROLS, ids=[c.name for c in ALL_CONTROLS])
def test_miscalibrated_mechanism_is_caught(case: AuditCase, audit_scale: float) -> None:
    assert case.expect_violation
    result = case.audit(audit_scale)
    assert result.violated, f"{case.name}: a mis-calibrated mechanism passed the audit: {result}"


def test_every_negative_control_uses_the_sample_size_of_a_passing_case() -> None:
    """The controls are caught at sample sizes the real audits also use, not at larger ones."""
    assert {c.samples for c in ALL_CONTROLS} <= {c.samples for c in ALL_CASES}
