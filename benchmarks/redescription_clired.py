"""The non-private baselines of benchmarks/redescription.py: python-clired's SplitT, LayeredT, ReReMi.

Mihelčić and Miettinen compare their DP miners with the tree-based miners SplitT and LayeredT of
python-clired (Galbrun and Miettinen); the issue adds ReReMi, clired's greedy miner. They run on
the RAW views (numeric values, not the public bins the DP miners see), as in the paper, with
clired's own defaults except: trees of depth 4 (`max_var_s0/s1`, as the DP miners), minimum
support (`min_itm_in`) and minimum uncovered (`min_itm_out`) set to the DP miners' min_support
(10, or 100 on data of 10,000 entities or more), and a single process. clired's final filter
(p-value <= 0.01, its defaults) applies; the benchmark recomputes every returned redescription's
support, Jaccard and binomial p-value from clired's support counts with the same formula as the
DP miners (`queries.binomial_pvalue`, python-clired's own).

**A packaging gap in the wheel.** python-clired 6.0.9's wheel lacks two of its data files,
`actions_rdefs_basic.xml` (the selection actions: without them ReReMi's beam never narrows and
runs for ever, and the trees' final filter does nothing) and `fields_rdefs_basic.xml` (the
redescription statistics). Its setup.py declares package data `*_confdef.xml, *defs*.txt` only;
the source distribution has them. `definitions_folder` finds them: in the installed package when
present, else in a cache (`$XDG_CACHE_HOME` or ~/.cache, `jostle/python-clired-<version>`),
else it fetches the source distribution of the installed version with pip (`pip download
--no-binary :all: --no-deps python-clired==<version>`) and keeps the XML files in the cache.
Nothing is vendored in this repository.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

ALGORITHMS = {"SplitT": "splittrees", "LayeredT": "layeredtrees", "ReReMi": "reremi"}
NEEDED = ("actions_rdefs_basic.xml", "fields_rdefs_basic.xml", "fields_vdefs_basic.xml")


class CliredUnavailable(RuntimeError):
    """python-clired is not installed, or its definition files cannot be found."""


def available() -> str | None:
    """The installed python-clired version, or None."""
    try:
        return metadata.version("python-clired")
    except metadata.PackageNotFoundError:
        return None


def _cache_folder(version: str) -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "jostle" / f"python-clired-{version}"


def definitions_folder() -> Path:
    """A folder holding clired's definition XML files (module docstring: the wheel lacks them)."""
    version = available()
    if version is None:
        raise CliredUnavailable("python-clired is not installed (pip install -e '.[bench]')")
    import blocks.mine

    installed = Path(blocks.mine.__file__).parent
    if all((installed / name).is_file() for name in NEEDED):
        return installed
    cache = _cache_folder(version)
    if all((cache / name).is_file() for name in NEEDED):
        return cache
    with tempfile.TemporaryDirectory() as scratch:
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                   f"python-clired=={version}", "-d", scratch]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        archives = glob.glob(os.path.join(scratch, "*.tar.gz"))
        if done.returncode != 0 or not archives:
            raise CliredUnavailable(f"python-clired's wheel lacks {', '.join(NEEDED)} and its source "
                                    f"distribution could not be fetched: {done.stderr.strip()[-300:]}")
        cache.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archives[0]) as archive:
            for member in archive.getmembers():
                if Path(member.name).name.endswith(".xml") and "/blocks/mine/" in member.name:
                    source = archive.extractfile(member)
                    if source is not None:
                        (cache / Path(member.name).name).write_bytes(source.read())
    if not all((cache / name).is_file() for name in NEEDED):
        raise CliredUnavailable(f"python-clired's source distribution has no {', '.join(NEEDED)}")
    return cache


def _point_clired_at(folder: Path) -> None:
    """Make clired's registries read their definitions from `folder` (class attributes)."""
    from blocks.mine import classConstraints, classProps, classRedescription

    classConstraints.ActionsRegistry.default_def_files = [str(folder / "actions_rdefs_basic.xml")]
    classProps.RedProps.default_def_files = [str(folder / "fields_rdefs_basic.xml")]
    classProps.VarProps.default_def_files = [str(folder / "fields_vdefs_basic.xml")]
    classRedescription.Redescription.RP = None  # re-read with the definitions on the next use


def _preferences(left: Path, right: Path, settings: dict[str, Any], out: Path) -> str:
    values = {"LHS_data": left, "RHS_data": right, "result_rep": out, "out_base": "results", **settings}
    body = "".join(f"<parameter><name>{k}</name><value>{v}</value></parameter>\n" for k, v in values.items())
    return f"<root>\n{body}</root>\n"


def mine(left: Any, right: Any, algorithm: str, *, min_support: int, depth: int = 4,
         max_inits: int = 100) -> dict[str, Any]:
    """Run one clired miner on two raw views (rows aligned by position).

    Args:
        left: The left view (pandas DataFrame, no key column).
        right: The right view.
        algorithm: "SplitT", "LayeredT" or "ReReMi".
        min_support: clired's minimum support and minimum uncovered (entities).
        depth: The maximum number of variables per query (the trees' depth).
        max_inits: Initial candidates (clired's default 100).

    Returns:
        {"seconds", "redescriptions": [{"left", "right", "support", "left_support",
        "right_support", "size", "jaccard", "pvalue"}], "settings"}.
    """
    from jostle.learners.redescription.queries import binomial_pvalue, jaccard

    _point_clired_at(definitions_folder())
    from blocks.mine.exec_clired import load_all
    from blocks.mine.factMiner import instMiner
    from blocks.mine.toolLog import Log

    settings = {"mining_algo": ALGORITHMS[algorithm], "max_var_s0": depth, "max_var_s1": depth,
                "min_itm_in": min_support, "min_itm_out": min_support, "max_inits": max_inits,
                "nb_processes": 1, "verbosity": 0, "logfile": "-"}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        left.to_csv(folder / "left.csv", index=False)
        right.to_csv(folder / "right.csv", index=False)
        (folder / "out").mkdir()
        prefs = folder / "preferences.xml"
        prefs.write_text(_preferences(folder / "left.csv", folder / "right.csv", settings, folder / "out"))
        ok, loaded = load_all(["clired", str(prefs)])
        if not ok:
            raise CliredUnavailable(f"clired refused its preferences: {loaded}")
        data = loaded["data"]
        start = time.perf_counter()
        miner = instMiner(data, loaded["params"], Log(verbosity=0))
        miner.full_run()
        found = miner.rcollect.getItems("F")
        seconds = time.perf_counter() - start
    size = data.nbRows()
    out = []
    for red in found:
        if len(red.query(0)) == 0 or len(red.query(1)) == 0:
            continue
        support, n_left, n_right = int(red.getLenI()), int(red.getLenL()), int(red.getLenR())
        out.append({"left": red.query(0).disp(names=data.getNames(0)),
                    "right": red.query(1).disp(names=data.getNames(1)), "support": support,
                    "left_support": n_left, "right_support": n_right, "size": size,
                    "jaccard": jaccard(support, n_left, n_right),
                    "clired_jaccard": float(red.getAcc()),
                    "pvalue": binomial_pvalue(support, n_left, n_right, size)})
    return {"seconds": seconds, "redescriptions": out, "settings": settings}
