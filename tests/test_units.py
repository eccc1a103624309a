"""Privacy units on tables (issue 22): binding a unit, entity tables and bound_per_key,
count_keys, stability in every aggregate, replace_one tables and randomized response, and the
bad inputs, in Python, in programs and on the command line, in memory and on DuckDB (Spark:
tests/test_units_spark.py)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jostle.diagnostics.errors import DataError, JostleRuntimeError, PrivacyError, UsageError
from jostle.language.values import Private, PrivateMean, Table
from jostle.privacy.units import REPLACE_ONE, ROW, entity
from jostle.session import Session

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = {"patient_id": {"type": "numeric", "bounds": [0, 1000], "integer": True}, "cost": ("numeric", 0, 100),
          "ward": ("categorical", ["a", "b", "c"])}
ENGINES = ["pandas", "duckdb"]


def visits(patients: int = 40, seed: int = 3) -> pd.DataFrame:
    """Visits of `patients` patients, each with 1 to 6 visits (a public seed)."""
    rng = np.random.default_rng(seed)
    rows = []
    for pid in range(patients):
        for _ in range(int(rng.integers(1, 7))):
            rows.append({"patient_id": pid, "cost": float(rng.integers(0, 101)),
                         "ward": ["a", "b", "c"][int(rng.integers(0, 3))]})
    return pd.DataFrame(rows)


def session(engine: str = "pandas", budget: float = 100) -> Session:
    buffer = io.StringIO()
    s = Session(budget=budget, seed=11, ledger_path=":memory:", output=buffer, engine=engine)
    s.printed = buffer  # type: ignore[attr-defined]
    return s


def bound(data: pd.DataFrame | None = None, engine: str = "pandas", unit: str = "entity:patient_id") -> Session:
    s = session(engine)
    s.bind_private("visits", visits() if data is None else data, SCHEMA, unit=unit)
    return s


def value(s: Session, name: str):
    return s.interpreter.globals.values[name]


def output(s: Session) -> str:
    return s.printed.getvalue()  # type: ignore[attr-defined]


# ---------------------------------------------------------------- binding
@pytest.mark.parametrize("engine", ENGINES)
def test_a_table_carries_its_unit_its_stability_and_a_node_under_the_units_root(engine: str):
    s = bound(engine=engine)
    table = value(s, "visits")
    assert table.unit == entity("patient_id") and table.stability is None
    assert table.node is s.accountant.root_for(entity("patient_id"))
    assert (table.relation is not None) == (engine == "duckdb")
    assert "unit entity(patient_id)" in repr(table) and "not bounded" in repr(table)
    row = session(engine)
    row.bind_private("t", visits(), SCHEMA)
    assert value(row, "t").unit == ROW and value(row, "t").stability == 1
    assert value(row, "t").node is row.accountant.root


def test_public_rows_is_the_replace_one_unit_and_contradictions_are_refused():
    s = session()
    s.bind_private("t", visits(), SCHEMA, public_rows=True)
    table = value(s, "t")
    assert table.unit == REPLACE_ONE and table.stability == 2 and table.public_rows
    assert table.node is s.accountant.root_for(REPLACE_ONE)
    s.bind_private("u", visits(), SCHEMA, unit="replace_one")
    assert value(s, "u").public_rows and value(s, "u").stability == 2
    with pytest.raises(UsageError, match="replace_one"):
        s.bind_private("v", visits(), SCHEMA, public_rows=True, unit="entity:patient_id")


def test_an_unknown_unit_is_refused_at_bind_with_the_forms():
    with pytest.raises(UsageError, match="unknown privacy unit") as error:
        session().bind_private("t", visits(), SCHEMA, unit="person")
    assert "entity:KEY" in error.value.hint


def test_an_entity_key_that_is_not_a_column_or_has_a_default_is_refused_at_bind():
    with pytest.raises(DataError, match="no column 'person'"):
        session().bind_private("t", visits(), SCHEMA, unit="entity:person")
    with pytest.raises(DataError, match="default"):
        session().bind_private("t", visits(), {**SCHEMA, "ward": {"type": "categorical", "values": ["a", "b", "c"], "default": "a"}},
                               unit="entity:ward")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_key_with_missing_values_or_outside_its_domain_is_the_curators_error_at_bind(engine: str):
    data = visits()
    data["patient_id"] = data["patient_id"].astype(object)
    data.loc[4, "patient_id"] = None
    with pytest.raises(DataError, match="patient_id") as error:
        session(engine).bind_private("t", data, SCHEMA, unit="entity:patient_id")
    assert "entity" in error.value.hint and "default" in error.value.hint
    data = visits()
    data.loc[2, "patient_id"] = 5000  # clamping it to 1000 would merge it with patient 1000
    with pytest.raises(DataError, match="outside its domain"):
        session(engine).bind_private("t", data, SCHEMA, unit="entity:patient_id")
    data = visits().astype({"patient_id": float})
    data.loc[2, "patient_id"] = 3.5  # rounding it would merge it with patient 4 (or 3)
    with pytest.raises(DataError, match="outside its domain"):
        session(engine).bind_private("t", data, SCHEMA, unit="entity:patient_id")


def test_the_schema_file_states_the_unit(tmp_path: Path):
    path = tmp_path / "visits.csv"
    visits().to_csv(path, index=False)
    columns = {"patient_id": {"type": "numeric", "bounds": [0, 1000], "integer": True},
               "cost": {"type": "numeric", "bounds": [0, 100]},
               "ward": {"type": "categorical", "values": ["a", "b", "c"]}}
    (tmp_path / "visits.schema.json").write_text(json.dumps({"columns": columns, "privacy_unit": {"entity": "patient_id"}}))
    s = session()
    s.bind_private("visits", path)
    assert value(s, "visits").unit == entity("patient_id")
    (tmp_path / "visits.schema.json").write_text(json.dumps({"columns": columns, "privacy_unit": "person"}))
    with pytest.raises(DataError, match="privacy_unit"):
        session().bind_private("visits", path)
    (tmp_path / "visits.schema.json").write_text(json.dumps({"columns": columns, "privacy_unit": 3}))
    with pytest.raises(DataError, match="privacy_unit"):
        session().bind_private("visits", path)


def test_a_programs_per_restates_the_curators_unit_and_cannot_choose_another():
    declaration = ("private visits: {patient_id: numeric(0, 1000, integer=true), cost: numeric(0, 100), "
                   "ward: categorical([\"a\", \"b\", \"c\"])}")
    s = session()
    s.bind_private("visits", visits(), unit="entity:patient_id")  # the schema comes from the program
    s.run(declaration + " per patient_id\nn = geometric(count_keys(visits), 1)")
    assert value(s, "visits").unit == entity("patient_id")
    s = session()
    s.bind_private("visits", visits())  # bound by rows
    with pytest.raises(DataError, match="bound under the unit row") as error:
        s.run(declaration + " per patient_id")
    assert "--unit visits=entity:patient_id" in error.value.hint and s.ledger.spent.is_zero()
    s = session()
    s.bind_private("visits", visits(), unit="entity:cost")
    with pytest.raises(DataError, match="per patient_id"):
        s.run(declaration + " per patient_id")


def test_a_program_schema_drops_rows_whose_key_lies_outside_its_domain_without_telling():
    data = visits()
    data.loc[0, "patient_id"] = 5000
    s = session()
    s.bind_private("visits", data, unit="entity:patient_id")
    s.run("private visits: {patient_id: numeric(0, 1000, integer=true), cost: numeric(0, 100)} per patient_id")
    assert len(value(s, "visits").frame) == len(data) - 1


# ---------------------------------------------------------------- entity tables
PROGRAM_AGGREGATES = ["count(visits)", "sum(visits, \"cost\")", "mean(visits, \"cost\")",
                      "histogram(visits, \"ward\")", "stats.private_median(visits, \"cost\", 1)",
                      "count(visits.where(lambda r: r.cost > 5))", "count(partition(visits, \"ward\")[0])"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("aggregate", PROGRAM_AGGREGATES)
def test_row_level_aggregates_are_refused_on_an_unbounded_entity_table_before_any_charge(engine: str, aggregate: str):
    s = bound(engine=engine)
    with pytest.raises(PrivacyError, match="not bounded") as error:
        s.run(f"import stats\nx = laplace({aggregate}, 1)")
    assert "bound_per_key" in error.value.hint and "count_keys" in error.value.hint
    assert error.value.span is not None  # the program's line, or the library's for stats.private_median
    assert error.value.span.line == 2 or "stats" in aggregate
    assert len(s.ledger) == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_bound_per_key_makes_the_stability_k_and_every_aggregate_scales_by_it(engine: str):
    s = bound(engine=engine)
    s.run("b = visits.bound_per_key(3)\nc = count(b)\ns = sum(b, \"cost\")\nm = mean(b, \"cost\")\n"
          "h = histogram(b, \"ward\")\nk = count_keys(visits)\nbb = b.bound_per_key(5)\nb2 = b.bound_per_key(2)")
    assert value(s, "b").stability == 3 and value(s, "bb").stability == 3 and value(s, "b2").stability == 2
    assert value(s, "c").l1 == 3 and value(s, "s").l1 == 300 and value(s, "h").l1 == 3 and value(s, "h").l2 == 3
    assert isinstance(value(s, "m"), PrivateMean) and value(s, "m").stability == 3
    assert value(s, "k").l1 == 1 and value(s, "k").value == 40
    data = visits()
    assert value(s, "c").value == int(np.minimum(data.groupby("patient_id").size(), 3).sum())


def _kept(frame: pd.DataFrame, k: int) -> pd.DataFrame:
    """The rule of bound_per_key, written again: per key, the first k rows in the order of the
    key, then every column (categories by domain position)."""
    ordered = frame.assign(_w=frame["ward"].map({"a": 0, "b": 1, "c": 2}))
    ordered = ordered.sort_values(["patient_id", "patient_id", "cost", "_w"], kind="stable")
    return ordered.groupby("patient_id").head(k).drop(columns="_w")


@pytest.mark.parametrize("engine", ENGINES)
def test_bound_per_key_keeps_the_first_k_rows_of_each_entity_in_the_canonical_order(engine: str):
    s = bound(engine=engine)
    s.run("b = visits.bound_per_key(2)\nh = histogram(b, \"ward\")\nt = sum(b, \"cost\")")
    expected = _kept(visits(), 2)
    assert list(value(s, "h").value) == [int((expected["ward"] == w).sum()) for w in "abc"]
    assert value(s, "t").value == int(expected["cost"].sum())


def test_bounding_keeps_every_other_entitys_rows_when_an_entity_is_added_or_removed():
    """The rule reads an entity's own rows only: the neighbour without patient 7 keeps exactly
    the rows kept before, less patient 7's (at most k of them)."""
    data = visits()
    without = data[data["patient_id"] != 7].reset_index(drop=True)
    kept = []
    for frame in (data, without):
        s = bound(frame)
        s.run("b = visits.bound_per_key(2)")
        kept.append(value(s, "b").frame)
    key = ["patient_id", "cost", "ward"]
    before = kept[0].sort_values(key).reset_index(drop=True)
    after = kept[1].sort_values(key).reset_index(drop=True)
    assert before[before["patient_id"] != 7].reset_index(drop=True).equals(after)
    assert 1 <= int((before["patient_id"] == 7).sum()) <= 2


@pytest.mark.parametrize("k", ["0", "-1", "1.5", "true", "\"2\"", "laplace(count_keys(visits), 1)"])
def test_a_bad_bound_fails_before_anything_is_spent(k: str):
    s = bound()
    with pytest.raises((JostleRuntimeError, PrivacyError)) as error:
        s.run(f"b = visits.bound_per_key({k})")
    assert error.value.span is not None and error.value.hint
    assert len(s.ledger) == (1 if "laplace" in k else 0)  # only the bound's own release, if any


def test_bound_per_key_and_count_keys_need_an_entity_table_with_its_key():
    s = session()
    s.bind_private("t", visits(), SCHEMA)
    with pytest.raises(JostleRuntimeError, match="unit row"):
        s.run("b = t.bound_per_key(2)")
    with pytest.raises(JostleRuntimeError, match="count\\(t\\)"):
        s.run("n = count_keys(t)")
    s = bound()
    with pytest.raises(JostleRuntimeError, match="select dropped it"):
        s.run("b = visits.select(\"cost\").bound_per_key(2)")
    with pytest.raises(PrivacyError, match="overwrite 'patient_id'"):
        s.run("b = visits.derive(\"patient_id\", lambda r: 0, numeric(0, 1000))")
    with pytest.raises(PrivacyError, match="overwrite 'patient_id'"):
        s.run("b = visits.bin(\"patient_id\", [0, 500, 1000])")
    assert len(s.ledger) == 0


def test_derived_tables_keep_unit_and_stability():
    s = bound()
    s.run("b = visits.bound_per_key(4)\nw = b.where(lambda r: r.cost > 10).select(\"patient_id\", \"ward\")\n"
          "d = b.derive(\"double\", lambda r: r.cost * 2, numeric(0, 200)).bin(\"cost\", [0, 50, 100])\n"
          "p = partition(b, \"ward\")")
    for name in ("w", "d"):
        assert value(s, name).unit == entity("patient_id") and value(s, name).stability == 4
    assert all(part.unit == entity("patient_id") and part.stability == 4 for part in value(s, "p"))


def test_parts_by_another_column_compose_in_sequence_and_by_the_key_in_parallel():
    """An entity's rows may lie in several wards, so the parts by ward are charged in sequence
    (they keep the table's node); by the key, an entity lies in one part: in parallel."""
    schema = {**SCHEMA, "patient_id": ("categorical", list(range(40)))}
    s = bound()
    s.run("b = visits.bound_per_key(2)\nfor part in partition(b, \"ward\"):\n    x = geometric(count(part), 1)")
    assert len(s.ledger) == 3 and s.ledger.spent.epsilon == 3
    s = session()
    s.bind_private("visits", visits(), schema, unit="entity:patient_id")
    s.run("b = visits.bound_per_key(2)\nfor part in partition(b, \"patient_id\"):\n    x = geometric(count(part), 1)")
    assert len(s.ledger) == 40 and s.ledger.spent.epsilon == 1
    row = session()
    row.bind_private("t", visits(), SCHEMA)
    row.run("for part in partition(t, \"ward\"):\n    x = geometric(count(part), 1)")
    assert row.ledger.spent.epsilon == 1


def test_a_value_mixing_units_is_refused():
    s = bound()
    s.bind_private("rows", visits(), SCHEMA)
    with pytest.raises(PrivacyError, match="different privacy units"):
        s.run("x = laplace(count_keys(visits) + count(rows), 1)")
    assert len(s.ledger) == 0


# ---------------------------------------------------------------- stability in mean
@pytest.mark.real_run  # audits the real run's draws and charges (tests/conftest.py)
def test_mean_scales_both_of_its_releases_by_the_stability(monkeypatch: pytest.MonkeyPatch):
    from jostle.privacy import grid_release

    plans = []
    original = grid_release.laplace_plan
    monkeypatch.setattr(grid_release, "laplace_plan", lambda *a: plans.append(a[:2]) or original(*a))
    for stability, program in ((1, "m = laplace(mean(t, \"cost\"), 1)"),
                               (4, "m = laplace(mean(visits.bound_per_key(4), \"cost\"), 1)")):
        plans.clear()
        s = bound() if stability > 1 else session()
        if stability == 1:
            s.bind_private("t", visits(), SCHEMA)
        s.run(program)
        (sum_sensitivity, _), (count_sensitivity, _) = plans
        assert Fraction(sum_sensitivity) == 50 * stability and count_sensitivity == stability


# ---------------------------------------------------------------- replace_one
def test_replace_one_releases_are_computed_for_two_rows_and_its_whole_count_is_public():
    s = session()
    s.bind_private("t", visits(), SCHEMA, public_rows=True)
    s.run("n = count(t)\nc = count(t.where(lambda r: r.cost > 50))\nx = sum(t, \"cost\")\nh = histogram(t, \"ward\")\n"
          "p = count(partition(t, \"ward\")[0])")
    assert value(s, "n") == len(visits())  # public: every replace-one neighbour has as many rows
    assert value(s, "c").l1 == 2 and value(s, "x").l1 == 200 and value(s, "h").l1 == 2 and value(s, "p").l1 == 2
    s.run("y = laplace(x, 1)")
    assert s.ledger[0].unit == REPLACE_ONE


def test_randomized_response_runs_on_a_whole_replace_one_table_only():
    s = session()
    s.bind_private("t", visits(), SCHEMA, public_rows=True)
    s.run("r = randomized_response(t, \"ward\", 1)")
    assert len(value(s, "r")) == len(visits()) and s.ledger[0].unit == REPLACE_ONE
    assert s.ledger[0].node.root is s.accountant.root_for(REPLACE_ONE)
    with pytest.raises(PrivacyError, match="no longer the whole table"):
        s.run("r = randomized_response(t.where(lambda r: r.cost > 3), \"ward\", 1)")
    for unit in (None, "entity:patient_id"):
        other = session()
        other.bind_private("t", visits(), SCHEMA, unit=unit)
        with pytest.raises(PrivacyError, match=f"under its unit {'row' if unit is None else 'entity'}") as error:
            other.run("r = randomized_response(t, \"ward\", 1)")
        assert "replace_one" in error.value.hint and len(other.ledger) == 0


# ---------------------------------------------------------------- engines agree
def test_memory_and_duckdb_give_the_same_releases_for_the_same_seed():
    program = ("b = visits.bound_per_key(2)\nprint(geometric(count(b), 1), geometric(count_keys(visits), 1))\n"
               "print(laplace(mean(b, \"cost\"), 1), geometric(histogram(b.where(lambda r: r.cost > 20), \"ward\"), 1))\n")
    outputs = []
    for engine in ENGINES:
        s = bound(engine=engine)
        s.run(program)
        outputs.append(output(s))
    assert outputs[0] == outputs[1] and outputs[0].strip()


# ---------------------------------------------------------------- the command line
def _jostle(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jostle", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_the_command_line_binds_a_unit(tmp_path: Path):
    visits().to_csv(tmp_path / "visits.csv", index=False)
    (tmp_path / "p.jst").write_text(
        "private visits: {patient_id: numeric(0, 1000, integer=true), cost: numeric(0, 100)} per patient_id\n"
        "print(geometric(count_keys(visits), 1))\nprint(geometric(count(visits.bound_per_key(2)), 1))\n")
    common = ["run", "p.jst", "--data", "visits=visits.csv", "--seed", "3", "--budget", "5", "--ledger-db", ":memory:"]
    done = _jostle(*common, "--unit", "visits=entity:patient_id", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.split()) == 2
    unbounded = tmp_path / "q.jst"
    unbounded.write_text((tmp_path / "p.jst").read_text().splitlines()[0] + "\nprint(geometric(count(visits), 1))\n")
    refused = _jostle("run", "q.jst", "--data", "visits=visits.csv", "--ledger-db", ":memory:", "--budget", "1",
                      "--unit", "visits=entity:patient_id", cwd=tmp_path)
    assert refused.returncode != 0 and "bound_per_key" in refused.stderr
    bad = _jostle(*common, "--unit", "visits=person", cwd=tmp_path)
    assert bad.returncode != 0 and "unknown privacy unit" in bad.stderr
    mismatch = _jostle(*common, cwd=tmp_path)
    assert mismatch.returncode != 0 and "bound under the unit row" in mismatch.stderr


def test_the_quantile_of_the_standard_library_declares_the_stability():
    """stats.private_quantile's two parts are charged in sequence on an entity or replace_one
    table; its utility then moves by at most the stability, which it declares (stability(t))."""
    s = bound()
    s.run("import stats\nb = visits.bound_per_key(3)\nm = stats.private_median(b, \"cost\", 1)\n"
          "s1 = stability(b)\ns0 = stability(visits)")
    assert value(s, "s1") == 3 and value(s, "s0") is None and s.ledger.spent.epsilon == 1
    replace = session()
    replace.bind_private("t", visits(), SCHEMA, public_rows=True)
    replace.run("import stats\nm = stats.private_median(t, \"cost\", 1)\ns = stability(t)")
    assert value(replace, "s") == 2 and len(replace.ledger) == 1


def zeros() -> pd.DataFrame:
    """Patient 1's two visits differ only in the sign of a zero cost (equal in SQL, not as rows)."""
    return pd.DataFrame({"patient_id": [1, 1, 2], "cost": [0.0, -0.0, 5.0], "ward": ["b", "b", "a"]})


def kept_signs(s: Session) -> list[bool]:
    frame = value(s, "b").frame.sort_values("patient_id")
    return [bool(np.signbit(v)) for v in frame["cost"].tolist()]


def test_every_engine_keeps_the_same_one_of_two_rows_equal_but_for_a_zeros_sign():
    signs = []
    for engine in ENGINES:
        s = bound(zeros(), engine)
        s.run("b = visits.bound_per_key(1)")
        signs.append(kept_signs(s))
    assert signs[0] == signs[1] == [True, False]  # -0.0 comes first, as in SQL's order


def test_parts_by_the_key_and_another_column_compose_in_sequence():
    """partition(t, [key, ward]): an entity's rows may differ in ward, so they may lie in
    several parts: those parts keep the table's node (sequential composition)."""
    schema = {**SCHEMA, "patient_id": ("categorical", list(range(40)))}
    s = session()
    s.bind_private("visits", visits(), schema, unit="entity:patient_id")
    s.run("p = partition(visits.bound_per_key(2), [\"patient_id\", \"ward\"])")
    assert all(part.node is value(s, "visits").node for part in value(s, "p"))
    s.run("q = partition(visits.bound_per_key(2), \"patient_id\")")
    assert all(part.node.parent is value(s, "visits").node for part in value(s, "q"))


@pytest.mark.parametrize("seed", range(6))
def test_memory_and_duckdb_bound_the_same_rows_on_random_tables(seed: int):
    """Random visits (many ties: few costs, a zero of either sign), bounded after a where and a
    derive, then re-bounded: the exact pre-noise values agree in memory and on DuckDB."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 80))
    data = pd.DataFrame({"patient_id": rng.integers(0, 12, n),
                         "cost": rng.choice([0.0, -0.0, 1.5, 7.0, 100.0], n),
                         "ward": rng.choice(["a", "b", "c"], n)})
    k, j = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    program = (f"b = visits.where(lambda r: r.ward != \"c\").derive(\"d\", lambda r: 1 / (r.cost + 1), numeric(0, 1))"
               f".bound_per_key({k})\nc = count(b)\ns = sum(b, \"d\")\nh = histogram(b.bound_per_key({j}), \"ward\")\n"
               "n = count_keys(b)")
    values = []
    for engine in ENGINES:
        s = bound(data, engine)
        s.run(program)
        values.append((value(s, "c").value, value(s, "s").value, list(value(s, "h").value), value(s, "n").value))
    assert values[0] == values[1]
    rows = data[data["ward"] != "c"]
    rows = rows.assign(_sign=[0 if v == 0 and np.signbit(v) else 1 for v in rows["cost"]],
                       _w=rows["ward"].map({"a": 0, "b": 1, "c": 2}))
    kept = rows.sort_values(["patient_id", "cost", "_sign", "_w"], kind="stable").groupby("patient_id").head(min(k, j))
    assert values[0][2] == [int((kept["ward"] == w).sum()) for w in "abc"]


def test_the_command_line_binds_a_replace_one_table_for_randomized_response(tmp_path: Path):
    visits().to_csv(tmp_path / "visits.csv", index=False)
    (tmp_path / "r.jst").write_text(
        "private visits: {cost: numeric(0, 100, default=0), ward: categorical([\"a\", \"b\", \"c\"], default=\"a\")}\n"
        "print(len(randomized_response(visits, \"ward\", 1)), count(visits))\n")
    common = ["run", "r.jst", "--data", "visits=visits.csv", "--seed", "3", "--budget", "1", "--ledger-db", ":memory:"]
    done = _jostle(*common, "--unit", "visits=replace_one", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(len(visits()))] * 2  # the whole count is public under replace_one
    refused = _jostle(*common, cwd=tmp_path)
    assert refused.returncode != 0 and "under its unit row" in refused.stderr
