"""A fitted rule list: its antecedents, per-rule class probabilities, prediction and printout.

    if sex = female and pclass = 1 then P(survived = 1) = 0.95
    else if age = [0, 10) then P(survived = 1) = 0.61
    else P(survived = 1) = 0.17

A `RuleList` holds only released values (the chosen list and noisy counts, for a private fit),
so it is public: printing it and predicting with it are post-processing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from jostle.learners.brl.bitsets import Antecedent


@dataclass(frozen=True)
class RuleList:
    """An ordered list of antecedents over integer codes, each with class probabilities.

    Attributes:
        antecedents: The rules' antecedents, in order (the default rule has none).
        probabilities: (rules + 1, classes): row i the class probabilities of rule i, the last
            row the default rule's.
        counts: The (noisy, for a private fit) capture counts behind the probabilities.
    """

    antecedents: tuple[Antecedent, ...]
    probabilities: np.ndarray
    counts: np.ndarray

    @property
    def length(self) -> int:
        """Rules before the default rule."""
        return len(self.antecedents)

    @property
    def average_antecedent_length(self) -> float:
        """Mean number of items per antecedent (0 for the empty list)."""
        return float(np.mean([len(a) for a in self.antecedents])) if self.antecedents else 0.0

    def rule_of_rows(self, codes: np.ndarray) -> np.ndarray:
        """For each row of integer codes, the index of the rule that captures it."""
        codes = np.asarray(codes, dtype=np.int64)
        rule = np.full(len(codes), self.length, dtype=np.int64)
        open_rows = np.ones(len(codes), dtype=bool)
        for index, antecedent in enumerate(self.antecedents):
            hits = open_rows.copy()
            for j, v in antecedent:
                hits &= codes[:, j] == v
            rule[hits] = index
            open_rows &= ~hits
        return rule

    def predict_proba(self, codes: np.ndarray) -> np.ndarray:
        """Class probabilities of each row (columns: the class codes)."""
        return self.probabilities[self.rule_of_rows(codes)]

    def to_text(self, names: Sequence[str], values: Sequence[Sequence[Any]], classes: Sequence[Any],
                target: str = "class", title: str | None = None, digits: int = 2) -> str:
        """The "if ... then probability ... else if ... else ..." printout.

        Args:
            names: Attribute names, by index.
            values: Each attribute's public values, by code.
            classes: The class labels, by code.
            target: The class column's name.
            title: A first line, or None.
            digits: Decimals of the probabilities.
        """
        lines = [] if title is None else [title]
        for index, antecedent in enumerate(self.antecedents):
            condition = " and ".join(f"{names[j]} = {values[j][v]}" for j, v in antecedent)
            lead = "if" if index == 0 else "else if"
            lines.append(f"{lead} {condition} then {self._outcome(index, classes, target, digits)}")
        lead = "else" if self.antecedents else "always"
        lines.append(f"{lead} {self._outcome(self.length, classes, target, digits)}")
        return "\n".join(lines)

    def _outcome(self, rule: int, classes: Sequence[Any], target: str, digits: int) -> str:
        p = self.probabilities[rule]
        if len(classes) == 2:
            return f"probability {p[1]:.{digits}f} that {target} = {classes[1]}"
        parts = ", ".join(f"{label}: {value:.{digits}f}" for label, value in zip(classes, p))
        return f"probabilities ({parts}) for {target}"


def probabilities_from_counts(counts: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """Per rule, (max(count, 0) + alpha) / sum: the posterior mean under Dirichlet(alpha) of
    (noisy) counts clipped at 0 (post-processing)."""
    clipped = np.clip(np.asarray(counts, dtype=float), 0.0, None) + alpha
    return clipped / clipped.sum(axis=1, keepdims=True)


def respect_classes(probabilities: np.ndarray, classes: Sequence[int], margin: float = 0.02) -> np.ndarray:
    """Each rule's probabilities moved the least towards its released class so that the class
    is its most probable one by at least `margin` (post-processing of released values).

    Row i becomes (1 - t) p_i + t e_(c_i), with t in [0, 1] the smallest that makes
    p_i[c_i] - p_i[k] >= margin for every other class k: t = max_k (margin - g_k) / (1 - g_k)
    over the gaps g_k = p_i[c_i] - p_i[k] below the margin (0 when there are none).

    Args:
        probabilities: (rules + 1, classes), rows summing to 1.
        classes: Per row, the class it must favour (a released value, e.g. drawn with the list).
        margin: The smallest lead of that class (public; in [0, 1)).
    """
    result = np.array(probabilities, dtype=float, copy=True)
    for row, favoured in enumerate(classes):
        gaps = result[row, favoured] - np.delete(result[row], favoured)
        short = gaps[gaps < margin]
        if short.size:
            t = float(np.max((margin - short) / (1.0 - short)))
            result[row] = (1.0 - t) * result[row]
            result[row, favoured] += t
    return result
