"""Parsing: source text -> lark parse tree -> immutable AST (jostle.language.ast_nodes).

The grammar (grammar/jostle.lark, shipped as the package data `jostle.grammar`) is loaded
once per process, its LALR tables from the on-disk cache of jostle.language.parser_cache.
Lark's errors are turned into `JostleSyntaxError`s that carry a span and a hint
(jostle.language.syntax_errors), so the one renderer can show them like every other error.
"""

from __future__ import annotations

import ast as python_ast
from functools import lru_cache
from importlib import resources

from lark import Lark, Token, Tree, v_args
from lark.exceptions import UnexpectedInput, VisitError
from lark.indenter import DedentError, Indenter
from lark.visitors import Transformer_NonRecursive

from jostle.language import ast_nodes as A
from jostle.diagnostics.errors import JostleSyntaxError
from jostle.diagnostics.source import Source, Span
from jostle.language.parser_cache import cached_lark
from jostle.language.values import MAX_WHOLE_DIGITS
from jostle.language.syntax_errors import (  # noqa: F401 (KEYWORDS re-exported)
    KEYWORDS, IndentMismatch, dedent_error, span_at, syntax_error,
)


# How deep the parse tree may nest (brackets, operator chains, blocks). The checker and the
# evaluator walk the tree recursively, so a deeper program would exhaust Python's stack; it is
# refused here with a located syntax error instead.
MAX_NESTING = 300


class _JostleIndenter(Indenter):
    NL_type = "_NL"
    OPEN_PAREN_types = ["LPAR", "LSQB", "LBRACE"]
    CLOSE_PAREN_types = ["RPAR", "RSQB", "RBRACE"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8

    def handle_NL(self, token: Token):
        levels = list(self.indent_level)
        try:
            yield from super().handle_NL(token)
        except DedentError:  # carries no position: say which line, and the columns it could use
            indent_str = token.rsplit("\n", 1)[1]
            indent = indent_str.count(" ") + indent_str.count("\t") * self.tab_len
            raise IndentMismatch(token, indent, levels) from None


@lru_cache(maxsize=1)
def _parser() -> Lark:
    grammar = resources.files("jostle.grammar").joinpath("jostle.lark").read_text(encoding="utf-8")
    # The LALR tables are built once per grammar and kept on disk (jostle.language.parser_cache).
    return cached_lark(grammar, {"parser": "lalr", "maybe_placeholders": True},
                       {"postlex": _JostleIndenter(), "propagate_positions": True})


def _check_nesting(tree: Tree, source: Source) -> None:
    """Refuse a parse tree deeper than MAX_NESTING, pointing at where it gets too deep.

    Walks the tree with an explicit stack: the tree may be far too deep to recurse over.
    """
    stack: list[tuple[Tree, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_NESTING:
            meta = node.meta
            line = getattr(meta, "line", None) if not getattr(meta, "empty", True) else None
            column = getattr(meta, "column", None) if line is not None else None
            raise JostleSyntaxError(
                f"the program nests more than {MAX_NESTING} levels deep", span_at(source, line, column),
                "split long chains of operators and deeply nested brackets or blocks into "
                "several statements",
            )
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, Tree))


def parse(text: str, name: str = "<string>") -> A.Program:
    """Parse a Jostle program.

    Args:
        text: The program text.
        name: The name errors show for it (usually its path).

    Returns:
        The program's immutable AST.

    Raises:
        JostleSyntaxError: The text does not parse; the error is located and has a hint.
    """
    source = Source(name, text)
    padded = text if text.endswith("\n") else text + "\n"
    try:
        tree = _parser().parse(padded)
    except UnexpectedInput as error:
        raise syntax_error(error, source) from None
    except IndentMismatch as error:
        raise dedent_error(error, source) from None
    _check_nesting(tree, source)
    try:
        return _ToAst(source).transform(tree)
    except VisitError as error:  # a JostleSyntaxError raised inside the transformer
        if isinstance(error.orig_exc, JostleSyntaxError):
            raise error.orig_exc from None
        raise


def _string_value(token: Token, span: Span) -> str:
    try:
        return python_ast.literal_eval(str(token))
    except (ValueError, SyntaxError):
        raise JostleSyntaxError("invalid escape in string", span) from None


@v_args(meta=True)
class _ToAst(Transformer_NonRecursive):
    """Turns lark's tree into jostle.language.ast_nodes, attaching a Span to every node (without
    recursion, so that the depth of a program is limited by MAX_NESTING alone)."""

    def __init__(self, source: Source) -> None:
        super().__init__()
        self.source = source

    def _span(self, meta) -> Span:
        if getattr(meta, "empty", False) or not hasattr(meta, "line"):
            return Span(self.source, 1, 1, 1, 2)
        return Span(self.source, meta.line, meta.column, meta.end_line, meta.end_column)

    def _tok_span(self, token: Token) -> Span:
        return Span(self.source, token.line, token.column, token.end_line, token.end_column)

    # ---------------------------------------------------------- program & blocks
    def start(self, meta, children):
        body = tuple(c for c in children if isinstance(c, A.Stmt))
        return A.Program(self._span(meta), body, self.source)

    def suite(self, meta, children):
        return tuple(c for c in children if isinstance(c, A.Stmt))

    # ---------------------------------------------------------- statements
    def assign(self, meta, children):
        name, value = children
        return A.Assign(self._span(meta), str(name), value)

    def aug_assign(self, meta, children):
        name, op, value = children
        return A.AugAssign(self._span(meta), str(name), op, value)

    def aug_op(self, meta, children):
        return str(children[0])[0]

    def expr_stmt(self, meta, children):
        return A.ExprStmt(self._span(meta), children[0])

    def return_stmt(self, meta, children):
        return A.Return(self._span(meta), children[0])

    def budget_stmt(self, meta, children):
        return A.BudgetStmt(self._span(meta), children[0], children[1], children[2])

    def accounting(self, meta, children):
        return A.AccountingName(self._span(meta), str(children[0]))

    def import_stmt(self, meta, children):
        return A.Import(self._span(meta), str(children[0]))

    def private_decl(self, meta, children):
        per = children[2] if len(children) > 2 else None
        return A.PrivateDecl(self._span(meta), str(children[0]), children[1], None if per is None else str(per))

    def pass_stmt(self, meta, children):
        return A.Pass(self._span(meta))

    def break_stmt(self, meta, children):
        return A.Break(self._span(meta))

    def continue_stmt(self, meta, children):
        return A.Continue(self._span(meta))

    def if_stmt(self, meta, children):
        test, body, *rest = children
        orelse: tuple = ()
        branches = [(test, body)]
        for item in rest:
            if item is None:
                continue
            if isinstance(item, tuple) and len(item) == 2 and item[0] == "elif":
                branches.append(item[1])
            else:
                orelse = item
        return A.If(self._span(meta), tuple(branches), orelse)

    def elif_clause(self, meta, children):
        return ("elif", (children[0], children[1]))

    def else_clause(self, meta, children):
        return children[0]

    def while_stmt(self, meta, children):
        return A.While(self._span(meta), children[0], children[1])

    def for_stmt(self, meta, children):
        targets, iterable, body = children
        return A.For(self._span(meta), targets, iterable, body)

    def targets(self, meta, children):
        return tuple(str(c) for c in children)

    def def_stmt(self, meta, children):
        name, params, body = children
        return A.Def(self._span(meta), str(name), params or (), body)

    def with_stmt(self, meta, children):
        epsilon, delta, accounting, body = children
        return A.WithBudget(self._span(meta), epsilon, delta, body, accounting)

    def with_accuracy(self, meta, children):
        error, confidence, body = children
        return A.WithAccuracy(self._span(meta), error, confidence, body)

    def params(self, meta, children):
        return tuple(c for c in children if c is not None)

    def param(self, meta, children):
        return A.Param(self._span(meta), str(children[0]), children[1])

    # ---------------------------------------------------------- expressions
    def lambda_expr(self, meta, children):
        params, body = children
        return A.Lambda(self._span(meta), params or (), body)

    def if_expr(self, meta, children):
        then, test, orelse = children
        return A.IfExpr(self._span(meta), test, then, orelse)

    def or_op(self, meta, children):
        return A.BoolOp(self._span(meta), "or", children[0], children[1])

    def and_op(self, meta, children):
        return A.BoolOp(self._span(meta), "and", children[0], children[1])

    def not_op(self, meta, children):
        return A.UnaryOp(self._span(meta), "not", children[0])

    def compare(self, meta, children):
        left, op, right = children
        return A.Compare(self._span(meta), op, left, right)

    def comp_op(self, meta, children):
        return " ".join(str(c) for c in children)

    def add_op(self, meta, children):
        return str(children[0])

    mul_op = add_op

    def binop(self, meta, children):
        left, op, right = children
        return A.BinOp(self._span(meta), op, left, right)

    def power_op(self, meta, children):
        return A.BinOp(self._span(meta), "**", children[0], children[1])

    def neg(self, meta, children):
        return A.UnaryOp(self._span(meta), "-", children[0])

    def pos(self, meta, children):
        return A.UnaryOp(self._span(meta), "+", children[0])

    def call(self, meta, children):
        func, arguments = children
        args, kwargs = [], []
        seen: set[str] = set()
        for item in arguments or ():
            if isinstance(item, A.Keyword):
                if item.name in seen:
                    raise JostleSyntaxError(
                        f"keyword argument '{item.name}' given twice", item.span
                    )
                seen.add(item.name)
                kwargs.append(item)
            elif kwargs:
                raise JostleSyntaxError(
                    "a positional argument follows a keyword argument",
                    item.span,
                    "put positional arguments first",
                )
            else:
                args.append(item)
        return A.Call(self._span(meta), func, tuple(args), tuple(kwargs))

    def arguments(self, meta, children):
        return [c for c in children if c is not None]

    def kwarg(self, meta, children):
        return A.Keyword(self._span(meta), str(children[0]), children[1])

    def index(self, meta, children):
        return A.Index(self._span(meta), children[0], children[1])

    def attr(self, meta, children):
        return A.Attribute(self._span(meta), children[0], str(children[1]))

    def number(self, meta, children):
        text = str(children[0])
        is_float = any(c in text for c in ".eE")
        if not is_float and len(text.lstrip("0")) > MAX_WHOLE_DIGITS:
            raise JostleSyntaxError(
                f"the whole number {text[:12]}... has {len(text.lstrip('0'))} digits; whole numbers "
                f"have at most {MAX_WHOLE_DIGITS}", self._span(meta),
                "write a float instead, e.g. 1e300 (floats past about 1.8e308 are inf)",
            )
        return A.Number(self._span(meta), float(text) if is_float else int(text))

    def string(self, meta, children):
        span = self._span(meta)
        return A.String(span, _string_value(children[0], span))

    def true(self, meta, children):
        return A.Constant(self._span(meta), True)

    def false(self, meta, children):
        return A.Constant(self._span(meta), False)

    def none(self, meta, children):
        return A.Constant(self._span(meta), None)

    def name(self, meta, children):
        return A.Name(self._span(meta), str(children[0]))

    def list_lit(self, meta, children):
        return A.ListLit(self._span(meta), tuple(c for c in children if c is not None))

    def record_lit(self, meta, children):
        fields = tuple(c for c in children if c is not None)
        seen: set[str] = set()
        for key, value in fields:
            if key in seen:
                raise JostleSyntaxError(f"field '{key}' given twice", value.span)
            seen.add(key)
        return A.RecordLit(self._span(meta), fields)

    def field(self, meta, children):
        key, value = children
        if key.type == "STRING":
            return (_string_value(key, self._tok_span(key)), value)
        return (str(key), value)

    def release(self, meta, children):
        return A.Release(self._span(meta), children[0])

    # ---------------------------------------------------------- options and the ChoiceMaker
    def option_def(self, meta, children):
        name, params, *clauses = children
        answer = predict = None
        predict_param = None
        for kind, span, param, body in clauses:
            if kind == "answer":
                if answer is not None:
                    raise JostleSyntaxError(f"option '{name}' has two answer clauses", span)
                answer = body
            else:
                if predict is not None:
                    raise JostleSyntaxError(f"option '{name}' has two predict clauses", span)
                predict, predict_param = body, param
        if answer is None:
            raise JostleSyntaxError(f"option '{name}' has no answer clause", self._span(meta),
                                    "write `answer:` followed by the indented body that computes its answer")
        return A.OptionDef(self._span(meta), str(name), params or (), answer, predict_param, predict)

    def option_answer(self, meta, children):
        return ("answer", self._span(meta), None, children[0])

    def option_predict(self, meta, children):
        return ("predict", self._span(meta), str(children[0]), children[1])

    def choicemaker_stmt(self, meta, children):
        name, spec = children
        span = self._span(meta)
        return A.Assign(span, str(name), A.ChoiceMakerExpr(span, *spec, name=str(name)))

    def choicemaker_expr(self, meta, children):
        return A.ChoiceMakerExpr(self._span(meta), *children[0])

    def choicemaker_spec(self, meta, children):
        options, metafeatures, corpus, *clauses = children
        error = share = None
        for kind, value in clauses:
            if kind == "measured":
                error = value
            else:
                share = value
        return (options, metafeatures, corpus, error, share)

    def name_set(self, meta, children):
        names = tuple(A.Name(self._tok_span(c), str(c)) for c in children if c is not None)
        seen: set[str] = set()
        for name in names:
            if name.id in seen:
                raise JostleSyntaxError(f"'{name.id}' is listed twice", name.span)
            seen.add(name.id)
        return names

    def cm_measured(self, meta, children):
        return ("measured", children[0])

    def cm_spending(self, meta, children):
        return ("spending", children[0])
