"""The training boundary: what Jostle code may read while a ChoiceMaker trains on public data.

A ChoiceMaker learns which option to run by running every option and metafeature on the
public corpus, in a scratch interpreter, uncharged (jostle.language.choice, jostle.choicemaker). That
is sound only if the code under training can see nothing private: what it computes there
shapes the predicted errors, the choice, the trace, error messages and the experience cache,
none of which is charged (issue 11, hole 2). This module holds the scratch interpreter and the
copies that make this so: `public_environment` copies a scope keeping only public values,
`check_public_reads` refuses private reads in the text with their location, and
`public_digest` keys the experience cache by the code and the public values it reads.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from jostle.language import ast_nodes as A
from jostle.privacy.budget import Accountant, Budget
from jostle.diagnostics.errors import JostleError, PrivacyError
from jostle.diagnostics.source import Span
from jostle.language.values import Builtin, Closure, Record, is_private, type_name


@contextmanager
def _located(span: Span) -> Iterator[None]:
    """Give an error raised without a location (a withheld name read deep in a call) `span`."""
    try:
        yield
    except JostleError as error:
        if error.span is None:
            error.span = span
        raise


def scratch_interpreter(noise: Any, interpreter_class: Any) -> Any:
    """An interpreter for running Jostle options/metafeatures on PUBLIC training data.

    It has its own accountant (a large cap: the data is public, the noise only simulates what a
    private run would see) and the given simulation noise; output is discarded. Its built-ins
    are `public_builtin`s: the ones that read files refuse (a module imported during training
    cannot load the session's data either). What the code under training may read of the
    program is decided by `public_environment`. `interpreter_class` is the program's own
    interpreter class (handed down by the value that runs, so this module, which the
    evaluator's values import, never imports the evaluator: no import cycle).
    """
    from jostle.privacy.noise import SimulationNoise

    if not hasattr(noise, "discrete_laplace"):  # the engine's light simulation source
        noise = SimulationNoise(int(np.asarray(noise.uniform(1)).ravel()[0] * 2**31))
    scratch = interpreter_class(Accountant(Budget.of(10**9)), noise, output=io.StringIO())
    values = scratch.builtins.values
    for name in list(values):
        values[name] = public_builtin(values[name])
    return scratch


# ---------------------------------------------------------------- the training boundary
# A ChoiceMaker learns which option to run by running every option and metafeature on the
# public corpus, in a scratch interpreter, uncharged. That is sound only if the code under
# training can see nothing private: what it computes there shapes the predicted errors, the
# choice, the trace, error messages and the experience cache, none of which is charged. So
# the code is never run in the program's environment: `public_environment` copies the scope
# a closure closes over keeping only public values (recursively: the closures, options and
# modules it can reach are copied the same way) and WITHHOLDS every private one. Reading a
# withheld name raises `withheld_error`, whose message names the variable and its kind (both
# fixed by the program text, never by the rows), so whether and how training fails depends
# only on public values and the public corpus. `check_public_reads` finds such reads in the
# text first and refuses them with their location, when the ChoiceMaker is built and again
# when it trains; the copied environment is what makes a read it cannot see (a dynamic path)
# fail too. The experience cache is keyed by `public_digest`: the code and every public value
# it reads, so a changed public global retrains.

TRAINING_REFUSAL = "an option's training run can only read public values"
TRAINING_HINT = ("a ChoiceMaker trains its options and metafeatures on the public corpus, not on the "
                 "session's data: read the data only through the parameter (db), make any other value "
                 "the code reads public, or pass it as a parameter")
# Built-ins that read files (a private CSV among them): refused inside a training run.
FILE_READERS = frozenset({"load", "load_public", "dpbench_corpus"})


class _Withheld(Exception):
    """Internal: a value that cannot enter a training run, and why (a public description)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class WithheldRead(PrivacyError):
    """Training code read a name `public_environment` withheld (`name`, described by `reason`)."""

    def __init__(self, name: str, reason: str, span: Span | None = None, who: str = "",
                 refusal: str = TRAINING_REFUSAL, hint: str = TRAINING_HINT) -> None:
        reader = f"{who} reads '{name}', which is {reason}" if who else f"'{name}' is {reason}"
        super().__init__(f"{refusal}: {reader}", span, hint)
        self.name = name
        self.reason = reason


def withheld_error(name: str, reason: str, span: Span | None = None, who: str = "",
                   refusal: str = TRAINING_REFUSAL, hint: str = TRAINING_HINT) -> WithheldRead:
    """The refusal of reading a withheld name: its text depends on the program only."""
    return WithheldRead(name, reason, span, who, refusal, hint)


class PublicValues(dict):
    """The bindings of a scope copied by `public_environment`.

    `withheld` maps each private name left out to a public description of it. Looking such a
    name up (`name in values`, which `Environment.lookup` asks at every level, or
    `values[name]`, which module attribute reads use) raises `withheld_error` instead of
    falling through to an outer scope or to "not defined".
    """

    def __init__(self) -> None:
        super().__init__()
        self.withheld: dict[str, str] = {}

    def __contains__(self, name: object) -> bool:
        if dict.__contains__(self, name):
            return True
        if name in self.withheld:
            raise withheld_error(str(name), self.withheld[str(name)])
        return False

    def __missing__(self, name: str) -> Any:
        if name in self.withheld:
            raise withheld_error(name, self.withheld[name])
        raise KeyError(name)


_REFUSING_BUILTINS: dict[str, Any] = {}


def public_builtin(builtin: Any) -> Any:
    """`builtin` itself, or for a built-in that reads files a stand-in that refuses to."""
    if not isinstance(builtin, Builtin) or builtin.name not in FILE_READERS:
        return builtin
    name = builtin.name
    if name not in _REFUSING_BUILTINS:

        def refuse_file(interp: Any, span: Span, *args: Any, **kwargs: Any) -> Any:
            raise PrivacyError(f"{TRAINING_REFUSAL}: {name}() reads files, which may hold the session's data",
                               span, TRAINING_HINT)

        _REFUSING_BUILTINS[name] = Builtin(name, refuse_file, builtin.min_args, builtin.max_args,
                                           builtin.keywords, builtin.privacy, builtin.doc)
    return _REFUSING_BUILTINS[name]


def public_environment(env: Any, memo: dict[int, Any] | None = None) -> Any:
    """THE training boundary: a copy of scope `env` (and its parents) holding public values only.

    Every binding is copied by `_public_value`: public numbers, strings, lists, records and
    tables as they are; closures, options, ChoiceMakers and modules as copies whose own scopes
    went through here; built-ins that read files as refusing stand-ins. Every private value
    (a private table, value, column, or a list or record holding one; a function whose default
    is private; anything of a kind not known to be public) is withheld: its name is kept in
    `PublicValues.withheld` with a public description, and reading it raises. The copy is a
    snapshot: later assignments to the program's globals do not reach it.

    Args:
        env: A `jostle.language.evaluator.Environment` (or None).
        memo: id -> copy of the scopes, closures and modules copied so far (cycles, sharing).

    Returns:
        The copied Environment, or None for None.
    """
    if env is None:
        return None
    memo = {} if memo is None else memo
    if id(env) in memo:
        return memo[id(env)]
    values = PublicValues()
    copy = type(env)(values, None)
    memo[id(env)] = copy
    memo.setdefault(-1, []).append(env)  # keep every original alive while ids are in use
    copy.parent = public_environment(env.parent, memo)
    if isinstance(env.values, PublicValues):
        values.withheld.update(env.values.withheld)
    for name, value in list(env.values.items()):
        try:
            values[name] = _public_value(value, memo)
        except _Withheld as why:
            values.withheld[name] = why.reason
    return copy


def _reason(value: Any) -> str:
    if isinstance(value, (tuple, np.ndarray)):
        return "a list holding private values"
    if isinstance(value, Record):
        return "a record holding private values"
    return f"a {type_name(value)}"


_AS_IS, _REFUSING, _WALK = "as is", "refusing stand-in", "walk"
_KIND_OF_TYPE: dict[type, str] = {}


def _kind_of_type(kind: type) -> str:
    """How `_public_value` treats every value of type `kind`, when its type alone decides.

    A scope copy walks every built-in (about 150 per scope, several copies per dispatch), so
    the decision for the types it depends on only is made once per type (cached in
    `_KIND_OF_TYPE`: a test that sets or removes a class's `training_copy` or
    `public_stateless` must clear it): public scalars and
    built-in options, metafeatures and learners (`public_stateless`, no `training_copy`) are
    shared as they are, built-ins go through `public_builtin`. Any type `is_private` may
    answer True for, or whose copy depends on the value, is walked every time.
    """
    from jostle.language.values import BoundMethod, Module, Private, PrivateMean, RowValues, RowView, Table

    if issubclass(kind, (Private, PrivateMean, RowValues, RowView, Table, tuple, Record, np.ndarray,
                         Closure, BoundMethod, Module, np.void)):
        return _WALK  # what is_private may answer True for, and what holds a scope or a target
    if issubclass(kind, (bool, int, float, str, np.generic)):
        return _AS_IS
    if issubclass(kind, Builtin):
        return _REFUSING
    if getattr(kind, "public_stateless", False) and not hasattr(kind, "training_copy"):
        return _AS_IS
    return _WALK


def _public_value(value: Any, memo: dict[int, Any]) -> Any:
    """`value` as a training run may see it, or _Withheld (see `public_environment`)."""
    if value is None:
        return value
    kind = _KIND_OF_TYPE.get(type(value))
    if kind is None:
        kind = _KIND_OF_TYPE[type(value)] = _kind_of_type(type(value))
    if kind is _AS_IS:
        return value
    if kind is _REFUSING:
        return public_builtin(value)
    return _walked_value(value, memo)


def _walked_value(value: Any, memo: dict[int, Any]) -> Any:
    """`_public_value` for a value whose type alone does not decide."""
    from jostle.language.values import BoundMethod, Module, RowValues, RowView, Table

    if is_private(value):
        raise _Withheld(_reason(value))
    if isinstance(value, np.ndarray):
        if not value.dtype.hasobject:
            return value
        if value.dtype.kind != "O":  # a structured array holding objects in its fields: not looked into
            raise _Withheld("a structured array holding objects, which a training run cannot copy")
        return np.array([_public_value(v, memo) for v in value.ravel()], dtype=object).reshape(value.shape)
    if isinstance(value, tuple):
        return tuple(_public_value(v, memo) for v in value)
    if isinstance(value, Record):
        return Record(tuple((k, _public_value(v, memo)) for k, v in value.fields))
    if isinstance(value, (Table, RowValues, RowView)):
        return value  # public (is_private is False)
    if isinstance(value, Closure):
        return _public_closure(value, memo)
    if isinstance(value, Builtin):
        return public_builtin(value)
    if isinstance(value, BoundMethod):
        return BoundMethod(_public_value(value.target, memo), public_builtin(value.builtin))
    if isinstance(value, Module):
        if id(value) not in memo:
            memo[id(value)] = Module(value.name, public_environment(value.env, memo))
            memo.setdefault(-1, []).append(value)
        return memo[id(value)]
    if hasattr(type(value), "training_copy"):  # Jostle-defined options, metafeatures, ChoiceMakers
        return value.training_copy(memo)
    if getattr(type(value), "public_stateless", False):
        return value  # built-in options and metafeatures, workloads, corpora, released models
    raise _Withheld(f"a {type_name(value)}, which a training run cannot copy")


def public_value(value: Any, memo: dict[int, Any]) -> Any:
    """`value` as a training run may see it (see `public_environment`); raises if withheld."""
    return _public_value(value, memo)


def _public_closure(closure: Closure, memo: dict[int, Any]) -> Closure:
    if id(closure) in memo:
        return memo[id(closure)]
    try:
        defaults = tuple(_public_value(d, memo) for d in closure.defaults)
    except _Withheld:
        raise _Withheld("a function whose default value is private") from None
    env = public_environment(closure.env, memo)
    if id(closure) not in memo:  # (copying its scope may have copied it already)
        memo[id(closure)] = Closure(closure.name, closure.params, closure.body, env, closure.span, defaults)
        memo.setdefault(-1, []).append(closure)
    return memo[id(closure)]


def public_closure(closure: Closure, memo: dict[int, Any] | None = None, who: str = "") -> Closure:
    """A copy of `closure` whose scope is `public_environment(closure.env)`.

    Raises:
        PrivacyError: The closure itself cannot be copied (a private default value).
    """
    try:
        return _public_closure(closure, {} if memo is None else memo)
    except _Withheld as why:
        raise PrivacyError(f"{TRAINING_REFUSAL}: {who or closure.name} is {why.reason}", closure.span,
                           TRAINING_HINT) from None


def _free_reads(params: tuple[A.Param, ...], body: Any, strict: bool = False) -> list[A.Expr]:
    """The Name reads (and `name.attr` reads) of a function body that resolve outside it.

    Parameters, names the body assigns (its locals) and the parameters and locals of nested
    functions are bound inside; everything else is looked up in the closure's scope. (A local
    read before its assignment also falls through to the scope at run time; the copied scope
    refuses it then, so missing it here only moves the refusal later.) With `strict`, only
    parameters count as bound: every read of a local is returned too, so a read that could fall
    through is found here, in the text, and no later.
    """
    from dataclasses import fields

    from jostle.language.ast_nodes import assigned_names as _assigned

    def locals_of(part: Any) -> set[str]:
        return set() if strict else _assigned(part)

    reads: list[A.Expr] = []

    def walk(node: Any, bound: frozenset[str]) -> None:
        if isinstance(node, A.Name):
            if node.id not in bound:
                reads.append(node)
            return
        if isinstance(node, A.Attribute) and isinstance(node.target, A.Name) and node.target.id not in bound:
            reads.append(node)
            return
        if isinstance(node, A.Lambda):
            inner = bound | {p.name for p in node.params}
            for p in node.params:
                if p.default is not None:
                    walk(p.default, bound)
            walk(node.body, inner)
            return
        if isinstance(node, (A.Def, A.OptionDef)):
            for p in node.params:
                if p.default is not None:
                    walk(p.default, bound)
            inner = bound | {p.name for p in node.params}
            bodies = [node.body] if isinstance(node, A.Def) else [node.answer, node.predict or ()]
            for part in bodies:
                walk(part, inner | locals_of(part))
            return
        if isinstance(node, tuple):
            for item in node:
                walk(item, bound)
            return
        if isinstance(node, A.Node):
            for f in fields(node):
                if f.name != "span":
                    walk(getattr(node, f.name), bound)

    top = frozenset(p.name for p in params) | (locals_of(body) if isinstance(body, tuple) else set())
    walk(body, frozenset(top))
    return reads


def _resolve(env: Any, read: A.Expr) -> tuple[str, Any]:
    """(name, value) of a free read in scope `env`; raises KeyError if undefined, PrivacyError
    if withheld. For `m.attr` of a module m, the value is the attribute's."""
    from jostle.language.values import Module

    if isinstance(read, A.Name):
        return read.id, env.lookup(read.id)
    target = env.lookup(read.target.id)
    if isinstance(target, Module):
        return f"{read.target.id}.{read.name}", target.env.values[read.name]
    return read.target.id, target


def check_public_reads(closure: Closure, who: str, strict: bool = False, refusal: str = TRAINING_REFUSAL,
                       hint: str = TRAINING_HINT) -> None:
    """Refuse, with its location, a read of a withheld name by a training copy `closure` or by
    any function, option or module it reads (statically, through the names in the text).

    Args:
        closure: A copy made by `public_closure` (its scope went through `public_environment`).
        who: Who reads, for the message ("option Flat").
        strict: Also check reads of locals (`_free_reads`), and refuse reads of the built-ins
            that read files, so that nothing this check passes can fail on a withheld name or
            a file later (what a prior needs: `check_prior`).
        refusal, hint: The refusal's wording.

    Raises:
        PrivacyError: The first such read, located at the name.
    """
    from jostle.language.values import Builtin

    seen: set[int] = set()

    def visit(function: Closure, via: str) -> None:
        if id(function) in seen:
            return
        seen.add(id(function))
        for read in _free_reads(function.params, function.body, strict):
            label = read.id if isinstance(read, A.Name) else f"{read.target.id}.{read.name}"
            try:
                _, value = _resolve(function.env, read)
            except KeyError:
                continue  # not defined (yet): the checker's and the evaluator's business
            except WithheldRead as error:
                raise withheld_error(label, error.reason, read.span, who + via, refusal, hint) from None
            if strict and isinstance(value, Builtin) and value.name in FILE_READERS:
                raise withheld_error(label, "a built-in that reads files, which may hold the session's data",
                                     read.span, who + via, refusal, hint)
            for inner, name in _functions_of(value):
                visit(inner, via or f" (through {name})")

    visit(closure, "")


# ---------------------------------------------------------------- priors
# An option's `predict(F)` prior guesses its error from the released metafeatures F. The engine
# calls it after the metafeature share is charged (it needs F), so whatever could make it fail
# on a release must be refused before anything is charged (issue 21: a prior holding
# `{{ count(t) }}` was refused after the share was spent). A prior is therefore post-processing
# by construction: `check_prior` refuses, in the text and located, a `{{ }}` written in it and
# any read (through every function, option and module it reads, locals included) of a private
# value or of a file-reading built-in; and it runs as its public copy, whose scope holds public
# values only, in `prior_interpreter`, whose accountant is not the session's. What it can
# reach is then public values and F, so it can release nothing of the data: a release it still
# calls (laplace(F.size, 1)) is on public values, exact and free, and no charge can reach the
# session's ledger. The check runs when the ChoiceMaker is built and again at each call before
# the dispatch charges anything (`dispatch.Runtime.prepare`), so a global rebound to private
# data in between is refused too. The checks read types and program text only, never the rows.

def _functions_of(value: Any) -> list[tuple[Closure, str]]:
    """The closures a value read by training code may run (with a name for messages)."""
    if isinstance(value, Closure):
        return [(value, value.name)]
    if hasattr(type(value), "training_functions"):  # Jostle-defined options, metafeatures, ChoiceMakers
        return [pair for function, label in value.training_functions() for pair in _functions_of_part(function, label)]
    if isinstance(value, (tuple, Record)):
        items = value if isinstance(value, tuple) else [v for _, v in value.fields]
        return [pair for item in items for pair in _functions_of(item)]
    return []


def _functions_of_part(function: Any, label: str) -> list[tuple[Closure, str]]:
    return [(function, label)] if isinstance(function, Closure) else _functions_of(function)


PRIOR_REFUSAL = "a predict(F) prior can only read F and public values"
PRIOR_HINT = ("a prior guesses the option's error from the released metafeatures F, and runs after they are "
              "charged: it cannot release or read the data; compute it from F and public values")


def _first_release(node: Any) -> A.Release | None:
    """The first `{{ }}` written in `node` (nested functions included)."""
    from dataclasses import fields

    if isinstance(node, A.Release):
        return node
    if isinstance(node, tuple):
        for item in node:
            found = _first_release(item)
            if found is not None:
                return found
    elif isinstance(node, A.Node):
        for f in fields(node):
            if f.name != "span":
                found = _first_release(getattr(node, f.name))
                if found is not None:
                    return found
    return None


def refuse_release_in_prior(body: Any, who: str) -> None:
    """Refuse a `{{ }}` written in a prior's body, located at it (when the option is built).

    Raises:
        PrivacyError: The first release in `body`.
    """
    release = _first_release(body)
    if release is not None:
        raise PrivacyError(f"{who}'s predict(F) prior cannot release: it runs after the metafeatures are "
                           "charged, so a release there would be refused after a charge", release.span, PRIOR_HINT)


def check_prior(closure: Closure, who: str) -> Closure:
    """The prior `closure` as it may run: its public copy, checked (see the comment above).

    Raises:
        PrivacyError: A release written in it, or a read of a private value or a file-reading
            built-in by it or by what it reads; located at the release or the name.
    """
    refuse_release_in_prior(closure.body, who)
    copy = public_closure(closure, {}, who)
    check_public_reads(copy, f"{who}'s predict(F) prior", strict=True, refusal=PRIOR_REFUSAL, hint=PRIOR_HINT)
    return copy


def prior_interpreter(interp: Any) -> Any:
    """Where priors run: a scratch interpreter (file readers refused, an accountant of its own)
    that writes to the program's output and warnings."""
    from jostle.privacy.noise import SimulationNoise

    scratch = scratch_interpreter(SimulationNoise(0), type(interp))
    scratch.output = interp.output
    scratch.warnings = interp.warnings
    scratch.on_warning = interp.on_warning
    return scratch
