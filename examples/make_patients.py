"""Generate the synthetic patient table used by the examples (examples/data/patients.csv).

The data is made up: 2,000 patients drawn from a fixed-seed model in which age drives blood
pressure and diabetes, and smoking adds to both. It exists so that the quickstart runs on a
fresh machine without a network. Run `python examples/make_patients.py` to regenerate it;
the output is identical every time.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

ROWS = 2000
SEED = 20261122


def make_patients(rows: int = ROWS, seed: int = SEED) -> pd.DataFrame:
    """Return the synthetic patient table."""
    rng = np.random.default_rng(seed)
    age = np.clip(rng.normal(48, 18, rows), 18, 95).round().astype(int)
    sex = rng.choice(["F", "M"], rows)
    smoker = np.where(rng.random(rows) < 0.22, "yes", "no")
    bmi = np.clip(rng.normal(27 + 0.03 * (age - 48), 4.5, rows), 15, 50).round(1)
    systolic = np.clip(100 + 0.5 * age + 6 * (smoker == "yes") + rng.normal(0, 12, rows), 80, 220).round()
    risk = -6 + 0.05 * age + 0.12 * (bmi - 25) + 0.5 * (smoker == "yes")
    diabetic = np.where(rng.random(rows) < 1 / (1 + np.exp(-risk)), "yes", "no")
    region = rng.choice(["north", "south", "east", "west"], rows, p=[0.3, 0.3, 0.2, 0.2])
    return pd.DataFrame({
        "age": age, "sex": sex, "smoker": smoker, "bmi": bmi,
        "systolic": systolic.astype(int), "diabetic": diabetic, "region": region,
    })


def main() -> None:
    out = Path(__file__).parent / "data" / "patients.csv"
    out.parent.mkdir(exist_ok=True)
    make_patients().to_csv(out, index=False)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
