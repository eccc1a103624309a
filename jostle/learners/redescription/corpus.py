"""The redescription family's public training corpus: generated two-view tasks with planted
redescriptions.

The ChoiceMaker of the redescription family learns which Option (AltExpM or AltMCMC, each
non-robust or stable, or MCMCTreePair with omega 0.1 or 0.5) does best from public tasks whose
answer is known. Each task (`RedescriptionTask`) is a setting of the planted two-view generator
(`planted.planted_two_views`), drawn with a public seed:

  * `planted`: the number of planted redescriptions, 1 to 4;
  * `noise_attributes`: attributes per view that take part in no planted redescription, 2 to 8;
  * `flip`: the share of entities whose planted attributes are redrawn at random (so a planted
    pair of queries is matched only approximately), one of `FLIPS`;
  * `numeric_share`: the share of numeric attributes (the rest are categorical), one of
    `NUMERIC_SHARES`;
  * `data_seed`: the seed of the generator's draws (the entity count is the grid's: each size
    of `RedescriptionGrid.sizes` is one cache piece, `task.instances`).

The UCI tables are NOT in the corpus: the benchmark (`benchmarks/choicemaker_redescription.py
--dataset`) reports on them as data the ChoiceMaker never saw. Each task is its own
leave-one-dataset-out group. Everything is generated offline from seeds, so the corpus is the
same on every machine (`redescription_corpus()`; `RedescriptionTask.content_hash` keys the
experience cache). The data are public: nothing here reads private data.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

__all__ = ["CORPUS_VERSION", "FLIPS", "NOISE_ATTRIBUTES", "NUMERIC_SHARES", "PLANTED", "RedescriptionTask",
           "redescription_corpus"]

CORPUS_VERSION = "1"  # part of every task's content hash: bump when generation changes

PLANTED = (1, 4)                          # planted redescriptions, inclusive
NOISE_ATTRIBUTES = (2, 8)                 # attributes per view in no planted redescription, inclusive
FLIPS = (0.0, 0.05, 0.1, 0.2)             # shares of entities whose planted attributes are redrawn
NUMERIC_SHARES = (0.0, 0.25, 0.5, 0.75, 1.0)


@dataclass(frozen=True)
class RedescriptionTask:
    """One public training task of the redescription family: a setting of the planted generator.

    Attributes:
        name: The task's name ("redescription:planted:<index>").
        group: Its leave-one-dataset-out group (each task its own group).
        planted: The number of planted redescriptions.
        noise_attributes: Attributes per view in no planted redescription.
        flip: The share of entities whose planted attributes are redrawn at random.
        numeric_share: The share of numeric attributes.
        data_seed: The public seed of the generator's draws (combined with the size and the
            repetition, `task.instances`).
    """

    name: str
    group: str
    planted: int
    noise_attributes: int
    flip: float
    numeric_share: float
    data_seed: int

    def generator_arguments(self) -> dict[str, float | int]:
        """The keyword arguments of `planted.planted_two_views` this task fixes."""
        return {"planted": self.planted, "noise_attributes": self.noise_attributes, "flip": self.flip,
                "numeric_share": self.numeric_share}

    def content_hash(self) -> str:
        """What the experience cache keys the task on (its definition and the corpus version)."""
        text = "|".join([CORPUS_VERSION, self.name, str(self.planted), str(self.noise_attributes),
                         repr(self.flip), repr(self.numeric_share), str(self.data_seed)])
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def redescription_corpus(n_tasks: int = 4, seed: int = 0) -> list[RedescriptionTask]:
    """The offline public corpus: `n_tasks` settings of the planted generator, each its own group.

    The planted counts cycle through 1..4 (so the corpus holds as many of each); the other
    settings are drawn with `seed`. The benchmark's held-out tasks use another seed. Four tasks
    by default: with the default grid (three sizes up to 50,000 entities, three budgets, six
    Options in two modes) the shipped ChoiceMaker trains in about four minutes on two cores.

    Args:
        n_tasks: The number of tasks.
        seed: The public seed of the settings and of the generator seeds.

    Returns:
        The tasks, the same on every machine for the same arguments.
    """
    rng = np.random.default_rng([seed, 25])
    tasks: list[RedescriptionTask] = []
    for index in range(n_tasks):
        planted = PLANTED[0] + index % (PLANTED[1] - PLANTED[0] + 1)
        noise_attributes = int(rng.integers(NOISE_ATTRIBUTES[0], NOISE_ATTRIBUTES[1] + 1))
        flip = float(rng.choice(FLIPS))
        numeric_share = float(rng.choice(NUMERIC_SHARES))
        data_seed = int(rng.integers(0, 2**31 - 1))
        tag = f"{seed}:{index}" if seed else str(index)
        tasks.append(RedescriptionTask(f"redescription:planted:{tag}", f"planted:{tag}", planted, noise_attributes,
                                       flip, numeric_share, data_seed))
    return tasks
