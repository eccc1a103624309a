"""scikit-learn estimators of Bayesian rule lists: `DPBayesianRuleListClassifier` (DP-BRL) and
`BayesianRuleListClassifier` (Letham et al.'s non-private BRL, the baseline).

Both take the features' public domains (`domains`: a list of categories per feature, keyed by
column name or in column order) and the public class list (`classes`); numeric columns must be
binned into public bins first. Nothing is read from the data to fix a domain, a bound or a size.

Privacy of `DPBayesianRuleListClassifier.fit` (unit: one row added or removed): the pipeline of
`jostle.learners.brl.learner` with budget `epsilon`, split between private antecedent mining,
the exponential-mechanism choice of the list and the noisy capture counts (`split`, default a
third each). With `sampler="exact"` (the default) the fit is `epsilon`-DP. With
`sampler="mcmc"` the list is the last state of a finite Metropolis-Hastings chain, for which NO
differential-privacy guarantee is proved (see `jostle.learners.brl.search`); it must be asked
for explicitly and the ledger says so.

The sensitivity of the list's score is log(max_rows + C - 1) for the PUBLIC `max_rows`: declare
an upper bound on the rows that is as tight as you can honestly make it (a larger bound only
costs accuracy; a table larger than the bound stays private, its likelihood is clipped).

Across fits: before any noise is drawn (and after the arguments and data are checked), a fit
charges its whole epsilon to `budget` (any object with `charge(epsilon, description)`, e.g.
`jostle.learners.trees.PrivacyBudget`, shared by clones), or to this family's
`default_budget()`, which has no total and warns when fits add up. A refused charge raises with
nothing drawn and leaves the estimator unfitted.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from jostle.learners.brl.accounting import default_budget
from jostle.learners.brl.learner import BRLSettings, FitResult, fit_nonprivate, fit_private
from jostle.privacy.budget import exact, floor_float
from jostle.privacy.noise import Randomness


class _RuleListBase(ClassifierMixin, BaseEstimator):
    """Encoding under the declared domains, prediction, scoring and printing."""

    result_: FitResult

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        tags.input_tags.sparse = False
        tags.input_tags.allow_nan = False
        tags.non_deterministic = True
        return tags

    # ------------------------------------------------------------------ domains and encoding
    def _declared(self, X: Any) -> tuple[list[str], list[list[Any]]]:
        if self.domains is None or self.classes is None:
            raise ValueError("declare the public domains of the features (domains=) and the public class list "
                             "(classes=); they are never read from the data")
        if isinstance(self.domains, Mapping):
            names = [str(n) for n in self.domains]
            values = [list(self.domains[n]) for n in self.domains]
        else:
            values = [list(d) for d in self.domains]
            names = ([str(c) for c in X.columns] if isinstance(X, pd.DataFrame) and X.shape[1] == len(values)
                     else [f"x{j}" for j in range(len(values))])
        for name, domain in zip(names, values):
            if not domain:
                raise ValueError(f"the domain of feature {name!r} is empty: declare its categories")
        if len(list(self.classes)) < 2:
            raise ValueError(f"classes must list at least two labels, got {self.classes!r}")
        return names, values

    def _codes(self, X: Any, names: Sequence[str], values: Sequence[Sequence[Any]], by_name: bool) -> np.ndarray:
        if X is None:
            raise ValueError(f"{type(self).__name__} needs a 2-D X (rows x features), got None")
        if isinstance(X, pd.DataFrame) and by_name:
            missing = [n for n in names if n not in X.columns]
            if missing:
                raise ValueError(f"X lacks the column(s) {missing} the rule list is declared over")
            frame = X[list(names)].to_numpy(dtype=object)
        else:
            frame = X.to_numpy(dtype=object) if isinstance(X, pd.DataFrame) else np.asarray(X, dtype=object)
        if frame.ndim != 2:
            raise ValueError(f"{type(self).__name__} needs a 2-D X (rows x features), got {frame.ndim}-D input")
        if frame.shape[1] != len(names):
            raise ValueError(f"X has {frame.shape[1]} features, but {len(names)} domains are declared ({list(names)})")
        codes = np.zeros(frame.shape, dtype=np.int64)
        for j, domain in enumerate(values):
            position = {v: i for i, v in enumerate(domain)}
            column = frame[:, j].tolist()
            try:
                codes[:, j] = [position[v] for v in column]
            except (KeyError, TypeError):
                bad = next(v for v in column if _missing(position, v))
                raise ValueError(f"feature {names[j]!r} has a value outside its declared domain: {bad!r}; declare it "
                                 f"in domains (its categories are {list(domain)})") from None
        return codes

    def _labels(self, y: Any) -> np.ndarray:
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        array = y.to_numpy(dtype=object) if isinstance(y, (pd.Series, pd.DataFrame)) else np.asarray(y, dtype=object)
        if array.ndim == 2 and array.shape[1] == 1:
            array = array[:, 0]
        position = {v: i for i, v in enumerate(self.classes)}
        try:
            return np.array([position[v] for v in array.tolist()], dtype=np.int64)
        except (KeyError, TypeError):
            bad = next(v for v in array.tolist() if _missing(position, v))
            raise ValueError(f"y has a label outside the declared classes: {bad!r} (classes={list(self.classes)})") \
                from None

    def _prepare(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        names, values = self._declared(X)
        by_name = isinstance(self.domains, Mapping) or isinstance(X, pd.DataFrame)
        codes = self._codes(X, names, values, by_name)
        labels = self._labels(y)
        if len(codes) != len(labels):
            raise ValueError(f"X has {len(codes)} rows but y has {len(labels)}")
        fitted = {"feature_names_": names, "domain_values_": values, "classes_": np.asarray(list(self.classes), dtype=object),
                  "n_features_in_": len(names), "_by_name": by_name}
        return codes, labels, fitted

    # ------------------------------------------------------------------ prediction
    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities (columns in the order of `classes_`) of the rule capturing each row."""
        check_is_fitted(self, "result_")
        codes = self._codes(X, self.feature_names_, self.domain_values_, self._by_name)
        return self.result_.rule_list.predict_proba(codes)

    def predict(self, X: Any) -> np.ndarray:
        """The most probable class of each row."""
        check_is_fitted(self, "result_")
        return self.classes_[self.predict_proba(X).argmax(axis=1)]

    # ------------------------------------------------------------------ reports
    @property
    def length_(self) -> int:
        """Rules before the default rule."""
        check_is_fitted(self, "result_")
        return self.result_.rule_list.length

    @property
    def average_antecedent_length_(self) -> float:
        """Mean number of conditions per rule."""
        check_is_fitted(self, "result_")
        return self.result_.rule_list.average_antecedent_length

    def to_text(self, target: str = "class", digits: int = 2) -> str:
        """The rule list as "if ... then probability ... else if ... else ..."."""
        check_is_fitted(self, "result_")
        return self.result_.rule_list.to_text(self.feature_names_, self.domain_values_, list(self.classes_), target,
                                              self._title(), digits)

    def _title(self) -> str:
        rules = self.result_.rule_list
        return (f"{type(self).__name__}: {rules.length} rule(s) and a default, average antecedent length "
                f"{rules.average_antecedent_length:.2f}")

    def _settings(self) -> BRLSettings:
        return BRLSettings(antecedents=self.antecedents, split=tuple(self.split), min_support=self.min_support,
                           max_cardinality=self.max_cardinality, public_cardinality=self.public_cardinality,
                           max_length=self.max_length, max_candidates=self.max_candidates,
                           max_antecedents=self.max_antecedents,
                           list_length=self.list_length, antecedent_length=self.antecedent_length,
                           sampler=self.sampler, steps=self.steps, burn_in=self.burn_in, quantile=self.quantile,
                           row_bound=self.max_rows if self.max_rows is not None else 1)


def _missing(position: Mapping[Any, int], value: Any) -> bool:
    try:
        return value not in position
    except TypeError:
        return True


class DPBayesianRuleListClassifier(_RuleListBase):
    """Differentially private Bayesian rule lists (DP-BRL, Belardo 2018) with private mining.

    Args:
        epsilon: The fit's whole budget (unit: one row added or removed).
        domains: Each feature's public categories, keyed by column name or in column order.
        classes: The public class labels.
        max_rows: A public upper bound on the training rows (fixes the score's sensitivity,
            log(max_rows + C - 1)). Required.
        antecedents: "mined" (private DP-FIM on a share of epsilon) or "public" (the schema's
            single items, or itemsets up to `public_cardinality`; no budget).
        split: Weights of (mining, selection, estimates); (1, 1, 1) is a third each.
        min_support: Mining's minimum support within a class.
        max_cardinality: Largest mined antecedents.
        public_cardinality: Largest schema antecedents.
        max_length: Longest rule list.
        max_candidates: Most lists the exact sampler enumerates (caps the antecedent set).
        max_antecedents: Most antecedents kept, the best ranked by their noisy supports (fewer
            candidates: less of the exponential mechanism's utility lost to their number).
        list_length: lambda, the prior mean length.
        antecedent_length: eta, the prior mean cardinality.
        sampler: "exact" (epsilon-DP) or "mcmc" (NOT proved DP; see the module docstring).
        steps: Chain steps for sampler "mcmc".
        burn_in: Unused by the private fit (kept for symmetry with the baseline).
        quantile: Mining's truncation quantile (Zeng et al.: 0.85).
        random_state: Seed of an UNSAFE reproducible noise stream (tests only).
        noise: A noise source (defaults to `Randomness(random_state)`).
        charge: charge(epsilon, description), called before each step's noise (an outside
            accountant); then the shared budget is not charged.
        budget: A shared budget charged the whole epsilon before the fit draws anything.
    """

    def __init__(self, epsilon: float = 1.0, *, domains: Sequence[Sequence[Any]] | Mapping[str, Sequence[Any]] | None = None,
                 classes: Sequence[Any] | None = None, max_rows: int | None = None, antecedents: str = "mined",
                 split: Sequence[float] = (1.0, 1.0, 1.0), min_support: float = 0.1, max_cardinality: int = 2,
                 public_cardinality: int = 1, max_length: int = 3, max_candidates: int = 60_000,
                 max_antecedents: int | None = 8,
                 list_length: float = 3.0, antecedent_length: float = 1.0, sampler: str = "exact",
                 steps: int = 3000, burn_in: int | None = None, quantile: float = 0.85,
                 random_state: int | None = None, noise: Any = None,
                 charge: Callable[[float, str], None] | None = None, budget: Any = None) -> None:
        self.epsilon = epsilon
        self.domains = domains
        self.classes = classes
        self.max_rows = max_rows
        self.antecedents = antecedents
        self.split = split
        self.min_support = min_support
        self.max_cardinality = max_cardinality
        self.public_cardinality = public_cardinality
        self.max_length = max_length
        self.max_candidates = max_candidates
        self.max_antecedents = max_antecedents
        self.list_length = list_length
        self.antecedent_length = antecedent_length
        self.sampler = sampler
        self.steps = steps
        self.burn_in = burn_in
        self.quantile = quantile
        self.random_state = random_state
        self.noise = noise
        self.charge = charge
        self.budget = budget

    def _validate(self) -> BRLSettings:
        if not (isinstance(self.epsilon, (int, float, Fraction)) and not isinstance(self.epsilon, bool)
                and math.isfinite(self.epsilon) and self.epsilon > 0):
            raise ValueError(f"epsilon must be a finite number > 0, got {self.epsilon!r}")
        if not (isinstance(self.max_rows, (int, np.integer)) and self.max_rows >= 1):
            raise ValueError(f"declare max_rows, a public upper bound on the training rows (a whole number >= 1), "
                             f"got {self.max_rows!r}; it fixes the sensitivity and is never read from the data")
        if self.budget is not None and not callable(getattr(self.budget, "charge", None)):
            raise TypeError(f"budget must have a charge(epsilon, description) method, e.g. "
                            f"jostle.learners.trees.PrivacyBudget; got {self.budget!r}")
        settings = self._settings()
        settings.check()
        return settings

    def fit(self, X: Any, y: Any) -> DPBayesianRuleListClassifier:
        """Train under epsilon-DP (module docstring); charges the whole epsilon before any draw."""
        settings = self._validate()
        codes, labels, fitted = self._prepare(X, y)
        what = f"{type(self).__name__}.fit (epsilon {float(self.epsilon):g})"
        if self.budget is not None:
            charged = Fraction(self.budget.charge(self.epsilon, what))
        elif self.charge is None:
            charged = default_budget().charge(exact(self.epsilon), what)
        else:
            charged = Fraction(floor_float(exact(self.epsilon)))
        for key, value in fitted.items():
            setattr(self, key, value)
        noise = self.noise if self.noise is not None else Randomness(seed=self.random_state)
        domain_sizes = [len(v) for v in self.domain_values_]
        self.result_ = fit_private(codes, labels, domain_sizes, len(self.classes_), charged, settings, noise,
                                   self.charge)
        self.epsilon_spent_ = float(sum(Fraction(a) for a, _ in self.result_.charges))
        self.charges_ = list(self.result_.charges)
        return self

    def _title(self) -> str:
        return super()._title() + f" (epsilon {float(self.epsilon):g})"


class BayesianRuleListClassifier(_RuleListBase):
    """Letham et al.'s Bayesian rule lists, NOT private: the baseline (FP-growth antecedents,
    Metropolis-Hastings chains, the best list after burn-in, posterior-mean probabilities).

    Args:
        domains, classes: As for `DPBayesianRuleListClassifier`.
        min_support, max_cardinality: FP-growth's minimum support (within a class) and largest itemsets.
        max_length: Longest rule list.
        list_length, antecedent_length: lambda and eta.
        steps: Steps per chain.
        chains: Independent chains; the best list over all of them is kept.
        burn_in: Steps before the best list is looked for (None: half the steps).
        random_state: Seed.
    """

    def __init__(self, *, domains: Sequence[Sequence[Any]] | Mapping[str, Sequence[Any]] | None = None,
                 classes: Sequence[Any] | None = None, min_support: float = 0.1, max_cardinality: int = 2,
                 max_length: int = 10, list_length: float = 3.0, antecedent_length: float = 1.0, steps: int = 3000,
                 chains: int = 3, burn_in: int | None = None, random_state: int | None = None) -> None:
        self.domains = domains
        self.classes = classes
        self.min_support = min_support
        self.max_cardinality = max_cardinality
        self.max_length = max_length
        self.list_length = list_length
        self.antecedent_length = antecedent_length
        self.steps = steps
        self.chains = chains
        self.burn_in = burn_in
        self.random_state = random_state

    def _settings(self) -> BRLSettings:
        return BRLSettings(min_support=self.min_support, max_cardinality=self.max_cardinality,
                           max_length=self.max_length, list_length=self.list_length,
                           antecedent_length=self.antecedent_length, steps=self.steps, burn_in=self.burn_in)

    def fit(self, X: Any, y: Any) -> BayesianRuleListClassifier:
        """Mine, search and estimate on the exact data (not private)."""
        settings = self._settings()
        settings.check()
        codes, labels, fitted = self._prepare(X, y)
        for key, value in fitted.items():
            setattr(self, key, value)
        from jostle.privacy.noise import SimulationNoise  # public data: fast floating-point draws

        self.result_ = fit_nonprivate(codes, labels, [len(v) for v in self.domain_values_], len(self.classes_),
                                      settings, SimulationNoise(self.random_state), chains=self.chains)
        self.diagnostics_ = self.result_.diagnostics
        return self

    def _title(self) -> str:
        return super()._title() + " (not private)"
