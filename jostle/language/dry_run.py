"""The dry run: a program run once on public stand-ins, before anything is charged.

`jostle run FILE`, `jostle -c CODE`, `Session.run` and `Session.run_file` first run the program
in a fresh interpreter (`dry_run`) whose private tables are stand-ins generated from their
declared schemas (jostle.data.stand_in), so that an error that does not depend on the private
rows (a type error after a release, a refused call, a total the budget cannot hold) is raised
before any budget is spent, located, with a note saying it came from a dry run and how to skip
it. The REPL does not dry-run its lines (each line is its own program, and a dry run of one line
cannot know what the next will do). `jostle check FILE --cost` and `Session.check` use the same
dry run for the cost report (jostle.language.cost_report).

What the dry interpreter is:
  * its private tables: every table bound by the curator (`--data`, `bind_private`,
    `bind_database`: a database's tables share one database node again, so joins and parallel
    parts compose as in the real run), every table a program declares (`private NAME: {...}`)
    and every table it loads (`load(path, schema)`: the file is neither opened nor statted for
    rows; the same refusals as the real `load` on the path and the unit) is a stand-in made
    from its schema, under the same privacy unit, with the same `public_rows`;
  * its accountant (`DryAccountant`): the session's caps (what the session's total leaves, or,
    without a total, the program's `budget` statement; every `budget`/`with budget` block as
    written; what each dataset's lifetime budget leaves) and NO durable ledger store;
  * its randomness: its own fixed seed (`DRY_RUN_SEED`); the session's source of randomness is
    not touched, so a seeded session prints the same numbers with and without the dry run;
  * printing goes nowhere, warnings are kept (not shown), nothing is registered with the
    session's ledger and no data file is written. A ChoiceMaker may load or train its shipped
    model, which is public.
The session's scope is copied in when it holds only public values and bound tables. When it holds
a value the stand-ins cannot stand for (a private value or a derived table from an earlier `run`,
a function or ChoiceMaker defined by an earlier run, whose scope holds the real tables), the dry
run is skipped for that call and a warning says so (`skip_reason`).

Privacy. Everything the dry run shows (its errors and their messages, the charges and totals of
the cost report, whether it refuses, its running time) is a function of: the program text (and
the modules it imports); the public schemas, privacy units and public_rows flags of the bound
tables, and the row count of a table whose `count` is public (replace_one with its bound rows:
every neighbour has as many, and a program reads it exactly, so its stand-in has that many rows);
the session's ledger so far (`ledger()` and `spent()` read the same as in the real run); the
public values of the session's scope; what the session's total and the data's
lifetime budgets leave (which a program already observes through `remaining()`); the paths the
program names (their existence and whether the curator bound them: the real `load`'s refusals,
decided on the path alone); and the fixed dry-run seed. The private rows enter none of these:
stand-ins are generated from schemas, never read from files or frames (not their header, nor
their row count unless it is public), and no value computed from real rows is copied in (`skip_reason`). So on
neighbouring datasets the dry run does exactly the same thing (tests/privacy/test_dry_run_privacy.py
checks its report and errors on neighbouring data). The dry run releases nothing: its releases
are noisy values of stand-ins, shown to no one, charged to a throw-away accountant.
"""

from __future__ import annotations

import io
import time
from fractions import Fraction
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from jostle.data.stand_in import stand_in_frame
from jostle.diagnostics.errors import BudgetExceeded, JostleError, JostleRuntimeError, JostleWarning
from jostle.diagnostics.source import BUILTIN_SPAN, Span
from jostle.language import ast_nodes as A
from jostle.language import private_files
from jostle.language.builtin_registry import refuse_private_arguments
from jostle.language.evaluator import Interpreter
from jostle.language.loading import _resolve_path, make_private_table, schema_from_value
from jostle.language.values import Module, Record, Table, format_value, type_name
from jostle.privacy.budget import Accountant, AnyBudget, Charge
from jostle.privacy.noise import Randomness

DRY_RUN_SEED = 2929
HOW_TO_SKIP = "skip the dry run with `jostle run --no-dry-run` or `Session(dry_run=False)`"
DRY_RUN_NOTE = ("this error came from a dry run of the program on public stand-ins of its private tables "
                "(made from their schemas), before anything was spent; " + HOW_TO_SKIP)


@dataclass
class DryRun:
    """What a dry run did.

    Attributes:
        charges: Every release it made, in order (the throw-away accountant's ledger), with
            their `details` (noise law, predicted error).
        spent: Their composed cost (sequential and parallel composition), in the run's measure.
        cap: The total the run was held to (the session's, or the program's `budget`), or None.
        seconds: How long it took.
        interpreter: The dry interpreter (its modules, for the static analysis).
        warnings: The warnings it gave (not shown).
    """

    charges: list[Charge]
    spent: AnyBudget
    cap: AnyBudget | None
    seconds: float
    interpreter: Any = field(repr=False, default=None)
    warnings: list[JostleWarning] = field(default_factory=list)


class DryRunInterpreter(Interpreter):
    """An interpreter whose pending private tables become stand-ins when the program declares them."""

    def _exec_PrivateDecl(self, stmt: A.PrivateDecl, env: Any) -> None:
        if stmt.name not in self.bound_tables and stmt.name in self.bindings:
            schema = schema_from_value(self.eval(stmt.schema, env), stmt.span)
            entry = self.bindings[stmt.name]
            unit = entry[4] if len(entry) > 4 else None
            key = unit.key if unit is not None and unit.is_entity and unit.key in schema else None
            self.bindings[stmt.name] = (stand_in_frame(schema, key), None, *entry[2:])
        super()._exec_PrivateDecl(stmt, env)


def _stand_in_load(interp: Any, span: Span, path: Any, schema: Any, public_rows: Any = False) -> Table:
    """`load(path, schema)` in a dry run: the real load's refusals (on the path and the unit,
    never the rows), then a stand-in of the schema; the file is not read."""
    refuse_private_arguments("load", (path, schema, public_rows), span)
    schema = schema_from_value(schema, span)
    file = _resolve_path(interp, span, path)
    if not isinstance(public_rows, bool):
        raise JostleRuntimeError(f"public_rows must be true or false, got {format_value(public_rows)}", span)
    if public_rows:
        private_files.refuse_registered_private_file(interp, span, file, None, "load(..., public_rows=true)")
    private_files._refuse_curator_file_under_another_unit(interp, span, file)
    private_files.refuse_load_without_budget(interp, span, file)
    name = Path(path).stem
    table = make_private_table(interp, name, stand_in_frame(schema), schema, span, public_rows, strict=public_rows)
    private_files.register_loaded_file(interp, name, schema.names, file, table.unit)  # no store: memory only
    return table


_PLAIN = (type(None), bool, int, float, str, np.generic, np.ndarray)


def _public(value: Any) -> bool:
    """Whether a value of the session's scope is plain public data the dry run may copy."""
    if isinstance(value, _PLAIN):
        return True
    if isinstance(value, tuple):
        return all(_public(item) for item in value)
    if isinstance(value, Record):
        return all(_public(item) for _, item in value.fields)
    return isinstance(value, Table) and not value.private


def skip_reason(session: Any) -> str | None:
    """Why the dry run cannot stand in for this session's scope (None when it can)."""
    interp = session.interpreter
    for name, value in interp.globals.values.items():
        if interp.bound_tables.get(name) is value or isinstance(value, Module) or _public(value):
            continue
        return (f"'{name}' ({type_name(value)}), left by an earlier run of this session, is something a "
                "public stand-in cannot stand for")
    return None


def make_dry_interpreter(session: Any) -> DryRunInterpreter:
    """A fresh interpreter with the session's caps, stand-ins for its private tables and its
    public scope (the module docstring); nothing of it reaches the session."""
    from jostle.language.builtins import REGISTRY
    from jostle.language.databases import database_node, database_of

    real = session.interpreter
    accountant = _dry_accountant(real.accountant)
    dry = DryRunInterpreter(accountant, Randomness(DRY_RUN_SEED), io.StringIO(), list(real.search_path))
    dry.engine_name = "pandas"
    dry.on_warning = lambda warning: None  # kept in dry.warnings, never shown
    dry.builtins.values["load"] = replace(REGISTRY["load"], function=_stand_in_load)
    # the public cell labels of vectors earlier runs released (weak references: a copy of the map)
    dry.vector_labels._by_id = dict(real.vector_labels._by_id)
    databases: dict[int, Any] = {}
    for name, table in real.bound_tables.items():
        key = table.unit.key if table.unit.is_entity and table.unit.key in table.schema else None
        # A table whose row count is public gets a stand-in of that many rows (public: `count` reads
        # it exactly); any other gets the schema's stand-in size.
        rows = _public_row_count(table) if table.unit.is_replace_one and table.public_rows else None
        stand_in = make_private_table(dry, name, stand_in_frame(table.schema, key, rows=rows), table.schema,
                                      BUILTIN_SPAN, table.public_rows, unit=table.unit)
        database = database_of(table.node)
        if database is not None:  # the tables of one database share one node (bind_database)
            if id(database) not in databases:
                databases[id(database)] = database_node(accountant, table.unit, database.database)
            stand_in = replace(stand_in, node=databases[id(database)])
        dry.bound_tables[name] = stand_in
    for name, entry in real.bindings.items():  # pending: the program declares the schema
        dry.bindings[name] = (None, None, *entry[2:])
    for name, value in real.globals.values.items():
        if name in dry.bound_tables and real.bound_tables.get(name) is value:
            dry.globals.define(name, dry.bound_tables[name])
        elif isinstance(value, Module):
            dry.globals.define(name, dry.import_module(value.name, BUILTIN_SPAN))
        else:
            dry.globals.define(name, value)
    return dry


def _public_row_count(table: Any) -> int:
    """The row count of a table whose `count` is public (replace_one with the bound rows: every
    neighbour has as many, jostle.language.tables.count), read as `count` reads it."""
    relation = table.relation
    return int(relation.engine.count(relation) if relation is not None else len(table.frame))


class DryAccountant(Accountant):
    """An accountant without a store that also holds the dry run to what each dataset's lifetime
    budget leaves (`lifetimes`: (its status, what it leaves in the session's measure)), refusing
    as the durable ledger would when the real run commits its charges, in the same words."""

    lifetimes: list[tuple[Any, AnyBudget | None]] = []
    ledger_path: str = ""
    prior_entries: int = 0         # the session's ledger entries before this program
    prior_spent: Any = None        # and what they cost

    def new_charges(self) -> list[Any]:
        """The charges this program made (after the session's earlier ones)."""
        return self.ledger[self.prior_entries:]

    def check(self, budget: AnyBudget, node: Any, span: Span | None = None) -> None:
        from types import SimpleNamespace

        from jostle.privacy.ledger_records import LedgerRefusal
        from jostle.privacy.refusals import lifetime_refusal

        super().check(budget, node, span)
        # What this program has spent so far: the lifetimes' `left` already counts the session's
        # earlier charges, which the tree also holds (`_dry_accountant`).
        prior = dict(self.prior_spent.quantities()) if self.prior_spent is not None else {}
        before = {q: v - prior.get(q, 0) for q, v in self._tree.total.quantities()}
        rise = dict(self._tree.rise(budget, node).quantities())
        entry = SimpleNamespace(budget=budget, span=span, library_span=None)
        for status, left in self.lifetimes:
            if left is None:
                raise lifetime_refusal(LedgerRefusal(status.dataset, "epsilon", Fraction(0), Fraction(0),
                                                     Fraction(0), True, kind="missing"), entry, self.ledger_path)
            totals = dict(status.lifetime.quantities()) if type(status.lifetime) is type(left) else {}
            for quantity, cap in left.quantities():
                if before.get(quantity, 0) + rise.get(quantity, 0) > cap:
                    total = totals.get(quantity, cap)
                    raise lifetime_refusal(LedgerRefusal(status.dataset, quantity, total - cap + before.get(quantity, 0),
                                                         rise.get(quantity, 0), total), entry, self.ledger_path)


def _dry_accountant(real: Accountant) -> DryAccountant:
    """The session's caps without its durable ledger: what its total leaves (or no total yet: the
    program's `budget` sets one), and what each dataset's lifetime budget leaves."""
    accountant = DryAccountant(None if real.total is None else real.total.cap, None, accounting=real.accounting)
    # What the session spent before this program, as the program sees it: `ledger()` lists the same
    # entries and `spent()` and `remaining()` read the same (a program must not be able to tell its
    # dry run from its real run by them). Earlier charges enter as one sequential charge at the
    # root, which is how they compose with anything this program charges on new tables.
    accountant.ledger = list(real.ledger)
    accountant.prior_entries = len(real.ledger)
    accountant.prior_spent = real.spent
    if not real.spent.is_zero():
        accountant._tree.add(real.spent, accountant.root)
    persistent = real.store is not None and real.store.persistent
    accountant.lifetimes = [(status, status.left_in(real.accounting)) for status in real.datasets_status()
                            if status.lifetime is not None or persistent]
    accountant.ledger_path = str(real.store.path) if real.store is not None else ""
    accountant.private_sources = list(real.private_sources)
    return accountant


def dry_run(session: Any, program: A.Program) -> DryRun:
    """Run `program` once on stand-ins (module docstring) and return what it charged.

    Raises:
        JostleError: The program failed on the stand-ins (with a note saying so), or its total
            does not fit what the data's lifetime budgets leave.
    """
    started = time.perf_counter()
    dry = make_dry_interpreter(session)
    try:
        dry.run_program(program)
    except JostleError as error:
        reason = _inconclusive(program, error, dry)
        if reason is not None:
            raise DryRunInconclusive(reason) from error
        if dry.accountant.new_charges():  # the real run would have spent something before this error
            error.notes.append((DRY_RUN_NOTE, None))
        raise
    accountant = dry.accountant
    prior = accountant.prior_spent
    fresh = prior is None or prior.is_zero()  # (a program's `budget` may set the measure after it)
    spent = accountant.spent if fresh else accountant.spent - prior
    cap = accountant.cap if fresh or accountant.cap is None else (accountant.cap - prior).floor_at_zero()
    return DryRun(accountant.new_charges(), spent, cap, time.perf_counter() - started, dry, list(dry.warnings))


class DryRunInconclusive(Exception):
    """The dry run failed where the real run may not: after a spend or on a path that depends on
    released values (whose stand-in values differ from the real ones)."""


def _inconclusive(program: A.Program, error: JostleError, dry: DryRunInterpreter) -> str | None:
    """Why an error of the dry run says nothing about the real run, or None when it does.

    A budget refusal after a gradual release (accuracy-first: it spends what the data need, more
    on a small stand-in), and any error at a place that depends on a released value (a branch
    the stand-in's noisy counts take and the real ones may not) are not the program's own
    mistakes: the real run is left to decide. The decision reads the program and the dry run only.
    """
    from jostle.language.cost_report import _RELEASED_FACTS, Dependence, _gradual

    charges = dry.accountant.new_charges()
    if isinstance(error, BudgetExceeded) and any(_gradual(c) for c in charges):
        return "a gradual release before it spends what the real data need, not what the stand-in needs"
    span = error.span
    if span is None or span.source.name != program.source.name:
        return None
    # `spent()` and `ledger()` read the same in the dry run as in the real run (`_dry_accountant`),
    # so an error under a branch on them is the program's own; `remaining()` also reads the data's
    # lifetime balances, which the dry run does not see.
    facts = tuple(name for name in _RELEASED_FACTS if name not in ("spent", "ledger"))
    dependence = Dependence(program, [c.span for c in charges], dry.builtins.values, facts)
    node = dependence.node_at(span)
    origin = dependence.depends(node) if node is not None else None
    return None if origin is None else f"its error at line {span.line} depends on {origin}"


def before_run(session: Any, program: A.Program) -> DryRun | None:
    """The dry run in front of `Session.run` (when `session.dry_run` is on): skipped, with a
    warning, when the session's scope holds values a stand-in cannot stand for. Its error is
    raised when the real run would have spent something before it, or when it is a budget
    refusal; any other error is left to the real run, which meets it before any charge."""
    if not getattr(session, "dry_run", True):
        return None
    reason = skip_reason(session)
    if reason is not None:
        session.interpreter.warn(JostleWarning(
            f"no dry run before this run: {reason}", program.span,
            "the program runs directly: an error after a release is raised after that release is spent"))
        return None
    try:
        return dry_run(session, program)
    except JostleError as error:
        if isinstance(error, BudgetExceeded) or (DRY_RUN_NOTE, None) in error.notes:
            raise
        # Nothing would be spent before this error: the real run raises it at the same place,
        # after printing what the program prints first (a refusal of the budget is raised now,
        # before any private file is read).
        return None
    except DryRunInconclusive as inconclusive:
        session.interpreter.warn(JostleWarning(
            f"the dry run on public stand-ins failed where the real run may not ({inconclusive}); running the "
            "program on the real data", program.span))
        return None


__all__ = ["DryRun", "DryRunInconclusive", "dry_run", "before_run", "skip_reason", "make_dry_interpreter", "DRY_RUN_SEED",
           "DRY_RUN_NOTE", "HOW_TO_SKIP"]
