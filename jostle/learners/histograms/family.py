"""The histogram family as the ChoiceMaker engine sees it (DPBench's task).

Input: a count vector or grid `x` (whole counts; one record changes one cell by 1) plus a
workload of range queries. Options: the algorithms of `registry.ALGORITHMS` (`options`).
Error: DPBench's scaled error of the workload's answers. Segments: the dimensionality (1D and
2D inputs get their own meta-models). Payoff rule "credit": the algorithms are Laplace-based,
so their errors scale about as 1/epsilon (see `jostle.choicemaker.engine`).

`HISTOGRAM_FAMILY` uses the L1 error; `HistogramFamily("scaled_l2")` the L2 one.

Units and measures. The algorithms are pure-epsilon ones, run at the pure epsilon within the
budget they are given (a rho r in a zCDP program: the largest epsilon with epsilon^2 / 2 <= r).
Their input is a histogram whose L1 sensitivity the language knows (it counts the table's
stability: rows per entity after `bound_per_key(k)` make it k), and they run at epsilon / l1
(`language.algorithm_epsilon`): the family scales to the table's stability, so it learns from
row-unit and entity-unit data. Replace-one data is for local randomisation only: refused.

The metafeature floor (issue 27). A share s of a small epsilon cannot tell what the choice
hinges on: the noisy size's standard deviation is sqrt(2) / (s epsilon) records (14,000 at
s = 1%, epsilon = 0.01), so a 1,000-record input looks like a 10,000-record one, and there
Uniform and DAWA are 3x apart. `metafeature_share_at` therefore gives the metafeatures at least
an absolute pure epsilon `share_floor` (0.001: a size within about 1,400 records), at most
`SHARE_CAP` of the budget and never less than s: share(E) = max(s, min(cap, floor / eps(E))),
with eps(E) the pure epsilon within E. At s = 1% it raises the share below epsilon 0.1 only
(10% at 0.01). A public function of the public share and budget, applied in the plan before any
charge (`measurement.plan_budget`). Chosen on the generated corpus, never on DPBench's shapes
(`benchmarks/choicemaker_histograms_share.py --floors`: leave-one-shape-out regret with the noisy
size, 1D 1.344 -> 1.257, 2D 1.147 -> 1.158, against the whole-budget best).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Hashable, Iterable, Mapping, Sequence

import numpy as np

from jostle.choicemaker.budgets import pure_epsilon_within
from jostle.choicemaker.family import Family, Instance, MetafeatureContext, run_epsilon, source_digest
from jostle.privacy.measures import AnyBudget, RhoZCDPBudget
from jostle.learners.histograms.options import BUILTIN_OPTIONS, option_dims
from jostle.learners.histograms.task import ERROR_MEASURES, TrainingGrid, instances


SHARE_FLOOR = Fraction(1, 1000)
"""The least pure epsilon the metafeatures get (module docstring, "The metafeature floor")."""
SHARE_CAP = Fraction(1, 5)
"""The most of a budget the floor may give the metafeatures."""


class HistogramData:
    """A histogram input: the counts and the workload its answers are judged on."""

    __slots__ = ("x", "workload")

    def __init__(self, x: np.ndarray, workload: Any) -> None:
        self.x = np.asarray(x, dtype=float)
        self.workload = workload

    def __reduce__(self) -> tuple:
        return HistogramData, (self.x, self.workload)


class HistogramFamily(Family):
    """Histograms of counts answering range workloads (see the module docstring)."""

    name = "histograms"
    task = "histogram"
    error_measure = "scaled_l1"
    config_columns = ("shape", "group", "domain", "scale", "epsilon")
    # log10(size * epsilon) (and of the profile's size): the signal-to-noise product most choices
    # hinge on, which axis-aligned trees cannot form from the two columns
    meta_input_products = (("size", "epsilon"), ("profile_size", "epsilon"))
    segment_column = "dims"
    modes = ("measured",)
    payoff_rule = "credit"
    # Laplace-based algorithms (DPBench's error ~ 1 / epsilon): predicted errors are interpolated
    # between the corpus' budgets (`FittedMetaModel.epsilon_column`)
    errors_scale_as_inverse_epsilon = True
    default_metafeatures = ("size", "domain_size", "epsilon", "sparsity", "uniformity", "roughness", "entropy")
    seconds_per_piece = 1.5  # measured: 0.8 s (1D) to 2.4 s (2D) per piece per core, jostle train --all
    language_module = "jostle.learners.histograms.language"
    units = ("row", "entity")  # scales to the input's L1 sensitivity (the table's stability)
    measures = ("pure", "zcdp")

    def __init__(self, error: str = "scaled_l1", share_floor: float | Fraction = SHARE_FLOOR) -> None:
        if error not in ERROR_MEASURES:
            raise ValueError(f"unknown error measure {error!r}; use one of {sorted(ERROR_MEASURES)}")
        if not share_floor >= 0:
            raise ValueError(f"the metafeature floor must be a non-negative epsilon, got {share_floor}")
        self.error_measure = error
        self.error_name = self.error_measures()[error]
        self.share_floor = Fraction(repr(share_floor)) if isinstance(share_floor, float) else Fraction(share_floor)

    def __reduce__(self) -> tuple:
        return HistogramFamily, (self.error_measure, self.share_floor)

    def metafeature_share_at(self, share: Fraction, budget: AnyBudget) -> Fraction:
        """max(share, min(SHARE_CAP, needed)): the module docstring's floor. `needed` is the share
        whose part holds the pure epsilon `share_floor`: floor / eps for a pure budget; for a rho
        (a part's epsilon is sqrt(2 share rho) = sqrt(share) eps) (floor / eps)^2."""
        epsilon = pure_epsilon_within(budget)
        if self.share_floor == 0 or epsilon <= 0:
            return share
        needed = self.share_floor / epsilon
        if isinstance(budget, RhoZCDPBudget):
            needed = needed * needed
        return max(share, min(SHARE_CAP, needed))

    def error_measures(self) -> Mapping[str, str]:
        return {name: f"{name} (DPBench's per-query {norm.upper()} error over the scale)"
                for name, norm in ERROR_MEASURES.items()}

    def with_error(self, measure: str | None) -> "HistogramFamily":
        if measure is None or measure == self.error_measure:
            return self
        if measure not in ERROR_MEASURES:
            raise KeyError(f"the {self.name} family has no error measure {measure!r}; it has "
                           f"{', '.join(ERROR_MEASURES)}")
        return HistogramFamily(measure, self.share_floor)

    @property
    def fingerprint(self) -> str:
        floor = f"|floor {self.share_floor}" if self.share_floor != SHARE_FLOOR else ""
        return f"{self.name}|{source_digest(type(self))}|{self.error_measure}{floor}"

    def options(self) -> Mapping[str, Any]:
        return BUILTIN_OPTIONS

    def metafeatures(self) -> Mapping[str, Any]:
        from jostle.learners.histograms.metafeatures import BUILTIN_METAFEATURES

        return BUILTIN_METAFEATURES

    def segments(self, option: Any) -> tuple[Hashable, ...]:
        return option_dims(option)

    def segment_of(self, data: Any) -> Hashable:
        return int(np.ndim(data.x if isinstance(data, HistogramData) else data))

    def segment_label(self, segment: Hashable) -> str:
        return f"{segment}D" if segment is not None else ""

    def default_corpus(self, options: Sequence[Any]) -> Sequence[Any]:
        from jostle.learners.histograms.corpus import default_corpus

        dims = sorted({d for o in options for d in option_dims(o)})
        return default_corpus(tuple(dims))

    def default_grid(self) -> TrainingGrid:
        return TrainingGrid.quick()

    def pieces(self, task: Any, grid: Any, options: Sequence[Any]) -> list[tuple[str, Any]]:
        return [("x".join(map(str, domain)), domain) for domain in grid.domains(task.dims)]

    def piece_options(self, task: Any, piece: Any, options: Sequence[Any]) -> list[Any]:
        return [o for o in options if task.dims in option_dims(o)]

    def piece_cost(self, task: Any, piece: Any) -> float:
        return float(np.prod(piece))

    def instances(self, task: Any, piece: Any, grid: Any) -> Iterable[Instance]:
        for instance in instances(task, piece, grid):
            workload, scale = instance.evaluation
            yield Instance(instance.columns, HistogramData(instance.data, workload), instance.budget,
                           instance.seed_parts, scale)

    def context(self, data: Any, option_budget: AnyBudget, total_budget: AnyBudget) -> MetafeatureContext:
        x = data.x if isinstance(data, HistogramData) else np.asarray(data)
        return MetafeatureContext(option_budget, total_budget, facts={"domain_shape": tuple(np.shape(x))})

    def metafeature_input(self, data: Any) -> Any:
        return data.x if isinstance(data, HistogramData) else np.asarray(data, dtype=float)

    def run_option(self, option: Any, data: Any, budget: AnyBudget, noise: Any,
                   released: Mapping[str, float]) -> Any:
        estimate = option.run(data.x, run_epsilon(budget), data.workload, noise)
        return np.asarray(estimate, dtype=float).reshape(np.shape(data.x))

    def failed(self, result: Any) -> bool:
        return not bool(np.all(np.isfinite(result)))

    def error(self, instance: Instance, result: Any) -> float:
        from jostle.learners.histograms.workloads import scaled_error

        data = instance.data
        if self.failed(result):  # a non-finite estimate is scored as releasing nothing
            result = np.zeros_like(data.x)
        return float(scaled_error(data.workload, data.x, result, scale=float(instance.evaluation),
                                  norm=ERROR_MEASURES[self.error_measure]))

    def simulation_noise(self, seed: int) -> Any:
        from jostle.learners.histograms.simulation import FloatSimulationNoise

        return FloatSimulationNoise(seed)

    def neighbouring_inputs(self, seed: int) -> tuple[Any, Any]:
        from jostle.learners.histograms.workloads import prefix_1d

        rng = np.random.default_rng(seed)
        x = rng.integers(0, 20, size=16).astype(float)
        y = x.copy()
        y[int(rng.integers(0, 16))] += 1  # one record added to one cell
        workload = prefix_1d(16)
        return HistogramData(x, workload), HistogramData(y, workload)

    def describe(self, result: Any) -> str:
        values = np.asarray(result, dtype=float)
        return f"estimate of {values.size} cells, total {values.sum():.6g}"


FAMILY = HistogramFamily()
