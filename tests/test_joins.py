"""Joins (issue 22): a.join(b, on=KEY) of two tables of one entity database, and of a private
table with a public lookup table: the unit, node and stability of the result, the rows, the same
answers in memory and on DuckDB, and every refusal before anything is spent (Spark:
tests/test_joins_spark.py; binding databases: tests/test_database.py)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from jostle.diagnostics.errors import JostleRuntimeError, PrivacyError
from jostle.language.databases import database_of
from jostle.language.joins import key_positions
from jostle.data.schema import Categorical, Numeric
from jostle.privacy.units import ROW, entity
from jostle.session import Session

ENGINES = ["pandas", "duckdb"]
KEY = "train_id"
TRAIN_SCHEMA = {KEY: {"type": "numeric", "bounds": [0, 1000], "integer": True},
                "direction": ("categorical", ["east", "west"]), "length": ("numeric", 0, 10)}
CAR_SCHEMA = {KEY: {"type": "numeric", "bounds": [0, 1000], "integer": True},
              "shape": ("categorical", ["rect", "oval", "hex", "u"]), "load": ("numeric", 0, 5)}
SCHEMAS = {"trains": TRAIN_SCHEMA, "cars": CAR_SCHEMA}


def trains(n: int = 30, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({KEY: np.arange(n), "direction": rng.choice(["east", "west"], n),
                         "length": rng.integers(0, 11, n).astype(float)})


def cars(n: int = 30, seed: int = 6) -> pd.DataFrame:
    """1 to 4 cars per train; trains n-2 and n-1 have none (they join nothing)."""
    rng = np.random.default_rng(seed)
    rows = [{KEY: t, "shape": str(rng.choice(["rect", "oval", "hex", "u"])), "load": float(rng.integers(0, 6))}
            for t in range(n - 2) for _ in range(int(rng.integers(1, 5)))]
    return pd.DataFrame(rows)


def shapes(repeat_rect: bool = False) -> pd.DataFrame:
    """A public lookup: one row per shape (rect twice when `repeat_rect`); 'star' matches nothing."""
    rows = [("rect", 4.0, "angular"), ("oval", 0.0, "round"), ("hex", 6.0, "angular"), ("star", 10.0, "angular")]
    if repeat_rect:
        rows.append(("rect", 4.0, "long"))
    return pd.DataFrame(rows, columns=["shape", "sides", "kind"])


def session(engine: str = "pandas", budget: float = 100) -> Session:
    buffer = io.StringIO()
    s = Session(budget=budget, seed=11, ledger_path=":memory:", output=buffer, engine=engine)
    s.printed = buffer  # type: ignore[attr-defined]
    return s


def database(engine: str = "pandas") -> Session:
    s = session(engine)
    s.bind_database({"trains": trains(), "cars": cars()}, key=KEY, schemas=SCHEMAS)
    s.bind_public("shapes", shapes())
    s.bind_public("shapes2", shapes(repeat_rect=True))
    return s


def value(s: Session, name: str):
    return s.interpreter.globals.values[name]


def records(frame: pd.DataFrame) -> list[tuple]:
    """A frame's rows as sorted tuples of Python values (numbers as floats)."""
    return sorted(tuple(float(v) if isinstance(v, (int, float, np.number)) else v for v in row)
                  for row in frame.itertuples(index=False))


def rows(table) -> list[tuple]:
    return records(table.frame)


# ---------------------------------------------------------------- two tables of one database
@pytest.mark.parametrize("engine", ENGINES)
def test_a_join_on_the_key_keeps_the_unit_and_multiplies_the_stabilities(engine: str):
    s = database(engine)
    s.run(f'j = trains.join(cars, on="{KEY}")\n'
          f'b = trains.bound_per_key(1).join(cars.bound_per_key(3), on="{KEY}")\n'
          f'c = join(cars.bound_per_key(2), cars.select("{KEY}").bound_per_key(3), "{KEY}")\n')
    j, b = value(s, "j"), value(s, "b")
    assert j.private and j.unit == entity(KEY) and j.stability is None  # unbounded: trains' rows are not bounded
    assert b.stability == 1 * 3 and value(s, "c").stability == 2 * 3
    assert database_of(j.node) is database_of(value(s, "trains").node) is not None
    assert j.node.privacy_unit == entity(KEY) and j.node.root is s.accountant.root_for(entity(KEY))
    assert j.schema.names == [KEY, "direction", "length", "shape", "load"]
    if engine == "duckdb":  # the join is a step of the engine's plan, run as SQL
        assert j.relation is not None and j.relation.steps[-1][0] == "join"
    assert rows(j) == records(trains().merge(cars(), on=KEY, how="inner")[j.schema.names])
    # one train of 1 row and k cars: at most k joined rows; the bound of 3 cars keeps at most 3
    assert b.frame.groupby(KEY).size().max() == 3


@pytest.mark.parametrize("engine", ENGINES)
def test_an_unbounded_join_needs_bound_per_key_before_an_aggregate_and_spends_nothing(engine: str):
    s = database(engine)
    with pytest.raises(PrivacyError, match="not bounded") as error:
        s.run(f'budget 1\nj = trains.join(cars, on="{KEY}")\nprint({{{{ count(j) }}}})\n')
    assert error.value.span.line == 3 and "bound_per_key" in error.value.hint
    assert len(s.ledger) == 0 and s.spent.is_zero()
    s.run(f'budget 1\nprint({{{{ count(trains.join(cars, on="{KEY}").bound_per_key(2)) }}}})\n'
          f'print({{{{ count_keys(trains.join(cars, on="{KEY}")) }}}})\n')
    assert len(s.ledger) == 2


def test_the_sensitivity_of_an_aggregate_of_a_join_is_its_stability():
    s = database()
    s.run(f'b = trains.bound_per_key(1).join(cars.bound_per_key(3), on="{KEY}")\n'
          f'n = count(b)\nt = sum(b, "load")\nk = count_keys(b)\n')
    assert value(s, "n").l1 == 3 and value(s, "t").l1 == 3 * 5 and value(s, "k").l1 == 1
    # The count is the number of joined rows: every train with its (at most 3) cars.
    kept = cars().groupby(KEY).head(3)
    assert value(s, "n").value <= len(kept) and value(s, "n").value > 0


# ---------------------------------------------------------------- a private table with a public lookup
@pytest.mark.parametrize("engine", ENGINES)
def test_a_lookup_on_a_unique_public_key_is_1_stable_and_keeps_the_private_node(engine: str):
    s = session(engine)
    s.bind_private("cars", cars(), CAR_SCHEMA)  # a row table
    s.bind_public("shapes", shapes())
    s.bind_public("shapes2", shapes(repeat_rect=True))
    s.run('j = cars.join(shapes, on="shape")\nk = cars.join(shapes2, on="shape")\nl = shapes.join(cars, on="shape")\n')
    j, k, lookup_first = value(s, "j"), value(s, "k"), value(s, "l")
    assert j.unit == ROW and j.stability == 1 and j.node is value(s, "cars").node
    assert k.stability == 2  # 'rect' has two rows in shapes2
    assert lookup_first.stability == 1 and lookup_first.schema.names == ["shape", "sides", "kind", KEY, "load"]
    assert lookup_first.schema["shape"] == value(s, "cars").schema["shape"]  # the key stays the private side's
    assert lookup_first.node is j.node and rows(lookup_first) == records(shapes().merge(cars(), on="shape"))
    assert j.schema["sides"] == value(s, "shapes").schema["sides"]
    assert rows(j) == records(cars().merge(shapes(), on="shape")[j.schema.names])
    assert len(rows(k)) == len(cars().merge(shapes(repeat_rect=True), on="shape"))
    s.run("n = count(j)\nm = count(k)\nh = histogram(k, \"kind\")\n")
    assert value(s, "n").l1 == 1 and value(s, "m").l1 == 2 and value(s, "h").l1 == 2


@pytest.mark.parametrize("engine", ENGINES)
def test_a_lookup_on_an_entity_table_keeps_the_entity_unit_and_its_bound(engine: str):
    s = database(engine)
    s.run('j = cars.join(shapes2, on="shape")\nb = cars.bound_per_key(2).join(shapes2, on="shape")\n'
          'c = j.bound_per_key(2)\n')
    j, b = value(s, "j"), value(s, "b")
    assert j.unit == entity(KEY) and j.stability is None and j.node is value(s, "cars").node
    assert b.stability == 2 * 2 and value(s, "c").stability == 2


def test_key_equality_is_the_same_rule_for_numbers_and_categories():
    keys, usable = key_positions([-0.0, 0.0, float("nan"), 2.5], Numeric(-5, 5), Numeric(-5, 5))
    assert list(keys[usable]) == [0.0, 0.0, 2.5] and not usable[2] and str(keys[0]) == "0.0"
    codes, usable = key_positions(["b", 1.0, True, "z"], Categorical(("x", 1, "b")), Categorical(("a", 1, "b")))
    assert list(codes) == [2, 1, 1, -1] and list(usable) == [True, True, True, False]


@pytest.mark.parametrize("engine", ENGINES)
def test_categorical_keys_with_different_domains_match_by_value(engine: str):
    s = session(engine)
    s.bind_private("cars", cars(), CAR_SCHEMA)
    lookup = pd.DataFrame({"shape": ["u", "hex", "oval", "bogus"], "weight": [3.0, 2.0, 1.0, 9.0]})
    s.bind_public("weights", lookup)  # its own domain, in its own order
    s.run('j = cars.join(weights, on="shape")\n')
    assert rows(value(s, "j")) == records(cars().merge(lookup, on="shape"))


def test_the_same_program_and_seed_print_the_same_on_memory_and_duckdb():
    program = (f'budget 4\n'
               f'b = trains.bound_per_key(1).join(cars.bound_per_key(2), on="{KEY}")\n'
               f'print({{{{ count(b) }}}}, {{{{ histogram(b, ["direction", "shape"]) }}}})\n'
               f'east = b.where(lambda r: r.direction == "east" and r.load >= 2)\n'
               f'print({{{{ sum(east, "load") }}}}, {{{{ count_keys(b) }}}})\n'
               f'l = cars.bound_per_key(3).join(shapes2, on="shape").where(lambda r: r.sides > 0)\n'
               f'print({{{{ histogram(l, "kind") }}}}, {{{{ sum(l, "sides") }}}})\n')
    printed = []
    for engine in ENGINES:
        s = database(engine)
        s.run(program)
        printed.append(s.printed.getvalue())  # type: ignore[attr-defined]
    assert printed[0] == printed[1] and printed[0].count("\n") == 3


# ---------------------------------------------------------------- refusals, before anything is spent
def _two_databases(s: Session) -> None:
    s.bind_database({"trains": trains()}, key=KEY, schemas={"trains": TRAIN_SCHEMA})
    s.bind_database({"cars": cars()}, key=KEY, schemas={"cars": CAR_SCHEMA})


def _row_tables(s: Session) -> None:
    s.bind_private("trains", trains(), TRAIN_SCHEMA)
    s.bind_private("cars", cars(), CAR_SCHEMA)


def _row_and_entity(s: Session) -> None:
    s.bind_private("trains", trains(), TRAIN_SCHEMA)
    s.bind_private("cars", cars(), CAR_SCHEMA, unit=f"entity:{KEY}")


def _database_and_lone_table(s: Session) -> None:
    s.bind_database({"trains": trains()}, key=KEY, schemas={"trains": TRAIN_SCHEMA})
    s.bind_private("cars", cars(), CAR_SCHEMA, unit=f"entity:{KEY}")


def _one_database(s: Session) -> None:
    s.bind_database({"trains": trains(), "cars": cars()}, key=KEY, schemas=SCHEMAS)
    s.bind_public("shapes", shapes())
    s.bind_public("numbered", pd.DataFrame({"shape": [1, 2], "n": [1, 2]}))
    s.bind_public("loads", pd.DataFrame({"shape": ["rect"], "load": [1.0]}))


JOIN = f'trains.join(cars, on="{KEY}")'
REFUSALS = [
    ("a non-key column", _one_database, 'cars.select(["shape", "load"]).join(cars.select(["train_id", "shape"]), on="shape")',
     PrivacyError, "not their entity key", "join on the key"),
    ("two row tables", _row_tables, JOIN, PrivacyError, "no row's contribution is bounded", "bind_database"),
    ("different units", _row_and_entity, JOIN, PrivacyError, "different units", "database"),
    ("different databases", _two_databases, JOIN, PrivacyError, "different databases", "bind the tables together"),
    ("a lone entity table", _database_and_lone_table, JOIN, PrivacyError, "bound on its own", "bind the tables together"),
    ("a missing column", _one_database, 'trains.join(cars, on="shape")', JostleRuntimeError, "no column 'shape'",
     "both tables need"),
    ("a type mismatch", _one_database, 'cars.join(numbered, on="shape")', JostleRuntimeError,
     "categorical in 'cars' and numeric in 'numbered'", "must both be numeric or both categorical"),
    ("a column on both sides", _one_database, 'cars.join(loads, on="shape")', JostleRuntimeError,
     "both 'cars' and 'loads' have the column 'load'", "select it away"),
    ("no column named", _one_database, 'trains.join(cars)', JostleRuntimeError, "the column to join on", "on="),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", REFUSALS, ids=[case[0] for case in REFUSALS])
def test_a_join_that_cannot_be_bounded_is_refused_with_its_location_and_nothing_is_spent(case, engine: str):
    _, bind, expression, kind, message, hint = case
    s = session(engine)
    bind(s)
    program = f"budget 1\nn = 0\nx = {expression}\nprint({{{{ count_keys(x) }}}})\n"
    with pytest.raises(kind, match=message.replace("(", r"\(").replace(")", r"\)")) as error:
        s.run(program)
    assert error.value.span is not None and error.value.span.line == 3
    assert hint in (error.value.hint or "")
    assert len(s.ledger) == 0 and s.spent.is_zero()
    if kind is PrivacyError:
        assert "nothing was charged" in error.value.hint


# ---------------------------------------------------------------- the stability argument, checked
def _pre_noise(s: Session, program: str, names: list[str]) -> list:
    s.run(program)
    return [value(s, name) for name in names]


@pytest.mark.parametrize("engine", ENGINES)
def test_removing_one_entity_moves_every_aggregate_of_a_join_by_at_most_its_sensitivity(engine: str):
    """Entity neighbours (all rows of one train, in both tables): the pre-noise values of the
    aggregates of a bounded join and of a lookup join move by at most the sensitivity claimed."""
    program = (f'b = trains.bound_per_key(1).join(cars.bound_per_key(3), on="{KEY}")\n'
               f'l = cars.bound_per_key(2).join(shapes2, on="shape")\n'
               f'n = count(b)\nh = histogram(b, "shape")\nt = sum(b, "load")\nk = count_keys(b)\n'
               f'm = count(l)\ng = histogram(l, "kind")\n')
    names = ["n", "h", "t", "k", "m", "g"]
    full = _pre_noise(database(engine), program, names)
    rng = np.random.default_rng(7)
    for removed in rng.choice(30, size=6, replace=False).tolist():
        s = session(engine)
        s.bind_database({"trains": trains()[lambda f: f[KEY] != removed], "cars": cars()[lambda f: f[KEY] != removed]},
                        key=KEY, schemas=SCHEMAS)
        s.bind_public("shapes2", shapes(repeat_rect=True))
        for before, after in zip(full, _pre_noise(s, program, names)):
            moved = np.abs(np.asarray(before.value, dtype=float) - np.asarray(after.value, dtype=float)).sum()
            assert moved <= before.l1, (before.what, removed, moved, before.l1)
    assert full[0].l1 == 3 and full[4].l1 == 2 * 2  # a train has at most 2 kept cars, each matching at most 2 shapes


def test_a_join_that_dropped_the_unit_would_break_the_bound():
    """Negative control: the join's rows, read as a row table of stability 1, move by more than 1
    when one entity is removed, so the stability rule is what makes the bound hold."""
    program = f'b = trains.join(cars, on="{KEY}").bound_per_key(4)\nn = count(b)\n'
    full = _pre_noise(database(), program, ["n"])[0]
    s = session()
    s.bind_database({"trains": trains()[lambda f: f[KEY] != 0], "cars": cars()[lambda f: f[KEY] != 0]},
                    key=KEY, schemas=SCHEMAS)
    moved = abs(full.value - _pre_noise(s, program, ["n"])[0].value)
    assert moved > 1 and moved <= full.l1 == 4


def test_two_public_tables_join_in_memory_as_public_rows():
    s = session()
    s.bind_public("shapes", shapes())
    s.bind_public("names", pd.DataFrame({"shape": ["hex", "rect", "rect"], "name": ["hexagon", "oblong", "square"]}))
    frame = s.eval('shapes.join(names, on="shape")')
    assert records(frame) == records(shapes().merge(pd.DataFrame(
        {"shape": ["hex", "rect", "rect"], "name": ["hexagon", "oblong", "square"]}), on="shape"))
    assert s.eval('count(shapes.join(names, on="shape"))') == 3


@pytest.mark.parametrize("engine", ENGINES)
def test_a_categorical_key_declared_with_other_domains_in_each_table_joins_by_value(engine: str):
    people = pd.DataFrame({"pid": ["a", "b", "c"], "age": [30.0, 40.0, 50.0]})
    visits = pd.DataFrame({"pid": ["c", "c", "a", "d"], "cost": [1.0, 2.0, 3.0, 4.0]})
    s = session(engine)
    s.bind_database({"people": people, "visits": visits}, key="pid",
                    schemas={"people": {"pid": ("categorical", ["a", "b", "c"]), "age": ("numeric", 0, 100)},
                             "visits": {"pid": ("categorical", ["c", "b", "a", "d"]), "cost": ("numeric", 0, 10)}})
    s.run('j = people.join(visits, on="pid")\nk = visits.join(people, on="pid")\n')
    assert rows(value(s, "j")) == [("a", 30.0, 3.0), ("c", 50.0, 1.0), ("c", 50.0, 2.0)]
    assert rows(value(s, "k")) == [("a", 3.0, 30.0), ("c", 1.0, 50.0), ("c", 2.0, 50.0)]
    assert value(s, "k").schema["pid"].values == ("c", "b", "a", "d")
