"""Where the benchmarks find the shared public data, and the one line they print when it is missing.

Three benchmarks read public data that the repository does not ship: `trees.py` and
`trees_learners.py` read UCI tables (CSV), `choicemaker_histograms.py` reads DPBench's shapes
(.npy). They look for it in one place, chosen in this order:

1. `--data DIR` on the command line;
2. the environment variable `JOSTLE_DATA`;
3. `../shared/datasets`, relative to the repository root.

DIR holds `uci/` and `dpbench/` (as `../shared/datasets` does); pointing it at the `uci/` or
`dpbench/` folder itself works too. When what a benchmark needs is not there, it prints ONE
line on stderr (what is missing, where it looked and how that folder was chosen, where to get
the data) and exits with `EXIT_NO_DATA`, before any expensive work. README.md, section
"Benchmarks", says where the data comes from and its licences.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, Sequence

ROOT = Path(__file__).resolve().parents[1]
ENVIRONMENT_VARIABLE = "JOSTLE_DATA"
DEFAULT_ROOT = ROOT.parent / "shared" / "datasets"
EXIT_NO_DATA = 66  # sysexits.h EX_NOINPUT: an input file did not exist


@dataclass(frozen=True)
class Collection:
    """A group of public data files the benchmarks read.

    Attributes:
        folder: Its subfolder of the data folder ("uci", "dpbench").
        what: What it is, for the message ("the UCI tables").
        source: Where to get it, for the message.
    """

    folder: str
    what: str
    source: str


UCI = Collection("uci", "the UCI tables",
                 "https://archive.ics.uci.edu (CC BY 4.0; CSV with a header row, layout in README.md 'Benchmarks')")
DPBENCH = Collection("dpbench", "the DPBench shapes",
                     "https://github.com/dpcomp-org/dpcomp_core, folder dpcomp_core/datafiles (1D/ and 2D/ .npy)")


def data_root(argument: str | os.PathLike[str] | None) -> tuple[Path, str]:
    """The data folder a benchmark uses and how it was chosen.

    Args:
        argument: The value of `--data`, or None when it was not given.

    Returns:
        (folder, origin), origin being "from --data", "from $JOSTLE_DATA" or "the default".
    """
    if argument:
        return Path(argument), "from --data"
    if os.environ.get(ENVIRONMENT_VARIABLE):
        return Path(os.environ[ENVIRONMENT_VARIABLE]), f"from ${ENVIRONMENT_VARIABLE}"
    return DEFAULT_ROOT, "the default"


def collection_folder(root: Path, collection: Collection) -> Path:
    """`root/<collection>` when it exists, else `root` itself (a folder given directly)."""
    return root / collection.folder if (root / collection.folder).is_dir() else root


def missing_data_line(script: str, collection: Collection, missing: Sequence[str], folder: Path,
                      origin: str) -> str:
    """The one line a benchmark prints when data is missing.

    Args:
        script: The benchmark's file name ("trees.py").
        collection: What is missing.
        missing: The files or folders not found, relative to `folder`.
        folder: Where the benchmark looked.
        origin: How the folder was chosen (see `data_root`).
    """
    shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
    where = f"{folder}" + ("" if folder.exists() else " (no such folder)")
    return (f"{script}: {collection.what} are missing: no {shown} in {where} ({origin}; "
            f"the data folder is --data DIR, else ${ENVIRONMENT_VARIABLE}, else ../shared/datasets); "
            f"get them from {collection.source}")


def fail(line: str) -> NoReturn:
    """Print `line` on stderr and exit with `EXIT_NO_DATA`."""
    print(line, file=sys.stderr, flush=True)
    raise SystemExit(EXIT_NO_DATA)


def require(script: str, collection: Collection, argument: str | os.PathLike[str] | None,
            needed: Sequence[str]) -> Path:
    """The folder of `collection`, or exit with one line if any of `needed` is not in it.

    Args:
        script: The benchmark's file name, for the message.
        collection: UCI or DPBENCH.
        argument: The value of `--data` (None: $JOSTLE_DATA, else the default).
        needed: File names, or glob patterns ("1D/*.npy") that must match at least one file.

    Returns:
        The folder holding the collection's files.
    """
    root, origin = data_root(argument)
    folder = collection_folder(root, collection)
    missing = []
    for name in needed:
        if "*" in name:
            if not any(path.is_file() for path in folder.glob(name)):
                missing.append(name)
        elif not (folder / name).is_file():
            missing.append(name)
    if missing:
        fail(missing_data_line(script, collection, missing, folder, origin))
    return folder
