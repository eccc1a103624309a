"""Mechanisms under audit as batched runners: `run(dataset, count, seed) -> outputs`, built from
the public APIs: `release_runner` calls a `jostle.language.mechanisms` function on a private
value the language made (`private_value`, in an `AuditContext` whose accountant never refuses),
and `session_runner` runs a whole Jostle program in `jostle.Session`s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from jostle.language.values import Private
from jostle.privacy.budget import Accountant, Budget, RhoZCDPBudget
from jostle.privacy.noise import Randomness
from jostle.session import Session

BatchRun = Callable[[Any, int, int], Any]
"""`run(dataset, count, seed)`: `count` independent outputs of the mechanism on `dataset`."""

def seeds_from(seed: int, count: int) -> list[int]:
    """`count` seeds derived from `seed` (numpy's SeedSequence): the audit's phases and a
    session runner's batches draw independent, reproducible noise."""
    return [int(s) for s in np.random.SeedSequence(seed).generate_state(count)]


_AUDIT_CAP = 10**12  # the harness's own accountant: large enough never to refuse a sample
_AUDIT_DELTA_CAP = Fraction(1, 2)


class AuditContext:
    """A release context for calling `jostle.language.mechanisms` functions directly from Python.

    It holds seeded randomness and an accountant with a cap no audit reaches. The accountant
    only satisfies the mechanisms' charge-before-noise protocol; what is audited is the noise.

    Args:
        seed: Seed of the (reproducible, unsafe for real releases) randomness.
        randomness: An existing source to share instead (then `seed` is ignored).
    """

    def __init__(self, seed: int, randomness: Randomness | None = None, zcdp: bool = False) -> None:
        self.randomness = randomness if randomness is not None else Randomness(seed)
        cap = RhoZCDPBudget(Fraction(_AUDIT_CAP)) if zcdp else Budget.of(_AUDIT_CAP, _AUDIT_DELTA_CAP)
        self.accountant = Accountant(cap)

    def fresh(self) -> AuditContext:
        """A context with the same randomness and an empty ledger."""
        return AuditContext(0, self.randomness)

    def in_zcdp(self) -> AuditContext:
        """A context with the same randomness whose accountant accounts in zCDP (for releases at a
        rho, which a DP accountant refuses)."""
        return AuditContext(0, self.randomness, zcdp=True)


def private_value(frame: Any, schema: Mapping[str, Any], expression: str, public_rows: bool = False,
                  table: str = "t") -> Any:
    """The private value the language computes for `expression` over `frame` bound as `table`.

    Computing an aggregate spends nothing, so the session's budget is never touched.
    """
    with _harness_session(1.0) as session:
        session.bind_private(table, frame, dict(schema), public_rows=public_rows)
        session.run(f"audit_value_ = {expression}")
        return session.interpreter.globals.lookup("audit_value_")


def _harness_session(budget: Fraction | float, delta: float = 0.0, seed: int | None = None) -> Session:
    """A session for the harness, with an in-memory ledger.

    An audit runs a mechanism thousands of times on the same data on purpose; the durable
    ledger would rightly refuse that as overspending the data's lifetime budget (and would
    record it). Each harness session still enforces its own total, per run and per block.

    It runs without the dry run in front (issue 29): the dry run reads only public stand-ins,
    draws from its own seeded noise and releases nothing, so it changes no sample the audit
    collects; it would only run the harness's loop twice (about 1.6x the time of a dispatch
    audit). The dry run is audited by its own tests (tests/test_dry_run.py,
    tests/privacy/test_dry_run_privacy.py) and by the neighbour fuzzer.
    """
    return Session(budget=budget, delta=delta, seed=seed, ledger_path=":memory:", dry_run=False)


def replicate(value: Private, count: int) -> Private:
    """`count` copies of a private scalar as one private vector with the scalar's sensitivity.

    An auditing device: laplace, geometric and gaussian add independent noise to each
    coordinate with a scale set by l1 (or l2), so each coordinate of the release is distributed
    exactly as one release of the scalar and one call draws `count` independent samples. The
    vector's true sensitivity is `count` times larger: never release it as data.
    """
    if not isinstance(value, Private) or value.is_vector:
        raise TypeError("replicate takes a private scalar")
    return dataclasses.replace(value, value=np.full(count, float(value.value)))


def release_runner(release: Callable[[AuditContext, Any], Any], expression: str,
                   schema: Mapping[str, Any], vectorise: bool = False, public_rows: bool = False) -> BatchRun:
    """A runner that releases the language's value of `expression` over the dataset.

    Args:
        release: `release(ctx, value)` calls a mechanism, e.g.
            `lambda ctx, x: mechanisms.laplace(ctx, x, 0.5, SPAN)`.
        expression: A Jostle expression over the private table `t`, e.g. 'sum(t, "age")'.
        schema: The table's public schema.
        vectorise: Draw all samples in one call on `replicate(value, count)`; only for
            mechanisms that add independent per-coordinate noise to a scalar.
        public_rows: Bind the table with a public row count (randomized response).
    """
    def run(frame: Any, count: int, seed: int) -> Any:
        value = private_value(frame, schema, expression, public_rows)
        context = AuditContext(seed)
        if vectorise:
            return np.asarray(release(context, replicate(value, count)))
        return [release(context, value) for _ in range(count)]

    return run


def session_runner(program: str, output: str, schema: Mapping[str, Any], run_budget: float,
                   run_delta: float = 0.0, public_rows: bool = False, per_session: int = 40) -> BatchRun:
    """A runner that executes a Jostle program through `jostle.Session` and collects `output`.

    Each session runs the program `per_session` times in a loop, with a session budget of
    `per_session` x `run_budget`, so every run gets exactly the budget it would have alone
    (runs compose sequentially; the loop is the harness, not part of the mechanism). Short
    sessions keep the accountant's per-charge work small.

    Args:
        program: Statements over the private table `t` (no `budget` statement: give the run's
            budget with `with budget` blocks or explicit epsilons).
        output: A Jostle expression for the released output of one run, e.g. "[a, b]".
        schema: The table's public schema.
        run_budget, run_delta: What one run of the program may spend.
        public_rows: Bind the table with a public row count.
        per_session: Runs per session.
    """
    body = "\n".join("    " + line for line in program.strip("\n").splitlines())

    def run(frame: Any, count: int, seed: int) -> list[Any]:
        outputs: list[Any] = []
        batches = -(-count // per_session)
        for batch_seed in seeds_from(seed, batches):
            runs = min(per_session, count - len(outputs))
            total = Fraction(str(run_budget)) * runs
            with _harness_session(total, float(Fraction(str(run_delta)) * runs), batch_seed) as session:
                session.bind_private("t", frame, dict(schema), public_rows=public_rows)
                session.run(f"audit_outputs_ = []\nfor audit_run_ in range({runs}):\n{body}\n"
                            f"    audit_outputs_ = audit_outputs_ + [{output}]\n")
                outputs.extend(_cell_values(x) for x in session.eval("audit_outputs_"))
        return outputs

    return run


def _cell_values(value: Any) -> Any:
    """A released histogram's values: `Session.eval` labels it (a pandas Series, or a DataFrame
    for a 2D one); the audit reads its cells as the flat, row-major vector the release made."""
    import pandas as pd

    if isinstance(value, (pd.Series, pd.DataFrame)):
        return value.to_numpy().reshape(-1)
    return value
