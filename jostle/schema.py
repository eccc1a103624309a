"""Public schemas and the loading of private tables under them.

A schema declares every column's domain, and it is *public*: bounds and category lists come
from the person writing the program or the schema file, never from the private data.

Rules applied when a table is loaded (they are the only rules; nothing is dropped silently):
  * numeric values outside [lo, hi] are clamped to the nearest bound;
  * a missing value (empty cell, NaN) or a category outside the declared list is replaced by
    the column's declared `default` if it has one, and otherwise is an error naming the column,
    the row and the value;
  * text in a numeric column that is not a number is an error (or the default, if declared);
  * a column the schema declares but the file lacks is an error; extra columns in the file are
    ignored (they are not part of the table).
These errors describe the private data, so they are meant for the data's curator who runs the
load; declare defaults to make loading total.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from jostle.errors import DataError


MAX_BOUND = 1e12  # see jostle.sensitivity: keeps every private value far from overflow


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


def load_schema_file(path: Path) -> Schema:
    """Read a JSON schema file: {"column": {"type": ..., ...}, ...}."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise DataError(f"cannot read schema file {path}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise DataError(f"cannot read schema file {path}: it is not UTF-8 text ({error.reason} at byte "
                        f"{error.start})", hint="save the schema file as UTF-8") from None
    except json.JSONDecodeError as error:
        raise DataError(f"schema file {path} is not valid JSON: {error.msg} at line {error.lineno}") from None
    if not isinstance(data, dict):
        raise DataError(f"schema file {path} must hold a JSON object of columns")
    columns = data.get("columns", data)
    if not isinstance(columns, dict):
        raise DataError(f"schema file {path}: \"columns\" must be a JSON object of columns, "
                        f"got a {type(columns).__name__}")
    try:
        return Schema.of(columns)
    except DataError as error:  # errors from a file have no place in a program: name the file
        error.message = f"schema file {path}: {error.message}"
        error.args = (error.message,)
        raise


def schema_file_for(csv_path: Path) -> Path:
    """Where a schema file beside a data file is looked for: data.csv -> data.schema.json."""
    return csv_path.with_name(csv_path.stem + ".schema.json")


def read_csv(path: str | Path) -> pd.DataFrame:
    """Read a CSV file as text columns (typing happens under the schema)."""
    path = Path(path)
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except FileNotFoundError:
        raise DataError(f"data file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise DataError(f"cannot read data file {path}: {error}") from None
    except pd.errors.EmptyDataError:
        raise DataError(f"data file {path} is empty", hint="a CSV needs at least a header row") from None
    except pd.errors.ParserError as error:
        raise DataError(f"data file {path} is not valid CSV: {error}") from None


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip() == "" or value.strip().lower() in ("na", "nan", "null")
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _match_category(value: Any, values: tuple) -> tuple[bool, Any]:
    """Match a raw cell against the declared categories, allowing '1' to match 1."""
    if value in values:
        return True, value
    text = str(value).strip()
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


def conform(frame: pd.DataFrame, schema: Schema, table: str) -> pd.DataFrame:
    """Apply the schema's rules to a raw frame, giving the table Jostle computes on.

    Raises:
        DataError: A declared column is missing, or a value breaks the schema and the column
            has no default. The message names the table, the column and the (1-based) row.
    """
    missing = [name for name in schema.names if name not in frame.columns]
    if missing:
        raise DataError(
            f"table '{table}' has no column {', '.join(repr(m) for m in missing)}",
            hint=f"its columns are {list(map(str, frame.columns))}; fix the schema or the file",
        )
    out = {}
    for name, spec in schema.columns:
        raw = frame[name].tolist()
        if isinstance(spec, Numeric):
            values = np.empty(len(raw), dtype=float)
            for i, cell in enumerate(raw):
                number: float | None
                if _is_missing(cell):
                    number = None
                    problem = "is missing"
                else:
                    try:
                        number = float(cell)
                        problem = ""
                        if math.isnan(number):
                            number, problem = None, "is NaN"
                    except (TypeError, ValueError):
                        number, problem = None, f"{cell!r} is not a number"
                if number is None:
                    if spec.default is None:
                        raise DataError(
                            f"table '{table}', column '{name}', row {i + 1}: the value {problem}",
                            hint=f"fix the data, or declare a default for '{name}' "
                            f"(e.g. numeric({spec.lo}, {spec.hi}, default={spec.lo}))",
                        )
                    number = float(spec.default)
                values[i] = number
            out[name] = spec.conform(values)
        else:
            cells = []
            for i, cell in enumerate(raw):
                ok, value = (False, None) if _is_missing(cell) else _match_category(cell, spec.values)
                if not ok:
                    if spec.default is None:
                        what = "is missing" if _is_missing(cell) else f"{cell!r} is not one of {list(spec.values)}"
                        raise DataError(
                            f"table '{table}', column '{name}', row {i + 1}: the value {what}",
                            hint=f"fix the data, add the value to the column's categories, or declare "
                            f"a default for '{name}'",
                        )
                    value = spec.default
                cells.append(value)
            out[name] = pd.Series(cells, dtype=object)
    return pd.DataFrame(out, index=pd.RangeIndex(len(frame)))
