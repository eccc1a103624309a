"""Issue 27's histogram metafeatures (more readings of the one profile release), the generated
public corpus, and the two noise-robust meta-model kinds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jostle.choicemaker.family import MetafeatureContext
from jostle.choicemaker.measurement import measure_features
from jostle.choicemaker.model import (EXTENDED_MODEL_KINDS, MODEL_KINDS, TrainingMatrix, lodo_regret,
                                      make_model)
from jostle.learners.histograms.corpus import generated_corpus
from jostle.learners.histograms.family import FAMILY
from jostle.learners.histograms.metafeatures import BUILTIN_METAFEATURES
from jostle.learners.histograms.simulation import FloatSimulationNoise

NEW = ["profile_peaks", "profile_max_share", "profile_empty_share", "profile_records_per_cell"]
PROFILE = ["profile_size", "profile_uniformity", "profile_roughness", "profile_entropy", "profile_signal", *NEW]


class CountingNoise(FloatSimulationNoise):
    """FloatSimulationNoise that counts how many values it has drawn."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.draws = 0

    def laplace(self, scale, size):
        self.draws += int(size)
        return super().laplace(scale, size)


def exact(name: str, x: np.ndarray, epsilon: float = 1.0) -> float:
    context = MetafeatureContext(epsilon, epsilon, facts={"domain_shape": x.shape})
    return BUILTIN_METAFEATURES[name].measure(x, float("inf"), None, context)


def test_new_profile_features_read_the_one_profile_release_charged_once():
    charges = []
    noise = CountingNoise(5)
    x = np.random.default_rng(1).poisson(3.0, 512).astype(float)
    chosen = [BUILTIN_METAFEATURES[n] for n in ["domain_size", "epsilon", *PROFILE]]
    measured = measure_features(FAMILY, chosen, x, 1.0, 0.1, noise,
                                charge=lambda eps, what: charges.append((what, eps)))
    assert [w for w, _ in charges] == ["metafeature profile"]
    assert charges[0][1].epsilon == pytest.approx(0.1)
    assert noise.draws == 16  # the 16 blocks, drawn once for all nine readings
    assert set(NEW) <= set(measured.features)
    assert all(BUILTIN_METAFEATURES[n].release == "profile" and BUILTIN_METAFEATURES[n].cost for n in NEW)


def test_new_profile_features_exact_values_on_public_data():
    flat = np.full(64, 5.0)
    assert exact("profile_peaks", flat) == 0.0          # no block above mean + 1 sd
    assert exact("profile_max_share", flat) == pytest.approx(1 / 16)
    assert exact("profile_empty_share", flat) == 0.0
    # 320 records x epsilon 0.5 over 64 cells: log10(2.5)
    assert exact("profile_records_per_cell", flat, 0.5) == pytest.approx(math.log10(2.5))
    spike = np.zeros(64)
    spike[3] = 40.0
    assert exact("profile_peaks", spike) == pytest.approx(1 / 16)
    assert exact("profile_max_share", spike) == 1.0
    assert exact("profile_empty_share", spike) == pytest.approx(15 / 16)
    grid = np.zeros((8, 8))
    grid[:2, :2] = 10.0  # one 2 x 2 block of the 4 x 4 profile
    assert exact("profile_max_share", grid) == 1.0
    assert exact("profile_empty_share", grid) == pytest.approx(15 / 16)


def test_new_profile_features_are_post_processing_of_the_released_blocks():
    """Same released blocks, same values: the features read nothing but the profile (and public
    facts), so neighbours whose profiles were released equal cannot be told apart by them."""
    from jostle.learners.histograms import metafeatures as module

    x = np.arange(32, dtype=float)
    y = x.copy()
    y[0], y[1] = 1.0, 0.0  # same block totals (cells 0 and 1 share a block), different cells
    for name in NEW:
        assert exact(name, x) == exact(name, y)
    assert module.PROFILE_BLOCKS_PER_SIDE == {1: 16, 2: 4}


def test_generated_corpus_is_deterministic_and_spans_sparsity_and_skew():
    first, again = generated_corpus((1, 2), 12), generated_corpus((1, 2), 12)
    assert first.content_hash() == again.content_hash()
    assert len(first.subset(dims=1)) == 12 and len(first.subset(dims=2)) == 12
    assert len(first.groups()) == 24 and not any("dpbench" in s.name.lower() for s in first)
    empty = [float(np.mean(s.values == 0)) for s in first]
    top = [float(s.values.max() / s.values.sum() * s.values.size) for s in first]
    assert min(empty) == 0.0 and max(empty) > 0.3       # dense and sparse shapes
    assert min(top) < 10 and max(top) > 100             # flat and peaked shapes


def _toy_matrix(seed: int = 0) -> TrainingMatrix:
    """Two Options: A wins where the feature is below 0.5, B above; 8 groups."""
    rng = np.random.default_rng(seed)
    feature = rng.uniform(0, 1, 400)
    errors = np.column_stack([1 + 3 * (feature > 0.5), 1 + 3 * (feature <= 0.5)]) * rng.uniform(0.9, 1.1, (400, 2))
    config = np.arange(400)
    regret = errors / errors.min(axis=1, keepdims=True)
    return TrainingMatrix(feature.reshape(-1, 1), errors, np.log(errors), regret, config,
                          (config % 8).astype(str), ["A", "B"], ["f"])


@pytest.mark.parametrize("kind", ["smooth_forest_regret", "blend_regret"])
def test_noise_robust_kinds_learn_a_threshold(kind):
    data = _toy_matrix()
    assert kind in EXTENDED_MODEL_KINDS and kind not in MODEL_KINDS
    model = make_model(kind).fit(data)
    assert list(model.choose(np.array([[0.1], [0.9]]))) == [0, 1]
    assert lodo_regret(kind, data, folds=4)["regret"].mean() < 1.1


@pytest.mark.parametrize("name", ["DAWA", "DAWA10"])
def test_dawa_splits_charge_the_partition_and_measurements_adding_up_exactly(name):
    from fractions import Fraction

    from jostle.learners.histograms.measure import PrivacyLedger
    from jostle.learners.histograms.registry import ALGORITHMS
    from jostle.learners.histograms.workloads import prefix_1d

    x = np.random.default_rng(2).poisson(5.0, 64).astype(float)
    for epsilon in (0.01, 0.3, 1.0, 0.7310585786300049):
        ledger = PrivacyLedger(epsilon)
        ALGORITHMS[name](x, epsilon, prefix_1d(64), FloatSimulationNoise(1), ledger)
        assert len(ledger.charges) == 2
        assert sum((Fraction(c.epsilon) for c in ledger.charges), Fraction(0)) == Fraction(epsilon)
    from jostle.learners.histograms.dawa import PARTITION_SHARES, dawa_budget

    parts = dawa_budget(1.0, PARTITION_SHARES[name])
    assert parts["partition"] == pytest.approx(PARTITION_SHARES[name])
