"""Joins on Spark (issue 22): a database's tables joined on the key and a private table joined with
a public lookup run as Spark SQL and print what memory prints for the same program and seed.
Few and short: one local Spark session."""

from __future__ import annotations

from typing import Any

import pytest

from jostle.data.engine.spark_engine import spark_unavailable
from jostle.diagnostics.errors import PrivacyError
from tests.conftest import local_spark, spark_jostle_session
from tests.test_joins import KEY, SCHEMAS, cars, database, records, rows, shapes, trains, value

REASON = spark_unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"Spark cannot run here: {REASON}")


@pytest.fixture(scope="module")
def spark() -> Any:
    session = local_spark("jostle-joins")
    yield session
    session.stop()


def _spark_database(spark: Any):
    s = spark_jostle_session(spark)
    s.bind_database({"trains": trains(), "cars": cars()}, key=KEY, schemas=SCHEMAS)
    s.bind_public("shapes", shapes())
    s.bind_public("shapes2", shapes(repeat_rect=True))
    return s


def test_joins_on_spark_print_what_memory_prints(spark: Any):
    program = (f'budget 4\n'
               f'b = trains.bound_per_key(1).join(cars.bound_per_key(2), on="{KEY}")\n'
               f'print({{{{ count(b) }}}}, {{{{ histogram(b, ["direction", "shape"]) }}}})\n'
               f'east = b.where(lambda r: r.direction == "east" and r.load >= 2)\n'
               f'print({{{{ sum(east, "load") }}}}, {{{{ count_keys(b) }}}})\n'
               f'l = shapes2.join(cars.bound_per_key(3), on="shape").where(lambda r: r.sides > 0)\n'
               f'print({{{{ histogram(l, "kind") }}}}, {{{{ sum(l, "sides") }}}})\n')
    printed = []
    for s in (database("pandas"), _spark_database(spark)):
        s.run(program)
        printed.append(s.printed.getvalue())  # type: ignore[attr-defined]
    assert value(s, "b").relation is not None and value(s, "b").relation.steps[-1][0] == "join"
    assert value(s, "l").stability == 3 * 2
    assert printed[0] == printed[1] and printed[0].count("\n") == 3
    s.run(f'j = trains.join(cars, on="{KEY}")\n')
    assert rows(value(s, "j")) == records(trains().merge(cars(), on=KEY)[value(s, "j").schema.names])


def test_a_join_off_the_key_is_refused_on_spark_and_spends_nothing(spark: Any):
    s = _spark_database(spark)
    with pytest.raises(PrivacyError, match="not their entity key"):
        s.run('budget 1\nx = cars.select(["train_id", "shape"]).join(cars.select(["shape", "load"]), on="shape")\n'
              'print({{ count_keys(x) }})\n')
    assert len(s.ledger) == 0 and s.spent.is_zero()
