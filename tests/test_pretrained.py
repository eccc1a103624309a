"""Tests of the shipped, pre-trained ChoiceMakers (jostle.choicemaker.pretrained, jostle.build).

The standard library's ChoiceMakers must be answered from package data, never trained on a
user's machine: these tests fail when the code their models depend on changed without
`jostle train --all` being rerun.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from jostle import Categorical, Schema, Session
from jostle.build import standard_choicemakers
from jostle.choicemaker import pretrained
from jostle.choicemaker.experience import RUN_STATS


@pytest.fixture(scope="module")
def standard():
    return standard_choicemakers()


def _request(maker):
    options, metafeatures = maker.engine_parts()
    grid = maker.grid or maker.family.default_grid()
    key = pretrained.request_key(maker.family, options, metafeatures, maker.corpus.corpus, grid, float(maker.share))
    return key, options, metafeatures


def test_the_standard_library_declares_histogram_and_tree_choicemakers(standard):
    labels = {label for label, _ in standard}
    assert {"histograms.chooser", "histograms.chooser_2d", "trees.chooser"} <= labels


def test_every_standard_choicemaker_is_shipped_and_current(standard):
    """A shipped model is used only if its key (code, corpus, grid, share) matches the code now."""
    stale = []
    for label, maker in standard:
        key, options, metafeatures = _request(maker)
        loaded = pretrained.load_shipped(maker.family, key, options, metafeatures, float(maker.share))
        if loaded is None:
            stale.append(label)
            continue
        assert loaded.origin == "shipped"
        assert set(loaded.options) == {o.name for o in options}
        assert {m.name for m in loaded.metafeatures} == {m.name for m in metafeatures}
        for segment, model in loaded.models.items():  # every fitted model reads only known metafeatures
            assert set(model.features) <= {m.name for m in metafeatures}
            assert set(model.options) <= set(loaded.options)
    assert not stale, f"shipped ChoiceMakers are stale for {stale}: rerun `jostle train --all`"


def test_a_shipped_file_of_other_code_or_another_sklearn_is_not_trusted(standard, tmp_path, monkeypatch):
    label, maker = standard[0]
    key, options, metafeatures = _request(maker)
    assert pretrained.load_shipped(maker.family, "0" * 24, options, metafeatures, 0.1) is None  # no such key
    monkeypatch.setattr(pretrained, "_sklearn_version", lambda: "0.0.0")
    assert pretrained.load_shipped(maker.family, key, options, metafeatures, float(maker.share)) is None


@pytest.mark.parametrize("module", ["trees", "brl"])
def test_first_learn_answers_from_the_shipped_model_without_training(module, tmp_path, monkeypatch):
    """`trees.learn` and `brl.learn` (the rule lists' stdlib module) load their shipped model."""
    monkeypatch.setenv("JOSTLE_CACHE", str(tmp_path))  # an empty cache: nothing to reuse
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.choice(["x", "y", "z"], 300), "b": rng.choice(["p", "q"], 300)})
    frame["label"] = np.where((frame["a"] == "x") | (rng.random(300) < 0.1), "yes", "no")
    schema = Schema.of({"a": Categorical(["x", "y", "z"]), "b": Categorical(["p", "q"]),
                     "label": Categorical(["no", "yes"])})
    session = Session(budget=1.0, ledger_path=":memory:", seed=3)
    session.bind_private("t", frame, schema)
    before = RUN_STATS["pieces_computed"]
    start = time.perf_counter()
    session.run(f'import {module}\nmodel = {module}.learn(t, "label", 1.0)\n')
    seconds = time.perf_counter() - start
    assert RUN_STATS["pieces_computed"] == before  # no experience was computed
    assert session.interpreter.globals.lookup(module).env.values["chooser"].trained.origin == "shipped"
    assert sum(c.budget.epsilon for c in session.ledger) == 1
    assert seconds < 120  # loose: the point is no training (which takes minutes); typically a few seconds


def test_a_program_s_own_choicemaker_is_trained_with_an_announcement(tmp_path):
    """Not shipped: trained once, after a message saying what and where it is cached, and a second
    with the time left measured on the first piece."""
    from jostle.learners.histograms.corpus import Corpus, default_corpus
    from jostle.learners.histograms.family import FAMILY
    from jostle.learners.histograms.metafeatures import BUILTIN_METAFEATURES
    from jostle.learners.histograms.options import BUILTIN_OPTIONS
    from jostle.learners.histograms.task import TrainingGrid

    corpus = Corpus("tiny", default_corpus(1).shapes[:3])
    grid = TrainingGrid(scales=(1000,), domains_1d=(16,), domains_2d=(), epsilons=(0.5,), repetitions=1)
    options = [BUILTIN_OPTIONS["Identity"], BUILTIN_OPTIONS["Uniform"]]
    features = [BUILTIN_METAFEATURES["domain_size"], BUILTIN_METAFEATURES["size"]]
    said: list[str] = []
    trained = pretrained.load_or_train(FAMILY, options, features, corpus, grid, 0.1, n_jobs=1, progress=False,
                                       cache_dir=tmp_path, out=said.append)
    assert trained.origin == "trained" and set(trained.options) == {"Identity", "Uniform"}
    assert len(said) == 2 and "3 pieces" in said[0] and str(tmp_path) in said[0] and "core" in said[0]
    # the estimate is measured on the first piece, then stated for the 2 pieces left
    assert "first piece took" in said[1] and "2 left" in said[1] and "minute" in said[1]
    said.clear()
    again = pretrained.load_or_train(FAMILY, options, features, corpus, grid, 0.1, n_jobs=1, progress=False,
                                     cache_dir=tmp_path, out=said.append)
    assert said == [] and again.experience_from_cache  # cached: no announcement, no training
