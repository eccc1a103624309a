"""Property test of the accountant: random Jostle programs over random data and budgets.

Hypothesis generates small programs (releases with random epsilons and deltas, `{{ }}`, nested
`with budget` blocks, loops and nested partitions), random tables and a random session total,
and runs each in a Session (a refused release stops the program with BudgetExceeded). Every call
of the accountant's `charge` is observed from outside. Asserted:

* the ledger never exceeds the total;
* a refused charge leaves the ledger exactly as it was (same entries, same spent);
* every charge is accepted or refused as an independent model of the rules says, with the
  epsilon and delta the rules give (a `{{ }}` gets its block's epsilon over the number of
  `{{ }}` written in it);
* the reported spent equals the composed cost of the accepted charges, computed here: charges
  add up sequentially, the parts of one partition cost the largest of them (McSherry 2009);
* that cost bounds the real privacy loss of every possible individual: summing the charges on
  the parts a given row would fall in never exceeds it.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from jostle import UsageError, BudgetExceeded, Session
from tests.privacy.conftest import thorough_factor

DOMAINS = {"g": ["a", "b", "c"], "h": ["x", "y"]}
SCHEMA = {"age": ("numeric", 0, 100), "g": ("categorical", DOMAINS["g"]), "h": ("categorical", DOMAINS["h"])}
EPSILONS = ["0.05", "0.1", "0.125", "0.2", "0.25", "0.3", "0.5", "0.75", "1"]
DELTAS = ["0.001", "0.01"]
KINDS = ["laplace", "laplace", "geometric", "sum", "mean", "gaussian", "brace", "brace"]


# ---------------------------------------------------------------- programs
@dataclass(frozen=True)
class Release:
    kind: str
    epsilon: str
    delta: str


@dataclass(frozen=True)
class WithBudget:
    epsilon: str
    delta: str | None
    body: tuple


@dataclass(frozen=True)
class Repeat:
    times: int
    body: tuple


@dataclass(frozen=True)
class Partition:
    column: str
    body: tuple


@st.composite
def blocks(draw: Any, depth: int = 0) -> tuple:
    """1 to 3 statements (5 at the top); compound ones (up to depth 3) hold blocks of their own."""
    statements = []
    for _ in range(draw(st.integers(1, 5 if depth == 0 else 3))):
        kind = draw(st.sampled_from(["release", "release", "with", "repeat", "partition"] if depth < 3
                                    else ["release"]))
        if kind == "release":
            statements.append(Release(draw(st.sampled_from(KINDS)), draw(st.sampled_from(EPSILONS)),
                                      draw(st.sampled_from(DELTAS))))
        elif kind == "with":
            delta = draw(st.sampled_from([None, None, *DELTAS]))
            statements.append(WithBudget(draw(st.sampled_from(EPSILONS)), delta, draw(blocks(depth + 1))))
        elif kind == "repeat":
            statements.append(Repeat(draw(st.integers(1, 3)), draw(blocks(depth + 1))))
        else:
            statements.append(Partition(draw(st.sampled_from(sorted(DOMAINS))), draw(blocks(depth + 1))))
    return tuple(statements)


def render(body: tuple, table: str = "t", indent: int = 0, depth: int = 0) -> list[str]:
    """Jostle source for `body`, releasing from `table`."""
    pad = "    " * indent
    lines = []
    for stmt in body:
        if isinstance(stmt, Release):
            expression = {
                "laplace": f"laplace(count({table}), {stmt.epsilon})",
                "geometric": f"geometric(count({table}), {stmt.epsilon})",
                "sum": f'laplace(sum({table}, "age"), {stmt.epsilon})',
                "mean": f'laplace(mean({table}, "age"), {stmt.epsilon})',
                "gaussian": f"gaussian(count({table}), {stmt.epsilon}, {stmt.delta})",
                "brace": f"{{{{ count({table}) }}}}",
            }[stmt.kind]
            lines.append(f"{pad}released = {expression}")
        elif isinstance(stmt, WithBudget):
            cap = stmt.epsilon + (f", {stmt.delta}" if stmt.delta else "")
            lines.append(f"{pad}with budget {cap}:")
            lines += render(stmt.body, table, indent + 1, depth)
        elif isinstance(stmt, Repeat):
            lines.append(f"{pad}for i{depth} in range({stmt.times}):")
            lines += render(stmt.body, table, indent + 1, depth + 1)
        else:
            part = f"p{depth}"
            lines.append(f'{pad}for {part} in {table}.partition("{stmt.column}"):')
            lines += render(stmt.body, part, indent + 1, depth + 1)
    return lines


# ---------------------------------------------------------------- the independent model
Cost = tuple[Fraction, Fraction]
Path = tuple[tuple[int, str, str], ...]  # (partition instance, column, key) from the root down


def add(a: Cost, b: Cost) -> Cost:
    return a[0] + b[0], a[1] + b[1]


def composed(charges: list[tuple[Cost, Path]], depth: int = 0) -> Cost:
    """Sequential sums; the parts of each partition instance cost their (componentwise) maximum."""
    total: Cost = (Fraction(0), Fraction(0))
    parts: dict[int, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for cost, path in charges:
        if len(path) == depth:
            total = add(total, cost)
        else:
            instance, _, key = path[depth]
            parts[instance][key].append((cost, path))
    for by_key in parts.values():
        costs = [composed(part, depth + 1) for part in by_key.values()]
        total = add(total, (max(c[0] for c in costs), max(c[1] for c in costs)))
    return total


def worst_individual(charges: list[tuple[Cost, Path]]) -> Cost:
    """The largest total epsilon (and delta) spent on the parts any one possible row is in."""
    worst = [Fraction(0), Fraction(0)]
    for values in itertools.product(*DOMAINS.values()):
        row = dict(zip(DOMAINS, values))
        mine = [c for c, path in charges if all(row[column] == key for _, column, key in path)]
        for i in range(2):
            worst[i] = max(worst[i], sum((c[i] for c in mine), Fraction(0)))
    return worst[0], worst[1]


class Refused(Exception):
    """The model's BudgetExceeded: the program stops here."""


@dataclass
class Limit:
    cap: Cost
    per_release: Fraction
    charges: list


def count_braces(body: tuple) -> int:
    """`{{ }}` written in `body`, not inside nested `with budget` blocks."""
    total = 0
    for stmt in body:
        if isinstance(stmt, Release):
            total += stmt.kind == "brace"
        elif isinstance(stmt, (Repeat, Partition)):
            total += count_braces(stmt.body)
    return total


class Model:
    """Runs a program on the accounting rules alone: what is charged, accepted and refused."""

    def __init__(self, total: Cost) -> None:
        self.session = Limit(total, Fraction(0), [])
        self.stack: list[Limit] = []
        self.attempts: list[tuple[Cost, bool]] = []
        self.instances = 0

    def charge(self, cost: Cost, path: Path) -> None:
        for limit in [*self.stack, self.session]:
            after = composed(limit.charges + [(cost, path)])
            if after[0] > limit.cap[0] or after[1] > limit.cap[1]:
                self.attempts.append((cost, False))
                raise Refused
        self.attempts.append((cost, True))
        for limit in [*self.stack, self.session]:
            limit.charges.append((cost, path))

    def run(self, body: tuple, path: Path = ()) -> None:
        for stmt in body:
            if isinstance(stmt, Release):
                if stmt.kind == "brace":
                    if not self.stack:
                        raise Refused  # {{ }} outside any block: refused before charging
                    cost: Cost = (self.stack[-1].per_release, Fraction(0))
                else:
                    delta = Fraction(stmt.delta) if stmt.kind == "gaussian" else Fraction(0)
                    cost = (Fraction(stmt.epsilon), delta)
                self.charge(cost, path)
            elif isinstance(stmt, WithBudget):
                cap = (Fraction(stmt.epsilon), Fraction(stmt.delta or 0))
                braces = count_braces(stmt.body)
                self.stack.append(Limit(cap, cap[0] / braces if braces else cap[0], []))
                try:
                    self.run(stmt.body, path)
                finally:
                    self.stack.pop()
            elif isinstance(stmt, Repeat):
                for _ in range(stmt.times):
                    self.run(stmt.body, path)
            else:
                self.instances += 1
                instance = self.instances
                for key in DOMAINS[stmt.column]:
                    self.run(stmt.body, path + ((instance, stmt.column, key),))


# ---------------------------------------------------------------- the property
rows = st.lists(st.tuples(st.integers(0, 100), st.sampled_from(DOMAINS["g"]), st.sampled_from(DOMAINS["h"])),
                max_size=12)
totals = st.tuples(st.sampled_from(["0.5", "1", "2", "4", "8"]), st.sampled_from(["0", "0.01", "0.05", "0.1"]))


@settings(max_examples=int(100 * thorough_factor(False)), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@pytest.mark.real_run  # audits the real run's draws and charges (tests/conftest.py)
@given(program=blocks(), data=rows, total=totals, seed=st.integers(0, 2**32 - 1))
def test_ledger_respects_the_budget_and_the_composition_rules(program: tuple, data: list, total: tuple,
                                                               seed: int) -> None:
    source = "\n".join(render(program)) + "\n"
    frame = pd.DataFrame(data, columns=["age", "g", "h"]).astype({"age": float})
    cap: Cost = (Fraction(total[0]), Fraction(total[1]))
    session = Session(budget=float(cap[0]), delta=float(cap[1]), seed=seed, ledger_path=":memory:")
    session.bind_private("t", frame, SCHEMA)
    accountant = session.accountant
    observed: list[tuple[Cost, bool]] = []
    original_charge = accountant.charge

    def watched_charge(budget: Any, *args: Any, **kwargs: Any) -> Any:
        before_entries, before_spent = list(accountant.ledger), accountant.spent
        try:
            entry = original_charge(budget, *args, **kwargs)
        except BudgetExceeded:
            observed.append(((budget.epsilon, budget.delta), False))
            assert list(accountant.ledger) == before_entries and accountant.spent == before_spent, \
                "a refused charge changed the ledger"
            raise
        observed.append(((budget.epsilon, budget.delta), True))
        assert list(accountant.ledger) == [*before_entries, entry]
        spent = accountant.spent
        assert spent.epsilon <= cap[0] and spent.delta <= cap[1], f"overspent: {spent}"
        return entry

    accountant.charge = watched_charge  # type: ignore[method-assign]
    model = Model(cap)
    # Each top-level statement is one session.run: a refusal stops that statement, and the
    # session (like the model) carries on with the next one.
    refused, model_refused = [], []
    for statement in program:
        try:
            model.run((statement,))
            model_refused.append(False)
        except Refused:
            model_refused.append(True)
        try:
            session.run("\n".join(render((statement,))) + "\n")
            refused.append(False)
        except BudgetExceeded:
            refused.append(True)
    ledger = session.ledger
    session.close()

    event("a statement was refused" if any(refused) else "nothing refused")
    outcomes = [accepted for _, accepted in observed]
    after_refusal = False in outcomes and True in outcomes[outcomes.index(False) + 1:]
    event("a charge accepted after a refused one" if after_refusal else "no charge after a refused one")
    event("charges on partition parts" if any(path for _, path in model.session.charges) else "no part charged")
    assert refused == model_refused, source
    assert observed == model.attempts, source
    accepted = model.session.charges
    assert [(c.budget.epsilon, c.budget.delta) for c in ledger] == [cost for cost, _ in accepted]
    assert (ledger.spent.epsilon, ledger.spent.delta) == composed(accepted), source
    assert ledger.spent.epsilon <= cap[0] and ledger.spent.delta <= cap[1]
    worst = worst_individual(accepted)
    assert worst[0] <= ledger.spent.epsilon and worst[1] <= ledger.spent.delta, source


# ---------------------------------------------------------------- lifetime budgets (issues 11 and 21)
session_plans = st.lists(
    st.tuples(
        # how the session's total is given, a session that declares the data's lifetime, a
        # reset by the curator, or a change of the lifetime by the curator (`jostle ledger lifetime`)
        st.sampled_from(["session", "program", "declare", "reset", "lifetime"]),
        st.sampled_from(["0.5", "1", "2", "100"]),          # the total (or the new lifetime)
        st.lists(st.sampled_from(["0.25", "0.5", "1", "1.5"]), min_size=1, max_size=4),  # releases
    ),
    min_size=1, max_size=6,
)


@settings(max_examples=int(40 * thorough_factor(False)), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@pytest.mark.real_run  # audits the real run's draws and charges (tests/conftest.py)
@given(plan=session_plans)
def test_the_lifetime_budget_of_a_dataset_is_the_curators(plan: list) -> None:
    """Sessions one after another on one durable ledger, each with its own total (from the
    session, or from the program's `budget` statement), with lifetime declarations, resets and
    lifetime changes by the curator between them. Model (issue 21): a dataset's lifetime is set
    by the first binding that declares one, or by the first binding session's own total; a
    program's `budget` never sets or changes it; only `set_lifetime` changes it, keeping the
    balance; a reset writes the balance off and keeps the lifetime. A release is accepted iff
    the data has a lifetime, this session's spending plus its epsilon stays within the session's
    total and the balance plus its epsilon within the lifetime."""
    import tempfile

    from jostle.privacy.ledger_store import LedgerStore

    frame = pd.DataFrame({"age": [30.0, 40.0], "g": ["a", "b"], "h": ["x", "y"]})
    with tempfile.TemporaryDirectory() as folder:
        db = f"{folder}/ledger.sqlite"
        balance, lifetime = Fraction(0), None
        for mode, total_text, releases in plan:
            total = Fraction(total_text)
            if mode in ("reset", "lifetime"):
                with LedgerStore(db) as store:
                    datasets = store.datasets()
                    for dataset in datasets:
                        if mode == "reset":
                            store.reset(dataset.fingerprint, "property test", confirmed=True)
                        else:
                            store.set_lifetime(dataset.fingerprint, (total, Fraction(0)), "property test",
                                               confirmed=True)
                if datasets:
                    balance, lifetime = (Fraction(0), lifetime) if mode == "reset" else (balance, total)
                continue
            given_total = float(total) if mode in ("session", "declare") else None
            declared = 2 * float(total) if mode == "declare" else None
            session = Session(budget=given_total, seed=1, ledger_path=db)
            if declared is not None and lifetime is not None and Fraction(declared) != lifetime:
                with pytest.raises(UsageError, match="jostle ledger lifetime"):
                    session.bind_private("t", frame, SCHEMA, lifetime=declared)
                event("a declaration that differs from the ledger was refused at bind")
                session.close()
                continue
            session.bind_private("t", frame, SCHEMA, lifetime=declared)
            if lifetime is None and mode != "program":
                lifetime = Fraction(declared) if declared is not None else total
            head = f"budget {total_text}\n" if mode == "program" else ""
            this_run = Fraction(0)
            for epsilon_text in releases:
                epsilon = Fraction(epsilon_text)
                expected = lifetime is not None and this_run + epsilon <= total and balance + epsilon <= lifetime
                try:
                    session.run(f"{head}x = laplace(count(t), {epsilon_text})\n")
                    accepted = True
                except BudgetExceeded:
                    accepted = False
                assert accepted == expected, (plan, mode, total, epsilon, balance, lifetime)
                if not accepted and lifetime is not None and this_run + epsilon <= total:
                    event("a lifetime budget refused what the session's total allowed")
                if accepted:
                    balance, this_run = balance + epsilon, this_run + epsilon
                assert session.spent.epsilon == this_run
                (status,) = session.datasets
                assert status.spent.epsilon == balance
                assert (status.lifetime.epsilon if status.lifetime else None) == lifetime
                left = Fraction(0) if lifetime is None else max(Fraction(0), min(total - this_run, lifetime - balance))
                assert session.remaining.epsilon == left
            session.close()
