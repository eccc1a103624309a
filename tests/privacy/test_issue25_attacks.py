"""Adversarial review of issue 25 (DP tree-based redescription mining as a learner family).

The program's author (and a Python caller of the public API) is the adversary; the unit is
`entity(key)`: a neighbour removes one entity from BOTH views. Each test states a guarantee the
family must keep. One that failed on the code the review read is marked `xfail(strict=True)`
with the hole in its reason (the suite stays green, and the mark must go when the hole is
fixed: the test then XPASSes, which strict turns into a failure). Tests without a mark passed on
that code and guard against a regression. The findings are also in /work/notes/api25.md
("## ADVERSARIAL FINDINGS").
"""

from __future__ import annotations

import io
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest

from jostle.learners.redescription import sampler, trees, views
from jostle.privacy.noise import Randomness

LEFT = views.ViewSchema("left", (views.categorical("a", ["x", "y", "z"]), views.numeric("b", [0, 1, 2, 3])))
RIGHT = views.ViewSchema("right", (views.categorical("c", ["u", "v", "w"]), views.numeric("d", [0, 1, 2, 3])))
ONE = views.from_codes((LEFT, RIGHT), np.array([[0, 1]]), np.array([[1, 2]]))
NONE = ONE.take(np.array([], dtype=np.int64))

SCHEMAS = {"left": {"id": ("numeric", 0, 100), "a": ("categorical", ["x", "y", "z"]), "b": ("numeric", 0, 3)},
           "right": {"id": ("numeric", 0, 100), "c": ("categorical", ["u", "v", "w"]), "d": ("numeric", 0, 3)}}
#: D: entity 1 in both views (plus entity 2 only on the left and 3 only on the right, so that no
#: bound table is empty); D': entity 1 removed from both views. The views' join: {1} and {}.
D = {"left": pd.DataFrame({"id": [1, 2], "a": ["x", "y"], "b": [0.5, 1.5]}),
     "right": pd.DataFrame({"id": [1, 3], "c": ["u", "v"], "d": [0.5, 2.5]})}
D_PRIME = {name: frame.iloc[1:].reset_index(drop=True) for name, frame in D.items()}


def _run(tables: dict[str, pd.DataFrame], program: str, **caps: Any) -> tuple[str, str, Any]:
    """Run a program on a database bound under entity(id): (printed text, ledger, how it ended)."""
    from jostle import Session
    from jostle.diagnostics.errors import JostleError

    output = io.StringIO()
    if "rho" not in caps:
        caps.setdefault("budget", 100)
    session = Session(ledger_path=":memory:", seed=3, output=output, **caps)
    session.bind_database(tables, key="id", schemas=SCHEMAS)
    try:
        session.run(program)
        end: Any = "ok"
    except JostleError as error:
        end = (type(error).__name__, error.render())
    return output.getvalue(), str(session.ledger), end


class _TooManyBlocks(RuntimeError):
    pass


def _count_proposals(monkeypatch: pytest.MonkeyPatch, limit: int) -> dict[str, int]:
    """Count the sampler's base proposals (random trees); stop a run past `limit` of them."""
    seen = {"trees": 0}
    original = trees.random_tree

    def counting(*args: Any, **kwargs: Any) -> Any:
        seen["trees"] += 1
        if seen["trees"] > limit:
            raise _TooManyBlocks(f"more than {limit} proposals")
        return original(*args, **kwargs)

    monkeypatch.setattr(sampler, "random_tree", counting)
    return seen


# ---------------------------------------------------------------- 1. the sampler's work padding
# FINDING 1 of the adversarial review, fixed (sampler runs at most at MAX_SAMPLER_EPSILON; coding; expm1).
def test_the_sampler_does_the_same_work_on_neighbours_at_a_large_epsilon(monkeypatch: pytest.MonkeyPatch) -> None:
    """AltMCMC's tree at per-step epsilon 40 on one entity and on none (its neighbour): the same
    number of proposals scored (the running time is observable)."""
    seen = _count_proposals(monkeypatch, 3 * sampler.MAX_BLOCK)
    work = []
    for data in (ONE, NONE):
        seen["trees"] = 0
        try:
            sampler.sample_tree(data, 0, data.codes[1][:, 0], 4, 2, Fraction(40), Randomness(1))
        except _TooManyBlocks:
            pass
        work.append(seen["trees"])
    assert work[0] == work[1], f"proposals scored: {work[0]} with the entity, {work[1]} (stopped) without"


# FINDING 1 from the language of the adversarial review, fixed (sampler runs at most at MAX_SAMPLER_EPSILON; coding; expm1).
def test_redescribe_does_the_same_work_on_neighbours_at_a_large_epsilon(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _count_proposals(monkeypatch, 3 * 2 * sampler.MAX_BLOCK)
    program = ('R = redescribe(left.bound_per_key(1), right.bound_per_key(1), algorithm="MCMCTreePair", tries=1, '
               "omega=0.5, depth=2, min_support=0, epsilon=80)\nprint(redescription_text(R, pruned=true))")
    work = []
    for data in (D, D_PRIME):
        seen["trees"] = 0
        try:
            _run(data, program)
        except _TooManyBlocks:
            pass
        work.append(seen["trees"])
    assert work[0] == work[1], f"trees proposed: {work[0]} with the entity, {work[1]} (stopped) without"


# ---------------------------------------------------------------- 2. refusals read every row first
VIEWS = "left.bound_per_key(1), right.bound_per_key(1)"
REFUSED = {
    "redescribe": f'R = redescribe({VIEWS}, algorithm="AltExpM", depth=2, epsilon=5)',
    "option": f"R = AltExpMStable({VIEWS}, redescription_task(min_support=0), epsilon=5)",
    "chooser": f"import redescription\nR = redescription.mine({VIEWS}, redescription_task(min_support=0), 5)",
}


# FINDING 2 of the review: fixed for redescribe and the Options (the charge comes before the rows are
# coded). A ChoiceMaker call still codes the views when its input is built, before the dispatch's
# refusal, as the classifier families' ChoiceMaker calls do (jostle.learnerkit.language.choice_call):
# a known limit across families, kept as a strict xfail.
_CHOOSER_CODES_FIRST = pytest.mark.xfail(strict=True, reason="known limit (every family's ChoiceMaker call): the "
                                         "engine's input is coded before the dispatch refuses")


@pytest.mark.parametrize("form", [pytest.param(form, marks=_CHOOSER_CODES_FIRST) if form == "chooser" else form
                                  for form in sorted(REFUSED)])
def test_an_over_budget_call_reads_no_row(form: str, monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[int] = []
    original = views.encode_views

    def spy(left: Any, right: Any, *args: Any, **kwargs: Any) -> Any:
        read.append(len(left) + len(right))
        return original(left, right, *args, **kwargs)

    monkeypatch.setattr(views, "encode_views", spy)
    output, ledger, end = _run(D, REFUSED[form], budget=1)
    assert end != "ok" and end[0] == "BudgetExceeded" and "(no charges)" in ledger, end
    assert read == [], f"rows coded before the refusal: {read}"


# ---------------------------------------------------------------- 3. the estimator: a failure after the charge
def _frames() -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    left = pd.DataFrame({"id": range(12), "a": ["x", "y", "z"] * 4, "b": np.linspace(0, 2.9, 12)})
    right = pd.DataFrame({"id": range(12), "c": ["u", "v", "w"] * 4, "d": np.linspace(0, 2.9, 12)})
    domains = {"left_domains": {"a": ["x", "y", "z"], "b": views.numeric("b", [0, 1, 2, 3])},
               "right_domains": {"c": ["u", "v", "w"], "d": views.numeric("d", [0, 1, 2, 3])}}
    return left, right, domains


# FINDING 3 of the review, fixed: both keyed estimators build their noise source before the charge.
@pytest.mark.parametrize("random_state", ["abc", -1, 1.5])
def test_a_bad_random_state_is_refused_before_the_charge(random_state: Any) -> None:
    from jostle.estimators import DPRedescriptionMiner, PrivacyBudget

    left, right, domains = _frames()
    budget = PrivacyBudget(2.0)
    miner = DPRedescriptionMiner("AltExpM", 1.0, key="id", depth=2, budget=budget, random_state=random_state,
                                 **domains)
    with pytest.raises((TypeError, ValueError)):
        miner.fit(left, right)
    assert Fraction(budget.spent.epsilon) == 0, f"a failed fit spent {budget.spent}"


def test_clones_share_the_budget_and_a_refused_fit_leaves_it() -> None:
    """Guard: sklearn's clone keeps the one PrivacyBudget; the second fit past it is refused."""
    from sklearn.base import clone

    from jostle.estimators import DPRedescriptionMiner, PrivacyBudget

    left, right, domains = _frames()
    budget = PrivacyBudget(1.5)
    miner = DPRedescriptionMiner("AltExpM", 1.0, key="id", depth=2, budget=budget, random_state=1, **domains)
    twin = clone(miner)
    assert twin.budget is budget
    miner.fit(left, right)
    with pytest.raises(Exception, match="(?i)budget"):
        twin.fit(left, right)
    assert Fraction(budget.spent.epsilon) == 1 and not hasattr(twin, "redescriptions_")


# ---------------------------------------------------------------- 4. coding a row never raises
# FINDING 4 of the adversarial review, fixed (sampler runs at most at MAX_SAMPLER_EPSILON; coding; expm1).
def test_a_huge_integer_in_a_categorical_column_is_coded_on_both_neighbours() -> None:
    left, right, _ = _frames()
    left = left.astype({"a": object})
    left.loc[0, "a"] = 10 ** 5000
    coded = []
    for rows in (slice(None), slice(1, None)):
        coded.append(views.encode_views(left.iloc[rows], right.iloc[rows], (LEFT, RIGHT), "id").codes[0][:, 0])
    assert coded[0][0] == len(LEFT.attributes[0].values) and np.array_equal(coded[0][1:], coded[1])


# ---------------------------------------------------------------- guard: nothing but the releases reads the data
class _PublicReleases:
    """Stands for the family's three noise points with functions of public things only (the shape
    of what is released and how many releases came before); records each call's claim."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.exact: list[np.ndarray] = []

    def counts(self, noise: Any, counts: Any, l1: int, epsilon: Any) -> np.ndarray:
        counts = np.asarray(counts)
        self.calls.append(("counts", counts.shape, int(l1), Fraction(epsilon)))
        self.exact.append(counts.copy())
        return np.random.default_rng([counts.size, len(self.calls)]).integers(-3, 30, counts.shape).astype(float)

    def rows(self, noise: Any, utilities: Any, sensitivity: float, epsilon: Any, monotone: bool = False) -> np.ndarray:
        shape = np.asarray(utilities).shape
        self.calls.append(("exponential rows", shape, sensitivity, Fraction(epsilon), monotone))
        self.exact.append(np.asarray(utilities, dtype=float).copy())
        return np.random.default_rng([shape[0], shape[1], len(self.calls)]).integers(0, shape[1], shape[0])

    def sample(self, noise: Any, epsilon: Any, propose: Any, score: Any, point: str) -> Any:
        self.calls.append((point, Fraction(epsilon)))
        return propose()  # the base proposal: public randomness


PUBLIC_FORMS = [
    f'R = redescribe({VIEWS}, algorithm="AltExpM", tries=2, alternations=2, depth=3, min_support=0, epsilon=1)',
    f'R = redescribe({VIEWS}, algorithm="AltMCMC", tries=1, alternations=2, depth=2, min_support=0, epsilon=1)',
    f'R = redescribe({VIEWS}, algorithm="MCMCTreePair", tries=2, depth=3, min_support=0, rho=0.5)',
    f"R = MCMCTreePairBalanced({VIEWS}, redescription_task(), epsilon=1)",
]


@pytest.mark.parametrize("program", PUBLIC_FORMS)
def test_with_public_releases_every_output_is_the_same_on_neighbours(program: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """With the releases replaced by public functions, the printed set (kept and pruned), its
    records, the ledger and the releases' claims are the same on D and D' (12 vs 11 entities,
    and 1 vs 0): nothing reaches the output but through a release."""
    from jostle.learners.redescription import expmech, extract

    hook = _PublicReleases()
    monkeypatch.setattr(extract.safe_noise, "release_counts", hook.counts)
    monkeypatch.setattr(expmech.safe_noise, "choose_exponential_rows", hook.rows)
    monkeypatch.setattr(sampler, "rejection_sample", hook.sample)
    text = program + "\nprint(redescription_text(R, pruned=true))\nprint(redescriptions(R, pruned=true))"
    rng = np.random.default_rng(5)
    ids = np.arange(12)
    big = {"left": pd.DataFrame({"id": ids, "a": rng.choice(["x", "y", "z"], 12), "b": rng.uniform(0, 3, 12)}),
           "right": pd.DataFrame({"id": ids[::-1], "c": rng.choice(["u", "v", "w"], 12), "d": rng.uniform(0, 3, 12)})}
    small = {name: frame[frame["id"] != 4].reset_index(drop=True) for name, frame in big.items()}
    for pair in ((big, small), (D, D_PRIME)):
        seen = []
        for tables in pair:
            hook.calls.clear()
            caps = {"rho": 2} if "rho=" in program else {"budget": 10}
            seen.append((*_run(tables, text, **caps), list(hook.calls)))
        assert seen[0][2] == "ok" and seen[0] == seen[1]
    assert any(call[0] == "counts" for call in hook.calls)


# ---------------------------------------------------------------- 5. a tiny epsilon: a crash after the charge
# FINDING 5 of the adversarial review, fixed (sampler runs at most at MAX_SAMPLER_EPSILON; coding; expm1).
@pytest.mark.parametrize("algorithm", ["AltExpM", "MCMCTreePair"])
def test_a_tiny_epsilon_releases_or_is_refused_before_the_charge(algorithm: str) -> None:
    from jostle import Session
    from jostle.diagnostics.errors import JostleError

    session = Session(ledger_path=":memory:", seed=3, output=io.StringIO(), budget=10)
    session.bind_database(D, key="id", schemas=SCHEMAS)
    try:
        session.run(f'R = redescribe({VIEWS}, algorithm="{algorithm}", depth=2, min_support=0, epsilon=1e-20)\n'
                    "print(redescription_text(R, pruned=true))")
    except JostleError as error:  # a refusal is fine if nothing was charged
        assert len(list(session.ledger)) == 0, f"refused after the charge: {error}"


def test_each_release_moves_within_its_claim_on_stress_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """With public releases (so both runs build the same trees), the exact values each release is
    given move between D and D' within its claim: the count vectors by at most 1 in L1, the
    ExpMech utilities in one row only, all downwards (monotone) and by less than 2. Stress:
    entities present in one view only (on both sides of the join), keys in another order in
    each view, the removed entity in both views or in one."""
    from jostle.learners.redescription import expmech, extract

    hook = _PublicReleases()
    monkeypatch.setattr(extract.safe_noise, "release_counts", hook.counts)
    monkeypatch.setattr(expmech.safe_noise, "choose_exponential_rows", hook.rows)
    rng = np.random.default_rng(11)
    n = 40
    left = pd.DataFrame({"id": np.arange(n), "a": rng.choice(["x", "y", "z"], n), "b": rng.uniform(0, 3, n)})
    right = pd.DataFrame({"id": rng.permutation(np.arange(5, n + 5)), "c": rng.choice(["u", "v", "w"], n),
                          "d": rng.uniform(0, 3, n)})
    big = {"left": left, "right": right}
    program = (f'R = redescribe({VIEWS}, algorithm="AltExpM", tries=2, alternations=2, depth=3, min_support=0, '
               "epsilon=1)\nprint(redescription_text(R, pruned=true))")
    for removed in (6, 20, 39, 0):  # in both views (6, 20, 39); in the left view only (0: no change)
        small = {name: frame[frame["id"] != removed].reset_index(drop=True) for name, frame in big.items()}
        runs = []
        for tables in (big, small):
            hook.calls.clear()
            hook.exact.clear()
            output, ledger, end = _run(tables, program, budget=10)
            assert end == "ok", end
            runs.append((output, list(hook.calls), list(hook.exact)))
        assert runs[0][:2] == runs[1][:2]
        for call, before, after in zip(runs[0][1], runs[0][2], runs[1][2]):
            move = before - after
            if call[0] == "counts":
                assert np.abs(move).sum() <= call[2] and (removed != 0 or not move.any()), (call, move)
            else:
                rows = np.flatnonzero(np.abs(move).max(axis=1) > 0)
                # D holds the entity: its utilities are lower, in one node's row, by less than 2
                assert rows.size <= 1 and (move <= 0).all() and (move > -call[2]).all(), (call, move)


# ---------------------------------------------------------------- 6. the metafeature's epsilon rounded up
# FINDING 6 of the review, fixed: keyed.engine_closures measures at floor_float(amount).
def test_the_noisy_entity_count_draws_at_most_what_was_charged(monkeypatch: pytest.MonkeyPatch) -> None:
    from jostle.learnerkit.keyed import engine_closures
    from jostle.learners.redescription.family import FAMILY
    from jostle.learners.redescription.metafeatures import REDESCRIPTION_METAFEATURES
    from jostle.learners.redescription.task import RedescriptionData
    from jostle.privacy import safe_noise

    drawn: list[Fraction] = []
    original = safe_noise.release_counts

    def spy(noise: Any, counts: Any, l1: int, epsilon: Any) -> Any:
        drawn.append(Fraction(epsilon))
        return original(noise, counts, l1, epsilon)

    monkeypatch.setattr(safe_noise, "release_counts", spy)

    class Interpreter:
        randomness = Randomness(1)

    measure, _ = engine_closures(FAMILY, RedescriptionData(ONE), Interpreter())
    charged = Fraction(1, 10)
    measure(REDESCRIPTION_METAFEATURES["n_entities"], charged, Randomness(2), None)
    assert drawn and drawn[0] <= charged, f"released at {drawn[0]} (= {float(drawn[0] - charged):.2g} above the charge)"
