"""The histogram benchmark's summary: regrets per dimensionality, against DPBench's original
algorithms, and bootstrap intervals over shapes (on a small synthetic result set)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import choicemaker_histograms as bench  # noqa: E402


def _frames() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(0)
    fixed, chosen, paying = [], [], []
    for dims in (1, 2):
        for shape in range(5):
            for epsilon in (0.1, 1.0):
                key = {"shape": f"{dims}D/s{shape}", "dims": dims, "domain": "8", "domain_size": 8,
                       "scale": 1000, "epsilon": epsilon}
                errors = {"DAWA": 1.0, "DAWA10": 0.8, "HB": 2.0 + rng.uniform()}
                fixed += [{**key, "option": o, "error": e, "seconds": 0.1} for o, e in errors.items()]
                paying += [{**key, "option": o, "error": e * 1.01, "seconds": 0.1} for o, e in errors.items()]
                chosen.append({**key, "rep": 0, "choice": "DAWA", "error": 1.0, "seconds": 0.2})
    return pd.DataFrame(fixed), pd.DataFrame(chosen), pd.DataFrame(paying)


def test_summary_reports_each_dimensionality_with_intervals_and_the_original_algorithms():
    summary = bench.summarise(*_frames(), mf_share=0.01)
    for label in ("1D", "2D"):
        block = summary["by_dims"][label]
        # DAWA10 is best everywhere; the ChoiceMaker always picked DAWA: regret 1 / 0.8
        assert block["choicemaker"]["avg_regret"] == np.float64(1.25)
        # against DPBench's original algorithms (no DAWA10) the same choices are the best
        assert block["choicemaker"]["avg_regret_vs_original_algorithms"] == 1.0
        interval = block["bootstrap"]["choicemaker_ci95"]
        assert interval[0] <= 1.25 <= interval[1]
        assert block["bootstrap"]["best_fixed"] == "DAWA10"
        assert summary["goal"][label]["choicemaker_beats_every_fixed"] is False
