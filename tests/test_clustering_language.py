"""Private k-means in the language and as estimators: SuLQKMeans / DPLloyd charged once in rho
before the rows are coded, refusals (pure budgets, over budget, bad declarations) with nothing
spent, models as values, a ChoiceMaker over the clustering Options in a program, the
scikit-learn estimators, and the family's conformance suite."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.diagnostics.errors import BudgetExceeded, JostleRuntimeError, MeasureMismatch
from jostle.learners.clustering import kmeans
from jostle.learners.clustering.corpus import mixture

SCHEMA = {"x": ("numeric", 0, 10), "y": ("numeric", 0, 10)}
BOUNDS = "bounds={x: [0, 10], y: [0, 10]}"


def _session(total: str | None = "budget rho(1.0)\n", seed: int = 1) -> Session:
    drawn = mixture(4000, 2, 3, 4.0, 1)
    session = Session(budget=None, seed=seed, ledger_path=":memory:")
    session.bind_private("t", pd.DataFrame(drawn.rows, columns=["x", "y"]), schema=SCHEMA)
    session.bind_public("pub", pd.DataFrame(mixture(1000, 2, 3, 4.0, 2).rows, columns=["x", "y"]))
    if total:
        session.run(total)
    return session


def _rhos(session: Session) -> list[Fraction]:
    return [charge.budget.rho for charge in session.ledger]


def test_dplloyd_is_charged_its_rho_once_and_its_model_is_a_value() -> None:
    session = _session()
    session.run(f'm = DPLloyd(t, ["x", "y"], k=3, {BOUNDS}, rho=0.1)\ntext = str(m)\nc = centres(m)\n'
                "q = kmeans_queries(m)\ne = kmeans_error(m, pub)\na = assign(m, pub)\n")
    assert _rhos(session) == [kmeans.kmeans_plan("dplloyd", 3, 2, 5, rho=Fraction(1, 10)).rho]
    assert session.eval("text").startswith("% DPLloyd k-means: k=3, 5 iteration(s), T=45")
    assert session.eval("q") == 45 and len(session.eval("c")) == 3 and set(session.eval("c")[0]) == {"x", "y"}
    assert 0 < session.eval("e") < 1 and len(session.eval("a")) == 1000 and set(session.eval("a")) <= {0, 1, 2}


def test_a_stated_variance_is_charged_what_sulq_counts_and_bounds_default_to_the_schema() -> None:
    session = _session()
    session.run('m = SuLQKMeans(t, ["x", "y"], k=3, iterations=3, variance=400)\nq = kmeans_queries(m)\n')
    assert session.eval("q") == 27
    assert _rhos(session) == [kmeans.kmeans_plan("sulq", 3, 2, 3, variance=400).rho]
    assert float(_rhos(session)[0]) == pytest.approx(27 / 800, rel=1e-4)


@pytest.mark.parametrize("total,call,error", [
    ("budget rho(1.0)\n", f'm = DPLloyd(t, ["x", "y"], k=3, {BOUNDS}, epsilon=0.5)\n', MeasureMismatch),
    ("budget 1.0\n", f'm = DPLloyd(t, ["x", "y"], k=3, {BOUNDS}, variance=100)\n', MeasureMismatch),
    ("budget rho(0.01)\n", f'm = DPLloyd(t, ["x", "y"], k=3, {BOUNDS}, rho=0.1)\n', BudgetExceeded),
    ("budget rho(1.0)\n", 'm = DPLloyd(t, ["x", "y"], k=3, bounds={x: [0, 10], y: [5, 5]}, rho=0.1)\n',
     JostleRuntimeError),
    ("budget rho(1.0)\n", f'm = DPLloyd(t, ["x", "z"], k=3, {BOUNDS}, rho=0.1)\n', JostleRuntimeError),
    ("budget rho(1.0)\n", f'm = DPLloyd(t, ["x", "y"], k=0, {BOUNDS}, rho=0.1)\n', JostleRuntimeError),
    ("budget rho(1.0)\n", f'm = DPLloyd(t, ["x", "y"], k=3, {BOUNDS}, rho=0.1, variance=9)\n', JostleRuntimeError),
])
def test_refusals_spend_nothing(total, call, error) -> None:
    session = _session(total)
    with pytest.raises(error):
        session.run(call)
    assert len(session.ledger) == 0


def test_a_public_table_is_clustered_for_free() -> None:
    session = _session()
    session.run(f'm = DPLloyd(pub, ["x", "y"], k=3, {BOUNDS})\ntext = str(m)\n')
    assert "nothing charged" in session.eval("text") and len(session.ledger) == 0


def test_a_choicemaker_over_clustering_options_works_in_a_program(tmp_path) -> None:
    from jostle.choicemaker import train
    from jostle.learners.clustering.corpus import clustering_corpus
    from jostle.learners.clustering.family import FAMILY
    from jostle.learners.clustering.task import ClusteringGrid

    grid = ClusteringGrid(sizes=(500,), rhos=(0.1,), repetitions=1, test_size=200)  # tiny: the route, not the model
    trained = train(["SuLQKMeans", "DPLloyd"], ["n_dimensions", "n_clusters", "log_rho"], clustering_corpus(3), grid,
                    family=FAMILY, cache_dir=tmp_path, n_jobs=1, progress=False)
    session = _session()
    session.run("choicemaker C among {SuLQKMeans, DPLloyd} informed by {n_dimensions, n_clusters, log_rho} "
                "trained on clustering_corpus()\n")
    session.interpreter.globals.lookup("C").trained = trained
    session.run(f'task = clustering_task(["x", "y"], k=3, {BOUNDS})\nm = C(t, task, rho=0.1)\ntext = str(m)\n'
                "why = explain(C)\n")
    assert session.eval("text").startswith("% C: ")
    assert "chose" in session.eval("why")
    assert sum(_rhos(session)) == Fraction(1, 10)
    with pytest.raises(Exception):
        session.run("m = C(t, task, epsilon=0.1)\n")  # Gaussian Options: a pure budget is refused
    assert sum(_rhos(session)) == Fraction(1, 10)


# ---------------------------------------------------------------- the estimators
def test_the_estimators_fit_charge_and_refuse_before_drawing() -> None:
    from jostle.estimators import DPLloydKMeans, PrivacyBudget, SuLQKMeans
    from jostle.privacy.subledger import BudgetExceededError

    drawn = mixture(20_000, 2, 3, 4.0, 5)
    frame = pd.DataFrame(drawn.rows, columns=["x", "y"])
    budget = PrivacyBudget(rho=1.0)
    start = np.clip(drawn.centres + 1.0, 0, 10)
    fitted = DPLloydKMeans(3, bounds={"x": (0, 10), "y": (0, 10)}, rho=0.5, init=start, iterations=8, budget=budget,
                           random_state=0).fit(frame)
    distance = np.linalg.norm(fitted.cluster_centers_[:, None] - drawn.centres[None], axis=2)
    assert distance.min(axis=1).max() < 0.2 and fitted.queries_ == 8 * 3 * 3 and fitted.rho_spent_ == 0.5
    assert fitted.error(frame, reference=drawn.centres) < 1.02 and list(fitted.predict(frame.head(3))) == list(
        fitted.predict(drawn.rows[:3]))
    sulq = SuLQKMeans(3, bounds=[(0, 10), (0, 10)], variance=400, rho=None, budget=budget, random_state=0)
    sulq.fit(drawn.rows)
    assert sulq.rho_spent_ == pytest.approx(45 / 800, rel=1e-4)

    events = []

    class NoDraws:
        def discrete_gaussian(self, *args):
            events.append("draw")

    refused = DPLloydKMeans(3, bounds={"x": (0, 10), "y": (0, 10)}, rho=0.9, budget=budget, noise=NoDraws())
    with pytest.raises(BudgetExceededError):
        refused.fit(frame)
    assert not events and not hasattr(refused, "model_")
    with pytest.raises(ValueError, match="more than rho"):
        SuLQKMeans(3, bounds=[(0, 10), (0, 10)], variance=1, rho=0.01, budget=budget).fit(drawn.rows)
    with pytest.raises(ValueError, match="bounds"):
        SuLQKMeans(3, rho=0.01, budget=budget).fit(drawn.rows)
    assert float(budget.spent.rho) == pytest.approx(0.5 + 45 / 800, rel=1e-4)


def test_the_family_conforms() -> None:
    from jostle.choicemaker.conformance import check_family
    from jostle.learners.clustering.family import FAMILY

    check_family(FAMILY)
