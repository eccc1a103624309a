"""Entity tables on Spark (issue 22): bound_per_key (a ROW_NUMBER window), count_keys and the
key's domain check give the same answers as in memory. Few and short: one local Spark session."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from jostle.data.engine.spark_engine import spark_unavailable
from jostle.diagnostics.errors import DataError
from tests.conftest import local_spark, spark_jostle_session
from tests.test_units import SCHEMA, output, session, value, visits

REASON = spark_unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"Spark cannot run here: {REASON}")


@pytest.fixture(scope="module")
def spark() -> Any:
    session = local_spark("jostle-units")
    yield session
    session.stop()


def _spark_session(spark: Any):
    return spark_jostle_session(spark)


def test_bounding_and_counting_entities_on_spark_give_the_answers_of_memory(spark: Any):
    program = ("b = visits.bound_per_key(2)\nc = count(b)\nk = count_keys(visits)\nh = histogram(b, \"ward\")\n"
               "w = sum(b.where(lambda r: r.cost > 20), \"cost\")\n"
               "print(geometric(c, 1), geometric(k, 1), laplace(mean(b, \"cost\"), 1))\n")
    results = []
    for s in (session("pandas"), _spark_session(spark)):
        s.bind_private("visits", visits(), SCHEMA, unit="entity:patient_id")
        s.run(program)
        results.append((output(s), value(s, "c").value, value(s, "k").value, list(value(s, "h").value),
                        value(s, "w").value, value(s, "b").stability))
    assert value(s, "visits").relation is not None
    assert results[0] == results[1]


def test_a_key_outside_its_domain_is_the_curators_error_on_spark(spark: Any):
    data = visits()
    data.loc[2, "patient_id"] = 5000
    with pytest.raises(DataError, match="outside its domain"):
        _spark_session(spark).bind_private("visits", data, SCHEMA, unit="entity:patient_id")


def test_spark_keeps_the_row_memory_keeps_of_two_equal_but_for_a_zeros_sign(spark: Any):
    from tests.test_units import kept_signs, zeros

    s = _spark_session(spark)
    s.bind_private("visits", zeros(), SCHEMA, unit="entity:patient_id")
    s.run("b = visits.bound_per_key(1)")
    assert kept_signs(s) == [True, False]


def test_a_zcdp_program_on_an_entity_table_prints_on_spark_what_memory_prints(spark: Any):
    """Measures are the accountant's, not the engine's: the same zCDP program (Gaussian releases
    at a rho, {{ }} in rho, a pure release charged eps^2/2) on an entity table prints the same on
    Spark as in memory, and spends the same rho."""
    import io

    from jostle.privacy.measures import RhoZCDPBudget
    from jostle.session import Session

    program = ("budget 1.0, 1e-6 using zcdp\nb = visits.bound_per_key(2)\n"
               "print(gaussian(count(b), rho(0.004)), laplace(count_keys(visits), 0.1))\n"
               "with budget rho(0.002):\n    print({{ sum(b, \"cost\") }})\n")
    printed, spent = [], []
    for options in ({"engine": "pandas"}, {"engine": "spark", "engine_options": {"spark": {"session": spark}}}):
        buffer = io.StringIO()
        s = Session(seed=5, ledger_path=":memory:", output=buffer, **options)
        s.bind_private("visits", visits(), SCHEMA, unit="entity:patient_id")
        s.run(program)
        printed.append(buffer.getvalue())
        spent.append(s.accountant.spent)
    assert printed[0] == printed[1] and printed[0].count("\n") == 2
    assert spent[0] == spent[1] == RhoZCDPBudget(Fraction(4, 1000) + Fraction(1, 200) + Fraction(2, 1000))
