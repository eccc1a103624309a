"""Values returned to Python are detached from the session (issue 21, hole 5).

`model = session.eval("m")` for a private tree used to give an object whose estimator's `noise`
was the session's live `Randomness`: reseeding it made the next releases exactly recoverable
(`geometric(count(t), 1)` minus the now known noise gave the true count). These tests take every
kind of value the language can return to Python (released numbers and vectors, labelled
histograms, lists, records, public tables, domains, trees, forests, rule lists, ChoiceMaker
answers over histograms, trees and rule lists, traces, explanations, ledger records) and the
session's own accessors (its ledger, budgets, descriptions, warnings), walk the object graph of
each (tests/privacy/fuzz_returned.py: the collector's references, object arrays' items, weak
references' targets) and assert that nothing reachable is the session's randomness, accountant,
ledger store, interpreter, scope, private tables or their rows, or any live kind of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.diagnostics.errors import PrivacyError
from jostle.privacy.noise import Randomness
from tests.privacy.fuzz_returned import forbidden_in, reachable_from

SCHEMA = {
    "a": {"type": "categorical", "values": ["x", "y", "z"]},
    "b": {"type": "categorical", "values": ["p", "q"]},
    "label": {"type": "categorical", "values": ["yes", "no"]},
    "n": {"type": "numeric", "bounds": [0, 10]},
}

PROGRAM = """
cats = select(t, ["a", "b", "label"])
pub = select(test, ["a", "b", "label"])
n_released = geometric(count(t), 1)
x_released = laplace(sum(t, "n"), 1)
with budget 2:
    hist = {{ histogram(cats, "a") }}
    hist2 = {{ histogram(cats, "a", "b") }}
vector = hist * 2
items = [1, "two", none, true, [n_released, x_released], {k: hist}]
record = {a: 1, b: [2.5, "c"], c: {d: none}}
dom_c = categorical(["p", "q"], default="p")
dom_n = numeric(0, 10)
tree = FriedmanSchuster(cats, "label", epsilon=1)
forest = RandomTrees(cats, "label", epsilon=1)
c45 = C45(pub, "label")
rules = BayesianRuleList(cats, "label", epsilon=1, max_rows=5000)
public_rules = BayesianRuleList(pub, "label")
labels = predict(tree, pub)
bounds_n = bounds(t, "n")
domain_a = domain(t, "a")
public_rows = rows(pub)
spent_now = spent()
remaining_now = remaining()
charges = ledger()
ages = t.bin("n", [0, 2, 4, 6, 8, 11])
h = histogram(ages, "n")

option Flat(db, queries):
    answer:
        n = {{ sum(db) }}
        return map(lambda i: n / 5, range(5))
    predict(F):
        return F.sparsity

option Cells(db, queries):
    answer:
        return {{ db }}
    predict(F):
        return 1 - F.sparsity

choicemaker H among {Flat, Cells} informed by {sparsity} trained on none
with budget 1:
    estimate = H(h, all_ranges(5))
traces = trace(H)
explained = explain(H)
f = lambda q: q
choicemaker T among {FriedmanSchuster, RandomTrees} informed by {size, n_attributes, epsilon} trained on tree_corpus()
choicemaker R among {BRLMined, BRLSchema} informed by {size, epsilon} trained on rule_list_corpus()
"""

CHOSEN = """
chosen_tree = T(cats, "label", epsilon=2)
chosen_rules = R(cats, "label", epsilon=2)
tree_traces = trace(T)
"""


def _frame(rows: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.choice(["x", "y", "z"], rows)
    return pd.DataFrame({"a": a, "b": rng.choice(["p", "q"], rows),
                         "label": np.where(a == "x", "yes", "no"), "n": rng.integers(0, 11, rows)})


def _session(seed: int | None = 5) -> Session:
    session = Session(budget=50, seed=seed, ledger_path=":memory:")
    session.bind_private("t", _frame(600, 1), SCHEMA)
    session.bind_public("test", _frame(100, 2), SCHEMA)
    return session


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    """A session whose program made one value of every kind (ChoiceMakers over trees and rule
    lists trained on tiny corpora and grids, as in test_tree_language and test_brl_language)."""
    from jostle.language.values import CorpusValue
    from jostle.learners.brl.corpus import planted_corpus
    from jostle.learners.brl.task import RuleGrid
    from jostle.learners.trees.corpus import synthetic_task
    from jostle.learners.trees.task import TreeGrid

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JOSTLE_CACHE", str(tmp_path_factory.mktemp("cache")))
        session = _session()
        session.run(PROGRAM)
        trees = session.interpreter.globals.lookup("T")
        trees.corpus = CorpusValue([synthetic_task("a", 150, (2, 3, 2), 2, 1, 0.1, seed=1),
                                    synthetic_task("b", 200, (4, 4), 3, 1, 0.2, seed=2)], "tiny",
                                   task="classification")
        trees.grid = TreeGrid(epsilons=(0.5, 2.0), repetitions=1)
        rules = session.interpreter.globals.lookup("R")
        rules.corpus = CorpusValue(planted_corpus(3), "tiny", task="classification")
        rules.grid = RuleGrid(epsilons=(0.5, 2.0), repetitions=1)
        session.run(CHOSEN)
        yield session
        session.close()


def _assert_detached(session: Session, value: Any, what: str) -> None:
    reached = reachable_from(value, forbidden_in(session))
    assert not reached, f"{what} reaches a live part of the session: {reached}"


# What each expression returns to Python (the test checks the kind, so that it walks something real).
RETURNED = {
    "n_released": int, "x_released": float, "hist": pd.Series, "hist2": pd.DataFrame, "vector": np.ndarray,
    "items": list, "record": dict, "dom_c": object, "dom_n": object, "tree": object, "forest": object,
    "c45": object, "rules": object, "public_rules": object, "labels": list, "bounds_n": list, "domain_a": list,
    "public_rows": list, "spent_now": float, "remaining_now": float, "charges": list, "pub": pd.DataFrame,
    "estimate": pd.Series, "traces": list, "explained": str, "chosen_tree": object, "chosen_rules": object,
    "tree_traces": list, "[tree, rules, chosen_tree]": list, "{m: tree, r: chosen_rules}": dict,
    "trace(H)[0]": dict, "explain(T)": str,
}


@pytest.mark.parametrize("expression", list(RETURNED))
def test_every_kind_of_value_returned_by_eval_is_detached(session: Session, expression: str) -> None:
    value = session.eval(expression)
    assert isinstance(value, RETURNED[expression]), type(value)
    _assert_detached(session, value, f"session.eval({expression!r})")


@pytest.mark.parametrize("name", ["tree", "forest", "chosen_tree", "rules", "chosen_rules", "c45"])
def test_a_returned_model_is_a_working_copy_without_randomness(session: Session, name: str) -> None:
    """The model crosses as a copy: same printout and predictions, no noise source, nothing shared."""
    inside = session.interpreter.globals.lookup(name)
    returned = session.eval(name)
    assert type(returned) is type(inside) and returned is not inside
    assert str(returned) == str(inside)
    estimator = getattr(returned, "estimator", None)
    if estimator is not None:
        assert estimator is not inside.estimator
        assert getattr(estimator, "noise", None) is None and getattr(estimator, "charge", None) is None
        test = session.interpreter.globals.lookup("pub")
        assert returned.predict_labels(test, None, "predict") == inside.predict_labels(test, None, "predict")
    else:
        assert returned.rule_list is not inside.rule_list
        assert np.array_equal(returned.rule_list.probabilities, inside.rule_list.probabilities)


def test_the_sessions_own_accessors_return_detached_objects(session: Session) -> None:
    ledger = session.ledger
    for what, value in [("session.ledger", ledger), ("list(session.ledger)", list(ledger)),
                        ("session.ledger.to_frame()", ledger.to_frame()), ("str(session.ledger)", str(ledger)),
                        ("session.spent", session.spent), ("session.session_spent", session.session_spent),
                        ("session.remaining", session.remaining), ("session.warnings", session.warnings)]:
        _assert_detached(session, value, what)
    for name in session.interpreter.globals.values:
        _assert_detached(session, session.describe(name), f"session.describe({name!r})")


@pytest.mark.parametrize("expression", ["t", "cats", "f", "Flat", "H", "T", "count(t)", "t.count", "tree_corpus()",
                                        "FriedmanSchuster", "[1, t]", "{a: f}"])
def test_what_is_not_data_is_refused(session: Session, expression: str) -> None:
    with pytest.raises(PrivacyError, match="cannot be returned to Python"):
        session.eval(expression)


def _reseed_everything_reachable(model: Any, seed: int) -> list[Any]:
    """The attack: every source of randomness reachable from `model` is reseeded with a seed the
    attacker knows (and its buffer of words drawn before emptied). Returns the sources."""
    sources: dict[int, Any] = {}

    def note(obj: Any) -> None:
        if isinstance(obj, Randomness):
            sources[id(obj)] = obj
        return None

    reachable_from(model, note)
    noise = getattr(getattr(model, "estimator", None), "noise", None)
    if noise is not None:
        sources[id(noise)] = noise
    for source in sources.values():
        source._generator = np.random.Generator(np.random.PCG64(seed))
        source.words._buffer.clear()
    return list(sources.values())


TREE_PROGRAM = 'cats = select(t, ["a", "b", "label"])\nm = FriedmanSchuster(cats, "label", epsilon=1)\n'
RELEASES = "[" + ", ".join(["geometric(count(t), 0.1)"] * 6) + "]"


def test_hole5_reseeding_a_returned_models_noise_does_not_reveal_the_next_releases() -> None:
    """The reproducer: on a session drawing from the secure source, the attacker reseeds every
    source of randomness reachable from the tree it got back and subtracts the noise that seed
    gives from the next releases. Before the fix this gave the true count, 600, six times out of
    six; now the session's noise is untouched (the chance that six independent draws at epsilon
    0.1 all match the attacker's is below 10^-9)."""
    session = _session(seed=None)
    session.run(TREE_PROGRAM)
    sources = _reseed_everything_reachable(session.eval("m"), 7)
    released = np.array(session.eval(RELEASES))
    attacker = Randomness(seed=7)  # the same draws, one release at a time
    known_noise = np.concatenate([attacker.discrete_laplace(Fraction(10), 1) for _ in range(6)])  # as `geometric`
    assert not np.array_equal(released - known_noise, np.full(6, 600)), "the true count was recovered"
    assert not sources


def test_hole5_reseeding_a_returned_models_noise_does_not_change_the_sessions_releases() -> None:
    """With the same seed, the attacked session releases exactly what an untouched twin does."""
    attacked, twin = _session(seed=3), _session(seed=3)
    attacked.run(TREE_PROGRAM)
    twin.run(TREE_PROGRAM)
    _reseed_everything_reachable(attacked.eval("m"), 7)
    assert attacked.eval(RELEASES) == twin.eval(RELEASES), "reseeding the returned model changed the session"


def test_the_walk_finds_the_randomness_when_the_detaching_is_taken_away(monkeypatch: pytest.MonkeyPatch) -> None:
    """Negative control of the walk above: with `to_python`'s detaching monkeypatched away (the
    model returned as it is, unchecked, as before the fix), the session's randomness is found."""
    from jostle.language import detach

    monkeypatch.setattr(detach, "detached_copy", lambda model: model)
    monkeypatch.setattr(detach, "reachable", lambda *args, **kwargs: [])
    session = _session()
    session.run('cats = select(t, ["a", "b", "label"])\nm = FriedmanSchuster(cats, "label", epsilon=1)\n')
    reached = reachable_from(session.eval("m"), forbidden_in(session))
    assert any("the session's randomness" in r for r in reached), reached


def test_the_runtime_check_refuses_a_model_that_would_reach_the_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """The generic check fails closed: a released model whose copy still held a live source of
    randomness (here: the copy step taken away) is refused, with a message naming only its kind."""
    from jostle.language import detach

    monkeypatch.setattr(detach, "detached_copy", lambda model: model)
    session = _session()
    session.run('cats = select(t, ["a", "b", "label"])\nm = FriedmanSchuster(cats, "label", epsilon=1)\n')
    with pytest.raises(PrivacyError, match="cannot be returned to Python: it holds a source of randomness"):
        session.eval("m")
