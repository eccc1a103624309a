"""Public schemas (column domains) and the conformance of rows to them.

A schema declares every column's domain, and it is *public*: bounds and category lists come
from the person writing the program or the schema file, never from the private data.

Who sees a data error depends on who declared the schema (docs/threat_model.md, "Loading data"):

  * **The curator's schema** (`Session.bind_private(name, data, schema)`, or a schema file
    beside a file bound with `--data`): the table is conformed *strictly*, at bind time,
    before any program runs, and a value that breaks the schema is a DataError naming the
    table, the column, the row and the value. It is raised to the curator, in Python or on
    the command line that binds the data; no program is involved.
  * **The program's schema** (`private t: {...}` on data bound without one, or
    `load(path, schema)` in a program): the program's author chooses the schema and must not
    learn about the rows from whether or how they fit it. The table is conformed *totally*,
    by rules that never fail on a row: what a rule cannot fix drops the row (a row maps to at
    most one row, so dropping is 1-stable and counts keep sensitivity 1). Nothing about the
    rows reaches the program; the curator may read how many rows were dropped, per column,
    from the Python logger "jostle.data" (`DATA_LOG`), which has no handler unless the
    embedding application configures logging: the `jostle` command configures none.

The rules (the only ones; both policies apply them alike, except as said):
  * numeric values outside [lo, hi] are clamped to the nearest bound;
  * a missing value (empty cell, NaN) or a category outside the declared list is replaced by
    the column's declared `default` if it has one; otherwise it is an error naming the column,
    the row and the value (curator), or the row is dropped (program);
  * text in a numeric column that is not a number: the same (default, else error or drop);
  * a column the schema declares but the data lacks is an error (column names are the
    header, the same on neighbouring tables, so this error is data-independent); extra
    columns are ignored (they are not part of the table);
  * every cell is first read by `jostle.data.cells.read_cell`, by its type alone: None, NaN,
    NaT and pandas.NA are missing; bools, ints, floats, texts, Decimals, Fractions and NumPy's
    scalars of these are plain values; any other cell (a list, NumPy array, dict, bytes, a
    date or time, a complex number, any other object) is *unknown*, which the rules above
    treat like a missing value (the default, else an error naming the row, or the row
    dropped). No rule calls a method of the cell's own class, so no cell raises.

CSV files are parsed by one reader (`read_csv_file`, jostle.data.csv_reader) for every route;
schema files beside data files are read by jostle.data.schema_files. Both are re-exported here.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from jostle.data.cells import MISSING, PLAIN, read_cell
# The curator's logger (DATA_LOG), the CSV reader and the schema files, re-exported: they lived here.
from jostle.data.csv_reader import DATA_LOG, CsvFile, _header_names, read_csv, read_csv_file  # noqa: F401
from jostle.data.schema_files import (  # noqa: F401
    SCHEMA_FILE_KEYS, SchemaFile, load_schema_file, read_schema_declaration, read_schema_file, schema_file_for,
)
from jostle.diagnostics.errors import DataError

if TYPE_CHECKING:
    import pandas as pd


MAX_BOUND = 1e12  # see jostle.language.sensitivity: keeps every private value far from overflow


@dataclass(frozen=True)
class Numeric:
    """A numeric column with public bounds [lo, hi]."""

    lo: float
    hi: float
    default: float | None = None
    integer: bool = False

    def __post_init__(self) -> None:
        for bound in (self.lo, self.hi):
            if isinstance(bound, bool) or not isinstance(bound, (int, float)) or not math.isfinite(bound):
                raise DataError(f"numeric bounds must be finite numbers, got {bound!r}")
            if abs(bound) > MAX_BOUND:
                raise DataError(
                    f"numeric bound {bound!r} is beyond +/-{MAX_BOUND:g}",
                    hint="rescale the column (e.g. thousands instead of units); huge bounds make "
                    "sums overflow in ways that could depend on the data",
                )
        if self.lo > self.hi:
            raise DataError(f"numeric bounds [{self.lo}, {self.hi}] are reversed", hint="write numeric(lo, hi) with lo <= hi")
        if self.default is not None:
            if isinstance(self.default, bool) or not isinstance(self.default, (int, float)) \
                    or not math.isfinite(self.default):
                raise DataError(f"the default of a numeric column must be a finite number, got {self.default!r}",
                                hint=f"write e.g. numeric({_number(self.lo)}, {_number(self.hi)}, "
                                f"default={_number(self.lo)})")
            if not (self.lo <= self.default <= self.hi):
                raise DataError(f"default {self.default} lies outside the bounds [{self.lo}, {self.hi}]")
        if self.integer:
            if math.ceil(self.lo) > math.floor(self.hi):
                raise DataError(f"no whole number lies within the bounds [{self.lo}, {self.hi}] of an "
                                "integer column", hint="widen the bounds or drop integer=true")
            if self.default is not None and not float(self.default).is_integer():
                raise DataError(f"the default {self.default} of an integer column is not a whole number")

    @property
    def magnitude(self) -> float:
        """max(|lo|, |hi|): how much one row can move a sum of this column."""
        return max(abs(self.lo), abs(self.hi))

    def conform(self, values: np.ndarray) -> np.ndarray:
        """Clamp values into the column's domain (and round them for an integer column).

        An integer column rounds first and then clamps to the whole numbers within the
        bounds, [ceil(lo), floor(hi)], so that no value ever lies outside the declared bounds
        (rounding after clamping could turn 11.5 into 12 under a bound of 11.5).
        """
        if not self.integer:
            return np.clip(values, self.lo, self.hi)  # infinities clamp to the bounds too
        with np.errstate(invalid="ignore"):
            return np.clip(np.round(values), math.ceil(self.lo), math.floor(self.hi))

    def describe(self) -> str:
        extra = "".join([
            f", default={_number(self.default)}" if self.default is not None else "",
            ", integer=true" if self.integer else "",
        ])
        return f"numeric({_number(self.lo)}, {_number(self.hi)}{extra})"

    def __str__(self) -> str:
        return self.describe()


@dataclass(frozen=True)
class Categorical:
    """A categorical column with its public list of values."""

    values: tuple
    default: Any = None

    def __post_init__(self) -> None:
        if len(self.values) == 0:
            raise DataError("a categorical column needs at least one value")
        if len(set(self.values)) != len(self.values):
            raise DataError(f"categorical values repeat: {list(self.values)}")
        if self.default is not None and self.default not in self.values:
            raise DataError(f"default {self.default!r} is not one of the values {list(self.values)}")

    def describe(self) -> str:
        extra = f", default={self.default!r}" if self.default is not None else ""
        return f"categorical({list(self.values)}{extra})"

    def __str__(self) -> str:
        return self.describe()


ColumnSpec = Numeric | Categorical


def _number(value: float) -> str:
    """A bound as a person writes it: 0 rather than 0.0, 0.5 as is."""
    number = float(value)
    return str(int(number)) if number.is_integer() and abs(number) < 1e16 else repr(number)


def numbers_where_possible(frame: pd.DataFrame) -> pd.DataFrame:
    """Columns of a PUBLIC text frame that parse wholly as numbers become numeric.

    Used only for public tables read without a schema (their domains are then read off their
    contents, which is allowed because they are public); a column with any cell that is not a
    number stays text.
    """
    import pandas as pd
    out = {}
    for name in frame.columns:
        try:
            out[name] = pd.to_numeric(frame[name])
        except (TypeError, ValueError):
            out[name] = frame[name]
    return pd.DataFrame(out, index=frame.index)


@dataclass(frozen=True)
class Schema:
    """An ordered mapping of column names to their public domains."""

    columns: tuple[tuple[str, ColumnSpec], ...]

    @classmethod
    def of(cls, mapping: Mapping[str, Any]) -> Schema:
        """Build a schema from column specs, JSON-style dicts or (kind, ...) tuples."""
        if not mapping:
            raise DataError("a schema needs at least one column")
        return cls(tuple((str(name), column_spec(spec, str(name))) for name, spec in mapping.items()))

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.columns]

    def __contains__(self, name: str) -> bool:
        return any(n == name for n, _ in self.columns)

    def __getitem__(self, name: str) -> ColumnSpec:
        for n, spec in self.columns:
            if n == name:
                return spec
        raise KeyError(name)

    def select(self, names: list[str]) -> Schema:
        return Schema(tuple((n, self[n]) for n in names))

    def with_column(self, name: str, spec: ColumnSpec) -> Schema:
        """This schema with column `name` replaced in place, or added at the end."""
        if name in self:
            return Schema(tuple((n, spec if n == name else s) for n, s in self.columns))
        return Schema(self.columns + ((name, spec),))

    def describe(self) -> str:
        return "{" + ", ".join(f"{n}: {s.describe()}" for n, s in self.columns) + "}"


def column_spec(spec: Any, name: str = "?") -> ColumnSpec:
    """Interpret one column's declaration.

    Accepts a Numeric/Categorical, a JSON-style dict ({"type": "numeric", "bounds": [lo, hi]},
    {"type": "categorical", "values": [...]}, optional "default"), or a tuple
    ("numeric", lo, hi) / ("categorical", [values]).
    """
    if isinstance(spec, (Numeric, Categorical)):
        return spec
    try:
        if isinstance(spec, Mapping):
            kind = spec.get("type")
            if kind == "numeric":
                lo, hi = spec["bounds"]
                integer = spec.get("integer", False)
                if not isinstance(integer, bool):  # bool("false") would be True
                    raise DataError(f"column '{name}': \"integer\" must be true or false, got {integer!r}")
                return Numeric(lo, hi, spec.get("default"), integer)
            if kind == "categorical":
                return Categorical(_category_list(spec["values"], name), spec.get("default"))
            raise DataError(f"column '{name}': unknown type {kind!r}", hint="use \"numeric\" or \"categorical\"")
        if isinstance(spec, tuple) and spec:
            if spec[0] == "numeric" and len(spec) == 3:
                return Numeric(spec[1], spec[2])
            if spec[0] == "categorical" and len(spec) == 2:
                return Categorical(_category_list(spec[1], name))
    except (KeyError, TypeError, ValueError) as error:
        raise DataError(f"column '{name}': invalid declaration {spec!r} ({error})") from None
    except DataError as error:  # a bad domain (reversed bounds, ...): say which column
        if not error.message.startswith(f"column '{name}'"):
            error.message = f"column '{name}': {error.message}"
            error.args = (error.message,)
        raise
    raise DataError(
        f"column '{name}': invalid declaration {spec!r}",
        hint='declare numeric columns as {"type": "numeric", "bounds": [lo, hi]} and categorical '
        'ones as {"type": "categorical", "values": [...]}',
    )


def _category_list(values: Any, name: str) -> tuple:
    """A declared list of categories (a string is not a list of its characters)."""
    if not isinstance(values, (list, tuple)):
        raise DataError(f"column '{name}': the categorical values must be a list, got {values!r}",
                        hint='write "values": ["a", "b", ...]')
    return tuple(values)


def python_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """A raw frame's cells as Python objects, each missing cell (`read_cell`) as None.

    For the in-memory route of the curator's DataFrame. pandas' own test (`notna`) compares an
    object cell with itself, which raised on one row for a signalling Decimal NaN or a float
    subclass whose `!=` raises, and may call a cell's own methods; `read_cell` never does.
    Columns of a NumPy or pandas type hold no Python objects of their own: pandas tests those.
    """
    import pandas as pd

    out = frame.astype(object)
    for position in range(frame.shape[1]):
        column = frame.iloc[:, position]
        if column.dtype == object:
            missing = np.fromiter((read_cell(cell)[0] == MISSING for cell in column.tolist()), dtype=bool,
                                  count=len(column))
        else:
            missing = pd.isna(column).to_numpy(dtype=bool)
        if missing.any():
            out.iloc[missing, position] = None
    return out


def _is_missing(value: Any) -> bool:
    """A missing cell: one `read_cell` reads as missing, or a text that is blank or na/nan/null."""
    kind, plain = read_cell(value)
    return kind == MISSING or (kind == PLAIN and isinstance(plain, str) and _missing_text(plain))


def _missing_text(text: str) -> bool:
    stripped = text.strip()
    return stripped == "" or stripped.lower() in ("na", "nan", "null")


def _match_category(value: Any, values: tuple) -> tuple[bool, Any]:
    """Match a raw cell against the declared categories, allowing '1' to match 1.

    Only a plain cell (`read_cell`) can match, by its exact Python value: a list, an array or
    an object of another type never does, and its own methods never run (an array's `==`
    gave an array whose truth value raised: issue 21, hole 4).
    """
    kind, plain = read_cell(value)
    if kind != PLAIN:
        return False, None
    return _match_plain(plain, values)


def _match_plain(value: bool | int | float | str, values: tuple) -> tuple[bool, Any]:
    """`_match_category` of a plain cell (an exact bool, int, float or str).

    The match is the declared value, never the cell (a cell 0.0 matching the category 0 is
    stored as 0): row functions then compute on the domain's own values (-0 is 0, -0.0 is not),
    as they do on an engine, which stores the category's code.
    """
    if value in values:
        return True, values[values.index(value)]
    try:
        text = str(value).strip()
    except ValueError:
        # A whole number too long for str() (Python refuses beyond 4300 digits) is beyond every
        # double: it reads as the infinity float() overflows to (`conform`), as on an engine.
        # Raising here would fail on one row only, which a neighbour without it does not.
        if not isinstance(value, int):
            return False, None
        text = "inf" if value > 0 else "-inf"
    for candidate in values:
        if str(candidate) == text:
            return True, candidate
        if isinstance(candidate, (int, float)) and not isinstance(candidate, bool):
            try:
                if float(text) == float(candidate):
                    return True, candidate
            except ValueError:
                pass
    return False, None


def read_number(value: Any) -> tuple[float | None, str]:
    """A raw cell of a numeric column: (its number, "") or (None, why it has none, for messages).

    A whole number beyond every double reads as the infinity of its sign (the bound it is then
    clamped to), as an engine's cast gives; raising would fail on this one row (exit 70), which
    a neighbour without it does not.
    """
    kind, plain = (PLAIN, value) if type(value) is str else read_cell(value)
    if kind == MISSING:
        return None, "is missing"
    if kind != PLAIN:
        return None, f"is {kind}, not a number"
    if isinstance(plain, str):
        if _missing_text(plain):
            return None, "is missing"
        try:
            number = float(plain)
        except ValueError:
            return None, f"{plain!r} is not a number"
        return (None, "is NaN") if math.isnan(number) else (number, "")
    try:
        return float(plain), ""
    except OverflowError:
        return (math.inf if plain > 0 else -math.inf), ""


def category_problem(value: Any, values: tuple) -> str:
    """Why a raw cell matches no category (`_match_category`), in the curator's refusal."""
    kind, plain = read_cell(value)
    if kind == MISSING or (kind == PLAIN and isinstance(plain, str) and _missing_text(plain)):
        return "is missing"
    if kind != PLAIN:
        return f"is {kind}, not one of {list(values)}"
    return f"{_shown(plain)} is not one of {list(values)}"


def _shown(value: bool | int | float | str) -> str:
    """A plain value as a message shows it (a whole number too long to print by its size)."""
    try:
        return repr(value)
    except ValueError:
        return f"a whole number of about {int(value.bit_length() * math.log10(2)) + 1} digits"


def breaking_hint(name: str, spec: ColumnSpec) -> str:
    """The hint of a curator's refusal of a value in column `name` (every route gives the same)."""
    if isinstance(spec, Numeric):
        return (f"fix the data, or declare a default for '{name}' "
                f"(e.g. numeric({_number(spec.lo)}, {_number(spec.hi)}, default={_number(spec.lo)}))")
    return f"fix the data, add the value to the column's categories, or declare a default for '{name}'"


def can_drop_rows(schema: Schema) -> list[str]:
    """The columns whose values can fail the schema: those without a default.

    Under a program's schema a row failing such a column is dropped (`conform`, strict=False),
    so the number of rows of the result is private even if that of the input was public.
    Numeric columns fail only on missing or unreadable cells (out-of-range values clamp).
    """
    return [name for name, spec in schema.columns if spec.default is None]


def conform(frame: pd.DataFrame, schema: Schema, table: str, strict: bool = True) -> pd.DataFrame:
    """Apply the schema's rules to a raw frame, giving the table Jostle computes on.

    Args:
        frame: The raw rows (text cells, or typed cells from a DataFrame).
        schema: The public schema.
        table: The table's name, for messages.
        strict: True for a schema the curator gave (and for public tables): a value that
            breaks the schema is a DataError naming the row and the value. False for a schema
            the program declared: such a row is dropped instead (1-stable), and only the
            number of dropped rows per column goes to the curator's logger `DATA_LOG`.
            The result, and every error, is then independent of the rows' values.

    Raises:
        DataError: A declared column is missing (both modes; the header is public), or, when
            strict, a value breaks the schema and the column has no default. The message
            names the table, the column and the (1-based) row.
    """
    import pandas as pd
    missing = [name for name in schema.names if name not in frame.columns]
    if missing:
        raise DataError(
            f"table '{table}' has no column {', '.join(repr(m) for m in missing)}",
            hint=f"its columns are {list(map(str, frame.columns))}; fix the schema or the file",
        )
    out = {}
    keep = np.ones(len(frame), dtype=bool)
    failures: Counter = Counter()

    # A curator's schema names the first breaking cell in the file's order: the earliest row, and
    # in it the first column of the schema (as the engines' conformance finds it in one scan,
    # jostle.data.engine.conform.first_breaking_row), not the first column that breaks anywhere.
    first_break: list[tuple[int, str, str, str]] = []

    def fail(name: str, row: int, message: str, hint: str) -> None:
        if strict:
            if not first_break or row < first_break[0][0]:
                first_break[:] = [(row, name, message, hint)]
            return
        keep[row] = False
        failures[name] += 1

    for name, spec in schema.columns:
        raw = frame[name].tolist()
        if isinstance(spec, Numeric):
            values = np.empty(len(raw), dtype=float)
            for i, cell in enumerate(raw):
                number, problem = read_number(cell)
                if number is None:
                    if spec.default is None:
                        fail(name, i, problem, breaking_hint(name, spec))
                        number = spec.lo  # a placeholder: the row is dropped
                    else:
                        number = float(spec.default)
                values[i] = number
            out[name] = spec.conform(values)
        else:
            cells = []
            for i, cell in enumerate(raw):
                kind, plain = read_cell(cell)
                if kind == PLAIN and not (type(plain) is str and _missing_text(plain)):
                    ok, value = _match_plain(plain, spec.values)
                else:
                    ok, value = False, None
                if not ok:
                    if spec.default is None:
                        fail(name, i, category_problem(cell, spec.values), breaking_hint(name, spec))
                        value = spec.values[0]  # a placeholder: the row is dropped
                    else:
                        value = spec.default
                cells.append(value)
            out[name] = pd.Series(cells, dtype=object)
    if first_break:
        row, name, message, hint = first_break[0]
        raise DataError(f"table '{table}', column '{name}', row {row + 1}: the value {message}", hint=hint)
    result = pd.DataFrame(out, index=pd.RangeIndex(len(frame)))
    if strict or keep.all():
        return result
    DATA_LOG.warning("table '%s': %d of %d rows dropped by the schema the program declared (%s)", table,
                     int((~keep).sum()), len(frame),
                     ", ".join(f"column '{n}': {k} values outside its domain" for n, k in failures.items()))
    return result[keep].reset_index(drop=True)
