"""The meta-model's regret measure (`Family.regret_measure`, issue 27): DPComp's ratio of errors,
or 1 + their difference for errors in [0, 1] (1 - accuracy, 1 - AUC), whose differences are
what a user loses."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jostle.choicemaker import families
from jostle.choicemaker.combined import CombinedFamily
from jostle.choicemaker.experience import FEATURE_PREFIX
from jostle.choicemaker.model import (FittedMetaModel, choice_regret, lodo_chosen_errors, make_model, regrets,
                                      training_matrix)


def _experience(groups: int = 12, reps: int = 2) -> pd.DataFrame:
    """Two Options on two kinds of table, told apart by nothing the meta-model reads: on an
    easy one A errs 0.005 and B 0.015 (B's error three times A's, 0.01 apart); on a hard one A
    errs 0.35 and B 0.25 (A's 1.4 times B's, 0.10 apart). Half the groups are each kind."""
    rows = []
    for group in range(groups):
        easy = group % 2 == 0
        for rep in range(reps):
            for option, error in (("A", 0.005 if easy else 0.35), ("B", 0.015 if easy else 0.25)):
                rows.append({"task": f"t{group}", "group": f"g{group}", "epsilon": 1.0, "rep": rep,
                             "option": option, "error": error, FEATURE_PREFIX + "constant": 0.0})
    return pd.DataFrame(rows)


def test_regrets_are_one_for_the_best_and_ratio_or_difference_otherwise():
    errors = np.array([[0.005, 0.015], [0.35, 0.25]])
    best = errors.min(axis=1, keepdims=True)
    assert np.allclose(regrets(errors, best, "ratio"), [[1.0, 3.0], [1.4, 1.0]])
    assert np.allclose(regrets(errors, best, "difference"), [[1.0, 1.01], [1.1, 1.0]])
    with pytest.raises(ValueError, match="unknown regret measure"):
        regrets(errors, best, "log")


@pytest.mark.parametrize("measure, expected", [("ratio", "A"), ("difference", "B")])
def test_the_measure_decides_which_option_a_meta_model_prefers(measure, expected):
    data = training_matrix(_experience(), ["constant"], ["A", "B"], ["task", "group", "epsilon"],
                           regret_measure=measure)
    assert data.regret_measure == measure
    model = make_model("best_fixed").fit(data)
    assert data.options[int(model.choose(data.X[:1])[0])] == expected
    # the held-out score of the choice is in the same measure (one config per group)
    scores = choice_regret(data, model.choose(data.X))["regret"].to_numpy()
    assert set(np.round(scores, 6)) == ({1.0, 1.4} if measure == "ratio" else {1.0, 1.01})
    # what a user loses: the difference measure's choice errs less on average (0.1325 vs 0.1775)
    mean_error = float(lodo_chosen_errors("best_fixed", data).mean())
    assert mean_error == pytest.approx(0.1325 if measure == "difference" else 0.1775)


def test_difference_predictions_keep_the_predicted_differences_and_the_choice_lowest():
    data = training_matrix(_experience(), ["constant"], ["A", "B"], ["task", "group", "epsilon"],
                           regret_measure="difference")
    fitted = FittedMetaModel.fit(data, "best_fixed", use_metafeatures=False)
    assert fitted.regret_measure == "difference"
    predicted = fitted.predicted_errors(np.zeros((1, 1)))[0]
    scores = fitted.model.scores(np.zeros((1, 1)))[0]
    assert np.argmin(predicted) == np.argmin(scores) == 1
    assert predicted[0] - predicted[1] == pytest.approx(scores[0] - scores[1])
    ratio = FittedMetaModel.fit(training_matrix(_experience(), ["constant"], ["A", "B"], ["task", "group", "epsilon"]),
                                "best_fixed", use_metafeatures=False)
    ratio_scores = ratio.model.scores(np.zeros((1, 1)))[0]
    ratio_predicted = ratio.predicted_errors(np.zeros((1, 1)))[0]
    assert ratio_predicted[1] / ratio_predicted[0] == pytest.approx(ratio_scores[1] / ratio_scores[0])


def test_request_keys_name_a_measure_other_than_the_ratio():
    from jostle.choicemaker.pretrained import request_key

    family = families.get("histograms")
    options = list(family.options().values())[:2]
    grid = family.default_grid()
    before = request_key(family, options, [], [], grid, 0.1)
    family.regret_measure = "difference"  # on this instance only
    try:
        assert request_key(family, options, [], [], grid, 0.1) != before
    finally:
        del family.regret_measure
    assert request_key(family, options, [], [], grid, 0.1) == before


def test_families_sharing_a_choicemaker_must_share_the_measure():
    trees, brl = families.get("trees"), families.get("brl")
    assert trees.regret_measure == brl.regret_measure
    brl.regret_measure = "difference" if trees.regret_measure == "ratio" else "ratio"
    try:
        with pytest.raises(ValueError, match="regret_measure"):
            CombinedFamily([trees, brl])
    finally:
        del brl.regret_measure
    assert CombinedFamily([trees, brl]).regret_measure == trees.regret_measure


def test_the_shipped_classifier_choicemakers_were_trained_on_differences_and_the_others_on_ratios():
    import joblib

    from jostle.choicemaker.pretrained import shipped_folder

    seen = {}
    for name in ("trees", "brl", "histograms", "ilp", "redescription"):
        family = families.get(name)
        for path in sorted(shipped_folder(family).glob("*.joblib")):
            models = joblib.load(path)["models"]
            seen[path.name] = {getattr(m, "regret_measure", "ratio") for m in models.values()}
            expected = "difference" if name in ("trees", "brl") else "ratio"
            assert seen[path.name] == {expected}, (name, path.name)
    assert len(seen) >= 10


def test_the_credit_payoff_rule_refuses_a_difference_measure():
    from jostle.choicemaker import engine

    family = families.get("histograms")
    assert family.payoff_rule == "credit"
    family.regret_measure = "difference"
    try:
        with pytest.raises(ValueError, match="'credit' payoff rule needs regret_measure 'ratio'"):
            engine.fit_segment(family, pd.DataFrame(), [], [], 0.1, ("best_fixed",), 1, None)
    finally:
        del family.regret_measure


def test_held_out_intervals_of_a_difference_meta_model_cover_the_held_out_errors():
    from jostle.choicemaker.intervals import held_out_intervals

    data = training_matrix(_experience(groups=20), ["constant"], ["A", "B"], ["task", "group", "epsilon"],
                           regret_measure="difference")
    intervals = held_out_intervals(data, "best_fixed", use_features=False, folds=4)
    assert intervals is not None and intervals.options == ("A", "B")
    assert intervals.runs == len(data.X)
    assert all(np.isfinite(intervals.low)) and all(np.isfinite(intervals.high))
    assert all(low <= high for low, high in zip(intervals.low, intervals.high))
    # the whole-corpus model's intervals hold at least 90% of the errors of each Option (two
    # kinds of table the model cannot tell apart: the interval must span both levels)
    fitted = FittedMetaModel.fit(data, "best_fixed", use_metafeatures=False)
    predicted = fitted.predicted_errors(np.zeros((1, 1)))[0]
    for index, option in enumerate(intervals.options):
        low, high = intervals.interval(option, float(predicted[index]))
        inside = (data.errors[:, index] >= low * (1 - 1e-9)) & (data.errors[:, index] <= high * (1 + 1e-9))
        assert inside.mean() >= 0.9, (option, low, high)


def test_the_engine_keeps_a_difference_model_apart_from_a_ratio_one(tmp_path):
    """The model cache key names the measure: a family switched to "difference" does not load
    the ratio model trained before it (nor the reverse)."""
    from jostle.choicemaker import engine
    from jostle.learners.trees.corpus import synthetic_tree_corpus
    from jostle.learners.trees.task import TreeGrid

    family = families.get("trees")
    options = ["OneRule", "Majority"]
    grid = TreeGrid(epsilons=(1.0,), repetitions=1)
    corpus = synthetic_tree_corpus(sizes=(200,), seeds=1)
    common = dict(options=options, metafeatures=["epsilon"], corpus=corpus, grid=grid, mf_share=0.1,
                  cache_dir=tmp_path, n_jobs=1, progress=False, model_kinds=("best_fixed",))
    first = engine.train(family, **common)
    measure = family.regret_measure
    other = "ratio" if measure == "difference" else "difference"
    family.regret_measure = other
    try:
        second = engine.train(family, **common)
    finally:
        del family.regret_measure
    assert {m.regret_measure for m in first.models.values()} == {measure}
    assert {m.regret_measure for m in second.models.values()} == {other}
    assert len(list((tmp_path / "models" / family.name).glob("*.joblib"))) == 2
