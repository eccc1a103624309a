"""stdlib/stats.jst: helpers written in Jostle, checked for accuracy and exact spending.

Tolerances come from the noise: with epsilon = 2 on 5,000 rows, each helper's error has a
standard deviation far below the bounds asserted (computed in each test's comment), so a
failure means a wrong helper, not bad luck.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from jostle import Session

ROWS = 5000


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame({
        "x": np.clip(rng.normal(40, 10, ROWS), 0, 100),
        "g": rng.choice(["a", "b", "c"], ROWS, p=[0.5, 0.3, 0.2]),
    })


def session_for(frame: pd.DataFrame, seed: int) -> Session:
    s = Session(budget=100, seed=seed, output=io.StringIO())
    s.bind_private("t", frame, {"x": {"type": "numeric", "bounds": [0, 100]},
                                "g": {"type": "categorical", "values": ["a", "b", "c"]}})
    s.run("import stats")
    return s


def spend(s: Session, expression: str) -> tuple[object, float]:
    before = float(s.spent.epsilon)
    value = s.eval(expression)
    return value, float(s.spent.epsilon) - before


def test_count_and_sum(frame):
    s = session_for(frame, 1)
    n, cost = spend(s, "stats.private_count(t, 2)")
    assert cost == pytest.approx(2)
    assert abs(n - ROWS) <= 15  # geometric noise, eps 2: P(|Z| > 15) ~ 2e-13
    total, cost = spend(s, "stats.private_sum(t, 'x', 2)")
    assert cost == pytest.approx(2)
    assert abs(total - frame["x"].sum()) <= 1500  # Lap(50): P(|Z| > 1500) = e^-30


def test_mean(frame):
    s = session_for(frame, 2)
    m, cost = spend(s, "stats.private_mean(t, 'x', 2)")
    assert cost == pytest.approx(2)
    # sum of (x - 50) has Lap(50) noise at eps 1, count Lap(1): error < 1500 / 4900 w.p. 1 - 1e-12
    assert abs(m - frame["x"].mean()) < 0.35


def test_variance(frame):
    s = session_for(frame, 3)
    v, cost = spend(s, "stats.private_variance(t, 'x', 3)")
    assert cost == pytest.approx(3)
    # Sums of y (Lap(50)) and y^2 (Lap(2500)) over ~5000 rows: error in E[y^2] < 2500*30/5000 = 15
    assert abs(v - frame["x"].var(ddof=0)) < 20


def test_median_and_quantile(frame):
    s = session_for(frame, 4)
    med, cost = spend(s, "stats.private_median(t, 'x', 2)")
    assert cost == pytest.approx(2)
    # Grid step 100/64; candidates more than 2 steps off have utility below -100 (density ~0.04
    # per unit * 5000 rows), so exp(2 * -100 / 3) / exp(0) makes them astronomically unlikely.
    assert abs(med - frame["x"].median()) < 2 * 100 / 64 + 1e-9
    q, _ = spend(s, "stats.private_quantile(t, 'x', 0.9, 2)")
    assert abs(q - frame["x"].quantile(0.9)) < 2 * 100 / 64 + 1e-9


def test_histogram_and_proportions(frame):
    s = session_for(frame, 5)
    h, cost = spend(s, "stats.private_histogram(t, 'g', 2)")
    assert cost == pytest.approx(2)
    truth = frame["g"].value_counts().reindex(["a", "b", "c"]).to_numpy()
    assert np.all(np.abs(np.asarray(h) - truth) <= 15) and min(h) >= 0
    p = s.eval("stats.proportions([1, 3])")
    assert p == [0.25, 0.75]


def test_helpers_refuse_to_overspend(frame):
    s = Session(budget=1, seed=1, output=io.StringIO())
    s.bind_private("t", frame, {"x": {"type": "numeric", "bounds": [0, 100]}})
    s.run("import stats")
    from jostle import BudgetExceeded

    with pytest.raises(BudgetExceeded) as caught:
        s.eval("stats.private_variance(t, 'x', 3)")
    # Its first release (eps 1) fit and was charged; the second was refused before any noise.
    assert float(s.spent.epsilon) == 1
    assert len(s.ledger) == 1
    assert float(caught.value.requested) == 1 and caught.value.remaining == 0


def test_the_trees_module_defines_a_tree_choicemaker_without_training_on_import():
    """`import trees` declares the ChoiceMaker lazily: importing spends nothing and trains nothing."""
    from jostle import Session

    session = Session(budget=1)
    session.run("import trees\nmaker = trees.chooser\n")
    maker = session.interpreter.globals.lookup("maker")  # the object itself (eval returns data only)
    assert [o.name for o in maker.options] == ["FriedmanSchuster", "Mohammed", "RandomTrees", "PatilSingh", "FletcherIslam",
                                              "OneRule", "BinaryTree", "Majority", "Mohammed2", "Mohammed6",
                                              "MohammedLeafHeavy", "RandomTrees10", "BinaryTree2", "FriedmanSchusterLeanStop"]
    assert maker.trained is None and maker.task == "classification"
    assert len(session.ledger) == 0


def test_the_histograms_module_declares_its_choicemakers_lazily():
    """`import histograms` declares both ChoiceMakers with the noisy size and the profile at a 1%
    share (two releases), spending nothing and training nothing until one is called."""
    from fractions import Fraction

    from jostle import Session

    session = Session(budget=1)
    session.run("import histograms\none = histograms.chooser\ntwo = histograms.chooser_2d\n")
    one, two = (session.interpreter.globals.lookup(n) for n in ("one", "two"))  # the objects (eval returns data only)
    assert "DAWA" in [o.name for o in one.options] and "AGrid" in [o.name for o in two.options]
    for maker in (one, two):
        assert maker.trained is None and maker.share == Fraction(1, 100)
        assert {m.name for m in maker.metafeatures if m.cost} == {
            "size", "profile_size", "profile_uniformity", "profile_roughness", "profile_entropy", "profile_signal",
            "profile_peaks", "profile_max_share", "profile_empty_share", "profile_records_per_cell"}
        assert {m.release or m.name for m in maker.metafeatures if m.cost} == {"size", "profile"}
    assert len(session.ledger) == 0
