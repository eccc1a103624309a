"""ChoiceMaker training fans out with whichever joblib backend is active (issue 14).

`experience_table` runs its pieces through joblib; a user picks the backend around the call
(`joblib.parallel_config(backend="spark")` with joblib-spark puts them on a cluster). The
backends that cannot yield results as they finish (joblib-spark's, multiprocessing) used to make
training fail ("does not support return_as=generator"); any backend now gives the same table.
"""

from __future__ import annotations

import joblib
import pandas as pd
import pytest

from jostle.choicemaker import experience_table
from tests.test_choicemaker_engine import GRID, metafeatures, options, tiny_corpus


def _table(cache, n_jobs: int) -> pd.DataFrame:
    table = experience_table(options(), metafeatures(), tiny_corpus(), GRID, mf_share=0.1, cache_dir=cache, n_jobs=n_jobs,
                             progress=False)
    return table.drop(columns=["seconds"])  # timings differ; every other cell is a function of the seeds


@pytest.mark.parametrize("backend", ["threading", "multiprocessing", "loky"])
def test_training_runs_on_the_active_joblib_backend_with_the_same_experience(backend: str, tmp_path):
    reference = _table(tmp_path / "sequential", 1)
    used = []
    original = joblib.Parallel.__call__

    def spy(self, iterable):  # noqa: ANN001 - joblib's own signature
        used.append(type(self._backend).__name__)
        return original(self, iterable)

    joblib.Parallel.__call__ = spy
    try:
        with joblib.parallel_config(backend=backend):
            table = _table(tmp_path / backend, 2)
    finally:
        joblib.Parallel.__call__ = original
    assert used and used[0].lower().startswith(backend[:5])
    pd.testing.assert_frame_equal(table, reference)
