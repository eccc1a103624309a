"""A toy family that opts in to the ChoiceMaker's selection mode (`Family.private_score`).

The toy mean family of `tests/toy_family.py` plus the hook: an Option's released mean m is
scored on the private numbers as -|m * n - sum of the numbers clamped to [0, 1]|. Its
sensitivity is 1 for any fixed m in [0, 1]: one number v in [0, 1] added moves m * n - sum by
m - v, at most 1 in absolute value (removed: by v - m). The score reads the output (a released
value) and the data; the sensitivity is a constant (public).

A third Option, `half` (always 0.5, no noise: 0-DP, so any budget covers it), gives the
selection a candidate that is sometimes far better and sometimes far worse than the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from jostle.choicemaker.family import run_epsilon, source_digest
from tests.toy_family import TOY_OPTIONS, MeanData, ToyFamily, ToyGrid, ToyOption, clamped_sum


@dataclass(frozen=True)
class ConstantOption(ToyOption):
    """Releases 0.5 whatever the data (reads nothing: private at any budget)."""

    def run(self, data: MeanData, epsilon: float, noise: Any) -> float:
        return 0.5

    @property
    def fingerprint(self) -> str:
        return f"{self.name}|{source_digest(type(self))}"


SELECTION_OPTIONS: dict[str, ToyOption] = {**TOY_OPTIONS, "half": ConstantOption("half", "always one half")}


class SelectingToy(ToyFamily):
    """The toy family with the private-selection hook (see the module docstring)."""

    name = "toy_selecting"

    def options(self) -> Mapping[str, Any]:
        return SELECTION_OPTIONS

    def default_grid(self) -> ToyGrid:
        return ToyGrid(epsilons=(0.05, 0.5, 5.0), repetitions=3)

    def private_score(self, option: Any, data: MeanData, output: Any) -> tuple[float, float]:
        """-|m n - clamped sum|, sensitivity 1 (see the module docstring)."""
        mean = float(np.clip(float(output), 0.0, 1.0))
        return -abs(mean * data.values.size - clamped_sum(data)), 1.0

    def run_option(self, option: Any, data: Any, budget: Any, noise: Any, released: Mapping[str, float]) -> Any:
        return option.run(data, run_epsilon(budget), noise)


FAMILY = SelectingToy()
