"""Mode declarations: which literals may appear in a clause body, and how long a clause may be.

Aleph's language bias, written as in Aleph (`modeb(*, has_car(+train, -car))`):

    has_car(+train, -car)                  an input train, an output (new) car variable
    short(+car)                            a test on a car variable already in the clause
    load(+car, #load_shape, #load_count)   a test with constants from public domains

Each argument is `+type` (an input: a variable already bound in the clause), `-type` (an output:
a new variable of an entity type) or `#type` (a constant of a public domain). The type names are
checked against the database's column types (`Modes.check`).

What is supported (the shapes `jostle.learners.ilp.theory` evaluates): every mode has exactly
one input; a mode with an output (a *link*, like has_car) takes the head's type as its input
and outputs another entity type; a clause holds at most one existential variable. Clauses are
bounded by `max_clause_length` (body literals) and bottom clauses by `max_bottom` (k, the
number of literals saturation keeps; the lattice of a bottom clause has at most 2^k clauses,
and issue 24 asks that k be declared and reported).

`TRAIN_MODES` are the defaults for Michalski's trains: every car attribute once (short/long,
closed/open_car, double, shape, roof, wheels, load), so a car contributes at most 8 literals
with its has_car link and a 4-car train at most 32, the default bound k.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from jostle.learners.ilp.relations import Domain, EntityType, RelationalDatabase


class ModeError(ValueError):
    """A mode declaration that cannot be used with a database's predicates."""


_ARG = re.compile(r"\s*([+\-#])\s*([a-z][A-Za-z0-9_]*)\s*$")
_MODE = re.compile(r"\s*([a-z][A-Za-z0-9_]*)\s*\((.*)\)\s*$")


@dataclass(frozen=True)
class Mode:
    """One body mode: `predicate(marker type, ...)`.

    Attributes:
        predicate: The predicate's name.
        markers: Per argument "+" (input variable), "-" (output variable) or "#" (constant).
        types: Per argument the type's name (an entity type or a public domain).
    """

    predicate: str
    markers: tuple[str, ...]
    types: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> Mode:
        """Read a mode written as in Aleph, e.g. `load(+car, #load_shape, #load_count)`.

        Raises:
            ModeError: If the text is not `name(marker type, ...)` with markers +, - or #.
        """
        match = _MODE.match(text)
        if match is None:
            raise ModeError(f"mode {text!r} is not of the form name(+type, -type, #type, ...)")
        markers, types = [], []
        for part in match.group(2).split(","):
            arg = _ARG.match(part)
            if arg is None:
                raise ModeError(f"mode {text!r}: argument {part.strip()!r} is not +type, -type "
                                f"or #type")
            markers.append(arg.group(1))
            types.append(arg.group(2))
        return cls(match.group(1), tuple(markers), tuple(types))

    @property
    def input(self) -> int:
        """The position of the input argument."""
        return self.markers.index("+")

    @property
    def output(self) -> int | None:
        """The position of the output argument, if any (a link mode)."""
        return self.markers.index("-") if "-" in self.markers else None

    @property
    def constants(self) -> tuple[int, ...]:
        """The positions of the constant arguments."""
        return tuple(i for i, marker in enumerate(self.markers) if marker == "#")

    def __str__(self) -> str:
        args = ", ".join(f"{m}{t}" for m, t in zip(self.markers, self.types))
        return f"{self.predicate}({args})"


@dataclass(frozen=True)
class Modes:
    """The language bias of a learner: target, body modes and bounds.

    Attributes:
        target: The head predicate's name (e.g. "eastbound").
        head_type: The entity type of the head's one argument (the examples' type).
        body: The body modes, in the order saturation adds their literals.
        max_clause_length: The most body literals a clause may have.
        max_bottom: k, the most literals a bottom clause keeps (saturation stops there and
            reports that it was truncated).
        variables: Entity type name -> the variable written for it ("train" -> "T"); types not
            named use their first letter in upper case.
    """

    target: str
    head_type: str
    body: tuple[Mode, ...]
    max_clause_length: int = 6
    max_bottom: int = 32
    variables: tuple[tuple[str, str], ...] = field(default=())

    def __post_init__(self) -> None:
        if self.max_clause_length < 0 or self.max_bottom < 0:
            raise ModeError("max_clause_length and max_bottom must not be negative")
        for mode in self.body:
            if mode.markers.count("+") != 1:
                raise ModeError(f"mode {mode}: exactly one input (+) argument is supported")
            if mode.markers.count("-") > 1:
                raise ModeError(f"mode {mode}: at most one output (-) argument is supported")
            if mode.output is not None and mode.types[mode.input] != self.head_type:
                raise ModeError(f"mode {mode}: an output variable may only be introduced from "
                                f"the head's {self.head_type} (one existential variable per "
                                f"clause)")
            if mode.output is not None and mode.types[mode.output] == self.head_type:
                raise ModeError(f"mode {mode}: the output must be another entity type than the "
                                f"head's {self.head_type}")

    def variable(self, type_name: str) -> str:
        """The variable written for an entity type in printed clauses."""
        return dict(self.variables).get(type_name, type_name[:1].upper() or "X")

    def check(self, database: RelationalDatabase) -> None:
        """Check every mode against the database's predicates and column types.

        Raises:
            ModeError: Naming the mode and what is wrong (unknown predicate, arity, a type
                that differs from the predicate's column type, a constant over entities).
        """
        if database.examples.entity.name != self.head_type:
            raise ModeError(f"the head type {self.head_type!r} is not the examples' entity "
                            f"{database.examples.entity.name!r}")
        for mode in self.body:
            predicate = database.predicates.get(mode.predicate)
            if predicate is None:
                raise ModeError(f"mode {mode}: unknown predicate (known: "
                                f"{', '.join(sorted(database.predicates))})")
            if predicate.arity != len(mode.markers):
                raise ModeError(f"mode {mode}: {predicate.signature()} takes {predicate.arity} "
                                f"argument(s)")
            for position, (marker, type_name) in enumerate(zip(mode.markers, mode.types)):
                kind = database.arg_type(predicate, position)
                if kind.name != type_name:
                    raise ModeError(f"mode {mode}: argument {position + 1} is a {kind.name}, "
                                    f"not a {type_name}")
                if marker == "#" and not isinstance(kind, Domain):
                    raise ModeError(f"mode {mode}: argument {position + 1} holds entities and "
                                    f"cannot be a constant (#)")
                if marker in "+-" and not isinstance(kind, EntityType):
                    raise ModeError(f"mode {mode}: argument {position + 1} is a public domain "
                                    f"and must be a constant (#{type_name})")


def modes(target: str, head_type: str, body: list[str] | tuple[str, ...], *,
          max_clause_length: int = 6, max_bottom: int = 32) -> Modes:
    """Modes from Aleph-style texts, e.g. `modes("eastbound", "train", ["short(+car)", ...])`."""
    return Modes(target, head_type, tuple(Mode.parse(text) for text in body),
                 max_clause_length, max_bottom)


#: The body modes of the trains: the has_car link and one test per car attribute.
TRAIN_BODY = (
    "has_car(+train, -car)",
    "short(+car)", "long(+car)",
    "closed(+car)", "open_car(+car)",
    "double(+car)",
    "shape(+car, #shape)",
    "roof(+car, #roof)",
    "wheels(+car, #wheels)",
    "load(+car, #load_shape, #load_count)",
)


def train_modes(max_clause_length: int = 6, max_bottom: int = 32) -> Modes:
    """The default modes for the trains (target eastbound), with their bounds."""
    return modes("eastbound", "train", TRAIN_BODY, max_clause_length=max_clause_length,
                 max_bottom=max_bottom)


TRAIN_MODES = train_modes()
