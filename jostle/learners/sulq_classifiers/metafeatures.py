"""Metafeatures of the SuLQ family: the standard metafeatures of a classification table.

They are the learner kit's (`jostle.learnerkit.metafeatures.CLASSIFICATION_METAFEATURES`), the
same objects every classifier family offers, so a ChoiceMaker over SuLQ and tree Options reads
one `size`. The public ones cost nothing; the noisy ones (the table's size, its class balance)
are pure-epsilon releases run at the epsilon within their rho part (counted epsilon^2 / 2 in
rho), each with its sensitivity argument in the kit (privacy unit: one row added or removed).
"""

from __future__ import annotations

from jostle.learnerkit.metafeatures import CLASSIFICATION_METAFEATURES, FunctionMetafeature

__all__ = ["SULQ_METAFEATURES"]

SULQ_METAFEATURES: dict[str, FunctionMetafeature] = dict(CLASSIFICATION_METAFEATURES)
