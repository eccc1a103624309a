"""Issue 27 in the tree family: the choice-point Options, the contingency metafeatures (one
release, charged once, its sensitivity replayed) and the generated concept corpus."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from jostle.choicemaker.family import MetafeatureContext
from jostle.learnerkit.tables import ClassificationData
from jostle.learners.trees import metafeatures as tree_metafeatures
from jostle.learners.trees.configurations import CONFIGURATIONS, VARIANTS
from jostle.learners.trees.corpus import concept_corpus
from jostle.learners.trees.language import TREE_LEARNERS
from jostle.learners.trees.metafeatures import CONTINGENCY_METAFEATURES, TREE_METAFEATURES, contingency_release
from jostle.learners.trees.options import TREE_OPTIONS
from jostle.privacy.noise import Randomness
from jostle.privacy.replay import Claim


def _table(n_rows: int = 400, seed: int = 0, informative: bool = True) -> ClassificationData:
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, 3, n_rows), rng.integers(0, 4, n_rows), rng.integers(0, 2, n_rows)])
    y = (X[:, 0] == 1).astype(int) if informative else rng.integers(0, 2, n_rows)
    return ClassificationData(X, y, (3, 4, 2), 2, name="t")


def test_every_option_is_a_language_learner_and_variants_change_one_choice_point():
    assert TREE_LEARNERS == {name: option.configuration for name, option in TREE_OPTIONS.items()}
    assert {option.configuration for option in TREE_OPTIONS.values()} == set(CONFIGURATIONS)
    assert CONFIGURATIONS["mohammed"]["max_depth"] == 4  # DiffGen's depth is the user's, not the tuned 2
    for name, (base, changes) in VARIANTS.items():
        differing = {key for key in CONFIGURATIONS[name] if CONFIGURATIONS[name][key] != CONFIGURATIONS[base][key]}
        assert differing == set(changes), name


@pytest.mark.parametrize("name", ["Mohammed6", "RandomTrees10", "MohammedLeafHeavy", "BinaryTree2",
                                  "FriedmanSchusterLeanStop", "Mohammed2"])
def test_variant_options_spend_within_their_budget(name):
    charges: list[float] = []
    model = TREE_OPTIONS[name].fit(_table(), 0.5, Randomness(seed=3), lambda cost, what: charges.append(cost))
    assert 0 < sum(Fraction(c) for c in charges) <= Fraction(0.5)
    assert model.epsilon_spent_ <= 0.5


def test_contingency_metafeatures_share_one_release_charged_once():
    from jostle.choicemaker.measurement import measure_features
    from jostle.learners.trees.family import FAMILY

    features = [TREE_METAFEATURES[name] for name in ("epsilon", "size", *CONTINGENCY_METAFEATURES)]
    charged: list[str] = []
    result = measure_features(FAMILY, features, _table(), 1.0, 0.1, Randomness(seed=1),
                              charge=lambda cost, unit: charged.append(unit))
    assert sorted(charged) == ["metafeature contingency", "metafeature size"]
    assert sum(Fraction(c.epsilon) for c in result.charged.values()) <= Fraction(1, 10)
    assert set(CONTINGENCY_METAFEATURES) <= set(result.features)


def test_contingency_release_moves_by_its_claimed_sensitivity_on_neighbours(monkeypatch):
    """Replay check: the exact pre-noise tables of D and D plus one row differ by L1 = k, the
    claim the noise is calibrated to; a claim of k - 1 would be exceeded."""
    recorded: list[tuple] = []

    class Spy:
        @staticmethod
        def released(noise, point, values, output, norm, bound, grid=None, **_):
            recorded.append((point, tuple(int(v) for v in values), Claim(norm, Fraction(bound), Fraction(grid))))
            return output

    monkeypatch.setattr(tree_metafeatures, "replay", Spy)
    data = _table(50)
    neighbour = ClassificationData(np.vstack([data.X, [[2, 3, 1]]]), np.append(data.y, 1), data.domain_sizes, 2)
    for table in (data, neighbour):
        contingency_release(table, 1.0, Randomness(seed=0), MetafeatureContext(1.0, 1.0))
    (_, first, claim), (_, second, _) = recorded
    assert claim.norm == "l1" and claim.bound == data.n_attributes
    assert claim.exceeded_by(first, second) is None
    assert Claim("l1", Fraction(data.n_attributes - 1), Fraction(1)).exceeded_by(first, second) is not None


def test_contingency_release_is_memoised_and_refused_without_a_memo():
    data, context = _table(), MetafeatureContext(1.0, 1.0)
    first = contingency_release(data, 0.5, Randomness(seed=1), context)
    again = contingency_release(data, 0.5, Randomness(seed=2), context)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))  # one release per measurement
    with pytest.raises(TypeError):
        contingency_release(data, 0.5, Randomness(seed=1), object())


def test_association_tells_signal_from_none():
    def association(data):
        feature = TREE_METAFEATURES["contingency_max_association"]
        return feature.measure(data, 5.0, Randomness(seed=4), MetafeatureContext(1.0, 1.0))

    assert association(_table(2000, informative=True)) > 0.8
    assert association(_table(2000, informative=False)) < 0.05


def test_concept_corpus_is_seeded_and_spans_the_space():
    tasks = concept_corpus(24)
    again = concept_corpus(24)
    assert all(np.array_equal(a.y, b.y) for a, b in zip(tasks, again))
    rows = [t.n_rows for t in tasks]
    assert min(rows) < 1000 and max(rows) > 4000
    assert len({t.n_classes for t in tasks}) >= 3 and len({t.n_attributes for t in tasks}) >= 6
    assert len({t.group for t in tasks}) == len(tasks)  # each task its own validation group
