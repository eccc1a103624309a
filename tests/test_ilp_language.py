"""DP ILP from tables and in the language: relational databases built from frames under public
declarations (jostle.learners.ilp.tables), the `ILP(...)` call charged once before anything is
drawn, its refusals before any charge, theories as Prolog values evaluated on public tables, and
`ilp_bounds` (Theorem 3) reading no row."""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.diagnostics.errors import BudgetExceeded, JostleRuntimeError, PrivacyError
from jostle.learners.ilp import aleph, declare, tables, trains
from jostle.learners.ilp.modes import TRAIN_MODES
from jostle.learners.ilp.theory import covers, parse_theory

THEORIES = ("eastbound(T) :- has_car(T, C), short(C), closed(C).",
            "eastbound(T) :- has_car(T, C), load(C, triangle, 1), open_car(C).",
            "eastbound(T) :- has_car(T, C), long(C), wheels(C, 3).\neastbound(T) :- has_car(T, C), double(C).",
            "eastbound(T) :- has_car(T, C), roof(C, jagged).")


# ---------------------------------------------------------------- tables
def _frames(n: int, seed: int, offset: int = 100) -> tuple[trains.RelationalDatabase, pd.DataFrame, pd.DataFrame]:
    generated = trains.generate_trains(n, seed=seed)
    examples, cars = declare.trains_frames(generated)
    examples["train_id"] += offset  # keys need not be 0..n-1
    cars["train_id"] += offset
    return generated, examples, cars


@pytest.mark.parametrize("text", THEORIES)
def test_trains_from_frames_are_covered_as_the_generated_ones(text: str) -> None:
    generated, examples, cars = _frames(1500, seed=4)
    built = declare.trains_schema().build(examples.sample(frac=1, random_state=1).reset_index(drop=True)
                                         .sort_values("train_id"), {"cars": cars.iloc[::-1]})
    theory = parse_theory(text, generated)
    assert np.array_equal(covers(theory, generated), covers(parse_theory(text, built), built))
    assert np.array_equal(generated.examples.labels, built.examples.labels)


def test_the_frames_give_the_train_modes_and_the_same_learned_theory() -> None:
    generated, examples, cars = _frames(400, seed=1)
    built = declare.relational_database(
        examples, "train_id", "eastbound", True, {"cars": (cars, declare.TRAIN_CARS)},
        domains=declare.train_domains(), background=[declare.TRAIN_ROOFS], example="train")
    TRAIN_MODES.check(built)
    assert set(trains.TRAIN_PREDICATES) <= set(built.predicates)
    assert aleph.learn(built).to_prolog() == aleph.learn(generated).to_prolog()
    assert built.counts == generated.counts


def test_building_is_vectorised() -> None:
    _, examples, cars = _frames(30_000, seed=2)
    schema = declare.trains_schema()
    start = time.perf_counter()
    built = schema.build(examples, {"cars": cars})
    assert time.perf_counter() - start < 2.0
    assert built.counts["car"] == len(cars)


def test_a_background_table_gives_derived_predicates() -> None:
    frame = pd.DataFrame({"shape": ["rectangle", "hexagon", "ellipse", "u_shaped", "bucket"],
                          "kind": ["polygon", "polygon", "curved", "curved", "curved"]})
    background = tables.Background.from_frame(frame, "shapes")
    generated, examples, cars = _frames(500, seed=3)
    built = declare.relational_database(
        examples, "train_id", "eastbound", True, {"cars": (cars, declare.TRAIN_CARS)},
        domains=declare.train_domains(), background=[background, declare.TRAIN_ROOFS])
    polygon = covers(parse_theory("eastbound(T) :- has_car(T, C), polygon(C).", built), built)
    either = covers(parse_theory("eastbound(T) :- has_car(T, C), rectangle(C).\n"
                                 "eastbound(T) :- has_car(T, C), hexagon(C).", generated), generated)
    assert np.array_equal(polygon, either) and 0 < polygon.mean() < 1


def test_a_fact_table_without_the_example_key_is_refused_with_a_fix() -> None:
    _, examples, cars = _frames(50, seed=5)
    with pytest.raises(tables.TableError) as caught:
        declare.relational_database(examples, "train_id", "eastbound", True,
                                   {"cars": (cars.drop(columns="train_id"), declare.TRAIN_CARS)},
                                   domains=declare.train_domains())
    assert "keyed by the example id" in caught.value.message and "background" in caught.value.hint


@pytest.mark.parametrize("change, message", [
    (lambda e, c: (e, c.assign(roof=c.roof.where(c.index != 3, "glass"))), "outside its declared domain"),
    (lambda e, c: (pd.concat([e, e.iloc[:1]]), c), "repeats an id"),
    (lambda e, c: (e.iloc[1:], c), "not examples"),
])
def test_strict_building_refuses_rows_it_cannot_place(change, message) -> None:
    _, examples, cars = _frames(50, seed=6)
    examples, cars = change(examples, cars)
    schema = declare.trains_schema()
    with pytest.raises(tables.TableError, match=message):
        schema.build(examples, {"cars": cars})
    lenient = schema.build(examples, {"cars": cars}, strict=False)  # the language's rule: drop the row
    assert len(lenient.examples) <= 50


@pytest.mark.parametrize("kwargs, message", [
    ({"background": [tables.Background("roof", (("short", ("arc",)),))]}, "two predicates are named 'short'"),
    ({"background": [tables.Background("roof", (("closed", ("glass",)),))]}, "not a constant"),
    ({"domains": {**declare.train_domains(), "shape": ("U-shaped", "bucket")}}, "not a Prolog constant"),
    ({"head": "Eastbound"}, "not a Prolog name"),
])
def test_bad_declarations_are_refused_before_any_row_is_read(kwargs, message) -> None:
    _, examples, cars = _frames(20, seed=7)
    arguments = {"domains": declare.train_domains(), **kwargs}
    with pytest.raises(tables.TableError, match=message):
        declare.relational_database(examples, "train_id", "eastbound", True, {"cars": (cars, declare.TRAIN_CARS)},
                                   **arguments)


# ---------------------------------------------------------------- the language
def _cat(values) -> dict:
    return {"type": "categorical", "values": list(values)}


KEY = {"type": "numeric", "bounds": [0, 100_000], "integer": True}
SCHEMAS = {"trains": {"train_id": KEY, "direction": _cat(["east", "west"])},
           "cars": {"train_id": KEY, "car_id": {"type": "numeric", "bounds": [0, 10 ** 6], "integer": True},
                    **{column: _cat(values) for column, values in declare.train_domains().items()}}}
MODES = '["has_car(+train, -car)", "short(+car)", "long(+car)", "closed(+car)", "double(+car)", "roof(+car, #roof)"]'
FAKE = '"has_car(T, C), short(C), closed(C), long(C), double(C)"'
DECLARE = ('target="direction", positive="east", head="eastbound", entities={cars: "car"}, '
           'unary=["length", "wall"], background=[closed]')


def _direction(examples: pd.DataFrame) -> pd.DataFrame:
    return examples.drop(columns="eastbound").assign(direction=np.where(examples["eastbound"], "east", "west"))


def _session(budget: float = 5.0, n: int = 3000, seed: int = 3) -> Session:
    _, examples, cars = _frames(n, seed=1)
    _, test_examples, test_cars = _frames(1000, seed=2)
    session = Session(budget=budget, seed=seed)
    session.bind_database({"trains": _direction(examples), "cars": cars}, key="train_id", schemas=SCHEMAS)
    from jostle.learners.ilp import language
    from jostle.language.builtin_registry import BuiltinRegistry

    registry = BuiltinRegistry()
    language.register(registry.builtin, registry)
    for name, value in registry.items():  # the family's built-ins (also found by discovery once it is a family)
        session.interpreter.globals.define(name, value)
    session.bind_public("test_trains", _direction(test_examples))
    session.bind_public("test_cars", test_cars)
    session.bind_public("closed", pd.DataFrame({"roof": ["arc", "flat", "peaked", "jagged"]}))
    session.bind_private("secret", pd.DataFrame({"roof": ["arc"]}), {"roof": _cat(["arc", "flat"])})
    return session


def test_a_private_theory_is_charged_once_prints_as_prolog_and_is_accurate_on_public_data() -> None:
    session = _session()
    session.run(f"th = ILP(trains.bound_per_key(1), cars, {DECLARE}, modes={MODES}, fake={FAKE}, epsilon=1.5)\n"
                "text = str(th)\nclauses = prolog(th)\nacc = theory_accuracy(th, test_trains, test_cars)\n"
                "hits = covers(th, test_trains, test_cars)\n")
    assert [charge.mechanism for charge in session.ledger] == ["option ILP"]
    assert session.ledger[0].budget.epsilon == Fraction(3, 2)
    assert session.eval("text").startswith("% ILP (relevance, epsilon 1.5): 1 clause(s) for eastbound\n")
    assert session.eval("clauses") == "eastbound(T) :- has_car(T, C), short(C), closed(C)."
    assert session.eval("acc") == 1.0
    assert len(session.eval("hits")) == 1000


def test_on_public_tables_the_learner_is_aleph_for_free() -> None:
    session = _session()
    session.run(f'th = ILP(test_trains, test_cars, target="direction", positive="east", head="eastbound", '
                f'entities={{test_cars: "car"}}, links={{test_cars: "has_car"}}, unary=["length", "wall"], '
                f'background=[closed], modes={MODES})\nclauses = prolog(th)\n')
    assert session.eval("clauses") == "eastbound(T) :- has_car(T, C), short(C), closed(C)."
    assert len(session.ledger) == 0


def test_over_budget_is_refused_with_nothing_charged() -> None:
    session = _session(budget=1.0)
    with pytest.raises(BudgetExceeded):
        session.run(f"th = ILP(trains.bound_per_key(1), cars, {DECLARE}, modes={MODES}, epsilon=2)\n")
    assert len(session.ledger) == 0


def test_the_trivial_theories() -> None:
    session = _session()
    session.run(f'a = prolog(ILP(trains.bound_per_key(1), cars, {DECLARE}, method="all_positive", epsilon=1))\n')
    assert session.eval("a") == "eastbound(T)." and len(session.ledger) == 0
    session.run(f'b = ILP(trains.bound_per_key(1), cars, {DECLARE}, method="majority", epsilon=0.25)\n')
    assert [c.budget.epsilon for c in session.ledger] == [Fraction(1, 4)]


@pytest.mark.parametrize("call, message", [
    (f"ILP(trains, cars, {DECLARE}, epsilon=1)", "bound_per_key(1)"),
    (f"ILP(trains.bound_per_key(1), cars.select([\"roof\", \"car_id\"]), {DECLARE}, epsilon=1)",
     "not keyed by the example"),
    (f"ILP(trains.bound_per_key(1), other, {DECLARE.replace('cars:', 'other:')}, epsilon=1)",
     "not a table of the examples' database"),
    (f"ILP(rows, cars, {DECLARE}, epsilon=1)", "entity(example id)"),
    (f"ILP(trains.bound_per_key(1), cars, {DECLARE}, modes=[\"polygon(+car)\"], epsilon=1)", "unknown predicate"),
    (f"ILP(trains.bound_per_key(1), cars, {DECLARE}, modes=[\"short(car)\"], epsilon=1)", "is not +type"),
    (f"ILP(trains.bound_per_key(1), cars, {DECLARE}, modes={MODES}, fake=\"has_car(T, C), wheels(C, 3)\", "
     "epsilon=1)", "fake"),
    ("ILP(trains.bound_per_key(1), cars, " + DECLARE.replace('"east"', '"north"') + ", epsilon=1)", "positive="),
    (f"ILP(trains.bound_per_key(1), cars, {DECLARE}, method=\"greedy\", epsilon=1)", "method"),
    (f"ILP(trains.bound_per_key(1), cars, {DECLARE}, levels=-1, epsilon=1)", "levels"),
    (f"ILP(trains.bound_per_key(1), cars, {DECLARE}, modes={MODES}, fake={FAKE}, k=3, epsilon=1)", "k is 3"),
    (f"ILP(trains.bound_per_key(1), cars, {DECLARE.replace('background=[closed]', 'background=[secret]')}, "
     "epsilon=1)", "must be public"),
    (f"ILP(trains.bound_per_key(1), cars, {DECLARE}, epsilon=1, sampler=1)", "keyword"),
])
def test_bad_calls_are_refused_before_any_charge(call: str, message: str) -> None:
    session = _session()
    _, examples, cars = _frames(30, seed=9)
    session.bind_database({"trains2": _direction(examples), "other": cars}, key="train_id",
                          schemas={"trains2": SCHEMAS["trains"], "other": SCHEMAS["cars"]})
    session.bind_private("rows", _direction(examples), SCHEMAS["trains"])
    with pytest.raises((JostleRuntimeError, PrivacyError)) as caught:
        session.run(f"th = {call}\n")
    assert message in caught.value.message + (caught.value.hint or "")
    assert len(session.ledger) == 0


def test_evaluating_a_theory_on_private_tables_is_refused() -> None:
    session = _session()
    session.run(f'th = ILP(trains.bound_per_key(1), cars, {DECLARE}, method="all_positive", epsilon=1)\n')
    with pytest.raises(PrivacyError):
        session.run("a = theory_accuracy(th, trains.bound_per_key(1), cars)\n")
    assert len(session.ledger) == 0


def test_ilp_bounds_reports_theorem_3_and_reads_no_row() -> None:
    session = _session()
    session.run(f"r = ilp_bounds(trains, cars, ilp_task({DECLARE}, modes={MODES}, fake={FAKE}), epsilon=1, "
                "max_examples=1000)\n")
    text = session.eval("r")
    assert "fake bottom clause: 5 literals" in text and "Theorem 3" in text
    assert "does not say that this database yields no useful theory" in text
    assert len(session.ledger) == 0


def test_an_ilp_task_holds_the_declarations_and_an_option_fixes_its_method() -> None:
    session = _session()
    session.run(f"task = ilp_task({DECLARE}, modes={MODES}, fake={FAKE})\n"
                "th = ILPRelevance2(trains.bound_per_key(1), [cars], task, epsilon=0.75)\ntext = str(th)\n"
                "r = ilp_bounds(trains, cars, task, epsilon=1, max_examples=500)\n")
    assert session.eval("text").startswith("% ILPRelevance2 (relevance, epsilon 0.75)")
    assert [c.budget.epsilon for c in session.ledger] == [Fraction(3, 4)]
    assert "level 3: 6 clauses" in session.eval("r")  # the task leaves l at its default, 3
    with pytest.raises(JostleRuntimeError, match="keyword"):
        session.run("a = ILPRelevance2(trains.bound_per_key(1), cars, task, levels=4, epsilon=1)\n")
    with pytest.raises(JostleRuntimeError, match="both by the call and by its ilp_task"):
        session.run('a = ILP(trains.bound_per_key(1), cars, task, target="direction", epsilon=1)\n')
    with pytest.raises(PrivacyError, match="must be public"):
        session.run(f"bad = ilp_task({DECLARE.replace('[closed]', '[secret]')})\n")
    assert len(session.ledger) == 1


def test_no_example_left_is_answered_like_any_other_database() -> None:
    """Neighbouring databases may differ by their only example: the empty one must not fail."""
    session = _session()
    listed = DECLARE.replace('entities={cars: "car"}', 'entities=["car"]')
    session.run("empty = trains.bound_per_key(1).where(lambda r: r.train_id < 0)\n"
                f"th = ILP(empty, cars, {listed}, modes={MODES}, fake={FAKE}, rounds=2, epsilon=1)\n"
                "text = prolog(th)\n")
    assert "eastbound" in session.eval("text")
    assert [c.budget.epsilon for c in session.ledger] == [Fraction(1)]


def test_public_tables_the_declarations_cannot_place_are_refused_located() -> None:
    """H5's fuzzer finding 3: a public examples table repeating an id was an internal error."""
    session = _session()
    session.bind_public("pub", pd.DataFrame({"id": [1, 1], "label": ["yes", "no"]}))
    with pytest.raises(JostleRuntimeError, match="repeats an id") as caught:
        session.run('th = ILP(pub, target="label", positive="yes", epsilon=1)\n')
    assert caught.value.span is not None and len(session.ledger) == 0


# ---------------------------------------------------------------- ChoiceMakers
def _choice_call(session: Session):
    from jostle.diagnostics.source import BUILTIN_SPAN
    from jostle.learners.ilp.language import choice_call

    session.run(f"examples = trains.bound_per_key(1)\ntask = ilp_task({DECLARE}, modes={MODES}, fake={FAKE})\n")
    values = [session.interpreter.globals.lookup(name) for name in ("examples", "cars", "task")]

    class Maker:
        name = "C"

    return choice_call(Maker(), session.interpreter, values, BUILTIN_SPAN)


def test_a_choicemaker_call_gives_the_engine_the_database_and_runs_an_option() -> None:
    from jostle.learners.ilp.language import TheoryValue
    from jostle.privacy.measures import Budget

    session = _session()
    call = _choice_call(session)
    assert call.private and call.unit.is_entity and call.unit.key == "train_id"
    assert len(call.data.database.examples) == 3000 and call.data.k == 5 and len(session.ledger) == 0
    option = session.interpreter.globals.lookup("ILPRelevance3")
    learned = call.run_builtin(option, Budget.of(1), {})
    value = call.wrap(learned, "ILPRelevance3", Budget.of(1))
    assert isinstance(value, TheoryValue) and value.method == "relevance"
    assert value.prolog() == "eastbound(T) :- has_car(T, C), short(C), closed(C)."


def test_import_ilp_declares_its_choicemaker_without_training() -> None:
    session = _session()
    session.run("import ilp\n")
    maker = session.interpreter.globals.lookup("ilp").env.lookup("chooser")
    assert sorted(option.name for option in maker.options) == sorted(
        ["ILPRelevance2", "ILPRelevance3", "ILPRelevance4", "ILPNaive", "ILPRelevance2x2", "ILPRelevance3x2",
         "ILPRelevance4x2", "ILPNaivex2", "ILPTrivial"])
    assert maker.trained is None and len(session.ledger) == 0


def test_a_choicemaker_over_ilp_options_dispatches_and_charges_its_budget(tmp_path) -> None:
    from jostle.choicemaker import train
    from jostle.learners.ilp.corpus import ilp_corpus
    from jostle.learners.ilp.family import FAMILY
    from jostle.learners.ilp.task import ILPGrid

    grid = ILPGrid(sizes=(100,), epsilons=(1.0,), repetitions=1, test_size=200)  # tiny: the route, not the model
    trained = train(["ILPRelevance3", "ILPTrivial"], ["bottom_size", "n_examples", "epsilon"], ilp_corpus(3), grid,
                    family=FAMILY, cache_dir=tmp_path, n_jobs=1, progress=False)
    session = _session()
    session.run("choicemaker C among {ILPRelevance3, ILPTrivial} informed by {bottom_size, n_examples, epsilon} "
                "trained on ilp_corpus()\n")
    session.interpreter.globals.lookup("C").trained = trained
    session.run(f"task = ilp_task({DECLARE}, modes={MODES}, fake={FAKE})\n"
                "th = C(trains.bound_per_key(1), cars, task, epsilon=1)\ntext = str(th)\nwhy = explain(C)\n")
    assert session.eval("text").startswith("% C: ILP")
    assert "chose ILP" in session.eval("why")
    assert sum(charge.budget.epsilon for charge in session.ledger) == Fraction(1)
    with pytest.raises(JostleRuntimeError, match="keyword"):
        session.run("th = C(trains.bound_per_key(1), cars, task, epsilon=1, levels=2)\n")


def test_in_a_zcdp_program_the_call_runs_at_the_pure_epsilon_within_its_rho() -> None:
    _, examples, cars = _frames(2000, seed=1)
    session = Session(budget=None, seed=3, ledger_path=":memory:")
    session.bind_database({"trains": _direction(examples), "cars": cars}, key="train_id", schemas=SCHEMAS)
    session.bind_public("closed", pd.DataFrame({"roof": ["arc", "flat", "peaked", "jagged"]}))
    session.run(f"budget rho(0.5)\nth = ILP(trains.bound_per_key(1), cars, {DECLARE}, modes={MODES}, fake={FAKE}, "
                "rho=0.125)\ntext = str(th)\n")
    assert session.eval("text").startswith("% ILP (relevance, rho 0.125, run at epsilon 0.5)")
    assert [charge.budget.epsilon for charge in session.ledger] == [Fraction(1, 2)]  # e^2 / 2 = 0.125


def test_ilp_learn_answers_from_the_shipped_choicemaker() -> None:
    session = _session()
    session.run(f"import ilp\ntask = ilp_task({DECLARE}, modes={MODES}, fake={FAKE})\n"
                "th = ilp.learn(trains.bound_per_key(1), cars, task, 1.0)\nwhy = ilp.explain_choice()\n"
                "acc = theory_accuracy(th, test_trains, test_cars)\n")
    assert "chose ILP" in session.eval("why")
    assert sum(charge.budget.epsilon for charge in session.ledger) == Fraction(1)
    assert session.eval("acc") > 0.5
