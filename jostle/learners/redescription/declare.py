"""Public declarations of a redescription task: the two views' schemas and the miner's settings.

How the tables of a call (their public schemas) or a Python user's declared domains become the
two `views.ViewSchema`s the miner codes the rows against, and how a call's keywords become
`algorithms.MinerSettings`, from public facts only (names, declared domains, bounds, edges and
settings; never a row):

    view_from_schema     the language's route: a table's schema (jostle.data.schema), minus
                         the entity key; categorical columns keep their declared values, numeric
                         ones are cut on declared `edges` or into `bins` equal-width bins on
                         their declared bounds
    view_from_domains    the Python route: column -> a list of categories, a
                         `learnerkit.encoding.NumericBins`, or a `views.Attribute`
    check_edges          declared bin edges: finite, strictly increasing, at least two
    settings_from        the algorithm, its settings and the constraints, checked
    miner_settings       the same as `algorithms.MinerSettings`

Numeric bins are public: declared edges, equal-width bins on the declared bounds, or edges
released by a charged DP quantile (e.g. `stats.private_quantile` in the language, whose
released values are public and may then be declared as `edges`). Never Freedman-Diaconis or any
edge read off the private rows: one entity moving an edge relabels many entities and breaks the
Gini score's sensitivity (see `views`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Mapping, Sequence

import numpy as np

from jostle.data.schema import Categorical, Numeric, Schema
from jostle.learners.redescription.views import Attribute, ViewSchema, categorical, equal_width, numeric

#: Equal-width bins per numeric column when none are declared (4: three interior split points).
DEFAULT_BINS = 4
#: The most bins a numeric column may be cut into (each interior edge is a split candidate).
MAX_BINS = 256
#: The settings' names, defaults and bounds (public); the constraints are `extract.Constraints`'.
ALGORITHM_KEYWORDS = ("algorithm", "tries", "alternations", "omega", "depth")
CONSTRAINT_KEYWORDS = ("min_support", "max_support_share", "max_pvalue", "min_jaccard", "max_extensions",
                       "max_relative_noise")
SETTING_KEYWORDS = (*ALGORITHM_KEYWORDS, *CONSTRAINT_KEYWORDS)
DEFAULT_ALGORITHM = "MCMCTreePair"
#: Whole-number settings: (low, high) inclusive (depth: up to `algorithms.MAX_DEPTH`).
#: `runs` is not the miner's: the runs the analyst plans at this budget, which a ChoiceMaker reads.
WHOLE: dict[str, tuple[int, int | None]] = {
    "tries": (1, 100), "alternations": (1, 100), "depth": (1, None), "min_support": (0, 10 ** 12),
    "max_extensions": (0, 10), "runs": (1, 10 ** 6)}
#: Share settings: (low, high, low included, high included).
SHARES = {"omega": (0.0, 1.0, False, False), "max_support_share": (0.0, 1.0, False, True),
          "max_pvalue": (0.0, 1.0, False, True), "min_jaccard": (0.0, 1.0, True, True)}


class DeclarationError(ValueError):
    """A declaration that cannot make a redescription task, with the fix (public facts only).

    Attributes:
        message: What is wrong.
        hint: How to fix it.
    """

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message + (f" ({hint})" if hint else ""))
        self.message = message
        self.hint = hint


# ---------------------------------------------------------------- the views
def check_edges(column: str, edges: Any) -> tuple[float, ...]:
    """Declared bin edges of a numeric column as floats.

    Raises:
        DeclarationError: Not a list of at least two finite, strictly increasing numbers.
    """
    if isinstance(edges, (str, bytes)) or not isinstance(edges, (Sequence, np.ndarray)):
        raise DeclarationError(f"the bin edges of '{column}' must be a list of numbers, got {edges!r}",
                               "e.g. [0, 18, 40, 65, 120]")
    values = []
    for edge in edges:
        if isinstance(edge, bool) or not isinstance(edge, (int, float, Fraction, np.integer, np.floating)) \
                or not math.isfinite(float(edge)):
            raise DeclarationError(f"the bin edges of '{column}' must be finite numbers, got {edge!r}")
        values.append(float(edge))
    if len(values) < 2 or len(values) > MAX_BINS + 1:
        raise DeclarationError(f"'{column}' needs 2 to {MAX_BINS + 1} bin edges, got {len(values)}",
                               "the first and last edges bound the values (others are clipped into the end bins)")
    if any(b <= a for a, b in zip(values, values[1:])):
        raise DeclarationError(f"the bin edges of '{column}' must increase strictly, got {values}")
    return tuple(values)


def _bins(bins: Any) -> int:
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or not 1 <= bins <= MAX_BINS:
        raise DeclarationError(f"bins must be a whole number in 1..{MAX_BINS} (public), got {bins!r}",
                               "the number of equal-width bins of every numeric column without declared edges")
    return int(bins)


def attribute_from_spec(column: str, spec: Any, *, bins: int = DEFAULT_BINS,
                        edges: Sequence[float] | None = None) -> Attribute:
    """The attribute of one column of a public schema.

    Args:
        column: The column's name.
        spec: Its `jostle.data.schema` domain (`Categorical` or `Numeric`).
        bins: Equal-width bins on the declared bounds, when `edges` is None.
        edges: Declared bin edges (public).

    Raises:
        DeclarationError: Edges for a categorical column, or bad edges or bins.
    """
    if isinstance(spec, Categorical):
        if edges is not None:
            raise DeclarationError(f"edges names '{column}', a categorical column",
                                   "declare bin edges for numeric columns only")
        return categorical(column, spec.values)
    if not isinstance(spec, Numeric):
        raise DeclarationError(f"the column '{column}' has no categorical or numeric domain")
    if edges is not None:
        return numeric(column, check_edges(column, edges))
    count = _bins(bins)
    if spec.integer:  # whole numbers: no more bins than there are values
        count = max(1, min(count, int(math.floor(spec.hi) - math.ceil(spec.lo)) + 1))
    if not spec.hi > spec.lo:
        return numeric(column, (float(spec.lo), float(spec.lo) + 1.0))  # one value: one bin
    return equal_width(column, spec.lo, spec.hi, count)


def view_from_schema(view_name: str, schema: Schema, key: str | None = None, *, bins: int = DEFAULT_BINS,
                     edges: Mapping[str, Sequence[float]] | None = None) -> ViewSchema:
    """A view's public schema from a table's: every column but the entity key.

    Args:
        view_name: The view's name (the table's).
        schema: The table's public schema.
        key: The entity key column, which is not an attribute.
        bins: Equal-width bins of a numeric column without declared edges.
        edges: Column -> declared bin edges (only the columns of this table are read).

    Raises:
        DeclarationError: No attribute left, or a bad declaration.
    """
    edges = edges or {}
    attributes = [attribute_from_spec(name, schema[name], bins=bins, edges=edges.get(name))
                  for name in schema.names if name != key]
    return _view(view_name, attributes)


def view_from_domains(view_name: str, domains: Mapping[str, Any]) -> ViewSchema:
    """A view's public schema from declared domains (the Python route).

    Args:
        view_name: The view's name.
        domains: Column -> a `views.Attribute` (`views.numeric(name, edges)`, ...), a
            `learnerkit.encoding.NumericBins(lower, upper, bins)` (equal-width bins), or a list
            of categories.

    Raises:
        DeclarationError: A domain that is none of these.
    """
    if isinstance(domains, ViewSchema):
        return domains
    if not isinstance(domains, Mapping) or not domains:
        raise DeclarationError(f"the {view_name} view's domains must be a mapping of columns to domains, got "
                               f"{type(domains).__name__}",
                               "e.g. {'sex': ['F', 'M'], 'age': NumericBins(0, 100, 5)}, or a views.ViewSchema")
    attributes = []
    for column, domain in domains.items():
        column = str(column)
        if isinstance(domain, Attribute):
            if domain.name != column:
                raise DeclarationError(f"the domain given for '{column}' is the attribute '{domain.name}'")
            attributes.append(domain)
        elif type(domain).__name__ == "NumericBins":  # the kit's equal-width bins (no import of pandas)
            attributes.append(equal_width(column, domain.lower, domain.upper, _bins(domain.bins)))
        elif isinstance(domain, (Sequence, np.ndarray)) and not isinstance(domain, (str, bytes)) and len(domain):
            if len(set(domain)) != len(domain):
                raise DeclarationError(f"the categories of '{column}' repeat a value")
            attributes.append(categorical(column, tuple(domain)))
        else:
            raise DeclarationError(f"the domain of '{column}' must be a list of categories, a NumericBins or a "
                                   f"views.Attribute, got {domain!r}",
                                   "numeric columns: NumericBins(lower, upper, bins) or views.numeric(name, edges)")
    return _view(view_name, attributes)


def _view(view_name: str, attributes: list[Attribute]) -> ViewSchema:
    if not attributes:
        raise DeclarationError(f"the view '{view_name}' has no attribute besides its key",
                               "each view needs at least one categorical or numeric column")
    try:
        return ViewSchema(view_name, tuple(attributes))
    except ValueError as error:
        raise DeclarationError(str(error), "declare a categorical value, or two bins of a numeric column") from None


def check_edges_used(edges: Mapping[str, Any], schemas: Sequence[Schema], key: str | None) -> None:
    """Every column named in `edges` is a numeric column of one of the views (not the key).

    Raises:
        DeclarationError: A column no view has, the key, or a categorical one.
    """
    for column in edges:
        found = [schema[column] for schema in schemas if column in schema]
        if column == key or not found:
            names = sorted({name for schema in schemas for name in schema.names if name != key})
            raise DeclarationError(f"edges names '{column}', which is not an attribute of either view",
                                   f"the attributes are {names}")
        if not all(isinstance(spec, Numeric) for spec in found):
            raise DeclarationError(f"edges names '{column}', a categorical column",
                                   "declare bin edges for numeric columns only")


def initial_attribute(schemas: Sequence[ViewSchema], name: Any) -> tuple[int, int] | None:
    """The (view, attribute index) of a declared initial target `name`, or None for none.

    Raises:
        DeclarationError: A name that is not exactly one attribute of the two views.
    """
    if name is None:
        return None
    found = [(view, schema.names.index(name)) for view, schema in enumerate(schemas)
             if isinstance(name, str) and name in schema.names]
    if len(found) != 1:
        names = [n for schema in schemas for n in schema.names]
        which = "both views" if found else "neither view"
        raise DeclarationError(f"initial_target={name!r} names an attribute of {which}",
                               f"name one attribute of one view (the attributes are {names}), or leave it out "
                               "(each try then starts from a random one)")
    return found[0]


# ---------------------------------------------------------------- the settings
def settings_from(declared: Mapping[str, Any]) -> dict[str, Any]:
    """The algorithm, its settings and the constraints a call declares, checked (public).

    Args:
        declared: Any of `SETTING_KEYWORDS` and `runs` (the rest is ignored); missing ones take
            the defaults of `algorithms.MinerSettings` and `extract.Constraints`.

    Returns:
        The given settings, as exact numbers (omega a Fraction).

    Raises:
        DeclarationError: An unknown algorithm (only the exact samplers are offered), or a
            setting out of its range.
    """
    from jostle.learners.redescription.algorithms import ALGORITHMS, MAX_DEPTH

    out: dict[str, Any] = {}
    algorithm = declared.get("algorithm", DEFAULT_ALGORITHM)
    if algorithm not in ALGORITHMS:
        raise DeclarationError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}",
                               "MCMCTreePair on small data or small budgets, the alternations AltExpM and "
                               "AltMCMC on larger data with larger budgets")
    out["algorithm"] = algorithm
    for name, (low, high) in WHOLE.items():
        high = MAX_DEPTH if high is None else high  # depth: the miner's own bound
        if name in declared:
            value = declared[name]
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
                raise DeclarationError(f"{name} must be a whole number in {low}..{high} (public), got {value!r}")
            out[name] = int(value)
    for name, (low, high, low_in, high_in) in SHARES.items():
        if name in declared:
            value = declared[name]
            number = value if isinstance(value, Fraction) else None
            if number is None and not isinstance(value, bool) and isinstance(value, (int, float, np.number)) \
                    and math.isfinite(float(value)):
                number = Fraction(value).limit_denominator(10 ** 9) if isinstance(value, float) else Fraction(value)
            if number is None or not ((low < number or (low_in and number == low))
                                      and (number < high or (high_in and number == high))):
                span = f"{'[' if low_in else '('}{low:g}, {high:g}{']' if high_in else ')'}"
                raise DeclarationError(f"{name} must be a number in {span} (public), got {value!r}")
            out[name] = number if name == "omega" else float(number)
    if "max_relative_noise" in declared:
        value = declared["max_relative_noise"]
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) \
                or not math.isfinite(float(value)) or value <= 0:
            raise DeclarationError(f"max_relative_noise must be a finite number > 0 (public), got {value!r}")
        out["max_relative_noise"] = float(value)
    return out


def miner_settings(declared: Mapping[str, Any]) -> Any:
    """`settings_from`, as an `algorithms.MinerSettings` (with its `extract.Constraints`).

    Raises:
        DeclarationError: See `settings_from`, and settings the miner refuses.
    """
    from jostle.learners.redescription.algorithms import MinerSettings
    from jostle.learners.redescription.extract import Constraints

    checked = settings_from(declared)
    constraints = {name: checked[name] for name in CONSTRAINT_KEYWORDS if name in checked}
    settings = {name: checked[name] for name in ALGORITHM_KEYWORDS if name in checked}
    try:
        made = MinerSettings(constraints=Constraints(**constraints), **settings)  # its own checks (steps)
    except (ValueError, TypeError) as error:
        raise DeclarationError(str(error)) from None
    return made


__all__ = ["DEFAULT_BINS", "MAX_BINS", "SETTING_KEYWORDS", "ALGORITHM_KEYWORDS", "CONSTRAINT_KEYWORDS",
           "DEFAULT_ALGORITHM", "DeclarationError", "check_edges", "attribute_from_spec", "view_from_schema",
           "view_from_domains", "check_edges_used", "initial_attribute", "settings_from", "miner_settings"]
