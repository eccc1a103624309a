"""scikit-learn's `check_estimator` on every estimator at the front door (`jostle.estimators`).

Each estimator runs the checks twice through the kit's shipped runner
(`jostle.learnerkit.estimator_checks.run_estimator_checks`): as scikit-learn constructs it (no
declarations: the checks listed with `DECLARED_DOMAINS_ONLY` must fail, and do), and declaring
its domains from each training set (tests only: the two checks with privacy reasons must fail,
every other check must pass). The runner's own teeth are shown on two broken estimators: one
that reads its domains off the data (the expected failures then pass, and the runner says so)
and one whose predictions are wrong (a check fails, and the runner says so). Small parameters
keep the whole file under a minute on one core.
"""

from __future__ import annotations

import numpy as np
import pytest

import jostle.estimators as front
from jostle.choicemaker.families import discover
from jostle.learnerkit.estimator_checks import (DECLARED_DOMAINS_ONLY, DECLARED_FAILURES, RANDOM_UNDER_DP,
                                                declared_from_the_data, declaring_from_data, expected_failed_checks,
                                                expected_skipped_checks, run_estimator_checks)
from jostle.learnerkit.estimators import DeclaredDomainClassifier
from jostle.learners.trees import C45DecisionTreeClassifier, DPDecisionTreeClassifier

# The checks test the API, not accuracy: the private rule list runs at epsilon 10 (at epsilon 1 its
# accuracy on the checks' three-blob table falls below check_classifiers_train's 0.83: noise
# costs accuracy), seeded, and the chains are short.
SMALL = {
    "DPDecisionTreeClassifier": dict(random_state=0),
    "DPBayesianRuleListClassifier": dict(epsilon=10.0, max_rows=1000, random_state=0),
    "BayesianRuleListClassifier": dict(steps=200, chains=1, random_state=0),
    # SuLQ ID3 at rho 1 on the checks' tables (a few dozen rows, T in the hundreds) is mostly noise
    "SuLQID3Classifier": dict(rho=1e4, random_state=0),
    "SuLQPerceptronClassifier": dict(random_state=0),
}


def test_every_family_estimator_is_at_the_front_door():
    names = set(front.ESTIMATORS)
    assert {"DPDecisionTreeClassifier", "C45DecisionTreeClassifier", "DPBayesianRuleListClassifier",
            "BayesianRuleListClassifier"} <= names
    assert set(front.PRIVATE_ESTIMATORS) == {"DPDecisionTreeClassifier", "DPBayesianRuleListClassifier",
                                             "SuLQID3Classifier", "SuLQPerceptronClassifier"}
    families = set(discover())
    for name, cls in front.ESTIMATORS.items():
        assert getattr(front, name) is cls and name in front.__all__
        assert issubclass(cls, DeclaredDomainClassifier)
        assert cls.__module__.split(".")[2] in families  # found from a family, not listed
    from jostle.estimators import DPBayesianRuleListClassifier, DPDecisionTreeClassifier as Tree  # noqa: F401
    assert Tree is DPDecisionTreeClassifier
    with pytest.raises(AttributeError, match="its estimators are"):
        front.NoSuchClassifier  # noqa: B018


@pytest.mark.parametrize("name", sorted(front.ESTIMATORS))
def test_check_estimator_as_scikit_learn_constructs_it(name):
    estimator = front.ESTIMATORS[name]()
    expected = expected_failed_checks(estimator)
    assert expected and set(expected.values()) == {DECLARED_DOMAINS_ONLY}
    results = run_estimator_checks(estimator)  # raises unless exactly these fail
    statuses = {result["check_name"]: result["status"] for result in results}
    assert all(statuses[check] == "xfail" for check in expected)
    assert sum(status == "passed" for status in statuses.values()) >= 15
    if front.ESTIMATORS[name]._private:
        assert expected_skipped_checks(estimator)["check_pipeline_consistency"] == RANDOM_UNDER_DP


@pytest.mark.parametrize("name", sorted(front.ESTIMATORS))
def test_check_estimator_with_declarations_read_from_the_data(name):
    estimator = declaring_from_data(front.ESTIMATORS[name](**SMALL.get(name, {})))
    assert expected_failed_checks(estimator) == DECLARED_FAILURES
    results = run_estimator_checks(estimator)
    failed = sorted(result["check_name"] for result in results if result["status"] == "xfail")
    assert failed == sorted(DECLARED_FAILURES)
    assert estimator.domains is None and estimator.classes is None  # restored after each fit


def test_checks_on_a_declared_estimator_are_refused():
    with pytest.raises(ValueError, match="without declarations"):
        expected_failed_checks(C45DecisionTreeClassifier(domains=[["a", "b"]], classes=["p", "n"]))


class LeakyC45(C45DecisionTreeClassifier):
    """Negative control: declarations read off every training set, as a private fit must never do."""

    def fit(self, X, y):
        shaped = np.asarray(X) if X is not None else None
        if shaped is None or y is None or shaped.ndim != 2 or 0 in shaped.shape:
            return super().fit(X, y)
        self.domains, self.classes = declared_from_the_data(X, y)
        try:
            return super().fit(X, y)
        finally:
            self.domains = self.classes = None


class ConstantC45(C45DecisionTreeClassifier):
    """Negative control: a classifier whose every prediction is the first class."""

    def predict(self, X):
        return np.repeat(super().predict(X)[:1], len(super().predict(X)))


def test_an_expected_failure_that_passes_is_reported():
    with pytest.raises(AssertionError, match="is expected to fail .* but was passed"):
        run_estimator_checks(LeakyC45())


def test_an_unexpected_failure_is_reported():
    with pytest.raises(AssertionError, match="check_classifiers_train failed"):
        run_estimator_checks(declaring_from_data(ConstantC45()))
