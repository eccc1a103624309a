"""What the language modules of the keyed multi-table families share (ILP, redescription mining).

Those families read several private tables of one database bound under `entity(key)`
(jostle.language.databases) and expose, in the language, one configurable learner call that is
also the value of each of their built-in Options (`ILP` / `ILPRelevance3`, `redescribe` /
`AltExpMStable`). Written once here:

  * `database_name`: the database a table's data node belongs to (or None), read from the node
    chain alone (public: which tables the curator bound together);
  * `FamilyCall`: the part of such a call a ChoiceMaker reads of a built-in Option value (its
    type, task, privacy class, engine Option, experience-cache fingerprint, text);
  * `engine_closures`: how a ChoiceMaker call over such a family measures a built-in metafeature
    and runs a built-in Option on the checked input.

Nothing here imports the language (the kit's one language exception is `learnerkit.language`):
the values are plain Python objects the language reads by their attributes.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, ClassVar, Mapping

from jostle.privacy.rounding import floor_float


def database_name(node: Any) -> str | None:
    """The database a table's data node belongs to (jostle.language.databases), or None."""
    while node is not None:
        name = getattr(node, "database", None)
        if isinstance(name, str) and name:
            return name
        node = node.parent
    return None


@dataclass(eq=False)
class FamilyCall:
    """A family's configurable learner call, and the value of each of its built-in Options.

    Subclasses set `task`, the keywords of the configurable call (`learner_keywords`) and of an
    Option's call (`option_keywords`: its budget; its declarations come in a task value, as a
    ChoiceMaker's call gets them), `family_options()` (the family's Options by name and the one
    the configurable call stands for in a ChoiceMaker), and implement `jostle_call`.

    Attributes:
        name: Its name in the language.
        option: The Option's name (None: the configurable learner).
    """

    name: str
    option: str | None = None
    # What the language's ChoiceMaker reads of a built-in Option value (choice_validation):
    jostle_type: ClassVar[str] = "option"
    task: ClassVar[str] = ""
    learner_keywords: ClassVar[tuple[str, ...]] = ()
    option_keywords: ClassVar[tuple[str, ...]] = ()
    privacy: ClassVar[str] = "choice"
    dims: ClassVar[tuple] = ()
    public_stateless: ClassVar[bool] = True  # training copies may share it (jostle.language.training_boundary)

    def family_options(self) -> tuple[Mapping[str, Any], str]:
        """The family's Options by name, and the name the configurable call stands for (each
        family's subclass answers: `ILPLearner`, `RedescriptionLearner`)."""
        raise NotImplementedError(f"{type(self).__name__} must say which Options its family has")

    @property
    def engine_option(self) -> Any:
        """The family's Option the ChoiceMaker engine trains and runs for this value."""
        options, default = self.family_options()
        return options[self.option or default]

    @property
    def keywords(self) -> tuple[str, ...]:
        """The keywords this value's call takes (the checker and the call read them)."""
        return self.learner_keywords if self.option is None else self.option_keywords

    @property
    def fingerprint(self) -> str:
        """The experience cache's key of a built-in Option of the family."""
        return f"builtin-{self.task}:{self.name}"

    def __str__(self) -> str:
        return f"<option {self.name}>"


def engine_closures(family: Any, data: Any, interp: Any) -> tuple[Callable[..., float], Callable[..., Any]]:
    """`measure(metafeature, amount, noise, context)` and `run(option, part, released)` of a
    ChoiceMaker call (`jostle.language.calls.ChoiceCall`) on the checked input `data`: a
    built-in metafeature measured at the exact amount charged (0 for a free one), a built-in
    Option run by the family on its part with the session's randomness."""

    def measure(metafeature: Any, amount: Fraction, noise: Any, context: Any) -> float:
        # the largest double not above the charge: a mechanism never draws at more than was charged
        return float(metafeature.measure(data, floor_float(amount) if amount > 0 else 0.0, noise, context))

    def run(option: Any, part: Any, released: Any) -> Any:
        return family.run_option(option.engine_option, data, part, interp.randomness, released)

    return measure, run


__all__ = ["database_name", "FamilyCall", "engine_closures"]
