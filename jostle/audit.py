"""Empirical privacy auditing: high-confidence lower bounds on the epsilon a release spends.

A mechanism M is (eps, delta)-DP when, for all neighbouring datasets D, D' (one row added or
removed) and every set S of outputs, P[M(D) in S] <= e^eps P[M(D') in S] + delta. Sampling cannot
prove this, but it can refute it: if for some S the two probabilities are far enough apart, then
with high confidence no epsilon below log((P[M(D) in S] - delta) / P[M(D') in S]) holds. The
auditor here computes such a lower bound, so a test can fail when it exceeds the claimed epsilon.

Method, in two phases as in StatDP (Ding, Wang, Wang, Zhang, Kifer; CCS 2018) and DP-Sniper
(Bichsel, Steffen, Bogunovic, Vechev; IEEE S&P 2021):

1. *Selection.* Draw `selection_samples` outputs of M(D) and of M(D'). An `EventFamily` proposes
   candidate events from them (threshold sets for numbers, orthants for vectors, unions of
   categories ordered by their estimated likelihood ratio, thresholds of a likelihood ratio
   learnt by a classifier). Each candidate is scored in both directions (D over D' and D'
   over D) by the bound it is forecast to give in the test, and the best `finalists` are kept.
2. *Test.* Draw `samples` FRESH outputs of each. For every finalist, a one-sided Clopper-Pearson
   lower bound on the numerator probability and upper bound on the denominator probability
   (`scipy.stats.beta`) give log((lower - delta) / upper). All 2 x finalists bounds share the
   family-wise error `alpha` (Bonferroni), and the events were fixed before the fresh samples
   were drawn, so P[reported bound > true epsilon] <= alpha.

A mechanism under audit is a *batched runner* `run(dataset, count, seed) -> outputs`: `count`
independent outputs of M(dataset), reproducible from `seed`. Outputs are numbers (a 1-d array),
vectors (an array of shape (count, d)) or anything hashable (categorical: the exponential
mechanism's pick, the index above a threshold, a tree's structure as a string). The helpers below
build runners from the public APIs: `release_runner` calls a `jostle.language.mechanisms` function on a
private value made by the language (optionally drawing all `count` samples in one call), and
`session_runner` runs a whole Jostle program in `jostle.Session`s. `AuditCase` bundles a runner
with its adversarial neighbours and claim, so auditing a new component takes a few lines; see
docs/auditing.md. The module needs scipy, which the `test` extras install.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

import numpy as np
from scipy import stats

from jostle.privacy.budget import Accountant, Budget, RhoZCDPBudget
from jostle.privacy.noise import Randomness
from jostle.session import Session
from jostle.diagnostics.source import BUILTIN_SPAN
from jostle.language.values import Private

ALPHA = 1e-6
"""Default family-wise probability that a reported lower bound exceeds the true epsilon."""

SPAN = BUILTIN_SPAN
"""The source span to pass to `jostle.language.mechanisms` functions called from Python."""

BatchRun = Callable[[Any, int, int], Any]
"""`run(dataset, count, seed)`: `count` independent outputs of the mechanism on `dataset`."""

_AUDIT_CAP = 10**12  # the harness's own accountant: large enough never to refuse a sample
_AUDIT_DELTA_CAP = Fraction(1, 2)


# ---------------------------------------------------------------- confidence bounds
def clopper_pearson_lower(successes: Any, trials: int, alpha: float) -> Any:
    """One-sided Clopper-Pearson lower bound on a binomial proportion (confidence 1 - alpha).

    Exact: P[bound > p] <= alpha for every true p (Clopper & Pearson 1934). Vectorised over
    `successes`; the bound is 0 when there are none.
    """
    k = np.asarray(successes, dtype=float)
    with np.errstate(invalid="ignore"):
        bound = stats.beta.ppf(alpha, np.maximum(k, 1), trials - k + 1)
    return np.where(k > 0, bound, 0.0)


def clopper_pearson_upper(successes: Any, trials: int, alpha: float) -> Any:
    """One-sided Clopper-Pearson upper bound on a binomial proportion (confidence 1 - alpha)."""
    k = np.asarray(successes, dtype=float)
    with np.errstate(invalid="ignore"):
        bound = stats.beta.isf(alpha, k + 1, np.maximum(trials - k, 1))
    return np.where(k < trials, bound, 1.0)


def epsilon_bound(numerator_hits: Any, numerator_trials: int, denominator_hits: Any,
                  denominator_trials: int, delta: float, alpha: float) -> Any:
    """log((lower(P_num) - delta) / upper(P_den)), each bound at confidence 1 - alpha.

    -inf where the lower bound does not exceed delta (the event proves nothing).
    """
    lower = clopper_pearson_lower(numerator_hits, numerator_trials, alpha) - delta
    upper = clopper_pearson_upper(denominator_hits, denominator_trials, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(lower > 0, np.log(np.maximum(lower, 1e-300) / upper), -np.inf)


# ---------------------------------------------------------------- outputs and events
def as_outputs(raw: Any) -> np.ndarray:
    """Normalise a runner's outputs: numbers -> float array (n,) or (n, d); else keys (object).

    Categorical outputs become their `repr`, so lists, records and `None` can be compared.
    """
    if isinstance(raw, np.ndarray) and raw.dtype.kind in "biuf":
        return raw.astype(float)
    items = list(raw)
    if items and all(_is_number(x) for x in items):
        return np.asarray(items, dtype=float)
    if items and all(isinstance(x, (list, tuple, np.ndarray)) and len(x) and all(_is_number(v) for v in x)
                     for x in items):
        return np.asarray([np.asarray(x, dtype=float) for x in items])
    return np.asarray([repr(_hashable(x)) for x in items], dtype=object)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def _hashable(x: Any) -> Any:
    if isinstance(x, (list, tuple, np.ndarray)):
        return tuple(_hashable(v) for v in x)
    if isinstance(x, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in x.items()))
    return x.item() if isinstance(x, np.generic) else x


@dataclass(frozen=True)
class Event:
    """A set of outputs: `contains(outputs)` is a boolean mask over normalised outputs."""

    name: str
    contains: Callable[[np.ndarray], np.ndarray]


class EventFamily(Protocol):
    """Proposes candidate events from the selection samples of M(D) and M(D')."""

    def candidates(self, first: np.ndarray, second: np.ndarray) -> list[Event]:
        ...


TAIL_LEVELS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5)
"""Quantile levels (and their mirror images) at which threshold events are cut."""


def _levels(levels: Sequence[float]) -> np.ndarray:
    return np.unique(np.concatenate([levels, 1 - np.asarray(levels)]))


@dataclass(frozen=True)
class Thresholds:
    """Events {y >= c} and {y <= c} for numeric scalar outputs.

    For outputs with few distinct values (counts with discrete noise, picks encoded as
    numbers) every value is a cut and a singleton event {y == v}; otherwise the cuts are pooled
    quantiles, denser in the tails where the likelihood ratio of additive noise is largest.
    For a location family with a monotone likelihood ratio these sets contain the optimal event.
    """

    levels: Sequence[float] = TAIL_LEVELS
    max_atoms: int = 80

    def candidates(self, first: np.ndarray, second: np.ndarray) -> list[Event]:
        pooled = np.concatenate([first, second])
        pooled = pooled[np.isfinite(pooled)]
        distinct = np.unique(pooled)
        few = len(distinct) <= self.max_atoms
        cuts = distinct if few else np.unique(np.quantile(pooled, _levels(self.levels)))
        events = [Event(f"y >= {c:g}", lambda y, c=c: y >= c) for c in cuts]
        events += [Event(f"y <= {c:g}", lambda y, c=c: y <= c) for c in cuts]
        if few:
            events += [Event(f"y == {v:g}", lambda y, v=v: y == v) for v in distinct]
        return events


@dataclass(frozen=True)
class Projection:
    """Audit a function of the output (a coordinate, a sum, a norm) with another family.

    Args:
        function: Maps the normalised outputs (all at once) to the projected outputs.
        name: How the projection appears in event names, e.g. "y[0]".
        inner: The family applied to the projected outputs (Thresholds by default).
    """

    function: Callable[[np.ndarray], Any]
    name: str
    inner: Any = Thresholds()

    def candidates(self, first: np.ndarray, second: np.ndarray) -> list[Event]:
        project = lambda y: as_outputs(self.function(y))  # noqa: E731
        inner = self.inner.candidates(project(first), project(second))
        return [Event(re.sub(r"\by(?=[\[ ])", self.name, e.name), lambda y, e=e: e.contains(project(y)))
                for e in inner]


def coordinate(index: int, inner: Any = None) -> Projection:
    """The family of events on one coordinate of a vector output."""
    return Projection(lambda y: y[:, index], f"y[{index}]", inner or Thresholds())


@dataclass(frozen=True)
class Orthants:
    """Events {s_i y_i >= c_i for every constrained coordinate i} on vector outputs.

    The privacy loss of independent noise on several coordinates adds up, and it is largest
    where every coordinate lies in its own worst tail, so the worst events are products of
    per-coordinate threshold sets. Each coordinate is unconstrained, >= or <= a pooled quantile;
    all combinations are tried while they number at most `limit`, else only events that
    constrain one coordinate or every coordinate at the same level.
    """

    levels: Sequence[float] = (0.02, 0.05, 0.1, 0.2, 0.35, 0.5)
    limit: int = 5000

    def candidates(self, first: np.ndarray, second: np.ndarray) -> list[Event]:
        pooled = np.concatenate([first, second])
        dims = pooled.shape[1]
        options: list[list[tuple[str, float]]] = []
        for i in range(dims):
            column = pooled[:, i][np.isfinite(pooled[:, i])]  # NaN lies in no threshold set
            cuts = np.unique(np.quantile(column, _levels(self.levels))) if len(column) else np.array([])
            options.append([("any", 0.0)] + [(">=", c) for c in cuts] + [("<=", c) for c in cuts])
        if math.prod(len(o) for o in options) <= self.limit:
            combos = list(itertools.product(*options))
        else:
            combos = []
            for i, option in enumerate(options):
                for choice in option[1:]:
                    combos.append(tuple(choice if j == i else ("any", 0.0) for j in range(dims)))
            for rank in range(1, min(len(o) for o in options)):
                combos.append(tuple(o[rank] for o in options))
        return [self._event(c) for c in combos if any(op != "any" for op, _ in c)]

    @staticmethod
    def _event(combo: tuple[tuple[str, float], ...]) -> Event:
        parts = [f"y[{i}] {op} {c:g}" for i, (op, c) in enumerate(combo) if op != "any"]

        def contains(y: np.ndarray) -> np.ndarray:
            mask = np.ones(len(y), dtype=bool)
            for i, (op, c) in enumerate(combo):
                if op == ">=":
                    mask &= y[:, i] >= c
                elif op == "<=":
                    mask &= y[:, i] <= c
            return mask

        return Event(" and ".join(parts), contains)


@dataclass(frozen=True)
class Categories:
    """Events over categorical outputs: each category, and unions ordered by likelihood ratio.

    The event with the largest ratio P[M(D) in S] / P[M(D') in S] at a given mass consists of
    the outputs with the largest ratio (Neyman-Pearson), so besides the singletons the family
    holds every prefix of the categories sorted by their estimated ratio, in both directions.
    """

    max_events: int = 400

    def candidates(self, first: np.ndarray, second: np.ndarray) -> list[Event]:
        keys = sorted(set(first.tolist()) | set(second.tolist()))
        count_a = np.array([np.sum(first == k) for k in keys], dtype=float)
        count_b = np.array([np.sum(second == k) for k in keys], dtype=float)
        ratio = (count_a + 0.5) / len(first) / ((count_b + 0.5) / len(second))
        sets = [[k] for k in keys]
        for order in (np.argsort(-ratio, kind="stable"), np.argsort(ratio, kind="stable")):
            sets += [[keys[i] for i in order[:size]] for size in range(2, len(keys))]
        events, seen = [], set()
        for chosen in sets[: self.max_events]:
            marker = frozenset(chosen)
            if marker not in seen:
                seen.add(marker)
                label = "y in {" + ", ".join(chosen) + "}" if len(chosen) > 1 else f"y == {chosen[0]}"
                events.append(Event(label, lambda y, chosen=tuple(chosen): np.isin(y, chosen)))
        return events


@dataclass(frozen=True)
class LikelihoodRatio:
    """DP-Sniper's events for any numeric output: sets of outputs a classifier finds likeliest
    under one dataset.

    A logistic regression (scikit-learn) learns, from the selection samples, the log-odds that
    an output came from D rather than D'; it estimates the log likelihood ratio, which orders
    outputs by the evidence they give. The events are {score >= c} and {score <= c} at quantile
    cuts of the scores. `features` maps outputs to the regression's inputs (by default the
    outputs, their absolute values, so that both shifts and spreads can be learnt, and which
    coordinates are not finite).
    """

    features: Callable[[np.ndarray], np.ndarray] | None = None
    levels: Sequence[float] = TAIL_LEVELS

    def candidates(self, first: np.ndarray, second: np.ndarray) -> list[Event]:
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler

        def inputs(y: np.ndarray) -> np.ndarray:
            if self.features is not None:
                return self.features(y)
            matrix = y.reshape(len(y), -1)
            finite = np.isfinite(matrix)
            clean = np.where(finite, matrix, 0.0)  # non-finite outputs get their own indicator
            return np.hstack([clean, np.abs(clean), ~finite])

        scaler = StandardScaler().fit(inputs(np.concatenate([first, second])))
        model = LogisticRegression(max_iter=1000).fit(
            scaler.transform(inputs(np.concatenate([first, second]))),
            np.r_[np.ones(len(first)), np.zeros(len(second))])
        score = lambda y: model.decision_function(scaler.transform(inputs(y)))  # noqa: E731
        return Projection(score, "score(y)", Thresholds(self.levels, max_atoms=0)).candidates(first, second)


def default_events(outputs: np.ndarray) -> Any:
    """Thresholds for numbers, Orthants for vectors, Categories for anything else."""
    if outputs.dtype == object:
        return Categories()
    return Orthants() if outputs.ndim == 2 else Thresholds()


# ---------------------------------------------------------------- the auditor
@dataclass(frozen=True)
class AuditResult:
    """What an audit found.

    Attributes:
        epsilon_lower_bound: With probability >= 1 - alpha the mechanism's epsilon is at least
            this (-inf when no event gave evidence).
        claimed_epsilon, claimed_delta: The claim under audit.
        event: The finalist event that gave the bound.
        direction: "D/D'" (P[M(D) in S] over P[M(D') in S]) or "D'/D".
        counts: Test-phase hits of the event in the numerator and denominator samples.
        samples: Test-phase outputs per dataset; selection_samples likewise for selection.
        alpha: The family-wise error of the bound.
        finalists: How many events were tested on the fresh samples.
    """

    epsilon_lower_bound: float
    claimed_epsilon: float
    claimed_delta: float
    event: str
    direction: str
    counts: tuple[int, int]
    samples: int
    selection_samples: int
    alpha: float
    finalists: int

    @property
    def estimate(self) -> float:
        """The point estimate log((P_num - delta) / P_den) of the chosen event on the test samples."""
        numerator = self.counts[0] / self.samples - self.claimed_delta
        denominator = self.counts[1] / self.samples
        if numerator <= 0:
            return -math.inf
        return math.log(numerator / denominator) if denominator > 0 else math.inf

    @property
    def violated(self) -> bool:
        """True when the audit refutes the claim: the lower bound exceeds the claimed epsilon."""
        return self.epsilon_lower_bound > self.claimed_epsilon

    def __str__(self) -> str:
        return (f"epsilon >= {self.epsilon_lower_bound:.4f} (claimed {self.claimed_epsilon:g}"
                f"{f', delta {self.claimed_delta:g}' if self.claimed_delta else ''}) at confidence "
                f"1 - {self.alpha:g}; event {self.event} [{self.direction}], hits {self.counts[0]} vs "
                f"{self.counts[1]} of {self.samples} per side (point estimate {self.estimate:.4f})")


def _seeds(seed: int, count: int) -> list[int]:
    return [int(s) for s in np.random.SeedSequence(seed).generate_state(count)]


def audit(run: BatchRun, d: Any, d_prime: Any, claimed_epsilon: float, claimed_delta: float = 0.0,
          samples: int = 50_000, selection_samples: int | None = None, events: Any = None,
          alpha: float = ALPHA, finalists: int = 3, seed: int = 0) -> AuditResult:
    """Lower-bound the epsilon that `run` realises on the neighbours `d`, `d_prime`.

    Args:
        run: The batched runner of the mechanism under audit.
        d, d_prime: Neighbouring datasets (whatever `run` takes), chosen adversarially.
        claimed_epsilon, claimed_delta: The guarantee the mechanism claims; delta enters the
            bound as log((lower(P) - delta) / upper(P')).
        samples: Fresh outputs per dataset for the test phase.
        selection_samples: Outputs per dataset for choosing events (default samples // 4).
        events: An EventFamily; by default chosen from the kind of output (default_events).
        alpha: Family-wise probability that the bound exceeds the true epsilon.
        finalists: How many selected events are tested (Bonferroni over 2 bounds each).
        seed: Makes the audit reproducible; the four sample batches get independent seeds.

    Returns:
        The AuditResult of the finalist with the largest bound.
    """
    selection_samples = selection_samples or max(samples // 4, 1)
    seed_a, seed_b, seed_c, seed_d = _seeds(seed, 4)
    first = as_outputs(run(d, selection_samples, seed_a))
    second = as_outputs(run(d_prime, selection_samples, seed_b))
    family = events if events is not None else default_events(first)
    candidates = family.candidates(first, second)
    if not candidates:
        raise ValueError("the event family proposed no events")
    split = alpha / (2 * finalists)
    hits_a = np.array([np.count_nonzero(e.contains(first)) for e in candidates])
    hits_b = np.array([np.count_nonzero(e.contains(second)) for e in candidates])
    # Score each event by the bound it is forecast to give in the test: its smoothed selection
    # frequencies, (hits + 1) / (n + 2), as counts out of the test's sample size, at the test's
    # confidence. Rare events, whose ratio is noisy and whose bound is wide, score low; the
    # forecast only picks the finalists, the fresh test samples decide the bound.
    forecast_a = np.round((hits_a + 1) / (selection_samples + 2) * samples)
    forecast_b = np.round((hits_b + 1) / (selection_samples + 2) * samples)
    forward = epsilon_bound(forecast_a, samples, forecast_b, samples, claimed_delta, split)
    backward = epsilon_bound(forecast_b, samples, forecast_a, samples, claimed_delta, split)
    scored = [(float(s), i, "D/D'") for i, s in enumerate(forward)]
    scored += [(float(s), i, "D'/D") for i, s in enumerate(backward)]
    scored.sort(key=lambda item: (-item[0], item[1], item[2]))
    chosen = scored[:finalists]

    test_a = as_outputs(run(d, samples, seed_c))
    test_b = as_outputs(run(d_prime, samples, seed_d))
    best: AuditResult | None = None
    for _, index, direction in chosen:
        event = candidates[index]
        in_a, in_b = int(np.count_nonzero(event.contains(test_a))), int(np.count_nonzero(event.contains(test_b)))
        numerator, denominator = (in_a, in_b) if direction == "D/D'" else (in_b, in_a)
        bound = float(epsilon_bound(numerator, samples, denominator, samples, claimed_delta, split))
        result = AuditResult(bound, float(claimed_epsilon), float(claimed_delta), event.name, direction,
                             (numerator, denominator), samples, selection_samples, alpha, len(chosen))
        if best is None or bound > best.epsilon_lower_bound:
            best = result
    assert best is not None
    return best


# ---------------------------------------------------------------- runners
class AuditContext:
    """A release context for calling `jostle.language.mechanisms` functions directly from Python.

    It holds seeded randomness and an accountant with a cap no audit reaches. The accountant
    only satisfies the mechanisms' charge-before-noise protocol; what is audited is the noise.

    Args:
        seed: Seed of the (reproducible, unsafe for real releases) randomness.
        randomness: An existing source to share instead (then `seed` is ignored).
    """

    def __init__(self, seed: int, randomness: Randomness | None = None, zcdp: bool = False) -> None:
        self.randomness = randomness if randomness is not None else Randomness(seed)
        cap = RhoZCDPBudget(Fraction(_AUDIT_CAP)) if zcdp else Budget.of(_AUDIT_CAP, _AUDIT_DELTA_CAP)
        self.accountant = Accountant(cap)

    def fresh(self) -> AuditContext:
        """A context with the same randomness and an empty ledger."""
        return AuditContext(0, self.randomness)

    def in_zcdp(self) -> AuditContext:
        """A context with the same randomness whose accountant accounts in zCDP (for releases at a
        rho, which a DP accountant refuses)."""
        return AuditContext(0, self.randomness, zcdp=True)


def private_value(frame: Any, schema: Mapping[str, Any], expression: str, public_rows: bool = False,
                  table: str = "t") -> Any:
    """The private value the language computes for `expression` over `frame` bound as `table`.

    Computing an aggregate spends nothing, so the session's budget is never touched.
    """
    with _harness_session(1.0) as session:
        session.bind_private(table, frame, dict(schema), public_rows=public_rows)
        session.run(f"audit_value_ = {expression}")
        return session.interpreter.globals.lookup("audit_value_")


def _harness_session(budget: Fraction | float, delta: float = 0.0, seed: int | None = None) -> Session:
    """A session for the harness, with an in-memory ledger.

    An audit runs a mechanism thousands of times on the same data on purpose; the durable
    ledger would rightly refuse that as overspending the data's lifetime budget (and would
    record it). Each harness session still enforces its own total, per run and per block.
    """
    return Session(budget=budget, delta=delta, seed=seed, ledger_path=":memory:")


def replicate(value: Private, count: int) -> Private:
    """`count` copies of a private scalar as one private vector with the scalar's sensitivity.

    An auditing device: laplace, geometric and gaussian add independent noise to each
    coordinate with a scale set by l1 (or l2), so each coordinate of the release is distributed
    exactly as one release of the scalar and one call draws `count` independent samples. The
    vector's true sensitivity is `count` times larger: never release it as data.
    """
    if not isinstance(value, Private) or value.is_vector:
        raise TypeError("replicate takes a private scalar")
    return dataclasses.replace(value, value=np.full(count, float(value.value)))


def release_runner(release: Callable[[AuditContext, Any], Any], expression: str,
                   schema: Mapping[str, Any], vectorise: bool = False, public_rows: bool = False) -> BatchRun:
    """A runner that releases the language's value of `expression` over the dataset.

    Args:
        release: `release(ctx, value)` calls a mechanism, e.g.
            `lambda ctx, x: mechanisms.laplace(ctx, x, 0.5, SPAN)`.
        expression: A Jostle expression over the private table `t`, e.g. 'sum(t, "age")'.
        schema: The table's public schema.
        vectorise: Draw all samples in one call on `replicate(value, count)`; only for
            mechanisms that add independent per-coordinate noise to a scalar.
        public_rows: Bind the table with a public row count (randomized response).
    """
    def run(frame: Any, count: int, seed: int) -> Any:
        value = private_value(frame, schema, expression, public_rows)
        context = AuditContext(seed)
        if vectorise:
            return np.asarray(release(context, replicate(value, count)))
        return [release(context, value) for _ in range(count)]

    return run


def session_runner(program: str, output: str, schema: Mapping[str, Any], run_budget: float,
                   run_delta: float = 0.0, public_rows: bool = False, per_session: int = 40) -> BatchRun:
    """A runner that executes a Jostle program through `jostle.Session` and collects `output`.

    Each session runs the program `per_session` times in a loop, with a session budget of
    `per_session` x `run_budget`, so every run gets exactly the budget it would have alone
    (runs compose sequentially; the loop is the harness, not part of the mechanism). Short
    sessions keep the accountant's per-charge work small.

    Args:
        program: Statements over the private table `t` (no `budget` statement: give the run's
            budget with `with budget` blocks or explicit epsilons).
        output: A Jostle expression for the released output of one run, e.g. "[a, b]".
        schema: The table's public schema.
        run_budget, run_delta: What one run of the program may spend.
        public_rows: Bind the table with a public row count.
        per_session: Runs per session.
    """
    body = "\n".join("    " + line for line in program.strip("\n").splitlines())

    def run(frame: Any, count: int, seed: int) -> list[Any]:
        outputs: list[Any] = []
        batches = -(-count // per_session)
        for batch_seed in _seeds(seed, batches):
            runs = min(per_session, count - len(outputs))
            total = Fraction(str(run_budget)) * runs
            with _harness_session(total, float(Fraction(str(run_delta)) * runs), batch_seed) as session:
                session.bind_private("t", frame, dict(schema), public_rows=public_rows)
                session.run(f"audit_outputs_ = []\nfor audit_run_ in range({runs}):\n{body}\n"
                            f"    audit_outputs_ = audit_outputs_ + [{output}]\n")
                outputs.extend(_cell_values(x) for x in session.eval("audit_outputs_"))
        return outputs

    return run


def _cell_values(value: Any) -> Any:
    """A released histogram's values: `Session.eval` labels it (a pandas Series, or a DataFrame
    for a 2D one); the audit reads its cells as the flat, row-major vector the release made."""
    import pandas as pd

    if isinstance(value, (pd.Series, pd.DataFrame)):
        return value.to_numpy().reshape(-1)
    return value


# ---------------------------------------------------------------- a registry of audits
@dataclass(frozen=True)
class AuditCase:
    """One audit: a component, its adversarial neighbours and its claim.

    Attributes:
        name: Test id.
        run: The component as a batched runner.
        d, d_prime: The neighbouring datasets (a row added, chosen to be a worst case).
        epsilon, delta: The claimed guarantee.
        samples: Test-phase samples per dataset at scale 1 (selection uses a quarter).
        events: An EventFamily, or None for the default for the output kind.
        expect_violation: A negative control: the audit must refute the claim.
        at_least: Power check: the bound must reach this (the neighbours and events realise
            most of the claim), or None.
        seed: The audit's seed; by default derived from the name, so cases draw different noise.
    """

    name: str
    run: BatchRun
    d: Any
    d_prime: Any
    epsilon: float
    delta: float = 0.0
    samples: int = 100_000
    events: Any = None
    expect_violation: bool = False
    at_least: float | None = None
    seed: int | None = None

    def audit(self, scale: float = 1.0) -> AuditResult:
        """Run the audit with `scale` times the samples (thorough mode uses more)."""
        return audit(self.run, self.d, self.d_prime, self.epsilon, self.delta,
                     samples=int(self.samples * scale), events=self.events,
                     seed=self.seed if self.seed is not None else zlib.crc32(self.name.encode()))


__all__ = [
    "ALPHA", "SPAN", "AuditCase", "AuditContext", "AuditResult", "BatchRun", "Categories", "Event",
    "EventFamily", "LikelihoodRatio", "Orthants", "Projection", "Thresholds", "audit", "clopper_pearson_lower",
    "clopper_pearson_upper", "coordinate", "default_events", "epsilon_bound", "private_value",
    "release_runner", "replicate", "session_runner",
]
