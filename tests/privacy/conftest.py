"""Options of the privacy audit suite: thorough mode multiplies every audit's sample size.

Thorough mode is on when the environment variable JOSTLE_AUDIT_THOROUGH is set to 1 (or to a
number: the factor), or with `--thorough` when pytest is started on this directory
(`python -m pytest tests/privacy --thorough`): pytest reads command-line options only from
conftest files it loads at start-up, which this one is only when its directory is named.
"""

from __future__ import annotations

import os

import pytest

THOROUGH_FACTOR = 10.0


def pytest_addoption(parser: pytest.Parser) -> None:
    try:
        parser.addoption("--thorough", action="store_true", default=False,
                         help=f"run the privacy audits with {THOROUGH_FACTOR:g}x the samples")
    except ValueError:  # already registered by a conftest nearer the root
        pass


def thorough_factor(option: bool) -> float:
    """The sample multiplier: from --thorough or $JOSTLE_AUDIT_THOROUGH, else 1."""
    setting = os.environ.get("JOSTLE_AUDIT_THOROUGH", "").strip()
    if setting and setting.lower() not in ("0", "false", "no"):
        try:
            return max(float(setting), 1.0) if setting != "1" else THOROUGH_FACTOR
        except ValueError:
            return THOROUGH_FACTOR
    return THOROUGH_FACTOR if option else 1.0


@pytest.fixture(scope="session")
def audit_scale(request: pytest.FixtureRequest) -> float:
    """How many times the default samples each audit draws."""
    try:
        option = bool(request.config.getoption("--thorough"))
    except ValueError:  # the option was not registered: this conftest was not an initial one
        option = False
    return thorough_factor(option)
