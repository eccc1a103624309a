"""`Session`: the object that embeds Jostle in Python (in the spirit of Jinja's Environment).

A session owns one accountant (its total budget), one source of randomness and one global
scope; programs run in it share all three, so budget spent by one run is gone for the next.
Spending also outlives the session: every private table bound in it is registered with the
durable ledger (jostle.privacy.ledger_store) under its curator's name for it (`dataset=`, by
default the table's name; a file a program loads, under its path), and every charge is
committed there before noise is drawn, so a new Session on the same data continues from what
was spent, within the data's lifetime budget (`lifetime=`; `ledger_path=":memory:"` opts
out, for tests and teaching).

    from jostle import Session
    s = Session(budget=1.0)     # this session may spend epsilon 1
    s.bind_private("patients", frame, {"age": ("numeric", 0, 120)}, lifetime=5)
    s.run("with budget 0.5:\\n    n = {{ count(patients) }}")
    s.eval("n")          # a plain Python number
    s.ledger             # every charge, with source line and mechanism
    s.close()            # or use the session as a context manager
"""

from __future__ import annotations

import inspect
import io
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from jostle.privacy.accounting import ACCOUNTING_NAMES, ZCDP, Accounting, zcdp_total
from jostle.privacy.budget import Accountant, AnyBudget, Budget, Charge, DatasetStatus, exact
from jostle.privacy.ledger_text import render_ledger
from jostle.language.builtins import infer_public_schema, make_private_table
from jostle.language.checker import check
from jostle.diagnostics.boundary import short_errors
from jostle.diagnostics.errors import DataError, JostleRuntimeError, JostleWarning, PrivacyError, UsageError
from jostle.language.cost_report import cost_report
from jostle.language.dry_run import before_run
from jostle.language.evaluator import Interpreter
from jostle.privacy.ledger_store import LedgerStore, resolve_ledger_path
from jostle.privacy.noise import Randomness
from jostle.privacy.units import PrivacyUnit, parse_unit
from jostle.language.parser import parse
from jostle.data.schema import (
    Schema, numbers_where_possible, read_csv, read_schema_declaration, schema_file_for,
)
from jostle.diagnostics.source import BUILTIN_SPAN, Span
from jostle.language.values import Private, PrivateMean, Table, format_value, is_private, to_python

if TYPE_CHECKING:
    import pandas as pd


class Ledger(Sequence[Charge]):
    """The charges made so far, oldest first; printable and convertible to a DataFrame."""

    def __init__(self, charges: list[Charge], total: Budget | None, spent: Budget,
                 datasets: Sequence[DatasetStatus] = ()) -> None:
        self._charges = list(charges)
        self.total = total
        self.spent = spent
        self.datasets = list(datasets)

    def __getitem__(self, index):  # type: ignore[override]
        return self._charges[index]

    def __len__(self) -> int:
        return len(self._charges)

    def to_frame(self) -> pd.DataFrame:
        """One row per charge: index, mechanism, epsilon, delta (a pure or approximate release's),
        rho (what a zCDP session charged; empty otherwise), unit, what, data, where."""
        import pandas as pd
        columns = ["index", "mechanism", "epsilon", "delta", "rho", "unit", "what", "data", "where"]
        return pd.DataFrame([c.as_dict() for c in self._charges], columns=columns)

    def __str__(self) -> str:
        return render_ledger(self._charges, self.total, self.spent, self.datasets)


def _schema(schema: Any) -> Schema:
    if isinstance(schema, Schema):
        return schema
    if isinstance(schema, Mapping):
        return Schema.of(schema)
    raise UsageError(f"a schema is a mapping of column names to domains, got {type(schema).__name__}")


def session_total(budget: float | None, delta: float | None, accounting: str | None,
                  rho: float | None) -> tuple[AnyBudget | None, Accounting]:
    """A session's total and accounting from the Python or command-line arguments.

    `budget` alone is pure, `budget, delta` approximate, `budget, delta, accounting="zcdp"` a rho
    cap certified to meet (budget, delta) (jostle.privacy.conversions.rho_for), `rho` a rho cap.

    Raises:
        UsageError: An invalid combination or value (nothing is bound or spent).
    """
    delta = delta or 0.0
    if accounting not in (None, *ACCOUNTING_NAMES):
        raise UsageError(f"unknown accounting {accounting!r}", hint="the accountings are " + ", ".join(ACCOUNTING_NAMES))
    try:
        if rho is not None:
            if budget is not None or delta:
                raise UsageError("give the total either as rho or as budget (and delta), not both")
            if accounting not in (None, "zcdp"):
                raise UsageError(f"rho is a zCDP total; accounting={accounting!r} contradicts it")
            total, how = zcdp_total(None, None, exact(rho, "rho"))
            return total, how
        if budget is None:
            if delta:
                raise UsageError("delta was given without an epsilon budget")
            if accounting == "zcdp":
                raise UsageError("accounting='zcdp' needs a total", hint="give budget=E, delta=D, or rho=R")
            return None, Accounting(ZCDP) if accounting == "zcdp" else Accounting()
        stated = Budget.of(budget, delta)
        if stated.epsilon <= 0:
            raise UsageError("the budget's epsilon must be greater than 0")
        if accounting == "pure" and stated.delta:
            raise UsageError("a pure budget has no delta", hint="drop delta, or use accounting='approximate'")
        if accounting == "zcdp":
            return zcdp_total(stated.epsilon, stated.delta, None)
        return stated, Accounting()
    except JostleRuntimeError as error:
        raise UsageError(f"invalid budget: {error.message}", hint=error.hint) from None


@short_errors  # a JostleError reaches Python short: message, location, hint (jostle.diagnostics.boundary)
class Session:
    """A Jostle session: a budget, a source of randomness and a global scope.

    Args:
        budget: The total epsilon this session may spend (a cap for the session, whatever the
            data's lifetime budget), or None to let the first program's `budget` statement set it.
        delta: The total delta (for Gaussian noise); 0 by default.
        lifetime: The lifetime budget (epsilon, (epsilon, delta), or a rho: RhoZCDPBudget(R) or
            {"rho": R}; the dataset's lifetime is then held in that measure) that data bound or loaded
            in this session takes when the durable ledger does not know it yet and its binding
            declares none; by default this session's `budget` (and `delta`). A dataset's
            lifetime is fixed then; only `jostle ledger lifetime` changes it.
        seed: None (the default) draws noise from the operating system's secure source. An
            integer makes runs reproducible and is UNSAFE for real releases: anyone who knows
            the seed can remove the noise.
        output: Where `print` writes; defaults to sys.stdout.
        search_path: Extra directories for `import`.
        ledger_path: The durable budget ledger: a file path, or ":memory:" for none (nothing
            persists). By default $JOSTLE_LEDGER, else ~/.local/share/jostle/ledger.sqlite.
            Each dataset then has a lifetime budget, and what earlier sessions spent on it is
            no longer available.
        engine: Where private tables' rows live (jostle.language.binding): "auto" (the default:
            small tables in memory, a Parquet file, a CSV beyond 8 MB or a DataFrame beyond
            200,000 rows on DuckDB), "pandas" (memory), "duckdb" (embedded, out of core) or
            "spark" (a Spark session: local, or a cluster with engine_options). The same program
            gives the same answers on each.
        engine_options: Options per engine, e.g. {"duckdb": {"memory_limit": "4GB"}} or
            {"spark": {"master": "spark://host:7077"}} (see jostle.data.engine).
        dry_run: Run each program once on public stand-ins of its private tables before
            anything is charged (jostle.language.dry_run), so that its own mistakes cost nothing;
            None (the default) means on unless the environment sets JOSTLE_DRY_RUN=0.
    """

    def __init__(self, budget: float | None = None, delta: float = 0.0, seed: int | None = None,
                 output: TextIO | None = None, search_path: list[str | Path] | None = None,
                 ledger_path: str | Path | None = None, engine: str = "auto",
                 engine_options: Mapping[str, Mapping[str, Any]] | None = None,
                 lifetime: float | tuple[float, float] | None = None, *,
                 accounting: str | None = None, rho: float | None = None, dry_run: bool | None = None) -> None:
        from jostle.data.engine import ENGINE_NAMES

        if engine not in ENGINE_NAMES:
            raise UsageError(f"unknown engine {engine!r}", hint=f"the engines are {', '.join(ENGINE_NAMES)}")
        total, session_accounting = session_total(budget, delta, accounting, rho)
        stated: AnyBudget | None = total
        if session_accounting.is_zcdp and budget is not None:
            # The curator stated (epsilon, delta): a new dataset's default lifetime is that
            # statement, against which the ledger converts the rho spent (CKS 2020).
            stated = Budget.of(budget, delta)
        default_lifetime = _lifetime(lifetime, "Session(lifetime=...)") if lifetime is not None else stated
        self.store = LedgerStore(resolve_ledger_path(ledger_path))
        self.accountant = Accountant(total, self.store, default_lifetime=default_lifetime,
                                     accounting=session_accounting)
        self.randomness = Randomness(seed)
        self.interpreter = Interpreter(self.accountant, self.randomness, output,
                                       [Path(p) for p in search_path or []])
        self.interpreter.engine_name = engine
        self.dry_run = os.environ.get("JOSTLE_DRY_RUN", "1") != "0" if dry_run is None else dry_run
        self.interpreter.engine_options = {k: dict(v) for k, v in (engine_options or {}).items()}

    def close(self) -> None:
        """Close the durable ledger (everything spent is already committed)."""
        self.store.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------- binding data
    def bind_private(self, name: str, data: pd.DataFrame | str | Path, schema: Any = None,
                     public_rows: bool = False, *, dataset: str | None = None,
                     lifetime: float | tuple[float, float] | None = None,
                     unit: str | PrivacyUnit | dict | None = None) -> None:
        """Bind a private table under `name` (the curator's act: see docs/threat_model.md).

        Everything wrong with the data is raised here, to the curator, before any program
        runs: a CSV file with an unusable record, and, when the schema is given here or by a
        schema file, a value that breaks it (naming the row and the value). When the program
        declares the schema instead (`private NAME: {...}`), rows that break it are dropped and
        the program learns nothing about them.

        Args:
            name: The name programs use for it.
            data: A DataFrame, or the path of a CSV or Parquet file.
            schema: Its public schema (a Schema, or a mapping of column -> domain). If omitted,
                a schema file beside a CSV (data.schema.json) is used; failing that, the program
                must declare it with `private NAME: {...}`. Never inferred from the data.
            public_rows: Declare the number of rows public (e.g. survey respondents): the
                table is then a replace_one table (the same as unit="replace_one"; its other
                releases are computed for two rows changed, see jostle.language.entities); only
                randomized_response needs it. Only the curator can declare it: here, or with
                "public_rows": true in the schema file. A program cannot (for data bound here).
            dataset: The data's name in the durable budget ledger (default: "dataset" in its
                schema file, else `name`). Its balance and lifetime budget belong to this name
                across sessions, whatever rows it holds; bind every version of the same data
                under one name. Data equal to data bound before under another name is charged
                against both (told on the logger `jostle.ledger`).
            lifetime: Its lifetime budget, epsilon, (epsilon, delta) or a rho (RhoZCDPBudget(R) or
                {"rho": R}; held in that measure, and charges in another converted or refused:
                jostle.privacy.ledger_balance): the most that may ever
                be spent on it, across sessions (default: "lifetime" in its schema file, else
                the session's `lifetime`/`budget` when the ledger does not know the data yet).
                A dataset the ledger knows keeps its lifetime: declaring another is refused;
                `jostle ledger lifetime` changes it, logged.
            unit: The privacy unit (jostle.privacy.units): "row" (the default: one row added or
                removed), "entity:KEY" (every row with one value of the column KEY added or
                removed together; row-level aggregates then need t.bound_per_key(k) first) or
                "replace_one" (one row replaced; the row count is public, as public_rows=True
                says). Default: "privacy_unit" in the schema file, else row (replace_one with
                public_rows). A program's `private NAME: {...} per KEY` can only restate it.

        Raises:
            DataError: The data cannot be read or breaks the schema given (details included),
                or an entity key is missing from the schema, has a default, or has missing values.
            UsageError: The lifetime differs from the one the ledger holds for the dataset, or
                the unit is not one Jostle knows or contradicts public_rows.
        """
        import pandas as pd

        from jostle.language import private_files

        _check_name(name)
        bound_unit = _unit(unit, name) if unit is not None else None
        interp = self.interpreter
        path: Path | None = None
        if isinstance(data, (str, Path)):
            path = Path(data)
            rows = private_files.read_private_file(interp, path, by_curator=True, strict=True, table=name)
            if schema_file_for(path).is_file() and (schema is None or dataset is None or lifetime is None):
                declared = read_schema_declaration(schema_file_for(path))
                if schema is None:
                    schema = declared.schema
                    public_rows = public_rows or declared.public_rows
                if bound_unit is None and declared.privacy_unit is not None:
                    bound_unit = _unit(declared.privacy_unit, name, schema_file_for(path))
                dataset = dataset if dataset is not None else declared.dataset
                lifetime = lifetime if lifetime is not None else declared.lifetime
        elif isinstance(data, pd.DataFrame):
            rows = private_files.curator_frame_rows(interp, data)
        else:
            raise UsageError(f"bind_private needs a DataFrame, or the path of a CSV or Parquet file, "
                             f"got {type(data).__name__}")
        declared_lifetime = _lifetime(lifetime, "lifetime") if lifetime is not None else None
        if dataset is not None and (not isinstance(dataset, str) or not dataset.strip()):
            raise UsageError(f"a dataset's name in the ledger must be a non-empty text, got {dataset!r}")
        table = None
        from jostle.language.entities import table_unit

        try:  # public_rows is the unit replace_one: one declaration (a contradiction is refused)
            bound_unit, public_rows = table_unit(bound_unit, public_rows)
        except ValueError as error:
            raise UsageError(f"bind_private('{name}'): {error}",
                             hint="public_rows=True is the unit replace_one; give one or the other") from None
        if schema is not None:
            table = make_private_table(interp, name, rows.cells, _schema(schema), BUILTIN_SPAN, public_rows,
                                       unit=bound_unit)
        elif isinstance(data, pd.DataFrame):
            from jostle.language.entities import check_schemaless_key_cells

            check_schemaless_key_cells(data, bound_unit, name)
        # Fingerprint the raw rows, not the schema (jostle.data.engine.fingerprint; only with a
        # durable ledger); from now on every charge in this session is also recorded against
        # this data, and no program may read the file (or a copy of the rows) as public:
        # private_files.refuse_registered_private_file. The table is bound only once the ledger has
        # accepted it: a binding the ledger refuses (another lifetime, rows equal to another
        # dataset's) leaves nothing a program could release on (issue 21).
        private_files.register_private_rows(interp, name, rows, by_curator=True, dataset=dataset,
                                            lifetime=declared_lifetime, unit=bound_unit)
        if table is None:
            # The path (None for a DataFrame) lets the checker's hint say where a schema can come
            # from; the unit is the curator's, which a program's declaration can only restate.
            interp.bindings[name] = (rows.cells, None, public_rows, path, bound_unit)
        else:
            interp.bound_tables[name] = table
            interp.globals.define(name, table)

    def bind_database(self, tables: Mapping[str, pd.DataFrame | str | Path], key: str,
                      schemas: Mapping[str, Any] | None = None, *, dataset: str | None = None,
                      lifetime: float | tuple[float, float] | None = None) -> None:
        """Bind several private tables about the same entities as one database (the curator's act).

        Every table is bound under the unit entity(key): an entity is every row of every table
        whose `key` is its key value, and neighbouring databases differ by one entity's rows in
        all the tables (jostle.language.databases). Programs join the tables on the key
        (`a.join(b, on=key)`, jostle.language.joins) and bound the rows per entity before
        row-level aggregates (`t.bound_per_key(k)`), or count entities (`count_keys(t)`).

        Args:
            tables: Each table's name for programs -> a DataFrame or a CSV or Parquet file's path.
            key: The column naming the entity, which every table must have.
            schemas: Each table's schema (a Schema or a mapping); a file's may instead come from
                the schema file beside it. Every table needs one here: the key is checked
                against it when the database is bound.
            dataset: The database's one name in the durable ledger (default: the tables' names
                joined by "+"). Its tables are parts of it: one balance, one lifetime budget.
            lifetime: The database's lifetime budget (see bind_private).

        Raises:
            UsageError: No tables, a bad name or key, a table without a schema, a lifetime that
                differs from the ledger's.
            DataError: A table lacks the key column (or its key is unusable), or breaks its schema.
        """
        import dataclasses

        from jostle.language import binding, databases
        from jostle.privacy.budget import UNIDENTIFIED_DATA, PrivateSource

        if not isinstance(tables, Mapping) or not tables:
            raise UsageError("bind_database needs a mapping of table names to data, with at least one table",
                             hint='for example bind_database({"trains": trains, "cars": cars}, key="train_id")')
        for name in tables:
            _check_name(name)
        unit = databases.database_unit(key)
        declared_lifetime = _lifetime(lifetime, "lifetime") if lifetime is not None else None
        if dataset is not None and (not isinstance(dataset, str) or not dataset.strip()):
            raise UsageError(f"a dataset's name in the ledger must be a non-empty text, got {dataset!r}")
        name_in_ledger = dataset or "+".join(tables)
        interp = self.interpreter
        parts = databases.read_parts(interp, tables, schemas, _schema, unit)
        databases.check_key(parts, unit)
        node = databases.database_node(self.accountant, unit, name_in_ledger)
        bound = {}
        for part in parts:  # every table is conformed before anything is registered or bound
            table = make_private_table(interp, part.name, part.rows, part.schema, BUILTIN_SPAN, unit=unit)
            bound[part.name] = dataclasses.replace(table, node=node)
        # One registration: the database is one dataset of the ledger (its digest covers every
        # table), and every table's file is private to programs (refuse_registered_private_file).
        digests = [(part.name, binding.dataset_digest(interp, part.raw, part.name, part.columns)) for part in parts]
        columns = [f"{part.name}.{column}" for part in parts for column in part.columns]
        register = self.accountant.register_dataset
        unit_argument = {"unit": unit} if "unit" in inspect.signature(register).parameters else {}
        register(databases.database_digest(digests, unit), name_in_ledger, columns, name=name_in_ledger,
                 lifetime=declared_lifetime, **unit_argument)
        for part, (_, digest) in zip(parts, digests):
            if part.path is not None and digest != UNIDENTIFIED_DATA:
                self.accountant.private_sources.append(
                    PrivateSource(part.name, digest, frozenset(part.columns), part.path.resolve(), unit))
        for name, table in bound.items():
            interp.bound_tables[name] = table
            interp.globals.define(name, table)

    def bind_public(self, name: str, data: Any, schema: Any = None) -> None:
        """Bind a public value: a DataFrame (a public table) or a plain Python value."""
        import pandas as pd
        _check_name(name)
        if isinstance(data, (str, Path)) and str(data).endswith(".csv"):
            data = numbers_where_possible(read_csv(data))
        if isinstance(data, pd.DataFrame):
            table_schema = _schema(schema) if schema is not None else infer_public_schema(data)
            value: Any = Table(data.reset_index(drop=True), table_schema, False, name,
                               self.accountant.root, BUILTIN_SPAN)
        else:
            value = _from_python(data)
        self.interpreter.globals.define(name, value)

    # ---------------------------------------------------------- running
    def check(self, source: str, filename: str = "<string>") -> pd.DataFrame:
        """Check a program and return its cost report, from a dry run on public stand-ins (no data
        is read, nothing is spent): one row per release (where, mechanism, sensitivity, budget,
        error at 95%, determined); `.attrs["total"]` is the total (or its upper bound when
        `.attrs["determined"]` is false, with `.attrs["depends"]`). jostle.language.cost_report."""
        program = parse(source, filename)
        check(program, self.interpreter.builtins.values, self._known(), self.interpreter.bindings)
        return cost_report(self, program).to_frame()

    def run(self, source: str, filename: str = "<string>") -> None:
        """Run a program in this session (after its dry run on public stand-ins, unless
        `dry_run=False`: jostle.language.dry_run); its top-level names stay defined afterwards."""
        program = parse(source, filename)
        check(program, self.interpreter.builtins.values, self._known(), self.interpreter.bindings)
        before_run(self, program)
        self.interpreter.run_program(program)

    def run_file(self, path: str | Path) -> None:
        """Run a .jst file; imports and relative data paths resolve next to it."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise UsageError(f"cannot read {path}: {error.strerror}") from None
        except UnicodeDecodeError:
            raise UsageError(f"{path} is not UTF-8 text", hint="save the program as UTF-8") from None
        self.run(text, str(path))

    def eval(self, expression: str) -> Any:
        """Evaluate an expression and return it as a plain Python / NumPy / pandas value.

        Numbers, strings, booleans and none come back as Python values, lists as lists, records
        as dicts, public tables as DataFrames. A released histogram (and an estimate of one, such
        as a ChoiceMaker's answer) comes back as a pandas Series indexed by its cells, or a
        DataFrame (rows x columns) for a 2D histogram; other vectors as NumPy arrays.

        Raises:
            PrivacyError: The value is private; release it inside Jostle first.
        """
        program = parse(expression, "<eval>")
        if len(program.body) != 1 or type(program.body[0]).__name__ != "ExprStmt":
            raise UsageError("eval() takes one expression; use run() for statements")
        check(program, self.interpreter.builtins.values, self._known(), self.interpreter.bindings)
        value = self.interpreter.run_program(program)
        if is_private(value):
            span = program.body[0].span
            raise PrivacyError(
                "a private value cannot be returned to Python", span,
                "release it inside Jostle first, e.g. session.eval('laplace(x, 0.1)')",
                [(f"the private value was made by {value.what}", value.origin)]
                if isinstance(value, (Private, PrivateMean)) else [],
            )
        return to_python(value, program.body[0].span, self.interpreter.vector_labels)

    @property
    def warnings(self) -> list[JostleWarning]:
        """Every warning the programs run in this session gave (each also written to stderr)."""
        return list(self.interpreter.warnings)

    def _known(self) -> set[str]:
        return set(self.interpreter.globals.values)

    # ---------------------------------------------------------- the budget
    @property
    def ledger(self) -> Ledger:
        """This session's charges, its total and what it spent, and each dataset's lifetime and balance."""
        # Each dataset's lifetime line only with a durable ledger: in memory it would repeat
        # this session's figures (nothing persists).
        return Ledger(self.accountant.ledger, self.accountant.cap, self.accountant.spent,
                      self.accountant.datasets_status() if self.store.persistent else [])

    @property
    def spent(self) -> Budget:
        """What this session's releases cost (earlier sessions are in `datasets`)."""
        return self.accountant.spent

    session_spent = spent

    @property
    def datasets(self) -> list[DatasetStatus]:
        """Each dataset bound in the session: its name in the ledger, lifetime budget and balance
        (what every session spent on it, this one included)."""
        return self.accountant.datasets_status()

    @property
    def remaining(self) -> Budget | None:
        """The most the next release may spend (None if no total is set yet): what this
        session's total leaves, lowered to what each dataset's lifetime budget leaves."""
        return self.accountant.remaining

    @property
    def cap(self) -> AnyBudget | None:
        """This session's total (None until one is set)."""
        return self.accountant.cap

    def charge_fit(self, amount: Budget, description: str) -> None:
        """Charge an estimator's fit to this session, checked against every limit first: what
        `PrivacyBudget(account=session)` calls (jostle.privacy.shared_budget.BudgetAccount)."""
        self.accountant.charge_fit(amount, description)

    def score(self, model: Any, table: str, target: str, *, epsilon: float | None = None,
              rho: float | None = None) -> float:
        """A noisy accuracy of a model on a PRIVATE table of this session, charged to it.

        `model` is the name of a model the session's programs trained (any classifier family):
        this is the program `private_accuracy(model, table, "target", epsilon=E)` (docs/language.md,
        "Private evaluation"), so a part of `split(t, ...)` composes in parallel with the fit on
        another part. Or a fitted scikit-learn estimator of any family (`jostle.estimators`): its
        predictions on the table's rows (columns by the estimator's feature names), released by
        `jostle.learnerkit.evaluation.private_accuracy` through `PrivacyBudget(account=session)`
        (charged to the session's data as a whole; a row table of stability 1 only).

        Raises:
            BudgetExceeded / BudgetExceededError: The budget refuses; nothing is drawn or spent.
        """
        _check_name(table)
        if (epsilon is None) == (rho is None):
            raise UsageError("score() takes epsilon= or rho= (one of them)")
        if isinstance(model, str):
            _check_name(model)
            amount = f"epsilon={float(epsilon)!r}" if epsilon is not None else f"rho={float(rho)!r}"  # type: ignore[arg-type]
            return self.eval(f"private_accuracy({model}, {table}, {_jostle_text(target)}, {amount})")
        return self._score_estimator(model, table, target, epsilon, rho)

    def _score_estimator(self, estimator: Any, table: str, target: str, epsilon: float | None,
                         rho: float | None) -> float:
        from jostle.learnerkit.evaluation import private_accuracy_of_table
        from jostle.privacy.shared_budget import PrivacyBudget

        value = self.interpreter.globals.lookup(table)
        if rho is not None or not isinstance(value, Table) or not value.private or not value.unit.is_row \
                or value.stability != 1:
            raise UsageError(f"score() of an estimator takes epsilon= and a private row table of stability 1; "
                             f"'{table}' is {format_value(value)}")
        return private_accuracy_of_table(estimator, value.frame, target, epsilon, PrivacyBudget(account=self),
                                         self.randomness)

    def describe(self, name: str) -> str:
        """What is public about a global: its value if public, else its description."""
        value = self.interpreter.globals.lookup(name)
        return format_value(value)


def _lifetime(value: Any, what: str) -> AnyBudget:
    """A lifetime budget, validated: epsilon, (epsilon, delta), a Budget, or a rho (a
    RhoZCDPBudget, {"rho": R} from a schema file or `--lifetime rho:R`). The dataset's lifetime is
    held in the measure given (jostle.privacy.ledger_balance)."""
    from jostle.privacy.measures import RhoZCDPBudget

    try:
        if isinstance(value, RhoZCDPBudget) or (isinstance(value, Mapping) and set(value) == {"rho"}):
            rho = RhoZCDPBudget.of(value.rho if isinstance(value, RhoZCDPBudget) else value["rho"])
            if rho.rho <= 0:
                raise UsageError(f"{what} needs a rho greater than 0")
            return rho
        if isinstance(value, Budget):
            value = (value.epsilon, value.delta)
        epsilon, delta = (value if isinstance(value, (tuple, list)) and len(value) == 2 else (value, 0))
        budget = Budget.of(epsilon, delta)
    except UsageError:
        raise
    except Exception as error:  # JostleRuntimeError from validation
        raise UsageError(f"invalid {what}: {error}") from None
    if budget.epsilon <= 0:
        raise UsageError(f"{what} needs an epsilon greater than 0")
    return budget


def _unit(value: Any, table: str, schema_file: Path | None = None) -> PrivacyUnit:
    """The privacy unit a curator gives for `table` (jostle.privacy.units.parse_unit).

    Raises:
        UsageError: Not a unit Jostle knows (given in Python or on the command line).
        DataError: The same, in a schema file (its "privacy_unit").
    """
    try:
        return parse_unit(value)
    except ValueError as error:
        if schema_file is not None:
            raise DataError(f"schema file {schema_file}: \"privacy_unit\": {error}",
                            hint='write "row", "replace_one" or {"entity": "KEY"}') from None
        raise UsageError(f"the privacy unit of '{table}': {error}",
                         hint='write "row", "entity:KEY" (e.g. "entity:patient_id") or "replace_one"') from None


def _check_name(name: str) -> None:
    from jostle.language.parser import KEYWORDS

    if not isinstance(name, str) or not name.isidentifier() or name in KEYWORDS:
        raise UsageError(f"{name!r} is not a valid Jostle name")


def _jostle_text(text: str) -> str:
    """A Python string as a Jostle string literal."""
    if not isinstance(text, str):
        raise UsageError(f"a column is named by a string, got {type(text).__name__}")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _from_python(value: Any) -> Any:
    from jostle.language.values import Record

    if isinstance(value, Mapping):
        return Record.of({str(k): _from_python(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_from_python(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


__all__ = ["Session", "Ledger", "render_ledger", "io", "DataError", "Span"]
