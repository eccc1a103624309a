"""An estimator-like DP redescription miner: `DPRedescriptionMiner`.

    from jostle.estimators import DPRedescriptionMiner, NumericBins, PrivacyBudget

    budget = PrivacyBudget(2.0)
    miner = DPRedescriptionMiner("MCMCTreePair", 1.0, tries=4, key="id", budget=budget,
                                 left_domains={"sex": ["F", "M"], "age": NumericBins(0, 100, 5)},
                                 right_domains={"smoker": ["yes", "no"], "bmi": NumericBins(10, 50, 4)})
    miner.fit(left, right)                 # two pandas frames over the same entities
    print(miner.to_text())                 # both queries, noisy support, Jaccard and p-value
    miner.to_frame()                       # one row per kept redescription
    miner.evaluate(public_left, public_right)   # plus the TRUE statistics, on PUBLIC frames

The data is two views of the same entities, not a matrix and a label: `fit(left, right)` takes
two pandas DataFrames matched on `key` (a column both have, unique in each: the entities are
those in both views), or by position when `key` is None. Every attribute has a PUBLIC domain
declared by the estimator's parameters (`left_domains`, `right_domains`: column -> a list of
categories, a `NumericBins(lower, upper, bins)` or a `views.Attribute` with declared edges; or a
whole `views.ViewSchema`); a column not declared is not read, and nothing is read off the data.
A value outside its domain codes as "other", a missing one as "missing": no row is refused.

Privacy (unit: one entity, its rows in both views). `fit` checks its parameters and the
declarations, codes the views, then charges the whole `epsilon` to the shared budget (`budget=`,
a `jostle.privacy.shared_budget.PrivacyBudget` shared by clones and by every family's
estimators, or `default_budget()`, which has no total and warns when fits add up) BEFORE
anything is drawn: a refused charge raises `BudgetExceededError`, draws nothing and leaves the
estimator unfitted. The miner (`algorithms.mine`) then runs under `option_guard(epsilon)`, which
refuses a step past what was charged. Only the exact samplers are offered (see `algorithms`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping

import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from jostle.learnerkit.estimators import charge_fit, check_fit_privacy
from jostle.learners.redescription.algorithms import MinerSettings, mine
from jostle.learners.redescription.declare import DEFAULT_ALGORITHM, initial_attribute, miner_settings, \
    view_from_domains
from jostle.learners.redescription.extract import Constraints
from jostle.learners.redescription.queries import RedescriptionSet
from jostle.learners.redescription.views import ViewSchema, encode_views
from jostle.privacy.shared_budget import PrivacyBudget
from jostle.privacy.subledger import option_guard

_SETTINGS = MinerSettings(DEFAULT_ALGORITHM)
_CONSTRAINTS = Constraints()


class DPRedescriptionMiner(BaseEstimator):
    """Differentially private tree-based redescription mining (Mihelčić and Miettinen 2023).

    Args:
        algorithm: "MCMCTreePair", "AltExpM" or "AltMCMC".
        epsilon: The fit's whole budget (unit: one entity in both views).
        left_domains, right_domains: Each view's public domains (see the module docstring).
        key: The entity key column of both frames (unique in each), or None to match by position.
        tries: InTr, the initial targets tried (epsilon is split over them).
        alternations: RMIter, the alternations of each try (AltExpM, AltMCMC).
        omega: MCMCTreePair's share of a try's budget for sampling the tree pair.
        depth: The trees' depth (2^depth leaves).
        min_support, max_support_share, max_pvalue, min_jaccard, max_extensions,
        max_relative_noise: The constraints and the pruning rule (`extract.Constraints`).
        initial_target: An attribute name every try starts from (None: a random one per try).
        budget: The shared `PrivacyBudget` the fit charges (None: `default_budget()`).
        random_state: Seeds the noise (None: secure randomness).

    Attributes (after fit):
        redescriptions_: The released `queries.RedescriptionSet` (kept and pruned).
        schemas_: The two public `views.ViewSchema`s.
        settings_: The `algorithms.MinerSettings` used.
        epsilon_spent_: The exact epsilon charged.
    """

    def __init__(self, algorithm: str = DEFAULT_ALGORITHM, epsilon: float = 1.0, *,
                 left_domains: Mapping[str, Any] | ViewSchema | None = None,
                 right_domains: Mapping[str, Any] | ViewSchema | None = None, key: str | None = None,
                 tries: int = _SETTINGS.tries, alternations: int = _SETTINGS.alternations,
                 omega: float | Fraction = _SETTINGS.omega, depth: int = _SETTINGS.depth,
                 min_support: int = _CONSTRAINTS.min_support, max_support_share: float = _CONSTRAINTS.max_support_share,
                 max_pvalue: float = _CONSTRAINTS.max_pvalue, min_jaccard: float = _CONSTRAINTS.min_jaccard,
                 max_extensions: int = _CONSTRAINTS.max_extensions,
                 max_relative_noise: float = _CONSTRAINTS.max_relative_noise, initial_target: str | None = None,
                 budget: PrivacyBudget | None = None, random_state: int | None = None) -> None:
        self.algorithm = algorithm
        self.epsilon = epsilon
        self.left_domains = left_domains
        self.right_domains = right_domains
        self.key = key
        self.tries = tries
        self.alternations = alternations
        self.omega = omega
        self.depth = depth
        self.min_support = min_support
        self.max_support_share = max_support_share
        self.max_pvalue = max_pvalue
        self.min_jaccard = min_jaccard
        self.max_extensions = max_extensions
        self.max_relative_noise = max_relative_noise
        self.initial_target = initial_target
        self.budget = budget
        self.random_state = random_state

    # ------------------------------------------------------------------ the data
    def _schemas(self) -> tuple[ViewSchema, ViewSchema]:
        if self.left_domains is None or self.right_domains is None:
            raise ValueError("left_domains= and right_domains= must declare every attribute's public domain (a list "
                             "of categories, NumericBins(lower, upper, bins) or views.numeric(name, edges)); none "
                             "is read off the data")
        return view_from_domains("left", self.left_domains), view_from_domains("right", self.right_domains)

    def _frames(self, left: Any, right: Any, schemas: tuple[ViewSchema, ViewSchema]) -> tuple[Any, Any]:
        """The frames' declared columns (and the key), checked: what the curator passes in."""
        frames = []
        for which, frame, schema in (("left", left, schemas[0]), ("right", right, schemas[1])):
            if not isinstance(frame, pd.DataFrame):
                raise TypeError(f"fit takes two pandas DataFrames (the views); the {which} one is a "
                                f"{type(frame).__name__}")
            wanted = list(schema.names) + ([self.key] if self.key is not None else [])
            missing = [column for column in wanted if column not in frame.columns]
            if missing:
                raise ValueError(f"the {which} view has no column(s) {missing}; its columns are {list(frame.columns)}")
            if self.key is not None and frame[self.key].duplicated().any():
                raise ValueError(f"the key '{self.key}' repeats in the {which} view: each view holds one row per "
                                 "entity (keep one row per key first)")
            frames.append(frame[wanted])
        if self.key is None and len(frames[0]) != len(frames[1]):
            raise ValueError("without key= the views are matched by position and must have the same length")
        return frames[0], frames[1]

    # ------------------------------------------------------------------ fit
    def fit(self, left: pd.DataFrame, right: pd.DataFrame) -> DPRedescriptionMiner:
        """Check, code the views, charge the whole epsilon to the shared budget, then mine.

        Args:
            left: The left view (one row per entity).
            right: The right view (one row per entity).

        Returns:
            The fitted estimator.

        Raises:
            ValueError, TypeError: Before anything is charged (bad parameters or declarations,
                frames without the declared columns, a repeated key).
            BudgetExceededError: The budget refuses the fit; nothing is drawn.
        """
        from jostle.privacy.noise import Randomness

        check_fit_privacy(self.epsilon, self.budget)
        schemas = self._schemas()
        settings = miner_settings({"algorithm": self.algorithm, "tries": self.tries,
                                   "alternations": self.alternations, "omega": self.omega, "depth": self.depth,
                                   "min_support": self.min_support, "max_support_share": self.max_support_share,
                                   "max_pvalue": self.max_pvalue, "min_jaccard": self.min_jaccard,
                                   "max_extensions": self.max_extensions,
                                   "max_relative_noise": self.max_relative_noise})
        initial = initial_attribute(schemas, self.initial_target)
        views = encode_views(*self._frames(left, right, schemas), schemas, self.key)
        noise = Randomness(seed=self.random_state)  # a bad seed fails here, before the charge
        what = f"DPRedescriptionMiner.fit ({settings.label}, epsilon {float(self.epsilon):g})"
        charged = charge_fit(type(self).__name__, self.epsilon, self.budget, what)
        released = mine(views, settings, charged, noise=noise,
                        charge=option_guard("DPRedescriptionMiner", charged), initial_attribute=initial)
        self.schemas_, self.settings_ = schemas, settings
        self.redescriptions_: RedescriptionSet = released
        self.epsilon_spent_ = charged
        return self

    # ------------------------------------------------------------------ use
    def to_frame(self, include_pruned: bool = False) -> pd.DataFrame:
        """One row per released redescription: left, right, support, jaccard, pvalue,
        left_support, right_support, pruned, origin (all noisy: post-processing)."""
        check_is_fitted(self, "redescriptions_")
        return self.redescriptions_.to_frame(include_pruned=include_pruned)

    def to_text(self, include_pruned: bool = False) -> str:
        """Both queries, noisy support, Jaccard and p-value of each kept (and pruned) redescription."""
        check_is_fitted(self, "redescriptions_")
        text = str(self.redescriptions_)
        if include_pruned:
            schemas = self.redescriptions_.schemas
            text += "".join(f"\n  {r.text(schemas)}" for r in self.redescriptions_.redescriptions if r.pruned)
        return text

    def evaluate(self, left: pd.DataFrame, right: pd.DataFrame, include_pruned: bool = True) -> pd.DataFrame:
        """`to_frame` plus the exact statistics (true_support, true_jaccard, true_pvalue) on PUBLIC
        views (a hold-out, or public data), matched like `fit`'s."""
        check_is_fitted(self, "redescriptions_")
        views = encode_views(*self._frames(left, right, self.schemas_), self.schemas_, self.key)
        return self.redescriptions_.evaluate(views, include_pruned=include_pruned)


__all__ = ["DPRedescriptionMiner"]
