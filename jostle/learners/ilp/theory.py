"""Theories: Prolog clauses over a relational database's predicates, and their coverage.

A theory is parsed from Prolog text, prints back as Prolog, and says which examples it covers:

    eastbound(T) :- has_car(T, C), short(C), closed(C).
    eastbound(T) :- has_car(T, C), load(C, triangle, _).

What is supported now (the first foundation of issue 24):
  * several clauses with one head predicate, `target(T)` with a variable T (the example);
  * each body a conjunction of atoms (no negation, no disjunction, no built-ins); a clause with
    no body (`eastbound(T).`) covers every example;
  * at most one existential entity variable per clause (C, a car), linked to T by exactly one
    atom holding both (has_car(T, C)); the other atoms test T alone or C alone;
  * arguments over public domains are constants (`load(C, triangle, 1)`), `_`, or a variable
    that occurs once in its clause (the same as `_`); a variable shared by two constant
    arguments (a join on constants) is refused, as are unknown predicates, wrong arities and
    constants outside their domain, each with a message naming what is wrong.

The predicates of the trains (`jostle.learners.ilp.trains.TRAIN_PREDICATES`), with their meaning:
  has_car(T, C)      train T has car C
  short(C)           car C is short            long(C)        car C is long
  ellipse(C)         C's shape is ellipse      hexagon(C)     C's shape is hexagon
  rectangle(C)       C's shape is rectangle    u_shaped(C)    C's shape is u-shaped
  bucket(C)          C's shape is bucket       shape(C, S)    C's shape is S
  double(C)          C has double walls
  closed(C)          C has a roof (its roof is not none)
  open_car(C)        C has no roof (its roof is none)
  roof(C, R)         C's roof is R: none, arc, flat, peaked or jagged
  wheels(C, N)       C has N wheels: 2 or 3
  load(C, S, N)      C carries N loads (0 to 3) of shape S: circle, diamond, hexagon,
                     rectangle, triangle or utriangle

Coverage (`covers`) is vectorised: per clause, one boolean per car from the tests on C (rows of
each atom's relation filtered by column, scattered onto car ids with `np.bincount`), then the
link atom's rows whose car passes, scattered onto example ids (any per train); the union over
clauses. No Python loop runs per example or per fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from jostle.learners.ilp.relations import Domain, EntityType, RelationalDatabase, entity_mask


class TheoryError(ValueError):
    """A theory text that cannot be read against a database's predicates."""


@dataclass(frozen=True)
class Var:
    """A variable; `_` is anonymous (every occurrence a fresh variable)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Const:
    """A constant of a public domain, as written in Prolog (e.g. `triangle`, `2`)."""

    value: str

    def __str__(self) -> str:
        return self.value


Term = Var | Const


@dataclass(frozen=True)
class Atom:
    """`predicate(term, ...)`."""

    predicate: str
    args: tuple[Term, ...]

    def __str__(self) -> str:
        return f"{self.predicate}({', '.join(str(arg) for arg in self.args)})"


@dataclass(frozen=True)
class Clause:
    """`head :- body_1, ..., body_n.` (a fact-like clause when the body is empty)."""

    head: Atom
    body: tuple[Atom, ...]

    def __str__(self) -> str:
        if not self.body:
            return f"{self.head}."
        return f"{self.head} :- {', '.join(str(atom) for atom in self.body)}."


@dataclass(frozen=True)
class Theory:
    """A set of clauses for one target predicate: an example is covered if any clause covers it."""

    clauses: tuple[Clause, ...]

    @property
    def target(self) -> str:
        """The head predicate's name."""
        return self.clauses[0].head.predicate

    def to_prolog(self) -> str:
        """The theory as Prolog text, one clause per line."""
        return "\n".join(str(clause) for clause in self.clauses)

    def __str__(self) -> str:
        return self.to_prolog()


_TOKEN = re.compile(r"\s+|%[^\n]*|(?P<neck>:-)|(?P<punct>[(),.])|(?P<atom>[a-z][A-Za-z0-9_]*)"
                    r"|(?P<var>[A-Z_][A-Za-z0-9_]*)|(?P<num>\d+)")


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """Split Prolog text into (kind, text, offset) tokens, skipping spaces and % comments."""
    tokens, position = [], 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise TheoryError(f"unexpected character {text[position]!r} at offset {position} "
                              f"of the theory text")
        if match.lastgroup is not None:
            kind = match.lastgroup
            tokens.append(("atom" if kind == "num" else kind, match.group(), position))
        position = match.end()
    return tokens


class _Reader:
    """A recursive-descent reader over the tokens of a theory text."""

    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.index = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self, kind: str, text: str | None = None) -> str:
        token = self.peek()
        wanted = repr(text) if text else kind
        if token is None:
            raise TheoryError(f"the theory text ends where {wanted} was expected "
                              f"(does the last clause end with '.'?)")
        if token[0] != kind or (text is not None and token[1] != text):
            raise TheoryError(f"expected {wanted} at offset {token[2]}, found {token[1]!r}")
        self.index += 1
        return token[1]

    def term(self) -> Term:
        token = self.peek()
        if token is not None and token[0] == "var":
            return Var(self.take("var"))
        return Const(self.take("atom"))

    def atom(self) -> Atom:
        name = self.take("atom")
        self.take("punct", "(")
        args = [self.term()]
        while self.peek() is not None and self.peek()[1] == ",":
            self.take("punct", ",")
            args.append(self.term())
        self.take("punct", ")")
        return Atom(name, tuple(args))

    def clause(self) -> Clause:
        head = self.atom()
        body: list[Atom] = []
        if self.peek() is not None and self.peek()[0] == "neck":
            self.take("neck")
            body.append(self.atom())
            while self.peek() is not None and self.peek()[1] == ",":
                self.take("punct", ",")
                body.append(self.atom())
        self.take("punct", ".")
        return Clause(head, tuple(body))


def parse_theory(text: str, schema: RelationalDatabase) -> Theory:
    """Read a theory from Prolog text and check it against a database's predicates.

    Args:
        text: One or more clauses, each ending with '.'.
        schema: A database whose predicates and column types the theory is checked against
            (its data is not read; an empty database of the same schema serves).

    Returns:
        The theory.

    Raises:
        TheoryError: On a syntax error, an unknown predicate (named, with the known ones), a
            wrong arity, a constant outside its domain, or a clause shape not supported (see
            the module docstring).
    """
    reader = _Reader(text)
    clauses = []
    while reader.peek() is not None:
        clauses.append(reader.clause())
    if not clauses:
        raise TheoryError("the theory text holds no clause")
    theory = Theory(tuple(clauses))
    for number, clause in enumerate(theory.clauses, start=1):
        _check_clause(clause, number, theory.target, schema)
    return theory


@dataclass(frozen=True)
class _Plan:
    """How a checked clause is evaluated: its head variable and its existential variable."""

    head: str
    existential: str | None
    existential_type: EntityType | None


def _check_clause(clause: Clause, number: int, target: str, schema: RelationalDatabase) -> _Plan:
    """Check one clause against the schema and the supported shapes; return how to evaluate it."""
    where = f"clause {number} ({clause})"
    head = clause.head
    if head.predicate != target:
        raise TheoryError(f"{where}: head predicate {head.predicate!r} differs from the theory's "
                          f"target {target!r}")
    if len(head.args) != 1 or not isinstance(head.args[0], Var) or head.args[0].name == "_":
        raise TheoryError(f"{where}: the head must be {target}(T) with one named variable")
    head_var = head.args[0].name
    occurrences: dict[str, int] = {}
    for atom in clause.body:
        for arg in atom.args:
            if isinstance(arg, Var) and arg.name != "_":
                occurrences[arg.name] = occurrences.get(arg.name, 0) + 1
    existential: str | None = None
    existential_type: EntityType | None = None
    links = 0
    for atom in clause.body:
        predicate = schema.predicates.get(atom.predicate)
        if predicate is None:
            known = ", ".join(sorted(schema.predicates))
            raise TheoryError(f"{where}: unknown predicate {atom.predicate!r} (known predicates: "
                              f"{known})")
        if len(atom.args) != predicate.arity:
            raise TheoryError(f"{where}: {atom.predicate} takes {predicate.arity} argument(s) "
                              f"{predicate.signature()}, not {len(atom.args)}")
        entity_vars = []
        for position, arg in enumerate(atom.args):
            kind = schema.arg_type(predicate, position)
            if isinstance(kind, Domain):
                if isinstance(arg, Const):
                    try:
                        kind.code(arg.value)
                    except KeyError as error:
                        raise TheoryError(f"{where}: in {atom}: {error.args[0]}") from None
                elif arg.name != "_" and occurrences[arg.name] > 1:
                    raise TheoryError(f"{where}: variable {arg.name} is shared by constant "
                                      f"arguments; joins on constants are not supported yet")
                continue
            if isinstance(arg, Const) or arg.name == "_":
                raise TheoryError(f"{where}: in {atom}, argument {position + 1} is a "
                                  f"{kind.name} and must be a named variable")
            if arg.name == head_var:
                if kind != schema.examples.entity:
                    raise TheoryError(f"{where}: {head_var} is a {schema.examples.entity.name} "
                                      f"but {atom} uses it as a {kind.name}")
            elif existential is None:
                if kind == schema.examples.entity:
                    raise TheoryError(f"{where}: {arg.name} is a second "
                                      f"{kind.name}; only {head_var} may be one")
                existential, existential_type = arg.name, kind
            elif arg.name != existential:
                raise TheoryError(f"{where}: more than one existential variable "
                                  f"({existential}, {arg.name}); one per clause is supported")
            elif kind != existential_type:
                raise TheoryError(f"{where}: {arg.name} is used as a {existential_type.name} "
                                  f"and as a {kind.name}")
            entity_vars.append(arg.name)
        if not entity_vars:
            raise TheoryError(f"{where}: {atom} mentions no variable of the clause")
        if len(entity_vars) != len(set(entity_vars)):
            raise TheoryError(f"{where}: {atom} repeats a variable")
        links += head_var in entity_vars and existential in entity_vars
    if existential is not None and links != 1:
        raise TheoryError(f"{where}: {existential} must be linked to {head_var} by exactly one "
                          f"atom holding both (e.g. has_car({head_var}, {existential})), not "
                          f"{links}")
    return _Plan(head_var, existential, existential_type)


def _clause_mask(clause: Clause, plan: _Plan, database: RelationalDatabase) -> np.ndarray:
    """The examples (by entity id) a checked clause covers, vectorised."""
    n_examples = database.count(database.examples.entity)
    covered = np.ones(n_examples, dtype=bool)
    passing = None
    if plan.existential_type is not None:
        passing = np.ones(database.count(plan.existential_type), dtype=bool)
    link = None
    for atom in clause.body:
        predicate = database.predicates[atom.predicate]
        relation = database.relations[predicate.relation]
        constants = {i: arg.value for i, arg in enumerate(atom.args) if isinstance(arg, Const)}
        rows = predicate.rows(relation, constants)
        names = [arg.name if isinstance(arg, Var) else None for arg in atom.args]
        head_col = relation.columns[predicate.args[names.index(plan.head)]] \
            if plan.head in names else None
        exist_col = relation.columns[predicate.args[names.index(plan.existential)]] \
            if plan.existential is not None and plan.existential in names else None
        if head_col is not None and exist_col is not None:
            link = (rows, head_col, exist_col)
        elif exist_col is not None:
            passing &= entity_mask(exist_col[rows], len(passing))
        else:
            covered &= entity_mask(head_col[rows], n_examples)
    if link is not None:
        rows, head_col, exist_col = link
        covered &= entity_mask(head_col[rows & passing[exist_col]], n_examples)
    return covered


def covers(theory: Theory, database: RelationalDatabase) -> np.ndarray:
    """Which examples of the database the theory covers.

    Args:
        theory: A theory (checked against the database's schema here again).
        database: The examples and their facts.

    Returns:
        A boolean array aligned with `database.examples.ids`.
    """
    n_examples = database.count(database.examples.entity)
    covered = np.zeros(n_examples, dtype=bool)
    for number, clause in enumerate(theory.clauses, start=1):
        plan = _check_clause(clause, number, theory.target, database)
        covered |= _clause_mask(clause, plan, database)
    return covered[database.examples.ids]


def accuracy(theory: Theory, database: RelationalDatabase) -> float:
    """The fraction of examples the theory classifies as their labels say (covered = positive)."""
    return float(np.mean(covers(theory, database) == database.examples.labels))
