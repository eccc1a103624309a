"""A family written from the checklist of docs/architecture.md alone passes the shipped
conformance checks in one call (`jostle.choicemaker.conformance.check_family`), and the front
door trains and dispatches it like any family."""

from __future__ import annotations

import pytest

from jostle.choicemaker import dispatch, train
from jostle.choicemaker.conformance import ConformanceError, check_family
from jostle.privacy.noise import Randomness
from tests.checklist_family.family import FAMILY, MedianFamily
from jostle.learnerkit.metafeatures import FunctionMetafeature
from tests.checklist_family.metafeatures import MEDIAN_METAFEATURES, call_epsilon, log_domain, noisy_log_size
from tests.checklist_family.task import MedianData


def test_the_checklist_family_passes_the_shipped_checks(tmp_path) -> None:
    subject = check_family(FAMILY, workdir=tmp_path)
    assert set(subject.choicemaker.options) == {"fine_median", "coarse_median"}


def test_the_checklist_family_trains_and_dispatches_through_the_front_door(tmp_path) -> None:
    trained = train(list(FAMILY.options().values()), family=FAMILY, cache_dir=tmp_path, n_jobs=1, progress=False)
    charged: list = []
    data = MedianData(list(range(0, 200, 2)) * 20, 256)  # median 98
    result = dispatch(trained, data, 20.0, noise=Randomness(1), charge=lambda cost, what: charged.append(what))
    assert result.choice in {"fine_median", "coarse_median"} and charged[-1] == f"option {result.choice}"
    assert abs(result.result - 98) <= 256 / 8  # within one coarse bin at a large budget


def test_the_checks_catch_the_checklist_family_broken() -> None:
    """A negative control: the same family with its noisy metafeature's sensitivity argument
    dropped fails the declarations check in the same one call."""

    class Undeclared(MedianFamily):
        name = "checklist_median_undeclared"

        def metafeatures(self):
            return {**MEDIAN_METAFEATURES, "log_size": FunctionMetafeature("log_size", True, noisy_log_size)}

    with pytest.raises(ConformanceError, match=r"^\[checklist_median_undeclared\] declarations: "):
        check_family(Undeclared())


def test_an_outside_metafeature_is_fingerprinted_by_its_own_source() -> None:
    """The experience cache keys on a metafeature's fingerprint: two functions written outside
    `jostle/` under one name must not share it (an edit to one would not retrain)."""
    first = FunctionMetafeature("public_fact", False, log_domain)
    second = FunctionMetafeature("public_fact", False, call_epsilon)
    assert first.fingerprint != second.fingerprint
