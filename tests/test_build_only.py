"""`jostle train --all --only LABEL`: retrain some standard ChoiceMakers, leave the others."""

from __future__ import annotations

import subprocess
import sys

import pytest

from jostle.build import build_all


def test_an_unknown_label_trains_nothing_and_names_the_known_ones():
    with pytest.raises(ValueError, match=r"no standard ChoiceMaker nope\.chooser.*trees\.chooser"):
        build_all(progress=False, only=["nope.chooser"], out=lambda line: pytest.fail(f"trained: {line}"))


def test_the_command_line_refuses_an_unknown_label_with_status_2():
    done = subprocess.run([sys.executable, "-m", "jostle", "train", "--all", "--only", "nope.chooser"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert "jostle train: no standard ChoiceMaker nope.chooser" in done.stderr
