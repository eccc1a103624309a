"""Private evaluation of a released classifier, and the private train/test split.

Core built-ins (registered in `builtin_registry.CORE` when this module is imported, which
jostle.language.builtins_choice does; they work on any classifier family's model, the learner
kit's `ClassifierModel`):

  * `private_accuracy(model, t, "class", epsilon=E)`: the share of rows labelled right;
  * `confusion_matrix(model, t, "class", epsilon=E)`: one noisy count per (true, predicted) cell;
  * `auc(model, t, "class", "yes", bins=10, epsilon=E)`: the area under the ROC curve of the
    class "yes" from noisy per-bin counts of positives and negatives;
  * `calibration(model, t, "class", "yes", bins=10, epsilon=E)`: per predicted-probability bin,
    noisy counts of rows and of positives, and their rate;
  * `split(t, 0.7)` or `split(t, [0.6, 0.2, 0.2])`: disjoint parts of a table that stay one
    dataset in the ledger (releases on different parts compose in parallel).

The budget is `epsilon=` or `rho=` (a zCDP program), else what a `{{ }}` would get here
(`calls.budget_of`); on a public table the answer is exact and free.

**Sensitivity (every evaluation release).** Each row of `t` is mapped to at most one public cell
by a function of that row and of public values only (the released model, the public class list,
the public score bins: `jostle.learnerkit.evaluation`). One individual adds or removes at most s
rows of `t` (its stability, `entities.need_bounded`: 1 for a row table, 2 for replace_one, k after
bound_per_key(k); an unbounded entity table is refused before anything is charged), so the count
vector moves by at most s in L1 and in L2, all counts in one direction: a histogram's
sensitivity. It is released as one histogram (a `Private` vector, l1 = l2 = s) by the language's
own mechanisms: `geometric` at epsilon (scale s / epsilon per cell; the cells of one release
compose in parallel, so the whole vector costs epsilon) or, given a rho, `gaussian` at that rho
(sigma^2 >= s^2 / (2 rho)). The accountant is charged once, before any noise is drawn, and refuses
over budget with nothing spent. Everything returned is post-processing of the released counts
(`jostle.learnerkit.evaluation.*_from_counts`).

Accuracy divides the noisy count of right rows by the noisy count of all rows (the sum of the two
released cells, at least 1). The number of rows is not treated as public: under the row and
entity units it is private, and releasing it costs nothing more here (the two cells are one
release at epsilon, each row in exactly one of them).

**The split.** A row's part is a function of the row alone: a keyed hash (pandas'
`hash_pandas_object`, SipHash under a key of 16 hex digits, 64 bits, drawn from the session's
randomness and never shown; parallel composition does not rest on its secrecy) of its exact content (numbers by their bits, other cells by type and repr: one notion of
equal rows, finer than anything a row function can tell apart, for the hash and the rank alike)
and of its rank among equal rows (so k copies of one row spread over the
parts as k independent rows would). Adding or removing one row therefore adds or removes one row
of exactly one part, whatever the key: parallel composition (McSherry 2009, Thm 4) holds even for
an author who knew the key (a seeded session), and the parts are `ParallelGroup` parts of the
table's node, as `partition`'s are. The key only makes the split a fair random sample the author
cannot steer. Under `entity(key)` the hash is of the entity's key alone, so an entity's rows stay
together (one individual lands in one part); under replace_one, or a table of stability above 1,
one individual's rows may land in two parts, so the parts keep the table's node and compose in
sequence (entities.partition_is_parallel decides, as for `partition`). The parts' sizes are
private (public_rows is dropped). An engine table's rows are collected once to be split.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jostle.data.schema import Categorical
from jostle.diagnostics.errors import JostleRuntimeError
from jostle.diagnostics.source import Span
from jostle.language import mechanisms
from jostle.language.builtin_registry import builtin
from jostle.language.calls import budget_of, check_keywords
from jostle.language.entities import need_bounded, partition_is_parallel
from jostle.language.joins import hashable
from jostle.language.sensitivity import refuse
from jostle.language.values import CellLabels, Private, Record, Table, is_private, type_name
from jostle.privacy.measures import AnyBudget, RhoZCDPBudget

MAX_BINS = 1000
MAX_PARTS = 100


# ---------------------------------------------------------------- the shared checks
def _model(value: Any, span: Span, who: str) -> Any:
    from jostle.learnerkit.language import ClassifierModel

    if not isinstance(value, ClassifierModel):
        raise JostleRuntimeError(f"{who} needs a trained model (a tree or a rule list), got a {type_name(value)}",
                                 span, 'train one with e.g. FriedmanSchuster(train, "class", epsilon=0.5)')
    return value


def _table_and_target(model: Any, table: Any, target: Any, span: Span, who: str) -> Table:
    """The evaluated table, checked on its public schema: the class column and every attribute
    the model reads exist and are categorical (decided before anything is read or charged)."""
    if not isinstance(table, Table):
        raise JostleRuntimeError(f"{who} needs a table, got a {type_name(table)}", span)
    if is_private(target) or not isinstance(target, str) or target not in table.schema:
        raise JostleRuntimeError(f"{who}: table '{table.name}' has no column {target!r}", span,
                                 f"its columns are {table.schema.names}")
    for name in [*model.attributes, target]:
        if name not in table.schema:
            raise JostleRuntimeError(f"{who}: table '{table.name}' has no column '{name}' the {model.noun} reads",
                                     span, f"its columns are {table.schema.names}")
        if not isinstance(table.schema[name], Categorical):
            raise JostleRuntimeError(f"{who}: column '{name}' is numeric; bin it into the public bins the "
                                     f"{model.noun} was trained on first", span,
                                     f't.bin("{name}", [edges...])')
    return table


def _positive(model: Any, label: Any, span: Span, who: str) -> Any:
    if is_private(label):
        raise refuse(f"{who}: the positive class must be public", label, span)
    if label not in model.classes:
        raise JostleRuntimeError(f"{who}: {label!r} is not a class of the {model.noun}", span,
                                 f"its classes are {list(model.classes)}")
    return label


def _bins(kwargs: dict[str, Any], span: Span, who: str) -> int:
    value = kwargs.get("bins", 10)
    if is_private(value):
        raise refuse(f"{who}: bins must be public", value, span)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= MAX_BINS:
        raise JostleRuntimeError(f"{who}: bins must be a whole number from 1 to {MAX_BINS}, got {value!r}", span)
    return int(value)


def _budget(interp: Any, table: Table, kwargs: dict[str, Any], span: Span, who: str) -> AnyBudget | None:
    """The release's budget on a private table (None on a public one: exact and free); the
    table's stability must be bounded. Both checked before any row is read."""
    if not table.private:
        return None
    budget = budget_of(interp, {k: v for k, v in kwargs.items() if k != "bins"}, span, who)
    need_bounded(table, who.rstrip("()"), span)
    # Over budget: refused here, before the model reads any row (the mechanism checks again when
    # it charges), so a refusal takes no longer on a bigger table.
    interp.accountant.check(interp.accountant.accounting.cost(budget, span), table.node, span)
    return budget


def _columns(model: Any, table: Table) -> list[np.ndarray]:
    frame = table.frame
    return [frame[name].to_numpy(dtype=object) for name in model.attributes]


def _truth(table: Table, target: str) -> np.ndarray:
    return table.frame[target].to_numpy(dtype=object)


def release_stability(table: Table) -> int:
    """How many rows of `table` one individual adds or removes (bounded: `_budget` refused an
    unbounded table before): the L1 and L2 sensitivity of its cell counts."""
    return int(table.stability or 1)


def _release(interp: Any, counts: np.ndarray, table: Table, budget: AnyBudget | None, what: str, span: Span,
             mechanism: str, labels: CellLabels) -> np.ndarray:
    """The cell counts released: exact on a public table; else one histogram of sensitivity s
    (the module docstring), through the language's geometric or Gaussian mechanism, charged
    before its noise is drawn."""
    if budget is None:
        released = np.asarray(counts, dtype=np.int64)
    else:
        stability = float(release_stability(table))
        private = Private(np.asarray(counts, dtype=np.int64), stability, stability, span, what, table.node,
                          integer=True, labels=labels.labels, direction=1, shape=labels.shape, axes=labels.axes)
        if isinstance(budget, RhoZCDPBudget):
            released = np.asarray(mechanisms.gaussian_rho(interp, private, budget, span, mechanism=mechanism))
        else:
            released = np.asarray(mechanisms.geometric(interp, private, budget.epsilon, span, mechanism=mechanism))
    interp.vector_labels.remember(released, labels)
    return released


# ---------------------------------------------------------------- the releases
def private_accuracy(interp: Any, span: Span, model: Any, table: Any, target: Any, **kwargs: Any) -> float:
    """The noisy share of the rows of `table` the model labels right (see the module docstring)."""
    from jostle.learnerkit import evaluation as kit

    who = "private_accuracy()"
    check_keywords(kwargs, span, who)
    model = _model(model, span, who)
    table = _table_and_target(model, table, target, span, who)
    budget = _budget(interp, table, kwargs, span, who)
    counts = kit.cells_correct(kit.row_labels(model, _columns(model, table)), _truth(table, target))
    labels = CellLabels(("correct", "wrong"), None, ("prediction",))
    released = _release(interp, counts, table, budget, f"private_accuracy({table.name}, '{target}')", span,
                        "private_accuracy", labels)
    return kit.accuracy_from_counts(released[0], released[1])


def confusion_matrix(interp: Any, span: Span, model: Any, table: Any, target: Any, **kwargs: Any) -> np.ndarray:
    """One noisy count per (true class, predicted class), row-major, labelled; the predicted
    classes end with none when a column's domain holds a category the model never saw."""
    from jostle.learnerkit import evaluation as kit

    who = "confusion_matrix()"
    check_keywords(kwargs, span, who)
    model = _model(model, span, who)
    table = _table_and_target(model, table, target, span, who)
    budget = _budget(interp, table, kwargs, span, who)
    true_labels = tuple(table.schema[target].values)
    predicted_labels = tuple(model.classes)
    if any(not set(_safe(table.schema[name].values)) <= set(_safe(domain))
           for name, domain in zip(model.attributes, model.domains)):  # public schemas only
        predicted_labels += (kit.UNSEEN,)
    counts = kit.cells_confusion(kit.row_labels(model, _columns(model, table)), _truth(table, target), true_labels,
                                 predicted_labels)
    labels = CellLabels(tuple((t, p) for t in true_labels for p in predicted_labels),
                        (len(true_labels), len(predicted_labels)), (target, "predicted"))
    return _release(interp, counts, table, budget, f"confusion_matrix({table.name}, '{target}')", span,
                    "confusion_matrix", labels)


def _safe(values: Any) -> list:
    return [repr(v) for v in values]  # categories compared as the schema writes them (hashable)


def _score_counts(interp: Any, span: Span, who: str, model: Any, table: Any, target: Any, positive: Any,
                  kwargs: dict[str, Any]) -> tuple[np.ndarray, int]:
    from jostle.learnerkit import evaluation as kit

    check_keywords(kwargs, span, who, ("epsilon", "rho", "bins"))
    model = _model(model, span, who)
    table = _table_and_target(model, table, target, span, who)
    positive = _positive(model, positive, span, who)
    bins = _bins(kwargs, span, who)
    budget = _budget(interp, table, kwargs, span, who)
    scores = kit.row_scores(model, positive, _columns(model, table))
    truth = _truth(table, target)
    is_positive = np.fromiter((t == positive for t in truth.tolist()), dtype=bool, count=len(truth))
    counts = kit.cells_scores(kit.bin_of(scores, bins), is_positive, bins)
    labels = CellLabels(tuple((b, c) for b in kit.score_bins(bins) for c in (positive, "other")), (bins, 2),
                        ("score", target))
    name = who.rstrip("()")
    released = _release(interp, counts, table, budget, f"{name}({table.name}, '{target}' = {positive!r}, {bins} bins)",
                        span, name, labels)
    return released, bins


def auc(interp: Any, span: Span, model: Any, table: Any, target: Any, positive: Any, **kwargs: Any) -> float | None:
    """The area under the ROC curve of class `positive` from noisy per-bin counts (none when no
    positive or no negative remains after the noise)."""
    from jostle.learnerkit import evaluation as kit

    released, bins = _score_counts(interp, span, "auc()", model, table, target, positive, kwargs)
    return kit.auc_from_counts(released, bins)


def calibration(interp: Any, span: Span, model: Any, table: Any, target: Any, positive: Any,
                **kwargs: Any) -> tuple[Record, ...]:
    """Per bin of the predicted probability of `positive`: noisy rows, noisy positives, their rate."""
    from jostle.learnerkit import evaluation as kit

    released, bins = _score_counts(interp, span, "calibration()", model, table, target, positive, kwargs)
    return tuple(Record.of(entry) for entry in kit.calibration_from_counts(released, bins))


# ---------------------------------------------------------------- the split
def _shares(value: Any, span: Span) -> list[float]:
    if is_private(value):
        raise refuse("split(): the shares must be public", value, span)
    items = [value, 1 - value] if isinstance(value, (int, float, np.integer, np.floating)) \
        and not isinstance(value, bool) else value
    if not isinstance(items, (tuple, list, np.ndarray)) or not 2 <= len(items) <= MAX_PARTS \
            or any(isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) for v in items):
        raise JostleRuntimeError("split() takes a share in (0, 1) or a list of 2 to 100 shares adding up to 1", span,
                                 "e.g. train, test = split(t, 0.7)")
    shares = [float(v) for v in items]
    if any(not 0 < v < 1 for v in shares) or abs(sum(shares) - 1) > 1e-9:
        raise JostleRuntimeError(f"split(): the shares must each be in (0, 1) and add up to 1, got {shares}", span,
                                 "e.g. split(t, 0.7) or split(t, [0.6, 0.2, 0.2])")
    return shares


def assign_parts(frame: Any, schema: Any, fractions: list[float], key_column: str | None,
                 randomness: Any) -> np.ndarray:
    """The part (an index into `fractions`) of each row of `frame`: a function of the row alone
    (of its key's value, given `key_column`) under a secret key drawn from `randomness` (the
    module docstring has the argument)."""
    import pandas as pd

    words = randomness.integers_below(1 << 32, 4)  # the secret key: 16 hex digits (64 bits; pandas takes 16 characters), never shown
    key = "".join(f"{int(w):08x}" for w in words)[:16]
    if not len(frame):
        return np.zeros(0, dtype=np.int64)
    coded = _canonical(frame, schema, [key_column]) if key_column is not None else _exact(frame)
    content = pd.util.hash_pandas_object(coded, index=False, hash_key=key).to_numpy()
    # the rank of a row among EQUAL rows (0 for an entity's key: all its rows go together)
    rank = np.zeros(len(content), dtype=np.uint64) if key_column is not None else \
        coded.groupby(list(coded.columns), sort=False, dropna=False).cumcount().to_numpy().astype(np.uint64)
    mixed = pd.util.hash_pandas_object(pd.DataFrame({"row": content, "rank": rank}), index=False,
                                       hash_key=key).to_numpy()
    uniform = (mixed >> np.uint64(11)).astype(np.float64) / float(1 << 53)
    return np.minimum(np.searchsorted(np.cumsum(fractions), uniform, side="right"), len(fractions) - 1)


def _exact(frame: Any) -> Any:
    """Every cell as what tells it apart from every other cell a row function could tell it apart
    from, in ONE sense for both the hash and the ranking: a number column's values by their bits
    (0.0 and -0.0 differ: 1 / x tells them apart), any other cell by its type and repr (1, 1.0,
    True, "1" and b"1" differ). Rows equal in this sense are indistinguishable, so which of them
    has which rank does not matter; with a coarser sense (a text hash making 1 and "1" collide,
    a float making -0.0 and 0.0 one value) a row's rank, hence its part, would depend on the
    order of other rows (found by the adversarial review of issue 28)."""
    import pandas as pd

    columns = {}
    for index, name in enumerate(frame.columns):
        values = frame[name].to_numpy()
        if values.dtype.kind in "iub":
            columns[index] = values.astype(np.int64).view(np.uint64)
        elif values.dtype.kind == "f":
            columns[index] = values.astype(np.float64).view(np.uint64)
        else:
            columns[index] = pd.Series([_cell_key(v) for v in frame[name].tolist()], dtype=object)
    return pd.DataFrame(columns, index=range(len(frame)))


def _cell_key(value: Any) -> str:
    """A cell's type and value as text (a whole number in hexadecimal: Python refuses decimal text
    beyond 4,300 digits, which would make one row's cell raise)."""
    if isinstance(value, int) and not isinstance(value, bool):  # a released NoisyInt too: its number
        return f"int:{int(value):x}"
    if isinstance(value, float):
        return f"float:{float(value)!r}"
    return f"{type(value).__name__}:{value!r}"


def _canonical(frame: Any, schema: Any, names: list[str]) -> Any:
    """An entity key's column as numbers that depend only on the key's class under ==, the
    equality that makes rows one entity's (`bound_per_key` groups by it): a category is its
    position in the public domain (a dictionary's equality), a number its float64 value (-0.0 as
    0.0). Any function of that class keeps each entity in one part (no rank is used)."""
    import pandas as pd

    columns = {}
    for name in names:
        spec = schema[name]
        if isinstance(spec, Categorical):
            position = {value: i for i, value in enumerate(spec.values)}
            codes, uniques = pd.factorize(frame[name], use_na_sentinel=False)
            lookup = np.fromiter((position.get(v, -1) if hashable(v) else -1 for v in uniques), dtype=np.int64,
                                 count=len(uniques))
            columns[name] = lookup[codes] if len(codes) else np.zeros(0, dtype=np.int64)
        else:
            columns[name] = pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=float) + 0.0
    return pd.DataFrame(columns)


def split(interp: Any, span: Span, table: Any, shares: Any) -> tuple[Table, ...]:
    """Disjoint parts of `table`, one per share (see the module docstring for the argument)."""
    if not isinstance(table, Table):
        raise JostleRuntimeError(f"split() needs a table, got a {type_name(table)}", span)
    fractions = _shares(shares, span)
    entity = table.private and table.unit.is_entity
    if entity and table.unit.key not in table.schema:
        raise JostleRuntimeError(f"split() of '{table.name}' needs its entity key '{table.unit.key}' (unit "
                                 f"{table.unit}), which was selected away", span,
                                 "split the table before selecting its columns: an entity's rows stay together "
                                 "by their key")
    parallel = table.private and partition_is_parallel(table, [table.unit.key] if entity else [])
    frame = table.frame
    part_of = assign_parts(frame, table.schema, fractions, table.unit.key if entity else None,
                           interp.randomness)
    group = None
    if parallel:
        from jostle.privacy.budget import ParallelGroup

        group = ParallelGroup(table.node, "split")
    parts = []
    for index in range(len(fractions)):
        label = f"{index + 1} of {len(fractions)}"
        node = group.part(label) if group is not None else table.node
        rows = frame[part_of == index].reset_index(drop=True)
        parts.append(Table(rows, table.schema, table.private, f"{table.name}[split {label}]", node, span, None,
                           table.stability, False, table.unit))
    return tuple(parts)


# ---------------------------------------------------------------- registration (the language's core built-ins)
_BUDGET = "epsilon=E or rho=R (or what a {{ }} would get)"
builtin("private_accuracy", 3, privacy="release", keywords=("epsilon", "rho"),
        doc=f'private_accuracy(model, t, "class", {_BUDGET}): the noisy share of rows a model labels right'
        )(private_accuracy)
builtin("confusion_matrix", 3, privacy="release", keywords=("epsilon", "rho"),
        doc=f'confusion_matrix(model, t, "class", {_BUDGET}): a noisy count per (true, predicted) cell'
        )(confusion_matrix)
builtin("auc", 4, privacy="release", keywords=("epsilon", "rho", "bins"),
        doc=f'auc(model, t, "class", "yes", bins=10, {_BUDGET}): the ROC AUC of class "yes" from noisy '
            "per-bin counts")(auc)
builtin("calibration", 4, privacy="release", keywords=("epsilon", "rho", "bins"),
        doc=f'calibration(model, t, "class", "yes", bins=10, {_BUDGET}): noisy rows and positives per '
            "predicted-probability bin")(calibration)
builtin("split", 2, privacy="table",
        doc="split(t, 0.7) or split(t, [0.6, 0.2, 0.2]): disjoint random parts of a table; releases on "
            "different parts compose in parallel")(split)
