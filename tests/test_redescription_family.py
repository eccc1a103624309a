"""Issue 25: the redescription family as the ChoiceMaker engine sees it (family, Options,
metafeatures, task and corpus).

What could fail: an Option charging more (or other) than its planned cost, or drawing before a
refused charge; an Option's settings reading the true entity count; a public metafeature
reading private data (different on neighbours); the noisy count's sensitivity; the error measure
(its empty-set rule, or scoring the pruned redescriptions); the corpus changing between runs;
the neighbouring inputs being more than one entity apart.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from jostle.choicemaker.budgets import pure_cost
from jostle.choicemaker.family import MetafeatureContext
from jostle.choicemaker.measurement import measure_features
from jostle.learners.redescription.corpus import (FLIPS, NOISE_ATTRIBUTES, NUMERIC_SHARES, PLANTED,
                                                  redescription_corpus)
from jostle.learners.redescription.extract import Constraints
from jostle.learners.redescription.family import FAMILY, RedescriptionData
from jostle.learners.redescription.metafeatures import COUNT_RELEASE, REDESCRIPTION_METAFEATURES
from jostle.learners.redescription.options import (LARGE_ENTITIES, REDESCRIPTION_OPTIONS, miner_settings,
                                                   tries_for)
from jostle.learners.redescription.planted import planted_two_views
from jostle.learners.redescription.queries import RedescriptionSet, true_statistics
from jostle.learners.redescription.task import (RedescriptionGrid, instances, planned_runs, redescription_error,
                                                remove_entity)
from jostle.privacy.measures import Budget
from jostle.privacy.noise import Randomness, SimulationNoise
from jostle.privacy.subledger import OverBudgetError
from tests.test_ilp_family import _Recorder, _ZeroNoise  # a capped ledger recording draws; noise of 0

VIEWS = planted_two_views(400, 3, planted=2, noise_attributes=2).views


def _data(n: int = 400, seed: int = 3) -> RedescriptionData:
    views = VIEWS if (n, seed) == (400, 3) else planted_two_views(n, seed, planted=2, noise_attributes=2).views
    return RedescriptionData(views, 10, "test")


# ---------------------------------------------------------------------------------- the Options
@pytest.mark.parametrize("name", sorted(REDESCRIPTION_OPTIONS))
def test_every_option_spends_exactly_its_budget_and_charges_before_drawing(name):
    option = REDESCRIPTION_OPTIONS[name]
    budget = Budget(Fraction(7, 10), Fraction(0))
    assert option.planned_cost(budget) == pure_cost(budget) == budget
    recorder = _Recorder(Fraction(7, 10))
    result = option.learn(_data(), Fraction(7, 10), recorder.draws(), recorder.charge)
    assert sum(amount for kind, amount in recorder.events if kind == "charge") == Fraction(7, 10)
    assert recorder.events[0][0] == "charge"  # a charge before any draw
    assert isinstance(result, RedescriptionSet) and result.algorithm.startswith(option.algorithm)


@pytest.mark.parametrize("name", ["AltExpMNonRobust", "AltMCMCStable", "MCMCTreePair"])
def test_an_option_over_its_cap_is_refused_before_drawing(name):
    option = REDESCRIPTION_OPTIONS[name]
    nothing = _Recorder(Fraction(0))
    with pytest.raises(OverBudgetError):
        option.learn(_data(), Fraction(1), nothing.draws(), nothing.charge)
    assert nothing.events == [("refused", nothing.events[0][1])]  # refused first, nothing drawn
    half = _Recorder(Fraction(1, 2))
    with pytest.raises(OverBudgetError):
        option.learn(_data(), Fraction(1), half.draws(), half.charge)
    assert half.events[-1][0] == "refused"  # the refused step drew nothing after it
    assert sum(amount for kind, amount in half.events if kind == "charge") <= Fraction(1, 2)


def test_option_names_are_the_announced_ones_and_fingerprints_differ():
    assert set(REDESCRIPTION_OPTIONS) == {"AltExpMNonRobust", "AltExpMStable", "AltMCMCNonRobust", "AltMCMCStable",
                                         "MCMCTreePair", "MCMCTreePairBalanced"}
    assert len({option.fingerprint for option in REDESCRIPTION_OPTIONS.values()}) == len(REDESCRIPTION_OPTIONS)


def test_settings_follow_the_paper_and_the_public_budget():
    assert [tries_for(e) for e in (0.01, 0.02, 0.034, 0.05, 0.1, 1.0, 100.0)] == [1, 1, 2, 3, 4, 4, 4]
    data = _data()
    for epsilon, m in ((1.0, 4), (0.01, 1), (0.05, 3)):
        robust = miner_settings(REDESCRIPTION_OPTIONS["AltExpMNonRobust"], epsilon, data)
        stable = miner_settings(REDESCRIPTION_OPTIONS["AltMCMCStable"], epsilon, data)
        pair = miner_settings(REDESCRIPTION_OPTIONS["MCMCTreePairBalanced"], epsilon, data)
        assert (robust.algorithm, robust.tries, robust.alternations) == ("AltExpM", 1, m)
        assert (stable.algorithm, stable.tries, stable.alternations) == ("AltMCMC", m, 1)
        assert (pair.algorithm, pair.tries, pair.omega) == ("MCMCTreePair", m, Fraction(1, 2))
        assert robust.depth == stable.depth == pair.depth == 4
        assert sum(share for share, _ in stable.planned_steps()) == 1  # the steps compose to epsilon
    assert miner_settings(REDESCRIPTION_OPTIONS["MCMCTreePair"], 1.0, data).omega == Fraction(1, 10)


def test_the_minimum_support_reads_the_released_count_never_the_true_size():
    option = REDESCRIPTION_OPTIONS["AltExpMStable"]
    large = RedescriptionData(planted_two_views(LARGE_ENTITIES + 500, 1).views, 1, "large")
    assert miner_settings(option, 1.0, large).constraints.min_support == 10  # nothing released: small
    assert miner_settings(option, 1.0, _data(), float(LARGE_ENTITIES)).constraints.min_support == 100
    assert miner_settings(option, 1.0, large, LARGE_ENTITIES - 1.0).constraints.min_support == 10
    declared = RedescriptionData(VIEWS, 1, "declared", Constraints(min_support=42, max_pvalue=0.05))
    assert miner_settings(option, 1.0, declared, 1e6).constraints == Constraints(min_support=42, max_pvalue=0.05)


def test_run_option_passes_the_released_count_and_finds_planted_redescriptions_with_a_large_budget():
    views = planted_two_views(3000, 5, planted=2, noise_attributes=2, flip=0.0).views
    charges: list = []
    result = FAMILY.run_option(REDESCRIPTION_OPTIONS["AltExpMStable"], RedescriptionData(views, 1, "big"),
                               Budget(Fraction(20), Fraction(0)), SimulationNoise(3), {"n_entities": 3000.0})
    jaccards = [true_statistics(red, views)["jaccard"] for red in result.kept()]
    assert jaccards and max(jaccards) > 0.95, str(result)  # a planted redescription, found exactly
    assert redescription_error(result, views) < 0.5  # and most kept ones describe alike
    assert "AltExpM" in FAMILY.describe(result) and not FAMILY.failed(result)
    del charges


# ---------------------------------------------------------------------------------- the error measure
def test_the_error_is_one_minus_the_median_true_jaccard_of_the_kept_set():
    views = planted_two_views(3000, 5, planted=2, noise_attributes=2, flip=0.0).views
    mined = REDESCRIPTION_OPTIONS["AltExpMStable"].learn(RedescriptionData(views, 1), Fraction(10),
                                                         SimulationNoise(4), lambda e, what: None)
    assert len(mined.redescriptions) >= 4
    # every other redescription pruned: the pruned ones must not count
    marked = tuple(replace(red, pruned=bool(i % 2)) for i, red in enumerate(mined.redescriptions))
    result = replace(mined, redescriptions=marked)
    kept = result.kept()
    assert 0 < len(kept) < len(result.redescriptions)
    truths = [true_statistics(red, views) for red in kept]
    assert redescription_error(result, views) == pytest.approx(1 - np.median([t["jaccard"] for t in truths]))
    share = np.mean([t["pvalue"] >= 0.01 for t in truths])
    assert redescription_error(result, views, "significance") == pytest.approx(share)
    empty = RedescriptionSet((), views.schemas, "AltExpM", Fraction(1))
    assert redescription_error(empty, views) == redescription_error(empty, views, "significance") == 1.0
    assert FAMILY.failed(empty)
    assert FAMILY.with_error("significance").error_measure == "significance"
    with pytest.raises(KeyError):
        redescription_error(empty, views, "accuracy")


# ---------------------------------------------------------------------------------- metafeatures
def test_the_noisy_count_moves_by_one_when_one_entity_goes():
    first, second = FAMILY.neighbouring_inputs(4)
    context = MetafeatureContext(Budget(Fraction(1), Fraction(0)))
    counts = [REDESCRIPTION_METAFEATURES["n_entities"].measure(d, 1.0, _ZeroNoise(), context) for d in (first, second)]
    assert counts[0] - counts[1] == 1.0 and counts[0] == first.views.n_entities


def test_the_public_metafeatures_are_equal_on_neighbours_and_the_count_is_one_release():
    first, second = FAMILY.neighbouring_inputs(5)
    public = [m for m in REDESCRIPTION_METAFEATURES.values() if not m.cost and not m.requires]
    values = [measure_features(FAMILY, public, d, 1.0, 0.0, SimulationNoise(0)).features for d in (first, second)]
    assert values[0] == values[1]
    schema = first.views.schemas[0]
    assert values[0]["attributes_left"] == len(schema.attributes)
    assert values[0]["log_splits_left"] == pytest.approx(np.log10(len(schema.splits)))
    assert values[0]["log_runs"] == 0.0 and 0.0 <= values[0]["numeric_right"] <= 1.0
    noisy = [m for m in REDESCRIPTION_METAFEATURES.values() if m.cost]
    assert [m.name for m in noisy] == ["n_entities"] and noisy[0].release == COUNT_RELEASE
    assert noisy[0].sensitivity.startswith("1 ")
    charges = []
    measured = measure_features(FAMILY, list(REDESCRIPTION_METAFEATURES.values()), first, Fraction(1), 0.1,
                                Randomness(0), lambda cost, what: charges.append((what, cost)))
    assert charges == [(f"metafeature {COUNT_RELEASE}", Budget(Fraction(1, 10), Fraction(0)))]
    expected = np.log10(measured.features["n_entities"] * measured.plan["option"].epsilon / 16)
    assert measured.features["log_leaf_signal"] == pytest.approx(expected, abs=1e-9)


# ---------------------------------------------------------------------------------- task and corpus
def test_the_corpus_is_deterministic_and_spans_the_generator_settings():
    corpus = redescription_corpus(8)
    assert [t.content_hash() for t in corpus] == [t.content_hash() for t in redescription_corpus(8)]
    held_out = redescription_corpus(8, seed=1)
    assert not {t.content_hash() for t in held_out} & {t.content_hash() for t in corpus}
    assert not {t.group for t in held_out} & {t.group for t in corpus}
    assert len({t.group for t in corpus}) == len(corpus) == 8
    assert [t.planted for t in corpus[:5]] == [1, 2, 3, 4, 1]
    for task in corpus:
        assert PLANTED[0] <= task.planted <= PLANTED[1]
        assert NOISE_ATTRIBUTES[0] <= task.noise_attributes <= NOISE_ATTRIBUTES[1]
        assert task.flip in FLIPS and task.numeric_share in NUMERIC_SHARES
    assert len({(t.flip, t.numeric_share) for t in corpus}) > 2


def test_instances_are_seeded_share_their_views_and_plan_the_paper_s_runs():
    task = redescription_corpus()[0]
    grid = RedescriptionGrid(sizes=(500,), epsilons=(0.01, 1.0), repetitions=2)
    first, second = list(instances(task, 500, grid)), list(instances(task, 500, grid))
    assert len(first) == 4 and [i.columns for i in first] == [i.columns for i in second]
    assert all(np.array_equal(a.data.views.codes[0], b.data.views.codes[0]) for a, b in zip(first, second))
    assert first[0].data.views is first[1].data.views is first[0].evaluation  # scored on its own public views
    assert not np.array_equal(first[0].data.views.codes[1], first[2].data.views.codes[1])
    assert [i.data.runs for i in first[:2]] == [planned_runs(0.01), planned_runs(1.0)] == [100, 10]
    assert first[0].data.views.n_entities == 500


def test_neighbouring_inputs_are_one_entity_apart_in_both_views():
    first, second = FAMILY.neighbouring_inputs(7)
    a, b = first.views, second.views
    assert a.n_entities - b.n_entities == 1 and a.schemas == b.schemas
    for view in (0, 1):  # b is a with one row removed, the same row in both views
        rows = {tuple(row) for row in a.codes[view]}
        assert {tuple(row) for row in b.codes[view]} <= rows
    gone = [i for i in range(a.n_entities) if i >= b.n_entities or
            not (np.array_equal(a.codes[0][i], b.codes[0][i]) and np.array_equal(a.codes[1][i], b.codes[1][i]))][0]
    assert np.array_equal(remove_entity(a, gone).codes[0], b.codes[0])
    assert np.array_equal(remove_entity(a, gone).codes[1], b.codes[1])
    with pytest.raises(ValueError):
        RedescriptionData(a, 0)


def test_the_default_corpus_plants_one_to_four_redescriptions():
    assert [task.planted for task in redescription_corpus()] == [1, 2, 3, 4]


# ---------------------------------------------------------------------------------- the standard library
def test_the_standard_library_module_mines_with_its_shipped_choicemaker(tmp_path, monkeypatch):
    """`import redescription` answers from the shipped model (stale: tests/test_pretrained.py says so)
    and spends exactly the budget given to mine()."""
    from jostle import Session
    from jostle.choicemaker.experience import RUN_STATS
    from jostle.learners.redescription.language import RedescriptionsValue
    from tests.test_redescription_language import _schema

    monkeypatch.setenv("JOSTLE_CACHE", str(tmp_path))  # an empty cache: nothing to reuse
    task = planted_two_views(3000, 4)
    session = Session(budget=2.0, seed=3, ledger_path=":memory:")
    session.bind_database({"lv": task.left, "rv": task.right}, key="id",
                          schemas={"lv": _schema(task, 0), "rv": _schema(task, 1)})
    from jostle.build import standard_choicemakers
    from jostle.choicemaker import pretrained

    maker = dict(standard_choicemakers())["redescription.chooser"]
    options, metafeatures = maker.engine_parts()
    key = pretrained.request_key(maker.family, options, metafeatures, maker.corpus.corpus,
                                 maker.grid or maker.family.default_grid(), float(maker.share))
    if pretrained.load_shipped(maker.family, key, options, metafeatures, float(maker.share)) is None:
        pytest.skip("the shipped redescription ChoiceMaker is stale (tests/test_pretrained.py says so)")
    before = RUN_STATS["pieces_computed"]
    session.run("import redescription\nt = redescription_task(bins=10)\n"
                "found = redescription.mine(lv.bound_per_key(1), rv.bound_per_key(1), t, 1.5)\n")
    assert RUN_STATS["pieces_computed"] == before  # nothing trained
    module = session.interpreter.globals.lookup("redescription")
    assert module.env.values["chooser"].trained.origin == "shipped"
    assert isinstance(session.interpreter.globals.lookup("found"), RedescriptionsValue)
    assert sum(c.budget.epsilon for c in session.ledger) == Fraction(3, 2)


# ---------------------------------------------------------------------------------- the benchmark's scoring
def _benchmark():
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "choicemaker_redescription.py"
    spec = importlib.util.spec_from_file_location("choicemaker_redescription", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclass resolves its annotations in its module
    spec.loader.exec_module(sys.modules[spec.name])
    return sys.modules[spec.name]


def test_the_benchmark_splits_a_table_into_two_coded_views(tmp_path):
    import pandas as pd

    bench = _benchmark()
    frame = pd.DataFrame({"a": ["x", "y", "x", "z"] * 10, "b": np.arange(40.0), "c": ["p", "q"] * 20})
    frame.to_csv(tmp_path / "t.csv", index=False)
    task = bench.table_task("t.csv:a,b|c", str(tmp_path))
    assert (task.left, task.right) == (("a", "b"), ("c",))
    assert bench.table_task("t.csv", str(tmp_path)).left == ("a",)  # FILE alone: columns split in half
    views = bench.table_views(task)
    assert views.n_entities == 40 and views.schemas[0].attributes[1].kind == "numeric"
    assert views.schemas[0].attributes[0].values == ("x", "y", "z")
    with pytest.raises(SystemExit):
        bench.table_task("t.csv:a|nope", str(tmp_path))


def test_the_benchmark_scores_the_choicemaker_on_its_mode_and_the_fixed_options_with_the_whole_budget():
    import pandas as pd

    bench = _benchmark()
    rows = []
    for mode, errors in (("public", {"A": 0.2, "B": 0.5}), ("measured", {"A": 0.3, "B": 0.4})):
        for option, error in errors.items():
            rows.append({"task": "t", "entities": 10, "epsilon": 1.0, "rep": 0, "mode": mode, "option": option,
                         "error": error, "mf_epsilon": 1.0, "mf_n_entities": 9.0})

    class Trained:  # measures n_entities, and picks B whenever it was measured
        mode = "measured"

        def metafeatures_for(self):
            return [REDESCRIPTION_METAFEATURES["n_entities"]]

        def choose(self, features):
            assert features == {"n_entities": 9.0}
            return "B", {}

    table = bench.chosen_errors(pd.DataFrame(rows), {"ChoiceMaker": Trained()})
    row = table.iloc[0]
    assert row["ChoiceMaker choice"] == "B" and row["ChoiceMaker"] == 0.4  # its own mode's row of its pick
    assert row["fixed A"] == 0.2 and row["fixed B"] == 0.5 and row["best"] == 0.2  # whole budget (public mode)
