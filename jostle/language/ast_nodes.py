"""Immutable AST nodes. Every node carries the `Span` it was parsed from.

Expressions and statements are frozen dataclasses; sequences are tuples, so a parsed
program can be shared, cached and inspected without fear of mutation.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from jostle.diagnostics.source import Source, Span


@dataclass(frozen=True)
class Node:
    """Base of all AST nodes."""

    span: Span


# ------------------------------------------------------------------ expressions
@dataclass(frozen=True)
class Expr(Node):
    """Base of expressions."""


@dataclass(frozen=True)
class Number(Expr):
    value: int | float


@dataclass(frozen=True)
class String(Expr):
    value: str


@dataclass(frozen=True)
class Constant(Expr):
    """`true`, `false` or `none`."""

    value: bool | None


@dataclass(frozen=True)
class Name(Expr):
    id: str


@dataclass(frozen=True)
class ListLit(Expr):
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class RecordLit(Expr):
    fields: tuple[tuple[str, Expr], ...]


@dataclass(frozen=True)
class BinOp(Expr):
    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Compare(Expr):
    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class BoolOp(Expr):
    """`and` / `or`, short-circuiting."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class UnaryOp(Expr):
    """`-x`, `+x` or `not x`."""

    op: str
    operand: Expr


@dataclass(frozen=True)
class IfExpr(Expr):
    test: Expr
    then: Expr
    orelse: Expr


@dataclass(frozen=True)
class Keyword(Node):
    name: str
    value: Expr


@dataclass(frozen=True)
class Call(Expr):
    func: Expr
    args: tuple[Expr, ...]
    kwargs: tuple[Keyword, ...]


@dataclass(frozen=True)
class Index(Expr):
    target: Expr
    index: Expr


@dataclass(frozen=True)
class Attribute(Expr):
    target: Expr
    name: str


@dataclass(frozen=True)
class Param(Node):
    name: str
    default: Expr | None


@dataclass(frozen=True)
class Lambda(Expr):
    params: tuple[Param, ...]
    body: Expr


@dataclass(frozen=True)
class Release(Expr):
    """`{{ expr }}`: release `expr` with the budget the enclosing context allots."""

    expr: Expr


# ------------------------------------------------------------------ statements
@dataclass(frozen=True)
class Stmt(Node):
    """Base of statements."""


@dataclass(frozen=True)
class Assign(Stmt):
    name: str
    value: Expr


@dataclass(frozen=True)
class AugAssign(Stmt):
    name: str
    op: str
    value: Expr


@dataclass(frozen=True)
class ExprStmt(Stmt):
    expr: Expr


@dataclass(frozen=True)
class Return(Stmt):
    value: Expr | None


@dataclass(frozen=True)
class BudgetStmt(Stmt):
    """`budget eps[, delta] [using zcdp]` or `budget rho(R)`: the program's own budget (a cap on
    what it spends) and the measure it accounts in (jostle.privacy.accounting)."""

    epsilon: Expr
    delta: Expr | None
    accounting: AccountingName | None = None


@dataclass(frozen=True)
class AccountingName(Node):
    """`using NAME` after a budget: the measure its releases are composed in (only `zcdp`)."""

    name: str


@dataclass(frozen=True)
class Import(Stmt):
    module: str


@dataclass(frozen=True)
class PrivateDecl(Stmt):
    """`private NAME: schema [per KEY]`: the bound private table NAME, with its public schema
    and, after `per`, the entity key of the unit its curator bound it under (or None)."""

    name: str
    schema: Expr
    per: str | None = None


@dataclass(frozen=True)
class Pass(Stmt):
    pass


@dataclass(frozen=True)
class Break(Stmt):
    pass


@dataclass(frozen=True)
class Continue(Stmt):
    pass


@dataclass(frozen=True)
class If(Stmt):
    branches: tuple[tuple[Expr, tuple[Stmt, ...]], ...]
    orelse: tuple[Stmt, ...]


@dataclass(frozen=True)
class While(Stmt):
    test: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class For(Stmt):
    targets: tuple[str, ...]
    iterable: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class Def(Stmt):
    name: str
    params: tuple[Param, ...]
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class WithBudget(Stmt):
    """`with budget eps[, delta] [using zcdp]:` (or `with budget rho(R):`) caps what the body may spend."""

    epsilon: Expr
    delta: Expr | None
    body: tuple[Stmt, ...]
    accounting: AccountingName | None = None


@dataclass(frozen=True)
class WithAccuracy(Stmt):
    """`with accuracy E at C:`: each release in the body spends the smallest budget whose stated
    error (half-width at confidence C, in the value's units) is at most E
    (jostle.language.accuracy_first)."""

    error: Expr
    confidence: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class OptionDef(Stmt):
    """`option NAME(params):` with an `answer:` body and an optional `predict(F):` prior."""

    name: str
    params: tuple[Param, ...]
    answer: tuple[Stmt, ...]
    predict_param: str | None
    predict: tuple[Stmt, ...] | None


@dataclass(frozen=True)
class ChoiceMakerExpr(Expr):
    """`choicemaker among {A, B} informed by {f, g} trained on CORPUS [measured by E]
    [spending S on metafeatures]`."""

    options: tuple[Name, ...]
    metafeatures: tuple[Name, ...]
    corpus: Expr
    error: Expr | None
    share: Expr | None
    name: str | None = None


@dataclass(frozen=True)
class Program(Node):
    body: tuple[Stmt, ...]
    source: Source


def count_releases(body: tuple[Stmt, ...] | Expr | Stmt) -> int:
    """Count the `{{ }}` blocks lexically in `body`, not looking into nested
    `def`, `lambda`, `with budget` or `with accuracy` bodies (those have budgets of their own).

    This is how a budget context divides itself among its releases: each `{{ }}` that is
    written directly in a `with budget E:` body (or at the top of a program with a `budget E`
    statement) is allotted E / count_releases(body).
    """
    from dataclasses import fields

    def walk(node: object) -> int:
        if isinstance(node, Release):
            return 1 + walk(node.expr)
        if isinstance(node, (Def, Lambda, WithBudget, WithAccuracy, OptionDef, ChoiceMakerExpr)):
            return 0
        if isinstance(node, tuple):
            return sum(walk(item) for item in node)
        if isinstance(node, Node):
            return sum(walk(getattr(node, f.name)) for f in fields(node) if f.name != "span")
        return 0

    return walk(body)


def assigned_names(body: Iterable[Stmt]) -> set[str]:
    """Names a block binds (not looking into nested functions)."""
    names: set[str] = set()
    for stmt in body:
        if isinstance(stmt, (Assign, AugAssign)):
            names.add(stmt.name)
        elif isinstance(stmt, (Def, OptionDef)):
            names.add(stmt.name)
        elif isinstance(stmt, Import):
            names.add(stmt.module)
        elif isinstance(stmt, PrivateDecl):
            names.add(stmt.name)
        elif isinstance(stmt, For):
            names.update(stmt.targets)
            names |= assigned_names(stmt.body)
        elif isinstance(stmt, While):
            names |= assigned_names(stmt.body)
        elif isinstance(stmt, (WithBudget, WithAccuracy)):
            names |= assigned_names(stmt.body)
        elif isinstance(stmt, If):
            for _, body_ in stmt.branches:
                names |= assigned_names(body_)
            names |= assigned_names(stmt.orelse)
    return names
