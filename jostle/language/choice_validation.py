"""Validating a `choicemaker among {...} informed by {...} trained on CORPUS` expression.

`make_choicemaker` checks every part before the value exists, so that nothing about it can fail
after a charge, and every refusal is located (nothing is ever charged here):

  * every option is an option, and all are of one task (a ChoiceMaker may choose among
    Options of several families of one task, never of several tasks: refused at the first
    option of another task);
  * the error measure is one every family of the options offers (`Family.error_measures`, a
    family hook: the language keeps no list of measures);
  * every built-in metafeature is one of the families' shared set, and a metafeature written in
    Jostle is taken only by a family whose language module says how a public training input
    reads as private data (`metafeature_training_argument`); a derived one (a function of F
    reading only `F.name` of metafeatures listed before it, `choice_values.derived_reads`) is
    taken by every family and checked like a prior (no release, no private read);
  * the corpus is of the options' task; `trained on none` needs options with priors, whose
    bodies are checked now (a release in a prior is refused);
  * trained on a corpus, the Jostle-defined parts will run uncharged on public data: any that
    reads a private value is refused now, located (`jostle.language.training_boundary`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from jostle.choicemaker import families
from jostle.diagnostics.errors import JostleRuntimeError
from jostle.diagnostics.source import Span
from jostle.language import ast_nodes as A
from jostle.language.choice_runtime import ChoiceMaker, option_families, options_task
from jostle.language.choice_values import (BuiltinMetafeature, JostleMetafeature, JostleOption, derived_reads,
                                           family_language)
from jostle.language.training_boundary import check_prior
from jostle.language.values import Closure, CorpusValue, type_name
from jostle.privacy.budget import Budget

DEFAULT_SHARE = Fraction(1, 10)


def _check_options(expr: A.ChoiceMakerExpr, options: list[Any]) -> list[Any]:
    """The options, each an option, all of one task (refused at the first of another)."""
    checked: list[Any] = []
    first_task = ""
    for name, value in zip(expr.options, options):
        if not (isinstance(value, JostleOption) or getattr(value, "engine_option", None) is not None):
            raise JostleRuntimeError(f"'{name.id}' is not an option (it is a {type_name(value)})", name.span,
                                     "declare it with `option NAME(...):` or use a built-in option of a learner "
                                     "family")
        if not isinstance(value, JostleOption):
            if first_task and value.task != first_task:
                raise JostleRuntimeError(
                    "a ChoiceMaker chooses among options for one task: options of "
                    f"{' and '.join(sorted({first_task, value.task}))} tasks cannot be mixed", name.span,
                    f"'{name.id}' is an option for {value.task} tasks; the options before it are for "
                    f"{first_task} tasks")
            first_task = first_task or value.task
        checked.append(value)
    return checked


def _serving(expr: A.ChoiceMakerExpr, options: list[Any], task: str, error: Any) -> Any:
    """The family the ChoiceMaker uses, with its error measure checked (located refusals)."""
    span = expr.error.span if expr.error is not None else expr.span
    if error is not None and not isinstance(error, str):
        raise JostleRuntimeError(f"an error measure is named by a string, got a {type_name(error)}", span)
    try:
        members = option_families(options, task)
    except ValueError as problem:
        raise JostleRuntimeError(str(problem), expr.span) from None
    offered = [name for name in members[0].error_measures() if all(name in m.error_measures() for m in members)]
    try:
        return families.serving(members, error)
    except KeyError:
        raise JostleRuntimeError(f"unknown error measure {error!r} for these options", span,
                                 f"use {' or '.join(repr(name) for name in offered)}" if offered else
                                 "their families share no error measure") from None
    except ValueError as problem:  # families of one task that cannot share a ChoiceMaker
        raise JostleRuntimeError(str(problem), expr.span) from None


def _check_metafeatures(interp: Any, expr: A.ChoiceMakerExpr, metafeatures: list[Any], family: Any) -> list[Any]:
    """Built-in metafeatures of the family's shared set, or Jostle functions where it takes them."""
    known = family.metafeatures()
    language = family_language(family)
    takes_jostle = hasattr(language, "metafeature_training_argument")
    checked: list[Any] = []
    for name, value in zip(expr.metafeatures, metafeatures):
        reads = derived_reads(value, [m.name for m in checked]) if isinstance(value, Closure) else ()
        if reads:  # post-processing of released values: free, any family (refused now if it reads private data)
            check_prior(value, f"metafeature {name.id}")
            checked.append(JostleMetafeature(name.id, value, _source_of(value), interpreter=type(interp),
                                             language_module=family.language_module, requires=reads))
        elif isinstance(value, BuiltinMetafeature):
            if value.name not in known:
                raise JostleRuntimeError(f"'{name.id}' is not a metafeature of {family.task} tasks", name.span,
                                         f"use one of {', '.join(known)}")
            checked.append(value)
        elif isinstance(value, Closure) and takes_jostle:
            checked.append(JostleMetafeature(name.id, value, _source_of(value), interpreter=type(interp),
                                             language_module=family.language_module))
        else:
            raise JostleRuntimeError(f"'{name.id}' is not a metafeature (it is a {type_name(value)})", name.span,
                                     "a metafeature is a function of the data, e.g. def f(db): return ..."
                                     if takes_jostle else f"use one of {', '.join(known)}")
    return checked


def make_choicemaker(interp: Any, expr: A.ChoiceMakerExpr, options: list[Any], metafeatures: list[Any],
                     corpus: Any, error: Any, share: Any) -> ChoiceMaker:
    """Validate the parts of a `choicemaker` expression and build the value (see the module
    docstring; every refusal is located and nothing is charged)."""
    span = expr.span
    checked_options = _check_options(expr, options)
    task = options_task(checked_options)
    family = _serving(expr, checked_options, task, error)
    checked_features = _check_metafeatures(interp, expr, metafeatures, family)
    if corpus is not None and not isinstance(corpus, CorpusValue):
        raise JostleRuntimeError(f"a ChoiceMaker is trained on a corpus, got a {type_name(corpus)}", expr.corpus.span,
                                 "use the bundled public corpus of the options' task, or `trained on none` to "
                                 "choose by the options' predict(F) priors alone")
    if corpus is not None and corpus.task != task:
        raise JostleRuntimeError("the corpus is for another task than the options", expr.corpus.span,
                                 f"the options are for {task} tasks; this corpus is of {corpus.task} tasks")
    if corpus is None and not any(isinstance(o, JostleOption) and o.predict is not None for o in checked_options):
        raise JostleRuntimeError("a ChoiceMaker trained on none needs options with predict(F) priors",
                                 expr.corpus.span, f"train it on a corpus of {task} tasks")
    for option in checked_options:  # the priors run after a charge: refuse, now, what could fail there
        if isinstance(option, JostleOption) and option.predict is not None:
            check_prior(option.predict, f"option {option.name}")
    if corpus is not None:
        # Trained on a corpus, the Jostle-defined options and metafeatures will run uncharged on
        # public data: refuse now, located, any that reads a private value.
        for part in [*checked_options, *checked_features]:
            if isinstance(part, (JostleOption, JostleMetafeature)):
                part.check_public()
    fraction = DEFAULT_SHARE
    if share is not None:
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share < 1:
            raise JostleRuntimeError("the metafeature share must be a number between 0 and 1",
                                     expr.share.span if expr.share else span)
        fraction = Budget.of(share).epsilon
    return ChoiceMaker(expr.name or "choicemaker", checked_options, checked_features, corpus, family.error_measure,
                       fraction, span, task=task, serving=family)


def source_text(span: Span) -> str:
    """Every line a (multi-line) span covers: what a fingerprint of user code hashes.

    A block's span ends where the next statement starts (the parser closes a block at the
    dedent), so trailing lines indented no deeper than the first line (and blank ones) are the
    next statement's and are dropped, unless the line before ends a backslash continuation: a
    fingerprint depends on the definition alone, not on what follows it in the file.
    """
    lines = [span.source.line(i) for i in range(span.line, span.end_line + 1)]

    def indent(line: str) -> int:
        return len(line) - len(line.lstrip())

    while len(lines) > 1 and (not lines[-1].strip() or (indent(lines[-1]) <= indent(lines[0])
                                                        and not lines[-2].rstrip().endswith("\\"))):
        lines.pop()
    return "\n".join(lines)


def _source_of(closure: Closure) -> str:
    return source_text(closure.span) or closure.name


__all__ = ["make_choicemaker", "source_text", "DEFAULT_SHARE"]
