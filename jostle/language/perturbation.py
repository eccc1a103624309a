"""Input perturbation in the language: randomisation operators as values, their breach
analysis, `randomise` (a whole private table randomised locally, released as a public table),
and the reconstruction of a distribution from randomised values (issue 26).

The operators and their analysis are public computations in exact arithmetic
(jostle.privacy.randomisation); reconstruction is post-processing of public values
(jostle.privacy.reconstruction). Only `randomise` reads private data, and it charges first.

Built-ins (a domain is `lo, hi` for the whole numbers lo..hi, or a list of categories):
  keep_or_uniform(lo, hi, keep) | (values, keep)      R1: keep x with probability keep, else uniform
  cyclic_uniform(lo, hi, k) | (values, k)             R2: x + uniform in [-k, k], modulo the domain
  additive_uniform(lo, hi, k)                         x + uniform in [-k, k]; outputs lo-k..hi+k
  randomized_response_operator(lo, hi, eps) | (values, eps)
  mixture([w1, w2, ...], [R1, R2, ...])               R3: apply R_i with probability w_i
  transition(R, x, y), amplification(R), local_epsilon(R), has_breach(R, rho1, rho2),
  breach_threshold(R, rho2), posterior(R, prior, Q, y)
  randomise(t, {col: R, ...})                         a release: the randomised columns, public
  reconstruct(t, "col", R), estimate(dist, Q)         EM estimate of the original distribution

Exact answers are `ExactNumber`s: doubles (they compute like numbers) that carry their exact
Fraction (`.fraction` in Python) and print as both, e.g. `335/467 (0.717345)`. Numbers given as
parameters are read at their decimal text (0.2 is exactly 1/5, 0.00099 is 99/100000).

Registered in the language's core registry (jostle.language.builtin_registry.CORE) when
imported; jostle.language.builtins imports this module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from jostle.data.schema import Categorical, Numeric, Schema
from jostle.diagnostics.errors import JostleRuntimeError, PrivacyError
from jostle.diagnostics.source import Span
from jostle.language.builtin_registry import builtin, list_argument
from jostle.language.values import Builtin, BoundMethod, Closure, Record, Table, is_private, type_name
from jostle.privacy import randomisation as rnd
from jostle.privacy import replay
from jostle.privacy.measures import Budget
from jostle.privacy.reconstruction import Reconstruction, reconstruct_counts

MAX_DOMAIN = 2048
OPERATOR_HINT = ("make one with keep_or_uniform, cyclic_uniform, additive_uniform, randomized_response_operator "
                 "or mixture")
INFINITE_HINT = ("mix it with the uniform operator so that every output stays possible from every input, e.g. "
                 "R3 = mixture([0.5, 0.5], [R2, keep_or_uniform(lo, hi, 0)]) (the lecture's R3, gamma 1202/201)")


class ExactNumber(float):
    """A public number computed exactly: a double that keeps its Fraction and prints both."""

    __slots__ = ("fraction",)

    def __new__(cls, value: Fraction) -> ExactNumber:
        number = super().__new__(cls, float(value))
        number.fraction = Fraction(value)
        return number

    @property
    def exact_text(self) -> str:
        """`335/467 (0.717345)`, or just the integer."""
        if self.fraction.denominator == 1:
            return str(self.fraction.numerator)
        return f"{self.fraction} ({float(self.fraction):.6g})"

    def __str__(self) -> str:
        return self.exact_text

    __repr__ = __str__


def _exact_result(value: Fraction | float) -> float:
    return math.inf if value == math.inf else ExactNumber(Fraction(value))


@dataclass(frozen=True, eq=False)
class OperatorValue:
    """A randomisation operator on a public domain: the whole numbers lo..hi, or categories.

    Attributes:
        operator: The operator on the input indices 0..size-1.
        lo: The domain's first whole number (None for categories); input x is index x - lo and
            output index y is the value lo + y (an additive operator's outputs pass hi).
        categories: The categories (None for whole numbers); input and output index i is categories[i].
    """

    jostle_type = "randomisation operator"
    operator: rnd.Operator
    lo: int | None
    categories: tuple | None = None

    @property
    def domain(self) -> tuple:
        """The inputs, in index order."""
        if self.categories is not None:
            return self.categories
        return tuple(range(self.lo, self.lo + self.operator.size))

    @property
    def outputs(self) -> tuple:
        """The outputs, in the order of `operator.outputs`."""
        if self.categories is not None:
            return tuple(self.categories[y] for y in self.operator.outputs)
        return tuple(self.lo + y for y in self.operator.outputs)

    def same_domain(self, other: OperatorValue) -> bool:
        return (self.lo, self.categories, self.operator.size) == (other.lo, other.categories, other.operator.size)

    def input_index(self, value: Any, span: Span, what: str = "an input") -> int:
        """The index of an input value, or the error naming the domain."""
        if self.categories is not None:
            if value in self.categories:
                return self.categories.index(value)
        elif _whole(value) is not None and self.lo <= _whole(value) < self.lo + self.operator.size:
            return _whole(value) - self.lo
        raise JostleRuntimeError(f"{what} {value!r} is not in the operator's domain {self.describe_domain()}", span)

    def output_index(self, value: Any, span: Span) -> int:
        """The operator's own output (an index-space y) for an output value."""
        if self.categories is not None:
            if value in self.categories:
                return self.categories.index(value)
        elif _whole(value) is not None and _whole(value) - self.lo in self.operator.outputs:
            return _whole(value) - self.lo
        outs = self.outputs
        raise JostleRuntimeError(f"{value!r} is not an output of this operator (its outputs: "
                                 f"{outs[0]!r}..{outs[-1]!r})", span)

    def describe_domain(self) -> str:
        if self.categories is not None:
            return "[" + ", ".join(repr(c) for c in self.categories) + "]"
        return f"{self.lo}..{self.lo + self.operator.size - 1}"

    def __str__(self) -> str:
        return f"<operator {self.operator.name} on {self.describe_domain()}>"

    __repr__ = __str__


def _whole(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    return None


def exact_parameter(value: Any, what: str, span: Span) -> Fraction:
    """A public number as an exact Fraction, a double read at its decimal text (0.2 -> 1/5)."""
    if isinstance(value, ExactNumber):
        return value.fraction
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating, str)):
        raise JostleRuntimeError(f"{what} must be a number, got a {type_name(value)}", span)
    try:
        if isinstance(value, (float, np.floating)):
            if not math.isfinite(value):
                raise ValueError
            return Fraction(repr(float(value)))
        return Fraction(value if isinstance(value, str) else int(value))
    except (ValueError, ZeroDivisionError):
        raise JostleRuntimeError(f"{what} must be a finite number, got {value!r}", span) from None


def _domain(name: str, args: tuple, span: Span) -> tuple[int | None, tuple | None, int, Any]:
    """(lo, categories, size, parameter) from `lo, hi, p` or `values, p`."""
    usage = f"write {name}(lo, hi, ...) for the whole numbers lo..hi, or {name}([values...], ...) for categories"
    if len(args) == 2 and isinstance(args[0], (tuple, np.ndarray)):
        categories = tuple(list_argument(args[0], name, span))
        if not categories or len(set(categories)) != len(categories) or len(categories) > MAX_DOMAIN:
            raise JostleRuntimeError(f"{name}() needs 1 to {MAX_DOMAIN:,} distinct categories", span, usage)
        return None, categories, len(categories), args[1]
    if len(args) == 3:
        lo, hi = _whole(args[0]), _whole(args[1])
        if lo is None or hi is None or lo > hi:
            raise JostleRuntimeError(f"{name}() needs whole numbers lo <= hi, got {args[0]!r}, {args[1]!r}", span,
                                     usage)
        if hi - lo + 1 > MAX_DOMAIN:
            raise JostleRuntimeError(f"{name}(): the domain {lo}..{hi} has more than {MAX_DOMAIN:,} values (an "
                                     "operator holds its whole transition matrix)", span,
                                     "bin the column into fewer values first")
        return lo, None, hi - lo + 1, args[2]
    raise JostleRuntimeError(f"{name}() takes a domain and one parameter", span, usage)


def _make(name: str, args: tuple, span: Span, factory) -> OperatorValue:
    lo, categories, size, parameter = _domain(name, args, span)
    try:
        return OperatorValue(factory(size, parameter), lo, categories)
    except ValueError as error:
        raise JostleRuntimeError(f"{name}(): {error}", span) from None


def _operator_argument(value: Any, name: str, span: Span) -> OperatorValue:
    if not isinstance(value, OperatorValue):
        raise JostleRuntimeError(f"{name}() needs a randomisation operator, got a {type_name(value)}", span,
                                 OPERATOR_HINT)
    return value


# ---------------------------------------------------------------- the operators
@builtin("keep_or_uniform", 2, 3, doc="keep_or_uniform(lo, hi, keep): R1, keep x with probability keep, else uniform")
def _keep_or_uniform(interp, span, *args):
    return _make("keep_or_uniform", args, span,
                 lambda size, p: rnd.keep_or_uniform(size, exact_parameter(p, "keep", span)))


@builtin("cyclic_uniform", 2, 3, doc="cyclic_uniform(lo, hi, k): R2, x + uniform in [-k, k] modulo the domain")
def _cyclic_uniform(interp, span, *args):
    return _make("cyclic_uniform", args, span, lambda size, k: rnd.cyclic_uniform(size, _count(k, "k", span)))


@builtin("additive_uniform", 3, doc="additive_uniform(lo, hi, k): x + uniform in [-k, k], no wrap-around")
def _additive_uniform(interp, span, *args):
    return _make("additive_uniform", args, span, lambda size, k: rnd.additive_uniform(size, _count(k, "k", span)))


@builtin("randomized_response_operator", 2, 3,
         doc="randomized_response_operator(lo, hi, eps): keep x w.p. e^eps/(e^eps + m - 1), else another value")
def _randomized_response_operator(interp, span, *args):
    def factory(size: int, eps: Any) -> rnd.Operator:
        epsilon = exact_parameter(eps, "epsilon", span)
        if epsilon <= 0:
            raise ValueError(f"epsilon must be greater than 0, got {float(epsilon):g}")
        return rnd.randomized_response(size, epsilon)
    return _make("randomized_response_operator", args, span, factory)


def _count(value: Any, what: str, span: Span) -> int:
    number = _whole(value)
    if number is None:
        raise JostleRuntimeError(f"{what} must be a whole number, got {value!r}", span)
    return number


@builtin("mixture", 2, doc="mixture([w1, w2], [R1, R2]): apply R_i with probability w_i (R3)")
def _mixture(interp, span, weights, operators):
    ws = [exact_parameter(w, "a mixture weight", span) for w in list_argument(weights, "mixture", span)]
    ops = [_operator_argument(op, "mixture", span) for op in list_argument(operators, "mixture", span)]
    if len(ws) != len(ops) or not ops:
        raise JostleRuntimeError(f"mixture() needs one weight per operator, got {len(ws)} and {len(ops)}", span)
    if any(not op.same_domain(ops[0]) for op in ops):
        raise JostleRuntimeError("mixture(): the operators must share one domain", span)
    try:
        return OperatorValue(rnd.mixture(list(zip(ws, (op.operator for op in ops)))), ops[0].lo, ops[0].categories)
    except ValueError as error:
        raise JostleRuntimeError(f"mixture(): {error}", span,
                                 "e.g. mixture([0.5, 0.5], [R2, keep_or_uniform(lo, hi, 0)])") from None


# ---------------------------------------------------------------- the analysis
@builtin("transition", 3, doc="transition(R, x, y): p(x -> y), exact")
def _transition(interp, span, operator, x, y):
    op = _operator_argument(operator, "transition", span)
    return _exact_result(op.operator.probability(op.input_index(x, span), op.output_index(y, span)))


@builtin("amplification", 1, doc="amplification(R): gamma = max_y,x1,x2 p(x1 -> y) / p(x2 -> y) (inf allowed)")
def _amplification(interp, span, operator):
    return _exact_result(rnd.amplification(_operator_argument(operator, "amplification", span).operator))


@builtin("local_epsilon", 1, doc="local_epsilon(R): ln gamma, R is (ln gamma)-locally DP")
def _local_epsilon(interp, span, operator):
    return rnd.local_epsilon(rnd.amplification(_operator_argument(operator, "local_epsilon", span).operator))


@builtin("has_breach", 3, doc="has_breach(R, rho1, rho2): whether a (rho1, rho2) privacy breach is possible")
def _has_breach(interp, span, operator, rho1, rho2):
    gamma = rnd.amplification(_operator_argument(operator, "has_breach", span).operator)
    try:
        return rnd.has_breach(gamma, exact_parameter(rho1, "rho1", span), exact_parameter(rho2, "rho2", span))
    except ValueError as error:
        raise JostleRuntimeError(f"has_breach(): {error}", span) from None


@builtin("breach_threshold", 2, doc="breach_threshold(R, rho2): the largest rho1 with no (rho1, rho2) breach")
def _breach_threshold(interp, span, operator, rho2):
    gamma = rnd.amplification(_operator_argument(operator, "breach_threshold", span).operator)
    return _exact_result(rnd.breach_threshold(gamma, exact_parameter(rho2, "rho2", span)))


def _prior(interp, op: OperatorValue, prior: Any, span: Span) -> list[Fraction]:
    """A prior over the domain: "uniform", a list (domain order), a record (categories) or a function."""
    domain = op.domain
    if isinstance(prior, str):
        if prior != "uniform":
            raise JostleRuntimeError(f"unknown prior {prior!r}", span, 'write "uniform", a list, or a function of x')
        return [Fraction(1, len(domain))] * len(domain)
    if isinstance(prior, (Closure, Builtin, BoundMethod)):
        masses = [interp.call(prior, [x], span) for x in domain]
    elif isinstance(prior, Record):
        fields = prior.as_dict()
        masses = [fields.get(str(x), 0) for x in domain]
    else:
        masses = list_argument(prior, "posterior", span)
        if len(masses) != len(domain):
            raise JostleRuntimeError(f"the prior has {len(masses)} probabilities for {len(domain)} inputs", span)
    return [exact_parameter(p, "a prior probability", span) for p in masses]


def property_members(interp, domain: tuple, prop: Any, span: Span) -> list[int]:
    """The indices of the domain's values in a property: a predicate function or a list of values."""
    if isinstance(prop, (Closure, Builtin, BoundMethod)):
        chosen = []
        for i, x in enumerate(domain):
            verdict = interp.call(prop, [x], span)
            if not isinstance(verdict, (bool, np.bool_)):
                raise JostleRuntimeError(f"the property must return true or false, got a {type_name(verdict)}", span)
            if verdict:
                chosen.append(i)
        return chosen
    wanted = set(list_argument(prop, "property", span))
    return [i for i, x in enumerate(domain) if x in wanted]


@builtin("posterior", 4, doc="posterior(R, prior, Q, y): P(Q(x) | R(x) = y); prior a list, function or \"uniform\"")
def _posterior(interp, span, operator, prior, prop, observed):
    op = _operator_argument(operator, "posterior", span)
    masses = _prior(interp, op, prior, span)
    members = property_members(interp, op.domain, prop, span)
    try:
        return _exact_result(rnd.posterior(op.operator, masses, members, op.output_index(observed, span)))
    except ValueError as error:
        raise JostleRuntimeError(f"posterior(): {error}", span) from None


# ---------------------------------------------------------------- randomise (a release)
def _column_operators(table: Table, spec: Any, span: Span) -> list[tuple[str, OperatorValue]]:
    """The (column, operator) pairs of `randomise`, each checked against the column's PUBLIC domain."""
    if not isinstance(spec, Record) or not spec.fields:
        raise JostleRuntimeError(f"randomise() needs a record of column: operator, got a {type_name(spec)}", span,
                                 "e.g. randomise(t, {age: keep_or_uniform(0, 90, 0.5)})")
    pairs = []
    for column, value in spec.fields:
        if column not in table.schema:
            raise JostleRuntimeError(f"table '{table.name}' has no column {column!r}", span,
                                     f"its columns: {table.schema.names}")
        op = _operator_argument(value, "randomise", span)
        declared = table.schema[column]
        if isinstance(declared, Categorical):
            if op.categories != tuple(declared.values):
                raise JostleRuntimeError(
                    f"column '{column}' has the values {list(declared.values)}; the operator's domain is "
                    f"{op.describe_domain()}", span,
                    "build the operator over the column's declared values, e.g. "
                    f"keep_or_uniform({list(declared.values)!r}, 0.5)")
        elif isinstance(declared, Numeric):
            lo, hi = _whole(declared.lo), _whole(declared.hi)
            if lo is None or hi is None:
                raise JostleRuntimeError(f"column '{column}' has bounds [{declared.lo}, {declared.hi}], not whole "
                                         "numbers: randomise needs an integer domain", span,
                                         "declare whole-number bounds, or bin the column")
            if op.categories is not None or (op.lo, op.lo + op.operator.size - 1) != (lo, hi):
                raise JostleRuntimeError(
                    f"column '{column}' is bounded by {lo}..{hi}; the operator's domain is {op.describe_domain()}",
                    span, f"build the operator over the column's declared bounds, e.g. keep_or_uniform({lo}, {hi}, "
                    "0.5)")
        else:
            raise JostleRuntimeError(f"randomise() cannot randomise column '{column}'", span)
        pairs.append((column, op))
    return pairs


def _truth(table: Table, column: str, op: OperatorValue) -> np.ndarray:
    """Each row's input index: categories by their declared position; numbers rounded, then
    clipped into the declared bounds (public) and shifted to 0..size-1."""
    values = table.frame[column]
    if op.categories is not None:
        index = {v: i for i, v in enumerate(op.categories)}
        return np.fromiter((index[v] for v in values.tolist()), dtype=np.int64, count=len(values))
    numbers = np.clip(np.round(values.to_numpy(dtype=np.float64)), op.lo, op.lo + op.operator.size - 1)
    return numbers.astype(np.int64) - op.lo


def _refuse_unless_whole_replace_one(table: Table, span: Span) -> None:
    """The rules and messages of randomized_response (jostle.language.mechanisms): one output per
    row reveals the number of rows, which only a whole replace_one table makes public."""
    if not table.unit.is_replace_one:
        raise PrivacyError(
            f"randomise releases one randomised row per row, which reveals the number of rows of "
            f"'{table.name}'; under its unit {table.unit} ({table.unit.describe()}) that number is private", span,
            "the curator binds the table under replace_one when its row count is public (e.g. the number of "
            "survey respondents): public_rows=True or unit=\"replace_one\"; apply it to the whole table")
    if not table.public_rows:
        raise PrivacyError(
            f"randomise releases one randomised row per row, and '{table.name}' is no longer the whole table "
            "(where or partition chose some rows): the number of rows would reveal how many were chosen", span,
            "apply it to the whole table, then keep the rows you need")


@builtin("randomise", 2, privacy="release",
         doc="randomise(t, {col: R, ...}): every row randomised locally; a public table of the named columns")
def _randomise(interp, span, table, spec):
    """Randomise the named columns of a whole replace_one table, each row independently.

    Privacy: one row's output is (R_1(x_1), ..., R_c(x_c)) with independent coins, so for any
    output row o, p(x -> o) / p(x' -> o) = prod_i p_i(x_i -> o_i) / p_i(x'_i -> o_i) <= prod_i gamma_i:
    the row-level mechanism has amplification prod gamma_i, i.e. it is (sum_i ln gamma_i)-locally
    DP. Rows use independent coins, and replacing one row changes only that row's output law, by
    a factor at most prod gamma_i: the released table is (sum_i ln gamma_i)-DP for replace-one
    neighbours. Its length (the row count) is public under replace_one (whole tables only).
    Charged: a pure epsilon >= sum ln gamma_i, an exact rational rounded UP
    (randomisation.epsilon_upper_bound), at the table's node, BEFORE any draw. An infinite gamma
    (an output impossible from some input) has no epsilon: refused before any charge.
    Columns not named are not released.
    """
    if not isinstance(table, Table):
        raise JostleRuntimeError(f"randomise() needs a table, got a {type_name(table)}", span)
    if is_private(spec):
        raise JostleRuntimeError("randomise(): the operators must be public", span)
    pairs = _column_operators(table, spec, span)
    gammas = [rnd.amplification(op.operator) for _, op in pairs]
    for (column, op), gamma in zip(pairs, gammas):
        if gamma == math.inf:
            raise PrivacyError(
                f"randomise(): the operator for '{column}' ({op.operator.name}) has an infinite amplification: "
                "some output has probability 0 from one input and not from another, so seeing it rules inputs "
                "out (a privacy breach no epsilon bounds, like the lecture's R2 and the age example)", span,
                INFINITE_HINT)
    if table.private:
        _refuse_unless_whole_replace_one(table, span)
        epsilon = rnd.epsilon_upper_bound(gammas)
        interp.accountant.charge(Budget.of(epsilon), table.node, "randomise",
                                 f"randomise({table.name}, {', '.join(c for c, _ in pairs)})", span)
    truths = [_truth(table, column, op) for column, op in pairs]
    outputs = np.column_stack([rnd.sample(interp.randomness, op.operator, truth) for (_, op), truth
                               in zip(pairs, truths)]) if truths[0].size else np.zeros((0, len(pairs)), np.int64)
    if table.private:
        outputs = replay.released(interp.randomness, "randomise", lambda: _row_codes(truths, pairs), outputs,
                                  "hamming", 1)
    return _public_table(table, pairs, outputs, interp.accountant.root, span)


def _row_codes(truths: list[np.ndarray], pairs: list[tuple[str, OperatorValue]]) -> np.ndarray:
    """One exact code per row for the replay claim (a row's inputs, in mixed radix)."""
    codes = np.zeros(truths[0].size, dtype=object)
    for truth, (_, op) in zip(truths, pairs):
        codes = codes * op.operator.size + truth.astype(object)
    return codes


def _public_table(table: Table, pairs: list[tuple[str, OperatorValue]], outputs: np.ndarray, node: Any,
                  span: Span) -> Table:
    """The release: one column per randomised column (an additive operator's wider bounds)."""
    columns, schema = {}, {}
    for j, (column, op) in enumerate(pairs):
        index = outputs[:, j]
        if op.categories is not None:
            columns[column] = [op.categories[i] for i in index.tolist()]
            schema[column] = Categorical(op.categories)
        else:
            first, last = op.lo + op.operator.outputs[0], op.lo + op.operator.outputs[-1]
            columns[column] = index + op.lo
            schema[column] = Numeric(first, last, integer=True)
    import pandas as pd  # not at start-up (tests/test_import_cost.py)

    frame = pd.DataFrame(columns)
    return Table(frame, Schema.of(schema), False, f"randomised_{table.name}", node, span)


# ---------------------------------------------------------------- reconstruction (post-processing)
def reconstruction_of(table: Any, column: Any, operator: Any, span: Span, iterations: Any = None,
                      tolerance: Any = None) -> Reconstruction:
    """EM on a public randomised column (see jostle.privacy.reconstruction)."""
    op = _operator_argument(operator, "reconstruct", span)
    if not isinstance(table, Table):
        raise JostleRuntimeError(f"reconstruct() needs a table, got a {type_name(table)}", span)
    if table.private:
        raise PrivacyError(f"reconstruct() reads the randomised values of a public table; '{table.name}' is private",
                           span, "randomise it first: r = randomise(t, {col: R}); reconstruct(r, \"col\", R)")
    if not isinstance(column, str) or column not in table.schema:
        raise JostleRuntimeError(f"table '{table.name}' has no column {column!r}", span,
                                     f"its columns: {table.schema.names}")
    index = {value: j for j, value in enumerate(op.outputs)}
    try:
        positions = np.fromiter((index[v if op.categories is not None else _whole(v)] for v in
                                 table.frame[column].tolist()), dtype=np.int64, count=len(table.frame))
    except KeyError as missing:
        raise JostleRuntimeError(f"column '{column}' holds {missing.args[0]!r}, not an output of {op}", span,
                                 "reconstruct with the operator the column was randomised with") from None
    counts = np.bincount(positions, minlength=len(op.outputs))
    limits = {}
    if iterations is not None:
        limits["iterations"] = _count(iterations, "iterations", span)
    if tolerance is not None:
        limits["tolerance"] = float(exact_parameter(tolerance, "tolerance", span))
    try:
        return reconstruct_counts(op.operator, counts, op.domain, **limits)
    except ValueError as error:
        raise JostleRuntimeError(f"reconstruct(): {error}", span) from None


@builtin("reconstruct", 3, keywords=("iterations", "tolerance"),
         doc='reconstruct(r, "col", R): the estimated distribution of the original values (a table value, probability)')
def _reconstruct(interp, span, table, column, operator, iterations=None, tolerance=None):
    result = reconstruction_of(table, column, operator, span, iterations, tolerance)
    import pandas as pd  # not at start-up

    frame = pd.DataFrame({"value": list(result.values), "probability": result.probabilities})
    op = _operator_argument(operator, "reconstruct", span)
    value_spec = Categorical(op.categories) if op.categories is not None else \
        Numeric(op.lo, op.lo + op.operator.size - 1, integer=True)
    return Table(frame, Schema.of({"value": value_spec, "probability": Numeric(0, 1)}), False,
                 f"reconstructed_{column}", table.node, span)


@builtin("estimate", 2, doc="estimate(dist, Q): the mass of a property (a function or a list of values) under dist")
def _estimate(interp, span, distribution, prop):
    if not isinstance(distribution, Table) or distribution.private or \
            set(distribution.schema.names) != {"value", "probability"}:
        raise JostleRuntimeError("estimate() needs a distribution made by reconstruct, got a "
                                 f"{type_name(distribution)}",
                                 span, 'dist = reconstruct(r, "col", R)')
    values = tuple(distribution.frame["value"].tolist())
    members = property_members(interp, values, prop, span)
    return float(distribution.frame["probability"].to_numpy()[members].sum())
