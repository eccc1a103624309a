"""A planted two-view generator with known true redescriptions (public data for the corpus,
the benchmark and the tests).

Each planted redescription k has a hidden group z_k (an entity is in it with a probability
drawn between 0.15 and 0.35). The left view describes z_k by a conjunction of two tests on two
of its attributes, the right view by a conjunction on two of its own: an entity in z_k gets
values satisfying both tests of both views, an entity outside gets values failing at least one
test of each view. Then each planted attribute value is redrawn uniformly with probability
`flip` (noise that makes the planted pair less than exact). Other attributes are noise,
independent of everything. Attributes are categorical (four values "a".."d", the test "= a")
or numeric (uniform on [0, 100), ten public bins of width 10, the test "< 50" or "< 30"), with
probability `numeric_share` numeric.

The planted pairs (`PlantedTask.truths`) are the redescriptions a miner should find; their
true Jaccard on the generated data is below 1 by the flips.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from jostle.learners.redescription.queries import Literal, Query, Term
from jostle.learners.redescription.views import Attribute, TwoViews, ViewSchema, categorical, encode_views, \
    equal_width

CATEGORIES = ("a", "b", "c", "d")
NUMERIC_BINS = 10


@dataclass(frozen=True)
class PlantedTask:
    """Generated two-view data and its planted redescriptions.

    Attributes:
        views: The coded views.
        left: The left view as a DataFrame (column "id" is the entity key).
        right: The right view as a DataFrame.
        truths: The planted (left query, right query) pairs.
        name: A name saying how it was generated.
    """

    views: TwoViews
    left: Any
    right: Any
    truths: tuple[tuple[Query, Query], ...]
    name: str


def _attribute(name: str, is_numeric: bool) -> Attribute:
    return equal_width(name, 0.0, 100.0, NUMERIC_BINS) if is_numeric else categorical(name, CATEGORIES)


def _draw_outside(rng: np.random.Generator, size: int, is_numeric: bool) -> np.ndarray:
    """Values uniform over the attribute's range (as raw values)."""
    if is_numeric:
        return rng.uniform(0.0, 100.0, size)
    return rng.choice(np.asarray(CATEGORIES, dtype=object), size)


def _satisfies(values: np.ndarray, is_numeric: bool, threshold: float) -> np.ndarray:
    return values < threshold if is_numeric else values == "a"


def _draw_inside(rng: np.random.Generator, size: int, is_numeric: bool, threshold: float) -> np.ndarray:
    if is_numeric:
        return rng.uniform(0.0, threshold, size)
    return np.full(size, "a", dtype=object)


def _planted_view(rng: np.random.Generator, group: np.ndarray, kinds: tuple[bool, bool],
                  thresholds: tuple[float, float], flip: float) -> list[np.ndarray]:
    """Two columns whose conjunction of tests holds exactly on `group` before the flips."""
    n = group.size
    columns = [_draw_outside(rng, n, kinds[i]) for i in range(2)]
    inside = np.flatnonzero(group)
    for i in range(2):
        columns[i][inside] = _draw_inside(rng, inside.size, kinds[i], thresholds[i])
    outside = ~group
    # redraw the outside entities until at least one test fails (few rounds: P(both hold) <= 1/4)
    for _ in range(64):
        both = outside & _satisfies(columns[0], kinds[0], thresholds[0]) & \
            _satisfies(columns[1], kinds[1], thresholds[1])
        if not both.any():
            break
        for i in range(2):
            columns[i][both] = _draw_outside(rng, int(both.sum()), kinds[i])
    for i in range(2):
        flipped = rng.random(n) < flip
        columns[i][flipped] = _draw_outside(rng, int(flipped.sum()), kinds[i])
    return columns


def _test(attribute: int, is_numeric: bool, threshold: float) -> Literal:
    if is_numeric:
        return Literal(attribute, True, int(round(threshold / (100.0 / NUMERIC_BINS))) - 1, True)
    return Literal(attribute, False, CATEGORIES.index("a"), True)


def planted_two_views(n_entities: int, seed: int, *, planted: int = 3, noise_attributes: int = 4,
                      flip: float = 0.05, numeric_share: float = 0.5) -> PlantedTask:
    """Generate two views of `n_entities` entities with `planted` planted redescriptions.

    Args:
        n_entities: Entities (rows of both views).
        seed: The generator's seed (all randomness).
        planted: Planted redescriptions (two attributes per view each).
        noise_attributes: Extra independent attributes per view.
        flip: The probability that a planted attribute value is redrawn uniformly.
        numeric_share: The probability that an attribute is numeric.

    Returns:
        The task with its data frames, coded views and planted pairs.
    """
    import pandas as pd

    if n_entities < 1 or planted < 1 or noise_attributes < 0 or not 0 <= flip <= 1:
        raise ValueError("planted_two_views needs n_entities >= 1, planted >= 1, noise_attributes >= 0, 0 <= flip <= 1")
    rng = np.random.default_rng(seed)
    frames: list[dict[str, Any]] = [{}, {}]
    attributes: list[list[Attribute]] = [[], []]
    truths = []
    for k in range(planted):
        group = rng.random(n_entities) < rng.uniform(0.15, 0.35)
        queries = []
        for view, prefix in ((0, "L"), (1, "R")):
            kinds = (bool(rng.random() < numeric_share), bool(rng.random() < numeric_share))
            thresholds = (float(rng.choice([30.0, 50.0])), float(rng.choice([30.0, 50.0])))
            columns = _planted_view(rng, group, kinds, thresholds, flip)
            literals = []
            for i in range(2):
                name = f"{prefix}{k}{'ab'[i]}"
                frames[view][name] = columns[i]
                attributes[view].append(_attribute(name, kinds[i]))
                literals.append(_test(len(attributes[view]) - 1, kinds[i], thresholds[i]))
            queries.append(Query(view, (Term(tuple(literals)),)))
        truths.append((queries[0], queries[1]))
    for view, prefix in ((0, "L"), (1, "R")):
        for j in range(noise_attributes):
            is_numeric = bool(rng.random() < numeric_share)
            name = f"{prefix}noise{j}"
            frames[view][name] = _draw_outside(rng, n_entities, is_numeric)
            attributes[view].append(_attribute(name, is_numeric))
    order = rng.permutation(n_entities)
    left = pd.DataFrame(frames[0]).iloc[order].reset_index(drop=True)
    right = pd.DataFrame(frames[1]).iloc[order].reset_index(drop=True)
    left.insert(0, "id", np.arange(n_entities))
    right.insert(0, "id", np.arange(n_entities))
    schemas = (ViewSchema("left", tuple(attributes[0])), ViewSchema("right", tuple(attributes[1])))
    views = encode_views(left, right, schemas)
    name = f"planted(n={n_entities}, seed={seed}, planted={planted}, noise={noise_attributes}, flip={flip:g})"
    return PlantedTask(views, left, right, tuple(truths), name)
