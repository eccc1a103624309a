"""scikit-learn estimators of Bayesian rule lists: `DPBayesianRuleListClassifier` (DP-BRL) and
`BayesianRuleListClassifier` (Letham et al.'s non-private BRL, the baseline).

Both take the features' public domains (`domains`: a list of categories or a
`NumericBins(lower, upper, bins)` per feature, keyed by column name or in column order) and the
public class list (`classes`, at least two). Nothing is read from the data to fix a domain, a
bound or a size. Both are built on the kit's `jostle.learnerkit.estimators.DeclaredDomainClassifier`
(encoding against the declared domains, the fitted attributes shared by every family, the budget
charged before the fit draws).

Privacy of `DPBayesianRuleListClassifier.fit` (unit: one row added or removed): the pipeline of
`jostle.learners.brl.learner` with budget `epsilon`, split between private antecedent mining,
the exponential-mechanism choice of the list and the noisy capture counts (`split`, default
half for mining and a quarter each for the others, `accounting.DEFAULT_SPLIT`; what mining does
not spend goes to the other two). With `sampler="exact"` (the default) the fit is `epsilon`-DP. With
`sampler="mcmc"` the list is the last state of a finite Metropolis-Hastings chain, for which NO
differential-privacy guarantee is proved (see `jostle.learners.brl.search`); it must be asked
for explicitly and the ledger says so.

The sensitivity of the list's score is log(max_rows + C - 1) for the PUBLIC `max_rows`: declare
an upper bound on the rows that is as tight as you can honestly make it (a larger bound only
costs accuracy; a table larger than the bound stays private, its likelihood is clipped).

Across fits: before any noise is drawn (and after the arguments and data are checked), the kit's
`fit` charges its whole epsilon to `budget` (a `PrivacyBudget`, shared by clones and by the tree
estimators' fits), or to `default_budget()`, which has no total and warns when fits add up
(`jostle.privacy.shared_budget`). A refused charge raises `BudgetExceededError` with nothing
drawn and leaves the estimator unfitted.
"""

from __future__ import annotations

from abc import abstractmethod

from fractions import Fraction
from typing import Any, Sequence

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from jostle.learnerkit.estimators import ChargeCallback, DeclaredDomainClassifier, Domains
from jostle.learners.brl.accounting import DEFAULT_SPLIT
from jostle.learners.brl.learner import BRLSettings, FitResult, fit_nonprivate, fit_private
from jostle.privacy.budget import exact, floor_float
from jostle.privacy.noise import SimulationNoise
from jostle.privacy.shared_budget import PrivacyBudget


class _RuleListBase(DeclaredDomainClassifier):
    """Prediction, reports and printing of a fitted rule list (the rest is the kit's base)."""

    _model_attribute = "result_"
    result_: FitResult

    def _check_declarations(self) -> None:
        super()._check_declarations()
        if len(list(self.classes)) < 2:
            raise ValueError(f"classes must list at least two labels, got {self.classes!r}: a rule list does not "
                             "learn one class")

    def _predict_proba_codes(self, codes: np.ndarray) -> np.ndarray:
        """The probabilities of the rule capturing each row."""
        return self.result_.rule_list.predict_proba(codes)

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

    def fit(self, X: Any, y: Any) -> "_RuleListBase":
        """The kit's fit (`DeclaredDomainClassifier.fit`); a named `y` (a pandas Series, or a
        one-column DataFrame) also names the target in the printout (`target_name_`)."""
        name = getattr(y, "name", None)
        if name is None and isinstance(y, pd.DataFrame) and y.shape[1] == 1:
            name = y.columns[0]
        super().fit(X, y)
        self.target_name_ = None if name is None else str(name)  # a column name: public, like the domains
        return self

    def to_text(self, target: str | None = None, digits: int = 2) -> str:
        """The rule list as "if ... then probability ... else if ... else ...".

        Args:
            target: The class column's name in the printout; by default the name of the `y`
                the estimator was fitted on (a pandas Series' name), else "class".
            digits: Decimals of the probabilities.
        """
        check_is_fitted(self, "result_")
        if target is None:
            target = getattr(self, "target_name_", None) or "class"
        return self.result_.rule_list.to_text(self.domains_.names, self.domains_.labels, list(self.classes_), target,
                                              self._title(), digits)

    def _title(self) -> str:
        rules = self.result_.rule_list
        return (f"{type(self).__name__}: {rules.length} rule(s) and a default, average antecedent length "
                f"{rules.average_antecedent_length:.2f}")

    def _validate(self) -> None:
        self._settings().check()

    @abstractmethod
    def _settings(self) -> BRLSettings:
        """The learner's settings from the estimator's parameters (each concrete estimator's own)."""
        raise NotImplementedError

    def _domain_sizes(self) -> list[int]:
        return [int(size) for size in self.domains_.sizes]


class DPBayesianRuleListClassifier(_RuleListBase):
    """Differentially private Bayesian rule lists (DP-BRL, Belardo 2018) with private mining.

    Args:
        epsilon: The fit's whole budget (unit: one row added or removed).
        domains: Each feature's public categories (or `NumericBins`), keyed by column name or in
            column order.
        classes: The public class labels.
        max_rows: A public upper bound on the training rows (fixes the score's sensitivity,
            log(max_rows + C - 1)). Required.
        antecedents: "mined" (private DP-FIM on a share of epsilon) or "public" (the schema's
            single items, or itemsets up to `public_cardinality`; no budget).
        split: Weights of (mining, selection, estimates); the default (2, 1, 1) gives half to
            mining and a quarter to each of the others (`accounting.DEFAULT_SPLIT`).
        min_support: Mining's minimum support within a class.
        max_cardinality: Largest mined antecedents.
        public_cardinality: Largest schema antecedents.
        max_length: Longest rule list.
        max_candidates: Most lists the exact sampler enumerates (caps the antecedent set).
        max_antecedents: Most antecedents kept, the best ranked by their noisy supports (fewer
            candidates: less of the exponential mechanism's utility lost to their number).
        list_length: lambda, the prior mean length.
        antecedent_length: eta, the prior mean cardinality.
        sampler: "exact" (epsilon-DP), "greedy" (epsilon-DP: one exponential-mechanism draw per
            rule, no enumeration) or "mcmc" (NOT proved DP; see the module docstring).
        list_score: What the list draw maximises: "posterior" (Letham's, sensitivity
            log(max_rows + C - 1)) or "majority" (the rows the list classifies correctly,
            sensitivity 1: better at small budgets; not with "mcmc").
        steps: Chain steps for sampler "mcmc".
        burn_in: Unused by the private fit (kept for symmetry with the baseline).
        quantile: Mining's truncation quantile (Zeng et al.: 0.85).
        random_state: Seed of an UNSAFE reproducible noise stream (tests only).
        noise: A noise source (defaults to `Randomness(random_state)`).
        charge: charge(epsilon, description), called before each step's noise (an outside
            accountant); then the shared budget is not charged.
        budget: A shared budget charged the whole epsilon before the fit draws anything.
    """

    def __init__(self, epsilon: float = 1.0, *, domains: Domains | None = None,
                 classes: Sequence[Any] | None = None, max_rows: int | None = None, antecedents: str = "mined",
                 split: Sequence[float] = DEFAULT_SPLIT, min_support: float = 0.1, max_cardinality: int = 2,
                 public_cardinality: int = 1, max_length: int = 3, max_candidates: int = 60_000,
                 max_antecedents: int | None = 8,
                 list_length: float = 3.0, antecedent_length: float = 1.0, sampler: str = "exact",
                 list_score: str = "posterior", steps: int = 3000, burn_in: int | None = None, quantile: float = 0.85,
                 random_state: int | None = None, noise: Any = None,
                 charge: ChargeCallback | None = None, budget: PrivacyBudget | None = None) -> None:
        self._keep_parameters(locals())

    def _settings(self) -> BRLSettings:
        return BRLSettings(antecedents=self.antecedents, split=tuple(self.split), min_support=self.min_support,
                           max_cardinality=self.max_cardinality, public_cardinality=self.public_cardinality,
                           max_length=self.max_length, max_candidates=self.max_candidates,
                           max_antecedents=self.max_antecedents,
                           list_length=self.list_length, antecedent_length=self.antecedent_length,
                           sampler=self.sampler, score=self.list_score, steps=self.steps, burn_in=self.burn_in,
                           quantile=self.quantile, row_bound=self.max_rows if self.max_rows is not None else 1)

    def _check_declarations(self) -> None:
        super()._check_declarations()
        if not (isinstance(self.max_rows, (int, np.integer)) and self.max_rows >= 1):
            raise ValueError(f"declare max_rows, a public upper bound on the training rows (a whole number >= 1), "
                             f"got {self.max_rows!r}; it fixes the sensitivity and is never read from the data")

    def _charge_label(self) -> str | None:
        """With the chain sampler, the shared budget's record and so the durable ledger's
        description (`PrivacyBudget.charge` -> the account's `charge_fit`) say, as `charges_`
        does, that the fit is NOT proved differentially private."""
        if self.sampler == "mcmc":
            return (f"sampler mcmc, {self.steps} Metropolis-Hastings steps: NOT proved differentially private "
                    "(a finite chain is not at stationarity)")
        return None

    def _fit_codes(self, codes: np.ndarray, labels: np.ndarray, charged: Fraction | None) -> None:
        """Train under epsilon-DP (module docstring) with what the kit's `fit` charged: the exact
        amount charged to the shared budget or, with only an outside `charge` callback, the
        largest float not above `epsilon`."""
        epsilon = Fraction(floor_float(exact(self.epsilon))) if charged is None else charged
        self.result_ = fit_private(codes, labels, self._domain_sizes(), len(self.classes_), epsilon, self._settings(),
                                   self._noise_source(), self.charge)
        self.epsilon_spent_ = float(sum(Fraction(a) for a, _ in self.result_.charges))
        self.charges_ = list(self.result_.charges)

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

    _private = False
    _randomised = True  # the chains draw: fits with random_state None differ

    def __init__(self, *, domains: Domains | None = None,
                 classes: Sequence[Any] | None = None, min_support: float = 0.1, max_cardinality: int = 2,
                 max_length: int = 10, list_length: float = 3.0, antecedent_length: float = 1.0, steps: int = 3000,
                 chains: int = 3, burn_in: int | None = None, random_state: int | None = None) -> None:
        self._keep_parameters(locals())

    def _settings(self) -> BRLSettings:
        return BRLSettings(min_support=self.min_support, max_cardinality=self.max_cardinality,
                           max_length=self.max_length, list_length=self.list_length,
                           antecedent_length=self.antecedent_length, steps=self.steps, burn_in=self.burn_in)

    def _fit_codes(self, codes: np.ndarray, labels: np.ndarray, charged: Fraction | None) -> None:
        """Mine, search and estimate on the exact data (not private; fast floating-point draws)."""
        self.result_ = fit_nonprivate(codes, labels, self._domain_sizes(), len(self.classes_), self._settings(),
                                      SimulationNoise(self.random_state), chains=self.chains)
        self.diagnostics_ = self.result_.diagnostics

    def _title(self) -> str:
        return super()._title() + " (not private)"
