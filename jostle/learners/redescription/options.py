"""Options of the redescription family: the paper's three miners in their tested settings.

Each Option fixes the choice points the ChoiceMaker chooses among and runs
`algorithms.mine` on a `RedescriptionData`:

    AltExpMNonRobust      AltExpM, InTr = 1, RMIter = m (the paper's non-robust setting)
    AltExpMStable         AltExpM, InTr = m, RMIter = 1 (stable w.r.t. the initial attribute)
    AltMCMCNonRobust      AltMCMC (exact exponential-mechanism trees), InTr = 1, RMIter = m
    AltMCMCStable         AltMCMC, InTr = m, RMIter = 1
    MCMCTreePair          MCMCTreePair, InTr = m tries, omega = 0.1 of each try for sampling
    MCMCTreePairBalanced  MCMCTreePair, omega = 0.5 (the paper's balanced setting "b")

Depth 4 throughout. The rest of each run's settings (`miner_settings`) is a function of public
facts and released values only, never of the true entity count:
  * m = the number of tries (or alternations): the paper's InTr = 4 on small data, lowered when
    the per-run budget is small so that each of the stable setting's 3m steps keeps at least
    1/180 (`STEP_FLOOR` / 3) of a unit of epsilon: m = clip(floor(epsilon / STEP_FLOOR), 1, 4)
    = clip(floor(60 epsilon), 1, 4), so m = 4 from epsilon 1/15 up (the paper's budgets 1 and
    0.1) and m = 1 below 1/30 (the paper's 0.01, where it pools 100 runs: each run gets four
    times the budget per tree instead of four tries of noise). It reads the per-run epsilon
    (public) only: the planned number of runs (a metafeature) informs the choice of Option but
    changes no Option;
  * the constraints: the input's declared ones if any; else the defaults of
    `extract.Constraints` with the minimum support 10 on small data and 100 on
    large, "large" meaning a released noisy entity count (the metafeature `n_entities`, when
    this call measured it) of at least `LARGE_ENTITIES`; without a released count the input is
    treated as small (maximum support 0.8 of the noisy size, p-value 0.01, minimum Jaccard 0.1,
    three extensions).

**Privacy (every Option; privacy unit: one entity removed from both views, `entity(key)`).**
Run with budget e (the pure epsilon within its part, `planned_cost`), an Option is e-DP and
never spends more: `algorithms.mine` charges each step (one tree, tree pair or extraction) to
the guard `run_option` passes (`jostle.privacy.subledger.option_guard`, capped at e) BEFORE its
noise is drawn, its steps add to exactly e (sequential composition; the sensitivity arguments
are in `expmech`, `sampler` and `extract`), and a step that would take it past e is refused
(`OverBudgetError`) with nothing drawn. The settings above are post-processing of public facts
and of a value released (and charged) earlier in the same call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Callable, Mapping

from jostle.learnerkit.options import PureEpsilonOption, package_digest
from jostle.learners.redescription.task import RedescriptionData

__all__ = ["LARGE_ENTITIES", "MAX_TRIES", "MIN_SUPPORT_LARGE", "MIN_SUPPORT_SMALL", "REDESCRIPTION_OPTIONS",
           "RedescriptionOption", "SETTINGS", "STEP_FLOOR", "miner_settings", "tries_for"]

Charge = Callable[[Fraction, str], Any]

#: An Option's setting: the paper's two Alt* settings, or MCMCTreePair's tries.
SETTINGS = ("non-robust", "stable", "pair")

DEPTH = 4                        # the paper's tree depth
MAX_TRIES = 4                    # the paper's InTr (or RMIter) on small data
STEP_FLOOR = Fraction(1, 60)     # epsilon per try: a stable step keeps at least a third of it
LARGE_ENTITIES = 10_000          # a released entity count from which the data are "large"
MIN_SUPPORT_SMALL, MIN_SUPPORT_LARGE = 10, 100  # the paper's minimum supports

# Modules whose source the Options' fingerprints do not hash: the language, the front door and
# the ChoiceMaker's own parts (the family, its corpus, its metafeatures) are fingerprinted by the
# engine separately; the rest (the core, the planted generator, the task's error measure, this
# module) is the algorithm.
_NOT_THE_ALGORITHM = ("__init__.py", "language.py", "declare.py", "estimators.py", "family.py", "corpus.py",
                      "metafeatures.py")


def _redescription_source_digest() -> str:
    """Hash of the source of the family's algorithms (an edit invalidates cached experience)."""
    return package_digest("jostle.learners.redescription", _NOT_THE_ALGORITHM)


def tries_for(epsilon: Fraction | float) -> int:
    """m, the tries (or alternations) of a run at per-run budget `epsilon` (public): the most, up
    to `MAX_TRIES`, with epsilon / m >= STEP_FLOOR (each stable step then keeps epsilon / (3 m)
    >= 1/180), at least 1."""
    return max(1, min(MAX_TRIES, math.floor(Fraction(epsilon) / STEP_FLOOR)))


def miner_settings(option: "RedescriptionOption", epsilon: Fraction | float, data: RedescriptionData,
                   noisy_entities: float | None = None) -> Any:
    """The `algorithms.MinerSettings` of one run of `option` (see the module docstring).

    Args:
        option: The Option.
        epsilon: The run's budget (public).
        data: The input (only its public facts are read: the declared constraints).
        noisy_entities: The entity count released earlier in the same call, or None.
    """
    from jostle.learners.redescription import algorithms
    from jostle.learners.redescription.extract import Constraints

    m = tries_for(epsilon)
    if option.setting == "non-robust":
        settings = algorithms.non_robust(option.algorithm, m)
    elif option.setting == "stable":
        settings = algorithms.stable(option.algorithm, m)
    else:
        settings = algorithms.MinerSettings(option.algorithm, tries=m, omega=option.omega)
    if data.constraints is not None:
        return replace(settings, depth=DEPTH, constraints=data.constraints)
    large = noisy_entities is not None and float(noisy_entities) >= LARGE_ENTITIES
    support = MIN_SUPPORT_LARGE if large else MIN_SUPPORT_SMALL
    return replace(settings, depth=DEPTH, constraints=replace(Constraints(), min_support=support))


@dataclass(frozen=True)
class RedescriptionOption(PureEpsilonOption):
    """A miner configuration the ChoiceMaker may choose.

    Args:
        name: The Option's name (unique across families).
        algorithm: "AltExpM", "AltMCMC" or "MCMCTreePair" (`algorithms.ALGORITHMS`).
        setting: "non-robust" or "stable" (Alt*), "pair" (MCMCTreePair) (`SETTINGS`).
        omega: MCMCTreePair's share of each try for sampling the tree pair.
        description: One line for reports.
    """

    name: str
    algorithm: str
    setting: str
    omega: Fraction = Fraction(1, 2)
    description: str = ""

    def __post_init__(self) -> None:
        if self.setting not in SETTINGS:
            raise ValueError(f"a redescription Option's setting is one of {', '.join(SETTINGS)}, got {self.setting!r}")
        if (self.setting == "pair") != (self.algorithm == "MCMCTreePair"):
            raise ValueError(f"{self.algorithm} has no setting {self.setting!r}")

    def learn(self, data: RedescriptionData, epsilon: Fraction | float, noise: Any, charge: Charge,
             released: Mapping[str, float] | None = None) -> Any:
        """Mine redescriptions under epsilon-DP (the caller charged epsilon; `charge` guards each
        step before its noise is drawn). `released` may hold the noisy entity count of this call."""
        from jostle.learners.redescription.algorithms import mine

        noisy = (released or {}).get("n_entities")
        settings = miner_settings(self, epsilon, data, noisy)
        return mine(data.views, settings, epsilon, noise=noise, charge=charge)

    @property
    def fingerprint(self) -> str:
        return (f"redescription|{self.name}|{self.algorithm}|{self.setting}|{self.omega}|"
                f"{_redescription_source_digest()}")


def _options() -> list[RedescriptionOption]:
    found = []
    for algorithm in ("AltExpM", "AltMCMC"):
        trees = "exponential-mechanism trees" if algorithm == "AltExpM" else "exactly sampled trees"
        found.append(RedescriptionOption(f"{algorithm}NonRobust", algorithm, "non-robust",
                                         description=f"{algorithm} ({trees}), one initial try, m alternations"))
        found.append(RedescriptionOption(f"{algorithm}Stable", algorithm, "stable",
                                         description=f"{algorithm} ({trees}), m initial tries, one alternation"))
    found.append(RedescriptionOption("MCMCTreePair", "MCMCTreePair", "pair", Fraction(1, 10),
                                     "MCMCTreePair, m tries, 10% of each try to sample the tree pair"))
    found.append(RedescriptionOption("MCMCTreePairBalanced", "MCMCTreePair", "pair", Fraction(1, 2),
                                     "MCMCTreePair, m tries, half of each try to sample the tree pair"))
    return found


REDESCRIPTION_OPTIONS: dict[str, RedescriptionOption] = {option.name: option for option in _options()}
