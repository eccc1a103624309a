"""Does releasing slow down as the ledger grows? (issue 3: incremental accounting)

Times 10,000 releases in chunks of 1,000 and reports the time of the last chunk over the first:

  * `accountant`: Accountant.charge alone, on a partition tree (8 parts, charges alternating
    between parts and the whole table), for the current accountant and, if git can provide
    it, the accountant before this change (which re-costed the whole ledger on every charge);
  * `session, in-memory ledger`: the same number of releases made by a Jostle program,
    `laplace(count(t), eps)` in a loop, with ":memory:" as the durable store;
  * `session, file ledger`: the same with an SQLite file (WAL, synchronous=FULL: one fsync
    per release), fewer releases since each costs a durable commit.

Run from the repository root:  python benchmarks/budget_growth.py [--releases 10000]
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jostle import Session  # noqa: E402
from jostle.privacy.budget import Accountant, Budget, ParallelGroup  # noqa: E402

OLD_COMMIT = "4dbfa92"  # the accountant before incremental costs


def _old_budget_module():
    """The accountant as of OLD_COMMIT, loaded under another name (None if git cannot)."""
    try:
        source = subprocess.run(["git", "show", f"{OLD_COMMIT}:jostle/privacy/budget.py"], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    path = Path(tempfile.mkdtemp()) / "old_budget.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("old_budget", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_budget"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def time_accountant(module, releases: int, chunk: int) -> list[float]:
    accountant = module.Accountant(module.Budget.of(10**6))
    group = module.ParallelGroup(accountant.root, "g")
    parts = [group.part(k) for k in range(8)]
    times = []
    for start in range(0, releases, chunk):
        began = time.perf_counter()
        for i in range(start, start + chunk):
            node = parts[i % 8] if i % 3 else accountant.root
            accountant.charge(module.Budget.of(0.01), node, "laplace", "", None)
        times.append(time.perf_counter() - began)
    return times


def time_session(ledger: str, releases: int, chunk: int) -> list[float]:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 200), "g": rng.choice(["a", "b"], 200)})
    session = Session(budget=10**6, seed=1, output=io.StringIO(), ledger_path=ledger)
    session.bind_private("t", frame, {"x": {"type": "numeric", "bounds": [0, 1]},
                                      "g": {"type": "categorical", "values": ["a", "b"]}})
    session.run("n = count(t)")
    times = []
    for _ in range(releases // chunk):
        began = time.perf_counter()
        session.run(f"for i in range({chunk}):\n    y = laplace(n, 0.01)\n")
        times.append(time.perf_counter() - began)
    assert len(session.ledger) == releases
    session.close()
    return times


def report(name: str, times: list[float], chunk: int) -> None:
    first, last = times[0], times[-1]
    print(f"{name:38s} first {chunk}: {first * 1000:8.1f} ms   last {chunk}: {last * 1000:8.1f} ms   "
          f"ratio {last / first:5.2f}   ({sum(times) / (len(times) * chunk) * 1e6:7.1f} us/release)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--releases", type=int, default=10_000)
    parser.add_argument("--file-releases", type=int, default=2_000)
    args = parser.parse_args()
    chunk = args.releases // 10
    import jostle.privacy.budget as current

    report("accountant (incremental)", time_accountant(current, args.releases, chunk), chunk)
    old = _old_budget_module()
    if old is not None:
        report(f"accountant ({OLD_COMMIT}, re-costing)", time_accountant(old, args.releases, chunk), chunk)
    report("session, in-memory ledger", time_session(":memory:", args.releases, chunk), chunk)
    with tempfile.TemporaryDirectory() as folder:
        file_chunk = args.file_releases // 10
        report("session, file ledger (fsync each)",
               time_session(str(Path(folder) / "ledger.sqlite"), args.file_releases, file_chunk), file_chunk)


if __name__ == "__main__":
    main()
