"""The evaluator: walks the AST, keeps private values private, and charges every release.

Privacy rules enforced here (each refusal is a PrivacyError naming where the private value was
made and how to release it):
  * a private value may not be an `if`/`while`/`x if c else y` condition, a `for` iterable or
    loop bound, an index, an argument of a public-only built-in (print, sqrt, range, ...), a
    comparison operand, or a value handed back to Python;
  * arithmetic on private values follows jostle.language.sensitivity;
  * `{{ expr }}` releases expr with the budget the innermost context allots (jostle.privacy.budget);
  * inside row functions (where/derive), columns are private `RowValues` that only combine
    elementwise; they cannot be printed, indexed, counted or branched on.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable, TextIO

import numpy as np

from jostle.language import ast_nodes as A
from jostle.language import noisy_values, operators as ops
from jostle.privacy.accounting import Accounting, zcdp_total
from jostle.privacy.budget import Accountant, AnyBudget, Budget, RhoZCDPBudget
from jostle.diagnostics.errors import BudgetExceeded, JostleError, JostleRuntimeError, JostleWarning, PrivacyError
from jostle.language.release_names import assigned
from jostle.language.mechanisms import release_default
from jostle.language.accuracy_first import active_target, exec_with_accuracy, release_for
from jostle.privacy.noise import Randomness
from jostle.language.sensitivity import (
    made_at,
    private_index,
    refuse,
)
from jostle.diagnostics.source import Span
from jostle.language.builtin_registry import as_python_list
from jostle.language.row_apply import refuse_row_arguments
from jostle.language.scopes import BreakSignal, ContinueSignal, Environment, ReturnSignal, import_module, in_library
from jostle.language.values import (
    BoundMethod,
    Builtin,
    Closure,
    Module,
    Private,
    PrivateMean,
    Record,
    RowValues,
    RowView,
    Table,
    VectorLabels,
    arity_message,
    is_private,
    type_name,
)

MAX_DEPTH = 400
# Each Jostle call nests about ten Python frames; leave room for MAX_DEPTH calls.
_PYTHON_FRAMES = 12 * MAX_DEPTH + 1000


class Interpreter:
    """Evaluates programs against one accountant, one source of randomness and one global scope.

    Args:
        accountant: Charges every release.
        randomness: Where noise comes from.
        output: Where `print` writes.
        search_path: Directories searched by `import` after the standard library.
    """

    def __init__(
        self,
        accountant: Accountant,
        randomness: Randomness,
        output: TextIO | None = None,
        search_path: list[Path] | None = None,
    ) -> None:
        from jostle.language.builtins import REGISTRY

        self.accountant = accountant
        self.randomness = randomness
        self.output = output
        self.search_path = list(search_path or [])
        self.builtins = Environment(dict(REGISTRY))
        self.globals = Environment(parent=self.builtins)
        self.bound_tables: dict[str, Table] = {}
        # name -> (frame, schema, public_rows, csv path or None) awaiting a schema
        self.bindings: dict[str, Any] = {}
        self.modules: dict[str, Module] = {}
        self.loading: set[str] = set()
        self.depth = 0
        self.warnings: list[JostleWarning] = []  # every warning given, in order (each once)
        # Where warnings go; None writes them, rendered, to stderr (as the CLI shows errors).
        self.on_warning: Callable[[JostleWarning], None] | None = None
        self.vector_labels = VectorLabels()  # the public labels of released vectors
        if sys.getrecursionlimit() < _PYTHON_FRAMES:
            sys.setrecursionlimit(_PYTHON_FRAMES)

    # ---------------------------------------------------------- programs
    def write(self, text: str) -> None:
        stream = self.output if self.output is not None else sys.stdout
        stream.write(text)

    def warn(self, warning: JostleWarning) -> None:
        """Give a warning once per place and message (a loop or a partition repeats it)."""
        key = (warning.span.location if warning.span is not None else "", warning.message)
        if any((w.span.location if w.span is not None else "", w.message) == key for w in self.warnings):
            return
        self.warnings.append(warning)
        if self.on_warning is not None:
            self.on_warning(warning)
        else:
            sys.stderr.write(warning.render() + "\n")

    def run_program(self, program: A.Program, env: Environment | None = None) -> Any:
        """Run a checked program; returns the value of a final expression statement, if any."""
        self.depth = 0
        try:
            return self._run_program(program, env or self.globals)
        except RecursionError:
            raise JostleRuntimeError(
                "the program nests too deeply (expressions or calls)", program.span,
                "simplify deeply nested expressions or use a loop instead of recursion",
            ) from None

    def _run_program(self, program: A.Program, env: Environment) -> Any:
        body = program.body
        if body and isinstance(body[0], A.BudgetStmt):
            head = body[0]
            budget, accounting = self._budget_value(head.epsilon, head.delta, head.accounting, env)
            if self.accountant.total is None:
                self.accountant.set_total(budget, head.span, accounting)
            releases = A.count_releases(body[1:])
            with self.accountant.context(budget, "the program's budget", head.span, releases):
                return self.exec_block(body[1:], env, top=True)
        return self.exec_block(body, env, top=True)

    def _budget_value(self, eps_expr: A.Expr, delta_expr: A.Expr | None, using: A.AccountingName | None,
                      env: Environment) -> tuple[AnyBudget, Accounting]:
        """The cap a `budget` statement or `with budget` block states, and its accounting:
        `E` (pure), `E, D` (approximate), `E, D using zcdp` (a rho cap certified to meet
        (E, D), jostle.privacy.conversions.rho_for) or `rho(R)` (a rho cap)."""
        eps = self.eval(eps_expr, env)
        delta = self.eval(delta_expr, env) if delta_expr is not None else 0
        if isinstance(eps, RhoZCDPBudget):
            if delta_expr is not None or using is not None:
                raise JostleRuntimeError(
                    "rho(...) already states a zCDP total", (using or delta_expr).span,
                    "write `budget rho(R)` alone, or state (epsilon, delta) with `budget E, D using zcdp`")
            return zcdp_total(None, None, eps.rho, eps_expr.span)
        for value, expr in ((eps, eps_expr), (delta, delta_expr)):
            if is_private(value):
                raise refuse("a budget must be public", value, expr.span)
            if not ops.public_number(value):
                raise JostleRuntimeError(f"a budget must be a number, got a {type_name(value)}", expr.span)
        try:
            Budget.of(float(eps))
        except JostleRuntimeError as error:
            error.span = eps_expr.span
            raise
        try:
            budget = Budget.of(float(eps), float(delta))
        except JostleRuntimeError as error:
            error.span = delta_expr.span if delta_expr is not None else eps_expr.span
            raise
        if budget.epsilon <= 0:
            raise JostleRuntimeError("a budget's epsilon must be greater than 0", eps_expr.span)
        if using is not None:
            if using.name != "zcdp":
                raise JostleRuntimeError(f"unknown accounting '{using.name}'", using.span, "write `using zcdp`")
            return zcdp_total(budget.epsilon, budget.delta, None,
                              delta_expr.span if delta_expr is not None else using.span)
        return budget, Accounting()

    def exec_block(self, body: tuple[A.Stmt, ...], env: Environment, top: bool = False) -> Any:
        last = None
        for stmt in body:
            last = self.exec(stmt, env)
        return last if top else None

    # ---------------------------------------------------------- statements
    def exec(self, stmt: A.Stmt, env: Environment) -> Any:
        method = getattr(self, "_exec_" + type(stmt).__name__)
        return method(stmt, env)

    def _exec_ExprStmt(self, stmt: A.ExprStmt, env: Environment) -> Any:
        return self.eval(stmt.expr, env)

    def _exec_Assign(self, stmt: A.Assign, env: Environment) -> None:
        # A table remembers the variable it was assigned to, for the ledger's `what` (program text).
        env.define(stmt.name, assigned(self.eval(stmt.value, env), stmt.name))

    def _exec_AugAssign(self, stmt: A.AugAssign, env: Environment) -> None:
        try:
            current = env.lookup(stmt.name)
        except KeyError:
            raise JostleRuntimeError(f"'{stmt.name}' is not defined", stmt.span) from None
        env.define(stmt.name, ops.binary(stmt.op, current, self.eval(stmt.value, env), stmt.span))

    def _exec_Return(self, stmt: A.Return, env: Environment) -> None:
        raise ReturnSignal(self.eval(stmt.value, env) if stmt.value is not None else None)

    def _exec_Pass(self, stmt: A.Pass, env: Environment) -> None:
        return None

    def _exec_Break(self, stmt: A.Break, env: Environment) -> None:
        raise BreakSignal()

    def _exec_Continue(self, stmt: A.Continue, env: Environment) -> None:
        raise ContinueSignal()

    def _exec_BudgetStmt(self, stmt: A.BudgetStmt, env: Environment) -> None:
        raise JostleRuntimeError(
            "a `budget` statement must be the first statement of a program", stmt.span,
            "move it to the top, or use `with budget E:` for part of a program",
        )

    def _exec_If(self, stmt: A.If, env: Environment) -> None:
        for test, body in stmt.branches:
            if ops.truth(self.eval(test, env), test.span, "an if condition"):
                self.exec_block(body, env)
                return
        self.exec_block(stmt.orelse, env)

    def _exec_While(self, stmt: A.While, env: Environment) -> None:
        while ops.truth(self.eval(stmt.test, env), stmt.test.span, "a while condition"):
            try:
                self.exec_block(stmt.body, env)
            except BreakSignal:
                break
            except ContinueSignal:
                continue

    def _exec_For(self, stmt: A.For, env: Environment) -> None:
        iterable = self.eval(stmt.iterable, env)
        items = self._iterate(iterable, stmt.iterable.span)
        for item in items:
            self._bind_targets(stmt.targets, item, env, stmt.span)
            try:
                self.exec_block(stmt.body, env)
            except BreakSignal:
                break
            except ContinueSignal:
                continue

    def _iterate(self, value: Any, span: Span) -> list[Any]:
        if isinstance(value, (Private, PrivateMean, RowValues, RowView)):
            raise refuse("a private value cannot be iterated over or used as a loop bound", value, span)
        if isinstance(value, Table):
            if value.private:
                raise PrivacyError(
                    "the rows of a private table cannot be iterated over", span,
                    "compute aggregates (count, sum, histogram) and release them; to loop over "
                    "groups use partition(t, column)",
                )
            return [Record.of({k: v.item() if isinstance(v, np.generic) else v for k, v in row.items()}) for row in value.frame.to_dict("records")]
        items = as_python_list(value)
        if items is not None:
            return items
        if isinstance(value, Record):
            return list(value.keys())
        raise JostleRuntimeError(f"cannot iterate over a {type_name(value)}", span)

    def _bind_targets(self, targets: tuple[str, ...], item: Any, env: Environment, span: Span) -> None:
        if len(targets) == 1:
            env.define(targets[0], item)
            return
        if isinstance(item, (Private, PrivateMean)):
            raise refuse("a private value cannot be unpacked", item, span)
        if not isinstance(item, (tuple, np.ndarray)) or len(item) != len(targets):
            raise JostleRuntimeError(
                f"cannot unpack a {type_name(item)} into {len(targets)} names", span,
                f"each item must be a list of {len(targets)} values",
            )
        for name, value in zip(targets, item):
            env.define(name, value)

    def _exec_Def(self, stmt: A.Def, env: Environment) -> None:
        defaults = tuple(self.eval(p.default, env) if p.default is not None else None for p in stmt.params)
        env.define(stmt.name, Closure(stmt.name, stmt.params, stmt.body, env, stmt.span, defaults))

    def _exec_OptionDef(self, stmt: A.OptionDef, env: Environment) -> None:
        from jostle.language.choice import JostleOption, source_text

        defaults = tuple(self.eval(p.default, env) if p.default is not None else None for p in stmt.params)
        answer = Closure(stmt.name, stmt.params, stmt.answer, env, stmt.span, defaults)
        predict = None
        if stmt.predict is not None:
            param = A.Param(stmt.span, stmt.predict_param or "F", None)
            predict = Closure(f"{stmt.name}.predict", (param,), stmt.predict, env, stmt.span, (None,))
        env.define(stmt.name, JostleOption(stmt.name, answer, predict, source_text(stmt.span),
                                                interpreter=type(self)))

    def _eval_ChoiceMakerExpr(self, expr: A.ChoiceMakerExpr, env: Environment) -> Any:
        from jostle.language.choice import make_choicemaker

        options = [self.eval(name, env) for name in expr.options]
        metafeatures = [self.eval(name, env) for name in expr.metafeatures]
        corpus = self.eval(expr.corpus, env)
        error = self.eval(expr.error, env) if expr.error is not None else None
        share = self.eval(expr.share, env) if expr.share is not None else None
        for value, part in ((corpus, expr.corpus), (error, expr.error), (share, expr.share)):
            if part is not None and is_private(value):
                raise refuse("a ChoiceMaker's settings must be public", value, part.span)
        return make_choicemaker(self, expr, options, metafeatures, corpus, error, share)

    def _exec_WithBudget(self, stmt: A.WithBudget, env: Environment) -> None:
        budget, _ = self._budget_value(stmt.epsilon, stmt.delta, stmt.accounting, env)
        releases = A.count_releases(stmt.body)
        with self.accountant.context(budget, "the `with budget` block", stmt.span, releases):
            self.exec_block(stmt.body, env)

    _exec_WithAccuracy = exec_with_accuracy  # `with accuracy E at C:` (jostle.language.accuracy_first)

    def _exec_Import(self, stmt: A.Import, env: Environment) -> None:
        env.define(stmt.module, self.import_module(stmt.module, stmt.span))

    def _exec_PrivateDecl(self, stmt: A.PrivateDecl, env: Environment) -> None:
        from jostle.language.builtins import bind_declared_table

        schema = self.eval(stmt.schema, env)
        env.define(stmt.name, bind_declared_table(self, stmt.name, schema, stmt.span, stmt.per))

    # ---------------------------------------------------------- imports
    def import_module(self, name: str, span: Span) -> Module:
        """Load `name`: stdlib/name.jst first, then name.jst next to the program or on the path
        (jostle.language.scopes)."""
        return import_module(self, name, span)

    # ---------------------------------------------------------- expressions
    def eval(self, expr: A.Expr, env: Environment) -> Any:
        method = getattr(self, "_eval_" + type(expr).__name__)
        return method(expr, env)

    def _eval_Number(self, expr: A.Number, env: Environment) -> Any:
        return expr.value

    def _eval_String(self, expr: A.String, env: Environment) -> Any:
        return expr.value

    def _eval_Constant(self, expr: A.Constant, env: Environment) -> Any:
        return expr.value

    def _eval_Name(self, expr: A.Name, env: Environment) -> Any:
        try:
            return env.lookup(expr.id)
        except KeyError:
            raise JostleRuntimeError(f"'{expr.id}' is not defined", expr.span) from None

    def _eval_ListLit(self, expr: A.ListLit, env: Environment) -> tuple:
        return tuple(self.eval(item, env) for item in expr.items)

    def _eval_RecordLit(self, expr: A.RecordLit, env: Environment) -> Record:
        return Record(tuple((key, self.eval(value, env)) for key, value in expr.fields))

    def _eval_Lambda(self, expr: A.Lambda, env: Environment) -> Closure:
        defaults = tuple(self.eval(p.default, env) if p.default is not None else None for p in expr.params)
        return Closure("lambda", expr.params, expr.body, env, expr.span, defaults)

    def _eval_IfExpr(self, expr: A.IfExpr, env: Environment) -> Any:
        test = self.eval(expr.test, env)
        if isinstance(test, RowValues):
            return ops.row_if(test, self.eval(expr.then, env), self.eval(expr.orelse, env), expr.span)
        if ops.truth(test, expr.test.span, "a condition"):
            return self.eval(expr.then, env)
        return self.eval(expr.orelse, env)

    def _eval_BoolOp(self, expr: A.BoolOp, env: Environment) -> Any:
        left = self.eval(expr.left, env)
        if isinstance(left, RowValues):
            return ops.row_logic(expr.op, left, self.eval(expr.right, env), expr.span)
        if expr.op == "and":
            if not ops.truth(left, expr.left.span, "an operand of 'and'"):
                return left
        elif ops.truth(left, expr.left.span, "an operand of 'or'"):
            return left
        right = self.eval(expr.right, env)
        if isinstance(right, RowValues):
            return ops.row_logic(expr.op, left, right, expr.span)
        if isinstance(right, (Private, PrivateMean)):
            raise refuse(f"a private value cannot be an operand of '{expr.op}'", right, expr.right.span)
        return right

    def _eval_UnaryOp(self, expr: A.UnaryOp, env: Environment) -> Any:
        return ops.unary(expr.op, self.eval(expr.operand, env), expr.span, expr.operand.span)

    def _eval_BinOp(self, expr: A.BinOp, env: Environment) -> Any:
        return ops.binary(expr.op, self.eval(expr.left, env), self.eval(expr.right, env), expr.span)

    def _eval_Compare(self, expr: A.Compare, env: Environment) -> Any:
        left, right = self.eval(expr.left, env), self.eval(expr.right, env)
        warning = ops.category_warning(expr.op, left, right, expr.span)  # from the schema alone
        if warning is not None:
            self.warn(warning)
        return ops.compare(expr.op, left, right, expr.span)

    def _eval_Index(self, expr: A.Index, env: Environment) -> Any:
        target, index = self.eval(expr.target, env), self.eval(expr.index, env)
        if is_private(index):
            raise refuse("a private value cannot be used as an index", index, expr.index.span)
        if isinstance(target, (Private, np.ndarray)) and isinstance(index, (str, tuple)) or (
                isinstance(target, tuple) and isinstance(index, (str, tuple)) and self.vector_labels.of(target)):
            # a cell's public label: a histogram's category, a grouped release's key (conversion.py)
            index = self.vector_labels.index_of(target, index, expr.index.span)
        if isinstance(target, Private):
            if not target.is_vector:
                raise JostleRuntimeError("a private scalar cannot be indexed", expr.span)
            if not isinstance(index, (int, np.integer)) or isinstance(index, bool):
                raise JostleRuntimeError("an index must be a whole number", expr.index.span)
            return private_index(target, index, expr.span)
        if isinstance(target, RowView) and isinstance(index, str):
            if index not in target.table.schema:
                raise JostleRuntimeError(f"table '{target.table.name}' has no column '{index}'", expr.index.span,
                                         f"its columns are {target.table.schema.names}")
            return target.column(index)  # r["col"]: the column named by a public string
        if isinstance(target, (RowValues, RowView, PrivateMean)) or (isinstance(target, Table) and target.private):
            raise refuse("private data cannot be indexed", target, expr.span)
        if isinstance(target, Record):
            if not isinstance(index, str):
                raise JostleRuntimeError("a record is indexed by a field name (a string)", expr.index.span)
            try:
                return target.get(index)
            except KeyError:
                raise JostleRuntimeError(f"the record has no field '{index}'", expr.index.span,
                                         f"its fields are {target.keys()}") from None
        if isinstance(target, (tuple, str, np.ndarray)):
            if not isinstance(index, (int, np.integer)) or isinstance(index, bool):
                raise JostleRuntimeError("an index must be a whole number", expr.index.span)
            if not -len(target) <= index < len(target):
                raise JostleRuntimeError(f"index {index} is outside a list of length {len(target)}",
                                         expr.index.span)
            item = target[index]
            return noisy_values.cell(target, index, item.item() if isinstance(item, np.generic) else item)
        raise JostleRuntimeError(f"a {type_name(target)} cannot be indexed", expr.span)

    def _eval_Attribute(self, expr: A.Attribute, env: Environment) -> Any:
        from jostle.language.builtins import TABLE_METHODS

        target = self.eval(expr.target, env)
        name = expr.name
        if isinstance(target, Record):
            try:
                return target.get(name)
            except KeyError:
                raise JostleRuntimeError(f"the record has no field '{name}'", expr.span,
                                         f"its fields are {target.keys()}") from None
        if isinstance(target, Module):
            try:
                return target.env.values[name]
            except KeyError:
                raise JostleRuntimeError(f"module '{target.name}' has no '{name}'", expr.span) from None
        if isinstance(target, RowView):
            if name not in target.table.schema:
                raise JostleRuntimeError(f"table '{target.table.name}' has no column '{name}'", expr.span,
                                         f"its columns are {target.table.schema.names}")
            return target.column(name)
        if isinstance(target, Table):
            if name == "key":
                return target.key
            if name == "columns":
                return tuple(target.schema.names)
            if name == "name":
                return target.name
            if name in TABLE_METHODS:
                return BoundMethod(target, self.builtins.values[TABLE_METHODS[name]])
            raise JostleRuntimeError(f"a table has no attribute '{name}'", expr.span,
                                     "tables have " + ", ".join(sorted(TABLE_METHODS)) + ", key, columns")
        if isinstance(target, Private) and name == "labels":
            return target.labels
        if isinstance(target, np.ndarray) and name == "labels" and self.vector_labels.of(target) is not None:
            return self.vector_labels.of(target).jostle_labels()  # a labelled release's cells (public)
        if isinstance(target, (Private, PrivateMean)):
            raise refuse(f"a private value has no public attribute '{name}'", target, expr.span)
        raise JostleRuntimeError(f"a {type_name(target)} has no attribute '{name}'", expr.span)

    def _eval_Call(self, expr: A.Call, env: Environment) -> Any:
        function = self.eval(expr.func, env)
        args = [self.eval(arg, env) for arg in expr.args]
        kwargs = {kw.name: self.eval(kw.value, env) for kw in expr.kwargs}
        return self.call(function, args, expr.span, kwargs, [a.span for a in expr.args])

    def call(self, function: Any, args: list[Any], span: Span, kwargs: dict[str, Any] | None = None,
             arg_spans: list[Span] | None = None, bound: int = 0) -> Any:
        """Call a Jostle function (closure, built-in or bound table method).

        `bound` counts leading arguments supplied by method syntax (`t.count()` passes t), which
        arity messages leave out.
        """
        kwargs = kwargs or {}
        if isinstance(function, BoundMethod):
            return self.call(function.builtin, [function.target, *args], span, kwargs, None, bound=1)
        if isinstance(function, Builtin):
            problem = function.arity_problem(len(args), set(kwargs), bound)
            if problem is not None:
                raise JostleRuntimeError(problem, span, function.doc if "keyword" not in problem or not
                                         function.keywords else f"its keywords are {list(function.keywords)}")
            if function.privacy == "public":
                ops.refuse_private_arguments(function.name, args, kwargs, span, arg_spans)
            if function.privacy != "row":
                refuse_row_arguments(function, args, kwargs, span)
            try:
                result = function.function(self, span, *args, **kwargs)
            except JostleError as error:
                if error.span is None:  # a helper deep inside did not know the call's location
                    error.span = span
                raise
            if function.privacy in ("release", "aggregate") and args:
                self.vector_labels.carry(result, args[0])
            return result
        if isinstance(function, Closure):
            return self._call_closure(function, args, kwargs, span)
        if hasattr(function, "jostle_call"):  # options and ChoiceMakers (jostle.language.choice)
            refuse_row_arguments(function, args, kwargs, span)
            result = function.jostle_call(self, list(args), dict(kwargs), span)
            if args:  # an estimate of a histogram's cells keeps the cells' labels
                self.vector_labels.carry(result, args[0])
            return result
        if is_private(function):
            raise refuse("a private value cannot be called", function, span)
        raise JostleRuntimeError(f"a {type_name(function)} cannot be called", span)

    def _call_closure(self, function: Closure, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
        params = function.params
        if len(args) > len(params):
            raise JostleRuntimeError(arity_message(function.name, str(len(params)), len(args)), span)
        frame = Environment(parent=function.env)
        names = [p.name for p in params]
        for key in kwargs:
            if key not in names:
                raise JostleRuntimeError(f"{function.name}() has no parameter '{key}'", span,
                                         f"its parameters are {names}")
        for i, param in enumerate(params):
            if i < len(args):
                if param.name in kwargs:
                    raise JostleRuntimeError(f"{function.name}() got '{param.name}' twice", span)
                frame.define(param.name, args[i])
            elif param.name in kwargs:
                frame.define(param.name, kwargs[param.name])
            elif param.default is not None:
                frame.define(param.name, function.defaults[i])
            else:
                raise JostleRuntimeError(f"{function.name}() is missing the argument '{param.name}'", span)
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise JostleRuntimeError(f"recursion deeper than {MAX_DEPTH} calls", span,
                                     "check that the recursion has a base case")
        # Releases written in the standard library are located at the user's call that entered
        # it (the accountant's call_site); a user function the library calls back is the
        # user's own code again.
        call_site = self.accountant.call_site
        if in_library(function.span):
            if not in_library(span):
                self.accountant.call_site = span
        elif in_library(span):
            self.accountant.call_site = None
        try:
            if isinstance(function.body, A.Expr):
                return self.eval(function.body, frame)
            try:
                self.exec_block(function.body, frame)
            except ReturnSignal as result:
                return result.value
            return None
        finally:
            self.depth = max(0, self.depth - 1)
            self.accountant.call_site = call_site

    def _eval_Release(self, expr: A.Release, env: Environment) -> Any:
        value = self.eval(expr.expr, env)
        if not is_private(value):
            return value  # a public value (e.g. a count of a public table) is exact and free
        if isinstance(value, (Table, RowValues, RowView)):
            raise PrivacyError("{{ }} releases numbers and vectors, not tables or columns", expr.span,
                               "release an aggregate, e.g. {{ count(t) }} or {{ histogram(t, \"col\") }}")
        if (target := active_target(self)) is not None:  # inside `with accuracy E at C:`
            return release_for(self, value, target, expr.span)
        context = self.accountant.innermost
        if context is None:
            raise BudgetExceeded(
                "{{ }} needs a budget context to take its epsilon from", expr.span,
                "add `budget E` as the program's first line, or wrap it in `with budget E:`; "
                "or release with an explicit epsilon: laplace(x, eps)",
            )
        allotment = context.per_release
        try:
            released = release_default(self, value, allotment, expr.span)
            self.vector_labels.carry(released, value)
            return released
        except BudgetExceeded as error:
            if context.releases and any(c.span == expr.span for c in context.charges):
                error.hint = (
                    "this {{ }} ran more than once (in a loop or a function); the block's budget "
                    f"was split among the {context.releases} {{{{ }}}} written in it. Give each "
                    "iteration its own `with budget E:` or release with laplace(x, eps)"
                )
            raise


__all__ = ["Interpreter", "Environment", "JostleError", "made_at", "Callable"]
