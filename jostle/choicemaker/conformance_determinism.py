"""The determinism, neighbour and pickling checks of the family conformance suite (see
`jostle.choicemaker.conformance`).

Each `check_*` takes a `Subject` and raises `ConformanceError` naming the property it breaks:
seed determinism of dispatches and of the experience table, the zero-spend neighbour rule (a
refused first charge fails identically on neighbouring inputs; public metafeatures and context
are identical on them), and pickling for parallel training.
"""

from __future__ import annotations

import inspect
import pickle
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jostle.choicemaker.budgets import as_budget
from jostle.choicemaker.conformance_setup import (EXPERIENCE_DETERMINISM, NEIGHBOUR_RULE, PICKLING,
                                                  SEED_DETERMINISM, Event, RecordingNoise, Subject, describe_events,
                                                  draws, exact_randomness, fail, noise_kinds, recorded_dispatch,
                                                  require)
from jostle.choicemaker.experience import experience_table, public_metafeatures
from jostle.choicemaker.family import fingerprint
from jostle.choicemaker.measurement import measure_features
from jostle.privacy.noise import Randomness


def same_release(a: Any, b: Any, depth: int = 8) -> bool:
    """Whether two releases are equal, structurally: arrays and numbers elementwise (NaN equal
    to NaN), containers item by item, NumPy generators by state, functions by qualified name,
    other objects by type and attributes (`depth` levels down)."""
    if a is b:
        return True
    if depth < 0:
        return type(a) is type(b)
    numeric = (np.ndarray, np.number, float, int)
    if isinstance(a, numeric) and isinstance(b, numeric) and not isinstance(a, bool) and not isinstance(b, bool):
        a_array, b_array = np.asarray(a), np.asarray(b)
        if a_array.dtype == object or b_array.dtype == object:
            return a_array.shape == b_array.shape and all(
                same_release(x, y, depth - 1) for x, y in zip(a_array.ravel(), b_array.ravel()))
        return a_array.shape == b_array.shape and np.array_equal(a_array, b_array, equal_nan=a_array.dtype.kind == "f")
    if type(a) is not type(b):
        return False
    if isinstance(a, (str, bytes, bool, Fraction, type(None), type)):
        return a == b
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_release(a[k], b[k], depth - 1) for k in a)
    if isinstance(a, (list, tuple, frozenset, set)):
        if isinstance(a, (set, frozenset)):
            return a == b
        return len(a) == len(b) and all(same_release(x, y, depth - 1) for x, y in zip(a, b))
    if isinstance(a, np.random.Generator):
        return same_release(a.bit_generator.state, b.bit_generator.state, depth - 1)
    if callable(a) and not hasattr(a, "__dict__") or inspect.isfunction(a) or inspect.ismethod(a):
        return getattr(a, "__qualname__", None) == getattr(b, "__qualname__", None)
    state_a, state_b = _state(a), _state(b)
    if state_a is None or state_b is None:
        try:
            return bool(a == b)
        except Exception:  # noqa: BLE001 - not comparable
            return False
    return same_release(state_a, state_b, depth - 1)


def _state(obj: Any) -> dict | None:
    """An object's attributes (its `__dict__` and `__slots__`), or None if it has neither."""
    state = dict(vars(obj)) if hasattr(obj, "__dict__") else {}
    for klass in type(obj).__mro__:
        for slot in getattr(klass, "__slots__", ()):
            if hasattr(obj, slot):
                state[slot] = getattr(obj, slot)
    return state if state or hasattr(obj, "__dict__") else None


def check_seed_determinism(subject: Subject) -> None:
    """Two dispatches with equally seeded noise (exact, and the family's simulation noise)
    give the same choice, metafeatures, predictions, plan, trace, release and draws."""
    family = subject.family
    for noise_label, make_noise in noise_kinds(subject):
        for label, choicemaker, data, forced in subject.runs():
            outcomes = [recorded_dispatch(subject, choicemaker, data, forced, make_noise) for _ in range(2)]
            (first, error, events), (second, error2, events2) = outcomes
            case = f"{label} with {noise_label}"
            require(error is None and error2 is None, family, SEED_DETERMINISM,
                    lambda: f"{case}: the dispatch failed: {error!r} / {error2!r}")
            for what in ("choice", "features", "predictions", "budget_split", "trace"):
                require(getattr(first, what) == getattr(second, what), family, SEED_DETERMINISM,
                        lambda: f"{case}: the {what} differs: {getattr(first, what)} / {getattr(second, what)}")
            require(same_release(first.result, second.result), family, SEED_DETERMINISM,
                    lambda: f"{case}: the releases differ: {family.describe(first.result)} / "
                            f"{family.describe(second.result)}")
            require(events == events2, family, SEED_DETERMINISM, f"{case}: the draws and charges differ")


def check_experience_determinism(subject: Subject) -> None:
    """The experience table of the tiny setup, built twice in this process with fresh caches,
    is identical except for the `seconds` column (and has rows)."""
    family, setup = subject.family, subject.setup
    tables = []
    for name in ("first", "second"):
        folder = Path(tempfile.mkdtemp(prefix=f"experience-{name}-", dir=subject.workdir))  # a fresh cache
        tables.append(experience_table(family, setup.options, setup.metafeatures, setup.corpus, setup.grid,
                                       setup.mf_share, cache_dir=folder, n_jobs=1, progress=False))
    first, second = (t.drop(columns=["seconds"]) for t in tables)
    require(len(first) > 0, family, EXPERIENCE_DETERMINISM, "the tiny corpus gave no experience")
    try:
        pd.testing.assert_frame_equal(first, second, check_exact=True)
    except AssertionError as difference:
        raise fail(family, EXPERIENCE_DETERMINISM, f"two builds differ: {difference}") from None


def check_neighbour_rule(subject: Subject) -> None:
    """On the family's two neighbouring public inputs: a dispatch whose charge callback refuses
    the first charge fails identically on both (exception type and message, and the charge it
    asked for) and draws nothing; the public metafeatures (free, reading nothing released) give
    identical values on both without drawing; the public context is identical."""
    family = subject.family
    first, second = family.neighbouring_inputs(subject.seed)
    require(family.segment_of(first) == family.segment_of(second), family, NEIGHBOUR_RULE,
            "the neighbours fall in different segments")
    for label, choicemaker, _, forced in subject.runs([("neighbours", first)]):
        outcomes = []
        for data in (first, second):
            result, error, events = recorded_dispatch(subject, choicemaker, data, forced,
                                                      exact_randomness(subject.seed), Fraction(0))
            require(result is None and error is not None, family, NEIGHBOUR_RULE,
                    f"{label}: a dispatch whose first charge is refused released a result")
            require(not draws(events), family, NEIGHBOUR_RULE,
                    lambda: f"{label}: drew noise before its refused first charge: {describe_events(events)}")
            outcomes.append((type(error), str(error), events))
        require(outcomes[0] == outcomes[1], family, NEIGHBOUR_RULE,
                lambda: f"{label}: the neighbours fail differently: "
                        f"{outcomes[0][0].__name__}: {outcomes[0][1]} ({describe_events(outcomes[0][2])}) / "
                        f"{outcomes[1][0].__name__}: {outcomes[1][1]} ({describe_events(outcomes[1][2])})")
    free = public_metafeatures(subject.all_metafeatures())
    values = []
    for data in (first, second):
        events: list[Event] = []
        measured = measure_features(family, free, data, subject.budget, 0.0,
                                    RecordingNoise(Randomness(subject.seed), events, "features"))
        require(not draws(events), family, NEIGHBOUR_RULE,
                lambda: f"public metafeatures drew noise: {describe_events(events)}")
        values.append(measured.features)
    require(values[0] == values[1], family, NEIGHBOUR_RULE,
            lambda: f"public metafeatures differ on neighbours: {values[0]} / {values[1]}")
    contexts = [family.context(d, as_budget(0.5), subject.budget) for d in (first, second)]
    require(contexts[0] == contexts[1] and dict(contexts[0].facts) == dict(contexts[1].facts), family,
            NEIGHBOUR_RULE, lambda: f"the public context differs on neighbours: {contexts[0]} / {contexts[1]}")


def check_pickling(subject: Subject) -> None:
    """The family, its Options and metafeatures and the trained ChoiceMaker survive pickle and
    cloudpickle; fingerprints are kept; the unpickled ChoiceMaker predicts and chooses the same
    on training rows of every segment, and an equally seeded dispatch gives the same result."""
    try:
        import cloudpickle
    except ImportError:  # joblib ships its own copy
        from joblib.externals import cloudpickle

    family, choicemaker = subject.family, subject.choicemaker
    parts = {"the family": family, "its Options": dict(family.options()),
             "its metafeatures": dict(family.metafeatures()), "the trained ChoiceMaker": choicemaker}
    for pickler in (pickle, cloudpickle):
        copies = {}
        for what, obj in parts.items():
            try:
                copies[what] = pickle.loads(pickler.dumps(obj))
            except Exception as error:  # noqa: BLE001 - report any failure to pickle
                raise fail(family, PICKLING, f"{pickler.__name__} cannot send {what}: {error!r}") from None
        require(copies["the family"].fingerprint == family.fingerprint, family, PICKLING,
                f"{pickler.__name__}: the family's fingerprint changed")
        for name, option in family.options().items():
            require(fingerprint(copies["its Options"][name]) == fingerprint(option), family, PICKLING,
                    f"{pickler.__name__}: Option {name}'s fingerprint changed")
        for name, metafeature in family.metafeatures().items():
            require(fingerprint(copies["its metafeatures"][name]) == fingerprint(metafeature), family, PICKLING,
                    f"{pickler.__name__}: metafeature {name}'s fingerprint changed")
        clone = copies["the trained ChoiceMaker"]
        experience = choicemaker.experience
        for segment, model in choicemaker.models.items():
            rows = experience if family.segment_column is None else \
                experience[experience[family.segment_column] == segment]
            rows = rows[rows["mode"] == choicemaker.modes[segment]].head(12)
            for _, row in rows.iterrows():
                features = {name: float(row[f"mf_{name}"]) for name in model.features}
                require(clone.choose(features, segment) == choicemaker.choose(features, segment), family, PICKLING,
                        f"{pickler.__name__}: the unpickled ChoiceMaker chooses differently on {features}")
        for label, data in subject.inputs():
            original = recorded_dispatch(subject, choicemaker, data, None, exact_randomness(subject.seed))
            copied = recorded_dispatch(subject, clone, data, None, exact_randomness(subject.seed))
            require(original[1] is None and copied[1] is None, family, PICKLING,
                    lambda: f"{pickler.__name__}, {label}: a dispatch failed: {original[1]!r} / {copied[1]!r}")
            require(original[0].choice == copied[0].choice and same_release(original[0].result, copied[0].result),
                    family, PICKLING, f"{pickler.__name__}, {label}: the unpickled ChoiceMaker dispatches differently")
