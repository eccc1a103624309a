"""The scikit-learn estimator base of the classifier families: declared domains, one set of
fitted attributes, and the budget every fit charges before it draws.

`DeclaredDomainClassifier` is what a family's estimators subclass (`DPDecisionTreeClassifier`,
`DPBayesianRuleListClassifier` and their non-private baselines). It owns everything that does not
depend on the model: input checks, the encoding of X and y against the DECLARED public domains
and class list, the fitted attributes, the shared budget, prediction and scoring. A family adds
its constructor, its checks (`_validate`), its learner (`_fit_codes`) and its prediction on codes
(`_predict_proba_codes`).

Declared, never read. The features' domains (`domains=`: a list of categories or
`NumericBins(lower, upper, bins)` per feature, in column order or keyed by name) and the classes
(`classes=`) are public declarations. Nothing is read from the rows to fix a category, a range,
a class or a size: the values present, a column's range and the classes present are facts about
the people in the table (one person's rare value would show). A value outside its declaration is
an error for the data's curator who runs the fit (as `jostle.data.schema`'s loader's errors), a
numeric value is clamped into its declared bounds (infinities too), and a missing value is
refused. A private fit never refuses a table for its size: the number of rows is private.

One set of fitted attributes, in every family:
    classes_           the declared class list (the columns of `predict_proba`, in order)
    n_features_in_     the number of declared features
    feature_names_in_  the column names, after a fit on a DataFrame with string column names
    domains_           `EncodedDomains`: the features' names, domain sizes and code labels
    epsilon_spent_     (private fits) the composed epsilon the learner spent, never above epsilon
    charges_           (private fits) (epsilon, description) of each of the learner's charges
plus the family's model (`trees_`, `result_`), which `_model_attribute` names.

The budget across fits (privacy unit: one row added or removed). A private fit checks its
arguments and data first; then, before any noise is drawn, it charges its whole `epsilon` to the
shared `PrivacyBudget` given as `budget=` (clones share it, so `cross_val_score` and
`GridSearchCV` charge one total), or, given neither `budget=` nor an outside accountant's
`charge=` callback, to `default_budget()`, which has no total and warns from the second fit on.
A refused charge raises `BudgetExceededError` with nothing drawn and the estimator left as it
was. The learner then spends at most what was charged (each family's module docstring gives its
argument).
"""

from __future__ import annotations

from abc import ABCMeta, abstractmethod

import math
import warnings
from fractions import Fraction
from typing import Any, Callable, ClassVar, Mapping, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from jostle.learnerkit.encoding import Domain, encode_categories, encode_features
from jostle.privacy.noise import Randomness
from jostle.privacy.shared_budget import PrivacyBudget, charge_default

Domains = Sequence[Domain] | Mapping[str, Domain]
"""Declared feature domains: one per column, in column order or keyed by column name."""

ChargeCallback = Callable[[float, str], None]
"""An outside accountant's charge(epsilon, description), called before each noisy step."""


def check_fit_privacy(epsilon: Any, budget: Any) -> None:
    """A fit's privacy parameters, checked before anything is charged (every estimator's rule).

    Raises:
        ValueError: `epsilon` is not a finite number > 0.
        TypeError: `budget` is neither None nor a `PrivacyBudget`.
    """
    if not (isinstance(epsilon, (int, float, Fraction)) and not isinstance(epsilon, bool)
            and math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    if budget is not None and not isinstance(budget, PrivacyBudget):
        raise TypeError(f"budget must be a PrivacyBudget shared by fits (or None), got {budget!r}; "
                        "this fit's own epsilon is the argument epsilon=")


def charge_fit(estimator: str, epsilon: Any, budget: PrivacyBudget | None, what: str,
               stacklevel: int = 2) -> Fraction:
    """Charge a fit's whole epsilon to `budget` (None: `default_budget()`, warning when fits add
    up), before any noise is drawn; `stacklevel` counts from the caller.

    Returns:
        The exact epsilon charged (a budget snaps 0.1 to 1/10); noise must not use more.

    Raises:
        BudgetExceededError: The budget refuses; nothing is recorded.
    """
    if budget is not None:
        return Fraction(budget.charge(epsilon, what))
    return Fraction(charge_default(estimator, epsilon, what, stacklevel=stacklevel + 1))


class DeclaredDomainClassifier(ClassifierMixin, BaseEstimator, metaclass=ABCMeta):
    """A classifier over declared public domains (see the module docstring).

    Subclasses set the class attributes and implement `_fit_codes` and `_predict_proba_codes`;
    their constructors store `domains` and `classes` (and, if private, `epsilon`, `random_state`,
    `noise`, `charge` and `budget`) as scikit-learn parameters.

    Attributes:
        _model_attribute: The fitted attribute holding the model (`check_is_fitted` reads it).
        _private: Whether `fit` is differentially private (it then charges a budget).
        _randomised: Whether a non-private fit draws randomness (a sampler), so two fits differ.
    """

    _model_attribute: ClassVar[str]
    _private: ClassVar[bool] = True
    _randomised: ClassVar[bool] = False

    domains: Domains | None
    classes: Sequence[Any] | None

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True        # categories may be strings
        tags.input_tags.categorical = True
        tags.input_tags.sparse = False
        tags.input_tags.allow_nan = False
        tags.non_deterministic = self._draws_randomness()
        return tags

    def _more_tags(self) -> dict[str, Any]:
        """The tags of scikit-learn before 1.6 (later versions read `__sklearn_tags__` only): the
        same `non_deterministic`, and the checks expected to fail with their privacy reasons
        (`jostle.learnerkit.estimator_checks`; 1.6 and later take them as `check_estimator`'s
        `expected_failed_checks`)."""
        from jostle.learnerkit.estimator_checks import expected_failed_checks

        try:
            expected = expected_failed_checks(self)
        except ValueError:  # declarations given: the checks are not meant for this estimator
            expected = {}
        return {"non_deterministic": self._draws_randomness(), "allow_nan": False, "_xfail_checks": expected}

    @classmethod
    def _draws_randomness(cls) -> bool:
        """Whether two fits on the same data may differ (a private fit draws fresh noise)."""
        return cls._private or cls._randomised

    def _keep_parameters(self, arguments: Mapping[str, Any]) -> None:
        """Store the constructor's arguments (`locals()` first thing in `__init__`) as attributes
        of the same names, and nothing else: scikit-learn's convention for parameters."""
        for name, value in arguments.items():
            if name not in ("self", "__class__"):
                setattr(self, name, value)

    # ------------------------------------------------------------------ the fit
    def fit(self, X: Any, y: Any) -> DeclaredDomainClassifier:
        """Check the arguments and the data, charge the budget (private fits), then learn.

        A private fit charges its whole epsilon to the shared budget (`budget`, or
        `default_budget()`) after the checks and before any noise is drawn; a refusal
        (`BudgetExceededError`) draws nothing and leaves the estimator as it was.

        Args:
            X: A DataFrame or 2-D array, one column per declared domain.
            y: The class labels, from the declared classes.

        Returns:
            The fitted estimator.
        """
        if self._private:
            self._validate_privacy()
        self._validate()
        codes, labels, fitted = self._encode_training(X, y)
        if not self._private and codes.shape[0] == 0:  # not private: nothing to hide about the size
            raise ValueError(f"Found array with 0 sample(s) while a minimum of 1 is required by "
                             f"{type(self).__name__}")
        charged = self._charge_fit() if self._private else None
        self._set_fitted(fitted)
        self._fit_codes(codes, labels, charged)
        return self

    def _validate(self) -> None:
        """The family's checks of its parameters, before any data is read (a hook)."""

    @abstractmethod
    def _fit_codes(self, codes: np.ndarray, labels: np.ndarray, charged: Fraction | None) -> None:
        """Learn from integer codes (rows x features) and class codes; set the model attribute.

        Args:
            codes: The features' codes under `domains_`.
            labels: The class codes (indices into `classes_`).
            charged: The exact epsilon charged to the shared budget, which the learner must not
                exceed; None when only an outside `charge=` callback accounts (then `epsilon` as
                given), and for non-private fits.
        """
        raise NotImplementedError

    @abstractmethod
    def _predict_proba_codes(self, codes: np.ndarray) -> np.ndarray:
        """Class probabilities of coded rows (columns in the order of `classes_`)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ the privacy parameters
    def _validate_privacy(self) -> None:
        check_fit_privacy(getattr(self, "epsilon", None), getattr(self, "budget", None))

    def _charge_label(self) -> str | None:
        """What the charge's description calls this learner, besides its class (a hook)."""
        return None

    def _charge_fit(self) -> Fraction | None:
        """Charge this fit's whole epsilon to its shared budget, before any noise is drawn.

        Returns:
            The exact epsilon charged (a budget snaps 0.1 to 1/10), or None when only an outside
            `charge` callback accounts (the Jostle language and the ChoiceMaker fit this way).
        """
        label = self._charge_label()
        what = f"{type(self).__name__}.fit ({label + ', ' if label else ''}epsilon {float(self.epsilon):g})"
        if self.budget is not None or self.charge is None:
            return charge_fit(type(self).__name__, self.epsilon, self.budget, what, stacklevel=3)
        return None

    def _noise_source(self) -> Any:
        """The fit's randomness: `noise`, or a `Randomness` seeded by `random_state` (None: secure)."""
        return self.noise if self.noise is not None else Randomness(seed=self.random_state)

    # ------------------------------------------------------------------ input checks
    def _check_X(self, X: Any) -> Any:
        """Refuse what no declared domain can describe (sparse, complex, not 2-D); keep the rest."""
        name = type(self).__name__
        if X is None:
            raise ValueError(f"{name} needs a 2-D X (rows x features), got None")
        if sp.issparse(X):
            raise TypeError(f"{name} does not accept sparse input ({type(X).__name__}): each column is a "
                            "categorical or publicly binned feature, one declared domain per column. Pass a dense "
                            "array or a DataFrame (X.toarray() for a scipy sparse matrix).")
        if not isinstance(X, pd.DataFrame):
            X = np.asarray(X, dtype=None if hasattr(X, "dtype") else object)
            if X.ndim != 2:
                raise ValueError(f"{name} needs a 2-D X (rows x features), got {X.ndim}-D input. Reshape your data "
                                 "with X.reshape(-1, 1) if it has a single feature, or X.reshape(1, -1) if it is a "
                                 "single row.")
            complex_input = np.iscomplexobj(X)
        else:
            if X.ndim != 2:
                raise ValueError(f"{name} needs a 2-D X (rows x features)")
            complex_input = any(pd.api.types.is_complex_dtype(dtype) for dtype in X.dtypes)
        if complex_input:
            raise ValueError("Complex data not supported: the features are categories or publicly binned numbers")
        if X.shape[1] == 0:
            raise ValueError(f"Found array with 0 feature(s) (shape={X.shape}) while a minimum of 1 is required by "
                             f"{name}: declare at least one feature's domain")
        return X

    def _check_y(self, y: Any) -> np.ndarray:
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        array = y.to_numpy() if isinstance(y, (pd.Series, pd.DataFrame)) else np.asarray(y)
        if array.dtype.kind in "US":  # keep labels as given (a list mixing numbers and strings stays mixed)
            array = np.asarray(y, dtype=object)
        if array.ndim == 2 and array.shape[1] == 1:
            warnings.warn("A column-vector y was passed when a 1d array was expected; it is read as its one column.",
                          DataConversionWarning, stacklevel=4)
            array = array[:, 0]
        if array.ndim != 1:
            raise ValueError(f"y should be a 1d array of class labels, got an array of shape {array.shape}")
        if array.dtype.kind == "f":
            floats = array
        elif array.dtype.kind == "O":  # labels of mixed types: look at the float ones
            floats = np.array([v for v in array if isinstance(v, (float, np.floating))], dtype=float)
        else:  # integers, strings, booleans: no NaN possible
            floats = np.empty(0)
        if np.isnan(floats).any():
            raise ValueError("Input y contains NaN: every row needs a class label from the declared classes")
        if np.isinf(floats).any():
            raise ValueError("Input y contains infinity: every row needs a class label from the declared classes")
        if self.classes is None:
            _refuse_continuous(array)
        return array

    def _check_declarations(self) -> None:
        """Refuse a fit without declared domains and classes (a family may ask for more)."""
        if self.domains is None or self.classes is None:
            raise ValueError("declare the public domains of the features (domains=) and the public "
                             "class list (classes=); they are never read from the data")

    # ------------------------------------------------------------------ encoding
    def _encode_training(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        """Codes and labels of the training data, and the fitted attributes they fix (set by the
        caller only once the fit is charged, so a refused fit leaves the estimator as it was)."""
        X = self._check_X(X)
        array_y = self._check_y(y)
        self._check_declarations()
        assert self.domains is not None and self.classes is not None
        by_name = isinstance(X, pd.DataFrame)
        # an array's columns follow the domains' order (a mapping's keys name them)
        names = list(map(str, self.domains)) if isinstance(self.domains, Mapping) and not by_name else None
        codes, described = encode_features(X, self.domains, names)
        try:
            labels = encode_categories(array_y, list(self.classes), "class column")
        except ValueError:
            _refuse_continuous(array_y)
            raise
        if codes.shape[0] != labels.shape[0]:
            raise ValueError(f"X has {codes.shape[0]} rows but y has {labels.shape[0]}")
        if isinstance(self.domains, Mapping):
            declared = [self.domains[name] for name in (X.columns if by_name else self.domains)]
        else:
            declared = list(self.domains)
        named_frame = by_name and all(isinstance(c, str) for c in X.columns)
        # prediction reads columns by name after a fit on named columns, by position otherwise
        fitted: dict[str, Any] = {"domains_": described, "classes_": np.asarray(list(self.classes)),
                                  "n_features_in_": codes.shape[1], "_declared_domains": declared,
                                  "_by_name": named_frame or isinstance(self.domains, Mapping)}
        if named_frame:
            fitted["feature_names_in_"] = np.asarray(list(X.columns), dtype=object)
        return codes, labels, fitted

    def _set_fitted(self, fitted: Mapping[str, Any]) -> None:
        if "feature_names_in_" not in fitted and hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        for key, value in fitted.items():
            setattr(self, key, value)

    def _encode_X(self, X: Any) -> np.ndarray:
        """Codes of X under the fitted domains: columns by name after a fit on named columns."""
        check_is_fitted(self, self._model_attribute)
        X = self._check_X(X)
        names = list(self.domains_.names)
        if isinstance(X, pd.DataFrame):
            missing = [name for name in names if name not in X.columns]
            if not missing:
                if list(X.columns) != names or len(set(names)) != len(names):
                    X = X[names]  # the training column order (already it: no copy)
            elif self._by_name:
                raise ValueError(f"X lacks the column(s) {missing} the model was trained on")
            elif X.shape[1] != len(names):
                raise ValueError(self._feature_count_message(X.shape[1]))
            else:  # fitted on an unnamed array: columns are read by position
                X = X.to_numpy(dtype=object)
        elif X.shape[1] != len(names):
            raise ValueError(self._feature_count_message(X.shape[1]))
        codes, _ = encode_features(X, dict(zip(names, self._declared_domains)), names)
        return codes

    def _feature_count_message(self, count: int) -> str:
        return (f"X has {count} features, but {type(self).__name__} is expecting {self.n_features_in_} features "
                f"as input (one per declared domain: {list(self.domains_.names)})")

    # ------------------------------------------------------------------ prediction
    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities of each row (columns in the order of `classes_`)."""
        check_is_fitted(self, self._model_attribute)
        return self._predict_proba_codes(self._encode_X(X))

    def predict(self, X: Any) -> np.ndarray:
        """The most probable class of each row."""
        check_is_fitted(self, self._model_attribute)
        return self.classes_[self.predict_proba(X).argmax(axis=1)]


def _refuse_continuous(y: np.ndarray) -> None:
    """Say so when y looks like a regression target rather than class labels."""
    try:
        continuous = type_of_target(y) == "continuous"
    except ValueError:
        continuous = False
    if continuous:
        raise ValueError("Unknown label type: continuous target. A classifier's y takes values from the "
                         "declared public class list (classes=); bin a numeric target into classes first.")
