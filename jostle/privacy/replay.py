"""Record and play the exact values that releases add noise to (replay auditing).

Replay auditing (Cebere et al. 2026, "Re:cord-play") checks a privacy claim past the first
release: run a program on a dataset D, recording at every noise point the exact value noise is
added to, then on a neighbour D' with the same randomness, and check that each release's
pre-noise values moved by at most the sensitivity the mechanism calibrated its noise to.

This module is the recording side; the fuzzer that runs programs on neighbours is
tests/privacy/fuzz_replay.py.

**The hook.** Every point where Jostle adds noise to private data calls `released(noise, point,
values, output, norm, bound, grid)` with the noise source it drew from, the exact pre-noise
values (grid steps for a grid release, exact numbers otherwise), what it is about to release,
and the claim its noise is calibrated to (`Claim`). With no recorder attached to that noise
source, `released` returns `output` itself after one lookup in an empty dict: outputs, the
randomness consumed and every error are unchanged, so the hook is off by default and free of
effects when off.

**A recorder** (`Recorder`) is attached to a session (its accountant and its randomness): it
notes each successful charge (mechanism, what was released, the span's location, the unit of
the data charged) and tags every noise record made after it with that charge. Only draws from
the session's own randomness are recorded: training's simulation sources and scratch sources
are other objects, and public data needs no audit.

**Record, then play.** Two runs can only be compared release by release while their control
flow agrees. A private program's control flow after a release depends on the released value,
which differs between D and D' when the noise is the same but the pre-noise values are not. So
the D' run *plays* D's transcript: at its i-th noise point it records its own pre-noise values
and then returns D's i-th output, and sets the randomness to the state it had after D's i-th
draw (selection mechanisms and randomized response consume a data-dependent number of random
words). This is exactly the condition of adaptive composition: each release must be private
*given* the outputs released before it, so the D' run is the run of the same program on D'
conditioned on D's transcript. Playing stops at the first noise point whose mechanism, charge,
location or claim differs from D's (the program took another path given the same transcript:
something other than a release influenced it); from there on the runs are not paired
(`Comparison.diverged_at`). The fuzzer also compares everything the two runs printed, which
must be identical when the whole transcript was played.

**Claims** (`Claim.norm`), checked by `Claim.exceeded_by`:
  * "l1": sum |d_i| <= bound (Laplace, geometric; in grid steps);
  * "l2": sqrt(sum d_i^2) <= bound (Gaussian certified by zCDP; compared squared, exactly);
  * "one_axis": at most one coordinate moves, by at most bound (Gaussian certified by CKS Thm 7
    for one-axis shifts);
  * "linf": every coordinate moves by at most bound, and with `monotone` all in one direction
    (per-score claims of report_noisy_max, above_threshold, the exponential mechanism);
  * "one_row": the values are rows of `width` (one per disjoint part of the data, parallel
    composition): at most one row moves, each of its values by at most bound (the exponential
    mechanism applied row by row);
  * "hamming": at most bound coordinates differ (randomized response: one row replaced).
A claim's bound is in grid steps when `grid` is set; its grid must be the same on both runs (a
public choice). The lengths must agree too (the length of a release is public).

**Units and group privacy.** A release of the language states its sensitivity for one
individual of its table's unit: the table's stability (rows per entity after `bound_per_key(k)`,
2 for replace_one, the product of a join) is already in it. Two arguments are group privacy, and
the claim says so (`Claim.group`): under replace_one a release is calibrated for two rows, a
removal and an addition, so monotone scores may move down by one row's worth and up by
another's (`Recorder.note` sets the group to 2 from the charge's unit); and a learner that runs
at epsilon / k on data of stability k states per-row claims, made private for k rows by group
privacy (`group_privacy(k)`, called where the histogram family divides epsilon), so its bounds
are multiplied by k. Values a library computed in floating point and claimed for exact
arithmetic (`Claim.floating`) may exceed a claim by a relative slack the caller of `compare`
chooses; they are counted apart, never hidden.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["Claim", "Comparison", "Record", "Recorder", "compare", "group_privacy", "released"]

NORMS = ("l1", "l2", "one_axis", "linf", "one_row", "hamming")

# id(noise source) -> the recorder watching it. Empty unless a recorder is attached.
_WATCHED: dict[int, Recorder] = {}


def group_privacy(rows: float) -> None:
    """Say that the releases of the current charge are private for neighbours `rows` rows
    apart by group privacy over a per-row claim (a learner run at epsilon / rows on data of
    stability `rows`): the recorders watching multiply their claims' bounds by it until the
    next charge. Nothing happens when no recorder is attached."""
    for recorder in _WATCHED.values():
        recorder.group = max(int(math.ceil(rows)), 1)


def released(noise: Any, point: str, values: Any, output: Any, norm: str, bound: Any,
             grid: Fraction | None = None, monotone: bool = False, width: int | None = None,
             floating: bool = False) -> Any:
    """The hook at a noise point: record `values` if a recorder watches `noise`; return the output.

    Args:
        noise: The noise source the point drew from.
        point: The noise point's name, e.g. "laplace" or "report_noisy_max".
        values: The exact pre-noise values (a number or an array: grid steps for a grid
            release; ints, Fractions or doubles, taken at their exact value; -inf: an
            ineligible candidate), or a function returning them, called only when recording.
        output: What the point releases (noisy grid steps, an index, responses).
        norm, bound, grid, monotone, width, floating: The claim (`Claim`).

    Returns:
        `output`; when a playing recorder watches `noise` and the run is still paired, the
        output recorded at the same point of the recorded run.
    """
    if not _WATCHED:
        return output
    recorder = _WATCHED.get(id(noise))
    if recorder is None or recorder.noise is not noise:
        return output
    return recorder.note(point, values, output, Claim(norm, Fraction(bound), grid, monotone, width, floating))


@dataclass(frozen=True)
class Claim:
    """How far a release's pre-noise values may move between neighbours (module docstring).

    Attributes:
        norm: One of NORMS.
        bound: The bound, in grid steps when `grid` is set.
        grid: The release's grid (None: the values' own units).
        monotone: Whether the mechanism relied on all values moving the same way.
        width: For "one_row": the length of a row.
        floating: The values are doubles a library computed in floating point, whose stated
            sensitivities assume exact arithmetic (`compare`'s slack applies to them only).
        group: The release is private for neighbours `group` rows apart by group privacy: the
            move must split into `group` single-row moves, each within bound / group in the
            norm (set by the recorder, `Recorder.note`). The bound is for the whole move, so
            only the structure changes: monotone scores may move up by a/group of the bound and
            down by (group - a)/group of it for some a; "one_axis" and "one_row" allow `group`
            coordinates or rows.
    """

    norm: str
    bound: Fraction
    grid: Fraction | None = None
    monotone: bool = False
    width: int | None = None
    floating: bool = False
    group: int = 1

    def __post_init__(self) -> None:
        if self.norm not in NORMS:
            raise ValueError(f"unknown norm {self.norm!r}; the norms are {NORMS}")

    def exceeded_by(self, first: tuple, second: tuple, slack: Fraction = Fraction(0)) -> str | None:
        """Why the move from `first` to `second` breaks the claim (None: it does not), with the
        bound raised by the relative `slack` (`compare`)."""
        claim = self if not slack else replace(self, bound=self.bound * (1 + slack))
        return claim._exceeded_by(first, second)

    def _exceeded_by(self, first: tuple, second: tuple) -> str | None:
        if len(first) != len(second):
            return f"the release's length differs: {len(first)} and {len(second)} values"
        if any((a is None) != (b is None) for a, b in zip(first, second)):
            return "a different set of eligible candidates (-inf)"
        moves = [b - a for a, b in zip(first, second) if a is not None]
        unit = " grid steps" if self.grid is not None else ""
        moved = [d for d in moves if d != 0]
        if self.norm == "l1":
            total = sum(abs(d) for d in moves)
            return None if total <= self.bound else f"L1 move {_show(total)}{unit} > claimed {_show(self.bound)}"
        if self.norm == "l2":
            squared = sum(d * d for d in moves)
            return None if squared <= self.bound ** 2 else \
                f"L2 move {float(squared) ** 0.5:.6g}{unit} > claimed {_show(self.bound)}"
        if self.norm == "hamming":
            return None if len(moved) <= self.bound else \
                f"{len(moved)} values changed > claimed {_show(self.bound)}"
        largest = max((abs(d) for d in moves), default=0)
        if largest > self.bound:
            return f"a value moved by {_show(largest)}{unit} > claimed {_show(self.bound)}"
        if self.norm == "one_axis" and len(moved) > self.group:
            return f"{len(moved)} coordinates moved; the calibration assumed {self.group}"
        if self.norm == "one_row":
            width = self.width or 1
            rows = {i // width for i, (a, b) in enumerate(zip(first, second)) if a != b}
            if len(rows) > self.group:
                return f"{len(rows)} rows (disjoint parts) moved; parallel composition assumed {self.group}"
        if self.monotone:
            up = max((d for d in moved if d > 0), default=0)
            down = max((-d for d in moved if d < 0), default=0)
            step = self.bound / self.group
            if not any(up <= a * step and down <= (self.group - a) * step for a in range(self.group + 1)):
                return ("the values moved in both directions; the calibration assumed monotone scores"
                        + (f" (over {self.group} rows)" if self.group > 1 else ""))
        return None

    def describe(self) -> str:
        unit = f" steps of {self.grid}" if self.grid is not None else ""
        extra = (", monotone" if self.monotone else "") + (f", rows of {self.width}" if self.width else "") \
            + (f", group of {self.group}" if self.group > 1 else "")
        return f"{self.norm} <= {_show(self.bound)}{unit}{extra}"


def _show(value: Any) -> str:
    if not isinstance(value, Fraction) or value.denominator == 1:
        return str(value)
    text = f"{float(value):.6g}"
    if Fraction(text) != value and abs(value - round(value)) < Fraction(1, 10**6):  # e.g. 1 + 2^-52
        return f"{round(value)} {'+' if value > round(value) else '-'} {float(abs(value - round(value))):.3g}"
    return text


@dataclass
class Record:
    """One noise point of a run.

    Attributes:
        index: Its position among the run's noise points.
        point: The noise point ("laplace", "gaussian", "geometric", ...).
        release: The charge it belongs to: "mechanism: what was released".
        location: Where that charge was made (the span's location; "" if none).
        unit: The unit of the data charged (its ledger text).
        claim: What the noise is calibrated to.
        values: The exact pre-noise values (ints in grid steps, Fractions; None: -inf).
        output: What was released (a copy), for playing.
        state: The randomness' state after the draw, for playing.
        played: In a playing run: whether the recorded run's output was returned here.
    """

    index: int
    point: str
    release: str
    location: str
    unit: str
    claim: Claim
    values: tuple
    output: Any = field(repr=False, default=None)
    state: Any = field(repr=False, default=None)
    played: bool = False

    def signature(self) -> tuple:
        """What must agree for two runs' records to be paired."""
        return (self.point, self.release, self.location, self.unit, self.claim)

    def describe(self) -> str:
        where = f" at {self.location}" if self.location else ""
        return f"#{self.index} {self.point} of {self.release}{where} [{self.unit}; {self.claim.describe()}]"


class Recorder:
    """Records the noise points of one session; optionally plays a recorded run's outputs.

    `watching(session)` records a Session inside a `with` block (`attach(accountant, noise)`
    and `detach()` do it by hand). With `play=records` (another run's records) it returns that
    run's outputs and randomness state at each noise point (see the module docstring) while the
    runs stay paired; `diverged_at` says where they stopped being paired, if they did.
    """

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.noise: Any = None
        self.playing: list[Record] | None = None
        self.diverged_at: int | None = None
        self._context = ("(no charge)", "", "")
        self.group = 1
        self._accountant: Any = None
        self._charge: Any = None

    # ------------------------------------------------------------ attaching
    def attach(self, accountant: Any, noise: Any, play: list[Record] | None = None) -> Recorder:
        """Watch `noise` (the randomness releases draw from) and the charges of `accountant`.

        Raises:
            ValueError: Playing on a source whose state cannot be read and set (the secure
                source), or `noise` already watched.
        """
        if id(noise) in _WATCHED:
            raise ValueError("this noise source already has a recorder")
        if play is not None and _state(noise) is None:
            raise ValueError("playing a run needs a seeded Randomness (its state is read and set)")
        self.noise, self.playing, self._accountant = noise, play, accountant
        original = accountant.charge
        self._charge = accountant.__dict__.get("charge")  # a wrapper already on the instance, if any

        def charge(budget: Any, node: Any, mechanism: str, description: str, span: Any) -> Any:
            entry = original(budget, node, mechanism, description, span)
            self._context = (f"{mechanism}: {description}", span.location if span is not None else "",
                             _unit_text(entry))
            self.group = 1
            return entry

        accountant.charge = charge
        _WATCHED[id(noise)] = self
        return self

    def detach(self) -> None:
        """Stop recording; the accountant's charge is restored."""
        if self.noise is not None:
            _WATCHED.pop(id(self.noise), None)
        if self._accountant is not None:
            if self._charge is not None:
                self._accountant.charge = self._charge
            else:
                self._accountant.__dict__.pop("charge", None)  # back to the class's method
        self.noise = self._accountant = None

    @contextmanager
    def watching(self, session: Any, play: list[Record] | None = None) -> Iterator[Recorder]:
        """Record `session` (its accountant and randomness) inside the block."""
        self.attach(session.accountant, session.randomness, play)
        try:
            yield self
        finally:
            self.detach()

    # ------------------------------------------------------------ recording
    def note(self, point: str, values: Any, output: Any, claim: Claim) -> Any:
        """Record one noise point; return what to release (see `released`)."""
        release, location, unit = self._context
        if self.group > 1:  # a per-row claim made private for `group` rows by group privacy
            claim = replace(claim, bound=claim.bound * self.group, group=self.group)
        elif unit == "replace_one":  # calibrated for two rows (stability 2): a removal and an addition
            claim = replace(claim, group=2)
        record = Record(len(self.records), point, release, location, unit, claim, _exact(values))
        self.records.append(record)
        recorded = self._paired(record, output)
        if recorded is not None:
            record.played = True
            _set_state(self.noise, recorded.state)
            output = copy.deepcopy(recorded.output)
        record.output = copy.deepcopy(output)
        record.state = _state(self.noise)
        return output

    def _paired(self, record: Record, output: Any) -> Record | None:
        if self.playing is None or self.diverged_at is not None:
            return None
        if record.index < len(self.playing):
            recorded = self.playing[record.index]
            if recorded.signature() == record.signature() and _shape(recorded.output) == _shape(output):
                return recorded
        self.diverged_at = record.index
        return None


def _shape(output: Any) -> tuple:
    return np.shape(output) if isinstance(output, np.ndarray) else (type(output).__name__,)


def _unit_text(entry: Any) -> str:
    try:
        return entry.unit.text
    except AttributeError:
        return ""


def _exact(values: Any) -> tuple:
    """The values as exact Python numbers (ints, Fractions; None for -inf); a callable is
    called first (a noise point whose pre-noise values cost something to keep)."""
    if callable(values):
        values = values()
    items = values.tolist() if isinstance(values, np.ndarray) else \
        list(values) if isinstance(values, (list, tuple)) else [values]
    out: list[Any] = []
    for item in np.asarray(items, dtype=object).ravel().tolist():
        if isinstance(item, (bool, np.bool_)):
            out.append(int(item))
        elif isinstance(item, (int, np.integer)):
            out.append(int(item))
        elif isinstance(item, Fraction):
            out.append(item)
        else:
            number = float(item)
            out.append(None if number == float("-inf") else Fraction(number))
    return tuple(out)


# ---------------------------------------------------------------- the randomness' state
def _state(noise: Any) -> Any:
    """The state of a seeded `jostle.privacy.noise.Randomness` (its generator and its buffer of
    single words), or None for a source whose state cannot be read (the secure source)."""
    generator = getattr(noise, "_generator", None)
    words = getattr(noise, "words", None)
    if generator is None or words is None:
        return None
    return copy.deepcopy(generator.bit_generator.state), list(words._buffer)


def _set_state(noise: Any, state: Any) -> None:
    generator_state, buffer = state
    noise._generator.bit_generator.state = copy.deepcopy(generator_state)
    noise.words._buffer = list(buffer)


# ---------------------------------------------------------------- comparing two runs
@dataclass
class Comparison:
    """Two runs' records compared point by point.

    Attributes:
        checked: The paired points whose claims were checked.
        violations: (record on D, record on D', why) for each claim broken.
        within_slack: The same for claims broken by less than the slack `compare` allowed.
        diverged_at: The first point where the runs stopped being paired (None: never).
        unpaired: Points of either run past that point.
    """

    checked: int = 0
    violations: list[tuple[Record, Record, str]] = field(default_factory=list)
    within_slack: list[tuple[Record, Record, str]] = field(default_factory=list)
    diverged_at: int | None = None
    unpaired: int = 0

    def report(self) -> str:
        lines = [f"{self.checked} releases checked; {len(self.violations)} claims broken"
                 + (f" ({len(self.within_slack)} more within the slack)" if self.within_slack else "")
                 + (f"; the runs diverged at point {self.diverged_at}" if self.diverged_at is not None else "")]
        for first, second, why in self.violations:
            lines.append(f"  {first.describe()}: {why}")
            lines.append(f"    on D:  {_brief(first.values)}")
            lines.append(f"    on D': {_brief(second.values)}")
        return "\n".join(lines)


def _brief(values: tuple, limit: int = 12) -> str:
    shown = ", ".join(_show(v) if v is not None else "-inf" for v in values[:limit])
    return f"[{shown}{', ...' if len(values) > limit else ''}] ({len(values)} values)"


def compare(first: list[Record], second: list[Record], slack: Fraction = Fraction(0)) -> Comparison:
    """Check every paired point's claim: the records of a run on D and of the run on D' that
    played it (or any two runs; points are paired while their signatures agree).

    `slack` (relative) applies only to points whose values are doubles a library computed in
    floating point (`Claim.floating`: the learners' utilities, whose stated sensitivities assume
    exact arithmetic, as `jostle.privacy.safe_noise` says); a claim broken by less than it is
    listed in `within_slack`, not in `violations`. Every other point gets none.
    """
    result = Comparison()
    for index, (a, b) in enumerate(zip(first, second)):
        if a.signature() != b.signature():
            result.diverged_at = index
            break
        result.checked += 1
        why = a.claim.exceeded_by(a.values, b.values)
        if why is not None:
            loose = a.claim.exceeded_by(a.values, b.values, slack) if slack and a.claim.floating else why
            (result.violations if loose is not None else result.within_slack).append((a, b, why))
    paired = result.checked
    if result.diverged_at is None and len(first) != len(second):
        result.diverged_at = paired
    result.unpaired = len(first) + len(second) - 2 * paired
    return result
