"""Options of the ILP family: named configurations of the DP ILP learner and the trivial theory.

Each Option fixes the choice points the ChoiceMaker chooses among and runs on an `ILPData`:

    ILPRelevance2, 3, 4      the relevance-aware reduction (Algorithm 3) with l = 2, 3, 4 levels
                             (clauses of at most l literals), one clause (round)
    ILPRelevance2x2 ... x3   the same in the covering loop (Algorithm 4) with 2 (or 3) rounds
    ILPNaive, ILPNaivex2     the naive reduction (Algorithm 2) over every legal clause up to the
                             modes' maximum clause length, 1 or 2 rounds
    ILPTrivial               the trivial theory: the majority class from one noisy count

**Privacy (every Option; privacy unit: one example and all its facts, `entity(example id)`).**
Run with budget e (the pure epsilon within its part, `planned_cost`), an Option is e-DP and
never spends more:
  * a DP ILP Option calls `private.dp_learn` at e: `rounds` rounds at e / rounds each (exact
    Fractions); a naive round releases the 2|L| counts P, N of its public legal clauses L (L1
    sensitivity |L| under the entity unit, Theorem 4) with geometric noise at
    (e / rounds) / |L|; a relevance-aware round releases level by level, l + 1 levels at
    e / (rounds (l + 1)) each, the beta_i alive clauses of level i at that / beta_i (Theorem 6);
    the covering loop's removal of covered positives is 1-stable (Theorem 7); composition
    gives e. The fake bottom clauses are public (the modes and the public domains), so the
    selection step reads nothing;
  * `ILPTrivial` releases P - N (sensitivity 1: one example moves P or N by 1) with geometric
    noise at e, and post-processes its sign.
Every step is charged to the guard `run_option` passes (`jostle.privacy.subledger.option_guard`
capped at e) BEFORE its noise is drawn; a step that would take the Option past e is refused
(`OverBudgetError`) and draws nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable

from jostle.learnerkit.options import PureEpsilonOption, package_digest
from jostle.learners.ilp.aleph import LearnedTheory
from jostle.learners.ilp.private import dp_learn, trivial_theory
from jostle.learners.ilp.task import ILPData

__all__ = ["ILPOption", "ILP_OPTIONS", "METHODS"]

Charge = Callable[[Fraction, str], Any]

#: An Option's learner: a reduction of `private.dp_learn`, or the trivial theory.
METHODS = ("relevance", "naive", "trivial")

# Modules whose source the Options' fingerprints do not hash: the language, the front door and
# the ChoiceMaker's own parts (the family, its task and corpus, its metafeatures) are
# fingerprinted by the engine separately; the rest (relations, theory, modes, search, fake,
# private, bounds, this module) is the algorithm.
_NOT_THE_ALGORITHM = ("__init__.py", "language.py", "estimators.py", "tables.py", "declare.py", "family.py",
                      "task.py", "corpus.py", "metafeatures.py")


def _ilp_source_digest() -> str:
    """Hash of the source of the family's algorithms (an edit invalidates cached experience)."""
    return package_digest("jostle.learners.ilp", _NOT_THE_ALGORITHM)


@dataclass(frozen=True)
class ILPOption(PureEpsilonOption):
    """A DP ILP configuration (or the trivial theory) the ChoiceMaker may choose.

    Args:
        name: The Option's name (unique across families).
        method: "relevance", "naive" or "trivial" (`METHODS`).
        levels: l, the relevance-aware reduction's longest clause (ignored otherwise).
        rounds: The covering loop's rounds (the most clauses learned).
        description: One line for reports.
    """

    name: str
    method: str
    levels: int = 3
    rounds: int = 1
    description: str = ""

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"an ILP Option's method is one of {', '.join(METHODS)}, got {self.method!r}")

    def learn(self, data: ILPData, epsilon: Fraction | float, noise: Any, charge: Charge) -> LearnedTheory:
        """Learn a theory under epsilon-DP (the caller charged epsilon; `charge` guards each
        step before its noise is drawn)."""
        if self.method == "trivial":
            return trivial_theory(data.database, data.modes, epsilon, noise=noise, charge=charge, rule="majority")
        return dp_learn(data.database, data.modes, data.fake, epsilon, method=self.method, levels=self.levels,
                        rounds=self.rounds, noise=noise, charge=charge, min_score=data.min_score,
                        min_positives=data.min_positives)

    @property
    def fingerprint(self) -> str:
        return f"ilp|{self.name}|{self.method}|{self.levels}|{self.rounds}|{_ilp_source_digest()}"


def _options() -> list[ILPOption]:
    found = []
    for rounds in (1, 2):
        suffix = "" if rounds == 1 else f"x{rounds}"
        clauses = "one clause" if rounds == 1 else f"{rounds} clauses (covering loop, eps/{rounds} each)"
        for levels in (2, 3, 4):
            found.append(ILPOption(f"ILPRelevance{levels}{suffix}", "relevance", levels, rounds,
                                   f"relevance-aware reduction, clauses of at most {levels} literals, {clauses}"))
        found.append(ILPOption(f"ILPNaive{suffix}", "naive", 0, rounds,
                               f"naive reduction over the whole lattice, {clauses}"))
    found.append(ILPOption("ILPTrivial", "trivial", 0, 1, "the majority class from one noisy count"))
    return found


ILP_OPTIONS: dict[str, ILPOption] = {option.name: option for option in _options()}
