"""What the Options of every classifier family share: their charge function, their planned
cost, and the source digest their fingerprints (the experience cache's keys) carry.

An Option of a classifier family is a named configuration of the family's private learner; run
with budget e it is e-DP and never spends more (its learner's ledger, or the guard
`family.option_guard`, refuses any step past e before it draws).
"""

from __future__ import annotations

import hashlib
import importlib
from pathlib import Path
from typing import Callable

from jostle.choicemaker.budgets import pure_cost
from jostle.privacy.measures import AnyBudget

ChargeFunction = Callable[[float, str], None]
"""Called as charge(epsilon, description) before each noisy step of a learner."""


class PureEpsilonOption:
    """A mixin of Options whose learner is a pure-epsilon mechanism."""

    def planned_cost(self, budget: AnyBudget) -> AnyBudget:
        """What a fit given `budget` charges: the pure epsilon within it (the learner is
        epsilon-DP at that epsilon; its ledger refuses any step past it)."""
        return pure_cost(budget)


def package_digest(package: str, skip: tuple[str, ...] = ()) -> str:
    """Hash of the source of the modules of `package` (a family's folder) but `skip` (file
    names): an edit to a learner invalidates the experience cached for its Options."""
    folder = Path(importlib.import_module(package).__file__).parent
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.py")):
        if path.name not in skip:
            digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()[:16]
