"""A neighbour-differential fuzzer of Jostle's privacy boundary (issue 11).

The program's author is the adversary: whatever a program observes before its first charged
release must be the same on neighbouring private tables (one row added or removed). This
module generates random Jostle programs, runs each twice with the same seed on a random pair
of neighbouring private tables, each time in a fresh `Session` with an in-memory ledger, and
compares what the program could see.

The oracle (the *pre-release rule*) is slightly stronger than the zero-spend rule of the issue:
  * the text the program printed before its first charge, and
  * the first event of the run, which is either that first charge (mechanism, epsilon, delta,
    what was released and where) or the end of the run (its exit code and rendered error),
must be identical on both neighbours. If neither run charges anything, the first event is the
end of the run, so this is exactly the zero-spend rule (output, error message and exit code
identical); if both charge, only what came before the first release is compared (after a
release, outputs may legitimately differ). A run that charges on one neighbour and not on the
other breaks the rule too: the ledger is observable. Any exception that is not a JostleError
is reported as a failure whatever was spent (it is a bug, and exit code 70 is observable).
After each run, every global the program defined is taken back with `Session.eval`, as a Python
user would (tests/privacy/fuzz_returned.py, issue 21): nothing reachable from it may be a live
part of the session (its randomness, accountant, ledger store, interpreter or private data), and
the values bound before the first charge (all of them if nothing was charged) must be the same
on both neighbours.

The generator composes programs from the language's constructs: row functions (lambdas and
defs with local statements, conditional expressions, arithmetic, comparisons, `in` lists,
closures capturing columns, built-ins applied to columns), nested table operations on public
and private tables inside row functions, table operations (where, derive, select, bin,
partition, groupby, aggregates), public lists and records, errors (division by zero, type
mismatches, `10 ** 400`, `**` between categorical codes, out-of-range indexes), releases
(`{{ }}` under budget blocks, laplace, geometric, gaussian, exponential, report_noisy_max,
above_threshold, randomized_response, with valid and invalid arguments), `load` and
`load_public` of files (including the private table's own CSV), `private` declarations,
options, metafeatures and ChoiceMakers (trained on a tiny public corpus, or on priors only),
some of whose bodies read private globals, and the DP ILP learner (fuzz_ilp.py, its own test). The shapes of the reproducers of holes 1, 2, 5 and 7
are templates whose holes are filled at random, mixed with freely composed statements.

Each private table is random: numeric columns (some integer, some with negative bounds),
categorical columns of text, of numeric codes or of both; 0 to a few dozen rows. Its neighbour
has one row added or removed at a random position. Public tables are random too, some exactly
as long as one of the private neighbours, and now and then a public file holding exactly one
neighbour's rows (an adversary's guess of the data); in some cases the private table is written
to a CSV file beside the program and bound by that path (the file the program may try to
reopen).

The engine route (issue 14): `fuzz(..., engine=LARGE)` (or engine="duckdb") runs each case a
second time with the private tables on DuckDB. There the neighbours must obey the same rule,
and each neighbour's whole run (everything printed, released values included, how it ended and
the ledger) must equal its run in memory with the same seed (`route_violation`): under `auto`
the route follows the curator's data size, which a program must not learn. Such cases also
draw the `engine` family (chained derives, where, bin, partition and aggregates, with row
functions the engine cannot compile, some in defs that print) and crafted rows (`crafted`:
cells no schema allows, bound under a schema the program declares).

`fuzz(seconds, seed)` runs until the time is up and returns the first violation, minimised
(the fewest statements, rows and columns that still show it) and rendered with both tables by
`Finding.report()`. `run_cli` runs a case (made by `cli_case`) through `jostle.cli.main`
instead, and `cli_violation` applies the zero-spend rule to what the command printed.

The tiny ChoiceMaker corpus: programs name it `corpus`; it is four public 1D shapes trained
on an 8-cell domain, one scale, one epsilon and one repetition (`tiny_grid()`), in a fresh cache
folder for every run, so both neighbours train from scratch and training takes well under a
second.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import signal
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jostle import Session
from jostle.diagnostics.errors import JostleError
from tests.privacy.fuzz_returned import Returned, ReturnedWatch, returned_statements, returned_violation
from tests.privacy.fuzz_ledger import history_for, ledger_statements, lifetime_for, prepare_ledger
from tests.privacy.fuzz_csv import csv_statements, draw_dialect
from tests.privacy.fuzz_ilp import ilp_statements
from tests.privacy.fuzz_redescription import redescription_statements

# ---------------------------------------------------------------- configuration
DEFAULT_SECONDS = 30.0  # CI time (.ci/run under 20 minutes on 2 cores); JOSTLE_FUZZ_THOROUGH runs longer
THOROUGH_SECONDS = 600.0
RUN_TIMEOUT = 10.0          # seconds one program may run before it is abandoned (not a finding)
MINIMISE_SECONDS = 30.0     # time spent shrinking a finding
HISTOGRAM_CELLS = 8         # the domain size of the tiny ChoiceMaker corpus and of the programs' histograms
PRIVATE_FILE = "priv.csv"
OTHER_FILE = "other.csv"
GUESS_RATE = 0.06           # how often a public file holds one neighbour's private rows exactly


def fuzz_seconds(default: float = DEFAULT_SECONDS) -> float:
    """How long to fuzz: $JOSTLE_FUZZ_THOROUGH as seconds (1, true or yes: THOROUGH_SECONDS),
    else `default`."""
    setting = os.environ.get("JOSTLE_FUZZ_THOROUGH", "").strip().lower()
    if not setting or setting in ("0", "false", "no"):
        return default
    if setting in ("1", "true", "yes"):
        return THOROUGH_SECONDS
    try:
        return max(float(setting), default)
    except ValueError:
        return THOROUGH_SECONDS


# ---------------------------------------------------------------- schemas and data
@dataclass(frozen=True)
class Column:
    """A column of a generated table and its public domain.

    kind is "num" (numeric), "text" (categorical of strings), "code" (categorical of numbers)
    or "mixed" (categorical of numbers and strings).
    """

    name: str
    kind: str
    lo: float = 0.0
    hi: float = 0.0
    integer: bool = False
    values: tuple = ()

    @property
    def numeric(self) -> bool:
        return self.kind == "num"

    def jostle(self) -> str:
        """The domain as Jostle source."""
        if self.numeric:
            extra = ", integer=true" if self.integer else ""
            return f"numeric({_lit(self.lo)}, {_lit(self.hi)}{extra})"
        return f"categorical([{', '.join(_lit(v) for v in self.values)}])"

    def python(self) -> dict[str, Any]:
        """The domain as a schema-file entry."""
        if self.numeric:
            entry: dict[str, Any] = {"type": "numeric", "bounds": [self.lo, self.hi]}
            if self.integer:
                entry["integer"] = True
            return entry
        return {"type": "categorical", "values": list(self.values)}

    def draw(self, rng: random.Random) -> Any:
        """A value of the column (numeric values sometimes outside the bounds: they are clamped)."""
        if not self.numeric:
            return rng.choice(self.values)
        roll = rng.random()
        if roll < 0.15:
            return rng.choice([self.lo, self.hi, 0 if self.lo <= 0 <= self.hi else self.lo])
        if roll < 0.2:
            return rng.choice([self.lo - 5, self.hi + 5])
        value = rng.uniform(self.lo, self.hi)
        return int(round(value)) if self.integer or rng.random() < 0.5 else round(value, 3)


@dataclass(frozen=True)
class TableSpec:
    """A generated table: its name, columns and rows."""

    name: str
    columns: tuple[Column, ...]
    rows: tuple[tuple, ...]

    def frame(self) -> pd.DataFrame:
        try:
            return pd.DataFrame(list(self.rows), columns=[c.name for c in self.columns])
        except Exception:  # noqa: BLE001 - a crafted cell whose methods raise as pandas infers a type
            return pd.DataFrame({c.name: pd.Series([row[i] for row in self.rows], dtype=object)  # (fuzz_cells.py)
                                 for i, c in enumerate(self.columns)})

    def schema(self) -> dict[str, Any]:
        return {c.name: c.python() for c in self.columns}

    def schema_source(self) -> str:
        return "{" + ", ".join(f"{c.name}: {c.jostle()}" for c in self.columns) + "}"

    def text(self) -> str:
        """The table as CSV text (for reports)."""
        try:
            return self.frame().to_csv(index=False).strip() or "(no columns)"
        except Exception:  # noqa: BLE001 - a crafted cell that cannot print itself (fuzz_cells.py)
            from tests.privacy.fuzz_cells import table_text

            return table_text(self)


def _lit(value: Any) -> str:
    """A Python value as Jostle source."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value)) + ".0"
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_lit(v) for v in value) + "]"
    return str(value)


COLUMN_NAMES = ["a", "b", "c", "d", "age", "name", "x", "y", "score", "grp"]
TEXT_DOMAINS = [("a", "b"), ("a", "b", "c"), ("x",), ("yes", "no"), ("F", "M", "X", "Y"), ("lo", "hi", "mid")]
CODE_DOMAINS = [(0, 2), (1, -1), (0, 1, 10), (-3, 5), (0,), (2, 3), (0, 1), (400, 2), (-1, 0, 1)]
MIXED_DOMAINS = [(1, "a"), (0, "x", 2), ("1", 2)]
BOUNDS = [(0, 100), (0, 1), (-5, 5), (1, 10), (-100, 0), (0, 1e6), (0, 10), (2, 3), (0, 0)]


def random_column(rng: random.Random, name: str, kinds: tuple[str, ...] = ("num", "text", "code", "mixed"),
                  weights: tuple[float, ...] = (45, 30, 20, 5)) -> Column:
    kind = rng.choices(kinds, weights=weights)[0]
    if kind == "num":
        lo, hi = rng.choice(BOUNDS)
        return Column(name, "num", float(lo), float(hi), integer=rng.random() < 0.4)
    domain = {"text": TEXT_DOMAINS, "code": CODE_DOMAINS, "mixed": MIXED_DOMAINS}[kind]
    return Column(name, kind, values=rng.choice(domain))


def random_columns(rng: random.Random, count: int, names: list[str] | None = None) -> tuple[Column, ...]:
    chosen = rng.sample(names or COLUMN_NAMES, count)
    return tuple(random_column(rng, name) for name in chosen)


def random_rows(rng: random.Random, columns: tuple[Column, ...], count: int) -> tuple[tuple, ...]:
    return tuple(tuple(c.draw(rng) for c in columns) for _ in range(count))


# ---------------------------------------------------------------- cases
@dataclass(frozen=True)
class PublicTable:
    """A public table of a case and how the session gets it."""

    table: TableSpec
    how: str  # "bind" (bind_public, schema inferred), "bind_schema", "csv" (a file the program loads)


@dataclass(frozen=True)
class Case:
    """One generated program and the neighbouring data it runs on.

    The first neighbour's private rows are `base` with `extra` inserted at `position` when
    `extra_first` is true; the second neighbour's the same with the roles swapped, so exactly
    one of them has the extra row.
    """

    chunks: tuple[str, ...]
    private: TableSpec          # name, columns, and the shared rows (`base`)
    extra: tuple
    position: int
    extra_first: bool
    bind: str                   # "frame", "path", "declared" (bound without a schema), "declared_path",
                                # "declared_parquet" (fuzz_cells.py)
    other: TableSpec | None     # a second private table, the same on both neighbours
    publics: tuple[PublicTable, ...]
    values: tuple[tuple[str, Any], ...]  # public Python values bound with bind_public
    seed: int
    budget: float | None
    choicemaker: bool
    history: str | None = None  # a curator's earlier session on a durable ledger (fuzz_ledger.py)
    csv: Any = None             # the dialect of the curator's CSV file, bound by path (fuzz_csv.py)
    cells: Any = None           # the Parquet layout of rows with exotic cells (fuzz_cells.py)

    @property
    def source(self) -> str:
        return "\n".join(self.chunks) + "\n"

    def neighbour(self, which: int) -> TableSpec:
        """The private table of neighbour 0 or 1."""
        rows = list(self.private.rows)
        if (which == 0) == self.extra_first:
            rows.insert(min(self.position, len(rows)), self.extra)
        return replace(self.private, rows=tuple(rows))


# ---------------------------------------------------------------- the program generator
@dataclass
class Scope:
    """What a row-level expression may use: the row variable and its table's columns, the
    enclosing row function's row (for nested table operations) and names bound in a def."""

    var: str
    columns: tuple[Column, ...]
    outer: Scope | None = None
    locals: dict[str, str] = field(default_factory=dict)  # name -> "num" | "bool" | "text"


NUM_LITERALS = [0, 1, 2, 3, -1, 0.5, 10, 100, 7, 1e6, 1e300, 1e-12, 2.5]
COMPARISONS = ["<", "<=", ">", ">=", "==", "!="]


class Generator:
    """Random Jostle programs over a case's tables (see the module docstring)."""

    def __init__(self, rng: random.Random, private: TableSpec, other: TableSpec | None,
                 publics: tuple[PublicTable, ...], values: dict[str, Any], has_budget: bool) -> None:
        self.rng = rng
        self.private = private
        self.other = other
        self.publics = publics
        self.values = values
        self.has_budget = has_budget
        # How often constructs that must be refused appear in freely composed code: 0 in a
        # "clean" case (its programs mostly run to the end, so later statements are reached),
        # 1 in a "wild" one. The families aimed at the holes use them regardless.
        self.wild = 1.0 if rng.random() < 0.5 else 0.0
        self.counter = 0
        # Tables the program has made: name -> (columns, private?)
        self.tables: dict[str, tuple[tuple[Column, ...], bool]] = {private.name: (private.columns, True)}
        if other is not None:
            self.tables[other.name] = (other.columns, True)
        for public in publics:
            self.tables[public.table.name] = (public.table.columns, False)
        self.lists = {k: v for k, v in values.items() if isinstance(v, list)}
        self.scalars = {k: v for k, v in values.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}

    # ------------------------------------------------------------ helpers
    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def pick(self, options: list[Any], weights: list[float] | None = None) -> Any:
        return self.rng.choices(options, weights=weights)[0] if weights else self.rng.choice(options)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def table_names(self, private: bool | None = None) -> list[str]:
        return [n for n, (_, p) in self.tables.items() if private is None or p == private]

    def columns_of(self, name: str, kinds: tuple[str, ...] | None = None) -> list[Column]:
        return [c for c in self.tables[name][0] if kinds is None or c.kind in kinds]

    def some_table(self, private: bool | None = True) -> str:
        names = self.table_names(private)
        if not names:
            names = self.table_names()
        if private and self.private.name in names and self.chance(0.5):
            return self.private.name
        return self.pick(names)

    def column_name(self, table: str, kinds: tuple[str, ...] | None = None) -> str:
        columns = self.columns_of(table, kinds)
        if not columns:
            return self.pick(self.columns_of(table) or [Column("nosuch", "num")]).name \
                if self.chance(0.7) else "nosuch"
        return self.pick(columns).name

    def number(self) -> str:
        if self.scalars and self.chance(0.2):
            return self.pick(sorted(self.scalars) + ["cfg.lim"])
        return _lit(self.pick(NUM_LITERALS))

    def text_literal(self, scope: Scope | None = None) -> str:
        pool = ["a", "b", "x", "yes", "F", "", "zz"]
        if scope is not None:
            for column in scope.columns:
                if column.kind in ("text", "mixed"):
                    pool += [v for v in column.values if isinstance(v, str)]
        return _lit(self.pick(pool))

    def public_list(self) -> str:
        if self.lists and self.chance(0.6):
            return self.pick(sorted(self.lists))
        return _lit(self.pick([[1, 2, 3], ["a", "b"], [0], [], [true_ for true_ in (True, False)], [1, "a"]]))

    # ------------------------------------------------------------ row-level expressions
    def col(self, scope: Scope, kinds: tuple[str, ...]) -> str | None:
        columns = [c for c in scope.columns if c.kind in kinds]
        if not columns:
            return None
        column = self.pick(columns).name
        return f'{scope.var}["{column}"]' if self.chance(0.08) else f"{scope.var}.{column}"

    def num(self, scope: Scope, depth: int) -> str:
        if depth <= 0 or self.chance(0.3):
            return self.num_leaf(scope)
        kind = self.pick(["bin", "neg", "fn", "if", "helper", "foreign", "outer"],
                         [45, 4, 12, 9, 3, 8 * self.wild, 6 if scope.outer else 0])
        if kind == "bin":
            op = self.pick(["+", "-", "*", "/", "//", "%", "**"], [20, 15, 15, 10, 5, 5, 6])
            return f"({self.num(scope, depth - 1)} {op} {self.num(scope, depth - 1)})"
        if kind == "neg":
            return f"-({self.num(scope, depth - 1)})"
        if kind == "fn":
            fn = self.pick(["abs", "sqrt", "log", "exp", "round"])
            return f"{fn}({self.num(scope, depth - 1)})"
        if kind == "if":
            return self.ternary(self.num(scope, depth - 1), self.boolean(scope, depth - 1), self.num(scope, depth - 1))
        if kind == "helper":
            return f"twice({self.num(scope, depth - 1)})"
        if kind == "outer" and scope.outer is not None:
            return self.num(scope.outer, depth - 1)
        return self.foreign(scope, depth - 1, "num")

    def num_leaf(self, scope: Scope) -> str:
        roll = self.rng.random()
        locals_ = [n for n, t in scope.locals.items() if t == "num"]
        if locals_ and roll < 0.15:
            return self.pick(locals_)
        if roll < 0.6:
            column = self.col(scope, ("num", "code") if self.chance(1 - 0.1 * self.wild) else ("mixed", "text"))
            if column:
                return column
        if scope.outer is not None and roll < 0.7:
            column = self.col(scope.outer, ("num", "code"))
            if column:
                return column
        return self.number()

    def boolean(self, scope: Scope, depth: int) -> str:
        if depth <= 0 or self.chance(0.25):
            return self.bool_leaf(scope)
        kind = self.pick(["cmp", "not", "and", "or", "if", "foreign", "listif", "outer"],
                         [40, 6, 12, 10, 5, 6 * self.wild, 3 * self.wild, 6 if scope.outer else 0])
        if kind == "cmp":
            return self.bool_leaf(scope, depth)
        if kind == "not":
            return f"not ({self.boolean(scope, depth - 1)})"
        if kind in ("and", "or"):
            return f"({self.boolean(scope, depth - 1)} {kind} {self.boolean(scope, depth - 1)})"
        if kind == "if":
            return self.ternary(self.boolean(scope, depth - 1), self.boolean(scope, depth - 1),
                                self.boolean(scope, depth - 1))
        if kind == "listif":  # hole 1: a public list as one branch of a row-wise conditional
            return f"(true if {self.boolean(scope, depth - 1)} else {self.public_list()})"
        if kind == "outer" and scope.outer is not None:
            return self.boolean(scope.outer, depth - 1)
        return self.foreign(scope, depth - 1, "bool")

    def bool_leaf(self, scope: Scope, depth: int = 1) -> str:
        locals_ = [n for n, t in scope.locals.items() if t == "bool"]
        if locals_ and self.chance(0.15):
            return self.pick(locals_)
        roll = self.rng.random()
        text_column = self.col(scope, ("text", "mixed"))
        if text_column and roll < 0.35:
            form = self.pick(["eq", "in", "notin", "ne", "lt"], [30, 25, 10, 10, 5])
            if form == "eq":
                return f"{text_column} == {self.text_literal(scope)}"
            if form == "ne":
                return f"{text_column} != {self.text_literal(scope)}"
            if form == "lt":
                return f"{text_column} < {self.text_literal(scope)}"
            items = [self.text_literal(scope) for _ in range(self.rng.randint(0, 3))]
            if self.chance(0.2):
                return f"{text_column} {'in' if form == 'in' else 'not in'} {self.public_list()}"
            return f"{text_column} {'in' if form == 'in' else 'not in'} [{', '.join(items)}]"
        if roll < 0.42:
            return self.pick(["true", "false"])
        code_column = self.col(scope, ("code",))
        if code_column and roll < 0.55:
            return f"{code_column} in [{', '.join(_lit(v) for v in self.rng.sample([0, 1, 2, -1, 10, 5], 2))}]"
        return f"{self.num(scope, depth - 1)} {self.pick(COMPARISONS)} {self.num(scope, depth - 1)}"

    def condition(self, scope: Scope) -> str:
        """A valid row condition that splits the rows: a column against a value of its domain."""
        column = self.pick(list(scope.columns))
        if column.numeric:
            middle = self.rng.uniform(column.lo, column.hi)
            return f"r.{column.name} {self.pick(['<', '>', '<=', '>='])} {_lit(round(middle, 2))}"
        return f"r.{column.name} == {_lit(self.pick(column.values))}"

    @staticmethod
    def ternary(then: str, condition: str, orelse: str) -> str:
        return f"({then} if {condition} else {orelse})"

    def text(self, scope: Scope, depth: int) -> str:
        if depth > 0 and self.chance(0.3):
            return self.ternary(self.text(scope, depth - 1), self.boolean(scope, depth - 1), self.text(scope, depth - 1))
        return self.col(scope, ("text", "mixed")) or self.text_literal(scope)

    def foreign(self, scope: Scope, depth: int, want: str) -> str:
        """Something that is not a column of the row: other tables, public lists, built-ins on
        columns, private aggregates. Most of these must be refused, and whether they are must
        not depend on the rows."""
        column = self.col(scope, ("num", "code")) or self.col(scope, ("text", "mixed")) or "1"
        bare = column.split(".")[-1].split('"')[1] if '"' in column else column.split(".")[-1]
        publics = self.table_names(False)
        privates = self.table_names(True)
        kind = self.pick(["nested_count", "nested_sum", "nested_rows", "list", "list_index", "builtin",
                          "private_agg", "public_agg", "row"], [14, 8, 5, 8, 4, 12, 5, 5, 4])
        inner_table = self.pick(publics) if publics and (kind != "private_agg") else self.pick(privates)
        if kind in ("nested_count", "nested_sum", "nested_rows"):
            if self.chance(0.25):
                inner_table = self.pick(privates)
            inner = Scope("s", self.tables[inner_table][0], outer=scope)
            if kind == "nested_count":
                value = f"count({inner_table}.where(lambda s: {self.boolean(inner, depth)}))"
            elif kind == "nested_sum":
                value = (f'sum({inner_table}.derive("w", lambda s: {self.num(inner, depth)}, numeric(-1000, 1000)), '
                         f'"w")')
            else:
                value = f"len(rows({inner_table}.where(lambda s: {self.boolean(inner, depth)})))"
            return value if want == "num" else f"{value} > {self.number()}"
        if kind == "list":
            return self.public_list()
        if kind == "list_index":
            value = f"{self.public_list()}[0]"
            return value if want == "num" else f"{value} == 1"
        if kind == "builtin":
            fn = self.pick(["sum", "len", "min", "max", "mean", "float", "int", "str", "sorted", "zeros", "range",
                            "reversed", "keys", "histogram", "count", "round", "abs", "bounds", "domain"])
            argument = self.pick([column, scope.var])
            if fn == "histogram":
                value = f'histogram({scope.var}, "{bare}")'
            elif fn in ("bounds", "domain"):
                value = f'{fn}({scope.var}, "{bare}")'
            elif fn == "round":
                value = f"round({argument}, {self.pick(['1', '400', '-1'])})"
            else:
                value = f"{fn}({argument})"
            if fn in ("sorted", "reversed", "keys", "histogram", "range", "str", "bounds", "domain"):
                value = f"len({value})"
            return value if want == "num" else f"{value} > {self.number()}"
        if kind == "private_agg":
            agg = self.pick([f"count({self.pick(privates)})", f"count({scope.var})"])
            return agg if want == "num" else f"{column} > {agg}"
        if kind == "public_agg":
            value = f"count({inner_table})" if publics else f"len({self.public_list()})"
            return value if want == "num" else f"{column} < {value}"
        # the row itself
        value = self.pick([f"len({scope.var})", f"{scope.var}.nosuch", f"{scope.var}[{self.number()}]",
                           f'("{bare}" in {scope.var})', f"{column}[0]"])
        return value if want == "num" else f"{value} == 1"

    # ------------------------------------------------------------ row functions
    def row_function(self, table: str, want: str, chunks: list[str]) -> str:
        """A row function over `table` giving `want` ("bool", "num" or "text") per row: a lambda,
        a def (appended to `chunks`), or a closure made by a def."""
        scope = Scope("r", self.tables[table][0])
        style = self.pick(["lambda", "def", "closure"], [55, 35, 10])
        if style == "lambda":
            return f"lambda r: {self.expression(scope, want, 3)}"
        if style == "closure":
            name = self.fresh("make")
            parameter = self.pick(["th", "k2"])
            inner = Scope("r", scope.columns, locals={parameter: "num"})
            chunks.append(f"def {name}({parameter}):\n    return lambda r: {self.expression(inner, want, 2)}")
            return f"{name}({self.number()})"
        name = self.fresh("f")
        lines = [f"def {name}(r):"]
        for _ in range(self.rng.randint(0, 3)):
            lines += ["    " + line for line in self.row_statement(scope)]
        lines.append(f"    return {self.expression(scope, want, 3)}")
        chunks.append("\n".join(lines))
        return name

    def expression(self, scope: Scope, want: str, depth: int) -> str:
        if want == "bool":
            return self.boolean(scope, depth)
        if want == "num":
            return self.num(scope, depth)
        return self.text(scope, depth)

    def row_statement(self, scope: Scope) -> list[str]:
        """One statement of a def row function: locals, public branches, prints, nested
        operations on other tables that see this row (hole 1), closures over columns."""
        kind = self.pick(["local", "bool_local", "if", "print", "nested", "closure"], [25, 10, 10, 10, 20, 10])
        if kind == "local":
            name = self.fresh("v")
            line = f"{name} = {self.num(scope, 2)}"
            scope.locals[name] = "num"
            return [line]
        if kind == "bool_local":
            name = self.fresh("q")
            line = f"{name} = {self.boolean(scope, 2)}"
            scope.locals[name] = "bool"
            return [line]
        if kind == "if":
            condition = self.pick(["true", "false", f"{self.number()} > 1", "len(flags) == 2",
                                   self.boolean(scope, 1)], [10, 10, 20, 10, 10])
            name = self.fresh("v")
            scope.locals[name] = "num"
            return [f"{name} = {self.number()}", f"if {condition}:", f"    {name} = {self.num(scope, 1)}"]
        if kind == "print":
            return [f"print({self.public_expression()})"]
        if kind == "closure":
            name = self.fresh("g")
            body = self.num(scope, 1)
            scope.locals[f"{name}(1)"] = "num"
            return [f"{name} = lambda z: {body} + z"]
        # nested: a public (or private) table operation whose row function sees this row
        publics = self.table_names(False)
        target = self.pick(publics) if publics and self.chance(0.85) else self.pick(self.table_names(True))
        inner = Scope("s", self.tables[target][0], outer=scope)
        name = self.fresh("p")
        if self.chance(0.5):
            column = self.pick(["age", "w", "z"])
            make = f'{name} = {target}.derive("{column}", lambda s: {self.num(inner, 2)}, numeric(-1000, 1000))'
            observe = self.pick([f"print(map(lambda o: o.{column}, rows({name})))", f"print(sum({name}, \"{column}\"))",
                                 f"print(rows({name}))", f"print(count({name}))", f"print({name})", "pass"])
        else:
            make = f"{name} = {target}.where(lambda s: {self.boolean(inner, 2)})"
            observe = self.pick([f"print(count({name}))", f"print(rows({name}))", f"print(len({name}))",
                                 f"print({name})", "pass"])
        return [make, observe]

    def public_expression(self) -> str:
        options = ["k", "len(flags)", '"here"', "cfg.lim", f"count({self.pick(self.table_names(False) or ['ids'])})"]
        return self.pick(options)

    # ------------------------------------------------------------ statements
    def domain(self) -> str:
        roll = self.rng.random()
        if roll < 0.55:
            lo, hi = self.pick([(0, 100), (-1000, 1000), (0, 1), (0, 10)])
            integer = ", integer=true" if self.chance(0.3) else ""
            return f"numeric({lo}, {hi}{integer})"
        if roll < 0.9:
            values = self.pick([["a", "b"], ["lo", "hi"], [0, 1], ["x"]])
            return f"categorical({_lit(values)}, default={_lit(values[0])})"
        return self.pick(['categorical(["a", "b"])', '"num"', "numeric(5, 1)" if self.chance(0.3) else "numeric(1, 5)"])

    def where_or_derive(self, chunks: list[str]) -> str:
        table = self.some_table(True if self.chance(0.85) else None)
        name = self.fresh("u")
        if self.chance(0.55):
            function = self.row_function(table, "bool", chunks)
            chunks.append(f"{name} = {table}.where({function})")
            self.tables[name] = (self.tables[table][0], self.tables[table][1])
        else:
            domain = self.domain()
            want = "text" if "categorical" in domain and self.chance(0.6) else "num"
            if "categorical" in domain and self.chance(0.3):
                want = "bool"
            function = self.row_function(table, want, chunks)
            column = self.pick(["z", "zz"] + [c.name for c in self.tables[table][0]][:1])
            chunks.append(f'{name} = {table}.derive("{column}", {function}, {domain})')
            kind = "num" if domain.startswith("numeric") else "text"
            columns = tuple(c for c in self.tables[table][0] if c.name != column) + (
                Column(column, kind, 0.0, 100.0, values=("a", "b")),)
            self.tables[name] = (columns, self.tables[table][1])
        if self.chance(0.6):
            chunks.append(self.observe(name))
        return name

    def observe(self, table: str) -> str:
        private = self.tables[table][1]
        categorical = self.columns_of(table, ("text", "code", "mixed"))
        numeric = self.columns_of(table, ("num",))
        options = [f"print({table}.columns)", f"print({table}.name)"]
        if not private or self.chance(0.3 * self.wild):  # refused on a private table
            options += [f"print(count({table}))", f"print(len({table}))", f"print({table})"]
        if categorical:
            column = self.pick(categorical).name
            options += [f'print(histogram({table}, "{column}").labels)', f'print(domain({table}, "{column}"))',
                        f'print(len(histogram({table}, "{column}")))']
        if numeric:
            options.append(f'print(bounds({table}, "{numeric[0].name}"))')
        if private:
            options += [self.release_of(self.aggregate(table))] * 3
        else:
            options += [f"print(rows({table}))", f'print(mean({table}, "{self.column_name(table)}"))']
        return self.pick(options)

    def aggregate(self, table: str) -> str:
        categorical = self.columns_of(table, ("text", "code", "mixed"))
        numeric = self.columns_of(table, ("num",))
        options = [f"count({table})", f"count({table}) * 2 + 1", f"{table}.count()"]
        if numeric:
            column = self.pick(numeric).name
            options += [f'sum({table}, "{column}")', f'mean({table}, "{column}")', f'sum({table}, "{column}") / 10']
        if categorical:
            options.append(f'histogram({table}, "{self.pick(categorical).name}")')
        return self.pick(options)

    def release_of(self, value: str) -> str:
        epsilon = self.pick(["0.5", "1", "0.1", "0", "-1", '"a"', "1e400", "100"], [30, 20, 20, 5, 3, 3, 2, 3])
        form = self.pick(["block", "laplace", "geometric", "gaussian", "bare", "noisy_max"], [35, 25, 10, 5, 5, 5])
        if form == "block":
            return f"with budget {self.pick(['0.5', '1', '0.25', '5'])}:\n    print({{{{ {value} }}}} > -1e9)"
        if form == "bare":
            return f"print({{{{ {value} }}}})"
        if form == "laplace":
            return f"print(laplace({value}, {epsilon}) != 0.123)"
        if form == "geometric":
            return f"print(geometric({value}, {epsilon}) != 0.123)"
        if form == "gaussian":
            return f"print(gaussian({value}, {epsilon}, 0.00001) != 0.123)"
        return f"print(report_noisy_max([{value}, {self.number()}], {epsilon}))"

    # ------------------------------------------------------------ families of statements
    def family_compose(self, chunks: list[str]) -> None:
        """Freely composed table operations and row functions."""
        for _ in range(self.rng.randint(1, 3)):
            self.where_or_derive(chunks)

    def family_hole1(self, chunks: list[str]) -> None:
        """The shapes of hole 1: row functions that reach other tables or public lists."""
        private = self.some_table(True)
        columns = self.tables[private][0]
        numeric = [c.name for c in columns if c.kind in ("num", "code")] or [columns[0].name]
        column = self.pick(numeric)
        publics = self.table_names(False)
        target = self.pick(publics) if publics else "ids"
        form = self.pick(["spy", "list", "listif", "count", "derive_list", "closure"])
        name = self.fresh("u")
        if form == "spy":
            spy = self.fresh("spy")
            new = self.pick(["age", "leak", "w"])
            observe = self.pick([f"print(map(lambda q: q.{new}, rows(pub_)))", "print(rows(pub_))",
                                 f'print(sum(pub_, "{new}"))', "print(count(pub_))"])
            chunks.append(f"def {spy}(r):\n"
                          f'    pub_ = {target}.derive("{new}", lambda s: r.{column}, numeric(-1e6, 1e6))\n'
                          f"    {observe}\n"
                          f"    return {self.pick([f'r.{column} > 0', 'true'])}")
            chunks.append(f"{name} = {private}.where({spy})")
        elif form == "list":
            values = self.pick(sorted(self.lists)) if self.lists else "[1, 2, 3]"
            chunks.append(f'{name} = {private}.derive("z", lambda r: {values}, numeric(0, 100))')
        elif form == "listif":
            chunks.append(f"{name} = {private}.where(lambda r: true if r.{column} > {self.number()} else "
                          f"{self.public_list()})")
        elif form == "count":
            inner = self.pick(["s", "q"])
            other_column = self.column_name(target, ("num", "code"))
            chunks.append(f"{name} = {private}.where(lambda r: count({target}.where(lambda {inner}: "
                          f"{inner}.{other_column} {self.pick(COMPARISONS)} r.{column})) > {self.number()})")
        elif form == "derive_list":
            chunks.append(f'{name} = {private}.derive("z", lambda r: r.{column} + {self.public_list()}, '
                          f"numeric(0, 100))")
        else:
            chunks.append(f"def {name}_(r):\n    g = lambda s: r.{column}\n"
                          f'    print(count({target}.where(lambda s: g(s) > {self.number()})))\n    return true')
            chunks.append(f"{name} = {private}.where({name}_)")
        self.tables[name] = (columns, True)
        if self.chance(0.4):
            chunks.append(self.observe(name))

    def family_hole5(self, chunks: list[str]) -> None:
        """The shapes of hole 5: operations that fail for some rows only."""
        table = self.some_table(True)
        columns = self.tables[table][0]
        if self.chance(0.6):
            # Two categorical columns made from the rows, whose domains fail only off the diagonal
            # (0 ** -1; 1 + "b"): whether a row holds the failing pair depends on the data.
            (p_values, q_values, op) = self.pick([((0, 2), (1, -1), "**"), ((0, 1), (2, -1), "**"),
                                                  ((-1, 0, 1), (1, 2, -3), "**"), ((1, "a"), (2, "b"), "+"),
                                                  ((0, 3), (1, -2), "**")])
            scope = Scope("r", columns)
            name = self.fresh("u")
            chunks.append(f'{name} = {table}.derive("p", lambda r: {_lit(p_values[0])} if {self.condition(scope)} '
                          f'else {_lit(p_values[1])}, categorical({_lit(list(p_values))}, default={_lit(p_values[0])}))'
                          f'.derive("q", lambda r: {_lit(q_values[-1])} if {self.condition(scope)} else '
                          f'{_lit(q_values[0])}, categorical({_lit(list(q_values))}, default={_lit(q_values[0])}))')
            codes_ = (Column("p", "code", values=p_values), Column("q", "code", values=q_values))
            self.tables[name] = (tuple(c for c in columns if c.name not in ("p", "q")) + codes_, True)
            test = self.pick([f"r.p {op} r.q > {self.number()}", f"(r.p {op} r.q) == 1", f"r.q {op} r.p != 0"])
            result = self.fresh("u")
            if self.chance(0.6):
                chunks.append(f"{result} = {name}.where(lambda r: {test})")
            else:
                chunks.append(f'{result} = {name}.derive("z", lambda r: r.p {op} r.q, {self.domain()})')
            self.tables[result] = self.tables[name]
            if self.chance(0.5):
                chunks.append(self.observe(result))
            return
        codes = [c.name for c in columns if c.kind == "code"]
        numbers = [c.name for c in columns if c.kind == "num"]
        anything = [c.name for c in columns]
        a = self.pick(codes or numbers or anything)
        b = self.pick(codes or numbers or anything)
        op = self.pick(["**", "//", "%", "/"], [50, 15, 15, 20])
        form = self.pick(["pair", "power", "exp", "pow_if", "log"], [45, 25, 10, 10, 10])
        if form == "pair":
            body = f"r.{a} {op} r.{b}"
        elif form == "power":
            body = self.pick([f"r.{a} ** 400", f"10 ** r.{a}", f"r.{a} ** {self.pick(['-1', '0.5', '1000'])}",
                              f"{self.pick(['-8', '2', '0'])} ** r.{a}"])
        elif form == "exp":
            body = f"exp(r.{a} * {self.pick(['1000', '1e6', '-1000'])})"
        elif form == "pow_if":
            body = f"(10 ** 400 if r.{a} > {self.number()} else 1)"
        else:
            body = f"{self.pick(['log', 'sqrt'])}(r.{a} - {self.number()})"
        name = self.fresh("u")
        if self.chance(0.5):
            chunks.append(f"{name} = {table}.where(lambda r: {body} > {self.number()})")
        else:
            chunks.append(f'{name} = {table}.derive("z", lambda r: {body}, {self.domain()})')
        self.tables[name] = (columns, True)
        if self.chance(0.5):
            chunks.append(self.observe(name))

    def family_hole7(self, chunks: list[str]) -> None:
        """The shapes of hole 7: the program reopens files, the private one among them."""
        path = self.pick([f'"{PRIVATE_FILE}"', f'"./{PRIVATE_FILE}"', "priv_path", f'"sub/../{PRIVATE_FILE}"',
                          f'"{OTHER_FILE}"', '"pub0.csv"', '"guess.csv"'], [35, 10, 15, 5, 10, 25, 5])
        name = self.fresh("x")
        schema = self.private.schema_source()
        form = self.pick(["public", "public_schema", "load_rows", "load"], [45, 20, 20, 15])
        if form == "public":
            chunks.append(f"{name} = load_public({path})")
        elif form == "public_schema":
            chunks.append(f"{name} = load_public({path}, {schema})")
        elif form == "load_rows":
            chunks.append(f"{name} = load({path}, {schema}, public_rows=true)")
        else:
            chunks.append(f"{name} = load({path}, {schema})")
        columns = self.private.columns
        private = form in ("load_rows", "load")
        self.tables[name] = (columns, private)
        observe = [f"print({name})", f"print(count({name}))", f"print(rows({name}))", f"print(len({name}))",
                   f'print(len(randomized_response({name}, "{columns[0].name}", 1)))',
                   f'print(mean({name}, "{columns[0].name}"))', f'print(len(filter(lambda q: true, rows({name}))))']
        chunks.append(self.pick(observe))

    def family_choicemaker(self, chunks: list[str]) -> None:
        """Options, metafeatures and a ChoiceMaker; some of their bodies read private globals (hole 2)."""
        numeric = [c for c in self.private.columns if c.numeric]
        table = self.private.name
        if numeric:
            column = self.pick(numeric)
            step = (column.hi - column.lo) / HISTOGRAM_CELLS if column.hi > column.lo else 1.0
            edges = [column.lo + step * i for i in range(HISTOGRAM_CELLS + 1)]
            chunks.append(f'hb = {table}.bin("{column.name}", {_lit([round(e, 6) for e in edges])})\n'
                          f'h = histogram(hb, "{column.name}")')
        else:
            chunks.append(f"h = histogram({table}, \"{self.private.columns[0].name}\")")
        cells = HISTOGRAM_CELLS

        def leak() -> list[str]:
            if not self.chance(0.6):
                return []
            value = self.pick(["count(t)", "count(t) * 3", "histogram(t, \"%s\")[0]" % self.private.columns[0].name
                               if not self.private.columns[0].numeric else "count(t)", "n_private"])
            form = self.pick(["index", "branch", "range", "where", "print", "plain"], [30, 20, 10, 15, 10, 15])
            if form == "index":
                return [f"m_ = {{{{ {value} }}}}", "z_ = [0, 1][m_]"]
            if form == "branch":
                return [f"m_ = {{{{ {value} }}}}", f"if m_ > {self.rng.randint(0, 12)}:", "    z_ = 1 / 0"]
            if form == "range":
                return [f"m_ = {{{{ {value} }}}}", "z_ = range(m_)"]
            if form == "where":
                column_ = self.private.columns[0]
                return [f"z_ = t.where(lambda r: {self.boolean(Scope('r', self.private.columns), 2)})",
                        "m_ = {{ count(z_) }}"] if column_ else []
            if form == "print":
                return [f"print({{{{ {value} }}}})"]
            return [f"m_ = {value}"]

        chunks.append("n_private = count(t)")
        answer_flat = "\n".join(["        " + line for line in leak()])
        answer_cells = "\n".join(["        " + line for line in leak()])
        chunks.append("option Flat(db, queries):\n    answer:\n"
                      + (answer_flat + "\n" if answer_flat else "")
                      + f"        n = {{{{ sum(db) }}}}\n        return map(lambda i: n / {cells}, range({cells}))\n"
                      "    predict(F):\n        return F.mf\n")
        chunks.append("option Cells(db, queries):\n    answer:\n"
                      + (answer_cells + "\n" if answer_cells else "")
                      + "        return {{ db }}\n    predict(F):\n        return 1 - F.mf\n")
        mf_leak = "\n".join(["    " + line for line in leak()])
        chunks.append("def mf(db):\n" + (mf_leak + "\n" if mf_leak else "")
                      + f"    return {{{{ zeros(db) }}}} / {cells}")
        options = self.pick(["Flat, Cells", "Flat, Identity", "Cells, Uniform", "Flat, Cells, Identity"])
        features = self.pick(["mf", "mf, domain_size", "mf, sparsity", "domain_size, mf"])
        corpus = self.pick(["corpus", "none"], [60, 40])
        chunks.append(f"choicemaker H among {{{options}}} informed by {{{features}}} trained on {corpus}")
        # epsilon 0.004: the histogram family raises the metafeature share there (its floor)
        call = self.pick(["H(h, all_ranges(%d))" % cells, "H(h, prefixes(%d))" % cells,
                          "Flat(h, all_ranges(%d), epsilon=0.5)" % cells, "H(h, all_ranges(%d), epsilon=0.5)" % cells,
                          "H(h, prefixes(%d), epsilon=0.004)" % cells])
        chunks.append(f"with budget 1:\n    e = {call}\nprint(len(e))")
        chunks.append(self.pick(["print(trace(H)[0].choice)", "print(explain(H))", "print(len(trace(H)))", "pass"]))

    def family_partition(self, chunks: list[str]) -> None:
        table = self.some_table(True)
        categorical = self.columns_of(table, ("text", "code", "mixed"))
        numeric = self.columns_of(table, ("num",))
        form = self.pick(["loop", "release", "bin", "groupby", "bad"], [25, 25, 25, 15, 10])
        if form == "bin" and numeric:
            column = self.pick(numeric)
            edges = self.pick([[column.lo, (column.lo + column.hi) / 2, column.hi + 1], [0, 1, 2], [5, 1], [0]])
            name = self.fresh("b")
            chunks.append(f'{name} = {table}.bin("{column.name}", {_lit(edges)})\n'
                          f'print(histogram({name}, "{column.name}").labels)')
            return
        key = self.pick(categorical).name if categorical else self.column_name(table)
        if form == "groupby" and len(categorical) >= 2:
            chunks.append(f'for part in {table}.groupby("{categorical[0].name}", "{categorical[1].name}"):\n'
                          "    print(part.key, part.name)")
            return
        if form == "release":
            chunks.append(f"with budget {self.pick(['0.5', '1'])}:\n"
                          f'    for part in {table}.partition("{key}"):\n'
                          f"        print(part.key, {{{{ count(part) }}}} > -1e9)")
            return
        if form == "bad":
            chunks.append(self.pick([f'parts = {table}.partition("nosuch")', f"parts = {table}.partition([])",
                                     f'parts = {table}.partition("{self.column_name(table, ("num",))}")']))
            return
        shown = "part.key, part.name, part" if self.chance(0.2 * self.wild) else "part.key, part.name"
        chunks.append(f'for part in {table}.partition("{key}"):\n    print({shown})')

    def family_release(self, chunks: list[str]) -> None:
        table = self.some_table(True)
        categorical = self.columns_of(table, ("text", "code", "mixed"))
        form = self.pick(["plain", "exponential", "noisy_max", "above", "nan", "mean", "list", "stats",
                          "gaussian", "randomized", "histogram_options"])
        if form == "stats":
            numeric = self.columns_of(table, ("num",))
            column = numeric[0].name if numeric else "nosuch"
            call = self.pick([f"stats.private_count({table}, 0.5)", f'stats.private_sum({table}, "{column}", 0.5)',
                              f'stats.private_mean({table}, "{column}", 0.5)',
                              f'stats.private_median({table}, "{column}", 0.5)',
                              f'stats.private_quantile({table}, "{column}", 0.9, 0.5)',
                              f'stats.private_variance({table}, "{column}", 0.5)'])
            chunks.append(f"import stats\nprint({call} != 0.123)")
        elif form == "gaussian":
            chunks.append(f"with budget 1, {self.pick(['0.001', '0'])}:\n"
                          f"    print(gaussian({self.aggregate(table)}, 0.5, 0.0001) != 0.123)")
        elif form == "randomized":
            column = self.pick(categorical).name if categorical else "nosuch"
            chunks.append(f'print(len(randomized_response({table}, "{column}", 1)))')
        elif form == "histogram_options":
            self.histogram_options(table, chunks)
        elif form == "plain":
            chunks.append(self.release_of(self.aggregate(table)))
        elif form == "exponential":
            column = self.pick(categorical).name if categorical else "nosuch"
            values = self.pick(categorical).values if categorical else ("a", "b")
            utility = self.pick([f"count({table}.where(lambda r: r.{column} == c))", "1 if c == 1 else 0",
                                 'float("nan")', f"count({table})"])
            chunks.append(f"print(exponential({_lit(list(values))}, lambda c: {utility}, "
                          f"{self.pick(['1', '0.5', '0'])}, {self.pick(['1', '0.5'])}))")
        elif form == "noisy_max":
            scores = self.pick([f'histogram({table}, "{self.pick(categorical).name}")' if categorical
                                else f"[count({table})]", f"[count({table}), 3]", '[1, float("nan")]',
                                f'[count({table}), float("nan")]', "[]"])
            chunks.append(f"print(report_noisy_max({scores}, {self.pick(['1', '0.5'])}))")
        elif form == "above":
            chunks.append(f"print(above_threshold([count({table}), count({table}) * 2], {self.number()}, 1))")
        elif form == "nan":
            chunks.append(f'print(laplace(float("nan"), 1), exponential([1, 2], lambda c: float("nan"), 1, 1))')
        elif form == "mean":
            numeric = self.columns_of(table, ("num",))
            column = numeric[0].name if numeric else "nosuch"
            chunks.append(f'print(laplace(mean({table}, "{column}"), 1) > -1e9)')
        else:
            chunks.append(f"with budget 2:\n    print({{{{ [count({table}), count({table}) + 1] }}}})")

    def histogram_options(self, table: str, chunks: list[str]) -> None:
        """Built-in options and metafeatures called directly on (transformed) private histograms:
        their checks come before the charge and must not depend on the rows."""
        categorical = self.columns_of(table, ("text", "code", "mixed"))
        if not categorical:
            chunks.append(f'print(size(histogram({table}, "nosuch"), epsilon=0.1))')
            return
        first = self.pick(categorical)
        if len(categorical) >= 2 and self.chance(0.3):
            second = self.pick([c for c in categorical if c.name != first.name])
            h = f'histogram({table}, "{first.name}", "{second.name}")'
            workload = f"random_rectangles({len(first.values)}, {len(second.values)}, 5)"
            option = self.pick(["QuadTree", "UGrid", "AGrid", "Identity", "DAWA"])
        else:
            h = f'histogram({table}, "{first.name}")'
            workload = self.pick([f"all_ranges({len(first.values)})", f"prefixes({len(first.values)})",
                                  "all_ranges(3)", f"random_ranges({len(first.values)}, 4)"])
            option = self.pick(["Identity", "Uniform", "HB", "Privelet", "MWEM", "DAWA", "DAWA10", "AHP"])
        h = self.pick([h, h, f"{h} * 2", f"{h} / 2", f"{h} * 1e-12", f"{h} + 1", f"{h}[0]"])
        metafeature = self.pick(["size", "sparsity", "uniformity", "roughness", "entropy", "domain_size",
                                 "profile_size", "profile_signal", "profile_peaks", "profile_max_share",
                                 "profile_empty_share", "profile_records_per_cell", "zeros"])
        call = self.pick([f"{option}({h}, {workload}, epsilon={self.pick(['0.5', '1', '0'])})",
                          f"{metafeature}({h}, epsilon=0.1)" if metafeature != "zeros" else f"{{{{ zeros({h}) }}}}"])
        chunks.append(f"with budget 1:\n    print(len([{call}]))")

    def family_misplaced(self, chunks: list[str]) -> None:
        """A private value where a built-in wants a public one: the error quotes the argument
        (a bad size, column, delta, index, ...), and must show only its public description."""
        table = self.some_table(True)
        categorical = self.columns_of(table, ("text", "code", "mixed"))
        numeric = self.columns_of(table, ("num",))
        values = [f"count({table})", f"{{a: count({table})}}", f"[count({table})]"]
        if categorical:
            values.append(f'histogram({table}, "{categorical[0].name}")')
        if numeric:
            values += [f'sum({table}, "{numeric[0].name}")', f'mean({table}, "{numeric[0].name}")']
        form = self.pick(list(MISPLACED.values()))
        chunks.append(f"print({form.replace('%s', self.pick(values)).replace('TABLE', table)})")

    def family_private_probe(self, chunks: list[str]) -> None:
        """Public-only and private-aware built-ins applied to private values: refused or public,
        never depending on the rows."""
        table = self.some_table(True)
        categorical = self.columns_of(table, ("text", "code", "mixed"))
        numeric = self.columns_of(table, ("num",))
        values = [table, f"count({table})", f"{table}.columns", f"{table}.name", f"{{a: count({table})}}",
                  f"[count({table}), 1]"]
        if categorical:
            values += [f'histogram({table}, "{categorical[0].name}")']
        if numeric:
            values += [f'sum({table}, "{numeric[0].name}")', f'mean({table}, "{numeric[0].name}")']
        value = self.pick(values)
        fn = self.pick(["print", "len", "str", "sum", "abs", "sorted", "zeros", "keys", "int", "float", "min", "max",
                        "round", "sqrt", "map(lambda q: q, %s)", "filter(lambda q: true, %s)", "%s[0]", "%s.labels",
                        "rows", "enumerate", "zip(%s, [1, 2])", "%s + [0, 0]", "-%s", "%s == %s", "%s * %s",
                        "describe", *MISPLACED.values()])
        if self.chance(0.25):
            chunks.append(self.pick([f"for q in {table}:\n    print(1)", f"if {value}:\n    print(1)",
                                     f"while {value}:\n    break", f"print([{value}] == [1])",
                                     f"print({value} in [1, 2])", f"print({table}.nosuch)", f'print({table}["a"])',
                                     f"print(1 if {value} else 2)", f"print({value} and true)",
                                     f"x_ = {{{{ {value} }}}}\nprint(1)", f"print(len(map(lambda q: 1, {value})))"]))
            return
        if fn == "describe":
            chunks.append(f"x_ = {value}\nprint(x_ if false else 1)")
        elif "%s" in fn:
            chunks.append(f"print({fn.replace('%s', value)})")
        else:
            chunks.append(f"print({fn}({value}))")

    def family_trees(self, chunks: list[str]) -> None:
        """Tree learners on the categorical columns: checks before the charge must not depend on the rows."""
        table = self.some_table(True)
        categorical = [c.name for c in self.columns_of(table, ("text", "code", "mixed"))]
        numeric = [c.name for c in self.columns_of(table, ("num",))]
        learner = self.pick(["OneRule", "Majority", "FriedmanSchuster", "BinaryTree", "Mohammed", "Mohammed6",
                             "RandomTrees10", "BinaryTree2", "MohammedLeafHeavy", "FriedmanSchusterLeanStop"])
        if categorical and self.chance(0.8):
            label = self.pick(categorical)
            data = f"select({table}, {_lit(categorical)})" if self.chance(0.7) else table
        else:
            label = self.pick(numeric or ["nosuch"])
            data = table
        chunks.append(f'm_ = {learner}({data}, "{label}", epsilon={self.pick(["1", "0.5", "0", "100"])})\n'
                      f"print(m_)")

    def family_brl(self, chunks: list[str]) -> None:
        """Rule lists (issue 15) on the categorical columns: checks before the charge must not
        depend on the rows; the printed list comes after the charge."""
        table = self.some_table(True)
        categorical = [c.name for c in self.columns_of(table, ("text", "code", "mixed"))]
        learner = self.pick(["BayesianRuleList", "BayesianRuleList", "BRLSchema", "BRLMinedItems", "BRLMined",
                             "BRLMinedEven", "BRLMinedTriples", "BRLMinedRare", "BRLMinedCommon", "BRLMinedLong",
                             "BRLMinedPairs", "BRLSchemaMajority", "BRLSchemaGreedy", "BRLSchemaGreedyFive",
                             "BRLSchemaOneRule"])
        label = self.pick(categorical) if categorical and self.chance(0.8) else self.pick(
            [c.name for c in self.columns_of(table, ("num",))] or ["nosuch"])
        data = f"select({table}, {_lit(categorical)})" if categorical and self.chance(0.9) else table
        extra = self.pick(["", "", ", max_rows=40", ', antecedents="public"', ", max_length=1", ", max_rows=0",
                           ", min_support=0.5"]) if learner == "BayesianRuleList" else ""
        epsilon = self.pick(["1", "0.5", "1", "0", "100"])
        chunks.append(f'r_ = {learner}({data}, "{label}", epsilon={epsilon}{extra})\n'
                      "print(r_)\nprint(rule_list_length(r_), average_antecedent_length(r_))")

    def family_engine(self, chunks: list[str]) -> None:
        """The steps a table on an engine runs in SQL, chained, with row functions the engine
        cannot compile mixed in (a text repeated or joined to a number, a conditional giving a
        text or a number, a whole number beyond 2^53, a categorical column of several types):
        those run in memory on the engine's rows. Numeric and categorical derives, where, bin,
        partition and every aggregate, released; the values must match memory exactly."""
        table = self.some_table(True)
        columns = self.tables[table][0]
        scope = Scope("r", columns)
        numbers = [c.name for c in columns if c.kind in ("num", "code")]
        texts = [c.name for c in columns if c.kind in ("text", "mixed")]
        loose = [f"r.{self.pick(numbers)} + 9007199254740993" if numbers else "9007199254740993 - 1",
                 f"(r.{self.pick(numbers)} if {self.boolean(scope, 1)} else \"far\")" if numbers else "1"]
        if texts:
            loose += [f"r.{self.pick(texts)} * 2", f"(1 if r.{self.pick(texts)} == \"a\" else \"b\")",
                      f"r.{self.pick(texts)} + \"!\""]
        mixed = [c.name for c in columns if c.kind == "mixed"]
        if mixed:
            loose.append(f"(r.{self.pick(mixed)} if {self.boolean(scope, 1)} else 2)")
        compiled = [self.num(scope, 2) for _ in range(2)]
        steps, name = [], self.fresh("e")
        current = table
        for _ in range(self.rng.randint(2, 4)):
            form = self.pick(["num", "cat", "where", "loose_cat", "loose_num"], [25, 20, 20, 20, 15])
            new = self.fresh("e")
            function = f"lambda r: {self.pick(loose)}"
            if form.startswith("loose") and self.chance(0.4):  # a def that prints: it must print once
                function = self.fresh("lf")
                steps.append(f"def {function}(r):\n    print(\"{function}\", {self.public_expression()})\n"
                             f"    return {self.pick(loose)}")
            if form == "num":
                domain = self.pick(["numeric(-100, 100)", "numeric(0, 10, integer=true)", "numeric(-1e6, 1e6)"])
                steps.append(f'{new} = {current}.derive("n{new}", lambda r: {self.pick(compiled)}, {domain})')
            elif form == "cat":
                steps.append(f'{new} = {current}.derive("c{new}", lambda r: "hi" if {self.boolean(scope, 2)} else '
                             f'"lo", categorical(["hi", "lo"], default="lo"))')
            elif form == "where":
                steps.append(f"{new} = {current}.where(lambda r: {self.boolean(scope, 2)})")
            elif form == "loose_cat":
                steps.append(f'{new} = {current}.derive("c{new}", {function}, '
                             f'categorical(["aa", "b", 1, "far", "a!", "x!"], default="b"))')
            else:
                steps.append(f'{new} = {current}.derive("n{new}", {function}, numeric(-10, 10))')
            current = new
        chunks.append("\n".join(steps))
        categorical = [c.name for c in columns if not c.numeric]
        numeric = [c for c in columns if c.numeric]
        releases = [f"count({current})"]
        if numeric:
            column = self.pick(numeric)
            edges = _lit([column.lo - 1, (column.lo + column.hi) / 2, column.hi + 1])
            chunks.append(f'{name} = {current}.bin("{column.name}", {edges}, name="band")')
            releases += [f'sum({current}, "{column.name}")', f'mean({current}, "{column.name}")',
                         f'histogram({name}, "band")']
        if categorical:
            releases.append(f'histogram({current}, "{self.pick(categorical)}")')
        body = [f"    print({{{{ {release} }}}})" for release in self.rng.sample(releases, min(3, len(releases)))]
        if categorical and self.chance(0.6):
            body += [f'    for part in {current}.partition("{self.pick(categorical)}"):',
                     f"        print(part.key, {{{{ count(part) }}}})"]
        chunks.append(f"with budget {self.pick(['1', '2'])}:\n" + "\n".join(body))

    def family_ledger(self, chunks: list[str]) -> None:
        """Guesses of the private rows loaded against a ledger a curator has charged (issue 21,
        hole 1; tests/privacy/fuzz_ledger.py): the budget views must not depend on the guess."""
        chunks.extend(ledger_statements(self))

    def family_resources(self, chunks: list[str]) -> None:
        """Row values that would exhaust memory: texts repeated by counts, whole powers, doubled
        texts over large domains (issue 21, hole 2; tests/privacy/fuzz_resources.py)."""
        from tests.privacy.fuzz_resources import resource_statements  # it imports this module

        resource_statements(self, chunks)

    def family_csv(self, chunks: list[str]) -> None:
        """Releases that show the rows read from the curator's CSV file, which the case writes
        in a random dialect (issue 21, hole 3; tests/privacy/fuzz_csv.py)."""
        csv_statements(self, chunks)

    def family_cells(self, chunks: list[str]) -> None:
        """Releases of a private table whose rows hold exotic cells (arrays, dicts, NumPy scalars,
        objects whose methods raise), bound as a DataFrame or a Parquet file of nested types
        under the program's schema, and of that file loaded (issue 21, hole 4; fuzz_cells.py)."""
        from tests.privacy.fuzz_cells import cells_statements  # it imports this module

        cells_statements(self, chunks)

    def family_returned(self, chunks: list[str]) -> None:
        """Values a Python user takes back with Session.eval (issue 21, hole 5), of every kind
        (tests/privacy/fuzz_returned.py); every case's globals are taken back and checked."""
        chunks.extend(returned_statements(self))

    def family_ilp(self, chunks: list[str]) -> None:
        """The DP ILP learner (issue 24) on any tables, declarations valid and not
        (tests/privacy/fuzz_ilp.py): refused alike before any charge on the row-unit private
        tables, the non-private learner on public ones."""
        chunks.extend(ilp_statements(self))

    def family_redescription(self, chunks: list[str]) -> None:
        """DP redescription mining (issue 25) on any two tables, declarations valid and not
        (tests/privacy/fuzz_redescription.py): refused alike before any charge on the row-unit
        private tables, the miner for free on public ones."""
        chunks.extend(redescription_statements(self))

    def family_sulq(self, chunks: list[str]) -> None:
        """The SuLQ learners, `sulq(x, R)` and the calibrations (issue 26; tests/privacy/fuzz_sulq.py)."""
        from tests.privacy.fuzz_sulq import sulq_statements

        chunks.extend(sulq_statements(self))

    def family_perturbation(self, chunks: list[str]) -> None:
        """Randomisation operators, their analysis and `randomise` (issue 26; tests/privacy/fuzz_perturbation.py)."""
        from tests.privacy.fuzz_perturbation import perturbation_statements

        chunks.extend(perturbation_statements(self))

    def family_evaluation(self, chunks: list[str]) -> None:
        """Private evaluation (issue 28; tests/privacy/fuzz_evaluation.py): models in row functions,
        split and the evaluation releases, on any tables, arguments valid and not."""
        from tests.privacy.fuzz_evaluation import evaluation_statements

        chunks.extend(evaluation_statements(self))

    def family_public(self, chunks: list[str]) -> None:
        """Ordinary public computation, errors included."""
        chunks.append(self.pick([
            "print(1 / 0)", "x_ = 10 ** 400", "print([1, 2][5])", 'print("a" + 1)', "print(cfg.nosuch)",
            "print(k * 2, len(flags), cfg)", "print(map(lambda q: q * 2, [1, 2, 3]))", "print(sum(flags))",
            "print(2.0 ** 2000)", "print(twice(k))", 'print(int("x"))', "print(sorted([3, 1, 2]))",
        ]))


# Built-ins that want a public argument where %s goes (TABLE: the private table): their errors
# quote the bad argument, so a private value there must print as its description only.
MISPLACED = {
    "size": "all_ranges(%s)", "prefix": "prefixes(%s)", "ranges": "random_ranges(4, %s)",
    "delta": "gaussian(1, 1, %s)", "rr": "randomized_response(TABLE, %s, 1)", "select": "TABLE.select(%s)",
    "domain": "domain(TABLE, %s)", "digits": "round(1.5, %s)", "index": "[1, 2][%s]",
    "field": "{a: 1}[%s]", "eps": "laplace(1, %s)", "target": "OneRule(TABLE, %s, epsilon=1)",
    "corpus": "histogram_corpus(%s)", "rect": "random_rectangles(2, 2, %s)",
}

FAMILIES: dict[str, float] = {
    "compose": 30, "hole1": 14, "hole5": 10, "hole7": 8, "choicemaker": 4, "partition": 8,
    "release": 8, "private_probe": 8, "public": 3, "trees": 2, "misplaced": 4, "brl": 2, "returned": 4,
    "ledger": 4,
    "resources": 4,  # issue 21, hole 2 (tests/privacy/fuzz_resources.py)
    "csv": 3,  # issue 21, hole 3 (tests/privacy/fuzz_csv.py)
    "cells": 3,  # issue 21, hole 4 (tests/privacy/fuzz_cells.py)
    # issue 24, the DP ILP learner (tests/privacy/fuzz_ilp.py): drawn by its own test
    # (test_ilp_calls_are_fuzzed); weight 0 here keeps the default mix's fixed-seed programs
    "ilp": 0,
    # issue 25, DP redescription mining (tests/privacy/fuzz_redescription.py): drawn by its own test
    # (test_redescription_calls_are_fuzzed in test_redescription_audits.py), weight 0 here likewise
    "redescription": 0,
    "sulq": 0,  # issue 26 (tests/privacy/fuzz_sulq.py): drawn by test_sulq_calls_are_fuzzed in test_sulq_audits.py
    "perturbation": 0,  # issue 26 (fuzz_perturbation.py): drawn by test_perturbation_audits.py
    "evaluation": 0,  # issue 28 (fuzz_evaluation.py): drawn by test_evaluation_audits.py
}


# How likely a family's statements are to end the program with a refusal on correct code.
REFUSAL_RANK = {"private_probe": 1, "public": 1, "misplaced": 1, "ilp": 1, "redescription": 1}


# ---------------------------------------------------------------- making a case
# Cells a row may hold that no schema allows, for cases run on an engine: numbers beyond every
# double or not finite, texts that fail casts or look like NaN, Python objects of other types.
CRAFTED_NUMBERS = ["nan", "NaN", "NA", "abc", "1e400", "-1e400", 1e308, -1e308, float("inf"), float("nan"),
                   10 ** 400, "", " 5", "-0", "\u0661\u0662", "1_0", None] + [True, False, b"7", b"x"] * 3
CRAFTED_CATEGORIES = ["zz", 1.5, True, None, "", " a", "A", 10 ** 400, b"a", "nan", False, 0, 1]


def crafted(rng: random.Random, columns: tuple[Column, ...], row: tuple) -> tuple:
    """`row` with one or two of its cells replaced by cells no schema allows."""
    cells = list(row)
    for index in rng.sample(range(len(cells)), min(len(cells), rng.choice([1, 1, 2]))):
        pool = CRAFTED_NUMBERS if columns[index].numeric else CRAFTED_CATEGORIES
        cells[index] = rng.choice(pool)
    return tuple(cells)


def make_case(rng: random.Random, families: dict[str, float] | None = None, engine: bool = False) -> Case:
    """A random case: tables, their neighbours, public values and a program.

    With `engine`, the case is meant to run on an engine too: the `engine` family joins the
    default mix, and now and then the neighbours' extra row (or a shared row) holds crafted
    cells (`crafted`), bound under a schema the program declares, which drops or defaults them.
    """
    families = families or (dict(FAMILIES, engine=40) if engine else FAMILIES)
    columns = random_columns(rng, rng.randint(1, 4))
    size = rng.choice([0, 1, 1, 2, 2, 3, 3, 4, 5, 6, 8, 12, 20])
    base = random_rows(rng, columns, size)
    extra = tuple(c.draw(rng) for c in columns)
    private = TableSpec("t", columns, base)
    position = rng.randint(0, size)
    extra_first = rng.random() < 0.5
    other = None
    if rng.random() < 0.3:
        other_columns = random_columns(rng, rng.randint(1, 3))
        other = TableSpec("other", other_columns, random_rows(rng, other_columns, rng.choice([size, size + 1, 3])))
    publics = []
    for name in ("ids", "pub", "pub0"):
        if name != "ids" and rng.random() < 0.4:
            continue
        length = rng.choice([size, size + 1, size, rng.randint(0, 10)])
        pub_columns = random_columns(rng, rng.randint(1, 3), ["id", "age", "w", "a", "x", "label"])
        how = "csv" if name == "pub0" else rng.choice(["bind", "bind", "bind_schema", "csv"])
        if how == "bind":  # an inferred schema: keep the values of a column one type
            pub_columns = tuple(c if c.kind != "mixed" else replace(c, kind="text", values=("a", "b"))
                                for c in pub_columns)
        publics.append(PublicTable(TableSpec(name, pub_columns, random_rows(rng, pub_columns, length)), how))
    if rng.random() < GUESS_RATE:
        # A public file holding one neighbour's private rows exactly: an adversary's guess of the
        # data, shipped with the program (reading it must not depend on whether it is right).
        guess = Case((), private, extra, position, extra_first, "frame", None, (), (), 0, None, False)
        publics.append(PublicTable(replace(guess.neighbour(rng.randint(0, 1)), name="guess"), "csv"))
    list_length = rng.choice([size, size + 1, 2, 3])
    values: dict[str, Any] = {
        "v": [rng.choice([0, 1, 2, 5, 50]) for _ in range(list_length)],
        "flags": [rng.random() < 0.5 for _ in range(rng.choice([size, size + 1, 2]))],
        "k": rng.choice([0, 1, 3, 10, 2.5]),
        "cfg": {"lim": rng.choice([1, 5, 50]), "name": "a"},
    }
    bind = rng.choices(["frame", "path", "declared", "declared_path"], weights=[40, 30, 15, 15])[0]
    if engine and rng.random() < 0.6:
        extra = crafted(rng, columns, extra)
        if base and rng.random() < 0.3:
            at = rng.randrange(len(base))
            private = replace(private, rows=base[:at] + (crafted(rng, columns, base[at]),) + base[at + 1:])
        # under the program's schema (a curator's refuses such rows), mostly as a DataFrame
        bind = rng.choice(["declared", "declared", "declared_path"])
    budget = rng.choice([1.0, 10.0, 3.0, None])
    generator = Generator(rng, private, other, tuple(publics), values, budget is not None)
    chunks: list[str] = []
    if budget is None and rng.random() < 0.7:
        chunks.append(f"budget {rng.choice(['1', '10', '2'])}")
    if bind.startswith("declared"):
        declared = private
        if rng.random() < 0.25:  # a declaration the data does not fit (hole 6's shape)
            declared = replace(private, columns=tuple(
                replace(c, values=c.values[:1]) if not c.numeric and len(c.values) > 1 else c
                for c in private.columns))
        chunks.append(f"private t: {declared.schema_source()}")
    if other is not None and rng.random() < 0.2:
        chunks.append(f"private other: {other.schema_source()}")
    for public in publics:
        if public.how == "csv":
            chunks.append(f'{public.table.name} = load_public("{public.table.name}.csv")')
    chunks.append("def twice(q):\n    return q * 2")
    names = list(families)
    weights = [families[n] for n in names]
    drawn = [rng.choices(names, weights=weights)[0] for _ in range(rng.choice([1, 1, 2, 2, 3]))]
    if not generator.wild:  # a clean case runs the families that end in a refusal last
        drawn.sort(key=lambda family: REFUSAL_RANK.get(family, 0))
    choicemaker = False
    for family in drawn:
        if family == "choicemaker":
            if choicemaker:
                continue
            choicemaker = True
        getattr(generator, f"family_{family}")(chunks)
    dialect = draw_dialect(rng) if "csv" in drawn else None
    if dialect is not None:  # the curator's file, bound by its path (fuzz_csv.py)
        bind = "declared_path" if bind.startswith("declared") else "path"
    layout = None
    if "cells" in drawn and dialect is None:  # exotic cells under the program's schema (fuzz_cells.py)
        from tests.privacy.fuzz_cells import exotic_case

        private, extra, bind, layout = exotic_case(rng, private, extra, bind, chunks)
    return Case(tuple(chunks), private, extra, position, extra_first, bind, other, tuple(publics),
                tuple(values.items()), rng.randrange(1 << 30), budget, choicemaker,
                history_for(rng) if "ledger" in drawn else None, dialect, layout)


# ---------------------------------------------------------------- the tiny ChoiceMaker corpus
def tiny_corpus() -> Any:
    """Four public shapes (two near-flat, two spiky) for training ChoiceMakers quickly."""
    from jostle.learners.histograms.corpus import Corpus, Shape
    from jostle.language.values import CorpusValue

    shapes = []
    for seed in range(2):
        generator = np.random.default_rng(seed)
        shapes.append(Shape(f"flat{seed}", 1.0 + 0.05 * generator.random(64)))
        spiky = np.zeros(64)
        spiky[generator.choice(64, 3, replace=False)] = generator.uniform(1, 10, 3)
        shapes.append(Shape(f"spiky{seed}", spiky))
    return CorpusValue(Corpus("tiny", shapes), "tiny public shapes", task="histogram", item_name="shapes")


def tiny_grid() -> Any:
    from jostle.learners.histograms.task import TrainingGrid

    return TrainingGrid(scales=(500,), domains_1d=(HISTOGRAM_CELLS,), domains_2d=(), epsilons=(1.0,),
                        repetitions=1)


@contextlib.contextmanager
def tiny_training(cache: Path) -> Iterator[None]:
    """ChoiceMakers train on TINY_GRID with a fresh cache folder (and show no progress bar)."""
    from jostle.learners.histograms.task import TrainingGrid

    original = TrainingGrid.__dict__["quick"]
    previous = os.environ.get("JOSTLE_CACHE")
    TrainingGrid.quick = classmethod(lambda cls: tiny_grid())  # type: ignore[method-assign]
    os.environ["JOSTLE_CACHE"] = str(cache)
    try:
        yield
    finally:
        TrainingGrid.quick = original  # type: ignore[method-assign]
        if previous is None:
            os.environ.pop("JOSTLE_CACHE", None)
        else:
            os.environ["JOSTLE_CACHE"] = previous


# ---------------------------------------------------------------- running a case
EXIT_OK, EXIT_INTERNAL, EXIT_TIMEOUT, EXIT_UNBOUND = 0, 70, -1, -2

# The engine setting that models the route a curator's data takes when it is large: `auto`, with
# every table the curator binds past the size threshold, so on DuckDB, while a program's own
# `load` keeps the route of its kind (a CSV in memory, a Parquet file on DuckDB). Under `auto`
# only the curator's route follows the size (jostle/language/binding.py), so this is the route
# whose difference from memory a program must not see; a route the session sets explicitly is
# public, and a program's `load` of a public-rows file may then word its refusals differently.
LARGE = "large"


@contextlib.contextmanager
def _routes(engine: str) -> Iterator[str]:
    """The Session engine setting for `engine` (LARGE: `auto`, every curator's table large)."""
    if engine != LARGE:
        yield engine
        return
    from jostle.language import binding

    saved = binding.SMALL_TABLE_BYTES, binding.SMALL_TABLE_ROWS
    binding.SMALL_TABLE_BYTES = binding.SMALL_TABLE_ROWS = -1
    try:
        yield "auto"
    finally:
        binding.SMALL_TABLE_BYTES, binding.SMALL_TABLE_ROWS = saved


@dataclass(frozen=True)
class Outcome:
    """What one run showed the program's author.

    Attributes:
        before: The output printed before the first charge (all of it if nothing was charged).
        event: The first charge ("charge", mechanism, epsilon, delta, what, where) or the end
            of the run ("end", exit code, error class, rendered error).
        output: Everything printed.
        exit_code: 0, a JostleError's exit code, 70 (internal error) or -1 (timed out).
        internal: The traceback of an exception that is not a JostleError, if any.
    """

    before: str
    event: tuple
    output: str
    exit_code: int
    internal: str | None = None
    end: tuple = ()  # how the run ended, even after a charge (for comparing routes)
    ledger: str = ""  # the session's ledger at the end, as rendered (for comparing routes)
    returned: Returned | None = None  # the program's globals taken back to Python (fuzz_returned)

    @property
    def charged(self) -> bool:
        return self.event[0] == "charge"

    def summary(self) -> str:
        event = " | ".join(str(e) for e in self.event)
        text = f"  exit code {self.exit_code}; first event: {event}\n  output before the first charge:\n"
        text += "".join(f"    | {line}\n" for line in self.before.splitlines()) or "    (none)\n"
        if self.internal:
            text += "  internal error:\n" + "".join(f"    {line}\n" for line in self.internal.splitlines()[-12:])
        return text


class _Timeout(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise _Timeout in the main thread after `seconds` (no limit off the main thread)."""
    try:
        previous = signal.signal(signal.SIGALRM, _raise_timeout)
    except ValueError:  # not the main thread
        yield
        return
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _raise_timeout(signum: int, frame: Any) -> None:
    raise _Timeout()


class Workspace:
    """A folder for one fuzzing session's files: the program, the private CSV, public CSVs."""

    def __init__(self, root: Path | None = None) -> None:
        self._owned = root is None
        self.root = Path(tempfile.mkdtemp(prefix="jostle-nfuzz-")) if root is None else Path(root)
        (self.root / "sub").mkdir(parents=True, exist_ok=True)

    def close(self) -> None:
        if self._owned:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def prepare(self, case: Case, private: TableSpec, command_line: bool = False) -> None:
        """Write the files of one run: the private table (when it is bound by path: a copy the
        curator leaves elsewhere is the curator's to protect, see docs/threat_model.md), the
        other private table, the public CSVs, a schema file for the CLI and the program."""
        if case.csv is not None and (command_line or case.bind in ("path", "declared_path")):
            (self.root / PRIVATE_FILE).write_bytes(case.csv.render(private))
        elif command_line or case.bind in ("path", "declared_path"):
            frame = private.frame() if case.cells is None else case.cells.csv_frame(private)
            frame.to_csv(self.root / PRIVATE_FILE, index=False)
        else:
            (self.root / PRIVATE_FILE).unlink(missing_ok=True)
        if case.cells is not None:  # the private rows as a Parquet file (fuzz_cells.py)
            case.cells.write(private, self.root / "priv.parquet")
        else:
            (self.root / "priv.parquet").unlink(missing_ok=True)
        schema_file = self.root / "priv.schema.json"
        if case.bind.startswith("declared"):
            schema_file.unlink(missing_ok=True)
        else:
            schema_file.write_text(json.dumps(private.schema()))
        if case.other is not None:
            case.other.frame().to_csv(self.root / OTHER_FILE, index=False)
            (self.root / "other.schema.json").write_text(json.dumps(case.other.schema()))
        for public in case.publics:
            public.table.frame().to_csv(self.root / f"{public.table.name}.csv", index=False)
        (self.root / "prog.jst").write_text(case.source)


def run_case(case: Case, which: int, workspace: Workspace, timeout: float = RUN_TIMEOUT,
             engine: str = "pandas") -> Outcome:
    """Run `case` on neighbour `which` (0 or 1) in a fresh Session on `engine` ("pandas", "duckdb",
    or LARGE: the curator's tables on DuckDB as if they were large); return what it showed.

    What the program's author sees is what `print` wrote, plus anything written to the
    process's stdout and stderr and every Python warning (the command line shows them), in
    that order of kinds; the first charge freezes the part that is compared.
    """
    private = case.neighbour(which)
    workspace.prepare(case, private)
    ledger_path = prepare_ledger(case, private, workspace)  # the curator's earlier session, if any
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=workspace.root))
    seen = _Observed(cache)
    first: list[tuple[str, tuple]] = []
    session: Session | None = None
    watch: ReturnedWatch | None = None
    try:
        with _time_limit(timeout), warnings.catch_warnings(record=True) as caught, tiny_training(cache), \
                contextlib.redirect_stdout(seen.stdout), contextlib.redirect_stderr(seen.stderr), \
                _routes(engine) as setting:
            warnings.simplefilter("always")
            seen.warnings = caught
            try:
                session = Session(budget=case.budget, seed=case.seed, ledger_path=ledger_path, output=seen.output,
                                  engine=setting, lifetime=lifetime_for(case),
                                  # the dry run (issue 29) in one case of four: its outcome must not
                                  # depend on the data either, and the others reach the real run at full speed
                                  dry_run=case.seed % 4 == 0)
                _record_first_charge(session, seen, first)
                watch = ReturnedWatch(session)
                try:
                    _bind(session, case, private, workspace)
                except JostleError as error:  # the curator's error, before the program runs
                    unbound = ("unbound", type(error).__name__, str(error).split(" (hint: ")[0])
                    return Outcome("", unbound, "", EXIT_UNBOUND)
                del caught[:]  # binding is the curator's business
                watch.reset()
                session.run(case.source, str(workspace.root / "prog.jst"))
                end: tuple = ("end", EXIT_OK, "", "")
                code, internal = EXIT_OK, None
            except JostleError as error:
                code, internal = error.exit_code, None
                end = ("end", code, type(error).__name__, error.render())
            except _Timeout:
                code, internal = EXIT_TIMEOUT, None
                end = ("end", EXIT_TIMEOUT, "timeout", "")
            except Exception as error:  # noqa: BLE001 - anything else is a bug in Jostle
                code, internal = EXIT_INTERNAL, "".join(traceback.format_exception(error))
                end = ("end", EXIT_INTERNAL, type(error).__name__, str(error))
            text = seen.text()
            ledger = str(session.ledger) if session is not None else ""
            returned = _take_back(watch, code)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    if first:
        return Outcome(first[0][0], first[0][1], text, code, internal, end, ledger, returned)
    return Outcome(text, end, text, code, internal, end, ledger, returned)


def _take_back(watch: ReturnedWatch | None, code: int) -> Returned | None:
    """The program's globals taken back to Python after the run (not after a timeout)."""
    if watch is None or code == EXIT_TIMEOUT:
        return None
    try:
        return watch.collect()
    except _Timeout:
        return None


class _Observed:
    """The channels a run writes to: print's output, stdout, stderr and Python warnings."""

    def __init__(self, cache: Path | None = None) -> None:
        self.output, self.stdout, self.stderr = io.StringIO(), io.StringIO(), io.StringIO()
        self.warnings: list[warnings.WarningMessage] = []
        self.cache = cache  # each run gets its own empty cache folder: its name is the harness's, not the data's

    def text(self) -> str:
        text = self._text()
        return text.replace(str(self.cache), "$JOSTLE_CACHE") if self.cache is not None else text

    def _text(self) -> str:
        text = self.output.getvalue()
        for label, extra in (("stdout", self.stdout.getvalue()), ("stderr", self.stderr.getvalue()),
                             ("warnings", "".join(f"{w.category.__name__}: {w.message}\n" for w in self.warnings))):
            if extra:
                text += f"--- {label} ---\n{extra}"
        return text


def _record_first_charge(session: Session, seen: _Observed, first: list[tuple[str, tuple]]) -> None:
    """Wrap the session accountant's charge to note what was observed and the charge the first
    time a charge succeeds (training's scratch accountants are other objects: not recorded)."""
    accountant = session.accountant
    original = accountant.charge

    def charge(budget, node, mechanism, description, span):  # type: ignore[no-untyped-def]
        entry = original(budget, node, mechanism, description, span)
        if not first:
            first.append((seen.text(), ("charge", mechanism, str(budget.epsilon), str(budget.delta),
                                        description, span.location if span is not None else "")))
        return entry

    accountant.charge = charge  # type: ignore[method-assign]


def _bind(session: Session, case: Case, private: TableSpec, workspace: Workspace) -> None:
    path = workspace.root / PRIVATE_FILE
    if case.bind == "frame":
        session.bind_private("t", private.frame(), private.schema())
    elif case.bind == "path":
        session.bind_private("t", str(path), private.schema())
    elif case.bind == "declared":
        session.bind_private("t", private.frame())
    elif case.bind == "declared_parquet":  # fuzz_cells.py
        session.bind_private("t", str(workspace.root / "priv.parquet"))
    else:
        (workspace.root / "priv.schema.json").unlink(missing_ok=True)
        session.bind_private("t", str(path))
    if case.other is not None:
        session.bind_private("other", case.other.frame(), case.other.schema())
    for public in case.publics:
        if public.how == "bind":
            session.bind_public(public.table.name, public.table.frame())
        elif public.how == "bind_schema":
            session.bind_public(public.table.name, public.table.frame(), public.table.schema())
    for name, value in case.values:
        session.bind_public(name, value)
    # The private file's path as a string (bind_public would read a .csv path as a table).
    session.interpreter.globals.define("priv_path", str(path))
    if case.choicemaker:
        session.interpreter.globals.define("corpus", tiny_corpus())


# ---------------------------------------------------------------- the oracle
def violation(first: Outcome, second: Outcome) -> str | None:
    """Why two neighbours' outcomes break the pre-release rule (None: they do not)."""
    for outcome in (first, second):
        if outcome.internal is not None:
            return "internal error (an exception that is not a JostleError)"
    if {EXIT_TIMEOUT, EXIT_UNBOUND} & {first.exit_code, second.exit_code}:
        # A run that timed out says nothing (the generator avoids slow programs); data the
        # curator could not bind never reached the program.
        return None
    if first.before != second.before:
        return "the output before the first release differs"
    if first.event != second.event:
        if first.charged != second.charged:
            return "one neighbour's run charged a release and the other's did not"
        if first.charged:
            return "the first release differs"
        if first.exit_code != second.exit_code:
            return "the exit code differs (nothing was charged)"
        return "the error message differs (nothing was charged)"
    if first.returned is not None and second.returned is not None:
        return returned_violation(first.returned, second.returned, (first.charged, second.charged))
    return None


def route_violation(in_memory: Outcome, on_engine: Outcome) -> str | None:
    """Why a run in memory and the same run on an engine (the same neighbour, the same seed)
    differ in anything the program's author could see (None: they do not).

    The route is not the program's to know: under `auto` it follows the curator's data size
    (jostle/language/binding.py). With the same seed the engine computes the same exact
    aggregates and the driver draws the same noise, so everything must be identical, released
    values and what follows them included: the output, how the run ended and the ledger.
    """
    for outcome in (in_memory, on_engine):
        if outcome.internal is not None:
            return "internal error (an exception that is not a JostleError)"
    if EXIT_TIMEOUT in (in_memory.exit_code, on_engine.exit_code):
        return None  # a timeout says nothing
    if EXIT_UNBOUND in (in_memory.exit_code, on_engine.exit_code):
        # The curator's binding comes before any program, but it too must go alike on every
        # route: refused on both with the same error, or on neither (issue 21, hole 3).
        return None if in_memory.event == on_engine.event else \
            "the curator's binding is refused differently in memory and on the engine"
    if in_memory.output != on_engine.output:
        return "the output differs between memory and the engine"
    if in_memory.end != on_engine.end:
        return "the run ends differently in memory and on the engine"
    if in_memory.ledger != on_engine.ledger:
        return "the ledger differs between memory and the engine"
    if in_memory.returned is not None and on_engine.returned is not None \
            and in_memory.returned.values != on_engine.returned.values:
        return "the values returned to Python differ between memory and the engine"
    return None


@dataclass
class Finding:
    """A violation: the case, the two outcomes compared and the reason."""

    case: Case
    reason: str
    outcomes: tuple[Outcome, Outcome]
    programs_tried: int = 0
    seconds: float = 0.0
    minimised: bool = False
    labels: tuple[str, str] = ("neighbour 0", "neighbour 1")  # what the two outcomes are

    def report(self) -> str:
        case = self.case
        lines = [f"neighbour-differential fuzzer: {self.reason}",
                 f"(found after {self.programs_tried} programs, {self.seconds:.1f} s"
                 f"{'; minimised' if self.minimised else ''})", "", "program:"]
        lines += [f"  {i + 1:3} | {line}" for i, line in enumerate(case.source.rstrip("\n").split("\n"))]
        lines += ["", f"session: Session(budget={case.budget}, seed={case.seed}, ledger_path=':memory:'); "
                      f"private table t bound by {case.bind} ({PRIVATE_FILE} beside the program)",
                  f"t's schema: {case.private.schema_source()}"]
        for which in (0, 1):
            table = case.neighbour(which)
            lines.append(f"neighbour {which} ({len(table.rows)} rows):")
            lines += [f"    {line}" for line in table.text().splitlines()]
            if case.csv is not None:  # the file as written in the case's dialect (fuzz_csv.py)
                lines.append(f"    its CSV file: {case.csv.render(table)[:2000]!r}")
        if case.other is not None:
            lines += [f"private table other {case.other.schema_source()} (the same on both):"]
            lines += [f"    {line}" for line in case.other.text().splitlines()]
        for public in case.publics:
            lines += [f"public table {public.table.name} ({public.how}, {len(public.table.rows)} rows, "
                      f"{public.table.schema_source()}):"]
            lines += [f"    {line}" for line in public.table.text().splitlines()]
        lines.append("public values: " + ", ".join(f"{k} = {v!r}" for k, v in case.values))
        for label, outcome in zip(self.labels, self.outcomes):
            lines += [f"outcome on {label}:", outcome.summary()]
            if self.labels != ("neighbour 0", "neighbour 1"):  # routes compared: the whole run
                lines += ["  all of its output:"] + [f"    | {line}" for line in outcome.output.splitlines()]
        return "\n".join(lines)


def check_case(case: Case, workspace: Workspace, engine: str | None = None) -> Finding | None:
    """Run a case on both neighbours; a Finding if they break the rule.

    With `engine` (e.g. "duckdb"), the tables live on that engine: the neighbours there must
    obey the pre-release rule, and each neighbour must show exactly what it shows in memory
    (`route_violation`); four runs in all.
    """
    return _examine(case, workspace, engine)[0]


def _examine(case: Case, workspace: Workspace, engine: str | None) -> tuple[Finding | None, Outcome, Outcome]:
    """`check_case`, and the in-memory neighbours' outcomes (for the statistics)."""
    first = run_case(case, 0, workspace)
    second = run_case(case, 1, workspace)
    reason = violation(first, second)
    if reason is not None:
        return Finding(case, reason, (first, second)), first, second
    if engine is None:
        return None, first, second
    return _engine_finding(case, workspace, engine, (first, second)), first, second


def _engine_finding(case: Case, workspace: Workspace, engine: str,
                    in_memory: tuple[Outcome, Outcome]) -> Finding | None:
    on_engine = (run_case(case, 0, workspace, engine=engine), run_case(case, 1, workspace, engine=engine))
    reason = violation(*on_engine)
    if reason is not None:
        return Finding(case, f"on {engine}: {reason}", on_engine,
                       labels=(f"neighbour 0 on {engine}", f"neighbour 1 on {engine}"))
    for which, outcome in enumerate(in_memory):
        reason = route_violation(outcome, on_engine[which])
        if reason is not None:
            return Finding(case, f"{reason} (neighbour {which})", (outcome, on_engine[which]),
                           labels=(f"neighbour {which} in memory", f"neighbour {which} on {engine}"))
    return None


# ---------------------------------------------------------------- minimising
def minimise(finding: Finding, workspace: Workspace, seconds: float = MINIMISE_SECONDS,
             accept: Callable[[Finding], bool] | None = None, engine: str | None = None) -> Finding:
    """Shrink a finding's program, rows and columns while it still shows the same violation
    (and, with `accept`, while `accept` still takes it); `engine` as for `check_case`."""
    deadline = time.monotonic() + seconds
    best = finding

    def still(case: Case) -> Finding | None:
        if time.monotonic() > deadline:
            return None
        try:
            found = check_case(case, workspace, engine)
        except Exception:  # noqa: BLE001 - a candidate the harness cannot run is not smaller
            return None
        if found is None or found.reason != finding.reason or (accept is not None and not accept(found)):
            return None
        return found

    def attempt(candidate: Case) -> bool:
        nonlocal best
        found = still(candidate)
        if found is not None:
            best = Finding(candidate, found.reason, found.outcomes, finding.programs_tried, finding.seconds, True,
                           found.labels)
            return True
        return False

    progress = True
    while progress and time.monotonic() < deadline:
        progress = False
        # statements, last first
        for i in reversed(range(len(best.case.chunks))):
            if i < len(best.case.chunks) and attempt(replace(best.case, chunks=best.case.chunks[:i] +
                                                           best.case.chunks[i + 1:])):
                progress = True
        # lines inside multi-line statements
        for i, chunk in enumerate(best.case.chunks):
            lines = chunk.split("\n")
            for j in reversed(range(1, len(lines))):
                shorter = "\n".join(lines[:j] + lines[j + 1:])
                chunks = best.case.chunks[:i] + (shorter,) + best.case.chunks[i + 1:]
                if attempt(replace(best.case, chunks=chunks)):
                    lines = shorter.split("\n")
                    progress = True
        # rows shared by both neighbours; the same row of every table at once
        for i in reversed(range(len(best.case.private.rows))):
            case = best.case
            if i >= len(case.private.rows):
                continue
            rows = case.private.rows[:i] + case.private.rows[i + 1:]
            smaller = replace(case, private=replace(case.private, rows=rows),
                              position=case.position - (1 if i < case.position else 0))
            if attempt(smaller):
                progress = True
                continue
            publics = tuple(replace(p, table=replace(p.table, rows=p.table.rows[:i] + p.table.rows[i + 1:]))
                            if i < len(p.table.rows) else p for p in smaller.publics)
            if attempt(replace(smaller, publics=publics)):
                progress = True
        # rows of public tables and values
        for index, public in enumerate(best.case.publics):
            for i in reversed(range(len(public.table.rows))):
                current = best.case.publics[index]
                if i >= len(current.table.rows):
                    continue
                shrunk = replace(current, table=replace(current.table, rows=current.table.rows[:i] +
                                                        current.table.rows[i + 1:]))
                publics = best.case.publics[:index] + (shrunk,) + best.case.publics[index + 1:]
                if attempt(replace(best.case, publics=publics)):
                    progress = True
        # unused tables and columns
        if best.case.other is not None and attempt(replace(best.case, other=None)):
            progress = True
        for index in reversed(range(len(best.case.publics))):
            if index < len(best.case.publics) and attempt(
                    replace(best.case, publics=best.case.publics[:index] + best.case.publics[index + 1:])):
                progress = True
        columns = best.case.private.columns
        for j in reversed(range(len(columns))):
            case = best.case
            if len(case.private.columns) <= 1 or j >= len(case.private.columns):
                continue
            keep = [k for k in range(len(case.private.columns)) if k != j]
            private = TableSpec(case.private.name, tuple(case.private.columns[k] for k in keep),
                                tuple(tuple(row[k] for k in keep) for row in case.private.rows))
            extra = tuple(case.extra[k] for k in keep)
            declared = f"private t: {case.private.schema_source()}"
            chunks = tuple(f"private t: {private.schema_source()}" if c == declared else c for c in case.chunks)
            if attempt(replace(case, private=private, extra=extra, chunks=chunks)):
                progress = True
    return best


# ---------------------------------------------------------------- the driver
@dataclass
class FuzzStats:
    """What a fuzzing run did."""

    programs: int = 0
    charged: int = 0          # programs where at least one neighbour charged
    failed: int = 0           # programs ending in a JostleError (both neighbours alike)
    timeouts: int = 0
    choicemakers: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0

    def __str__(self) -> str:
        return (f"{self.programs} programs in {self.seconds:.1f} s ({self.cpu_seconds:.1f} s CPU): "
                f"{self.charged} charged, {self.failed} ended in an error, {self.choicemakers} with a "
                f"ChoiceMaker, {self.timeouts} timed out")


def fuzz(seconds: float, seed: int = 0, families: dict[str, float] | None = None,
         minimise_seconds: float = MINIMISE_SECONDS, stats: FuzzStats | None = None,
         max_programs: int | None = None, on_case: Callable[[Case], None] | None = None,
         accept: Callable[[Finding], bool] | None = None, engine: str | None = None) -> Finding | None:
    """Generate and check programs for `seconds` (or `max_programs`); the first finding, minimised.

    Args:
        seconds: Wall-clock time for generating and checking (minimising comes on top).
        seed: Seeds the generator: the same seed tries the same programs in the same order.
        families: Weights of the statement families (default FAMILIES).
        minimise_seconds: Time allowed for shrinking a finding.
        stats: Filled with counts of what was tried.
        max_programs: Stop after this many programs.
        on_case: Called with every case before it runs (for tests).
        accept: Decides whether a violation counts (default: every one does); one it rejects
            is passed over and fuzzing goes on. The negative controls accept only violations
            that go away without the hole they reintroduce.
        engine: Also run every case with its private tables on this engine ("duckdb", or
            LARGE: the curator's tables on DuckDB as under `auto` when large): the neighbours
            there obey the same rule, and each neighbour shows exactly what it shows in memory
            (`check_case`). The cases then also draw crafted rows and the `engine` family
            (`make_case(..., engine=True)`).
    """
    stats = stats if stats is not None else FuzzStats()
    rng = random.Random(seed)
    start, cpu_start = time.monotonic(), time.process_time()
    with Workspace() as workspace:
        try:
            while time.monotonic() - start < seconds and (max_programs is None or stats.programs < max_programs):
                case = make_case(rng, families, engine=engine is not None)
                if on_case is not None:
                    on_case(case)
                stats.programs += 1
                stats.choicemakers += case.choicemaker
                finding, first, second = _examine(case, workspace, engine)
                stats.charged += first.charged or second.charged
                stats.failed += first.exit_code not in (EXIT_OK, EXIT_TIMEOUT)
                stats.timeouts += EXIT_TIMEOUT in (first.exit_code, second.exit_code)
                if finding is not None:
                    finding.programs_tried, finding.seconds = stats.programs, time.monotonic() - start
                    if accept is not None and not accept(finding):
                        continue
                    if minimise_seconds > 0:
                        finding = minimise(finding, workspace, minimise_seconds, accept, engine)
                    return finding
        finally:
            stats.seconds = time.monotonic() - start
            stats.cpu_seconds = time.process_time() - cpu_start
    return None


# ---------------------------------------------------------------- the command line interface
def run_cli(case: Case, which: int, workspace: Workspace) -> tuple[int, str, str]:
    """Run `case` on neighbour `which` through `jostle.cli.main` (the program loads its public
    tables from CSV files); returns the exit code, stdout and stderr."""
    from jostle import cli

    private = case.neighbour(which)
    workspace.prepare(case, private, command_line=True)
    if case.bind == "declared_path" or case.bind == "declared":
        (workspace.root / "priv.schema.json").unlink(missing_ok=True)
    argv = ["run", str(workspace.root / "prog.jst"), "--data", f"t={workspace.root / PRIVATE_FILE}",
            "--seed", str(case.seed), "--ledger-db", ":memory:", "--ledger"]
    if case.other is not None:
        argv += ["--data", f"other={workspace.root / OTHER_FILE}"]
    if case.budget is not None:
        argv += ["--budget", str(case.budget)]
    out, err = io.StringIO(), io.StringIO()
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=workspace.root))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings(), \
                tiny_training(cache), _time_limit(RUN_TIMEOUT):
            warnings.simplefilter("ignore")
            code = cli.main(argv)
    except _Timeout:
        code = EXIT_TIMEOUT
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    # each run gets its own empty cache folder: its name is the harness's, not the data's
    return code, out.getvalue().replace(str(cache), "$JOSTLE_CACHE"), err.getvalue().replace(str(cache), "$JOSTLE_CACHE")


def cli_case(case: Case) -> Case:
    """The same case for the command line: every public table and value comes from the program."""
    prelude = []
    for name, value in case.values:
        prelude.append(f"{name} = {_lit(value) if not isinstance(value, dict) else _record(value)}")
    prelude.append(f'priv_path = "{PRIVATE_FILE}"')
    for public in case.publics:
        if public.how != "csv":
            prelude.append(f'{public.table.name} = load_public("{public.table.name}.csv")')
    chunks = list(case.chunks)
    at = 1 if chunks and chunks[0].startswith("budget ") else 0
    publics = tuple(replace(p, how="csv") for p in case.publics)
    return replace(case, chunks=tuple(chunks[:at] + prelude + chunks[at:]), publics=publics, choicemaker=False)


def _record(value: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {_lit(v)}" for k, v in value.items()) + "}"


def cli_violation(first: tuple[int, str, str], second: tuple[int, str, str]) -> str | None:
    """The zero-spend rule on the command line: with no charge in either ledger (printed by
    --ledger), the exit code, stdout and stderr must be identical."""
    if EXIT_INTERNAL in (first[0], second[0]):
        return "internal error (exit code 70)"
    if EXIT_TIMEOUT in (first[0], second[0]):
        return None
    charged = ["(no charges)" not in out for _, out, _ in (first, second)]
    if any(charged) and not all(charged):
        return "one neighbour's run charged a release and the other's did not"
    if not any(charged) and first != second:
        return "the exit code or output differs (nothing was charged)"
    return None


__all__ = [
    "Case", "Column", "TableSpec", "PublicTable", "Generator", "Outcome", "Finding", "FuzzStats", "Workspace",
    "make_case", "run_case", "check_case", "violation", "route_violation", "minimise", "fuzz", "fuzz_seconds",
    "run_cli", "cli_case", "cli_violation", "FAMILIES", "LARGE", "tiny_corpus", "tiny_grid",
]
