"""The durable ledger's format 3 (issue 22): each charge's measure, amounts and unit; the migrations
from formats 1 and 2 keep every balance; lifetimes held in (epsilon, delta) or in rho; charges in
another measure converted conservatively or refused with the reason (jostle.privacy.ledger_balance).
"""

from __future__ import annotations

import io
import json
import sqlite3
from fractions import Fraction
from pathlib import Path

import pytest

from jostle import BudgetExceeded, Session, UsageError
from jostle.privacy.accounting import ZCDP, Accounting, epsilon_within_rho
from jostle.privacy.budget import Accountant, ParallelGroup
from jostle.privacy.conversions import pure_to_rho, rho_for, zcdp_to_epsilon
from jostle.privacy.ledger_balance import Balance
from jostle.privacy.ledger_store import LedgerStore
from jostle.privacy.ledger_text import render_store
from jostle.privacy.measures import Budget, RhoZCDPBudget
from tests.conftest import PATIENT_SCHEMA, make_patients
from tests.ledger_format_1 import format_1_ledger
from tests.ledger_format_2 import charge, format_2_ledger, lifetime, reset

DELTA = Fraction(1, 10**6)


def dp_accountant(db: Path, total: Budget = Budget(Fraction(100))) -> Accountant:
    return Accountant(total, LedgerStore(db))


def zcdp_accountant(db: Path, rho: Fraction = Fraction(100)) -> Accountant:
    return Accountant(RhoZCDPBudget(rho), LedgerStore(db), accounting=Accounting(ZCDP))


def bind(accountant: Accountant, name: str, lifetime_budget=None) -> str:
    key = accountant.register_dataset(name.encode(), name, ("x",), name=name, lifetime=lifetime_budget)
    assert key is not None
    return key


def release(accountant: Accountant, budget, node=None):
    return accountant.charge(budget, node or accountant.root, "mechanism", "count(t)", None)


# ---------------------------------------------------------------- migrations
def test_a_format_2_ledger_becomes_format_3_and_keeps_every_balance_and_hash(tmp_path):
    db = tmp_path / "v2.sqlite"
    a, b = "a" * 64, "b" * 64
    hashes = format_2_ledger(db, "cd" * 32, [(a, "study"), (b, "survey")], [
        lifetime(a, ("2", "1/1000000")),
        charge(a, "1/2", "0", ("1/2", "0"), ("2", "1/1000000")),
        charge(a, "1/4", "1/10000000", ("3/4", "1/10000000"), ("2", "1/1000000")),
        lifetime(b, ("1", "0")),
        charge(b, "3/10", "0", ("3/10", "0"), ("1", "0")),
        reset(b, ("3/10", "0")),
        charge(b, "1/5", "0", ("1/5", "0"), ("1", "0")),
    ])
    with LedgerStore(db) as store:
        assert store._meta()["format"] == "3"
        assert store.verify() == []
        events = store.events()
        assert [e["hash"] for e in events] == hashes  # not one hash changed
        assert store.spent(a) == Balance(Budget(Fraction(3, 4), Fraction(1, 10**7)), Fraction(0))
        assert store.spent(b) == Balance(Budget(Fraction(1, 5)), Fraction(0))
        assert store.lifetime(a) == Budget(Fraction(2), DELTA) and store.lifetime(b) == Budget(Fraction(1))
        assert [e["measure"] for e in events] == ["approximate", "pure", "approximate", "pure", "pure", None, "pure"]
        assert [e["unit"] for e in events if e["kind"] == "charge"] == ["row"] * 4
        assert {d.unit for d in store.datasets()} == {"row"}
        assert all(e["rho"] == "0" and e["spent_rho"] == "0" for e in events)
    # The next charge continues from the balance (1/4 left of epsilon 2 after 3/4... and 1/5 of 1).
    accountant = dp_accountant(db)
    bind(accountant, "survey")
    release(accountant, Budget(Fraction(4, 5)))
    with pytest.raises(BudgetExceeded, match="lifetime budget"):
        release(accountant, Budget(Fraction(1, 100)))
    with LedgerStore(db) as store:
        assert store.spent(b).dp == Budget(Fraction(1)) and store.verify() == []
        assert store._meta()["format"] == "3"  # opening it again changes nothing


def test_a_format_1_ledger_reaches_format_3_with_its_balance(tmp_path):
    db = tmp_path / "v1.sqlite"
    fingerprint = "f" * 64
    format_1_ledger(db, "ab" * 32, [(fingerprint, "patients")],
                    [(fingerprint, "1/2", "1/2", "2"), (fingerprint, "1/4", "3/4", "3/2")])
    with LedgerStore(db) as store:
        assert store._meta()["format"] == "3" and store.verify() == []
        assert store.spent(fingerprint) == Balance(Budget(Fraction(3, 4)))
        assert store.lifetime(fingerprint) == Budget(Fraction(3, 2))
        assert [(e["kind"], e["measure"], e["unit"]) for e in store.events()] == [
            ("charge", "pure", "row"), ("charge", "pure", "row"), ("lifetime", "pure", None)]
        assert store.datasets()[0].unit == "row"


def test_changing_a_migrated_events_measure_breaks_the_hash_chain(tmp_path):
    """Format 3's columns are hashed whenever they say more than format 2's: relabelling an old
    charge as zCDP is detected although its hash was computed by format 2."""
    db = tmp_path / "v2.sqlite"
    a = "a" * 64
    format_2_ledger(db, "cd" * 32, [(a, "study")], [
        lifetime(a, ("1", "0")), charge(a, "1/2", "0", ("1/2", "0"), ("1", "0"))])
    LedgerStore(db).close()
    con = sqlite3.connect(db)
    con.execute("DROP TRIGGER events_are_never_updated")
    con.execute("UPDATE events SET measure = 'zcdp' WHERE kind = 'charge'")
    con.commit()
    con.close()
    with LedgerStore(db) as store:
        assert any("do not match its hash" in problem for problem in store.verify())


# ---------------------------------------------------------------- rho against (epsilon, delta)
def test_rho_charges_fit_an_epsilon_delta_lifetime_up_to_its_rho_and_not_beyond(tmp_path):
    """Lifetime (1, 1e-6): rho charges are accepted while zcdp_to_epsilon(R, 1e-6) <= 1 (up to
    rho_for(1, 1e-6)), and refused just above, with nothing written."""
    cap = rho_for(Fraction(1), DELTA)
    above = cap * (1 + Fraction(1, 10**8))
    assert zcdp_to_epsilon(cap, DELTA) <= 1 < zcdp_to_epsilon(above, DELTA)
    db = tmp_path / "ledger.sqlite"
    accountant = zcdp_accountant(db)
    key = bind(accountant, "study", Budget(Fraction(1), DELTA))
    release(accountant, RhoZCDPBudget(cap / 2))
    release(accountant, RhoZCDPBudget(cap / 2))
    assert accountant.store.spent(key) == Balance(Budget.zero(), cap)
    events = len(accountant.store.events())
    with pytest.raises(BudgetExceeded, match="left of its lifetime budget") as caught:
        release(accountant, RhoZCDPBudget(above - cap))
    assert "counts as epsilon at the delta left" in caught.value.message
    assert len(accountant.store.events()) == events and len(accountant.ledger) == 2
    # One charge just above the cap, on data with nothing spent, is refused too.
    fresh = zcdp_accountant(tmp_path / "other.sqlite")
    bind(fresh, "study", Budget(Fraction(1), DELTA))
    with pytest.raises(BudgetExceeded):
        release(fresh, RhoZCDPBudget(above))
    assert fresh.store.events()[-1]["kind"] == "lifetime"


def test_epsilon_delta_and_rho_spending_share_an_epsilon_delta_lifetime(tmp_path):
    """B = (0.5, 0) spent, then rho: accepted iff 0.5 + zcdp_to_epsilon(R, 1e-6) <= 1; once rho is
    spent, (epsilon, delta) charges must leave some delta for it (B.delta < delta_L)."""
    db = tmp_path / "ledger.sqlite"
    first = dp_accountant(db)
    key = bind(first, "study", Budget(Fraction(1), DELTA))
    release(first, Budget(Fraction(1, 2)))
    room = rho_for(Fraction(1, 2), DELTA)
    second = zcdp_accountant(db)
    bind(second, "study")
    release(second, RhoZCDPBudget(room))
    assert second.store.spent(key) == Balance(Budget(Fraction(1, 2)), room)
    with pytest.raises(BudgetExceeded):
        release(second, RhoZCDPBudget(room * Fraction(1, 10**6)))
    third = dp_accountant(db)
    bind(third, "study")
    with pytest.raises(BudgetExceeded, match="delta"):
        release(third, Budget(Fraction(1, 10**9), DELTA))  # it would leave no delta for the rho
    assert third.store.spent(key) == Balance(Budget(Fraction(1, 2)), room)


def test_rho_against_a_pure_lifetime_is_refused_with_the_reason(tmp_path):
    db = tmp_path / "ledger.sqlite"
    accountant = zcdp_accountant(db)
    key = bind(accountant, "study", Budget(Fraction(1)))
    with pytest.raises(BudgetExceeded, match="cannot be charged to the data 'study'") as caught:
        release(accountant, RhoZCDPBudget(Fraction(1, 1000)))
    assert "zCDP implies (epsilon, delta)-DP only for delta > 0" in caught.value.message
    assert "nothing was released and nothing was spent" in caught.value.hint
    assert accountant.store.spent(key).is_zero() and accountant.ledger == []


# ---------------------------------------------------------------- against a rho lifetime
def test_pure_epsilon_against_a_rho_lifetime_costs_epsilon_squared_over_two(tmp_path):
    db = tmp_path / "ledger.sqlite"
    accountant = dp_accountant(db)
    key = bind(accountant, "study", RhoZCDPBudget(Fraction(1, 2)))
    for _ in range(4):
        release(accountant, Budget(Fraction(1, 2)))  # rho 1/8 each
    assert accountant.store.spent(key) == Balance(Budget.zero(), Fraction(1, 2))
    assert [e["measure"] for e in accountant.store.events() if e["kind"] == "charge"] == ["zcdp"] * 4
    assert accountant.store.events()[-1]["requested_epsilon"] == "1/2"  # the release's own budget
    with pytest.raises(BudgetExceeded, match="rho"):
        release(accountant, Budget(Fraction(1, 100)))
    assert accountant.store.spent(key).rho == Fraction(1, 2)


def test_parallel_parts_cost_a_rho_lifetime_their_largest_rho(tmp_path):
    """Pure releases on disjoint parts are charged to a rho lifetime at the largest part's rho
    (composed in rho, not each release's epsilon^2/2 added up)."""
    accountant = dp_accountant(tmp_path / "ledger.sqlite")
    key = bind(accountant, "study", RhoZCDPBudget(Fraction(1)))
    group = ParallelGroup(accountant.root, "sex")
    parts = [group.part(value) for value in ("F", "M", "X")]
    for part in parts:
        release(accountant, Budget(Fraction(1)), part)  # rho 1/2 each, in parallel
    release(accountant, Budget(Fraction(1, 2)), parts[0])  # part F now costs rho 1/2 + 1/8
    assert accountant.store.spent(key).rho == Fraction(5, 8)


def test_approximate_dp_against_a_rho_lifetime_is_refused_with_the_reason(tmp_path):
    accountant = dp_accountant(tmp_path / "ledger.sqlite", Budget(Fraction(10), DELTA))
    key = bind(accountant, "study", RhoZCDPBudget(Fraction(1)))
    with pytest.raises(BudgetExceeded) as caught:
        release(accountant, Budget(Fraction(1, 10), DELTA))
    assert "approximate DP with delta > 0 implies no zCDP" in caught.value.message
    assert accountant.store.spent(key).is_zero() and accountant.ledger == []


# ---------------------------------------------------------------- what is left, in the session's measure
def test_remaining_is_in_the_sessions_measure(tmp_path):
    db = tmp_path / "ledger.sqlite"
    zcdp = zcdp_accountant(db, Fraction(1))
    bind(zcdp, "study", Budget(Fraction(1), DELTA))
    assert zcdp.remaining == RhoZCDPBudget(rho_for(Fraction(1), DELTA))
    dp = dp_accountant(tmp_path / "other.sqlite", Budget(Fraction(3)))
    bind(dp, "survey", RhoZCDPBudget(Fraction(1, 8)))
    assert dp.remaining == Budget(Fraction(1, 2))  # epsilon^2 / 2 = 1/8
    (status,) = dp.datasets_status()
    assert status.left == RhoZCDPBudget(Fraction(1, 8)) and status.spent == RhoZCDPBudget(Fraction(0))
    pure = zcdp_accountant(tmp_path / "third.sqlite")
    bind(pure, "pure", Budget(Fraction(1)))
    assert pure.remaining == RhoZCDPBudget(Fraction(0))  # no rho fits a pure lifetime


# ---------------------------------------------------------------- declaring a lifetime in rho
def test_a_rho_lifetime_from_python_a_schema_file_and_the_session(tmp_path):
    db = tmp_path / "ledger.sqlite"
    with Session(rho=1, ledger_path=db, output=io.StringIO()) as s:
        s.bind_private("patients", make_patients(), PATIENT_SCHEMA, lifetime=RhoZCDPBudget(Fraction(1, 20)))
        s.run("n = gaussian(count(patients), rho(0.03))")
        with pytest.raises(BudgetExceeded, match="rho"):
            s.run("m = gaussian(count(patients), rho(0.03))")
        assert s.remaining == RhoZCDPBudget(Fraction(1, 50))
    csv = tmp_path / "people.csv"
    make_patients(50).to_csv(csv, index=False)
    (tmp_path / "people.schema.json").write_text(json.dumps(
        {"columns": {"age": {"type": "numeric", "bounds": [0, 120]}}, "lifetime": {"rho": 0.5}}))
    with Session(budget=1, ledger_path=db, output=io.StringIO()) as s:
        s.bind_private("people", csv)
        s.run("n = laplace(count(people), 0.5)")  # rho 1/8 of 1/2
    with Session(rho=0.2, ledger_path=db, output=io.StringIO()) as s:  # the session's own measure
        s.bind_private("visits", make_patients(seed=8), PATIENT_SCHEMA)
    with Session(budget=1, lifetime=RhoZCDPBudget(Fraction(1, 3)), ledger_path=db, output=io.StringIO()) as s:
        s.bind_private("cohort", make_patients(seed=9), PATIENT_SCHEMA)
    with pytest.raises(UsageError, match="rho greater than 0"):
        Session(budget=1, lifetime={"rho": 0}, ledger_path=db)
    with LedgerStore(db) as store:
        lifetimes = {d.name: store.lifetime(d.fingerprint) for d in store.datasets()}
        assert lifetimes["cohort"] == RhoZCDPBudget(Fraction(1, 3))
        assert lifetimes["people"] == RhoZCDPBudget(Fraction(1, 2))
        assert store.spent(store.dataset_named("people").fingerprint).rho == Fraction(1, 8)
        assert lifetimes["visits"] == RhoZCDPBudget(Fraction(1, 5))
    (tmp_path / "bad.schema.json").write_text(json.dumps({"columns": {"age": {"type": "numeric", "bounds": [0, 1]}},
                                                          "lifetime": {"rho": -1}}))
    from jostle.data.schema import read_schema_declaration
    from jostle.diagnostics.errors import DataError
    with pytest.raises(DataError, match="rho"):
        read_schema_declaration(tmp_path / "bad.schema.json")


def test_set_lifetime_in_rho_needs_confirmation_as_a_change_of_measure(tmp_path):
    db = tmp_path / "ledger.sqlite"
    accountant = dp_accountant(db)
    key = bind(accountant, "study", Budget(Fraction(1)))
    release(accountant, Budget(Fraction(1, 2)))
    store = accountant.store
    with pytest.raises(UsageError, match="confirmation"):
        store.set_lifetime(key, RhoZCDPBudget(Fraction(1, 100)), "switch to zCDP")
    store.set_lifetime(key, RhoZCDPBudget(Fraction(1)), "switch to zCDP", confirmed=True)
    assert store.lifetime(key) == RhoZCDPBudget(Fraction(1))
    store.set_lifetime(key, RhoZCDPBudget(Fraction(1, 2)), "lower")  # lowering needs only a reason
    # The pure 1/2 spent counts as rho 1/8 against it.
    later = dp_accountant(db)
    bind(later, "study")
    assert later.remaining == Budget(epsilon_within_rho(Fraction(3, 8)))  # sqrt(2 * 3/8), rounded down
    assert later.datasets_status()[0].spent == RhoZCDPBudget(pure_to_rho(Fraction(1, 2)))
    assert store.verify() == []


# ---------------------------------------------------------------- jostle ledger show
def test_ledger_show_prints_rho_with_its_epsilon_delta_equivalent_and_each_units(tmp_path):
    db = tmp_path / "ledger.sqlite"
    accountant = zcdp_accountant(db)
    bind(accountant, "study", Budget(Fraction(1), DELTA))
    bind(accountant, "rho data", RhoZCDPBudget(Fraction(1, 2)))
    release(accountant, RhoZCDPBudget(Fraction(1, 100)))
    shown = render_store(accountant.store)
    equivalent = zcdp_to_epsilon(Fraction(1, 100), DELTA)
    assert "lifetime budget epsilon=1, delta=1e-06, spent rho=0.01 (epsilon=" in shown
    assert "at delta=1e-06: the lifetime's delta)" in shown
    assert "lifetime budget rho=0.5, spent rho=0.01 (epsilon=" in shown
    assert "delta 1e-6, for comparison" in shown  # a rho lifetime has no delta: labelled
    assert f"{float(equivalent):.6g}"[:5] in shown
    assert "privacy unit: row (one row added or removed)" in shown
    header = next(line for line in shown.splitlines() if line.strip().startswith("id "))
    assert "unit" in header.split()
    charge_lines = [line for line in shown.splitlines() if " charge " in line]
    assert len(charge_lines) == 2 and all(" row " in line for line in charge_lines)


def test_a_sessions_ledger_prints_rho_and_each_datas_rho_with_its_equivalent(tmp_path):
    from jostle.privacy.budget import ParallelGroup as Group
    from jostle.privacy.ledger_text import render_ledger
    from jostle.privacy.units import REPLACE_ONE

    with Session(rho=1, ledger_path=tmp_path / "ledger.sqlite", output=io.StringIO()) as s:
        s.bind_private("patients", make_patients(), PATIENT_SCHEMA, lifetime=(1, 1e-6))
        s.run("n = gaussian(count(patients), rho(0.01))")
        lines = str(s.ledger).splitlines()
    assert lines[0].split()[:6] == ["#", "where", "mechanism", "epsilon", "delta", "rho"]
    assert lines[1].split()[3] == "0.01"
    assert any(line.startswith("data 'patients': lifetime budget epsilon=1, delta=1e-06, spent rho=0.01 "
                               "(epsilon=") and "the lifetime's delta" in line for line in lines)
    accountant = Accountant(Budget(Fraction(1)), None)
    part = Group(accountant.root_for(REPLACE_ONE), "sex").part("F")
    release(accountant, Budget(Fraction(1, 10)), accountant.root_for(REPLACE_ONE))
    release(accountant, Budget(Fraction(1, 10)), part)
    text = render_ledger(accountant.ledger, accountant.cap, accountant.spent)
    assert "all rows (replace_one)\n" in text + "\n" and "(replace_one) (replace_one)" not in text
    assert "sex=F (replace_one)" in text


def test_the_ledger_frame_has_rho_and_unit_columns(tmp_path):
    with Session(rho=1, ledger_path=":memory:", output=io.StringIO()) as s:
        s.bind_private("patients", make_patients(), PATIENT_SCHEMA)
        s.run("n = gaussian(count(patients), rho(0.01))\nm = laplace(count(patients), 0.1)")
        frame = s.ledger.to_frame()
    assert list(frame["rho"]) == [0.01, pytest.approx(0.005)]
    assert list(frame["unit"]) == ["row", "row"]
    assert frame["epsilon"].isna().tolist() == [True, False]


def test_random_charges_in_every_measure_follow_the_balance_rule():
    """Random sequences of pure, approximate and rho charges against random lifetimes in each
    measure (fixed seed): the store accepts exactly what the rule of ledger_balance admits,
    computed here from its definition, and its balances and hash chain stay exact."""
    import random

    from jostle.privacy.ledger_records import ChargeRecord, LedgerRefusal

    rng = random.Random(22)
    decisions = {"accepted": 0, "lifetime": 0, "measure": 0}
    for trial in range(40):
        store = LedgerStore(":memory:")
        kind = rng.choice(["rho", "pure", "approximate"])
        life = (RhoZCDPBudget(Fraction(rng.randint(1, 8), 16)) if kind == "rho"
                else Budget(Fraction(rng.randint(1, 8), 4), Fraction(0) if kind == "pure" else DELTA * rng.randint(1, 3)))
        key = store.open_dataset("d", "d", lifetime=life).fingerprint
        spent_dp, spent_rho = Budget.zero(), Fraction(0)
        for step in range(12):
            which = rng.choice(["pure", "approximate", "rho"])
            amount = (RhoZCDPBudget(Fraction(rng.randint(1, 40), 1000)) if which == "rho"
                      else Budget(Fraction(rng.randint(1, 20), 40),
                                  Fraction(0) if which == "pure" else DELTA * Fraction(rng.randint(1, 10), 10)))
            # The rule, from its definition.
            if isinstance(life, RhoZCDPBudget):
                if which == "approximate":
                    expected, rise = "measure", None
                else:
                    rise = amount if which == "rho" else RhoZCDPBudget(pure_to_rho(amount.epsilon))
                    ok = spent_rho + rise.rho + pure_to_rho(spent_dp.epsilon) <= life.rho
                    expected = "accepted" if ok else "lifetime"
            elif which == "rho" and not life.delta:
                expected, rise = "measure", None
            else:
                rise = amount
                new_dp = spent_dp + amount if which != "rho" else spent_dp
                new_rho = spent_rho + (amount.rho if which == "rho" else 0)
                if not new_rho:
                    ok = new_dp.epsilon <= life.epsilon and new_dp.delta <= life.delta
                else:
                    ok = new_dp.delta < life.delta and (
                        new_dp.epsilon + zcdp_to_epsilon(new_rho, life.delta - new_dp.delta) <= life.epsilon)
                expected = "accepted" if ok else "lifetime"
            record = ChargeRecord("s", step, amount, "m", "w", "all rows", "")
            try:
                store.record([key], amount, record)
                outcome = "accepted"
            except LedgerRefusal as refusal:
                outcome = refusal.kind
            assert outcome == expected, (trial, step, life, amount, spent_dp, spent_rho)
            decisions[outcome] += 1
            if outcome == "accepted":
                if isinstance(rise, RhoZCDPBudget):
                    spent_rho += rise.rho
                else:
                    spent_dp = spent_dp + rise
        assert store.spent(key) == Balance(spent_dp, spent_rho) and store.verify() == []
    assert min(decisions.values()) >= 20, decisions  # every outcome was exercised
