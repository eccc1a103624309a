"""A scikit-learn-style estimator of DP ILP theories: `DPILPClassifier`.

    from jostle.estimators import DPILPClassifier, PrivacyBudget
    from jostle.learners.ilp import trains

    budget = PrivacyBudget(2.0)
    learner = DPILPClassifier(1.0, fake="has_car(T, C), short(C), closed(C), long(C)", budget=budget)
    learner.fit(trains.generate_trains(3000, seed=1), "eastbound")
    print(learner.to_text())              # eastbound(T) :- has_car(T, C), short(C), closed(C).
    learner.score(trains.generate_trains(1000, seed=2))       # accuracy on PUBLIC test data

The data is relational, not a matrix, so `fit(database, target)` takes either a
`relations.RelationalDatabase` (its examples' labels are the classes; `target` names the target
predicate) or tables: a mapping of table names to pandas frames, the examples table first (or
named by `examples=`), declared by the estimator's public parameters `key` (the example id
column), `facts` (each fact table's `tables.FactTable`), `domains` (every categorical column's
public constants), `positive` (the label of a positive example), `background`; `target` is then
the examples' label column. `predict` and `score` take data of the same kind.

Privacy (unit: one example and all its facts). Modes, the fake example and the domains are
public declarations, never read from the data. `fit` checks its parameters, builds the database
(refusing, for the curator who runs it, rows the declarations cannot place), then charges the
whole `epsilon` to the shared budget (`budget=`, a `jostle.privacy.shared_budget.PrivacyBudget`
shared by clones and by every family's estimators, or `default_budget()`, which has no total and
warns when fits add up) BEFORE anything is drawn: a refused charge raises `BudgetExceededError`,
draws nothing and leaves the estimator unfitted. The learner (`private.dp_learn`, or the trivial
theory) then runs under `option_guard(epsilon)`, which refuses a step past what was charged. A
`PrivacyBudget` counts fits as fits about the same people (the sum of their epsilons).
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from jostle.learners.ilp.declare import DEFAULTS, TRIVIAL_METHODS, schema_for, search
from jostle.learners.ilp.relations import RelationalDatabase
from jostle.learners.ilp.tables import Background, FactTable, RelationalSchema
from jostle.privacy.shared_budget import PrivacyBudget, charge_default
from jostle.privacy.subledger import option_guard

Database = RelationalDatabase | Mapping[str, pd.DataFrame]


class DPILPClassifier(BaseEstimator):
    """Differentially private ILP (Zeng et al.): a theory of Prolog clauses, learned at epsilon.

    Args:
        epsilon: The fit's whole budget (unit: one example and all its facts).
        modes: Aleph mode texts (default: one per predicate of the data's schema).
        fake: The fake example: a Prolog body (public domain knowledge), or a list of them, one
            per round in turn; None for the modes' vocabulary cut at k (shuffled by `fake_seed`).
        fake_seed: A public seed for the vocabulary's order (None: mode order).
        k: The most literals of the fake bottom clause (its lattice has up to 2^k clauses).
        max_length: The most body literals of a clause (the naive reduction's lattice).
        levels: l of the relevance-aware reduction.
        rounds: Rounds of the covering loop (the most clauses), epsilon / rounds each.
        method: "relevance", "naive", "majority" or "all_positive" (the trivial theories).
        min_score: A round's clause is kept only when its noisy P - N exceeds this.
        min_positives: The relevance-aware pruning's public minimum positive count.
        key, facts, domains, positive, background, examples, example, head: The declarations of
            tables given as frames (see the module docstring); unused for a RelationalDatabase.
        budget: The shared `PrivacyBudget` the fit charges (None: `default_budget()`).
        random_state: Seeds the noise (None: secure randomness).

    Attributes (after fit):
        learned_: The `aleph.LearnedTheory` (theory, per-clause reports with noisy P and N).
        theory_: Its `theory.Theory`.
        modes_, fake_: The modes and fake bottom clauses used (public).
        epsilon_spent_: The exact epsilon charged (0 for "all_positive", which reads nothing).
    """

    def __init__(self, epsilon: float = 1.0, *, modes: Sequence[str] | None = None,
                 fake: str | Sequence[str] | None = None, fake_seed: int | None = None,
                 k: int = DEFAULTS["k"], max_length: int = DEFAULTS["max_length"],
                 levels: int = DEFAULTS["levels"], rounds: int = DEFAULTS["rounds"],
                 method: str = DEFAULTS["method"], min_score: float = 0, min_positives: int = 0,
                 key: str | None = None, facts: Mapping[str, FactTable] | None = None,
                 domains: Mapping[str, Sequence[Any]] | None = None, positive: Any = True,
                 background: Sequence[Background] = (), examples: str | None = None, example: str = "",
                 head: str = "", budget: PrivacyBudget | None = None, random_state: int | None = None) -> None:
        self.epsilon = epsilon
        self.modes = modes
        self.fake = fake
        self.fake_seed = fake_seed
        self.k = k
        self.max_length = max_length
        self.levels = levels
        self.rounds = rounds
        self.method = method
        self.min_score = min_score
        self.min_positives = min_positives
        self.key = key
        self.facts = facts
        self.domains = domains
        self.positive = positive
        self.background = background
        self.examples = examples
        self.example = example
        self.head = head
        self.budget = budget
        self.random_state = random_state

    # ------------------------------------------------------------------ the data
    def _database(self, database: Database, target: str | None,
                  schema: RelationalSchema | None) -> tuple[RelationalDatabase, str]:
        """The relational database of `database` (tables built under `schema`) and the target
        predicate's name."""
        if isinstance(database, RelationalDatabase):
            return database, target or self.head or getattr(self, "head_", "") or "target"
        if schema is None:
            raise ValueError("this estimator was fitted on a RelationalDatabase: give it one")
        frames = {fact.name: database[fact.name] for fact in schema.facts}
        return schema.build(database[schema.examples_name], frames), schema.head

    def _schema(self, database: Database, target: str | None) -> RelationalSchema | None:
        """The schema of tables given as frames, from the declarations (None for a database)."""
        if isinstance(database, RelationalDatabase):
            return None
        if not isinstance(database, Mapping) or not database:
            raise TypeError("fit/predict take a RelationalDatabase or a mapping of table names to DataFrames, got "
                            f"{type(database).__name__}")
        if self.key is None or self.domains is None or target is None:
            raise ValueError("tables given as frames need key= (the example id column), domains= (every categorical "
                             "column's public constants) and fit's target (the label column)")
        name = self.examples or next(iter(database))
        if name not in database:
            raise ValueError(f"examples={name!r} is not a table of the database ({list(database)})")
        declared = dict(self.facts or {})
        facts = {table: (frame, declared.get(table, FactTable(table))) for table, frame in database.items()
                 if table != name}
        schema = schema_for(database[name], self.key, target, self.positive, facts, domains=self.domains,
                            background=self.background, example=self.example, head=self.head)
        return replace(schema, examples_name=name)

    # ------------------------------------------------------------------ fit
    def fit(self, database: Database, target: str | None = None) -> DPILPClassifier:
        """Check, build the database, charge the whole epsilon to the shared budget, then learn.

        Args:
            database: A `RelationalDatabase`, or table name -> DataFrame (see the module).
            target: The label column (tables), or the target predicate's name (a database).

        Returns:
            The fitted estimator.

        Raises:
            ValueError, TypeError, TableError, ModeError, TheoryError: Before anything is
                charged (bad parameters, modes or fake example, tables the declarations cannot
                place).
            BudgetExceededError: The budget refuses the fit; nothing is drawn.
        """
        from jostle.learners.ilp.private import dp_learn, planned_cost, trivial_theory
        from jostle.privacy.noise import Randomness

        if isinstance(self.epsilon, bool) or not isinstance(self.epsilon, (int, float, Fraction)) \
                or not np.isfinite(float(self.epsilon)) or self.epsilon <= 0:
            raise ValueError(f"epsilon must be a finite number > 0, got {self.epsilon!r}")
        if self.budget is not None and not isinstance(self.budget, PrivacyBudget):
            raise TypeError(f"budget must be a PrivacyBudget shared by fits (or None), got {self.budget!r}")
        schema = self._schema(database, target)
        data, head = self._database(database, target, schema)
        settings = {"modes": self.modes, "fake": self.fake, "fake_seed": self.fake_seed, "k": self.k,
                    "max_length": self.max_length, "levels": self.levels, "rounds": self.rounds,
                    "method": self.method, "min_score": self.min_score, "min_positives": self.min_positives}
        modes, fakes, checked = search(schema if schema is not None else data, settings, head)
        method = checked["method"]
        noise = Randomness(seed=self.random_state)  # a bad seed fails here, before the charge
        charged = Fraction(0)
        if planned_cost(Fraction(self.epsilon), method if method in TRIVIAL_METHODS else None) > 0:
            what = f"DPILPClassifier.fit ({method}, epsilon {float(self.epsilon):g})"
            charged = Fraction(self.budget.charge(self.epsilon, what) if self.budget is not None
                               else charge_default(type(self).__name__, self.epsilon, what, stacklevel=2))
        guard = option_guard("DPILPClassifier", charged)
        if method in TRIVIAL_METHODS:
            learned = trivial_theory(data, modes, charged, noise=noise, charge=guard, rule=method)
        else:
            learned = dp_learn(data, modes, list(fakes), charged, method=method, levels=checked["levels"],
                               rounds=checked["rounds"], noise=noise, charge=guard, min_score=checked["min_score"],
                               min_positives=checked["min_positives"])
        self.schema_, self.head_ = schema, head
        self.modes_, self.fake_ = modes, fakes
        self.learned_, self.theory_ = learned, learned.theory
        self.epsilon_spent_ = charged
        return self

    # ------------------------------------------------------------------ use
    def predict(self, database: Database) -> np.ndarray:
        """Whether the theory covers each example (True: positive), in the examples' order."""
        from jostle.learners.ilp.theory import covers

        check_is_fitted(self, "learned_")
        data, _ = self._database(database, None, self.schema_)
        if not self.theory_.clauses:
            return np.zeros(len(data.examples), dtype=bool)
        return covers(self.theory_, data)

    def score(self, database: Database, target: str | None = None) -> float:
        """The share of examples whose label the theory gives (covered = positive), on PUBLIC data."""
        check_is_fitted(self, "learned_")
        data, _ = self._database(database, target, self.schema_)
        return float(np.mean(self.predict(data) == data.examples.labels)) if len(data.examples) else float("nan")

    def to_text(self) -> str:
        """The theory as Prolog clauses (a comment when it has none: nothing is covered)."""
        check_is_fitted(self, "learned_")
        return self.learned_.to_prolog()


__all__ = ["DPILPClassifier"]
