"""Privacy units in the durable ledger (issue 22): a dataset is kept under the unit of its first
binding, which is not part of its identity (a second unit shares its one lifetime budget); a
charge made under another unit converts (row -> replace_one: group privacy of 2) or is refused
with the reason and a hint; each charge is recorded against the datasets bound under its unit.
"""

from __future__ import annotations

import io
import math
from fractions import Fraction
from pathlib import Path

import pytest

from jostle import BudgetExceeded, Session
from jostle.privacy.budget import Accountant
from jostle.privacy.ledger_store import LedgerStore
from jostle.privacy.measures import Budget
from jostle.privacy.units import REPLACE_ONE, ROW, PrivacyUnit, entity
from tests.conftest import PATIENT_SCHEMA, make_patients


def accountant(db: Path, total: Budget = Budget(Fraction(100), Fraction(1, 1000))) -> Accountant:
    return Accountant(total, LedgerStore(db), default_lifetime=Budget(Fraction(1)))


def bind(acc: Accountant, name: str, unit: PrivacyUnit, lifetime=Budget(Fraction(1))) -> str:
    key = acc.register_dataset(name.encode(), name, ("x",), name=name, lifetime=lifetime, unit=unit)
    assert key is not None
    return key


def release(acc: Accountant, budget: Budget, unit: PrivacyUnit):
    return acc.charge(budget, acc.root_for(unit), "laplace", "count(t)", None)


def test_a_charge_under_a_unit_the_dataset_is_not_kept_under_is_refused_with_the_reason(tmp_path):
    db = tmp_path / "ledger.sqlite"
    first = accountant(db)
    key = bind(first, "visits", ROW)
    release(first, Budget(Fraction(1, 4)), ROW)
    second = accountant(db)
    assert bind(second, "visits", REPLACE_ONE, lifetime=None) == key  # the same dataset
    with pytest.raises(BudgetExceeded, match="cannot be charged to the data 'visits'") as caught:
        release(second, Budget(Fraction(1, 4)), REPLACE_ONE)
    assert "a charge under replace_one cannot count in a dataset kept under row" in caught.value.message
    assert "may reveal the number of rows" in caught.value.message
    assert "bind it under row" in caught.value.hint and "nothing was spent" in caught.value.hint
    assert second.store.spent(key).dp == Budget(Fraction(1, 4)) and second.ledger == []


def test_the_same_data_under_a_second_unit_shares_its_one_lifetime(tmp_path):
    """Kept under replace_one (its first binding), bound later under row: one dataset, one
    lifetime, and each row charge counts twice (a replacement is a removal and an addition)."""
    db = tmp_path / "ledger.sqlite"
    first = accountant(db)
    key = bind(first, "survey", REPLACE_ONE)
    release(first, Budget(Fraction(1, 4)), REPLACE_ONE)
    second = accountant(db)
    assert bind(second, "survey", ROW, lifetime=None) == key
    with LedgerStore(db) as store:
        (dataset,) = store.datasets()
        assert dataset.unit == "replace_one"
    release(second, Budget(Fraction(1, 4)), ROW)  # counts 1/2
    assert second.store.spent(key).dp == Budget(Fraction(3, 4))
    with pytest.raises(BudgetExceeded, match="left of its lifetime budget"):
        release(second, Budget(Fraction(1, 4)), ROW)  # 3/4 + 1/2 > 1
    assert [e["unit"] for e in second.store.events() if e["kind"] == "charge"] == ["replace_one", "row"]
    assert [e["epsilon"] for e in second.store.events() if e["kind"] == "charge"] == ["1/4", "1/2"]
    assert second.remaining is not None


def test_an_approximate_row_charge_in_a_replace_one_dataset_uses_group_privacy_of_its_own_cost(tmp_path):
    """(eps, delta) for one step is (2 eps, delta (1 + e^eps)) for two (Vadhan 2017, Lemma 2.2),
    applied to the release's own budget."""
    acc2 = accountant(tmp_path / "other.sqlite")
    kept = bind(acc2, "survey", REPLACE_ONE, Budget(Fraction(3), Fraction(1, 1000)))
    acc3 = accountant(tmp_path / "other.sqlite")
    bind(acc3, "survey", ROW, lifetime=None)
    release(acc3, Budget(Fraction(1, 2), Fraction(1, 10**6)), ROW)
    spent = acc3.store.spent(kept).dp
    assert spent.epsilon == 1
    assert Fraction(1, 10**6) * (1 + Fraction(math.exp(0.5))) <= spent.delta <= Fraction(1, 10**6) * 3


def test_a_charge_is_recorded_against_the_datasets_bound_under_its_unit(tmp_path):
    db = tmp_path / "ledger.sqlite"
    acc = accountant(db)
    rows = bind(acc, "patients", ROW)
    people = bind(acc, "visits", entity("patient_id"))
    release(acc, Budget(Fraction(1, 10)), ROW)
    release(acc, Budget(Fraction(1, 5)), entity("patient_id"))
    assert acc.store.spent(rows).dp == Budget(Fraction(1, 10))
    assert acc.store.spent(people).dp == Budget(Fraction(1, 5))
    assert [e["unit"] for e in acc.store.events(people) if e["kind"] == "charge"] == ["entity:patient_id"]
    assert acc.store.dataset(people).unit == "entity:patient_id"
    # Private data under a unit no dataset of the session is bound under: every dataset of the
    # session, converted or refused (here refused: replace_one has no row or entity guarantee)...
    with pytest.raises(BudgetExceeded, match="cannot count in a dataset kept under"):
        release(acc, Budget(Fraction(1, 20)), REPLACE_ONE)
    assert acc.store.spent(rows).dp == Budget(Fraction(1, 10))  # untouched
    # ... and without any dataset, a stand-in per unit.
    alone = accountant(tmp_path / "alone.sqlite")
    release(alone, Budget(Fraction(1, 20)), REPLACE_ONE)
    stand_in = alone.store.dataset_named("(data not identified, replace_one)")
    assert stand_in is not None and alone.store.spent(stand_in.fingerprint).dp == Budget(Fraction(1, 20))
    # A row charge then finds that stand-in (the session's one dataset), kept under replace_one: x2.
    release(alone, Budget(Fraction(1, 10)), ROW)
    assert alone.store.spent(stand_in.fingerprint).dp == Budget(Fraction(1, 4))


def test_a_session_binding_the_same_data_under_another_unit_is_refused_before_anything_is_released(tmp_path):
    db = tmp_path / "ledger.sqlite"
    with Session(budget=1, ledger_path=db, output=io.StringIO()) as s:
        s.bind_private("t", make_patients(), PATIENT_SCHEMA, dataset="patients")
        s.run('n = laplace(sum(t, "age"), 0.25)')
    with Session(budget=1, ledger_path=db, output=io.StringIO()) as s:
        s.bind_private("t", make_patients(), PATIENT_SCHEMA, dataset="patients", unit="replace_one")
        with pytest.raises(BudgetExceeded, match="kept under row") as caught:
            s.run('n = laplace(sum(t, "age"), 0.25)')
        assert "nothing was spent" in caught.value.hint
        assert len(s.ledger) == 0
    with LedgerStore(db) as store:
        (dataset,) = store.datasets()
        assert dataset.unit == "row" and store.spent(dataset.fingerprint).dp == Budget(Fraction(1, 4))


def test_remaining_counts_the_unit_conversion(tmp_path):
    db = tmp_path / "ledger.sqlite"
    first = accountant(db, Budget(Fraction(10)))
    bind(first, "survey", REPLACE_ONE)
    assert first.remaining == Budget(Fraction(1))
    second = accountant(db, Budget(Fraction(10)))
    bind(second, "survey", ROW, lifetime=None)
    assert second.remaining == Budget(Fraction(1, 2))  # a row charge counts twice
    release(second, second.remaining, ROW)  # and exactly that much fits
    assert second.remaining == Budget(Fraction(0))
    third = accountant(tmp_path / "other.sqlite", Budget(Fraction(10)))
    bind(third, "visits", ROW)
    fourth = accountant(tmp_path / "other.sqlite", Budget(Fraction(10)))
    bind(fourth, "visits", REPLACE_ONE, lifetime=None)
    assert fourth.remaining == Budget(Fraction(0))  # no replace_one charge counts under row
