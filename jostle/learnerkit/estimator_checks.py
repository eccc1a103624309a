"""scikit-learn's estimator checks on the classifier families' estimators, with the checks that
must fail and their privacy reasons kept here, in code.

A family's estimators run scikit-learn's `check_estimator` with one call:

    from jostle.learnerkit.estimator_checks import declaring_from_data, run_estimator_checks

    run_estimator_checks(MyDPClassifier())                       # as scikit-learn constructs it
    run_estimator_checks(declaring_from_data(MyDPClassifier()))  # declarations read off each fit

`run_estimator_checks` passes `expected_failed_checks(estimator)` to scikit-learn (the form the
installed scikit-learn takes: the `expected_failed_checks` argument of `check_estimator` and
`parametrize_with_checks` since 1.6; the `_xfail_checks` tag before, which the kit's estimator
base returns from `_more_tags`), and raises `AssertionError` unless every expected failure
really fails, every other check passes, and the only skipped checks are the ones in
`expected_skipped_checks(estimator)`.

Why checks fail (the reasons, named below):
  * `DECLARED_DOMAINS_ONLY`: fit refuses data outside the declared public domains, and an
    estimator built with its default arguments declares no feature domains and no classes. The
    estimators never read them from the rows (the values present, a column's range and the
    classes present are facts about the people in the table: one person's rare value would
    show), and the checks make up their data, so no declaration can be written for them.
  * `CLAMPED_TO_DECLARED_BOUNDS`: a numeric value, infinities included, is clamped into its
    declared `NumericBins` bounds (as Jostle's loader clamps every out-of-range value), so a fit
    does not refuse an infinite value; only a missing value (NaN) is refused.
  * `CLASSES_AS_DECLARED`: declared classes are taken as given, so a float target whose values
    are declared as classes is accepted (without declared classes, a continuous target is
    refused with "Unknown label type: continuous").
And why checks are skipped:
  * `RANDOM_UNDER_DP`: a private fit draws fresh noise, so two fits on the same data differ and
    predictions are random under DP: the estimators declare the `non_deterministic` tag, and
    scikit-learn skips the checks that compare two fits (idempotence, pipeline consistency).
  * `ARRAY_API_NOT_ENABLED`: scikit-learn skips its array-API check unless `SCIPY_ARRAY_API` is
    set; it does not concern privacy.

`declaring_from_data(estimator)` returns a copy of a (default-constructed) estimator that takes
its domains and classes from each training set, to exercise every other check. NEVER use it on
private data: reading declarations off the rows is exactly what a private fit must not do.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.utils.estimator_checks import check_estimator

from jostle.learnerkit.encoding import NumericBins

DECLARED_DOMAINS_ONLY = (
    "fit refuses data outside the declared public domains, and a default-constructed estimator declares no feature "
    "domains and no classes; they are never read from the rows (the values present, a column's range and the "
    "classes present are facts about the people in the table), and the checks make up their data")
CLAMPED_TO_DECLARED_BOUNDS = (
    "an infinite value in a numeric column is clamped into its declared NumericBins bounds, as Jostle's loader "
    "clamps every out-of-range value, so fit does not refuse it: what leaves the encoder is bounded by public "
    "values whatever the data holds (a missing value is refused)")
CLASSES_AS_DECLARED = (
    "declared classes are taken as given: a float target whose values are declared as classes is accepted "
    "(without declared classes, a continuous target is refused)")
RANDOM_UNDER_DP = (
    "predictions are random under DP: a private fit draws fresh noise, so two fits on the same data differ; the "
    "estimator declares the non_deterministic tag and scikit-learn skips the checks that compare fits")
ARRAY_API_NOT_ENABLED = "scikit-learn skips it unless SCIPY_ARRAY_API is set; it does not concern privacy"

UNDECLARED_FAILURES = frozenset({
    "check_fit_score_takes_y", "check_estimators_overwrite_params", "check_dont_overwrite_parameters",
    "check_estimators_fit_returns_self", "check_readonly_memmap_input", "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit", "check_estimators_dtypes", "check_dtype_object", "check_estimators_pickle",
    "check_f_contiguous_array_estimator", "check_classifier_data_not_an_array", "check_classifiers_classes",
    "check_classifiers_train", "check_supervised_y_2d", "check_fit2d_1sample", "check_fit2d_1feature",
    "check_dict_unchanged", "check_fit_idempotent", "check_fit_check_is_fitted", "check_n_features_in",
    "check_fit2d_predict1d", "check_estimators_nan_inf",
})
"""The checks an estimator without declarations fails (`DECLARED_DOMAINS_ONLY`)."""

COMPARING_FITS = frozenset({"check_pipeline_consistency"})
"""Checks that compare two fits: scikit-learn skips them for non-deterministic (private)
estimators (`RANDOM_UNDER_DP`)."""

DETERMINISTIC_UNDECLARED_FAILURES = COMPARING_FITS | {
    "check_methods_sample_order_invariance", "check_methods_subset_invariance"}
"""Checks an estimator without declarations fails too when it is deterministic (a private one
passes the last two: they compare predictions of one fit, which it refuses alike)."""

DECLARED_FAILURES = {
    "check_estimators_nan_inf": CLAMPED_TO_DECLARED_BOUNDS,
    "check_classifiers_regression_target": CLASSES_AS_DECLARED,
}
"""The checks an estimator declaring from the data still fails, with their reasons."""


def _non_deterministic(estimator: Any) -> bool:
    return bool(estimator._draws_randomness())


def expected_failed_checks(estimator: Any) -> dict[str, str]:
    """The checks `estimator` must fail, each with its reason (scikit-learn's form).

    Args:
        estimator: A family estimator built with its default declarations (None), or a copy
            made by `declaring_from_data`.

    Returns:
        {check name: reason}, for `check_estimator(expected_failed_checks=...)`.
    """
    if isinstance(estimator, DeclaringFromData):
        return dict(DECLARED_FAILURES)
    if getattr(estimator, "domains", None) is not None or getattr(estimator, "classes", None) is not None:
        raise ValueError("run the checks on an estimator without declarations (domains=None, classes=None) or on "
                         "declaring_from_data(estimator): the checks make up data of their own shapes")
    failing = set(UNDECLARED_FAILURES)
    if not _non_deterministic(estimator):
        failing |= DETERMINISTIC_UNDECLARED_FAILURES
    return {name: DECLARED_DOMAINS_ONLY for name in sorted(failing)}


def expected_skipped_checks(estimator: Any) -> dict[str, str]:
    """The checks scikit-learn skips for `estimator`, each with its reason."""
    skipped = {} if os.environ.get("SCIPY_ARRAY_API") else {"check_array_api_input": ARRAY_API_NOT_ENABLED}
    if _non_deterministic(estimator):
        skipped |= {name: RANDOM_UNDER_DP for name in sorted(COMPARING_FITS)}
    return skipped


def run_estimator_checks(estimator: Any) -> list[dict[str, Any]]:
    """Run scikit-learn's `check_estimator` and hold it to the expected failures and skips.

    Args:
        estimator: As for `expected_failed_checks`.

    Returns:
        scikit-learn's results, one dict per check.

    Raises:
        AssertionError: An expected failure passed (or was not run), another check failed, or
            a check was skipped that `expected_skipped_checks` does not list.
    """
    expected = expected_failed_checks(estimator)
    skips = expected_skipped_checks(estimator)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(estimator, expected_failed_checks=expected, on_fail=None, on_skip=None)
    problems = []
    for result in results:
        name, status = result["check_name"], result["status"]
        if name in expected and status != "xfail":
            problems.append(f"{name} is expected to fail ({expected[name]}) but was {status}")
        elif name not in expected and status == "failed":
            problems.append(f"{name} failed: {result['exception']!r}")
        elif status == "skipped" and name not in skips:
            problems.append(f"{name} was skipped: {result['exception']}")
    ran = {result["check_name"] for result in results}
    problems += [f"{name} is expected to fail but scikit-learn did not run it" for name in sorted(set(expected) - ran)]
    if problems:
        raise AssertionError(f"{type(estimator).__name__}: " + "; ".join(problems))
    return results


# --------------------------------------------------------------------------- the declaring harness
def declared_from_the_data(X: Any, y: Any) -> tuple[list[Any], list[Any]]:
    """Domains and classes read off a training set: four bins over each finite numeric column's
    range, the values present otherwise, and the labels present. NOT private (tests only)."""
    frame = pd.DataFrame(np.asarray(X, dtype=object))
    domains: list[Any] = []
    for j in range(frame.shape[1]):
        numbers = pd.to_numeric(frame.iloc[:, j], errors="coerce").to_numpy(float)
        if len(numbers) and np.isfinite(numbers).all():
            low, high = float(numbers.min()), float(numbers.max())
            domains.append(NumericBins(low, high if high > low else low + 1, 4))
        else:
            domains.append(sorted(pd.unique(frame.iloc[:, j]), key=repr))
    return domains, sorted(pd.unique(np.asarray(y, dtype=object).ravel()), key=repr)


class DeclaringFromData:
    """Mixed in before an estimator class: each fit declares the domains and classes of its own
    training set (`declared_from_the_data`), then restores the parameters. For the checks only."""

    def fit(self, X: Any, y: Any) -> Any:
        shaped = np.asarray(X) if not sp.issparse(X) and X is not None else None
        if shaped is None or y is None or shaped.ndim != 2 or 0 in shaped.shape:
            return super().fit(X, y)  # type: ignore[misc]  # the estimator's own input checks answer
        self.domains, self.classes = declared_from_the_data(X, y)
        try:
            return super().fit(X, y)  # type: ignore[misc]
        finally:
            self.domains = self.classes = None


def declaring_from_data(estimator: Any) -> Any:
    """A copy of `estimator` (same parameters) whose fits declare from their own data.

    The class is made once per estimator class and kept in this module (so that the pickling
    checks find it by name). NEVER fit it on private data.
    """
    base = type(estimator)
    name = f"Declaring{base.__name__}"
    cls = globals().get(name)
    if cls is None or not issubclass(cls, base):
        cls = type(name, (DeclaringFromData, base), {"__module__": __name__, "__qualname__": name,
                                                     "__doc__": f"{base.__name__} declaring from its data (tests)."})
        globals()[name] = cls
    return cls(**estimator.get_params(deep=False))
