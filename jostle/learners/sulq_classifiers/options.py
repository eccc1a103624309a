"""Options of the SuLQ family: SuLQ ID3 and the SuLQ perceptron, run with a rho budget.

`SULQ_OPTIONS` holds "SuLQID3" and "SuLQPerceptron" (family "sulq_classifiers", task "classification"),
each run on a `ClassificationData` (integer codes, public domain sizes and class count).

Privacy argument of an Option run with a zCDP budget rho (unit: one row added or removed):
its learner fixes its batches from the table's public shape and its own public parameters
(`id3.batches`, `perceptron.batches`), so T is known before any row is read; the variance is
R = `variance_for_rho(rho, T)`, so the batches cost, SuLQ's way (every query counts, each moved
by at most 1 by one row), L_b / (2 grid^2 sigma^2) each and at most rho together, exactly
(`queries.calibrate`). Each batch is charged to the one guard (`option_guard`, capped at rho)
before it is drawn. The Option's planned cost is rho itself: run with rho it is rho-zCDP and
never spends more. A pure or approximate budget has no meaning for a Gaussian mechanism and is
refused (the family declares the zCDP measure only; `planned_cost` refuses it too).

SuLQ ID3 takes the deepest tree up to its public maximum depth whose plan asks at most
`MAX_OPTION_QUERIES` queries (`id3.usable_depth`: a public choice from the table's shape).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jostle.choicemaker.family import UnsupportedMeasure
from jostle.learnerkit.options import package_digest
from jostle.learnerkit.tables import ClassificationData
from jostle.learners.sulq_classifiers import id3, perceptron
from jostle.learners.sulq_classifiers.queries import ChargeFunction
from jostle.privacy.measures import AnyBudget, RhoZCDPBudget

__all__ = ["MAX_OPTION_QUERIES", "SULQ_OPTIONS", "SulqOption", "refuse_unless_rho"]

MAX_OPTION_QUERIES = 200_000
"""The most queries an Option's SuLQ ID3 plan may ask (its depth is lowered to fit)."""


def refuse_unless_rho(budget: Any, who: str) -> RhoZCDPBudget:
    """`budget` if it is a rho; otherwise refuse (before anything is charged) with the hint.

    Raises:
        UnsupportedMeasure: A pure or approximate budget.
    """
    if isinstance(budget, RhoZCDPBudget):
        return budget
    raise UnsupportedMeasure(
        f"{who} adds Gaussian noise, which has no pure epsilon: it runs only with a zCDP budget (rho), got "
        f"{budget}; state the program's total in zCDP (`budget E, D using zcdp` or `budget rho(R)`) and pass "
        "rho=; nothing was spent")


def _sulq_source_digest() -> str:
    """Hash of the learners' source (the language and estimator modules are views of them)."""
    return package_digest("jostle.learners.sulq_classifiers", ("language.py", "estimators.py"))


@dataclass(frozen=True)
class SulqOption:
    """A SuLQ learner the ChoiceMaker may choose (see the module docstring).

    Args:
        name: The Option's name.
        learner: "id3" or "perceptron".
        parameters: The learner's public parameters, as (name, value) pairs.
        description: One line for reports.
    """

    name: str
    learner: str
    parameters: tuple[tuple[str, Any], ...] = ()
    description: str = ""

    def planned_cost(self, budget: AnyBudget) -> AnyBudget:
        """What a fit given `budget` charges: the rho itself (refused unless a rho)."""
        return refuse_unless_rho(budget, f"Option {self.name}")

    def query_count(self, data: ClassificationData) -> int:
        """T on `data`'s public shape."""
        settings = dict(self.parameters)
        if self.learner == "id3":
            return id3.query_count(data.domain_sizes, data.n_classes, self.depth_for(data))
        return perceptron.query_count(data.domain_sizes, data.n_classes, settings["iterations"])

    def depth_for(self, data: ClassificationData) -> int:
        """SuLQ ID3's depth on `data` (public: its maximum, lowered to fit `MAX_OPTION_QUERIES`)."""
        return id3.usable_depth(data.domain_sizes, data.n_classes, dict(self.parameters)["depth"], MAX_OPTION_QUERIES)

    def fit(self, data: ClassificationData, rho: Any, noise: Any, charge: ChargeFunction | None) -> Any:
        """Train with budget `rho` (charged already by the caller; `charge` is the guard that
        holds each batch within it, called before each draw). Returns the fitted model
        (`SuLQTree` or `SuLQLinear`: `predict` / `predict_proba` take integer codes)."""
        settings = dict(self.parameters)
        if self.learner == "id3":
            return id3.fit_id3(data.X, data.y, data.domain_sizes, data.n_classes, noise, charge, rho=rho, cap=rho,
                               depth=self.depth_for(data), stop_factor=settings["stop_factor"])
        return perceptron.fit_perceptron(data.X, data.y, data.domain_sizes, data.n_classes, noise, charge, rho=rho,
                                         cap=rho, iterations=settings["iterations"])

    @property
    def fingerprint(self) -> str:
        """Cache identity: name, learner, parameters and the source of the learners."""
        return f"{self.name}|{self.learner}|{self.parameters!r}|{_sulq_source_digest()}"


SULQ_OPTIONS: dict[str, SulqOption] = {o.name: o for o in [
    SulqOption("SuLQID3", "id3", (("depth", id3.DEFAULT_DEPTH), ("stop_factor", id3.DEFAULT_STOP_FACTOR)),
               "SuLQ ID3 (Blum et al. 2005): noisy information gain from SuLQ counts"),
    SulqOption("SuLQPerceptron", "perceptron", (("iterations", perceptron.DEFAULT_ITERATIONS),),
               "the SuLQ perceptron (Blum et al. 2005): updates from noisy sums of misclassified rows"),
]}
