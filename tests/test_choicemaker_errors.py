"""A ChoiceMaker's predicted errors (issue 29): `ErrorEstimate`, `estimate_error` from the
experience table, the dispatch's estimate (Python and language), the charge's details, `explain`,
bad confidences, and that the prediction is post-processing of the released metafeatures."""

from __future__ import annotations

import dataclasses
import math
import re
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.choicemaker import dispatch, train
from jostle.choicemaker.error_estimates import (ErrorEstimate, check_confidence, dispatch_estimate, estimate_error,
                                                size_column)
from jostle.choicemaker.pretrained import summarise_experience
from jostle.choicemaker.private_dispatch import Runtime, dispatch as engine_dispatch
from jostle.diagnostics.errors import JostleRuntimeError
from jostle.privacy.noise import Randomness
from tests import toy_family


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory):
    """The toy ChoiceMaker (about a second to train)."""
    return train(family=toy_family.FAMILY, cache_dir=tmp_path_factory.mktemp("toy-errors"), n_jobs=1, progress=False)


def test_estimate_error_from_the_experience_table(toy) -> None:
    table = toy.experience
    for option in toy.options:
        found = estimate_error(toy, option, 0.5, confidence=0.9)
        runs = table[(table["option"] == option) & (table["epsilon"] == 0.5)]["error"]
        assert found.option == option and found.measure == toy.family.error_measure
        assert found.value == pytest.approx(runs.mean())
        assert (found.low, found.high) == pytest.approx((runs.quantile(0.05), runs.quantile(0.95)))
        assert found.confidence == 0.9 and found.source.endswith("an estimate, not a bound")
    # No option named: the one with the lowest mean error at the nearest grid budget (public facts).
    best = estimate_error(toy, None, 0.4)
    means = table[table["epsilon"] == 0.5].groupby("option")["error"].mean()
    assert best.option == means.idxmin() and "what public facts alone would pick" in best.source
    assert "the size bound not used" in estimate_error(toy, None, 0.4, size_bound=100).source
    # a shipped model keeps a summary with quantiles: the same interval at 95%
    shipped = dataclasses.replace(toy, experience=summarise_experience(table, toy.family), origin="shipped")
    assert (estimate_error(shipped, "laplace_sum", 0.5).low, estimate_error(shipped, "laplace_sum", 0.5).high) == \
        pytest.approx((estimate_error(toy, "laplace_sum", 0.5).low, estimate_error(toy, "laplace_sum", 0.5).high))


def test_size_column_is_the_widest_numeric_configuration_column() -> None:
    family = toy_family.FAMILY
    frame = pd.DataFrame({"task": ["a", "b"], "group": ["a", "b"], "epsilon": [0.1, 10.0]})
    assert size_column(family, frame) is None  # the task, its group and the budget are never the size


@pytest.mark.parametrize("confidence", [0, 1, 1.5, -0.1, math.nan, "0.95", True])
def test_a_confidence_outside_zero_one_is_refused(toy, confidence) -> None:
    with pytest.raises(ValueError, match="confidence"):
        check_confidence(confidence)
    with pytest.raises(ValueError, match="confidence"):
        estimate_error(toy, None, 1.0, confidence=confidence)
    with pytest.raises(ValueError, match="confidence"):
        ErrorEstimate("error", 0.1, 0.0, 0.2, confidence, "test")


def test_unknown_option_is_refused(toy) -> None:
    with pytest.raises(ValueError, match="unknown option"):
        estimate_error(toy, "nope", 1.0)


def test_a_dispatch_returns_the_chosen_options_prediction_and_charges_carry_it(toy) -> None:
    session = Session(1.0, ledger_path=":memory:")
    result = dispatch(toy, toy_family.FAMILY.neighbouring_inputs(3)[0], Fraction(1, 2), accountant=session,
                      noise=Randomness(5))
    found = result.estimate
    assert isinstance(found, ErrorEstimate) and found.option == result.choice
    assert found.value == result.trace.predicted_error[result.choice]
    assert (found.low, found.high) == dict(result.trace.intervals)[result.choice]
    assert found.low <= found.value <= found.high and found.confidence == 0.95
    assert "an estimate" in found.source and "held-out" in found.source
    entries = {entry.description: entry for entry in session.accountant.ledger}
    assert entries[f"option {result.choice}"].details["estimate"] == found
    assert all("estimate" not in e.details for d, e in entries.items() if d != f"option {result.choice}")


class FixedRelease(Runtime):
    """A runtime whose metafeatures release a fixed value: neighbouring inputs then release the same."""

    def measure(self, metafeature, data, amount, noise, context):
        return 0.8


def test_the_prediction_is_the_same_on_neighbours_with_the_same_released_metafeatures(toy) -> None:
    first, second = toy_family.FAMILY.neighbouring_inputs(3)
    found = []
    for data in (first, second):
        runtime = FixedRelease(toy.family, Randomness(11))
        result = engine_dispatch(toy, data, Fraction(1, 2), runtime=runtime)
        found.append((result.choice, result.estimate, result.trace.predicted_error, result.trace.intervals))
    assert found[0] == found[1]
    # and it is the trace's released prediction, nothing else
    assert dispatch_estimate(result.trace, toy.family.error_measure) == found[1][1]


SCHEMA = {"x": ("numeric", 0, 16)}
PROGRAM = """
b = t.bin("x", range(17))
h = histogram(b, "x")
choicemaker H among {DAWA, MWEM} informed by {uniformity, sparsity} trained on histogram_corpus()
estimate = H(h, all_ranges(16), epsilon=1)
p = predicted_error(H)
"""


@pytest.fixture(scope="module")
def program_session() -> Session:
    rng = np.random.default_rng(3)
    session = Session(budget=2.0, seed=3, ledger_path=":memory:")
    session.bind_private("t", pd.DataFrame({"x": rng.integers(0, 16, 400)}), SCHEMA)
    session.run(PROGRAM)
    return session


def test_a_programs_choicemaker_reports_its_prediction(program_session) -> None:
    session = program_session
    record = session.eval("p")
    maker = session.interpreter.globals.lookup("H")
    trace = maker.dispatches[-1]
    assert record["chosen"] == trace.choice and record["measure"] == "scaled_l1"
    assert record["predicted_error"] == trace.predicted_error[trace.choice]
    assert (record["low"], record["high"]) == dict(trace.intervals)[trace.choice]
    assert record["confidence"] == 0.95 and "an estimate" in record["source"]
    assert session.eval("trace(H)[0].estimate.predicted_error") == record["predicted_error"]
    charged = [e for e in session.accountant.ledger if e.mechanism == f"option {trace.choice}"]
    assert charged and charged[0].details["estimate"].value == record["predicted_error"]


def test_explain_prints_every_prediction_with_its_interval_and_marks_the_choice(program_session) -> None:
    text = program_session.eval("explain(H)")
    trace = program_session.interpreter.globals.lookup("H").dispatches[-1]
    assert "predicted error (95% interval, an estimate)" in text and "error measure:" in text
    for option, value in trace.predicted_error.items():
        low, high = dict(trace.intervals)[option]
        shown = f"{option}={value:.4g} [{low:.3g}, {high:.3g}]"
        assert shown in text.replace("\n    ", " ")
    assert f"{trace.choice}={trace.predicted_error[trace.choice]:.4g}" in text
    assert text.count("(chosen)") == 1
    assert re.search(r"(\w+)=[-+.\de]+ \[[^\]]*\] \(chosen\)", text).group(1) == trace.choice


def test_predicted_error_before_any_call_is_refused() -> None:
    session = Session(budget=1.0, ledger_path=":memory:")
    session.run("choicemaker G among {DAWA, MWEM} informed by {uniformity, sparsity} trained on histogram_corpus()\n")
    with pytest.raises(JostleRuntimeError, match="has not been called yet"):
        session.run("p = predicted_error(G)\n")
    with pytest.raises(JostleRuntimeError, match="needs a ChoiceMaker"):
        session.run("p = predicted_error(3)\n")


def test_a_choicemakers_estimate_before_measuring_for_the_cost_report(program_session) -> None:
    maker = program_session.interpreter.globals.lookup("H")
    found = maker.error_estimate(program_session.interpreter, 1.0, size_bound=400)
    assert found.measure == "scaled_l1" and found.option in ("DAWA", "MWEM")
    assert found.low <= found.value <= found.high and found.confidence == 0.95
    assert "public facts alone" in found.source and found.source.endswith("an estimate, not a bound")
    assert maker.error_estimate(program_session.interpreter, 1.0, option="MWEM").option == "MWEM"


def test_a_summary_of_many_small_groups_pools_them_into_an_interval_of_the_stated_coverage() -> None:
    """A shipped summary keeps quantiles per (budget, size, Option) group, and most groups hold a
    few runs (one task's repetitions). The estimate's interval is the mixture of the groups'
    interpolated distributions: on 300 tasks of 4 runs each, it covers about 95% of the runs (the
    widest group's quantiles, the earlier rule, covered almost all of them)."""
    from types import SimpleNamespace

    from jostle.choicemaker.error_estimates import _runs_estimate

    rng = np.random.default_rng(7)
    tasks = 300
    centres = rng.beta(2, 5, tasks)
    table = pd.DataFrame({
        "task": np.repeat(np.arange(tasks), 4), "group": np.repeat(np.arange(tasks), 4),
        "rows": np.repeat(rng.integers(100, 100_000, tasks), 4), "epsilon": 1.0, "option": "A",
        "error": np.clip(np.repeat(centres, 4) + rng.normal(0, 0.05, 4 * tasks), 0, 1)})
    family = SimpleNamespace(segment_column=None, config_columns=("task", "group", "rows", "epsilon"))
    summary = summarise_experience(table, family)
    assert len(summary) == tasks and "q_low_0.95" in summary.columns
    _, low, high, runs, how = _runs_estimate(summary, 0.95)
    covered = float(((table["error"] >= low) & (table["error"] <= high)).mean())
    assert runs == 4 * tasks and "pooled" in how
    # 1,200 runs: the share inside an exact 95% interval has sd 0.006; the interpolation adds a little
    assert 0.93 <= covered <= 0.97, covered
    assert (low, high) == pytest.approx(tuple(table["error"].quantile([0.025, 0.975])), abs=0.03)
