"""Options and metafeatures of a ChoiceMaker as Jostle values (the parts a ChoiceMaker lists).

  * `option NAME(params): answer: ... [predict(F): ...]` makes a `JostleOption`; a family's
    built-in options come from its language module. A program cannot tell them apart: both are
    called alike and listed in a ChoiceMaker.
  * Metafeatures are ordinary Jostle functions of the data (`JostleMetafeature`, for families
    whose language module says how a public training input reads as private data,
    `metafeature_training_argument`) or built-ins (`BuiltinMetafeature`, one version per family
    that defines the name; families sharing a task share their metafeatures). Inside a Jostle
    metafeature, `{{ }}` is exact on public data and noisy, charged to its part, on private data.
  * A derived metafeature is a Jostle function of one parameter F that only reads `F.name` of
    metafeatures listed before it and releases nothing (`derived_reads`): it runs on their
    released values, after them, free (post-processing; `requires` names what it reads).

Jostle-defined parts run in training only as training copies whose environment holds public
values alone (`jostle.language.training_boundary`); on private data they run under a cap of
their part of the plan, in the session's measure (`session_cap`), and charge their own `{{ }}`
releases within it.
"""

from __future__ import annotations

import hashlib
import importlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from jostle.choicemaker import families
from jostle.diagnostics.errors import JostleRuntimeError
from jostle.diagnostics.source import Span
from jostle.language import ast_nodes as A
from jostle.language.calls import BUDGET_KEYWORDS, budget_of, check_keywords
from jostle.language.sensitivity import refuse
from jostle.language.training_boundary import (
    _located, check_public_reads, public_closure, refuse_release_in_prior, scratch_interpreter,
)
from jostle.language.training_digest import public_digest
from jostle.language.values import Closure, Record, is_private, type_name
from jostle.privacy.budget import Budget
from jostle.privacy.conversions import pure_to_rho
from jostle.privacy.measures import AnyBudget, RhoZCDPBudget


# ---------------------------------------------------------------- options
@dataclass(eq=False)
class JostleOption:
    """An `option NAME(params):` written in Jostle."""

    jostle_type = "option"

    name: str
    answer: Closure
    predict: Closure | None
    source_text: str
    dims: tuple[int, ...] = (1, 2)
    public: bool = False  # a training copy: its closures went through `public_environment`
    interpreter: Any = field(default=None, repr=False)  # the Interpreter class training runs it in

    def __post_init__(self) -> None:
        # A prior runs after the metafeatures are charged: a release written in it is refused
        # here, when the option is built, before anything can be charged (`check_prior`).
        if self.predict is not None and not self.public:
            refuse_release_in_prior(self.predict.body, f"option {self.name}")

    @property
    def fingerprint(self) -> str:
        """The experience cache's key: the code and the public values it reads (`public_digest`)."""
        copy = self if self.public else self.training_copy()
        text = "\n".join([self.source_text, *(public_digest(c) for c in (copy.answer, copy.predict) if c)])
        return "jostle:" + hashlib.sha256(text.encode()).hexdigest()[:16]

    def __str__(self) -> str:
        return f"<option {self.name}>"

    def training_copy(self, memo: dict[int, Any] | None = None) -> JostleOption:
        """This option as training may run it: its closures see public values only."""
        if self.public:
            return self
        memo = {} if memo is None else memo
        if id(self) not in memo:
            who = f"option {self.name}"
            memo[id(self)] = JostleOption(
                self.name, public_closure(self.answer, memo, who),
                public_closure(self.predict, memo, who) if self.predict is not None else None,
                self.source_text, self.dims, public=True, interpreter=self.interpreter)
            memo.setdefault(-1, []).append(self)
        return memo[id(self)]

    def training_functions(self) -> list[tuple[Any, str]]:
        """The closures training may run, labelled (`training_boundary.check_public_reads`)."""
        return [(c, f"option {self.name}") for c in (self.answer, self.predict) if c is not None]

    def digest_text(self, of_value: Any, of_function: Any) -> str:
        """What `training_digest.public_digest` hashes for this option."""
        return f"option:{self.name}:" + ",".join(of_function(c) for c in (self.answer, self.predict) if c)

    def check_public(self) -> None:
        """Refuse (located) a read of a private value by the code training would run."""
        copy = self.training_copy()
        for closure in (copy.answer, copy.predict):
            if closure is not None:
                check_public_reads(closure, f"option {self.name}")

    def jostle_call(self, interp: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
        who = f"{self.name}()"
        check_keywords(kwargs, span, who)
        budget = budget_of(interp, kwargs, span, who)
        return self.run_with_budget(interp, args, budget, span)

    def run_with_budget(self, interp: Any, args: list[Any], budget: AnyBudget, span: Span) -> Any:
        """Run the answer body under a cap of `budget` (its `{{ }}` split it; in the session's
        measure, `session_cap`)."""
        releases = A.count_releases(self.answer.body if isinstance(self.answer.body, tuple) else ())
        with interp.accountant.context(session_cap(interp, budget), f"option {self.name}", span, max(1, releases)):
            result = interp.call(self.answer, list(args), span)
        if is_private(result):
            raise refuse(f"option {self.name} returned a private value", result, span,
                         "an option's answer must be released inside it, e.g. return {{ x }}")
        return result

    def run_in_language(self, family: Any, data: Any, budget: AnyBudget, noise: Any) -> Any:
        """Run on a public training input of any family (`Family.run`): always the training copy,
        in a scratch interpreter, on the family's language values of `data`, under a cap of
        `budget` (training budgets are pure epsilons)."""
        language = family_language(family)
        option = self.training_copy()
        scratch = scratch_interpreter(noise, self.interpreter)
        arguments = language.training_arguments(data, scratch)
        with _located(option.answer.span):
            value = option.run_with_budget(scratch, arguments, budget, option.answer.span)
        return language.training_result(value, data)


# ---------------------------------------------------------------- metafeatures
@dataclass(eq=False)
class BuiltinMetafeature:
    """A built-in metafeature name, e.g. `size`: one version per learner family that defines it."""

    public_stateless = True  # training copies may share it (jostle.language.training_boundary)

    jostle_type = "metafeature"

    name: str
    versions: dict[str, Any]  # family name -> the family's metafeature
    privacy = "choice"
    keywords = BUDGET_KEYWORDS

    def version(self, family: str) -> Any:
        return self.versions.get(family)

    @property
    def cost(self) -> bool:
        return any(v.cost for v in self.versions.values())

    @property
    def release(self) -> str:
        """The shared release its versions post-process ("" for none: `measurement.budget_unit`)."""
        return next((v.release for v in self.versions.values() if getattr(v, "release", "")), "")

    def __str__(self) -> str:
        return f"<metafeature {self.name}>"

    def jostle_call(self, interp: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> float:
        """`sparsity(h, epsilon=E)`: release one metafeature on its own (families that allow it)."""
        for family_name, version in self.versions.items():
            language = family_language(families.get(family_name))
            if hasattr(language, "call_metafeature"):
                return language.call_metafeature(version, interp, args, kwargs, span)
        raise JostleRuntimeError(f"{self.name} is a metafeature of {', '.join(self.versions)} tasks; it is measured "
                                 "by a ChoiceMaker, not called on its own", span)


@dataclass(eq=False)
class JostleMetafeature:
    """A Jostle function of the data used as a metafeature (its `{{ }}` spend its share)."""

    jostle_type = "metafeature"

    name: str
    function: Closure
    source_text: str
    cost: bool = True
    public: bool = False  # a training copy: its closure went through `public_environment`
    interpreter: Any = field(default=None, repr=False)  # the Interpreter class training runs it in
    language_module: str = ""  # the family's language module: what its training argument is
    requires: tuple[str, ...] = ()  # a derived one: the metafeatures whose released values it reads

    def __post_init__(self) -> None:
        if self.requires:
            self.cost = False  # post-processing of released values: it charges nothing

    @property
    def fingerprint(self) -> str:
        """The experience cache's key: the code and the public values it reads (`public_digest`)."""
        copy = self if self.public else self.training_copy()
        text = self.source_text + "\n" + public_digest(copy.function)
        return "jostle:" + hashlib.sha256(text.encode()).hexdigest()[:16]

    def training_copy(self, memo: dict[int, Any] | None = None) -> JostleMetafeature:
        """This metafeature as training may run it: its closure sees public values only."""
        if self.public:
            return self
        memo = {} if memo is None else memo
        if id(self) not in memo:
            memo[id(self)] = JostleMetafeature(self.name, public_closure(self.function, memo,
                                                                         f"metafeature {self.name}"),
                                               self.source_text, self.cost, public=True,
                                               interpreter=self.interpreter, language_module=self.language_module,
                                               requires=self.requires)
            memo.setdefault(-1, []).append(self)
        return memo[id(self)]

    def training_functions(self) -> list[tuple[Any, str]]:
        """The closure training may run, labelled (`training_boundary.check_public_reads`)."""
        return [(self.function, f"metafeature {self.name}")]

    def digest_text(self, of_value: Any, of_function: Any) -> str:
        """What `training_digest.public_digest` hashes for this metafeature."""
        return f"metafeature:{self.name}:{of_function(self.function)}"

    def check_public(self) -> None:
        """Refuse (located) a read of a private value by the code training would run."""
        check_public_reads(self.training_copy().function, f"metafeature {self.name}")

    def measure_in(self, interp: Any, data: Any, budget: AnyBudget, span: Span) -> float:
        body = self.function.body
        releases = A.count_releases(body if isinstance(body, tuple) else body)
        with interp.accountant.context(session_cap(interp, budget), f"metafeature {self.name}", span,
                                       max(1, releases)):
            value = interp.call(self.function, [data], span)
        if is_private(value):
            raise refuse(f"metafeature {self.name} returned a private value", value, span,
                         "release inside it: return {{ ... }}")
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise JostleRuntimeError(f"metafeature {self.name} must return a number, got a {type_name(value)}", span)
        return float(value)

    def derive_in(self, interp: Any, released: Any, span: Span) -> float:
        """A derived metafeature's value: its function on the record of the released values it
        reads (post-processing), run by `interp` (a scratch interpreter: it can charge nothing)."""
        record = Record.of({name: float(released[name]) for name in self.requires})
        value = interp.call(self.function, [record], span)
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise JostleRuntimeError(f"metafeature {self.name} must return a number, got a {type_name(value)}", span)
        return float(value)

    # The engine's Metafeature interface, for training on public data.
    def measure(self, x: Any, epsilon_mf: float, noise: Any, context: Any) -> float:
        """Measure a public training input (what the family's metafeatures read of it): always
        the training copy, in a scratch interpreter, on the input as the family's language
        dresses it as private data (`metafeature_training_argument`, so its releases get the
        noise they would get on private data); a derived one on the values released before it."""
        metafeature = self.training_copy()
        if self.requires:
            scratch = scratch_interpreter(noise, self.interpreter)
            with _located(metafeature.function.span):
                return metafeature.derive_in(scratch, context.released, metafeature.function.span)
        scratch = scratch_interpreter(noise, self.interpreter)
        data = importlib.import_module(self.language_module).metafeature_training_argument(x, scratch)
        budget = Budget.of(epsilon_mf) if epsilon_mf > 0 else Budget.of(1e-9)
        with _located(metafeature.function.span):
            return metafeature.measure_in(scratch, data, budget, metafeature.function.span)


def derived_reads(function: Closure, earlier: list[str]) -> tuple[str, ...]:
    """The metafeatures a derived metafeature reads, or () if `function` is not one.

    A function is a derived metafeature when it has one parameter, every use of that parameter
    reads a field `F.name` naming a metafeature in `earlier` (listed before it), and its body
    releases nothing (no `{{ }}`): it can only post-process those released values.
    """
    if len(function.params) != 1 or not earlier:
        return ()
    parameter = function.params[0].name
    reads: list[str] = []
    other_use = False

    def walk(node: Any) -> None:
        nonlocal other_use
        if isinstance(node, A.Attribute) and isinstance(node.target, A.Name) and node.target.id == parameter:
            reads.append(node.name)
            return
        if isinstance(node, A.Release) or (isinstance(node, A.Name) and node.id == parameter):
            other_use = True
            return
        if isinstance(node, (A.Lambda, A.Def)) and any(p.name == parameter for p in node.params):
            other_use = True  # shadowed: keep the rule simple
            return
        if isinstance(node, (tuple, list)):
            for item in node:
                walk(item)
        elif isinstance(node, A.Node):
            for name in getattr(node, "__dataclass_fields__", {}):
                if name != "span":
                    walk(getattr(node, name))

    walk(function.body)
    if other_use or not reads or any(name not in earlier for name in reads):
        return ()
    return tuple(dict.fromkeys(reads))


def session_cap(interp: Any, budget: AnyBudget) -> AnyBudget:
    """A part's budget as a cap in the session's measure, for Jostle-defined parts that charge
    their own releases within it: as it is, except a pure epsilon e in a zCDP session, which
    becomes the rho e^2 / 2 (Bun and Steinke 2016, Prop. 1.4: what an e-DP release costs there,
    so the part can spend no more than its planned cost would have)."""
    accounting = getattr(interp.accountant, "accounting", None)
    if accounting is not None and accounting.is_zcdp and isinstance(budget, Budget) and not budget.delta:
        return RhoZCDPBudget(pure_to_rho(budget.epsilon))
    return budget


def family_language(family: Any) -> Any:
    """The language module of a learner family (`jostle.learners.<family>.language`)."""
    return importlib.import_module(family.language_module)


__all__ = ["JostleOption", "BuiltinMetafeature", "JostleMetafeature", "session_cap", "family_language", "derived_reads"]
