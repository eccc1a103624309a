"""Static checks run before any data is touched (`jostle check`, and before every run).

They catch what can be known from the text alone:
  * names used but never defined anywhere in scope (with a "did you mean" hint);
  * calls of built-ins with the wrong number of arguments or unknown keywords;
  * `return` outside a function, `break`/`continue` outside a loop;
  * a `budget` statement anywhere but first in the program, `private` declarations inside
    functions, duplicate parameters;
  * a `with accuracy E at C:` block with a constant E <= 0 or C outside (0, 1), with nothing
    to release, with a `with budget` inside, or calling a mechanism that states its own budget.
Scoping follows Python: a function's locals are its parameters and every name it assigns;
other names resolve in the enclosing scopes (a function may use a global defined later).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from jostle.language import ast_nodes as A
from jostle.language.ast_nodes import assigned_names as _assigned
from jostle.diagnostics.errors import CheckError
from jostle.diagnostics.source import Span
from jostle.language.values import Builtin

# Python's spellings of Jostle's constants: a newcomer's first undefined names.
PYTHON_SPELLINGS = {"True": "`true`", "False": "`false`", "None": "`none`"}


def missing_schema_hint(name: str, path: str | None) -> str:
    """How to give the private table `name`, bound without a schema, its schema.

    `path` is the CSV file it was bound from (the command line's --data), or None when it was
    bound from Python (`Session.bind_private(name, frame)`), where no schema file can help.
    """
    declare = f"declare it in the program before use: `private {name}: {{col: numeric(lo, hi), ...}}`"
    if path is None:
        return (f"{declare}, or give the schema when binding it: "
                f"session.bind_private(\"{name}\", data, schema={{\"col\": (\"numeric\", lo, hi), ...}})")
    from jostle.data.schema import schema_file_for

    return f"{declare}, or put a schema file beside the data: {schema_file_for(Path(path))}"


@dataclass
class _Scope:
    names: set[str]
    parent: _Scope | None = None
    in_function: bool = False
    loops: int = 0

    def knows(self, name: str) -> bool:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.names:
                return True
            scope = scope.parent
        return False

    def all_names(self) -> set[str]:
        names: set[str] = set()
        scope: _Scope | None = self
        while scope is not None:
            names |= scope.names
            scope = scope.parent
        return names


@dataclass
class Checker:
    """Walks a program and raises the first CheckError it finds."""

    builtins: dict
    pending: dict[str, str | None] = field(default_factory=dict)  # table -> its CSV path, None if not a file
    accuracy_blocks: int = 0  # how many `with accuracy` blocks enclose what is being checked

    def fail(self, message: str, span: Span, hint: str | None = None) -> None:
        raise CheckError(message, span, hint)

    # ---------------------------------------------------------- statements
    def check_program(self, program: A.Program, known: set[str]) -> None:
        scope = _Scope(set(known) | _assigned(program.body))
        for i, stmt in enumerate(program.body):
            if isinstance(stmt, A.BudgetStmt) and i != 0:
                self.fail("a `budget` statement must be the first statement of a program", stmt.span,
                          "move it to the top, or use `with budget E:` for part of a program")
        self.block(program.body, scope, top=True)

    def accounting(self, accounting: A.AccountingName | None, delta: A.Expr | None) -> None:
        """`using NAME` names zCDP (the only measure that needs naming) and comes with a delta."""
        if accounting is None:
            return
        if accounting.name != "zcdp":
            self.fail(f"unknown accounting '{accounting.name}'", accounting.span,
                      "write `using zcdp` (zero-concentrated DP); without `using`, a budget is pure "
                      "(`budget E`) or approximate (`budget E, D`)")
        if delta is None:
            self.fail("`using zcdp` needs a delta: the total is stated as (epsilon, delta)", accounting.span,
                      "write e.g. `budget 1.0, 1e-6 using zcdp`, or state the total in rho: `budget rho(0.05)`")

    def block(self, body: tuple[A.Stmt, ...], scope: _Scope, top: bool = False) -> None:
        for stmt in body:
            self.stmt(stmt, scope, top)

    def stmt(self, stmt: A.Stmt, scope: _Scope, top: bool) -> None:
        if isinstance(stmt, (A.Assign, A.AugAssign)):
            self.expr(stmt.value, scope)
        elif isinstance(stmt, A.ExprStmt):
            self.expr(stmt.expr, scope)
        elif isinstance(stmt, A.Return):
            if not scope.in_function:
                self.fail("`return` outside a function", stmt.span)
            if stmt.value is not None:
                self.expr(stmt.value, scope)
        elif isinstance(stmt, (A.Break, A.Continue)):
            if scope.loops == 0:
                word = "break" if isinstance(stmt, A.Break) else "continue"
                self.fail(f"`{word}` outside a loop", stmt.span)
        elif isinstance(stmt, A.BudgetStmt):
            if scope.in_function or not top:
                self.fail("a `budget` statement may only stand at the top of a program", stmt.span,
                          "use `with budget E:` inside functions and blocks")
            self.expr(stmt.epsilon, scope)
            if stmt.delta is not None:
                self.expr(stmt.delta, scope)
            self.accounting(stmt.accounting, stmt.delta)
        elif isinstance(stmt, A.PrivateDecl):
            if scope.in_function:
                self.fail("`private` declarations belong at the top of a program", stmt.span)
            self.expr(stmt.schema, scope)
        elif isinstance(stmt, A.If):
            for test, body in stmt.branches:
                self.expr(test, scope)
                self.block(body, scope)
            self.block(stmt.orelse, scope)
        elif isinstance(stmt, A.While):
            self.expr(stmt.test, scope)
            self.loop(stmt.body, scope)
        elif isinstance(stmt, A.For):
            self.expr(stmt.iterable, scope)
            self.loop(stmt.body, scope)
        elif isinstance(stmt, A.WithBudget):
            self.expr(stmt.epsilon, scope)
            if stmt.delta is not None:
                self.expr(stmt.delta, scope)
            self.accounting(stmt.accounting, stmt.delta)
            self.block(stmt.body, scope)
            self.mixed_allotment(stmt.body)
        elif isinstance(stmt, A.WithAccuracy):
            self.with_accuracy(stmt, scope)
        elif isinstance(stmt, A.Def):
            self.function(stmt.params, stmt.body, scope, stmt.span)
        elif isinstance(stmt, A.OptionDef):
            if scope.in_function:
                self.fail("an option is declared at the top of a program or module", stmt.span)
            self.function(stmt.params, stmt.answer, scope, stmt.span)
            if stmt.predict is not None:
                self.function((A.Param(stmt.span, stmt.predict_param or "F", None),), stmt.predict, scope,
                              stmt.span)

    def with_accuracy(self, stmt: A.WithAccuracy, scope: _Scope) -> None:
        """`with accuracy E at C:`: E and C when written as constants, something to release in the
        body, and no `with budget` directly inside (jostle.language.accuracy_first)."""
        from jostle.language.accuracy_first import releases_nothing, static_problems

        def is_builtin(name: str) -> bool:
            return name in self.builtins and not scope.knows(name)

        self.expr(stmt.error, scope)
        self.expr(stmt.confidence, scope)
        for message, span, hint in static_problems(stmt, is_builtin):
            self.fail(message, span, hint)
        self.accuracy_blocks += 1
        try:
            self.block(stmt.body, scope)
        finally:
            self.accuracy_blocks -= 1
        problem = releases_nothing(stmt, is_builtin)
        if problem is not None:
            self.fail(*problem)

    def mixed_allotment(self, body: tuple[A.Stmt, ...]) -> None:
        """A `with budget E:` body allots all of E to its `{{ }}` releases (E / their number each);
        an accuracy block in the same body spends from E too, so whichever comes second would be
        refused after the first has spent (a gradual release's spending is data-dependent, so no
        dry run can tell the real run's refusal in advance). Refused here, before anything runs."""
        accuracy = _accuracy_blocks(body)
        if accuracy and A.count_releases(body) > 0:
            self.fail("this `with budget` block allots its whole budget to its `{{ }}` releases, and the "
                      "`with accuracy` block in it spends from the same budget: one of them would be refused "
                      "after the other has spent", accuracy[0].span,
                      "give the `{{ }}` releases their own `with budget` block beside the accuracy block")

    def loop(self, body: tuple[A.Stmt, ...], scope: _Scope) -> None:
        scope.loops += 1
        try:
            self.block(body, scope)
        finally:
            scope.loops -= 1

    def function(self, params: tuple[A.Param, ...], body, scope: _Scope, span: Span) -> None:
        seen: set[str] = set()
        for param in params:
            if param.name in seen:
                self.fail(f"parameter '{param.name}' appears twice", param.span)
            seen.add(param.name)
            if param.default is not None:
                self.expr(param.default, scope)
        locals_ = set(seen)
        if isinstance(body, tuple):
            locals_ |= _assigned(body)
        inner = _Scope(locals_, scope, in_function=True)
        if isinstance(body, tuple):
            self.block(body, inner)
        else:
            self.expr(body, inner)

    # ---------------------------------------------------------- expressions
    def expr(self, expr: A.Expr, scope: _Scope) -> None:
        if isinstance(expr, A.Name):
            if not scope.knows(expr.id) and expr.id not in self.builtins:
                if expr.id in self.pending:
                    self.fail(f"the private table '{expr.id}' is bound but has no schema", expr.span,
                              missing_schema_hint(expr.id, self.pending[expr.id]))
                if expr.id in PYTHON_SPELLINGS:
                    self.fail(f"'{expr.id}' is not defined", expr.span,
                              f"Jostle writes {PYTHON_SPELLINGS[expr.id]} in lower case")
                candidates = sorted(scope.all_names() | set(self.builtins))
                close = difflib.get_close_matches(expr.id, candidates, n=1)
                hint = f"did you mean '{close[0]}'?" if close else "define it before using it"
                self.fail(f"'{expr.id}' is not defined", expr.span, hint)
        elif isinstance(expr, (A.Number, A.String, A.Constant)):
            return
        elif isinstance(expr, A.ListLit):
            for item in expr.items:
                self.expr(item, scope)
        elif isinstance(expr, A.RecordLit):
            for _, value in expr.fields:
                self.expr(value, scope)
        elif isinstance(expr, (A.BinOp, A.Compare, A.BoolOp)):
            self.expr(expr.left, scope)
            self.expr(expr.right, scope)
        elif isinstance(expr, A.UnaryOp):
            self.expr(expr.operand, scope)
        elif isinstance(expr, A.IfExpr):
            self.expr(expr.test, scope)
            self.expr(expr.then, scope)
            self.expr(expr.orelse, scope)
        elif isinstance(expr, A.Call):
            self.expr(expr.func, scope)
            for arg in expr.args:
                self.expr(arg, scope)
            for kw in expr.kwargs:
                self.expr(kw.value, scope)
            self.arity(expr, scope)
        elif isinstance(expr, A.Index):
            self.expr(expr.target, scope)
            self.expr(expr.index, scope)
        elif isinstance(expr, A.Attribute):
            self.expr(expr.target, scope)
        elif isinstance(expr, A.Lambda):
            self.function(expr.params, expr.body, scope, expr.span)
        elif isinstance(expr, A.Release):
            self.expr(expr.expr, scope)
        elif isinstance(expr, A.ChoiceMakerExpr):
            for name in (*expr.options, *expr.metafeatures):
                self.expr(name, scope)
            for part in (expr.corpus, expr.error, expr.share):
                if part is not None:
                    self.expr(part, scope)

    def arity(self, call: A.Call, scope: _Scope) -> None:
        if not isinstance(call.func, A.Name) or scope.knows(call.func.id):
            return
        builtin = self.builtins.get(call.func.id)
        if not isinstance(builtin, Builtin):  # not a built-in function (e.g. a built-in option)
            return
        if self.accuracy_blocks and builtin.privacy == "release" and builtin.name != "release":
            self.fail(f"{builtin.name}() states its own budget; inside `with accuracy` the budget is chosen "
                      "for the error", call.span, "release with {{ x }} or release(x, error=E, confidence=C) "
                      "in the block, or call it outside the block; nothing was spent")
        problem = builtin.arity_problem(len(call.args))
        if problem is not None:
            self.fail(problem, call.span, builtin.doc)
        for kw in call.kwargs:
            if kw.name not in builtin.keywords:
                self.fail(f"{builtin.name}() has no keyword argument '{kw.name}'", kw.span,
                          f"its keywords are {list(builtin.keywords)}" if builtin.keywords else builtin.doc)

def check(program: A.Program, builtin_names: Iterable[str] | dict | None = None,
          known: Iterable[str] = (), pending: Iterable[str] = ()) -> None:
    """Run the static checks on a parsed program.

    Args:
        program: The parsed program.
        builtin_names: The built-in registry (name -> Builtin); defaults to jostle.language.builtins.REGISTRY.
        known: Names already defined (earlier REPL inputs, Session globals, bound tables).
        pending: Private tables bound without a schema (they need a `private` declaration):
            their names, or a mapping of each name to its binding (the interpreter's
            `bindings`, whose entries may end with the CSV path the table was read from).

    Raises:
        CheckError: The first problem found, located, with a hint.
    """
    from jostle.language.builtins import REGISTRY

    registry = REGISTRY if builtin_names is None or not isinstance(builtin_names, dict) else builtin_names
    if builtin_names is not None and not isinstance(builtin_names, dict):
        names = set(builtin_names)
        registry = {k: v for k, v in REGISTRY.items() if k in names}
    Checker(registry, _pending_paths(pending)).check_program(program, set(known))


def _pending_paths(pending: Iterable[str] | Mapping[str, object]) -> dict[str, str | None]:
    """Each pending table's CSV path (None when it was not bound from a file)."""
    if not isinstance(pending, Mapping):
        return {name: None for name in pending}
    paths: dict[str, str | None] = {}
    for name, binding in pending.items():
        path = binding[3] if isinstance(binding, tuple) and len(binding) > 3 else None
        paths[name] = str(path) if path is not None else None
    return paths


def _accuracy_blocks(body: object) -> list[A.WithAccuracy]:
    """The `with accuracy` blocks written in `body` itself: not in nested functions, options or
    `with budget` blocks, which have budgets of their own (as `ast_nodes.count_releases` counts)."""
    from dataclasses import fields

    if isinstance(body, A.WithAccuracy):
        return [body]
    if isinstance(body, (A.Def, A.Lambda, A.WithBudget, A.OptionDef, A.ChoiceMakerExpr)):
        return []
    if isinstance(body, tuple):
        return [found for item in body for found in _accuracy_blocks(item)]
    if isinstance(body, A.Node):
        return [found for f in fields(body) if f.name != "span" for found in _accuracy_blocks(getattr(body, f.name))]
    return []
