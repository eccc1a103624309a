"""Shared fixtures: small deterministic private tables made here (no network, no ../shared)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

PATIENT_SCHEMA = {
    "age": {"type": "numeric", "bounds": [0, 100]},
    "sex": {"type": "categorical", "values": ["F", "M"]},
    "smoker": {"type": "categorical", "values": ["yes", "no"]},
}


def make_patients(rows: int = 500, seed: int = 7) -> pd.DataFrame:
    """A synthetic table: age uniform in [0, 100], sex and smoker at random."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(0, 101, rows),
        "sex": rng.choice(["F", "M"], rows),
        "smoker": rng.choice(["yes", "no"], rows, p=[0.3, 0.7]),
    })


@pytest.fixture
def patients() -> pd.DataFrame:
    return make_patients()
