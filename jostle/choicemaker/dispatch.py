"""The private run of a ChoiceMaker, for every family: measure, choose, charge, run, trace.

`dispatch(choicemaker, data, epsilon, runtime)` is the one function every family's private
choice goes through (the language's `H(...)` calls, the Python API, the benchmarks):

  1. the segment of the input is looked up (an untrained segment fails before any charge);
  2. the metafeatures the meta-model reads are measured (`measurement.measure_features`): each
     noisy budget unit is charged its exact part of the share before its noise is drawn;
  3. the meta-model predicts every Option's error from the released values and picks the
     lowest (post-processing: it costs nothing); Options without a trained prediction may bring
     a prior (`Runtime.priors`, the language's `predict(F)`), which `Runtime.prepare` checked
     before step 1, so that a prior cannot fail on a release after the share is charged;
  4. the chosen Option's part is charged in full (`Option` states its cost before it runs:
     run with budget e, it is e-DP), then it runs;
  5. a `Trace` records what was released and why (post-processing of released values).
Every charge goes through a `BudgetGuard`, which adds the charges up exactly and refuses, before
anything is drawn, one that would take the total above epsilon. Privacy: sequential composition
of the metafeature units and the Option's run; the plan's parts add up to epsilon exactly.

The `Runtime` says how to charge, measure and run: the default serves Python callers (an
optional `charge(epsilon, description)` callback, a noise source); the language supplies one that
charges its accountant and runs Jostle-defined Options and metafeatures in the interpreter.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any, Callable, Hashable, Mapping

from jostle.choicemaker.family import Family, exact
from jostle.choicemaker.measurement import default_measure, measure_features
from jostle.privacy.budget import floor_float

ChargeFunction = Callable[[Fraction, str], None]


class ChoiceBudgetError(ValueError):
    """A charge would take a dispatch's total above its epsilon (nothing was drawn for it)."""


class BudgetGuard:
    """Exact running total of a dispatch's charges, checked against its epsilon.

    `charge(epsilon, description)` refuses a charge that would exceed the total (before the
    caller measures anything), then forwards it to the outside accountant `callback`.
    """

    def __init__(self, epsilon: Any, callback: ChargeFunction | None = None) -> None:
        self.epsilon = exact(epsilon)
        self.callback = callback
        self.spent = Fraction(0)
        self.records: list[tuple[Fraction, str]] = []

    def charge(self, epsilon: Any, description: str) -> None:
        amount = exact(epsilon)
        if not amount > 0:
            raise ValueError(f"a charge needs epsilon > 0, got {float(amount)} for {description}")
        after = self.spent + amount
        if after > self.epsilon:
            raise ChoiceBudgetError(f"{description}: epsilon {float(amount):g} would bring the total to "
                                    f"{float(after):.17g}, over {float(self.epsilon):.17g}")
        if self.callback is not None:
            self.callback(amount, description)
        self.spent = after
        self.records.append((amount, description))


class Runtime:
    """How a dispatch charges, measures and runs; this default serves Python callers.

    Args:
        family: The learner family.
        noise: Randomness for the metafeatures (and the Option unless `option_noise` is given).
        charge: charge(exact epsilon, description), called before every noisy draw; it should
            raise if the outside budget cannot pay.
        option_noise: option_noise(name) gives the chosen Option's noise source (benchmarks on
            public data pass each fixed algorithm's seed: common random numbers).
    """

    def __init__(self, family: Family, noise: Any, charge: ChargeFunction | None = None,
                 option_noise: Callable[[str], Any] | None = None) -> None:
        self.family = family
        self.noise = noise
        self.callback = charge
        self.option_noise = option_noise

    def charge(self, amount: Fraction, description: str) -> None:
        if self.callback is not None:
            self.callback(amount, description)

    def measure(self, metafeature: Any, data: Any, amount: Fraction, noise: Any, context: Any) -> float:
        return default_measure(metafeature, data, amount, noise, context)

    def run(self, option: Any, data: Any, amount: Fraction, released: Mapping[str, float]) -> Any:
        noise = self.noise if self.option_noise is None else self.option_noise(option.name)
        return self.family.run(option, data, floor_float(amount), noise, released)

    def prepare(self) -> None:
        """Called by `dispatch` before anything is charged: a runtime checks here whatever could
        otherwise fail after a charge (the language checks its options' `predict(F)` priors,
        which run once the metafeatures are released). Nothing to check by default."""

    def charges_itself(self, part: Any) -> bool:
        """Whether a part charges its own releases within its part of the plan. Never here: a
        Python caller's parts are charged by the engine, whatever they claim; only the language's
        runtime knows parts (Jostle-defined ones) whose own releases reach its accountant."""
        return False

    def priors(self, features: Mapping[str, float]) -> dict[str, float]:
        """Predicted errors of Options the meta-model cannot predict (none by default)."""
        return {}


@dataclass(frozen=True)
class ChoiceSpec:
    """An untrained ChoiceMaker: it chooses by the runtime's priors alone."""

    family: Family
    options: dict[str, Any]
    metafeatures: list[Any]
    mf_share: float

    def metafeatures_for(self, segment: Hashable = None) -> list[Any]:
        return list(self.metafeatures)

    def metafeature_share(self, segment: Hashable = None) -> float:
        return self.mf_share if any(m.cost for m in self.metafeatures) else 0.0


@dataclass(frozen=True)
class Trace:
    """What one dispatch released and why (public: post-processing of released values)."""

    choicemaker: str
    family: str
    where: str
    segment: str
    metafeatures: dict[str, float]
    predicted_error: dict[str, float]
    prior: dict[str, float]
    choice: str
    epsilon: float
    metafeature_epsilon: float
    option_epsilon: float
    charges: tuple[tuple[str, float], ...] = field(default=())
    noisy: tuple[str, ...] = ()  # the metafeatures that read the data (the others are public facts)
    measuring: str = ""  # what training found about measuring (a public fact about the corpus)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class DispatchResult:
    """What `dispatch` released: the chosen Option's result, the choice and its trace.

    Attributes:
        result: The chosen Option's release (an estimate, a model).
        choice: Name of the Option that ran.
        features: Released metafeature values.
        predictions: Predicted error of every Option.
        budget_split: Description -> exact epsilon of every part of the plan (they add up to
            epsilon; the chosen Option's part is keyed "option <name>").
        trace: The dispatch's trace.
    """

    result: Any
    choice: str
    features: dict[str, float]
    predictions: dict[str, float]
    budget_split: dict[str, Fraction]
    trace: Trace

    @property
    def answer(self) -> Any:  # histogram families call their result an answer
        return self.result

    @property
    def model(self) -> Any:  # learner families call it a model
        return self.result


def dispatch(choicemaker: Any, data: Any, epsilon: Any, noise: Any = None, charge: ChargeFunction | None = None,
             option_noise: Callable[[str], Any] | None = None, *, runtime: Runtime | None = None,
             name: str = "choicemaker", where: str = "") -> DispatchResult:
    """Choose and run the best Option privately, spending at most `epsilon` in total.

    Args:
        choicemaker: A `engine.TrainedChoiceMaker`, or a `ChoiceSpec` (choose by priors).
        data: The private input, as the family's Options read it.
        epsilon: The whole budget (metafeatures plus the chosen Option), a float or a Fraction.
        noise, charge, option_noise: For the default `Runtime` (ignored when `runtime` is given).
        runtime: How to charge, measure and run (default: `Runtime(family, noise, charge)`).
        name: The ChoiceMaker's name, for the trace.
        where: Where it was called, for the trace.
    """
    family = choicemaker.family
    total = exact(epsilon)
    if not (total > 0 and math.isfinite(float(total))):
        raise ValueError(f"epsilon must be positive and finite, got {epsilon!r}")
    runtime = runtime or Runtime(family, noise, charge, option_noise)
    runtime.prepare()  # what could fail after a charge is refused before any (the priors)
    segment = family.segment_of(data)
    trained = not isinstance(choicemaker, ChoiceSpec)
    metafeatures = choicemaker.metafeatures_for(segment)  # an untrained segment fails here, before any charge
    available = {n: o for n, o in choicemaker.options.items() if segment in family.segments(o)}
    if not available:
        raise ValueError(f"{name} has no option for {family.segment_label(segment)} inputs")
    guard = BudgetGuard(total, runtime.charge)
    measured = measure_features(family, metafeatures, data, total, choicemaker.metafeature_share(segment),
                                runtime.noise, guard.charge, runtime.measure, runtime.charges_itself)
    priors = runtime.priors(measured.features)
    if trained:
        choice, predictions = choicemaker.choose(measured.features, segment)
        for option_name, prior in priors.items():
            predictions.setdefault(option_name, prior)  # an Option the corpus could not train
    else:
        predictions = dict(priors)
        ranked = sorted((p, n) for n, p in predictions.items() if n in available and math.isfinite(p))
        if not ranked:
            raise ValueError(f"{name} has no prediction for any of its options")
        choice = ranked[0][1]
    option = available[choice]
    option_epsilon = measured.option_epsilon
    if not runtime.charges_itself(option):
        guard.charge(option_epsilon, f"option {choice}")
    result = runtime.run(option, data, option_epsilon, measured.features)
    decision = choicemaker.measuring_decision(segment) if trained else None
    trace = Trace(name, family.name, where, family.segment_label(segment), dict(measured.features),
                  {n: float(predictions[n]) for n in available if n in predictions}, dict(priors), choice,
                  float(total), float(total - option_epsilon), float(option_epsilon),
                  tuple((description, float(amount)) for amount, description in guard.records),
                  tuple(m.name for m in metafeatures if m.cost), decision.sentence() if decision else "")
    split = {k: v for k, v in measured.budget_split.items() if k != "option"}
    split[f"option {choice}"] = option_epsilon
    return DispatchResult(result, choice, dict(measured.features), predictions, split, trace)


def explain(traces: list[Mapping[str, Any]], name: str = "the ChoiceMaker") -> str:
    """A readable account of dispatches (post-processing of released values and public facts).

    Noisy metafeatures (released with part of the budget) and public facts (the domain size, the
    budget) are shown apart; when training found that measuring does not pay, it says so, with
    the held-out scores on the public corpus that decided it.
    """
    if not traces:
        return f"{name} has not been called yet"
    lines = []
    for trace in traces:
        get = trace.get
        lines.append(f"{get('choicemaker')} at {get('where')}: chose {get('choice')}")
        features = dict(get("metafeatures"))
        noisy = set(get("noisy") or ())
        if noisy:
            lines.append("  metafeatures (noisy): " + ", ".join(f"{k}={v:.4g}" for k, v in features.items() if k in noisy))
        public = {k: v for k, v in features.items() if k not in noisy}
        if public:
            lines.append("  public facts:         " + ", ".join(f"{k}={v:.4g}" for k, v in public.items()))
        if get("measuring"):
            lines.append(textwrap.fill(get("measuring"), width=100, initial_indent="  training found:       ",
                                       subsequent_indent=" " * 24))
        predicted = sorted(dict(get("predicted_error")).items(), key=lambda kv: kv[1])
        lines.append("  predicted error:      " + ", ".join(f"{k}={v:.4g}" for k, v in predicted))
        lines.append(f"  budget: epsilon {get('epsilon'):.6g} = {get('metafeature_epsilon'):.6g} on metafeatures "
                     f"+ {get('option_epsilon'):.6g} on {get('choice')}")
    return "\n".join(lines)
