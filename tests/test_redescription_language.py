"""DP redescription mining in the language: `redescribe(left, right, ...)` over two views of one
database bound under entity(key), charged once before anything is drawn, its refusals before any
charge, the released set as a value (printed, listed, converted to pandas, evaluated on PUBLIC
views), public declarations of the views (declare.py) and the import-cost rule."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.data.schema import Schema
from jostle.diagnostics.errors import BudgetExceeded, JostleRuntimeError, PrivacyError
from jostle.learners.redescription import declare
from jostle.learners.redescription.planted import planted_two_views
from jostle.learnerkit.encoding import NumericBins

KEY = {"type": "numeric", "bounds": [0, 10 ** 6], "integer": True}


def _schema(task, view: int) -> dict:
    out = {"id": KEY}
    for attribute in task.views.schemas[view].attributes:
        out[attribute.name] = ({"type": "categorical", "values": list(attribute.values)}
                               if attribute.kind == "categorical" else {"type": "numeric", "bounds": [0, 100]})
    return out


@pytest.fixture(scope="module")
def task():
    return planted_two_views(800, seed=2)


def _session(task, budget: float = 100.0, seed: int = 3) -> Session:
    session = Session(budget=budget, seed=seed, ledger_path=":memory:")
    session.bind_database({"lv": task.left, "rv": task.right}, key="id",
                          schemas={"lv": _schema(task, 0), "rv": _schema(task, 1)})
    try:
        session.interpreter.globals.lookup("redescribe")
    except KeyError:
        from jostle.language.builtin_registry import BuiltinRegistry
        from jostle.learners.redescription import language

        registry = BuiltinRegistry()
        language.register(registry.builtin, registry)
        for name, value in registry.items():  # the family's built-ins (found by discovery once it is a family)
            session.interpreter.globals.define(name, value)
    session.bind_public("pl", task.left, _schema(task, 0))
    session.bind_public("pr", task.right, _schema(task, 1))
    return session


VIEWS = "lv.bound_per_key(1), rv.bound_per_key(1)"


# ---------------------------------------------------------------- the call
def test_a_private_call_is_charged_once_and_releases_a_printable_set(task) -> None:
    session = _session(task)
    session.run(f'found = redescribe({VIEWS}, algorithm="AltExpM", alternations=2, bins=10, epsilon=1.5)\n'
                "text = str(found)\nrows = redescriptions(found)\nall = redescriptions(found, pruned=true)\n"
                "long = redescription_text(found, pruned=true)\n")
    assert [(c.mechanism, c.budget.epsilon) for c in session.ledger] == [("redescribe AltExpM", Fraction(3, 2))]
    text = session.eval("text")
    assert text.startswith("% redescribe (AltExpM(InTr=1, RMIter=2), epsilon 1.5)\nAltExpM(InTr=1, RMIter=2) at "
                           "epsilon 1.5: ")
    rows, every = session.eval("rows"), session.eval("all")
    assert len(every) > len(rows) and all(row["pruned"] for row in every[len(rows):] if row["pruned"])
    for row in rows:  # each kept redescription prints both queries and its noisy statistics
        assert set(row) >= {"left", "right", "support", "jaccard", "pvalue", "pruned"} and not row["pruned"]
        assert f"{row['left']}  <=>  {row['right']}" in text and 0 <= row["jaccard"] <= 1
    assert session.eval("long").count("\n") == text.count("\n") + len(every) - len(rows)


def test_the_released_value_converts_to_pandas_and_evaluates_on_public_views(task) -> None:
    session = _session(task)
    session.run(f'found = redescribe({VIEWS}, algorithm="AltExpM", tries=2, bins=10, min_support=50, epsilon=50)\n'
                'truth = evaluate_redescriptions(found, pl, pr, key="id", pruned=false)\n')
    value = session.eval("found")
    frame = value.to_frame(include_pruned=True)
    assert list(frame.columns) == ["left", "right", "support", "jaccard", "pvalue", "left_support",
                                   "right_support", "pruned", "origin"]
    assert len(value.to_frame()) == len(session.eval("truth")) == (~frame["pruned"]).sum()
    evaluated = value.evaluate(task.left, task.right, key="id")
    assert len(evaluated) == len(frame) and {"true_support", "true_jaccard", "true_pvalue"} <= set(evaluated)
    kept = evaluated[~evaluated["pruned"]]
    # at a large epsilon the released statistics are those of the printed queries, up to small noise
    assert len(kept) and np.all(np.abs(kept["jaccard"] - kept["true_jaccard"]) < 0.05)
    truth = session.eval("truth")
    assert [row["true_jaccard"] for row in truth] == pytest.approx(list(kept["true_jaccard"]))


def test_declared_edges_are_the_only_thresholds_of_a_numeric_attribute(task) -> None:
    numeric = [a.name for a in task.views.schemas[0].attributes if a.kind == "numeric"]
    assert numeric, "the planted task has a numeric left attribute"
    column = numeric[0]
    session = _session(task)
    session.run(f"found = redescribe({VIEWS}, algorithm=\"AltExpM\", alternations=3, "
                f"edges={{{column}: [0, 30, 50, 100]}}, epsilon=3)\ntext = redescription_text(found, pruned=true)\n")
    thresholds = set(re.findall(rf"\b{column} (?:<|>=) ([\d.]+)", session.eval("text")))
    assert thresholds <= {"30", "50"}


def test_an_initial_target_starts_every_try(task) -> None:
    session = _session(task)
    name = task.views.schemas[1].names[0]
    session.run(f'found = redescribe({VIEWS}, tries=3, initial_target="{name}", epsilon=1)\n')
    notes = session.eval("found").released.notes
    assert len(notes) == 3 and all(f"initial target {name} (rv view)" in note for note in notes)


def test_over_budget_is_refused_with_nothing_charged(task) -> None:
    session = _session(task, budget=1.0)
    with pytest.raises(BudgetExceeded):
        session.run(f"found = redescribe({VIEWS}, epsilon=2)\n")
    assert len(session.ledger) == 0


def test_on_public_tables_nothing_is_charged(task) -> None:
    session = _session(task)
    session.run('found = redescribe(pl, pr, key="id", epsilon=2)\ntext = str(found)\n')
    assert "public tables, nothing charged" in session.eval("text") and len(session.ledger) == 0
    assert "MCMCTreePair(InTr=1, omega=0.5) at epsilon 2:" in session.eval("text")  # the miner ran at epsilon 2


def test_no_entity_left_is_answered_like_any_other_database(task) -> None:
    """Neighbouring databases may differ by their only entity: the empty one must not fail."""
    session = _session(task)
    session.run("empty = lv.bound_per_key(1).where(lambda r: r.id < 0)\n"
                "found = redescribe(empty, rv.bound_per_key(1), algorithm=\"AltExpM\", epsilon=1)\n"
                "one = redescribe(lv.bound_per_key(1).where(lambda r: r.id < 1), rv.bound_per_key(1), epsilon=1)\n"
                "text = str(found)\n")
    assert "epsilon 1" in session.eval("text")
    assert [c.budget.epsilon for c in session.ledger] == [Fraction(1), Fraction(1)]


@pytest.mark.parametrize("call, message", [
    ("redescribe(lv, rv.bound_per_key(1), epsilon=1)", "bound_per_key(1)"),
    ("redescribe(lv.bound_per_key(2), rv.bound_per_key(1), epsilon=1)", "stability 2"),
    ("redescribe(lv.bound_per_key(1), other.bound_per_key(1), epsilon=1)", "not tables of one database"),
    ("redescribe(rows, rv.bound_per_key(1), epsilon=1)", "entity(key)"),
    ("redescribe(lv.bound_per_key(1), pr, epsilon=1)", "mixes a private and a public view"),
    ("redescribe(lv.bound_per_key(1).select([\"L0a\", \"L0b\"]), rv.bound_per_key(1), epsilon=1)", "no column 'id'"),
    ("redescribe(lv.bound_per_key(1), epsilon=1)", "left and the right view"),
    (f"redescribe({VIEWS}, key=\"L0a\", epsilon=1)", "key="),
    (f"redescribe({VIEWS}, algorithm=\"MCMC\", epsilon=1)", "algorithm must be one of"),
    (f"redescribe({VIEWS}, algorithm=\"AltMCMCChain\", epsilon=1)", "MCMCTreePair"),
    (f"redescribe({VIEWS}, edges={{L0a: [50, 30, 100]}}, epsilon=1)", "increase strictly"),
    (f"redescribe({VIEWS}, edges={{nope: [0, 50, 100]}}, epsilon=1)", "not an attribute"),
    (f"redescribe({VIEWS}, edges={{id: [0, 50, 100]}}, epsilon=1)", "not an attribute"),
    (f"redescribe({VIEWS}, edges=[0, 50], epsilon=1)", "record"),
    (f"redescribe({VIEWS}, bins=0, epsilon=1)", "bins"),
    (f"redescribe({VIEWS}, omega=1, epsilon=1)", "omega"),
    (f"redescribe({VIEWS}, tries=0, epsilon=1)", "tries"),
    (f"redescribe({VIEWS}, depth=7, epsilon=1)", "depth must be a whole number in 1..6"),
    (f"redescribe({VIEWS}, min_jaccard=1.5, epsilon=1)", "min_jaccard"),
    (f"redescribe({VIEWS}, algorithm=\"AltExpM\", tries=100, alternations=100, epsilon=1)", "at most 1000"),
    (f"redescribe({VIEWS}, initial_target=\"nope\", epsilon=1)", "initial_target"),
    (f"redescribe({VIEWS}, runs=0, epsilon=1)", "runs"),
    (f"redescribe({VIEWS}, sampler=1, epsilon=1)", "keyword"),
    (f"redescribe({VIEWS}, epsilon=-1)", "epsilon"),
])
def test_bad_calls_are_refused_before_any_charge(task, call: str, message: str) -> None:
    session = _session(task)
    other = planted_two_views(50, seed=9)
    session.bind_database({"other": other.right}, key="id", schemas={"other": _schema(other, 1)})
    session.bind_private("rows", task.left, _schema(task, 0))
    with pytest.raises((JostleRuntimeError, PrivacyError)) as caught:
        session.run(f"found = {call}\n")
    assert message in caught.value.message + (caught.value.hint or "")
    assert len(session.ledger) == 0


def test_evaluating_on_private_views_is_refused(task) -> None:
    session = _session(task)
    session.run(f"found = redescribe({VIEWS}, epsilon=1)\n")
    with pytest.raises(PrivacyError):
        session.run("bad = evaluate_redescriptions(found, lv.bound_per_key(1), rv.bound_per_key(1))\n")
    with pytest.raises(JostleRuntimeError, match="released redescriptions"):
        session.run("bad = redescriptions(3)\n")
    assert len(session.ledger) == 1


def test_a_task_value_holds_the_declarations(task) -> None:
    session = _session(task)
    session.run('t = redescription_task(bins=10, min_support=30, algorithm="AltExpM")\n'
                f"found = redescribe({VIEWS}, t, epsilon=0.5)\n")
    assert [c.mechanism for c in session.ledger] == ["redescribe AltExpM"]
    with pytest.raises(JostleRuntimeError, match="both by the call and by its redescription_task"):
        session.run(f"bad = redescribe({VIEWS}, t, bins=4, epsilon=1)\n")
    with pytest.raises(JostleRuntimeError, match="omega"):
        session.run("bad = redescription_task(omega=2)\n")
    assert len(session.ledger) == 1


# ---------------------------------------------------------------- declarations (public facts only)
def test_view_schemas_come_from_declared_domains_never_from_rows() -> None:
    schema = Schema.of({"id": KEY, "sex": {"type": "categorical", "values": ["F", "M"]},
                        "age": {"type": "numeric", "bounds": [0, 100]},
                        "children": {"type": "numeric", "bounds": [0, 2], "integer": True}})
    view = declare.view_from_schema("people", schema, "id", bins=5, edges={"age": [0, 18, 65, 100]})
    assert view.names == ("sex", "age", "children")
    assert view.attributes[0].values == ("F", "M") and view.attributes[1].edges == (0.0, 18.0, 65.0, 100.0)
    assert view.attributes[2].n_bins == 3  # an integer column: no more bins than values
    python = declare.view_from_domains("people", {"sex": ["F", "M"], "age": NumericBins(0, 100, 5)})
    assert python.attributes[1].edges == (0.0, 20.0, 40.0, 60.0, 80.0, 100.0)
    with pytest.raises(declare.DeclarationError, match="NumericBins"):
        declare.view_from_domains("people", {"age": 3})
    with pytest.raises(declare.DeclarationError, match="categorical column"):
        declare.view_from_schema("people", schema, "id", edges={"sex": [0, 1]})


def test_coding_never_fails_on_a_row_value() -> None:
    from jostle.learners.redescription.views import encode_views

    left = declare.view_from_domains("l", {"sex": ["F", "M"], "age": NumericBins(0, 100, 4)})
    right = declare.view_from_domains("r", {"smoker": ["yes", "no"]})
    frame = pd.DataFrame({"id": [1, 2, 3, 4], "sex": ["F", "X", None, [1]], "age": [5, float("nan"), "old", 1e9]})
    views = encode_views(frame, pd.DataFrame({"id": [4, 3, 2, 9], "smoker": ["yes", "no", 7, "no"]}), (left, right),
                         "id")
    assert views.codes[0].tolist() == [[2, 4], [2, 4], [2, 3]]  # "other" and "missing" codes; id 1 unmatched
    assert views.codes[1][:, 0].tolist() == [2, 1, 0]


def test_the_language_module_imports_no_heavy_library() -> None:
    code = ("import json, sys; import jostle.learners.redescription.language; "
            "print(json.dumps(sorted(sys.modules)))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    heavy = {m.split(".")[0] for m in json.loads(result.stdout)} & {"pandas", "sklearn", "scipy", "matplotlib"}
    assert heavy == set()


# ---------------------------------------------------------------- Options and ChoiceMakers
def test_an_option_call_runs_the_familys_option_on_a_task(task) -> None:
    session = _session(task)
    session.run("t = redescription_task(bins=10, runs=3)\n"
                f"found = AltExpMStable({VIEWS}, t, epsilon=0.75)\ntext = str(found)\n")
    assert [(c.mechanism, c.budget.epsilon) for c in session.ledger] == [("option AltExpMStable", Fraction(3, 4))]
    assert session.eval("text").startswith("% AltExpMStable (AltExpM(InTr=")
    with pytest.raises(JostleRuntimeError, match="an Option fixes algorithm"):
        session.run(f'bad = MCMCTreePair({VIEWS}, redescription_task(algorithm="AltExpM"), epsilon=1)\n')
    with pytest.raises(JostleRuntimeError, match="keyword"):
        session.run(f"bad = MCMCTreePair({VIEWS}, t, bins=4, epsilon=1)\n")
    assert len(session.ledger) == 1


def test_in_a_zcdp_program_the_call_runs_at_the_pure_epsilon_within_its_rho(task) -> None:
    session = _session(task, budget=None)
    session.run(f'budget rho(0.5)\nfound = redescribe({VIEWS}, algorithm="AltExpM", rho=0.125)\ntext = str(found)\n')
    assert session.eval("text").startswith("% redescribe (AltExpM(InTr=1, RMIter=1), epsilon 0.5 (rho 0.125))")
    assert [charge.budget.epsilon for charge in session.ledger] == [Fraction(1, 2)]  # e^2 / 2 = 0.125


def test_bin_edges_may_come_from_a_charged_dp_quantile_release(task) -> None:
    numeric = [a.name for a in task.views.schemas[0].attributes if a.kind == "numeric"][0]
    session = _session(task)
    session.run(f'import stats\nview = lv.bound_per_key(1)\nq = stats.private_median(view, "{numeric}", 0.5)\n'
                f"found = redescribe(view, rv.bound_per_key(1), edges={{{numeric}: [0, q, 100]}}, epsilon=1)\n")
    assert 0 < session.eval("q") < 100  # released, public: a declared edge like any other
    assert sum(c.budget.epsilon for c in session.ledger) == Fraction(3, 2)
    schema = session.eval("found").released.schemas[0]
    assert schema.attributes[schema.names.index(numeric)].edges == (0.0, session.eval("q"), 100.0)


def test_a_choicemaker_call_gives_the_engine_the_views_and_runs_an_option(task) -> None:
    from jostle.diagnostics.source import BUILTIN_SPAN
    from jostle.learners.redescription.language import RedescriptionsValue, choice_call
    from jostle.privacy.measures import Budget

    session = _session(task)
    session.run("l = lv.bound_per_key(1)\nr = rv.bound_per_key(1)\nt = redescription_task(bins=10, runs=2)\n")
    values = [session.interpreter.globals.lookup(name) for name in ("l", "r", "t")]

    class Maker:
        name = "C"

    call = choice_call(Maker(), session.interpreter, values, BUILTIN_SPAN)
    assert call.private and call.unit.is_entity and call.unit.key == "id" and len(session.ledger) == 0
    assert call.data.runs == 2 and call.data.constraints is None and call.data.views.n_entities == 800
    option = session.interpreter.globals.lookup("AltExpMStable")
    value = call.wrap(call.run_builtin(option, Budget.of(1), {}), "AltExpMStable", Budget.of(1))
    assert isinstance(value, RedescriptionsValue) and value.header().startswith("% C: AltExpMStable (AltExpM(")
    with pytest.raises(JostleRuntimeError, match="an Option fixes"):
        choice_call(Maker(), session.interpreter, values[:2] + [
            session.interpreter.globals.lookup("redescription_task").function(session.interpreter, BUILTIN_SPAN,
                                                                               algorithm="AltExpM")], BUILTIN_SPAN)


def test_public_views_that_cannot_be_matched_are_refused_located(task) -> None:
    session = _session(task)
    session.bind_public("short", task.right.iloc[:10], _schema(task, 1))
    with pytest.raises(JostleRuntimeError, match="no key to match them") as caught:
        session.run("found = redescribe(pl, short, epsilon=1)\n")
    assert caught.value.span is not None
    session.run('found = redescribe(pl, pr, key="id", epsilon=1)\n')
    with pytest.raises(JostleRuntimeError, match="lacks the declared columns"):
        session.run('bad = evaluate_redescriptions(found, pr, pl, key="id")\n')
    assert len(session.ledger) == 0
