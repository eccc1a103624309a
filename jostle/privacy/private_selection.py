"""Choosing without paying for metafeatures: private selection from private candidates, and
the common mechanism of two Gaussian linear-query mechanisms.

**Private selection (Liu and Talwar, "Private selection from private candidates", STOC 2019,
arXiv:1811.07971).** A *candidate* mechanism Q is run repeatedly on the same data; each run
returns a (noisy score, output) pair and is eps1-DP as a whole (here: an Option run with part
of eps1 and a Laplace-noised score of its output with the rest, by sequential composition).

  * Random stopping, best of (`plan_selection(..., threshold=None)`): the number of runs T is
    drawn from a geometric law on {1, 2, ...} with stopping probability gamma (after each run,
    stop with probability gamma), FROM PUBLIC RANDOMNESS BEFORE ANY RUN, independent of the data;
    the output is the run with the highest noisy score. Liu and Talwar's random-stopping
    theorem (Theorem 3.4 of the arXiv version; also Papernot and Steinke, ICLR 2022, the
    truncated negative binomial with eta = 1) states: for any gamma in (0, 1], if Q is eps1-DP
    then the selection is 3 * eps1-DP. Only that pure statement is implemented (their
    (eps, delta) variants and the truncated version with a known bound T are not).
  * Threshold (`plan_selection(..., threshold=tau)`, their Algorithm 1 with T = infinity, as
    OpenDP's `make_select_private_candidate`): run Q until a noisy score is at least tau, and
    after each run below tau stop with probability gamma and output nothing (None). Their
    Theorem 3.1(b) with T = infinity (so their eps0 = 0): if Q is eps1-DP the algorithm is
    2 * eps1-DP. We require gamma > 0 so that it stops.

What is released: the chosen output, which candidate it is and its noisy score, nothing else.
NOT the number of runs T, nor the other candidates or their scores: conditioned on T = t the
best of t runs is only t * eps1-DP by composition; the 3 * eps1 bound holds for T's law.
The time a selection takes grows with T (one run of the Option per step), and here that side
channel is not a small leak: an observer who learns T and the output together has no finite
pure-DP bound (an exact check on a two-score candidate gave a log ratio of exactly T * eps1 for
T = 1, 5, 20, 100; an adversarial review of issue 27). No built-in family opts into this mode
(`Family.private_score`); one that does must hide T from the program (for instance by running
a public number of candidates whatever T is) before its selection can be offered to untrusted
programs.

Charging: the whole stated cost (3 * eps1, or 2 * eps1) is charged through the caller's charge
function (the one sub-ledger of a dispatch) in one charge, BEFORE the number of runs is drawn
and before any run; nothing else is charged, since the theorem covers every run.

**The common mechanism (Xiao, Wang, Zhang and Kifer, "Answering private linear queries
adaptively using the common mechanism", PVLDB 2023).** A Gaussian linear release
y = B x + N(0, sigma^2 I) of a histogram x carries the information P = B^T B / sigma^2; under
zCDP with one row added or removed (x moves by +-e_j) it costs rho = max_j P_jj / 2, and two
independent releases with informations P_a and P_b cost, for every pair of neighbours,
(Delta^T P_a Delta + Delta^T P_b Delta) / 2 = Delta^T (P_a + P_b) Delta / 2 (Renyi divergences
of independent Gaussians add, per neighbouring pair; Bun and Steinke 2016, Lemma 2.3 applied
pair by pair, which holds for adaptive choices too). So if a "common" release with information
P* <= P_1 and P* <= P_2 (Loewner order) is made first, and then, chosen from it, the remainder
of mechanism i (information P_i - P*, PSD), the whole costs max_j (P_i)_jj / 2 = rho_i for the
chosen i, at most max(rho_1, rho_2): choosing between the two from the common release spends
nothing beyond the chosen mechanism, instead of splitting the budget.

Scope implemented (`identity_or_hierarchy`): the pair "identity" (every cell plus discrete
Gaussian noise of variance s^2) and "hierarchy" (a complete b-ary tree of h levels over the
cells, leaves included, every node's count plus discrete Gaussian noise of variance h s^2), both
costing rho = 1 / (2 s^2). Their common part is the tree's leaf level, every cell with variance
h s^2 (information I / (h s^2), below both); the identity's remainder is every cell again with
variance h s^2 / (h - 1) (so the two cell releases carry I / s^2), the hierarchy's remainder its
h - 1 upper levels. All of them are integer counts with exact discrete Gaussian noise
(Canonne, Kamath and Steinke 2020), whose Renyi divergence is at most the continuous one's,
so the argument above holds exactly. This is a valid common part, not necessarily the largest
one (the paper's construction is more general); nothing else (no workload of another shape,
no Laplace mechanism, no pure DP) is covered. No built-in histogram Option is a Gaussian linear
mechanism (they are Laplace-based, run at the pure epsilon within a rho), so the engine does
not use it; it is offered as a primitive.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Sequence

import numpy as np

from jostle.privacy import replay
from jostle.privacy.measures import Budget, RhoZCDPBudget

MIN_STOP_PROBABILITY = Fraction(1, 10_000)
"""The smallest stopping probability accepted (expected runs 1 / gamma at most 10,000)."""


# ---------------------------------------------------------------------------------- Liu and Talwar
@dataclass(frozen=True)
class SelectionPlan:
    """The public parameters of a private selection.

    Attributes:
        candidate_epsilon: eps1, what one candidate run (Option and score together) is DP at.
        run_share: The share of eps1 the Option's run gets (the score gets the rest).
        stop_probability: gamma, the probability of stopping after each run.
        threshold: tau for the threshold variant, None for the random-stopping best-of.
    """

    candidate_epsilon: Fraction
    run_share: Fraction
    stop_probability: Fraction
    threshold: float | None = None

    @property
    def multiplier(self) -> int:
        """3 for the random-stopping best-of, 2 for the threshold variant (Liu and Talwar)."""
        return 3 if self.threshold is None else 2

    @property
    def total_epsilon(self) -> Fraction:
        """The whole selection's pure epsilon, the one amount charged: multiplier * eps1."""
        return self.multiplier * self.candidate_epsilon

    @property
    def run_epsilon(self) -> Fraction:
        """The epsilon of one candidate's Option run."""
        return self.candidate_epsilon * self.run_share

    @property
    def score_epsilon(self) -> Fraction:
        """The epsilon of one candidate's noisy score (eps1 minus the run's: composition)."""
        return self.candidate_epsilon - self.run_epsilon

    @property
    def expected_runs(self) -> float:
        """1 / gamma, the mean number of runs of the best-of (public)."""
        return float(1 / self.stop_probability)

    def describe(self) -> str:
        """The plan in words (public)."""
        rule = (f"the best noisy score of a geometric number of runs (stopping probability {float(self.stop_probability):.3g})"
                if self.threshold is None else
                f"the first run scoring at least {self.threshold:g} (stopping probability {float(self.stop_probability):.3g})")
        return (f"private selection (Liu and Talwar 2019): {rule}; each run epsilon {float(self.candidate_epsilon):.4g} "
                f"({float(self.run_share):.0%} to the option, the rest to its score), "
                f"{self.multiplier} x {float(self.candidate_epsilon):.4g} = {float(self.total_epsilon):.4g} in all")


def plan_selection(total_epsilon: Fraction | float, stop_probability: Fraction | float, run_share: Fraction | float,
                   threshold: float | None = None) -> SelectionPlan:
    """The plan that spends exactly `total_epsilon` (eps1 = total / 3, or total / 2 with a threshold).

    Args:
        total_epsilon: The whole selection's pure epsilon (a float is read exactly).
        stop_probability: gamma in [MIN_STOP_PROBABILITY, 1] (a float is read as its shortest decimal).
        run_share: The share of each candidate's eps1 for the Option's run, in (0, 1).
        threshold: tau for the threshold variant (finite), or None.

    Raises:
        ValueError: A parameter out of range (nothing was charged or drawn).
    """
    total = Fraction(total_epsilon)
    gamma = Fraction(repr(stop_probability)) if isinstance(stop_probability, float) else Fraction(stop_probability)
    share = Fraction(repr(run_share)) if isinstance(run_share, float) else Fraction(run_share)
    if not total > 0:
        raise ValueError(f"a private selection needs a positive epsilon, got {float(total)}")
    if not MIN_STOP_PROBABILITY <= gamma <= 1:
        raise ValueError(f"the stopping probability must be in [{float(MIN_STOP_PROBABILITY)}, 1], got {float(gamma)}")
    if not 0 < share < 1:
        raise ValueError(f"the run share must be in (0, 1), got {float(share)}")
    if threshold is not None and not np.isfinite(threshold):
        raise ValueError("the threshold must be finite")
    if threshold is not None and gamma == 1:
        raise ValueError("with a threshold the stopping probability must be below 1")
    multiplier = 3 if threshold is None else 2
    return SelectionPlan(total / multiplier, share, gamma, threshold)


def draw_runs(noise: Any, stop_probability: Fraction) -> int:
    """The number of runs T >= 1, geometric with stopping probability gamma: P(T = t) =
    (1 - gamma)^(t - 1) gamma. Public randomness: exact Bernoulli(gamma) coins (`bernoulli_rational`
    on an exact source), never reading any data."""
    runs = 1
    while not bool(np.asarray(noise.bernoulli_rational(Fraction(stop_probability), 1))[0]):
        runs += 1
    return runs


@dataclass(frozen=True)
class Selected:
    """What a private selection releases: the chosen candidate, its output and its noisy score.

    (Deliberately not the number of runs, nor the other candidates: see the module docstring.)
    """

    candidate: Any
    output: Any
    score: float


Candidate = Callable[[], tuple[Any, Any, float]]
"""One run of the eps1-DP candidate mechanism: () -> (which candidate, its output, its noisy score)."""


def select_private_candidate(noise: Any, candidate: Candidate, plan: SelectionPlan,
                             charge: Callable[[Budget, str], None]) -> Selected | None:
    """Liu and Talwar's private selection (see the module docstring), charged before any draw.

    Args:
        noise: The public randomness the number of runs (or the stopping coins) is drawn from.
        candidate: One run of the candidate mechanism, eps1-DP at `plan.candidate_epsilon` (it
            draws its own noise; the caller has made it so).
        plan: From `plan_selection`.
        charge: charge(Budget(total epsilon), description), called once before anything is drawn;
            it raises to refuse (then nothing is drawn).

    Returns:
        The selected candidate (best noisy score; the first on ties), or None when the threshold
        variant stops without a score reaching the threshold.
    """
    charge(Budget(plan.total_epsilon, Fraction(0)), plan.describe())
    if plan.threshold is None:
        runs = draw_runs(noise, plan.stop_probability)  # public: drawn before any candidate runs
        best: Selected | None = None
        for _ in range(runs):
            which, output, score = candidate()
            if best is None or score > best.score:
                best = Selected(which, output, float(score))
        return best
    while True:
        which, output, score = candidate()
        if score >= plan.threshold:
            return Selected(which, output, float(score))
        if bool(np.asarray(noise.bernoulli_rational(plan.stop_probability, 1))[0]):
            return None


# ---------------------------------------------------------------------------------- the common mechanism
def tree_levels(cells: int, branching: int = 2) -> list[np.ndarray]:
    """The levels of a complete `branching`-ary tree over `cells` cells, leaves first: level k
    is a 0/1 matrix (nodes x cells) summing blocks of branching^k consecutive cells (the last
    block may be shorter), up to the root (one node). Public: from the domain size alone."""
    if cells < 1 or branching < 2:
        raise ValueError("a tree needs at least one cell and a branching of at least 2")
    levels, width = [], 1
    while True:
        nodes = -(-cells // width)
        matrix = np.zeros((nodes, cells), dtype=np.int64)
        for node in range(nodes):
            matrix[node, node * width:(node + 1) * width] = 1
        levels.append(matrix)
        if nodes == 1:
            return levels
        width *= branching


def information(strategy: np.ndarray, variance: float) -> np.ndarray:
    """The information B^T B / sigma^2 of a release B x + N(0, sigma^2 I)."""
    strategy = np.asarray(strategy, dtype=float)
    return strategy.T @ strategy / float(variance)


def gaussian_rho(info: np.ndarray) -> float:
    """The zCDP rho of a Gaussian linear release with information `info` when one row added or
    removed moves the histogram by +-e_j: max_j info_jj / 2."""
    return float(np.max(np.diag(info))) / 2.0


def loewner_below(lower: np.ndarray, upper: np.ndarray, tolerance: float = 1e-9) -> bool:
    """Whether upper - lower is positive semidefinite (to `tolerance`, relative to upper's scale)."""
    gap = np.linalg.eigvalsh((upper - lower + (upper - lower).T) / 2.0)
    return bool(gap.min() >= -tolerance * max(1.0, float(np.abs(upper).max())))


@dataclass(frozen=True)
class CommonPlan:
    """The two mechanisms of `identity_or_hierarchy` and their common part, in variances (public).

    Attributes:
        cells: The domain size; levels: the tree's levels (leaves first).
        variance: s^2, the identity's per-cell variance (rho = 1 / (2 s^2)).
        rho: What either mechanism costs, and what the common run costs in all.
    """

    cells: int
    levels: tuple[np.ndarray, ...]
    variance: Fraction
    rho: Fraction

    @property
    def height(self) -> int:
        return len(self.levels)

    @property
    def common_variance(self) -> Fraction:
        """h s^2: the leaf level of the hierarchy, every cell once."""
        return self.height * self.variance

    @property
    def identity_rest_variance(self) -> Fraction:
        """h s^2 / (h - 1): the identity's second look at every cell."""
        return self.height * self.variance / (self.height - 1)

    def informations(self) -> dict[str, np.ndarray]:
        """Information of the common part, of each mechanism and of each remainder (for checks)."""
        identity = np.eye(self.cells) / float(self.variance)
        hierarchy = sum(information(level, float(self.common_variance)) for level in self.levels)
        common = np.eye(self.cells) / float(self.common_variance)
        return {"common": common, "identity": identity, "hierarchy": hierarchy,
                "identity_rest": identity - common, "hierarchy_rest": hierarchy - common}


def plan_identity_or_hierarchy(cells: int, rho: Fraction | float, branching: int = 2) -> CommonPlan:
    """The plan of `identity_or_hierarchy` spending exactly `rho` (s^2 = 1 / (2 rho)).

    Raises:
        ValueError: Fewer than two cells (no hierarchy above the leaves), or rho not positive.
    """
    rho = Fraction(rho)
    if cells < 2:
        raise ValueError("the hierarchy needs at least two cells")
    if not rho > 0:
        raise ValueError("rho must be positive")
    return CommonPlan(int(cells), tuple(tree_levels(int(cells), branching)), 1 / (2 * rho), rho)


def _gaussian_counts(noise: Any, counts: np.ndarray, variance: Fraction) -> np.ndarray:
    """Integer counts plus exact discrete Gaussian noise of variance parameter `variance`; one
    row added or removed moves one of the counts by 1 (the replay claim "one_axis", bound 1)."""
    draws = np.asarray(noise.discrete_gaussian(Fraction(variance), counts.size), dtype=np.int64)
    output = counts.astype(np.int64) + draws.reshape(counts.shape)
    return np.asarray(replay.released(noise, "common mechanism", counts, output, "one_axis", 1))


def hierarchy_estimate(levels: Sequence[np.ndarray], releases: Sequence[np.ndarray]) -> np.ndarray:
    """The least-squares cell estimate from equal-variance releases of every level (post-processing)."""
    strategy = np.vstack([np.asarray(level, dtype=float) for level in levels])
    answers = np.concatenate([np.asarray(r, dtype=float) for r in releases])
    return np.linalg.lstsq(strategy, answers, rcond=None)[0]


@dataclass(frozen=True)
class CommonRun:
    """What `identity_or_hierarchy` releases: the common release, the choice, the final cell
    estimates (post-processing of the releases) and the releases themselves."""

    common: np.ndarray
    choice: str
    estimate: np.ndarray
    releases: tuple[np.ndarray, ...]


def identity_or_hierarchy(noise: Any, counts: Any, plan: CommonPlan, choose: Callable[[np.ndarray], str],
                          charge: Callable[[RhoZCDPBudget, str], None]) -> CommonRun:
    """Choose between the identity and the hierarchy at the cost of one of them (rho), from the
    common release (see the module docstring).

    Args:
        noise: An exact source (`discrete_gaussian`), or a simulation source on public data.
        counts: The private histogram (integer counts; one row moves one count by 1).
        plan: From `plan_identity_or_hierarchy`.
        choose: choose(common release) -> "identity" or "hierarchy" (post-processing of it).
        charge: Called once, with RhoZCDPBudget(rho), before anything is drawn.
    """
    counts = np.asarray(counts)
    if counts.shape != (plan.cells,) or counts.dtype.kind not in "iu":
        raise ValueError(f"identity_or_hierarchy takes {plan.cells} integer counts")
    charge(RhoZCDPBudget(plan.rho), f"common mechanism of identity and hierarchy (rho {float(plan.rho):.4g})")
    common = _gaussian_counts(noise, counts, plan.common_variance)
    choice = choose(common.copy())
    if choice == "identity":
        rest = _gaussian_counts(noise, counts, plan.identity_rest_variance)
        # inverse-variance combination: weights (h - 1) / h on the rest, 1 / h on the common release
        h = plan.height
        estimate = (common.astype(float) + (h - 1) * rest.astype(float)) / h
        return CommonRun(common, choice, estimate, (common, rest))
    if choice != "hierarchy":
        raise ValueError(f"the choice must be 'identity' or 'hierarchy', got {choice!r}")
    upper = [_gaussian_counts(noise, level @ counts, plan.common_variance) for level in plan.levels[1:]]
    estimate = hierarchy_estimate(plan.levels, [common, *upper])
    return CommonRun(common, choice, estimate, (common, *upper))


__all__ = ["CommonPlan", "CommonRun", "MIN_STOP_PROBABILITY", "Selected", "SelectionPlan", "draw_runs",
           "gaussian_rho", "hierarchy_estimate", "identity_or_hierarchy", "information", "loewner_below",
           "plan_identity_or_hierarchy", "plan_selection", "select_private_candidate", "tree_levels"]
